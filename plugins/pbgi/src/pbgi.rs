//! The Pandora's Box Gittins index acquisition (seed 000, eq. 6 and eq. 20):
//! `α(x) = g` solving `EI_{f|D}(x; g) = λ·E[c(x)]`.
//!
//! With a known cost `E[c] = c(x)` (PBGI); with a log-GP cost belief
//! `E[c] = exp(μ_ln c + σ²_ln c/2)` (PBGI-U, eq. 20). The cost comes from the run's
//! `cost_model` when it has one, else from the problem's known cost, exactly as for EIPC.
//! The gradient is Prop. 3, `∇α = ∇μ + (φ(u)∇σ − λ∇E[c])/Φ(u)`, evaluated through the
//! stable ratios of [`crate::index::gittins_index_grad`].
//!
//! With `stop: true` (cost-per-sample mode) the Pandora stopping rule ends the run when the
//! best observed value is at least `max_x α(x)`.

use crate::index::{gittins_index, gittins_index_grad};
use cabo_core::{
    Acquisition, AcquisitionFn, AcquisitionSpec, BuildContext, DecisionContext, Diagnostics, Error,
    MeanVar, MeanVarGrad, Objective, Posterior, Result,
};
use cabo_toolkit::acquisition::{CostView, checked_posterior};
use cabo_toolkit::numerics::sigma_from_var;
use serde::{Deserialize, Serialize};

/// The paper's λ for every budget-constrained experiment (seed 000 §4 and App. C).
pub const DEFAULT_LAMBDA: f64 = 1e-4;

fn default_lambda() -> f64 {
    DEFAULT_LAMBDA
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// Spec of [`Pbgi`]: `acquisition: { type: pbgi, lambda: 1.0e-4, stop: false }`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PbgiSpec {
    /// The cost multiplier λ > 0 (default 1e-4, the paper's choice). Budget-constrained: a
    /// hyperparameter trading risk-seeking (small λ) against risk-aversion; cost-per-sample:
    /// the conversion from cost units to objective units.
    #[serde(default = "default_lambda")]
    pub lambda: f64,
    /// Cost-per-sample mode: stop the run when the best observed y ≥ max_x α(x).
    #[serde(default, skip_serializing_if = "is_false")]
    pub stop: bool,
}

impl Default for PbgiSpec {
    fn default() -> Self {
        PbgiSpec {
            lambda: DEFAULT_LAMBDA,
            stop: false,
        }
    }
}

/// Checks a cost multiplier (shared with `pbgi_decay`).
pub(crate) fn check_lambda(lambda: f64, key: &str) -> Result<()> {
    if lambda.is_finite() && lambda > 0.0 {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "{key}: must be a finite number > 0, got {lambda}"
        )))
    }
}

#[cabo_core::plugin(
    name = "pbgi",
    summary = "Pandora's Box Gittins index: g solving EI(x; g) = lambda E[c(x)] (known or log-GP costs), optional Pandora stopping rule",
    paper = "seed 000 eq. (6), (20), Prop. 3",
    example = "{ type: pbgi, lambda: 1.0e-4 }"
)]
impl AcquisitionSpec for PbgiSpec {
    fn validate(&self, _dim: usize) -> Result<()> {
        check_lambda(self.lambda, "pbgi.lambda")
    }
    fn build(&self, _ctx: &BuildContext<'_>) -> Result<Box<dyn Acquisition>> {
        Ok(Box::new(Pbgi::new(self.lambda, self.stop)?))
    }
}

/// The PBGI acquisition with a fixed λ.
#[derive(Debug, Clone, PartialEq)]
pub struct Pbgi {
    lambda: f64,
    stop: bool,
}

impl Pbgi {
    /// PBGI with cost multiplier `lambda` (> 0, finite); `stop` enables the Pandora rule.
    pub fn new(lambda: f64, stop: bool) -> Result<Self> {
        check_lambda(lambda, "pbgi.lambda")?;
        Ok(Pbgi { lambda, stop })
    }

    /// The cost multiplier λ.
    pub fn lambda(&self) -> f64 {
        self.lambda
    }

    /// The acquisition function of one decision (what [`Acquisition::prepare`] returns,
    /// concretely typed for policies that need [`PbgiFn`]'s extras).
    pub fn function<'a>(&self, ctx: &'a DecisionContext<'a>) -> Result<PbgiFn<'a>> {
        let posterior = checked_posterior(ctx)?;
        let cost = CostView::from_context(ctx, "pbgi")?;
        PbgiFn::new(posterior, cost, self.lambda, ctx.best_y(), self.stop)
    }
}

impl Acquisition for Pbgi {
    fn prepare<'a>(&'a self, ctx: &'a DecisionContext<'a>) -> Result<Box<dyn AcquisitionFn + 'a>> {
        Ok(Box::new(self.function(ctx)?))
    }
}

/// `α(x)` for one decision: a posterior, a cost view and λ.
pub struct PbgiFn<'a> {
    posterior: &'a dyn Posterior,
    cost: CostView<'a>,
    lambda: f64,
    best_y: Option<f64>,
    stop: bool,
}

impl<'a> PbgiFn<'a> {
    /// PBGI over `posterior` with costs from `cost`; `best_y` is only used by the stopping
    /// rule (`stop`) and the diagnostics.
    pub fn new(
        posterior: &'a dyn Posterior,
        cost: CostView<'a>,
        lambda: f64,
        best_y: Option<f64>,
        stop: bool,
    ) -> Result<Self> {
        check_lambda(lambda, "pbgi.lambda")?;
        if stop && best_y.is_none() {
            return Err(Error::invalid(
                "pbgi with `stop: true` needs an observation to compare with: give the run an initial design",
            ));
        }
        Ok(PbgiFn {
            posterior,
            cost,
            lambda,
            best_y,
            stop,
        })
    }

    /// α from the posterior moments and `E[c(x)]`; NaN when they are not usable (a
    /// non-positive or non-finite expected cost), which the optimiser treats as a failure.
    fn index(&self, mv: MeanVar, expected_cost: f64) -> f64 {
        let sigma = sigma_from_var(mv.var).0;
        gittins_index(mv.mean, sigma, self.lambda * expected_cost).unwrap_or(f64::NAN)
    }
}

impl Objective for PbgiFn<'_> {
    fn value(&self, x: &[f64]) -> f64 {
        let mv = self.posterior.mean_var(x);
        self.index(mv, self.cost.expected_pow(x, 1.0))
    }

    /// Prop. 3; a posterior that cannot differentiate yields NaN (value and gradient).
    fn value_grad(&self, x: &[f64], grad: &mut [f64]) -> f64 {
        self.value_from_moments(x, self.posterior.mean_var_grad(x), grad)
    }

    /// The posterior's batched moments ([`Posterior::mean_var_grads`], bitwise its
    /// single-point ones) through the same index as [`PbgiFn::value_grad`].
    fn value_grads(&self, xs: &[f64], values: &mut [f64], grads: &mut [f64]) {
        let d = self.posterior.dim().max(1);
        let moments = self.posterior.mean_var_grads(xs);
        let points = xs.chunks_exact(d).zip(grads.chunks_exact_mut(d));
        for ((v, (x, g)), mvg) in values.iter_mut().zip(points).zip(moments) {
            *v = self.value_from_moments(x, mvg, g);
        }
    }

    fn values(&self, xs: &[f64], out: &mut [f64]) {
        let d = self.posterior.dim().max(1);
        let mut mv = vec![MeanVar::default(); out.len()];
        self.posterior.mean_var_batch(xs, &mut mv);
        for ((o, m), x) in out.iter_mut().zip(&mv).zip(xs.chunks_exact(d)) {
            *o = self.index(*m, self.cost.expected_pow(x, 1.0));
        }
    }
}

impl PbgiFn<'_> {
    /// α and its gradient (Prop. 3) at `x` from the posterior's moments there; NaN when the
    /// posterior could not differentiate or the index is undefined.
    fn value_from_moments(&self, x: &[f64], moments: Result<MeanVarGrad>, grad: &mut [f64]) -> f64 {
        let Ok(mvg) = moments else {
            grad.fill(f64::NAN);
            return f64::NAN;
        };
        // ∇E[c] goes straight into `grad` and is combined in place (no scratch buffer).
        let expected_cost = self.cost.expected_pow_grad(x, 1.0, grad);
        let (sigma, ds_dvar) = sigma_from_var(mvg.var);
        let Some(ig) = gittins_index_grad(mvg.mean, sigma, self.lambda * expected_cost) else {
            grad.fill(f64::NAN);
            return f64::NAN;
        };
        // ∇α = ∇μ + (φ/Φ)·∇σ + (∂g/∂ln κ)·∇ln E[c], ∇σ = (dσ/dvar)·∇var.
        let k_sigma = ig.d_sigma * ds_dvar;
        let k_cost = ig.d_log_kappa / expected_cost;
        for ((g, dm), dv) in grad.iter_mut().zip(&mvg.dmean).zip(&mvg.dvar) {
            *g = dm + k_sigma * dv + k_cost * *g;
        }
        ig.value
    }
}

impl AcquisitionFn for PbgiFn<'_> {
    fn stop_at(&self, max_value: f64) -> Option<String> {
        let best = self.best_y?;
        (self.stop && best >= max_value).then(|| {
            format!(
                "Pandora stopping rule: best observed y = {best} ≥ max PBGI index = {max_value} (lambda = {})",
                self.lambda
            )
        })
    }

    fn diagnostics(&self) -> Diagnostics {
        let mut d = Diagnostics::from([("lambda".to_string(), self.lambda)]);
        if let Some(b) = self.best_y {
            d.insert("best_f".to_string(), b);
        }
        d
    }
}
