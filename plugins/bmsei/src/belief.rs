//! What a scenario tree needs from a belief: the posterior mean at a point and the posterior
//! covariance between two points, with gradients in both points.
//!
//! Fantasies along a tree path are conditioned *jointly*: the fantasised observations at the
//! path's points are `μ + L ε` with `L` the Cholesky factor of their joint posterior
//! covariance (plus noise), which is exactly what sequential rank-one conditioning
//! (`GpPosterior::condition_many`) produces, but differentiable in every point of the path
//! through small dense algebra. The `O(n²)` work against the training data is done once per
//! tree node by [`PathBelief::prepare`].

// Dense small-matrix and row-major kernels read clearest with explicit indices.
#![allow(clippy::needless_range_loop)]

use cabo_core::CostBelief;
use cabo_gp::linalg::dot;
use cabo_gp::posterior::{GpPosterior, MIN_VARIANCE};

/// Per-point quantities a belief precomputes once per tree evaluation.
#[derive(Debug, Clone, Default)]
pub struct PointCache {
    /// Posterior mean.
    pub mean: f64,
    /// ∇ mean (empty when gradients were not requested).
    pub dmean: Vec<f64>,
    /// Posterior variance of the latent value.
    pub var: f64,
    /// ∇ variance.
    pub dvar: Vec<f64>,
    /// The point itself.
    pub x: Vec<f64>,
    /// Belief-specific data (for a GP: `L⁻¹ k(X, x)`).
    pub v: Vec<f64>,
    /// Belief-specific data for gradients (for a GP: `(K + σ²I)⁻¹ k(X, x) = L⁻ᵀ v`).
    pub u: Vec<f64>,
    /// Belief-specific Jacobian (for a GP: `∂k(X, x)/∂x`, row-major `n × d`).
    pub jv: Vec<f64>,
}

/// A posterior over a scalar function that a scenario tree can fantasise from.
pub trait PathBelief: Sync {
    /// Input dimension.
    fn dim(&self) -> usize;
    /// Observation-noise variance added to fantasised observations.
    fn noise(&self) -> f64;
    /// Fills `c` for the point `x` (gradients only when `grad`).
    fn prepare(&self, x: &[f64], grad: bool, c: &mut PointCache);
    /// Posterior covariance of two prepared distinct tree points, writing its gradients with
    /// respect to `a.x` and `b.x` into `ga` and `gb` when they are non-empty.
    fn cov(&self, a: &PointCache, b: &PointCache, ga: &mut [f64], gb: &mut [f64]) -> f64;
}

/// An exact GP posterior as a [`PathBelief`] (the objective, or ln c under a log-GP).
pub struct GpPath<'a> {
    post: &'a GpPosterior,
    scale2: f64,
    scale: f64,
    shift: f64,
}

impl<'a> GpPath<'a> {
    /// Wraps a posterior; all reported quantities are in observed units.
    pub fn new(post: &'a GpPosterior) -> Self {
        let t = post.output_transform();
        GpPath {
            post,
            scale2: t.scale * t.scale,
            scale: t.scale,
            shift: t.shift,
        }
    }
}

impl PathBelief for GpPath<'_> {
    fn dim(&self) -> usize {
        cabo_core::Posterior::dim(self.post)
    }

    fn noise(&self) -> f64 {
        self.scale2 * self.post.model_noise_variance()
    }

    fn prepare(&self, x: &[f64], grad: bool, c: &mut PointCache) {
        let d = x.len();
        let n = self.post.len();
        let kern = self.post.kernel();
        let train = self.post.train_x();
        c.x.clear();
        c.x.extend_from_slice(x);
        c.v.resize(n, 0.0);
        if grad {
            c.jv.resize(n * d, 0.0);
            // `u` is overwritten below; until then it holds the kernel's gradient weights.
            c.u.resize(n, 0.0);
            kern.cross_grad_x(x, train, &mut c.v, &mut c.jv, &mut c.u);
        } else {
            c.jv.clear();
            kern.cross(x, train, &mut c.v);
        }
        // Mean (model units) before the solve turns k into L⁻¹k.
        let alpha = self.post.alpha();
        let mean = self.post.mean_constant() + dot(&c.v, alpha);
        c.mean = self.shift + self.scale * mean;
        c.dmean.clear();
        if grad {
            c.dmean.resize(d, 0.0);
            fold_rows(&c.jv, &mut c.dmean, |acc, r, i| acc + alpha[i] * r);
            for g in c.dmean.iter_mut() {
                *g *= self.scale;
            }
        }
        let chol = self.post.cholesky();
        chol.solve_lower_in_place(&mut c.v);
        let raw = kern.outputscale - dot(&c.v, &c.v);
        c.dvar.clear();
        c.u.clear();
        if grad {
            // u = K⁻¹k turns every gradient into an O(n·d) product with ∂k/∂x, instead of
            // solving L⁻¹ ∂k/∂x (O(n²·d)): ∂var/∂x = −2 (∂k/∂x)ᵀu and
            // ∂cov(a, b)/∂a = ∂k(a, b)/∂a − (∂k_a/∂a)ᵀ u_b.
            c.u.extend_from_slice(&c.v);
            chol.solve_upper_in_place(&mut c.u);
            c.dvar.resize(d, 0.0);
            if raw > MIN_VARIANCE {
                let (u, s2) = (&c.u, self.scale2);
                fold_rows(&c.jv, &mut c.dvar, |acc, r, i| acc - 2.0 * u[i] * r * s2);
            }
        }
        c.var = self.scale2 * raw.max(MIN_VARIANCE);
    }

    fn cov(&self, a: &PointCache, b: &PointCache, ga: &mut [f64], gb: &mut [f64]) -> f64 {
        let kern = self.post.kernel();
        let d = a.x.len();
        let k = if ga.is_empty() {
            kern.value(&a.x, &b.x)
        } else {
            // Stationary kernel: ∂k/∂b = −∂k/∂a.
            let k = kern.value_grad_x(&a.x, &b.x, ga);
            for j in 0..d {
                gb[j] = -ga[j];
            }
            fold_rows(&a.jv, ga, |acc, r, i| acc - r * b.u[i]);
            fold_rows(&b.jv, gb, |acc, r, i| acc - r * a.u[i]);
            for g in ga.iter_mut().chain(gb.iter_mut()) {
                *g *= self.scale2;
            }
            k
        };
        self.scale2 * (k - dot(&a.v, &b.v))
    }
}

/// `out[j] ← f(… f(f(out[j], rows[0][j], 0), rows[1][j], 1) …)` over the rows of `rows`
/// (row length `out.len()`): a per-coordinate sum over training points, in ascending order
/// like the plain loop, but with the running sums in a local array the compiler can keep
/// apart from the rows (through a struct's vectors it must assume they alias).
#[inline(always)]
fn fold_rows(rows: &[f64], out: &mut [f64], f: impl Fn(f64, f64, usize) -> f64) {
    const LOCAL: usize = 16;
    let d = out.len();
    if d == 0 {
        return;
    }
    if d > LOCAL {
        for (i, row) in rows.chunks_exact(d).enumerate() {
            for (o, &r) in out.iter_mut().zip(row) {
                *o = f(*o, r, i);
            }
        }
        return;
    }
    let mut acc = [0.0; LOCAL];
    acc[..d].copy_from_slice(out);
    for (i, row) in rows.chunks_exact(d).enumerate() {
        for (a, &r) in acc[..d].iter_mut().zip(row) {
            *a = f(*a, r, i);
        }
    }
    out.copy_from_slice(&acc[..d]);
}

/// A cost known exactly at every point (zero variance): known and uniform cost beliefs.
/// Fantasised costs are then the true costs and `P(c ≤ b)` is a step.
pub struct KnownPath<'a> {
    belief: &'a dyn CostBelief,
}

impl<'a> KnownPath<'a> {
    /// Wraps a belief whose [`CostBelief::is_known`] is true.
    pub fn new(belief: &'a dyn CostBelief) -> Self {
        KnownPath { belief }
    }
}

impl PathBelief for KnownPath<'_> {
    fn dim(&self) -> usize {
        self.belief.dim()
    }
    fn noise(&self) -> f64 {
        0.0
    }
    fn prepare(&self, x: &[f64], grad: bool, c: &mut PointCache) {
        let l = if grad {
            self.belief.ln_cost_grad(x)
        } else {
            self.belief.ln_cost(x)
        };
        c.mean = l.mean;
        c.var = 0.0;
        c.dmean = l.dmean;
        c.dvar.clear();
        c.dvar.resize(c.dmean.len(), 0.0);
        c.x.clear();
        c.x.extend_from_slice(x);
    }
    fn cov(&self, _: &PointCache, _: &PointCache, ga: &mut [f64], gb: &mut [f64]) -> f64 {
        ga.fill(0.0);
        gb.fill(0.0);
        0.0
    }
}

/// Every evaluation costs 1 (ln c = 0): multi-step EI's horizon counted in steps.
pub struct UnitCostPath {
    /// Input dimension.
    pub dim: usize,
}

impl PathBelief for UnitCostPath {
    fn dim(&self) -> usize {
        self.dim
    }
    fn noise(&self) -> f64 {
        0.0
    }
    fn prepare(&self, x: &[f64], grad: bool, c: &mut PointCache) {
        c.mean = 0.0;
        c.var = 0.0;
        c.dmean.clear();
        c.dvar.clear();
        if grad {
            c.dmean.resize(x.len(), 0.0);
            c.dvar.resize(x.len(), 0.0);
        }
        c.x.clear();
        c.x.extend_from_slice(x);
    }
    fn cov(&self, _: &PointCache, _: &PointCache, ga: &mut [f64], gb: &mut [f64]) -> f64 {
        ga.fill(0.0);
        gb.fill(0.0);
        0.0
    }
}
