//! `cargo xtask suggest`: the next query of an experiment run by hand, from a file of the
//! observations made so far (a [`Session`] told every row, then asked).
//!
//! The observations file is comma-separated text: a header naming the columns, then one
//! row per evaluation in the order they were made, the initial design's first.
//!
//! - One column per input, named as the problem names its inputs
//!   ([`cabo_core::ProblemInfo::input_names`]; `x0`, `x1`, … where it names none), in the
//!   problem's own units; `y`, the observed value; and `cost`, the observed cost. Columns
//!   may come in any order.
//! - `cost` may be left out (the column, or a cell) where the spec's cost is known
//!   (`cost:`): the cost is then what a run would charge. Without `cost:` every row needs
//!   it.
//! - A row whose `y` is empty is **pending**: a point being evaluated elsewhere, whose
//!   outcome is not known yet (its `cost` is empty too). Pending rows may stand anywhere;
//!   the others are told in their order, then the suggestions are chosen with the pending
//!   points fantasised (by the spec's pending rule, the Kriging believer by default) and
//!   their expected costs committed ([`Session::ask_while_pending`]), so that k workers can
//!   each be given a point.
//! - Blank lines and lines starting with `#` are skipped; a field may be wrapped in double
//!   quotes (without commas inside); a leading byte-order mark is ignored.
//! - A file that holds only the header means no observation yet. A file without a header
//!   (empty, blank lines or comments only, `/dev/null`) and a file that does not exist are
//!   errors, so that a mistyped path or a truncated file does not silently restart an
//!   experiment from its first design point.
//!
//! Every error names the file, the line and, where one cell is at fault, its column.

use cabo_core::{Error, PendingRule, Phase, Result, SAMPLED_FANTASIES};
use cabo_engine::session::{Session, Suggested, Suggestion};
use cabo_spec::LoadedSpec;
use serde::Serialize;
use serde::ser::SerializeMap;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What `suggest` is asked.
#[derive(Debug, Clone)]
pub struct SuggestOptions {
    /// The policy to ask (may be left out when the spec has one policy).
    pub policy: Option<String>,
    /// The observations file.
    pub data: PathBuf,
    /// How many points to suggest (see [`Session::ask_many`]).
    pub count: usize,
    /// The replication whose seeds to use.
    pub replication: usize,
}

/// The policy named by `policy`, or the spec's only one.
fn policy_name(spec: &LoadedSpec, policy: Option<&str>) -> Result<String> {
    match (policy, spec.spec.policies.as_slice()) {
        (Some(p), _) => Ok(p.to_string()),
        (None, [only]) => Ok(only.name.clone()),
        (None, all) => Err(Error::invalid(format!(
            "spec {:?} has {} policies: name one with --policy ({})",
            spec.spec.name,
            all.len(),
            all.iter()
                .map(|p| p.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// Runs `suggest`: reads the observations into a session of `spec` and returns the
/// suggestions as pretty-printed JSON (see [`Output`]).
pub fn suggest(spec: &LoadedSpec, opts: &SuggestOptions) -> Result<String> {
    if opts.count == 0 {
        return Err(Error::invalid("--count must be at least 1"));
    }
    let policy = policy_name(spec, opts.policy.as_deref())?;
    let mut session = Session::new(spec, &policy, opts.replication)?;
    let text = std::fs::read_to_string(&opts.data).map_err(|e| {
        let hint = if e.kind() == std::io::ErrorKind::NotFound {
            format!(
                " (to start an experiment, create it with the header line `{}`: the first \
                 suggestion is then the initial design's first point)",
                header_line(&session)
            )
        } else {
            String::new()
        };
        Error::invalid(format!("{}: {e}{hint}", opts.data.display()))
    })?;
    let rows = count_rows(&text);
    spec.check_observations(rows)
        .map_err(|m| Error::invalid(format!("{}: {m}", opts.data.display())))?;
    let read = tell_observations(&mut session, &opts.data, &text)?;
    let suggestions = session.ask_while_pending(&read.pending, opts.count)?;
    let out = Output::new(spec, &session, &suggestions, opts.count, read.pending.len());
    serde_json::to_string_pretty(&out).map_err(|e| Error::invalid(e.to_string()))
}

/// The header of an observations file for `session`'s problem.
pub fn header_line(session: &Session) -> String {
    let mut cols = session.input_names();
    cols.push("y".into());
    cols.push("cost".into());
    cols.join(",")
}

/// Refuses a value too large for the models to standardise.
fn check_magnitude(v: f64) -> std::result::Result<(), String> {
    if v.abs() <= cabo_core::MAX_MODELLED_MAGNITUDE {
        return Ok(());
    }
    Err(
        "the value is too large to model: observed values and costs must lie within ±1e150 \
         (the model standardises them, and the squares of larger values are not finite); \
         rescale the column"
            .into(),
    )
}

/// The observation rows of a file: its lines that are neither blank nor comments, less
/// the header.
fn count_rows(text: &str) -> usize {
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
        .count()
        .saturating_sub(1)
}

/// What a column of the observations file holds.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Column {
    Input(usize),
    Y,
    Cost,
}

/// The rows of an observations file.
#[derive(Debug, Clone, Default)]
pub struct Rows {
    /// How many rows were told.
    pub told: usize,
    /// The pending rows' points, in the unit cube, in the file's order.
    pub pending: Vec<Vec<f64>>,
}

/// Tells `session` every row of the observations file `text` (read from `path`, which
/// messages name) in order, but the pending ones, which are returned.
pub fn tell_observations(session: &mut Session, path: &Path, text: &str) -> Result<Rows> {
    let file = path.display().to_string();
    // A byte-order mark (spreadsheet exports) is not part of the first column's name.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'));
    let Some((header_at, header)) = lines.next() else {
        return Err(no_header(session, &file, text));
    };
    let columns = read_header(session, &file, header_at, header)?;
    let names: Vec<String> = session.input_names();
    let column_name = |c: Column| match c {
        Column::Input(i) => names[i].clone(),
        Column::Y => "y".into(),
        Column::Cost => "cost".into(),
    };
    let y_at = columns.iter().position(|c| *c == Column::Y);
    let mut rows = Rows::default();
    for (line, text) in lines {
        let fields = split(text);
        if fields.len() != columns.len() {
            return Err(Error::invalid(format!(
                "{file}:{line}: the row has {} fields, the header {} ({})",
                fields.len(),
                columns.len(),
                header.trim()
            )));
        }
        let at = |j: usize, msg: String| {
            Error::invalid(format!(
                "{file}:{line}: column {} `{}`: {msg}",
                j + 1,
                column_name(columns[j])
            ))
        };
        let pending = y_at.is_some_and(|j| fields[j].is_empty());
        let mut x = vec![f64::NAN; session.dim()];
        let mut y = f64::NAN;
        let mut cost = None;
        for (j, (field, column)) in fields.iter().zip(&columns).enumerate() {
            if pending && !matches!(column, Column::Input(_)) {
                if *column == Column::Cost && !field.is_empty() {
                    return Err(at(
                        j,
                        "the row is pending (its `y` is empty), so its cost is not known yet: \
                         leave `cost` empty too, or give the row its `y`"
                            .into(),
                    ));
                }
                continue;
            }
            let cell = read_cell(field, *column, session.cost_is_known()).map_err(|m| at(j, m))?;
            let Some(v) = cell else { continue };
            match column {
                Column::Input(i) => x[*i] = v,
                Column::Y => y = v,
                Column::Cost => cost = Some(v),
            }
        }
        let unit = session.unit_point(&x).map_err(|(i, msg)| {
            let j = columns
                .iter()
                .position(|c| *c == Column::Input(i))
                .unwrap_or(i);
            at(j, msg)
        })?;
        if pending {
            rows.pending.push(unit);
            continue;
        }
        session
            .tell_unit(unit, y, cost)
            .map_err(|e| Error::invalid(format!("{file}:{line}: {e}")))?;
        rows.told += 1;
    }
    Ok(rows)
}

/// A cell's number; `None` for an empty cost cell where the spec's cost is known (the run
/// charges it); or what is wrong with the cell.
fn read_cell(
    field: &str,
    column: Column,
    cost_known: bool,
) -> std::result::Result<Option<f64>, String> {
    if field.is_empty() {
        if column == Column::Cost && cost_known {
            return Ok(None);
        }
        let why = if column == Column::Cost {
            ": the spec has no known cost (`cost:`), so every observation needs its cost"
        } else {
            ""
        };
        return Err(format!("the cell is empty{why}"));
    }
    let v: f64 = field
        .parse()
        .map_err(|_| format!("expected a number, found {field:?}"))?;
    if !v.is_finite() {
        return Err(format!("{field} is not a finite number"));
    }
    if matches!(column, Column::Y | Column::Cost) {
        check_magnitude(v).map_err(|m| format!("{field}: {m}"))?;
    }
    if column == Column::Cost && v <= 0.0 {
        return Err(format!("{v}: a cost must be positive"));
    }
    Ok(Some(v))
}

/// The error for a file without a header line: nothing in it says that it is an experiment
/// without observations rather than a lost or truncated file.
fn no_header(session: &Session, file: &str, text: &str) -> Error {
    let what = if text.is_empty() {
        "is empty"
    } else {
        "holds only blank lines and comments"
    };
    Error::invalid(format!(
        "{file}: the file {what}: an observations file starts with its header line, even \
         before the first observation (an experiment without observations is the header \
         alone: `{}`)",
        header_line(session)
    ))
}

/// The header's columns: every input and `y` exactly once, `cost` at most once (and
/// required where the cost is not known).
fn read_header(session: &Session, file: &str, line: usize, header: &str) -> Result<Vec<Column>> {
    let names = session.input_names();
    let mut valid: Vec<&str> = names.iter().map(String::as_str).collect();
    valid.extend(["y", "cost"]);
    let mut columns: Vec<Column> = Vec::new();
    for (j, name) in split(header).iter().enumerate() {
        let column = match names.iter().position(|n| n == name) {
            Some(i) => Column::Input(i),
            None if name == "y" => Column::Y,
            None if name == "cost" => Column::Cost,
            None => {
                let closest = cabo_core::registry::closest_of(name, &valid)
                    .map(|c| format!("; did you mean `{c}`?"))
                    .unwrap_or_default();
                return Err(Error::invalid(format!(
                    "{file}:{line}: column {} `{name}` is not an input of the problem, `y` or \
                     `cost`{closest} The columns are: {}",
                    j + 1,
                    header_line(session)
                )));
            }
        };
        if columns.contains(&column) {
            return Err(Error::invalid(format!(
                "{file}:{line}: column {} `{name}` appears twice",
                j + 1
            )));
        }
        columns.push(column);
    }
    let missing: Vec<&str> = valid
        .iter()
        .zip(
            (0..names.len())
                .map(Column::Input)
                .chain([Column::Y, Column::Cost]),
        )
        .filter(|(_, c)| !columns.contains(c))
        .filter(|(_, c)| *c != Column::Cost || !session.cost_is_known())
        .map(|(n, _)| *n)
        .collect();
    if !missing.is_empty() {
        let why = if missing.contains(&"cost") {
            " (the spec has no known cost, `cost:`, so every observation needs its cost)"
        } else {
            ""
        };
        return Err(Error::invalid(format!(
            "{file}:{line}: the header lacks the column(s) {}{why}; the columns are: {}",
            missing
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(", "),
            header_line(session)
        )));
    }
    Ok(columns)
}

/// A line's fields, trimmed, with surrounding double quotes removed.
fn split(line: &str) -> Vec<String> {
    line.split(',')
        .map(|f| {
            let f = f.trim();
            f.strip_prefix('"')
                .and_then(|f| f.strip_suffix('"'))
                .unwrap_or(f)
                .trim()
                .to_string()
        })
        .collect()
}

/// What `suggest` prints.
#[derive(Debug, Serialize)]
pub struct Output<'a> {
    /// The spec's name.
    pub spec: &'a str,
    /// The policy asked.
    pub policy: &'a str,
    /// The replication whose seeds were used.
    pub replication: usize,
    /// Observations read, initial design included.
    pub observations: usize,
    /// How many of them the initial design takes.
    pub initial_design: usize,
    /// Pending rows read (points being evaluated, fantasised for these suggestions).
    #[serde(skip_serializing_if = "is_zero")]
    pub pending: usize,
    /// Where the budget stands.
    pub budget: BudgetOutput,
    /// The points to evaluate next, in order.
    pub queries: Vec<QueryOutput>,
    /// Why no (further) point is suggested: the budget is spent or the policy stopped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub done: Option<String>,
    /// How points after the first were chosen, when more than one was asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The budget in `suggest`'s output.
#[derive(Debug, Serialize)]
pub struct BudgetOutput {
    /// The budget's total cost, if it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    /// The budget's policy evaluations, if it counts them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iterations: Option<usize>,
    /// Cost spent that counts against the budget.
    pub spent: f64,
    /// Policy evaluations made.
    pub policy_evaluations: usize,
}

/// One suggested point in `suggest`'s output.
#[derive(Debug, Serialize)]
pub struct QueryOutput {
    /// The point in the problem's own units, by input name, in the inputs' order.
    pub x: Named,
    /// The same point in the unit cube.
    pub unit_x: Vec<f64>,
    /// `initial` (a point of the initial design) or `policy`.
    pub phase: Phase,
    /// The evaluation's 0-based index in the run (its record's `iter`).
    pub evaluation: usize,
    /// The policy decision's 1-based number (absent for the initial design).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iteration: Option<usize>,
    /// Whether points were pending (pending rows, earlier points of the same answer),
    /// fantasised, when this one was chosen.
    pub pending_fantasised: bool,
    /// What the policy and the posterior reported about the decision.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub diagnostics: BTreeMap<String, f64>,
}

/// Values by name, serialised as a JSON object in the given order.
#[derive(Debug)]
pub struct Named(pub Vec<(String, f64)>);

impl Serialize for Named {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// What a pending point is taken to have returned, as the notes say it.
fn fantasy_phrase(rule: PendingRule) -> String {
    match rule {
        PendingRule::KrigingBeliever => {
            "fantasised at the posterior mean (Kriging believer)".into()
        }
        PendingRule::ConstantLiarMin => {
            "fantasised at the lowest y observed (constant liar)".into()
        }
        PendingRule::ConstantLiarMean => "fantasised at the mean y observed (constant liar)".into(),
        PendingRule::ConstantLiarMax => {
            "fantasised at the highest y observed (constant liar)".into()
        }
        PendingRule::SampledFantasies => format!(
            "fantasised by {SAMPLED_FANTASIES} joint draws from the posterior, the acquisition \
             averaged over them"
        ),
        PendingRule::LocalPenalization => {
            "not fantasised: the acquisition was penalised around them (local penalisation)".into()
        }
    }
}

/// The note on points chosen with earlier ones pending: `pending` rows of the file, or
/// none (the earlier suggestions only).
pub fn pending_note(rule: PendingRule, pending: usize) -> String {
    let fantasy = fantasy_phrase(rule);
    if pending > 0 {
        format!(
            "the points were chosen with the pending rows (and the earlier points) {fantasy}, \
             their expected costs counted against the budget; initial-design points do not \
             depend on it"
        )
    } else {
        format!(
            "points after the first were chosen with the earlier ones pending, {fantasy}; \
             initial-design points do not depend on it"
        )
    }
}

/// Whether a count is zero (left out of the output).
fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl<'a> Output<'a> {
    /// The output for `suggestions` from `session` (asked for `count` points with `pending`
    /// pending rows fantasised).
    pub fn new(
        spec: &'a LoadedSpec,
        session: &'a Session,
        suggestions: &[Suggestion],
        count: usize,
        pending: usize,
    ) -> Self {
        let names = session.input_names();
        let query = |s: &Suggested| QueryOutput {
            x: Named(names.iter().cloned().zip(s.x.iter().copied()).collect()),
            unit_x: s.unit.clone(),
            phase: s.phase,
            evaluation: s.evaluation,
            iteration: s.iteration,
            pending_fantasised: s.pending > 0,
            diagnostics: s.diagnostics.clone(),
        };
        let b = session.budget();
        Output {
            spec: &spec.spec.name,
            policy: session.policy(),
            replication: session.replication(),
            observations: session.observations().len(),
            initial_design: session.initial_design_len(),
            budget: BudgetOutput {
                cost: b.budget.cost,
                iterations: b.budget.iterations,
                spent: b.spent,
                policy_evaluations: b.iterations,
            },
            queries: suggestions
                .iter()
                .filter_map(|s| match s {
                    Suggestion::Evaluate(q) => Some(query(q)),
                    Suggestion::Done(_) => None,
                })
                .collect(),
            done: suggestions.iter().find_map(|s| match s {
                Suggestion::Done(reason) => Some(reason.clone()),
                Suggestion::Evaluate(_) => None,
            }),
            pending,
            note: (pending > 0 || count > 1).then(|| pending_note(session.pending_rule(), pending)),
        }
    }
}
