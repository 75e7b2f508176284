//! # cabo-template-acquisition
//!
//! A cabo acquisition plugin: `acquisition: { type: template_acquisition, beta: 2.0 }`.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

use cabo_core::{
    Acquisition, AcquisitionFn, AcquisitionSpec, BuildContext, DecisionContext, Error, Objective,
    Posterior, Result,
};
use serde::{Deserialize, Serialize};

cabo_core::plugin_group!();

/// Spec of [`TemplateAcquisition`]: `acquisition: { type: template_acquisition, beta: 2.0 }`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TemplateAcquisitionSpec {
    /// Weight of the posterior standard deviation (exploration).
    #[serde(default = "default_beta")]
    pub beta: f64,
}

fn default_beta() -> f64 {
    2.0
}

#[cabo_core::plugin(
    name = "template_acquisition",
    summary = "Posterior mean plus beta posterior standard deviations (edit me)",
    paper = "standard",
    example = "{ type: template_acquisition, beta: 2.0 }"
)]
impl AcquisitionSpec for TemplateAcquisitionSpec {
    fn validate(&self, _dim: usize) -> Result<()> {
        if self.beta.is_finite() && self.beta >= 0.0 {
            Ok(())
        } else {
            Err(Error::invalid(format!(
                "template_acquisition: `beta` must be finite and non-negative, got {}",
                self.beta
            )))
        }
    }

    fn build(&self, _ctx: &BuildContext<'_>) -> Result<Box<dyn Acquisition>> {
        Ok(Box::new(TemplateAcquisition { beta: self.beta }))
    }
}

/// The acquisition: mean + beta·sd of the posterior.
pub struct TemplateAcquisition {
    beta: f64,
}

/// The score and its derivatives with respect to mean and variance, kept apart from the
/// posterior so it can be tested by hand.
pub fn score(mean: f64, var: f64, beta: f64) -> (f64, f64, f64) {
    let sd = var.max(0.0).sqrt();
    let dvar = if sd > 0.0 { beta / (2.0 * sd) } else { 0.0 };
    (mean + beta * sd, 1.0, dvar)
}

impl Acquisition for TemplateAcquisition {
    fn prepare<'a>(&'a self, ctx: &'a DecisionContext<'a>) -> Result<Box<dyn AcquisitionFn + 'a>> {
        Ok(Box::new(TemplateAcquisitionFn {
            posterior: ctx.posterior()?,
            beta: self.beta,
        }))
    }
}

struct TemplateAcquisitionFn<'a> {
    posterior: &'a dyn Posterior,
    beta: f64,
}

impl Objective for TemplateAcquisitionFn<'_> {
    fn value(&self, x: &[f64]) -> f64 {
        let mv = self.posterior.mean_var(x);
        score(mv.mean, mv.var, self.beta).0
    }

    fn value_grad(&self, x: &[f64], grad: &mut [f64]) -> f64 {
        match self.posterior.mean_var_grad(x) {
            Ok(m) => {
                let (v, dmean, dvar) = score(m.mean, m.var, self.beta);
                for (i, g) in grad.iter_mut().enumerate() {
                    *g = dmean * m.dmean[i] + dvar * m.dvar[i];
                }
                v
            }
            // The optimiser treats NaN as a failed step.
            Err(_) => f64::NAN,
        }
    }
}

// Neither a stopping rule nor diagnostics: the defaults.
impl AcquisitionFn for TemplateAcquisitionFn<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn score_matches_hand_computation() {
        let (v, dm, dv) = score(1.0, 4.0, 2.0);
        assert_eq!(v, 5.0);
        assert_eq!(dm, 1.0);
        assert_eq!(dv, 0.5);
        // Finite-difference check of the variance derivative.
        let h = 1e-6;
        let fd = (score(1.0, 4.0 + h, 2.0).0 - score(1.0, 4.0 - h, 2.0).0) / (2.0 * h);
        assert!((fd - dv).abs() < 1e-6);
    }

    #[test]
    fn spec_parses_by_type_and_rejects_bad_beta() {
        let spec: Box<dyn AcquisitionSpec> =
            serde_json::from_str(r#"{"type": "template_acquisition", "beta": 1.5}"#).unwrap();
        assert!(spec.validate(2).is_ok());
        let bad: Box<dyn AcquisitionSpec> =
            serde_json::from_str(r#"{"type": "template_acquisition", "beta": -1.0}"#).unwrap();
        assert!(bad.validate(2).is_err());
    }

    #[test]
    fn the_catalogue_lists_it_as_an_acquisition() {
        let entry = cabo_core::registry::catalogue()
            .into_iter()
            .find(|p| p.name == "template_acquisition")
            .expect("registered");
        assert_eq!(entry.kind, cabo_core::Kind::Acquisition);
    }
}
