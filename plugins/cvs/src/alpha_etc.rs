//! α-tolerant explore-then-commit with cost lower confidence bounds (seed 004, Alg. 1), for
//! control sets whose costs are random and unknown.
//!
//! **Exploration** plays the sets round-robin, each at its expected-UCB maximiser, for τ
//! rounds per set (`tau`), or — as the authors' code does — until a share of the cost budget
//! is spent (`explore_share`, default 0.6); every set is played at least once. Along the way
//! the intersected bounds are tracked: \overline{ucb}_i = min over plays of set i of its best
//! expected UCB, and \overline{lcb} = max over rounds of the best expected LCB over every set
//! (Alg. 1, line 10).
//!
//! **Exploitation** (`rule: paper`): each round both bounds are intersected with the current
//! best expected UCB of every set and the best expected LCB over all sets;
//! S₁ = {i : \overline{ucb}_i > (1 − α)·\overline{lcb}}, and when S₁ is empty both bounds are
//! reset to the current values. Among S₁ the sets with the smallest cost LCB
//! c_i^LCB = max(ĉ_i − √(2 ln T / T_i), 0) are kept (ĉ_i the mean observed cost, T_i the
//! plays of i, T the horizon — the current round when no `horizon` is given, because a cost
//! budget leaves the horizon unknown), and the one with the largest expected UCB is played
//! at its maximiser. The relative tolerance presumes f ≥ 0, which the paper gets by
//! shifting f by its worst value f₀; so the rule here reads ucb̄_i − f₀ > (1 − α)(lcb̄ − f₀),
//! with f₀ the `floor` of the spec, by default the worst value a `cvs` problem publishes
//! ([`ValueFloor`]) and 0 for other problems. Without it, an objective with negative values
//! (Ackley) would have its tolerance turned into a margin no set can clear.
//! A set whose \overline{ucb}_i already sits at or below the threshold stays out of S₁ until
//! a reset, so its search is skipped (see `threshold_only_rises`); once S₁ has narrowed, a
//! round searches only the sets still in it.
//!
//! `rule: reference` follows the public reference code instead, which has no α: S₁ holds
//! the sets whose best expected UCB (β = 1.96 there) reaches the best expected LCB over all
//! sets (μ − 0.3σ there), without intersecting over rounds. Set `beta` and `lcb_beta` to
//! 1.96 and 0.3 to match it.
//!
//! **The best expected LCB over every set** is the maximal LCB of a set that holds every
//! variable, when there is one (the synthetic specs of seed 004 have it, airfoil does not):
//! for any set i and any x^i, the Monte Carlo average (1/M)·Σ_c l([x^i, s_c^{−i}]) is at
//! most max_x l(x). That set's bound has no open variables, so one evaluation costs one
//! posterior, not M; only it is searched, with a search [`FULL_SET_WIDENING`] times as wide
//! to stand in for the others. This halves the Monte Carlo searches of a round. Without such
//! a set, exploration takes the LCB of the set played (which only lowers \overline{lcb}, so
//! S₁ stays a superset) and exploitation searches every set.

use crate::common::{CvsSetup, argmax_by, default_beta, default_mc_samples};
use crate::expected::SetMaximum;
use crate::problem::ValueFloor;
use cabo_core::{
    BuildContext, Dataset, Decision, DecisionContext, Diagnostics, Error, Observation,
    OptimizerSettings, Phase, PluginState, Policy, PolicySpec, Query, Result,
};
use serde::{Deserialize, Serialize};

/// Which exploitation rule to apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Rule {
    /// Alg. 1 of the paper: intersected bounds and the α-tolerant set.
    #[default]
    Paper,
    /// The authors' public code: current expected UCB against the best current LCB, no α.
    Reference,
}

/// Spec of α-ETC: `{ type: alpha_etc, alpha: 0.1, explore_share: 0.6 }`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AlphaEtcSpec {
    /// Exploration rounds per set; when absent, explore until `explore_share` of the cost
    /// budget is spent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tau: Option<usize>,
    /// Share of the budget spent exploring when `tau` is absent; default 0.6.
    #[serde(default = "default_share")]
    pub explore_share: f64,
    /// Tolerance α; default 0.1.
    #[serde(default = "default_alpha")]
    pub alpha: f64,
    /// Halve α after every this many exploitation rounds; default never.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alpha_halving_every: Option<usize>,
    /// UCB multiplier of σ; default 2.
    #[serde(default = "default_beta")]
    pub beta: f64,
    /// LCB multiplier of σ (l = μ − lcb_beta·σ); default 2.
    #[serde(default = "default_beta")]
    pub lcb_beta: f64,
    /// The horizon T in the cost LCB; default the current round.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub horizon: Option<usize>,
    /// The value α's relative tolerance is measured from; default the worst value of f
    /// that a `cvs` problem publishes ([`crate::problem::ValueFloor`], the shift that makes
    /// f ≥ 0 in seed 004), else 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub floor: Option<f64>,
    /// Exploitation rule; default `paper`.
    #[serde(default)]
    pub rule: Rule,
    /// Quasi-random points of the open variables (scrambled Sobol', drawn once per run);
    /// default 128, which average as accurately as the seeds' 1024 independent draws
    /// ([`crate::common::DEFAULT_MC_SAMPLES`]). Powers of two keep the points balanced.
    #[serde(default = "default_mc_samples")]
    pub mc_samples: usize,
}

fn default_share() -> f64 {
    0.6
}
fn default_alpha() -> f64 {
    0.1
}

#[cabo_core::plugin(
    name = "alpha_etc",
    summary = "α-tolerant explore-then-commit for unknown random costs: round-robin exploration, then the cheapest (cost-LCB) plausible control set",
    paper = "004_e019ef0c364ecaf4 (Alg. 1)",
    example = "{ type: alpha_etc, alpha: 0.1, explore_share: 0.6, rule: paper }"
)]
impl PolicySpec for AlphaEtcSpec {
    fn validate(&self, _dim: usize) -> Result<()> {
        if self.tau == Some(0) {
            return Err(Error::invalid("alpha_etc.tau: must be at least 1"));
        }
        if !(0.0..=1.0).contains(&self.explore_share) {
            return Err(Error::invalid(format!(
                "alpha_etc.explore_share: must be in [0, 1], got {}",
                self.explore_share
            )));
        }
        if !(0.0..1.0).contains(&self.alpha) {
            return Err(Error::invalid(format!(
                "alpha_etc.alpha: must be in [0, 1), got {}",
                self.alpha
            )));
        }
        if self.alpha_halving_every == Some(0) || self.horizon == Some(0) {
            return Err(Error::invalid(
                "alpha_etc: alpha_halving_every and horizon must be at least 1",
            ));
        }
        if let Some(f) = self.floor
            && !f.is_finite()
        {
            return Err(Error::invalid(format!(
                "alpha_etc.floor: must be finite, got {f}"
            )));
        }
        for (k, b) in [("beta", self.beta), ("lcb_beta", self.lcb_beta)] {
            if !(b.is_finite() && b >= 0.0) {
                return Err(Error::invalid(format!(
                    "alpha_etc.{k}: must be finite and ≥ 0, got {b}"
                )));
            }
        }
        cabo_core::check_count(
            "alpha_etc.mc_samples",
            self.mc_samples,
            crate::common::MC_SAMPLES,
        )?;
        Ok(())
    }

    fn build(&self, ctx: &BuildContext<'_>) -> Result<Box<dyn Policy>> {
        self.validate(ctx.problem.dim)?;
        let setup = CvsSetup::new(ctx, self.mc_samples, "alpha_etc")?;
        let m = setup.sets.len();
        let full_set = setup.sets.iter().position(|s| s.len() == ctx.problem.dim);
        let floor = self
            .floor
            .or_else(|| ctx.problem.extension::<ValueFloor>().map(|f| f.0))
            .unwrap_or(0.0);
        Ok(Box::new(AlphaEtc {
            spec: self.clone(),
            full_set,
            floor,
            setup,
            state: Progress {
                plays: vec![0; m],
                cost_sums: vec![0.0; m],
                explored: 0,
                exploiting: false,
                exploit_rounds: 0,
                lcb_bar: f64::NEG_INFINITY,
                ucb_bar: vec![f64::INFINITY; m],
            },
            diagnostics: Diagnostics::new(),
        }))
    }
}

/// S₁ = {i : ucb̄_i − f₀ > (1 − α)·(lcb̄ − f₀)}, the tolerance measured from the floor f₀
/// (seed 004 shifts f by its worst value so that f ≥ 0; f₀ = 0 is the paper's formula).
pub fn tolerant_set(ucb_bar: &[f64], lcb_bar: f64, alpha: f64, floor: f64) -> Vec<usize> {
    (0..ucb_bar.len())
        .filter(|&i| ucb_bar[i] - floor > (1.0 - alpha) * (lcb_bar - floor))
        .collect()
}

/// c^LCB = max(ĉ − √(2 ln T / T_i), 0) for a set played `plays` times with mean observed
/// cost `mean` (−∞ never: an unplayed set gets 0, the most optimistic value).
pub fn cost_lcb(mean: f64, plays: usize, horizon: usize) -> f64 {
    if plays == 0 {
        return 0.0;
    }
    let width = (2.0 * (horizon.max(1) as f64).ln() / plays as f64).sqrt();
    (mean - width).max(0.0)
}

/// What α-ETC learns as it plays: counts, costs, the phase and the intersected bounds.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Progress {
    plays: Vec<usize>,
    cost_sums: Vec<f64>,
    explored: usize,
    exploiting: bool,
    exploit_rounds: usize,
    lcb_bar: f64,
    ucb_bar: Vec<f64>,
}

/// How many times more raw candidates and restarts the search of the full set's LCB gets
/// than the spec's optimiser (see the module docs).
pub const FULL_SET_WIDENING: usize = 4;

struct AlphaEtc {
    spec: AlphaEtcSpec,
    /// The control set holding every variable, if any.
    full_set: Option<usize>,
    /// What α's tolerance is measured from (see [`tolerant_set`]).
    floor: f64,
    setup: CvsSetup,
    state: Progress,
    diagnostics: Diagnostics,
}

impl AlphaEtc {
    fn still_exploring(&self, ctx: &DecisionContext<'_>) -> bool {
        let m = self.setup.sets.len();
        if self.state.plays.contains(&0) || self.state.explored < m {
            return true;
        }
        match self.spec.tau {
            Some(tau) => self.state.explored < m * tau,
            None => match (ctx.budget.budget.cost, ctx.budget.budget.iterations) {
                (Some(c), _) => ctx.budget.spent < self.spec.explore_share * c,
                (None, Some(n)) => {
                    (ctx.budget.iterations as f64) < self.spec.explore_share * n as f64
                }
                (None, None) => false,
            },
        }
    }

    /// The best expected LCB over every set, with the set and point reaching it: the full
    /// set's alone when there is one, otherwise the best over the sets in `fallback`.
    fn best_lcb(&self, ctx: &DecisionContext<'_>, fallback: &[usize]) -> Result<SetMaximum> {
        let label = "alpha_etc lcb";
        let mut lcb = match self.full_set {
            Some(full) => {
                let wide = OptimizerSettings {
                    raw_samples: ctx.optimizer.raw_samples * FULL_SET_WIDENING,
                    restarts: ctx.optimizer.restarts * FULL_SET_WIDENING,
                    max_iters: ctx.optimizer.max_iters,
                };
                let beta = -self.spec.lcb_beta;
                self.setup.maximize_with(ctx, &[full], beta, label, &wide)?
            }
            None => self
                .setup
                .maximize(ctx, fallback, -self.spec.lcb_beta, label)?,
        };
        let best = argmax_by(&lcb, |l| l.value)
            .ok_or_else(|| Error::numerical("alpha_etc: no control set to bound"))?;
        Ok(lcb.swap_remove(best))
    }

    /// Stores the best expected UCB of each set in `which` at its index in `into`.
    ///
    /// The set reaching the best LCB, `lcb`, has an expected UCB at least as high at the
    /// same point (β ≥ −lcb_beta), so it is always plausible; a search that stopped short
    /// of that point (a multi-start search converges only so far) would leave no set
    /// plausible. Its UCB is therefore taken at the LCB's maximiser where that is higher.
    fn search_ucb(
        &self,
        ctx: &DecisionContext<'_>,
        which: &[usize],
        into: &mut [Option<SetMaximum>],
        lcb: &SetMaximum,
    ) -> Result<()> {
        if which.is_empty() {
            return Ok(());
        }
        for u in self
            .setup
            .maximize(ctx, which, self.spec.beta, "alpha_etc ucb")?
        {
            let i = u.set;
            into[i] = Some(u);
        }
        if let Some(found) = into[lcb.set].as_mut()
            && found.value < lcb.value
        {
            let at_lcb = self.setup.bound_at(ctx, lcb.set, self.spec.beta, &lcb.x)?;
            if at_lcb > found.value {
                found.value = at_lcb;
                found.x.clone_from(&lcb.x);
            }
        }
        Ok(())
    }

    /// Whether the S₁ threshold f₀ + (1 − α)·(\overline{lcb} − f₀) can only rise until the
    /// bounds are reset: \overline{lcb} only rises between resets, and (1 − α) only rises as
    /// α halves, so the threshold does when α is fixed or \overline{lcb} ≥ f₀. Then a set whose
    /// \overline{ucb}_i (a running minimum) is at or below the threshold stays out of S₁
    /// until a reset, and its search can be skipped without changing any decision: each
    /// set's search has its own seed, and a reset searches every set.
    fn threshold_only_rises(&self) -> bool {
        self.spec.alpha_halving_every.is_none() || self.state.lcb_bar >= self.floor
    }

    /// Alg. 1, lines 14–20: intersects both bounds with this round's and returns S₁,
    /// resetting the bounds to this round's when S₁ comes out empty. The best expected UCB
    /// of every set that can be in S₁ is searched into `ucb` (every set's on a reset).
    fn intersected_tolerant_set(
        &mut self,
        ctx: &DecisionContext<'_>,
        alpha: f64,
        best: &SetMaximum,
        ucb: &mut [Option<SetMaximum>],
    ) -> Result<Vec<usize>> {
        let best_lcb = best.value;
        let value = |u: &Option<SetMaximum>| u.as_ref().map_or(f64::INFINITY, |u| u.value);
        let all: Vec<usize> = (0..ucb.len()).collect();
        self.state.lcb_bar = self.state.lcb_bar.max(best_lcb);
        let searched = if self.threshold_only_rises() {
            self.tolerant_set(alpha)
        } else {
            all.clone()
        };
        self.search_ucb(ctx, &searched, ucb, best)?;
        for &i in &searched {
            self.state.ucb_bar[i] = self.state.ucb_bar[i].min(value(&ucb[i]));
        }
        let s1 = self.tolerant_set(alpha);
        if !s1.is_empty() {
            return Ok(s1);
        }
        let rest: Vec<usize> = all.into_iter().filter(|&i| ucb[i].is_none()).collect();
        self.search_ucb(ctx, &rest, ucb, best)?;
        self.state.lcb_bar = best_lcb;
        self.state.ucb_bar = ucb.iter().map(value).collect();
        Ok(self.tolerant_set(alpha))
    }

    /// S₁ under the current intersected bounds.
    fn tolerant_set(&self, alpha: f64) -> Vec<usize> {
        tolerant_set(&self.state.ucb_bar, self.state.lcb_bar, alpha, self.floor)
    }

    fn alpha(&self) -> f64 {
        match self.spec.alpha_halving_every {
            Some(k) => self.spec.alpha * 0.5f64.powi((self.state.exploit_rounds / k) as i32),
            None => self.spec.alpha,
        }
    }
}

impl Policy for AlphaEtc {
    fn decide(&mut self, ctx: &DecisionContext<'_>) -> Result<Decision> {
        let m = self.setup.sets.len();
        if !self.state.exploiting && self.still_exploring(ctx) {
            let i = self.state.explored % m;
            self.state.explored += 1;
            let ucb = self
                .setup
                .maximize(ctx, &[i], self.spec.beta, "alpha_etc ucb")?;
            let lcb = self.best_lcb(ctx, &[i])?.value;
            self.state.ucb_bar[i] = self.state.ucb_bar[i].min(ucb[0].value);
            self.state.lcb_bar = self.state.lcb_bar.max(lcb);
            self.diagnostics = Diagnostics::from([
                ("cvs.set".to_string(), i as f64),
                ("cvs.exploring".to_string(), 1.0),
                ("cvs.expected_ucb".to_string(), ucb[0].value),
            ]);
            return Ok(Decision::Evaluate(Query {
                control_set: Some(i),
                x: ucb[0].x.clone(),
            }));
        }
        self.state.exploiting = true;
        let alpha = self.alpha();
        self.state.exploit_rounds += 1;
        let all: Vec<usize> = (0..m).collect();
        let best = self.best_lcb(ctx, &all)?;
        let best_lcb = best.value;
        let mut ucb: Vec<Option<SetMaximum>> = vec![None; m];
        let s1 = match self.spec.rule {
            Rule::Paper => self.intersected_tolerant_set(ctx, alpha, &best, &mut ucb)?,
            Rule::Reference => {
                self.search_ucb(ctx, &all, &mut ucb, &best)?;
                all.iter()
                    .copied()
                    .filter(|&i| ucb[i].as_ref().is_some_and(|u| u.value >= best_lcb))
                    .collect()
            }
        };
        if s1.is_empty() {
            return Err(Error::numerical(
                "alpha_etc: no control set is plausible even after resetting the bounds",
            ));
        }
        let horizon = self
            .spec
            .horizon
            .unwrap_or(self.state.plays.iter().sum::<usize>() + 1);
        let clcb: Vec<f64> = (0..m)
            .map(|i| {
                let mean = self.state.cost_sums[i] / self.state.plays[i].max(1) as f64;
                cost_lcb(mean, self.state.plays[i], horizon)
            })
            .collect();
        let cmin = s1.iter().map(|&i| clcb[i]).fold(f64::INFINITY, f64::min);
        let s3: Vec<usize> = s1.iter().copied().filter(|&i| clcb[i] == cmin).collect();
        // Every set in S₁ was searched this round.
        let value = |i: usize| ucb[i].as_ref().map_or(f64::NEG_INFINITY, |u| u.value);
        let k = s3[argmax_by(&s3, |&i| value(i)).unwrap_or(0)];
        let Some(best) = ucb[k].take() else {
            return Err(Error::numerical(format!(
                "alpha_etc: control set {k} was chosen without being searched"
            )));
        };
        self.diagnostics = Diagnostics::from([
            ("cvs.set".to_string(), k as f64),
            ("cvs.exploring".to_string(), 0.0),
            ("cvs.expected_ucb".to_string(), best.value),
            ("cvs.alpha".to_string(), alpha),
            ("cvs.tolerant_sets".to_string(), s1.len() as f64),
            ("cvs.cost_lcb".to_string(), clcb[k]),
        ]);
        Ok(Decision::Evaluate(Query {
            control_set: Some(k),
            x: best.x,
        }))
    }

    fn observe(&mut self, _data: &Dataset, latest: &Observation) -> Result<()> {
        if latest.phase == Phase::Policy
            && let Some(i) = latest.query.control_set
            && i < self.state.plays.len()
        {
            self.state.plays[i] += 1;
            self.state.cost_sums[i] += latest.outcome.cost;
        }
        Ok(())
    }

    fn diagnostics(&self) -> Diagnostics {
        self.diagnostics.clone()
    }

    fn checkpoint(&self) -> Result<Option<PluginState>> {
        PluginState::encode(&self.state).map(Some)
    }

    fn restore(&mut self, state: &PluginState) -> Result<()> {
        let saved: Progress = state.decode("alpha_etc")?;
        if saved.plays.len() != self.setup.sets.len() {
            return Err(Error::invalid(format!(
                "checkpoint: alpha_etc saved {} control sets, the problem has {}",
                saved.plays.len(),
                self.setup.sets.len()
            )));
        }
        self.state = saved;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cabo_core::Rng;

    #[test]
    fn tolerant_set_contains_every_acceptable_set_when_bounds_hold() {
        // Random instances: true best values v_i above a floor f₀ (f's worst value, of any
        // sign), bounds with ucb̄_i ≥ v_i and lcb̄ ≤ max_j v_j. Every set with
        // v_i − f₀ ≥ (1 − α)(max v − f₀) — the optimal set above all — must be in S₁.
        let mut rng = Rng::new(5);
        for _ in 0..20_000 {
            let m = 1 + rng.below(8) as usize;
            let floor = 20.0 * rng.uniform() - 10.0;
            let v: Vec<f64> = (0..m).map(|_| floor + rng.uniform() * 3.0).collect();
            let vmax = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let ucb: Vec<f64> = v
                .iter()
                .map(|x| x + rng.uniform() * rng.uniform())
                .collect();
            let lcb = vmax - rng.uniform() * 2.0;
            let alpha = rng.uniform() * 0.5;
            let s1 = tolerant_set(&ucb, lcb, alpha, floor);
            let best = argmax_by(&v, |x| *x).unwrap();
            assert!(
                s1.contains(&best),
                "v {v:?} ucb {ucb:?} lcb {lcb} α {alpha} floor {floor}"
            );
            for (i, vi) in v.iter().enumerate() {
                if vi - floor > (1.0 - alpha) * (vmax - floor) {
                    assert!(s1.contains(&i));
                }
            }
        }
    }

    #[test]
    fn a_floor_that_is_not_finite_is_a_clear_error() {
        let mut spec: AlphaEtcSpec = serde_json::from_str(r#"{"floor": -3.5}"#).unwrap();
        assert!(spec.validate(6).is_ok());
        spec.floor = Some(f64::NEG_INFINITY);
        let e = spec.validate(6).unwrap_err().to_string();
        assert!(e.contains("alpha_etc.floor: must be finite"), "{e}");
    }

    #[test]
    fn tolerant_set_drops_sets_whose_ucb_is_below_the_threshold() {
        assert_eq!(tolerant_set(&[1.0, 0.5, 2.0], 1.0, 0.1, 0.0), vec![0, 2]);
        assert_eq!(tolerant_set(&[1.0, 0.5, 2.0], 1.0, 0.6, 0.0), vec![0, 1, 2]);
        assert!(tolerant_set(&[0.1, 0.2], 5.0, 0.1, 0.0).is_empty());
        // The same instance shifted by −10 (as Ackley's values are): with its floor the
        // tolerance is unchanged; measured from 0 it would turn into a bar no set clears.
        let shifted = [-9.0, -9.5, -8.0];
        assert_eq!(tolerant_set(&shifted, -9.0, 0.6, -10.0), vec![0, 1, 2]);
        assert!(tolerant_set(&shifted, -9.0, 0.6, 0.0).is_empty());
    }

    #[test]
    fn cost_lcb_stays_below_the_mean_at_the_hoeffding_rate() {
        // Costs uniform on [0, 1] with mean c: by Hoeffding, P(ĉ − √(2 ln T / n) > c) ≤
        // exp(−4 ln T) = T⁻⁴ for every n. Check the empirical violation rate against it.
        let mut rng = Rng::new(17);
        let horizon = 4usize; // T⁻⁴ = 1/256: large enough to measure.
        let bound = (horizon as f64).powi(-4);
        let trials = 40_000;
        for n in [1usize, 3, 10] {
            let mut violations = 0;
            for _ in 0..trials {
                let c = 0.3;
                let mean = (0..n).map(|_| 0.6 * rng.uniform()).sum::<f64>() / n as f64;
                if cost_lcb(mean, n, horizon) > c {
                    violations += 1;
                }
            }
            let rate = violations as f64 / trials as f64;
            let se = (bound * (1.0 - bound) / trials as f64).sqrt();
            assert!(rate <= bound + 4.0 * se, "n = {n}: rate {rate} > {bound}");
        }
        // The width matters: without it, the LCB exceeds the mean about half the time.
        let mut above = 0;
        for _ in 0..trials {
            let mean = (0..3).map(|_| 0.6 * rng.uniform()).sum::<f64>() / 3.0;
            if cost_lcb(mean, 3, 1) > 0.3 {
                above += 1;
            }
        }
        assert!((above as f64 / trials as f64 - 0.5).abs() < 0.02);
        assert_eq!(cost_lcb(0.5, 0, 10), 0.0);
    }
}
