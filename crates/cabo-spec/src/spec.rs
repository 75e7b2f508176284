//! The experiment spec: the YAML file a researcher writes, parsed and validated in full before
//! anything runs.

pub mod limits;
pub mod workers;

use crate::error::SpecError;
use crate::locate::Locator;
use cabo_core::{
    AcquisitionSpec, Budget, CostFunctionSpec, CostModelSpec, Expr, ModelSpec, OptimizerSpec,
    PendingRule, PolicySpec, ProblemSpec,
};
use limits::Limits;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use workers::Workers;

/// One experiment: a problem, a budget, and the policies compared on it.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    /// Name of the experiment; results go to `<out>/<name>/`.
    pub name: String,
    /// What the experiment reproduces.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Number of replications (seeds `0..replications`); replication r gives every policy the
    /// same problem instance and initial design.
    #[serde(default = "one")]
    pub replications: usize,
    /// The spec name the replications' seeds derive from, when not this spec's `name`. A
    /// variant of a spec (a policy with one option changed, say) that names the original
    /// here runs replication r on the original's problem instance, cost function and initial
    /// design, and gives each policy the seeds of the original's policy of the same name, so
    /// the two specs' results pair by replication. Not serialised when unset, so specs
    /// without it keep their fingerprints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seeds_from: Option<String>,
    /// The black box.
    pub problem: Box<dyn ProblemSpec>,
    /// A known cost function replacing the problem's own costs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<Box<dyn CostFunctionSpec>>,
    /// How much each run may spend.
    pub budget: Budget,
    /// Evaluations run at once and how the policy decides meanwhile (see [`workers`]); not
    /// serialised for one worker, so specs without it keep their fingerprints.
    #[serde(default, skip_serializing_if = "Workers::is_default")]
    pub workers: Workers,
    /// Points evaluated before the policy takes over.
    #[serde(default)]
    pub initial_design: InitialDesign,
    /// The objective model policies use unless their entry overrides it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<Box<dyn ModelSpec>>,
    /// The cost model policies use unless their entry overrides it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_model: Option<Box<dyn CostModelSpec>>,
    /// The policies compared.
    pub policies: Vec<PolicyEntry>,
    /// Acquisition-optimiser settings (entries and the smoke variant may override fields).
    #[serde(default)]
    pub optimizer: OptimizerSpec,
    /// The scaled-down variant that `--smoke` and the snapshot tests run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smoke: Option<Smoke>,
    /// How reports aggregate the results.
    #[serde(default)]
    pub report: ReportSpec,
    /// Resource limits checked before anything runs (see [`crate::spec::limits`]); not serialised
    /// when unset, so specs without them keep their fingerprints.
    #[serde(default, skip_serializing_if = "Limits::is_default")]
    pub limits: Limits,
}

fn one() -> usize {
    1
}

impl Spec {
    /// The name the replications' problem and policy seeds derive from: `seeds_from` when
    /// given, else `name`.
    pub fn seed_name(&self) -> &str {
        self.seeds_from.as_deref().unwrap_or(&self.name)
    }
}

/// The longest name, in bytes, of a spec, study, policy or Slurm job.
pub const MAX_NAME_BYTES: usize = 100;

/// Checks a name that becomes a directory or file name (a spec's or study's results
/// directory, a policy's, a Slurm job's scripts): it must not be empty, `.` or `..`, contain
/// `/`, `\` or a control character (NUL included), or exceed [`MAX_NAME_BYTES`]. Names are
/// checked rather than sanitised, so that results never land outside the output directory
/// and two names never share a directory unnoticed. `kind` names the name in the message.
pub fn check_name(kind: &str, name: &str) -> Result<(), String> {
    let why = if name.is_empty() {
        "is empty".to_string()
    } else if name == "." || name == ".." {
        "is a relative directory".to_string()
    } else if name.contains(['/', '\\']) {
        "contains a path separator (`/` or `\\`)".to_string()
    } else if name.chars().any(char::is_control) {
        "contains a control character".to_string()
    } else if name.len() > MAX_NAME_BYTES {
        format!("is {} bytes long", name.len())
    } else {
        return Ok(());
    };
    Err(format!(
        "{kind} name {} {why}: names become directory and file names, so they must be \
         non-empty, at most {MAX_NAME_BYTES} bytes, not `.` or `..`, and free of `/`, `\\` and \
         control characters",
        shown(name)
    ))
}

/// A name quoted for a message, cut short when long.
fn shown(name: &str) -> String {
    const SHOWN: usize = 40;
    match name.char_indices().nth(SHOWN) {
        Some((i, _)) => format!("{:?}…", &name[..i]),
        None => format!("{name:?}"),
    }
}

/// Policy result directories that would clash with the files of a spec's results
/// directory or with its `smoke` and `superseded` folders (compared case-insensitively, as
/// some file systems do).
pub const RESERVED_POLICY_NAMES: &[&str] = &[
    crate::layout::SMOKE,
    crate::layout::SUPERSEDED,
    "spec.json",
    "run.json",
    "summary.csv",
    "report.md",
    "report.svg",
    "report.png",
    "runtime.md",
    "runtime.csv",
    "runtime-table.csv",
    "runtime.svg",
    "runtime.png",
];

/// One compared policy: either an acquisition maximised by the standard optimiser or a whole
/// policy, with optional overrides of the spec-level model, cost model and optimiser.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyEntry {
    /// Display name, unique in the spec; also the result directory name.
    pub name: String,
    /// An acquisition function to maximise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acquisition: Option<Box<dyn AcquisitionSpec>>,
    /// A complete policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<Box<dyn PolicySpec>>,
    /// Overrides the spec's `model`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<Box<dyn ModelSpec>>,
    /// Overrides the spec's `cost_model`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_model: Option<Box<dyn CostModelSpec>>,
    /// Overrides fields of the spec's `optimizer`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optimizer: Option<OptimizerSpec>,
    /// Replaces the spec's `workers` for this policy, so that one spec compares worker
    /// counts with every replication's problem and initial design shared.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workers: Option<Workers>,
}

impl PolicyEntry {
    /// The workers this policy runs with: its own, else the spec's.
    pub fn workers_in<'a>(&'a self, spec: &'a Spec) -> &'a Workers {
        self.workers.as_ref().unwrap_or(&spec.workers)
    }
}

/// How the initial design is drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum DesignKind {
    /// Scrambled Sobol points (seeded by the replication).
    #[default]
    Sobol,
    /// Uniform random points (seeded by the replication).
    Random,
    /// One point at the domain's lower corner, x = 0 in every coordinate: seed 000's
    /// counterexamples start there (PandoraBayesOpt `scripts/variable_amplitude.py` l.127,
    /// `init_x = torch.zeros(dim)`). Needs `points: 1`.
    Corner,
}

/// The initial design: `points` may be an expression in `d` such as `"2*(d+1)"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InitialDesign {
    /// How points are drawn.
    #[serde(rename = "type", default)]
    pub kind: DesignKind,
    /// How many points.
    pub points: Expr,
    /// Whether their cost counts against the budget (the papers' default: it does not).
    #[serde(default)]
    pub counts: bool,
}

impl Default for InitialDesign {
    fn default() -> Self {
        InitialDesign {
            kind: DesignKind::Sobol,
            points: Expr::parse("2*(d+1)").expect("constant expression parses"),
            counts: false,
        }
    }
}

/// Overrides applied by `--smoke`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Smoke {
    /// Fewer replications.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replications: Option<usize>,
    /// A smaller budget.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<Budget>,
    /// A smaller initial design.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_design: Option<InitialDesign>,
    /// Cheaper optimiser settings (applied over every entry's own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub optimizer: Option<OptimizerSpec>,
    /// A smaller problem.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<Box<dyn ProblemSpec>>,
    /// A cheaper default model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<Box<dyn ModelSpec>>,
    /// Only these policies (by name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policies: Option<Vec<String>>,
}

/// The x-axis of reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum XAxis {
    /// Cumulative cost charged against the budget.
    #[default]
    CumulativeCost,
    /// Policy iteration.
    Iteration,
    /// Simulated wall time: when each evaluation finished on the workers' clock (see
    /// [`workers`]); with one worker, the sum of every cost so far, the initial design's
    /// included, as evaluations follow one another.
    WallTime,
}

impl XAxis {
    /// The name a spec writes (`report: { x: wall_time }`).
    pub fn name(self) -> &'static str {
        match self {
            XAxis::CumulativeCost => "cumulative_cost",
            XAxis::Iteration => "iteration",
            XAxis::WallTime => "wall_time",
        }
    }
}

/// The metric reports aggregate. Written in YAML as one of `auto`, `simple_regret`,
/// `log10_simple_regret`, `best_y`, `best_value`, or `metric:NAME` for a metric the problem
/// records with every evaluation (the `metrics` of the result lines).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Metric {
    /// Simple regret where the optimum is known, else the best value (chosen per problem).
    #[default]
    Auto,
    /// optimum − best noise-free value so far.
    SimpleRegret,
    /// log10 of the simple regret.
    Log10SimpleRegret,
    /// Best observed y so far.
    BestY,
    /// Best noise-free value so far.
    BestValue,
    /// A problem metric, by name, as recorded after each evaluation.
    Problem(String),
}

/// The spellings of [`Metric`] (for messages).
pub const METRIC_NAMES: &[&str] = &[
    "auto",
    "simple_regret",
    "log10_simple_regret",
    "best_y",
    "best_value",
    "metric:<name>",
];

impl Metric {
    /// The YAML spelling.
    pub fn name(&self) -> String {
        match self {
            Metric::Auto => "auto".into(),
            Metric::SimpleRegret => "simple_regret".into(),
            Metric::Log10SimpleRegret => "log10_simple_regret".into(),
            Metric::BestY => "best_y".into(),
            Metric::BestValue => "best_value".into(),
            Metric::Problem(m) => format!("metric:{m}"),
        }
    }

    /// Parses the YAML spelling.
    pub fn parse(s: &str) -> Option<Metric> {
        Some(match s {
            "auto" => Metric::Auto,
            "simple_regret" => Metric::SimpleRegret,
            "log10_simple_regret" => Metric::Log10SimpleRegret,
            "best_y" => Metric::BestY,
            "best_value" => Metric::BestValue,
            _ => match s.strip_prefix("metric:") {
                Some(m) if !m.trim().is_empty() => Metric::Problem(m.trim().to_string()),
                _ => return None,
            },
        })
    }
}

impl Serialize for Metric {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.name())
    }
}

impl<'de> Deserialize<'de> for Metric {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        // `unknown_variant` keeps serde's wording, which the spec error printer turns into a
        // "did you mean" suggestion.
        Metric::parse(&s).ok_or_else(|| serde::de::Error::unknown_variant(&s, METRIC_NAMES))
    }
}

/// Uncertainty bands of reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Bands {
    /// Median with the 25% and 75% quantiles.
    #[default]
    Quartiles,
    /// Mean ± one standard error.
    StdErr,
}

/// A time of `rep-<r>.times.jsonl` that the report's runtime view draws against the
/// iteration (`report.runtime`, `cargo xtask report --times`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum TimeMetric {
    /// Wall time of a decision: the model fits and computing and optimising the acquisition
    /// (a paper's "time per acquisition" of a BoTorch loop).
    #[default]
    DecisionTime,
    /// Wall time of computing and optimising the acquisition alone, the fits excluded (seed
    /// 000's Fig. 9).
    AcquisitionTime,
    /// Wall time of the model fits.
    FitTime,
    /// CPU time of the run's thread over the whole iteration: fits, decision and evaluation
    /// (seed 002's App. C.4); wall time where the platform records no CPU time.
    CpuTime,
}

/// The spellings of [`TimeMetric`] (for messages).
pub const TIME_METRIC_NAMES: &[&str] =
    &["decision_time", "acquisition_time", "fit_time", "cpu_time"];

impl TimeMetric {
    /// Every time metric, in the order of [`TIME_METRIC_NAMES`].
    pub const ALL: [TimeMetric; 4] = [
        TimeMetric::DecisionTime,
        TimeMetric::AcquisitionTime,
        TimeMetric::FitTime,
        TimeMetric::CpuTime,
    ];

    /// The YAML spelling.
    pub fn name(self) -> &'static str {
        TIME_METRIC_NAMES[self as usize]
    }

    /// Parses the YAML spelling; an unknown one gets an error naming `key`, the valid
    /// spellings and the closest of them.
    pub fn parse(key: &str, s: &str) -> Result<TimeMetric, String> {
        if let Some(i) = TIME_METRIC_NAMES.iter().position(|n| *n == s) {
            return Ok(TimeMetric::ALL[i]);
        }
        let hint = cabo_core::registry::closest_of(s, TIME_METRIC_NAMES)
            .map(|c| format!("; did you mean `{c}`?"))
            .unwrap_or_default();
        Err(format!(
            "{key}: unknown time `{s}`{hint} Expected one of: {}",
            TIME_METRIC_NAMES.join(", ")
        ))
    }
}

/// How reports aggregate replications.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub struct ReportSpec {
    /// The x-axis.
    #[serde(default)]
    pub x: XAxis,
    /// The metric.
    #[serde(default)]
    pub y: Metric,
    /// The bands.
    #[serde(default)]
    pub bands: Bands,
    /// A 0/1 problem metric (e.g. `cvs.on_optimal_set`): each policy's curve gets a diamond
    /// at the mean x from which the metric is 1 at every later evaluation of a run (seed
    /// 002's "budget after which an algorithm only chooses the optimal control set").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub marker: Option<String>,
    /// The whole value of `marker` that counts as settled, for a metric that is not a 0/1
    /// flag (e.g. `marker: cvs.control_set` with `marker_equals: 6`, the full set that seed
    /// 002 calls optimal); without it the metric counts as settled when it is 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub marker_equals: Option<i64>,
    /// More metrics, each drawn in its own figure against the same x-axis
    /// (`report-<metric>.svg/png`) with its own table in `report.md` (e.g. seed 004's
    /// quality and cost regrets and the number of evaluations).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<Metric>,
    /// The runtime view: the per-decision times of `rep-<r>.times.jsonl`, the given one
    /// against the iteration (median and quartiles over replications) in `runtime.svg/png`
    /// and `runtime.csv`, and a table per policy of decision, fit and CPU times in
    /// `runtime.md` and `runtime-table.csv`. Kept out of `report.md` and `summary.csv`,
    /// which must not depend on the machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime: Option<TimeMetric>,
}

/// A spec read from a file, with what error messages need to point back into it.
#[derive(Debug, Clone)]
pub struct LoadedSpec {
    /// Where it was read from.
    pub path: PathBuf,
    /// The parsed spec (smoke overrides already applied when requested).
    pub spec: Spec,
    /// The problem's input dimension.
    pub dim: usize,
    locator: Locator,
    /// Set on a smoke variant: where its keys came from.
    smoke_keys: Option<SmokeKeys>,
}

/// How the keys of a spec with its `smoke:` overrides applied map back to the spec file:
/// an overridden top-level key to its line in `smoke:`, a policy to its index in the full
/// list.
#[derive(Debug, Clone)]
struct SmokeKeys {
    /// Top-level keys `smoke:` replaces.
    overridden: Vec<&'static str>,
    /// Whether `smoke.optimizer` is merged into every entry's optimiser.
    optimizer: bool,
    /// The full list's index of each policy the variant keeps.
    kept: Vec<usize>,
    /// Whether messages say that the error is in the smoke variant (when the full spec was
    /// asked for).
    announce: bool,
}

impl SmokeKeys {
    fn new(spec: &Spec, smoke: &Smoke) -> Self {
        let overridden = [
            ("replications", smoke.replications.is_some()),
            ("budget", smoke.budget.is_some()),
            ("initial_design", smoke.initial_design.is_some()),
            ("problem", smoke.problem.is_some()),
            ("model", smoke.model.is_some()),
            ("optimizer", smoke.optimizer.is_some()),
            ("policies", smoke.policies.is_some()),
        ]
        .into_iter()
        .filter_map(|(k, set)| set.then_some(k))
        .collect();
        let kept = (0..spec.policies.len())
            .filter(|&i| {
                smoke
                    .policies
                    .as_ref()
                    .is_none_or(|keep| keep.contains(&spec.policies[i].name))
            })
            .collect();
        SmokeKeys {
            overridden,
            optimizer: smoke.optimizer.is_some(),
            kept,
            announce: false,
        }
    }

    fn announced(self, announce: bool) -> Self {
        SmokeKeys { announce, ..self }
    }

    /// Every name in `smoke.policies` must name a policy: a misspelt one would silently
    /// drop the policy from every smoke run.
    fn check_policies(
        &self,
        spec: &Spec,
        error_at: impl Fn(&str, String) -> SpecError,
    ) -> Result<(), SpecError> {
        let Some(keep) = spec.smoke.as_ref().and_then(|s| s.policies.as_ref()) else {
            return Ok(());
        };
        let names: Vec<&str> = spec.policies.iter().map(|p| p.name.as_str()).collect();
        for (i, want) in keep.iter().enumerate() {
            if names.contains(&want.as_str()) {
                continue;
            }
            let closest = cabo_core::registry::closest_of(want, &names)
                .map(|c| format!("; did you mean {c:?}?"))
                .unwrap_or_default();
            return Err(error_at(
                &format!("smoke.policies[{i}]"),
                format!(
                    "{want:?} names no policy of this spec{closest} Policies: {}",
                    names.join(", ")
                ),
            ));
        }
        if self.kept.is_empty() {
            return Err(error_at(
                "smoke.policies",
                "the smoke variant keeps no policy: name at least one".into(),
            ));
        }
        Ok(())
    }

    /// The spec file's key for `key` of the smoke variant.
    fn translate(&self, key: &str) -> String {
        let head_end = key.find(['.', '[']).unwrap_or(key.len());
        let (head, rest) = key.split_at(head_end);
        if head == "policies"
            && let Some((index, tail)) = rest
                .strip_prefix('[')
                .and_then(|r| r.split_once(']'))
                .and_then(|(i, tail)| Some((i.parse::<usize>().ok()?, tail)))
        {
            if self.optimizer
                && let Some(sub) = tail.strip_prefix(".optimizer")
            {
                return format!("smoke.optimizer{sub}");
            }
            let original = self.kept.get(index).copied().unwrap_or(index);
            return format!("policies[{original}]{tail}");
        }
        if self.overridden.contains(&head) {
            format!("smoke.{key}")
        } else {
            key.to_string()
        }
    }

    fn message(&self, message: String) -> String {
        if self.announce {
            format!("in the spec with its `smoke:` overrides (as `run --smoke` runs it): {message}")
        } else {
            message
        }
    }
}

impl LoadedSpec {
    /// Reads, parses and validates a spec file; with `smoke` the `smoke:` overrides are
    /// applied first.
    pub fn load(path: &Path, smoke: bool) -> Result<Self, SpecError> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            SpecError::new(path, None, "", format!("cannot read the spec file: {e}"))
        })?;
        Self::parse(path, &text, smoke)
    }

    /// Parses and validates spec text (`path` is used in messages). Without `smoke` the
    /// smoke variant is validated too, so that a spec that validates also runs with
    /// `--smoke`; either way errors in the variant point at their own line in `smoke:`.
    pub fn parse(path: &Path, text: &str, smoke: bool) -> Result<Self, SpecError> {
        let mut spec: Spec = crate::error::parse_yaml(path, text)?;
        let locator = Locator::new(text);
        if smoke && spec.smoke.is_none() {
            return Err(SpecError::new(
                path,
                None,
                "",
                "the spec has no `smoke:` section: --smoke runs a spec's scaled-down variant \
                 (add one, e.g. `smoke: { replications: 1 }`, or run without --smoke)"
                    .into(),
            ));
        }
        set_spec_dir(&mut spec, path);
        let keys = spec.smoke.as_ref().map(|sm| SmokeKeys::new(&spec, sm));
        let loaded = |spec: Spec, smoke_keys: Option<SmokeKeys>| LoadedSpec {
            path: path.to_path_buf(),
            spec,
            dim: 0,
            locator: locator.clone(),
            smoke_keys,
        };
        let full = if smoke {
            None
        } else {
            let mut full = loaded(spec.clone(), None);
            full.dim = full.validate()?;
            Some(full)
        };
        let Some(keys) = keys else {
            return Ok(full.expect("a spec without `smoke:` is validated in full"));
        };
        keys.check_policies(&spec, |k, m| loaded(spec.clone(), None).error_at(k, m))?;
        let mut variant = loaded(apply_smoke(spec), Some(keys.announced(!smoke)));
        variant.dim = variant.validate()?;
        Ok(full.unwrap_or(variant))
    }

    /// An error pointing at `key` (a dotted path such as `policies[1].acquisition`); in a
    /// smoke variant, at the key of `smoke:` that set the value, where it did.
    pub fn error_at(&self, key: &str, message: impl Into<String>) -> SpecError {
        let (key, message) = match &self.smoke_keys {
            Some(keys) => (keys.translate(key), keys.message(message.into())),
            None => (key.to_string(), message.into()),
        };
        SpecError::new(&self.path, self.locator.find(&key), &key, message)
    }

    /// The most evaluations one run may make ([`Limits::max_evaluations`]); the run loop
    /// stops with an error there when its budget could not be bounded in advance.
    pub fn max_evaluations(&self) -> usize {
        self.spec.limits.evaluations()
    }

    /// A problem plugin's error, pointing at the key it names: `external.bounds[1]: why`
    /// is located at `problem.bounds[1]` (the plugin's own key under `problem:`) and said
    /// without the plugin's name; any other message is located at `problem`.
    fn problem_error(&self, e: cabo_core::Error) -> SpecError {
        let message = e.to_string();
        let key = message.split_once(": ").and_then(|(prefix, rest)| {
            let plain = prefix
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_.[]".contains(c));
            let (_, key) = prefix.split_once('.').filter(|_| plain)?;
            Some((format!("problem.{key}"), rest))
        });
        match key {
            Some((key, rest)) => self.error_at(&key, rest),
            None => self.error_at("problem", message),
        }
    }

    /// Checks that a decision on `rows` observations (what `suggest` makes) is within the
    /// spec's limits ([`limits::check_observations`]); the message says what it would cost.
    pub fn check_observations(&self, rows: usize) -> Result<(), String> {
        let s = &self.spec;
        let (mut raw_samples, mut restart_iterations) = (0, 0);
        for p in &s.policies {
            let opt = s
                .optimizer
                .merged(p.optimizer.as_ref().unwrap_or(&OptimizerSpec::default()));
            // Validation resolved every entry's settings already.
            if let Ok(o) = opt.resolve(self.dim) {
                raw_samples = raw_samples.max(o.raw_samples);
                restart_iterations = restart_iterations.max(o.restarts.saturating_mul(o.max_iters));
            }
        }
        let work = limits::decision_work(s, self.dim, raw_samples, restart_iterations);
        limits::check_observations(s, &work, rows)
    }

    /// Checks the whole spec against its problem's dimension and the plugins' own checks,
    /// in the order a reader fixes them; the dimension.
    fn validate(&self) -> Result<usize, SpecError> {
        let s = &self.spec;
        let at = |key: &str, e: cabo_core::Error| self.error_at(key, e.to_string());
        check_name("spec", &s.name).map_err(|m| self.error_at("name", m))?;
        if s.seeds_from.as_deref().is_some_and(str::is_empty) {
            return Err(self.error_at(
                "seeds_from",
                "is empty: name the spec whose replication seeds this one shares, or leave \
                 the key out to use this spec's own name",
            ));
        }
        s.limits
            .validate()
            .map_err(|m| self.error_at("limits", m))?;
        // Before anything is sized by the replication count.
        limits::check_runs(s).map_err(|m| self.error_at("replications", m))?;
        let dim = s.problem.dim().map_err(|e| self.problem_error(e))?;
        if dim == 0 {
            return Err(self.error_at("problem", "the problem has dimension 0"));
        }
        if s.replications == 0 {
            return Err(self.error_at("replications", "must be at least 1"));
        }
        s.budget.validate().map_err(|e| at("budget", e))?;
        self.check_workers("workers", &s.workers)?;
        for (i, p) in s.policies.iter().enumerate() {
            let key = match &p.workers {
                Some(w) => {
                    self.check_workers(&format!("policies[{i}].workers"), w)?;
                    format!("policies[{i}].workers.pending")
                }
                None => "workers.pending".to_string(),
            };
            let penalised = p.workers_in(s).pending == Some(PendingRule::LocalPenalization);
            if penalised && p.acquisition.is_none() {
                return Err(self.error_at(
                    &key,
                    format!(
                        "local penalisation multiplies an acquisition function by penalties \
                         around the pending points, and policy {:?} is a whole policy, not an \
                         acquisition: give it another rule (kriging_believer, \
                         constant_liar_min, constant_liar_mean, constant_liar_max) in its own \
                         `workers:`",
                        p.name
                    ),
                ));
            }
        }
        let initial = s
            .initial_design
            .points
            .count(dim)
            .map_err(|m| self.error_at("initial_design.points", m))?;
        if s.initial_design.kind == DesignKind::Corner && initial != 1 {
            return Err(self.error_at(
                "initial_design.points",
                format!(
                    "`type: corner` places one point at the domain's lower corner; set \
                     `points: 1` (got {initial}), or use `type: sobol` for several points"
                ),
            ));
        }
        if let Some(c) = &s.cost {
            c.validate(dim).map_err(|e| at("cost", e))?;
            if s.problem.measures_costs() {
                return Err(self.error_at(
                    "cost",
                    "the problem measures each evaluation's cost itself (an external program's \
                     `cost: reported` or `wall_time`), and a known `cost:` would replace what \
                     it measures: remove one of the two",
                ));
            }
        }
        if let Some(m) = &s.model {
            m.validate(dim).map_err(|e| at("model", e))?;
        }
        if let Some(m) = &s.cost_model {
            m.validate(dim).map_err(|e| at("cost_model", e))?;
        }
        s.optimizer.resolve(dim).map_err(|e| at("optimizer", e))?;
        if s.policies.is_empty() {
            return Err(self.error_at(
                "policies",
                "the policy list is empty: name at least one policy to run",
            ));
        }
        let (raw_samples, restart_iterations) = self.validate_policies(dim, initial)?;
        self.check_report_metrics()?;
        let work = limits::decision_work(s, dim, raw_samples, restart_iterations);
        let estimate = limits::estimate(s, dim, initial, raw_samples, &work);
        limits::check(s, &estimate).map_err(|m| self.error_at("budget", m))?;
        Ok(dim)
    }

    /// Checks a `workers` section (at `key`) against the limits and the problem.
    fn check_workers(&self, key: &str, w: &Workers) -> Result<(), SpecError> {
        let s = &self.spec;
        workers::check(w, s.limits.max_workers).map_err(|m| self.error_at(key, m))?;
        if let (k @ 2.., Some(why)) = (w.count, s.problem.refuses_workers()) {
            return Err(self.error_at(
                key,
                format!("{k} workers: the problem {why}; run it with `workers: 1`"),
            ));
        }
        Ok(())
    }

    /// Checks every policy entry and that their names and result directories are distinct;
    /// the largest raw-sample count and restart iterations among them, which size a
    /// decision's work.
    fn validate_policies(&self, dim: usize, initial: usize) -> Result<(usize, usize), SpecError> {
        let s = &self.spec;
        let mut names = BTreeSet::new();
        let mut dirs = std::collections::BTreeMap::new();
        let (mut raw_samples, mut restart_iterations) = (0, 0);
        for (i, p) in s.policies.iter().enumerate() {
            let key = format!("policies[{i}]");
            let settings = self.validate_entry(&key, p, dim)?;
            raw_samples = raw_samples.max(settings.raw_samples);
            restart_iterations =
                restart_iterations.max(settings.restarts.saturating_mul(settings.max_iters));
            self.check_incumbent(&key, p, initial)?;
            if !names.insert(p.name.as_str()) {
                return Err(self.error_at(
                    &format!("{key}.name"),
                    format!("duplicate policy name {:?}: names must be unique", p.name),
                ));
            }
            // Case-insensitively: on macOS and Windows `EI` and `ei` are one directory.
            let dir = crate::layout::dir_name(&p.name).to_lowercase();
            if let Some(other) = dirs.insert(dir, p.name.as_str()) {
                return Err(self.error_at(
                    &format!("{key}.name"),
                    format!(
                        "policy name {:?} maps to the same result directory as policy {other:?} \
                         (directory names keep letters, digits and `._-()+=,`, and are compared \
                         case-insensitively)",
                        p.name
                    ),
                ));
            }
        }
        Ok((raw_samples, restart_iterations))
    }

    /// A policy that needs an incumbent from its first decision needs an initial point.
    fn check_incumbent(&self, key: &str, p: &PolicyEntry, initial: usize) -> Result<(), SpecError> {
        let needs = p.acquisition.as_ref().is_some_and(|a| a.needs_incumbent())
            || p.policy.as_ref().is_some_and(|a| a.needs_incumbent());
        if initial > 0 || !needs {
            return Ok(());
        }
        let what = if p.acquisition.is_some() {
            "acquisition"
        } else {
            "policy"
        };
        Err(self.error_at(
            "initial_design.points",
            format!(
                "policy {:?} needs at least one initial point: its {what} (`{key}.{what}`) uses \
                 the best observed value from the first decision, and the initial design has \
                 none; set `initial_design.points` to 1 or more",
                p.name
            ),
        ))
    }

    /// Problem metrics named by `report.y`, `report.marker` and `report.also` must be ones
    /// the problem records, or the report would fail after every run has been made.
    fn check_report_metrics(&self) -> Result<(), SpecError> {
        let r = &self.spec.report;
        if r.marker_equals.is_some() && r.marker.is_none() {
            return Err(self.error_at(
                "report.marker_equals",
                "marker_equals says which value of report.marker counts as settled, but the \
                 report has no marker: add `marker: <metric>` or remove marker_equals",
            ));
        }
        let mut named: Vec<(String, &str)> = Vec::new();
        if let Metric::Problem(m) = &r.y {
            named.push(("report.y".into(), m));
        }
        if let Some(m) = &r.marker {
            named.push(("report.marker".into(), m));
        }
        for (i, a) in r.also.iter().enumerate() {
            if let Metric::Problem(m) = a {
                named.push((format!("report.also[{i}]"), m));
            }
        }
        let known = self.spec.problem.metric_names();
        let refs: Vec<&str> = known.iter().map(String::as_str).collect();
        for (key, m) in named {
            if refs.contains(&m) {
                continue;
            }
            let message = if refs.is_empty() {
                format!("the problem records no metrics, so there is no metric {m:?} to report")
            } else {
                let closest = cabo_core::registry::closest_of(m, &refs)
                    .map(|c| format!("; did you mean {c:?}?"))
                    .unwrap_or_default();
                format!(
                    "the problem records no metric {m:?}{closest} It records: {}",
                    refs.join(", ")
                )
            };
            return Err(self.error_at(&key, message));
        }
        Ok(())
    }

    /// Checks one policy entry; returns its optimiser's settings.
    fn validate_entry(
        &self,
        key: &str,
        p: &PolicyEntry,
        dim: usize,
    ) -> Result<cabo_core::OptimizerSettings, SpecError> {
        let at =
            |sub: &str, e: cabo_core::Error| self.error_at(&format!("{key}.{sub}"), e.to_string());
        let name_key = format!("{key}.name");
        check_name("policy", &p.name).map_err(|m| self.error_at(&name_key, m))?;
        if p.name.trim().is_empty() {
            return Err(self.error_at(&name_key, "a policy needs a non-empty name"));
        }
        let dir = crate::layout::dir_name(&p.name).to_lowercase();
        if RESERVED_POLICY_NAMES.contains(&dir.as_str()) {
            return Err(self.error_at(
                &name_key,
                format!(
                    "policy name {:?} is reserved: its result directory would clash with a \
                     file or directory of the spec's results ({}, compared case-insensitively)",
                    p.name,
                    RESERVED_POLICY_NAMES.join(", ")
                ),
            ));
        }
        match (&p.acquisition, &p.policy) {
            (Some(a), None) => {
                a.validate(dim).map_err(|e| at("acquisition", e))?;
                if a.needs_posterior() && p.model.is_none() && self.spec.model.is_none() {
                    return Err(self.error_at(
                        &format!("{key}.acquisition"),
                        format!(
                            "policy {:?} maximises an acquisition of the model's posterior, but \
                             the spec has no `model`: give one at the top level or in this entry",
                            p.name
                        ),
                    ));
                }
            }
            (None, Some(pol)) => pol.validate(dim).map_err(|e| at("policy", e))?,
            _ => {
                return Err(self.error_at(
                    key,
                    format!(
                        "policy {:?} needs exactly one of `acquisition` or `policy`",
                        p.name
                    ),
                ));
            }
        }
        if let Some(m) = &p.model {
            m.validate(dim).map_err(|e| at("model", e))?;
        }
        if let Some(m) = &p.cost_model {
            m.validate(dim).map_err(|e| at("cost_model", e))?;
        }
        self.check_requirements(key, p)?;
        let opt = self
            .spec
            .optimizer
            .merged(p.optimizer.as_ref().unwrap_or(&OptimizerSpec::default()));
        opt.resolve(dim).map_err(|e| at("optimizer", e))
    }

    /// The policy's or acquisition's [`cabo_core::Requirements`] against the capabilities its model and
    /// cost model declare, so that a policy that needs, say, fantasies never starts on a
    /// model that cannot make them.
    fn check_requirements(&self, key: &str, p: &PolicyEntry) -> Result<(), SpecError> {
        let (what, requires, named) = match (&p.acquisition, &p.policy) {
            (Some(a), _) => ("acquisition", a.requires(), type_name(a)),
            (None, Some(pol)) => ("policy", pol.requires(), type_name(pol)),
            (None, None) => return Ok(()),
        };
        let model = p.model.as_ref().or(self.spec.model.as_ref());
        let cost = p.cost_model.as_ref().or(self.spec.cost_model.as_ref());
        let offered = [
            (
                "model",
                requires.model,
                model.map(|m| (m.capabilities(), type_name(m))),
            ),
            (
                "cost_model",
                requires.cost_model,
                cost.map(|m| (m.capabilities(), type_name(m))),
            ),
        ];
        for (field, needed, by) in offered {
            let Some(missing) = needed
                .iter()
                .find(|c| by.as_ref().is_none_or(|(caps, _)| !caps.contains(*c)))
            else {
                continue;
            };
            let who = match what {
                "policy" => format!("policy {:?} (`{named}`)", p.name),
                _ => format!("policy {:?} ({what} `{named}`)", p.name),
            };
            let need = format!("the capability `{missing}` ({})", missing.describe());
            let message = match by {
                Some((_, name)) => format!(
                    "{who} needs {need} of its {}, and {field} `{name}` does not offer it: \
                     choose a {field} that does",
                    field.replace('_', " ")
                ),
                None => format!(
                    "{who} needs a `{field}` offering {need}, but the spec has none: give one at \
                     the top level or in this entry"
                ),
            };
            return Err(self.error_at(&format!("{key}.{what}"), message));
        }
        Ok(())
    }
}

/// The `type` a plugin spec was written with (`exact_gp`, `kg`, …), for messages.
fn type_name(spec: &impl Serialize) -> String {
    serde_json::to_value(spec)
        .ok()
        .and_then(|v| v.get("type")?.as_str().map(str::to_string))
        .unwrap_or_else(|| "?".into())
}

/// Points relative file paths of the spec's problems (and its smoke problem) at the spec
/// file's directory.
fn set_spec_dir(spec: &mut Spec, path: &Path) {
    let dir = path.parent().unwrap_or(Path::new(""));
    spec.problem.set_spec_dir(dir);
    if let Some(p) = spec.smoke.as_mut().and_then(|s| s.problem.as_mut()) {
        p.set_spec_dir(dir);
    }
}

/// The spec with its `smoke:` overrides applied.
pub fn apply_smoke(mut spec: Spec) -> Spec {
    let Some(smoke) = spec.smoke.take() else {
        return spec;
    };
    if let Some(r) = smoke.replications {
        spec.replications = r;
    }
    if let Some(b) = smoke.budget {
        spec.budget = b;
    }
    if let Some(d) = smoke.initial_design {
        spec.initial_design = d;
    }
    if let Some(p) = smoke.problem {
        spec.problem = p;
    }
    if let Some(m) = smoke.model {
        spec.model = Some(m);
    }
    if let Some(o) = smoke.optimizer {
        spec.optimizer = spec.optimizer.merged(&o);
        for p in &mut spec.policies {
            if let Some(own) = &p.optimizer {
                p.optimizer = Some(own.merged(&o));
            }
        }
    }
    if let Some(keep) = smoke.policies {
        spec.policies.retain(|p| keep.contains(&p.name));
    }
    spec
}
