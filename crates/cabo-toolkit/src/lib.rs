//! # cabo-toolkit
//!
//! The maths that acquisitions and policies in several plugins share, so that a plugin
//! needing it depends on this crate and not on another plugin. It holds:
//!
//! - [`numerics`]: `h(u) = φ(u) + u·Φ(u)`, its logarithm, EI and LogEI with their
//!   derivatives in the posterior mean and σ, stable on the whole line (BoTorch's
//!   `_log_ei_helper`, refined), and the clamp that turns a posterior variance into σ;
//! - [`acquisition`]: the decision's posterior checked against the problem, what is known
//!   about the cost ([`CostView`]: a log-normal belief or the problem's known cost), and EI
//!   per (cooled) unit cost, `EI(x)·E[c(x)^p]` ([`CostWeightedFn`]);
//! - [`dist`]: the input distributions of control-set problems (truncated normals of a given
//!   variance, uniform), their samplers and the quasi-random sample sets that expectations
//!   over the uncontrolled variables average over ([`InputDistributions`]).
//!
//! It registers no plugin and sits below every plugin: it depends on `cabo-core`,
//! `cabo-optim` (root finding and Sobol' points) and external crates, never on a plugin or
//! the runner. Code moves here when a second plugin needs it, unchanged, so that results
//! stay bitwise what they were.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod acquisition;
pub mod dist;
pub mod numerics;

pub use acquisition::{CostView, CostWeightedFn, checked_posterior};
pub use dist::{InputDistributions, Sampler, VariableDistribution};
pub use numerics::ValueGrad;
