//! cabo plugins: the `markov_path` problem and the `markov_dp` / `markov_one_step` policies.
//!
//! The problem draws one path per replication seed from the grid law of the prior (left to
//! right, each point given its left neighbour and the known right end) and evaluates it on
//! the x-grid, mapped to `[0, 1]` as a finite domain; each evaluation costs the sampling cost
//! c. The endpoint observations `Y(0)`, `Y(ℓ)` are known to the learner: the problem attaches
//! them, with the whole [`Setup`], as a [`MarkovInfo`] extension of its [`ProblemInfo`], and
//! the policies read it there. Policies decide from `ctx.data` alone and stop with
//! [`Decision::Stop`] when their rule says so. Solved dynamic programs are cached per setup,
//! so replications do not re-solve.

use crate::dp::{Setup, Solution, SolveOptions};
use crate::grid::Grid;
use crate::prior::Prior;
use crate::reward::Reward;
use crate::sim::{History, PolicyRule};
use cabo_core::{
    BuildContext, Dataset, Decision, DecisionContext, Diagnostics, Domain, Error, Observation,
    Outcome, Policy, PolicySpec, Problem, ProblemInfo, ProblemSpec, Query, Result, Rng,
    derive_seed,
};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};

fn default_reward() -> Reward {
    Reward::Indicator { threshold: 0.0 }
}
fn default_length() -> f64 {
    1.0
}

/// Spec of the `markov_path` problem.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MarkovPathSpec {
    /// The prior the path is drawn from.
    pub prior: Prior,
    /// The classification reward (default: indicator at threshold 0).
    #[serde(default = "default_reward")]
    pub reward: Reward,
    /// Domain length ℓ (default 1).
    #[serde(default = "default_length")]
    pub length: f64,
    /// x-grid points.
    pub x_levels: usize,
    /// y-levels.
    pub y_levels: usize,
    /// Lowest y-level.
    pub y_min: f64,
    /// Highest y-level.
    pub y_max: f64,
    /// Known value `Y(0)` (a grid level; default 0).
    #[serde(default)]
    pub y_start: f64,
    /// Known value `Y(ℓ)` (a grid level; default 0).
    #[serde(default)]
    pub y_end: f64,
    /// Cost per sample c.
    pub cost: f64,
}

impl MarkovPathSpec {
    fn setup(&self) -> Result<(Setup, usize, usize)> {
        let setup = Setup {
            prior: self.prior.clone(),
            reward: self.reward.clone(),
            grid: Grid {
                length: self.length,
                x_levels: self.x_levels,
                y_min: self.y_min,
                y_max: self.y_max,
                y_levels: self.y_levels,
            },
            cost: self.cost,
        };
        setup.validate()?;
        let a = setup
            .grid
            .level_of(self.y_start)
            .map_err(|e| e.at("y_start"))?;
        let b = setup.grid.level_of(self.y_end).map_err(|e| e.at("y_end"))?;
        Ok((setup, a, b))
    }
}

/// What a learner knows about a `markov_path` problem beyond its domain.
#[derive(Debug, Clone)]
pub struct MarkovInfo {
    /// The full problem definition (prior, reward, grids, cost).
    pub setup: Setup,
    /// y-level index of the known `Y(0)`.
    pub start_level: usize,
    /// y-level index of the known `Y(ℓ)`.
    pub end_level: usize,
}

/// One replication of `markov_path`: a path on the x-grid.
pub struct MarkovPath {
    info: ProblemInfo,
    markov: MarkovInfo,
    /// y-level index of the path at every x-grid point.
    path: Vec<usize>,
}

impl MarkovPath {
    /// The path's y-level index at every x-grid point.
    pub fn path(&self) -> &[usize] {
        &self.path
    }
}

/// The solved dynamic program of a setup, solved once per process.
pub fn cached_solution(setup: &Setup) -> Result<Arc<Solution>> {
    static CACHE: OnceLock<Mutex<Vec<Arc<Solution>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(Vec::new()));
    if let Some(s) = cache
        .lock()
        .map_err(|_| Error::numerical("solution cache poisoned"))?
        .iter()
        .find(|s| s.setup() == setup)
    {
        return Ok(s.clone());
    }
    let sol = Arc::new(Solution::solve(setup, &SolveOptions::default())?);
    let mut guard = cache
        .lock()
        .map_err(|_| Error::numerical("solution cache poisoned"))?;
    // Bounded: a sweep over many costs should not keep every table alive.
    if guard.len() >= 8 {
        guard.remove(0);
    }
    guard.push(sol.clone());
    Ok(sol)
}

/// The history a learner holds: the known endpoints plus every observation so far.
fn history_of(markov: &MarkovInfo, observations: &[Observation]) -> Result<(History, usize)> {
    let g = &markov.setup.grid;
    let mut h = History::new(g.x_levels, markov.start_level, markov.end_level);
    let before = h.points().len();
    for o in observations {
        let x = grid_index(g, o.outcome.x.first().copied().unwrap_or(f64::NAN))?;
        h.insert(x, g.nearest_y(o.outcome.y));
    }
    let taken = h.points().len() - before;
    Ok((h, taken))
}

fn grid_index(g: &Grid, u: f64) -> Result<usize> {
    let r = u * (g.x_levels - 1) as f64;
    let i = r.round();
    if !(0.0..=(g.x_levels - 1) as f64).contains(&i) || (r - i).abs() > 1e-6 {
        return Err(Error::invalid(format!(
            "x = {u} is not a point of the {}-point grid on [0, 1]",
            g.x_levels
        )));
    }
    Ok(i as usize)
}

impl Problem for MarkovPath {
    fn info(&self) -> &ProblemInfo {
        &self.info
    }

    fn evaluate(&self, query: &Query, _seed: u64) -> Result<Outcome> {
        if query.x.len() != 1 {
            return Err(Error::invalid(format!(
                "markov_path is one-dimensional, got a query with {} coordinates",
                query.x.len()
            )));
        }
        let g = &self.markov.setup.grid;
        let i = grid_index(g, query.x[0])?;
        let y = g.y(self.path[i]);
        Ok(Outcome::new(
            y,
            self.markov.setup.cost,
            vec![i as f64 / (g.x_levels - 1) as f64],
            Some(y),
        ))
    }

    fn to_native(&self, x: &[f64]) -> Vec<f64> {
        x.iter()
            .map(|u| u * self.markov.setup.grid.length)
            .collect()
    }

    /// A position on the interval `[0, length]` as a fraction of its length.
    fn native_to_unit(&self, native: &[f64]) -> Vec<f64> {
        native
            .iter()
            .map(|z| z / self.markov.setup.grid.length)
            .collect()
    }

    /// `expected_reward` = R(H) (the classification reward of stopping now, eq. 2.4),
    /// `net_value` = R(H) − c·τ, and `value_to_go` = V(H).
    fn metrics(&self, history: &[Observation]) -> BTreeMap<String, f64> {
        let mut out = BTreeMap::new();
        let (Ok(sol), Ok((h, taken))) = (
            cached_solution(&self.markov.setup),
            history_of(&self.markov, history),
        ) else {
            return out;
        };
        let r = sol.history_reward(&h);
        out.insert("expected_reward".into(), r);
        out.insert(
            "net_value".into(),
            r - self.markov.setup.cost * taken as f64,
        );
        out.insert("value_to_go".into(), sol.history_value(&h));
        out
    }
}

#[cabo_core::plugin(
    name = "markov_path",
    summary = "A path of a Markov-process prior (Brownian, compound Poisson) on an x-grid; classify it against a threshold paying c per sample",
    paper = "003_82c3abffebce4173 §2, §5",
    example = "{ type: markov_path, prior: { type: brownian, scale: 1.0 }, x_levels: 17, y_levels: 25, y_min: -2.5, y_max: 2.5, cost: 0.01 }"
)]
impl ProblemSpec for MarkovPathSpec {
    fn dim(&self) -> Result<usize> {
        self.setup()?;
        Ok(1)
    }

    fn metric_names(&self) -> Vec<String> {
        ["expected_reward", "net_value", "value_to_go"]
            .map(String::from)
            .to_vec()
    }

    fn build(&self, seed: u64) -> Result<Box<dyn Problem>> {
        let (setup, a, b) = self.setup()?;
        let kernel = crate::prior::Kernel::new(&setup.prior, &setup.grid)?;
        let g = &setup.grid;
        let m = g.x_levels;
        let mut rng = Rng::new(derive_seed(&[&seed, &"markov_path"]));
        let mut scratch = vec![0.0; g.y_levels];
        let mut path = vec![0usize; m];
        path[0] = a;
        path[m - 1] = b;
        for i in 0..m.saturating_sub(2) {
            // Y(x_{i+1}) given Y(x_i) and the known Y(ℓ): the Markov bridge, step by step.
            path[i + 1] = kernel.sample(i, m - 1 - i, 1, path[i], b, &mut rng, &mut scratch);
        }
        let points = (0..m).map(|i| vec![i as f64 / (m - 1) as f64]).collect();
        let markov = MarkovInfo {
            setup,
            start_level: a,
            end_level: b,
        };
        let mut info = ProblemInfo::continuous("markov_path", 1).with_extension(markov.clone());
        info.domain = Domain::Finite(points);
        Ok(Box::new(MarkovPath { info, markov, path }))
    }
}

/// Spec of the Bayes-optimal policy read from Algorithm 1's value array.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MarkovDpSpec {}

/// Spec of the one-step lookahead policy; with `samples` it takes exactly that many.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MarkovOneStepSpec {
    /// Take exactly this many samples, ignoring the cost (the `V₂` lower bound of §4).
    #[serde(default)]
    pub samples: Option<usize>,
}

/// A `markov_dp` or `markov_one_step` policy for one run.
pub struct MarkovPolicy {
    rule: PolicyRule,
    markov: MarkovInfo,
    solution: Arc<Solution>,
    last: Diagnostics,
}

fn build_policy(ctx: &BuildContext<'_>, rule: PolicyRule, name: &str) -> Result<Box<dyn Policy>> {
    let markov = ctx.problem.extension::<MarkovInfo>().ok_or_else(|| {
        Error::unsupported(format!(
            "policy `{name}` needs the `markov_path` problem (it reads the prior and grid from it)"
        ))
    })?;
    Ok(Box::new(MarkovPolicy {
        rule,
        markov: markov.clone(),
        solution: cached_solution(&markov.setup)?,
        last: Diagnostics::new(),
    }))
}

impl Policy for MarkovPolicy {
    fn decide(&mut self, ctx: &DecisionContext<'_>) -> Result<Decision> {
        let data: &Dataset = ctx.data;
        let (h, taken) = history_of(&self.markov, data.observations())?;
        self.last = Diagnostics::new();
        self.last
            .insert("expected_reward".into(), self.solution.history_reward(&h));
        self.last
            .insert("value_to_go".into(), self.solution.history_value(&h));
        let m = self.markov.setup.grid.x_levels;
        Ok(match self.solution.decide(self.rule, &h, taken)? {
            Some(x) => Decision::Evaluate(Query::at(vec![x as f64 / (m - 1) as f64])),
            None => Decision::Stop(match self.rule {
                PolicyRule::Optimal => "stopping reward is at least the value of sampling".into(),
                PolicyRule::OneStep => "no one-step gain exceeds the cost".into(),
                PolicyRule::OneStepFixed { samples } => format!("took {samples} samples"),
            }),
        })
    }

    fn diagnostics(&self) -> Diagnostics {
        self.last.clone()
    }

    cabo_core::stateless_checkpoint!("the Markov policy");
}

#[cabo_core::plugin(
    name = "markov_dp",
    summary = "Bayes-optimal sampling and stopping for markov_path from the dynamic program over two-point histories",
    paper = "003_82c3abffebce4173 §3 (Algorithm 1)",
    example = "{ type: markov_dp }"
)]
impl PolicySpec for MarkovDpSpec {
    fn validate(&self, dim: usize) -> Result<()> {
        check_dim(dim, "markov_dp")
    }
    fn build(&self, ctx: &BuildContext<'_>) -> Result<Box<dyn Policy>> {
        build_policy(ctx, PolicyRule::Optimal, "markov_dp")
    }
}

#[cabo_core::plugin(
    name = "markov_one_step",
    summary = "One-step lookahead for markov_path: sample the largest expected reward gain while it exceeds the cost (or exactly `samples` times)",
    paper = "003_82c3abffebce4173 §5",
    example = "{ type: markov_one_step }"
)]
impl PolicySpec for MarkovOneStepSpec {
    fn validate(&self, dim: usize) -> Result<()> {
        check_dim(dim, "markov_one_step")
    }
    fn build(&self, ctx: &BuildContext<'_>) -> Result<Box<dyn Policy>> {
        let rule = match self.samples {
            Some(samples) => PolicyRule::OneStepFixed { samples },
            None => PolicyRule::OneStep,
        };
        build_policy(ctx, rule, "markov_one_step")
    }
}

fn check_dim(dim: usize, name: &str) -> Result<()> {
    if dim == 1 {
        Ok(())
    } else {
        Err(Error::invalid(format!(
            "policy `{name}` works on one-dimensional problems, got dimension {dim}"
        )))
    }
}
