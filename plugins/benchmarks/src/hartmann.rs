//! The Hartmann functions in three and six dimensions (seed 002 App. C, seed 004), in their
//! usual maximisation form f(z) = Σⱼ αⱼ exp(−Σᵢ Aⱼᵢ (zᵢ − Pⱼᵢ)²) on [0, 1]^d, with maxima
//! 3.86278 (d = 3) and 3.32237 (d = 6).

use crate::synthetic::{Bounds, TestFunction, synthetic_spec};

const ALPHA: [f64; 4] = [1.0, 1.2, 3.0, 3.2];
const A3: [[f64; 3]; 4] = [
    [3.0, 10.0, 30.0],
    [0.1, 10.0, 35.0],
    [3.0, 10.0, 30.0],
    [0.1, 10.0, 35.0],
];
const P3: [[f64; 3]; 4] = [
    [0.3689, 0.1170, 0.2673],
    [0.4699, 0.4387, 0.7470],
    [0.1091, 0.8732, 0.5547],
    [0.0381, 0.5743, 0.8828],
];
const A6: [[f64; 6]; 4] = [
    [10.0, 3.0, 17.0, 3.5, 1.7, 8.0],
    [0.05, 10.0, 17.0, 0.1, 8.0, 14.0],
    [3.0, 3.5, 1.7, 10.0, 17.0, 8.0],
    [17.0, 8.0, 0.05, 10.0, 0.1, 14.0],
];
const P6: [[f64; 6]; 4] = [
    [0.1312, 0.1696, 0.5569, 0.0124, 0.8283, 0.5886],
    [0.2329, 0.4135, 0.8307, 0.3736, 0.1004, 0.9991],
    [0.2348, 0.1451, 0.3522, 0.2883, 0.3047, 0.6650],
    [0.4047, 0.8828, 0.8732, 0.5743, 0.1091, 0.0381],
];

fn hartmann<const D: usize>(
    a: &[[f64; D]; 4],
    p: &[[f64; D]; 4],
    z: &[f64],
    grad: Option<&mut [f64]>,
) -> f64 {
    let mut f = 0.0;
    let mut g = [0.0; D];
    for j in 0..4 {
        let e: f64 = (0..D).map(|i| a[j][i] * (z[i] - p[j][i]).powi(2)).sum();
        let t = ALPHA[j] * (-e).exp();
        f += t;
        for i in 0..D {
            g[i] -= t * 2.0 * a[j][i] * (z[i] - p[j][i]);
        }
    }
    if let Some(out) = grad {
        out.copy_from_slice(&g);
    }
    f
}

/// The Hartmann function in three dimensions (maximised).
#[derive(Debug, Clone, Copy, Default)]
pub struct Hartmann3;

impl TestFunction for Hartmann3 {
    fn name(&self) -> String {
        "hartmann3".into()
    }
    fn dim(&self) -> usize {
        3
    }
    fn value(&self, z: &[f64]) -> f64 {
        hartmann(&A3, &P3, z, None)
    }
    fn value_grad(&self, z: &[f64], grad: &mut [f64]) -> f64 {
        hartmann(&A3, &P3, z, Some(grad))
    }
    fn maximizer(&self) -> Option<Vec<f64>> {
        // Newton-refined; the often-quoted (0.114614, …) is 2.5e-5 off in the first coordinate.
        Some(vec![0.114_588_877, 0.555_648_895, 0.852_546_985])
    }
    fn maximum(&self) -> Option<f64> {
        Some(3.862_779_787_332_662)
    }
}

/// The Hartmann function in six dimensions (maximised).
#[derive(Debug, Clone, Copy, Default)]
pub struct Hartmann6;

impl TestFunction for Hartmann6 {
    fn name(&self) -> String {
        "hartmann6".into()
    }
    fn dim(&self) -> usize {
        6
    }
    fn value(&self, z: &[f64]) -> f64 {
        hartmann(&A6, &P6, z, None)
    }
    fn value_grad(&self, z: &[f64], grad: &mut [f64]) -> f64 {
        hartmann(&A6, &P6, z, Some(grad))
    }
    fn maximizer(&self) -> Option<Vec<f64>> {
        Some(vec![
            0.201_689_52,
            0.150_010_69,
            0.476_873_98,
            0.275_332_43,
            0.311_651_62,
            0.657_300_54,
        ])
    }
    fn maximum(&self) -> Option<f64> {
        Some(3.322_368_011_415_515)
    }
}

const UNIT: Bounds = Bounds::Same([0.0, 1.0]);

synthetic_spec!(
    Hartmann3Spec,
    "hartmann3",
    fixed_dim: 3,
    make: |_| Box::new(Hartmann3),
    bounds: UNIT,
    scale: 1.0,
    summary: "Hartmann function in 3-D (maximised, optimum 3.86278) on [0,1]^3",
    paper: "seed 002 App. C; seed 004",
    example: "{ type: hartmann3 }",
);
synthetic_spec!(
    Hartmann6Spec,
    "hartmann6",
    fixed_dim: 6,
    make: |_| Box::new(Hartmann6),
    bounds: UNIT,
    scale: 1.0,
    summary: "Hartmann function in 6-D (maximised, optimum 3.32237) on [0,1]^6",
    paper: "seed 002 App. C; seed 004",
    example: "{ type: hartmann6, dummy_dims: 6 }",
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic::testing::*;
    use cabo_core::ProblemSpec;

    fn check_optimum(f: &dyn TestFunction, published: f64) {
        let z = newton_refine(f, &f.maximizer().unwrap());
        assert!(grad_norm(f, &z) < 1e-9, "{}", f.name());
        assert!(grad_norm(f, &f.maximizer().unwrap()) < 1e-6, "{}", f.name());
        for (a, b) in z.iter().zip(f.maximizer().unwrap()) {
            assert!((a - b).abs() < 1e-6, "{}", f.name());
        }
        assert!(
            (f.value(&z) - f.maximum().unwrap()).abs() < 1e-9,
            "{}",
            f.name()
        );
        assert!(
            (f.maximum().unwrap() - published).abs() < 5e-6,
            "{}",
            f.name()
        );
    }

    #[test]
    fn published_optima_are_reached_with_zero_gradient() {
        // Published values (Surjanovic & Bingham; BoTorch): −3.86278 and −3.32237 minimised.
        check_optimum(&Hartmann3, 3.86278);
        check_optimum(&Hartmann6, 3.32237);
    }

    #[test]
    fn gradients_match_finite_differences() {
        check_gradients(&Hartmann3, &[0.0; 3], &[1.0; 3], 50);
        check_gradients(&Hartmann6, &[0.0; 6], &[1.0; 6], 50);
    }

    #[test]
    fn dummy_dimensions_extend_the_problem() {
        let spec: Box<dyn ProblemSpec> =
            serde_json::from_str(r#"{"type":"hartmann6","dummy_dims":6}"#).unwrap();
        assert_eq!(spec.dim().unwrap(), 12);
        let p = spec.build(3).unwrap();
        assert_eq!(p.info().dim, 12);
        assert!((p.optimum().unwrap() - 3.32237).abs() < 1e-5);
    }
}
