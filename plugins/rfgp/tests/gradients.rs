//! Every analytic gradient of the random-feature GP against central finite differences
//! (relative error < 1e-5, with the reference floored at 1e-3 of the function's scale:
//! differences of step 1e-6 resolve no less).

// Coordinate loops index several parallel arrays (analytic and numerical gradients).
#![allow(clippy::needless_range_loop)]

mod common;
use cabo_core::capability::{PreparedPoint, SamplePaths};
use cabo_core::{Posterior, TrainingData};
use cabo_gp::{FitMode, KernelKind, Noise, NoiseBounds, OutputTransform, Prior};
use cabo_rfgp::{Form, RandomFeatureGp, RfGpConfig};
use common::*;

const TOL: f64 = 1e-5;

const TRANSFORM: OutputTransform = OutputTransform {
    shift: -1.0,
    scale: 3.0,
};

#[test]
fn mean_and_variance_gradients() {
    let d = 3;
    for kind in KINDS {
        for ((n, m), form) in [(12, 64), (80, 32)]
            .into_iter()
            .flat_map(|s| FORMS.map(|f| (s, f)))
        {
            let f = features(kind, &[0.3, 0.5, 0.4], 1.3, m, 2);
            let (post, _, _) = posterior_in(&f, n, 1e-3, 0.2, TRANSFORM, form);
            for (t, p) in points(6, d, 99).chunks_exact(d).enumerate() {
                let g = post.mean_var_grad(p).unwrap();
                for j in 0..d {
                    let h = 1e-6;
                    let fm = fd(&|x| post.mean_var(x).mean, p, j, h);
                    let fv = fd(&|x| post.mean_var(x).var, p, j, h);
                    assert!(
                        rel(g.dmean[j], fm, 1e-3) < TOL,
                        "{kind:?} {form:?} {t} dmean[{j}]: {} vs {fm}",
                        g.dmean[j]
                    );
                    assert!(
                        rel(g.dvar[j], fv, 1e-3) < TOL,
                        "{kind:?} {form:?} {t} dvar[{j}]: {} vs {fv}",
                        g.dvar[j]
                    );
                }
            }
        }
    }
}

/// ∂cov(a, b)/∂a and ∂/∂b, and a prepared point's mean and variance gradients.
#[test]
fn covariance_gradients() {
    let d = 3;
    for (kind, form) in [KernelKind::Matern52, KernelKind::Rbf, KernelKind::Matern32]
        .into_iter()
        .flat_map(|k| FORMS.map(|f| (k, f)))
    {
        let f = features(kind, &[0.3, 0.5, 0.4], 0.9, 48, 4);
        let (post, _, _) = posterior_in(&f, 20, 1e-3, 0.0, TRANSFORM, form);
        let c = Posterior::covariance(&post).unwrap();
        let pts = points(4, d, 5);
        let cov = |a: &[f64], b: &[f64]| {
            let (mut pa, mut pb) = (PreparedPoint::default(), PreparedPoint::default());
            c.prepare(a, false, &mut pa);
            c.prepare(b, false, &mut pb);
            c.cov(&pa, &pb, &mut [], &mut [])
        };
        let (mut pa, mut pb) = (PreparedPoint::default(), PreparedPoint::default());
        for (i, a) in pts.chunks_exact(d).enumerate() {
            let b = &pts[((i + 1) % 4) * d..((i + 1) % 4 + 1) * d];
            c.prepare(a, true, &mut pa);
            c.prepare(b, true, &mut pb);
            let (mut ga, mut gb) = (vec![0.0; d], vec![0.0; d]);
            let k = c.cov(&pa, &pb, &mut ga, &mut gb);
            assert!(rel(k, cov(a, b), 1e-6) < 1e-12);
            let floor = 1e-3 * pa.var.max(pb.var);
            for j in 0..d {
                let fa = fd(&|x| cov(x, b), a, j, 1e-6);
                let fb = fd(&|x| cov(a, x), b, j, 1e-6);
                assert!(
                    rel(ga[j], fa, floor) < TOL,
                    "{kind:?} {form:?} ga[{j}]: {} vs {fa}",
                    ga[j]
                );
                assert!(
                    rel(gb[j], fb, floor) < TOL,
                    "{kind:?} {form:?} gb[{j}]: {} vs {fb}",
                    gb[j]
                );
                let fm = fd(&|x| post.mean_var(x).mean, a, j, 1e-6);
                let fv = fd(&|x| post.mean_var(x).var, a, j, 1e-6);
                assert!(rel(pa.dmean[j], fm, 1e-3) < TOL, "{kind:?} dmean[{j}]");
                assert!(
                    rel(pa.dvar[j], fv, 1e-3 * pa.var) < TOL,
                    "{kind:?} dvar[{j}]"
                );
            }
        }
    }
}

#[test]
fn sample_path_gradients() {
    let d = 2;
    let f = features(KernelKind::Matern52, &[0.3, 0.4], 1.0, 64, 6);
    for (form, seed) in FORMS.into_iter().flat_map(|f| (0..3).map(move |s| (f, s))) {
        let (post, _, _) = posterior_in(&f, 15, 1e-3, 0.5, TRANSFORM, form);
        let path = post.sample_path(seed).unwrap();
        for p in points(4, d, 7 + seed).chunks_exact(d) {
            let mut g = vec![0.0; d];
            let v = path.value_grad(p, &mut g);
            assert_eq!(v, path.value(p));
            for j in 0..d {
                let want = fd(&|x| path.value(x), p, j, 1e-6);
                assert!(
                    rel(g[j], want, 1e-3) < TOL,
                    "{form:?} path {seed} g[{j}]: {} vs {want}",
                    g[j]
                );
            }
        }
    }
}

/// The MAP objective (marginal likelihood plus priors, per point) in every fitted
/// log-hyperparameter — lengthscales, outputscale, noise and mean — in both forms of the
/// likelihood, under each prior.
#[test]
fn map_objective_gradient() {
    let d = 2;
    for (prior, kind) in [
        (Prior::Gamma, KernelKind::Matern52),
        (Prior::Botorch, KernelKind::Rbf),
        (Prior::None, KernelKind::Matern32),
    ] {
        let mut config = RfGpConfig::map(kind, prior, false, 40);
        config.noise = Some(Noise::Fitted(NoiseBounds {
            min: 1e-6,
            max: 1.0,
        }));
        assert_eq!(config.fit, FitMode::Map);
        let model = RandomFeatureGp::new(config, d, 3).unwrap();
        for n in [14, 60] {
            let x = points(n, d, 8);
            let y: Vec<f64> = x.chunks_exact(d).map(target).collect();
            let data = TrainingData {
                dim: d,
                x: &x,
                y: &y,
            };
            let theta: Vec<f64> = match prior {
                // Botorch fixes the outputscale: ln ℓ (2), ln σ², mean.
                Prior::Botorch => vec![-1.2, -0.7, -4.0, 0.3],
                _ => vec![-1.2, -0.7, 0.2, -4.0, 0.3],
            };
            for form in [Form::Weights, Form::Data] {
                let mut g = vec![0.0; theta.len()];
                let v = model.objective(data, &theta, &mut g, form).unwrap();
                assert!(v.is_finite());
                for j in 0..theta.len() {
                    let f = |t: &[f64]| {
                        let mut s = vec![0.0; t.len()];
                        model.objective(data, t, &mut s, form).unwrap()
                    };
                    let want = fd(&f, &theta, j, 1e-5);
                    assert!(
                        rel(g[j], want, 1e-3) < TOL,
                        "{prior:?} n={n} {form:?} θ[{j}]: {} vs {want}",
                        g[j]
                    );
                }
            }
        }
    }
}
