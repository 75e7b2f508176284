//! The Figure 5.1 study against the value functions: every sample/stop decision of the
//! optimal policy is recomputed from the value and reward tables and the grid law of a new
//! observation (sample ⇔ `max_x E[V(H ∪ {x})] − c > R(H)`), the first decision against the
//! symmetries of the problem, and the study's runs and findings against their own data.

use cabo_core::StudySpec;
use cabo_core::study::{Cell, StudyContext};
use cabo_markov::Solution;
use cabo_markov::dp::SolveOptions;
use cabo_markov::policy_map::{PolicyMap, PolicyMapSpec, point_values};

fn spec(x_levels: usize, y_levels: usize, cost: f64) -> PolicyMapSpec {
    serde_json::from_value(serde_json::json!({
        "x_levels": x_levels, "y_levels": y_levels, "cost": cost, "paths": 4
    }))
    .unwrap()
}

#[test]
fn every_decision_is_continuation_above_stopping_recomputed_from_values() {
    for cost in [0.01, 0.05] {
        let s = spec(13, 21, cost);
        let sol = Solution::solve(&s.setup(), &SolveOptions::default()).unwrap();
        let (m, n) = (s.x_levels, s.y_levels);
        let (mut sampled, mut stopped) = (0, 0);
        for d in 1..m {
            for il in 0..n {
                for ir in 0..n {
                    let values = point_values(&sol, 0, d, il, ir);
                    let best = values
                        .iter()
                        .map(|p| p.sample_value)
                        .fold(f64::NEG_INFINITY, f64::max);
                    let r = sol.reward(0, d, il, ir);
                    let v = sol.value(0, d, il, ir);
                    let decision = sol.optimal_sample(0, d, il, ir);
                    if d >= 2 {
                        assert!(
                            (best - sol.continuation(0, d, il, ir)).abs() <= 1e-12,
                            "d {d} ({il}, {ir}): recomputed {best} vs stored {}",
                            sol.continuation(0, d, il, ir)
                        );
                    }
                    assert!((v - best.max(r)).abs() <= 1e-12, "V = max(R, C) fails");
                    match decision {
                        Some(x) => {
                            sampled += 1;
                            assert!(best > r, "samples with C {best} ≤ R {r}");
                            let at_x = values.iter().find(|p| p.x == x).unwrap().sample_value;
                            assert!((at_x - best).abs() <= 1e-12, "x {x} is not a best split");
                        }
                        None => {
                            stopped += 1;
                            assert!(best <= r + 1e-12, "stops with C {best} > R {r}");
                        }
                    }
                }
            }
        }
        // Both decisions must occur for the check to mean anything.
        assert!(
            sampled > 100 && stopped > 100,
            "{sampled} sampled, {stopped} stopped"
        );
    }
}

#[test]
fn first_decision_is_symmetric_and_samples_the_midpoint() {
    let s = spec(17, 25, 0.05);
    let map = PolicyMap::compute(&s, 3).unwrap();
    let fd = &map.first_decision;
    assert_eq!(fd.len(), s.x_levels - 2);
    // Reversal x → 1 − x maps the problem from Y(0) = Y(1) = 0 to itself.
    for (a, b) in fd.iter().zip(fd.iter().rev()) {
        assert!((a.sample_value - b.sample_value).abs() <= 1e-12);
        assert!((a.sample_then_stop - b.sample_then_stop).abs() <= 1e-12);
    }
    let best = fd
        .iter()
        .max_by(|a, b| a.sample_value.total_cmp(&b.sample_value))
        .unwrap();
    assert_eq!(best.x, (s.x_levels - 1) / 2, "first sample not at x = 0.5");
    assert!(best.sample_value > map.stop_reward);
    assert!((map.value - best.sample_value).abs() <= 1e-12);
    // Sampling then acting optimally is worth at least sampling then stopping.
    assert!(
        fd.iter()
            .all(|p| p.sample_value >= p.sample_then_stop - 1e-15)
    );
}

#[test]
fn runs_sample_while_the_margin_is_positive() {
    let s = spec(17, 25, 0.02);
    let map = PolicyMap::compute(&s, 5).unwrap();
    assert_eq!(map.paths.len(), 4);
    for steps in &map.paths {
        let (last, sampling) = steps.split_last().unwrap();
        assert!(last.x.is_none() && last.margin <= 0.0, "stop with {last:?}");
        assert!(!sampling.is_empty(), "the policy never sampled");
        for s in sampling {
            assert!(s.margin > 0.0 && s.attains_max, "{s:?}");
        }
    }
    // The same seed gives the same runs.
    assert_eq!(PolicyMap::compute(&s, 5).unwrap(), map);
}

#[test]
fn study_tables_and_findings_agree_with_the_data() {
    let s = spec(17, 25, 0.05);
    let out = s.run(&StudyContext { seed: 3 }).unwrap();
    let names: Vec<&str> = out.tables.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "figure-5-1-first-decision",
            "figure-5-1-runs",
            "figure-5-1-decisions",
            "figure-5-1-lengths"
        ]
    );
    assert_eq!(out.tables[0].rows.len(), 15);
    assert_eq!(out.tables[2].rows.len(), 25);
    assert_eq!(out.tables[3].rows.len(), 15);
    let first = &out.findings[0];
    assert!(first.contains("x = 0.5 (as the paper states)"), "{first}");
    assert!(
        out.findings[2].contains("form one contiguous"),
        "{}",
        out.findings[2]
    );
    // The decisions table's counts add up to the state count the finding states.
    let total: f64 = out.tables[2]
        .rows
        .iter()
        .map(|r| match r[3] {
            Cell::Number(v) => v,
            _ => panic!("count is a number"),
        })
        .sum();
    assert!(out.findings[2].contains(&format!("samples at {total} of 625")));
}

#[test]
fn bad_parameters_are_named() {
    let cases = [
        (r#"{"x_levels": 2}"#, "x_levels"),
        (r#"{"y_levels": 20}"#, "y_levels"),
        (r#"{"cost": 0}"#, "cost"),
        (r#"{"brownian_half_range": -1}"#, "brownian_half_range"),
    ];
    for (json, key) in cases {
        let s: PolicyMapSpec = serde_json::from_str(json).unwrap();
        let e = s.validate().unwrap_err().to_string();
        assert!(e.contains(key), "{json}: {e}");
    }
    assert!(serde_json::from_str::<PolicyMapSpec>(r#"{"costs": [0.1]}"#).is_err());
}
