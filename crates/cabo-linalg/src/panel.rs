//! The triangular products of the exact GP's expected confidence bounds: `V = L·K` and
//! `U = Lᵀ·V` for an explicit lower-triangular `L` (`n × n`, the inverse Cholesky factor of
//! the training covariance) and a block of up to [`BLOCK`] columns (samples).
//!
//! `L` is cut once into the *panels* the products stream ([`Panels`]), and each product keeps
//! a few output rows × columns of running sums in registers while the rows of the operand
//! stream past: this register blocking is what makes the two products run at arithmetic
//! rather than load/store speed. Every build — portable, AVX2, AVX-512 — performs the same
//! fused multiply-adds per output element in the same order (`vfmadd` in the vector builds,
//! [`f64::mul_add`] in the portable one, each rounded once), so all agree to the bit; they
//! differ in vector width and in how many output rows share one pass over the operand (the
//! two vector builds are one generic source at two widths). The x86-64 baseline runs the
//! portable build: SSE2 has no fused multiply-add, and with separate instructions it would
//! give other bits.
//!
//! A panel also multiplies the zeros above the diagonal of `L` by operand entries, which
//! changes no bit while the operand is finite (`fma(0, y, x) = x`). An infinite operand entry
//! would turn those terms into NaN, in a different set of outputs for each panel height, so
//! the agreement holds for finite operands — always the case for the bounds, whose operands
//! are kernel values and their products with `L⁻¹`.

// Dense small-matrix kernels read clearest with explicit indices.
#![allow(clippy::needless_range_loop)]

#[cfg(target_arch = "x86_64")]
use crate::simd::{AVX2, AVX512, Vector, allows};
use crate::simd::{Isa, avx512_dispatch};
#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::{__m256d, __m512d};

/// Columns per block of the products' operands and results, which is also their row stride:
/// keeps the `n × BLOCK` working matrices in cache.
pub const BLOCK: usize = 64;

/// Output rows a panel holds at most; callers round the row count of the results up to it.
pub const PANEL_ROWS: usize = 8;

/// A panel row: the coefficients of one `k` for every output row of a panel — four, each
/// stored twice (the layout keeps each coefficient at an even index), or eight in the
/// AVX-512 build.
type PanelRow = [f64; 8];

/// An explicit lower-triangular `L` (`n × n`) cut into the panels its products stream:
/// panel `p` of `L` holds output rows `p·R … p·R + R − 1` (`R` the build's rows per panel)
/// for every `k` that can be non-zero in them, and likewise for `Lᵀ`. Building a panel
/// gathers strided entries, so it is done once per matrix rather than per product. The
/// build (vector width) is chosen here, as every kernel's is (the widest the processor and
/// [`crate::simd::limit`] allow), and kept: the panels are laid out for it.
#[derive(Debug, Clone)]
pub struct Panels {
    kernel: PanelKernel,
    n: usize,
    lower: Vec<PanelRow>,
    lower_start: Vec<usize>,
    upper: Vec<PanelRow>,
    upper_start: Vec<usize>,
}

impl Panels {
    /// The panels of the row-major `n × n` lower-triangular matrix `l`, whose strict upper
    /// triangle must be zero: a panel spans whole blocks of columns, so it takes in the
    /// zeros right of the diagonal (as [`crate::cholesky::invert_factor`] leaves them).
    pub fn new(l: &[f64], n: usize) -> Self {
        assert!(
            l.len() >= n * n,
            "Panels: {} entries for an {n}×{n} matrix",
            l.len()
        );
        let kernel = PanelKernel::detect();
        let rows = kernel.rows();
        // L[i][k], zero in the padding rows and columns of a last, partial panel.
        let at = |i: usize, k: usize| if i < n && k < n { l[i * n + k] } else { 0.0 };
        // A stored panel row from the coefficient of each of its output rows.
        let row = |c: &dyn Fn(usize) -> f64| {
            kernel.row(std::array::from_fn(|r| if r < rows { c(r) } else { 0.0 }))
        };
        let mut p = Panels {
            kernel,
            n,
            lower: Vec::new(),
            lower_start: vec![0],
            upper: Vec::new(),
            upper_start: vec![0],
        };
        for j0 in (0..n).step_by(rows) {
            let last = (j0 + rows - 1).min(n - 1);
            p.lower.extend((0..=last).map(|k| row(&|r| at(j0 + r, k))));
            p.lower_start.push(p.lower.len());
            // Row l of Lᵀ is column l of L, non-zero from row l on.
            p.upper.extend((j0..n).map(|k| row(&|r| at(k, j0 + r))));
            p.upper_start.push(p.upper.len());
        }
        p
    }

    /// Order of the matrix.
    pub fn len(&self) -> usize {
        self.n
    }

    /// True for the panels of an empty matrix.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The instruction-set level of the build these panels run: [`Isa::Portable`] at the
    /// baseline level too (SSE2 has no fused multiply-add).
    pub fn isa(&self) -> Isa {
        self.kernel.isa()
    }

    /// `out = L·src` for `src` of `n` rows with stride [`BLOCK`], over the first `width`
    /// columns (a multiple of 4, at most [`BLOCK`]); `out` has `n` rounded up to whole
    /// [`PANEL_ROWS`] rows (stride [`BLOCK`]), whose padding rows are scratch. Each output
    /// element is summed in ascending k with fused multiply-adds, exactly like one fused
    /// `axpy` (`y = l.mul_add(x, y)`) per coefficient when `src` is finite (a panel's extra
    /// terms multiply zeros above the diagonal, and adding ±0 to a sum begun at +0 changes no
    /// bit).
    pub fn lower_product(&self, src: &[f64], out: &mut [f64], width: usize) {
        let (n, rows) = (self.n, self.kernel.rows());
        for (p, j0) in (0..n).step_by(rows).enumerate() {
            let last = (j0 + rows - 1).min(n - 1);
            self.kernel.product(
                &self.lower[self.lower_start[p]..self.lower_start[p + 1]],
                &src[..(last + 1) * BLOCK],
                &mut out[j0 * BLOCK..(j0 + rows) * BLOCK],
                width,
            );
        }
    }

    /// `out = Lᵀ·src` (see [`Panels::lower_product`]); row l of the result sums rows k ≥ l
    /// of `src`.
    pub fn lower_transpose_product(&self, src: &[f64], out: &mut [f64], width: usize) {
        let (n, rows) = (self.n, self.kernel.rows());
        for (p, l0) in (0..n).step_by(rows).enumerate() {
            self.kernel.product(
                &self.upper[self.upper_start[p]..self.upper_start[p + 1]],
                &src[l0 * BLOCK..n * BLOCK],
                &mut out[l0 * BLOCK..(l0 + rows) * BLOCK],
                width,
            );
        }
    }
}

/// The panel-product build, chosen when the panels are built: the panels' layout (output
/// rows per panel, see [`PanelRow`]) is that build's, so their products run it whatever the
/// [`crate::simd::limit`] is by then ([`panel_product`] checks that the processor supports
/// it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct PanelKernel(Isa);

impl PanelKernel {
    /// The widest build allowed now: AVX-512 (eight rows, sixteen columns per pass, 512-bit
    /// vectors), AVX2 (four rows, eight columns per pass, 256-bit vectors) or the portable
    /// one (four rows, four columns per pass, plain Rust with `mul_add`: off x86-64, and on
    /// it at the baseline level and below).
    fn detect() -> Self {
        #[cfg(target_arch = "x86_64")]
        for isa in [Isa::Avx512, Isa::Avx2] {
            if allows(isa) {
                return PanelKernel(isa);
            }
        }
        PanelKernel(Isa::Portable)
    }

    /// The build's level.
    fn isa(self) -> Isa {
        self.0
    }

    /// Output rows per panel: eight in the AVX-512 build, four in the others.
    fn rows(self) -> usize {
        if self.0 == Isa::Avx512 { 8 } else { 4 }
    }

    /// The stored panel row for the coefficients `c` (the first [`PanelKernel::rows`] used).
    fn row(self, c: [f64; 8]) -> PanelRow {
        if self.0 == Isa::Avx512 {
            return c;
        }
        [c[0], c[0], c[1], c[1], c[2], c[2], c[3], c[3]]
    }

    /// [`panel_product`] in this build.
    fn product(self, panel: &[PanelRow], src: &[f64], out: &mut [f64], width: usize) {
        panel_product(self.0, panel, src, out, width)
    }
}

avx512_dispatch! {
    /// `out[r][c] = Σ_k panel[k][r] · src[k][c]` for the output rows of a panel laid out for
    /// the build `level` (row stride [`BLOCK`]), a few columns at a time so that the running
    /// sums stay in registers while the rows of `src` stream past. Sums run in ascending k,
    /// so the result is the same as the plain loop's.
    fn panel_product<const ISA: u8>(
        level: Isa,
        panel: &[PanelRow],
        src: &[f64],
        out: &mut [f64],
        width: usize,
    ) {
        assert!(width <= BLOCK && width.is_multiple_of(4));
        assert!(src.len() >= panel.len() * BLOCK);
        #[cfg(target_arch = "x86_64")]
        {
            if ISA >= AVX512 {
                assert!(out.len() >= 8 * BLOCK);
                // SAFETY: the processor supports AVX-512F, AVX and FMA (the body's contract at
                // this level), and the bounds were asserted above.
                return unsafe { panel_product_vec::<__m512d, 8, 1>(panel, src, out, width) };
            }
            if ISA >= AVX2 {
                assert!(out.len() >= 4 * BLOCK);
                // SAFETY: the processor supports AVX and FMA (the body's contract at this
                // level), and the bounds were asserted above.
                return unsafe { panel_product_vec::<__m256d, 4, 2>(panel, src, out, width) };
            }
        }
        panel_product_portable(panel, src, out, width)
    }
}

/// The vector panel product: `ROWS` output rows, whose coefficients sit every `STEP` entries
/// of a panel row, `2·V::LANES` columns (two vectors per row) per pass, then `V::LANES`, then
/// four (one 256-bit vector). The AVX2 build runs it with four rows (pairs) and 256-bit
/// vectors — eight columns per pass, then four — and the AVX-512 build with eight rows
/// (plain coefficients) and 512-bit vectors — sixteen, eight, then four: sharing each load
/// of `src` among eight rows halves the traffic per multiply of the four-row build. Each
/// output element gets the same fused multiply-adds in the same order as in the portable
/// build, so the results are bitwise equal.
///
/// # Safety
/// `width ≤ BLOCK`, `width` a multiple of 4, `src` at least `panel.len()·BLOCK` long, `out`
/// at least `ROWS·BLOCK` long, `STEP·(ROWS − 1) < 8`, and the processor must support the
/// instructions of `V` and of `__m256d` (see [`Vector`]).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn panel_product_vec<V: Vector, const ROWS: usize, const STEP: usize>(
    panel: &[PanelRow],
    src: &[f64],
    out: &mut [f64],
    width: usize,
) {
    let lanes = V::LANES;
    let mut c0 = 0;
    // SAFETY: every pass covers columns c0 .. c0 + its width ≤ width ≤ BLOCK (the last one
    // four, as widths are multiples of 4); the rest is this function's contract.
    unsafe {
        while c0 + 2 * lanes <= width {
            columns::<V, ROWS, STEP, 2>(panel, src, out, c0);
            c0 += 2 * lanes;
        }
        if c0 + lanes <= width {
            columns::<V, ROWS, STEP, 1>(panel, src, out, c0);
            c0 += lanes;
        }
        if c0 < width {
            columns::<__m256d, ROWS, STEP, 1>(panel, src, out, c0);
        }
    }
}

/// Columns `c0 .. c0 + C·V::LANES` of a panel product with `C` vectors `V` per output row, for
/// `ROWS` output rows whose coefficients sit every `STEP` entries of a panel row: the running
/// sums stay in registers, each updated by one fused multiply-add per coefficient.
///
/// # Safety
/// `c0 + C·V::LANES ≤ BLOCK`, `src` at least `panel.len()·BLOCK` long, `out` at least
/// `ROWS·BLOCK` long, `STEP·(ROWS − 1) < 8`, and the processor must support the instructions
/// of `V` (see [`Vector`]).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn columns<V: Vector, const ROWS: usize, const STEP: usize, const C: usize>(
    panel: &[PanelRow],
    src: &[f64],
    out: &mut [f64],
    c0: usize,
) {
    // SAFETY: loads read src[k·BLOCK + c0 .. + C·LANES] with k < panel.len() and
    // c0 + C·LANES ≤ BLOCK, inside `src`; stores write out[r·BLOCK + c0 .. + C·LANES] with
    // r < ROWS, inside `out`; the instructions of `V` are available (the contract).
    unsafe {
        let mut acc = [[V::zero(); C]; ROWS];
        for (k, p) in panel.iter().enumerate() {
            let base = src.as_ptr().add(k * BLOCK + c0);
            let mut s = [V::zero(); C];
            for (h, v) in s.iter_mut().enumerate() {
                *v = V::load(base.add(h * V::LANES));
            }
            for (r, a) in acc.iter_mut().enumerate() {
                let c = V::splat(p[STEP * r]);
                for h in 0..C {
                    a[h] = c.mul_add(s[h], a[h]);
                }
            }
        }
        for (r, a) in acc.iter().enumerate() {
            let o = out.as_mut_ptr().add(r * BLOCK + c0);
            for (h, v) in a.iter().enumerate() {
                v.store(o.add(h * V::LANES));
            }
        }
    }
}

/// The portable panel product, with the same fused multiply-adds in the same order as the
/// vector builds: the build off x86-64, and on it at the baseline level and below (each
/// `mul_add` is then the C library's exact `fma`: slow, but the same bits).
fn panel_product_portable(panel: &[PanelRow], src: &[f64], out: &mut [f64], width: usize) {
    for c0 in (0..width).step_by(4) {
        let mut acc = [[0.0f64; 4]; 4];
        for (k, p) in panel.iter().enumerate() {
            let s = &src[k * BLOCK + c0..k * BLOCK + c0 + 4];
            for r in 0..4 {
                for t in 0..4 {
                    acc[r][t] = p[2 * r].mul_add(s[t], acc[r][t]);
                }
            }
        }
        for (r, a) in acc.iter().enumerate() {
            out[r * BLOCK + c0..r * BLOCK + c0 + 4].copy_from_slice(a);
        }
    }
}
