//! Properties of the shared EI numerics: accuracy against independent formulas, monotonicity,
//! derivatives against finite differences, and stability out to |u| = 1e99.

use cabo_core::{Rng, normal};
use cabo_toolkit::numerics::{
    MIN_VARIANCE, ei, ei_grad, h, h_grad, log_ei, log_ei_grad, log_h, log_h_grad, sigma_from_var,
};

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs().max(1e-300)
}

/// Relative error below 1e-5, measured against max(|analytic|, 1e-3): derivatives smaller
/// than that (e.g. φ(15) ≈ 5e-50) are below what a difference quotient of O(1) values can
/// resolve, and only need to agree to 1e-8 absolute.
fn close(analytic: f64, numeric: f64) -> bool {
    (analytic - numeric).abs() <= 1e-5 * analytic.abs().max(1e-3)
}

/// Central difference of `f` at `u` with a step relative to |u|.
fn fd(f: impl Fn(f64) -> f64, u: f64) -> f64 {
    let step = 1e-6 * u.abs().max(1.0);
    (f(u + step) - f(u - step)) / (2.0 * step)
}

/// Log-spaced grid of u from −1e99 to +1e3 (both signs of each decade, plus the branch points).
fn extreme_grid() -> Vec<f64> {
    let mut us: Vec<f64> = (-30..=990)
        .map(|k| -(10f64).powf(k as f64 / 10.0))
        .collect();
    us.extend((-30..=30).map(|k| (10f64).powf(k as f64 / 10.0)));
    us.extend([0.0, -1.0, -3.535_533_905_932_737, -1e6]);
    us.sort_by(f64::total_cmp);
    us.dedup();
    us
}

#[test]
fn h_matches_direct_formula_and_exp_log_h() {
    for i in 0..=400 {
        let u = -5.0 + i as f64 * 0.025;
        let direct = normal::pdf(u) + u * normal::cdf(u);
        // Direct summation cancels ~u² of its digits in the lower tail; fine for |u| ≤ 5.
        assert!(rel(h(u), direct) < 1e-12, "u={u}");
        assert!(rel(log_h(u).exp(), h(u)) < 1e-13, "u={u}");
    }
    // Beyond −38.5 φ underflows and so must h; log h stays finite.
    assert_eq!(h(-40.0), 0.0);
    assert!(log_h(-40.0).is_finite());
}

#[test]
fn matches_50_digit_reference_values() {
    // (u, h(u), ln h(u), Φ(u)/h(u)) computed with mpmath at 50 significant digits
    // (`mp.npdf(u) + u*mp.ncdf(u)`); h is omitted where it underflows f64.
    let cases: [(f64, Option<f64>, f64, f64); 12] = [
        (
            -9.95,
            Some(1.242_856_549_666_327_8e-24),
            -55.044_629_832_531_95,
            10.145_306_530_823_78,
        ),
        (
            -5.0,
            Some(5.346_165_533_832_815e-8),
            -16.744_301_162_660_99,
            5.361_816_241_288_088,
        ),
        (
            -3.6,
            Some(3.911_100_554_665_017e-5),
            -10.149_106_658_797_37,
            4.068_128_342_232_34,
        ),
        (
            -3.5,
            Some(5.848_091_842_142_244e-5),
            -9.746_810_037_765_387,
            3.977_862_956_240_946,
        ),
        (
            -2.0,
            Some(8.490_702_616_829_638e-3),
            -4.768_783_523_917_114,
            2.679_416_883_955_586,
        ),
        (
            -1.0,
            Some(8.331_547_058_768_63e-2),
            -2.485_121_025_712_641,
            1.904_271_233_329_692,
        ),
        (
            -20.0,
            Some(1.370_012_494_729_58e-90),
            -206.917_838_509_425_1,
            20.099_262_811_101_78,
        ),
        (
            -37.0,
            Some(1.545_199_190_512_202_5e-301),
            -692.642_960_163_270_4,
            37.053_936_202_404_2,
        ),
        (-1e3, None, -500_014.734_452_091_16, 1_000.001_999_994),
        (-1e5, None, -5_000_000_023.944_789, 100_000.000_019_999_99),
        (-1e6, None, -500_000_000_028.55, 1_000_000.000_002),
        (
            2.0,
            Some(2.008_490_702_616_829_6),
            0.697_383_545_788_228_3,
            0.486_559_318_785_283_9,
        ),
    ];
    for (u, hv, lh, dlh) in cases {
        let (v, g) = log_h_grad(u);
        assert!(rel(v, lh) < 1e-14, "ln h({u}) = {v}, reference {lh}");
        assert!(rel(g, dlh) < 1e-13, "(ln h)'({u}) = {g}, reference {dlh}");
        if let Some(hv) = hv {
            assert!(rel(h(u), hv) < 1e-13, "h({u}) = {}, reference {hv}", h(u));
        }
    }
}

#[test]
fn log_h_is_finite_monotone_with_finite_nonnegative_gradient_to_1e99() {
    let us = extreme_grid();
    let mut prev = f64::NEG_INFINITY;
    for &u in &us {
        let (v, g) = log_h_grad(u);
        assert!(v.is_finite(), "log_h({u}) = {v}");
        assert!(v > prev, "not increasing at u={u}: {v} ≤ {prev}");
        assert!(g.is_finite() && g >= 0.0, "d log_h({u}) = {g}");
        prev = v;
        let (hv, dh) = h_grad(u);
        assert!(
            hv.is_finite() && hv >= 0.0 && dh.is_finite() && dh >= 0.0,
            "u={u}"
        );
    }
    // Leading orders at the extremes: ln h ≈ −u²/2 − ln√(2π) − 2 ln|u|, (ln h)' ≈ |u|.
    let u = -1e99f64;
    let (v, g) = log_h_grad(u);
    assert!(rel(v, -0.5 * u * u - normal::LN_SQRT_2PI - 2.0 * (-u).ln()) < 1e-15);
    assert!(rel(g, -u) < 1e-15);
    // ln h(u) → ln u for large u, with slope Φ(u)/h(u) → 1/u.
    assert!(rel(log_h(1e3), 1e3f64.ln()) < 1e-15);
}

#[test]
fn log_ei_is_monotone_in_u_and_ei_is_monotone_in_best() {
    // LogEI at fixed σ increases with the mean (u), over the whole extreme grid.
    let sigma = 0.7;
    let mut prev = f64::NEG_INFINITY;
    for u in extreme_grid() {
        let v = log_ei(u * sigma, sigma, 0.0);
        assert!(v.is_finite() && v > prev, "u={u}");
        prev = v;
    }
    // EI decreases as the incumbent rises (strictly while EI > 0).
    let mut prev = f64::INFINITY;
    for i in 0..=400 {
        let best = -5.0 + i as f64 * 0.05;
        let v = ei(0.3, 0.8, best);
        assert!(v < prev && v >= 0.0, "best={best}");
        prev = v;
    }
}

#[test]
fn derivatives_match_finite_differences() {
    // h and ln h in u, across every branch (below −1e4 the step needed for an FD grows past
    // what f64 can resolve in ln h ≈ −u²/2, and the asymptotic check above takes over).
    let mut us: Vec<f64> = (-40..=30).map(|k| -(10f64).powf(k as f64 / 10.0)).collect();
    us.extend((-20..=20).map(|k| (10f64).powf(k as f64 / 10.0)));
    us.extend([0.0, -1.0 - 1e-3, -0.999, -3.54, -3.53]);
    for u in us {
        let g = log_h_grad(u).1;
        let f = fd(log_h, u);
        assert!(rel(g, f) < 1e-5, "ln h'({u}): {g} vs {f}");
        if u > -30.0 {
            let g = h_grad(u).1;
            let f = fd(h, u);
            assert!(rel(g, f) < 1e-5, "h'({u}): {g} vs {f}");
        }
    }
    // EI and LogEI in μ and σ at random (μ, σ, best), including far-tail LogEI.
    let mut rng = Rng::new(5);
    for _ in 0..200 {
        let mean = rng.uniform_in(-3.0, 3.0);
        let sigma = rng.uniform_in(0.05, 2.0);
        let best = rng.uniform_in(-2.0, 2.0);
        let g = ei_grad(mean, sigma, best);
        assert_eq!(g.value, ei(mean, sigma, best));
        let fm = fd(|m| ei(m, sigma, best), mean);
        let fs = fd(|s| ei(mean, s, best), sigma);
        assert!(
            close(g.d_mean, fm),
            "EI dμ at {mean},{sigma},{best}: {} vs {fm}",
            g.d_mean
        );
        assert!(
            close(g.d_sigma, fs),
            "EI dσ at {mean},{sigma},{best}: {} vs {fs}",
            g.d_sigma
        );
        for best in [best, best + 30.0 * sigma, best + 3000.0 * sigma] {
            let g = log_ei_grad(mean, sigma, best);
            assert_eq!(g.value, log_ei(mean, sigma, best));
            let fm = fd(|m| log_ei(m, sigma, best), mean);
            let fs = fd(|s| log_ei(mean, s, best), sigma);
            assert!(
                close(g.d_mean, fm),
                "LogEI dμ at {mean},{sigma},{best}: {} vs {fm}",
                g.d_mean
            );
            assert!(
                close(g.d_sigma, fs),
                "LogEI dσ at {mean},{sigma},{best}: {} vs {fs}",
                g.d_sigma
            );
        }
    }
}

#[test]
fn ei_matches_monte_carlo() {
    // E[(f − best)⁺] for f ~ N(μ, σ²) by 400k draws; tolerance 4 standard errors.
    let (mean, sigma, best) = (0.2, 1.3, 0.9);
    let mut rng = Rng::new(17);
    let n = 400_000;
    let (mut s1, mut s2) = (0.0, 0.0);
    for _ in 0..n {
        let imp = (mean + sigma * rng.normal() - best).max(0.0);
        s1 += imp;
        s2 += imp * imp;
    }
    let m = s1 / n as f64;
    let se = ((s2 / n as f64 - m * m) / n as f64).sqrt();
    assert!(
        (ei(mean, sigma, best) - m).abs() < 4.0 * se,
        "{} vs {m} ± {se}",
        ei(mean, sigma, best)
    );
}

#[test]
fn sigma_clamp_follows_botorch() {
    assert_eq!(sigma_from_var(0.25), (0.5, 1.0));
    assert_eq!(sigma_from_var(0.0), (MIN_VARIANCE.sqrt(), 0.0));
    assert_eq!(sigma_from_var(-1e-9).0, 1e-6);
}
