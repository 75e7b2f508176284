//! Seed 000's counterexamples to EIPC (§3.3, Fig. 2) and to EI (App. A.2, Fig. 8): a 1-D
//! problem on [−500, 500] whose objective is drawn from a GP prior with non-stationary
//! variance — Matérn-5/2 scaled by a narrow bump — and whose cost is a narrow bump too.
//!
//! The paper gives no numbers; this module's instantiation is a Gaussian bump
//! b(z) = exp(−½((z − centre)/width)²), prior standard deviation
//! σ(z) = σ_low + (σ_high − σ_low) · b(z), so Cov(f(z), f(z')) = σ(z) σ(z') k₅/₂(z − z'), and
//! cost c(z) = c_low + (c_high − c_low) · b(z). The defaults (σ 0.1 → 1, cost 1 → 50, width
//! and lengthscale 1) give the EIPC trap of Fig. 2: EIPC prefers the many cheap, nearly flat
//! points, while the only place worth paying for is the expensive bump. Lowering `cost_high`
//! towards 1 while raising `std_low` (e.g. σ 0.6 → 1, cost 1 → 1000) gives the EI trap of
//! Fig. 8: EI pays for the high-variance bump although cheap points are nearly as good.
//!
//! [`Bump`] and [`BumpScale`] are public so a non-stationary kernel can reuse them; the
//! `bump_scaled_gp` model ([`crate::bump_model`]) is that kernel, with the same parameters.

use crate::bump_model::BumpKernel;
use crate::gp_prior::{FoundOptimum, cached_optimum};
use crate::synthetic::check_unit_query;
use cabo_core::{
    CostFunction, Error, Objective, OptimizerSettings, Outcome, Problem, ProblemInfo, ProblemSpec,
    Query, Result, Rng, derive_seed,
};
use cabo_gp::{KernelKind, RandomFeatures};
use cabo_optim::{MaximizeOptions, maximize};
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// A Gaussian bump exp(−½‖(z − centre)/width‖²) in native units (the same centre in every
/// coordinate).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bump {
    /// Centre.
    pub center: f64,
    /// Width (the Gaussian's standard deviation).
    pub width: f64,
}

impl Bump {
    /// A bump at `center` of the given `width` (> 0).
    pub fn new(center: f64, width: f64) -> Result<Self> {
        if !center.is_finite() {
            return Err(Error::invalid(format!(
                "center: must be finite, got {center}"
            )));
        }
        if !(width.is_finite() && width > 0.0) {
            return Err(Error::invalid(format!(
                "width: must be finite and > 0, got {width}"
            )));
        }
        Ok(Bump { center, width })
    }

    /// b(z) ∈ (0, 1], 1 at the centre.
    pub fn value(&self, z: &[f64]) -> f64 {
        let r2: f64 = z
            .iter()
            .map(|v| ((v - self.center) / self.width).powi(2))
            .sum();
        (-0.5 * r2).exp()
    }

    /// b(z), writing ∇b(z) into `grad`.
    pub fn value_grad(&self, z: &[f64], grad: &mut [f64]) -> f64 {
        let b = self.value(z);
        for (g, v) in grad.iter_mut().zip(z) {
            *g = -b * (v - self.center) / (self.width * self.width);
        }
        b
    }
}

/// σ(z) = low + (high − low) · b(z): a standard deviation (or cost) raised on a bump.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BumpScale {
    /// The bump.
    pub bump: Bump,
    /// Value far from the bump.
    pub low: f64,
    /// Value at the centre.
    pub high: f64,
}

impl BumpScale {
    /// σ(z).
    pub fn value(&self, z: &[f64]) -> f64 {
        self.low + (self.high - self.low) * self.bump.value(z)
    }

    /// σ(z), writing ∇σ(z) into `grad`.
    pub fn value_grad(&self, z: &[f64], grad: &mut [f64]) -> f64 {
        let b = self.bump.value_grad(z, grad);
        for g in grad.iter_mut() {
            *g *= self.high - self.low;
        }
        self.low + (self.high - self.low) * b
    }
}

/// Spec of [`BumpPriorSample`] (`problem: { type: bump_prior_sample }`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BumpPriorSampleSpec {
    /// Native domain; default `[-500, 500]`.
    #[serde(default = "default_bounds")]
    pub bounds: [f64; 2],
    /// Matérn-5/2 lengthscale in native units; default 1.
    #[serde(default = "one")]
    pub lengthscale: f64,
    /// Bump centre in native units; default 0.
    #[serde(default)]
    pub center: f64,
    /// Bump width in native units; default 1.
    #[serde(default = "one")]
    pub width: f64,
    /// Prior standard deviation far from the bump; default 0.1.
    #[serde(default = "tenth")]
    pub std_low: f64,
    /// Prior standard deviation at the bump's centre; default 1.
    #[serde(default = "one")]
    pub std_high: f64,
    /// Cost far from the bump; default 1.
    #[serde(default = "one")]
    pub cost_low: f64,
    /// Cost at the bump's centre; default 50.
    #[serde(default = "fifty")]
    pub cost_high: f64,
    /// Random Fourier features; default 1024.
    #[serde(default = "features")]
    pub features: usize,
    /// Gaussian observation-noise standard deviation; default 0.
    #[serde(default)]
    pub noise_std: f64,
}

// The prior's defaults are shared with the `bump_scaled_gp` model spec, so the model written
// with the problem's parameters is the problem's prior.
pub(crate) fn default_bounds() -> [f64; 2] {
    [-500.0, 500.0]
}
pub(crate) fn one() -> f64 {
    1.0
}
pub(crate) fn tenth() -> f64 {
    0.1
}
fn fifty() -> f64 {
    50.0
}
fn features() -> usize {
    1024
}

impl BumpPriorSampleSpec {
    /// The non-stationary prior this problem draws from (the `bump_scaled_gp` kernel),
    /// checking its parameters.
    pub fn prior(&self) -> Result<BumpKernel> {
        BumpKernel::from_parameters(
            self.bounds,
            self.lengthscale,
            self.center,
            self.width,
            [self.std_low, self.std_high],
        )
        .map_err(|e| e.at("bump_prior_sample"))
    }

    fn check(&self) -> Result<(Bump, f64)> {
        let prior = self.prior()?;
        for (key, v) in [("cost_low", self.cost_low), ("cost_high", self.cost_high)] {
            if !(v.is_finite() && v > 0.0) {
                return Err(Error::invalid(format!(
                    "bump_prior_sample.{key}: must be finite and > 0, got {v}"
                )));
            }
        }
        if self.features == 0 {
            return Err(Error::invalid(
                "bump_prior_sample.features: must be at least 1",
            ));
        }
        cabo_core::check_count(
            "bump_prior_sample.features",
            self.features,
            crate::gp_prior::PRIOR_FEATURES,
        )?;
        if !(self.noise_std.is_finite() && self.noise_std >= 0.0) {
            return Err(Error::invalid(format!(
                "bump_prior_sample.noise_std: must be finite and ≥ 0, got {}",
                self.noise_std
            )));
        }
        Ok((prior.std().bump, prior.span()))
    }
}

#[cabo_core::plugin(
    name = "bump_prior_sample",
    summary = "1-D GP-prior objective on [-500,500] whose prior std and cost both rise on a narrow bump: the EIPC/EI counterexamples",
    paper = "seed 000 §3.3 Fig. 2, App. A.2 Fig. 8",
    example = "{ type: bump_prior_sample, std_low: 0.1, std_high: 1.0, cost_high: 50 }"
)]
impl ProblemSpec for BumpPriorSampleSpec {
    fn dim(&self) -> Result<usize> {
        self.check()?;
        Ok(1)
    }
    fn build(&self, seed: u64) -> Result<Box<dyn Problem>> {
        let (bump, span) = self.check()?;
        // The stationary part lives on the unit interval, so its lengthscale is rescaled.
        let g = RandomFeatures::new(
            KernelKind::Matern52,
            &[self.lengthscale / span],
            1.0,
            self.features,
            derive_seed(&[&"bump_prior_sample", &seed]),
        )?;
        let lo = self.bounds[0];
        let cost = Arc::new(BumpProblemCost {
            scale: BumpScale {
                bump,
                low: self.cost_low,
                high: self.cost_high,
            },
            lo,
            span,
        });
        let mut info = ProblemInfo::continuous("bump_prior_sample", 1);
        info.known_cost = Some(cost.clone());
        Ok(Box::new(BumpPriorSample {
            info,
            g,
            std: BumpScale {
                bump,
                low: self.std_low,
                high: self.std_high,
            },
            cost,
            lo,
            span,
            lengthscale: self.lengthscale / span,
            noise_std: self.noise_std,
            cache_key: format!("{self:?}#{seed}"),
        }))
    }
}

/// The cost of [`BumpPriorSample`] on the unit interval.
#[derive(Debug, Clone, Copy)]
pub struct BumpProblemCost {
    scale: BumpScale,
    lo: f64,
    span: f64,
}

impl CostFunction for BumpProblemCost {
    fn cost(&self, x: &[f64]) -> f64 {
        self.scale.value(&[self.lo + self.span * x[0]])
    }
    fn cost_grad(&self, x: &[f64], grad: &mut [f64]) -> f64 {
        let v = self.scale.value_grad(&[self.lo + self.span * x[0]], grad);
        grad[0] *= self.span;
        v
    }
}

/// f(z) = σ(z) · g(z) with g a Matérn-5/2 prior draw: a draw from the non-stationary prior.
#[derive(Debug)]
pub struct BumpPriorSample {
    info: ProblemInfo,
    g: RandomFeatures,
    std: BumpScale,
    cost: Arc<BumpProblemCost>,
    lo: f64,
    span: f64,
    /// Matérn lengthscale on the unit interval.
    lengthscale: f64,
    noise_std: f64,
    cache_key: String,
}

impl BumpPriorSample {
    /// The prior standard deviation σ as a function of the native input.
    pub fn prior_std(&self) -> &BumpScale {
        &self.std
    }

    /// The objective at a unit-interval point.
    pub fn value(&self, x: f64) -> f64 {
        self.std.value(&[self.lo + self.span * x]) * self.g.value(&[x])
    }

    /// The objective and its derivative at a unit-interval point.
    pub fn value_grad(&self, x: f64) -> (f64, f64) {
        let mut ds = [0.0];
        let s = self.std.value_grad(&[self.lo + self.span * x], &mut ds);
        let mut dg = [0.0];
        let g = self.g.value_grad(&[x], &mut dg);
        (s * g, ds[0] * self.span * g + s * dg[0])
    }

    fn search(&self) -> Option<FoundOptimum> {
        // A grid of 10 points per lengthscale puts a point in every local maximum's basin
        // (a Matérn-5/2 path turns at most about once per lengthscale); L-BFGS-B then
        // polishes the best 20 inside their neighbouring cells.
        let ls = self.g_lengthscale();
        let n = ((10.0 / ls).ceil() as usize).clamp(1024, 4_000_000);
        let mut top: Vec<(f64, usize)> = (0..=n)
            .map(|i| (self.value(i as f64 / n as f64), i))
            .collect();
        top.sort_by(|a, b| b.0.total_cmp(&a.0));
        let obj = Scalar(self);
        let settings = OptimizerSettings {
            raw_samples: 8,
            restarts: 2,
            max_iters: 100,
        };
        let mut best = FoundOptimum {
            x: vec![top[0].1 as f64 / n as f64],
            value: top[0].0,
        };
        for &(_, i) in top.iter().take(20) {
            let c = i as f64 / n as f64;
            let h = 1.0 / n as f64;
            let lower = [(c - h).max(0.0)];
            let upper = [(c + h).min(1.0)];
            let options = MaximizeOptions {
                bounds: Some((&lower, &upper)),
                ..MaximizeOptions::default()
            };
            if let Ok(m) = maximize(&obj, 1, &settings, i as u64, &options)
                && m.value > best.value
            {
                best = FoundOptimum {
                    x: m.x,
                    value: m.value,
                };
            }
        }
        Some(best)
    }

    /// The finest scale of the objective on the unit interval: the smaller of the
    /// lengthscale and the bump width.
    fn g_lengthscale(&self) -> f64 {
        self.lengthscale
            .min(self.std.bump.width / self.span)
            .min(1.0)
    }
}

struct Scalar<'a>(&'a BumpPriorSample);

impl Objective for Scalar<'_> {
    fn value(&self, x: &[f64]) -> f64 {
        self.0.value(x[0])
    }
    fn value_grad(&self, x: &[f64], grad: &mut [f64]) -> f64 {
        let (v, d) = self.0.value_grad(x[0]);
        grad[0] = d;
        v
    }
}

impl Problem for BumpPriorSample {
    fn info(&self) -> &ProblemInfo {
        &self.info
    }
    fn evaluate(&self, query: &Query, seed: u64) -> Result<Outcome> {
        check_unit_query(&self.info.name, 1, query)?;
        let value = self.value(query.x[0]);
        let y = if self.noise_std > 0.0 {
            value + self.noise_std * Rng::new(seed).normal()
        } else {
            value
        };
        Ok(Outcome::new(
            y,
            self.cost.cost(&query.x),
            query.x.clone(),
            Some(value),
        ))
    }
    fn optimum(&self) -> Option<f64> {
        cached_optimum(self.cache_key.clone(), || self.search()).map(|o| o.value)
    }
    fn to_native(&self, x: &[f64]) -> Vec<f64> {
        vec![self.lo + self.span * x[0]]
    }
    /// `(z − lo) / (hi − lo)`.
    fn native_to_unit(&self, native: &[f64]) -> Vec<f64> {
        vec![(native[0] - self.lo) / self.span]
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
    fn native_to_unit_inverts_to_native() {
        let p = build(
            r#"{"type":"bump_prior_sample","features":64,"bounds":[-3,7]}"#,
            1,
        );
        assert_eq!(p.native_to_unit(&[-3.0]), vec![0.0]);
        assert_eq!(p.native_to_unit(&[7.0]), vec![1.0]);
        let mut rng = Rng::new(4);
        for _ in 0..500 {
            let z = rng.uniform_in(-3.0, 7.0);
            let back = p.to_native(&p.native_to_unit(&[z]))[0];
            assert!((back - z).abs() <= 1e-12 * 10.0, "{z} → {back}");
            let u = rng.uniform();
            let again = p.native_to_unit(&p.to_native(&[u]))[0];
            assert!((again - u).abs() <= 1e-12, "{u} → {again}");
        }
    }

    #[test]
    fn bump_gradients_match_finite_differences() {
        let s = BumpScale {
            bump: Bump::new(0.3, 0.7).unwrap(),
            low: 0.1,
            high: 2.0,
        };
        for z in [[-1.0, 0.2], [0.3, 0.3], [1.4, -0.6]] {
            let mut g = [0.0; 2];
            s.value_grad(&z, &mut g);
            for i in 0..2 {
                let h = 1e-6;
                let (mut zp, mut zm) = (z, z);
                zp[i] += h;
                zm[i] -= h;
                let fd = (s.value(&zp) - s.value(&zm)) / (2.0 * h);
                assert!((g[i] - fd).abs() <= 1e-6 * fd.abs().max(1e-3), "{z:?} {i}");
            }
        }
        assert_eq!(s.value(&[0.3, 0.3]), 2.0);
    }

    #[test]
    fn prior_variance_follows_the_bump() {
        // Empirical Var f(z) over replications ≈ σ(z)² at the centre and far away.
        let n = 2000;
        let spec = r#"{"type":"bump_prior_sample","features":256}"#;
        let (mut at, mut far) = (0.0, 0.0);
        for seed in 0..n {
            let p = build(spec, seed);
            let q = |x: f64| p.evaluate(&Query::at(vec![x]), 0).unwrap().y;
            at += q(0.5).powi(2) / n as f64;
            far += q(0.8).powi(2) / n as f64;
        }
        // Standard error of a variance estimate: σ²·√(2/n) ≈ 0.032 σ².
        assert!((at - 1.0).abs() < 4.0 * 0.032, "at the bump {at}");
        assert!((far - 0.01).abs() < 4.0 * 0.032 * 0.01, "far away {far}");
    }

    #[test]
    fn cost_is_the_bump_and_the_optimum_dominates_a_fine_grid() {
        let p = build(r#"{"type":"bump_prior_sample"}"#, 3);
        let out = p.evaluate(&Query::at(vec![0.5]), 0).unwrap();
        assert!((out.cost - 50.0).abs() < 1e-12);
        assert!((p.evaluate(&Query::at(vec![0.9]), 0).unwrap().cost - 1.0).abs() < 1e-12);
        let known = p.info().known_cost.as_ref().unwrap();
        assert_eq!(known.cost(&[0.5]), out.cost);
        let opt = p.optimum().unwrap();
        let mut best = f64::NEG_INFINITY;
        // An independent grid of 25 points per lengthscale: never above the optimum, and
        // below it by at most about ½|f''|h² ≈ 0.01 for h = 0.04 lengthscales.
        for i in 0..=25_000 {
            best = best.max(
                p.evaluate(&Query::at(vec![i as f64 / 25_000.0]), 0)
                    .unwrap()
                    .y,
            );
        }
        assert!(
            best <= opt + 1e-12 && opt - best < 0.02,
            "grid {best}, optimum {opt}"
        );
        let b = p.as_any().downcast_ref::<BumpPriorSample>().unwrap();
        let x = 0.5 + 0.37 / 1000.0;
        let (v, d) = b.value_grad(x);
        let h = 1e-9;
        let fd = (b.value(x + h) - b.value(x - h)) / (2.0 * h);
        assert!((v - b.value(x)).abs() < 1e-14);
        assert!((d - fd).abs() <= 1e-5 * fd.abs().max(1.0), "{d} vs {fd}");
        assert_eq!(p.to_native(&[0.25]), vec![-250.0]);
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
        assert!(
            err(r#"{"type":"bump_prior_sample","width":0}"#).contains("bump_prior_sample: width")
        );
        assert!(err(r#"{"type":"bump_prior_sample","std_low":-1}"#).contains("std_low"));
        assert!(err(r#"{"type":"bump_prior_sample","bounds":[1,1]}"#).contains("bounds"));
    }
}
