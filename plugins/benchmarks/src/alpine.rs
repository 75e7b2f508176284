//! The Alpine-1 function (seed 001 App. D), maximised: f(z) = −Σ |zᵢ sin zᵢ + 0.1 zᵢ| on
//! [−10, 10]^d (seed 001 uses d = 3), maximum 0 at z = 0.

use crate::synthetic::{Bounds, SyntheticOptions, TestFunction, check_dim};
use cabo_core::{Problem, ProblemSpec, Result};
use serde::{Deserialize, Serialize};

/// The negated Alpine-1 function in `d` dimensions.
#[derive(Debug, Clone, Copy)]
pub struct Alpine1 {
    /// Number of inputs.
    pub d: usize,
}

impl TestFunction for Alpine1 {
    fn name(&self) -> String {
        format!("alpine1(d={})", self.d)
    }
    fn dim(&self) -> usize {
        self.d
    }
    fn value(&self, z: &[f64]) -> f64 {
        -z.iter().map(|v| (v * v.sin() + 0.1 * v).abs()).sum::<f64>()
    }
    fn value_grad(&self, z: &[f64], grad: &mut [f64]) -> f64 {
        let mut f = 0.0;
        for (g, v) in grad.iter_mut().zip(z) {
            let inner = v * v.sin() + 0.1 * v;
            f -= inner.abs();
            // |·| has kinks where the inner term vanishes; the subgradient 0 is used there.
            let sign = if inner > 0.0 {
                1.0
            } else if inner < 0.0 {
                -1.0
            } else {
                0.0
            };
            *g = -sign * (v.sin() + v * v.cos() + 0.1);
        }
        f
    }
    fn maximizer(&self) -> Option<Vec<f64>> {
        Some(vec![0.0; self.d])
    }
    fn maximum(&self) -> Option<f64> {
        Some(0.0)
    }
    fn cosine_period(&self) -> Option<f64> {
        Some(10.0)
    }
}

/// Spec of the Alpine-1 problem (`problem: { type: alpine1, dim: 3 }`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Alpine1Spec {
    /// Number of inputs the function uses (≥ 1; seed 001 uses 3).
    pub dim: usize,
    /// Native box; default `[-10, 10]` per coordinate (seed 001).
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

const DEFAULT_BOUNDS: Bounds = Bounds::Same([-10.0, 10.0]);

impl Alpine1Spec {
    fn options(&self) -> SyntheticOptions {
        SyntheticOptions {
            bounds: self.bounds.clone(),
            scale: self.scale,
            dummy_dims: self.dummy_dims,
            noise_std: self.noise_std,
        }
    }
}

#[typetag::serde(name = "alpine1")]
impl ProblemSpec for Alpine1Spec {
    fn dim(&self) -> Result<usize> {
        check_dim("alpine1", self.dim, 1)?;
        self.options()
            .validate("alpine1", self.dim, &DEFAULT_BOUNDS)?;
        Ok(self.dim + self.dummy_dims)
    }
    fn build(&self, _seed: u64) -> Result<Box<dyn Problem>> {
        check_dim("alpine1", self.dim, 1)?;
        let f = Box::new(Alpine1 { d: self.dim });
        Ok(Box::new(self.options().build(
            "alpine1",
            f,
            &DEFAULT_BOUNDS,
            1.0,
        )?))
    }
}

cabo_core::register_plugin!(
    cabo_core::Kind::Problem,
    "alpine1",
    summary: "Alpine-1 function (maximised, optimum 0 at the origin) on [-10,10]^d by default",
    paper: "seed 001 App. D",
    example: "{ type: alpine1, dim: 3 }",
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic::testing::*;

    #[test]
    fn optimum_is_zero_at_the_origin_with_zero_subgradient() {
        let f = Alpine1 { d: 3 };
        assert_eq!(f.value(&[0.0; 3]), 0.0);
        assert_eq!(grad_norm(&f, &[0.0; 3]), 0.0);
        // Hand value: f(π/2, −π/2, 1) = −(π/2 + 0.05π) − (π/2 − 0.05π) − (sin 1 + 0.1).
        let want = -std::f64::consts::PI - (1f64.sin() + 0.1);
        let z = [
            std::f64::consts::FRAC_PI_2,
            -std::f64::consts::FRAC_PI_2,
            1.0,
        ];
        assert!((f.value(&z) - want).abs() < 1e-14);
    }

    #[test]
    fn gradient_matches_finite_differences_away_from_kinks() {
        // Random points almost surely stay a finite-difference step away from the kinks.
        check_gradients(&Alpine1 { d: 3 }, &[-10.0; 3], &[10.0; 3], 100);
    }
}
