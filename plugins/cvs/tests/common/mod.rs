//! Test helpers shared by the cvs integration tests.

use cabo_core::{MeanVar, MeanVarGrad, Posterior, Result, SamplePath};
use cabo_gp::GpPosterior;

/// A posterior that offers only means, variances and sample paths, so policies and bounds
/// take their generic path (no closed-form expectations, no Fourier paths).
pub struct Opaque(pub GpPosterior);

impl Posterior for Opaque {
    fn dim(&self) -> usize {
        self.0.dim()
    }
    fn mean_var(&self, x: &[f64]) -> MeanVar {
        self.0.mean_var(x)
    }
    fn mean_var_grad(&self, x: &[f64]) -> Result<MeanVarGrad> {
        self.0.mean_var_grad(x)
    }
    fn joint(&self, xs: &[f64]) -> Result<(Vec<f64>, Vec<f64>)> {
        self.0.joint(xs)
    }
    fn condition(&self, x: &[f64], y: f64) -> Result<Box<dyn Posterior>> {
        self.0.condition(x, y)
    }
    fn noise_variance(&self) -> f64 {
        self.0.noise_variance()
    }
    fn sample_path(&self, seed: u64) -> Result<Box<dyn SamplePath>> {
        self.0.sample_path(seed)
    }
    fn sample_paths(&self) -> Option<&dyn cabo_core::capability::SamplePaths> {
        self.0.sample_paths()
    }
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}
