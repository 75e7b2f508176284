//! `cargo xtask inspect` on a scenario tree, through the real binary: the documented example
//! `docs/inspect-tree.yaml` reports every node in the documented order, the base samples it
//! was given, and the value the tree itself computes for the same data, points and samples.

mod common;

use cabo::bmsei::{BaseSampleScheme, BudgetMode, TreeLookahead, Variant};
use cabo::core::{
    Budget, BudgetState, Dataset, DecisionContext, Objective, Observation, OptimizerSettings,
    ProblemInfo, TrainingData, TreeShape,
};
use cabo::gp::cost::LogGpBelief;
use cabo::gp::{GpPosterior, Kernel, KernelKind, OutputTransform};
use cabo::runner::inspect::InspectInput;
use common::{workspace_root, xtask};
use serde_json::Value;

const EXAMPLE: &str = "docs/inspect-tree.yaml";

/// The example's report, from the binary.
fn report() -> Value {
    let out = xtask(&["inspect", EXAMPLE]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "inspect failed:\n{stderr}");
    serde_json::from_slice(&out.stdout).expect("inspect prints JSON")
}

/// The example's input, read as `inspect` reads it.
fn input() -> InspectInput {
    cabo::init().unwrap();
    let path = workspace_root().join(EXAMPLE);
    let text = std::fs::read_to_string(&path).unwrap();
    cabo_spec::error::parse_yaml(&path, &text).unwrap()
}

fn numbers(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

/// Nodes in breadth-first order with their stage, path, weight and point; a gradient per
/// coordinate; base samples as given; the value the weighted sum of the node terms.
#[test]
fn the_example_reports_every_node_in_the_documented_order() {
    let input = input();
    let tree = input.lookahead.as_ref().unwrap();
    let report = report();
    let l = &report["lookahead"];
    assert_eq!(l["policy"], "bmsei");
    assert_eq!(l["fantasies"], serde_json::json!([2, 2]));
    let nodes = l["nodes"].as_array().unwrap();
    let paths: [&[usize]; 7] = [&[], &[0], &[1], &[0, 0], &[0, 1], &[1, 0], &[1, 1]];
    assert_eq!(nodes.len(), paths.len());
    let mut sum = 0.0;
    for (i, (node, path)) in nodes.iter().zip(paths).enumerate() {
        assert_eq!(node["path"], serde_json::json!(path), "node {i}");
        assert_eq!(node["stage"], path.len(), "node {i}");
        let weight = node["weight"].as_f64().unwrap();
        assert_eq!(weight, 0.5f64.powi(path.len() as i32), "node {i}");
        assert_eq!(numbers(&node["x"]), tree.nodes[i], "node {i}");
        assert_eq!(numbers(&node["gradient"]).len(), 2, "node {i}");
        assert_eq!(node.get("base_sample").is_some(), i > 0, "node {i}");
        sum += weight * node["term"].as_f64().unwrap();
    }
    let value = l["value"].as_f64().unwrap();
    assert!((sum - value).abs() <= 1e-15, "{sum} vs {value}");
    let given: Value = serde_json::to_value(tree.base_samples.as_ref().unwrap()).unwrap();
    assert_eq!(l["base_samples"], given);
    // Node [1, 0]'s sample is stage 2's shared first entry.
    assert_eq!(nodes[5]["base_sample"], given[1][0]);
    assert_eq!(l["inputs"]["budget"].as_f64().unwrap(), 8.0 - 3.1);
    assert_eq!(l["inputs"]["incumbent"].as_f64().unwrap(), 0.84642);
}

/// The binary's value and root gradient equal, to 1e-12 relative, the tree built directly
/// from GP posteriors with the hyperparameters the example states.
#[test]
fn the_example_value_is_the_trees() {
    let input = input();
    let tree = input.lookahead.as_ref().unwrap();
    let data = &input.data;
    let costs = data.cost.as_ref().unwrap();
    let ln_c: Vec<f64> = costs.iter().map(|c| c.ln()).collect();
    let gp = |y: &[f64], ls: [f64; 2], outputscale: f64, noise: f64, mean: f64| {
        let kernel = Kernel::new(KernelKind::Rbf, ls.to_vec(), outputscale).unwrap();
        let x = data.x.concat();
        let training = TrainingData { x: &x, y, dim: 2 };
        GpPosterior::new(kernel, noise, mean, training, OutputTransform::IDENTITY).unwrap()
    };
    let mut set = Dataset::new(2);
    for ((x, y), c) in data.x.iter().zip(&data.y).zip(costs) {
        set.push(Observation::initial(x.clone(), *y, *c)).unwrap();
    }
    let info = ProblemInfo::continuous("example", 2);
    let mut budget = BudgetState::new(Budget {
        cost: Some(8.0),
        iterations: None,
    });
    budget.spent = 3.1;
    let settings = OptimizerSettings::default();
    let belief = LogGpBelief {
        posterior: gp(&ln_c, [0.5, 0.6], 0.3, 1e-4, 0.0),
    };
    let ctx = DecisionContext::new(&info, &set, &budget, 1, 0, &settings)
        .with_posterior(Box::new(gp(&data.y, [0.3, 0.4], 1.2, 1e-3, 0.1)))
        .with_cost_belief(Box::new(belief));
    let shape = TreeShape::new(&[2, 2]);
    let samples = shape.per_node(tree.base_samples.as_ref().unwrap()).unwrap();
    let variant = Variant::Bmsei(BudgetMode::Remaining);
    let scheme = BaseSampleScheme::Independent;
    let direct = TreeLookahead::new(&ctx, variant, &[2, 2], scheme, Some(&samples)).unwrap();
    let xs = tree.nodes.concat();
    let mut grad = vec![0.0; xs.len()];
    let want = direct.value_grad(&xs, &mut grad);
    let report = report();
    let got = report["lookahead"]["value"].as_f64().unwrap();
    assert!((got - want).abs() <= 1e-12 * want, "{got} vs {want}");
    let root = numbers(&report["lookahead"]["nodes"][0]["gradient"]);
    for (g, w) in root.iter().zip(&grad[..2]) {
        assert!((g - w).abs() <= 1e-12 * w.abs(), "root gradient {g} vs {w}");
    }
}
