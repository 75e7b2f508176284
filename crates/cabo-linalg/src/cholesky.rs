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
//!
//! Every multiply-add of these kernels is one fused operation, rounded once: `x − a·b` is
//! `(−a).mul_add(b, x)` (the negation is exact), and the AVX builds use `vfmadd` and
//! `vfnmadd`, which round the same exact value the same way. The baseline level runs the
//! portable builds, since SSE2 has no fused multiply-add (see [`crate::simd`]).

#[cfg(target_arch = "x86_64")]
use crate::simd::{AVX2, AVX512, Vector};
use crate::simd::{avx2_dispatch, avx512_dispatch};
#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::{__m256d, __m512d};

/// Offset of row `i` in a row-packed lower triangle (rows `0..i` hold `i(i+1)/2` entries),
/// which is also the packed length of an order-`i` factor.
#[inline]
pub fn row_start(i: usize) -> usize {
    i * (i + 1) / 2
}

/// `Σ aₖbₖ` over the common prefix of `a` and `b`, summed like [`crate::dot`] (four lanes,
/// added pairwise, then the tail in order) with each multiply-add fused: the dot product of
/// the kernels of this module, which must not mix with the unfused [`crate::dot`].
#[inline(always)]
fn dot_fused(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0.0f64; 4];
    for (ca, cb) in a.chunks_exact(4).zip(b.chunks_exact(4)) {
        for l in 0..4 {
            acc[l] = ca[l].mul_add(cb[l], acc[l]);
        }
    }
    let mut s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    for k in n - n % 4..n {
        s = a[k].mul_add(b[k], s);
    }
    s
}

/// `y += a·x` elementwise over the common prefix of `x` and `y`, each entry one fused
/// multiply-add (`y − l·x` is `axpy_fused(−l, x, y)`, to the bit).
#[inline(always)]
fn axpy_fused(a: f64, x: &[f64], y: &mut [f64]) {
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi = a.mul_add(*xi, *yi);
    }
}

/// `x − a·b`, rounded once.
#[inline(always)]
fn sub_mul(x: f64, a: f64, b: f64) -> f64 {
    (-a).mul_add(b, x)
}

/// Four dot products of `x` with `r[0..4]` (each at least `x.len()` long), in the build
/// `ISA`. Sharing the loads of `x` and keeping a four-lane accumulator per product (lane l
/// sums the indices ≡ l mod 4 with fused multiply-adds; lanes are added pairwise at the end,
/// then the tail) is what makes the triangular kernels run at arithmetic rather than
/// load/loop-overhead speed. Every build — portable, AVX with FMA — performs exactly these
/// operations, each the [`dot_fused`] of its row.
///
/// # Safety
/// The processor must support the instructions of `ISA`: AVX and FMA at
/// [`Isa::Avx2`](crate::simd::Isa::Avx2) and above; the other levels need nothing beyond the
/// target's baseline.
#[inline(always)]
pub(crate) unsafe fn dot4<const ISA: u8>(x: &[f64], r: [&[f64]; 4]) -> [f64; 4] {
    #[cfg(target_arch = "x86_64")]
    if ISA >= AVX2 {
        // SAFETY: the caller guarantees AVX and FMA (this function's contract).
        return unsafe { dot4xk_avx([x], r) }[0];
    }
    let n = x.len();
    let r = [&r[0][..n], &r[1][..n], &r[2][..n], &r[3][..n]];
    let body = n - n % 4;
    finish_dot4(dot4_lanes_portable(&x[..body], r), x, r, body)
}

/// Sums each product's lanes pairwise, then adds the indices `body..` in order.
#[inline(always)]
fn finish_dot4(acc: [[f64; 4]; 4], x: &[f64], r: [&[f64]; 4], body: usize) -> [f64; 4] {
    let mut out = acc.map(|a| (a[0] + a[1]) + (a[2] + a[3]));
    for k in body..x.len() {
        for (o, ri) in out.iter_mut().zip(&r) {
            *o = x[k].mul_add(ri[k], *o);
        }
    }
    out
}

/// Portable lanes of [`dot4`], with the same operations as the AVX ones ([`dot4xk_avx`]):
/// the build off x86-64, and on it at the baseline level and under
/// [`crate::simd::limit`]`(Isa::Portable)`.
#[inline(always)]
fn dot4_lanes_portable(x: &[f64], r: [&[f64]; 4]) -> [[f64; 4]; 4] {
    let mut acc = [[0.0f64; 4]; 4];
    for (c, xv) in x.chunks_exact(4).enumerate() {
        for (a, ri) in acc.iter_mut().zip(&r) {
            for l in 0..4 {
                a[l] = xv[l].mul_add(ri[4 * c + l], a[l]);
            }
        }
    }
    acc
}

/// `y = (((y − a₀x₀) − a₁x₁) − a₂x₂) − a₃x₃` elementwise, each step one fused multiply-add:
/// four [`axpy_fused`]s fused so `y` is loaded and stored once, with the same operation
/// order (hence the same rounding) as four calls.
#[inline(always)]
fn sub4(a: [f64; 4], x: [&[f64]; 4], y: &mut [f64]) {
    let n = y.len();
    let (x0, x1, x2, x3) = (&x[0][..n], &x[1][..n], &x[2][..n], &x[3][..n]);
    for k in 0..n {
        let t = sub_mul(sub_mul(y[k], a[0], x0[k]), a[1], x1[k]);
        y[k] = sub_mul(sub_mul(t, a[2], x2[k]), a[3], x3[k]);
    }
}

/// `y = (((y + a₀x₀) + a₁x₁) + a₂x₂) + a₃x₃` elementwise, fused (see [`sub4`]).
#[inline(always)]
fn add4(a: [f64; 4], x: [&[f64]; 4], y: &mut [f64]) {
    let n = y.len();
    let (x0, x1, x2, x3) = (&x[0][..n], &x[1][..n], &x[2][..n], &x[3][..n]);
    for k in 0..n {
        let t = a[1].mul_add(x1[k], a[0].mul_add(x0[k], y[k]));
        y[k] = a[3].mul_add(x3[k], a[2].mul_add(x2[k], t));
    }
}

/// One attempt at factorising `a + jitter·I` (`a` row-major `n × n`, only its lower triangle
/// read) into the row-packed `packed` (at least [`row_start`]`(n)` long); false as soon as a
/// pivot is not positive and finite, with `packed` partly written. Runs with 256-bit vectors
/// where the processor has AVX2, with bitwise identical results.
pub fn factor(a: &[f64], n: usize, jitter: f64, packed: &mut [f64]) -> bool {
    factor_from(a, n, 0, jitter, packed)
}

avx2_dispatch! {
/// Continues a factorisation of `A + jitter·I` of order `n` whose rows `0..first` are
/// already in `packed` (as [`factor`] with the same jitter left them): `rows` holds rows
/// `first..n` of `A` (row-major `(n − first) × n`, entries `0..=i` of row i read), and rows
/// `first..n` of the factor are written — bitwise the rows [`factor`] of the whole matrix
/// computes, since each row depends only on `A`'s row and the rows above it. False as soon as
/// a pivot is not positive and finite.
pub fn factor_from<const ISA: u8>(
    rows: &[f64],
    n: usize,
    first: usize,
    jitter: f64,
    packed: &mut [f64],
) -> bool {
    // SAFETY: the processor supports the instructions of `ISA` (the body's contract).
    unsafe { factor_rows::<ISA>(rows, n, first, jitter, packed) }
}
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
            let l1 = sub_mul(a(i, j + 1) - s[1], l0, rj[1][j]) * p[1];
            let t2 = sub_mul(a(i, j + 2) - s[2], l0, rj[2][j]);
            let l2 = sub_mul(t2, l1, rj[2][j + 1]) * p[2];
            let t3 = sub_mul(a(i, j + 3) - s[3], l0, rj[3][j]);
            let l3 = sub_mul(sub_mul(t3, l1, rj[3][j + 1]), l2, rj[3][j + 2]) * p[3];
            cur[j] = l0;
            cur[j + 1] = l1;
            cur[j + 2] = l2;
            cur[j + 3] = l3;
            j += 4;
        }
        for j in j..=i {
            let sj = row_start(j);
            let s = dot_fused(&packed[si..si + j], &packed[sj..sj + j]);
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

avx2_dispatch! {
/// Solves `L z = b` in place (forward substitution) for the row-packed factor `packed` of
/// order `b.len()`. Rows are taken four at a time: the four dot products against the solved
/// prefix share its loads, and the small triangle inside the block is finished by hand.
/// Runs with 256-bit vectors where the processor has AVX2, with bitwise identical results.
pub fn solve_lower<const ISA: u8>(packed: &[f64], b: &mut [f64]) {
    // SAFETY: the processor supports the instructions of `ISA` (the body's contract).
    unsafe { forward_substitution::<ISA>(packed, b) }
}
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
        lower_block(r, i, s, b);
        i += 4;
    }
    for i in i..n {
        lower_row(row(i), i, b);
    }
}

/// The triangle of one four-row block of [`forward_substitution`]: `b[i..i + 4]` from the
/// rows `r` of the block and their dot products `s` with the solved prefix `b[..i]`.
#[inline(always)]
fn lower_block(r: [&[f64]; 4], i: usize, s: [f64; 4], b: &mut [f64]) {
    let z0 = (b[i] - s[0]) / r[0][i];
    let z1 = sub_mul(b[i + 1] - s[1], r[1][i], z0) / r[1][i + 1];
    let t2 = sub_mul(b[i + 2] - s[2], r[2][i], z0);
    let z2 = sub_mul(t2, r[2][i + 1], z1) / r[2][i + 2];
    let t3 = sub_mul(b[i + 3] - s[3], r[3][i], z0);
    let z3 = sub_mul(sub_mul(t3, r[3][i + 1], z1), r[3][i + 2], z2) / r[3][i + 3];
    b[i] = z0;
    b[i + 1] = z1;
    b[i + 2] = z2;
    b[i + 3] = z3;
}

/// One row `i` past the last whole block of [`forward_substitution`], with the row `r` of L.
#[inline(always)]
fn lower_row(r: &[f64], i: usize, b: &mut [f64]) {
    let s = b[i] - dot_fused(&r[..i], &b[..i]);
    b[i] = s / r[i];
}

/// One value per right-hand side of four handled together.
type Lanes = [f64; 4];

/// The lanes `f(0), …, f(3)`.
#[inline(always)]
fn lanes(f: impl Fn(usize) -> f64) -> Lanes {
    [f(0), f(1), f(2), f(3)]
}

/// [`lower_block`] of four right-hand sides `b[l]` with their dot products `s[l]`, lane by
/// lane with exactly its operations, written so that the compiler can run the four chains
/// of divisions side by side in one vector.
#[inline(always)]
fn lower_block4(r: [&[f64]; 4], i: usize, s: &[[f64; 4]], b: [&mut [f64]; 4]) {
    let s = &s[..4];
    let x = |k: usize| lanes(|l| b[l][i + k]);
    let (b0, b1, b2, b3) = (x(0), x(1), x(2), x(3));
    let z0 = lanes(|l| (b0[l] - s[l][0]) / r[0][i]);
    let z1 = lanes(|l| sub_mul(b1[l] - s[l][1], r[1][i], z0[l]) / r[1][i + 1]);
    let z2 = lanes(|l| {
        let t = sub_mul(b2[l] - s[l][2], r[2][i], z0[l]);
        sub_mul(t, r[2][i + 1], z1[l]) / r[2][i + 2]
    });
    let z3 = lanes(|l| {
        let t = sub_mul(b3[l] - s[l][3], r[3][i], z0[l]);
        sub_mul(sub_mul(t, r[3][i + 1], z1[l]), r[3][i + 2], z2[l]) / r[3][i + 3]
    });
    for (l, b) in b.into_iter().enumerate() {
        b[i] = z0[l];
        b[i + 1] = z1[l];
        b[i + 2] = z2[l];
        b[i + 3] = z3[l];
    }
}

/// [`lower_block4`] in the build `ISA`: the AVX build runs the four right-hand sides in the
/// lanes of one 256-bit vector (so their divisions share one instruction).
///
/// # Safety
/// The processor must support the instructions of `ISA` (see [`dot4`]).
#[inline(always)]
unsafe fn lower_block4_isa<const ISA: u8>(
    r: [&[f64]; 4],
    i: usize,
    s: &[[f64; 4]],
    b: [&mut [f64]; 4],
) {
    #[cfg(target_arch = "x86_64")]
    if ISA >= AVX2 {
        // SAFETY: the caller guarantees AVX and FMA (this function's contract).
        return unsafe { lower_block4_avx(r, i, s, b) };
    }
    lower_block4(r, i, s, b)
}

/// [`lower_block4`] in AVX code: lane l of each 256-bit vector is right-hand side l, and
/// `x − c·z` is one `vfnmadd`. The vectors have four lanes in every build, one per
/// right-hand side.
///
/// # Safety
/// The processor must support AVX and FMA.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn lower_block4_avx(r: [&[f64]; 4], i: usize, s: &[[f64; 4]], b: [&mut [f64]; 4]) {
    type V = __m256d;
    let s = &s[..4];
    let x: [Lanes; 4] = std::array::from_fn(|k| lanes(|l| b[l][i + k]));
    let sk: [Lanes; 4] = std::array::from_fn(|k| lanes(|l| s[l][k]));
    let l: [[f64; 4]; 4] = std::array::from_fn(|q| std::array::from_fn(|j| r[q][i + j.min(q)]));
    let mut z = [[0.0f64; 4]; 4];
    // SAFETY: AVX and FMA are available by this function's contract; every load and store
    // reads or writes the four entries of a local array.
    unsafe {
        let c = |q: usize, j: usize| V::splat(l[q][j]);
        let (b0, b1) = (V::load(x[0].as_ptr()), V::load(x[1].as_ptr()));
        let (b2, b3) = (V::load(x[2].as_ptr()), V::load(x[3].as_ptr()));
        let (s0, s1) = (V::load(sk[0].as_ptr()), V::load(sk[1].as_ptr()));
        let (s2, s3) = (V::load(sk[2].as_ptr()), V::load(sk[3].as_ptr()));
        let z0 = b0.sub(s0).div(c(0, 0));
        let t1 = c(1, 0).neg_mul_add(z0, b1.sub(s1));
        let z1 = t1.div(c(1, 1));
        let t2 = c(2, 0).neg_mul_add(z0, b2.sub(s2));
        let z2 = c(2, 1).neg_mul_add(z1, t2).div(c(2, 2));
        let t3 = c(3, 0).neg_mul_add(z0, b3.sub(s3));
        let t3 = c(3, 2).neg_mul_add(z2, c(3, 1).neg_mul_add(z1, t3));
        let z3 = t3.div(c(3, 3));
        for (o, v) in z.iter_mut().zip([z0, z1, z2, z3]) {
            v.store(o.as_mut_ptr());
        }
    }
    for (lane, b) in b.into_iter().enumerate() {
        for (k, zk) in z.iter().enumerate() {
            b[i + k] = zk[lane];
        }
    }
}

/// The number of right-hand sides in `bs`, each of order `n` (none when `n` is 0).
fn rhs_count(n: usize, bs: &[f64]) -> usize {
    if n == 0 {
        assert!(bs.is_empty(), "right-hand sides of order 0 must be empty");
        return 0;
    }
    assert!(
        bs.len().is_multiple_of(n),
        "{} values are not a whole number of right-hand sides of order {n}",
        bs.len()
    );
    bs.len() / n
}

avx512_dispatch! {
/// Solves `L z = b` in place for every row `b` of the row-major `m × n` matrix `bs`
/// (`m = bs.len() / n` right-hand sides of order `n`) with the row-packed factor `packed`:
/// each row ends up bitwise equal to what [`solve_lower`] makes of it. The right-hand sides
/// share the loads of L: each block of four rows of L is applied to all of them while it is
/// in cache, and the AVX2 build takes two right-hand sides per pass over the block (one
/// 256-bit accumulator per row and right-hand side, the lanes of [`solve_lower`]'s), four
/// where the processor also has AVX-512F and AVX-512VL (whose 32 vector registers hold the
/// sixteen accumulators; the operations stay 256-bit). The AVX builds then finish the
/// triangles of a block for four right-hand sides side by side in one vector. For orders
/// whose factor does not fit in the core's level-2 cache this is about twice as fast per
/// right-hand side as solving them one at a time.
pub fn solve_lower_many<const ISA: u8>(packed: &[f64], n: usize, bs: &mut [f64]) {
    rhs_count(n, bs);
    // SAFETY: the processor supports the instructions of `ISA` (the body's contract).
    unsafe { forward_substitution_many::<ISA>(packed, n, bs) }
}
}

/// The body of [`solve_lower_many`] in the build `ISA` (of its [`dot4`], [`dot4x2`] and
/// [`lower_block4_isa`]): [`forward_substitution`]'s operations for each right-hand side,
/// block by block of L. At [`Isa::Avx512`](crate::simd::Isa::Avx512) four right-hand sides
/// share each pass ([`dot4xk_avx`]; the build's AVX-512VL provides the registers).
///
/// # Safety
/// The processor must support the instructions of `ISA` (see [`dot4`]).
#[inline(always)]
unsafe fn forward_substitution_many<const ISA: u8>(packed: &[f64], n: usize, bs: &mut [f64]) {
    if n == 0 {
        return;
    }
    let row = |i: usize| &packed[row_start(i)..row_start(i + 1)];
    // The dot products of every right-hand side with a block come first, then the
    // triangles: each triangle is a chain of four divisions, and the chains of different
    // right-hand sides overlap when they run back to back.
    let mut sums = vec![[0.0; 4]; bs.len() / n];
    let mut i = 0;
    while i + 4 <= n {
        let r = [row(i), row(i + 1), row(i + 2), row(i + 3)];
        let mut first = 0;
        #[cfg(target_arch = "x86_64")]
        if ISA >= AVX512 {
            let quads = bs.chunks_exact(4 * n).zip(sums.chunks_exact_mut(4));
            for (q, s) in quads {
                let x = [
                    &q[..i],
                    &q[n..n + i],
                    &q[2 * n..2 * n + i],
                    &q[3 * n..3 * n + i],
                ];
                // SAFETY: the caller guarantees AVX and FMA (this function's contract).
                s.copy_from_slice(&unsafe { dot4xk_avx(x, r) });
            }
            first = bs.len() / n / 4 * 4;
        }
        let mut pairs = bs[first * n..].chunks_exact(2 * n);
        let mut pair_sums = sums[first..].chunks_exact_mut(2);
        for (pair, s) in (&mut pairs).zip(&mut pair_sums) {
            let (b0, b1) = pair.split_at(n);
            // SAFETY: the caller guarantees the instructions of `ISA` (this function's
            // contract).
            let [s0, s1] = unsafe { dot4x2::<ISA>([&b0[..i], &b1[..i]], r) };
            s[0] = s0;
            s[1] = s1;
        }
        let single = pairs.remainder().chunks_exact(n);
        for (b, s) in single.zip(pair_sums.into_remainder()) {
            // SAFETY: as above.
            *s = unsafe { dot4::<ISA>(&b[..i], r) };
        }
        let mut quads = bs.chunks_exact_mut(4 * n);
        let mut quad_sums = sums.chunks_exact(4);
        for (quad, s) in (&mut quads).zip(&mut quad_sums) {
            let (b01, b23) = quad.split_at_mut(2 * n);
            let ((b0, b1), (b2, b3)) = (b01.split_at_mut(n), b23.split_at_mut(n));
            // SAFETY: as above.
            unsafe { lower_block4_isa::<ISA>(r, i, s, [b0, b1, b2, b3]) };
        }
        let single = quads.into_remainder().chunks_exact_mut(n);
        for (b, s) in single.zip(quad_sums.remainder()) {
            lower_block(r, i, *s, b);
        }
        i += 4;
    }
    for i in i..n {
        let r = row(i);
        for b in bs.chunks_exact_mut(n) {
            lower_row(r, i, b);
        }
    }
}

/// [`dot4`] of two vectors `x[0]`, `x[1]` of equal length with the same four rows `r`, in
/// the build `ISA`: each result is bitwise the one [`dot4`] gives. The AVX build shares each
/// load of `r` between the two; the others compute the two one after the other.
///
/// # Safety
/// The processor must support the instructions of `ISA` (see [`dot4`]).
#[inline(always)]
unsafe fn dot4x2<const ISA: u8>(x: [&[f64]; 2], r: [&[f64]; 4]) -> [[f64; 4]; 2] {
    #[cfg(target_arch = "x86_64")]
    if ISA >= AVX2 {
        // SAFETY: the caller guarantees AVX and FMA (this function's contract).
        return unsafe { dot4xk_avx(x, r) };
    }
    // SAFETY: the caller guarantees the instructions of `ISA` (this function's contract).
    unsafe { [dot4::<ISA>(x[0], r), dot4::<ISA>(x[1], r)] }
}

/// [`dot4`] of `K` vectors `x[0..K]` of equal length with the same four rows `r`, in AVX
/// code: `4·K` 256-bit accumulators, one per product, each holding exactly the lanes of
/// [`dot4`]'s portable build, so each result is bitwise the one [`dot4`] gives ([`dot4`]'s
/// AVX build is this with `K = 1`). The vectors have four lanes in every build: they are the
/// lanes of the sums. With `K = 4` the accumulators, the vectors' loads and a row's load take
/// 21 vector registers: that caller is an AVX-512 build, whose AVX-512VL provides 32; `K = 2`
/// fits AVX2's 16.
///
/// # Safety
/// The processor must support AVX and FMA.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn dot4xk_avx<const K: usize>(x: [&[f64]; K], r: [&[f64]; 4]) -> [[f64; 4]; K] {
    type V = __m256d;
    let n = x[0].len();
    let x = x.map(|xt| &xt[..n]);
    let r = [&r[0][..n], &r[1][..n], &r[2][..n], &r[3][..n]];
    let body = n - n % 4;
    let mut acc = [[[0.0f64; 4]; 4]; K];
    // SAFETY: every load reads indices k..k + 4 with k + 4 ≤ body ≤ n, inside each `x[t]`
    // and each `r[i]` (all sliced to n above); AVX and FMA are available by this function's
    // contract.
    unsafe {
        let mut v = [[V::zero(); 4]; K];
        let mut k = 0;
        while k < body {
            let mut xv = [V::zero(); K];
            for (xvt, xt) in xv.iter_mut().zip(&x) {
                *xvt = V::load(xt.as_ptr().add(k));
            }
            for (i, ri) in r.iter().enumerate() {
                let rv = V::load(ri.as_ptr().add(k));
                for (vt, xt) in v.iter_mut().zip(&xv) {
                    vt[i] = xt.mul_add(rv, vt[i]);
                }
            }
            k += 4;
        }
        for (o, a) in acc.iter_mut().zip(v) {
            for (oi, ai) in o.iter_mut().zip(a) {
                ai.store(oi.as_mut_ptr());
            }
        }
    }
    let mut out = [[0.0; 4]; K];
    for ((o, a), xt) in out.iter_mut().zip(acc).zip(x) {
        *o = finish_dot4(a, xt, r, body);
    }
    out
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
        let z = upper_block(r, base, b);
        sub4(z, r, &mut b[..base]);
        i = base;
    }
    for i in (0..i).rev() {
        let r = row(i);
        let zi = b[i] / r[i];
        b[i] = zi;
        axpy_fused(-zi, &r[..i], &mut b[..i]);
    }
}
}

/// The triangle of one four-row block of [`solve_upper`]: `z3, z2, z1, z0` (the unknowns
/// `base + 3` down to `base`) from the rows `r` = L rows `base + 3, base + 2, base + 1, base`,
/// written to `b[base..base + 4]`.
#[inline(always)]
fn upper_block(r: [&[f64]; 4], base: usize, b: &mut [f64]) -> [f64; 4] {
    let z3 = b[base + 3] / r[0][base + 3];
    let z2 = sub_mul(b[base + 2], z3, r[0][base + 2]) / r[1][base + 2];
    let t1 = sub_mul(b[base + 1], z3, r[0][base + 1]);
    let z1 = sub_mul(t1, z2, r[1][base + 1]) / r[2][base + 1];
    let t0 = sub_mul(sub_mul(b[base], z3, r[0][base]), z2, r[1][base]);
    let z0 = sub_mul(t0, z1, r[2][base]) / r[3][base];
    b[base + 3] = z3;
    b[base + 2] = z2;
    b[base + 1] = z1;
    b[base] = z0;
    [z3, z2, z1, z0]
}

/// [`sub4`] of two targets with the same four rows `x`: `y −= Σ aₗxₗ` and `w −= Σ cₗxₗ`,
/// each with [`sub4`]'s operations in its order, sharing the loads of `x`.
#[inline(always)]
fn sub4x2(a: [f64; 4], c: [f64; 4], x: [&[f64]; 4], y: &mut [f64], w: &mut [f64]) {
    let n = y.len();
    let w = &mut w[..n];
    let (x0, x1, x2, x3) = (&x[0][..n], &x[1][..n], &x[2][..n], &x[3][..n]);
    for k in 0..n {
        let t = sub_mul(sub_mul(y[k], a[0], x0[k]), a[1], x1[k]);
        y[k] = sub_mul(sub_mul(t, a[2], x2[k]), a[3], x3[k]);
        let t = sub_mul(sub_mul(w[k], c[0], x0[k]), c[1], x1[k]);
        w[k] = sub_mul(sub_mul(t, c[2], x2[k]), c[3], x3[k]);
    }
}

avx512_dispatch! {
/// Solves `Lᵀ z = b` in place for every row `b` of the row-major `m × n` matrix `bs`
/// (`m = bs.len() / n` right-hand sides of order `n`) with the row-packed factor `packed`:
/// each row ends up bitwise equal to what [`solve_upper`] makes of it. Each block of four
/// rows of L is applied to all right-hand sides while it is in cache, two right-hand sides
/// per pass over the block, so the loads of L are shared among them. Runs with 512-bit
/// vectors where the processor has AVX-512F and AVX-512VL and with 256-bit vectors where it
/// has AVX2 (the same source at two widths), with bitwise identical results (the updates are
/// elementwise). For orders whose factor does not fit in the core's level-2 cache this is
/// about twice as fast per right-hand side as solving them one at a time.
pub fn solve_upper_many<const ISA: u8>(packed: &[f64], n: usize, bs: &mut [f64]) {
    rhs_count(n, bs);
    // SAFETY: the processor supports the instructions of `ISA` (the body's contract).
    unsafe { backward_substitution_many::<ISA>(packed, n, bs) }
}
}

/// The body of [`solve_upper_many`] in the build `ISA` (of its [`sub4x2_isa`]): the
/// operations of [`solve_upper`] for each right-hand side, block by block of L.
///
/// # Safety
/// The processor must support the instructions of `ISA` (see [`sub4x2_isa`]).
#[inline(always)]
unsafe fn backward_substitution_many<const ISA: u8>(packed: &[f64], n: usize, bs: &mut [f64]) {
    if n == 0 {
        return;
    }
    let row = |i: usize| &packed[row_start(i)..row_start(i + 1)];
    // The triangles of every right-hand side with a block come first, then the updates:
    // each triangle is a chain of four divisions, and the chains of different right-hand
    // sides overlap when they run back to back.
    let mut zs = vec![[0.0; 4]; bs.len() / n];
    let mut i = n;
    while i >= 4 {
        let base = i - 4;
        let r = [row(base + 3), row(base + 2), row(base + 1), row(base)];
        for (b, z) in bs.chunks_exact_mut(n).zip(zs.iter_mut()) {
            *z = upper_block(r, base, b);
        }
        let mut pairs = bs.chunks_exact_mut(2 * n);
        let mut pair_zs = zs.chunks_exact(2);
        for (pair, z) in (&mut pairs).zip(&mut pair_zs) {
            let (b0, b1) = pair.split_at_mut(n);
            // SAFETY: the caller guarantees the instructions of `ISA` (this function's
            // contract).
            unsafe { sub4x2_isa::<ISA>(z[0], z[1], r, &mut b0[..base], &mut b1[..base]) };
        }
        let single = pairs.into_remainder().chunks_exact_mut(n);
        for (b, z) in single.zip(pair_zs.remainder()) {
            sub4(*z, r, &mut b[..base]);
        }
        i = base;
    }
    for i in (0..i).rev() {
        let r = row(i);
        for b in bs.chunks_exact_mut(n) {
            let zi = b[i] / r[i];
            b[i] = zi;
            axpy_fused(-zi, &r[..i], &mut b[..i]);
        }
    }
}

/// [`sub4x2`] in the build `ISA`: 512-bit vectors at
/// [`Isa::Avx512`](crate::simd::Isa::Avx512), 256-bit ones at
/// [`Isa::Avx2`](crate::simd::Isa::Avx2) ([`sub4x2_vec`] either way), otherwise the plain
/// loop.
///
/// # Safety
/// The processor must support the instructions of `ISA`: AVX-512F at
/// [`Isa::Avx512`](crate::simd::Isa::Avx512), AVX and FMA at
/// [`Isa::Avx2`](crate::simd::Isa::Avx2) and above; the other levels need nothing beyond the
/// target's baseline.
#[inline(always)]
unsafe fn sub4x2_isa<const ISA: u8>(
    a: [f64; 4],
    c: [f64; 4],
    x: [&[f64]; 4],
    y: &mut [f64],
    w: &mut [f64],
) {
    #[cfg(target_arch = "x86_64")]
    {
        if ISA >= AVX512 {
            // SAFETY: the caller guarantees AVX-512F (this function's contract).
            return unsafe { sub4x2_vec::<__m512d>(a, c, x, y, w) };
        }
        if ISA >= AVX2 {
            // SAFETY: the caller guarantees AVX and FMA (this function's contract).
            return unsafe { sub4x2_vec::<__m256d>(a, c, x, y, w) };
        }
    }
    sub4x2(a, c, x, y, w)
}

/// [`sub4x2`] with vectors `V` (`y − a·x` one `vfnmadd`): the plain loop up to the first
/// entry of `y` on a boundary of the vector's size (so that the vector stores of `y` do not
/// straddle cache lines), then `V::LANES` entries per vector, then the entries past the last
/// whole vector with the plain loop. Each entry gets [`sub4x2`]'s operations in its order.
///
/// # Safety
/// The processor must support the instructions of `V` (see [`Vector`]).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn sub4x2_vec<V: Vector>(
    a: [f64; 4],
    c: [f64; 4],
    x: [&[f64]; 4],
    y: &mut [f64],
    w: &mut [f64],
) {
    let n = y.len();
    let w = &mut w[..n];
    let x = [&x[0][..n], &x[1][..n], &x[2][..n], &x[3][..n]];
    let head = (y.as_ptr().align_offset(size_of::<V>())).min(n);
    sub4x2(
        a,
        c,
        [&x[0][..head], &x[1][..head], &x[2][..head], &x[3][..head]],
        &mut y[..head],
        &mut w[..head],
    );
    let body = head + (n - head) / V::LANES * V::LANES;
    // SAFETY: the instructions of `V` are available by this function's contract; every load
    // and store touches indices k..k + LANES with k + LANES ≤ body ≤ n, inside `y`, `w` and
    // each `x[l]` (all sliced to n above).
    unsafe {
        let av = a.map(|v| V::splat(v));
        let cv = c.map(|v| V::splat(v));
        let mut k = head;
        while k < body {
            let xv = x.map(|xl| V::load(xl.as_ptr().add(k)));
            let mut yv = V::load(y.as_ptr().add(k));
            let mut wv = V::load(w.as_ptr().add(k));
            for l in 0..4 {
                yv = av[l].neg_mul_add(xv[l], yv);
                wv = cv[l].neg_mul_add(xv[l], wv);
            }
            yv.store(y.as_mut_ptr().add(k));
            wv.store(w.as_mut_ptr().add(k));
            k += V::LANES;
        }
    }
    sub4x2(
        a,
        c,
        [&x[0][body..], &x[1][body..], &x[2][body..], &x[3][body..]],
        &mut y[body..],
        &mut w[body..],
    );
}

/// Columns of a tile of [`solve_lower_rows`]: the running values of four rows × this many
/// columns stay in registers (eight 256-bit vectors in the AVX2 build).
const TILE: usize = 8;

/// Smallest order at which [`solve_lower_rows`] copies the columns into tiles: below it the
/// solved rows stay in cache anyway, and the row-by-row loop is faster than the copies.
const TILED_ORDER: usize = 32;

/// Tiles of [`solve_lower_rows`] per panel: the panel (`n × TILE·PANEL_TILES` values) stays
/// in the core's cache while a block of four rows of L is applied to all its tiles.
const PANEL_TILES: usize = 8;

avx512_dispatch! {
/// Solves `L Z = B` in place for the row-packed factor `packed` of order `n` and a
/// row-major `n × m` right-hand side `b`. Every entry gets the operations of the plain
/// row-by-row loop in its order — `b[i][k] − L[i][j]·b[j][k]` for `j = 0, 1, …, i − 1`, then
/// a multiplication by `1/L[i][i]` — so the result does not depend on the blocking or the
/// build. The columns are copied, a panel at a time, into tiles of eight contiguous
/// columns; each tile keeps four rows of running values in registers while the solved rows
/// above stream past, so each load of a solved value serves four rows and each load of an
/// entry of L serves a whole tile. Runs with 512-bit vectors where the processor has
/// AVX-512F and AVX-512VL and with 256-bit vectors where it has AVX2 (the same source at two
/// widths), with bitwise identical results.
pub fn solve_lower_rows<const ISA: u8>(packed: &[f64], n: usize, b: &mut [f64], m: usize) {
    assert!(
        b.len() >= n * m,
        "solve_lower_rows: {} values for {n} × {m}",
        b.len()
    );
    // SAFETY: the processor supports the instructions of `ISA` (the body's contract).
    unsafe { lower_rows::<ISA>(packed, n, b, m) }
}
}

/// The body of [`solve_lower_rows`] in the build `ISA` (of its [`lower_rows_tile`]).
///
/// # Safety
/// The processor must support the instructions of `ISA`: AVX-512F, AVX and FMA at
/// [`Isa::Avx512`](crate::simd::Isa::Avx512), AVX and FMA at
/// [`Isa::Avx2`](crate::simd::Isa::Avx2); the other levels need nothing beyond the target's
/// baseline.
#[inline(always)]
unsafe fn lower_rows<const ISA: u8>(packed: &[f64], n: usize, b: &mut [f64], m: usize) {
    if n == 0 || m == 0 {
        return;
    }
    if n < TILED_ORDER {
        lower_rows_by_row(packed, n, b, m);
        return;
    }
    let tile_len = n * TILE;
    let mut panel = vec![0.0; tile_len * PANEL_TILES.min(m.div_ceil(TILE))];
    let row = |i: usize| &packed[row_start(i)..row_start(i + 1)];
    for c0 in (0..m).step_by(TILE * PANEL_TILES) {
        let width = (m - c0).min(TILE * PANEL_TILES);
        let tiles = width.div_ceil(TILE);
        let panel = &mut panel[..tiles * tile_len];
        // Tile t holds columns c0 + t·TILE.. row after row; columns past m are zero (they
        // are solved too, independently of the others, and dropped).
        for (j, bj) in b[..n * m].chunks_exact(m).enumerate() {
            let src = &bj[c0..c0 + width];
            for (t, tile) in panel.chunks_exact_mut(tile_len).enumerate() {
                let dst = &mut tile[j * TILE..(j + 1) * TILE];
                let part = &src[(t * TILE).min(width)..((t + 1) * TILE).min(width)];
                dst[..part.len()].copy_from_slice(part);
                dst[part.len()..].fill(0.0);
            }
        }
        let mut i = 0;
        while i + 4 <= n {
            let r = [row(i), row(i + 1), row(i + 2), row(i + 3)];
            for tile in panel.chunks_exact_mut(tile_len) {
                // SAFETY: the caller guarantees the instructions of `ISA` (this function's
                // contract).
                unsafe { lower_rows_tile::<ISA, 4>(r, i, tile) };
            }
            i += 4;
        }
        for tile in panel.chunks_exact_mut(tile_len) {
            // SAFETY: as above.
            unsafe {
                match n - i {
                    1 => lower_rows_tile::<ISA, 1>([row(i)], i, tile),
                    2 => lower_rows_tile::<ISA, 2>([row(i), row(i + 1)], i, tile),
                    3 => lower_rows_tile::<ISA, 3>([row(i), row(i + 1), row(i + 2)], i, tile),
                    _ => {}
                }
            }
        }
        for (j, bj) in b[..n * m].chunks_exact_mut(m).enumerate() {
            let dst = &mut bj[c0..c0 + width];
            for (t, tile) in panel.chunks_exact(tile_len).enumerate() {
                let part = &mut dst[(t * TILE).min(width)..((t + 1) * TILE).min(width)];
                let len = part.len();
                part.copy_from_slice(&tile[j * TILE..j * TILE + len]);
            }
        }
    }
}

avx2_dispatch! {
/// [`solve_lower_rows`] row by row: the implementation the tiled one replaced, which it
/// still runs below order 32, and against which tests and benchmarks hold it (same bits).
pub fn solve_lower_rows_by_row(packed: &[f64], n: usize, b: &mut [f64], m: usize) {
    lower_rows_by_row(packed, n, b, m)
}
}

/// [`solve_lower_rows`] row by row, for orders below [`TILED_ORDER`]: each row of `b` is
/// updated by the rows above it, four per pass ([`sub4`]), then one at a time
/// ([`axpy_fused`], `y + (−l)·x` being `y − l·x` to the bit), then multiplied by its reciprocal pivot — per
/// entry the same operations in the same order as the tiles.
#[inline(always)]
fn lower_rows_by_row(packed: &[f64], n: usize, b: &mut [f64], m: usize) {
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
            axpy_fused(-lij, &done[j * m..(j + 1) * m], bi);
        }
        let inv = 1.0 / r[i];
        for v in bi.iter_mut() {
            *v *= inv;
        }
    }
}

/// Rows `i..i + R` of one tile of [`solve_lower_rows`] (`tile`: the tile's `n × TILE`
/// values, rows `..i` solved), with the rows `r` of L (row `i + q` is `r[q]`, at least
/// `i + q + 1` long), in the build `ISA`: every row's running values stay in registers
/// while the solved rows stream past (`x − L[i + q][j]·b[j]` for `j = 0, 1, …, i − 1`),
/// then the triangle inside the block is finished row by row in the same way, and each row
/// is multiplied by its reciprocal pivot. Every build performs exactly these operations,
/// each update one fused multiply-add.
///
/// # Safety
/// The processor must support the instructions of `ISA` (see [`lower_rows`]).
#[inline(always)]
unsafe fn lower_rows_tile<const ISA: u8, const R: usize>(
    r: [&[f64]; R],
    i: usize,
    tile: &mut [f64],
) {
    let (done, cur) = tile.split_at_mut(i * TILE);
    let cur = &mut cur[..R * TILE];
    let r: [&[f64]; R] = std::array::from_fn(|q| &r[q][..=i + q]);
    #[cfg(target_arch = "x86_64")]
    {
        if ISA >= AVX512 {
            // SAFETY: the caller guarantees AVX-512F (this function's contract).
            return unsafe { lower_rows_tile_vec::<__m512d, R, 1>(r, i, done, cur) };
        }
        if ISA >= AVX2 {
            // SAFETY: the caller guarantees AVX and FMA (this function's contract).
            return unsafe { lower_rows_tile_vec::<__m256d, R, 2>(r, i, done, cur) };
        }
    }
    lower_rows_tile_portable(r, i, done, cur)
}

/// Portable [`lower_rows_tile`] (`done`: the solved rows, `cur`: the `R` rows to solve),
/// with the same operations as the vector builds.
#[inline(always)]
fn lower_rows_tile_portable<const R: usize>(
    r: [&[f64]; R],
    i: usize,
    done: &[f64],
    cur: &mut [f64],
) {
    let mut acc = [[0.0f64; TILE]; R];
    for (a, c) in acc.iter_mut().zip(cur.chunks_exact(TILE)) {
        a.copy_from_slice(c);
    }
    for (j, x) in done.chunks_exact(TILE).enumerate() {
        for q in 0..R {
            let l = r[q][j];
            for t in 0..TILE {
                acc[q][t] = sub_mul(acc[q][t], l, x[t]);
            }
        }
    }
    for q in 0..R {
        for p in 0..q {
            let (l, solved) = (r[q][i + p], acc[p]);
            for t in 0..TILE {
                acc[q][t] = sub_mul(acc[q][t], l, solved[t]);
            }
        }
        let inv = 1.0 / r[q][i + q];
        for v in acc[q].iter_mut() {
            *v *= inv;
        }
    }
    for (a, c) in acc.iter().zip(cur.chunks_exact_mut(TILE)) {
        c.copy_from_slice(a);
    }
}

/// [`lower_rows_tile`] in vector code: `C` vectors `V` of running values per row (`C` times
/// `V::LANES` is [`TILE`]), each update one `vfnmadd`. The AVX2 build runs it with two
/// 256-bit vectors per row, the AVX-512 build with one 512-bit vector, so that a row's eight
/// updates by one solved row are one instruction (the processor's instruction throughput,
/// not its arithmetic, limits the 256-bit build).
///
/// # Safety
/// The processor must support the instructions of `V` (see [`Vector`]).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn lower_rows_tile_vec<V: Vector, const R: usize, const C: usize>(
    r: [&[f64]; R],
    i: usize,
    done: &[f64],
    cur: &mut [f64],
) {
    const { assert!(C * V::LANES == TILE) };
    assert!(done.len() >= i * TILE && cur.len() >= R * TILE);
    assert!((0..R).all(|q| r[q].len() > i + q));
    // SAFETY: the instructions of `V` are available by this function's contract. The loads
    // of `done` read row j < i, indices j·8 .. j·8 + 8 ≤ i·8 ≤ done.len(); those of `cur` and
    // the stores read and write indices q·8 .. q·8 + 8 ≤ R·8 ≤ cur.len(); the entries of
    // `r[q]` read are at j < i or i + p ≤ i + q, inside its i + q + 1 entries (all checked
    // above).
    unsafe {
        let mut acc = [[V::zero(); C]; R];
        for (q, a) in acc.iter_mut().enumerate() {
            for (h, v) in a.iter_mut().enumerate() {
                *v = V::load(cur.as_ptr().add(q * TILE + h * V::LANES));
            }
        }
        let x = done.as_ptr();
        for j in 0..i {
            let mut xj = [V::zero(); C];
            for (h, v) in xj.iter_mut().enumerate() {
                *v = V::load(x.add(j * TILE + h * V::LANES));
            }
            for q in 0..R {
                let l = V::splat(*r[q].as_ptr().add(j));
                for h in 0..C {
                    acc[q][h] = l.neg_mul_add(xj[h], acc[q][h]);
                }
            }
        }
        for q in 0..R {
            for p in 0..q {
                let (l, solved) = (V::splat(*r[q].as_ptr().add(i + p)), acc[p]);
                for (v, s) in acc[q].iter_mut().zip(solved) {
                    *v = l.neg_mul_add(s, *v);
                }
            }
            let inv = V::splat(1.0 / *r[q].as_ptr().add(i + q));
            for v in acc[q].iter_mut() {
                *v = v.mul(inv);
            }
        }
        for (q, a) in acc.iter().enumerate() {
            for (h, v) in a.iter().enumerate() {
                v.store(cur.as_mut_ptr().add(q * TILE + h * V::LANES));
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
            axpy_fused(-lij, &done[j * n..j * n + j + 1], &mut bi[..=j]);
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
            axpy_fused(r[a], r, oa);
        }
    }
}
}
