//! The Branin function, maximised: f(z) = −[(z₂ − b z₁² + c z₁ − 6)² + 10(1 − t) cos z₁ + 10]
//! with b = 5.1/(4π²), c = 5/π, t = 1/(8π), on [−5, 10] × [0, 15]; maximum −5/(4π) ≈
//! −0.397887 at (−π, 12.275), (π, 2.275) and (9.42478, 2.475).

use crate::synthetic::{Bounds, TestFunction, synthetic_spec};
use std::f64::consts::PI;

/// The negated two-dimensional Branin–Hoo function.
#[derive(Debug, Clone, Copy, Default)]
pub struct Branin;

const B: f64 = 5.1 / (4.0 * PI * PI);
const C: f64 = 5.0 / PI;
const T: f64 = 1.0 / (8.0 * PI);

impl TestFunction for Branin {
    fn name(&self) -> String {
        "branin".into()
    }
    fn dim(&self) -> usize {
        2
    }
    fn value(&self, z: &[f64]) -> f64 {
        let q = z[1] - B * z[0] * z[0] + C * z[0] - 6.0;
        -(q * q + 10.0 * (1.0 - T) * z[0].cos() + 10.0)
    }
    fn value_grad(&self, z: &[f64], grad: &mut [f64]) -> f64 {
        let q = z[1] - B * z[0] * z[0] + C * z[0] - 6.0;
        grad[0] = -(2.0 * q * (C - 2.0 * B * z[0]) - 10.0 * (1.0 - T) * z[0].sin());
        grad[1] = -2.0 * q;
        -(q * q + 10.0 * (1.0 - T) * z[0].cos() + 10.0)
    }
    fn maximizer(&self) -> Option<Vec<f64>> {
        Some(vec![PI, 2.275])
    }
    fn maximum(&self) -> Option<f64> {
        // At z₁ = π the square vanishes and cos π = −1, leaving −10 t = −5/(4π).
        Some(-5.0 / (4.0 * PI))
    }
}

fn default_bounds() -> Bounds {
    Bounds::PerDim(vec![[-5.0, 10.0], [0.0, 15.0]])
}

synthetic_spec!(
    BraninSpec,
    "branin",
    fixed_dim: 2,
    make: |_| Box::new(Branin),
    bounds: default_bounds(),
    scale: 1.0,
    summary: "Branin-Hoo function (2-D, maximised, optimum -0.397887) on [-5,10]x[0,15] by default",
    paper: "standard (Dixon & Szegő 1978)",
    example: "{ type: branin }",
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic::testing::*;
    use cabo_core::ProblemSpec;
    use cabo_core::Query;

    #[test]
    fn all_three_published_optimisers_reach_the_published_value() {
        let f = Branin;
        for z in [[-PI, 12.275], [PI, 2.275], [3.0 * PI, 2.475]] {
            assert!((f.value(&z) + 0.397887).abs() < 1e-6, "{z:?}");
            assert!((f.value(&z) - f.maximum().unwrap()).abs() < 1e-12);
            assert!(grad_norm(&f, &z) < 1e-12, "{z:?}");
        }
    }

    #[test]
    fn gradient_matches_finite_differences() {
        check_gradients(&Branin, &[-5.0, 0.0], &[10.0, 15.0], 50);
    }

    #[test]
    fn problem_maps_the_default_box() {
        let spec: Box<dyn ProblemSpec> = serde_json::from_str(r#"{"type":"branin"}"#).unwrap();
        assert_eq!(spec.dim().unwrap(), 2);
        let p = spec.build(0).unwrap();
        assert_eq!(p.to_native(&[0.0, 1.0]), vec![-5.0, 15.0]);
        let x = [(PI + 5.0) / 15.0, 2.275 / 15.0];
        let out = p.evaluate(&Query::at(x.to_vec()), 0).unwrap();
        assert!((out.y - p.optimum().unwrap()).abs() < 1e-12);
        // A box that excludes every optimiser has no known optimum.
        let s: Box<dyn ProblemSpec> =
            serde_json::from_str(r#"{"type":"branin","bounds":[[0,1],[0,1]]}"#).unwrap();
        assert_eq!(s.build(0).unwrap().optimum(), None);
        let s: Box<dyn ProblemSpec> =
            serde_json::from_str(r#"{"type":"branin","bounds":[[0,1]]}"#).unwrap();
        assert!(s.dim().unwrap_err().to_string().contains("branin.bounds"));
    }
}
