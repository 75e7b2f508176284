//! Every spec of `specs/cvs/` and `specs/cvs-unknown/` parses and validates, in full and in
//! smoke form, and its problem builds with a consistent optimum.

use std::path::{Path, PathBuf};

fn spec_files() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut out = Vec::new();
    for dir in ["specs/cvs", "specs/cvs-unknown"] {
        for e in std::fs::read_dir(root.join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "yaml") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn every_spec_parses_in_full_and_smoke_form() {
    cabo_cvs::plugins();
    cabo_gp::plugins();
    cabo_benchmarks::plugins();
    let files = spec_files();
    assert_eq!(
        files.len(),
        48,
        "27 known-cost specs, the three App. C.4 runtime specs and 18 unknown-cost specs"
    );
    for f in files {
        for smoke in [false, true] {
            if let Err(e) = cabo_runner::LoadedSpec::load(&f, smoke) {
                panic!("{}: {e}", f.display());
            }
        }
    }
}
