//! Reading a run's `rep-<r>.times.jsonl`: one line per decision with the wall times of its
//! model fits, the rest of the decision and its evaluation, and the CPU time the run's
//! thread spent on all three (see [`crate::cpu_time`]).
//!
//! One reader serves every consumer of these files — `status`'s time estimates, the
//! gallery's CPU hours and the reports' runtime view — so they agree on what a line means.
//! Times are informative, never part of a result: a missing file reads as no decisions and
//! an unreadable line (a line cut off by an interruption) is skipped.

use serde::Deserialize;
use std::path::Path;

/// One line of `rep-<r>.times.jsonl`: one decision of a run.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
pub struct DecisionTimes {
    /// Wall seconds of the model fits the decision asked for.
    pub fit_s: f64,
    /// Wall seconds of the rest of the decision (computing and optimising the acquisition).
    pub decide_s: f64,
    /// Wall seconds of the evaluation.
    pub evaluate_s: f64,
    /// CPU seconds of the run's thread over the fit, decision and evaluation, where the
    /// platform says.
    #[serde(default)]
    pub cpu_s: Option<f64>,
}

impl DecisionTimes {
    /// The iteration's CPU time when recorded, else its wall time (fit, decision,
    /// evaluation).
    pub fn seconds(&self) -> f64 {
        self.cpu_s.unwrap_or(self.wall())
    }

    /// The wall time of the fit, the decision and the evaluation.
    pub fn wall(&self) -> f64 {
        self.fit_s + self.decide_s + self.evaluate_s
    }

    /// The wall time of the decision: model fits and the acquisition, without the
    /// evaluation.
    pub fn decision(&self) -> f64 {
        self.fit_s + self.decide_s
    }
}

/// The readable lines among the first `len` bytes of a run's times file, in decision order
/// (the k-th line is the run's k-th policy decision).
pub fn read(path: &Path, len: u64) -> Vec<DecisionTimes> {
    let bytes = std::fs::read(path).unwrap_or_default();
    let end = bytes.len().min(usize::try_from(len).unwrap_or(usize::MAX));
    String::from_utf8_lossy(&bytes[..end])
        .lines()
        .filter_map(|l| serde_json::from_str::<DecisionTimes>(l).ok())
        .collect()
}

/// Every readable line of a run's times file (see [`read`]).
pub fn read_all(path: &Path) -> Vec<DecisionTimes> {
    read(path, u64::MAX)
}

/// Whether a file of a results directory holds times, which differ between equal runs: a
/// run's `rep-<r>.times.jsonl` and the runtime view's files
/// ([`RUNTIME_FILES`]). Every other result file is byte-identical across
/// reruns, thread counts and shardings.
pub fn varies_between_runs(path: &Path) -> bool {
    let name = path.file_name().map(|n| n.to_string_lossy());
    name.is_some_and(|n| n.ends_with(".times.jsonl") || RUNTIME_FILES.contains(&n.as_ref()))
}

/// The files of the report's runtime view in a spec's results directory, made from
/// `rep-<r>.times.jsonl`: like those, they differ between equal runs (see
/// [`varies_between_runs`]).
pub const RUNTIME_FILES: [&str; 5] = [
    "runtime.md",
    "runtime.csv",
    "runtime-table.csv",
    "runtime.svg",
    "runtime.png",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_read_in_order_and_broken_ones_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rep-0.times.jsonl");
        let lines = [
            r#"{"iter":6,"fit_s":0.5,"decide_s":1.5,"evaluate_s":0.25,"cpu_s":2.0}"#,
            r#"{"iter":7,"fit_s":0.25,"decide_s":3.0,"evaluate_s":0.75}"#,
            r#"{"iter":8,"fit_s":0.25,"dec"#,
        ];
        std::fs::write(&path, lines.join("\n")).unwrap();
        let t = read_all(&path);
        assert_eq!(t.len(), 2);
        assert_eq!(
            (t[0].decision(), t[0].wall(), t[0].seconds()),
            (2.0, 2.25, 2.0)
        );
        assert_eq!((t[1].decision(), t[1].seconds()), (3.25, 4.0));
        assert_eq!(read(&path, lines[0].len() as u64).len(), 1);
        assert!(read_all(&dir.path().join("missing")).is_empty());
    }

    #[test]
    fn only_times_and_the_runtime_view_vary_between_runs() {
        for varies in [
            "EI/rep-0.times.jsonl",
            "runtime.md",
            "smoke/runtime-table.csv",
        ] {
            assert!(varies_between_runs(Path::new(varies)), "{varies}");
        }
        for fixed in ["EI/rep-0.jsonl", "report.md", "summary.csv", "runtime"] {
            assert!(!varies_between_runs(Path::new(fixed)), "{fixed}");
        }
    }
}
