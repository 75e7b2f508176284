//! α(x) against an independent high-precision root of EI = λc.
//!
//! The oracle never touches Φ, erfc or the crate's `log h`: for `u < 0`, with `a = −u`,
//! `h(u) = E[(Z + u)⁺] = φ(a)·J(a)`, `J(a) = ∫₀^∞ t·e^{−a t − t²/2} dt`, a smooth integral
//! computed by composite Gauss–Legendre; for `u ≥ 0`, `h(u) = u + h(−u)`. The root of
//! `ln σ + ln h(u) = ln(λc)` is then found by 200 bisection steps.

mod common;

use cabo_pbgi::index::{gittins_index, solve_u};
use common::{gauss_legendre, integrate};
use std::f64::consts::PI;

struct Oracle {
    rule: (Vec<f64>, Vec<f64>),
}

impl Oracle {
    /// J(a) for a ≥ 0, relative accuracy ~1e-15.
    fn j(&self, a: f64) -> f64 {
        if a >= 1.0 {
            // s = a t: J = a⁻² ∫₀^∞ s e^{−s − s²/(2a²)} ds; the integrand is < e^{−60} past 60.
            let f = |s: f64| s * (-s - s * s / (2.0 * a * a)).exp();
            integrate(&f, 0.0, 60.0, 120, &self.rule) / (a * a)
        } else {
            let f = |t: f64| t * (-a * t - 0.5 * t * t).exp();
            integrate(&f, 0.0, 40.0, 120, &self.rule)
        }
    }

    /// ln h(u).
    fn ln_h(&self, u: f64) -> f64 {
        let ln_phi = |z: f64| -0.5 * z * z - 0.5 * (2.0 * PI).ln();
        if u < 0.0 {
            ln_phi(u) + self.j(-u).ln()
        } else {
            (u + (ln_phi(u) + self.j(u).ln()).exp()).ln()
        }
    }

    /// u with ln h(u) = ln r, by 200 bisection steps on [−60, r + 1].
    fn root(&self, r: f64) -> f64 {
        let target = r.ln();
        let (mut lo, mut hi) = (-60.0, r + 1.0);
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if self.ln_h(mid) < target {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        0.5 * (lo + hi)
    }
}

#[test]
fn alpha_matches_bisection_oracle_from_1e_minus_300_to_1e3() {
    let oracle = Oracle {
        rule: gauss_legendre(20),
    };
    // Sanity of the oracle itself: h(0) = φ(0), h(u) → u.
    assert!((oracle.ln_h(0.0) - (-0.5 * (2.0 * PI).ln())).abs() < 1e-14);
    let ratios = [
        1e-300, 1e-250, 1e-200, 1e-150, 1e-100, 1e-50, 1e-30, 1e-20, 1e-10, 1e-5, 1e-3, 0.03, 0.1,
        0.3989, 0.399, 0.5, 1.0, 2.5, 7.0, 39.0, 41.0, 100.0, 1e3,
    ];
    let mut worst_u: f64 = 0.0;
    let mut worst_alpha: f64 = 0.0;
    let mut checked = 0;
    for &r in &ratios {
        let u_ref = oracle.root(r);
        let (u, _) = solve_u(r).unwrap();
        let rel_u = (u - u_ref).abs() / u_ref.abs().max(1e-300);
        assert!(
            rel_u < 1e-10,
            "r = {r}: u = {u}, oracle {u_ref}, rel {rel_u}"
        );
        worst_u = worst_u.max(rel_u);
        for mean in [-3.0, 0.0, 0.7, 1e3] {
            for sigma in [1e-6, 0.01, 1.0, 50.0] {
                let kappa = r * sigma; // λ·c
                let alpha = gittins_index(mean, sigma, kappa).unwrap();
                let alpha_ref = mean - sigma * u_ref;
                // Relative to the size of the two terms α is formed from (α itself can be 0).
                let scale = alpha_ref.abs().max(mean.abs()).max(sigma * u_ref.abs());
                let rel = (alpha - alpha_ref).abs() / scale;
                assert!(
                    rel < 1e-10,
                    "mean {mean}, sigma {sigma}, lambda c {kappa}: alpha {alpha}, oracle {alpha_ref}, rel {rel}"
                );
                worst_alpha = worst_alpha.max(rel);
                checked += 1;
            }
        }
    }
    assert_eq!(checked, ratios.len() * 16);
    eprintln!("worst relative error: u {worst_u:.2e}, alpha {worst_alpha:.2e}");
}

#[test]
fn index_properties() {
    // EI(α) = λc, α decreasing in λ, α ≥ μ when λc small (EI(μ) = σφ(0) > λc).
    let oracle = Oracle {
        rule: gauss_legendre(20),
    };
    for (mean, sigma) in [(0.0, 1.0), (2.0, 0.3), (-1.0, 4.0)] {
        let c = 1.7;
        let mut previous = f64::INFINITY;
        for e in (-12..=2).map(|e| 10f64.powi(e)) {
            let alpha = gittins_index(mean, sigma, e * c).unwrap();
            assert!(alpha < previous, "alpha must decrease in lambda");
            previous = alpha;
            if e * c < sigma * 0.398 {
                assert!(
                    alpha > mean,
                    "lambda c below EI(mu) must give alpha above mu"
                );
            }
            // EI(α) = σ h((μ − α)/σ), in logs through the independent oracle.
            let ln_ei = sigma.ln() + oracle.ln_h((mean - alpha) / sigma);
            assert!((ln_ei - (e * c).ln()).abs() < 1e-10, "EI(alpha) = lambda c");
        }
    }
}
