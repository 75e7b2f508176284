//! Settings of the acquisition optimiser, as specs write them and as policies receive them.

use crate::{Expr, Result};
use serde::{Deserialize, Serialize};

/// Optimiser settings as written in a spec; every field may be an expression in `d` and
/// every field is optional so a policy entry or the smoke variant can override a few.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OptimizerSpec {
    /// Raw (Sobol) candidates scored before choosing restarts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_samples: Option<Expr>,
    /// Number of L-BFGS-B restarts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restarts: Option<Expr>,
    /// Iteration cap of each L-BFGS-B run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_iters: Option<Expr>,
}

impl OptimizerSpec {
    /// `self` with the fields `over` sets replaced.
    pub fn merged(&self, over: &OptimizerSpec) -> OptimizerSpec {
        OptimizerSpec {
            raw_samples: over
                .raw_samples
                .clone()
                .or_else(|| self.raw_samples.clone()),
            restarts: over.restarts.clone().or_else(|| self.restarts.clone()),
            max_iters: over.max_iters.clone().or_else(|| self.max_iters.clone()),
        }
    }

    /// Concrete settings for dimension `d` (defaults: 512 raw samples, 10 restarts, 200
    /// iterations — BoTorch's tutorial defaults).
    pub fn resolve(&self, d: usize) -> Result<OptimizerSettings> {
        let get = |e: &Option<Expr>, key: &str, default: usize| -> Result<usize> {
            e.as_ref().map_or(Ok(default), |e| {
                e.count(d)
                    .map_err(|m| crate::Error::invalid(format!("optimizer.{key}: {m}")))
            })
        };
        let s = OptimizerSettings {
            raw_samples: get(&self.raw_samples, "raw_samples", 512)?,
            restarts: get(&self.restarts, "restarts", 10)?,
            max_iters: get(&self.max_iters, "max_iters", 200)?,
        };
        if s.raw_samples == 0 || s.restarts == 0 || s.restarts > s.raw_samples {
            return Err(crate::Error::invalid(format!(
                "optimizer: need 1 ≤ restarts ≤ raw_samples, got restarts = {}, raw_samples = {}",
                s.restarts, s.raw_samples
            )));
        }
        Ok(s)
    }
}

/// Concrete optimiser settings handed to a policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OptimizerSettings {
    /// Raw candidates scored before choosing restarts.
    pub raw_samples: usize,
    /// Number of L-BFGS-B restarts.
    pub restarts: usize,
    /// Iteration cap of each L-BFGS-B run.
    pub max_iters: usize,
}

impl Default for OptimizerSettings {
    fn default() -> Self {
        OptimizerSettings {
            raw_samples: 512,
            restarts: 10,
            max_iters: 200,
        }
    }
}
