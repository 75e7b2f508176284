//! Standard-normal numerics that every acquisition shares: density, distribution function,
//! its logarithm accurate far into the lower tail, and the scaled complementary error
//! function `erfcx(x) = exp(x²)·erfc(x)` that keeps those tails finite.

use std::f64::consts::{FRAC_1_SQRT_2, PI};

/// `1/sqrt(2π)`.
pub const INV_SQRT_2PI: f64 = 0.398_942_280_401_432_7;
/// `ln(sqrt(2π))`.
pub const LN_SQRT_2PI: f64 = 0.918_938_533_204_672_8;

/// Standard normal density φ(z).
pub fn pdf(z: f64) -> f64 {
    INV_SQRT_2PI * (-0.5 * z * z).exp()
}

/// Natural log of the standard normal density.
pub fn ln_pdf(z: f64) -> f64 {
    -0.5 * z * z - LN_SQRT_2PI
}

/// Standard normal distribution function Φ(z), accurate in both tails.
pub fn cdf(z: f64) -> f64 {
    0.5 * libm::erfc(-z * FRAC_1_SQRT_2)
}

/// `ln Φ(z)`, finite and accurate for every finite z (down to z = −1e150 and beyond).
pub fn ln_cdf(z: f64) -> f64 {
    if z > -5.0 {
        if z > 0.0 {
            (-0.5 * libm::erfc(z * FRAC_1_SQRT_2)).ln_1p()
        } else {
            cdf(z).ln()
        }
    } else {
        // Φ(z) = erfcx(-z/√2)/2 · exp(-z²/2)
        (0.5 * erfcx(-z * FRAC_1_SQRT_2)).ln() - 0.5 * z * z
    }
}

/// Inverse of Φ (the probit), by Acklam's rational approximation refined with two Halley
/// steps; relative accuracy near machine precision on (0, 1).
pub fn quantile(p: f64) -> f64 {
    if p <= 0.0 {
        return f64::NEG_INFINITY;
    }
    if p >= 1.0 {
        return f64::INFINITY;
    }
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    if p > 0.5 {
        // Symmetry keeps the refinement in the lower tail, where Φ is accurate.
        return -quantile(1.0 - p);
    }
    let mut x = if p < 0.02425 {
        let q = (-2.0 * p.ln()).sqrt();
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    };
    for _ in 0..2 {
        // Halley refinement on Φ(x) − p.
        let e = cdf(x) - p;
        let u = e * (2.0 * PI).sqrt() * (0.5 * x * x).exp();
        x -= u / (1.0 + 0.5 * x * u);
    }
    x
}

/// Scaled complementary error function `erfcx(x) = exp(x²)·erfc(x)`, finite for all x ≥ −26
/// and accurate to about 1e-15 relative for x ≥ 0 (it decays like `1/(x√π)`).
pub fn erfcx(x: f64) -> f64 {
    if x < 0.0 {
        return 2.0 * (x * x).exp() - erfcx(-x);
    }
    if x < 2.5 {
        return (x * x).exp() * libm::erfc(x);
    }
    if x > 1e8 {
        // The continued fraction's first term is already exact to double precision.
        return 1.0 / (x * PI.sqrt());
    }
    // Continued fraction erfc(x) = exp(-x²)/√π · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + …)))),
    // evaluated backwards; 120 terms converge to machine precision for x ≥ 2.5.
    let mut tail = x;
    for k in (1..=120).rev() {
        tail = x + (k as f64 * 0.5) / tail;
    }
    1.0 / (tail * PI.sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cdf_matches_known_values() {
        assert!((cdf(0.0) - 0.5).abs() < 1e-16);
        assert!((cdf(1.959_963_984_540_054) - 0.975).abs() < 1e-15);
        // Φ(−10) = 7.619853024160527e-24 (reference value to 16 digits).
        assert!((cdf(-10.0) / 7.619_853_024_160_527e-24 - 1.0).abs() < 1e-13);
    }

    #[test]
    fn ln_cdf_is_continuous_at_branch_and_right_in_far_tail() {
        let a = ln_cdf(-5.0 + 1e-12);
        let b = ln_cdf(-5.0 - 1e-12);
        assert!((a - b).abs() < 1e-10);
        // ln Φ(z) = −z²/2 − ln(−z) − ln√(2π) − 1/z² + 5/(2z⁴) + O(z⁻⁶) for large −z.
        for z in [-40.0_f64, -1e3, -1e8, -1e150] {
            let z2 = z * z;
            let approx = -0.5 * z2 - (-z).ln() - LN_SQRT_2PI - 1.0 / z2 + 2.5 / (z2 * z2);
            let got = ln_cdf(z);
            assert!(got.is_finite());
            // The omitted O(z⁻⁶) term is 37/(3z⁶): 3e-9 absolute at z = −40.
            assert!(
                ((got - approx) / approx).abs() < 1e-11,
                "z={z}: {got} vs {approx}"
            );
        }
        assert!((ln_cdf(40.0)).abs() < 1e-300);
    }

    #[test]
    fn erfcx_branches_agree() {
        for x in [2.4999_f64, 2.5, 2.5001, 5.0, 20.0] {
            let direct = (x * x).exp() * libm::erfc(x);
            assert!((erfcx(x) / direct - 1.0).abs() < 1e-13, "x={x}");
        }
        let big = 1e9;
        assert!((erfcx(big) * big * PI.sqrt() - 1.0).abs() < 1e-15);
    }

    #[test]
    fn quantile_inverts_cdf() {
        for p in [1e-300, 1e-20, 1e-5, 0.01, 0.3, 0.5, 0.8, 0.99, 1.0 - 1e-12] {
            let z = quantile(p);
            let back = cdf(z);
            assert!((back / p - 1.0).abs() < 1e-10, "p={p}: z={z}, back={back}");
        }
    }
}
