//! # cabo-benchmarks
//!
//! The benchmark problems of the papers, each usable by name from a spec:
//! - synthetic test functions with analytic gradients ([`ackley`], [`branin`], …), posed on
//!   the unit cube by [`synthetic::SyntheticProblem`] with a configurable box, output scale,
//!   ignored inputs and observation noise;
//! - cost functions with gradients and optional observation noise ([`costs`]);
//! - objectives drawn from GP priors by random Fourier features ([`gp_prior`]) and the
//!   non-stationary bump counterexamples of seed 000 ([`bump`]), with their true prior as
//!   the `bump_scaled_gp` model ([`bump_model`]);
//! - finite oracle problems: seed 001's Theorem 1 arms ([`arms`]) and Pandora's boxes
//!   ([`pandora`]);
//! - energy-aware robot pushing ([`robot`]) and Pest Control ([`pest`], seed 000's d = 25
//!   empirical problem);
//! - GP surrogates of published data sets ([`surrogate`]: airfoil, LDA).
//!
//! Every problem is maximised (minimisation benchmarks are negated, as the papers' code
//! does), takes queries in `[0,1]^d`, returns its noise-free value for regret and reports
//! its optimum where it is known.

#![forbid(unsafe_code)]

pub mod ackley;
pub mod alpine;
pub mod arms;
pub mod branin;
pub mod bump;
pub mod bump_model;
pub mod costs;
pub mod dropwave;
pub mod finite;
pub mod gp_prior;
pub mod hartmann;
pub mod levy;
pub mod pandora;
pub mod pest;
pub mod robot;
pub mod rosenbrock;
pub mod shekel;
pub mod surrogate;
pub mod synthetic;

cabo_core::plugin_group!();
