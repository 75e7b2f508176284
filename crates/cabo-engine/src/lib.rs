//! # cabo-engine
//!
//! The run engine: what happens to one (policy, replication) of a spec, from its seeds to its
//! completion marker.
//!
//! - `setup` builds a run's problem, known cost, models and policy from the spec, and
//!   [`seeds`] derives every seed from the spec's seed name.
//! - `step` holds the run rules (seeds, budget accounting, the evaluation cap, the phase)
//!   once, for the two drivers: the run loop ([`run_loop`]), which evaluates the problem
//!   itself, and ask/tell ([`session`]), which is told what was evaluated elsewhere.
//! - `sink` writes what a run reports (records, times, checkpoints); [`store`] lays the
//!   results out and marks completion; [`lifecycle`] owns a run's life on disk (claim,
//!   prepare, resume, set aside, mark complete); [`checkpoint`] and `journal` let an
//!   interrupted run resume bit for bit.
//! - [`workers`] schedules a run's simulated workers (evaluations in flight, ordered by
//!   finish time), and `pending` makes a decision with points in flight, on fantasies.
//! - [`times`] reads the per-decision times every consumer shares, measured with
//!   [`cpu_time`].
//!
//! It owns a run's file I/O; it contains no algorithm (those are plugins) and knows no plugin
//! by name.

#![forbid(unsafe_code)]

pub mod checkpoint;
pub mod cpu_time;
mod journal;
pub mod lifecycle;
mod pending;
mod pool;
pub mod run_loop;
pub mod seeds;
pub mod session;
mod setup;
mod sink;
mod step;
pub mod store;
pub mod times;
pub mod workers;

pub use seeds::{RunId, policy_seed, problem_seed};
pub use session::{Session, Suggested, Suggestion};
pub use setup::known_cost;
pub use store::RunSummary;
