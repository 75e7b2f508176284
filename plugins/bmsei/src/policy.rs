//! The tree policies: `bmsei` (B-MS-EI and its path variant), `ms_ei` (multi-step EI with
//! uniform costs) and `kg` (one-shot knowledge gradient). All three build a scenario tree
//! ([`crate::tree`]) per decision, maximise every decision point of it jointly with
//! cabo-optim's multi-start L-BFGS-B, warm-started from the previous decision's tree (and,
//! for trees of one-step values, from roots at the one-step and posterior-mean maximisers
//! and from seed 001's fantasy start, the `fantasy_start` module), and evaluate the root
//! point. A decision records which start won (`warm_start_won`, `root_start_won`,
//! `fantasy_start_won`).

use crate::belief::UnitCostPath;
use crate::fantasy_start::fantasy_start;
use crate::kg::KgObjective;
use crate::schedule::{BudgetMode, Scheduler};
use crate::tree::{BaseSamples, NodeValue, Tree, TreeObjective, validate_fantasies};
use cabo_core::capability::{self, Covariance};
use cabo_core::{
    BuildContext, Capabilities, Capability, Decision, DecisionContext, Diagnostics, Domain, Error,
    Objective, OptimizerSettings, PluginState, Policy, PolicySpec, Posterior, Query, Requirements,
    Result, derive_seed,
};
use cabo_optim::{MaximizeOptions, Start, Tolerances, maximize};
use serde::{Deserialize, Serialize};

/// Spec of B-MS-EI (`policy: { type: bmsei, fantasies: [4, 4, 2] }`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BmseiSpec {
    /// Fantasies per stage `(m₁, …, m_{N−1})`; `N` = length + 1 look-ahead steps. All ones
    /// is the path variant B-MS-EI_p; `[]` is the one-step Q₁.
    pub fantasies: Vec<usize>,
    /// `scheduled` (default, §4.3) or `remaining`.
    #[serde(default = "scheduled")]
    pub budget: BudgetMode,
    /// `shared_sobol` (default) or `independent`: see [`BaseSampleScheme`].
    #[serde(default, skip_serializing_if = "BaseSampleScheme::is_default")]
    pub base_samples: BaseSampleScheme,
}

/// How a tree policy chooses its fantasies' standard-normal base samples (the spec key
/// `base_samples` of `bmsei`, `ms_ei` and `kg`). Left at its default the key is not
/// serialised, so a spec's fingerprint does not depend on whether it spells the default out.
///
/// The default is seed 001's own: its `budgeted_multi_step_ei.py` gives every stage a
/// `SobolQMCNormalSampler` whose base samples are shared by the stage's subtrees
/// (`collapse_fantasy_base_samples`), and a stage of one fantasy its posterior mean. KG
/// shares it: BoTorch's one-shot `qKnowledgeGradient` draws its fantasies from a
/// `SobolQMCNormalSampler` too, and a one-stage tree has nothing else to share.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BaseSampleScheme {
    /// Independent draws for every node of the tree ([`BaseSamples::Seeded`]).
    Independent,
    /// One scrambled Sobol' set per stage, shared by every node of the stage
    /// ([`BaseSamples::SharedSobol`]): BoTorch's `qMultiStepLookahead` default, which seed
    /// 001's implementation uses.
    #[default]
    SharedSobol,
}

impl BaseSampleScheme {
    fn is_default(&self) -> bool {
        *self == BaseSampleScheme::default()
    }

    /// The tree's base samples under this scheme, seeded by `seed`.
    pub fn samples(self, seed: u64) -> BaseSamples {
        match self {
            BaseSampleScheme::Independent => BaseSamples::Seeded(seed),
            BaseSampleScheme::SharedSobol => BaseSamples::SharedSobol(seed),
        }
    }

    /// The base samples of the tree a decision seeded by `decision_seed` maximises. The one
    /// definition the policy's decision and `inspect`'s evaluation of its tree
    /// ([`crate::lookahead`]) share, so that "the policy's own samples" are the same bits in
    /// both.
    pub fn decision_samples(self, decision_seed: u64) -> BaseSamples {
        self.samples(derive_seed(&[&decision_seed, &"tree base samples"]))
    }
}

fn scheduled() -> BudgetMode {
    BudgetMode::Scheduled
}

#[cabo_core::plugin(
    name = "bmsei",
    summary = "budgeted multi-step EI with unknown costs: one-shot scenario tree of budgeted one-step values, jointly optimised; all-ones fantasies give the path variant",
    paper = "001_ffe8b93f5b7c8c43.txt §4",
    example = "{ type: bmsei, fantasies: [1, 1, 1], budget: scheduled }"
)]
impl PolicySpec for BmseiSpec {
    fn validate(&self, dim: usize) -> Result<()> {
        validate_fantasies(dim, &self.fantasies)
    }
    fn needs_incumbent(&self) -> bool {
        // The tree's improvements are over the best observed value.
        true
    }
    /// Covariances of y and ln c for the tree; fantasies of both for the budget schedule.
    fn requires(&self) -> Requirements {
        let need = Capabilities::NONE
            .with(Capability::Covariance)
            .with_if(Capability::Fantasize, self.budget == BudgetMode::Scheduled);
        Requirements {
            model: need,
            cost_model: need,
        }
    }
    fn build(&self, ctx: &BuildContext<'_>) -> Result<Box<dyn Policy>> {
        self.validate(ctx.problem.dim)?;
        Ok(Box::new(
            TreePolicy::new(Variant::Bmsei(self.budget), self.fantasies.clone())
                .with_base_samples(self.base_samples),
        ))
    }
    /// The scenario tree this policy maximises ([`crate::lookahead`]).
    fn lookahead(&self) -> Option<&dyn cabo_core::LookaheadSpec> {
        Some(self)
    }
}

/// Spec of multi-step EI (`policy: { type: ms_ei, fantasies: [4, 2] }`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MsEiSpec {
    /// Fantasies per stage; the horizon is length + 1 steps.
    pub fantasies: Vec<usize>,
    /// `shared_sobol` (default) or `independent`: see [`BaseSampleScheme`].
    #[serde(default, skip_serializing_if = "BaseSampleScheme::is_default")]
    pub base_samples: BaseSampleScheme,
}

#[cabo_core::plugin(
    name = "ms_ei",
    summary = "multi-step EI (uniform costs, horizon in steps, capped by an iteration budget): the B-MS-EI tree with c ≡ 1",
    paper = "001_ffe8b93f5b7c8c43.txt §4 (Jiang et al. 2020); compared in 000",
    example = "{ type: ms_ei, fantasies: [4, 2] }"
)]
impl PolicySpec for MsEiSpec {
    fn validate(&self, dim: usize) -> Result<()> {
        validate_fantasies(dim, &self.fantasies)
    }
    fn needs_incumbent(&self) -> bool {
        // The tree's improvements are over the best observed value.
        true
    }
    fn requires(&self) -> Requirements {
        TREE_OVER_THE_OBJECTIVE
    }
    fn build(&self, ctx: &BuildContext<'_>) -> Result<Box<dyn Policy>> {
        self.validate(ctx.problem.dim)?;
        Ok(Box::new(
            TreePolicy::new(Variant::MsEi, self.fantasies.clone())
                .with_base_samples(self.base_samples),
        ))
    }
    /// The scenario tree this policy maximises ([`crate::lookahead`]).
    fn lookahead(&self) -> Option<&dyn cabo_core::LookaheadSpec> {
        Some(self)
    }
}

/// Spec of the one-shot knowledge gradient (`policy: { type: kg, fantasies: 64 }`). The
/// recorded `acq_value` is the sample-average `E[max_x' μ_{D ∪ (x, y)}(x')]`, i.e. KG plus
/// the (constant) current maximum of the posterior mean.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KgSpec {
    /// Number of fantasies (default 64).
    #[serde(default = "default_kg_fantasies")]
    pub fantasies: usize,
    /// `shared_sobol` (default: scrambled Sobol' fantasies, as BoTorch's one-shot KG draws
    /// them) or `independent`: see [`BaseSampleScheme`].
    #[serde(default, skip_serializing_if = "BaseSampleScheme::is_default")]
    pub base_samples: BaseSampleScheme,
}

fn default_kg_fantasies() -> usize {
    64
}

#[cabo_core::plugin(
    name = "kg",
    summary = "one-shot knowledge gradient: E[max posterior mean after one fantasised observation], all fantasy maximisers optimised jointly",
    paper = "000 baseline (Balandat et al. 2020, one-shot KG)",
    example = "{ type: kg, fantasies: 64 }"
)]
impl PolicySpec for KgSpec {
    fn validate(&self, dim: usize) -> Result<()> {
        validate_fantasies(dim, &[self.fantasies])
    }
    fn needs_incumbent(&self) -> bool {
        // The one-shot tree is rooted at the data's posterior and needs an observation.
        true
    }
    /// The general tree's covariances (a model's fantasy means, when it offers them, are
    /// only faster).
    fn requires(&self) -> Requirements {
        TREE_OVER_THE_OBJECTIVE
    }
    fn build(&self, ctx: &BuildContext<'_>) -> Result<Box<dyn Policy>> {
        self.validate(ctx.problem.dim)?;
        Ok(Box::new(
            TreePolicy::new(Variant::Kg, vec![self.fantasies]).with_base_samples(self.base_samples),
        ))
    }
    /// The scenario tree this policy maximises ([`crate::lookahead`]).
    fn lookahead(&self) -> Option<&dyn cabo_core::LookaheadSpec> {
        Some(self)
    }
}

/// What multi-step EI and KG need: covariances of the objective (their cost is the unit).
const TREE_OVER_THE_OBJECTIVE: Requirements = Requirements {
    model: Capabilities::NONE.with(Capability::Covariance),
    cost_model: Capabilities::NONE,
};

/// Which relative of the tree a policy uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// B-MS-EI with the given budget rule.
    Bmsei(BudgetMode),
    /// Multi-step EI (unit costs).
    MsEi,
    /// One-shot knowledge gradient.
    Kg,
}

/// The last decision's optimal tree, which warm-starts the next one.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Warm {
    xs: Vec<f64>,
    fantasies: Vec<f64>,
    n: usize,
}

/// A scenario-tree policy (see the module documentation).
pub struct TreePolicy {
    variant: Variant,
    fantasies: Vec<usize>,
    base_samples: BaseSampleScheme,
    scheduler: Scheduler,
    warm: Option<Warm>,
    fantasy_start: bool,
    last: Diagnostics,
}

impl TreePolicy {
    /// A policy of the given variant and fantasy counts, with the default base samples
    /// (shared Sobol' sets per stage).
    pub fn new(variant: Variant, fantasies: Vec<usize>) -> Self {
        TreePolicy {
            variant,
            fantasies,
            base_samples: BaseSampleScheme::default(),
            scheduler: Scheduler::default(),
            warm: None,
            fantasy_start: true,
            last: Diagnostics::new(),
        }
    }

    /// The same policy with or without seed 001's fantasy start (the `fantasy_start` module)
    /// among its tree searches' starts (with it by default).
    pub fn with_fantasy_start(mut self, on: bool) -> Self {
        self.fantasy_start = on;
        self
    }

    /// The same policy drawing its trees' base samples by `scheme`.
    pub fn with_base_samples(mut self, scheme: BaseSampleScheme) -> Self {
        self.base_samples = scheme;
        self
    }
}

/// The posterior mean of the objective.
struct PosteriorMean<'a>(&'a dyn Posterior);

impl Objective for PosteriorMean<'_> {
    fn value(&self, x: &[f64]) -> f64 {
        self.0.mean_var(x).mean
    }
    fn values(&self, xs: &[f64], out: &mut [f64]) {
        let mut mv = vec![cabo_core::MeanVar::default(); out.len()];
        self.0.mean_var_batch(xs, &mut mv);
        for (o, m) in out.iter_mut().zip(&mv) {
            *o = m.mean;
        }
    }
    fn value_grad(&self, x: &[f64], grad: &mut [f64]) -> f64 {
        match self.0.mean_var_grad(x) {
            Ok(m) => {
                grad.copy_from_slice(&m.dmean);
                m.mean
            }
            Err(_) => {
                grad.fill(f64::NAN);
                f64::NAN
            }
        }
    }
}

/// Where a tree of one-step values (B-MS-EI, multi-step EI) also starts its root: the
/// maximisers of the root's own term — the budgeted one-step value Q₁(x | D, B), EI with unit
/// costs — and of the posterior mean, both found in `d` dimensions, where the usual
/// multi-start finds them far more reliably than in the tree's `nodes · d`. KG's leaves
/// carry no root term, so its trees get none.
///
/// Every node adds a non-negative value and L-BFGS-B never ends below its start, so the tree
/// returned is worth at least the one-step optimum found; the posterior-mean start (the
/// extra initial condition of seed 001's own code) puts a root near the incumbent, where Q₁
/// often has a narrow peak late in a run. With raw samples alone the root reaches a narrow
/// region of large Q₁ only by chance: in DropWave and Alpine-1 runs the tree returned was
/// worth less than max Q₁ in about one decision in eight, at times an eighth of it.
pub(crate) fn root_starts(
    ctx: &DecisionContext<'_>,
    obj: &TreeObjective<'_>,
) -> Result<Vec<Vec<f64>>> {
    if obj.kind() != NodeValue::BudgetedEi {
        return Ok(Vec::new());
    }
    let d = ctx.problem.dim;
    let single = Tree::new(d, &[], BaseSamples::Seeded(0))?;
    let term = obj.with_tree(&single)?;
    let mean = PosteriorMean(ctx.posterior()?);
    let settings = root_settings(ctx.optimizer);
    let options = MaximizeOptions {
        tolerances: Tolerances::SCIPY,
        ..MaximizeOptions::default()
    };
    let mut roots = Vec::new();
    for (f, seed) in [
        (&term as &dyn Objective, "one step"),
        (&mean, "posterior mean"),
    ] {
        let seed = derive_seed(&[&ctx.seed, &seed]);
        let m = maximize(f, d, &settings, seed, &options)?;
        roots.push(m.x);
    }
    Ok(roots)
}

/// KG's one-stage tree in its faster form where the model offers fantasy means (the exact
/// GP's is O(n·d) per leaf); `None` for other trees, which go through the general path
/// algebra ([`TreeObjective`]).
pub(crate) fn kg_form<'a>(
    variant: Variant,
    tree: &Tree,
    posterior: &'a dyn Posterior,
) -> Result<Option<KgObjective<'a>>> {
    match (variant, posterior.fantasy_means()) {
        (Variant::Kg, Some(means)) => Ok(Some(KgObjective::new(tree, means)?)),
        _ => Ok(None),
    }
}

/// The search for a root start: half the decision's raw samples, restarts and iterations,
/// with SciPy's tolerances. At the specs' 200·d / 10·d / 200 these are seed 001's own
/// settings for its posterior-mean initial condition (`custom_warmstart_multistep.py`:
/// 100·d raw samples, 5·d restarts, 100 iterations); the start is a point the tree's own
/// search then polishes, so it need not be converged to cabo's tighter default. At d = 32 the
/// two root searches took 4.4 s of a 29 s path decision with the full settings.
pub(crate) fn root_settings(s: &OptimizerSettings) -> OptimizerSettings {
    let restarts = (s.restarts / 2).max(1);
    OptimizerSettings {
        raw_samples: (s.raw_samples / 2).max(restarts),
        restarts,
        max_iters: (s.max_iters / 2).max(1),
    }
}

impl TreePolicy {
    /// The cost path (`None` for the unit cost, [`UnitCostPath`]), budget and node values of
    /// this decision's tree (B-MS-EI schedules its budget here, recording it in
    /// `diagnostics`).
    pub(crate) fn cost_and_budget<'c>(
        &mut self,
        ctx: &'c DecisionContext<'_>,
        diagnostics: &mut Diagnostics,
    ) -> Result<(Option<&'c dyn Covariance>, f64, NodeValue)> {
        Ok(match self.variant {
            Variant::Bmsei(mode) => {
                let belief = ctx.cost_belief()?;
                let budget = self.scheduler.budget(ctx, mode, self.fantasies.len() + 1)?;
                if budget.is_finite() {
                    diagnostics.insert("budget".into(), budget);
                    diagnostics.insert(
                        "budget_rollout".into(),
                        f64::from(u8::from(self.scheduler.rolled_out)),
                    );
                }
                let c = belief.covariance().ok_or_else(|| {
                    capability::missing("bmsei", "cost model", Capability::Covariance)
                })?;
                (Some(c), budget, NodeValue::BudgetedEi)
            }
            Variant::MsEi => {
                let b = &ctx.budget;
                let left = b
                    .budget
                    .iterations
                    .map_or(f64::INFINITY, |n| n.saturating_sub(b.iterations) as f64);
                (None, left, NodeValue::BudgetedEi)
            }
            Variant::Kg => (None, f64::INFINITY, NodeValue::LeafMean),
        })
    }

    /// The previous decision's optimal tree, re-rooted at the first-stage branch whose
    /// fantasy is nearest the value just observed, when the last decision was this policy's.
    fn warm_start(&self, ctx: &DecisionContext<'_>, tree: &Tree) -> Option<Vec<f64>> {
        let w = self.warm.as_ref()?;
        let obs = ctx.data.observations().last()?;
        if ctx.data.len() != w.n + 1 || w.fantasies.is_empty() {
            return None;
        }
        let y = obs.outcome.y;
        let branch = (0..w.fantasies.len()).min_by(|&a, &b| {
            (w.fantasies[a] - y)
                .abs()
                .total_cmp(&(w.fantasies[b] - y).abs())
        })?;
        Some(tree.shifted_subtree(&w.xs, branch))
    }

    /// Maximises the tree over the unit cube, warm-started from the previous tree and, for
    /// trees of one-step values, from [`root_starts`] and seed 001's fantasy start; returns
    /// the root point and the value.
    fn search(
        &mut self,
        ctx: &DecisionContext<'_>,
        obj: &TreeObjective<'_>,
        diagnostics: &mut Diagnostics,
    ) -> Result<(Vec<f64>, f64)> {
        let tree = obj.tree();
        let mut warm: Vec<Vec<f64>> = self.warm_start(ctx, tree).into_iter().collect();
        let kg = kg_form(self.variant, tree, ctx.posterior()?)?;
        let function: &dyn Objective = match &kg {
            Some(kg) => kg,
            None => obj,
        };
        let roots = root_starts(ctx, obj)?;
        let unit_cost = self.variant == Variant::MsEi;
        let fantasy = match roots.get(1) {
            Some(mean_root) if self.fantasy_start => fantasy_start(ctx, obj, unit_cost, mean_root)?,
            _ => None,
        };
        let fantasy_index = fantasy.as_ref().map(|_| warm.len());
        warm.extend(fantasy);
        // SciPy's tolerances, as BoTorch's multi-step lookahead: a tree has hundreds of
        // variables, and polishing a Monte Carlo objective to cabo's tighter default costs
        // most of the iterations for no change in the root point.
        let options = MaximizeOptions {
            warm_starts: &warm,
            partial_starts: &roots,
            tolerances: Tolerances::SCIPY,
            ..MaximizeOptions::default()
        };
        let seed = derive_seed(&[&ctx.seed, &"tree"]);
        let m = maximize(function, tree.dim(), ctx.optimizer, seed, &options)?;
        let won = |start: bool| f64::from(u8::from(start));
        let start = match m.start {
            Start::Warm(i) => Some(i),
            _ => None,
        };
        diagnostics.insert(
            "warm_start_won".into(),
            won(start.is_some() && start != fantasy_index),
        );
        if fantasy_index.is_some() {
            diagnostics.insert("fantasy_start_won".into(), won(start == fantasy_index));
        }
        if !roots.is_empty() {
            let root_won = won(matches!(m.start, Start::Partial(_)));
            diagnostics.insert("root_start_won".into(), root_won);
        }
        self.warm = Some(Warm {
            fantasies: obj.first_stage_fantasies(&m.x),
            xs: m.x.clone(),
            n: ctx.data.len(),
        });
        Ok((m.x[..tree.point_dim()].to_vec(), m.value))
    }
}

impl Policy for TreePolicy {
    fn decide(&mut self, ctx: &DecisionContext<'_>) -> Result<Decision> {
        let d = ctx.problem.dim;
        let best = ctx
            .best_y()
            .ok_or_else(|| Error::invalid("tree policies need at least one observation"))?;
        let f = ctx.posterior()?.covariance().ok_or_else(|| {
            capability::missing("a scenario tree", "model", Capability::Covariance)
        })?;
        let unit = UnitCostPath { dim: d };
        let mut diagnostics = Diagnostics::new();
        let (cost, budget, kind) = self.cost_and_budget(ctx, &mut diagnostics)?;
        let cost = cost.unwrap_or(&unit);
        let tree = Tree::new(
            d,
            &self.fantasies,
            self.base_samples.decision_samples(ctx.seed),
        )?;
        let obj = TreeObjective::new(&tree, f, cost, best, budget, kind)?;
        diagnostics.insert("tree_nodes".into(), tree.nodes() as f64);
        let (x, value) = match &ctx.problem.domain {
            Domain::Finite(cands) => {
                let (v, i) = obj.solve_finite(cands)?;
                (cands[i].clone(), v)
            }
            Domain::Continuous => self.search(ctx, &obj, &mut diagnostics)?,
        };
        diagnostics.insert("acq_value".into(), value);
        self.last = diagnostics;
        Ok(Decision::Evaluate(Query::at(x)))
    }

    fn diagnostics(&self) -> Diagnostics {
        self.last.clone()
    }

    /// The budget scheduler and the warm-start tree.
    fn checkpoint(&self) -> Result<Option<PluginState>> {
        PluginState::encode(&(&self.scheduler, &self.warm)).map(Some)
    }

    fn restore(&mut self, state: &PluginState) -> Result<()> {
        (self.scheduler, self.warm) = state.decode("the scenario-tree policy")?;
        Ok(())
    }
}
