//! # cabo-gallery
//!
//! The reproduction gallery: each paper's claims, decided on cabo's results by paired
//! statistics, written as one Markdown page per paper under `docs/reproductions/` with the
//! per-run values, figures and summaries behind them.
//!
//! `docs/reproductions/gallery.yaml` is an index of per-paper files ([`schema`]): each lists
//! the specs, a settings table (the paper, the authors' code, cabo), the paper's claims with
//! where they are in the paper and how each is settled, and cabo's own variants "beyond the
//! paper". [`write_pages`] reads the specs' results, pools their per-run values with those
//! the page already publishes ([`values`]; batches from several machines add up), decides
//! every claim ([`claims`]) and writes the page, the per-run CSVs, each spec's `report.svg`
//! and `summary.csv`, and the spec fingerprints the page was made from. [`run_plan`] says
//! which runs the undecided claims still need ([`plan`]), which `reproduce` runs in batches
//! and `reproduce --list` hands to `slurm --plan`.
//!
//! Rewriting a page from a results directory that lacks some of its specs' runs keeps what
//! the page already publishes for them (the per-run values pool; figures and times are kept,
//! see [`WrittenPage::kept`]). A page whose fingerprints no longer match `specs/` is stale:
//! [`stale_pages`] finds them (a test fails on one) unless the page carries the marker
//! [`mark_stale`] writes.

#![forbid(unsafe_code)]

pub mod claims;
mod committed;
pub mod plan;
pub mod schema;
pub mod values;

pub use plan::{PlanLine, parse_plan};
pub use schema::{
    Check, Claim, Gallery, GallerySpec, On, Paper, Remaining, RuntimeRow, Runtimes, Setting, load,
};
pub use values::RunValues;

use cabo_engine::store;
use cabo_report::{self as report, Report};
use cabo_spec::LoadedSpec;
use claims::{DecisionTime, Outcome};
use committed::{CommittedPage, KeptSpec, Marker};
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// What one spec's results say, as a page needs it.
pub(crate) struct SpecResult {
    spec: GallerySpec,
    name: String,
    fingerprint: String,
    dir: PathBuf,
    report: Option<Report>,
    study: Option<cabo_core::StudyOutput>,
    runs_complete: usize,
    runs_total: usize,
    /// The spec file's own replications (`None` for a study).
    spec_replications: Option<usize>,
    /// The name its replications' seeds derive from (`None` for a study): specs with the
    /// same one pair by replication.
    seed_name: Option<String>,
    /// Per policy, its counted runs' decisions.
    decision_seconds: Vec<(String, DecisionTime)>,
    /// Per policy, its counted runs' CPU seconds and their number.
    policy_cpu: Vec<(String, f64, usize)>,
    /// CPU time of the runs' own threads (or a study's computing time), in seconds.
    cpu_seconds: f64,
    /// Wall time of the runs' decisions and evaluations (a study's computing time).
    wall_seconds: f64,
    /// What the committed page publishes for the spec, kept because it counts more runs.
    kept: Option<KeptSpec>,
    /// The per-run values of the metrics the claims read: the results' pooled with the
    /// committed CSV's (`None`: neither has any).
    values: Option<RunValues>,
    /// Rows of the committed CSV dropped because they belong to another version of the spec.
    dropped: usize,
    /// Whether the pooled values differ from the committed CSV.
    values_changed: bool,
    /// Per metric read on the curve, the runs whose committed row lacks the grid.
    lacking: values::LackingGrid,
}

/// The metrics the claims of `paper` read of `spec`'s per-run values ([`Claim::reads`]),
/// each once, by the names the per-run values give them, with whether some claim reads it
/// on the curve.
fn metrics_read(paper: &Paper, spec: &str) -> Vec<(String, bool)> {
    let mut read: Vec<(String, bool)> = Vec::new();
    let reads = paper.claims.iter().chain(&paper.beyond_the_paper);
    for r in reads.flat_map(Claim::reads).filter(|r| r.spec == spec) {
        let curve = r.reading() == schema::Reading::Curve;
        match read.iter_mut().find(|(m, _)| *m == r.metric) {
            Some((_, c)) => *c |= curve,
            None => read.push((r.metric.to_string(), curve)),
        }
    }
    read
}

/// The per-run values CSV of a spec named `name` beside the page, under `assets`.
fn values_path(assets: &Path, name: &str) -> PathBuf {
    assets.join(format!("{name}.runs.csv"))
}

/// A study spec's result: its output once complete, and the times it took.
fn study_result(
    spec: &GallerySpec,
    s: &cabo_runner::study::LoadedStudy,
    fingerprint: String,
    out: &Path,
) -> SpecResult {
    let dir = cabo_runner::study::result_dir(s, out);
    let complete = cabo_runner::study::is_complete(s, out);
    let (cpu_seconds, wall_seconds) = study_seconds(&dir);
    SpecResult {
        spec: spec.clone(),
        name: s.file.name.clone(),
        fingerprint,
        study: cabo_runner::study::read_output(&dir)
            .ok()
            .filter(|_| complete),
        dir,
        report: None,
        runs_complete: usize::from(complete),
        runs_total: 1,
        spec_replications: None,
        seed_name: None,
        decision_seconds: Vec::new(),
        policy_cpu: Vec::new(),
        cpu_seconds,
        wall_seconds,
        kept: None,
        values: None,
        dropped: 0,
        values_changed: false,
        lacking: Vec::new(),
    }
}

/// The times a spec's counted runs took, from their `rep-<r>.times.jsonl`.
#[derive(Default)]
struct RunTimes {
    /// CPU seconds of every run.
    cpu_seconds: f64,
    /// Wall seconds of every run.
    wall_seconds: f64,
    /// Per policy: its decisions and the seconds they took.
    decisions: Vec<(String, DecisionTime)>,
    /// Per policy: CPU seconds and runs.
    policy_cpu: Vec<(String, f64, usize)>,
}

impl RunTimes {
    /// Sums the times of the runs `runs` counts, in its order, under `dir`.
    fn of(dir: &Path, runs: &report::Runs) -> RunTimes {
        let mut t = RunTimes::default();
        for (policy, rep) in runs.counted() {
            let times = store::RunFiles::new(dir, policy, rep).times;
            let (cpu, wall) = cabo_runner::status::run_times(&times);
            t.cpu_seconds += cpu;
            t.wall_seconds += wall;
            match t.policy_cpu.iter_mut().find(|(p, _, _)| p == policy) {
                Some((_, total, n)) => (*total, *n) = (*total + cpu, *n + 1),
                None => t.policy_cpu.push((policy.to_string(), cpu, 1)),
            }
            let (decisions, seconds) = cabo_runner::status::decision_times(&times);
            match t.decisions.iter_mut().find(|(p, _)| p == policy) {
                Some((_, d)) => d.add(decisions, seconds),
                None => t
                    .decisions
                    .push((policy.to_string(), DecisionTime { decisions, seconds })),
            }
        }
        t
    }
}

/// Loads a gallery spec (comparison or study) as `run` would, reads its results under `out`
/// and pools their per-run values with the committed CSV under `assets`.
fn spec_result(
    root: &Path,
    paper: &Paper,
    spec: &GallerySpec,
    out: &Path,
    assets: &Path,
    reports: Reports,
) -> Result<SpecResult, String> {
    let loaded = load_spec(&root.join(&spec.path))?;
    let fingerprint = loaded.fingerprint()?;
    let s = match loaded {
        Loaded::Study(s) => return Ok(study_result(spec, &s, fingerprint, out)),
        Loaded::Comparison(s) => s,
    };
    let dir = store::spec_dir(out, &s.spec.name, false);
    let value = serde_json::to_value(&s.spec).map_err(|e| e.to_string())?;
    let runs = report::load(&dir, &value, s.path.parent()).ok();
    let report = runs.as_ref().map(|r| r.report(None)).transpose()?;
    let mut fresh = RunValues::new(&spec.path, &fingerprint);
    let mut times = RunTimes::default();
    if let (Some(runs), Some(report)) = (&runs, &report) {
        // The figure on the page must be the one of these numbers, so the report is
        // written anew (for an incomplete spec too: it lists what is missing).
        if reports == Reports::Write {
            report::write(&dir, runs, report)?;
        }
        add_values(&mut fresh, paper, spec, runs, report)?;
        times = RunTimes::of(&dir, runs);
    }
    let curve: Vec<String> = metrics_read(paper, &spec.path)
        .into_iter()
        .filter_map(|(m, curve)| curve.then_some(m))
        .collect();
    let (values, dropped, values_changed, lacking) =
        pool_values(fresh, &values_path(assets, &s.spec.name), &dir, &curve)?;
    Ok(SpecResult {
        spec: spec.clone(),
        name: s.spec.name.clone(),
        fingerprint,
        decision_seconds: times.decisions,
        policy_cpu: times.policy_cpu,
        cpu_seconds: times.cpu_seconds,
        wall_seconds: times.wall_seconds,
        dir,
        report,
        study: None,
        runs_complete: runs.as_ref().map_or(0, report::Runs::len),
        runs_total: s.spec.policies.len() * s.spec.replications,
        spec_replications: Some(s.spec.replications),
        seed_name: Some(s.spec.seed_name().to_string()),
        kept: None,
        values,
        dropped,
        values_changed,
        lacking,
    })
}

/// Adds the per-run values of every metric the paired claims on `spec` read.
fn add_values(
    fresh: &mut RunValues,
    paper: &Paper,
    spec: &GallerySpec,
    runs: &report::Runs,
    report: &Report,
) -> Result<(), String> {
    for (name, _) in metrics_read(paper, &spec.path) {
        if name == schema::DEFAULT_METRIC {
            fresh.add_report(&name, runs, report);
            continue;
        }
        if let Some(time) = schema::time_metric(&name) {
            let time = time.map_err(|e| format!("{}: {e}", spec.path))?;
            fresh.add_mean_times(&name, runs, time);
            continue;
        }
        let metric = cabo_spec::Metric::parse(&name)
            .ok_or_else(|| format!("{}: unknown metric {name:?}", spec.path))?;
        let other = runs
            .report(Some(&metric))
            .map_err(|e| format!("{}: metric {name}: {e}", spec.path))?;
        fresh.add_report(&name, runs, &other);
    }
    Ok(())
}

/// The results' values pooled with the committed CSV at `csv` (results in `dir`) and kept
/// to what the claims read (the grid for the metrics in `curve`): the values (`None` when
/// neither has a row), the committed rows dropped as another version's, whether the pooled
/// values differ from the committed file, and the runs that lack a grid a claim now reads.
fn pool_values(
    fresh: RunValues,
    csv: &Path,
    dir: &Path,
    curve: &[String],
) -> Result<(Option<RunValues>, usize, bool, values::LackingGrid), String> {
    let committed = match std::fs::read_to_string(csv) {
        Ok(text) => Some(RunValues::parse(&text, &csv.display().to_string())?),
        Err(_) => None,
    };
    let (mut pooled, dropped) = match committed.clone() {
        Some(c) => fresh.pool(c, &csv.display().to_string(), &dir.display().to_string())?,
        None => (fresh, 0),
    };
    let lacking = pooled.shape(curve);
    // Trimming the committed file to what the claims read is no result of its own: it
    // happens when the page is next written for one.
    let committed = committed.map(|mut c| {
        c.shape(curve);
        c
    });
    let changed = committed.as_ref() != Some(&pooled) && !pooled.rows.is_empty();
    Ok((
        (!pooled.rows.is_empty()).then_some(pooled),
        dropped,
        changed,
        lacking,
    ))
}

impl SpecResult {
    /// CPU and wall seconds counted for the spec: the page's own where its rows are kept.
    fn seconds(&self) -> (f64, f64) {
        match &self.kept {
            Some(k) => (k.cpu_seconds, k.wall_seconds),
            None => (self.cpu_seconds, self.wall_seconds),
        }
    }

    /// CPU-hours of runs still to make, `remaining` per policy (empty: `runs` of a study or
    /// of policies not told apart): a policy at its own counted runs' mean, else at the
    /// spec's mean per run ([`SpecResult::cpu_per_run`]); with the policies taken at the
    /// spec's mean although the spec has counted runs of others.
    fn remaining_hours(
        &self,
        remaining: &[(String, usize)],
        runs: usize,
    ) -> Option<(f64, Vec<String>)> {
        let spec_mean = self.cpu_per_run()?;
        if remaining.is_empty() {
            return Some((spec_mean * runs as f64 / 3600.0, Vec::new()));
        }
        Some(hours_at_policy_means(
            &self.policy_cpu,
            spec_mean,
            remaining,
        ))
    }

    /// Mean CPU seconds per counted run, from the results (or the page's kept counts).
    fn cpu_per_run(&self) -> Option<f64> {
        if self.runs_complete > 0 {
            return Some(self.cpu_seconds / self.runs_complete as f64);
        }
        match &self.kept {
            Some(k) if k.runs > 0 => Some(k.cpu_seconds / k.runs as f64),
            _ => self.spec.cpu_seconds_per_run,
        }
    }
}

/// CPU-hours of `remaining` runs per policy, each policy at its mean over `measured`
/// (policy, CPU seconds, runs), a policy without a measured run at `spec_mean` seconds; and
/// the policies so taken while others are measured.
fn hours_at_policy_means(
    measured: &[(String, f64, usize)],
    spec_mean: f64,
    remaining: &[(String, usize)],
) -> (f64, Vec<String>) {
    let mut unmeasured = Vec::new();
    let mut seconds = 0.0;
    for (policy, n) in remaining {
        let own = measured
            .iter()
            .find(|(p, _, k)| p == policy && *k > 0)
            .map(|(_, total, k)| total / *k as f64);
        if own.is_none() && *n > 0 && !measured.is_empty() {
            unmeasured.push(policy.clone());
        }
        seconds += own.unwrap_or(spec_mean) * *n as f64;
    }
    (seconds / 3600.0, unmeasured)
}

/// A study's CPU and wall seconds: as the runner measured them ([`cabo_runner::study::STUDY_CPU`],
/// [`cabo_runner::study::STUDY_WALL`]), or for results written before it did, the sum of the
/// seconds the plugin measured (its wall times, as both).
fn study_seconds(dir: &Path) -> (f64, f64) {
    let Some(m) = std::fs::read_to_string(dir.join("study.times.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<std::collections::BTreeMap<String, f64>>(&t).ok())
    else {
        return (0.0, 0.0);
    };
    if let Some(&wall) = m.get(cabo_runner::study::STUDY_WALL) {
        let cpu = m
            .get(cabo_runner::study::STUDY_CPU)
            .copied()
            .unwrap_or(wall);
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

/// A gallery spec file, loaded as `run` would load it.
enum Loaded {
    /// A study file.
    Study(cabo_runner::study::LoadedStudy),
    /// A comparison spec.
    Comparison(Box<LoadedSpec>),
}

/// Reads and parses the spec file at `path` (not its smoke variant).
fn load_spec(path: &Path) -> Result<Loaded, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    Ok(if cabo_runner::study::is_study(&text) {
        Loaded::Study(
            cabo_runner::study::LoadedStudy::parse(path, &text, false)
                .map_err(|e| e.to_string())?,
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
        } else if let Some(report) = &r.report {
            let _ = writeln!(
                out,
                "![{}]({rel}/{}.svg)\n\nEvery policy at every grid point: [{}.csv]({rel}/{}.csv)\n",
                r.name, r.name, r.name, r.name
            );
            if report.y == report::Y::SimpleRegret {
                let line = report::markdown::reference_line(report);
                if !line.is_empty() {
                    let _ = writeln!(out, "{line}");
                }
            }
        } else {
            let _ = writeln!(out, "No results yet.\n");
        }
    }
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

fn sig(v: f64) -> String {
    report::markdown::sig(v)
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
    /// The specs whose figures and times were kept as the page had them: the page was made
    /// from the same spec and counted more complete runs than the results directory holds.
    pub kept: Vec<String>,
    /// Per spec, the committed per-run rows dropped because they belong to another version
    /// of the spec.
    pub dropped: Vec<(String, usize)>,
    /// Whether the page was written: a page the results add nothing to is left as it is.
    pub changed: bool,
}

/// Whether reading a spec's results writes its report anew under the results directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reports {
    /// Writing pages: each figure on a page is the report of the numbers it shows.
    Write,
    /// Planning (`reproduce --list`): the results directory is only read.
    Leave,
}

/// Every spec's results for one paper's page under `pages_dir`, pooled with the per-run
/// values the page publishes, and the committed page.
fn paper_results(
    root: &Path,
    paper: &Paper,
    out: &Path,
    pages_dir: &Path,
    reports: Reports,
) -> Result<(Vec<SpecResult>, CommittedPage), String> {
    let path = pages_dir.join(&paper.page);
    let committed = std::fs::read_to_string(&path)
        .map(|t| CommittedPage::parse(&t))
        .unwrap_or_default();
    let assets = assets_dir(paper, pages_dir);
    let mut results: Vec<SpecResult> = paper
        .specs
        .iter()
        .map(|s| spec_result(root, paper, s, out, &assets, reports))
        .collect::<Result<_, _>>()?;
    for r in &mut results {
        r.kept = committed.keep(&r.spec.path, &r.fingerprint, r.runs_complete);
    }
    Ok((results, committed))
}

/// The folder beside a page: its figures, summaries and per-run values.
fn assets_dir(paper: &Paper, pages_dir: &Path) -> PathBuf {
    pages_dir.join(paper.page.trim_end_matches(".md"))
}

/// Writes the pages of `papers` under `pages_dir` from the results under `out` (`root` is the
/// repository root, where spec paths start); returns the pages written.
///
/// Each spec's per-run values are pooled with the CSV beside the page, so claims are decided
/// on every run either holds. A spec with fewer complete runs under `out` than its page
/// already counts, and the same fingerprint, keeps its figure and times as the page has
/// them, so no command takes a finished result off a page. A page none of whose specs has a
/// run to add is left byte for byte as it is (not restamped with the current commit).
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
        let (results, _) = paper_results(root, paper, out, pages_dir, Reports::Write)?;
        let dropped: Vec<(String, usize)> = results
            .iter()
            .filter(|r| r.dropped > 0)
            .map(|r| (r.spec.path.clone(), r.dropped))
            .collect();
        let assets = assets_dir(paper, pages_dir);
        let current = records_current_specs(&path, &results)
            && records_claims(&path, &claims_fingerprint(paper));
        if path.is_file() && !adds_results(&results) && current {
            written.push(WrittenPage {
                path,
                kept: Vec::new(),
                dropped,
                changed: false,
            });
            continue;
        }
        std::fs::create_dir_all(&assets)
            .map_err(|e| format!("{}: cannot create: {e}", assets.display()))?;
        copy_assets(&results, &assets)?;
        write_values(&results, &assets)?;
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
            dropped,
            changed: true,
        });
    }
    Ok(written)
}

/// Writes each spec's pooled per-run values beside the page.
fn write_values(results: &[SpecResult], assets: &Path) -> Result<(), String> {
    for r in results {
        if let Some(v) = &r.values {
            let path = values_path(assets, &r.name);
            store::write_atomic(&path, v.to_csv().as_bytes())
                .map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
        }
    }
    Ok(())
}

/// The marker line of the claim file a page was made from.
const CLAIMS_LINE: &str = "<!-- gallery-claims ";

/// The version of the pages' wording: raised with every change to the text [`render`]
/// writes around the numbers, so that every page is rewritten in it, as a changed claim file
/// rewrites its page, and not only the pages that have new results.
const PAGE_WORDING: u32 = 3;

/// A fingerprint of everything a paper's claim file says (claims, settings, specs, runtimes)
/// and of the pages' wording ([`PAGE_WORDING`]).
fn claims_fingerprint(paper: &Paper) -> String {
    fingerprint_in_wording(paper, PAGE_WORDING)
}

fn fingerprint_in_wording(paper: &Paper, wording: u32) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(format!("wording {wording}\n{paper:?}").as_bytes());
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether the page at `path` was made from a claim file with this fingerprint: a page whose
/// claims, settings or specs list changed is rewritten even without new results.
fn records_claims(path: &Path, fingerprint: &str) -> bool {
    std::fs::read_to_string(path).is_ok_and(|text| {
        text.lines()
            .any(|l| l.strip_prefix(CLAIMS_LINE) == Some(&format!("{fingerprint} -->")))
    })
}

/// Whether the page at `path` records exactly the paper's specs, each with its current
/// fingerprint: a page made from other specs (or another numerics generation, or before a
/// spec joined the paper) is rewritten even without results, since its numbers are not these
/// specs'.
fn records_current_specs(path: &Path, results: &[SpecResult]) -> bool {
    let Ok(text) = std::fs::read_to_string(path) else {
        return false;
    };
    let mut recorded: Vec<(&str, &str)> = text
        .lines()
        .filter_map(|l| l.strip_prefix(SPEC_LINE))
        .filter_map(|rest| {
            let mut parts = rest.trim_end_matches("-->").split_whitespace();
            Some((parts.next()?, parts.next()?))
        })
        .collect();
    let mut current: Vec<(&str, &str)> = results
        .iter()
        .map(|r| (r.spec.path.as_str(), r.fingerprint.as_str()))
        .collect();
    recorded.sort_unstable();
    current.sort_unstable();
    recorded == current
}

/// Whether any spec has something of its own to put on the page: complete runs the page
/// does not keep as it had them (or a complete study), or per-run values the committed CSV
/// lacks.
fn adds_results(results: &[SpecResult]) -> bool {
    results
        .iter()
        .any(|r| (r.kept.is_none() && r.runs_complete > 0) || r.values_changed)
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
    let claims = outcomes(&paper.claims, results)?;
    let beyond = outcomes(&paper.beyond_the_paper, results)?;
    let mut out = String::new();
    let _ = writeln!(out, "# {} — {}\n", paper.id, paper.title);
    let _ = writeln!(
        out,
        "<!-- Written by `{command}`; edit docs/reproductions/{}, not this page. -->\n",
        if paper.file.is_empty() {
            "gallery.yaml"
        } else {
            &paper.file
        }
    );
    let _ = writeln!(
        out,
        "The paper is `../shared/seeds/{}`. Each claim compares its policy with each \
         comparator by paired differences per replication (replication r of every policy \
         shares its problem instance and initial design); positive advantages favour the \
         claim. **holds**: every interval lies on the claimed side; **does not hold**: one \
         lies on the other side; *inconclusive at n*: neither yet (the sequential rule allows \
         more looks up to the paper's replications, \"final\" once there are none). Per-run \
         values behind every number: `{rel}/<spec>.runs.csv`.\n",
        paper.seed
    );
    let refs: Vec<&Outcome> = claims.iter().collect();
    let _ = writeln!(out, "{}\n", claims::verdict_line(&refs));
    let _ = writeln!(out, "## Claims\n");
    claims_table(&mut out, &paper.claims, &claims, results);
    if !paper.beyond_the_paper.is_empty() {
        let _ = writeln!(
            out,
            "\n## Beyond the paper\n\ncabo's own variants of the paper's experiments; never \
             counted with the paper's claims.\n"
        );
        claims_table(&mut out, &paper.beyond_the_paper, &beyond, results);
    }
    settings_section(&mut out, paper);
    if let Some(rt) = &paper.runtimes {
        out.push_str(&runtimes_section(rt, results)?);
    }
    figures_section(&mut out, results, &rel);
    how_to_run_section(&mut out, paper, results, commit);
    what_remains_section(&mut out, paper, results, &claims, &beyond);
    let _ = writeln!(out, "{CLAIMS_LINE}{} -->", claims_fingerprint(paper));
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

/// Each claim's outcome; a kept row's (a study or runtime whose results are not at hand)
/// is the verdict the page already gives it.
fn outcomes(list: &[Claim], results: &[SpecResult]) -> Result<Vec<Outcome>, String> {
    list.iter()
        .map(|c| match kept_row(c, results) {
            Some(row) => Ok(
                kept_verdict(row).map_or(Outcome::NotRun, |verdict| Outcome::Direct {
                    text: String::new(),
                    verdict,
                }),
            ),
            None => claims::evaluate(c, results),
        })
        .collect()
}

/// The verdict a kept row gives, read from its verdict cell.
fn kept_verdict(row: &str) -> Option<cabo_evidence::Verdict> {
    use cabo_evidence::Verdict as V;
    [V::Holds, V::DoesNotHold, V::Inconclusive]
        .into_iter()
        .find(|&v| row.contains(&format!("| {}", claims::direct_verdict_cell(v))))
}

/// A claims table with the line per kind of test under it.
fn claims_table(out: &mut String, list: &[Claim], outcomes: &[Outcome], results: &[SpecResult]) {
    let _ = writeln!(out, "{}", claims::TABLE_HEAD);
    for (c, o) in list.iter().zip(outcomes) {
        match kept_row(c, results) {
            Some(row) => {
                let _ = writeln!(out, "{row}");
            }
            None => {
                let _ = writeln!(out, "{}", claims::row(c, o));
            }
        }
    }
    let refs: Vec<&Outcome> = outcomes.iter().collect();
    let methods = claims::method_lines(&refs);
    if !methods.is_empty() {
        let _ = write!(out, "\nIntervals:\n\n{methods}");
    }
}

/// The committed row of a study or runtime claim whose spec the page keeps (its results are
/// not at hand); paired claims are always computed, from the pooled per-run values.
fn kept_row<'a>(c: &Claim, results: &'a [SpecResult]) -> Option<&'a str> {
    let check = c.check.as_ref()?;
    if check.from_values() {
        return None;
    }
    let spec = c.spec.as_deref()?;
    let r = results.iter().find(|r| r.spec.path == spec)?;
    let row = r.kept.as_ref()?.row(&format!("| **{}** ", c.id))?;
    // A row the claim file settled otherwise when the page was written (cannot run, a
    // test) is not this check's result.
    let settled_otherwise = row.contains("| *cannot run: ") || row.contains("| *verified by test ");
    (!settled_otherwise).then_some(row)
}

/// The settings table: the paper, the authors' code and cabo, a differing row marked ≠.
fn settings_section(out: &mut String, paper: &Paper) {
    if paper.settings.is_empty() {
        return;
    }
    let _ = writeln!(out, "\n## Settings\n");
    if let Some(code) = &paper.code {
        let _ = writeln!(
            out,
            "The authors' code: `{code}`. ≠ marks where cabo differs.\n"
        );
    } else {
        let _ = writeln!(out, "≠ marks where cabo differs.\n");
    }
    let _ = writeln!(
        out,
        "| parameter | applies to | paper | authors' code | | cabo | reason |\n\
         |---|---|---|---|:-:|---|---|"
    );
    for s in &paper.settings {
        let c = claims::cell;
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {} |",
            c(&s.parameter),
            c(s.applies.as_deref().unwrap_or("all")),
            c(&s.paper),
            c(&s.code),
            if s.differs() { "≠" } else { "=" },
            c(&s.cabo),
            c(&s.reason)
        );
    }
}

/// The commands that regenerate the page, the commit and fingerprints it came from, and the
/// CPU time its runs took.
fn how_to_run_section(out: &mut String, paper: &Paper, results: &[SpecResult], commit: &str) {
    let _ = writeln!(out, "## How to run\n");
    let _ = writeln!(
        out,
        "```sh\ncargo xtask reproduce {id}          # batches until every claim is decided (the gallery's replications at most)\n\
         cargo xtask reproduce {id} --full   # … up to the paper's replications\n\
         cargo xtask slurm --reproduce {id} --full --workers --shards 64 && sbatch slurm/cabo-reproduce-{id}.round.sbatch   # the same on a Slurm cluster, round by round\n```\n",
        id = paper.id
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
            cabo_runner::status::duration(r.cpu_seconds),
            cabo_runner::status::duration(r.wall_seconds)
        );
    }
    let _ = writeln!(
        out,
        "\nIn all {} of CPU time on the runs' own threads and {} of wall time, summed over the \
         complete runs' `times.jsonl` (GP linear algebra a run hands to the thread pool counts in \
         its wall time only; the wall time of runs sharing cores with other work is inflated).\n",
        cabo_runner::status::duration(cpu),
        cabo_runner::status::duration(wall)
    );
    kept_note(out, results);
    dropped_note(out, results);
}

/// Says which specs' committed per-run rows were dropped as another version's.
fn dropped_note(out: &mut String, results: &[SpecResult]) {
    let dropped: Vec<String> = results
        .iter()
        .filter(|r| r.dropped > 0)
        .map(|r| format!("`{}` ({} rows)", r.spec.path, r.dropped))
        .collect();
    if !dropped.is_empty() {
        let _ = writeln!(
            out,
            "Per-run rows of earlier versions of these specs were dropped (their fingerprint \
             is not the spec's now): {}.\n",
            dropped.join(", ")
        );
    }
    let lacking: Vec<String> = results
        .iter()
        .flat_map(|r| {
            r.lacking
                .iter()
                .map(|(m, n)| format!("`{}` metric `{m}` ({n} runs)", r.spec.path))
        })
        .collect();
    if !lacking.is_empty() {
        let _ = writeln!(
            out,
            "Per-run rows kept only at the budget by an earlier file, which no claim then read on \
             the curve: {}. Claims that read these metrics on the curve count those runs as not \
             run until they are run again (`cargo xtask reproduce` runs them; claims at the \
             budget count them).\n",
            lacking.join(", ")
        );
    }
}

/// For each undecided claim, the replications the sequential rule may still need, their
/// CPU-hours and the command that runs them on a cluster; then the paper's own list.
fn what_remains_section(
    out: &mut String,
    paper: &Paper,
    results: &[SpecResult],
    claims: &[Outcome],
    beyond: &[Outcome],
) {
    let all = || {
        paper
            .claims
            .iter()
            .zip(claims)
            .chain(paper.beyond_the_paper.iter().zip(beyond))
    };
    let undecided: Vec<(&Claim, &claims::Paired)> = all()
        .filter_map(|(c, o)| Some((c, o.undecided()?)))
        .collect();
    let not_run: Vec<&Claim> = all()
        .filter(|(_, o)| matches!(o, Outcome::NotRun))
        .map(|(c, _)| c)
        .collect();
    if undecided.is_empty() && not_run.is_empty() && paper.remaining.is_empty() {
        return;
    }
    let _ = writeln!(out, "## What remains\n");
    if !undecided.is_empty() || !not_run.is_empty() {
        let _ = writeln!(
            out,
            "Undecided claims, and claims not run yet: the replications the sequential rule still \
             needs at most (to the paper's count; it may stop at an earlier look), and their \
             CPU-hours at each policy's mean CPU time per counted run, for a policy without one \
             at the spec's mean over its counted runs, or where none is counted yet, at the \
             earlier runs' mean that its `cpu_seconds_per_run` records (\"—\": no \
             measurement). A run's CPU time is what its `rep-<r>.times.jsonl` records: its \
             decisions' model fits, acquisitions and evaluations. The set-up of a \
             replication's problem (a search for its optima, say) is not in it, so where that \
             set-up is costly the estimate is low by it, once per replication and process.\n"
        );
        let _ = writeln!(
            out,
            "| claim | replications (now → at most) | runs | CPU-hours (estimate) | command |\n\
             |---|---:|---:|---:|---|"
        );
        let rows = undecided
            .iter()
            .map(|(c, p)| {
                let only = p.policies.iter().map(|(q, _)| q.clone()).collect();
                let remaining: Vec<(String, usize)> = p
                    .policies
                    .iter()
                    .map(|(q, have)| (q.clone(), p.of.saturating_sub(*have)))
                    .collect();
                (*c, p.have, p.of, claims::runs_needed(p), only, remaining)
            })
            .chain(not_run.iter().filter_map(|c| {
                let (c, have, of, runs, only) = not_run_row(c, results)?;
                let each = runs / only.len().max(1);
                let remaining: Vec<(String, usize)> =
                    only.iter().map(|q| (q.clone(), each)).collect();
                Some((c, have, of, runs, only, remaining))
            }));
        let mut distinct = DistinctRuns::default();
        for (c, have, of, runs, only, remaining) in rows {
            distinct.add(c, runs, results);
            let row = RemainingRow {
                have,
                of,
                runs,
                only,
                remaining,
            };
            remaining_row(out, c, row, results);
        }
        out.push('\n');
        distinct.write(out, results);
    }
    paper_remaining_table(out, paper);
}

/// The runs of "What remains" counted once each: claims that read the same spec and policy
/// share its runs, which the table's rows count once per claim.
#[derive(Default)]
struct DistinctRuns {
    /// Per (spec, policy): the runs still missing to the spec's paper replications. A claim
    /// that names no policy (a study's) counts under the policy "".
    runs: std::collections::BTreeMap<(String, String), usize>,
}

impl DistinctRuns {
    /// Adds the runs `c` reads (`runs`, its row's count, for a claim that names no policy).
    fn add(&mut self, c: &Claim, runs: usize, results: &[SpecResult]) {
        let reads = c.reads();
        if reads.is_empty() {
            if let Some(spec) = &c.spec {
                self.need(spec, "", runs);
            }
            return;
        }
        for read in reads {
            let Some(r) = results.iter().find(|r| r.spec.path == read.spec) else {
                continue;
            };
            for policy in read.policies {
                let counted = r.values.as_ref().map_or(0, |v| {
                    v.replications(policy, read.metric)
                        .iter()
                        .filter(|&&k| k < r.spec.paper_replications)
                        .count()
                });
                self.need(read.spec, policy, r.spec.paper_replications - counted);
            }
        }
    }

    fn need(&mut self, spec: &str, policy: &str, runs: usize) {
        let n = self
            .runs
            .entry((spec.to_string(), policy.to_string()))
            .or_default();
        *n = (*n).max(runs);
    }

    /// The runs, their CPU-hours at each policy's measured mean, and the runs without a
    /// measurement to price them.
    fn priced(&self, results: &[SpecResult]) -> (usize, f64, usize) {
        let (mut runs, mut hours, mut unpriced) = (0, 0.0, 0);
        for ((spec, policy), &n) in self.runs.iter().filter(|(_, n)| **n > 0) {
            runs += n;
            let remaining = if policy.is_empty() {
                Vec::new()
            } else {
                vec![(policy.clone(), n)]
            };
            match results
                .iter()
                .find(|r| &r.spec.path == spec)
                .and_then(|r| r.remaining_hours(&remaining, n))
            {
                Some((h, _)) => hours += h,
                None => unpriced += n,
            }
        }
        (runs, hours, unpriced)
    }

    /// Writes the total under the table.
    fn write(&self, out: &mut String, results: &[SpecResult]) {
        let (runs, hours, unpriced) = self.priced(results);
        let total = match unpriced {
            0 => format!("**{runs} runs, about {} CPU-hours**", sig(hours)),
            k if k == runs => format!("**{runs} runs** (none has a measurement to price it)"),
            k => format!(
                "**{runs} runs, about {} CPU-hours** for the {} with a measurement",
                sig(hours),
                runs - k
            ),
        };
        let _ = writeln!(
            out,
            "All of it, each run counted once where claims share it (the rows count it once \
             per claim): {total}, when every claim needs its paper's replications; the \
             sequential rule may stop earlier.\n"
        );
    }
}

/// One undecided claim's row of "What remains", before its CPU-hours are priced.
struct RemainingRow {
    /// Replications now.
    have: usize,
    /// Replications at most.
    of: usize,
    /// Runs still needed.
    runs: usize,
    /// The policies the claim reads.
    only: Vec<String>,
    /// Per policy, the runs it still needs.
    remaining: Vec<(String, usize)>,
}

/// Writes one claim's row of "What remains": its runs, their CPU-hours at the policies'
/// measured means and the command that runs them.
fn remaining_row(out: &mut String, c: &Claim, row: RemainingRow, results: &[SpecResult]) {
    let RemainingRow {
        have,
        of,
        runs,
        only,
        remaining,
    } = row;
    let spec = c.spec.as_deref().unwrap_or_default();
    let across = c.check.as_ref().is_some_and(|k| k.across_specs());
    let hours = if across {
        // Its runs lie in several specs: each at its own spec's and policy's mean.
        let mut reads = DistinctRuns::default();
        reads.add(c, runs, results);
        let (_, h, unpriced) = reads.priced(results);
        Some((h, Vec::new())).filter(|_| unpriced == 0)
    } else {
        results
            .iter()
            .find(|r| r.spec.path == spec)
            .and_then(|r| r.remaining_hours(&remaining, runs))
    };
    let hours = hours.map_or("—".to_string(), |(h, unmeasured)| match unmeasured[..] {
        [] => sig(h),
        _ => format!(
            "{} ({} at the spec's mean: no counted run yet)",
            sig(h),
            unmeasured.join(", ")
        ),
    });
    let mut line = PlanLine::new(spec.to_string(), Some(of), only);
    if let Some(Some(v)) = results
        .iter()
        .find(|r| r.spec.path == spec)
        .map(|r| &r.values)
    {
        skip_done(&mut line, v);
    }
    let _ = writeln!(
        out,
        "| {} | {have} → {of} | {runs} | {hours} | `cargo xtask slurm {} --workers` |",
        c.id,
        claims::cell(&line.line())
    );
}

/// The paper's own list of runs no claim's rule asks for yet, as a table.
fn paper_remaining_table(out: &mut String, paper: &Paper) {
    if paper.remaining.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "Runs no claim's rule asks for yet:\n\n| runs | CPU-hours (estimate) | command |\n|---|---:|---|"
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

/// A claim not run yet, as a row of what remains: (claim, 0, the paper's replications, the
/// runs that takes, the policies to run; none for a study, which runs whole).
fn not_run_row<'a>(
    c: &'a Claim,
    results: &[SpecResult],
) -> Option<(&'a Claim, usize, usize, usize, Vec<String>)> {
    let r = results
        .iter()
        .find(|r| Some(r.spec.path.as_str()) == c.spec.as_deref())?;
    let check = c.check.as_ref()?;
    if check.across_specs() {
        // A claim across specs: the runs of every spec it reads, up to its spec's paper count.
        let of = r.spec.paper_replications;
        let reads = c.reads();
        let runs = reads.iter().map(|read| of * read.policies.len()).sum();
        let only = reads
            .iter()
            .find(|read| read.spec == r.spec.path)
            .map(|read| read.policies.iter().map(|p| p.to_string()).collect())
            .unwrap_or_default();
        return Some((c, 0, of, runs, only));
    }
    Some(match check.runs_read() {
        Some((policy, others)) => {
            let only: Vec<String> = std::iter::once(policy)
                .chain(others.iter().map(String::as_str))
                .map(str::to_string)
                .collect();
            let of = r.spec.paper_replications;
            (c, 0, of, of * only.len(), only)
        }
        None => (c, 0, 1, 1, Vec::new()),
    })
}

/// How many replications a reproduction may run per spec: `replications` where given, else
/// the paper's with `full`, else the gallery's quick count (the spec's own where it sets
/// none); never more than the spec file runs.
#[derive(Debug, Clone, Copy, Default)]
pub struct Cap {
    /// Up to the paper's replications.
    pub full: bool,
    /// At most this many, whatever else.
    pub replications: Option<usize>,
}

impl Cap {
    /// The cap for one spec whose file runs `own` replications.
    fn of(&self, spec: &GallerySpec, own: usize) -> usize {
        let wanted = self.replications.unwrap_or(if self.full {
            spec.paper_replications
        } else {
            spec.quick_replications.unwrap_or(own)
        });
        wanted.min(own)
    }
}

/// Why [`run_batches`] stopped before every claim had its runs.
#[derive(Debug)]
pub enum BatchesStopped<E> {
    /// The plan could not be made (the message says why).
    Plan(String),
    /// A batch ran but the plan after it is the same: its runs moved no decision's data
    /// (failing, or left out of the report), so running it again would loop.
    Unchanged(Vec<PlanLine>),
    /// Running a batch failed.
    Batch(E),
}

/// Runs the batches the claims of `papers` still need until none is left, each through
/// `run_batch`: after each batch the plan is made again from the pooled results, so a
/// decided claim's policies stop running.
pub fn run_batches<E>(
    root: &Path,
    papers: &[Paper],
    out: &Path,
    pages_dir: &Path,
    cap: Cap,
    mut run_batch: impl FnMut(&PlanLine) -> Result<(), E>,
) -> Result<(), BatchesStopped<E>> {
    let mut last: Option<Vec<PlanLine>> = None;
    loop {
        let plan = run_plan(root, papers, out, pages_dir, cap).map_err(BatchesStopped::Plan)?;
        if plan.is_empty() {
            return Ok(());
        }
        if last.as_ref() == Some(&plan) {
            return Err(BatchesStopped::Unchanged(plan));
        }
        for line in &plan {
            run_batch(line).map_err(BatchesStopped::Batch)?;
        }
        last = Some(plan);
    }
}

/// The runs the claims of `papers` still need, pooled over the results under `out` and the
/// per-run values beside the pages under `pages_dir`: per spec, the policies of its undecided
/// paired claims up to the next planned look (at most the cap), and every policy up to the
/// cap where a study, runtime or slowest check lacks results.
pub fn run_plan(
    root: &Path,
    papers: &[Paper],
    out: &Path,
    pages_dir: &Path,
    cap: Cap,
) -> Result<Vec<PlanLine>, String> {
    let mut lines = Vec::new();
    let mut values = Vec::new();
    for paper in papers {
        let (results, _) = paper_results(root, paper, out, pages_dir, Reports::Leave)?;
        for r in &results {
            lines.extend(spec_plan(paper, r, cap)?);
        }
        lines.extend(claims::plan_across(paper, &results, cap)?);
        values.extend(results.into_iter().map(|r| (r.spec.path, r.values)));
    }
    let mut merged = plan::merge(lines);
    // A line whose replications are all pooled already (a claim across specs plans every
    // spec it reads up to its next look, some of which may be further) runs nothing.
    merged.retain_mut(
        |line| match values.iter().find(|(path, _)| *path == line.spec) {
            Some((_, Some(v))) => skip_done(line, v),
            _ => true,
        },
    );
    Ok(merged)
}

/// Starts `line` at the first replication one of its policies has not completed in the
/// pooled values `v`, so that what is committed is not run again; false when every
/// replication of the line is complete there (it then starts at its last, so that the
/// command it prints still selects a run). A line for every policy (a study, or runtimes,
/// which read the runs' own times rather than committed values) starts at 0.
fn skip_done(line: &mut PlanLine, v: &RunValues) -> bool {
    let (false, Some(upto)) = (line.only.is_empty(), line.replications) else {
        return true;
    };
    let first = v.first_missing(&line.only, upto);
    line.from_replication = first.min(upto.saturating_sub(1));
    first < upto
}

/// The plan line one claim on `r`'s spec needs, if any: its policies up to the next look
/// of its sequential rule (at most `cap_n` of the spec's `own` replications).
fn claim_plan(
    c: &Claim,
    r: &SpecResult,
    cap_n: usize,
    own: usize,
) -> Result<Option<PlanLine>, String> {
    let Some(check) = &c.check else {
        return Ok(None);
    };
    if check.across_specs() {
        return Ok(None); // planned on every spec it reads, by `claims::plan_across`
    }
    if let Some(study) = &r.study {
        // A study check naming a table or column the study lacks is an error here too,
        // so that `--list` does not plan around a claim no run can decide.
        claims::study_names(check, study).map_err(|e| format!("claim {}: {e}", c.id))?;
    }
    let Some((policy, others)) = check.runs_read() else {
        // Runtimes and the slowest policy read every policy's runs.
        let short = r.runs_complete < cap_n * r.runs_total / own.max(1) && r.kept.is_none();
        return Ok(short.then(|| PlanLine::new(r.spec.path.clone(), Some(cap_n), Vec::new())));
    };
    let policies: Vec<String> = std::iter::once(policy)
        .chain(others.iter().map(String::as_str))
        .map(str::to_string)
        .collect();
    let outcome = match &r.values {
        Some(v) => claims::decide_runs(c, check, &r.spec, v)?,
        None => Outcome::NotRun,
    };
    let have = match &outcome {
        Outcome::NotRun => 0,
        o => match o.undecided() {
            Some(p) => p.have,
            None => return Ok(None),
        },
    };
    let looks = claims::looks_of(&r.spec);
    let Some(next) = looks.next(have) else {
        return Ok(None);
    };
    let target = next.min(cap_n);
    Ok((target > have).then(|| PlanLine::new(r.spec.path.clone(), Some(target), policies)))
}

/// One spec's lines of the plan.
fn spec_plan(paper: &Paper, r: &SpecResult, cap: Cap) -> Result<Vec<PlanLine>, String> {
    let Some(own) = r.spec_replications else {
        let needed = r.study.is_none() && r.kept.is_none();
        return Ok(needed
            .then(|| PlanLine::new(r.spec.path.clone(), None, Vec::new()))
            .into_iter()
            .collect());
    };
    let cap_n = cap.of(&r.spec, own);
    let mut lines = Vec::new();
    let on_spec = |c: &&Claim| c.spec.as_deref() == Some(r.spec.path.as_str());
    for c in paper
        .claims
        .iter()
        .chain(&paper.beyond_the_paper)
        .filter(on_spec)
    {
        lines.extend(claim_plan(c, r, cap_n, own)?);
    }
    // The paper's runtime table reads every policy's decisions.
    let timed = paper
        .runtimes
        .as_ref()
        .is_some_and(|rt| rt.rows.iter().any(|row| row.spec == r.spec.path));
    if timed && r.runs_complete < cap_n * r.runs_total / own.max(1) && r.kept.is_none() {
        lines.push(PlanLine::new(r.spec.path.clone(), Some(cap_n), Vec::new()));
    }
    // A spec no claim reads still has its figure on the page: run it once.
    let read = paper
        .claims
        .iter()
        .chain(&paper.beyond_the_paper)
        .any(|c| on_spec(&c));
    if !read && r.runs_complete == 0 && r.kept.is_none() {
        lines.push(PlanLine::new(r.spec.path.clone(), Some(cap_n), Vec::new()));
    }
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Up to the paper's replications.
    const FULL: Cap = Cap {
        full: true,
        replications: None,
    };

    /// EI against random search on Ackley-2, a few cheap iterations: a real spec, run in
    /// milliseconds. It and the paper are the fixture repository's (`fixture/`), which
    /// tests/slurm.sh reproduces on a cluster too.
    const SPEC: &str = include_str!("../fixture/specs/f.yaml");

    const PAPER: &str = include_str!("../fixture/docs/reproductions/900-f.yaml");

    fn load_plugins() {
        cabo_baselines::plugins();
        cabo_benchmarks::plugins();
        cabo_gp::plugins();
    }

    /// A repository with the fixture spec, a test file and the fixture gallery.
    fn repo() -> (tempfile::TempDir, Gallery) {
        load_plugins();
        let tmp = schema::tests::write_repo(SPEC, PAPER);
        let root = tmp.path();
        let g = load(root, &root.join("docs/reproductions/gallery.yaml")).expect("loads");
        (tmp, g)
    }

    /// The fixture repository with replications 0 … n−1 of its spec run into `results/`
    /// and its page written from them under `docs/reproductions/`: the repository, its
    /// gallery, and those two directories.
    fn with_page(n: usize) -> (tempfile::TempDir, Gallery, PathBuf, PathBuf) {
        let (tmp, g) = repo();
        let root = tmp.path();
        let (out, pages) = (root.join("results"), root.join("docs/reproductions"));
        run(root, &out, n);
        write_pages(root, &g.papers, &out, &pages, "test").unwrap();
        (tmp, g, out, pages)
    }

    /// Runs replications 0 … n−1 of the fixture spec into `out`.
    fn run(root: &Path, out: &Path, n: usize) {
        let opts = cabo_runner::RunOptions {
            replications: Some(n),
            out: out.to_path_buf(),
            report: false,
            ..cabo_runner::RunOptions::default()
        };
        let specs = cabo_runner::load_specs(&[root.join("specs/f.yaml")], &opts).expect("the spec");
        let cancel = std::sync::atomic::AtomicBool::new(false);
        cabo_runner::run_specs(&specs, &opts, &cancel).expect("runs");
    }

    #[test]
    fn before_any_run_the_plan_runs_the_first_look_of_each_claims_policies() {
        let (tmp, g) = repo();
        let root = tmp.path();
        let (out, pages) = (root.join("results"), root.join("docs/reproductions"));
        let plan = run_plan(root, &g.papers, &out, &pages, FULL).unwrap();
        // Looks at 4 and 8; EI and Random from the first claim, the comparable claim's
        // Random and EI merged into one line.
        let lines: Vec<String> = plan.iter().map(PlanLine::line).collect();
        assert_eq!(
            lines,
            ["specs/f.yaml --replications 4 --only EI --only Random"]
        );
        let capped = Cap {
            full: true,
            replications: Some(2),
        };
        let plan = run_plan(root, &g.papers, &out, &pages, capped).unwrap();
        assert_eq!(plan[0].replications, Some(2));
    }

    /// Every file under `dir` with its bytes and modification time.
    fn files(dir: &Path) -> Vec<(PathBuf, Vec<u8>, std::time::SystemTime)> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                out.extend(files(&path));
            } else {
                let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
                out.push((path.clone(), std::fs::read(&path).unwrap(), modified));
            }
        }
        out.sort();
        out
    }

    #[test]
    fn remaining_runs_are_priced_at_their_own_policys_mean() {
        // TS costs ten times Random per run; a spec mean over the counted runs would price
        // TS's runs at Random's. A policy without a counted run takes the spec's mean and
        // is named.
        let measured = vec![
            ("Random".to_string(), 20.0, 2),
            ("TS".to_string(), 300.0, 3),
        ];
        let remaining = vec![("Random".to_string(), 4), ("TS".to_string(), 6)];
        let (hours, unmeasured) = hours_at_policy_means(&measured, 50.0, &remaining);
        assert!((hours - (4.0 * 10.0 + 6.0 * 100.0) / 3600.0).abs() < 1e-12);
        assert!(unmeasured.is_empty());
        let with_kg = vec![("TS".to_string(), 1), ("KG".to_string(), 2)];
        let (hours, unmeasured) = hours_at_policy_means(&measured, 50.0, &with_kg);
        assert!((hours - (100.0 + 2.0 * 50.0) / 3600.0).abs() < 1e-12);
        assert_eq!(unmeasured, vec!["KG".to_string()]);
        // Nothing measured at all: every policy at the spec's (recorded) mean, none named.
        let (hours, unmeasured) = hours_at_policy_means(&[], 36.0, &with_kg);
        assert!((hours - 3.0 * 36.0 / 3600.0).abs() < 1e-12);
        assert!(unmeasured.is_empty());
    }

    #[test]
    fn what_remains_counts_a_run_that_claims_share_once() {
        let (tmp, g) = repo();
        let root = tmp.path();
        let (out, pages) = (root.join("results"), root.join("docs/reproductions"));
        let total = |page: &str| {
            page.lines()
                .find(|l| l.starts_with("All of it"))
                .unwrap_or_else(|| panic!("no total:\n{page}"))
                .to_string()
        };
        // Three claims read EI and Random on the one spec: their rows count 16 runs each,
        // the total 8 of each policy.
        write_pages(root, &g.papers, &out, &pages, "test").unwrap();
        let page = std::fs::read_to_string(pages.join("900-f.md")).unwrap();
        assert_eq!(page.matches("| 0 → 8 | 16 |").count(), 3, "{page}");
        assert!(
            total(&page).contains("**16 runs** (none has a measurement to price it)"),
            "{page}"
        );
        // Four replications later: 4 of each policy remain, priced at their measured means.
        run(root, &out, 4);
        write_pages(root, &g.papers, &out, &pages, "test").unwrap();
        let page = std::fs::read_to_string(pages.join("900-f.md")).unwrap();
        assert!(total(&page).contains("**8 runs, about "), "{page}");
    }

    #[test]
    fn planning_writes_nothing_under_the_results_or_the_pages() {
        let (tmp, g, out, pages) = with_page(4);
        let root = tmp.path();
        let before = (files(&out), files(&pages));
        // A later modification time would show a rewrite with the same bytes.
        std::thread::sleep(std::time::Duration::from_millis(20));
        let plan = run_plan(root, &g.papers, &out, &pages, Cap::default()).unwrap();
        assert!(!plan.is_empty());
        assert!(
            before == (files(&out), files(&pages)),
            "`--list` wrote a file"
        );
    }

    #[test]
    fn a_claim_that_starts_reading_the_curve_counts_runs_kept_without_it_as_not_run() {
        // Only claims at the budget: the CSV keeps final values alone.
        let at_budget = PAPER.replace(", on: area }", " }");
        load_plugins();
        let tmp = schema::tests::write_repo(SPEC, &at_budget);
        let root = tmp.path();
        let (out, pages) = (root.join("results"), root.join("docs/reproductions"));
        let index = pages.join("gallery.yaml");
        let g = load(root, &index).unwrap();
        run(root, &out, 4);
        write_pages(root, &g.papers, &out, &pages, "test").unwrap();
        let csv_path = pages.join("900-f/gallery-fixture.runs.csv");
        let csv = std::fs::read_to_string(&csv_path).unwrap();
        assert!(csv.contains("\npolicy,replication,metric,final\n"), "{csv}");
        assert!(csv.contains("; final only\n"), "{csv}");

        // The claim file now reads the curve; the results are gone (another machine).
        std::fs::write(pages.join("900-f.yaml"), PAPER).unwrap();
        let g = load(root, &index).unwrap();
        std::fs::remove_dir_all(&out).unwrap();
        write_pages(root, &g.papers, &out, &pages, "test").unwrap();
        let page = std::fs::read_to_string(pages.join("900-f.md")).unwrap();
        let row = |id: &str| {
            page.lines()
                .find(|l| l.starts_with(&format!("| **{id}** ")))
                .unwrap()
                .to_string()
        };
        // At the budget the committed runs still count; on the curve they count as not run.
        assert!(row("ei-beats-random").contains("| 4 / 8 |"), "{page}");
        assert!(row("ei-sooner").contains("*not run yet*"), "{page}");
        assert!(
            page.contains("`specs/f.yaml` metric `default` (8 runs)"),
            "{page}"
        );
        // The file keeps the final values it had (no row has a grid yet) and no longer says
        // the metric is read at the budget only.
        let csv = std::fs::read_to_string(&csv_path).unwrap();
        assert!(!csv.contains("final only"), "{csv}");
        assert_eq!(csv.lines().filter(|l| l.starts_with("EI,")).count(), 4);
        // The plan runs replications 0 … 7 (the next look of the claim at the budget), which
        // runs 0 … 3 again for the claim on the curve: none is under `out`.
        let plan = run_plan(root, &g.papers, &out, &pages, Cap::default()).unwrap();
        assert_eq!(plan[0].replications, Some(8), "{plan:?}");
        assert_eq!(plan[0].from_replication, 0, "{plan:?}");
    }

    #[test]
    fn a_fresh_machine_plans_only_the_replications_the_committed_values_lack() {
        let (tmp, g, out, pages) = with_page(4);
        let root = tmp.path();
        // Another machine: the committed CSV has replications 0 … 3, the results nothing.
        std::fs::remove_dir_all(&out).unwrap();
        let plan = run_plan(root, &g.papers, &out, &pages, FULL).unwrap();
        let lines: Vec<String> = plan.iter().map(PlanLine::line).collect();
        assert_eq!(
            lines,
            ["specs/f.yaml --replications 8 --from-replication 4 --only EI --only Random"]
        );
        // Without one policy's replication 2 in the file, the plan starts there.
        let csv_path = pages.join("900-f/gallery-fixture.runs.csv");
        let csv = std::fs::read_to_string(&csv_path).unwrap();
        let without: Vec<&str> = csv
            .lines()
            .filter(|l| !l.starts_with("Random,2,"))
            .collect();
        std::fs::write(&csv_path, without.join("\n") + "\n").unwrap();
        let gap = run_plan(root, &g.papers, &out, &pages, FULL).unwrap();
        assert_eq!(gap[0].from_replication, 2, "{gap:?}");
        std::fs::write(&csv_path, csv).unwrap();
        // The line's selection runs replications 4 … 7 alone, and they pool with the
        // committed ones into 8.
        let opts = cabo_runner::RunOptions {
            replications: plan[0].replications,
            from_replication: plan[0].from_replication,
            out: out.clone(),
            report: false,
            ..cabo_runner::RunOptions::default()
        };
        let specs = cabo_runner::load_specs(&[root.join("specs/f.yaml")], &opts).unwrap();
        let selected = cabo_runner::selected_runs(&specs[0], &opts);
        assert_eq!(selected.len(), 2 * 4);
        assert!(selected.iter().all(|r| (4..8).contains(&r.replication)));
        let cancel = std::sync::atomic::AtomicBool::new(false);
        cabo_runner::run_specs(&specs, &opts, &cancel).unwrap();
        write_pages(root, &g.papers, &out, &pages, "test").unwrap();
        let page = std::fs::read_to_string(pages.join("900-f.md")).unwrap();
        assert!(page.contains("| 8 / 8 |"), "{page}");
    }

    #[test]
    fn a_plan_line_whose_replications_are_all_pooled_is_dropped() {
        let (_tmp, _, _, pages) = with_page(4);
        let csv = std::fs::read_to_string(pages.join("900-f/gallery-fixture.runs.csv")).unwrap();
        let values = RunValues::parse(&csv, "fixture").unwrap();
        let line = |n| {
            PlanLine::new(
                "specs/f.yaml".to_string(),
                Some(n),
                vec!["EI".into(), "Random".into()],
            )
        };
        // Replications 0 … 3 are pooled: a line to 4 has nothing to run, one to 8 starts at 4.
        let mut done = line(4);
        assert!(!skip_done(&mut done, &values));
        let mut more = line(8);
        assert!(skip_done(&mut more, &values));
        assert_eq!(more.from_replication, 4);
    }

    #[test]
    fn a_page_decides_its_claims_from_the_per_run_values_it_publishes() {
        let (tmp, g) = repo();
        let root = tmp.path();
        let (out, pages) = (root.join("results"), root.join("docs/reproductions"));
        run(root, &out, 4);
        let written = write_pages(root, &g.papers, &out, &pages, "test").unwrap();
        assert!(written[0].changed);
        let page = std::fs::read_to_string(pages.join("900-f.md")).unwrap();
        let csv_path = pages.join("900-f/gallery-fixture.runs.csv");
        let csv = std::fs::read_to_string(&csv_path).unwrap();

        // The CSV: header lines, then a row per (policy, replication, metric).
        let rows: Vec<&str> = csv.lines().filter(|l| !l.starts_with('#')).collect();
        assert!(rows[0].starts_with("policy,replication,metric,final,v0,v1,"));
        assert_eq!(rows.len(), 1 + 2 * 4, "{csv}");
        assert!(csv.contains("# x: iteration, budget 6\n"), "{csv}");
        assert!(csv.contains("# metric: default = log10 simple regret; lower is better"));

        // Recomputed by hand from the CSV's strings: the mean paired advantage at the budget,
        // Random's log10 regret minus EI's.
        let finals = |policy: &str| -> Vec<f64> {
            (0..4)
                .map(|r| {
                    let row = rows
                        .iter()
                        .find(|l| l.starts_with(&format!("{policy},{r},default,")))
                        .unwrap();
                    row.split(',').nth(3).unwrap().parse().unwrap()
                })
                .collect()
        };
        let (ei, random) = (finals("EI"), finals("Random"));
        let mean = (0..4).map(|r| random[r] - ei[r]).sum::<f64>() / 4.0;
        let cell = format!("vs Random: {}", claims::cell(&signed_sig(mean)));
        assert!(page.contains(&cell), "no {cell:?} in\n{page}");

        assert!(page.contains("| 4 / 8 |"), "{page}");
        assert!(
            page.contains("*verified by test `verified_here`*"),
            "{page}"
        );
        assert!(
            page.contains("*cannot run: the data are private*"),
            "{page}"
        );
        assert!(page.contains("## Beyond the paper"), "{page}");
        assert!(page.contains("| noise | all | not stated | fixed 1e-4 | ≠ | learned |"));
        assert!(page.contains("| budget | all | 6 iterations | 6 iterations | = |"));
        let verdicts = page
            .lines()
            .find(|l| l.starts_with("**Verdicts**"))
            .unwrap();
        assert!(verdicts.contains("(4 claims of the paper)"), "{verdicts}");
        assert!(
            verdicts.contains("1 cannot run · 1 verified by a test"),
            "{verdicts}"
        );
        assert!(page.contains("O'Brien") || page.contains("look"), "{page}");
        assert!(page.contains("<!-- gallery-spec specs/f.yaml "), "{page}");

        // The plan after this look: an undecided claim asks for the next look, 8.
        let plan = run_plan(root, &g.papers, &out, &pages, FULL).unwrap();
        if page.contains("*inconclusive at n = 4 of 8*") {
            assert_eq!(plan.len(), 1, "{plan:?}");
            assert_eq!(plan[0].replications, Some(8));
            // The page says what the undecided claim still needs, and how to run it.
            assert!(page.contains("## What remains"), "{page}");
            assert!(page.contains("| 4 → 8 | 8 |"), "{page}");
            assert!(
                page.contains(
                    "`cargo xtask slurm specs/f.yaml --replications 8 --from-replication 4 --only "
                ),
                "{page}"
            );
        } else {
            assert!(plan.is_empty(), "{plan:?}");
        }
    }

    fn signed_sig(v: f64) -> String {
        if v > 0.0 {
            format!("+{}", sig(v))
        } else {
            sig(v)
        }
    }

    #[test]
    fn a_page_in_an_earlier_wording_is_rewritten_without_new_results() {
        let (tmp, g, _, pages) = with_page(4);
        let root = tmp.path();
        // A machine without the results: nothing to add, and the page is in today's wording.
        let empty = root.join("elsewhere");
        let again = write_pages(root, &g.papers, &empty, &pages, "test").unwrap();
        assert!(!again[0].changed);

        // The page as an earlier wording wrote it: its marker records that wording.
        let path = pages.join("900-f.md");
        let page = std::fs::read_to_string(&path).unwrap();
        let paper = &g.papers[0];
        let (now, before) = (
            fingerprint_in_wording(paper, PAGE_WORDING),
            fingerprint_in_wording(paper, PAGE_WORDING - 1),
        );
        assert_ne!(now, before);
        let marker = |f: &str| format!("{CLAIMS_LINE}{f} -->");
        assert!(page.contains(&marker(&now)), "{page}");
        std::fs::write(&path, page.replace(&marker(&now), &marker(&before))).unwrap();
        let rewritten = write_pages(root, &g.papers, &empty, &pages, "test").unwrap();
        assert!(rewritten[0].changed);
        let page = std::fs::read_to_string(&path).unwrap();
        assert!(page.contains(&marker(&now)) && !page.contains(&marker(&before)));
    }

    #[test]
    fn batches_from_two_machines_pool_and_a_conflicting_row_is_refused() {
        let (tmp, g) = repo();
        let root = tmp.path();
        let pages = root.join("docs/reproductions");
        let (a, b, empty) = (root.join("a"), root.join("b"), root.join("none"));
        run(root, &a, 3);
        write_pages(root, &g.papers, &a, &pages, "test").unwrap();
        let csv_path = pages.join("900-f/gallery-fixture.runs.csv");
        let first = std::fs::read_to_string(&csv_path).unwrap();
        let page = std::fs::read_to_string(pages.join("900-f.md")).unwrap();

        // A machine without runs leaves page and values as they are.
        let w = write_pages(root, &g.papers, &empty, &pages, "test").unwrap();
        assert!(!w[0].changed);
        assert_eq!(
            std::fs::read_to_string(pages.join("900-f.md")).unwrap(),
            page
        );

        // Another machine that ran 5 replications: its rows join the committed ones, and
        // the 3 both ran agree to the digit.
        run(root, &b, 5);
        write_pages(root, &g.papers, &b, &pages, "test").unwrap();
        let pooled = std::fs::read_to_string(&csv_path).unwrap();
        let values = RunValues::parse(&pooled, "pooled").unwrap();
        assert_eq!(values.replications("EI", "default"), [0, 1, 2, 3, 4]);
        for line in first.lines().filter(|l| !l.starts_with('#')) {
            assert!(pooled.contains(line), "lost {line}");
        }

        // A committed row that disagrees with the results is an error naming both.
        let row = pooled
            .lines()
            .find(|l| l.starts_with("EI,0,default,"))
            .unwrap();
        let mut cells: Vec<&str> = row.split(',').collect();
        let changed = format!("{:.5e}", cells[3].parse::<f64>().unwrap() + 1.0);
        cells[3] = &changed;
        std::fs::write(&csv_path, pooled.replace(row, &cells.join(","))).unwrap();
        let e = write_pages(root, &g.papers, &b, &pages, "test").unwrap_err();
        assert!(e.contains("gallery-fixture.runs.csv and"), "{e}");
        assert!(e.contains("disagree on EI replication 0"), "{e}");
    }
}
