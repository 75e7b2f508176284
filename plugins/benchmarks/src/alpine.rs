//! The Alpine-1 function (seed 001 App. D), maximised: f(z) = −Σ |zᵢ sin zᵢ + 0.1 zᵢ| on
//! [−10, 10]^d (seed 001 uses d = 3), maximum 0 at z = 0.

use crate::synthetic::{Bounds, TestFunction, synthetic_spec};

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

const DEFAULT_BOUNDS: Bounds = Bounds::Same([-10.0, 10.0]);

synthetic_spec!(
    Alpine1Spec,
    "alpine1",
    any_dim: 1,
    make: |d| Box::new(Alpine1 { d }),
    bounds: DEFAULT_BOUNDS,
    scale: 1.0,
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
