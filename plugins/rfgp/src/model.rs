//! [`RandomFeatureGp`]: configuration, the `random_feature_gp` model spec, and fitting
//! (fixed or MAP hyperparameters) through the exact GP's [`HyperparameterSpace`].

use crate::features::UnitBasis;
use crate::likelihood::{Form, log_marginal_likelihood};
use crate::posterior::RfGpPosterior;
use cabo_core::{
    BuildContext, Capabilities, Capability, Error, Model, ModelSpec, PluginState, Posterior,
    Result, TrainingData, derive_seed,
};
use cabo_gp::gp::{DEFAULT_FIXED_NOISE, HyperparameterSpace, fit_defaults};
use cabo_gp::{
    FitMode, GpConfig, Hyperparameters, Kernel, KernelConfig, Noise, OutputTransform, Prior,
};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Number of random features when a spec gives none. The seeds draw their sample paths on
/// 1024 features (seed 002, App. C.2), so draws of this model are directly comparable to
/// the exact GP's there; the kernel it approximates is then off by about `s/√1024 ≈ 3%` of
/// the outputscale per entry, and one prediction costs O(m²) ≈ 10⁶, what the exact GP pays
/// at n ≈ 1000 — beyond that the random-feature GP is the cheaper one, which is what it is
/// for.
pub const DEFAULT_FEATURES: usize = 1024;

/// Largest number of features a spec may ask for: the m × m precision factor and the fit's
/// inverse then take about 1 GB.
pub const MAX_FEATURES: usize = 8192;

fn default_features() -> usize {
    DEFAULT_FEATURES
}
fn is_default_features(v: &usize) -> bool {
    *v == DEFAULT_FEATURES
}
/// Everything that defines a [`RandomFeatureGp`]: the keys of `exact_gp` (same meaning,
/// same defaults) plus `features`. The body of the `random_feature_gp` model spec.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RfGpConfig {
    /// Kernel whose random Fourier features are used, and its (optionally fixed)
    /// hyperparameters.
    pub kernel: KernelConfig,
    /// Number of random features m (default [`DEFAULT_FEATURES`]).
    #[serde(
        default = "default_features",
        skip_serializing_if = "is_default_features"
    )]
    pub features: usize,
    /// Noise variance, fixed (> 0: the weight posterior `σ²(ΦᵀΦ + σ²I)⁻¹` needs it) or
    /// `{ min, max }`; defaults as for `exact_gp`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise: Option<Noise>,
    /// Constant prior mean (model units); fitted when absent with `fit: map`, 0 with
    /// `fit: fixed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean: Option<f64>,
    /// `fixed` or `map` (default).
    #[serde(default)]
    pub fit: FitMode,
    /// Priors for `map`: `gamma` (default), `botorch` or `none`, as for `exact_gp`.
    #[serde(default)]
    pub prior: Prior,
    /// Standardise y before fitting; posteriors are reported in y units either way.
    #[serde(default, skip_serializing_if = "fit_defaults::is_false")]
    pub standardize: bool,
    /// L-BFGS starts for `map` (the previous fit or the default start, then random
    /// perturbations of the default start).
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

impl RfGpConfig {
    /// A MAP configuration with `features` features fitting every hyperparameter.
    pub fn map(
        kernel: cabo_gp::KernelKind,
        prior: Prior,
        standardize: bool,
        features: usize,
    ) -> Self {
        Self::from_gp(&GpConfig::map(kernel, prior, standardize), features)
    }

    /// The configuration of `gp` with `features` features.
    pub fn from_gp(gp: &GpConfig, features: usize) -> Self {
        RfGpConfig {
            kernel: gp.kernel.clone(),
            features,
            noise: gp.noise,
            mean: gp.mean,
            fit: gp.fit,
            prior: gp.prior,
            standardize: gp.standardize,
            restarts: gp.restarts,
            max_iters: gp.max_iters,
        }
    }

    /// The exact GP's configuration with the same keys: its hyperparameter space, priors
    /// and validation are this model's.
    pub fn gp_config(&self) -> GpConfig {
        GpConfig {
            kernel: self.kernel.clone(),
            noise: self.noise,
            mean: self.mean,
            fit: self.fit,
            prior: self.prior,
            standardize: self.standardize,
            restarts: self.restarts,
            max_iters: self.max_iters,
        }
    }

    /// Checks the configuration, and with `dim` also that a lengthscale vector fits it.
    pub fn validate(&self, dim: Option<usize>) -> Result<()> {
        self.gp_config().validate(dim)?;
        if self.features == 0 || self.features > MAX_FEATURES {
            return Err(Error::invalid(format!(
                "features = {} must be between 1 and {MAX_FEATURES}",
                self.features
            )));
        }
        let fixed_noise = match (self.noise, self.fit) {
            (Some(Noise::Fixed(v)), _) => Some(v),
            (None, FitMode::Fixed) => Some(DEFAULT_FIXED_NOISE),
            _ => None,
        };
        if fixed_noise == Some(0.0) {
            return Err(Error::invalid(
                "noise = 0: the random-feature GP needs a positive noise variance (its weight \
                 posterior is σ²(ΦᵀΦ + σ²I)⁻¹); give a small one, e.g. 1.0e-6",
            ));
        }
        Ok(())
    }
}

/// A GP approximated by Bayesian linear regression on m random Fourier features of its
/// kernel. Its basis is drawn once, from a seed, and kept; the hyperparameters are fixed or
/// fitted by MAP on the exact marginal likelihood of the regression. Stateful like the
/// exact GP: it remembers its last fit to warm-start the next.
#[derive(Debug, Clone)]
pub struct RandomFeatureGp {
    config: RfGpConfig,
    basis: Arc<UnitBasis>,
    warm: Option<Vec<f64>>,
    last: Option<Hyperparameters>,
}

impl RandomFeatureGp {
    /// A model for inputs of dimension `dim` whose basis is drawn from `seed`.
    pub fn new(config: RfGpConfig, dim: usize, seed: u64) -> Result<Self> {
        config.validate(Some(dim))?;
        let basis = UnitBasis::draw(config.kernel.kind, dim, config.features, seed)?;
        Ok(RandomFeatureGp {
            config,
            basis: Arc::new(basis),
            warm: None,
            last: None,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &RfGpConfig {
        &self.config
    }

    /// The basis drawn for this model.
    pub fn basis(&self) -> &UnitBasis {
        &self.basis
    }

    /// Hyperparameters of the last fit (model units).
    pub fn hyperparameters(&self) -> Option<&Hyperparameters> {
        self.last.as_ref()
    }

    /// Fits to `data` and returns the concrete posterior; `seed` drives the random extra
    /// starts of a MAP fit. Empty data give the prior (fixed values, or the default
    /// starting values of fitted hyperparameters).
    pub fn fit(&mut self, data: TrainingData<'_>, seed: u64) -> Result<RfGpPosterior> {
        crate::check_data(&data)?;
        if data.dim != self.basis.dim() {
            return Err(Error::invalid(format!(
                "random_feature_gp: data have dimension {}, the model was built for {}",
                data.dim,
                self.basis.dim()
            )));
        }
        let gp = self.config.gp_config();
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
        let space = HyperparameterSpace::new(&gp, data.dim, &y_model)?;
        let (theta, diag) = if gp.fit == FitMode::Map && !space.is_empty() && !data.is_empty() {
            let warm = self.warm.clone().filter(|t| t.len() == space.len());
            let form = Form::cheaper(data.len(), self.basis.len());
            let objective = |t: &[f64], g: &mut [f64]| {
                map_objective(&self.basis, &space, data.x, &y_model, t, g, form)
            };
            let best = space.minimise(objective, warm, &gp, seed)?;
            (
                best.theta,
                Some((best.value, best.iterations, best.evaluations)),
            )
        } else {
            (space.default_start(), None)
        };
        let hp = space.unpack(&theta);
        let features = self.basis.features(Kernel::new(
            self.config.kernel.kind,
            hp.lengthscales.clone(),
            hp.outputscale,
        )?)?;
        let mut post = RfGpPosterior::new(Arc::new(features), hp.noise, hp.mean, data, transform)?;
        if let Some((value, iters, evals)) = diag {
            post.set_diagnostic("gp.fit.neg_log_posterior_per_point", value);
            post.set_diagnostic("gp.fit.iterations", iters as f64);
            post.set_diagnostic("gp.fit.evaluations", evals as f64);
            self.warm = Some(theta);
        }
        self.last = Some(hp);
        Ok(post)
    }

    /// `−(log p(y|θ) + log p(θ)) / n` and its gradient in the fitted log-hyperparameters θ
    /// (the exact GP's layout: ln ℓ₁…ln ℓ_d, ln s, ln σ², mean — each only when fitted), for
    /// y already in model units, through the likelihood's `form`. Exposed so the gradient
    /// and the two forms can be checked.
    pub fn objective(
        &self,
        data: TrainingData<'_>,
        theta: &[f64],
        grad: &mut [f64],
        form: Form,
    ) -> Result<f64> {
        crate::check_data(&data)?;
        let space = HyperparameterSpace::new(&self.config.gp_config(), data.dim, data.y)?;
        if theta.len() != space.len() || grad.len() != theta.len() {
            return Err(Error::invalid(format!(
                "objective: expected {} log-hyperparameters",
                space.len()
            )));
        }
        Ok(map_objective(
            &self.basis,
            &space,
            data.x,
            data.y,
            theta,
            grad,
            form,
        ))
    }
}

/// The MAP objective at θ: the regression's log marginal likelihood on the basis scaled by
/// θ's lengthscales and outputscale, plus the priors, per point. Infinite where the
/// covariance cannot be factorised or the hyperparameters are out of range, so L-BFGS
/// backtracks, as for the exact GP.
fn map_objective(
    basis: &UnitBasis,
    space: &HyperparameterSpace,
    x: &[f64],
    y: &[f64],
    theta: &[f64],
    grad: &mut [f64],
    form: Form,
) -> f64 {
    let hp = space.unpack(theta);
    let lik = Kernel::new(basis.kind(), hp.lengthscales.clone(), hp.outputscale)
        .and_then(|k| basis.features(k))
        .and_then(|f| log_marginal_likelihood(&f, hp.noise, hp.mean, x, y, form));
    match lik {
        Ok(Some((value, g))) => space.objective(theta, value, &g, y.len(), grad),
        _ => {
            grad.fill(0.0);
            f64::INFINITY
        }
    }
}

impl Model for RandomFeatureGp {
    fn fit(&mut self, data: TrainingData<'_>, seed: u64) -> Result<Box<dyn Posterior>> {
        Ok(Box::new(RandomFeatureGp::fit(self, data, seed)?))
    }

    /// The warm start of the next MAP fit (the basis is redrawn from the same seed).
    fn checkpoint(&self) -> Result<Option<PluginState>> {
        PluginState::encode(&self.warm).map(Some)
    }

    fn restore(&mut self, state: &PluginState) -> Result<()> {
        self.warm = state.decode("random_feature_gp")?;
        Ok(())
    }
}

#[cabo_core::plugin(
    name = "random_feature_gp",
    summary = "Random-feature GP: Bayesian linear regression on m random Fourier features of the exact GP's kernels (default m = 1024); fixed or MAP hyperparameters; O(n·m² + m³) fits, O(m²) predictions",
    paper = "standard (Rahimi & Recht 2007; Lázaro-Gredilla et al. 2010)",
    example = "{ type: random_feature_gp, kernel: { type: matern52 }, features: 1024, fit: map, prior: gamma, noise: { min: 1.0e-6, max: 1.0e-2 }, standardize: true }"
)]
impl ModelSpec for RfGpConfig {
    fn validate(&self, dim: usize) -> Result<()> {
        RfGpConfig::validate(self, Some(dim))
    }

    /// The basis is drawn from a seed derived from the run's seed, so a run is reproducible
    /// and replications and policies each get their own basis.
    fn build(&self, ctx: &BuildContext<'_>) -> Result<Box<dyn Model>> {
        let seed = derive_seed(&[&ctx.seed, &"random_feature_gp", &"basis"]);
        Ok(Box::new(RandomFeatureGp::new(
            self.clone(),
            ctx.problem.dim,
            seed,
        )?))
    }

    /// Every required capability, each in weight space: covariances `φᵀΣφ'`, fantasies by
    /// rank-one updates of the weight precision, exact sample paths and draws on its own
    /// Fourier basis. Neither accelerator (`FantasyMeans`, `OpenBounds`) is offered, so
    /// policies take their generic paths.
    fn capabilities(&self) -> Capabilities {
        Capabilities::of(&Capability::ALL)
    }
}
