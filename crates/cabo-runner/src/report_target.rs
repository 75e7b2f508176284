//! `cargo xtask report`: which results directories a list of arguments names (directories,
//! or spec files whose results are under `--out`), and writing one directory's report again
//! from its files.
//!
//! A spec file is checked against its results: a spec edited since its last run is refused
//! rather than reported under the other version's numbers.

use crate::{RunError, RunOptions, load_experiments, resolve_spec_paths, spec_dir, study};
use cabo_report::Written;
use cabo_report::runtime::Runtime;
use cabo_spec::TimeMetric;
use std::path::{Path, PathBuf};

/// A results directory to report, with the spec to check its runs against when the target
/// was a spec file (the spec as it is now, not the `spec.json` of the last run).
#[derive(Debug, Clone)]
pub struct ReportTarget {
    /// The results directory (`<out>/<name>`, or `…/smoke`).
    pub dir: PathBuf,
    /// The spec file's resolved spec, where the target was a spec file.
    pub spec: Option<serde_json::Value>,
    /// The spec file's directory, where the target was a spec file (its problem's relative
    /// data paths resolve against it).
    pub spec_dir: Option<PathBuf>,
}

/// What reporting one target wrote.
#[derive(Debug)]
pub enum Reported {
    /// A study's report files.
    Study {
        /// How many files were written.
        files: usize,
    },
    /// A comparison spec's report.
    Spec {
        /// The files written.
        written: Box<Written>,
        /// How many of the spec's runs are not in the report, and which (see
        /// [`cabo_report::describe_left_out`]); zero and empty when all are.
        left_out: (usize, String),
        /// The runtime view, where it was asked for (by `times` or the spec).
        runtime: Option<Runtime>,
    },
}

/// The results directories `targets` names: each directory as it is, each spec file (or
/// glob) as its comparisons' and studies' directories under `out` (`…/smoke` with `smoke`).
pub fn report_targets(
    targets: &[String],
    out: &Path,
    smoke: bool,
) -> Result<Vec<ReportTarget>, RunError> {
    let mut found = Vec::new();
    for t in targets {
        let p = PathBuf::from(t);
        if p.is_dir() {
            found.push(ReportTarget {
                dir: p,
                spec: None,
                spec_dir: None,
            });
            continue;
        }
        let paths = resolve_spec_paths(std::slice::from_ref(t)).map_err(|e| times_hint(e, t))?;
        let opts = RunOptions {
            smoke,
            ..RunOptions::default()
        };
        let experiments = load_experiments(&paths, &opts)?;
        for s in &experiments.comparisons {
            found.push(ReportTarget {
                dir: spec_dir(out, s, smoke),
                spec: serde_json::to_value(&s.spec).ok(),
                spec_dir: s.path.parent().map(Path::to_path_buf),
            });
        }
        found.extend(experiments.studies.iter().map(|s| ReportTarget {
            dir: study::result_dir(s, out),
            spec: None,
            spec_dir: None,
        }));
    }
    Ok(found)
}

/// Writes one results directory's report; with `times`, its runtime view too.
pub fn report_one(target: &ReportTarget, times: Option<TimeMetric>) -> Result<Reported, String> {
    let d = &target.dir;
    if study::is_study_dir(d) {
        let files = study::write_report(d)?;
        return Ok(Reported::Study { files: files.len() });
    }
    let spec = match &target.spec {
        Some(spec) => {
            // A spec edited since its last run: the report there is the other version's.
            cabo_report::check_version(d, spec)?;
            spec.clone()
        }
        None => cabo_report::read_spec_json(d)?,
    };
    let runs = cabo_report::load(d, &spec, target.spec_dir.as_deref())?;
    let mut built = runs.report(None)?;
    if times.is_some() {
        built.input.report.runtime = times;
    }
    let written = cabo_report::write(d, &runs, &built)?;
    let left_out = (
        built.left_out.len(),
        cabo_report::describe_left_out(&built.left_out),
    );
    Ok(Reported::Spec {
        written: Box::new(written),
        left_out,
        runtime: built.input.report.runtime.map(|m| runs.runtime(m)),
    })
}

/// A target that is a time's name was meant for `--times`, which takes its value only after
/// `=` (`--times decision_time` reads as `--times` and a target): the error says so.
fn times_hint(e: RunError, target: &str) -> RunError {
    match e {
        RunError::Setup(m) if TimeMetric::parse("--times", target).is_ok() => RunError::Setup(
            format!("{m}; to choose the runtime view's time, write `--times={target}`"),
        ),
        e => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_given_as_a_target_is_pointed_to_times() {
        let dir = tempfile::tempdir().unwrap();
        let hinted = report_targets(&["decision_time".into()], dir.path(), false).unwrap_err();
        let m = hinted.to_string();
        assert!(m.contains("decision_time: no such spec file"), "{m}");
        assert!(m.contains("write `--times=decision_time`"), "{m}");
        let plain = report_targets(&["no-such.yaml".into()], dir.path(), false).unwrap_err();
        assert!(!plain.to_string().contains("--times"), "{plain}");
    }
}
