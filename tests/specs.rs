//! Runs every spec under `specs/` in smoke mode and snapshots a rounded summary (per policy:
//! final median and quartiles of the report metric, budget spent, evaluations). A snapshot
//! changes only on purpose: review with `cargo insta review`.

use cabo_runner::{RunOptions, summary};
use serde::Serialize;
use std::sync::atomic::AtomicBool;

/// Rounds to 6 significant digits so snapshots survive harmless last-bit changes.
fn round6(x: f64) -> f64 {
    if !x.is_finite() || x == 0.0 {
        return x;
    }
    format!("{x:.5e}").parse().unwrap_or(x)
}

#[derive(Serialize)]
struct Row {
    policy: String,
    replications: usize,
    metric: String,
    median: f64,
    q25: f64,
    q75: f64,
    cost_median: f64,
    evaluations_median: f64,
}

#[test]
fn every_spec_runs_in_smoke_mode_and_matches_its_snapshot() {
    cabo::init().expect("plugins registered");
    insta::glob!("../specs", "**/*.yaml", |path| {
        let out = tempfile::tempdir().expect("temporary directory");
        let opts = RunOptions {
            smoke: true,
            out: out.path().to_path_buf(),
            ..RunOptions::default()
        };
        let specs = cabo_runner::load_specs(&[path.to_path_buf()], &opts)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let outcomes = cabo_runner::run_specs(&specs, &opts, &AtomicBool::new(false))
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let s = summary::summarize(&specs[0], &outcomes[0].runs);
        let rows: Vec<Row> = s
            .policies
            .into_iter()
            .map(|p| {
                assert!(
                    p.replications > 0,
                    "{}: policy {} completed no run",
                    s.spec,
                    p.policy
                );
                Row {
                    policy: p.policy,
                    replications: p.replications,
                    metric: p.metric,
                    median: round6(p.median),
                    q25: round6(p.q25),
                    q75: round6(p.q75),
                    cost_median: round6(p.cost_median),
                    evaluations_median: p.evaluations_median,
                }
            })
            .collect();
        insta::assert_yaml_snapshot!(rows);
    });
}
