//! The one-shot knowledge gradient's objective.
//!
//! KG's scenario tree has one root `x` and `m` leaves `x'ᵢ`; its value is the average
//! posterior mean at the leaves after one fantasised observation at the root. A model that
//! offers the accelerator [`FantasyMeans`] evaluates it its own faster way (the exact GP in
//! `O(n·d)` per leaf instead of the general tree's two `O(n²)` solves per node); without it
//! the policy evaluates the same value through the general tree over
//! [`Covariance`](cabo_core::capability::Covariance).

use crate::tree::Tree;
use cabo_core::capability::FantasyMeans;
use cabo_core::{Error, Objective, Result};

/// `E[max_x' μ_{D ∪ (x, y)}(x')]` as the sample average over a one-stage tree's fantasies,
/// as a function of the concatenated vector `(x, x'₁, …, x'ₘ)` (the tree's layout), from
/// the model's [`FantasyMeans`].
pub struct KgObjective<'a> {
    f: Box<dyn Objective + 'a>,
    dim: usize,
}

impl<'a> KgObjective<'a> {
    /// The objective of a one-stage `tree` (KG's) from the model's fantasy means `means`.
    /// Fails when the tree has more than one stage.
    pub fn new(tree: &Tree, means: &'a dyn FantasyMeans) -> Result<Self> {
        if tree.steps() != 2 {
            return Err(Error::invalid(format!(
                "knowledge gradient: the tree has {} steps; KG looks one step ahead",
                tree.steps()
            )));
        }
        let leaves = tree.children(0);
        let eps: Vec<f64> = leaves.clone().map(|i| tree.base_sample_y(i)).collect();
        let weights: Vec<f64> = leaves.map(|i| tree.weight(i)).collect();
        Ok(KgObjective {
            f: means.objective(&eps, &weights)?,
            dim: tree.dim(),
        })
    }

    /// Length of the decision vector (`(m + 1)·d`).
    pub fn dim(&self) -> usize {
        self.dim
    }
}

impl Objective for KgObjective<'_> {
    /// The value at `xs` (NaN when `xs` has the wrong length or a non-finite entry).
    fn value(&self, xs: &[f64]) -> f64 {
        self.f.value(xs)
    }

    /// The value at `xs`, writing its gradient into `grad`.
    fn value_grad(&self, xs: &[f64], grad: &mut [f64]) -> f64 {
        self.f.value_grad(xs, grad)
    }

    /// True, as for the general tree it accelerates, so that both choose the same starts.
    fn non_negative(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::belief::UnitCostPath;
    use crate::tree::{BaseSamples, NodeValue, TreeObjective};
    use cabo_core::{Posterior, Rng, TrainingData};
    use cabo_gp::{GpPosterior, Kernel, KernelKind, OutputTransform};

    /// A posterior with a non-trivial output transform and constant mean.
    fn posterior(n: usize, d: usize, noise: f64) -> GpPosterior {
        let mut r = Rng::new(7);
        let x: Vec<f64> = (0..n * d).map(|_| r.uniform()).collect();
        let y: Vec<f64> = x
            .chunks_exact(d)
            .map(|p| (6.0 * p[0]).sin() + p.iter().sum::<f64>())
            .collect();
        let kernel = Kernel::new(KernelKind::Matern52, vec![0.3; d], 1.3).unwrap();
        let transform = OutputTransform::standardize(&y);
        GpPosterior::new(
            kernel,
            noise,
            0.2,
            TrainingData {
                x: &x,
                y: &y,
                dim: d,
            },
            transform,
        )
        .unwrap()
    }

    fn points(len: usize, seed: u64) -> Vec<f64> {
        let mut r = Rng::new(seed);
        (0..len).map(|_| r.uniform()).collect()
    }

    /// The general scenario tree (two solves per node) is the oracle: same value and
    /// gradient to 1e-11 relative, with noise and without (a clamped variance).
    #[test]
    fn value_and_gradient_equal_the_general_tree() {
        for (noise, d, m) in [(1e-4, 3, 16), (0.05, 2, 5), (0.0, 4, 8)] {
            let post = posterior(40, d, noise);
            let tree = Tree::new(d, &[m], BaseSamples::Seeded(3)).unwrap();
            let f = post.covariance().unwrap();
            let unit = UnitCostPath { dim: d };
            let oracle =
                TreeObjective::new(&tree, f, &unit, 0.0, f64::INFINITY, NodeValue::LeafMean)
                    .unwrap();
            let kg = KgObjective::new(&tree, post.fantasy_means().unwrap()).unwrap();
            for seed in 0..5 {
                let mut xs = points(tree.dim(), seed);
                if seed == 4 {
                    // The root on a training point: the variance is (nearly) clamped.
                    xs[..d].copy_from_slice(&post.train_x()[..d]);
                }
                let (mut g_want, mut g_got) = (vec![0.0; xs.len()], vec![0.0; xs.len()]);
                let want = oracle.value_grad(&xs, &mut g_want);
                let got = kg.value_grad(&xs, &mut g_got);
                assert!(
                    (got - want).abs() <= 1e-11 * want.abs().max(1.0),
                    "{got} vs {want}"
                );
                assert_eq!(kg.value(&xs), got, "value with and without gradient");
                let scale = g_want.iter().fold(1.0f64, |a, g| a.max(g.abs()));
                for (k, (a, b)) in g_got.iter().zip(&g_want).enumerate() {
                    assert!(
                        (a - b).abs() <= 1e-10 * scale,
                        "noise {noise}, seed {seed}, ∂{k}: {a} vs {b}"
                    );
                }
            }
        }
    }

    /// Central differences with step 1e-6 agree with the analytic gradient to 1e-6
    /// relative (independently of the tree).
    #[test]
    fn gradient_matches_finite_differences() {
        let d = 3;
        let post = posterior(30, d, 1e-3);
        let tree = Tree::new(d, &[6], BaseSamples::Seeded(11)).unwrap();
        let kg = KgObjective::new(&tree, post.fantasy_means().unwrap()).unwrap();
        let xs = points(tree.dim(), 2);
        let mut g = vec![0.0; xs.len()];
        kg.value_grad(&xs, &mut g);
        let h = 1e-6;
        for k in 0..xs.len() {
            let (mut a, mut b) = (xs.clone(), xs.clone());
            a[k] += h;
            b[k] -= h;
            let fd = (kg.value(&a) - kg.value(&b)) / (2.0 * h);
            assert!(
                (fd - g[k]).abs() <= 1e-6 * g[k].abs().max(1.0),
                "∂{k}: analytic {} vs finite difference {fd}",
                g[k]
            );
        }
    }

    #[test]
    fn a_multi_stage_tree_or_a_wrong_length_is_refused() {
        let post = posterior(10, 2, 1e-4);
        let deep = Tree::new(2, &[2, 2], BaseSamples::Seeded(0)).unwrap();
        assert!(KgObjective::new(&deep, post.fantasy_means().unwrap()).is_err());
        let tree = Tree::new(2, &[3], BaseSamples::Seeded(0)).unwrap();
        let kg = KgObjective::new(&tree, post.fantasy_means().unwrap()).unwrap();
        assert!(kg.value(&[0.5; 3]).is_nan());
    }
}
