//! The pieces acquisitions in several plugins are built from: the decision's posterior checked
//! against the problem ([`checked_posterior`]), what is known about the cost ([`CostView`]:
//! a fitted belief or the problem's known cost), and EI per (cooled) unit cost
//! ([`CostWeightedFn`], `EI(x)·E[c(x)^p]`), which EI-PUC, EI-PUC-CC and B-MS-EI's budget
//! rollout all use.

use crate::numerics::{self, sigma_from_var};
use cabo_core::{
    AcquisitionFn, CostBelief, CostFunction, DecisionContext, Diagnostics, Error, MeanVar,
    MeanVarGrad, Objective, Posterior, Result,
};

/// The posterior of `ctx`, checked against the problem's dimension.
pub fn checked_posterior<'a>(ctx: &'a DecisionContext<'a>) -> Result<&'a dyn Posterior> {
    let posterior = ctx.posterior()?;
    if posterior.dim() != ctx.problem.dim {
        return Err(Error::invalid(format!(
            "the posterior has dimension {}, the problem has dimension {}",
            posterior.dim(),
            ctx.problem.dim
        )));
    }
    Ok(posterior)
}

/// What an acquisition knows about the cost: a fitted belief, or the exact cost function
/// the problem discloses.
#[derive(Clone, Copy)]
pub enum CostView<'a> {
    /// A (log-normal) belief from a cost model.
    Belief(&'a dyn CostBelief),
    /// The exact cost, known to the learner.
    Known(&'a dyn CostFunction),
}

impl<'a> CostView<'a> {
    /// The cost model's belief if the run has one, else the problem's known cost; an error
    /// names both when neither exists.
    pub fn from_context(ctx: &'a DecisionContext<'a>, name: &str) -> Result<Self> {
        let view = match ctx.cost_belief() {
            Ok(b) => CostView::Belief(b),
            Err(e) => match ctx.problem.known_cost.as_deref() {
                Some(c) => CostView::Known(c),
                None => {
                    return Err(Error::invalid(format!(
                        "{name} needs the cost: give the run a `cost_model` or use a problem whose cost is known ({e})"
                    )));
                }
            },
        };
        if let CostView::Belief(b) = view
            && b.dim() != ctx.problem.dim
        {
            return Err(Error::invalid(format!(
                "the cost belief has dimension {}, the problem has dimension {}",
                b.dim(),
                ctx.problem.dim
            )));
        }
        Ok(view)
    }

    /// `E[c(x)^p]`: `exp(p μ + p² σ²/2)` for a log-normal belief, `c(x)^p` for a known cost.
    pub fn expected_pow(&self, x: &[f64], p: f64) -> f64 {
        match self {
            CostView::Belief(b) => b.ln_cost(x).expected_pow(p),
            CostView::Known(c) => c.cost(x).powf(p),
        }
    }

    /// `E[c(x)^p]`, writing its gradient into `grad`.
    pub fn expected_pow_grad(&self, x: &[f64], p: f64, grad: &mut [f64]) -> f64 {
        match self {
            CostView::Belief(b) => b.ln_cost_grad(x).expected_pow_grad(p, grad),
            CostView::Known(c) => {
                let cost = c.cost_grad(x, grad);
                let e = cost.powf(p);
                // ∇c^p = p·c^(p−1)·∇c = (p·c^p/c)·∇c.
                let k = p * e / cost;
                for g in grad.iter_mut() {
                    *g *= k;
                }
                e
            }
        }
    }
}

/// `EI(x)·E[c(x)^p]`: the EI-per-cost family (p = −1 for EI-PUC, p = −ν for EI-PUC-CC and
/// for the base policy of B-MS-EI's budget rollout), written once for all of them.
///
/// The product form holds because the objective and cost beliefs are independent (seed 001,
/// Prop. 2). Failures follow one rule: where EI is 0 the value is 0 without consulting the
/// cost; where the posterior cannot differentiate, value and gradient are NaN, a failed
/// evaluation to the optimiser (which then reads no gradient).
pub struct CostWeightedFn<'a> {
    posterior: &'a dyn Posterior,
    cost: CostView<'a>,
    best: f64,
    power: f64,
    diagnostics: Diagnostics,
}

impl<'a> CostWeightedFn<'a> {
    /// EI over `best` times `E[c^power]`.
    pub fn new(
        posterior: &'a dyn Posterior,
        cost: CostView<'a>,
        best: f64,
        power: f64,
        diagnostics: Diagnostics,
    ) -> Self {
        CostWeightedFn {
            posterior,
            cost,
            best,
            power,
            diagnostics,
        }
    }
}

impl Objective for CostWeightedFn<'_> {
    fn value(&self, x: &[f64]) -> f64 {
        let MeanVar { mean, var } = self.posterior.mean_var(x);
        let ei = numerics::ei(mean, sigma_from_var(var).0, self.best);
        if ei == 0.0 {
            // Zero improvement stays zero whatever the cost (and skips the cost model).
            return 0.0;
        }
        ei * self.cost.expected_pow(x, self.power)
    }

    fn value_grad(&self, x: &[f64], grad: &mut [f64]) -> f64 {
        self.value_from_moments(x, self.posterior.mean_var_grad(x), grad)
    }

    /// The posterior's batched moments ([`Posterior::mean_var_grads`], bitwise its
    /// single-point ones) through the same product as [`CostWeightedFn::value_grad`].
    fn value_grads(&self, xs: &[f64], values: &mut [f64], grads: &mut [f64]) {
        let d = grads.len() / values.len().max(1);
        let moments = self.posterior.mean_var_grads(xs);
        let points = xs
            .chunks_exact(d.max(1))
            .zip(grads.chunks_exact_mut(d.max(1)));
        for ((v, (x, g)), mvg) in values.iter_mut().zip(points).zip(moments) {
            *v = self.value_from_moments(x, mvg, g);
        }
    }

    fn values(&self, xs: &[f64], out: &mut [f64]) {
        let d = xs.len() / out.len().max(1);
        let mut mv = vec![MeanVar::default(); out.len()];
        self.posterior.mean_var_batch(xs, &mut mv);
        for ((o, m), x) in out.iter_mut().zip(&mv).zip(xs.chunks_exact(d.max(1))) {
            let ei = numerics::ei(m.mean, sigma_from_var(m.var).0, self.best);
            *o = if ei == 0.0 {
                0.0
            } else {
                ei * self.cost.expected_pow(x, self.power)
            };
        }
    }

    fn non_negative(&self) -> bool {
        true
    }
}

impl CostWeightedFn<'_> {
    /// EI·E[c^p] and its gradient at `x` from the posterior's moments there; NaN when the
    /// posterior could not differentiate.
    fn value_from_moments(&self, x: &[f64], moments: Result<MeanVarGrad>, grad: &mut [f64]) -> f64 {
        let Ok(mvg) = moments else {
            grad.fill(f64::NAN);
            return f64::NAN;
        };
        let (sigma, ds) = sigma_from_var(mvg.var);
        let vg = numerics::ei_grad(mvg.mean, sigma, self.best);
        let mut dcost = vec![0.0; grad.len()];
        let w = self.cost.expected_pow_grad(x, self.power, &mut dcost);
        vg.chain(&mvg.dmean, &mvg.dvar, ds, grad);
        // Product rule: ∇(EI·w) = w·∇EI + EI·∇w.
        for (g, dc) in grad.iter_mut().zip(&dcost) {
            *g = w * *g + vg.value * dc;
        }
        vg.value * w
    }
}

impl AcquisitionFn for CostWeightedFn<'_> {
    fn diagnostics(&self) -> Diagnostics {
        self.diagnostics.clone()
    }
}
