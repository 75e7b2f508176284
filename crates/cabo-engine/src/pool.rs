//! Real workers: k instances of a problem evaluated by another program, each on a thread of
//! its own with its own program process, so that k evaluations run at once. The run loop
//! sends a worker a request and takes the answers in the order they arrive; the journal
//! records that order, so that a resumed run replays the same answers in the same order and
//! takes the same decisions (`run_loop.rs`).

use cabo_core::{Error, Outcome, Problem, Query, Result};
use std::sync::mpsc::{self, Receiver, Sender};

/// One evaluation for a worker.
struct Request {
    evaluation: usize,
    query: Query,
    seed: u64,
}

/// A worker's answer to a request.
pub(crate) struct Answer {
    /// The evaluation answered.
    pub evaluation: usize,
    /// What the program returned, or why it did not.
    pub outcome: Result<Outcome>,
}

/// The worker threads and the channel their answers come back on.
///
/// Dropping the pool closes the workers' request channels: each worker finishes the
/// evaluation it is making (its answer is dropped, and asked for again if the run resumes),
/// then ends its program as a run's end does, and its thread ends. The threads are not
/// waited for, so a run that stops with evaluations in flight stops at once.
pub(crate) struct Pool {
    requests: Vec<Sender<Request>>,
    answers: Receiver<Answer>,
}

impl Pool {
    /// One worker per problem instance (each evaluated by a program of its own, started on
    /// its first request).
    pub fn new(problems: Vec<Box<dyn Problem>>) -> Pool {
        let (send, answers) = mpsc::channel();
        let mut requests = Vec::new();
        for mut problem in problems {
            let (to_worker, inbox) = mpsc::channel::<Request>();
            let send = send.clone();
            requests.push(to_worker);
            std::thread::spawn(move || {
                for r in inbox {
                    let outcome = match problem.external() {
                        Some(program) => program.evaluate_in_run(&r.query, r.seed, r.evaluation),
                        None => problem.evaluate(&r.query, r.seed),
                    };
                    let answer = Answer {
                        evaluation: r.evaluation,
                        outcome,
                    };
                    if send.send(answer).is_err() {
                        break;
                    }
                }
            });
        }
        Pool { requests, answers }
    }

    /// Asks worker `worker` for evaluation `evaluation` at `query`.
    pub fn send(&self, worker: usize, evaluation: usize, query: &Query, seed: u64) -> Result<()> {
        let request = Request {
            evaluation,
            query: query.clone(),
            seed,
        };
        self.requests[worker]
            .send(request)
            .map_err(|_| Error::numerical(format!("worker {worker} has stopped")))
    }

    /// The next answer to arrive, waiting for it.
    pub fn next(&self) -> Result<Answer> {
        self.answers
            .recv()
            .map_err(|_| Error::numerical("every worker has stopped"))
    }
}
