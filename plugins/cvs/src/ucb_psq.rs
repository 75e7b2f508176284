//! UCB-PSQ (Hayashi et al., the baseline of seeds 002 and 004): play the control set and
//! point with the largest expected UCB, ignoring costs — UCB-CVS with ε ≡ 0 — or, as the
//! per-unit-cost variant of seed 002 App. B, the largest expected UCB divided by the cost.

use crate::common::{CvsSetup, default_beta, default_mc_samples, play_best};
use cabo_core::{
    BuildContext, Decision, DecisionContext, Diagnostics, Error, Policy, PolicySpec, Result,
};
use serde::{Deserialize, Serialize};

/// Spec of UCB-PSQ: `{ type: ucb_psq, beta: 2.0, per_unit_cost: false }`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UcbPsqSpec {
    /// UCB multiplier of σ; default 2.
    #[serde(default = "default_beta")]
    pub beta: f64,
    /// Divide each set's best expected UCB by its known cost (App. B); default false.
    #[serde(default)]
    pub per_unit_cost: bool,
    /// Quasi-random points of the open variables (scrambled Sobol', drawn once per run);
    /// default 128, which average as accurately as the seeds' 1024 independent draws
    /// ([`crate::common::DEFAULT_MC_SAMPLES`]). Powers of two keep the points balanced.
    #[serde(default = "default_mc_samples")]
    pub mc_samples: usize,
}

#[cabo_core::plugin(
    name = "ucb_psq",
    summary = "UCB-PSQ: the control set and point with the largest expected UCB (optionally per unit cost)",
    paper = "002_68254e6b1337b56f (baseline, App. B); 004_e019ef0c364ecaf4 (baseline)",
    example = "{ type: ucb_psq, beta: 2.0, per_unit_cost: false }"
)]
impl PolicySpec for UcbPsqSpec {
    fn validate(&self, _dim: usize) -> Result<()> {
        if !(self.beta.is_finite() && self.beta >= 0.0) {
            return Err(Error::invalid(format!(
                "ucb_psq.beta: must be finite and ≥ 0, got {}",
                self.beta
            )));
        }
        cabo_core::check_count(
            "ucb_psq.mc_samples",
            self.mc_samples,
            crate::common::MC_SAMPLES,
        )?;
        Ok(())
    }

    fn build(&self, ctx: &BuildContext<'_>) -> Result<Box<dyn Policy>> {
        self.validate(ctx.problem.dim)?;
        let setup = CvsSetup::ranking(ctx, self.mc_samples, "ucb_psq", self.per_unit_cost)?;
        Ok(Box::new(UcbPsq {
            spec: self.clone(),
            setup,
            diagnostics: Diagnostics::new(),
        }))
    }
}

struct UcbPsq {
    spec: UcbPsqSpec,
    setup: CvsSetup,
    diagnostics: Diagnostics,
}

impl Policy for UcbPsq {
    fn decide(&mut self, ctx: &DecisionContext<'_>) -> Result<Decision> {
        let all: Vec<usize> = (0..self.setup.sets.len()).collect();
        let maxima = self.setup.maximize(ctx, &all, self.spec.beta, "ucb_psq")?;
        let (decision, diagnostics) = play_best(
            &maxima,
            &self.setup,
            self.spec.per_unit_cost,
            "ucb_psq",
            "cvs.expected_ucb",
        )?;
        self.diagnostics = diagnostics;
        Ok(decision)
    }

    fn diagnostics(&self) -> Diagnostics {
        self.diagnostics.clone()
    }

    cabo_core::stateless_checkpoint!("ucb_psq");
}
