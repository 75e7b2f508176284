//! Test data, reference linear algebra and finite differences shared by the integration
//! tests.
#![allow(dead_code)]

use cabo_core::{Rng, TrainingData};
use cabo_gp::{Kernel, KernelKind, OutputTransform};
use cabo_rfgp::{Features, Form, RfGpPosterior, UnitBasis};
use std::sync::Arc;

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

pub const KINDS: [KernelKind; 4] = [
    KernelKind::Rbf,
    KernelKind::Matern12,
    KernelKind::Matern32,
    KernelKind::Matern52,
];

/// Features of `kind` with the given lengthscales and outputscale on a basis of `m`
/// features drawn from `seed`.
pub fn features(kind: KernelKind, ls: &[f64], s: f64, m: usize, seed: u64) -> Arc<Features> {
    let basis = UnitBasis::draw(kind, ls.len(), m, seed).unwrap();
    Arc::new(
        basis
            .features(Kernel::new(kind, ls.to_vec(), s).unwrap())
            .unwrap(),
    )
}

/// Both forms of the weight covariance.
pub const FORMS: [Form; 2] = [Form::Data, Form::Weights];

/// A posterior with fixed hyperparameters on `n` points of [`target`] (scaled to y units
/// far from 0 and 1, so that output transforms matter), with Σ in the cheaper form.
pub fn posterior(
    f: &Arc<Features>,
    n: usize,
    noise: f64,
    mean: f64,
    transform: OutputTransform,
) -> (RfGpPosterior, Vec<f64>, Vec<f64>) {
    let form = Form::cheaper(n, f.len());
    posterior_in(f, n, noise, mean, transform, form)
}

/// [`posterior`] with Σ in the given form.
pub fn posterior_in(
    f: &Arc<Features>,
    n: usize,
    noise: f64,
    mean: f64,
    transform: OutputTransform,
    form: Form,
) -> (RfGpPosterior, Vec<f64>, Vec<f64>) {
    let d = f.dim();
    let x = points(n, d, 11);
    let y: Vec<f64> = x.chunks_exact(d).map(|p| 10.0 * target(p) + 4.0).collect();
    let post = RfGpPosterior::with_form(
        Arc::clone(f),
        noise,
        mean,
        TrainingData {
            dim: d,
            x: &x,
            y: &y,
        },
        transform,
        form,
    )
    .unwrap();
    assert_eq!(post.form(), form);
    (post, x, y)
}

/// Solves `M z = b` (row-major `k × k`, any square non-singular M) by Gaussian elimination
/// with partial pivoting: a reference that shares no code with the model's Cholesky.
pub fn dense_solve(m: &[f64], b: &[f64]) -> Vec<f64> {
    let k = b.len();
    let mut a = m.to_vec();
    let mut z = b.to_vec();
    for c in 0..k {
        let p = (c..k)
            .max_by(|&i, &j| a[i * k + c].abs().total_cmp(&a[j * k + c].abs()))
            .unwrap();
        if p != c {
            for j in 0..k {
                a.swap(c * k + j, p * k + j);
            }
            z.swap(c, p);
        }
        for i in c + 1..k {
            let f = a[i * k + c] / a[c * k + c];
            for j in c..k {
                a[i * k + j] -= f * a[c * k + j];
            }
            z[i] -= f * z[c];
        }
    }
    for c in (0..k).rev() {
        let mut s = z[c];
        for j in c + 1..k {
            s -= a[c * k + j] * z[j];
        }
        z[c] = s / a[c * k + c];
    }
    z
}

/// `ln |M|` of a symmetric positive-definite M by the same elimination (pivots positive).
pub fn dense_log_det(m: &[f64], k: usize) -> f64 {
    let mut a = m.to_vec();
    let mut s = 0.0;
    for c in 0..k {
        let p = (c..k)
            .max_by(|&i, &j| a[i * k + c].abs().total_cmp(&a[j * k + c].abs()))
            .unwrap();
        if p != c {
            for j in 0..k {
                a.swap(c * k + j, p * k + j);
            }
        }
        s += a[c * k + c].abs().ln();
        for i in c + 1..k {
            let f = a[i * k + c] / a[c * k + c];
            for j in c..k {
                a[i * k + j] -= f * a[c * k + j];
            }
        }
    }
    s
}

/// The design Φ (row-major `n × m`) of `f` at the rows of `x`.
pub fn design(f: &Features, x: &[f64]) -> Vec<f64> {
    let (d, m) = (f.dim(), f.len());
    let mut phi = vec![0.0; x.len() / d * m];
    for (row, p) in phi.chunks_exact_mut(m).zip(x.chunks_exact(d)) {
        f.values(p, row);
    }
    phi
}
