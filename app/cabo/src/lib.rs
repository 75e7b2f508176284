//! # cabo
//!
//! Cost-aware Bayesian optimisation research in Rust. This facade re-exports the core
//! vocabulary, the maths plugins share (`toolkit`), the plugin crates, the spec, engine,
//! report and runner crates (with the engine's ask/tell [`Session`], for programs that make
//! the evaluations themselves), and — its
//! real job — adds every plugin crate's group (`plugins()`, declared by
//! `cabo_core::plugin_group!`), which keeps the crate linked with its registrations: a
//! plugin registered in a crate nothing references would silently vanish from the catalogue
//! and from spec parsing.
//!
//! Binaries and test crates call [`init`] once at start-up; it fails loudly if a plugin
//! crate registered nothing or a plugin kind has no registrations (the symptoms of a
//! dropped crate).

#![forbid(unsafe_code)]

pub use cabo_baselines as baselines;
pub use cabo_benchmarks as benchmarks;
pub use cabo_bmsei as bmsei;
pub use cabo_core as core;
pub use cabo_cvs as cvs;
pub use cabo_engine as engine;
/// Ask/tell for programs that drive experiments themselves: see [`cabo_engine::session`].
pub use cabo_engine::session::{Session, Suggested, Suggestion};
pub use cabo_external as external;
pub use cabo_gp as gp;
pub use cabo_markov as markov;
pub use cabo_optim as optim;
pub use cabo_pbgi as pbgi;
pub use cabo_report as report;
pub use cabo_rfgp as rfgp;
pub use cabo_runner as runner;
pub use cabo_spec as spec;
pub use cabo_toolkit as toolkit;

use cabo_core::registry::{self, Kind, PluginGroup};

/// The plugin crates' groups, one per crate; add a new plugin crate here.
const PLUGIN_GROUPS: &[fn() -> PluginGroup] = &[
    cabo_gp::plugins,
    cabo_rfgp::plugins,
    cabo_baselines::plugins,
    cabo_benchmarks::plugins,
    cabo_markov::plugins,
    cabo_pbgi::plugins,
    cabo_bmsei::plugins,
    cabo_cvs::plugins,
    cabo_external::plugins,
];

/// Adds every plugin crate's group, and checks that each registered its plugins and that
/// every plugin kind has some.
pub fn init() -> Result<(), String> {
    let empty: Vec<&str> = PLUGIN_GROUPS
        .iter()
        .map(|group| group())
        .filter(|g| g.plugins().is_empty())
        .map(|g| g.crate_name())
        .collect();
    if !empty.is_empty() {
        return Err(format!(
            "no plugins registered by: {} (a plugin crate was dropped by the linker?)",
            empty.join(", ")
        ));
    }
    let missing: Vec<String> = Kind::ALL
        .into_iter()
        .filter(|k| registry::names(*k).is_empty())
        .map(|k| k.to_string())
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!("no plugins registered for: {}", missing.join(", ")))
    }
}

/// Names of the plugin crates the facade links (for diagnostics and tests).
pub fn plugin_crates() -> Vec<&'static str> {
    PLUGIN_GROUPS.iter().map(|g| g().crate_name()).collect()
}
