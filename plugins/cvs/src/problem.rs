//! The BOCVS problem `cvs`: any objective on \[0,1\]^d, control sets with (known or unknown
//! random) costs, and the distributions of the variables a control set leaves open.
//!
//! A query `Query { control_set: Some(i), x }` fixes the variables of set i to `x`; the
//! environment draws the others from their distributions, evaluates the objective at the
//! realised point and charges the cost of set i. Regret uses `value` = E_{X^{-i}} f([x^i,
//! X^{-i}]), estimated with a fixed quasi-random sample set per replication, and the optimum
//! is the best such expectation over all control sets, found numerically per set on first
//! use and cached process-wide per replication.
//!
//! **Full queries** (`control_set: None`, as the run engine's initial design issues them)
//! are treated as plays of a control set that contains every variable when the problem has
//! one (value f(x), that set's cost). Without such a set a full query is still evaluated as
//! asked, at the largest control-set cost, but carries no `value`: no control set could
//! have produced it, so it must not count towards the simple regret.

use cabo_core::{
    ControlSet, Error, Objective, Observation, Outcome, Phase, Problem, ProblemInfo, ProblemSpec,
    Query, Result, Rng, check_count, derive_seed,
};
use cabo_optim::{MaximizeOptions, ascend, maximize};
use cabo_toolkit::dist::{InputDistributions, VariableDistribution};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::ops::RangeInclusive;
use std::sync::{Arc, Mutex, OnceLock};

/// How a play's cost is drawn when costs are random and unknown to the learner (seed 004):
/// `clip(mean + sd·N(0,1), min, max)` for sets whose mean cost is at least `from_mean`,
/// the mean itself otherwise.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CostNoise {
    /// Standard deviation of the Gaussian cost noise; default 0.01.
    #[serde(default = "default_cost_sd")]
    pub sd: f64,
    /// Lower clip; default 0.001 (costs stay positive).
    #[serde(default = "default_cost_min")]
    pub min: f64,
    /// Upper clip; default 2.
    #[serde(default = "default_cost_max")]
    pub max: f64,
    /// Noise is added only to sets whose mean cost is at least this; default 0 (all sets).
    #[serde(default)]
    pub from_mean: f64,
}

fn default_cost_sd() -> f64 {
    0.01
}
fn default_cost_min() -> f64 {
    0.001
}
fn default_cost_max() -> f64 {
    2.0
}

/// Range of `optimum.raw_samples`: the search scores them for every control set once per
/// run; about 100 times the default 1024.
pub const OPTIMUM_RAW_SAMPLES: RangeInclusive<usize> = 1..=100_000;
/// Range of `optimum.restarts`: each is a finite-difference L-BFGS-B run per control set;
/// 125 times the default 8.
pub const OPTIMUM_RESTARTS: RangeInclusive<usize> = 1..=1000;
/// Range of `optimum.max_iters`: the iteration cap of each restart; 1000 times the
/// default 100.
pub const OPTIMUM_MAX_ITERS: RangeInclusive<usize> = 1..=100_000;
/// The iteration cap of [`Problem::local_optimum`]'s one ascent within a control set: five
/// times a restart's default, since one ascent, not every restart, is paid for.
pub const ASCENT_MAX_ITERS: usize = 500;
/// Range of `value_samples`: the value of every play and the per-set optima average the
/// objective over them, so each evaluation's work grows with them; 256 times the seeds' 256.
pub const VALUE_SAMPLES: RangeInclusive<usize> = 1..=65_536;

/// How each control set's best expected value is searched: Sobol' points scored, then
/// L-BFGS-B with finite-difference gradients from the best of them.
///
/// The defaults (1024, 8, 100) are what `examples/optimum_search.rs` measured as enough
/// on every objective of seeds 002 and 004: against a search 4 to 16 times denser and
/// wider they fall short by at most 0.006 on a 3-D GP sample's two-variable sets (0.08 %
/// of the spread best − worst), 0.017 on Levy-6 + 6's six-variable set (0.4 %), and not
/// at all on Hartmann and Ackley; the seeds' first setting, (64, 2, 30), fell short by up
/// to 1.65 (24 %). A set holding every variable also takes the objective's own optimum.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OptimumSettings {
    /// Sobol' points scored per control set; default 1024.
    #[serde(default = "default_opt_raw")]
    pub raw_samples: usize,
    /// L-BFGS-B restarts (finite-difference gradients) per control set; default 8.
    #[serde(default = "default_opt_restarts")]
    pub restarts: usize,
    /// Iteration cap of each restart; default 100.
    #[serde(default = "default_opt_iters")]
    pub max_iters: usize,
}

fn default_opt_raw() -> usize {
    1024
}
fn default_opt_restarts() -> usize {
    8
}
fn default_opt_iters() -> usize {
    100
}

impl Default for OptimumSettings {
    fn default() -> Self {
        OptimumSettings {
            raw_samples: default_opt_raw(),
            restarts: default_opt_restarts(),
            max_iters: default_opt_iters(),
        }
    }
}

/// Spec of the BOCVS problem (seeds 002 and 004).
///
/// ```yaml
/// problem:
///   type: cvs
///   objective: { type: hartmann3 }
///   control_sets: [[0], [1], [2], [0, 1], [0, 2], [1, 2], [0, 1, 2]]   # 0-based
///   costs: [0.01, 0.01, 0.01, 0.1, 0.1, 0.1, 1.0]
///   distribution: { type: truncated_normal, variance: 0.02 }
/// ```
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CvsSpec {
    /// The objective, any problem on \[0,1\]^d that reports noise-free values.
    pub objective: Box<dyn ProblemSpec>,
    /// The control sets: lists of 0-based variable indices.
    pub control_sets: Vec<Vec<usize>>,
    /// Cost of each control set (the mean cost when `unknown_costs` is given).
    pub costs: Vec<f64>,
    /// Distribution of every variable; default uniform.
    #[serde(default = "default_distribution")]
    pub distribution: VariableDistribution,
    /// Per-variable distributions, overriding `distribution` (length d).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub distributions: Option<Vec<VariableDistribution>>,
    /// Random costs the learner never sees (seed 004); absent means known, fixed costs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unknown_costs: Option<CostNoise>,
    /// Gaussian observation-noise standard deviation added to y; default 0.01 (seed 002,
    /// App. C).
    #[serde(default = "default_noise_std")]
    pub noise_std: f64,
    /// Points of the open variables for `value` and the optimum: scrambled Sobol' points
    /// (per replication) mapped onto the variables' distributions, which average more
    /// accurately than as many independent draws; default 1024.
    #[serde(default = "default_value_samples")]
    pub value_samples: usize,
    /// Tolerance α of the quality and cost regrets (seed 004) and of the set
    /// `cvs.on_optimal_set` names: the cheapest set whose optimum is within α of the best.
    /// Default 0.1; `0` names seed 002's optimal set, the one with the best optimum.
    #[serde(default = "default_alpha")]
    pub alpha: f64,
    /// How each control set's optimum is searched.
    #[serde(default)]
    pub optimum: OptimumSettings,
}

fn default_distribution() -> VariableDistribution {
    VariableDistribution::Uniform
}
fn default_noise_std() -> f64 {
    0.01
}
fn default_value_samples() -> usize {
    1024
}
fn default_alpha() -> f64 {
    0.1
}

/// At least one control set; each non-empty, of strictly increasing indices below `d`.
fn check_sets(sets: &[Vec<usize>], d: usize) -> Result<()> {
    if sets.is_empty() {
        return Err(Error::invalid(
            "cvs.control_sets: needs at least one control set",
        ));
    }
    for (k, set) in sets.iter().enumerate() {
        if set.is_empty() {
            return Err(Error::invalid(format!("cvs.control_sets[{k}]: is empty")));
        }
        if let Some(bad) = set.iter().find(|&&v| v >= d) {
            return Err(Error::invalid(format!(
                "cvs.control_sets[{k}]: variable {bad} does not exist (indices are 0-based, the objective has d = {d})"
            )));
        }
        if set.windows(2).any(|w| w[0] >= w[1]) {
            return Err(Error::invalid(format!(
                "cvs.control_sets[{k}]: indices must be strictly increasing, got {set:?}"
            )));
        }
    }
    Ok(())
}

impl CvsSpec {
    fn check(&self, d: usize) -> Result<()> {
        let m = self.control_sets.len();
        check_sets(&self.control_sets, d)?;
        if self.costs.len() != m {
            return Err(Error::invalid(format!(
                "cvs.costs: {} costs for {m} control sets",
                self.costs.len()
            )));
        }
        if let Some(c) = self.costs.iter().find(|c| !(c.is_finite() && **c > 0.0)) {
            return Err(Error::invalid(format!(
                "cvs.costs: every cost must be positive and finite, got {c}"
            )));
        }
        if let Some(ds) = &self.distributions
            && ds.len() != d
        {
            return Err(Error::invalid(format!(
                "cvs.distributions: {} distributions for d = {d} variables",
                ds.len()
            )));
        }
        if let Some(n) = &self.unknown_costs
            && !(n.sd.is_finite()
                && n.sd >= 0.0
                && n.min > 0.0
                && n.min <= n.max
                && n.max.is_finite())
        {
            return Err(Error::invalid(format!(
                "cvs.unknown_costs: need sd ≥ 0 and 0 < min ≤ max < ∞, got sd = {}, min = {}, max = {}",
                n.sd, n.min, n.max
            )));
        }
        if !(self.noise_std.is_finite() && self.noise_std >= 0.0) {
            return Err(Error::invalid(format!(
                "cvs.noise_std: must be finite and ≥ 0, got {}",
                self.noise_std
            )));
        }
        if self.value_samples == 0 {
            return Err(Error::invalid("cvs.value_samples: must be at least 1"));
        }
        if !(0.0..1.0).contains(&self.alpha) {
            return Err(Error::invalid(format!(
                "cvs.alpha: must be in [0, 1), got {}",
                self.alpha
            )));
        }
        let o = &self.optimum;
        if o.raw_samples == 0 || o.restarts == 0 || o.restarts > o.raw_samples {
            return Err(Error::invalid(format!(
                "cvs.optimum: need 1 ≤ restarts ≤ raw_samples, got restarts = {}, raw_samples = {}",
                o.restarts, o.raw_samples
            )));
        }
        check_count("cvs.value_samples", self.value_samples, VALUE_SAMPLES)?;
        check_count(
            "cvs.optimum.raw_samples",
            o.raw_samples,
            OPTIMUM_RAW_SAMPLES,
        )?;
        check_count("cvs.optimum.restarts", o.restarts, OPTIMUM_RESTARTS)?;
        check_count("cvs.optimum.max_iters", o.max_iters, OPTIMUM_MAX_ITERS)?;
        self.samplers(d)?;
        Ok(())
    }

    fn samplers(&self, d: usize) -> Result<InputDistributions> {
        InputDistributions::from_spec("cvs", self.distribution, self.distributions.as_deref(), d)
    }
}

#[cabo_core::plugin(
    name = "cvs",
    summary = "Cost-varying variable subsets: an objective, control sets with known or unknown random costs, truncated-normal/uniform open variables; value = E over open variables",
    paper = "002_68254e6b1337b56f (Sec. 4, App. C); 004_e019ef0c364ecaf4 (Sec. 3, App. C)",
    example = "{ type: cvs, objective: { type: hartmann3 }, control_sets: [[0], [1], [2], [0, 1], [0, 2], [1, 2], [0, 1, 2]], costs: [0.01, 0.01, 0.01, 0.1, 0.1, 0.1, 1.0], distribution: { type: truncated_normal, variance: 0.02 } }"
)]
impl ProblemSpec for CvsSpec {
    fn dim(&self) -> Result<usize> {
        let d = self.objective.dim().map_err(|e| e.at("cvs.objective"))?;
        self.check(d)?;
        Ok(d)
    }

    fn build(&self, seed: u64) -> Result<Box<dyn Problem>> {
        Ok(Box::new(CvsProblem::new(self, seed)?))
    }

    fn refuses_workers(&self) -> Option<String> {
        Some(
            "has control sets: a query leaves some inputs to the environment, so a pending \
             one has no point to fantasise at while it runs"
                .to_string(),
        )
    }

    fn set_spec_dir(&mut self, dir: &std::path::Path) {
        // The objective's own file paths (an airfoil table) are the spec file's too.
        self.objective.set_spec_dir(dir);
    }

    fn metric_names(&self) -> Vec<String> {
        METRIC_NAMES.iter().map(|m| m.to_string()).collect()
    }
}

/// Every metric [`CvsProblem`] records (`Problem::metrics`), for report validation.
const METRIC_NAMES: [&str; 7] = [
    "cvs.simple_regret",
    "cvs.cumulative_regret",
    "cvs.quality_regret",
    "cvs.cost_regret",
    "cvs.plays",
    "cvs.control_set",
    "cvs.on_optimal_set",
];

/// The numerically found optima of one replication.
#[derive(Debug, Clone, PartialEq)]
pub struct Optima {
    /// max_{x^i} E f([x^i, X^{-i}]) per control set.
    pub per_set: Vec<f64>,
    /// The searched maximiser x^i of each set (full-length vectors; open coordinates are
    /// 0.5). The full set's value may be the objective's own optimum, above the search's.
    pub argmax: Vec<Vec<f64>>,
    /// The worst value of f over \[0,1\]^d (the shift that makes f ≥ 0 for seed 004's regrets).
    pub worst: f64,
}

impl Optima {
    /// The best expected value over all control sets.
    pub fn best(&self) -> f64 {
        self.per_set
            .iter()
            .copied()
            .fold(f64::NEG_INFINITY, f64::max)
    }
}

/// One replication's searches, shared by every build of it in the process: the worst value
/// of f (cheap: f itself, found when the problem is built) and the per-set optima
/// (expensive: every evaluation averages the value samples, found on first use).
#[derive(Default)]
struct Searches {
    worst: OnceLock<std::result::Result<f64, String>>,
    optima: OnceLock<std::result::Result<Arc<Optima>, String>>,
}

type Cache = Mutex<HashMap<String, Arc<Searches>>>;

/// The searches are identical for every policy of a replication, so each runs once per
/// (spec, seed) in the process.
fn cache() -> &'static Cache {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The problem as a control-set policy sees it, without an objective: `dists.dim()`
/// continuous variables, the control sets `sets` (0-based, strictly increasing indices)
/// with their known `costs`, or unknown costs where `costs` is `None`, and `dists`
/// attached for the policies to draw the open variables from. [`CvsProblem::new`] builds
/// its view with it; so can a test, a benchmark or a study that drives a policy's
/// decisions outside the runner. Errors name the set or the cost count that is wrong.
pub fn problem_info(
    name: impl Into<String>,
    sets: &[Vec<usize>],
    costs: Option<&[f64]>,
    dists: InputDistributions,
) -> Result<ProblemInfo> {
    let d = dists.dim();
    check_sets(sets, d)?;
    if let Some(c) = costs
        && c.len() != sets.len()
    {
        return Err(Error::invalid(format!(
            "cvs.costs: {} costs for {} control sets",
            c.len(),
            sets.len()
        )));
    }
    let mut info = ProblemInfo::continuous(name, d);
    info.control_sets = sets
        .iter()
        .enumerate()
        .map(|(i, v)| ControlSet {
            variables: v.clone(),
            known_cost: costs.map(|c| c[i]),
        })
        .collect();
    Ok(info.with_extension(dists))
}

/// A built BOCVS problem (one replication).
pub struct CvsProblem {
    info: ProblemInfo,
    objective: Box<dyn Problem>,
    dists: InputDistributions,
    sets: Vec<Vec<usize>>,
    costs: Vec<f64>,
    noise: Option<CostNoise>,
    noise_std: f64,
    value_samples: Vec<f64>,
    full_set: Option<usize>,
    alpha: f64,
    /// How each set's optimum (and the worst value) is searched.
    search: cabo_core::OptimizerSettings,
    /// The searches' seed.
    search_seed: u64,
    /// The worst value of f over \[0,1\]^d.
    worst: f64,
    /// This replication's searches (the per-set optima run on first use: a report that
    /// rebuilds the problem to ascend from a run's best point never pays for them).
    searches: Arc<Searches>,
}

/// The worst value of the objective over \[0,1\]^d, attached to `ProblemInfo` as a typed
/// extension. Seed 004 shifts f by it so that f ≥ 0, which α-ETC's relative tolerance
/// (1 − α)·\overline{lcb} presumes: for an objective with negative values (Ackley, the
/// standardised airfoil surrogate) it is what the tolerance is measured from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ValueFloor(pub f64);

impl CvsProblem {
    /// Builds replication `seed` of `spec`, finding (or fetching) the worst value of its
    /// objective; the per-set optima are searched on first use.
    pub fn new(spec: &CvsSpec, seed: u64) -> Result<Self> {
        let objective = spec
            .objective
            .build(derive_seed(&[&seed, &"objective"]))
            .map_err(|e| e.at("cvs.objective"))?;
        let d = objective.info().dim;
        spec.check(d)?;
        let dists = spec.samplers(d)?;
        let value_samples =
            dists.sample_matrix(spec.value_samples, derive_seed(&[&seed, &"value_samples"]));
        let full_set = spec.control_sets.iter().position(|s| s.len() == d);
        let known_costs = spec.unknown_costs.is_none().then_some(&spec.costs[..]);
        let info = problem_info(
            format!("cvs({})", objective.info().name),
            &spec.control_sets,
            known_costs,
            dists.clone(),
        )?;
        let key = format!(
            "{}#{seed}",
            serde_json::to_string(spec).map_err(|e| Error::invalid(e.to_string()))?
        );
        let searches = cache()
            .lock()
            .map_err(|_| Error::numerical("cvs: the optimum cache was poisoned"))?
            .entry(key)
            .or_default()
            .clone();
        let mut p = CvsProblem {
            info,
            objective,
            dists,
            sets: spec.control_sets.clone(),
            costs: spec.costs.clone(),
            noise: spec.unknown_costs.clone(),
            noise_std: spec.noise_std,
            value_samples,
            full_set,
            alpha: spec.alpha,
            search: cabo_core::OptimizerSettings {
                raw_samples: spec.optimum.raw_samples,
                restarts: spec.optimum.restarts,
                max_iters: spec.optimum.max_iters,
            },
            search_seed: derive_seed(&[&seed, &"optimum"]),
            worst: 0.0,
            searches,
        };
        p.worst = p
            .searches
            .worst
            .get_or_init(|| p.compute_worst().map_err(|e| e.to_string()))
            .clone()
            .map_err(Error::numerical)?;
        p.info = p.info.clone().with_extension(ValueFloor(p.worst));
        Ok(p)
    }

    /// The optima of this replication, searched on the first call (for every build of the
    /// replication in the process). Errors only where the objective has no finite value
    /// at any point the search tries, which its evaluations would report too.
    pub fn optima(&self) -> Result<&Optima> {
        self.searches
            .optima
            .get_or_init(|| {
                self.compute_optima()
                    .map(Arc::new)
                    .map_err(|e| e.to_string())
            })
            .as_ref()
            .map(|o| &**o)
            .map_err(|e| Error::numerical(e.clone()))
    }

    /// Whether this replication's per-set optima have been searched in this process (by
    /// this build or another of the same replication).
    pub fn optima_searched(&self) -> bool {
        self.searches.optima.get().is_some()
    }

    /// The control sets (0-based variable indices).
    pub fn control_sets(&self) -> &[Vec<usize>] {
        &self.sets
    }

    /// The (mean) cost of each control set.
    pub fn mean_costs(&self) -> &[f64] {
        &self.costs
    }

    /// Seed 004's i*: the cheapest set whose best expected value, shifted by the worst
    /// value of f, is at least (1 − α) times the best.
    pub fn tolerant_best(&self) -> Result<usize> {
        Ok(tolerant_best(self.optima()?, &self.costs, self.alpha))
    }

    fn f(&self, x: &[f64]) -> Result<f64> {
        let o = self.objective.evaluate(&Query::at(x.to_vec()), 0)?;
        o.value.ok_or_else(|| {
            Error::invalid(format!(
                "cvs.objective: {} does not report noise-free values, which regret needs",
                self.objective.info().name
            ))
        })
    }

    /// E_{X^{-i}} f([x^i, X^{-i}]) over the fixed value sample set (exact f(x) when set i
    /// holds every variable). `x` is full length; only the coordinates of set i are read.
    pub fn expected_value(&self, set: usize, x: &[f64]) -> Result<f64> {
        let vars = self
            .sets
            .get(set)
            .ok_or_else(|| Error::invalid(format!("cvs: no control set {set}")))?;
        let d = self.info.dim;
        if vars.len() == d {
            return self.f(x);
        }
        let mut z = vec![0.0; d];
        let mut sum = 0.0;
        let m = self.value_samples.len() / d;
        for s in self.value_samples.chunks_exact(d) {
            z.copy_from_slice(s);
            for &v in vars {
                z[v] = x[v];
            }
            sum += self.f(&z)?;
        }
        Ok(sum / m as f64)
    }

    /// The expected value of playing control set `i` at `xi`, its variables' values in the
    /// set's order (NaN where the value cannot be computed, which an ascent avoids).
    fn set_value(&self, i: usize, xi: &[f64]) -> f64 {
        self.expected_value(i, &self.embed(i, xi))
            .unwrap_or(f64::NAN)
    }

    /// A full-length point with set `i`'s variables at `xi` and the open ones at 0.5.
    fn embed(&self, i: usize, xi: &[f64]) -> Vec<f64> {
        let mut x = vec![0.5; self.info.dim];
        for (k, &v) in self.sets[i].iter().enumerate() {
            x[v] = xi[k];
        }
        x
    }

    /// Each control set's best expected value and its maximiser. A set holding every
    /// variable leaves nothing open: its value is f, whose optimum the objective may know
    /// exactly (Hartmann, Ackley, Levy) or search far harder than a finite-difference
    /// search can afford (a GP prior sample: tens of thousands of points, a thousand
    /// restarts, analytic gradients), so that set takes the better of the two.
    fn compute_optima(&self) -> Result<Optima> {
        let (opt, seed) = (self.search, self.search_seed);
        let per: Vec<Result<(f64, Vec<f64>)>> = (0..self.sets.len())
            .into_par_iter()
            .map(|i| {
                let value = |xi: &[f64]| self.set_value(i, xi);
                let obj = FdObjective { f: &value };
                let (dim, seed) = (self.sets[i].len(), derive_seed(&[&seed, &i]));
                let best = maximize(&obj, dim, &opt, seed, &MaximizeOptions::default())?;
                let holds_all = self.sets[i].len() == self.info.dim;
                let known = holds_all.then(|| self.objective.optimum()).flatten();
                let value = known.map_or(best.value, |k| k.max(best.value));
                Ok((value, self.embed(i, &best.x)))
            })
            .collect();
        let mut per_set = Vec::new();
        let mut argmax = Vec::new();
        for r in per {
            let (v, x) = r?;
            per_set.push(v);
            argmax.push(x);
        }
        Ok(Optima {
            per_set,
            argmax,
            worst: self.worst,
        })
    }

    /// The worst value of f over \[0,1\]^d, by the same search on −f.
    fn compute_worst(&self) -> Result<f64> {
        let (opt, seed) = (self.search, self.search_seed);
        let worst_obj = FdObjective {
            f: &|x: &[f64]| -self.f(x).unwrap_or(f64::NAN),
        };
        let seed = derive_seed(&[&seed, &"worst"]);
        let d = self.info.dim;
        Ok(-maximize(&worst_obj, d, &opt, seed, &MaximizeOptions::default())?.value)
    }

    fn draw_cost(&self, set: usize, rng: &mut Rng) -> f64 {
        let c = self.costs[set];
        match &self.noise {
            Some(n) if c >= n.from_mean => (c + n.sd * rng.normal()).clamp(n.min, n.max),
            _ => c,
        }
    }
}

/// i*: the cheapest set (first of ties) among those within 1 − α of the best, after
/// shifting values by the worst value of f.
fn tolerant_best(o: &Optima, costs: &[f64], alpha: f64) -> usize {
    let best = o.best() - o.worst;
    let mut pick = 0;
    let mut pick_cost = f64::INFINITY;
    for (i, (&v, &c)) in o.per_set.iter().zip(costs).enumerate() {
        if v - o.worst >= (1.0 - alpha) * best && c < pick_cost {
            pick = i;
            pick_cost = c;
        }
    }
    pick
}

/// A scalar function on a box maximised with central finite-difference gradients (the
/// objectives wrapped here expose values only).
struct FdObjective<'a> {
    f: &'a (dyn Fn(&[f64]) -> f64 + Sync),
}

impl Objective for FdObjective<'_> {
    fn value(&self, x: &[f64]) -> f64 {
        (self.f)(x)
    }
    fn value_grad(&self, x: &[f64], grad: &mut [f64]) -> f64 {
        let v = (self.f)(x);
        let mut z = x.to_vec();
        for k in 0..x.len() {
            let h = 1e-6;
            let (lo, hi) = ((x[k] - h).max(0.0), (x[k] + h).min(1.0));
            z[k] = hi;
            let fp = (self.f)(&z);
            z[k] = lo;
            let fm = (self.f)(&z);
            z[k] = x[k];
            grad[k] = (fp - fm) / (hi - lo);
        }
        v
    }
}

impl Problem for CvsProblem {
    fn info(&self) -> &ProblemInfo {
        &self.info
    }

    fn evaluate(&self, query: &Query, seed: u64) -> Result<Outcome> {
        let d = self.info.dim;
        if query.x.len() != d {
            return Err(Error::invalid(format!(
                "cvs: query has {} coordinates, the problem has {d}",
                query.x.len()
            )));
        }
        let mut rng = Rng::new(seed);
        let set = match query.control_set {
            Some(i) if i >= self.sets.len() => {
                return Err(Error::invalid(format!(
                    "cvs: control set {i} does not exist ({} sets)",
                    self.sets.len()
                )));
            }
            Some(i) => Some(i),
            None => self.full_set,
        };
        let mut x = query.x.clone();
        if let Some(i) = set {
            self.dists
                .fill_uncontrolled(&self.sets[i], &mut x, &mut rng);
        }
        let inner = self
            .objective
            .evaluate(&Query::at(x.clone()), derive_seed(&[&seed, &"objective"]))?;
        let y = inner.y + self.noise_std * rng.normal();
        let (cost, value) = match set {
            Some(i) => (
                self.draw_cost(i, &mut rng),
                Some(self.expected_value(i, &query.x)?),
            ),
            None => {
                let most = (0..self.sets.len())
                    .max_by(|&a, &b| self.costs[a].total_cmp(&self.costs[b]))
                    .unwrap_or(0);
                (self.draw_cost(most, &mut rng), None)
            }
        };
        Ok(Outcome::new(y, cost, x, value))
    }

    /// The best set's searched optimum (`None` only where [`CvsProblem::optima`] errs).
    fn optimum(&self) -> Option<f64> {
        self.optima().ok().map(Optima::best)
    }

    /// Each set's optimum is a multi-start search (a few restarts of finite-difference
    /// L-BFGS-B) that a run can beat: the ascent climbs the expected value of the set `x`
    /// was played with, from `x`'s values of that set's variables.
    fn local_optimum(&self, x: &[f64], control_set: Option<usize>) -> Option<f64> {
        let i = control_set.or(self.full_set)?;
        let from: Option<Vec<f64>> = self
            .sets
            .get(i)?
            .iter()
            .map(|&v| x.get(v).copied())
            .collect();
        let value = |xi: &[f64]| self.set_value(i, xi);
        ascend(&FdObjective { f: &value }, &from?, ASCENT_MAX_ITERS)
            .ok()
            .map(|m| m.value)
    }

    fn metrics(&self, history: &[Observation]) -> BTreeMap<String, f64> {
        let mut out = BTreeMap::new();
        let Ok(optima) = self.optima() else {
            return out; // no regret without optima; the run's evaluations say why
        };
        let (best, worst) = (optima.best(), optima.worst);
        let tolerant_best = tolerant_best(optima, &self.costs, self.alpha);
        let c_star = self.costs[tolerant_best];
        let (mut simple, mut cumulative, mut quality, mut cost_regret) =
            (f64::INFINITY, 0.0, 0.0, 0.0);
        let mut last = None;
        let mut plays = 0usize;
        for o in history.iter().filter(|o| o.phase == Phase::Policy) {
            let Some(i) = o.query.control_set.or(self.full_set) else {
                continue;
            };
            let Some(v) = o.outcome.value else { continue };
            plays += 1;
            let gap = best - v;
            simple = f64::min(simple, gap);
            cumulative += self.costs[i] * gap;
            quality += (1.0 - self.alpha) * (best - worst) - (v - worst);
            cost_regret += (self.costs[i] - c_star).max(0.0);
            last = Some(i);
        }
        if plays > 0 {
            out.insert("cvs.simple_regret".into(), simple.max(0.0));
        }
        out.insert("cvs.cumulative_regret".into(), cumulative);
        out.insert("cvs.quality_regret".into(), quality);
        out.insert("cvs.cost_regret".into(), cost_regret);
        out.insert("cvs.plays".into(), plays as f64);
        if let Some(i) = last {
            out.insert("cvs.control_set".into(), i as f64);
            // 1 when the play used the optimal set i* (a report marker's input).
            let on = f64::from(u8::from(i == tolerant_best));
            out.insert("cvs.on_optimal_set".into(), on);
        }
        out
    }
}
