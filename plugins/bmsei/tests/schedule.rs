//! The budget schedule's rollout against a rollout recomputed by hand from its points: each
//! step's cost is `exp(μ + √(σ² + noise)·ε_c)` under the beliefs conditioned on the earlier
//! steps' fantasies, and each step's point maximises EI-PUC-CC with the exponent recomputed
//! from the budget left.

mod common;

use cabo_bmsei::schedule::{RolloutBudget, fantasy_draw, rollout};
use cabo_core::{CostBelief, Diagnostics, Objective, OptimizerSettings, Posterior};
use cabo_toolkit::acquisition::{CostView, CostWeightedFn};

#[test]
fn rollout_samples_costs_and_recomputes_the_exponent_at_each_step() {
    let d = 2;
    let (post, cost, best) = common::posteriors(9, d, 3);
    let settings = OptimizerSettings {
        raw_samples: 256,
        restarts: 4,
        max_iters: 100,
    };
    let budget = RolloutBudget {
        left: 6.0,
        initial: 10.0,
    };
    let seed = 17;
    let r = rollout(&post, cost.as_ref(), best, 3, budget, &settings, seed).unwrap();
    assert_eq!((r.points.len(), r.costs.len()), (3, 3));

    // By hand: draw each step's observation with observation noise, condition, repeat.
    let mut f: Box<dyn Posterior> = Box::new(post.clone());
    let mut c: Box<dyn CostBelief> = cost.fantasize().unwrap().condition(&[], &[]).unwrap();
    let (mut incumbent, mut spent) = (best, 0.0);
    for (step, x) in r.points.iter().enumerate() {
        let nu = ((budget.left - spent) / budget.initial).clamp(0.0, 1.0);
        // The point maximises EI-PUC-CC at this step's exponent: it scores at least the best
        // of a 41 × 41 grid (with ν held at its first value it does not, at step 1).
        let acq = CostWeightedFn::new(
            &*f,
            CostView::Belief(&*c),
            incumbent,
            -nu,
            Diagnostics::new(),
        );
        let at = acq.value(x);
        let grid_best = (0..=40)
            .flat_map(|i| (0..=40).map(move |j| vec![i as f64 / 40.0, j as f64 / 40.0]))
            .map(|p| acq.value(&p))
            .fold(f64::NEG_INFINITY, f64::max);
        assert!(
            at >= grid_best - 1e-9 * grid_best.abs(),
            "step {step}: {at} < grid {grid_best}"
        );

        let (ey, ec) = fantasy_draw(seed, step);
        let mv = f.mean_var(x);
        let y = mv.mean + (mv.var + f.noise_variance()).sqrt() * ey;
        let lc = c.ln_cost(x);
        let noise_c = c.covariance().unwrap().fantasy_noise();
        let ln_c = lc.mean + (lc.var + noise_c).sqrt() * ec;
        let rel = (r.costs[step] - ln_c.exp()).abs() / ln_c.exp();
        assert!(
            rel < 1e-12,
            "step {step}: cost {} vs {} by hand",
            r.costs[step],
            ln_c.exp()
        );
        assert!(
            lc.var > 0.0 && ec != 0.0,
            "the cost is sampled, not the mean"
        );

        spent += r.costs[step];
        incumbent = incumbent.max(y);
        f = f.fantasize().unwrap().condition(x, &[y]).unwrap();
        c = c.fantasize().unwrap().condition(x, &[ln_c]).unwrap();
    }
}
