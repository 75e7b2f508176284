//! The Drop-Wave function (seed 001 App. D), maximised:
//! f(z) = (1 + cos(12‖z‖)) / (0.5‖z‖² + 2) on [−5.12, 5.12]², maximum 1 at z = 0.

use crate::synthetic::{Bounds, TestFunction, synthetic_spec};

/// The two-dimensional Drop-Wave function (already in maximisation form).
#[derive(Debug, Clone, Copy, Default)]
pub struct DropWave;

impl TestFunction for DropWave {
    fn name(&self) -> String {
        "dropwave".into()
    }
    fn dim(&self) -> usize {
        2
    }
    fn value(&self, z: &[f64]) -> f64 {
        let r2 = z[0] * z[0] + z[1] * z[1];
        (1.0 + (12.0 * r2.sqrt()).cos()) / (0.5 * r2 + 2.0)
    }
    fn value_grad(&self, z: &[f64], grad: &mut [f64]) -> f64 {
        let r2 = z[0] * z[0] + z[1] * z[1];
        let r = r2.sqrt();
        let num = 1.0 + (12.0 * r).cos();
        let den = 0.5 * r2 + 2.0;
        // ∂cos(12r)/∂z = −12 sin(12r)/r · z; sin(12r)/r → 12 as r → 0, so the function is
        // smooth at the origin and the series limit is used there.
        let sinc = if r < 1e-8 { 12.0 } else { (12.0 * r).sin() / r };
        for i in 0..2 {
            let dnum = -12.0 * sinc * z[i];
            grad[i] = (dnum * den - num * z[i]) / (den * den);
        }
        num / den
    }
    fn maximizer(&self) -> Option<Vec<f64>> {
        Some(vec![0.0, 0.0])
    }
    fn maximum(&self) -> Option<f64> {
        Some(1.0)
    }
    fn cosine_period(&self) -> Option<f64> {
        Some(5.12)
    }
}

const DEFAULT_BOUNDS: Bounds = Bounds::Same([-5.12, 5.12]);

synthetic_spec!(
    DropWaveSpec,
    "dropwave",
    fixed_dim: 2,
    make: |_| Box::new(DropWave),
    bounds: DEFAULT_BOUNDS,
    scale: 1.0,
    summary: "Drop-Wave function (2-D, maximum 1 at the origin) on [-5.12,5.12]^2 by default",
    paper: "seed 001 App. D",
    example: "{ type: dropwave }",
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic::testing::*;

    #[test]
    fn optimum_is_one_at_the_origin_with_zero_gradient() {
        assert_eq!(DropWave.value(&[0.0, 0.0]), 1.0);
        assert!(grad_norm(&DropWave, &[0.0, 0.0]) < 1e-15);
        // Near the origin the gradient must be continuous (no blow-up from 1/r).
        assert!(grad_norm(&DropWave, &[1e-10, -1e-10]) < 1e-7);
        // Hand value: at r = π/12 the numerator is 1 + cos π = 0.
        assert!(DropWave.value(&[std::f64::consts::PI / 12.0, 0.0]).abs() < 1e-15);
    }

    #[test]
    fn gradient_matches_finite_differences() {
        check_gradients(&DropWave, &[-5.12; 2], &[5.12; 2], 100);
    }
}
