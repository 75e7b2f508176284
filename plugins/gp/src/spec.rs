//! The `exact_gp` model spec: a [`GpConfig`] read from YAML.

use crate::gp::{ExactGp, GpConfig};
use cabo_core::{BuildContext, Capabilities, Capability, Model, ModelSpec, Result};

#[cabo_core::plugin(
    name = "exact_gp",
    summary = "Exact GP (RBF/Matérn ARD kernel, constant mean, Gaussian noise); fixed or MAP hyperparameters, optional standardisation",
    paper = "standard",
    example = "{ type: exact_gp, kernel: { type: matern52 }, fit: map, prior: gamma, noise: { min: 1.0e-6, max: 1.0e-2 }, standardize: true }"
)]
impl ModelSpec for GpConfig {
    fn validate(&self, dim: usize) -> Result<()> {
        GpConfig::validate(self, Some(dim))
    }

    fn build(&self, ctx: &BuildContext<'_>) -> Result<Box<dyn Model>> {
        GpConfig::validate(self, Some(ctx.problem.dim))?;
        Ok(Box::new(ExactGp::new(self.clone())?))
    }

    /// Every required capability: [`crate::GpPosterior`] offers them all.
    fn capabilities(&self) -> Capabilities {
        Capabilities::of(&Capability::ALL)
    }
}
