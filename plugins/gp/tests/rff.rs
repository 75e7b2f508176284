//! Statistical check of the random-feature prior: across independent draws (new
//! frequencies, phases and weights each time) the empirical covariance of f at fixed points
//! must equal the kernel within sampling error.

use cabo_core::Objective;
use cabo_gp::{Kernel, KernelKind, RandomFeatures};

#[test]
fn empirical_covariance_matches_the_kernel() {
    let pts: [[f64; 2]; 4] = [[0.1, 0.2], [0.15, 0.3], [0.5, 0.5], [0.9, 0.05]];
    let ls = [0.3, 0.5];
    let s = 1.3;
    let draws = 4000;
    for kind in [
        KernelKind::Rbf,
        KernelKind::Matern12,
        KernelKind::Matern32,
        KernelKind::Matern52,
    ] {
        let kernel = Kernel::new(kind, ls.to_vec(), s).unwrap();
        let mut sum = [[0.0f64; 4]; 4];
        let mut mean = [0.0f64; 4];
        for seed in 0..draws {
            let f = RandomFeatures::new(kind, &ls, s, 256, 1000 + seed).unwrap();
            let v: Vec<f64> = pts.iter().map(|p| f.value(p)).collect();
            for a in 0..4 {
                mean[a] += v[a];
                for b in 0..4 {
                    sum[a][b] += v[a] * v[b];
                }
            }
        }
        let nd = draws as f64;
        for a in 0..4 {
            // Mean zero: standard error sqrt(s/draws).
            assert!(
                (mean[a] / nd).abs() < 5.0 * (s / nd).sqrt(),
                "{kind:?} mean"
            );
            for b in 0..4 {
                let emp = sum[a][b] / nd;
                let k = kernel.value(&pts[a], &pts[b]);
                // For (nearly) Gaussian f, Var[f_a f_b] = k_aa k_bb + k_ab².
                let se = ((s * s + k * k) / nd).sqrt();
                assert!(
                    (emp - k).abs() < 5.0 * se,
                    "{kind:?} ({a},{b}): empirical {emp} vs kernel {k} (se {se})"
                );
            }
        }
    }
}

#[test]
fn same_seed_same_function() {
    let a = RandomFeatures::new(KernelKind::Matern52, &[0.2; 3], 1.0, 1024, 9).unwrap();
    let b = RandomFeatures::new(KernelKind::Matern52, &[0.2; 3], 1.0, 1024, 9).unwrap();
    let c = RandomFeatures::new(KernelKind::Matern52, &[0.2; 3], 1.0, 1024, 10).unwrap();
    let x = [0.3, 0.6, 0.1];
    assert_eq!(a.value(&x), b.value(&x));
    assert_ne!(a.value(&x), c.value(&x));
}
