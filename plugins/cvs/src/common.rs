//! What every control-set policy shares: reading the problem's control sets and input
//! distributions, the fixed quasi-random sample set of a run, and argmax helpers.

use crate::expected::{ExpectedBounds, SetMaximum};
use cabo_core::Objective;
use cabo_core::{
    BuildContext, Decision, DecisionContext, Diagnostics, Error, OptimizerSettings, Query, Result,
    derive_seed,
};
use cabo_optim::{MaximizeOptions, maximize};
use cabo_toolkit::dist::InputDistributions;
use rayon::prelude::*;
use std::ops::RangeInclusive;

/// Default number of points of the open variables that the expected bounds (UCB-CVS, ETC,
/// UCB-PSQ, α-ETC) average over.
///
/// Seed 002 (App. C.2) averages over 1024 independent draws. cabo draws scrambled Sobol'
/// points instead ([`crate::InputDistributions::sample_matrix`]), and 128 of them
/// average E[μ ± 2σ] as accurately as those 1024 draws on every problem of seeds 002 and 004
/// (RMSE against a 2^16-point reference at most 0.85 times the 1024 draws':
/// `cargo run --release -p cabo-cvs --example mc_error`, tabulated in
/// docs/decisions.md). A decision's expected bounds cost time in proportion to the count.
pub const DEFAULT_MC_SAMPLES: usize = 128;

/// Default number of points of the open variables that a posterior sample path's
/// expectation (TS-PSQ, EI-PSQ) averages over: a path varies more than the posterior mean
/// and σ, and 128 Sobol' points miss by up to 1.18 times the 1024 draws' error (seed 002's
/// airfoil with variance 0.08; 1.08 on seed 004's Ackley with six dummy variables), 256 by
/// at most 0.67 (same measurement).
pub const DEFAULT_PATH_MC_SAMPLES: usize = 256;

/// Range of `mc_samples`: each decision averages every candidate over all the points, so
/// its work grows with them; 512 times the default is far past any sampling error the
/// seeds' comparisons resolve.
pub const MC_SAMPLES: RangeInclusive<usize> = 1..=65_536;

/// Range of a policy's random Fourier `features`: a path costs O(features) per point at
/// every Monte Carlo sample of every candidate; the bound is the random-feature GP's
/// (`cabo_rfgp::MAX_FEATURES`), 8 times the seeds' 1024.
pub const FEATURES: RangeInclusive<usize> = 1..=8192;

pub(crate) fn default_mc_samples() -> usize {
    DEFAULT_MC_SAMPLES
}

pub(crate) fn default_path_mc_samples() -> usize {
    DEFAULT_PATH_MC_SAMPLES
}

/// Random Fourier features of a sample path (seed 002, App. C.2).
pub(crate) fn default_features() -> usize {
    1024
}

pub(crate) fn default_beta() -> f64 {
    2.0
}

/// A run's view of a control-set problem.
#[derive(Debug, Clone)]
pub struct CvsSetup {
    /// Variables of each control set.
    pub sets: Vec<Vec<usize>>,
    /// Known cost of each set (`None` when costs are unknown).
    pub costs: Option<Vec<f64>>,
    /// The run's fixed quasi-random points of all variables, row-major `m × d`.
    pub samples: Vec<f64>,
}

impl CvsSetup {
    /// Reads the control sets and distributions of the problem in `ctx` and draws
    /// `mc_samples` points, scrambled by the run's seed. Errors when the problem is not a
    /// control-set problem.
    pub fn new(ctx: &BuildContext<'_>, mc_samples: usize, who: &str) -> Result<Self> {
        let p = ctx.problem;
        if p.control_sets.is_empty() {
            return Err(Error::invalid(format!(
                "{who}: the problem has no control sets (use `problem: {{ type: cvs, … }}`)"
            )));
        }
        let dists = p.extension::<InputDistributions>().ok_or_else(|| {
            Error::invalid(format!(
                "{who}: the problem does not publish the distributions of its variables"
            ))
        })?;
        if mc_samples == 0 {
            return Err(Error::invalid(format!(
                "{who}.mc_samples: must be at least 1"
            )));
        }
        let costs = p
            .control_sets
            .iter()
            .map(|s| s.known_cost)
            .collect::<Option<Vec<f64>>>();
        Ok(CvsSetup {
            sets: p.control_sets.iter().map(|s| s.variables.clone()).collect(),
            costs,
            samples: dists.sample_matrix(mc_samples, derive_seed(&[&ctx.seed, &"mc_samples"])),
        })
    }

    /// [`Self::new`] for a policy that may rank control sets per unit cost, which needs
    /// known costs: asking for it on a problem with unknown costs fails at build time.
    pub fn ranking(
        ctx: &BuildContext<'_>,
        mc_samples: usize,
        who: &str,
        per_unit_cost: bool,
    ) -> Result<Self> {
        let setup = Self::new(ctx, mc_samples, who)?;
        if per_unit_cost {
            setup.known_costs(&format!("{who} (per_unit_cost)"))?;
        }
        Ok(setup)
    }

    /// The known control-set costs, or an error naming `who` when they are unknown.
    pub fn known_costs(&self, who: &str) -> Result<&[f64]> {
        self.costs.as_deref().ok_or_else(|| {
            Error::invalid(format!(
                "{who}: needs known control-set costs, but this problem's costs are unknown \
                 (alpha_etc handles unknown costs)"
            ))
        })
    }

    /// Maximises E[μ + βσ] for the sets in `which` under the context's posterior.
    pub fn maximize(
        &self,
        ctx: &DecisionContext<'_>,
        which: &[usize],
        beta: f64,
        label: &str,
    ) -> Result<Vec<SetMaximum>> {
        self.maximize_with(ctx, which, beta, label, ctx.optimizer)
    }

    /// [`Self::maximize`] with the optimiser settings `settings` instead of the context's.
    pub fn maximize_with(
        &self,
        ctx: &DecisionContext<'_>,
        which: &[usize],
        beta: f64,
        label: &str,
        settings: &OptimizerSettings,
    ) -> Result<Vec<SetMaximum>> {
        let post = ctx.posterior()?;
        let bounds = ExpectedBounds::new(post, &self.samples)?;
        bounds.maximize_sets(
            &self.sets,
            which,
            beta,
            settings,
            derive_seed(&[&ctx.seed, &label]),
        )
    }

    /// E[μ + βσ] of control set `set` at the full point `x` (its controlled coordinates
    /// are read from `x`, the open ones drawn from the run's samples).
    pub fn bound_at(
        &self,
        ctx: &DecisionContext<'_>,
        set: usize,
        beta: f64,
        x: &[f64],
    ) -> Result<f64> {
        let post = ctx.posterior()?;
        let bounds = ExpectedBounds::new(post, &self.samples)?;
        let vars = &self.sets[set];
        let xi: Vec<f64> = vars.iter().map(|&v| x[v]).collect();
        Ok(bounds.for_set(vars, beta)?.value(&xi))
    }
}

/// The full point with `xi` in the coordinates `vars` and 0.5 elsewhere (the problem ignores
/// the open coordinates of a control-set query).
pub fn full_point(dim: usize, vars: &[usize], xi: &[f64]) -> Vec<f64> {
    let mut x = vec![0.5; dim];
    for (&v, &value) in vars.iter().zip(xi) {
        x[v] = value;
    }
    x
}

/// The Monte Carlo sample points (`samples`, row-major with `dim` columns) with the controlled
/// coordinates `vars` set to `xi`: the points an expectation over the open variables averages.
pub fn sample_points(samples: &[f64], dim: usize, vars: &[usize], xi: &[f64]) -> Vec<f64> {
    let mut pts = samples.to_vec();
    for row in pts.chunks_exact_mut(dim) {
        for (&v, &value) in vars.iter().zip(xi) {
            row[v] = value;
        }
    }
    pts
}

/// Plays the best set of `maxima` (per unit cost when asked): the query, and diagnostics
/// with the chosen set and its maximised value under `value_key`.
pub fn play_best(
    maxima: &[SetMaximum],
    setup: &CvsSetup,
    per_unit_cost: bool,
    who: &str,
    value_key: &str,
) -> Result<(Decision, Diagnostics)> {
    let k = best_set(maxima, setup.costs.as_deref(), per_unit_cost, who)?;
    let diagnostics = Diagnostics::from([
        ("cvs.set".to_string(), k as f64),
        (value_key.to_string(), maxima[k].value),
    ]);
    let query = Query {
        control_set: Some(k),
        x: maxima[k].x.clone(),
    };
    Ok((Decision::Evaluate(query), diagnostics))
}

/// Maximises `objective(i)` over the controlled coordinates of each control set `i` of
/// `which` (`sets[i]` are its variable indices), in parallel over sets. Each search is
/// seeded from `seed` and the set's index, so the result does not depend on the number of
/// threads.
pub fn maximize_sets<F, O>(
    sets: &[Vec<usize>],
    which: &[usize],
    dim: usize,
    settings: &OptimizerSettings,
    seed: u64,
    objective: F,
) -> Result<Vec<SetMaximum>>
where
    F: Fn(usize) -> Result<O> + Sync,
    O: Objective,
{
    which
        .par_iter()
        .map(|&i| {
            let vars = sets
                .get(i)
                .ok_or_else(|| Error::invalid(format!("no control set {i}")))?;
            let f = objective(i)?;
            let seed = derive_seed(&[&seed, &i]);
            let best = maximize(&f, vars.len(), settings, seed, &MaximizeOptions::default())?;
            Ok(SetMaximum {
                set: i,
                x: full_point(dim, vars, &best.x),
                value: best.value,
            })
        })
        .collect()
}

/// Every control set's index, `0..sets.len()`.
pub fn all_sets(sets: &[Vec<usize>]) -> Vec<usize> {
    (0..sets.len()).collect()
}

/// The set with the largest value, or with the largest value per unit of known cost when
/// `per_unit_cost` (seed 002, App. B); `who` names the policy in the error for no sets.
pub fn best_set(
    maxima: &[SetMaximum],
    costs: Option<&[f64]>,
    per_unit_cost: bool,
    who: &str,
) -> Result<usize> {
    let score = |m: &SetMaximum| match (costs, per_unit_cost) {
        (Some(c), true) => m.value / c[m.set],
        _ => m.value,
    };
    argmax_by(maxima, score)
        .ok_or_else(|| Error::numerical(format!("{who}: no control set to choose from")))
}

/// Index of the largest score (the first of ties).
pub fn argmax_by<T>(items: &[T], score: impl Fn(&T) -> f64) -> Option<usize> {
    let mut best: Option<(usize, f64)> = None;
    for (k, it) in items.iter().enumerate() {
        let s = score(it);
        if best.is_none_or(|(_, b)| s > b) {
            best = Some((k, s));
        }
    }
    best.map(|(k, _)| k)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn maxima(values: &[f64]) -> Vec<SetMaximum> {
        values
            .iter()
            .enumerate()
            .map(|(set, &value)| SetMaximum {
                set,
                x: vec![0.5],
                value,
            })
            .collect()
    }

    #[test]
    fn per_unit_cost_divides_by_the_set_cost() {
        let m = maxima(&[1.0, 2.0, 3.0]);
        let costs = [0.1, 1.0, 1.0];
        assert_eq!(best_set(&m, Some(&costs), false, "t").unwrap(), 2);
        assert_eq!(best_set(&m, Some(&costs), true, "t").unwrap(), 0);
        // Unknown costs leave the plain maximum.
        assert_eq!(best_set(&m, None, true, "t").unwrap(), 2);
        assert!(best_set(&[], None, false, "t").is_err());
    }

    #[test]
    fn full_point_fills_the_open_coordinates_with_one_half() {
        assert_eq!(
            full_point(4, &[1, 3], &[0.2, 0.9]),
            vec![0.5, 0.2, 0.5, 0.9]
        );
    }
}
