//! Budgets: how much a run may spend, and how much it has spent.
//!
//! Semantics shared by every run: the policy is asked for a decision while the budget is not
//! exhausted; the last evaluation may overshoot a cost budget (as in the papers) and the
//! overshoot is recorded. The initial design is free unless the spec says it counts.

use crate::{Error, Result};
use serde::{Deserialize, Serialize};

/// A budget in total cost, in policy iterations, or both (whichever runs out first).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Budget {
    /// Total cost the policy may spend.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    /// Number of evaluations the policy may make.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iterations: Option<usize>,
}

impl Budget {
    /// Checks that at least one limit is given and every limit is positive.
    pub fn validate(&self) -> Result<()> {
        match (self.cost, self.iterations) {
            (None, None) => Err(Error::invalid(
                "a budget needs `cost` (total cost) or `iterations` (number of evaluations)",
            )),
            (Some(c), _) if !(c.is_finite() && c > 0.0) => Err(Error::invalid(format!(
                "`cost` must be a positive finite number, got {c}"
            ))),
            (_, Some(0)) => Err(Error::invalid("`iterations` must be at least 1, got 0")),
            _ => Ok(()),
        }
    }
}

/// Where a run stands against its budget.
#[derive(Debug, Clone, PartialEq)]
pub struct BudgetState {
    /// The budget.
    pub budget: Budget,
    /// Cost spent so far that counts against the budget.
    pub spent: f64,
    /// Policy evaluations made so far.
    pub iterations: usize,
}

impl BudgetState {
    /// A fresh state (nothing spent).
    pub fn new(budget: Budget) -> Self {
        BudgetState {
            budget,
            spent: 0.0,
            iterations: 0,
        }
    }

    /// True once either limit is reached.
    pub fn exhausted(&self) -> bool {
        self.budget.cost.is_some_and(|c| self.spent >= c)
            || self.budget.iterations.is_some_and(|n| self.iterations >= n)
    }

    /// Cost still available (`None` for an iteration budget).
    pub fn remaining_cost(&self) -> Option<f64> {
        self.budget.cost.map(|c| (c - self.spent).max(0.0))
    }

    /// Share of the budget left, in [0, 1] (cost if given, else iterations). EI-PUC-CC's
    /// exponent ν is this ratio.
    pub fn remaining_fraction(&self) -> f64 {
        match (self.budget.cost, self.budget.iterations) {
            (Some(c), _) => ((c - self.spent) / c).clamp(0.0, 1.0),
            (None, Some(n)) => (1.0 - self.iterations as f64 / n as f64).clamp(0.0, 1.0),
            (None, None) => 1.0,
        }
    }

    /// Records one evaluation's cost.
    pub fn charge(&mut self, cost: f64) {
        self.spent += cost;
        self.iterations += 1;
    }

    /// How far the spend went past a cost budget (0 when within it).
    pub fn overshoot(&self) -> f64 {
        self.budget.cost.map_or(0.0, |c| (self.spent - c).max(0.0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_empty_zero_and_negative_budgets() {
        for b in [
            Budget {
                cost: None,
                iterations: None,
            },
            Budget {
                cost: Some(0.0),
                iterations: None,
            },
            Budget {
                cost: Some(-3.0),
                iterations: None,
            },
            Budget {
                cost: None,
                iterations: Some(0),
            },
        ] {
            assert!(b.validate().is_err(), "{b:?}");
        }
    }

    #[test]
    fn last_evaluation_may_overshoot_and_is_recorded() {
        let mut s = BudgetState::new(Budget {
            cost: Some(10.0),
            iterations: None,
        });
        s.charge(6.0);
        assert!(!s.exhausted());
        assert!((s.remaining_fraction() - 0.4).abs() < 1e-15);
        s.charge(7.0);
        assert!(s.exhausted());
        assert_eq!(s.overshoot(), 3.0);
        assert_eq!(s.remaining_cost(), Some(0.0));
    }
}
