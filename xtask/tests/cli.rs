//! The command line as a researcher meets it: bad input gives a clear message and a non-zero
//! exit (never a panic), `list` shows the catalogue, and an interrupted sweep resumes without
//! redoing completed runs.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn xtask(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(args)
        .current_dir(workspace_root())
        .output()
        .expect("xtask runs")
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

const VALID: &str = "\
name: bad-input
replications: 1
problem: { type: ackley, dim: 2 }
budget: { iterations: 2 }
policies:
  - name: Random
    policy: { type: random_search }
";

/// Writes `text` as a spec and validates it; returns (exit code, stderr, spec path).
fn validate(text: &str) -> (i32, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("spec.yaml");
    std::fs::write(&path, text).unwrap();
    let out = xtask(&["validate", path.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    (
        out.status.code().unwrap_or(-1),
        stderr,
        path.display().to_string(),
    )
}

/// Asserts a clean failure whose message contains every fragment.
fn assert_rejected(text: &str, fragments: &[&str]) {
    let (code, stderr, path) = validate(text);
    assert_eq!(code, 2, "expected exit code 2, stderr:\n{stderr}");
    assert!(
        !stderr.contains("panicked"),
        "panic on bad input:\n{stderr}"
    );
    assert!(
        stderr.contains(&path),
        "message does not name the file:\n{stderr}"
    );
    for f in fragments {
        assert!(stderr.contains(f), "message lacks {f:?}:\n{stderr}");
    }
}

#[test]
fn the_valid_base_spec_is_accepted() {
    let (code, stderr, _) = validate(VALID);
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn unknown_type_lists_registered_names_and_the_closest() {
    let text = VALID.replace("type: ackley", "type: ackly");
    assert_rejected(
        &text,
        &[
            ":3:",
            "`problem.type`",
            "unknown problem type `ackly`",
            "did you mean `ackley`",
            "branin",
        ],
    );
    let text = VALID.replace("random_search", "random_serch");
    assert_rejected(
        &text,
        &[
            "policies[0].policy",
            "unknown policy type `random_serch`",
            "did you mean `random_search`",
        ],
    );
}

#[test]
fn missing_field_is_named() {
    let text = VALID.replace("budget: { iterations: 2 }\n", "");
    assert_rejected(&text, &["missing field `budget`"]);
}

#[test]
fn unknown_field_suggests_the_closest() {
    let text = VALID.replace("replications: 1", "replication: 1");
    assert_rejected(
        &text,
        &[
            ":2:",
            "unknown field `replication`",
            "did you mean `replications`",
        ],
    );
    let text = VALID.replace(
        "{ type: ackley, dim: 2 }",
        "{ type: ackley, dim: 2, dims: 3 }",
    );
    assert_rejected(&text, &["problem", "unknown field `dims`"]);
}

#[test]
fn wrong_value_type_is_located() {
    let text = VALID.replace("replications: 1", "replications: many");
    assert_rejected(&text, &[":2:", "`replications`", "invalid"]);
}

#[test]
fn zero_and_negative_budgets_are_rejected() {
    assert_rejected(
        &VALID.replace("iterations: 2", "iterations: 0"),
        &["`budget`", "at least 1"],
    );
    assert_rejected(
        &VALID.replace("iterations: 2", "cost: -5"),
        &["`budget`", "positive"],
    );
    assert_rejected(
        &VALID.replace("iterations: 2", "cost: 0"),
        &["`budget`", "positive"],
    );
}

#[test]
fn dimension_mismatch_between_problem_and_model_is_rejected() {
    let text = format!(
        "{VALID}model: {{ type: exact_gp, kernel: {{ type: matern52, lengthscale: [0.1, 0.2, 0.3], outputscale: 1.0 }}, noise: 1.0e-4, fit: fixed }}\n"
    );
    assert_rejected(&text, &[":8:", "`model`", "3", "2"]);
}

#[test]
fn empty_and_duplicate_policy_lists_are_rejected() {
    let empty = VALID.split("policies:").next().unwrap().to_string() + "policies: []\n";
    assert_rejected(&empty, &["`policies`", "empty"]);
    let dup = format!("{VALID}  - name: Random\n    policy: {{ type: random_search }}\n");
    assert_rejected(
        &dup,
        &[
            ":8:",
            "policies[1].name",
            "duplicate policy name \"Random\"",
        ],
    );
}

#[test]
fn missing_spec_and_empty_glob_are_errors() {
    let out = xtask(&["run", "specs/quickstrat.yaml"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("specs/quickstrat.yaml: no such spec file"),
        "{stderr}"
    );
    assert!(
        stderr.contains("did you mean specs/quickstart.yaml"),
        "{stderr}"
    );
    let out = xtask(&["run", "specs/nothing-here-*.yaml"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("matches no spec file"), "{stderr}");
}

#[test]
fn unwritable_output_directory_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("spec.yaml");
    std::fs::write(&spec, VALID).unwrap();
    // A regular file where a directory is needed: unwritable even for root.
    let blocker = dir.path().join("not-a-dir");
    std::fs::write(&blocker, "").unwrap();
    let out_dir = blocker.join("results");
    let out = xtask(&[
        "run",
        spec.to_str().unwrap(),
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("cannot create the output directory"),
        "{stderr}"
    );
    assert!(stderr.contains("not-a-dir"), "{stderr}");
}

#[test]
fn list_shows_every_kind_with_examples() {
    let out = xtask(&["list"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    for heading in [
        "== problems",
        "== cost functions",
        "== models",
        "== cost models",
        "== acquisitions",
        "== policies",
    ] {
        assert!(stdout.contains(heading), "{heading} missing:\n{stdout}");
    }
    assert!(
        stdout.contains("random_search")
            && stdout.contains("exact_gp")
            && stdout.contains("ackley")
    );
}

/// Every completed-run marker and its bytes.
fn completed(dir: &Path) -> Vec<(PathBuf, Vec<u8>, std::time::SystemTime)> {
    let mut out = Vec::new();
    for policy in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if !policy.path().is_dir() {
            continue;
        }
        for f in std::fs::read_dir(policy.path()).unwrap().flatten() {
            let p = f.path();
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            if name.starts_with("rep-") && name.ends_with(".json") {
                let meta = std::fs::metadata(&p).unwrap();
                out.push((
                    p.clone(),
                    std::fs::read(&p).unwrap(),
                    meta.modified().unwrap(),
                ));
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[test]
fn a_killed_sweep_resumes_without_redoing_completed_runs() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("resume.yaml");
    // Slow enough runs (many cheap evaluations) that a kill lands mid-sweep.
    std::fs::write(
        &spec,
        "name: resume\nreplications: 6\nproblem: { type: ackley, dim: 2 }\nbudget: { iterations: 20000 }\n\
         initial_design: { points: 2 }\npolicies:\n  - name: Random\n    policy: { type: random_search }\n",
    )
    .unwrap();
    let out = dir.path().join("results");
    let args = [
        "run",
        spec.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--threads",
        "1",
    ];
    let mut child = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(args)
        .current_dir(workspace_root())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let results = out.join("resume");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while completed(&results).is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "no run completed in time"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    child.kill().unwrap(); // SIGKILL: no chance to clean up
    child.wait().unwrap();
    let before = completed(&results);
    assert!(
        !before.is_empty() && before.len() < 6,
        "kill landed after {} runs",
        before.len()
    );

    let rerun = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(args)
        .current_dir(workspace_root())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&rerun.stderr);
    assert!(rerun.status.success(), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "{} run(s) executed, {} already complete",
            6 - before.len(),
            before.len()
        )),
        "{stderr}"
    );
    let after = completed(&results);
    assert_eq!(after.len(), 6);
    for (path, bytes, mtime) in &before {
        let (_, b, m) = after.iter().find(|(p, _, _)| p == path).unwrap();
        assert!(b == bytes && m == mtime, "{} was redone", path.display());
    }
    // The resumed sweep equals an uninterrupted one.
    let clean = dir.path().join("clean");
    let out2 = xtask(&[
        "run",
        spec.to_str().unwrap(),
        "--out",
        clean.to_str().unwrap(),
        "--threads",
        "2",
    ]);
    assert!(out2.status.success());
    for (path, bytes, _) in &after {
        let twin = clean
            .join("resume")
            .join(path.strip_prefix(&results).unwrap());
        assert!(
            std::fs::read(&twin).unwrap() == *bytes,
            "{} differs from a clean run",
            path.display()
        );
        let jsonl = path.with_extension("jsonl");
        let twin_jsonl = twin.with_extension("jsonl");
        assert!(std::fs::read(&jsonl).unwrap() == std::fs::read(&twin_jsonl).unwrap());
    }
}
