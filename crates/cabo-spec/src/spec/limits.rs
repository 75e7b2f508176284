//! Resource limits: what one spec may ask of the machine, estimated from the spec alone and
//! checked before anything runs, so that a typo (`dim: 10000`, `replications: 1000000000`,
//! `budget: { cost: 1e308 }`) is refused with a message instead of filling the disk,
//! aborting on an allocation or running for ever.

use crate::spec::Spec;
use serde::{Deserialize, Serialize};

/// Default of [`Limits::max_evaluations`].
pub const MAX_EVALUATIONS: usize = 20_000;
/// Default of [`Limits::max_memory_gb`].
pub const MAX_MEMORY_GB: f64 = 16.0;
/// Default of [`Limits::max_records_gb`].
pub const MAX_RECORDS_GB: f64 = 2.0;
/// Default of [`Limits::max_runs`].
pub const MAX_RUNS: usize = 100_000;
/// Default of [`Limits::max_cpu_hours`].
pub const MAX_CPU_HOURS: f64 = 24.0;
/// The arithmetic rate the CPU-time estimate assumes (floating-point operations a second on
/// one core): a deliberately modest figure, so that the estimate errs long.
pub const FLOPS: f64 = 2e9;

/// The spec's `limits:` section; every field is optional and falls back to a default that
/// every spec under `specs/` passes with a wide margin.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Evaluations per run (initial design included); also where a run whose cost budget
    /// cannot be bounded in advance stops with an error. Default 20 000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_evaluations: Option<usize>,
    /// Estimated peak memory of one run, in GB (10⁹ bytes). Default 16.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_memory_gb: Option<f64>,
    /// Estimated size of one run's record file, in GB. Default 2.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_records_gb: Option<f64>,
    /// Runs of the spec (policies × replications). Default 100 000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_runs: Option<usize>,
    /// Estimated CPU time of one run's decisions (model fits and acquisition optimisation),
    /// in hours. Default 24.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_cpu_hours: Option<f64>,
    /// Workers of one run (`workers.count`). Default 256.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_workers: Option<usize>,
}

impl Limits {
    /// True when no limit is set (the section is then not serialised, so specs without it
    /// keep their fingerprints).
    pub fn is_default(&self) -> bool {
        *self == Limits::default()
    }

    /// The evaluation cap of one run.
    pub fn evaluations(&self) -> usize {
        self.max_evaluations.unwrap_or(MAX_EVALUATIONS)
    }

    /// Checks that the limits themselves are usable.
    pub fn validate(&self) -> Result<(), String> {
        for (key, v, unit) in [
            ("max_memory_gb", self.max_memory_gb, "GB"),
            ("max_records_gb", self.max_records_gb, "GB"),
            ("max_cpu_hours", self.max_cpu_hours, "hours"),
        ] {
            if let Some(v) = v
                && !(v.is_finite() && v > 0.0)
            {
                return Err(format!(
                    "{key} must be a positive number of {unit}, got {v}"
                ));
            }
        }
        if self.max_evaluations == Some(0)
            || self.max_runs == Some(0)
            || self.max_workers == Some(0)
        {
            return Err("max_evaluations, max_runs and max_workers must be at least 1".into());
        }
        Ok(())
    }
}

/// Checks policies × replications against `max_runs` without forming the run list.
pub fn check_runs(spec: &Spec) -> Result<(), String> {
    let max = spec.limits.max_runs.unwrap_or(MAX_RUNS);
    let runs = spec.policies.len().saturating_mul(spec.replications);
    if runs > max {
        return Err(format!(
            "{} policies × {} replications = {runs} runs, more than limits.max_runs = {max}; \
             if that many runs are intended, raise it with `limits: {{ max_runs: {runs} }}`",
            spec.policies.len(),
            spec.replications
        ));
    }
    Ok(())
}

/// What one run of a spec may need at most, estimated from the spec.
#[derive(Debug, Clone, PartialEq)]
pub struct Estimate {
    /// Initial-design points.
    pub initial: usize,
    /// Policy evaluations the budget allows, when the spec bounds them (an iteration budget,
    /// or a cost budget with a cost function whose smallest cost is known).
    pub policy: Option<f64>,
    /// Evaluations assumed for the memory and record estimates: initial + policy, or the
    /// evaluation cap when the budget does not bound them.
    pub evaluations: f64,
    /// Peak memory in bytes.
    pub memory: f64,
    /// Record-file size in bytes.
    pub records: f64,
    /// CPU seconds of the run's decisions (see [`decision_flops`]).
    pub cpu_seconds: f64,
}

/// What one decision costs: the work of fitting the model and optimising the acquisition.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DecisionWork {
    /// Input dimension.
    pub dim: usize,
    /// Whether a model is fitted (a GP); without one a decision costs a few operations a
    /// candidate.
    pub uses_model: bool,
    /// Acquisition values computed per decision: raw samples, and each restart's iterations.
    pub acquisition_points: f64,
    /// Marginal-likelihood evaluations per fit: one for fixed hyperparameters, else the
    /// fit's L-BFGS starts × iteration cap.
    pub fit_evaluations: f64,
}

/// Marginal-likelihood evaluations a model's fit makes at most: one for fixed
/// hyperparameters, else its L-BFGS starts × iteration cap (`restarts`, `max_iters`; the
/// GP plugins' defaults 1 and 200). Read from the model's spec as written, since models are
/// plugins.
fn fit_evaluations(model: &impl Serialize) -> f64 {
    let Ok(v) = serde_json::to_value(model) else {
        return 200.0;
    };
    if v.get("fit").and_then(|f| f.as_str()) == Some("fixed") {
        return 1.0;
    }
    let field = |key: &str, default: f64| v.get(key).and_then(|x| x.as_f64()).unwrap_or(default);
    field("restarts", 1.0) * field("max_iters", 200.0)
}

/// Floating-point operations of one decision on `n` observations: each fit evaluation
/// factorises the n × n Gram matrix (n³/3) and forms it (n² d); each acquisition value
/// solves against the factor (n²) and evaluates n kernel values (n d).
pub fn decision_flops(w: &DecisionWork, n: f64) -> f64 {
    let d = w.dim as f64;
    if !w.uses_model {
        return w.acquisition_points * d;
    }
    w.fit_evaluations * (n * n * n / 3.0 + n * n * d) + w.acquisition_points * (n * n + n * d)
}

/// Floating-point operations of the decisions on `first` to `first + count - 1`
/// observations, summed in closed form (the count may be far beyond any loop).
fn decisions_flops(w: &DecisionWork, first: f64, count: f64) -> f64 {
    if count <= 0.0 {
        return 0.0;
    }
    let last = first + count - 1.0;
    // Sums of n, n² and n³ for n in first..=last.
    let s1 = |m: f64| m * (m + 1.0) / 2.0;
    let s2 = |m: f64| m * (m + 1.0) * (2.0 * m + 1.0) / 6.0;
    let s3 = |m: f64| s1(m) * s1(m);
    let below = first - 1.0;
    let (n1, n2, n3) = (
        s1(last) - s1(below),
        s2(last) - s2(below),
        s3(last) - s3(below),
    );
    let d = w.dim as f64;
    if !w.uses_model {
        return count * w.acquisition_points * d;
    }
    w.fit_evaluations * (n3 / 3.0 + n2 * d) + w.acquisition_points * (n2 + n1 * d)
}

/// The decision work of `spec`'s runs: `raw_samples` and `restart_iterations` (restarts ×
/// iteration cap) are the largest of its policies' optimiser settings.
pub fn decision_work(
    spec: &Spec,
    dim: usize,
    raw_samples: usize,
    restart_iterations: usize,
) -> DecisionWork {
    let models = spec
        .model
        .iter()
        .chain(spec.policies.iter().filter_map(|p| p.model.as_ref()));
    let fits = models
        .map(fit_evaluations)
        .fold(None, |a: Option<f64>, f| Some(a.map_or(f, |a| a.max(f))));
    DecisionWork {
        dim,
        uses_model: fits.is_some(),
        acquisition_points: raw_samples as f64 + restart_iterations as f64,
        fit_evaluations: fits.unwrap_or(0.0),
    }
}

/// Bytes of one record line beyond its coordinates (iteration, y, cost, regrets, fitted
/// scalars); measured lines of a 2-D GP run are about 700 bytes.
const RECORD_BASE: f64 = 1024.0;
/// Bytes per input dimension of a record line: x (about 20 bytes a coordinate) and a
/// fitted lengthscale per dimension (`"gp.lengthscale[i]":…`, about 45 bytes).
const RECORD_PER_DIM: f64 = 72.0;
/// Matrices of size n × n a GP fit holds at once (Gram matrix, Cholesky factor, the MAP
/// gradient's workspace).
const GP_MATRICES: f64 = 3.0;

/// Estimates one run of `spec` (dimension `dim`, `initial` initial points, `raw_samples`
/// the largest of its policies' optimiser settings, `work` what a decision costs).
pub fn estimate(
    spec: &Spec,
    dim: usize,
    initial: usize,
    raw_samples: usize,
    work: &DecisionWork,
) -> Estimate {
    let policy = policy_evaluations(spec);
    let cap = spec.limits.evaluations() as f64;
    // Unbounded by the budget, a run stops at the evaluation cap (see `engine.rs`).
    let evaluations = policy.map_or(cap.max(initial as f64), |p| initial as f64 + p);
    let d = dim as f64;
    // The data set holds each point twice (queried and realised x); the initial design is
    // drawn as one matrix; raw samples and their scores are held together.
    let mut memory = evaluations * (2.0 * d + 8.0) * 8.0 + initial as f64 * d * 8.0;
    memory += raw_samples as f64 * (d + 1.0) * 8.0;
    if work.uses_model {
        memory += GP_MATRICES * evaluations * evaluations * 8.0;
    }
    // Every decision the budget allows; a run the budget does not bound makes at least
    // one, on the whole initial design (its length is not known in advance, and it stops at
    // the evaluation cap).
    let decisions = policy.unwrap_or(1.0).min(cap);
    Estimate {
        initial,
        policy,
        evaluations,
        memory,
        records: evaluations * (RECORD_BASE + RECORD_PER_DIM * d),
        cpu_seconds: decisions_flops(work, initial as f64, decisions) / FLOPS,
    }
}

/// Policy evaluations the budget allows at most, when the spec bounds them: an iteration
/// budget, or a cost budget divided by the cost function's smallest cost (each evaluation
/// costs at least that much, and one more may overshoot).
fn policy_evaluations(spec: &Spec) -> Option<f64> {
    let by_cost = spec.budget.cost.and_then(|b| {
        let min = spec.cost.as_ref()?.min_cost()?;
        (min > 0.0).then(|| (b / min).ceil() + 1.0)
    });
    let by_iterations = spec.budget.iterations.map(|i| i as f64);
    match (by_cost, by_iterations) {
        (Some(c), Some(i)) => Some(c.min(i)),
        (c, i) => c.or(i),
    }
}

/// Checks an estimate against the spec's limits; the message lists every limit exceeded,
/// the estimate and how to raise the limit.
pub fn check(spec: &Spec, e: &Estimate) -> Result<(), String> {
    let mut over = Vec::new();
    let cap = spec.limits.evaluations();
    let n = e.initial as f64 + e.policy.unwrap_or(0.0);
    // Memory, records and time grow with the evaluations: past the cap, that is the message.
    let too_many = e.initial > cap || e.policy.is_some_and(|_| n > cap as f64);
    if too_many {
        let policy = e.policy.map_or("an unbounded number of".into(), fmt_count);
        over.push(format!(
            "up to {} evaluations per run ({} initial + {policy} allowed by the budget), more \
             than limits.max_evaluations = {cap}",
            fmt_count(n),
            e.initial
        ));
    } else {
        over.extend(over_resources(&spec.limits, e));
    }
    if over.is_empty() {
        return Ok(());
    }
    Err(format!(
        "the spec asks for {}; check the dimension, budget, initial design and optimizer \
         settings, or, if this is intended, raise the limit in the spec's `limits:` section \
         (`limits: {{ max_evaluations: N, max_memory_gb: G, max_records_gb: G, \
         max_cpu_hours: H }}`)",
        over.join("; and ")
    ))
}

/// The memory, record and CPU-time limits that an estimate exceeds, each with its
/// estimate, in the units of its key.
fn over_resources(limits: &Limits, e: &Estimate) -> Vec<String> {
    let (memory, records, cpu_seconds, per) = (e.memory, e.records, e.cpu_seconds, "per run");
    let mut over = Vec::new();
    let memory_gb = limits.max_memory_gb.unwrap_or(MAX_MEMORY_GB);
    if memory > memory_gb * 1e9 {
        over.push(format!(
            "an estimated {} GB of memory {per}, more than limits.max_memory_gb = {} GB",
            fmt_number(memory / 1e9),
            fmt_number(memory_gb)
        ));
    }
    let records_gb = limits.max_records_gb.unwrap_or(MAX_RECORDS_GB);
    if records > records_gb * 1e9 {
        over.push(format!(
            "an estimated {} GB of records {per}, more than limits.max_records_gb = {} GB",
            fmt_number(records / 1e9),
            fmt_number(records_gb)
        ));
    }
    let hours = limits.max_cpu_hours.unwrap_or(MAX_CPU_HOURS);
    if cpu_seconds > hours * 3600.0 {
        over.push(format!(
            "an estimated {} CPU hours {per} for the model fits and acquisition optimisation, \
             more than limits.max_cpu_hours = {} hours",
            fmt_number(cpu_seconds / 3600.0),
            fmt_number(hours)
        ));
    }
    over
}

/// Checks a data set of `rows` observations, to which `suggest` fits the model and then
/// makes one decision, against the spec's limits; the message says what the suggestion
/// would cost.
pub fn check_observations(spec: &Spec, work: &DecisionWork, rows: usize) -> Result<(), String> {
    let l = &spec.limits;
    let n = rows as f64;
    let d = work.dim as f64;
    let mut memory = n * (2.0 * d + 8.0) * 8.0;
    if work.uses_model {
        memory += GP_MATRICES * n * n * 8.0;
    }
    let hours = decision_flops(work, n) / FLOPS / 3600.0;
    let memory_gb = l.max_memory_gb.unwrap_or(MAX_MEMORY_GB);
    let max_hours = l.max_cpu_hours.unwrap_or(MAX_CPU_HOURS);
    let over: Vec<String> = [
        (rows > l.evaluations())
            .then(|| format!("limits.max_evaluations = {} observations", l.evaluations())),
        (memory > memory_gb * 1e9)
            .then(|| format!("limits.max_memory_gb = {} GB", fmt_number(memory_gb))),
        (hours > max_hours)
            .then(|| format!("limits.max_cpu_hours = {} hours", fmt_number(max_hours))),
    ]
    .into_iter()
    .flatten()
    .collect();
    if over.is_empty() {
        return Ok(());
    }
    Err(format!(
        "the file holds {rows} observations, and a suggestion fits the model to all of them: \
         an estimated {} GB of memory and {} CPU hours, more than the spec's {}; if this is \
         intended, raise the limits in the spec's `limits:` section",
        fmt_number(memory / 1e9),
        fmt_number(hours),
        over.join(", ")
    ))
}

/// A count for messages: whole numbers below 10¹⁵, scientific notation above.
fn fmt_count(v: f64) -> String {
    if v < 1e15 {
        format!("{v:.0}")
    } else {
        format!("{v:.1e}")
    }
}

/// A quantity for messages, in its key's unit, with three significant digits: fixed
/// notation from 0.001 to a million, scientific notation outside (never `0.0` for a small
/// positive value, nor twenty digits for a small limit).
pub fn fmt_number(v: f64) -> String {
    if v == 0.0 || !v.is_finite() {
        return format!("{v}");
    }
    let a = v.abs();
    if (1e-3..1e6).contains(&a) {
        let decimals = (2 - a.log10().floor() as i32).max(0) as usize;
        let text = format!("{v:.decimals$}");
        return trim_zeros(&text).to_string();
    }
    let text = format!("{v:.2e}");
    match text.split_once('e') {
        Some((mantissa, exp)) => format!("{}e{exp}", trim_zeros(mantissa)),
        None => text,
    }
}

/// A decimal without trailing zeros after its point (`16.0` → `16`, `0.50` → `0.5`).
fn trim_zeros(text: &str) -> &str {
    if text.contains('.') {
        text.trim_end_matches('0').trim_end_matches('.')
    } else {
        text
    }
}
