//! Local penalisation (González, Dai, Hennig & Lawrence 2016, "Batch Bayesian optimization
//! via local penalization", AISTATS): an acquisition decided with points in flight, without
//! fantasising their outcomes.
//!
//! With f L-Lipschitz and M the best value observed, a point x_j whose value is f(x_j) rules
//! out the optimum from the ball of radius (M − f(x_j))/L around it. With f(x_j) ~ N(μ_j, σ_j²)
//! under the posterior, the probability that x lies outside that ball is
//!
//! φ_j(x) = Φ((L‖x − x_j‖ − M + μ_j) / σ_j),
//!
//! and the penalised acquisition is g(α(x)) · Π_j φ_j(x) over the pending points x_j, with
//! g the identity for a non-negative acquisition (EI and its kin) and the softplus
//! ln(1 + eᶻ) otherwise, so that the product ranks points as α does away from the pending
//! ones (the paper's transformation for acquisitions of any sign).
//!
//! **L** is the largest posterior-mean gradient norm found among the observations and 512
//! scrambled Sobol' points of the decision's seed (the paper maximises it; GPyOpt takes the
//! best of 500 random points and polishes it with L-BFGS-B), and 10 where that is below
//! 1e-7, as in GPyOpt. cabo's problems are maximised, so M is the largest value observed
//! (GPyOpt's minimisation takes the smallest).

use crate::sobol;
use cabo_core::normal::{cdf, pdf};
use cabo_core::{AcquisitionFn, Diagnostics, Objective, Posterior, Result};

/// Sobol' points the Lipschitz constant is estimated at.
const LIPSCHITZ_POINTS: usize = 512;

/// The Lipschitz constant used when the posterior mean is flat (GPyOpt's).
const FLAT_LIPSCHITZ: f64 = 10.0;

/// A pending point, with the posterior's mean and standard deviation there.
#[derive(Debug, Clone)]
struct Centre {
    x: Vec<f64>,
    mean: f64,
    sd: f64,
}

/// An acquisition penalised around the points in flight.
pub struct LocalPenalty<'a> {
    acq: &'a dyn AcquisitionFn,
    centres: Vec<Centre>,
    lipschitz: f64,
    best: f64,
    softplus: bool,
}

impl<'a> LocalPenalty<'a> {
    /// `acq` penalised around `pending` under `posterior`, with M = `best`, the largest value
    /// observed, and L estimated from the posterior mean at `observed` (row-major points)
    /// and Sobol' points of `seed`.
    pub fn new(
        acq: &'a dyn AcquisitionFn,
        posterior: &dyn Posterior,
        pending: &[Vec<f64>],
        observed: &[f64],
        best: f64,
        seed: u64,
    ) -> Result<Self> {
        let centres = pending
            .iter()
            .map(|x| {
                let mv = posterior.mean_var(x);
                Centre {
                    x: x.clone(),
                    mean: mv.mean,
                    sd: mv.var.max(0.0).sqrt(),
                }
            })
            .collect();
        Ok(LocalPenalty {
            acq,
            centres,
            lipschitz: lipschitz(posterior, observed, seed)?,
            best,
            softplus: !acq.non_negative(),
        })
    }

    /// The Lipschitz constant in use.
    pub fn lipschitz(&self) -> f64 {
        self.lipschitz
    }

    /// φ_j(x) and its slope: ∇φ_j(x) = slope · (x − x_j) (0 at x_j, or with σ_j = 0).
    fn penalty(&self, c: &Centre, x: &[f64]) -> (f64, f64) {
        let dist = x
            .iter()
            .zip(&c.x)
            .map(|(a, b)| (a - b) * (a - b))
            .sum::<f64>()
            .sqrt();
        let u = (self.lipschitz * dist - self.best + c.mean) / c.sd;
        let slope = if dist > 0.0 && c.sd > 0.0 {
            pdf(u) * self.lipschitz / (c.sd * dist)
        } else {
            0.0
        };
        (cdf(u), slope)
    }

    /// g(α) and g'(α).
    fn transformed(&self, alpha: f64) -> (f64, f64) {
        if !self.softplus {
            return (alpha, 1.0);
        }
        let value = if alpha > 30.0 {
            alpha
        } else {
            alpha.exp().ln_1p()
        };
        (value, 1.0 / (1.0 + (-alpha).exp()))
    }
}

impl Objective for LocalPenalty<'_> {
    fn value(&self, x: &[f64]) -> f64 {
        let (g, _) = self.transformed(self.acq.value(x));
        self.centres.iter().fold(g, |v, c| v * self.penalty(c, x).0)
    }

    fn value_grad(&self, x: &[f64], grad: &mut [f64]) -> f64 {
        let alpha = self.acq.value_grad(x, grad);
        self.penalised(x, alpha, grad)
    }

    /// The acquisition's batched evaluation (which shares work between the points), each
    /// row then penalised as [`Objective::value_grad`] penalises it.
    fn value_grads(&self, xs: &[f64], values: &mut [f64], grads: &mut [f64]) {
        self.acq.value_grads(xs, values, grads);
        let d = (xs.len() / values.len().max(1)).max(1);
        for ((v, x), g) in (values.iter_mut())
            .zip(xs.chunks_exact(d))
            .zip(grads.chunks_exact_mut(d))
        {
            *v = self.penalised(x, *v, g);
        }
    }

    fn non_negative(&self) -> bool {
        self.acq.non_negative()
    }
}

impl LocalPenalty<'_> {
    /// The penalised value at `x` given the acquisition's value `alpha` there, turning
    /// `grad` from ∇α into the penalised value's gradient.
    fn penalised(&self, x: &[f64], alpha: f64, grad: &mut [f64]) -> f64 {
        let (g, dg) = self.transformed(alpha);
        // Each penalty once: its value and its slope.
        let penalties: Vec<(f64, f64)> = self.centres.iter().map(|c| self.penalty(c, x)).collect();
        let product: f64 = penalties.iter().map(|p| p.0).product();
        // ∇(g·Πφ) = g'·∇α·Πφ + g·Σ_j ∇φ_j·Π_{i≠j} φ_i.
        for v in grad.iter_mut() {
            *v *= dg * product;
        }
        for (j, (c, &(_, slope))) in self.centres.iter().zip(&penalties).enumerate() {
            let others: f64 = (penalties.iter().enumerate())
                .filter(|(i, _)| *i != j)
                .map(|(_, p)| p.0)
                .product();
            let scaled = slope * (g * others);
            for ((d, a), b) in grad.iter_mut().zip(x).zip(&c.x) {
                *d += scaled * (a - b);
            }
        }
        g * product
    }
}

impl AcquisitionFn for LocalPenalty<'_> {
    fn stop_at(&self, max_value: f64) -> Option<String> {
        self.acq.stop_at(max_value)
    }

    fn diagnostics(&self) -> Diagnostics {
        let mut d = self.acq.diagnostics();
        d.insert("lp.lipschitz".to_string(), self.lipschitz);
        d.insert("lp.pending".to_string(), self.centres.len() as f64);
        d
    }
}

/// The largest posterior-mean gradient norm at the observed points (row-major) and at
/// Sobol' points of `seed`, or [`FLAT_LIPSCHITZ`] where it is below 1e-7.
fn lipschitz(posterior: &dyn Posterior, observed: &[f64], seed: u64) -> Result<f64> {
    let d = posterior.dim();
    let mut points = sobol::points(LIPSCHITZ_POINTS, d, seed);
    points.extend_from_slice(observed);
    let mut largest = 0.0f64;
    for r in posterior.mean_var_grads(&points) {
        let r = r?;
        let norm = r.dmean.iter().map(|g| g * g).sum::<f64>().sqrt();
        if norm.is_finite() {
            largest = largest.max(norm);
        }
    }
    Ok(if largest < 1e-7 {
        FLAT_LIPSCHITZ
    } else {
        largest
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cabo_core::{MeanVar, MeanVarGrad};

    /// A posterior with mean m(x) = 2·x₀ − x₁ (gradient norm √5) and variance 0.04.
    struct Plane;

    impl Posterior for Plane {
        fn dim(&self) -> usize {
            2
        }
        fn mean_var(&self, x: &[f64]) -> MeanVar {
            MeanVar {
                mean: 2.0 * x[0] - x[1],
                var: 0.04,
            }
        }
        fn mean_var_grad(&self, x: &[f64]) -> Result<MeanVarGrad> {
            Ok(MeanVarGrad {
                mean: 2.0 * x[0] - x[1],
                var: 0.04,
                dmean: vec![2.0, -1.0],
                dvar: vec![0.0, 0.0],
            })
        }
        fn noise_variance(&self) -> f64 {
            1e-6
        }
    }

    /// α(x) = sin(3x₀) + x₁², of either sign.
    struct Wave;

    impl Objective for Wave {
        fn value(&self, x: &[f64]) -> f64 {
            (3.0 * x[0]).sin() + x[1] * x[1]
        }
        fn value_grad(&self, x: &[f64], g: &mut [f64]) -> f64 {
            g[0] = 3.0 * (3.0 * x[0]).cos();
            g[1] = 2.0 * x[1];
            self.value(x)
        }
    }
    impl AcquisitionFn for Wave {}

    fn penalised(acq: &Wave) -> LocalPenalty<'_> {
        let pending = [vec![0.3, 0.6], vec![0.8, 0.2]];
        LocalPenalty::new(acq, &Plane, &pending, &[0.1, 0.1], 1.0, 7).unwrap()
    }

    #[test]
    fn the_penalty_is_the_closed_form_and_the_lipschitz_constant_the_gradient_norm() {
        let acq = Wave;
        let lp = penalised(&acq);
        assert!((lp.lipschitz() - 5f64.sqrt()).abs() < 1e-12);
        let x = [0.5, 0.5];
        let softplus = |z: f64| z.exp().ln_1p();
        let phi = |c: [f64; 2]| {
            let dist = ((x[0] - c[0]).powi(2) + (x[1] - c[1]).powi(2)).sqrt();
            let mean = 2.0 * c[0] - c[1];
            cdf((5f64.sqrt() * dist - 1.0 + mean) / 0.2)
        };
        let expected = softplus(acq.value(&x)) * phi([0.3, 0.6]) * phi([0.8, 0.2]);
        assert!((lp.value(&x) - expected).abs() < 1e-14 * expected.abs());
        // At a pending point the penalty is Φ((μ_j − M)/σ_j): small where μ_j is below M.
        let at = lp.value(&[0.3, 0.6]);
        let alone = softplus(acq.value(&[0.3, 0.6])) * phi_at([0.3, 0.6], [0.8, 0.2]);
        assert!((at / alone - cdf((0.0 - 1.0) / 0.2)).abs() < 1e-12);
    }

    /// φ for the [`Plane`] posterior at `x` around the pending point `c`.
    fn phi_at(x: [f64; 2], c: [f64; 2]) -> f64 {
        let dist = ((x[0] - c[0]).powi(2) + (x[1] - c[1]).powi(2)).sqrt();
        cdf((5f64.sqrt() * dist - 1.0 + 2.0 * c[0] - c[1]) / 0.2)
    }

    #[test]
    fn gradients_agree_with_central_differences() {
        let acq = Wave;
        let lp = penalised(&acq);
        for x in [[0.5, 0.5], [0.1, 0.9], [0.7, 0.25], [0.31, 0.58]] {
            let mut grad = [0.0; 2];
            let v = lp.value_grad(&x, &mut grad);
            assert_eq!(v, lp.value(&x));
            for k in 0..2 {
                let h = 1e-6;
                let (mut up, mut down) = (x, x);
                up[k] += h;
                down[k] -= h;
                let fd = (lp.value(&up) - lp.value(&down)) / (2.0 * h);
                assert!(
                    (grad[k] - fd).abs() <= 1e-6 * (1.0 + fd.abs()),
                    "x = {x:?}, k = {k}: {} vs {fd}",
                    grad[k]
                );
            }
        }
    }

    #[test]
    fn batched_rows_have_the_bits_of_single_points() {
        let acq = Wave;
        let xs = [0.5, 0.5, 0.1, 0.9, 0.3, 0.6, 0.31, 0.58];
        crate::testing::assert_batched_rows_match_single_points(&penalised(&acq), &xs, 2);
    }
}
