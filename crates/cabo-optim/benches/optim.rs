//! Speed of the acquisition optimiser's building blocks (`cargo bench -p cabo-optim`).

// Numeric tests index several parallel arrays at once.
#![allow(clippy::needless_range_loop)]

use cabo_core::{Objective, OptimizerSettings};
use cabo_optim::lbfgsb::{LbfgsbOptions, minimize};
use cabo_optim::sobol;
use cabo_optim::{MaximizeOptions, maximize};
use divan::black_box;

fn main() {
    divan::main();
}

/// A smooth, non-separable 16-D test function: a rotated ill-conditioned quadratic plus a
/// sum of cosines, minimised inside the box [-1, 2]^16.
fn smooth16(x: &[f64], g: &mut [f64]) -> f64 {
    let n = x.len();
    let mut f = 0.0;
    g.fill(0.0);
    for i in 0..n {
        let j = (i + 1) % n;
        let t = x[i] - 0.5 * x[j] - 0.1 * i as f64;
        let w = 1.0 + i as f64;
        f += w * t * t + 0.1 * (3.0 * x[i]).cos();
        g[i] += 2.0 * w * t - 0.3 * (3.0 * x[i]).sin();
        g[j] -= w * t;
    }
    f
}

#[divan::bench]
fn lbfgsb_16d_smooth() -> f64 {
    let x0 = [0.3; 16];
    let m = minimize(
        &mut smooth16,
        black_box(&x0),
        &[-1.0; 16],
        &[2.0; 16],
        &LbfgsbOptions::default(),
    );
    m.value
}

/// A cheap 8-D objective on the unit cube (a sum of Gaussian bumps), in the cost range of an
/// analytic acquisition on a small GP.
struct Bumps8;

impl Bumps8 {
    const CENTRES: [[f64; 8]; 3] = [
        [0.2, 0.7, 0.4, 0.9, 0.1, 0.5, 0.3, 0.6],
        [0.8, 0.2, 0.6, 0.3, 0.7, 0.4, 0.9, 0.1],
        [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5],
    ];
}

impl Objective for Bumps8 {
    fn value(&self, x: &[f64]) -> f64 {
        self.value_grad(x, &mut [0.0; 8])
    }
    fn values(&self, xs: &[f64], out: &mut [f64]) {
        let mut g = [0.0; 8];
        for (o, x) in out.iter_mut().zip(xs.chunks_exact(8)) {
            *o = self.value_grad(x, &mut g);
        }
    }
    fn value_grad(&self, x: &[f64], grad: &mut [f64]) -> f64 {
        grad.fill(0.0);
        let mut v = 0.0;
        for (k, c) in Self::CENTRES.iter().enumerate() {
            let h = 1.0 + 0.5 * k as f64;
            let r2: f64 = x.iter().zip(c).map(|(a, b)| (a - b) * (a - b)).sum();
            let e = h * (-8.0 * r2).exp();
            v += e;
            for i in 0..8 {
                grad[i] -= 16.0 * (x[i] - c[i]) * e;
            }
        }
        v
    }
    fn non_negative(&self) -> bool {
        true
    }
}

#[divan::bench]
fn multistart_8d_512_raw_10_restarts() -> f64 {
    let settings = OptimizerSettings {
        raw_samples: 512,
        restarts: 10,
        max_iters: 200,
    };
    let options = MaximizeOptions::default();
    maximize(&Bumps8, 8, &settings, black_box(1), &options)
        .unwrap()
        .value
}

#[divan::bench]
fn sobol_512_points_8d() -> usize {
    sobol::points(512, 8, black_box(3)).len()
}
