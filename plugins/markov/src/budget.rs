//! §4: budget-constrained values from the cost-per-sample value function.
//!
//! `V(H, λ)` (the value with cost λ per sample) is a supremum of functions linear in λ, hence
//! convex; `V₁(H, T) = inf_λ V(H, λ) + λT` (Theorem 5) is therefore a one-dimensional convex
//! minimisation, solved here by golden-section search on `[0, λ_max]` where
//! `λ_max = ℓ · max(f)` is a cost at which no sample can pay for itself. Each evaluation
//! solves the dynamic program exactly at that λ, and evaluations are shared across budgets.
//! `V₂(H, T) ≤ V₁(H, T)`, and the one-step policy taking exactly T samples bounds `V₂` below.

use crate::dp::{Setup, Solution, SolveOptions};
use crate::sim::{McEstimate, PolicyRule};
use cabo_core::{Error, Result};
use serde::Serialize;
use std::collections::BTreeMap;

/// `V₁(H, T)` at one expected budget.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ExpectedBudgetValue {
    /// The expected number of samples T.
    pub samples: f64,
    /// `inf_λ V(H, λ) + λT`.
    pub value: f64,
    /// The minimising λ (to within the search tolerance).
    pub lambda: f64,
}

/// `φ(λ) = V(H, λ)` for one initial history, memoised across budgets.
pub struct CostValueCurve {
    base: Setup,
    y_start: f64,
    y_end: f64,
    memo: BTreeMap<u64, f64>,
}

impl CostValueCurve {
    /// The curve for `base` (its cost is ignored) from `{(0, y_start), (ℓ, y_end)}`.
    pub fn new(base: &Setup, y_start: f64, y_end: f64) -> Result<Self> {
        base.validate()?;
        base.grid.level_of(y_start)?;
        base.grid.level_of(y_end)?;
        Ok(CostValueCurve {
            base: base.clone(),
            y_start,
            y_end,
            memo: BTreeMap::new(),
        })
    }

    /// `V(H, λ)` by solving the dynamic program at cost λ.
    pub fn value(&mut self, lambda: f64) -> Result<f64> {
        if let Some(v) = self.memo.get(&lambda.to_bits()) {
            return Ok(*v);
        }
        let mut s = self.base.clone();
        s.cost = lambda;
        let opts = SolveOptions {
            one_step: false,
            force_full_state: false,
        };
        let v = Solution::solve(&s, &opts)?.initial_value(self.y_start, self.y_end)?;
        self.memo.insert(lambda.to_bits(), v);
        Ok(v)
    }

    /// Number of dynamic programs solved so far.
    pub fn evaluations(&self) -> usize {
        self.memo.len()
    }

    /// `V₁(H, T)` by golden-section search over λ until the bracket is shorter than `tol`.
    pub fn expected_budget_value(&mut self, samples: f64, tol: f64) -> Result<ExpectedBudgetValue> {
        if !(samples.is_finite() && samples >= 0.0) {
            return Err(Error::invalid(format!(
                "the expected budget T must be non-negative and finite, got {samples}"
            )));
        }
        if !(tol.is_finite() && tol > 0.0) {
            return Err(Error::invalid(format!("`tol` must be positive, got {tol}")));
        }
        let (mut a, mut b) = (0.0, self.base.reward.max_rate() * self.base.grid.length);
        let inv_phi = (5f64.sqrt() - 1.0) / 2.0;
        let mut x1 = b - inv_phi * (b - a);
        let mut x2 = a + inv_phi * (b - a);
        let mut f1 = self.value(x1)? + x1 * samples;
        let mut f2 = self.value(x2)? + x2 * samples;
        while b - a > tol {
            if f1 <= f2 {
                b = x2;
                x2 = x1;
                f2 = f1;
                x1 = b - inv_phi * (b - a);
                f1 = self.value(x1)? + x1 * samples;
            } else {
                a = x1;
                x1 = x2;
                f1 = f2;
                x2 = a + inv_phi * (b - a);
                f2 = self.value(x2)? + x2 * samples;
            }
        }
        // The bracket's ends are valid upper bounds too; report the best point evaluated.
        let fa = self.value(a)? + a * samples;
        let fb = self.value(b)? + b * samples;
        let mut best = (f1, x1);
        for cand in [(f2, x2), (fa, a), (fb, b)] {
            if cand.0 < best.0 {
                best = cand;
            }
        }
        Ok(ExpectedBudgetValue {
            samples,
            value: best.0,
            lambda: best.1,
        })
    }
}

/// The lower end of the `V₂(H, T)` band: the one-step policy that takes exactly `T`
/// samples, by Monte Carlo (its `mean_reward` is the bound). `solution` must have the
/// one-step tables; its cost does not matter (one-step gains do not depend on it).
pub fn fixed_budget_one_step(
    solution: &Solution,
    samples: usize,
    y_start: f64,
    y_end: f64,
    runs: usize,
    seed: u64,
) -> Result<McEstimate> {
    solution.monte_carlo(
        PolicyRule::OneStepFixed { samples },
        y_start,
        y_end,
        runs,
        seed,
    )
}
