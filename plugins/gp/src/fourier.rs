//! Posterior draws of the exact GP on a shared random Fourier basis
//! ([`cabo_core::capability::FourierSamples`]; seed 002, App. C.2: TS-PSQ and EI-PSQ sample
//! f through 1024 RFF).
//!
//! **Features.** `φ_k(x) = a·cos(ω_kᵀx + b_k)`, `a = √(2s/m)`, phases `b_k ~ U[0, 2π)`,
//! frequencies from the kernel's spectral density (`ω = z/ℓ`, `z ~ N(0, I)` for RBF,
//! multivariate Student-t with 2ν degrees of freedom for Matérn-ν), so that
//! `E[φ(x)ᵀφ(x')] = k(x, x')`.
//!
//! **Weights.** Bayesian linear regression `y = Φw + ε`, `w ~ N(0, I)`, `ε ~ N(0, σ²I)` has the
//! posterior `N(A⁻¹Φᵀy/σ², A⁻¹)`, `A = I + ΦᵀΦ/σ²` (m × m). With n observations ≪ m
//! features it is drawn exactly, without forming A, by Matheron's rule in n dimensions:
//! `w = w₀ + Φᵀ(ΦΦᵀ + σ²I)⁻¹(y − Φw₀ − ε)` with `w₀ ~ N(0, I)`, `ε ~ N(0, σ²I)`: O(n²m + n³)
//! instead of O(m³).

use crate::kernel::Kernel;
use crate::posterior::GpPosterior;
use cabo_core::capability::{FourierDraws, FourierSamples};
use cabo_core::{Error, Result, Rng, derive_seed};
use cabo_linalg::Cholesky;
use cabo_linalg::{axpy, dot};

impl FourierSamples for GpPosterior {
    /// Draws `count` paths on one basis of `features` features (seed 002, App. C.2).
    /// Sharing the basis makes each path an exact draw from the BLR posterior given that
    /// basis, and lets every path reuse one set of per-feature expectations.
    fn draw(&self, features: usize, count: usize, seed: u64) -> Result<FourierDraws> {
        let post = self;
        if count == 0 {
            return Err(Error::invalid("sample paths: need at least 1"));
        }
        let basis = FourierBasis::draw(post.kernel(), features, derive_seed(&[&seed, &"basis"]))?;
        let t = post.output_transform();
        let mean = post.mean_constant();
        // Targets in model units, centred on the prior mean.
        let y: Vec<f64> = post
            .train_y()
            .iter()
            .map(|v| (v - t.shift) / t.scale - mean)
            .collect();
        let phi = basis.feature_matrix(post.train_x());
        let sampler = BlrSampler::new(&phi, features, &y, post.model_noise_variance())?;
        let mut rng = Rng::new(derive_seed(&[&seed, &"weights"]));
        let mut weights = Vec::with_capacity(count * features);
        for _ in 0..count {
            let w = sampler.draw(&mut rng);
            weights.extend(w.iter().map(|v| v * basis.amplitude * t.scale));
        }
        Ok(FourierDraws {
            dim: basis.dim,
            frequencies: basis.omega,
            phases: basis.phase,
            weights,
            offset: t.shift + t.scale * mean,
        })
    }
}

/// A random Fourier feature basis of a stationary kernel (no weights).
#[derive(Debug, Clone, PartialEq)]
pub struct FourierBasis {
    dim: usize,
    /// Frequencies, row-major `m × d`.
    omega: Vec<f64>,
    phase: Vec<f64>,
    amplitude: f64,
}

impl FourierBasis {
    /// Draws `features` frequencies and phases for `kernel` from `seed`. Errors when
    /// `features` is 0.
    pub fn draw(kernel: &Kernel, features: usize, seed: u64) -> Result<Self> {
        if features == 0 {
            return Err(Error::invalid("random Fourier features: need at least 1"));
        }
        let d = kernel.dim();
        let mut rng = Rng::new(seed);
        let dof = kernel.kind.nu().map(|nu| (2.0 * nu).round() as usize);
        let mut omega = vec![0.0; features * d];
        for row in omega.chunks_exact_mut(d) {
            rng.fill_normal(row);
            if let Some(k) = dof {
                // z = g·√(k/u) with u ~ χ²_k is multivariate Student-t with k dof.
                let u: f64 = (0..k).map(|_| rng.normal().powi(2)).sum();
                let scale = (k as f64 / u).sqrt();
                row.iter_mut().for_each(|v| *v *= scale);
            }
            for (v, l) in row.iter_mut().zip(&kernel.lengthscales) {
                *v /= l;
            }
        }
        let phase = (0..features)
            .map(|_| rng.uniform() * std::f64::consts::TAU)
            .collect();
        Ok(FourierBasis {
            dim: d,
            omega,
            phase,
            amplitude: (2.0 * kernel.outputscale / features as f64).sqrt(),
        })
    }

    /// Number of features m.
    pub fn len(&self) -> usize {
        self.phase.len()
    }

    /// Always false: a basis has at least one feature.
    pub fn is_empty(&self) -> bool {
        self.phase.is_empty()
    }

    /// Input dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The frequencies ω, row-major `m × d` (already divided by the lengthscales).
    pub fn frequencies(&self) -> &[f64] {
        &self.omega
    }

    /// The phases b, one per feature.
    pub fn phases(&self) -> &[f64] {
        &self.phase
    }

    /// The amplitude `√(2s/m)` shared by every feature.
    pub fn amplitude(&self) -> f64 {
        self.amplitude
    }

    /// The feature vector φ(x) (length m).
    pub fn features(&self, x: &[f64], out: &mut [f64]) {
        for ((o, w), b) in out
            .iter_mut()
            .zip(self.omega.chunks_exact(self.dim))
            .zip(&self.phase)
        {
            *o = self.amplitude * (dot(w, x) + b).cos();
        }
    }

    /// Feature vectors of the rows of `xs` (row-major `n × d`), row-major `n × m`.
    pub fn feature_matrix(&self, xs: &[f64]) -> Vec<f64> {
        let m = self.len();
        let mut out = vec![0.0; xs.len() / self.dim * m];
        for (row, x) in out.chunks_exact_mut(m).zip(xs.chunks_exact(self.dim)) {
            self.features(x, row);
        }
        out
    }
}

/// Exact draws from the weight posterior of Bayesian linear regression `y = Φw + ε` with
/// prior `w ~ N(0, I)` and noise `ε ~ N(0, σ²I)`, by Matheron's rule in n dimensions.
pub struct BlrSampler<'a> {
    phi: &'a [f64],
    m: usize,
    y: &'a [f64],
    noise: f64,
    /// Cholesky factor of `ΦΦᵀ + σ²I` (n × n).
    gram: Cholesky,
}

impl<'a> BlrSampler<'a> {
    /// Prepares draws given the design `phi` (row-major `n × m`, n = `y.len()`), the targets
    /// `y` and the noise variance `noise` ≥ 0. Errors on mismatched sizes, a negative or
    /// non-finite noise, or a Gram matrix that cannot be factorised.
    pub fn new(phi: &'a [f64], m: usize, y: &'a [f64], noise: f64) -> Result<Self> {
        let n = y.len();
        if m == 0 || phi.len() != n * m {
            return Err(Error::invalid(format!(
                "Bayesian linear regression: design has {} entries, expected {n} × {m}",
                phi.len()
            )));
        }
        if !(noise.is_finite() && noise >= 0.0) {
            return Err(Error::invalid(format!(
                "Bayesian linear regression: noise variance must be finite and ≥ 0, got {noise}"
            )));
        }
        let mut gram = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..=i {
                gram[i * n + j] = dot(&phi[i * m..(i + 1) * m], &phi[j * m..(j + 1) * m]);
            }
            gram[i * n + i] += noise;
        }
        Ok(BlrSampler {
            phi,
            m,
            y,
            noise,
            gram: Cholesky::factor(&gram, n)?,
        })
    }

    /// `w₀ + Φᵀ(ΦΦᵀ + σ²I)⁻¹(y − Φw₀ − ε)`: the posterior draw belonging to the prior draw
    /// `w0` (length m) and the noise draw `eps` (length n, already scaled by σ). Affine in
    /// (w0, eps), which is what makes its moments checkable in closed form.
    pub fn update(&self, w0: &[f64], eps: &[f64]) -> Vec<f64> {
        let m = self.m;
        let mut r: Vec<f64> = self
            .phi
            .chunks_exact(m)
            .zip(self.y)
            .zip(eps)
            .map(|((row, y), e)| y - dot(row, w0) - e)
            .collect();
        if !r.is_empty() {
            self.gram.solve_in_place(&mut r);
        }
        let mut w = w0.to_vec();
        for (ri, row) in r.iter().zip(self.phi.chunks_exact(m)) {
            axpy(*ri, row, &mut w);
        }
        w
    }

    /// One posterior draw: `w₀ ~ N(0, I)` and `ε ~ N(0, σ²I)` from `rng`, then
    /// [`BlrSampler::update`].
    pub fn draw(&self, rng: &mut Rng) -> Vec<f64> {
        let mut w0 = vec![0.0; self.m];
        rng.fill_normal(&mut w0);
        let sd = self.noise.sqrt();
        let eps: Vec<f64> = (0..self.y.len()).map(|_| sd * rng.normal()).collect();
        self.update(&w0, &eps)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::KernelKind;

    /// Oracle: the closed-form kernel. With m features, φ(x)ᵀφ(x') is a mean of m i.i.d.
    /// terms 2s·cos θ_k cos θ'_k; it must lie within 4 empirical standard errors of k(x, x').
    #[test]
    fn features_approximate_the_kernel_within_four_standard_errors() {
        let m = 100_000;
        let pts = [[0.1, 0.5, 0.9], [0.3, 0.4, 0.7], [0.8, 0.1, 0.2]];
        for (t, kind) in [
            KernelKind::Rbf,
            KernelKind::Matern12,
            KernelKind::Matern32,
            KernelKind::Matern52,
        ]
        .into_iter()
        .enumerate()
        {
            let k = Kernel::new(kind, vec![0.3, 0.5, 0.4], 1.7).unwrap();
            let basis = FourierBasis::draw(&k, m, 10 + t as u64).unwrap();
            let (mut a, mut b) = (vec![0.0; m], vec![0.0; m]);
            for (x, y) in [(0, 1), (0, 2), (1, 1)] {
                basis.features(&pts[x], &mut a);
                basis.features(&pts[y], &mut b);
                let terms: Vec<f64> = a.iter().zip(&b).map(|(u, v)| m as f64 * u * v).collect();
                let est = terms.iter().sum::<f64>() / m as f64;
                let var = terms.iter().map(|v| (v - est).powi(2)).sum::<f64>() / (m - 1) as f64;
                let se = (var / m as f64).sqrt();
                let exact = k.value(&pts[x], &pts[y]);
                assert!(
                    (est - exact).abs() < 4.0 * se,
                    "{kind:?} {x},{y}: {est} vs {exact} (se {se})"
                );
            }
        }
    }

    /// A design, targets and noise for the weight-posterior tests.
    fn design(n: usize, m: usize, seed: u64) -> (Vec<f64>, Vec<f64>, f64) {
        let k = Kernel::new(KernelKind::Matern52, vec![0.3, 0.6], 1.0).unwrap();
        let basis = FourierBasis::draw(&k, m, seed).unwrap();
        let mut rng = Rng::new(seed + 1);
        let x: Vec<f64> = (0..n * 2).map(|_| rng.uniform()).collect();
        let y = (0..n).map(|_| rng.normal()).collect();
        (basis.feature_matrix(&x), y, 0.05)
    }

    /// The m-dimensional closed form: mean `A⁻¹Φᵀy/σ²` and covariance `A⁻¹`,
    /// `A = I + ΦᵀΦ/σ²`, through an m × m Cholesky factorisation.
    fn closed_form(phi: &[f64], m: usize, y: &[f64], noise: f64) -> (Vec<f64>, Vec<f64>) {
        let mut a = vec![0.0; m * m];
        for row in phi.chunks_exact(m) {
            for i in 0..m {
                for j in 0..m {
                    a[i * m + j] += row[i] * row[j] / noise;
                }
            }
        }
        for i in 0..m {
            a[i * m + i] += 1.0;
        }
        let chol = Cholesky::factor(&a, m).unwrap();
        let mut mean = vec![0.0; m];
        for (row, yi) in phi.chunks_exact(m).zip(y) {
            axpy(yi / noise, row, &mut mean);
        }
        chol.solve_in_place(&mut mean);
        (mean, chol.inverse())
    }

    fn max_abs_diff(a: &[f64], b: &[f64]) -> f64 {
        a.iter()
            .zip(b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max)
    }

    /// The n-dimensional draw is affine in (w₀, ε): its mean is the draw at (0, 0) and its
    /// covariance is `T_w T_wᵀ + σ² T_ε T_εᵀ`, read off column by column. Both must equal
    /// the m-dimensional closed form to 1e-9 (relative to the largest entry); n < m and
    /// n > m are both exact.
    #[test]
    fn matheron_draw_has_the_blr_posterior_mean_and_covariance() {
        for (n, m) in [(30, 200), (12, 8)] {
            let (phi, y, noise) = design(n, m, 3);
            let sampler = BlrSampler::new(&phi, m, &y, noise).unwrap();
            let (w0, eps) = (vec![0.0; m], vec![0.0; n]);
            let mean = sampler.update(&w0, &eps);
            let mut cov = vec![0.0; m * m];
            let mut add_column = |col: Vec<f64>, weight: f64| {
                let c: Vec<f64> = col.iter().zip(&mean).map(|(a, b)| a - b).collect();
                for i in 0..m {
                    axpy(weight * c[i], &c, &mut cov[i * m..(i + 1) * m]);
                }
            };
            for j in 0..m {
                let mut e = w0.clone();
                e[j] = 1.0;
                add_column(sampler.update(&e, &eps), 1.0);
            }
            for i in 0..n {
                let mut e = eps.clone();
                e[i] = 1.0;
                add_column(sampler.update(&w0, &e), noise);
            }
            let (mean_cf, cov_cf) = closed_form(&phi, m, &y, noise);
            let scale_m = mean_cf.iter().fold(1e-300, |a: f64, v| a.max(v.abs()));
            let scale_c = cov_cf.iter().fold(1e-300, |a: f64, v| a.max(v.abs()));
            assert!(
                max_abs_diff(&mean, &mean_cf) < 1e-9 * scale_m,
                "n={n} m={m}"
            );
            assert!(max_abs_diff(&cov, &cov_cf) < 1e-9 * scale_c, "n={n} m={m}");
        }
    }

    /// Seeded Monte Carlo through the random draws themselves (N = 40 000): every mean
    /// within 4.5 standard errors `√(Σ_ii/N)` of the closed form, every covariance entry
    /// within 4.5 standard errors `√((Σ_ii Σ_jj + Σ_ij²)/N)` (Gaussian fourth moments).
    #[test]
    fn seeded_draws_match_the_posterior_moments() {
        let (n, m, draws) = (6, 4, 40_000);
        let (phi, y, noise) = design(n, m, 5);
        let sampler = BlrSampler::new(&phi, m, &y, noise).unwrap();
        let mut rng = Rng::new(17);
        let ws: Vec<Vec<f64>> = (0..draws).map(|_| sampler.draw(&mut rng)).collect();
        let (mean_cf, cov_cf) = closed_form(&phi, m, &y, noise);
        let nf = draws as f64;
        let mean: Vec<f64> = (0..m)
            .map(|i| ws.iter().map(|w| w[i]).sum::<f64>() / nf)
            .collect();
        for i in 0..m {
            let se = (cov_cf[i * m + i] / nf).sqrt();
            assert!((mean[i] - mean_cf[i]).abs() < 4.5 * se, "mean {i}");
            for j in 0..m {
                let c = ws
                    .iter()
                    .map(|w| (w[i] - mean[i]) * (w[j] - mean[j]))
                    .sum::<f64>()
                    / (nf - 1.0);
                let exact = cov_cf[i * m + j];
                let se = ((cov_cf[i * m + i] * cov_cf[j * m + j] + exact * exact) / nf).sqrt();
                assert!((c - exact).abs() < 4.5 * se, "cov {i},{j}: {c} vs {exact}");
            }
        }
    }

    #[test]
    fn bad_input_is_an_error() {
        let k = Kernel::new(KernelKind::Rbf, vec![0.2], 1.0).unwrap();
        assert!(FourierBasis::draw(&k, 0, 1).is_err());
        assert!(BlrSampler::new(&[0.0; 5], 2, &[1.0, 2.0], 0.1).is_err());
        assert!(BlrSampler::new(&[0.0; 4], 2, &[1.0, 2.0], -1.0).is_err());
    }
}
