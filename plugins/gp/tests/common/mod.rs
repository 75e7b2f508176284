//! Test data and finite-difference utilities shared by the integration tests.
#![allow(dead_code)]

use cabo_core::Rng;

/// Uniform points in the unit cube, row-major.
pub fn points(n: usize, d: usize, seed: u64) -> Vec<f64> {
    let mut r = Rng::new(seed);
    (0..n * d).map(|_| r.uniform()).collect()
}

/// A smooth test function with values of order 1.
pub fn target(x: &[f64]) -> f64 {
    x.iter()
        .enumerate()
        .map(|(j, v)| ((j as f64 + 1.5) * v).sin() + 0.3 * v * v)
        .sum()
}

/// Relative error with a floor on the reference magnitude.
pub fn rel(a: f64, b: f64, floor: f64) -> f64 {
    (a - b).abs() / b.abs().max(floor)
}

/// Central finite difference of `f` at `x` along coordinate `j`.
pub fn fd(f: &dyn Fn(&[f64]) -> f64, x: &[f64], j: usize, h: f64) -> f64 {
    let mut a = x.to_vec();
    let mut b = x.to_vec();
    a[j] += h;
    b[j] -= h;
    (f(&a) - f(&b)) / (2.0 * h)
}

pub const KINDS: [cabo_gp::KernelKind; 4] = [
    cabo_gp::KernelKind::Rbf,
    cabo_gp::KernelKind::Matern12,
    cabo_gp::KernelKind::Matern32,
    cabo_gp::KernelKind::Matern52,
];
