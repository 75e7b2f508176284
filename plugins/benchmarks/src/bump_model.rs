//! The `bump_scaled_gp` model: the exact GP posterior under the non-stationary prior of seed
//! 000's counterexamples (§3.3 Fig. 2, App. A.2 Fig. 8), for experiments in which the
//! policies use the true prior of the [`bump_prior_sample`](crate::bump) problem.
//!
//! # Kernel
//!
//! In native units z ∈ [lo, hi] the prior is zero-mean with
//!
//! k(z, z') = σ(z) σ(z') κ(((z − z')/ℓ)²),
//!
//! where κ is the Matérn-5/2 profile `(1 + √5 r + 5r²/3) e^{−√5 r}` and
//! σ(z) = σ_low + (σ_high − σ_low) · exp(−½((z − centre)/width)²) is a [`BumpScale`]. Scaling
//! a valid kernel by a deterministic function keeps it positive semi-definite, and
//! Var f(z) = σ(z)² exactly: far from the bump the prior is a quiet Matérn process of standard
//! deviation σ_low, on the bump a loud one of σ_high. With `profile: variance` the bump raises
//! the variance instead, σ(z)² = σ_low² + (σ_high² − σ_low²) · b(z): the authors'
//! `VariableAmplitudeKernel`, whose amplitude a(z) multiplies the covariance as √(a(z) a(z')).
//!
//! # Units
//!
//! Inputs x (training points and queries) live on the unit interval, as every problem's do,
//! and map to z = lo + (hi − lo) · x. On the unit interval the Matérn lengthscale is therefore
//! ℓ/(hi − lo), and every x-derivative is (hi − lo) times the z-derivative. Outputs are in the
//! units of y, unstandardised: the prior's scale is part of the truth.
//!
//! # Posterior
//!
//! Hyperparameters are fixed (this is the true prior, not a fitted one) and the observation
//! noise is Gaussian with a fixed variance. With K = k(X, X) + noise · I = L Lᵀ,
//! μ(x) = k(x, X) K⁻¹ y and v(x) = σ(x)² − ‖L⁻¹ k(X, x)‖², floored at
//! [`MIN_VARIANCE`] like `exact_gp`. Gradients follow from
//! ∂k(x, xᵢ)/∂x = σ'(x) σᵢ κ + σ(x) σᵢ ∂κ/∂x, so ∂μ = Σ αᵢ ∂kᵢ and
//! ∂v = 2σσ' − 2 (K⁻¹k) · ∂k. A fantasy extends L by one row instead of refactorising.

use crate::bump::{Bump, BumpPriorSampleSpec, BumpScale, default_bounds, one, tenth};
use cabo_core::capability::Fantasize;
use cabo_core::{
    BuildContext, Capabilities, Capability, Diagnostics, Error, MeanVar, MeanVarGrad, Model,
    ModelSpec, Posterior, Result, TrainingData,
};
use cabo_gp::KernelKind;
use cabo_gp::gp::DEFAULT_FIXED_NOISE;
use cabo_gp::posterior::MIN_VARIANCE;
use cabo_linalg::Cholesky;
use cabo_linalg::dot;
use serde::{Deserialize, Serialize};

/// Which quantity the bump raises from its `low` to its `high` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BumpProfile {
    /// The standard deviation: σ(z) = σ_low + (σ_high − σ_low) · b(z).
    #[default]
    Std,
    /// The variance: σ(z)² = σ_low² + (σ_high² − σ_low²) · b(z). This is the authors'
    /// `VariableAmplitudeKernel` (PandoraBayesOpt `pandora_bayesopt/kernel.py` l.30-37, which
    /// multiplies the base kernel by √(a(z) a(z')) with a(z) = ε² + (1 − ε²) b(z)); it agrees
    /// with `std` at the centre and far away and is wider on the bump's shoulders.
    Variance,
}

impl BumpProfile {
    /// Whether this is the default (not written back out, so older specs serialise alike).
    pub fn is_std(&self) -> bool {
        *self == BumpProfile::Std
    }
}

/// The non-stationary kernel σ(z)σ(z')κ₅/₂(|z − z'|/ℓ), evaluated at unit-interval inputs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BumpKernel {
    std: BumpScale,
    profile: BumpProfile,
    lo: f64,
    span: f64,
    lengthscale: f64,
    /// (hi − lo)/ℓ, the inverse lengthscale on the unit interval, computed as `exact_gp`
    /// does from the unit-interval lengthscale so the stationary case rounds alike.
    inv_ls: f64,
}

impl BumpKernel {
    /// The kernel of the given native `bounds`, Matérn `lengthscale`, bump `center` and
    /// `width`, and standard deviations `[std_low, std_high]`. Errors name the bad key.
    pub fn from_parameters(
        bounds: [f64; 2],
        lengthscale: f64,
        center: f64,
        width: f64,
        [std_low, std_high]: [f64; 2],
    ) -> Result<Self> {
        let [lo, hi] = bounds;
        if !(lo.is_finite() && hi.is_finite() && lo < hi) {
            return Err(Error::invalid(format!(
                "bounds: need finite lo < hi, got [{lo}, {hi}]"
            )));
        }
        let bump = Bump::new(center, width)?;
        for (key, v) in [
            ("lengthscale", lengthscale),
            ("std_low", std_low),
            ("std_high", std_high),
        ] {
            if !(v.is_finite() && v > 0.0) {
                return Err(Error::invalid(format!(
                    "{key}: must be finite and > 0, got {v}"
                )));
            }
        }
        let span = hi - lo;
        Ok(BumpKernel {
            std: BumpScale {
                bump,
                low: std_low,
                high: std_high,
            },
            profile: BumpProfile::Std,
            lo,
            span,
            lengthscale,
            inv_ls: 1.0 / (lengthscale / span),
        })
    }

    /// The same kernel with the bump raising the quantity `profile` names.
    pub fn with_profile(self, profile: BumpProfile) -> Self {
        BumpKernel { profile, ..self }
    }

    /// Which quantity the bump raises.
    pub fn profile(&self) -> BumpProfile {
        self.profile
    }

    /// The bump and its end values σ_low, σ_high (what they scale is [`Self::profile`]).
    pub fn std(&self) -> &BumpScale {
        &self.std
    }

    /// Width hi − lo of the native domain.
    pub fn span(&self) -> f64 {
        self.span
    }

    /// Matérn lengthscale in native units.
    pub fn lengthscale(&self) -> f64 {
        self.lengthscale
    }

    /// The native input z = lo + (hi − lo)·x of a unit-interval input.
    pub fn to_native(&self, x: f64) -> f64 {
        self.lo + self.span * x
    }

    /// σ at a unit-interval input.
    pub fn std_at(&self, x: f64) -> f64 {
        match self.profile {
            BumpProfile::Std => self.std.value(&[self.to_native(x)]),
            BumpProfile::Variance => self.squared_scale().value(&[self.to_native(x)]).sqrt(),
        }
    }

    /// σ and dσ/dx at a unit-interval input.
    pub fn std_grad(&self, x: f64) -> (f64, f64) {
        let mut g = [0.0];
        let z = [self.to_native(x)];
        match self.profile {
            BumpProfile::Std => {
                let s = self.std.value_grad(&z, &mut g);
                (s, g[0] * self.span)
            }
            BumpProfile::Variance => {
                // σ = √v, so dσ = dv / (2σ).
                let s = self.squared_scale().value_grad(&z, &mut g).sqrt();
                (s, g[0] * self.span / (2.0 * s))
            }
        }
    }

    /// The variance σ² = σ_low² + (σ_high² − σ_low²) · b of the `variance` profile.
    fn squared_scale(&self) -> BumpScale {
        BumpScale {
            bump: self.std.bump,
            low: self.std.low * self.std.low,
            high: self.std.high * self.std.high,
        }
    }

    /// The Matérn correlation κ between unit-interval inputs `a` and `b`, and ∂κ/∂a.
    pub fn correlation_grad(&self, a: f64, b: f64) -> (f64, f64) {
        let t = a * self.inv_ls - b * self.inv_ls;
        let (k, dk) = KernelKind::Matern52.profile(t * t);
        (k, 2.0 * dk * t * self.inv_ls)
    }

    /// k(a, b) between unit-interval inputs.
    pub fn value(&self, a: f64, b: f64) -> f64 {
        self.std_at(a) * self.std_at(b) * self.correlation_grad(a, b).0
    }
}

/// The first coordinate of a one-dimensional point, or an error naming `what` when the point
/// has another length or is not finite.
fn scalar_point(x: &[f64], what: &str) -> Result<f64> {
    match x {
        [v] if v.is_finite() => Ok(*v),
        [v] => Err(Error::invalid(format!("{what}: x = {v} is not finite"))),
        _ => Err(Error::invalid(format!(
            "{what}: point has {} coordinates, bump_scaled_gp is one-dimensional",
            x.len()
        ))),
    }
}

/// Rejects training data that are not one-dimensional, do not match in length or are not
/// finite, naming the offending index.
fn check_data(data: &TrainingData<'_>) -> Result<()> {
    if data.dim != 1 {
        return Err(Error::invalid(format!(
            "bump_scaled_gp: data have dimension {}, the model is one-dimensional",
            data.dim
        )));
    }
    if data.x.len() != data.y.len() {
        return Err(Error::invalid(format!(
            "bump_scaled_gp: {} inputs for {} targets",
            data.x.len(),
            data.y.len()
        )));
    }
    if let Some(i) = data.y.iter().position(|v| !v.is_finite()) {
        return Err(Error::invalid(format!(
            "bump_scaled_gp: y[{i}] = {} is not finite",
            data.y[i]
        )));
    }
    if let Some(i) = data.x.iter().position(|v| !v.is_finite()) {
        return Err(Error::invalid(format!(
            "bump_scaled_gp: x[{i}] = {} is not finite",
            data.x[i]
        )));
    }
    Ok(())
}

/// Rejects a noise variance that is negative or not finite.
fn check_noise(noise: f64) -> Result<()> {
    if noise.is_finite() && noise >= 0.0 {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "noise: must be finite and ≥ 0, got {noise}"
        )))
    }
}

/// The exact posterior of the non-stationary prior given data (see the module doc).
#[derive(Debug, Clone)]
pub struct BumpScaledGpPosterior {
    kernel: BumpKernel,
    noise: f64,
    x: Vec<f64>,
    /// σ(xᵢ), cached because every cross-covariance needs it.
    std_x: Vec<f64>,
    y: Vec<f64>,
    chol: Cholesky,
    /// K⁻¹y.
    alpha: Vec<f64>,
}

impl BumpScaledGpPosterior {
    /// The posterior given `data` (unit-interval inputs), with observation-noise variance
    /// `noise`. Empty data give the prior.
    pub fn new(kernel: BumpKernel, noise: f64, data: TrainingData<'_>) -> Result<Self> {
        check_data(&data)?;
        check_noise(noise)?;
        let std_x: Vec<f64> = data.x.iter().map(|&x| kernel.std_at(x)).collect();
        let n = data.len();
        let mut gram = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..=i {
                let kap = kernel.correlation_grad(data.x[i], data.x[j]).0;
                gram[i * n + j] = std_x[i] * std_x[j] * kap;
            }
            gram[i * n + i] += noise;
        }
        let mut post = BumpScaledGpPosterior {
            kernel,
            noise,
            x: data.x.to_vec(),
            std_x,
            y: data.y.to_vec(),
            chol: Cholesky::factor(&gram, n).map_err(|e| e.at("bump_scaled_gp"))?,
            alpha: Vec::new(),
        };
        post.update_alpha();
        Ok(post)
    }

    /// Number of observations (fantasies included).
    pub fn len(&self) -> usize {
        self.y.len()
    }

    /// True before any observation (the posterior is the prior).
    pub fn is_empty(&self) -> bool {
        self.y.is_empty()
    }

    /// The kernel.
    pub fn kernel(&self) -> &BumpKernel {
        &self.kernel
    }

    /// Diagonal jitter the Cholesky factorisation needed (0 if none).
    pub fn jitter(&self) -> f64 {
        self.chol.jitter()
    }

    fn update_alpha(&mut self) {
        let mut a = self.y.clone();
        self.chol.solve_in_place(&mut a);
        self.alpha = a;
    }

    /// k(x, Xᵢ) into `out`; returns σ(x).
    fn cross(&self, x: f64, out: &mut [f64]) -> f64 {
        let s = self.kernel.std_at(x);
        for ((o, &xi), &si) in out.iter_mut().zip(&self.x).zip(&self.std_x) {
            *o = s * si * self.kernel.correlation_grad(x, xi).0;
        }
        s
    }

    /// k(x, Xᵢ) into `k` and ∂k(x, Xᵢ)/∂x into `dk`; returns σ(x) and dσ/dx.
    fn cross_grad(&self, x: f64, k: &mut [f64], dk: &mut [f64]) -> (f64, f64) {
        let (s, ds) = self.kernel.std_grad(x);
        for (((ki, dki), &xi), &si) in k
            .iter_mut()
            .zip(dk.iter_mut())
            .zip(&self.x)
            .zip(&self.std_x)
        {
            let (kap, dkap) = self.kernel.correlation_grad(x, xi);
            *ki = s * si * kap;
            *dki = ds * si * kap + s * si * dkap;
        }
        (s, ds)
    }

    /// Mean and variance at a unit-interval point.
    fn mean_var_at(&self, x: f64) -> MeanVar {
        let mut k = vec![0.0; self.len()];
        let s = self.cross(x, &mut k);
        let mean = dot(&k, &self.alpha);
        self.chol.solve_lower_in_place(&mut k);
        MeanVar {
            mean,
            var: (s * s - dot(&k, &k)).max(MIN_VARIANCE),
        }
    }

    /// Joint mean and covariance (row-major) at the unit-interval points `xs`.
    pub fn joint(&self, xs: &[f64]) -> Result<(Vec<f64>, Vec<f64>)> {
        if let Some(i) = xs.iter().position(|v| !v.is_finite()) {
            return Err(Error::invalid(format!(
                "joint: point {i} = {} is not finite",
                xs[i]
            )));
        }
        let (m, n) = (xs.len(), self.len());
        // Row j of `v` is L⁻¹k(X, x_j); the covariance is k(x_a, x_b) − v_a · v_b.
        let mut v = vec![0.0; m * n];
        let mut mean = Vec::with_capacity(m);
        let mut std = Vec::with_capacity(m);
        for (j, &x) in xs.iter().enumerate() {
            let row = &mut v[j * n..(j + 1) * n];
            std.push(self.cross(x, row));
            mean.push(dot(row, &self.alpha));
            self.chol.solve_lower_in_place(row);
        }
        let mut cov = vec![0.0; m * m];
        for a in 0..m {
            for b in 0..=a {
                let prior = std[a] * std[b] * self.kernel.correlation_grad(xs[a], xs[b]).0;
                let mut c = prior - dot(&v[a * n..(a + 1) * n], &v[b * n..(b + 1) * n]);
                if a == b {
                    c = c.max(MIN_VARIANCE);
                }
                cov[a * m + b] = c;
                cov[b * m + a] = c;
            }
        }
        Ok((mean, cov))
    }

    /// The posterior after observing `y` at the unit-interval point `x`: the factor gains one
    /// row (O(n²)); the old posterior is untouched.
    pub fn condition_one(&self, x: f64, y: f64) -> Result<BumpScaledGpPosterior> {
        if !(x.is_finite() && y.is_finite()) {
            return Err(Error::invalid(format!(
                "bump_scaled_gp condition: need finite x and y, got x = {x}, y = {y}"
            )));
        }
        let mut k = vec![0.0; self.len()];
        let s = self.cross(x, &mut k);
        let mut out = self.clone();
        out.chol
            .extend_in_place(&k, s * s + self.noise)
            .map_err(|e| e.at("bump_scaled_gp"))?;
        out.x.push(x);
        out.std_x.push(s);
        out.y.push(y);
        out.update_alpha();
        Ok(out)
    }
}

impl Posterior for BumpScaledGpPosterior {
    fn dim(&self) -> usize {
        1
    }

    /// Mean and variance at `x`. The trait has no error channel, so a point that is not
    /// one-dimensional gives NaN mean and variance (the fallible methods report it).
    fn mean_var(&self, x: &[f64]) -> MeanVar {
        match x {
            [v] => self.mean_var_at(*v),
            _ => MeanVar {
                mean: f64::NAN,
                var: f64::NAN,
            },
        }
    }

    fn mean_var_grad(&self, x: &[f64]) -> Result<MeanVarGrad> {
        let x = scalar_point(x, "mean_var_grad")?;
        let n = self.len();
        let (mut k, mut dk) = (vec![0.0; n], vec![0.0; n]);
        let (s, ds) = self.cross_grad(x, &mut k, &mut dk);
        let mean = dot(&k, &self.alpha);
        let dmean = dot(&dk, &self.alpha);
        // v = L⁻¹k gives the variance; u = L⁻ᵀv = K⁻¹k gives its gradient.
        self.chol.solve_lower_in_place(&mut k);
        let raw = s * s - dot(&k, &k);
        // At the floor the reported variance is constant, so its gradient is 0 (as exact_gp).
        let (var, dvar) = if raw > MIN_VARIANCE {
            self.chol.solve_upper_in_place(&mut k);
            (raw, 2.0 * s * ds - 2.0 * dot(&k, &dk))
        } else {
            (MIN_VARIANCE, 0.0)
        };
        Ok(MeanVarGrad {
            mean,
            var,
            dmean: vec![dmean],
            dvar: vec![dvar],
        })
    }

    fn noise_variance(&self) -> f64 {
        self.noise
    }

    fn diagnostics(&self) -> Diagnostics {
        let mut d = Diagnostics::new();
        d.insert("bump_gp.n".into(), self.len() as f64);
        d.insert("bump_gp.jitter".into(), self.chol.jitter());
        d.insert("bump_gp.noise".into(), self.noise);
        d
    }

    fn fantasize(&self) -> Option<&dyn Fantasize> {
        Some(self)
    }
}

impl Fantasize for BumpScaledGpPosterior {
    /// [`BumpScaledGpPosterior::condition_one`] for each point in turn.
    fn condition(&self, xs: &[f64], ys: &[f64]) -> Result<Box<dyn Posterior>> {
        if xs.len() != ys.len() || xs.is_empty() {
            return Err(Error::invalid(format!(
                "bump_scaled_gp condition: {} points for {} values",
                xs.len(),
                ys.len()
            )));
        }
        let mut post = self.condition_one(xs[0], ys[0])?;
        for (&x, &y) in xs.iter().zip(ys).skip(1) {
            post = post.condition_one(x, y)?;
        }
        Ok(Box::new(post))
    }
}

/// The `bump_scaled_gp` model: fixed hyperparameters, so fitting is conditioning.
#[derive(Debug, Clone)]
pub struct BumpScaledGp {
    kernel: BumpKernel,
    noise: f64,
}

impl BumpScaledGp {
    /// The model with the given kernel and observation-noise variance (≥ 0).
    pub fn new(kernel: BumpKernel, noise: f64) -> Result<Self> {
        check_noise(noise)?;
        Ok(BumpScaledGp { kernel, noise })
    }

    /// The concrete posterior given `data`.
    pub fn posterior(&self, data: TrainingData<'_>) -> Result<BumpScaledGpPosterior> {
        BumpScaledGpPosterior::new(self.kernel, self.noise, data)
    }
}

impl Model for BumpScaledGp {
    fn fit(&mut self, data: TrainingData<'_>, _seed: u64) -> Result<Box<dyn Posterior>> {
        Ok(Box::new(self.posterior(data)?))
    }

    cabo_core::stateless_checkpoint!("bump_scaled_gp");
}

fn default_noise() -> f64 {
    DEFAULT_FIXED_NOISE
}

/// Spec of [`BumpScaledGp`] (`model: { type: bump_scaled_gp }`): the prior parameters of
/// [`BumpPriorSampleSpec`], with its defaults, plus a fixed noise variance.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BumpScaledGpSpec {
    /// Native domain; default `[-500, 500]`.
    #[serde(default = "default_bounds")]
    pub bounds: [f64; 2],
    /// Matérn-5/2 lengthscale in native units; default 1.
    #[serde(default = "one")]
    pub lengthscale: f64,
    /// Bump centre in native units; default 0.
    #[serde(default)]
    pub center: f64,
    /// Bump width in native units; default 1.
    #[serde(default = "one")]
    pub width: f64,
    /// Prior standard deviation far from the bump; default 0.1.
    #[serde(default = "tenth")]
    pub std_low: f64,
    /// Prior standard deviation at the bump's centre; default 1.
    #[serde(default = "one")]
    pub std_high: f64,
    /// Fixed observation-noise variance; default 1e-6.
    #[serde(default = "default_noise")]
    pub noise: f64,
    /// Which quantity the bump raises from low to high: `std` (default) or `variance` (the
    /// authors' `VariableAmplitudeKernel`).
    #[serde(default, skip_serializing_if = "BumpProfile::is_std")]
    pub profile: BumpProfile,
}

impl BumpScaledGpSpec {
    /// The true prior of a `bump_prior_sample` problem, with noise variance `noise`.
    pub fn of_problem(problem: &BumpPriorSampleSpec, noise: f64) -> Self {
        BumpScaledGpSpec {
            bounds: problem.bounds,
            lengthscale: problem.lengthscale,
            center: problem.center,
            width: problem.width,
            std_low: problem.std_low,
            std_high: problem.std_high,
            noise,
            profile: BumpProfile::Std,
        }
    }

    /// The model, checking every parameter (errors name the key).
    pub fn model(&self) -> Result<BumpScaledGp> {
        let kernel = BumpKernel::from_parameters(
            self.bounds,
            self.lengthscale,
            self.center,
            self.width,
            [self.std_low, self.std_high],
        )
        .map(|k| k.with_profile(self.profile));
        kernel
            .and_then(|k| BumpScaledGp::new(k, self.noise))
            .map_err(|e| e.at("bump_scaled_gp"))
    }
}

#[cabo_core::plugin(
    name = "bump_scaled_gp",
    summary = "Exact GP under the true non-stationary prior of bump_prior_sample (Matérn-5/2 scaled by a bump std), fixed hyperparameters, 1-D",
    paper = "seed 000 §3.3 Fig. 2, App. A.2 Fig. 8",
    example = "{ type: bump_scaled_gp, std_low: 0.1, std_high: 1.0, noise: 1.0e-6 }"
)]
impl ModelSpec for BumpScaledGpSpec {
    fn validate(&self, dim: usize) -> Result<()> {
        if dim != 1 {
            return Err(Error::invalid(format!(
                "bump_scaled_gp: the kernel is one-dimensional, the problem has dimension {dim}"
            )));
        }
        self.model().map(|_| ())
    }

    fn build(&self, ctx: &BuildContext<'_>) -> Result<Box<dyn Model>> {
        self.validate(ctx.problem.dim)?;
        Ok(Box::new(self.model()?))
    }

    /// Fantasies only: covariances between prepared points and sample paths are not
    /// implemented for the bump-scaled kernel.
    fn capabilities(&self) -> Capabilities {
        Capabilities::NONE.with(Capability::Fantasize)
    }
}
