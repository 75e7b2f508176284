//! Deterministic random numbers and seed derivation.
//!
//! cabo keeps its own small generator (xoshiro256++ seeded through SplitMix64) so that results
//! never change because a dependency changed its stream: byte-identical results across
//! machines and releases are a promise of the run engine.

/// A fast, seedable, portable pseudo-random generator (xoshiro256++).
#[derive(Debug, Clone)]
pub struct Rng {
    s: [u64; 4],
    spare_normal: Option<f64>,
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Rng {
    /// A generator whose whole stream is determined by `seed`.
    pub fn new(seed: u64) -> Self {
        let mut sm = seed;
        let s = [
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
            splitmix64(&mut sm),
        ];
        Rng {
            s,
            spare_normal: None,
        }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let s = &mut self.s;
        let result = (s[0].wrapping_add(s[3])).rotate_left(23).wrapping_add(s[0]);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    /// Uniform on `[0, 1)` with 53 random bits.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform on the open interval `(0, 1)`: safe to take logarithms of.
    pub fn uniform_open(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform on `[lo, hi)`.
    pub fn uniform_in(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.uniform()
    }

    /// Uniform integer in `0..n` (`n > 0`), without modulo bias.
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "Rng::below needs n > 0");
        let zone = u64::MAX - (u64::MAX % n);
        loop {
            let v = self.next_u64();
            if v < zone {
                return v % n;
            }
        }
    }

    /// A standard normal draw (Box–Muller; the second value of each pair is kept).
    pub fn normal(&mut self) -> f64 {
        if let Some(z) = self.spare_normal.take() {
            return z;
        }
        let u1 = self.uniform_open();
        let u2 = self.uniform();
        let r = (-2.0 * u1.ln()).sqrt();
        let theta = std::f64::consts::TAU * u2;
        self.spare_normal = Some(r * theta.sin());
        r * theta.cos()
    }

    /// Fills `out` with standard normal draws.
    pub fn fill_normal(&mut self, out: &mut [f64]) {
        for v in out {
            *v = self.normal();
        }
    }

    /// A fresh seed for a child stream (for handing to a plugin that takes `u64`).
    pub fn split(&mut self) -> u64 {
        self.next_u64()
    }
}

/// Derives a seed from labelled parts (spec name, policy name, replication, …) by FNV-1a
/// hashing followed by a SplitMix64 finaliser. Stable across platforms and releases.
pub fn derive_seed(parts: &[&dyn SeedPart]) -> u64 {
    let mut h: u64 = 0xCBF2_9CE4_8422_2325;
    for part in parts {
        for b in part.seed_bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01B3);
        }
        // A separator so ("ab","c") and ("a","bc") differ.
        h ^= 0xFF;
        h = h.wrapping_mul(0x0000_0100_0000_01B3);
    }
    let mut s = h;
    splitmix64(&mut s)
}

/// Something that can take part in a seed: strings and integers.
pub trait SeedPart {
    /// The bytes hashed for this part.
    fn seed_bytes(&self) -> Vec<u8>;
}

impl SeedPart for str {
    fn seed_bytes(&self) -> Vec<u8> {
        self.as_bytes().to_vec()
    }
}
impl SeedPart for String {
    fn seed_bytes(&self) -> Vec<u8> {
        self.as_bytes().to_vec()
    }
}
impl SeedPart for &str {
    fn seed_bytes(&self) -> Vec<u8> {
        self.as_bytes().to_vec()
    }
}
impl SeedPart for u64 {
    fn seed_bytes(&self) -> Vec<u8> {
        self.to_le_bytes().to_vec()
    }
}
impl SeedPart for usize {
    fn seed_bytes(&self) -> Vec<u8> {
        (*self as u64).to_le_bytes().to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_stream_and_different_seeds_differ() {
        let mut a = Rng::new(7);
        let mut b = Rng::new(7);
        let mut c = Rng::new(8);
        let va: Vec<u64> = (0..5).map(|_| a.next_u64()).collect();
        let vb: Vec<u64> = (0..5).map(|_| b.next_u64()).collect();
        let vc: Vec<u64> = (0..5).map(|_| c.next_u64()).collect();
        assert_eq!(va, vb);
        assert_ne!(va, vc);
    }

    #[test]
    fn normal_moments_match_standard_normal() {
        let mut r = Rng::new(1);
        let n = 200_000;
        let (mut s1, mut s2, mut s4) = (0.0, 0.0, 0.0);
        for _ in 0..n {
            let z = r.normal();
            s1 += z;
            s2 += z * z;
            s4 += z * z * z * z;
        }
        let nf = n as f64;
        // Standard errors: mean 1/sqrt(n) ≈ 0.0022, variance sqrt(2/n) ≈ 0.0032, kurtosis ≈ 0.022.
        assert!((s1 / nf).abs() < 0.0022 * 4.0);
        assert!((s2 / nf - 1.0).abs() < 0.0032 * 4.0);
        assert!((s4 / nf - 3.0).abs() < 0.022 * 4.0);
    }

    #[test]
    fn uniform_stays_in_range_and_below_is_unbiased() {
        let mut r = Rng::new(3);
        let mut counts = [0usize; 3];
        for _ in 0..30_000 {
            let u = r.uniform();
            assert!((0.0..1.0).contains(&u));
            counts[r.below(3) as usize] += 1;
        }
        for c in counts {
            assert!(
                (c as f64 - 10_000.0).abs()
                    < 4.0 * (30_000.0f64 * (1.0 / 3.0) * (2.0 / 3.0)).sqrt()
            );
        }
    }

    #[test]
    fn derived_seeds_separate_their_parts() {
        let a = derive_seed(&[&"ab", &"c"]);
        let b = derive_seed(&[&"a", &"bc"]);
        assert_ne!(a, b);
        assert_eq!(
            derive_seed(&[&"spec", &3usize]),
            derive_seed(&[&"spec", &3usize])
        );
    }
}
