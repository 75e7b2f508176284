//! # cabo-runner
//!
//! The run engine behind `cargo xtask run`: it reads spec files and validates all of them
//! before anything runs, expands each into runs (policies × replications), executes the runs
//! in parallel with rayon (each run single-threaded and deterministic, so results do not
//! depend on the thread count), writes results incrementally, skips runs a previous
//! invocation completed, and summarises what was run.
//!
//! It owns file I/O and parallelism; it must not contain any algorithm (those are plugins)
//! and must not know any plugin by name (plugins are found through the registry).

#![forbid(unsafe_code)]

pub mod bench;
pub mod catalogue;
pub mod checkpoint;
pub mod cpu_time;
pub mod engine;
pub mod error;
pub mod gallery;
pub mod inspect;
pub mod locate;
pub mod report;
pub mod scaffold;
pub mod slurm;
pub mod spec;
pub mod status;
pub mod store;
pub mod study;
pub mod summary;

pub use engine::RunId;
pub use error::SpecError;
pub use spec::{LoadedSpec, Spec};
pub use store::RunSummary;
pub use summary::{PolicySummary, SpecSummary};

use checkpoint::Pacing;
use engine::Executed;
use rayon::prelude::*;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Instant;

/// Options of `cargo xtask run` that change what runs.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Apply each spec's `smoke:` overrides.
    pub smoke: bool,
    /// Run only these policies (by name).
    pub only: Vec<String>,
    /// Override the number of replications.
    pub replications: Option<usize>,
    /// Where results go (`<out>/<spec name>/…`).
    pub out: PathBuf,
    /// Worker threads (`None`: rayon's default, which honours `RAYON_NUM_THREADS`).
    pub threads: Option<usize>,
    /// Print a line per finished run on stderr.
    pub progress: bool,
    /// Open a tracing span per sweep and per run that carries progress bars (runs done and
    /// budget consumed) when the command line installs an indicatif layer.
    pub bars: bool,
    /// Run only this shard of the sorted run list (see [`Shard`]).
    pub shard: Option<Shard>,
    /// Write each spec's report (`summary.csv`, `report.md`, figures) once all its runs are
    /// complete.
    pub report: bool,
    /// Minimum wall time between two checkpoints of a run in progress (zero: after every
    /// decision); default one minute. A killed sweep loses at most this much of each run.
    pub checkpoint_every: std::time::Duration,
    /// Pause each run, checkpointing it, after this many decisions of this invocation, as an
    /// interruption there would; the next invocation resumes it.
    pub pause_after: Option<usize>,
    /// Fail a run rather than run it unlocked where the file system cannot lock it (see
    /// [`store::RunLock`]): for sweeps that share runs between machines.
    pub require_locks: bool,
}

/// A deterministic subset of a sweep's runs: run k of the list of every (spec name, policy
/// name, replication), sorted, belongs to shard `k mod count`. Shards of one sweep write
/// disjoint files into the same directory, so their results merge by file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shard {
    /// This shard, `0..count`.
    pub index: usize,
    /// How many shards the sweep is split into.
    pub count: usize,
}

impl std::str::FromStr for Shard {
    type Err = String;

    /// Parses `i/n` with `0 <= i < n`.
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || {
            format!(
                "--shard {s:?}: expected INDEX/COUNT with 0 <= INDEX < COUNT, e.g. 0/4 \
                 (shards are numbered from 0, like Slurm array tasks)"
            )
        };
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: usize = i.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            smoke: false,
            only: Vec::new(),
            replications: None,
            out: PathBuf::from("results"),
            threads: None,
            progress: false,
            bars: false,
            shard: None,
            report: true,
            checkpoint_every: checkpoint::DEFAULT_INTERVAL,
            pause_after: None,
            require_locks: false,
        }
    }
}

/// Anything that stops a sweep from starting or finishing.
#[derive(Debug)]
pub enum RunError {
    /// One or more specs are invalid (all are reported, not just the first).
    Specs(Vec<SpecError>),
    /// Something outside the specs (a path, the output directory).
    Setup(String),
    /// Some runs failed; the others completed and were written.
    Runs(Vec<String>),
}

impl fmt::Display for RunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunError::Specs(errors) => {
                for (i, e) in errors.iter().enumerate() {
                    if i > 0 {
                        writeln!(f)?;
                    }
                    write!(f, "error: {e}")?;
                }
                Ok(())
            }
            RunError::Setup(m) => write!(f, "error: {m}"),
            RunError::Runs(failures) => {
                write!(f, "error: {} run(s) failed:", failures.len())?;
                for m in failures {
                    write!(f, "\n  {m}")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for RunError {}

/// Expands spec arguments (files or glob patterns) into spec files, in order, without
/// duplicates. A path that does not exist or a pattern that matches nothing is an error.
pub fn resolve_spec_paths(args: &[String]) -> Result<Vec<PathBuf>, RunError> {
    if args.is_empty() {
        return Err(RunError::Setup(
            "no spec given: name one or more spec files or globs, e.g. `specs/quickstart.yaml`"
                .into(),
        ));
    }
    let mut out: Vec<PathBuf> = Vec::new();
    for arg in args {
        let is_glob = arg.contains(['*', '?', '[']);
        if !is_glob {
            let p = PathBuf::from(arg);
            if !p.is_file() {
                return Err(RunError::Setup(format!(
                    "{arg}: no such spec file{}",
                    suggest_sibling(&p)
                )));
            }
            if !out.contains(&p) {
                out.push(p);
            }
            continue;
        }
        let paths = glob::glob(arg)
            .map_err(|e| RunError::Setup(format!("{arg}: not a valid glob pattern: {e}")))?;
        let mut matched: Vec<PathBuf> = paths
            .filter_map(|p| p.ok())
            .filter(|p| p.is_file())
            .collect();
        matched.sort();
        if matched.is_empty() {
            return Err(RunError::Setup(format!(
                "{arg}: the pattern matches no spec file"
            )));
        }
        for p in matched {
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    Ok(out)
}

/// " (did you mean …?)" for a missing file whose directory holds a similar name.
fn suggest_sibling(p: &Path) -> String {
    let dir = p
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let Some(name) = p.file_name().and_then(|n| n.to_str()) else {
        return String::new();
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return String::new();
    };
    let names: Vec<String> = entries
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    match cabo_core::registry::closest_of(name, &refs) {
        Some(c) if strsim::jaro_winkler(name, c) > 0.7 => {
            format!(" (did you mean {}?)", dir.join(c).display())
        }
        _ => String::new(),
    }
}

/// The spec files of one invocation, by kind.
#[derive(Debug, Clone, Default)]
pub struct Experiments {
    /// Comparison specs (problem, budget, policies).
    pub comparisons: Vec<LoadedSpec>,
    /// Study specs (`study:`).
    pub studies: Vec<study::LoadedStudy>,
}

/// Loads and validates every spec file (comparisons and studies), applying the run options
/// (`--only` and `--replications` concern comparisons; studies have neither); all errors are
/// collected so a researcher fixes them in one pass.
pub fn load_experiments(paths: &[PathBuf], opts: &RunOptions) -> Result<Experiments, RunError> {
    let mut found = Experiments::default();
    let mut errors = Vec::new();
    for p in paths {
        let text = match std::fs::read_to_string(p) {
            Ok(t) => t,
            Err(e) => {
                errors.push(SpecError::new(
                    p,
                    None,
                    "",
                    format!("cannot read the spec file: {e}"),
                ));
                continue;
            }
        };
        if study::is_study(&text) {
            match study::LoadedStudy::parse(p, &text, opts.smoke) {
                Ok(s) => found.studies.push(s),
                Err(e) => errors.push(e),
            }
            continue;
        }
        match LoadedSpec::parse(p, &text, opts.smoke).and_then(|s| apply_options(s, opts)) {
            Ok(s) => found.comparisons.push(s),
            Err(e) => errors.push(e),
        }
    }
    // Results go to `<out>/<name>/`: names equal but for case share that directory on
    // case-insensitive file systems (macOS, Windows), so they collide too.
    let mut seen = std::collections::BTreeMap::new();
    let named = found
        .comparisons
        .iter()
        .map(|s| (&s.spec.name, &s.path, s.error_at("name", "")))
        .chain(
            found
                .studies
                .iter()
                .map(|s| (&s.file.name, &s.path, s.error_at("name", ""))),
        );
    for (name, path, mut at) in named {
        if let Some((other_name, other)) =
            seen.insert(name.to_lowercase(), (name.clone(), path.clone()))
        {
            let same = if other_name == *name {
                String::new()
            } else {
                format!(" (as {other_name:?}, the same directory on case-insensitive file systems)")
            };
            at.message = format!(
                "spec name {name:?} is also used by {}{same}: results would collide",
                other.display()
            );
            errors.push(at);
        }
    }
    if errors.is_empty() {
        Ok(found)
    } else {
        Err(RunError::Specs(errors))
    }
}

/// Runs every study (validated already) in the configured thread pool. Studies are not
/// split: with `--shard` they run in shard 0 only.
pub fn run_studies(
    studies: &[study::LoadedStudy],
    opts: &RunOptions,
) -> Result<Vec<study::StudyOutcome>, RunError> {
    if opts.shard.is_some_and(|s| s.index != 0) {
        return Ok(Vec::new());
    }
    let work = || {
        studies
            .iter()
            .map(|s| study::run_study(s, &opts.out))
            .collect::<Vec<_>>()
    };
    let results = in_pool(opts.threads, work)?;
    let (done, failed): (Vec<_>, Vec<_>) = results.into_iter().partition(|r| r.is_ok());
    if failed.is_empty() {
        Ok(done.into_iter().flatten().collect())
    } else {
        Err(RunError::Runs(
            failed.into_iter().filter_map(|r| r.err()).collect(),
        ))
    }
}

/// Loads and validates comparison specs, applying the run options; a study file among them
/// is an error (studies run through [`load_experiments`]).
pub fn load_specs(paths: &[PathBuf], opts: &RunOptions) -> Result<Vec<LoadedSpec>, RunError> {
    let found = load_experiments(paths, opts)?;
    let errors: Vec<SpecError> = found
        .studies
        .iter()
        .map(|s| {
            s.error_at(
                "study",
                "this is a study spec, which runs as one piece: use `cargo xtask run` (it is \
                 not split into runs, shards or Slurm tasks)",
            )
        })
        .collect();
    if errors.is_empty() {
        Ok(found.comparisons)
    } else {
        Err(RunError::Specs(errors))
    }
}

/// Checks `--only` and `--replications` against the spec. They select runs; the spec itself
/// (its results directory, `spec.json`, report and manifest) stays whole.
fn apply_options(s: LoadedSpec, opts: &RunOptions) -> Result<LoadedSpec, SpecError> {
    if let Some(r) = opts.replications {
        if r == 0 {
            return Err(s.error_at("replications", "--replications must be at least 1"));
        }
        if r > s.spec.replications {
            return Err(s.error_at(
                "replications",
                format!(
                    "--replications {r} is more than the spec's {}: --replications runs the \
                     first N replications of a spec; raise `replications:` in the spec to run more",
                    s.spec.replications
                ),
            ));
        }
    }
    let names: Vec<&str> = s.spec.policies.iter().map(|p| p.name.as_str()).collect();
    for want in &opts.only {
        if !names.contains(&want.as_str()) {
            let closest = cabo_core::registry::closest_of(want, &names)
                .map(|c| format!("; did you mean {c:?}?"))
                .unwrap_or_default();
            return Err(s.error_at(
                "policies",
                format!(
                    "--only {want:?} names no policy of this spec{closest} Policies: {}",
                    names.join(", ")
                ),
            ));
        }
    }
    Ok(s)
}

/// The runs of `spec` that `--only` and `--replications` select, policy-major.
pub fn selected_runs(spec: &LoadedSpec, opts: &RunOptions) -> Vec<RunId> {
    let reps = opts
        .replications
        .unwrap_or(spec.spec.replications)
        .min(spec.spec.replications);
    let mut runs = Vec::new();
    for (p, entry) in spec.spec.policies.iter().enumerate() {
        if !opts.only.is_empty() && !opts.only.contains(&entry.name) {
            continue;
        }
        runs.extend((0..reps).map(|r| RunId {
            policy: p,
            replication: r,
        }));
    }
    runs
}

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
        let key = |(si, id): &(usize, RunId)| {
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
    let total = jobs.len();
    let finished = AtomicUsize::new(0);
    let started = Instant::now();
    let sweep = if opts.bars {
        tracing::info_span!("sweep")
    } else {
        tracing::Span::none()
    };
    if !sweep.is_disabled() {
        use tracing_indicatif::span_ext::IndicatifSpanExt;
        let style = tracing_indicatif::style::ProgressStyle::with_template(
            "{bar:40.green/white} {pos}/{len} runs done, {elapsed} elapsed, ETA {eta}",
        )
        .expect("the template is valid");
        sweep.pb_set_style(&style);
        sweep.pb_set_length(total as u64);
    }
    let pacing = Pacing {
        every: opts.checkpoint_every,
        pause_after: opts.pause_after,
    };
    let run_parent = if opts.bars {
        sweep.clone()
    } else {
        tracing::Span::none()
    };
    let work = || {
        jobs.iter()
            .par_bridge()
            .map(|&(si, id)| {
                let s = &specs[si];
                let sp = &prints[si];
                let (lock, lock_path) = match claim(s, sp, id, cancel, opts.require_locks) {
                    Claim::Run(lock, path) => (lock, path),
                    Claim::Complete(summary) => {
                        finished.fetch_add(1, Ordering::Relaxed);
                        bump(&sweep);
                        let done = Executed {
                            summary,
                            resumed_after: None,
                        };
                        return (si, id, Ok(Some(done)), Source::Complete);
                    }
                    Claim::Cancelled => return (si, id, Ok(None), Source::Ran),
                    Claim::Elsewhere => {
                        let n = finished.fetch_add(1, Ordering::Relaxed) + 1;
                        bump(&sweep);
                        if opts.progress {
                            eprintln!(
                                "[{n}/{total}] {} / {} / rep {} is running in another process: skipped",
                                s.spec.name,
                                s.spec.policies[id.policy].name,
                                id.replication,
                            );
                        }
                        return (si, id, Ok(None), Source::Elsewhere);
                    }
                    Claim::Failed(e) => return (si, id, Err(e), Source::Ran),
                };
                let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    engine::execute(
                        s,
                        id,
                        &sp.dir,
                        &sp.runs[id.policy],
                        cancel,
                        pacing,
                        &run_parent,
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
                let n = finished.fetch_add(1, Ordering::Relaxed) + 1;
                bump(&sweep);
                if opts.progress && !matches!(result, Ok(None)) {
                    let how = match &result {
                        Ok(Some(Executed {
                            resumed_after: Some(k),
                            ..
                        })) => format!("done (resumed after {k} decisions)"),
                        Ok(_) => "done".to_string(),
                        Err(_) => "FAILED".to_string(),
                    };
                    eprintln!(
                        "[{n}/{total}] {} / {} / rep {} {how} ({:.1} s elapsed)",
                        s.spec.name,
                        s.spec.policies[id.policy].name,
                        id.replication,
                        started.elapsed().as_secs_f64()
                    );
                }
                (si, id, result, Source::Ran)
            })
            .collect::<Vec<_>>()
    };
    let mut results = in_pool(opts.threads, work)?;
    // Workers finish in any order; outcomes are assembled in a fixed one.
    results.sort_by_key(|(si, id, ..)| (*si, id.policy, id.replication));
    drop(sweep);
    collect_outcomes(specs, &prints, results, opts)
}

/// Runs `work` on a pool of `threads` workers, or on the global pool (all cores, or
/// `RAYON_NUM_THREADS`) when no count is given.
fn in_pool<R: Send>(
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

/// Advances the sweep's bar by one run.
fn bump(sweep: &tracing::Span) {
    use tracing_indicatif::span_ext::IndicatifSpanExt;
    if !sweep.is_disabled() {
        sweep.pb_inc(1);
    }
}

/// Where a spec's results go and the fingerprints its runs are checked against.
struct SpecPrints {
    dir: PathBuf,
    /// The whole spec's fingerprint (the run manifest's).
    whole: String,
    /// [`store::run_fingerprint`] per policy.
    runs: Vec<String>,
}

impl SpecPrints {
    /// The results directory of `spec` under `out` (its smoke variant's with `smoke`) and
    /// the fingerprints of its runs.
    fn new(out: &Path, spec: &LoadedSpec, smoke: bool) -> Self {
        SpecPrints {
            dir: store::spec_dir(out, &spec.spec.name, smoke),
            whole: store::fingerprint(&spec.spec),
            runs: (0..spec.spec.policies.len())
                .map(|p| store::run_fingerprint(&spec.spec, p))
                .collect(),
        }
    }

    /// The files of replication `rep` of policy `policy`.
    fn files(&self, spec: &LoadedSpec, policy: usize, rep: usize) -> store::RunFiles {
        store::RunFiles::new(&self.dir, &spec.spec.policies[policy].name, rep)
    }

    /// What the files of replication `rep` of policy `policy` say about it.
    fn completion(&self, spec: &LoadedSpec, policy: usize, rep: usize) -> store::Completion {
        store::completion(&self.files(spec, policy, rep), &self.runs[policy])
    }

    /// The summary of replication `rep` of policy `policy`, if that run is complete on disk.
    fn completed(&self, spec: &LoadedSpec, policy: usize, rep: usize) -> Option<RunSummary> {
        match self.completion(spec, policy, rep) {
            store::Completion::Complete(summary) => Some(summary),
            _ => None,
        }
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

/// What a sweep may do with one of its runs.
enum Claim {
    /// Run it, holding its lock (released, and its file removed, once it completes).
    Run(store::RunLock, PathBuf),
    /// It is complete on disk.
    Complete(RunSummary),
    /// The sweep is being cancelled: start nothing new.
    Cancelled,
    /// Another process holds its lock.
    Elsewhere,
    /// Its lock cannot be taken.
    Failed(cabo_core::Error),
}

/// Claims replication `id` of `spec` for this process: complete runs are left alone, and a
/// run is claimed by locking it and then finding it still incomplete, since another process
/// may have completed it since it was last looked at.
fn claim(
    spec: &LoadedSpec,
    prints: &SpecPrints,
    id: RunId,
    cancel: &AtomicBool,
    require_locks: bool,
) -> Claim {
    let completed = || prints.completed(spec, id.policy, id.replication);
    match prints.completion(spec, id.policy, id.replication) {
        store::Completion::Complete(summary) => return Claim::Complete(summary),
        store::Completion::Damaged(why) => tracing::warn!(
            spec = %spec.spec.name,
            policy = %spec.spec.policies[id.policy].name,
            rep = id.replication,
            "damaged result: {why}; the run is made again"
        ),
        _ => {}
    }
    if cancel.load(Ordering::Relaxed) {
        return Claim::Cancelled;
    }
    let files = prints.files(spec, id.policy, id.replication);
    match store::RunLock::try_acquire(&files.lock, require_locks) {
        Ok(Some(lock)) => match completed() {
            Some(summary) => {
                lock.release_complete(&files.lock);
                Claim::Complete(summary)
            }
            None => Claim::Run(lock, files.lock),
        },
        Ok(None) => Claim::Elsewhere,
        Err(e) => Claim::Failed(cabo_core::Error::invalid(format!(
            "cannot lock {}: {e}",
            files.lock.display()
        ))),
    }
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

type JobResult = (usize, RunId, cabo_core::Result<Option<Executed>>, Source);

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
        // Read back from disk rather than using this invocation's runs: with shards, the
        // invocation that completes the last run writes the manifest and the report, and
        // their bytes must not depend on which one it was.
        let spec_json =
            serde_json::to_value(&specs[si].spec).map_err(|e| RunError::Setup(e.to_string()))?;
        let runs = report::load(&o.dir, &spec_json);
        let built = runs
            .as_ref()
            .map_err(Clone::clone)
            .and_then(|r| r.report(None));
        o.summary = built.as_ref().ok().map(summary::of_report);
        let runs = match runs {
            Ok(runs) if runs.complete() && !incomplete[si] => runs,
            _ => continue,
        };
        let built = built.map_err(|e| RunError::Setup(format!("report: {e}")))?;
        o.complete = true;
        let summary = summary::of_report(&built);
        let run_json = summary::run_manifest(&specs[si], &prints[si].whole, runs.len(), summary);
        store::write_atomic(&o.dir.join("run.json"), run_json.as_bytes())
            .map_err(|e| RunError::Setup(format!("{}: {e}", o.dir.display())))?;
        if opts.report {
            let written = report::write(&o.dir, &runs, &built)
                .map_err(|e| RunError::Setup(format!("report: {e}")))?;
            tracing::info!(report = %written.markdown.display(), "report written");
            o.report = Some(written);
        }
    }
    if failures.is_empty() {
        Ok(outcomes)
    } else {
        Err(RunError::Runs(failures))
    }
}

/// Re-exported for callers that only need the cancellation flag type.
pub use std::sync::atomic::AtomicBool as CancelFlag;

/// Path helper for tests and tools: the results directory of a spec (of its smoke variant
/// with `smoke`).
pub fn spec_dir(out: &Path, spec: &LoadedSpec, smoke: bool) -> PathBuf {
    store::spec_dir(out, &spec.spec.name, smoke)
}
