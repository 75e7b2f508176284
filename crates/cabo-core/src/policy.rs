//! Decision makers: what to evaluate next, or whether to stop.

use crate::{
    BuildContext, Dataset, DecisionContext, Error, Observation, PluginState, Query, Result,
};
use std::collections::BTreeMap;
use std::fmt::Debug;

/// Named numbers a plugin reports for the record (λ, acquisition value, hyperparameters …).
pub type Diagnostics = BTreeMap<String, f64>;

/// A policy's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Evaluate this query next.
    Evaluate(Query),
    /// End the run now (e.g. the Pandora stopping rule); the reason is recorded.
    Stop(String),
}

/// Chooses queries one at a time. Policies may keep state across iterations.
pub trait Policy: Send {
    /// The next decision.
    fn decide(&mut self, ctx: &DecisionContext<'_>) -> Result<Decision>;

    /// Told about each new observation (the dataset already contains it), after it was
    /// made. Stateful rules such as PBGI-D's λ decay live here.
    fn observe(&mut self, _data: &Dataset, _latest: &Observation) -> Result<()> {
        Ok(())
    }

    /// What this policy wants recorded about its last decision.
    fn diagnostics(&self) -> Diagnostics {
        Diagnostics::new()
    }

    /// Everything this policy carries from one decision to the next beyond the dataset (a
    /// decaying λ, counters, a warm start), so that an interrupted run resumes exactly: a
    /// freshly built policy given this state through [`Policy::restore`] must make every
    /// later decision bit for bit as this one would. Called between decisions, after
    /// `observe`.
    ///
    /// `Ok(None)`, the default, declares the policy not resumable, and an interrupted run of
    /// it restarts from the beginning. A policy without state returns
    /// `Ok(Some(PluginState::stateless()))`.
    fn checkpoint(&self) -> Result<Option<PluginState>> {
        Ok(None)
    }

    /// Takes back what [`Policy::checkpoint`] returned, into a freshly built policy.
    fn restore(&mut self, _state: &PluginState) -> Result<()> {
        Err(Error::unsupported(
            "this policy cannot resume from a checkpoint",
        ))
    }
}

/// A policy as written in a spec (`policy: { type: random_search }`).
#[typetag::serde(tag = "type")]
pub trait PolicySpec: Debug + Send + Sync + dyn_clone::DynClone {
    /// Rejects parameters that do not fit a problem of dimension `dim`.
    fn validate(&self, _dim: usize) -> Result<()> {
        Ok(())
    }
    /// Builds the policy for one run (`ctx.seed` is the run's policy seed).
    fn build(&self, ctx: &BuildContext<'_>) -> Result<Box<dyn Policy>>;
    /// Whether the policy needs an observation before its first decision (it uses the best
    /// observed value); the runner then rejects a spec whose initial design has no point.
    fn needs_incumbent(&self) -> bool {
        false
    }
    /// What the policy needs of its run's model and cost model beyond means and variances;
    /// the runner rejects, before running anything, a spec whose models lack it.
    fn requires(&self) -> crate::Requirements {
        crate::Requirements::NONE
    }
    /// The scenario tree the policy maximises, for a policy that has one (multi-step
    /// lookahead, one-shot KG), so that `inspect` can evaluate it at given points.
    fn lookahead(&self) -> Option<&dyn crate::LookaheadSpec> {
        None
    }
    /// What the policy takes a pending point to have returned when it decides with other
    /// workers' evaluations in flight, unless the spec's `workers.pending` says otherwise:
    /// the Kriging believer by default.
    fn pending(&self) -> crate::PendingRule {
        crate::PendingRule::KrigingBeliever
    }
}

dyn_clone::clone_trait_object!(PolicySpec);
