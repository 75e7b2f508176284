//! The triangular products of the exact GP's expected confidence bounds: `V = L·K` and
//! `U = Lᵀ·V` for an explicit lower-triangular `L` (`n × n`, the inverse Cholesky factor of
//! the training covariance) and a block of up to [`BLOCK`] columns (samples).
//!
//! `L` is cut once into the *panels* the products stream ([`Panels`]), and each product keeps
//! a few output rows × columns of running sums in registers while the rows of the operand
//! stream past: this register blocking is what makes the two products run at arithmetic
//! rather than load/store speed. Every build — portable, AVX2, AVX-512F — performs the same
//! fused multiply-adds per output element in the same order (`vfmadd` in the vector builds,
//! [`f64::mul_add`] in the portable one, each rounded once), so all agree to the bit; they
//! differ in vector width and in how many output rows share one pass over the operand. The
//! x86-64 baseline runs the portable build: SSE2 has no fused multiply-add, and with
//! separate instructions it would give other bits.
//!
//! A panel also multiplies the zeros above the diagonal of `L` by operand entries, which
//! changes no bit while the operand is finite (`fma(0, y, x) = x`). An infinite operand entry
//! would turn those terms into NaN, in a different set of outputs for each panel height, so
//! the agreement holds for finite operands — always the case for the bounds, whose operands
//! are kernel values and their products with `L⁻¹`.

// Dense small-matrix kernels read clearest with explicit indices.
#![allow(clippy::needless_range_loop)]

use crate::simd::Isa;
#[cfg(target_arch = "x86_64")]
use crate::simd::allows;

/// Columns per block of the products' operands and results, which is also their row stride:
/// keeps the `n × BLOCK` working matrices in cache.
pub const BLOCK: usize = 64;

/// Output rows a panel holds at most; callers round the row count of the results up to it.
pub const PANEL_ROWS: usize = 8;

/// A panel row: the coefficients of one `k` for every output row of a panel — four, each
/// stored twice (the layout keeps each coefficient at an even index), or eight for
/// AVX-512F.
type PanelRow = [f64; 8];

/// An explicit lower-triangular `L` (`n × n`) cut into the panels its products stream:
/// panel `p` of `L` holds output rows `p·R … p·R + R − 1` (`R` the build's rows per panel)
/// for every `k` that can be non-zero in them, and likewise for `Lᵀ`. Building a panel
/// gathers strided entries, so it is done once per matrix rather than per product. The
/// build (vector width) is chosen here, from [`crate::simd::active`].
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

/// The panel-product build, chosen when the panels are built. Its variants exist only where
/// the processor supports their instructions ([`PanelKernel::detect`] is the one
/// constructor), which is what makes [`PanelKernel::product`] sound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PanelKernel {
    /// Eight rows, sixteen columns per pass, 512-bit vectors.
    #[cfg(target_arch = "x86_64")]
    Avx512,
    /// Four rows, eight columns per pass, 256-bit vectors.
    #[cfg(target_arch = "x86_64")]
    Avx2,
    /// Four rows, four columns per pass, plain Rust with `mul_add`: off x86-64, and on it
    /// at the baseline level and below.
    Portable,
}

impl PanelKernel {
    fn detect() -> Self {
        #[cfg(target_arch = "x86_64")]
        {
            if allows(Isa::Avx512) {
                return PanelKernel::Avx512;
            }
            if allows(Isa::Avx2) {
                return PanelKernel::Avx2;
            }
        }
        PanelKernel::Portable
    }

    fn isa(self) -> Isa {
        match self {
            #[cfg(target_arch = "x86_64")]
            PanelKernel::Avx512 => Isa::Avx512,
            #[cfg(target_arch = "x86_64")]
            PanelKernel::Avx2 => Isa::Avx2,
            PanelKernel::Portable => Isa::Portable,
        }
    }

    fn rows(self) -> usize {
        #[cfg(target_arch = "x86_64")]
        if self == PanelKernel::Avx512 {
            return 8;
        }
        4
    }

    /// The stored panel row for the coefficients `c` (the first [`PanelKernel::rows`] used).
    fn row(self, c: [f64; 8]) -> PanelRow {
        #[cfg(target_arch = "x86_64")]
        if self == PanelKernel::Avx512 {
            return c;
        }
        [c[0], c[0], c[1], c[1], c[2], c[2], c[3], c[3]]
    }

    /// `out[r][c] = Σ_k panel[k][r] · src[k][c]` for the panel's output rows (row stride
    /// [`BLOCK`]), a few columns at a time so that the running sums stay in registers while
    /// the rows of `src` stream past. Sums run in ascending k, so the result is the same as
    /// the plain loop's.
    fn product(self, panel: &[PanelRow], src: &[f64], out: &mut [f64], width: usize) {
        assert!(width <= BLOCK && width.is_multiple_of(4));
        assert!(src.len() >= panel.len() * BLOCK && out.len() >= self.rows() * BLOCK);
        match self {
            // SAFETY: the processor supports AVX-512F, AVX2 and FMA (`detect` made this
            // variant only then), and the bounds were asserted above.
            #[cfg(target_arch = "x86_64")]
            PanelKernel::Avx512 => unsafe { panel_product_avx512(panel, src, out, width) },
            // SAFETY: the processor supports AVX2 and FMA (`detect`); bounds asserted above.
            #[cfg(target_arch = "x86_64")]
            PanelKernel::Avx2 => unsafe { panel_product_avx(panel, src, out, width) },
            PanelKernel::Portable => panel_product_portable(panel, src, out, width),
        }
    }
}

/// The AVX2 panel product: four rows, eight columns (two 256-bit registers per row) per pass,
/// then four. Each output element gets the same fused multiply-adds in the same order as in
/// the portable build, so the results are bitwise equal.
///
/// # Safety
/// `width ≤ BLOCK`, `width` a multiple of 4, `src` at least `panel.len()·BLOCK` long, `out`
/// at least `4·BLOCK` long, and the processor must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn panel_product_avx(panel: &[PanelRow], src: &[f64], out: &mut [f64], width: usize) {
    use std::arch::x86_64::{
        _mm256_broadcast_sd, _mm256_fmadd_pd, _mm256_loadu_pd, _mm256_setzero_pd, _mm256_storeu_pd,
    };
    let mut c0 = 0;
    // SAFETY: loads read src[k·BLOCK + c0 .. + lanes] with k < panel.len() and
    // c0 + lanes ≤ width ≤ BLOCK, inside `src`; broadcasts read panel entries 2r < 8; stores
    // write out[r·BLOCK + c0 .. + lanes] with r < 4, inside `out` (the contract); AVX2 and
    // FMA are available by the contract.
    unsafe {
        while c0 + 8 <= width {
            let mut acc = [_mm256_setzero_pd(); 8];
            for (k, p) in panel.iter().enumerate() {
                let base = src.as_ptr().add(k * BLOCK + c0);
                let (s0, s4) = (_mm256_loadu_pd(base), _mm256_loadu_pd(base.add(4)));
                for r in 0..4 {
                    let c = _mm256_broadcast_sd(&p[2 * r]);
                    acc[2 * r] = _mm256_fmadd_pd(c, s0, acc[2 * r]);
                    acc[2 * r + 1] = _mm256_fmadd_pd(c, s4, acc[2 * r + 1]);
                }
            }
            for r in 0..4 {
                let o = out.as_mut_ptr().add(r * BLOCK + c0);
                _mm256_storeu_pd(o, acc[2 * r]);
                _mm256_storeu_pd(o.add(4), acc[2 * r + 1]);
            }
            c0 += 8;
        }
        if c0 < width {
            four_columns_avx::<4, 2>(panel, src, out, c0);
        }
    }
}

/// The last four columns `c0 .. c0 + 4` of a panel product with 256-bit vectors, for `ROWS`
/// output rows whose coefficients sit every `STEP` entries of a panel row (pairs: 2).
///
/// # Safety
/// As [`panel_product_avx`] with `c0 + 4 ≤ width`, `out` at least `ROWS·BLOCK` long, and
/// `STEP·(ROWS − 1) < 8`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn four_columns_avx<const ROWS: usize, const STEP: usize>(
    panel: &[PanelRow],
    src: &[f64],
    out: &mut [f64],
    c0: usize,
) {
    use std::arch::x86_64::{
        _mm256_broadcast_sd, _mm256_fmadd_pd, _mm256_loadu_pd, _mm256_setzero_pd, _mm256_storeu_pd,
    };
    // SAFETY: loads read src[k·BLOCK + c0 .. + 4] with k < panel.len() and c0 + 4 ≤ BLOCK,
    // inside `src`; stores write out[r·BLOCK + c0 .. + 4] with r < ROWS, inside `out`; AVX2
    // and FMA are available (the contract).
    unsafe {
        let mut acc = [_mm256_setzero_pd(); ROWS];
        for (k, p) in panel.iter().enumerate() {
            let s0 = _mm256_loadu_pd(src.as_ptr().add(k * BLOCK + c0));
            for (r, a) in acc.iter_mut().enumerate() {
                *a = _mm256_fmadd_pd(_mm256_broadcast_sd(&p[STEP * r]), s0, *a);
            }
        }
        for (r, a) in acc.iter().enumerate() {
            _mm256_storeu_pd(out.as_mut_ptr().add(r * BLOCK + c0), *a);
        }
    }
}

/// The AVX-512F panel product: eight output rows (plain coefficients, not pairs), sixteen
/// columns (two 512-bit registers per row) per pass, then eight, then four with AVX2.
/// Sharing each load of `src` among eight rows halves the traffic per multiply of the
/// four-row kernels.
///
/// # Safety
/// `width ≤ BLOCK`, `width` a multiple of 4, `src` at least `panel.len()·BLOCK` long, `out`
/// at least `8·BLOCK` long, and the processor must support AVX-512F, AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn panel_product_avx512(panel: &[PanelRow], src: &[f64], out: &mut [f64], width: usize) {
    use std::arch::x86_64::{
        _mm512_fmadd_pd, _mm512_loadu_pd, _mm512_set1_pd, _mm512_setzero_pd, _mm512_storeu_pd,
    };
    let mut c0 = 0;
    // SAFETY: loads read src[k·BLOCK + c0 .. + lanes] with k < panel.len() and
    // c0 + lanes ≤ width ≤ BLOCK, inside `src`; panel rows hold 8 values; stores write
    // out[r·BLOCK + c0 .. + lanes] with r < 8, inside `out`; AVX-512F, AVX2 (for the last
    // four columns) and FMA are available (the contract).
    unsafe {
        while c0 + 16 <= width {
            let mut acc = [_mm512_setzero_pd(); 16];
            for (k, p) in panel.iter().enumerate() {
                let base = src.as_ptr().add(k * BLOCK + c0);
                let (s0, s8) = (_mm512_loadu_pd(base), _mm512_loadu_pd(base.add(8)));
                for r in 0..8 {
                    let c = _mm512_set1_pd(p[r]);
                    acc[2 * r] = _mm512_fmadd_pd(c, s0, acc[2 * r]);
                    acc[2 * r + 1] = _mm512_fmadd_pd(c, s8, acc[2 * r + 1]);
                }
            }
            for r in 0..8 {
                let o = out.as_mut_ptr().add(r * BLOCK + c0);
                _mm512_storeu_pd(o, acc[2 * r]);
                _mm512_storeu_pd(o.add(8), acc[2 * r + 1]);
            }
            c0 += 16;
        }
        if c0 + 8 <= width {
            let mut acc = [_mm512_setzero_pd(); 8];
            for (k, p) in panel.iter().enumerate() {
                let s0 = _mm512_loadu_pd(src.as_ptr().add(k * BLOCK + c0));
                for (r, a) in acc.iter_mut().enumerate() {
                    *a = _mm512_fmadd_pd(_mm512_set1_pd(p[r]), s0, *a);
                }
            }
            for (r, a) in acc.iter().enumerate() {
                _mm512_storeu_pd(out.as_mut_ptr().add(r * BLOCK + c0), *a);
            }
            c0 += 8;
        }
        if c0 < width {
            four_columns_avx::<8, 1>(panel, src, out, c0);
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
