//! The external problem's overhead per evaluation: one evaluation of Branin answered by a
//! Python program over the JSON-lines protocol (`examples/branin/objective.py`, its process
//! kept between evaluations as in a run), against the built-in `branin` at the same point.
//! The difference is the protocol's cost: a request written, a pipe round trip, Python's
//! JSON parse and print, and the answer parsed. Skipped where `python3` is missing.

use cabo_core::{ProblemSpec, Query};
use std::path::Path;

fn main() {
    cabo_external::plugins();
    cabo_benchmarks::plugins();
    divan::main();
}

const X: [f64; 2] = [0.3, 0.7];

#[divan::bench]
fn builtin_branin(bencher: divan::Bencher) {
    let spec: Box<dyn ProblemSpec> = serde_json::from_str(r#"{"type":"branin"}"#).unwrap();
    let problem = spec.build(0).unwrap();
    let query = Query::at(X.to_vec());
    bencher.bench_local(|| problem.evaluate(&query, 7).unwrap());
}

#[divan::bench]
fn external_python_branin(bencher: divan::Bencher) {
    if std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped: python3 is not installed");
        return;
    }
    let mut spec: Box<dyn ProblemSpec> = serde_json::from_str(
        r#"{"type":"external","command":["python3","branin/objective.py"],
            "bounds":[[-5,10],[0,15]],"cost":"reported"}"#,
    )
    .unwrap();
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    spec.set_spec_dir(&examples);
    let mut problem = spec.build(0).unwrap();
    // The program's standard error (a line per evaluation) goes to a log, as in a run.
    let log = tempfile::NamedTempFile::new().unwrap();
    let external = problem.external().expect("an external problem is one");
    external.set_log_file(log.path());
    let query = Query::at(X.to_vec());
    problem.evaluate(&query, 7).unwrap(); // started outside the timing
    bencher.bench_local(|| problem.evaluate(&query, 7).unwrap());
}
