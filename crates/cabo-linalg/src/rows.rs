//! Sums over the rows of a row-major matrix: the products `Wᵀd`, `WᵀZr` and `WᵀZZᵀW` of
//! L-BFGS-B's generalised Cauchy point and subspace step, where `W` is `n × 2m` and `Z`
//! selects the free variables, the weighted sums of a kernel's Jacobian rows that make a GP's
//! gradients (`weighted_rows`), and the dot products of every row with one vector
//! (`row_dots`: random features' arguments). Each entry is summed in ascending row order,
//! whatever the blocking, so every build gives the plain loop's bits.

// Dense small-matrix kernels read clearest with explicit indices.
#![allow(clippy::needless_range_loop)]

use crate::simd::avx2_dispatch;
use crate::vector::dot;

avx2_dispatch! {
    /// `out[i] = dot(row_i, x)` for the rows of `rows` (row-major, `x.len()` per row): the
    /// bits of [`dot`] row by row, with consecutive rows' sums in flight together.
    pub fn row_dots(rows: &[f64], x: &[f64], out: &mut [f64]) {
        let d = x.len();
        if d == 0 {
            out.fill(0.0);
            return;
        }
        for (o, row) in out.iter_mut().zip(rows.chunks_exact(d)) {
            *o = dot(row, x);
        }
    }
}

avx2_dispatch! {
    /// `p += Σ_i d_i · W_i` over the rows `W_i` of `w` (stride `stride`, first `p.len()`
    /// columns) with `d_i ≠ 0`, in ascending `i` (the Cauchy direction's image `Wᵀd`).
    pub fn accumulate_rows(w: &[f64], stride: usize, d: &[f64], p: &mut [f64]) {
        let kk = p.len();
        for (row, &di) in w.chunks_exact(stride).zip(d) {
            if di != 0.0 {
                for (pj, wj) in p.iter_mut().zip(&row[..kk]) {
                    *pj += wj * di;
                }
            }
        }
    }
}

avx2_dispatch! {
    /// Over the rows `i` of `w` listed in `free`, in order: `v2 = Σ_i r_i W_i` and the upper
    /// triangle of `wzzw = Σ_i W_iᵀ W_i` (row-major `kk × kk`, `kk = v2.len()`; the strict
    /// lower triangle is zeroed), each entry summed in ascending `i` — the products `WᵀZr`
    /// and `WᵀZZᵀW` of the subspace step.
    pub fn free_gram(w: &[f64], stride: usize, free: &[usize], r: &[f64], v2: &mut [f64], wzzw: &mut [f64]) {
        let kk = v2.len();
        v2.fill(0.0);
        wzzw.fill(0.0);
        let row = |i: usize| &w[i * stride..i * stride + kk];
        // Four variables per pass: each entry takes its four terms in order (the same sums
        // as one variable at a time) while it is loaded and stored once.
        let mut quads = free.chunks_exact(4);
        for q in &mut quads {
            let [w0, w1, w2, w3] = [row(q[0]), row(q[1]), row(q[2]), row(q[3])];
            let [r0, r1, r2, r3] = [r[q[0]], r[q[1]], r[q[2]], r[q[3]]];
            for a in 0..kk {
                v2[a] = v2[a] + w0[a] * r0 + w1[a] * r1 + w2[a] * r2 + w3[a] * r3;
                let [a0, a1, a2, a3] = [w0[a], w1[a], w2[a], w3[a]];
                let acc = &mut wzzw[a * kk + a..(a + 1) * kk];
                for ((((acc, b0), b1), b2), b3) in acc
                    .iter_mut()
                    .zip(&w0[a..])
                    .zip(&w1[a..])
                    .zip(&w2[a..])
                    .zip(&w3[a..])
                {
                    *acc = *acc + a0 * b0 + a1 * b1 + a2 * b2 + a3 * b3;
                }
            }
        }
        for &i in quads.remainder() {
            let wi = row(i);
            let ri = r[i];
            for a in 0..kk {
                v2[a] += wi[a] * ri;
                let wa = wi[a];
                for (acc, wb) in wzzw[a * kk + a..(a + 1) * kk].iter_mut().zip(&wi[a..]) {
                    *acc += wa * wb;
                }
            }
        }
    }
}

/// How [`weighted_rows`] folds each weighted row into the running sums.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Fold {
    /// `out[j] = out[j] + w_i·row_i[j]`.
    Add,
    /// `out[j] = out[j] − w_i·row_i[j]`.
    Subtract,
    /// `out[j] = out[j] − ((2·w_i)·row_i[j])·s`: a GP's variance gradient
    /// `−2 Σ u_i ∂k_i/∂x`, scaled, straight from `u`.
    SubtractTwiceScaled(f64),
}

avx2_dispatch! {
    /// Folds every row of `rows` (row-major, `out.len()` per row), weighted by `w[i]`, into
    /// `out` in ascending `i` as `fold` says: the per-coordinate sums over training inputs of
    /// a GP's gradients (`∂mean/∂x = Σ α_i ∂k_i/∂x`, and the like). Each entry gets exactly
    /// the operations of the plain loop.
    ///
    /// The columns go in blocks of up to 32 whose running sums stay in registers while the
    /// rows stream past. The plain loop stores every sum after every row and loads it back
    /// for the next, which ties each row to the one before through memory; here each
    /// block's sums are loaded and stored once.
    pub fn weighted_rows(rows: &[f64], w: &[f64], fold: Fold, out: &mut [f64]) {
        let d = out.len();
        if d == 0 {
            return;
        }
        let terms = rows.chunks_exact(d).zip(w).map(|(row, &wi)| (wi, row));
        match fold {
            Fold::Add => fold_rows(terms, out, |o, wi, r| o + wi * r),
            Fold::Subtract => fold_rows(terms, out, |o, wi, r| o - wi * r),
            Fold::SubtractTwiceScaled(s) => {
                fold_rows(terms, out, |o, wi, r| o - 2.0 * wi * r * s)
            }
        }
    }
}

/// `out[j] ← step(…step(step(out[j], x₁, r₁[j]), x₂, r₂[j])…)` over the terms `(x_t, r_t)`
/// in order, for every column `j`: many independent accumulations side by side, each taking
/// exactly the operations of a plain loop over the terms. The columns go in blocks of 32,
/// 16, 8, 4, 2 and 1 whose running sums stay in registers while the terms stream past, so
/// each block is loaded and stored once and the loop over its columns vectorises; a plain
/// loop over the terms would store every sum after every term and load it back for the
/// next. Every row must hold at least `out.len()` entries.
///
/// Inlined into its caller, so it runs in the caller's build (a dispatched kernel's AVX2
/// body, or the baseline).
#[inline(always)]
pub fn fold_rows<'a, T: Copy>(
    terms: impl Iterator<Item = (T, &'a [f64])> + Clone,
    out: &mut [f64],
    step: impl Fn(f64, T, f64) -> f64 + Copy,
) {
    let mut at = 0;
    let mut rest = out;
    while !rest.is_empty() {
        let width = match rest.len() {
            32.. => 32,
            16..=31 => 16,
            8..=15 => 8,
            4..=7 => 4,
            2..=3 => 2,
            _ => 1,
        };
        let (block, tail) = rest.split_at_mut(width);
        match width {
            32 => fold_block::<32, T>(terms.clone(), at, block, step),
            16 => fold_block::<16, T>(terms.clone(), at, block, step),
            8 => fold_block::<8, T>(terms.clone(), at, block, step),
            4 => fold_block::<4, T>(terms.clone(), at, block, step),
            2 => fold_block::<2, T>(terms.clone(), at, block, step),
            _ => fold_block::<1, T>(terms.clone(), at, block, step),
        }
        at += width;
        rest = tail;
    }
}

/// The columns `at..at + W` of [`fold_rows`].
#[inline(always)]
fn fold_block<'a, const W: usize, T: Copy>(
    terms: impl Iterator<Item = (T, &'a [f64])>,
    at: usize,
    out: &mut [f64],
    step: impl Fn(f64, T, f64) -> f64,
) {
    let mut acc: [f64; W] = (&*out).try_into().expect("a block of W columns");
    for (x, row) in terms {
        let r: &[f64; W] = row[at..at + W].try_into().expect("a block of W columns");
        for (s, &y) in acc.iter_mut().zip(r) {
            *s = step(*s, x, y);
        }
    }
    out.copy_from_slice(&acc);
}
