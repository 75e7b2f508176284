//! Scenario-tree values against sequential GP conditioning, gradients against finite
//! differences, and determinism.

mod common;

use cabo_bmsei::belief::UnitCostPath;
use cabo_bmsei::{BaseSamples, GradientMethod, NodeValue, Tree, TreeObjective, q1_value};
use cabo_core::{CostBelief, Objective, Posterior, Rng, normal};
use cabo_gp::GpPosterior;

fn random_xs(n: usize, seed: u64) -> Vec<f64> {
    let mut r = Rng::new(seed);
    (0..n).map(|_| 0.05 + 0.9 * r.uniform()).collect()
}

/// Node values computed independently: fantasise sequentially with `condition_many`
/// (`y = μ + √(σ² + noise)·ε` at each stage) and evaluate Prop. 1's Q₁ on the conditioned
/// posteriors. Quantile base samples make ε known.
#[test]
fn tree_values_equal_sequential_conditioning() {
    let q = |m: usize, j: usize| {
        if m == 1 {
            0.0
        } else {
            normal::quantile((j as f64 + 0.5) / m as f64)
        }
    };
    let fantasies = [3usize, 2];
    let tree = Tree::new(2, &fantasies, BaseSamples::Quantiles).unwrap();
    check_sequential_conditioning(&tree, |_, m, j| (q(m, j), q(m, j)));
}

/// The same with shared Sobol' base samples, whose y and ln c samples differ: each fantasy
/// uses the pair the tree reports for its node, so a swapped or misplaced column shows.
#[test]
fn shared_sobol_tree_values_equal_sequential_conditioning() {
    for fantasies in [vec![4usize, 2], vec![2, 1, 2]] {
        let tree = Tree::new(2, &fantasies, BaseSamples::SharedSobol(21)).unwrap();
        check_sequential_conditioning(&tree, |child, _, _| {
            (tree.base_sample_y(child), tree.base_sample_c(child))
        });
    }
}

/// Checks every node value of `tree` (relative tolerance 1e-9) against sequential
/// conditioning, fantasy `j` of `m` into node `child` using the base samples `eps(child, m, j)`
/// for (y, ln c).
fn check_sequential_conditioning(tree: &Tree, eps: impl Fn(usize, usize, usize) -> (f64, f64)) {
    let d = tree.point_dim();
    let (post, cost, best) = common::posteriors(9, d, 3);
    let fantasies = tree.fantasies().to_vec();
    let xs = random_xs(tree.dim(), 5);
    let fp = post.covariance().unwrap();
    let cp = cost.covariance().unwrap();
    let total_budget = 9.0;
    let obj = TreeObjective::new(tree, fp, cp, best, total_budget, NodeValue::BudgetedEi).unwrap();
    let got = obj.node_values(&xs);
    // Recursive walk mirroring the breadth-first layout.
    struct State {
        f: GpPosterior,
        c: Box<dyn CostBelief>,
        best: f64,
        left: f64,
    }
    let cost_noise = cost.covariance().unwrap().fantasy_noise();
    let mut level: Vec<(usize, State)> = vec![(
        0,
        State {
            f: post.clone(),
            // Conditioning on no observation copies the belief.
            c: cost.fantasize().unwrap().condition(&[], &[]).unwrap(),
            best,
            left: total_budget,
        },
    )];
    let mut checked = 0;
    for stage in 0..=fantasies.len() {
        let mut next = Vec::new();
        for (node, s) in &level {
            let x = &xs[node * d..(node + 1) * d];
            let mv = s.f.mean_var(x);
            let belief = s.c.ln_cost(x);
            let lc = &belief;
            let want = q1_value(mv.mean, mv.var, &belief, s.best, s.left);
            assert!(
                (got[*node] - want).abs() < 1e-9 * want.abs().max(1e-3),
                "node {node}: tree {} vs sequential {want}",
                got[*node]
            );
            checked += 1;
            if stage < fantasies.len() {
                let m = fantasies[stage];
                for (j, child) in tree.children(*node).enumerate() {
                    let (ey, ec) = eps(child, m, j);
                    let y = mv.mean + (mv.var + s.f.noise_variance()).sqrt() * ey;
                    let z = lc.mean + (lc.var + cost_noise).sqrt() * ec;
                    next.push((
                        child,
                        State {
                            f: s.f.condition_many(x, &[y]).unwrap(),
                            c: s.c.fantasize().unwrap().condition(x, &[z]).unwrap(),
                            best: s.best.max(y),
                            left: s.left - z.exp(),
                        },
                    ));
                }
            }
        }
        level = next;
    }
    assert_eq!(checked, tree.nodes());
}

fn fd_check(obj: &TreeObjective<'_>, xs: &[f64], what: &str) {
    let mut g = vec![0.0; xs.len()];
    let v = obj.value_grad(xs, &mut g);
    assert!((v - obj.value(xs)).abs() < 1e-12 * v.abs().max(1.0));
    assert!(
        v > 0.0,
        "{what}: value {v} is zero, gradient check meaningless"
    );
    let norm = g.iter().map(|v| v * v).sum::<f64>().sqrt();
    assert!(norm > 0.0);
    let h = 1e-6;
    let mut worst: f64 = 0.0;
    for i in 0..xs.len() {
        let mut a = xs.to_vec();
        let mut b = xs.to_vec();
        a[i] += h;
        b[i] -= h;
        let fd = (obj.value(&a) - obj.value(&b)) / (2.0 * h);
        worst = worst.max((fd - g[i]).abs() / norm);
    }
    eprintln!(
        "{what}: {} variables, relative gradient error {worst:.1e}",
        xs.len()
    );
    assert!(worst < 1e-5, "{what}: relative gradient error {worst:e}");
}

#[test]
fn tree_gradient_matches_finite_differences() {
    let d = 2;
    for seed in 0..3u64 {
        let (post, cost, best) = common::posteriors(10, d, seed);
        let fp = post.covariance().unwrap();
        let cp = cost.covariance().unwrap();
        for fantasies in [vec![3usize, 2], vec![1, 1, 1], vec![]] {
            let tree = Tree::new(d, &fantasies, BaseSamples::Seeded(seed)).unwrap();
            let xs = random_xs(tree.dim(), 40 + seed);
            // A budget that binds on some branches but not all.
            let budget = 3.0 * cost.ln_cost(&xs[..d]).expected();
            let obj =
                TreeObjective::new(&tree, fp, cp, best, budget, NodeValue::BudgetedEi).unwrap();
            fd_check(&obj, &xs, &format!("seed {seed} tree {fantasies:?}"));
        }
        // Multi-step EI (unit costs, no budget) and knowledge gradient.
        let unit = UnitCostPath { dim: d };
        let tree = Tree::new(d, &[4, 2], BaseSamples::Seeded(seed)).unwrap();
        let xs = random_xs(tree.dim(), 60 + seed);
        let obj = TreeObjective::new(&tree, fp, &unit, best, f64::INFINITY, NodeValue::BudgetedEi)
            .unwrap();
        fd_check(&obj, &xs, "ms_ei");
        let tree = Tree::new(d, &[8], BaseSamples::Seeded(seed)).unwrap();
        let xs = random_xs(tree.dim(), 70 + seed);
        let obj =
            TreeObjective::new(&tree, fp, &unit, best, f64::INFINITY, NodeValue::LeafMean).unwrap();
        fd_check(&obj, &xs, "kg");
    }
}

#[test]
fn one_step_tree_is_q1_and_path_variant_uses_posterior_means() {
    let d = 3;
    let (post, cost, best) = common::posteriors(12, d, 11);
    let fp = post.covariance().unwrap();
    let cp = cost.covariance().unwrap();
    let tree = Tree::new(d, &[], BaseSamples::Seeded(1)).unwrap();
    let x = random_xs(d, 2);
    let obj = TreeObjective::new(&tree, fp, cp, best, 4.0, NodeValue::BudgetedEi).unwrap();
    let mv = post.mean_var(&x);
    let want = q1_value(mv.mean, mv.var, &cost.ln_cost(&x), best, 4.0);
    assert!((obj.value(&x) - want).abs() < 1e-12);
    // Path variant: the first-stage fantasy is the posterior mean whatever the seed.
    let a = Tree::new(d, &[1, 1], BaseSamples::Seeded(1)).unwrap();
    let b = Tree::new(d, &[1, 1], BaseSamples::Seeded(2)).unwrap();
    let xs = random_xs(a.dim(), 3);
    let oa = TreeObjective::new(&a, fp, cp, best, 4.0, NodeValue::BudgetedEi).unwrap();
    let ob = TreeObjective::new(&b, fp, cp, best, 4.0, NodeValue::BudgetedEi).unwrap();
    assert_eq!(oa.value(&xs), ob.value(&xs));
    assert_eq!(oa.first_stage_fantasies(&xs), vec![mv_at(&post, &xs[..d])]);
}

fn mv_at(p: &GpPosterior, x: &[f64]) -> f64 {
    p.mean_var(x).mean
}

#[test]
fn bad_shapes_are_errors() {
    assert!(Tree::new(2, &[0, 1], BaseSamples::Quantiles).is_err());
    assert!(Tree::new(0, &[1], BaseSamples::Quantiles).is_err());
    // Any dimension: N·d = 100 is differentiated through the path's moments.
    assert!(Tree::new(20, &[1, 1, 1, 1], BaseSamples::Quantiles).is_ok());
    assert!(Tree::new(2, &[1; 9], BaseSamples::Quantiles).is_err());
    let (post, cost, _) = common::posteriors(5, 2, 1);
    let fp = post.covariance().unwrap();
    let cp = cost.covariance().unwrap();
    let t = Tree::new(3, &[2], BaseSamples::Quantiles).unwrap();
    assert!(TreeObjective::new(&t, fp, cp, 0.0, 1.0, NodeValue::BudgetedEi).is_err());
    let t = Tree::new(2, &[2], BaseSamples::Quantiles).unwrap();
    assert!(TreeObjective::new(&t, fp, cp, f64::NAN, 1.0, NodeValue::BudgetedEi).is_err());
    let obj = TreeObjective::new(&t, fp, cp, 0.0, 1.0, NodeValue::BudgetedEi).unwrap();
    assert!(obj.value(&[0.5; 5]).is_nan());
}

/// Shared Sobol' base samples: the j-th child of every node of a stage carries the same
/// (y, ln c) pair (exact equality); the stage's `m = 2^k` values of each coordinate fall one
/// in each of the `m` equal-probability bins of N(0, 1) (the Sobol' net's stratification,
/// checked exactly on the bins of Φ(ε)); y and ln c differ, as do the stages and the seeds;
/// single-fantasy stages carry the posterior mean (0); the same seed gives the same tree.
#[test]
fn shared_sobol_samples_are_shared_by_every_node_of_a_stage() {
    let fantasies = [4usize, 4, 2];
    let tree = Tree::new(2, &fantasies, BaseSamples::SharedSobol(5)).unwrap();
    let pair = |n: usize| (tree.base_sample_y(n), tree.base_sample_c(n));
    // Nodes of level l, in breadth-first order: level 0 is the root.
    let mut level = vec![0usize];
    let mut stage_y = Vec::new();
    for &m in &fantasies {
        let first: Vec<(f64, f64)> = tree.children(level[0]).map(pair).collect();
        assert_eq!(first.len(), m);
        let mut next = Vec::new();
        for &p in &level {
            let kids: Vec<(f64, f64)> = tree.children(p).map(pair).collect();
            assert_eq!(
                kids, first,
                "node {p}: children's base samples differ from the stage's"
            );
            next.extend(tree.children(p));
        }
        for column in [0, 1] {
            let mut bins: Vec<usize> = first
                .iter()
                .map(|&(y, c)| {
                    let e = if column == 0 { y } else { c };
                    (normal::cdf(e) * m as f64).floor() as usize
                })
                .collect();
            bins.sort_unstable();
            assert_eq!(
                bins,
                (0..m).collect::<Vec<_>>(),
                "column {column}: {first:?}"
            );
        }
        assert!(
            first.iter().all(|&(y, c)| y != c),
            "y and ln c coincide: {first:?}"
        );
        stage_y.push(first.iter().map(|p| p.0).collect::<Vec<_>>());
        level = next;
    }
    assert_ne!(stage_y[0], stage_y[1], "stages 1 and 2 share their samples");
    let again = Tree::new(2, &fantasies, BaseSamples::SharedSobol(5)).unwrap();
    let other = Tree::new(2, &fantasies, BaseSamples::SharedSobol(6)).unwrap();
    let all = |t: &Tree| -> Vec<(f64, f64)> {
        (0..t.nodes())
            .map(|n| (t.base_sample_y(n), t.base_sample_c(n)))
            .collect()
    };
    assert_eq!(all(&tree), all(&again));
    assert_ne!(all(&tree), all(&other));
    let path = Tree::new(2, &[4, 1], BaseSamples::SharedSobol(5)).unwrap();
    for n in path.children(1) {
        assert_eq!((path.base_sample_y(n), path.base_sample_c(n)), (0.0, 0.0));
    }
}

/// Every tree of one dimension `d` the gradient tests cover, with its objective's beliefs:
/// B-MS-EI trees with a budget that binds on some branches, multi-step EI (unit costs, no
/// budget) and knowledge gradient.
fn for_each_tree(
    d: usize,
    n: usize,
    seed: u64,
    mut check: impl FnMut(&TreeObjective<'_>, &[f64], &str),
) {
    let (post, cost, best) = common::posteriors(n, d, seed);
    let fp = post.covariance().unwrap();
    let cp = cost.covariance().unwrap();
    for fantasies in [vec![3usize, 2], vec![1, 1, 1], vec![2, 1, 2], vec![]] {
        let tree = Tree::new(d, &fantasies, BaseSamples::Seeded(seed)).unwrap();
        let xs = random_xs(tree.dim(), 40 + seed);
        let budget = 3.0 * cost.ln_cost(&xs[..d]).expected();
        let obj = TreeObjective::new(&tree, fp, cp, best, budget, NodeValue::BudgetedEi).unwrap();
        check(&obj, &xs, &format!("d {d} seed {seed} bmsei {fantasies:?}"));
    }
    let unit = UnitCostPath { dim: d };
    let tree = Tree::new(d, &[4, 2], BaseSamples::Seeded(seed)).unwrap();
    let xs = random_xs(tree.dim(), 60 + seed);
    let obj =
        TreeObjective::new(&tree, fp, &unit, best, f64::INFINITY, NodeValue::BudgetedEi).unwrap();
    check(&obj, &xs, &format!("d {d} seed {seed} ms_ei"));
    let tree = Tree::new(d, &[8], BaseSamples::Seeded(seed)).unwrap();
    let xs = random_xs(tree.dim(), 70 + seed);
    let obj =
        TreeObjective::new(&tree, fp, &unit, best, f64::INFINITY, NodeValue::LeafMean).unwrap();
    check(&obj, &xs, &format!("d {d} seed {seed} kg"));
}

/// The same objective differentiated by `method`.
fn with_gradient<'b>(obj: &'b TreeObjective<'_>, method: GradientMethod) -> TreeObjective<'b> {
    obj.with_tree(obj.tree())
        .unwrap()
        .with_gradient(method)
        .unwrap()
}

/// Above `N·d = 64` the tree is differentiated through its paths' moments (the default
/// there): the gradient of every kind of tree at d = 32 (4·32 = 128 path coordinates)
/// against central differences, relative error below 1e-5 of the gradient's norm.
#[test]
fn moment_gradients_match_finite_differences_at_d32() {
    for seed in 0..2u64 {
        for_each_tree(32, 40, seed, fd_check);
    }
}

/// The moments asked for explicitly at small `d` also match central differences.
#[test]
fn moment_gradients_match_finite_differences_at_small_d() {
    for d in [1, 3] {
        for_each_tree(d, 10, 7, |obj, xs, what| {
            let f = with_gradient(obj, GradientMethod::Moments);
            fd_check(&f, xs, what)
        });
    }
}

/// Where both can (N·d ≤ 64, up to d = 16 with four steps) the two exact gradients agree to
/// 1e-12 of the gradient's largest entry, and their values are the same bits.
#[test]
fn moment_and_coordinate_gradients_agree() {
    let mut worst: f64 = 0.0;
    for (d, n) in [(1, 8), (2, 10), (3, 12), (16, 30)] {
        for_each_tree(d, n, 3, |obj, xs, what| {
            let coords = with_gradient(obj, GradientMethod::Coordinates);
            let moments = with_gradient(obj, GradientMethod::Moments);
            let mut ga = vec![0.0; xs.len()];
            let mut gb = vec![0.0; xs.len()];
            let va = coords.value_grad(xs, &mut ga);
            let vb = moments.value_grad(xs, &mut gb);
            assert_eq!(va.to_bits(), vb.to_bits(), "{what}: values differ");
            let scale = ga.iter().fold(0.0f64, |m, g| m.max(g.abs()));
            if scale == 0.0 {
                // A node out of budget: both must say so exactly.
                assert_eq!(ga, gb, "{what}");
                return;
            }
            let err = ga
                .iter()
                .zip(&gb)
                .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()))
                / scale;
            worst = worst.max(err);
            assert!(
                err < 1e-12,
                "{what}: coordinates and moments differ by {err:e}"
            );
        });
    }
    eprintln!("coordinates against moments: largest relative difference {worst:.1e}");
}

/// Coordinates cannot carry a tree above `N·d = 64`; `Auto` picks each side's method, so a
/// tree of 64 keeps the coordinates' bits.
#[test]
fn coordinate_duals_are_refused_above_64_and_auto_keeps_them_below() {
    let (post, cost, best) = common::posteriors(10, 17, 1);
    let fp = post.covariance().unwrap();
    let cp = cost.covariance().unwrap();
    let tree = Tree::new(17, &[1, 1, 1], BaseSamples::Seeded(1)).unwrap();
    let obj = TreeObjective::new(&tree, fp, cp, best, 5.0, NodeValue::BudgetedEi).unwrap();
    let err = obj
        .with_gradient(GradientMethod::Coordinates)
        .err()
        .unwrap();
    assert!(err.to_string().contains("68"), "{err}");
    let (post, cost, best) = common::posteriors(10, 16, 1);
    let fp = post.covariance().unwrap();
    let cp = cost.covariance().unwrap();
    let tree = Tree::new(16, &[1, 1, 1], BaseSamples::Seeded(1)).unwrap();
    let xs = random_xs(tree.dim(), 2);
    let grad = |m: GradientMethod| {
        let o = TreeObjective::new(&tree, fp, cp, best, 5.0, NodeValue::BudgetedEi)
            .unwrap()
            .with_gradient(m)
            .unwrap();
        let mut g = vec![0.0; xs.len()];
        o.value_grad(&xs, &mut g);
        g.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
    };
    assert_eq!(
        grad(GradientMethod::Auto),
        grad(GradientMethod::Coordinates)
    );
    assert_ne!(grad(GradientMethod::Auto), grad(GradientMethod::Moments));
}

/// Shared Sobol' base samples have the right distribution: mapped back through Φ, the
/// `m = 2^k` pairs of a stage are a (0, k, 2)-net in base 2, as scrambled Sobol' points are:
/// exactly one point in each of the `2^k` intervals of either coordinate and in each
/// `2^{k/2} × 2^{k/2}` cell (the joint stratification of y and ln c); their means are then
/// within 0.02 of 0 and their variances within 0.05 of 1 (most of that error is the two
/// outermost strata's, whose points may lie anywhere in the tails).
#[test]
fn shared_sobol_base_samples_are_stratified_standard_normals() {
    let m = 256;
    for seed in [1u64, 2, 3] {
        let tree = Tree::new(1, &[m], BaseSamples::SharedSobol(seed)).unwrap();
        let eps: Vec<(f64, f64)> = tree
            .children(0)
            .map(|c| (tree.base_sample_y(c), tree.base_sample_c(c)))
            .collect();
        let bin = |e: f64, k: usize| (normal::cdf(e) * k as f64).floor() as usize;
        for (what, k1, k2) in [("y", m, 1), ("ln c", 1, m), ("cells", 16, 16)] {
            let mut count = vec![0usize; m];
            for &(ey, ec) in &eps {
                count[bin(ey, k1) * k2 + bin(ec, k2)] += 1;
            }
            assert!(
                count.iter().all(|&c| c == 1),
                "seed {seed}, {what}: {count:?}"
            );
        }
        for col in [0, 1] {
            let v: Vec<f64> = eps
                .iter()
                .map(|p| if col == 0 { p.0 } else { p.1 })
                .collect();
            let mean = v.iter().sum::<f64>() / m as f64;
            let var = v.iter().map(|e| (e - mean).powi(2)).sum::<f64>() / m as f64;
            assert!(
                mean.abs() < 0.02 && (var - 1.0).abs() < 0.05,
                "seed {seed}: {mean} {var}"
            );
        }
    }
}
