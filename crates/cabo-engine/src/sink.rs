//! Where a run's events go.
//!
//! The run loop ([`crate::run_loop`]) decides, evaluates and keeps its state; everything it
//! reports goes through [`Sink`]s: an evaluation recorded, a decision's times, a checkpoint
//! due, the run complete. [`RecordFiles`] writes `rep-<r>.jsonl`, `rep-<r>.times.jsonl` and
//! the checkpoint, [`ProgressBar`] moves the run's bar and [`Log`] writes the debug log. The
//! loop holds no writer and no UI, so a new way of following runs is one more sink.

use crate::checkpoint::Checkpoint;
use crate::store::{RecordsDigest, RunFiles, io_error};
use cabo_core::{BudgetState, Diagnostics, Error, Phase, Result};
use serde::Serialize;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Read, Write};
use std::path::Path;

/// One line of `rep-<r>.jsonl`: an evaluation and where the run stands after it.
#[derive(Debug, Serialize)]
pub(crate) struct Record<'a> {
    pub iter: usize,
    pub phase: Phase,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub control_set: Option<usize>,
    pub x: &'a [f64],
    pub y: f64,
    pub cost: f64,
    pub cum_cost: f64,
    /// With several workers: the worker that ran the evaluation, its number in the order
    /// evaluations started, its start and finish on the simulated clock, and the numbers of
    /// the evaluations in flight when it was decided.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<Scheduled<'a>>,
    pub best_y: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub best_value: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub simple_regret: Option<f64>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub metrics: BTreeMap<String, f64>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub diagnostics: Diagnostics,
}

/// Where an evaluation ran on the simulated workers (see [`crate::workers`]).
#[derive(Debug, Serialize)]
pub(crate) struct Scheduled<'a> {
    pub worker: usize,
    pub evaluation: usize,
    pub start: f64,
    pub finish: f64,
    pub pending: &'a [usize],
}

/// One line of `rep-<r>.times.jsonl`: wall times of the model fits, the rest of the decision
/// and the evaluation, and the CPU time the run's thread spent on all three (unaffected by
/// pauses and by other processes; absent where the platform does not say).
#[derive(Debug, Serialize)]
pub(crate) struct Times {
    pub iter: usize,
    pub fit_s: f64,
    pub decide_s: f64,
    pub evaluate_s: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_s: Option<f64>,
}

/// Follows a run: one method per event, each a no-op unless the sink cares. Sinks see
/// events in the order of [`Sinks`], so a log line after a file sink's write reports
/// what is on disk.
pub(crate) trait Sink {
    /// An evaluation was made; `budget` is the budget after it.
    fn evaluated(&mut self, _record: &Record<'_>, _budget: &BudgetState) -> Result<()> {
        Ok(())
    }

    /// A decision's times, after its evaluation's record.
    fn timed(&mut self, _times: &Times) -> Result<()> {
        Ok(())
    }

    /// The run's state between two decisions is to be saved. A sink that writes files adds
    /// how far they go (a resumed run cuts them back to that) and saves it.
    fn checkpoint(&mut self, _checkpoint: &mut Checkpoint) -> Result<()> {
        Ok(())
    }

    /// The run is complete: what the sink wrote is made durable, and a sink that wrote the
    /// records returns their digest for the completion marker.
    fn seal(&mut self) -> Result<Option<RecordsDigest>> {
        Ok(None)
    }
}

/// A run's sinks, in the order they see events.
pub(crate) struct Sinks(Vec<Box<dyn Sink>>);

impl Sinks {
    /// The sinks of a run whose files are `files`, with its bar on `span`.
    pub fn new(files: RecordFiles, span: tracing::Span) -> Self {
        Sinks(vec![
            Box::new(files),
            Box::new(ProgressBar(span)),
            Box::new(Log),
        ])
    }

    /// Tells every sink of an evaluation.
    pub fn evaluated(&mut self, record: &Record<'_>, budget: &BudgetState) -> Result<()> {
        self.0
            .iter_mut()
            .try_for_each(|s| s.evaluated(record, budget))
    }

    /// Tells every sink of a decision's times.
    pub fn timed(&mut self, times: &Times) -> Result<()> {
        self.0.iter_mut().try_for_each(|s| s.timed(times))
    }

    /// Hands every sink the checkpoint due.
    pub fn checkpoint(&mut self, mut checkpoint: Checkpoint) -> Result<()> {
        self.0
            .iter_mut()
            .try_for_each(|s| s.checkpoint(&mut checkpoint))
    }

    /// Seals every sink; the digest of the records.
    pub fn seal(&mut self) -> Result<RecordsDigest> {
        let mut digest = None;
        for s in &mut self.0 {
            digest = s.seal()?.or(digest);
        }
        digest.ok_or_else(|| Error::invalid("the run has no record file to seal"))
    }
}

/// The run's record files and checkpoint. Every line is flushed as it is written, so the
/// files' lengths are where a checkpoint says they are; the records written so far are
/// hashed as they go, so a checkpoint also says what they were.
pub(crate) struct RecordFiles {
    files: RunFiles,
    records: BufWriter<File>,
    /// SHA-256 of everything in `records` (a resumed run's kept part included).
    records_hash: Sha256,
    times: BufWriter<File>,
}

/// Why a checkpoint's record files cannot be resumed from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unresumable {
    /// A record file is missing or shorter than the checkpoint says.
    Short,
    /// The records the checkpoint covers differ from what it saw (edited since).
    Edited,
}

impl RecordFiles {
    /// Empty record files of a fresh run.
    pub fn create(files: &RunFiles) -> Result<Self> {
        let create = |path: &Path| -> Result<BufWriter<File>> {
            Ok(BufWriter::new(File::create(path).map_err(io_error(path))?))
        };
        Ok(RecordFiles {
            records: create(&files.records)?,
            records_hash: Sha256::new(),
            times: create(&files.times)?,
            files: files.clone(),
        })
    }

    /// The record files cut back to where `checkpoint` left them and open for appending,
    /// once the records it covers are found to be the ones it saw (by digest, when the
    /// checkpoint has one).
    pub fn reopen(
        files: &RunFiles,
        checkpoint: &Checkpoint,
    ) -> std::result::Result<Self, Unresumable> {
        let (records, records_hash) = reopen_hashed(&files.records, checkpoint)?;
        Ok(RecordFiles {
            records,
            records_hash,
            times: reopen(&files.times, checkpoint.times_len).ok_or(Unresumable::Short)?,
            files: files.clone(),
        })
    }
}

/// The record file cut back to `checkpoint.records_len` bytes and open for appending, with
/// the hash of those bytes; an error when it is shorter or they are not what the checkpoint
/// saw.
fn reopen_hashed(
    path: &Path,
    checkpoint: &Checkpoint,
) -> std::result::Result<(BufWriter<File>, Sha256), Unresumable> {
    let len = checkpoint.records_len;
    let mut hasher = Sha256::new();
    let mut kept = File::open(path).map_err(|_| Unresumable::Short)?.take(len);
    let copied = std::io::copy(&mut kept, &mut hasher).map_err(|_| Unresumable::Short)?;
    if copied < len {
        return Err(Unresumable::Short);
    }
    if let Some(expected) = &checkpoint.records_sha256
        && crate::store::hex(hasher.clone()) != *expected
    {
        return Err(Unresumable::Edited);
    }
    let out = reopen(path, len).ok_or(Unresumable::Short)?;
    Ok((out, hasher))
}

/// `path` cut back to `len` bytes and open for appending; `None` when it is shorter.
fn reopen(path: &Path, len: u64) -> Option<BufWriter<File>> {
    let f = OpenOptions::new().append(true).open(path).ok()?;
    if f.metadata().ok()?.len() < len {
        return None;
    }
    f.set_len(len).ok()?;
    Some(BufWriter::new(f))
}

/// Writes `value` as one JSON line of `out` and flushes it; returns the bytes written.
fn write_line(out: &mut BufWriter<File>, path: &Path, value: &impl Serialize) -> Result<String> {
    let mut line = serde_json::to_string(value).map_err(|e| Error::invalid(e.to_string()))?;
    line.push('\n');
    out.write_all(line.as_bytes())
        .and_then(|_| out.flush())
        .map_err(io_error(path))?;
    Ok(line)
}

/// The length of a flushed file.
fn length(f: &BufWriter<File>, path: &Path) -> Result<u64> {
    f.get_ref()
        .metadata()
        .map(|m| m.len())
        .map_err(io_error(path))
}

impl Sink for RecordFiles {
    fn evaluated(&mut self, record: &Record<'_>, _budget: &BudgetState) -> Result<()> {
        let line = write_line(&mut self.records, &self.files.records, record)?;
        self.records_hash.update(line.as_bytes());
        Ok(())
    }

    fn timed(&mut self, times: &Times) -> Result<()> {
        write_line(&mut self.times, &self.files.times, times).map(drop)
    }

    fn checkpoint(&mut self, checkpoint: &mut Checkpoint) -> Result<()> {
        checkpoint.records_len = length(&self.records, &self.files.records)?;
        checkpoint.records_sha256 = Some(crate::store::hex(self.records_hash.clone()));
        checkpoint.times_len = length(&self.times, &self.files.times)?;
        checkpoint.save(&self.files.checkpoint)
    }

    /// Flushes the record file to disk and returns its digest: the completion marker is
    /// written only after the records it vouches for are durable.
    fn seal(&mut self) -> Result<Option<RecordsDigest>> {
        let path = &self.files.records;
        self.records.flush().map_err(io_error(path))?;
        self.records.get_ref().sync_all().map_err(io_error(path))?;
        self.times.flush().map_err(io_error(&self.files.times))?;
        RecordsDigest::of_file(path)
            .map(Some)
            .map_err(io_error(path))
    }
}

/// The run's progress bar (on its span, when the command line shows bars): per mille of a
/// cost budget, or evaluations of an iteration budget.
pub(crate) struct ProgressBar(pub tracing::Span);

impl Sink for ProgressBar {
    fn evaluated(&mut self, _record: &Record<'_>, b: &BudgetState) -> Result<()> {
        use tracing_indicatif::span_ext::IndicatifSpanExt;
        if self.0.is_disabled() {
            return Ok(());
        }
        match (b.budget.cost, b.budget.iterations) {
            (Some(c), _) => {
                self.0
                    .pb_set_position(((b.spent / c).min(1.0) * 1000.0).round() as u64);
                self.0.pb_set_message(&format!("cost {:.3} / {c}", b.spent));
            }
            (None, Some(n)) => {
                self.0.pb_set_position(b.iterations as u64);
                self.0
                    .pb_set_message(&format!("{} / {n} evaluations", b.iterations));
            }
            (None, None) => {}
        }
        Ok(())
    }
}

/// The debug log of a run's evaluations and checkpoints.
pub(crate) struct Log;

impl Sink for Log {
    fn evaluated(&mut self, r: &Record<'_>, _budget: &BudgetState) -> Result<()> {
        tracing::debug!(
            iter = r.iter,
            y = r.y,
            cost = r.cost,
            cum_cost = r.cum_cost,
            "evaluation"
        );
        Ok(())
    }

    fn checkpoint(&mut self, checkpoint: &mut Checkpoint) -> Result<()> {
        tracing::debug!(decisions = checkpoint.decisions, "checkpoint saved");
        Ok(())
    }
}
