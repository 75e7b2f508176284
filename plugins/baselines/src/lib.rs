//! The standard acquisitions and policies every paper compares against: EI, LogEI, EI per unit cost, EI-PUC-CC, UCB, Thompson sampling, random search.

/// Keeps this crate's plugin registrations in every binary that links the facade.
pub fn link() {}
