//! Expected confidence bounds over the open variables, E[μ([x^i, X^{-i}]) + β σ([x^i,
//! X^{-i}])], averaged over a fixed sample set (the run's scrambled Sobol' points,
//! [`crate::InputDistributions::sample_matrix`]), with analytic gradients in x^i, and
//! their maximisation per control set.
//!
//! With β > 0 this is UCB-CVS's expected UCB; with β < 0 it is the expected LCB of seed 004.
//!
//! A model that offers the accelerator [`OpenBounds`](cabo_core::capability::OpenBounds)
//! evaluates the average its own way (the exact GP splits each squared distance into a
//! controlled and an open part and batches the triangular products over blocks of samples);
//! any other posterior is evaluated through [`Posterior::mean_var_batch`] and
//! [`Posterior::mean_var_grad`].

use cabo_core::capability::PreparedBounds;
use cabo_core::{Error, Objective, OptimizerSettings, Posterior, Result};

/// What is shared by every control set for one posterior: the posterior, the sample points
/// of the open variables and, where the model offers it, its prepared fast path.
pub struct ExpectedBounds<'a> {
    post: &'a dyn Posterior,
    samples: &'a [f64],
    dim: usize,
    fast: Option<Box<dyn PreparedBounds + 'a>>,
}

impl<'a> ExpectedBounds<'a> {
    /// Maximises the expected bound with multiplier `beta` over each listed control set
    /// (`sets[k]` are variable indices; `which` the set indices to do), in parallel over
    /// sets, as [`crate::maximize_sets`] does for any objective.
    pub fn maximize_sets(
        &self,
        sets: &[Vec<usize>],
        which: &[usize],
        beta: f64,
        settings: &OptimizerSettings,
        seed: u64,
    ) -> Result<Vec<SetMaximum>> {
        crate::common::maximize_sets(sets, which, self.dim, settings, seed, |i| {
            self.for_set(&sets[i], beta)
        })
    }

    /// Prepares expected bounds for `post` with the samples `samples` (row-major `m × d`).
    /// Errors when the samples are not whole rows of the posterior's dimension.
    pub fn new(post: &'a dyn Posterior, samples: &'a [f64]) -> Result<Self> {
        let dim = post.dim();
        if dim == 0 || samples.is_empty() || !samples.len().is_multiple_of(dim) {
            return Err(Error::invalid(format!(
                "expected bound: {} sample coordinates are not whole points of dimension {dim}",
                samples.len()
            )));
        }
        let fast = post.open_bounds().map(|b| b.prepare_bounds());
        Ok(ExpectedBounds {
            post,
            samples,
            dim,
            fast,
        })
    }

    /// The expected bound with multiplier `beta` for the control set `vars` (sorted
    /// 0-based indices), as a function of the controlled sub-vector x^i.
    pub fn for_set(&self, vars: &[usize], beta: f64) -> Result<ExpectedBound<'_>> {
        let d = self.dim;
        if vars.is_empty() || vars.iter().any(|&v| v >= d) || vars.windows(2).any(|w| w[0] >= w[1])
        {
            return Err(Error::invalid(format!(
                "expected bound: control set {vars:?} is not a strictly increasing list of indices below {d}"
            )));
        }
        if !beta.is_finite() {
            return Err(Error::invalid(format!(
                "expected bound: beta = {beta} is not finite"
            )));
        }
        // A set holding every variable leaves nothing random: one "sample" is exact.
        let m = if vars.len() == d {
            1
        } else {
            self.samples.len() / d
        };
        let samples = &self.samples[..m * d];
        let backend = match &self.fast {
            Some(fast) => Backend::Fast(fast.for_set(vars, samples, beta)),
            None => Backend::Generic {
                post: self.post,
                samples,
            },
        };
        Ok(ExpectedBound {
            vars: vars.to_vec(),
            dim: d,
            m,
            beta,
            backend,
        })
    }
}

/// E[μ + βσ] over the samples, as a function of the controlled coordinates of one set.
pub struct ExpectedBound<'a> {
    vars: Vec<usize>,
    dim: usize,
    m: usize,
    beta: f64,
    backend: Backend<'a>,
}

enum Backend<'a> {
    /// The model's own evaluation ([`cabo_core::capability::OpenBounds`]).
    Fast(Box<dyn Objective + Send + Sync + 'a>),
    Generic {
        post: &'a dyn Posterior,
        samples: &'a [f64],
    },
}

impl ExpectedBound<'_> {
    /// Number of controlled coordinates (the dimension of x^i).
    pub fn controlled(&self) -> usize {
        self.vars.len()
    }

    /// Number of sample points used (1 for a set holding every variable).
    pub fn samples(&self) -> usize {
        self.m
    }

    /// The controlled variables.
    pub fn vars(&self) -> &[usize] {
        &self.vars
    }

    /// The full point with `xi` in the controlled coordinates and 0.5 elsewhere (the
    /// problem ignores the open coordinates of a control-set query).
    pub fn full_point(&self, xi: &[f64]) -> Vec<f64> {
        let mut x = vec![0.5; self.dim];
        for (k, &v) in self.vars.iter().enumerate() {
            x[v] = xi[k];
        }
        x
    }

    fn eval(&self, xi: &[f64], grad: Option<&mut [f64]>) -> f64 {
        let mf = self.m as f64;
        match &self.backend {
            Backend::Fast(f) => match grad {
                None => f.value(xi),
                Some(g) => f.value_grad(xi, g),
            },
            Backend::Generic { post, samples } => {
                let d = self.dim;
                let pts = crate::common::sample_points(samples, d, &self.vars, xi);
                match grad {
                    None => {
                        let mut mv = vec![cabo_core::MeanVar::default(); self.m];
                        post.mean_var_batch(&pts, &mut mv);
                        mv.iter()
                            .map(|p| p.mean + self.beta * p.var.sqrt())
                            .sum::<f64>()
                            / mf
                    }
                    Some(g) => {
                        g.fill(0.0);
                        let mut total = 0.0;
                        for z in pts.chunks_exact(d) {
                            let Ok(p) = post.mean_var_grad(z) else {
                                return f64::NAN;
                            };
                            let sd = p.var.sqrt();
                            total += p.mean + self.beta * sd;
                            let w = if sd > 0.0 {
                                self.beta / (2.0 * sd)
                            } else {
                                0.0
                            };
                            for (k, &v) in self.vars.iter().enumerate() {
                                g[k] += (p.dmean[v] + w * p.dvar[v]) / mf;
                            }
                        }
                        total / mf
                    }
                }
            }
        }
    }
}

/// E[μ + βσ] as a function of the controlled sub-vector x^i.
impl Objective for ExpectedBound<'_> {
    fn value(&self, xi: &[f64]) -> f64 {
        self.eval(xi, None)
    }

    fn value_grad(&self, xi: &[f64], grad: &mut [f64]) -> f64 {
        self.eval(xi, Some(grad))
    }
}

/// The maximiser of one set's expected bound.
#[derive(Debug, Clone, PartialEq)]
pub struct SetMaximum {
    /// The control set's index.
    pub set: usize,
    /// The full query point (controlled coordinates set, open ones 0.5).
    pub x: Vec<f64>,
    /// The maximal expected bound.
    pub value: f64,
}
