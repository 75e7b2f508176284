//! The runtime view of a report: how long policies take to decide, from the counted runs'
//! `rep-<r>.times.jsonl` (read by [`cabo_engine::times`]).
//!
//! Asked for by a spec's `report: { runtime: <time> }` or by `cargo xtask report --times
//! [<time>]`, where `<time>` is one of [`TIME_METRIC_NAMES`](cabo_spec::TIME_METRIC_NAMES):
//!
//! - `runtime.svg` / `runtime.png` and `runtime.csv`: the chosen time against the policy
//!   iteration (the k-th decision of a run, the initial design excluded), median and
//!   quartiles over the replications that made a k-th decision (seed 000's Fig. 9 plots the
//!   acquisition time so);
//! - `runtime.md` and `runtime-table.csv`: per policy, over every decision of its runs, the
//!   mean and median decision time (fits and acquisition), the mean and median acquisition
//!   time, the mean fit time, and the CPU time per iteration and in total (seed 001's Table
//!   1 reports mean seconds per acquisition, seed 002's App. C.4 CPU seconds of one
//!   iteration).
//!
//! Every decision a run made counts, the one that overshot a cost budget too: its time was
//! spent. The times depend on the machine and on what else ran on it, so they are kept out
//! of `report.md`, `summary.csv` and every snapshot; rerunning a spec gives other numbers.

use super::aggregate::{Point, stats};
use super::markdown::sig;
use super::{Runs, csv_field, num};
use cabo_core::study::{Figure, Series, SeriesPoint};
use cabo_engine::store;
use cabo_engine::times::{self, DecisionTimes};
use cabo_spec::TimeMetric;
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// The times of one policy's counted runs, each in decision order.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicyTimes {
    /// Policy name.
    pub policy: String,
    /// One entry per counted run: its decisions' times.
    pub runs: Vec<Vec<DecisionTimes>>,
}

/// One policy's line of the runtime table: statistics over every decision of its runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Row {
    /// Counted runs.
    pub runs: usize,
    /// Decisions over those runs.
    pub decisions: usize,
    /// Wall seconds of fits and acquisition, per decision.
    pub decision: Point,
    /// Wall seconds of the acquisition alone, per decision.
    pub acquisition: Point,
    /// Wall seconds of the model fits, per decision.
    pub fit: Point,
    /// CPU seconds of an iteration (wall where not recorded).
    pub cpu: Point,
    /// CPU seconds of every iteration of every run, summed.
    pub cpu_total: f64,
}

/// One policy in the runtime view.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicyRuntime {
    /// Policy name.
    pub policy: String,
    /// Its line of the table.
    pub row: Row,
    /// The chosen time at iterations 1, 2, …: statistics over the runs that made that
    /// decision.
    pub by_iteration: Vec<Point>,
}

/// The runtime view of one spec's results.
#[derive(Debug, Clone, PartialEq)]
pub struct Runtime {
    /// Spec name.
    pub spec: String,
    /// The time drawn against the iteration.
    pub metric: TimeMetric,
    /// One entry per policy, in spec order.
    pub policies: Vec<PolicyRuntime>,
}

/// The time `metric` of one decision.
pub fn value(t: &DecisionTimes, metric: TimeMetric) -> f64 {
    match metric {
        TimeMetric::DecisionTime => t.decision(),
        TimeMetric::AcquisitionTime => t.decide_s,
        TimeMetric::FitTime => t.fit_s,
        TimeMetric::CpuTime => t.seconds(),
    }
}

/// The human name and unit of `metric`, for axes and headings.
pub fn label(metric: TimeMetric) -> &'static str {
    match metric {
        TimeMetric::DecisionTime => "decision time (fits and acquisition, wall s)",
        TimeMetric::AcquisitionTime => "acquisition time (wall s)",
        TimeMetric::FitTime => "model fit time (wall s)",
        TimeMetric::CpuTime => "CPU time of the iteration (s)",
    }
}

/// Statistics of `metric` at iterations 1 … (the longest run's decisions), each over the
/// runs that made that decision.
pub fn by_iteration(runs: &[Vec<DecisionTimes>], metric: TimeMetric) -> Vec<Point> {
    let longest = runs.iter().map(Vec::len).max().unwrap_or(0);
    (0..longest)
        .map(|k| {
            let values = runs
                .iter()
                .filter_map(|r| r.get(k))
                .map(|t| value(t, metric))
                .collect();
            stats((k + 1) as f64, values)
        })
        .collect()
}

/// The table row of one policy's runs.
pub fn row(runs: &[Vec<DecisionTimes>]) -> Row {
    let all = || runs.iter().flatten();
    let pooled = |metric| stats(0.0, all().map(|t| value(t, metric)).collect());
    let cpu = pooled(TimeMetric::CpuTime);
    Row {
        runs: runs.len(),
        decisions: all().count(),
        decision: pooled(TimeMetric::DecisionTime),
        acquisition: pooled(TimeMetric::AcquisitionTime),
        fit: pooled(TimeMetric::FitTime),
        // The mean times the count, so the total is summed in the same (sorted) order.
        cpu_total: if cpu.n == 0 {
            0.0
        } else {
            cpu.mean * cpu.n as f64
        },
        cpu,
    }
}

impl Runtime {
    /// The runtime view of `policies`' times.
    pub fn new(spec: &str, metric: TimeMetric, policies: &[PolicyTimes]) -> Runtime {
        Runtime {
            spec: spec.to_string(),
            metric,
            policies: policies
                .iter()
                .map(|p| PolicyRuntime {
                    policy: p.policy.clone(),
                    row: row(&p.runs),
                    by_iteration: by_iteration(&p.runs, metric),
                })
                .collect(),
        }
    }
}

impl Runs {
    /// The runtime view of these runs, drawing `metric` against the iteration.
    pub fn runtime(&self, metric: TimeMetric) -> Runtime {
        let policies: Vec<PolicyTimes> = self
            .times_files()
            .into_iter()
            .map(|(policy, files)| PolicyTimes {
                policy: policy.to_string(),
                runs: files.iter().map(|f| times::read_all(f)).collect(),
            })
            .collect();
        Runtime::new(self.name(), metric, &policies)
    }
}

/// `runtime.csv`: every policy at every iteration.
pub fn csv(rt: &Runtime) -> String {
    let mut out = String::from("policy,iteration,time,n,median,q25,q75,mean,stderr\n");
    for p in &rt.policies {
        for s in &p.by_iteration {
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{},{},{}",
                csv_field(&p.policy),
                s.x,
                rt.metric.name(),
                s.n,
                num(s.median),
                num(s.q25),
                num(s.q75),
                num(s.mean),
                num(s.stderr)
            );
        }
    }
    out
}

/// `runtime-table.csv`: the table of every runtime view given, one line per (spec, policy).
pub fn table_csv(views: &[Runtime]) -> String {
    let mut out = String::from(
        "spec,policy,runs,decisions,decision_mean_s,decision_median_s,acquisition_mean_s,\
         acquisition_median_s,fit_mean_s,fit_median_s,cpu_mean_s,cpu_total_s\n",
    );
    for rt in views {
        for p in &rt.policies {
            let r = &p.row;
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{},{},{},{},{},{}",
                csv_field(&rt.spec),
                csv_field(&p.policy),
                r.runs,
                r.decisions,
                num(r.decision.mean),
                num(r.decision.median),
                num(r.acquisition.mean),
                num(r.acquisition.median),
                num(r.fit.mean),
                num(r.fit.median),
                num(r.cpu.mean),
                num(r.cpu_total)
            );
        }
    }
    out
}

/// The Markdown table of every runtime view given: one line per policy, with the spec's
/// name first when there are several (one problem per spec).
pub fn table_markdown(views: &[Runtime]) -> String {
    let several = views.len() > 1;
    let mut out = String::new();
    let spec_col = if several { "| spec " } else { "" };
    let _ = writeln!(
        out,
        "{spec_col}| policy | runs | decisions | decision mean (s) | decision median (s) | \
         acquisition mean (s) | acquisition median (s) | fit mean (s) | CPU per iteration (s) \
         | CPU total (s) |"
    );
    let _ = writeln!(
        out,
        "{}|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        if several { "|---" } else { "" }
    );
    for rt in views {
        for p in &rt.policies {
            let r = &p.row;
            let spec = if several {
                format!("| {} ", rt.spec)
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "{spec}| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                p.policy,
                r.runs,
                r.decisions,
                sig(r.decision.mean),
                sig(r.decision.median),
                sig(r.acquisition.mean),
                sig(r.acquisition.median),
                sig(r.fit.mean),
                sig(r.cpu.mean),
                sig(r.cpu_total)
            );
        }
    }
    out
}

/// What the numbers are, for the page and the console.
pub const NOTE: &str = "Times from the counted runs' `rep-<r>.times.jsonl`, on the machine \
    that made them: wall times count waiting for a core on a shared machine; CPU time is that \
    of the run's own thread (work it hands to other worker threads is not in it: exact with \
    `--threads 1`). Decision = model fits + computing and optimising the acquisition; the \
    initial design is excluded.";

/// `runtime.md`: the note, the figure and the table.
pub fn markdown(rt: &Runtime) -> String {
    let mut out = format!("# {}: runtime\n\n{NOTE}\n\n", rt.spec);
    let _ = writeln!(
        out,
        "![{} against iteration](runtime.svg)\n\n{} against the iteration: median and \
         quartiles over the runs that made that decision (`runtime.csv`).\n",
        label(rt.metric),
        label(rt.metric)
    );
    out.push_str(&table_markdown(std::slice::from_ref(rt)));
    out
}

/// The figure: the chosen time against the iteration, one line per policy with its
/// quartile band.
pub fn figure(rt: &Runtime) -> Figure {
    Figure {
        name: "runtime".into(),
        title: format!("{}: {}", rt.spec, rt.metric.name().replace('_', " ")),
        x_label: "iteration (policy decisions)".into(),
        y_label: format!("{} (log scale; median, quartile band)", label(rt.metric)),
        log_x: false,
        series: rt
            .policies
            .iter()
            .map(|p| Series {
                name: format!("{} (n = {})", p.policy, p.row.runs),
                points: p
                    .by_iteration
                    .iter()
                    .map(|s| SeriesPoint {
                        x: s.x,
                        y: s.median,
                        low: Some(s.q25),
                        high: Some(s.q75),
                    })
                    .collect(),
            })
            .collect(),
    }
}

/// Writes the runtime view into `dir` (the [`times::RUNTIME_FILES`]); the paths written.
pub fn write(dir: &Path, rt: &Runtime) -> Result<Vec<PathBuf>, String> {
    let fig = figure(rt);
    let bytes: [Vec<u8>; 5] = [
        markdown(rt).into_bytes(),
        csv(rt).into_bytes(),
        table_csv(std::slice::from_ref(rt)).into_bytes(),
        super::plot::times_svg(&fig)?.into_bytes(),
        super::plot::times_png(&fig)?,
    ];
    let files = times::RUNTIME_FILES.into_iter().zip(bytes);
    let mut written = Vec::new();
    for (name, bytes) in files {
        let p = dir.join(name);
        store::write_atomic(&p, &bytes)
            .map_err(|e| format!("{}: cannot write: {e}", p.display()))?;
        written.push(p);
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes `lines` as a times file in `dir` and reads it back as the runner does.
    fn run(dir: &Path, name: &str, lines: &[&str]) -> Vec<DecisionTimes> {
        let path = dir.join(name);
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        times::read_all(&path)
    }

    /// Three runs of one policy, with decision times (fit + acquisition) 2, 3, 4 / 1, 5 /
    /// 3, 7, 6, 2 s, evaluations of 0.5 s, and CPU times 1 s a line (first run), none
    /// recorded (second: wall time counts) and 2 s a line (third).
    fn three_runs(dir: &Path) -> PolicyTimes {
        let a = run(
            dir,
            "rep-0.times.jsonl",
            &[
                r#"{"iter":6,"fit_s":0.5,"decide_s":1.5,"evaluate_s":0.5,"cpu_s":1.0}"#,
                r#"{"iter":7,"fit_s":0.5,"decide_s":2.5,"evaluate_s":0.5,"cpu_s":1.0}"#,
                r#"{"iter":8,"fit_s":1.0,"decide_s":3.0,"evaluate_s":0.5,"cpu_s":1.0}"#,
            ],
        );
        let b = run(
            dir,
            "rep-1.times.jsonl",
            &[
                r#"{"iter":6,"fit_s":0.25,"decide_s":0.75,"evaluate_s":0.5}"#,
                r#"{"iter":7,"fit_s":1.0,"decide_s":4.0,"evaluate_s":0.5}"#,
            ],
        );
        let c = run(
            dir,
            "rep-2.times.jsonl",
            &[
                r#"{"iter":6,"fit_s":1.0,"decide_s":2.0,"evaluate_s":0.5,"cpu_s":2.0}"#,
                r#"{"iter":7,"fit_s":2.0,"decide_s":5.0,"evaluate_s":0.5,"cpu_s":2.0}"#,
                r#"{"iter":8,"fit_s":0.5,"decide_s":5.5,"evaluate_s":0.5,"cpu_s":2.0}"#,
                r#"{"iter":9,"fit_s":1.0,"decide_s":1.0,"evaluate_s":0.5,"cpu_s":2.0}"#,
            ],
        );
        PolicyTimes {
            policy: "EI".into(),
            runs: vec![a, b, c],
        }
    }

    #[test]
    fn decision_times_per_iteration_have_the_hand_computed_quartiles() {
        let dir = tempfile::tempdir().unwrap();
        let p = three_runs(dir.path());
        let pts = by_iteration(&p.runs, TimeMetric::DecisionTime);
        assert_eq!(pts.len(), 4, "the longest run made 4 decisions");
        let at = |k: usize| {
            let s = pts[k - 1];
            (s.x, s.n, s.median, s.q25, s.q75, s.mean)
        };
        // Iteration 1: {2, 1, 3}; 2: {3, 5, 7}; 3: {4, 6}; 4: {2}.
        assert_eq!(at(1), (1.0, 3, 2.0, 1.5, 2.5, 2.0));
        assert_eq!(at(2), (2.0, 3, 5.0, 4.0, 6.0, 5.0));
        assert_eq!(at(3), (3.0, 2, 5.0, 4.5, 5.5, 5.0));
        assert_eq!(at(4), (4.0, 1, 2.0, 2.0, 2.0, 2.0));
        // {3, 5, 7}: sample variance 4, standard error sqrt(4 / 3).
        assert_eq!(pts[1].stderr, (4.0f64 / 3.0).sqrt());
        assert!(pts[3].stderr.is_nan());
        // Acquisition time alone at iteration 1: {1.5, 0.75, 2}.
        let acq = by_iteration(&p.runs, TimeMetric::AcquisitionTime);
        assert_eq!((acq[0].median, acq[0].q25, acq[0].q75), (1.5, 1.125, 1.75));
        // CPU at iteration 1: {1, 1.5 (wall: nothing recorded), 2}.
        let cpu = by_iteration(&p.runs, TimeMetric::CpuTime);
        assert_eq!((cpu[0].median, cpu[0].q25, cpu[0].q75), (1.5, 1.25, 1.75));
    }

    #[test]
    fn the_table_pools_every_decision_of_a_policy() {
        let dir = tempfile::tempdir().unwrap();
        let r = row(&three_runs(dir.path()).runs);
        assert_eq!((r.runs, r.decisions), (3, 9));
        // Decisions sorted: 1 2 2 3 3 4 5 6 7.
        assert_eq!(r.decision.median, 3.0);
        assert_eq!(r.decision.mean, 33.0 / 9.0);
        assert_eq!((r.decision.q25, r.decision.q75), (2.0, 5.0));
        // Acquisitions sorted: 0.75 1 1.5 2 2.5 3 4 5 5.5 (sum 25.25).
        assert_eq!(r.acquisition.median, 2.5);
        assert_eq!(r.acquisition.mean, 25.25 / 9.0);
        // Fits sum to 7.75, median 1.
        assert_eq!((r.fit.mean, r.fit.median), (7.75 / 9.0, 1.0));
        // CPU: 3 × 1 s, 1.5 + 5.5 s of wall time, 4 × 2 s.
        assert_eq!(r.cpu_total, 18.0);
        assert_eq!(r.cpu.mean, 2.0);
        let empty = row(&[]);
        assert_eq!((empty.decisions, empty.cpu_total), (0, 0.0));
        assert!(empty.decision.mean.is_nan());
    }

    #[test]
    fn files_hold_the_same_numbers() {
        let dir = tempfile::tempdir().unwrap();
        let ei = three_runs(dir.path());
        let never = PolicyTimes {
            policy: "Random, seeded".into(),
            runs: vec![Vec::new()],
        };
        let rt = Runtime::new("ackley", TimeMetric::DecisionTime, &[ei, never]);
        let csv = csv(&rt);
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(
            lines[0],
            "policy,iteration,time,n,median,q25,q75,mean,stderr"
        );
        // {1, 2, 3}: sample variance 1, standard error sqrt(1 / 3).
        let se = (1.0f64 / 3.0).sqrt();
        assert_eq!(lines[1], format!("EI,1,decision_time,3,2,1.5,2.5,2,{se}"));
        assert_eq!(lines[4], "EI,4,decision_time,1,2,2,2,2,");
        assert_eq!(
            lines.len(),
            5,
            "a policy without decisions has no iteration"
        );
        let table = table_csv(std::slice::from_ref(&rt));
        let rows: Vec<&str> = table.lines().collect();
        assert_eq!(
            rows[1],
            format!(
                "ackley,EI,3,9,{},3,{},2.5,{},1,2,18",
                33.0 / 9.0,
                25.25 / 9.0,
                7.75 / 9.0
            )
        );
        assert_eq!(rows[2], "ackley,\"Random, seeded\",1,0,,,,,,,,0");
        let md = table_markdown(&[rt.clone(), rt.clone()]);
        assert!(md.starts_with("| spec | policy |"), "{md}");
        assert!(
            md.contains("| ackley | EI | 3 | 9 | 3.667 | 3.000 | 2.806 | 2.500 |"),
            "{md}"
        );
        let one = table_markdown(std::slice::from_ref(&rt));
        assert!(one.starts_with("| policy |"), "{one}");
        let written = write(dir.path(), &rt).unwrap();
        assert_eq!(written.len(), 5);
        let svg = std::fs::read_to_string(dir.path().join("runtime.svg")).unwrap();
        assert!(svg.contains("EI (n = 3)"));
    }
}
