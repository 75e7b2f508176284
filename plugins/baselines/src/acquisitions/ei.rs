//! Expected improvement (Jones et al., 1998): `EI(x) = σ(x)·h((μ(x) − best)/σ(x))`.

use super::{EiScore, ScoreFn, check_best_f, incumbent};
use cabo_core::{
    Acquisition, AcquisitionFn, AcquisitionSpec, BuildContext, DecisionContext, Diagnostics, Result,
};
use cabo_toolkit::acquisition::checked_posterior;
use serde::{Deserialize, Serialize};

/// Spec of [`Ei`] (`acquisition: { type: ei }`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EiSpec {
    /// Fixed incumbent; by default the best observed y.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_f: Option<f64>,
}

#[cabo_core::plugin(
    name = "ei",
    summary = "Expected improvement over the best observed value (cost-unaware)",
    paper = "standard (Jones et al. 1998); baseline in seeds 000 and 001",
    example = "{ type: ei }"
)]
impl AcquisitionSpec for EiSpec {
    fn validate(&self, _dim: usize) -> Result<()> {
        check_best_f(self.best_f)
    }
    fn needs_incumbent(&self) -> bool {
        // Without `best_f` the incumbent is the best observed value.
        self.best_f.is_none()
    }
    fn build(&self, _ctx: &BuildContext<'_>) -> Result<Box<dyn Acquisition>> {
        check_best_f(self.best_f)?;
        Ok(Box::new(Ei {
            best_f: self.best_f,
        }))
    }
}

/// Expected improvement over the incumbent.
#[derive(Debug, Clone, Default)]
pub struct Ei {
    /// Fixed incumbent; `None` uses the best observed y.
    pub best_f: Option<f64>,
}

impl Acquisition for Ei {
    fn prepare<'a>(&'a self, ctx: &'a DecisionContext<'a>) -> Result<Box<dyn AcquisitionFn + 'a>> {
        let best = incumbent(self.best_f, ctx, "ei")?;
        let posterior = checked_posterior(ctx)?;
        let diagnostics = Diagnostics::from([("best_f".to_string(), best)]);
        Ok(Box::new(ScoreFn::new(
            posterior,
            EiScore { best },
            true,
            diagnostics,
        )))
    }
}
