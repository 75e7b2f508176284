//! Expected improvement per unit cost (EIPC, EI-PUC; Snoek et al., 2012):
//! `E[(f(x) − best)⁺ / c(x)] = EI(x)·E[c(x)⁻¹]`.
//!
//! With a known cost this is `EI(x)/c(x)`; with a log-normal cost belief (a GP on ln c) it is
//! the closed form `EI(x)·exp(−μ_ln c(x) + σ²_ln c(x)/2)` of seed 001, Prop. 2 (ν = 1). Seed
//! 000 calls the same rule EIPC.

use super::{check_best_f, incumbent};
use cabo_core::{
    Acquisition, AcquisitionFn, AcquisitionSpec, BuildContext, DecisionContext, Diagnostics, Result,
};
use cabo_toolkit::acquisition::{CostView, CostWeightedFn, checked_posterior};
use serde::{Deserialize, Serialize};

/// Spec of [`EiPerCost`] (`acquisition: { type: ei_per_cost }`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EiPerCostSpec {
    /// Fixed incumbent; by default the best observed y.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_f: Option<f64>,
}

#[cabo_core::plugin(
    name = "ei_per_cost",
    summary = "Expected improvement per unit cost, EI(x)·E[1/c(x)] (EIPC / EI-PUC; closed form for log-normal costs)",
    paper = "seed 000 (EIPC baseline); seed 001 App. C, Prop. 2 with nu = 1",
    example = "{ type: ei_per_cost }"
)]
impl AcquisitionSpec for EiPerCostSpec {
    fn validate(&self, _dim: usize) -> Result<()> {
        check_best_f(self.best_f)
    }
    fn needs_incumbent(&self) -> bool {
        // Without `best_f` the incumbent is the best observed value.
        self.best_f.is_none()
    }
    fn build(&self, _ctx: &BuildContext<'_>) -> Result<Box<dyn Acquisition>> {
        check_best_f(self.best_f)?;
        Ok(Box::new(EiPerCost {
            best_f: self.best_f,
        }))
    }
}

/// EI per unit cost, from the run's cost belief or the problem's known cost.
#[derive(Debug, Clone, Default)]
pub struct EiPerCost {
    /// Fixed incumbent; `None` uses the best observed y.
    pub best_f: Option<f64>,
}

impl Acquisition for EiPerCost {
    fn prepare<'a>(&'a self, ctx: &'a DecisionContext<'a>) -> Result<Box<dyn AcquisitionFn + 'a>> {
        let best = incumbent(self.best_f, ctx, "ei_per_cost")?;
        let posterior = checked_posterior(ctx)?;
        let cost = CostView::from_context(ctx, "ei_per_cost")?;
        let diagnostics = Diagnostics::from([("best_f".to_string(), best)]);
        Ok(Box::new(CostWeightedFn::new(
            posterior,
            cost,
            best,
            -1.0,
            diagnostics,
        )))
    }
}
