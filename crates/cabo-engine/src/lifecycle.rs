//! A run's life on disk, in one place: claimed, prepared, resumed or started, marked
//! complete.
//!
//! 1. **Claim** ([`claim`]): a run complete for the current spec is left alone; otherwise
//!    the process locks it (`rep-<r>.lock`) and then reads its completion again, since
//!    another process may have completed it between the first read and the lock. A run
//!    locked elsewhere is running there.
//! 2. **Prepare** ([`prepare`]): a complete run of another version of the spec moves to
//!    `superseded/<its fingerprint>/<policy>/` (results are never overwritten), the stale
//!    completion marker goes, and half-written checkpoint files of a killed process are
//!    removed.
//! 3. **Resume or start**: the run loop ([`crate::run_loop`]) resumes from the run's
//!    checkpoint where it fits the run ([`crate::checkpoint`]), else starts afresh.
//! 4. **Complete** ([`mark_complete`]): the completion marker `rep-<r>.json` is written
//!    atomically, last, and the checkpoint removed; the lock is released by its holder.
//!
//! Whatever a run sets aside goes under `superseded/`, one way: a complete run of another
//! version ([`store::supersede`]) and an evaluation journal of another version or run
//! ([`set_aside_journal`]).

use crate::checkpoint::RunIdentity;
use crate::store::{self, RunFiles, RunSummary, io_error};
use cabo_core::{Error, Result};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

/// What a sweep may do with one of its runs.
pub enum Claim {
    /// Run it, holding its lock (released, and its file removed, once it completes).
    Run(store::RunLock, PathBuf),
    /// It is complete on disk.
    Complete(Box<RunSummary>),
    /// The sweep is being cancelled: start nothing new.
    Cancelled,
    /// Another process holds its lock.
    Elsewhere,
    /// Its lock cannot be taken.
    Failed(Error),
}

/// Claims the run of `files` that must hold `slot` for this process (see the module
/// documentation). `label` names the run in a warning about damaged results.
pub fn claim(
    files: &RunFiles,
    slot: &store::Slot,
    cancel: &AtomicBool,
    require_locks: bool,
    label: &str,
) -> Claim {
    match store::completion(files, slot) {
        store::Completion::Complete(summary) => return Claim::Complete(Box::new(summary)),
        store::Completion::Damaged(why) => {
            tracing::warn!(run = label, "damaged result: {why}; the run is made again")
        }
        _ => {}
    }
    if cancel.load(Ordering::Relaxed) {
        return Claim::Cancelled;
    }
    match store::RunLock::try_acquire(&files.lock, require_locks) {
        // Read again under the lock: another process may have completed it meanwhile.
        Ok(Some(lock)) => match store::completion(files, slot) {
            store::Completion::Complete(summary) => {
                lock.release_complete(&files.lock);
                Claim::Complete(Box::new(summary))
            }
            _ => Claim::Run(lock, files.lock.clone()),
        },
        Ok(None) => Claim::Elsewhere,
        Err(e) => Claim::Failed(Error::invalid(format!(
            "cannot lock {}: {e}",
            files.lock.display()
        ))),
    }
}

/// Readies a claimed run's files in `spec_dir` for this version's run (step 2 of the
/// module documentation).
pub fn prepare(spec_dir: &Path, files: &RunFiles, slot: &store::Slot) -> Result<()> {
    let dir = files
        .records
        .parent()
        .expect("run files live in a directory");
    fs::create_dir_all(dir).map_err(io_error(dir))?;
    if let store::Completion::OtherVersion(old) = store::completion(files, slot) {
        let (policy, rep) = (slot.policy.as_str(), slot.replication);
        store::supersede(spec_dir, policy, rep, &old.spec_fingerprint)
            .map_err(io_error(&spec_dir.join(cabo_spec::layout::SUPERSEDED)))?;
        tracing::warn!(
            policy,
            rep,
            "a complete run of an earlier version of the spec was moved to {}/{}",
            cabo_spec::layout::SUPERSEDED,
            old.spec_fingerprint
        );
    }
    let _ = fs::remove_file(&files.done);
    remove_orphaned_checkpoints(&files.checkpoint);
    Ok(())
}

/// Marks the run complete: its summary written atomically to its marker, its checkpoint
/// removed.
pub fn mark_complete(files: &RunFiles, summary: &RunSummary) -> Result<()> {
    let json = serde_json::to_vec_pretty(summary).map_err(|e| Error::invalid(e.to_string()))?;
    store::write_atomic(&files.done, &json).map_err(io_error(&files.done))?;
    let _ = fs::remove_file(&files.checkpoint);
    Ok(())
}

/// Moves the evaluation journal at `path`, written for `run` (another version of the spec,
/// or another run), to `superseded/<its fingerprint>/<its policy>/` of the spec directory
/// `path` lies in, beside that version's other files. A journal already there is kept: this
/// one then takes the first free name `rep-<r>.evaluations.<k>.jsonl`.
pub fn set_aside_journal(path: &Path, run: &RunIdentity) -> Result<()> {
    let spec_dir = path
        .parent()
        .and_then(Path::parent)
        .expect("a journal lives in <spec dir>/<policy>/");
    let archive = spec_dir
        .join(cabo_spec::layout::SUPERSEDED)
        .join(&run.fingerprint);
    let to = RunFiles::new(&archive, &run.policy, run.replication).evaluations;
    tracing::warn!(
        path = %path.display(),
        aside = %archive.display(),
        "the evaluation journal belongs to an earlier version of the spec or another run: \
         kept aside, the run evaluates afresh"
    );
    let dir = to.parent().expect("run files live in a directory");
    fs::create_dir_all(dir).map_err(io_error(dir))?;
    let free = (1..)
        .map(|k| to.with_extension(format!("{k}.jsonl")))
        .find(|p| !p.exists());
    let to = if to.exists() {
        free.expect("some name is free")
    } else {
        to
    };
    fs::rename(path, &to).map_err(io_error(path))
}

/// Removes the temporary files of checkpoint writes a killed process left half-written next
/// to `checkpoint` (the atomic rename never happened, so the checkpoint itself is whole).
fn remove_orphaned_checkpoints(checkpoint: &Path) {
    let (Some(dir), Some(name)) = (checkpoint.parent(), checkpoint.file_name()) else {
        return;
    };
    let prefix = format!("{}.", name.to_string_lossy());
    for entry in fs::read_dir(dir).into_iter().flatten().flatten() {
        let file = entry.file_name().to_string_lossy().to_string();
        if file.starts_with(&prefix) && file.ends_with(".tmp") {
            let _ = fs::remove_file(entry.path());
        }
    }
}
