//! Scrambled Sobol' points in `[0,1)^dim`, deterministic in a `u64` seed.
//!
//! The sequence uses Joe & Kuo's `new-joe-kuo-6` direction numbers (the ones SciPy and
//! PyTorch use) for up to [`MAX_SOBOL_DIM`] dimensions, generated in Gray-code order with 32
//! bits of precision, so point `i` costs one XOR per dimension. Scrambling is Matoušek's
//! random linear matrix scramble (a random unit lower-triangular binary matrix applied to each
//! dimension's direction numbers) followed by a random digital shift — the scheme of
//! `torch.quasirandom.SobolEngine(scramble=True)`, which BoTorch draws its raw samples from.
//! Both operations are bijections on each elementary interval, so every `(t, m, s)`-net
//! property of the unscrambled sequence survives: in particular the first `2^k` points put
//! exactly one point in each of the `2^k` equal bins of every coordinate.
//!
//! Above [`MAX_SOBOL_DIM`] dimensions (multi-step trees optimise hundreds of variables at
//! once) [`points`] falls back to a seeded randomised Latin hypercube, which keeps the
//! one-point-per-bin property of every 1-D projection for any `n`.

use crate::sobol_table::JOE_KUO;
use cabo_core::{Error, Result, Rng};

/// Dimensions covered by the direction-number table; [`points`] switches to a Latin
/// hypercube above this.
pub const MAX_SOBOL_DIM: usize = JOE_KUO.len() + 1;

/// Bits of each coordinate; also the largest supported `log2(n)`.
const BITS: usize = 32;

/// The largest `f64` below 1 (points are in the half-open cube).
const BELOW_ONE: f64 = 1.0 - f64::EPSILON / 2.0;

/// The 32 direction numbers `v_k = m_k / 2^(k+1)` of dimension `j` (0-based) as 32-bit
/// fractions.
fn direction_numbers(j: usize) -> [u32; BITS] {
    let mut v = [0u32; BITS];
    if j == 0 {
        // van der Corput: v_k = 2^-(k+1).
        for (k, vk) in v.iter_mut().enumerate() {
            *vk = 1 << (BITS - 1 - k);
        }
        return v;
    }
    let (s, a, m) = JOE_KUO[j - 1];
    let s = s as usize;
    for k in 0..s.min(BITS) {
        v[k] = m[k] << (BITS - 1 - k);
    }
    // The recurrence of the primitive polynomial x^s + a_1 x^(s-1) + … + a_(s-1) x + 1.
    for k in s..BITS {
        let mut vk = v[k - s] ^ (v[k - s] >> s);
        for l in 1..s {
            if (a >> (s - 1 - l)) & 1 == 1 {
                vk ^= v[k - l];
            }
        }
        v[k] = vk;
    }
    v
}

/// Fills `out` (row-major `n × dim`) with the integer Sobol' points built from `dirs`
/// (`dim` arrays of direction numbers), XOR-ed with `shift`.
fn gray_code_points(n: usize, dirs: &[[u32; BITS]], shift: &[u32], out: &mut [f64]) {
    let dim = dirs.len();
    let mut state: Vec<u32> = shift.to_vec();
    let scale = 1.0 / (1u64 << BITS) as f64;
    for i in 0..n {
        if i > 0 {
            // Point i differs from point i − 1 in the direction number indexed by the number
            // of trailing zeros of i (Gray-code order, Antonov–Saleev).
            let c = i.trailing_zeros() as usize;
            for (st, d) in state.iter_mut().zip(dirs) {
                *st ^= d[c];
            }
        }
        for (o, &st) in out[i * dim..(i + 1) * dim].iter_mut().zip(&state) {
            *o = f64::from(st) * scale;
        }
    }
}

fn check_size(n: usize, dim: usize) -> Result<()> {
    if dim == 0 {
        return Err(Error::invalid("sobol: dimension must be at least 1"));
    }
    if n > (1usize << BITS.min(usize::BITS as usize - 1)) {
        return Err(Error::invalid(format!(
            "sobol: at most 2^{BITS} points are supported, asked for {n}"
        )));
    }
    if n.checked_mul(dim).is_none() {
        return Err(Error::invalid(format!(
            "sobol: {n} × {dim} points overflow"
        )));
    }
    Ok(())
}

/// The first `n` points of the plain (unscrambled) Sobol' sequence, starting at the origin,
/// row-major `n × dim`. Errors above [`MAX_SOBOL_DIM`] dimensions.
pub fn unscrambled(n: usize, dim: usize) -> Result<Vec<f64>> {
    check_size(n, dim)?;
    if dim > MAX_SOBOL_DIM {
        return Err(Error::invalid(format!(
            "sobol: direction numbers cover {MAX_SOBOL_DIM} dimensions, asked for {dim}"
        )));
    }
    let dirs: Vec<[u32; BITS]> = (0..dim).map(direction_numbers).collect();
    let mut out = vec![0.0; n * dim];
    gray_code_points(n, &dirs, &vec![0; dim], &mut out);
    Ok(out)
}

/// `n` scrambled Sobol' points in `[0,1)^dim` (row-major `n × dim`), determined by `seed`.
///
/// Uses linear-matrix scrambling plus a digital shift for `dim ≤` [`MAX_SOBOL_DIM`] and a
/// randomised Latin hypercube ([`latin_hypercube`]) above. Returns an empty vector when
/// `n == 0` or `dim == 0`; more than 2³² points cannot be produced and are truncated to 2³².
pub fn points(n: usize, dim: usize, seed: u64) -> Vec<f64> {
    if n == 0 || dim == 0 {
        return Vec::new();
    }
    let n = n.min(1usize << BITS.min(usize::BITS as usize - 1));
    if dim > MAX_SOBOL_DIM {
        return latin_hypercube(n, dim, seed);
    }
    let mut rng = Rng::new(seed);
    let mut dirs = Vec::with_capacity(dim);
    let mut shift = Vec::with_capacity(dim);
    for j in 0..dim {
        let plain = direction_numbers(j);
        // Row r of a random unit lower-triangular matrix over GF(2), with bit 31 − c standing
        // for column c: output digit r mixes input digits 0..=r (the more significant ones).
        let mut rows = [0u32; BITS];
        for (r, row) in rows.iter_mut().enumerate() {
            let diag = 1u32 << (BITS - 1 - r);
            // Columns 0..r are random, column r is 1, columns > r are 0.
            let above = if r == 0 {
                0
            } else {
                (rng.next_u64() as u32) & !((1u32 << (BITS - r)) - 1)
            };
            *row = above | diag;
        }
        let mut scrambled = [0u32; BITS];
        for (s, &v) in scrambled.iter_mut().zip(&plain) {
            let mut out = 0u32;
            for (r, &row) in rows.iter().enumerate() {
                out |= ((row & v).count_ones() & 1) << (BITS - 1 - r);
            }
            *s = out;
        }
        dirs.push(scrambled);
        shift.push(rng.next_u64() as u32);
    }
    let mut out = vec![0.0; n * dim];
    gray_code_points(n, &dirs, &shift, &mut out);
    out
}

/// A randomised Latin hypercube: in every coordinate the `n` points occupy the `n` bins
/// `[k/n, (k+1)/n)` once each (in random order), uniformly within their bins.
pub fn latin_hypercube(n: usize, dim: usize, seed: u64) -> Vec<f64> {
    let mut rng = Rng::new(seed);
    let mut out = vec![0.0; n * dim];
    let mut perm: Vec<usize> = (0..n).collect();
    let nf = n as f64;
    for j in 0..dim {
        for (i, p) in perm.iter_mut().enumerate() {
            *p = i;
        }
        for i in (1..n).rev() {
            let k = rng.below(i as u64 + 1) as usize;
            perm.swap(i, k);
        }
        for (i, &p) in perm.iter().enumerate() {
            out[i * dim + j] = ((p as f64 + rng.uniform()) / nf).min(BELOW_ONE);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first 8 points of the 2-D sequence (SciPy's documented `Sobol(d=2,
    /// scramble=False).random_base2(3)`), and points 1, 2, 3 of the first five dimensions.
    #[test]
    fn unscrambled_points_match_published_values() {
        let p = unscrambled(8, 2).unwrap();
        let expected = [
            [0.0, 0.0],
            [0.5, 0.5],
            [0.75, 0.25],
            [0.25, 0.75],
            [0.375, 0.375],
            [0.875, 0.875],
            [0.625, 0.125],
            [0.125, 0.625],
        ];
        for (i, e) in expected.iter().enumerate() {
            assert_eq!(&p[i * 2..i * 2 + 2], e, "point {i}");
        }
        let p = unscrambled(4, 5).unwrap();
        let expected = [
            [0.5, 0.5, 0.5, 0.5, 0.5],
            [0.75, 0.25, 0.25, 0.25, 0.75],
            [0.25, 0.75, 0.75, 0.75, 0.25],
        ];
        for (i, e) in expected.iter().enumerate() {
            assert_eq!(&p[(i + 1) * 5..(i + 2) * 5], e, "point {}", i + 1);
        }
    }

    /// Reference values from SciPy's independent implementation
    /// (`scipy.stats.qmc.Sobol(d=256, scramble=False).random(1024)`, same Joe–Kuo table, same
    /// Gray-code order): rows 1, 2, 3, 5, 17, 100, 1023 at dimensions 1–5, 10, 100, 255, 256.
    #[test]
    fn unscrambled_points_match_scipy_across_the_table() {
        let p = unscrambled(1024, 256).unwrap();
        let cols = [0, 1, 2, 3, 4, 9, 99, 254, 255];
        let rows: [(usize, [f64; 9]); 7] = [
            (1, [0.5; 9]),
            (2, [0.75, 0.25, 0.25, 0.25, 0.75, 0.75, 0.75, 0.75, 0.75]),
            (3, [0.25, 0.75, 0.75, 0.75, 0.25, 0.25, 0.25, 0.25, 0.25]),
            (
                5,
                [
                    0.875, 0.875, 0.125, 0.375, 0.875, 0.125, 0.375, 0.875, 0.875,
                ],
            ),
            (
                17,
                [
                    0.59375, 0.96875, 0.96875, 0.15625, 0.78125, 0.65625, 0.53125, 0.59375, 0.28125,
                ],
            ),
            (
                100,
                [
                    0.4140625, 0.2578125, 0.7734375, 0.7265625, 0.8828125, 0.6953125, 0.8828125,
                    0.2421875, 0.5703125,
                ],
            ),
            (
                1023,
                [
                    0.0009765625,
                    0.7529296875,
                    0.6123046875,
                    0.1455078125,
                    0.1865234375,
                    0.8505859375,
                    0.5302734375,
                    0.3408203125,
                    0.8427734375,
                ],
            ),
        ];
        for (i, expected) in rows {
            for (c, e) in cols.iter().zip(expected) {
                assert_eq!(p[i * 256 + c], e, "row {i}, dimension {}", c + 1);
            }
        }
    }

    /// Every coordinate of the first 2^k points of any Sobol' sequence is a (0, k, 1)-net.
    fn assert_stratified(p: &[f64], n: usize, dim: usize, bins: usize) {
        for j in 0..dim {
            let mut seen = vec![false; bins];
            for i in 0..n {
                let v = p[i * dim + j];
                assert!((0.0..1.0).contains(&v), "point {i} dim {j}: {v}");
                let b = (v * bins as f64) as usize;
                assert!(!seen[b], "dim {j}: two points in bin {b}");
                seen[b] = true;
            }
        }
    }

    #[test]
    fn every_unscrambled_dimension_is_stratified() {
        let n = 1 << 10;
        let p = unscrambled(n, MAX_SOBOL_DIM).unwrap();
        assert_stratified(&p, n, MAX_SOBOL_DIM, n);
    }

    #[test]
    fn scrambled_points_are_stratified_in_every_dimension() {
        for (k, dim, seed) in [(4, 3, 0), (9, 16, 1), (12, 40, 7), (6, MAX_SOBOL_DIM, 3)] {
            let n = 1 << k;
            let p = points(n, dim, seed);
            assert_eq!(p.len(), n * dim);
            assert_stratified(&p, n, dim, n);
            // 2-D projections of the first two dimensions are (0, k, 2)-nets: one point in
            // each 2^a × 2^(k−a) box.
            if dim >= 2 {
                for a in 0..=k {
                    let (bx, by) = (1usize << a, 1usize << (k - a));
                    let mut seen = vec![false; n];
                    for i in 0..n {
                        let x = (p[i * dim] * bx as f64) as usize;
                        let y = (p[i * dim + 1] * by as f64) as usize;
                        assert!(!seen[x * by + y], "k = {k}, a = {a}: box ({x}, {y}) twice");
                        seen[x * by + y] = true;
                    }
                }
            }
        }
    }

    #[test]
    fn scrambling_is_deterministic_and_depends_on_the_seed() {
        let a = points(64, 5, 11);
        let b = points(64, 5, 11);
        let c = points(64, 5, 12);
        assert_eq!(a, b);
        assert_ne!(a, c);
        // The scrambled origin is no longer the origin.
        assert!(a[..5].iter().any(|&v| v != 0.0));
    }

    #[test]
    fn scrambled_means_are_accurate() {
        // For a scrambled net, the sample mean of x_j is unbiased with tiny variance.
        let n = 1 << 12;
        let dim = 8;
        let p = points(n, dim, 5);
        for j in 0..dim {
            let mean: f64 = (0..n).map(|i| p[i * dim + j]).sum::<f64>() / n as f64;
            // Stratification bounds |mean − 1/2| by 1/(2n) in each coordinate.
            assert!(
                (mean - 0.5).abs() <= 0.5 / n as f64 + 1e-12,
                "dim {j}: {mean}"
            );
        }
    }

    #[test]
    fn high_dimensions_fall_back_to_a_latin_hypercube() {
        let (n, dim) = (100, 300);
        let p = points(n, dim, 9);
        assert_eq!(p, latin_hypercube(n, dim, 9));
        assert_stratified(&p, n, dim, n);
        assert_ne!(p, points(n, dim, 10));
    }

    #[test]
    fn bad_sizes() {
        assert!(points(0, 3, 1).is_empty());
        assert!(points(3, 0, 1).is_empty());
        assert!(unscrambled(4, 0).is_err());
        let e = unscrambled(4, MAX_SOBOL_DIM + 1).unwrap_err();
        assert!(e.to_string().contains("256"), "{e}");
    }
}
