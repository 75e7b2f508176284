//! # cabo-core
//!
//! The vocabulary every part of cabo speaks: the plugin traits ([`Problem`], [`Model`] /
//! [`Posterior`], [`CostModel`] / [`CostBelief`], [`Acquisition`], [`Policy`]), the one trait
//! of a function with a gradient over the unit cube ([`Objective`]), their spec
//! traits (deserialised from YAML by `type` name), the data that flows between them
//! ([`Query`], [`Outcome`], [`Dataset`], [`Decision`], [`DecisionContext`]), budgets, the plugin
//! registry, deterministic seeding and the normal-distribution numerics shared by every
//! acquisition.
//!
//! This crate owns no algorithm and no I/O: it must not depend on any plugin, on the optimiser
//! or on the runner. Conventions that hold everywhere:
//! - every problem is **maximised**;
//! - every query lives in the unit cube `[0,1]^d` (a problem maps it to its own units);
//! - floats are `f64`; randomness is seeded by `u64` and RNG types never cross a trait.

#![forbid(unsafe_code)]

pub mod acquisition;
pub mod budget;
pub mod capability;
pub mod context;
pub mod cost;
pub mod data;
pub mod error;
pub mod expr;
pub mod interrupt;
pub mod lookahead;
pub mod model;
pub mod normal;
pub mod objective;
pub mod pending;
pub mod policy;
pub mod problem;
pub mod registry;
pub mod rng;
pub mod settings;
pub mod state;
pub mod study;

pub use acquisition::{Acquisition, AcquisitionFn, AcquisitionSpec};
pub use budget::{Budget, BudgetState};
pub use capability::{Capabilities, Capability, Requirements};
pub use context::DecisionContext;
pub use cost::{CostBelief, CostFunction, CostFunctionSpec, CostModel, CostModelSpec, LnCost};
pub use data::{Dataset, MAX_MODELLED_MAGNITUDE, Observation, Outcome, Phase, Query};
pub use error::{Error, Result, check_count};
pub use expr::Expr;
pub use lookahead::{Lookahead, LookaheadSpec, TreeShape};
pub use model::{MeanVar, MeanVarGrad, Model, ModelSpec, Posterior, TrainingData};
pub use objective::Objective;
pub use pending::{PendingRule, SAMPLED_FANTASIES};
pub use policy::{Decision, Diagnostics, Policy, PolicySpec};
pub use problem::{
    BuildContext, ControlSet, Domain, ExternalEvaluation, Problem, ProblemAny, ProblemInfo,
    ProblemSpec, check_input_names,
};
pub use registry::{Kind, PluginInfo};
pub use rng::{Rng, derive_seed};
pub use settings::{OptimizerSettings, OptimizerSpec};
pub use state::PluginState;
pub use study::{StudyContext, StudyOutput, StudySpec};

/// Registers a plugin's spec type with typetag and in the catalogue under one name; see
/// [`registry`] for what the catalogue holds.
pub use cabo_macros::plugin;

/// Re-exported for the code [`macro@plugin`] generates, so plugin crates need not depend on
/// `inventory` themselves.
pub use inventory;
/// Re-exported for the code [`macro@plugin`] generates, so plugin crates need not depend on
/// `typetag` themselves.
pub use typetag;
