//! Measures seed 001's fantasy start (`cabo_bmsei::TreePolicy::with_fantasy_start`): along
//! one B-MS-EI run, every decision is taken twice from the same state (data, budget
//! schedule and previous tree), with and without it, and the tree value reached and the
//! decision's time are printed. The same decision seed gives both the same base samples, so
//! their values are of the same tree and compare directly.
//!
//! Not a timed test: it is ignored, and run by hand with
//! `cargo test -p cabo-bmsei --test fantasy_start -- --ignored --nocapture`.
//!
//! The run: Alpine-1 on `[0, 10]^d` scaled by `1/d` (so values are of order one for the
//! fixed unit output scale), the cost `exp(0.7·cos(2π·x̄))` of the mean coordinate x̄ (a
//! cosine cost in the spirit of seed 001's), 2(d + 1) free uniform initial points, a cost
//! budget of 60, fixed-hyperparameter Matérn-5/2 GPs (length scale 0.3) on y and ln c, the
//! scheduled budget, and the specs' optimiser settings (200·d raw samples, 10·d restarts,
//! 200 iterations).

use cabo_bmsei::{BudgetMode, TreePolicy, Variant};
use cabo_core::{
    Budget, BudgetState, Dataset, Decision, DecisionContext, Observation, OptimizerSettings,
    Policy, ProblemInfo, Rng, TrainingData, derive_seed,
};
use cabo_gp::{ExactGp, GpConfig, KernelKind, Lengthscale, LogGp};
use std::time::Instant;

fn alpine1(x: &[f64]) -> f64 {
    let s: f64 = x
        .iter()
        .map(|u| {
            let z = 10.0 * u;
            (z * z.sin() + 0.1 * z).abs()
        })
        .sum();
    -s / x.len() as f64
}

fn cost(x: &[f64]) -> f64 {
    let mean = x.iter().sum::<f64>() / x.len() as f64;
    (0.7 * (std::f64::consts::TAU * mean).cos()).exp()
}

/// One row: the tree value and seconds without and with the fantasy start, and whether the
/// fantasy start's search won.
struct Row {
    value: [f64; 2],
    seconds: [f64; 2],
    won: f64,
}

/// The first `decisions` decisions of one run in dimension `d` with the tree's fantasy
/// counts `fantasies` (one per stage), one row each.
///
/// One function because the run threads one state through every decision: both policies
/// decide from the same data and budget (the one without the start restored from the
/// other's checkpoint), and only the decision with the fantasy start is evaluated and fed
/// back into that state.
fn run(d: usize, fantasies: &[usize], decisions: usize) -> Vec<Row> {
    let info = ProblemInfo::continuous("alpine1", d);
    let settings = OptimizerSettings {
        raw_samples: 200 * d,
        restarts: 10 * d,
        max_iters: 200,
    };
    let mut r = Rng::new(derive_seed(&[&"fantasy start measurement", &d]));
    let mut data = Dataset::new(d);
    for _ in 0..2 * (d + 1) {
        let x: Vec<f64> = (0..d).map(|_| r.uniform()).collect();
        let (y, c) = (alpine1(&x), cost(&x));
        data.push(Observation::initial(x, y, c)).unwrap();
    }
    let mut budget = BudgetState::new(Budget {
        cost: Some(60.0),
        iterations: None,
    });
    let cfg = GpConfig::fixed(KernelKind::Matern52, Lengthscale::Scalar(0.3), 1.0, 1e-4);
    let variant = Variant::Bmsei(BudgetMode::Scheduled);
    let mut with = TreePolicy::new(variant, fantasies.to_vec());
    let mut rows = Vec::new();
    for i in 0..decisions {
        let x = data.x_matrix();
        let y = data.ys();
        let post = ExactGp::new(cfg.clone())
            .unwrap()
            .fit(
                TrainingData {
                    dim: d,
                    x: &x,
                    y: &y,
                },
                1,
            )
            .unwrap();
        let belief = LogGp::new(cfg.clone())
            .unwrap()
            .fit_costs(d, &x, &data.costs(), 1)
            .unwrap();
        let seed = derive_seed(&[&"decision", &i]);
        let ctx = DecisionContext::new(&info, &data, &budget, i + 1, seed, &settings)
            .with_posterior(Box::new(post))
            .with_cost_belief(Box::new(belief));
        // The same state for both: the policy without the start restores the other's.
        let mut without = TreePolicy::new(variant, fantasies.to_vec()).with_fantasy_start(false);
        if let Some(state) = with.checkpoint().unwrap() {
            without.restore(&state).unwrap();
        }
        // Alternated, so that neither pays for the other's cold caches.
        let mut off = (0.0, 0.0);
        let mut decide_without = || {
            let t = Instant::now();
            without.decide(&ctx).unwrap();
            off = (
                t.elapsed().as_secs_f64(),
                without.diagnostics()["acq_value"],
            );
        };
        if i % 2 == 0 {
            decide_without();
        }
        let t = Instant::now();
        let Decision::Evaluate(q) = with.decide(&ctx).unwrap() else {
            panic!("a tree policy evaluates");
        };
        let on = (t.elapsed().as_secs_f64(), with.diagnostics()["acq_value"]);
        if i % 2 == 1 {
            decide_without();
        }
        let won = with
            .diagnostics()
            .get("fantasy_start_won")
            .copied()
            .unwrap_or(f64::NAN);
        rows.push(Row {
            value: [off.1, on.1],
            seconds: [off.0, on.0],
            won,
        });
        let (y, c) = (alpine1(&q.x), cost(&q.x));
        budget.charge(c);
        data.push(Observation::initial(q.x, y, c)).unwrap();
    }
    rows
}

#[test]
#[ignore = "a measurement, run by hand"]
fn measure_fantasy_start() {
    let cases: &[(usize, &[usize], usize)] =
        &[(3, &[4, 4, 2], 16), (8, &[1, 1, 1], 12), (8, &[4, 4, 2], 4)];
    for &(d, fantasies, decisions) in cases {
        println!("d = {d}, fantasies {fantasies:?}");
        println!(
            "| decision | value without | value with | ratio | s without | s with | fantasy start won |"
        );
        let rows = run(d, fantasies, decisions);
        for (i, r) in rows.iter().enumerate() {
            println!(
                "| {i} | {:.6e} | {:.6e} | {:.4} | {:.2} | {:.2} | {} |",
                r.value[0],
                r.value[1],
                r.value[1] / r.value[0],
                r.seconds[0],
                r.seconds[1],
                r.won
            );
        }
        let median = |mut v: Vec<f64>| {
            v.sort_by(f64::total_cmp);
            let n = v.len();
            (v[(n - 1) / 2] + v[n / 2]) / 2.0
        };
        let seconds = |k: usize| median(rows.iter().map(|r| r.seconds[k]).collect());
        let better = rows.iter().filter(|r| r.value[1] > r.value[0]).count();
        let worse = rows.iter().filter(|r| r.value[1] < r.value[0]).count();
        println!(
            "median seconds without {:.3}, with {:.3}; value higher with in {better}, lower in \
             {worse} of {} decisions",
            seconds(0),
            seconds(1),
            rows.len()
        );
    }
}
