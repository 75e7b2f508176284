//! [`ExactGp`]: configuration, hyperparameter fitting (fixed or MAP) and the plain-Rust API
//! for fitting outside a run.
//!
//! MAP fitting maximises `log p(y | θ) + log p(θ)` over log-hyperparameters with
//! multi-start L-BFGS (analytic gradients,
//! `∂ log p(y|θ)/∂θ = ½ tr((ααᵀ − K⁻¹) ∂K/∂θ)`), warm-started from the previous fit. Priors
//! are densities over the hyperparameter *values*, as in GPyTorch (no log-Jacobian term).
//! Which hyperparameters are free, their priors, bounds and starts, and the multi-start
//! minimisation are a [`HyperparameterSpace`], shared with other GP-type models (the
//! random-feature GP); only the likelihood here is the exact GP's.

use crate::kernel::{Kernel, KernelKind};
use crate::posterior::{GpPosterior, OutputTransform, check_data};
use cabo_core::{Error, Model, PluginState, Posterior, Result, Rng, TrainingData};
use cabo_linalg::dot;
use cabo_linalg::gram::{fill_rows, gradient_rows};
use cabo_linalg::{Cholesky, join_if_large};
use serde::{Deserialize, Serialize};

/// Lengthscale as written in a spec: one value for every dimension, or one per dimension.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Lengthscale {
    /// The same lengthscale in every dimension.
    Scalar(f64),
    /// One lengthscale per dimension (length must equal the problem dimension).
    PerDim(Vec<f64>),
}

impl Lengthscale {
    /// The per-dimension vector for dimension `dim`, or an error naming the mismatch.
    pub fn resolve(&self, dim: usize) -> Result<Vec<f64>> {
        let v = match self {
            Lengthscale::Scalar(l) => vec![*l; dim],
            Lengthscale::PerDim(v) => {
                if v.len() != dim {
                    return Err(Error::invalid(format!(
                        "kernel.lengthscale has {} entries but the problem has dimension {dim}",
                        v.len()
                    )));
                }
                v.clone()
            }
        };
        if let Some(l) = v.iter().find(|l| !(l.is_finite() && **l > 0.0)) {
            return Err(Error::invalid(format!(
                "kernel.lengthscale: {l} must be finite and > 0"
            )));
        }
        Ok(v)
    }
}

/// The kernel part of a GP spec: `{ type: matern52, lengthscale: 0.1, outputscale: 1.0 }`.
/// A hyperparameter left out is fitted (with `fit: map`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KernelConfig {
    /// `rbf`, `matern12`, `matern32` or `matern52`.
    #[serde(rename = "type")]
    pub kind: KernelKind,
    /// Fixed lengthscale(s); fitted (ARD) when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lengthscale: Option<Lengthscale>,
    /// Fixed outputscale; when absent it is fitted, except under the `botorch` prior, whose
    /// model (BoTorch ≥ 0.12's `SingleTaskGP`) has no outputscale and so fixes it at 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outputscale: Option<f64>,
}

/// Bounds of a fitted noise variance.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoiseBounds {
    /// Smallest noise variance allowed (> 0).
    pub min: f64,
    /// Largest noise variance allowed (≥ min).
    pub max: f64,
}

/// Observation-noise variance (in model units): a fixed value or fitted within bounds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Noise {
    /// A fixed variance (≥ 0).
    Fixed(f64),
    /// Fitted within `[min, max]` (with `fit: map`).
    Fitted(NoiseBounds),
}

/// How hyperparameters are chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FitMode {
    /// Use the given values (every hyperparameter must be given, except the mean (0) and
    /// the outputscale (1)).
    Fixed,
    /// Maximum a posteriori: missing hyperparameters are fitted.
    #[default]
    Map,
}

/// Hyperparameter priors for `fit: map`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Prior {
    /// Gamma(3, 6) on lengthscales, Gamma(2, 0.15) on the outputscale and Gamma(1.1, 0.05)
    /// on the noise (rate parametrisation): BoTorch's defaults before 0.12, which the
    /// papers' reference code used.
    #[default]
    Gamma,
    /// BoTorch ≥ 0.12: LogNormal(√2 + ½ ln d, √3) on lengthscales and LogNormal(−4, 1) on the
    /// noise; no outputscale prior (and the outputscale is 1 unless given).
    Botorch,
    /// No prior: maximum marginal likelihood.
    None,
}

/// Defaults of the MAP-fit keys shared by every model that takes [`GpConfig`]'s keys (the
/// exact and the random-feature GP), written once so that the two models' specs cannot drift.
pub mod fit_defaults {
    /// L-BFGS starts of a MAP fit when a spec gives none.
    pub const RESTARTS: usize = 1;
    /// Iteration cap of each L-BFGS run when a spec gives none.
    pub const MAX_ITERS: usize = 200;

    /// Serde default of `restarts`.
    pub fn restarts() -> usize {
        RESTARTS
    }
    /// Serde default of `max_iters`.
    pub fn max_iters() -> usize {
        MAX_ITERS
    }
    /// Whether `restarts` is its default (not written back out).
    pub fn is_restarts(v: &usize) -> bool {
        *v == RESTARTS
    }
    /// Whether `max_iters` is its default (not written back out).
    pub fn is_max_iters(v: &usize) -> bool {
        *v == MAX_ITERS
    }
    /// Whether a flag is off (its default; not written back out).
    pub fn is_false(b: &bool) -> bool {
        !*b
    }
}

/// Everything that defines an [`ExactGp`]; also the body of the `exact_gp` model spec and the
/// `log_gp` cost-model spec.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpConfig {
    /// Kernel and its (optionally fixed) hyperparameters.
    pub kernel: KernelConfig,
    /// Noise variance, fixed or `{ min, max }`. Default: fixed 1e-6 with `fit: fixed`,
    /// fitted in `[1e-6, 10]` with `fit: map`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise: Option<Noise>,
    /// Constant prior mean (model units); fitted when absent with `fit: map`, 0 with
    /// `fit: fixed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean: Option<f64>,
    /// `fixed` or `map` (default).
    #[serde(default)]
    pub fit: FitMode,
    /// Priors for `map`: `gamma` (default), `botorch` or `none`.
    #[serde(default)]
    pub prior: Prior,
    /// Standardise y before fitting (like BoTorch's `Standardize`); posteriors are reported
    /// back in y units either way.
    #[serde(default, skip_serializing_if = "fit_defaults::is_false")]
    pub standardize: bool,
    /// L-BFGS starts for `map`: the previous fit (or the default start), then random
    /// perturbations of the default start.
    #[serde(
        default = "fit_defaults::restarts",
        skip_serializing_if = "fit_defaults::is_restarts"
    )]
    pub restarts: usize,
    /// Iteration cap of each L-BFGS run.
    #[serde(
        default = "fit_defaults::max_iters",
        skip_serializing_if = "fit_defaults::is_max_iters"
    )]
    pub max_iters: usize,
}

/// Default noise bounds of `fit: map` when `noise` is not given.
pub const DEFAULT_NOISE_BOUNDS: NoiseBounds = NoiseBounds {
    min: 1e-6,
    max: 10.0,
};
/// Default fixed noise of `fit: fixed` when `noise` is not given.
pub const DEFAULT_FIXED_NOISE: f64 = 1e-6;
/// Box for fitted lengthscales (inputs live in the unit cube).
pub const LENGTHSCALE_BOUNDS: (f64, f64) = (5e-3, 1e2);
/// Box for a fitted outputscale (model units).
pub const OUTPUTSCALE_BOUNDS: (f64, f64) = (1e-6, 1e6);

impl GpConfig {
    /// A fixed-hyperparameter configuration (no fitting, no standardisation).
    pub fn fixed(kind: KernelKind, lengthscale: Lengthscale, outputscale: f64, noise: f64) -> Self {
        GpConfig {
            kernel: KernelConfig {
                kind,
                lengthscale: Some(lengthscale),
                outputscale: Some(outputscale),
            },
            noise: Some(Noise::Fixed(noise)),
            mean: None,
            fit: FitMode::Fixed,
            prior: Prior::Gamma,
            standardize: false,
            restarts: fit_defaults::RESTARTS,
            max_iters: fit_defaults::MAX_ITERS,
        }
    }

    /// A MAP configuration fitting every hyperparameter under `prior`.
    pub fn map(kind: KernelKind, prior: Prior, standardize: bool) -> Self {
        GpConfig {
            kernel: KernelConfig {
                kind,
                lengthscale: None,
                outputscale: None,
            },
            noise: None,
            mean: None,
            fit: FitMode::Map,
            prior,
            standardize,
            restarts: fit_defaults::RESTARTS,
            max_iters: fit_defaults::MAX_ITERS,
        }
    }

    /// Checks the configuration, and with `dim` also that a lengthscale vector fits it.
    pub fn validate(&self, dim: Option<usize>) -> Result<()> {
        if let (Some(l), Some(d)) = (&self.kernel.lengthscale, dim) {
            l.resolve(d)?;
        } else if let Some(l) = &self.kernel.lengthscale {
            l.resolve(match l {
                Lengthscale::Scalar(_) => 1,
                Lengthscale::PerDim(v) => v.len(),
            })?;
        }
        if let Some(s) = self.kernel.outputscale
            && !(s.is_finite() && s > 0.0)
        {
            return Err(Error::invalid(format!(
                "kernel.outputscale = {s} must be finite and > 0"
            )));
        }
        if let Some(m) = self.mean
            && !m.is_finite()
        {
            return Err(Error::invalid("mean must be finite"));
        }
        match self.noise {
            Some(Noise::Fixed(v)) if !(v.is_finite() && v >= 0.0) => {
                return Err(Error::invalid(format!(
                    "noise = {v} must be finite and ≥ 0"
                )));
            }
            Some(Noise::Fitted(b)) => {
                if !(b.min.is_finite() && b.max.is_finite() && b.min > 0.0 && b.min <= b.max) {
                    return Err(Error::invalid(format!(
                        "noise: need 0 < min ≤ max < ∞, got min = {}, max = {}",
                        b.min, b.max
                    )));
                }
                if self.fit == FitMode::Fixed {
                    return Err(Error::invalid(
                        "noise: bounds { min, max } need `fit: map`; give a number with `fit: fixed`",
                    ));
                }
            }
            _ => {}
        }
        if self.fit == FitMode::Fixed && self.kernel.lengthscale.is_none() {
            return Err(Error::invalid(
                "kernel.lengthscale is required with `fit: fixed`",
            ));
        }
        if self.restarts == 0 {
            return Err(Error::invalid("restarts must be ≥ 1"));
        }
        if self.max_iters == 0 {
            return Err(Error::invalid("max_iters must be ≥ 1"));
        }
        Ok(())
    }
}

/// Hyperparameters in model units.
#[derive(Debug, Clone, PartialEq)]
pub struct Hyperparameters {
    /// One lengthscale per dimension.
    pub lengthscales: Vec<f64>,
    /// Prior variance.
    pub outputscale: f64,
    /// Noise variance.
    pub noise: f64,
    /// Constant mean.
    pub mean: f64,
}

/// An exact GP with a constant mean and Gaussian noise. Stateful: remembers its last fitted
/// hyperparameters to warm-start the next MAP fit.
#[derive(Debug, Clone)]
pub struct ExactGp {
    config: GpConfig,
    warm: Option<(usize, Vec<f64>)>,
    last: Option<Hyperparameters>,
    /// The last posterior when its hyperparameters were not fitted: the next fit extends
    /// its factor ([`GpPosterior::grown`]). Not checkpointed: a resumed run factorises
    /// once, with the same bits.
    previous: Option<GpPosterior>,
}

impl ExactGp {
    /// A model from its configuration (checked; the dimension is checked at fit time).
    pub fn new(config: GpConfig) -> Result<Self> {
        config.validate(None)?;
        Ok(ExactGp {
            config,
            warm: None,
            last: None,
            previous: None,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &GpConfig {
        &self.config
    }

    /// Hyperparameters of the last fit (model units).
    pub fn hyperparameters(&self) -> Option<&Hyperparameters> {
        self.last.as_ref()
    }

    /// Fits to `data` and returns the concrete posterior. `seed` drives the random extra
    /// starts of a MAP fit. Empty data give the prior (fixed values, or the default starting
    /// values of fitted hyperparameters). Non-finite inputs or targets are an error naming
    /// the index; duplicate inputs are fine (the noise variance, and if that is too small
    /// the recorded jitter, keeps the covariance positive definite).
    pub fn fit(&mut self, data: TrainingData<'_>, seed: u64) -> Result<GpPosterior> {
        check_data(&data)?;
        self.config.validate(Some(data.dim))?;
        let transform = if self.config.standardize {
            OutputTransform::standardize(data.y)
        } else {
            OutputTransform::IDENTITY
        };
        let y_model: Vec<f64> = data
            .y
            .iter()
            .map(|v| (v - transform.shift) / transform.scale)
            .collect();
        let problem = FitProblem::new(&self.config, data.dim, data.x, &y_model)?;
        let (theta, diag) = if self.config.fit == FitMode::Map
            && !problem.space.is_empty()
            && !data.is_empty()
        {
            let warm = match &self.warm {
                Some((d, t)) if *d == data.dim && t.len() == problem.space.len() => Some(t.clone()),
                _ => None,
            };
            let mut ws = Workspace::new(data.len(), data.dim);
            let best = problem.space.minimise(
                |t: &[f64], g: &mut [f64]| problem.eval(t, g, &mut ws),
                warm,
                &self.config,
                seed,
            )?;
            (
                best.theta,
                Some((best.value, best.iterations, best.evaluations)),
            )
        } else {
            (problem.space.default_start(), None)
        };
        let hp = problem.space.unpack(&theta);
        let kernel = Kernel::new(
            self.config.kernel.kind,
            hp.lengthscales.clone(),
            hp.outputscale,
        )?;
        // Without fitted hyperparameters consecutive fits share the kernel, and the factor of
        // the last one extends to this one's (bit for bit what a new factorisation gives).
        let grown = (self.previous.as_ref())
            .and_then(|p| p.grown(&kernel, hp.noise, hp.mean, data, transform));
        let mut post = match grown {
            Some(post) => post?,
            None => GpPosterior::new(kernel, hp.noise, hp.mean, data, transform)?,
        };
        self.previous = diag.is_none().then(|| post.clone());
        if let Some((value, iters, evals)) = diag {
            post.set_diagnostic("gp.fit.neg_log_posterior_per_point", value);
            post.set_diagnostic("gp.fit.iterations", iters as f64);
            post.set_diagnostic("gp.fit.evaluations", evals as f64);
            self.warm = Some((data.dim, theta));
        }
        self.last = Some(hp);
        Ok(post)
    }

    /// `−(log p(y|θ) + log p(θ)) / n` and its gradient with respect to the fitted
    /// log-hyperparameters `θ` (layout: ln ℓ₁…ln ℓ_d, ln s, ln σ², mean — each only when
    /// fitted), for y already in model units. Exposed so the gradient can be checked.
    pub fn objective(
        config: &GpConfig,
        data: TrainingData<'_>,
        theta: &[f64],
        grad: &mut [f64],
    ) -> Result<f64> {
        check_data(&data)?;
        let p = FitProblem::new(config, data.dim, data.x, data.y)?;
        if theta.len() != p.space.len() || grad.len() != theta.len() {
            return Err(Error::invalid(format!(
                "objective: expected {} log-hyperparameters",
                p.space.len()
            )));
        }
        let mut ws = Workspace::new(data.len(), data.dim);
        Ok(p.eval(theta, grad, &mut ws))
    }
}

impl Model for ExactGp {
    fn fit(&mut self, data: TrainingData<'_>, seed: u64) -> Result<Box<dyn Posterior>> {
        Ok(Box::new(ExactGp::fit(self, data, seed)?))
    }

    /// The warm start of the next MAP fit.
    fn checkpoint(&self) -> Result<Option<PluginState>> {
        PluginState::encode(&self.warm).map(Some)
    }

    fn restore(&mut self, state: &PluginState) -> Result<()> {
        self.warm = state.decode("exact_gp")?;
        Ok(())
    }
}

/// A (log) prior density over a positive hyperparameter value p, as a function of θ = ln p:
/// returns (log density, d/dθ).
#[derive(Debug, Clone, Copy)]
enum Density {
    Gamma { shape: f64, rate: f64 },
    LogNormal { loc: f64, scale: f64 },
    Flat,
}

impl Density {
    fn eval(self, theta: f64) -> (f64, f64) {
        match self {
            Density::Gamma { shape, rate } => {
                let p = theta.exp();
                (
                    shape * rate.ln() - libm::lgamma(shape) + (shape - 1.0) * theta - rate * p,
                    (shape - 1.0) - rate * p,
                )
            }
            Density::LogNormal { loc, scale } => {
                let z = (theta - loc) / scale;
                (
                    -theta - scale.ln() - cabo_core::normal::LN_SQRT_2PI - 0.5 * z * z,
                    -1.0 - z / scale,
                )
            }
            Density::Flat => (0.0, 0.0),
        }
    }

    /// The mode of the value p (a sensible start), if the density has one.
    fn mode(self) -> Option<f64> {
        match self {
            Density::Gamma { shape, rate } if shape > 1.0 => Some((shape - 1.0) / rate),
            Density::LogNormal { loc, scale } => Some((loc - scale * scale).exp()),
            _ => None,
        }
    }
}

/// Scratch buffers of one objective evaluation, reused across L-BFGS iterations.
struct Workspace {
    /// The inputs divided by the lengthscales, by coordinate (`d × n`), so that distances to
    /// one point run along rows.
    x_cols: Vec<f64>,
    kappa: Vec<f64>,
    dkappa: Vec<f64>,
    gram: Vec<f64>,
    alpha: Vec<f64>,
    resid: Vec<f64>,
    /// `L⁻¹` and the lower triangle of `K⁻¹`, `n × n` each.
    linv: Vec<f64>,
    kinv: Vec<f64>,
}

impl Workspace {
    fn new(n: usize, d: usize) -> Self {
        let packed = n * (n + 1) / 2;
        Workspace {
            x_cols: vec![0.0; n * d],
            kappa: vec![0.0; packed],
            dkappa: vec![0.0; packed],
            gram: vec![0.0; n * n],
            alpha: vec![0.0; n],
            resid: vec![0.0; n],
            linv: vec![0.0; n * n],
            kinv: vec![0.0; n * n],
        }
    }
}

/// Length of the packed lower triangle of the first `rows` rows.
fn packed_len(rows: usize) -> usize {
    rows * (rows + 1) / 2
}

/// The row that splits an `n`-row lower triangle into two halves of (nearly) equal area.
fn balanced_split(n: usize) -> usize {
    ((n as f64) / std::f64::consts::SQRT_2).round() as usize
}

/// The hyperparameters a MAP fit moves, with their priors, bounds and default start: what
/// every GP-type model of cabo shares, whatever its likelihood. θ holds, in this order and
/// each only when fitted, ln ℓ₁…ln ℓ_d, ln s, ln σ² and the constant mean. The exact GP and
/// the random-feature GP fit through it, so a spec's `prior:`, `noise:` bounds, `restarts:`
/// and warm start mean the same for both.
#[derive(Debug, Clone)]
pub struct HyperparameterSpace {
    dim: usize,
    fixed_ls: Option<Vec<f64>>,
    fixed_s: Option<f64>,
    fixed_noise: Option<f64>,
    fixed_mean: Option<f64>,
    ls_prior: Density,
    s_prior: Density,
    noise_prior: Density,
    start: Vec<f64>,
    lower: Vec<f64>,
    upper: Vec<f64>,
}

/// The gradient of a log marginal likelihood with respect to every hyperparameter (the
/// entries of fixed ones are ignored): what a model's likelihood hands to
/// [`HyperparameterSpace::objective`].
#[derive(Debug, Clone, PartialEq)]
pub struct LikelihoodGradient {
    /// ∂/∂ln ℓ_j, one per dimension.
    pub lengthscales: Vec<f64>,
    /// ∂/∂ln s.
    pub outputscale: f64,
    /// ∂/∂ln σ².
    pub noise: f64,
    /// ∂/∂(constant mean).
    pub mean: f64,
}

/// The best start of a multi-start MAP fit ([`HyperparameterSpace::minimise`]).
#[derive(Debug, Clone, PartialEq)]
pub struct MapFit {
    /// The log-hyperparameters θ.
    pub theta: Vec<f64>,
    /// The objective there.
    pub value: f64,
    /// L-BFGS iterations over every start.
    pub iterations: usize,
    /// Objective evaluations over every start.
    pub evaluations: usize,
}

impl HyperparameterSpace {
    /// The space of `config` for inputs of dimension `dim` and targets `y` in model units
    /// (their mean and variance set the default start and the mean's bounds).
    ///
    /// One function because each hyperparameter's settings are decided together: whether
    /// it is fixed (from the config and the fit mode), its prior, and its start and bounds,
    /// pushed in the order θ is laid out (lengthscales, outputscale, noise, mean), which is
    /// the order [`HyperparameterSpace::unpack`] reads θ back in.
    pub fn new(config: &GpConfig, dim: usize, y: &[f64]) -> Result<Self> {
        let map = config.fit == FitMode::Map;
        let fixed_ls = config
            .kernel
            .lengthscale
            .as_ref()
            .map(|l| l.resolve(dim))
            .transpose()?;
        let fixed_s = match (config.kernel.outputscale, map, config.prior) {
            (Some(s), _, _) => Some(s),
            (None, false, _) | (None, true, Prior::Botorch) => Some(1.0),
            (None, true, _) => None,
        };
        let (fixed_noise, noise_bounds) = match (config.noise, map) {
            (Some(Noise::Fixed(v)), _) => (Some(v), DEFAULT_NOISE_BOUNDS),
            (Some(Noise::Fitted(b)), true) => (None, b),
            (Some(Noise::Fitted(_)), false) => {
                return Err(Error::invalid(
                    "noise: bounds { min, max } need `fit: map`; give a number with `fit: fixed`",
                ));
            }
            (None, true) => (None, DEFAULT_NOISE_BOUNDS),
            (None, false) => (Some(DEFAULT_FIXED_NOISE), DEFAULT_NOISE_BOUNDS),
        };
        let n = y.len();
        let y_mean = if n > 0 {
            y.iter().sum::<f64>() / n as f64
        } else {
            0.0
        };
        let y_var = if n > 1 {
            y.iter().map(|v| (v - y_mean).powi(2)).sum::<f64>() / (n - 1) as f64
        } else {
            1.0
        };
        let fixed_mean = match (config.mean, map) {
            (Some(m), _) => Some(m),
            (None, false) => Some(0.0),
            (None, true) => None,
        };
        let (ls_prior, s_prior, noise_prior) = match config.prior {
            Prior::Gamma => (
                Density::Gamma {
                    shape: 3.0,
                    rate: 6.0,
                },
                Density::Gamma {
                    shape: 2.0,
                    rate: 0.15,
                },
                Density::Gamma {
                    shape: 1.1,
                    rate: 0.05,
                },
            ),
            Prior::Botorch => (
                Density::LogNormal {
                    loc: std::f64::consts::SQRT_2 + 0.5 * (dim as f64).ln(),
                    scale: 3f64.sqrt(),
                },
                Density::Flat,
                Density::LogNormal {
                    loc: -4.0,
                    scale: 1.0,
                },
            ),
            Prior::None => (Density::Flat, Density::Flat, Density::Flat),
        };
        let mut p = HyperparameterSpace {
            dim,
            fixed_ls,
            fixed_s,
            fixed_noise,
            fixed_mean,
            ls_prior,
            s_prior,
            noise_prior,
            start: Vec::new(),
            lower: Vec::new(),
            upper: Vec::new(),
        };
        // Default start: prior modes where they exist (inside the box), data scale otherwise.
        let (ll, lu) = (LENGTHSCALE_BOUNDS.0.ln(), LENGTHSCALE_BOUNDS.1.ln());
        if p.fixed_ls.is_none() {
            let l0 = ls_prior.mode().unwrap_or(1.0 / 3.0).ln().clamp(ll, lu);
            for _ in 0..dim {
                p.start.push(l0);
                p.lower.push(ll);
                p.upper.push(lu);
            }
        }
        if p.fixed_s.is_none() {
            let (sl, su) = (OUTPUTSCALE_BOUNDS.0.ln(), OUTPUTSCALE_BOUNDS.1.ln());
            p.start.push(y_var.max(1e-2).ln().clamp(sl, su));
            p.lower.push(sl);
            p.upper.push(su);
        }
        if p.fixed_noise.is_none() {
            let (nl, nu) = (noise_bounds.min.ln(), noise_bounds.max.ln());
            p.start.push((1e-2 * y_var.max(1e-2)).ln().clamp(nl, nu));
            p.lower.push(nl);
            p.upper.push(nu);
        }
        if p.fixed_mean.is_none() {
            let sd = y_var.sqrt();
            let (lo, hi) = y
                .iter()
                .fold((y_mean, y_mean), |(a, b), v| (a.min(*v), b.max(*v)));
            p.start.push(y_mean);
            p.lower.push(lo - 5.0 * sd - 1.0);
            p.upper.push(hi + 5.0 * sd + 1.0);
        }
        Ok(p)
    }

    /// Input dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Number of fitted hyperparameters (the length of θ).
    pub fn len(&self) -> usize {
        self.start.len()
    }

    /// True when every hyperparameter is fixed (nothing to fit).
    pub fn is_empty(&self) -> bool {
        self.start.is_empty()
    }

    /// The default start: prior modes where they exist, the data's scale otherwise.
    pub fn default_start(&self) -> Vec<f64> {
        self.start.clone()
    }

    /// Lower bounds of θ.
    pub fn lower(&self) -> &[f64] {
        &self.lower
    }

    /// Upper bounds of θ.
    pub fn upper(&self) -> &[f64] {
        &self.upper
    }

    /// The hyperparameters at θ (fixed ones at their values).
    pub fn unpack(&self, theta: &[f64]) -> Hyperparameters {
        let mut i = 0;
        let lengthscales = match &self.fixed_ls {
            Some(l) => l.clone(),
            None => {
                i += self.dim;
                theta[..self.dim].iter().map(|t| t.exp()).collect()
            }
        };
        let mut next = |fixed: Option<f64>, log: bool| {
            fixed.unwrap_or_else(|| {
                let v = theta[i];
                i += 1;
                if log { v.exp() } else { v }
            })
        };
        let outputscale = next(self.fixed_s, true);
        let noise = next(self.fixed_noise, true);
        let mean = next(self.fixed_mean, false);
        Hyperparameters {
            lengthscales,
            outputscale,
            noise,
            mean,
        }
    }

    /// The MAP objective `−(log p(y|θ) + log p(θ))/n` from a model's log marginal likelihood
    /// `log_likelihood` at θ and its gradient `g`, writing the objective's gradient in θ
    /// into `grad` (length [`HyperparameterSpace::len`]).
    pub fn objective(
        &self,
        theta: &[f64],
        log_likelihood: f64,
        g: &LikelihoodGradient,
        n: usize,
        grad: &mut [f64],
    ) -> f64 {
        let d = self.dim;
        let mut value = log_likelihood;
        let mut gi = 0;
        if self.fixed_ls.is_none() {
            for j in 0..d {
                let (lp, dlp) = self.ls_prior.eval(theta[j]);
                value += lp;
                grad[j] = g.lengthscales[j] + dlp;
            }
            gi = d;
        }
        if self.fixed_s.is_none() {
            let (lp, dlp) = self.s_prior.eval(theta[gi]);
            value += lp;
            grad[gi] = g.outputscale + dlp;
            gi += 1;
        }
        if self.fixed_noise.is_none() {
            let (lp, dlp) = self.noise_prior.eval(theta[gi]);
            value += lp;
            grad[gi] = g.noise + dlp;
            gi += 1;
        }
        if self.fixed_mean.is_none() {
            grad[gi] = g.mean;
        }
        let scale = -1.0 / n.max(1) as f64;
        for g in grad.iter_mut() {
            *g *= scale;
        }
        value * scale
    }

    /// Multi-start L-BFGS-B of `objective` (value and gradient in θ) over the box: from
    /// `warm` (the previous fit) when given, the default start, and random perturbations of
    /// the default start drawn from `seed`, `config.restarts` starts in all.
    pub fn minimise<F>(
        &self,
        mut objective: F,
        warm: Option<Vec<f64>>,
        config: &GpConfig,
        seed: u64,
    ) -> Result<MapFit>
    where
        F: FnMut(&[f64], &mut [f64]) -> f64 + Send,
    {
        let mut starts = Vec::with_capacity(config.restarts);
        let has_warm = warm.is_some();
        if let Some(w) = warm {
            starts.push(w);
        }
        if starts.len() < config.restarts || !has_warm {
            starts.push(self.default_start());
        }
        let mut rng = Rng::new(seed);
        while starts.len() < config.restarts {
            // Perturb the default start by a standard normal in log space (lengthscales,
            // outputscale, noise); the mean starts at the data mean.
            let mut s = self.default_start();
            let n_log = s.len() - usize::from(self.fixed_mean.is_none());
            for (i, v) in s.iter_mut().enumerate().take(n_log) {
                *v = (*v + rng.normal()).clamp(self.lower[i], self.upper[i]);
            }
            starts.push(s);
        }
        starts.truncate(config.restarts.max(1));
        // SciPy's L-BFGS-B tolerances, which BoTorch's `fit_gpytorch_mll` uses.
        let opts =
            cabo_optim::lbfgsb::LbfgsbOptions::new(config.max_iters, cabo_optim::Tolerances::SCIPY);
        let mut best: Option<(Vec<f64>, f64)> = None;
        let (mut iters, mut evals) = (0, 0);
        // For large n the objective splits its rows between two tasks several times per
        // evaluation. Run from a thread outside the pool, each split would wait for a pool
        // thread to wake up; run on a pool thread, an idle partner steals the second half and
        // a sleeping one costs nothing (the caller does both halves itself).
        rayon::scope(|_| {
            for s in starts {
                let m = cabo_optim::lbfgsb::minimize(
                    &mut objective,
                    &s,
                    &self.lower,
                    &self.upper,
                    &opts,
                );
                iters += m.iterations;
                evals += m.evaluations;
                if m.value.is_finite() && best.as_ref().is_none_or(|b| m.value < b.1) {
                    best = Some((m.x, m.value));
                }
            }
        });
        let (theta, value) = best.ok_or_else(|| {
            Error::numerical(
                "GP fit: the marginal likelihood was not finite at any start (check the data)",
            )
        })?;
        Ok(MapFit {
            theta,
            value,
            iterations: iters,
            evaluations: evals,
        })
    }
}

/// The exact GP's MAP objective for one data set: the hyperparameter space and the data.
struct FitProblem<'a> {
    kind: KernelKind,
    x: &'a [f64],
    y: &'a [f64],
    space: HyperparameterSpace,
}

impl<'a> FitProblem<'a> {
    fn new(config: &GpConfig, dim: usize, x: &'a [f64], y: &'a [f64]) -> Result<Self> {
        Ok(FitProblem {
            kind: config.kernel.kind,
            x,
            y,
            space: HyperparameterSpace::new(config, dim, y)?,
        })
    }

    /// `−(log marginal likelihood + log prior)/n` and its gradient in θ.
    ///
    /// One function because its stages hand the workspace on in sequence within one
    /// evaluation: the kernel rows fill `kappa`, `dkappa` and the Gram matrix, the Cholesky
    /// factor gives `alpha` and `K⁻¹`, and the gradient rows read all of them back, with both
    /// parallel passes splitting the rows at the same `split`.
    fn eval(&self, theta: &[f64], grad: &mut [f64], ws: &mut Workspace) -> f64 {
        let hp = self.space.unpack(theta);
        let n = self.y.len();
        let d = self.space.dim;
        let inv: Vec<f64> = hp.lengthscales.iter().map(|l| 1.0 / l).collect();
        for (j, xj) in self.x.chunks_exact(d).enumerate() {
            for (l, (a, il)) in xj.iter().zip(&inv).enumerate() {
                ws.x_cols[l * n + j] = a * il;
            }
        }
        // The two row blocks cover equal areas of the lower triangle and run in parallel
        // for large n; the arithmetic is the same either way.
        let split = balanced_split(n);
        {
            let (ka, kb) = ws.kappa.split_at_mut(packed_len(split));
            let (da, db) = ws.dkappa.split_at_mut(packed_len(split));
            let (ga, gb) = ws.gram.split_at_mut(split * n);
            let xs = &ws.x_cols;
            let fill = |rows, kappa, dkappa, gram| {
                fill_rows(
                    self.kind.shape(),
                    rows,
                    xs,
                    [hp.outputscale, hp.noise],
                    kappa,
                    dkappa,
                    gram,
                )
            };
            join_if_large(
                n,
                || fill(0..split, ka, da, ga),
                || fill(split..n, kb, db, gb),
            );
        }
        let chol = match Cholesky::factor(&ws.gram, n) {
            Ok(c) => c,
            Err(_) => {
                grad.fill(0.0);
                return f64::INFINITY;
            }
        };
        for ((a, r), y) in ws.alpha.iter_mut().zip(ws.resid.iter_mut()).zip(self.y) {
            *a = y - hp.mean;
            *r = *a;
        }
        chol.solve_in_place(&mut ws.alpha);
        let fit_term = dot(&ws.resid, &ws.alpha);
        let value =
            -0.5 * fit_term - 0.5 * chol.log_det() - n as f64 * cabo_core::normal::LN_SQRT_2PI;
        // W = ααᵀ − K⁻¹ (lower triangle is all that is read).
        chol.inverse_lower_into(&mut ws.linv, &mut ws.kinv);
        let (ka, kb) = ws.kappa.split_at(packed_len(split));
        let (da, db) = ws.dkappa.split_at(packed_len(split));
        let grad_rows = |rows, kappa, dkappa| {
            gradient_rows(
                rows,
                &ws.x_cols,
                &ws.alpha,
                &ws.kinv,
                [hp.outputscale, hp.noise],
                kappa,
                dkappa,
            )
        };
        let (lo, hi) = join_if_large(
            n,
            || grad_rows(0..split, ka, da),
            || grad_rows(split..n, kb, db),
        );
        let g_ls: Vec<f64> = lo.ls.iter().zip(&hi.ls).map(|(a, b)| a + b).collect();
        let g_s = lo.outputscale + hi.outputscale;
        let g_noise = lo.noise + hi.noise;
        let g = LikelihoodGradient {
            lengthscales: g_ls,
            outputscale: g_s,
            noise: g_noise,
            mean: ws.alpha.iter().sum::<f64>(),
        };
        self.space.objective(theta, value, &g, n, grad)
    }
}
