//! Optional capabilities of posteriors and cost beliefs.
//!
//! Every [`Posterior`] reports means and variances, and every [`CostBelief`] the mean and
//! variance of ln c. Lookahead and control-set policies need more, and ask for it through the
//! traits of this module instead of naming a model's concrete type. A posterior offers a
//! capability by returning `Some(self)` from the matching method ([`Posterior::covariance`],
//! [`Posterior::fantasize`], …), and its spec declares the same set in
//! [`ModelSpec::capabilities`](crate::ModelSpec::capabilities) (likewise
//! [`CostModelSpec::capabilities`](crate::CostModelSpec::capabilities)), so that the runner
//! rejects a policy whose [`Requirements`] the model does not meet before any run starts.
//!
//! There are two kinds:
//! - capabilities a policy **requires**, named by [`Capability`] and checked at validation:
//!   [`Covariance`], [`Fantasize`] / [`FantasizeCost`], [`SamplePaths`] and
//!   [`FourierSamples`];
//! - **accelerators** a policy uses when offered and replaces by a generic computation of
//!   the same quantity otherwise: [`FantasyMeans`] (one-shot knowledge gradient) and
//!   [`OpenBounds`] (expected confidence bounds over a control set's open variables).
//!
//! Nothing here assumes an exact GP: a capability speaks of points, covariances and
//! observations, and a model such as Bayesian linear regression on features offers each in
//! its own terms (the working vectors of a [`PreparedPoint`] are whatever its covariances
//! need). Randomness enters as `u64` seeds.

use crate::{CostBelief, Objective, Posterior, Result};
use std::fmt;

/// A capability a policy can require of the objective's posterior or of the cost belief.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Capability {
    /// Joint posterior covariances between prepared points, with gradients ([`Covariance`]).
    Covariance,
    /// Conditioning on fantasised observations ([`Fantasize`], [`FantasizeCost`]).
    Fantasize,
    /// Functions drawn from the posterior ([`SamplePaths`]).
    SamplePaths,
    /// Posterior draws sharing one random Fourier basis ([`FourierSamples`]).
    FourierSamples,
}

impl Capability {
    /// Every capability, in declaration order.
    pub const ALL: [Capability; 4] = [
        Capability::Covariance,
        Capability::Fantasize,
        Capability::SamplePaths,
        Capability::FourierSamples,
    ];

    /// The name used in messages and documentation.
    pub fn name(self) -> &'static str {
        match self {
            Capability::Covariance => "covariance",
            Capability::Fantasize => "fantasize",
            Capability::SamplePaths => "sample_paths",
            Capability::FourierSamples => "fourier_samples",
        }
    }

    /// What the capability provides, for messages.
    pub fn describe(self) -> &'static str {
        match self {
            Capability::Covariance => {
                "joint posterior covariances between points, with gradients in both points"
            }
            Capability::Fantasize => {
                "conditioning on fantasised observations without refitting hyperparameters"
            }
            Capability::SamplePaths => "functions drawn from the posterior, with gradients",
            Capability::FourierSamples => {
                "posterior draws that share one random Fourier feature basis"
            }
        }
    }

    const fn bit(self) -> u8 {
        1 << (self as u8)
    }
}

impl fmt::Display for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of [`Capability`]s.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Capabilities(u8);

impl Capabilities {
    /// The empty set.
    pub const NONE: Capabilities = Capabilities(0);

    /// The set holding `list`.
    pub fn of(list: &[Capability]) -> Self {
        list.iter().fold(Self::NONE, |s, &c| s.with(c))
    }

    /// This set with `c` added.
    pub const fn with(self, c: Capability) -> Self {
        Capabilities(self.0 | c.bit())
    }

    /// This set with `c` added when `when` holds.
    pub fn with_if(self, c: Capability, when: bool) -> Self {
        if when { self.with(c) } else { self }
    }

    /// Whether `c` is in the set.
    pub const fn contains(self, c: Capability) -> bool {
        self.0 & c.bit() != 0
    }

    /// True for the empty set.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The members, in [`Capability::ALL`] order.
    pub fn iter(self) -> impl Iterator<Item = Capability> {
        Capability::ALL
            .into_iter()
            .filter(move |c| self.contains(*c))
    }

    /// The members of this set (what is required) that `offered` lacks.
    pub fn missing_from(self, offered: Capabilities) -> Vec<Capability> {
        self.iter().filter(|c| !offered.contains(*c)).collect()
    }

    /// What a fitted posterior actually offers: a model's tests hold it equal to what its
    /// spec declares in [`ModelSpec::capabilities`](crate::ModelSpec::capabilities).
    pub fn offered_by(post: &dyn Posterior) -> Self {
        Self::NONE
            .with_if(Capability::Covariance, post.covariance().is_some())
            .with_if(Capability::Fantasize, post.fantasize().is_some())
            .with_if(Capability::SamplePaths, post.sample_paths().is_some())
            .with_if(Capability::FourierSamples, post.fourier_samples().is_some())
    }

    /// What a fitted cost belief actually offers (see [`Capabilities::offered_by`]).
    pub fn offered_by_cost(belief: &dyn CostBelief) -> Self {
        Self::NONE
            .with_if(Capability::Covariance, belief.covariance().is_some())
            .with_if(Capability::Fantasize, belief.fantasize().is_some())
    }
}

/// What a policy or acquisition needs from the models of its run; the runner checks it
/// against the declared [`Capabilities`] of the run's model and cost model before running.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Requirements {
    /// Capabilities the objective model's posterior must offer.
    pub model: Capabilities,
    /// Capabilities the cost model's belief must offer.
    pub cost_model: Capabilities,
}

impl Requirements {
    /// Nothing beyond means and variances.
    pub const NONE: Requirements = Requirements {
        model: Capabilities::NONE,
        cost_model: Capabilities::NONE,
    };
}

/// The error a policy returns when its posterior or cost belief lacks a capability it
/// requires (validation normally catches this before the run: see [`Requirements`]).
pub fn missing(who: &str, of: &str, c: Capability) -> crate::Error {
    crate::Error::unsupported(format!(
        "{who} needs the {of} to offer the capability `{c}` ({}), and it does not",
        c.describe()
    ))
}

/// A point prepared by [`Covariance::prepare`]: its posterior mean and variance, their
/// gradients, and the working vectors the model's [`Covariance::cov`] reads. Reused across
/// evaluations, so preparing a point allocates nothing once the vectors have grown.
#[derive(Debug, Clone, Default)]
pub struct PreparedPoint {
    /// Posterior mean.
    pub mean: f64,
    /// ∇ mean (empty when gradients were not requested).
    pub dmean: Vec<f64>,
    /// Posterior variance of the latent value.
    pub var: f64,
    /// ∇ variance.
    pub dvar: Vec<f64>,
    /// The point itself.
    pub x: Vec<f64>,
    /// Model-specific working vector (for an exact GP `L⁻¹k(X, x)`; for Bayesian linear
    /// regression on features φ with weight covariance `RRᵀ`, `Rᵀφ(x)`).
    pub v: Vec<f64>,
    /// Model-specific working vector for gradients (for an exact GP `(K + σ²I)⁻¹k(X, x)`).
    pub u: Vec<f64>,
    /// Model-specific Jacobian (for an exact GP `∂k(X, x)/∂x`, row-major `n × d`).
    pub jv: Vec<f64>,
}

/// Joint posterior covariances between points, each prepared once: what a scenario tree
/// needs to condition a path's fantasies jointly and to differentiate through them. Offered
/// by a posterior over the objective ([`Posterior::covariance`]) or over ln c
/// ([`CostBelief::covariance`]).
pub trait Covariance: Sync {
    /// Input dimension.
    fn dim(&self) -> usize;

    /// Variance of the noise on a fantasised observation (observed units; 0 for a cost
    /// known exactly).
    fn fantasy_noise(&self) -> f64;

    /// Fills `p` for the point `x`: mean, variance and, when `grad`, their gradients, plus
    /// the working vectors [`Covariance::cov`] needs.
    fn prepare(&self, x: &[f64], grad: bool, p: &mut PreparedPoint);

    /// Fills `ps[i]` for the `i`-th point of `xs` (row-major, [`Covariance::dim`] columns),
    /// each bit for bit as [`Covariance::prepare`] fills it: a model may share work between
    /// the points (an exact GP solves their triangular systems together, sharing each load
    /// of its factor) but may not change a result.
    fn prepare_many(&self, xs: &[f64], grad: bool, ps: &mut [PreparedPoint]) {
        for (x, p) in xs.chunks_exact(self.dim()).zip(ps) {
            self.prepare(x, grad, p);
        }
    }

    /// Posterior covariance of two prepared distinct points, writing its gradients with
    /// respect to `a.x` and `b.x` into `ga` and `gb` when they are non-empty.
    fn cov(&self, a: &PreparedPoint, b: &PreparedPoint, ga: &mut [f64], gb: &mut [f64]) -> f64;
}

/// Conditioning a posterior on fantasised observations (rank k, hyperparameters kept).
pub trait Fantasize: Sync {
    /// The posterior after also observing `ys` at the rows of `xs` (row-major, the model's
    /// dimension) with the model's noise.
    fn condition(&self, xs: &[f64], ys: &[f64]) -> Result<Box<dyn Posterior>>;
}

/// Conditioning a cost belief on fantasised observations of ln c.
pub trait FantasizeCost: Sync {
    /// The belief after also observing ln c = `ln_costs` at the rows of `xs`.
    fn condition(&self, xs: &[f64], ln_costs: &[f64]) -> Result<Box<dyn CostBelief>>;
}

/// Functions drawn from the posterior (Thompson sampling, TS-PSQ).
pub trait SamplePaths: Sync {
    /// One function drawn from the posterior, determined by `seed`, with its gradient.
    fn sample_path(&self, seed: u64) -> Result<Box<dyn Objective + Send + Sync>>;
}

/// Posterior draws on a shared random Fourier basis:
/// `f_s(x) = offset + Σ_k weights[s][k] · cos(ω_kᵀx + b_k)`, in observed units.
#[derive(Debug, Clone, PartialEq)]
pub struct FourierDraws {
    /// Input dimension d.
    pub dim: usize,
    /// Frequencies ω, row-major `m × d`.
    pub frequencies: Vec<f64>,
    /// Phases b, one per feature.
    pub phases: Vec<f64>,
    /// Weights, row-major `count × m` (amplitudes and output scale included).
    pub weights: Vec<f64>,
    /// Constant added to every draw.
    pub offset: f64,
}

impl FourierDraws {
    /// Number of features m.
    pub fn features(&self) -> usize {
        self.phases.len()
    }

    /// Number of draws.
    pub fn count(&self) -> usize {
        self.weights.len() / self.features().max(1)
    }
}

/// Posterior draws that share one random Fourier basis, so that a policy can average every
/// draw over uncontrolled inputs in closed form per feature (seed 002's EI-PSQ and TS-PSQ).
pub trait FourierSamples: Sync {
    /// `count` draws on one basis of `features` features, determined by `seed`.
    fn draw(&self, features: usize, count: usize, seed: u64) -> Result<FourierDraws>;
}

/// Accelerator of the one-shot knowledge gradient: the average posterior mean at leaf
/// points after one fantasised observation at a root point. Without it, the same value
/// comes from a one-stage scenario tree over [`Covariance`].
pub trait FantasyMeans: Sync {
    /// `Σᵢ wᵢ μ_{D ∪ (x, yᵢ)}(x'ᵢ)` with `yᵢ = μ(x) + √(σ²(x) + noise)·εᵢ`, as a function
    /// (with gradient) of the concatenated vector `(x, x'₁, …, x'ₘ)`, for the base samples
    /// `eps` and weights `weights` (one each per leaf). Its value is NaN at a vector of the
    /// wrong length or with a non-finite entry.
    fn objective<'a>(&'a self, eps: &[f64], weights: &[f64]) -> Result<Box<dyn Objective + 'a>>;
}

/// Accelerator of expected confidence bounds over the open variables of a control set,
/// `(1/M) Σ_c μ(z_c) + β σ(z_c)` with `z_c` the controlled sub-vector in its coordinates and
/// sample `c` elsewhere. Without it, the same average comes from batched means and variances.
pub trait OpenBounds: Sync {
    /// Does the work every control set shares (for an exact GP, the inverse factor `L⁻¹`).
    fn prepare_bounds(&self) -> Box<dyn PreparedBounds + '_>;
}

/// The shared part of [`OpenBounds`], ready for any control set.
pub trait PreparedBounds: Sync {
    /// The expected bound with multiplier `beta` for the controlled coordinates `vars`
    /// (strictly increasing), averaged over the rows of `samples` (row-major, whole points),
    /// as a function of the controlled sub-vector.
    fn for_set<'a>(
        &'a self,
        vars: &[usize],
        samples: &'a [f64],
        beta: f64,
    ) -> Box<dyn Objective + Send + Sync + 'a>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sets_hold_what_was_added_and_name_what_is_missing() {
        let offered = Capabilities::of(&[Capability::Covariance, Capability::SamplePaths]);
        assert!(offered.contains(Capability::Covariance));
        assert!(!offered.contains(Capability::Fantasize));
        let required = Capabilities::NONE
            .with(Capability::Covariance)
            .with_if(Capability::Fantasize, true)
            .with_if(Capability::FourierSamples, false);
        assert_eq!(required.missing_from(offered), vec![Capability::Fantasize]);
        assert!(Capabilities::NONE.missing_from(offered).is_empty());
        assert!(Capabilities::NONE.is_empty());
        assert_eq!(
            Capabilities::of(&Capability::ALL)
                .iter()
                .collect::<Vec<_>>(),
            Capability::ALL
        );
    }
}
