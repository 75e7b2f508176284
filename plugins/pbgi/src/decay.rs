//! PBGI-D, the Pandora's Box Gittins index with dynamic decay (seed 000 §3.3, variant 3):
//! PBGI with a time-dependent λ_t that is multiplied by β < 1 whenever the Pandora stopping
//! rule fires, so the policy never needs λ tuned to a budget.
//!
//! The trigger follows the authors' code: after the chosen point has been observed, if the
//! PBGI value of that point (computed before observing it) is below the best observed y —
//! the new observation included — the rule would have stopped, and λ_{t+1} = β·λ_t from the
//! next decision on; otherwise λ_{t+1} = λ_t.

use crate::pbgi::{Pbgi, check_lambda};
use cabo_core::{
    AcquisitionFn, BuildContext, Dataset, Decision, DecisionContext, Diagnostics, Error,
    Observation, Phase, PluginState, Policy, PolicySpec, Query, Result,
};
use cabo_optim::acquisition::maximize_acquisition;
use serde::{Deserialize, Serialize};

fn default_lambda0() -> f64 {
    0.1
}

fn default_beta() -> f64 {
    0.5
}

/// Spec of [`PbgiDecay`]: `policy: { type: pbgi_decay, lambda0: 0.1, beta: 0.5 }`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PbgiDecaySpec {
    /// Initial cost multiplier λ₁ > 0 (default 0.1, the authors' code; the paper text uses
    /// 1e-4).
    #[serde(default = "default_lambda0")]
    pub lambda0: f64,
    /// Decay factor β ∈ (0, 1] applied when the stopping rule fires (default 1/2).
    #[serde(default = "default_beta")]
    pub beta: f64,
}

impl Default for PbgiDecaySpec {
    fn default() -> Self {
        PbgiDecaySpec {
            lambda0: default_lambda0(),
            beta: default_beta(),
        }
    }
}

impl PbgiDecaySpec {
    fn check(&self) -> Result<()> {
        check_lambda(self.lambda0, "pbgi_decay.lambda0")?;
        if !(self.beta > 0.0 && self.beta <= 1.0) {
            return Err(Error::invalid(format!(
                "pbgi_decay.beta: must be in (0, 1], got {}",
                self.beta
            )));
        }
        Ok(())
    }
}

#[cabo_core::plugin(
    name = "pbgi_decay",
    summary = "PBGI-D: PBGI whose lambda is multiplied by beta each time the Pandora stopping rule fires at the chosen point",
    paper = "seed 000 §3.3 (variant 3) and §4",
    example = "{ type: pbgi_decay, lambda0: 0.1, beta: 0.5 }"
)]
impl PolicySpec for PbgiDecaySpec {
    fn validate(&self, _dim: usize) -> Result<()> {
        self.check()
    }
    fn build(&self, _ctx: &BuildContext<'_>) -> Result<Box<dyn Policy>> {
        Ok(Box::new(PbgiDecay::new(self.lambda0, self.beta)?))
    }
}

/// The PBGI-D policy: state is the current λ and the index of each chosen point not yet
/// observed (one at a time with one worker; with several, the decay of an observation uses
/// the index its own point was chosen with).
#[derive(Debug, Clone)]
pub struct PbgiDecay {
    lambda: f64,
    beta: f64,
    /// The points chosen and not yet observed, each with α under the λ it was chosen with.
    chosen: Vec<(Vec<f64>, f64)>,
    decays: usize,
    last: Diagnostics,
}

impl PbgiDecay {
    /// PBGI-D starting from `lambda0` (> 0) with decay factor `beta` ∈ (0, 1].
    pub fn new(lambda0: f64, beta: f64) -> Result<Self> {
        PbgiDecaySpec { lambda0, beta }.check()?;
        Ok(PbgiDecay {
            lambda: lambda0,
            beta,
            chosen: Vec::new(),
            decays: 0,
            last: Diagnostics::new(),
        })
    }

    /// The λ the next decision will use.
    pub fn lambda(&self) -> f64 {
        self.lambda
    }

    /// How many times λ has decayed so far.
    pub fn decays(&self) -> usize {
        self.decays
    }

    /// Applies the decay rule to a chosen point's index and the best y after observing it.
    fn update(&mut self, index: f64, best_y: f64) {
        if index < best_y {
            self.lambda *= self.beta;
            self.decays += 1;
        }
    }
}

impl Policy for PbgiDecay {
    fn decide(&mut self, ctx: &DecisionContext<'_>) -> Result<Decision> {
        let acq = Pbgi::new(self.lambda, false)?;
        let f = acq.function(ctx)?;
        let m = maximize_acquisition(&f, ctx.problem, ctx.optimizer, ctx.seed)?;
        let mut d = f.diagnostics();
        d.insert("acq_value".to_string(), m.value);
        d.insert("decays".to_string(), self.decays as f64);
        self.last = d;
        self.chosen.push((m.x.clone(), m.value));
        Ok(Decision::Evaluate(Query::at(m.x)))
    }

    fn observe(&mut self, data: &Dataset, latest: &Observation) -> Result<()> {
        // Initial-design observations answer no decision and change nothing. A policy
        // observation answers the decision that chose its point; one at a point no decision
        // chose (ask/tell told another point than the one suggested) answers the earliest.
        let answered = (self.chosen.iter())
            .position(|(x, _)| *x == latest.query.x)
            .or((!self.chosen.is_empty() && latest.phase == Phase::Policy).then_some(0));
        if let (Some(i), Some(best)) = (answered, data.best_y()) {
            let (_, index) = self.chosen.remove(i);
            self.update(index, best);
        }
        Ok(())
    }

    fn diagnostics(&self) -> Diagnostics {
        self.last.clone()
    }

    /// λ, the decay count and the chosen points in flight (none between decisions with one
    /// worker).
    fn checkpoint(&self) -> Result<Option<PluginState>> {
        PluginState::encode(&(self.lambda, &self.chosen, self.decays)).map(Some)
    }

    fn restore(&mut self, state: &PluginState) -> Result<()> {
        (self.lambda, self.chosen, self.decays) = state.decode("pbgi_decay")?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lambda_decays_only_when_the_rule_fires() {
        let mut p = PbgiDecay::new(0.1, 0.5).unwrap();
        p.update(1.0, 0.5); // index above the best: keep λ
        assert_eq!(p.lambda(), 0.1);
        p.update(1.0, 1.0); // a tie does not fire (strictly below)
        assert_eq!(p.lambda(), 0.1);
        p.update(0.4, 0.5);
        assert_eq!(p.lambda(), 0.05);
        p.update(-3.0, 0.5);
        assert_eq!(p.lambda(), 0.025);
        assert_eq!(p.decays(), 2);
    }

    #[test]
    fn bad_parameters_are_rejected() {
        assert!(PbgiDecay::new(0.0, 0.5).is_err());
        assert!(PbgiDecay::new(f64::NAN, 0.5).is_err());
        assert!(PbgiDecay::new(0.1, 0.0).is_err());
        assert!(PbgiDecay::new(0.1, 1.5).is_err());
        assert!(PbgiDecay::new(1e-4, 0.5).is_ok());
    }
}
