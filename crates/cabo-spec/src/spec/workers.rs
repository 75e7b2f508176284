//! `workers:`: how many evaluations a run keeps in flight, and how it decides meanwhile.
//!
//! `workers: 4` is short for `workers: { count: 4 }`. An evaluation occupies its worker for
//! its cost, so the cost is the evaluation's duration and the run's clock is simulated,
//! exactly and deterministically; see the run loop for the schedule. One worker, the
//! default, is the sequential run of the papers, bit for bit.

use cabo_core::PendingRule;
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use std::fmt;

/// The largest `workers.count` unless `limits.max_workers` raises it.
pub const MAX_WORKERS: usize = 256;

/// A run's workers: how many, when they start, what the budget counts and what pending
/// points are taken to return.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Workers {
    /// How many evaluations run at once (1: one after another).
    pub count: usize,
    /// Whether a worker starts as soon as it frees or waits for the whole batch.
    #[serde(default, skip_serializing_if = "is_default")]
    pub mode: WorkerMode,
    /// What the budget's `cost` counts with several workers.
    #[serde(default, skip_serializing_if = "is_default")]
    pub budget: BudgetClock,
    /// The fantasy every policy decides with for the points in flight, replacing each
    /// policy's own default ([`cabo_core::PolicySpec::pending`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<PendingRule>,
}

fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

impl Default for Workers {
    fn default() -> Self {
        Workers {
            count: 1,
            mode: WorkerMode::default(),
            budget: BudgetClock::default(),
            pending: None,
        }
    }
}

impl Workers {
    /// True for one worker with every option at its default (the section is then not
    /// serialised, so specs without it keep their fingerprints).
    pub fn is_default(&self) -> bool {
        *self == Workers::default()
    }
}

/// When a free worker starts its next evaluation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WorkerMode {
    /// As soon as it frees: the policy decides with the other workers' points pending.
    #[default]
    Asynchronous,
    /// Once every worker is free: the policy chooses `count` points in turn, each with the
    /// earlier ones pending (sequential greedy fantasies), and all start together.
    Synchronous,
}

/// What a cost budget counts when several workers share it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BudgetClock {
    /// The cost spent over all workers.
    #[default]
    TotalCost,
    /// The wall time the workers have run for, evaluations costing their duration (the
    /// makespan); policies see it as the budget spent.
    WallTime,
}

/// The map form, read with serde's own messages for unknown keys.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WorkersMap {
    count: usize,
    #[serde(default)]
    mode: WorkerMode,
    #[serde(default)]
    budget: BudgetClock,
    #[serde(default)]
    pending: Option<PendingRule>,
}

impl<'de> Deserialize<'de> for Workers {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Either;
        impl<'de> Visitor<'de> for Either {
            type Value = Workers;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a number of workers, or a map with `count`")
            }
            fn visit_u64<E: de::Error>(self, count: u64) -> Result<Workers, E> {
                Ok(Workers {
                    count: usize::try_from(count).map_err(E::custom)?,
                    ..Workers::default()
                })
            }
            fn visit_i64<E: de::Error>(self, count: i64) -> Result<Workers, E> {
                Err(E::custom(format!(
                    "a number of workers must be at least 1, got {count}"
                )))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Workers, A::Error> {
                let m = WorkersMap::deserialize(de::value::MapAccessDeserializer::new(map))?;
                Ok(Workers {
                    count: m.count,
                    mode: m.mode,
                    budget: m.budget,
                    pending: m.pending,
                })
            }
        }
        deserializer.deserialize_any(Either)
    }
}

/// Checks the count against the spec's limit (`limits.max_workers`, else [`MAX_WORKERS`]).
pub fn check(workers: &Workers, max: Option<usize>) -> Result<(), String> {
    let limit = max.unwrap_or(MAX_WORKERS);
    match workers.count {
        0 => Err("must be at least 1 (one worker evaluates one point at a time)".into()),
        k if k > limit => Err(format!(
            "{k} workers exceed the spec's limit of {limit}; raise `limits.max_workers` if the \
             run really keeps {k} evaluations in flight"
        )),
        _ => Ok(()),
    }
}
