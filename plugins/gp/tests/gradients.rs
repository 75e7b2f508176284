//! Every analytic gradient against central finite differences (relative error < 1e-5).

// Coordinate loops index several parallel arrays (analytic and numerical gradients).
#![allow(clippy::needless_range_loop)]

mod common;
use cabo_core::capability::SamplePaths;
use cabo_core::{CostBelief, CostFunction, Posterior, TrainingData};
use cabo_gp::{ExactGp, GpConfig, KernelKind, KnownCost, Lengthscale, LogGp, Prior};
use common::*;
use std::sync::Arc;

const TOL: f64 = 1e-5;

fn fitted(kind: KernelKind, standardize: bool) -> cabo_gp::GpPosterior {
    let (n, d) = (15, 3);
    let x = points(n, d, 1);
    let y: Vec<f64> = x.chunks_exact(d).map(|p| 10.0 * target(p) + 4.0).collect();
    let mut c = GpConfig::fixed(kind, Lengthscale::PerDim(vec![0.3, 0.5, 0.4]), 1.3, 1e-3);
    c.mean = Some(0.2);
    c.standardize = standardize;
    ExactGp::new(c)
        .unwrap()
        .fit(
            TrainingData {
                dim: d,
                x: &x,
                y: &y,
            },
            0,
        )
        .unwrap()
}

#[test]
fn posterior_mean_and_variance_gradients() {
    for kind in KINDS {
        for standardize in [false, true] {
            let post = fitted(kind, standardize);
            for (t, p) in points(6, 3, 99).chunks_exact(3).enumerate() {
                let g = post.mean_var_grad(p).unwrap();
                for j in 0..3 {
                    let h = 1e-6;
                    let fm = fd(&|x| post.mean_var(x).mean, p, j, h);
                    let fv = fd(&|x| post.mean_var(x).var, p, j, h);
                    // Floors: gradients below 1e-4 of the function's scale are compared
                    // absolutely at that scale (finite differences cannot resolve less).
                    assert!(
                        rel(g.dmean[j], fm, 1e-3) < TOL,
                        "{kind:?} {t} dmean[{j}]: {} vs {fm}",
                        g.dmean[j]
                    );
                    assert!(
                        rel(g.dvar[j], fv, 1e-3) < TOL,
                        "{kind:?} {t} dvar[{j}]: {} vs {fv}",
                        g.dvar[j]
                    );
                }
            }
        }
    }
}

#[test]
fn cross_covariance_gradient() {
    let post = fitted(KernelKind::Matern52, true);
    let n = post.len();
    let p = [0.3, 0.6, 0.2];
    let mut k = vec![0.0; n];
    let mut dk = vec![0.0; n * 3];
    post.cross_covariance_grad(&p, &mut k, &mut dk);
    for i in 0..n {
        for j in 0..3 {
            let f = |x: &[f64]| {
                let mut v = vec![0.0; n];
                post.cross_covariance(x, &mut v);
                v[i]
            };
            let want = fd(&f, &p, j, 1e-6);
            assert!(rel(dk[i * 3 + j], want, 1e-3) < TOL);
        }
    }
}

#[test]
fn log_marginal_likelihood_gradient_in_log_hyperparameters() {
    let (n, d) = (25, 3);
    let x = points(n, d, 5);
    let y: Vec<f64> = x.chunks_exact(d).map(target).collect();
    let data = TrainingData {
        dim: d,
        x: &x,
        y: &y,
    };
    for kind in KINDS {
        for prior in [Prior::Gamma, Prior::Botorch, Prior::None] {
            let config = GpConfig::map(kind, prior, false);
            // ln ℓ (3), ln s (unless botorch), ln σ², mean.
            let mut theta = vec![(0.3f64).ln(), (0.5f64).ln(), (0.2f64).ln()];
            if prior != Prior::Botorch {
                theta.push(0.4);
            }
            theta.extend([(1e-2f64).ln(), 0.3]);
            let mut g = vec![0.0; theta.len()];
            let v = ExactGp::objective(&config, data, &theta, &mut g).unwrap();
            assert!(v.is_finite());
            for j in 0..theta.len() {
                let f = |t: &[f64]| {
                    let mut gg = vec![0.0; t.len()];
                    ExactGp::objective(&config, data, t, &mut gg).unwrap()
                };
                let want = fd(&f, &theta, j, 1e-5);
                assert!(
                    rel(g[j], want, 1e-4) < TOL,
                    "{kind:?} {prior:?} θ[{j}]: {} vs {want}",
                    g[j]
                );
            }
        }
    }
}

#[test]
fn sample_path_gradients() {
    for kind in [KernelKind::Rbf, KernelKind::Matern52] {
        let post = fitted(kind, true);
        let paths: Vec<Box<dyn cabo_core::Objective + Send + Sync>> = vec![
            post.sample_path(3).unwrap(),
            Box::new(post.rff_blr_sample(3).unwrap()),
        ];
        for path in &paths {
            for p in points(4, 3, 7).chunks_exact(3) {
                let mut g = [0.0; 3];
                let v = path.value_grad(p, &mut g);
                assert!((v - path.value(p)).abs() < 1e-12 * v.abs().max(1.0));
                for j in 0..3 {
                    let want = fd(&|x| path.value(x), p, j, 1e-6);
                    assert!(rel(g[j], want, 1e-2) < TOL, "{kind:?}: {} vs {want}", g[j]);
                }
            }
        }
    }
}

#[test]
fn log_gp_cost_gradients() {
    let (n, d) = (12, 2);
    let x = points(n, d, 11);
    let costs: Vec<f64> = x
        .chunks_exact(d)
        .map(|p| 1.0 + 20.0 * p[0] + (3.0 * p[1]).exp())
        .collect();
    let mut model = LogGp::new(GpConfig::map(KernelKind::Matern52, Prior::Gamma, true)).unwrap();
    let belief = model.fit_costs(d, &x, &costs, 0).unwrap();
    for p in points(5, d, 12).chunks_exact(d) {
        let l = belief.ln_cost_grad(p);
        for j in 0..d {
            let fm = fd(&|z| belief.ln_cost(z).mean, p, j, 1e-6);
            let fv = fd(&|z| belief.ln_cost(z).var, p, j, 1e-6);
            assert!(rel(l.dmean[j], fm, 1e-3) < TOL);
            assert!(rel(l.dvar[j], fv, 1e-4) < TOL);
            // The closed-form moments built on LnCost, end to end.
            let fe = fd(&|z| belief.ln_cost(z).expected(), p, j, 1e-6);
            assert!(rel(l.expected_grad()[j], fe, 1e-3) < TOL);
            let fp = fd(&|z| belief.ln_cost(z).expected_pow(-0.6), p, j, 1e-6);
            let mut gp = vec![0.0; l.dmean.len()];
            l.expected_pow_grad(-0.6, &mut gp);
            assert!(rel(gp[j], fp, 1e-4) < TOL);
            let fb = fd(&|z| belief.ln_cost(z).prob_at_most(8.0), p, j, 1e-6);
            assert!(rel(l.prob_at_most_grad(8.0)[j], fb, 1e-4) < TOL);
        }
    }
}

#[derive(Debug)]
struct Quadratic;
impl CostFunction for Quadratic {
    fn cost(&self, x: &[f64]) -> f64 {
        1.0 + x[0] * x[0] + 2.0 * x[1]
    }
    fn cost_grad(&self, x: &[f64], g: &mut [f64]) -> f64 {
        g[0] = 2.0 * x[0];
        g[1] = 2.0;
        self.cost(x)
    }
}

#[test]
fn known_cost_gradient() {
    let k = KnownCost::new(2, Arc::new(Quadratic));
    let p = [0.4, 0.7];
    let l = k.ln_cost_grad(&p);
    assert_eq!(l.var, 0.0);
    assert!((l.mean - Quadratic.cost(&p).ln()).abs() < 1e-15);
    for j in 0..2 {
        let want = fd(&|z| k.ln_cost(z).mean, &p, j, 1e-6);
        assert!(rel(l.dmean[j], want, 1e-6) < TOL);
        assert_eq!(l.dvar[j], 0.0);
    }
}
