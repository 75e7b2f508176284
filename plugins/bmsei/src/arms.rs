//! Independent normal arms with known costs as scenario-tree beliefs: the finite instances of
//! seed 001's Theorem 1, on which the tree is solved exactly by backward induction
//! ([`TreeObjective::solve_finite`](crate::TreeObjective::solve_finite)).
//!
//! Arm `a` of `k` sits at `x = a/(k − 1)` in `[0, 1]`; a query means its nearest arm. Values
//! are independent across arms and observed without noise.

use cabo_core::capability::{Covariance, PreparedPoint};

/// The arm of `k` that the query `x` means.
fn nearest_arm(x: &[f64], k: usize) -> usize {
    ((x[0] * (k - 1) as f64).round().max(0.0) as usize).min(k - 1)
}

/// Independent normal arms: arm `a` is `N(mean[a], sd[a]²)`.
#[derive(Debug, Clone)]
pub struct IndependentArms {
    mean: Vec<f64>,
    sd: Vec<f64>,
}

impl IndependentArms {
    /// Arms with the given means and standard deviations (equal lengths, at least two).
    pub fn new(mean: Vec<f64>, sd: Vec<f64>) -> Self {
        assert!(
            mean.len() == sd.len() && mean.len() >= 2,
            "arms need matching means and standard deviations, at least two"
        );
        IndependentArms { mean, sd }
    }

    /// The number of arms.
    pub fn len(&self) -> usize {
        self.mean.len()
    }

    /// Always false: there are at least two arms.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The arm a query means.
    pub fn arm(&self, x: &[f64]) -> usize {
        nearest_arm(x, self.mean.len())
    }

    /// The query that means arm `a`.
    pub fn point(&self, a: usize) -> Vec<f64> {
        vec![a as f64 / (self.mean.len() - 1) as f64]
    }

    /// One query per arm, the candidates of an exact tree solve.
    pub fn points(&self) -> Vec<Vec<f64>> {
        (0..self.len()).map(|a| self.point(a)).collect()
    }
}

impl Covariance for IndependentArms {
    fn dim(&self) -> usize {
        1
    }
    fn fantasy_noise(&self) -> f64 {
        0.0
    }
    fn prepare(&self, x: &[f64], _grad: bool, c: &mut PreparedPoint) {
        let a = self.arm(x);
        c.mean = self.mean[a];
        c.var = self.sd[a] * self.sd[a];
        c.x = x.to_vec();
        c.v = vec![a as f64];
    }
    fn cov(&self, a: &PreparedPoint, b: &PreparedPoint, _: &mut [f64], _: &mut [f64]) -> f64 {
        // Distinct tree points on the same arm are the same random value.
        if a.v[0] == b.v[0] { a.var } else { 0.0 }
    }
}

/// Known arm costs as a belief over `ln c` with zero variance.
#[derive(Debug, Clone)]
pub struct KnownArmCosts {
    ln_cost: Vec<f64>,
}

impl KnownArmCosts {
    /// Costs per arm (positive), in the arms' order.
    pub fn new(cost: &[f64]) -> Self {
        assert!(
            cost.len() >= 2 && cost.iter().all(|c| *c > 0.0),
            "arm costs must be positive, at least two"
        );
        KnownArmCosts {
            ln_cost: cost.iter().map(|c| c.ln()).collect(),
        }
    }
}

impl Covariance for KnownArmCosts {
    fn dim(&self) -> usize {
        1
    }
    fn fantasy_noise(&self) -> f64 {
        0.0
    }
    fn prepare(&self, x: &[f64], _grad: bool, c: &mut PreparedPoint) {
        c.mean = self.ln_cost[nearest_arm(x, self.ln_cost.len())];
        c.var = 0.0;
        c.x = x.to_vec();
    }
    fn cov(&self, _: &PreparedPoint, _: &PreparedPoint, _: &mut [f64], _: &mut [f64]) -> f64 {
        0.0
    }
}
