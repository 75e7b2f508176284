//! # cabo-template-problem
//!
//! A cabo problem plugin: `problem: { type: template_problem, dim: 2 }`.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

use cabo_core::{Error, Outcome, Problem, ProblemInfo, ProblemSpec, Query, Result, Rng};
use serde::{Deserialize, Serialize};

cabo_core::plugin_group!();

/// Spec of [`TemplateProblem`]: `problem: { type: template_problem, dim: 2 }`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TemplateProblemSpec {
    /// Input dimension.
    pub dim: usize,
    /// Standard deviation of the observation noise.
    #[serde(default)]
    pub noise: f64,
}

#[cabo_core::plugin(
    name = "template_problem",
    summary = "Negative squared distance to a random centre (edit me)",
    paper = "standard",
    example = "{ type: template_problem, dim: 2 }"
)]
impl ProblemSpec for TemplateProblemSpec {
    fn dim(&self) -> Result<usize> {
        if self.dim == 0 {
            return Err(Error::invalid("template_problem: `dim` must be at least 1"));
        }
        if !(self.noise.is_finite() && self.noise >= 0.0) {
            return Err(Error::invalid(
                "template_problem: `noise` must be finite and non-negative",
            ));
        }
        Ok(self.dim)
    }

    fn build(&self, seed: u64) -> Result<Box<dyn Problem>> {
        let dim = self.dim()?;
        // The replication's seed places the optimum, so replications differ.
        let mut rng = Rng::new(seed);
        let centre = (0..dim).map(|_| rng.uniform_in(0.2, 0.8)).collect();
        Ok(Box::new(TemplateProblem {
            info: ProblemInfo::continuous("template_problem", dim),
            centre,
            noise: self.noise,
        }))
    }
}

/// f(x) = −‖x − c‖², maximised (value 0) at the centre c.
pub struct TemplateProblem {
    info: ProblemInfo,
    centre: Vec<f64>,
    noise: f64,
}

impl TemplateProblem {
    /// The noise-free value at a unit-cube point.
    pub fn value(&self, x: &[f64]) -> f64 {
        -x.iter()
            .zip(&self.centre)
            .map(|(a, c)| (a - c).powi(2))
            .sum::<f64>()
    }
}

impl Problem for TemplateProblem {
    fn info(&self) -> &ProblemInfo {
        &self.info
    }

    fn evaluate(&self, query: &Query, seed: u64) -> Result<Outcome> {
        let value = self.value(&query.x);
        let y = value + self.noise * Rng::new(seed).normal();
        Ok(Outcome::new(y, 1.0, query.x.clone(), Some(value)))
    }

    fn optimum(&self) -> Option<f64> {
        Some(0.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_centre_attains_the_optimum() {
        let spec = TemplateProblemSpec { dim: 3, noise: 0.0 };
        let p = spec.build(7).unwrap();
        let c = p
            .as_any()
            .downcast_ref::<TemplateProblem>()
            .unwrap()
            .centre
            .clone();
        let at_centre = p.evaluate(&Query::at(c), 1).unwrap();
        assert_eq!(at_centre.value, p.optimum());
        let corner = p.evaluate(&Query::at(vec![0.0; 3]), 2).unwrap();
        assert!(corner.y < 0.0);
    }

    #[test]
    fn spec_parses_by_type_and_rejects_dimension_zero() {
        let spec: Box<dyn ProblemSpec> =
            serde_json::from_str(r#"{"type": "template_problem", "dim": 2}"#).unwrap();
        assert_eq!(spec.dim().unwrap(), 2);
        let bad: Box<dyn ProblemSpec> =
            serde_json::from_str(r#"{"type": "template_problem", "dim": 0}"#).unwrap();
        assert!(bad.dim().is_err());
    }

    #[test]
    fn the_catalogue_lists_it_as_a_problem() {
        let entry = cabo_core::registry::catalogue()
            .into_iter()
            .find(|p| p.name == "template_problem")
            .expect("registered");
        assert_eq!(entry.kind, cabo_core::Kind::Problem);
    }
}
