//! One run: initial design, then fit → decide → evaluate → record until the budget is
//! exhausted or the policy stops, deterministic given its seeds. The loop keeps the run's
//! state; what it reports (records, times, checkpoints, progress) goes to its sinks
//! (`sink.rs`).

use crate::checkpoint::{Checkpoint, Pacing, RunIdentity};
use crate::cpu_time::thread_cpu_seconds;
use crate::journal::Journal;
use crate::lifecycle;
use crate::pending::{self, Pending};
use crate::pool::Pool;
use crate::seeds::RunId;
use crate::setup::{Setup, build, build_problem, check_query, initial_points};
use crate::sink::{Record, RecordFiles, Scheduled, Sinks, Times, Unresumable};
use crate::step::{Rules, Step};
use crate::store::{self, RunFiles, RunSummary};
use crate::workers::{Answered, DecisionTimes, InFlight, Schedule};
use cabo_core::{
    BudgetState, Dataset, Decision, Diagnostics, Error, Observation, Outcome, PendingRule, Phase,
    Query, Result,
};
use cabo_spec::spec::workers::BudgetClock;
use cabo_spec::spec::{LoadedSpec, PolicyEntry};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// Running state of the record stream.
struct Tracker {
    best_value: Option<f64>,
    optimum: Option<f64>,
}

impl Tracker {
    fn update(&mut self, value: Option<f64>) -> (Option<f64>, Option<f64>) {
        if let Some(v) = value {
            self.best_value = Some(self.best_value.map_or(v, |b| b.max(v)));
        }
        (self.best_value, self.regret())
    }
}

/// A run in progress.
struct Run<'a> {
    spec: &'a LoadedSpec,
    setup: Setup,
    /// The observations, the budget and the decisions, moved on by the run's rules.
    step: Step,
    tracker: Tracker,
    /// Where the run's records, times, checkpoints and progress go.
    sinks: Sinks,
    /// The initial design's points still to evaluate (all of them in a fresh run).
    design: Vec<Vec<f64>>,
    /// The run its checkpoints belong to.
    identity: RunIdentity,
    /// The evaluations answered so far, for a problem that must never be asked a recorded
    /// query again (see `journal.rs`).
    journal: Option<Journal>,
    /// The workers and the evaluations in flight.
    schedule: Schedule,
    /// What the policy takes pending points to return.
    pending_rule: PendingRule,
    /// Whether the budget counts wall time (the makespan) rather than cost.
    wall_time: bool,
    /// Where a wall-time budget's clock started (`None`: the budget counts cost, or the
    /// initial design is still running).
    budget_origin: Option<f64>,
    /// Why the policy stopped the run, once it has (evaluations in flight still finish).
    stopped: Option<String>,
    /// Real workers, for a problem evaluated by other programs with several workers.
    pool: Option<Pool>,
    /// When each evaluation sent to a real worker was sent.
    sent: BTreeMap<usize, Instant>,
}

/// Where an evaluation starts and what it evaluates.
struct Started {
    worker: usize,
    evaluation: usize,
    query: Query,
    phase: Phase,
}

/// An answer that finishes after its cost.
fn answered(outcome: Outcome, start: f64, journalled: Option<u64>) -> Answered {
    Answered {
        finish: start + outcome.cost,
        outcome,
        journalled,
    }
}

/// What became of a policy decision.
enum Dispatched {
    /// Its evaluation started.
    Started,
    /// The budget, charged with the points in flight, has no room for it.
    NoRoom,
    /// The policy stopped the run, for this reason.
    Stopped(String),
}

impl Run<'_> {
    /// Gives a problem evaluated by another program its log file and opens the run's
    /// evaluation journal (before the first evaluation of this attempt).
    /// With several workers, starts one real worker each, its own instance of the problem
    /// and its own program (see `pool.rs`).
    fn attach(&mut self, files: &RunFiles) -> Result<()> {
        let Some(external) = self.setup.problem.external() else {
            return Ok(());
        };
        external.set_log_file(&files.log);
        self.journal = Some(Journal::open(&files.evaluations, &self.identity)?);
        let k = self.schedule.count();
        if k > 1 {
            let seed = self.step.problem_seed();
            let replication = self.identity.replication;
            let problems = (0..k)
                .map(|_| {
                    let mut problem = build_problem(self.spec, replication, seed)?;
                    if let Some(program) = problem.external() {
                        program.set_log_file(&files.log);
                    }
                    Ok(problem)
                })
                .collect::<Result<Vec<_>>>()?;
            self.pool = Some(Pool::new(problems));
        }
        Ok(())
    }

    /// The problem's answer to evaluation `index`. A program's comes from the journal when
    /// an earlier attempt of the run recorded it for the same query, else from the program
    /// (and is journalled).
    fn answer(&mut self, query: &Query, seed: u64, index: usize) -> Result<Outcome> {
        let (Some(journal), Some(external)) =
            (self.journal.as_mut(), self.setup.problem.external())
        else {
            return self.setup.problem.evaluate(query, seed);
        };
        if let Some(recorded) = journal.replay(index, query)? {
            return Ok(recorded);
        }
        let outcome = external.evaluate_in_run(query, seed, index)?;
        journal.append(index, query, &outcome)?;
        Ok(outcome)
    }

    /// Evaluation number `index` of the run (in the order evaluations start) at `query`,
    /// checked; the caller tells it to the step when it finishes.
    fn evaluate(&mut self, query: &Query, index: usize) -> Result<Outcome> {
        let seed = self.step.seeds(index).evaluation;
        let outcome = self.answer(query, seed, index)?;
        self.checked(outcome, index)
    }

    /// Evaluation `index`'s outcome as the run takes it: the known cost's where the spec
    /// has one, and refused unless y is finite and the cost positive.
    fn checked(&self, mut outcome: Outcome, index: usize) -> Result<Outcome> {
        if let Some(c) = &self.setup.cost {
            outcome.cost = self.step.known_cost(c.as_ref(), &outcome.x, index);
        }
        if !(outcome.y.is_finite() && outcome.cost.is_finite() && outcome.cost > 0.0) {
            return Err(Error::numerical(format!(
                "evaluation {index}: the problem returned y = {}, cost = {} (need a finite y \
                 and a positive cost)",
                outcome.y, outcome.cost
            )));
        }
        Ok(outcome)
    }

    fn record(
        &mut self,
        obs: &Observation,
        diagnostics: Diagnostics,
        schedule: Option<Scheduled<'_>>,
    ) -> Result<()> {
        let iter = self.step.data.len() - 1;
        let (best_value, simple_regret) = self.tracker.update(obs.outcome.value);
        // The history's metrics, then what this evaluation reported itself.
        let mut metrics = self.setup.problem.metrics(self.step.data.observations());
        metrics.extend(obs.outcome.metrics.iter().map(|(k, v)| (k.clone(), *v)));
        let rec = Record {
            iter,
            phase: obs.phase,
            control_set: obs.query.control_set,
            x: &obs.outcome.x,
            y: obs.outcome.y,
            cost: obs.outcome.cost,
            cum_cost: self.step.budget.spent,
            schedule,
            best_y: self.step.data.best_y().unwrap_or(f64::NEG_INFINITY),
            value: obs.outcome.value,
            best_value,
            simple_regret,
            metrics,
            diagnostics,
        };
        self.sinks.evaluated(&rec, &self.step.budget)
    }

    /// Runs to the end; `None` when cancelled or paused (after saving a checkpoint).
    ///
    /// Free workers start evaluations (the initial design's points, then, once the whole
    /// design is observed, policy decisions) until none is free; then the next evaluation
    /// to finish is told to the run; and so on until nothing is in flight and nothing may
    /// start. With one worker this is decide, evaluate, tell, in turn.
    fn run(&mut self, cancel: &AtomicBool, pacing: Pacing) -> Result<Option<String>> {
        let mut decided_now = 0;
        let mut saved = Instant::now();
        self.redispatch()?;
        loop {
            while let Some(worker) = self.schedule.free_worker() {
                if !self.design.is_empty() {
                    let x = self.design.remove(0);
                    self.start_design(worker, x)?;
                    continue;
                }
                if self.schedule.design_in_flight() || self.stopped.is_some() {
                    break;
                }
                if self.schedule.in_flight.is_empty() && self.budget_seen().exhausted() {
                    break;
                }
                if cancel.load(Ordering::Relaxed) || pacing.pause_after == Some(decided_now) {
                    self.save_checkpoint()?;
                    return Ok(None);
                }
                self.step.check_cap(self.schedule.in_flight.len())?;
                match self.decide_and_start(worker)? {
                    Dispatched::Started => decided_now += 1,
                    Dispatched::NoRoom => break,
                    Dispatched::Stopped(reason) => self.stopped = Some(reason),
                }
            }
            let Some(done) = self.next_finished()? else {
                break;
            };
            let policy = done.phase == Phase::Policy;
            self.finish(done)?;
            if policy && saved.elapsed() >= pacing.every {
                self.save_checkpoint()?;
                saved = Instant::now();
            }
        }
        Ok(Some(
            self.stopped
                .take()
                .unwrap_or_else(|| "budget exhausted".to_string()),
        ))
    }

    /// The number the next evaluation to start takes.
    fn next_evaluation(&self) -> usize {
        self.step.data.len() + self.schedule.in_flight.len()
    }

    /// Starts the initial design's point `x` on `worker`.
    fn start_design(&mut self, worker: usize, x: Vec<f64>) -> Result<()> {
        let started = Started {
            worker,
            evaluation: self.next_evaluation(),
            query: Query::at(x),
            phase: Phase::Initial,
        };
        self.start(started, Vec::new(), Diagnostics::new(), None)
    }

    /// Starts an evaluation: made now on simulated workers (it finishes after its cost),
    /// found in the journal or sent to its worker's program on real ones.
    fn start(
        &mut self,
        started: Started,
        pending: Vec<usize>,
        diagnostics: Diagnostics,
        times: Option<DecisionTimes>,
    ) -> Result<()> {
        let Started {
            worker,
            evaluation,
            query,
            phase,
        } = started;
        let start = self.schedule.clock;
        let answer = match self.pool {
            None => {
                let outcome = self.evaluate(&query, evaluation)?;
                Some(answered(outcome, start, None))
            }
            Some(_) => self.dispatch(worker, evaluation, &query, start)?,
        };
        self.schedule.start(InFlight {
            worker,
            evaluation,
            query,
            phase,
            start,
            answer,
            pending,
            diagnostics,
            times,
        });
        Ok(())
    }

    /// On real workers: evaluation `evaluation`'s answer where the journal holds it (an
    /// earlier attempt's, replayed in the order it arrived), else `None` and the request
    /// sent to `worker`.
    fn dispatch(
        &mut self,
        worker: usize,
        evaluation: usize,
        query: &Query,
        start: f64,
    ) -> Result<Option<Answered>> {
        if let Some(journal) = self.journal.as_mut()
            && let Some((at, outcome)) = journal.recorded(evaluation, query)?
        {
            return Ok(Some(answered(
                self.checked(outcome, evaluation)?,
                start,
                Some(at),
            )));
        }
        let seed = self.step.seeds(evaluation).evaluation;
        let pool = self.pool.as_ref().expect("real workers dispatch");
        pool.send(worker, evaluation, query, seed)?;
        self.sent.insert(evaluation, Instant::now());
        Ok(None)
    }

    /// On real workers, after a resume: the evaluations in flight at the checkpoint are
    /// taken from the journal where an answer arrived before the run stopped, and asked for
    /// again otherwise.
    fn redispatch(&mut self) -> Result<()> {
        if self.pool.is_none() {
            return Ok(());
        }
        let in_flight = std::mem::take(&mut self.schedule.in_flight);
        let next = self.step.data.len() + in_flight.len();
        if let Some(journal) = self.journal.as_mut() {
            let flying: Vec<usize> = in_flight.iter().map(|e| e.evaluation).collect();
            journal.forget(|e| e < next && !flying.contains(&e));
        }
        for mut e in in_flight {
            e.answer = self.dispatch(e.worker, e.evaluation, &e.query, e.start)?;
            self.schedule.start(e);
        }
        Ok(())
    }

    /// The next evaluation to finish, answered and out of flight; `None` with nothing in
    /// flight. Simulated workers finish in order of time; real ones replay the journal's
    /// answers first, then take the answers in the order they arrive, journalling each.
    fn next_finished(&mut self) -> Result<Option<InFlight>> {
        let Some(pool) = &self.pool else {
            return Ok(self.schedule.next_finished());
        };
        if self.schedule.in_flight.is_empty() {
            return Ok(None);
        }
        if let Some(i) = self.schedule.next_journalled() {
            return Ok(Some(self.schedule.finished(i)));
        }
        let arrived = pool.next()?;
        let raw = arrived.outcome?;
        let i = (self.schedule.position(arrived.evaluation))
            .expect("a worker answers an evaluation in flight");
        let query = self.schedule.in_flight[i].query.clone();
        if let Some(journal) = self.journal.as_mut() {
            journal.append_arrival(arrived.evaluation, &query, &raw)?;
        }
        let outcome = self.checked(raw, arrived.evaluation)?;
        let took = (self.sent.remove(&arrived.evaluation)).map(|sent| sent.elapsed().as_secs_f64());
        let e = &mut self.schedule.in_flight[i];
        e.answer = Some(answered(outcome, e.start, None));
        if let (Some(t), Some(took)) = (&mut e.times, took) {
            // The program's time is the run's, as with one worker.
            t.evaluate_s += took;
            t.cpu_s = t.cpu_s.map(|c| c + took);
        }
        Ok(Some(self.schedule.finished(i)))
    }

    /// The budget as a decision sees it: with a wall-time budget, spent is the clock since
    /// the budget started.
    fn budget_seen(&self) -> BudgetState {
        let mut seen = self.step.budget.clone();
        if let Some(origin) = self.wall_time_origin() {
            seen.spent = self.schedule.clock - origin;
        }
        seen
    }

    /// Where a wall-time budget's clock started, or `None` for a cost budget.
    fn wall_time_origin(&self) -> Option<f64> {
        self.wall_time
            .then(|| self.budget_origin.unwrap_or(self.schedule.clock))
    }

    /// One policy decision with the evaluations in flight pending, and, unless the policy
    /// stops or the budget has no room, its evaluation started on `worker`.
    fn decide_and_start(&mut self, worker: usize) -> Result<Dispatched> {
        let iteration = self.step.next_iteration() + self.schedule.pending_decisions();
        let started = Instant::now();
        let cpu_started = thread_cpu_seconds();
        let in_flight = std::mem::take(&mut self.schedule.in_flight);
        let view = Pending {
            queries: in_flight.iter().map(|e| &e.query).collect(),
            rule: self.pending_rule,
            wall_time: self.wall_time_origin().is_some(),
        };
        let budget = self.budget_seen();
        let decided = pending::decide(
            &mut self.setup,
            &self.step.data,
            &budget,
            &view,
            (self.step.policy_seed(), iteration),
        );
        let pending: Vec<usize> = in_flight.iter().map(|e| e.evaluation).collect();
        self.schedule.in_flight = in_flight;
        let Some((decision, diagnostics, fit_s)) =
            decided.map_err(|e| blame_magnitude(e, &self.step.data))?
        else {
            return Ok(Dispatched::NoRoom);
        };
        let decide_s = started.elapsed().as_secs_f64() - fit_s;
        let query = match decision {
            Decision::Stop(reason) => return Ok(Dispatched::Stopped(reason)),
            Decision::Evaluate(q) => q,
        };
        check_query(&query, &self.setup.info)?;
        let started = Instant::now();
        let at = Started {
            worker,
            evaluation: self.next_evaluation(),
            query,
            phase: Phase::Policy,
        };
        let external = self.setup.problem.external().is_some();
        // On simulated workers the evaluation is made here; a real worker's program adds its
        // time when it answers (`next_finished`).
        self.start(at, pending, diagnostics, None)?;
        let evaluate_s = started.elapsed().as_secs_f64();
        let mut cpu_s = cpu_started.zip(thread_cpu_seconds()).map(|(a, b)| b - a);
        if external {
            // Such a problem evaluates in another process (an external program): its wall
            // time is the run's time there, which `status` counts with the thread's CPU time.
            cpu_s = cpu_s.map(|c| c + evaluate_s);
        }
        let times = DecisionTimes {
            fit_s,
            decide_s,
            evaluate_s,
            cpu_s,
        };
        let last = self.schedule.in_flight.last_mut();
        last.expect("the evaluation just started").times = Some(times);
        Ok(Dispatched::Started)
    }

    /// Tells the run an evaluation that finished, and records it (and its decision's times).
    fn finish(&mut self, done: InFlight) -> Result<()> {
        let InFlight {
            worker,
            evaluation,
            query,
            phase,
            start,
            answer,
            pending,
            mut diagnostics,
            times,
        } = done;
        let Answered {
            outcome, finish, ..
        } = answer.expect("a finished evaluation is answered");
        let observation = Observation {
            query,
            outcome,
            phase,
        };
        self.step.tell(&mut self.setup, observation.clone())?;
        let sequential = self.schedule.count() == 1;
        if sequential && observation.phase == Phase::Policy {
            // One worker: the policy's state after `observe` belongs to this decision (with
            // several, to whichever it made last, so only the decision's own are kept).
            diagnostics.extend(self.setup.policy.diagnostics());
        }
        if observation.phase == Phase::Initial && self.design_complete() {
            self.budget_origin = Some(match self.spec.spec.initial_design.counts {
                true => 0.0,
                false => finish,
            });
        }
        let schedule = (!sequential).then_some(Scheduled {
            worker,
            evaluation,
            start,
            finish,
            pending: &pending,
        });
        self.record(&observation, diagnostics, schedule)?;
        if let Some(t) = times {
            self.sinks.timed(&Times {
                iter: self.step.data.len() - 1,
                fit_s: t.fit_s,
                decide_s: t.decide_s,
                evaluate_s: t.evaluate_s,
                cpu_s: t.cpu_s,
            })?;
        }
        Ok(())
    }

    /// Whether every point of the initial design has been observed.
    fn design_complete(&self) -> bool {
        self.design.is_empty() && !self.schedule.design_in_flight()
    }

    /// The run's state between decisions, or `None` when a plugin of it cannot resume.
    fn checkpoint(&self) -> Result<Option<Checkpoint>> {
        let Some(policy) = self.setup.policy.checkpoint()? else {
            return Ok(None);
        };
        let (Some(model), Some(cost_model)) = (
            save_from(self.setup.model.as_ref(), |m| m.checkpoint())?,
            save_from(self.setup.cost_model.as_ref(), |m| m.checkpoint())?,
        ) else {
            return Ok(None);
        };
        Ok(Some(Checkpoint {
            run: self.identity.clone(),
            decisions: self.step.decisions,
            offset: self.step.design_len(),
            evaluations: self.step.data.len(),
            data: self.step.data.clone(),
            spent: self.step.budget.spent,
            budget_iterations: self.step.budget.iterations,
            best_value: self.tracker.best_value,
            // Set by the record files' sink, which knows how far they go.
            records_len: 0,
            records_sha256: None,
            times_len: 0,
            policy,
            model,
            cost_model,
            clock: self.schedule.clock,
            budget_origin: self.budget_origin,
            in_flight: self.schedule.in_flight.clone(),
        }))
    }

    fn save_checkpoint(&mut self) -> Result<()> {
        match self.checkpoint()? {
            Some(c) => self.sinks.checkpoint(c),
            None => Ok(()),
        }
    }

    fn summary(&self, stop_reason: String, id: RunId) -> RunSummary {
        let initial = self
            .step
            .data
            .observations()
            .iter()
            .filter(|o| o.phase == Phase::Initial)
            .count();
        RunSummary {
            spec_fingerprint: self.identity.fingerprint.clone(),
            policy: self.spec.spec.policies[id.policy].name.clone(),
            replication: id.replication,
            problem_seed: self.step.problem_seed(),
            policy_seed: self.step.policy_seed(),
            initial_evaluations: initial,
            policy_evaluations: self.step.data.len() - initial,
            budget_spent: self.step.budget.spent,
            overshoot: self.budget_seen().overshoot(),
            stop_reason,
            best_y: self.step.data.best_y().unwrap_or(f64::NEG_INFINITY),
            best_value: self.tracker.best_value,
            simple_regret: self.tracker.regret(),
            metrics: self.setup.problem.metrics(self.step.data.observations()),
            makespan: (self.schedule.count() > 1).then_some(self.schedule.clock),
            records: None,
        }
    }
}

impl Tracker {
    fn regret(&self) -> Option<f64> {
        match (self.optimum, self.best_value) {
            (Some(o), Some(b)) => Some((o - b).max(0.0)),
            _ => None,
        }
    }
}

/// Executes one run and writes its files; returns its summary, or `None` when `cancel` was
/// set or `pacing` paused it (both checked between decisions, so an interrupted sweep stops
/// promptly). The run leaves a checkpoint then, and a later invocation resumes it from there
/// (see [`crate::checkpoint`]); so does one after a crash, from the last periodic checkpoint.
/// A problem that is stopped while an evaluation waits ([`Error::Interrupted`]) also gives
/// `None`: that run resumes from its last periodic checkpoint, its journal replaying the
/// evaluations answered since.
///
/// `parent` is the sweep's span: the run's own span (carrying its progress bar when the
/// command line shows bars) is opened under it, since rayon workers do not inherit spans.
pub fn execute(
    spec: &LoadedSpec,
    id: RunId,
    spec_dir: &Path,
    fingerprint: &str,
    cancel: &AtomicBool,
    pacing: Pacing,
    parent: &tracing::Span,
) -> Result<Option<Executed>> {
    let s = &spec.spec;
    let entry = &s.policies[id.policy];
    let span = run_span(spec, id, parent);
    let _entered = span.enter();
    let files = RunFiles::new(spec_dir, &entry.name, id.replication);
    let slot = store::Slot::new(s.seed_name(), fingerprint, &entry.name, id.replication);
    lifecycle::prepare(spec_dir, &files, &slot)?;
    let (pseed, qseed) = (slot.problem_seed, slot.policy_seed);
    let identity = RunIdentity {
        fingerprint: fingerprint.to_string(),
        policy: entry.name.clone(),
        replication: id.replication,
    };
    let resumed = resume(spec, entry, &files, &identity, (pseed, qseed), &span)?;
    let (mut run, resumed_after) = match resumed {
        Some(run) => {
            let decisions = run.step.decisions;
            tracing::info!(decisions, "run resumed from its checkpoint");
            (run, Some(decisions))
        }
        None => {
            let _ = fs::remove_file(&files.checkpoint);
            tracing::debug!("run started");
            let sinks = Sinks::new(RecordFiles::create(&files)?, span.clone());
            let setup = build(spec, entry, id.replication, (pseed, qseed))?;
            let design = initial_points(spec, &setup.info, pseed)?;
            let state = Resumed {
                data: Dataset::new(spec.dim),
                budget: BudgetState::new(s.budget.clone()),
                best_value: None,
                offset: design.len(),
                budget_origin: design.is_empty().then_some(0.0),
                design,
                decisions: 0,
                clock: 0.0,
                in_flight: Vec::new(),
            };
            (
                Run::new(spec, setup, state, sinks, &identity, (pseed, qseed)),
                None,
            )
        }
    };
    run.attach(&files)?;
    let reason = match run.run(cancel, pacing) {
        Ok(Some(reason)) => reason,
        Ok(None) => return Ok(None),
        // Stopped while an evaluation waited (an external program's answer or retry): the
        // run is mid-decision, so no checkpoint is saved; it resumes from its last one, and
        // its journal replays every evaluation that was answered.
        Err(Error::Interrupted(why)) => {
            tracing::info!(%why, "run interrupted during an evaluation");
            return Ok(None);
        }
        Err(e) => return Err(e),
    };
    let mut summary = run.summary(reason, id);
    summary.records = Some(run.sinks.seal()?);
    tracing::info!(
        evaluations = summary.policy_evaluations,
        spent = summary.budget_spent,
        stop = %summary.stop_reason,
        "run complete"
    );
    lifecycle::mark_complete(&files, &summary)?;
    Ok(Some(Executed {
        summary,
        resumed_after,
    }))
}

/// A run [`execute`] finished.
#[derive(Debug, Clone)]
pub struct Executed {
    /// What the run left in `rep-<r>.json`.
    pub summary: RunSummary,
    /// The decisions restored from a checkpoint, when the run resumed from one.
    pub resumed_after: Option<usize>,
}

/// The run's span, with a progress bar of budget consumed when bars are shown.
fn run_span(spec: &LoadedSpec, id: RunId, parent: &tracing::Span) -> tracing::Span {
    let s = &spec.spec;
    let span = tracing::info_span!(
        parent: parent,
        "run",
        spec = %s.name,
        policy = %s.policies[id.policy].name,
        rep = id.replication
    );
    if !span.is_disabled() {
        use tracing_indicatif::span_ext::IndicatifSpanExt;
        let style = tracing_indicatif::style::ProgressStyle::with_template(
            "  {span_fields} {bar:30.cyan/blue} {msg}",
        )
        .expect("the template is valid");
        span.pb_set_style(&style);
        span.pb_set_length(match (s.budget.cost, s.budget.iterations) {
            (Some(_), _) => 1000,
            (None, Some(n)) => n as u64,
            (None, None) => 0,
        });
    }
    span
}

/// Where a run stands: fresh, or as a checkpoint left it.
struct Resumed {
    data: Dataset,
    budget: BudgetState,
    best_value: Option<f64>,
    /// The initial design's points still to evaluate (none once a checkpoint is saved).
    design: Vec<Vec<f64>>,
    /// The initial design's size.
    offset: usize,
    decisions: usize,
    /// The simulated clock, where a wall-time budget started and what is in flight.
    clock: f64,
    budget_origin: Option<f64>,
    in_flight: Vec<InFlight>,
}

impl<'a> Run<'a> {
    fn new(
        spec: &'a LoadedSpec,
        setup: Setup,
        state: Resumed,
        sinks: Sinks,
        identity: &RunIdentity,
        (problem_seed, policy_seed): (u64, u64),
    ) -> Self {
        let rules = Rules {
            problem_seed,
            policy_seed,
            design_len: state.offset,
            design_counts: spec.spec.initial_design.counts,
            max_evaluations: spec.max_evaluations(),
        };
        let s = &spec.spec;
        let entry = s.policies.iter().find(|p| p.name == identity.policy);
        let workers = entry.map_or(&s.workers, |e| e.workers_in(s));
        let pending_rule = entry.map_or(PendingRule::KrigingBeliever, |e| pending::rule_of(s, e));
        Run {
            schedule: Schedule::new(workers.count, workers.mode, state.clock, state.in_flight),
            pending_rule,
            wall_time: workers.budget == BudgetClock::WallTime,
            budget_origin: state.budget_origin,
            stopped: None,
            pool: None,
            sent: BTreeMap::new(),
            spec,
            tracker: Tracker {
                best_value: state.best_value,
                optimum: setup.problem.optimum(),
            },
            setup,
            step: Step::new(rules, state.data, state.budget, state.decisions),
            sinks,
            design: state.design,
            identity: identity.clone(),
            journal: None,
        }
    }
}

/// The run as its checkpoint left it, if it has a usable one: the plugins rebuilt and
/// restored, the record files cut back to the checkpoint and open for appending.
fn resume<'a>(
    spec: &'a LoadedSpec,
    entry: &PolicyEntry,
    files: &RunFiles,
    identity: &RunIdentity,
    (pseed, qseed): (u64, u64),
    span: &tracing::Span,
) -> Result<Option<Run<'a>>> {
    let Some(c) = Checkpoint::load(&files.checkpoint, identity) else {
        return Ok(None);
    };
    let mut setup = build(spec, entry, identity.replication, (pseed, qseed))?;
    let restored = setup.policy.restore(&c.policy).and_then(|()| {
        restore_into(setup.model.as_ref(), c.model.as_ref(), |m, st| {
            m.restore(st)
        })?;
        restore_into(setup.cost_model.as_ref(), c.cost_model.as_ref(), |m, st| {
            m.restore(st)
        })
    });
    if let Err(e) = restored {
        tracing::warn!(error = %e, "checkpoint does not fit the current plugins; starting again");
        return Ok(None);
    }
    let records = match RecordFiles::reopen(files, &c) {
        Ok(records) => records,
        Err(Unresumable::Short) => {
            tracing::warn!("record files shorter than their checkpoint; starting again");
            return Ok(None);
        }
        Err(Unresumable::Edited) => {
            tracing::warn!(path = %files.records.display(),
                "records edited since their checkpoint was saved (they differ from what it \
                 saw): checkpoint discarded, the run starts again");
            return Ok(None);
        }
    };
    let mut budget = BudgetState::new(spec.spec.budget.clone());
    budget.spent = c.spent;
    budget.iterations = c.budget_iterations;
    let state = Resumed {
        data: c.data,
        budget,
        best_value: c.best_value,
        design: Vec::new(),
        offset: c.offset,
        decisions: c.decisions,
        clock: c.clock,
        budget_origin: c.budget_origin,
        in_flight: c.in_flight,
    };
    Ok(Some(Run::new(
        spec,
        setup,
        state,
        Sinks::new(records, span.clone()),
        identity,
        (pseed, qseed),
    )))
}

/// The saved state of a plugin slot (a model or a cost model): `Some(None)` for an empty
/// slot, `None` when its plugin cannot resume (nor, then, can the run).
fn save_from<T: ?Sized>(
    slot: Option<&RefCell<Box<T>>>,
    save: impl FnOnce(&T) -> Result<Option<cabo_core::PluginState>>,
) -> Result<Option<Option<cabo_core::PluginState>>> {
    match slot {
        Some(m) => Ok(save(m.borrow().as_ref())?.map(Some)),
        None => Ok(Some(None)),
    }
}

/// Restores a plugin slot (a model or a cost model) from its saved state; a run whose slot
/// and saved state disagree (one present, the other not) cannot resume.
fn restore_into<T: ?Sized>(
    slot: Option<&RefCell<Box<T>>>,
    state: Option<&cabo_core::PluginState>,
    restore: impl FnOnce(&mut T, &cabo_core::PluginState) -> Result<()>,
) -> Result<()> {
    match (slot, state) {
        (Some(m), Some(st)) => restore(m.borrow_mut().as_mut(), st),
        (None, None) => Ok(()),
        _ => Err(Error::invalid(
            "checkpoint: the run's models differ from the saved ones",
        )),
    }
}

/// A failed decision's error, with the observation that explains it when the data hold a
/// value or cost too large to model: the failure itself (a fit or an acquisition "not
/// finite at any start") surfaces far from the evaluation at fault.
fn blame_magnitude(e: Error, data: &Dataset) -> Error {
    let Some((index, what, v)) = data.first_beyond_modelled_magnitude() else {
        return e;
    };
    let failure = match e {
        Error::Numerical(m) => m,
        other => other.to_string(),
    };
    Error::numerical(format!(
        "evaluation {index} returned {what} = {v:e}, beyond the ±{:e} that models can fit \
         (they standardise what they fit, and the squares of larger values are not finite): \
         rescale the problem's output; the decision after it failed with: {failure}",
        cabo_core::MAX_MODELLED_MAGNITUDE
    ))
}
