//! The policies end to end through a `DecisionContext`, the specs' parse check, and bad input.

mod common;

use cabo_core::{
    Budget, BudgetState, CostModel, Dataset, Decision, DecisionContext, Model, Observation,
    OptimizerSettings, Outcome, Phase, Policy, PolicySpec, ProblemInfo, Query,
};
use cabo_gp::{ExactGp, LogGp};
use std::cell::RefCell;

fn dataset(n: usize, d: usize, seed: u64) -> Dataset {
    let (x, y, c) = common::random_data(n, d, seed);
    let mut data = Dataset::new(d);
    for i in 0..n {
        let xi = x[i * d..(i + 1) * d].to_vec();
        data.push(Observation::initial(xi, y[i], c[i])).unwrap();
    }
    data
}

fn spec(yaml: &str) -> Box<dyn PolicySpec> {
    cabo_bmsei::plugins();
    serde_json::from_str(yaml).unwrap()
}

struct Run {
    info: ProblemInfo,
    data: Dataset,
    budget: BudgetState,
    settings: OptimizerSettings,
    model: RefCell<Box<dyn Model>>,
    cost: RefCell<Box<dyn CostModel>>,
}

impl Run {
    fn new(d: usize, budget: Budget) -> Run {
        Run {
            info: ProblemInfo::continuous("test", d),
            data: dataset(8, d, 4),
            budget: BudgetState::new(budget),
            settings: OptimizerSettings {
                raw_samples: 64,
                restarts: 2,
                max_iters: 40,
            },
            model: RefCell::new(Box::new(ExactGp::new(common::config(0.3, 1e-3)).unwrap())),
            cost: RefCell::new(Box::new(LogGp::new(common::config(0.5, 1e-3)).unwrap())),
        }
    }
    fn decide(&self, p: &mut dyn Policy, seed: u64) -> cabo_core::Result<Vec<f64>> {
        let ctx = DecisionContext::new(
            &self.info,
            &self.data,
            &self.budget,
            self.data.len(),
            seed,
            &self.settings,
        )
        .with_models(Some(&self.model), Some(&self.cost));
        match p.decide(&ctx)? {
            Decision::Evaluate(q) => Ok(q.x),
            Decision::Stop(r) => panic!("stopped: {r}"),
        }
    }
}

fn cost_budget(c: f64) -> Budget {
    Budget {
        cost: Some(c),
        iterations: None,
    }
}

#[test]
fn policies_decide_deterministically_inside_the_cube() {
    let info = ProblemInfo::continuous("test", 2);
    let ctx = cabo_core::BuildContext {
        problem: &info,
        seed: 1,
    };
    for s in [
        r#"{"type":"bmsei","fantasies":[1,1,1]}"#,
        r#"{"type":"bmsei","fantasies":[3,2],"budget":"remaining"}"#,
        r#"{"type":"ms_ei","fantasies":[3,2]}"#,
        r#"{"type":"kg","fantasies":8}"#,
    ] {
        let run = Run::new(2, cost_budget(20.0));
        let sp = spec(s);
        let mut a = sp.build(&ctx).unwrap();
        let mut b = sp.build(&ctx).unwrap();
        let xa = run.decide(a.as_mut(), 7).unwrap();
        let xb = run.decide(b.as_mut(), 7).unwrap();
        assert_eq!(xa, xb, "{s}");
        assert!(xa.iter().all(|v| (0.0..=1.0).contains(v)), "{s}: {xa:?}");
        let diag = a.diagnostics();
        assert!(diag["acq_value"] > 0.0, "{s}: {diag:?}");
        if s.contains("bmsei") {
            let b = diag["budget"];
            assert!(b > 0.0 && b <= 20.0, "{s}: budget {b}");
        }
    }
}

#[test]
fn scheduled_budget_is_a_rollout_spend_then_refills_by_the_last_cost() {
    let info = ProblemInfo::continuous("test", 2);
    let ctx = cabo_core::BuildContext {
        problem: &info,
        seed: 1,
    };
    let sp = spec(r#"{"type":"bmsei","fantasies":[1]}"#);
    let mut p = sp.build(&ctx).unwrap();
    let mut run = Run::new(2, cost_budget(1000.0));
    run.decide(p.as_mut(), 3).unwrap();
    let first = p.diagnostics();
    assert_eq!(first["budget_rollout"], 1.0);
    let b0 = first["budget"];
    // Two fantasised EI-PUC-CC steps cost far less than the budget of 1000.
    assert!(b0 > 0.0 && b0 < 100.0, "scheduled budget {b0}");
    // A cheap observation: the schedule keeps going with previous − last cost.
    let x = vec![0.5, 0.5];
    let cheap = 1e-3 * b0;
    run.data
        .push(Observation {
            query: Query::at(x.clone()),
            outcome: Outcome::new(0.0, cheap, x, None),
            phase: Phase::Policy,
        })
        .unwrap();
    run.budget.charge(cheap);
    run.decide(p.as_mut(), 4).unwrap();
    let second = p.diagnostics();
    assert_eq!(second["budget_rollout"], 0.0);
    assert!((second["budget"] - (b0 - cheap)).abs() < 1e-12);
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    let info = ProblemInfo::continuous("test", 3);
    let ctx = cabo_core::BuildContext {
        problem: &info,
        seed: 1,
    };
    for bad in [
        r#"{"type":"bmsei","fantasies":[0]}"#,
        r#"{"type":"bmsei","fantasies":[1,1,1,1,1,1,1,1,1]}"#,
        r#"{"type":"ms_ei","fantasies":[2,0]}"#,
        r#"{"type":"kg","fantasies":0}"#,
    ] {
        let sp = spec(bad);
        assert!(sp.validate(3).is_err(), "{bad}");
        assert!(sp.build(&ctx).is_err(), "{bad}");
    }
    assert!(serde_json::from_str::<Box<dyn PolicySpec>>(r#"{"type":"bmsei"}"#).is_err());
    assert!(
        serde_json::from_str::<Box<dyn PolicySpec>>(
            r#"{"type":"bmsei","fantasies":[1],"budget":"later"}"#
        )
        .is_err()
    );
    // No observations yet.
    let sp = spec(r#"{"type":"bmsei","fantasies":[1]}"#);
    let mut p = sp.build(&ctx).unwrap();
    let mut run = Run::new(3, cost_budget(5.0));
    run.data = Dataset::new(3);
    assert!(run.decide(p.as_mut(), 1).is_err());
}

/// `base_samples` of `bmsei`, `ms_ei` and `kg`: left out or `shared_sobol` (seed 001's
/// choice), the policy decides identically (bit-identical acquisition value) and serialises
/// without the key; `independent` changes the tree (another acquisition value), decides
/// deterministically inside the cube and serialises with the key.
#[test]
fn base_samples_key_defaults_to_shared_sobol_and_independent_changes_the_tree() {
    let info = ProblemInfo::continuous("test", 2);
    let ctx = cabo_core::BuildContext {
        problem: &info,
        seed: 1,
    };
    for plain in [
        r#"{"type":"bmsei","fantasies":[4,2]}"#,
        r#"{"type":"ms_ei","fantasies":[3,2]}"#,
        r#"{"type":"kg","fantasies":8}"#,
    ] {
        let with = |scheme: &str| {
            format!(
                "{},\"base_samples\":\"{scheme}\"}}",
                plain.strip_suffix('}').unwrap()
            )
        };
        let acq = |s: &str| {
            let run = Run::new(2, cost_budget(20.0));
            let mut p = spec(s).build(&ctx).unwrap();
            let x = run.decide(p.as_mut(), 7).unwrap();
            (x, p.diagnostics()["acq_value"])
        };
        let default = acq(plain);
        assert_eq!(default, acq(&with("shared_sobol")), "{plain}");
        let iid = acq(&with("independent"));
        assert_eq!(iid, acq(&with("independent")), "{plain}");
        assert!(iid.0.iter().all(|v| (0.0..=1.0).contains(v)), "{plain}");
        assert!(
            iid.1 > 0.0 && iid.1 != default.1,
            "{plain}: {iid:?} vs {default:?}"
        );
        let json = |s: &str| serde_json::to_string(&spec(s)).unwrap();
        assert_eq!(json(&with("shared_sobol")), json(plain));
        assert!(!json(plain).contains("base_samples"), "{}", json(plain));
        assert!(
            json(&with("independent")).contains(r#""base_samples":"independent""#),
            "{}",
            json(&with("independent"))
        );
        let bad = serde_json::from_str::<Box<dyn PolicySpec>>(&with("sobol"))
            .err()
            .unwrap_or_else(|| panic!("{plain}: `sobol` accepted"))
            .to_string();
        assert!(
            bad.contains("independent") && bad.contains("shared_sobol"),
            "{plain}: {bad}"
        );
    }
}

/// A checkpoint taken after a decision restores the budget schedule and the warm-start tree:
/// a fresh policy restored from it makes the next decision exactly as the policy that never
/// stopped (same point, scheduled budget, refill and acquisition value, bit for bit), and
/// the two end in the same state. B-MS-EI's schedule shows the state matters: a policy not
/// restored rolls out again where the restored one refills.
#[test]
fn a_restored_policy_decides_as_the_one_that_never_stopped() {
    let info = ProblemInfo::continuous("test", 2);
    let ctx = cabo_core::BuildContext {
        problem: &info,
        seed: 1,
    };
    for s in [
        r#"{"type":"bmsei","fantasies":[2,2]}"#,
        r#"{"type":"ms_ei","fantasies":[2]}"#,
    ] {
        let sp = spec(s);
        let mut run = Run::new(2, cost_budget(1000.0));
        let mut straight = sp.build(&ctx).unwrap();
        let x = run.decide(straight.as_mut(), 3).unwrap();
        let state = straight
            .checkpoint()
            .unwrap()
            .expect("tree policies keep state");
        let cheap = 1e-3;
        run.data
            .push(Observation {
                query: Query::at(x.clone()),
                outcome: Outcome::new(0.4, cheap, x, None),
                phase: Phase::Policy,
            })
            .unwrap();
        run.budget.charge(cheap);
        let mut restored = sp.build(&ctx).unwrap();
        restored.restore(&state).unwrap();
        let mut fresh = sp.build(&ctx).unwrap();
        let a = run.decide(straight.as_mut(), 4).unwrap();
        let b = run.decide(restored.as_mut(), 4).unwrap();
        let c = run.decide(fresh.as_mut(), 4).unwrap();
        let (da, db, dc) = (
            straight.diagnostics(),
            restored.diagnostics(),
            fresh.diagnostics(),
        );
        assert_eq!(a, b, "{s}");
        assert_eq!(da, db, "{s}");
        if s.contains("bmsei") {
            assert_eq!(
                db["budget_rollout"], 0.0,
                "{s}: the restored schedule refills"
            );
            assert_eq!(dc["budget_rollout"], 1.0, "{s}: a fresh one rolls out");
        }
        assert!(da.contains_key("warm_start_won"), "{s}: {da:?}");
        assert_eq!(
            straight.checkpoint().unwrap(),
            restored.checkpoint().unwrap(),
            "{s}"
        );
        if s.contains("bmsei") {
            assert!(a != c || da != dc, "{s}: the state made no difference");
        }
    }
}
