//! An interrupted run resumes from its checkpoint to exactly the files of an uninterrupted
//! one: every spec under `specs/` (smoke variant) is run once straight through and once
//! paused after every single decision and resumed by a fresh invocation, and every result
//! file must match byte for byte. Every policy, model and cost model of the specs is thereby
//! checked to save and restore all of its state; a plugin that cannot resume never
//! completes here and fails the test.

mod common;

use cabo_runner::{LoadedSpec, RunOptions};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

fn options(out: &Path) -> RunOptions {
    RunOptions {
        smoke: true,
        out: out.to_path_buf(),
        threads: Some(2),
        ..RunOptions::default()
    }
}

/// Runs `specs` paused after every decision, one invocation after another, until all are
/// complete; returns how many invocations resumed at least one run.
fn run_one_decision_at_a_time(specs: &[LoadedSpec], out: &Path, label: &str) -> usize {
    let opts = RunOptions {
        pause_after: Some(1),
        ..options(out)
    };
    let mut resuming = 0;
    for _ in 0..500 {
        let outcomes = cabo_runner::run_specs(specs, &opts, &AtomicBool::new(false))
            .unwrap_or_else(|e| panic!("{label}: {e}"));
        if outcomes.iter().any(|o| o.resumed > 0) {
            resuming += 1;
        }
        if outcomes.iter().all(|o| o.complete) {
            return resuming;
        }
    }
    panic!("{label}: not complete after 500 paused invocations (a plugin cannot resume?)");
}

#[test]
fn every_spec_paused_after_each_decision_resumes_to_the_same_bytes() {
    cabo::init().expect("plugins registered");
    let mut paths: Vec<PathBuf> = glob::glob("specs/**/*.yaml")
        .expect("pattern")
        .map(|p| p.expect("path"))
        .collect();
    paths.sort();
    let mut resumed_specs = 0;
    for path in &paths {
        let label = path.display().to_string();
        let found = cabo_runner::load_experiments(
            std::slice::from_ref(path),
            &options(Path::new("unused")),
        )
        .unwrap_or_else(|e| panic!("{label}: {e}"));
        if found.comparisons.is_empty() {
            continue; // studies are atomic, not resumable runs
        }
        let straight = tempfile::tempdir().expect("temporary directory");
        let paused = tempfile::tempdir().expect("temporary directory");
        cabo_runner::run_specs(
            &found.comparisons,
            &options(straight.path()),
            &AtomicBool::new(false),
        )
        .unwrap_or_else(|e| panic!("{label}: {e}"));
        if run_one_decision_at_a_time(&found.comparisons, paused.path(), &label) > 0 {
            resumed_specs += 1;
        }
        let (a, b) = (
            common::result_files(straight.path()),
            common::result_files(paused.path()),
        );
        assert_eq!(
            a.keys().collect::<Vec<_>>(),
            b.keys().collect::<Vec<_>>(),
            "{label}: different files (a checkpoint left behind?)"
        );
        for (name, bytes) in &a {
            assert!(b[name] == *bytes, "{label}: {name} differs after resuming");
        }
    }
    assert!(
        resumed_specs > 20,
        "only {resumed_specs} specs resumed a run"
    );
}
