//! The metric names `cvs` declares (checked against `report:` before a run) are exactly the
//! ones it records, so the declaration cannot drift from `Problem::metrics`.

use cabo_core::{Dataset, Observation, Phase, ProblemSpec, Query};
use cabo_cvs as _;
use std::collections::BTreeSet;

#[test]
fn declared_metric_names_equal_the_recorded_ones() {
    let spec: Box<dyn ProblemSpec> = serde_json::from_str(
        r#"{"type": "cvs", "objective": {"type": "hartmann3"}, "control_sets": [[0], [0, 1, 2]],
            "costs": [0.1, 1.0], "distribution": {"type": "truncated_normal", "variance": 0.02}}"#,
    )
    .unwrap();
    cabo_benchmarks::plugins(); // hartmann3
    let problem = spec.build(3).unwrap();
    let mut data = Dataset::new(3);
    for (i, set) in [Some(0), Some(1)].into_iter().enumerate() {
        let query = Query {
            control_set: set,
            x: vec![0.2 + 0.3 * i as f64; 3],
        };
        let outcome = problem.evaluate(&query, i as u64).unwrap();
        let obs = Observation {
            query,
            outcome,
            phase: Phase::Policy,
        };
        data.push(obs).unwrap();
    }
    let recorded: BTreeSet<String> = problem.metrics(data.observations()).into_keys().collect();
    let declared: BTreeSet<String> = spec.metric_names().into_iter().collect();
    assert_eq!(recorded, declared);
}
