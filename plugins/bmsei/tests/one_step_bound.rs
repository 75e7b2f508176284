//! The tree's optimum is never below the one-step optimum.
//!
//! Every node of a B-MS-EI tree contributes a non-negative budgeted one-step value Q₁, and
//! the root's contribution is Q₁ at the root point, so `max Q̂_N ≥ max_x Q₁(x | D, B)` for
//! any base samples. The instance is a decision from an Alpine-1 run with a random cosine
//! cost (25 observations): the scheduled budget affords about one more evaluation, so the
//! tree is worth little more than Q₁ at its root, and Q₁ is large only near the incumbent,
//! a region that random starts in the tree's 159-dimensional space rarely reach.

use cabo_core::{
    AcquisitionSpec, Budget, BudgetState, BuildContext, CostModelSpec, Dataset, Decision,
    DecisionContext, ModelSpec, Observation, OptimizerSettings, ProblemInfo,
};
use cabo_optim::maximize_acquisition;
use std::cell::RefCell;

/// (x, y, cost) of the first 25 evaluations of `bmsei-alpine1-cosine`, 4-B-MS-EI,
/// replication 0 (8 initial points, then 17 decisions).
const DATA: [([f64; 3], f64, f64); 25] = [
    (
        [0.6217208486050367, 0.7012089439667761, 0.07032063091173768],
        -10.019869731873474,
        0.9362665801320824,
    ),
    (
        [0.2018710202537477, 0.25213007465936244, 0.7077011507935822],
        -10.88811558464953,
        1.606614704321416,
    ),
    (
        [0.3694062177091837, 0.9861037821974605, 0.4075157765764743],
        -4.52756604650107,
        0.9337357107039762,
    ),
    (
        [0.9456433444283903, 0.06043585855513811, 0.8104493201244622],
        -9.7428306274682,
        0.6802101764071449,
    ),
    (
        [0.8053435413166881, 0.8057216587476432, 0.5528515970800072],
        -1.9022356824708182,
        1.0696502996637163,
    ),
    (
        [0.3854708527214825, 0.2394134469795972, 0.16669856407679617],
        -8.4134334112287,
        1.1722509209759024,
    ),
    (
        [0.060829258523881435, 0.5066055960487574, 0.9681064463220537],
        -5.92964403840076,
        0.4521204731781141,
    ),
    (
        [0.637058783788234, 0.44813649728894234, 0.31638703076168895],
        -4.357804214585838,
        1.1764656888174074,
    ),
    (
        [0.780484187376411, 0.7247521741803604, 0.47019080705175975],
        -7.152859325882828,
        1.3394800199478014,
    ),
    (
        [0.8208188580193241, 0.8439380542714351, 0.621818660169774],
        -7.8633803382139735,
        1.0894501601976312,
    ),
    (
        [0.7444055751326695, 0.898925743952916, 0.5440645037069236],
        -13.806701933650606,
        0.8427124165392856,
    ),
    (
        [0.9133644929190802, 0.7873991988450606, 0.5751076018937566],
        -12.403473947908482,
        0.8115525012388594,
    ),
    (
        [0.7787414759872096, 0.7926242496902124, 0.5333872812804102],
        -5.407883729603004,
        1.1686741321353897,
    ),
    (
        [0.8081762936768377, 0.8848052699548639, 0.5124850316404082],
        -8.57608986075752,
        0.7682648516264114,
    ),
    (
        [0.8081421997675655, 0.7972424600631398, 0.44318028961427414],
        -2.419497578281896,
        1.2386349878496385,
    ),
    (
        [0.8033389770498097, 0.7813619770648905, 0.5888891207464545],
        -5.482978278493594,
        1.263895704713342,
    ),
    (
        [0.8098573241186967, 0.8103265906286916, 0.43152704301209543],
        -1.4373938533092991,
        1.2334099790309117,
    ),
    (
        [0.052389869101167164, 0.5623309888464297, 0.973322926686967],
        -5.038193325465251,
        0.47927195856140087,
    ),
    (
        [0.46138299342015365, 1.0, 0.4344508938098002],
        -6.037810710338022,
        0.6164238117607787,
    ),
    (
        [0.0, 0.5370581737638143, 0.9807116497603444],
        -7.863886202336764,
        0.5424443474443997,
    ),
    (
        [0.11362768750346051, 0.5476463924829976, 0.9800733881035162],
        -8.492481193780575,
        0.4647063042043403,
    ),
    (
        [0.0884323618462754, 0.4485262506378093, 1.0],
        -12.04858402434328,
        0.531834365038396,
    ),
    (
        [0.4227745449095734, 0.968040645006085, 0.4364345703351184],
        -4.011551534713898,
        0.6687448493825799,
    ),
    (
        [0.7989711259715441, 0.8123748742588823, 0.3704978850997951],
        -2.6906167358977955,
        1.597212993830756,
    ),
    (
        [0.4174238693740642, 0.9725315335022983, 0.5737310956704277],
        -3.797027470930783,
        0.6155939526673548,
    ),
];

/// The budget the run's schedule gave the 18th decision.
const LEFT: f64 = 1.372396626586936;

const GP: &str = r#"{"type":"exact_gp","kernel":{"type":"matern52"},"fit":"map","prior":"gamma",
    "noise":{"min":1e-4,"max":1e-3},"standardize":true}"#;
const LOG_GP: &str = r#"{"type":"log_gp","kernel":{"type":"matern52"},"fit":"map","prior":"gamma",
    "noise":{"min":1e-4,"max":1e-3},"standardize":true}"#;

#[test]
fn the_tree_optimum_is_at_least_the_one_step_optimum() {
    cabo_gp::plugins();
    cabo_bmsei::plugins();
    let d = 3;
    let info = ProblemInfo::continuous("alpine1", d);
    let build = BuildContext {
        problem: &info,
        seed: 0,
    };
    let mut data = Dataset::new(d);
    for (x, y, c) in DATA {
        data.push(Observation::initial(x.to_vec(), y, c)).unwrap();
    }
    let model_spec: Box<dyn ModelSpec> = serde_json::from_str(GP).unwrap();
    let cost_spec: Box<dyn CostModelSpec> = serde_json::from_str(LOG_GP).unwrap();
    let model = RefCell::new(model_spec.build(&build).unwrap());
    let cost = RefCell::new(cost_spec.build(&build).unwrap());
    let mut budget = BudgetState::new(Budget {
        cost: Some(60.0),
        iterations: None,
    });
    budget.spent = 60.0 - LEFT;
    // The spec's optimiser: 200·d raw samples, 10·d restarts.
    let settings = OptimizerSettings {
        raw_samples: 600,
        restarts: 30,
        max_iters: 200,
    };
    let ctx = |seed| {
        DecisionContext::new(&info, &data, &budget, 18, seed, &settings)
            .with_models(Some(&model), Some(&cost))
    };

    // max_x Q₁(x | D, B) by a thorough search over the cube: Q₁ has many local maxima, so
    // the best of several large multi-starts.
    let q1_spec: Box<dyn AcquisitionSpec> = serde_json::from_str(&format!(
        r#"{{"type":"budgeted_ei","fixed_budget":{LEFT}}}"#
    ))
    .unwrap();
    let q1 = q1_spec.build(&build).unwrap();
    let thorough = OptimizerSettings {
        raw_samples: 4000,
        restarts: 40,
        max_iters: 500,
    };
    let c0 = ctx(0);
    let f = q1.prepare(&c0).unwrap();
    let one_step = (0..4)
        .map(|s| maximize_acquisition(f.as_ref(), &info, &thorough, s).unwrap())
        .max_by(|a, b| a.value.total_cmp(&b.value))
        .unwrap();
    assert!(one_step.value > 0.2, "max Q1 = {}", one_step.value);

    let spec: Box<dyn cabo_core::PolicySpec> =
        serde_json::from_str(r#"{"type":"bmsei","fantasies":[4,4,2],"budget":"remaining"}"#)
            .unwrap();
    for seed in 0..4u64 {
        let mut policy = spec.build(&build).unwrap();
        let c = ctx(seed);
        let Decision::Evaluate(_) = policy.decide(&c).unwrap() else {
            panic!("the policy stopped");
        };
        let tree = policy.diagnostics()["acq_value"];
        assert!(
            tree >= one_step.value * (1.0 - 1e-6),
            "seed {seed}: the tree's optimum {tree} is below max Q1 = {}",
            one_step.value
        );
    }
}
