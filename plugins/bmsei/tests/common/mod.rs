//! Shared fixtures: small fixed-hyperparameter GP posteriors for the objective and ln c.
#![allow(dead_code)]

use cabo_core::{CostBelief, Rng, TrainingData};
use cabo_gp::{ExactGp, GpConfig, GpPosterior, KernelKind, Lengthscale, LogGp};

pub fn random_data(n: usize, d: usize, seed: u64) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let mut r = Rng::new(seed);
    let x: Vec<f64> = (0..n * d).map(|_| r.uniform()).collect();
    let y: Vec<f64> = x
        .chunks(d)
        .map(|p| (3.0 * p[0]).sin() + p.iter().sum::<f64>() + 0.1 * r.normal())
        .collect();
    let c: Vec<f64> = x
        .chunks(d)
        .map(|p| (0.5 + 1.5 * p[d - 1] + 0.2 * r.normal()).exp())
        .collect();
    (x, y, c)
}

pub fn config(ls: f64, noise: f64) -> GpConfig {
    let mut c = GpConfig::fixed(KernelKind::Matern52, Lengthscale::Scalar(ls), 1.3, noise);
    c.standardize = true;
    c
}

/// The objective's posterior, a log-GP cost belief and the best observed value.
pub fn posteriors(n: usize, d: usize, seed: u64) -> (GpPosterior, Box<dyn CostBelief>, f64) {
    let (x, y, c) = random_data(n, d, seed);
    let post = ExactGp::new(config(0.35, 1e-3))
        .unwrap()
        .fit(
            TrainingData {
                dim: d,
                x: &x,
                y: &y,
            },
            seed,
        )
        .unwrap();
    let cost = LogGp::new(config(0.5, 1e-3))
        .unwrap()
        .fit_costs(d, &x, &c, seed)
        .unwrap();
    let best = y.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (post, Box::new(cost), best)
}
