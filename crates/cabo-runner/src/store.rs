//! The result store: where each run writes, how completion is marked, and how a rerun knows
//! what is already done.
//!
//! Layout under the output directory:
//! ```text
//! <spec>/spec.json                       the resolved spec that produced these results
//! <spec>/<policy>/rep-<r>.jsonl          one line per evaluation, flushed as it happens
//! <spec>/<policy>/rep-<r>.json           written last, atomically: the run is complete
//! <spec>/<policy>/rep-<r>.times.jsonl    wall and CPU times (kept apart: everything else is
//!                                        byte-identical between reruns and thread counts)
//! <spec>/<policy>/rep-<r>.checkpoint.cbor  the state of a run in progress, to resume it
//!                                        (see `checkpoint.rs`; removed on completion)
//! <spec>/<policy>/rep-<r>.lock           locked by the process running the run ([`RunLock`];
//!                                        removed on completion)
//! <spec>/run.json                        written when every run of the spec is complete
//! ```

use crate::spec::Spec;
use serde::{Deserialize, Serialize};
use std::fs::{self, File, TryLockError};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Turns a policy name into a directory name (keeps letters, digits and `._-()+=,`).
pub fn dir_name(policy: &str) -> String {
    policy
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-()+=,".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The files of one run.
#[derive(Debug, Clone)]
pub struct RunFiles {
    /// Per-evaluation records.
    pub records: PathBuf,
    /// Completion summary.
    pub done: PathBuf,
    /// Wall and CPU times.
    pub times: PathBuf,
    /// The state of the run in progress (removed when it completes).
    pub checkpoint: PathBuf,
    /// Held locked by the process running the run ([`RunLock`]).
    pub lock: PathBuf,
}

impl RunFiles {
    /// The files of replication `rep` of `policy` under `spec_dir`.
    pub fn new(spec_dir: &Path, policy: &str, rep: usize) -> Self {
        let dir = spec_dir.join(dir_name(policy));
        RunFiles {
            records: dir.join(format!("rep-{rep}.jsonl")),
            done: dir.join(format!("rep-{rep}.json")),
            times: dir.join(format!("rep-{rep}.times.jsonl")),
            checkpoint: dir.join(format!("rep-{rep}.checkpoint.cbor")),
            lock: dir.join(format!("rep-{rep}.lock")),
        }
    }
}

/// An exclusive lock on a run, held while a process runs it, so that two sweeps over the same
/// output directory (a second worker started by hand, a resubmitted cluster job while the
/// first still runs) never run one run twice and interleave its files: the second skips it.
/// The operating system releases the lock when the process ends, however it ends, so a
/// crashed run never stays locked. The lock file is removed once the run is complete.
///
/// On a file system without locks (some network mounts) the run goes ahead unlocked, with a
/// warning — sharded sweeps (`--shard`) never share a run and need no lock — unless locks are
/// required, as they are for sweeps whose workers share runs.
#[derive(Debug)]
pub struct RunLock {
    _file: File,
}

impl RunLock {
    /// Locks the run whose lock file is `path` (creating it and its directory), or `None`
    /// when another process holds it. Where the file system cannot lock, an error when
    /// `required`, else the run unlocked.
    pub fn try_acquire(path: &Path, required: bool) -> std::io::Result<Option<RunLock>> {
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir)?;
        }
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => return Ok(None),
            Err(TryLockError::Error(e)) if required => return Err(e),
            Err(TryLockError::Error(e)) => {
                tracing::warn!(path = %path.display(), error = %e,
                    "the file system cannot lock runs; running unlocked");
            }
        }
        Ok(Some(RunLock { _file: file }))
    }

    /// Releases the lock of a complete run and removes its file. A process that opened the
    /// file before it was removed and locks it afterwards finds the run complete when it
    /// checks again under the lock, so removing it is safe.
    pub fn release_complete(self, path: &Path) {
        let _ = fs::remove_file(path);
    }
}

/// What a completed run leaves behind in `rep-<r>.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    /// Fingerprint of the spec as far as this run depends on it ([`run_fingerprint`]): a
    /// change that could alter the run reruns it, nothing else does.
    pub spec_fingerprint: String,
    /// Policy name.
    pub policy: String,
    /// Replication index.
    pub replication: usize,
    /// Seed of the problem instance and initial design.
    pub problem_seed: u64,
    /// Seed of the policy's randomness.
    pub policy_seed: u64,
    /// Initial-design evaluations.
    pub initial_evaluations: usize,
    /// Policy evaluations.
    pub policy_evaluations: usize,
    /// Cost charged against the budget.
    pub budget_spent: f64,
    /// How far the last evaluation went past a cost budget.
    pub overshoot: f64,
    /// Why the run ended: `budget exhausted` or the policy's stopping reason.
    pub stop_reason: String,
    /// Best observed y.
    pub best_y: f64,
    /// Best noise-free value among evaluated points, when the problem knows values.
    pub best_value: Option<f64>,
    /// Final simple regret, when the optimum is known.
    pub simple_regret: Option<f64>,
    /// Problem metrics at the end of the run.
    pub metrics: std::collections::BTreeMap<String, f64>,
}

/// Reads a completed run's summary, if the run is complete for one of `fingerprints` (the
/// run's [`run_fingerprint`], then any older form still accepted).
pub fn completed(files: &RunFiles, fingerprints: &[&str]) -> Option<RunSummary> {
    let text = fs::read_to_string(&files.done).ok()?;
    let summary: RunSummary = serde_json::from_str(&text).ok()?;
    fingerprints
        .contains(&summary.spec_fingerprint.as_str())
        .then_some(summary)
}

/// The fingerprint of what one policy's runs depend on: the spec without its description,
/// replication count, report options, smoke variant and other policies (a run's seeds come
/// from the spec name, the policy name and the replication index, never from those). Runs
/// made with `--only` or fewer `--replications`, or before an edit of the report or the
/// smoke section, therefore stay valid for the whole spec.
pub fn run_fingerprint(spec: &Spec, policy: usize) -> String {
    let mut value = serde_json::to_value(spec).unwrap_or_default();
    if let Some(fields) = value.as_object_mut() {
        for key in ["description", "replications", "report", "smoke", "policies"] {
            fields.remove(key);
        }
        let entry = serde_json::to_value(&spec.policies[policy]).unwrap_or_default();
        fields.insert("policy".to_string(), entry);
    }
    fingerprint(&value)
}

/// Writes `contents` to `path` atomically (temporary file + rename), so a killed process
/// never leaves a half-written completion marker. The temporary name is unique to the
/// process and call, so shards finishing at the same moment can write the same manifest or
/// report concurrently (they write identical bytes; the last rename wins).
pub fn write_atomic(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static CALLS: AtomicU64 = AtomicU64::new(0);
    let n = CALLS.fetch_add(1, Ordering::Relaxed);
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(format!(".{}.{n}.tmp", std::process::id()));
    let tmp = path.with_file_name(name);
    {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(contents)?;
        f.sync_all()?;
    }
    fs::rename(&tmp, path)
}

/// A stable fingerprint of a JSON-serialisable value (FNV-1a over its canonical JSON).
pub fn fingerprint<T: Serialize>(value: &T) -> String {
    let json = serde_json::to_string(value).unwrap_or_default();
    let seed = cabo_core::derive_seed(&[&json.as_str()]);
    format!("{seed:016x}")
}
