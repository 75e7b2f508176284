//! Summaries of completed runs: the per-policy numbers printed after a sweep and snapshotted
//! by the spec tests.

use crate::spec::{LoadedSpec, Metric};
use crate::store::RunSummary;
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
    /// Its median, 25% and 75% quantiles over replications at the end of the runs.
    pub median: f64,
    /// 25% quantile.
    pub q25: f64,
    /// 75% quantile.
    pub q75: f64,
    /// Median budget spent.
    pub cost_median: f64,
    /// Median number of policy evaluations.
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

/// Linear-interpolation quantile (type 7, as numpy's default) of sorted values.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let pos = q * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

fn sorted(mut v: Vec<f64>) -> Vec<f64> {
    v.sort_by(f64::total_cmp);
    v
}

/// Reads a metric's final value from a run summary.
pub type MetricReader = Box<dyn Fn(&RunSummary) -> f64>;

/// The metric a report uses for this spec and how to read it from a run summary.
pub fn metric_of(spec: &LoadedSpec, runs: &[RunSummary]) -> (String, MetricReader) {
    let regret_known = runs.iter().all(|r| r.simple_regret.is_some());
    match &spec.spec.report.y {
        Metric::SimpleRegret => (
            "simple_regret".into(),
            Box::new(|r| r.simple_regret.unwrap_or(f64::NAN)),
        ),
        Metric::Log10SimpleRegret => (
            "log10_simple_regret".into(),
            Box::new(|r| r.simple_regret.map_or(f64::NAN, |v| v.max(1e-300).log10())),
        ),
        Metric::BestValue => (
            "best_value".into(),
            Box::new(|r| r.best_value.unwrap_or(r.best_y)),
        ),
        Metric::BestY => ("best_y".into(), Box::new(|r| r.best_y)),
        Metric::Problem(name) => {
            let key = name.clone();
            (
                format!("metric:{name}"),
                Box::new(move |r| r.metrics.get(&key).copied().unwrap_or(f64::NAN)),
            )
        }
        Metric::Auto if regret_known && !runs.is_empty() => (
            "simple_regret".into(),
            Box::new(|r| r.simple_regret.unwrap_or(f64::NAN)),
        ),
        Metric::Auto => ("best_y".into(), Box::new(|r| r.best_y)),
    }
}

/// Summarises completed runs per policy, in spec order.
pub fn summarize(spec: &LoadedSpec, runs: &[RunSummary]) -> SpecSummary {
    let (metric, read) = metric_of(spec, runs);
    let policies = spec
        .spec
        .policies
        .iter()
        .map(|p| {
            let mine: Vec<&RunSummary> = runs.iter().filter(|r| r.policy == p.name).collect();
            let values = sorted(mine.iter().map(|r| read(r)).collect());
            let costs = sorted(mine.iter().map(|r| r.budget_spent).collect());
            let evals = sorted(mine.iter().map(|r| r.policy_evaluations as f64).collect());
            PolicySummary {
                policy: p.name.clone(),
                replications: mine.len(),
                metric: metric.to_string(),
                median: quantile(&values, 0.5),
                q25: quantile(&values, 0.25),
                q75: quantile(&values, 0.75),
                cost_median: quantile(&costs, 0.5),
                evaluations_median: quantile(&evals, 0.5),
            }
        })
        .collect();
    SpecSummary {
        spec: spec.spec.name.clone(),
        policies,
    }
}

/// The `run.json` manifest written when every run of a spec is complete.
pub fn run_manifest(spec: &LoadedSpec, fingerprint: &str, runs: &[RunSummary]) -> String {
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
    let mut ordered: Vec<RunSummary> = runs.to_vec();
    ordered.sort_by(|a, b| (&a.policy, a.replication).cmp(&(&b.policy, b.replication)));
    let m = Manifest {
        spec: &spec.spec.name,
        source: spec.path.display().to_string(),
        fingerprint,
        replications: spec.spec.replications,
        policies: spec.spec.policies.iter().map(|p| p.name.as_str()).collect(),
        runs: ordered.len(),
        summary: summarize(spec, &ordered),
    };
    serde_json::to_string_pretty(&m).unwrap_or_default()
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
