//! The `external` problem through the real binary: a Python program as the objective
//! (`tests/external/objective.py`, which can misbehave on request and counts its calls).
//! Skipped with a printed reason where `python3` is missing.

mod common;

use common::{result_files, xtask};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Whether `python3` runs here; the tests say why they skip otherwise.
fn python() -> bool {
    let ok = Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("skipped: python3 is not installed, and the objective is a Python program");
    }
    ok
}

fn objective() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/external/objective.py")
}

/// A spec named `name` in `dir` whose objective runs in `mode`, with extra problem keys
/// `problem_extra` and the policies `policies` (YAML list items).
fn spec(dir: &Path, name: &str, mode: &str, problem_extra: &str, rest: &str) -> PathBuf {
    let text = format!(
        r#"name: {name}
replications: 2
problem:
  type: external
  command: [python3, {objective}, {mode}]
  bounds: [[-1, 2], [0, 1]]
  names: [lr, depth]
  metrics: [x_sum]
  optimum: 0.0
  timeout_s: 20
{problem_extra}
initial_design: {{ type: sobol, points: 4 }}
model: {{ type: exact_gp, kernel: {{ type: matern52 }}, fit: map, prior: gamma, noise: {{ min: 1.0e-6, max: 1.0e-2 }}, standardize: true }}
optimizer: {{ raw_samples: 32, restarts: 1, max_iters: 20 }}
{rest}
"#,
        objective = objective().display()
    );
    let path = dir.join(format!("{name}.yaml"));
    std::fs::write(&path, text).unwrap();
    path
}

/// EI and EI per unit cost (log-GP costs) for `evals` evaluations, costs reported.
fn ei_spec(dir: &Path, name: &str, mode: &str, evals: usize) -> PathBuf {
    spec(
        dir,
        name,
        mode,
        "  cost: reported",
        &format!(
            "budget: {{ iterations: {evals} }}
cost_model: {{ type: log_gp, kernel: {{ type: matern52 }}, fit: map, prior: gamma, standardize: true }}
policies:
  - {{ name: EI, acquisition: {{ type: ei }} }}
  - {{ name: EIPC, acquisition: {{ type: ei_per_cost }} }}"
        ),
    )
}

/// Gives the program of `spec` ten minutes an answer instead of 20 s: a test that interrupts
/// a hanging program must see cabo stop for the signal, not for the time limit.
fn patient(spec: &Path) {
    let text = std::fs::read_to_string(spec)
        .unwrap()
        .replace("timeout_s: 20", "timeout_s: 600");
    std::fs::write(spec, text).unwrap();
}

fn run(spec: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "run",
        spec.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--no-report",
    ];
    args.extend_from_slice(extra);
    xtask(&args)
}

/// How many times each evaluation index was asked, from the program's `calls.txt`.
fn calls(dir: &Path) -> BTreeMap<usize, usize> {
    let mut out = BTreeMap::new();
    for line in std::fs::read_to_string(dir.join("calls.txt"))
        .unwrap_or_default()
        .lines()
    {
        *out.entry(line.parse().unwrap()).or_default() += 1;
    }
    out
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn an_external_run_writes_the_same_bytes_twice() {
    if !python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let spec = ei_spec(dir.path(), "twice", "ok", 6);
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    for out in [&a, &b] {
        let o = run(&spec, out, &["--threads", "2"]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let (fa, fb) = (result_files(&a), result_files(&b));
    assert!(fa.len() > 8, "too few result files: {fa:?}");
    assert_eq!(
        fa, fb,
        "two runs of a deterministic external objective differ"
    );
    // The records carry the program's metric and the program's standard error is logged.
    let records = std::fs::read_to_string(a.join("twice/EI/rep-0.jsonl")).unwrap();
    assert!(records.contains(r#""metrics":{"x_sum":"#), "{records}");
    let log = std::fs::read_to_string(a.join("twice/EI/rep-0.log")).unwrap();
    assert!(log.starts_with("eval 0 at ["), "{log}");
    // Every request names the run's replication.
    for rep in 0..2 {
        let log = std::fs::read_to_string(a.join(format!("twice/EIPC/rep-{rep}.log"))).unwrap();
        let tagged = format!(", replication {rep})");
        assert_eq!(
            log.lines().filter(|l| l.ends_with(&tagged)).count(),
            10,
            "{log}"
        );
    }
    // 2 policies × 2 replications × 10 evaluations, each asked once.
    let asked = calls(dir.path());
    assert_eq!(asked.values().sum::<usize>(), 2 * 40);
}

#[test]
fn a_killed_run_never_asks_the_program_again_for_an_answered_evaluation() {
    if !python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let spec = ei_spec(dir.path(), "killed", "slow", 30);
    let out = dir.path().join("results");
    let args = [
        "run",
        spec.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--only",
        "EI",
        "--replications",
        "1",
        "--no-report",
    ];
    let mut child = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(args)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Killed before its first checkpoint (one a minute): the rerun starts from the
    // beginning, and only the journal keeps it from asking again.
    let deadline = Instant::now() + Duration::from_secs(120);
    while calls(dir.path()).len() < 12 {
        assert!(
            Instant::now() < deadline,
            "the program was not asked in time"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    // The program finishes the request in flight (its answer goes nowhere) and ends.
    std::thread::sleep(Duration::from_millis(300));
    let run_dir = out.join("killed/EI");
    assert!(
        !run_dir.join("rep-0.json").exists(),
        "completed before the kill"
    );
    let before = calls(dir.path());

    let rerun = xtask(&args);
    assert!(rerun.status.success(), "{}", stderr(&rerun));
    let after = calls(dir.path());
    // Every evaluation of the run was asked; only one in flight at the kill may be asked twice.
    assert_eq!(after.len(), 34, "{after:?}");
    let twice: Vec<_> = after.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.len() <= 1, "asked again: {twice:?}");
    if let Some((i, n)) = twice.first() {
        assert_eq!(**n, 2);
        assert_eq!(Some(*i), before.keys().next_back(), "not the one in flight");
    }
    // The same bytes as a run never interrupted.
    let clean = dir.path().join("clean");
    let o = xtask(&[
        "run",
        spec.to_str().unwrap(),
        "--out",
        clean.to_str().unwrap(),
        "--only",
        "EI",
        "--replications",
        "1",
        "--no-report",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    for file in ["rep-0.jsonl", "rep-0.json", "rep-0.evaluations.jsonl"] {
        assert_eq!(
            std::fs::read(run_dir.join(file)).unwrap(),
            std::fs::read(clean.join("killed/EI").join(file)).unwrap(),
            "{file} differs from an uninterrupted run"
        );
    }
}

#[test]
fn wall_clock_costs_replay_to_the_same_bytes() {
    if !python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let spec = spec(
        dir.path(),
        "wall",
        "wall",
        "  cost: wall_time",
        "budget: { iterations: 6 }
cost_model: { type: log_gp, kernel: { type: matern52 }, fit: map, prior: gamma, standardize: true }
policies:
  - { name: PBGI-U, acquisition: { type: pbgi, lambda: 0.01 } }",
    );
    let validated = xtask(&["validate", spec.to_str().unwrap()]);
    assert!(
        stderr(&validated).contains("a fresh rerun measures other times"),
        "validate does not warn: {}",
        stderr(&validated)
    );
    let out = dir.path().join("results");
    let o = run(&spec, &out, &["--replications", "1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let run_dir = out.join("wall/PBGI-U");
    let first = std::fs::read(run_dir.join("rep-0.jsonl")).unwrap();
    let asked = calls(dir.path());
    // Lose the results but keep the journal: the rerun asks nothing and writes the same.
    for file in ["rep-0.jsonl", "rep-0.json", "rep-0.times.jsonl"] {
        std::fs::remove_file(run_dir.join(file)).unwrap();
    }
    let o = run(&spec, &out, &["--replications", "1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(calls(dir.path()), asked, "the program was asked again");
    assert_eq!(std::fs::read(run_dir.join("rep-0.jsonl")).unwrap(), first);
}

#[test]
fn a_misbehaving_program_ends_the_run_with_its_error() {
    if !python() {
        return;
    }
    let cases = [
        ("crash", "exited (exit status: 3)", "simulated crash"),
        ("hang", "no answer within timeout_s = 2 s", "eval 2 at"),
        (
            "garbage",
            "is not a JSON object: `epoch 1 loss 0.3`",
            "print logs to standard error",
        ),
        ("error", "reported an error: training diverged", "eval 2 at"),
    ];
    for (mode, expected, also) in cases {
        let dir = tempfile::tempdir().unwrap();
        let spec = ei_spec(dir.path(), mode, mode, 6);
        let text = std::fs::read_to_string(&spec)
            .unwrap()
            .replace("timeout_s: 20", "timeout_s: 2");
        std::fs::write(&spec, text).unwrap();
        let out = dir.path().join("results");
        let o = run(&spec, &out, &["--only", "EI", "--replications", "1"]);
        let err = stderr(&o);
        assert!(!o.status.success(), "{mode}: the run succeeded");
        assert!(err.contains("failed evaluation 2"), "{mode}: {err}");
        assert!(err.contains(expected), "{mode}: {err}");
        let log_path = out.join(format!("{mode}/EI/rep-0.log"));
        assert!(
            err.contains(&log_path.display().to_string()),
            "{mode}: {err}"
        );
        let log = std::fs::read_to_string(&log_path).unwrap();
        assert!(
            log.contains("[cabo] evaluation 2, attempt 1 of 1"),
            "{mode}: {log}"
        );
        assert!(
            err.contains(also) || log.contains(also),
            "{mode}: {err}\n{log}"
        );
        assert!(!out.join(format!("{mode}/EI/rep-0.json")).exists());
        // Nothing was invented: the records end before the failed evaluation.
        let records = std::fs::read_to_string(out.join(format!("{mode}/EI/rep-0.jsonl"))).unwrap();
        assert_eq!(records.lines().count(), 2, "{mode}: {records}");
    }
}

#[test]
fn retries_ask_a_failed_evaluation_again_and_the_results_are_unchanged() {
    if !python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let flaky = ei_spec(dir.path(), "flaky", "flaky", 4);
    let text = std::fs::read_to_string(&flaky)
        .unwrap()
        .replace("timeout_s: 20", "timeout_s: 20\n  retries: 1")
        .replace("name: flaky", "name: same");
    std::fs::write(&flaky, text).unwrap();
    let out = dir.path().join("flaky");
    let o = run(&flaky, &out, &["--only", "EI", "--replications", "1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(calls(dir.path()).values().all(|n| *n == 2));
    let log = std::fs::read_to_string(out.join("same/EI/rep-0.log")).unwrap();
    assert!(
        log.contains("[cabo] evaluation 0, attempt 1 of 2: the program exited"),
        "{log}"
    );

    let other = tempfile::tempdir().unwrap();
    let ok = ei_spec(other.path(), "same", "ok", 4);
    let clean = other.path().join("ok");
    let o = run(&ok, &clean, &["--only", "EI", "--replications", "1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        std::fs::read(out.join("same/EI/rep-0.jsonl")).unwrap(),
        std::fs::read(clean.join("same/EI/rep-0.jsonl")).unwrap()
    );
}

#[test]
fn shards_of_an_external_sweep_merge_into_the_bytes_of_one_sweep() {
    if !python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let spec = ei_spec(dir.path(), "sharded", "ok", 4);
    let (whole, parts) = (dir.path().join("whole"), dir.path().join("parts"));
    let o = run(&spec, &whole, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    for shard in ["0/3", "1/3", "2/3"] {
        let o = run(&spec, &parts, &["--shard", shard]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    assert_eq!(result_files(&whole), result_files(&parts));
}

#[test]
fn a_missing_program_is_refused_before_anything_runs() {
    let dir = tempfile::tempdir().unwrap();
    let spec = dir.path().join("missing.yaml");
    std::fs::write(
        &spec,
        "name: missing
replications: 1
problem: { type: external, command: [./no-such-objective.py], bounds: [[0, 1]], cost: none }
budget: { iterations: 2 }
policies:
  - { name: Random, policy: { type: random_search } }
",
    )
    .unwrap();
    let o = xtask(&["validate", spec.to_str().unwrap()]);
    let err = stderr(&o);
    assert!(!o.status.success(), "{err}");
    assert!(err.contains("missing.yaml:3"), "no line: {err}");
    assert!(err.contains("no program at"), "{err}");
}

/// A failed run of `mode`'s program (EI, one replication, `extra` problem keys): the
/// command's standard error, the run's records and how long it took.
fn failed_run(mode: &str, extra: &str) -> (String, String, Duration) {
    let dir = tempfile::tempdir().unwrap();
    let spec = ei_spec(dir.path(), "step", mode, 6);
    let text = std::fs::read_to_string(&spec)
        .unwrap()
        .replace("timeout_s: 20", &format!("timeout_s: 20{extra}"));
    std::fs::write(&spec, text).unwrap();
    let out = dir.path().join("results");
    let started = Instant::now();
    let o = run(&spec, &out, &["--only", "EI", "--replications", "1"]);
    let took = started.elapsed();
    // The temporary directory varies between runs.
    let err = stderr(&o).replace(&dir.path().display().to_string(), "[tmp]");
    assert_eq!(o.status.code(), Some(1), "{mode}: {err}");
    assert!(
        !out.join("step/EI/rep-0.json").exists(),
        "{mode}: completed"
    );
    let records = std::fs::read_to_string(out.join("step/EI/rep-0.jsonl")).unwrap_or_default();
    (err, records, took)
}

#[test]
fn a_program_out_of_step_is_a_protocol_error_not_a_shifted_result() {
    if !python() {
        return;
    }
    // (mode, the evaluation that fails, what the message says: any one of them)
    let cases: [(&str, usize, &[&str]); 4] = [
        // The extra line is read either before the next request is sent or as its answer.
        (
            "extra-line",
            3,
            &[
                "printed `{\"eval\": 2, ",
                "has `eval`: 2, but evaluation 3 was asked",
            ],
        ),
        (
            "wrong-eval",
            2,
            &["has `eval`: 1, but evaluation 2 was asked: `{\"eval\": 1, \"y\": "],
        ),
        (
            "no-eval",
            2,
            &["has no `eval`: `{\"y\": ", "print {\"eval\": 2, \"y\": …}"],
        ),
        (
            "eager",
            0,
            &[
                "printed `{\"y\": 1.0}` before it was asked",
                "has no `eval`: `{\"y\": 1.0}`",
            ],
        ),
    ];
    for (mode, failed, said) in cases {
        let (err, records, _) = failed_run(mode, "");
        assert!(
            err.contains(&format!("failed evaluation {failed} ")),
            "{mode}: {err}"
        );
        assert!(said.iter().any(|s| err.contains(s)), "{mode}: {err}");
        // Every recorded evaluation is the one its program answered: nothing shifted.
        assert_eq!(records.lines().count(), failed, "{mode}: {records}");
    }
}

/// The line of a `mode` run's error that contains `needle` (the test fails with `missing`
/// and the error where none does), after checking that `recorded` evaluations were recorded.
fn failure_line(mode: &str, recorded: usize, needle: &str, missing: &str) -> String {
    let (err, records, _) = failed_run(mode, "");
    assert_eq!(records.lines().count(), recorded, "{records}");
    err.lines()
        .find(|l| l.contains(needle))
        .unwrap_or_else(|| panic!("{missing}: {err}"))
        .to_string()
}

#[test]
fn a_non_finite_answer_names_the_number_and_the_evaluation() {
    if !python() {
        return;
    }
    let line = failure_line("nan", 2, "failed evaluation", "no failure");
    // This checkout's path varies between machines.
    let line = line.replace(&objective().display().to_string(), "[objective.py]");
    insta::assert_snapshot!(line);
}

/// A finite answer too large to model fails the next decision; the message names the
/// evaluation that caused it, not only the fit or search that failed.
#[test]
fn an_answer_too_large_to_model_is_named_with_its_evaluation() {
    if !python() {
        return;
    }
    // The initial design (4 points) is recorded; the first decision fails.
    let line = failure_line(
        "huge",
        4,
        "evaluation 2 returned y = 1e200",
        "the evaluation is not named",
    );
    insta::assert_snapshot!(line);
}

#[test]
fn output_without_a_newline_is_cut_at_the_line_cap() {
    if !python() {
        return;
    }
    let (err, records, took) = failed_run("long-line", "");
    assert!(
        err.contains("failed evaluation 2 ")
            && err.contains("is longer than 16 MiB without a newline"),
        "{err}"
    );
    assert_eq!(records.lines().count(), 2, "{records}");
    // Well before the spec's 20 s timeout: the cap ends the wait, not the clock.
    assert!(took < Duration::from_secs(15), "took {took:?}");
}

/// The ids in the program's `pids.txt` (every process it started, and their children).
fn pids(dir: &Path) -> Vec<u32> {
    std::fs::read_to_string(dir.join("pids.txt"))
        .unwrap_or_default()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect()
}

/// Whether process `pid` still runs (a zombie, killed and waiting for a parent to reap it,
/// does not).
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z')),
        Err(_) => false,
    }
}

/// Whether process `pid` is gone within two seconds: SIGKILL is delivered asynchronously,
/// so a program killed as cabo exits may still be ending for a moment on a loaded machine.
fn gone_soon(pid: u32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(2);
    while alive(pid) {
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    true
}

/// Starts `run` of `spec` (EI, one replication) as its own process, its output discarded.
fn start_run(spec: &Path, out: &Path) -> std::process::Child {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args([
            "run",
            spec.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--only",
            "EI",
            "--replications",
            "1",
            "--no-report",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Waits until `ready` holds, for at most a minute.
fn wait_until(what: &str, ready: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !ready() {
        assert!(Instant::now() < deadline, "{what}: not in time");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Sends SIGINT to `child` `times` times, then waits for it to exit; its exit code, how long
/// it took and its standard error.
fn interrupt(child: std::process::Child, times: usize) -> (Option<i32>, Duration, String) {
    let started = Instant::now();
    for _ in 0..times {
        let sent = Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
    }
    // Killed if it hangs, so that a failing test ends.
    let id = child.id();
    let watchdog = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(30));
        let _ = Command::new("kill")
            .args(["-KILL", &id.to_string()])
            .status();
    });
    let o = child.wait_with_output().unwrap();
    drop(watchdog);
    (o.status.code(), started.elapsed(), stderr(&o))
}

#[test]
fn an_interrupt_stops_a_retry_loop_at_once() {
    if !python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let spec = ei_spec(dir.path(), "retry", "always-error", 6);
    let text = std::fs::read_to_string(&spec)
        .unwrap()
        .replace("timeout_s: 20", "timeout_s: 20\n  retries: 100");
    std::fs::write(&spec, text).unwrap();
    let out = dir.path().join("results");
    let child = start_run(&spec, &out);
    // The second attempt comes 0.1 s after the first; the third 0.2 s after that.
    wait_until("a retry", || calls(dir.path()).get(&0) >= Some(&2));
    let (code, took, err) = interrupt(child, 1);
    assert_eq!(code, Some(130), "{err}");
    assert!(took < Duration::from_secs(5), "took {took:?}: {err}");
    // Backed off, not a tight loop: a handful of attempts, where one without waits made
    // all 101 before the interrupt.
    let asked = calls(dir.path())[&0];
    assert!(asked < 10, "asked {asked} times");
    let log = std::fs::read_to_string(out.join("retry/EI/rep-0.log")).unwrap();
    assert!(log.lines().count() < 40, "{log}");
    for pid in pids(dir.path()) {
        assert!(gone_soon(pid), "program {pid} outlived cabo");
    }
}

/// Runs spec `name` (EI, one replication) in `dir` with its program in `mode`, waits until
/// the program hangs (it and the child it started have recorded their ids) and interrupts
/// cabo `times` times: its exit code, how long it took to exit, and its standard error.
/// The results are in `dir/results`.
fn interrupt_hung_run(
    dir: &Path,
    name: &str,
    mode: &str,
    times: usize,
) -> (Option<i32>, Duration, String) {
    let spec = ei_spec(dir, name, mode, 4);
    patient(&spec);
    let child = start_run(&spec, &dir.join("results"));
    wait_until("the hang", || pids(dir).len() >= 2);
    interrupt(child, times)
}

#[test]
fn an_interrupt_stops_a_waiting_evaluation_and_the_run_resumes() {
    if !python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (spec, out) = (dir.path().join("same.yaml"), dir.path().join("results"));
    let (code, took, err) = interrupt_hung_run(dir.path(), "same", "hang-once", 1);
    assert_eq!(code, Some(130), "{err}");
    assert!(took < Duration::from_secs(5), "took {took:?}: {err}");
    assert!(err.contains("interrupted: the runs in progress"), "{err}");
    let hung = pids(dir.path());
    for pid in &hung {
        assert!(gone_soon(*pid), "program {pid} outlived the interrupt");
    }
    assert!(!out.join("same/EI/rep-0.json").exists());

    // Started again: the answered evaluations come from the journal, the interrupted one
    // is asked again, and the results are an uninterrupted run's.
    let o = run(&spec, &out, &["--only", "EI", "--replications", "1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let asked = calls(dir.path());
    assert_eq!(asked[&0], 1, "{asked:?}");
    assert_eq!(asked[&1], 1, "{asked:?}");
    assert_eq!(asked[&2], 2, "{asked:?}");
    let other = tempfile::tempdir().unwrap();
    let ok = ei_spec(other.path(), "same", "ok", 4);
    patient(&ok);
    let clean = other.path().join("ok");
    let o = run(&ok, &clean, &["--only", "EI", "--replications", "1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    // The records (the markers differ by the specs' fingerprints: the modes differ).
    assert!(out.join("same/EI/rep-0.json").exists());
    assert_eq!(
        std::fs::read_to_string(out.join("same/EI/rep-0.jsonl")).unwrap(),
        std::fs::read_to_string(clean.join("same/EI/rep-0.jsonl")).unwrap(),
        "the records differ from an uninterrupted run's"
    );
}

#[test]
fn a_second_interrupt_leaves_no_program_behind() {
    if !python() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (code, took, err) = interrupt_hung_run(dir.path(), "twice", "hang", 2);
    assert_eq!(code, Some(130), "{err}");
    assert!(took < Duration::from_secs(5), "took {took:?}: {err}");
    // Killed with their process group, not left to init.
    std::thread::sleep(Duration::from_millis(200));
    for pid in pids(dir.path()) {
        assert!(gone_soon(pid), "process {pid} outlived cabo");
    }
}

/// Four real workers, each running its own copy of the program: killed (SIGKILL) with
/// evaluations in flight, the run resumes — replaying the answers its journal holds in the
/// order they arrived, asking again for the rest — to the bytes of a run never interrupted.
/// The programs answer in a fixed order whatever their timing (`ordered` mode: a seeded
/// sleep, then a wait for the journal to hold the answer before), pairs out of start order.
#[test]
fn four_real_workers_killed_mid_way_resume_to_the_same_bytes() {
    if !python() {
        return;
    }
    let text = |name: &str| {
        format!(
            r#"name: {name}
replications: 1
problem:
  type: external
  command: [python3, {objective}, ordered]
  bounds: [[-1, 2], [0, 1]]
  metrics: [x_sum]
  optimum: 0.0
  timeout_s: 60
  cost: reported
workers: 4
initial_design: {{ type: sobol, points: 5 }}
budget: {{ iterations: 12 }}
model: {{ type: exact_gp, kernel: {{ type: matern52 }}, fit: map, prior: gamma, noise: {{ min: 1.0e-6, max: 1.0e-2 }}, standardize: true }}
optimizer: {{ raw_samples: 32, restarts: 1, max_iters: 20 }}
policies:
  - {{ name: EI, acquisition: {{ type: ei }} }}
"#,
            objective = objective().display()
        )
    };
    let (killed, clean) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let run_in = |dir: &Path| -> Vec<String> {
        let spec = dir.join("workers.yaml");
        std::fs::write(&spec, text("workers")).unwrap();
        let out = dir.join("results");
        [
            "run",
            spec.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--no-report",
            "--checkpoint-every",
            "0",
        ]
        .map(String::from)
        .to_vec()
    };
    let args = run_in(killed.path());
    let mut child = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(&args)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(120);
    while calls(killed.path()).len() < 10 {
        assert!(
            Instant::now() < deadline,
            "the programs were not asked in time"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let run_dir = killed.path().join("results/workers/EI");
    assert!(
        !run_dir.join("rep-0.json").exists(),
        "completed before the kill"
    );
    let rerun = xtask(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(rerun.status.success(), "{}", stderr(&rerun));
    assert!(
        stderr(&rerun).contains("resumed from a checkpoint"),
        "{}",
        stderr(&rerun)
    );
    let args = run_in(clean.path());
    let o = xtask(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(o.status.success(), "{}", stderr(&o));
    for file in ["rep-0.jsonl", "rep-0.json", "rep-0.evaluations.jsonl"] {
        assert_eq!(
            std::fs::read(run_dir.join(file)).unwrap(),
            std::fs::read(clean.path().join("results/workers/EI").join(file)).unwrap(),
            "{file} differs from an uninterrupted run"
        );
    }
    // Answers arrived out of start order, and decisions saw points pending.
    let records = std::fs::read_to_string(run_dir.join("rep-0.jsonl")).unwrap();
    let evaluations: Vec<u64> = records
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["evaluation"]
                .as_u64()
                .unwrap()
        })
        .collect();
    assert_eq!(evaluations[4..9], [4, 6, 5, 8, 7], "{records}");
    assert!(records.contains("\"pending\":[5,"), "{records}");
}
