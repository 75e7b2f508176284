//! The reproduction gallery: each paper's claims, checked against cabo's results, written as
//! one Markdown page per paper under `docs/reproductions/` with the figures and summaries
//! behind them.
//!
//! `docs/reproductions/gallery.yaml` says, per paper, which specs reproduce which claims and
//! how each claim is checked (one policy better than others at the budget, a ratio of
//! regrets, a rank, a study column's minimum). [`write_pages`] reads the results of those
//! specs, computes every claim's numbers and verdict, copies each spec's `report.svg` and
//! `summary.csv` next to the page, and records the spec fingerprints the page was made from.
//! Rewriting a page from a results directory that lacks some of its specs' runs keeps what
//! the page already publishes for them (see [`WrittenPage::kept`]).
//! A page whose fingerprints no longer match `specs/` is stale: [`stale_pages`] finds them (a
//! test fails on one) unless the page carries the marker [`mark_stale`] writes.
//!
//! Verdicts: *holds* (the check passes on the paper's replications), *does not hold* (it
//! fails there), *provisional* (fewer replications than the paper's, or runs not yet
//! complete; the page says whether the check passes so far) and *not run yet* (no result).

mod committed;

use crate::report::{self, Report, Y};
use crate::spec::LoadedSpec;
use crate::store;
use committed::{CommittedPage, KeptSpec, Marker};
use serde::Deserialize;
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// The gallery file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Gallery {
    /// One entry per paper.
    pub papers: Vec<Paper>,
}

/// One paper's page.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Paper {
    /// Short name used on the command line (`000`, `pbgi`, …).
    pub id: String,
    /// Other names accepted on the command line.
    #[serde(default)]
    pub aliases: Vec<String>,
    /// The paper's title.
    pub title: String,
    /// The seed file under `../shared/seeds/`.
    pub seed: String,
    /// The page's file name under `docs/reproductions/`.
    pub page: String,
    /// The specs the page draws on.
    pub specs: Vec<GallerySpec>,
    /// The claims checked.
    pub claims: Vec<Claim>,
    /// Full-size runs that need a cluster, with their cost.
    #[serde(default)]
    pub remaining: Vec<Remaining>,
    /// The paper's runtimes, set beside cabo's on the page.
    #[serde(default)]
    pub runtimes: Option<Runtimes>,
}

/// A paper's table of runtimes per policy and problem.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Runtimes {
    /// Where the paper reports them (`Table 1`).
    pub source: String,
    /// What the paper's numbers are, in one sentence (what was timed, on what).
    pub what: String,
    /// The policies of the columns, by the specs' names.
    pub policies: Vec<String>,
    /// One row per problem.
    pub rows: Vec<RuntimeRow>,
}

/// One problem's runtimes in the paper.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuntimeRow {
    /// The problem's name in the paper.
    pub problem: String,
    /// The gallery spec that runs it.
    pub spec: String,
    /// Seconds per decision, one per policy of [`Runtimes::policies`].
    pub paper: Vec<f64>,
}

/// A spec of the gallery.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GallerySpec {
    /// Path of the spec file, relative to the repository root.
    pub path: String,
    /// Replications the paper used.
    pub paper_replications: usize,
    /// Replications run without `--full` (default: the spec's).
    #[serde(default)]
    pub quick_replications: Option<usize>,
}

/// One claim of a paper and how cabo checks it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Claim {
    /// The claim in one sentence.
    pub claim: String,
    /// Figure, table or theorem.
    pub source: String,
    /// The spec whose results check it.
    pub spec: String,
    /// The metric checked, in the spec's `report.y` spelling (default: the spec's own).
    #[serde(default)]
    pub metric: Option<String>,
    /// What was checked beyond the numbers, in one line: why a claim that does not hold is
    /// not a cabo bug, or how cabo's setting differs from the paper's.
    #[serde(default)]
    pub note: Option<String>,
    /// The check.
    pub check: Check,
}

/// How a claim is checked on a spec's results at the budget.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Check {
    /// `policy`'s median is better than each of `than`'s.
    Better {
        /// The policy the claim favours.
        policy: String,
        /// The policies it should beat.
        than: Vec<String>,
        /// Where on the x-axis, as a share of its range (default 1: at the budget), for
        /// claims about how soon a policy gets somewhere.
        #[serde(default)]
        at: Option<f64>,
    },
    /// The median regret of `worse` is at least `at_least` times that of `better`.
    RegretRatio {
        /// The policy with the larger regret.
        worse: String,
        /// The policy with the smaller regret.
        better: String,
        /// The smallest ratio that bears the claim out.
        at_least: f64,
    },
    /// `policy` performs comparably to the best policy: its median (mean) at the budget lies
    /// within the best policy's band, the one the spec draws (quartiles, or ± one standard
    /// error).
    Comparable {
        /// The policy.
        policy: String,
    },
    /// `policy` ranks at most `at_most` (1 = best) by median among the spec's policies.
    Rank {
        /// The policy.
        policy: String,
        /// The worst rank that bears the claim out.
        at_most: usize,
    },
    /// Every row of a study table has `left` ≤ `right` + `slack` × `slack_column` (e.g. a
    /// simulated mean below a computed value, within so many standard errors).
    StudyAtMost {
        /// The table's name.
        table: String,
        /// The column that must not exceed.
        left: String,
        /// The column it must not exceed.
        right: String,
        /// The column of the tolerance's unit (a standard error), if any.
        #[serde(default)]
        slack_column: Option<String>,
        /// How many of those units are tolerated.
        #[serde(default)]
        slack: f64,
    },
    /// The largest value of a study table's column is at least `at_least` (e.g. a ratio that
    /// grows without bound along the table's grid).
    StudyMax {
        /// The table's name.
        table: String,
        /// The column's name.
        column: String,
        /// The bound.
        at_least: f64,
    },
    /// `policy` takes the longest per decision (model fits and the decision, mean wall time
    /// over the recorded decisions) of the spec's policies.
    Slowest {
        /// The policy.
        policy: String,
    },
    /// Every row of a study table's column is at least `at_least`.
    StudyMin {
        /// The table's name.
        table: String,
        /// The column's name.
        column: String,
        /// The bound.
        at_least: f64,
    },
}

/// Runs the gallery leaves to a cluster.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Remaining {
    /// What they are.
    pub what: String,
    /// Estimated CPU-hours.
    pub cpu_hours: f64,
    /// The command that runs them.
    pub command: String,
}

/// A claim's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The check passes on the paper's replications.
    Holds,
    /// The check fails.
    DoesNotHold,
    /// Fewer replications than the paper's, or runs still missing: the check's outcome so
    /// far is said beside it.
    Provisional,
    /// No result yet.
    NotRun,
}

impl Verdict {
    /// The word on the page.
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Holds => "holds",
            Verdict::DoesNotHold => "**does not hold**",
            Verdict::Provisional => "provisional",
            Verdict::NotRun => "not run yet",
        }
    }
}

/// Reads the gallery file.
pub fn load(path: &Path) -> Result<Gallery, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read the gallery: {e}", path.display()))?;
    serde_saphyr::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

impl Gallery {
    /// The papers named by `which` (an id, an alias or `all`).
    pub fn select(&self, which: &str) -> Result<Vec<&Paper>, String> {
        if which == "all" {
            return Ok(self.papers.iter().collect());
        }
        let found: Vec<&Paper> = self
            .papers
            .iter()
            .filter(|p| p.id == which || p.aliases.iter().any(|a| a == which))
            .collect();
        if found.is_empty() {
            let names: Vec<&str> = self.papers.iter().map(|p| p.id.as_str()).collect();
            return Err(format!(
                "no paper {which:?} in the gallery: use one of {} or `all`",
                names.join(", ")
            ));
        }
        Ok(found)
    }
}

/// What one spec's results say, as a page needs it.
struct SpecResult {
    spec: GallerySpec,
    name: String,
    fingerprint: String,
    dir: PathBuf,
    report: Option<Report>,
    /// The runs that count, for reports of other metrics.
    runs: Option<report::Runs>,
    study: Option<cabo_core::StudyOutput>,
    runs_complete: usize,
    runs_total: usize,
    /// Per policy, its counted runs' decisions.
    decision_seconds: Vec<(String, DecisionTime)>,
    /// CPU time of the runs' own threads (or a study's computing time), in seconds.
    cpu_seconds: f64,
    /// Wall time of the runs' decisions and evaluations (a study's computing time).
    wall_seconds: f64,
    /// What the committed page publishes for the spec, kept because it counts more runs.
    kept: Option<KeptSpec>,
}

/// Loads a gallery spec (comparison or study) as `run` would and reads its results under
/// `out`.
fn spec_result(root: &Path, spec: &GallerySpec, out: &Path) -> Result<SpecResult, String> {
    let loaded = load_spec(&root.join(&spec.path))?;
    let fingerprint = loaded.fingerprint()?;
    let s = match loaded {
        Loaded::Study(s) => {
            let dir = crate::study::result_dir(&s, out);
            let complete = crate::study::is_complete(&s, out);
            let (cpu_seconds, wall_seconds) = study_seconds(&dir);
            return Ok(SpecResult {
                spec: spec.clone(),
                name: s.file.name.clone(),
                fingerprint,
                study: crate::study::read_output(&dir).ok().filter(|_| complete),
                dir,
                report: None,
                runs: None,
                runs_complete: usize::from(complete),
                runs_total: 1,
                decision_seconds: Vec::new(),
                cpu_seconds,
                wall_seconds,
                kept: None,
            });
        }
        Loaded::Comparison(s) => s,
    };
    let dir = store::spec_dir(out, &s.spec.name, false);
    let value = serde_json::to_value(&s.spec).map_err(|e| e.to_string())?;
    let runs = report::load(&dir, &value).ok();
    let report = runs.as_ref().map(|r| r.report(None)).transpose()?;
    let (mut cpu_seconds, mut wall_seconds) = (0.0, 0.0);
    let mut decision_seconds: Vec<(String, DecisionTime)> = Vec::new();
    if let (Some(runs), Some(report)) = (&runs, &report) {
        // The figure on the page must be the one of these numbers, so the report is
        // written anew (for an incomplete spec too: it lists what is missing).
        report::write(&dir, runs, report)?;
        for (policy, rep) in runs.counted() {
            let times = store::RunFiles::new(&dir, policy, rep).times;
            let (cpu, wall) = crate::status::run_times(&times);
            cpu_seconds += cpu;
            wall_seconds += wall;
            let (decisions, seconds) = crate::status::decision_times(&times);
            match decision_seconds.iter_mut().find(|(p, _)| p == policy) {
                Some((_, t)) => t.add(decisions, seconds),
                None => {
                    decision_seconds.push((policy.to_string(), DecisionTime { decisions, seconds }))
                }
            }
        }
    }
    let runs_complete = runs.as_ref().map_or(0, report::Runs::len);
    Ok(SpecResult {
        spec: spec.clone(),
        name: s.spec.name.clone(),
        fingerprint,
        decision_seconds,
        cpu_seconds,
        wall_seconds,
        dir,
        report,
        runs,
        study: None,
        runs_complete,
        runs_total: s.spec.policies.len() * s.spec.replications,
        kept: None,
    })
}

impl SpecResult {
    /// CPU and wall seconds counted for the spec: the page's own where its rows are kept.
    fn seconds(&self) -> (f64, f64) {
        match &self.kept {
            Some(k) => (k.cpu_seconds, k.wall_seconds),
            None => (self.cpu_seconds, self.wall_seconds),
        }
    }
}

/// A policy's decisions over its counted runs.
#[derive(Debug, Clone, Copy, Default)]
struct DecisionTime {
    decisions: usize,
    /// Wall seconds of the fits and decisions.
    seconds: f64,
}

impl DecisionTime {
    fn add(&mut self, decisions: usize, seconds: f64) {
        self.decisions += decisions;
        self.seconds += seconds;
    }

    /// Mean seconds per decision (NaN without decisions).
    fn mean(&self) -> f64 {
        self.seconds / self.decisions as f64
    }
}

/// A gallery spec file, loaded as `run` would load it.
enum Loaded {
    /// A study file.
    Study(crate::study::LoadedStudy),
    /// A comparison spec.
    Comparison(Box<LoadedSpec>),
}

/// Reads and parses the spec file at `path` (not its smoke variant).
fn load_spec(path: &Path) -> Result<Loaded, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    Ok(if crate::study::is_study(&text) {
        Loaded::Study(
            crate::study::LoadedStudy::parse(path, &text, false).map_err(|e| e.to_string())?,
        )
    } else {
        Loaded::Comparison(Box::new(
            LoadedSpec::parse(path, &text, false).map_err(|e| e.to_string())?,
        ))
    })
}

impl Loaded {
    /// The fingerprint a page records: the resolved spec's, or the study file's as written
    /// (smoke section included: the page records the file, not one variant), under the
    /// numerics generation ([`store::results_fingerprint`]).
    fn fingerprint(&self) -> Result<String, String> {
        match self {
            Loaded::Comparison(s) => Ok(store::results_fingerprint(&s.spec)),
            Loaded::Study(s) => serde_json::to_value(&s.file)
                .map(|v| store::results_fingerprint(&v))
                .map_err(|e| e.to_string()),
        }
    }
}

/// A study's CPU and wall seconds: as the runner measured them ([`crate::study::STUDY_CPU`],
/// [`crate::study::STUDY_WALL`]), or for results written before it did, the sum of the
/// seconds the plugin measured (its wall times, as both).
fn study_seconds(dir: &Path) -> (f64, f64) {
    let Some(m) = std::fs::read_to_string(dir.join("study.times.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<std::collections::BTreeMap<String, f64>>(&t).ok())
    else {
        return (0.0, 0.0);
    };
    if let Some(&wall) = m.get(crate::study::STUDY_WALL) {
        let cpu = m.get(crate::study::STUDY_CPU).copied().unwrap_or(wall);
        return (cpu, wall);
    }
    let measured = m
        .iter()
        .filter(|(k, _)| k.ends_with("_s") || k.contains("seconds"))
        .map(|(_, v)| v)
        // A fold from +0.0: `sum` of nothing is −0.0, which a page would print.
        .fold(0.0, |a, v| a + v);
    (measured, measured)
}

/// The fingerprint the gallery records for the spec file at `path`.
pub fn spec_fingerprint(path: &Path) -> Result<String, String> {
    load_spec(path)?.fingerprint()
}

/// A policy's standing at one point of the x-axis.
#[derive(Debug, Clone)]
struct Standing {
    policy: String,
    /// The median, or the mean where the spec reports means with standard errors (as the
    /// paper behind it does).
    value: f64,
    /// The band the spec draws around it: quartiles, or ± one standard error.
    band: (f64, f64),
    runs: usize,
}

/// Each policy with runs and a value at the share `at` of the x-axis (1: at the budget).
fn standings(report: &Report, at: f64) -> Vec<Standing> {
    let quartiles = report::quartile_bands(report);
    report
        .curves
        .iter()
        .filter(|c| c.runs > 0)
        .filter_map(|c| {
            let last = c.points.len().saturating_sub(1);
            let p = c
                .points
                .get((at.clamp(0.0, 1.0) * last as f64).round() as usize)?;
            let (value, band) = if quartiles {
                (p.median, (p.q25, p.q75))
            } else {
                (p.mean, (p.mean - p.stderr, p.mean + p.stderr))
            };
            (!value.is_nan()).then(|| Standing {
                policy: c.policy.clone(),
                value,
                band,
                runs: c.runs,
            })
        })
        .collect()
}

/// "median" or "mean", as [`medians`] takes it.
fn central(report: &Report) -> &'static str {
    if report::quartile_bands(report) {
        "median"
    } else {
        "mean"
    }
}

/// Whether smaller values of the report's metric are better.
fn lower_is_better(report: &Report) -> bool {
    matches!(report.y, Y::SimpleRegret)
        || matches!(&report.y, Y::Problem(m) if m.contains("regret"))
}

/// The regret a median stands for (the report's metric may be log10 regret).
fn as_regret(report: &Report, median: f64) -> f64 {
    if report.log10 {
        10f64.powf(median)
    } else {
        median
    }
}

/// The numbers a claim's check measured, and whether it passed; `None` without results.
fn evaluate_claim(claim: &Claim, r: &SpecResult) -> Result<Option<(String, bool)>, String> {
    let Some(name) = &claim.metric else {
        return Ok(evaluate(&claim.check, r, r.report.as_ref()));
    };
    let metric = crate::spec::Metric::parse(name)
        .ok_or_else(|| format!("claim {:?}: unknown metric {name:?}", claim.claim))?;
    let Some(runs) = &r.runs else {
        return Ok(None);
    };
    let report = runs.report(Some(&metric))?;
    Ok(evaluate(&claim.check, r, Some(&report)))
}

/// The numbers a check measured on `report` (or a study), and whether it passed; `None`
/// without results.
fn evaluate(check: &Check, r: &SpecResult, report: Option<&Report>) -> Option<(String, bool)> {
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
        Check::Better { policy, than, at } => {
            Field::new(report?, at.unwrap_or(1.0)).better_than(policy, than)
        }
        Check::RegretRatio {
            worse,
            better,
            at_least,
        } => Field::new(report?, 1.0).regret_ratio(worse, better, *at_least),
        Check::Rank { policy, at_most } => Field::new(report?, 1.0).rank(policy, *at_most),
        Check::Comparable { policy } => Field::new(report?, 1.0).comparable(policy),
    }
}

/// Every policy's standing on one report at one share of the budget, with what the checks
/// that compare policies say about them.
struct Field<'a> {
    report: &'a Report,
    standings: Vec<Standing>,
    /// What is compared, e.g. "median simple regret".
    label: String,
    /// Where on the x-axis, e.g. "at the budget".
    place: String,
}

impl<'a> Field<'a> {
    fn new(report: &'a Report, at: f64) -> Self {
        let place = if at >= 1.0 {
            "at the budget".to_string()
        } else {
            format!("at {} of the budget", percent(at))
        };
        Field {
            report,
            standings: standings(report, at),
            label: format!("{} {}", central(report), report.y.label(report.log10)),
            place,
        }
    }

    fn get(&self, policy: &str) -> Option<&Standing> {
        self.standings.iter().find(|s| s.policy == policy)
    }

    /// Whether value `a` is better than `b` in the report's direction.
    fn better(&self, a: f64, b: f64) -> bool {
        if lower_is_better(self.report) {
            a < b
        } else {
            a > b
        }
    }

    /// `policy` better than every one of `than`.
    fn better_than(&self, policy: &str, than: &[String]) -> Option<(String, bool)> {
        let (label, place) = (&self.label, &self.place);
        let mine = self.get(policy)?;
        let mut parts = vec![format!(
            "{label} {place}: {policy} {} (n = {})",
            sig(mine.value),
            mine.runs
        )];
        let mut ok = true;
        for other in than {
            let theirs = self.get(other)?;
            ok &= self.better(mine.value, theirs.value);
            parts.push(format!(
                "{other} {} (n = {})",
                sig(theirs.value),
                theirs.runs
            ));
        }
        Some((parts.join(", "), ok))
    }

    /// The regret of `worse` over that of `good`, at least `at_least`.
    fn regret_ratio(&self, worse: &str, good: &str, at_least: f64) -> Option<(String, bool)> {
        let w = as_regret(self.report, self.get(worse)?.value);
        let b = as_regret(self.report, self.get(good)?.value);
        let ratio = w / b;
        Some((
            format!(
                "{} regret {worse} / {good} = {} / {} = {} (claim: ≥ {})",
                central(self.report),
                sig(w),
                sig(b),
                sig(ratio),
                sig(at_least)
            ),
            ratio >= at_least,
        ))
    }

    /// `policy`'s rank (1 = best) among the spec's policies, their number, and every policy
    /// in order with its value ("A 0.1 < B 0.2 < …", best first).
    fn ranking(&self, policy: &str) -> Option<(usize, usize, String)> {
        let mine = self.get(policy)?.value;
        let mut ranked: Vec<&Standing> = self.standings.iter().collect();
        ranked.sort_by(|a, b| {
            let o = a.value.total_cmp(&b.value);
            if lower_is_better(self.report) {
                o
            } else {
                o.reverse()
            }
        });
        let rank = 1 + ranked.iter().filter(|s| self.better(s.value, mine)).count();
        let order: Vec<String> = ranked
            .iter()
            .map(|s| format!("{} {}", s.policy, sig(s.value)))
            .collect();
        Some((rank, ranked.len(), order.join(" < ")))
    }

    /// `policy` among the best `at_most`.
    fn rank(&self, policy: &str, at_most: usize) -> Option<(String, bool)> {
        let (rank, of, order) = self.ranking(policy)?;
        Some((
            format!("{policy} ranks {rank} of {of} by {}: {order}", self.label),
            rank <= at_most,
        ))
    }

    /// `policy` inside the band of the best policy.
    fn comparable(&self, policy: &str) -> Option<(String, bool)> {
        let mine = self.get(policy)?.value;
        let best = self
            .standings
            .iter()
            .reduce(|a, b| if self.better(b.value, a.value) { b } else { a })?;
        let (low, high) = best.band;
        let band = if report::quartile_bands(self.report) {
            "quartile band"
        } else {
            "± 1 s.e. band"
        };
        let (rank, of, order) = self.ranking(policy)?;
        Some((
            format!(
                "{} {}: {policy} {} against the best, {} {} (its {band} {} to {}); \
                 {policy} ranks {rank} of {of}: {order}",
                self.label,
                self.place,
                sig(mine),
                best.policy,
                sig(best.value),
                sig(low),
                sig(high)
            ),
            if lower_is_better(self.report) {
                mine <= high
            } else {
                mine >= low
            },
        ))
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

fn sig(v: f64) -> String {
    report::markdown::sig(v)
}

/// A share as a percentage ("25 %").
fn percent(share: f64) -> String {
    format!("{} %", (share * 100.0).round())
}

/// The verdict of a check on a spec's results: final only on the paper's replications of a
/// complete spec.
fn verdict(
    measured: Option<&(String, bool)>,
    r: &SpecResult,
    check: &Check,
) -> (Verdict, &'static str) {
    let partial = replications(r, check) < r.spec.paper_replications;
    match measured {
        None => (Verdict::NotRun, ""),
        Some((_, passed)) if partial => (
            Verdict::Provisional,
            if *passed {
                " (holds so far)"
            } else {
                " (does not hold so far)"
            },
        ),
        Some((_, true)) => (Verdict::Holds, ""),
        Some((_, false)) => (Verdict::DoesNotHold, ""),
    }
}

/// Completed replications behind a check: the smallest number over the policies it compares,
/// so that runs of a policy the claim does not name (still missing, or cut short) leave its
/// verdict alone. A study counts as its paper's replications once it has run.
fn replications(r: &SpecResult, check: &Check) -> usize {
    match (&r.report, &r.study) {
        (Some(rep), _) => fewest_runs(
            rep.curves.iter().map(|c| (c.policy.as_str(), c.runs)),
            compared_policies(check).as_deref(),
        ),
        (None, Some(_)) => r.spec.paper_replications,
        _ => 0,
    }
}

/// The smallest number of runs among `(policy, runs)` pairs, over the `named` policies only
/// where given; 0 when none is there.
fn fewest_runs<'a>(
    curves: impl Iterator<Item = (&'a str, usize)>,
    named: Option<&[&str]>,
) -> usize {
    curves
        .filter(|(policy, _)| named.is_none_or(|n| n.contains(policy)))
        .map(|(_, runs)| runs)
        .min()
        .unwrap_or(0)
}

/// The policies a check compares by name; `None` for checks whose outcome depends on every
/// policy of the spec (a rank, the best policy's band, the slowest decision).
fn compared_policies(check: &Check) -> Option<Vec<&str>> {
    match check {
        Check::Better { policy, than, .. } => Some(
            std::iter::once(policy.as_str())
                .chain(than.iter().map(String::as_str))
                .collect(),
        ),
        Check::RegretRatio { worse, better, .. } => Some(vec![worse, better]),
        _ => None,
    }
}

/// The marker line of a page's recorded spec fingerprints, parsed by [`stale_pages`].
const SPEC_LINE: &str = "<!-- gallery-spec ";

/// The marker a stale page carries.
const STALE_LINE: &str = "<!-- gallery-stale ";

/// A page [`write_pages`] wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct WrittenPage {
    /// The page.
    pub path: PathBuf,
    /// The specs whose rows were kept as the page had them: the page was made from the same
    /// spec and counted more complete runs than the results directory holds.
    pub kept: Vec<String>,
    /// Whether the page was written: a page the results add nothing to is left as it is.
    pub changed: bool,
}

/// Writes the pages of `papers` under `pages_dir` from the results under `out` (`root` is the
/// repository root, where spec paths start); returns the pages written.
///
/// A spec with fewer complete runs under `out` than its page already counts, and the same
/// fingerprint, keeps its rows, figure and times as the page has them, so no command takes a
/// finished result off a page. A page none of whose specs has a complete run to add is left
/// byte for byte as it is (not restamped with the current commit).
pub fn write_pages(
    root: &Path,
    papers: &[Paper],
    out: &Path,
    pages_dir: &Path,
    command: &str,
) -> Result<Vec<WrittenPage>, String> {
    let commit = git_commit(root);
    let mut written = Vec::new();
    for paper in papers {
        let path = pages_dir.join(&paper.page);
        let committed = std::fs::read_to_string(&path)
            .map(|t| CommittedPage::parse(&t))
            .unwrap_or_default();
        let mut results: Vec<SpecResult> = paper
            .specs
            .iter()
            .map(|s| spec_result(root, s, out))
            .collect::<Result<_, _>>()?;
        for r in &mut results {
            r.kept = committed.keep(&r.spec.path, &r.fingerprint, r.runs_complete);
        }
        if path.is_file() && !adds_results(&results) {
            written.push(WrittenPage {
                path,
                kept: Vec::new(),
                changed: false,
            });
            continue;
        }
        let assets = pages_dir.join(paper.page.trim_end_matches(".md"));
        std::fs::create_dir_all(&assets)
            .map_err(|e| format!("{}: cannot create: {e}", assets.display()))?;
        copy_assets(&results, &assets)?;
        let page = render(paper, &results, &commit, command, &assets, pages_dir)?;
        store::write_atomic(&path, page.as_bytes())
            .map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
        let kept = results
            .iter()
            .filter(|r| r.kept.is_some())
            .map(|r| r.spec.path.clone())
            .collect();
        written.push(WrittenPage {
            path,
            kept,
            changed: true,
        });
    }
    Ok(written)
}

/// Whether any spec has complete runs of its own to put on the page: one the page does not
/// keep as it had it, with at least one complete run (or a complete study).
fn adds_results(results: &[SpecResult]) -> bool {
    results
        .iter()
        .any(|r| r.kept.is_none() && r.runs_complete > 0)
}

/// Copies each spec's figure and summary next to the page (never the raw records); a kept
/// spec's files stay as they are.
fn copy_assets(results: &[SpecResult], assets: &Path) -> Result<(), String> {
    for r in results.iter().filter(|r| r.kept.is_none()) {
        let files: &[(&str, &str)] = if r.study.is_some() {
            &[("report.md", "md")]
        } else {
            &[("report.svg", "svg"), ("summary.csv", "csv")]
        };
        for (from, ext) in files {
            let src = r.dir.join(from);
            if src.is_file() {
                let dst = assets.join(format!("{}.{ext}", r.name));
                copy_asset(&src, &dst, r)?;
            }
        }
        if let Some(study) = &r.study {
            for f in &study.figures {
                let src = r.dir.join(format!("{}.svg", f.name));
                if src.is_file() {
                    let dst = assets.join(format!("{}-{}.svg", r.name, f.name));
                    std::fs::copy(&src, &dst).map_err(|e| format!("{}: {e}", src.display()))?;
                }
            }
        }
    }
    Ok(())
}

/// Copies one file next to the page; a study's report links its figures as the PNGs of its
/// results directory, which the page replaces by the SVGs copied beside it.
fn copy_asset(src: &Path, dst: &Path, r: &SpecResult) -> Result<(), String> {
    let fail =
        |e: std::io::Error| format!("cannot copy {} to {}: {e}", src.display(), dst.display());
    let Some(study) = &r.study else {
        return std::fs::copy(src, dst).map(|_| ()).map_err(fail);
    };
    let mut text = std::fs::read_to_string(src).map_err(fail)?;
    for f in &study.figures {
        text = text.replace(
            &format!("]({}.png)", f.name),
            &format!("]({}-{}.svg)", r.name, f.name),
        );
    }
    std::fs::write(dst, text).map_err(fail)
}

/// The page of one paper.
fn render(
    paper: &Paper,
    results: &[SpecResult],
    commit: &str,
    command: &str,
    assets: &Path,
    pages_dir: &Path,
) -> Result<String, String> {
    let rel = assets
        .strip_prefix(pages_dir)
        .unwrap_or(assets)
        .display()
        .to_string();
    let mut out = String::new();
    let _ = writeln!(out, "# {} — {}\n", paper.id, paper.title);
    let _ = writeln!(
        out,
        "<!-- Written by `{command}`; edit docs/reproductions/gallery.yaml, not this page. -->\n"
    );
    let _ = writeln!(
        out,
        "The paper is `../shared/seeds/{}`. Numbers are medians over replications at the \
         budget (evaluations within the budget; see README, \"At the budget\"). *Provisional*: \
         fewer replications than the paper's or runs still missing.\n",
        paper.seed
    );
    claims_section(&mut out, paper, results)?;
    if let Some(rt) = &paper.runtimes {
        out.push_str(&runtimes_section(rt, results)?);
    }
    figures_section(&mut out, results, &rel);
    how_to_run_section(&mut out, paper, results, commit);
    remaining_section(&mut out, paper);
    for r in results {
        let (cpu, wall) = r.seconds();
        let marker = Marker {
            path: r.spec.path.clone(),
            fingerprint: r.fingerprint.clone(),
            cpu_seconds: Some(cpu),
            wall_seconds: Some(wall),
        };
        let _ = writeln!(out, "{}", marker.line());
    }
    Ok(out)
}

/// The claims table: each claim with what was measured and its verdict.
fn claims_section(out: &mut String, paper: &Paper, results: &[SpecResult]) -> Result<(), String> {
    let _ = writeln!(out, "## Claims\n");
    let _ = writeln!(
        out,
        "| claim | where | cabo measured | replications (cabo / paper) | verdict |"
    );
    let _ = writeln!(out, "|---|---|---|---|---|");
    for claim in &paper.claims {
        let r = results
            .iter()
            .find(|r| r.spec.path == claim.spec)
            .ok_or_else(|| {
                format!(
                    "claim {:?}: spec {} is not in the paper's specs",
                    claim.claim, claim.spec
                )
            })?;
        let first_cells = format!("| {} | {} |", claim.claim, claim.source);
        if let Some(row) = r.kept.as_ref().and_then(|k| k.row(&first_cells)) {
            let _ = writeln!(out, "{row}");
            continue;
        }
        let measured = evaluate_claim(claim, r)?.map(|(text, ok)| match &r.report {
            Some(rep) => (with_diamonds(text, rep), ok),
            None => (text, ok),
        });
        let (v, so_far) = verdict(measured.as_ref(), r, &claim.check);
        let note = claim
            .note
            .as_deref()
            .map_or(String::new(), |n| format!(" — {n}"));
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} / {} | {}{so_far}{note} |",
            claim.claim,
            claim.source,
            measured
                .as_ref()
                .map_or("—".to_string(), |(m, _)| m.clone()),
            replications(r, &claim.check),
            r.spec.paper_replications,
            v.word()
        );
    }
    Ok(())
}

/// Each spec's figures and summary (or study tables), linked from `rel`.
fn figures_section(out: &mut String, results: &[SpecResult], rel: &str) {
    let _ = writeln!(out, "\n## Figures and summaries\n");
    for r in results {
        if let Some(kept) = &r.kept {
            let _ = writeln!(out, "{}", kept.figure_block.trim_end());
            out.push('\n');
            continue;
        }
        let _ = writeln!(out, "### `{}`\n", r.spec.path);
        if let Some(study) = &r.study {
            for f in &study.figures {
                let _ = writeln!(out, "![{}]({rel}/{}-{}.svg)\n", f.name, r.name, f.name);
            }
            let _ = writeln!(
                out,
                "Tables and findings: [{}.md]({rel}/{}.md)\n",
                r.name, r.name
            );
        } else if r.report.is_some() {
            let _ = writeln!(
                out,
                "![{}]({rel}/{}.svg)\n\nEvery policy at every grid point: [{}.csv]({rel}/{}.csv)\n",
                r.name, r.name, r.name, r.name
            );
        } else {
            let _ = writeln!(out, "No results yet.\n");
        }
    }
}

/// The commands that regenerate the page, the commit and fingerprints it came from, and the
/// CPU time its runs took.
fn how_to_run_section(out: &mut String, paper: &Paper, results: &[SpecResult], commit: &str) {
    let _ = writeln!(out, "## How to run\n");
    let _ = writeln!(
        out,
        "```sh\ncargo xtask reproduce {}          # the gallery's replications\ncargo xtask reproduce {} --full   # the paper's\n```\n",
        paper.id, paper.id
    );
    let _ = writeln!(out, "Made at commit `{commit}` from:\n");
    let _ = writeln!(
        out,
        "| spec | fingerprint | runs complete | CPU time (run threads) | wall time |"
    );
    let _ = writeln!(out, "|---|---|---:|---:|---:|");
    let (mut cpu, mut wall) = (0.0, 0.0);
    for r in results {
        let (c, w) = r.seconds();
        cpu += c;
        wall += w;
        if let Some(kept) = &r.kept {
            let _ = writeln!(out, "{}", kept.how_row);
            continue;
        }
        let _ = writeln!(
            out,
            "| `{}` | `{}` | {} / {} | {} | {} |",
            r.spec.path,
            r.fingerprint,
            r.runs_complete,
            r.runs_total,
            crate::status::duration(r.cpu_seconds),
            crate::status::duration(r.wall_seconds)
        );
    }
    let _ = writeln!(
        out,
        "\nIn all {} of CPU time on the runs' own threads and {} of wall time, summed over the \
         complete runs' `times.jsonl` (GP linear algebra a run hands to the thread pool counts in \
         its wall time only; the wall time of runs sharing cores with other work is inflated).\n",
        crate::status::duration(cpu),
        crate::status::duration(wall)
    );
    kept_note(out, results);
}

/// Says which specs' rows the page kept from its earlier version, and from which commit.
fn kept_note(out: &mut String, results: &[SpecResult]) {
    let kept: Vec<String> = results
        .iter()
        .filter_map(|r| {
            let k = r.kept.as_ref()?;
            Some(format!("`{}` (commit `{}`)", r.spec.path, k.commit))
        })
        .collect();
    if !kept.is_empty() {
        let _ = writeln!(
            out,
            "Kept as the page had them, because the results this page was written from hold \
             fewer complete runs of the same spec: {}.\n",
            kept.join(", ")
        );
    }
}

/// What the page's claims still need from a cluster, with CPU-hour estimates and commands.
fn remaining_section(out: &mut String, paper: &Paper) {
    if paper.remaining.is_empty() {
        return;
    }
    let _ = writeln!(out, "## What remains for a cluster\n");
    let _ = writeln!(
        out,
        "| runs | CPU-hours (estimate) | command |\n|---|---:|---|"
    );
    for rem in &paper.remaining {
        let _ = writeln!(
            out,
            "| {} | {} | `{}` |",
            rem.what, rem.cpu_hours, rem.command
        );
    }
    out.push('\n');
}

/// A claim's numbers followed by the report's diamonds, where the spec draws them.
fn with_diamonds(text: String, report: &Report) -> String {
    let (Some(metric), marks) = (
        &report.input.report.marker,
        report::markdown::diamonds(report),
    ) else {
        return text;
    };
    format!(
        "{text}; diamonds (mean {} after which `{metric}` stays {}): {}",
        report::markdown::x_name(report),
        report.input.report.marker_equals.unwrap_or(1),
        marks.join(", ")
    )
}

/// The paper's runtimes beside cabo's mean wall time per decision on the same problems.
fn runtimes_section(rt: &Runtimes, results: &[SpecResult]) -> Result<String, String> {
    let mut out = String::new();
    let _ = writeln!(out, "\n## Runtimes ({})\n", rt.source);
    let _ = writeln!(
        out,
        "The paper: {} cabo: the mean wall time of a decision (model fits and the decision; \
         the initial design excluded) over the complete runs' `times.jsonl`, on the machine \
         that made this page, sharing its cores with other work (so an upper bound).\n",
        rt.what
    );
    let _ = writeln!(
        out,
        "| problem | policy | paper (s) | cabo (s) | paper / cabo |\n|---|---|---:|---:|---:|"
    );
    for row in &rt.rows {
        if row.paper.len() != rt.policies.len() {
            return Err(format!(
                "runtimes of {}: {} numbers for {} policies",
                row.problem,
                row.paper.len(),
                rt.policies.len()
            ));
        }
        let r = results
            .iter()
            .find(|r| r.spec.path == row.spec)
            .ok_or_else(|| format!("runtimes: spec {} is not in the paper's specs", row.spec))?;
        for (policy, paper_s) in rt.policies.iter().zip(&row.paper) {
            let first_cells = format!("| {} | {policy} |", row.problem);
            if let Some(kept) = r.kept.as_ref().and_then(|k| k.row(&first_cells)) {
                let _ = writeln!(out, "{kept}");
                continue;
            }
            let mine = r
                .decision_seconds
                .iter()
                .find(|(p, t)| p == policy && t.decisions > 0)
                .map(|(_, t)| t.mean());
            let (cabo, ratio) = match mine {
                Some(m) => (sig(m), format!("{}×", sig(paper_s / m))),
                None => ("—".into(), "—".into()),
            };
            let _ = writeln!(
                out,
                "| {} | {policy} | {} | {cabo} | {ratio} |",
                row.problem,
                sig(*paper_s)
            );
        }
    }
    Ok(out)
}

/// The current commit of the repository at `root`, or `unknown`.
fn git_commit(root: &Path) -> String {
    std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(root)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into())
}

/// A page whose recorded fingerprints differ from the specs now.
#[derive(Debug, Clone, PartialEq)]
pub struct StalePage {
    /// The page.
    pub page: PathBuf,
    /// (spec path, recorded fingerprint, current fingerprint or the error reading it).
    pub changed: Vec<(String, String, String)>,
    /// Whether the page says it is stale.
    pub marked: bool,
}

/// The pages under `pages_dir` whose specs (paths relative to `root`) changed since they were
/// written.
pub fn stale_pages(root: &Path, pages_dir: &Path) -> Result<Vec<StalePage>, String> {
    let mut stale = Vec::new();
    let mut pages: Vec<PathBuf> = std::fs::read_dir(pages_dir)
        .map_err(|e| format!("{}: {e}", pages_dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    for page in pages {
        let text =
            std::fs::read_to_string(&page).map_err(|e| format!("{}: {e}", page.display()))?;
        let mut changed = Vec::new();
        for line in text.lines() {
            let Some(rest) = line.strip_prefix(SPEC_LINE) else {
                continue;
            };
            let mut parts = rest.trim_end_matches("-->").split_whitespace();
            let (Some(path), Some(recorded)) = (parts.next(), parts.next()) else {
                continue;
            };
            let now =
                spec_fingerprint(&root.join(path)).unwrap_or_else(|e| format!("unreadable: {e}"));
            if now != recorded {
                changed.push((path.to_string(), recorded.to_string(), now));
            }
        }
        if !changed.is_empty() {
            stale.push(StalePage {
                page,
                marked: text.contains(STALE_LINE),
                changed,
            });
        }
    }
    Ok(stale)
}

/// Marks each unmarked stale page under `pages_dir` as stale since `root`'s current commit;
/// returns the pages marked.
pub fn mark_stale(root: &Path, pages_dir: &Path) -> Result<Vec<PathBuf>, String> {
    let commit = git_commit(root);
    let mut marked = Vec::new();
    for s in stale_pages(root, pages_dir)?
        .into_iter()
        .filter(|s| !s.marked)
    {
        let text =
            std::fs::read_to_string(&s.page).map_err(|e| format!("{}: {e}", s.page.display()))?;
        let specs: Vec<&str> = s.changed.iter().map(|(p, ..)| p.as_str()).collect();
        let (title, rest) = text.split_once('\n').unwrap_or((&text, ""));
        let note = format!(
            "{title}\n\n{STALE_LINE}{commit} -->\n> **Stale**: since commit `{commit}` these \
             specs, or the numerics generation they run under (now {}), differ from the ones \
             this page was made from: {}. Its numbers are those of the earlier specs or \
             generation; `cargo xtask reproduce` rewrites it.\n{rest}",
            store::NUMERICS,
            specs.join(", ")
        );
        store::write_atomic(&s.page, note.as_bytes())
            .map_err(|e| format!("{}: {e}", s.page.display()))?;
        marked.push(s.page);
    }
    Ok(marked)
}

/// The specs of `papers`, with the replications a reproduction runs: the gallery's quick
/// count (the spec's own where it sets none), or the paper's with `full` (a spec file may
/// run fewer by default, as seed 001's do; studies ignore the count).
pub fn plan(papers: &[Paper], full: bool) -> Vec<(String, Option<usize>)> {
    let mut specs: Vec<(String, Option<usize>)> = Vec::new();
    for p in papers {
        for s in &p.specs {
            if specs.iter().any(|(path, _)| path == &s.path) {
                continue;
            }
            specs.push((
                s.path.clone(),
                if full {
                    Some(s.paper_replications)
                } else {
                    s.quick_replications
                },
            ));
        }
    }
    specs
}

#[cfg(test)]
mod tests {
    use super::*;
    use cabo_core::study::{Cell, Table};

    fn study(rows: &[[f64; 2]]) -> cabo_core::StudyOutput {
        cabo_core::StudyOutput {
            figures: Vec::new(),
            tables: vec![Table {
                name: "t".into(),
                title: "t".into(),
                columns: vec!["bound".into(), "ratio".into()],
                rows: rows
                    .iter()
                    .map(|r| r.iter().map(|v| Cell::Number(*v)).collect())
                    .collect(),
            }],
            findings: Vec::new(),
            data: serde_json::Value::Null,
            measurements: Vec::new(),
        }
    }

    #[test]
    fn a_full_reproduction_runs_the_papers_replications_and_a_quick_one_the_gallerys() {
        let gallery: Gallery = serde_saphyr::from_str(
            "papers:
  - { id: '001', title: t, seed: s, page: p.md, claims: [],
      specs: [{ path: a.yaml, paper_replications: 200, quick_replications: 5 },
              { path: b.yaml, paper_replications: 16 }] }
",
        )
        .expect("a gallery");
        let full = plan(&gallery.papers, true);
        assert_eq!(
            full,
            [("a.yaml".into(), Some(200)), ("b.yaml".into(), Some(16))]
        );
        let quick = plan(&gallery.papers, false);
        assert_eq!(quick, [("a.yaml".into(), Some(5)), ("b.yaml".into(), None)]);
    }

    #[test]
    fn study_checks_read_the_named_columns() {
        let out = study(&[[1.0, 2.0], [5.0, 4.0], [9.0, 12.0]]);
        assert!(study_max(&out, "t", "ratio", 12.0).unwrap().1);
        assert!(!study_max(&out, "t", "ratio", 12.5).unwrap().1);
        assert!(study_min(&out, "t", "ratio", 2.0).unwrap().1);
        let (text, ok) = study_at_most(&out, "t", ["bound", "ratio"], None, 0.0).unwrap();
        assert!(!ok && text.contains("2 of 3 rows"), "{text}");
        assert!(study_max(&out, "t", "missing", 0.0).is_none());
        assert!(study_max(&out, "other", "ratio", 0.0).is_none());
    }

    #[test]
    fn the_slowest_policy_is_the_one_with_the_largest_mean_decision() {
        let t = |decisions, seconds| DecisionTime { decisions, seconds };
        let times = vec![
            ("EI".to_string(), t(10, 0.5)),
            ("B-MS-EI".to_string(), t(4, 8.0)),
            ("never decided".to_string(), t(0, 0.0)),
        ];
        let (text, ok) = slowest(&times, "B-MS-EI").unwrap();
        assert!(ok, "{text}");
        assert!(text.starts_with("mean wall time per decision"), "{text}");
        assert!(!slowest(&times, "EI").unwrap().1);
        assert!(slowest(&times, "never decided").is_none());
    }

    #[test]
    fn a_runtime_row_must_have_a_number_per_policy() {
        let rt = Runtimes {
            source: "Table 1".into(),
            what: "seconds.".into(),
            policies: vec!["EI".into(), "KG".into()],
            rows: vec![RuntimeRow {
                problem: "Dropwave".into(),
                spec: "specs/x.yaml".into(),
                paper: vec![1.0],
            }],
        };
        let e = runtimes_section(&rt, &[]).unwrap_err();
        assert!(e.contains("1 numbers for 2 policies"), "{e}");
    }

    /// A claim's replications count only the policies it compares: a policy it does not name
    /// with fewer runs leaves it final, one it names keeps it provisional, and a check that
    /// reads every policy (a rank) counts them all.
    #[test]
    fn replications_count_the_policies_a_claim_compares() {
        let curves = [
            ("alpha-ETC", 5),
            ("ETC-50", 5),
            ("reference", 1),
            ("UCB-PSQ", 4),
        ];
        let better = |than: &[&str]| Check::Better {
            policy: "alpha-ETC".into(),
            than: than.iter().map(|s| s.to_string()).collect(),
            at: None,
        };
        let count = |check: &Check| {
            fewest_runs(curves.iter().copied(), compared_policies(check).as_deref())
        };
        assert_eq!(count(&better(&["ETC-50"])), 5);
        assert_eq!(count(&better(&["ETC-50", "UCB-PSQ"])), 4);
        assert_eq!(count(&better(&["missing"])), 5);
        let rank = Check::Rank {
            policy: "alpha-ETC".into(),
            at_most: 1,
        };
        assert_eq!(count(&rank), 1);
        assert_eq!(fewest_runs(std::iter::empty(), None), 0);
    }
}
