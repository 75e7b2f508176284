//! # cabo-baselines
//!
//! The standard acquisitions and policies every cost-aware BO paper compares against:
//!
//! | name | kind | what it scores |
//! |---|---|---|
//! | `ei` | acquisition | expected improvement EI(x) over the incumbent |
//! | `log_ei` | acquisition | ln EI(x), finite where EI underflows (BoTorch's LogEI) |
//! | `ei_per_cost` | acquisition | EIPC / EI-PUC: EI(x)·E[c(x)⁻¹] |
//! | `ei_puc_cc` | acquisition | EI-PUC-CC: EI(x)·E[c(x)^−ν], ν = remaining budget fraction |
//! | `ucb` | acquisition | μ(x) + √β_t·σ(x), fixed β or the Srinivas schedule |
//! | `thompson` | acquisition | one posterior sample path |
//! | `random_search` | policy | a uniform random point |
//!
//! The numerics they rest on (h, log h, EI and LogEI with their derivatives) and the cost
//! view and EI per unit cost of the cost-aware ones live in `cabo-toolkit`, which other
//! acquisitions (Gittins indices, multi-step EI) share without depending on this crate.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod acquisitions;
pub mod random_search;

pub use random_search::{RandomSearch, RandomSearchSpec};

cabo_core::plugin_group!();
