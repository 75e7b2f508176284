//! The stopping rule and PBGI-D's λ decay through real decisions.

use cabo_core::{
    Budget, BudgetState, CostFunction, Dataset, Decision, DecisionContext, Observation,
    OptimizerSettings, Outcome, Phase, Policy, ProblemInfo, Query, TrainingData,
};
use cabo_gp::{ExactGp, GpConfig, GpPosterior, KernelKind, Lengthscale};
use cabo_optim::acquisition::AcquisitionPolicy;
use cabo_pbgi::{Pbgi, PbgiDecay};
use std::sync::Arc;

#[derive(Debug)]
struct UnitCost;

impl CostFunction for UnitCost {
    fn cost(&self, _: &[f64]) -> f64 {
        1.0
    }
    fn cost_grad(&self, _: &[f64], grad: &mut [f64]) -> f64 {
        grad.fill(0.0);
        1.0
    }
}

fn observe(data: &mut Dataset, x: f64, y: f64) -> Observation {
    let obs = Observation {
        query: Query::at(vec![x]),
        outcome: Outcome::new(y, 1.0, vec![x], None),
        phase: Phase::Policy,
    };
    data.push(obs.clone()).unwrap();
    obs
}

fn posterior(data: &Dataset) -> GpPosterior {
    let config = GpConfig::fixed(KernelKind::Matern52, Lengthscale::Scalar(0.1), 1.0, 1e-4);
    let (x, y) = (data.x_matrix(), data.ys());
    ExactGp::new(config)
        .unwrap()
        .fit(
            TrainingData {
                dim: 1,
                x: &x,
                y: &y,
            },
            0,
        )
        .unwrap()
}

fn setting() -> (ProblemInfo, Dataset, BudgetState, OptimizerSettings) {
    let mut info = ProblemInfo::continuous("stop", 1);
    info.known_cost = Some(Arc::new(UnitCost));
    let mut data = Dataset::new(1);
    // One outstanding observation (10, far above the prior's scale 1) and two ordinary ones.
    for (x, y) in [(0.1, 0.0), (0.5, 10.0), (0.9, 0.0)] {
        observe(&mut data, x, y);
    }
    let budget = BudgetState::new(Budget {
        cost: Some(100.0),
        iterations: None,
    });
    let settings = OptimizerSettings {
        raw_samples: 256,
        restarts: 4,
        max_iters: 100,
    };
    (info, data, budget, settings)
}

#[test]
fn pandora_rule_stops_when_nothing_is_worth_its_cost() {
    let (info, data, budget, settings) = setting();
    let decide = |lambda: f64, stop: bool| {
        let ctx = DecisionContext::new(&info, &data, &budget, 1, 3, &settings)
            .with_posterior(Box::new(posterior(&data)));
        let mut policy = AcquisitionPolicy::new(Box::new(Pbgi::new(lambda, stop).unwrap()));
        let d = policy.decide(&ctx).unwrap();
        (d, policy.diagnostics())
    };
    // λ = 1: opening any box costs 1, and no point's index reaches the best y = 10.
    let (d, diag) = decide(1.0, true);
    assert!(
        matches!(d, Decision::Stop(ref r) if r.contains("Pandora")),
        "{d:?}"
    );
    assert!(diag["acq_value"] < 10.0 && diag["lambda"] == 1.0);
    // Without `stop` the same acquisition keeps going.
    assert!(matches!(decide(1.0, false).0, Decision::Evaluate(_)));
    // λ = 1e-6: cheap exploration is worth it (index > 10 next to the outstanding point).
    let (d, diag) = decide(1e-6, true);
    assert!(matches!(d, Decision::Evaluate(_)), "{d:?}");
    assert!(diag["acq_value"] > 10.0);
}

#[test]
fn pbgi_decay_halves_lambda_when_the_rule_fires() {
    let (info, mut data, budget, settings) = setting();
    let mut policy = PbgiDecay::new(1.0, 0.5).unwrap();
    // At λ = 1 every index is below 10 (previous test), so observing anything fires the rule.
    let x = {
        let ctx = DecisionContext::new(&info, &data, &budget, 1, 3, &settings)
            .with_posterior(Box::new(posterior(&data)));
        match policy.decide(&ctx).unwrap() {
            Decision::Evaluate(q) => q.x[0],
            d => panic!("{d:?}"),
        }
    };
    assert_eq!(policy.diagnostics()["lambda"], 1.0);
    let obs = observe(&mut data, x, 0.0);
    policy.observe(&data, &obs).unwrap();
    assert_eq!(policy.lambda(), 0.5);
    // λ = 1e-6 on the original data: the chosen point's index exceeds 10, and a modest
    // observation leaves λ alone.
    let (_, mut data, _, _) = setting();
    let mut policy = PbgiDecay::new(1e-6, 0.5).unwrap();
    let x = {
        let ctx = DecisionContext::new(&info, &data, &budget, 2, 3, &settings)
            .with_posterior(Box::new(posterior(&data)));
        match policy.decide(&ctx).unwrap() {
            Decision::Evaluate(q) => q.x[0],
            d => panic!("{d:?}"),
        }
    };
    assert!(policy.diagnostics()["acq_value"] > 10.0);
    let obs = observe(&mut data, x, 1.0);
    policy.observe(&data, &obs).unwrap();
    assert_eq!(policy.lambda(), 1e-6);
}
