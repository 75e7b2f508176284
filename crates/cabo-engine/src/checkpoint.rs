//! Checkpoints of runs in progress, so that an interrupted run resumes where it stopped
//! instead of from the beginning.
//!
//! Between two decisions a run is fully described by its dataset, its budget, its counters,
//! the best value so far, the lengths of its record files and the states of its policy,
//! model and cost model ([`cabo_core::PluginState`]). `rep-<r>.checkpoint.cbor` holds exactly
//! that, written atomically, with the SHA-256 of the records so far; a resumed run checks
//! that its records are still those (a record edited since, even to the same length, makes
//! the checkpoint unusable: the run starts again, with a warning), truncates its record files
//! to the saved lengths and goes on, writing the same bytes an uninterrupted run writes. A
//! checkpoint belongs to one run — its run fingerprint, policy and replication: after an edit
//! of the spec that could change the run, or when the file is another run's (copied or moved
//! by hand), it is discarded with a warning naming whose it is, and the run starts again.

use cabo_core::{Dataset, PluginState, Result};
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::time::Duration;

/// The default minimum wall time between two checkpoints of one run.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(60);

/// When runs save checkpoints, and whether they pause.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pacing {
    /// Minimum wall time between checkpoints (zero: after every decision). A run also saves
    /// one whenever it is cancelled or paused.
    pub every: Duration,
    /// Pause each run, saving a checkpoint, after this many decisions of this invocation —
    /// exactly as an interruption there would leave it.
    pub pause_after: Option<usize>,
}

impl Default for Pacing {
    fn default() -> Self {
        Pacing {
            every: DEFAULT_INTERVAL,
            pause_after: None,
        }
    }
}

/// Everything a run needs to continue after its last completed decision.
#[derive(Debug, Serialize, Deserialize)]
pub struct Checkpoint {
    /// The run the state belongs to.
    pub run: RunIdentity,
    /// Policy decisions made.
    pub decisions: usize,
    /// Size of the initial design.
    pub offset: usize,
    /// Evaluations made (they seed the next evaluation).
    pub evaluations: usize,
    /// Everything observed.
    pub data: Dataset,
    /// Budget spent.
    pub spent: f64,
    /// Policy evaluations counted against the budget.
    pub budget_iterations: usize,
    /// Best noise-free value so far.
    pub best_value: Option<f64>,
    /// Length in bytes of `rep-<r>.jsonl` after the last decision's record.
    pub records_len: u64,
    /// SHA-256 (lowercase hex) of those `records_len` bytes: a resumed run goes on from
    /// records exactly as they were, so one edited since — even to the same length — makes
    /// the checkpoint unusable. Absent in checkpoints written before the digest was kept;
    /// those are checked by length alone, as they were when written.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub records_sha256: Option<String>,
    /// Length in bytes of `rep-<r>.times.jsonl` then.
    pub times_len: u64,
    /// The policy's state.
    pub policy: PluginState,
    /// The model's state, when the run has a model.
    pub model: Option<PluginState>,
    /// The cost model's state, when the run has one.
    pub cost_model: Option<PluginState>,
    /// The workers' simulated clock: the finish of the last evaluation told.
    #[serde(default)]
    pub clock: f64,
    /// Where a wall-time budget's clock started (the initial design's end, unless the
    /// design counts against the budget).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_origin: Option<f64>,
    /// The evaluations other workers are running, in the order they started.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub in_flight: Vec<crate::workers::InFlight>,
}

/// Which run a checkpoint belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunIdentity {
    /// The run fingerprint ([`crate::store::run_fingerprint`]).
    pub fingerprint: String,
    /// The policy's name.
    pub policy: String,
    /// The replication.
    pub replication: usize,
}

impl Checkpoint {
    /// Writes the checkpoint atomically to `path`.
    pub fn save(&self, path: &Path) -> Result<()> {
        let bytes = PluginState::to_bytes(self)?;
        crate::store::write_atomic(path, &bytes).map_err(|source| cabo_core::Error::Io {
            path: path.display().to_string(),
            source,
        })
    }

    /// The checkpoint at `path` if there is one for run `run`; an unreadable file, one of
    /// another version of the spec or one of another run counts as none (the run starts
    /// again), with a warning.
    pub fn load(path: &Path, run: &RunIdentity) -> Option<Checkpoint> {
        let bytes = std::fs::read(path).ok()?;
        match PluginState::from_bytes::<Checkpoint>(&bytes, "the run") {
            Ok(c) if &c.run == run => Some(c),
            Ok(c) => {
                tracing::warn!(path = %path.display(),
                    "checkpoint belongs to {}, not to this run: discarded, the run starts again",
                    whose(&c.run, run));
                None
            }
            Err(e) => {
                // The decoder's own words stay in the debug log; the warning says what it means.
                tracing::debug!(path = %path.display(), error = %e, "checkpoint not decoded");
                tracing::warn!(path = %path.display(),
                    "checkpoint cut short or written by another version of cabo: discarded, \
                     the run starts again");
                None
            }
        }
    }

    /// The checkpoint at `path` if it belongs to `run`, without messages (for `status`).
    pub fn peek(path: &Path, run: &RunIdentity) -> Option<Checkpoint> {
        let bytes = std::fs::read(path).ok()?;
        PluginState::from_bytes::<Checkpoint>(&bytes, "the run")
            .ok()
            .filter(|c| &c.run == run)
    }
}

/// Whose checkpoint `found` is, seen from run `this`: another policy's (whose fingerprint
/// differs too, so nothing tells whether it is of this spec version), another replication's,
/// or an earlier version's of this very run.
fn whose(found: &RunIdentity, this: &RunIdentity) -> String {
    let run = format!("{} / rep {}", found.policy, found.replication);
    let earlier = found.fingerprint != this.fingerprint;
    if found.policy != this.policy {
        format!("another policy ({run})")
    } else if found.replication != this.replication && earlier {
        format!("another replication ({run}) of an earlier version of the spec")
    } else if found.replication != this.replication {
        format!("another replication ({run})")
    } else {
        "an earlier version of the spec".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(fingerprint: &str, policy: &str, replication: usize) -> RunIdentity {
        RunIdentity {
            fingerprint: fingerprint.to_string(),
            policy: policy.to_string(),
            replication,
        }
    }

    #[test]
    fn a_checkpoint_is_named_by_whose_it_is() {
        let this = id("a", "EI", 0);
        assert_eq!(
            whose(&id("b", "UCB", 0), &this),
            "another policy (UCB / rep 0)"
        );
        assert_eq!(
            whose(&id("a", "EI", 1), &this),
            "another replication (EI / rep 1)"
        );
        assert_eq!(
            whose(&id("b", "EI", 1), &this),
            "another replication (EI / rep 1) of an earlier version of the spec"
        );
        assert_eq!(
            whose(&id("b", "EI", 0), &this),
            "an earlier version of the spec"
        );
    }
}
