//! Each claim's row: its paired statistics and verdict (from the per-run values), a study's
//! or a runtime's direct check, or the reason it cannot run or the test that verifies it.
//!
//! A paired check compares the claim's policy with each comparator replication by
//! replication (replication r of every policy shares its problem instance and initial
//! design), and [`cabo_evidence::decide`] walks the spec's planned looks: a claim is decided
//! at the first look whose repeated confidence intervals (Holm over the comparators) lie on
//! one side. Checks that read several specs' runs (a half-budget run against a full-budget
//! one, an advantage from spec to spec, tallies over settings) are decided in [`across`].

use super::schema::{Check, Claim, GallerySpec, Settled, grid_share};
use super::values::RunValues;
use super::{SpecResult, sig};
pub(super) use across::plan_across;
use cabo_evidence::{Comparison, Decision, Looks, Test};
use std::fmt::Write;

/// The metric name of a claim that names none: the spec's own.
pub const DEFAULT_METRIC: &str = "default";

/// The metric a claim reads, as the per-run values name it.
pub fn metric_of(claim: &Claim) -> &str {
    claim.metric.as_deref().unwrap_or(DEFAULT_METRIC)
}

/// The prefix of a claim metric that reads a run's mean time per decision (`time:acquisition_time`
/// for seed 000's Fig. 9): runtime claims compare the runs of one machine, paired like regrets.
pub const TIME_PREFIX: &str = "time:";

/// The time a claim metric names, if it is one (`time:<decision_time | acquisition_time |
/// fit_time | cpu_time>`), or why its name is wrong.
pub fn time_metric(name: &str) -> Option<Result<crate::spec::TimeMetric, String>> {
    name.strip_prefix(TIME_PREFIX)
        .map(|t| crate::spec::TimeMetric::parse("metric", t))
}

/// What a claim's row says.
#[derive(Debug)]
pub enum Outcome {
    /// Decided (or not yet) by paired statistics.
    Paired(Paired),
    /// A study's or a runtime's check: the numbers and whether they bear the claim out.
    Direct {
        /// What was measured.
        text: String,
        /// Whether the check passes.
        holds: bool,
    },
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
            Outcome::Paired(p) => match p.decision.verdict {
                V::Holds => Kind::Holds,
                V::DoesNotHold => Kind::DoesNotHold,
                V::Inconclusive => Kind::Inconclusive,
            },
            Outcome::Direct { holds: true, .. } => Kind::Holds,
            Outcome::Direct { holds: false, .. } => Kind::DoesNotHold,
            Outcome::NotRun => Kind::NotRun,
            Outcome::CannotRun(_) => Kind::CannotRun,
            Outcome::Tested(_) => Kind::Tested,
        }
    }

    /// Whether more replications could still decide it.
    pub fn undecided(&self) -> Option<&Paired> {
        match self {
            Outcome::Paired(p)
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
    if check.paired().is_some() {
        return match &r.values {
            Some(values) => decide(claim, check, &r.spec, values),
            None => Ok(Outcome::NotRun),
        };
    }
    Ok(match direct(check, r) {
        Some((text, holds)) => Outcome::Direct { text, holds },
        None => Outcome::NotRun,
    })
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
        | Check::AdvantageShrinks { .. }
        | Check::LowestMostOften { .. }
        | Check::SomeSetting { .. } => None,
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
fn cells(outcome: &Outcome) -> (String, String, String) {
    use cabo_evidence::Verdict as V;
    match outcome {
        Outcome::Paired(p) => {
            let d = &p.decision;
            let n = if d.n == 0 { p.have } else { d.n };
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
            let verdict = match d.verdict {
                V::Holds => "**holds**".to_string(),
                V::DoesNotHold => "**does not hold**".to_string(),
                V::Inconclusive if d.last_look && p.waiting.is_empty() => {
                    format!("*inconclusive at n = {n} (final)*")
                }
                V::Inconclusive => format!("*inconclusive at n = {n} of {}*", p.of),
            };
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
            let numbers = numbers.join("<br>");
            // Pairs beyond the last look reached wait for the next look.
            let waiting = if p.have > n {
                format!(" ({} run)", p.have)
            } else {
                String::new()
            };
            (format!("{n} / {}{waiting}", p.of), numbers, verdict)
        }
        Outcome::Direct { text, holds } => (
            "—".into(),
            cell(text),
            if *holds {
                "**holds**"
            } else {
                "**does not hold**"
            }
            .into(),
        ),
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
        if let Outcome::Paired(p) = o
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gallery::values::MetricInfo;

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
}
