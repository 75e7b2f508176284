//! The result store: where each run writes, how completion is marked, and how a rerun knows
//! what is already done.
//!
//! Layout under the output directory (`<spec>` is `<out>/<name>`, or `<out>/<name>/smoke` for
//! the `--smoke` variant, so smoke and full results never share a file):
//! ```text
//! <spec>/spec.json                       the resolved spec (the whole spec, whatever was
//!                                        selected with --only or --replications)
//! <spec>/<policy>/rep-<r>.jsonl          one line per evaluation, flushed as it happens
//! <spec>/<policy>/rep-<r>.json           written last, atomically: the run is complete; it
//!                                        holds the record file's length and SHA-256
//! <spec>/<policy>/rep-<r>.times.jsonl    wall and CPU times (kept apart: everything else is
//!                                        byte-identical between reruns and thread counts)
//! <spec>/<policy>/rep-<r>.checkpoint.cbor  the state of a run in progress, to resume it
//!                                        (see `checkpoint.rs`; removed on completion)
//! <spec>/<policy>/rep-<r>.lock           locked by the process running the run ([`RunLock`];
//!                                        removed on completion)
//! <spec>/<policy>/rep-<r>.log            what the problem itself logs (an external
//!                                        program's standard error, cabo's notes on its
//!                                        failures), appended to by every attempt
//! <spec>/<policy>/rep-<r>.evaluations.jsonl  every evaluation an external program answered,
//!                                        replayed instead of asked again when the run
//!                                        starts again (see `journal.rs`)
//! <spec>/run.json                        written when every run of the spec is complete
//! <spec>/superseded/<fingerprint>/…      complete runs of an earlier version of the spec,
//!                                        moved aside (never deleted) when the current
//!                                        version reruns them
//! ```

use cabo_spec::Spec;
use cabo_spec::layout::{SMOKE, SUPERSEDED, dir_name};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::fs::{self, File, TryLockError};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

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
    /// The log of a problem evaluated by another program
    /// ([`cabo_core::ExternalEvaluation::set_log_file`]).
    pub log: PathBuf,
    /// The evaluation journal of a problem that must not evaluate a query twice
    /// ([`cabo_core::ExternalEvaluation`]).
    pub evaluations: PathBuf,
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
            log: dir.join(format!("rep-{rep}.log")),
            evaluations: dir.join(format!("rep-{rep}.evaluations.jsonl")),
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
    /// With several workers, the simulated wall time from the run's start to its last
    /// evaluation's finish.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub makespan: Option<f64>,
    /// Length and hash of the run's record file when it completed: a record file that no
    /// longer matches is damaged, and the run is made again. Absent in markers written
    /// before records were hashed; those are checked by counting records instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub records: Option<RecordsDigest>,
}

/// The length and SHA-256 of a record file, as its completion marker saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordsDigest {
    /// Length in bytes.
    pub bytes: u64,
    /// SHA-256 of the contents, lowercase hex.
    pub sha256: String,
}

impl RecordsDigest {
    /// The digest of the file at `path`.
    pub fn of_file(path: &Path) -> std::io::Result<RecordsDigest> {
        let mut file = File::open(path)?;
        let mut hasher = Sha256::new();
        let mut buf = vec![0u8; 1 << 16];
        let mut bytes = 0u64;
        loop {
            let n = file.read(&mut buf)?;
            if n == 0 {
                break;
            }
            bytes += n as u64;
            hasher.update(&buf[..n]);
        }
        Ok(RecordsDigest {
            bytes,
            sha256: hex(hasher),
        })
    }
}

/// The lowercase hex digest of what `hasher` has seen.
pub(crate) fn hex(hasher: Sha256) -> String {
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// What the files of one run say about it, checked against the current spec.
#[derive(Debug, Clone, PartialEq)]
pub enum Completion {
    /// Complete for the current spec, with records that match the marker.
    Complete(RunSummary),
    /// Marked complete for the current spec, but its records disagree with the marker (cut,
    /// edited or missing): it must be made again.
    Damaged(String),
    /// Complete for another version of the spec: not a result of this one.
    OtherVersion(RunSummary),
    /// Not complete (never started, in progress, interrupted, or an unreadable marker).
    Missing,
}

/// The run a set of run files is meant to hold: what its completion marker must say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Slot {
    /// The run's [`run_fingerprint`] under the current spec.
    pub fingerprint: String,
    /// The policy's name.
    pub policy: String,
    /// The replication index.
    pub replication: usize,
    /// The seed the run's problem instance and initial design derive from.
    pub problem_seed: u64,
    /// The seed of the policy's randomness.
    pub policy_seed: u64,
}

impl Slot {
    /// Replication `replication` of `policy` in a spec whose seeds derive from `seed_name`
    /// ([`cabo_spec::Spec::seed_name`]), with run fingerprint `fingerprint`.
    pub fn new(seed_name: &str, fingerprint: &str, policy: &str, replication: usize) -> Self {
        Slot {
            fingerprint: fingerprint.to_string(),
            policy: policy.to_string(),
            replication,
            problem_seed: crate::seeds::problem_seed(seed_name, replication),
            policy_seed: crate::seeds::policy_seed(seed_name, policy, replication),
        }
    }
}

/// Reads a run's completion marker and checks it against the slot it lies in: the policy
/// and replication it names, its fingerprint against the slot's (the run's
/// [`run_fingerprint`] under the current spec), its seeds, and its record file against the
/// length and hash the marker holds. A marker of another run — copied or moved by hand into
/// this slot, with its records — is damaged, never counted as this run.
pub fn completion(files: &RunFiles, slot: &Slot) -> Completion {
    let Ok(text) = fs::read_to_string(&files.done) else {
        return Completion::Missing;
    };
    let Ok(summary) = serde_json::from_str::<RunSummary>(&text) else {
        return Completion::Damaged(format!(
            "{} is not a completion marker",
            files.done.display()
        ));
    };
    if let Err(why) = check_slot(files, &summary, slot) {
        return Completion::Damaged(why);
    }
    if summary.spec_fingerprint != slot.fingerprint {
        return Completion::OtherVersion(summary);
    }
    if let Err(why) = check_seeds(files, &summary, slot) {
        return Completion::Damaged(why);
    }
    match check_records(files, &summary) {
        Ok(()) => Completion::Complete(summary),
        Err(why) => Completion::Damaged(why),
    }
}

/// Whether a marker names the slot's run. Policies are compared by directory name here: a
/// marker of an earlier spec version whose policy was renamed to one with the same directory
/// is that version's result (set aside, not deleted), and the fingerprint tells it apart.
fn check_slot(files: &RunFiles, summary: &RunSummary, slot: &Slot) -> Result<(), String> {
    let same_dir = dir_name(&summary.policy) == dir_name(&slot.policy);
    if same_dir && summary.replication == slot.replication {
        return Ok(());
    }
    Err(format!(
        "{} is the completion marker of {} / rep {}, not of {} / rep {}: another run's, \
         copied or moved there",
        files.done.display(),
        summary.policy,
        summary.replication,
        slot.policy,
        slot.replication
    ))
}

/// Whether a marker of the slot's fingerprint names the slot's policy and seeds, which that
/// fingerprint determines: anything else was edited by hand.
fn check_seeds(files: &RunFiles, summary: &RunSummary, slot: &Slot) -> Result<(), String> {
    let marker = files.done.display();
    if summary.policy != slot.policy {
        Err(format!(
            "{marker} names policy {:?}, not {:?}",
            summary.policy, slot.policy
        ))
    } else if (summary.problem_seed, summary.policy_seed) != (slot.problem_seed, slot.policy_seed) {
        Err(format!(
            "{marker} records seeds {} (problem) and {} (policy); {} / rep {} runs with {} \
             and {}",
            summary.problem_seed,
            summary.policy_seed,
            slot.policy,
            slot.replication,
            slot.problem_seed,
            slot.policy_seed
        ))
    } else {
        Ok(())
    }
}

/// Whether a run's record file is the one its marker describes.
fn check_records(files: &RunFiles, summary: &RunSummary) -> Result<(), String> {
    let path = files.records.display();
    match &summary.records {
        Some(expected) => {
            let found = RecordsDigest::of_file(&files.records)
                .map_err(|e| format!("{path}: cannot be read ({e})"))?;
            if found.bytes != expected.bytes {
                Err(format!(
                    "{path} has {} bytes, its completion marker {}",
                    found.bytes, expected.bytes
                ))
            } else if found.sha256 != expected.sha256 {
                Err(format!(
                    "{path} differs from what its completion marker recorded (SHA-256)"
                ))
            } else {
                Ok(())
            }
        }
        None => check_record_count(files, summary),
    }
}

/// The check of a marker written before records were hashed: one whole JSON line per
/// evaluation.
fn check_record_count(files: &RunFiles, summary: &RunSummary) -> Result<(), String> {
    let path = files.records.display();
    let text =
        fs::read_to_string(&files.records).map_err(|e| format!("{path}: cannot be read ({e})"))?;
    let expected = summary.initial_evaluations + summary.policy_evaluations;
    let whole = text.ends_with('\n') || text.is_empty();
    let lines = text.lines().filter(|l| !l.trim().is_empty());
    let parsed = lines
        .clone()
        .all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok());
    let count = lines.count();
    if whole && parsed && count == expected {
        Ok(())
    } else {
        Err(format!(
            "{path} holds {count} record(s){}, its completion marker {expected}",
            if whole && parsed {
                ""
            } else {
                ", some cut or unreadable"
            }
        ))
    }
}

/// Moves the files of a complete run of another spec version (run fingerprint `old`) to
/// `<spec dir>/superseded/<old>/<policy>/`, so that a rerun under the current version never
/// overwrites a result (the spec it was made under went to `superseded/spec-…/` when
/// `spec.json` changed). Files already there are kept.
pub fn supersede(spec_dir: &Path, policy: &str, rep: usize, old: &str) -> std::io::Result<()> {
    let from = RunFiles::new(spec_dir, policy, rep);
    let archive = spec_dir.join(SUPERSEDED).join(old);
    let to = RunFiles::new(&archive, policy, rep);
    fs::create_dir_all(to.done.parent().expect("run files live in a directory"))?;
    for (a, b) in [
        (&from.records, &to.records),
        (&from.times, &to.times),
        (&from.done, &to.done),
        (&from.log, &to.log),
        (&from.evaluations, &to.evaluations),
    ] {
        if a.exists() && !b.exists() {
            fs::rename(a, b)?;
        }
    }
    Ok(())
}

/// Moves the files at the top of a results directory (an earlier version's `spec.json` or
/// `study.json`, its manifest, report, figures and tables) to
/// `superseded/spec-<fingerprint>/`, where `fingerprint` identifies that version: they
/// describe results the current spec no longer produces, so they must not stand next to it
/// as if current, and they are results, so they are kept.
pub fn retire_version(dir: &Path, fingerprint: &str) -> std::io::Result<()> {
    let to = dir.join(SUPERSEDED).join(format!("spec-{fingerprint}"));
    fs::create_dir_all(&to)?;
    for entry in fs::read_dir(dir)?.flatten() {
        if entry.file_type()?.is_file() {
            fs::rename(entry.path(), to.join(entry.file_name()))?;
        }
    }
    Ok(())
}

/// An I/O failure at `path` as cabo's error, naming the file.
pub(crate) fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> cabo_core::Error {
    let path = path.display().to_string();
    move |source| cabo_core::Error::Io { path, source }
}

/// The results directory of the spec named `name` under `out`: `<out>/<name>`, or
/// `<out>/<name>/smoke` for its smoke variant.
pub fn spec_dir(out: &Path, name: &str, smoke: bool) -> PathBuf {
    let dir = out.join(name);
    if smoke { dir.join(SMOKE) } else { dir }
}

/// The fingerprint of what one policy's runs depend on: the spec without its description,
/// replication count, report options, smoke variant and other policies (a run's seeds come
/// from the spec name, the policy name and the replication index, never from those). Runs
/// made with `--only` or fewer `--replications`, or before an edit of the report or the
/// smoke section, therefore stay valid for the whole spec.
pub fn run_fingerprint(spec: &Spec, policy: usize) -> String {
    run_fingerprint_of(&serde_json::to_value(spec).unwrap_or_default(), policy)
}

/// [`run_fingerprint`] of a spec given as JSON (such as a results directory's `spec.json`),
/// so that reports check runs against the spec without parsing its plugins.
pub fn run_fingerprint_of(spec: &serde_json::Value, policy: usize) -> String {
    run_fingerprint_in(spec, policy, NUMERICS)
}

/// The generation of cabo's numerics that runs are made with, part of every run's
/// fingerprint. A commit that changes what a run computes from the same spec and seeds
/// (another summation order or `exp`, a model's bug fixed) bumps it: runs of the old
/// numerics are then set aside like those of an edited spec, never resumed or mixed with
/// new ones. Generation 1 adds nothing to the fingerprint, so the runs made before
/// generations were counted keep their identity.
///
/// Generation 2: fused multiply-adds in the triangular kernels and panel products (the same
/// bits on every CPU), L-BFGS-B's factored middle matrix and its line search on flat
/// values, scrambled Sobol' points for the control-set policies' averages (128 and 256 by
/// default), and seed 001's sampling in lookahead (shared Sobol' base samples per stage,
/// sampled rollout costs with the cost-cooling exponent recomputed, its fantasy start).
pub const NUMERICS: u32 = 2;

/// [`run_fingerprint_of`] under the numerics generation `numerics`.
fn run_fingerprint_in(spec: &serde_json::Value, policy: usize, numerics: u32) -> String {
    let mut value = spec.clone();
    if let Some(fields) = value.as_object_mut() {
        let entry = fields
            .get("policies")
            .and_then(|p| p.get(policy))
            .cloned()
            .unwrap_or_default();
        for key in ["description", "replications", "report", "smoke", "policies"] {
            fields.remove(key);
        }
        fields.insert("policy".to_string(), entry);
        if numerics > 1 {
            fields.insert("numerics".to_string(), numerics.into());
        }
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

/// The fingerprint of a spec's results as the gallery records them: the spec's
/// [`fingerprint`] under the current numerics generation, so a page made under an earlier
/// generation reads as stale once [`NUMERICS`] moves. Generation 1 adds nothing, so the
/// pages written before generations were counted keep their fingerprints.
pub fn results_fingerprint<T: Serialize>(spec: &T) -> String {
    results_fingerprint_in(spec, NUMERICS)
}

/// [`results_fingerprint`] under the numerics generation `numerics`.
fn results_fingerprint_in<T: Serialize>(spec: &T, numerics: u32) -> String {
    #[derive(Serialize)]
    struct UnderGeneration<'a, T> {
        spec: &'a T,
        numerics: u32,
    }
    if numerics == 1 {
        return fingerprint(spec);
    }
    fingerprint(&UnderGeneration { spec, numerics })
}

/// A stable fingerprint of a JSON-serialisable value (FNV-1a over its canonical JSON).
pub fn fingerprint<T: Serialize>(value: &T) -> String {
    let json = serde_json::to_string(value).unwrap_or_default();
    let seed = cabo_core::derive_seed(&[&json.as_str()]);
    format!("{seed:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> serde_json::Value {
        serde_json::json!({
            "name": "s",
            "description": "what it is",
            "replications": 4,
            "problem": {"type": "branin"},
            "policies": [{"name": "EI"}, {"name": "UCB"}],
        })
    }

    #[test]
    fn the_first_numerics_generation_leaves_fingerprints_as_they_were() {
        // The fingerprint runs were identified by before generations existed.
        let before = fingerprint(&serde_json::json!({
            "name": "s",
            "problem": {"type": "branin"},
            "policy": {"name": "UCB"},
        }));
        assert_eq!(run_fingerprint_in(&spec(), 1, 1), before);
    }

    #[test]
    fn runs_are_identified_under_the_current_generation() {
        assert_eq!(
            run_fingerprint_of(&spec(), 1),
            run_fingerprint_in(&spec(), 1, NUMERICS)
        );
        assert_eq!(
            results_fingerprint(&spec()),
            results_fingerprint_in(&spec(), NUMERICS)
        );
    }

    #[test]
    fn a_new_numerics_generation_is_a_new_run_identity() {
        let first = run_fingerprint_in(&spec(), 0, 1);
        let second = run_fingerprint_in(&spec(), 0, 2);
        assert_ne!(first, second);
        assert_ne!(second, run_fingerprint_in(&spec(), 0, 3));
        // What runs do not depend on still does not count.
        let mut edited = spec();
        edited["description"] = "another".into();
        edited["replications"] = 16.into();
        assert_eq!(run_fingerprint_in(&edited, 0, 2), second);
    }

    #[test]
    fn a_new_numerics_generation_changes_what_a_gallery_page_records() {
        assert_eq!(results_fingerprint_in(&spec(), 1), fingerprint(&spec()));
        let second = results_fingerprint_in(&spec(), 2);
        assert_ne!(second, fingerprint(&spec()));
        assert_ne!(second, results_fingerprint_in(&spec(), 3));
    }
}
