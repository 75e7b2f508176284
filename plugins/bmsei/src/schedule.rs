//! Budget scheduling by rollout of a base policy (seed 001 §4.3).
//!
//! The run's remaining budget is usually far more than `N` look-ahead steps can spend, which
//! would make the budget irrelevant to the tree. Instead, `N` steps of EI-PUC-CC are
//! fantasised on a copy of the models and the budget is the smaller of the fantasised spend
//! and the remaining budget. This follows seed 001's own code (`fantasize_costs` and
//! `get_suggested_budget`, strategy `fantasy_costs_from_aux_policy`) step for step:
//!
//! - each step maximises EI-PUC-CC with the cost-cooling exponent `ν = left / B`, where `B`
//!   is the run's cost budget and `left` the remaining budget less the costs fantasised so
//!   far, so ν is recomputed at every step;
//! - at the maximiser it draws one joint observation `(y, ln c)` from the posterior with
//!   observation noise (independent standard normals for the two beliefs), conditions both
//!   models on it and counts `y` in the incumbent;
//! - the budget is `min(Σ fantasised costs, remaining)` and the refill's lower bound the
//!   smallest fantasised cost. Later decisions reuse `previous − last observed cost` while
//!   that stays above the lower bound, and roll out again otherwise.
//!
//! Two choices are cabo's own: ν is held at 0 once the fantasised costs exceed what remains
//! (the authors' ratio would turn negative and reward expensive points, which is no longer
//! cost cooling, whose exponent lies in `[0, 1]`); and each step is searched with the
//! decision's optimiser settings rather than their fixed 50·d raw samples, 5·d restarts and
//! 100 iterations, so that a spec's smoke settings keep its rollouts small too.

use cabo_core::capability::{self, Capability, Fantasize, FantasizeCost};
use cabo_core::{
    CostBelief, DecisionContext, Diagnostics, Error, OptimizerSettings, Posterior, Result, Rng,
    derive_seed,
};
use cabo_optim::{MaximizeOptions, maximize};
use cabo_toolkit::acquisition::{CostView, CostWeightedFn};
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

/// What a rollout spends from: the run's remaining budget and its whole cost budget `B`,
/// whose ratio is the first step's cost-cooling exponent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RolloutBudget {
    /// The budget left at the decision.
    pub left: f64,
    /// The run's whole cost budget `B`.
    pub initial: f64,
}

impl RolloutBudget {
    /// The cost-cooling exponent after spending `spent` of what is left: `(left − spent)/B`,
    /// held in `[0, 1]` (0 for a budget of 0).
    pub fn exponent(&self, spent: f64) -> f64 {
        let nu = (self.left - spent) / self.initial;
        if nu.is_nan() { 0.0 } else { nu.clamp(0.0, 1.0) }
    }
}

/// The standard normals `(ε_y, ε_c)` of the rollout's fantasy at `step`, from `seed`.
pub fn fantasy_draw(seed: u64, step: usize) -> (f64, f64) {
    let mut r = Rng::new(derive_seed(&[&seed, &"rollout fantasy", &step]));
    (r.normal(), r.normal())
}

/// Runs `steps` steps of the schedule's bookkeeping: `step(i, ν)` takes one fantasised step
/// with exponent ν and returns its cost, and ν is recomputed from what the earlier steps
/// spent ([`RolloutBudget::exponent`]). Returns the costs.
fn spend<S>(steps: usize, budget: RolloutBudget, mut step: S) -> Result<Vec<f64>>
where
    S: FnMut(usize, f64) -> Result<f64>,
{
    let mut costs = Vec::with_capacity(steps);
    let mut spent = 0.0;
    for i in 0..steps {
        let c = step(i, budget.exponent(spent))?;
        spent += c;
        costs.push(c);
    }
    Ok(costs)
}

/// A fantasised rollout: where each step evaluated and what it cost.
#[derive(Debug, Clone, PartialEq)]
pub struct Rollout {
    /// The EI-PUC-CC maximiser of each step.
    pub points: Vec<Vec<f64>>,
    /// The sampled cost of each step.
    pub costs: Vec<f64>,
}

/// Fantasises `steps` evaluations of EI-PUC-CC from the budget `budget` (see the module
/// documentation); step `i` draws its observation from [`fantasy_draw`]`(seed, i)`. Both
/// beliefs must offer [`Capability::Fantasize`]; a cost known exactly does, trivially.
pub fn rollout(
    f: &dyn Posterior,
    cost: &dyn CostBelief,
    best: f64,
    steps: usize,
    budget: RolloutBudget,
    settings: &OptimizerSettings,
    seed: u64,
) -> Result<Rollout> {
    // Fail before the first maximisation rather than after it.
    fantasizers(f, cost)?;
    let mut fp = Fantasised::Borrowed(f);
    let mut cp = Fantasised::Borrowed(cost);
    let mut best = best;
    let mut points = Vec::with_capacity(steps);
    let costs = spend(steps, budget, |step, nu| {
        let puc_cc =
            CostWeightedFn::new(&*fp, CostView::Belief(&*cp), best, -nu, Diagnostics::new());
        let m = maximize(
            &puc_cc,
            fp.dim(),
            settings,
            derive_seed(&[&seed, &"rollout", &step]),
            &MaximizeOptions::default(),
        )?;
        let (y, lc) = fantasy_observation(&*fp, &*cp, &m.x, fantasy_draw(seed, step));
        best = best.max(y);
        let (ff, fc) = fantasizers(&*fp, &*cp)?;
        let next = (ff.condition(&m.x, &[y])?, fc.condition(&m.x, &[lc])?);
        (fp, cp) = (Fantasised::Owned(next.0), Fantasised::Owned(next.1));
        points.push(m.x);
        Ok(lc.exp())
    })?;
    Ok(Rollout { points, costs })
}

/// One observation `(y, ln c)` at `x` drawn from the posteriors with observation noise, from
/// the standard normals `(ε_y, ε_c)`: `μ + √(σ² + noise) ε` for each belief.
pub fn fantasy_observation(
    f: &dyn Posterior,
    cost: &dyn CostBelief,
    x: &[f64],
    (ey, ec): (f64, f64),
) -> (f64, f64) {
    let y = fantasy_y(f, x, ey);
    let lc = cost.ln_cost(x);
    let noise_c = cost.covariance().map_or(0.0, |c| c.fantasy_noise());
    let ln_c = lc.mean + (lc.var + noise_c).max(0.0).sqrt() * ec;
    (y, ln_c)
}

/// The objective's half of [`fantasy_observation`]: `μ + √(σ² + noise) ε_y` at `x`.
pub fn fantasy_y(f: &dyn Posterior, x: &[f64], ey: f64) -> f64 {
    let mv = f.mean_var(x);
    mv.mean + (mv.var + f.noise_variance()).max(0.0).sqrt() * ey
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
    /// The refill rule: `previous − last cost` while it stays above the smallest fantasised
    /// cost of the last rollout (strictly, as the authors' test), `None` when a new rollout
    /// is due.
    fn refill(&self, last_cost: f64) -> Option<f64> {
        let next = self.current? - last_cost;
        (next > self.min_cost).then_some(next)
    }

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
        if let Some(last) = ctx.data.observations().last()
            && n > self.seen
            && let Some(next) = self.refill(last.outcome.cost)
        {
            let b = next.min(remaining);
            self.current = Some(b);
            self.seen = n;
            return Ok(b);
        }
        let best = ctx
            .best_y()
            .ok_or_else(|| Error::invalid("budget scheduling needs at least one observation"))?;
        let post = ctx.posterior()?;
        let cost = ctx.cost_belief()?;
        let costs = rollout(
            post,
            cost,
            best,
            steps,
            RolloutBudget {
                left: remaining,
                initial: ctx.budget.budget.cost.unwrap_or(remaining),
            },
            ctx.optimizer,
            derive_seed(&[&ctx.seed, &"budget schedule"]),
        )?
        .costs;
        let total: f64 = costs.iter().sum();
        self.min_cost = costs.iter().copied().fold(f64::INFINITY, f64::min);
        let b = total.min(remaining);
        self.current = Some(b);
        self.seen = n;
        self.rolled_out = true;
        Ok(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The exponent is recomputed from what the earlier steps spent, by hand: 10 left of a
    /// budget of 20 and fantasised costs 3, 4, 5, 2 give ν = 10/20, 7/20, 3/20 and then 0
    /// (the fantasies have spent more than is left: held at 0, not −2/20).
    #[test]
    fn rollout_exponent_is_budget_left_over_initial_budget_at_each_step() {
        let budget = RolloutBudget {
            left: 10.0,
            initial: 20.0,
        };
        let scripted = [3.0, 4.0, 5.0, 2.0];
        let mut seen = Vec::new();
        let costs = spend(4, budget, |i, nu| {
            seen.push(nu);
            Ok(scripted[i])
        })
        .unwrap();
        assert_eq!(costs, scripted);
        assert_eq!(seen, [0.5, 0.35, 0.15, 0.0]);
        let zero = RolloutBudget {
            left: 0.0,
            initial: 0.0,
        };
        assert_eq!(zero.exponent(0.0), 0.0, "a budget of 0 cools completely");
    }

    /// The refill keeps `previous − last cost` only while it exceeds the smallest fantasised
    /// cost; equal to it, the schedule rolls out again (the authors' strict test).
    #[test]
    fn refill_reuses_the_previous_budget_while_above_the_lower_bound() {
        let s = Scheduler {
            current: Some(10.0),
            min_cost: 3.0,
            seen: 5,
            rolled_out: true,
        };
        assert_eq!(s.refill(6.5), Some(3.5));
        assert_eq!(s.refill(7.0), None);
        assert_eq!(s.refill(8.0), None);
        assert_eq!(
            Scheduler::default().refill(1.0),
            None,
            "nothing to refill yet"
        );
    }

    /// The rollout's fantasy draws are standard normal pairs, independent of each other:
    /// over 4000 steps their means are within 0.06 of 0 (about 4 standard errors), their
    /// variances within 0.1 of 1 and their correlation within 0.06 of 0; and a step's draw
    /// depends only on the seed and the step.
    #[test]
    fn rollout_fantasy_draws_are_independent_standard_normals() {
        let n = 4000;
        let draws: Vec<(f64, f64)> = (0..n).map(|i| fantasy_draw(11, i)).collect();
        let mean = |f: &dyn Fn(&(f64, f64)) -> f64| draws.iter().map(f).sum::<f64>() / n as f64;
        let (my, mc) = (mean(&|p| p.0), mean(&|p| p.1));
        let (vy, vc) = (mean(&|p| p.0 * p.0), mean(&|p| p.1 * p.1));
        let cross = mean(&|p| p.0 * p.1);
        assert!(my.abs() < 0.06 && mc.abs() < 0.06, "{my} {mc}");
        assert!(
            (vy - 1.0).abs() < 0.1 && (vc - 1.0).abs() < 0.1,
            "{vy} {vc}"
        );
        assert!(cross.abs() < 0.06, "{cross}");
        assert_eq!(fantasy_draw(11, 7), draws[7]);
        assert_ne!(fantasy_draw(12, 7), draws[7]);
    }
}
