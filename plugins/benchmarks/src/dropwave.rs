//! The Drop-Wave function (seed 001 App. D), maximised:
//! f(z) = (1 + cos(12‖z‖)) / (0.5‖z‖² + 2) on [−5.12, 5.12]², maximum 1 at z = 0.

use crate::synthetic::{Bounds, SyntheticOptions, TestFunction};
use cabo_core::{Problem, ProblemSpec, Result};
use serde::{Deserialize, Serialize};

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

/// Spec of the Drop-Wave problem (`problem: { type: dropwave }`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DropWaveSpec {
    /// Native box; default `[-5.12, 5.12]` per coordinate (seed 001).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bounds: Option<Bounds>,
    /// Output multiplier; default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale: Option<f64>,
    /// Ignored inputs appended; default 0.
    #[serde(default)]
    pub dummy_dims: usize,
    /// Gaussian observation-noise standard deviation; default 0.
    #[serde(default)]
    pub noise_std: f64,
}

const DEFAULT_BOUNDS: Bounds = Bounds::Same([-5.12, 5.12]);

impl DropWaveSpec {
    fn options(&self) -> SyntheticOptions {
        SyntheticOptions {
            bounds: self.bounds.clone(),
            scale: self.scale,
            dummy_dims: self.dummy_dims,
            noise_std: self.noise_std,
        }
    }
}

#[typetag::serde(name = "dropwave")]
impl ProblemSpec for DropWaveSpec {
    fn dim(&self) -> Result<usize> {
        self.options().validate("dropwave", 2, &DEFAULT_BOUNDS)?;
        Ok(2 + self.dummy_dims)
    }
    fn build(&self, _seed: u64) -> Result<Box<dyn Problem>> {
        Ok(Box::new(self.options().build(
            "dropwave",
            Box::new(DropWave),
            &DEFAULT_BOUNDS,
            1.0,
        )?))
    }
}

cabo_core::register_plugin!(
    cabo_core::Kind::Problem,
    "dropwave",
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
