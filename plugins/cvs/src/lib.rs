//! Bayesian optimisation with cost-varying variable subsets (BOCVS; seeds 002 and 004).
//!
//! The learner chooses a control set of variables and their values; the environment draws
//! the remaining variables from known distributions and charges the set's cost (known, or
//! random and unknown). This crate owns:
//!
//! - the problem `cvs` ([`problem`]): any objective on \[0,1\]^d with control sets, costs and
//!   input distributions ([`InputDistributions`]: truncated normals of a given variance,
//!   uniform; `cabo-toolkit`'s, which other plugins share), regret
//!   against the best expected value over control sets, and seed 004's quality and cost
//!   regrets;
//! - expected confidence bounds over the open variables with analytic gradients
//!   ([`expected`]), batched by the model where it offers that (the exact GP does);
//! - posterior sample paths on random Fourier features, drawn by the model, with
//!   closed-form expectations over the open variables ([`fourier`]);
//! - the policies `ucb_cvs` (Alg. 1 of seed 002), `cvs_etc` (ETC-50/100/Ada), `ucb_psq`,
//!   `ts_psq`, `ei_psq` (each with a per-unit-cost variant) and `alpha_etc` (Alg. 1 of seed
//!   004).
//!
//! It knows nothing about particular objectives (those come from their own plugins) or
//! models (it asks the posterior for the capabilities of `cabo_core::capability`), and
//! never edits the run loop: a control-set play is an ordinary [`cabo_core::Query`] with
//! `control_set: Some(i)`.

#![forbid(unsafe_code)]

pub mod alpha_etc;
pub mod common;
pub mod ei_psq;
pub mod etc;
pub mod expected;
pub mod fourier;
pub mod problem;
pub mod ts_psq;
pub mod ucb_cvs;
pub mod ucb_psq;

/// The input distributions a [`CvsSpec`] declares and [`problem_info`] attaches to a problem.
pub use cabo_toolkit::dist::{InputDistributions, Sampler, VariableDistribution};
pub use common::maximize_sets;
pub use expected::{ExpectedBound, ExpectedBounds, SetMaximum};
pub use problem::{CvsProblem, CvsSpec, problem_info};

cabo_core::plugin_group!();
