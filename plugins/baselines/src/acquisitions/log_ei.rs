//! LogEI (Ament et al., 2023): `ln EI(x)`, computed so that it stays finite, monotone and
//! informative where EI itself underflows to zero.

use super::{Score, ScoreFn, ValueGrad, check_best_f, incumbent};
use cabo_core::{
    Acquisition, AcquisitionFn, AcquisitionSpec, BuildContext, DecisionContext, Diagnostics, Result,
};
use cabo_toolkit::acquisition::checked_posterior;
use cabo_toolkit::numerics;
use serde::{Deserialize, Serialize};

/// Spec of [`LogEi`] (`acquisition: { type: log_ei }`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LogEiSpec {
    /// Fixed incumbent; by default the best observed y.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub best_f: Option<f64>,
}

#[cabo_core::plugin(
    name = "log_ei",
    summary = "Logarithm of expected improvement, numerically stable where EI underflows (BoTorch's LogEI)",
    paper = "standard (Ament et al. 2023)",
    example = "{ type: log_ei }"
)]
impl AcquisitionSpec for LogEiSpec {
    fn validate(&self, _dim: usize) -> Result<()> {
        check_best_f(self.best_f)
    }
    fn needs_incumbent(&self) -> bool {
        // Without `best_f` the incumbent is the best observed value.
        self.best_f.is_none()
    }
    fn build(&self, _ctx: &BuildContext<'_>) -> Result<Box<dyn Acquisition>> {
        check_best_f(self.best_f)?;
        Ok(Box::new(LogEi {
            best_f: self.best_f,
        }))
    }
}

/// `ln EI` over `best` as a [`Score`].
#[derive(Debug, Clone, Copy)]
pub struct LogEiScore {
    /// The incumbent value.
    pub best: f64,
}

impl Score for LogEiScore {
    fn value(&self, mean: f64, sigma: f64) -> f64 {
        numerics::log_ei(mean, sigma, self.best)
    }
    fn value_grad(&self, mean: f64, sigma: f64) -> ValueGrad {
        numerics::log_ei_grad(mean, sigma, self.best)
    }
}

/// Log expected improvement over the incumbent. Not non-negative: its values are logs.
#[derive(Debug, Clone, Default)]
pub struct LogEi {
    /// Fixed incumbent; `None` uses the best observed y.
    pub best_f: Option<f64>,
}

impl Acquisition for LogEi {
    fn prepare<'a>(&'a self, ctx: &'a DecisionContext<'a>) -> Result<Box<dyn AcquisitionFn + 'a>> {
        let best = incumbent(self.best_f, ctx, "log_ei")?;
        let posterior = checked_posterior(ctx)?;
        let diagnostics = Diagnostics::from([("best_f".to_string(), best)]);
        Ok(Box::new(ScoreFn::new(
            posterior,
            LogEiScore { best },
            false,
            diagnostics,
        )))
    }
}
