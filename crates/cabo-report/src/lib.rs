//! # cabo-report
//!
//! Reports: `summary.csv`, `report.md` and a figure (`report.svg`, `report.png`) per results
//! directory, built from the result files alone so that a report of merged shards is
//! byte-identical to the report of one local run.
//!
//! The report reads `spec.json` (the resolved spec: its `report:` section chooses the x-axis,
//! the metric and the bands) and every run of that spec that is complete: its marker's
//! fingerprint matches the spec and its `rep-<r>.jsonl` matches the marker. Runs missing,
//! damaged or made by another version of the spec count in no figure or table; the report
//! names them. Nothing in it but the runtime view (below) depends on wall time, thread
//! count or which process wrote it: numbers are written in Rust's shortest round-trip form or
//! with fixed precision.
//!
//! **Options** (the spec's `report:` section, [`ReportSpec`]): `x: cumulative_cost |
//! iteration | wall_time` (the simulated workers' clock); `y: auto | simple_regret | log10_simple_regret | best_y | best_value |
//! metric:NAME`; `bands: quartiles | std_err`; `also: [METRIC, …]` for one more figure and
//! table per metric; `marker: NAME` (with `marker_equals: K`) for where a problem metric
//! settles; `runtime: decision_time | acquisition_time | fit_time | cpu_time` for the
//! runtime view.
//!
//! **The runtime view** ([`runtime`]) is the one part made from `rep-<r>.times.jsonl`: the
//! chosen time against the iteration (`runtime.svg/png`, `runtime.csv`) and a table per
//! policy of decision, acquisition, fit and CPU times (`runtime.md`, `runtime-table.csv`).
//! A spec asks for it with `report: { runtime: <time> }`, and `cargo xtask report --times`
//! writes it for any results directory, printing one table of every directory given (a
//! line per spec and policy). It is written beside the report, never into `report.md` or
//! `summary.csv`, since times differ from machine to machine and run to run.
//!
//! **Regret** is measured against one reference per replication, the best known value of
//! the instance ([`reference`](mod@reference)), not against each run's recorded regret
//! alone.
//!
//! **At the budget.** A run's result is its best among the evaluations paid for within the
//! budget (cumulative cost ≤ B, as seed 001 defines N_B); an evaluation that overshoots a
//! cost budget is recorded but counts nowhere — not in the figure, the tables, `run.json`
//! or the console summary, which are all computed here.

#![forbid(unsafe_code)]

pub mod aggregate;
pub mod markdown;
pub mod plot;
pub mod reference;
pub mod runtime;
pub mod summary;

use aggregate::{Point, Trace};
use cabo_engine::store::{self, RunFiles};
use cabo_spec::spec::{Bands, Metric, ReportSpec, XAxis};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What a report is about: the parts of `spec.json` it needs.
#[derive(Debug, Clone)]
pub struct ReportInput {
    /// Spec name.
    pub name: String,
    /// Spec description.
    pub description: String,
    /// Replications each policy should have.
    pub replications: usize,
    /// Policy names, in spec order.
    pub policies: Vec<String>,
    /// The budget's cost limit, if any.
    pub cost_limit: Option<f64>,
    /// The budget's iteration limit, if any.
    pub iteration_limit: Option<usize>,
    /// The `report:` section.
    pub report: ReportSpec,
    /// The run fingerprint of each policy (see [`store::run_fingerprint_of`]).
    pub fingerprints: Vec<String>,
    /// The name the runs' seeds derive from (`seeds_from`, else `name`; see
    /// [`cabo_spec::Spec::seed_name`]).
    pub seed_name: String,
}

/// The metric actually plotted once `auto` is resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Y {
    /// optimum − best value so far (plotted on a log axis).
    SimpleRegret,
    /// Best observed y so far.
    BestY,
    /// Best noise-free value so far.
    BestValue,
    /// A problem metric.
    Problem(String),
}

impl Y {
    /// Column/axis name.
    pub fn label(&self, log10: bool) -> String {
        match self {
            Y::SimpleRegret if log10 => "log10 simple regret".into(),
            Y::SimpleRegret => "simple regret".into(),
            Y::BestY => "best observed y".into(),
            Y::BestValue => "best noise-free value".into(),
            Y::Problem(m) => format!("metric {m}"),
        }
    }
}

/// One policy's aggregated curve.
#[derive(Debug, Clone)]
pub struct Curve {
    /// Policy name.
    pub policy: String,
    /// Completed replications found.
    pub runs: usize,
    /// Statistics at every grid point.
    pub points: Vec<Point>,
    /// Median number of policy evaluations within the budget.
    pub evaluations_median: f64,
    /// Median cost spent within the budget.
    pub cost_median: f64,
    /// Where the `report.marker` metric settles at 1, when the spec asks for a marker.
    pub marker: Option<Marker>,
}

/// Where a 0/1 metric settles at 1 for good, over one policy's runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Marker {
    /// Mean x (on the report's axis) spent before the first evaluation from which the
    /// metric stays 1, over the runs that settle.
    pub x_mean: f64,
    /// Runs that settle.
    pub settled: usize,
}

/// A complete report, ready to be written.
#[derive(Debug, Clone)]
pub struct Report {
    /// What the spec says.
    pub input: ReportInput,
    /// The resolved metric.
    pub y: Y,
    /// Whether values are log10 of the metric (`log10_simple_regret`).
    pub log10: bool,
    /// One curve per policy, in spec order.
    pub curves: Vec<Curve>,
    /// Runs of the spec that count nowhere, and why.
    pub left_out: Vec<LeftOut>,
    /// What regret is measured against beyond the problem's optimum
    /// ([`reference`](mod@reference)).
    pub references: reference::References,
}

/// A run of the spec that is not in the report.
#[derive(Debug, Clone, PartialEq)]
pub struct LeftOut {
    /// Policy name.
    pub policy: String,
    /// Replication.
    pub replication: usize,
    /// Why.
    pub why: Absence,
}

/// Why a run is not in a report.
#[derive(Debug, Clone, PartialEq)]
pub enum Absence {
    /// Not complete: never started, running, or interrupted.
    Missing,
    /// Complete for another version of the spec.
    OtherVersion,
    /// Its records disagree with its completion marker.
    Damaged(String),
}

/// Files written by [`write()`].
#[derive(Debug, Clone)]
pub struct Written {
    /// `summary.csv`.
    pub csv: PathBuf,
    /// `report.md`.
    pub markdown: PathBuf,
    /// `report.svg`.
    pub svg: PathBuf,
    /// `report.png`.
    pub png: PathBuf,
    /// `report-<metric>.svg` and `.png` for each metric of `report.also`.
    pub extra: Vec<PathBuf>,
    /// The runtime view's files when the spec asks for it (`report.runtime`).
    pub runtime: Vec<PathBuf>,
}

/// The fields of a result line a report reads.
#[derive(Debug, Clone, Deserialize)]
struct Line {
    phase: String,
    cum_cost: f64,
    /// This evaluation's cost.
    #[serde(default)]
    cost: f64,
    /// When it finished on the simulated workers' clock (absent with one worker).
    #[serde(default)]
    finish: Option<f64>,
    best_y: f64,
    #[serde(default)]
    best_value: Option<f64>,
    #[serde(default)]
    simple_regret: Option<f64>,
    /// The noise-free value of this evaluation, and its point as the problem records it
    /// (with `control_set`): where a run's best point is, for the regret reference
    /// ([`reference`](mod@reference)).
    #[serde(default)]
    value: Option<f64>,
    #[serde(default)]
    x: Vec<f64>,
    /// The control set the evaluation played (absent for a full query).
    #[serde(default)]
    control_set: Option<usize>,
    #[serde(default)]
    metrics: BTreeMap<String, f64>,
}

/// The resolved spec a results directory was last run with (`spec.json`), as JSON.
pub fn read_spec_json(dir: &Path) -> Result<serde_json::Value, String> {
    let path = dir.join("spec.json");
    let text = std::fs::read_to_string(&path).map_err(|e| {
        format!(
            "{}: cannot read the resolved spec ({e}); expected a results directory such as \
             results/<spec>/ written by `cargo xtask run`",
            path.display()
        )
    })?;
    serde_json::from_str(&text).map_err(|e| format!("{}: not valid JSON: {e}", path.display()))
}

/// Checks that the results directory `dir` was last run with `spec` (the spec as it is now,
/// as JSON): when its `spec.json` is another version's, the version asked for has not been
/// run there, and what the directory holds — its spec, manifest, report and figures — is a
/// consistent set of that other version, which `report` must not overwrite. The error says
/// so and how to get the report. A directory without `spec.json` passes (it has no report
/// to lose; [`load`] says what is missing).
pub fn check_version(dir: &Path, spec: &serde_json::Value) -> Result<(), String> {
    let Ok(recorded) = read_spec_json(dir) else {
        return Ok(());
    };
    if recorded == *spec {
        return Ok(());
    }
    let kept = dir
        .join(cabo_spec::layout::SUPERSEDED)
        .join(format!("spec-{}", store::fingerprint(&recorded)));
    let report = dir.join("report.md");
    let theirs = if report.is_file() {
        format!(
            ", and so is its report {} (left as it is)",
            report.display()
        )
    } else {
        String::new()
    };
    Err(format!(
        "{}: this version of the spec has not been run yet: the spec.json there is another \
         version's{theirs}. `cargo xtask run` this spec to report it: runs the edit leaves \
         valid are not made again (after an edit of only the report section or the \
         description, none is), and the other version's spec, manifest and report move \
         together to {}/",
        dir.display(),
        kept.display()
    ))
}

fn input_of(v: &serde_json::Value, path: &Path) -> Result<ReportInput, String> {
    let field = |k: &str| {
        v.get(k)
            .ok_or_else(|| format!("{}: missing field `{k}`", path.display()))
    };
    let name = field("name")?
        .as_str()
        .ok_or_else(|| format!("{}: `name` must be a string", path.display()))?
        .to_string();
    let policies = field("policies")?
        .as_array()
        .ok_or_else(|| format!("{}: `policies` must be a list", path.display()))?
        .iter()
        .map(|p| p.get("name").and_then(|n| n.as_str()).map(str::to_string))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| format!("{}: every policy needs a `name`", path.display()))?;
    let budget = field("budget")?;
    let report: ReportSpec = match v.get("report") {
        Some(r) => serde_json::from_value(r.clone())
            .map_err(|e| format!("{}: `report`: {e}", path.display()))?,
        None => ReportSpec::default(),
    };
    let seed_name = v
        .get("seeds_from")
        .and_then(|n| n.as_str())
        .unwrap_or(&name)
        .to_string();
    Ok(ReportInput {
        seed_name,
        name,
        description: v
            .get("description")
            .and_then(|d| d.as_str())
            .unwrap_or("")
            .to_string(),
        replications: v.get("replications").and_then(|r| r.as_u64()).unwrap_or(1) as usize,
        policies,
        cost_limit: budget.get("cost").and_then(|c| c.as_f64()),
        iteration_limit: budget
            .get("iterations")
            .and_then(|c| c.as_u64())
            .map(|n| n as usize),
        report,
        fingerprints: (0..policies_len(v))
            .map(|p| store::run_fingerprint_of(v, p))
            .collect(),
    })
}

fn policies_len(v: &serde_json::Value) -> usize {
    v.get("policies")
        .and_then(|p| p.as_array())
        .map_or(0, |p| p.len())
}

/// Reads one run's result lines.
fn read_lines(path: &Path) -> Result<Vec<Line>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l)
                .map_err(|e| format!("{}:{}: not a result line: {e}", path.display(), i + 1))
        })
        .collect()
}

/// Resolves `auto` and checks that the metric exists in the results.
fn resolve_metric(metric: &Metric, runs: &[&Vec<Line>]) -> Result<(Y, bool), String> {
    let regret_known = runs
        .iter()
        .all(|r| r.iter().any(|l| l.simple_regret.is_some()));
    Ok(match metric {
        Metric::Auto if regret_known => (Y::SimpleRegret, false),
        Metric::Auto => (Y::BestY, false),
        Metric::SimpleRegret => (Y::SimpleRegret, false),
        Metric::Log10SimpleRegret => (Y::SimpleRegret, true),
        Metric::BestY => (Y::BestY, false),
        Metric::BestValue => (Y::BestValue, false),
        Metric::Problem(m) => {
            check_recorded("report.y", "metric:", m, runs)?;
            (Y::Problem(m.clone()), false)
        }
    })
}

/// An error unless some result line records metric `m` (written `{prefix}{m}` under spec
/// key `key`), with the closest recorded name.
fn check_recorded(key: &str, prefix: &str, m: &str, runs: &[&Vec<Line>]) -> Result<(), String> {
    let lines = || runs.iter().flat_map(|r| r.iter());
    if lines().any(|l| l.metrics.contains_key(m)) {
        return Ok(());
    }
    let known: std::collections::BTreeSet<&str> = lines()
        .flat_map(|l| l.metrics.keys().map(String::as_str))
        .collect();
    let known: Vec<&str> = known.into_iter().collect();
    let hint = cabo_core::registry::closest_of(m, &known)
        .map(|c| format!("; did you mean `{prefix}{c}`?"))
        .unwrap_or_default();
    Err(format!(
        "{key} `{prefix}{m}`: no result line records a metric `{m}`{hint} Recorded metrics: {}",
        if known.is_empty() {
            "none".to_string()
        } else {
            known.join(", ")
        }
    ))
}

fn value_of(line: &Line, y: &Y, log10: bool) -> f64 {
    let v = match y {
        Y::SimpleRegret => line.simple_regret.unwrap_or(f64::NAN),
        Y::BestY => line.best_y,
        Y::BestValue => line.best_value.unwrap_or(f64::NAN),
        Y::Problem(m) => line.metrics.get(m).copied().unwrap_or(f64::NAN),
    };
    if log10 { v.max(1e-300).log10() } else { v }
}

/// When a run counts as settled at an evaluation: `metric` equals `equals`, or is 1 (a 0/1
/// flag) without it.
#[derive(Debug, Clone, Copy)]
struct MarkerRule<'a> {
    metric: &'a str,
    equals: Option<i64>,
}

impl MarkerRule<'_> {
    fn holds(&self, line: &Line) -> bool {
        line.metrics
            .get(self.metric)
            .is_some_and(|v| match self.equals {
                Some(target) => *v == target as f64,
                None => *v >= 0.5,
            })
    }
}

/// The x spent before the first policy evaluation from which the marker's rule holds at
/// every later evaluation of the run, or `None` if the run never settles.
fn settle_x(lines: &[Line], axis: XAxis, rule: MarkerRule<'_>) -> Option<f64> {
    let mut before = 0.0;
    let mut settled: Option<f64> = None;
    for (l, x) in lines.iter().zip(axis_values(lines, axis)) {
        if l.phase != "initial" {
            match (rule.holds(l), settled) {
                (true, None) => settled = Some(before),
                (false, _) => settled = None,
                _ => {}
            }
        }
        before = x;
    }
    settled
}

/// Where each line of a run stands on `axis`: its cumulative cost, its policy iteration (0
/// in the initial design), or its finish on the simulated clock (with one worker, the sum
/// of the costs so far).
fn axis_values(lines: &[Line], axis: XAxis) -> Vec<f64> {
    let (mut iteration, mut clock) = (0usize, 0.0);
    lines
        .iter()
        .map(|l| {
            iteration += usize::from(l.phase != "initial");
            clock = l.finish.unwrap_or(clock + l.cost);
            match axis {
                XAxis::CumulativeCost => l.cum_cost,
                XAxis::Iteration => iteration as f64,
                XAxis::WallTime => clock,
            }
        })
        .collect()
}

/// The marker of one policy's runs.
fn marker_of(runs: &[&Vec<Line>], axis: XAxis, rule: MarkerRule<'_>) -> Marker {
    let xs: Vec<f64> = runs
        .iter()
        .filter_map(|l| settle_x(l, axis, rule))
        .collect();
    Marker {
        x_mean: xs.iter().sum::<f64>() / xs.len().max(1) as f64,
        settled: xs.len(),
    }
}

/// The lines of evaluations paid for within a cost budget: a last evaluation that overshoots
/// it counts nowhere.
fn within_budget(mut lines: Vec<Line>, cost_limit: Option<f64>) -> Vec<Line> {
    if let Some(limit) = cost_limit {
        lines.retain(|l| l.cum_cost <= limit);
    }
    lines
}

fn trace_of(replication: usize, lines: &[Line], axis: XAxis, y: &Y, log10: bool) -> Trace {
    let steps = (axis_values(lines, axis).into_iter())
        .zip(lines.iter().map(|l| value_of(l, y, log10)))
        .collect();
    Trace { replication, steps }
}

/// The runs of a results directory that count for a spec, read and checked once, from which
/// a report of any metric is aggregated.
#[derive(Debug, Clone)]
pub struct Runs {
    /// The results directory.
    dir: PathBuf,
    input: ReportInput,
    /// (policy, replication, its lines within the budget) of every run that counts.
    runs: Vec<(usize, usize, Vec<Line>)>,
    left_out: Vec<LeftOut>,
    /// What regret is measured against beyond the recorded optima.
    references: reference::References,
}

/// Reads the runs in `dir` of the resolved spec `spec` (as JSON): each completion marker is
/// checked against its place — the policy, replication, seeds and run fingerprint the spec
/// gives it — and its records against the marker (see [`store::completion`]); a run either
/// counts, with its lines within the budget, or is left out with the reason. Regret is
/// measured against each instance's best known value ([`reference`](mod@reference));
/// `spec_dir`, the spec file's directory where the caller knows it, resolves the problem's
/// relative data paths for that.
pub fn load(dir: &Path, spec: &serde_json::Value, spec_dir: Option<&Path>) -> Result<Runs, String> {
    let input = input_of(spec, &dir.join("spec.json"))?;
    let mut runs = Vec::new();
    let mut seeds = Vec::new();
    let mut left_out = Vec::new();
    for (p, policy) in input.policies.iter().enumerate() {
        for r in 0..input.replications {
            let files = RunFiles::new(dir, policy, r);
            let slot = store::Slot::new(&input.seed_name, &input.fingerprints[p], policy, r);
            let why = match store::completion(&files, &slot) {
                store::Completion::Complete(summary) => {
                    let lines = within_budget(read_lines(&files.records)?, input.cost_limit);
                    runs.push((p, r, lines));
                    seeds.push(summary.problem_seed);
                    continue;
                }
                store::Completion::Missing => Absence::Missing,
                store::Completion::OtherVersion(_) => Absence::OtherVersion,
                store::Completion::Damaged(why) => Absence::Damaged(why),
            };
            left_out.push(LeftOut {
                policy: policy.clone(),
                replication: r,
                why,
            });
        }
    }
    if runs.is_empty() {
        return Err(format!(
            "{}: no run of this version of the spec is complete yet{}; run the spec first",
            dir.display(),
            describe_left_out(&left_out)
        ));
    }
    let references = reference::apply(
        spec,
        spec_dir,
        runs.iter_mut()
            .zip(&seeds)
            .map(|((_, r, lines), &problem_seed)| reference::RunLines {
                replication: *r,
                problem_seed,
                lines,
            })
            .collect(),
    );
    Ok(Runs {
        dir: dir.to_path_buf(),
        input,
        runs,
        left_out,
        references,
    })
}

impl Runs {
    /// Whether every run of the spec counts.
    pub fn complete(&self) -> bool {
        self.left_out.is_empty()
    }

    /// The number of runs that count.
    pub fn len(&self) -> usize {
        self.runs.len()
    }

    /// The runs that count, as (policy name, replication).
    pub fn counted(&self) -> impl Iterator<Item = (&str, usize)> {
        self.runs
            .iter()
            .map(|(p, r, _)| (self.input.policies[*p].as_str(), *r))
    }

    /// The spec's name.
    pub fn name(&self) -> &str {
        &self.input.name
    }

    /// The runs that count, as (policy name, its runs' times files in replication order),
    /// every policy of the spec in spec order.
    pub fn times_files(&self) -> Vec<(&str, Vec<PathBuf>)> {
        let files = |p: usize| {
            self.runs
                .iter()
                .filter(|(q, _, _)| *q == p)
                .map(|(_, r, _)| RunFiles::new(&self.dir, &self.input.policies[p], *r).times)
                .collect()
        };
        (0..self.input.policies.len())
            .map(|p| (self.input.policies[p].as_str(), files(p)))
            .collect()
    }

    /// The runs that count, as (policy name, replication, its times file).
    pub fn times_by_run(&self) -> impl Iterator<Item = (&str, usize, PathBuf)> {
        self.runs.iter().map(|(p, r, _)| {
            let policy = self.input.policies[*p].as_str();
            (policy, *r, RunFiles::new(&self.dir, policy, *r).times)
        })
    }

    /// Whether no run counts (never: [`load`] fails then).
    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    /// Each counted run's trace of `report`'s metric (a report of these runs), as (policy,
    /// trace), for readings of single runs such as the gallery's per-run values.
    pub fn traces(&self, report: &Report) -> Vec<(&str, Trace)> {
        let axis = self.input.report.x;
        self.runs
            .iter()
            .map(|(p, r, lines)| {
                let t = trace_of(*r, lines, axis, &report.y, report.log10);
                (self.input.policies[*p].as_str(), t)
            })
            .collect()
    }

    /// The report of these runs, of the spec's metric or of `metric` (one of `report.also`).
    pub fn report(&self, metric: Option<&Metric>) -> Result<Report, String> {
        let mut input = self.input.clone();
        if let Some(m) = metric {
            input.report.y = m.clone();
        }
        let runs = &self.runs;
        let lines_only: Vec<&Vec<Line>> = runs.iter().map(|(_, _, l)| l).collect();
        let (y, log10) = resolve_metric(&input.report.y, &lines_only)?;
        if let Some(m) = &input.report.marker {
            check_recorded("report.marker", "", m, &lines_only)?;
        }
        let axis = input.report.x;
        let traces: Vec<(usize, Trace)> = runs
            .iter()
            .map(|(p, r, lines)| (*p, trace_of(*r, lines, axis, &y, log10)))
            .collect();
        let limit = match axis {
            XAxis::CumulativeCost => input.cost_limit,
            XAxis::Iteration => input.iteration_limit.map(|n| n as f64),
            // The longest run's last finish.
            XAxis::WallTime => None,
        };
        let every: Vec<&Trace> = traces.iter().map(|(_, t)| t).collect();
        let grid = aggregate::grid(axis, limit, &every);
        let curves = input
            .policies
            .iter()
            .enumerate()
            .map(|(p, name)| {
                let mine: Vec<&Trace> = traces
                    .iter()
                    .filter(|(q, _)| *q == p)
                    .map(|(_, t)| t)
                    .collect();
                let my_lines: Vec<&Vec<Line>> = runs
                    .iter()
                    .filter(|(q, _, _)| *q == p)
                    .map(|(_, _, l)| l)
                    .collect();
                let median_of = |f: &dyn Fn(&Vec<Line>) -> f64| {
                    let mut v: Vec<f64> = my_lines.iter().map(|l| f(l)).collect();
                    v.sort_by(f64::total_cmp);
                    aggregate::quantile(&v, 0.5)
                };
                Curve {
                    policy: name.clone(),
                    runs: mine.len(),
                    points: aggregate::aggregate(&grid, &mine),
                    evaluations_median: median_of(&|l| {
                        l.iter().filter(|l| l.phase != "initial").count() as f64
                    }),
                    cost_median: median_of(&|l| l.last().map_or(0.0, |l| l.cum_cost)),
                    marker: input.report.marker.as_deref().map(|metric| {
                        let equals = input.report.marker_equals;
                        marker_of(&my_lines, axis, MarkerRule { metric, equals })
                    }),
                }
            })
            .collect();
        Ok(Report {
            input,
            y,
            log10,
            curves,
            left_out: self.left_out.clone(),
            references: self.references.clone(),
        })
    }
}

/// " (3 missing, 4 of an earlier version of the spec, 1 damaged)", or nothing.
pub fn describe_left_out(left_out: &[LeftOut]) -> String {
    let count = |f: fn(&Absence) -> bool| left_out.iter().filter(|l| f(&l.why)).count();
    let parts: Vec<String> = [
        (count(|a| *a == Absence::Missing), "missing"),
        (
            count(|a| *a == Absence::OtherVersion),
            "of an earlier version of the spec",
        ),
        (count(|a| matches!(a, Absence::Damaged(_))), "damaged"),
    ]
    .into_iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| format!("{n} {what}"))
    .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!(" ({} runs: {})", left_out.len(), parts.join(", "))
    }
}

/// The CSV of every policy at every grid point.
pub fn csv(report: &Report) -> String {
    use std::fmt::Write;
    let mut out = String::from("policy,x,n,median,q25,q75,mean,stderr\n");
    for c in &report.curves {
        for p in &c.points {
            let _ = writeln!(
                out,
                "{},{},{},{},{},{},{},{}",
                csv_field(&c.policy),
                num(p.x),
                p.n,
                num(p.median),
                num(p.q25),
                num(p.q75),
                num(p.mean),
                num(p.stderr)
            );
        }
    }
    out
}

/// Shortest round-trip form; empty for NaN (no value there).
fn num(v: f64) -> String {
    if v.is_nan() {
        String::new()
    } else {
        format!("{v}")
    }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Writes `report` (the report of `runs`, of the spec's own metric), one figure and table
/// per metric of `report.also` and, when the spec asks for it, the runtime view (see
/// [`runtime`]) into `dir`.
pub fn write(dir: &Path, runs: &Runs, report: &Report) -> Result<Written, String> {
    let mut w = Written {
        csv: dir.join("summary.csv"),
        markdown: dir.join("report.md"),
        svg: dir.join("report.svg"),
        png: dir.join("report.png"),
        extra: Vec::new(),
        runtime: Vec::new(),
    };
    let io = |p: &Path| {
        let p = p.display().to_string();
        move |e: std::io::Error| format!("{p}: cannot write: {e}")
    };
    store::write_atomic(&w.csv, csv(report).as_bytes()).map_err(io(&w.csv))?;
    let svg = plot::svg(report)?;
    store::write_atomic(&w.svg, svg.as_bytes()).map_err(io(&w.svg))?;
    let png = plot::png(report)?;
    store::write_atomic(&w.png, &png).map_err(io(&w.png))?;
    let mut md = markdown::render(report);
    for m in &report.input.report.also {
        let extra = runs.report(Some(m))?;
        let stem = format!("report-{}", cabo_spec::layout::dir_name(&m.name()));
        for (ext, bytes) in [
            ("svg", plot::svg(&extra)?.into_bytes()),
            ("png", plot::png(&extra)?),
        ] {
            let p = dir.join(format!("{stem}.{ext}"));
            store::write_atomic(&p, &bytes).map_err(io(&p))?;
            w.extra.push(p);
        }
        md.push_str(&markdown::render_extra(&extra, &format!("{stem}.svg")));
    }
    store::write_atomic(&w.markdown, md.as_bytes()).map_err(io(&w.markdown))?;
    if let Some(metric) = report.input.report.runtime {
        w.runtime = runtime::write(dir, &runs.runtime(metric))?;
    }
    Ok(w)
}

/// Whether the figure's bands are quartiles (else mean ± standard error).
pub fn quartile_bands(report: &Report) -> bool {
    report.input.report.bands == Bands::Quartiles
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(phase: &str, cum_cost: f64, on: Option<f64>) -> Line {
        Line {
            phase: phase.into(),
            cum_cost,
            cost: 1.0,
            finish: None,
            best_y: 0.0,
            best_value: None,
            simple_regret: None,
            value: None,
            x: Vec::new(),
            control_set: None,
            metrics: on
                .map(|v| BTreeMap::from([("on".to_string(), v)]))
                .unwrap_or_default(),
        }
    }

    fn flag() -> MarkerRule<'static> {
        MarkerRule {
            metric: "on",
            equals: None,
        }
    }

    #[test]
    fn a_marker_can_wait_for_a_value_of_a_metric() {
        // "on" holds a control set's index here: settled once it stays 6.
        let lines = vec![
            line("initial", 0.0, None),
            line("policy", 1.0, Some(6.0)),
            line("policy", 2.0, Some(1.0)),
            line("policy", 4.0, Some(6.0)),
            line("policy", 5.0, Some(6.0)),
        ];
        let six = MarkerRule {
            metric: "on",
            equals: Some(6),
        };
        assert_eq!(settle_x(&lines, XAxis::CumulativeCost, six), Some(2.0));
        // As a flag, every nonzero index would count from the start.
        assert_eq!(settle_x(&lines, XAxis::CumulativeCost, flag()), Some(0.0));
    }

    #[test]
    fn a_marker_sits_before_the_first_evaluation_of_the_final_run_of_ones() {
        let lines = vec![
            line("initial", 0.0, None),
            line("policy", 1.0, Some(1.0)),
            line("policy", 3.0, Some(0.0)),
            line("policy", 4.0, Some(1.0)),
            line("policy", 7.0, Some(1.0)),
        ];
        // Settled from the third policy evaluation on: 3 cost units / 2 iterations before it.
        assert_eq!(settle_x(&lines, XAxis::CumulativeCost, flag()), Some(3.0));
        assert_eq!(settle_x(&lines, XAxis::Iteration, flag()), Some(2.0));
        // A final 0 (or a missing metric) means the run never settles.
        let mut unsettled = lines.clone();
        unsettled.push(line("policy", 8.0, Some(0.0)));
        assert_eq!(settle_x(&unsettled, XAxis::Iteration, flag()), None);
        let mut missing = lines.clone();
        missing.push(line("policy", 8.0, None));
        assert_eq!(settle_x(&missing, XAxis::Iteration, flag()), None);
        // Initial points paid for shift the cost axis; ones from the start settle at that cost.
        let from_start = vec![line("initial", 2.0, None), line("policy", 5.0, Some(1.0))];
        assert_eq!(
            settle_x(&from_start, XAxis::CumulativeCost, flag()),
            Some(2.0)
        );
        let m = marker_of(
            &[&lines, &unsettled, &from_start],
            XAxis::CumulativeCost,
            flag(),
        );
        assert_eq!(
            m,
            Marker {
                x_mean: 2.5,
                settled: 2
            }
        );
    }

    #[test]
    fn wall_time_is_the_finish_or_with_one_worker_the_sum_of_every_cost() {
        // One worker: a design point of cost 1 (free), then policy costs 1 each.
        let sequential = vec![
            line("initial", 0.0, None),
            line("policy", 1.0, None),
            line("policy", 2.0, None),
        ];
        assert_eq!(axis_values(&sequential, XAxis::WallTime), [1.0, 2.0, 3.0]);
        assert_eq!(axis_values(&sequential, XAxis::Iteration), [0.0, 1.0, 2.0]);
        // Workers: each line's own finish, in the order they finished.
        let mut parallel = sequential.clone();
        for (l, f) in parallel.iter_mut().zip([1.0, 1.5, 1.5]) {
            l.finish = Some(f);
        }
        assert_eq!(axis_values(&parallel, XAxis::WallTime), [1.0, 1.5, 1.5]);
        assert_eq!(
            axis_values(&parallel, XAxis::CumulativeCost),
            [0.0, 1.0, 2.0]
        );
    }
}
