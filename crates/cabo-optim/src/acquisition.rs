//! The bridge between acquisition functions and the optimiser: maximise an
//! [`AcquisitionFn`] over a problem's domain, and [`AcquisitionPolicy`], the policy "evaluate
//! the maximiser of this acquisition".

use crate::averaged::Averaged;
use crate::local_penalty::LocalPenalty;
use crate::multistart::{MaximizeOptions, Maximum, Start, maximize};
use cabo_core::{
    Acquisition, AcquisitionFn, Decision, DecisionContext, Diagnostics, Domain, Error,
    OptimizerSettings, Policy, ProblemInfo, Query, Result,
};

/// Candidates scored per call of [`cabo_core::Objective::values`] in the finite-domain mode.
const FINITE_BATCH: usize = 1024;

/// Maximises `acq` over the problem's domain: multi-start L-BFGS-B over `[0,1]^d` for
/// [`Domain::Continuous`], exhaustive (batched) enumeration for [`Domain::Finite`].
pub fn maximize_acquisition(
    acq: &dyn AcquisitionFn,
    problem: &ProblemInfo,
    settings: &OptimizerSettings,
    seed: u64,
) -> Result<Maximum> {
    match &problem.domain {
        Domain::Continuous => maximize(
            acq,
            problem.dim,
            settings,
            seed,
            &MaximizeOptions::default(),
        ),
        Domain::Finite(candidates) => maximize_finite(acq, candidates, problem.dim),
    }
}

/// The candidate with the largest finite acquisition value (the first of ties).
///
/// Errors when there are no candidates, when a candidate's length differs from `dim`, or when
/// the acquisition is non-finite at every candidate.
pub fn maximize_finite(
    acq: &dyn AcquisitionFn,
    candidates: &[Vec<f64>],
    dim: usize,
) -> Result<Maximum> {
    if candidates.is_empty() {
        return Err(Error::invalid("finite domain: there are no candidates"));
    }
    if let Some((i, c)) = candidates.iter().enumerate().find(|(_, c)| c.len() != dim) {
        return Err(Error::invalid(format!(
            "finite domain: candidate {i} has {} coordinates, the problem has dimension {dim}",
            c.len()
        )));
    }
    let mut best: Option<(usize, f64)> = None;
    let mut xs = Vec::with_capacity(FINITE_BATCH.min(candidates.len()) * dim);
    let mut out = vec![0.0; FINITE_BATCH.min(candidates.len())];
    for (b, chunk) in candidates.chunks(FINITE_BATCH).enumerate() {
        xs.clear();
        for c in chunk {
            xs.extend_from_slice(c);
        }
        let out = &mut out[..chunk.len()];
        acq.values(&xs, out);
        for (k, &v) in out.iter().enumerate() {
            if v.is_finite() && best.is_none_or(|(_, bv)| v > bv) {
                best = Some((b * FINITE_BATCH + k, v));
            }
        }
    }
    let (i, value) = best.ok_or_else(|| {
        Error::numerical(format!(
            "finite domain: the acquisition is not finite at any of the {} candidates",
            candidates.len()
        ))
    })?;
    Ok(Maximum {
        x: candidates[i].clone(),
        value,
        start: Start::Raw,
    })
}

/// The policy "evaluate where the acquisition is largest": prepares the acquisition for each
/// decision, maximises it with the run's optimiser settings and the decision's seed, and
/// stops instead when the acquisition's stopping rule fires at the maximum.
///
/// It asks for full queries only; control-set problems need a policy that chooses a set.
pub struct AcquisitionPolicy {
    acq: Box<dyn Acquisition>,
    last: Diagnostics,
}

impl AcquisitionPolicy {
    /// Wraps an acquisition.
    pub fn new(acq: Box<dyn Acquisition>) -> Self {
        AcquisitionPolicy {
            acq,
            last: Diagnostics::new(),
        }
    }
}

impl Policy for AcquisitionPolicy {
    fn decide(&mut self, ctx: &DecisionContext<'_>) -> Result<Decision> {
        let (maximum, stop, mut diagnostics) = {
            let samples: Vec<DecisionContext<'_>> = (ctx.fantasy_samples().iter())
                .map(|p| ctx.for_sample(p.as_ref()))
                .collect();
            let f = match samples.is_empty() {
                true => self.acq.prepare(ctx)?,
                false => {
                    // Averaged over posteriors conditioned on draws of the points in flight.
                    let parts = (samples.iter())
                        .map(|c| self.acq.prepare(c))
                        .collect::<Result<Vec<_>>>()?;
                    Box::new(Averaged::new(parts))
                }
            };
            if ctx.pending.is_empty() {
                let m = maximize_acquisition(f.as_ref(), ctx.problem, ctx.optimizer, ctx.seed)?;
                let stop = f.stop_at(m.value);
                (m, stop, f.diagnostics())
            } else {
                // Points in flight left out of the data: penalise around them.
                let observed = ctx.data.x_matrix();
                let best = ctx.best_y().unwrap_or(f64::NEG_INFINITY);
                let seed = cabo_core::derive_seed(&[&ctx.seed, &"lipschitz"]);
                let lp = LocalPenalty::new(
                    f.as_ref(),
                    ctx.posterior()?,
                    &ctx.pending,
                    &observed,
                    best,
                    seed,
                )?;
                let m = maximize_acquisition(&lp, ctx.problem, ctx.optimizer, ctx.seed)?;
                // The stopping rule reads the acquisition itself, not its penalised value.
                let stop = f.stop_at(f.value(&m.x));
                (m, stop, lp.diagnostics())
            }
        };
        diagnostics.insert("acq_value".to_string(), maximum.value);
        self.last = diagnostics;
        Ok(match stop {
            Some(reason) => Decision::Stop(reason),
            None => Decision::Evaluate(Query::at(maximum.x)),
        })
    }

    fn diagnostics(&self) -> Diagnostics {
        self.last.clone()
    }

    cabo_core::stateless_checkpoint!("an acquisition policy");
}
