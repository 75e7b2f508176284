//! Pest Control (Oh et al. 2019, COMBO; seed 000 App. C, d = 25): at each of 25 stages a
//! farmer applies no pesticide or one of four, each with its price, its effect and a
//! tolerance the pests develop; the objective penalises the money spent and the stages at
//! which pests are widespread.
//!
//! # The simulation
//! Each input x_i ∈ \[0,1\] chooses the treatment of stage i, `t_i = min(⌊5 x_i⌋, 4)` (0 is
//! none), so models see a continuous relaxation of a categorical problem. 100 simulated
//! fields start with pest fractions p ~ Beta(1, 30). At stage i, with spread rate
//! s ~ Beta(1, 17/3):
//! - no treatment: p ← p + s (1 − p);
//! - treatment t: p ← (1 − r) p with r ~ Beta(1, β_t), where β starts at (2, 3, 3, 5)/7 for
//!   t = 1…4 and grows by (1, 2.5, 2, 0.5)/7 / 25 each time t is applied (the pests grow
//!   tolerant), and the stage costs price_t · (1 − discount_t / 25 · n_t), with prices
//!   (1, 0.8, 0.7, 0.5), discounts (0.2, 0.3, 0.3, 0) and n_t the number of stages that
//!   apply t (a volume discount).
//!
//! Before each stage's update, the fraction of fields with p > 0.1 is added to the penalty.
//! The objective (maximised) is −(money spent + Σ_i that fraction).
//!
//! # Random numbers
//! Every draw comes from cabo's stream of the replication's seed, so within a replication
//! the objective is a deterministic function of x (noise-free, as in the papers). The
//! reference code instead re-creates one fixed-seed NumPy stream for every draw, so all of
//! its stages share the same uniform numbers; the two simulations have the same dynamics
//! and distributions but are different functions, so compare policies' rankings and curves
//! with the paper's, not the objective's values.
//!
//! # Cost
//! The cost-aware experiment charges the money spent (a known cost, published in
//! `ProblemInfo::known_cost`). It is 0 for a plan with no treatment at all, and cabo needs
//! positive costs, so it is floored at `min_cost` (default 0.1, a fifth of the cheapest
//! single treatment).

use crate::synthetic::check_unit_query;
use cabo_core::{
    CostFunction, Error, Outcome, Problem, ProblemInfo, ProblemSpec, Query, Result, Rng,
    derive_seed,
};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Number of treatment choices (0 = none).
pub const CHOICES: usize = 5;
/// Price of each treatment.
pub const PRICE: [f64; CHOICES] = [0.0, 1.0, 0.8, 0.7, 0.5];
/// Largest volume discount of each treatment.
pub const DISCOUNT: [f64; CHOICES] = [0.0, 0.2, 0.3, 0.3, 0.0];
/// Initial β of each treatment's effect, Beta(1, β).
const CONTROL_BETA: [f64; CHOICES] = [0.0, 2.0 / 7.0, 3.0 / 7.0, 3.0 / 7.0, 5.0 / 7.0];
/// Growth of β over all stages as pests develop tolerance.
const TOLERANCE: [f64; CHOICES] = [0.0, 1.0 / 7.0, 2.5 / 7.0, 2.0 / 7.0, 0.5 / 7.0];
/// Pest fraction above which a field counts as infested.
pub const THRESHOLD: f64 = 0.1;

/// The treatment an input in \[0,1\] chooses.
pub fn treatment(x: f64) -> usize {
    ((CHOICES as f64 * x).floor().max(0.0) as usize).min(CHOICES - 1)
}

/// The money spent on the plan `treatments` (one per stage).
pub fn price(treatments: &[usize]) -> f64 {
    let stages = treatments.len() as f64;
    let mut count = [0usize; CHOICES];
    for &t in treatments {
        count[t] += 1;
    }
    treatments
        .iter()
        .map(|&t| PRICE[t] * (1.0 - DISCOUNT[t] / stages * count[t] as f64))
        .sum()
}

/// A draw of Beta(1, b) by inversion: F(x) = 1 − (1 − x)^b.
pub fn beta_1(b: f64, rng: &mut Rng) -> f64 {
    1.0 - rng.uniform_open().powf(1.0 / b)
}

/// The fraction of the `simulations` fields infested before each stage of `treatments`,
/// the stream seeded by `seed`.
pub fn infested_fractions(treatments: &[usize], simulations: usize, seed: u64) -> Vec<f64> {
    let stages = treatments.len() as f64;
    let mut rng = Rng::new(seed);
    let mut pests: Vec<f64> = (0..simulations).map(|_| beta_1(30.0, &mut rng)).collect();
    let mut beta = CONTROL_BETA;
    let mut fractions = Vec::with_capacity(treatments.len());
    for &t in treatments {
        let infested = pests.iter().filter(|&&p| p > THRESHOLD).count();
        fractions.push(infested as f64 / simulations as f64);
        for p in &mut pests {
            let spread = beta_1(17.0 / 3.0, &mut rng);
            *p = if t == 0 {
                *p + spread * (1.0 - *p)
            } else {
                (1.0 - beta_1(beta[t], &mut rng)) * *p
            };
        }
        if t > 0 {
            beta[t] += TOLERANCE[t] / stages;
        }
    }
    fractions
}

/// Spec of [`PestControl`] (`problem: { type: pest_control }`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PestControlSpec {
    /// Stages, one input each; default 25.
    #[serde(default = "default_stages")]
    pub stages: usize,
    /// Simulated fields; default 100.
    #[serde(default = "default_simulations")]
    pub simulations: usize,
    /// Floor of the charged cost (a plan with no treatment spends nothing); default 0.1.
    #[serde(default = "default_min_cost")]
    pub min_cost: f64,
}

/// Range of `stages`: one input each, so the bound is the synthetic problems' dimension
/// bound; COMBO's problem has 25.
pub const STAGES: std::ops::RangeInclusive<usize> = 1..=crate::synthetic::MAX_DIM;
/// Range of `simulations`: every evaluation simulates each field over every stage; 1000
/// times COMBO's 100.
pub const SIMULATIONS: std::ops::RangeInclusive<usize> = 1..=100_000;

fn default_stages() -> usize {
    25
}
fn default_simulations() -> usize {
    100
}
fn default_min_cost() -> f64 {
    0.1
}

impl PestControlSpec {
    fn check(&self) -> Result<()> {
        if self.stages == 0 || self.simulations == 0 {
            return Err(Error::invalid(
                "pest_control: stages and simulations must be at least 1",
            ));
        }
        cabo_core::check_count("pest_control.stages", self.stages, STAGES)?;
        cabo_core::check_count("pest_control.simulations", self.simulations, SIMULATIONS)?;
        if !(self.min_cost.is_finite() && self.min_cost > 0.0) {
            return Err(Error::invalid(format!(
                "pest_control.min_cost: must be finite and > 0 (costs must be positive), got {}",
                self.min_cost
            )));
        }
        Ok(())
    }
}

#[cabo_core::plugin(
    name = "pest_control",
    summary = "Pest Control (COMBO): a treatment per stage, value -(money spent + infested fraction summed over stages), known cost = money spent",
    paper = "seed 000 App. C (Fig. 6), after Oh et al. 2019",
    example = "{ type: pest_control }"
)]
impl ProblemSpec for PestControlSpec {
    fn dim(&self) -> Result<usize> {
        self.check()?;
        Ok(self.stages)
    }
    fn build(&self, seed: u64) -> Result<Box<dyn Problem>> {
        self.check()?;
        let cost = Arc::new(PestPrice {
            min_cost: self.min_cost,
        });
        let mut info = ProblemInfo::continuous("pest_control", self.stages);
        info.known_cost = Some(cost.clone());
        Ok(Box::new(PestControl {
            info,
            simulations: self.simulations,
            seed: derive_seed(&[&seed, &"pest_control"]),
            cost,
        }))
    }
}

/// The money a plan spends, floored at `min_cost`: the known cost of Pest Control.
#[derive(Debug, Clone, Copy)]
pub struct PestPrice {
    /// The floor.
    pub min_cost: f64,
}

impl CostFunction for PestPrice {
    fn cost(&self, x: &[f64]) -> f64 {
        let plan: Vec<usize> = x.iter().map(|&v| treatment(v)).collect();
        price(&plan).max(self.min_cost)
    }
    /// Piecewise constant in x: its gradient is 0 wherever it exists.
    fn cost_grad(&self, x: &[f64], grad: &mut [f64]) -> f64 {
        grad.iter_mut().for_each(|g| *g = 0.0);
        self.cost(x)
    }
}

/// One replication of Pest Control.
#[derive(Debug)]
pub struct PestControl {
    info: ProblemInfo,
    simulations: usize,
    seed: u64,
    cost: Arc<PestPrice>,
}

impl Problem for PestControl {
    fn info(&self) -> &ProblemInfo {
        &self.info
    }
    fn evaluate(&self, query: &Query, _seed: u64) -> Result<Outcome> {
        check_unit_query("pest_control", self.info.dim, query)?;
        let plan: Vec<usize> = query.x.iter().map(|&v| treatment(v)).collect();
        let infested: f64 = infested_fractions(&plan, self.simulations, self.seed)
            .iter()
            .sum();
        let value = -(price(&plan) + infested);
        Ok(Outcome::new(
            value,
            self.cost.cost(&query.x),
            query.x.clone(),
            Some(value),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_choose_treatments_in_fifths() {
        assert_eq!(
            [0.0, 0.19, 0.2, 0.59, 0.6, 0.99, 1.0].map(treatment),
            [0, 0, 1, 2, 3, 4, 4]
        );
    }

    #[test]
    fn the_price_has_the_volume_discount() {
        // Treatment 2 twice in 4 stages: 0.8 · (1 − 0.3/4 · 2) each; treatment 4 has none.
        let p = price(&[2, 0, 2, 4]);
        assert!((p - (2.0 * 0.8 * (1.0 - 0.15) + 0.5)).abs() < 1e-15, "{p}");
        assert_eq!(price(&[0; 25]), 0.0);
    }

    /// Beta(1, b) has mean 1/(1 + b) and variance b/((1 + b)²(2 + b)): 200 000 draws agree
    /// within 5 standard errors.
    #[test]
    fn beta_draws_have_the_beta_moments() {
        let n = 200_000;
        for b in [30.0, 17.0 / 3.0, 2.0 / 7.0] {
            let mut rng = Rng::new(3);
            let draws: Vec<f64> = (0..n).map(|_| beta_1(b, &mut rng)).collect();
            let mean = draws.iter().sum::<f64>() / n as f64;
            let var = b / ((1.0 + b).powi(2) * (2.0 + b));
            let se = (var / n as f64).sqrt();
            assert!((mean - 1.0 / (1.0 + b)).abs() < 5.0 * se, "b = {b}: {mean}");
            assert!(draws.iter().all(|d| (0.0..=1.0).contains(d)));
        }
    }

    /// Before the first stage a field is infested with probability P(Beta(1, 30) > 0.1) =
    /// 0.9³⁰; after a stage without treatment, 1 − p = (1 − s)(1 − p₀) with the two factors
    /// distributed as U^{3/17} and U^{1/30}, whose product is below 0.9 with probability
    /// 1 − ∫ P(U^{1/30} < 0.9/y) dF(y) computed by quadrature here.
    #[test]
    fn infested_fractions_match_the_closed_forms() {
        let sims = 400_000;
        let f = infested_fractions(&[0, 0], sims, 11);
        let se = |p: f64| (p * (1.0 - p) / sims as f64).sqrt();
        let p0 = 0.9f64.powi(30);
        assert!((f[0] - p0).abs() < 5.0 * se(p0), "{} vs {p0}", f[0]);
        // P(Y ≥ 0.9) with Y = A·B, A = 1 − s (density (17/3) a^{14/3}), B = 1 − p₀ (CDF b³⁰).
        let k = 17.0 / 3.0;
        let steps = 200_000;
        let mut not_infested = 0.0;
        for i in 0..steps {
            let a = 0.9 + (i as f64 + 0.5) / steps as f64 * 0.1;
            let density = k * a.powf(k - 1.0);
            let p_b_above = 1.0 - (0.9 / a).min(1.0).powi(30);
            not_infested += density * p_b_above * 0.1 / steps as f64;
        }
        let p1 = 1.0 - not_infested;
        assert!((f[1] - p1).abs() < 5.0 * se(p1), "{} vs {p1}", f[1]);
    }

    #[test]
    fn treating_lowers_the_infestation_and_the_objective_is_deterministic() {
        let spec = PestControlSpec {
            stages: 25,
            simulations: 100,
            min_cost: 0.1,
        };
        let p = spec.build(5).unwrap();
        let none = p.evaluate(&Query::at(vec![0.0; 25]), 0).unwrap();
        let again = p.evaluate(&Query::at(vec![0.0; 25]), 99).unwrap();
        assert_eq!(none.y.to_bits(), again.y.to_bits());
        assert_eq!(none.cost, 0.1, "a plan spending nothing costs the floor");
        let treat = p.evaluate(&Query::at(vec![0.9; 25]), 0).unwrap();
        let plan = vec![4; 25];
        let infested: f64 = infested_fractions(&plan, 100, derive_seed(&[&5u64, &"pest_control"]))
            .iter()
            .sum();
        assert_eq!(treat.y, -(price(&plan) + infested));
        assert!(infested < 5.0, "{infested}");
        assert!(none.y < -20.0, "untreated pests spread: {}", none.y);
        let known = p.info().known_cost.as_ref().unwrap();
        assert_eq!(known.cost(&[0.9; 25]), treat.cost);
        assert!((treat.cost - 25.0 * 0.5).abs() < 1e-12);
    }
}
