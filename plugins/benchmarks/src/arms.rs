//! Seed 001's Theorem 1 instances (App. A): independent normal arms with known costs on
//! which EI-PUC (part 1) or EI (part 2) does arbitrarily worse than the optimal policy.
//!
//! With ε, δ > 0 and K = ⌈(1 + δ)/ε⌉ the arms are 0, …, K + 1: arm 0 is the measured
//! status quo with value 0 (a spec measures it in its initial design); arms 1..K are
//! "low-variance, low-cost" with f ~ N(0, ε²) (part `ei_puc`) or N(0, (1 − ε)²) (part `ei`)
//! and cost ε; arm K + 1 is "high-variance, high-cost" with f ~ N(0, 1) and cost 1 + δ. The
//! paper's budget is 1 + δ (set it in the spec's `budget:`). Values are drawn from the
//! replication seed; costs are known to the learner.

use crate::finite::{ArmCosts, arm_points, evaluate_arm};
use cabo_core::{
    Domain, Error, Outcome, Problem, ProblemInfo, ProblemSpec, Query, Result, Rng, derive_seed,
};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Which half of Theorem 1's proof the instance reproduces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Theorem1Part {
    /// Part 1: cheap arms have variance ε², trapping EI-PUC.
    EiPuc,
    /// Part 2: cheap arms have variance (1 − ε)², trapping EI.
    Ei,
}

/// Spec of [`Theorem1Arms`] (`problem: { type: theorem1_arms, epsilon: 0.1, delta: 0.5 }`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Theorem1Spec {
    /// ε ∈ (0, 1): cost of a cheap arm (and its standard deviation in part 1).
    pub epsilon: f64,
    /// δ > 0: the expensive arm costs 1 + δ, which is also the paper's budget.
    pub delta: f64,
    /// `ei_puc` (default) or `ei`.
    #[serde(default = "default_part")]
    pub part: Theorem1Part,
}

fn default_part() -> Theorem1Part {
    Theorem1Part::EiPuc
}

impl Theorem1Spec {
    fn k(&self) -> Result<usize> {
        if !(self.epsilon.is_finite() && self.epsilon > 0.0 && self.epsilon < 1.0) {
            return Err(Error::invalid(format!(
                "theorem1_arms.epsilon: must lie in (0, 1), got {}",
                self.epsilon
            )));
        }
        if !(self.delta.is_finite() && self.delta > 0.0) {
            return Err(Error::invalid(format!(
                "theorem1_arms.delta: must be finite and > 0, got {}",
                self.delta
            )));
        }
        let k = ((1.0 + self.delta) / self.epsilon).ceil();
        if k > 1e6 {
            return Err(Error::invalid(format!(
                "theorem1_arms.epsilon: (1 + δ)/ε = {k} cheap arms is more than 10⁶"
            )));
        }
        Ok(k as usize)
    }
}

#[cabo_core::plugin(
    name = "theorem1_arms",
    summary = "Independent normal arms with known costs (K cheap low-variance, one expensive high-variance, arm 0 measured at 0) on which EI-PUC or EI fails",
    paper = "seed 001 §3 Theorem 1, App. A",
    example = "{ type: theorem1_arms, epsilon: 0.1, delta: 0.5, part: ei_puc }"
)]
impl ProblemSpec for Theorem1Spec {
    fn dim(&self) -> Result<usize> {
        self.k()?;
        Ok(1)
    }
    fn build(&self, seed: u64) -> Result<Box<dyn Problem>> {
        let k = self.k()?;
        let n = k + 2;
        let cheap_std = match self.part {
            Theorem1Part::EiPuc => self.epsilon,
            Theorem1Part::Ei => 1.0 - self.epsilon,
        };
        let mut stds = vec![cheap_std; n];
        stds[0] = 0.0;
        stds[n - 1] = 1.0;
        let mut costs = vec![self.epsilon; n];
        costs[n - 1] = 1.0 + self.delta;
        let mut rng = Rng::new(derive_seed(&[&"theorem1_arms", &seed]));
        let values: Vec<f64> = stds.iter().map(|s| s * rng.normal()).collect();
        let cost = Arc::new(ArmCosts { costs });
        let mut info = ProblemInfo::continuous(format!("theorem1_arms(K={k}, {:?})", self.part), 1);
        info.domain = Domain::Finite(arm_points(n));
        info.known_cost = Some(cost.clone());
        Ok(Box::new(Theorem1Arms {
            info,
            stds,
            values,
            cost,
        }))
    }
}

/// One draw of a Theorem 1 instance.
#[derive(Debug)]
pub struct Theorem1Arms {
    info: ProblemInfo,
    stds: Vec<f64>,
    values: Vec<f64>,
    cost: Arc<ArmCosts>,
}

impl Theorem1Arms {
    /// Prior standard deviation of each arm (0 for the measured arm 0).
    pub fn prior_stds(&self) -> &[f64] {
        &self.stds
    }
    /// Known cost of each arm.
    pub fn costs(&self) -> &[f64] {
        &self.cost.costs
    }
}

impl Problem for Theorem1Arms {
    fn info(&self) -> &ProblemInfo {
        &self.info
    }
    fn evaluate(&self, query: &Query, _seed: u64) -> Result<Outcome> {
        evaluate_arm(&self.info.name, query, &self.values, &self.cost)
    }
    fn optimum(&self) -> Option<f64> {
        self.values.iter().copied().reduce(f64::max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build(json: &str, seed: u64) -> Box<dyn Problem> {
        serde_json::from_str::<Box<dyn ProblemSpec>>(json)
            .unwrap()
            .build(seed)
            .unwrap()
    }

    #[test]
    fn instance_has_the_papers_structure() {
        let p = build(r#"{"type":"theorem1_arms","epsilon":0.1,"delta":0.5}"#, 1);
        // K = ⌈1.5/0.1⌉ = 15 cheap arms, plus arm 0 and the expensive arm.
        let Domain::Finite(c) = &p.info().domain else {
            panic!()
        };
        assert_eq!(c.len(), 17);
        let a = p.as_any().downcast_ref::<Theorem1Arms>().unwrap();
        assert_eq!(a.costs()[16], 1.5);
        assert!(a.costs()[1..16].iter().all(|c| *c == 0.1));
        assert_eq!(a.prior_stds()[0], 0.0);
        assert_eq!(a.prior_stds()[16], 1.0);
        let arm0 = p.evaluate(&Query::at(vec![0.0]), 0).unwrap();
        assert_eq!(arm0.y, 0.0);
        let last = p.evaluate(&Query::at(vec![1.0]), 0).unwrap();
        assert_eq!(last.cost, 1.5);
        assert_eq!(p.info().known_cost.as_ref().unwrap().cost(&[1.0]), 1.5);
        assert!(p.optimum().unwrap() >= 0.0);
        assert!(p.evaluate(&Query::at(vec![0.5 / 16.0]), 0).is_err());
    }

    #[test]
    fn arm_values_have_the_stated_spread() {
        // Across replications the cheap arms are N(0, ε²) (part 1) or N(0, (1−ε)²) (part 2).
        for (part, sd) in [("ei_puc", 0.2), ("ei", 0.8)] {
            let json =
                format!(r#"{{"type":"theorem1_arms","epsilon":0.2,"delta":0.4,"part":"{part}"}}"#);
            let (mut s2, mut big2, mut n) = (0.0, 0.0, 0.0);
            for seed in 0..1000 {
                let p = build(&json, seed);
                s2 += p
                    .evaluate(&Query::at(vec![1.0 / 8.0]), 0)
                    .unwrap()
                    .y
                    .powi(2);
                big2 += p.evaluate(&Query::at(vec![1.0]), 0).unwrap().y.powi(2);
                n += 1.0;
            }
            // Relative standard error of a variance estimate with n = 1000: √(2/n) ≈ 0.045.
            assert!(
                (s2 / n / (sd * sd) - 1.0).abs() < 0.18,
                "{part}: {}",
                s2 / n
            );
            assert!((big2 / n - 1.0).abs() < 0.18, "{part}: {}", big2 / n);
        }
    }

    #[test]
    fn bad_parameters_name_their_key() {
        let err = |json: &str| {
            serde_json::from_str::<Box<dyn ProblemSpec>>(json)
                .unwrap()
                .dim()
                .unwrap_err()
                .to_string()
        };
        assert!(err(r#"{"type":"theorem1_arms","epsilon":0,"delta":0.5}"#).contains("epsilon"));
        assert!(err(r#"{"type":"theorem1_arms","epsilon":0.1,"delta":-1}"#).contains("delta"));
    }
}
