//! Known cost functions a spec can attach to any problem (`cost: { type: … }`), with
//! gradients, and the optional observation noise on charged costs.
//!
//! - `linear_mean`: c(x) = scale · (offset + mean x) (seed 000's code: 20 · (0.05 + mean x),
//!   ranging over [1, 21]).
//! - `cosine`: seed 001's family ln c(x) = a · mean_i cos(b · (2π/P) · (x̃ᵢ − x*ᵢ + c)), with
//!   a ~ U[0.75, 1.5], b ~ U[1, 3], c ~ U[0, 2π] drawn from the replication seed and x̃ the
//!   point in the problem's own units.
//! - `uniform`: c(x) = value.
//! - `bump_cost`: low + (high − low) · bump(x̃), the narrow bump of seed 000 Fig. 2/8.
//! - `max_input`: c(x) = max over listed inputs i of x̃ᵢ, the point's own coordinates in
//!   native units (seed 000's robot pushing: the longer of the two robots' durations).
//!
//! Every one takes `noise: { std, min, max }`: the charged cost is then
//! clip(c(x) + std · N(0,1), min, max) (seed 004: std 0.01, min 0.001, max 2), while
//! [`CostFunction::cost`] stays the noise-free mean a learner may be told.

use crate::bump::Bump;
use crate::synthetic::SyntheticProblem;
use cabo_core::{CostFunction, CostFunctionSpec, Error, Problem, Result, Rng, derive_seed};
use serde::{Deserialize, Serialize};
use std::f64::consts::TAU;

/// Observation noise on charged costs: clip(c + std · N(0,1), min, max).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CostNoise {
    /// Standard deviation of the additive Gaussian noise (seed 004: 0.01).
    pub std: f64,
    /// Lower clip, keeping costs positive; default 0.001 (seed 004).
    #[serde(default = "default_min")]
    pub min: f64,
    /// Upper clip; default none (seed 004 uses 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
}

fn default_min() -> f64 {
    1e-3
}

impl CostNoise {
    fn validate(&self, key: &str) -> Result<()> {
        let max = self.max.unwrap_or(f64::INFINITY);
        if !(self.std.is_finite() && self.std >= 0.0) {
            return Err(Error::invalid(format!(
                "{key}.noise.std: must be finite and ≥ 0, got {}",
                self.std
            )));
        }
        if !(self.min.is_finite() && self.min > 0.0 && self.min < max) {
            return Err(Error::invalid(format!(
                "{key}.noise: need 0 < min < max, got min = {}, max = {max}",
                self.min
            )));
        }
        Ok(())
    }

    /// One noisy observation of a cost whose mean is `mean`, driven by `seed`.
    pub fn observe(&self, mean: f64, seed: u64) -> f64 {
        let v = mean + self.std * Rng::new(seed).normal();
        v.clamp(self.min, self.max.unwrap_or(f64::INFINITY))
    }
}

/// The smallest cost charged by a cost function whose noise-free costs are at least `base`:
/// noisy costs are clipped below at `noise.min`, which may be smaller.
fn noise_floor(base: f64, noise: &Option<CostNoise>) -> f64 {
    noise.as_ref().map_or(base, |n| n.min)
}

/// A cost function whose charged costs carry [`CostNoise`].
#[derive(Debug)]
pub struct NoisyCost {
    inner: Box<dyn CostFunction>,
    noise: CostNoise,
}

impl CostFunction for NoisyCost {
    fn cost(&self, x: &[f64]) -> f64 {
        self.inner.cost(x)
    }
    fn cost_grad(&self, x: &[f64], grad: &mut [f64]) -> f64 {
        self.inner.cost_grad(x, grad)
    }
    fn observe(&self, x: &[f64], seed: u64) -> f64 {
        self.noise.observe(self.inner.cost(x), seed)
    }
}

fn with_noise(
    c: Box<dyn CostFunction>,
    noise: &Option<CostNoise>,
    key: &str,
) -> Result<Box<dyn CostFunction>> {
    match noise {
        None => Ok(c),
        Some(n) => {
            n.validate(key)?;
            Ok(Box::new(NoisyCost {
                inner: c,
                noise: *n,
            }))
        }
    }
}

/// The per-coordinate affine map of a problem's `to_native`: lower ends and widths.
///
/// Every box-shaped problem maps the cube coordinate-wise affinely; a problem that does
/// not is rejected, since the gradients below rely on it.
fn native_affine(problem: &dyn Problem, key: &str) -> Result<(Vec<f64>, Vec<f64>)> {
    let d = problem.info().dim;
    let lo = problem.to_native(&vec![0.0; d]);
    let hi = problem.to_native(&vec![1.0; d]);
    let mid = problem.to_native(&vec![0.5; d]);
    if lo.len() != d || hi.len() != d || mid.len() != d {
        return Err(Error::invalid(format!(
            "{key}: the problem's native coordinates do not have its dimension {d}"
        )));
    }
    let width: Vec<f64> = hi.iter().zip(&lo).map(|(h, l)| h - l).collect();
    for i in 0..d {
        let want = lo[i] + 0.5 * width[i];
        if (mid[i] - want).abs() > 1e-9 * (1.0 + want.abs()) {
            return Err(Error::invalid(format!(
                "{key}: needs a problem whose native coordinates are an affine map of the cube"
            )));
        }
    }
    Ok((lo, width))
}

// ---------------------------------------------------------------------------------------

/// c(x) = scale · (offset + mean x).
#[derive(Debug, Clone, Copy)]
pub struct LinearMeanCost {
    /// Multiplier.
    pub scale: f64,
    /// Added to the mean before scaling (keeps c positive at x = 0).
    pub offset: f64,
}

impl CostFunction for LinearMeanCost {
    fn cost(&self, x: &[f64]) -> f64 {
        self.scale * (self.offset + x.iter().sum::<f64>() / x.len() as f64)
    }
    fn cost_grad(&self, x: &[f64], grad: &mut [f64]) -> f64 {
        let g = self.scale / x.len() as f64;
        grad.iter_mut().for_each(|v| *v = g);
        self.cost(x)
    }
}

/// Spec of [`LinearMeanCost`] (`cost: { type: linear_mean, scale: 20, offset: 0.05 }`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinearMeanSpec {
    /// Multiplier; default 20 (seed 000).
    #[serde(default = "twenty")]
    pub scale: f64,
    /// Offset added to mean x; default 0.05 (seed 000), so c ranges over [1, 21].
    #[serde(default = "five_hundredths")]
    pub offset: f64,
    /// Optional noise on charged costs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise: Option<CostNoise>,
}

fn twenty() -> f64 {
    20.0
}
fn five_hundredths() -> f64 {
    0.05
}

#[cabo_core::plugin(
    name = "linear_mean",
    summary = "Known cost scale*(offset + mean x); seed 000 uses 20*(0.05 + mean x), from 1 to 21",
    paper = "seed 000 App. C",
    example = "{ type: linear_mean, scale: 20, offset: 0.05 }"
)]
impl CostFunctionSpec for LinearMeanSpec {
    fn validate(&self, _dim: usize) -> Result<()> {
        if !(self.scale.is_finite() && self.scale > 0.0) {
            return Err(Error::invalid(format!(
                "linear_mean.scale: must be finite and > 0, got {}",
                self.scale
            )));
        }
        if !(self.offset.is_finite() && self.offset > 0.0) {
            return Err(Error::invalid(format!(
                "linear_mean.offset: must be finite and > 0 so the cost is positive at x = 0, got {}",
                self.offset
            )));
        }
        if let Some(n) = &self.noise {
            n.validate("linear_mean")?;
        }
        Ok(())
    }
    fn min_cost(&self) -> Option<f64> {
        Some(noise_floor(self.scale * self.offset, &self.noise))
    }
    fn build(&self, problem: &dyn Problem, _seed: u64) -> Result<Box<dyn CostFunction>> {
        self.validate(problem.info().dim)?;
        let c = LinearMeanCost {
            scale: self.scale,
            offset: self.offset,
        };
        with_noise(Box::new(c), &self.noise, "linear_mean")
    }
}

// ---------------------------------------------------------------------------------------

/// c(x) = exp(a · mean_i cos(ω (x̃ᵢ − x*ᵢ + c))) with ω = b · 2π / P and x̃ = lo + width · x.
#[derive(Debug, Clone)]
pub struct CosineCost {
    /// Amplitude of ln c.
    pub a: f64,
    /// Angular frequency ω = b · 2π / P, in radians per native unit.
    pub omega: f64,
    /// Phase shift c, in native units (as the paper writes it, inside the bracket).
    pub shift: f64,
    /// The centre x*, in native units, one per coordinate.
    pub center: Vec<f64>,
    /// Native lower ends, one per coordinate.
    pub lo: Vec<f64>,
    /// Native widths, one per coordinate.
    pub width: Vec<f64>,
}

impl CosineCost {
    fn theta(&self, i: usize, x: f64) -> f64 {
        self.omega * (self.lo[i] + self.width[i] * x - self.center[i] + self.shift)
    }
}

impl CostFunction for CosineCost {
    fn cost(&self, x: &[f64]) -> f64 {
        let n = x.len() as f64;
        let s: f64 = x
            .iter()
            .enumerate()
            .map(|(i, x)| self.theta(i, *x).cos())
            .sum();
        (self.a * s / n).exp()
    }
    fn cost_grad(&self, x: &[f64], grad: &mut [f64]) -> f64 {
        let c = self.cost(x);
        let n = x.len() as f64;
        for (i, (g, x)) in grad.iter_mut().zip(x).enumerate() {
            *g = -c * self.a / n * self.theta(i, *x).sin() * self.omega * self.width[i];
        }
        c
    }
}

/// Spec of [`CosineCost`] (`cost: { type: cosine }`): the parameters not given are drawn
/// from the replication seed (a, b, c) or taken from the problem (P, x*).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CosineSpec {
    /// Fixed amplitude a; default drawn from U[0.75, 1.5].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub a: Option<f64>,
    /// Fixed frequency multiplier b; default drawn from U[1, 3].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub b: Option<f64>,
    /// Fixed phase c; default drawn from U[0, 2π].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub c: Option<f64>,
    /// Period P in native units; default from the problem (DropWave 5.12, Alpine-1 10,
    /// Ackley 1, Shekel-5 4); required for other problems.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub period: Option<f64>,
    /// Centre x* in native units (one value for every coordinate, or one per coordinate);
    /// default the problem's maximiser (Shekel-5: 4), dummy inputs at their box centre.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub center: Option<Vec<f64>>,
    /// Optional noise on charged costs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise: Option<CostNoise>,
}

#[cabo_core::plugin(
    name = "cosine",
    summary = "Random cosine cost family ln c = a*mean cos(b*(2pi/P)*(x - x* + c)), a, b, c drawn per replication",
    paper = "seed 001 §5.1 and App. D",
    example = "{ type: cosine }"
)]
impl CostFunctionSpec for CosineSpec {
    fn validate(&self, dim: usize) -> Result<()> {
        for (key, v) in [("a", self.a), ("b", self.b), ("c", self.c)] {
            if let Some(v) = v
                && !v.is_finite()
            {
                return Err(Error::invalid(format!(
                    "cosine.{key}: must be finite, got {v}"
                )));
            }
        }
        if let Some(p) = self.period
            && !(p.is_finite() && p > 0.0)
        {
            return Err(Error::invalid(format!(
                "cosine.period: must be finite and > 0, got {p}"
            )));
        }
        if let Some(c) = &self.center
            && c.len() != 1
            && c.len() != dim
        {
            return Err(Error::invalid(format!(
                "cosine.center: give one value or {dim} (the problem's dimension), got {}",
                c.len()
            )));
        }
        if let Some(n) = &self.noise {
            n.validate("cosine")?;
        }
        Ok(())
    }

    fn min_cost(&self) -> Option<f64> {
        // ln c = a · mean cos(…) ≥ −|a|; an unset a is drawn from U[0.75, 1.5].
        let a = self.a.map_or(1.5, f64::abs);
        Some(noise_floor((-a).exp(), &self.noise))
    }
    fn build(&self, problem: &dyn Problem, seed: u64) -> Result<Box<dyn CostFunction>> {
        let d = problem.info().dim;
        self.validate(d)?;
        let (lo, width) = native_affine(problem, "cosine")?;
        let synthetic = problem.as_any().downcast_ref::<SyntheticProblem>();
        let period = match (
            self.period,
            synthetic.and_then(|p| p.function().cosine_period()),
        ) {
            (Some(p), _) | (None, Some(p)) => p,
            (None, None) => {
                return Err(Error::invalid(format!(
                    "cosine.period: problem {} has no default period, give one",
                    problem.info().name
                )));
            }
        };
        let center = match &self.center {
            Some(c) if c.len() == 1 => vec![c[0]; d],
            Some(c) => c.clone(),
            None => {
                let mut c = synthetic
                    .and_then(|p| p.function().cosine_center())
                    .ok_or_else(|| {
                        Error::invalid(format!(
                            "cosine.center: problem {} has no known maximiser, give one",
                            problem.info().name
                        ))
                    })?;
                // Ignored inputs are centred on their box.
                let own = c.len();
                c.extend((own..d).map(|i| lo[i] + 0.5 * width[i]));
                c
            }
        };
        // One stream per replication, labelled so it never coincides with another draw.
        let mut rng = Rng::new(derive_seed(&[&"cosine cost", &seed]));
        let a = rng.uniform_in(0.75, 1.5);
        let b = rng.uniform_in(1.0, 3.0);
        let c = rng.uniform_in(0.0, TAU);
        let cost = CosineCost {
            a: self.a.unwrap_or(a),
            omega: self.b.unwrap_or(b) * TAU / period,
            shift: self.c.unwrap_or(c),
            center,
            lo,
            width,
        };
        with_noise(Box::new(cost), &self.noise, "cosine")
    }
}

// ---------------------------------------------------------------------------------------

/// c(x) = value everywhere.
#[derive(Debug, Clone, Copy)]
pub struct UniformCost {
    /// The constant cost.
    pub value: f64,
}

impl CostFunction for UniformCost {
    fn cost(&self, _x: &[f64]) -> f64 {
        self.value
    }
    fn cost_grad(&self, _x: &[f64], grad: &mut [f64]) -> f64 {
        grad.iter_mut().for_each(|g| *g = 0.0);
        self.value
    }
}

/// Spec of [`UniformCost`] (`cost: { type: uniform }`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UniformSpec {
    /// The constant cost; default 1.
    #[serde(default = "one")]
    pub value: f64,
    /// Optional noise on charged costs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise: Option<CostNoise>,
}

fn one() -> f64 {
    1.0
}

#[cabo_core::plugin(
    name = "uniform",
    summary = "Constant cost (1 by default): the uniform-cost setting",
    paper = "standard",
    example = "{ type: uniform }"
)]
impl CostFunctionSpec for UniformSpec {
    fn validate(&self, _dim: usize) -> Result<()> {
        if !(self.value.is_finite() && self.value > 0.0) {
            return Err(Error::invalid(format!(
                "uniform.value: must be finite and > 0, got {}",
                self.value
            )));
        }
        if let Some(n) = &self.noise {
            n.validate("uniform")?;
        }
        Ok(())
    }
    fn min_cost(&self) -> Option<f64> {
        Some(noise_floor(self.value, &self.noise))
    }
    fn build(&self, problem: &dyn Problem, _seed: u64) -> Result<Box<dyn CostFunction>> {
        self.validate(problem.info().dim)?;
        with_noise(
            Box::new(UniformCost { value: self.value }),
            &self.noise,
            "uniform",
        )
    }
}

// ---------------------------------------------------------------------------------------

/// c(x) = low + (high − low) · bump(x̃): cheap everywhere but in a narrow region.
#[derive(Debug, Clone)]
pub struct BumpCost {
    /// The bump, in the problem's native units.
    pub bump: Bump,
    /// Cost far from the bump.
    pub low: f64,
    /// Cost at the bump's centre.
    pub high: f64,
    /// Native lower ends.
    pub lo: Vec<f64>,
    /// Native widths.
    pub width: Vec<f64>,
}

impl BumpCost {
    fn native(&self, x: &[f64]) -> Vec<f64> {
        x.iter()
            .enumerate()
            .map(|(i, x)| self.lo[i] + self.width[i] * x)
            .collect()
    }
}

impl CostFunction for BumpCost {
    fn cost(&self, x: &[f64]) -> f64 {
        self.low + (self.high - self.low) * self.bump.value(&self.native(x))
    }
    fn cost_grad(&self, x: &[f64], grad: &mut [f64]) -> f64 {
        let z = self.native(x);
        let b = self.bump.value_grad(&z, grad);
        for (g, w) in grad.iter_mut().zip(&self.width) {
            *g *= (self.high - self.low) * w;
        }
        self.low + (self.high - self.low) * b
    }
}

/// Spec of [`BumpCost`] (`cost: { type: bump_cost, low: 1, high: 50, width: 1 }`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BumpCostSpec {
    /// Cost far from the bump; default 1.
    #[serde(default = "one")]
    pub low: f64,
    /// Cost at the centre; default 50 (the seed 000 Fig. 2 preset of `bump_prior_sample`).
    #[serde(default = "fifty")]
    pub high: f64,
    /// Centre in native units (one value for every coordinate); default 0.
    #[serde(default)]
    pub center: f64,
    /// Width (standard deviation of the Gaussian bump) in native units; default 1.
    #[serde(default = "one")]
    pub width: f64,
    /// Optional noise on charged costs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise: Option<CostNoise>,
}

fn fifty() -> f64 {
    50.0
}

#[cabo_core::plugin(
    name = "bump_cost",
    summary = "Cheap everywhere except a narrow Gaussian bump (in the problem's native units)",
    paper = "seed 000 §3.3 Fig. 2, App. A.2 Fig. 8",
    example = "{ type: bump_cost, low: 1, high: 50, width: 1 }"
)]
impl CostFunctionSpec for BumpCostSpec {
    fn validate(&self, _dim: usize) -> Result<()> {
        if !(self.low.is_finite() && self.low > 0.0 && self.high.is_finite() && self.high > 0.0) {
            return Err(Error::invalid(format!(
                "bump_cost: low and high must be finite and > 0, got {} and {}",
                self.low, self.high
            )));
        }
        Bump::new(self.center, self.width).map_err(|e| e.at("bump_cost"))?;
        if let Some(n) = &self.noise {
            n.validate("bump_cost")?;
        }
        Ok(())
    }
    fn min_cost(&self) -> Option<f64> {
        Some(noise_floor(self.low.min(self.high), &self.noise))
    }
    fn build(&self, problem: &dyn Problem, _seed: u64) -> Result<Box<dyn CostFunction>> {
        self.validate(problem.info().dim)?;
        let (lo, width) = native_affine(problem, "bump_cost")?;
        let c = BumpCost {
            bump: Bump::new(self.center, self.width)?,
            low: self.low,
            high: self.high,
            lo,
            width,
        };
        with_noise(Box::new(c), &self.noise, "bump_cost")
    }
}

// ---------------------------------------------------------------------------------------

/// c(x) = max over `inputs` of x̃ᵢ, the point in the problem's native units: the cost of an
/// evaluation that lasts as long as the longest of some of its inputs (seed 000's two
/// robots push at once, and pushing takes as long as the longer push).
#[derive(Debug, Clone)]
pub struct MaxInputCost {
    /// The inputs (0-based) whose largest native value is the cost.
    pub inputs: Vec<usize>,
    /// Native lower ends.
    pub lo: Vec<f64>,
    /// Native widths.
    pub width: Vec<f64>,
}

impl MaxInputCost {
    /// The listed input of largest native value (the first on ties) and that value.
    fn argmax(&self, x: &[f64]) -> (usize, f64) {
        let native = |i: usize| self.lo[i] + self.width[i] * x[i];
        let first = (self.inputs[0], native(self.inputs[0]));
        self.inputs[1..].iter().fold(first, |best, &i| {
            let v = native(i);
            if v > best.1 { (i, v) } else { best }
        })
    }
}

impl CostFunction for MaxInputCost {
    fn cost(&self, x: &[f64]) -> f64 {
        self.argmax(x).1
    }
    fn cost_grad(&self, x: &[f64], grad: &mut [f64]) -> f64 {
        // The maximum moves with its argmax alone (a subgradient on ties, which have
        // measure zero).
        let (i, v) = self.argmax(x);
        grad.iter_mut().for_each(|g| *g = 0.0);
        grad[i] = self.width[i];
        v
    }
}

/// Spec of [`MaxInputCost`] (`cost: { type: max_input, inputs: [4, 10] }`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MaxInputSpec {
    /// The inputs (0-based indices) whose largest native value is the cost.
    pub inputs: Vec<usize>,
    /// Optional noise on charged costs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise: Option<CostNoise>,
}

#[cabo_core::plugin(
    name = "max_input",
    summary = "Known cost max of some inputs in native units (seed 000's robot pushing: the longer of two push durations)",
    paper = "seed 000 App. C",
    example = "{ type: max_input, inputs: [0, 1] }"
)]
impl CostFunctionSpec for MaxInputSpec {
    fn validate(&self, dim: usize) -> Result<()> {
        if self.inputs.is_empty() {
            return Err(Error::invalid(
                "max_input.inputs: list the inputs (0-based indices) whose largest value is the cost",
            ));
        }
        for (k, &i) in self.inputs.iter().enumerate() {
            if i >= dim || self.inputs[..k].contains(&i) {
                return Err(Error::invalid(format!(
                    "max_input.inputs[{k}]: {i} is repeated or not an input index (the \
                     problem has inputs 0 to {})",
                    dim.saturating_sub(1)
                )));
            }
        }
        if let Some(n) = &self.noise {
            n.validate("max_input")?;
        }
        Ok(())
    }
    fn build(&self, problem: &dyn Problem, _seed: u64) -> Result<Box<dyn CostFunction>> {
        self.validate(problem.info().dim)?;
        let (lo, width) = native_affine(problem, "max_input")?;
        // The cost is at least the largest lower end, which must keep it positive.
        let floor = self
            .inputs
            .iter()
            .map(|&i| lo[i].min(lo[i] + width[i]))
            .fold(f64::NEG_INFINITY, f64::max);
        if floor.is_nan() || floor <= 0.0 {
            return Err(Error::invalid(format!(
                "max_input.inputs: the cost can be {floor} (the largest lower end of the listed \
                 inputs in the problem's units), but a cost must be positive"
            )));
        }
        let cost = MaxInputCost {
            inputs: self.inputs.clone(),
            lo,
            width,
        };
        with_noise(Box::new(cost), &self.noise, "max_input")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ackley::AckleySpec;
    use cabo_core::ProblemSpec;

    fn problem(json: &str) -> Box<dyn Problem> {
        serde_json::from_str::<Box<dyn ProblemSpec>>(json)
            .unwrap()
            .build(0)
            .unwrap()
    }

    fn cost(json: &str, p: &dyn Problem, seed: u64) -> Box<dyn CostFunction> {
        serde_json::from_str::<Box<dyn CostFunctionSpec>>(json)
            .unwrap()
            .build(p, seed)
            .unwrap()
    }

    fn check_grad(c: &dyn CostFunction, d: usize) {
        let mut rng = Rng::new(5);
        for _ in 0..30 {
            let x: Vec<f64> = (0..d).map(|_| rng.uniform()).collect();
            let mut g = vec![0.0; d];
            let v = c.cost_grad(&x, &mut g);
            assert!((v - c.cost(&x)).abs() < 1e-14 * v.abs().max(1.0));
            for i in 0..d {
                let h = 1e-6;
                let (mut xp, mut xm) = (x.clone(), x.clone());
                xp[i] += h;
                xm[i] -= h;
                let fd = (c.cost(&xp) - c.cost(&xm)) / (2.0 * h);
                let err = (g[i] - fd).abs() / g[i].abs().max(fd.abs()).max(1e-3);
                assert!(err < 1e-5, "{c:?} coordinate {i}: {} vs {fd}", g[i]);
            }
        }
    }

    #[test]
    fn linear_mean_spans_one_to_twenty_one() {
        let p = problem(r#"{"type":"ackley","dim":4}"#);
        let c = cost(r#"{"type":"linear_mean"}"#, p.as_ref(), 0);
        assert!((c.cost(&[0.0; 4]) - 1.0).abs() < 1e-14);
        assert!((c.cost(&[1.0; 4]) - 21.0).abs() < 1e-14);
        assert!((c.cost(&[0.2, 0.4, 0.6, 0.8]) - 11.0).abs() < 1e-14);
        check_grad(c.as_ref(), 4);
    }

    #[test]
    fn cosine_matches_its_formula_and_is_drawn_from_the_seed() {
        let p = problem(r#"{"type":"dropwave"}"#);
        let c = cost(
            r#"{"type":"cosine","a":1.2,"b":2.0,"c":0.3}"#,
            p.as_ref(),
            0,
        );
        // Hand evaluation at x = (0.25, 0.75): x̃ = (−2.56, 2.56), x* = 0, P = 5.12.
        let w = 2.0 * TAU / 5.12;
        let want = (1.2 * 0.5 * ((w * (-2.56 + 0.3)).cos() + (w * (2.56 + 0.3)).cos())).exp();
        assert!((c.cost(&[0.25, 0.75]) - want).abs() < 1e-12 * want);
        check_grad(c.as_ref(), 2);

        // Drawn parameters: same seed, same function; another seed, another one; every draw
        // keeps ln c within ±1.5 (a ≤ 1.5).
        let c0 = cost(r#"{"type":"cosine"}"#, p.as_ref(), 7);
        let c0b = cost(r#"{"type":"cosine"}"#, p.as_ref(), 7);
        let c1 = cost(r#"{"type":"cosine"}"#, p.as_ref(), 8);
        let x = [0.3, 0.6];
        assert_eq!(c0.cost(&x), c0b.cost(&x));
        assert_ne!(c0.cost(&x), c1.cost(&x));
        for s in 0..200 {
            let c = cost(r#"{"type":"cosine"}"#, p.as_ref(), s);
            let l = c.cost(&x).ln();
            assert!(l.abs() <= 1.5, "seed {s}: ln c = {l}");
            check_grad(c.as_ref(), 2);
        }
    }

    #[test]
    fn cosine_defaults_follow_the_problem() {
        // Shekel-5: x* = 4 and P = 4, so with c = 0 the optimum is the most expensive point.
        let p = problem(r#"{"type":"shekel5"}"#);
        let c = cost(
            r#"{"type":"cosine","a":1.0,"b":1.0,"c":0.0}"#,
            p.as_ref(),
            0,
        );
        assert!((c.cost(&[0.4; 4]) - 1f64.exp()).abs() < 1e-12);
        // Period 4 in native units = 0.4 in the cube: one full period away costs the same.
        assert!((c.cost(&[0.8; 4]) - 1f64.exp()).abs() < 1e-12);
        // A problem without a default period needs one.
        let p = problem(r#"{"type":"branin"}"#);
        let spec: Box<dyn CostFunctionSpec> = serde_json::from_str(r#"{"type":"cosine"}"#).unwrap();
        assert!(
            spec.build(p.as_ref(), 0)
                .unwrap_err()
                .to_string()
                .contains("cosine.period")
        );
        let spec: Box<dyn CostFunctionSpec> =
            serde_json::from_str(r#"{"type":"cosine","center":[1,2,3]}"#).unwrap();
        assert!(
            spec.validate(2)
                .unwrap_err()
                .to_string()
                .contains("cosine.center")
        );
    }

    #[test]
    fn uniform_and_bump_costs() {
        let p = AckleySpec {
            dim: 1,
            bounds: Some(crate::synthetic::Bounds::Same([-500.0, 500.0])),
            scale: None,
            dummy_dims: 0,
            noise_std: 0.0,
            names: Vec::new(),
        }
        .build(0)
        .unwrap();
        let u = cost(r#"{"type":"uniform"}"#, p.as_ref(), 0);
        assert_eq!(u.cost(&[0.3]), 1.0);
        let b = cost(
            r#"{"type":"bump_cost","low":1,"high":50,"width":1}"#,
            p.as_ref(),
            0,
        );
        assert!((b.cost(&[0.5]) - 50.0).abs() < 1e-12);
        // Three widths away the bump has all but vanished: 1 + 49 e^{−4.5}.
        let x = 0.5 + 3.0 / 1000.0;
        assert!((b.cost(&[x]) - (1.0 + 49.0 * (-4.5f64).exp())).abs() < 1e-9);
        assert!((b.cost(&[0.0]) - 1.0).abs() < 1e-12);
        check_grad(b.as_ref(), 1);
    }

    #[test]
    fn noisy_costs_are_clipped_seeded_and_centred() {
        let p = problem(r#"{"type":"ackley","dim":2}"#);
        let c = cost(
            r#"{"type":"uniform","value":0.5,"noise":{"std":0.01,"min":0.001,"max":2}}"#,
            p.as_ref(),
            0,
        );
        assert_eq!(c.cost(&[0.1, 0.2]), 0.5);
        assert_eq!(c.observe(&[0.1, 0.2], 3), c.observe(&[0.1, 0.2], 3));
        let n = 5000;
        let mean = (0..n).map(|s| c.observe(&[0.1, 0.2], s)).sum::<f64>() / n as f64;
        // Standard error 0.01/√5000 ≈ 1.4e-4.
        assert!((mean - 0.5).abs() < 6e-4, "{mean}");
        let tight = cost(
            r#"{"type":"uniform","value":1.99,"noise":{"std":1.0,"max":2}}"#,
            p.as_ref(),
            0,
        );
        for s in 0..200 {
            let v = tight.observe(&[0.5, 0.5], s);
            assert!((0.001..=2.0).contains(&v));
        }
        let bad: Box<dyn CostFunctionSpec> =
            serde_json::from_str(r#"{"type":"uniform","noise":{"std":-1}}"#).unwrap();
        assert!(
            bad.validate(2)
                .unwrap_err()
                .to_string()
                .contains("noise.std")
        );
        let bad: Box<dyn CostFunctionSpec> =
            serde_json::from_str(r#"{"type":"linear_mean","offset":0}"#).unwrap();
        assert!(
            bad.validate(2)
                .unwrap_err()
                .to_string()
                .contains("linear_mean.offset")
        );
    }

    #[test]
    fn max_input_is_the_largest_listed_input_in_native_units() {
        // robot_push's native point is (10u₀ − 5, 10u₁ − 5, 29u₂ + 1).
        let p = problem(r#"{"type":"robot_push"}"#);
        let c = cost(r#"{"type":"max_input","inputs":[0,2]}"#, p.as_ref(), 0);
        // Hand evaluations: max(10·0.9 − 5, 29·0.1 + 1) = max(4, 3.9) = 4, and
        // max(10·0.2 − 5, 29·0.5 + 1) = max(−3, 15.5) = 15.5.
        assert!((c.cost(&[0.9, 0.3, 0.1]) - 4.0).abs() < 1e-14);
        assert!((c.cost(&[0.2, 0.3, 0.5]) - 15.5).abs() < 1e-14);
        let mut g = vec![f64::NAN; 3];
        c.cost_grad(&[0.9, 0.3, 0.1], &mut g);
        assert_eq!(g, [10.0, 0.0, 0.0]);
        c.cost_grad(&[0.2, 0.3, 0.5], &mut g);
        assert_eq!(g, [0.0, 0.0, 29.0]);
        check_grad(c.as_ref(), 3);
    }

    #[test]
    fn max_input_refuses_bad_inputs_and_costs_that_reach_zero() {
        let p = problem(r#"{"type":"robot_push"}"#);
        for (json, expected) in [
            (r#"{"type":"max_input","inputs":[]}"#, "list the inputs"),
            (
                r#"{"type":"max_input","inputs":[3]}"#,
                "inputs[0]: 3 is repeated or not",
            ),
            (
                r#"{"type":"max_input","inputs":[2,2]}"#,
                "inputs[1]: 2 is repeated",
            ),
            // z₁ ranges over [−5, 5]: its maximum alone can be −5.
            (r#"{"type":"max_input","inputs":[0]}"#, "the cost can be -5"),
        ] {
            let spec: Box<dyn CostFunctionSpec> = serde_json::from_str(json).unwrap();
            let err = spec.build(p.as_ref(), 0).unwrap_err().to_string();
            assert!(err.contains(expected), "{json}: {err}");
        }
    }
}
