//! The Ackley function (seed 000 App. C, eq. 74; seed 001 App. D), maximised:
//! f(z) = 20 exp(−0.2 √(mean z²)) + exp(mean cos 2πz) − 20 − e, with maximum 0 at z = 0.

use crate::synthetic::{Bounds, TestFunction, synthetic_spec};
use std::f64::consts::{E, TAU};

/// The negated Ackley function in `d` dimensions.
#[derive(Debug, Clone, Copy)]
pub struct Ackley {
    /// Number of inputs.
    pub d: usize,
}

impl TestFunction for Ackley {
    fn name(&self) -> String {
        format!("ackley(d={})", self.d)
    }
    fn dim(&self) -> usize {
        self.d
    }
    fn value(&self, z: &[f64]) -> f64 {
        let n = self.d as f64;
        let s = (z.iter().map(|v| v * v).sum::<f64>() / n).sqrt();
        let c = z.iter().map(|v| (TAU * v).cos()).sum::<f64>() / n;
        20.0 * (-0.2 * s).exp() + c.exp() - 20.0 - E
    }
    fn value_grad(&self, z: &[f64], grad: &mut [f64]) -> f64 {
        let n = self.d as f64;
        let s = (z.iter().map(|v| v * v).sum::<f64>() / n).sqrt();
        let c = z.iter().map(|v| (TAU * v).cos()).sum::<f64>() / n;
        let a = (-0.2 * s).exp();
        let b = c.exp();
        for (g, v) in grad.iter_mut().zip(z) {
            // √(mean z²) has a cone at 0: its subgradient 0 is used there, which makes the
            // optimiser a stationary point as optimisers expect.
            let ds = if s > 0.0 { v / (n * s) } else { 0.0 };
            *g = -4.0 * a * ds - b * TAU * (TAU * v).sin() / n;
        }
        20.0 * a + b - 20.0 - E
    }
    fn maximizer(&self) -> Option<Vec<f64>> {
        Some(vec![0.0; self.d])
    }
    fn maximum(&self) -> Option<f64> {
        Some(0.0)
    }
    fn cosine_period(&self) -> Option<f64> {
        Some(1.0)
    }
}

const DEFAULT_BOUNDS: Bounds = Bounds::Same([-1.0, 1.0]);

synthetic_spec!(
    AckleySpec,
    "ackley",
    any_dim: 1,
    make: |d| Box::new(Ackley { d }),
    bounds: DEFAULT_BOUNDS,
    scale: 1.0,
    summary: "Ackley function (maximised, optimum 0 at the centre); box [-1,1]^d by default",
    paper: "seed 000 App. C (eq. 74); seed 001 App. D",
    example: "{ type: ackley, dim: 4 }",
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic::testing::*;
    use cabo_core::ProblemSpec;
    use cabo_core::Query;

    #[test]
    fn optimum_is_zero_at_the_origin_with_zero_gradient() {
        for d in [1, 3, 16] {
            let f = Ackley { d };
            let z = vec![0.0; d];
            assert!(f.value(&z).abs() < 1e-12);
            assert!(grad_norm(&f, &z) < 1e-12);
            // Published value elsewhere: Ackley(1,…,1) = 20 − 20 e^{−0.2} ≈ 3.6254 (minimised).
            let one = vec![1.0; d];
            assert!((f.value(&one) + 20.0 - 20.0 * (-0.2f64).exp()).abs() < 1e-12);
        }
    }

    #[test]
    fn gradient_matches_finite_differences() {
        check_gradients(&Ackley { d: 5 }, &[-1.0; 5], &[1.0; 5], 50);
    }

    #[test]
    fn problem_maps_the_cube_and_knows_its_optimum() {
        let spec: Box<dyn ProblemSpec> =
            serde_json::from_str(r#"{"type":"ackley","dim":3,"dummy_dims":2}"#).unwrap();
        assert_eq!(spec.dim().unwrap(), 5);
        let p = spec.build(0).unwrap();
        assert_eq!(p.optimum(), Some(0.0));
        let out = p.evaluate(&Query::at(vec![0.5; 5]), 1).unwrap();
        assert!(out.y.abs() < 1e-12 && out.value == Some(out.y) && out.cost == 1.0);
        // Dummy inputs are ignored.
        let moved = p
            .evaluate(&Query::at(vec![0.5, 0.5, 0.5, 0.1, 0.9]), 1)
            .unwrap();
        assert_eq!(moved.y, out.y);
        assert_eq!(
            p.to_native(&[0.0, 1.0, 0.5, 0.0, 1.0]),
            vec![-1.0, 1.0, 0.0, -1.0, 1.0]
        );
    }

    #[test]
    fn bad_parameters_and_queries_are_rejected_with_the_key() {
        let bad = |json: &str| {
            let s: Box<dyn ProblemSpec> = serde_json::from_str(json).unwrap();
            s.dim().unwrap_err().to_string()
        };
        assert!(bad(r#"{"type":"ackley","dim":0}"#).contains("ackley.dim"));
        assert!(bad(r#"{"type":"ackley","dim":2,"bounds":[1,-1]}"#).contains("ackley.bounds"));
        assert!(bad(r#"{"type":"ackley","dim":2,"scale":-1}"#).contains("ackley.scale"));
        assert!(bad(r#"{"type":"ackley","dim":2,"noise_std":-1}"#).contains("noise_std"));
        assert!(
            serde_json::from_str::<Box<dyn ProblemSpec>>(r#"{"type":"ackley","dim":2,"dimm":3}"#)
                .is_err()
        );
        let p = AckleySpec {
            dim: 2,
            bounds: None,
            scale: None,
            dummy_dims: 0,
            noise_std: 0.0,
            names: Vec::new(),
        }
        .build(0)
        .unwrap();
        assert!(p.evaluate(&Query::at(vec![0.5]), 0).is_err());
        assert!(p.evaluate(&Query::at(vec![0.5, 1.5]), 0).is_err());
        assert!(p.evaluate(&Query::at(vec![0.5, f64::NAN]), 0).is_err());
    }

    #[test]
    fn noise_is_seeded_and_has_the_requested_spread() {
        let p = AckleySpec {
            dim: 2,
            bounds: None,
            scale: None,
            dummy_dims: 0,
            noise_std: 0.5,
            names: Vec::new(),
        }
        .build(0)
        .unwrap();
        let q = Query::at(vec![0.3, 0.7]);
        assert_eq!(p.evaluate(&q, 9).unwrap(), p.evaluate(&q, 9).unwrap());
        let n = 4000;
        let devs: Vec<f64> = (0..n)
            .map(|s| {
                let o = p.evaluate(&q, s).unwrap();
                o.y - o.value.unwrap()
            })
            .collect();
        let var = devs.iter().map(|d| d * d).sum::<f64>() / n as f64;
        // Var of the sample variance of N(0, 0.25) with n draws: 2·0.25²/n → sd ≈ 0.0056.
        assert!((var - 0.25).abs() < 4.0 * 0.0056, "variance {var}");
    }
}
