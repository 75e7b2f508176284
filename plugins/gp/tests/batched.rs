//! The exact GP's batched predictions have the bits of its single-point ones, whatever the
//! grouping: the optimiser evaluates all its active searches at once, and no decision may
//! depend on that.

mod common;
use cabo_core::{MeanVar, MeanVarGrad, Posterior, TrainingData};
use cabo_gp::{ExactGp, GpConfig, GpPosterior, KernelKind, Lengthscale};
use common::*;

fn fitted(kind: KernelKind, n: usize, d: usize, standardize: bool, noise: f64) -> GpPosterior {
    let x = points(n, d, 3);
    let y: Vec<f64> = x.chunks_exact(d).map(|p| 5.0 * target(p) - 1.0).collect();
    let ls = Lengthscale::PerDim((0..d).map(|j| 0.2 + 0.1 * j as f64).collect());
    let mut config = GpConfig::fixed(kind, ls, 1.7, noise);
    config.standardize = standardize;
    ExactGp::new(config)
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

/// Random points plus the first and last training points (where the variance sits at its floor and its
/// gradient is zero) and a corner of the cube.
fn queries(post: &GpPosterior, d: usize) -> Vec<f64> {
    let train = post.train_x();
    let mut xs = points(41, d, 17);
    xs.extend_from_slice(&train[..d.min(train.len())]);
    xs.extend(vec![1.0; d]);
    xs.extend_from_slice(&train[train.len().saturating_sub(d)..]);
    xs
}

fn bits(g: &MeanVarGrad) -> Vec<u64> {
    [g.mean, g.var]
        .iter()
        .chain(&g.dmean)
        .chain(&g.dvar)
        .map(|v| v.to_bits())
        .collect()
}

#[test]
fn batched_gradients_have_the_bits_of_single_ones_in_any_grouping() {
    for kind in KINDS {
        // Noise 1e-12 puts the variance at training points on its floor (zero gradient).
        let cases = [
            (0, 2, false, 1e-6),
            (1, 3, true, 1e-6),
            (37, 3, false, 1e-12),
            (70, 6, true, 1e-6),
            (20, 70, false, 1e-6),
        ];
        for (n, d, standardize, noise) in cases {
            let post = fitted(kind, n.max(1), d, standardize, noise);
            let post = if n == 0 { prior_of(&post) } else { post };
            let xs = queries(&post, d);
            if noise < 1e-10 {
                let at_training_point = post.mean_var_grad(&post.train_x()[..d]).unwrap();
                assert!(
                    at_training_point.dvar.iter().all(|&g| g == 0.0),
                    "{kind:?}: not on the floor"
                );
            }
            let single: Vec<Vec<u64>> = xs
                .chunks_exact(d)
                .map(|x| bits(&post.mean_var_grad(x).unwrap()))
                .collect();
            for group in [1, 2, 3, 16, 17, 44] {
                let mut batched = Vec::new();
                for chunk in xs.chunks(group * d) {
                    batched.extend(post.mean_var_grads(chunk));
                }
                assert_eq!(batched.len(), single.len());
                for (i, (b, s)) in batched.iter().zip(&single).enumerate() {
                    assert_eq!(
                        &bits(b.as_ref().unwrap()),
                        s,
                        "{kind:?} n={n} d={d} group {group} point {i}"
                    );
                }
            }
        }
    }
}

/// The prior of a fitted posterior's model: the same hyperparameters, no data.
fn prior_of(post: &GpPosterior) -> GpPosterior {
    GpPosterior::new(
        post.kernel().clone(),
        post.model_noise_variance(),
        post.mean_constant(),
        TrainingData {
            dim: post.dim(),
            x: &[],
            y: &[],
        },
        post.output_transform(),
    )
    .unwrap()
}

/// The gradient path's mean and variance equal the plain prediction's, computed through
/// other loops (one kernel value at a time, one triangular solve), bit for bit; and the
/// batched plain predictions (another layout again) agree to rounding.
#[test]
fn gradient_path_moments_match_the_plain_predictions() {
    for kind in KINDS {
        let post = fitted(kind, 37, 4, true, 1e-6);
        let xs = queries(&post, 4);
        let mut batch = vec![MeanVar::default(); xs.len() / 4];
        post.mean_var_batch(&xs, &mut batch);
        for (x, b) in xs.chunks_exact(4).zip(&batch) {
            let g = post.mean_var_grad(x).unwrap();
            let mv = post.mean_var(x);
            assert_eq!(
                (g.mean.to_bits(), g.var.to_bits()),
                (mv.mean.to_bits(), mv.var.to_bits()),
                "{kind:?}"
            );
            assert!(
                rel(b.mean, mv.mean, 1e-3) < 1e-12 && rel(b.var, mv.var, 1e-6) < 1e-9,
                "{kind:?}"
            );
        }
    }
}

/// The covariance capability's prepared points hold the kernel rows and Jacobian of
/// `Kernel::cross_grad_x` bit for bit (they are computed with the training inputs laid out
/// by coordinate), so every scenario tree sees the numbers it saw before.
#[test]
fn prepared_points_have_the_bits_of_the_kernels_rows() {
    use cabo_core::capability::{Covariance, PreparedPoint};
    for kind in KINDS {
        for d in [1, 3, 8, 33] {
            let post = fitted(kind, 29, d, true, 1e-6);
            let train = post.train_x().to_vec();
            let n = train.len() / d;
            for x in points(5, d, 23).chunks_exact(d) {
                let mut p = PreparedPoint::default();
                post.prepare(x, true, &mut p);
                let (mut k, mut jac, mut w) = (vec![0.0; n], vec![0.0; n * d], vec![0.0; n]);
                post.kernel()
                    .cross_grad_x(x, &train, &mut k, &mut jac, &mut w);
                post.cholesky().solve_lower_in_place(&mut k);
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&p.v), bits(&k), "{kind:?} d = {d}");
                assert_eq!(bits(&p.jv), bits(&jac), "{kind:?} d = {d}");
            }
        }
    }
}

/// Points prepared together (a scenario tree's nodes, their solves sharing the factor) have
/// the bits of points prepared one at a time, with and without gradients, in reused slots,
/// and with no training data.
#[test]
fn points_prepared_together_have_the_bits_of_single_ones() {
    use cabo_core::capability::{Covariance, PreparedPoint};
    let bits = |p: &PreparedPoint| -> Vec<u64> {
        [p.mean, p.var]
            .iter()
            .chain(&p.dmean)
            .chain(&p.dvar)
            .chain(&p.x)
            .chain(&p.v)
            .chain(&p.u)
            .chain(&p.jv)
            .map(|v| v.to_bits())
            .collect()
    };
    for kind in KINDS {
        for (n, d, noise) in [(0, 3, 1e-6), (1, 2, 1e-6), (37, 3, 1e-12), (70, 6, 1e-6)] {
            let post = fitted(kind, n.max(1), d, true, noise);
            let post = if n == 0 { prior_of(&post) } else { post };
            let xs = queries(&post, d);
            let count = xs.len() / d;
            // Slots filled with gradients first, then reused without, as a tree reuses them.
            let mut together = vec![PreparedPoint::default(); count];
            for grad in [true, false] {
                post.prepare_many(&xs, grad, &mut together);
                for (i, (x, t)) in xs.chunks_exact(d).zip(&together).enumerate() {
                    let mut single = PreparedPoint::default();
                    post.prepare(x, grad, &mut single);
                    assert_eq!(
                        bits(t),
                        bits(&single),
                        "{kind:?} n={n} d={d} grad={grad} point {i}"
                    );
                }
            }
        }
    }
}
