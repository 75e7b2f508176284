//! Kernels of a lower-triangular Cholesky factor `A + jitter·I = L Lᵀ` stored *packed by
//! rows*: row `i` holds `L[i][0..=i]` at offset [`row_start`]`(i) = i(i+1)/2`. Every loop
//! walks rows, so inner loops are contiguous, and extending the factor by one observation
//! only appends a row. The factor type ([`crate::Cholesky`]) adds the jitter
//! retries, the errors and the parallel split; these are the loops it runs.
//!
//! The row-block kernels take four rows at a time: four dot products against a shared
//! prefix (`dot4`), or four `axpy`s fused so the target row is loaded and stored once
//! (`sub4`, `add4`). Every build performs the same operations in the same order as the
//! plain one-row-at-a-time loops, so all agree to the bit.

#[cfg(target_arch = "x86_64")]
use crate::simd::allows;
use crate::simd::{Isa, avx2_dispatch};
use crate::vector::{axpy, dot};

/// Offset of row `i` in a row-packed lower triangle (rows `0..i` hold `i(i+1)/2` entries),
/// which is also the packed length of an order-`i` factor.
#[inline]
pub fn row_start(i: usize) -> usize {
    i * (i + 1) / 2
}

/// The builds of the kernels that take their level as a const parameter.
const PORTABLE: u8 = Isa::Portable as u8;
#[cfg(target_arch = "x86_64")]
const BASELINE: u8 = Isa::Baseline as u8;
#[cfg(target_arch = "x86_64")]
const AVX2: u8 = Isa::Avx2 as u8;

/// Four dot products of `x` with `r[0..4]` (each at least `x.len()` long), in the build
/// `ISA`. Sharing the loads of `x` and keeping a four-lane accumulator per product (lane l
/// sums the indices ≡ l mod 4; lanes are added pairwise at the end, then the tail) is what
/// makes the triangular kernels run at arithmetic rather than load/loop-overhead speed.
/// Every build — portable, SSE2, AVX — performs exactly these operations.
///
/// # Safety
/// The processor must support the instructions of `ISA`: AVX at [`Isa::Avx2`] and above;
/// the other levels need nothing beyond the target's baseline.
#[inline(always)]
pub(crate) unsafe fn dot4<const ISA: u8>(x: &[f64], r: [&[f64]; 4]) -> [f64; 4] {
    #[cfg(target_arch = "x86_64")]
    if ISA >= AVX2 {
        // SAFETY: the caller guarantees AVX (this function's contract).
        return unsafe { dot4_avx(x, r) };
    }
    let n = x.len();
    let r = [&r[0][..n], &r[1][..n], &r[2][..n], &r[3][..n]];
    let body = n - n % 4;
    #[cfg(target_arch = "x86_64")]
    if ISA == BASELINE {
        return finish_dot4(dot4_lanes_sse2(&x[..body], r), x, r, body);
    }
    finish_dot4(dot4_lanes_portable(&x[..body], r), x, r, body)
}

/// [`dot4`] in AVX code: one 256-bit accumulator per product.
///
/// # Safety
/// The processor must support AVX.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
#[inline]
unsafe fn dot4_avx(x: &[f64], r: [&[f64]; 4]) -> [f64; 4] {
    use std::arch::x86_64::{
        _mm256_add_pd, _mm256_loadu_pd, _mm256_mul_pd, _mm256_setzero_pd, _mm256_storeu_pd,
    };
    let n = x.len();
    let r = [&r[0][..n], &r[1][..n], &r[2][..n], &r[3][..n]];
    let body = n - n % 4;
    let mut acc = [[0.0f64; 4]; 4];
    // SAFETY: every load reads indices k..k + 4 with k + 4 ≤ body ≤ n, inside `x` and each
    // `r[i]` (sliced to n above); AVX is available by this function's contract.
    unsafe {
        let mut v = [_mm256_setzero_pd(); 4];
        let mut k = 0;
        while k < body {
            let xv = _mm256_loadu_pd(x.as_ptr().add(k));
            for (a, ri) in v.iter_mut().zip(&r) {
                *a = _mm256_add_pd(*a, _mm256_mul_pd(xv, _mm256_loadu_pd(ri.as_ptr().add(k))));
            }
            k += 4;
        }
        for (o, a) in acc.iter_mut().zip(v) {
            _mm256_storeu_pd(o.as_mut_ptr(), a);
        }
    }
    finish_dot4(acc, x, r, body)
}

/// Sums each product's lanes pairwise, then adds the indices `body..` in order.
#[inline(always)]
fn finish_dot4(acc: [[f64; 4]; 4], x: &[f64], r: [&[f64]; 4], body: usize) -> [f64; 4] {
    let mut out = acc.map(|a| (a[0] + a[1]) + (a[2] + a[3]));
    for k in body..x.len() {
        for (o, ri) in out.iter_mut().zip(&r) {
            *o += x[k] * ri[k];
        }
    }
    out
}

/// The lanes of [`dot4`] over `x` (a whole number of quadruples) with SSE2, part of the
/// x86-64 baseline: two 128-bit accumulators per product.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn dot4_lanes_sse2(x: &[f64], r: [&[f64]; 4]) -> [[f64; 4]; 4] {
    use std::arch::x86_64::{_mm_add_pd, _mm_loadu_pd, _mm_mul_pd, _mm_setzero_pd, _mm_storeu_pd};
    let n = x.len();
    assert!(n.is_multiple_of(4) && r.iter().all(|ri| ri.len() >= n));
    let mut acc = [[0.0f64; 4]; 4];
    // SAFETY: SSE2 is always available on x86-64, and every load reads indices k..k + 4 with
    // k + 4 ≤ n, inside `x` and inside each `r[i]` (checked above).
    unsafe {
        let mut lo = [_mm_setzero_pd(); 4];
        let mut hi = [_mm_setzero_pd(); 4];
        let mut k = 0;
        while k < n {
            let (x0, x2) = (
                _mm_loadu_pd(x.as_ptr().add(k)),
                _mm_loadu_pd(x.as_ptr().add(k + 2)),
            );
            for i in 0..4 {
                let p = r[i].as_ptr().add(k);
                lo[i] = _mm_add_pd(lo[i], _mm_mul_pd(x0, _mm_loadu_pd(p)));
                hi[i] = _mm_add_pd(hi[i], _mm_mul_pd(x2, _mm_loadu_pd(p.add(2))));
            }
            k += 4;
        }
        for i in 0..4 {
            _mm_storeu_pd(acc[i].as_mut_ptr(), lo[i]);
            _mm_storeu_pd(acc[i].as_mut_ptr().add(2), hi[i]);
        }
    }
    acc
}

/// Portable lanes of [`dot4`], with the same operations as the SSE2 ones: the build off
/// x86-64, and on it under [`crate::simd::limit`]`(Isa::Portable)`.
#[inline(always)]
fn dot4_lanes_portable(x: &[f64], r: [&[f64]; 4]) -> [[f64; 4]; 4] {
    let mut acc = [[0.0f64; 4]; 4];
    for (c, xv) in x.chunks_exact(4).enumerate() {
        for (a, ri) in acc.iter_mut().zip(&r) {
            for l in 0..4 {
                a[l] += xv[l] * ri[4 * c + l];
            }
        }
    }
    acc
}

/// `y = (((y − a₀x₀) − a₁x₁) − a₂x₂) − a₃x₃` elementwise: four `axpy`s fused so `y` is loaded
/// and stored once, with the same operation order (hence the same rounding) as four calls.
#[inline(always)]
fn sub4(a: [f64; 4], x: [&[f64]; 4], y: &mut [f64]) {
    let n = y.len();
    let (x0, x1, x2, x3) = (&x[0][..n], &x[1][..n], &x[2][..n], &x[3][..n]);
    for k in 0..n {
        y[k] = y[k] - a[0] * x0[k] - a[1] * x1[k] - a[2] * x2[k] - a[3] * x3[k];
    }
}

/// `y = (((y + a₀x₀) + a₁x₁) + a₂x₂) + a₃x₃` elementwise (see [`sub4`]).
#[inline(always)]
fn add4(a: [f64; 4], x: [&[f64]; 4], y: &mut [f64]) {
    let n = y.len();
    let (x0, x1, x2, x3) = (&x[0][..n], &x[1][..n], &x[2][..n], &x[3][..n]);
    for k in 0..n {
        y[k] = y[k] + a[0] * x0[k] + a[1] * x1[k] + a[2] * x2[k] + a[3] * x3[k];
    }
}

/// One attempt at factorising `a + jitter·I` (`a` row-major `n × n`, only its lower triangle
/// read) into the row-packed `packed` (at least [`row_start`]`(n)` long); false as soon as a
/// pivot is not positive and finite, with `packed` partly written. Runs with 256-bit vectors
/// where the processor has AVX2, with bitwise identical results.
pub fn factor(a: &[f64], n: usize, jitter: f64, packed: &mut [f64]) -> bool {
    factor_from(a, n, 0, jitter, packed)
}

/// Continues a factorisation of `A + jitter·I` of order `n` whose rows `0..first` are
/// already in `packed` (as [`factor`] with the same jitter left them): `rows` holds rows
/// `first..n` of `A` (row-major `(n − first) × n`, entries `0..=i` of row i read), and rows
/// `first..n` of the factor are written — bitwise the rows [`factor`] of the whole matrix
/// computes, since each row depends only on `A`'s row and the rows above it. False as soon as
/// a pivot is not positive and finite.
pub fn factor_from(rows: &[f64], n: usize, first: usize, jitter: f64, packed: &mut [f64]) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        if allows(Isa::Avx2) {
            /// [`factor_rows`] compiled for AVX2.
            ///
            /// # Safety
            /// The processor must support AVX2.
            #[target_feature(enable = "avx2")]
            unsafe fn avx2(
                rows: &[f64],
                n: usize,
                first: usize,
                jitter: f64,
                packed: &mut [f64],
            ) -> bool {
                // SAFETY: AVX2, which this build requires, includes AVX.
                unsafe { factor_rows::<AVX2>(rows, n, first, jitter, packed) }
            }
            // SAFETY: the processor supports AVX2 (`allows` checks it).
            return unsafe { avx2(rows, n, first, jitter, packed) };
        }
        if allows(Isa::Baseline) {
            // SAFETY: the SSE2 build needs only the x86-64 baseline.
            return unsafe { factor_rows::<BASELINE>(rows, n, first, jitter, packed) };
        }
    }
    // SAFETY: the portable build needs nothing beyond the target's baseline.
    unsafe { factor_rows::<PORTABLE>(rows, n, first, jitter, packed) }
}

/// The body of [`factor_from`] in the build `ISA` (of its [`dot4`]).
///
/// # Safety
/// The processor must support the instructions of `ISA` (see [`dot4`]).
#[inline(always)]
unsafe fn factor_rows<const ISA: u8>(
    rows: &[f64],
    n: usize,
    first: usize,
    jitter: f64,
    packed: &mut [f64],
) -> bool {
    // Reciprocal pivots: the block's four unknowns depend on each other in sequence, and a
    // multiply is several times shorter on that critical path than a division. Those of the
    // rows already factored are recomputed as they were made.
    let mut inv_pivot = vec![0.0; n];
    for (j, p) in inv_pivot[..first].iter_mut().enumerate() {
        *p = 1.0 / packed[row_start(j) + j];
    }
    // Row i of A, whichever block of rows `rows` starts at.
    let a = |i: usize, j: usize| rows[(i - first) * n + j];
    for i in first..n {
        let si = row_start(i);
        // Off-diagonal entries four at a time: one pass over the prefix of row i gives the
        // four dot products, and the triangle inside the block is finished by hand.
        let mut j = 0;
        while j + 4 <= i {
            let (done, cur) = packed.split_at_mut(si);
            let rj = [
                &done[row_start(j)..row_start(j + 1)],
                &done[row_start(j + 1)..row_start(j + 2)],
                &done[row_start(j + 2)..row_start(j + 3)],
                &done[row_start(j + 3)..row_start(j + 4)],
            ];
            // SAFETY: the caller guarantees the instructions of `ISA` (this function's
            // contract).
            let s = unsafe { dot4::<ISA>(&cur[..j], rj) };
            let p = &inv_pivot[j..j + 4];
            let l0 = (a(i, j) - s[0]) * p[0];
            let l1 = (a(i, j + 1) - s[1] - l0 * rj[1][j]) * p[1];
            let l2 = (a(i, j + 2) - s[2] - l0 * rj[2][j] - l1 * rj[2][j + 1]) * p[2];
            let l3 =
                (a(i, j + 3) - s[3] - l0 * rj[3][j] - l1 * rj[3][j + 1] - l2 * rj[3][j + 2])
                    * p[3];
            cur[j] = l0;
            cur[j + 1] = l1;
            cur[j + 2] = l2;
            cur[j + 3] = l3;
            j += 4;
        }
        for j in j..=i {
            let sj = row_start(j);
            let s = dot(&packed[si..si + j], &packed[sj..sj + j]);
            if i == j {
                let p = a(i, i) + jitter - s;
                if !(p.is_finite() && p > 0.0) {
                    return false;
                }
                packed[si + i] = p.sqrt();
                inv_pivot[i] = 1.0 / packed[si + i];
            } else {
                packed[si + j] = (a(i, j) - s) * inv_pivot[j];
            }
        }
    }
    true
}

/// Solves `L z = b` in place (forward substitution) for the row-packed factor `packed` of
/// order `b.len()`. Rows are taken four at a time: the four dot products against the solved
/// prefix share its loads, and the small triangle inside the block is finished by hand.
/// Runs with 256-bit vectors where the processor has AVX2, with bitwise identical results.
pub fn solve_lower(packed: &[f64], b: &mut [f64]) {
    #[cfg(target_arch = "x86_64")]
    {
        if allows(Isa::Avx2) {
            /// [`forward_substitution`] compiled for AVX2.
            ///
            /// # Safety
            /// The processor must support AVX2.
            #[target_feature(enable = "avx2")]
            unsafe fn avx2(packed: &[f64], b: &mut [f64]) {
                // SAFETY: AVX2, which this build requires, includes AVX.
                unsafe { forward_substitution::<AVX2>(packed, b) }
            }
            // SAFETY: the processor supports AVX2 (`allows` checks it).
            return unsafe { avx2(packed, b) };
        }
        if allows(Isa::Baseline) {
            // SAFETY: the SSE2 build needs only the x86-64 baseline.
            return unsafe { forward_substitution::<BASELINE>(packed, b) };
        }
    }
    // SAFETY: the portable build needs nothing beyond the target's baseline.
    unsafe { forward_substitution::<PORTABLE>(packed, b) }
}

/// The body of [`solve_lower`] in the build `ISA` (of its [`dot4`]).
///
/// # Safety
/// The processor must support the instructions of `ISA` (see [`dot4`]).
#[inline(always)]
unsafe fn forward_substitution<const ISA: u8>(packed: &[f64], b: &mut [f64]) {
    let n = b.len();
    let row = |i: usize| &packed[row_start(i)..row_start(i + 1)];
    let mut i = 0;
    while i + 4 <= n {
        let r = [row(i), row(i + 1), row(i + 2), row(i + 3)];
        // SAFETY: the caller guarantees the instructions of `ISA` (this function's contract).
        let s = unsafe { dot4::<ISA>(&b[..i], r) };
        let z0 = (b[i] - s[0]) / r[0][i];
        let z1 = (b[i + 1] - s[1] - r[1][i] * z0) / r[1][i + 1];
        let z2 = (b[i + 2] - s[2] - r[2][i] * z0 - r[2][i + 1] * z1) / r[2][i + 2];
        let z3 =
            (b[i + 3] - s[3] - r[3][i] * z0 - r[3][i + 1] * z1 - r[3][i + 2] * z2) / r[3][i + 3];
        b[i] = z0;
        b[i + 1] = z1;
        b[i + 2] = z2;
        b[i + 3] = z3;
        i += 4;
    }
    for i in i..n {
        let r = row(i);
        let s = b[i] - dot(&r[..i], &b[..i]);
        b[i] = s / r[i];
    }
}

avx2_dispatch! {
/// Solves `Lᵀ z = b` in place (backward substitution, column-oriented so that it still walks
/// rows of the packed factor) for the row-packed factor `packed` of order `b.len()`. Four
/// rows are eliminated per pass over `b`, in the same order as one at a time, so the result
/// is identical to the plain loop; its updates are elementwise, so the AVX2 build's wider
/// vectors give the same bits.
pub fn solve_upper(packed: &[f64], b: &mut [f64]) {
    let row = |i: usize| &packed[row_start(i)..row_start(i + 1)];
    let mut i = b.len();
    while i >= 4 {
        let base = i - 4;
        let r = [row(base + 3), row(base + 2), row(base + 1), row(base)];
        let z3 = b[base + 3] / r[0][base + 3];
        let z2 = (b[base + 2] - z3 * r[0][base + 2]) / r[1][base + 2];
        let z1 = (b[base + 1] - z3 * r[0][base + 1] - z2 * r[1][base + 1]) / r[2][base + 1];
        let z0 = (b[base] - z3 * r[0][base] - z2 * r[1][base] - z1 * r[2][base]) / r[3][base];
        b[base + 3] = z3;
        b[base + 2] = z2;
        b[base + 1] = z1;
        b[base] = z0;
        sub4([z3, z2, z1, z0], r, &mut b[..base]);
        i = base;
    }
    for i in (0..i).rev() {
        let r = row(i);
        let zi = b[i] / r[i];
        b[i] = zi;
        axpy(-zi, &r[..i], &mut b[..i]);
    }
}
}

avx2_dispatch! {
/// Solves `L Z = B` in place for the row-packed factor `packed` of order `n` and a
/// row-major `n × m` right-hand side `b`: each step is a contiguous `axpy` over the `m`
/// columns, four earlier rows per pass (the same order of updates as one at a time). Its
/// updates are elementwise, so the AVX2 build's wider vectors give the same bits.
pub fn solve_lower_rows(packed: &[f64], n: usize, b: &mut [f64], m: usize) {
    for i in 0..n {
        let r = &packed[row_start(i)..row_start(i + 1)];
        let (done, rest) = b.split_at_mut(i * m);
        let bi = &mut rest[..m];
        let mut j = 0;
        while j + 4 <= i {
            let rows = [
                &done[j * m..(j + 1) * m],
                &done[(j + 1) * m..(j + 2) * m],
                &done[(j + 2) * m..(j + 3) * m],
                &done[(j + 3) * m..(j + 4) * m],
            ];
            sub4([r[j], r[j + 1], r[j + 2], r[j + 3]], rows, bi);
            j += 4;
        }
        for (j, &lij) in r[..i].iter().enumerate().skip(j) {
            axpy(-lij, &done[j * m..(j + 1) * m], bi);
        }
        let inv = 1.0 / r[i];
        for v in bi.iter_mut() {
            *v *= inv;
        }
    }
}
}

avx2_dispatch! {
/// `L⁻¹` of the row-packed factor `packed` of order `n` into the row-major `n × n` buffer
/// `inv` (any prior contents). Only the lower triangle and the three entries right of the
/// diagonal (zero) are written; the rest of the buffer is left as it was, so callers that
/// invert repeatedly reuse one buffer.
pub fn invert_factor(packed: &[f64], n: usize, inv: &mut [f64]) {
    // Forward substitution on the identity, skipping the structural zeros: row j of
    // L⁻¹ is non-zero only in columns 0..=j, so the work is n³/6 instead of n³/2.
    for i in 0..n {
        let r = &packed[row_start(i)..row_start(i + 1)];
        let (done, rest) = inv.split_at_mut(i * n);
        let bi = &mut rest[..n];
        bi[..=(i + 3).min(n - 1)].fill(0.0);
        bi[i] = 1.0;
        // Four earlier rows per pass; rows of L⁻¹ are zero beyond their diagonal, so
        // running all four over the longest prefix changes nothing.
        let mut j = 0;
        while j + 4 <= i {
            let len = j + 4;
            let rows = [
                &done[j * n..j * n + len],
                &done[(j + 1) * n..(j + 1) * n + len],
                &done[(j + 2) * n..(j + 2) * n + len],
                &done[(j + 3) * n..(j + 3) * n + len],
            ];
            sub4([r[j], r[j + 1], r[j + 2], r[j + 3]], rows, &mut bi[..len]);
            j += 4;
        }
        for (j, &lij) in r[..i].iter().enumerate().skip(j) {
            axpy(-lij, &done[j * n..j * n + j + 1], &mut bi[..=j]);
        }
        let inv_d = 1.0 / r[i];
        for v in bi[..=i].iter_mut() {
            *v *= inv_d;
        }
    }
}
}

avx2_dispatch! {
/// Rows `rows` of the lower triangle of `(L Lᵀ)⁻¹ = L⁻ᵀL⁻¹` from `linv = L⁻¹` (row-major
/// `n × n`, as [`invert_factor`] leaves it) into `out`, which starts at the first of them
/// (row stride `n`; entries right of the diagonal are left as they were). Row a is
/// `Σ_{k ≥ a} L⁻¹[k][a] · L⁻¹[k][..=a]`, summed in ascending k four rows at a time so that
/// each output row is loaded and stored once per four updates. Disjoint row ranges can run
/// in parallel with the same result.
pub fn inverse_lower_rows(linv: &[f64], n: usize, rows: std::ops::Range<usize>, out: &mut [f64]) {
    let first = rows.start;
    for a in rows {
        let oa = &mut out[(a - first) * n..(a - first) * n + a + 1];
        oa.fill(0.0);
        let mut k = a;
        while k + 4 <= n {
            let rows = [
                &linv[k * n..k * n + a + 1],
                &linv[(k + 1) * n..(k + 1) * n + a + 1],
                &linv[(k + 2) * n..(k + 2) * n + a + 1],
                &linv[(k + 3) * n..(k + 3) * n + a + 1],
            ];
            let c = [rows[0][a], rows[1][a], rows[2][a], rows[3][a]];
            add4(c, rows, oa);
            k += 4;
        }
        for k in k..n {
            let r = &linv[k * n..k * n + a + 1];
            axpy(r[a], r, oa);
        }
    }
}
}
