//! The exact GP's one-shot knowledge-gradient objective
//! ([`cabo_core::capability::FantasyMeans`]).
//!
//! KG's scenario tree has one root `x` and `m` leaves `x'ᵢ`, and a leaf contributes the
//! posterior mean at `x'ᵢ` after the fantasy `yᵢ = μ(x) + √(σ²(x) + noise)·εᵢ`:
//!
//! ```text
//! μᵢ = μ(x'ᵢ) + εᵢ · cov(x'ᵢ, x) / √(σ²(x) + noise),
//! cov(x'ᵢ, x) = k(x'ᵢ, x) − k(X, x'ᵢ)ᵀ K⁻¹ k(X, x).
//! ```
//!
//! A general scenario tree prepares every node with two triangular solves (`O(n²)` each,
//! [`cabo_core::capability::Covariance`]). Here only the root is solved: `K⁻¹k(X, x)` turns
//! each leaf's covariance into a dot product, so a leaf costs `O(n·d)`. The leaves' pull on
//! the root's gradient, `−(∂k(X, x)/∂x)ᵀ K⁻¹ Σᵢ cᵢ k(X, x'ᵢ)`, is summed before one more
//! solve. An evaluation thus takes four triangular solves instead of `2(m + 1)`, with the
//! same value and gradient as the tree up to rounding (`plugins/bmsei` tests them equal).

use crate::kernel::ScaledRows;
use crate::posterior::{GpPosterior, MIN_VARIANCE};
use cabo_core::capability::FantasyMeans;
use cabo_core::{Error, Objective, Result};
use cabo_linalg::dot;
use std::cell::RefCell;

impl FantasyMeans for GpPosterior {
    fn objective<'a>(&'a self, eps: &[f64], weights: &[f64]) -> Result<Box<dyn Objective + 'a>> {
        Ok(Box::new(KgObjective::new(self, eps, weights)?))
    }
}

/// Buffers reused across evaluations.
#[derive(Default)]
struct Scratch {
    /// `k(X, x)` of the root.
    k_root: Vec<f64>,
    /// Kernel gradient weights of the root (see `ScaledRows::cross_weights`).
    c_root: Vec<f64>,
    /// `K⁻¹ k(X, x)`.
    u_root: Vec<f64>,
    /// `k(X, x'ᵢ)` of the current leaf.
    k_leaf: Vec<f64>,
    /// Kernel gradient weights of the current leaf.
    c_leaf: Vec<f64>,
    /// Per-training-point weights of a leaf's gradient fold.
    fold: Vec<f64>,
    /// `Σᵢ cᵢ k(X, x'ᵢ)`, then `K⁻¹` of it.
    pull: Vec<f64>,
    /// `∂k(x'ᵢ, x)/∂x'ᵢ`.
    dk: Vec<f64>,
}

/// `E[max_x' μ_{D ∪ (x, y)}(x')]` as the sample average over the tree's fantasies, as a
/// function of the concatenated vector `(x, x'₁, …, x'ₘ)` (the tree's layout).
pub struct KgObjective<'a> {
    post: &'a GpPosterior,
    /// The training inputs divided by the lengthscales.
    rows: ScaledRows,
    /// Base sample `εᵢ` of each leaf.
    eps: Vec<f64>,
    /// Weight `1/m` of each leaf.
    weight: Vec<f64>,
    /// Model-to-observed scale and shift.
    scale: f64,
    shift: f64,
    scratch: RefCell<Scratch>,
}

impl<'a> KgObjective<'a> {
    /// The objective over the posterior `post` for the leaves' base samples `eps` and
    /// weights `weights`. Fails when their lengths differ or there is no leaf.
    pub fn new(post: &'a GpPosterior, eps: &[f64], weights: &[f64]) -> Result<Self> {
        if eps.is_empty() || eps.len() != weights.len() {
            return Err(Error::invalid(format!(
                "knowledge gradient: {} base samples for {} weights",
                eps.len(),
                weights.len()
            )));
        }
        let t = post.output_transform();
        Ok(KgObjective {
            post,
            rows: post.kernel().scale_rows(post.train_x()),
            eps: eps.to_vec(),
            weight: weights.to_vec(),
            scale: t.scale,
            shift: t.shift,
            scratch: RefCell::new(Scratch::default()),
        })
    }

    /// Length of the decision vector (`(m + 1)·d`).
    pub fn dim(&self) -> usize {
        (self.eps.len() + 1) * cabo_core::Posterior::dim(self.post)
    }

    /// The objective at `xs` (the root `x`, then each leaf `x'ᵢ`), with its gradient written
    /// into `grad` when given; NaN for a vector of the wrong length or with a non-finite entry.
    ///
    /// One function because the chain rule runs root, leaves, root: the root's `K⁻¹k(X, x)`
    /// and standard deviation enter every leaf's term, and the leaves accumulate `spread` and
    /// `pull`, which the root's gradient needs at the end. The scratch buffers are borrowed
    /// once for all three.
    fn evaluate(&self, xs: &[f64], mut grad: Option<&mut [f64]>) -> f64 {
        if xs.len() != self.dim() || xs.iter().any(|v| !v.is_finite()) {
            if let Some(g) = grad {
                g.fill(0.0);
            }
            return f64::NAN;
        }
        if let Some(g) = grad.as_deref_mut() {
            g.fill(0.0);
        }
        let want = grad.is_some();
        let post = self.post;
        let kern = post.kernel();
        let alpha = post.alpha();
        let (n, d) = (post.len(), kern.dim());
        let (s, s2) = (self.scale, self.scale * self.scale);
        let mut guard = self.scratch.borrow_mut();
        let sc = &mut *guard;
        sc.resize(n, d, want);

        // The root: K⁻¹k(X, x) and the fantasies' standard deviation √(σ²(x) + noise).
        let x = &xs[..d];
        self.rows.cross_weights(x, &mut sc.k_root, &mut sc.c_root);
        sc.u_root.copy_from_slice(&sc.k_root);
        post.cholesky().solve_in_place(&mut sc.u_root);
        let raw_var = kern.outputscale - dot(&sc.k_root, &sc.u_root);
        let sd = (s2 * (raw_var.max(MIN_VARIANCE) + post.model_noise_variance())).sqrt();

        let mut total = 0.0;
        // Σᵢ wᵢ εᵢ s² cov_model(x'ᵢ, x): the numerator the root's variance divides.
        let mut spread = 0.0;
        for (i, (&eps, &w)) in self.eps.iter().zip(&self.weight).enumerate() {
            let leaf = &xs[(i + 1) * d..(i + 2) * d];
            self.rows
                .cross_weights(leaf, &mut sc.k_leaf, &mut sc.c_leaf);
            let k_cross = if want {
                kern.value_grad_x(leaf, x, &mut sc.dk)
            } else {
                kern.value(leaf, x)
            };
            let mean = post.mean_constant() + dot(&sc.k_leaf, alpha);
            let cov = k_cross - dot(&sc.k_leaf, &sc.u_root);
            let e = eps * s2 / sd;
            total += w * (self.shift + s * mean + e * cov);
            spread += w * eps * s2 * cov;
            let Some(g) = grad.as_deref_mut() else {
                continue;
            };
            // ∂/∂x'ᵢ = w (Jᵢᵀ(s α − e u) + e ∂k(x'ᵢ, x)/∂x'ᵢ), Jᵢ = ∂k(X, x'ᵢ)/∂x'ᵢ.
            for ((f, &a), &u) in sc.fold.iter_mut().zip(alpha).zip(&sc.u_root) {
                *f = w * (s * a - e * u);
            }
            let gi = &mut g[(i + 1) * d..(i + 2) * d];
            for (gj, &k) in gi.iter_mut().zip(&sc.dk) {
                *gj = w * e * k;
            }
            self.rows
                .add_weighted_grad_x(leaf, &sc.c_leaf, &sc.fold, gi);
            // The root: ∂k(x'ᵢ, x)/∂x = −∂k/∂x'ᵢ (stationary kernel), and the pull term.
            for (gj, &k) in g[..d].iter_mut().zip(&sc.dk) {
                *gj -= w * e * k;
            }
            for (p, &k) in sc.pull.iter_mut().zip(&sc.k_leaf) {
                *p += w * e * k;
            }
        }
        if let Some(g) = grad {
            // ∂/∂x of Σ wᵢεᵢs²covᵢ / sd (J_x = ∂k(X, x)/∂x): the covariances' root terms
            // −J_xᵀ K⁻¹ pull, and the variance's −½ spread · s² ∂σ²/∂x / sd³ with
            // ∂σ²/∂x = −2 J_xᵀ u (zero where the variance is clamped).
            post.cholesky().solve_in_place(&mut sc.pull);
            let c = if raw_var > MIN_VARIANCE {
                spread * s2 / (sd * sd * sd)
            } else {
                0.0
            };
            for (f, (&u, &p)) in sc.fold.iter_mut().zip(sc.u_root.iter().zip(&sc.pull)) {
                *f = c * u - p;
            }
            self.rows
                .add_weighted_grad_x(x, &sc.c_root, &sc.fold, &mut g[..d]);
        }
        total
    }
}

impl Scratch {
    fn resize(&mut self, n: usize, d: usize, grad: bool) {
        for v in [
            &mut self.k_root,
            &mut self.u_root,
            &mut self.k_leaf,
            &mut self.c_root,
            &mut self.c_leaf,
        ] {
            v.resize(n, 0.0);
        }
        if grad {
            self.fold.resize(n, 0.0);
            self.dk.resize(d, 0.0);
            self.pull.clear();
            self.pull.resize(n, 0.0);
        }
    }
}

impl Objective for KgObjective<'_> {
    /// The value at `xs` (NaN when `xs` has the wrong length or a non-finite entry).
    fn value(&self, xs: &[f64]) -> f64 {
        self.evaluate(xs, None)
    }

    /// The value at `xs`, writing its gradient into `grad`.
    fn value_grad(&self, xs: &[f64], grad: &mut [f64]) -> f64 {
        self.evaluate(xs, Some(grad))
    }
}
