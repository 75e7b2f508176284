//! Which control sets explore-then-commit UCB-CVS groups, and how many plays each group gets,
//! on the control sets and costs of seed 002's four problems and seed 004's specs.
//!
//! Oracles: seed 002's authors' code hard-codes the exploration groups as the control-set
//! indices [[0, 1, 2], [3, 4, 5]] (sebtsh/bocvs, `core/acquisitions.py` l.35, `ETC_UCB_CVS`)
//! with 50, 100 or `int(4 / c)` plays (l.19-29); seed 004's ETC-50 plays 50 per group of sets
//! with the same number of variables (seed 004, Experiments). The groups are read from the
//! policy's checkpoint (plays left per group) and from its exploring decisions (each in its
//! group, cheapest or smallest group first).

mod common;
use cabo_core::{
    Budget, BudgetState, Dataset, Decision, DecisionContext, Observation, OptimizerSettings,
    Policy, ProblemInfo, Rng, TrainingData,
};
use cabo_gp::{GpPosterior, Kernel, KernelKind, OutputTransform};
use common::{build, problem};

/// Seed 002's airfoil control sets (App. C, 0-based): seven sets of two variables, none full.
fn airfoil_sets() -> Vec<Vec<usize>> {
    vec![
        vec![3, 4],
        vec![1, 4],
        vec![0, 3],
        vec![1, 2],
        vec![2, 4],
        vec![0, 1],
        vec![2, 3],
    ]
}

/// Seed 002's GP-sample and Hartmann control sets: the power set of {0, 1, 2} by size.
fn powerset3() -> Vec<Vec<usize>> {
    vec![
        vec![0],
        vec![1],
        vec![2],
        vec![0, 1],
        vec![0, 2],
        vec![1, 2],
        vec![0, 1, 2],
    ]
}

/// Seed 002's plant control sets (App. C, 0-based).
fn plant_sets() -> Vec<Vec<usize>> {
    vec![
        vec![0, 1],
        vec![2, 3],
        vec![3, 4],
        vec![0, 1, 2],
        vec![1, 2, 3],
        vec![2, 3, 4],
        vec![0, 1, 2, 3, 4],
    ]
}

/// Seed 004's 12-D control sets (Hartmann-6 + 6, Ackley, Levy), 0-based.
fn sets_12d() -> Vec<Vec<usize>> {
    let range = |a: usize, b: usize| (a..b).collect::<Vec<_>>();
    vec![
        range(0, 3),
        range(3, 6),
        range(6, 9),
        range(9, 12),
        range(0, 6),
        range(6, 12),
        range(0, 12),
    ]
}

const CHEAP: [f64; 7] = [0.01, 0.01, 0.01, 0.1, 0.1, 0.1, 1.0];
const MODERATE: [f64; 7] = [0.1, 0.1, 0.1, 0.2, 0.2, 0.2, 1.0];
const EXPENSIVE: [f64; 7] = [0.6, 0.6, 0.6, 0.8, 0.8, 0.8, 1.0];

/// Plays left per group, cheapest (or smallest) group first.
fn plays_left(policy: &dyn Policy) -> Vec<usize> {
    policy
        .checkpoint()
        .unwrap()
        .expect("cvs_etc keeps its plays in its checkpoint")
        .decode("test")
        .unwrap()
}

fn posterior(dim: usize) -> GpPosterior {
    let mut rng = Rng::new(2);
    let mut data = Dataset::new(dim);
    for _ in 0..8 {
        let x: Vec<f64> = (0..dim).map(|_| rng.uniform()).collect();
        let y = (4.0 * x[0]).sin() + x[1] * x[dim - 1];
        data.push(Observation::initial(x, y, 1.0)).unwrap();
    }
    let (x, y) = (data.x_matrix(), data.ys());
    GpPosterior::new(
        Kernel::new(KernelKind::Rbf, vec![0.3; dim], 1.0).unwrap(),
        1e-4,
        0.0,
        TrainingData { dim, x: &x, y: &y },
        OutputTransform::standardize(&y),
    )
    .unwrap()
}

const SETTINGS: OptimizerSettings = OptimizerSettings {
    raw_samples: 8,
    restarts: 1,
    max_iters: 5,
};

/// The control set of each of the first `n` decisions, and whether each explored.
fn first_decisions(policy: &mut dyn Policy, info: &ProblemInfo, n: usize) -> Vec<(usize, bool)> {
    let post = posterior(info.dim);
    let data = Dataset::new(info.dim);
    let budget = BudgetState::new(Budget {
        cost: Some(100.0),
        iterations: None,
    });
    (0..n)
        .map(|t| {
            let ctx = DecisionContext::new(info, &data, &budget, t + 1, 21 + t as u64, &SETTINGS)
                .with_posterior(Box::new(post.clone()));
            let Decision::Evaluate(q) = policy.decide(&ctx).unwrap() else {
                panic!("cvs_etc always evaluates");
            };
            let exploring = policy.diagnostics()["cvs.exploring"] == 1.0;
            (q.control_set.unwrap(), exploring)
        })
        .collect()
}

/// Builds `spec` with one play per group and checks that its decisions explore one set of
/// each of `groups` in order, then commit.
fn explores_in_order(info: &ProblemInfo, spec: &str, groups: &[Vec<usize>]) {
    let mut policy = build(spec, info).unwrap();
    assert_eq!(plays_left(policy.as_ref()), vec![1; groups.len()], "{spec}");
    let decisions = first_decisions(policy.as_mut(), info, groups.len() + 1);
    for (g, (set, exploring)) in groups.iter().zip(&decisions) {
        assert!(*exploring, "{spec}: {decisions:?}");
        assert!(g.contains(set), "{spec}: set {set} not in group {g:?}");
    }
    assert!(!decisions[groups.len()].1, "{spec}: {decisions:?}");
    assert_eq!(plays_left(policy.as_ref()), vec![0; groups.len()], "{spec}");
}

/// Seed 002, airfoil: all seven sets have two variables and three cost levels; ETC explores
/// the two cheaper cost levels, as the authors' [[0, 1, 2], [3, 4, 5]] does, with 50, 100 or
/// ⌊4/c⌋ plays (the authors' `int(4 / c)`: 400 and 40 at cheap costs, 40 and 20 at
/// moderate, 6 and 5 at expensive).
#[test]
fn airfoil_cost_groups_are_the_two_cheaper_cost_levels() {
    let groups = [vec![0, 1, 2], vec![3, 4, 5]];
    for (costs, ada) in [
        (CHEAP, [400, 40]),
        (MODERATE, [40, 20]),
        (EXPENSIVE, [6, 5]),
    ] {
        let info = problem(5, &airfoil_sets(), Some(&costs));
        for (spec, plays) in [
            (r#"{"type": "cvs_etc", "plays": 50}"#, vec![50, 50]),
            (r#"{"type": "cvs_etc", "plays": 100}"#, vec![100, 100]),
            (r#"{"type": "cvs_etc", "adaptive": true}"#, ada.to_vec()),
        ] {
            assert_eq!(
                plays_left(build(spec, &info).unwrap().as_ref()),
                plays,
                "{spec}"
            );
        }
        explores_in_order(
            &info,
            r#"{"type": "cvs_etc", "plays": 1, "mc_samples": 16}"#,
            &groups,
        );
    }
}

/// Seed 004's ETC-50 on airfoil groups sets by their number of variables: all seven sets
/// have two, so they form one group, which gets its 50 plays (no set is the full query, so
/// no group is left to the commit phase alone). Exploring that group chooses among all
/// sets, as committing does.
#[test]
fn airfoil_size_groups_explore_the_one_group() {
    for costs in [Some(&CHEAP[..]), None] {
        let info = problem(5, &airfoil_sets(), costs);
        let spec = r#"{"type": "cvs_etc", "plays": 50, "group_by": "size"}"#;
        assert_eq!(plays_left(build(spec, &info).unwrap().as_ref()), vec![50]);
        explores_in_order(
            &info,
            r#"{"type": "cvs_etc", "plays": 1, "group_by": "size", "mc_samples": 16}"#,
            &[(0..7).collect()],
        );
    }
}

/// Where the most expensive (or largest) group is the full query alone (seed 002's GP sample,
/// Hartmann and plant; seed 004's synthetic 12-D and Hartmann-3 + 3 sets), the groups are
/// the cheaper cost levels, or the smaller sizes, and the full set is left to the commit.
#[test]
fn groups_with_a_full_query_set_leave_it_to_the_commit() {
    let cost_groups = [vec![0, 1, 2], vec![3, 4, 5]];
    for (dim, sets) in [(3, powerset3()), (5, plant_sets())] {
        for costs in [CHEAP, MODERATE, EXPENSIVE] {
            let info = problem(dim, &sets, Some(&costs));
            explores_in_order(
                &info,
                r#"{"type": "cvs_etc", "plays": 1, "mc_samples": 16}"#,
                &cost_groups,
            );
        }
    }
    let size_spec = r#"{"type": "cvs_etc", "plays": 1, "group_by": "size", "mc_samples": 16}"#;
    let info = problem(12, &sets_12d(), None);
    explores_in_order(&info, size_spec, &[vec![0, 1, 2, 3], vec![4, 5]]);
    let hartmann3_dummy3 = vec![
        vec![0],
        vec![1],
        vec![2],
        vec![3, 4, 5],
        vec![0, 1, 2],
        vec![0, 3, 4, 5],
        vec![0, 1, 2, 3, 4, 5],
    ];
    let info = problem(6, &hartmann3_dummy3, None);
    explores_in_order(&info, size_spec, &[vec![0, 1, 2], vec![3, 4], vec![5]]);
}
