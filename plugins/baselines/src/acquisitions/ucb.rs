//! Upper confidence bound (Srinivas et al., 2010): `μ(x) + √β_t·σ(x)`.
//!
//! β is either fixed or follows the schedule seed 000 uses for its UCB baseline (App. C,
//! "Acquisition function hyperparameters"): Srinivas et al.'s Theorem 1,
//! `β_t = 2 ln(d t² π² / (6δ))`, with δ = 0.1 and scaled down by a factor of 5, i.e.
//! `β_t = 2 ln(d t² π² / (6δ)) / 5`, where t is the 1-based decision index and d the
//! dimension.

use super::{Score, ScoreFn, ValueGrad};
use cabo_core::{
    Acquisition, AcquisitionFn, AcquisitionSpec, BuildContext, DecisionContext, Diagnostics, Error,
    Result,
};
use cabo_toolkit::acquisition::checked_posterior;
use serde::{Deserialize, Serialize};
use std::f64::consts::PI;

/// How β_t is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UcbSchedule {
    /// `β_t = 2 ln(d t² π² / (6δ)) / scale_down` (Srinivas et al. 2010, Thm. 1, as in seed 000).
    Srinivas,
}

/// Spec of [`Ucb`]: `{ type: ucb, beta: 2.0 }` or `{ type: ucb, schedule: srinivas }`
/// (optionally with `delta`, default 0.1, and `scale_down`, default 5).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UcbSpec {
    /// A fixed β ≥ 0 (the bonus is √β·σ).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beta: Option<f64>,
    /// A β_t schedule instead of a fixed β.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<UcbSchedule>,
    /// δ of the Srinivas schedule, in (0, 1); default 0.1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delta: Option<f64>,
    /// Divisor of the Srinivas β_t, > 0; default 5.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_down: Option<f64>,
}

impl UcbSpec {
    fn resolve(&self) -> Result<Ucb> {
        match (self.beta, self.schedule) {
            (Some(beta), None) => {
                if self.delta.is_some() || self.scale_down.is_some() {
                    return Err(Error::invalid(
                        "ucb: `delta` and `scale_down` belong to `schedule: srinivas`, not to a fixed `beta`",
                    ));
                }
                if !(beta.is_finite() && beta >= 0.0) {
                    return Err(Error::invalid(format!(
                        "ucb: `beta` must be a finite number ≥ 0, got {beta}"
                    )));
                }
                Ok(Ucb::Fixed { beta })
            }
            (None, Some(UcbSchedule::Srinivas)) => {
                let delta = self.delta.unwrap_or(0.1);
                let scale_down = self.scale_down.unwrap_or(5.0);
                if !(delta > 0.0 && delta < 1.0) {
                    return Err(Error::invalid(format!(
                        "ucb: `delta` must lie in (0, 1), got {delta}"
                    )));
                }
                if !(scale_down.is_finite() && scale_down > 0.0) {
                    return Err(Error::invalid(format!(
                        "ucb: `scale_down` must be a finite number > 0, got {scale_down}"
                    )));
                }
                Ok(Ucb::Srinivas { delta, scale_down })
            }
            (Some(_), Some(_)) => Err(Error::invalid(
                "ucb: give either a fixed `beta` or a `schedule`, not both",
            )),
            (None, None) => Err(Error::invalid(
                "ucb: needs a fixed `beta` (e.g. `beta: 2.0`) or `schedule: srinivas`",
            )),
        }
    }
}

#[cabo_core::plugin(
    name = "ucb",
    summary = "Upper confidence bound mu + sqrt(beta)·sigma, with fixed beta or the Srinivas schedule (delta = 0.1, scaled down by 5)",
    paper = "seed 000, App. C (Srinivas et al. 2010, Thm. 1)",
    example = "{ type: ucb, schedule: srinivas }"
)]
impl AcquisitionSpec for UcbSpec {
    fn validate(&self, _dim: usize) -> Result<()> {
        self.resolve().map(|_| ())
    }
    fn build(&self, _ctx: &BuildContext<'_>) -> Result<Box<dyn Acquisition>> {
        Ok(Box::new(self.resolve()?))
    }
}

/// The UCB acquisition with its β rule.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Ucb {
    /// A constant β.
    Fixed {
        /// β ≥ 0.
        beta: f64,
    },
    /// `β_t = 2 ln(d t² π² / (6δ)) / scale_down`.
    Srinivas {
        /// δ ∈ (0, 1).
        delta: f64,
        /// Divisor (> 0).
        scale_down: f64,
    },
}

impl Ucb {
    /// β at decision `t` (1-based) in dimension `d`.
    pub fn beta(&self, d: usize, t: usize) -> f64 {
        match *self {
            Ucb::Fixed { beta } => beta,
            Ucb::Srinivas { delta, scale_down } => {
                let (d, t) = (d.max(1) as f64, t.max(1) as f64);
                2.0 * (d * t * t * PI * PI / (6.0 * delta)).ln() / scale_down
            }
        }
    }
}

/// `μ + κσ` as a [`Score`], κ = √β.
#[derive(Debug, Clone, Copy)]
pub struct UcbScore {
    /// κ = √β.
    pub kappa: f64,
}

impl Score for UcbScore {
    fn value(&self, mean: f64, sigma: f64) -> f64 {
        mean + self.kappa * sigma
    }
    fn value_grad(&self, mean: f64, sigma: f64) -> ValueGrad {
        ValueGrad {
            value: mean + self.kappa * sigma,
            d_mean: 1.0,
            d_sigma: self.kappa,
        }
    }
}

impl Acquisition for Ucb {
    fn prepare<'a>(&'a self, ctx: &'a DecisionContext<'a>) -> Result<Box<dyn AcquisitionFn + 'a>> {
        let posterior = checked_posterior(ctx)?;
        let beta = self.beta(ctx.problem.dim, ctx.iteration);
        let diagnostics = Diagnostics::from([("beta".to_string(), beta)]);
        let score = UcbScore { kappa: beta.sqrt() };
        Ok(Box::new(ScoreFn::new(posterior, score, false, diagnostics)))
    }
}
