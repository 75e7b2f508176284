//! Random search: determinism, range, finite domains, spec parsing and bad input.

use cabo_core::{
    Budget, BudgetState, BuildContext, Dataset, Decision, DecisionContext, Domain,
    OptimizerSettings, PolicySpec, ProblemInfo,
};

fn decide(problem: &ProblemInfo, seed: u64) -> cabo_core::Result<Decision> {
    let data = Dataset::new(problem.dim);
    let budget = BudgetState::new(Budget {
        cost: None,
        iterations: Some(10),
    });
    let opt = OptimizerSettings::default();
    let ctx = DecisionContext::new(problem, &data, &budget, 1, seed, &opt);
    cabo_baselines::plugins();
    let spec: Box<dyn PolicySpec> = serde_json::from_str(r#"{"type":"random_search"}"#).unwrap();
    let mut policy = spec.build(&BuildContext { problem, seed: 0 })?;
    policy.decide(&ctx)
}

fn point(d: Decision) -> Vec<f64> {
    match d {
        Decision::Evaluate(q) => {
            assert_eq!(q.control_set, None);
            q.x
        }
        Decision::Stop(r) => panic!("random search stopped: {r}"),
    }
}

#[test]
fn continuous_points_are_in_the_cube_deterministic_and_uniform() {
    let problem = ProblemInfo::continuous("cube", 3);
    let a = point(decide(&problem, 11).unwrap());
    let b = point(decide(&problem, 11).unwrap());
    let c = point(decide(&problem, 12).unwrap());
    assert_eq!(a.len(), 3);
    assert_eq!(a, b, "same seed, same point");
    assert_ne!(a, c, "different seeds, different points");
    // Mean and variance of 3·2000 coordinates against U(0,1): mean 1/2 (sd 0.0037), var 1/12.
    let n = 2000;
    let (mut s1, mut s2, mut m) = (0.0, 0.0, 0usize);
    for seed in 0..n {
        for v in point(decide(&problem, seed).unwrap()) {
            assert!((0.0..1.0).contains(&v));
            s1 += v;
            s2 += v * v;
            m += 1;
        }
    }
    let mean = s1 / m as f64;
    let var = s2 / m as f64 - mean * mean;
    assert!(
        (mean - 0.5).abs() < 4.0 * (1.0f64 / 12.0 / m as f64).sqrt(),
        "mean {mean}"
    );
    assert!((var - 1.0 / 12.0).abs() < 0.005, "var {var}");
}

#[test]
fn finite_domains_pick_each_candidate_uniformly() {
    let candidates = vec![vec![0.1, 0.2], vec![0.3, 0.4], vec![0.9, 0.0]];
    let mut problem = ProblemInfo::continuous("finite", 2);
    problem.domain = Domain::Finite(candidates.clone());
    let mut counts = [0usize; 3];
    let n = 3000;
    for seed in 0..n {
        let x = point(decide(&problem, seed).unwrap());
        let i = candidates
            .iter()
            .position(|c| *c == x)
            .expect("a candidate");
        counts[i] += 1;
    }
    // Binomial(3000, 1/3): sd ≈ 25.8; allow 4 sd.
    for c in counts {
        assert!((c as f64 - 1000.0).abs() < 4.0 * 25.9, "{counts:?}");
    }
}

#[test]
fn empty_domains_are_clear_errors() {
    let mut empty = ProblemInfo::continuous("finite", 2);
    empty.domain = Domain::Finite(vec![]);
    let e = decide(&empty, 1).unwrap_err().to_string();
    assert!(e.contains("no candidates"), "{e}");
    let zero = ProblemInfo::continuous("nothing", 0);
    let e = decide(&zero, 1).unwrap_err().to_string();
    assert!(e.contains("dimension 0"), "{e}");
}

#[test]
fn unknown_spec_fields_are_rejected() {
    cabo_baselines::plugins();
    let r = serde_json::from_str::<Box<dyn PolicySpec>>(r#"{"type":"random_search","seed":3}"#);
    assert!(r.unwrap_err().to_string().contains("unknown field"));
    let r = serde_json::from_str::<Box<dyn PolicySpec>>(r#"{"type":"random_search","seed":3}"#);
    assert!(r.is_err());
}
