//! # cabo-pbgi
//!
//! The Pandora's Box Gittins index family of seed 000 (Xie, Astudillo, Frazier, Scully,
//! Terenin — *Cost-aware Bayesian optimization via the Pandora's Box Gittins index*):
//!
//! | name | kind | what it does |
//! |---|---|---|
//! | `pbgi` | acquisition | α(x) = g solving EI(x; g) = λ·E[c(x)]: PBGI with known costs (eq. 6), PBGI-U with a log-GP cost belief (eq. 20); `stop: true` adds the Pandora stopping rule (cost-per-sample mode) |
//! | `pbgi_decay` | policy | PBGI-D: λ multiplied by β whenever the stopping rule fires at the chosen point |
//! | `pbgi_contours` | study | Figure 3 (left): EI and the index over (μ, σ), their contours and where they rank points differently ([`illustration`]) |
//!
//! The index is computed in standardised units by a bracketed, safeguarded Newton solve of
//! `ln h(u) = ln(λc/σ)` ([`index`]), accurate for λc/σ from 1e-300 to well beyond 1e3, with
//! the analytic gradient of Prop. 3. [`pandora`] holds the indices of single Pandora's boxes
//! (discrete rewards exactly, normal rewards through [`index`]).

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod decay;
pub mod illustration;
pub mod index;
pub mod pandora;
pub mod pbgi;

pub use decay::{PbgiDecay, PbgiDecaySpec};
pub use pbgi::{DEFAULT_LAMBDA, Pbgi, PbgiFn, PbgiSpec};

cabo_core::plugin_group!();
