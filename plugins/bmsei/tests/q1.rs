//! Q₁ (Prop. 1) against Monte Carlo, and its gradient against finite differences.

mod common;

use cabo_bmsei::{q1_value, q1_value_grad};
use cabo_core::{Posterior, Rng};

#[test]
fn q1_agrees_with_monte_carlo_within_three_standard_errors() {
    for seed in 0..4u64 {
        let (post, cost, _) = common::posteriors(8, 2, seed);
        let mut r = Rng::new(100 + seed);
        let x = [r.uniform(), r.uniform()];
        let mv = post.mean_var(&x);
        // An incumbent near the posterior mean, so improvement is neither certain nor rare.
        let best = mv.mean + (0.5 * r.uniform() - 0.25) * mv.var.sqrt();
        let lc = cost.ln_cost(&x);
        // A budget near the cost's median so the Φ factor is far from 0 and 1.
        let left = (lc.mean + 0.4 * lc.var.sqrt()).exp();
        let q = q1_value(mv.mean, mv.var, &lc, best, left);
        let n = 1_000_000;
        let (mut s1, mut s2) = (0.0, 0.0);
        for _ in 0..n {
            let f = mv.mean + mv.var.sqrt() * r.normal();
            let c = (lc.mean + lc.var.sqrt() * r.normal()).exp();
            let v = if c <= left { (f - best).max(0.0) } else { 0.0 };
            s1 += v;
            s2 += v * v;
        }
        let m = s1 / n as f64;
        let se = ((s2 / n as f64 - m * m) / n as f64).sqrt();
        assert!(
            q > 1e-3,
            "seed {seed}: Q1 = {q} too small to be a meaningful check"
        );
        assert!(
            (q - m).abs() < 3.0 * se,
            "seed {seed}: Q1 {q} vs MC {m} ± {se}"
        );
    }
}

#[test]
fn q1_gradient_matches_finite_differences() {
    for seed in 0..4u64 {
        let (post, cost, best) = common::posteriors(8, 3, seed);
        let mut r = Rng::new(200 + seed);
        let x: Vec<f64> = (0..3).map(|_| 0.1 + 0.8 * r.uniform()).collect();
        let lc = cost.ln_cost(&x);
        let left = (lc.mean + 0.3).exp();
        let f = |x: &[f64]| {
            let mv = post.mean_var(x);
            q1_value(mv.mean, mv.var, &cost.ln_cost(x), best, left)
        };
        let mut g = vec![0.0; 3];
        let v = q1_value_grad(
            &post.mean_var_grad(&x).unwrap(),
            &cost.ln_cost_grad(&x),
            best,
            left,
            &mut g,
        );
        assert!((v - f(&x)).abs() < 1e-14 * v.abs().max(1.0));
        let h = 1e-6;
        for i in 0..3 {
            let mut a = x.clone();
            let mut b = x.clone();
            a[i] += h;
            b[i] -= h;
            let fd = (f(&a) - f(&b)) / (2.0 * h);
            let norm = g.iter().map(|v| v * v).sum::<f64>().sqrt();
            assert!(
                (fd - g[i]).abs() < 1e-5 * norm,
                "seed {seed} coord {i}: {} vs {fd}",
                g[i]
            );
        }
    }
}

#[test]
fn spent_budget_gives_zero_and_infinite_budget_gives_ei() {
    let (post, cost, best) = common::posteriors(6, 2, 9);
    let x = [0.3, 0.6];
    let mv = post.mean_var(&x);
    let lc = cost.ln_cost(&x);
    assert_eq!(q1_value(mv.mean, mv.var, &lc, best, 0.0), 0.0);
    assert_eq!(q1_value(mv.mean, mv.var, &lc, best, -1.0), 0.0);
    let ei = cabo_toolkit::numerics::ei(mv.mean, mv.var.sqrt(), best);
    assert!((q1_value(mv.mean, mv.var, &lc, best, f64::INFINITY) - ei).abs() < 1e-15);
}
