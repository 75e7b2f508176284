//! Cost models: what the learner believes about c(x), as the mean and variance of ln c(x).
//!
//! - `log_gp`: an [`ExactGp`] on ln c (seed 001 §3, seed 000 PBGI-U): log-normal beliefs, so
//!   E\[c\], E\[c^−ν\] and P(c ≤ b) follow in closed form from [`LnCost`].
//! - `known`: the problem's exact cost function (variance 0).
//! - `uniform`: every evaluation costs 1 (ln c = 0).

use crate::gp::{ExactGp, GpConfig};
use crate::posterior::GpPosterior;
use cabo_core::capability::{Covariance, FantasizeCost, PreparedPoint};
use cabo_core::{
    BuildContext, Capabilities, Capability, CostBelief, CostFunction, CostModel, CostModelSpec,
    Dataset, Error, LnCost, Model, PluginState, Posterior, Result, TrainingData,
};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// A GP on ln c(x).
#[derive(Debug, Clone)]
pub struct LogGp {
    gp: ExactGp,
}

impl LogGp {
    /// A log-GP cost model with the same options as `exact_gp`.
    pub fn new(config: GpConfig) -> Result<Self> {
        Ok(LogGp {
            gp: ExactGp::new(config)?,
        })
    }

    /// Fits to inputs `x` (row-major, `dim` columns) and positive costs; a non-positive or
    /// non-finite cost is an error naming its index.
    pub fn fit_costs(
        &mut self,
        dim: usize,
        x: &[f64],
        costs: &[f64],
        seed: u64,
    ) -> Result<LogGpBelief> {
        if let Some(i) = costs.iter().position(|c| !(c.is_finite() && *c > 0.0)) {
            return Err(Error::invalid(format!(
                "log_gp: cost[{i}] = {} must be finite and > 0",
                costs[i]
            )));
        }
        let ln: Vec<f64> = costs.iter().map(|c| c.ln()).collect();
        let posterior = self.gp.fit(TrainingData { dim, x, y: &ln }, seed)?;
        Ok(LogGpBelief { posterior })
    }
}

impl CostModel for LogGp {
    fn fit(&mut self, data: &Dataset, seed: u64) -> Result<Box<dyn CostBelief>> {
        let x = data.x_matrix();
        let costs = data.costs();
        Ok(Box::new(self.fit_costs(data.dim(), &x, &costs, seed)?))
    }

    fn checkpoint(&self) -> Result<Option<PluginState>> {
        Model::checkpoint(&self.gp)
    }

    fn restore(&mut self, state: &PluginState) -> Result<()> {
        Model::restore(&mut self.gp, state)
    }
}

/// The log-GP belief: the GP posterior over ln c, whose covariances and fantasies it offers.
#[derive(Debug, Clone)]
pub struct LogGpBelief {
    /// Posterior of ln c.
    pub posterior: GpPosterior,
}

impl CostBelief for LogGpBelief {
    fn dim(&self) -> usize {
        Posterior::dim(&self.posterior)
    }

    fn ln_cost(&self, x: &[f64]) -> LnCost {
        let mv = self.posterior.mean_var(x);
        LnCost {
            mean: mv.mean,
            var: mv.var,
            dmean: Vec::new(),
            dvar: Vec::new(),
        }
    }

    fn ln_cost_grad(&self, x: &[f64]) -> LnCost {
        match self.posterior.mean_var_grad(x) {
            Ok(g) => LnCost {
                mean: g.mean,
                var: g.var,
                dmean: g.dmean,
                dvar: g.dvar,
            },
            // Only a dimension mismatch fails; report it as NaN so an optimiser rejects it.
            Err(_) => LnCost {
                mean: f64::NAN,
                var: f64::NAN,
                dmean: vec![f64::NAN; x.len()],
                dvar: vec![f64::NAN; x.len()],
            },
        }
    }

    fn is_known(&self) -> bool {
        false
    }

    fn covariance(&self) -> Option<&dyn Covariance> {
        Some(&self.posterior)
    }

    fn fantasize(&self) -> Option<&dyn FantasizeCost> {
        Some(self)
    }
}

impl FantasizeCost for LogGpBelief {
    /// Conditions the posterior of ln c ([`GpPosterior::condition_many`]).
    fn condition(&self, xs: &[f64], ln_costs: &[f64]) -> Result<Box<dyn CostBelief>> {
        Ok(Box::new(LogGpBelief {
            posterior: self.posterior.condition_many(xs, ln_costs)?,
        }))
    }
}

#[cabo_core::plugin(
    name = "log_gp",
    summary = "GP on ln c(x) (same options as exact_gp): log-normal cost beliefs with E[c], E[c^-ν], P(c ≤ b)",
    paper = "001_ffe8b93f5b7c8c43.txt §3 (also 000 PBGI-U)",
    example = "{ type: log_gp, kernel: { type: matern52 }, fit: map, prior: gamma, standardize: true }"
)]
impl CostModelSpec for GpConfig {
    fn validate(&self, dim: usize) -> Result<()> {
        GpConfig::validate(self, Some(dim))
    }

    fn build(&self, ctx: &BuildContext<'_>) -> Result<Box<dyn CostModel>> {
        GpConfig::validate(self, Some(ctx.problem.dim))?;
        Ok(Box::new(LogGp::new(self.clone())?))
    }

    fn capabilities(&self) -> Capabilities {
        EXACT_COST_CAPABILITIES
    }
}

/// What every cost belief of this crate offers: covariances of ln c and fantasies (trivial
/// for the known and uniform costs).
const EXACT_COST_CAPABILITIES: Capabilities = Capabilities::NONE
    .with(Capability::Covariance)
    .with(Capability::Fantasize);

/// The problem's exact cost function as a belief (variance 0).
#[derive(Debug, Clone)]
pub struct KnownCost {
    dim: usize,
    cost: Arc<dyn CostFunction>,
}

impl KnownCost {
    /// A known-cost belief over `[0,1]^dim`.
    pub fn new(dim: usize, cost: Arc<dyn CostFunction>) -> Self {
        KnownCost { dim, cost }
    }
}

impl CostModel for KnownCost {
    fn fit(&mut self, _data: &Dataset, _seed: u64) -> Result<Box<dyn CostBelief>> {
        Ok(Box::new(self.clone()))
    }

    cabo_core::stateless_checkpoint!("known");
}

impl CostBelief for KnownCost {
    fn dim(&self) -> usize {
        self.dim
    }

    fn ln_cost(&self, x: &[f64]) -> LnCost {
        LnCost {
            mean: self.cost.cost(x).ln(),
            ..LnCost::default()
        }
    }

    fn ln_cost_grad(&self, x: &[f64]) -> LnCost {
        let mut g = vec![0.0; x.len()];
        let c = self.cost.cost_grad(x, &mut g);
        // ∇ln c = ∇c / c.
        for v in g.iter_mut() {
            *v /= c;
        }
        LnCost {
            mean: c.ln(),
            var: 0.0,
            dmean: g,
            dvar: vec![0.0; x.len()],
        }
    }

    fn is_known(&self) -> bool {
        true
    }

    fn covariance(&self) -> Option<&dyn Covariance> {
        Some(self)
    }

    fn fantasize(&self) -> Option<&dyn FantasizeCost> {
        Some(self)
    }
}

/// The capabilities of a cost known exactly (`$t` offers `dim` and `prepare_known`): no
/// covariance between points, and fantasies that teach nothing.
macro_rules! exact_cost_capabilities {
    ($t:ty) => {
        impl Covariance for $t {
            fn dim(&self) -> usize {
                self.dim
            }
            fn fantasy_noise(&self) -> f64 {
                0.0
            }
            fn prepare(&self, x: &[f64], grad: bool, c: &mut PreparedPoint) {
                prepare_known(self, x, grad, c);
            }
            fn cov(
                &self,
                _: &PreparedPoint,
                _: &PreparedPoint,
                ga: &mut [f64],
                gb: &mut [f64],
            ) -> f64 {
                no_covariance(ga, gb)
            }
        }

        impl FantasizeCost for $t {
            /// Observing a known cost teaches nothing: the belief stays as it is.
            fn condition(&self, _xs: &[f64], _ln_costs: &[f64]) -> Result<Box<dyn CostBelief>> {
                Ok(Box::new(self.clone()))
            }
        }
    };
}

exact_cost_capabilities!(KnownCost);

/// Spec of the `known` cost model: uses the problem's known cost function.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KnownCostSpec {}

#[cabo_core::plugin(
    name = "known",
    summary = "The problem's exact cost function and gradient (no uncertainty)",
    paper = "standard",
    example = "{ type: known }"
)]
impl CostModelSpec for KnownCostSpec {
    fn build(&self, ctx: &BuildContext<'_>) -> Result<Box<dyn CostModel>> {
        let cost = ctx.problem.known_cost.clone().ok_or_else(|| {
            Error::invalid(format!(
                "cost_model `known`: problem `{}` has no known cost function",
                ctx.problem.name
            ))
        })?;
        Ok(Box::new(KnownCost::new(ctx.problem.dim, cost)))
    }

    fn capabilities(&self) -> Capabilities {
        EXACT_COST_CAPABILITIES
    }
}

/// Every evaluation costs the same (ln c = 0): cost-aware rules reduce to their plain forms.
#[derive(Debug, Clone, Copy)]
pub struct UniformCost {
    dim: usize,
}

impl UniformCost {
    /// A uniform-cost belief over `[0,1]^dim`.
    pub fn new(dim: usize) -> Self {
        UniformCost { dim }
    }
}

impl CostModel for UniformCost {
    fn fit(&mut self, _data: &Dataset, _seed: u64) -> Result<Box<dyn CostBelief>> {
        Ok(Box::new(*self))
    }

    cabo_core::stateless_checkpoint!("uniform");
}

impl CostBelief for UniformCost {
    fn dim(&self) -> usize {
        self.dim
    }

    fn ln_cost(&self, _x: &[f64]) -> LnCost {
        LnCost::default()
    }

    fn ln_cost_grad(&self, x: &[f64]) -> LnCost {
        LnCost {
            mean: 0.0,
            var: 0.0,
            dmean: vec![0.0; x.len()],
            dvar: vec![0.0; x.len()],
        }
    }

    fn is_known(&self) -> bool {
        true
    }

    fn covariance(&self) -> Option<&dyn Covariance> {
        Some(self)
    }

    fn fantasize(&self) -> Option<&dyn FantasizeCost> {
        Some(self)
    }
}

exact_cost_capabilities!(UniformCost);

/// Spec of the `uniform` cost model.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UniformCostSpec {}

#[cabo_core::plugin(
    name = "uniform",
    summary = "Every evaluation costs 1 (ln c = 0)",
    paper = "standard",
    example = "{ type: uniform }"
)]
impl CostModelSpec for UniformCostSpec {
    fn build(&self, ctx: &BuildContext<'_>) -> Result<Box<dyn CostModel>> {
        Ok(Box::new(UniformCost::new(ctx.problem.dim)))
    }

    fn capabilities(&self) -> Capabilities {
        EXACT_COST_CAPABILITIES
    }
}

/// A cost known exactly as a point of a scenario tree: the mean of ln c and its gradient
/// from the belief, zero variance, so a fantasised cost is the true cost.
fn prepare_known(belief: &dyn CostBelief, x: &[f64], grad: bool, c: &mut PreparedPoint) {
    let l = if grad {
        belief.ln_cost_grad(x)
    } else {
        belief.ln_cost(x)
    };
    c.mean = l.mean;
    c.var = 0.0;
    c.dmean = l.dmean;
    c.dvar.clear();
    c.dvar.resize(c.dmean.len(), 0.0);
    c.x.clear();
    c.x.extend_from_slice(x);
}

/// The covariance of two values known exactly: zero, with zero gradients.
fn no_covariance(ga: &mut [f64], gb: &mut [f64]) -> f64 {
    ga.fill(0.0);
    gb.fill(0.0);
    0.0
}
