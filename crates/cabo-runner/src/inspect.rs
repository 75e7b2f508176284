//! `cargo xtask inspect`: fit a model (and cost model) to given data and report posterior,
//! cost belief and acquisition value + gradient at given points — the tool a plugin author
//! debugs with — and, under `lookahead:`, the value and gradient of a tree policy's scenario
//! tree at given node points, with given standard-normal base samples or the policy's own,
//! so that an independent implementation can check the tree value for value.

use cabo_core::registry::{self, Kind};
use cabo_core::{
    AcquisitionSpec, Budget, BudgetState, BuildContext, CostFunctionSpec, CostModelSpec, Dataset,
    DecisionContext, Error, LookaheadSpec, ModelSpec, Observation, OptimizerSettings, Outcome,
    PolicySpec, Problem, ProblemInfo, Query, TreeShape,
};
use cabo_spec::error::{SpecError, parse_yaml};
use cabo_spec::locate::Locator;
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
    /// Seed for anything random (sample paths, multi-start fits, a tree's own base samples).
    #[serde(default)]
    pub seed: u64,
    /// Points to report at.
    #[serde(default)]
    pub points: Vec<Vec<f64>>,
    /// A tree policy's scenario tree to evaluate.
    #[serde(default)]
    pub lookahead: Option<LookaheadInput>,
}

/// A tree policy's scenario tree at given node points (`lookahead:`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LookaheadInput {
    /// The policy, as a run spec's `policy:` (`bmsei`, `ms_ei`, `kg`).
    pub policy: Box<dyn PolicySpec>,
    /// The node points in [`TreeShape`]'s order: the root, then stage 1's nodes, then stage
    /// 2's (the children of stage 1's first node first), …
    pub nodes: Vec<Vec<f64>>,
    /// Standard-normal base samples per stage after the root: per stage, either one entry per
    /// fantasy (shared by every parent of the stage, as BoTorch shares them) or one per node
    /// of the stage; each entry `[ε_y]`, or `[ε_y, ε_ln c]` when the cost is modelled.
    /// Absent: the policy's own for a decision seeded by `seed`.
    #[serde(default)]
    pub base_samples: Option<Vec<Vec<Vec<f64>>>>,
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
    /// The scenario tree, when `lookahead:` is given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lookahead: Option<LookaheadReport>,
}

/// What `inspect` reports of a scenario tree.
#[derive(Debug, Serialize)]
pub struct LookaheadReport {
    /// The policy's `type`.
    pub policy: String,
    /// The fantasy counts per stage after the root.
    pub fantasies: Vec<usize>,
    /// The tree's value: what the policy maximises, and a decision records as `acq_value`.
    pub value: f64,
    /// What the value depends on besides the points and samples (`incumbent`, `budget`).
    pub inputs: BTreeMap<String, f64>,
    /// Every node, in the input's order.
    pub nodes: Vec<NodeReport>,
    /// The base samples used, in the shape `base_samples:` takes: per stage, one entry per
    /// fantasy when every parent shares them, else one per node of the stage.
    pub base_samples: Vec<Vec<Vec<f64>>>,
}

/// One node of a scenario tree.
#[derive(Debug, Serialize)]
pub struct NodeReport {
    /// 0 for the root, k for stage k.
    pub stage: usize,
    /// The fantasy index taken at each stage from the root (`[]` for the root).
    pub path: Vec<usize>,
    /// The node's weight in the tree's average, `1/(m₁⋯m_stage)`.
    pub weight: f64,
    /// The node's point.
    pub x: Vec<f64>,
    /// The node's own term (unweighted); the value is the weighted sum over nodes.
    pub term: f64,
    /// ∂value/∂x of the tree's value with respect to this node's point.
    pub gradient: Vec<f64>,
    /// The base sample of the fantasised observation at the parent's point that leads here
    /// (absent at the root).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_sample: Option<Vec<f64>>,
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

/// Evaluates an [`InspectInput`]. One function because what it builds borrows in a chain:
/// the decision context borrows the data, budget and models, the posterior, cost belief
/// and prepared acquisition borrow the context, and each point reads all three; helpers
/// would have to name those borrowed plugin types. The body follows the order a decision
/// builds them in.
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
    let lookahead = match &input.lookahead {
        Some(l) => Some(evaluate_tree(l, &dctx).map_err(|e| format!("lookahead: {e}"))?),
        None => None,
    };
    Ok(InspectReport {
        posterior: posterior.diagnostics(),
        points,
        lookahead,
    })
}

/// Evaluates a checked [`LookaheadInput`] for the decision `ctx`.
fn evaluate_tree(
    input: &LookaheadInput,
    ctx: &DecisionContext<'_>,
) -> Result<LookaheadReport, String> {
    let spec = tree_spec(input).map_err(|(_, m)| m)?;
    let shape = TreeShape::new(&spec.fantasies());
    let given = input
        .base_samples
        .as_ref()
        .map(|s| shape.per_node(s).ok_or("base samples of the wrong shape"))
        .transpose()?;
    let tree = spec
        .lookahead(ctx, given.as_deref())
        .map_err(|e| e.to_string())?;
    let xs = input.nodes.concat();
    let mut grad = vec![0.0; xs.len()];
    let value = tree.value_grad(&xs, &mut grad);
    let terms = tree.node_values(&xs);
    let samples = tree.base_samples();
    let d = ctx.problem.dim;
    let nodes = shape
        .paths()
        .into_iter()
        .enumerate()
        .map(|(i, path)| NodeReport {
            stage: path.len(),
            weight: (shape.fantasies()[..path.len()].iter()).fold(1.0, |w, &m| w / m as f64),
            path,
            x: input.nodes[i].clone(),
            term: terms[i],
            gradient: grad[i * d..(i + 1) * d].to_vec(),
            base_sample: i.checked_sub(1).map(|j| samples[j].clone()),
        })
        .collect();
    Ok(LookaheadReport {
        policy: type_name(Some(&input.policy)).trim_matches('`').into(),
        fantasies: shape.fantasies().to_vec(),
        value,
        inputs: tree.diagnostics(),
        nodes,
        base_samples: shape.per_stage(&samples),
    })
}

/// The tree of `lookahead.policy`, or (key, message) naming the policies that have one.
fn tree_spec(input: &LookaheadInput) -> Result<&dyn LookaheadSpec, (String, String)> {
    if let Some(spec) = input.policy.lookahead() {
        return Ok(spec);
    }
    let name = type_name(Some(&input.policy));
    let trees = tree_policies();
    let mut message = format!(
        "policy {name} has no scenario tree to evaluate; the policies with one are {}",
        trees
            .iter()
            .map(|t| format!("`{t}`"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if let Some(near) = registry::closest_of(name.trim_matches('`'), &trees) {
        message.push_str(&format!(" (did you mean `{near}`?)"));
    }
    Err(("lookahead.policy".into(), message))
}

/// The registered policies that have a scenario tree (read from their catalogue examples).
fn tree_policies() -> Vec<&'static str> {
    registry::catalogue()
        .into_iter()
        .filter(|p| p.kind == Kind::Policy)
        .filter(|p| {
            parse_yaml::<Box<dyn PolicySpec>>(Path::new(p.name), p.example_yaml)
                .is_ok_and(|spec| spec.lookahead().is_some())
        })
        .map(|p| p.name)
        .collect()
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
    let cost = cabo_engine::known_cost(input.cost.as_deref(), &cube, input.seed)
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
    check_costs(input)?;
    match &input.lookahead {
        Some(l) => {
            check_lookahead(l, input.dim)?;
            check_tree_data(l, input)
        }
        None => Ok(()),
    }
}

/// A tree policy decides only after an observation (as a run refuses an empty initial
/// design for it) and, when it fantasises costs, with a cost model. Returns (key, message).
fn check_tree_data(tree: &LookaheadInput, input: &InspectInput) -> Result<(), (String, String)> {
    let name = type_name(Some(&tree.policy));
    if input.data.y.is_empty() && tree.policy.needs_incumbent() {
        return Err((
            "data".into(),
            format!(
                "policy {name} decides only after an observation: give at least one in `data.x` and `data.y`"
            ),
        ));
    }
    let needs_costs = tree.policy.requires().cost_model != cabo_core::Capabilities::NONE;
    if needs_costs && input.cost_model.is_none() {
        return Err((
            "lookahead.policy".into(),
            format!(
                "policy {name} fantasises costs: give a `cost_model:` (`log_gp` with `data.cost`, or `known` with `cost:`)"
            ),
        ));
    }
    Ok(())
}

/// A tree's policy, node points and base samples must fit its shape. Returns (key, message).
fn check_lookahead(input: &LookaheadInput, dim: usize) -> Result<(), (String, String)> {
    let spec = tree_spec(input)?;
    input
        .policy
        .validate(dim)
        .map_err(|e| ("lookahead.policy".to_string(), e.to_string()))?;
    let shape = TreeShape::new(&spec.fantasies());
    check_nodes(&input.nodes, &shape, dim)?;
    match &input.base_samples {
        Some(s) => check_base_samples(s, &shape, spec.outputs(), type_name(Some(&input.policy))),
        None => Ok(()),
    }
}

/// One point of `dim` coordinates in [0, 1] per node. Returns (key, message).
fn check_nodes(nodes: &[Vec<f64>], shape: &TreeShape, dim: usize) -> Result<(), (String, String)> {
    if nodes.len() != shape.nodes() {
        let stages: Vec<String> = (1..=shape.stages())
            .map(|s| format!("{} at stage {s}", shape.stage_nodes(s)))
            .collect();
        return Err((
            "lookahead.nodes".into(),
            format!(
                "{} node points for a tree of {} nodes (fantasies {:?}): the root, then {}",
                nodes.len(),
                shape.nodes(),
                shape.fantasies(),
                stages.join(", then ")
            ),
        ));
    }
    for (i, x) in nodes.iter().enumerate() {
        let key = format!("lookahead.nodes[{i}]");
        if x.len() != dim {
            return Err((key, format!("{} coordinates, dim is {dim}", x.len())));
        }
        finite(&key, x)?;
        if let Some(j) = x.iter().position(|v| !(0.0..=1.0).contains(v)) {
            return Err((
                format!("{key}[{j}]"),
                format!(
                    "{} is outside [0, 1]: node points lie in the unit cube",
                    x[j]
                ),
            ));
        }
    }
    Ok(())
}

/// Per stage after the root, `m` shared entries or one per node of the stage, each of
/// `outputs` finite numbers. Returns (key, message).
fn check_base_samples(
    stages: &[Vec<Vec<f64>>],
    shape: &TreeShape,
    outputs: usize,
    policy: String,
) -> Result<(), (String, String)> {
    let key = "lookahead.base_samples";
    if stages.len() != shape.stages() {
        return Err((
            key.into(),
            format!(
                "{} stages of base samples for a tree with {} stages after the root (fantasies {:?}): one list per stage",
                stages.len(),
                shape.stages(),
                shape.fantasies()
            ),
        ));
    }
    let entry = match outputs {
        1 => "[ε_y]".to_string(),
        _ => "[ε_y, ε_ln c]".to_string(),
    };
    for (s, entries) in stages.iter().enumerate() {
        let (m, count) = (shape.fantasies()[s], shape.stage_nodes(s + 1));
        if entries.len() != m && entries.len() != count {
            return Err((
                format!("{key}[{s}]"),
                format!(
                    "{} entries for stage {}, which expects {m} (one per fantasy, shared by every parent) or {count} (one per node of the stage)",
                    entries.len(),
                    s + 1
                ),
            ));
        }
        for (j, e) in entries.iter().enumerate() {
            let at = format!("{key}[{s}][{j}]");
            if e.len() != outputs {
                return Err((
                    at,
                    format!(
                        "{} numbers where policy {policy} draws {outputs} per fantasy: {entry}",
                        e.len()
                    ),
                ));
            }
            finite(&at, e)?;
        }
    }
    Ok(())
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
