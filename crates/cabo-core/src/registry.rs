//! The plugin catalogue: every plugin registers a [`PluginInfo`] with `inventory`, which
//! `cargo xtask list` prints and which error messages use to suggest the closest name.
//!
//! Entries are written by [`crate::plugin`], the attribute on a plugin's spec `impl` that also
//! registers the spec type with typetag under the same name, so the catalogue and spec
//! parsing cannot disagree about a plugin's name or kind:
//!
//! ```
//! use cabo_core::{
//!     Acquisition, AcquisitionFn, AcquisitionSpec, BuildContext, DecisionContext, Objective,
//!     Posterior, Result,
//! };
//! use serde::{Deserialize, Serialize};
//!
//! /// The posterior mean as an acquisition (pure exploitation).
//! #[derive(Debug, Clone, Serialize, Deserialize)]
//! struct GreedySpec {}
//!
//! #[cabo_core::plugin(
//!     name = "greedy",
//!     summary = "Posterior mean",
//!     paper = "standard",
//!     example = "{ type: greedy }"
//! )]
//! impl AcquisitionSpec for GreedySpec {
//!     fn build(&self, _: &BuildContext<'_>) -> Result<Box<dyn Acquisition>> {
//!         Ok(Box::new(Greedy))
//!     }
//! }
//!
//! struct Greedy;
//!
//! impl Acquisition for Greedy {
//!     fn prepare<'a>(&'a self, ctx: &'a DecisionContext<'a>) -> Result<Box<dyn AcquisitionFn + 'a>> {
//!         Ok(Box::new(Mean(ctx.posterior()?)))
//!     }
//! }
//!
//! struct Mean<'a>(&'a dyn Posterior);
//!
//! impl Objective for Mean<'_> {
//!     fn value(&self, x: &[f64]) -> f64 {
//!         self.0.mean_var(x).mean
//!     }
//!     fn value_grad(&self, x: &[f64], grad: &mut [f64]) -> f64 {
//!         match self.0.mean_var_grad(x) {
//!             Ok(m) => {
//!                 grad.copy_from_slice(&m.dmean);
//!                 m.mean
//!             }
//!             Err(_) => f64::NAN,
//!         }
//!     }
//! }
//!
//! impl AcquisitionFn for Mean<'_> {}
//!
//! let info = cabo_core::registry::catalogue();
//! assert_eq!(info[0].kind, cabo_core::Kind::Acquisition);
//! assert_eq!(info[0].name, "greedy");
//! ```
//!
//! Implementing a trait that is no spec trait is refused at compile time:
//!
//! ```compile_fail
//! #[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
//! struct NotASpec {}
//! trait Other {}
//! #[cabo_core::plugin(name = "x", summary = "s", paper = "p", example = "{ type: x }")]
//! impl Other for NotASpec {}
//! ```

use serde::Serialize;
use std::fmt;

/// The kinds of plugin a spec can name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A black box (`problem:`).
    Problem,
    /// A known cost function (`cost:`).
    CostFunction,
    /// An objective model (`model:`).
    Model,
    /// A cost model (`cost_model:`).
    CostModel,
    /// An acquisition function (`acquisition:` in a policy entry).
    Acquisition,
    /// A whole policy (`policy:` in a policy entry).
    Policy,
    /// An experiment that is not a decision loop (`study:` in a study spec).
    Study,
}

impl Kind {
    /// Every kind, in catalogue order.
    pub const ALL: [Kind; 7] = [
        Kind::Problem,
        Kind::CostFunction,
        Kind::Model,
        Kind::CostModel,
        Kind::Acquisition,
        Kind::Policy,
        Kind::Study,
    ];

    /// The plural used in headings ("policies", "cost models").
    pub fn plural(self) -> &'static str {
        match self {
            Kind::Problem => "problems",
            Kind::CostFunction => "cost functions",
            Kind::Model => "models",
            Kind::CostModel => "cost models",
            Kind::Acquisition => "acquisitions",
            Kind::Policy => "policies",
            Kind::Study => "studies",
        }
    }

    /// The spec key that holds plugins of this kind.
    pub fn spec_key(self) -> &'static str {
        match self {
            Kind::Problem => "problem",
            Kind::CostFunction => "cost",
            Kind::Model => "model",
            Kind::CostModel => "cost_model",
            Kind::Acquisition => "acquisition",
            Kind::Policy => "policy",
            Kind::Study => "study",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            Kind::Problem => "problem",
            Kind::CostFunction => "cost function",
            Kind::Model => "model",
            Kind::CostModel => "cost model",
            Kind::Acquisition => "acquisition",
            Kind::Policy => "policy",
            Kind::Study => "study",
        };
        f.write_str(s)
    }
}

/// One entry of the catalogue.
#[derive(Debug, Clone, Serialize)]
pub struct PluginInfo {
    /// What the plugin is.
    pub kind: Kind,
    /// Its `type` name in specs, the name typetag knows its spec type by.
    pub name: &'static str,
    /// One line saying what it does.
    pub summary: &'static str,
    /// Where it comes from (a seed file name and section, or "standard").
    pub paper: &'static str,
    /// A YAML snippet for the plugin's spec key that `cargo xtask validate` accepts.
    pub example_yaml: &'static str,
    /// The package that registers it (the plugin crate's `Cargo.toml` name).
    pub crate_name: &'static str,
}

inventory::collect!(PluginInfo);

/// A plugin crate's registrations as one entry: what the crate's `plugins()` returns (the
/// function [`plugin_group!`](crate::plugin_group) declares). The facade adds every group;
/// calling a crate's `plugins()` is also what keeps the crate, and its registrations, in a
/// binary (a test or bench that builds the crate's plugins by name calls it first).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PluginGroup {
    crate_name: &'static str,
}

impl PluginGroup {
    /// The group of the package `crate_name`.
    pub const fn new(crate_name: &'static str) -> Self {
        PluginGroup { crate_name }
    }

    /// The package's name.
    pub fn crate_name(&self) -> &'static str {
        self.crate_name
    }

    /// The plugins the package registers, sorted by kind then name (none when the linker
    /// dropped the package).
    pub fn plugins(&self) -> Vec<&'static PluginInfo> {
        catalogue()
            .into_iter()
            .filter(|p| p.crate_name == self.crate_name)
            .collect()
    }
}

/// Declares a plugin crate's registration entry, `pub fn plugins() -> PluginGroup`: write
/// `cabo_core::plugin_group!();` once at the crate root, and add `plugins` to the facade's
/// group list.
#[macro_export]
macro_rules! plugin_group {
    () => {
        /// This crate's plugins, as one group: the facade adds it, and calling it keeps the
        /// crate's registrations in a binary.
        pub fn plugins() -> $crate::registry::PluginGroup {
            $crate::registry::PluginGroup::new(env!("CARGO_PKG_NAME"))
        }
    };
}

/// Every registered plugin, sorted by kind then name.
pub fn catalogue() -> Vec<&'static PluginInfo> {
    let mut all: Vec<_> = inventory::iter::<PluginInfo>.into_iter().collect();
    all.sort_by(|a, b| (a.kind, a.name).cmp(&(b.kind, b.name)));
    all
}

/// The registered names of one kind, sorted.
pub fn names(kind: Kind) -> Vec<&'static str> {
    catalogue()
        .into_iter()
        .filter(|p| p.kind == kind)
        .map(|p| p.name)
        .collect()
}

/// The registered name of `kind` closest to `name` (by Jaro–Winkler similarity).
pub fn closest(kind: Kind, name: &str) -> Option<&'static str> {
    closest_of(name, &names(kind))
}

/// The candidate closest to `name` ([`closest_of`]) when it is close enough to be what was
/// meant (Jaro–Winkler similarity above 0.7), for a "did you mean" where the candidates
/// are not a fixed vocabulary (files, papers) and a far one would mislead.
pub fn likely_meant<'n>(name: &str, candidates: &[&'n str]) -> Option<&'n str> {
    closest_of(name, candidates).filter(|c| strsim::jaro_winkler(name, c) > 0.7)
}

/// The candidate closest to `name`: one that differs from it only in case if there is one
/// (`ei` means `EI`, however similar another name's letters are), else the most similar by
/// Jaro–Winkler similarity.
pub fn closest_of<'n>(name: &str, candidates: &[&'n str]) -> Option<&'n str> {
    let lower = name.to_lowercase();
    if let Some(c) = candidates.iter().find(|c| c.to_lowercase() == lower) {
        return Some(c);
    }
    candidates
        .iter()
        .map(|c| (strsim::jaro_winkler(name, c), *c))
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c)
}
