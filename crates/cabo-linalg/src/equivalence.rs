//! The bitwise-equivalence harness: every kernel of this crate, run under every instruction
//! set level this processor supports ([`Isa::Portable`], [`Isa::Baseline`], [`Isa::Avx2`],
//! [`Isa::Avx512`]), on random inputs and on awkward sizes (0, 1, a lane count ± 1, large),
//! must give the portable build's result bit for bit. This is what keeps cabo's results
//! independent of the CPU they ran on; a kernel added to the crate gets a test here.
//!
//! Where a plain-loop reference is given, it is checked under every level too: with
//! [`f64::mul_add`] exactly where the kernel fuses (the triangular kernels and the panel
//! products, see [`crate::simd`]), and with a separate multiply and add where it does not.
//! A fused kernel that rounded a product on its own would fail its reference.
//!
//! Levels the processor lacks are skipped (each test prints the ones it ran). The level is
//! process-wide state ([`simd::limit`]), so the tests take turns through one lock.

// Dense small-matrix reference loops read clearest with explicit indices.
#![allow(clippy::needless_range_loop)]

use crate::cholesky::{
    self, factor, inverse_lower_rows, invert_factor, row_start, solve_lower, solve_lower_many,
    solve_lower_rows, solve_upper, solve_upper_many,
};
use crate::dense::product_rows;
use crate::distance::{
    BLOCK_LANES, block_squared_distances, inverse_lengthscaled_squared_distances, kernel_jacobian,
    lengthscaled_squared_distances, product_weighted_differences, scaled_by_coordinate,
    squared_distances, weighted_differences, weighted_kernel_gradients,
};
use crate::factor::Cholesky;
use crate::gram::{fill_rows, gradient_rows};
use crate::panel::{BLOCK, PANEL_ROWS, Panels};
use crate::profile::{Profile, scaled_profiles};
use crate::rows::{Fold, accumulate_rows, free_gram, row_dots, weighted_rows};
use crate::simd::{self, Isa, avx2_dispatch};
use crate::vector::{axpy, dot};
use std::sync::Mutex;

/// Lengths around every lane count the kernels use (4-lane accumulators and row blocks,
/// 2-, 4- and 8-wide vectors), plus larger ones.
const LENGTHS: [usize; 21] = [
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 15, 16, 17, 31, 33, 64, 65, 203,
];

/// Orders of the triangular kernels: blocks of four rows with every remainder, and large.
const ORDERS: [usize; 17] = [0, 1, 2, 3, 4, 5, 7, 8, 9, 12, 13, 16, 17, 31, 33, 64, 257];

/// Serialises the tests: each one sets the process-wide level.
static LEVEL: Mutex<()> = Mutex::new(());

/// Lifts the level restriction when a test ends, passing or not.
struct Unlimit;

impl Drop for Unlimit {
    fn drop(&mut self) {
        simd::limit(Isa::Avx512);
    }
}

/// Runs `run` under every level the processor supports, narrowest first, and asserts that
/// each result has the portable build's bits. NaN payloads are not part of the contract (x86
/// propagates the first operand's, and a compiler may order the operands of a commutative
/// operation differently in two builds), so every NaN compares as one.
fn same_bits_on_every_level(kernel: &str, run: impl Fn() -> Vec<f64>) {
    let _turn = LEVEL.lock().unwrap_or_else(|e| e.into_inner());
    let _unlimit = Unlimit;
    let bits = |v: Vec<f64>| -> Vec<u64> {
        v.into_iter()
            .map(|x| {
                if x.is_nan() {
                    f64::NAN.to_bits()
                } else {
                    x.to_bits()
                }
            })
            .collect()
    };
    let mut reference: Option<Vec<u64>> = None;
    let mut ran = Vec::new();
    for isa in Isa::ALL.into_iter().filter(|&l| l <= simd::detected()) {
        simd::limit(isa);
        assert_eq!(simd::active(), isa);
        let got = bits(run());
        ran.push(isa);
        match &reference {
            None => reference = Some(got),
            Some(want) => {
                assert_eq!(want.len(), got.len(), "{kernel}: {isa:?} result length");
                if let Some(i) = (0..got.len()).find(|&i| got[i] != want[i]) {
                    panic!(
                        "{kernel}: {isa:?} differs from the portable build at value {i} of {}: \
                         {:e} vs {:e}",
                        got.len(),
                        f64::from_bits(got[i]),
                        f64::from_bits(want[i]),
                    );
                }
            }
        }
    }
    println!("{kernel}: identical bits on {ran:?}");
}

/// A small deterministic generator (SplitMix64), so the inputs need no dependency.
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform on [−1, 1).
    fn uniform(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }

    fn vec(&mut self, n: usize) -> Vec<f64> {
        (0..n).map(|_| self.uniform()).collect()
    }

    /// Mostly uniform values, with signed zeros, subnormals and extreme magnitudes mixed in
    /// (whose products underflow, overflow and cancel).
    fn awkward(&mut self, n: usize) -> Vec<f64> {
        self.mixed(
            n,
            &[0.0, -0.0, 5e-324, -2.2e-308, 1e-300, 1e300, -1e300, 3.5],
        )
    }

    /// Like [`Gen::awkward`], with magnitudes small enough that a product of three entries
    /// summed a few hundred times stays finite.
    fn awkward_finite(&mut self, n: usize) -> Vec<f64> {
        self.mixed(
            n,
            &[0.0, -0.0, 5e-324, -2.2e-308, 1e-300, 1e100, -1e100, 3.5],
        )
    }

    /// Uniform values with one in eight drawn from `odd`.
    fn mixed(&mut self, n: usize, odd: &[f64]) -> Vec<f64> {
        (0..n)
            .map(|_| match self.next() % 8 {
                0 => odd[self.next() as usize % odd.len()],
                _ => self.uniform(),
            })
            .collect()
    }

    /// A symmetric positive-definite `n × n` matrix `B Bᵀ/n + I/2`.
    fn spd(&mut self, n: usize) -> Vec<f64> {
        let b = self.vec(n * n);
        let mut a = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                let s: f64 = (0..n).map(|k| b[i * n + k] * b[j * n + k]).sum();
                a[i * n + j] = s / n as f64 + if i == j { 0.5 } else { 0.0 };
            }
        }
        a
    }
}

/// The row-packed factor of `rng.spd(n)`.
fn packed_factor(rng: &mut Gen, n: usize) -> Vec<f64> {
    let a = rng.spd(n);
    let mut packed = vec![0.0; row_start(n)];
    assert!(factor(&a, n, 0.0, &mut packed));
    packed
}

avx2_dispatch! {
    /// [`dot`] compiled like the kernels that inline it.
    fn dot_kernel(a: &[f64], b: &[f64]) -> f64 {
        dot(a, b)
    }
}

avx2_dispatch! {
    /// [`axpy`] compiled like the kernels that inline it.
    fn axpy_kernel(a: f64, x: &[f64], y: &mut [f64]) {
        axpy(a, x, y)
    }
}

#[test]
fn dot_and_axpy() {
    same_bits_on_every_level("dot, axpy", || {
        let mut rng = Gen(1);
        let mut out = Vec::new();
        for n in LENGTHS {
            // Offset by one, so no vector load is aligned, and with unequal lengths.
            let (a, b) = (rng.awkward(n + 1), rng.awkward(n + 3));
            out.push(dot_kernel(&a[1..], &b[..n]));
            out.push(dot_kernel(&b, &a));
            let mut y = rng.awkward(n + 1);
            axpy_kernel(rng.uniform(), &a[1..], &mut y[1..]);
            out.extend(y);
        }
        out
    });
}

avx2_dispatch! {
    /// [`cholesky::dot4`] in the build of the active level.
    fn dot4_active<const ISA: u8>(x: &[f64], r: [&[f64]; 4]) -> [f64; 4] {
        // SAFETY: the processor supports the instructions of `ISA` (the body's contract).
        unsafe { cholesky::dot4::<ISA>(x, r) }
    }
}

/// The fused plain-loop dot product of the triangular kernels: lane l sums the indices
/// ≡ l mod 4 with `mul_add`, the lanes are added pairwise, then the tail is added in order
/// with `mul_add`.
fn fused_dot_reference(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len());
    let body = n - n % 4;
    let mut lane = [0.0f64; 4];
    for k in 0..body {
        lane[k % 4] = a[k].mul_add(b[k], lane[k % 4]);
    }
    let mut s = (lane[0] + lane[1]) + (lane[2] + lane[3]);
    for k in body..n {
        s = a[k].mul_add(b[k], s);
    }
    s
}

#[test]
fn dot4() {
    same_bits_on_every_level("dot4", || {
        let mut rng = Gen(2);
        let mut out = Vec::new();
        for n in LENGTHS {
            let x = rng.awkward(n);
            let r: Vec<Vec<f64>> = (0..4).map(|i| rng.awkward(n + i)).collect();
            let got = dot4_active(&x, [&r[0], &r[1], &r[2], &r[3]]);
            for (i, ri) in r.iter().enumerate() {
                let want = fused_dot_reference(&x, ri);
                assert!(
                    same(got[i], want),
                    "dot4 n = {n}, row {i}: {} vs {want}",
                    got[i]
                );
            }
            out.extend(got);
        }
        out
    });
}

/// Where the triangular kernels start the in-block terms of entry `(i, j)` of a row-block
/// loop over `rows` rows: the start of j's block of four when the whole block lies before
/// `limit`, else `j` (the entry's sum then runs over the whole prefix).
fn block_start(j: usize, limit: usize) -> usize {
    let j0 = j - j % 4;
    if j0 + 4 <= limit { j0 } else { j }
}

/// The fused plain-loop Cholesky factorisation of `a + jitter·I` (false at a pivot that is
/// not positive and finite): `L[i][j] = (a[i][j] − Σ_{k<j} L[i][k]·L[j][k]) / L[j][j]`,
/// the sum over the prefix before j's block of four as [`fused_dot_reference`], then the
/// terms inside the block one fused multiply-add each; the division is a multiplication by
/// the reciprocal pivot.
fn factor_reference(a: &[f64], n: usize, jitter: f64, packed: &mut [f64]) -> bool {
    for i in 0..n {
        for j in 0..=i {
            let (ri, rj) = (row_start(i), row_start(j));
            let j0 = if j < i { block_start(j, i) } else { j };
            // The diagonal adds the jitter before the sum is taken off.
            let aij = if i == j {
                a[i * n + j] + jitter
            } else {
                a[i * n + j]
            };
            let mut t = aij - fused_dot_reference(&packed[ri..ri + j0], &packed[rj..rj + j0]);
            for k in j0..j {
                t = (-packed[ri + k]).mul_add(packed[rj + k], t);
            }
            if i == j {
                if !(t.is_finite() && t > 0.0) {
                    return false;
                }
                packed[ri + i] = t.sqrt();
            } else {
                packed[ri + j] = t * (1.0 / packed[rj + j]);
            }
        }
    }
    true
}

#[test]
fn cholesky_factor() {
    same_bits_on_every_level("cholesky::factor", || {
        let mut rng = Gen(3);
        let mut out = Vec::new();
        for n in ORDERS {
            let a = rng.spd(n);
            for jitter in [0.0, 1e-3] {
                let mut packed = vec![0.0; row_start(n)];
                out.push(f64::from(u8::from(factor(&a, n, jitter, &mut packed))));
                let mut want = vec![0.0; row_start(n)];
                assert!(factor_reference(&a, n, jitter, &mut want));
                assert_same(&packed, &want, &format!("factor n = {n}, jitter {jitter}"));
                out.extend(packed);
            }
            // Indefinite: a negative diagonal entry two thirds of the way down stops the
            // factorisation there, with the rows before it written.
            if n > 0 {
                let mut bad = a.clone();
                let k = 2 * n / 3;
                bad[k * n + k] = -1.0;
                let mut packed = vec![0.0; row_start(n)];
                out.push(f64::from(u8::from(factor(&bad, n, 0.0, &mut packed))));
                out.extend(packed);
            }
        }
        out
    });
}

#[test]
fn cholesky_factor_continued() {
    same_bits_on_every_level("cholesky::factor_from", || {
        let mut rng = Gen(31);
        let mut out = Vec::new();
        for n in ORDERS {
            let a = rng.spd(n);
            let mut whole = vec![0.0; row_start(n)];
            assert!(factor(&a, n, 0.0, &mut whole));
            // Continuing from every split point gives the rows of the whole factorisation.
            for first in [0, 1, n / 2, n.saturating_sub(3), n] {
                let first = first.min(n);
                let mut packed = whole[..row_start(first)].to_vec();
                packed.resize(row_start(n), 0.0);
                assert!(cholesky::factor_from(
                    &a[first * n..],
                    n,
                    first,
                    0.0,
                    &mut packed
                ));
                assert_eq!(packed, whole, "order {n}, continued from row {first}");
                out.extend(&packed);
            }
        }
        out
    });
}

#[test]
fn squared_distances_by_coordinate() {
    same_bits_on_every_level("distance::squared_distances", || {
        let mut rng = Gen(32);
        let mut out = Vec::new();
        for d in [1, 2, 3, 5, 8, 32] {
            for m in LENGTHS {
                let points = rng.awkward_finite(m * d);
                let scale = rng.vec(d);
                let row = rng.vec(d);
                let mut by_coordinate = vec![0.0; m * d];
                scaled_by_coordinate(&points, &scale, &mut by_coordinate);
                let mut dist = vec![0.0; m];
                squared_distances(&by_coordinate, m, &row, &mut dist);
                for (p, x) in points.chunks_exact(d).enumerate() {
                    let plain: f64 = (x.iter().zip(&scale).zip(&row))
                        .map(|((xj, sj), rj)| (xj * sj - rj) * (xj * sj - rj))
                        .fold(0.0, |s, t| s + t);
                    assert_eq!(
                        dist[p].to_bits(),
                        plain.to_bits(),
                        "d = {d}, m = {m}, point {p}"
                    );
                }
                out.extend(dist);
            }
        }
        out
    });
}

#[test]
fn block_distances_and_weighted_differences() {
    same_bits_on_every_level(
        "distance::block_squared_distances, weighted_differences, product_weighted_differences",
        || {
            let mut rng = Gen(36);
            let mut out = Vec::new();
            for d in [1, 2, 3, 5, 8, 13, 16, 24, 32] {
                for n in LENGTHS {
                    let rows = rng.awkward_finite(n * d);
                    for lanes in [1, 4, 11, BLOCK_LANES] {
                        let points = rng.vec(lanes * d);
                        let mut by_coordinate = vec![f64::NAN; d * BLOCK_LANES];
                        for p in 0..lanes {
                            for j in 0..d {
                                by_coordinate[j * BLOCK_LANES + p] = points[p * d + j];
                            }
                        }
                        let mut dist = vec![f64::NAN; lanes * n];
                        block_squared_distances(&by_coordinate, lanes, &rows, &mut dist);
                        for p in 0..lanes {
                            for i in 0..n {
                                let plain = (0..d).fold(0.0, |s, j| {
                                    let t = points[p * d + j] - rows[i * d + j];
                                    s + t * t
                                });
                                assert_eq!(dist[p * n + i].to_bits(), plain.to_bits());
                            }
                        }
                        out.extend(dist);
                    }
                    let x = rng.vec(d);
                    let (wm, wv) = (rng.awkward_finite(n), rng.awkward_finite(n));
                    let (mut gm, mut gv) = (rng.vec(d), rng.vec(d));
                    let (mut pm, mut pv) = (gm.clone(), gv.clone());
                    weighted_differences(&x, &rows, &wm, &wv, &mut gm, &mut gv);
                    for i in 0..n {
                        for j in 0..d {
                            let t = x[j] - rows[i * d + j];
                            pm[j] += wm[i] * t;
                            pv[j] += wv[i] * t;
                        }
                    }
                    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    assert_eq!(
                        (bits(&gm), bits(&gv)),
                        (bits(&pm), bits(&pv)),
                        "d = {d}, n = {n}"
                    );
                    out.extend(gm);
                    out.extend(gv);
                    let (c, f) = (rng.awkward_finite(n), rng.awkward_finite(n));
                    let mut g = rng.vec(d);
                    let mut plain = g.clone();
                    product_weighted_differences(&x, &rows, &c, &f, &mut g);
                    for i in 0..n {
                        let w = c[i] * f[i];
                        for j in 0..d {
                            plain[j] += w * (x[j] - rows[i * d + j]);
                        }
                    }
                    assert_eq!(bits(&g), bits(&plain), "d = {d}, n = {n}");
                    out.extend(g);
                }
            }
            out
        },
    );
}

#[test]
fn kernel_rows_by_coordinate() {
    same_bits_on_every_level(
        "distance::lengthscaled_squared_distances, kernel_jacobian",
        || {
            let mut rng = Gen(34);
            let mut out = Vec::new();
            for d in [1, 2, 3, 5, 8, 32] {
                for m in LENGTHS {
                    let rows = rng.awkward_finite(m * d);
                    let x = rng.vec(d);
                    let ls: Vec<f64> = rng.vec(d).iter().map(|v| 0.1 + v.abs()).collect();
                    let mut by_coordinate = vec![0.0; m * d];
                    scaled_by_coordinate(&rows, &vec![1.0; d], &mut by_coordinate);
                    let mut r2 = vec![0.0; m];
                    lengthscaled_squared_distances(&by_coordinate, m, &x, &ls, &mut r2);
                    let c = rng.awkward_finite(m);
                    let mut jac = vec![0.0; m * d];
                    kernel_jacobian(&x, &rows, &c, &ls, &mut jac);
                    for p in 0..m {
                        let mut s = 0.0;
                        for j in 0..d {
                            let t = (x[j] - rows[p * d + j]) / ls[j];
                            s += t * t;
                            let g = c[p] * (x[j] - rows[p * d + j]) / (ls[j] * ls[j]);
                            assert_eq!(jac[p * d + j].to_bits(), g.to_bits(), "d = {d}, m = {m}");
                        }
                        assert_eq!(r2[p].to_bits(), s.to_bits(), "d = {d}, m = {m}, point {p}");
                    }
                    out.extend(r2);
                    out.extend(jac);
                }
            }
            out
        },
    );
}

#[test]
fn dots_of_every_row() {
    same_bits_on_every_level("rows::row_dots", || {
        let mut rng = Gen(36);
        let mut out = Vec::new();
        for d in [0, 1, 3, 4, 5, 8, 13, 32, 33] {
            for m in LENGTHS {
                let rows = rng.awkward_finite(m * d);
                let x = rng.vec(d);
                let mut dots = vec![f64::NAN; m];
                row_dots(&rows, &x, &mut dots);
                for (i, v) in dots.iter().enumerate() {
                    let plain = if d == 0 {
                        0.0
                    } else {
                        dot(&rows[i * d..(i + 1) * d], &x)
                    };
                    assert_eq!(v.to_bits(), plain.to_bits(), "d = {d}, m = {m}, row {i}");
                }
                out.extend(dots);
            }
        }
        out
    });
}

/// A posterior sample path's kernel terms (`PathwiseSample` of the GP plugin): the plain
/// loop is the one point at a time, training point by training point, that it replaced.
#[test]
fn inverse_lengthscaled_kernel_terms() {
    same_bits_on_every_level(
        "distance::inverse_lengthscaled_squared_distances, weighted_kernel_gradients",
        || {
            let mut rng = Gen(35);
            let mut out = Vec::new();
            for d in [1, 2, 3, 5, 8, 13, 32] {
                for m in LENGTHS {
                    let rows = rng.awkward_finite(m * d);
                    let x = rng.vec(d);
                    let il: Vec<f64> = rng.vec(d).iter().map(|v| 1.0 / (0.1 + v.abs())).collect();
                    let mut by_coordinate = vec![0.0; m * d];
                    scaled_by_coordinate(&rows, &vec![1.0; d], &mut by_coordinate);
                    let mut r2 = vec![f64::NAN; m];
                    inverse_lengthscaled_squared_distances(&by_coordinate, m, &x, &il, &mut r2);
                    let c = rng.awkward_finite(m);
                    let w = rng.awkward_finite(m);
                    let start = rng.vec(d);
                    let mut g = start.clone();
                    weighted_kernel_gradients(&x, &rows, &c, &w, &il, &mut g);
                    let mut plain = start;
                    let mut row = vec![0.0; d];
                    for p in 0..m {
                        let mut s = 0.0;
                        for j in 0..d {
                            let t = (x[j] - rows[p * d + j]) * il[j];
                            row[j] = t;
                            s += t * t;
                        }
                        assert_eq!(r2[p].to_bits(), s.to_bits(), "d = {d}, m = {m}, point {p}");
                        for (gj, l) in row.iter_mut().zip(&il) {
                            *gj *= c[p] * l;
                        }
                        axpy(w[p], &row, &mut plain);
                    }
                    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(&g), bits(&plain), "d = {d}, m = {m}");
                    out.extend(r2);
                    out.extend(g);
                }
            }
            out
        },
    );
}

#[test]
fn weighted_row_folds() {
    same_bits_on_every_level("rows::weighted_rows", || {
        let mut rng = Gen(35);
        let mut out = Vec::new();
        for d in [0, 1, 2, 3, 5, 8, 16, 17, 32] {
            for n in LENGTHS {
                let rows = rng.awkward_finite(n * d);
                let w = rng.awkward_finite(n);
                let start = rng.vec(d);
                for fold in [Fold::Add, Fold::Subtract, Fold::SubtractTwiceScaled(1.7)] {
                    let mut got = start.clone();
                    weighted_rows(&rows, &w, fold, &mut got);
                    let mut plain = start.clone();
                    for i in 0..n {
                        for j in 0..d {
                            let r = rows[i * d + j];
                            plain[j] = match fold {
                                Fold::Add => plain[j] + w[i] * r,
                                Fold::Subtract => plain[j] - w[i] * r,
                                Fold::SubtractTwiceScaled(s) => plain[j] - 2.0 * w[i] * r * s,
                            };
                        }
                    }
                    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(&got), bits(&plain), "{fold:?} d = {d}, n = {n}");
                    out.extend(got);
                }
            }
        }
        out
    });
}

/// The fused plain-loop forward substitution: `z_i = (b_i − Σ_{j<i} L[i][j]·z_j) / L[i][i]`,
/// the sum over the prefix before i's block of four as [`fused_dot_reference`] (the whole
/// prefix past the last block), then the terms inside the block one fused multiply-add each.
fn solve_lower_reference(packed: &[f64], b: &mut [f64]) {
    let n = b.len();
    let blocks = n - n % 4;
    for i in 0..n {
        let r = &packed[row_start(i)..row_start(i + 1)];
        let i0 = if i < blocks { i - i % 4 } else { i };
        let mut t = b[i] - fused_dot_reference(&r[..i0], &b[..i0]);
        for j in i0..i {
            t = (-r[j]).mul_add(b[j], t);
        }
        b[i] = t / r[i];
    }
}

/// The fused plain-loop backward substitution `Lᵀ z = b`, by columns: `z_i = b_i / L[i][i]`
/// for i from the last down, each then taken off every `b_k`, k < i, as one fused
/// multiply-add `b_k − z_i·L[i][k]`.
fn solve_upper_reference(packed: &[f64], b: &mut [f64]) {
    for i in (0..b.len()).rev() {
        let r = &packed[row_start(i)..row_start(i + 1)];
        let z = b[i] / r[i];
        b[i] = z;
        for k in 0..i {
            b[k] = (-z).mul_add(r[k], b[k]);
        }
    }
}

#[test]
fn cholesky_solves() {
    same_bits_on_every_level(
        "cholesky::solve_lower, solve_upper, solve_lower_rows",
        || {
            let mut rng = Gen(4);
            let mut out = Vec::new();
            for n in ORDERS {
                let packed = packed_factor(&mut rng, n);
                let mut z = rng.vec(n);
                let mut want = z.clone();
                solve_lower(&packed, &mut z);
                solve_lower_reference(&packed, &mut want);
                assert_same(&z, &want, &format!("solve_lower n = {n}"));
                out.extend(&z);
                solve_upper(&packed, &mut z);
                solve_upper_reference(&packed, &mut want);
                assert_same(&z, &want, &format!("solve_upper n = {n}"));
                out.extend(&z);
                for m in [1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 33] {
                    let mut zs = rng.vec(n * m);
                    solve_lower_rows(&packed, n, &mut zs, m);
                    out.extend(zs);
                }
            }
            out
        },
    );
}

/// Numbers of right-hand sides of the many-right-hand-side solves: none, one, the pairs the
/// AVX2 build takes with and without a single one left over, and larger.
const RHS_COUNTS: [usize; 7] = [0, 1, 2, 3, 5, 16, 33];

/// A row-packed lower-triangular factor of order `n` with awkward entries: finite
/// off-diagonal values with zeros, subnormals and large magnitudes mixed in, and positive
/// diagonal entries, mostly near one with tiny and large ones mixed in.
fn awkward_factor(rng: &mut Gen, n: usize) -> Vec<f64> {
    let mut packed = rng.awkward_finite(row_start(n));
    for i in 0..n {
        packed[row_start(i) + i] = match rng.next() % 8 {
            0 => [5e-324, 1e-300, 1e-8, 1e100][rng.next() as usize % 4],
            _ => 1.0 + rng.uniform().abs(),
        };
    }
    packed
}

/// The factors and right-hand sides of the solve tests: for every order, a well-conditioned
/// factor with uniform values and an awkward factor with awkward values, each with
/// `m · n` values for the largest `m` of `counts`.
fn solve_cases(seed: u64, orders: &[usize], counts: &[usize]) -> Vec<(usize, Vec<f64>, Vec<f64>)> {
    let mut rng = Gen(seed);
    let most = counts.iter().copied().max().unwrap_or(0);
    let mut cases = Vec::new();
    for &n in orders {
        let packed = packed_factor(&mut rng, n);
        let values = rng.vec(n * most);
        cases.push((n, packed, values));
        let packed = awkward_factor(&mut rng, n);
        let values = rng.awkward(n * most);
        cases.push((n, packed, values));
    }
    cases
}

/// Asserts that `got` and `want` agree bit for bit (NaNs compare as one).
fn assert_same(got: &[f64], want: &[f64], what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    if let Some(k) = (0..got.len()).find(|&k| !same(got[k], want[k])) {
        panic!(
            "{what}: value {k} of {} differs: {:e} vs {:e}",
            got.len(),
            got[k],
            want[k]
        );
    }
}

/// The many-right-hand-side solves give every row the bits of the one-right-hand-side
/// solve, under every level (checked inside each level's run), and the same bits on every
/// level.
#[test]
fn cholesky_solves_many() {
    let cases = solve_cases(11, &ORDERS, &RHS_COUNTS);
    same_bits_on_every_level("cholesky::solve_lower_many, solve_upper_many", || {
        let mut out = Vec::new();
        for (n, packed, values) in &cases {
            let n = *n;
            for m in RHS_COUNTS {
                let bs = &values[..n * m];
                let mut lower = bs.to_vec();
                solve_lower_many(packed, n, &mut lower);
                let mut upper = bs.to_vec();
                solve_upper_many(packed, n, &mut upper);
                for (k, b) in bs.chunks_exact(n.max(1)).enumerate() {
                    let mut z = b.to_vec();
                    solve_lower(packed, &mut z);
                    let what = format!("solve_lower_many n = {n}, m = {m}, row {k}");
                    assert_same(&lower[k * n..(k + 1) * n], &z, &what);
                    let mut z = b.to_vec();
                    solve_upper(packed, &mut z);
                    let what = format!("solve_upper_many n = {n}, m = {m}, row {k}");
                    assert_same(&upper[k * n..(k + 1) * n], &z, &what);
                }
                // Both in sequence, as a posterior solves `(L Lᵀ) z = b`.
                let mut both = bs.to_vec();
                solve_lower_many(packed, n, &mut both);
                solve_upper_many(packed, n, &mut both);
                out.extend(lower);
                out.extend(upper);
                out.extend(both);
            }
        }
        out
    });
}

/// The factor's many-right-hand-side solves are the kernels' (each row as the
/// one-right-hand-side method leaves it).
#[test]
fn cholesky_many_methods() {
    let mut rng = Gen(12);
    for n in [0, 1, 6, 33] {
        let c = Cholesky::factor(&rng.spd(n), n).unwrap();
        for m in RHS_COUNTS {
            let bs = rng.vec(n * m);
            let (mut lower, mut upper) = (bs.clone(), bs.clone());
            c.solve_lower_many_in_place(&mut lower);
            c.solve_upper_many_in_place(&mut upper);
            for (k, b) in bs.chunks_exact(n.max(1)).enumerate() {
                let mut z = b.to_vec();
                c.solve_lower_in_place(&mut z);
                assert_same(&lower[k * n..(k + 1) * n], &z, "solve_lower_many_in_place");
                let mut z = b.to_vec();
                c.solve_upper_in_place(&mut z);
                assert_same(&upper[k * n..(k + 1) * n], &z, "solve_upper_many_in_place");
            }
        }
    }
}

/// The plain row-by-row `L Z = B`, kept as [`solve_lower_rows`]'s reference: per entry,
/// `b[i][k] − L[i][j]·b[j][k]` for `j = 0, 1, …, i − 1` in order, each one fused
/// multiply-add, then a multiplication by `1/L[i][i]`.
fn solve_lower_rows_reference(packed: &[f64], n: usize, b: &mut [f64], m: usize) {
    for i in 0..n {
        let r = &packed[row_start(i)..row_start(i + 1)];
        let inv = 1.0 / r[i];
        for k in 0..m {
            let mut v = b[i * m + k];
            for j in 0..i {
                v = (-r[j]).mul_add(b[j * m + k], v);
            }
            b[i * m + k] = v * inv;
        }
    }
}

/// The tiled [`solve_lower_rows`] gives the row-by-row reference's bits, under every level,
/// for orders on both sides of the smallest tiled one with every remainder of the four-row
/// blocks, and column counts around the tile and panel widths; and the same bits on every
/// level.
#[test]
fn cholesky_solve_lower_rows_tiled() {
    let counts = [0, 1, 2, 3, 5, 7, 8, 9, 16, 33, 63, 64, 65, 130];
    let orders: Vec<usize> = ORDERS.into_iter().chain([31, 32, 34, 35, 38, 67]).collect();
    let cases = solve_cases(13, &orders, &counts);
    same_bits_on_every_level("cholesky::solve_lower_rows (tiled)", || {
        let mut out = Vec::new();
        for (n, packed, values) in &cases {
            let n = *n;
            for m in counts {
                let mut got = values[..n * m].to_vec();
                solve_lower_rows(packed, n, &mut got, m);
                let mut want = values[..n * m].to_vec();
                solve_lower_rows_reference(packed, n, &mut want, m);
                assert_same(&got, &want, &format!("solve_lower_rows n = {n}, m = {m}"));
                out.extend(got);
            }
        }
        out
    });
}

/// The fused plain-loop `L⁻¹` (lower triangle, row-major `n × n`, zero above): row i is
/// `(eᵢ − Σ_{j<i} L[i][j]·row_j) / L[i][i]`, each term one fused multiply-add in ascending j,
/// the division a multiplication by the reciprocal pivot. Entry c takes the term of row j
/// where the kernel's pass over row j reaches it: up to the end of j's block of four rows
/// while the block lies before i, else up to j (the terms beyond j multiply zeros of row j,
/// which leave the value as it is but for the sign of a zero).
fn invert_factor_reference(packed: &[f64], n: usize) -> Vec<f64> {
    let mut linv = vec![0.0; n * n];
    for i in 0..n {
        let r = &packed[row_start(i)..row_start(i + 1)];
        let inv_d = 1.0 / r[i];
        for c in 0..=i {
            let mut v = if c == i { 1.0 } else { 0.0 };
            for j in 0..i {
                let j0 = j - j % 4;
                let end = if j0 + 4 <= i { j0 + 4 } else { j + 1 };
                if c < end {
                    v = (-r[j]).mul_add(linv[j * n + c], v);
                }
            }
            linv[i * n + c] = v * inv_d;
        }
    }
    linv
}

/// The fused plain-loop lower triangle of `(L Lᵀ)⁻¹` from `L⁻¹`: entry (a, b ≤ a) is
/// `Σ_{k ≥ a} L⁻¹[k][a]·L⁻¹[k][b]`, one fused multiply-add per k in ascending order from 0.
fn inverse_lower_reference(linv: &[f64], n: usize, a: usize, b: usize) -> f64 {
    (a..n).fold(0.0, |s, k| linv[k * n + a].mul_add(linv[k * n + b], s))
}

#[test]
fn cholesky_inverses() {
    same_bits_on_every_level("cholesky::invert_factor, inverse_lower_rows", || {
        let mut rng = Gen(5);
        let mut out = Vec::new();
        for n in ORDERS {
            let packed = packed_factor(&mut rng, n);
            // Buffers with stale contents, as reused buffers have; the parts a kernel leaves
            // alone must stay as they were.
            let mut linv = rng.vec(n * n);
            invert_factor(&packed, n, &mut linv);
            let want = invert_factor_reference(&packed, n);
            for i in 0..n {
                let row = &linv[i * n..i * n + i + 1];
                assert_same(
                    row,
                    &want[i * n..i * n + i + 1],
                    &format!("L⁻¹ n = {n}, row {i}"),
                );
            }
            out.extend(&linv);
            let mut kinv = rng.vec(n * n);
            inverse_lower_rows(&linv, n, 0..n, &mut kinv);
            for a in 0..n {
                for b in 0..=a {
                    let want = inverse_lower_reference(&linv, n, a, b);
                    assert!(same(kinv[a * n + b], want), "(L Lᵀ)⁻¹ n = {n}: ({a}, {b})");
                }
            }
            out.extend(&kinv);
            // In two blocks, as a caller running them in parallel does.
            let half = n / 2;
            let mut split = rng.vec(n * n);
            let (top, bottom) = split.split_at_mut(half * n);
            inverse_lower_rows(&linv, n, 0..half, top);
            inverse_lower_rows(&linv, n, half..n, bottom);
            out.extend(split);
        }
        out
    });
}

#[test]
fn panel_products() {
    let mut rng = Gen(6);
    let cases: Vec<(usize, Vec<f64>, Vec<f64>)> = [0, 1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 41, 100]
        .into_iter()
        .map(|n| {
            // Lower triangular, and operands finite (including the intermediate `V`), as the
            // products require.
            let mut l = rng.awkward_finite(n * n);
            for i in 0..n {
                l[i * n + i] = 1.0 + rng.uniform().abs();
                l[i * n + i + 1..(i + 1) * n].fill(0.0);
            }
            (n, l, rng.awkward_finite(n * BLOCK))
        })
        .collect();
    same_bits_on_every_level("panel::Panels products", || {
        let mut out = Vec::new();
        for (n, l, src) in &cases {
            let n = *n;
            let panels = Panels::new(l, n);
            // The baseline level runs the portable build (SSE2 has no fused multiply-add).
            let build = simd::active().max(Isa::Baseline);
            assert_eq!(
                panels.isa().max(Isa::Baseline),
                build,
                "the panels run the active build"
            );
            let rows = n.next_multiple_of(PANEL_ROWS);
            for width in [0, 4, 8, 12, 16, 20, 24, 28, 32, 44, 60, 64] {
                let mut v = vec![f64::NAN; rows * BLOCK];
                panels.lower_product(src, &mut v, width);
                let mut u = vec![f64::NAN; rows * BLOCK];
                panels.lower_transpose_product(&v, &mut u, width);
                // Rows past n and columns past the width are scratch, as in the callers.
                for j in 0..n {
                    out.extend(&v[j * BLOCK..j * BLOCK + width]);
                    out.extend(&u[j * BLOCK..j * BLOCK + width]);
                }
            }
        }
        out
    });
    // And they are the plain loops': L·src summed in ascending k, one fused multiply-add per
    // coefficient.
    for (n, l, src) in &cases {
        let n = *n;
        let panels = Panels::new(l, n);
        let mut v = vec![0.0; n.next_multiple_of(PANEL_ROWS) * BLOCK];
        panels.lower_product(src, &mut v, BLOCK);
        for i in 0..n {
            let mut want = [0.0; BLOCK];
            for k in 0..=i {
                let (c, row) = (l[i * n + k], &src[k * BLOCK..(k + 1) * BLOCK]);
                for (w, x) in want.iter_mut().zip(row) {
                    *w = c.mul_add(*x, *w);
                }
            }
            let got = &v[i * BLOCK..(i + 1) * BLOCK];
            let same = got
                .iter()
                .zip(&want)
                .all(|(a, b)| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()));
            assert!(same, "L·src row {i} of {n}: {got:?} vs {want:?}");
        }
    }
}

/// Panels built at one level keep their build (their layout is that build's) when the
/// level is lowered afterwards, and give the same bits under every later level.
#[test]
fn panels_keep_their_build() {
    let mut rng = Gen(14);
    let n = 41;
    let mut l = rng.awkward_finite(n * n);
    for i in 0..n {
        l[i * n + i] = 1.0 + rng.uniform().abs();
        l[i * n + i + 1..(i + 1) * n].fill(0.0);
    }
    let src = rng.awkward_finite(n * BLOCK);
    let rows = n.next_multiple_of(PANEL_ROWS);
    let _turn = LEVEL.lock().unwrap_or_else(|e| e.into_inner());
    let _unlimit = Unlimit;
    for built in Isa::ALL.into_iter().filter(|&l| l <= simd::detected()) {
        simd::limit(built);
        let panels = Panels::new(&l, n);
        let isa = panels.isa();
        let mut want = vec![f64::NAN; rows * BLOCK];
        panels.lower_product(&src, &mut want, BLOCK);
        for later in Isa::ALL {
            simd::limit(later);
            let mut got = vec![f64::NAN; rows * BLOCK];
            panels.lower_product(&src, &mut got, BLOCK);
            assert_eq!(panels.isa(), isa, "built at {built:?}, run under {later:?}");
            assert_same(
                &got[..n * BLOCK],
                &want[..n * BLOCK],
                &format!("panels built at {built:?}, run under {later:?}"),
            );
        }
    }
}

#[test]
fn kernel_profiles() {
    same_bits_on_every_level("profile::scaled_profiles", || {
        let mut rng = Gen(7);
        let mut out = Vec::new();
        // Squared distances over the whole range of `exp`, with its edges and specials.
        let specials = [
            0.0,
            -0.0,
            5e-324,
            1e-300,
            1e-8,
            1416.0,
            1418.0,
            1e300,
            f64::INFINITY,
            f64::NAN,
        ];
        for profile in Profile::ALL {
            for n in LENGTHS {
                let mut k: Vec<f64> = (0..n)
                    .map(|i| match i % 5 {
                        4 => specials[(i / 5) % specials.len()],
                        _ => 30.0 * (rng.uniform() + 1.0),
                    })
                    .collect();
                let mut c = rng.vec(n);
                let r2 = k.clone();
                scaled_profiles(profile, 1.7, &mut k, &mut c);
                // Blocks of lanes and the entries past them alike: one `Profile::value` per
                // entry, as the kernels' scalar callers compute it.
                for (j, &r) in r2.iter().enumerate() {
                    let (p, dp) = profile.value(r);
                    let same =
                        |a: f64, b: f64| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
                    assert!(
                        same(k[j], 1.7 * p) && same(c[j], 2.0 * 1.7 * dp),
                        "{profile:?} at r² = {r} (entry {j} of {n})"
                    );
                }
                out.extend(k);
                out.extend(c);
            }
        }
        out
    });
}

/// Points for the Gram kernels, by coordinate (`d × n`).
fn columns(rng: &mut Gen, n: usize, d: usize) -> Vec<f64> {
    (0..n * d).map(|_| 2.0 * rng.uniform()).collect()
}

#[test]
fn gram_rows() {
    same_bits_on_every_level("gram::fill_rows", || {
        let mut rng = Gen(8);
        let mut out = Vec::new();
        for profile in Profile::ALL {
            for (n, d) in [
                (1, 1),
                (2, 3),
                (5, 2),
                (8, 1),
                (9, 5),
                (17, 8),
                (64, 3),
                (101, 4),
            ] {
                let x = columns(&mut rng, n, d);
                // All rows at once, and in two blocks as the parallel caller splits them.
                for split in [n, n / 2] {
                    let (mut kappa, mut dkappa) =
                        (vec![0.0; row_start(n)], vec![0.0; row_start(n)]);
                    let mut gram = vec![0.0; n * n];
                    let (ka, kb) = kappa.split_at_mut(row_start(split));
                    let (da, db) = dkappa.split_at_mut(row_start(split));
                    let (ga, gb) = gram.split_at_mut(split * n);
                    fill_rows(profile, 0..split, &x, [1.3, 0.01], ka, da, ga);
                    fill_rows(profile, split..n, &x, [1.3, 0.01], kb, db, gb);
                    out.extend(kappa);
                    out.extend(dkappa);
                    out.extend(gram);
                }
            }
        }
        out
    });
}

#[test]
fn gram_gradient() {
    same_bits_on_every_level("gram::gradient_rows", || {
        let mut rng = Gen(9);
        let mut out = Vec::new();
        for (n, d) in [
            (1, 1),
            (3, 2),
            (4, 1),
            (5, 3),
            (9, 8),
            (16, 2),
            (33, 5),
            (120, 4),
        ] {
            let x = columns(&mut rng, n, d);
            let (kappa, dkappa) = (rng.vec(row_start(n)), rng.vec(row_start(n)));
            let (alpha, kinv) = (rng.vec(n), rng.vec(n * n));
            for split in [n, n / 3] {
                for rows in [0..split, split..n] {
                    let (ka, da) = (
                        &kappa[row_start(rows.start)..],
                        &dkappa[row_start(rows.start)..],
                    );
                    let g = gradient_rows(rows, &x, &alpha, &kinv, [0.8, 0.02], ka, da);
                    out.extend(g.ls);
                    out.extend([g.outputscale, g.noise]);
                }
            }
        }
        out
    });
}

#[test]
fn lbfgsb_row_sums() {
    let mut rng = Gen(10);
    // (rows, stride, columns used), with every remainder of the four-row blocks.
    let shapes = [
        (0, 4, 0),
        (1, 2, 2),
        (5, 6, 3),
        (23, 20, 14),
        (40, 20, 20),
        (97, 8, 5),
    ];
    let cases: Vec<_> = shapes
        .into_iter()
        .map(|(n, stride, kk)| {
            let w = rng.awkward(n * stride);
            let r = rng.vec(n);
            // Directions with zeros (skipped rows), and free sets of every size mod 4.
            let d: Vec<f64> = (0..n)
                .map(|i| if i % 3 == 1 { 0.0 } else { rng.uniform() })
                .collect();
            let free: Vec<usize> = (0..n).filter(|i| i % 3 != 1 && i % 7 != 5).collect();
            (stride, kk, w, r, d, free)
        })
        .collect();
    same_bits_on_every_level("rows::accumulate_rows, free_gram", || {
        let mut out = Vec::new();
        for (stride, kk, w, r, d, free) in &cases {
            let mut p = stale(*kk);
            accumulate_rows(w, *stride, d, &mut p);
            out.extend(p);
            for take in [0, 1, 3, 4, 5, free.len()] {
                let free = &free[..take.min(free.len())];
                let (mut v2, mut wzzw) = (stale(*kk), stale(kk * kk));
                free_gram(w, *stride, free, r, &mut v2, &mut wzzw);
                out.extend(v2);
                out.extend(wzzw);
            }
        }
        out
    });
    // The blocked products equal the plain per-variable sums bit for bit (the blocking only
    // changes how often an entry is loaded).
    for (stride, kk, w, r, _, free) in &cases {
        let (stride, kk) = (*stride, *kk);
        let (mut v2, mut wzzw) = (vec![0.0; kk], vec![0.0; kk * kk]);
        free_gram(w, stride, free, r, &mut v2, &mut wzzw);
        for a in 0..kk {
            let mut va = 0.0;
            for &i in free {
                va += w[i * stride + a] * r[i];
            }
            assert!(same(va, v2[a]), "v2[{a}]");
            for b in a..kk {
                let mut s = 0.0;
                for &i in free {
                    s += w[i * stride + a] * w[i * stride + b];
                }
                assert!(same(s, wzzw[a * kk + b]), "wzzw[{a}][{b}]");
            }
        }
    }
}

/// A buffer with stale, recognisable contents.
fn stale(n: usize) -> Vec<f64> {
    (0..n).map(|i| i as f64 * 0.25 - 1.0).collect()
}

/// Equal bits, or both NaN.
fn same(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// The tiled products `A Bᵀ` and their lower-triangle form, over row counts that leave every
/// remainder of the 4 × 2 tiles and the 64-row blocks, lengths around the lane count, and a
/// row range not starting at zero; each entry also equals the plain [`dot`] of its rows.
#[test]
fn dense_products() {
    let mut rng = Gen(31);
    for (p, q, len) in [
        (0, 3, 5),
        (1, 1, 1),
        (5, 3, 7),
        (9, 70, 13),
        (13, 130, 33),
        (66, 65, 203),
    ] {
        let a = rng.mixed(p * len, &[0.0, -0.0, 1e-310, 1e300]);
        let b = rng.mixed(q * len, &[0.0, -0.0, 1e-310]);
        for (rows, lower) in [(0..p, false), (p / 3..p, false), (0..p.min(q), true)] {
            let run = || {
                let mut out = vec![0.0; rows.len() * q];
                product_rows(&a, &b, len, q, rows.clone(), lower, &mut out);
                out
            };
            let got = run();
            for (r, i) in rows.clone().enumerate() {
                for k in 0..q {
                    let want = if lower && k > i {
                        0.0
                    } else {
                        dot(&a[i * len..(i + 1) * len], &b[k * len..(k + 1) * len])
                    };
                    assert!(same(got[r * q + k], want), "{p}×{q}×{len}: ({i}, {k})");
                }
            }
            same_bits_on_every_level("dense::product_rows", run);
        }
    }
}
