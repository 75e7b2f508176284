//! Posterior sample paths on a shared random Fourier basis (seed 002, App. C.2: TS-PSQ and
//! EI-PSQ sample f through 1024 RFF), drawn by the model's [`FourierSamples`], and their
//! expectations over a control set's open variables in closed form.
//!
//! A draw is `f_s(x) = c + Σ_k W_sk cos(ω_kᵀx + b_k)`.
//!
//! **Expectation over the open variables.** For `x = [x^i, s^{-i}]`,
//! `ω_kᵀx = ω_{k,c}ᵀx^i + ω_{k,o}ᵀs`, so the Monte Carlo average over the fixed samples `s` is
//! `E_s cos(ω_kᵀx + b_k) = cos(α_k)·C_k − sin(α_k)·S_k` with `α_k = ω_{k,c}ᵀx^i + b_k` and
//! `C_k`, `S_k` the sample means of `cos`, `sin` of `ω_{k,o}ᵀs` — computed once per control
//! set. One evaluation then costs O(m·q) instead of the O(M·m·d) of averaging the path over
//! the M samples, and it is the same average (a trigonometric identity, not an
//! approximation).

use cabo_core::capability::{FourierDraws, FourierSamples};
use cabo_core::{Error, Objective, Result};
use cabo_linalg::{axpy, dot};

/// Posterior sample paths that share one random Fourier basis:
/// `f_s(x) = c + Σ_k W_sk cos(ω_kᵀx + b_k)` in observed units.
#[derive(Debug, Clone)]
pub struct FourierPaths {
    /// The basis, the weights (row-major `paths × m`, so a value is one dot product) and
    /// the offset.
    draws: FourierDraws,
    count: usize,
}

impl FourierPaths {
    /// Draws `count` paths from `post` on one basis of `features` features. Everything is
    /// determined by `seed`.
    pub fn sample(
        post: &dyn FourierSamples,
        features: usize,
        count: usize,
        seed: u64,
    ) -> Result<Self> {
        if count == 0 {
            return Err(Error::invalid("sample paths: need at least 1"));
        }
        let draws = post.draw(features, count, seed)?;
        let m = draws.features();
        if m == 0 || draws.frequencies.len() != m * draws.dim || draws.weights.len() != count * m {
            return Err(Error::invalid(format!(
                "sample paths: the model drew {} weights and {} frequencies for {count} paths \
                 of {m} features in dimension {}",
                draws.weights.len(),
                draws.frequencies.len(),
                draws.dim
            )));
        }
        Ok(FourierPaths { draws, count })
    }

    /// Number of paths.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Input dimension.
    pub fn dim(&self) -> usize {
        self.draws.dim
    }

    /// Path `s` as an [`Objective`]. Panics if `s` ≥ [`FourierPaths::count`].
    pub fn path(&self, s: usize) -> FourierPath<'_> {
        assert!(s < self.count, "path {s} of {}", self.count);
        FourierPath { paths: self, s }
    }

    /// Each path's largest value over the rows of `xs` (row-major, whole points): the
    /// incumbent of every path. Errors when `xs` holds no whole point.
    pub fn maxima(&self, xs: &[f64]) -> Result<Vec<f64>> {
        let d = self.draws.dim;
        if xs.is_empty() || !xs.len().is_multiple_of(d) {
            return Err(Error::invalid(format!(
                "sample paths: {} coordinates are not a non-empty set of points of dimension {d}",
                xs.len()
            )));
        }
        let m = self.draws.features();
        let mut cos = vec![0.0; m];
        let mut best = vec![f64::NEG_INFINITY; self.count];
        for x in xs.chunks_exact(d) {
            self.cosines(x, &mut cos);
            for (b, w) in best.iter_mut().zip(self.draws.weights.chunks_exact(m)) {
                *b = b.max(self.draws.offset + dot(w, &cos));
            }
        }
        Ok(best)
    }

    /// Precomputes the expectation of every path over the open variables of the control
    /// set `vars` (strictly increasing indices), under the samples `samples` (row-major
    /// `M × d`). A set holding every variable leaves nothing to average.
    pub fn expectation(&self, vars: &[usize], samples: &[f64]) -> Result<SetExpectation<'_>> {
        let d = self.draws.dim;
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
        let (d, m) = (self.draws.dim, self.draws.features());
        let open: Vec<usize> = (0..d).filter(|l| vars.binary_search(l).is_err()).collect();
        if open.is_empty() {
            return (vec![1.0; m], vec![0.0; m]);
        }
        let count = (samples.len() / d) as f64;
        let mut cos_mean = vec![0.0; m];
        let mut sin_mean = vec![0.0; m];
        for (k, om) in self.draws.frequencies.chunks_exact(d).enumerate() {
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
        let d = self.draws.dim;
        for ((o, om), b) in out
            .iter_mut()
            .zip(self.draws.frequencies.chunks_exact(d))
            .zip(&self.draws.phases)
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

impl Objective for FourierPath<'_> {
    fn value(&self, x: &[f64]) -> f64 {
        let mut cos = vec![0.0; self.paths.draws.features()];
        self.paths.cosines(x, &mut cos);
        self.paths.draws.offset + dot(self.weights(), &cos)
    }

    fn value_grad(&self, x: &[f64], grad: &mut [f64]) -> f64 {
        let basis = &self.paths.draws;
        grad.fill(0.0);
        let mut v = self.paths.draws.offset;
        for ((w, om), b) in self
            .weights()
            .iter()
            .zip(basis.frequencies.chunks_exact(basis.dim))
            .zip(&basis.phases)
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
        let m = self.paths.draws.features();
        &self.paths.draws.weights[self.s * m..(self.s + 1) * m]
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
        let m = self.paths.draws.features();
        for (v, w) in values
            .iter_mut()
            .zip(self.paths.draws.weights.chunks_exact(m))
        {
            *v = self.paths.draws.offset + dot(w, &fm.cos);
        }
        fm
    }

    /// `Σ_s coef_s ∇E_s(x^i)` into `grad`, from the feature means at x^i.
    pub fn weighted_grad(&self, fm: &FeatureMeans, coef: &[f64], grad: &mut [f64]) {
        let (d, m) = (self.paths.draws.dim, self.paths.draws.features());
        // Fold the paths first: c_k = Σ_s coef_s W_sk, then ∂/∂x_j = −Σ_k c_k E sin(θ_k) ω_kj.
        let mut c = vec![0.0; m];
        for (a, w) in coef.iter().zip(self.paths.draws.weights.chunks_exact(m)) {
            if *a != 0.0 {
                axpy(*a, w, &mut c);
            }
        }
        grad.fill(0.0);
        for ((ck, sk), om) in c
            .iter()
            .zip(&fm.sin)
            .zip(self.paths.draws.frequencies.chunks_exact(d))
        {
            let g = -ck * sk;
            for (gj, &v) in grad.iter_mut().zip(&self.vars) {
                *gj += g * om[v];
            }
        }
    }

    /// The full point with `xi` in the controlled coordinates and 0.5 elsewhere.
    pub fn full_point(&self, xi: &[f64]) -> Vec<f64> {
        crate::common::full_point(self.paths.draws.dim, &self.vars, xi)
    }

    fn feature_means(&self, xi: &[f64]) -> FeatureMeans {
        let basis = &self.paths.draws;
        let m = basis.features();
        let mut cos = vec![0.0; m];
        let mut sin = vec![0.0; m];
        for k in 0..m {
            let om = &basis.frequencies[k * basis.dim..(k + 1) * basis.dim];
            let alpha: f64 = basis.phases[k]
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
impl Objective for SetExpectation<'_> {
    fn value(&self, xi: &[f64]) -> f64 {
        let mut v = vec![0.0; self.count()];
        SetExpectation::values(self, xi, &mut v);
        v.iter().sum::<f64>() / v.len() as f64
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
    use cabo_core::{Rng, TrainingData};
    use cabo_gp::{GpPosterior, Kernel, KernelKind, OutputTransform};

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
