//! Shared plumbing of problems over finitely many arms: arm `i` of `n` sits at the unit
//! point `i/(n−1)` (one input), and a query must hit an arm.

use cabo_core::{CostFunction, Error, Outcome, Query, Result};

/// The unit-interval location of each of `n` arms.
pub fn arm_points(n: usize) -> Vec<Vec<f64>> {
    (0..n).map(|i| vec![arm_x(i, n)]).collect()
}

/// Location of arm `i` of `n`.
pub fn arm_x(i: usize, n: usize) -> f64 {
    if n <= 1 {
        0.0
    } else {
        i as f64 / (n - 1) as f64
    }
}

/// The arm nearest to `x` (clamped to the range).
pub fn nearest_arm(x: f64, n: usize) -> usize {
    if n <= 1 {
        return 0;
    }
    ((x * (n - 1) as f64).round().max(0.0) as usize).min(n - 1)
}

/// The arm a query asks for, or an error when it is not one of the candidates.
pub fn query_arm(name: &str, query: &Query, n: usize) -> Result<usize> {
    if query.control_set.is_some() || query.x.len() != 1 || !query.x[0].is_finite() {
        return Err(Error::invalid(format!(
            "{name}: queries are one of the {n} arm points [i/(n−1)], got {:?}",
            query.x
        )));
    }
    let i = nearest_arm(query.x[0], n);
    if (query.x[0] - arm_x(i, n)).abs() > 1e-9 {
        return Err(Error::invalid(format!(
            "{name}: {} is not an arm point (arms are at i/{}), the domain is finite",
            query.x[0],
            n.saturating_sub(1).max(1)
        )));
    }
    Ok(i)
}

/// Evaluates the arm a query asks for: its fixed value (noise-free, so `value` = `y`) at its
/// known cost. Shared by every finite-arm problem.
pub fn evaluate_arm(
    name: &str,
    query: &Query,
    values: &[f64],
    costs: &ArmCosts,
) -> Result<Outcome> {
    let i = query_arm(name, query, values.len())?;
    Ok(Outcome::new(
        values[i],
        costs.costs[i],
        query.x.clone(),
        Some(values[i]),
    ))
}

/// Known per-arm costs as a cost function (the nearest arm's cost; gradient 0).
#[derive(Debug, Clone)]
pub struct ArmCosts {
    /// Cost of each arm.
    pub costs: Vec<f64>,
}

impl CostFunction for ArmCosts {
    fn cost(&self, x: &[f64]) -> f64 {
        self.costs[nearest_arm(x[0], self.costs.len())]
    }
    fn cost_grad(&self, x: &[f64], grad: &mut [f64]) -> f64 {
        grad.iter_mut().for_each(|g| *g = 0.0);
        self.cost(x)
    }
}
