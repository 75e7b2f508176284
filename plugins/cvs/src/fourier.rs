//! Posterior sample paths of an exact GP on random Fourier features (seed 002, App. C.2:
//! TS-PSQ and EI-PSQ sample f through 1024 RFF), and their expectations over a control
//! set's open variables in closed form.
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
//!
//! **Expectation over the open variables.** For `x = [x^i, s^{-i}]`,
//! `ω_kᵀx = ω_{k,c}ᵀx^i + ω_{k,o}ᵀs`, so the Monte Carlo average over the fixed samples `s` is
//! `E_s cos(ω_kᵀx + b_k) = cos(α_k)·C_k − sin(α_k)·S_k` with `α_k = ω_{k,c}ᵀx^i + b_k` and
//! `C_k`, `S_k` the sample means of `cos`, `sin` of `ω_{k,o}ᵀs` — computed once per control
//! set. One evaluation then costs O(m·q) instead of the O(M·m·d) of averaging the path over
//! the M samples, and it is the same average (a trigonometric identity, not an
//! approximation).

use cabo_core::{Error, Result, Rng, SamplePath, derive_seed};
use cabo_gp::linalg::{Cholesky, axpy, dot};
use cabo_gp::{GpPosterior, Kernel};

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

/// Posterior sample paths of an exact GP that share one random Fourier basis:
/// `f_s(x) = c + Σ_k W_sk cos(ω_kᵀx + b_k)` in observed units.
#[derive(Debug, Clone)]
pub struct FourierPaths {
    basis: FourierBasis,
    /// Row-major `paths × m`: the BLR weights times the feature amplitude and the output
    /// scale, so a value is one dot product.
    weights: Vec<f64>,
    /// Observed-unit offset: the transform's shift plus its scale times the prior mean.
    offset: f64,
    count: usize,
}

impl FourierPaths {
    /// Draws `count` paths from `post` on one basis of `features` features (seed 002,
    /// App. C.2). Sharing the basis makes each path an exact draw from the BLR posterior
    /// given that basis, and lets every path reuse one set of per-feature expectations.
    /// Everything is determined by `seed`.
    pub fn sample(post: &GpPosterior, features: usize, count: usize, seed: u64) -> Result<Self> {
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
        Ok(FourierPaths {
            basis,
            weights,
            offset: t.shift + t.scale * mean,
            count,
        })
    }

    /// Number of paths.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Input dimension.
    pub fn dim(&self) -> usize {
        self.basis.dim
    }

    /// Path `s` as a [`SamplePath`]. Panics if `s` ≥ [`FourierPaths::count`].
    pub fn path(&self, s: usize) -> FourierPath<'_> {
        assert!(s < self.count, "path {s} of {}", self.count);
        FourierPath { paths: self, s }
    }

    /// Each path's largest value over the rows of `xs` (row-major, whole points): the
    /// incumbent of every path. Errors when `xs` holds no whole point.
    pub fn maxima(&self, xs: &[f64]) -> Result<Vec<f64>> {
        let d = self.basis.dim;
        if xs.is_empty() || !xs.len().is_multiple_of(d) {
            return Err(Error::invalid(format!(
                "sample paths: {} coordinates are not a non-empty set of points of dimension {d}",
                xs.len()
            )));
        }
        let m = self.basis.len();
        let mut cos = vec![0.0; m];
        let mut best = vec![f64::NEG_INFINITY; self.count];
        for x in xs.chunks_exact(d) {
            self.cosines(x, &mut cos);
            for (b, w) in best.iter_mut().zip(self.weights.chunks_exact(m)) {
                *b = b.max(self.offset + dot(w, &cos));
            }
        }
        Ok(best)
    }

    /// Precomputes the expectation of every path over the open variables of the control
    /// set `vars` (strictly increasing indices), under the samples `samples` (row-major
    /// `M × d`). A set holding every variable leaves nothing to average.
    pub fn expectation(&self, vars: &[usize], samples: &[f64]) -> Result<SetExpectation<'_>> {
        let d = self.basis.dim;
        if vars.is_empty() || vars.iter().any(|&v| v >= d) || vars.windows(2).any(|w| w[0] >= w[1])
        {
            return Err(Error::invalid(format!(
                "sample paths: control set {vars:?} is not a strictly increasing list of indices below {d}"
            )));
        }
        if samples.is_empty() || !samples.len().is_multiple_of(d) {
            return Err(Error::invalid(format!(
                "sample paths: {} sample coordinates are not whole points of dimension {d}",
                samples.len()
            )));
        }
        let (cos_mean, sin_mean) = self.open_moments(vars, samples);
        Ok(SetExpectation {
            paths: self,
            vars: vars.to_vec(),
            cos_mean,
            sin_mean,
        })
    }

    /// Per feature, the sample means of cos and sin of `ω_{k,o}ᵀs` over the open
    /// coordinates (1 and 0 when none is open).
    fn open_moments(&self, vars: &[usize], samples: &[f64]) -> (Vec<f64>, Vec<f64>) {
        let (d, m) = (self.basis.dim, self.basis.len());
        let open: Vec<usize> = (0..d).filter(|l| vars.binary_search(l).is_err()).collect();
        if open.is_empty() {
            return (vec![1.0; m], vec![0.0; m]);
        }
        let count = (samples.len() / d) as f64;
        let mut cos_mean = vec![0.0; m];
        let mut sin_mean = vec![0.0; m];
        for (k, om) in self.basis.omega.chunks_exact(d).enumerate() {
            let (mut c, mut s) = (0.0, 0.0);
            for row in samples.chunks_exact(d) {
                let t: f64 = open.iter().map(|&l| om[l] * row[l]).sum();
                let (sn, cs) = t.sin_cos();
                c += cs;
                s += sn;
            }
            cos_mean[k] = c / count;
            sin_mean[k] = s / count;
        }
        (cos_mean, sin_mean)
    }

    /// `cos(ω_kᵀx + b_k)` for every feature.
    fn cosines(&self, x: &[f64], out: &mut [f64]) {
        let d = self.basis.dim;
        for ((o, om), b) in out
            .iter_mut()
            .zip(self.basis.omega.chunks_exact(d))
            .zip(&self.basis.phase)
        {
            *o = (dot(om, x) + b).cos();
        }
    }
}

/// One path of a [`FourierPaths`], evaluated point by point.
pub struct FourierPath<'a> {
    paths: &'a FourierPaths,
    s: usize,
}

impl SamplePath for FourierPath<'_> {
    fn value(&self, x: &[f64]) -> f64 {
        let mut cos = vec![0.0; self.paths.basis.len()];
        self.paths.cosines(x, &mut cos);
        self.paths.offset + dot(self.weights(), &cos)
    }

    fn value_grad(&self, x: &[f64], grad: &mut [f64]) -> f64 {
        let basis = &self.paths.basis;
        grad.fill(0.0);
        let mut v = self.paths.offset;
        for ((w, om), b) in self
            .weights()
            .iter()
            .zip(basis.omega.chunks_exact(basis.dim))
            .zip(&basis.phase)
        {
            let (sn, cs) = (dot(om, x) + b).sin_cos();
            v += w * cs;
            axpy(-w * sn, om, grad);
        }
        v
    }
}

impl FourierPath<'_> {
    fn weights(&self) -> &[f64] {
        let m = self.paths.basis.len();
        &self.paths.weights[self.s * m..(self.s + 1) * m]
    }
}

/// Every path's expectation over the open variables of one control set, as a function of
/// the controlled sub-vector x^i.
pub struct SetExpectation<'a> {
    paths: &'a FourierPaths,
    vars: Vec<usize>,
    cos_mean: Vec<f64>,
    sin_mean: Vec<f64>,
}

/// Per feature, `E_s cos(θ_k)` and `E_s sin(θ_k)` at one x^i, `θ_k = ω_kᵀ[x^i, s] + b_k`.
pub struct FeatureMeans {
    cos: Vec<f64>,
    sin: Vec<f64>,
}

impl SetExpectation<'_> {
    /// The controlled variables.
    pub fn vars(&self) -> &[usize] {
        &self.vars
    }

    /// Number of paths.
    pub fn count(&self) -> usize {
        self.paths.count
    }

    /// Writes every path's expectation at `xi` into `values` (length
    /// [`SetExpectation::count`]) and returns the per-feature means that
    /// [`SetExpectation::weighted_grad`] needs.
    pub fn values(&self, xi: &[f64], values: &mut [f64]) -> FeatureMeans {
        let fm = self.feature_means(xi);
        let m = self.paths.basis.len();
        for (v, w) in values.iter_mut().zip(self.paths.weights.chunks_exact(m)) {
            *v = self.paths.offset + dot(w, &fm.cos);
        }
        fm
    }

    /// `Σ_s coef_s ∇E_s(x^i)` into `grad`, from the feature means at x^i.
    pub fn weighted_grad(&self, fm: &FeatureMeans, coef: &[f64], grad: &mut [f64]) {
        let (d, m) = (self.paths.basis.dim, self.paths.basis.len());
        // Fold the paths first: c_k = Σ_s coef_s W_sk, then ∂/∂x_j = −Σ_k c_k E sin(θ_k) ω_kj.
        let mut c = vec![0.0; m];
        for (a, w) in coef.iter().zip(self.paths.weights.chunks_exact(m)) {
            if *a != 0.0 {
                axpy(*a, w, &mut c);
            }
        }
        grad.fill(0.0);
        for ((ck, sk), om) in c
            .iter()
            .zip(&fm.sin)
            .zip(self.paths.basis.omega.chunks_exact(d))
        {
            let g = -ck * sk;
            for (gj, &v) in grad.iter_mut().zip(&self.vars) {
                *gj += g * om[v];
            }
        }
    }

    /// The full point with `xi` in the controlled coordinates and 0.5 elsewhere.
    pub fn full_point(&self, xi: &[f64]) -> Vec<f64> {
        crate::common::full_point(self.paths.basis.dim, &self.vars, xi)
    }

    fn feature_means(&self, xi: &[f64]) -> FeatureMeans {
        let basis = &self.paths.basis;
        let m = basis.len();
        let mut cos = vec![0.0; m];
        let mut sin = vec![0.0; m];
        for k in 0..m {
            let om = &basis.omega[k * basis.dim..(k + 1) * basis.dim];
            let alpha: f64 = basis.phase[k]
                + self
                    .vars
                    .iter()
                    .zip(xi)
                    .map(|(&v, x)| om[v] * x)
                    .sum::<f64>();
            let (sa, ca) = alpha.sin_cos();
            // cos(α + t) and sin(α + t), averaged over the open part t.
            cos[k] = ca * self.cos_mean[k] - sa * self.sin_mean[k];
            sin[k] = sa * self.cos_mean[k] + ca * self.sin_mean[k];
        }
        FeatureMeans { cos, sin }
    }
}

/// The mean over paths of their expectations (for one path, TS-PSQ's objective).
impl cabo_optim::multistart::Objective for SetExpectation<'_> {
    fn dim(&self) -> usize {
        self.vars.len()
    }

    fn values(&self, xs: &[f64], out: &mut [f64]) {
        let mut v = vec![0.0; self.count()];
        for (o, xi) in out.iter_mut().zip(xs.chunks_exact(self.vars.len())) {
            SetExpectation::values(self, xi, &mut v);
            *o = v.iter().sum::<f64>() / v.len() as f64;
        }
    }

    fn value_grad(&self, xi: &[f64], grad: &mut [f64]) -> f64 {
        let mut v = vec![0.0; self.count()];
        let fm = SetExpectation::values(self, xi, &mut v);
        let coef = vec![1.0 / v.len() as f64; v.len()];
        self.weighted_grad(&fm, &coef, grad);
        v.iter().sum::<f64>() / v.len() as f64
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use cabo_core::TrainingData;
    use cabo_gp::{KernelKind, OutputTransform};
    use cabo_optim::multistart::Objective;

    /// A fitted GP on n points in \[0,1\]^d of a smooth function, standardised outputs.
    pub(crate) fn gp(kind: KernelKind, n: usize, d: usize, seed: u64) -> GpPosterior {
        gp_with_noise(kind, n, d, seed, 1e-3)
    }

    /// [`gp`] with a chosen noise variance (model units).
    fn gp_with_noise(kind: KernelKind, n: usize, d: usize, seed: u64, noise: f64) -> GpPosterior {
        let mut rng = Rng::new(seed);
        let x: Vec<f64> = (0..n * d).map(|_| rng.uniform()).collect();
        let y: Vec<f64> = x
            .chunks_exact(d)
            .map(|p| (4.0 * p[0]).sin() + p.iter().sum::<f64>() + 0.05 * rng.normal())
            .collect();
        let ls: Vec<f64> = (0..d).map(|l| 0.25 + 0.05 * l as f64).collect();
        GpPosterior::new(
            Kernel::new(kind, ls, 1.3).unwrap(),
            noise,
            0.1,
            TrainingData {
                dim: d,
                x: &x,
                y: &y,
            },
            OutputTransform::standardize(&y),
        )
        .unwrap()
    }

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

    fn samples(d: usize, count: usize, seed: u64) -> Vec<f64> {
        let mut rng = Rng::new(seed);
        (0..count * d).map(|_| 0.5 + 0.2 * rng.normal()).collect()
    }

    /// Oracle: the path evaluated at every sample and averaged (the definition). Values
    /// agree to 1e-10 relative; gradients (chain rule through the closed form) agree with
    /// central differences (h = 1e-6) to 1e-6 relative to the largest component.
    #[test]
    fn closed_form_expectation_is_the_sample_average_with_the_right_gradient() {
        let d = 4;
        let post = gp(KernelKind::Matern32, 25, d, 2);
        let paths = FourierPaths::sample(&post, 256, 3, 7).unwrap();
        let s = samples(d, 200, 4);
        for vars in [vec![0, 2], vec![1], vec![0, 1, 2, 3]] {
            let e = paths.expectation(&vars, &s).unwrap();
            let xi: Vec<f64> = (0..vars.len()).map(|k| 0.2 + 0.25 * k as f64).collect();
            let mut fast = vec![0.0; 3];
            e.values(&xi, &mut fast);
            for (p, f) in fast.iter().enumerate() {
                let path = paths.path(p);
                let rows: Vec<Vec<f64>> = if vars.len() == d {
                    vec![xi.clone()]
                } else {
                    s.chunks_exact(d).map(|r| r.to_vec()).collect()
                };
                let brute = rows
                    .iter()
                    .map(|r| {
                        let mut z = r.clone();
                        for (k, &v) in vars.iter().enumerate() {
                            z[v] = xi[k];
                        }
                        path.value(&z)
                    })
                    .sum::<f64>()
                    / rows.len() as f64;
                assert!((f - brute).abs() < 1e-10 * (1.0 + brute.abs()), "{vars:?}");
            }
            let mut g = vec![0.0; vars.len()];
            Objective::value_grad(&e, &xi, &mut g);
            let scale = g.iter().fold(1e-3, |a: f64, v| a.max(v.abs()));
            for k in 0..vars.len() {
                let h = 1e-6;
                let (mut a, mut b) = (xi.clone(), xi.clone());
                a[k] += h;
                b[k] -= h;
                let mut va = [0.0];
                let mut vb = [0.0];
                Objective::values(&e, &a, &mut va);
                Objective::values(&e, &b, &mut vb);
                let fd = (va[0] - vb[0]) / (2.0 * h);
                assert!(
                    (fd - g[k]).abs() < 1e-6 * scale,
                    "{vars:?} {k}: {fd} vs {}",
                    g[k]
                );
            }
        }
    }

    /// A path's own gradient against central differences (relative 1e-6).
    #[test]
    fn path_gradient_matches_finite_differences() {
        let post = gp(KernelKind::Rbf, 15, 3, 5);
        let paths = FourierPaths::sample(&post, 128, 2, 1).unwrap();
        let path = paths.path(1);
        let x = [0.3, 0.6, 0.2];
        let mut g = [0.0; 3];
        let v = path.value_grad(&x, &mut g);
        assert!((v - path.value(&x)).abs() < 1e-12 * (1.0 + v.abs()));
        let scale = g.iter().fold(1e-3, |a: f64, v| a.max(v.abs()));
        for k in 0..3 {
            let (mut a, mut b) = (x, x);
            a[k] += 1e-6;
            b[k] -= 1e-6;
            let fd = (path.value(&a) - path.value(&b)) / 2e-6;
            assert!((fd - g[k]).abs() < 1e-6 * scale);
        }
    }

    /// With near noise-free data (noise variance 1e-6 in standardised units, so σ = 0.001)
    /// a sample path passes through the observations: a check of the units (transform,
    /// prior mean) of the whole draw. Its posterior sd there is at most σ·scale, so the
    /// tolerance 0.01 is over 10 sd, yet a wrong shift, scale or sign of the ~1-wide data
    /// fails.
    #[test]
    fn paths_pass_through_the_observations() {
        let post = gp_with_noise(KernelKind::Rbf, 12, 2, 8, 1e-6);
        let paths = FourierPaths::sample(&post, 1024, 4, 3).unwrap();
        let y = post.train_y();
        for s in 0..4 {
            for (x, yi) in post.train_x().chunks_exact(2).zip(&y) {
                let v = paths.path(s).value(x);
                assert!((v - yi).abs() < 0.01, "path {s}: {v} vs {yi}");
            }
        }
    }

    #[test]
    fn bad_input_is_an_error() {
        let k = Kernel::new(KernelKind::Rbf, vec![0.2], 1.0).unwrap();
        assert!(FourierBasis::draw(&k, 0, 1).is_err());
        assert!(BlrSampler::new(&[0.0; 5], 2, &[1.0, 2.0], 0.1).is_err());
        assert!(BlrSampler::new(&[0.0; 4], 2, &[1.0, 2.0], -1.0).is_err());
        let post = gp(KernelKind::Rbf, 5, 2, 1);
        assert!(FourierPaths::sample(&post, 16, 0, 1).is_err());
        let paths = FourierPaths::sample(&post, 16, 2, 1).unwrap();
        assert!(paths.expectation(&[1, 0], &[0.5; 4]).is_err());
        assert!(paths.expectation(&[2], &[0.5; 4]).is_err());
        assert!(paths.expectation(&[0], &[0.5; 3]).is_err());
        assert!(paths.maxima(&[]).is_err());
        assert!(paths.maxima(&[0.5; 3]).is_err());
    }
}
