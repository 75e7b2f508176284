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
        for (key, v) in [
            ("max_memory_gb", self.max_memory_gb),
            ("max_records_gb", self.max_records_gb),
        ] {
            if let Some(v) = v
                && !(v.is_finite() && v > 0.0)
            {
                return Err(format!("{key} must be a positive number of GB, got {v}"));
            }
        }
        if self.max_evaluations == Some(0) || self.max_runs == Some(0) {
            return Err("max_evaluations and max_runs must be at least 1".into());
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
/// the largest of its policies' optimiser settings).
pub fn estimate(spec: &Spec, dim: usize, initial: usize, raw_samples: usize) -> Estimate {
    let policy = policy_evaluations(spec);
    let cap = spec.limits.evaluations() as f64;
    // Unbounded by the budget, a run stops at the evaluation cap (see `engine.rs`).
    let evaluations = policy.map_or(cap.max(initial as f64), |p| initial as f64 + p);
    let d = dim as f64;
    let uses_model = spec.model.is_some() || spec.policies.iter().any(|p| p.model.is_some());
    // The data set holds each point twice (queried and realised x); the initial design is
    // drawn as one matrix; raw samples and their scores are held together.
    let mut memory = evaluations * (2.0 * d + 8.0) * 8.0 + initial as f64 * d * 8.0;
    memory += raw_samples as f64 * (d + 1.0) * 8.0;
    if uses_model {
        memory += GP_MATRICES * evaluations * evaluations * 8.0;
    }
    Estimate {
        initial,
        policy,
        evaluations,
        memory,
        records: evaluations * (RECORD_BASE + RECORD_PER_DIM * d),
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
    // Memory and records grow with the evaluations: past the cap, that is the message.
    let too_many = e.initial > cap || e.policy.is_some_and(|_| n > cap as f64);
    if too_many {
        let policy = e.policy.map_or("an unbounded number of".into(), fmt_count);
        over.push(format!(
            "up to {} evaluations per run ({} initial + {policy} allowed by the budget), more \
             than limits.max_evaluations = {cap}",
            fmt_count(n),
            e.initial
        ));
    }
    let memory_gb = spec.limits.max_memory_gb.unwrap_or(MAX_MEMORY_GB);
    if !too_many && e.memory > memory_gb * 1e9 {
        over.push(format!(
            "an estimated {} of memory per run, more than limits.max_memory_gb = {memory_gb}",
            fmt_gb(e.memory)
        ));
    }
    let records_gb = spec.limits.max_records_gb.unwrap_or(MAX_RECORDS_GB);
    if !too_many && e.records > records_gb * 1e9 {
        over.push(format!(
            "an estimated {} of records per run, more than limits.max_records_gb = {records_gb}",
            fmt_gb(e.records)
        ));
    }
    if over.is_empty() {
        return Ok(());
    }
    Err(format!(
        "the spec asks for {}; check the dimension, budget, initial design and optimizer \
         settings, or, if this is intended, raise the limit in the spec's `limits:` section \
         (`limits: {{ max_evaluations: N, max_memory_gb: G, max_records_gb: G }}`)",
        over.join("; and ")
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

/// Bytes as GB for messages.
fn fmt_gb(bytes: f64) -> String {
    let gb = bytes / 1e9;
    if gb < 1e6 {
        format!("{gb:.1} GB")
    } else {
        format!("{gb:.1e} GB")
    }
}
