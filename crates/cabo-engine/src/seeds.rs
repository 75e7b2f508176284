//! The seeds of a run, derived from the spec's seed name alone: the same spec and
//! replication give the same problem instance and initial design under every policy, and
//! the same policy randomness wherever the run is made.

use cabo_core::derive_seed;

/// One (policy, replication) pair of a spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunId {
    /// Index into the spec's policies.
    pub policy: usize,
    /// Replication index.
    pub replication: usize,
}

/// The seed of replication `rep`'s problem instance and initial design (shared by every
/// policy of that replication).
pub fn problem_seed(spec_name: &str, rep: usize) -> u64 {
    derive_seed(&[&spec_name, &"problem", &rep])
}

/// The seed of a policy's own randomness in replication `rep`.
pub fn policy_seed(spec_name: &str, policy: &str, rep: usize) -> u64 {
    derive_seed(&[&spec_name, &"policy", &policy, &rep])
}
