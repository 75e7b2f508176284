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
    /// Runs with 512-bit vectors where the processor has AVX-512F and AVX-512VL and with
    /// 256-bit ones where it has AVX2, with bitwise identical results (the loop is
    /// elementwise): the profiles'
    /// square roots, division and `exp` polynomial are long dependent chains, and wider
    /// vectors put twice as many entries in flight.
    pub fn scaled_profiles(profile: Profile, s: f64, k: &mut [f64], c: &mut [f64]) {
        /// Blocks of [`PROFILE_LANES`] entries through the shape's lane form, then the rest
        /// one at a time: the same operations per entry.
        #[inline(always)]
        fn each<S: Shape>(s: f64, k: &mut [f64], c: &mut [f64]) {
            let n = k.len().min(c.len());
            let (k, c) = (&mut k[..n], &mut c[..n]);
            let mut kb = k.chunks_exact_mut(PROFILE_LANES);
            let mut cb = c.chunks_exact_mut(PROFILE_LANES);
            for (kv, cv) in (&mut kb).zip(&mut cb) {
                let r2: &Lanes = (&*kv).try_into().expect("a block of lanes");
                let (p, dp) = S::lanes(r2);
                for ((kv, cv), (p, dp)) in kv.iter_mut().zip(cv.iter_mut()).zip(p.iter().zip(&dp)) {
                    *kv = s * p;
                    *cv = 2.0 * s * dp;
                }
            }
            for (kv, cv) in kb.into_remainder().iter_mut().zip(cb.into_remainder()) {
                let (p, dp) = S::one(*kv);
                *kv = s * p;
                *cv = 2.0 * s * dp;
            }
        }
        match profile {
            Profile::Rbf => each::<RbfShape>(s, k, c),
            Profile::Matern12 => each::<Matern12Shape>(s, k, c),
            Profile::Matern32 => each::<Matern32Shape>(s, k, c),
            Profile::Matern52 => each::<Matern52Shape>(s, k, c),
        }
    }
}

/// A profile as [`scaled_profiles`] runs it: one entry, or a block of lanes with the same
/// operations per entry. Static calls, so that both inline into the caller's build.
trait Shape {
    /// `κ(r²)` and `dκ/d(r²)`.
    fn one(r2: f64) -> (f64, f64);
    /// [`Shape::one`] of every lane.
    fn lanes(r2: &Lanes) -> (Lanes, Lanes);
}

/// Defines a [`Shape`] from a profile's function and its lane form.
macro_rules! shape {
    ($name:ident, $one:ident, $lanes:ident) => {
        #[doc = concat!("[`", stringify!($one), "`] as a [`Shape`].")]
        struct $name;
        impl Shape for $name {
            #[inline(always)]
            fn one(r2: f64) -> (f64, f64) {
                $one(r2)
            }
            #[inline(always)]
            fn lanes(r2: &Lanes) -> (Lanes, Lanes) {
                $lanes(r2)
            }
        }
    };
}
shape!(RbfShape, rbf, rbf_lanes);
shape!(Matern12Shape, matern12, matern12_lanes);
shape!(Matern32Shape, matern32, matern32_lanes);
shape!(Matern52Shape, matern52, matern52_lanes);

/// Entries [`scaled_profiles`] evaluates side by side: each stage of a profile (the square
/// root, each step of `exp`'s polynomial) runs over all of them before the next, so their
/// long dependent chains overlap instead of one vector's chain stalling the loop (two
/// 512-bit vectors, four 256-bit ones; 32 lanes measured no faster).
const PROFILE_LANES: usize = 16;

/// One value per entry of a block of [`scaled_profiles`].
type Lanes = [f64; PROFILE_LANES];

/// `f` of every lane.
#[inline(always)]
fn map(x: &Lanes, f: impl Fn(f64) -> f64) -> Lanes {
    let mut out = [0.0; PROFILE_LANES];
    for (o, &v) in out.iter_mut().zip(x) {
        *o = f(v);
    }
    out
}

/// `f` of every pair of lanes.
#[inline(always)]
fn zip_map(x: &Lanes, y: &Lanes, f: impl Fn(f64, f64) -> f64) -> Lanes {
    let mut out = [0.0; PROFILE_LANES];
    for ((o, &a), &b) in out.iter_mut().zip(x).zip(y) {
        *o = f(a, b);
    }
    out
}

/// [`rbf`] of every lane, with its operations.
#[inline(always)]
fn rbf_lanes(r2: &Lanes) -> (Lanes, Lanes) {
    let k = exp_lanes(&map(r2, |r| -0.5 * r));
    let dk = map(&k, |k| -0.5 * k);
    (k, dk)
}

/// [`matern12`] of every lane, with its operations.
#[inline(always)]
fn matern12_lanes(r2: &Lanes) -> (Lanes, Lanes) {
    let r = map(r2, f64::sqrt);
    let e = exp_lanes(&map(&r, |r| -r));
    let dk = zip_map(&r, &e, |r, e| if r > 0.0 { -0.5 * e / r } else { 0.0 });
    (e, dk)
}

/// [`matern32`] of every lane, with its operations.
#[inline(always)]
fn matern32_lanes(r2: &Lanes) -> (Lanes, Lanes) {
    let a = map(r2, |r| (3.0 * r).sqrt());
    let e = exp_lanes(&map(&a, |a| -a));
    let k = zip_map(&a, &e, |a, e| (1.0 + a) * e);
    let dk = map(&e, |e| -1.5 * e);
    (k, dk)
}

/// [`matern52`] of every lane, with its operations.
#[inline(always)]
fn matern52_lanes(r2: &Lanes) -> (Lanes, Lanes) {
    let a = map(r2, |r| (5.0 * r).sqrt());
    let e = exp_lanes(&map(&a, |a| -a));
    let k = zip_map(&a, &e, |a, e| (1.0 + a + a * a / 3.0) * e);
    let dk = zip_map(&a, &e, |a, e| -(5.0 / 6.0) * (1.0 + a) * e);
    (k, dk)
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
    let (t, r) = exp_reduce(x);
    let mut p = EXP_C[13];
    for c in EXP_C[..13].iter().rev() {
        p = p * r + c;
    }
    exp_finish(x, t, p)
}

/// [`exp`] of every lane, with its operations: each stage over all lanes before the next.
#[inline(always)]
fn exp_lanes(x: &Lanes) -> Lanes {
    let mut t = [0.0; PROFILE_LANES];
    let mut r = [0.0; PROFILE_LANES];
    for ((t, r), &x) in t.iter_mut().zip(r.iter_mut()).zip(x) {
        (*t, *r) = exp_reduce(x);
    }
    let mut p = [EXP_C[13]; PROFILE_LANES];
    for c in EXP_C[..13].iter().rev() {
        for (p, &r) in p.iter_mut().zip(&r) {
            *p = *p * r + c;
        }
    }
    let mut y = [0.0; PROFILE_LANES];
    for (((y, &x), &t), &p) in y.iter_mut().zip(x).zip(&t).zip(&p) {
        *y = exp_finish(x, t, p);
    }
    y
}

/// 1.5·2⁵², whose addition rounds a float of magnitude < 2⁵¹ to an integer held in the low
/// bits of the sum.
const EXP_SHIFT: f64 = 6_755_399_441_055_744.0;

/// The Taylor coefficients `1/k!` of [`exp`]'s polynomial.
const EXP_C: [f64; 14] = [
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

/// [`exp`]'s argument reduction: `t` (holding k in its low bits) and `r = x − k ln 2`.
#[inline(always)]
fn exp_reduce(x: f64) -> (f64, f64) {
    // fdlibm's split of ln 2: the high part has 32 significant bits, so k·LN2_HI is exact.
    const LN2_HI: f64 = f64::from_bits(0x3fe6_2e42_fee0_0000);
    const LN2_LO: f64 = f64::from_bits(0x3dea_39ef_3579_3c76);
    let xc = x.clamp(-708.0, 709.0);
    let t = xc * std::f64::consts::LOG2_E + EXP_SHIFT;
    let k = t - EXP_SHIFT;
    (t, (xc - k * LN2_HI) - k * LN2_LO)
}

/// [`exp`] from the reduction's `t` and the polynomial's value `p = eʳ`: `p·2ᵏ`, with the
/// edges of the range.
#[inline(always)]
fn exp_finish(x: f64, t: f64, p: f64) -> f64 {
    // k (an integer in −1022..=1023) sits in the low bits of t's representation.
    let bits = (t
        .to_bits()
        .wrapping_sub(EXP_SHIFT.to_bits())
        .wrapping_add(1023))
        << 52;
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
