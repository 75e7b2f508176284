//! # cabo
//!
//! Cost-aware Bayesian optimisation research in Rust. This facade re-exports the core
//! vocabulary, the maths plugins share (`toolkit`), the plugin crates and the runner (with
//! its ask/tell [`Session`], for programs that make the evaluations themselves), and — its
//! real job — references every plugin crate so the linker keeps their registrations: a
//! plugin registered in a crate nothing references would silently vanish from the catalogue
//! and from spec parsing.
//!
//! Binaries and test crates call [`init`] once at start-up; it fails loudly if a plugin kind
//! has no registrations at all (the symptom of a dropped crate).

#![forbid(unsafe_code)]

pub use cabo_baselines as baselines;
pub use cabo_benchmarks as benchmarks;
pub use cabo_bmsei as bmsei;
pub use cabo_core as core;
pub use cabo_cvs as cvs;
pub use cabo_external as external;
pub use cabo_gp as gp;
pub use cabo_markov as markov;
pub use cabo_optim as optim;
pub use cabo_pbgi as pbgi;
pub use cabo_rfgp as rfgp;
pub use cabo_runner as runner;
/// Ask/tell for programs that drive experiments themselves: see [`cabo_runner::session`].
pub use cabo_runner::session::{Session, Suggested, Suggestion};
pub use cabo_toolkit as toolkit;

use cabo_core::registry::{self, Kind};

/// The plugin crates' link hooks, one per crate; add a new plugin crate here.
const PLUGIN_CRATES: &[(&str, fn())] = &[
    ("cabo-gp", cabo_gp::link),
    ("cabo-rfgp", cabo_rfgp::link),
    ("cabo-baselines", cabo_baselines::link),
    ("cabo-benchmarks", cabo_benchmarks::link),
    ("cabo-markov", cabo_markov::link),
    ("cabo-pbgi", cabo_pbgi::link),
    ("cabo-bmsei", cabo_bmsei::link),
    ("cabo-cvs", cabo_cvs::link),
    ("cabo-external", cabo_external::link),
];

/// Keeps every plugin crate linked and checks that every plugin kind has registrations.
pub fn init() -> Result<(), String> {
    for (_, link) in PLUGIN_CRATES {
        // Calling through `black_box` keeps each crate's object code — and with it the
        // `inventory` and `typetag` registrations — in the final binary.
        std::hint::black_box(link)();
    }
    let missing: Vec<String> = Kind::ALL
        .into_iter()
        .filter(|k| registry::names(*k).is_empty())
        .map(|k| k.to_string())
        .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "no plugins registered for: {} (a plugin crate was dropped by the linker?)",
            missing.join(", ")
        ))
    }
}

/// Names of the plugin crates the facade links (for diagnostics and tests).
pub fn plugin_crates() -> Vec<&'static str> {
    PLUGIN_CRATES.iter().map(|(n, _)| *n).collect()
}
