//! The value regret is measured against, one per problem instance (replication).
//!
//! A run records its regret against its problem's
//! [`Problem::optimum`](cabo_core::Problem::optimum), floored at zero. Where that optimum is a global search's estimate (a GP sample in eight or more
//! dimensions), a run can find a better basin than the search: its recorded regret is then
//! 0, and the log10 regret of a run that did best reads as −300. The report instead measures
//! every run of an instance against the instance's **best known value**: the larger of the
//! optimum and of a local ascent
//! ([`Problem::local_optimum`](cabo_core::Problem::local_optimum)) from each run's best
//! point. Every policy of a replication shares that reference, so paired comparisons stay paired.
//!
//! Where the problem cannot ascend (its optimum is exact, and a regret of 0 is a run that
//! found it), or no ascent passes the optimum and no run reached it, the recorded regrets
//! are kept as they are, bit for bit. The ascents are deterministic functions of the problem
//! and the recorded points, so the report still depends on the result files alone.

use super::Line;
use cabo_core::ProblemSpec;
use std::collections::BTreeMap;
use std::path::Path;

/// Relative gap below which an ascent's end value counts as the recorded optimum itself.
const ROUNDING: f64 = 1e-9;

/// An instance whose reference is above its problem's optimum.
#[derive(Debug, Clone, PartialEq)]
pub struct RaisedReference {
    /// The replication (the problem instance).
    pub replication: usize,
    /// The problem's optimum as the runs below it recorded it (best value plus regret);
    /// `None` when every run reached it.
    pub search: Option<f64>,
    /// The reference used instead.
    pub reference: f64,
}

/// What the report's regret is measured against, beyond the recorded optima.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct References {
    /// Instances whose reference is above their problem's optimum.
    pub raised: Vec<RaisedReference>,
    /// Why the best known values could not be checked (the problem could not be rebuilt,
    /// say, from a results directory whose spec reads a data file by a relative path):
    /// the recorded regrets stand then, and the report says so.
    pub unchecked: Option<String>,
}

/// A counted run as the reference needs it: replication, problem seed and lines.
pub(super) struct RunLines<'a> {
    pub replication: usize,
    pub problem_seed: u64,
    pub lines: &'a mut Vec<Line>,
}

/// Replaces the regret of every line of every instance whose best known value lies above
/// its recorded optimum, and returns those instances. `spec` is the resolved spec: its
/// `problem` is rebuilt once per instance that has a regret, to ascend from the runs' best
/// points, with relative data paths taken from `spec_dir` (the spec file's directory, when
/// the caller knows it). A problem that cannot be rebuilt leaves every regret as recorded
/// and says why.
pub(super) fn apply(
    spec: &serde_json::Value,
    spec_dir: Option<&Path>,
    runs: Vec<RunLines<'_>>,
) -> References {
    match raise(spec, spec_dir, runs) {
        Ok(raised) => References {
            raised,
            unchecked: None,
        },
        Err(why) => References {
            raised: Vec::new(),
            unchecked: Some(why),
        },
    }
}

/// [`apply`], or why the problem could not be rebuilt (before any line is changed).
fn raise(
    spec: &serde_json::Value,
    spec_dir: Option<&Path>,
    runs: Vec<RunLines<'_>>,
) -> Result<Vec<RaisedReference>, String> {
    let mut instances: BTreeMap<usize, Vec<RunLines<'_>>> = BTreeMap::new();
    for run in runs {
        instances.entry(run.replication).or_default().push(run);
    }
    // Every reference is found before any line changes, so a failure changes nothing.
    let mut problem_spec: Option<Box<dyn ProblemSpec>> = None;
    let mut raised = Vec::new();
    for (replication, runs) in &instances {
        let Some(recorded) = recorded_optimum(runs, |_| true) else {
            continue;
        };
        let spec_of_problem = match &problem_spec {
            Some(p) => p,
            None => problem_spec.insert(problem_of(spec, spec_dir)?),
        };
        let problem = spec_of_problem
            .build(runs[0].problem_seed)
            .map_err(|e| format!("rebuilding replication {replication}'s problem: {e}"))?;
        let points: Vec<(&[f64], Option<usize>)> =
            runs.iter().filter_map(|r| best_point(r.lines)).collect();
        let Some(ascended) = points
            .iter()
            .filter_map(|&(x, set)| problem.local_optimum(x, set))
            .reduce(f64::max)
        else {
            if points.is_empty() {
                continue;
            }
            // A problem that cannot ascend has an exact optimum (every instance of it): a
            // regret of 0 there is a run that found it, and the recorded regrets stand.
            return Ok(Vec::new());
        };
        let reached = runs.iter().any(|r| final_regret(r.lines) == Some(0.0));
        // An ascent to the maximiser the search found ends there up to rounding; a
        // reference raised by rounding would move every number of the instance by ulps.
        let rounding = ROUNDING * recorded.abs().max(1.0);
        if ascended <= recorded + rounding && !reached {
            continue;
        }
        raised.push(RaisedReference {
            replication: *replication,
            search: recorded_optimum(runs, |regret| regret > 0.0),
            reference: recorded.max(ascended),
        });
    }
    for r in &raised {
        for run in instances.get_mut(&r.replication).into_iter().flatten() {
            for line in run.lines.iter_mut() {
                line.simple_regret = line.best_value.map(|b| r.reference - b);
            }
        }
    }
    Ok(raised)
}

/// The resolved spec's problem, its relative paths taken from `spec_dir`.
fn problem_of(
    spec: &serde_json::Value,
    spec_dir: Option<&Path>,
) -> Result<Box<dyn ProblemSpec>, String> {
    let json = spec
        .get("problem")
        .ok_or("the spec has no `problem` to measure regret on")?;
    let mut problem: Box<dyn ProblemSpec> =
        serde_json::from_value(json.clone()).map_err(|e| format!("`problem`: {e}"))?;
    if let Some(dir) = spec_dir {
        problem.set_spec_dir(dir);
    }
    Ok(problem)
}

/// The largest best value plus regret over the instance's runs (each run's last line)
/// whose final regret passes `keep`, `None` when there is none.
fn recorded_optimum(runs: &[RunLines<'_>], keep: impl Fn(f64) -> bool) -> Option<f64> {
    runs.iter()
        .filter_map(|r| {
            let last = r.lines.last()?;
            let regret = last.simple_regret.filter(|g| keep(*g))?;
            Some(last.best_value? + regret)
        })
        .reduce(f64::max)
}

fn final_regret(lines: &[Line]) -> Option<f64> {
    lines.last().and_then(|l| l.simple_regret)
}

/// The recorded point of the run's best noise-free value (the first of equal values), and
/// the control set it was played with.
fn best_point(lines: &[Line]) -> Option<(&[f64], Option<usize>)> {
    lines
        .iter()
        .filter_map(|l| Some((l.value?, l)))
        .filter(|(v, l)| v.is_finite() && !l.x.is_empty())
        .reduce(|best, next| if next.0 > best.0 { next } else { best })
        .map(|(_, l)| (l.x.as_slice(), l.control_set))
}
