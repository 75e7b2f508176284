//! The dense products of a random-feature fit: the Gram matrix `R Rᵀ` of a matrix's rows
//! (lower triangle) and the product `A Bᵀ`, on [`cabo_linalg::dense::product_rows`] (tiled,
//! with an AVX build, every entry bit for bit the plain dot product), split between two
//! threads when the work is large.

use cabo_linalg::dense::product_rows;
use std::ops::Range;

/// Multiply-adds above which a product splits its rows between two threads.
const PARALLEL_WORK: usize = 1 << 24;

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
    use cabo_linalg::vector::dot;

    fn matrix(rows: usize, cols: usize, seed: u64) -> Vec<f64> {
        let mut rng = cabo_core::Rng::new(seed);
        (0..rows * cols).map(|_| rng.normal()).collect()
    }

    /// Every entry is bit for bit the plain [`dot`] of its two rows, whether one thread or
    /// two computed it.
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
