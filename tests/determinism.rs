//! The same spec and seeds give byte-identical result files, run twice and with one or two
//! worker threads (wall times, kept in `*.times.jsonl`, excepted).

mod common;

use cabo_runner::RunOptions;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

fn run(threads: usize) -> (tempfile::TempDir, PathBuf) {
    cabo::init().expect("plugins registered");
    let out = tempfile::tempdir().expect("temporary directory");
    let opts = RunOptions {
        smoke: true,
        out: out.path().to_path_buf(),
        threads: Some(threads),
        ..RunOptions::default()
    };
    let specs = cabo_runner::load_specs(&["specs/quickstart.yaml".into()], &opts).expect("valid");
    cabo_runner::run_specs(&specs, &opts, &AtomicBool::new(false)).expect("runs");
    let dir = out.path().join("quickstart");
    (out, dir)
}

#[test]
fn results_are_byte_identical_across_reruns_and_thread_counts() {
    let (_a, one) = run(1);
    let (_b, two) = run(2);
    let (_c, again) = run(2);
    let (one, two, again) = (
        common::result_files(&one),
        common::result_files(&two),
        common::result_files(&again),
    );
    assert!(
        one.len() > 10,
        "expected many result files, got {}",
        one.len()
    );
    assert_eq!(
        one.keys().collect::<Vec<_>>(),
        two.keys().collect::<Vec<_>>()
    );
    for (name, bytes) in &one {
        assert!(
            two[name] == *bytes,
            "{name} differs between 1 and 2 threads"
        );
        assert!(again[name] == *bytes, "{name} differs between two runs");
    }
}
