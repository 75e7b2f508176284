//! Ask/tell: a run whose evaluations are made outside cabo (an experiment run by hand, a
//! program that embeds cabo), one at a time.
//!
//! A [`Session`] is the run loop of [`crate::run_loop`] turned inside out. It builds the
//! problem, the known cost, the models and the policy of one (policy, replication) of a spec
//! exactly as a run does, with the same seeds; [`Session::tell`] hands it an observation, and
//! [`Session::ask`] returns the query the run loop would evaluate next given the same
//! observations: decisions go through the loop's own decision function
//! (`setup::decide`), with the same iteration number and so the same decision seed.
//!
//! **Phases.** The first observations told are the initial design: as many as the spec's
//! `initial_design.points` (fewer where a finite domain has fewer candidates). While the
//! design is incomplete, `ask` returns its next point — the point the run would evaluate —
//! so an experiment run by hand starts from no data. Every later observation answers a
//! policy decision: the `i`-th of them is decision `i`, whose seed is
//! `derive_seed(&[&policy_seed, &i])` as in the run loop.
//!
//! **Policy and model state.** Policies and models carry state from one decision to the
//! next, and some of it changes while deciding, not only in [`cabo_core::Policy::observe`]:
//! a policy may keep its pending decision for `observe`, the last scenario tree as the next
//! warm start or a count of explorations, and a model may warm-start each fit from the
//! previous one — fits that happen inside `decide`. `observe` alone therefore does not
//! reproduce a run's state. A session replays what the loop does instead: for every
//! observation told in the policy phase it first makes the decision the loop would have made
//! before it (fitting the models as that decision does), then records the observation and
//! calls `observe`. A decision `ask` already made for the same data is not made again. The
//! replayed decision's query is not used (the observation told is what was evaluated,
//! wherever that was); where it stopped the run, the observation is taken all the same. An
//! error while replaying (a model that failed to fit) leaves the session part-way through a
//! step: build a new one. The price is one decision per policy-phase observation told
//! (`suggest` builds a session from its data file, so it pays it on every call); exactness is
//! worth it, since a session must decide bit for bit as the run would.
//!
//! **Budget.** Costs are charged as in the loop: policy-phase costs always, initial-design
//! costs only with `initial_design.counts: true`. Once the budget is spent `ask` answers
//! [`Suggestion::Done`]; an observation told after that is kept as data, and since the loop
//! makes no decision then, none is replayed for it (`observe` still sees it).
//!
//! **Costs.** Where the spec has a known cost (`cost:`), an observation's cost may be left
//! out: it is then what a run would charge, [`cabo_core::CostFunction::observe`] at the point
//! with the seed of that evaluation. Without `cost:` the cost must be given (it is what the
//! cost model learns from, and what a cost budget counts).
//!
//! **Units.** Points are told and suggested in the problem's own units
//! ([`cabo_core::Problem::to_native`] and its inverse
//! [`cabo_core::Problem::native_to_unit`]); models and policies see the unit cube as always.
//!
//! **Control sets.** Problems with control sets (`cvs`) are refused: their queries fix some
//! inputs and the environment draws the others, which a table of observations does not
//! record.
//!
//! **Several points at once.** [`Session::ask_many`] asks for points in sequence, each
//! after the first decided with the earlier ones pending, as a run with several workers
//! decides (by default on the Kriging believer's fantasies, Ginsbourger et al., 2010); see
//! there. [`Session::ask_while_pending`] does the same after points evaluated elsewhere and
//! not yet told.

use crate::pending::{self, Pending};
use crate::seeds::{policy_seed, problem_seed};
use crate::setup::{self, Setup};
use crate::step::{Rules, Step};
use cabo_core::{
    BudgetState, Dataset, Decision, Diagnostics, Error, Observation, Outcome, PendingRule, Phase,
    Query, Result,
};
use cabo_spec::spec::{LoadedSpec, PolicyEntry};

/// What to do next.
#[derive(Debug, Clone, PartialEq)]
pub enum Suggestion {
    /// Evaluate this point next.
    Evaluate(Suggested),
    /// The experiment is over: the budget is spent or the policy stopped (the reason).
    Done(String),
}

/// A point to evaluate, and where it stands in the run.
#[derive(Debug, Clone, PartialEq)]
pub struct Suggested {
    /// The point in the problem's own units.
    pub x: Vec<f64>,
    /// The same point in the unit cube (as a run's records hold it).
    pub unit: Vec<f64>,
    /// Whether it is a point of the initial design or a policy decision.
    pub phase: Phase,
    /// The evaluation's 0-based index in the run (the `iter` of its record in
    /// `rep-<r>.jsonl`).
    pub evaluation: usize,
    /// The 1-based number of the policy decision (`None` for the initial design).
    pub iteration: Option<usize>,
    /// How many points it was chosen with pending, fantasised by the session's
    /// [`Session::pending_rule`]: the earlier suggestions of the same [`Session::ask_many`]
    /// and the pending points of [`Session::ask_while_pending`] (0 for the first of
    /// `ask_many`, and for the initial design).
    pub pending: usize,
    /// What the policy and the fitted posterior reported about the decision (acquisition
    /// value, hyperparameters …; empty for the initial design).
    pub diagnostics: Diagnostics,
}

/// An observation as told, kept so that a session can be replayed.
#[derive(Debug, Clone)]
struct Told {
    unit: Vec<f64>,
    y: f64,
    cost: f64,
}

/// One (policy, replication) of a spec, driven from outside: see the module documentation.
pub struct Session {
    spec: LoadedSpec,
    entry: usize,
    replication: usize,
    setup: Setup,
    /// The observations, the budget and the decisions, moved on by the run's rules.
    step: Step,
    /// The initial design's points (unit cube).
    design: Vec<Vec<f64>>,
    told: Vec<Told>,
    /// The decision already made on the current data (by `ask`), with its diagnostics.
    decided: Option<(Decision, Diagnostics)>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("spec", &self.spec.spec.name)
            .field("policy", &self.policy())
            .field("replication", &self.replication)
            .field("observations", &self.step.data.len())
            .finish()
    }
}

impl Session {
    /// The session of policy `policy` of `spec` in replication `replication` (which selects
    /// the seeds: replication `r` suggests what run `r` would evaluate), with no observation
    /// yet. Builds the problem, known cost, models and policy as the run loop does; refuses
    /// an unknown policy (naming the closest) and problems with control sets.
    pub fn new(spec: &LoadedSpec, policy: &str, replication: usize) -> Result<Session> {
        let s = &spec.spec;
        let names: Vec<&str> = s.policies.iter().map(|p| p.name.as_str()).collect();
        let entry = names.iter().position(|n| *n == policy).ok_or_else(|| {
            let closest = cabo_core::registry::closest_of(policy, &names)
                .map(|c| format!("; did you mean {c:?}?"))
                .unwrap_or_default();
            Error::invalid(format!(
                "spec {:?} has no policy {policy:?}{closest} Policies: {}",
                s.name,
                names.join(", ")
            ))
        })?;
        let pseed = problem_seed(s.seed_name(), replication);
        let qseed = policy_seed(s.seed_name(), &s.policies[entry].name, replication);
        let setup = setup::build(spec, &s.policies[entry], replication, (pseed, qseed))?;
        if !setup.info.control_sets.is_empty() {
            return Err(Error::unsupported(format!(
                "{} has control sets: its queries fix some inputs and the environment draws \
                 the others, which observations made by hand do not record, so ask/tell does \
                 not support it",
                setup.info.name
            )));
        }
        let design = setup::initial_points(spec, &setup.info, pseed)?;
        let rules = Rules {
            problem_seed: pseed,
            policy_seed: qseed,
            design_len: design.len(),
            design_counts: s.initial_design.counts,
            max_evaluations: spec.max_evaluations(),
        };
        let fresh = (Dataset::new(spec.dim), BudgetState::new(s.budget.clone()));
        Ok(Session {
            step: Step::new(rules, fresh.0, fresh.1, 0),
            spec: spec.clone(),
            entry,
            replication,
            setup,
            design,
            told: Vec::new(),
            decided: None,
        })
    }

    /// The policy's name.
    pub fn policy(&self) -> &str {
        &self.entry().name
    }

    fn entry(&self) -> &PolicyEntry {
        &self.spec.spec.policies[self.entry]
    }

    /// The replication whose seeds the session uses.
    pub fn replication(&self) -> usize {
        self.replication
    }

    /// The problem's input dimension.
    pub fn dim(&self) -> usize {
        self.spec.dim
    }

    /// The inputs' names: the problem's own ([`cabo_core::ProblemInfo::input_names`]), or
    /// `x0`, `x1`, … where it gives none.
    pub fn input_names(&self) -> Vec<String> {
        let names = &self.setup.info.input_names;
        if names.len() == self.dim() {
            names.clone()
        } else {
            (0..self.dim()).map(|i| format!("x{i}")).collect()
        }
    }

    /// Each input's range in the problem's own units, `(low, high)`: the images of the unit
    /// cube's faces.
    pub fn native_bounds(&self) -> Vec<(f64, f64)> {
        let d = self.dim();
        let lo = self.setup.problem.to_native(&vec![0.0; d]);
        let hi = self.setup.problem.to_native(&vec![1.0; d]);
        lo.into_iter()
            .zip(hi)
            .map(|(a, b)| (a.min(b), a.max(b)))
            .collect()
    }

    /// Whether the spec's known cost (`cost:`) gives an observation's cost, so that
    /// [`Session::tell`] may be given none.
    pub fn cost_is_known(&self) -> bool {
        self.setup.cost.is_some()
    }

    /// The observations told so far, initial design included.
    pub fn observations(&self) -> &Dataset {
        &self.step.data
    }

    /// How many observations the initial design takes.
    pub fn initial_design_len(&self) -> usize {
        self.design.len()
    }

    /// Where the budget stands.
    pub fn budget(&self) -> &BudgetState {
        &self.step.budget
    }

    /// Tells the session an observation: `y` observed at `x` (in the problem's own units)
    /// at cost `cost`, which may be `None` where the spec's cost is known. Replays the
    /// decision the run loop makes before it (see the module documentation). Refuses a
    /// point of the wrong length or outside the problem's range, a `y` that is not finite
    /// and a cost that is not finite and positive.
    pub fn tell(&mut self, x: &[f64], y: f64, cost: Option<f64>) -> Result<()> {
        let unit = self.unit_point(x).map_err(|(i, m)| {
            let name = self.input_names().get(i).cloned().unwrap_or_default();
            Error::invalid(format!("input `{name}`: {m}"))
        })?;
        self.tell_unit(unit, y, cost)
    }

    /// `x` (the problem's own units) in the unit cube, or the index of the first bad
    /// coordinate and what is wrong with it.
    pub fn unit_point(&self, x: &[f64]) -> std::result::Result<Vec<f64>, (usize, String)> {
        let d = self.dim();
        if x.len() != d {
            return Err((
                x.len().min(d),
                format!("the point has {} coordinates, the problem {d}", x.len()),
            ));
        }
        if let Some(i) = x.iter().position(|v| !v.is_finite()) {
            return Err((i, format!("{} is not a finite number", x[i])));
        }
        let unit = self.setup.problem.native_to_unit(x);
        let bounds = self.native_bounds();
        if let Some(i) = unit.iter().position(|u| !(0.0..=1.0).contains(u)) {
            let (lo, hi) = bounds[i];
            return Err((
                i,
                format!("{} is outside the problem's range [{lo}, {hi}]", x[i]),
            ));
        }
        Ok(unit)
    }

    /// [`Session::tell`] with the point already in the unit cube.
    pub fn tell_unit(&mut self, unit: Vec<f64>, y: f64, cost: Option<f64>) -> Result<()> {
        if !y.is_finite() {
            return Err(Error::invalid(format!("y = {y} is not a finite number")));
        }
        let index = self.step.data.len();
        let cost = match (cost, &self.setup.cost) {
            (Some(c), _) => c,
            (None, Some(known)) => self.step.known_cost(known.as_ref(), &unit, index),
            (None, None) => {
                return Err(Error::invalid(
                    "the cost is missing: the spec has no known cost (`cost:`), so every \
                     observation needs its observed cost",
                ));
            }
        };
        if !(cost.is_finite() && cost > 0.0) {
            return Err(Error::invalid(format!(
                "cost = {cost}: a cost must be a finite positive number"
            )));
        }
        let phase = self.step.next_phase();
        if phase == Phase::Policy && !self.step.budget.exhausted() && self.decided.is_none() {
            // The decision the loop makes before this evaluation; its query is not needed.
            self.step.decide(&mut self.setup)?;
        }
        self.decided = None;
        let obs = Observation {
            query: Query::at(unit.clone()),
            outcome: Outcome::new(y, cost, unit.clone(), None),
            phase,
        };
        self.step.tell(&mut self.setup, obs)?;
        self.told.push(Told { unit, y, cost });
        Ok(())
    }

    /// The query the run loop would evaluate next, or [`Suggestion::Done`] once the budget
    /// is spent or the policy stops. Asking again without telling returns the same answer
    /// (the decision is made once).
    pub fn ask(&mut self) -> Result<Suggestion> {
        let index = self.step.data.len();
        if let Some(point) = self.design_point(index) {
            return Ok(point);
        }
        if self.step.budget.exhausted() {
            return Ok(Suggestion::Done(self.spent_message()));
        }
        self.step.check_cap(0)?;
        let iteration = self.step.next_iteration();
        if self.decided.is_none() {
            let (decision, diagnostics, _) = self.step.decide(&mut self.setup)?;
            if let Decision::Evaluate(q) = &decision {
                setup::check_query(q, &self.setup.info)?;
            }
            self.decided = Some((decision, diagnostics));
        }
        let (decision, diagnostics) = self.decided.as_ref().expect("the decision was just made");
        Ok(match decision {
            Decision::Stop(reason) => Suggestion::Done(format!("the policy stopped: {reason}")),
            Decision::Evaluate(q) => Suggestion::Evaluate(Suggested {
                x: self.setup.problem.to_native(&q.x),
                unit: q.x.clone(),
                phase: Phase::Policy,
                evaluation: index,
                iteration: Some(iteration),
                pending: 0,
                diagnostics: diagnostics.clone(),
            }),
        })
    }

    /// Evaluation `index` when it is a point of the initial design.
    fn design_point(&self, index: usize) -> Option<Suggestion> {
        let unit = self.design.get(index)?;
        Some(Suggestion::Evaluate(Suggested {
            x: self.setup.problem.to_native(unit),
            unit: unit.clone(),
            phase: Phase::Initial,
            evaluation: index,
            iteration: None,
            pending: 0,
            diagnostics: Diagnostics::new(),
        }))
    }

    /// What the budget says once it is spent.
    fn spent_message(&self) -> String {
        let b = &self.step.budget;
        match (b.budget.cost, b.budget.iterations) {
            (Some(c), _) if b.spent >= c => format!(
                "the budget is spent: the observations cost {} of the budget's {c}",
                ten_digits(b.spent)
            ),
            (_, Some(n)) => format!(
                "the budget is spent: {} policy evaluations of the budget's {n}",
                b.iterations
            ),
            _ => "the budget is spent".to_string(),
        }
    }

    /// Up to `count` points in sequence, as `count` workers would start them: the first is
    /// [`Session::ask`]'s; each later one is decided with the earlier ones pending, as the run
    /// loop decides with other workers' points in flight (`crate::pending`): the policy sees
    /// the observations followed by a fantasy of each pending point (the spec's
    /// [`Session::pending_rule`], the Kriging believer unless a policy or the spec says
    /// otherwise) and the budget charged with their costs (the known `c(x)` where the spec
    /// has `cost:`, else the cost model's expected cost, else the mean cost observed). The
    /// list ends early, with [`Suggestion::Done`], where the budget leaves no room or the
    /// policy stops. Initial-design points are the design's whatever is pending.
    ///
    /// The later points are decided on a copy of the session (made by replaying every
    /// observation into a fresh one), which first makes the decisions that started the
    /// points already pending, each with the earlier ones pending, so that the policy and
    /// models carry the state a run's would; this session is unchanged but for the first
    /// decision, made as by `ask`, and the real outcomes are told afterwards as usual.
    pub fn ask_many(&mut self, count: usize) -> Result<Vec<Suggestion>> {
        self.ask_while_pending(&[], count)
    }

    /// Up to `count` points to evaluate while the points `pending` (in the unit cube, see
    /// [`Session::unit_point`]) are being evaluated elsewhere: [`Session::ask_many`] with
    /// them in flight before the first suggestion, in the order given (they fill the initial
    /// design's places first where it is incomplete). The suggestions' `pending` counts the
    /// points in flight at each. With no pending point this is `ask_many`; with some, this
    /// session is left unchanged (its decisions are all made on the copy).
    pub fn ask_while_pending(
        &mut self,
        pending: &[Vec<f64>],
        count: usize,
    ) -> Result<Vec<Suggestion>> {
        let mut out = Vec::with_capacity(count);
        let mut in_flight = pending.to_vec();
        if count > 0 && pending.is_empty() {
            // The first point is this session's own decision, as `ask` makes it.
            let first = self.ask()?;
            let Suggestion::Evaluate(s) = &first else {
                return Ok(vec![first]);
            };
            in_flight.push(s.unit.clone());
            out.push(first);
        }
        if out.len() == count {
            return Ok(out);
        }
        let mut copy = self.replayed()?;
        for started in 0..in_flight.len() {
            copy.replay_start(&in_flight[..started])?;
        }
        while out.len() < count {
            match copy.ask_with(&in_flight)? {
                Suggestion::Evaluate(next) => {
                    in_flight.push(next.unit.clone());
                    out.push(Suggestion::Evaluate(next));
                }
                Suggestion::Done(reason) => {
                    let above = in_flight.len() - pending.len();
                    out.push(Suggestion::Done(format!(
                        "with {} evaluated, {reason}",
                        pending_phrase(pending.len(), above)
                    )));
                    break;
                }
            }
        }
        Ok(out)
    }

    /// What the session's policy takes a pending point to have returned (see
    /// [`cabo_core::PendingRule`]).
    pub fn pending_rule(&self) -> PendingRule {
        pending::rule_of(&self.spec.spec, self.entry())
    }

    /// The decision the run loop makes to start the next point while `earlier` are in
    /// flight, made for its effect on the policy's and models' state (its query is not
    /// used); none for a point of the initial design.
    fn replay_start(&mut self, earlier: &[Vec<f64>]) -> Result<()> {
        if self.step.data.len() + earlier.len() >= self.design.len() {
            self.decide_with(earlier)?;
        }
        Ok(())
    }

    /// The point the run loop would start next while `in_flight` (at least one) are being
    /// evaluated.
    fn ask_with(&mut self, in_flight: &[Vec<f64>]) -> Result<Suggestion> {
        let index = self.step.data.len() + in_flight.len();
        if let Some(point) = self.design_point(index) {
            return Ok(point);
        }
        self.step.check_cap(in_flight.len())?;
        let Some((decision, diagnostics, iteration)) = self.decide_with(in_flight)? else {
            return Ok(Suggestion::Done(
                "the budget is spent once they are: the observations and the points in flight \
                 (at their expected costs) leave no room for another evaluation"
                    .to_string(),
            ));
        };
        Ok(match decision {
            Decision::Stop(reason) => Suggestion::Done(format!("the policy stopped: {reason}")),
            Decision::Evaluate(q) => {
                setup::check_query(&q, &self.setup.info)?;
                Suggestion::Evaluate(Suggested {
                    x: self.setup.problem.to_native(&q.x),
                    unit: q.x,
                    phase: Phase::Policy,
                    evaluation: index,
                    iteration: Some(iteration),
                    pending: in_flight.len(),
                    diagnostics,
                })
            }
        })
    }

    /// The run loop's decision with `in_flight` pending (see `crate::pending::decide`), and
    /// its number: the policy decisions told and in flight, plus one. `None` where the budget
    /// leaves no room.
    fn decide_with(
        &mut self,
        in_flight: &[Vec<f64>],
    ) -> Result<Option<(Decision, Diagnostics, usize)>> {
        let design_left = self.design.len().saturating_sub(self.step.data.len());
        let decisions_in_flight = in_flight.len().saturating_sub(design_left);
        let iteration = self.step.next_iteration() + decisions_in_flight;
        let queries: Vec<Query> = in_flight.iter().map(|u| Query::at(u.clone())).collect();
        let view = Pending {
            queries: queries.iter().collect(),
            rule: self.pending_rule(),
            wall_time: false,
        };
        let seeds = (self.step.policy_seed(), iteration);
        let decided = pending::decide(
            &mut self.setup,
            &self.step.data,
            &self.step.budget,
            &view,
            seeds,
        )?;
        Ok(decided.map(|(decision, diagnostics, _)| (decision, diagnostics, iteration)))
    }

    /// A fresh session told the same observations.
    fn replayed(&self) -> Result<Session> {
        let mut s = Session::new(&self.spec, self.policy(), self.replication)?;
        for t in &self.told {
            s.tell_unit(t.unit.clone(), t.y, Some(t.cost))?;
        }
        Ok(s)
    }
}

/// The points a list of suggestions was chosen with: `pending` ones given, `above` ones
/// suggested before the last, as "the 2 point(s) above", "the 1 pending point(s)" or both.
fn pending_phrase(pending: usize, above: usize) -> String {
    match (pending, above) {
        (0, n) => format!("the {n} point(s) above"),
        (p, 0) => format!("the {p} pending point(s)"),
        (p, n) => format!("the {p} pending point(s) and the {n} above"),
    }
}

/// A sum of costs as a person writes it: rounded to ten significant digits, so that the
/// floating-point residue of adding 4.1 three times prints as 12.3, not 12.300000000000002.
fn ten_digits(v: f64) -> String {
    format!("{v:.9e}")
        .parse::<f64>()
        .map_or_else(|_| v.to_string(), |r| r.to_string())
}

#[cfg(test)]
mod tests {
    #[test]
    fn spent_costs_print_without_floating_point_residue() {
        assert_eq!(super::ten_digits(4.1 + 4.1 + 4.1), "12.3");
        assert_eq!(super::ten_digits(12.300000000000002), "12.3");
        assert_eq!(super::ten_digits(0.1 + 0.2), "0.3");
        assert_eq!(super::ten_digits(1.0 / 3.0), "0.3333333333");
        assert_eq!(super::ten_digits(150.0), "150");
    }
}
