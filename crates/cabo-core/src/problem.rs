//! The black box being optimised, what a policy may know about it, and its spec.

use crate::{CostFunction, Outcome, Query, Result};
use std::any::{Any, TypeId};
use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::Arc;

/// The search space a policy chooses from, in unit-cube coordinates.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Domain {
    /// The whole cube `[0,1]^d`.
    #[default]
    Continuous,
    /// Finitely many candidate points (discrete problems); each has length `d`.
    Finite(Vec<Vec<f64>>),
}

/// One control set of a cost-varying-variable-subset problem.
#[derive(Debug, Clone, PartialEq)]
pub struct ControlSet {
    /// The variables the learner fixes (sorted indices into `0..d`).
    pub variables: Vec<usize>,
    /// Its cost when the learner is told it (known-cost settings).
    pub known_cost: Option<f64>,
}

/// What a policy is allowed to know about a problem: never its objective.
///
/// Problems with knowledge beyond these fields (the input distributions of a control-set
/// problem, say) attach it as a typed extension, which the plugins that understand it read
/// with [`ProblemInfo::extension`]. That keeps the core closed to plugin-specific fields.
#[derive(Clone, Default)]
pub struct ProblemInfo {
    /// Human-readable name, e.g. `ackley(d=4)`.
    pub name: String,
    /// Input dimension.
    pub dim: usize,
    /// Where queries may go (continuous cube or finite candidates).
    pub domain: Domain,
    /// The cost function when it is known exactly to the learner.
    pub known_cost: Option<Arc<dyn CostFunction>>,
    /// Control sets; empty for ordinary problems (every query is full).
    pub control_sets: Vec<ControlSet>,
    /// The inputs' names, one per dimension, where the problem's spec gives them (the
    /// columns of an ask/tell data file); empty for `x0`, `x1`, …
    pub input_names: Vec<String>,
    extensions: BTreeMap<TypeIdKey, Arc<dyn Any + Send + Sync>>,
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct TypeIdKey(TypeId);

impl ProblemInfo {
    /// A continuous problem of dimension `dim` with nothing else known.
    pub fn continuous(name: impl Into<String>, dim: usize) -> Self {
        ProblemInfo {
            name: name.into(),
            dim,
            ..Default::default()
        }
    }

    /// Attaches plugin-specific knowledge (one value per type).
    pub fn with_extension<T: Any + Send + Sync>(mut self, value: T) -> Self {
        self.extensions
            .insert(TypeIdKey(TypeId::of::<T>()), Arc::new(value));
        self
    }

    /// Reads plugin-specific knowledge attached with [`ProblemInfo::with_extension`].
    pub fn extension<T: Any + Send + Sync>(&self) -> Option<&T> {
        self.extensions
            .get(&TypeIdKey(TypeId::of::<T>()))
            .and_then(|v| v.downcast_ref::<T>())
    }
}

impl Debug for ProblemInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProblemInfo")
            .field("name", &self.name)
            .field("dim", &self.dim)
            .field("domain", &self.domain)
            .field("known_cost", &self.known_cost.is_some())
            .field("control_sets", &self.control_sets)
            .field("input_names", &self.input_names)
            .finish()
    }
}

/// Downcasting a problem to its own type, for plugins that pair a problem with a matching
/// policy: every `'static` problem has it through the blanket implementation, so a problem
/// writes nothing for it. (The blanket covers sized problems only, so `as_any` on a
/// `Box<dyn Problem>` reaches the problem inside, never the box.)
pub trait ProblemAny {
    /// The problem as [`Any`].
    fn as_any(&self) -> &dyn Any;
}

impl<T: Problem + 'static> ProblemAny for T {
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// What a problem evaluated by another program (the `external` plugin) needs from the run
/// it serves, offered through [`Problem::external`].
///
/// Offering it also says that a run must never ask the program a query again that it
/// already answered: such evaluations are expensive, or differ from call to call (a
/// program timed by the wall clock). The runner therefore journals each answer to disk
/// before the next evaluation starts, and a run started again (resumed, or begun anew
/// after a kill) takes the journalled outcome wherever it asks the same query again.
pub trait ExternalEvaluation: Send + Sync {
    /// The index of the replication this instance serves, for a program whose instance
    /// depends on the replication's place in the spec rather than on its seed alone (one
    /// of a fixed list of targets): set right after the build, before any evaluation.
    fn set_replication(&mut self, replication: usize);

    /// Where the program's standard error goes for this run: set before the first
    /// evaluation of every attempt of a run (ask/tell sets none).
    fn set_log_file(&mut self, path: &std::path::Path);

    /// Evaluation `index` of the run (0-based, the initial design included), which the
    /// program may log or cache by; what the runner calls instead of
    /// [`Problem::evaluate`].
    fn evaluate_in_run(&self, query: &Query, seed: u64, index: usize) -> Result<Outcome>;
}

/// The black box: evaluates queries and, for benchmarking, knows its own optimum.
pub trait Problem: ProblemAny + Send + Sync {
    /// What a policy may know about the problem.
    fn info(&self) -> &ProblemInfo;

    /// Evaluates a query. `seed` drives any randomness of this one evaluation (observation
    /// noise, uncontrolled variables), so a run is reproducible. The returned cost is the
    /// problem's own (1 when it has none); a spec's `cost:` function replaces it.
    fn evaluate(&self, query: &Query, seed: u64) -> Result<Outcome>;

    /// The best achievable noise-free value (for regret), when known.
    fn optimum(&self) -> Option<f64> {
        None
    }

    /// The noise-free value a local ascent reaches from `x`, a point as this problem's
    /// outcomes record it ([`Outcome::x`]), played with `control_set` (the query's, `None`
    /// for a full query), for a problem whose [`Problem::optimum`] is a global search's
    /// estimate that a run can beat (a GP sample in many dimensions, the per-set optima of
    /// a problem with control sets). A problem with control sets ascends within the set
    /// the point was played with, since that set decides what the point's value is.
    ///
    /// Reports measure regret against the best of the optimum and these ascents from every
    /// run's best point on the same instance, so a run that finds a better basin than the
    /// search keeps a regret above zero, the same reference serving every policy. `None`
    /// (the default) when the optimum is exact or the problem cannot be ascended.
    fn local_optimum(&self, x: &[f64], control_set: Option<usize>) -> Option<f64> {
        let _ = (x, control_set);
        None
    }

    /// The problem as an evaluator in another program ([`ExternalEvaluation`]), when it is
    /// one; `None` (the default) for a problem evaluated in this process.
    fn external(&mut self) -> Option<&mut dyn ExternalEvaluation> {
        None
    }

    /// Maps a unit-cube point to the problem's own units (for cost functions written in
    /// those units, and for reports). Defaults to the identity.
    fn to_native(&self, x: &[f64]) -> Vec<f64> {
        x.to_vec()
    }

    /// The inverse of [`Problem::to_native`]: a point in the problem's own units (an
    /// observation made by hand) in unit-cube coordinates. A problem that overrides one
    /// overrides both.
    fn native_to_unit(&self, native: &[f64]) -> Vec<f64> {
        native.to_vec()
    }

    /// Problem-specific metrics over the whole history so far (e.g. quality and cost regret),
    /// recorded at every iteration beside the engine's own.
    fn metrics(&self, _history: &[crate::Observation]) -> BTreeMap<String, f64> {
        BTreeMap::new()
    }
}

/// What a spec needs to build a plugin for one replication.
#[derive(Debug, Clone)]
pub struct BuildContext<'a> {
    /// The problem as the learner sees it (dimension, domain, control sets …).
    pub problem: &'a ProblemInfo,
    /// Seed for anything random in the built object.
    pub seed: u64,
}

/// A problem as written in a spec (`problem: { type: ackley, dim: 4 }`).
#[typetag::serde(tag = "type")]
pub trait ProblemSpec: Debug + Send + Sync + dyn_clone::DynClone {
    /// The input dimension, computed without building anything expensive; also the place
    /// to reject bad parameters.
    fn dim(&self) -> Result<usize>;

    /// Builds the problem instance of one replication (`seed` is shared by every policy).
    fn build(&self, seed: u64) -> Result<Box<dyn Problem>>;

    /// The directory of the spec file this problem was read from: relative file paths in
    /// the spec (a data table's `path:`) resolve against it, as in other configuration
    /// formats, so a spec runs the same from any working directory. The runner calls it
    /// right after parsing; a spec that wraps another problem forwards it. What the spec
    /// serialises must not change (run fingerprints must not depend on where cabo runs).
    fn set_spec_dir(&mut self, _dir: &std::path::Path) {}

    /// The names of the metrics [`Problem::metrics`] records (every name it may return), so
    /// that a report asking for `metric:NAME` is checked before anything runs.
    fn metric_names(&self) -> Vec<String> {
        Vec::new()
    }

    /// Whether the problem measures each evaluation's cost itself (an external program that
    /// reports it, or is timed): a spec's known `cost:`, which would replace those costs, is
    /// then refused.
    fn measures_costs(&self) -> bool {
        false
    }

    /// Why several simulated workers (a spec's `workers:` above 1) cannot run this problem,
    /// if they cannot, as the end of "the problem …": the simulated clock evaluates a point
    /// when it starts, lasting its cost, and fantasises it at its query while it runs.
    fn refuses_workers(&self) -> Option<String> {
        None
    }

    /// What a user should know before running this problem, in a sentence each (results
    /// that a fresh rerun will not reproduce, say): `validate` and `run` print them.
    fn caveats(&self) -> Vec<String> {
        Vec::new()
    }
}

dyn_clone::clone_trait_object!(ProblemSpec);

/// Checks a problem's input names, when given (`key` is the spec field, e.g.
/// `external.names`): one per input (`inputs` of them), distinct, and usable as the columns
/// of an observations file beside `y` and `cost` (`suggest` splits its lines at commas): not
/// empty, not `y` or `cost`, without commas, double quotes or control characters, and without
/// spaces at their ends.
pub fn check_input_names(key: &str, names: &[String], inputs: usize) -> Result<()> {
    if names.is_empty() {
        return Ok(());
    }
    if names.len() != inputs {
        return Err(crate::Error::invalid(format!(
            "{key}: gives {} names, the problem has {inputs} inputs",
            names.len()
        )));
    }
    for (i, n) in names.iter().enumerate() {
        if n.is_empty() || n == "y" || n == "cost" {
            return Err(crate::Error::invalid(format!(
                "{key}[{i}]: {n:?} cannot name an input (names are not empty, and `y` and \
                 `cost` name the outputs)"
            )));
        }
        if n.trim() != n || n.contains([',', '"']) || n.chars().any(char::is_control) {
            return Err(crate::Error::invalid(format!(
                "{key}[{i}]: {n:?} cannot be a column of a data file (a name has no commas, \
                 quotes, line breaks or other control characters, and no spaces at its ends)"
            )));
        }
        if names[..i].contains(n) {
            return Err(crate::Error::invalid(format!(
                "{key}[{i}]: {n:?} names two inputs"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod as_any_tests {
    use super::*;

    /// The smallest problem: a constant.
    struct Constant {
        info: ProblemInfo,
    }

    impl Problem for Constant {
        fn info(&self) -> &ProblemInfo {
            &self.info
        }

        fn evaluate(&self, query: &Query, _seed: u64) -> Result<Outcome> {
            Ok(Outcome::new(1.0, 1.0, query.x.clone(), Some(1.0)))
        }
    }

    #[test]
    fn as_any_reaches_the_problem_behind_a_reference_or_a_box() {
        let boxed: Box<dyn Problem> = Box::new(Constant {
            info: ProblemInfo::continuous("constant", 1),
        });
        // The box itself is `'static` too: were the blanket over every `Any`, `as_any` on
        // it would give the box, and the downcast would fail.
        assert!(boxed.as_any().downcast_ref::<Constant>().is_some());
        let by_ref: &dyn Problem = boxed.as_ref();
        assert_eq!(
            by_ref.as_any().downcast_ref::<Constant>().unwrap().info.dim,
            1
        );
    }
}
