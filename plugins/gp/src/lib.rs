//! Gaussian-process models for cabo: ExactGp, kernels, hyperparameter fitting, fantasies, sample paths, and the log-GP, known and uniform cost models.

/// Keeps this crate's plugin registrations in every binary that links the facade.
pub fn link() {}
