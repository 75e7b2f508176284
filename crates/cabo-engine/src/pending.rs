//! A decision with other workers' points in flight: the view of [`cabo_core::pending`].
//!
//! The policy decides on the observations followed by one fantasy per pending point (in the
//! order the points started), and on the budget charged with their fantasised costs; it is
//! told how many fantasies there are ([`DecisionContext::fantasies`]). The fantasised
//! outcome of a pending point `x` is
//! - **y**: what the run's [`PendingRule`] says — the posterior mean at `x` given the
//!   observations (the Kriging believer), or a constant lie from the values observed;
//! - **cost**: the known cost `c(x)` (noise-free) where the spec has `cost:`, else the
//!   expected cost E\[c(x)\] under the cost model's belief given the observations, else the
//!   mean of the costs observed.
//!
//! The models are fitted on the observations first (the fit the Kriging believer's means
//! come from), then the decision's posterior and cost belief are those fits conditioned on
//! the fantasies, hyperparameters kept, where the model offers the capability
//! ([`cabo_core::capability::Fantasize`], [`cabo_core::capability::FantasizeCost`]); a model
//! without it is fitted again on the observations and fantasies together. No policy sees
//! anything but data, budget and posterior, so every policy works with pending points and
//! none special-cases a model.
//!
//! Local penalisation puts no fantasy in the data: the decision sees the observations, the
//! budget charged as above, and the pending points named ([`DecisionContext::pending`]), and
//! a policy that maximises an acquisition penalises it around them.

use crate::setup::{Setup, decide_in};
use cabo_core::capability::{Covariance, PreparedPoint};
use cabo_core::{
    BudgetState, CostBelief, Dataset, Decision, DecisionContext, Diagnostics, Observation, Outcome,
    PendingRule, Phase, Posterior, Query, Result, Rng, SAMPLED_FANTASIES, derive_seed,
};
use cabo_linalg::Cholesky;
use cabo_spec::spec::{PolicyEntry, Spec};

/// The rule a policy entry decides with while points are pending: its workers' `pending`
/// (the entry's own or the spec's), else what its policy or acquisition states.
pub(crate) fn rule_of(spec: &Spec, entry: &PolicyEntry) -> PendingRule {
    let stated = match (&entry.policy, &entry.acquisition) {
        (Some(p), _) => p.pending(),
        (None, Some(a)) => a.pending(),
        (None, None) => PendingRule::KrigingBeliever,
    };
    entry.workers_in(spec).pending.unwrap_or(stated)
}

/// What a decision with points in flight starts from.
pub(crate) struct Pending<'a> {
    /// The points in flight, in the order they started.
    pub queries: Vec<&'a Query>,
    /// What they are taken to return.
    pub rule: PendingRule,
    /// The budget counts wall time, not cost: the pending points' costs are not charged
    /// (the clock already says what was spent).
    pub wall_time: bool,
}

/// A decision's outcome: `None` when the budget, charged with the pending points'
/// fantasised costs, leaves no room for another evaluation.
pub(crate) type Decided = Option<(Decision, Diagnostics, f64)>;

/// Decision number `iteration` of the run with `pending` in flight (see the module
/// documentation); with nothing in flight, [`crate::setup::decide`] itself.
pub(crate) fn decide(
    setup: &mut Setup,
    data: &Dataset,
    budget: &BudgetState,
    pending: &Pending<'_>,
    (policy_seed, iteration): (u64, usize),
) -> Result<Decided> {
    if pending.queries.is_empty() {
        if budget.exhausted() {
            return Ok(None);
        }
        return crate::setup::decide(setup, data, budget, policy_seed, iteration).map(Some);
    }
    let seed = derive_seed(&[&policy_seed, &iteration]);
    let mut seen = budget.clone();
    let mut observed =
        DecisionContext::new(&setup.info, data, budget, iteration, seed, &setup.optimizer)
            .with_models(setup.model.as_ref(), setup.cost_model.as_ref());
    let xs: Vec<&[f64]> = pending.queries.iter().map(|q| q.x.as_slice()).collect();
    let costs = fantasy_costs(setup, &observed, &xs)?;
    for &c in &costs {
        // A wall-time budget counts the clock, which pending points do not move.
        seen.charge(if pending.wall_time { 0.0 } else { c });
    }
    if seen.exhausted() {
        return Ok(None);
    }
    if !pending.rule.fantasises() {
        // Local penalisation: the observations alone, the pending points named.
        observed.budget = &seen;
        let ctx = observed.with_pending(xs.iter().map(|x| x.to_vec()).collect());
        return decide_in(setup.policy.as_mut(), &ctx).map(Some);
    }
    let kriging = pending.rule.needs_posterior() && setup.model.is_some();
    let ys = match kriging {
        true => {
            let posterior = observed.posterior()?;
            xs.iter().map(|x| posterior.mean_var(x).mean).collect()
        }
        false => vec![lie(pending.rule, &data.ys()); xs.len()],
    };
    let (posterior, cost_belief) = conditioned(setup, &observed, kriging, &xs, &ys, &costs)?;
    let samples = match pending.rule == PendingRule::SampledFantasies && kriging {
        true => sampled(observed.posterior()?, &xs, seed)?,
        false => Vec::new(),
    };
    let mut fantasised = data.clone();
    for ((q, y), cost) in pending.queries.iter().zip(&ys).zip(&costs) {
        fantasised.push(Observation {
            query: (*q).clone(),
            outcome: Outcome::new(*y, *cost, q.x.clone(), None),
            phase: Phase::Policy,
        })?;
    }
    let mut ctx = DecisionContext::new(
        &setup.info,
        &fantasised,
        &seen,
        iteration,
        seed,
        &setup.optimizer,
    )
    .with_fantasies(xs.len())
    .with_fantasy_samples(samples)
    .with_models(setup.model.as_ref(), setup.cost_model.as_ref());
    if let Some(p) = posterior {
        ctx = ctx.with_posterior(p);
    }
    if let Some(b) = cost_belief {
        ctx = ctx.with_cost_belief(b);
    }
    let observed_fit = observed.fit_seconds();
    let (decision, diagnostics, fit_s) = decide_in(setup.policy.as_mut(), &ctx)?;
    Ok(Some((decision, diagnostics, fit_s + observed_fit)))
}

/// The fantasised cost of each pending point.
fn fantasy_costs(setup: &Setup, observed: &DecisionContext<'_>, xs: &[&[f64]]) -> Result<Vec<f64>> {
    if let Some(known) = &setup.cost {
        return Ok(xs.iter().map(|x| known.cost(x)).collect());
    }
    if setup.cost_model.is_some() {
        let belief = observed.cost_belief()?;
        return Ok(xs.iter().map(|x| belief.ln_cost(x).expected()).collect());
    }
    let mean = mean_or(&observed.data.costs(), 1.0);
    Ok(vec![mean; xs.len()])
}

/// A constant liar's value, or without one (the Kriging believer with no model, no value
/// observed) the mean of the values observed, 0 with none.
fn lie(rule: PendingRule, ys: &[f64]) -> f64 {
    rule.lie(ys).unwrap_or_else(|| mean_or(ys, 0.0))
}

/// Posteriors conditioned on [`SAMPLED_FANTASIES`] joint draws of the outcomes at `xs` from
/// `posterior` (its covariance there plus an observation's noise), drawn with `seed`; none
/// where the posterior cannot give covariances or condition (the decision then rests on the
/// Kriging believer alone).
fn sampled(posterior: &dyn Posterior, xs: &[&[f64]], seed: u64) -> Result<Vec<Box<dyn Posterior>>> {
    let (Some(cov), Some(fantasize)) = (posterior.covariance(), posterior.fantasize()) else {
        return Ok(Vec::new());
    };
    let (draws, rows) = joint_draws(cov, xs, SAMPLED_FANTASIES, seed)?;
    draws
        .iter()
        .map(|ys| fantasize.condition(&rows, ys))
        .collect()
}

/// `count` joint draws of noisy outcomes at `xs` under `cov`, and the points row-major.
fn joint_draws(
    cov: &dyn Covariance,
    xs: &[&[f64]],
    count: usize,
    seed: u64,
) -> Result<(Vec<Vec<f64>>, Vec<f64>)> {
    let k = xs.len();
    let rows: Vec<f64> = xs.iter().flat_map(|x| x.iter().copied()).collect();
    let mut prepared = vec![PreparedPoint::default(); k];
    cov.prepare_many(&rows, false, &mut prepared);
    let mut sigma = vec![0.0; k * k];
    for i in 0..k {
        sigma[i * k + i] = prepared[i].var + cov.fantasy_noise();
        for j in 0..i {
            let c = cov.cov(&prepared[i], &prepared[j], &mut [], &mut []);
            sigma[i * k + j] = c;
            sigma[j * k + i] = c;
        }
    }
    let factor = Cholesky::factor(&sigma, k)?;
    let mut rng = Rng::new(derive_seed(&[&seed, &"sampled fantasies"]));
    let draws = (0..count)
        .map(|_| {
            let z: Vec<f64> = (0..k).map(|_| rng.normal()).collect();
            (0..k)
                .map(|i| {
                    let noise: f64 = (0..=i).map(|j| factor.get(i, j) * z[j]).sum();
                    prepared[i].mean + noise
                })
                .collect()
        })
        .collect();
    Ok((draws, rows))
}

/// A posterior and a cost belief conditioned on fantasies, where they were.
type Conditioned = (Option<Box<dyn Posterior>>, Option<Box<dyn CostBelief>>);

/// The fits already made on the observations (the Kriging believer's posterior, the cost
/// belief the fantasised costs came from) conditioned on the fantasies, so that the
/// decision does not fit them again; `None` for a fit not made or a model that cannot
/// condition, which the decision's context then fits itself (see
/// [`DecisionContext::posterior`]).
fn conditioned(
    setup: &Setup,
    observed: &DecisionContext<'_>,
    kriging: bool,
    xs: &[&[f64]],
    ys: &[f64],
    costs: &[f64],
) -> Result<Conditioned> {
    let rows: Vec<f64> = xs.iter().flat_map(|x| x.iter().copied()).collect();
    let posterior = match kriging {
        true => (observed.posterior()?.fantasize())
            .map(|f| f.condition(&rows, ys))
            .transpose()?,
        false => None,
    };
    let cost_belief = match setup.cost.is_none() && setup.cost_model.is_some() {
        true => {
            let ln: Vec<f64> = costs.iter().map(|c| c.ln()).collect();
            (observed.cost_belief()?.fantasize())
                .map(|f| f.condition(&rows, &ln))
                .transpose()?
        }
        false => None,
    };
    Ok((posterior, cost_belief))
}

fn mean_or(values: &[f64], none: f64) -> f64 {
    if values.is_empty() {
        none
    } else {
        values.iter().sum::<f64>() / values.len() as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two points with means 1 and −2, variances 0.5 and 2, covariance 0.6, and noise 0.1.
    struct Two;

    impl Covariance for Two {
        fn dim(&self) -> usize {
            1
        }
        fn fantasy_noise(&self) -> f64 {
            0.1
        }
        fn prepare(&self, x: &[f64], _grad: bool, p: &mut PreparedPoint) {
            (p.mean, p.var) = if x[0] < 0.5 { (1.0, 0.5) } else { (-2.0, 2.0) };
            p.x = x.to_vec();
        }
        fn cov(&self, _a: &PreparedPoint, _b: &PreparedPoint, _: &mut [f64], _: &mut [f64]) -> f64 {
            0.6
        }
    }

    #[test]
    fn joint_draws_have_the_posterior_mean_and_covariance_plus_noise() {
        let (a, b) = ([0.2], [0.8]);
        let n = 40_000;
        let (draws, rows) = joint_draws(&Two, &[&a, &b], n, 3).unwrap();
        assert_eq!(rows, [0.2, 0.8]);
        let mean = |i: usize| draws.iter().map(|d| d[i]).sum::<f64>() / n as f64;
        let (m0, m1) = (mean(0), mean(1));
        let cov = |i: usize, j: usize, mi: f64, mj: f64| {
            draws.iter().map(|d| (d[i] - mi) * (d[j] - mj)).sum::<f64>() / (n - 1) as f64
        };
        // Standard errors: √(v/n) for a mean, about v·√(2/n) for a variance.
        assert!((m0 - 1.0).abs() < 4.0 * (0.6f64 / n as f64).sqrt(), "{m0}");
        assert!((m1 + 2.0).abs() < 4.0 * (2.1f64 / n as f64).sqrt(), "{m1}");
        assert!((cov(0, 0, m0, m0) - 0.6).abs() < 4.0 * 0.6 * (2.0 / n as f64).sqrt());
        assert!((cov(1, 1, m1, m1) - 2.1).abs() < 4.0 * 2.1 * (2.0 / n as f64).sqrt());
        assert!((cov(0, 1, m0, m1) - 0.6).abs() < 0.05);
        // The same seed draws the same outcomes.
        assert_eq!(joint_draws(&Two, &[&a, &b], 3, 3).unwrap().0, draws[..3]);
    }
}
