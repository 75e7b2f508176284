//! Per-run values beside a page: `<page folder>/<spec name>.runs.csv`, one row per (policy,
//! replication, metric) with the run's value at the budget, and at every share k/40 of it
//! for the metrics some claim reads on the curve ([`RunValues::shape`]): a metric only read
//! at the budget keeps its final values alone (`# metric: …; final only`), so a spec of
//! 25 000 paired replications stays a file of about a megabyte rather than of 24 MB.
//!
//! The file is the statistics' only input: values are written with six significant digits
//! and every number on the page is computed from them as parsed back, so anyone recomputes
//! the page exactly from the CSV. A page rewritten from another machine's results pools its
//! committed rows with the new ones ([`RunValues::pool`]), so batches run in different places
//! add up to one verdict.

use super::schema::{GRID_INTERVALS, On};
use cabo_report::{Report, Runs, Y};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// A row's key: (policy, replication, metric).
pub type Key = (String, usize, String);

/// One metric's meaning, recorded in the file's header.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricInfo {
    /// The metric as claims name it (`report.y` spelling; `default` for the spec's own).
    pub name: String,
    /// What the values are (`log10 simple regret`).
    pub label: String,
    /// Whether smaller values are better.
    pub lower_is_better: bool,
}

/// The per-run values of one spec.
#[derive(Debug, Clone, PartialEq)]
pub struct RunValues {
    /// The spec's path from the repository root.
    pub spec: String,
    /// The spec's fingerprint under the numerics generation, as the page records it.
    pub fingerprint: String,
    /// The report's x-axis and the budget on it (`cumulative_cost, budget 200`).
    pub axis: String,
    /// The metrics the rows hold.
    pub metrics: Vec<MetricInfo>,
    /// Per (policy, replication, metric): the value at the budget, then at shares 0..=40;
    /// the value at the budget alone (one entry) where the grid is not kept.
    pub rows: BTreeMap<Key, Vec<Option<f64>>>,
    /// The metrics whose grid the file does not keep: no claim reads them on the curve.
    pub final_only: Vec<String>,
}

/// What [`RunValues::shape`] found: per metric read on the curve, the runs that have only
/// their value at the budget (kept by an earlier file that no claim then read on the
/// curve). Those runs count as not run for the claims that read the curve until they are
/// run again; claims at the budget still count them.
pub type LackingGrid = Vec<(String, usize)>;

/// Columns of values per row: `final` and v0 … v40.
const VALUES: usize = GRID_INTERVALS + 2;

/// `v` as written (`{:.5e}`) and read back: what every statistic is computed from.
pub fn rounded(v: f64) -> f64 {
    format!("{v:.5e}").parse().unwrap_or(f64::NAN)
}

/// Whether a metric's smaller values are better: regrets (and problem metrics named so).
pub fn lower_is_better(y: &Y) -> bool {
    matches!(y, Y::SimpleRegret) || matches!(y, Y::Problem(m) if m.contains("regret"))
}

impl RunValues {
    /// An empty set for the spec at `spec` with `fingerprint`.
    pub fn new(spec: &str, fingerprint: &str) -> Self {
        RunValues {
            spec: spec.to_string(),
            fingerprint: fingerprint.to_string(),
            axis: String::new(),
            metrics: Vec::new(),
            rows: BTreeMap::new(),
            final_only: Vec::new(),
        }
    }

    /// Keeps what the claims read: every run's value at the budget, and the grid only for
    /// the metrics in `curve` (those some claim reads at a share, by area or by a fit). A
    /// metric read on the curve whose rows lack the grid is returned with their number.
    pub fn shape(&mut self, curve: &[String]) -> LackingGrid {
        let mut lacking: LackingGrid = Vec::new();
        self.final_only.clear();
        for m in &self.metrics {
            if !curve.contains(&m.name) {
                self.final_only.push(m.name.clone());
            }
        }
        for ((_, _, metric), values) in self.rows.iter_mut() {
            if self.final_only.contains(metric) {
                values.truncate(1);
            } else if values.len() == 1 {
                match lacking.iter_mut().find(|(m, _)| m == metric) {
                    Some((_, n)) => *n += 1,
                    None => lacking.push((metric.clone(), 1)),
                }
            }
        }
        lacking
    }

    /// Whether some row keeps the grid, so the file has the grid's columns.
    fn has_grid(&self) -> bool {
        self.rows.values().any(|v| v.len() > 1)
    }

    /// Adds every counted run of `runs`, read on `report` (a report of `runs` of the metric
    /// claims call `name`): the value at the budget and at each share k/40 of it, on the
    /// report's axis, by the report's step-function reading.
    pub fn add_report(&mut self, name: &str, runs: &Runs, report: &Report) {
        let end = report
            .curves
            .iter()
            .filter_map(|c| c.points.last())
            .map(|p| p.x)
            .fold(0.0, f64::max);
        let axis = report.input.report.x.name();
        self.axis = format!("{axis}, budget {end}");
        if !self.metrics.iter().any(|m| m.name == name) {
            self.metrics.push(MetricInfo {
                name: name.to_string(),
                label: report.y.label(report.log10),
                lower_is_better: lower_is_better(&report.y),
            });
        }
        for (policy, trace) in runs.traces(report) {
            let at = |x: f64| trace.at(x).map(rounded);
            let mut values = vec![at(end)];
            values.extend((0..=GRID_INTERVALS).map(|k| at(end * k as f64 / GRID_INTERVALS as f64)));
            let key = (policy.to_string(), trace.replication, name.to_string());
            self.rows.insert(key, normalized(values));
        }
    }

    /// Adds every counted run of `runs` by its mean `time` per decision (`times.jsonl`), the
    /// same value at the budget and at every share: a runtime claim compares whole runs.
    pub fn add_mean_times(&mut self, name: &str, runs: &Runs, time: cabo_spec::TimeMetric) {
        if !self.metrics.iter().any(|m| m.name == name) {
            self.metrics.push(MetricInfo {
                name: name.to_string(),
                label: format!("mean {} per decision", cabo_report::runtime::label(time)),
                lower_is_better: true,
            });
        }
        for (policy, rep, path) in runs.times_by_run() {
            let decisions = cabo_engine::times::read_all(&path);
            if decisions.is_empty() {
                continue;
            }
            let sum: f64 = decisions
                .iter()
                .map(|t| cabo_report::runtime::value(t, time))
                .sum();
            let mean = Some(rounded(sum / decisions.len() as f64));
            let key = (policy.to_string(), rep, name.to_string());
            self.rows.insert(key, vec![mean; GRID_INTERVALS + 2]);
        }
    }

    /// The file's text.
    pub fn to_csv(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "# spec: {}", self.spec);
        let _ = writeln!(out, "# fingerprint: {}", self.fingerprint);
        let _ = writeln!(out, "# x: {}", self.axis);
        let grid = self.has_grid();
        if grid {
            let only = if self.final_only.is_empty() {
                ""
            } else {
                ", and throughout for a metric kept final only"
            };
            let _ = writeln!(
                out,
                "# shares: v_k is the run's value at k/{GRID_INTERVALS} of the budget, k = 0..{GRID_INTERVALS}; \
                 final at the budget; empty before the run's first value{only}"
            );
        } else {
            let _ = writeln!(
                out,
                "# shares: none kept (no row has its grid: no claim reads these metrics on the curve, \
                 or the runs were kept before one did); final at the budget"
            );
        }
        for m in &self.metrics {
            let better = if m.lower_is_better { "lower" } else { "higher" };
            let only = if self.final_only.contains(&m.name) {
                FINAL_ONLY
            } else {
                ""
            };
            let _ = writeln!(
                out,
                "# metric: {} = {}; {better} is better{only}",
                m.name, m.label
            );
        }
        out.push_str("policy,replication,metric,final");
        if grid {
            for k in 0..=GRID_INTERVALS {
                let _ = write!(out, ",v{k}");
            }
        }
        out.push('\n');
        let width = if grid { VALUES } else { 1 };
        for ((policy, rep, metric), values) in &self.rows {
            let _ = write!(out, "{},{rep},{}", field(policy), field(metric));
            let padding = width.saturating_sub(values.len());
            for v in values
                .iter()
                .map(Some)
                .chain(std::iter::repeat_n(None, padding))
            {
                let v = v.copied().flatten();
                match v {
                    Some(v) => {
                        let _ = write!(out, ",{v:.5e}");
                    }
                    None => out.push(','),
                }
            }
            out.push('\n');
        }
        out
    }

    /// Reads a file written by [`RunValues::to_csv`]; `source` names it in errors.
    /// Files of both layouts read: with the grid's columns (every file written before the
    /// grid was kept only where claims read it) and without.
    pub fn parse(text: &str, source: &str) -> Result<Self, String> {
        let mut v = RunValues::new("", "");
        let mut width = None;
        for (i, line) in text.lines().enumerate() {
            let at = |m: String| format!("{source}:{}: {m}", i + 1);
            if let Some(rest) = line.strip_prefix("# ") {
                v.header_line(rest).map_err(at)?;
            } else if line.starts_with("policy,") {
                width = Some(header_width(line).map_err(at)?);
            } else if !line.trim().is_empty() {
                let Some(width) = width else {
                    return Err(at("a row before the `policy,replication,…` header".into()));
                };
                let (key, mut values) = parse_row(line, width).map_err(at)?;
                if v.final_only.contains(&key.2) {
                    values.truncate(1);
                }
                let values = normalized(values);
                if v.rows.insert(key.clone(), values).is_some() {
                    return Err(at(format!(
                        "a second row for {} replication {} metric {}",
                        key.0, key.1, key.2
                    )));
                }
            }
        }
        if v.fingerprint.is_empty() {
            return Err(format!("{source}: no `# fingerprint:` line"));
        }
        Ok(v)
    }

    /// Reads one `# key: value` header line.
    fn header_line(&mut self, rest: &str) -> Result<(), String> {
        let Some((key, value)) = rest.split_once(": ") else {
            return Ok(());
        };
        match key {
            "spec" => self.spec = value.to_string(),
            "fingerprint" => self.fingerprint = value.to_string(),
            "x" => self.axis = value.to_string(),
            "metric" => {
                let (name, rest) = value
                    .split_once(" = ")
                    .ok_or_else(|| format!("metric line {value:?}: expected `NAME = LABEL; …`"))?;
                let rest = match rest.strip_suffix(FINAL_ONLY) {
                    Some(r) => {
                        self.final_only.push(name.to_string());
                        r
                    }
                    None => rest,
                };
                let (label, better) = rest.rsplit_once("; ").unwrap_or((rest, ""));
                self.metrics.push(MetricInfo {
                    name: name.to_string(),
                    label: label.to_string(),
                    lower_is_better: better.starts_with("lower"),
                });
            }
            _ => {}
        }
        Ok(())
    }

    /// These values pooled with `older` (the committed file, read from `older_source`):
    /// rows of the same fingerprint join these, a row both hold must agree to the digit on
    /// every value both keep (else an error naming both sources; the one with the grid is
    /// kept); rows of another fingerprint are dropped, and their number returned. The
    /// pooled rows keep what either has: [`RunValues::shape`] then trims them to what the
    /// claims read.
    pub fn pool(
        mut self,
        older: RunValues,
        older_source: &str,
        source: &str,
    ) -> Result<(Self, usize), String> {
        if older.fingerprint != self.fingerprint {
            return Ok((self, older.rows.len()));
        }
        for m in older.metrics {
            if !self.metrics.iter().any(|n| n.name == m.name) {
                self.metrics.push(m);
            }
        }
        if self.axis.is_empty() {
            self.axis = older.axis;
        }
        for (key, values) in older.rows {
            match self.rows.get_mut(&key) {
                Some(mine) if !agree(mine, &values) => {
                    return Err(format!(
                        "{older_source} and {source} disagree on {} replication {} ({}): the \
                         same run of the same spec cannot have two values; remove the row \
                         that is wrong (or the results it came from) and write the page again \
                         (a regret's value also moves when new runs of its replication raise \
                         the regret reference, which report.md names: its older rows are then \
                         stale)",
                        key.0, key.1, key.2
                    ));
                }
                Some(mine) => {
                    if values.len() > mine.len() {
                        *mine = values;
                    }
                }
                None => {
                    self.rows.insert(key, values);
                }
            }
        }
        Ok((self, 0))
    }

    /// The metric called `name`.
    pub fn metric(&self, name: &str) -> Option<&MetricInfo> {
        self.metrics.iter().find(|m| m.name == name)
    }

    /// The replications with a row of `policy` on `metric`.
    pub fn replications(&self, policy: &str, metric: &str) -> Vec<usize> {
        self.rows
            .keys()
            .filter(|(p, _, m)| p == policy && m == metric)
            .map(|(_, r, _)| *r)
            .collect()
    }

    /// The first replication below `upto` that one of `policies` has not completed here
    /// (`upto` when all have): a run counts as completed when it has a row on every metric
    /// the policy has rows on, with the grid where the file keeps the metric's grid. The
    /// replications below it need not run again: their values are already pooled.
    pub fn first_missing(&self, policies: &[String], upto: usize) -> usize {
        // Per policy, the metrics it has rows on, found once rather than per replication.
        let kept: Vec<(&String, BTreeSet<&String>)> = policies
            .iter()
            .map(|p| {
                let metrics = (self.rows.keys())
                    .filter(|(q, _, _)| q == p)
                    .map(|(_, _, m)| m)
                    .collect();
                (p, metrics)
            })
            .collect();
        let done = |policy: &str, metrics: &BTreeSet<&String>, rep: usize| {
            !metrics.is_empty()
                && metrics.iter().all(|m| {
                    (self.row(policy, rep, m))
                        .is_some_and(|v| self.final_only.contains(*m) || v.len() == VALUES)
                })
        };
        (0..upto)
            .find(|&rep| kept.iter().any(|(p, ms)| !done(p, ms, rep)))
            .unwrap_or(upto)
    }

    /// The grid (v0 … v40) of `policy`'s run `rep` on `metric`, where the file keeps it.
    pub fn grid(&self, policy: &str, rep: usize, metric: &str) -> Option<&[Option<f64>]> {
        self.row(policy, rep, metric)
            .filter(|v| v.len() == VALUES)
            .map(|v| &v[1..])
    }

    /// The budget on the report's axis, as the `# x:` line gives it (`cumulative_cost,
    /// budget 50`).
    pub fn budget(&self) -> Option<f64> {
        self.axis.rsplit_once("budget ")?.1.trim().parse().ok()
    }

    /// `policy`'s value in run `rep` on `metric`, at the budget (`share` None) or at grid index
    /// `share`, oriented so that lower is better.
    pub fn oriented(
        &self,
        policy: &str,
        rep: usize,
        metric: &str,
        share: Option<usize>,
    ) -> Option<f64> {
        let row = self.row(policy, rep, metric)?;
        let v = match share {
            None => row.first().copied()??,
            Some(k) => row.get(1 + k).copied()??,
        };
        let lower = self.metric(metric).is_none_or(|m| m.lower_is_better);
        Some(if lower { v } else { -v })
    }

    fn row(&self, policy: &str, rep: usize, metric: &str) -> Option<&Vec<Option<f64>>> {
        self.rows
            .get(&(policy.to_string(), rep, metric.to_string()))
    }

    /// Per replication r = 0, 1, … while both policies have a value, the advantage of
    /// `policy` over `other` on `metric` read `on` (at grid index `early` for early):
    /// positive favours `policy`.
    pub fn advantages(
        &self,
        policy: &str,
        other: &str,
        metric: &str,
        on: On,
        early: Option<usize>,
    ) -> Vec<f64> {
        let lower = self.metric(metric).is_none_or(|m| m.lower_is_better);
        let mut out = Vec::new();
        for rep in 0.. {
            let (Some(a), Some(b)) = (self.row(policy, rep, metric), self.row(other, rep, metric))
            else {
                break;
            };
            let Some((mine, theirs)) = reading(a, b, on, early) else {
                break;
            };
            out.push(if lower { theirs - mine } else { mine - theirs });
        }
        out
    }
}

/// Two rows' readings: at the budget, at grid index `early`, or the curves' means over the
/// grid points where both have a value (trapezoids over the budget's shares).
fn reading(
    a: &[Option<f64>],
    b: &[Option<f64>],
    on: On,
    early: Option<usize>,
) -> Option<(f64, f64)> {
    match on {
        On::Final => Some((a[0]?, b[0]?)),
        On::Early => {
            let k = 1 + early?;
            Some((a.get(k).copied()??, b.get(k).copied()??))
        }
        On::Area => Some((area(&a[1..], b)?, area(&b[1..], a)?)),
    }
}

/// The trapezoid mean of `curve` (v0 … v40) over the grid points from the first where both
/// it and `with` (a whole row: final, v0 …) have values, so paired areas span one range.
fn area(curve: &[Option<f64>], with: &[Option<f64>]) -> Option<f64> {
    let start = (0..curve.len())
        .find(|&k| curve[k].is_some() && with.get(k + 1).is_some_and(Option::is_some))?;
    let points: Vec<f64> = curve[start..]
        .iter()
        .map(|v| v.unwrap_or(f64::NAN))
        .collect();
    if points.len() < 2 {
        return points.first().copied();
    }
    let sum: f64 = points.windows(2).map(|w| (w[0] + w[1]) / 2.0).sum();
    let mean = sum / (points.len() - 1) as f64;
    (!mean.is_nan()).then_some(mean)
}

/// The same values wherever both rows keep one (the value at the budget; the grid where
/// both keep it), empty cells included.
fn agree(a: &[Option<f64>], b: &[Option<f64>]) -> bool {
    let n = a.len().min(b.len());
    (a.len() == b.len() || n == 1) && a[..n] == b[..n]
}

/// A row whose grid cells are all empty (the grid not kept for it) as the value at the
/// budget alone, so a row reads back as it was written.
fn normalized(mut values: Vec<Option<f64>>) -> Vec<Option<f64>> {
    if values[1..].iter().all(Option::is_none) {
        values.truncate(1);
    }
    values
}

/// The suffix of a metric's header line whose grid the file does not keep.
const FINAL_ONLY: &str = "; final only";

/// The number of value cells per row a header line announces: `final` alone, or `final`
/// and the grid's v0 … v40.
fn header_width(line: &str) -> Result<usize, String> {
    match split_csv(line).len() {
        4 => Ok(1),
        n if n == 3 + VALUES => Ok(VALUES),
        n => Err(format!(
            "a header of {n} cells: expected `policy,replication,metric,final`, followed by \
             v0 … v{GRID_INTERVALS} where the grid is kept"
        )),
    }
}

/// One data row of a file with `width` value cells a row: its key and values.
fn parse_row(line: &str, width: usize) -> Result<(Key, Vec<Option<f64>>), String> {
    let cells = split_csv(line);
    if cells.len() != 3 + width {
        let grid = if width > 1 {
            format!(", v0 … v{GRID_INTERVALS}")
        } else {
            String::new()
        };
        return Err(format!(
            "{} cells, expected {} (policy, replication, metric, final{grid})",
            cells.len(),
            3 + width
        ));
    }
    let rep: usize = cells[1]
        .parse()
        .map_err(|_| format!("replication {:?} is not a whole number", cells[1]))?;
    let values = cells[3..]
        .iter()
        .map(|c| {
            if c.is_empty() {
                Ok(None)
            } else {
                c.parse::<f64>()
                    .map(Some)
                    .map_err(|_| format!("{c:?} is not a number"))
            }
        })
        .collect::<Result<_, _>>()?;
    Ok(((cells[0].clone(), rep, cells[2].clone()), values))
}

/// A CSV field, quoted where it must be.
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The cells of one CSV line (quoted fields with doubled quotes).
fn split_csv(line: &str) -> Vec<String> {
    let mut cells = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                cells.last_mut().expect("one cell").push('"');
            }
            ('"', _) => quoted = !quoted,
            (',', false) => cells.push(String::new()),
            _ => cells.last_mut().expect("one cell").push(c),
        }
    }
    cells
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(fingerprint: &str) -> RunValues {
        let mut v = RunValues::new("specs/x.yaml", fingerprint);
        v.axis = "cumulative_cost, budget 10".into();
        v.metrics.push(MetricInfo {
            name: "default".into(),
            label: "log10 simple regret".into(),
            lower_is_better: true,
        });
        v
    }

    /// A row whose curve falls linearly from `start` to `end` (v0 empty, as before a run's
    /// first value).
    fn row(start: f64, end: f64) -> Vec<Option<f64>> {
        let n = GRID_INTERVALS as f64;
        let mut r = vec![Some(rounded(end)), None];
        r.extend((1..=GRID_INTERVALS).map(|k| Some(rounded(start + (end - start) * k as f64 / n))));
        r
    }

    fn key(p: &str, r: usize) -> Key {
        (p.into(), r, "default".into())
    }

    #[test]
    fn the_csv_round_trips_to_the_digit_with_quoted_names() {
        let mut v = values("fp1");
        v.rows
            .insert(key("PBGI (true prior), λ", 0), row(1.0 / 3.0, -2.123456789));
        v.rows.insert(key("EI", 1), row(0.5, 1e-300));
        let text = v.to_csv();
        assert!(
            text.contains("\"PBGI (true prior), λ\",0,default,-2.12346e0,,"),
            "{text}"
        );
        let back = RunValues::parse(&text, "x.runs.csv").unwrap();
        assert_eq!(back, v);
        // Written again, the file is byte for byte the same.
        assert_eq!(back.to_csv(), text);
    }

    #[test]
    fn rows_of_the_same_spec_pool_and_other_versions_are_dropped() {
        let mut older = values("fp1");
        older.rows.insert(key("A", 0), row(1.0, 0.5));
        older.rows.insert(key("A", 1), row(1.0, 0.25));
        let mut newer = values("fp1");
        newer.rows.insert(key("A", 1), row(1.0, 0.25));
        newer.rows.insert(key("A", 2), row(1.0, 0.125));
        let (pooled, dropped) = newer
            .clone()
            .pool(older.clone(), "old.csv", "results")
            .unwrap();
        assert_eq!(dropped, 0);
        assert_eq!(pooled.replications("A", "default"), [0, 1, 2]);
        let mut earlier = values("fp0");
        earlier.rows = older.rows;
        let (alone, dropped) = newer.pool(earlier, "old.csv", "results").unwrap();
        assert_eq!(dropped, 2);
        assert_eq!(alone.replications("A", "default"), [1, 2]);
    }

    #[test]
    fn a_run_with_two_different_values_is_an_error_naming_both_sources() {
        let mut older = values("fp1");
        older.rows.insert(key("A", 0), row(1.0, 0.5));
        let mut newer = values("fp1");
        newer.rows.insert(key("A", 0), row(1.0, 0.500001));
        let e = newer
            .pool(older, "docs/x.runs.csv", "results/x")
            .unwrap_err();
        assert!(
            e.contains("docs/x.runs.csv and results/x disagree on A replication 0"),
            "{e}"
        );
    }

    #[test]
    fn advantages_pair_replications_and_read_final_early_and_area() {
        let mut v = values("fp1");
        // A ends at 0, B at 1; both fall linearly from 2 (lower is better).
        for r in 0..3 {
            v.rows.insert(key("A", r), row(2.0, 0.0));
            v.rows.insert(key("B", r), row(2.0, 1.0));
        }
        v.rows.insert(key("A", 3), row(2.0, 0.0)); // no B for 3: not paired
        let adv = v.advantages("A", "B", "default", On::Final, None);
        assert_eq!(adv, [1.0; 3]);
        // At share 20/40 A is at 1.0, B at 1.5.
        assert_eq!(
            v.advantages("A", "B", "default", On::Early, Some(20)),
            [0.5; 3]
        );
        // The trapezoid mean of a linear curve over v1 … v40 is the mean of its ends:
        // A (1.95 + 0)/2, B (1.975 + 1)/2, a difference of 0.5125.
        let area = v.advantages("A", "B", "default", On::Area, None);
        for a in area {
            assert!((a - 0.5125).abs() < 1e-12, "{a}");
        }
        // Higher is better flips the sign.
        v.metrics[0].lower_is_better = false;
        assert_eq!(
            v.advantages("A", "B", "default", On::Final, None),
            [-1.0; 3]
        );
    }

    #[test]
    fn a_metric_read_only_at_the_budget_keeps_its_final_values_alone() {
        let mut v = values("fp1");
        v.metrics.push(MetricInfo {
            name: "time:cpu_time".into(),
            label: "mean CPU time per decision".into(),
            lower_is_better: true,
        });
        v.rows.insert(key("A", 0), row(2.0, 0.5));
        v.rows
            .insert(("A".into(), 0, "time:cpu_time".into()), row(1.0, 1.0));
        // Only the default metric is read on the curve: the time keeps its final value.
        assert!(v.shape(&["default".into()]).is_empty());
        assert_eq!(v.final_only, ["time:cpu_time"]);
        let text = v.to_csv();
        assert!(
            text.contains("# metric: time:cpu_time = mean CPU time per decision; lower is better; final only\n"),
            "{text}"
        );
        let padded = format!("A,0,time:cpu_time,1.00000e0{}\n", ",".repeat(VALUES - 1));
        assert!(text.contains(&padded), "{text}");
        let back = RunValues::parse(&text, "x.runs.csv").unwrap();
        assert_eq!(back, v);
        assert_eq!(back.to_csv(), text);
        // Nothing read on the curve: no grid columns at all, four cells a row.
        v.shape(&[]);
        let text = v.to_csv();
        assert!(text.contains("policy,replication,metric,final\n"), "{text}");
        assert!(text.contains("\nA,0,default,5.00000e-1\n"), "{text}");
        let back = RunValues::parse(&text, "x.runs.csv").unwrap();
        assert_eq!(back, v);
        assert_eq!(back.to_csv(), text);
        assert_eq!(back.advantages("A", "A", "default", On::Final, None), [0.0]);
    }

    #[test]
    fn a_file_of_every_grid_still_reads_and_shapes_to_what_claims_read() {
        // A file as written before the grid was kept only where read: every metric full.
        let mut full = values("fp1");
        full.rows.insert(key("A", 0), row(2.0, 0.5));
        full.rows.insert(key("B", 0), row(2.0, 1.0));
        let text = full.to_csv();
        assert!(!text.contains("final only"), "{text}");
        let mut back = RunValues::parse(&text, "old.runs.csv").unwrap();
        assert_eq!(back, full);
        assert_eq!(
            back.advantages("A", "B", "default", On::Area, None).len(),
            1
        );
        back.shape(&[]);
        assert_eq!(back.rows[&key("A", 0)], [Some(0.5)]);
        assert_eq!(back.advantages("A", "B", "default", On::Final, None), [0.5]);
        assert!(
            back.advantages("A", "B", "default", On::Area, None)
                .is_empty()
        );
    }

    #[test]
    fn pooling_a_final_only_file_when_a_claim_now_reads_the_curve_names_the_runs_lacking_it() {
        // The committed file kept only final values (no claim read the curve then).
        let mut older = values("fp1");
        for r in 0..3 {
            older.rows.insert(key("A", r), row(2.0, 0.5));
            older.rows.insert(key("B", r), row(2.0, 1.0));
        }
        older.shape(&[]);
        let older = RunValues::parse(&older.to_csv(), "old.runs.csv").unwrap();
        // New results hold replication 0 with its grid, agreeing at the budget.
        let mut newer = values("fp1");
        newer.rows.insert(key("A", 0), row(2.0, 0.5));
        newer.rows.insert(key("B", 0), row(2.0, 1.0));
        let (mut pooled, _) = newer.pool(older, "old.runs.csv", "results").unwrap();
        let lacking = pooled.shape(&["default".into()]);
        // Replications 1 and 2 of A and B have no grid: 4 rows, named, never mixed in.
        assert_eq!(lacking, [("default".to_string(), 4)]);
        assert_eq!(
            pooled.advantages("A", "B", "default", On::Final, None),
            [0.5; 3]
        );
        let area = pooled.advantages("A", "B", "default", On::Area, None);
        assert_eq!(
            area.len(),
            1,
            "the runs without a grid count as not run: {area:?}"
        );
        assert_eq!(
            pooled
                .advantages("A", "B", "default", On::Early, Some(20))
                .len(),
            1
        );
        // Written and read back, the rows without a grid stay without one.
        let text = pooled.to_csv();
        let mut back = RunValues::parse(&text, "x.runs.csv").unwrap();
        assert_eq!(back.shape(&["default".into()]), lacking);
        // A final value that disagrees is still refused, whatever the columns kept.
        let mut wrong = values("fp1");
        wrong.rows.insert(key("A", 1), row(2.0, 0.75));
        let e = wrong.pool(back, "x.runs.csv", "results").unwrap_err();
        assert!(e.contains("disagree on A replication 1"), "{e}");
    }

    #[test]
    fn a_broken_row_is_an_error_with_its_line() {
        let text = values("fp").to_csv() + "A,x,default\n";
        let e = RunValues::parse(&text, "x.runs.csv").unwrap_err();
        assert!(e.starts_with("x.runs.csv:7: "), "{e}");
    }
}
