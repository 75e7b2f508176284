//! # cabo-bmsei
//!
//! Budgeted multi-step expected improvement with unknown evaluation costs (seed 001,
//! Astudillo et al. 2021) and its uniform-cost relatives.
//!
//! - [`q1`]: the budgeted one-step value Q₁ of Prop. 1 with its gradient, and the acquisition
//!   `budgeted_ei` (one-step B-MS-EI).
//! - [`tree`]: one-shot multi-step scenario trees (§4.2). Fantasies of `(y, ln c)` use fixed
//!   base samples (common random numbers): by default (spec key `base_samples:
//!   shared_sobol`) one scrambled Sobol' set per stage shared by its nodes, as BoTorch's
//!   `qMultiStepLookahead` and seed 001's code, or (`independent`) fresh draws per node; a
//!   stage with one fantasy uses the posterior mean (the path variant). Each branch's budget falls by its fantasised costs and its value
//!   stops accruing once the budget is spent. **Gradients are exact**, including the
//!   dependence of fantasised values and conditioned posteriors on earlier decision points:
//!   a path's fantasies are conditioned jointly through the Cholesky factor of the path's
//!   posterior covariance (equal to sequential conditioning, tested against the exact GP's
//!   fantasies), and each node is differentiated in forward mode (the `dual` module). While
//!   `N·d ≤ 64` the duals carry one derivative per coordinate of the node's path; above, they
//!   carry one per posterior mean and covariance of the path's points (`N(N + 3)/2` per
//!   belief, whatever `d`) and the chain rule to the coordinates is applied once per node,
//!   through the gradients the model's `Covariance` returns ([`tree::GradientMethod`]). Both
//!   are exact and agree to rounding (tested to 1e-12, and each against finite
//!   differences), so trees of any dimension are optimised with true gradients; trees that
//!   fitted the first form keep its results bit for bit.
//! - [`schedule`]: budget scheduling by rolling out EI-PUC-CC (§4.3) with the refill rule:
//!   sampled fantasies and an exponent recomputed at each step, as the authors' code.
//! - [`policy`]: the policies `bmsei`, `ms_ei` (multi-step EI, unit costs) and `kg`
//!   (one-shot knowledge gradient). Every decision point of the tree is optimised jointly by
//!   cabo-optim's multi-start L-BFGS-B; the previous decision's tree (the first-stage branch
//!   whose fantasy is closest to the observed value, shifted up one level) is one extra
//!   local search, kept when it ends higher. Trees of one-step values (`bmsei`, `ms_ei`)
//!   get two more, rooted at the maximisers of the one-step value Q₁ and of the posterior
//!   mean, so the tree returned is never worth less than the one-step optimum found.
//! - [`kg`]: KG's one-stage tree through the model's faster fantasy means where it offers
//!   them (the exact GP's take `O(n·d)` per fantasy point), equal to the general tree to
//!   rounding.
//! - [`lookahead`]: each tree policy's tree for one decision as a `cabo_core::Lookahead`,
//!   evaluated at given node points with given base samples or the policy's own (what
//!   `cargo xtask inspect` reports under `lookahead:`); tested against a brute-force
//!   evaluation that re-solves each node's GP from scratch.
//! - [`belief`]: what a tree needs from a posterior (the capability `Covariance`), and the
//!   unit cost of MS-EI and KG; [`arms`]: independent normal arms with known costs, the
//!   finite instances of Theorem 1.
//! - [`theorem1`]: the study `bmsei_theorem1`, Theorem 1's approximation ratios of EI-PUC and
//!   EI measured exactly, by simulating the rules, and against the proof's bounds.
//! - [`figure2`]: the study `bmsei_figure2`, Figure 2's one-dimensional example: EI-PUC and
//!   B-MS-EI run to the end of a budget on a problem whose cheap half is a trap.
//!
//! The crate names no model. Its policies ask the posterior and the cost belief for the
//! capabilities of `cabo_core::capability`: every tree needs `covariance` of the objective,
//! `bmsei` also of ln c, and its scheduled budget `fantasize` of both (`exact_gp`, `log_gp`,
//! `known` and `uniform` offer them all); a spec whose models lack one is rejected before
//! it runs. On finite domains the tree is solved exactly by backward induction over the
//! candidates.

#![forbid(unsafe_code)]

pub(crate) mod dual;

pub mod arms;
pub mod belief;
pub(crate) mod fantasy_start;
pub mod figure2;
pub mod kg;
pub mod lookahead;
pub mod policy;
pub mod q1;
pub mod schedule;
pub mod theorem1;
pub mod tree;

pub use kg::KgObjective;
pub use lookahead::TreeLookahead;
pub use policy::{BaseSampleScheme, BmseiSpec, KgSpec, MsEiSpec, TreePolicy, Variant};
pub use q1::{BudgetedEi, BudgetedEiSpec, q1_value, q1_value_grad};
pub use schedule::{BudgetMode, Scheduler};
pub use tree::{BaseSamples, GradientMethod, NodeValue, Tree, TreeObjective};

cabo_core::plugin_group!();
