//! Multi-start maximisation: known maximisers, the box, determinism, initial conditions and
//! bad input.

// Numeric tests index several parallel arrays at once.
#![allow(clippy::needless_range_loop)]

use cabo_core::{Objective, OptimizerSettings, Result};
use cabo_optim::multistart::initial_conditions;
use cabo_optim::{MaximizeOptions, Maximum, Start, Tolerances, maximize};
use std::cell::RefCell;

/// A closure-backed objective that records every point it is asked about.
struct Fn<F: core::ops::Fn(&[f64], &mut [f64]) -> f64> {
    dim: usize,
    f: F,
    non_negative: bool,
    seen: RefCell<Vec<Vec<f64>>>,
}

impl<F: core::ops::Fn(&[f64], &mut [f64]) -> f64> Fn<F> {
    fn new(dim: usize, f: F) -> Self {
        Fn {
            dim,
            f,
            non_negative: false,
            seen: RefCell::new(Vec::new()),
        }
    }
}

impl<F: core::ops::Fn(&[f64], &mut [f64]) -> f64> Objective for Fn<F> {
    fn value(&self, x: &[f64]) -> f64 {
        self.seen.borrow_mut().push(x.to_vec());
        (self.f)(x, &mut vec![0.0; x.len()])
    }
    fn value_grad(&self, x: &[f64], grad: &mut [f64]) -> f64 {
        self.seen.borrow_mut().push(x.to_vec());
        (self.f)(x, grad)
    }
    fn non_negative(&self) -> bool {
        self.non_negative
    }
}

/// [`maximize`] over the whole cube.
fn maximize_cube<F: core::ops::Fn(&[f64], &mut [f64]) -> f64>(
    f: &Fn<F>,
    settings: &OptimizerSettings,
    seed: u64,
) -> Result<Maximum> {
    maximize(f, f.dim, settings, seed, &MaximizeOptions::default())
}

/// [`maximize`] over the box `[lower, upper]`.
fn maximize_in<F: core::ops::Fn(&[f64], &mut [f64]) -> f64>(
    f: &Fn<F>,
    settings: &OptimizerSettings,
    seed: u64,
    lower: &[f64],
    upper: &[f64],
) -> Result<Maximum> {
    let options = MaximizeOptions {
        bounds: Some((lower, upper)),
        ..MaximizeOptions::default()
    };
    maximize(f, f.dim, settings, seed, &options)
}

/// Separable and multimodal: each factor cos(3πt)·exp(−t²) of t = x_i − c_i has its global
/// maximum 1 at t = 0 and local maxima exp(−4/9) ≈ 0.64 at t = ±2/3.
fn bumps(c: &[f64], x: &[f64], g: &mut [f64]) -> f64 {
    let k = 3.0 * std::f64::consts::PI;
    let mut v = 0.0;
    for i in 0..x.len() {
        let t = x[i] - c[i];
        let e = (-t * t).exp();
        v += (k * t).cos() * e;
        g[i] = -k * (k * t).sin() * e - 2.0 * t * (k * t).cos() * e;
    }
    v
}

#[test]
fn finds_the_maximiser_of_a_multimodal_function_to_1e_6() {
    for (d, seed) in [(1, 0u64), (3, 1), (6, 2)] {
        let c: Vec<f64> = (0..d)
            .map(|i| 0.15 + 0.7 * ((i * 7 + 3) % 10) as f64 / 10.0)
            .collect();
        let f = Fn::new(d, |x: &[f64], g: &mut [f64]| bumps(&c, x, g));
        let m = maximize_cube(&f, &OptimizerSettings::default(), seed).unwrap();
        for i in 0..d {
            assert!((m.x[i] - c[i]).abs() < 1e-6, "d = {d}: {:?} vs {c:?}", m.x);
        }
        assert!((m.value - d as f64).abs() < 1e-10);
        for x in f.seen.borrow().iter() {
            assert!(
                x.iter().all(|v| (0.0..=1.0).contains(v)),
                "outside the cube: {x:?}"
            );
        }
    }
}

#[test]
fn finds_a_branin_minimiser_to_1e_6() {
    // Negated Branin on the unit cube; its three global minimisers are known in closed form.
    use std::f64::consts::PI;
    let branin = |x: &[f64], g: &mut [f64]| {
        let (u, v) = (15.0 * x[0] - 5.0, 15.0 * x[1]);
        let (b, c, t) = (5.1 / (4.0 * PI * PI), 5.0 / PI, 1.0 / (8.0 * PI));
        let q = v - b * u * u + c * u - 6.0;
        let f = q * q + 10.0 * (1.0 - t) * u.cos() + 10.0;
        g[0] = -15.0 * (2.0 * q * (-2.0 * b * u + c) - 10.0 * (1.0 - t) * u.sin());
        g[1] = -15.0 * 2.0 * q;
        -f
    };
    let minimisers = [(-PI, 12.275), (PI, 2.275), (3.0 * PI, 2.475)];
    let f = Fn::new(2, branin);
    let m = maximize_cube(&f, &OptimizerSettings::default(), 3).unwrap();
    let hit = minimisers.iter().any(|&(u, v)| {
        ((u + 5.0) / 15.0 - m.x[0]).abs() < 1e-6 && (v / 15.0 - m.x[1]).abs() < 1e-6
    });
    assert!(hit, "{m:?}");
    assert!(
        (m.value + 0.397_887_357_729_738).abs() < 1e-12,
        "{}",
        m.value
    );
}

#[test]
fn maximisers_on_the_boundary_are_exact() {
    let c = [-0.3, 0.4, 1.7, 0.9];
    let f = Fn::new(4, |x: &[f64], g: &mut [f64]| {
        let mut v = 0.0;
        for i in 0..4 {
            v -= (i + 1) as f64 * (x[i] - c[i]).powi(2);
            g[i] = -2.0 * (i + 1) as f64 * (x[i] - c[i]);
        }
        v
    });
    let m = maximize_cube(&f, &OptimizerSettings::default(), 0).unwrap();
    assert_eq!(m.x[0], 0.0);
    assert_eq!(m.x[2], 1.0);
    assert!(
        (m.x[1] - 0.4).abs() < 1e-9 && (m.x[3] - 0.9).abs() < 1e-9,
        "{m:?}"
    );
}

#[test]
fn results_are_deterministic_in_the_seed() {
    let c = [0.2, 0.8, 0.5];
    let run = |seed| {
        let f = Fn::new(3, |x: &[f64], g: &mut [f64]| bumps(&c, x, g));
        let settings = OptimizerSettings {
            raw_samples: 64,
            restarts: 4,
            max_iters: 5,
        };
        let m = maximize_cube(&f, &settings, seed).unwrap();
        (m, f.seen.borrow().clone())
    };
    assert_eq!(run(5), run(5));
    assert_ne!(run(5).1, run(6).1);
}

/// A broad hump of height 1 at (0.2, …, 0.2) plus a ridge of height 2 and width 1e-3 where
/// the first coordinate is `spike`: raw samples almost never land on the ridge.
fn hump_and_ridge(spike: f64, x: &[f64], g: &mut [f64]) -> f64 {
    let broad: f64 = x.iter().map(|v| (v - 0.2).powi(2)).sum();
    let (b, n) = (
        (-broad).exp(),
        2.0 * (-((x[0] - spike) / 1e-3).powi(2)).exp(),
    );
    for i in 0..x.len() {
        g[i] = -2.0 * (x[i] - 0.2) * b;
    }
    g[0] -= 2.0 * (x[0] - spike) / 1e-6 * n;
    b + n
}

#[test]
fn warm_and_partial_starts_reach_what_raw_samples_miss() {
    let spike = 0.731;
    let f = Fn::new(2, |x: &[f64], g: &mut [f64]| hump_and_ridge(spike, x, g));
    let settings = OptimizerSettings {
        raw_samples: 32,
        restarts: 2,
        max_iters: 100,
    };
    let plain = maximize_cube(&f, &settings, 4).unwrap();
    assert_eq!(plain.start, Start::Raw);
    assert!(plain.value < 1.5, "{plain:?}");

    let near = [vec![spike + 2e-4, 0.5]];
    let options = MaximizeOptions {
        warm_starts: &near,
        ..MaximizeOptions::default()
    };
    let warm = maximize(&f, 2, &settings, 4, &options).unwrap();
    assert_eq!(warm.start, Start::Warm(0));
    assert!(
        (warm.x[0] - spike).abs() < 1e-6 && warm.value > 2.0,
        "{warm:?}"
    );

    // Only the first coordinate is given; the second comes from the best raw sample.
    let leads = [vec![0.5], vec![spike]];
    let options = MaximizeOptions {
        partial_starts: &leads,
        ..MaximizeOptions::default()
    };
    let partial = maximize(&f, 2, &settings, 4, &options).unwrap();
    assert_eq!(partial.start, Start::Partial(1));
    assert!((partial.x[0] - spike).abs() < 1e-6, "{partial:?}");
    assert!((partial.x[1] - 0.2).abs() < 1e-6, "{partial:?}");
}

#[test]
fn looser_tolerances_stop_sooner() {
    let c = [0.2, 0.8, 0.5];
    let evaluations = |tolerances: Tolerances| {
        let f = Fn::new(3, |x: &[f64], g: &mut [f64]| bumps(&c, x, g));
        let options = MaximizeOptions {
            tolerances,
            ..MaximizeOptions::default()
        };
        let m = maximize(&f, 3, &OptimizerSettings::default(), 2, &options).unwrap();
        assert!((m.value - 3.0).abs() < 1e-6, "{m:?}");
        f.seen.borrow().len()
    };
    assert!(evaluations(Tolerances::SCIPY) < evaluations(Tolerances::TIGHT));
}

#[test]
fn fixed_coordinates_stay_fixed_and_the_rest_is_optimised() {
    let c = [0.3, 0.6, 0.7];
    let f = Fn::new(3, |x: &[f64], g: &mut [f64]| bumps(&c, x, g));
    let lower = [0.0, 0.25, 0.5];
    let upper = [1.0, 0.25, 0.6];
    let m = maximize_in(&f, &OptimizerSettings::default(), 1, &lower, &upper).unwrap();
    assert_eq!(m.x[1], 0.25);
    assert!((m.x[0] - 0.3).abs() < 1e-6, "{m:?}");
    assert_eq!(m.x[2], 0.6);
    for x in f.seen.borrow().iter() {
        assert_eq!(x[1], 0.25);
        assert!((0.5..=0.6).contains(&x[2]));
    }
    // A single-point box just evaluates it.
    let m = maximize_in(&f, &OptimizerSettings::default(), 1, &[0.3; 3], &[0.3; 3]).unwrap();
    assert_eq!(m.x, vec![0.3; 3]);
}

#[test]
fn non_negative_objectives_with_flat_zero_regions() {
    // A narrow EI-like bump: zero (to machine precision) on most of the cube.
    let c = [0.71, 0.33];
    let mut f = Fn::new(2, |x: &[f64], g: &mut [f64]| {
        let r2 = (x[0] - c[0]).powi(2) + (x[1] - c[1]).powi(2);
        let v = (-200.0 * r2).exp();
        g[0] = -400.0 * (x[0] - c[0]) * v;
        g[1] = -400.0 * (x[1] - c[1]) * v;
        v
    });
    f.non_negative = true;
    let m = maximize_cube(&f, &OptimizerSettings::default(), 0).unwrap();
    assert!(
        (m.x[0] - c[0]).abs() < 1e-6 && (m.x[1] - c[1]).abs() < 1e-6,
        "{m:?}"
    );
}

#[test]
fn non_finite_regions_are_survived_and_all_nan_is_an_error() {
    // −∞ on the left half (an acquisition that is undefined there), a bump on the right.
    let f = Fn::new(1, |x: &[f64], g: &mut [f64]| {
        if x[0] < 0.5 {
            g[0] = 0.0;
            return f64::NEG_INFINITY;
        }
        g[0] = -2.0 * (x[0] - 0.8);
        -(x[0] - 0.8).powi(2)
    });
    let m = maximize_cube(&f, &OptimizerSettings::default(), 0).unwrap();
    assert!((m.x[0] - 0.8).abs() < 1e-8, "{m:?}");
    let f = Fn::new(2, |_: &[f64], _: &mut [f64]| f64::NAN);
    let e = maximize_cube(&f, &OptimizerSettings::default(), 0).unwrap_err();
    assert!(e.to_string().contains("not finite"), "{e}");
}

#[test]
fn bad_input_is_a_clear_error() {
    let f = Fn::new(2, |_: &[f64], g: &mut [f64]| {
        g.fill(0.0);
        0.0
    });
    let bad = OptimizerSettings {
        raw_samples: 4,
        restarts: 5,
        max_iters: 10,
    };
    let e = maximize_cube(&f, &bad, 0).unwrap_err();
    assert!(e.to_string().contains("restarts"), "{e}");
    let e = maximize_in(&f, &OptimizerSettings::default(), 0, &[0.0], &[1.0]).unwrap_err();
    assert!(e.to_string().contains("dimension 2"), "{e}");
    let e = maximize_in(
        &f,
        &OptimizerSettings::default(),
        0,
        &[0.0, 0.5],
        &[1.0, 0.4],
    )
    .unwrap_err();
    assert!(e.to_string().contains("0 ≤ lower ≤ upper ≤ 1"), "{e}");
    let e = maximize_in(
        &f,
        &OptimizerSettings::default(),
        0,
        &[-0.1, 0.0],
        &[1.0, 1.0],
    )
    .unwrap_err();
    assert!(e.to_string().contains("bound 0"), "{e}");
    let f0 = Fn::new(0, |_: &[f64], _: &mut [f64]| 0.0);
    assert!(maximize_cube(&f0, &OptimizerSettings::default(), 0).is_err());
    let short = [vec![0.5]];
    let options = MaximizeOptions {
        warm_starts: &short,
        ..MaximizeOptions::default()
    };
    let e = maximize(&f, 2, &OptimizerSettings::default(), 0, &options).unwrap_err();
    assert!(e.to_string().contains("warm start"), "{e}");
    let long = [vec![0.5; 3]];
    let options = MaximizeOptions {
        partial_starts: &long,
        ..MaximizeOptions::default()
    };
    let e = maximize(&f, 2, &OptimizerSettings::default(), 0, &options).unwrap_err();
    assert!(e.to_string().contains("partial start"), "{e}");
}

fn distinct(v: &[usize]) -> bool {
    let mut s = v.to_vec();
    s.sort_unstable();
    s.windows(2).all(|w| w[0] != w[1])
}

#[test]
fn boltzmann_initial_conditions_keep_the_best_and_favour_high_values() {
    let values: Vec<f64> = (0..200).map(|i| ((i * 37) % 200) as f64 / 200.0).collect();
    let best = values
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .unwrap()
        .0;
    let mut top_half = 0;
    let mut total = 0;
    for seed in 0..200 {
        let picks = initial_conditions(&values, 10, false, seed);
        assert_eq!(picks.len(), 10);
        assert!(distinct(&picks));
        assert!(picks.contains(&best));
        for &p in &picks {
            total += 1;
            top_half += usize::from(values[p] >= 0.5);
        }
    }
    // Oracle: a single draw with weights exp(z) (z standardised with the n − 1 variance) lands
    // in the top half with probability Σ_top e^z / Σ e^z ≈ 0.85 (0.5 would mean no
    // preference). 2000 draws give a standard error of 0.008; drawing 10 of 200 without
    // replacement moves the share by less than 0.01.
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let sd = (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    let w: Vec<f64> = values.iter().map(|v| ((v - mean) / sd).exp()).collect();
    let p_top = values
        .iter()
        .zip(&w)
        .filter(|(v, _)| **v >= 0.5)
        .map(|(_, w)| w)
        .sum::<f64>()
        / w.iter().sum::<f64>();
    let share = top_half as f64 / total as f64;
    assert!((share - p_top).abs() < 0.03, "{share} vs {p_top}");
    assert_eq!(
        initial_conditions(&values, 10, false, 3),
        initial_conditions(&values, 10, false, 3)
    );
}

#[test]
fn initial_conditions_edge_cases() {
    // Equal values: a random subset (still distinct, and deterministic in the seed).
    let flat = vec![1.0; 50];
    let p = initial_conditions(&flat, 5, false, 1);
    assert!(p.len() == 5 && distinct(&p));
    // Non-finite values are never chosen while finite ones remain.
    let mut v: Vec<f64> = (0..50).map(|i| i as f64).collect();
    for x in v.iter_mut().take(40) {
        *x = f64::NAN;
    }
    let p = initial_conditions(&v, 5, false, 2);
    assert!(p.iter().all(|&i| i >= 40) && p.contains(&49), "{p:?}");
    // n ≥ number of values: all of them.
    assert_eq!(initial_conditions(&[1.0, 2.0], 5, false, 0), vec![0, 1]);
}

#[test]
fn non_negative_initial_conditions() {
    // Few positive values: all are kept, the rest filled at random.
    let mut v = vec![0.0; 100];
    v[10] = 0.5;
    v[20] = 2.0;
    let p = initial_conditions(&v, 6, true, 4);
    assert!(
        p.len() == 6 && distinct(&p) && p.contains(&10) && p.contains(&20),
        "{p:?}"
    );
    // No positive value: random but distinct.
    let p = initial_conditions(&[0.0; 30], 6, true, 4);
    assert!(p.len() == 6 && distinct(&p));
    // Many positive values: only points with v ≥ 1e-4 · max qualify, the best always.
    let v: Vec<f64> = (0..300)
        .map(|i| if i % 3 == 0 { 1e-9 } else { (i % 17) as f64 })
        .collect();
    for seed in 0..20 {
        let p = initial_conditions(&v, 10, true, seed);
        assert!(p.len() == 10 && distinct(&p));
        assert!(p.iter().all(|&i| v[i] >= 16.0 * 1e-4), "{p:?}");
        assert!(p.iter().any(|&i| v[i] == 16.0));
    }
}
