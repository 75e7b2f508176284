//! Pandora's-box instances: finitely many independent boxes, each with a known opening cost
//! and a reward distribution (discrete or normal). A replication draws every box's reward;
//! opening box i (querying its arm point) reveals it and charges its cost.
//!
//! [`PandoraInstance`] is public and attached to the problem's info as an extension, so an
//! exact solver (Weitzman's index policy, a dynamic program) can be written against it.

use crate::finite::{ArmCosts, arm_points, evaluate_arm};
use cabo_core::{
    Domain, Error, Outcome, Problem, ProblemInfo, ProblemSpec, Query, Result, Rng, derive_seed,
};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The reward distribution of one box.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Reward {
    /// Finitely many values with probabilities (normalised if they do not sum to 1).
    Discrete {
        /// The possible rewards.
        values: Vec<f64>,
        /// Their probabilities (non-negative, positive sum).
        probs: Vec<f64>,
    },
    /// A normal distribution.
    Normal {
        /// Mean.
        mean: f64,
        /// Standard deviation (≥ 0).
        std: f64,
    },
}

impl Reward {
    fn validate(&self, key: &str) -> Result<()> {
        match self {
            Reward::Discrete { values, probs } => {
                if values.is_empty() || values.len() != probs.len() {
                    return Err(Error::invalid(format!(
                        "{key}: needs as many probs as values (at least one), got {} and {}",
                        values.len(),
                        probs.len()
                    )));
                }
                if values.iter().any(|v| !v.is_finite())
                    || probs.iter().any(|p| !(p.is_finite() && *p >= 0.0))
                    || probs.iter().sum::<f64>() <= 0.0
                {
                    return Err(Error::invalid(format!(
                        "{key}: values must be finite and probs ≥ 0 with a positive sum"
                    )));
                }
            }
            Reward::Normal { mean, std } => {
                if !(mean.is_finite() && std.is_finite() && *std >= 0.0) {
                    return Err(Error::invalid(format!(
                        "{key}: need a finite mean and std ≥ 0, got {mean} and {std}"
                    )));
                }
            }
        }
        Ok(())
    }

    /// One draw.
    pub fn sample(&self, rng: &mut Rng) -> f64 {
        match self {
            Reward::Discrete { values, probs } => {
                let total: f64 = probs.iter().sum();
                let mut u = rng.uniform() * total;
                for (v, p) in values.iter().zip(probs) {
                    if u < *p {
                        return *v;
                    }
                    u -= p;
                }
                // Rounding can leave u a hair above the last probability.
                *values
                    .iter()
                    .zip(probs)
                    .rev()
                    .find(|(_, p)| **p > 0.0)
                    .unwrap()
                    .0
            }
            Reward::Normal { mean, std } => mean + std * rng.normal(),
        }
    }

    /// The mean of the distribution.
    pub fn mean(&self) -> f64 {
        match self {
            Reward::Discrete { values, probs } => {
                let total: f64 = probs.iter().sum();
                values.iter().zip(probs).map(|(v, p)| v * p).sum::<f64>() / total
            }
            Reward::Normal { mean, .. } => *mean,
        }
    }
}

/// One box: its opening cost and reward distribution.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PandoraBox {
    /// Cost of opening the box (> 0).
    pub cost: f64,
    /// Distribution of the reward inside.
    pub reward: Reward,
}

/// A Pandora's-box instance: box i sits at the arm point `i/(n−1)`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PandoraInstance {
    /// The boxes.
    pub boxes: Vec<PandoraBox>,
}

/// Spec of [`PandoraProblem`]:
/// `problem: { type: pandora, boxes: [{ cost: 1, reward: { type: normal, mean: 0, std: 1 } }] }`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PandoraSpec {
    /// The boxes (at least one).
    pub boxes: Vec<PandoraBox>,
}

impl PandoraSpec {
    fn check(&self) -> Result<()> {
        if self.boxes.is_empty() {
            return Err(Error::invalid("pandora.boxes: needs at least one box"));
        }
        for (i, b) in self.boxes.iter().enumerate() {
            if !(b.cost.is_finite() && b.cost > 0.0) {
                return Err(Error::invalid(format!(
                    "pandora.boxes[{i}].cost: must be finite and > 0, got {}",
                    b.cost
                )));
            }
            b.reward.validate(&format!("pandora.boxes[{i}].reward"))?;
        }
        Ok(())
    }
}

#[cabo_core::plugin(
    name = "pandora",
    summary = "Pandora's boxes: independent rewards (discrete or normal) with known opening costs, drawn per replication",
    paper = "seed 000 §3 (Pandora's box, Weitzman 1979)",
    example = "{ type: pandora, boxes: [{ cost: 0.2, reward: { type: normal, mean: 0, std: 1 } }, { cost: 0.05, reward: { type: discrete, values: [0, 1], probs: [0.9, 0.1] } }] }"
)]
impl ProblemSpec for PandoraSpec {
    fn dim(&self) -> Result<usize> {
        self.check()?;
        Ok(1)
    }
    fn build(&self, seed: u64) -> Result<Box<dyn Problem>> {
        self.check()?;
        let instance = PandoraInstance {
            boxes: self.boxes.clone(),
        };
        let mut rng = Rng::new(derive_seed(&[&"pandora", &seed]));
        let rewards: Vec<f64> = instance
            .boxes
            .iter()
            .map(|b| b.reward.sample(&mut rng))
            .collect();
        let cost = Arc::new(ArmCosts {
            costs: instance.boxes.iter().map(|b| b.cost).collect(),
        });
        let n = instance.boxes.len();
        let mut info = ProblemInfo::continuous(format!("pandora({n} boxes)"), 1)
            .with_extension(instance.clone());
        info.domain = Domain::Finite(arm_points(n));
        info.known_cost = Some(cost.clone());
        Ok(Box::new(PandoraProblem {
            info,
            instance,
            rewards,
            cost,
        }))
    }
}

/// One replication of a Pandora's-box instance.
#[derive(Debug)]
pub struct PandoraProblem {
    info: ProblemInfo,
    instance: PandoraInstance,
    rewards: Vec<f64>,
    cost: Arc<ArmCosts>,
}

impl PandoraProblem {
    /// The instance (distributions and costs) — what a learner may know.
    pub fn instance(&self) -> &PandoraInstance {
        &self.instance
    }
}

impl Problem for PandoraProblem {
    fn info(&self) -> &ProblemInfo {
        &self.info
    }
    fn evaluate(&self, query: &Query, _seed: u64) -> Result<Outcome> {
        evaluate_arm(&self.info.name, query, &self.rewards, &self.cost)
    }
    fn optimum(&self) -> Option<f64> {
        self.rewards.iter().copied().reduce(f64::max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: &str = r#"{"type":"pandora","boxes":[
        {"cost":0.2,"reward":{"type":"normal","mean":1.0,"std":2.0}},
        {"cost":0.05,"reward":{"type":"discrete","values":[0,1,5],"probs":[0.5,0.3,0.2]}}]}"#;

    #[test]
    fn rewards_follow_their_distributions() {
        let spec: Box<dyn ProblemSpec> = serde_json::from_str(SPEC).unwrap();
        let n = 4000;
        let (mut m0, mut counts) = (0.0, [0usize; 3]);
        for seed in 0..n {
            let p = spec.build(seed).unwrap();
            m0 += p.evaluate(&Query::at(vec![0.0]), 0).unwrap().y / n as f64;
            let o = p.evaluate(&Query::at(vec![1.0]), 0).unwrap();
            assert_eq!(o.cost, 0.05);
            counts[[0.0, 1.0, 5.0].iter().position(|v| *v == o.y).unwrap()] += 1;
            assert_eq!(
                p.optimum().unwrap(),
                p.evaluate(&Query::at(vec![0.0]), 0).unwrap().y.max(o.y)
            );
        }
        // Mean 1 with standard error 2/√4000 ≈ 0.032; frequencies with SE ≤ 0.008.
        assert!((m0 - 1.0).abs() < 4.0 * 0.032, "{m0}");
        for (c, p) in counts.iter().zip([0.5, 0.3, 0.2]) {
            assert!((*c as f64 / n as f64 - p).abs() < 4.0 * 0.008, "{counts:?}");
        }
    }

    #[test]
    fn instance_is_exposed_to_learners() {
        let spec: Box<dyn ProblemSpec> = serde_json::from_str(SPEC).unwrap();
        let p = spec.build(0).unwrap();
        let inst = p.info().extension::<PandoraInstance>().unwrap();
        assert_eq!(inst.boxes.len(), 2);
        assert!((inst.boxes[1].reward.mean() - 1.3).abs() < 1e-12);
        assert_eq!(p.info().known_cost.as_ref().unwrap().cost(&[0.0]), 0.2);
    }

    #[test]
    fn bad_boxes_name_their_key() {
        let err = |json: &str| {
            serde_json::from_str::<Box<dyn ProblemSpec>>(json)
                .unwrap()
                .dim()
                .unwrap_err()
                .to_string()
        };
        assert!(err(r#"{"type":"pandora","boxes":[]}"#).contains("pandora.boxes"));
        assert!(err(r#"{"type":"pandora","boxes":[{"cost":0,"reward":{"type":"normal","mean":0,"std":1}}]}"#).contains("boxes[0].cost"));
        assert!(err(r#"{"type":"pandora","boxes":[{"cost":1,"reward":{"type":"discrete","values":[1],"probs":[]}}]}"#).contains("boxes[0].reward"));
    }
}
