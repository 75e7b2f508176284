//! Budget scheduling by rollout of a base policy (seed 001 §4.3).
//!
//! The run's remaining budget is usually far more than `N` look-ahead steps can spend, which
//! would make the budget irrelevant to the tree. Instead, `N` steps of EI-PUC-CC are
//! fantasised on a copy of the models — one joint fantasy per step, the posterior means of y
//! and ln c at the EI-PUC-CC maximiser — and the budget is the smaller of the fantasised
//! spend and the remaining budget. Later decisions reuse `previous − last observed cost` while
//! it stays at or above the smallest fantasised cost (the reference implementation's refill
//! rule), and roll out again otherwise. The cost-cooling exponent ν of the rollout is the
//! run's remaining budget fraction at the decision, held fixed over the fantasised steps.

use cabo_baselines::acquisitions::{CostView, CostWeightedFn};
use cabo_core::capability::{self, Capability, Fantasize, FantasizeCost};
use cabo_core::{
    CostBelief, DecisionContext, Diagnostics, Error, OptimizerSettings, Posterior, Result,
    derive_seed,
};
use cabo_optim::{MaximizeOptions, maximize};
use serde::{Deserialize, Serialize};

/// Which budget a budgeted acquisition uses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BudgetMode {
    /// The run's actual remaining budget.
    #[default]
    Remaining,
    /// The rollout schedule of §4.3.
    Scheduled,
}

/// A belief a rollout fantasises from: the decision's own, borrowed, until the first
/// fantasy replaces it with a conditioned copy.
enum Fantasised<'a, T: ?Sized> {
    Borrowed(&'a T),
    Owned(Box<T>),
}

impl<T: ?Sized> std::ops::Deref for Fantasised<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        match self {
            Fantasised::Borrowed(b) => b,
            Fantasised::Owned(b) => b,
        }
    }
}

/// Fantasises `steps` evaluations of EI-PUC-CC (exponent `nu`) and returns their costs.
/// Both beliefs must offer [`Capability::Fantasize`]; a cost known exactly does, trivially.
pub fn rollout_costs(
    f: &dyn Posterior,
    cost: &dyn CostBelief,
    best: f64,
    steps: usize,
    nu: f64,
    settings: &OptimizerSettings,
    seed: u64,
) -> Result<Vec<f64>> {
    // Fail before the first maximisation rather than after it.
    fantasizers(f, cost)?;
    let mut fp = Fantasised::Borrowed(f);
    let mut cp = Fantasised::Borrowed(cost);
    let mut best = best;
    let mut costs = Vec::with_capacity(steps);
    for step in 0..steps {
        let puc_cc =
            CostWeightedFn::new(&*fp, CostView::Belief(&*cp), best, -nu, Diagnostics::new());
        let m = maximize(
            &puc_cc,
            fp.dim(),
            settings,
            derive_seed(&[&seed, &"rollout", &step]),
            &MaximizeOptions::default(),
        )?;
        let y = fp.mean_var(&m.x).mean;
        let lc = cp.ln_cost(&m.x).mean;
        costs.push(lc.exp());
        best = best.max(y);
        let (ff, fc) = fantasizers(&*fp, &*cp)?;
        let next = (ff.condition(&m.x, &[y])?, fc.condition(&m.x, &[lc])?);
        (fp, cp) = (Fantasised::Owned(next.0), Fantasised::Owned(next.1));
    }
    Ok(costs)
}

/// The fantasy capabilities of both beliefs, or an error naming the one that lacks it.
fn fantasizers<'a>(
    f: &'a dyn Posterior,
    c: &'a dyn CostBelief,
) -> Result<(&'a dyn Fantasize, &'a dyn FantasizeCost)> {
    let who = "budget scheduling";
    let ff = f
        .fantasize()
        .ok_or_else(|| capability::missing(who, "model", Capability::Fantasize))?;
    let fc = c
        .fantasize()
        .ok_or_else(|| capability::missing(who, "cost model", Capability::Fantasize))?;
    Ok((ff, fc))
}

/// The scheduled budget's state across decisions of one run.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Scheduler {
    current: Option<f64>,
    min_cost: f64,
    seen: usize,
    /// Whether the last call rolled out (for diagnostics).
    pub rolled_out: bool,
}

impl Scheduler {
    /// The budget `B − s(D)` to use at this decision under `mode`; `∞` when the run has no
    /// cost budget.
    pub fn budget(
        &mut self,
        ctx: &DecisionContext<'_>,
        mode: BudgetMode,
        steps: usize,
    ) -> Result<f64> {
        self.rolled_out = false;
        let Some(remaining) = ctx.budget.remaining_cost() else {
            return Ok(f64::INFINITY);
        };
        if mode == BudgetMode::Remaining {
            return Ok(remaining);
        }
        let n = ctx.data.len();
        if let (Some(cur), Some(last)) = (self.current, ctx.data.observations().last())
            && n > self.seen
        {
            let next = cur - last.outcome.cost;
            if next >= self.min_cost {
                let b = next.min(remaining);
                self.current = Some(b);
                self.seen = n;
                return Ok(b);
            }
        }
        let best = ctx
            .best_y()
            .ok_or_else(|| Error::invalid("budget scheduling needs at least one observation"))?;
        let post = ctx.posterior()?;
        let cost = ctx.cost_belief()?;
        let costs = rollout_costs(
            post,
            cost,
            best,
            steps,
            ctx.budget.remaining_fraction(),
            ctx.optimizer,
            derive_seed(&[&ctx.seed, &"budget schedule"]),
        )?;
        let total: f64 = costs.iter().sum();
        self.min_cost = costs.iter().copied().fold(f64::INFINITY, f64::min);
        let b = total.min(remaining);
        self.current = Some(b);
        self.seen = n;
        self.rolled_out = true;
        Ok(b)
    }
}
