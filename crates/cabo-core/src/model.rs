//! Surrogate models of the objective and the posteriors they produce.

use crate::capability::{
    Capabilities, Covariance, Fantasize, FantasyMeans, FourierSamples, OpenBounds, SamplePaths,
};
use crate::{BuildContext, Diagnostics, Result};
use std::fmt::Debug;

/// Posterior mean and variance of the latent objective at one point.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct MeanVar {
    /// Posterior mean.
    pub mean: f64,
    /// Posterior variance (≥ 0).
    pub var: f64,
}

/// Posterior mean and variance with their gradients with respect to x.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MeanVarGrad {
    /// Posterior mean.
    pub mean: f64,
    /// Posterior variance (≥ 0).
    pub var: f64,
    /// ∂mean/∂x.
    pub dmean: Vec<f64>,
    /// ∂var/∂x.
    pub dvar: Vec<f64>,
}

/// Training inputs (row-major `n × dim`, unit cube) and targets for a model fit.
#[derive(Debug, Clone, Copy)]
pub struct TrainingData<'a> {
    /// Input dimension.
    pub dim: usize,
    /// Inputs, row-major.
    pub x: &'a [f64],
    /// Targets, one per row.
    pub y: &'a [f64],
}

impl TrainingData<'_> {
    /// Number of training points.
    pub fn len(&self) -> usize {
        self.y.len()
    }
    /// True with no training points (the model then returns its prior).
    pub fn is_empty(&self) -> bool {
        self.y.is_empty()
    }
    /// Row `i` of the inputs.
    pub fn row(&self, i: usize) -> &[f64] {
        &self.x[i * self.dim..(i + 1) * self.dim]
    }
}

/// A belief about the objective after seeing data. All values are in the units of the
/// observed y (a model that standardises outputs undoes it here) and refer to the latent,
/// noise-free function. Beyond means and variances a posterior may offer the optional
/// capabilities of [`crate::capability`], by returning `Some(self)` from the matching
/// method; its [`ModelSpec::capabilities`] must declare the same ones.
pub trait Posterior: Send + Sync {
    /// Input dimension.
    fn dim(&self) -> usize;

    /// Mean and variance at `x`.
    fn mean_var(&self, x: &[f64]) -> MeanVar;

    /// Mean and variance at many points (`xs` row-major); implementations batch the work.
    fn mean_var_batch(&self, xs: &[f64], out: &mut [MeanVar]) {
        let d = self.dim();
        for (o, x) in out.iter_mut().zip(xs.chunks_exact(d)) {
            *o = self.mean_var(x);
        }
    }

    /// Mean and variance with gradients with respect to `x`.
    fn mean_var_grad(&self, x: &[f64]) -> Result<MeanVarGrad>;

    /// [`Posterior::mean_var_grad`] at many points (`xs` row-major), one result per point.
    /// Each result must be bitwise what `mean_var_grad` returns at that point, so an
    /// implementation may only share work between the points (the exact GP shares each load
    /// of its Cholesky factor among them); the optimiser evaluates all its active searches at
    /// once through this, and decisions must not depend on how the points were grouped.
    fn mean_var_grads(&self, xs: &[f64]) -> Vec<Result<MeanVarGrad>> {
        xs.chunks_exact(self.dim().max(1))
            .map(|x| self.mean_var_grad(x))
            .collect()
    }

    /// Variance of the observation noise, in y units.
    fn noise_variance(&self) -> f64;

    /// Fitted hyperparameters, jitter used and the like, recorded with each iteration.
    fn diagnostics(&self) -> Diagnostics {
        Diagnostics::new()
    }

    /// Joint covariances between prepared points ([`crate::capability`]); `None`, the
    /// default, when the model does not offer them.
    fn covariance(&self) -> Option<&dyn Covariance> {
        None
    }

    /// Conditioning on fantasised observations; `None` by default.
    fn fantasize(&self) -> Option<&dyn Fantasize> {
        None
    }

    /// Functions drawn from the posterior (Thompson sampling); `None` by default.
    fn sample_paths(&self) -> Option<&dyn SamplePaths> {
        None
    }

    /// Draws on a shared random Fourier basis; `None` by default.
    fn fourier_samples(&self) -> Option<&dyn FourierSamples> {
        None
    }

    /// The one-shot knowledge gradient's faster objective; `None` by default (policies then
    /// use [`Posterior::covariance`]).
    fn fantasy_means(&self) -> Option<&dyn FantasyMeans> {
        None
    }

    /// Faster expected bounds over open variables; `None` by default (policies then use
    /// [`Posterior::mean_var_batch`] and [`Posterior::mean_var_grad`]).
    fn open_bounds(&self) -> Option<&dyn OpenBounds> {
        None
    }
}

/// A surrogate that can be fitted to data. Stateful so it can warm-start hyperparameters.
pub trait Model: Send {
    /// Fits to `data` and returns the posterior; `seed` drives any multi-start randomness.
    fn fit(&mut self, data: TrainingData<'_>, seed: u64) -> Result<Box<dyn Posterior>>;

    /// What this model carries from one fit to the next (a MAP fit's warm start), for
    /// resuming an interrupted run exactly; `Ok(None)`, the default, means it cannot resume.
    /// See [`crate::Policy::checkpoint`].
    fn checkpoint(&self) -> Result<Option<crate::PluginState>> {
        Ok(None)
    }

    /// Takes back what [`Model::checkpoint`] returned, into a freshly built model.
    fn restore(&mut self, _state: &crate::PluginState) -> Result<()> {
        Err(crate::Error::unsupported(
            "this model cannot resume from a checkpoint",
        ))
    }
}

/// A model as written in a spec (`model: { type: exact_gp, … }`).
#[typetag::serde(tag = "type")]
pub trait ModelSpec: Debug + Send + Sync + dyn_clone::DynClone {
    /// Rejects parameters that do not fit a problem of dimension `dim`.
    fn validate(&self, _dim: usize) -> Result<()> {
        Ok(())
    }
    /// Builds the model for one run.
    fn build(&self, ctx: &BuildContext<'_>) -> Result<Box<dyn Model>>;
    /// The required capabilities ([`crate::Capability`]) this model's posteriors offer; the
    /// runner checks policies' [`crate::Requirements`] against them before running.
    fn capabilities(&self) -> Capabilities {
        Capabilities::NONE
    }
}

dyn_clone::clone_trait_object!(ModelSpec);
