//! The Levy function (seed 000 App. C, eq. 75), maximised: with wᵢ = 1 + (zᵢ − 1)/4,
//! f(z) = −[sin²(πw₁) + Σ_{i<d} (wᵢ − 1)²(1 + 10 sin²(πwᵢ + 1)) + (w_d − 1)²(1 + sin²(2πw_d))],
//! maximum 0 at z = 1. Seed 000's code divides it by 100 on [−10, 10]^d, the defaults here.

use crate::synthetic::{Bounds, TestFunction, synthetic_spec};
use std::f64::consts::PI;

/// The negated Levy function in `d` dimensions.
#[derive(Debug, Clone, Copy)]
pub struct Levy {
    /// Number of inputs.
    pub d: usize,
}

impl Levy {
    fn eval(&self, z: &[f64], grad: Option<&mut [f64]>) -> f64 {
        let d = self.d;
        let w = |i: usize| 1.0 + (z[i] - 1.0) / 4.0;
        // Accumulate F and ∂F/∂w, then negate and apply dw/dz = 1/4.
        let w1 = w(0);
        let mut f = (PI * w1).sin().powi(2);
        let mut dw = vec![0.0; d];
        dw[0] += PI * (2.0 * PI * w1).sin();
        for (i, dwi) in dw.iter_mut().enumerate().take(d - 1) {
            let wi = w(i);
            let s = (PI * wi + 1.0).sin();
            let h = 1.0 + 10.0 * s * s;
            f += (wi - 1.0).powi(2) * h;
            *dwi += 2.0 * (wi - 1.0) * h
                + (wi - 1.0).powi(2) * 10.0 * PI * (2.0 * (PI * wi + 1.0)).sin();
        }
        let wd = w(d - 1);
        let s = (2.0 * PI * wd).sin();
        let h = 1.0 + s * s;
        f += (wd - 1.0).powi(2) * h;
        dw[d - 1] += 2.0 * (wd - 1.0) * h + (wd - 1.0).powi(2) * 2.0 * PI * (4.0 * PI * wd).sin();
        if let Some(g) = grad {
            for (g, v) in g.iter_mut().zip(&dw) {
                *g = -v / 4.0;
            }
        }
        -f
    }
}

impl TestFunction for Levy {
    fn name(&self) -> String {
        format!("levy(d={})", self.d)
    }
    fn dim(&self) -> usize {
        self.d
    }
    fn value(&self, z: &[f64]) -> f64 {
        self.eval(z, None)
    }
    fn value_grad(&self, z: &[f64], grad: &mut [f64]) -> f64 {
        self.eval(z, Some(grad))
    }
    fn maximizer(&self) -> Option<Vec<f64>> {
        Some(vec![1.0; self.d])
    }
    fn maximum(&self) -> Option<f64> {
        Some(0.0)
    }
}

const DEFAULT_BOUNDS: Bounds = Bounds::Same([-10.0, 10.0]);
const DEFAULT_SCALE: f64 = 0.01;

synthetic_spec!(
    LevySpec,
    "levy",
    any_dim: 1,
    make: |d| Box::new(Levy { d }),
    bounds: DEFAULT_BOUNDS,
    scale: DEFAULT_SCALE,
    summary: "Levy function (maximised, optimum 0 at z = 1); box [-10,10]^d, output divided by 100 by default",
    paper: "seed 000 App. C (eq. 75)",
    example: "{ type: levy, dim: 4 }",
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic::testing::*;
    use cabo_core::ProblemSpec;

    #[test]
    fn optimum_is_zero_at_one_with_zero_gradient() {
        for d in [1, 2, 6, 16] {
            let f = Levy { d };
            let z = vec![1.0; d];
            assert!(f.value(&z).abs() < 1e-15);
            assert!(grad_norm(&f, &z) < 1e-12);
        }
        // An independent hand value: at z = 0 (w = 3/4) in d = 2,
        // F = sin²(3π/4) + (1/16)(1 + 10 sin²(3π/4 + 1)) + (1/16)(1 + sin²(3π/2)).
        let w = 0.75f64;
        let want = (PI * w).sin().powi(2)
            + 0.0625 * (1.0 + 10.0 * (PI * w + 1.0).sin().powi(2))
            + 0.0625 * (1.0 + (2.0 * PI * w).sin().powi(2));
        assert!((Levy { d: 2 }.value(&[0.0, 0.0]) + want).abs() < 1e-14);
    }

    #[test]
    fn gradient_matches_finite_differences() {
        check_gradients(&Levy { d: 4 }, &[-10.0; 4], &[10.0; 4], 50);
        check_gradients(&Levy { d: 1 }, &[-10.0], &[10.0], 20);
    }

    #[test]
    fn default_scale_divides_by_100() {
        let spec: Box<dyn ProblemSpec> =
            serde_json::from_str(r#"{"type":"levy","dim":2}"#).unwrap();
        let p = spec.build(0).unwrap();
        let out = p
            .evaluate(&cabo_core::Query::at(vec![0.5, 0.5]), 0)
            .unwrap();
        assert!((out.y - Levy { d: 2 }.value(&[0.0, 0.0]) / 100.0).abs() < 1e-15);
        assert_eq!(p.optimum(), Some(0.0));
    }
}
