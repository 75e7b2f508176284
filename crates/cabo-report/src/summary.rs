//! Summaries of completed runs: the per-policy numbers at the budget printed after a sweep,
//! kept in `run.json` and snapshotted by the spec tests — read off the report, so that they
//! are the numbers of `report.md`.

use crate::{Report, Y};
use cabo_spec::LoadedSpec;
use serde::Serialize;

/// Final numbers of one policy across replications.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PolicySummary {
    /// Policy name.
    pub policy: String,
    /// Completed replications.
    pub replications: usize,
    /// The report metric's name.
    pub metric: String,
    /// Its median, 25% and 75% quantiles over replications at the budget.
    pub median: f64,
    /// 25% quantile.
    pub q25: f64,
    /// 75% quantile.
    pub q75: f64,
    /// Median cost spent within the budget.
    pub cost_median: f64,
    /// Median number of policy evaluations within the budget.
    pub evaluations_median: f64,
}

/// Final numbers of every policy of a spec.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SpecSummary {
    /// Spec name.
    pub spec: String,
    /// One entry per policy, in spec order.
    pub policies: Vec<PolicySummary>,
}

/// The summary of a report: each policy's statistics at the budget, the same numbers as
/// `report.md`'s table "At the budget" (see [`crate`] for the definition).
pub fn of_report(report: &Report) -> SpecSummary {
    let metric = match (&report.y, report.log10) {
        (Y::SimpleRegret, true) => "log10_simple_regret".to_string(),
        (Y::SimpleRegret, false) => "simple_regret".to_string(),
        (Y::BestY, _) => "best_y".to_string(),
        (Y::BestValue, _) => "best_value".to_string(),
        (Y::Problem(m), _) => format!("metric:{m}"),
    };
    let policies = report
        .curves
        .iter()
        .map(|c| {
            let end = c.points.last();
            let at = |f: fn(&crate::aggregate::Point) -> f64| end.map_or(f64::NAN, f);
            PolicySummary {
                policy: c.policy.clone(),
                replications: c.runs,
                metric: metric.clone(),
                median: at(|p| p.median),
                q25: at(|p| p.q25),
                q75: at(|p| p.q75),
                cost_median: c.cost_median,
                evaluations_median: c.evaluations_median,
            }
        })
        .collect();
    SpecSummary {
        spec: report.input.name.clone(),
        policies,
    }
}

/// The `run.json` manifest written when every run of a spec is complete.
pub fn run_manifest(
    spec: &LoadedSpec,
    fingerprint: &str,
    runs: usize,
    summary: SpecSummary,
) -> String {
    #[derive(Serialize)]
    struct Manifest<'a> {
        spec: &'a str,
        source: String,
        fingerprint: &'a str,
        replications: usize,
        policies: Vec<&'a str>,
        runs: usize,
        summary: SpecSummary,
    }
    let m = Manifest {
        spec: &spec.spec.name,
        source: spec.path.display().to_string(),
        fingerprint,
        replications: spec.spec.replications,
        policies: spec.spec.policies.iter().map(|p| p.name.as_str()).collect(),
        runs,
        summary,
    };
    serde_json::to_string_pretty(&m).unwrap_or_default()
}

/// The line above the console table: where the numbers are taken (the same definition as
/// `report.md`) and how many runs they cover.
pub fn heading(spec: &LoadedSpec, summary: &SpecSummary) -> String {
    let total = spec.spec.policies.len() * spec.spec.replications;
    let complete: usize = summary.policies.iter().map(|p| p.replications).sum();
    let at = match spec.spec.budget.cost {
        Some(c) => format!(
            "at the budget (evaluations within cumulative cost {c}; one that overshoots it does \
             not count)"
        ),
        None => "at the budget".to_string(),
    };
    let runs = if complete == total && total == 1 {
        "its one run".to_string()
    } else if complete == total {
        format!("all {total} runs")
    } else {
        format!("{complete} of {total} runs complete so far")
    };
    format!("{}: {at}, {runs}:", summary.spec)
}

/// A plain-text table of a spec summary (printed after a run).
pub fn render_table(s: &SpecSummary) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let width = s
        .policies
        .iter()
        .map(|p| p.policy.len())
        .max()
        .unwrap_or(6)
        .max(6);
    let metric = s.policies.first().map_or("metric", |p| p.metric.as_str());
    let _ = writeln!(
        out,
        "  {:<width$}  {:>5}  {:>12} [{:>12}, {:>12}]  {:>10}  {:>6}",
        "policy", "reps", metric, "q25", "q75", "cost", "evals"
    );
    for p in &s.policies {
        let _ = writeln!(
            out,
            "  {:<width$}  {:>5}  {:>12.6} [{:>12.6}, {:>12.6}]  {:>10.4}  {:>6}",
            p.policy, p.replications, p.median, p.q25, p.q75, p.cost_median, p.evaluations_median
        );
    }
    out
}
