//! The command line as a researcher meets it: bad input gives a clear message and a non-zero
//! exit (never a panic), `list` shows the catalogue, and an interrupted sweep resumes without
//! redoing completed runs.

mod common;

use common::{result_files, workspace_root, xtask};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

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
fn an_acquisition_without_a_model_is_rejected_before_running() {
    let text = VALID.replace(
        "  - name: Random\n    policy: { type: random_search }\n",
        "  - name: Random\n    policy: { type: random_search }\n  - name: EI\n    acquisition: { type: ei }\n",
    );
    assert_rejected(
        &text,
        &[":9:", "policies[1].acquisition", "\"EI\"", "no `model`"],
    );
    // A model in the entry (or at the top level) is enough.
    let with_model = text.replace(
        "acquisition: { type: ei }\n",
        "acquisition: { type: ei }\n    model: { type: exact_gp, kernel: { type: rbf }, fit: map }\n",
    );
    let (code, stderr, _) = validate(&with_model);
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn wrong_value_type_is_located() {
    let text = VALID.replace("replications: 1", "replications: many");
    assert_rejected(&text, &[":2:", "`replications`", "expected an integer"]);
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
    // Each acquisition and policy states its rule for points pending (random search lies
    // with the mean, which fits nothing).
    let pending = stdout.matches("with points pending: ").count();
    let rules = stdout
        .matches("with points pending: kriging_believer")
        .count()
        + stdout
            .matches("with points pending: constant_liar_mean")
            .count();
    assert!(pending > 20 && rules == pending, "{stdout}");
    let random = stdout.split("  random_search").nth(1).unwrap();
    let random = random.split("\n  ").take(4).collect::<Vec<_>>().join("\n");
    assert!(
        random.contains("with points pending: constant_liar_mean"),
        "{random}"
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

// One test because each stage reads what the stage before left on disk: the rerun must find
// the files the killed sweep completed untouched, and the clean run is compared file by file
// with the resumed sweep's. Split, each test would pay again for a sweep of 6 × 19 000
// evaluations and a kill landing inside it.
#[test]
fn a_killed_sweep_resumes_without_redoing_completed_runs() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("resume.yaml");
    // Slow enough runs (many cheap evaluations) that a kill lands mid-sweep.
    std::fs::write(
        &spec,
        "name: resume\nreplications: 6\nproblem: { type: ackley, dim: 2 }\nbudget: { iterations: 19000 }\n\
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
    let mut child = spawn_xtask(&args, std::process::Stdio::null());
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

fn run_ok(args: &[&str]) -> String {
    let out = xtask(args);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{args:?} failed:\n{stderr}");
    stderr
}

#[test]
fn shards_merge_into_results_and_a_report_identical_to_a_local_run() {
    let dir = tempfile::tempdir().unwrap();
    let spec = "specs/quickstart.yaml";
    let local = dir.path().join("local");
    let sharded = dir.path().join("sharded");
    run_ok(&["run", spec, "--smoke", "--out", local.to_str().unwrap()]);
    let out = sharded.to_str().unwrap();
    // Shard 2 first: the order shards finish in must not matter.
    let first = run_ok(&["run", spec, "--smoke", "--out", out, "--shard", "2/3"]);
    // Shard 2 of 3 runs three of the ten runs.
    assert!(
        first.contains("quickstart: 7 of the spec's 10 runs are still missing"),
        "{first}"
    );
    assert!(!sharded.join("quickstart/smoke/run.json").exists());
    assert!(!sharded.join("quickstart/smoke/report.md").exists());
    run_ok(&["run", spec, "--smoke", "--out", out, "--shard", "0/3"]);
    let last = run_ok(&["run", spec, "--smoke", "--out", out, "--shard", "1/3"]);
    assert!(last.contains("report in"), "{last}");
    let a = result_files(&local);
    let b = result_files(&sharded);
    let names = |v: &[(PathBuf, Vec<u8>)]| v.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>();
    assert_eq!(names(&a), names(&b));
    for name in [
        "run.json",
        "report.md",
        "summary.csv",
        "report.svg",
        "report.png",
    ] {
        assert!(
            a.iter().any(|(p, _)| p.ends_with(name)),
            "{name} was not written"
        );
    }
    for ((p, x), (_, y)) in a.iter().zip(&b) {
        assert!(
            x == y,
            "{} differs between the local and the sharded run",
            p.display()
        );
    }
    // `report` regenerates the same bytes.
    let before = std::fs::read(sharded.join("quickstart/smoke/report.png")).unwrap();
    run_ok(&["report", sharded.join("quickstart/smoke").to_str().unwrap()]);
    run_ok(&["report", spec, "--smoke", "--out", out]);
    assert_eq!(
        std::fs::read(sharded.join("quickstart/smoke/report.png")).unwrap(),
        before
    );
    assert_eq!(result_files(&sharded), b);
}

#[test]
fn report_has_tables_a_csv_grid_and_both_figures() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("iters.yaml");
    std::fs::write(
        &spec,
        "name: iters\nreplications: 3\nproblem: { type: ackley, dim: 2 }\nbudget: { iterations: 5 }\n\
         initial_design: { points: 2 }\npolicies:\n  - name: Random\n    policy: { type: random_search }\n\
         report: { x: iteration, y: best_y, bands: std_err, also: [simple_regret] }\n",
    )
    .unwrap();
    let out = dir.path().join("r");
    run_ok(&[
        "run",
        spec.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ]);
    let d = out.join("iters");
    let csv = std::fs::read_to_string(d.join("summary.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines[0], "policy,x,n,median,q25,q75,mean,stderr");
    assert_eq!(
        lines.len(),
        1 + 6,
        "iterations 0..=5 for one policy:\n{csv}"
    );
    assert!(lines[1].starts_with("Random,0,3,"), "{csv}");
    let md = std::fs::read_to_string(d.join("report.md")).unwrap();
    assert!(
        md.contains("# iters") && md.contains("best observed y"),
        "{md}"
    );
    assert!(
        md.contains("mean with a band of ± one standard error"),
        "{md}"
    );
    assert!(md.contains("| Random | 3 |"), "{md}");
    let svg = std::fs::read_to_string(d.join("report.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("iteration (policy evaluations)"));
    let png = std::fs::read(d.join("report.png")).unwrap();
    assert_eq!(&png[1..4], b"PNG");
    // `also` adds a figure and a table per extra metric.
    let extra = std::fs::read_to_string(d.join("report-simple_regret.svg")).unwrap();
    assert!(extra.starts_with("<svg") && extra.contains("simple regret"));
    assert!(d.join("report-simple_regret.png").is_file());
    assert!(
        md.contains("## simple regret\n\n![simple regret](report-simple_regret.svg)"),
        "{md}"
    );
}

#[test]
fn report_errors_are_clear() {
    let dir = tempfile::tempdir().unwrap();
    let out = xtask(&["report", dir.path().to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("spec.json") && stderr.contains("results directory"),
        "{stderr}"
    );
    let spec = dir.path().join("m.yaml");
    std::fs::write(
        &spec,
        "name: m\nproblem: { type: ackley, dim: 2 }\nbudget: { iterations: 2 }\n\
         policies:\n  - name: Random\n    policy: { type: random_search }\nreport: { y: metric:nope }\n",
    )
    .unwrap();
    let out = xtask(&[
        "run",
        spec.to_str().unwrap(),
        "--out",
        dir.path().join("r").to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("\"nope\"") && stderr.contains("records no metrics"),
        "{stderr}"
    );
    let (code, stderr, _) =
        validate(&VALID.replace("policies:", "report: { y: best_valu }\npolicies:"));
    assert_eq!(code, 2);
    assert!(
        stderr.contains("best_valu") && stderr.contains("best_value"),
        "{stderr}"
    );
}

#[test]
fn report_times_writes_the_runtime_view_of_every_target_and_names_a_bad_time() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("r");
    let mut dirs = Vec::new();
    for (name, iterations) in [("short", 2), ("long", 3)] {
        let spec = dir.path().join(format!("{name}.yaml"));
        std::fs::write(
            &spec,
            format!(
                "name: {name}\nreplications: 2\nproblem: {{ type: ackley, dim: 2 }}\n\
                 budget: {{ iterations: {iterations} }}\ninitial_design: {{ points: 2 }}\n\
                 policies:\n  - name: Random\n    policy: {{ type: random_search }}\n"
            ),
        )
        .unwrap();
        run_ok(&[
            "run",
            spec.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        dirs.push(out.join(name));
    }
    let (a, b) = (dirs[0].to_str().unwrap(), dirs[1].to_str().unwrap());
    let before = std::fs::read(dirs[1].join("report.md")).unwrap();
    let done = xtask(&["report", a, b, "--times=fit_time"]);
    let stdout = String::from_utf8_lossy(&done.stdout);
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    // One table of both specs, a line per (spec, policy), decisions counted per run.
    assert!(
        stdout.contains("| spec | policy | runs | decisions |"),
        "{stdout}"
    );
    assert!(stdout.contains("| short | Random | 2 | 4 |"), "{stdout}");
    assert!(stdout.contains("| long | Random | 2 | 6 |"), "{stdout}");
    let csv = std::fs::read_to_string(dirs[1].join("runtime.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 1 + 3, "iterations 1..=3:\n{csv}");
    assert!(lines[3].starts_with("Random,3,fit_time,2,"), "{csv}");
    for f in [
        "runtime.md",
        "runtime-table.csv",
        "runtime.svg",
        "runtime.png",
    ] {
        assert!(dirs[1].join(f).is_file(), "{f} was not written");
    }
    // Times stay out of the comparable report.
    assert_eq!(std::fs::read(dirs[1].join("report.md")).unwrap(), before);
    let bad = xtask(&["report", a, "--times=decison_time"]);
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert_eq!(bad.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--times: unknown time `decison_time`; did you mean `decision_time`?"),
        "{stderr}"
    );
}

#[test]
fn bad_shards_are_rejected() {
    for bad in ["3/3", "1", "a/b", "0/0"] {
        let out = xtask(&["run", "specs/quickstart.yaml", "--shard", bad]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad}: {stderr}");
        assert!(stderr.contains("INDEX/COUNT"), "{bad}: {stderr}");
    }
}

const STUDY: &str = "\
name: fig
seed: 3
study: { type: markov_cost_sweep, x_levels: 9, y_levels: 11, costs: [0.01, 0.05], runs: 200 }
";

#[test]
fn a_study_runs_once_writes_its_report_and_is_skipped_when_complete() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("fig.yaml");
    std::fs::write(&spec, STUDY).unwrap();
    let out = dir.path().join("r");
    let args = [
        "run",
        spec.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    let first = run_ok(&args);
    assert!(first.contains("fig: study computed"), "{first}");
    let d = out.join("fig");
    for f in [
        "study.json",
        "study.times.json",
        "report.md",
        "figure-5-2.csv",
        "figure-5-2-brownian.svg",
        "figure-5-2-compound-poisson.png",
    ] {
        assert!(d.join(f).is_file(), "{f} missing");
    }
    let times: std::collections::BTreeMap<String, f64> =
        serde_json::from_str(&std::fs::read_to_string(d.join("study.times.json")).unwrap())
            .unwrap();
    for key in ["study_wall_s", "study_cpu_s"] {
        assert!(times.get(key).is_some_and(|s| *s > 0.0), "{key}: {times:?}");
    }
    let json = std::fs::read_to_string(d.join("study.json")).unwrap();
    let md = std::fs::read_to_string(d.join("report.md")).unwrap();
    assert!(
        md.contains("## Findings") && md.contains("| brownian | 0.01000 |"),
        "{md}"
    );
    // A second run finds the study complete and leaves its results byte-identical.
    let second = run_ok(&args);
    assert!(second.contains("fig: study already complete"), "{second}");
    assert_eq!(std::fs::read_to_string(d.join("study.json")).unwrap(), json);
    // The same study on one thread gives the same bytes.
    let one = dir.path().join("one");
    run_ok(&[
        "run",
        spec.to_str().unwrap(),
        "--out",
        one.to_str().unwrap(),
        "--threads",
        "1",
    ]);
    let single = std::fs::read_to_string(one.join("fig/study.json")).unwrap();
    assert!(single == json, "study.json differs between 1 and 2 threads");
    // `report` redraws a study's files from study.json.
    std::fs::remove_file(d.join("report.md")).unwrap();
    run_ok(&["report", d.to_str().unwrap()]);
    assert!(d.join("report.md").is_file());
}

#[test]
fn bad_study_parameters_are_located_errors() {
    assert_rejected(
        &STUDY.replace("y_levels: 11", "y_levels: 10"),
        &["study", "odd"],
    );
    assert_rejected(
        &STUDY.replace("markov_cost_sweep", "markov_cost_swep"),
        &["markov_cost_sweep"],
    );
    assert_rejected(&STUDY.replace("runs: 200", "rusn: 200"), &["rusn", "runs"]);
    // Studies are not split across Slurm tasks.
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("fig.yaml");
    std::fs::write(&spec, STUDY).unwrap();
    let scripts = dir.path().join("slurm");
    let out = xtask(&[
        "slurm",
        spec.to_str().unwrap(),
        "--shards",
        "2",
        "--dir",
        scripts.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("study spec"), "{stderr}");
}

/// Starts `xtask args` in the background, with its standard error piped or dropped.
fn spawn_xtask(args: &[&str], stderr: std::process::Stdio) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(args)
        .current_dir(workspace_root())
        .stderr(stderr)
        .spawn()
        .unwrap()
}

/// Waits until `path` exists (at most two minutes).
fn wait_for(path: &Path, what: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    while !path.exists() {
        assert!(std::time::Instant::now() < deadline, "{what} in time");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// Asserts that `files` of `run_dir` (policy EI of `spec`, named `name`) equal those of an
/// uninterrupted run written under `dir/clean`.
fn assert_equals_uninterrupted_ei(
    spec: &Path,
    name: &str,
    dir: &Path,
    run_dir: &Path,
    files: &[&str],
) {
    let clean = dir.join("clean");
    let straight = xtask(&[
        "run",
        spec.to_str().unwrap(),
        "--out",
        clean.to_str().unwrap(),
        "--only",
        "EI",
    ]);
    assert!(straight.status.success());
    for file in files {
        assert!(
            std::fs::read(run_dir.join(file)).unwrap()
                == std::fs::read(clean.join(name).join("EI").join(file)).unwrap(),
            "{file} differs from an uninterrupted run"
        );
    }
}

#[test]
fn a_run_killed_mid_way_resumes_from_its_checkpoint_to_the_same_bytes() {
    killed_mid_way_resumes_to_the_same_bytes("midway", "");
}

/// Four workers of varying durations (a known cost from 1 to 2): the checkpoints the kill
/// leaves hold evaluations in flight, which the resumed run must finish as the
/// uninterrupted one does.
const FOUR_WORKERS: &str = "cost: { type: linear_mean, scale: 1, offset: 1 }\nworkers: ";

#[test]
fn four_asynchronous_workers_killed_mid_way_resume_to_the_same_bytes() {
    let extra = format!("{FOUR_WORKERS}4\n");
    killed_mid_way_resumes_to_the_same_bytes("midway-async", &extra);
}

#[test]
fn four_synchronous_workers_killed_mid_way_resume_to_the_same_bytes() {
    let extra = format!("{FOUR_WORKERS}{{ count: 4, mode: synchronous }}\n");
    killed_mid_way_resumes_to_the_same_bytes("midway-sync", &extra);
}

/// Kills (SIGKILL) a long EI run of spec `name` (the long EI spec with `extra` appended)
/// once it has saved a checkpoint, and checks that a second invocation resumes it to the
/// bytes of an uninterrupted run.
fn killed_mid_way_resumes_to_the_same_bytes(name: &str, extra: &str) {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join(format!("{name}.yaml"));
    let text = long_ei_spec(name).replace("replications: 3", "replications: 1") + extra;
    std::fs::write(&spec, text).unwrap();
    let out = dir.path().join("results");
    let args = [
        "run",
        spec.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--only",
        "EI",
        "--threads",
        "1",
        "--checkpoint-every",
        "0",
    ];
    let mut child = spawn_xtask(&args, std::process::Stdio::null());
    let run_dir = out.join(name).join("EI");
    wait_for(&run_dir.join("rep-0.checkpoint.cbor"), "no checkpoint");
    std::thread::sleep(std::time::Duration::from_millis(50));
    child.kill().unwrap(); // SIGKILL: no chance to clean up
    child.wait().unwrap();
    assert!(
        !run_dir.join("rep-0.json").exists(),
        "the run completed before the kill"
    );
    // What a kill during a checkpoint write leaves next to the (still whole) checkpoint.
    let orphan = run_dir.join("rep-0.checkpoint.cbor.999.0.tmp");
    std::fs::write(&orphan, b"half").unwrap();

    let rerun = xtask(&args);
    let stderr = String::from_utf8_lossy(&rerun.stderr);
    assert!(rerun.status.success(), "{stderr}");
    assert!(
        stderr.contains("1 run(s) executed (1 resumed from a checkpoint), 0 already complete"),
        "{stderr}"
    );
    assert!(!run_dir.join("rep-0.checkpoint.cbor").exists());
    assert!(
        !orphan.exists(),
        "an orphaned checkpoint write was left behind"
    );
    assert_equals_uninterrupted_ei(
        &spec,
        name,
        dir.path(),
        &run_dir,
        &["rep-0.jsonl", "rep-0.json"],
    );
    if !extra.is_empty() {
        let records = std::fs::read_to_string(run_dir.join("rep-0.jsonl")).unwrap();
        let pending = |l: &&str| l.contains("\"pending\":[") && !l.contains("\"pending\":[]");
        assert!(
            records.lines().filter(pending).count() > 100,
            "decisions were made with evaluations pending"
        );
    }
}

#[test]
fn an_interrupt_checkpoints_the_run_in_progress_and_starts_no_other() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("sigint.yaml");
    std::fs::write(&spec, long_ei_spec("sigint")).unwrap();
    let out = dir.path().join("results");
    let args = [
        "run",
        spec.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--only",
        "EI",
        "--threads",
        "1",
    ];
    let child = spawn_xtask(&args, std::process::Stdio::piped());
    let run_dir = out.join("sigint").join("EI");
    wait_for(&run_dir.join("rep-0.jsonl"), "the run did not start");
    std::thread::sleep(std::time::Duration::from_millis(100));
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let stopped = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&stopped.stderr);
    assert_eq!(stopped.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("the same command resumes them"), "{stderr}");
    assert!(run_dir.join("rep-0.checkpoint.cbor").exists(), "{stderr}");
    assert!(!run_dir.join("rep-0.json").exists(), "{stderr}");
    assert!(
        !run_dir.join("rep-1.jsonl").exists(),
        "a new run started: {stderr}"
    );

    let rerun = xtask(&args);
    let stderr = String::from_utf8_lossy(&rerun.stderr);
    assert!(rerun.status.success(), "{stderr}");
    assert!(stderr.contains("(1 resumed from a checkpoint)"), "{stderr}");
    let files = ["rep-0.jsonl", "rep-1.jsonl", "rep-2.jsonl"];
    assert_equals_uninterrupted_ei(&spec, "sigint", dir.path(), &run_dir, &files);
}

/// A small spec named `name`: Random and EI on 2-D Ackley, three replications of
/// `iterations` iterations each.
/// [`random_and_ei_spec`] with runs long enough (about a second each) that an interrupt
/// sent a few milliseconds after a run starts lands inside it: 300 GP decisions, each
/// scoring 1024 raw samples. (A fixed-hyperparameter GP extends its factor from decision to
/// decision, so the decisions alone no longer take that long.)
fn long_ei_spec(name: &str) -> String {
    random_and_ei_spec(name, 300).replace("raw_samples: 16", "raw_samples: 1024")
}

fn random_and_ei_spec(name: &str, iterations: usize) -> String {
    format!(
        "name: {name}\nreplications: 3\nproblem: {{ type: ackley, dim: 2 }}\n\
         budget: {{ iterations: {iterations} }}\ninitial_design: {{ points: 2 }}\n\
         model: {{ type: exact_gp, kernel: {{ type: rbf, lengthscale: 0.3 }}, fit: fixed }}\npolicies:\n  \
         - name: Random\n    policy: {{ type: random_search }}\n  \
         - name: EI\n    acquisition: {{ type: ei }}\n\
         optimizer: {{ raw_samples: 16, restarts: 1, max_iters: 10 }}\n"
    )
}

#[test]
fn runs_made_with_only_or_fewer_replications_count_for_the_whole_spec() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("partial.yaml");
    let text = &random_and_ei_spec("partial", 4);
    std::fs::write(&spec, text).unwrap();
    let out = dir.path().join("results");
    let run = |extra: &[&str]| {
        let mut args = vec![
            "run",
            spec.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        run_ok(&args)
    };
    run(&["--only", "Random", "--replications", "2"]);
    let first = completed(&out.join("partial"));
    assert_eq!(first.len(), 2);
    // An edit of the report section changes no run either.
    std::fs::write(
        &spec,
        format!("{text}report: {{ x: iteration, y: simple_regret, bands: std_err }}\n"),
    )
    .unwrap();
    let stderr = run(&[]);
    assert!(
        stderr.contains("4 run(s) executed, 2 already complete"),
        "{stderr}"
    );
    let after = completed(&out.join("partial"));
    assert_eq!(after.len(), 6);
    for (path, bytes, mtime) in &first {
        let (_, b, m) = after.iter().find(|(p, _, _)| p == path).unwrap();
        assert!(b == bytes && m == mtime, "{} was redone", path.display());
    }
    // A change that does alter the runs (the budget) reruns all of them.
    std::fs::write(&spec, text.replace("iterations: 4", "iterations: 5")).unwrap();
    let stderr = run(&[]);
    assert!(
        stderr.contains("6 run(s) executed, 0 already complete"),
        "{stderr}"
    );
}

#[test]
fn status_counts_what_run_would_skip_and_times_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("progress.yaml");
    let text = &random_and_ei_spec("progress", 3);
    std::fs::write(&spec, text).unwrap();
    let out = dir.path().join("results");
    let (spec, out) = (spec.to_str().unwrap(), out.to_str().unwrap());
    let status = || {
        let o = xtask(&["status", spec, "--out", out]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).to_string()
    };
    let row = |table: &str, name: &str| -> Vec<String> {
        let line = table
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap_or_else(|| panic!("no row {name} in\n{table}"));
        line.split_whitespace().skip(1).map(String::from).collect()
    };
    let before = status();
    assert_eq!(row(&before, "Random")[..3], ["0/3", "0", "-"], "{before}");
    assert_eq!(row(&before, "total")[0], "0/6", "{before}");
    run_ok(&[
        "run",
        spec,
        "--out",
        out,
        "--only",
        "Random",
        "--replications",
        "2",
    ]);
    let partial = status();
    // Two of Random's three runs are complete and timed, so the third has an estimate; EI has
    // nothing to time yet.
    let random = row(&partial, "Random");
    assert_eq!(random[..2], ["2/3", "0"], "{partial}");
    assert_ne!(random.last().unwrap(), "?", "{partial}");
    assert_eq!(
        row(&partial, "EI")[..4],
        ["0/3", "0", "-", "?"],
        "{partial}"
    );
    assert_eq!(row(&partial, "total")[0], "2/6", "{partial}");
    assert!(
        partial.contains("+ 3 run(s) of policies with none complete"),
        "{partial}"
    );
    // A spec edit that changes the runs makes them stale: no longer complete, and named.
    std::fs::write(spec, text.replace("iterations: 3", "iterations: 4")).unwrap();
    let stale = status();
    assert_eq!(row(&stale, "Random")[..2], ["0/3", "0"], "{stale}");
    assert!(
        stale.contains("progress: 2 run(s) of an earlier version of this spec"),
        "{stale}"
    );
    run_ok(&["run", spec, "--out", out]);
    let done = status();
    assert_eq!(row(&done, "progress")[0], "6/6", "{done}");
    assert_eq!(row(&done, "EI")[..2], ["3/3", "0"], "{done}");
}

#[test]
fn runs_start_replication_by_replication_in_the_order_specs_are_given() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str| {
        let path = dir.path().join(format!("{name}.yaml"));
        let text = format!(
            "name: {name}\nreplications: 2\nproblem: {{ type: ackley, dim: 2 }}\n\
             budget: {{ iterations: 1 }}\ninitial_design: {{ points: 2 }}\npolicies:\n  \
             - name: Random\n    policy: {{ type: random_search }}\n  \
             - name: Also-random\n    policy: {{ type: random_search }}\n"
        );
        std::fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    };
    // Given in reverse alphabetical order: the argument order is the priority.
    let (second, first) = (write("zeta"), write("alpha"));
    let out = dir.path().join("results");
    let stderr = run_ok(&[
        "run",
        &second,
        &first,
        "--out",
        out.to_str().unwrap(),
        "--threads",
        "1",
    ]);
    let order: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with('['))
        .map(|l| l.split_once("] ").unwrap().1.split(" done").next().unwrap())
        .collect();
    assert_eq!(
        order,
        [
            "zeta / Random / rep 0",
            "zeta / Also-random / rep 0",
            "alpha / Random / rep 0",
            "alpha / Also-random / rep 0",
            "zeta / Random / rep 1",
            "zeta / Also-random / rep 1",
            "alpha / Random / rep 1",
            "alpha / Also-random / rep 1",
        ],
        "{stderr}"
    );
}

#[test]
fn a_run_locked_by_another_process_is_skipped_and_finished_later() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("shared.yaml");
    std::fs::write(&spec, random_and_ei_spec("shared", 3)).unwrap();
    let (out, solo) = (dir.path().join("results"), dir.path().join("solo"));
    let run = |out: &Path| {
        run_ok(&[
            "run",
            spec.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
    };
    // Another process running EI's replication 1 holds its lock (an OS file lock, as any
    // process would take it).
    let lock_path = out.join("shared/EI/rep-1.lock");
    std::fs::create_dir_all(lock_path.parent().unwrap()).unwrap();
    let held = std::fs::File::create(&lock_path).unwrap();
    held.try_lock().unwrap();
    let stderr = run(&out);
    assert!(
        stderr.contains("shared / EI / rep 1 is running in another process: skipped"),
        "{stderr}"
    );
    assert!(
        stderr.contains("5 run(s) executed, 0 already complete, 1 running in another process"),
        "{stderr}"
    );
    assert!(!out.join("shared/EI/rep-1.jsonl").exists());
    assert!(!out.join("shared/report.md").exists(), "{stderr}");
    // Once that process is gone, the next invocation runs it and writes the report; the
    // locks of complete runs are removed, and the results are those of a single sweep.
    drop(held);
    let stderr = run(&out);
    assert!(
        stderr.contains("1 run(s) executed, 5 already complete"),
        "{stderr}"
    );
    assert!(out.join("shared/report.md").exists(), "{stderr}");
    assert!(!lock_path.exists());
    run(&solo);
    assert_eq!(result_files(&out), result_files(&solo));
}

#[test]
fn two_sweeps_over_one_directory_share_the_runs_and_match_a_single_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("pair.yaml");
    // EI's runs last long enough (tens of ms) for the two sweeps to overlap.
    std::fs::write(&spec, random_and_ei_spec("pair", 25)).unwrap();
    let (out, solo) = (dir.path().join("results"), dir.path().join("solo"));
    let args = |out: &Path| {
        [
            "run".to_string(),
            spec.to_str().unwrap().to_string(),
            "--out".to_string(),
            out.to_str().unwrap().to_string(),
            "--threads".to_string(),
            "1".to_string(),
            // As `slurm --workers` runs them.
            "--require-locks".to_string(),
        ]
    };
    let spawn = || {
        Command::new(env!("CARGO_BIN_EXE_xtask"))
            .args(args(&out))
            .current_dir(workspace_root())
            .output()
    };
    let (a, b) = std::thread::scope(|s| {
        let a = s.spawn(spawn);
        let b = s.spawn(spawn);
        (a.join().unwrap().unwrap(), b.join().unwrap().unwrap())
    });
    let executed = |o: &Output| {
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{stderr}");
        let line = stderr
            .lines()
            .find(|l| l.contains("run(s) executed"))
            .unwrap_or_else(|| panic!("no summary line in\n{stderr}"));
        let n = line
            .split("pair: ")
            .nth(1)
            .and_then(|r| r.split(' ').next());
        n.and_then(|n| n.parse::<usize>().ok())
            .unwrap_or_else(|| panic!("no count in {line:?}"))
    };
    // However the two interleaved, every run was done exactly once, the report exists, and
    // the results are a single sweep's.
    assert_eq!(executed(&a) + executed(&b), 6);
    assert!(out.join("pair/report.md").exists());
    let stderr = run_ok(&args(&out).each_ref().map(String::as_str));
    assert!(
        stderr.contains("0 run(s) executed, 6 already complete"),
        "{stderr}"
    );
    run_ok(&args(&solo).each_ref().map(String::as_str));
    assert_eq!(result_files(&out), result_files(&solo));
}

/// Copies the directory tree `from` to `to`.
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            copy_tree(&p, &to.join(e.file_name()));
        } else {
            std::fs::copy(&p, to.join(e.file_name())).unwrap();
        }
    }
}

#[test]
fn reproducing_pages_from_no_results_leaves_them_byte_for_byte_where_they_are_written() {
    let committed = workspace_root().join("docs/reproductions");
    let before = result_files(&committed);
    let tmp = tempfile::tempdir().unwrap();
    let (pages, out) = (tmp.path().join("pages"), tmp.path().join("results"));
    copy_tree(&committed, &pages);
    std::fs::create_dir_all(&out).unwrap();
    let run = xtask(&[
        "reproduce",
        "all",
        "--pages-only",
        "--out",
        out.to_str().unwrap(),
        "--pages-out",
        pages.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&run.stderr).to_string();
    assert!(run.status.success(), "{err}");
    assert_eq!(result_files(&pages), before, "a page changed:\n{err}");
    assert_eq!(
        result_files(&committed),
        before,
        "the repository's pages changed:\n{err}"
    );
    // The output says where each page is and that it was left alone.
    let page = pages.join("000-pbgi.md");
    assert!(
        err.contains(&format!("left {} as it is", page.display())),
        "{err}"
    );
    assert!(!err.contains("wrote "), "{err}");
}
