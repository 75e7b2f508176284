//! TS-PSQ (Hayashi et al., the baseline of seeds 002 and 004): draw one function from the
//! posterior (Bayesian linear regression on 1024 random Fourier features, seed 002 App. C.2),
//! and play the control set and point maximising its expectation over the open variables —
//! or, as seed 002 App. B's per-unit-cost variant, that expectation divided by the cost.
//!
//! For a model offering draws on a shared Fourier basis (the exact GP's: weights drawn in n
//! dimensions) the path's expectation is closed-form per feature ([`crate::fourier`]);
//! other posteriors' own sample paths are averaged over the samples point by point.

use crate::common::{
    CvsSetup, all_sets, default_features, default_path_mc_samples, maximize_sets, play_best,
    sample_points,
};
use crate::expected::SetMaximum;
use crate::fourier::FourierPaths;
use cabo_core::capability::FourierSamples;
use cabo_core::{
    BuildContext, Capabilities, Capability, Decision, DecisionContext, Diagnostics, Error,
    Objective, Policy, PolicySpec, Requirements, Result, capability, derive_seed,
};
use serde::{Deserialize, Serialize};

/// Spec of TS-PSQ: `{ type: ts_psq, features: 1024, per_unit_cost: false }`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TsPsqSpec {
    /// Random Fourier features of the sample path; default 1024.
    #[serde(default = "default_features")]
    pub features: usize,
    /// Divide each set's best expected sample value by its known cost (App. B).
    #[serde(default)]
    pub per_unit_cost: bool,
    /// Quasi-random points of the open variables (scrambled Sobol', drawn once per run);
    /// default 256, which average a path as accurately as the seeds' 1024 independent
    /// draws ([`crate::common::DEFAULT_PATH_MC_SAMPLES`]). Powers of two keep the points
    /// balanced.
    #[serde(default = "default_path_mc_samples")]
    pub mc_samples: usize,
}

#[cabo_core::plugin(
    name = "ts_psq",
    summary = "TS-PSQ: maximise one RFF posterior sample's expectation over the open variables across control sets (optionally per unit cost)",
    paper = "002_68254e6b1337b56f (baseline, App. B, C.2); 004_e019ef0c364ecaf4 (baseline)",
    example = "{ type: ts_psq, features: 1024 }"
)]
impl PolicySpec for TsPsqSpec {
    fn validate(&self, _dim: usize) -> Result<()> {
        if self.features == 0 {
            return Err(Error::invalid("ts_psq.features: must be at least 1"));
        }
        cabo_core::check_count(
            "ts_psq.mc_samples",
            self.mc_samples,
            crate::common::MC_SAMPLES,
        )?;
        cabo_core::check_count("ts_psq.features", self.features, crate::common::FEATURES)?;
        Ok(())
    }

    /// A sample path; one on a shared Fourier basis is taken where the model offers it.
    fn requires(&self) -> Requirements {
        Requirements {
            model: Capabilities::NONE.with(Capability::SamplePaths),
            ..Requirements::NONE
        }
    }

    fn build(&self, ctx: &BuildContext<'_>) -> Result<Box<dyn Policy>> {
        self.validate(ctx.problem.dim)?;
        let setup = CvsSetup::ranking(ctx, self.mc_samples, "ts_psq", self.per_unit_cost)?;
        Ok(Box::new(TsPsq {
            spec: self.clone(),
            setup,
            diagnostics: Diagnostics::new(),
        }))
    }
}

struct TsPsq {
    spec: TsPsqSpec,
    setup: CvsSetup,
    diagnostics: Diagnostics,
}

impl TsPsq {
    /// One path on a Fourier basis, whose expectation over the open variables is
    /// closed-form per feature ([`crate::fourier`]), so each evaluation costs
    /// O(features · |set|).
    fn maximize_fourier(
        &self,
        ctx: &DecisionContext<'_>,
        fourier: &dyn FourierSamples,
        seed: u64,
    ) -> Result<Vec<SetMaximum>> {
        let paths = FourierPaths::sample(fourier, self.spec.features, 1, seed)?;
        let sets = &self.setup.sets;
        maximize_sets(
            sets,
            &all_sets(sets),
            ctx.problem.dim,
            ctx.optimizer,
            ctx.seed,
            |i| paths.expectation(&sets[i], &self.setup.samples),
        )
    }

    /// Any other posterior: its own sample path, averaged over the samples point by point.
    fn maximize_generic(
        &self,
        ctx: &DecisionContext<'_>,
        path: &(dyn Objective + Send + Sync),
    ) -> Result<Vec<SetMaximum>> {
        let (sets, dim) = (&self.setup.sets, ctx.problem.dim);
        maximize_sets(sets, &all_sets(sets), dim, ctx.optimizer, ctx.seed, |i| {
            Ok(ExpectedPath {
                path,
                vars: &sets[i],
                samples: &self.setup.samples,
                dim,
            })
        })
    }
}

/// E_m path([x^i, s_m^{-i}]) over the run's samples, as a function of x^i.
struct ExpectedPath<'a> {
    path: &'a (dyn Objective + Send + Sync),
    vars: &'a [usize],
    samples: &'a [f64],
    dim: usize,
}

impl ExpectedPath<'_> {
    fn m(&self) -> usize {
        if self.vars.len() == self.dim {
            1
        } else {
            self.samples.len() / self.dim
        }
    }
    fn points(&self, xi: &[f64]) -> Vec<f64> {
        sample_points(
            &self.samples[..self.m() * self.dim],
            self.dim,
            self.vars,
            xi,
        )
    }
}

impl Objective for ExpectedPath<'_> {
    fn value(&self, xi: &[f64]) -> f64 {
        let pts = self.points(xi);
        pts.chunks_exact(self.dim)
            .map(|z| self.path.value(z))
            .sum::<f64>()
            / self.m() as f64
    }
    fn value_grad(&self, xi: &[f64], grad: &mut [f64]) -> f64 {
        let pts = self.points(xi);
        let mut g = vec![0.0; self.dim];
        let mut total = 0.0;
        grad.fill(0.0);
        for z in pts.chunks_exact(self.dim) {
            total += self.path.value_grad(z, &mut g);
            for (k, &v) in self.vars.iter().enumerate() {
                grad[k] += g[v];
            }
        }
        let m = self.m() as f64;
        for v in grad.iter_mut() {
            *v /= m;
        }
        total / m
    }
}

impl Policy for TsPsq {
    fn decide(&mut self, ctx: &DecisionContext<'_>) -> Result<Decision> {
        let post = ctx.posterior()?;
        let seed = derive_seed(&[&ctx.seed, &"ts_psq path"]);
        let maxima = match (post.fourier_samples(), post.sample_paths()) {
            (Some(fourier), _) => self.maximize_fourier(ctx, fourier, seed)?,
            (None, Some(paths)) => self.maximize_generic(ctx, paths.sample_path(seed)?.as_ref())?,
            (None, None) => {
                return Err(capability::missing(
                    "ts_psq",
                    "model",
                    Capability::SamplePaths,
                ));
            }
        };
        let (decision, diagnostics) = play_best(
            &maxima,
            &self.setup,
            self.spec.per_unit_cost,
            "ts_psq",
            "cvs.expected_sample",
        )?;
        self.diagnostics = diagnostics;
        Ok(decision)
    }

    fn diagnostics(&self) -> Diagnostics {
        self.diagnostics.clone()
    }

    cabo_core::stateless_checkpoint!("ts_psq");
}
