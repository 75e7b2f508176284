//! The robot-pushing objectives (`specs/pbgi/robot-pushing/`, Python on Box2D 2.3): their
//! own checks of the physics program (`test_push.py`: determinism, pushes that reach no
//! object, costs and objective from the simulated positions, the fixed noise and targets),
//! and, through a run of the known-cost spec, that the known cost cabo charges is the
//! longer push duration the program simulated. The first run installs Box2D and NumPy into
//! a private environment (`specs/python/launch.py`). Skipped with a printed reason where
//! `python3` is missing.

use std::path::Path;
use std::process::Command;
use std::sync::atomic::AtomicBool;

/// Whether `python3` runs here; the tests say why they skip otherwise.
fn python() -> bool {
    let ok = Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("skipped: python3 is not installed, and the objectives are Python programs");
    }
    ok
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn the_physics_program_passes_its_own_checks() {
    if !python() {
        return;
    }
    let out = Command::new("python3")
        .args([
            "specs/python/launch.py",
            "specs/pbgi/robot-pushing/test_push.py",
        ])
        .current_dir(root())
        .output()
        .expect("python3 starts");
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "test_push.py failed:\n{log}");
    // unittest reports on standard error; every check ran.
    assert!(log.contains("Ran 12 tests"), "{log}");
}

#[test]
fn the_known_cost_is_the_longer_simulated_push() {
    if !python() {
        return;
    }
    cabo::init().expect("plugins registered");
    let out = tempfile::tempdir().expect("temporary directory");
    let opts = cabo_runner::RunOptions {
        smoke: true,
        out: out.path().to_path_buf(),
        ..cabo_runner::RunOptions::default()
    };
    let spec = root().join("specs/pbgi/robot-pushing-known-cost.yaml");
    let found = cabo_runner::load_experiments(&[spec], &opts).expect("the spec loads");
    cabo_runner::run_specs(&found.comparisons, &opts, &AtomicBool::new(false))
        .expect("the smoke runs complete");
    let records = find(out.path(), "PBGI/rep-0.jsonl")
        .unwrap_or_else(|| panic!("no PBGI records under {}", out.path().display()));
    let text = std::fs::read_to_string(&records).expect("the run's records");
    let mut checked = 0;
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
        let (Some(cost), Some(longer)) =
            (v["cost"].as_f64(), v["metrics"]["max_duration"].as_f64())
        else {
            continue;
        };
        // The spec's max_input cost of inputs 4 and 10, computed by cabo from the query,
        // against max(t1, t2) as the program read it from the request.
        assert!(
            (cost - longer).abs() <= 1e-12 * longer,
            "charged {cost}, simulated {longer}: {line}"
        );
        assert!((1.0..=30.0).contains(&cost), "{line}");
        checked += 1;
    }
    assert!(checked >= 8, "only {checked} evaluations in {text}");
}

/// The first file under `dir` whose path ends with `suffix`.
fn find(dir: &Path, suffix: &str) -> Option<std::path::PathBuf> {
    for entry in std::fs::read_dir(dir).ok()? {
        let path = entry.ok()?.path();
        if path.is_dir() {
            if let Some(found) = find(&path, suffix) {
                return Some(found);
            }
        } else if path.ends_with(suffix) {
            return Some(path);
        }
    }
    None
}
