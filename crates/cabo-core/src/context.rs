//! Everything a policy may look at when it decides.

use crate::model::TrainingData;
use crate::{
    BudgetState, CostBelief, CostModel, Dataset, Error, Model, OptimizerSettings, Posterior,
    ProblemInfo, Result,
};
use std::cell::{Cell, OnceCell, RefCell};
use std::time::Instant;

/// The state of a run at the moment of a decision.
///
/// Models are fitted lazily: the first call to [`DecisionContext::posterior`] (or
/// [`DecisionContext::cost_belief`]) fits, later calls reuse the result, and a policy that
/// never asks (random search, a dynamic program) never pays for a fit.
pub struct DecisionContext<'a> {
    /// What the policy may know about the problem.
    pub problem: &'a ProblemInfo,
    /// Everything observed so far (initial design included), then the fantasies of the
    /// points other workers are evaluating (see [`DecisionContext::fantasies`]).
    pub data: &'a Dataset,
    /// Spend so far against the budget.
    pub budget: &'a BudgetState,
    /// 1-based index of this policy decision.
    pub iteration: usize,
    /// Seed for this decision's randomness (derived from the run seed and the iteration).
    pub seed: u64,
    /// Acquisition-optimiser settings resolved for this problem's dimension.
    pub optimizer: &'a OptimizerSettings,
    /// How many of `data`'s last observations are fantasies: points other workers are
    /// evaluating, with the outcome their [`crate::PendingRule`] gave them (0 with one
    /// worker). The budget is charged with their fantasised costs.
    pub fantasies: usize,
    /// Points other workers are evaluating that the data leaves out (local penalisation,
    /// [`crate::PendingRule::LocalPenalization`]): a policy that maximises an acquisition
    /// penalises it around them. Empty otherwise.
    pub pending: Vec<Vec<f64>>,
    /// Posteriors conditioned on joint draws of the pending points' outcomes
    /// ([`crate::PendingRule::SampledFantasies`]); empty otherwise.
    fantasy_samples: Vec<Box<dyn Posterior>>,
    /// A posterior given by the context this one was made from ([`Self::for_sample`]).
    borrowed_posterior: Option<&'a dyn Posterior>,
    /// The context this one was made from: its cost belief serves this one.
    parent: Option<&'a DecisionContext<'a>>,
    model: Option<&'a RefCell<Box<dyn Model>>>,
    cost_model: Option<&'a RefCell<Box<dyn CostModel>>>,
    posterior: OnceCell<std::result::Result<Box<dyn Posterior>, String>>,
    cost_belief: OnceCell<std::result::Result<Box<dyn CostBelief>, String>>,
    fit_seconds: Cell<f64>,
}

impl<'a> DecisionContext<'a> {
    /// A context without models; attach them with [`Self::with_models`] or
    /// [`Self::with_posterior`].
    pub fn new(
        problem: &'a ProblemInfo,
        data: &'a Dataset,
        budget: &'a BudgetState,
        iteration: usize,
        seed: u64,
        optimizer: &'a OptimizerSettings,
    ) -> Self {
        DecisionContext {
            problem,
            data,
            budget,
            iteration,
            seed,
            optimizer,
            fantasies: 0,
            pending: Vec::new(),
            fantasy_samples: Vec::new(),
            borrowed_posterior: None,
            parent: None,
            model: None,
            cost_model: None,
            posterior: OnceCell::new(),
            cost_belief: OnceCell::new(),
            fit_seconds: Cell::new(0.0),
        }
    }

    /// Marks the last `count` observations of the data as fantasies of pending points.
    pub fn with_fantasies(mut self, count: usize) -> Self {
        self.fantasies = count;
        self
    }

    /// Posteriors conditioned on joint draws of the pending points' outcomes, for a policy to
    /// average over ([`Self::for_sample`]).
    pub fn with_fantasy_samples(mut self, samples: Vec<Box<dyn Posterior>>) -> Self {
        self.fantasy_samples = samples;
        self
    }

    /// The posteriors conditioned on sampled outcomes of the pending points (empty unless
    /// the run's pending rule samples them).
    pub fn fantasy_samples(&self) -> &[Box<dyn Posterior>] {
        &self.fantasy_samples
    }

    /// This context with `posterior` as its posterior: the same data, budget, seed and
    /// settings, and this context's cost belief (fitted once for every sample).
    pub fn for_sample(&'a self, posterior: &'a dyn Posterior) -> DecisionContext<'a> {
        let mut child = DecisionContext::new(
            self.problem,
            self.data,
            self.budget,
            self.iteration,
            self.seed,
            self.optimizer,
        )
        .with_fantasies(self.fantasies);
        child.borrowed_posterior = Some(posterior);
        child.parent = Some(self);
        child
    }

    /// Names points in flight that the data leaves out, to be penalised around.
    pub fn with_pending(mut self, points: Vec<Vec<f64>>) -> Self {
        self.pending = points;
        self
    }

    /// Attaches the objective model and cost model to fit on demand.
    pub fn with_models(
        mut self,
        model: Option<&'a RefCell<Box<dyn Model>>>,
        cost_model: Option<&'a RefCell<Box<dyn CostModel>>>,
    ) -> Self {
        self.model = model;
        self.cost_model = cost_model;
        self
    }

    /// Uses an already-computed posterior (for tools and tests).
    pub fn with_posterior(self, posterior: Box<dyn Posterior>) -> Self {
        let _ = self.posterior.set(Ok(posterior));
        self
    }

    /// Uses an already-computed cost belief (for tools and tests).
    pub fn with_cost_belief(self, belief: Box<dyn CostBelief>) -> Self {
        let _ = self.cost_belief.set(Ok(belief));
        self
    }

    /// The objective posterior given all data, fitted on first use. With fantasies, the
    /// model is fitted on the observations and the fit conditioned on the fantasies,
    /// hyperparameters kept, where the posterior offers [`crate::capability::Fantasize`];
    /// a model without it is fitted on observations and fantasies together.
    pub fn posterior(&self) -> Result<&dyn Posterior> {
        if let Some(p) = self.borrowed_posterior {
            return Ok(p);
        }
        let fitted = self.posterior.get_or_init(|| {
            let model = self
                .model
                .ok_or("this run has no `model`, but the policy needs a posterior")?;
            let started = Instant::now();
            let seed = crate::derive_seed(&[&self.seed, &"model"]);
            let x = self.data.x_matrix();
            let y = self.data.ys();
            let d = self.data.dim();
            let fit = |rows: usize| {
                let data = TrainingData {
                    dim: d,
                    x: &x[..rows * d],
                    y: &y[..rows],
                };
                model.borrow_mut().fit(data, seed)
            };
            let observed = self.data.len() - self.fantasies;
            let result = fit(observed).and_then(|p| {
                if self.fantasies == 0 {
                    return Ok(p);
                }
                match p.fantasize() {
                    Some(f) => f.condition(&x[observed * d..], &y[observed..]),
                    None => fit(self.data.len()),
                }
            });
            self.fit_seconds
                .set(self.fit_seconds.get() + started.elapsed().as_secs_f64());
            result.map_err(|e| e.to_string())
        });
        match fitted {
            Ok(p) => Ok(p.as_ref()),
            Err(m) => Err(Error::numerical(format!("fitting the model: {m}"))),
        }
    }

    /// The cost belief given all data, fitted on first use; with fantasies, fitted on the
    /// observations and conditioned on the fantasies' ln costs as [`Self::posterior`] is.
    pub fn cost_belief(&self) -> Result<&dyn CostBelief> {
        if let Some(parent) = self.parent {
            return parent.cost_belief();
        }
        let fitted = self.cost_belief.get_or_init(|| {
            let model = self
                .cost_model
                .ok_or("this run has no `cost_model`, but the policy needs a cost belief")?;
            let started = Instant::now();
            let seed = crate::derive_seed(&[&self.seed, &"cost_model"]);
            let result = if self.fantasies == 0 {
                model.borrow_mut().fit(self.data, seed)
            } else {
                let observed = self.data.len() - self.fantasies;
                let prefix = self.data.prefix(observed);
                model.borrow_mut().fit(&prefix, seed).and_then(|b| {
                    let fantasies = &self.data.observations()[observed..];
                    match b.fantasize() {
                        Some(f) => {
                            let x: Vec<f64> =
                                fantasies.iter().flat_map(|o| o.outcome.x.clone()).collect();
                            let ln: Vec<f64> =
                                fantasies.iter().map(|o| o.outcome.cost.ln()).collect();
                            f.condition(&x, &ln)
                        }
                        None => model.borrow_mut().fit(self.data, seed),
                    }
                })
            };
            self.fit_seconds
                .set(self.fit_seconds.get() + started.elapsed().as_secs_f64());
            result.map_err(|e| e.to_string())
        });
        match fitted {
            Ok(b) => Ok(b.as_ref()),
            Err(m) => Err(Error::numerical(format!("fitting the cost model: {m}"))),
        }
    }

    /// Seconds spent fitting models in this context (kept apart from comparable results).
    pub fn fit_seconds(&self) -> f64 {
        self.fit_seconds.get()
    }

    /// The best observed y so far (`None` before any observation).
    pub fn best_y(&self) -> Option<f64> {
        self.data.best_y()
    }

    /// Diagnostics of the fitted posterior, if one was fitted.
    pub fn posterior_diagnostics(&self) -> crate::Diagnostics {
        if let Some(p) = self.borrowed_posterior {
            return p.diagnostics();
        }
        match self.posterior.get() {
            Some(Ok(p)) => p.diagnostics(),
            _ => crate::Diagnostics::new(),
        }
    }
}
