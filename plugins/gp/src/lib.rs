//! Gaussian-process models for cabo.
//!
//! - [`kernel`]: RBF and Matérn-1/2, 3/2, 5/2 kernels with ARD lengthscales (GPyTorch's
//!   parametrisation), with gradients in x and in the log-hyperparameters.
//! - [`linalg`]: a packed Cholesky factor with a recorded jitter-retry loop, triangular solves
//!   and O(n²) extension by one observation (for fantasies).
//! - [`rff`]: random Fourier features, for prior sample paths (GP-sample objectives) and
//!   Thompson sampling.
//! - [`gp`] and [`posterior`]: [`ExactGp`] (fixed or MAP hyperparameters, optional output standardisation) and its
//!   concrete posterior [`GpPosterior`], which other plugins may downcast to through
//!   `Posterior::as_any` for fantasies, cross-covariances and sample paths.
//! - [`spec`]: the `exact_gp` model spec; [`cost`]: the `log_gp`, `known` and `uniform` cost
//!   models.

pub mod cost;
pub mod gp;
pub mod kernel;
pub mod linalg;
pub mod posterior;
pub mod rff;
pub mod spec;

pub use cost::{KnownCost, KnownCostSpec, LogGp, LogGpBelief, UniformCost, UniformCostSpec};
pub use gp::{
    ExactGp, FitMode, GpConfig, Hyperparameters, KernelConfig, Lengthscale, Noise, NoiseBounds,
    Prior,
};
pub use kernel::{Kernel, KernelKind};
pub use posterior::{GpPosterior, OutputTransform, PathwiseSample, RandomFeaturesSample};
pub use rff::RandomFeatures;

/// Keeps this crate's plugin registrations in every binary that links the facade.
pub fn link() {}
