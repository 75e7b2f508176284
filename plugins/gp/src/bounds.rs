//! The exact GP's expected confidence bounds over the open variables of a control set
//! ([`cabo_core::capability::OpenBounds`]): E[μ([x^i, X^{-i}]) + β σ([x^i, X^{-i}])] by Monte
//! Carlo over a fixed sample set, with analytic gradients in x^i.
//!
//! The evaluation exploits the structure of the query: with a stationary kernel,
//! r²([x^i, s^{-i}], X_j) splits into a part that depends on x^i only and a part that depends
//! on the sample only, precomputed once per control set. One evaluation is then a batched
//! triangular product `V = L⁻¹K` over blocks of samples (`L` the Cholesky factor of the
//! training covariance), and the gradient needs one more product `U = L⁻ᵀV`; both are
//! contiguous `axpy`s.

// Dense small-matrix kernels read clearest with explicit indices.
#![allow(clippy::needless_range_loop)]

use crate::kernel::KernelKind;
use crate::linalg::axpy;
use crate::posterior::{GpPosterior, MIN_VARIANCE};
use cabo_core::AcquisitionFn;
use cabo_core::capability::{OpenBounds, PreparedBounds};

/// Samples per block of the batched evaluation: keeps the n × B working matrices in cache.
const BLOCK: usize = 64;

impl OpenBounds for GpPosterior {
    fn prepare_bounds(&self) -> Box<dyn PreparedBounds + '_> {
        Box::new(GpShared {
            post: self,
            panels: Panels::new(&self.cholesky().inverse_factor(), self.len()),
        })
    }
}

/// What every control set shares for one posterior: the explicit `L⁻¹`.
struct GpShared<'a> {
    post: &'a GpPosterior,
    /// `L⁻¹` cut into the panels of this processor's kernel.
    panels: Panels,
}

impl PreparedBounds for GpShared<'_> {
    fn for_set<'a>(
        &'a self,
        vars: &[usize],
        samples: &'a [f64],
        beta: f64,
    ) -> Box<dyn AcquisitionFn + Send + Sync + 'a> {
        let d = self.post.kernel().lengthscales.len();
        let m = samples.len() / d;
        Box::new(SetBound {
            set: GpSet::new(self, vars, samples, m),
            beta,
        })
    }
}

/// One control set's expected bound in observed units, as a function of x^i.
struct SetBound<'a> {
    set: GpSet<'a>,
    beta: f64,
}

impl SetBound<'_> {
    fn eval(&self, xi: &[f64], grad: Option<&mut [f64]>) -> f64 {
        let g = &self.set;
        let mf = g.m as f64;
        let t = g.shared.post.output_transform();
        let mean = g.shared.post.mean_constant();
        let has_grad = grad.is_some();
        let mut grad = grad;
        let total = g.eval(xi, self.beta, grad.as_deref_mut());
        if has_grad && let Some(gr) = grad {
            for v in gr.iter_mut() {
                *v *= t.scale / mf;
            }
        }
        t.shift + t.scale * (mean + total / mf)
    }
}

impl AcquisitionFn for SetBound<'_> {
    fn value(&self, xi: &[f64]) -> f64 {
        self.eval(xi, None)
    }

    fn value_grad(&self, xi: &[f64], grad: &mut [f64]) -> f64 {
        self.eval(xi, Some(grad))
    }
}

/// Per-control-set precomputation for an exact GP (all in model units).
struct GpSet<'a> {
    shared: &'a GpShared<'a>,
    n: usize,
    m: usize,
    kind: KernelKind,
    outputscale: f64,
    /// 1/ℓ of the controlled coordinates.
    inv_ls: Vec<f64>,
    /// Training inputs' controlled coordinates divided by ℓ, `n × q`.
    xc: Vec<f64>,
    /// Per training point j and sample c: the open part of r² (general kernels), or
    /// exp(−r²/2) of it (RBF, whose value factorises), `n × m`.
    rest: Vec<f64>,
}

impl<'a> GpSet<'a> {
    fn new(shared: &'a GpShared<'a>, vars: &[usize], samples: &[f64], m: usize) -> Self {
        let g = shared.post;
        let k = g.kernel();
        let d = k.lengthscales.len();
        let n = g.len();
        let inv_all: Vec<f64> = k.lengthscales.iter().map(|l| 1.0 / l).collect();
        let inv_ls: Vec<f64> = vars.iter().map(|&v| inv_all[v]).collect();
        let tx = g.train_x();
        let q = vars.len();
        let mut xc = vec![0.0; n * q];
        for j in 0..n {
            for (c, &v) in vars.iter().enumerate() {
                xc[j * q + c] = tx[j * d + v] * inv_all[v];
            }
        }
        let open: Vec<usize> = (0..d).filter(|l| vars.binary_search(l).is_err()).collect();
        let rbf = k.kind == KernelKind::Rbf;
        let mut rest = vec![0.0; n * m];
        for j in 0..n {
            let xj = &tx[j * d..(j + 1) * d];
            for (c, s) in samples.chunks_exact(d).enumerate() {
                let mut r2 = 0.0;
                for &l in &open {
                    let t = (s[l] - xj[l]) * inv_all[l];
                    r2 += t * t;
                }
                rest[j * m + c] = if rbf { (-0.5 * r2).exp() } else { r2 };
            }
        }
        GpSet {
            shared,
            n,
            m,
            kind: k.kind,
            outputscale: k.outputscale,
            inv_ls,
            xc,
            rest,
        }
    }

    /// Σ_c (μ_c − mean + βσ_c) in model units, and its gradient (model units, not yet
    /// divided by m) when `grad` is given.
    fn eval(&self, xi: &[f64], beta: f64, grad: Option<&mut [f64]>) -> f64 {
        let (n, m, q) = (self.n, self.m, self.inv_ls.len());
        let s = self.outputscale;
        let panels = &self.shared.panels;
        let alpha = self.shared.post.alpha();
        let rbf = self.kind == KernelKind::Rbf;
        let want_grad = grad.is_some();
        let xs: Vec<f64> = xi.iter().zip(&self.inv_ls).map(|(x, il)| x * il).collect();
        // a_j: the controlled part of r²; for RBF its factor s·exp(−a_j/2).
        let a: Vec<f64> = (0..n)
            .map(|j| {
                let row = &self.xc[j * q..(j + 1) * q];
                xs.iter().zip(row).map(|(x, y)| (x - y) * (x - y)).sum()
            })
            .collect();
        let ea: Vec<f64> = if rbf {
            a.iter().map(|v| s * (-0.5 * v).exp()).collect()
        } else {
            Vec::new()
        };
        // V and U have their row count rounded up to whole panels.
        let rows = n.next_multiple_of(PANEL_ROWS);
        let mut kb = vec![0.0; n * BLOCK];
        let mut vb = vec![0.0; rows * BLOCK];
        let mut ub = if want_grad {
            vec![0.0; rows * BLOCK]
        } else {
            Vec::new()
        };
        let mut pb = if want_grad {
            vec![0.0; n * BLOCK]
        } else {
            Vec::new()
        };
        let mut h = vec![0.0; n];
        let mut acc = vec![0.0; BLOCK];
        let mut wgt = vec![0.0; BLOCK];
        let mut total = 0.0;
        for start in (0..m).step_by(BLOCK) {
            let w = BLOCK.min(m - start);
            // K (n × w) and, for the gradient, s·∂profile/∂r².
            for j in 0..n {
                let rest = &self.rest[j * m + start..j * m + start + w];
                let row = &mut kb[j * BLOCK..j * BLOCK + w];
                if rbf {
                    for (o, r) in row.iter_mut().zip(rest) {
                        *o = ea[j] * r;
                    }
                    if want_grad {
                        for (p, k) in pb[j * BLOCK..j * BLOCK + w].iter_mut().zip(row.iter()) {
                            *p = -0.5 * k;
                        }
                    }
                } else {
                    for (c, (o, r)) in row.iter_mut().zip(rest).enumerate() {
                        let (k, dk) = self.kind.profile(a[j] + r);
                        *o = s * k;
                        if want_grad {
                            pb[j * BLOCK + c] = s * dk;
                        }
                    }
                }
            }
            // Means (without the constant) and V = L⁻¹K.
            let acc = &mut acc[..w];
            acc.fill(0.0);
            for j in 0..n {
                axpy(alpha[j], &kb[j * BLOCK..j * BLOCK + w], acc);
            }
            let width = w.next_multiple_of(4);
            panels.lower_product(&kb, &mut vb, width);
            let mut var = [0.0f64; BLOCK];
            let var = &mut var[..w];
            var.fill(s);
            for j in 0..n {
                for (v, x) in var.iter_mut().zip(&vb[j * BLOCK..j * BLOCK + w]) {
                    *v -= x * x;
                }
            }
            let wgt = &mut wgt[..w];
            for c in 0..w {
                let raw = var[c];
                let sd = raw.max(MIN_VARIANCE).sqrt();
                total += acc[c] + beta * sd;
                // ∂(βσ)/∂var = β/(2σ); zero where the variance sits on its floor.
                wgt[c] = if raw > MIN_VARIANCE {
                    beta / (2.0 * sd)
                } else {
                    0.0
                };
            }
            if want_grad {
                // U = L⁻ᵀV, then h_j += Σ_c P_jc (α_j − 2 w_c U_jc).
                panels.lower_transpose_product(&vb, &mut ub, width);
                for (j, hj) in h.iter_mut().enumerate() {
                    let p = &pb[j * BLOCK..j * BLOCK + w];
                    let u = &ub[j * BLOCK..j * BLOCK + w];
                    let mut sum = 0.0;
                    for c in 0..w {
                        sum += p[c] * (alpha[j] - 2.0 * wgt[c] * u[c]);
                    }
                    *hj += sum;
                }
            }
        }
        if let Some(g) = grad {
            // ∂r²/∂x_k = 2 (x_k/ℓ_k − X_jk/ℓ_k)/ℓ_k.
            g.fill(0.0);
            for (hj, row) in h.iter().zip(self.xc.chunks_exact(q)) {
                for k in 0..q {
                    g[k] += hj * 2.0 * (xs[k] - row[k]) * self.inv_ls[k];
                }
            }
        }
        total
    }
}

/// The explicit `L⁻¹` (lower triangular, `n × n`) cut once into the panels its products
/// stream: panel `p` of `L` holds output rows `p·R … p·R + R − 1` (`R` the kernel's rows)
/// for every `k` that can be non-zero in them, and likewise for `Lᵀ`. Building a panel
/// gathers strided entries, so it is done once per posterior rather than per evaluation.
struct Panels {
    kernel: PanelKernel,
    n: usize,
    lower: Vec<PanelRow>,
    lower_start: Vec<usize>,
    upper: Vec<PanelRow>,
    upper_start: Vec<usize>,
}

impl Panels {
    fn new(l: &[f64], n: usize) -> Self {
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

    /// `out = L·src` for `src` of `n` rows with stride [`BLOCK`], over the first `width`
    /// columns (a multiple of 4). `out` has whole panels of [`PANEL_ROWS`] rows. Each output
    /// element is summed in ascending k, exactly like one `axpy` per coefficient (a panel's
    /// extra terms multiply zeros above the diagonal, and adding ±0 to a sum begun at +0
    /// changes no bit).
    fn lower_product(&self, src: &[f64], out: &mut [f64], width: usize) {
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
    fn lower_transpose_product(&self, src: &[f64], out: &mut [f64], width: usize) {
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

/// A panel row: the coefficients of one `k` for every output row of a panel — four, each
/// stored twice so that one 128-bit load gives a broadcast pair, or eight for AVX-512F.
type PanelRow = [f64; 8];

/// Output rows a panel holds at most (the row count of `V` and `U` is rounded up to it).
const PANEL_ROWS: usize = 8;

/// The panel-product kernel this processor runs, chosen when the panels are built. Every kernel
/// performs the same multiplies and adds per output element in the same order (no fused
/// multiply-add), so all agree to the bit; they differ in vector width and in how many
/// output rows share one pass over `src`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PanelKernel {
    /// Eight rows, sixteen columns per pass, 512-bit vectors.
    #[cfg(target_arch = "x86_64")]
    Avx512,
    /// Four rows, eight columns per pass, 256-bit vectors.
    #[cfg(target_arch = "x86_64")]
    Avx2,
    /// Four rows, four columns per pass (SSE2, or portable code off x86-64).
    Baseline,
}

impl PanelKernel {
    fn detect() -> Self {
        #[cfg(target_arch = "x86_64")]
        {
            if cabo_core::simd::has_avx512f() {
                return PanelKernel::Avx512;
            }
            if cabo_core::simd::has_avx2() {
                return PanelKernel::Avx2;
            }
        }
        PanelKernel::Baseline
    }

    fn rows(self) -> usize {
        match self {
            #[cfg(target_arch = "x86_64")]
            PanelKernel::Avx512 => 8,
            _ => 4,
        }
    }

    /// The stored panel row for the coefficients `c` (the first [`PanelKernel::rows`] used).
    fn row(self, c: [f64; 8]) -> PanelRow {
        match self {
            #[cfg(target_arch = "x86_64")]
            PanelKernel::Avx512 => c,
            _ => [c[0], c[0], c[1], c[1], c[2], c[2], c[3], c[3]],
        }
    }

    /// `out[r][c] = Σ_k panel[k][r] · src[k][c]` for the panel's output rows (row stride
    /// [`BLOCK`]), a few columns at a time so that the running sums stay in registers while
    /// the rows of `src` stream past: this register blocking is what makes the expected
    /// bound's two triangular products run at arithmetic rather than load/store speed. Sums
    /// run in ascending k, so the result is the same as the plain loop's.
    fn product(self, panel: &[PanelRow], src: &[f64], out: &mut [f64], width: usize) {
        assert!(width <= BLOCK && width.is_multiple_of(4));
        assert!(src.len() >= panel.len() * BLOCK && out.len() >= self.rows() * BLOCK);
        match self {
            // SAFETY (all three): the processor supports the instructions (`detect`), and
            // the bounds were asserted above.
            #[cfg(target_arch = "x86_64")]
            PanelKernel::Avx512 => unsafe { panel_product_avx512(panel, src, out, width) },
            #[cfg(target_arch = "x86_64")]
            PanelKernel::Avx2 => unsafe { panel_product_avx(panel, src, out, width) },
            #[cfg(target_arch = "x86_64")]
            PanelKernel::Baseline => unsafe { panel_product_sse2(panel, src, out, width) },
            #[cfg(not(target_arch = "x86_64"))]
            PanelKernel::Baseline => panel_product_portable(panel, src, out, width),
        }
    }
}

/// The SSE2 panel product: four rows, four columns (two registers) per pass.
///
/// # Safety
/// `width ≤ BLOCK`, `width` a multiple of 4, `src` at least `panel.len()·BLOCK` long and `out`
/// at least `4·BLOCK` long.
#[cfg(target_arch = "x86_64")]
unsafe fn panel_product_sse2(panel: &[PanelRow], src: &[f64], out: &mut [f64], width: usize) {
    use std::arch::x86_64::{_mm_add_pd, _mm_loadu_pd, _mm_mul_pd, _mm_setzero_pd, _mm_storeu_pd};
    for c0 in (0..width).step_by(4) {
        // SAFETY: SSE2 is part of x86-64. Loads read src[k·BLOCK + c0 .. + 4] with
        // k < panel.len() and c0 + 4 ≤ width ≤ BLOCK, inside `src`; panel rows hold 8 values;
        // stores write out[r·BLOCK + c0 .. + 4] with r < 4, inside `out` (the contract).
        unsafe {
            let mut acc = [_mm_setzero_pd(); 8];
            for (k, p) in panel.iter().enumerate() {
                let base = src.as_ptr().add(k * BLOCK + c0);
                let (s01, s23) = (_mm_loadu_pd(base), _mm_loadu_pd(base.add(2)));
                for r in 0..4 {
                    let c = _mm_loadu_pd(p.as_ptr().add(2 * r));
                    acc[2 * r] = _mm_add_pd(acc[2 * r], _mm_mul_pd(c, s01));
                    acc[2 * r + 1] = _mm_add_pd(acc[2 * r + 1], _mm_mul_pd(c, s23));
                }
            }
            for r in 0..4 {
                let o = out.as_mut_ptr().add(r * BLOCK + c0);
                _mm_storeu_pd(o, acc[2 * r]);
                _mm_storeu_pd(o.add(2), acc[2 * r + 1]);
            }
        }
    }
}

/// The AVX2 panel product: four rows, eight columns (two 256-bit registers per row) per pass, then
/// four. Each output element gets the same multiplies and adds in the same order as in the
/// SSE2 version, so the results are bitwise equal.
///
/// # Safety
/// As [`panel_product_sse2`], and the processor must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn panel_product_avx(panel: &[PanelRow], src: &[f64], out: &mut [f64], width: usize) {
    use std::arch::x86_64::{
        _mm256_add_pd, _mm256_broadcast_sd, _mm256_loadu_pd, _mm256_mul_pd, _mm256_setzero_pd,
        _mm256_storeu_pd,
    };
    let mut c0 = 0;
    // SAFETY: loads read src[k·BLOCK + c0 .. + lanes] with k < panel.len() and
    // c0 + lanes ≤ width ≤ BLOCK, inside `src`; broadcasts read panel entries 2r < 8; stores
    // write out[r·BLOCK + c0 .. + lanes] with r < 4, inside `out` (the contract).
    unsafe {
        while c0 + 8 <= width {
            let mut acc = [_mm256_setzero_pd(); 8];
            for (k, p) in panel.iter().enumerate() {
                let base = src.as_ptr().add(k * BLOCK + c0);
                let (s0, s4) = (_mm256_loadu_pd(base), _mm256_loadu_pd(base.add(4)));
                for r in 0..4 {
                    let c = _mm256_broadcast_sd(&p[2 * r]);
                    acc[2 * r] = _mm256_add_pd(acc[2 * r], _mm256_mul_pd(c, s0));
                    acc[2 * r + 1] = _mm256_add_pd(acc[2 * r + 1], _mm256_mul_pd(c, s4));
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
#[target_feature(enable = "avx2")]
unsafe fn four_columns_avx<const ROWS: usize, const STEP: usize>(
    panel: &[PanelRow],
    src: &[f64],
    out: &mut [f64],
    c0: usize,
) {
    use std::arch::x86_64::{
        _mm256_add_pd, _mm256_broadcast_sd, _mm256_loadu_pd, _mm256_mul_pd, _mm256_setzero_pd,
        _mm256_storeu_pd,
    };
    // SAFETY: loads read src[k·BLOCK + c0 .. + 4] with k < panel.len() and c0 + 4 ≤ BLOCK,
    // inside `src`; stores write out[r·BLOCK + c0 .. + 4] with r < ROWS, inside `out`.
    unsafe {
        let mut acc = [_mm256_setzero_pd(); ROWS];
        for (k, p) in panel.iter().enumerate() {
            let s0 = _mm256_loadu_pd(src.as_ptr().add(k * BLOCK + c0));
            for (r, a) in acc.iter_mut().enumerate() {
                *a = _mm256_add_pd(*a, _mm256_mul_pd(_mm256_broadcast_sd(&p[STEP * r]), s0));
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
/// at least `8·BLOCK` long, and the processor must support AVX-512F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn panel_product_avx512(panel: &[PanelRow], src: &[f64], out: &mut [f64], width: usize) {
    use std::arch::x86_64::{
        _mm512_add_pd, _mm512_loadu_pd, _mm512_mul_pd, _mm512_set1_pd, _mm512_setzero_pd,
        _mm512_storeu_pd,
    };
    let mut c0 = 0;
    // SAFETY: loads read src[k·BLOCK + c0 .. + lanes] with k < panel.len() and
    // c0 + lanes ≤ width ≤ BLOCK, inside `src`; panel rows hold 8 values; stores write
    // out[r·BLOCK + c0 .. + lanes] with r < 8, inside `out` (the contract). AVX-512F
    // implies AVX2 for the last four columns.
    unsafe {
        while c0 + 16 <= width {
            let mut acc = [_mm512_setzero_pd(); 16];
            for (k, p) in panel.iter().enumerate() {
                let base = src.as_ptr().add(k * BLOCK + c0);
                let (s0, s8) = (_mm512_loadu_pd(base), _mm512_loadu_pd(base.add(8)));
                for r in 0..8 {
                    let c = _mm512_set1_pd(p[r]);
                    acc[2 * r] = _mm512_add_pd(acc[2 * r], _mm512_mul_pd(c, s0));
                    acc[2 * r + 1] = _mm512_add_pd(acc[2 * r + 1], _mm512_mul_pd(c, s8));
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
                    *a = _mm512_add_pd(*a, _mm512_mul_pd(_mm512_set1_pd(p[r]), s0));
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

/// Portable version of the x86-64 kernels above, with the same summation order.
#[cfg(not(target_arch = "x86_64"))]
fn panel_product_portable(panel: &[PanelRow], src: &[f64], out: &mut [f64], width: usize) {
    for c0 in (0..width).step_by(4) {
        let mut acc = [[0.0f64; 4]; 4];
        for (k, p) in panel.iter().enumerate() {
            let s = &src[k * BLOCK + c0..k * BLOCK + c0 + 4];
            for r in 0..4 {
                for t in 0..4 {
                    acc[r][t] += p[2 * r] * s[t];
                }
            }
        }
        for (r, a) in acc.iter().enumerate() {
            out[r * BLOCK + c0..r * BLOCK + c0 + 4].copy_from_slice(a);
        }
    }
}
