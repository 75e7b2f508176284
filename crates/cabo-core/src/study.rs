//! Studies: experiments that are not a sequential decision loop.
//!
//! A comparison spec runs policies against a problem, one evaluation at a time. Some of the
//! papers' results are not of that shape: seed 003's Figures 5.2 and 5.3 solve a dynamic
//! program per cost and evaluate its policies by 100 000 Monte Carlo runs, then plot value
//! against cost. A plugin expresses such an experiment as a [`StudySpec`] (`study:` in a
//! spec file); the runner executes it, stores its [`StudyOutput`] and draws its figures, so
//! a study is reproduced with `cargo xtask run` like every other experiment.

use crate::Result;
use serde::{Deserialize, Serialize};
use std::fmt::Debug;

/// What a study needs from the runner.
#[derive(Debug, Clone, Copy)]
pub struct StudyContext {
    /// Base seed: the study derives every random stream from it, so results depend on the
    /// spec alone (never on thread count).
    pub seed: u64,
}

/// A study as written in a spec (`study: { type: markov_cost_sweep, … }`).
#[typetag::serde(tag = "type")]
pub trait StudySpec: Debug + Send + Sync + dyn_clone::DynClone {
    /// Rejects bad parameters before anything runs.
    fn validate(&self) -> Result<()>;

    /// Runs the study. It may use rayon internally; its output must not depend on how many
    /// threads there are.
    fn run(&self, ctx: &StudyContext) -> Result<StudyOutput>;
}

dyn_clone::clone_trait_object!(StudySpec);

/// Everything a study produced: figures to draw, tables to print and the raw results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StudyOutput {
    /// Figures, each drawn to `<name>.svg` and `<name>.png`.
    pub figures: Vec<Figure>,
    /// Tables, printed in the report and written as `<name>.csv`.
    pub tables: Vec<Table>,
    /// Sentences the report states as findings (e.g. a paper's claim and whether it held).
    #[serde(default)]
    pub findings: Vec<String>,
    /// The full results in the study's own format (kept in `study.json`).
    #[serde(default)]
    pub data: serde_json::Value,
    /// Named measurements that depend on the machine or the thread count (wall-clock
    /// seconds, peak memory). Kept out of `study.json`, which must be the same everywhere,
    /// and written to `study.times.json`.
    #[serde(skip)]
    pub measurements: Vec<(String, f64)>,
}

/// A line plot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Figure {
    /// File stem (letters, digits, `-`, `_`).
    pub name: String,
    /// Title drawn above the plot.
    pub title: String,
    /// x-axis label.
    pub x_label: String,
    /// y-axis label.
    pub y_label: String,
    /// Logarithmic x-axis.
    #[serde(default)]
    pub log_x: bool,
    /// One line per series.
    pub series: Vec<Series>,
}

/// One line, with an optional band.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Series {
    /// Legend entry.
    pub name: String,
    /// Points in increasing x.
    pub points: Vec<SeriesPoint>,
}

/// One point of a series: a value and, when known, a band around it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SeriesPoint {
    /// Position.
    pub x: f64,
    /// Value.
    pub y: f64,
    /// Lower end of the band (e.g. mean − 2 standard errors), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub low: Option<f64>,
    /// Upper end of the band, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub high: Option<f64>,
}

/// A table of numbers with named columns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Table {
    /// File stem of its CSV.
    pub name: String,
    /// Heading in the report.
    pub title: String,
    /// Column names.
    pub columns: Vec<String>,
    /// Rows, each as long as `columns`.
    pub rows: Vec<Vec<Cell>>,
}

/// A table cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Cell {
    /// A number.
    Number(f64),
    /// A label.
    Text(String),
}

impl From<f64> for Cell {
    fn from(v: f64) -> Self {
        Cell::Number(v)
    }
}

impl From<&str> for Cell {
    fn from(v: &str) -> Self {
        Cell::Text(v.to_string())
    }
}

impl From<String> for Cell {
    fn from(v: String) -> Self {
        Cell::Text(v)
    }
}

/// `v` rounded to `digits` significant digits and written back as a plain number
/// (`0.20833333333333304` → `0.2083` for 4), for legends and findings where grid levels
/// carry rounding noise.
pub fn significant(v: f64, digits: usize) -> String {
    let decimals = digits.saturating_sub(1);
    format!("{v:.decimals$e}")
        .parse::<f64>()
        .map_or_else(|_| v.to_string(), |x| x.to_string())
}
