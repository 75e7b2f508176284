//! The random-feature GP against independent oracles: a dense solve of the normal
//! equations, a dense evaluation of the marginal likelihood, refitting with the fantasised
//! observations appended, the exact GP as the features grow, and the moments of its draws.

// Dense reference algebra reads clearest with explicit indices.
#![allow(clippy::needless_range_loop)]

mod common;
use cabo_core::capability::{FourierSamples, PreparedPoint, SamplePaths};
use cabo_core::{Posterior, TrainingData};
use cabo_gp::{ExactGp, GpConfig, Kernel, KernelKind, Lengthscale, OutputTransform};
use cabo_rfgp::{Form, RfGpPosterior, UnitBasis, log_marginal_likelihood};
use common::*;
use std::sync::Arc;

const TRANSFORM: OutputTransform = OutputTransform {
    shift: 3.0,
    scale: 2.5,
};

/// Oracle: `(ΦᵀΦ + σ²I) w̄ = Φᵀ(y − μ)` solved by Gaussian elimination, mean `μ + φᵀw̄` and
/// variance `σ² φᵀ(ΦᵀΦ + σ²I)⁻¹φ`, mapped to y units. The model's posterior equals it to
/// 1e-10 relative with Σ in either form, with fewer points than features and with more, for
/// every kernel.
#[test]
fn posterior_equals_a_dense_solve_of_the_normal_equations() {
    let d = 3;
    for (t, kind) in KINDS.into_iter().enumerate() {
        for ((n, m), form) in [(15, 40), (60, 20)]
            .into_iter()
            .flat_map(|s| FORMS.map(|f| (s, f)))
        {
            let f = features(kind, &[0.3, 0.5, 0.4], 1.3, m, 5 + t as u64);
            let (noise, mean) = (1e-3, 0.2);
            let (post, x, y) = posterior_in(&f, n, noise, mean, TRANSFORM, form);
            let phi = design(&f, &x);
            let mut a = vec![0.0; m * m];
            for i in 0..n {
                for k in 0..m {
                    for l in 0..m {
                        a[k * m + l] += phi[i * m + k] * phi[i * m + l];
                    }
                }
            }
            for k in 0..m {
                a[k * m + k] += noise;
            }
            let mut b = vec![0.0; m];
            for i in 0..n {
                let r = (y[i] - TRANSFORM.shift) / TRANSFORM.scale - mean;
                for k in 0..m {
                    b[k] += phi[i * m + k] * r;
                }
            }
            let w = dense_solve(&a, &b);
            for (k, (u, v)) in post.weight_mean().iter().zip(&w).enumerate() {
                assert!(
                    rel(*u, *v, 1.0) < 1e-10,
                    "{kind:?} n={n} {form:?} w[{k}]: {u} vs {v}"
                );
            }
            for p in points(7, d, 99).chunks_exact(d) {
                let mut q = vec![0.0; m];
                f.values(p, &mut q);
                let mean_ref = TRANSFORM.shift
                    + TRANSFORM.scale * (mean + q.iter().zip(&w).map(|(a, b)| a * b).sum::<f64>());
                let aq = dense_solve(&a, &q);
                let var_ref = TRANSFORM.scale.powi(2)
                    * noise
                    * q.iter().zip(&aq).map(|(a, b)| a * b).sum::<f64>();
                let mv = post.mean_var(p);
                assert!(
                    rel(mv.mean, mean_ref, 1.0) < 1e-10,
                    "{kind:?} n={n} {form:?} mean"
                );
                assert!(
                    rel(mv.var, var_ref, 1e-12) < 1e-10,
                    "{kind:?} n={n} {form:?} var: {} vs {var_ref}",
                    mv.var
                );
                let g = post.mean_var_grad(p).unwrap();
                assert!(rel(g.mean, mv.mean, 1.0) < 1e-14 && rel(g.var, mv.var, 1e-12) < 1e-12);
            }
            let xs = points(70, d, 98);
            let mut batch = vec![cabo_core::MeanVar::default(); 70];
            post.mean_var_batch(&xs, &mut batch);
            for (p, b) in xs.chunks_exact(d).zip(&batch) {
                let one = post.mean_var(p);
                assert!(rel(b.mean, one.mean, 1.0) < 1e-13);
                assert!(rel(b.var, one.var, 1e-12) < 1e-10);
            }
        }
    }
}

/// Oracle: `log N(y; μ, ΦΦᵀ + σ²I)` with the inverse and determinant from Gaussian
/// elimination. Both forms of the model's likelihood equal it to 1e-10 relative, and each
/// other's value and gradient to 1e-10, on either side of n = m.
#[test]
fn marginal_likelihood_equals_a_dense_evaluation_in_both_forms() {
    let d = 2;
    for kind in [KernelKind::Rbf, KernelKind::Matern32] {
        for (n, m) in [(12, 30), (40, 16)] {
            let f = features(kind, &[0.25, 0.6], 0.8, m, 3);
            let x = points(n, d, 4);
            let y: Vec<f64> = x.chunks_exact(d).map(target).collect();
            let (noise, mean) = (2e-3, 0.3);
            let phi = design(&f, &x);
            let mut k = vec![0.0; n * n];
            for i in 0..n {
                for j in 0..n {
                    k[i * n + j] = (0..m).map(|c| phi[i * m + c] * phi[j * m + c]).sum::<f64>();
                }
                k[i * n + i] += noise;
            }
            let r: Vec<f64> = y.iter().map(|v| v - mean).collect();
            let alpha = dense_solve(&k, &r);
            let quad: f64 = r.iter().zip(&alpha).map(|(a, b)| a * b).sum();
            let want = -0.5 * quad
                - 0.5 * dense_log_det(&k, n)
                - 0.5 * n as f64 * (2.0 * std::f64::consts::PI).ln();
            let (vw, gw) = log_marginal_likelihood(&f, noise, mean, &x, &y, Form::Weights)
                .unwrap()
                .unwrap();
            let (vd, gd) = log_marginal_likelihood(&f, noise, mean, &x, &y, Form::Data)
                .unwrap()
                .unwrap();
            assert!(
                rel(vw, want, 1.0) < 1e-10,
                "{kind:?} n={n}: weights {vw} vs {want}"
            );
            assert!(
                rel(vd, want, 1.0) < 1e-10,
                "{kind:?} n={n}: data {vd} vs {want}"
            );
            let flat = |g: &cabo_gp::LikelihoodGradient| {
                let mut v = g.lengthscales.clone();
                v.extend([g.outputscale, g.noise, g.mean]);
                v
            };
            for (a, b) in flat(&gw).iter().zip(&flat(&gd)) {
                assert!(
                    rel(*a, *b, 1.0) < 1e-10,
                    "{kind:?} n={n}: gradient {a} vs {b}"
                );
            }
        }
    }
}

/// Oracle: refitting with the fantasised observations appended to the data (same features,
/// hyperparameters and output transform, Σ in the cheaper form for the n + 3 points).
/// Conditioning by rank-one updates, from either form, equals it to 1e-10 in means,
/// variances, covariances and weights, at once or one observation at a time.
#[test]
fn fantasies_equal_refitting_with_the_observations_appended() {
    let d = 2;
    for kind in [KernelKind::Matern52, KernelKind::Rbf] {
        for ((n, m), form) in [(10, 48), (50, 24)]
            .into_iter()
            .flat_map(|s| FORMS.map(|f| (s, f)))
        {
            let f = features(kind, &[0.3, 0.4], 1.1, m, 21);
            let (noise, mean) = (1e-3, -0.4);
            let (post, x, y) = posterior_in(&f, n, noise, mean, TRANSFORM, form);
            let xs = [0.15, 0.8, 0.55, 0.35, 0.9, 0.05];
            let ys = [5.0, -2.0, 9.5];
            let cond = post.condition_many(&xs, &ys).unwrap();
            let one_by_one = post
                .condition_many(&xs[..2], &ys[..1])
                .unwrap()
                .condition_many(&xs[2..], &ys[1..])
                .unwrap();
            let (mut x2, mut y2) = (x.clone(), y.clone());
            x2.extend_from_slice(&xs);
            y2.extend_from_slice(&ys);
            let refit = RfGpPosterior::new(
                Arc::clone(&f),
                noise,
                mean,
                TrainingData {
                    dim: d,
                    x: &x2,
                    y: &y2,
                },
                TRANSFORM,
            )
            .unwrap();
            assert_eq!(cond.len(), n + 3);
            for (a, b) in cond.weight_mean().iter().zip(refit.weight_mean()) {
                assert!(
                    rel(*a, *b, 1.0) < 1e-10,
                    "{kind:?} n={n} {form:?}: w {a} vs {b}"
                );
            }
            let cov = |p: &RfGpPosterior, a: &[f64], b: &[f64]| {
                let c = Posterior::covariance(p).unwrap();
                let (mut pa, mut pb) = (PreparedPoint::default(), PreparedPoint::default());
                c.prepare(a, false, &mut pa);
                c.prepare(b, false, &mut pb);
                c.cov(&pa, &pb, &mut [], &mut [])
            };
            let pts = points(6, d, 77);
            for (i, p) in pts.chunks_exact(d).enumerate() {
                for q in [&cond, &one_by_one] {
                    let (u, v) = (q.mean_var(p), refit.mean_var(p));
                    assert!(
                        rel(u.mean, v.mean, 1.0) < 1e-10,
                        "{kind:?} n={n} {form:?} mean {i}"
                    );
                    assert!(
                        rel(u.var, v.var, 1e-10) < 1e-10,
                        "{kind:?} n={n} {form:?} var {i}"
                    );
                    let other = &pts[((i + 1) % 6) * d..((i + 1) % 6 + 1) * d];
                    let (cu, cv) = (cov(q, p, other), cov(&refit, p, other));
                    assert!(
                        (cu - cv).abs() < 1e-10 * v.var.max(1e-6),
                        "{kind:?} {form:?} cov {i}"
                    );
                }
            }
        }
    }
}

/// Covariances against fantasies: observing y at b (noise σ²) leaves the variance at a as
/// `var(a) − cov(a, b)²/(var(b) + σ²)`, whatever y. A prepared point's mean and variance
/// are those of `mean_var`.
#[test]
fn covariances_agree_with_conditioning() {
    let d = 3;
    let f = features(KernelKind::Matern52, &[0.3, 0.5, 0.4], 1.0, 64, 8);
    for form in FORMS {
        let (post, _, _) = posterior_in(&f, 20, 1e-2, 0.0, TRANSFORM, form);
        let c = Posterior::covariance(&post).unwrap();
        let pts = points(5, d, 31);
        let (mut pa, mut pb) = (PreparedPoint::default(), PreparedPoint::default());
        for a in pts.chunks_exact(d) {
            c.prepare(a, true, &mut pa);
            let mv = post.mean_var(a);
            assert!(rel(pa.mean, mv.mean, 1.0) < 1e-13 && rel(pa.var, mv.var, 1e-12) < 1e-12);
            for b in pts.chunks_exact(d) {
                if a == b {
                    continue;
                }
                c.prepare(b, false, &mut pb);
                let k = c.cov(&pa, &pb, &mut [], &mut []);
                let after = post.condition_many(b, &[1.7]).unwrap().mean_var(a).var;
                let want = mv.var - k * k / (pb.var + c.fantasy_noise());
                assert!(rel(after, want, 1e-8) < 1e-9, "{form:?}: {after} vs {want}");
            }
        }
    }
}

/// The exact GP as the features grow. `φ(x)ᵀφ(x')` is a mean of m i.i.d. terms with mean
/// `k(x, x')`, so kernel entries — and the posterior, a smooth function of them — carry a
/// Monte Carlo error of standard deviation O(m^{-1/2}) and a bias of O(1/m). Over R = 64
/// independent bases per size m = 256, 1024, 4096, 16384, with fixed hyperparameters equal
/// to the exact GP's, for RBF and Matérn-5/2:
/// - the root-mean-square error (over the bases and 5 points) of the mean and of the
///   variance falls at every step, and by a factor in [1/16, 1/4] from m = 256 to
///   m = 16384: the rate m^{-1/2} gives 1/8, an error that stalls gives 1, one of order
///   1/m gives 1/64 (measured: 0.13–0.14);
/// - at m = 16384 the average error at each point is within 4 standard errors (its spread
///   over the bases, /√R) of 0: features that converge to another kernel (a wrong spectral
///   density or lengthscale scaling) leave a bias that fails this.
///
/// One test because both checks read one table of errors: its 64 posteriors per size and
/// kernel, up to 16384 features each, are the expensive part, and the rate check (every
/// size) and the bias check (the largest) are two readings of it.
#[test]
fn posterior_approaches_the_exact_gp_at_the_monte_carlo_rate() {
    let (n, d, reps) = (8, 2, 64);
    let x = points(n, d, 5);
    let y: Vec<f64> = x.chunks_exact(d).map(target).collect();
    let data = TrainingData {
        dim: d,
        x: &x,
        y: &y,
    };
    let test = points(5, d, 6);
    let (ls, noise) = (0.3, 1e-2);
    for kind in [KernelKind::Rbf, KernelKind::Matern52] {
        let exact = ExactGp::new(GpConfig::fixed(kind, Lengthscale::Scalar(ls), 1.0, noise))
            .unwrap()
            .fit(data, 0)
            .unwrap();
        let truth: Vec<_> = test.chunks_exact(d).map(|p| exact.mean_var(p)).collect();
        // RMS (mean, variance) per m; errors[r][point] = (mean error, variance error)
        let mut rms = Vec::new();
        for m in [256usize, 1024, 4096, 16384] {
            let errors: Vec<Vec<(f64, f64)>> = (0..reps)
                .map(|r| {
                    let basis = UnitBasis::draw(kind, d, m, 1000 + r).unwrap();
                    let f = basis
                        .features(Kernel::new(kind, vec![ls; d], 1.0).unwrap())
                        .unwrap();
                    let post = RfGpPosterior::new(
                        Arc::new(f),
                        noise,
                        0.0,
                        data,
                        OutputTransform::IDENTITY,
                    )
                    .unwrap();
                    test.chunks_exact(d)
                        .zip(&truth)
                        .map(|(p, t)| {
                            let a = post.mean_var(p);
                            (a.mean - t.mean, a.var - t.var)
                        })
                        .collect()
                })
                .collect();
            let all = (reps as usize * truth.len()) as f64;
            let sq = |f: &dyn Fn(&(f64, f64)) -> f64| {
                (errors.iter().flatten().map(|e| f(e).powi(2)).sum::<f64>() / all).sqrt()
            };
            rms.push((sq(&|e| e.0), sq(&|e| e.1)));
            if m == 16384 {
                for i in 0..truth.len() {
                    for (what, pick) in [("mean", 0), ("variance", 1)] {
                        let e: Vec<f64> = errors
                            .iter()
                            .map(|r| if pick == 0 { r[i].0 } else { r[i].1 })
                            .collect();
                        let rf = reps as f64;
                        let avg = e.iter().sum::<f64>() / rf;
                        let sd =
                            (e.iter().map(|v| (v - avg).powi(2)).sum::<f64>() / (rf - 1.0)).sqrt();
                        assert!(
                            avg.abs() < 4.0 * sd / rf.sqrt(),
                            "{kind:?} point {i} {what}: average error {avg} (sd {sd})"
                        );
                    }
                }
            }
        }
        for w in rms.windows(2) {
            assert!(w[1].0 < w[0].0 && w[1].1 < w[0].1, "{kind:?}: {rms:?}");
        }
        let last = rms.len() - 1;
        for (what, a, b) in [
            ("mean", rms[0].0, rms[last].0),
            ("variance", rms[0].1, rms[last].1),
        ] {
            let ratio = b / a;
            assert!(
                (1.0 / 16.0..=0.25).contains(&ratio),
                "{kind:?} {what}: rms error {a} at m = 256, {b} at m = 16384 (ratio {ratio})"
            );
        }
    }
}

/// Sample paths draw the weights exactly (in either form of Σ), so over N = 4000 paths the mean at each point is
/// within 4 standard errors `√(var/N)` of the posterior mean and the sample variance within
/// 4 standard errors `var·√(2/(N − 1))` of the posterior variance; the same holds for the
/// Fourier draws, which are functions on the model's own basis.
#[test]
fn draws_have_the_posterior_moments() {
    let d = 2;
    let f = features(KernelKind::Matern52, &[0.3, 0.4], 1.0, 96, 12);
    for form in FORMS {
        let (post, _, _) = posterior_in(&f, 25, 1e-3, 0.1, TRANSFORM, form);
        let count = 4000;
        let pts = points(5, d, 13);
        let paths: Vec<Box<dyn cabo_core::Objective + Send + Sync>> = (0..count)
            .map(|s| post.sample_path(s as u64).unwrap())
            .collect();
        let draws = post.draw(1024, count, 9).unwrap();
        assert_eq!(
            draws.features(),
            96,
            "the draws are on the model's own basis"
        );
        assert_eq!(draws.frequencies, f.frequencies());
        assert_eq!(draws.count(), count);
        let fourier = |s: usize, p: &[f64]| {
            let m = draws.features();
            draws.offset
                + (0..m)
                    .map(|k| {
                        let w = &draws.frequencies[k * d..(k + 1) * d];
                        let a: f64 =
                            w.iter().zip(p).map(|(u, v)| u * v).sum::<f64>() + draws.phases[k];
                        draws.weights[s * m + k] * a.cos()
                    })
                    .sum::<f64>()
        };
        for p in pts.chunks_exact(d) {
            let mv = post.mean_var(p);
            let check = |values: Vec<f64>, what: &str| {
                let nf = values.len() as f64;
                let mean = values.iter().sum::<f64>() / nf;
                let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (nf - 1.0);
                let se = (mv.var / nf).sqrt();
                assert!(
                    (mean - mv.mean).abs() < 4.0 * se,
                    "{what}: mean {mean} vs {}",
                    mv.mean
                );
                let se_var = mv.var * (2.0 / (nf - 1.0)).sqrt();
                assert!(
                    (var - mv.var).abs() < 4.0 * se_var,
                    "{what}: var {var} vs {}",
                    mv.var
                );
            };
            check(paths.iter().map(|s| s.value(p)).collect(), "paths");
            check((0..count).map(|s| fourier(s, p)).collect(), "fourier");
        }
    }
}
