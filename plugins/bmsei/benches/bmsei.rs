//! One B-MS-EI decision at n = 50, d = 3 with the specs' optimiser settings (200·d raw
//! samples, 10·d restarts, 200 L-BFGS-B iterations), models already fitted: the 4-step path
//! variant (fantasies [1, 1, 1]), a [4, 4, 2] tree, and the one-shot knowledge gradient with
//! 64 fantasies. Then one evaluation of KG's objective with its gradient at the size of the
//! d = 8 Bayesian-regret run's last decision (n = 217, 64 fantasies), through the general
//! scenario tree and through the specialised KG objective.
//!
//! At d = 32 (the d = 32 Bayesian-regret spec's size, n = 200), where the tree is
//! differentiated through its paths' moments: one 4-step path decision with the specs'
//! settings (and once without seed 001's fantasy start, to see what it costs), and one value
//! with gradient of its tree.

use cabo_bmsei::belief::UnitCostPath;
use cabo_bmsei::{BaseSamples, KgObjective, NodeValue, Tree, TreeObjective};
use cabo_core::{
    Budget, BudgetState, CostBelief, Dataset, Decision, DecisionContext, Objective, Observation,
    OptimizerSettings, Policy, Posterior, ProblemInfo, Rng, TrainingData,
};
use cabo_gp::{ExactGp, GpConfig, GpPosterior, KernelKind, Lengthscale, LogGp};

fn main() {
    divan::main();
}

struct Fixture {
    info: ProblemInfo,
    data: Dataset,
    budget: BudgetState,
    settings: OptimizerSettings,
}

fn fixture(n: usize, d: usize, settings: OptimizerSettings) -> Fixture {
    let mut r = Rng::new(1);
    let mut data = Dataset::new(d);
    for _ in 0..n {
        let x: Vec<f64> = (0..d).map(|_| r.uniform()).collect();
        let y = (5.0 * x[0]).sin() * (3.0 * x[1]).cos() - (x[2] - 0.4).powi(2);
        let cost = (0.5 + x[0] + 0.5 * x[2]).exp();
        data.push(Observation::initial(x, y, cost)).unwrap();
    }
    let mut budget = BudgetState::new(Budget {
        cost: Some(200.0),
        iterations: None,
    });
    budget.charge(100.0);
    Fixture {
        info: ProblemInfo::continuous("bench", d),
        data,
        budget,
        settings,
    }
}

/// The specs' optimiser settings at dimension `d`.
fn spec_settings(d: usize) -> OptimizerSettings {
    OptimizerSettings {
        raw_samples: 200 * d,
        restarts: 10 * d,
        max_iters: 200,
    }
}

const BMSEI: cabo_bmsei::Variant = cabo_bmsei::Variant::Bmsei(cabo_bmsei::BudgetMode::Remaining);

/// The exact GP of `cfg` (fixed hyperparameters) on `x` (row-major, `d` columns) and `y`.
fn fixed_posterior(cfg: &GpConfig, d: usize, x: &[f64], y: &[f64]) -> GpPosterior {
    ExactGp::new(cfg.clone())
        .unwrap()
        .fit(TrainingData { dim: d, x, y }, 1)
        .unwrap()
}

/// The fitted objective posterior and log-GP cost belief of a fixture.
fn models(f: &Fixture) -> (GpPosterior, cabo_gp::LogGpBelief) {
    let d = f.info.dim;
    let cfg = GpConfig::fixed(KernelKind::Matern52, Lengthscale::Scalar(0.3), 1.0, 1e-4);
    let x = f.data.x_matrix();
    let y = f.data.ys();
    let post = fixed_posterior(&cfg, d, &x, &y);
    let cost = LogGp::new(cfg)
        .unwrap()
        .fit_costs(d, &x, &f.data.costs(), 1)
        .unwrap();
    (post, cost)
}

fn decide(variant: cabo_bmsei::Variant, fantasies: &[usize], bencher: divan::Bencher) {
    decide_on(
        fixture(50, 3, spec_settings(3)),
        variant,
        fantasies,
        bencher,
    );
}

fn decide_on(
    f: Fixture,
    variant: cabo_bmsei::Variant,
    fantasies: &[usize],
    bencher: divan::Bencher,
) {
    decide_with(f, variant, fantasies, true, bencher);
}

/// One decision, with or without seed 001's fantasy start among the tree search's starts.
fn decide_with(
    f: Fixture,
    variant: cabo_bmsei::Variant,
    fantasies: &[usize],
    fantasy_start: bool,
    bencher: divan::Bencher,
) {
    let (post, cost) = models(&f);
    bencher.bench_local(|| {
        let ctx = DecisionContext::new(&f.info, &f.data, &f.budget, 1, 9, &f.settings)
            .with_posterior(Box::new(post.clone()))
            .with_cost_belief(Box::new(cost.clone()));
        let mut p = cabo_bmsei::TreePolicy::new(variant, fantasies.to_vec())
            .with_fantasy_start(fantasy_start);
        match p.decide(&ctx).unwrap() {
            Decision::Evaluate(q) => q.x,
            Decision::Stop(_) => unreachable!(),
        }
    });
}

#[divan::bench(sample_count = 3, sample_size = 1)]
fn path_4_step_n50_d3(bencher: divan::Bencher) {
    decide(BMSEI, &[1, 1, 1], bencher);
}

#[divan::bench(sample_count = 2, sample_size = 1)]
fn tree_4_4_2_n50_d3(bencher: divan::Bencher) {
    decide(BMSEI, &[4, 4, 2], bencher);
}

/// One-shot knowledge gradient with 64 fantasies (the PBGI specs' KG): 195 variables.
#[divan::bench(sample_count = 3, sample_size = 1)]
fn kg_64_n50_d3(bencher: divan::Bencher) {
    decide(cabo_bmsei::Variant::Kg, &[64], bencher);
}

/// A fixed-hyperparameter posterior like the Bayesian-regret specs' (ℓ = 0.1, noise 1e-4)
/// on `n` random points in `d` dimensions, and a random tree vector for KG.
fn kg_fixture(n: usize, d: usize) -> (GpPosterior, Tree, Vec<f64>) {
    let mut r = Rng::new(3);
    let x: Vec<f64> = (0..n * d).map(|_| r.uniform()).collect();
    let y: Vec<f64> = (0..n).map(|_| r.normal()).collect();
    let cfg = GpConfig::fixed(KernelKind::Matern52, Lengthscale::Scalar(0.1), 1.0, 1e-4);
    let post = fixed_posterior(&cfg, d, &x, &y);
    let tree = Tree::new(d, &[64], BaseSamples::Seeded(5)).unwrap();
    let xs = (0..tree.dim()).map(|_| r.uniform()).collect();
    (post, tree, xs)
}

/// KG's value and gradient through the general tree (two triangular solves per node).
#[divan::bench(sample_count = 20)]
fn kg_objective_grad_n217_d8_general_tree(bencher: divan::Bencher) {
    let (post, tree, xs) = kg_fixture(217, 8);
    let f = post.covariance().unwrap();
    let unit = UnitCostPath { dim: 8 };
    let obj = TreeObjective::new(&tree, f, &unit, 0.0, f64::INFINITY, NodeValue::LeafMean).unwrap();
    let mut g = vec![0.0; xs.len()];
    bencher.bench_local(|| obj.value_grad(&xs, &mut g));
}

/// KG's value and gradient through the specialised objective (four solves in all).
#[divan::bench(sample_count = 20)]
fn kg_objective_grad_n217_d8_specialised(bencher: divan::Bencher) {
    let (post, tree, xs) = kg_fixture(217, 8);
    let obj = KgObjective::new(&tree, post.fantasy_means().unwrap()).unwrap();
    let mut g = vec![0.0; xs.len()];
    bencher.bench_local(|| obj.value_grad(&xs, &mut g));
}

/// The d = 32 fixture at n = 200 with 200·d raw samples, `restarts` restarts and 200
/// iterations.
fn fixture_d32(restarts: usize) -> Fixture {
    let d = 32;
    fixture(
        200,
        d,
        OptimizerSettings {
            raw_samples: 200 * d,
            restarts,
            max_iters: 200,
        },
    )
}

/// One 4-step path decision (fantasies [1, 1, 1], 128 tree variables) at n = 200, d = 32
/// with the seeds' settings: 200·d raw samples, 10·d restarts, 200 iterations.
#[divan::bench(sample_count = 3, sample_size = 1)]
fn path_4_step_n200_d32(bencher: divan::Bencher) {
    decide_on(fixture_d32(320), BMSEI, &[1, 1, 1], bencher);
}

/// The same decision without seed 001's fantasy start, which measures what it costs.
#[divan::bench(sample_count = 3, sample_size = 1)]
fn path_4_step_n200_d32_without_fantasy_start(bencher: divan::Bencher) {
    decide_with(fixture_d32(320), BMSEI, &[1, 1, 1], false, bencher);
}

/// One value and gradient of that decision's tree (through the paths' moments).
#[divan::bench(sample_count = 50)]
fn path_4_step_tree_grad_n200_d32(bencher: divan::Bencher) {
    let f = fixture_d32(32);
    let (post, cost) = models(&f);
    let tree = Tree::new(32, &[1, 1, 1], BaseSamples::Seeded(5)).unwrap();
    let fc = post.covariance().unwrap();
    let cc = cost.covariance().unwrap();
    let best = f.data.best_y().unwrap();
    let obj = TreeObjective::new(&tree, fc, cc, best, 100.0, NodeValue::BudgetedEi).unwrap();
    let mut r = Rng::new(7);
    let xs: Vec<f64> = (0..tree.dim()).map(|_| r.uniform()).collect();
    let mut g = vec![0.0; xs.len()];
    bencher.bench_local(|| obj.value_grad(&xs, &mut g));
}
