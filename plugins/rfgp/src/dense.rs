//! The dense products of a random-feature fit: the Gram matrix `R Rᵀ` of a matrix's rows
//! (lower triangle) and the product `A Bᵀ`, both as dot products of contiguous rows.
//!
//! At n = 2000 points and m = 1024 features these products are most of a fit's work
//! (`ΦᵀΦ` is n·m²/2 multiply-adds, `A⁻¹Φᵀ` n·m²), so they are blocked for the cache (a
//! block of 64 rows of the right factor is reused by every row of the left one), take four
//! left rows per pass over a right row (the four dot products share its loads), and are
//! compiled twice by [`cabo_core::avx2_dispatch!`]. Every dot product is summed the way
//! [`cabo_core::vector::dot`] sums it — lane l holds the indices ≡ l mod 4, lanes added
//! pairwise, then the tail — whichever path computes it, so the AVX2 and baseline builds
//! and the one- and four-row paths agree to the bit, and splitting the rows between two
//! threads changes nothing.

use cabo_core::vector::dot;
use std::ops::Range;

/// Rows of the right factor kept hot in the cache while every left row passes over them.
const BLOCK: usize = 64;

/// Multiply-adds above which a product splits its rows between two threads.
const PARALLEL_WORK: usize = 1 << 24;

/// Four dot products of `b` with `a[0..4]`, each summed like [`dot`].
#[inline(always)]
fn dot4(b: &[f64], a: [&[f64]; 4]) -> [f64; 4] {
    let n = b.len();
    let a = [&a[0][..n], &a[1][..n], &a[2][..n], &a[3][..n]];
    let body = n - n % 4;
    let mut acc = [[0.0f64; 4]; 4];
    for c in (0..body).step_by(4) {
        let bv = [b[c], b[c + 1], b[c + 2], b[c + 3]];
        for (acc_r, a_r) in acc.iter_mut().zip(&a) {
            for l in 0..4 {
                acc_r[l] += a_r[c + l] * bv[l];
            }
        }
    }
    let mut out = acc.map(|v| (v[0] + v[1]) + (v[2] + v[3]));
    for k in body..n {
        for (o, a_r) in out.iter_mut().zip(&a) {
            *o += a_r[k] * b[k];
        }
    }
    out
}

cabo_core::avx2_dispatch! {
/// Rows `rows` of `A Bᵀ` into `out` (row-major, `rows.len() × q`, starting at the first row),
/// for `a` row-major with rows of length `len` and `b` row-major `q × len`. With `lower`,
/// only the entries on and below the diagonal (k ≤ i) are written.
fn product_rows(
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
    for kb in (0..q).step_by(BLOCK) {
        let ke = (kb + BLOCK).min(q);
        let mut i = rows.start;
        while i + 4 <= rows.end {
            let left = [row(i), row(i + 1), row(i + 2), row(i + 3)];
            let end = if lower { ke.min(i + 4) } else { ke };
            for k in kb..end {
                let v = dot4(&b[k * len..(k + 1) * len], left);
                for (r, v) in v.into_iter().enumerate() {
                    if !lower || k <= i + r {
                        out[(i + r - first) * q + k] = v;
                    }
                }
            }
            i += 4;
        }
        for i in i..rows.end {
            let end = if lower { ke.min(i + 1) } else { ke };
            for k in kb..end {
                out[(i - first) * q + k] = dot(row(i), &b[k * len..(k + 1) * len]);
            }
        }
    }
}
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
