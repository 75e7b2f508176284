//! What validation refuses before anything runs, through the real binary: names that would
//! write outside the output directory or over a spec's own files, data files that are
//! missing or malformed, report metrics the problem never records, policies that need an
//! initial point, and specs that would exhaust memory, disk or time. Each message is kept
//! as a snapshot; specs are written into a temporary directory and named relative to it, so
//! the messages do not depend on where the test runs.

mod common;

use common::{workspace_root, xtask_in};
use std::path::Path;
use std::process::Output;

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).to_string()
}

const VALID: &str = "\
name: limits
replications: 1
problem: { type: ackley, dim: 2 }
budget: { iterations: 2 }
policies:
  - name: Random
    policy: { type: random_search }
";

const MODEL: &str =
    "model: { type: exact_gp, kernel: { type: matern52 }, fit: map, prior: gamma }\n";

/// Asserts that `args` exits with code 2 without a panic; returns its stderr.
fn refused(dir: &Path, args: &[&str]) -> String {
    let out = xtask_in(dir, args);
    let err = stderr(&out);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{args:?} was not refused:\n{err}"
    );
    assert!(!err.contains("panicked"), "panic:\n{err}");
    err
}

/// Writes `text` as `spec.yaml` in a fresh directory, validates it from there and returns
/// the message.
fn rejected(text: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("spec.yaml"), text).unwrap();
    let err = refused(dir.path(), &["validate", "spec.yaml"]);
    assert!(
        err.contains("spec.yaml:"),
        "the message names no file:\n{err}"
    );
    err
}

/// Every file and directory under `root`, relative to it, sorted.
fn tree(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            out.push(p.strip_prefix(root).unwrap().display().to_string());
            if p.is_dir() {
                stack.push(p);
            }
        }
    }
    out.sort();
    out
}

/// `run` refuses `text` and writes nothing at all: not under `--out`, not beside it and not
/// above the working directory (which sits two levels below the temporary root, so a name
/// like `../../x` would land inside the root where the listing sees it).
fn run_writes_nothing(text: &str) -> String {
    let root = tempfile::tempdir().unwrap();
    let work = root.path().join("a/b");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("spec.yaml"), text).unwrap();
    let before = tree(root.path());
    let err = refused(&work, &["run", "spec.yaml", "--out", "out", "--no-report"]);
    assert_eq!(tree(root.path()), before, "run wrote files:\n{err}");
    err
}

fn with_name(name: &str) -> String {
    VALID.replace("name: limits", &format!("name: {name}"))
}

fn with_policy_name(name: &str) -> String {
    VALID.replace("- name: Random", &format!("- name: {name}"))
}

#[test]
fn spec_names_that_leave_the_output_directory_are_refused() {
    for (case, name) in [
        ("spec_name_parent_path", "\"../../x\""),
        ("spec_name_absolute", "/abs/path"),
        ("spec_name_dotdot", "\"..\""),
        ("spec_name_dot", "\".\""),
        ("spec_name_empty", "\"\""),
    ] {
        assert_refused_by_validate_and_run(case, &with_name(name));
    }
}

/// Asserts that `validate` refuses `text` with the message `run` gives while writing
/// nothing, and keeps the message as snapshot `case`.
fn assert_refused_by_validate_and_run(case: &str, text: &str) {
    let err = rejected(text);
    assert_eq!(
        err,
        run_writes_nothing(text),
        "{case}: validate and run differ"
    );
    insta::assert_snapshot!(case, err);
}

#[test]
fn nul_bytes_and_overlong_names_are_refused() {
    let long = "x".repeat(300);
    insta::assert_snapshot!("spec_name_nul", rejected(&with_name("\"a\\0b\"")));
    insta::assert_snapshot!("spec_name_300_bytes", rejected(&with_name(&long)));
    insta::assert_snapshot!("policy_name_nul", rejected(&with_policy_name("\"R\\0\"")));
}

#[test]
fn policy_names_that_leave_or_overwrite_the_spec_directory_are_refused() {
    for (case, name) in [
        ("policy_name_dotdot", "\"..\""),
        ("policy_name_dot", "\".\""),
        ("policy_name_slash", "\"a/b\""),
        ("policy_name_smoke", "smoke"),
        ("policy_name_report", "Report.md"),
        ("policy_name_spec_json", "spec.json"),
    ] {
        assert_refused_by_validate_and_run(case, &with_policy_name(name));
    }
}

#[test]
fn policy_names_sharing_a_directory_regardless_of_case_are_refused() {
    let text = VALID.replace(
        "policies:\n",
        "policies:\n  - name: random\n    policy: { type: random_search }\n",
    );
    insta::assert_snapshot!("policy_names_differ_in_case", rejected(&text));
}

#[test]
fn spec_names_equal_but_for_case_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.yaml"), with_name("Sweep")).unwrap();
    std::fs::write(dir.path().join("b.yaml"), with_name("sweep")).unwrap();
    let err = refused(dir.path(), &["validate", "a.yaml", "b.yaml"]);
    insta::assert_snapshot!("spec_names_differ_in_case", err);
}

#[test]
fn slurm_refuses_a_job_name_outside_its_directory_and_bad_resources() {
    let root = tempfile::tempdir().unwrap();
    let work = root.path().join("a/b");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("spec.yaml"), VALID).unwrap();
    let before = tree(root.path());
    let slurm = |extra: &[&str]| {
        let mut args = vec!["slurm", "spec.yaml", "--dir", "slurm"];
        args.extend_from_slice(extra);
        let err = refused(&work, &args);
        assert_eq!(tree(root.path()), before, "slurm wrote files:\n{err}");
        err
    };
    insta::assert_snapshot!("slurm_job_name", slurm(&["--job-name", "../../evil"]));
    insta::assert_snapshot!("slurm_time", slurm(&["--time", "banana"]));
    insta::assert_snapshot!("slurm_mem", slurm(&["--mem", "lots"]));
    // Slurm's own forms are accepted.
    for (flag, v) in [
        ("--time", "90"),
        ("--time", "30:00"),
        ("--time", "02:00:00"),
        ("--time", "1-12"),
        ("--time", "1-12:30"),
        ("--time", "1-12:30:00"),
        ("--mem", "4G"),
        ("--mem", "512"),
    ] {
        let out = xtask_in(&work, &["slurm", "spec.yaml", "--dir", "s", flag, v]);
        assert!(out.status.success(), "{flag} {v}: {}", stderr(&out));
    }
}

#[test]
fn data_paths_resolve_against_the_spec_file() {
    let root = workspace_root();
    for dir in [
        root.clone(),
        root.join("specs"),
        root.join("specs/benchmarks"),
    ] {
        let spec = root.join("specs/benchmarks/airfoil.yaml");
        let rel = pathdiff(&spec, &dir);
        let out = xtask_in(&dir, &["validate", &rel, "--smoke"]);
        assert!(
            out.status.success(),
            "from {}: {}",
            dir.display(),
            stderr(&out)
        );
    }
}

/// `path` relative to `base` (both under the workspace root).
fn pathdiff(path: &Path, base: &Path) -> String {
    let rest = path.strip_prefix(base).unwrap();
    rest.display().to_string()
}

#[test]
fn missing_and_malformed_data_files_are_refused_by_validate() {
    let missing = VALID.replace(
        "{ type: ackley, dim: 2 }",
        "{ type: airfoil, path: data/missing.csv }",
    );
    insta::assert_snapshot!("data_file_missing", rejected(&missing));
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("data")).unwrap();
    std::fs::write(
        dir.path().join("data/bad.csv"),
        "F,A,C,V,S,P\n1,2,x,4,5,6\n",
    )
    .unwrap();
    let bad = missing.replace("missing.csv", "bad.csv");
    std::fs::write(dir.path().join("spec.yaml"), &bad).unwrap();
    let err = refused(dir.path(), &["validate", "spec.yaml"]);
    insta::assert_snapshot!("data_file_malformed", err);
}

const CVS: &str = "\
name: cvs-report
problem: { type: cvs, objective: { type: hartmann3 }, control_sets: [[0], [0, 1, 2]], costs: [0.1, 1.0], distribution: { type: truncated_normal, variance: 0.02 } }
budget: { cost: 2 }
policies:
  - name: Random
    policy: { type: random_search }
";

#[test]
fn report_metrics_the_problem_does_not_record_are_refused() {
    let y = format!("{CVS}report: {{ y: \"metric:cvs.plaays\" }}\n");
    insta::assert_snapshot!("report_y_unknown_metric", rejected(&y));
    let marker = format!("{CVS}report: {{ marker: cvs.on_optimal }}\n");
    insta::assert_snapshot!("report_marker_unknown_metric", rejected(&marker));
    let also = format!("{CVS}report: {{ also: [\"metric:cvs.plays\", \"metric:nonexistent\"] }}\n");
    insta::assert_snapshot!("report_also_unknown_metric", rejected(&also));
    let none = format!("{VALID}report: {{ y: \"metric:nonexistent\" }}\n");
    insta::assert_snapshot!(
        "report_metric_of_a_problem_without_metrics",
        rejected(&none)
    );
    // The names the problem declares are accepted.
    let dir = tempfile::tempdir().unwrap();
    let ok = format!(
        "{CVS}report: {{ y: \"metric:cvs.quality_regret\", marker: cvs.on_optimal_set, also: [\"metric:cvs.plays\"] }}\n"
    );
    std::fs::write(dir.path().join("spec.yaml"), ok).unwrap();
    let out = xtask_in(dir.path(), &["validate", "spec.yaml"]);
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn an_incumbent_policy_without_initial_points_is_refused() {
    let text = format!(
        "{}initial_design: {{ points: 0 }}\n{MODEL}",
        VALID
            .replace(
                "policy: { type: random_search }",
                "acquisition: { type: ei }"
            )
            .replace("name: Random", "name: EI")
    );
    let err = run_writes_nothing(&text);
    insta::assert_snapshot!("zero_initial_points_ei", err);
    // With a fixed incumbent EI needs no observation.
    let fixed = text.replace("{ type: ei }", "{ type: ei, best_f: 0.0 }");
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("spec.yaml"), fixed).unwrap();
    let out = xtask_in(dir.path(), &["validate", "spec.yaml"]);
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn resource_bombs_are_refused_before_anything_runs() {
    let cases = [
        ("huge_dimension", VALID.replace("dim: 2", "dim: 10000")),
        (
            "huge_replications",
            VALID.replace("replications: 1", "replications: 1000000000"),
        ),
        (
            "huge_cost_budget",
            VALID.replace(
                "budget: { iterations: 2 }",
                "budget: { cost: 1e308 }\ncost: { type: uniform }",
            ),
        ),
        (
            "huge_iteration_budget",
            VALID.replace("iterations: 2", "iterations: 1000000000"),
        ),
        (
            "huge_raw_samples",
            format!(
                "{}optimizer: {{ raw_samples: \"5000*d\" }}\n",
                VALID.replace("dim: 2", "dim: 1000")
            ),
        ),
    ];
    for (case, text) in cases {
        let err = run_writes_nothing(&text);
        insta::assert_snapshot!(case, err);
    }
    // `status` refuses too (it used to hang on a billion replications).
    let dir = tempfile::tempdir().unwrap();
    let text = VALID.replace("replications: 1", "replications: 1000000000");
    std::fs::write(dir.path().join("spec.yaml"), text).unwrap();
    refused(dir.path(), &["status", "spec.yaml"]);
}

#[test]
fn raised_limits_admit_what_the_defaults_refuse() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "{}limits: {{ max_runs: 2000000000 }}\n",
        VALID.replace("replications: 1", "replications: 1000000000")
    );
    std::fs::write(dir.path().join("spec.yaml"), text).unwrap();
    let out = xtask_in(dir.path(), &["validate", "spec.yaml"]);
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn a_cost_budget_without_a_known_smallest_cost_stops_at_the_evaluation_cap() {
    // Ackley charges its own cost (1) and no `cost:` says how small costs can be, so the
    // budget cannot be bounded in advance: the run must stop with an error at the cap.
    let text = format!(
        "{}limits: {{ max_evaluations: 10 }}\n",
        VALID.replace("iterations: 2", "cost: 1e308")
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("spec.yaml"), text).unwrap();
    let out = xtask_in(
        dir.path(),
        &["run", "spec.yaml", "--out", "out", "--no-report"],
    );
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("limits.max_evaluations = 10") && !err.contains("panicked"),
        "{err}"
    );
    let records = std::fs::read_to_string(dir.path().join("out/limits/Random/rep-0.jsonl"));
    assert_eq!(records.unwrap().lines().count(), 10);
}

#[test]
fn smoke_without_a_smoke_section_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("spec.yaml"), VALID).unwrap();
    let err = refused(
        dir.path(),
        &["run", "spec.yaml", "--smoke", "--out", "out", "--no-report"],
    );
    assert!(!dir.path().join("out").exists());
    insta::assert_snapshot!("smoke_without_section", err);
}

/// A policy that needs a capability its model or cost model does not declare is refused
/// before anything runs, naming the policy, the capability and the model: KG's scenario
/// tree needs covariances the bump-scaled GP does not offer, Thompson sampling needs
/// sample paths, and B-MS-EI needs a cost model at all. With the exact GP the same spec
/// validates.
#[test]
fn a_policy_whose_model_lacks_a_capability_is_refused() {
    let bump = "model: { type: bump_scaled_gp, std_low: 0.1, std_high: 1.0 }\n";
    let spec = |model: &str, policy: &str| {
        format!(
            "name: caps\nreplications: 1\n\
             problem: {{ type: bump_prior_sample, std_low: 0.1, std_high: 1.0 }}\n\
             budget: {{ iterations: 4 }}\ninitial_design: {{ points: 2 }}\n{model}\
             policies:\n  - name: Lookahead\n    {policy}\n"
        )
    };
    let kg = "policy: { type: kg, fantasies: 4 }";
    insta::assert_snapshot!("capability_missing_kg", rejected(&spec(bump, kg)));
    let ts = "acquisition: { type: thompson }";
    insta::assert_snapshot!("capability_missing_thompson", rejected(&spec(bump, ts)));
    let bmsei = "policy: { type: bmsei, fantasies: [1] }";
    insta::assert_snapshot!("capability_no_cost_model", rejected(&spec(MODEL, bmsei)));
    for policy in [kg, ts] {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("spec.yaml"), spec(MODEL, policy)).unwrap();
        let out = xtask_in(dir.path(), &["validate", "spec.yaml"]);
        assert!(out.status.success(), "{policy}: {}", stderr(&out));
    }
}

/// `--only` with a policy named in another case suggests that policy (`EI`), not the
/// policy whose letters merely resemble it most.
#[test]
fn only_with_a_policy_in_another_case_suggests_it() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!("{VALID}  - name: EI\n    acquisition: {{ type: ei }}\n{MODEL}");
    std::fs::write(dir.path().join("spec.yaml"), text).unwrap();
    let err = refused(
        dir.path(),
        &[
            "run",
            "spec.yaml",
            "--only",
            "ei",
            "--out",
            "out",
            "--no-report",
        ],
    );
    assert!(
        err.contains("--only \"ei\" names no policy of this spec; did you mean \"EI\"?"),
        "{err}"
    );
}

/// `validate` refuses exactly what `run --smoke` refuses in the `smoke:` section, and both
/// point at the line inside `smoke:`.
#[test]
fn validate_checks_the_smoke_overrides_where_they_are_written() {
    let dir = tempfile::tempdir().unwrap();
    let text = format!("{VALID}smoke:\n  replications: 1\n  budget: {{ iterations: 0 }}\n");
    std::fs::write(dir.path().join("spec.yaml"), text).unwrap();
    let validated = refused(dir.path(), &["validate", "spec.yaml"]);
    let smoke_run = refused(
        dir.path(),
        &["run", "spec.yaml", "--smoke", "--out", "out", "--no-report"],
    );
    for err in [&validated, &smoke_run] {
        assert!(
            err.contains("spec.yaml:10:11: `smoke.budget`: ")
                && err.contains("`iterations` must be at least 1, got 0"),
            "{err}"
        );
    }
    assert!(!dir.path().join("out").exists());
    insta::assert_snapshot!("smoke_budget_zero", validated);
}

/// Initial designs, budgets and optimiser settings whose decisions would take hours are
/// refused with the CPU-time estimate; a raised `max_cpu_hours` admits them.
#[test]
fn decisions_that_would_run_for_hours_are_refused() {
    let text = format!(
        "{}initial_design: {{ type: sobol, points: 5000 }}\n{MODEL}",
        VALID.replace("iterations: 2", "iterations: 50").replace(
            "policy: { type: random_search }",
            "acquisition: { type: ei }"
        )
    );
    let err = run_writes_nothing(&text);
    assert!(
        err.contains("CPU hours per run") && err.contains("limits.max_cpu_hours = 24 hours"),
        "{err}"
    );
    insta::assert_snapshot!("huge_initial_design", err);
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("spec.yaml"),
        format!("{text}limits: {{ max_cpu_hours: 100 }}\n"),
    )
    .unwrap();
    let out = xtask_in(dir.path(), &["validate", "spec.yaml"]);
    assert!(out.status.success(), "{}", stderr(&out));
}

/// Six runs: two policies × three replications.
const SIX_RUNS: &str = "\
name: six
replications: 3
problem: { type: ackley, dim: 2 }
budget: { iterations: 2 }
policies:
  - name: Random
    policy: { type: random_search }
  - name: Sobol
    policy: { type: random_search }
";

#[test]
fn slurm_refuses_control_characters_in_every_flag_and_writes_nothing() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("spec.yaml"), VALID).unwrap();
    let before = tree(root.path());
    let injected = "gpu\n#SBATCH --qos=urgent";
    for flag in [
        "--partition",
        "--account",
        "--job-name",
        "--dir",
        "--out",
        "--binary",
        "--mem",
        "--time",
    ] {
        let err = refused(root.path(), &["slurm", "spec.yaml", flag, injected]);
        assert!(
            err.contains(&format!("{flag} \"gpu\\n#SBATCH --qos=urgent\"")),
            "{flag}: the message does not name the flag and its value:\n{err}"
        );
        assert_eq!(
            tree(root.path()),
            before,
            "{flag}: slurm wrote files:\n{err}"
        );
    }
    insta::assert_snapshot!(
        "slurm_control_character",
        refused(
            root.path(),
            &[
                "slurm",
                "spec.yaml",
                "--partition",
                "gpu\n#SBATCH --qos=urgent"
            ]
        )
    );
}

#[test]
fn slurm_reproduce_refuses_an_unknown_paper_and_a_selection_of_its_own_and_writes_nothing() {
    let root = workspace_root();
    let jobs = tempfile::tempdir().unwrap();
    let dir = jobs.path().join("jobs");
    let dir = dir.to_str().unwrap();
    let slurm = |extra: &[&str]| {
        let mut args = vec!["slurm", "--dir", dir];
        args.extend_from_slice(extra);
        let err = refused(&root, &args);
        assert!(
            !jobs.path().join("jobs").exists(),
            "slurm wrote files:\n{err}"
        );
        err
    };
    insta::assert_snapshot!(
        "slurm_reproduce_unknown_paper",
        slurm(&["--reproduce", "pbgj"])
    );
    insta::assert_snapshot!(
        "slurm_reproduce_with_a_selection",
        slurm(&["--reproduce", "000", "--only", "PBGI"])
    );
    insta::assert_snapshot!(
        "slurm_rounds_without_reproduce",
        slurm(&["specs/quickstart.yaml", "--rounds", "3"])
    );
    assert!(
        slurm(&["--reproduce", "000", "--rounds", "0"]).contains("--rounds must be at least 1")
    );
    assert!(slurm(&["--reproduce", "000", "--time", "soon"]).contains("--time \"soon\""));
}

#[test]
fn slurm_caps_the_array_at_the_sweeps_run_count_and_says_so() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("spec.yaml"), SIX_RUNS).unwrap();
    for (extra, runs) in [(&[][..], 6), (&["--only", "Random"][..], 3)] {
        let mut args = vec!["slurm", "spec.yaml", "--dir", "s", "--shards", "1000000"];
        args.extend_from_slice(extra);
        let out = xtask_in(root.path(), &args);
        let stdout = String::from_utf8_lossy(&out.stdout).to_string();
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        assert!(
            stdout.contains(&format!(
                "--shards 1000000: the sweep has {runs} run(s), so the array has {runs} task(s)"
            )),
            "{stdout}"
        );
        let array = std::fs::read_to_string(root.path().join("s/cabo-spec.array.sbatch")).unwrap();
        assert!(
            array.contains(&format!("#SBATCH --array=0-{}\n", runs - 1)),
            "{array}"
        );
        assert!(
            array.contains(&format!("--shard \"${{SLURM_ARRAY_TASK_ID}}/{runs}\"")),
            "{array}"
        );
    }
    // No cap, no note.
    let out = xtask_in(
        root.path(),
        &["slurm", "spec.yaml", "--dir", "s", "--shards", "6"],
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains("--shards"));
}

/// How `sbatch` reads one argument of an `#SBATCH` line: a port of `_get_argument` in Slurm's
/// `src/sbatch/opt.c` (quotes `'` or `"` group, a backslash escapes the next character, an
/// unquoted `#` ends the line).
fn sbatch_argument(line: &str) -> String {
    let (mut arg, mut quote, mut escaped) = (String::new(), None, false);
    for c in line.trim_start().chars() {
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
            continue;
        } else if let Some(q) = quote {
            if c == q {
                quote = None;
                continue;
            }
        } else if c == '"' || c == '\'' {
            quote = Some(c);
            continue;
        } else if c == '#' || c.is_whitespace() {
            break;
        }
        arg.push(c);
    }
    assert_eq!(quote, None, "unmatched quote in {line:?}");
    arg
}

#[test]
fn slurm_quotes_names_and_paths_as_sbatch_and_bash_read_them() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("spec.yaml"), VALID).unwrap();
    let (job, dir, partition) = ("it's \"mine\" #1", "my jobs's dir", "a b");
    let out = xtask_in(
        root.path(),
        &[
            "slurm",
            "spec.yaml",
            "--job-name",
            job,
            "--dir",
            dir,
            "--partition",
            partition,
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(out.status.success(), "{}", stderr(&out));
    let scripts = root.path().join(dir);
    let array = std::fs::read_to_string(scripts.join(format!("{job}.array.sbatch"))).unwrap();
    let directive = |name: &str| {
        let prefix = format!("#SBATCH --{name}=");
        let line = array
            .lines()
            .find_map(|l| l.strip_prefix(&prefix))
            .unwrap_or_else(|| panic!("no {prefix} in\n{array}"));
        sbatch_argument(line)
    };
    assert_eq!(directive("job-name"), job, "{array}");
    assert_eq!(directive("partition"), partition, "{array}");
    let logs = scripts.join("logs/%x-%A_%a.out");
    assert_eq!(directive("output"), logs.display().to_string(), "{array}");
    // The printed command, as a shell reads it, names the submit script.
    let submit = stdout
        .lines()
        .find_map(|l| l.strip_prefix("submit with: bash "))
        .unwrap_or_else(|| panic!("no submit line in {stdout}"));
    let words = std::process::Command::new("bash")
        .args(["-c", &format!("printf '%s\\n' {submit}")])
        .output()
        .unwrap();
    let words = String::from_utf8_lossy(&words.stdout).to_string();
    let expected = scripts.join(format!("{job}.submit.sh"));
    assert_eq!(words, format!("{}\n", expected.display()), "{stdout}");
    // Every script is valid bash.
    for f in ["array.sbatch", "report.sbatch", "submit.sh"] {
        let path = scripts.join(format!("{job}.{f}"));
        let check = std::process::Command::new("bash")
            .arg("-n")
            .arg(&path)
            .output()
            .unwrap();
        assert!(check.status.success(), "{f}: {}", stderr(&check));
    }
}
