//! # cabo-optim
//!
//! Acquisition optimisation for cabo, and the small numerical solvers plugins share. It owns
//! no model and no acquisition: it maximises whatever [`cabo_core::Objective`] (an
//! [`cabo_core::AcquisitionFn`] is one) it is given, through the one entry point
//! [`maximize`], over the unit cube or a sub-box of it, or over the candidates of a finite
//! domain.
//!
//! | module | what | algorithm |
//! | --- | --- | --- |
//! | [`lbfgsb`] | box-constrained local minimisation | L-BFGS-B: generalised Cauchy point, subspace minimisation, strong-Wolfe line search |
//! | [`sobol`] | space-filling raw samples | Joe–Kuo Sobol' (≤ 256 dims) with linear-matrix scrambling + digital shift; Latin hypercube above |
//! | [`multistart`] | global maximisation, [`maximize`] | BoTorch's `optimize_acqf`: Sobol' raw samples → `initialize_q_batch(_nonneg)` → L-BFGS-B restarts, plus the caller's warm and partial starts, searched in lockstep with batched evaluations |
//! | [`acquisition`] | acquisition → decision | [`acquisition::maximize_acquisition`] and [`acquisition::AcquisitionPolicy`] |
//! | [`averaged`] | an acquisition over fantasies of points in flight | the mean over posteriors conditioned on joint draws |
//! | [`local_penalty`] | an acquisition with points in flight | local penalisation (González et al. 2016) |
//! | [`roots`] | scalar equations | Brent's method and bisection on a bracket |
//!
//! **Why its own L-BFGS-B.** BoTorch's numerics rest on SciPy's L-BFGS-B, and matching its
//! maximisers needs the same algorithm: projected (Cauchy-point) steps that let variables stick
//! to the bounds, and curvature from a limited-memory BFGS matrix. argmin 0.11 has no bound
//! constraints. Owning the solver lets cabo guarantee what acquisition optimisation relies on —
//! the objective is never evaluated outside the box, non-finite values shrink the step instead
//! of aborting, results are deterministic — and keep every buffer allocated once per run,
//! because acquisition functions are cheap enough for the optimiser's overhead to show.
//!
//! **Determinism.** Every random choice (scrambling, initial conditions) is derived from the
//! `u64` seed passed in; equal inputs give bit-identical results.
//!
//! Conventions: every objective is **maximised** by [`multistart`] and [`acquisition`] (the
//! local solver [`lbfgsb`] minimises, as is customary); points live in `[0,1]^d`; floats are
//! `f64`.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod acquisition;
pub mod averaged;
pub mod lbfgsb;
pub mod local_penalty;
pub mod multistart;
pub mod roots;
pub mod sobol;
mod sobol_table;
#[cfg(test)]
mod testing;

pub use acquisition::{AcquisitionPolicy, maximize_acquisition};
pub use lbfgsb::Tolerances;
pub use multistart::{MaximizeOptions, Maximum, Start, ascend, maximize};
