//! `cargo xtask inspect`: fit a model (and cost model) to given data and report posterior,
//! cost belief and acquisition value + gradient at given points — the tool a plugin author
//! debugs with.

use crate::error::{SpecError, parse_yaml};
use crate::locate::Locator;
use cabo_core::{
    AcquisitionSpec, Budget, BudgetState, BuildContext, CostFunctionSpec, CostModelSpec, Dataset,
    DecisionContext, Error, ModelSpec, Observation, OptimizerSettings, Outcome, Problem,
    ProblemInfo, Query,
};
use serde::{Deserialize, Serialize};
use std::any::Any;
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
    /// A known cost function, as a run spec's `cost:` (the `known` cost model uses it).
    #[serde(default)]
    pub cost: Option<Box<dyn CostFunctionSpec>>,
    /// The cost model (one that learns costs needs `data.cost`).
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
    check_input(&input).map_err(|(key, message)| {
        SpecError::new(path, Locator::new(&text).find(&key), &key, message).to_string()
    })?;
    let report = inspect(&input).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::to_string_pretty(&report).map_err(|e| e.to_string())
}

/// Evaluates an [`InspectInput`].
pub fn inspect(input: &InspectInput) -> Result<InspectReport, String> {
    check_input(input).map_err(|(key, message)| format!("`{key}`: {message}"))?;
    let d = input.dim;
    let data = dataset(input)?;
    let info = problem_info(input)?;
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

/// The problem `inspect` works on: the unit cube of dimension `dim`, with the known cost
/// function of `cost:` built as a run builds it.
fn problem_info(input: &InspectInput) -> Result<ProblemInfo, String> {
    let cube = UnitCube {
        info: ProblemInfo::continuous("inspect", input.dim),
    };
    if let Some(c) = &input.cost {
        c.validate(input.dim).map_err(|e| format!("cost: {e}"))?;
    }
    let cost = crate::engine::known_cost(input.cost.as_deref(), &cube, input.seed)
        .map_err(|e| e.to_string())?;
    let mut info = cube.info;
    info.known_cost = cost;
    Ok(info)
}

/// The stand-in problem a cost function is built for: `inspect` has points, not an
/// objective, and its points are in the unit cube.
struct UnitCube {
    info: ProblemInfo,
}

impl Problem for UnitCube {
    fn info(&self) -> &ProblemInfo {
        &self.info
    }

    fn evaluate(&self, _query: &Query, _seed: u64) -> cabo_core::Result<Outcome> {
        Err(Error::invalid("inspect evaluates no objective"))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// A plugin spec's `type` as written in the file, in backticks.
fn type_name<S: Serialize>(spec: Option<&S>) -> String {
    let value = spec.and_then(|s| serde_json::to_value(s).ok());
    match value.as_ref().and_then(|v| v.get("type")?.as_str()) {
        Some(t) => format!("`{t}`"),
        None => "(this one)".into(),
    }
}

/// Rejects inputs `inspect` would otherwise evaluate silently wrong. Returns (key, message).
fn check_input(input: &InspectInput) -> Result<(), (String, String)> {
    check_finite(input)?;
    check_costs(input)
}

/// A cost model that learns from costs (its prior is not known exactly) needs the observed
/// costs: without `data.cost` every cost would read as 1 (ln c = 0).
fn check_costs(input: &InspectInput) -> Result<(), (String, String)> {
    let (Some(spec), None) = (&input.cost_model, &input.data.cost) else {
        return Ok(());
    };
    if input.data.y.is_empty() {
        return Ok(()); // the prior: there are no costs to give
    }
    // Errors here are left for `inspect` to report with its own context.
    let Ok(info) = problem_info(input) else {
        return Ok(());
    };
    let ctx = BuildContext {
        problem: &info,
        seed: input.seed,
    };
    let learns = spec
        .build(&ctx)
        .and_then(|mut m| m.fit(&Dataset::new(input.dim), input.seed))
        .is_ok_and(|prior| !prior.is_known());
    if learns {
        let name = type_name(Some(spec));
        return Err((
            "cost_model".into(),
            format!("cost model {name} needs observed costs: give `data.cost`"),
        ));
    }
    Ok(())
}

/// Every number `inspect` reads must be finite: serde-saphyr reads `.nan` and `.inf`, and a
/// NaN point would otherwise come out as `null` in the report. Returns (key, message).
fn check_finite(input: &InspectInput) -> Result<(), (String, String)> {
    let data = &input.data;
    for (key, rows) in [("points", &input.points), ("data.x", &data.x)] {
        for (i, row) in rows.iter().enumerate() {
            finite(&format!("{key}[{i}]"), row)?;
        }
    }
    finite("data.y", &data.y)?;
    finite("data.cost", data.cost.as_deref().unwrap_or_default())
}

fn finite(key: &str, values: &[f64]) -> Result<(), (String, String)> {
    match values.iter().position(|v| !v.is_finite()) {
        Some(j) => Err((
            format!("{key}[{j}]"),
            format!("{} where a finite number is needed", values[j]),
        )),
        None => Ok(()),
    }
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
