//! EI per unit cost with cost cooling (EI-PUC-CC; Lee et al., 2020):
//! `E[(f(x) − best)⁺ / c(x)^ν] = EI(x)·E[c(x)^−ν]`, ν = remaining budget / initial budget.
//!
//! Expensive points are discouraged early (ν ≈ 1) and accepted as the budget runs out
//! (ν → 0, plain EI). For a log-normal cost belief `E[c^−ν] = exp(−ν μ_ln c + ν² σ²_ln c/2)`
//! (seed 001, App. C, Prop. 2).

use super::{check_best_f, incumbent};
use cabo_core::{
    Acquisition, AcquisitionFn, AcquisitionSpec, BuildContext, DecisionContext, Diagnostics, Result,
};
use cabo_toolkit::acquisition::{CostView, CostWeightedFn, checked_posterior};
use serde::{Deserialize, Serialize};

/// Spec of [`EiPucCc`] (`acquisition: { type: ei_puc_cc }`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EiPucCcSpec {
    /// Fixed incumbent; by default the best observed y.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_f: Option<f64>,
}

#[cabo_core::plugin(
    name = "ei_puc_cc",
    summary = "EI per unit cost with cost cooling, EI(x)·E[c(x)^-nu] with nu = remaining budget fraction",
    paper = "seed 001 (Sec. 5 baseline; App. C, Prop. 2)",
    example = "{ type: ei_puc_cc }"
)]
impl AcquisitionSpec for EiPucCcSpec {
    fn validate(&self, _dim: usize) -> Result<()> {
        check_best_f(self.best_f)
    }
    fn needs_incumbent(&self) -> bool {
        // Without `best_f` the incumbent is the best observed value.
        self.best_f.is_none()
    }
    fn build(&self, _ctx: &BuildContext<'_>) -> Result<Box<dyn Acquisition>> {
        check_best_f(self.best_f)?;
        Ok(Box::new(EiPucCc {
            best_f: self.best_f,
        }))
    }
}

/// EI-PUC-CC, with ν read from the run's budget at each decision.
#[derive(Debug, Clone, Default)]
pub struct EiPucCc {
    /// Fixed incumbent; `None` uses the best observed y.
    pub best_f: Option<f64>,
}

impl Acquisition for EiPucCc {
    fn prepare<'a>(&'a self, ctx: &'a DecisionContext<'a>) -> Result<Box<dyn AcquisitionFn + 'a>> {
        let best = incumbent(self.best_f, ctx, "ei_puc_cc")?;
        let posterior = checked_posterior(ctx)?;
        let cost = CostView::from_context(ctx, "ei_puc_cc")?;
        let nu = ctx.budget.remaining_fraction();
        let diagnostics = Diagnostics::from([("best_f".to_string(), best), ("nu".to_string(), nu)]);
        Ok(Box::new(CostWeightedFn::new(
            posterior,
            cost,
            best,
            -nu,
            diagnostics,
        )))
    }
}
