//! UCB-CVS (seed 002, Alg. 1): relax the best expected UCB by ε_t, keep the cheapest of the
//! control sets within the relaxation, and play the best of those.

use crate::common::{CvsSetup, argmax_by, default_beta, default_mc_samples};
use cabo_core::{
    BuildContext, Decision, DecisionContext, Diagnostics, Error, Policy, PolicySpec, Query, Result,
};
use serde::{Deserialize, Serialize};

/// The ε-schedule of UCB-CVS (ε_t ≥ 0; t counts policy decisions from 1).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum EpsilonSchedule {
    /// ε_t = value for every t.
    Constant {
        /// The constant relaxation.
        value: f64,
    },
    /// ε_t = start·(1 − (t − 1)/iterations), floored at 0: linear decay to zero.
    Linear {
        /// ε_1.
        start: f64,
        /// Decisions after which ε reaches 0.
        iterations: usize,
    },
    /// ε_t = values[t − 1], and 0 once the list is exhausted.
    List {
        /// The explicit schedule.
        values: Vec<f64>,
    },
}

impl Default for EpsilonSchedule {
    fn default() -> Self {
        EpsilonSchedule::Constant { value: 0.0 }
    }
}

impl EpsilonSchedule {
    /// ε_t.
    pub fn at(&self, t: usize) -> f64 {
        match self {
            EpsilonSchedule::Constant { value } => *value,
            EpsilonSchedule::Linear { start, iterations } => {
                (start * (1.0 - (t.saturating_sub(1)) as f64 / *iterations as f64)).max(0.0)
            }
            EpsilonSchedule::List { values } => {
                values.get(t.wrapping_sub(1)).copied().unwrap_or(0.0)
            }
        }
    }

    fn validate(&self) -> Result<()> {
        let ok = |v: f64| v.is_finite() && v >= 0.0;
        match self {
            EpsilonSchedule::Constant { value } if !ok(*value) => Err(Error::invalid(format!(
                "ucb_cvs.epsilon.value: must be finite and ≥ 0, got {value}"
            ))),
            EpsilonSchedule::Linear { start, iterations } if !ok(*start) || *iterations == 0 => {
                Err(Error::invalid(format!(
                    "ucb_cvs.epsilon: need start ≥ 0 and iterations ≥ 1, got start = {start}, iterations = {iterations}"
                )))
            }
            EpsilonSchedule::List { values } if values.iter().any(|v| !ok(*v)) => Err(
                Error::invalid("ucb_cvs.epsilon.values: every ε must be finite and ≥ 0"),
            ),
            _ => Ok(()),
        }
    }
}

/// Spec of UCB-CVS: `{ type: ucb_cvs, beta: 2.0, epsilon: { type: linear, start: 0.5,
/// iterations: 30 } }`. With ε ≡ 0 (the default) it is UCB-PSQ with known costs used only
/// to break ties.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UcbCvsSpec {
    /// UCB multiplier of σ: u = μ + βσ; default 2 (seed 002, App. C.2).
    #[serde(default = "default_beta")]
    pub beta: f64,
    /// The ε-schedule; default constant 0.
    #[serde(default)]
    pub epsilon: EpsilonSchedule,
    /// Quasi-random points of the open variables (scrambled Sobol', drawn once per run);
    /// default 128, which average as accurately as the seeds' 1024 independent draws
    /// ([`crate::common::DEFAULT_MC_SAMPLES`]). Powers of two keep the points balanced.
    #[serde(default = "default_mc_samples")]
    pub mc_samples: usize,
}

#[cabo_core::plugin(
    name = "ucb_cvs",
    summary = "UCB-CVS: cheapest control set whose expected UCB is within ε_t of the best, then its expected-UCB maximiser",
    paper = "002_68254e6b1337b56f (Alg. 1)",
    example = "{ type: ucb_cvs, beta: 2.0, epsilon: { type: linear, start: 0.5, iterations: 30 }, mc_samples: 128 }"
)]
impl PolicySpec for UcbCvsSpec {
    fn validate(&self, _dim: usize) -> Result<()> {
        if !(self.beta.is_finite() && self.beta >= 0.0) {
            return Err(Error::invalid(format!(
                "ucb_cvs.beta: must be finite and ≥ 0, got {}",
                self.beta
            )));
        }
        cabo_core::check_count(
            "ucb_cvs.mc_samples",
            self.mc_samples,
            crate::common::MC_SAMPLES,
        )?;
        self.epsilon.validate()
    }

    fn build(&self, ctx: &BuildContext<'_>) -> Result<Box<dyn Policy>> {
        self.validate(ctx.problem.dim)?;
        let setup = CvsSetup::new(ctx, self.mc_samples, "ucb_cvs")?;
        setup.known_costs("ucb_cvs")?;
        Ok(Box::new(UcbCvs {
            spec: self.clone(),
            setup,
            diagnostics: Diagnostics::new(),
        }))
    }
}

struct UcbCvs {
    spec: UcbCvsSpec,
    setup: CvsSetup,
    diagnostics: Diagnostics,
}

/// Alg. 1, steps 3–6, given each set's best expected UCB: the chosen set's index.
pub fn ucb_cvs_choice(ucb: &[f64], costs: &[f64], epsilon: f64) -> usize {
    let g = ucb.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let s1: Vec<usize> = (0..ucb.len()).filter(|&i| ucb[i] + epsilon >= g).collect();
    let cmin = s1.iter().map(|&i| costs[i]).fold(f64::INFINITY, f64::min);
    let s2: Vec<usize> = s1.into_iter().filter(|&i| costs[i] == cmin).collect();
    s2[argmax_by(&s2, |&i| ucb[i]).unwrap_or(0)]
}

impl Policy for UcbCvs {
    fn decide(&mut self, ctx: &DecisionContext<'_>) -> Result<Decision> {
        let all: Vec<usize> = (0..self.setup.sets.len()).collect();
        let maxima = self.setup.maximize(ctx, &all, self.spec.beta, "ucb_cvs")?;
        let ucb: Vec<f64> = maxima.iter().map(|m| m.value).collect();
        let eps = self.spec.epsilon.at(ctx.iteration);
        let costs = self.setup.known_costs("ucb_cvs")?;
        let i = ucb_cvs_choice(&ucb, costs, eps);
        self.diagnostics = Diagnostics::from([
            ("cvs.epsilon".to_string(), eps),
            ("cvs.set".to_string(), i as f64),
            ("cvs.expected_ucb".to_string(), ucb[i]),
        ]);
        Ok(Decision::Evaluate(Query {
            control_set: Some(i),
            x: maxima[i].x.clone(),
        }))
    }

    fn diagnostics(&self) -> Diagnostics {
        self.diagnostics.clone()
    }

    cabo_core::stateless_checkpoint!("ucb_cvs");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedules() {
        let c = EpsilonSchedule::Constant { value: 0.3 };
        assert_eq!(c.at(1), 0.3);
        assert_eq!(c.at(100), 0.3);
        let l = EpsilonSchedule::Linear {
            start: 1.0,
            iterations: 4,
        };
        assert_eq!(
            (1..=6).map(|t| l.at(t)).collect::<Vec<_>>(),
            vec![1.0, 0.75, 0.5, 0.25, 0.0, 0.0]
        );
        let v = EpsilonSchedule::List {
            values: vec![0.5, 0.2],
        };
        assert_eq!(
            (1..=3).map(|t| v.at(t)).collect::<Vec<_>>(),
            vec![0.5, 0.2, 0.0]
        );
        assert!(
            EpsilonSchedule::Constant { value: -1.0 }
                .validate()
                .is_err()
        );
        assert!(
            EpsilonSchedule::Linear {
                start: 1.0,
                iterations: 0
            }
            .validate()
            .is_err()
        );
    }

    #[test]
    fn relaxation_picks_the_cheapest_set_within_epsilon() {
        let ucb = [1.0, 1.2, 2.0];
        let costs = [0.1, 0.1, 1.0];
        // ε = 0: only the best set qualifies.
        assert_eq!(ucb_cvs_choice(&ucb, &costs, 0.0), 2);
        // ε = 0.85: sets 1 and 2 qualify, set 1 is cheaper.
        assert_eq!(ucb_cvs_choice(&ucb, &costs, 0.85), 1);
        // ε = 1: all qualify; among the cheapest (0, 1) the larger UCB wins.
        assert_eq!(ucb_cvs_choice(&ucb, &costs, 1.0), 1);
    }
}
