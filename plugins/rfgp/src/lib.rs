//! # cabo-rfgp
//!
//! The random-feature GP (`random_feature_gp`): a GP approximated by Bayesian linear
//! regression on m random Fourier features of its kernel (Rahimi & Recht 2007; as a
//! regression model with fitted hyperparameters, Lázaro-Gredilla et al. 2010).
//!
//! It reuses the exact GP's parts wherever they mean the same thing: the kernels and their
//! spectral densities ([`cabo_gp::fourier::FourierBasis`] draws the frequencies), the output
//! transform, the priors, bounds, default starts and multi-start L-BFGS-B of a MAP fit
//! ([`cabo_gp::HyperparameterSpace`]), and the Cholesky factor with its recorded jitter. What
//! differs is the algebra: everything lives in the m-dimensional weight space, so a fit
//! costs O(n·m² + m³) per likelihood evaluation instead of O(n³) and a prediction O(m²)
//! instead of O(n²) — the model pays off once n exceeds m.
//!
//! - [`features`]: the basis drawn once per run ([`UnitBasis`]) and scaled by the
//!   hyperparameters ([`Features`]).
//! - [`likelihood`]: the marginal likelihood with its gradient, in the weight form and the
//!   equal data form (a fit takes the cheaper).
//! - [`posterior`]: [`RfGpPosterior`], which offers every required capability in its own
//!   terms — covariances `φ(x)ᵀΣφ(x')` with gradients, fantasies by rank-one updates of the
//!   weight precision (O(m²) each), exact sample paths (weights drawn from their posterior)
//!   and draws on its own Fourier basis. It offers neither accelerator (`FantasyMeans`,
//!   `OpenBounds`), so KG and the control-set policies take their generic paths.
//! - [`model`]: [`RandomFeatureGp`] and its spec [`RfGpConfig`] (the keys of `exact_gp` plus
//!   `features`).
//! - `dense`: a fit's products `ΦᵀΦ` and `A Bᵀ` on `cabo-linalg`'s tiled row products, split
//!   between two threads when large, with bitwise equal results either way.
//!
//! The basis is drawn from a `u64` seed derived from the run's seed when the model is built,
//! and kept for the whole run: only the hyperparameters move it (ω = z/ℓ), so the
//! likelihood is smooth in them and resuming a run redraws the same basis.

#![forbid(unsafe_code)]

mod dense;
pub mod features;
pub mod likelihood;
pub mod model;
pub mod posterior;

pub use features::{Features, UnitBasis};
pub use likelihood::{Form, log_marginal_likelihood};
pub use model::{DEFAULT_FEATURES, MAX_FEATURES, RandomFeatureGp, RfGpConfig};
pub use posterior::{RfGpPosterior, WeightSample};

use cabo_core::{Error, Result, TrainingData};

cabo_core::plugin_group!();

/// Rejects inconsistent shapes and non-finite values, naming the first bad index.
pub(crate) fn check_data(data: &TrainingData<'_>) -> Result<()> {
    if data.dim == 0 {
        return Err(Error::invalid(
            "random-feature GP: input dimension must be ≥ 1",
        ));
    }
    if data.x.len() != data.y.len() * data.dim {
        return Err(Error::invalid(format!(
            "random-feature GP: {} input coordinates for {} targets in dimension {}",
            data.x.len(),
            data.y.len(),
            data.dim
        )));
    }
    if let Some(i) = data.y.iter().position(|v| !v.is_finite()) {
        return Err(Error::invalid(format!(
            "random-feature GP: y[{i}] = {} is not finite",
            data.y[i]
        )));
    }
    if let Some(p) = data.x.iter().position(|v| !v.is_finite()) {
        return Err(Error::invalid(format!(
            "random-feature GP: x[{}][{}] = {} is not finite",
            p / data.dim,
            p % data.dim,
            data.x[p]
        )));
    }
    Ok(())
}
