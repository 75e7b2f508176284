//! Random search: the cost-blind, model-free baseline every benchmark includes.

use cabo_core::{
    BuildContext, Decision, DecisionContext, Domain, Error, PendingRule, Policy, PolicySpec, Query,
    Result, Rng,
};
use serde::{Deserialize, Serialize};

/// Spec of [`RandomSearch`] (`policy: { type: random_search }`); it has no parameters.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RandomSearchSpec {}

#[cabo_core::plugin(
    name = "random_search",
    summary = "Uniform random points in [0,1]^d (or a uniform random candidate of a finite domain); never fits a model",
    paper = "standard",
    example = "{ type: random_search }"
)]
impl PolicySpec for RandomSearchSpec {
    fn build(&self, _ctx: &BuildContext<'_>) -> Result<Box<dyn Policy>> {
        Ok(Box::new(RandomSearch))
    }

    /// The mean of the values observed: random search never reads y, and a lie, unlike the
    /// Kriging believer, fits no model.
    fn pending(&self) -> PendingRule {
        PendingRule::ConstantLiarMean
    }
}

/// Draws each query uniformly at random from the problem's domain.
///
/// Every draw is determined by the decision's seed (`ctx.seed`), so the policy keeps no
/// state of its own and a run replays exactly. It never asks for a posterior, so no model
/// is ever fitted for it.
#[derive(Debug, Clone, Copy, Default)]
pub struct RandomSearch;

impl Policy for RandomSearch {
    fn decide(&mut self, ctx: &DecisionContext<'_>) -> Result<Decision> {
        let mut rng = Rng::new(ctx.seed);
        let d = ctx.problem.dim;
        let x = match &ctx.problem.domain {
            Domain::Continuous => {
                if d == 0 {
                    return Err(Error::invalid(
                        "random_search: the problem has dimension 0, there is nothing to choose",
                    ));
                }
                (0..d).map(|_| rng.uniform()).collect()
            }
            Domain::Finite(candidates) => {
                if candidates.is_empty() {
                    return Err(Error::invalid(
                        "random_search: the problem's finite domain has no candidates",
                    ));
                }
                let i = rng.below(candidates.len() as u64) as usize;
                candidates[i].clone()
            }
        };
        Ok(Decision::Evaluate(Query::at(x)))
    }

    cabo_core::stateless_checkpoint!("random_search");
}
