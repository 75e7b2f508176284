//! # cabo-runner
//!
//! cabo's commands, behind `cargo xtask`: `run` reads spec files and validates all of them
//! before anything runs ([`cabo_spec`]), expands each into runs (policies × replications),
//! executes the runs in parallel on a rayon pool ([`sweep`]; each run deterministic
//! through [`cabo_engine`], so results do not depend on the thread count), skips runs a
//! previous invocation completed, and writes each spec's report ([`cabo_report`]). Beside it:
//! studies ([`study`]), a sweep's progress ([`status`]), ask/tell from a file ([`suggest`]),
//! `inspect` and the plugin catalogue ([`catalogue`]).
//!
//! It owns parallelism; it must not contain any algorithm (those are plugins) and must not
//! know any plugin by name (plugins are found through the registry).

#![forbid(unsafe_code)]

pub mod catalogue;
pub mod inspect;
pub mod report_target;
pub mod status;
pub mod study;
pub mod suggest;
pub mod sweep;

pub use cabo_engine::{RunId, RunSummary, Session, Suggested, Suggestion};
pub use cabo_report::summary::{PolicySummary, SpecSummary};
pub use cabo_spec::{LoadedSpec, Spec, SpecError};

pub use sweep::{SpecOutcome, run_specs};

use std::fmt;
use std::path::{Path, PathBuf};

/// Options of `cargo xtask run` that change what runs.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Apply each spec's `smoke:` overrides.
    pub smoke: bool,
    /// Run only these policies (by name).
    pub only: Vec<String>,
    /// Override the number of replications.
    pub replications: Option<usize>,
    /// Skip the replications below this one: they ran elsewhere and their per-run values
    /// are committed (a gallery plan's `--from-replication`); default 0.
    pub from_replication: usize,
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
    /// [`cabo_engine::store::RunLock`]): for sweeps that share runs between machines.
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
            from_replication: 0,
            out: PathBuf::from("results"),
            threads: None,
            progress: false,
            bars: false,
            shard: None,
            report: true,
            checkpoint_every: cabo_engine::checkpoint::DEFAULT_INTERVAL,
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
    cabo_core::registry::likely_meant(name, &refs)
        .map(|c| format!(" (did you mean {}?)", dir.join(c).display()))
        .unwrap_or_default()
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
    let results = sweep::in_pool(opts.threads, work)?;
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

/// Checks `--only`, `--replications` and `--from-replication` against the spec. They select
/// runs; the spec itself (its results directory, `spec.json`, report and manifest) stays
/// whole.
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
    let reps = opts.replications.unwrap_or(s.spec.replications);
    if opts.from_replication >= reps {
        return Err(s.error_at(
            "replications",
            format!(
                "--from-replication {} leaves no replication to run: the selection is \
                 replications 0 … {} (replications are counted from 0)",
                opts.from_replication,
                reps - 1
            ),
        ));
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

/// The runs of `spec` that `--only`, `--replications` and `--from-replication` select,
/// policy-major.
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
        runs.extend((opts.from_replication..reps).map(|r| RunId {
            policy: p,
            replication: r,
        }));
    }
    runs
}

/// Re-exported for callers that only need the cancellation flag type.
pub use std::sync::atomic::AtomicBool as CancelFlag;

/// Path helper for tests and tools: the results directory of a spec (of its smoke variant
/// with `smoke`).
pub fn spec_dir(out: &Path, spec: &LoadedSpec, smoke: bool) -> PathBuf {
    cabo_engine::store::spec_dir(out, &spec.spec.name, smoke)
}
