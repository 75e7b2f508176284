//! MAP fitting recovers the hyperparameters of data drawn from the GP prior.

mod common;
use cabo_core::{Rng, TrainingData};
use cabo_gp::{ExactGp, GpConfig, Kernel, KernelKind, Prior};
use cabo_linalg::Cholesky;
use common::*;

#[test]
fn map_recovers_known_hyperparameters() {
    let (n, d) = (200, 4);
    let ls = [0.2, 0.3, 0.25, 0.35];
    let (s, noise, mean) = (1.5, 0.1, 0.7);
    let x = points(n, d, 41);
    let kernel = Kernel::new(KernelKind::Matern52, ls.to_vec(), s).unwrap();
    let mut k = kernel.gram(&x);
    for i in 0..n {
        k[i * n + i] += noise;
    }
    let chol = Cholesky::factor(&k, n).unwrap();
    let mut rng = Rng::new(42);
    let z: Vec<f64> = (0..n).map(|_| rng.normal()).collect();
    let y: Vec<f64> = (0..n)
        .map(|i| mean + (0..=i).map(|j| chol.get(i, j) * z[j]).sum::<f64>())
        .collect();
    let mut config = GpConfig::map(KernelKind::Matern52, Prior::Gamma, false);
    config.restarts = 2;
    let mut gp = ExactGp::new(config).unwrap();
    let cold = gp
        .fit(
            TrainingData {
                dim: d,
                x: &x,
                y: &y,
            },
            7,
        )
        .unwrap();
    let cold_iters = cabo_core::Posterior::diagnostics(&cold)["gp.fit.iterations"];
    let hp = gp.hyperparameters().unwrap().clone();
    println!("fitted {hp:?}");
    for (got, want) in hp.lengthscales.iter().zip(ls) {
        assert!(
            (got / want - 1.0).abs() < 0.2,
            "lengthscale {got} vs {want}"
        );
    }
    assert!(
        (hp.outputscale / s - 1.0).abs() < 0.2,
        "outputscale {}",
        hp.outputscale
    );
    assert!((hp.noise / noise - 1.0).abs() < 0.2, "noise {}", hp.noise);
    // A warm-started refit stays put and needs few iterations.
    let post = gp
        .fit(
            TrainingData {
                dim: d,
                x: &x,
                y: &y,
            },
            8,
        )
        .unwrap();
    let again = gp.hyperparameters().unwrap();
    for (a, b) in again.lengthscales.iter().zip(&hp.lengthscales) {
        assert!((a / b - 1.0).abs() < 1e-3);
    }
    let diag = cabo_core::Posterior::diagnostics(&post);
    assert!(
        diag["gp.fit.iterations"] <= 0.5 * cold_iters,
        "{diag:?} vs {cold_iters}"
    );
}

#[test]
fn fitting_is_deterministic() {
    let d = 2;
    let x = points(30, d, 3);
    let y: Vec<f64> = x.chunks_exact(d).map(target).collect();
    let mut config = GpConfig::map(KernelKind::Rbf, Prior::Botorch, true);
    config.restarts = 3;
    let fit = || {
        let mut gp = ExactGp::new(config.clone()).unwrap();
        gp.fit(
            TrainingData {
                dim: d,
                x: &x,
                y: &y,
            },
            5,
        )
        .unwrap();
        gp.hyperparameters().unwrap().clone()
    };
    assert_eq!(fit(), fit());
}
