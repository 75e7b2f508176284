//! The exact GP's joint covariances between prepared points ([`cabo_core::capability::Covariance`]):
//! what a scenario tree needs to condition a path's fantasies jointly and differentiate
//! through them. The `O(n²)` work against the training data is done once per point by
//! `prepare` (two triangular solves); a covariance between two prepared points then costs
//! `O(n·d)`.

// Dense row-major kernels read clearest with explicit indices.
#![allow(clippy::needless_range_loop)]

use crate::posterior::{GpPosterior, MIN_VARIANCE};
use cabo_core::capability::{Covariance, PreparedPoint};
use cabo_linalg::distance::{kernel_jacobian, lengthscaled_squared_distances};
use cabo_linalg::dot;
use cabo_linalg::profile::scaled_profiles;
use cabo_linalg::rows::{Fold, weighted_rows};

impl Covariance for GpPosterior {
    fn dim(&self) -> usize {
        cabo_core::Posterior::dim(self)
    }

    fn fantasy_noise(&self) -> f64 {
        let t = self.output_transform();
        t.scale * t.scale * self.model_noise_variance()
    }

    /// The working vectors are `v = L⁻¹k(X, x)`, `u = (K + σ²I)⁻¹k(X, x)` (with gradients
    /// only) and `jv = ∂k(X, x)/∂x` (row-major `n × d`, with gradients only).
    fn prepare(&self, x: &[f64], grad: bool, c: &mut PreparedPoint) {
        self.cross_moments(x, grad, c);
        let chol = self.cholesky();
        chol.solve_lower_in_place(&mut c.v);
        start_gradient_solve(grad, c);
        if grad {
            chol.solve_upper_in_place(&mut c.u);
        }
        self.finish_variance(grad, c);
    }

    /// The points' triangular systems are solved together (`solve_lower_many`,
    /// `solve_upper_many`, each row bitwise its single solve), so that the points of a
    /// scenario tree share each load of the factor.
    fn prepare_many(&self, xs: &[f64], grad: bool, ps: &mut [PreparedPoint]) {
        let (n, d) = (self.len(), cabo_core::Posterior::dim(self));
        let count = ps.len().min(xs.len() / d.max(1));
        let ps = &mut ps[..count];
        let mut block = Vec::with_capacity(count * n);
        for (x, c) in xs.chunks_exact(d).zip(ps.iter_mut()) {
            self.cross_moments(x, grad, c);
            block.extend_from_slice(&c.v);
        }
        let chol = self.cholesky();
        chol.solve_lower_many_in_place(&mut block);
        for (i, c) in ps.iter_mut().enumerate() {
            c.v.copy_from_slice(&block[i * n..(i + 1) * n]);
            start_gradient_solve(grad, c);
        }
        if grad {
            // The block holds each point's v, which is where its u starts.
            chol.solve_upper_many_in_place(&mut block);
            for (i, c) in ps.iter_mut().enumerate() {
                c.u.copy_from_slice(&block[i * n..(i + 1) * n]);
            }
        }
        for c in ps.iter_mut() {
            self.finish_variance(grad, c);
        }
    }

    fn cov(&self, a: &PreparedPoint, b: &PreparedPoint, ga: &mut [f64], gb: &mut [f64]) -> f64 {
        let t = self.output_transform();
        let scale2 = t.scale * t.scale;
        let kern = self.kernel();
        let d = a.x.len();
        let k = if ga.is_empty() {
            kern.value(&a.x, &b.x)
        } else {
            // Stationary kernel: ∂k/∂b = −∂k/∂a.
            let k = kern.value_grad_x(&a.x, &b.x, ga);
            for j in 0..d {
                gb[j] = -ga[j];
            }
            // −(∂k_a/∂a)ᵀ u_b and −(∂k_b/∂b)ᵀ u_a (u_i·r is r·u_i to the bit).
            weighted_rows(&a.jv, &b.u, Fold::Subtract, ga);
            weighted_rows(&b.jv, &a.u, Fold::Subtract, gb);
            for g in ga.iter_mut().chain(gb.iter_mut()) {
                *g *= scale2;
            }
            k
        };
        scale2 * (k - dot(&a.v, &b.v))
    }
}

impl GpPosterior {
    /// What [`Covariance::prepare`] does before its solves: the point, `k(X, x)` in `c.v`,
    /// the mean and, with gradients, its gradient, the Jacobian `∂k(X, x)/∂x` in `c.jv` and
    /// the kernel's gradient weights in `c.u`.
    fn cross_moments(&self, x: &[f64], grad: bool, c: &mut PreparedPoint) {
        let (scale, shift) = (self.output_transform().scale, self.output_transform().shift);
        let d = x.len();
        let n = self.len();
        let kern = self.kernel();
        let train = self.train_x();
        c.x.clear();
        c.x.extend_from_slice(x);
        c.v.resize(n, 0.0);
        if grad {
            c.jv.resize(n * d, 0.0);
            // `u` holds the kernel's gradient weights until the solves overwrite it.
            // The values and Jacobian of `Kernel::cross_grad_x`, with the distances to all
            // training inputs side by side (the same operations per entry).
            c.u.resize(n, 0.0);
            let ls = &kern.lengthscales;
            lengthscaled_squared_distances(self.train_x_by_coordinate(), n, x, ls, &mut c.v);
            scaled_profiles(kern.kind.shape(), kern.outputscale, &mut c.v, &mut c.u);
            kernel_jacobian(x, train, &c.u, ls, &mut c.jv);
        } else {
            c.jv.clear();
            kern.cross(x, train, &mut c.v);
        }
        // Mean (model units) before the solve turns k into L⁻¹k.
        let alpha = self.alpha();
        let mean = self.mean_constant() + dot(&c.v, alpha);
        c.mean = shift + scale * mean;
        c.dmean.clear();
        if grad {
            c.dmean.resize(d, 0.0);
            weighted_rows(&c.jv, alpha, Fold::Add, &mut c.dmean);
            for g in c.dmean.iter_mut() {
                *g *= scale;
            }
        }
    }

    /// What [`Covariance::prepare`] does after its solves (`c.v = L⁻¹k`, and with gradients
    /// `c.u = K⁻¹k`): the variance and its gradient.
    fn finish_variance(&self, grad: bool, c: &mut PreparedPoint) {
        let scale2 = self.output_transform().scale * self.output_transform().scale;
        let raw = self.kernel().outputscale - dot(&c.v, &c.v);
        c.dvar.clear();
        if grad {
            // u = K⁻¹k turns every gradient into an O(n·d) product with ∂k/∂x, instead of
            // solving L⁻¹ ∂k/∂x (O(n²·d)): ∂var/∂x = −2 (∂k/∂x)ᵀu and
            // ∂cov(a, b)/∂a = ∂k(a, b)/∂a − (∂k_a/∂a)ᵀ u_b.
            c.dvar.resize(c.x.len(), 0.0);
            if raw > MIN_VARIANCE {
                weighted_rows(&c.jv, &c.u, Fold::SubtractTwiceScaled(scale2), &mut c.dvar);
            }
        }
        c.var = scale2 * raw.max(MIN_VARIANCE);
    }
}

/// Between the two solves of [`Covariance::prepare`]: `c.u` starts as `c.v = L⁻¹k`
/// (with gradients; empty without).
fn start_gradient_solve(grad: bool, c: &mut PreparedPoint) {
    c.u.clear();
    if grad {
        c.u.extend_from_slice(&c.v);
    }
}
