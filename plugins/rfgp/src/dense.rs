//! The dense products of a random-feature fit: the Gram matrix `R Rᵀ` of a matrix's rows
//! (lower triangle) and the product `A Bᵀ`, both as dot products of contiguous rows.
//!
//! At n = 2000 points and m = 1024 features these products are most of a fit's work
//! (`ΦᵀΦ` is n·m²/2 multiply-adds, `A⁻¹Φᵀ` n·m²), so they are blocked for the cache (a
//! block of 64 rows of the right factor is reused by every row of the left one) and
//! computed in tiles of 4 × 2 dot products that share their loads, eight 256-bit
//! accumulators where the processor has AVX (the tiles' lanes are written out by hand, as
//! in `cabo-gp`'s triangular kernels). Every dot product is summed the way
//! [`cabo_core::vector::dot`] sums it — lane l holds the indices ≡ l mod 4, lanes added
//! pairwise, then the tail, no fused multiply-add — whichever path computes it, so the AVX
//! and baseline builds, the tile and one-row paths and one or two threads agree to the bit.

use cabo_core::vector::dot;
use std::ops::Range;

/// Rows of the right factor kept hot in the cache while every left row passes over them.
const BLOCK: usize = 64;

/// Multiply-adds above which a product splits its rows between two threads.
const PARALLEL_WORK: usize = 1 << 24;

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

/// [`tile_portable`] with 256-bit vectors: the same operations per lane.
///
/// # Safety
/// The processor must support AVX.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
#[inline]
unsafe fn tile_avx(a: [&[f64]; 4], b: [&[f64]; 2]) -> [[f64; 2]; 4] {
    use std::arch::x86_64::{
        __m256d, _mm256_add_pd, _mm256_loadu_pd, _mm256_mul_pd, _mm256_setzero_pd, _mm256_storeu_pd,
    };
    let n = b[0].len();
    let a = a.map(|r| &r[..n]);
    let b = [b[0], &b[1][..n]];
    let body = n - n % 4;
    let mut acc = [[[0.0f64; 4]; 2]; 4];
    // SAFETY: every load reads indices c..c + 4 with c + 4 ≤ body ≤ n, inside each row
    // (all sliced to n above); AVX is available by this function's contract.
    unsafe {
        let mut v: [[__m256d; 2]; 4] = [[_mm256_setzero_pd(); 2]; 4];
        let mut c = 0;
        while c < body {
            let b0 = _mm256_loadu_pd(b[0].as_ptr().add(c));
            let b1 = _mm256_loadu_pd(b[1].as_ptr().add(c));
            for (vr, ar) in v.iter_mut().zip(&a) {
                let x = _mm256_loadu_pd(ar.as_ptr().add(c));
                vr[0] = _mm256_add_pd(vr[0], _mm256_mul_pd(x, b0));
                vr[1] = _mm256_add_pd(vr[1], _mm256_mul_pd(x, b1));
            }
            c += 4;
        }
        for (acc_r, vr) in acc.iter_mut().zip(&v) {
            for (o, x) in acc_r.iter_mut().zip(vr) {
                _mm256_storeu_pd(o.as_mut_ptr(), *x);
            }
        }
    }
    finish(acc, a, b, body)
}

/// [`tile_portable`], in its AVX build when `AVX`: the same bits either way.
///
/// # Safety
/// With `AVX`, the processor must support AVX (the caller is compiled for it).
#[inline(always)]
unsafe fn tile<const AVX: bool>(a: [&[f64]; 4], b: [&[f64]; 2]) -> [[f64; 2]; 4] {
    #[cfg(target_arch = "x86_64")]
    if AVX {
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
/// With `AVX`, the processor must support AVX.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn product_rows_with<const AVX: bool>(
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
                let v = unsafe { tile::<AVX>(left, [col(k), col(k + 1)]) };
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

/// [`product_rows_with`] in its AVX2 build where the processor has AVX2 (and the baseline
/// is not forced), else in the baseline build.
#[allow(clippy::too_many_arguments)]
fn product_rows(
    a: &[f64],
    b: &[f64],
    len: usize,
    q: usize,
    rows: Range<usize>,
    lower: bool,
    out: &mut [f64],
) {
    #[cfg(target_arch = "x86_64")]
    if cabo_core::simd::has_avx2() {
        #[target_feature(enable = "avx2")]
        #[allow(clippy::too_many_arguments)]
        fn avx2(
            a: &[f64],
            b: &[f64],
            len: usize,
            q: usize,
            rows: Range<usize>,
            lower: bool,
            out: &mut [f64],
        ) {
            // SAFETY: compiled for AVX2, which implies AVX.
            unsafe { product_rows_with::<true>(a, b, len, q, rows, lower, out) }
        }
        // SAFETY: the processor supports AVX2, checked just above.
        return unsafe { avx2(a, b, len, q, rows, lower, out) };
    }
    // SAFETY: the baseline path uses no AVX.
    unsafe { product_rows_with::<false>(a, b, len, q, rows, lower, out) }
}

/// `A Bᵀ` (row-major `p × q`) for `a` row-major `p × len` and `b` row-major `q × len`.
pub fn product_nt(a: &[f64], p: usize, b: &[f64], q: usize, len: usize) -> Vec<f64> {
    assert!(
        a.len() == p * len && b.len() == q * len,
        "product_nt: shapes"
    );
    let mut out = vec![0.0; p * q];
    split_rows(a, b, len, q, 0..p, p / 2, false, &mut out);
    out
}

/// The lower triangle (diagonal included) of `R Rᵀ` into a row-major `k × k` buffer, for
/// `r` row-major `k × len`; the strict upper triangle is left zero.
pub fn gram_lower(r: &[f64], k: usize, len: usize) -> Vec<f64> {
    assert_eq!(r.len(), k * len, "gram_lower: shape");
    let mut out = vec![0.0; k * k];
    // Rows split where the two halves of the triangle have equal area.
    let split = ((k as f64) / std::f64::consts::SQRT_2).round() as usize;
    split_rows(r, r, len, k, 0..k, split.min(k), true, &mut out);
    out
}

/// [`product_rows`] over `rows`, in two threads split at `split` when the work is large
/// (the entries are the same either way).
#[allow(clippy::too_many_arguments)]
fn split_rows(
    a: &[f64],
    b: &[f64],
    len: usize,
    q: usize,
    rows: Range<usize>,
    split: usize,
    lower: bool,
    out: &mut [f64],
) {
    let work = rows.len() * q * len;
    if work < PARALLEL_WORK || rows.len() < 8 {
        product_rows(a, b, len, q, rows, lower, out);
        return;
    }
    let (top, bottom) = out.split_at_mut((split - rows.start) * q);
    rayon::join(
        || product_rows(a, b, len, q, rows.start..split, lower, top),
        || product_rows(a, b, len, q, split..rows.end, lower, bottom),
    );
}

/// The transpose of a row-major `rows × cols` matrix.
pub fn transpose(m: &[f64], rows: usize, cols: usize) -> Vec<f64> {
    let mut out = vec![0.0; m.len()];
    // Tiles of 32 × 32 keep both the reads and the writes within a few cache lines.
    const T: usize = 32;
    for ib in (0..rows).step_by(T) {
        for jb in (0..cols).step_by(T) {
            for i in ib..(ib + T).min(rows) {
                for j in jb..(jb + T).min(cols) {
                    out[j * rows + i] = m[i * cols + j];
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matrix(rows: usize, cols: usize, seed: u64) -> Vec<f64> {
        let mut rng = cabo_core::Rng::new(seed);
        (0..rows * cols).map(|_| rng.normal()).collect()
    }

    /// Every entry is bit for bit the plain [`dot`] of its two rows, whatever path (four
    /// rows or one, one thread or two) computed it.
    #[test]
    fn products_are_plain_dot_products_bit_for_bit() {
        for (p, q, len) in [(7, 5, 3), (9, 70, 13), (130, 67, 2100)] {
            let (a, b) = (matrix(p, len, 1), matrix(q, len, 2));
            let c = product_nt(&a, p, &b, q, len);
            for i in 0..p {
                for k in 0..q {
                    let want = dot(&a[i * len..(i + 1) * len], &b[k * len..(k + 1) * len]);
                    assert_eq!(
                        c[i * q + k].to_bits(),
                        want.to_bits(),
                        "{p}×{q}: ({i}, {k})"
                    );
                }
            }
            let g = gram_lower(&a, p, len);
            for i in 0..p {
                for k in 0..p {
                    let want = if k <= i {
                        dot(&a[i * len..(i + 1) * len], &a[k * len..(k + 1) * len])
                    } else {
                        0.0
                    };
                    assert_eq!(g[i * p + k].to_bits(), want.to_bits(), "gram ({i}, {k})");
                }
            }
        }
    }

    #[test]
    fn baseline_and_avx2_builds_agree() {
        let (a, b) = (matrix(21, 301, 3), matrix(66, 301, 4));
        let fast = product_nt(&a, 21, &b, 66, 301);
        cabo_core::simd::force_baseline(true);
        let base = product_nt(&a, 21, &b, 66, 301);
        cabo_core::simd::force_baseline(false);
        assert!(
            fast.iter()
                .zip(&base)
                .all(|(x, y)| x.to_bits() == y.to_bits())
        );
    }

    #[test]
    fn transpose_swaps_indices() {
        let m = matrix(45, 38, 5);
        let t = transpose(&m, 45, 38);
        for i in 0..45 {
            for j in 0..38 {
                assert_eq!(t[j * 45 + i], m[i * 38 + j]);
            }
        }
        assert_eq!(transpose(&t, 38, 45), m);
    }
}
