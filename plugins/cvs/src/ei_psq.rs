//! EI-PSQ (seed 002, App. C.2): BoTorch's noisy expected improvement adapted to partial
//! queries. Draw S = 32 posterior sample paths of f; for the partial query (i, x^i) each
//! path's value is its Monte Carlo expectation over the open variables (the run's fixed
//! sample set, as for UCB-CVS), its incumbent is its best value over the realised points of
//! all observations, and the acquisition is the mean over paths of
//! `max(expectation − incumbent, 0)`. With `per_unit_cost` each set's best score is divided
//! by its known cost ("EI per unit cost", App. B).
//!
//! The paths are RFF Bayesian-linear-regression draws sharing one basis
//! ([`crate::fourier`]), so every path reuses the same closed-form per-feature expectations
//! and one evaluation costs O(features · (|set| + S)).

use crate::common::{
    CvsSetup, all_sets, default_features, default_path_mc_samples, maximize_sets, play_best,
};
use crate::fourier::{FourierPaths, SetExpectation};
use cabo_core::{
    BuildContext, Capabilities, Capability, Decision, DecisionContext, Diagnostics, Error,
    Objective, Policy, PolicySpec, Requirements, Result, capability, derive_seed,
};
use serde::{Deserialize, Serialize};

/// Spec of EI-PSQ: `{ type: ei_psq, samples: 32, features: 1024, per_unit_cost: false }`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EiPsqSpec {
    /// Posterior sample paths ("fantasy models") per decision; default 32 (App. C.2).
    #[serde(default = "default_samples")]
    pub samples: usize,
    /// Random Fourier features of the sample paths; default 1024 (as TS-PSQ).
    #[serde(default = "default_features")]
    pub features: usize,
    /// Divide each set's best expected improvement by its known cost (App. B).
    #[serde(default)]
    pub per_unit_cost: bool,
    /// Quasi-random points of the open variables (scrambled Sobol', drawn once per run);
    /// default 256, which average a path as accurately as the seeds' 1024 independent
    /// draws ([`crate::common::DEFAULT_PATH_MC_SAMPLES`]). Powers of two keep the points
    /// balanced.
    #[serde(default = "default_path_mc_samples")]
    pub mc_samples: usize,
}

/// Range of `samples`: every path is maximised over every control set at each decision,
/// so the work grows with them; 128 times the seeds' 32.
pub const SAMPLES: std::ops::RangeInclusive<usize> = 1..=4096;

fn default_samples() -> usize {
    32
}

#[cabo_core::plugin(
    name = "ei_psq",
    summary = "EI-PSQ: mean over RFF posterior paths of the improvement of the path's expectation over the open variables on its best observed value (optionally per unit cost)",
    paper = "002_68254e6b1337b56f (baseline, App. B, C.2)",
    example = "{ type: ei_psq, samples: 32, per_unit_cost: false }"
)]
impl PolicySpec for EiPsqSpec {
    fn validate(&self, _dim: usize) -> Result<()> {
        if self.samples == 0 {
            return Err(Error::invalid("ei_psq.samples: must be at least 1"));
        }
        if self.features == 0 {
            return Err(Error::invalid("ei_psq.features: must be at least 1"));
        }
        cabo_core::check_count(
            "ei_psq.mc_samples",
            self.mc_samples,
            crate::common::MC_SAMPLES,
        )?;
        cabo_core::check_count("ei_psq.features", self.features, crate::common::FEATURES)?;
        cabo_core::check_count("ei_psq.samples", self.samples, SAMPLES)?;
        Ok(())
    }

    fn needs_incumbent(&self) -> bool {
        // Each path's improvement is over its value at the best observation.
        true
    }
    /// Paths on a shared Fourier basis, whose expectations over the open variables are
    /// closed-form per feature.
    fn requires(&self) -> Requirements {
        Requirements {
            model: Capabilities::NONE.with(Capability::FourierSamples),
            ..Requirements::NONE
        }
    }
    fn build(&self, ctx: &BuildContext<'_>) -> Result<Box<dyn Policy>> {
        self.validate(ctx.problem.dim)?;
        let setup = CvsSetup::ranking(ctx, self.mc_samples, "ei_psq", self.per_unit_cost)?;
        Ok(Box::new(EiPsq {
            spec: self.clone(),
            setup,
            diagnostics: Diagnostics::new(),
        }))
    }
}

struct EiPsq {
    spec: EiPsqSpec,
    setup: CvsSetup,
    diagnostics: Diagnostics,
}

/// The EI-PSQ acquisition of one control set, as a function of x^i:
/// `(1/S) Σ_s max(E_s(x^i) − incumbent_s, 0)`.
pub struct ExpectedImprovement<'a> {
    expectation: SetExpectation<'a>,
    incumbents: &'a [f64],
}

impl<'a> ExpectedImprovement<'a> {
    /// The acquisition over the paths' expectations `expectation`, with one incumbent per
    /// path. Errors when the counts differ.
    pub fn new(expectation: SetExpectation<'a>, incumbents: &'a [f64]) -> Result<Self> {
        if incumbents.len() != expectation.count() {
            return Err(Error::invalid(format!(
                "ei_psq: {} incumbents for {} sample paths",
                incumbents.len(),
                expectation.count()
            )));
        }
        Ok(ExpectedImprovement {
            expectation,
            incumbents,
        })
    }

    /// The acquisition at `xi` and, per path, its expected value there.
    fn eval(&self, xi: &[f64]) -> (f64, Vec<f64>, crate::fourier::FeatureMeans) {
        let mut v = vec![0.0; self.incumbents.len()];
        let fm = self.expectation.values(xi, &mut v);
        let total: f64 = v
            .iter()
            .zip(self.incumbents)
            .map(|(e, b)| (e - b).max(0.0))
            .sum();
        (total / v.len() as f64, v, fm)
    }
}

impl Objective for ExpectedImprovement<'_> {
    fn value(&self, xi: &[f64]) -> f64 {
        self.eval(xi).0
    }

    fn value_grad(&self, xi: &[f64], grad: &mut [f64]) -> f64 {
        let (value, v, fm) = self.eval(xi);
        // Only paths that improve contribute, each with weight 1/S.
        let s = v.len() as f64;
        let coef: Vec<f64> = v
            .iter()
            .zip(self.incumbents)
            .map(|(e, b)| if e > b { 1.0 / s } else { 0.0 })
            .collect();
        self.expectation.weighted_grad(&fm, &coef, grad);
        value
    }

    fn non_negative(&self) -> bool {
        true
    }
}

impl Policy for EiPsq {
    fn decide(&mut self, ctx: &DecisionContext<'_>) -> Result<Decision> {
        let fourier = ctx
            .posterior()?
            .fourier_samples()
            .ok_or_else(|| capability::missing("ei_psq", "model", Capability::FourierSamples))?;
        if ctx.data.is_empty() {
            return Err(Error::invalid(
                "ei_psq: needs at least one observation for the incumbents (add an initial design)",
            ));
        }
        let seed = derive_seed(&[&ctx.seed, &"ei_psq paths"]);
        let paths = FourierPaths::sample(fourier, self.spec.features, self.spec.samples, seed)?;
        let incumbents = paths.maxima(&ctx.data.x_matrix())?;
        let sets = &self.setup.sets;
        let maxima = maximize_sets(
            sets,
            &all_sets(sets),
            ctx.problem.dim,
            ctx.optimizer,
            ctx.seed,
            |i| {
                ExpectedImprovement::new(
                    paths.expectation(&sets[i], &self.setup.samples)?,
                    &incumbents,
                )
            },
        )?;
        let (decision, diagnostics) = play_best(
            &maxima,
            &self.setup,
            self.spec.per_unit_cost,
            "ei_psq",
            "cvs.expected_improvement",
        )?;
        self.diagnostics = diagnostics;
        Ok(decision)
    }

    fn diagnostics(&self) -> Diagnostics {
        self.diagnostics.clone()
    }

    cabo_core::stateless_checkpoint!("ei_psq");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fourier::tests::gp;
    use cabo_core::Rng;
    use cabo_gp::KernelKind;

    fn samples(d: usize, count: usize, seed: u64) -> Vec<f64> {
        let mut rng = Rng::new(seed);
        (0..count * d).map(|_| rng.uniform()).collect()
    }

    /// Oracle incumbent: the path evaluated at every observed point, maximised.
    fn incumbent(path: &dyn Objective, xs: &[f64], d: usize) -> f64 {
        xs.chunks_exact(d)
            .map(|x| path.value(x))
            .fold(f64::NEG_INFINITY, f64::max)
    }

    /// One path, one full control set: the acquisition is that path's improvement over its
    /// best observed value, max(f(x) − max_j f(x_j), 0), to 1e-12 relative.
    #[test]
    fn one_path_and_a_full_set_is_the_improvement_of_the_path() {
        let d = 3;
        let post = gp(KernelKind::Rbf, 10, d, 3);
        let paths = FourierPaths::sample(&post, 512, 1, 4).unwrap();
        let inc = paths.maxima(post.train_x()).unwrap();
        let ei = ExpectedImprovement::new(
            paths.expectation(&[0, 1, 2], &samples(d, 64, 1)).unwrap(),
            &inc,
        )
        .unwrap();
        let path = paths.path(0);
        let best = incumbent(&path, post.train_x(), d);
        let mut rng = Rng::new(9);
        let mut positive = 0;
        for _ in 0..200 {
            let x: Vec<f64> = (0..d).map(|_| rng.uniform()).collect();
            let oracle = (path.value(&x) - best).max(0.0);
            let mut got = [0.0];
            ei.values(&x, &mut got);
            assert!((got[0] - oracle).abs() < 1e-12 * (1.0 + oracle.abs()));
            positive += usize::from(oracle > 0.0);
        }
        assert!(
            positive > 0,
            "no point improves: the check would be vacuous"
        );
    }

    /// 32 paths, a partial set: the acquisition equals the brute-force double Monte Carlo
    /// average (each path evaluated at every sample, its incumbent at every observation)
    /// to 1e-10 relative.
    #[test]
    fn matches_the_brute_force_double_average() {
        let d = 4;
        let post = gp(KernelKind::Matern52, 20, d, 6);
        let paths = FourierPaths::sample(&post, 256, 32, 2).unwrap();
        let s = samples(d, 128, 3);
        let vars = [1, 3];
        let inc = paths.maxima(post.train_x()).unwrap();
        let ei = ExpectedImprovement::new(paths.expectation(&vars, &s).unwrap(), &inc).unwrap();
        for xi in [[0.1, 0.9], [0.5, 0.5], [0.8, 0.3]] {
            let mut brute = 0.0;
            for p in 0..32 {
                let path = paths.path(p);
                let mean = s
                    .chunks_exact(d)
                    .map(|row| {
                        let mut z = row.to_vec();
                        z[1] = xi[0];
                        z[3] = xi[1];
                        path.value(&z)
                    })
                    .sum::<f64>()
                    / 128.0;
                brute += (mean - incumbent(&path, post.train_x(), d)).max(0.0) / 32.0;
            }
            let mut got = [0.0];
            ei.values(&xi, &mut got);
            assert!(
                (got[0] - brute).abs() < 1e-10 * (1.0 + brute),
                "{got:?} vs {brute}"
            );
        }
    }

    /// Analytic gradient against central differences (h = 1e-6) with relative error
    /// < 1e-5, at points where every path is at least 1e-3 away from its kink and at least
    /// one path improves (at least 3 such points are required).
    #[test]
    fn gradient_matches_finite_differences_away_from_kinks() {
        let d = 3;
        let post = gp(KernelKind::Rbf, 8, d, 11);
        let paths = FourierPaths::sample(&post, 256, 8, 5).unwrap();
        let s = samples(d, 100, 7);
        let inc = paths.maxima(post.train_x()).unwrap();
        let e = paths.expectation(&[0, 2], &s).unwrap();
        let ei = ExpectedImprovement::new(e, &inc).unwrap();
        let mut checked = 0;
        for a in 0..10 {
            for b in 0..10 {
                let xi = [0.05 + 0.1 * a as f64, 0.05 + 0.1 * b as f64];
                let (value, v, _) = ei.eval(&xi);
                let margin = v
                    .iter()
                    .zip(&inc)
                    .map(|(e, i)| (e - i).abs())
                    .fold(f64::INFINITY, f64::min);
                if margin < 1e-3 || value <= 0.0 {
                    continue;
                }
                let mut g = [0.0; 2];
                ei.value_grad(&xi, &mut g);
                let scale = g.iter().fold(1e-3, |m: f64, x| m.max(x.abs()));
                for k in 0..2 {
                    let (mut p, mut q) = (xi, xi);
                    p[k] += 1e-6;
                    q[k] -= 1e-6;
                    let fd = (ei.eval(&p).0 - ei.eval(&q).0) / 2e-6;
                    let err = (fd - g[k]).abs() / scale;
                    assert!(err < 1e-5, "{xi:?} {k}: {fd} vs {} (error {err})", g[k]);
                }
                checked += 1;
            }
        }
        assert!(checked >= 3, "only {checked} points away from kinks");
    }

    #[test]
    fn bad_input_is_an_error() {
        let post = gp(KernelKind::Rbf, 5, 2, 1);
        let paths = FourierPaths::sample(&post, 16, 2, 1).unwrap();
        let e = paths.expectation(&[0], &[0.5; 4]).unwrap();
        assert!(ExpectedImprovement::new(e, &[0.0]).is_err());
        let spec = |json: &str| serde_json::from_str::<Box<dyn PolicySpec>>(json);
        assert!(
            spec(r#"{"type": "ei_psq", "samples": 0}"#)
                .unwrap()
                .validate(2)
                .is_err()
        );
        assert!(
            spec(r#"{"type": "ei_psq", "features": 0}"#)
                .unwrap()
                .validate(2)
                .is_err()
        );
        assert!(spec(r#"{"type": "ei_psq", "sample": 4}"#).is_err());
    }
}
