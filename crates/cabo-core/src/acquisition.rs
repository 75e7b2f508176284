//! Acquisition functions: scoring rules over candidate points that an optimiser maximises.

use crate::{BuildContext, DecisionContext, Diagnostics, Objective, Result};
use std::fmt::Debug;

/// A scoring rule. `prepare` does the per-decision work once (incumbent, β_t, cost belief …)
/// and returns the function the optimiser maximises.
pub trait Acquisition: Send {
    /// The acquisition function for this decision.
    fn prepare<'a>(&'a self, ctx: &'a DecisionContext<'a>) -> Result<Box<dyn AcquisitionFn + 'a>>;
}

/// An acquisition function ready to be maximised over `[0,1]^d`: an [`Objective`] with a
/// stopping rule and diagnostics of its own.
pub trait AcquisitionFn: Objective {
    /// A stopping rule evaluated at the maximiser: `Some(reason)` ends the run instead of
    /// evaluating (the Pandora rule stops when the best observed y ≥ max α).
    fn stop_at(&self, _max_value: f64) -> Option<String> {
        None
    }

    /// What to record about this decision.
    fn diagnostics(&self) -> Diagnostics {
        Diagnostics::new()
    }
}

/// A function drawn or built elsewhere (a posterior sample path for Thompson sampling) as an
/// acquisition function without a stopping rule or diagnostics.
impl AcquisitionFn for Box<dyn Objective + Send + Sync + '_> {}

/// An acquisition as written in a spec (`acquisition: { type: ei }`).
#[typetag::serde(tag = "type")]
pub trait AcquisitionSpec: Debug + Send + Sync + dyn_clone::DynClone {
    /// Rejects parameters that do not fit a problem of dimension `dim`.
    fn validate(&self, _dim: usize) -> Result<()> {
        Ok(())
    }
    /// Builds the acquisition for one run.
    fn build(&self, ctx: &BuildContext<'_>) -> Result<Box<dyn Acquisition>>;
    /// Whether the acquisition reads the model's posterior, as nearly every one does; the
    /// runner then rejects, before running anything, a spec that gives it no `model`.
    fn needs_posterior(&self) -> bool {
        true
    }
    /// Whether the acquisition needs an observation before its first decision (it uses the
    /// best observed value as its incumbent); the runner then rejects a spec whose initial
    /// design has no point.
    fn needs_incumbent(&self) -> bool {
        false
    }
    /// What the acquisition needs of its run's model and cost model beyond means and variances;
    /// the runner rejects, before running anything, a spec whose models lack it.
    fn requires(&self) -> crate::Requirements {
        crate::Requirements::NONE
    }
    /// What the acquisition takes a pending point to have returned when it decides with
    /// other workers' evaluations in flight, unless the spec's `workers.pending` says
    /// otherwise: the Kriging believer by default.
    fn pending(&self) -> crate::PendingRule {
        crate::PendingRule::KrigingBeliever
    }
}

dyn_clone::clone_trait_object!(AcquisitionSpec);
