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

use cabo_baselines::numerics::{ei_grad, sigma_from_var};
use cabo_core::{
    CostBelief, DecisionContext, Error, LnCost, OptimizerSettings, Posterior, Result, derive_seed,
};
use cabo_gp::{GpPosterior, LogGpBelief};
use cabo_optim::multistart::{Objective, maximize};
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

/// The belief about ln c that a rollout fantasises from.
#[derive(Clone)]
pub enum RolloutCost<'a> {
    /// A log-GP belief (its posterior conditioned on each fantasised ln c).
    LogGp(LogGpBelief),
    /// A known cost (nothing to learn).
    Known(&'a dyn CostBelief),
}

impl RolloutCost<'_> {
    fn ln_cost(&self, x: &[f64], grad: bool) -> LnCost {
        let belief: &dyn CostBelief = match self {
            RolloutCost::LogGp(b) => b,
            RolloutCost::Known(b) => *b,
        };
        if grad {
            belief.ln_cost_grad(x)
        } else {
            belief.ln_cost(x)
        }
    }
}

/// The cost side of a decision context for a rollout: a log-GP (downcast) or a known cost.
pub fn rollout_cost<'a>(belief: &'a dyn CostBelief) -> Result<RolloutCost<'a>> {
    if let Some(b) = belief.as_any().downcast_ref::<LogGpBelief>() {
        Ok(RolloutCost::LogGp(b.clone()))
    } else if belief.is_known() {
        Ok(RolloutCost::Known(belief))
    } else {
        Err(Error::unsupported(
            "budget scheduling needs a `log_gp`, `known` or `uniform` cost model",
        ))
    }
}

/// EI(x)·E[c(x)^−ν] over a GP posterior and a rollout cost.
struct PucCc<'a> {
    f: &'a GpPosterior,
    c: &'a RolloutCost<'a>,
    best: f64,
    nu: f64,
}

impl Objective for PucCc<'_> {
    fn dim(&self) -> usize {
        self.f.dim()
    }
    fn values(&self, xs: &[f64], out: &mut [f64]) {
        let d = self.f.dim();
        let mut mv = vec![cabo_core::MeanVar::default(); out.len()];
        self.f.mean_var_batch(xs, &mut mv);
        for ((o, m), x) in out.iter_mut().zip(&mv).zip(xs.chunks_exact(d)) {
            let (s, _) = sigma_from_var(m.var);
            *o = cabo_baselines::numerics::ei(m.mean, s, self.best)
                * self.c.ln_cost(x, false).expected_pow(-self.nu);
        }
    }
    fn value_grad(&self, x: &[f64], grad: &mut [f64]) -> f64 {
        let Ok(f) = self.f.mean_var_grad(x) else {
            grad.fill(0.0);
            return f64::NAN;
        };
        let (s, ds) = sigma_from_var(f.var);
        let e = ei_grad(f.mean, s, self.best);
        e.chain(&f.dmean, &f.dvar, ds, grad);
        let lc = self.c.ln_cost(x, true);
        let w = lc.expected_pow(-self.nu);
        let dw = lc.expected_pow_grad(-self.nu);
        for (g, dwi) in grad.iter_mut().zip(&dw) {
            *g = *g * w + e.value * dwi;
        }
        e.value * w
    }
    fn non_negative(&self) -> bool {
        true
    }
}

/// Fantasises `steps` evaluations of EI-PUC-CC (exponent `nu`) and returns their costs.
pub fn rollout_costs(
    f: &GpPosterior,
    cost: &RolloutCost<'_>,
    best: f64,
    steps: usize,
    nu: f64,
    settings: &OptimizerSettings,
    seed: u64,
) -> Result<Vec<f64>> {
    let mut fp = f.clone();
    let mut cp = cost.clone();
    let mut best = best;
    let mut costs = Vec::with_capacity(steps);
    for step in 0..steps {
        let m = maximize(
            &PucCc {
                f: &fp,
                c: &cp,
                best,
                nu,
            },
            settings,
            derive_seed(&[&seed, &"rollout", &step]),
        )?;
        let y = fp.mean_var(&m.x).mean;
        let lc = cp.ln_cost(&m.x, false).mean;
        costs.push(lc.exp());
        best = best.max(y);
        fp = fp.condition_many(&m.x, &[y])?;
        if let RolloutCost::LogGp(b) = &cp {
            cp = RolloutCost::LogGp(LogGpBelief {
                posterior: b.posterior.condition_many(&m.x, &[lc])?,
            });
        }
    }
    Ok(costs)
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
        let post = ctx
            .posterior()?
            .as_any()
            .downcast_ref::<GpPosterior>()
            .ok_or_else(|| Error::unsupported("budget scheduling needs an `exact_gp` model"))?;
        let cost = rollout_cost(ctx.cost_belief()?)?;
        let costs = rollout_costs(
            post,
            &cost,
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
