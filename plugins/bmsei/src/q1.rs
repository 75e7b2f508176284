//! The budgeted one-step value of seed 001, Prop. 1, and the acquisition `budgeted_ei`
//! (one-step B-MS-EI):
//!
//! ```text
//! Q₁(x | D) = EI^f(x | D) · Φ((ln(B − s(D)) − μ_lnc(x)) / σ_lnc(x)) · 1{s(D) < B}.
//! ```
//!
//! The product form needs f and ln c independent a posteriori (separate GPs). With a known
//! cost (σ_lnc = 0) the Φ factor is the step `1{c(x) ≤ B − s(D)}`.

use crate::schedule::{BudgetMode, Scheduler};
use cabo_core::{
    Acquisition, AcquisitionFn, AcquisitionSpec, BuildContext, CostBelief, DecisionContext,
    Diagnostics, Error, LnCost, MeanVarGrad, Objective, Posterior, Result,
};
use cabo_toolkit::numerics::{ei_grad, sigma_from_var};
use serde::{Deserialize, Serialize};
use std::sync::Mutex;

/// Q₁ from the objective's posterior mean/variance (with gradients), the ln-cost belief
/// (with gradients), the incumbent and the budget left `left = B − s(D)`; writes ∇Q₁ into
/// `grad` when it is non-empty. `left = ∞` gives plain EI.
pub fn q1_value_grad(f: &MeanVarGrad, c: &LnCost, best: f64, left: f64, grad: &mut [f64]) -> f64 {
    if left <= 0.0 {
        grad.fill(0.0);
        return 0.0;
    }
    let (sigma, ds) = sigma_from_var(f.var);
    let e = ei_grad(f.mean, sigma, best);
    let (p, dp) = if left.is_finite() {
        let p = c.prob_at_most(left);
        let dp = if grad.is_empty() {
            Vec::new()
        } else {
            c.prob_at_most_grad(left)
        };
        (p, dp)
    } else {
        (1.0, vec![0.0; grad.len()])
    };
    if !grad.is_empty() {
        e.chain(&f.dmean, &f.dvar, ds, grad);
        for (g, dpi) in grad.iter_mut().zip(&dp) {
            *g = *g * p + e.value * dpi;
        }
    }
    e.value * p
}

/// Q₁ without gradients.
pub fn q1_value(f_mean: f64, f_var: f64, c: &LnCost, best: f64, left: f64) -> f64 {
    if left <= 0.0 {
        return 0.0;
    }
    let (sigma, _) = sigma_from_var(f_var);
    let p = if left.is_finite() {
        c.prob_at_most(left)
    } else {
        1.0
    };
    cabo_toolkit::numerics::ei(f_mean, sigma, best) * p
}

/// Spec of the one-step budgeted EI (`acquisition: { type: budgeted_ei }`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BudgetedEiSpec {
    /// Which budget B − s(D) to use: the run's remaining budget (default) or the rollout
    /// schedule of §4.3.
    #[serde(default)]
    pub budget: BudgetMode,
    /// A fixed budget left instead (overrides `budget`); must be positive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fixed_budget: Option<f64>,
    /// Steps of the scheduling rollout (`budget: scheduled`); default 4.
    #[serde(default = "default_schedule_steps")]
    pub schedule_steps: usize,
}

fn default_schedule_steps() -> usize {
    4
}

#[cabo_core::plugin(
    name = "budgeted_ei",
    summary = "one-step B-MS-EI: Q1 = EI(x)·P(c(x) ≤ B − s(D)) with the remaining, a fixed or a rollout-scheduled budget",
    paper = "001_ffe8b93f5b7c8c43.txt Prop. 1, §4.3",
    example = "{ type: budgeted_ei, budget: remaining }"
)]
impl AcquisitionSpec for BudgetedEiSpec {
    fn validate(&self, _dim: usize) -> Result<()> {
        if let Some(b) = self.fixed_budget
            && !(b.is_finite() && b > 0.0)
        {
            return Err(Error::invalid(format!(
                "fixed_budget: must be a positive finite number, got {b}"
            )));
        }
        // Each step of the budget schedule's rollout optimises an acquisition once.
        cabo_core::check_count("schedule_steps", self.schedule_steps, 1..=100)?;
        Ok(())
    }
    fn needs_incumbent(&self) -> bool {
        // Q₁'s improvement is over the best observed value.
        true
    }
    fn build(&self, ctx: &BuildContext<'_>) -> Result<Box<dyn Acquisition>> {
        self.validate(ctx.problem.dim)?;
        Ok(Box::new(BudgetedEi {
            spec: self.clone(),
            scheduler: Mutex::new(Scheduler::default()),
        }))
    }
}

/// The one-step B-MS-EI acquisition.
pub struct BudgetedEi {
    spec: BudgetedEiSpec,
    scheduler: Mutex<Scheduler>,
}

impl Acquisition for BudgetedEi {
    fn prepare<'a>(&'a self, ctx: &'a DecisionContext<'a>) -> Result<Box<dyn AcquisitionFn + 'a>> {
        let best = ctx
            .best_y()
            .ok_or_else(|| Error::invalid("budgeted_ei needs at least one observation"))?;
        let posterior = ctx.posterior()?;
        let cost = ctx.cost_belief()?;
        let left = match self.spec.fixed_budget {
            Some(b) => b,
            None => {
                let mut s = self
                    .scheduler
                    .lock()
                    .map_err(|_| Error::numerical("budgeted_ei: scheduler state poisoned"))?;
                s.budget(ctx, self.spec.budget, self.spec.schedule_steps)?
            }
        };
        let mut diagnostics = Diagnostics::new();
        diagnostics.insert("best_f".into(), best);
        if left.is_finite() {
            diagnostics.insert("budget".into(), left);
        }
        Ok(Box::new(Q1Fn {
            posterior,
            cost,
            best,
            left,
            diagnostics,
        }))
    }
}

/// Q₁ at fixed data: what the optimiser maximises.
pub struct Q1Fn<'a> {
    /// Objective posterior.
    pub posterior: &'a dyn Posterior,
    /// Cost belief.
    pub cost: &'a dyn CostBelief,
    /// Incumbent.
    pub best: f64,
    /// Budget left B − s(D) (∞ for none).
    pub left: f64,
    /// Recorded with the decision.
    pub diagnostics: Diagnostics,
}

impl Objective for Q1Fn<'_> {
    fn value(&self, x: &[f64]) -> f64 {
        let mv = self.posterior.mean_var(x);
        q1_value(mv.mean, mv.var, &self.cost.ln_cost(x), self.best, self.left)
    }

    fn value_grad(&self, x: &[f64], grad: &mut [f64]) -> f64 {
        match self.posterior.mean_var_grad(x) {
            Ok(f) => q1_value_grad(&f, &self.cost.ln_cost_grad(x), self.best, self.left, grad),
            Err(_) => {
                grad.fill(0.0);
                f64::NAN
            }
        }
    }

    fn values(&self, xs: &[f64], out: &mut [f64]) {
        let d = self.posterior.dim();
        let mut mv = vec![cabo_core::MeanVar::default(); out.len()];
        self.posterior.mean_var_batch(xs, &mut mv);
        for ((o, m), x) in out.iter_mut().zip(&mv).zip(xs.chunks_exact(d)) {
            *o = q1_value(m.mean, m.var, &self.cost.ln_cost(x), self.best, self.left);
        }
    }

    fn non_negative(&self) -> bool {
        true
    }
}

impl AcquisitionFn for Q1Fn<'_> {
    fn diagnostics(&self) -> Diagnostics {
        self.diagnostics.clone()
    }
}
