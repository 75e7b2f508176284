//! Results a researcher can trust, through the real binary: no everyday command overwrites,
//! mixes or silently accepts a damaged result, and the report always describes the whole
//! spec as it is now.

mod common;

use common::xtask;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

/// A spec file and a results directory in a temporary directory.
struct Sweep {
    _tmp: tempfile::TempDir,
    spec: PathBuf,
    out: PathBuf,
}

impl Sweep {
    /// A sweep of `text` (a spec named `t`).
    fn new(text: &str) -> Sweep {
        let tmp = tempfile::tempdir().unwrap();
        let spec = tmp.path().join("t.yaml");
        std::fs::write(&spec, text).unwrap();
        let out = tmp.path().join("results");
        Sweep {
            _tmp: tmp,
            spec,
            out,
        }
    }

    /// Runs `cmd` (run, status, report) on the spec with `extra` flags; returns stderr (and
    /// stdout, for status), asserting success.
    fn ok(&self, cmd: &str, extra: &[&str]) -> String {
        let o = self.call(cmd, extra);
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(o.status.success(), "{cmd} {extra:?} failed:\n{text}");
        assert!(!text.contains("panicked"), "{text}");
        text
    }

    fn call(&self, cmd: &str, extra: &[&str]) -> Output {
        let mut args = vec![
            cmd,
            self.spec.to_str().unwrap(),
            "--out",
            self.out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        xtask(&args)
    }

    /// The results directory of the full spec.
    fn dir(&self) -> PathBuf {
        self.out.join("t")
    }
}

/// Every file under `root` but wall times, with its bytes, by path relative to `root`.
fn files(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    common::result_files(root).into_iter().collect()
}

/// Whether `status`'s total line counts `done` (as "complete/total").
fn total_is(status: &str, done: &str) -> bool {
    status
        .lines()
        .any(|l| l.starts_with("total") && l.split_whitespace().nth(1) == Some(done))
}

/// The files of the report and manifest of a results directory.
const REPORT_FILES: &[&str] = &["report.md", "summary.csv", "run.json", "spec.json"];

fn read(dir: &Path, file: &str) -> String {
    std::fs::read_to_string(dir.join(file))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.join(file).display()))
}

/// Two policies, two replications, a cost budget whose last evaluation overshoots, and a
/// smoke variant with a smaller budget.
const SPEC: &str = "\
name: t
replications: 2
problem: { type: ackley, dim: 2 }
cost: { type: linear_mean, scale: 20, offset: 0.05 }
budget: { cost: 60 }
initial_design: { points: 3 }
model: { type: exact_gp, kernel: { type: rbf, lengthscale: 0.3 }, fit: fixed }
policies:
  - name: EI
    acquisition: { type: ei }
  - name: EIPC
    acquisition: { type: ei_per_cost }
optimizer: { raw_samples: 16, restarts: 1, max_iters: 10 }
smoke: { budget: { cost: 25 } }
";

#[test]
fn smoke_results_never_share_files_with_full_results() {
    let s = Sweep::new(SPEC);
    s.ok("run", &[]);
    let full = files(&s.dir());
    let stderr = s.ok("run", &["--smoke"]);
    assert!(stderr.contains("results in"), "{stderr}");
    let smoke = s.dir().join("smoke");
    assert!(smoke.join("EI/rep-0.json").is_file(), "{stderr}");
    // Every full result is still there, byte for byte.
    let after = files(&s.dir());
    for (path, bytes) in &full {
        assert!(after.get(path) == Some(bytes), "{} changed", path.display());
    }
    // Status and report tell the two apart.
    let status = s.ok("status", &["--smoke"]);
    assert!(total_is(&status, "4/4"), "{status}");
    let smoke_spec = read(&smoke, "spec.json");
    assert!(smoke_spec.contains("25"), "{smoke_spec}");
    assert!(read(&s.dir(), "spec.json").contains("60"));
    let report = s.ok("report", &["--smoke"]);
    assert!(report.contains("smoke"), "{report}");
    // The full report is untouched by the smoke report.
    assert_eq!(
        files(&s.dir()).get(Path::new("report.md")),
        full.get(Path::new("report.md"))
    );
}

#[test]
fn a_narrower_rerun_leaves_the_whole_specs_report_as_it_was() {
    let s = Sweep::new(SPEC);
    s.ok("run", &[]);
    let before: Vec<String> = REPORT_FILES.iter().map(|f| read(&s.dir(), f)).collect();
    for extra in [&["--only", "EI"][..], &["--replications", "1"][..]] {
        let stderr = s.ok("run", extra);
        assert!(stderr.contains("0 run(s) executed"), "{stderr}");
        for (f, old) in REPORT_FILES.iter().zip(&before) {
            assert_eq!(&read(&s.dir(), f), old, "{f} changed after run {extra:?}");
        }
    }
    // `report` rebuilds the same whole report.
    s.ok("report", &[]);
    for (f, old) in REPORT_FILES.iter().zip(&before) {
        assert_eq!(&read(&s.dir(), f), old, "{f} changed after report");
    }
    // More replications than the spec has is an error, not a silent change of the spec.
    let o = s.call("run", &["--replications", "3"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("more than the spec's 2"), "{stderr}");
}

#[test]
fn a_partial_sweep_records_the_whole_spec_and_reports_what_is_missing() {
    let s = Sweep::new(SPEC);
    s.ok("run", &["--only", "EI", "--replications", "1"]);
    let spec: serde_json::Value = serde_json::from_str(&read(&s.dir(), "spec.json")).unwrap();
    assert_eq!(spec["replications"], 2);
    assert_eq!(spec["policies"].as_array().unwrap().len(), 2);
    assert!(!s.dir().join("report.md").exists());
    assert!(!s.dir().join("run.json").exists());
    let stderr = s.ok("report", &[]);
    assert!(
        stderr.contains("3 run(s) of the spec are not in the report"),
        "{stderr}"
    );
    let md = read(&s.dir(), "report.md");
    assert!(md.contains("**incomplete**: 3 of 4 runs"), "{md}");
    assert!(md.contains("| EIPC | 1 | not complete |"), "{md}");
    assert!(md.contains("| EI | 1 | not complete |"), "{md}");
}

#[test]
fn from_replication_runs_the_later_replications_alone_and_refuses_an_empty_selection() {
    let s = Sweep::new(SPEC);
    let stderr = s.ok("run", &["--only", "EI", "--from-replication", "1"]);
    assert!(stderr.contains("1 run(s) executed"), "{stderr}");
    assert!(s.dir().join("EI/rep-1.json").exists());
    assert!(!s.dir().join("EI/rep-0.json").exists());
    let o = s.call("run", &["--replications", "1", "--from-replication", "1"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--from-replication 1 leaves no replication to run"),
        "{stderr}"
    );
}

#[test]
fn runs_of_an_earlier_spec_version_are_kept_apart_and_never_counted() {
    let s = Sweep::new(SPEC);
    s.ok("run", &[]);
    let old_report = read(&s.dir(), "report.md");
    let old_ei = std::fs::read(s.dir().join("EI/rep-0.jsonl")).unwrap();
    std::fs::write(&s.spec, SPEC.replace("cost: 60", "cost: 70")).unwrap();
    let stderr = s.ok("run", &["--only", "EI"]);
    assert!(stderr.contains("2 run(s) executed"), "{stderr}");
    // The old version's report is not left next to the new spec; nothing is deleted.
    assert!(
        !s.dir().join("report.md").exists(),
        "a stale report.md is presented"
    );
    let superseded = s.dir().join("superseded");
    let kept = files(&superseded);
    assert!(
        kept.iter()
            .any(|(p, b)| p.ends_with("report.md") && *b == old_report.as_bytes()),
        "the old report was not kept: {:?}",
        kept.keys().collect::<Vec<_>>()
    );
    assert!(
        kept.iter()
            .any(|(p, b)| p.ends_with("EI/rep-0.jsonl") && *b == old_ei),
        "the old EI records were not kept"
    );
    let status = s.ok("status", &[]);
    assert!(
        status.contains("2 run(s) of an earlier version of this spec"),
        "{status}"
    );
    assert!(total_is(&status, "2/4"), "{status}");
    s.ok("report", &[]);
    let md = read(&s.dir(), "report.md");
    assert!(md.contains("2 of an earlier version of the spec"), "{md}");
    assert!(
        md.contains("| EIPC | 0 | complete for an earlier version"),
        "{md}"
    );
    // Only the new version's runs count: EIPC has no curve yet.
    assert!(md.contains("| EIPC | 0 | — |"), "{md}");
    // Completing the sweep gives the report of a fresh run of the new version, byte for byte.
    s.ok("run", &[]);
    let fresh = Sweep::new(&SPEC.replace("cost: 60", "cost: 70"));
    fresh.ok("run", &[]);
    for f in ["report.md", "summary.csv", "spec.json", "report.svg"] {
        assert_eq!(read(&s.dir(), f), read(&fresh.dir(), f), "{f}");
    }
    // The manifest too, but for the spec file's path it names.
    let manifest = |d: &Path| {
        let mut v: serde_json::Value = serde_json::from_str(&read(d, "run.json")).unwrap();
        v.as_object_mut().unwrap().remove("source");
        v
    };
    assert_eq!(manifest(&s.dir()), manifest(&fresh.dir()));
}

#[test]
fn a_damaged_record_file_is_detected_and_made_again_to_the_same_bytes() {
    let s = Sweep::new(SPEC);
    s.ok("run", &[]);
    let records = s.dir().join("EIPC/rep-1.jsonl");
    let good = std::fs::read(&records).unwrap();
    let report = read(&s.dir(), "report.md");
    let text = String::from_utf8(good.clone()).unwrap();
    let first_lines: String = text.lines().take(4).map(|l| format!("{l}\n")).collect();
    let damage: [(&str, Option<Vec<u8>>); 4] = [
        ("cut to whole lines", Some(first_lines.into_bytes())),
        ("cut mid-line", Some(good[..good.len() - 7].to_vec())),
        ("deleted", None),
        (
            "edited in place",
            Some(text.replacen("\"y\":", "\"y\": ", 1).into_bytes()[..good.len()].to_vec()),
        ),
    ];
    for (how, bytes) in damage {
        match &bytes {
            Some(b) => std::fs::write(&records, b).unwrap(),
            None => std::fs::remove_file(&records).unwrap(),
        }
        let status = s.ok("status", &[]);
        assert!(status.contains("1 run(s) damaged"), "{how}: {status}");
        let stderr = s.ok("run", &[]);
        assert!(stderr.contains("damaged result"), "{how}: {stderr}");
        assert!(
            stderr.contains("1 run(s) executed, 3 already complete"),
            "{how}: {stderr}"
        );
        assert!(
            std::fs::read(&records).unwrap() == good,
            "{how}: the rerun differs"
        );
        assert_eq!(read(&s.dir(), "report.md"), report, "{how}");
    }
}

#[test]
fn a_checkpoint_of_another_run_is_discarded_with_a_warning() {
    let s = Sweep::new(&SPEC.replace("cost: 60", "cost: 400"));
    // Every run stops after three decisions, leaving a checkpoint.
    s.ok(
        "run",
        &[
            "--only",
            "EI",
            "--pause-after",
            "3",
            "--checkpoint-every",
            "0",
        ],
    );
    let ei = s.dir().join("EI");
    let (c0, c1) = (
        ei.join("rep-0.checkpoint.cbor"),
        ei.join("rep-1.checkpoint.cbor"),
    );
    let (b0, b1) = (std::fs::read(&c0).unwrap(), std::fs::read(&c1).unwrap());
    std::fs::write(&c0, &b1).unwrap();
    std::fs::write(&c1, &b0).unwrap();
    let stderr = s.ok("run", &["--only", "EI"]);
    assert!(
        stderr.contains(
            "checkpoint belongs to another replication (EI / rep 1), not to this run: discarded"
        ),
        "{stderr}"
    );
    assert!(
        stderr.contains("checkpoint belongs to another replication (EI / rep 0), not to this run"),
        "{stderr}"
    );
    assert!(
        stderr.contains("2 run(s) executed, 0 already complete"),
        "{stderr}"
    );
    let clean = Sweep::new(&SPEC.replace("cost: 60", "cost: 400"));
    clean.ok("run", &["--only", "EI"]);
    for f in [
        "EI/rep-0.jsonl",
        "EI/rep-1.jsonl",
        "EI/rep-0.json",
        "EI/rep-1.json",
    ] {
        assert_eq!(read(&s.dir(), f), read(&clean.dir(), f), "{f}");
    }
}

/// The numbers after "| policy |" rows of `report.md`'s table "At the budget".
fn at_budget_rows(md: &str) -> Vec<(String, String)> {
    let section = md.split("## At the budget").nth(1).unwrap();
    let table = section.split("\n## ").next().unwrap();
    table
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| policy"))
        .map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            (cells[1].to_string(), cells[3].to_string())
        })
        .collect()
}

#[test]
fn console_manifest_and_report_give_the_same_numbers_at_the_budget() {
    let s = Sweep::new(SPEC);
    let stderr = s.ok("run", &[]);
    assert!(
        stderr.contains("one that overshoots it does not count"),
        "{stderr}"
    );
    let md = read(&s.dir(), "report.md");
    let rows = at_budget_rows(&md);
    assert_eq!(rows.len(), 2, "{md}");
    let manifest: serde_json::Value = serde_json::from_str(&read(&s.dir(), "run.json")).unwrap();
    let csv = read(&s.dir(), "summary.csv");
    for (policy, median) in rows {
        let entry = manifest["summary"]["policies"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["policy"] == policy.as_str())
            .unwrap();
        let m = entry["median"].as_f64().unwrap();
        // The report's four significant digits, the manifest's full value.
        let shown: f64 = median.parse().unwrap();
        assert!(
            (shown - m).abs() <= 5e-4 * m.abs().max(1e-3),
            "{policy}: {shown} vs {m}"
        );
        // The console prints the manifest's value.
        assert!(
            stderr.contains(&format!("{m:.6}")),
            "{policy}: {m:.6} not in\n{stderr}"
        );
        // summary.csv's last grid point is the same value, to the bit.
        let last = csv
            .lines()
            .rfind(|l| l.starts_with(&format!("{policy},")))
            .unwrap();
        let csv_median: f64 = last.split(',').nth(3).unwrap().parse().unwrap();
        assert_eq!(csv_median, m, "{policy}");
        // Within the budget: no evaluation counted past it.
        assert!(entry["cost_median"].as_f64().unwrap() <= 60.0);
    }
}

/// Copies the result files of `from` (`<policy>/rep-<r>`) over those of `to` in `dir`.
fn copy_run(dir: &Path, from: &str, to: &str) {
    for ext in ["jsonl", "json", "times.jsonl"] {
        let (a, b) = (
            dir.join(format!("{from}.{ext}")),
            dir.join(format!("{to}.{ext}")),
        );
        std::fs::copy(&a, &b).unwrap_or_else(|e| panic!("{}: {e}", a.display()));
    }
}

/// How a results directory is damaged, what does it, and how many runs it damages.
type Damage<'a> = (&'a str, &'a dyn Fn(&Path), usize);

#[test]
fn a_finished_run_copied_or_swapped_into_another_slot_is_damaged_and_made_again() {
    let s = Sweep::new(SPEC);
    s.ok("run", &[]);
    let untouched = files(&s.dir());
    let swap = |d: &Path| {
        copy_run(d, "EI/rep-0", "EI/swap");
        copy_run(d, "EI/rep-1", "EI/rep-0");
        copy_run(d, "EI/swap", "EI/rep-1");
        for ext in ["jsonl", "json", "times.jsonl"] {
            std::fs::remove_file(d.join(format!("EI/swap.{ext}"))).unwrap();
        }
    };
    let damage: [Damage; 3] = [
        (
            "rep 1 copied over rep 0",
            &|d| copy_run(d, "EI/rep-1", "EI/rep-0"),
            1,
        ),
        ("reps 0 and 1 swapped", &swap, 2),
        (
            "another policy's rep 0 copied over",
            &|d| copy_run(d, "EIPC/rep-0", "EI/rep-0"),
            1,
        ),
    ];
    for (how, act, damaged) in damage {
        act(&s.dir());
        let status = s.ok("status", &[]);
        assert!(
            status.contains(&format!("{damaged} run(s) damaged")),
            "{how}: {status}"
        );
        assert!(
            total_is(&status, &format!("{}/4", 4 - damaged)),
            "{how}: {status}"
        );
        // The report leaves them out, and names them.
        let stderr = s.ok("report", &[]);
        assert!(
            stderr.contains(&format!("{damaged} damaged")),
            "{how}: {stderr}"
        );
        let md = read(&s.dir(), "report.md");
        assert!(
            md.contains("rep-0.json is the completion marker of"),
            "{how}: {md}"
        );
        let stderr = s.ok("run", &[]);
        assert!(stderr.contains("damaged result"), "{how}: {stderr}");
        assert!(
            stderr.contains(&format!(
                "{damaged} run(s) executed, {} already complete",
                4 - damaged
            )),
            "{how}: {stderr}"
        );
        // Made again to the bytes of the untouched run, report and manifest included.
        let after = files(&s.dir());
        assert_eq!(
            after.keys().collect::<Vec<_>>(),
            untouched.keys().collect::<Vec<_>>(),
            "{how}"
        );
        for (path, bytes) in &untouched {
            assert!(after[path] == *bytes, "{how}: {} differs", path.display());
        }
    }
}

/// `text` with the first digit of the first record's `"y"` changed: the same length, another
/// number.
fn edit_first_y(text: &str) -> String {
    let at = text.find("\"y\":").unwrap();
    let digit = at + text[at..].find(|c: char| c.is_ascii_digit()).unwrap();
    let new = if &text[digit..=digit] == "1" {
        "2"
    } else {
        "1"
    };
    format!("{}{new}{}", &text[..digit], &text[digit + 1..])
}

#[test]
fn an_in_progress_record_edited_to_the_same_length_makes_the_run_start_again() {
    let spec = SPEC.replace("cost: 60", "cost: 400");
    let only = ["--only", "EI", "--replications", "1"];
    let s = Sweep::new(&spec);
    s.ok(
        "run",
        &[
            &only[..],
            &["--pause-after", "3", "--checkpoint-every", "0"],
        ]
        .concat(),
    );
    let records = s.dir().join("EI/rep-0.jsonl");
    assert!(s.dir().join("EI/rep-0.checkpoint.cbor").is_file());
    let text = read(&s.dir(), "EI/rep-0.jsonl");
    let edited = edit_first_y(&text);
    assert_eq!(edited.len(), text.len());
    assert_ne!(edited, text);
    std::fs::write(&records, &edited).unwrap();
    let stderr = s.ok("run", &only);
    assert!(
        stderr.contains("records edited since their checkpoint was saved"),
        "{stderr}"
    );
    assert!(
        stderr.contains("checkpoint discarded, the run starts again"),
        "{stderr}"
    );
    // The final results are an uninterrupted run's.
    let clean = Sweep::new(&spec);
    clean.ok("run", &only);
    for f in ["EI/rep-0.jsonl", "EI/rep-0.json"] {
        assert_eq!(read(&s.dir(), f), read(&clean.dir(), f), "{f}");
    }
}

#[test]
fn report_of_an_edited_spec_not_yet_run_leaves_the_other_versions_report() {
    let s = Sweep::new(SPEC);
    s.ok("run", &[]);
    let top = [
        "spec.json",
        "run.json",
        "report.md",
        "summary.csv",
        "report.svg",
    ];
    let before: Vec<Vec<u8>> = top
        .iter()
        .map(|f| std::fs::read(s.dir().join(f)).unwrap())
        .collect();
    // One more replication: the two that exist still count for the edited spec.
    std::fs::write(&s.spec, SPEC.replace("replications: 2", "replications: 3")).unwrap();
    let o = s.call("report", &[]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("this version of the spec has not been run yet"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
    for (f, old) in top.iter().zip(&before) {
        assert!(
            std::fs::read(s.dir().join(f)).unwrap() == *old,
            "report changed {f}"
        );
    }
    // The next run moves the old spec and the old report aside together, byte for byte.
    s.ok("run", &[]);
    let superseded = s.dir().join("superseded");
    let kept: Vec<PathBuf> = std::fs::read_dir(&superseded)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("spec-")
        })
        .collect();
    assert_eq!(kept.len(), 1, "{kept:?}");
    for (f, old) in top.iter().zip(&before) {
        assert!(
            std::fs::read(kept[0].join(f)).unwrap() == *old,
            "{f} was not kept with its spec"
        );
    }
    let md = read(&s.dir(), "report.md");
    assert!(!md.contains("incomplete"), "{md}");
    assert!(read(&s.dir(), "spec.json").contains("\"replications\": 3"));
}

#[test]
fn a_checkpoint_of_another_policy_is_named_as_such() {
    let s = Sweep::new(&SPEC.replace("cost: 60", "cost: 400"));
    let one = ["--replications", "1"];
    s.ok(
        "run",
        &[&one[..], &["--pause-after", "3", "--checkpoint-every", "0"]].concat(),
    );
    std::fs::copy(
        s.dir().join("EIPC/rep-0.checkpoint.cbor"),
        s.dir().join("EI/rep-0.checkpoint.cbor"),
    )
    .unwrap();
    let stderr = s.ok("run", &[&one[..], &["--only", "EI"]].concat());
    let line = stderr
        .lines()
        .find(|l| l.contains("checkpoint belongs to"))
        .unwrap_or_else(|| panic!("no warning:\n{stderr}"));
    // Without the time stamp and the temporary directory.
    let warning =
        line[line.find("WARN").unwrap()..].replace(s.dir().to_str().unwrap(), "<results>/t");
    insta::assert_snapshot!(warning);
}
