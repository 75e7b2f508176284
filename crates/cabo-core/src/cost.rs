//! Evaluation costs: the cost functions problems charge, and the learner's belief about them.
//!
//! Every cost belief is a (possibly degenerate) log-normal: it reports the mean and variance
//! of ln c(x). A known cost has variance 0, a uniform cost has ln c = 0, a log-GP has both
//! from its posterior. The quantities acquisitions need — E\[c\], E\[c^−ν\], P(c ≤ b) — follow
//! in closed form from [`LnCost`], with gradients.

use crate::capability::{Capabilities, Covariance, FantasizeCost};
use crate::{BuildContext, Problem, Result, normal};
use std::fmt::Debug;

/// A cost function over the unit cube, known exactly.
pub trait CostFunction: Send + Sync + Debug {
    /// c(x) > 0.
    fn cost(&self, x: &[f64]) -> f64;
    /// c(x), writing ∇c(x) into `grad`.
    fn cost_grad(&self, x: &[f64], grad: &mut [f64]) -> f64;
    /// The cost actually charged for one evaluation (adds observation noise where the
    /// spec asks for it); defaults to [`CostFunction::cost`].
    fn observe(&self, x: &[f64], _seed: u64) -> f64 {
        self.cost(x)
    }
}

/// A cost function as written in a spec (`cost: { type: linear_mean, … }`).
#[typetag::serde(tag = "type")]
pub trait CostFunctionSpec: Debug + Send + Sync + dyn_clone::DynClone {
    /// Rejects parameters that do not fit a problem of dimension `dim`.
    fn validate(&self, _dim: usize) -> Result<()> {
        Ok(())
    }
    /// Builds the cost function for one replication of `problem` (cost functions written in
    /// the problem's own units use [`Problem::to_native`]).
    fn build(&self, problem: &dyn Problem, seed: u64) -> Result<Box<dyn CostFunction>>;
    /// A lower bound on the cost of one evaluation over every replication, where the spec
    /// alone tells it; the runner bounds the evaluations of a cost budget with it before
    /// running (`None`: unknown, and the run is capped at `limits.max_evaluations`).
    fn min_cost(&self) -> Option<f64> {
        None
    }
}

dyn_clone::clone_trait_object!(CostFunctionSpec);

/// Mean and variance of ln c at a point, optionally with gradients.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LnCost {
    /// E[ln c(x)].
    pub mean: f64,
    /// Var[ln c(x)] (0 for a known cost).
    pub var: f64,
    /// ∇ E[ln c(x)] (empty when not requested).
    pub dmean: Vec<f64>,
    /// ∇ Var[ln c(x)] (empty when not requested).
    pub dvar: Vec<f64>,
}

impl LnCost {
    /// E\[c\] = exp(μ + σ²/2).
    pub fn expected(&self) -> f64 {
        (self.mean + 0.5 * self.var).exp()
    }

    /// ∇E\[c\], from the gradients.
    pub fn expected_grad(&self) -> Vec<f64> {
        let e = self.expected();
        self.dmean
            .iter()
            .zip(&self.dvar)
            .map(|(dm, dv)| e * (dm + 0.5 * dv))
            .collect()
    }

    /// E[c^p] = exp(p μ + p² σ²/2) for any real p (p = −ν for EI-PUC-CC).
    pub fn expected_pow(&self, p: f64) -> f64 {
        (p * self.mean + 0.5 * p * p * self.var).exp()
    }

    /// E[c^p], writing ∇E[c^p] into `grad` (differentiated through μ(x) and σ²(x)).
    pub fn expected_pow_grad(&self, p: f64, grad: &mut [f64]) -> f64 {
        let e = self.expected_pow(p);
        for ((g, dm), dv) in grad.iter_mut().zip(&self.dmean).zip(&self.dvar) {
            *g = e * (p * dm + 0.5 * p * p * dv);
        }
        e
    }

    /// P(c ≤ b) = Φ((ln b − μ)/σ); a step function when σ = 0.
    pub fn prob_at_most(&self, b: f64) -> f64 {
        if b <= 0.0 {
            return 0.0;
        }
        let z = b.ln() - self.mean;
        if self.var <= 0.0 {
            return if z >= 0.0 { 1.0 } else { 0.0 };
        }
        normal::cdf(z / self.var.sqrt())
    }

    /// ∇P(c ≤ b) (zero where σ = 0).
    pub fn prob_at_most_grad(&self, b: f64) -> Vec<f64> {
        if b <= 0.0 || self.var <= 0.0 {
            return vec![0.0; self.dmean.len()];
        }
        let s = self.var.sqrt();
        let z = (b.ln() - self.mean) / s;
        let phi = normal::pdf(z);
        // z = (ln b − μ)/σ, ∂z = −∂μ/σ − z ∂σ/σ with ∂σ = ∂v / (2σ).
        self.dmean
            .iter()
            .zip(&self.dvar)
            .map(|(dm, dv)| phi * (-dm / s - z * dv / (2.0 * self.var)))
            .collect()
    }
}

/// The learner's belief about c(x) after seeing data.
pub trait CostBelief: Send + Sync {
    /// Input dimension.
    fn dim(&self) -> usize;
    /// Mean and variance of ln c(x), without gradients.
    fn ln_cost(&self, x: &[f64]) -> LnCost;
    /// Mean and variance of ln c(x) with their gradients.
    fn ln_cost_grad(&self, x: &[f64]) -> LnCost;
    /// True when the cost is known exactly (σ = 0 everywhere).
    fn is_known(&self) -> bool;
    /// Joint covariances of ln c between prepared points ([`crate::capability`]); `None`,
    /// the default, when the belief does not offer them. A cost known exactly offers them
    /// trivially (all zero).
    fn covariance(&self) -> Option<&dyn Covariance> {
        None
    }
    /// Conditioning on fantasised observations of ln c; `None` by default. A cost known
    /// exactly offers it trivially (observing a known cost changes nothing).
    fn fantasize(&self) -> Option<&dyn FantasizeCost> {
        None
    }
}

/// Something that turns observed costs into a [`CostBelief`].
pub trait CostModel: Send {
    /// Fits to the costs observed so far.
    fn fit(&mut self, data: &crate::Dataset, seed: u64) -> Result<Box<dyn CostBelief>>;

    /// What this cost model carries from one fit to the next, for resuming an interrupted
    /// run exactly; `Ok(None)`, the default, means it cannot resume. See
    /// [`crate::Policy::checkpoint`].
    fn checkpoint(&self) -> Result<Option<crate::PluginState>> {
        Ok(None)
    }

    /// Takes back what [`CostModel::checkpoint`] returned, into a freshly built cost model.
    fn restore(&mut self, _state: &crate::PluginState) -> Result<()> {
        Err(crate::Error::unsupported(
            "this cost model cannot resume from a checkpoint",
        ))
    }
}

/// A cost model as written in a spec (`cost_model: { type: log_gp, … }`).
#[typetag::serde(tag = "type")]
pub trait CostModelSpec: Debug + Send + Sync + dyn_clone::DynClone {
    /// Rejects parameters that do not fit a problem of dimension `dim`.
    fn validate(&self, _dim: usize) -> Result<()> {
        Ok(())
    }
    /// Builds the cost model for one run.
    fn build(&self, ctx: &BuildContext<'_>) -> Result<Box<dyn CostModel>>;
    /// The required capabilities ([`crate::Capability`]) this cost model's beliefs offer;
    /// the runner checks policies' [`crate::Requirements`] against them before running.
    fn capabilities(&self) -> Capabilities {
        Capabilities::NONE
    }
}

dyn_clone::clone_trait_object!(CostModelSpec);

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> LnCost {
        LnCost {
            mean: 0.3,
            var: 0.49,
            dmean: vec![0.2, -0.1],
            dvar: vec![0.05, 0.3],
        }
    }

    #[test]
    fn lognormal_moments_match_closed_forms() {
        let c = sample();
        assert!((c.expected() - (0.3f64 + 0.245).exp()).abs() < 1e-15);
        assert!((c.expected_pow(1.0) - c.expected()).abs() < 1e-15);
        assert!((c.prob_at_most(0.3f64.exp()) - 0.5).abs() < 1e-15);
    }

    #[test]
    fn gradients_follow_the_chain_rule() {
        // Perturb μ and σ² along each coordinate's gradient direction and compare.
        let c = sample();
        let h = 1e-6;
        for i in 0..2 {
            let shifted = |s: f64| LnCost {
                mean: c.mean + s * c.dmean[i],
                var: c.var + s * c.dvar[i],
                ..LnCost::default()
            };
            let fd = |f: &dyn Fn(&LnCost) -> f64| (f(&shifted(h)) - f(&shifted(-h))) / (2.0 * h);
            let rel = |a: f64, b: f64| (a - b).abs() / b.abs().max(1e-12);
            assert!(rel(c.expected_grad()[i], fd(&|l| l.expected())) < 1e-7);
            let mut g = vec![0.0; c.dmean.len()];
            c.expected_pow_grad(-0.7, &mut g);
            assert!(rel(g[i], fd(&|l| l.expected_pow(-0.7))) < 1e-7);
            assert!(rel(c.prob_at_most_grad(2.0)[i], fd(&|l| l.prob_at_most(2.0))) < 1e-7);
        }
    }
}
