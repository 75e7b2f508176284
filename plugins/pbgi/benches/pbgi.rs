//! PBGI and EI decisions with the seeds' optimiser settings (seed 000 App. C: 200·d raw
//! samples, 10·d L-BFGS-B restarts, 200 iterations) on a fixed-hyperparameter Matérn-5/2 GP
//! (the Bayesian-regret specs' model: lengthscale 0.1, outputscale 1, noise 1e-4) with
//! n = 100, 400 or 800 observations in d = 8, 16 or 32 dimensions, both through
//! `maximize_acquisition`.
//! Run with `cargo bench -p cabo-pbgi`; one size with e.g. `-- pbgi_decision --args 32`.

use cabo_baselines::acquisitions::Ei;
use cabo_core::{
    Acquisition, Budget, BudgetState, CostFunction, Dataset, DecisionContext, Observation,
    OptimizerSettings, ProblemInfo, Rng, TrainingData,
};
use cabo_gp::{ExactGp, GpConfig, GpPosterior, KernelKind, Lengthscale};
use cabo_optim::acquisition::maximize_acquisition;
use cabo_pbgi::Pbgi;
use std::sync::Arc;

fn main() {
    divan::main();
}

/// Seed 000's cost c(x) = 20·(0.05 + mean x).
#[derive(Debug)]
struct LinearCost;

impl CostFunction for LinearCost {
    fn cost(&self, x: &[f64]) -> f64 {
        20.0 * (0.05 + x.iter().sum::<f64>() / x.len() as f64)
    }
    fn cost_grad(&self, x: &[f64], grad: &mut [f64]) -> f64 {
        grad.fill(20.0 / x.len() as f64);
        self.cost(x)
    }
}

struct Setup {
    info: ProblemInfo,
    data: Dataset,
    budget: BudgetState,
    settings: OptimizerSettings,
    posterior: GpPosterior,
}

/// `n` observations of a smooth function in `[0,1]^d`, the posterior of the specs' model.
fn setup(n: usize, d: usize) -> Setup {
    let mut rng = Rng::new(5);
    let x: Vec<f64> = (0..n * d).map(|_| rng.uniform()).collect();
    let y: Vec<f64> = x
        .chunks(d)
        .map(|p| {
            p.iter()
                .enumerate()
                .map(|(i, v)| ((i + 1) as f64 * v).sin())
                .sum::<f64>()
                / (d as f64).sqrt()
        })
        .collect();
    let config = GpConfig::fixed(KernelKind::Matern52, Lengthscale::Scalar(0.1), 1.0, 1e-4);
    let posterior = ExactGp::new(config)
        .unwrap()
        .fit(
            TrainingData {
                dim: d,
                x: &x,
                y: &y,
            },
            1,
        )
        .unwrap();
    let mut data = Dataset::new(d);
    for (p, &v) in x.chunks(d).zip(&y) {
        data.push(Observation::initial(p.to_vec(), v, LinearCost.cost(p)))
            .unwrap();
    }
    let mut info = ProblemInfo::continuous("bench", d);
    info.known_cost = Some(Arc::new(LinearCost));
    Setup {
        info,
        data,
        budget: BudgetState::new(Budget {
            cost: Some(1e3),
            iterations: None,
        }),
        settings: OptimizerSettings {
            raw_samples: 200 * d,
            restarts: 10 * d,
            max_iters: 200,
        },
        posterior,
    }
}

fn decide(s: &Setup, acq: &dyn Acquisition) -> Vec<f64> {
    let ctx = DecisionContext::new(&s.info, &s.data, &s.budget, 1, 7, &s.settings)
        .with_posterior(Box::new(s.posterior.clone()));
    let f = acq.prepare(&ctx).unwrap();
    maximize_acquisition(f.as_ref(), &s.info, &s.settings, 7)
        .unwrap()
        .x
}

#[divan::bench(consts = [100, 400, 800], args = [8, 16, 32], sample_count = 3, sample_size = 1)]
fn pbgi_decision<const N: usize>(bencher: divan::Bencher, d: usize) {
    let s = setup(N, d);
    let acq = Pbgi::new(1e-4, false).unwrap();
    bencher.bench(|| decide(&s, &acq));
}

#[divan::bench(consts = [100, 400, 800], args = [8, 16, 32], sample_count = 3, sample_size = 1)]
fn ei_decision<const N: usize>(bencher: divan::Bencher, d: usize) {
    let s = setup(N, d);
    let acq = Ei { best_f: None };
    bencher.bench(|| decide(&s, &acq));
}
