//! Quadrature shared by the oracle tests, written independently of the crate's numerics.

#![allow(dead_code)]

use std::f64::consts::PI;

/// Gauss–Legendre nodes and weights on [−1, 1] by Newton's method on P_n.
pub fn gauss_legendre(n: usize) -> (Vec<f64>, Vec<f64>) {
    let mut nodes = vec![0.0; n];
    let mut weights = vec![0.0; n];
    for i in 0..n {
        let mut x = (PI * (i as f64 + 0.75) / (n as f64 + 0.5)).cos();
        let mut dp = 0.0;
        for _ in 0..100 {
            let (mut p0, mut p1) = (1.0, x);
            for k in 2..=n {
                let p2 = ((2 * k - 1) as f64 * x * p1 - (k - 1) as f64 * p0) / k as f64;
                p0 = p1;
                p1 = p2;
            }
            dp = n as f64 * (x * p1 - p0) / (x * x - 1.0);
            let dx = p1 / dp;
            x -= dx;
            if dx.abs() < 1e-16 {
                break;
            }
        }
        nodes[i] = x;
        weights[i] = 2.0 / ((1.0 - x * x) * dp * dp);
    }
    (nodes, weights)
}

/// Composite Gauss–Legendre: `panels` panels of an `n`-point rule on [a, b].
pub fn integrate(
    f: &dyn Fn(f64) -> f64,
    a: f64,
    b: f64,
    panels: usize,
    rule: &(Vec<f64>, Vec<f64>),
) -> f64 {
    let w = (b - a) / panels as f64;
    let mut total = 0.0;
    for p in 0..panels {
        let mid = a + (p as f64 + 0.5) * w;
        for (x, wt) in rule.0.iter().zip(&rule.1) {
            total += wt * f(mid + 0.5 * w * x);
        }
    }
    0.5 * w * total
}

/// Standard normal density, from its definition.
pub fn phi(z: f64) -> f64 {
    (-0.5 * z * z).exp() / (2.0 * PI).sqrt()
}
