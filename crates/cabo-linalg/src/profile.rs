//! Profiles of stationary kernels: `κ(r²)` and `dκ/d(r²)` of the squared exponential and the
//! Matérn-1/2, 3/2 and 5/2 kernels, with an `exp` of this crate's own so that loops of kernel
//! values vectorise and give the same bits on every machine.

use crate::simd::avx512_dispatch;

/// A stationary kernel's shape as a function of the squared scaled distance `r²`, at unit
/// outputscale (the Matérn distance is *not* pre-scaled by √(2ν); the factor appears inside
/// κ, GPyTorch's convention).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Profile {
    /// Squared exponential `exp(−r²/2)`.
    Rbf,
    /// Matérn-1/2 `exp(−r)`.
    Matern12,
    /// Matérn-3/2 `(1 + √3 r) exp(−√3 r)`.
    Matern32,
    /// Matérn-5/2 `(1 + √5 r + 5r²/3) exp(−√5 r)`.
    Matern52,
}

impl Profile {
    /// Every profile.
    pub const ALL: [Profile; 4] = [
        Profile::Rbf,
        Profile::Matern12,
        Profile::Matern32,
        Profile::Matern52,
    ];

    /// `κ(r²)` and `dκ/d(r²)`. Matérn-1/2's derivative, undefined at r = 0, is 0 there (a
    /// valid subgradient).
    #[inline(always)]
    pub fn value(self, r2: f64) -> (f64, f64) {
        match self {
            Profile::Rbf => rbf(r2),
            Profile::Matern12 => matern12(r2),
            Profile::Matern32 => matern32(r2),
            Profile::Matern52 => matern52(r2),
        }
    }

    /// [`Profile::value`] of every `r2[j]` into `k[j]` and `dk[j]`, as one loop per profile
    /// that the compiler vectorises (the values are the same as one call per entry).
    #[inline(always)]
    pub fn values(self, r2: &[f64], k: &mut [f64], dk: &mut [f64]) {
        #[inline(always)]
        fn each(r2: &[f64], k: &mut [f64], dk: &mut [f64], f: impl Fn(f64) -> (f64, f64)) {
            for ((r, k), dk) in r2.iter().zip(k.iter_mut()).zip(dk.iter_mut()) {
                (*k, *dk) = f(*r);
            }
        }
        match self {
            Profile::Rbf => each(r2, k, dk, rbf),
            Profile::Matern12 => each(r2, k, dk, matern12),
            Profile::Matern32 => each(r2, k, dk, matern32),
            Profile::Matern52 => each(r2, k, dk, matern52),
        }
    }
}

avx512_dispatch! {
    /// In place over `k`: each `r²` becomes `s·κ(r²)`, and `2s·dκ/d(r²)` goes to the same
    /// entry of `c` — the kernel values and gradient weights of one point against many, as
    /// one vectorised loop (the values are those of a [`Profile::value`] call per entry).
    /// Runs with 512-bit vectors where the processor has AVX-512F and with 256-bit ones where
    /// it has AVX2, with bitwise identical results (the loop is elementwise): the profiles'
    /// square roots, division and `exp` polynomial are long dependent chains, and wider
    /// vectors put twice as many entries in flight.
    pub fn scaled_profiles(profile: Profile, s: f64, k: &mut [f64], c: &mut [f64]) {
        #[inline(always)]
        fn each(s: f64, k: &mut [f64], c: &mut [f64], f: impl Fn(f64) -> (f64, f64)) {
            for (kv, cv) in k.iter_mut().zip(c.iter_mut()) {
                let (p, dp) = f(*kv);
                *kv = s * p;
                *cv = 2.0 * s * dp;
            }
        }
        match profile {
            Profile::Rbf => each(s, k, c, rbf),
            Profile::Matern12 => each(s, k, c, matern12),
            Profile::Matern32 => each(s, k, c, matern32),
            Profile::Matern52 => each(s, k, c, matern52),
        }
    }
}

#[inline(always)]
fn rbf(r2: f64) -> (f64, f64) {
    let k = exp(-0.5 * r2);
    (k, -0.5 * k)
}

#[inline(always)]
fn matern12(r2: f64) -> (f64, f64) {
    let r = r2.sqrt();
    let e = exp(-r);
    (e, if r > 0.0 { -0.5 * e / r } else { 0.0 })
}

#[inline(always)]
fn matern32(r2: f64) -> (f64, f64) {
    let a = (3.0 * r2).sqrt();
    let e = exp(-a);
    ((1.0 + a) * e, -1.5 * e)
}

#[inline(always)]
fn matern52(r2: f64) -> (f64, f64) {
    let a = (5.0 * r2).sqrt();
    let e = exp(-a);
    ((1.0 + a + a * a / 3.0) * e, -(5.0 / 6.0) * (1.0 + a) * e)
}

/// `eˣ` for the kernels, within 1 ulp or so of the correctly rounded value on
/// `[−708, 709]`, 0 below (where `eˣ` is under 2⁻¹⁰²¹, i.e. subnormal) and `∞` above; `NaN`
/// stays `NaN`.
///
/// Unlike the C library's `exp` it is branch-free and inlined, so a loop of kernel values
/// vectorises; and it is the same arithmetic on every machine. The argument is reduced as
/// `x = k ln 2 + r` with `|r| ≤ ln 2 / 2` (Cody–Waite, `ln 2` split so `k·LN2_HI` is exact),
/// `eʳ` is its degree-13 Taylor polynomial (truncation error below 10⁻¹⁷ relative), and `2ᵏ`
/// is built in the exponent bits.
#[inline(always)]
pub fn exp(x: f64) -> f64 {
    // fdlibm's split of ln 2: the high part has 32 significant bits, so k·LN2_HI is exact.
    const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
    const LN2_LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76);
    // 1.5·2⁵², whose addition rounds a float of magnitude < 2⁵¹ to an integer held in the
    // low bits of the sum.
    const SHIFT: f64 = 6_755_399_441_055_744.0;
    const C: [f64; 14] = [
        1.0,
        1.0,
        1.0 / 2.0,
        1.0 / 6.0,
        1.0 / 24.0,
        1.0 / 120.0,
        1.0 / 720.0,
        1.0 / 5040.0,
        1.0 / 40320.0,
        1.0 / 362_880.0,
        1.0 / 3_628_800.0,
        1.0 / 39_916_800.0,
        1.0 / 479_001_600.0,
        1.0 / 6_227_020_800.0,
    ];
    let xc = x.clamp(-708.0, 709.0);
    let t = xc * std::f64::consts::LOG2_E + SHIFT;
    let k = t - SHIFT;
    let r = (xc - k * LN2_HI) - k * LN2_LO;
    let mut p = C[13];
    for c in C[..13].iter().rev() {
        p = p * r + c;
    }
    // k (an integer in −1022..=1023) sits in the low bits of t's representation.
    let bits = (t.to_bits().wrapping_sub(SHIFT.to_bits()).wrapping_add(1023)) << 52;
    let y = p * f64::from_bits(bits);
    if x < -708.0 {
        0.0
    } else if x > 709.0 {
        f64::INFINITY
    } else {
        y
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_is_within_two_ulp_of_the_library_exp() {
        // A dense grid over the whole finite range plus the edges and specials.
        let mut worst: f64 = 0.0;
        let n = 2_000_000;
        for i in 0..=n {
            let x = -708.0 + 1417.0 * i as f64 / n as f64;
            let (got, want) = (exp(x), x.exp());
            worst = worst.max(((got - want) / want).abs());
        }
        assert!(worst < 2.0 * f64::EPSILON, "worst relative error {worst:e}");
        for x in [
            0.0,
            -0.0,
            1e-300,
            -1e-300,
            0.5 * std::f64::consts::LN_2,
            -0.3465735902799727,
        ] {
            assert!(
                ((exp(x) - x.exp()) / x.exp()).abs() <= f64::EPSILON,
                "x = {x}"
            );
        }
        assert_eq!(exp(0.0), 1.0);
        assert_eq!(exp(-709.0), 0.0);
        assert_eq!(exp(-1e300), 0.0);
        assert_eq!(exp(f64::NEG_INFINITY), 0.0);
        assert_eq!(exp(710.0), f64::INFINITY);
        assert!(exp(f64::NAN).is_nan());
    }

    #[test]
    fn batched_profiles_equal_single_ones() {
        let r2: Vec<f64> = (0..103).map(|i| (i as f64 * 0.173).powi(2)).collect();
        for profile in Profile::ALL {
            let (mut k, mut dk) = (vec![0.0; r2.len()], vec![0.0; r2.len()]);
            profile.values(&r2, &mut k, &mut dk);
            for (j, r) in r2.iter().enumerate() {
                assert_eq!((k[j], dk[j]), profile.value(*r), "{profile:?} at r² = {r}");
            }
        }
    }

    #[test]
    fn profiles_match_closed_forms_and_derivatives() {
        for profile in Profile::ALL {
            assert_eq!(profile.value(0.0).0, 1.0);
            for r2 in [0.01, 0.3, 1.7, 6.0] {
                let h = 1e-6 * r2;
                let fd = (profile.value(r2 + h).0 - profile.value(r2 - h).0) / (2.0 * h);
                let an = profile.value(r2).1;
                assert!((fd - an).abs() < 1e-7 * an.abs(), "{profile:?} r2={r2}");
            }
        }
        // Matérn-5/2 at r = 1 by hand: (1 + √5 + 5/3) e^{−√5}.
        let s5 = 5f64.sqrt();
        let want = (1.0 + s5 + 5.0 / 3.0) * (-s5).exp();
        assert!((Profile::Matern52.value(1.0).0 - want).abs() < 1e-15);
    }
}
