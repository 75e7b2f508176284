//! An acquisition averaged over fantasies of the points in flight: the Monte-Carlo
//! integration over their outcomes that `PendingRule::SampledFantasies` asks for (BoTorch's
//! Monte-Carlo acquisitions do it jointly with the q-batch through `X_pending`; here every
//! acquisition is averaged over posteriors conditioned on joint draws of those outcomes).

use cabo_core::{AcquisitionFn, Diagnostics, Objective};

/// The mean of acquisition functions, one per fantasy.
pub struct Averaged<'a> {
    parts: Vec<Box<dyn AcquisitionFn + 'a>>,
}

impl<'a> Averaged<'a> {
    /// The mean of `parts` (at least one).
    pub fn new(parts: Vec<Box<dyn AcquisitionFn + 'a>>) -> Self {
        assert!(!parts.is_empty(), "an average of no acquisition");
        Averaged { parts }
    }
}

impl Objective for Averaged<'_> {
    fn value(&self, x: &[f64]) -> f64 {
        let sum: f64 = self.parts.iter().map(|p| p.value(x)).sum();
        sum / self.parts.len() as f64
    }

    fn value_grad(&self, x: &[f64], grad: &mut [f64]) -> f64 {
        grad.fill(0.0);
        let mut part = vec![0.0; grad.len()];
        let mut sum = 0.0;
        for p in &self.parts {
            sum += p.value_grad(x, &mut part);
            for (g, v) in grad.iter_mut().zip(&part) {
                *g += v;
            }
        }
        let n = self.parts.len() as f64;
        for g in grad.iter_mut() {
            *g /= n;
        }
        sum / n
    }

    /// Each part's batched evaluation (which shares work between the points), summed part
    /// by part in [`Objective::value_grad`]'s order, so every row has its bits.
    fn value_grads(&self, xs: &[f64], values: &mut [f64], grads: &mut [f64]) {
        values.fill(0.0);
        grads.fill(0.0);
        let (mut part_values, mut part_grads) = (vec![0.0; values.len()], vec![0.0; grads.len()]);
        for p in &self.parts {
            p.value_grads(xs, &mut part_values, &mut part_grads);
            for (s, v) in values.iter_mut().zip(&part_values) {
                *s += v;
            }
            for (g, v) in grads.iter_mut().zip(&part_grads) {
                *g += v;
            }
        }
        let n = self.parts.len() as f64;
        for v in values.iter_mut().chain(grads.iter_mut()) {
            *v /= n;
        }
    }

    fn non_negative(&self) -> bool {
        self.parts.iter().all(|p| p.non_negative())
    }
}

impl AcquisitionFn for Averaged<'_> {
    /// The first fantasy's stopping rule at the averaged maximum.
    fn stop_at(&self, max_value: f64) -> Option<String> {
        self.parts[0].stop_at(max_value)
    }

    fn diagnostics(&self) -> Diagnostics {
        let mut d = self.parts[0].diagnostics();
        d.insert("fantasy_samples".to_string(), self.parts.len() as f64);
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Line(f64);
    impl Objective for Line {
        fn value(&self, x: &[f64]) -> f64 {
            self.0 * x[0] + x[1]
        }
        fn value_grad(&self, x: &[f64], g: &mut [f64]) -> f64 {
            g[0] = self.0;
            g[1] = 1.0;
            self.value(x)
        }
    }
    impl AcquisitionFn for Line {}

    #[test]
    fn the_average_and_its_gradient_are_the_parts_means() {
        let avg = Averaged::new(vec![Box::new(Line(1.0)), Box::new(Line(3.0))]);
        let mut g = [9.0, 9.0];
        let v = avg.value_grad(&[0.5, 0.25], &mut g);
        assert_eq!(v, (0.5 + 0.25 + 1.5 + 0.25) / 2.0);
        assert_eq!(v, avg.value(&[0.5, 0.25]));
        assert_eq!(g, [2.0, 1.0]);
    }

    #[test]
    fn batched_rows_have_the_bits_of_single_points() {
        let avg = Averaged::new(vec![
            Box::new(Line(0.1)),
            Box::new(Line(0.7)),
            Box::new(Line(1.3)),
        ]);
        let xs = [0.3, 0.9, 0.11, 0.47, 0.73, 0.05];
        crate::testing::assert_batched_rows_match_single_points(&avg, &xs, 2);
    }
}
