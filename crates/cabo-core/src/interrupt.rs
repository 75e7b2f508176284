//! The process-wide request to stop, set by the command line's signal handler (Ctrl-C,
//! SIGTERM) and read wherever cabo waits: the runner between decisions, and a problem whose
//! evaluation waits on another process (an external program, its retries), so that a run
//! stops while it waits instead of only at its next decision.

use std::sync::atomic::{AtomicBool, Ordering};

/// Set once a stop was requested; never cleared within a process.
static REQUESTED: AtomicBool = AtomicBool::new(false);

/// The flag itself, for code that takes a cancellation flag (the runner's sweep).
pub fn flag() -> &'static AtomicBool {
    &REQUESTED
}

/// Asks everything that waits to stop; true when a stop had been requested already.
pub fn request() -> bool {
    REQUESTED.swap(true, Ordering::Relaxed)
}

/// Whether a stop was requested.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::Relaxed)
}
