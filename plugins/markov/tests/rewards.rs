//! Reward quadrature against independent adaptive references, and the conditional laws.

use cabo_markov::reward::{GAUSS_NODES, gauss_interval_reward};
use cabo_markov::{Grid, Kernel, Prior, Reward};

/// Adaptive Simpson to an absolute tolerance (the reference rule).
fn simpson(f: &dyn Fn(f64) -> f64, a: f64, b: f64, tol: f64) -> f64 {
    // Interval, its three samples, the whole-interval estimate, tolerance and depth.
    #[allow(clippy::too_many_arguments)]
    fn rec(
        f: &dyn Fn(f64) -> f64,
        a: f64,
        b: f64,
        fa: f64,
        fm: f64,
        fb: f64,
        whole: f64,
        tol: f64,
        depth: u32,
    ) -> f64 {
        let m = 0.5 * (a + b);
        let (lm, rm) = (0.5 * (a + m), 0.5 * (m + b));
        let (flm, frm) = (f(lm), f(rm));
        let left = (m - a) / 6.0 * (fa + 4.0 * flm + fm);
        let right = (b - m) / 6.0 * (fm + 4.0 * frm + fb);
        if depth == 0 || (left + right - whole).abs() <= 15.0 * tol {
            return left + right + (left + right - whole) / 15.0;
        }
        rec(f, a, m, fa, flm, fm, left, tol / 2.0, depth - 1)
            + rec(f, m, b, fm, frm, fb, right, tol / 2.0, depth - 1)
    }
    let (fa, fm, fb) = (f(a), f(0.5 * (a + b)), f(b));
    let whole = (b - a) / 6.0 * (fa + 4.0 * fm + fb);
    rec(f, a, b, fa, fm, fb, whole, tol, 48)
}

fn phi(z: f64) -> f64 {
    cabo_core::normal::cdf(z)
}

/// The Gaussian-prior rule against adaptive Simpson in x on the raw integrand: worst error
/// over a spread of endpoint values, interval lengths and both reward families.
#[test]
fn gaussian_reward_matches_adaptive_reference() {
    let rule = cabo_markov::reward::gauss_rule();
    let mut worst: f64 = 0.0;
    let rewards = [
        Reward::Indicator { threshold: 0.0 },
        Reward::TruncatedLinear {
            threshold: 0.3,
            clip: 0.8,
        },
    ];
    for reward in &rewards {
        let k = reward.threshold();
        for &len in &[0.01, 0.1, 1.0] {
            for &(ya, yb) in &[
                (0.0, 0.0),
                (0.5, -0.7),
                (-1.2, 0.05),
                (2.0, 1.5),
                (0.31, 0.29),
                (0.0, 1.0),
                (-0.01, 0.02),
            ] {
                let got = gauss_interval_reward(reward, 1.0, 1.0, 0.0, len, ya, yb, &rule);
                let f = |x: f64| {
                    let u = x / len;
                    let mu = ya + u * (yb - ya) - k;
                    let s = (len * u * (1.0 - u)).sqrt();
                    if s == 0.0 {
                        match reward {
                            // At an observed point the class is known exactly.
                            Reward::Indicator { .. } => 1.0,
                            Reward::TruncatedLinear { clip, .. } => mu.abs().min(*clip),
                        }
                    } else {
                        reward.gauss_value(mu, s)
                    }
                };
                let reference = simpson(&f, 0.0, len, 1e-14 * len);
                worst = worst.max((got - reference).abs() / len);
            }
        }
    }
    println!("Gaussian reward rule ({GAUSS_NODES} nodes/piece): worst error / length = {worst:e}");
    assert!(worst < 1e-10, "worst relative error {worst:e}");
}

#[test]
fn truncated_linear_gauss_value_matches_direct_integration() {
    let reward = Reward::TruncatedLinear {
        threshold: 0.0,
        clip: 1.3,
    };
    for &(mu, s) in &[(0.2, 0.5), (-1.0, 2.0), (3.0, 0.7), (0.0, 1.0)] {
        let f = |y: f64| {
            (y.clamp(-1.3, 1.3)) * (-(y - mu) * (y - mu) / (2.0 * s * s)).exp()
                / (s * (2.0 * std::f64::consts::PI).sqrt())
        };
        let direct = simpson(&f, mu - 12.0 * s, mu + 12.0 * s, 1e-13).abs();
        let got = reward.gauss_value(mu, s);
        assert!(
            (got - direct).abs() < 1e-11,
            "({mu},{s}): {got} vs {direct}"
        );
    }
    // Indicator: max(Φ(μ/s), Φ(−μ/s)).
    let ind = Reward::Indicator { threshold: 0.0 };
    assert!((ind.gauss_value(-0.4, 0.8) - phi(0.5)).abs() < 1e-15);
}

fn cp_grid(n: usize, half: f64, m: usize) -> Grid {
    Grid {
        length: 1.0,
        x_levels: m,
        y_min: -half,
        y_max: half,
        y_levels: n,
    }
}

/// The lattice compound-Poisson reward against adaptive Simpson in t on the class
/// probabilities computed from first principles (jump counts, convolution powers).
#[test]
fn lattice_reward_matches_adaptive_reference() {
    let (rate, n, half, m) = (20.0, 21, 6.0, 5);
    let grid = cp_grid(n, half, m);
    let dy = grid.dy();
    let reward = Reward::Indicator { threshold: 0.0 };
    let s = cabo_markov::Setup {
        prior: Prior::CompoundPoisson { rate, jump_sd: 1.0 },
        reward: reward.clone(),
        grid: grid.clone(),
        cost: 0.01,
    };
    let sol = cabo_markov::Solution::solve(&s, &Default::default()).unwrap();
    // Independent increment law: jumps N(0,1) rounded to the lattice, Poisson counts.
    let jw = 60i64;
    let jump: Vec<f64> = (-jw..=jw)
        .map(|j| phi((j as f64 + 0.5) * dy) - phi((j as f64 - 0.5) * dy))
        .collect();
    let lat = 120i64;
    let width = (2 * lat + 1) as usize;
    let mut powers = vec![vec![0.0; width]];
    powers[0][lat as usize] = 1.0;
    for _ in 0..90 {
        let prev = powers.last().unwrap();
        let mut next = vec![0.0; width];
        for (i, &p) in prev.iter().enumerate() {
            if p == 0.0 {
                continue;
            }
            for (k, &q) in jump.iter().enumerate() {
                let t = i as i64 + k as i64 - jw;
                if (0..width as i64).contains(&t) {
                    next[t as usize] += p * q;
                }
            }
        }
        powers.push(next);
    }
    let incr = |t: f64, j: i64| -> f64 {
        if j.abs() > lat {
            return 0.0;
        }
        let lam = rate * t;
        let mut w = (-lam).exp();
        let mut acc = 0.0;
        for (nn, p) in powers.iter().enumerate() {
            if nn > 0 {
                w *= lam / nn as f64;
            }
            acc += w * p[(j + lat) as usize];
        }
        acc
    };
    let mut worst: f64 = 0.0;
    for &d in &[1usize, 2, 4] {
        let len = d as f64 * grid.dx();
        for &(il, ir) in &[(10usize, 10usize), (7, 13), (12, 9), (3, 18), (10, 15)] {
            let dd = ir as i64 - il as i64;
            let f = |t: f64| {
                let (mut z, mut plus, mut minus) = (0.0, 0.0, 0.0);
                for j in -lat..=lat {
                    let p = incr(t * len, j) * incr((1.0 - t) * len, dd - j);
                    z += p;
                    let y = grid.y(il) + j as f64 * dy;
                    if y >= -1e-9 {
                        plus += p;
                    }
                    if y <= 1e-9 {
                        minus += p;
                    }
                }
                plus.max(minus) / z
            };
            let reference = len * simpson(&f, 0.0, 1.0, 1e-12);
            let got = sol.reward(0, d, il, ir);
            worst = worst.max((got - reference).abs() / len);
        }
    }
    println!("lattice reward: worst error / length = {worst:e}");
    assert!(worst < 1e-9, "worst relative error {worst:e}");
}

#[test]
fn brownian_rows_are_the_bridge_cell_masses() {
    let grid = Grid {
        length: 1.0,
        x_levels: 11,
        y_min: -2.0,
        y_max: 2.0,
        y_levels: 21,
    };
    let k = Kernel::new(&Prior::Brownian { scale: 1.3 }, &grid).unwrap();
    let mut row = vec![0.0; 21];
    let (d, e, il, ir) = (7usize, 3usize, 4usize, 15usize);
    k.row(2, d, e, il, ir, &mut row);
    let (t1, t2) = (e as f64 * 0.1, (d - e) as f64 * 0.1);
    let mean = grid.y(il) + t1 / (t1 + t2) * (grid.y(ir) - grid.y(il));
    let sd = 1.3 * (t1 * t2 / (t1 + t2)).sqrt();
    let dy = grid.dy();
    for (w, &p) in row.iter().enumerate() {
        let lo = if w == 0 {
            f64::NEG_INFINITY
        } else {
            (grid.y(w) - dy / 2.0 - mean) / sd
        };
        let hi = if w == 20 {
            f64::INFINITY
        } else {
            (grid.y(w) + dy / 2.0 - mean) / sd
        };
        let expect = phi(hi) - phi(lo);
        assert!((p - expect).abs() < 1e-14, "level {w}: {p} vs {expect}");
    }
    assert!((row.iter().sum::<f64>() - 1.0).abs() < 1e-14);
}

/// Chapman–Kolmogorov for the lattice: summing the unnormalised bridge over every lattice
/// level gives the whole-span increment law, so the conditional law sums to one without
/// renormalisation; and the grid law matches a Monte Carlo of the rounded-jump process.
#[test]
fn compound_poisson_conditional_law_sums_to_one_and_matches_monte_carlo() {
    let grid = cp_grid(41, 8.0, 11);
    let prior = Prior::CompoundPoisson {
        rate: 20.0,
        jump_sd: 1.0,
    };
    let k = Kernel::new(&prior, &grid).unwrap();
    // The lattice (±2(n−1) levels = ±32 here, 7 sd of the whole-span increment) cuts off
    // under 1e-9 of mass.
    assert!(k.lattice_tail_mass() < 1e-9, "{}", k.lattice_tail_mass());
    let (d, e, il, ir) = (6usize, 2usize, 20usize, 23usize);
    let (t1, t2) = (e as f64 * grid.dx(), (d - e) as f64 * grid.dx());
    let unnormalised: f64 = (-80i64..=80)
        .map(|j| k.increment_prob(t1, j).unwrap() * k.increment_prob(t2, 3 - j).unwrap())
        .sum();
    let whole = k.increment_prob(t1 + t2, 3).unwrap();
    assert!(
        (unnormalised / whole - 1.0).abs() < 1e-12,
        "Chapman–Kolmogorov: {unnormalised} vs {whole}"
    );
    let mut row = vec![0.0; 41];
    k.row(0, d, e, il, ir, &mut row);
    assert!((row.iter().sum::<f64>() - 1.0).abs() < 1e-14);

    // Monte Carlo: Poisson counts, N(0,1) jumps rounded to the lattice, rejection on the
    // observed total increment, histogram of the interior value.
    let mut rng = cabo_core::Rng::new(42);
    let dy = grid.dy();
    let poisson = |rng: &mut cabo_core::Rng, lam: f64| {
        let (mut n, mut p, l) = (0usize, rng.uniform(), (-lam).exp());
        while p > l {
            n += 1;
            p *= rng.uniform();
        }
        n
    };
    let mut counts = vec![0usize; 41];
    let mut accepted = 0usize;
    while accepted < 200_000 {
        let walk = |rng: &mut cabo_core::Rng, lam: f64| -> i64 {
            (0..poisson(rng, lam))
                .map(|_| (rng.normal() / dy).round() as i64)
                .sum()
        };
        let a = walk(&mut rng, 20.0 * t1);
        let b = walk(&mut rng, 20.0 * t2);
        if a + b != ir as i64 - il as i64 {
            continue;
        }
        let w = il as i64 + a;
        if !(0..41).contains(&w) {
            continue;
        }
        counts[w as usize] += 1;
        accepted += 1;
    }
    for (w, &c) in counts.iter().enumerate() {
        let p_hat = c as f64 / accepted as f64;
        let se = (row[w] * (1.0 - row[w]) / accepted as f64).sqrt().max(1e-6);
        assert!(
            (p_hat - row[w]).abs() < 4.5 * se,
            "level {w}: MC {p_hat} vs exact {}",
            row[w]
        );
    }
}
