//! Conditioning by Cholesky extension equals refitting with the extra points (1e-10), and
//! posterior sample paths have the posterior's moments.

mod common;
use cabo_core::capability::{Fantasize, SamplePaths};
use cabo_core::{Posterior, TrainingData};
use cabo_gp::{GpPosterior, Kernel, KernelKind, OutputTransform};
use common::*;

fn build(x: &[f64], y: &[f64], t: OutputTransform, kind: KernelKind) -> GpPosterior {
    let kernel = Kernel::new(kind, vec![0.25, 0.4, 0.3], 1.7).unwrap();
    GpPosterior::new(kernel, 1e-4, 0.1, TrainingData { dim: 3, x, y }, t).unwrap()
}

#[test]
fn conditioning_equals_refitting() {
    let d = 3;
    let x = points(20, d, 21);
    let y: Vec<f64> = x.chunks_exact(d).map(target).collect();
    let extra_x = points(3, d, 22);
    let extra_y = [0.5, -1.2, 2.0];
    let tests = points(10, d, 23);
    let mut worst = 0.0f64;
    for kind in KINDS {
        for t in [OutputTransform::IDENTITY, OutputTransform::standardize(&y)] {
            let base = build(&x, &y, t, kind);
            // One point through the trait, three at once through the concrete type.
            let one = base.condition(&extra_x[..d], &extra_y[..1]).unwrap();
            let many = base.condition_many(&extra_x, &extra_y).unwrap();
            for (k, cond) in [(1usize, one.as_ref()), (3, &many as &dyn Posterior)] {
                let mut xx = x.clone();
                xx.extend_from_slice(&extra_x[..k * d]);
                let mut yy = y.clone();
                yy.extend_from_slice(&extra_y[..k]);
                let refit = build(&xx, &yy, t, kind);
                for p in tests.chunks_exact(d) {
                    let (a, b) = (cond.mean_var(p), refit.mean_var(p));
                    let em = (a.mean - b.mean).abs() / b.mean.abs().max(1e-3);
                    let ev = (a.var - b.var).abs() / b.var;
                    worst = worst.max(em).max(ev);
                    assert!(em < 1e-10 && ev < 1e-10, "{kind:?} k={k}: {a:?} vs {b:?}");
                }
            }
            assert_eq!(many.len(), 23);
            assert_eq!(many.train_x().len(), 23 * d);
            assert!((many.train_y()[22] - 2.0).abs() < 1e-12);
            // The base posterior is untouched.
            assert_eq!(base.len(), 20);
        }
    }
    println!("max relative deviation from refitting: {worst:.3e}");
}

#[test]
fn sample_paths_have_posterior_moments() {
    let d = 3;
    let x = points(10, d, 31);
    let y: Vec<f64> = x.chunks_exact(d).map(target).collect();
    let post = build(
        &x,
        &y,
        OutputTransform::standardize(&y),
        KernelKind::Matern52,
    );
    let p = [0.5, 0.5, 0.5];
    let mv = post.mean_var(&p);
    let draws = 600;
    for blr in [false, true] {
        let (mut s1, mut s2) = (0.0, 0.0);
        for seed in 0..draws {
            let v = if blr {
                cabo_core::Objective::value(&post.rff_blr_sample(seed).unwrap(), &p)
            } else {
                post.sample_path(seed).unwrap().value(&p)
            };
            s1 += v;
            s2 += v * v;
        }
        let n = draws as f64;
        let mean = s1 / n;
        let var = s2 / n - mean * mean;
        let se_mean = (mv.var / n).sqrt();
        assert!(
            (mean - mv.mean).abs() < 5.0 * se_mean,
            "blr={blr}: mean {mean} vs {}",
            mv.mean
        );
        // Sample variance has relative standard error √(2/n) ≈ 0.058.
        assert!(
            (var / mv.var - 1.0).abs() < 5.0 * (2.0 / n).sqrt(),
            "blr={blr}: var {var} vs {}",
            mv.var
        );
    }
}
