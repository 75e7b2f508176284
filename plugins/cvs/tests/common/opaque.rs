//! A posterior stripped to the generic capabilities, shared by the tests that check the
//! policies' and bounds' generic paths.

use cabo_core::capability::SamplePaths;
use cabo_core::{MeanVar, MeanVarGrad, Posterior, Result};
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
    fn noise_variance(&self) -> f64 {
        self.0.noise_variance()
    }
    fn sample_paths(&self) -> Option<&dyn SamplePaths> {
        self.0.sample_paths()
    }
}
