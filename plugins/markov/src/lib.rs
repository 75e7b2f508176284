//! # cabo-markov
//!
//! Bayes-optimal multi-step feasibility determination for one-dimensional Markov-process
//! priors (Cashore, Kumarga & Frazier, seed `003_82c3abffebce4173`): classify every point of
//! `[0, ℓ]` as above or below a threshold `k`, paying `c` per sample.
//!
//! * [`prior`]: Brownian motion, time-changed Brownian motion (not translation invariant)
//!   and compound Poisson on the y-lattice, with the exact conditional law of an interior
//!   observation on the y-grid ([`Kernel`]).
//! * [`reward`]: indicator and truncated-linear classification rewards, and
//!   `R_{[a,b]}(H)` by quadrature with a documented, tested error.
//! * [`dp`]: Algorithm 1 — the value array `V[y_L, y_R, d]` (or `V[i, y_L, y_R, d]`) from
//!   Theorem 1's decomposition, with the optimal and one-step lookahead policies' tables.
//! * [`sim`]: both policies as decision rules on a history, and seeded parallel Monte Carlo.
//! * [`budget`]: the expected-budget value `V₁(T) = inf_λ V(λ) + λT` and the `V₂` band.
//! * [`experiment`]: the sweeps behind the paper's Figures 5.2 and 5.3 as plain data.
//! * [`studies`]: the sweeps as the studies `markov_cost_sweep` and `markov_budget_sweep`.
//! * [`policy_map`]: Figure 5.1, the optimal policy's sampling decisions, as the study
//!   `markov_policy_map`.
//! * [`plugins`](mod@plugins): the `markov_path` problem and the `markov_dp` / `markov_one_step` policies.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod budget;
pub mod dp;
pub mod experiment;
pub mod grid;
pub mod plugins;
pub mod policy_map;
pub mod prior;
pub mod quad;
pub mod reward;
pub mod sim;
pub mod studies;

pub use dp::{Setup, Solution, SolveOptions, SolveStats};
pub use grid::Grid;
pub use prior::{Kernel, Prior};
pub use reward::Reward;
pub use sim::{History, McEstimate, PolicyRule};

cabo_core::plugin_group!();
