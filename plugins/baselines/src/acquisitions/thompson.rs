//! Thompson sampling: maximise one function drawn from the posterior.

use cabo_core::{
    Acquisition, AcquisitionFn, AcquisitionSpec, BuildContext, Capabilities, Capability,
    DecisionContext, Requirements, Result, capability, derive_seed,
};
use serde::{Deserialize, Serialize};

/// Spec of [`Thompson`] (`acquisition: { type: thompson }`); it has no parameters.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThompsonSpec {}

#[cabo_core::plugin(
    name = "thompson",
    summary = "Thompson sampling: the maximiser of one posterior sample path, drawn afresh at each decision",
    paper = "standard; baseline in seed 000",
    example = "{ type: thompson }"
)]
impl AcquisitionSpec for ThompsonSpec {
    fn build(&self, _ctx: &BuildContext<'_>) -> Result<Box<dyn Acquisition>> {
        Ok(Box::new(Thompson))
    }
    fn requires(&self) -> Requirements {
        Requirements {
            model: Capabilities::NONE.with(Capability::SamplePaths),
            ..Requirements::NONE
        }
    }
}

/// Thompson sampling. The path is drawn from the decision's seed, so a run replays exactly.
#[derive(Debug, Clone, Copy, Default)]
pub struct Thompson;

impl Thompson {
    /// The seed of the sample path drawn at a decision with seed `decision_seed`; kept apart
    /// from the model-fitting stream derived from the same decision seed.
    pub fn path_seed(decision_seed: u64) -> u64 {
        derive_seed(&[&decision_seed, &"thompson"])
    }
}

impl Acquisition for Thompson {
    fn prepare<'a>(&'a self, ctx: &'a DecisionContext<'a>) -> Result<Box<dyn AcquisitionFn + 'a>> {
        let posterior = cabo_toolkit::acquisition::checked_posterior(ctx)?;
        let paths = posterior
            .sample_paths()
            .ok_or_else(|| capability::missing("thompson", "model", Capability::SamplePaths))?;
        Ok(Box::new(paths.sample_path(Self::path_seed(ctx.seed))?))
    }
}
