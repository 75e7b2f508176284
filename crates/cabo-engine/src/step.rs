//! The rules of a run, in one place for its two drivers: the run loop
//! ([`crate::run_loop`]), which evaluates the problem itself, and ask/tell
//! ([`crate::session`]), which is told what was evaluated elsewhere.
//!
//! A [`Step`] holds a run's observations, its budget and the count of its policy decisions,
//! and says
//! - which seed evaluation `i` draws its noise from, and its known cost ([`Step::seeds`]);
//! - which phase the next evaluation belongs to (the initial design first);
//! - which decision comes next, and makes it with its seed ([`Step::decide`]);
//! - whether the evaluation cap allows another evaluation ([`Step::check_cap`]);
//! - what an observation does to the run ([`Step::tell`]): it joins the data, its cost is
//!   charged when its phase counts against the budget, and a policy-phase observation
//!   answers the decision and goes to the policy's `observe`.
//!
//! Neither driver repeats any of these; a session decides bit for bit as the loop does
//! because both ask the same `Step`.

use crate::setup::{Setup, decide};
use cabo_core::{
    BudgetState, CostFunction, Dataset, Decision, Diagnostics, Error, Observation, Phase, Result,
    derive_seed,
};

/// A run's observations, budget and decisions, and the rules that move them on.
#[derive(Debug, Clone)]
pub(crate) struct Step {
    /// Every observation so far, the initial design's first.
    pub(crate) data: Dataset,
    /// What the budget has spent.
    pub(crate) budget: BudgetState,
    /// Policy decisions answered by an observation so far.
    pub(crate) decisions: usize,
    /// The seeds and the spec's rules.
    rules: Rules,
}

/// The seeds of one evaluation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct EvaluationSeeds {
    /// The problem's: its noise and uncontrolled variables.
    pub(crate) evaluation: u64,
    /// A known cost function's.
    pub(crate) cost: u64,
}

/// What a [`Step`] needs besides its state: the seeds and the spec's rules.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rules {
    /// The replication's problem seed.
    pub(crate) problem_seed: u64,
    /// The policy's seed in this replication.
    pub(crate) policy_seed: u64,
    /// Points the initial design takes.
    pub(crate) design_len: usize,
    /// `initial_design.counts`.
    pub(crate) design_counts: bool,
    /// `limits.max_evaluations`.
    pub(crate) max_evaluations: usize,
}

impl Step {
    /// A run at `decisions` decisions with `data` observed and `budget` spent (a fresh run
    /// has none of either, a resumed one what its checkpoint holds).
    pub(crate) fn new(rules: Rules, data: Dataset, budget: BudgetState, decisions: usize) -> Step {
        Step {
            data,
            budget,
            decisions,
            rules,
        }
    }

    /// The replication's problem seed.
    /// The initial design's size: its evaluations come before the policy's.
    pub(crate) fn design_len(&self) -> usize {
        self.rules.design_len
    }

    pub(crate) fn problem_seed(&self) -> u64 {
        self.rules.problem_seed
    }

    /// The policy's seed in this replication.
    pub(crate) fn policy_seed(&self) -> u64 {
        self.rules.policy_seed
    }

    /// The seeds of evaluation `index` (0-based, the initial design's included).
    pub(crate) fn seeds(&self, index: usize) -> EvaluationSeeds {
        let evaluation = derive_seed(&[&self.rules.problem_seed, &"evaluate", &index]);
        EvaluationSeeds {
            evaluation,
            cost: derive_seed(&[&evaluation, &"cost"]),
        }
    }

    /// What a known cost function charges evaluation `index` at `x` (unit cube).
    pub(crate) fn known_cost(&self, cost: &dyn CostFunction, x: &[f64], index: usize) -> f64 {
        cost.observe(x, self.seeds(index).cost)
    }

    /// The phase of the next evaluation: the initial design's until it is complete.
    pub(crate) fn next_phase(&self) -> Phase {
        if self.data.len() < self.rules.design_len {
            Phase::Initial
        } else {
            Phase::Policy
        }
    }

    /// The number of the next policy decision (1-based).
    pub(crate) fn next_iteration(&self) -> usize {
        self.decisions + 1
    }

    /// The next policy decision on the data so far, with its seed (see [`decide`]).
    pub(crate) fn decide(&self, setup: &mut Setup) -> Result<(Decision, Diagnostics, f64)> {
        decide(
            setup,
            &self.data,
            &self.budget,
            self.rules.policy_seed,
            self.next_iteration(),
        )
    }

    /// Refuses another evaluation once `limits.max_evaluations` are made, `in_flight` of
    /// them still running. A cost budget whose smallest cost is unknown cannot be bounded
    /// before the run, so the cap is enforced here; otherwise validation guarantees it.
    pub(crate) fn check_cap(&self, in_flight: usize) -> Result<()> {
        let (made, cap) = (self.data.len() + in_flight, self.rules.max_evaluations);
        if made < cap {
            return Ok(());
        }
        Err(Error::invalid(format!(
            "{made} evaluations reach limits.max_evaluations = {cap} before the budget is \
             spent (the smallest cost per evaluation is not known in advance, so the budget \
             could not be checked); raise the limit in the spec's `limits:` section or lower \
             the budget"
        )))
    }

    /// Takes an observation into the run: charged to the budget when its phase counts,
    /// added to the data, and, in the policy phase, counted as the answer to the next
    /// decision and handed to the policy's `observe`.
    pub(crate) fn tell(&mut self, setup: &mut Setup, obs: Observation) -> Result<()> {
        let policy = obs.phase == Phase::Policy;
        if policy || self.rules.design_counts {
            self.budget.charge(obs.outcome.cost);
        }
        self.data.push(obs)?;
        if policy {
            self.decisions += 1;
            let last = self.data.observations().last().expect("just pushed");
            setup.policy.observe(&self.data, last)?;
        }
        Ok(())
    }
}
