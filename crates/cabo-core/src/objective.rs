//! Functions over the unit cube with a value and a gradient: what cabo's optimiser maximises.
//!
//! One trait serves every such function: acquisition functions
//! ([`AcquisitionFn`](crate::AcquisitionFn) extends it), posterior sample paths
//! ([`SamplePaths`](crate::capability::SamplePaths)), scenario-tree values, expected bounds
//! over a control set's open variables and the posterior mean. The dimension is not part of
//! it: a point's length is its dimension, and whoever maximises a function says over which
//! box.

/// A function of a point `x` (in `[0,1]^d`, or a box of it) with its gradient.
pub trait Objective {
    /// Value at `x`.
    fn value(&self, x: &[f64]) -> f64;

    /// Value at `x`, writing the gradient into `grad` (`x.len()` entries). A function that
    /// cannot be differentiated at `x` returns NaN, which optimisers treat as a failed
    /// evaluation whatever `grad` then holds.
    fn value_grad(&self, x: &[f64], grad: &mut [f64]) -> f64;

    /// Values at many points (`xs` row-major, `out.len()` rows); override to batch the
    /// work, as posteriors do through their batched means and variances.
    fn values(&self, xs: &[f64], out: &mut [f64]) {
        let d = xs.len() / out.len().max(1);
        for (o, x) in out.iter_mut().zip(xs.chunks_exact(d.max(1))) {
            *o = self.value(x);
        }
    }

    /// Values and gradients at many points: `xs` row-major (`values.len()` rows), `grads`
    /// in the same layout as `xs`. Multi-start optimisers call it with every point their
    /// concurrent local searches request at once; override to share work between the
    /// points, as posteriors can through one pass over their Cholesky factor.
    ///
    /// Contract: each row's value and gradient must be **bitwise** what
    /// [`value_grad`](Objective::value_grad) gives at that point (NaN for a failed
    /// evaluation included), whatever the other rows and however many there are. An override
    /// may share work, never change results: optimisers rely on it to return bit-identical
    /// decisions whether points are evaluated one at a time or together. The default loops
    /// `value_grad` over the rows.
    fn value_grads(&self, xs: &[f64], values: &mut [f64], grads: &mut [f64]) {
        let d = (xs.len() / values.len().max(1)).max(1);
        for ((v, x), g) in (values.iter_mut())
            .zip(xs.chunks_exact(d))
            .zip(grads.chunks_exact_mut(d))
        {
            *v = self.value_grad(x, g);
        }
    }

    /// True when every value is ≥ 0 with a meaningful zero (EI-type), which selects
    /// BoTorch's non-negative initial-condition heuristic when maximising.
    fn non_negative(&self) -> bool {
        false
    }
}

/// A boxed function is the function: every method forwards, overrides included.
impl<T: Objective + ?Sized> Objective for Box<T> {
    fn value(&self, x: &[f64]) -> f64 {
        (**self).value(x)
    }

    fn value_grad(&self, x: &[f64], grad: &mut [f64]) -> f64 {
        (**self).value_grad(x, grad)
    }

    fn values(&self, xs: &[f64], out: &mut [f64]) {
        (**self).values(xs, out);
    }

    fn value_grads(&self, xs: &[f64], values: &mut [f64], grads: &mut [f64]) {
        (**self).value_grads(xs, values, grads);
    }

    fn non_negative(&self) -> bool {
        (**self).non_negative()
    }
}
