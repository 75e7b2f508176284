//! The Shekel-5 function (seed 001 App. D), maximised:
//! f(z) = Σ_{j=1}^{5} 1 / (‖z − C_j‖² + b_j) on [0, 10]⁴, maximum 10.1532 near z = (4, 4, 4, 4).

use crate::synthetic::{Bounds, SyntheticOptions, TestFunction};
use cabo_core::{Problem, ProblemSpec, Result};
use serde::{Deserialize, Serialize};

/// The centres C_j (one row per term) and offsets b_j of Shekel-5.
const CENTRES: [[f64; 4]; 5] = [
    [4.0, 4.0, 4.0, 4.0],
    [1.0, 1.0, 1.0, 1.0],
    [8.0, 8.0, 8.0, 8.0],
    [6.0, 6.0, 6.0, 6.0],
    [3.0, 7.0, 3.0, 7.0],
];
const OFFSETS: [f64; 5] = [0.1, 0.2, 0.2, 0.4, 0.4];

/// The four-dimensional Shekel function with five terms (negated, i.e. maximised).
#[derive(Debug, Clone, Copy, Default)]
pub struct Shekel5;

impl TestFunction for Shekel5 {
    fn name(&self) -> String {
        "shekel5".into()
    }
    fn dim(&self) -> usize {
        4
    }
    fn value(&self, z: &[f64]) -> f64 {
        CENTRES
            .iter()
            .zip(OFFSETS)
            .map(|(c, b)| 1.0 / (z.iter().zip(c).map(|(z, c)| (z - c).powi(2)).sum::<f64>() + b))
            .sum()
    }
    fn value_grad(&self, z: &[f64], grad: &mut [f64]) -> f64 {
        grad.iter_mut().for_each(|g| *g = 0.0);
        let mut f = 0.0;
        for (c, b) in CENTRES.iter().zip(OFFSETS) {
            let s = z.iter().zip(c).map(|(z, c)| (z - c).powi(2)).sum::<f64>() + b;
            f += 1.0 / s;
            for i in 0..4 {
                grad[i] -= 2.0 * (z[i] - c[i]) / (s * s);
            }
        }
        f
    }
    fn maximizer(&self) -> Option<Vec<f64>> {
        // The other terms pull the maximiser slightly off (4, 4, 4, 4).
        Some(vec![4.000037154, 4.000133276, 4.000037154, 4.000133276])
    }
    fn maximum(&self) -> Option<f64> {
        Some(10.153_199_679_058_23)
    }
    fn cosine_period(&self) -> Option<f64> {
        Some(4.0)
    }
    fn cosine_center(&self) -> Option<Vec<f64>> {
        Some(vec![4.0; 4])
    }
}

/// Spec of the Shekel-5 problem (`problem: { type: shekel5 }`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Shekel5Spec {
    /// Native box; default `[0, 10]` per coordinate (seed 001).
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

const DEFAULT_BOUNDS: Bounds = Bounds::Same([0.0, 10.0]);

impl Shekel5Spec {
    fn options(&self) -> SyntheticOptions {
        SyntheticOptions {
            bounds: self.bounds.clone(),
            scale: self.scale,
            dummy_dims: self.dummy_dims,
            noise_std: self.noise_std,
        }
    }
}

#[typetag::serde(name = "shekel5")]
impl ProblemSpec for Shekel5Spec {
    fn dim(&self) -> Result<usize> {
        self.options().validate("shekel5", 4, &DEFAULT_BOUNDS)?;
        Ok(4 + self.dummy_dims)
    }
    fn build(&self, _seed: u64) -> Result<Box<dyn Problem>> {
        Ok(Box::new(self.options().build(
            "shekel5",
            Box::new(Shekel5),
            &DEFAULT_BOUNDS,
            1.0,
        )?))
    }
}

cabo_core::register_plugin!(
    cabo_core::Kind::Problem,
    "shekel5",
    summary: "Shekel function with 5 terms (4-D, maximised, optimum 10.1532 near (4,4,4,4)) on [0,10]^4",
    paper: "seed 001 App. D",
    example: "{ type: shekel5 }",
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic::testing::*;

    #[test]
    fn newton_from_the_published_optimiser_reaches_the_published_value() {
        let f = Shekel5;
        let z = newton_refine(&f, &f.maximizer().unwrap());
        assert!(grad_norm(&f, &z) < 1e-9);
        // The stored maximiser is the refined one to 1e-6 and its gradient vanishes to 1e-6.
        for (a, b) in z.iter().zip(f.maximizer().unwrap()) {
            assert!((a - b).abs() < 1e-6);
        }
        assert!(grad_norm(&f, &f.maximizer().unwrap()) < 1e-6);
        assert!((f.value(&z) - f.maximum().unwrap()).abs() < 1e-9);
        // Published optimum (e.g. BoTorch, Surjanovic & Bingham): −10.1532 before negation.
        assert!((f.maximum().unwrap() - 10.1532).abs() < 5e-5);
    }

    #[test]
    fn gradient_matches_finite_differences() {
        check_gradients(&Shekel5, &[0.0; 4], &[10.0; 4], 100);
    }
}
