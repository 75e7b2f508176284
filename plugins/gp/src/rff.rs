//! Random Fourier features (Rahimi & Recht 2007): finite-dimensional approximations of a
//! stationary kernel, used to draw whole functions from a GP prior (GP-sample objectives)
//! and, with a posterior update, from a GP posterior (Thompson sampling).
//!
//! With `m` features, `φ_i(x) = √(2s/m) · cos(ω_iᵀx + b_i)`, phases `b_i ~ U[0, 2π)` and
//! frequencies drawn from the kernel's spectral density: `ω = z/ℓ` (elementwise) with
//! `z ~ N(0, I)` for RBF and `z` multivariate Student-t with `2ν` degrees of freedom for
//! Matérn-ν. Then `E[φ(x)ᵀφ(x')] = k(x, x')` exactly, and `f(x) = φ(x)ᵀw` with `w ~ N(0, I)`
//! is a draw from (an `m`-feature approximation of) the GP prior.

use crate::kernel::{Kernel, KernelKind};
use cabo_core::{Error, Objective, Result, Rng};
use cabo_linalg::rows::{Fold, row_dots, weighted_rows};

/// A random-feature expansion of a kernel together with one weight vector: a function
/// `f(x) = Σ_i w_i φ_i(x)` over `[0,1]^d` (or any real inputs).
#[derive(Debug, Clone, PartialEq)]
pub struct RandomFeatures {
    dim: usize,
    /// Frequencies, row-major `m × d`.
    omega: Vec<f64>,
    phase: Vec<f64>,
    amplitude: f64,
    weights: Vec<f64>,
}

impl RandomFeatures {
    /// Draws `n_features` frequencies and phases for `kernel` (lengthscales per dimension,
    /// outputscale = prior variance) and weights from N(0, I), all determined by `seed`.
    pub fn new(
        kernel: KernelKind,
        lengthscales: &[f64],
        outputscale: f64,
        n_features: usize,
        seed: u64,
    ) -> Result<Self> {
        let k = Kernel::new(kernel, lengthscales.to_vec(), outputscale)?;
        Self::from_kernel(&k, n_features, seed)
    }

    /// As [`RandomFeatures::new`], from a [`Kernel`].
    pub fn from_kernel(kernel: &Kernel, n_features: usize, seed: u64) -> Result<Self> {
        if n_features == 0 {
            return Err(Error::invalid("random features: n_features must be ≥ 1"));
        }
        let d = kernel.dim();
        let mut rng = Rng::new(seed);
        let mut omega = vec![0.0; n_features * d];
        let dof = kernel.nu_dof();
        for row in omega.chunks_exact_mut(d) {
            rng.fill_normal(row);
            if let Some(k) = dof {
                // z = g·√(k/u) with u ~ χ²_k is multivariate Student-t with k dof.
                let u: f64 = (0..k).map(|_| rng.normal().powi(2)).sum();
                let scale = (k as f64 / u).sqrt();
                for v in row.iter_mut() {
                    *v *= scale;
                }
            }
            for (v, l) in row.iter_mut().zip(&kernel.lengthscales) {
                *v /= l;
            }
        }
        let phase = (0..n_features)
            .map(|_| rng.uniform() * std::f64::consts::TAU)
            .collect();
        let mut weights = vec![0.0; n_features];
        rng.fill_normal(&mut weights);
        Ok(RandomFeatures {
            dim: d,
            omega,
            phase,
            amplitude: (2.0 * kernel.outputscale / n_features as f64).sqrt(),
            weights,
        })
    }

    /// Input dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Number of features m.
    pub fn n_features(&self) -> usize {
        self.phase.len()
    }

    /// The weight vector w.
    pub fn weights(&self) -> &[f64] {
        &self.weights
    }

    /// Replaces the weights (e.g. with a draw from a posterior over w).
    pub fn set_weights(&mut self, weights: Vec<f64>) -> Result<()> {
        if weights.len() != self.n_features() {
            return Err(Error::invalid(format!(
                "random features: {} weights for {} features",
                weights.len(),
                self.n_features()
            )));
        }
        self.weights = weights;
        Ok(())
    }

    /// The feature vector φ(x) (length m).
    pub fn features(&self, x: &[f64], out: &mut [f64]) {
        let d = self.dim;
        for ((o, w), b) in out
            .iter_mut()
            .zip(self.omega.chunks_exact(d))
            .zip(&self.phase)
        {
            *o = self.amplitude * (cabo_linalg::dot(w, x) + b).cos();
        }
    }

    /// Feature vectors of many points: row-major `n × m` for `xs` row-major `n × d`.
    pub fn feature_matrix(&self, xs: &[f64]) -> Vec<f64> {
        let m = self.n_features();
        let n = xs.len() / self.dim.max(1);
        let mut out = vec![0.0; n * m];
        for (row, x) in out.chunks_exact_mut(m).zip(xs.chunks_exact(self.dim)) {
            self.features(x, row);
        }
        out
    }
}

/// The function drawn: a GP-prior sample (GP-sample objectives) or, with posterior weights, a
/// posterior sample path.
///
/// Thompson sampling evaluates it at every step of hundreds of local searches, so each
/// evaluation goes in passes over the features: the arguments `ω_iᵀx` of all of them (the
/// dot products side by side), their cosines (and sines), then the sums. Each feature's
/// operations, and the order of every sum over features, are those of a loop feature by
/// feature, so the values are its bits.
impl Objective for RandomFeatures {
    /// `f(x) = φ(x)ᵀw`.
    fn value(&self, x: &[f64]) -> f64 {
        let mut args = vec![0.0; self.n_features()];
        row_dots(&self.omega, x, &mut args);
        let mut s = 0.0;
        for ((w, a), b) in self.weights.iter().zip(&args).zip(&self.phase) {
            s += w * (a + b).cos();
        }
        self.amplitude * s
    }

    /// `f(x)`, writing `∇f(x)` into `grad`.
    fn value_grad(&self, x: &[f64], grad: &mut [f64]) -> f64 {
        let m = self.n_features();
        let mut args = vec![0.0; m];
        row_dots(&self.omega, x, &mut args);
        let mut s = 0.0;
        // Each argument becomes its gradient coefficient −w·sin once its cosine is summed.
        for ((w, a), b) in self.weights.iter().zip(args.iter_mut()).zip(&self.phase) {
            let (sin, cos) = (*a + b).sin_cos();
            s += w * cos;
            *a = -w * sin;
        }
        grad.fill(0.0);
        weighted_rows(&self.omega, &args, Fold::Add, grad);
        for g in grad.iter_mut() {
            *g *= self.amplitude;
        }
        self.amplitude * s
    }
}

impl Kernel {
    /// Degrees of freedom 2ν of the Student-t spectral density (`None` for RBF's Gaussian).
    fn nu_dof(&self) -> Option<usize> {
        self.kind.nu().map(|nu| (2.0 * nu).round() as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The feature-by-feature loop the passes of [`RandomFeatures`]' evaluation replaced.
    fn feature_by_feature(f: &RandomFeatures, x: &[f64], grad: &mut [f64]) -> [f64; 2] {
        let d = f.dim;
        let (mut s, mut sg) = (0.0, 0.0);
        grad.fill(0.0);
        for ((w, om), b) in f.weights.iter().zip(f.omega.chunks_exact(d)).zip(&f.phase) {
            s += w * (cabo_linalg::dot(om, x) + b).cos();
            let (sin, cos) = (cabo_linalg::dot(om, x) + b).sin_cos();
            sg += w * cos;
            cabo_linalg::axpy(-w * sin, om, grad);
        }
        for g in grad.iter_mut() {
            *g *= f.amplitude;
        }
        [f.amplitude * s, f.amplitude * sg]
    }

    #[test]
    fn passes_over_the_features_have_the_bits_of_the_feature_by_feature_loop() {
        let mut rng = Rng::new(4);
        for kind in [KernelKind::Rbf, KernelKind::Matern52] {
            for (d, m) in [(1, 1), (3, 7), (8, 64), (13, 100), (32, 1024)] {
                let ls: Vec<f64> = (0..d).map(|j| 0.1 + 0.03 * j as f64).collect();
                let f = RandomFeatures::new(kind, &ls, 1.3, m, d as u64).unwrap();
                for _ in 0..10 {
                    let x: Vec<f64> = (0..d).map(|_| rng.uniform()).collect();
                    let (mut g, mut want_g) = (vec![f64::NAN; d], vec![0.0; d]);
                    let got = [f.value(&x), f.value_grad(&x, &mut g)];
                    let want = feature_by_feature(&f, &x, &mut want_g);
                    assert_eq!(
                        got.map(f64::to_bits),
                        want.map(f64::to_bits),
                        "{kind:?} d = {d}"
                    );
                    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(&g), bits(&want_g), "{kind:?} d = {d}, m = {m}");
                }
            }
        }
    }

    #[test]
    fn gradient_matches_finite_differences() {
        for kind in [KernelKind::Rbf, KernelKind::Matern32] {
            let f = RandomFeatures::new(kind, &[0.3, 0.7, 0.2], 1.7, 64, 5).unwrap();
            let x = [0.2, 0.5, 0.9];
            let mut g = [0.0; 3];
            let v = f.value_grad(&x, &mut g);
            assert!((v - f.value(&x)).abs() < 1e-14);
            for j in 0..3 {
                let h = 1e-6;
                let (mut xp, mut xm) = (x, x);
                xp[j] += h;
                xm[j] -= h;
                let fd = (f.value(&xp) - f.value(&xm)) / (2.0 * h);
                assert!((fd - g[j]).abs() <= 1e-6 * g[j].abs().max(1e-3));
            }
        }
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(RandomFeatures::new(KernelKind::Rbf, &[0.1], 1.0, 0, 1).is_err());
        assert!(RandomFeatures::new(KernelKind::Rbf, &[0.0], 1.0, 8, 1).is_err());
        let mut f = RandomFeatures::new(KernelKind::Rbf, &[0.1], 1.0, 8, 1).unwrap();
        assert!(f.set_weights(vec![0.0; 7]).is_err());
    }
}
