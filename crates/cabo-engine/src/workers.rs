//! Workers: `k` evaluations in flight, each occupying its worker for its cost.
//!
//! **Simulated**, the clock is the costs': an evaluation is made when it starts (its
//! outcome, and with it its duration, is known then) and told to the policy when it
//! finishes. Finishes are taken in order of time, ties by worker id, and a freed worker is
//! the lowest-numbered free one, so the schedule depends on nothing but the costs: the same
//! spec and seeds give the same order on any machine and thread count. With one worker the
//! schedule is the sequential loop: each evaluation finishes before the next decision.
//!
//! **Real** workers (a problem evaluated by other programs, `crate::pool`) answer in the
//! order their programs do; an evaluation still finishes at its start plus its cost on the
//! clock, which moves to the latest finish told.

use cabo_core::{Diagnostics, Outcome, Phase, Query};
use cabo_spec::spec::workers::WorkerMode;
use serde::{Deserialize, Serialize};

/// An evaluation a worker is running.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct InFlight {
    /// The worker running it (0-based).
    pub worker: usize,
    /// Its number in the order evaluations started, the initial design's first; its seeds
    /// derive from it.
    pub evaluation: usize,
    /// What it evaluates.
    pub query: Query,
    /// Whether it is a point of the initial design or a policy decision.
    pub phase: Phase,
    /// The clock when it started.
    pub start: f64,
    /// What it returns, once known: at its start on simulated workers, when it arrives on
    /// real ones.
    pub answer: Option<Answered>,
    /// The evaluations in flight when it was decided (their numbers).
    pub pending: Vec<usize>,
    /// What the decision reported (empty for the initial design).
    pub diagnostics: Diagnostics,
    /// The decision's times, for a policy decision.
    pub times: Option<DecisionTimes>,
}

/// An evaluation's answer.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Answered {
    /// The outcome, its cost checked (and the known cost's where the spec has one).
    pub outcome: Outcome,
    /// The clock when it finishes: its start plus its cost.
    pub finish: f64,
    /// For an answer replayed from the run's journal, where it stands there (the order the
    /// answers arrived in).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub journalled: Option<u64>,
}

/// Wall and CPU times of one decision and its evaluation (see `sink::Times`).
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct DecisionTimes {
    /// Seconds fitting models.
    pub fit_s: f64,
    /// Seconds deciding, fits excluded.
    pub decide_s: f64,
    /// Seconds evaluating.
    pub evaluate_s: f64,
    /// CPU seconds of the run's thread over all three, where the platform says.
    pub cpu_s: Option<f64>,
}

/// The workers, the simulated clock and the evaluations in flight.
#[derive(Debug, Clone)]
pub(crate) struct Schedule {
    count: usize,
    mode: WorkerMode,
    /// The clock: the finish time of the last evaluation told.
    pub clock: f64,
    /// The evaluations in flight, in the order they started.
    pub in_flight: Vec<InFlight>,
}

impl Schedule {
    /// `count` workers at clock `clock` with `in_flight` running (a fresh run: 0 and none).
    pub fn new(count: usize, mode: WorkerMode, clock: f64, in_flight: Vec<InFlight>) -> Self {
        Schedule {
            count,
            mode,
            clock,
            in_flight,
        }
    }

    /// The worker that starts the next evaluation now: the lowest-numbered free one, or
    /// `None` when all are busy (or, for synchronous batches, while an evaluation of an
    /// earlier batch is: a batch starts together, so every worker is filled at one clock).
    pub fn free_worker(&self) -> Option<usize> {
        let earlier_batch = self.in_flight.iter().any(|e| e.start < self.clock);
        if self.mode == WorkerMode::Synchronous && earlier_batch {
            return None;
        }
        (0..self.count).find(|w| self.in_flight.iter().all(|e| e.worker != *w))
    }

    /// How many workers there are.
    pub fn count(&self) -> usize {
        self.count
    }

    /// The policy decisions in flight.
    pub fn pending_decisions(&self) -> usize {
        (self.in_flight.iter())
            .filter(|e| e.phase == Phase::Policy)
            .count()
    }

    /// Whether an initial-design evaluation is in flight.
    pub fn design_in_flight(&self) -> bool {
        (self.in_flight.iter()).any(|e| e.phase == Phase::Initial)
    }

    /// Starts `evaluation` on its worker now.
    pub fn start(&mut self, evaluation: InFlight) {
        self.in_flight.push(evaluation);
    }

    /// On simulated workers, the next evaluation to finish (earliest finish, ties by worker
    /// id), taken out of flight with the clock moved to its finish; `None` with nothing in
    /// flight.
    pub fn next_finished(&mut self) -> Option<InFlight> {
        let finish = |e: &InFlight| e.answer.as_ref().map_or(f64::INFINITY, |a| a.finish);
        let next = (0..self.in_flight.len()).min_by(|&a, &b| {
            let (a, b) = (&self.in_flight[a], &self.in_flight[b]);
            finish(a)
                .total_cmp(&finish(b))
                .then(a.worker.cmp(&b.worker))
        })?;
        Some(self.finished(next))
    }

    /// On real workers, the in-flight evaluation whose answer the journal holds first
    /// (answers replay in the order they arrived), if any.
    pub fn next_journalled(&self) -> Option<usize> {
        (0..self.in_flight.len())
            .filter_map(|i| Some((self.in_flight[i].answer.as_ref()?.journalled?, i)))
            .min()
            .map(|(_, i)| i)
    }

    /// The in-flight evaluation numbered `evaluation`.
    pub fn position(&self, evaluation: usize) -> Option<usize> {
        self.in_flight
            .iter()
            .position(|e| e.evaluation == evaluation)
    }

    /// In-flight evaluation `i`, answered, taken out of flight, the clock moved on to its
    /// finish if that is later.
    pub fn finished(&mut self, i: usize) -> InFlight {
        let done = self.in_flight.remove(i);
        if let Some(a) = &done.answer {
            self.clock = self.clock.max(a.finish);
        }
        done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn running(worker: usize, evaluation: usize, finish: f64) -> InFlight {
        InFlight {
            worker,
            evaluation,
            query: Query::at(vec![0.5]),
            phase: Phase::Initial,
            start: 0.0,
            answer: Some(Answered {
                outcome: Outcome::new(0.0, finish, vec![0.5], None),
                finish,
                journalled: None,
            }),
            pending: Vec::new(),
            diagnostics: Diagnostics::new(),
            times: None,
        }
    }

    #[test]
    fn finishes_come_by_time_then_worker_and_free_the_lowest_worker() {
        let mut s = Schedule::new(3, WorkerMode::Asynchronous, 0.0, Vec::new());
        s.start(running(2, 0, 2.0));
        s.start(running(0, 1, 1.0));
        assert_eq!(s.free_worker(), Some(1));
        s.start(running(1, 2, 1.0));
        assert_eq!(s.free_worker(), None);
        let order: Vec<(usize, f64)> = std::iter::from_fn(|| {
            s.next_finished()
                .map(|e| (e.worker, e.answer.unwrap().finish))
        })
        .collect();
        assert_eq!(order, [(0, 1.0), (1, 1.0), (2, 2.0)]);
        assert_eq!(s.clock, 2.0, "the clock is the last finish");
    }

    #[test]
    fn a_synchronous_batch_starts_together_and_waits_for_every_worker() {
        let mut s = Schedule::new(2, WorkerMode::Synchronous, 0.0, Vec::new());
        s.start(running(0, 0, 1.0));
        assert_eq!(s.free_worker(), Some(1), "the batch fills at one clock");
        s.start(running(1, 1, 3.0));
        s.next_finished();
        assert_eq!(s.free_worker(), None, "worker 1 still runs the batch");
        s.next_finished();
        assert_eq!((s.free_worker(), s.clock), (Some(0), 3.0));
    }
}
