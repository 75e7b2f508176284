//! What running the multi-start searches in lockstep costs on a cheap objective, where the
//! driver's overhead is most visible (`cargo bench -p cabo-optim --bench lockstep`).
//!
//! `maximize_*` is [`maximize`] (lockstep searches, one batched evaluation per round);
//! `sequential_*` is the recipe it replaced, one L-BFGS-B run after another through
//! [`minimize`]; both score the same raw samples and return the same bits (checked before
//! benchmarking). `searches_*` time the local searches alone from the same 80 starts.

use cabo_core::{Objective, OptimizerSettings, derive_seed};
use cabo_optim::lbfgsb::{LbfgsbOptions, Minimum, minimize, minimize_lockstep};
use cabo_optim::multistart::initial_conditions;
use cabo_optim::{MaximizeOptions, Maximum, Start, Tolerances, maximize, sobol};
use divan::black_box;

const D: usize = 8;
const SEED: u64 = 17;

fn main() {
    let f = Sines;
    let lockstep = maximize(&f, D, &SETTINGS, SEED, &MaximizeOptions::default()).unwrap();
    let sequential = sequential_maximize(&f, D, &SETTINGS, SEED);
    assert_eq!(lockstep.x, sequential.x);
    assert_eq!(lockstep.value.to_bits(), sequential.value.to_bits());
    divan::main();
}

/// 200·d raw samples and 10·d restarts at d = 8, as in the papers' settings.
const SETTINGS: OptimizerSettings = OptimizerSettings {
    raw_samples: 200 * D,
    restarts: 10 * D,
    max_iters: 200,
};

/// A cheap multimodal objective: a sum of sines of each coordinate and of their sum.
struct Sines;

impl Objective for Sines {
    fn value(&self, x: &[f64]) -> f64 {
        self.value_grad(x, &mut [0.0; D])
    }

    fn value_grad(&self, x: &[f64], g: &mut [f64]) -> f64 {
        let mut v = 0.0;
        let mut sum = 0.0;
        for i in 0..x.len() {
            let a = 3.0 + 2.0 * i as f64;
            let b = 0.7 * i as f64;
            v += (a * x[i] + b).sin();
            g[i] = a * (a * x[i] + b).cos();
            sum += x[i];
        }
        v += 0.5 * (5.0 * sum).sin();
        let gs = 2.5 * (5.0 * sum).cos();
        for gi in g.iter_mut() {
            *gi += gs;
        }
        v
    }
}

/// The raw samples of [`maximize`] over the whole cube, their values and the restarts.
fn raw_and_starts(f: &dyn Objective, d: usize, s: &OptimizerSettings, seed: u64) -> Raw {
    let xs = sobol::points(s.raw_samples, d, derive_seed(&[&seed, &"raw_samples"]));
    let mut values = vec![0.0; s.raw_samples];
    for (xb, vb) in xs.chunks(1024 * d).zip(values.chunks_mut(1024)) {
        f.values(xb, vb);
    }
    let starts = initial_conditions(
        &values,
        s.restarts,
        f.non_negative(),
        derive_seed(&[&seed, &"initial_conditions"]),
    );
    Raw { xs, values, starts }
}

struct Raw {
    xs: Vec<f64>,
    values: Vec<f64>,
    starts: Vec<usize>,
}

/// L-BFGS-B on −f, one point at a time.
fn search(f: &dyn Objective, x0: &[f64], lower: &[f64], upper: &[f64]) -> Minimum {
    let mut neg = |x: &[f64], g: &mut [f64]| {
        let v = f.value_grad(x, g);
        for gi in g.iter_mut() {
            *gi = -*gi;
        }
        -v
    };
    let opts = LbfgsbOptions::new(SETTINGS.max_iters, Tolerances::TIGHT);
    minimize(&mut neg, x0, lower, upper, &opts)
}

/// [`maximize`] over the whole cube as it ran before lockstep: one search after another.
fn sequential_maximize(f: &dyn Objective, d: usize, s: &OptimizerSettings, seed: u64) -> Maximum {
    let raw = raw_and_starts(f, d, s, seed);
    let (lower, upper) = (vec![0.0; d], vec![1.0; d]);
    let mut best: Option<Maximum> = None;
    let mut consider = |x: Vec<f64>, value: f64| {
        if value.is_finite() && best.as_ref().is_none_or(|b| value > b.value) {
            best = Some(Maximum {
                x,
                value,
                start: Start::Raw,
            });
        }
    };
    for &i in &raw.starts {
        let m = search(f, &raw.xs[i * d..(i + 1) * d], &lower, &upper);
        consider(m.x, -m.value);
    }
    let (i, &v) = (raw.values.iter().enumerate())
        .max_by(|a, b| a.1.total_cmp(b.1).then(b.0.cmp(&a.0)))
        .unwrap();
    consider(raw.xs[i * d..(i + 1) * d].to_vec(), v);
    best.unwrap()
}

#[divan::bench]
fn maximize_8d_1600_raw_80_restarts() -> f64 {
    let m = maximize(
        &Sines,
        D,
        &SETTINGS,
        black_box(SEED),
        &MaximizeOptions::default(),
    );
    m.unwrap().value
}

#[divan::bench]
fn sequential_8d_1600_raw_80_restarts() -> f64 {
    sequential_maximize(&Sines, D, &SETTINGS, black_box(SEED)).value
}

#[divan::bench]
fn searches_lockstep_80_starts(bencher: divan::Bencher) {
    let raw = raw_and_starts(&Sines, D, &SETTINGS, SEED);
    let starts: Vec<&[f64]> = (raw.starts.iter())
        .map(|&i| &raw.xs[i * D..(i + 1) * D])
        .collect();
    let (lower, upper) = ([0.0; D], [1.0; D]);
    let opts = LbfgsbOptions::new(SETTINGS.max_iters, Tolerances::TIGHT);
    bencher.bench_local(|| {
        let mut neg = |xs: &[f64], values: &mut [f64], grads: &mut [f64]| {
            Sines.value_grads(xs, values, grads);
            values.iter_mut().for_each(|v| *v = -*v);
            grads.iter_mut().for_each(|g| *g = -*g);
        };
        minimize_lockstep(&mut neg, black_box(&starts), &lower, &upper, &opts).len()
    });
}

#[divan::bench]
fn searches_sequential_80_starts(bencher: divan::Bencher) {
    let raw = raw_and_starts(&Sines, D, &SETTINGS, SEED);
    let starts: Vec<&[f64]> = (raw.starts.iter())
        .map(|&i| &raw.xs[i * D..(i + 1) * D])
        .collect();
    let (lower, upper) = ([0.0; D], [1.0; D]);
    bencher.bench_local(|| {
        (black_box(&starts).iter())
            .map(|x0| search(&Sines, x0, &lower, &upper).evaluations)
            .sum::<usize>()
    });
}
