//! One PBGI decision against one EI decision with identical settings (seed 000 App. C:
//! n = 100 observations, d = 16, 200·d raw samples, 10·d L-BFGS-B restarts, a
//! fixed-hyperparameter Matérn-5/2 GP), both through `maximize_acquisition`.
//! Run with `cargo bench -p cabo-pbgi`.

use cabo_baselines::acquisitions::Ei;
use cabo_core::{
    Acquisition, Budget, BudgetState, CostFunction, Dataset, DecisionContext, Observation,
    OptimizerSettings, ProblemInfo, Rng, TrainingData,
};
use cabo_gp::{ExactGp, GpConfig, GpPosterior, KernelKind, Lengthscale};
use cabo_optim::acquisition::maximize_acquisition;
use cabo_pbgi::Pbgi;
use std::sync::Arc;

const N: usize = 100;
const D: usize = 16;

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

fn setup() -> Setup {
    let mut rng = Rng::new(5);
    let x: Vec<f64> = (0..N * D).map(|_| rng.uniform()).collect();
    let y: Vec<f64> = x
        .chunks(D)
        .map(|p| {
            p.iter()
                .enumerate()
                .map(|(i, v)| ((i + 1) as f64 * v).sin())
                .sum::<f64>()
                / D as f64
        })
        .collect();
    let config = GpConfig::fixed(KernelKind::Matern52, Lengthscale::Scalar(0.5), 1.0, 1e-4);
    let posterior = ExactGp::new(config)
        .unwrap()
        .fit(
            TrainingData {
                dim: D,
                x: &x,
                y: &y,
            },
            1,
        )
        .unwrap();
    let mut data = Dataset::new(D);
    for (p, &v) in x.chunks(D).zip(&y) {
        data.push(Observation::initial(p.to_vec(), v, LinearCost.cost(p)))
            .unwrap();
    }
    let mut info = ProblemInfo::continuous("bench", D);
    info.known_cost = Some(Arc::new(LinearCost));
    Setup {
        info,
        data,
        budget: BudgetState::new(Budget {
            cost: Some(1e3),
            iterations: None,
        }),
        settings: OptimizerSettings {
            raw_samples: 200 * D,
            restarts: 10 * D,
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

#[divan::bench(sample_count = 5, sample_size = 1)]
fn pbgi_decision_n100_d16(bencher: divan::Bencher) {
    let s = setup();
    let acq = Pbgi::new(1e-4, false).unwrap();
    bencher.bench(|| decide(&s, &acq));
}

#[divan::bench(sample_count = 5, sample_size = 1)]
fn ei_decision_n100_d16(bencher: divan::Bencher) {
    let s = setup();
    let acq = Ei { best_f: None };
    bencher.bench(|| decide(&s, &acq));
}
