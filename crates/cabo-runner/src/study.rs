//! Study spec files: experiments a plugin computes in one piece (a [`StudySpec`]) instead of
//! a comparison of policies run evaluation by evaluation.
//!
//! ```yaml
//! name: markov-figure-5-2
//! description: Value against sampling cost, DP-optimal and one-step lookahead
//! study: { type: markov_cost_sweep, x_levels: 100, y_levels: 101, runs: 100000 }
//! smoke: { study: { type: markov_cost_sweep, x_levels: 17, y_levels: 25, runs: 4000 } }
//! ```
//!
//! A file is a study when it has a top-level `study:` key. Its results go to
//! `<out>/<name>/`: `study.json` (the resolved spec and the whole [`StudyOutput`], written
//! atomically when the study finishes, so an interrupted study leaves nothing half-written
//! and a finished one is never recomputed), `study.times.json` (the study's wall and CPU seconds as the runner measured them,
//! [`STUDY_WALL`] and [`STUDY_CPU`], and the plugin's own measurements, which depend on the
//! machine) and the report: `report.md`, one `<figure>.svg`
//! and `<figure>.png` per figure and one `<table>.csv` per table.

use cabo_core::StudySpec;
use cabo_core::study::{Cell, StudyContext, StudyOutput, Table};
use cabo_engine::store;
use cabo_spec::error::SpecError;
use cabo_spec::locate::Locator;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// A study spec file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StudyFile {
    /// Name; results go to `<out>/<name>/`.
    pub name: String,
    /// What the study reproduces.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Base seed of every random stream in the study.
    #[serde(default)]
    pub seed: u64,
    /// The study.
    pub study: Box<dyn StudySpec>,
    /// The scaled-down variant that `--smoke` and the snapshot tests run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smoke: Option<StudySmoke>,
}

/// The `smoke:` section of a study file: a replacement study.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StudySmoke {
    /// The study run instead under `--smoke`.
    pub study: Box<dyn StudySpec>,
}

/// A study file read from disk, validated, with its smoke variant applied when requested.
#[derive(Debug, Clone)]
pub struct LoadedStudy {
    /// Where it was read from.
    pub path: PathBuf,
    /// The parsed file.
    pub file: StudyFile,
    /// Whether this is the `--smoke` variant (its results go to `<out>/<name>/smoke`).
    pub smoke: bool,
    locator: Locator,
}

impl LoadedStudy {
    /// Parses and validates study text (`path` is used in messages).
    pub fn parse(path: &Path, text: &str, smoke: bool) -> Result<Self, SpecError> {
        let mut file: StudyFile = cabo_spec::error::parse_yaml(path, text)?;
        let mut key = "study";
        if smoke {
            let Some(s) = file.smoke.take() else {
                return Err(SpecError::new(
                    path,
                    None,
                    "",
                    "the study has no `smoke:` section: --smoke runs a study's scaled-down \
                     variant (add one, or run without --smoke)"
                        .into(),
                ));
            };
            file.study = s.study;
            key = "smoke.study";
        }
        let loaded = LoadedStudy {
            path: path.to_path_buf(),
            file,
            smoke,
            locator: Locator::new(text),
        };
        cabo_spec::check_name("study", &loaded.file.name)
            .map_err(|m| loaded.error_at("name", m))?;
        if loaded.file.name.trim().is_empty() {
            return Err(loaded.error_at("name", "a study needs a non-empty name"));
        }
        loaded
            .file
            .study
            .validate()
            .map_err(|e| loaded.error_at(key, e.to_string()))?;
        // The smoke study too, so that a study that validates also runs with --smoke.
        if let Some(s) = &loaded.file.smoke {
            s.study
                .validate()
                .map_err(|e| loaded.error_at("smoke.study", e.to_string()))?;
        }
        Ok(loaded)
    }

    /// An error pointing at `key`.
    pub fn error_at(&self, key: &str, message: impl Into<String>) -> SpecError {
        SpecError::new(&self.path, self.locator.find(key), key, message.into())
    }
}

/// Whether spec text is a study file: a mapping with a top-level `study` key. Text that
/// does not parse is not a study (the comparison parser then reports where it is broken).
pub fn is_study(text: &str) -> bool {
    serde_saphyr::from_str::<BTreeMap<String, serde::de::IgnoredAny>>(text)
        .map(|m| m.contains_key("study"))
        .unwrap_or(false)
}

/// What `study.json` holds.
#[derive(Debug, Serialize, Deserialize)]
struct Stored {
    /// The study file as run (smoke variant applied).
    spec: serde_json::Value,
    /// The numerics generation it ran under ([`store::NUMERICS`]); absent for generation 1,
    /// which keeps the files written before generations were counted as they are.
    #[serde(
        default = "first_generation",
        skip_serializing_if = "is_first_generation"
    )]
    numerics: u32,
    /// Its output.
    output: StudyOutput,
}

fn first_generation() -> u32 {
    1
}

fn is_first_generation(numerics: &u32) -> bool {
    *numerics == 1
}

/// What one invocation did with one study.
#[derive(Debug, Clone)]
pub struct StudyOutcome {
    /// The study's name.
    pub name: String,
    /// Where its results are.
    pub dir: PathBuf,
    /// Whether it was computed now (false: a previous invocation had finished it).
    pub executed: bool,
    /// The report files written.
    pub report: Vec<PathBuf>,
}

/// The key of `study.times.json` that holds the study's wall seconds, as the runner measured.
pub const STUDY_WALL: &str = "study_wall_s";

/// The key of `study.times.json` that holds the study's CPU seconds: every thread of the
/// process while it ran (studies run one at a time, after a sweep's runs, and may hand work
/// to the pool).
pub const STUDY_CPU: &str = "study_cpu_s";

/// Runs one study unless `<dir>/study.json` already holds the results of the same spec,
/// then writes its report.
pub fn run_study(s: &LoadedStudy, out: &Path) -> Result<StudyOutcome, String> {
    let dir = result_dir(s, out);
    std::fs::create_dir_all(&dir)
        .map_err(|e| format!("cannot create the output directory {}: {e}", dir.display()))?;
    let spec = resolved_spec(s)?;
    let path = dir.join("study.json");
    let stored = read_stored(&path).ok();
    let done = stored
        .as_ref()
        .is_some_and(|stored| stored.spec == spec && stored.numerics == store::NUMERICS);
    if let Some(old) = stored.filter(|_| !done) {
        // Results of another version of the study: kept, out of the way.
        store::retire_version(&dir, &store::fingerprint(&old.spec)).map_err(|e| {
            format!(
                "cannot move aside the old results in {}: {e}",
                dir.display()
            )
        })?;
    }
    if !done {
        let (started, cpu_before) = (
            std::time::Instant::now(),
            cabo_engine::cpu_time::process_cpu_seconds(),
        );
        let output = s
            .file
            .study
            .run(&StudyContext { seed: s.file.seed })
            .map_err(|e| format!("{}: study {}: {e}", s.path.display(), s.file.name))?;
        let mut times: BTreeMap<&str, f64> = output
            .measurements
            .iter()
            .map(|(k, v)| (k.as_str(), *v))
            .collect();
        times.insert(STUDY_WALL, started.elapsed().as_secs_f64());
        if let (Some(before), Some(after)) =
            (cpu_before, cabo_engine::cpu_time::process_cpu_seconds())
        {
            times.insert(STUDY_CPU, after - before);
        }
        let times = serde_json::to_vec_pretty(&times).map_err(|e| e.to_string())?;
        let json = serde_json::to_vec_pretty(&Stored {
            spec,
            numerics: store::NUMERICS,
            output,
        })
        .map_err(|e| e.to_string())?;
        let times_path = dir.join("study.times.json");
        store::write_atomic(&times_path, &times)
            .map_err(|e| format!("cannot write {}: {e}", times_path.display()))?;
        store::write_atomic(&path, &json)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    let report = write_report(&dir)?;
    Ok(StudyOutcome {
        name: s.file.name.clone(),
        dir,
        executed: !done,
        report,
    })
}

/// Whether `<out>/<name>/study.json` holds the results of this study's spec, so that
/// [`run_study`] would not recompute it.
pub fn is_complete(s: &LoadedStudy, out: &Path) -> bool {
    let path = result_dir(s, out).join("study.json");
    resolved_spec(s).is_ok_and(|spec| read_stored(&path).is_ok_and(|stored| stored.spec == spec))
}

/// Where a study's results go: `<out>/<name>`, or `<out>/<name>/smoke` for its smoke
/// variant.
pub fn result_dir(s: &LoadedStudy, out: &Path) -> PathBuf {
    store::spec_dir(out, &s.file.name, s.smoke)
}

/// What a study's stored results are checked against.
fn resolved_spec(s: &LoadedStudy) -> Result<serde_json::Value, String> {
    // The smoke section does not change what this invocation computes, so editing it does
    // not invalidate finished results.
    let resolved = StudyFile {
        smoke: None,
        ..s.file.clone()
    };
    serde_json::to_value(&resolved).map_err(|e| e.to_string())
}

fn read_stored(path: &Path) -> Result<Stored, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Whether `dir` holds a study's results.
pub fn is_study_dir(dir: &Path) -> bool {
    dir.join("study.json").is_file()
}

/// The output stored in a study's result directory.
pub fn read_output(dir: &Path) -> Result<StudyOutput, String> {
    read_stored(&dir.join("study.json")).map(|s| s.output)
}

/// Writes `report.md`, the figures and the tables of the study in `dir`; returns the files.
pub fn write_report(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let stored = read_stored(&dir.join("study.json"))?;
    let mut files = Vec::new();
    let mut write = |name: &str, bytes: &[u8]| -> Result<(), String> {
        let p = dir.join(name);
        store::write_atomic(&p, bytes).map_err(|e| format!("cannot write {}: {e}", p.display()))?;
        files.push(p);
        Ok(())
    };
    for f in &stored.output.figures {
        write(
            &format!("{}.svg", f.name),
            cabo_report::plot::figure_svg(f)?.as_bytes(),
        )?;
        write(
            &format!("{}.png", f.name),
            &cabo_report::plot::figure_png(f)?,
        )?;
    }
    for t in &stored.output.tables {
        write(&format!("{}.csv", t.name), table_csv(t).as_bytes())?;
    }
    write("report.md", markdown(&stored).as_bytes())?;
    Ok(files)
}

fn cell_text(c: &Cell) -> String {
    match c {
        Cell::Number(v) => cabo_report::markdown::sig(*v),
        Cell::Text(s) => s.clone(),
    }
}

fn table_csv(t: &Table) -> String {
    let mut out = t.columns.join(",") + "\n";
    for row in &t.rows {
        let cells: Vec<String> = row
            .iter()
            .map(|c| match c {
                Cell::Number(v) => format!("{v}"),
                Cell::Text(s) => s.clone(),
            })
            .collect();
        out += &(cells.join(",") + "\n");
    }
    out
}

fn markdown(stored: &Stored) -> String {
    let name = stored.spec["name"].as_str().unwrap_or("study");
    let mut out = format!("# {name}\n\n");
    if let Some(d) = stored.spec["description"].as_str() {
        let _ = writeln!(out, "{d}\n");
    }
    let o = &stored.output;
    if !o.findings.is_empty() {
        out += "## Findings\n\n";
        for f in &o.findings {
            let _ = writeln!(out, "- {f}");
        }
        out.push('\n');
    }
    for f in &o.figures {
        let _ = writeln!(out, "## {}\n\n![{}]({}.png)\n", f.title, f.title, f.name);
    }
    for t in &o.tables {
        let _ = writeln!(out, "## {}\n", t.title);
        let _ = writeln!(out, "| {} |", t.columns.join(" | "));
        let _ = writeln!(out, "|{}", " --- |".repeat(t.columns.len()));
        for row in &t.rows {
            let cells: Vec<String> = row.iter().map(cell_text).collect();
            let _ = writeln!(out, "| {} |", cells.join(" | "));
        }
        let _ = writeln!(out, "\n(`{}.csv`)\n", t.name);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const WITHOUT: &str =
        r#"{"spec": {"name": "s"}, "output": {"figures": [], "tables": [], "data": null}}"#;

    /// Files of generation 1 — every one written before generations were counted — carry no
    /// `numerics` key, and a later generation is written and read back.
    #[test]
    fn study_files_name_their_numerics_generation_from_the_second_on() {
        let first: Stored = serde_json::from_str(WITHOUT).unwrap();
        assert_eq!(first.numerics, 1);
        let text = serde_json::to_string(&first).unwrap();
        assert!(!text.contains("numerics"), "{text}");
        let later = Stored {
            numerics: 2,
            ..first
        };
        let text = serde_json::to_string(&later).unwrap();
        let back: Stored = serde_json::from_str(&text).unwrap();
        assert_eq!(back.numerics, 2);
    }
}
