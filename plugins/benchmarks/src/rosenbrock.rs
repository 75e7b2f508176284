//! The Rosenbrock function (seed 000 App. C, eq. 76), maximised:
//! f(z) = −Σ_{i<d} [100(z_{i+1} − zᵢ²)² + (zᵢ − 1)²], maximum 0 at z = 1. Seed 000's code
//! divides it by 10⁵ on [−5, 10]^d, the defaults here.

use crate::synthetic::{Bounds, TestFunction, synthetic_spec};

/// The negated Rosenbrock function in `d ≥ 2` dimensions.
#[derive(Debug, Clone, Copy)]
pub struct Rosenbrock {
    /// Number of inputs (≥ 2).
    pub d: usize,
}

impl TestFunction for Rosenbrock {
    fn name(&self) -> String {
        format!("rosenbrock(d={})", self.d)
    }
    fn dim(&self) -> usize {
        self.d
    }
    fn value(&self, z: &[f64]) -> f64 {
        -z.windows(2)
            .map(|w| 100.0 * (w[1] - w[0] * w[0]).powi(2) + (w[0] - 1.0).powi(2))
            .sum::<f64>()
    }
    fn value_grad(&self, z: &[f64], grad: &mut [f64]) -> f64 {
        grad.iter_mut().for_each(|g| *g = 0.0);
        let mut f = 0.0;
        for i in 0..self.d - 1 {
            let q = z[i + 1] - z[i] * z[i];
            f += 100.0 * q * q + (z[i] - 1.0).powi(2);
            grad[i] -= -400.0 * z[i] * q + 2.0 * (z[i] - 1.0);
            grad[i + 1] -= 200.0 * q;
        }
        -f
    }
    fn maximizer(&self) -> Option<Vec<f64>> {
        Some(vec![1.0; self.d])
    }
    fn maximum(&self) -> Option<f64> {
        Some(0.0)
    }
}

const DEFAULT_BOUNDS: Bounds = Bounds::Same([-5.0, 10.0]);
const DEFAULT_SCALE: f64 = 1e-5;

synthetic_spec!(
    RosenbrockSpec,
    "rosenbrock",
    any_dim: 2,
    make: |d| Box::new(Rosenbrock { d }),
    bounds: DEFAULT_BOUNDS,
    scale: DEFAULT_SCALE,
    summary: "Rosenbrock function (maximised, optimum 0 at z = 1); box [-5,10]^d, output divided by 1e5 by default",
    paper: "seed 000 App. C (eq. 76)",
    example: "{ type: rosenbrock, dim: 4 }",
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic::testing::*;
    use cabo_core::ProblemSpec;

    #[test]
    fn optimum_is_zero_at_one_with_zero_gradient() {
        for d in [2, 4, 16] {
            let f = Rosenbrock { d };
            assert_eq!(f.value(&vec![1.0; d]), 0.0);
            assert!(grad_norm(&f, &vec![1.0; d]) < 1e-15);
        }
        // Hand value: f(0, 0) = −1, f(−1, 1) = −4.
        assert_eq!(Rosenbrock { d: 2 }.value(&[0.0, 0.0]), -1.0);
        assert_eq!(Rosenbrock { d: 2 }.value(&[-1.0, 1.0]), -4.0);
    }

    #[test]
    fn gradient_matches_finite_differences() {
        check_gradients(&Rosenbrock { d: 5 }, &[-5.0; 5], &[10.0; 5], 50);
    }

    #[test]
    fn one_dimension_is_rejected() {
        let spec: Box<dyn ProblemSpec> =
            serde_json::from_str(r#"{"type":"rosenbrock","dim":1}"#).unwrap();
        assert!(
            spec.dim()
                .unwrap_err()
                .to_string()
                .contains("rosenbrock.dim")
        );
        assert!(spec.build(0).is_err());
    }
}
