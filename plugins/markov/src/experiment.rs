//! The experiment sweeps of §5 as plain data: Figure 5.2 (value against cost for the
//! optimal and one-step policies, Brownian motion and compound Poisson μ = 20) and
//! Figure 5.3 (`V₁` against the expected budget T and the band containing `V₂`), all on
//! `[0, 1]` with `Y(0) = Y(1) = 0`, threshold 0 and indicator rewards.

use crate::budget::{CostValueCurve, fixed_budget_one_step};
use crate::dp::{Setup, Solution, SolveOptions};
use crate::grid::Grid;
use crate::prior::Prior;
use crate::reward::Reward;
use crate::sim::{McEstimate, PolicyRule};
use cabo_core::{Result, derive_seed};
use serde::Serialize;

/// Parameters of the sweeps.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SweepConfig {
    /// x-grid points on `[0, 1]`.
    pub x_levels: usize,
    /// y-levels (odd, so that 0 is a level).
    pub y_levels: usize,
    /// The y-grid is `[−h, h]` with this `h` for Brownian motion.
    pub brownian_half_range: f64,
    /// The y-grid half-range for the compound Poisson process.
    pub poisson_half_range: f64,
    /// Costs per sample for Figure 5.2.
    pub costs: Vec<f64>,
    /// Monte Carlo runs per policy and cost (the paper uses 100 000).
    pub runs: usize,
    /// Expected / exact budgets T for Figure 5.3 (the paper uses 1..=10).
    pub budgets: Vec<usize>,
    /// Monte Carlo runs for the `V₂` lower bound (the paper uses 50 000).
    pub budget_runs: usize,
    /// Golden-section tolerance on λ.
    pub lambda_tol: f64,
    /// Base seed; every run's seed derives from it.
    pub seed: u64,
}

impl SweepConfig {
    /// The paper's settings (100 × 101 grid, 100 000 runs, T = 1..=10).
    pub fn paper() -> Self {
        SweepConfig {
            x_levels: 100,
            y_levels: 101,
            brownian_half_range: 2.5,
            poisson_half_range: 10.0,
            costs: vec![0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1],
            runs: 100_000,
            budgets: (1..=10).collect(),
            budget_runs: 50_000,
            lambda_tol: 1e-5,
            seed: 3,
        }
    }

    /// A coarse version that runs in seconds (for tests and smoke reports).
    pub fn smoke() -> Self {
        SweepConfig {
            x_levels: 17,
            y_levels: 25,
            brownian_half_range: 2.5,
            poisson_half_range: 10.0,
            costs: vec![0.005, 0.02, 0.05],
            runs: 4_000,
            budgets: vec![1, 2, 3],
            budget_runs: 4_000,
            lambda_tol: 1e-4,
            seed: 3,
        }
    }

    /// The paper's setup for `prior` at cost `cost`.
    pub fn setup(&self, prior: &Prior, cost: f64) -> Setup {
        let half = match prior {
            Prior::CompoundPoisson { .. } => self.poisson_half_range,
            _ => self.brownian_half_range,
        };
        Setup {
            prior: prior.clone(),
            reward: Reward::Indicator { threshold: 0.0 },
            grid: Grid {
                length: 1.0,
                x_levels: self.x_levels,
                y_min: -half,
                y_max: half,
                y_levels: self.y_levels,
            },
            cost,
        }
    }
}

/// One point of Figure 5.2.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CostPoint {
    /// `brownian` or `compound_poisson`.
    pub prior: String,
    /// Cost per sample c.
    pub cost: f64,
    /// The optimal value V from the dynamic program.
    pub dp_value: f64,
    /// Simulated performance of the optimal policy.
    pub optimal: McEstimate,
    /// Simulated performance of the one-step lookahead policy.
    pub one_step: McEstimate,
    /// `one_step.mean_value / dp_value` (the paper reports ≥ 0.98).
    pub one_step_ratio: f64,
    /// Seconds to solve the dynamic program (wall time: not serialised, so results are
    /// the same on every machine).
    #[serde(skip_serializing)]
    pub solve_seconds: f64,
    /// Peak bytes of the dynamic program's arrays (depends on the thread count: not
    /// serialised).
    #[serde(skip_serializing)]
    pub peak_bytes: usize,
}

/// Figure 5.2: value against cost.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Figure52 {
    /// The configuration used.
    pub config: SweepConfig,
    /// One point per (prior, cost).
    pub points: Vec<CostPoint>,
}

/// One budget of Figure 5.3.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BudgetPoint {
    /// The budget T.
    pub samples: usize,
    /// `V₁(T)` (upper end of the `V₂` band).
    pub v1: f64,
    /// The minimising λ.
    pub lambda: f64,
    /// The one-step policy with exactly T samples (lower end: its `mean_reward`).
    pub v2_lower: McEstimate,
}

/// Figure 5.3: `V₁` against T and the `V₂` band, Brownian motion.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Figure53 {
    /// The configuration used.
    pub config: SweepConfig,
    /// One point per budget.
    pub points: Vec<BudgetPoint>,
    /// Dynamic programs solved for the λ searches.
    pub dp_solves: usize,
}

/// The two priors of §5.
pub fn paper_priors() -> [(String, Prior); 2] {
    [
        ("brownian".into(), Prior::Brownian { scale: 1.0 }),
        (
            "compound_poisson".into(),
            Prior::CompoundPoisson {
                rate: 20.0,
                jump_sd: 1.0,
            },
        ),
    ]
}

/// Runs the Figure 5.2 sweep.
pub fn figure_5_2(cfg: &SweepConfig) -> Result<Figure52> {
    let mut points = Vec::new();
    for (name, prior) in paper_priors() {
        for &cost in &cfg.costs {
            let setup = cfg.setup(&prior, cost);
            let sol = Solution::solve(&setup, &SolveOptions::default())?;
            let dp_value = sol.initial_value(0.0, 0.0)?;
            let seed = derive_seed(&[&cfg.seed, &name, &cost.to_bits()]);
            let optimal = sol.monte_carlo(PolicyRule::Optimal, 0.0, 0.0, cfg.runs, seed)?;
            let one_step = sol.monte_carlo(PolicyRule::OneStep, 0.0, 0.0, cfg.runs, seed)?;
            points.push(CostPoint {
                prior: name.clone(),
                cost,
                dp_value,
                one_step_ratio: one_step.mean_value / dp_value,
                optimal,
                one_step,
                solve_seconds: sol.stats().seconds,
                peak_bytes: sol.stats().peak_bytes,
            });
        }
    }
    Ok(Figure52 {
        config: cfg.clone(),
        points,
    })
}

/// Runs the Figure 5.3 sweep (Brownian motion).
pub fn figure_5_3(cfg: &SweepConfig) -> Result<Figure53> {
    let prior = Prior::Brownian { scale: 1.0 };
    let setup = cfg.setup(&prior, 0.0);
    let mut curve = CostValueCurve::new(&setup, 0.0, 0.0)?;
    let one_step = Solution::solve(&setup, &SolveOptions::default())?;
    let mut points = Vec::new();
    for &t in &cfg.budgets {
        let v1 = curve.expected_budget_value(t as f64, cfg.lambda_tol)?;
        let seed = derive_seed(&[&cfg.seed, &"budget", &t]);
        let v2_lower = fixed_budget_one_step(&one_step, t, 0.0, 0.0, cfg.budget_runs, seed)?;
        points.push(BudgetPoint {
            samples: t,
            v1: v1.value,
            lambda: v1.lambda,
            v2_lower,
        });
    }
    Ok(Figure53 {
        config: cfg.clone(),
        points,
        dp_solves: curve.evaluations(),
    })
}
