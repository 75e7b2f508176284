//! Dense products as dot products of contiguous rows: `A Bᵀ`, or its lower triangle when
//! `B = A` (a Gram matrix `R Rᵀ`).
//!
//! These are most of a random-feature GP fit's work at n = 2000 points and m = 1024 features
//! (`ΦᵀΦ` is n·m²/2 multiply-adds, `A⁻¹Φᵀ` n·m²), so they are blocked for the cache (a
//! block of 64 rows of the right factor is reused by every row of the left one) and
//! computed in tiles of 4 × 2 dot products that share their loads, eight 256-bit
//! accumulators where the processor has AVX (the tiles' lanes are written out by hand).
//! Every dot product is summed the way [`dot`] sums it — lane l holds the indices ≡ l mod 4,
//! lanes added pairwise, then the tail, no fused multiply-add — whichever path computes it,
//! so every build, the tile and one-row paths, and any split of the rows agree to the bit.
//! The products stay unfused (unlike the triangular kernels, see [`crate::simd`]): a
//! random-feature model computes the same dot products with [`dot`] in code compiled for the
//! x86-64 baseline, and its products must have their bits.

use crate::simd::avx2_dispatch;
#[cfg(target_arch = "x86_64")]
use crate::simd::{AVX2, Vector};
use crate::vector::dot;
#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::__m256d;
use std::ops::Range;

/// Rows of the right factor kept hot in the cache while every left row passes over them.
const BLOCK: usize = 64;

/// Adds each accumulator's lanes pairwise, then the tail `body..` in order: the end of
/// [`dot`], for a 4 × 2 tile.
#[inline(always)]
fn finish(acc: [[[f64; 4]; 2]; 4], a: [&[f64]; 4], b: [&[f64]; 2], body: usize) -> [[f64; 2]; 4] {
    let mut out = acc.map(|r| r.map(|v| (v[0] + v[1]) + (v[2] + v[3])));
    for k in body..b[0].len() {
        for (o, ar) in out.iter_mut().zip(&a) {
            for (oj, bj) in o.iter_mut().zip(&b) {
                *oj += ar[k] * bj[k];
            }
        }
    }
    out
}

/// The 4 × 2 dot products of rows `a` with rows `b` (all of one length), each summed like
/// [`dot`].
#[inline(always)]
fn tile_portable(a: [&[f64]; 4], b: [&[f64]; 2]) -> [[f64; 2]; 4] {
    let n = b[0].len();
    let a = a.map(|r| &r[..n]);
    let b = [b[0], &b[1][..n]];
    let body = n - n % 4;
    let mut acc = [[[0.0f64; 4]; 2]; 4];
    for c in (0..body).step_by(4) {
        for (acc_r, ar) in acc.iter_mut().zip(&a) {
            for (acc_rj, bj) in acc_r.iter_mut().zip(&b) {
                for l in 0..4 {
                    acc_rj[l] += ar[c + l] * bj[c + l];
                }
            }
        }
    }
    finish(acc, a, b, body)
}

/// [`tile_portable`] with 256-bit vectors: the same operations per lane (four lanes in
/// every build: they are the lanes of [`dot`]'s sums).
///
/// # Safety
/// The processor must support AVX.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn tile_avx(a: [&[f64]; 4], b: [&[f64]; 2]) -> [[f64; 2]; 4] {
    type V = __m256d;
    let n = b[0].len();
    let a = a.map(|r| &r[..n]);
    let b = [b[0], &b[1][..n]];
    let body = n - n % 4;
    let mut acc = [[[0.0f64; 4]; 2]; 4];
    // SAFETY: every load reads indices c..c + 4 with c + 4 ≤ body ≤ n, inside each row
    // (all sliced to n above); AVX is available by this function's contract.
    unsafe {
        let mut v = [[V::zero(); 2]; 4];
        let mut c = 0;
        while c < body {
            let b0 = V::load(b[0].as_ptr().add(c));
            let b1 = V::load(b[1].as_ptr().add(c));
            for (vr, ar) in v.iter_mut().zip(&a) {
                let x = V::load(ar.as_ptr().add(c));
                vr[0] = vr[0].add(x.mul(b0));
                vr[1] = vr[1].add(x.mul(b1));
            }
            c += 4;
        }
        for (acc_r, vr) in acc.iter_mut().zip(&v) {
            for (o, x) in acc_r.iter_mut().zip(vr) {
                x.store(o.as_mut_ptr());
            }
        }
    }
    finish(acc, a, b, body)
}

/// [`tile_portable`] in the build `ISA`: the same bits in every build.
///
/// # Safety
/// The processor must support the instructions of `ISA`: AVX at
/// [`Isa::Avx2`](crate::simd::Isa::Avx2) and above; the other levels need nothing beyond the
/// target's baseline.
#[inline(always)]
unsafe fn tile<const ISA: u8>(a: [&[f64]; 4], b: [&[f64]; 2]) -> [[f64; 2]; 4] {
    #[cfg(target_arch = "x86_64")]
    if ISA >= AVX2 {
        // SAFETY: the caller guarantees AVX (this function's contract).
        return unsafe { tile_avx(a, b) };
    }
    tile_portable(a, b)
}

/// Rows `rows` of `A Bᵀ` into `out` (row-major, `rows.len() × q`, starting at the first row),
/// for `a` row-major with rows of length `len` and `b` row-major `q × len`. With `lower`,
/// only the entries on and below the diagonal (k ≤ i) are written.
///
/// # Safety
/// The processor must support the instructions of `ISA` (see [`tile`]).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn product_rows_with<const ISA: u8>(
    a: &[f64],
    b: &[f64],
    len: usize,
    q: usize,
    rows: Range<usize>,
    lower: bool,
    out: &mut [f64],
) {
    let first = rows.start;
    let row = |i: usize| &a[i * len..(i + 1) * len];
    let col = |k: usize| &b[k * len..(k + 1) * len];
    let mut put = |i: usize, k: usize, v: f64| {
        if !lower || k <= i {
            out[(i - first) * q + k] = v;
        }
    };
    for kb in (0..q).step_by(BLOCK) {
        let ke = (kb + BLOCK).min(q);
        let mut i = rows.start;
        while i + 4 <= rows.end {
            let left = [row(i), row(i + 1), row(i + 2), row(i + 3)];
            let end = if lower { ke.min(i + 4) } else { ke };
            let mut k = kb;
            while k + 2 <= end {
                // SAFETY: passed on from this function's contract.
                let v = unsafe { tile::<ISA>(left, [col(k), col(k + 1)]) };
                for (r, vr) in v.iter().enumerate() {
                    put(i + r, k, vr[0]);
                    put(i + r, k + 1, vr[1]);
                }
                k += 2;
            }
            for k in k..end {
                for (r, ar) in left.iter().enumerate() {
                    put(i + r, k, dot(ar, col(k)));
                }
            }
            i += 4;
        }
        for i in i..rows.end {
            let end = if lower { ke.min(i + 1) } else { ke };
            for k in kb..end {
                put(i, k, dot(row(i), col(k)));
            }
        }
    }
}

avx2_dispatch! {
/// Rows `rows` of `A Bᵀ` into `out` (row-major, `rows.len() × q`, starting at the first row
/// of `rows`), for `a` row-major with rows of length `len` and `b` row-major `q × len`. With
/// `lower`, only the entries on and below the diagonal (k ≤ i) are written; the others are
/// left as they are. Every entry is bit for bit [`dot`] of its two rows.
///
/// Runs the AVX2 build where the processor has AVX2 and [`crate::simd::limit`] allows it,
/// else the baseline build.
///
/// # Panics
/// When `a` has fewer than `rows.end` rows, `b` fewer than `q`, or `out` is too short.
#[allow(clippy::too_many_arguments)]
pub fn product_rows<const ISA: u8>(
    a: &[f64],
    b: &[f64],
    len: usize,
    q: usize,
    rows: Range<usize>,
    lower: bool,
    out: &mut [f64],
) {
    // SAFETY: the processor supports the instructions of `ISA` (the body's contract).
    unsafe { product_rows_with::<ISA>(a, b, len, q, rows, lower, out) }
}
}
