//! Explore-then-commit UCB-CVS (seed 002, Sec. 4.2): a number of plays per cost group
//! (control sets of equal cost, the most expensive group excluded), cheapest group first,
//! each play the best expected-UCB set within the group; afterwards the best of all sets.
//! ETC-50 and ETC-100 fix the plays; ETC-Ada plays ⌊4/c⌋ times a group of cost c. Seed 004
//! groups sets by their number of variables instead (smallest first), which needs no costs.

use crate::common::{CvsSetup, argmax_by, default_beta, default_mc_samples};
use cabo_core::{
    BuildContext, Decision, DecisionContext, Diagnostics, Error, PluginState, Policy, PolicySpec,
    Query, Result,
};
use serde::{Deserialize, Serialize};

/// How control sets are grouped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum GroupBy {
    /// Sets of equal known cost (seed 002).
    #[default]
    Cost,
    /// Sets with the same number of variables (seed 004's ETC-50).
    Size,
}

/// Spec of ETC: `{ type: cvs_etc, plays: 50 }`, `{ type: cvs_etc, adaptive: true }`
/// (ETC-Ada) or `{ type: cvs_etc, plays: 50, group_by: size }`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EtcSpec {
    /// Plays per group (ignored with `adaptive`); default 50.
    #[serde(default = "default_plays")]
    pub plays: usize,
    /// ETC-Ada: ⌊4/c⌋ plays for a group of cost c; default false.
    #[serde(default)]
    pub adaptive: bool,
    /// Grouping; default `cost`.
    #[serde(default)]
    pub group_by: GroupBy,
    /// UCB multiplier of σ; default 2.
    #[serde(default = "default_beta")]
    pub beta: f64,
    /// Quasi-random points of the open variables (scrambled Sobol', drawn once per run);
    /// default 128, which average as accurately as the seeds' 1024 independent draws
    /// ([`crate::common::DEFAULT_MC_SAMPLES`]). Powers of two keep the points balanced.
    #[serde(default = "default_mc_samples")]
    pub mc_samples: usize,
}

fn default_plays() -> usize {
    50
}

#[cabo_core::plugin(
    name = "cvs_etc",
    summary = "Explore-then-commit UCB-CVS: fixed (ETC-50/100) or ⌊4/c⌋ (ETC-Ada) plays per cost or size group, cheapest first, then the best set",
    paper = "002_68254e6b1337b56f (Sec. 4.2, App. C); 004_e019ef0c364ecaf4 (ETC-50 baseline)",
    example = "{ type: cvs_etc, plays: 50, group_by: cost }"
)]
impl PolicySpec for EtcSpec {
    fn validate(&self, _dim: usize) -> Result<()> {
        if !(self.beta.is_finite() && self.beta >= 0.0) {
            return Err(Error::invalid(format!(
                "cvs_etc.beta: must be finite and ≥ 0, got {}",
                self.beta
            )));
        }
        cabo_core::check_count(
            "cvs_etc.mc_samples",
            self.mc_samples,
            crate::common::MC_SAMPLES,
        )?;
        Ok(())
    }

    fn build(&self, ctx: &BuildContext<'_>) -> Result<Box<dyn Policy>> {
        self.validate(ctx.problem.dim)?;
        let setup = CvsSetup::new(ctx, self.mc_samples, "cvs_etc")?;
        // Groups as (key, sets), ordered cheapest (or smallest) first; the top group is the
        // commit phase's and gets no exploration plays.
        let mut keys: Vec<f64> = match self.group_by {
            GroupBy::Cost => setup.known_costs("cvs_etc")?.to_vec(),
            GroupBy::Size => setup.sets.iter().map(|s| s.len() as f64).collect(),
        };
        let per_set = keys.clone();
        keys.sort_by(f64::total_cmp);
        keys.dedup();
        keys.pop();
        let mut groups = Vec::new();
        for k in keys {
            let members: Vec<usize> = (0..per_set.len()).filter(|&i| per_set[i] == k).collect();
            let plays = if self.adaptive {
                let costs = setup.known_costs("cvs_etc (adaptive)")?;
                let c = members
                    .iter()
                    .map(|&i| costs[i])
                    .fold(f64::INFINITY, f64::min);
                (4.0 / c).floor() as usize
            } else {
                self.plays
            };
            groups.push(Group {
                members,
                remaining: plays,
            });
        }
        Ok(Box::new(Etc {
            spec: self.clone(),
            setup,
            groups,
            diagnostics: Diagnostics::new(),
        }))
    }
}

#[derive(Debug, Clone)]
struct Group {
    members: Vec<usize>,
    remaining: usize,
}

struct Etc {
    spec: EtcSpec,
    setup: CvsSetup,
    groups: Vec<Group>,
    diagnostics: Diagnostics,
}

impl Policy for Etc {
    fn decide(&mut self, ctx: &DecisionContext<'_>) -> Result<Decision> {
        let active = self.groups.iter().position(|g| g.remaining > 0);
        let which: Vec<usize> = match active {
            Some(g) => self.groups[g].members.clone(),
            None => (0..self.setup.sets.len()).collect(),
        };
        let maxima = self
            .setup
            .maximize(ctx, &which, self.spec.beta, "cvs_etc")?;
        let k = argmax_by(&maxima, |m| m.value)
            .ok_or_else(|| Error::numerical("cvs_etc: no control set to choose from"))?;
        if let Some(g) = active {
            self.groups[g].remaining -= 1;
        }
        let best = &maxima[k];
        self.diagnostics = Diagnostics::from([
            ("cvs.set".to_string(), best.set as f64),
            ("cvs.expected_ucb".to_string(), best.value),
            (
                "cvs.exploring".to_string(),
                f64::from(u8::from(active.is_some())),
            ),
        ]);
        Ok(Decision::Evaluate(Query {
            control_set: Some(best.set),
            x: best.x.clone(),
        }))
    }

    fn diagnostics(&self) -> Diagnostics {
        self.diagnostics.clone()
    }

    /// The plays each group has left.
    fn checkpoint(&self) -> Result<Option<PluginState>> {
        let remaining: Vec<usize> = self.groups.iter().map(|g| g.remaining).collect();
        PluginState::encode(&remaining).map(Some)
    }

    fn restore(&mut self, state: &PluginState) -> Result<()> {
        let remaining: Vec<usize> = state.decode("cvs_etc")?;
        if remaining.len() != self.groups.len() {
            return Err(Error::invalid(format!(
                "checkpoint: cvs_etc saved {} groups, the spec now has {}",
                remaining.len(),
                self.groups.len()
            )));
        }
        for (g, r) in self.groups.iter_mut().zip(remaining) {
            g.remaining = r;
        }
        Ok(())
    }
}
