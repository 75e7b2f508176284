//! What one run is built from: its problem, known cost, models and policy, made from a
//! spec entry and the run's seeds; its initial design; and one policy decision. The run loop
//! ([`crate::run_loop`]) and ask/tell ([`crate::session`]) build and decide here, so both
//! make the same decision from the same observations.

use cabo_core::{
    BudgetState, BuildContext, CostFunction, CostFunctionSpec, CostModel, Dataset, Decision,
    DecisionContext, Diagnostics, Domain, Error, Model, OptimizerSpec, Policy, Problem,
    ProblemInfo, Query, Result, Rng, derive_seed,
};
use cabo_spec::{DesignKind, LoadedSpec, PolicyEntry};
use std::cell::RefCell;
use std::sync::Arc;

/// Everything built for one run (also for an ask/tell [`crate::session::Session`]).
pub(crate) struct Setup {
    pub(crate) problem: Box<dyn Problem>,
    pub(crate) cost: Option<Arc<dyn CostFunction>>,
    pub(crate) info: ProblemInfo,
    pub(crate) model: Option<RefCell<Box<dyn Model>>>,
    pub(crate) cost_model: Option<RefCell<Box<dyn CostModel>>>,
    pub(crate) policy: Box<dyn Policy>,
    pub(crate) optimizer: cabo_core::OptimizerSettings,
}

/// Builds a run's problem (from `pseed`), known cost, models and policy (from `qseed`) for
/// the spec's policy `entry`.
pub(crate) fn build(
    spec: &LoadedSpec,
    entry: &PolicyEntry,
    replication: usize,
    (pseed, qseed): (u64, u64),
) -> Result<Setup> {
    let s = &spec.spec;
    let problem = build_problem(spec, replication, pseed)?;
    let cost = known_cost(s.cost.as_deref(), problem.as_ref(), pseed)?;
    let mut info = problem.info().clone();
    if info.dim != spec.dim {
        return Err(Error::invalid(format!(
            "problem: built with dimension {}, but its spec declared {}",
            info.dim, spec.dim
        )));
    }
    if cost.is_some() {
        info.known_cost = cost.clone();
    }
    let ctx = BuildContext {
        problem: &info,
        seed: qseed,
    };
    let (model, cost_model) = build_models(spec, entry, &ctx)?;
    let policy: Box<dyn Policy> = match (&entry.policy, &entry.acquisition) {
        (Some(p), _) => p.build(&ctx).map_err(|e| e.at("policy"))?,
        (None, Some(a)) => Box::new(cabo_optim::acquisition::AcquisitionPolicy::new(
            a.build(&ctx).map_err(|e| e.at("acquisition"))?,
        )),
        (None, None) => {
            return Err(Error::invalid(
                "policy entry names neither policy nor acquisition",
            ));
        }
    };
    let optimizer = s
        .optimizer
        .merged(
            entry
                .optimizer
                .as_ref()
                .unwrap_or(&OptimizerSpec::default()),
        )
        .resolve(spec.dim)?;
    Ok(Setup {
        problem,
        cost,
        info,
        model,
        cost_model,
        policy,
        optimizer,
    })
}

/// A run's problem instance, from the problem seed `pseed` (a program evaluating it is told
/// the replication it serves).
pub(crate) fn build_problem(
    spec: &LoadedSpec,
    replication: usize,
    pseed: u64,
) -> Result<Box<dyn Problem>> {
    let mut problem = spec
        .spec
        .problem
        .build(pseed)
        .map_err(|e| e.at("problem"))?;
    if let Some(external) = problem.external() {
        external.set_replication(replication);
    }
    Ok(problem)
}

/// A run's model and cost model, fresh from the spec: the policy entry's own where it
/// names one, the spec's otherwise.
pub(crate) fn build_models(
    spec: &LoadedSpec,
    entry: &PolicyEntry,
    ctx: &BuildContext<'_>,
) -> Result<Models> {
    let s = &spec.spec;
    let model = entry
        .model
        .as_ref()
        .or(s.model.as_ref())
        .map(|m| m.build(ctx).map(RefCell::new))
        .transpose()
        .map_err(|e| e.at("model"))?;
    let cost_model = entry
        .cost_model
        .as_ref()
        .or(s.cost_model.as_ref())
        .map(|m| m.build(ctx).map(RefCell::new))
        .transpose()
        .map_err(|e| e.at("cost_model"))?;
    Ok((model, cost_model))
}

/// A run's model and cost model, each where the spec has one.
pub(crate) type Models = (
    Option<RefCell<Box<dyn Model>>>,
    Option<RefCell<Box<dyn CostModel>>>,
);

/// The known cost function of a spec's `cost:` entry for a problem built from `pseed`
/// (shared with `inspect`, so both see the same cost at the same point).
pub fn known_cost(
    spec: Option<&dyn CostFunctionSpec>,
    problem: &dyn Problem,
    pseed: u64,
) -> Result<Option<Arc<dyn CostFunction>>> {
    spec.map(|c| {
        c.build(problem, derive_seed(&[&pseed, &"cost"]))
            .map(Arc::from)
            .map_err(|e| e.at("cost"))
    })
    .transpose()
}

/// The initial design's points.
pub(crate) fn initial_points(
    spec: &LoadedSpec,
    info: &ProblemInfo,
    seed: u64,
) -> Result<Vec<Vec<f64>>> {
    let d = spec.dim;
    let n = spec
        .spec
        .initial_design
        .points
        .count(d)
        .map_err(Error::invalid)?;
    let mut rng = Rng::new(derive_seed(&[&seed, &"initial_design"]));
    if let Domain::Finite(candidates) = &info.domain {
        // Distinct candidates drawn without replacement (as many as exist).
        let mut idx: Vec<usize> = (0..candidates.len()).collect();
        for i in (1..idx.len()).rev() {
            idx.swap(i, rng.below(i as u64 + 1) as usize);
        }
        return Ok(idx
            .into_iter()
            .take(n)
            .map(|i| candidates[i].clone())
            .collect());
    }
    Ok(match spec.spec.initial_design.kind {
        DesignKind::Sobol => cabo_optim::sobol::points(n, d, rng.split())
            .chunks_exact(d.max(1))
            .map(<[f64]>::to_vec)
            .collect(),
        DesignKind::Random => (0..n)
            .map(|_| (0..d).map(|_| rng.uniform()).collect())
            .collect(),
        // Spec validation holds `points` at 1 for the corner (repeats would add nothing).
        DesignKind::Corner => vec![vec![0.0; d]; n],
    })
}

/// Refuses a query the problem cannot evaluate: a point of another dimension, a control set
/// the problem does not have, or a coordinate outside the unit cube.
pub(crate) fn check_query(q: &Query, info: &ProblemInfo) -> Result<()> {
    if q.x.len() != info.dim {
        return Err(Error::invalid(format!(
            "the policy proposed a point of dimension {}, the problem has {}",
            q.x.len(),
            info.dim
        )));
    }
    if let Some(i) = q.control_set
        && i >= info.control_sets.len()
    {
        return Err(Error::invalid(format!(
            "the policy chose control set {i}, the problem has {}",
            info.control_sets.len()
        )));
    }
    if let Some(bad) = q.x.iter().find(|v| !(0.0..=1.0).contains(*v)) {
        return Err(Error::invalid(format!(
            "the policy proposed a coordinate {bad} outside [0, 1]"
        )));
    }
    Ok(())
}

/// Policy decision number `iteration` (1-based) of a run given what it has observed: its
/// seed derives from the policy seed and the iteration, models are fitted on demand.
/// Returns the decision, the diagnostics of the fitted posterior and of the policy, and the
/// seconds spent fitting. The run loop and [`crate::session::Session`] both decide here.
pub(crate) fn decide(
    setup: &mut Setup,
    data: &Dataset,
    budget: &BudgetState,
    policy_seed: u64,
    iteration: usize,
) -> Result<(Decision, Diagnostics, f64)> {
    let ctx = DecisionContext::new(
        &setup.info,
        data,
        budget,
        iteration,
        derive_seed(&[&policy_seed, &iteration]),
        &setup.optimizer,
    )
    .with_models(setup.model.as_ref(), setup.cost_model.as_ref());
    decide_in(setup.policy.as_mut(), &ctx)
}

/// The policy's decision in `ctx`, the diagnostics of the posterior and the policy, and the
/// seconds spent fitting.
pub(crate) fn decide_in(
    policy: &mut dyn Policy,
    ctx: &DecisionContext<'_>,
) -> Result<(Decision, Diagnostics, f64)> {
    let decision = policy.decide(ctx)?;
    let mut diagnostics = ctx.posterior_diagnostics();
    diagnostics.extend(policy.diagnostics());
    Ok((decision, diagnostics, ctx.fit_seconds()))
}
