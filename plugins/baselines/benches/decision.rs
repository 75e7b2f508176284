//! One EI decision as BoTorch's `optimize_acqf` makes it — score raw Sobol samples, pick
//! restarts, run L-BFGS-B from each — on a GP with n = 100 points, with BoTorch's tutorial
//! settings (512 raw samples, 10 restarts) and the seeds' settings (200·d raw samples, 10·d
//! restarts); plus a MAP fit and a whole decision (fit + optimise).
//! Run with `cargo bench -p cabo-baselines --bench decision`.

use cabo_core::{
    AcquisitionSpec, Budget, BudgetState, BuildContext, Dataset, DecisionContext, ModelSpec,
    Observation, OptimizerSettings, Posterior, ProblemInfo, Rng, TrainingData,
};

fn main() {
    cabo_gp::plugins();
    cabo_baselines::plugins();
    divan::main();
}

const N: usize = 100;

/// n points of a smooth function in [0,1]^d.
fn data(d: usize) -> (Vec<f64>, Vec<f64>) {
    let mut rng = Rng::new(7);
    let x: Vec<f64> = (0..N * d).map(|_| rng.uniform()).collect();
    let y = x
        .chunks_exact(d)
        .map(|p| {
            p.iter()
                .enumerate()
                .map(|(i, v)| (3.0 * v + i as f64).sin())
                .sum::<f64>()
        })
        .collect();
    (x, y)
}

fn model_spec() -> Box<dyn ModelSpec> {
    serde_json::from_str(
        r#"{"type":"exact_gp","kernel":{"type":"matern52"},"fit":"map","prior":"gamma","standardize":true}"#,
    )
    .expect("valid model spec")
}

fn fit(d: usize) -> Box<dyn Posterior> {
    let (x, y) = data(d);
    let info = ProblemInfo::continuous("bench", d);
    let mut model = model_spec()
        .build(&BuildContext {
            problem: &info,
            seed: 1,
        })
        .expect("model builds");
    model
        .fit(
            TrainingData {
                dim: d,
                x: &x,
                y: &y,
            },
            3,
        )
        .expect("fit")
}

fn dataset(d: usize) -> Dataset {
    let (x, y) = data(d);
    let mut set = Dataset::new(d);
    for (p, v) in x.chunks_exact(d).zip(y) {
        set.push(Observation::initial(p.to_vec(), v, 1.0))
            .expect("dimension matches");
    }
    set
}

/// Maximises EI once with `settings` on a fitted posterior.
fn decide(d: usize, posterior: Box<dyn Posterior>, settings: OptimizerSettings) -> f64 {
    let info = ProblemInfo::continuous("bench", d);
    let data = dataset(d);
    let budget = BudgetState::new(Budget {
        cost: None,
        iterations: Some(10),
    });
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

#[divan::bench(args = [8, 16])]
fn map_fit_n100(bencher: divan::Bencher, d: usize) {
    bencher.bench(|| fit(d));
}

#[divan::bench(args = [8, 16])]
fn ei_decision_512_raw_10_restarts(bencher: divan::Bencher, d: usize) {
    let settings = OptimizerSettings {
        raw_samples: 512,
        restarts: 10,
        max_iters: 200,
    };
    bencher
        .with_inputs(|| fit(d))
        .bench_values(|p| decide(d, p, settings));
}

#[divan::bench(args = [8, 16])]
fn ei_decision_200d_raw_10d_restarts(bencher: divan::Bencher, d: usize) {
    let settings = OptimizerSettings {
        raw_samples: 200 * d,
        restarts: 10 * d,
        max_iters: 200,
    };
    bencher
        .with_inputs(|| fit(d))
        .bench_values(|p| decide(d, p, settings));
}

#[divan::bench(args = [8, 16])]
fn fit_and_ei_decision_512_raw_10_restarts(bencher: divan::Bencher, d: usize) {
    let settings = OptimizerSettings {
        raw_samples: 512,
        restarts: 10,
        max_iters: 200,
    };
    bencher.bench(|| decide(d, fit(d), settings));
}
