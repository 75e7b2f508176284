//! What a scenario tree needs from a belief is the capability [`Covariance`]: the posterior
//! mean at a point and the posterior covariance between two points, with gradients in both
//! points. Models offer it for the objective
//! ([`Posterior::covariance`](cabo_core::Posterior::covariance)) and for ln c
//! ([`CostBelief::covariance`](cabo_core::CostBelief::covariance)); this module adds the unit
//! cost of multi-step EI and KG, which no model stands for.
//!
//! Fantasies along a tree path are conditioned *jointly*: the fantasised observations at the
//! path's points are `μ + L ε` with `L` the Cholesky factor of their joint posterior
//! covariance (plus noise), which is exactly what sequential rank-one conditioning
//! ([`Fantasize`](cabo_core::capability::Fantasize)) produces, but differentiable in every
//! point of the path through small dense algebra. The `O(n²)` work against the training data
//! is done once per tree node by `Covariance::prepare`.

use cabo_core::capability::{Covariance, PreparedPoint};

/// Every evaluation costs 1 (ln c = 0): multi-step EI's horizon counted in steps.
pub struct UnitCostPath {
    /// Input dimension.
    pub dim: usize,
}

impl Covariance for UnitCostPath {
    fn dim(&self) -> usize {
        self.dim
    }
    fn fantasy_noise(&self) -> f64 {
        0.0
    }
    fn prepare(&self, x: &[f64], grad: bool, c: &mut PreparedPoint) {
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
    fn cov(&self, _: &PreparedPoint, _: &PreparedPoint, ga: &mut [f64], gb: &mut [f64]) -> f64 {
        ga.fill(0.0);
        gb.fill(0.0);
        0.0
    }
}
