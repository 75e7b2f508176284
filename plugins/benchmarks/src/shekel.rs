//! The Shekel-5 function (seed 001 App. D), maximised:
//! f(z) = Σ_{j=1}^{5} 1 / (‖z − C_j‖² + b_j) on [0, 10]⁴, maximum 10.1532 near z = (4, 4, 4, 4).

use crate::synthetic::{Bounds, TestFunction, synthetic_spec};

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

const DEFAULT_BOUNDS: Bounds = Bounds::Same([0.0, 10.0]);

synthetic_spec!(
    Shekel5Spec,
    "shekel5",
    fixed_dim: 4,
    make: |_| Box::new(Shekel5),
    bounds: DEFAULT_BOUNDS,
    scale: 1.0,
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
