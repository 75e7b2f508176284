//! Any program as a cabo problem: the `external` problem.
//!
//! A researcher's training script, simulator or lab robot driver is an objective when it
//! reads requests on its standard input and answers on its standard output, one JSON line
//! each ([`protocol`]). One process serves a whole run ([`process`]): started in the spec
//! file's directory on the run's first evaluation, given the run's seeds, evaluation
//! indices and replication index, and sent end-of-input when the run ends. Costs are what the program reports,
//! the wall-clock seconds an answer took (the hyperparameter-tuning case, with a `log_gp`
//! cost model), or the spec's own.
//!
//! Failures are never turned into numbers: a program that cannot be started, crashes, hangs
//! past `timeout_s`, prints something other than an answer (or an answer to another
//! request) or answers `{"error": …}` is asked again up to `retries` times (restarted first
//! unless it answered with an error; waiting [`backoff`] before each), then the run ends
//! with an error naming the evaluation and the run's log, where the program's standard
//! error and cabo's notes on each failure are kept. A stop requested while an evaluation
//! waits ([`cabo_core::interrupt`]) ends the wait and the program, and the evaluation
//! reports [`Error::Interrupted`]: the run resumes later, as after any interruption. Evaluations are
//! never asked twice: the problem asks the runner to journal every answer before the next
//! request ([`ExternalEvaluation`]), and a run started again replays them.
//!
//! Control sets: with `control_sets:` the problem is a cost-varying-subset problem like
//! `cvs`. cabo draws the open variables itself, from the spec's `distribution(s)` and the
//! evaluation's seed, and sends the full point with the index of the control set played, so
//! the program evaluates full points only and every policy of `cabo-cvs` works with it.

#![forbid(unsafe_code)]

pub mod process;
pub mod protocol;

use cabo_core::{
    ControlSet, Error, ExternalEvaluation, Outcome, Problem, ProblemInfo, ProblemSpec, Query,
    Result, Rng, derive_seed,
};
use cabo_toolkit::dist::{InputDistributions, VariableDistribution};
use process::{Failure, Program};
use protocol::Request;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

cabo_core::plugin_group!();

/// The least `timeout_s` (a millisecond: less could not be told from no time at all).
pub const MIN_TIMEOUT_S: f64 = 0.001;

/// The largest `timeout_s`: 30 days.
pub const MAX_TIMEOUT_S: f64 = 30.0 * 24.0 * 3600.0;

/// The most `retries` a spec may ask for.
pub const MAX_RETRIES: u32 = 100;

/// The wait before retry `k` (from 1): 0.1 s, doubling, at most 10 s, so that a program
/// that fails at once is not asked again in a tight loop.
pub fn backoff(k: u32) -> Duration {
    let doublings = k.saturating_sub(1).min(7);
    Duration::from_millis(100 << doublings).min(Duration::from_secs(10))
}

/// Where an evaluation's cost comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CostSource {
    /// The program's answer carries `cost` (required in every answer).
    Reported,
    /// The wall-clock seconds from sending the request to reading the answer.
    WallTime,
    /// The spec's own: its `cost:` function, per-set `costs:` with control sets, or 1 per
    /// evaluation without either.
    None,
}

/// The `external` problem as written in a spec.
///
/// ```yaml
/// problem:
///   type: external
///   command: ["python3", "objective.py"]   # argv, run in the spec file's directory
///   bounds: [[0, 15], [-5, 10]]            # the native box, one pair per input
///   names: [x, y]                          # optional: the inputs' names
///   cost: reported                         # or wall_time, or none (the spec's cost:)
///   timeout_s: 3600                        # per evaluation (default 3600; 0.001 to 2592000)
///   retries: 1                             # asks again after a failure (default 0, at most 100)
///   metrics: [train_s]                     # names the program may report in `metrics`
/// ```
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExternalSpec {
    /// The program and its arguments. A first element with a `/` is a path relative to the
    /// spec file's directory; without one it is looked up on `PATH`.
    pub command: Vec<String>,
    /// The native box: `[low, high]` per input. Requests carry points in these units.
    pub bounds: Vec<[f64; 2]>,
    /// The inputs' names (the columns of an ask/tell data file); default `x0`, `x1`, ….
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub names: Vec<String>,
    /// Where costs come from.
    pub cost: CostSource,
    /// Seconds an answer may take before the program is killed; default 3600, from
    /// [`MIN_TIMEOUT_S`] to [`MAX_TIMEOUT_S`].
    #[serde(default = "default_timeout")]
    pub timeout_s: f64,
    /// How many times a failed evaluation is asked again; default 0, at most
    /// [`MAX_RETRIES`].
    #[serde(default)]
    pub retries: u32,
    /// The metrics the program may report (recorded per evaluation, plotted by `report`'s
    /// `metric:NAME`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub metrics: Vec<String>,
    /// The best value the program's `value`s can reach, when known: simple regret is
    /// measured against it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optimum: Option<f64>,
    /// A label of the program's version. cabo fingerprints the spec, not the program:
    /// change this after editing the program, and the runs it made are made again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// Control sets (0-based input indices) for a cost-varying-subset problem.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub control_sets: Vec<Vec<usize>>,
    /// Known cost of each control set (with `cost: none`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub costs: Vec<f64>,
    /// Distribution of every open variable on the unit interval; default uniform.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distribution: Option<VariableDistribution>,
    /// Per-input distributions, overriding `distribution`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distributions: Option<Vec<VariableDistribution>>,
    /// The spec file's directory (set by the runner; not part of the spec).
    #[serde(skip)]
    spec_dir: PathBuf,
}

fn default_timeout() -> f64 {
    3600.0
}

#[cabo_core::plugin(
    name = "external",
    summary = "Any program as the objective: JSON lines on stdin/stdout, reported, wall-clock or known costs, retries, timeouts, per-run logs, optional control sets",
    paper = "standard",
    example = "{ type: external, command: [python3, objective.py], bounds: [[0, 15], [-5, 10]], cost: reported }"
)]
impl ProblemSpec for ExternalSpec {
    fn dim(&self) -> Result<usize> {
        self.check()?;
        Ok(self.bounds.len())
    }

    fn build(&self, _seed: u64) -> Result<Box<dyn Problem>> {
        Ok(Box::new(ExternalProblem::new(self)?))
    }

    fn set_spec_dir(&mut self, dir: &Path) {
        // A spec named without a directory is in the working directory, which a program is
        // started in as ".", not "".
        self.spec_dir = if dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            dir.to_path_buf()
        };
    }

    fn metric_names(&self) -> Vec<String> {
        self.metrics.clone()
    }

    fn measures_costs(&self) -> bool {
        self.cost != CostSource::None
    }

    /// Several workers run several copies of the program at once; control sets are refused
    /// as for every problem (a pending control-set query has no point to fantasise at).
    fn refuses_workers(&self) -> Option<String> {
        (!self.control_sets.is_empty()).then(|| {
            "has control sets: a query leaves some inputs to the environment, so a pending \
             one has no point to fantasise at while it runs"
                .to_string()
        })
    }

    fn caveats(&self) -> Vec<String> {
        let mut out = vec![
            "cabo fingerprints the spec, not the program: after editing the program, change \
             the problem's `version:` so completed runs are made again"
                .to_string(),
        ];
        if self.cost == CostSource::WallTime {
            out.push(
                "costs are wall-clock seconds: a fresh rerun measures other times, so its \
                 decisions and results may differ; a run started again after an interruption \
                 replays its recorded evaluations and writes identical results"
                    .to_string(),
            );
        }
        out
    }
}

impl ExternalSpec {
    fn check(&self) -> Result<()> {
        if self.command.is_empty() || self.command[0].is_empty() {
            return Err(Error::invalid(
                "external.command: give the program and its arguments, e.g. \
                 [python3, objective.py]",
            ));
        }
        self.program_path()?;
        if self.bounds.is_empty() {
            return Err(Error::invalid(
                "external.bounds: give one [low, high] pair per input",
            ));
        }
        for (i, [lo, hi]) in self.bounds.iter().enumerate() {
            // The width too: a point is `lo + u * (hi - lo)`, and an infinite width would
            // send the program `null`.
            if !(lo.is_finite() && hi.is_finite() && lo < hi && (hi - lo).is_finite()) {
                return Err(Error::invalid(format!(
                    "external.bounds[{i}]: [{}, {}] is not a box side (need finite low < \
                     high, with a finite width high - low)",
                    shown(*lo),
                    shown(*hi)
                )));
            }
        }
        let d = self.bounds.len();
        self.check_names(d)?;
        self.check_limits()?;
        if let Some(o) = self.optimum
            && !o.is_finite()
        {
            return Err(Error::invalid(format!(
                "external.optimum: {} is not a finite number (simple regret is measured \
                 against it; leave the key out when the optimum is not known)",
                shown(o)
            )));
        }
        self.check_control_sets(d)
    }

    /// The inputs' names are the columns of an ask/tell data file
    /// ([`cabo_core::check_input_names`]).
    fn check_names(&self, d: usize) -> Result<()> {
        cabo_core::check_input_names("external.names", &self.names, d)
    }

    /// `timeout_s` and `retries` within their stated ranges, so that a run can neither
    /// overflow a duration nor retry without end.
    fn check_limits(&self) -> Result<()> {
        let t = self.timeout_s;
        if !(t.is_finite() && (MIN_TIMEOUT_S..=MAX_TIMEOUT_S).contains(&t)) {
            return Err(Error::invalid(format!(
                "external.timeout_s: {} is not a number of seconds from {MIN_TIMEOUT_S} to \
                 {MAX_TIMEOUT_S} (30 days), the time one evaluation may take",
                shown(t)
            )));
        }
        if self.retries > MAX_RETRIES {
            return Err(Error::invalid(format!(
                "external.retries: {} is more than {MAX_RETRIES}, the most times a failed \
                 evaluation is asked again",
                self.retries
            )));
        }
        Ok(())
    }

    fn check_control_sets(&self, d: usize) -> Result<()> {
        for (k, set) in self.control_sets.iter().enumerate() {
            let sorted = set.windows(2).all(|w| w[0] < w[1]);
            if set.is_empty() || !sorted || set.iter().any(|&v| v >= d) {
                return Err(Error::invalid(format!(
                    "external.control_sets[{k}]: {set:?} is not a non-empty, increasing list \
                     of input indices below {d} (indices are 0-based)"
                )));
            }
        }
        let with_sets = !self.control_sets.is_empty();
        match (self.cost, self.costs.is_empty()) {
            (CostSource::None, true) if with_sets => Err(Error::invalid(
                "external.costs: with control sets and `cost: none`, give each set's cost",
            )),
            (CostSource::None, false) if self.costs.len() != self.control_sets.len() => {
                Err(Error::invalid(format!(
                    "external.costs: {} costs for {} control sets",
                    self.costs.len(),
                    self.control_sets.len()
                )))
            }
            (CostSource::None, false)
                if self.costs.iter().any(|c| !(*c > 0.0 && c.is_finite())) =>
            {
                Err(Error::invalid(
                    "external.costs: every cost must be positive",
                ))
            }
            (CostSource::Reported | CostSource::WallTime, false) => Err(Error::invalid(
                "external.costs: per-set costs are known costs, so they go with `cost: none` \
                 (the program reports or is timed for the others)",
            )),
            (_, false) if !with_sets => Err(Error::invalid(
                "external.costs: per-set costs need `control_sets`; a known cost of the \
                 point is the spec's `cost:`",
            )),
            _ => self.distributions(d).map(|_| ()),
        }
    }

    /// The open variables' samplers, when the problem has control sets.
    fn distributions(&self, d: usize) -> Result<Option<InputDistributions>> {
        if self.control_sets.is_empty() {
            if self.distribution.is_some() || self.distributions.is_some() {
                return Err(Error::invalid(
                    "external.distribution: open variables exist only with `control_sets`",
                ));
            }
            return Ok(None);
        }
        if let Some(list) = &self.distributions
            && list.len() != d
        {
            return Err(Error::invalid(format!(
                "external.distributions: {} distributions for {d} inputs",
                list.len()
            )));
        }
        let every = self.distribution.unwrap_or(VariableDistribution::Uniform);
        InputDistributions::from_spec("external", every, self.distributions.as_deref(), d).map(Some)
    }

    /// The program to start: a path (relative to the spec file's directory) that must
    /// exist, or a name found on `PATH`.
    fn program_path(&self) -> Result<PathBuf> {
        let program = &self.command[0];
        if program.contains('/') {
            let path = self.spec_dir.join(program);
            // Absolute, since the program starts in the spec's directory, not cabo's.
            return if path.is_file() {
                std::path::absolute(&path).map_err(|e| {
                    Error::invalid(format!("external.command[0]: {}: {e}", path.display()))
                })
            } else {
                Err(Error::invalid(format!(
                    "external.command[0]: no program at {} (a path with `/` is relative to \
                     the spec file's directory)",
                    path.display()
                )))
            };
        }
        let on_path = std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).any(|dir| dir.join(program).is_file()))
            .unwrap_or(false);
        if on_path {
            Ok(PathBuf::from(program))
        } else {
            Err(Error::invalid(format!(
                "external.command[0]: no program {program:?} on PATH (give its path, with a \
                 `/`, relative to the spec file's directory, or install it)"
            )))
        }
    }
}

/// `x` as a spec would write it: `1e20` rather than twenty-one digits, `.nan` and `.inf`.
fn shown(x: f64) -> String {
    match x {
        _ if x.is_nan() => ".nan".into(),
        _ if x.is_infinite() => if x > 0.0 { ".inf" } else { "-.inf" }.into(),
        _ if x != 0.0 && !(1e-4..1e16).contains(&x.abs()) => format!("{x:e}"),
        _ => x.to_string(),
    }
}

/// A built `external` problem: the program (started on first use) and the box.
pub struct ExternalProblem {
    info: ProblemInfo,
    spec: ExternalSpec,
    program: Program,
    dists: Option<InputDistributions>,
    /// Requests made through [`Problem::evaluate`], which carries no run index.
    asked: AtomicUsize,
    /// The replication served, sent with every request once the runner has said it.
    replication: Option<usize>,
}

impl ExternalProblem {
    /// The problem of `spec` (checked); its program is not started yet.
    pub fn new(spec: &ExternalSpec) -> Result<Self> {
        spec.check()?;
        let d = spec.bounds.len();
        let mut argv = spec.command.clone();
        argv[0] = spec.program_path()?.display().to_string();
        let dists = spec.distributions(d)?;
        let mut info = ProblemInfo::continuous(format!("external({})", spec.command.join(" ")), d);
        info.input_names = spec.names.clone();
        info.control_sets = spec
            .control_sets
            .iter()
            .enumerate()
            .map(|(k, v)| ControlSet {
                variables: v.clone(),
                known_cost: spec.costs.get(k).copied(),
            })
            .collect();
        if let Some(dists) = &dists {
            info = info.with_extension(dists.clone());
        }
        let timeout = Duration::from_secs_f64(spec.timeout_s);
        Ok(ExternalProblem {
            info,
            spec: spec.clone(),
            program: Program::new(argv, spec.spec_dir.clone(), timeout),
            dists,
            asked: AtomicUsize::new(0),
            replication: None,
        })
    }

    /// The full unit-cube point a query plays: its own for a full query, with the open
    /// variables drawn for a control-set play.
    fn full_point(&self, query: &Query, seed: u64) -> Result<Vec<f64>> {
        let mut x = query.x.clone();
        if x.len() != self.info.dim {
            return Err(Error::invalid(format!(
                "external: a query of {} coordinates, the problem has {}",
                x.len(),
                self.info.dim
            )));
        }
        if let Some(k) = query.control_set {
            let (Some(set), Some(dists)) = (self.spec.control_sets.get(k), &self.dists) else {
                return Err(Error::invalid(format!(
                    "external: control set {k} does not exist ({} sets)",
                    self.spec.control_sets.len()
                )));
            };
            dists.fill_uncontrolled(set, &mut x, &mut Rng::new(derive_seed(&[&seed, &"open"])));
        }
        Ok(x)
    }

    /// The cost of an answered evaluation, as the spec says it is measured.
    fn cost_of(
        &self,
        reported: Option<f64>,
        took: Duration,
        set: Option<usize>,
    ) -> Result<f64, Failure> {
        match self.spec.cost {
            CostSource::Reported => match reported {
                Some(c) if c > 0.0 => Ok(c),
                Some(c) => Err(Failure::Malformed(format!(
                    "has `cost`: {c}, but a cost must be positive"
                ))),
                None => Err(Failure::Malformed(
                    "has no `cost`, which `cost: reported` requires in every answer".into(),
                )),
            },
            // A clock tick is the least an evaluation can take; zero would be no cost.
            CostSource::WallTime => Ok(took.as_secs_f64().max(1e-9)),
            CostSource::None => Ok(set
                .and_then(|k| self.spec.costs.get(k).copied())
                .unwrap_or(1.0)),
        }
    }

    /// Evaluation `index` of the run, asked again after failures as the spec allows.
    fn ask(&self, query: &Query, seed: u64, index: usize) -> Result<Outcome> {
        let x = self.full_point(query, seed)?;
        let native = self.to_native(&x);
        let request = Request {
            x: &native,
            seed,
            eval: index,
            replication: self.replication,
            control_set: query.control_set,
        };
        let attempts = self.spec.retries + 1;
        let mut last = None;
        for attempt in 1..=attempts {
            if attempt > 1 {
                self.wait_before_retry(attempt - 1, index)?;
            }
            let answered = self
                .program
                .ask(&request, &self.spec.metrics)
                .and_then(|(e, took)| Ok((self.cost_of(e.cost, took, query.control_set)?, e)));
            match answered {
                Ok((cost, e)) => {
                    let mut outcome = Outcome::new(e.y, cost, x, e.value);
                    outcome.metrics = e.metrics;
                    return Ok(outcome);
                }
                Err(failure) => {
                    self.program.note(&format!(
                        "evaluation {index}, attempt {attempt} of {attempts}: {failure}"
                    ));
                    if failure == Failure::Interrupted {
                        return Err(self.interrupted(index));
                    }
                    last = Some(failure);
                }
            }
        }
        let failure = last.expect("at least one attempt");
        Err(Error::invalid(format!(
            "the external objective `{}` failed evaluation {index} (attempt {attempts} of \
             {attempts}; the spec's `retries: {}`; {}): {failure}",
            self.spec.command.join(" "),
            self.spec.retries,
            self.program.log_description()
        )))
    }
}

impl ExternalProblem {
    /// Sleeps [`backoff`] before retry `k` of evaluation `index`, unless a stop is
    /// requested meanwhile.
    fn wait_before_retry(&self, k: u32, index: usize) -> Result<()> {
        let until = Instant::now() + backoff(k);
        loop {
            if cabo_core::interrupt::requested() {
                return Err(self.interrupted(index));
            }
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(());
            }
            std::thread::sleep(left.min(process::POLL));
        }
    }

    /// The error of evaluation `index` stopped by a request to stop.
    fn interrupted(&self, index: usize) -> Error {
        Error::Interrupted(format!(
            "evaluation {index} of `{}` was stopped while it waited; the run resumes from \
             its last checkpoint",
            self.spec.command.join(" ")
        ))
    }
}

impl ExternalEvaluation for ExternalProblem {
    fn set_replication(&mut self, replication: usize) {
        self.replication = Some(replication);
    }

    fn set_log_file(&mut self, path: &Path) {
        self.program.set_log(path);
    }

    fn evaluate_in_run(&self, query: &Query, seed: u64, index: usize) -> Result<Outcome> {
        self.ask(query, seed, index)
    }
}

impl Problem for ExternalProblem {
    fn info(&self) -> &ProblemInfo {
        &self.info
    }

    fn evaluate(&self, query: &Query, seed: u64) -> Result<Outcome> {
        let index = self.asked.fetch_add(1, Ordering::Relaxed);
        self.ask(query, seed, index)
    }

    fn external(&mut self) -> Option<&mut dyn ExternalEvaluation> {
        Some(self)
    }

    fn optimum(&self) -> Option<f64> {
        self.spec.optimum
    }

    fn to_native(&self, x: &[f64]) -> Vec<f64> {
        x.iter()
            .zip(&self.spec.bounds)
            .map(|(u, [lo, hi])| lo + u * (hi - lo))
            .collect()
    }

    fn native_to_unit(&self, native: &[f64]) -> Vec<f64> {
        native
            .iter()
            .zip(&self.spec.bounds)
            .map(|(v, [lo, hi])| (v - lo) / (hi - lo))
            .collect()
    }
}
