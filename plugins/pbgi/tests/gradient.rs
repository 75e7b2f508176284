//! Prop. 3's analytic gradient against central finite differences, with a real GP posterior
//! and both a known cost and a log-GP cost belief (PBGI-U).

use cabo_core::{AcquisitionFn, CostFunction, Objective, Rng};
use cabo_gp::{ExactGp, GpConfig, KernelKind, Lengthscale, LogGp};
use cabo_pbgi::PbgiFn;
use cabo_toolkit::acquisition::CostView;

/// c(x) = 1 + 20·mean(x) + 0.5 sin(3 x₀): smooth, positive, known.
#[derive(Debug)]
struct TestCost;

impl CostFunction for TestCost {
    fn cost(&self, x: &[f64]) -> f64 {
        1.0 + 20.0 * x.iter().sum::<f64>() / x.len() as f64 + 0.5 * (3.0 * x[0]).sin()
    }
    fn cost_grad(&self, x: &[f64], grad: &mut [f64]) -> f64 {
        let d = x.len() as f64;
        grad.fill(20.0 / d);
        grad[0] += 1.5 * (3.0 * x[0]).cos();
        self.cost(x)
    }
}

const DIM: usize = 3;

fn training(n: usize, seed: u64) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let mut rng = Rng::new(seed);
    let x: Vec<f64> = (0..n * DIM).map(|_| rng.uniform()).collect();
    let y = x
        .chunks(DIM)
        .map(|p| (5.0 * p[0]).sin() + p[1] * p[2] - 0.5 * p[2])
        .collect();
    let c = x.chunks(DIM).map(|p| TestCost.cost(p)).collect();
    (x, y, c)
}

fn check(f: &dyn AcquisitionFn, points: &[Vec<f64>], label: &str) -> f64 {
    let step = 1e-6;
    let mut worst: f64 = 0.0;
    for x in points {
        let mut g = vec![0.0; DIM];
        let v = f.value_grad(x, &mut g);
        assert!(
            (v - f.value(x)).abs() <= 1e-12 * v.abs().max(1.0),
            "{label}: value_grad value"
        );
        for i in 0..DIM {
            let (mut xp, mut xm) = (x.clone(), x.clone());
            xp[i] += step;
            xm[i] -= step;
            let fd = (f.value(&xp) - f.value(&xm)) / (2.0 * step);
            let rel = (g[i] - fd).abs() / g[i].abs().max(fd.abs()).max(1e-3);
            assert!(
                rel < 1e-5,
                "{label}: x {x:?} coord {i}: analytic {} vs fd {fd} (rel {rel})",
                g[i]
            );
            worst = worst.max(rel);
        }
    }
    worst
}

#[test]
fn gradient_matches_finite_differences_for_known_and_log_gp_costs() {
    let (x, y, c) = training(8, 7);
    let config = GpConfig::fixed(KernelKind::Matern52, Lengthscale::Scalar(0.4), 1.3, 1e-4);
    let posterior = ExactGp::new(config.clone())
        .unwrap()
        .fit(
            cabo_core::TrainingData {
                dim: DIM,
                x: &x,
                y: &y,
            },
            1,
        )
        .unwrap();
    let belief = LogGp::new(config)
        .unwrap()
        .fit_costs(DIM, &x, &c, 2)
        .unwrap();
    let mut rng = Rng::new(11);
    // Interior points away from the data (the Matérn kernel is C² only at distance 0).
    let points: Vec<Vec<f64>> = (0..12)
        .map(|_| (0..DIM).map(|_| 0.05 + 0.9 * rng.uniform()).collect())
        .collect();
    let best = y.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    // λ spans the risk-seeking and risk-averse regimes (u from ≈ −5 to ≈ +20 here).
    for lambda in [1e-6, 1e-4, 1e-2, 1.0] {
        let known = PbgiFn::new(
            &posterior,
            CostView::Known(&TestCost),
            lambda,
            Some(best),
            false,
        )
        .unwrap();
        let w = check(&known, &points, &format!("known cost, lambda {lambda}"));
        eprintln!("known cost, lambda {lambda}: worst relative error {w:.2e}");
        let unknown = PbgiFn::new(
            &posterior,
            CostView::Belief(&belief),
            lambda,
            Some(best),
            false,
        )
        .unwrap();
        let w = check(&unknown, &points, &format!("log-GP cost, lambda {lambda}"));
        eprintln!("log-GP cost, lambda {lambda}: worst relative error {w:.2e}");
    }
}

#[test]
fn log_gp_cost_uses_the_lognormal_mean() {
    // PBGI-U solves EI = λ·exp(μ_ln c + σ²_ln c/2): check at a point far from the data, where
    // σ²_ln c is large, against the index computed from the belief's moments by hand.
    let (x, y, c) = training(6, 3);
    let config = GpConfig::fixed(KernelKind::Matern52, Lengthscale::Scalar(0.2), 1.0, 1e-4);
    let posterior = ExactGp::new(config.clone())
        .unwrap()
        .fit(
            cabo_core::TrainingData {
                dim: DIM,
                x: &x,
                y: &y,
            },
            1,
        )
        .unwrap();
    let belief = LogGp::new(config)
        .unwrap()
        .fit_costs(DIM, &x, &c, 2)
        .unwrap();
    let p = [0.99, 0.01, 0.5];
    let f = PbgiFn::new(&posterior, CostView::Belief(&belief), 1e-3, None, false).unwrap();
    use cabo_core::{CostBelief, Posterior};
    let ln = belief.ln_cost(&p);
    assert!(
        ln.var > 0.1,
        "the test point should be uncertain about its cost"
    );
    let mv = posterior.mean_var(&p);
    let expected = cabo_pbgi::index::gittins_index(
        mv.mean,
        mv.var.sqrt(),
        1e-3 * (ln.mean + 0.5 * ln.var).exp(),
    )
    .unwrap();
    assert!((f.value(&p) - expected).abs() < 1e-12 * expected.abs().max(1.0));
}
