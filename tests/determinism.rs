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

/// A spec that names another in `seeds_from` runs the other's replications: the same problem
/// and policy seeds in every run's summary and byte-identical records for a policy both
/// share, while a renamed spec without the key gets other seeds and other records.
#[test]
fn seeds_from_reruns_the_named_specs_replications() {
    cabo::init().expect("plugins registered");
    let text = std::fs::read_to_string("specs/quickstart.yaml").expect("readable");
    let dir = tempfile::tempdir().expect("temporary directory");
    let write = |file: &str, header: &str| {
        let path = dir.path().join(file);
        std::fs::write(&path, text.replace("name: quickstart\n", header)).expect("writable");
        path
    };
    let variant = write(
        "variant.yaml",
        "name: quickstart-variant\nseeds_from: quickstart\n",
    );
    let renamed = write("renamed.yaml", "name: quickstart-renamed\n");
    let out = tempfile::tempdir().expect("temporary directory");
    let opts = RunOptions {
        smoke: true,
        out: out.path().to_path_buf(),
        only: vec!["EI".into(), "Random".into()],
        ..RunOptions::default()
    };
    let specs = cabo_runner::load_specs(&["specs/quickstart.yaml".into(), variant, renamed], &opts)
        .expect("valid");
    cabo_runner::run_specs(&specs, &opts, &AtomicBool::new(false)).expect("runs");
    let seeds = |spec: &str, policy: &str, rep: usize| {
        let path = out
            .path()
            .join(format!("{spec}/smoke/{policy}/rep-{rep}.json"));
        let v: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).expect("readable")).expect("JSON");
        (v["problem_seed"].as_u64(), v["policy_seed"].as_u64())
    };
    let records = |spec: &str, policy: &str, rep: usize| {
        std::fs::read(
            out.path()
                .join(format!("{spec}/smoke/{policy}/rep-{rep}.jsonl")),
        )
        .expect("readable")
    };
    for policy in ["EI", "Random"] {
        for rep in 0..2 {
            let original = seeds("quickstart", policy, rep);
            assert!(original.0.is_some() && original.1.is_some(), "{original:?}");
            assert_eq!(seeds("quickstart-variant", policy, rep), original);
            assert_eq!(
                records("quickstart-variant", policy, rep),
                records("quickstart", policy, rep),
                "{policy} rep {rep}"
            );
            let other = seeds("quickstart-renamed", policy, rep);
            assert!(other.0 != original.0 && other.1 != original.1, "{other:?}");
            assert_ne!(
                records("quickstart-renamed", policy, rep),
                records("quickstart", policy, rep)
            );
        }
    }
}
