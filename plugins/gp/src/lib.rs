//! Gaussian-process models for cabo.
//!
//! - [`kernel`]: RBF and Matérn-1/2, 3/2, 5/2 kernels with ARD lengthscales (GPyTorch's
//!   parametrisation), with gradients in x and in the log-hyperparameters.
//! - [`rff`]: random Fourier features, for prior sample paths (GP-sample objectives) and
//!   Thompson sampling.
//! - [`gp`] and [`posterior`]: [`ExactGp`] (fixed or MAP hyperparameters, optional output
//!   standardisation; the MAP fit's priors, bounds and starts are a [`HyperparameterSpace`],
//!   which other GP-type models fit through too) and its posterior [`GpPosterior`], which offers every capability of
//!   `cabo_core::capability`: fantasies by Cholesky extension, covariances between prepared
//!   points (`covariance`), pathwise sample paths, draws on a shared Fourier basis
//!   ([`fourier`]), the knowledge gradient's fast objective (`kg`) and expected bounds over
//!   a control set's open variables (`bounds`). Gradients at many points are computed in
//!   blocks that share each load of the Cholesky factor (bitwise the single-point ones), and
//!   a refit with unchanged hyperparameters extends the last factor. Other plugins reach
//!   them through the `Posterior` trait, never through this type.
//! - [`spec`]: the `exact_gp` model spec; [`cost`]: the `log_gp`, `known` and `uniform` cost
//!   models, each offering covariances of ln c and fantasies.

#![forbid(unsafe_code)]

mod bounds;
pub mod cost;
mod covariance;
pub mod fourier;
pub mod gp;
pub mod kernel;
mod kg;
pub mod posterior;
pub mod rff;
pub mod spec;

pub use cost::{KnownCost, KnownCostSpec, LogGp, LogGpBelief, UniformCost, UniformCostSpec};
pub use gp::{
    ExactGp, FitMode, GpConfig, HyperparameterSpace, Hyperparameters, KernelConfig, Lengthscale,
    LikelihoodGradient, MapFit, Noise, NoiseBounds, Prior,
};
pub use kernel::{Kernel, KernelKind};
pub use posterior::{GpPosterior, OutputTransform, PathwiseSample, RandomFeaturesSample};
pub use rff::RandomFeatures;

cabo_core::plugin_group!();
