//! Every problem, cost function and model this crate registers has an example that parses as
//! its spec, passes validation and builds.

use cabo_core::registry::{Kind, catalogue};
use cabo_core::{BuildContext, CostFunctionSpec, ModelSpec, ProblemSpec, TrainingData};

const BENCHMARK_PROBLEMS: &[&str] = &[
    "ackley",
    "airfoil",
    "alpine1",
    "branin",
    "bump_prior_sample",
    "dropwave",
    "gp_prior_sample",
    "hartmann3",
    "hartmann6",
    "lda",
    "levy",
    "pandora",
    "robot_push",
    "rosenbrock",
    "shekel5",
    "theorem1_arms",
];
const BENCHMARK_COSTS: &[&str] = &["bump_cost", "cosine", "linear_mean", "uniform"];
const BENCHMARK_MODELS: &[&str] = &["bump_scaled_gp"];

#[test]
fn every_registered_example_parses_validates_and_builds() {
    cabo_benchmarks::plugins();
    let all = catalogue();
    // Examples are written as they stand in a spec under `specs/<folder>/`; their relative
    // data paths resolve against that directory, wherever the test runs from.
    let spec_dir = std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../specs/benchmarks"
    ));
    let ackley: Box<dyn ProblemSpec> = serde_saphyr::from_str("{ type: ackley, dim: 3 }").unwrap();
    let host = ackley.build(0).unwrap();
    for name in BENCHMARK_PROBLEMS {
        let info = all
            .iter()
            .find(|p| p.kind == Kind::Problem && p.name == *name)
            .unwrap_or_else(|| panic!("problem {name} is not registered"));
        let mut spec: Box<dyn ProblemSpec> = serde_saphyr::from_str(info.example_yaml)
            .unwrap_or_else(|e| panic!("{name}: example does not parse: {e}"));
        spec.set_spec_dir(spec_dir);
        let d = spec.dim().unwrap_or_else(|e| panic!("{name}: {e}"));
        let p = spec.build(0).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(p.info().dim, d, "{name}");
        assert!(!info.paper.is_empty() && !info.summary.is_empty());
    }
    for name in BENCHMARK_COSTS {
        let info = all
            .iter()
            .find(|p| p.kind == Kind::CostFunction && p.name == *name)
            .unwrap_or_else(|| panic!("cost function {name} is not registered"));
        let spec: Box<dyn CostFunctionSpec> = serde_saphyr::from_str(info.example_yaml)
            .unwrap_or_else(|e| panic!("{name}: example does not parse: {e}"));
        spec.validate(3).unwrap_or_else(|e| panic!("{name}: {e}"));
        let c = spec
            .build(host.as_ref(), 0)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(c.cost(&[0.2, 0.5, 0.9]) > 0.0, "{name}");
    }
}

#[test]
fn every_registered_model_example_builds_and_fits_one_dimensional_data() {
    cabo_benchmarks::plugins();
    let host: Box<dyn ProblemSpec> = serde_saphyr::from_str("{ type: bump_prior_sample }").unwrap();
    let host = host.build(0).unwrap();
    for name in BENCHMARK_MODELS {
        let info = catalogue()
            .into_iter()
            .find(|p| p.kind == Kind::Model && p.name == *name)
            .unwrap_or_else(|| panic!("model {name} is not registered"));
        let spec: Box<dyn ModelSpec> = serde_saphyr::from_str(info.example_yaml)
            .unwrap_or_else(|e| panic!("{name}: example does not parse: {e}"));
        spec.validate(1).unwrap_or_else(|e| panic!("{name}: {e}"));
        let ctx = BuildContext {
            problem: host.info(),
            seed: 0,
        };
        let mut model = spec.build(&ctx).unwrap_or_else(|e| panic!("{name}: {e}"));
        let data = TrainingData {
            dim: 1,
            x: &[0.2, 0.5],
            y: &[0.1, -0.3],
        };
        let post = model.fit(data, 0).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(post.mean_var(&[0.4]).var > 0.0, "{name}");
    }
}
