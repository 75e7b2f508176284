//! The acquisition functions of this crate, one per file, and the adapters they share.
//!
//! Most baselines are a function of the posterior mean and standard deviation at one point
//! (EI, LogEI, UCB), possibly multiplied by a moment of the cost (EI per unit cost,
//! EI-PUC-CC). [`ScoreFn`] turns any [`Score`] of (μ, σ) into an [`AcquisitionFn`] with an
//! analytic gradient and a batched `values` that goes through
//! [`Posterior::mean_var_batch`]. The EI-per-cost acquisitions build on `cabo-toolkit`'s
//! [`CostWeightedFn`](cabo_toolkit::acquisition::CostWeightedFn), which multiplies EI by
//! `E[c(x)^p]` for them and for every other crate that needs EI per (cooled) unit cost.

pub mod ei;
pub mod ei_per_cost;
pub mod ei_puc_cc;
pub mod log_ei;
pub mod thompson;
pub mod ucb;

/// What [`Score::value_grad`] returns: a value with its derivatives in μ and σ (defined
/// with the EI numerics in `cabo-toolkit`).
pub use cabo_toolkit::numerics::ValueGrad;
pub use ei::{Ei, EiSpec};
pub use ei_per_cost::{EiPerCost, EiPerCostSpec};
pub use ei_puc_cc::{EiPucCc, EiPucCcSpec};
pub use log_ei::{LogEi, LogEiScore, LogEiSpec};
pub use thompson::{Thompson, ThompsonSpec};
pub use ucb::{Ucb, UcbSchedule, UcbScore, UcbSpec};

use cabo_core::{
    AcquisitionFn, DecisionContext, Diagnostics, Error, MeanVar, MeanVarGrad, Objective, Posterior,
    Result,
};
use cabo_toolkit::numerics::{self, sigma_from_var};

/// A scalar rule on the posterior mean μ and standard deviation σ at one point.
pub trait Score {
    /// The score.
    fn value(&self, mean: f64, sigma: f64) -> f64;
    /// The score with its partial derivatives in μ and σ.
    fn value_grad(&self, mean: f64, sigma: f64) -> ValueGrad;
}

/// Expected improvement over `best` as a [`Score`].
#[derive(Debug, Clone, Copy)]
pub struct EiScore {
    /// The incumbent value.
    pub best: f64,
}

impl Score for EiScore {
    fn value(&self, mean: f64, sigma: f64) -> f64 {
        numerics::ei(mean, sigma, self.best)
    }
    fn value_grad(&self, mean: f64, sigma: f64) -> ValueGrad {
        numerics::ei_grad(mean, sigma, self.best)
    }
}

/// The EI incumbent: `best_f` when the spec fixes it, else the best observed y.
pub fn incumbent(best_f: Option<f64>, ctx: &DecisionContext<'_>, name: &str) -> Result<f64> {
    match best_f {
        Some(b) if b.is_finite() => Ok(b),
        Some(b) => Err(Error::invalid(format!(
            "{name}: `best_f` must be finite, got {b}"
        ))),
        None => match ctx.best_y() {
            Some(b) if b.is_finite() => Ok(b),
            Some(b) => Err(Error::invalid(format!(
                "{name}: the best observed y is {b}; observed values must be finite"
            ))),
            None => Err(Error::invalid(format!(
                "{name} needs an incumbent: nothing has been observed yet and the spec sets no `best_f`"
            ))),
        },
    }
}

/// Checks a spec's optional `best_f`.
pub fn check_best_f(best_f: Option<f64>) -> Result<()> {
    match best_f {
        Some(b) if !b.is_finite() => Err(Error::invalid(format!(
            "`best_f` must be a finite number, got {b}"
        ))),
        _ => Ok(()),
    }
}

/// A posterior-moment [`Score`] as an [`AcquisitionFn`].
pub struct ScoreFn<'a, S: Score> {
    posterior: &'a dyn Posterior,
    score: S,
    non_negative: bool,
    diagnostics: Diagnostics,
}

impl<'a, S: Score> ScoreFn<'a, S> {
    /// Wraps `score`; `non_negative` marks EI-type scores (≥ 0 with a meaningful zero).
    pub fn new(
        posterior: &'a dyn Posterior,
        score: S,
        non_negative: bool,
        diagnostics: Diagnostics,
    ) -> Self {
        ScoreFn {
            posterior,
            score,
            non_negative,
            diagnostics,
        }
    }
}

impl<S: Score> Objective for ScoreFn<'_, S> {
    fn value(&self, x: &[f64]) -> f64 {
        let MeanVar { mean, var } = self.posterior.mean_var(x);
        self.score.value(mean, sigma_from_var(var).0)
    }

    /// A posterior that cannot differentiate yields NaN (value and gradient), which an
    /// optimiser treats as a failed evaluation.
    fn value_grad(&self, x: &[f64], grad: &mut [f64]) -> f64 {
        self.value_from_moments(self.posterior.mean_var_grad(x), grad)
    }

    /// The posterior's batched moments ([`Posterior::mean_var_grads`], bitwise its
    /// single-point ones) through the same score as [`ScoreFn::value_grad`].
    fn value_grads(&self, xs: &[f64], values: &mut [f64], grads: &mut [f64]) {
        let d = grads.len() / values.len().max(1);
        let moments = self.posterior.mean_var_grads(xs);
        for ((v, g), mvg) in values
            .iter_mut()
            .zip(grads.chunks_exact_mut(d.max(1)))
            .zip(moments)
        {
            *v = self.value_from_moments(mvg, g);
        }
    }

    fn values(&self, xs: &[f64], out: &mut [f64]) {
        let mut mv = vec![MeanVar::default(); out.len()];
        self.posterior.mean_var_batch(xs, &mut mv);
        for (o, m) in out.iter_mut().zip(&mv) {
            *o = self.score.value(m.mean, sigma_from_var(m.var).0);
        }
    }

    fn non_negative(&self) -> bool {
        self.non_negative
    }
}

impl<S: Score> ScoreFn<'_, S> {
    /// The score and its gradient from the posterior's moments at a point; NaN when the
    /// posterior could not differentiate there.
    fn value_from_moments(&self, moments: Result<MeanVarGrad>, grad: &mut [f64]) -> f64 {
        let Ok(mvg) = moments else {
            grad.fill(f64::NAN);
            return f64::NAN;
        };
        let (sigma, ds) = sigma_from_var(mvg.var);
        let vg = self.score.value_grad(mvg.mean, sigma);
        vg.chain(&mvg.dmean, &mvg.dvar, ds, grad);
        vg.value
    }
}

impl<S: Score> AcquisitionFn for ScoreFn<'_, S> {
    fn diagnostics(&self) -> Diagnostics {
        self.diagnostics.clone()
    }
}
