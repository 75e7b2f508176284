//! Seed 001's Figure 2 as a study (`bmsei_figure2`): EI-PUC against B-MS-EI on a
//! one-dimensional problem whose cheap half is a trap.
//!
//! The paper describes the figure's posterior, not its formulas: on `[0, 1]` a lower-cost
//! region `x < 0.5` where the objective's posterior has low variance and a mean well below
//! the best observed value, and a higher-cost region `x > 0.5` where mean and variance are
//! both larger, so that the global maximum is likely on the right. EI-PUC spends its first
//! evaluations on the left, B-MS-EI goes right and finds a value near the optimum within the
//! budget (App. G, Fig. 6, carries the runs on to the end of the budget). This module builds
//! an instance with exactly that shape ([`Instance`]): a flat, slightly wavy objective on the
//! left, a step up and a narrow peak on the right, a cost ten times higher on the right, and
//! an initial design that observes the left well and the right once.
//!
//! Each policy is run on it until its budget is spent, the way the run loop does: the
//! spec's models are fitted to the data, the policy decides, the point is evaluated and
//! charged. The study reports every evaluation (its point, side, value, cost and whether it
//! fell within the budget), each policy's best value within the budget, the initial
//! posterior on a grid with both acquisitions' one-step values, and findings computed from
//! these: which side each policy's first two evaluations took and which policy ended higher.

use crate::policy::{TreePolicy, Variant};
use crate::q1::Q1Fn;
use crate::schedule::BudgetMode;
use cabo_baselines::acquisitions::ei_per_cost::EiPerCost;
use cabo_core::study::{Cell, Figure, Series, SeriesPoint, StudyContext, StudyOutput, Table};
use cabo_core::{
    Acquisition, Budget, BudgetState, BuildContext, CostModelSpec, Dataset, Decision,
    DecisionContext, Diagnostics, Error, ModelSpec, Objective, Observation, OptimizerSettings,
    Outcome, Phase, Policy, ProblemInfo, Query, Result, StudySpec, TrainingData, derive_seed,
};
use cabo_optim::AcquisitionPolicy;
use serde::{Deserialize, Serialize};

/// Spec of the Figure 2 study (`study: { type: bmsei_figure2, … }`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Figure2StudySpec {
    /// The objective's model (e.g. an exact GP with fixed hyperparameters).
    pub model: Box<dyn ModelSpec>,
    /// The model of ln c (e.g. `log_gp`): the learner does not know the cost.
    pub cost_model: Box<dyn CostModelSpec>,
    /// Cost budget of the policies' evaluations (the initial design is free).
    #[serde(default = "default_budget")]
    pub budget: f64,
    /// B-MS-EI's fantasies per stage (`[1, 1, 1]`: the 4-step path variant).
    #[serde(default = "default_fantasies")]
    pub fantasies: Vec<usize>,
    /// B-MS-EI's budget: `remaining` (default; this budget pays for two expensive
    /// evaluations, which a 4-step tree can take into account) or `scheduled` (§4.3).
    #[serde(default)]
    pub bmsei_budget: BudgetMode,
    /// Raw samples of each acquisition's multi-start search.
    #[serde(default = "default_raw_samples")]
    pub raw_samples: usize,
    /// L-BFGS-B restarts of each search.
    #[serde(default = "default_restarts")]
    pub restarts: usize,
    /// Iteration cap of each L-BFGS-B run.
    #[serde(default = "default_max_iters")]
    pub max_iters: usize,
    /// Points of the grid on which the initial posterior and acquisitions are tabulated.
    #[serde(default = "default_grid")]
    pub grid: usize,
}

fn default_budget() -> f64 {
    2.0
}
fn default_fantasies() -> Vec<usize> {
    vec![1, 1, 1]
}
fn default_raw_samples() -> usize {
    200
}
fn default_restarts() -> usize {
    10
}
fn default_max_iters() -> usize {
    200
}
fn default_grid() -> usize {
    101
}

/// Evaluations a policy may make at most, whatever the budget (a safeguard against a
/// policy that keeps choosing near-free points).
const MAX_EVALUATIONS: usize = 50;

#[cabo_core::plugin(
    name = "bmsei_figure2",
    summary = "Figure 2: EI-PUC against B-MS-EI on a one-dimensional problem with a cheap, low-value half; every evaluation, the best value within the budget, the initial acquisitions",
    paper = "001_ffe8b93f5b7c8c43 Fig. 2, App. G Fig. 6",
    example = "{ type: bmsei_figure2, model: { type: exact_gp, kernel: { type: matern52, lengthscale: 0.1, outputscale: 1.0 }, fit: fixed, noise: 1.0e-6 }, cost_model: { type: log_gp, kernel: { type: matern52, lengthscale: 0.2, outputscale: 1.0 }, fit: fixed, noise: 1.0e-6, standardize: true }, budget: 2.0 }"
)]
impl StudySpec for Figure2StudySpec {
    fn validate(&self) -> Result<()> {
        if !(self.budget.is_finite() && self.budget > 0.0) {
            return Err(Error::invalid(format!(
                "budget: must be positive and finite, got {}",
                self.budget
            )));
        }
        crate::tree::validate_fantasies(1, &self.fantasies)?;
        // Each decision of the study scores raw_samples trees and runs restarts searches of
        // up to max_iters steps; the grid is evaluated point by point.
        cabo_core::check_count("raw_samples", self.raw_samples, 1..=100_000)?;
        cabo_core::check_count("restarts", self.restarts, 1..=1_000)?;
        cabo_core::check_count("max_iters", self.max_iters, 1..=100_000)?;
        cabo_core::check_count("grid", self.grid, 2..=100_000)?;
        self.model.validate(1).map_err(|e| e.at("model"))?;
        self.cost_model.validate(1).map_err(|e| e.at("cost_model"))
    }

    fn run(&self, ctx: &StudyContext) -> Result<StudyOutput> {
        let instance = Instance;
        let runs = [PolicyKind::EiPuc, PolicyKind::Bmsei]
            .into_iter()
            .map(|kind| self.run_policy(&instance, kind, ctx.seed))
            .collect::<Result<Vec<_>>>()?;
        let grid = self.initial_grid(&instance, ctx.seed)?;
        Ok(output(self, &instance, &runs, &grid))
    }
}

/// The paper's one-dimensional instance as cabo builds it (see the module documentation).
#[derive(Debug, Clone, Copy)]
pub struct Instance;

/// Logistic step of width `w` centred at 0.5: 0 on the left, 1 on the right.
fn step(x: f64, w: f64) -> f64 {
    1.0 / (1.0 + (-(x - 0.5) / w).exp())
}

impl Instance {
    /// The objective: about −0.1 with small waves on the left, a step up by 0.5 at 0.5 and
    /// a narrow peak of 1.2 more at 0.85 (maximum ≈ 1.62).
    pub fn objective(&self, x: f64) -> f64 {
        -0.1 + 0.1 * (15.0 * x).sin()
            + 0.5 * step(x, 0.03)
            + 1.2 * (-((x - 0.85) / 0.05).powi(2)).exp()
    }

    /// The evaluation cost: 0.02 on the left, 1 on the right, a smooth step between.
    pub fn cost(&self, x: f64) -> f64 {
        0.02 + 0.98 * step(x, 0.03)
    }

    /// The initial design: the cheap half observed at four points, the expensive half at
    /// two away from the peak (the best, 0.495 at 0.97, is on the right).
    pub fn initial_points(&self) -> [f64; 6] {
        [0.05, 0.2, 0.35, 0.48, 0.62, 0.97]
    }

    /// Whether `x` lies in the cheap half.
    pub fn cheap(&self, x: f64) -> bool {
        x < 0.5
    }

    /// The objective's maximum on a grid of 10⁵ + 1 points (the peak is 0.05 wide, so the
    /// grid is within ~10⁻⁹ of it).
    pub fn maximum(&self) -> f64 {
        let n = 100_000;
        (0..=n)
            .map(|i| self.objective(i as f64 / n as f64))
            .fold(f64::NEG_INFINITY, f64::max)
    }
}

/// The two policies the figure compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PolicyKind {
    EiPuc,
    Bmsei,
}

impl PolicyKind {
    fn name(self) -> &'static str {
        match self {
            PolicyKind::EiPuc => "EI-PUC",
            PolicyKind::Bmsei => "B-MS-EI",
        }
    }
}

/// One evaluation a policy made.
#[derive(Debug, Clone, Serialize)]
struct Step {
    x: f64,
    y: f64,
    cost: f64,
    spent: f64,
    within_budget: bool,
}

/// A policy's run: its evaluations in order.
#[derive(Debug, Clone, Serialize)]
struct Run {
    policy: &'static str,
    steps: Vec<Step>,
    initial_best: f64,
}

impl Run {
    /// The best value observed within the budget, initial design included.
    fn best_within_budget(&self) -> f64 {
        self.steps
            .iter()
            .filter(|s| s.within_budget)
            .map(|s| s.y)
            .fold(self.initial_best, f64::max)
    }

    fn evaluations_within_budget(&self) -> usize {
        self.steps.iter().filter(|s| s.within_budget).count()
    }
}

/// The initial posterior and the one-step acquisitions at one grid point.
#[derive(Debug, Clone, Serialize)]
struct GridPoint {
    x: f64,
    mean: f64,
    sd: f64,
    expected_cost: f64,
    ei_puc: f64,
    q1: f64,
}

impl Figure2StudySpec {
    fn settings(&self) -> OptimizerSettings {
        OptimizerSettings {
            raw_samples: self.raw_samples,
            restarts: self.restarts,
            max_iters: self.max_iters,
        }
    }

    fn initial_data(&self, instance: &Instance) -> Result<Dataset> {
        let mut data = Dataset::new(1);
        for x in instance.initial_points() {
            data.push(Observation::initial(
                vec![x],
                instance.objective(x),
                instance.cost(x),
            ))?;
        }
        Ok(data)
    }

    /// A decision context over `data` with both models fitted.
    fn fit<'a>(
        &self,
        info: &'a ProblemInfo,
        data: &'a Dataset,
        budget: &'a BudgetState,
        settings: &'a OptimizerSettings,
        seed: u64,
    ) -> Result<DecisionContext<'a>> {
        let build = BuildContext {
            problem: info,
            seed,
        };
        let (x, y) = (data.x_matrix(), data.ys());
        let posterior = self.model.build(&build)?.fit(
            TrainingData {
                dim: 1,
                x: &x,
                y: &y,
            },
            seed,
        )?;
        let belief = self.cost_model.build(&build)?.fit(data, seed)?;
        Ok(
            DecisionContext::new(info, data, budget, budget.iterations, seed, settings)
                .with_posterior(posterior)
                .with_cost_belief(belief),
        )
    }

    /// Runs one policy until its budget is spent: the evaluation that crosses the budget is
    /// made (the learner does not know its cost beforehand) but does not count within it.
    fn run_policy(&self, instance: &Instance, kind: PolicyKind, seed: u64) -> Result<Run> {
        let info = ProblemInfo::continuous("figure-2", 1);
        let settings = self.settings();
        let mut data = self.initial_data(instance)?;
        let initial_best = data.best_y().unwrap_or(f64::NEG_INFINITY);
        let mut budget = BudgetState::new(Budget {
            cost: Some(self.budget),
            iterations: None,
        });
        let mut policy: Box<dyn Policy> = match kind {
            PolicyKind::EiPuc => Box::new(AcquisitionPolicy::new(Box::new(EiPerCost::default()))),
            PolicyKind::Bmsei => Box::new(TreePolicy::new(
                Variant::Bmsei(self.bmsei_budget),
                self.fantasies.clone(),
            )),
        };
        let mut steps = Vec::new();
        while !budget.exhausted() && steps.len() < MAX_EVALUATIONS {
            let step_seed = derive_seed(&[&seed, &kind.name(), &(steps.len() as u64)]);
            let x = {
                let ctx = self.fit(&info, &data, &budget, &settings, step_seed)?;
                match policy.decide(&ctx)? {
                    Decision::Evaluate(q) => q.x[0],
                    Decision::Stop(_) => break,
                }
            };
            let (y, cost) = (instance.objective(x), instance.cost(x));
            budget.charge(cost);
            data.push(Observation {
                query: Query::at(vec![x]),
                outcome: Outcome::new(y, cost, vec![x], Some(y)),
                phase: Phase::Policy,
            })?;
            steps.push(Step {
                x,
                y,
                cost,
                spent: budget.spent,
                within_budget: budget.spent <= self.budget,
            });
        }
        Ok(Run {
            policy: kind.name(),
            steps,
            initial_best,
        })
    }

    /// The initial posterior and both one-step acquisitions (EI per unit cost, and the
    /// budgeted one-step value Q₁ with the whole budget left) on the grid.
    fn initial_grid(&self, instance: &Instance, seed: u64) -> Result<Vec<GridPoint>> {
        let info = ProblemInfo::continuous("figure-2", 1);
        let settings = self.settings();
        let data = self.initial_data(instance)?;
        let budget = BudgetState::new(Budget {
            cost: Some(self.budget),
            iterations: None,
        });
        let ctx = self.fit(&info, &data, &budget, &settings, seed)?;
        let ei_puc = EiPerCost::default();
        let ei_puc = ei_puc.prepare(&ctx)?;
        let q1 = Q1Fn {
            posterior: ctx.posterior()?,
            cost: ctx.cost_belief()?,
            best: data.best_y().unwrap_or(f64::NEG_INFINITY),
            left: self.budget,
            diagnostics: Diagnostics::new(),
        };
        let n = self.grid - 1;
        (0..=n)
            .map(|i| {
                let x = [i as f64 / n as f64];
                let mv = ctx.posterior()?.mean_var(&x);
                Ok(GridPoint {
                    x: x[0],
                    mean: mv.mean,
                    sd: mv.var.max(0.0).sqrt(),
                    expected_cost: ctx.cost_belief()?.ln_cost(&x).expected(),
                    ei_puc: ei_puc.value(&x),
                    q1: q1.value(&x),
                })
            })
            .collect()
    }
}

fn columns(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| n.to_string()).collect()
}

fn side(instance: &Instance, x: f64) -> &'static str {
    if instance.cheap(x) {
        "cheap"
    } else {
        "expensive"
    }
}

/// The study's output: the best-value figure, the three tables, the findings on the paper's
/// claims, and the runs and initial grid as data.
fn output(
    spec: &Figure2StudySpec,
    instance: &Instance,
    runs: &[Run],
    grid: &[GridPoint],
) -> StudyOutput {
    StudyOutput {
        figures: vec![figure(runs)],
        tables: vec![
            evaluations_table(spec, instance, runs),
            summary_table(instance, runs),
            initial_table(instance, grid),
        ],
        findings: findings(spec, instance, runs, grid),
        data: serde_json::json!({ "runs": runs, "initial_posterior": grid }),
        measurements: Vec::new(),
    }
}

/// Every evaluation of each run, in order, with the side of the cost's step it falls on and
/// the spend so far.
fn evaluations_table(spec: &Figure2StudySpec, instance: &Instance, runs: &[Run]) -> Table {
    Table {
        name: "figure2-evaluations".into(),
        title: format!(
            "Every evaluation of each policy until its budget {} is spent",
            spec.budget
        ),
        columns: columns(&[
            "policy",
            "evaluation",
            "x",
            "side",
            "f(x)",
            "cost",
            "cost spent",
            "within budget",
        ]),
        rows: runs
            .iter()
            .flat_map(|r| {
                r.steps.iter().enumerate().map(|(i, s)| {
                    vec![
                        Cell::from(r.policy),
                        Cell::from((i + 1).to_string()),
                        s.x.into(),
                        Cell::from(side(instance, s.x)),
                        s.y.into(),
                        s.cost.into(),
                        s.spent.into(),
                        Cell::from(if s.within_budget { "yes" } else { "no" }),
                    ]
                })
            })
            .collect(),
    }
}

/// Each run's best value within the budget and its regret against the maximum of f.
fn summary_table(instance: &Instance, runs: &[Run]) -> Table {
    let maximum = instance.maximum();
    Table {
        name: "figure2-summary".into(),
        title: format!(
            "Best value within the budget (the maximum of f is {maximum:.4}; the initial design's best is {:.4})",
            runs.first().map_or(f64::NAN, |r| r.initial_best)
        ),
        columns: columns(&[
            "policy",
            "evaluations within budget",
            "on the cheap side",
            "best value within budget",
            "regret",
        ]),
        rows: runs
            .iter()
            .map(|r| {
                let cheap = r
                    .steps
                    .iter()
                    .filter(|s| s.within_budget && instance.cheap(s.x))
                    .count();
                vec![
                    Cell::from(r.policy),
                    Cell::from(r.evaluations_within_budget().to_string()),
                    Cell::from(cheap.to_string()),
                    r.best_within_budget().into(),
                    (maximum - r.best_within_budget()).into(),
                ]
            })
            .collect(),
    }
}

/// The initial posterior and both one-step acquisitions on the grid.
fn initial_table(instance: &Instance, grid: &[GridPoint]) -> Table {
    Table {
        name: "figure2-initial-posterior".into(),
        title: "The initial posterior and one-step acquisitions on the grid".into(),
        columns: columns(&["x", "f(x)", "mean", "sd", "E[c]", "EI-PUC", "Q1 (budget B)"]),
        rows: grid
            .iter()
            .map(|g| {
                vec![
                    g.x.into(),
                    instance.objective(g.x).into(),
                    g.mean.into(),
                    g.sd.into(),
                    g.expected_cost.into(),
                    g.ei_puc.into(),
                    g.q1.into(),
                ]
            })
            .collect(),
    }
}

/// Each policy's best value against the cost spent (the initial design's best at 0).
fn figure(runs: &[Run]) -> Figure {
    let series = runs
        .iter()
        .map(|r| {
            let mut best = r.initial_best;
            let mut points = vec![SeriesPoint {
                x: 0.0,
                y: best,
                low: None,
                high: None,
            }];
            for s in r.steps.iter().filter(|s| s.within_budget) {
                best = best.max(s.y);
                points.push(SeriesPoint {
                    x: s.spent,
                    y: best,
                    low: None,
                    high: None,
                });
            }
            Series {
                name: r.policy.into(),
                points,
            }
        })
        .collect();
    Figure {
        name: "figure2-best-value".into(),
        title: "Figure 2: best value found against cost spent".into(),
        x_label: "cost spent".into(),
        y_label: "best value".into(),
        log_x: false,
        series,
    }
}

/// Mean of `f` over the grid points on one side.
fn side_mean(
    grid: &[GridPoint],
    instance: &Instance,
    cheap: bool,
    f: fn(&GridPoint) -> f64,
) -> f64 {
    let v: Vec<f64> = grid
        .iter()
        .filter(|g| instance.cheap(g.x) == cheap)
        .map(f)
        .collect();
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

fn findings(
    spec: &Figure2StudySpec,
    instance: &Instance,
    runs: &[Run],
    grid: &[GridPoint],
) -> Vec<String> {
    let best0 = runs.first().map_or(f64::NAN, |r| r.initial_best);
    let mut out = vec![format!(
        "Initial posterior: on the cheap side mean {:.3}, sd {:.3}, E[c] {:.3}; on the \
         expensive side mean {:.3}, sd {:.3}, E[c] {:.3}; best observed {best0:.3}.",
        side_mean(grid, instance, true, |g| g.mean),
        side_mean(grid, instance, true, |g| g.sd),
        side_mean(grid, instance, true, |g| g.expected_cost),
        side_mean(grid, instance, false, |g| g.mean),
        side_mean(grid, instance, false, |g| g.sd),
        side_mean(grid, instance, false, |g| g.expected_cost),
    )];
    for r in runs {
        let first: Vec<String> = r
            .steps
            .iter()
            .take(2)
            .map(|s| format!("x = {:.3} ({}, f = {:.3})", s.x, side(instance, s.x), s.y))
            .collect();
        out.push(format!(
            "{}'s first two evaluations: {}.",
            r.policy,
            first.join(", ")
        ));
    }
    if let [puc, bmsei] = runs {
        let (a, b) = (puc.best_within_budget(), bmsei.best_within_budget());
        let held = if b > a { "holds" } else { "does not hold" };
        out.push(format!(
            "Within the budget {}: EI-PUC reaches {a:.4} in {} evaluations, B-MS-EI {b:.4} in \
             {} (the maximum is {:.4}); the paper's claim that B-MS-EI ends higher {held}.",
            spec.budget,
            puc.evaluations_within_budget(),
            bmsei.evaluations_within_budget(),
            instance.maximum(),
        ));
    }
    out
}
