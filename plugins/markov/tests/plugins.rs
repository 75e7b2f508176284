//! The cabo plugins driven the way the generic runner drives them, bad input, and the
//! experiment sweeps on a coarse grid.

use cabo_core::{
    Budget, BudgetState, BuildContext, Dataset, Decision, DecisionContext, Domain, Observation,
    OptimizerSettings, Phase, PolicySpec, ProblemSpec,
};
use cabo_markov::experiment::{SweepConfig, figure_5_2, figure_5_3};
use cabo_markov::plugins::MarkovPath;
use cabo_markov::{Grid, Prior, Reward, Setup, Solution, SolveOptions};

const PROBLEM: &str = r#"{"type": "markov_path", "prior": {"type": "brownian", "scale": 1.0},
    "x_levels": 9, "y_levels": 21, "y_min": -2.5, "y_max": 2.5, "cost": 0.01}"#;

fn run(policy_json: &str, seed: u64) -> (Vec<usize>, String, f64) {
    let spec: Box<dyn ProblemSpec> = serde_json::from_str(PROBLEM).unwrap();
    assert_eq!(spec.dim().unwrap(), 1);
    let problem = spec.build(seed).unwrap();
    let pol: Box<dyn PolicySpec> = serde_json::from_str(policy_json).unwrap();
    pol.validate(1).unwrap();
    let mut policy = pol
        .build(&BuildContext {
            problem: problem.info(),
            seed: 1,
        })
        .unwrap();
    let mut data = Dataset::new(1);
    let budget = BudgetState::new(Budget {
        cost: None,
        iterations: Some(50),
    });
    let opt = OptimizerSettings::default();
    let mut sampled = Vec::new();
    for it in 1..=50 {
        let decision = {
            let ctx = DecisionContext::new(problem.info(), &data, &budget, it, 7, &opt);
            policy.decide(&ctx).unwrap()
        };
        match decision {
            Decision::Evaluate(q) => {
                let out = problem.evaluate(&q, 0).unwrap();
                sampled.push((q.x[0] * 8.0).round() as usize);
                let obs = Observation {
                    query: q,
                    outcome: out,
                    phase: Phase::Policy,
                };
                data.push(obs.clone()).unwrap();
                policy.observe(&data, &obs).unwrap();
            }
            Decision::Stop(reason) => {
                let m = problem.metrics(data.observations());
                // What the spec declares (and `report:` is checked against) is what it records.
                let recorded: Vec<&String> = m.keys().collect();
                let declared = spec.metric_names();
                assert_eq!(recorded, declared.iter().collect::<Vec<_>>());
                return (sampled, reason, m["net_value"]);
            }
        }
    }
    panic!("policy never stopped");
}

/// The problem as the runner sees it: a finite domain of the grid's points, the endpoints
/// at their known value, off-grid queries refused.
#[test]
fn the_problem_is_the_grid_with_its_endpoints_known() {
    let spec: Box<dyn ProblemSpec> = serde_json::from_str(PROBLEM).unwrap();
    let problem = spec.build(4).unwrap();
    match &problem.info().domain {
        Domain::Finite(points) => assert_eq!(points.len(), 9),
        other => panic!("expected a finite domain, got {other:?}"),
    }
    // Endpoints are the known Y(0) = Y(1) = 0; off-grid queries are rejected.
    assert_eq!(
        problem
            .evaluate(&cabo_core::Query::at(vec![0.0]), 0)
            .unwrap()
            .y,
        0.0
    );
    assert_eq!(
        problem
            .evaluate(&cabo_core::Query::at(vec![1.0]), 0)
            .unwrap()
            .y,
        0.0
    );
    assert!(
        problem
            .evaluate(&cabo_core::Query::at(vec![0.3]), 0)
            .is_err()
    );
    assert!(
        problem
            .evaluate(&cabo_core::Query::at(vec![0.5, 0.5]), 0)
            .is_err()
    );
    let path = problem
        .as_any()
        .downcast_ref::<MarkovPath>()
        .unwrap()
        .path();
    assert_eq!(path.len(), 9);
}

/// Driven like the runner drives them, averaged over replications, the DP policy's net
/// value tracks V and one-step lookahead's does no better.
#[test]
fn the_dp_policy_tracks_v_and_one_step_does_no_better() {
    let setup = Setup {
        prior: Prior::Brownian { scale: 1.0 },
        reward: Reward::Indicator { threshold: 0.0 },
        grid: Grid {
            length: 1.0,
            x_levels: 9,
            y_min: -2.5,
            y_max: 2.5,
            y_levels: 21,
        },
        cost: 0.01,
    };
    let v = Solution::solve(&setup, &SolveOptions::default())
        .unwrap()
        .initial_value(0.0, 0.0)
        .unwrap();
    let (mut dp_sum, mut os_sum) = (0.0, 0.0);
    let reps = 300;
    for seed in 0..reps {
        let (samples, reason, net) = run(r#"{"type": "markov_dp"}"#, seed);
        assert!(!samples.is_empty());
        assert!(reason.contains("stopping reward"));
        dp_sum += net;
        let (_, _, net1) = run(r#"{"type": "markov_one_step"}"#, seed);
        os_sum += net1;
    }
    let (dp_mean, os_mean) = (dp_sum / reps as f64, os_sum / reps as f64);
    // Paths come from a left-to-right bridge and policies see them exactly, so this is a
    // loose check (the value's spread over paths is about 0.1, so 4 SE ≈ 0.025).
    assert!(
        (dp_mean - v).abs() < 0.03,
        "DP mean net value {dp_mean} vs V {v}"
    );
    assert!(
        os_mean <= dp_mean + 0.03,
        "one-step {os_mean} vs DP {dp_mean}"
    );
}

#[test]
fn a_fixed_budget_takes_exactly_that_many_samples() {
    let (samples, reason, _) = run(r#"{"type": "markov_one_step", "samples": 3}"#, 2);
    assert_eq!(samples.len(), 3);
    assert!(reason.contains("3 samples"));
}

#[test]
fn bad_input_is_a_clear_error() {
    let bad = [
        (
            r#"{"type": "markov_path", "prior": {"type": "brownian", "scale": -1.0}, "x_levels": 9, "y_levels": 21, "y_min": -2.5, "y_max": 2.5, "cost": 0.01}"#,
            "scale",
        ),
        (
            r#"{"type": "markov_path", "prior": {"type": "brownian", "scale": 1.0}, "x_levels": 1, "y_levels": 21, "y_min": -2.5, "y_max": 2.5, "cost": 0.01}"#,
            "x_levels",
        ),
        (
            r#"{"type": "markov_path", "prior": {"type": "brownian", "scale": 1.0}, "x_levels": 9, "y_levels": 21, "y_min": 2.5, "y_max": -2.5, "cost": 0.01}"#,
            "y_min",
        ),
        (
            r#"{"type": "markov_path", "prior": {"type": "brownian", "scale": 1.0}, "x_levels": 9, "y_levels": 21, "y_min": -2.5, "y_max": 2.5, "cost": -1.0}"#,
            "cost",
        ),
        (
            r#"{"type": "markov_path", "prior": {"type": "brownian", "scale": 1.0}, "x_levels": 9, "y_levels": 21, "y_min": -2.5, "y_max": 2.5, "cost": 0.01, "y_start": 0.1}"#,
            "y_start",
        ),
        (
            r#"{"type": "markov_path", "prior": {"type": "compound_poisson", "rate": 0.0}, "x_levels": 9, "y_levels": 21, "y_min": -2.5, "y_max": 2.5, "cost": 0.01}"#,
            "rate",
        ),
        (
            r#"{"type": "markov_path", "prior": {"type": "brownian", "scale": 1.0}, "reward": {"type": "truncated_linear", "threshold": 0.0, "clip": 0.0}, "x_levels": 9, "y_levels": 21, "y_min": -2.5, "y_max": 2.5, "cost": 0.01}"#,
            "clip",
        ),
    ];
    for (json, word) in bad {
        let spec: Box<dyn ProblemSpec> = serde_json::from_str(json).unwrap();
        let err = spec.dim().unwrap_err().to_string();
        assert!(err.contains(word), "{err} should mention {word}");
        assert!(spec.build(0).is_err());
    }
    // Unknown keys are rejected at parse time.
    assert!(serde_json::from_str::<Box<dyn ProblemSpec>>(
        r#"{"type": "markov_path", "prior": {"type": "brownian", "scale": 1.0, "sigma": 2}, "x_levels": 9, "y_levels": 21, "y_min": -2.5, "y_max": 2.5, "cost": 0.01}"#
    )
    .is_err());
    assert!(
        serde_json::from_str::<Box<dyn PolicySpec>>(r#"{"type": "markov_dp", "depth": 2}"#)
            .is_err()
    );
    // The policies need the markov_path problem.
    let pol: Box<dyn PolicySpec> = serde_json::from_str(r#"{"type": "markov_dp"}"#).unwrap();
    let info = cabo_core::ProblemInfo::continuous("other", 1);
    let err = pol
        .build(&BuildContext {
            problem: &info,
            seed: 0,
        })
        .err()
        .unwrap();
    assert!(err.to_string().contains("markov_path"));
    assert!(pol.validate(2).is_err());
    // Monte Carlo and budgets reject nonsense.
    let s = SweepConfig::smoke().setup(&Prior::Brownian { scale: 1.0 }, 0.01);
    let sol = Solution::solve(&s, &SolveOptions::default()).unwrap();
    assert!(
        sol.monte_carlo(cabo_markov::PolicyRule::Optimal, 0.0, 0.0, 1, 0)
            .is_err()
    );
    assert!(
        sol.monte_carlo(cabo_markov::PolicyRule::Optimal, 0.05, 0.0, 10, 0)
            .is_err()
    );
    let mut curve = cabo_markov::budget::CostValueCurve::new(&s, 0.0, 0.0).unwrap();
    assert!(curve.expected_budget_value(-1.0, 1e-3).is_err());
}

#[test]
fn experiment_sweeps_produce_consistent_figures() {
    let cfg = SweepConfig::smoke();
    let f52 = figure_5_2(&cfg).unwrap();
    assert_eq!(f52.points.len(), 2 * cfg.costs.len());
    for p in &f52.points {
        // The simulated optimal policy estimates V; one-step cannot beat it.
        assert!(
            (p.optimal.mean_value - p.dp_value).abs() < 3.5 * p.optimal.se_value,
            "{} c={}: {} ± {} vs V {}",
            p.prior,
            p.cost,
            p.optimal.mean_value,
            p.optimal.se_value,
            p.dp_value
        );
        assert!(p.one_step.mean_value <= p.dp_value + 3.5 * p.one_step.se_value);
        println!(
            "{:>16} c = {:<6} V = {:.5}  optimal {:.5} ± {:.5}  one-step {:.5} ± {:.5}  ratio {:.4}",
            p.prior,
            p.cost,
            p.dp_value,
            p.optimal.mean_value,
            p.optimal.se_value,
            p.one_step.mean_value,
            p.one_step.se_value,
            p.one_step_ratio
        );
    }
    // Values fall with cost.
    for w in f52.points.windows(2) {
        if w[0].prior == w[1].prior {
            assert!(w[1].dp_value <= w[0].dp_value);
        }
    }
    let f53 = figure_5_3(&cfg).unwrap();
    let mut prev = f64::NEG_INFINITY;
    for p in &f53.points {
        // V₁ rises with T, and the one-step fixed-budget reward lies below it (the band).
        assert!(p.v1 >= prev - 1e-12);
        prev = p.v1;
        assert!(p.v2_lower.mean_reward <= p.v1 + 3.5 * p.v2_lower.se_reward);
        println!(
            "T = {}: V1 = {:.5} (λ = {:.5}), one-step exactly T: {:.5} ± {:.5}",
            p.samples, p.v1, p.lambda, p.v2_lower.mean_reward, p.v2_lower.se_reward
        );
    }
    serde_json::to_string(&f52).unwrap();
    serde_json::to_string(&f53).unwrap();
}

/// The paper-scale sweep (100 × 101 grid, 100 000 runs per policy and cost; Figure 5.3 on a
/// 50 × 51 grid): minutes, so run on demand with `cargo test --release -- --ignored`.
#[test]
#[ignore]
fn paper_claim_one_step_within_98_percent() {
    let cfg = SweepConfig::paper();
    let f52 = figure_5_2(&cfg).unwrap();
    let mut worst: f64 = 1.0;
    for p in &f52.points {
        println!(
            "{:>16} c = {:<6} V = {:.5}  optimal {:.5} ± {:.5}  one-step {:.5} ± {:.5}  ratio {:.4}  (solve {:.1} s, {:.1} MiB)",
            p.prior,
            p.cost,
            p.dp_value,
            p.optimal.mean_value,
            p.optimal.se_value,
            p.one_step.mean_value,
            p.one_step.se_value,
            p.one_step_ratio,
            p.solve_seconds,
            p.peak_bytes as f64 / 1048576.0
        );
        assert!((p.optimal.mean_value - p.dp_value).abs() < 4.0 * p.optimal.se_value);
        worst = worst.min(p.one_step_ratio);
    }
    println!("worst one-step / optimal ratio: {worst:.4}");
    let cfg53 = SweepConfig {
        x_levels: 50,
        y_levels: 51,
        lambda_tol: 1e-4,
        ..SweepConfig::paper()
    };
    let f53 = figure_5_3(&cfg53).unwrap();
    for p in &f53.points {
        println!(
            "T = {:>2}: V1 = {:.5} (λ = {:.5}), one-step exactly T: {:.5} ± {:.5}",
            p.samples, p.v1, p.lambda, p.v2_lower.mean_reward, p.v2_lower.se_reward
        );
    }
    assert!(worst >= 0.98, "one-step reached only {worst:.4} of optimal");
}

#[test]
fn native_to_unit_inverts_to_native() {
    let json = PROBLEM.replace(r#""cost": 0.01"#, r#""cost": 0.01, "length": 3.0"#);
    let spec: Box<dyn ProblemSpec> = serde_json::from_str(&json).unwrap();
    let problem = spec.build(0).unwrap();
    assert_eq!(problem.to_native(&[1.0]), vec![3.0]);
    assert_eq!(problem.native_to_unit(&[3.0]), vec![1.0]);
    for i in 0..=300 {
        let z = 3.0 * f64::from(i) / 300.0;
        let back = problem.to_native(&problem.native_to_unit(&[z]))[0];
        assert!((back - z).abs() <= 1e-12 * 3.0, "{z} → {back}");
        let u = f64::from(i) / 300.0;
        let again = problem.native_to_unit(&problem.to_native(&[u]))[0];
        assert!((again - u).abs() <= 1e-12, "{u} → {again}");
    }
}
