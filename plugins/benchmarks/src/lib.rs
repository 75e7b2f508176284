//! The benchmark problems of the papers: synthetic test functions, cost functions, GP-prior samples, counterexamples, simulators and data-set surrogates.

/// Keeps this crate's plugin registrations in every binary that links the facade.
pub fn link() {}
