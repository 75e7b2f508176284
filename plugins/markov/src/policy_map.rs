//! Figure 5.1 as a study (`markov_policy_map`): the Bayes-optimal policy's sampling decisions
//! for a standard Brownian motion on `[0, 1]`, threshold 0, indicator rewards, cost c.
//!
//! The paper's figure shows, left, the points the optimal policy samples at each iteration
//! and, right, the expected value of sampling each point, `E[V(H ∪ {x})] − c`, against the
//! reward of stopping, `R(H)`: the policy samples the point of largest difference until it
//! turns negative. The study computes
//!
//! - the right panel at the start history `H₀ = {(0, 0), (1, 0)}`: for every interior grid
//!   point, `E[V(H₀ ∪ {x})] − c` and (for comparison, one-step lookahead's criterion)
//!   `E[R(H₀ ∪ {x})] − c`, against `R(H₀)`;
//! - the left panel: seeded runs of the optimal policy, each decision with its margin
//!   `max_x E[V(H ∪ {x})] − c − R(H)` (positive while it samples, not positive when it stops);
//! - the decision over the state grid: on the whole interval, for which endpoint levels
//!   `(y_L, y_R)` it samples, and for every interval length the band of levels
//!   `y_L = y_R = y` where it samples.
//!
//! Expectations are recomputed here from the value table and the grid law of a new
//! observation ([`Kernel::row`](crate::prior::Kernel::row)), independently of the dynamic
//! program's own continuation values, so the table states what sampling is worth rather than
//! what the solver stored.

use crate::dp::{Setup, Solution, SolveOptions};
use crate::grid::Grid;
use crate::prior::Prior;
use crate::reward::Reward;
use crate::sim::{History, PolicyRule};
use cabo_core::study::{
    Cell, Figure, Series, SeriesPoint, StudyContext, StudyOutput, Table, significant,
};
use cabo_core::{Error, Result, Rng, StudySpec, derive_seed};
use serde::{Deserialize, Serialize};

/// Spec of the Figure 5.1 study; defaults are the paper's settings.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyMapSpec {
    /// x-grid points on `[0, 1]` (101: the paper's 100 intervals, so that 0.5 is a point).
    #[serde(default = "default_x_levels")]
    pub x_levels: usize,
    /// y-levels (odd, so that the threshold 0 is a level).
    #[serde(default = "default_y_levels")]
    pub y_levels: usize,
    /// Half-range h of the y-grid `[−h, h]`.
    #[serde(default = "default_half_range")]
    pub brownian_half_range: f64,
    /// Cost per sample c.
    #[serde(default = "default_cost")]
    pub cost: f64,
    /// Seeded runs of the optimal policy shown in the left panel.
    #[serde(default = "default_paths")]
    pub paths: usize,
}

fn default_x_levels() -> usize {
    101
}
fn default_y_levels() -> usize {
    101
}
fn default_half_range() -> f64 {
    2.5
}
fn default_cost() -> f64 {
    0.05
}
/// The most sample paths a policy map draws (the paper's figure draws 3).
pub const MAX_PATHS: usize = 1000;

fn default_paths() -> usize {
    3
}

impl PolicyMapSpec {
    /// The feasibility problem this spec describes.
    pub fn setup(&self) -> Setup {
        Setup {
            prior: Prior::Brownian { scale: 1.0 },
            reward: Reward::Indicator { threshold: 0.0 },
            grid: Grid {
                length: 1.0,
                x_levels: self.x_levels,
                y_min: -self.brownian_half_range,
                y_max: self.brownian_half_range,
                y_levels: self.y_levels,
            },
            cost: self.cost,
        }
    }
}

#[cabo_core::plugin(
    name = "markov_policy_map",
    summary = "Figure 5.1: the Bayes-optimal policy's sampling decisions (value of sampling each point against stopping, seeded runs, the sample/stop regions of the state grid), Brownian prior",
    paper = "003_82c3abffebce4173 §5 (Figure 5.1)",
    example = "{ type: markov_policy_map, x_levels: 17, y_levels: 25, cost: 0.05, paths: 2 }"
)]
impl StudySpec for PolicyMapSpec {
    fn validate(&self) -> Result<()> {
        crate::studies::validate_grid(self.x_levels, self.y_levels, &[])?;
        let h = self.brownian_half_range;
        if !(h.is_finite() && h > 0.0) {
            return Err(Error::invalid(format!(
                "brownian_half_range: must be positive and finite, got {h}"
            )));
        }
        if self.paths > MAX_PATHS {
            return Err(Error::invalid(format!(
                "paths: need at most {MAX_PATHS} sample paths, got {}",
                self.paths
            )));
        }
        if !(self.cost.is_finite() && self.cost > 0.0) {
            return Err(Error::invalid(format!(
                "cost: must be positive and finite, got {}",
                self.cost
            )));
        }
        self.setup().validate()
    }

    fn run(&self, ctx: &StudyContext) -> Result<StudyOutput> {
        self.validate()?;
        let started = std::time::Instant::now();
        let map = PolicyMap::compute(self, ctx.seed)?;
        let seconds = started.elapsed().as_secs_f64();
        Ok(output(&map, seconds))
    }
}

/// What sampling one interior point of an interval is worth.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PointValue {
    /// x-index of the point.
    pub x: usize,
    /// `E[V(left) + V(right)] − c` over the grid law of its observation.
    pub sample_value: f64,
    /// `E[R(left) + R(right)] − c`: sampling it and then stopping.
    pub sample_then_stop: f64,
}

/// For the interval `(i, j)` with endpoint levels `(il, ir)`, every interior point's value,
/// from the value and reward tables and [`Kernel::row`](crate::prior::Kernel::row).
pub fn point_values(sol: &Solution, i: usize, j: usize, il: usize, ir: usize) -> Vec<PointValue> {
    let n = sol.setup().grid.y_levels;
    let c = sol.setup().cost;
    let mut row = vec![0.0; n];
    (i + 1..j)
        .map(|x| {
            sol.kernel().row(i, j - i, x - i, il, ir, &mut row);
            let (mut v, mut r) = (0.0, 0.0);
            for (w, &p) in row.iter().enumerate() {
                if p != 0.0 {
                    v += p * (sol.value(i, x, il, w) + sol.value(x, j, w, ir));
                    r += p * (sol.reward(i, x, il, w) + sol.reward(x, j, w, ir));
                }
            }
            PointValue {
                x,
                sample_value: v - c,
                sample_then_stop: r - c,
            }
        })
        .collect()
}

/// The largest `E[V(H ∪ {x})] − c` over every unsampled grid point of history `h`, with its
/// x-index (`None` when every point is sampled): by Theorem 1 it is the other intervals'
/// values plus the best split of the interval containing `x`.
pub fn best_sample_value(sol: &Solution, h: &History) -> Option<(f64, usize)> {
    let pts = h.points();
    let total: f64 = sol.history_value(h);
    let mut best: Option<(f64, usize)> = None;
    for w in pts.windows(2) {
        let ((a, la), (b, lb)) = (w[0], w[1]);
        let rest = total - sol.value(a, b, la, lb);
        for p in point_values(sol, a, b, la, lb) {
            let q = rest + p.sample_value;
            if best.is_none_or(|(v, _)| q > v) {
                best = Some((q, p.x));
            }
        }
    }
    best
}

/// One decision of a simulated run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Step {
    /// Samples taken before this decision.
    pub iteration: usize,
    /// The x-index sampled, `None` for the stop.
    pub x: Option<usize>,
    /// The y-level observed there.
    pub level: Option<usize>,
    /// `R(H)` before the decision.
    pub reward: f64,
    /// `max_x E[V(H ∪ {x})] − c − R(H)` before the decision.
    pub margin: f64,
    /// Whether the sampled point attains that maximum (to 1e-12).
    pub attains_max: bool,
}

/// The interval's decision band on the diagonal `y_L = y_R` for one length.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LengthRow {
    /// Interval length in x-steps.
    pub steps: usize,
    /// Endpoint pairs `(y_L, y_R)` where the optimal policy samples.
    pub sampled_states: usize,
    /// Lowest and highest diagonal level `y_L = y_R` where it samples (`None`: nowhere).
    pub diagonal_band: Option<(f64, f64)>,
    /// `C − R` at `y_L = y_R = 0`.
    pub advantage_at_threshold: f64,
}

/// Everything Figure 5.1 shows, as plain data.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PolicyMap {
    /// The settings.
    pub setup: Setup,
    /// `R(H₀)`.
    pub stop_reward: f64,
    /// `V(H₀)` from the dynamic program.
    pub value: f64,
    /// Every interior point's value at `H₀`.
    pub first_decision: Vec<PointValue>,
    /// The simulated runs.
    pub paths: Vec<Vec<Step>>,
    /// For each left level `y_L` of the whole interval: the `y_R` levels where it samples.
    pub whole_interval: Vec<Vec<usize>>,
    /// One row per interval length ≥ 2 steps.
    pub lengths: Vec<LengthRow>,
}

impl PolicyMap {
    /// Solves the dynamic program and reads the figure off it.
    pub fn compute(spec: &PolicyMapSpec, seed: u64) -> Result<Self> {
        let setup = spec.setup();
        let opts = SolveOptions {
            one_step: false,
            force_full_state: false,
        };
        let sol = Solution::solve(&setup, &opts)?;
        let g = &setup.grid;
        let (m, n) = (g.x_levels, g.y_levels);
        let zero = g.level_of(0.0)?;
        let paths = (0..spec.paths)
            .map(|p| simulate(&sol, zero, derive_seed(&[&seed, &"figure-5-1", &p])))
            .collect::<Result<_>>()?;
        let whole_interval = (0..n)
            .map(|il| {
                (0..n)
                    .filter(|&ir| sol.optimal_sample(0, m - 1, il, ir).is_some())
                    .collect()
            })
            .collect();
        Ok(PolicyMap {
            stop_reward: sol.reward(0, m - 1, zero, zero),
            value: sol.value(0, m - 1, zero, zero),
            first_decision: point_values(&sol, 0, m - 1, zero, zero),
            paths,
            whole_interval,
            lengths: (2..m).map(|d| length_row(&sol, d, zero)).collect(),
            setup,
        })
    }
}

fn length_row(sol: &Solution, d: usize, zero: usize) -> LengthRow {
    let g = &sol.setup().grid;
    let n = g.y_levels;
    let samples = |il: usize, ir: usize| sol.optimal_sample(0, d, il, ir).is_some();
    let sampled_states = (0..n)
        .flat_map(|il| (0..n).map(move |ir| (il, ir)))
        .filter(|&(il, ir)| samples(il, ir))
        .count();
    let diagonal: Vec<usize> = (0..n).filter(|&y| samples(y, y)).collect();
    LengthRow {
        steps: d,
        sampled_states,
        diagonal_band: diagonal
            .first()
            .zip(diagonal.last())
            .map(|(&a, &b)| (g.y(a), g.y(b))),
        advantage_at_threshold: sol.continuation(0, d, zero, zero) - sol.reward(0, d, zero, zero),
    }
}

/// One run of the optimal policy from `{(0, 0), (1, 0)}`, recording every decision with the
/// margin recomputed by [`best_sample_value`].
fn simulate(sol: &Solution, zero: usize, seed: u64) -> Result<Vec<Step>> {
    let g = &sol.setup().grid;
    let mut rng = Rng::new(seed);
    let mut scratch = vec![0.0; g.y_levels];
    let mut h = History::new(g.x_levels, zero, zero);
    let mut steps = Vec::new();
    loop {
        let reward = sol.history_reward(&h);
        let best = best_sample_value(sol, &h);
        let margin = best.map_or(f64::NEG_INFINITY, |b| b.0 - reward);
        let decision = sol.decide(PolicyRule::Optimal, &h, steps.len())?;
        let Some(x) = decision else {
            steps.push(Step {
                iteration: steps.len(),
                x: None,
                level: None,
                reward,
                margin,
                attains_max: false,
            });
            return Ok(steps);
        };
        let ((a, la), (b, lb)) = h
            .enclosing(x)
            .ok_or_else(|| Error::numerical("the optimal policy chose a sampled point"))?;
        let rest = sol.history_value(&h) - sol.value(a, b, la, lb);
        let at_x = point_values(sol, a, b, la, lb)
            .into_iter()
            .find(|p| p.x == x)
            .map_or(f64::NEG_INFINITY, |p| rest + p.sample_value);
        let w = sol
            .kernel()
            .sample(a, b - a, x - a, la, lb, &mut rng, &mut scratch);
        steps.push(Step {
            iteration: steps.len(),
            x: Some(x),
            level: Some(w),
            reward,
            margin,
            attains_max: best.is_some_and(|b| (b.0 - at_x).abs() <= 1e-12),
        });
        h.insert(x, w);
    }
}

fn point(x: f64, y: f64) -> SeriesPoint {
    SeriesPoint {
        x,
        y,
        low: None,
        high: None,
    }
}

fn output(map: &PolicyMap, seconds: f64) -> StudyOutput {
    StudyOutput {
        figures: vec![right_panel(map), left_panel(map)],
        tables: vec![
            first_decision_table(map),
            paths_table(map),
            whole_interval_table(map),
            lengths_table(map),
        ],
        findings: findings(map),
        data: serde_json::to_value(map).unwrap_or_default(),
        // Wall time depends on the machine: kept out of `study.json`.
        measurements: vec![("seconds (dynamic program and runs)".into(), seconds)],
    }
}

fn right_panel(map: &PolicyMap) -> Figure {
    let g = &map.setup.grid;
    let fd = &map.first_decision;
    Figure {
        name: "figure-5-1-right".into(),
        title: format!(
            "Figure 5.1 (right): value of sampling x at Y(0) = Y(1) = 0, c = {}",
            map.setup.cost
        ),
        x_label: "x".into(),
        y_label: "expected value".into(),
        log_x: false,
        series: vec![
            Series {
                name: "E[V(H ∪ {x})] − c (sample x, then act optimally)".into(),
                points: fd.iter().map(|p| point(g.x(p.x), p.sample_value)).collect(),
            },
            Series {
                name: "R(H) (stop now)".into(),
                points: fd
                    .iter()
                    .map(|p| point(g.x(p.x), map.stop_reward))
                    .collect(),
            },
            Series {
                name: "E[R(H ∪ {x})] − c (sample x, then stop)".into(),
                points: fd
                    .iter()
                    .map(|p| point(g.x(p.x), p.sample_then_stop))
                    .collect(),
            },
        ],
    }
}

fn left_panel(map: &PolicyMap) -> Figure {
    let g = &map.setup.grid;
    Figure {
        name: "figure-5-1-left".into(),
        title: "Figure 5.1 (left): the point the optimal policy samples at each iteration".into(),
        x_label: "iteration".into(),
        y_label: "x sampled".into(),
        log_x: false,
        series: map
            .paths
            .iter()
            .enumerate()
            .map(|(r, steps)| Series {
                name: format!("run {r}"),
                points: steps
                    .iter()
                    .filter_map(|s| s.x.map(|x| point((s.iteration + 1) as f64, g.x(x))))
                    .collect(),
            })
            .collect(),
    }
}

fn columns(names: &[&str]) -> Vec<String> {
    names.iter().map(|c| c.to_string()).collect()
}

fn first_decision_table(map: &PolicyMap) -> Table {
    let g = &map.setup.grid;
    Table {
        name: "figure-5-1-first-decision".into(),
        title: "The first decision: the value of sampling each x against stopping".into(),
        columns: columns(&[
            "x",
            "E[V(H ∪ {x})] − c",
            "R(H)",
            "difference",
            "E[R(H ∪ {x})] − c",
        ]),
        rows: map
            .first_decision
            .iter()
            .map(|p| {
                vec![
                    Cell::from(g.x(p.x)),
                    p.sample_value.into(),
                    map.stop_reward.into(),
                    (p.sample_value - map.stop_reward).into(),
                    p.sample_then_stop.into(),
                ]
            })
            .collect(),
    }
}

fn paths_table(map: &PolicyMap) -> Table {
    let g = &map.setup.grid;
    let rows = map
        .paths
        .iter()
        .enumerate()
        .flat_map(|(r, steps)| {
            steps.iter().map(move |s| {
                let (x, y) = match (s.x, s.level) {
                    (Some(x), Some(l)) => (Cell::from(g.x(x)), Cell::from(g.y(l))),
                    _ => (Cell::from("stop"), Cell::from("")),
                };
                vec![
                    Cell::from(r as f64),
                    (s.iteration as f64).into(),
                    x,
                    y,
                    s.reward.into(),
                    s.margin.into(),
                ]
            })
        })
        .collect();
    Table {
        name: "figure-5-1-runs".into(),
        title: "Runs of the optimal policy: each decision and its margin".into(),
        columns: columns(&[
            "run",
            "iteration",
            "x sampled",
            "y observed",
            "R(H)",
            "max E[V(H ∪ {x})] − c − R(H)",
        ]),
        rows,
    }
}

fn whole_interval_table(map: &PolicyMap) -> Table {
    let g = &map.setup.grid;
    let rows = map
        .whole_interval
        .iter()
        .enumerate()
        .map(|(il, irs)| {
            let y = |i: Option<&usize>| i.map_or(Cell::from("none"), |&i| Cell::from(g.y(i)));
            vec![
                Cell::from(g.y(il)),
                y(irs.first()),
                y(irs.last()),
                (irs.len() as f64).into(),
            ]
        })
        .collect();
    Table {
        name: "figure-5-1-decisions".into(),
        title:
            "Where the optimal policy samples on [0, 1]: the right levels y_R, per left level y_L"
                .into(),
        columns: columns(&[
            "y_L",
            "lowest y_R sampled",
            "highest y_R sampled",
            "levels sampled",
        ]),
        rows,
    }
}

fn lengths_table(map: &PolicyMap) -> Table {
    let g = &map.setup.grid;
    let n = g.y_levels;
    let rows = map
        .lengths
        .iter()
        .map(|l| {
            let (lo, hi) = l
                .diagonal_band
                .map_or((Cell::from("none"), Cell::from("none")), |b| {
                    (Cell::from(b.0), Cell::from(b.1))
                });
            vec![
                Cell::from(g.x(l.steps)),
                (l.sampled_states as f64).into(),
                (l.sampled_states as f64 / (n * n) as f64).into(),
                lo,
                hi,
                l.advantage_at_threshold.into(),
            ]
        })
        .collect();
    Table {
        name: "figure-5-1-lengths".into(),
        title: "The sampling region by interval length".into(),
        columns: columns(&[
            "length",
            "endpoint pairs sampled",
            "share",
            "lowest y_L = y_R sampled",
            "highest y_L = y_R sampled",
            "C − R at y_L = y_R = 0",
        ]),
        rows,
    }
}

fn findings(map: &PolicyMap) -> Vec<String> {
    let g = &map.setup.grid;
    let mut out = Vec::new();
    if let Some(best) = map.first_decision.iter().max_by(|a, b| {
        a.sample_value
            .total_cmp(&b.sample_value)
            .then(b.x.cmp(&a.x))
    }) {
        let x = g.x(best.x);
        let verdict = if (x - 0.5).abs() < 1e-12 {
            "as the paper states"
        } else {
            "not at x = 0.5, which the paper states"
        };
        out.push(format!(
            "From Y(0) = Y(1) = 0 the optimal policy's first sample is at x = {x} ({verdict}): E[V(H ∪ {{x}})] − c = {:.6} against R(H) = {:.6}; V(H) = {:.6}.",
            best.sample_value, map.stop_reward, map.value
        ));
    }
    let decisions: Vec<&Step> = map.paths.iter().flatten().collect();
    let sampled: Vec<&&Step> = decisions.iter().filter(|s| s.x.is_some()).collect();
    let positive = sampled.iter().filter(|s| s.margin > 0.0).count();
    let attained = sampled.iter().filter(|s| s.attains_max).count();
    let stops = decisions.len() - sampled.len();
    let stops_ok = decisions
        .iter()
        .filter(|s| s.x.is_none() && s.margin <= 0.0)
        .count();
    let lengths: Vec<String> = map
        .paths
        .iter()
        .map(|p| (p.len() - 1).to_string())
        .collect();
    out.push(format!(
        "In {} runs the optimal policy took {} samples; at {positive} of {} sampling decisions the largest E[V(H ∪ {{x}})] − c − R(H) was positive and the sampled point attained it at {attained}; at {stops_ok} of {stops} stops it was not positive.",
        map.paths.len(),
        lengths.join(", "),
        sampled.len()
    ));
    let n = g.y_levels;
    let total: usize = map.whole_interval.iter().map(Vec::len).sum();
    let contiguous = map.whole_interval.iter().all(|irs| {
        irs.first()
            .zip(irs.last())
            .is_none_or(|(a, b)| b - a + 1 == irs.len())
    });
    out.push(format!(
        "On the whole interval the optimal policy samples at {total} of {} endpoint pairs (y_L, y_R); for every y_L the y_R where it samples {} one contiguous run of levels.",
        n * n,
        if contiguous { "form" } else { "do NOT all form" }
    ));
    if let Some(whole) = map.lengths.last() {
        let band = whole.diagonal_band.map_or("nowhere".to_string(), |(a, b)| {
            format!(
                "for y_L = y_R = y in [{}, {}]",
                significant(a, 6),
                significant(b, 6)
            )
        });
        out.push(format!(
            "With equal endpoint values the policy samples the whole interval {band}; the shortest interval with Y = 0 at both ends where it samples is {}.",
            map.lengths
                .iter()
                .find(|l| l.advantage_at_threshold > 0.0)
                .map_or("none".to_string(), |l| format!(
                    "{} grid steps long ({})",
                    l.steps,
                    significant(g.x(l.steps), 6)
                ))
        ));
    }
    out
}
