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

    fn non_negative(&self) -> bool {
        (**self).non_negative()
    }
}
