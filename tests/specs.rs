//! Runs every spec under `specs/` in smoke mode and snapshots a rounded summary (per policy,
//! at the budget as the report defines it: median and quartiles of the report metric, cost
//! spent and policy evaluations within the budget; for a study: its tables and findings). A
//! snapshot changes only on purpose: review with `cargo insta review`.

use cabo_runner::RunOptions;
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

/// A study's tables, numbers rounded like the comparison summaries, plus its findings.
fn study_rows(output: &cabo_core::StudyOutput) -> Vec<(String, Vec<String>)> {
    use cabo_core::study::Cell;
    let mut rows = Vec::new();
    for t in &output.tables {
        rows.push((format!("{}: columns", t.name), t.columns.clone()));
        for (i, r) in t.rows.iter().enumerate() {
            let cells = r
                .iter()
                .map(|c| match c {
                    Cell::Number(v) => format!("{}", round6(*v)),
                    Cell::Text(s) => s.clone(),
                })
                .collect();
            rows.push((format!("{}[{i}]", t.name), cells));
        }
    }
    rows.push(("findings".into(), output.findings.clone()));
    rows
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
        let found = cabo_runner::load_experiments(&[path.to_path_buf()], &opts)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        if !found.studies.is_empty() {
            let outcomes = cabo_runner::run_studies(&found.studies, &opts)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let output = cabo_runner::study::read_output(&outcomes[0].dir)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            insta::assert_yaml_snapshot!(study_rows(&output));
            return;
        }
        let specs = found.comparisons;
        let outcomes = cabo_runner::run_specs(&specs, &opts, &AtomicBool::new(false))
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let s = outcomes[0]
            .summary
            .clone()
            .unwrap_or_else(|| panic!("{}: no summary", path.display()));
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
