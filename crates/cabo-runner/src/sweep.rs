//! The sweep: every selected run of every spec, claimed, executed on a pool of workers and
//! assembled into one outcome per spec.
//!
//! [`run_specs`] reads as its steps: `plan` the jobs (write each spec's `spec.json`, list
//! the runs `--only`/`--replications` select, keep this shard's, order them replication by
//! replication), run each (`run_job`: claim it by its lock, execute it, count it in the
//! `Progress`), then `collect_outcomes` (tally, write manifests and reports from what
//! is on disk).

use crate::{RunError, RunOptions, selected_runs};
use cabo_engine::RunId;
use cabo_engine::checkpoint::Pacing;
use cabo_engine::lifecycle::{self, Claim};
use cabo_engine::run_loop::{self, Executed};
use cabo_engine::store;
use cabo_report as report;
use cabo_report::summary::{self, SpecSummary};
use cabo_spec::LoadedSpec;
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

/// What one invocation did with one spec.
#[derive(Debug, Clone)]
pub struct SpecOutcome {
    /// The spec's name.
    pub name: String,
    /// Where its results are.
    pub dir: PathBuf,
    /// Runs executed now.
    pub executed: usize,
    /// Of those, runs that resumed from the checkpoint of an earlier invocation.
    pub resumed: usize,
    /// Runs skipped because a previous invocation completed them.
    pub skipped: usize,
    /// Runs skipped because another process is running them (it holds their lock).
    pub elsewhere: usize,
    /// Whether every run of the spec is complete (from any invocation or shard); `run.json`
    /// is written then.
    pub complete: bool,
    /// The report, when it was written.
    pub report: Option<report::Written>,
    /// Each policy's numbers at the budget over the runs complete on disk (all of the
    /// spec's when `complete`), as in the report; `None` before any run is complete.
    pub summary: Option<SpecSummary>,
}

/// Runs every spec (validated already) and returns what happened. Completed runs are
/// skipped; failures are collected and reported after every other run has finished.
pub fn run_specs(
    specs: &[LoadedSpec],
    opts: &RunOptions,
    cancel: &AtomicBool,
) -> Result<Vec<SpecOutcome>, RunError> {
    let (jobs, prints) = plan(specs, opts)?;
    let progress = Progress::new(jobs.len(), opts);
    let pacing = Pacing {
        every: opts.checkpoint_every,
        pause_after: opts.pause_after,
    };
    let sweep = Sweep {
        specs,
        prints: &prints,
        cancel,
        opts,
        pacing,
        progress: &progress,
    };
    let work = || {
        jobs.iter()
            .par_bridge()
            .map(|&job| run_job(&sweep, job))
            .collect::<Vec<_>>()
    };
    let mut results = in_pool(opts.threads, work)?;
    // Workers finish in any order; outcomes are assembled in a fixed one.
    results.sort_by_key(|(si, id, ..)| (*si, id.policy, id.replication));
    drop(progress);
    collect_outcomes(specs, &prints, results, opts)
}

/// One run of the sweep: the index of its spec and which run.
type Job = (usize, RunId);

/// Writes each spec's `spec.json` and lists this invocation's jobs in the order they start,
/// with each spec's directory and fingerprints.
fn plan(specs: &[LoadedSpec], opts: &RunOptions) -> Result<(Vec<Job>, Vec<SpecPrints>), RunError> {
    let mut jobs = Vec::new();
    let mut prints = Vec::new();
    for (si, s) in specs.iter().enumerate() {
        let sp = SpecPrints::new(&opts.out, s, opts.smoke);
        write_spec_json(&sp.dir, s)?;
        jobs.extend(selected_runs(s, opts).into_iter().map(|id| (si, id)));
        prints.push(sp);
    }
    // Shards split the run list sorted by names (not by argument order), so every shard of
    // a sweep agrees on the split however its specs were listed.
    jobs.sort_by(|a, b| {
        let key = |(si, id): &Job| {
            (
                specs[*si].spec.name.clone(),
                specs[*si].spec.policies[id.policy].name.clone(),
                id.replication,
            )
        };
        key(a).cmp(&key(b))
    });
    if let Some(sh) = opts.shard {
        jobs = jobs
            .into_iter()
            .enumerate()
            .filter(|(k, _)| k % sh.count == sh.index)
            .map(|(_, j)| j)
            .collect();
    }
    // Runs start replication by replication — the first replication of every policy of
    // every spec (in the order the specs were given), then the second, … — so a sweep
    // stopped or inspected part way has comparable replications of every policy, not every
    // replication of a few. Each worker takes the next run when it is free. Results do not
    // depend on the order.
    jobs.sort_by_key(|(si, id)| (id.replication, *si, id.policy));
    Ok((jobs, prints))
}

/// What every job of a sweep shares.
struct Sweep<'a> {
    specs: &'a [LoadedSpec],
    prints: &'a [SpecPrints],
    cancel: &'a AtomicBool,
    opts: &'a RunOptions,
    pacing: Pacing,
    progress: &'a Progress,
}

/// Claims one job, runs it if it is this process's to run, and counts it.
fn run_job(sw: &Sweep<'_>, (si, id): Job) -> JobResult {
    let s = &sw.specs[si];
    let sp = &sw.prints[si];
    let (lock, lock_path) = match claim(s, sp, id, sw.cancel, sw.opts.require_locks) {
        Claim::Run(lock, path) => (lock, path),
        Claim::Complete(summary) => {
            sw.progress.finished();
            let done = Executed {
                summary: *summary,
                resumed_after: None,
            };
            return (si, id, Ok(Some(done)), Source::Complete);
        }
        Claim::Cancelled => return (si, id, Ok(None), Source::Ran),
        Claim::Elsewhere => {
            let n = sw.progress.finished();
            sw.progress
                .say(n, s, id, "is running in another process: skipped");
            return (si, id, Ok(None), Source::Elsewhere);
        }
        Claim::Failed(e) => return (si, id, Err(e), Source::Ran),
    };
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        run_loop::execute(
            s,
            id,
            &sp.dir,
            &sp.runs[id.policy],
            sw.cancel,
            sw.pacing,
            &sw.progress.run_parent,
        )
    }))
    .unwrap_or_else(|panic| {
        let msg = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "unknown panic".into());
        Err(cabo_core::Error::numerical(format!(
            "a plugin panicked: {msg}"
        )))
    });
    if matches!(result, Ok(Some(_))) {
        lock.release_complete(&lock_path);
    }
    let n = sw.progress.finished();
    let how = match &result {
        Ok(None) => None,
        Ok(Some(Executed {
            resumed_after: Some(k),
            ..
        })) => Some(format!("done (resumed after {k} decisions)")),
        Ok(_) => Some("done".to_string()),
        Err(_) => Some("FAILED".to_string()),
    };
    if let Some(how) = how {
        let elapsed = sw.progress.started.elapsed().as_secs_f64();
        sw.progress
            .say(n, s, id, &format!("{how} ({elapsed:.1} s elapsed)"));
    }
    (si, id, result, Source::Ran)
}

/// How far a sweep is: the count of jobs finished, the sweep's bar (when the command line
/// shows bars) and a line per finished run on stderr (with `--progress`).
struct Progress {
    finished: AtomicUsize,
    total: usize,
    started: Instant,
    lines: bool,
    /// The sweep's span, carrying its bar.
    bar: tracing::Span,
    /// The span runs open theirs under (the sweep's when bars are shown).
    run_parent: tracing::Span,
}

impl Progress {
    fn new(total: usize, opts: &RunOptions) -> Self {
        let bar = if opts.bars {
            tracing::info_span!("sweep")
        } else {
            tracing::Span::none()
        };
        if !bar.is_disabled() {
            use tracing_indicatif::span_ext::IndicatifSpanExt;
            let style = tracing_indicatif::style::ProgressStyle::with_template(
                "{bar:40.green/white} {pos}/{len} runs done, {elapsed} elapsed, ETA {eta}",
            )
            .expect("the template is valid");
            bar.pb_set_style(&style);
            bar.pb_set_length(total as u64);
        }
        let run_parent = if opts.bars {
            bar.clone()
        } else {
            tracing::Span::none()
        };
        Progress {
            finished: AtomicUsize::new(0),
            total,
            started: Instant::now(),
            lines: opts.progress,
            bar,
            run_parent,
        }
    }

    /// Counts one more job finished, advancing the bar; how many are finished now.
    fn finished(&self) -> usize {
        use tracing_indicatif::span_ext::IndicatifSpanExt;
        if !self.bar.is_disabled() {
            self.bar.pb_inc(1);
        }
        self.finished.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// The line of the `n`-th finished job, run `id` of `s`, with `--progress`.
    fn say(&self, n: usize, s: &LoadedSpec, id: RunId, what: &str) {
        if self.lines {
            eprintln!(
                "[{n}/{}] {} / {} / rep {} {what}",
                self.total, s.spec.name, s.spec.policies[id.policy].name, id.replication,
            );
        }
    }
}

/// Runs `work` on a pool of `threads` workers, or on the global pool (all cores, or
/// `RAYON_NUM_THREADS`) when no count is given.
pub(crate) fn in_pool<R: Send>(
    threads: Option<usize>,
    work: impl FnOnce() -> R + Send,
) -> Result<R, RunError> {
    match threads {
        Some(n) => Ok(rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .map_err(|e| RunError::Setup(format!("cannot start {n} worker threads: {e}")))?
            .install(work)),
        None => Ok(work()),
    }
}

/// Where a spec's results go and the fingerprints its runs are checked against.
pub(crate) struct SpecPrints {
    pub dir: PathBuf,
    /// The whole spec's fingerprint (the run manifest's).
    pub whole: String,
    /// [`store::run_fingerprint`] per policy.
    pub runs: Vec<String>,
}

impl SpecPrints {
    /// The results directory of `spec` under `out` (its smoke variant's with `smoke`) and
    /// the fingerprints of its runs.
    pub(crate) fn new(out: &Path, spec: &LoadedSpec, smoke: bool) -> Self {
        SpecPrints {
            dir: store::spec_dir(out, &spec.spec.name, smoke),
            whole: store::fingerprint(&spec.spec),
            runs: (0..spec.spec.policies.len())
                .map(|p| store::run_fingerprint(&spec.spec, p))
                .collect(),
        }
    }

    /// The files of replication `rep` of policy `policy`.
    pub(crate) fn files(&self, spec: &LoadedSpec, policy: usize, rep: usize) -> store::RunFiles {
        store::RunFiles::new(&self.dir, &spec.spec.policies[policy].name, rep)
    }

    /// What the files of replication `rep` of policy `policy` say about it.
    pub(crate) fn completion(
        &self,
        spec: &LoadedSpec,
        policy: usize,
        rep: usize,
    ) -> store::Completion {
        store::completion(
            &self.files(spec, policy, rep),
            &self.slot(spec, policy, rep),
        )
    }

    /// The run that replication `rep` of policy `policy` must hold.
    pub(crate) fn slot(&self, spec: &LoadedSpec, policy: usize, rep: usize) -> store::Slot {
        let s = &spec.spec;
        store::Slot::new(
            s.seed_name(),
            &self.runs[policy],
            &s.policies[policy].name,
            rep,
        )
    }
}

/// Writes the resolved spec to `dir/spec.json`. When the directory holds another version
/// of the spec, that version's `spec.json`, manifest and report move to
/// `superseded/spec-<fingerprint>/` first: a report of the old version never stands next
/// to the new spec as if it were current, and nothing is deleted.
fn write_spec_json(dir: &Path, s: &LoadedSpec) -> Result<(), RunError> {
    let setup = |what: &str, e: std::io::Error| {
        RunError::Setup(format!("cannot {what} {}: {e}", dir.display()))
    };
    std::fs::create_dir_all(dir).map_err(|e| setup("create the output directory", e))?;
    let spec_json =
        serde_json::to_vec_pretty(&s.spec).map_err(|e| RunError::Setup(e.to_string()))?;
    let path = dir.join("spec.json");
    match std::fs::read(&path) {
        Ok(old) if old == spec_json => return Ok(()),
        Ok(old) => {
            let print = serde_json::from_slice::<serde_json::Value>(&old)
                .map(|v| store::fingerprint(&v))
                .unwrap_or_else(|_| store::fingerprint(&String::from_utf8_lossy(&old)));
            store::retire_version(dir, &print)
                .map_err(|e| setup("move aside the old report in", e))?;
        }
        Err(_) => {}
    }
    store::write_atomic(&path, &spec_json).map_err(|e| setup("write to the output directory", e))
}

/// Claims replication `id` of `spec` for this process ([`lifecycle::claim`]).
fn claim(
    spec: &LoadedSpec,
    prints: &SpecPrints,
    id: RunId,
    cancel: &AtomicBool,
    require_locks: bool,
) -> Claim {
    let label = format!(
        "{} / {} / rep {}",
        spec.spec.name, spec.spec.policies[id.policy].name, id.replication
    );
    lifecycle::claim(
        &prints.files(spec, id.policy, id.replication),
        &prints.slot(spec, id.policy, id.replication),
        cancel,
        require_locks,
        &label,
    )
}

/// Where a job's outcome came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    /// This invocation ran it (or was cancelled before starting it).
    Ran,
    /// It was complete on disk already.
    Complete,
    /// Another process holds its lock: it is running there.
    Elsewhere,
}

/// A job's outcome: the spec's index, the run, what became of it and where that came from.
type JobResult = (usize, RunId, cabo_core::Result<Option<Executed>>, Source);

/// What became of each spec of the sweep: counts of its runs by source, the failures, and
/// the summaries and reports of the specs whose runs are all complete.
fn collect_outcomes(
    specs: &[LoadedSpec],
    prints: &[SpecPrints],
    results: Vec<JobResult>,
    opts: &RunOptions,
) -> Result<Vec<SpecOutcome>, RunError> {
    let mut outcomes: Vec<SpecOutcome> = specs
        .iter()
        .zip(prints)
        .map(|(s, prints)| SpecOutcome {
            name: s.spec.name.clone(),
            dir: prints.dir.clone(),
            executed: 0,
            resumed: 0,
            skipped: 0,
            elsewhere: 0,
            complete: false,
            report: None,
            summary: None,
        })
        .collect();
    let mut failures = Vec::new();
    let mut incomplete = vec![false; specs.len()];
    for (si, id, result, source) in results {
        let s = &specs[si];
        match result {
            // Not `incomplete`: the other process may have finished the run by now, and the
            // invocation that ends last must see every run complete on disk and report.
            Ok(None) if source == Source::Elsewhere => outcomes[si].elsewhere += 1,
            Ok(Some(done)) => {
                let o = &mut outcomes[si];
                if source == Source::Complete {
                    o.skipped += 1;
                } else {
                    o.executed += 1;
                    o.resumed += usize::from(done.resumed_after.is_some());
                }
            }
            Ok(None) => incomplete[si] = true,
            Err(e) => {
                incomplete[si] = true;
                failures.push(format!(
                    "{} ({}): policy {:?}, replication {}: {e}",
                    s.spec.name,
                    s.path.display(),
                    s.spec.policies[id.policy].name,
                    id.replication
                ));
            }
        }
    }
    for (si, o) in outcomes.iter_mut().enumerate() {
        finish_spec(o, &specs[si], &prints[si], incomplete[si], opts)?;
    }
    if failures.is_empty() {
        Ok(outcomes)
    } else {
        Err(RunError::Runs(failures))
    }
}

/// A spec's summary, and where all its runs are complete, its manifest and report.
fn finish_spec(
    o: &mut SpecOutcome,
    spec: &LoadedSpec,
    prints: &SpecPrints,
    incomplete: bool,
    opts: &RunOptions,
) -> Result<(), RunError> {
    // Read back from disk rather than using this invocation's runs: with shards, the
    // invocation that completes the last run writes the manifest and the report, and
    // their bytes must not depend on which one it was.
    let spec_json = serde_json::to_value(&spec.spec).map_err(|e| RunError::Setup(e.to_string()))?;
    let runs = report::load(&o.dir, &spec_json, spec.path.parent());
    let built = runs
        .as_ref()
        .map_err(Clone::clone)
        .and_then(|r| r.report(None));
    o.summary = built.as_ref().ok().map(summary::of_report);
    let runs = match runs {
        Ok(runs) if runs.complete() && !incomplete => runs,
        _ => return Ok(()),
    };
    let built = built.map_err(|e| RunError::Setup(format!("report: {e}")))?;
    o.complete = true;
    let summary = summary::of_report(&built);
    let run_json = summary::run_manifest(spec, &prints.whole, runs.len(), summary);
    store::write_atomic(&o.dir.join("run.json"), run_json.as_bytes())
        .map_err(|e| RunError::Setup(format!("{}: {e}", o.dir.display())))?;
    if opts.report {
        let written = report::write(&o.dir, &runs, &built)
            .map_err(|e| RunError::Setup(format!("report: {e}")))?;
        tracing::info!(report = %written.markdown.display(), "report written");
        o.report = Some(written);
    }
    Ok(())
}
