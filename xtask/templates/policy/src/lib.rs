//! # cabo-template-policy
//!
//! A cabo policy plugin: `policy: { type: template_policy, step: 0.1 }`.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

use cabo_core::{
    BuildContext, Decision, DecisionContext, Domain, Error, Policy, PolicySpec, Query, Result, Rng,
};
use serde::{Deserialize, Serialize};

cabo_core::plugin_group!();

/// Spec of [`TemplatePolicy`]: `policy: { type: template_policy, step: 0.1 }`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TemplatePolicySpec {
    /// Half-width of the uniform perturbation of the incumbent, in unit-cube units.
    pub step: f64,
}

#[cabo_core::plugin(
    name = "template_policy",
    summary = "Uniform perturbation of the best point so far (edit me)",
    paper = "standard",
    example = "{ type: template_policy, step: 0.1 }"
)]
impl PolicySpec for TemplatePolicySpec {
    fn validate(&self, _dim: usize) -> Result<()> {
        if self.step > 0.0 && self.step <= 1.0 {
            Ok(())
        } else {
            Err(Error::invalid(format!(
                "template_policy: `step` must be in (0, 1], got {}",
                self.step
            )))
        }
    }

    fn build(&self, _ctx: &BuildContext<'_>) -> Result<Box<dyn Policy>> {
        Ok(Box::new(TemplatePolicy { step: self.step }))
    }
}

/// Proposes the incumbent moved by a uniform step in every coordinate, clipped to the cube.
pub struct TemplatePolicy {
    step: f64,
}

impl Policy for TemplatePolicy {
    fn decide(&mut self, ctx: &DecisionContext<'_>) -> Result<Decision> {
        if !matches!(ctx.problem.domain, Domain::Continuous) {
            return Err(Error::invalid("template_policy: needs a continuous domain"));
        }
        // Every draw comes from the decision's seed, so runs replay exactly.
        let mut rng = Rng::new(ctx.seed);
        let d = ctx.problem.dim;
        let x = match ctx.data.best() {
            Some(best) => best
                .query
                .x
                .iter()
                .map(|v| (v + rng.uniform_in(-self.step, self.step)).clamp(0.0, 1.0))
                .collect(),
            None => (0..d).map(|_| rng.uniform()).collect(),
        };
        Ok(Decision::Evaluate(Query::at(x)))
    }

    // Nothing is carried between decisions, so an interrupted run resumes from its last
    // checkpoint. A policy with state encodes it here instead (see `Policy::checkpoint`).
    cabo_core::stateless_checkpoint!("template_policy");
}

#[cfg(test)]
mod tests {
    use super::*;
    use cabo_core::{
        Budget, BudgetState, Dataset, Observation, OptimizerSpec, Outcome, Phase, ProblemInfo,
    };

    #[test]
    fn proposals_stay_within_a_step_of_the_incumbent() {
        let info = ProblemInfo::continuous("test", 2);
        let mut data = Dataset::new(2);
        let x = vec![0.5, 0.9];
        data.push(Observation {
            query: Query::at(x.clone()),
            outcome: Outcome::new(1.0, 1.0, x.clone(), None),
            phase: Phase::Initial,
        })
        .unwrap();
        let budget = BudgetState::new(Budget {
            cost: None,
            iterations: Some(5),
        });
        let settings = OptimizerSpec::default().resolve(2).unwrap();
        let mut policy = TemplatePolicy { step: 0.1 };
        for seed in 0..20 {
            let ctx = DecisionContext::new(&info, &data, &budget, 1, seed, &settings);
            let Decision::Evaluate(q) = policy.decide(&ctx).unwrap() else {
                panic!("the policy never stops");
            };
            for (a, b) in q.x.iter().zip(&x) {
                assert!((a - b).abs() <= 0.1 + 1e-12 && (0.0..=1.0).contains(a));
            }
        }
    }

    #[test]
    fn spec_rejects_a_bad_step() {
        let bad: Box<dyn PolicySpec> =
            serde_json::from_str(r#"{"type": "template_policy", "step": 0.0}"#).unwrap();
        assert!(bad.validate(2).is_err());
    }

    #[test]
    fn the_catalogue_lists_it_as_a_policy() {
        let entry = cabo_core::registry::catalogue()
            .into_iter()
            .find(|p| p.name == "template_policy")
            .expect("registered");
        assert_eq!(entry.kind, cabo_core::Kind::Policy);
    }
}
