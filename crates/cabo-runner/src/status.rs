//! How far a sweep has got, read from the results directory without running anything.
//!
//! For every spec and policy: the replications complete on disk (checked against the same
//! fingerprints `run` uses to skip work, so "complete" here means `run` would skip it), those
//! started but unfinished, the time the complete ones took (from their
//! `rep-<r>.times.jsonl`: the CPU time of the run's thread where recorded, so a sweep that
//! was paused or shared its cores is not mistaken for a slow one; wall time otherwise), and
//! from that an estimate of the run time the rest need, less the work unfinished runs have
//! saved in checkpoints. Long
//! sweeps on shared machines are resumed many times; this answers "what is left, and how
//! long will it take" before deciding where to run it.

use crate::RunOptions;
use crate::study::LoadedStudy;
use crate::sweep::SpecPrints;
use cabo_engine::checkpoint::{Checkpoint, RunIdentity};
use cabo_engine::store::Completion;
use cabo_engine::times::{self, DecisionTimes};
use cabo_spec::LoadedSpec;
use std::fmt::Write;
use std::path::Path;

/// The state of one policy's replications.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicyStatus {
    /// The policy's name.
    pub policy: String,
    /// Replications the spec asks for.
    pub total: usize,
    /// Replications complete on disk for the current spec.
    pub complete: usize,
    /// Replications with records on disk but no completion marker (interrupted or running
    /// now).
    pub started: usize,
    /// Replications complete for an earlier version of the spec: not results of this one
    /// (`run` makes them again, keeping the old ones under `superseded/`).
    pub other_version: usize,
    /// Replications marked complete whose marker is another run's (copied or moved into
    /// this one's place) or whose records disagree with the marker (`run` makes them again).
    pub damaged: usize,
    /// Summed run time of the complete replications, in seconds: the CPU time of the run's
    /// thread where recorded, else wall time.
    pub seconds: f64,
    /// Run time each started replication with a checkpoint of the current spec has saved
    /// in it, in seconds: work a resumed run does not repeat.
    pub banked: Vec<f64>,
}

impl PolicyStatus {
    /// Estimated run time of the replications not yet complete: the mean of the complete
    /// ones for each, less what its own checkpoint has banked (a run that has banked more
    /// than the mean is taken as nearly done, never as paying for the others). `None` when
    /// some are missing and none is complete to measure.
    pub fn remaining_seconds(&self) -> Option<f64> {
        let missing = self.total - self.complete;
        if missing == 0 {
            Some(0.0)
        } else if self.complete == 0 {
            None
        } else {
            let mean = self.seconds / self.complete as f64;
            let resumed: f64 = self.banked.iter().map(|b| (mean - b).max(0.0)).sum();
            let fresh = missing.saturating_sub(self.banked.len());
            Some(resumed + mean * fresh as f64)
        }
    }
}

/// The state of one spec.
#[derive(Debug, Clone, PartialEq)]
pub struct SpecStatus {
    /// The spec's name (its results directory under the output directory).
    pub name: String,
    /// One entry per policy, in spec order.
    pub policies: Vec<PolicyStatus>,
}

/// The state of every run of `specs` that `opts` selects (`--only`, `--replications`,
/// `--smoke`) under `opts.out`.
pub fn sweep_status(specs: &[LoadedSpec], opts: &RunOptions) -> Vec<SpecStatus> {
    specs
        .iter()
        .map(|s| {
            let prints = SpecPrints::new(&opts.out, s, opts.smoke);
            let mut policies: Vec<PolicyStatus> = s
                .spec
                .policies
                .iter()
                .map(|entry| PolicyStatus {
                    policy: entry.name.clone(),
                    total: 0,
                    complete: 0,
                    started: 0,
                    other_version: 0,
                    damaged: 0,
                    seconds: 0.0,
                    banked: Vec::new(),
                })
                .collect();
            let selected = crate::selected_runs(s, opts);
            for id in &selected {
                count_run(s, &prints, *id, &mut policies[id.policy]);
            }
            policies.retain(|p| p.total > 0);
            SpecStatus {
                name: s.spec.name.clone(),
                policies,
            }
        })
        .collect()
}

/// Adds one run's state to its policy's counts.
fn count_run(s: &LoadedSpec, prints: &SpecPrints, id: crate::RunId, status: &mut PolicyStatus) {
    let files = prints.files(s, id.policy, id.replication);
    status.total += 1;
    match prints.completion(s, id.policy, id.replication) {
        Completion::Complete(_) => {
            status.complete += 1;
            status.seconds += run_seconds(&files.times, u64::MAX);
            return;
        }
        Completion::OtherVersion(_) => status.other_version += 1,
        Completion::Damaged(_) => status.damaged += 1,
        Completion::Missing if files.records.is_file() => status.started += 1,
        Completion::Missing => return,
    }
    let identity = RunIdentity {
        fingerprint: prints.runs[id.policy].clone(),
        policy: status.policy.clone(),
        replication: id.replication,
    };
    if let Some(c) = Checkpoint::peek(&files.checkpoint, &identity) {
        status.banked.push(run_seconds(&files.times, c.times_len));
    }
}

/// A run's time from its times file, in seconds: the CPU time of the run's own thread where
/// recorded (work it hands to the thread pool is not counted), else wall time; and the wall
/// time of its fits, decisions and evaluations.
pub fn run_times(path: &Path) -> (f64, f64) {
    times::read_all(path)
        .iter()
        .fold((0.0, 0.0), |(cpu, wall), t| {
            (cpu + t.seconds(), wall + t.wall())
        })
}

/// A run's decisions from its times file: their number and their summed wall time (model
/// fits and the decision, without the evaluation).
pub fn decision_times(path: &Path) -> (usize, f64) {
    let t = times::read_all(path);
    (t.len(), t.iter().map(DecisionTimes::decision).sum())
}

/// The time of the decisions in the first `len` bytes of a run's times file, each by
/// [`DecisionTimes::seconds`] (0 when the file is missing; unreadable lines are skipped: the
/// times are informative, never part of a result).
fn run_seconds(path: &Path, len: u64) -> f64 {
    times::read(path, len)
        .iter()
        .map(DecisionTimes::seconds)
        .sum()
}

/// A table of `specs` (and whether each study is complete): per policy the replications
/// complete and started, the mean run time and the estimated remaining run time, with a
/// line per spec and a total. Run times add up over runs; a sweep on `T` worker threads
/// needs about `1/T` of that in wall-clock time.
pub fn render(specs: &[SpecStatus], studies: &[(&LoadedStudy, bool)]) -> String {
    let mut out = String::new();
    let width = specs
        .iter()
        .flat_map(|s| s.policies.iter().map(|p| p.policy.len() + 2))
        .chain(specs.iter().map(|s| s.name.len()))
        .chain([5])
        .max()
        .unwrap_or(5);
    let _ = writeln!(
        out,
        "{:width$}  {:>9}  {:>7}  {:>10}  {:>10}",
        "", "complete", "started", "mean run", "remaining"
    );
    let mut notes = Vec::new();
    let (mut done, mut total, mut left, mut unknown) = (0, 0, 0.0, 0usize);
    for s in specs {
        let d: usize = s.policies.iter().map(|p| p.complete).sum();
        let t: usize = s.policies.iter().map(|p| p.total).sum();
        let _ = writeln!(out, "{:width$}  {:>9}", s.name, format!("{d}/{t}"));
        notes.extend(spec_notes(s));
        for p in &s.policies {
            let mean = (p.complete > 0).then(|| p.seconds / p.complete as f64);
            let remaining = p.remaining_seconds();
            match remaining {
                Some(r) => left += r,
                None => unknown += p.total - p.complete,
            }
            let _ = writeln!(
                out,
                "{:width$}  {:>9}  {:>7}  {:>10}  {:>10}",
                format!("  {}", p.policy),
                format!("{}/{}", p.complete, p.total),
                p.started,
                mean.map_or("-".into(), duration),
                remaining.map_or("?".into(), duration),
            );
        }
        done += d;
        total += t;
    }
    for (study, complete) in studies {
        let _ = writeln!(
            out,
            "{:width$}  {:>9}",
            study.file.name,
            if *complete { "study 1/1" } else { "study 0/1" }
        );
    }
    let _ = write!(
        out,
        "{:width$}  {:>9}  {:>7}  {:>10}  {:>10}",
        "total",
        format!("{done}/{total}"),
        "",
        "",
        duration(left)
    );
    if unknown > 0 {
        let _ = write!(
            out,
            "  + {unknown} run(s) of policies with none complete to time"
        );
    }
    out.push('\n');
    for n in notes {
        let _ = writeln!(out, "{n}");
    }
    out
}

/// What `status` says under the table about a spec's runs it does not count: those of an
/// earlier version of the spec and damaged ones.
fn spec_notes(s: &SpecStatus) -> Vec<String> {
    let mut notes = Vec::new();
    let old: usize = s.policies.iter().map(|p| p.other_version).sum();
    let damaged: usize = s.policies.iter().map(|p| p.damaged).sum();
    if old > 0 {
        notes.push(format!(
            "{}: {old} run(s) of an earlier version of this spec (not counted; `run` makes \
             them again and keeps the old ones under superseded/)",
            s.name
        ));
    }
    if damaged > 0 {
        notes.push(format!(
            "{}: {damaged} run(s) damaged: their completion marker is another run's, or \
             their records disagree with it (not counted; `run` makes them again)",
            s.name
        ));
    }
    notes
}

/// `s` seconds as seconds, minutes, hours or days, three significant figures at most.
pub fn duration(s: f64) -> String {
    if s < 60.0 {
        format!("{s:.1} s")
    } else if s < 3600.0 {
        format!("{:.1} min", s / 60.0)
    } else if s < 86_400.0 {
        format!("{:.1} h", s / 3600.0)
    } else {
        format!("{:.1} d", s / 86_400.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remaining_time_is_the_mean_of_complete_runs_times_the_missing_ones() {
        let mut p = PolicyStatus {
            policy: "EI".into(),
            total: 16,
            complete: 4,
            started: 1,
            other_version: 0,
            damaged: 0,
            seconds: 40.0,
            banked: Vec::new(),
        };
        assert_eq!(p.remaining_seconds(), Some(120.0));
        // The started run has checkpointed 4 s of its work.
        p.banked = vec![4.0];
        assert_eq!(p.remaining_seconds(), Some(116.0));
        // A started run that has banked more than the mean is nearly done, but the eleven
        // runs not yet started still take the mean each.
        p.banked = vec![500.0];
        assert_eq!(p.remaining_seconds(), Some(110.0));
        p.complete = 14;
        p.seconds = 140.0;
        assert_eq!(p.remaining_seconds(), Some(10.0));
        p.started = 2;
        p.banked = vec![500.0, 500.0];
        assert_eq!(p.remaining_seconds(), Some(0.0));
        p.banked = Vec::new();
        p.complete = 0;
        p.seconds = 0.0;
        assert_eq!(p.remaining_seconds(), None);
        p.complete = 16;
        assert_eq!(p.remaining_seconds(), Some(0.0));
    }

    #[test]
    fn run_time_counts_cpu_time_where_recorded_and_wall_time_elsewhere() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rep-0.times.jsonl");
        // A decision paused for 100 s of wall time that used 2 s of CPU, then one recorded
        // before CPU times were, then a line cut off by an interruption.
        let lines = [
            r#"{"iter":3,"fit_s":0.5,"decide_s":101.0,"evaluate_s":0.5,"cpu_s":2.0}"#,
            r#"{"iter":4,"fit_s":0.25,"decide_s":3.0,"evaluate_s":0.75}"#,
            r#"{"iter":5,"fit_s":0.25,"dec"#,
        ];
        std::fs::write(&path, lines.join("\n")).unwrap();
        assert_eq!(run_seconds(&path, u64::MAX), 2.0 + 4.0);
        // Only what a checkpoint covered: the first line.
        assert_eq!(run_seconds(&path, lines[0].len() as u64 + 1), 2.0);
        assert_eq!(run_seconds(&dir.path().join("missing"), u64::MAX), 0.0);
    }

    #[test]
    fn durations_pick_a_readable_unit() {
        assert_eq!(duration(12.34), "12.3 s");
        assert_eq!(duration(90.0), "1.5 min");
        assert_eq!(duration(5400.0), "1.5 h");
        assert_eq!(duration(3.0 * 86_400.0), "3.0 d");
    }
}
