//! A fixed-hyperparameter GP refitted on growing data extends its previous Cholesky factor
//! instead of factorising afresh, and gets the same posterior bit for bit.

mod common;
use cabo_core::{Posterior, TrainingData};
use cabo_gp::{ExactGp, GpConfig, GpPosterior, KernelKind, Lengthscale};
use common::*;

fn same_bits(a: &GpPosterior, b: &GpPosterior) {
    assert_eq!(a.cholesky(), b.cholesky());
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(a.alpha()), bits(b.alpha()));
    let x = [0.3, 0.6, 0.1];
    let (ga, gb) = (a.mean_var_grad(&x).unwrap(), b.mean_var_grad(&x).unwrap());
    assert_eq!(
        (ga.mean.to_bits(), ga.var.to_bits()),
        (gb.mean.to_bits(), gb.var.to_bits())
    );
}

/// The posterior of `post`'s model given `data`, factorised from scratch.
fn factorised_afresh(post: &GpPosterior, data: TrainingData<'_>) -> GpPosterior {
    let (kernel, noise, mean) = (
        post.kernel().clone(),
        post.model_noise_variance(),
        post.mean_constant(),
    );
    GpPosterior::new(kernel, noise, mean, data, post.output_transform()).unwrap()
}

#[test]
fn refits_on_grown_data_equal_fresh_factorisations() {
    let d = 3;
    let x = points(60, d, 4);
    let y: Vec<f64> = x.chunks_exact(d).map(target).collect();
    for standardize in [false, true] {
        let mut config = GpConfig::fixed(KernelKind::Matern52, Lengthscale::Scalar(0.3), 1.2, 1e-5);
        config.standardize = standardize;
        let mut model = ExactGp::new(config).unwrap();
        // One point at a time, several at once, none, then data that do not extend the last.
        for n in [5, 6, 7, 11, 29, 29, 60] {
            let data = TrainingData {
                dim: d,
                x: &x[..n * d],
                y: &y[..n],
            };
            let refit = model.fit(data, 0).unwrap();
            same_bits(&refit, &factorised_afresh(&refit, data));
        }
        let shuffled: Vec<f64> = x[d..30 * d].iter().chain(&x[..d]).copied().collect();
        let data = TrainingData {
            dim: d,
            x: &shuffled,
            y: &y[..30],
        };
        let refit = model.fit(data, 0).unwrap();
        same_bits(&refit, &factorised_afresh(&refit, data));
    }
}

#[test]
fn a_grown_factor_is_used_only_for_the_same_model_and_inputs() {
    let d = 3;
    let x = points(20, d, 5);
    let y: Vec<f64> = x.chunks_exact(d).map(target).collect();
    let config = GpConfig::fixed(KernelKind::Rbf, Lengthscale::Scalar(0.4), 1.0, 1e-4);
    let post = ExactGp::new(config)
        .unwrap()
        .fit(
            TrainingData {
                dim: d,
                x: &x[..10 * d],
                y: &y[..10],
            },
            0,
        )
        .unwrap();
    let grown_data = TrainingData {
        dim: d,
        x: &x,
        y: &y,
    };
    let t = post.output_transform();
    assert!(
        post.grown(post.kernel(), 1e-4, post.mean_constant(), grown_data, t)
            .is_some()
    );
    assert!(
        post.grown(post.kernel(), 2e-4, post.mean_constant(), grown_data, t)
            .is_none()
    );
    let mut other = post.kernel().clone();
    other.outputscale = 1.5;
    assert!(
        post.grown(&other, 1e-4, post.mean_constant(), grown_data, t)
            .is_none()
    );
    let moved: Vec<f64> = x.iter().map(|v| v * 0.5).collect();
    let moved_data = TrainingData {
        dim: d,
        x: &moved,
        y: &y,
    };
    assert!(
        post.grown(post.kernel(), 1e-4, post.mean_constant(), moved_data, t)
            .is_none()
    );
}
