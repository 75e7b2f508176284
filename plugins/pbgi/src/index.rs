//! The Pandora's Box Gittins index of a normal reward, `g` solving `EI(μ, σ; g) = κ`, and
//! its partial derivatives.
//!
//! In standardised units `u = (μ − g)/σ` the equation reads `σ·h(u) = κ` with
//! `h(u) = φ(u) + u·Φ(u)` strictly increasing from 0 to ∞, so `u = h⁻¹(κ/σ)` and
//! `g = μ − σ·u`. The ratio `r = κ/σ` spans hundreds of orders of magnitude in practice
//! (λ = 1e-5 times a small cost over a large posterior σ, or a tiny σ at a training point),
//! and `h(u)` underflows below `u ≈ −38.5`, so the equation is solved as
//! `ln h(u) = ln r` with the stable [`log_h_grad`] of `cabo-toolkit`. `ln h` is concave and
//! increasing, and the root is bracketed in closed form:
//!
//! - `r ≥ h(0)`: `h(u) = u + h(−u)` with `0 < h(−u) ≤ h(0)` for `u ≥ 0`, so `u ∈ [r − h(0), r]`;
//! - `r < h(0)`: `h(u) ≤ φ(u)` for `u ≤ 0`, so `u ∈ [−√(−2 ln(r√(2π))), 0]`.
//!
//! Inside the bracket a safeguarded Newton iteration (a bisection step whenever Newton would
//! leave the bracket) converges to a few ulps in a handful of steps; above `r = 40` the
//! root is `u = r` to machine precision (`h(u) − u = h(−u) < 1e-300`).

use cabo_core::normal;
use cabo_toolkit::numerics::{h, log_h_grad};
use std::f64::consts::PI;

/// `h(0) = φ(0) = 1/√(2π)`.
const H0: f64 = 0.398_942_280_401_432_7;

/// Above this ratio `h(u) = u` in f64 (`h(−40) = 0`), so the root is `u = r`.
const LINEAR_ABOVE: f64 = 40.0;

/// Iteration cap of the safeguarded Newton solve; it converges in < 10 steps in practice
/// (Newton from inside a closed-form bracket on a concave function), the cap only bounds
/// pathological inputs.
const MAX_STEPS: usize = 200;

/// The standardised root `u = h⁻¹(r)` of `h(u) = r` for `r > 0` (`r = κ/σ`), with
/// `(ln h)'(u) = Φ(u)/h(u)` at the root.
///
/// Returns `None` when `r` is not a finite positive number.
pub fn solve_u(r: f64) -> Option<(f64, f64)> {
    if !(r.is_finite() && r > 0.0) {
        return None;
    }
    if r >= LINEAR_ABOVE {
        // h(u) = u + h(−u) and h(−u) ≤ h(−40) = 0 in f64.
        return Some((r, normal::cdf(r) / r));
    }
    let target = r.ln();
    let (mut lo, mut hi) = if r >= H0 {
        (r - H0, r)
    } else {
        // ln φ(u) = −u²/2 − ln√(2π) ≤ ln r  ⇔  |u| ≥ √(−2 ln(r√(2π))).
        let t = -2.0 * (target + 0.5 * (2.0 * PI).ln());
        (-t.max(0.0).sqrt(), 0.0)
    };
    // Start from the end of the bracket nearer the root's asymptotics.
    let mut u = if r >= H0 { r } else { lo };
    let (mut f, mut df) = log_h_grad(u);
    f -= target;
    for _ in 0..MAX_STEPS {
        if f == 0.0 {
            break;
        }
        if f > 0.0 {
            hi = u;
        } else {
            lo = u;
        }
        let newton = u - f / df;
        let next = if newton > lo && newton < hi {
            newton
        } else {
            0.5 * (lo + hi)
        };
        if next == u || (hi - lo) <= 4.0 * f64::EPSILON * u.abs().max(1e-300) {
            break;
        }
        // Newton converges quadratically; stop when the step is at the rounding level.
        let step = (next - u).abs();
        u = next;
        let (fv, dv) = log_h_grad(u);
        f = fv - target;
        df = dv;
        if step <= 2.0 * f64::EPSILON * u.abs() {
            break;
        }
    }
    Some((u, df))
}

/// The Gittins index `g` with `EI_{N(mean, sigma²)}(g) = kappa`, for `sigma > 0`, `kappa > 0`.
///
/// `None` for non-finite input or non-positive `sigma`/`kappa`.
pub fn gittins_index(mean: f64, sigma: f64, kappa: f64) -> Option<f64> {
    if !(mean.is_finite() && sigma.is_finite() && sigma > 0.0) {
        return None;
    }
    let (u, _) = solve_u(kappa / sigma)?;
    Some(mean - sigma * u)
}

/// The index with its partial derivatives (Prop. 3 of seed 000, written stably):
/// `∂g/∂μ = 1`, `∂g/∂σ = φ(u)/Φ(u)`, `∂g/∂ln κ = −σ·h(u)/Φ(u)` (= `−κ/Φ(u)`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IndexGrad {
    /// The index g.
    pub value: f64,
    /// The standardised root `u = (μ − g)/σ`.
    pub u: f64,
    /// `∂g/∂σ = φ(u)/Φ(u)`.
    pub d_sigma: f64,
    /// `∂g/∂ln κ = −κ/Φ(u)`, so that `∇g ∋ −(κ/Φ)·∇ln κ = −(λ/Φ)·∇c` for κ = λc.
    pub d_log_kappa: f64,
}

/// [`gittins_index`] with its partial derivatives.
///
/// Differentiating `σ·h(u) = κ` with `h' = Φ` gives Prop. 3; the ratios are formed without
/// dividing by `Φ(u)` itself, which underflows for `u < −38`: with `ψ = Φ/h = (ln h)'`,
/// `φ/Φ = 1/ψ − u` (no cancellation when `u < 0`) and `κ/Φ = σ/ψ`.
pub fn gittins_index_grad(mean: f64, sigma: f64, kappa: f64) -> Option<IndexGrad> {
    if !(mean.is_finite() && sigma.is_finite() && sigma > 0.0) {
        return None;
    }
    let (u, psi) = solve_u(kappa / sigma)?;
    let d_sigma = if u > -1.0 {
        // Φ(u) ≥ 0.16 here, and 1/ψ − u would cancel for large u.
        normal::pdf(u) / normal::cdf(u)
    } else {
        1.0 / psi - u
    };
    Some(IndexGrad {
        value: mean - sigma * u,
        u,
        d_sigma,
        d_log_kappa: -sigma / psi,
    })
}

/// Expected improvement `E[(R − g)⁺]` of `R ~ N(mean, sigma²)` over `g`, i.e. `σ·h((μ − g)/σ)`.
pub fn normal_ei(mean: f64, sigma: f64, g: f64) -> f64 {
    sigma * h((mean - g) / sigma)
}

#[cfg(test)]
mod tests {
    use super::*;
    use cabo_toolkit::numerics::log_h;

    #[test]
    fn root_satisfies_the_equation_in_log_space() {
        for e in -300..=3 {
            for m in [1.0, 3.7] {
                let r = m * 10f64.powi(e);
                let (u, _) = solve_u(r).unwrap();
                let resid = log_h(u) - r.ln();
                assert!(
                    resid.abs() <= 1e-13 * r.ln().abs().max(1.0),
                    "r={r}: u={u}, resid={resid}"
                );
            }
        }
    }

    #[test]
    fn partials_match_finite_differences_down_to_tiny_ratios() {
        // Relative central differences in σ and ln κ; u from ≈ −37 (r = 1e-300) to 1e3.
        let (mean, sigma) = (0.3, 1.7);
        for e in [-300, -200, -100, -30, -8, -2, 0, 1, 3] {
            let kappa = sigma * 10f64.powi(e);
            let ig = gittins_index_grad(mean, sigma, kappa).unwrap();
            let step = 1e-6;
            let g = |s: f64, k: f64| gittins_index(mean, s, k).unwrap();
            let fd_sigma = (g(sigma * (1.0 + step), kappa) - g(sigma * (1.0 - step), kappa))
                / (2.0 * step * sigma);
            let fd_log_kappa =
                (g(sigma, kappa * step.exp()) - g(sigma, kappa * (-step).exp())) / (2.0 * step);
            let rel = |a: f64, b: f64| (a - b).abs() / a.abs().max(b.abs()).max(1e-8);
            assert!(
                rel(ig.d_sigma, fd_sigma) < 1e-6,
                "r = 1e{e}: dσ {} vs {fd_sigma}",
                ig.d_sigma
            );
            assert!(
                rel(ig.d_log_kappa, fd_log_kappa) < 1e-6,
                "r = 1e{e}: d ln κ {} vs {fd_log_kappa}",
                ig.d_log_kappa
            );
        }
    }

    #[test]
    fn bad_ratios_are_rejected() {
        assert!(solve_u(0.0).is_none());
        assert!(solve_u(-1.0).is_none());
        assert!(solve_u(f64::NAN).is_none());
        assert!(solve_u(f64::INFINITY).is_none());
        assert!(gittins_index(0.0, 0.0, 1.0).is_none());
    }
}
