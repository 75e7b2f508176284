//! TS-PSQ (Hayashi et al., the baseline of seeds 002 and 004): draw one function from the
//! posterior (Bayesian linear regression on 1024 random Fourier features, seed 002 App. C.2),
//! and play the control set and point maximising its expectation over the open variables —
//! or, as seed 002 App. B's per-unit-cost variant, that expectation divided by the cost.

use crate::common::{CvsSetup, argmax_by, default_mc_samples};
use cabo_core::{
    BuildContext, Decision, DecisionContext, Diagnostics, Error, Kind, Policy, PolicySpec, Query,
    Result, SamplePath, derive_seed,
};
use cabo_gp::GpPosterior;
use cabo_optim::multistart::{self, Objective};
use rayon::prelude::*;
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
    /// Monte Carlo samples of the open variables; default 1024.
    #[serde(default = "default_mc_samples")]
    pub mc_samples: usize,
}

fn default_features() -> usize {
    1024
}

#[typetag::serde(name = "ts_psq")]
impl PolicySpec for TsPsqSpec {
    fn validate(&self, _dim: usize) -> Result<()> {
        if self.features == 0 {
            return Err(Error::invalid("ts_psq.features: must be at least 1"));
        }
        Ok(())
    }

    fn build(&self, ctx: &BuildContext<'_>) -> Result<Box<dyn Policy>> {
        self.validate(ctx.problem.dim)?;
        let setup = CvsSetup::new(ctx, self.mc_samples, "ts_psq")?;
        if self.per_unit_cost {
            setup.known_costs("ts_psq (per_unit_cost)")?;
        }
        Ok(Box::new(TsPsq {
            spec: self.clone(),
            setup,
            diagnostics: Diagnostics::new(),
        }))
    }
}

cabo_core::register_plugin!(
    Kind::Policy,
    "ts_psq",
    summary: "TS-PSQ: maximise one RFF posterior sample's expectation over the open variables across control sets (optionally per unit cost)",
    paper: "002_68254e6b1337b56f (baseline, App. B, C.2); 004_e019ef0c364ecaf4 (baseline)",
    example: "{ type: ts_psq, features: 1024 }"
);

struct TsPsq {
    spec: TsPsqSpec,
    setup: CvsSetup,
    diagnostics: Diagnostics,
}

/// E_m path([x^i, s_m^{-i}]) over the run's samples, as a function of x^i.
struct ExpectedPath<'a> {
    path: &'a dyn SamplePath,
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
        let mut pts = self.samples[..self.m() * self.dim].to_vec();
        for row in pts.chunks_exact_mut(self.dim) {
            for (k, &v) in self.vars.iter().enumerate() {
                row[v] = xi[k];
            }
        }
        pts
    }
}

impl Objective for ExpectedPath<'_> {
    fn dim(&self) -> usize {
        self.vars.len()
    }
    fn values(&self, xs: &[f64], out: &mut [f64]) {
        for (o, xi) in out.iter_mut().zip(xs.chunks_exact(self.vars.len())) {
            let pts = self.points(xi);
            *o = pts
                .chunks_exact(self.dim)
                .map(|z| self.path.value(z))
                .sum::<f64>()
                / self.m() as f64;
        }
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
        let path: Box<dyn SamplePath> = match post.as_any().downcast_ref::<GpPosterior>() {
            Some(gp) => Box::new(gp.rff_blr_sample_with(self.spec.features, seed)?),
            None => post.sample_path(seed)?,
        };
        let d = ctx.problem.dim;
        let sets = &self.setup.sets;
        let samples = &self.setup.samples;
        let path_ref: &dyn SamplePath = path.as_ref();
        let settings = *ctx.optimizer;
        let seed = ctx.seed;
        let maxima: Vec<(f64, Vec<f64>)> = (0..sets.len())
            .into_par_iter()
            .map(|i| {
                let f = ExpectedPath {
                    path: path_ref,
                    vars: &sets[i],
                    samples,
                    dim: d,
                };
                let best = multistart::maximize(&f, &settings, derive_seed(&[&seed, &i]))?;
                let mut x = vec![0.5; d];
                for (k, &v) in sets[i].iter().enumerate() {
                    x[v] = best.x[k];
                }
                Ok((best.value, x))
            })
            .collect::<Result<_>>()?;
        let costs = self.setup.costs.clone();
        let score = |i: usize| match (&costs, self.spec.per_unit_cost) {
            (Some(c), true) => maxima[i].0 / c[i],
            _ => maxima[i].0,
        };
        let all: Vec<usize> = (0..sets.len()).collect();
        let k = argmax_by(&all, |&i| score(i))
            .ok_or_else(|| Error::numerical("ts_psq: no control set to choose from"))?;
        self.diagnostics = Diagnostics::from([
            ("cvs.set".to_string(), k as f64),
            ("cvs.expected_sample".to_string(), maxima[k].0),
        ]);
        Ok(Decision::Evaluate(Query {
            control_set: Some(k),
            x: maxima[k].1.clone(),
        }))
    }

    fn diagnostics(&self) -> Diagnostics {
        self.diagnostics.clone()
    }
}
