//! `cargo xtask inspect`: fit a model (and cost model) to given data and report posterior,
//! cost belief and acquisition value + gradient at given points — the tool a plugin author
//! debugs with.

use crate::error::{SpecError, parse_yaml};
use cabo_core::{
    AcquisitionSpec, Budget, BudgetState, BuildContext, CostModelSpec, Dataset, DecisionContext,
    ModelSpec, Observation, OptimizerSettings, ProblemInfo,
};
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::Path;

/// The input file of `inspect`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InspectInput {
    /// Input dimension.
    pub dim: usize,
    /// Observed data (may be empty: the prior).
    #[serde(default)]
    pub data: InspectData,
    /// The objective model.
    pub model: Box<dyn ModelSpec>,
    /// The cost model (needs `data.cost`).
    #[serde(default)]
    pub cost_model: Option<Box<dyn CostModelSpec>>,
    /// An acquisition to evaluate.
    #[serde(default)]
    pub acquisition: Option<Box<dyn AcquisitionSpec>>,
    /// The budget, for budget-aware acquisitions (default: 1 iteration).
    #[serde(default)]
    pub budget: Option<Budget>,
    /// Budget already spent.
    #[serde(default)]
    pub spent: f64,
    /// The 1-based iteration (for schedules such as UCB's β_t).
    #[serde(default = "one")]
    pub iteration: usize,
    /// Seed for anything random (sample paths, multi-start fits).
    #[serde(default)]
    pub seed: u64,
    /// Points to report at.
    pub points: Vec<Vec<f64>>,
}

fn one() -> usize {
    1
}

/// Observations for `inspect`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InspectData {
    /// Inputs in \[0,1\]^d.
    #[serde(default)]
    pub x: Vec<Vec<f64>>,
    /// Objective values.
    #[serde(default)]
    pub y: Vec<f64>,
    /// Costs (needed by a cost model).
    #[serde(default)]
    pub cost: Option<Vec<f64>>,
}

/// What `inspect` reports at one point.
#[derive(Debug, Serialize)]
pub struct PointReport {
    /// The point.
    pub x: Vec<f64>,
    /// Posterior mean of f.
    pub mean: f64,
    /// Posterior standard deviation of f.
    pub sd: f64,
    /// ∂mean/∂x.
    pub dmean: Vec<f64>,
    /// ∂var/∂x.
    pub dvar: Vec<f64>,
    /// Cost belief at the point, when a cost model is given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<CostReport>,
    /// Acquisition value, when an acquisition is given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub acquisition: Option<f64>,
    /// Acquisition gradient.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub acquisition_grad: Option<Vec<f64>>,
}

/// The cost belief at one point.
#[derive(Debug, Serialize)]
pub struct CostReport {
    /// E[ln c].
    pub ln_mean: f64,
    /// sd[ln c].
    pub ln_sd: f64,
    /// E\[c\].
    pub expected: f64,
}

/// The whole `inspect` output.
#[derive(Debug, Serialize)]
pub struct InspectReport {
    /// Fitted hyperparameters and other posterior diagnostics.
    pub posterior: BTreeMap<String, f64>,
    /// One entry per requested point.
    pub points: Vec<PointReport>,
}

/// Runs `inspect` on a YAML/JSON file and returns pretty JSON.
pub fn inspect_file(path: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    let input: InspectInput = parse_yaml(path, &text).map_err(|e: SpecError| e.to_string())?;
    let report = inspect(&input).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::to_string_pretty(&report).map_err(|e| e.to_string())
}

/// Evaluates an [`InspectInput`].
pub fn inspect(input: &InspectInput) -> Result<InspectReport, String> {
    let d = input.dim;
    let data = dataset(input)?;
    let info = ProblemInfo::continuous("inspect", d);
    let ctx = BuildContext {
        problem: &info,
        seed: input.seed,
    };
    input.model.validate(d).map_err(|e| format!("model: {e}"))?;
    let model = RefCell::new(input.model.build(&ctx).map_err(|e| format!("model: {e}"))?);
    let cost_model = match &input.cost_model {
        Some(c) => Some(RefCell::new(
            c.build(&ctx).map_err(|e| format!("cost_model: {e}"))?,
        )),
        None => None,
    };
    let acquisition = match &input.acquisition {
        Some(a) => Some(a.build(&ctx).map_err(|e| format!("acquisition: {e}"))?),
        None => None,
    };
    let mut budget = BudgetState::new(input.budget.clone().unwrap_or(Budget {
        cost: None,
        iterations: Some(input.iteration.max(1)),
    }));
    budget.spent = input.spent;
    let settings = OptimizerSettings::default();
    let dctx = DecisionContext::new(
        &info,
        &data,
        &budget,
        input.iteration,
        input.seed,
        &settings,
    )
    .with_models(Some(&model), cost_model.as_ref());
    let posterior = dctx.posterior().map_err(|e| e.to_string())?;
    let belief = match &cost_model {
        Some(_) => Some(dctx.cost_belief().map_err(|e| e.to_string())?),
        None => None,
    };
    let acq_fn = match &acquisition {
        Some(a) => Some(a.prepare(&dctx).map_err(|e| format!("acquisition: {e}"))?),
        None => None,
    };
    let mut points = Vec::new();
    for (i, x) in input.points.iter().enumerate() {
        if x.len() != d {
            return Err(format!(
                "points[{i}] has {} coordinates, dim is {d}",
                x.len()
            ));
        }
        let mvg = posterior.mean_var_grad(x).map_err(|e| e.to_string())?;
        let cost = belief.map(|b| {
            let l = b.ln_cost(x);
            CostReport {
                ln_mean: l.mean,
                ln_sd: l.var.sqrt(),
                expected: l.expected(),
            }
        });
        let (acquisition, acquisition_grad) = match &acq_fn {
            Some(f) => {
                let mut g = vec![0.0; d];
                let v = f.value_grad(x, &mut g);
                (Some(v), Some(g))
            }
            None => (None, None),
        };
        points.push(PointReport {
            x: x.clone(),
            mean: mvg.mean,
            sd: mvg.var.max(0.0).sqrt(),
            dmean: mvg.dmean,
            dvar: mvg.dvar,
            cost,
            acquisition,
            acquisition_grad,
        });
    }
    Ok(InspectReport {
        posterior: posterior.diagnostics(),
        points,
    })
}

fn dataset(input: &InspectInput) -> Result<Dataset, String> {
    let d = input.dim;
    let data = &input.data;
    if data.x.len() != data.y.len() {
        return Err(format!(
            "data: {} inputs but {} y values",
            data.x.len(),
            data.y.len()
        ));
    }
    if let Some(c) = &data.cost
        && c.len() != data.y.len()
    {
        return Err(format!(
            "data: {} costs but {} y values",
            c.len(),
            data.y.len()
        ));
    }
    let mut set = Dataset::new(d);
    for (i, (x, y)) in data.x.iter().zip(&data.y).enumerate() {
        let cost = data.cost.as_ref().map_or(1.0, |c| c[i]);
        set.push(Observation::initial(x.clone(), *y, cost))
            .map_err(|e| format!("data.x[{i}]: {e}"))?;
    }
    Ok(set)
}
