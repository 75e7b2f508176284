//! The `cvs` problem publishes the worst value of its objective as [`ValueFloor`], the shift
//! seed 004 applies so that f ≥ 0: checked on Ackley (whose values are negative) against
//! the objective at random points and against every control set's best expected value.

use cabo_core::{Problem, Rng};
use cabo_cvs::problem::ValueFloor;
use cabo_cvs::{CvsProblem, CvsSpec};

#[test]
fn the_published_floor_is_the_objectives_worst_value() {
    cabo_benchmarks::link();
    let spec: CvsSpec = serde_json::from_str(
        r#"{"objective": {"type": "ackley", "dim": 2, "dummy_dims": 1},
            "control_sets": [[0], [0, 1, 2]], "costs": [0.1, 1.0],
            "value_samples": 16, "optimum": {"raw_samples": 64, "restarts": 4, "max_iters": 50}}"#,
    )
    .unwrap();
    let problem = CvsProblem::new(&spec, 3).unwrap();
    let floor = problem
        .info()
        .extension::<ValueFloor>()
        .expect("published")
        .0;
    assert_eq!(floor, problem.optima().worst);
    assert!(
        floor < 0.0,
        "(negated) Ackley has negative values, got {floor}"
    );
    let full = problem.control_sets().len() - 1;
    let mut rng = Rng::new(9);
    for _ in 0..500 {
        let x: Vec<f64> = (0..3).map(|_| rng.uniform()).collect();
        let f = problem.expected_value(full, &x).unwrap();
        assert!(f >= floor - 1e-9, "f({x:?}) = {f} below the floor {floor}");
    }
    for v in &problem.optima().per_set {
        assert!(*v > floor);
    }
}
