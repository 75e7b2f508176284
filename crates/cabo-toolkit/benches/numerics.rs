//! Throughput of the shared EI numerics.
//! Run with `cargo bench -p cabo-toolkit`.

use cabo_core::Rng;
use cabo_toolkit::numerics::{ei_grad, log_ei_grad, log_h_grad};
use divan::black_box;

fn main() {
    divan::main();
}

/// 1024 arguments spread over every branch of ln h: (−1e8, 10).
fn arguments() -> Vec<f64> {
    let mut rng = Rng::new(1);
    (0..1024)
        .map(|_| {
            let e = rng.uniform_in(-1.0, 8.0);
            if rng.uniform() < 0.1 {
                rng.uniform_in(-1.0, 10.0)
            } else {
                -(10f64).powf(e)
            }
        })
        .collect()
}

#[divan::bench]
fn log_h_with_gradient_1024(bencher: divan::Bencher) {
    let us = arguments();
    bencher.bench(|| us.iter().map(|&u| log_h_grad(black_box(u)).1).sum::<f64>());
}

#[divan::bench]
fn ei_with_gradient_1024(bencher: divan::Bencher) {
    let us = arguments();
    bencher.bench(|| {
        us.iter()
            .map(|&u| ei_grad(black_box(u * 0.01), 0.7, 0.0).d_sigma)
            .sum::<f64>()
    });
}

#[divan::bench]
fn log_ei_with_gradient_1024(bencher: divan::Bencher) {
    let us = arguments();
    bencher.bench(|| {
        us.iter()
            .map(|&u| log_ei_grad(black_box(u), 0.7, 0.0).d_mean)
            .sum::<f64>()
    });
}
