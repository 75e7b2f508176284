//! What flows through a run: queries, outcomes, observations and the dataset policies see.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A point to evaluate: `x` in the unit cube, and for cost-varying-subset problems the control
/// set whose variables `x` fixes (the environment draws the others).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Query {
    /// Index into the problem's control sets, or `None` for a full query.
    pub control_set: Option<usize>,
    /// The point in `[0,1]^d`; with a control set only its variables are used.
    pub x: Vec<f64>,
}

impl Query {
    /// A full query at `x`.
    pub fn at(x: Vec<f64>) -> Self {
        Query {
            control_set: None,
            x,
        }
    }
}

/// What the black box returned for a query.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    /// The observed objective value (possibly noisy).
    pub y: f64,
    /// The observed evaluation cost (> 0).
    pub cost: f64,
    /// The full point actually evaluated (the query's x with uncontrolled variables drawn).
    pub x: Vec<f64>,
    /// The noise-free value regret is measured with, when the problem knows it (for a
    /// control-set query, the expectation over the uncontrolled variables).
    pub value: Option<f64>,
    /// Numbers this one evaluation reported beside `y` (an external program's training
    /// time, say); recorded with the evaluation. Metrics of the whole history are
    /// [`crate::Problem::metrics`]'s.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub metrics: BTreeMap<String, f64>,
}

impl Outcome {
    /// What a problem observed at the full point `x`: `y` at cost `cost`, with the
    /// noise-free `value` when it knows it, and no metrics of its own.
    pub fn new(y: f64, cost: f64, x: Vec<f64>, value: Option<f64>) -> Self {
        Outcome {
            y,
            cost,
            x,
            value,
            metrics: BTreeMap::new(),
        }
    }
}

/// Whether an observation came from the initial design or from the policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Part of the initial design.
    Initial,
    /// Chosen by the policy.
    Policy,
}

/// A query together with its outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    /// The query that was asked.
    pub query: Query,
    /// What came back.
    pub outcome: Outcome,
    /// Where the query came from.
    pub phase: Phase,
}

impl Observation {
    /// A full query at `x` from the initial design that observed `y` at cost `cost`, with no
    /// noise-free value: how tests, benchmarks and `inspect` write a data set by hand.
    pub fn initial(x: Vec<f64>, y: f64, cost: f64) -> Self {
        Observation {
            query: Query::at(x.clone()),
            outcome: Outcome::new(y, cost, x, None),
            phase: Phase::Initial,
        }
    }
}

/// The largest magnitude of an observed value or cost that models can fit: they standardise
/// what they fit, and the squares of larger values are not finite, so a fit on them fails
/// far from the observation at fault.
pub const MAX_MODELLED_MAGNITUDE: f64 = 1e150;

/// Everything observed so far in one run, in order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Dataset {
    dim: usize,
    observations: Vec<Observation>,
}

impl Dataset {
    /// An empty dataset over `[0,1]^dim`.
    pub fn new(dim: usize) -> Self {
        Dataset {
            dim,
            observations: Vec::new(),
        }
    }

    /// Input dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Number of observations.
    pub fn len(&self) -> usize {
        self.observations.len()
    }

    /// True when nothing has been observed.
    pub fn is_empty(&self) -> bool {
        self.observations.is_empty()
    }

    /// Appends an observation; its realised point must have the dataset's dimension.
    pub fn push(&mut self, obs: Observation) -> crate::Result<()> {
        if obs.outcome.x.len() != self.dim {
            return Err(crate::Error::invalid(format!(
                "observation has {} inputs, the dataset has dimension {}",
                obs.outcome.x.len(),
                self.dim
            )));
        }
        self.observations.push(obs);
        Ok(())
    }

    /// The first `len` observations (all of them when there are fewer).
    pub fn prefix(&self, len: usize) -> Dataset {
        Dataset {
            dim: self.dim,
            observations: self.observations[..len.min(self.len())].to_vec(),
        }
    }

    /// Everything observed, in order.
    pub fn observations(&self) -> &[Observation] {
        &self.observations
    }

    /// The first observation with a value or cost beyond [`MAX_MODELLED_MAGNITUDE`]: its
    /// index (in a run, the evaluation's), which of the two (`"y"` or `"cost"`) and the
    /// number.
    pub fn first_beyond_modelled_magnitude(&self) -> Option<(usize, &'static str, f64)> {
        self.observations.iter().enumerate().find_map(|(i, o)| {
            [("y", o.outcome.y), ("cost", o.outcome.cost)]
                .into_iter()
                .find(|(_, v)| v.abs() > MAX_MODELLED_MAGNITUDE)
                .map(|(what, v)| (i, what, v))
        })
    }

    /// The realised inputs, row-major `n × d`.
    pub fn x_matrix(&self) -> Vec<f64> {
        self.observations
            .iter()
            .flat_map(|o| o.outcome.x.iter().copied())
            .collect()
    }

    /// The observed objective values.
    pub fn ys(&self) -> Vec<f64> {
        self.observations.iter().map(|o| o.outcome.y).collect()
    }

    /// The observed costs.
    pub fn costs(&self) -> Vec<f64> {
        self.observations.iter().map(|o| o.outcome.cost).collect()
    }

    /// The best observed objective value, if any.
    pub fn best_y(&self) -> Option<f64> {
        self.observations
            .iter()
            .map(|o| o.outcome.y)
            .fold(None, |m, y| Some(m.map_or(y, |m: f64| m.max(y))))
    }

    /// The observation with the best objective value (the first of ties).
    pub fn best(&self) -> Option<&Observation> {
        self.observations
            .iter()
            .reduce(|a, b| if b.outcome.y > a.outcome.y { b } else { a })
    }

    /// Total cost of the observations in `phase` (or all, with `None`).
    pub fn total_cost(&self, phase: Option<Phase>) -> f64 {
        self.observations
            .iter()
            .filter(|o| phase.is_none_or(|p| o.phase == p))
            .map(|o| o.outcome.cost)
            .sum()
    }
}
