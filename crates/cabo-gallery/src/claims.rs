//! Each claim's row: its paired statistics and verdict (from the per-run values), a study's
//! or a runtime's direct check, or the reason it cannot run or the test that verifies it.
//!
//! A paired check compares the claim's policy with each comparator replication by
//! replication (replication r of every policy shares its problem instance and initial
//! design), and [`cabo_evidence::decide`] walks the spec's planned looks: a claim is decided
//! at the first look whose repeated confidence intervals (Holm over the comparators) lie on
//! one side. Checks that read several specs' runs (a half-budget run against a full-budget
//! one, an advantage from spec to spec, tallies over settings) are decided in the `across` module.

use super::schema::{
    Check, Claim, Direction, GallerySpec, OnFailure, Settled, grid_share, metric_of,
};
use super::values::RunValues;
use super::{SpecResult, sig};
pub(super) use across::plan_across;
use cabo_evidence::{Comparison, Decision, Looks, Test};
use std::fmt::Write;

/// What a claim's row says.
#[derive(Debug)]
pub enum Outcome {
    /// Decided (or not yet) by paired statistics.
    Paired(Paired),
    /// A study's or a runtime's check: the numbers and what they decide.
    Direct {
        /// What was measured.
        text: String,
        /// The verdict: holds when the check passes, else what its failure decides.
        verdict: cabo_evidence::Verdict,
    },
    /// A rate check: the mean log–log slope of a policy's runs, decided like a paired check.
    Rate(Rate),
    /// No result yet.
    NotRun,
    /// cabo cannot run it, for this reason.
    CannotRun(String),
    /// A repository test verifies it (`file: function`).
    Tested(String),
}

/// A paired check's decision and what it rests on.
#[derive(Debug)]
pub struct Paired {
    /// The decision at the look that decided, or the last the data reach.
    pub decision: Decision,
    /// The paper's replications (the last look).
    pub of: usize,
    /// Complete pairs there are (the shortest comparison).
    pub have: usize,
    /// Which interval and correction, for the line under the table.
    pub describe: String,
    /// The policies the claim compares, with the replications each has (from 0, in a row).
    pub policies: Vec<(String, usize)>,
    /// Comparators without a run yet: the claim cannot hold before they have some.
    pub waiting: Vec<String>,
}

/// A rate check's decision: the slopes' advantage 1 − slope per replication, decided as
/// a one-sided test against 1, and the mean R / x at the grid's quarters.
#[derive(Debug)]
pub struct Rate {
    /// The decision, with the advantages 1 − slope against "slope 1".
    pub paired: Paired,
    /// The first grid share of the fit.
    pub from: f64,
    /// (share of the budget, x there, mean R / x over the runs counted).
    pub ratios: Vec<(f64, f64, f64)>,
}

/// The kinds a verdict line counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The claim holds.
    Holds,
    /// It does not.
    DoesNotHold,
    /// Undecided at the replications there are.
    Inconclusive,
    /// No result.
    NotRun,
    /// It cannot run.
    CannotRun,
    /// A test verifies it.
    Tested,
}

/// The kinds in the order the verdict line lists them, with their words.
pub const KINDS: [(Kind, &str); 6] = [
    (Kind::Holds, "hold"),
    (Kind::DoesNotHold, "do not hold"),
    (Kind::Inconclusive, "inconclusive"),
    (Kind::NotRun, "not run yet"),
    (Kind::CannotRun, "cannot run"),
    (Kind::Tested, "verified by a test"),
];

impl Outcome {
    /// The kind the verdict line counts it as.
    pub fn kind(&self) -> Kind {
        use cabo_evidence::Verdict as V;
        match self {
            Outcome::Paired(p) | Outcome::Rate(Rate { paired: p, .. }) => {
                match p.decision.verdict {
                    V::Holds => Kind::Holds,
                    V::DoesNotHold => Kind::DoesNotHold,
                    V::Inconclusive => Kind::Inconclusive,
                }
            }
            Outcome::Direct { verdict, .. } => match verdict {
                V::Holds => Kind::Holds,
                V::DoesNotHold => Kind::DoesNotHold,
                V::Inconclusive => Kind::Inconclusive,
            },
            Outcome::NotRun => Kind::NotRun,
            Outcome::CannotRun(_) => Kind::CannotRun,
            Outcome::Tested(_) => Kind::Tested,
        }
    }

    /// Whether more replications could still decide it.
    pub fn undecided(&self) -> Option<&Paired> {
        match self {
            Outcome::Paired(p) | Outcome::Rate(Rate { paired: p, .. })
                if p.decision.verdict == cabo_evidence::Verdict::Inconclusive
                    && (!p.decision.last_look || !p.waiting.is_empty()) =>
            {
                Some(p)
            }
            _ => None,
        }
    }
}

/// The statistics test of a paired check.
fn test_of(check: &Check) -> Option<Test> {
    match check {
        Check::Better { .. } => Some(Test::Better),
        Check::Comparable { margin, .. } => Some(Test::Comparable { margin: *margin }),
        Check::NotWorse { margin, .. } => Some(Test::NotWorse { margin: *margin }),
        Check::BetterThanAny { .. } => Some(Test::BetterThanAny),
        _ => None,
    }
}

/// The planned looks of a gallery spec.
pub fn looks_of(spec: &GallerySpec) -> Looks {
    Looks::planned(spec.paper_replications, spec.looks())
}

/// The replications 0, 1, … in a row that `policy` has on `metric`.
fn contiguous(values: &RunValues, policy: &str, metric: &str) -> usize {
    let reps = values.replications(policy, metric);
    reps.iter().enumerate().take_while(|(i, r)| i == *r).count()
}

/// A paired check's decision on the per-run values.
pub fn decide(
    claim: &Claim,
    check: &Check,
    spec: &GallerySpec,
    values: &RunValues,
) -> Result<Outcome, String> {
    let (Some((policy, others)), Some((on, at)), Some(test)) =
        (check.paired(), check.reading(), test_of(check))
    else {
        return Err(format!("claim {}: not a paired check", claim.id));
    };
    let metric = metric_of(claim);
    let early = at
        .map(grid_share)
        .transpose()
        .map_err(|e| format!("claim {}: check.at: {e}", claim.id))?;
    let (comparisons, waiting): (Vec<Comparison>, Vec<Comparison>) = others
        .iter()
        .map(|o| Comparison {
            against: o.clone(),
            advantages: values.advantages(policy, o, metric, on, early),
        })
        .partition(|c| !c.advantages.is_empty());
    let have = comparisons
        .iter()
        .map(|c| c.advantages.len())
        .min()
        .unwrap_or(0);
    let policies = std::iter::once(policy)
        .chain(others.iter().map(String::as_str))
        .map(|p| (p.to_string(), contiguous(values, p, metric)))
        .collect();
    if have == 0 {
        return Ok(Outcome::NotRun);
    }
    let looks = looks_of(spec);
    Ok(Outcome::Paired(Paired {
        decision: cabo_evidence::decide_among(&test, &comparisons, others.len(), &looks),
        of: spec.paper_replications,
        have,
        describe: cabo_evidence::describe(&test, others.len(), &looks),
        policies,
        waiting: waiting.into_iter().map(|c| c.against).collect(),
    }))
}

/// A claim's outcome on the page's spec results.
pub(super) fn evaluate(claim: &Claim, results: &[SpecResult]) -> Result<Outcome, String> {
    let (spec, check) = match claim.settled() {
        Some(Settled::CannotRun(why)) => return Ok(Outcome::CannotRun(why.to_string())),
        Some(Settled::TestedBy(test)) => return Ok(Outcome::Tested(test.to_string())),
        Some(Settled::Check { spec, check }) => (spec, check),
        None => return Err(format!("claim {}: settled no way", claim.id)),
    };
    let r = results
        .iter()
        .find(|r| r.spec.path == spec)
        .ok_or_else(|| {
            format!(
                "claim {}: spec {spec} is not in the paper's specs",
                claim.id
            )
        })?;
    if check.across_specs() {
        return across::decide(claim, check, &r.spec, results);
    }
    if check.runs_read().is_some() {
        return match &r.values {
            Some(values) => decide_runs(claim, check, &r.spec, values),
            None => Ok(Outcome::NotRun),
        };
    }
    if let Some(study) = &r.study
        && let Some(relation) = study_rows(check, study)
    {
        let (text, holds) = relation.map_err(|e| format!("claim {}: {e}", claim.id))?;
        return Ok(direct_outcome(check, text, holds));
    }
    Ok(match direct(check, r) {
        Some((text, holds)) => direct_outcome(check, text, holds),
        None => Outcome::NotRun,
    })
}

/// The verdict cell of a study's or a runtime's check, which a kept row is also read back
/// from.
pub(super) fn direct_verdict_cell(verdict: cabo_evidence::Verdict) -> &'static str {
    match verdict {
        cabo_evidence::Verdict::Holds => "**holds**",
        cabo_evidence::Verdict::DoesNotHold => "**does not hold**",
        cabo_evidence::Verdict::Inconclusive => {
            "*inconclusive: the bound checked is not the claim's quantity*"
        }
    }
}

/// A study's or a runtime's check that passes (`holds`) or not, as the check says a
/// failure decides.
fn direct_outcome(check: &Check, text: String, holds: bool) -> Outcome {
    use cabo_evidence::Verdict as V;
    let verdict = match (holds, check) {
        (true, _) => V::Holds,
        (
            false,
            Check::StudyAtMost {
                on_failure: OnFailure::Inconclusive,
                ..
            },
        ) => V::Inconclusive,
        (false, _) => V::DoesNotHold,
    };
    Outcome::Direct { text, verdict }
}

/// A study's or a runtime's check on the spec's results.
fn direct(check: &Check, r: &SpecResult) -> Option<(String, bool)> {
    match check {
        Check::StudyMin {
            table,
            column,
            at_least,
        } => study_min(r.study.as_ref()?, table, column, *at_least),
        Check::StudyMax {
            table,
            column,
            at_least,
        } => study_max(r.study.as_ref()?, table, column, *at_least),
        Check::Slowest { policy } => slowest(&r.decision_seconds, policy),
        Check::StudyAtMost {
            table,
            left,
            right,
            slack_column,
            slack,
            on_failure: _,
        } => {
            let columns = [left, right].map(String::as_str);
            study_at_most(
                r.study.as_ref()?,
                table,
                columns,
                slack_column.as_deref(),
                *slack,
            )
        }
        Check::Better { .. }
        | Check::Comparable { .. }
        | Check::NotWorse { .. }
        | Check::BetterThanAny { .. }
        | Check::BetterAcross { .. }
        | Check::ComparableAcross { .. }
        | Check::NotWorseAcross { .. }
        | Check::AdvantageShrinks { .. }
        | Check::LowestMostOften { .. }
        | Check::SomeSetting { .. }
        | Check::StudyMonotone { .. }
        | Check::StudyConvex { .. }
        | Check::Sublinear { .. } => None,
    }
}

/// Text for a Markdown table cell: pipes escaped, line breaks as spaces.
pub fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// The claims table's header.
pub const TABLE_HEAD: &str = "| claim | where | n / paper's n | mean paired advantage [repeated interval] | verdict |\n|---|---|---:|---|---|";

/// One claim's row of the claims table.
pub fn row(claim: &Claim, outcome: &Outcome) -> String {
    let quote = claim
        .quote
        .as_deref()
        .map_or(String::new(), |q| format!("<br>*“{}”*", cell(q)));
    let note = claim
        .note
        .as_deref()
        .map_or(String::new(), |n| format!(" — {}", cell(n)));
    let (n, numbers, verdict) = cells(outcome);
    format!(
        "| **{}** {}{quote} | {} | {n} | {numbers} | {verdict}{note} |",
        claim.id,
        cell(&claim.claim),
        cell(&claim.source)
    )
}

/// The n, numbers and verdict cells of an outcome.
/// A sequential decision's "n / paper's n" cell (n: the look that decided, or the runs before
/// the first look) and its verdict cell.
fn count_and_verdict(p: &Paired) -> (String, String) {
    use cabo_evidence::Verdict as V;
    let d = &p.decision;
    let n = if d.n == 0 { p.have } else { d.n };
    let verdict = match d.verdict {
        V::Holds => "**holds**".to_string(),
        V::DoesNotHold => "**does not hold**".to_string(),
        V::Inconclusive if d.last_look && p.waiting.is_empty() => {
            format!("*inconclusive at n = {n} (final)*")
        }
        V::Inconclusive => format!("*inconclusive at n = {n} of {}*", p.of),
    };
    // Pairs beyond the last look reached wait for the next look.
    let waiting = if p.have > n {
        format!(" ({} run)", p.have)
    } else {
        String::new()
    };
    (format!("{n} / {}{waiting}", p.of), verdict)
}

fn cells(outcome: &Outcome) -> (String, String, String) {
    match outcome {
        Outcome::Paired(p) => {
            let d = &p.decision;
            let (count, verdict) = count_and_verdict(p);
            let numbers: Vec<String> = d
                .compared
                .iter()
                .map(|c| {
                    format!(
                        "vs {}: {} [{}, {}]",
                        cell(&c.against),
                        signed(c.mean),
                        sig(c.low),
                        sig(c.high)
                    )
                })
                .collect();
            let mut numbers = if numbers.is_empty() {
                vec![format!("{} pairs, before the first planned look", p.have)]
            } else {
                numbers
            };
            numbers.extend(
                p.waiting
                    .iter()
                    .map(|w| format!("vs {}: no runs yet", cell(w))),
            );
            (count, numbers.join("<br>"), verdict)
        }
        Outcome::Direct { text, verdict } => {
            ("—".into(), cell(text), direct_verdict_cell(*verdict).into())
        }
        Outcome::Rate(rate) => rate_cells(rate),
        Outcome::NotRun => ("0".into(), "—".into(), "*not run yet*".into()),
        Outcome::CannotRun(why) => (
            "—".into(),
            "—".into(),
            format!("*cannot run: {}*", cell(why)),
        ),
        Outcome::Tested(test) => {
            let shown = test
                .split_once(':')
                .map_or(test.as_str(), |(_, f)| f.trim());
            (
                "—".into(),
                format!("`{}`", cell(test)),
                format!("*verified by test `{}`*", cell(shown)),
            )
        }
    }
}

/// A mean advantage with its sign.
fn signed(v: f64) -> String {
    if v > 0.0 {
        format!("+{}", sig(v))
    } else {
        sig(v)
    }
}

/// The verdict line: how many claims of each kind.
pub fn verdict_line(outcomes: &[&Outcome]) -> String {
    let parts: Vec<String> = KINDS
        .iter()
        .map(|(k, word)| {
            let n = outcomes.iter().filter(|o| o.kind() == *k).count();
            format!("{n} {word}")
        })
        .collect();
    let n = outcomes.len();
    let claims = if n == 1 { "claim" } else { "claims" };
    format!(
        "**Verdicts** ({n} {claims} of the paper): {}.",
        parts.join(" · ")
    )
}

/// The lines under a table: one per kind of test used, each said once.
pub fn method_lines(outcomes: &[&Outcome]) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for o in outcomes {
        if let Outcome::Paired(p) | Outcome::Rate(Rate { paired: p, .. }) = o
            && !seen.contains(&p.describe.as_str())
        {
            seen.push(&p.describe);
        }
    }
    let mut out = String::new();
    for line in seen {
        let _ = writeln!(out, "- {line}");
    }
    out
}

/// What a claim's decision still needs: the runs of its policies up to the paper's count.
pub fn runs_needed(p: &Paired) -> usize {
    p.policies
        .iter()
        .map(|(_, have)| p.of.saturating_sub(*have))
        .sum()
}

/// A policy's decisions over its counted runs.
#[derive(Debug, Clone, Copy, Default)]
pub struct DecisionTime {
    /// Decisions counted.
    pub decisions: usize,
    /// Wall seconds of the fits and decisions.
    pub seconds: f64,
}

impl DecisionTime {
    /// Counts a run's decisions.
    pub fn add(&mut self, decisions: usize, seconds: f64) {
        self.decisions += decisions;
        self.seconds += seconds;
    }

    /// Mean seconds per decision (NaN without decisions).
    pub fn mean(&self) -> f64 {
        self.seconds / self.decisions as f64
    }
}

/// A study table's numeric columns by name, row by row (`None` where a cell is not a number).
fn study_columns(
    out: &cabo_core::StudyOutput,
    table: &str,
    names: &[&str],
) -> Option<Vec<Vec<Option<f64>>>> {
    use cabo_core::study::Cell;
    let t = out.tables.iter().find(|t| t.name == table)?;
    let idx: Vec<usize> = names
        .iter()
        .map(|n| t.columns.iter().position(|c| c == n))
        .collect::<Option<_>>()?;
    Some(
        t.rows
            .iter()
            .map(|r| {
                idx.iter()
                    .map(|&i| match r.get(i) {
                        Some(Cell::Number(v)) => Some(*v),
                        _ => None,
                    })
                    .collect()
            })
            .collect(),
    )
}

/// Whether every row has `left ≤ right + slack × slack_column`.
fn study_at_most(
    out: &cabo_core::StudyOutput,
    table: &str,
    [left, right]: [&str; 2],
    slack_column: Option<&str>,
    slack: f64,
) -> Option<(String, bool)> {
    let mut names = vec![left, right];
    names.extend(slack_column);
    let rows = study_columns(out, table, &names)?;
    let ok = rows
        .iter()
        .filter(|r| r[..2].iter().all(Option::is_some))
        .filter(|r| {
            let unit = r.get(2).copied().flatten().unwrap_or(0.0);
            r[0].unwrap_or(f64::NAN) <= r[1].unwrap_or(f64::NAN) + slack * unit
        })
        .count();
    let tolerance = match slack_column {
        Some(c) if slack > 0.0 => format!(" + {} × `{c}`", sig(slack)),
        _ => String::new(),
    };
    Some((
        format!(
            "`{left}` ≤ `{right}`{tolerance} in {ok} of {} rows",
            rows.len()
        ),
        ok == rows.len(),
    ))
}

/// The numbers of a study table's column.
fn study_column(out: &cabo_core::StudyOutput, table: &str, column: &str) -> Option<Vec<f64>> {
    Some(
        study_columns(out, table, &[column])?
            .into_iter()
            .filter_map(|r| r[0])
            .collect(),
    )
}

/// The smallest value of a study table's column.
fn study_min(
    out: &cabo_core::StudyOutput,
    table: &str,
    column: &str,
    at_least: f64,
) -> Option<(String, bool)> {
    study_extreme(out, table, column, at_least, false)
}

/// The smallest (or with `largest`, the largest) value of a study table's column, against
/// `at_least`.
fn study_extreme(
    out: &cabo_core::StudyOutput,
    table: &str,
    column: &str,
    at_least: f64,
    largest: bool,
) -> Option<(String, bool)> {
    let values = study_column(out, table, column)?;
    let pick = if largest { f64::max } else { f64::min };
    let start = if largest {
        f64::NEG_INFINITY
    } else {
        f64::INFINITY
    };
    let extreme = values.iter().copied().fold(start, pick);
    Some((
        format!(
            "{} `{column}` over {} rows: {} (claim: ≥ {})",
            if largest { "largest" } else { "smallest" },
            values.len(),
            sig(extreme),
            sig(at_least)
        ),
        !values.is_empty() && extreme >= at_least,
    ))
}

/// The largest value of a study table's column.
fn study_max(
    out: &cabo_core::StudyOutput,
    table: &str,
    column: &str,
    at_least: f64,
) -> Option<(String, bool)> {
    study_extreme(out, table, column, at_least, true)
}

/// Whether `policy` has the largest mean time per decision.
fn slowest(times: &[(String, DecisionTime)], policy: &str) -> Option<(String, bool)> {
    let timed = times.iter().filter(|(_, t)| t.decisions > 0);
    let mine = timed.clone().find(|(p, _)| p == policy)?.1.mean();
    let mut order: Vec<(&str, f64)> = timed.map(|(p, t)| (p.as_str(), t.mean())).collect();
    order.sort_by(|a, b| b.1.total_cmp(&a.1));
    let listed: Vec<String> = order
        .iter()
        .map(|(p, t)| format!("{p} {} s", sig(*t)))
        .collect();
    Some((
        format!(
            "mean wall time per decision (fit + decision): {}",
            listed.join(" > ")
        ),
        order.first().is_some_and(|(_, t)| *t <= mine),
    ))
}

mod across;
/// A check on a spec's per-run values ([`Check::runs_read`]): paired, or a rate check.
pub fn decide_runs(
    claim: &Claim,
    check: &Check,
    spec: &GallerySpec,
    values: &RunValues,
) -> Result<Outcome, String> {
    match check {
        Check::Sublinear {
            policy,
            metric,
            from,
        } => decide_rate(claim, spec, values, policy, metric, *from),
        _ => decide(claim, check, spec, values),
    }
}

/// What the rate check's comparison is called: the slope it is tested against.
const SLOPE_ONE: &str = "slope 1";

/// The least-squares slope of log v against log k over the grid points from index `start`
/// where v is positive (the x scale drops out of a log–log slope); `None` with fewer than
/// three such points.
pub fn log_log_slope(grid: &[Option<f64>], start: usize) -> Option<f64> {
    let points: Vec<(f64, f64)> = grid
        .iter()
        .enumerate()
        .skip(start.max(1))
        .filter_map(|(k, v)| {
            let v = (*v)?;
            (v > 0.0 && v.is_finite()).then(|| ((k as f64).ln(), v.ln()))
        })
        .collect();
    if points.len() < 3 {
        return None;
    }
    let n = points.len() as f64;
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    Some(sxy / sxx)
}

/// A rate check: per replication r = 0, 1, … while the runs have the grid, the advantage
/// 1 − slope; decided by the spec's planned looks as a one-sided test (holds when the
/// slopes' repeated interval lies below 1, does not hold when above).
fn decide_rate(
    claim: &Claim,
    spec: &GallerySpec,
    values: &RunValues,
    policy: &str,
    metric: &str,
    from: f64,
) -> Result<Outcome, String> {
    let start = grid_share(from).map_err(|e| format!("claim {}: check.from: {e}", claim.id))?;
    let grids: Vec<&[Option<f64>]> = (0..)
        .map_while(|r| values.grid(policy, r, metric))
        .collect();
    let slopes: Vec<f64> = grids
        .iter()
        .map_while(|g| log_log_slope(g, start))
        .collect();
    if slopes.is_empty() {
        return Ok(Outcome::NotRun);
    }
    let test = Test::Better;
    let looks = looks_of(spec);
    let comparisons = [Comparison {
        against: SLOPE_ONE.into(),
        advantages: slopes.iter().map(|s| 1.0 - s).collect(),
    }];
    let budget = values.budget().unwrap_or(1.0);
    let counted = &grids[..slopes.len()];
    let ratios = [10, 20, 30, 40]
        .map(|k| {
            let x = budget * k as f64 / GRID as f64;
            let r: Vec<f64> = counted.iter().filter_map(|g| g[k]).collect();
            let mean = r.iter().sum::<f64>() / r.len().max(1) as f64;
            (k as f64 / GRID as f64, x, mean / x)
        })
        .to_vec();
    Ok(Outcome::Rate(Rate {
        paired: Paired {
            decision: cabo_evidence::decide(&test, &comparisons, &looks),
            of: spec.paper_replications,
            have: slopes.len(),
            describe: cabo_evidence::describe(&test, 1, &looks).replacen(
                "mean paired advantage",
                "mean over runs of the least-squares slope of log cumulative regret on log x (sublinear: below 1)",
                1,
            ),
            policies: vec![(policy.to_string(), slopes.len())],
            waiting: Vec::new(),
        },
        from,
        ratios,
    }))
}

/// Grid intervals of the per-run values.
const GRID: usize = super::schema::GRID_INTERVALS;

/// The n, numbers and verdict cells of a rate check: the mean slope with its interval, and
/// R / x at the grid's quarters.
fn rate_cells(rate: &Rate) -> (String, String, String) {
    let p = &rate.paired;
    let (n, verdict) = count_and_verdict(p);
    let slope = match p.decision.compared.first() {
        Some(c) => format!(
            "log–log slope from share {}: {} [{}, {}] (sublinear: below 1)",
            sig(rate.from),
            sig(1.0 - c.mean),
            sig(1.0 - c.high),
            sig(1.0 - c.low)
        ),
        None => format!("{} runs, before the first planned look", p.have),
    };
    let ratios: Vec<String> = rate
        .ratios
        .iter()
        .map(|(_, x, r)| format!("{}: {}", sig(*x), sig(*r)))
        .collect();
    (
        n,
        format!(
            "{slope}<br>mean R / x at x = {} (over {} runs)",
            ratios.join(", "),
            p.have
        ),
        verdict,
    )
}

/// A row-relation check (monotone, convex) on a study's output: `None` for other checks;
/// an error naming the closest table or column when the study lacks one it names.
fn study_rows(
    check: &Check,
    out: &cabo_core::StudyOutput,
) -> Option<Result<(String, bool), String>> {
    match check {
        Check::StudyMonotone {
            table,
            column,
            by,
            direction,
            group,
            slack_column,
            slack,
        } => Some(study_monotone(
            out,
            table,
            [column, by],
            group.as_deref(),
            *direction,
            slack_column.as_deref().map(|c| (c, *slack)),
        )),
        Check::StudyConvex {
            table,
            column,
            by,
            group,
            tolerance,
        } => Some(study_convex(
            out,
            table,
            [column, by],
            group.as_deref(),
            *tolerance,
        )),
        _ => None,
    }
}

/// Checks that a study check's table and columns exist in `out`; the error names the
/// closest table or column. Checks that read no study pass.
pub fn study_names(check: &Check, out: &cabo_core::StudyOutput) -> Result<(), String> {
    let (table, names): (&str, Vec<&str>) = match check {
        Check::StudyMonotone {
            table,
            column,
            by,
            group,
            slack_column,
            ..
        } => (
            table,
            [
                Some(column),
                Some(by),
                group.as_ref(),
                slack_column.as_ref(),
            ]
            .into_iter()
            .flatten()
            .map(String::as_str)
            .collect(),
        ),
        Check::StudyConvex {
            table,
            column,
            by,
            group,
            ..
        } => (
            table,
            [Some(column), Some(by), group.as_ref()]
                .into_iter()
                .flatten()
                .map(String::as_str)
                .collect(),
        ),
        _ => return Ok(()),
    };
    study_table(out, table, &names).map(|_| ())
}

/// The study table called `table`, after checking it has every column of `names`.
fn study_table<'a>(
    out: &'a cabo_core::StudyOutput,
    table: &str,
    names: &[&str],
) -> Result<&'a cabo_core::study::Table, String> {
    let tables: Vec<&str> = out.tables.iter().map(|t| t.name.as_str()).collect();
    let t = out.tables.iter().find(|t| t.name == table).ok_or_else(|| {
        format!(
            "check.table: the study has no table {table:?}{} (its tables: {})",
            closest(table, &tables),
            tables.join(", ")
        )
    })?;
    let columns: Vec<&str> = t.columns.iter().map(String::as_str).collect();
    for n in names {
        if !columns.contains(n) {
            return Err(format!(
                "table {table} has no column {n:?}{} (its columns: {})",
                closest(n, &columns),
                columns.join(", ")
            ));
        }
    }
    Ok(t)
}

/// "; did you mean \"x\"?" with the closest of `names`, or nothing.
fn closest(name: &str, names: &[&str]) -> String {
    cabo_core::registry::closest_of(name, names)
        .map(|c| format!("; did you mean {c:?}?"))
        .unwrap_or_default()
}

/// One group of a row-relation check: its label and its rows' numbers (the checked
/// column, the `by` column, then any other), sorted by `by`; rows lacking a number are
/// left out.
type Group = (String, Vec<Vec<f64>>);

/// The rows of `table` in groups of equal `group` cells (one group without it), each
/// sorted by the second of `columns`.
fn study_groups(
    out: &cabo_core::StudyOutput,
    table: &str,
    columns: &[&str],
    group: Option<&str>,
) -> Result<Vec<Group>, String> {
    use cabo_core::study::Cell;
    let mut names = columns.to_vec();
    names.extend(group);
    let t = study_table(out, table, &names)?;
    let index = |n: &str| t.columns.iter().position(|c| c == n).expect("checked");
    let idx: Vec<usize> = columns.iter().map(|n| index(n)).collect();
    let label_of = |row: &[Cell]| match group.map(index).and_then(|g| row.get(g)) {
        Some(Cell::Text(s)) => s.clone(),
        Some(Cell::Number(v)) => sig(*v),
        None => String::new(),
    };
    let mut groups: Vec<Group> = Vec::new();
    for row in &t.rows {
        let numbers: Option<Vec<f64>> = idx
            .iter()
            .map(|&i| match row.get(i) {
                Some(Cell::Number(v)) if v.is_finite() => Some(*v),
                _ => None,
            })
            .collect();
        let Some(numbers) = numbers else { continue };
        let label = label_of(row);
        match groups.iter_mut().find(|(l, _)| *l == label) {
            Some((_, rows)) => rows.push(numbers),
            None => groups.push((label, vec![numbers])),
        }
    }
    for (_, rows) in &mut groups {
        rows.sort_by(|a, b| a[1].total_cmp(&b[1]));
    }
    Ok(groups)
}

/// The groups' description for a row: "" or " within each `prior` (2 groups)".
fn within(group: Option<&str>, groups: usize) -> String {
    group.map_or(String::new(), |g| {
        format!(" within each `{g}` ({groups} groups)")
    })
}

/// Whether `column` moves in `direction` as `by` grows: each consecutive step's move
/// against the direction is at most `slack` × its standard error √(s.e.ᵢ² + s.e.ᵢ₊₁²)
/// (the two rows' estimates independent), from `slack_column` where given.
fn study_monotone(
    out: &cabo_core::StudyOutput,
    table: &str,
    [column, by]: [&str; 2],
    group: Option<&str>,
    direction: Direction,
    slack: Option<(&str, f64)>,
) -> Result<(String, bool), String> {
    let mut columns = vec![column, by];
    columns.extend(slack.map(|(c, _)| c));
    let groups = study_groups(out, table, &columns, group)?;
    let sign = match direction {
        Direction::NonIncreasing => 1.0,
        Direction::NonDecreasing => -1.0,
    };
    let (mut steps, mut ok, mut worst) = (0usize, 0usize, f64::NEG_INFINITY);
    for (_, rows) in &groups {
        for w in rows.windows(2) {
            // How far the step goes against the direction (positive: against it).
            let against = sign * (w[1][0] - w[0][0]);
            let allowed = slack.map_or(0.0, |(_, s)| s * w[0][2].hypot(w[1][2]));
            steps += 1;
            ok += usize::from(against <= allowed);
            worst = worst.max(against);
        }
    }
    let words = match direction {
        Direction::NonIncreasing => ("non-increasing", "rise"),
        Direction::NonDecreasing => ("non-decreasing", "fall"),
    };
    let tolerance = match slack {
        Some((c, s)) if s > 0.0 => format!(" (each step within {} × its s.e. from `{c}`)", sig(s)),
        _ => String::new(),
    };
    Ok((
        format!(
            "`{column}` {} in `{by}`{}{tolerance}: {ok} of {steps} steps; largest {}: {}",
            words.0,
            within(group, groups.len()),
            words.1,
            if steps == 0 { "—".into() } else { sig(worst) }
        ),
        steps > 0 && ok == steps,
    ))
}

/// Whether `column` is convex in `by`: on the sorted rows, each slope (a divided
/// difference on the possibly non-uniform grid) is at least the slope before it, less
/// `tolerance` × the two slopes' magnitudes. Rows with equal `by` make the slope
/// undefined and the check fail.
fn study_convex(
    out: &cabo_core::StudyOutput,
    table: &str,
    [column, by]: [&str; 2],
    group: Option<&str>,
    tolerance: f64,
) -> Result<(String, bool), String> {
    let groups = study_groups(out, table, &[column, by], group)?;
    let (mut bends, mut ok, mut worst) = (0usize, 0usize, f64::INFINITY);
    for (_, rows) in &groups {
        let slopes: Vec<f64> = rows
            .windows(2)
            .map(|w| (w[1][0] - w[0][0]) / (w[1][1] - w[0][1]))
            .collect();
        for s in slopes.windows(2) {
            // The change of slope relative to the slopes' size: ≥ −tolerance when convex.
            let scale = s[0].abs() + s[1].abs();
            let change = if scale > 0.0 {
                (s[1] - s[0]) / scale
            } else {
                0.0
            };
            bends += 1;
            ok += usize::from(change >= -tolerance);
            worst = worst.min(if change.is_nan() {
                f64::NEG_INFINITY
            } else {
                change
            });
        }
    }
    Ok((
        format!(
            "`{column}` convex in `{by}`{}: slope rises (relative tolerance {}) at {ok} of {bends} interior rows; smallest relative change of slope: {}",
            within(group, groups.len()),
            sig(tolerance),
            if bends == 0 { "—".into() } else { sig(worst) }
        ),
        bends > 0 && ok == bends,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::DEFAULT_METRIC;
    use crate::values::MetricInfo;

    /// Per-run values of A and B at the budget (the curve flat at that value).
    fn values(a: &[f64], b: &[f64]) -> RunValues {
        let mut v = RunValues::new("s.yaml", "fp");
        v.metrics.push(MetricInfo {
            name: DEFAULT_METRIC.into(),
            label: "simple regret".into(),
            lower_is_better: true,
        });
        for (policy, finals) in [("A", a), ("B", b)] {
            for (r, f) in finals.iter().enumerate() {
                let key = (policy.to_string(), r, DEFAULT_METRIC.to_string());
                v.rows.insert(key, vec![Some(*f); 42]);
            }
        }
        v
    }

    fn claim() -> (Claim, GallerySpec) {
        let check = Check::Better {
            policy: "A".into(),
            than: vec!["B".into()],
            on: super::super::On::Final,
            at: None,
        };
        let claim = Claim {
            id: "a-beats-b".into(),
            claim: "A | beats B".into(),
            quote: Some("A is better".into()),
            source: "Fig. 1".into(),
            spec: Some("s.yaml".into()),
            metric: None,
            note: None,
            check: Some(check),
            cannot_run: None,
            tested_by: None,
        };
        let spec = GallerySpec {
            path: "s.yaml".into(),
            paper_replications: 16,
            quick_replications: None,
            looks: None,
            cpu_seconds_per_run: None,
            estimate_from: None,
        };
        (claim, spec)
    }

    #[test]
    fn a_clear_advantage_holds_at_the_first_look_and_the_row_says_so() {
        let (c, spec) = claim();
        // A's regret is 1 below B's in every replication (± 0.01): advantages 1 ± 0.01.
        let b: Vec<f64> = (0..6).map(|r| 2.0 + 0.01 * (r % 2) as f64).collect();
        let v = values(&[1.0; 6], &b);
        let o = decide(&c, c.check.as_ref().unwrap(), &spec, &v).unwrap();
        assert_eq!(o.kind(), Kind::Holds);
        let row = row(&c, &o);
        assert!(row.starts_with("| **a-beats-b** A \\| beats B<br>*“A is better”* | Fig. 1 | 4 / 16 (6 run) | vs B: +1.005 ["), "{row}");
        assert!(row.ends_with("| **holds** |"), "{row}");
        assert!(o.undecided().is_none());
    }

    #[test]
    fn no_advantage_stays_inconclusive_and_asks_for_the_next_look() {
        let (c, spec) = claim();
        // Advantages +1, −1, +1, −1: mean 0.
        let v = values(&[1.0, 3.0, 1.0, 3.0], &[2.0; 4]);
        let o = decide(&c, c.check.as_ref().unwrap(), &spec, &v).unwrap();
        let row = row(&c, &o);
        assert!(row.contains("| 4 / 16 | vs B: 0 ["), "{row}");
        assert!(row.ends_with("| *inconclusive at n = 4 of 16* |"), "{row}");
        let p = o.undecided().expect("undecided");
        assert_eq!(runs_needed(p), 2 * 12);
        assert_eq!(
            verdict_line(&[&o]),
            "**Verdicts** (1 claim of the paper): 0 hold · 0 do not hold · 1 inconclusive · 0 not run yet · 0 cannot run · 0 verified by a test."
        );
    }

    /// A study output with one table `t` of the columns and rows given.
    fn study(columns: &[&str], rows: Vec<Vec<cabo_core::study::Cell>>) -> cabo_core::StudyOutput {
        cabo_core::StudyOutput {
            figures: Vec::new(),
            tables: vec![cabo_core::study::Table {
                name: "t".into(),
                title: "t".into(),
                columns: columns.iter().map(|c| c.to_string()).collect(),
                rows,
            }],
            findings: Vec::new(),
            data: serde_json::Value::Null,
            measurements: Vec::new(),
        }
    }

    /// Rows (group, x, y, s.e.), in no particular order.
    fn study_of(rows: &[(&str, f64, f64, f64)]) -> cabo_core::StudyOutput {
        use cabo_core::study::Cell;
        study(
            &["prior", "cost", "y", "s.e."],
            rows.iter()
                .map(|&(g, x, y, se)| vec![Cell::from(g), x.into(), y.into(), se.into()])
                .collect(),
        )
    }

    fn monotone(slack: Option<f64>) -> Check {
        Check::StudyMonotone {
            table: "t".into(),
            column: "y".into(),
            by: "cost".into(),
            direction: Direction::NonIncreasing,
            group: Some("prior".into()),
            slack_column: slack.map(|_| "s.e.".into()),
            slack: slack.unwrap_or(0.0),
        }
    }

    #[test]
    fn a_monotone_check_sorts_each_group_and_allows_its_slack_exactly() {
        // Two groups, rows out of order; y falls with cost in both.
        let out = study_of(&[
            ("a", 0.1, 1.0, 0.3),
            ("b", 0.01, 5.0, 0.3),
            ("a", 0.01, 3.0, 0.3),
            ("b", 0.1, 4.0, 0.3),
            ("a", 0.05, 2.0, 0.4),
        ]);
        let (text, holds) = study_rows(&monotone(None), &out).unwrap().unwrap();
        assert!(holds, "{text}");
        assert!(text.contains("3 of 3 steps"), "{text}");
        assert!(text.contains("within each `prior` (2 groups)"), "{text}");
        // A rise of 1.0 in group a: does not hold without slack.
        let up = study_of(&[("a", 0.01, 1.0, 0.3), ("a", 0.1, 2.0, 0.4)]);
        let (text, holds) = study_rows(&monotone(None), &up).unwrap().unwrap();
        assert!(!holds, "{text}");
        assert!(text.contains("largest rise: 1"), "{text}");
        // The step's s.e. is √(0.3² + 0.4²) = 0.5: two of them allow exactly the rise of 1.0.
        assert!(study_rows(&monotone(Some(2.0)), &up).unwrap().unwrap().1);
        assert!(!study_rows(&monotone(Some(1.99)), &up).unwrap().unwrap().1);
        // Non-decreasing reads the same rise as its direction.
        let mut rising = monotone(None);
        if let Check::StudyMonotone { direction, .. } = &mut rising {
            *direction = Direction::NonDecreasing;
        }
        assert!(study_rows(&rising, &up).unwrap().unwrap().1);
    }

    fn convex(tolerance: f64) -> Check {
        Check::StudyConvex {
            table: "t".into(),
            column: "y".into(),
            by: "cost".into(),
            group: None,
            tolerance,
        }
    }

    #[test]
    fn a_convex_check_reads_slopes_on_an_uneven_grid_within_its_tolerance() {
        // y = x² on x = 0, 1, 3, 4: slopes 1, 4, 7, convex though the grid is uneven.
        let square = study_of(&[
            ("", 3.0, 9.0, 0.0),
            ("", 0.0, 0.0, 0.0),
            ("", 1.0, 1.0, 0.0),
            ("", 4.0, 16.0, 0.0),
        ]);
        let (text, holds) = study_rows(&convex(1e-9), &square).unwrap().unwrap();
        assert!(holds, "{text}");
        assert!(text.contains("2 of 2"), "{text}");
        // y = −x² is concave: every slope falls.
        let cap = study_of(&[
            ("", 0.0, 0.0, 0.0),
            ("", 1.0, -1.0, 0.0),
            ("", 3.0, -9.0, 0.0),
        ]);
        assert!(!study_rows(&convex(1e-9), &cap).unwrap().unwrap().1);
        // A straight line bent down by 1e-12 of its slope: within 1e-9, not within 0.
        let bent = study_of(&[
            ("", 0.0, 0.0, 0.0),
            ("", 1.0, 1.0, 0.0),
            ("", 2.0, 2.0 - 2e-12, 0.0),
        ]);
        assert!(study_rows(&convex(1e-9), &bent).unwrap().unwrap().1);
        assert!(!study_rows(&convex(0.0), &bent).unwrap().unwrap().1);
    }

    #[test]
    fn a_bound_that_fails_is_inconclusive_only_where_the_check_says_so() {
        // Two rows: the lower end 0.97 and 0.99 of the upper end; a 2 % margin.
        let out = study_of(&[("", 1.0, 0.97, 1.0), ("", 2.0, 0.99, 1.0)]);
        let at_most = |on_failure| Check::StudyAtMost {
            table: "t".into(),
            left: "s.e.".into(),
            right: "y".into(),
            slack_column: Some("y".into()),
            slack: 0.0204,
            on_failure,
        };
        let decide = |check: &Check| {
            let (text, holds) = study_at_most(&out, "t", ["s.e.", "y"], Some("y"), 0.0204).unwrap();
            direct_outcome(check, text, holds).kind()
        };
        // 1 ≤ 0.97 × 1.0204 = 0.9898 fails; 1 ≤ 0.99 × 1.0204 passes: one row of two fails.
        assert_eq!(decide(&at_most(OnFailure::DoesNotHold)), Kind::DoesNotHold);
        assert_eq!(
            decide(&at_most(OnFailure::Inconclusive)),
            Kind::Inconclusive
        );
        // Passing holds either way.
        let both = study_of(&[("", 1.0, 0.99, 1.0)]);
        let (text, holds) = study_at_most(&both, "t", ["s.e.", "y"], Some("y"), 0.0204).unwrap();
        assert!(holds, "{text}");
        for on_failure in [OnFailure::DoesNotHold, OnFailure::Inconclusive] {
            let o = direct_outcome(&at_most(on_failure), text.clone(), holds);
            assert_eq!(o.kind(), Kind::Holds);
        }
    }

    #[test]
    fn a_row_check_naming_a_missing_table_or_column_names_the_closest() {
        let out = study_of(&[("a", 0.1, 1.0, 0.3)]);
        let mut check = monotone(None);
        if let Check::StudyMonotone { column, .. } = &mut check {
            *column = "Y".into();
        }
        let e = study_rows(&check, &out).unwrap().unwrap_err();
        assert!(e.contains("no column \"Y\"; did you mean \"y\"?"), "{e}");
        assert_eq!(study_names(&check, &out).unwrap_err(), e);
        if let Check::StudyMonotone { table, .. } = &mut check {
            *table = "tt".into();
        }
        let e = study_names(&check, &out).unwrap_err();
        assert!(e.contains("no table \"tt\"; did you mean \"t\"?"), "{e}");
    }

    /// Per-run values of policy A on `metric:cvs.cumulative_regret` with the grid, one run
    /// per curve.
    fn rate_values(curves: &[Vec<f64>]) -> RunValues {
        let metric = "metric:cvs.cumulative_regret";
        let mut v = RunValues::new("s.yaml", "fp");
        v.axis = "cumulative_cost, budget 40".into();
        v.metrics.push(MetricInfo {
            name: metric.into(),
            label: "cumulative regret".into(),
            lower_is_better: true,
        });
        for (r, c) in curves.iter().enumerate() {
            let mut row = vec![Some(c[GRID])];
            row.extend(c.iter().map(|y| Some(*y)));
            v.rows.insert(("A".into(), r, metric.into()), row);
        }
        v
    }

    fn rate_claim(paper: usize) -> (Claim, GallerySpec) {
        let (mut c, mut spec) = claim();
        c.check = Some(Check::Sublinear {
            policy: "A".into(),
            metric: "metric:cvs.cumulative_regret".into(),
            from: 0.25,
        });
        spec.paper_replications = paper;
        (c, spec)
    }

    /// A deterministic stream of standard normals (xorshift and Box–Muller).
    fn normals(seed: u64) -> impl FnMut() -> f64 {
        let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        let mut uniform = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            ((s >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        };
        move || (-2.0 * uniform().ln()).sqrt() * (std::f64::consts::TAU * uniform()).cos()
    }

    /// A run R_k = k^power × exp(noise × z_k) on the grid (k = 0 … 40; R_0 = 0).
    fn run_of(power: f64, noise: f64, z: &mut impl FnMut() -> f64) -> Vec<f64> {
        (0..=GRID)
            .map(|k| (k as f64).powf(power) * (noise * z()).exp())
            .collect()
    }

    #[test]
    fn the_log_log_slope_of_a_power_is_its_exponent() {
        let mut z = normals(1);
        let run = run_of(0.5, 0.0, &mut z);
        let grid: Vec<Option<f64>> = run.iter().map(|y| Some(*y)).collect();
        let s = log_log_slope(&grid, 10).unwrap();
        assert!((s - 0.5).abs() < 1e-12, "{s}");
        // Zero and empty cells are left out; fewer than three points give no slope.
        let mut sparse = vec![None; GRID + 1];
        sparse[39] = Some(1.0);
        sparse[40] = Some(2.0);
        assert_eq!(log_log_slope(&sparse, 10), None);
    }

    #[test]
    fn regret_growing_as_the_square_root_is_sublinear_and_the_row_says_so() {
        let mut z = normals(2);
        let runs: Vec<Vec<f64>> = (0..8).map(|_| run_of(0.5, 0.05, &mut z)).collect();
        let (c, spec) = rate_claim(8);
        let o = decide_runs(&c, c.check.as_ref().unwrap(), &spec, &rate_values(&runs)).unwrap();
        assert_eq!(o.kind(), Kind::Holds);
        let row = row(&c, &o);
        assert!(
            row.contains("log–log slope from share 0.2500: 0.51"),
            "{row}"
        );
        // R / x at x = 10: the mean of 10^0.5 × e^(noise) over 10 ≈ 0.316.
        assert!(row.contains("mean R / x at x = 10.00: 0.31"), "{row}");
        assert!(row.contains("**holds**"), "{row}");
        let linear: Vec<Vec<f64>> = (0..8).map(|_| run_of(1.2, 0.05, &mut z)).collect();
        let o = decide_runs(&c, c.check.as_ref().unwrap(), &spec, &rate_values(&linear)).unwrap();
        assert_eq!(o.kind(), Kind::DoesNotHold);
    }

    #[test]
    fn linear_regret_with_noise_is_not_called_sublinear_more_often_than_the_level() {
        // 2000 simulated claims of 16 replications (looks at 4, 8, 12, 16), R = T · noise:
        // a one-sided test at 2.5 % may call "holds" at most that often (with its Monte
        // Carlo error: 2.5 % of 2000 is 50, sd 7; 75 is 3.6 sd above).
        let (c, spec) = rate_claim(16);
        let mut z = normals(3);
        let mut holds = 0;
        for _ in 0..2000 {
            let runs: Vec<Vec<f64>> = (0..16).map(|_| run_of(1.0, 0.3, &mut z)).collect();
            let o = decide_runs(&c, c.check.as_ref().unwrap(), &spec, &rate_values(&runs)).unwrap();
            holds += usize::from(o.kind() == Kind::Holds);
        }
        assert!(holds <= 75, "{holds} of 2000 called sublinear");
    }
}
