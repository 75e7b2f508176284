//! The optimal and one-step lookahead policies as decision rules on a history, and their
//! Monte Carlo evaluation.
//!
//! A history is the set of sampled x-grid points with their y-levels; by Theorem 1 its value
//! is the sum of the values of the intervals between consecutive points, so every decision
//! reads the solved tables interval by interval (`O(#points)` per decision).
//!
//! Simulated observations are drawn, as in the paper's §5, from the grid conditional law of
//! `Y(x')` given its two neighbouring observations — the same law the dynamic program uses —
//! so the optimal policy's simulated value estimates `V` without discretisation bias.

use crate::dp::Solution;
use cabo_core::{Error, Result, Rng, derive_seed};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

/// Sampled points on the x-grid, sorted by x-index, each with its y-level index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct History {
    points: Vec<(usize, usize)>,
}

impl History {
    /// The initial history `{(0, y_start), (ℓ, y_end)}` on an x-grid of `x_levels` points.
    pub fn new(x_levels: usize, start_level: usize, end_level: usize) -> Self {
        History {
            points: vec![(0, start_level), (x_levels - 1, end_level)],
        }
    }

    /// Adds an observation; re-observing a point leaves the history unchanged (eq. 2.1).
    pub fn insert(&mut self, x: usize, level: usize) {
        match self.points.binary_search_by_key(&x, |p| p.0) {
            Ok(_) => {}
            Err(pos) => self.points.insert(pos, (x, level)),
        }
    }

    /// The points `(x-index, y-level)` in increasing x.
    pub fn points(&self) -> &[(usize, usize)] {
        &self.points
    }

    /// The interval `(left point, right point)` whose interior contains `x`, if any.
    pub fn enclosing(&self, x: usize) -> Option<((usize, usize), (usize, usize))> {
        let pos = self.points.partition_point(|p| p.0 < x);
        if pos == 0 || pos >= self.points.len() || self.points[pos].0 == x {
            return None;
        }
        Some((self.points[pos - 1], self.points[pos]))
    }
}

/// Which policy decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum PolicyRule {
    /// The Bayes-optimal policy read from the value array.
    Optimal,
    /// One-step lookahead: sample the point of largest expected reward gain while that gain
    /// exceeds the cost.
    OneStep,
    /// One-step lookahead that takes exactly `samples` samples (the lower bound on `V₂`).
    OneStepFixed {
        /// The number of samples T.
        samples: usize,
    },
}

impl Solution {
    fn check_history(&self, h: &History) -> Result<()> {
        let g = &self.setup().grid;
        let pts = h.points();
        let ok = pts.len() >= 2
            && pts[0].0 == 0
            && pts[pts.len() - 1].0 == g.x_levels - 1
            && pts.iter().all(|p| p.1 < g.y_levels);
        if ok {
            Ok(())
        } else {
            Err(Error::invalid(
                "a history must hold both endpoints of the x-grid and only valid y-levels",
            ))
        }
    }

    /// `R(H)`: the expected classification reward of stopping now.
    pub fn history_reward(&self, h: &History) -> f64 {
        h.points()
            .windows(2)
            .map(|w| self.reward(w[0].0, w[1].0, w[0].1, w[1].1))
            .sum()
    }

    /// `V(H)` by Theorem 1: the sum of the interval values.
    pub fn history_value(&self, h: &History) -> f64 {
        h.points()
            .windows(2)
            .map(|w| self.value(w[0].0, w[1].0, w[0].1, w[1].1))
            .sum()
    }

    /// The next x-index to sample under `rule`, or `None` to stop; `taken` is the number of
    /// samples already made (used by [`PolicyRule::OneStepFixed`]).
    pub fn decide(&self, rule: PolicyRule, h: &History, taken: usize) -> Result<Option<usize>> {
        self.check_history(h)?;
        match rule {
            PolicyRule::Optimal => {
                // Every interval where sampling beats stopping attains the paper's criterion
                // max_x' E[V(H ∪ x')] − c = V(H) (Theorem 1), so they tie; we take the one
                // with the largest advantage C − R (leftmost on ties).
                let mut best: Option<(f64, usize)> = None;
                for w in h.points().windows(2) {
                    let (a, b) = (w[0], w[1]);
                    if let Some(x) = self.optimal_sample(a.0, b.0, a.1, b.1) {
                        let adv =
                            self.continuation(a.0, b.0, a.1, b.1) - self.reward(a.0, b.0, a.1, b.1);
                        if best.is_none_or(|(v, _)| adv > v) {
                            best = Some((adv, x));
                        }
                    }
                }
                Ok(best.map(|b| b.1))
            }
            PolicyRule::OneStep | PolicyRule::OneStepFixed { .. } => {
                if !self.has_one_step() {
                    return Err(Error::invalid(
                        "the one-step policy needs a solution built with `one_step: true`",
                    ));
                }
                if let PolicyRule::OneStepFixed { samples } = rule
                    && taken >= samples
                {
                    return Ok(None);
                }
                let mut best: Option<(f64, usize)> = None;
                for w in h.points().windows(2) {
                    let (a, b) = (w[0], w[1]);
                    if let Some((gain, x)) = self.one_step_best(a.0, b.0, a.1, b.1)
                        && best.is_none_or(|(v, _)| gain > v)
                    {
                        best = Some((gain, x));
                    }
                }
                Ok(match (rule, best) {
                    (PolicyRule::OneStep, Some((gain, x))) if gain > self.setup().cost => Some(x),
                    (PolicyRule::OneStepFixed { .. }, Some((_, x))) => Some(x),
                    _ => None,
                })
            }
        }
    }

    /// One run from `{(0, y_start), (ℓ, y_end)}` (level indices) with observations drawn
    /// from the grid conditional law; returns `(R(H_τ), τ)`.
    pub fn simulate(
        &self,
        rule: PolicyRule,
        start_level: usize,
        end_level: usize,
        seed: u64,
    ) -> Result<(f64, usize)> {
        let g = &self.setup().grid;
        let mut scratch = vec![0.0; g.y_levels];
        let mut h = History::new(g.x_levels, start_level, end_level);
        self.simulate_from(rule, &mut h, seed, &mut scratch)
    }

    fn simulate_from(
        &self,
        rule: PolicyRule,
        h: &mut History,
        seed: u64,
        scratch: &mut [f64],
    ) -> Result<(f64, usize)> {
        let mut rng = Rng::new(seed);
        let mut taken = 0;
        while let Some(x) = self.decide(rule, h, taken)? {
            let ((a, la), (b, lb)) = h
                .enclosing(x)
                .ok_or_else(|| Error::numerical("policy chose an already sampled point"))?;
            let w = self
                .kernel()
                .sample(a, b - a, x - a, la, lb, &mut rng, scratch);
            h.insert(x, w);
            taken += 1;
        }
        Ok((self.history_reward(h), taken))
    }

    /// Monte Carlo estimate of a policy's performance from `{(0, y_start), (ℓ, y_end)}`
    /// (grid values). Run `r` uses the seed `derive_seed(seed, r)`, runs are summed in fixed
    /// blocks, so the result is identical for any number of threads.
    pub fn monte_carlo(
        &self,
        rule: PolicyRule,
        y_start: f64,
        y_end: f64,
        runs: usize,
        seed: u64,
    ) -> Result<McEstimate> {
        if runs < 2 {
            return Err(Error::invalid(format!(
                "Monte Carlo needs at least 2 runs, got {runs}"
            )));
        }
        let g = &self.setup().grid;
        let (a, b) = (g.level_of(y_start)?, g.level_of(y_end)?);
        let c = self.setup().cost;
        const BLOCK: usize = 512;
        let blocks = runs.div_ceil(BLOCK);
        let sums: Vec<Result<[f64; 5]>> = (0..blocks)
            .into_par_iter()
            .map(|blk| {
                let mut scratch = vec![0.0; g.y_levels];
                let mut s = [0.0; 5];
                for run in blk * BLOCK..((blk + 1) * BLOCK).min(runs) {
                    let mut h = History::new(g.x_levels, a, b);
                    let (rew, tau) = self.simulate_from(
                        rule,
                        &mut h,
                        derive_seed(&[&seed, &run]),
                        &mut scratch,
                    )?;
                    let val = rew - c * tau as f64;
                    s[0] += val;
                    s[1] += val * val;
                    s[2] += rew;
                    s[3] += rew * rew;
                    s[4] += tau as f64;
                }
                Ok(s)
            })
            .collect();
        let mut tot = [0.0; 5];
        for s in sums {
            let s = s?;
            for k in 0..5 {
                tot[k] += s[k];
            }
        }
        let nf = runs as f64;
        let se = |s: f64, s2: f64| ((s2 - s * s / nf).max(0.0) / (nf - 1.0) / nf).sqrt();
        Ok(McEstimate {
            runs,
            mean_value: tot[0] / nf,
            se_value: se(tot[0], tot[1]),
            mean_reward: tot[2] / nf,
            se_reward: se(tot[2], tot[3]),
            mean_samples: tot[4] / nf,
        })
    }
}

/// A Monte Carlo estimate of a policy's performance.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct McEstimate {
    /// Number of runs.
    pub runs: usize,
    /// Mean of `R(H_τ) − cτ`.
    pub mean_value: f64,
    /// Standard error of `mean_value`.
    pub se_value: f64,
    /// Mean of `R(H_τ)`.
    pub mean_reward: f64,
    /// Standard error of `mean_reward`.
    pub se_reward: f64,
    /// Mean number of samples τ.
    pub mean_samples: f64,
}
