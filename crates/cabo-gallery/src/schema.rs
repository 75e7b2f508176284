//! The gallery's files: `gallery.yaml`, an index of per-paper claim files, and each paper's
//! file with its specs, settings table, claims (and how each is settled) and runtimes.
//!
//! [`load`] reads them all and checks what the parser cannot: claim ids unique, every claim
//! settled one way (a spec and a check, a reason it cannot run, or a named test), checks
//! naming policies their spec has, `on: early` with a share of the report's grid, and named
//! tests that exist. Every error names the file, the line, the claim and the key, with the
//! closest valid name.

use cabo_spec::error::{SpecError, parse_yaml_with};
use cabo_spec::locate::Locator;
use serde::Deserialize;
use std::path::{Path, PathBuf};

/// Grid intervals of the per-run values: shares k/40 of the budget, k = 0..=40.
pub const GRID_INTERVALS: usize = 40;

/// Planned looks of a spec without `looks:`.
pub const DEFAULT_LOOKS: usize = 4;

/// The gallery: every paper of the index, in its order.
#[derive(Debug, Clone)]
pub struct Gallery {
    /// One entry per paper.
    pub papers: Vec<Paper>,
}

/// `gallery.yaml`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Index {
    papers: Vec<IndexEntry>,
}

/// One paper of the index.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct IndexEntry {
    /// The paper's file, next to the index.
    file: String,
}

/// One paper's file and page.
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
    /// The authors' public code the settings table cites (`owner/repo @ commit`).
    #[serde(default)]
    pub code: Option<String>,
    /// The specs the page draws on.
    pub specs: Vec<GallerySpec>,
    /// The parameters that matter, in the paper, the authors' code and cabo.
    #[serde(default)]
    pub settings: Vec<Setting>,
    /// The paper's claims.
    #[serde(default)]
    pub claims: Vec<Claim>,
    /// cabo's own variants: shown on the page, never counted with the paper's claims.
    #[serde(default)]
    pub beyond_the_paper: Vec<Claim>,
    /// Full-size runs that need a cluster, with their cost.
    #[serde(default)]
    pub remaining: Vec<Remaining>,
    /// The paper's runtimes, set beside cabo's on the page.
    #[serde(default)]
    pub runtimes: Option<Runtimes>,
    /// The paper's file, as the index names it (set by [`load`]).
    #[serde(skip)]
    pub file: String,
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
    /// Replications the paper used: the sequential rule's last look.
    pub paper_replications: usize,
    /// Replications run without `--full` (default: the spec's).
    #[serde(default)]
    pub quick_replications: Option<usize>,
    /// Planned looks of the sequential rule (default [`DEFAULT_LOOKS`]).
    #[serde(default)]
    pub looks: Option<usize>,
    /// CPU seconds of one run (one replication of one policy; a study's whole run), for the
    /// estimates of what remains while no run of this version is counted: measured on
    /// earlier runs, which `estimate_from` names.
    #[serde(default)]
    pub cpu_seconds_per_run: Option<f64>,
    /// Where `cpu_seconds_per_run` comes from.
    #[serde(default)]
    pub estimate_from: Option<String>,
}

impl GallerySpec {
    /// The planned looks.
    pub fn looks(&self) -> usize {
        self.looks.unwrap_or(DEFAULT_LOOKS)
    }
}

/// One row of a paper's settings table.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Setting {
    /// The parameter.
    pub parameter: String,
    /// Which experiments it applies to.
    #[serde(default)]
    pub applies: Option<String>,
    /// What the paper says.
    pub paper: String,
    /// What the authors' code does.
    pub code: String,
    /// What cabo does.
    pub cabo: String,
    /// Why cabo differs, where it does.
    #[serde(default)]
    pub reason: String,
}

impl Setting {
    /// Whether cabo's value differs from the code's (or the paper's where the code says
    /// nothing); compared as written, so a row states identical settings identically.
    pub fn differs(&self) -> bool {
        let silent = |s: &str| {
            let s = s.trim().to_lowercase();
            s.is_empty() || s == "not stated" || s == "—" || s == "-"
        };
        let reference = if silent(&self.code) {
            &self.paper
        } else {
            &self.code
        };
        !silent(reference) && self.cabo.trim() != reference.trim()
    }
}

/// One claim and how it is settled.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Claim {
    /// Unique within the paper: lowercase letters, digits and `-`.
    pub id: String,
    /// The claim in one sentence.
    pub claim: String,
    /// The paper's words (optional beyond the paper).
    #[serde(default)]
    pub quote: Option<String>,
    /// Section, figure, table or theorem.
    pub source: String,
    /// The spec whose results check it.
    #[serde(default)]
    pub spec: Option<String>,
    /// The metric, in the spec's `report.y` spelling (default: the spec's own).
    #[serde(default)]
    pub metric: Option<String>,
    /// How the row's reading was chosen.
    #[serde(default)]
    pub note: Option<String>,
    /// The check on the spec's results.
    #[serde(default)]
    pub check: Option<Check>,
    /// Why cabo cannot run it.
    #[serde(default)]
    pub cannot_run: Option<String>,
    /// `file: function` of the repository test that verifies it.
    #[serde(default)]
    pub tested_by: Option<String>,
}

/// How a claim is settled.
#[derive(Debug, Clone, PartialEq)]
pub enum Settled<'a> {
    /// By a check on a spec's results.
    Check {
        /// The spec.
        spec: &'a str,
        /// The check.
        check: &'a Check,
    },
    /// It cannot run, for this reason.
    CannotRun(&'a str),
    /// By this test (`file: function`).
    TestedBy(&'a str),
}

impl Claim {
    /// Every per-run read the claim's check makes, by spec (none for a study, a runtime
    /// ordering, a named test or a claim that cannot run): the per-run file of each spec
    /// must keep these values.
    pub fn reads(&self) -> Vec<Read<'_>> {
        let (Some(spec), Some(check)) = (self.spec.as_deref(), &self.check) else {
            return Vec::new();
        };
        let metric = metric_of(self);
        let read = |spec, policies, on, at| Read {
            spec,
            metric,
            policies,
            on,
            at,
        };
        match check {
            c if c.pairing().is_some() => {
                let p = c.pairing().expect("paired");
                let policies = std::iter::once(p.policy).chain(names(p.comparators));
                vec![read(spec, policies.collect(), p.on, p.at)]
            }
            Check::BetterAcross { policy, than: a }
            | Check::ComparableAcross { policy, to: a, .. } => {
                vec![
                    read(spec, vec![policy.as_str()], On::Final, None),
                    read(&a.spec, vec![a.policy.as_str()], On::Early, Some(a.at)),
                ]
            }
            Check::NotWorseAcross {
                policy,
                at,
                than: a,
                ..
            } => {
                let on = if at.is_some() { On::Early } else { On::Final };
                vec![
                    read(spec, vec![policy.as_str()], on, *at),
                    read(&a.spec, vec![a.policy.as_str()], On::Early, Some(a.at)),
                ]
            }
            // A rate fit reads the grid from a share to the budget, as `area` does.
            Check::Sublinear { policy, metric, .. } => vec![Read {
                spec,
                metric,
                policies: vec![policy.as_str()],
                on: On::Area,
                at: None,
            }],
            Check::AdvantageShrinks {
                policies,
                over,
                then,
            } => std::iter::once(spec)
                .chain(names(then))
                .map(|s| {
                    read(
                        s,
                        names(policies).chain(names(over)).collect(),
                        On::Final,
                        None,
                    )
                })
                .collect(),
            Check::LowestMostOften { settings, .. } | Check::SomeSetting { settings, .. } => {
                let mut out: Vec<Read<'_>> = Vec::new();
                for g in settings {
                    for s in &g.specs {
                        match out.iter_mut().find(|r| r.spec == s) {
                            Some(r) => r.policies.extend(
                                names(&g.policies)
                                    .filter(|p| !r.policies.contains(p))
                                    .collect::<Vec<_>>(),
                            ),
                            None => {
                                out.push(read(s, names(&g.policies).collect(), On::Final, None))
                            }
                        }
                    }
                }
                out
            }
            _ => Vec::new(),
        }
    }

    /// How the claim is settled; `None` for a claim [`load`] would reject.
    pub fn settled(&self) -> Option<Settled<'_>> {
        match (&self.spec, &self.check, &self.cannot_run, &self.tested_by) {
            (Some(spec), Some(check), None, None) => Some(Settled::Check { spec, check }),
            (None, None, Some(why), None) => Some(Settled::CannotRun(why)),
            (None, None, None, Some(test)) => Some(Settled::TestedBy(test)),
            _ => None,
        }
    }
}

/// Where on the curve a comparison reads each run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum On {
    /// At the budget.
    #[default]
    Final,
    /// The mean of the curve over the budget.
    Area,
    /// At a share `at` of the budget.
    Early,
}

/// How a claim is checked on a spec's results.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Check {
    /// `policy` better than each of `than`, by paired differences per replication.
    Better {
        /// The policy the claim favours.
        policy: String,
        /// The policies it should beat.
        than: Vec<String>,
        /// Where each run is read.
        #[serde(default)]
        on: On,
        /// The share of the budget, with `on: early`.
        #[serde(default)]
        at: Option<f64>,
    },
    /// `policy` within ±`margin` of each of `to` (equivalence, two one-sided tests).
    Comparable {
        /// The policy.
        policy: String,
        /// The policies it should be comparable to.
        to: Vec<String>,
        /// The equivalence margin on the metric's scale, fixed before the runs.
        margin: f64,
        /// Where each run is read.
        #[serde(default)]
        on: On,
        /// The share of the budget, with `on: early`.
        #[serde(default)]
        at: Option<f64>,
    },
    /// `policy` no worse than any of `than` by more than `margin` ("competitive", "no method
    /// outperforms": non-inferiority, one-sided).
    NotWorse {
        /// The policy.
        policy: String,
        /// The policies it should be no worse than.
        than: Vec<String>,
        /// The non-inferiority margin on the metric's scale, fixed before the runs.
        margin: f64,
        /// Where each run is read.
        #[serde(default)]
        on: On,
        /// The share of the budget, with `on: early`.
        #[serde(default)]
        at: Option<f64>,
    },
    /// `policy` takes the longest per decision of the spec's policies.
    Slowest {
        /// The policy.
        policy: String,
    },
    /// Every row of a study table has `left` ≤ `right` + `slack` × `slack_column`.
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
        /// What a row past the bound decides: `does_not_hold` (the default), or
        /// `inconclusive` where `right` only bounds from above what the claim compares
        /// `left` with (a band's upper end), so that passing decides the claim and failing
        /// does not.
        #[serde(default)]
        on_failure: OnFailure,
    },
    /// The largest value of a study table's column is at least `at_least`.
    StudyMax {
        /// The table's name.
        table: String,
        /// The column's name.
        column: String,
        /// The bound.
        at_least: f64,
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
    /// `policy` better than at least one of `than` ("one of A and B performs worst"):
    /// paired differences per replication, Holm's step-down over the comparisons.
    BetterThanAny {
        /// The policy the claim favours.
        policy: String,
        /// The policies of which it should beat one.
        than: Vec<String>,
        /// Where each run is read.
        #[serde(default)]
        on: On,
        /// The share of the budget, with `on: early`.
        #[serde(default)]
        at: Option<f64>,
    },
    /// `policy` of the claim's spec at its budget better than a policy of another spec read
    /// at a share of that spec's budget, replication by replication (the two specs share
    /// their replications' seeds).
    BetterAcross {
        /// The policy of the claim's spec.
        policy: String,
        /// What it is compared with.
        than: Across,
    },
    /// `policy` of the claim's spec at its budget within ±`margin` of a policy of another
    /// spec read at a share of that spec's budget, replication by replication.
    ComparableAcross {
        /// The policy of the claim's spec.
        policy: String,
        /// What it is compared with.
        to: Across,
        /// The equivalence margin on the metric's scale, fixed before the runs.
        margin: f64,
    },
    /// `policy` of the claim's spec, read at the share `at` of its budget (at the budget
    /// without), no worse by more than `margin` than a policy of a spec read at a share of
    /// that spec's budget, replication by replication: "reaches its regret in a quarter of
    /// the time" (the other spec may be the claim's own).
    NotWorseAcross {
        /// The policy of the claim's spec.
        policy: String,
        /// The share of the budget at which it is read (a multiple of 1/40).
        #[serde(default)]
        at: Option<f64>,
        /// What it is compared with.
        than: Across,
        /// The non-inferiority margin on the metric's scale, fixed before the runs.
        margin: f64,
    },
    /// The advantage of `policies` over `over` (per replication, the mean of `over`'s
    /// values less the mean of `policies`', oriented so positive favours `policies`) shrinks
    /// from the claim's spec to each spec of `then` in turn, at the budget.
    AdvantageShrinks {
        /// The policies whose advantage it is.
        policies: Vec<String>,
        /// The policies they are compared with.
        over: Vec<String>,
        /// The following specs, in the claim's order.
        then: Vec<String>,
    },
    /// Over settings (a group of specs, one per level of a factor, and a policy), `level`
    /// gives the lowest mean at the budget in more settings than each other level.
    LowestMostOften {
        /// The level the claim favours, one of `levels`.
        level: String,
        /// The factor's levels, in order.
        levels: Vec<String>,
        /// The settings.
        settings: Vec<SettingGroup>,
    },
    /// Some setting shows an earlier level better than a later one, a later one better, or
    /// (with `both`) each in some setting: per setting and pair of levels, the difference of
    /// the means at the budget, Holm's step-down over all of them.
    SomeSetting {
        /// What some setting must show.
        shows: Shows,
        /// The factor's levels, in order.
        levels: Vec<String>,
        /// The settings.
        settings: Vec<SettingGroup>,
    },
    /// A study table's `column`, rows sorted by `by` (within each value of `group`), moves
    /// one way: each consecutive step may go against `direction` by at most `slack` × the
    /// step's standard error √(s.e.ᵢ² + s.e.ᵢ₊₁²) read from `slack_column`.
    StudyMonotone {
        /// The table's name.
        table: String,
        /// The column that must move one way.
        column: String,
        /// The column the rows are sorted by.
        by: String,
        /// Which way.
        direction: Direction,
        /// A column whose values split the table into groups checked apart (`prior`).
        #[serde(default)]
        group: Option<String>,
        /// The column of each row's standard error, if its values are estimates.
        #[serde(default)]
        slack_column: Option<String>,
        /// How many standard errors of a step are tolerated against the direction.
        #[serde(default)]
        slack: f64,
    },
    /// A study table's `column` is convex in `by` (within each value of `group`): on the
    /// rows sorted by `by`, a possibly non-uniform grid, each slope is at least the one
    /// before it, less `tolerance` × the two slopes' magnitudes (floating point).
    StudyConvex {
        /// The table's name.
        table: String,
        /// The column that must be convex.
        column: String,
        /// The column of the abscissae.
        by: String,
        /// A column whose values split the table into groups checked apart.
        #[serde(default)]
        group: Option<String>,
        /// The relative tolerance on a change of slope, for rounding.
        tolerance: f64,
    },
    /// `policy`'s cumulative regret `metric` grows sublinearly: per replication, the
    /// least-squares slope of log R against log x over the per-run grid from share `from`
    /// to the budget; holds when the slopes' mean has its repeated interval below 1.
    Sublinear {
        /// The policy whose runs are read.
        policy: String,
        /// The cumulative regret metric (`report.y` spelling, e.g. `metric:cvs.cumulative_regret`).
        metric: String,
        /// The share of the budget where the fit starts, on the per-run grid.
        #[serde(default = "default_from")]
        from: f64,
    },
}

/// The other side of a cross-spec comparison.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Across {
    /// The other spec (one of the paper's `specs:`).
    pub spec: String,
    /// Its policy.
    pub policy: String,
    /// The share of its budget at which its runs are read (a multiple of 1/40).
    pub at: f64,
}

/// Settings of a tally: one spec per level of the factor, and the policies each of which
/// makes one setting with them.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SettingGroup {
    /// What the group is (`GP sample, cheap`).
    pub name: String,
    /// One spec per level, in the levels' order.
    pub specs: Vec<String>,
    /// The policies, each a setting.
    pub policies: Vec<String>,
}

/// What some setting must show in [`Check::SomeSetting`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Shows {
    /// An earlier level of `levels` gives a better value than a later one.
    EarlierLevelBetter,
    /// A later level gives a better value than an earlier one.
    LaterLevelBetter,
    /// Each of the two, in some setting.
    Both,
}

/// The names of `v` as string slices.
fn names(v: &[String]) -> impl Iterator<Item = &str> {
    v.iter().map(String::as_str)
}

/// One read of per-run values a claim makes: these policies' runs of `spec` on `metric`,
/// read `on` (at share `at` for early). The per-run file of each spec keeps what the
/// claims' reads name.
#[derive(Debug, Clone, PartialEq)]
pub struct Read<'a> {
    /// The spec.
    pub spec: &'a str,
    /// The metric, as the per-run values name it.
    pub metric: &'a str,
    /// The policies read.
    pub policies: Vec<&'a str>,
    /// Where on the curve.
    pub on: On,
    /// The share of the budget, for early.
    pub at: Option<f64>,
}

/// What a [`Check::StudyAtMost`] that fails decides.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnFailure {
    /// The claim does not hold.
    #[default]
    DoesNotHold,
    /// The claim stays undecided: the bound checked is not the claim's own quantity.
    Inconclusive,
}

/// Which way a [`Check::StudyMonotone`] column moves as its `by` column grows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Each step is ≤ 0 (within its slack).
    NonIncreasing,
    /// Each step is ≥ 0 (within its slack).
    NonDecreasing,
}

/// The share of the budget where a sublinear fit starts by default: the first quarter of a
/// run is dominated by its initial design and exploration, not by the rate.
fn default_from() -> f64 {
    0.25
}

impl Read<'_> {
    /// Whether the read needs the per-run grid of shares, or the value at the budget only.
    pub fn reading(&self) -> Reading {
        match self.on {
            On::Final => Reading::Final,
            On::Area | On::Early => Reading::Curve,
        }
    }
}

/// Where a claim reads a spec's per-run values: the value at the budget, or somewhere on
/// the curve (a share of the budget, the area, a fit over the grid), which needs the
/// per-run grid of shares k/40 kept in the spec's CSV.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// The run's value at the budget only.
    Final,
    /// The run's values on the grid of shares of the budget.
    Curve,
}

/// A paired check's parts: the claim's policy, its comparators under the key that names
/// them (`than` or `to`), the margin of `comparable` and `not_worse`, and where runs are read.
struct Pairing<'a> {
    policy: &'a str,
    comparators: &'a [String],
    key: &'static str,
    margin: Option<f64>,
    on: On,
    at: Option<f64>,
}

impl Check {
    /// The claim's policy and its comparators, for the checks decided by paired statistics.
    pub fn paired(&self) -> Option<(&str, &[String])> {
        self.pairing().map(|p| (p.policy, p.comparators))
    }

    /// Everything a paired check says, in one shape.
    fn pairing(&self) -> Option<Pairing<'_>> {
        let (policy, comparators, key, margin, on, at) = match self {
            Check::Better {
                policy,
                than,
                on,
                at,
            } => (policy, than, "than", None, on, at),
            Check::Comparable {
                policy,
                to,
                margin,
                on,
                at,
            } => (policy, to, "to", Some(*margin), on, at),
            Check::NotWorse {
                policy,
                than,
                margin,
                on,
                at,
            } => (policy, than, "than", Some(*margin), on, at),
            Check::BetterThanAny {
                policy,
                than,
                on,
                at,
            } => (policy, than, "than", None, on, at),
            _ => return None,
        };
        Some(Pairing {
            policy,
            comparators,
            key,
            margin,
            on: *on,
            at: *at,
        })
    }

    /// Where a paired check reads each run, with the share for `early`.
    pub fn reading(&self) -> Option<(On, Option<f64>)> {
        self.pairing().map(|p| (p.on, p.at))
    }

    /// Whether the check reads the per-run values of specs other than the claim's (or of
    /// several specs): decided from every spec's values, planned on each.
    pub fn across_specs(&self) -> bool {
        matches!(
            self,
            Check::BetterAcross { .. }
                | Check::ComparableAcross { .. }
                | Check::NotWorseAcross { .. }
                | Check::AdvantageShrinks { .. }
                | Check::LowestMostOften { .. }
                | Check::SomeSetting { .. }
        )
    }

    /// Whether the check is decided from per-run values (a paired check, a rate check or one
    /// across specs), never from a kept row of the committed page.
    pub fn from_values(&self) -> bool {
        self.runs_read().is_some() || self.across_specs()
    }

    /// Whether the check reads a study's tables.
    fn on_study(&self) -> bool {
        matches!(
            self,
            Check::StudyAtMost { .. } | Check::StudyMax { .. } | Check::StudyMin { .. }
        ) || self.on_study_rows()
    }

    /// Whether the check relates rows of a study table (monotone, convex).
    fn on_study_rows(&self) -> bool {
        matches!(
            self,
            Check::StudyMonotone { .. } | Check::StudyConvex { .. }
        )
    }

    /// The policies whose per-run values the check reads, the claim's own first: a paired
    /// check's policy and comparators, a rate check's policy. `None` for checks on a study's
    /// tables or on decision times, which read no per-run values.
    pub fn runs_read(&self) -> Option<(&str, &[String])> {
        match self {
            Check::Sublinear { policy, .. } => Some((policy, &[])),
            _ => self.paired(),
        }
    }
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

/// Reads the gallery index at `index` and every paper file it names, and checks them against
/// the specs and tests under `root` (the repository root, where their paths start). All the
/// errors found are returned together, one a line.
pub fn load(root: &Path, index: &Path) -> Result<Gallery, String> {
    let read = |p: &Path| {
        std::fs::read_to_string(p).map_err(|e| format!("{}: cannot read: {e}", p.display()))
    };
    let text = read(index)?;
    let entries: Index = parse_yaml_with(index, &text, yaml12()).map_err(|e| e.to_string())?;
    let dir = index.parent().unwrap_or(Path::new("."));
    let mut papers = Vec::new();
    let mut errors = Vec::new();
    for entry in entries.papers {
        let path = dir.join(&entry.file);
        let paper = read(&path).and_then(|text| {
            let mut paper: Paper =
                parse_yaml_with(&path, &text, yaml12()).map_err(|e| e.to_string())?;
            paper.file = entry.file.clone();
            let found = check_paper(root, &path, &text, &paper);
            if found.is_empty() {
                Ok(paper)
            } else {
                Err(found.join("\n"))
            }
        });
        match paper {
            Ok(p) => papers.push(p),
            Err(e) => errors.push(e),
        }
    }
    check_unique_ids(&papers, index, &mut errors);
    if errors.is_empty() {
        Ok(Gallery { papers })
    } else {
        Err(errors.join("\n"))
    }
}

/// Two papers must not answer to the same name on the command line.
fn check_unique_ids(papers: &[Paper], index: &Path, errors: &mut Vec<String>) {
    let mut seen: Vec<(&str, &str)> = Vec::new();
    for p in papers {
        for name in std::iter::once(&p.id).chain(&p.aliases) {
            if let Some((_, other)) = seen.iter().find(|(n, _)| n == name) {
                errors.push(format!(
                    "{}: papers {other} and {} both answer to {name:?}; give each its own id \
                     and aliases",
                    index.display(),
                    p.file
                ));
            }
            seen.push((name, &p.file));
        }
    }
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
            let ids: Vec<&str> = self.papers.iter().map(|p| p.id.as_str()).collect();
            let names: Vec<&str> = (self.papers.iter())
                .flat_map(|p| p.aliases.iter().map(String::as_str))
                .collect();
            let closest =
                cabo_core::registry::likely_meant(which, &[&ids[..], &names[..]].concat())
                    .map(|c| format!(" (did you mean {c:?}?)"))
                    .unwrap_or_default();
            return Err(format!(
                "no paper {which:?} in the gallery{closest}: use an id ({}), a name ({}) or `all`",
                ids.join(", "),
                names.join(", ")
            ));
        }
        Ok(found)
    }
}

/// What a paper file's checks need to know of one spec file.
enum SpecShape {
    /// A study (its tables are read by study checks).
    Study,
    /// A comparison with these policies.
    Comparison(Vec<String>),
}

/// Reads the policy names of the spec file at `path` without resolving its plugins (the
/// file as written: `policies[*].name`), or that it is a study.
fn spec_shape(path: &Path) -> Result<SpecShape, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read it: {e}"))?;
    if cabo_runner::study::is_study(&text) {
        return Ok(SpecShape::Study);
    }
    #[derive(Deserialize)]
    struct Named {
        name: String,
    }
    #[derive(Deserialize)]
    struct Policies {
        #[serde(default)]
        policies: Vec<Named>,
    }
    let p: Policies =
        serde_saphyr::from_str(&text).map_err(|e| format!("cannot read its policies: {e}"))?;
    Ok(SpecShape::Comparison(
        p.policies.into_iter().map(|n| n.name).collect(),
    ))
}

/// The name the replications' seeds of the comparison spec at `path` derive from: its
/// `seeds_from`, else its `name` (as [`cabo_spec::Spec::seed_name`]).
fn seed_name(path: &Path) -> Result<String, String> {
    #[derive(Deserialize)]
    struct Seeds {
        name: String,
        #[serde(default)]
        seeds_from: Option<String>,
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read it: {e}", path.display()))?;
    let s: Seeds = serde_saphyr::from_str(&text)
        .map_err(|e| format!("{}: cannot read its name: {e}", path.display()))?;
    Ok(s.seeds_from.unwrap_or(s.name))
}

/// The parser's options for the gallery's files: YAML 1.2 booleans, so that the key `on:` of
/// a check is the word it looks like (YAML 1.1 reads it as `true`).
fn yaml12() -> serde_saphyr::Options {
    serde_saphyr::options! { strict_booleans: true }
}

/// Everything wrong with one paper file, one message each.
fn check_paper(root: &Path, path: &Path, text: &str, paper: &Paper) -> Vec<String> {
    let ctx = Ctx {
        root,
        path,
        locator: Locator::new(text),
        paper,
        shapes: paper
            .specs
            .iter()
            .map(|s| (s.path.clone(), spec_shape(&root.join(&s.path))))
            .collect(),
    };
    let mut errors = Vec::new();
    for (i, s) in paper.specs.iter().enumerate() {
        if let (_, Err(e)) = &ctx.shapes[i] {
            errors.push(ctx.error(&format!("specs[{i}].path"), format!("{}: {e}", s.path)));
        }
        if s.paper_replications == 0 || s.looks == Some(0) {
            errors.push(ctx.error(
                &format!("specs[{i}]"),
                "paper_replications and looks must be at least 1".into(),
            ));
        }
    }
    let mut ids: Vec<&str> = Vec::new();
    for (section, claims) in [
        ("claims", &paper.claims),
        ("beyond_the_paper", &paper.beyond_the_paper),
    ] {
        for (i, c) in claims.iter().enumerate() {
            let key = format!("{section}[{i}]");
            if ids.contains(&c.id.as_str()) {
                errors.push(ctx.claim_error(
                    &key,
                    c,
                    "id",
                    "the same id as an earlier claim; ids must be unique within the paper".into(),
                ));
            }
            ids.push(&c.id);
            errors.extend(ctx.check_claim(&key, c, section == "claims"));
        }
    }
    if let Some(rt) = &paper.runtimes {
        for (i, row) in rt.rows.iter().enumerate() {
            if let Err(e) = ctx.spec_index(&row.spec) {
                errors.push(ctx.error(&format!("runtimes.rows[{i}].spec"), e));
            }
        }
    }
    errors
}

/// One paper file being checked.
struct Ctx<'a> {
    root: &'a Path,
    path: &'a Path,
    locator: Locator,
    paper: &'a Paper,
    /// Per spec of `specs:`, its shape or why it cannot be read.
    shapes: Vec<(String, Result<SpecShape, String>)>,
}

impl Ctx<'_> {
    /// An error at `key`, located in the file.
    fn error(&self, key: &str, message: String) -> String {
        SpecError::new(self.path, self.locator.find(key), key, message).to_string()
    }

    /// An error about claim `c` (at `key`) and its `field`.
    fn claim_error(&self, key: &str, c: &Claim, field: &str, message: String) -> String {
        let at = format!("{key}.{field}");
        self.error(&at, format!("claim {}: {message}", c.id))
    }

    /// The index of `spec` in `specs:`, or what to write instead.
    fn spec_index(&self, spec: &str) -> Result<usize, String> {
        let paths: Vec<&str> = self.paper.specs.iter().map(|s| s.path.as_str()).collect();
        paths.iter().position(|p| *p == spec).ok_or_else(|| {
            format!(
                "{spec} is not among the paper's `specs:` (add it there){}",
                hint(spec, &paths)
            )
        })
    }

    /// Everything wrong with one claim.
    fn check_claim(&self, key: &str, c: &Claim, of_paper: bool) -> Vec<String> {
        let mut errors = Vec::new();
        if c.id.is_empty()
            || !c
                .id
                .chars()
                .all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '-')
        {
            errors.push(self.claim_error(
                key,
                c,
                "id",
                "an id is lowercase letters, digits and `-` (e.g. fig4-cost-aware-d16)".into(),
            ));
        }
        if of_paper && c.quote.as_deref().is_none_or(|q| q.trim().is_empty()) {
            errors.push(
                self.claim_error(
                    key,
                    c,
                    "quote",
                    "a claim of the paper quotes the paper's words; cabo's own variants go under \
                 `beyond_the_paper:`"
                        .into(),
                ),
            );
        }
        match c.settled() {
            None => errors.push(self.claim_error(
                key,
                c,
                "check",
                "settle a claim one way: `spec:` with `check:`, `cannot_run:` with the reason, \
                 or `tested_by:` naming a test"
                    .into(),
            )),
            Some(Settled::CannotRun(why)) if why.trim().is_empty() => {
                errors.push(self.claim_error(key, c, "cannot_run", "give the reason".into()))
            }
            Some(Settled::CannotRun(_)) => {}
            Some(Settled::TestedBy(test)) => {
                if let Err(e) = check_test(self.root, test) {
                    errors.push(self.claim_error(key, c, "tested_by", e));
                }
            }
            Some(Settled::Check { spec, check }) => {
                errors.extend(self.check_check(key, c, spec, check));
            }
        }
        errors
    }

    /// Everything wrong with a claim's check on `spec`.
    fn check_check(&self, key: &str, c: &Claim, spec: &str, check: &Check) -> Vec<String> {
        let i = match self.spec_index(spec) {
            Ok(i) => i,
            Err(e) => return vec![self.claim_error(key, c, "spec", e)],
        };
        let mut errors = Vec::new();
        if let Some(m) = &c.metric {
            match time_metric(m) {
                Some(Err(e)) => errors.push(self.claim_error(key, c, "metric", e)),
                Some(Ok(_)) => {}
                None if cabo_spec::Metric::parse(m).is_none() => errors.push(self.claim_error(
                    key,
                    c,
                    "metric",
                    format!(
                        "unknown metric {m:?}: use one of {}, or time:<{}> for a run's mean \
                             time per decision",
                        cabo_spec::METRIC_NAMES.join(", "),
                        cabo_spec::TIME_METRIC_NAMES.join(" | ")
                    ),
                )),
                None => {}
            }
        }
        let Ok(shape) = &self.shapes[i].1 else {
            return errors; // reported under `specs:`
        };
        match (shape, check.on_study()) {
            (SpecShape::Study, false) => errors.push(self.claim_error(
                key,
                c,
                "check.type",
                format!(
                    "{spec} is a study: its claims take study_min, study_max, study_at_most, \
                     study_monotone or study_convex"
                ),
            )),
            (SpecShape::Comparison(_), true) => errors.push(self.claim_error(
                key,
                c,
                "check.type",
                format!("{spec} compares policies: a study check needs a study spec"),
            )),
            (SpecShape::Comparison(policies), false) => {
                errors.extend(self.check_policies(key, c, spec, check, policies));
            }
            (SpecShape::Study, true) => {}
        }
        errors.extend(self.check_reading(key, c, check));
        errors.extend(self.check_across(key, c, spec, check));
        errors.extend(self.check_study_rows(key, c, check));
        errors.extend(self.check_rate(key, c, check));
        errors
    }

    /// A row-relation check's numbers: a slack and a tolerance are finite and not negative,
    /// and the rows are not sorted by the column they relate.
    fn check_study_rows(&self, key: &str, c: &Claim, check: &Check) -> Vec<String> {
        let (column, by, bound) = match check {
            Check::StudyMonotone {
                column, by, slack, ..
            } => (column, by, ("check.slack", *slack)),
            Check::StudyConvex {
                column,
                by,
                tolerance,
                ..
            } => (column, by, ("check.tolerance", *tolerance)),
            _ => return Vec::new(),
        };
        let mut errors = Vec::new();
        if !(bound.1.is_finite() && bound.1 >= 0.0) {
            errors.push(self.claim_error(
                key,
                c,
                bound.0,
                format!("expected a number ≥ 0, got {}", bound.1),
            ));
        }
        if column == by {
            errors.push(self.claim_error(
                key,
                c,
                "check.by",
                format!(
                    "`by` names the column the rows are sorted by; it cannot be `{column}` itself"
                ),
            ));
        }
        errors
    }

    /// A rate check's policy, metric and share: the policy one of the spec's, the metric a
    /// run's recorded metric (not a time, and not also given as the claim's `metric:`), the
    /// share on the grid with at least three grid points from it to the budget.
    fn check_rate(&self, key: &str, c: &Claim, check: &Check) -> Vec<String> {
        let Check::Sublinear { metric, from, .. } = check else {
            return Vec::new();
        };
        let mut errors = Vec::new();
        if c.metric.is_some() {
            errors.push(self.claim_error(
                key,
                c,
                "metric",
                "a sublinear check names its metric as `check.metric`; remove the claim's `metric:`"
                    .into(),
            ));
        }
        if !matches!(
            cabo_spec::Metric::parse(metric),
            Some(cabo_spec::Metric::Problem(_))
        ) {
            errors.push(self.claim_error(
                key,
                c,
                "check.metric",
                format!(
                    "{metric:?}: a sublinear check reads a problem's cumulative regret as \
                     `metric:<name>` (e.g. metric:cvs.cumulative_regret)"
                ),
            ));
        }
        match grid_share(*from) {
            Err(e) => errors.push(self.claim_error(key, c, "check.from", e)),
            Ok(k) if k + 2 > GRID_INTERVALS || k == 0 => errors.push(self.claim_error(
                key,
                c,
                "check.from",
                format!(
                    "the fit needs share `from` above 0 (log 0 is not defined) and at least three \
                     grid points up to the budget: use a share between 0.025 and {}",
                    (GRID_INTERVALS - 2) as f64 / GRID_INTERVALS as f64
                ),
            )),
            Ok(_) => {}
        }
        errors
    }

    /// The policies of the comparison spec `spec`, or why there are none to name.
    fn policies_of(&self, spec: &str) -> Result<&[String], String> {
        let i = self.spec_index(spec)?;
        match &self.shapes[i].1 {
            Ok(SpecShape::Comparison(p)) => Ok(p),
            Ok(SpecShape::Study) => Err(format!(
                "{spec} is a study: a comparison across specs reads the runs of comparison specs"
            )),
            Err(e) => Err(format!("{spec}: {e}")),
        }
    }

    /// An error unless `policy` is one of `spec`'s (which must be a paper's comparison spec).
    fn policy_in(&self, spec: &str, policy: &str) -> Result<(), String> {
        let policies = self.policies_of(spec)?;
        if policies.iter().any(|p| p == policy) {
            return Ok(());
        }
        let names: Vec<&str> = names(policies).collect();
        Err(format!(
            "policy {policy:?} is not in {spec}{} (its policies: {})",
            hint(policy, &names),
            names.join(", ")
        ))
    }

    /// What is wrong with the checks that read several specs' runs. One match, an arm per
    /// check kind, because the arms share the `fail` collector, which names this claim and
    /// its key; the error lists stay in the order a reader meets the fields.
    fn check_across(&self, key: &str, c: &Claim, spec: &str, check: &Check) -> Vec<String> {
        let mut errors = Vec::new();
        let mut fail = |field: &str, m: String| errors.push(self.claim_error(key, c, field, m));
        match check {
            Check::BetterAcross { than: a, .. }
            | Check::ComparableAcross { to: a, .. }
            | Check::NotWorseAcross { than: a, .. } => {
                let side = if matches!(check, Check::ComparableAcross { .. }) {
                    "check.to"
                } else {
                    "check.than"
                };
                if let Check::NotWorseAcross { at: Some(at), .. } = check
                    && let Err(e) = grid_share(*at)
                {
                    fail("check.at", e);
                }
                if let Check::ComparableAcross { margin, .. } | Check::NotWorseAcross { margin, .. } =
                    check
                    && !(margin.is_finite() && *margin > 0.0)
                {
                    fail(
                        "check.margin",
                        format!(
                            "the margin must be a positive number on the metric's scale, got {margin}"
                        ),
                    );
                }
                if let Err(e) = grid_share(a.at) {
                    fail(&format!("{side}.at"), e);
                }
                if let Err(e) = self.policy_in(&a.spec, &a.policy) {
                    let field = if self.spec_index(&a.spec).is_err() {
                        "spec"
                    } else {
                        "policy"
                    };
                    fail(&format!("{side}.{field}"), e);
                } else if let Err(e) = self.seeds_pair(spec, &a.spec) {
                    fail(&format!("{side}.spec"), e);
                }
            }
            Check::AdvantageShrinks {
                policies,
                over,
                then,
            } => {
                for (field, list) in [("policies", policies), ("over", over), ("then", then)] {
                    if list.is_empty() {
                        fail(&format!("check.{field}"), "name at least one".into());
                    }
                }
                for (i, next) in then.iter().enumerate() {
                    if let Err(e) = self.policies_of(next) {
                        fail(&format!("check.then[{i}]"), e);
                        continue;
                    }
                    for (field, list) in [("policies", policies), ("over", over)] {
                        for (j, p) in list.iter().enumerate() {
                            if let Err(e) = self.policy_in(next, p) {
                                fail(&format!("check.{field}[{j}]"), e);
                            }
                        }
                    }
                }
                for (j, p) in over.iter().enumerate() {
                    if let Err(e) = self.policy_in(spec, p) {
                        fail(&format!("check.over[{j}]"), e);
                    }
                }
                for (j, p) in policies.iter().enumerate() {
                    if let Err(e) = self.policy_in(spec, p) {
                        fail(&format!("check.policies[{j}]"), e);
                    }
                }
            }
            Check::LowestMostOften {
                level,
                levels,
                settings,
            } => {
                if !levels.contains(level) {
                    let names: Vec<&str> = names(levels).collect();
                    fail(
                        "check.level",
                        format!(
                            "level {level:?} is not one of `levels:` ({}){}",
                            names.join(", "),
                            hint(level, &names)
                        ),
                    );
                }
                errors.extend(self.check_settings(key, c, spec, levels, settings));
            }
            Check::SomeSetting {
                levels, settings, ..
            } => errors.extend(self.check_settings(key, c, spec, levels, settings)),
            _ => {}
        }
        errors
    }

    /// A tally's levels and settings: two levels at least, one spec of the paper per level in
    /// each group, its policies in each of them, and the claim's spec among them.
    fn check_settings(
        &self,
        key: &str,
        c: &Claim,
        spec: &str,
        levels: &[String],
        settings: &[SettingGroup],
    ) -> Vec<String> {
        let mut errors = Vec::new();
        let mut fail = |field: &str, m: String| errors.push(self.claim_error(key, c, field, m));
        if levels.len() < 2 {
            fail(
                "check.levels",
                "name the factor's levels, two at least, in order (e.g. [\"0.02\", \"0.04\", \"0.08\"])".into(),
            );
        }
        if settings.is_empty() {
            fail(
                "check.settings",
                "name at least one group of settings".into(),
            );
        }
        for (i, g) in settings.iter().enumerate() {
            if g.specs.len() != levels.len() {
                fail(
                    &format!("check.settings[{i}].specs"),
                    format!(
                        "group {:?} names {} specs for {} levels: one spec per level, in the levels' order",
                        g.name,
                        g.specs.len(),
                        levels.len()
                    ),
                );
            }
            if g.policies.is_empty() {
                fail(
                    &format!("check.settings[{i}].policies"),
                    "name at least one policy".into(),
                );
            }
            for (j, s) in g.specs.iter().enumerate() {
                if let Err(e) = self.policies_of(s) {
                    fail(&format!("check.settings[{i}].specs[{j}]"), e);
                    continue;
                }
                for (k, p) in g.policies.iter().enumerate() {
                    if let Err(e) = self.policy_in(s, p) {
                        fail(&format!("check.settings[{i}].policies[{k}]"), e);
                    }
                }
            }
        }
        if !settings.iter().any(|g| g.specs.iter().any(|s| s == spec)) {
            fail(
                "spec",
                format!(
                    "{spec} is not among the specs the check reads; the claim's spec (whose planned looks the claim takes) must be one of them"
                ),
            );
        }
        errors
    }

    /// An error unless `a` and `b` run replication r on the same seeds (one takes
    /// `seeds_from` the other, both from a third, or they are one spec).
    fn seeds_pair(&self, a: &str, b: &str) -> Result<(), String> {
        let (sa, sb) = (
            seed_name(&self.root.join(a))?,
            seed_name(&self.root.join(b))?,
        );
        if sa == sb {
            return Ok(());
        }
        Err(format!(
            "{a} (seeds from {sa:?}) and {b} (seeds from {sb:?}) do not share their \
             replications' seeds, so replication r of one is not replication r of the other \
             and their runs cannot pair; give {a} `seeds_from: {sb}` (the same problem \
             instances and initial designs), or compare within one spec"
        ))
    }

    /// Every policy a check names must be one of the spec's.
    fn check_policies(
        &self,
        key: &str,
        c: &Claim,
        spec: &str,
        check: &Check,
        policies: &[String],
    ) -> Vec<String> {
        let names: Vec<&str> = policies.iter().map(String::as_str).collect();
        let mut named: Vec<(String, &str)> = Vec::new();
        match check {
            c if c.pairing().is_some() => {
                let pairing = c.pairing().expect("a paired check");
                named.push(("check.policy".into(), pairing.policy));
                named.extend(
                    pairing
                        .comparators
                        .iter()
                        .enumerate()
                        .map(|(j, p)| (format!("check.{}[{j}]", pairing.key), p.as_str())),
                );
            }
            Check::Slowest { policy } | Check::Sublinear { policy, .. } => {
                named.push(("check.policy".into(), policy))
            }
            _ => {}
        }
        named
            .into_iter()
            .filter(|(_, p)| !names.contains(p))
            .map(|(field, p)| {
                self.claim_error(
                    key,
                    c,
                    &field,
                    format!(
                        "policy {p:?} is not in {spec}{} (its policies: {})",
                        hint(p, &names),
                        names.join(", ")
                    ),
                )
            })
            .collect()
    }

    /// `on`, `at` and `margin` as the check types take them.
    fn check_reading(&self, key: &str, c: &Claim, check: &Check) -> Vec<String> {
        let mut errors = Vec::new();
        let Some(pairing) = check.pairing() else {
            return errors;
        };
        let mut fail = |field: &str, m: String| errors.push(self.claim_error(key, c, field, m));
        if pairing.comparators.is_empty() {
            fail("check", "name at least one policy to compare with".into());
        }
        match (pairing.on, pairing.at) {
            (On::Early, None) => fail(
                "check.at",
                "`on: early` reads the runs at a share of the budget: give it as `at:`, \
                 fixed before the runs (e.g. at: 0.25)"
                    .into(),
            ),
            (On::Early, Some(at)) => {
                if let Err(e) = grid_share(at) {
                    fail("check.at", e);
                }
            }
            (_, Some(_)) => fail(
                "check.at",
                "`at:` goes with `on: early` (final reads the budget, area the whole curve)".into(),
            ),
            _ => {}
        }
        if let Some(margin) = pairing.margin
            && !(margin.is_finite() && margin > 0.0)
        {
            fail(
                "check.margin",
                format!("the margin must be a positive number on the metric's scale, got {margin}"),
            );
        }
        errors
    }
}

/// The grid index k of a share `at` = k/40 of the budget, or why it is not on the grid.
pub fn grid_share(at: f64) -> Result<usize, String> {
    let k = (at * GRID_INTERVALS as f64).round();
    if (0.0..=1.0).contains(&at) && (at * GRID_INTERVALS as f64 - k).abs() < 1e-9 {
        return Ok(k as usize);
    }
    let near = (k.clamp(0.0, GRID_INTERVALS as f64)) / GRID_INTERVALS as f64;
    Err(format!(
        "share {at} is not on the per-run grid: use a multiple of 1/{GRID_INTERVALS} = 0.025 \
         between 0 and 1 (closest: {near})"
    ))
}

/// Checks `file: function` names a file under `root` that defines `fn function`.
pub fn check_test(root: &Path, test: &str) -> Result<(), String> {
    let Some((file, name)) = test.split_once(':').map(|(f, n)| (f.trim(), n.trim())) else {
        return Err(format!(
            "{test:?}: name the test as `file: function` (e.g. \
             \"plugins/pbgi/tests/pandora_oracle.rs: gittins_policy_matches_weitzman_dp\")"
        ));
    };
    let path: PathBuf = root.join(file);
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("{file}: cannot read the test's file: {e}"))?;
    let defined: Vec<&str> = text
        .split("fn ")
        .skip(1)
        .filter_map(|rest| {
            rest.split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .next()
        })
        .collect();
    if defined.contains(&name) {
        Ok(())
    } else {
        Err(format!(
            "{file} defines no `fn {name}`{}",
            hint(name, &defined)
        ))
    }
}

/// "; did you mean \"x\"?" with the closest of `names`, or nothing.
fn hint(name: &str, names: &[&str]) -> String {
    cabo_core::registry::closest_of(name, names)
        .map(|c| format!("; did you mean {c:?}?"))
        .unwrap_or_default()
}

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
pub fn time_metric(name: &str) -> Option<Result<cabo_spec::TimeMetric, String>> {
    name.strip_prefix(TIME_PREFIX)
        .map(|t| cabo_spec::TimeMetric::parse("metric", t))
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    const SPEC: &str =
        "name: f\nreplications: 4\npolicies:\n  - { name: PBGI }\n  - { name: EIPC }\n";

    /// A repository under a temp dir with one spec, one test file and one paper file.
    fn repo(paper: &str) -> tempfile::TempDir {
        write_repo(SPEC, paper)
    }

    /// A repository under a temp dir: `spec` as `specs/f.yaml`, a test file, and the index
    /// naming `paper` as `docs/reproductions/900-f.yaml`.
    pub(crate) fn write_repo(spec: &str, paper: &str) -> tempfile::TempDir {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        for (path, text) in [
            ("specs/f.yaml", spec),
            ("tests/t.rs", "#[test]\nfn verified_here() {}\n"),
            (
                "docs/reproductions/gallery.yaml",
                "papers:\n  - { file: 900-f.yaml }\n",
            ),
            ("docs/reproductions/900-f.yaml", paper),
        ] {
            std::fs::create_dir_all(root.join(path).parent().unwrap()).unwrap();
            std::fs::write(root.join(path), text).unwrap();
        }
        tmp
    }

    fn load_repo(paper: &str) -> Result<Gallery, String> {
        let tmp = repo(paper);
        load(
            tmp.path(),
            &tmp.path().join("docs/reproductions/gallery.yaml"),
        )
    }

    const HEAD: &str = "id: '900'\ntitle: t\nseed: s.txt\npage: 900-f.md\nspecs:\n  - { path: specs/f.yaml, paper_replications: 16 }\nclaims:\n";

    #[test]
    fn a_valid_paper_file_loads_with_every_way_to_settle_a_claim() {
        let g = load_repo(&format!(
            "{HEAD}  - {{ id: a, claim: c, quote: q, source: Fig. 1, spec: specs/f.yaml,
      check: {{ type: better, policy: PBGI, than: [EIPC], on: early, at: 0.25 }} }}
  - {{ id: b, claim: c, quote: q, source: Thm. 1, tested_by: 'tests/t.rs: verified_here' }}
  - {{ id: c, claim: c, quote: q, source: Fig. 9, cannot_run: private data }}
beyond_the_paper:
  - {{ id: d, claim: c, source: Fig. 1, spec: specs/f.yaml,
      check: {{ type: comparable, policy: PBGI, to: [EIPC], margin: 0.1, on: area }} }}
settings:
  - {{ parameter: noise, paper: not stated, code: 1e-4, cabo: learned, reason: r }}
"
        ))
        .expect("loads");
        let p = &g.papers[0];
        assert_eq!(p.file, "900-f.yaml");
        assert_eq!(p.claims.len(), 3);
        assert!(p.settings[0].differs());
        assert_eq!(p.specs[0].looks(), DEFAULT_LOOKS);
    }

    #[test]
    fn errors_name_the_file_the_claim_the_key_and_the_closest_name() {
        let e = load_repo(&format!(
            "{HEAD}  - {{ id: a, claim: c, quote: q, source: s, spec: specs/f.yaml,
      check: {{ type: better, policy: PBGl, than: [EIPC] }} }}
  - {{ id: a, claim: c, quote: q, source: s, spec: specs/g.yaml,
      check: {{ type: better, policy: PBGI, than: [EIPC] }} }}
  - {{ id: e, claim: c, quote: q, source: s, spec: specs/f.yaml,
      check: {{ type: better, policy: PBGI, than: [EIPC], on: early }} }}
  - {{ id: t, claim: c, quote: q, source: s, tested_by: 'tests/t.rs: verified_her' }}
  - {{ id: q, claim: c, source: s, cannot_run: why }}
  - {{ id: g, claim: c, quote: q, source: s, spec: specs/f.yaml,
      check: {{ type: better, policy: PBGI, than: [EIPC], on: early, at: 0.33 }} }}
"
        ))
        .unwrap_err();
        let lines: Vec<&str> = e.lines().collect();
        let find = |needle: &str| {
            lines
                .iter()
                .find(|l| l.contains(needle))
                .unwrap_or_else(|| panic!("no {needle:?} in:\n{e}"))
                .to_string()
        };
        let policy = find("policy \"PBGl\"");
        assert!(policy.contains("900-f.yaml:9:"), "{policy}");
        assert!(
            policy.contains("`claims[0].check.policy`: claim a:"),
            "{policy}"
        );
        assert!(policy.contains("did you mean \"PBGI\"?"), "{policy}");
        let dup = find("the same id");
        assert!(dup.contains("`claims[1].id`"), "{dup}");
        let spec = find("specs/g.yaml is not among");
        assert!(spec.contains("did you mean \"specs/f.yaml\"?"), "{spec}");
        assert!(find("claim e:").contains("`claims[2].check.at`"));
        assert!(find("claim t:").contains("did you mean \"verified_here\"?"));
        assert!(find("claim q:").contains("`claims[4].quote`"));
        assert!(find("claim g:").contains("closest: 0.325"));
        assert_eq!(lines.len(), 7, "{e}");
    }

    #[test]
    fn removed_check_types_are_refused_by_name() {
        let e = load_repo(&format!(
            "{HEAD}  - {{ id: a, claim: c, quote: q, source: s, spec: specs/f.yaml,
      check: {{ type: regret_ratio, worse: EIPC, better: PBGI, at_least: 10 }} }}
"
        ))
        .unwrap_err();
        assert!(
            e.contains("900-f.yaml") && e.contains("regret_ratio"),
            "{e}"
        );
        assert!(e.contains("better"), "{e}");
    }

    #[test]
    fn not_worse_and_runtime_claims_are_checked_like_the_others() {
        let g = load_repo(&format!(
            "{HEAD}  - {{ id: a, claim: c, quote: q, source: s, spec: specs/f.yaml,
      check: {{ type: not_worse, policy: PBGI, than: [EIPC], margin: 0.1, on: early, at: 0.5 }} }}
  - {{ id: b, claim: c, quote: q, source: s, spec: specs/f.yaml, metric: 'time:acquisition_time',
      check: {{ type: better, policy: PBGI, than: [EIPC] }} }}
"
        ));
        assert!(g.is_ok(), "{g:?}");
        let e = load_repo(&format!(
            "{HEAD}  - {{ id: a, claim: c, quote: q, source: s, spec: specs/f.yaml,
      check: {{ type: not_worse, policy: PBGI, than: [EIPX], margin: -1 }} }}
  - {{ id: b, claim: c, quote: q, source: s, spec: specs/f.yaml, metric: 'time:acquisiton_time',
      check: {{ type: better, policy: PBGI, than: [EIPC] }} }}
"
        ))
        .unwrap_err();
        for needle in [
            "claim a",
            "check.than[0]",
            "EIPC",
            "check.margin",
            "claim b",
            "acquisition_time",
        ] {
            assert!(e.contains(needle), "{needle}: {e}");
        }
    }

    #[test]
    fn rate_checks_are_validated_at_load_with_the_closest_name() {
        let g = load_repo(&format!(
            "{HEAD}  - {{ id: a, claim: c, quote: q, source: s, spec: specs/f.yaml,
      check: {{ type: sublinear, policy: PBGI, metric: 'metric:cvs.cumulative_regret' }} }}
"
        ))
        .expect("loads");
        let check = g.papers[0].claims[0].check.as_ref().unwrap();
        assert_eq!(
            check,
            &Check::Sublinear {
                policy: "PBGI".into(),
                metric: "metric:cvs.cumulative_regret".into(),
                from: 0.25
            }
        );
        // The grid of its metric is kept; a paired check at the budget keeps finals only.
        let reads = g.papers[0].claims[0].reads();
        assert_eq!(
            reads,
            [Read {
                spec: "specs/f.yaml",
                metric: "metric:cvs.cumulative_regret",
                policies: vec!["PBGI"],
                on: On::Area,
                at: None,
            }]
        );
        assert_eq!(reads[0].reading(), Reading::Curve);
        let e = load_repo(&format!(
            "{HEAD}  - {{ id: a, claim: c, quote: q, source: s, spec: specs/f.yaml, metric: best_y,
      check: {{ type: sublinear, policy: PBG, metric: simple_regret, from: 0.975 }} }}
"
        ))
        .unwrap_err();
        for needle in [
            "`claims[0].check.policy`: claim a: policy \"PBG\" is not in specs/f.yaml; did you mean \"PBGI\"?",
            "`claims[0].check.metric`: claim a: \"simple_regret\": a sublinear check reads",
            "`claims[0].check.from`: claim a: the fit needs",
            "`claims[0].metric`: claim a: a sublinear check names its metric",
        ] {
            assert!(e.contains(needle), "{needle}:\n{e}");
        }
        assert_eq!(e.lines().count(), 4, "{e}");
    }

    #[test]
    fn row_relation_checks_need_a_study_and_sound_numbers() {
        let study = "name: s\nstudy: { type: markov_cost_sweep }\n";
        let paper = format!(
            "{HEAD}  - {{ id: a, claim: c, quote: q, source: s, spec: specs/f.yaml,
      check: {{ type: study_monotone, table: t, column: y, by: y, direction: non_increasing, slack: -1 }} }}
  - {{ id: b, claim: c, quote: q, source: s, spec: specs/f.yaml,
      check: {{ type: study_convex, table: t, column: y, by: x, tolerance: -0.5 }} }}
"
        );
        let tmp = write_repo(study, &paper);
        let e = load(
            tmp.path(),
            &tmp.path().join("docs/reproductions/gallery.yaml"),
        )
        .unwrap_err();
        for needle in [
            "`claims[0].check.slack`: claim a: expected a number ≥ 0, got -1",
            "`claims[0].check.by`: claim a: `by` names the column",
            "`claims[1].check.tolerance`: claim b: expected a number ≥ 0, got -0.5",
        ] {
            assert!(e.contains(needle), "{needle}:\n{e}");
        }
        assert_eq!(e.lines().count(), 3, "{e}");
        // On a comparison spec, a row check is refused; an unknown direction names the valid.
        let e = load_repo(&format!(
            "{HEAD}  - {{ id: a, claim: c, quote: q, source: s, spec: specs/f.yaml,
      check: {{ type: study_convex, table: t, column: y, by: x, tolerance: 0 }} }}
"
        ))
        .unwrap_err();
        assert!(e.contains("a study check needs a study spec"), "{e}");
        let e = load_repo(&format!(
            "{HEAD}  - {{ id: a, claim: c, quote: q, source: s, spec: specs/f.yaml,
      check: {{ type: study_monotone, table: t, column: y, by: x, direction: decreasing }} }}
"
        ))
        .unwrap_err();
        assert!(e.contains("non_increasing"), "{e}");
    }

    #[test]
    fn grid_shares_are_multiples_of_a_fortieth() {
        assert_eq!(grid_share(0.25), Ok(10));
        assert_eq!(grid_share(1.0), Ok(40));
        assert!(grid_share(1.5).is_err());
    }

    /// A repository with specs `a` (seeds from `full`), `full`, `apart` and `b`, `c` for a
    /// tally, and the paper file `paper`'s claims under a head listing them all.
    fn across_repo(claims: &str) -> Result<Gallery, String> {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let spec = |name: &str, extra: &str| {
            format!(
                "name: {name}\n{extra}replications: 4\npolicies:\n  - {{ name: P }}\n  - {{ name: Q }}\n"
            )
        };
        let head = "id: '900'\ntitle: t\nseed: s.txt\npage: 900-f.md\nspecs:\n  - { path: specs/a.yaml, paper_replications: 8 }\n  - { path: specs/full.yaml, paper_replications: 8 }\n  - { path: specs/apart.yaml, paper_replications: 8 }\nclaims:\n";
        for (path, text) in [
            ("specs/a.yaml", spec("a", "seeds_from: full\n")),
            ("specs/full.yaml", spec("full", "")),
            ("specs/apart.yaml", spec("apart", "")),
            (
                "docs/reproductions/gallery.yaml",
                "papers:\n  - { file: 900-f.yaml }\n".into(),
            ),
            ("docs/reproductions/900-f.yaml", format!("{head}{claims}")),
        ] {
            std::fs::create_dir_all(root.join(path).parent().unwrap()).unwrap();
            std::fs::write(root.join(path), text).unwrap();
        }
        load(root, &root.join("docs/reproductions/gallery.yaml"))
    }

    #[test]
    fn checks_across_specs_load_and_say_what_they_read() {
        let g = across_repo(
            "  - { id: a, claim: c, quote: q, source: s, spec: specs/a.yaml,
      check: { type: better_across, policy: P, than: { spec: specs/full.yaml, policy: Q, at: 0.5 } } }
  - { id: b, claim: c, quote: q, source: s, spec: specs/a.yaml,
      check: { type: comparable_across, policy: P, to: { spec: specs/full.yaml, policy: P, at: 0.25 }, margin: 0.1 } }
  - { id: d, claim: c, quote: q, source: s, spec: specs/a.yaml,
      check: { type: better_than_any, policy: P, than: [Q] } }
  - { id: e, claim: c, quote: q, source: s, spec: specs/a.yaml,
      check: { type: advantage_shrinks, policies: [P], over: [Q], then: [specs/apart.yaml] } }
  - { id: f, claim: c, quote: q, source: s, spec: specs/a.yaml,
      check: { type: lowest_most_often, level: '2', levels: ['1', '2'],
        settings: [{ name: g, specs: [specs/a.yaml, specs/apart.yaml], policies: [P, Q] }] } }
  - { id: h, claim: c, quote: q, source: s, spec: specs/a.yaml,
      check: { type: some_setting, shows: both, levels: ['1', '2'],
        settings: [{ name: g, specs: [specs/a.yaml, specs/apart.yaml], policies: [P] }] } }
",
        )
        .expect("loads");
        let claims = &g.papers[0].claims;
        let reads = claims[0].reads();
        assert_eq!(reads.len(), 2);
        assert_eq!(
            (
                reads[1].spec,
                reads[1].policies.clone(),
                reads[1].on,
                reads[1].at
            ),
            ("specs/full.yaml", vec!["Q"], On::Early, Some(0.5))
        );
        assert_eq!((reads[0].spec, reads[0].on), ("specs/a.yaml", On::Final));
        assert_eq!(claims[2].reads()[0].policies, ["P", "Q"]);
        let shrinks: Vec<&str> = claims[3].reads().iter().map(|r| r.spec).collect();
        assert_eq!(shrinks, ["specs/a.yaml", "specs/apart.yaml"]);
        assert_eq!(claims[4].reads()[1].policies, ["P", "Q"]);
        assert!(
            claims
                .iter()
                .all(|c| c.check.as_ref().unwrap().from_values())
        );
    }

    #[test]
    fn checks_across_specs_name_what_is_wrong() {
        let e = across_repo(
            "  - { id: a, claim: c, quote: q, source: s, spec: specs/a.yaml,
      check: { type: better_across, policy: P, than: { spec: specs/ful.yaml, policy: Q, at: 0.5 } } }
  - { id: b, claim: c, quote: q, source: s, spec: specs/a.yaml,
      check: { type: better_across, policy: P, than: { spec: specs/full.yaml, policy: R, at: 0.33 } } }
  - { id: d, claim: c, quote: q, source: s, spec: specs/a.yaml,
      check: { type: better_across, policy: P, than: { spec: specs/apart.yaml, policy: Q, at: 0.5 } } }
  - { id: e, claim: c, quote: q, source: s, spec: specs/a.yaml,
      check: { type: lowest_most_often, level: '3', levels: ['1', '2'],
        settings: [{ name: g, specs: [specs/apart.yaml], policies: [X] }] } }
  - { id: f, claim: c, quote: q, source: s, spec: specs/a.yaml,
      check: { type: better_than_any, policy: P, than: [Z] } }
",
        )
        .unwrap_err();
        let find = |needle: &str| {
            e.lines()
                .find(|l| l.contains(needle))
                .unwrap_or_else(|| panic!("no {needle:?} in:\n{e}"))
                .to_string()
        };
        let spec = find("claim a:");
        assert!(spec.contains("`claims[0].check.than.spec`"), "{spec}");
        assert!(spec.contains("did you mean \"specs/full.yaml\"?"), "{spec}");
        assert!(find("policy \"R\"").contains("`claims[1].check.than.policy`"));
        assert!(
            find("policy \"R\"").contains("did you mean \"P\"?")
                || find("policy \"R\"").contains("its policies: P, Q")
        );
        assert!(find("closest: 0.325").contains("`claims[1].check.than.at`"));
        let seeds = find("claim d:");
        assert!(seeds.contains("`claims[2].check.than.spec`"), "{seeds}");
        assert!(seeds.contains("seeds_from: apart"), "{seeds}");
        assert!(seeds.contains("900-f.yaml:15:"), "{seeds}");
        assert!(find("level \"3\"").contains("`claims[3].check.level`"));
        assert!(find("names 1 specs for 2 levels").contains("check.settings[0].specs"));
        assert!(find("policy \"X\"").contains("check.settings[0].policies[0]"));
        assert!(find("is not among the specs the check reads").contains("`claims[3].spec`"));
        assert!(find("policy \"Z\"").contains("`claims[4].check.than[0]`"));
    }
}
