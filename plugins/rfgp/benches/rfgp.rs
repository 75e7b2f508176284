//! The exact GP against the random-feature GP where the latter is meant to pay off: a MAP fit
//! and one EI decision at n = 2000 points in d = 8, on the same data, with the exact GP's
//! usual spec (Matérn-5/2, MAP under the Gamma priors, standardised outputs) and the seeds'
//! optimiser settings (200·d raw samples, 10·d restarts, 200 L-BFGS-B iterations). The
//! random-feature GP uses its default 1024 features. Also the decision alone and one
//! posterior mean and variance with gradients (what the optimiser pays per step).
//! Run with `cargo bench -p cabo-rfgp` (each sample of a fit takes seconds to minutes, so
//! few are taken).

use cabo_core::{
    AcquisitionSpec, Budget, BudgetState, BuildContext, Dataset, DecisionContext, MeanVar,
    MeanVarGrad, ModelSpec, Observation, OptimizerSettings, Posterior, ProblemInfo, Result, Rng,
    TrainingData,
};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};

fn main() {
    cabo_gp::plugins();
    cabo_rfgp::plugins();
    cabo_baselines::plugins();
    divan::main();
}

const N: usize = 2000;
const D: usize = 8;

/// The two models, as a spec would write them.
const MODELS: [&str; 2] = ["exact_gp", "random_feature_gp"];

/// n noisy points of a smooth function in [0,1]^d.
fn data() -> (Vec<f64>, Vec<f64>) {
    let mut rng = Rng::new(7);
    let x: Vec<f64> = (0..N * D).map(|_| rng.uniform()).collect();
    let y = x
        .chunks_exact(D)
        .map(|p| {
            p.iter()
                .enumerate()
                .map(|(i, v)| (3.0 * v + i as f64).sin())
                .sum::<f64>()
                + 0.05 * rng.normal()
        })
        .collect();
    (x, y)
}

fn model_spec(model: &str) -> Box<dyn ModelSpec> {
    serde_json::from_str(&format!(
        r#"{{"type":"{model}","kernel":{{"type":"matern52"}},"fit":"map","prior":"gamma","standardize":true}}"#
    ))
    .expect("valid model spec")
}

fn settings() -> OptimizerSettings {
    OptimizerSettings {
        raw_samples: 200 * D,
        restarts: 10 * D,
        max_iters: 200,
    }
}

fn fit(model: &str) -> Box<dyn Posterior> {
    let (x, y) = data();
    let info = ProblemInfo::continuous("bench", D);
    let mut model = model_spec(model)
        .build(&BuildContext {
            problem: &info,
            seed: 1,
        })
        .expect("model builds");
    model
        .fit(
            TrainingData {
                dim: D,
                x: &x,
                y: &y,
            },
            3,
        )
        .expect("fit")
}

/// One fit per model, shared by the benchmarks that only use it (a fit at n = 2000 takes
/// long enough that refitting for each would dominate the run).
fn fitted(model: &'static str) -> Arc<dyn Posterior> {
    static CACHE: OnceLock<Mutex<BTreeMap<&'static str, Arc<dyn Posterior>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(p) = cache.lock().unwrap().get(model) {
        return Arc::clone(p);
    }
    let p: Arc<dyn Posterior> = Arc::from(fit(model));
    cache.lock().unwrap().insert(model, Arc::clone(&p));
    p
}

/// A shared posterior as the boxed one a decision context takes: what EI asks of it.
struct Shared(Arc<dyn Posterior>);

impl Posterior for Shared {
    fn dim(&self) -> usize {
        self.0.dim()
    }
    fn mean_var(&self, x: &[f64]) -> MeanVar {
        self.0.mean_var(x)
    }
    fn mean_var_batch(&self, xs: &[f64], out: &mut [MeanVar]) {
        self.0.mean_var_batch(xs, out)
    }
    fn mean_var_grad(&self, x: &[f64]) -> Result<MeanVarGrad> {
        self.0.mean_var_grad(x)
    }
    fn noise_variance(&self) -> f64 {
        self.0.noise_variance()
    }
}

fn dataset() -> Dataset {
    let (x, y) = data();
    let mut set = Dataset::new(D);
    for (p, v) in x.chunks_exact(D).zip(y) {
        set.push(Observation::initial(p.to_vec(), v, 1.0))
            .expect("dimension matches");
    }
    set
}

/// Maximises EI once on a fitted posterior.
fn decide(posterior: Box<dyn Posterior>) -> f64 {
    let info = ProblemInfo::continuous("bench", D);
    let data = dataset();
    let budget = BudgetState::new(Budget {
        cost: None,
        iterations: Some(10),
    });
    let settings = settings();
    let ctx =
        DecisionContext::new(&info, &data, &budget, 1, 11, &settings).with_posterior(posterior);
    let spec: Box<dyn AcquisitionSpec> = serde_json::from_str(r#"{"type":"ei"}"#).unwrap();
    let acq = spec
        .build(&BuildContext {
            problem: &info,
            seed: 1,
        })
        .unwrap();
    let f = acq.prepare(&ctx).unwrap();
    cabo_optim::acquisition::maximize_acquisition(f.as_ref(), &info, &settings, 5)
        .unwrap()
        .value
}

/// A cold MAP fit, then one EI decision: what one iteration of a run costs at n = 2000.
#[divan::bench(args = MODELS, sample_count = 3, sample_size = 1)]
fn fit_and_ei_decision_n2000_d8(model: &str) -> f64 {
    decide(fit(model))
}

/// One EI decision on a fitted posterior.
#[divan::bench(args = MODELS, sample_count = 5, sample_size = 1)]
fn ei_decision_n2000_d8(bencher: divan::Bencher, model: &'static str) {
    let post = fitted(model);
    bencher.bench(|| decide(Box::new(Shared(Arc::clone(&post)))));
}

/// One posterior mean and variance with gradients at n = 2000: what every step of the
/// acquisition optimiser pays.
#[divan::bench(args = MODELS, sample_count = 50)]
fn mean_var_grad_n2000_d8(bencher: divan::Bencher, model: &'static str) {
    let post = fitted(model);
    let x = vec![0.37; D];
    bencher.bench(|| post.mean_var_grad(divan::black_box(&x)).unwrap());
}
