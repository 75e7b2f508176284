//! The exact GP's expected confidence bounds over the open variables of a control set
//! ([`cabo_core::capability::OpenBounds`]): E[μ([x^i, X^{-i}]) + β σ([x^i, X^{-i}])] averaged
//! over a fixed sample set (the caller's: cabo's control-set policies pass scrambled Sobol'
//! points), with analytic gradients in x^i. The work is linear in the number of samples.
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
use crate::posterior::{GpPosterior, MIN_VARIANCE};
use cabo_core::Objective;
use cabo_core::capability::{OpenBounds, PreparedBounds};
use cabo_linalg::axpy;
// Samples go through the evaluation in blocks of the panel products' width, which keeps the
// n × BLOCK working matrices in cache.
use cabo_linalg::panel::{BLOCK, PANEL_ROWS, Panels};

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
    ) -> Box<dyn Objective + Send + Sync + 'a> {
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

impl Objective for SetBound<'_> {
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
    ///
    /// One function because each block of `BLOCK` samples is carried through every stage —
    /// kernel values, means, `V = L⁻¹K` and variances, then the gradient's `U = L⁻ᵀV` and
    /// `h` — before the next block reuses the buffers: the block loop is the unit, and its
    /// stages share `kb`, `vb`, `ub`, `pb` and `wgt`.
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
