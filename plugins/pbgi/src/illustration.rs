//! Seed 000's Figure 3 (left) as a study (`pbgi_contours`): how EI and the Pandora's Box
//! Gittins index depend on a point's posterior mean μ and standard deviation σ, for a fixed
//! best observed value `y*` and cost `c`.
//!
//! On a (μ, σ) grid it tabulates `EI(μ, σ; y*)` and, for each λ, the index `g(μ, σ)` solving
//! `EI(μ, σ; g) = λc` (eq. 6). The figure's contours are drawn exactly, not read off the grid:
//! both functions increase strictly in σ, so each contour is the graph `σ(μ)` found by
//! bisection at every grid mean.
//!
//! The findings are computed from the grid:
//!
//! - how many pairs of grid points the two acquisitions rank in opposite orders, and the pair
//!   where EI's preference is clearest while PBGI's is the other way;
//! - where PBGI "values high standard deviation more than EI" (the paper's reading of the
//!   figure): where the rate at which it trades mean for standard deviation along a contour,
//!   `(∂/∂σ)/(∂/∂μ)`, exceeds EI's. That rate is `φ(v)/Φ(v)` for both, at `v = (μ − g)/σ` and
//!   `v = (μ − y*)/σ` respectively, and `φ/Φ` decreases, so the region is exactly
//!   `g > y*`; the study counts both and states whether they agree;
//! - that `g ≥ y*` exactly where `EI(μ, σ; y*) ≥ λc` (the Pandora stopping rule's boundary
//!   is the index's contour at `y*`).

use crate::index::{gittins_index, gittins_index_grad};
use cabo_core::normal;
use cabo_core::study::{
    Cell, Figure, Series, SeriesPoint, StudyContext, StudyOutput, Table, significant,
};
use cabo_core::{Error, Result, StudySpec};
use cabo_toolkit::numerics::{ei, log_h_grad};
use serde::{Deserialize, Serialize};

/// Bisection steps of a contour point: halves the σ range below 1e-30 of its width.
const BISECTION_STEPS: usize = 100;

/// Spec of the Figure 3 (left) study. The paper's text gives neither the grid nor the λ
/// values of its panels; the defaults are stated in `specs/pbgi/figure-3-left.yaml`.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContoursSpec {
    /// The best observed value `y*` EI improves on.
    #[serde(default)]
    pub best: f64,
    /// The point's cost `c` (> 0).
    #[serde(default = "default_cost")]
    pub cost: f64,
    /// One PBGI panel per λ (> 0); the paper shows two, a large and a small one.
    #[serde(default = "default_lambdas")]
    pub lambdas: Vec<f64>,
    /// `[low, high]` of the posterior mean axis.
    #[serde(default = "default_mean_range")]
    pub mean_range: [f64; 2],
    /// Grid points on the mean axis (≥ 2).
    #[serde(default = "default_mean_points")]
    pub mean_points: usize,
    /// `[low, high]` of the posterior standard deviation axis (low > 0).
    #[serde(default = "default_sd_range")]
    pub sd_range: [f64; 2],
    /// Grid points on the standard deviation axis (≥ 2).
    #[serde(default = "default_sd_points")]
    pub sd_points: usize,
    /// Contour lines per panel, evenly spaced strictly inside the grid's range of values.
    #[serde(default = "default_levels")]
    pub levels: usize,
}

fn default_cost() -> f64 {
    1.0
}
fn default_lambdas() -> Vec<f64> {
    vec![0.1, 1e-4]
}
fn default_mean_range() -> [f64; 2] {
    [-1.0, 1.0]
}
fn default_mean_points() -> usize {
    41
}
fn default_sd_range() -> [f64; 2] {
    [0.025, 1.0]
}
fn default_sd_points() -> usize {
    40
}
fn default_levels() -> usize {
    6
}

/// Checks that a range is finite and increasing, and (for σ) positive.
fn check_range(key: &str, r: [f64; 2], positive: bool) -> Result<()> {
    let ok = r[0].is_finite() && r[1].is_finite() && r[0] < r[1] && (!positive || r[0] > 0.0);
    if ok {
        Ok(())
    } else {
        let need = if positive {
            "0 < low < high"
        } else {
            "low < high"
        };
        Err(Error::invalid(format!(
            "{key}: expected [low, high] with {need}, both finite, got [{}, {}]",
            r[0], r[1]
        )))
    }
}

/// A side of the figure's grid: at least 2 points, and the grid (both sides' product) is
/// evaluated point by point.
fn check_points(key: &str, n: usize) -> Result<()> {
    cabo_core::check_count(key, n, 2..=10_000)
}

#[cabo_core::plugin(
    name = "pbgi_contours",
    summary = "Figure 3 (left): EI and the Pandora's Box Gittins index over the posterior mean and standard deviation, their contours and where they rank points differently",
    paper = "000_17f2320b43a6a4bf Fig. 3 (left)",
    example = "{ type: pbgi_contours, lambdas: [0.1, 0.0001], mean_points: 9, sd_points: 8 }"
)]
impl StudySpec for ContoursSpec {
    fn validate(&self) -> Result<()> {
        if !self.best.is_finite() {
            return Err(Error::invalid(format!(
                "best: must be finite, got {}",
                self.best
            )));
        }
        if !(self.cost.is_finite() && self.cost > 0.0) {
            return Err(Error::invalid(format!(
                "cost: must be positive and finite, got {}",
                self.cost
            )));
        }
        if self.lambdas.is_empty() {
            return Err(Error::invalid("lambdas: name at least one λ"));
        }
        if let Some(l) = self.lambdas.iter().find(|l| !(l.is_finite() && **l > 0.0)) {
            return Err(Error::invalid(format!(
                "lambdas: every λ must be positive and finite, got {l}"
            )));
        }
        check_range("mean_range", self.mean_range, false)?;
        check_range("sd_range", self.sd_range, true)?;
        check_points("mean_points", self.mean_points)?;
        check_points("sd_points", self.sd_points)?;
        cabo_core::check_count("levels", self.levels, 1..=1_000)?;
        Ok(())
    }

    fn run(&self, _: &StudyContext) -> Result<StudyOutput> {
        self.validate()?;
        let grid = AcquisitionGrid::compute(self)?;
        output(self, &grid)
    }
}

/// `n` evenly spaced points from `r[0]` to `r[1]`, both included.
fn axis(r: [f64; 2], n: usize) -> Vec<f64> {
    let step = (r[1] - r[0]) / (n - 1) as f64;
    (0..n)
        .map(|i| {
            if i + 1 == n {
                r[1]
            } else {
                r[0] + step * i as f64
            }
        })
        .collect()
}

/// EI and the indices on the grid, points ordered mean-major (`k = i·sd_points + j`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AcquisitionGrid {
    /// The mean axis.
    pub means: Vec<f64>,
    /// The standard deviation axis.
    pub sds: Vec<f64>,
    /// `EI(μ, σ; y*)` per point.
    pub ei: Vec<f64>,
    /// Per λ: `g(μ, σ)` per point.
    pub index: Vec<Vec<f64>>,
}

impl AcquisitionGrid {
    /// Evaluates both acquisitions at every grid point.
    pub fn compute(spec: &ContoursSpec) -> Result<Self> {
        let means = axis(spec.mean_range, spec.mean_points);
        let sds = axis(spec.sd_range, spec.sd_points);
        let points: Vec<(f64, f64)> = means
            .iter()
            .flat_map(|&m| sds.iter().map(move |&s| (m, s)))
            .collect();
        let ei_values = points.iter().map(|&(m, s)| ei(m, s, spec.best)).collect();
        let index = spec
            .lambdas
            .iter()
            .map(|&l| {
                points
                    .iter()
                    .map(|&(m, s)| index_at(m, s, l * spec.cost))
                    .collect::<Result<Vec<f64>>>()
            })
            .collect::<Result<_>>()?;
        Ok(AcquisitionGrid {
            means,
            sds,
            ei: ei_values,
            index,
        })
    }

    /// `(μ, σ)` of point `k`.
    pub fn point(&self, k: usize) -> (f64, f64) {
        let n = self.sds.len();
        (self.means[k / n], self.sds[k % n])
    }

    /// Number of grid points.
    pub fn len(&self) -> usize {
        self.ei.len()
    }

    /// Whether the grid is empty (never, for a validated spec).
    pub fn is_empty(&self) -> bool {
        self.ei.is_empty()
    }
}

fn index_at(mean: f64, sd: f64, kappa: f64) -> Result<f64> {
    gittins_index(mean, sd, kappa).ok_or_else(|| {
        Error::numerical(format!(
            "no Gittins index at mean {mean}, sd {sd}, λc {kappa}"
        ))
    })
}

/// `φ(v)/Φ(v)`, the rate `(∂/∂σ)/(∂/∂μ)` of `σ·h((μ − t)/σ)` at `v = (μ − t)/σ`, without
/// dividing by an underflowing `Φ`: below `v = −1`, `φ/Φ = 1/ψ − v` with `ψ = (ln h)'`.
pub fn exchange_rate(v: f64) -> f64 {
    if v > -1.0 {
        normal::pdf(v) / normal::cdf(v)
    } else {
        1.0 / log_h_grad(v).1 - v
    }
}

/// How EI and one λ's index compare on the grid.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    /// λ.
    pub lambda: f64,
    /// Pairs of points both acquisitions order strictly.
    pub comparable_pairs: u64,
    /// Of those, the pairs they order oppositely.
    pub discordant_pairs: u64,
    /// The discordant pair with the largest EI gap: (EI's preferred point, the other).
    pub clearest: Option<(usize, usize)>,
    /// Points where PBGI's exchange rate of mean for σ exceeds EI's.
    pub values_sd_more: usize,
    /// Points where `g > y*`.
    pub index_above_best: usize,
    /// Points where `g ≥ y*` and `EI(y*) ≥ λc` disagree.
    pub stopping_rule_mismatches: usize,
}

impl Comparison {
    /// Compares EI with the index of λ number `which` on `grid`.
    pub fn compute(spec: &ContoursSpec, grid: &AcquisitionGrid, which: usize) -> Result<Self> {
        let lambda = spec.lambdas[which];
        let kappa = lambda * spec.cost;
        let g = &grid.index[which];
        let (mut comparable, mut discordant) = (0u64, 0u64);
        let mut clearest: Option<(usize, usize, f64)> = None;
        for a in 0..grid.len() {
            for b in a + 1..grid.len() {
                let (de, dg) = (grid.ei[a] - grid.ei[b], g[a] - g[b]);
                if de == 0.0 || dg == 0.0 {
                    continue;
                }
                comparable += 1;
                if (de > 0.0) != (dg > 0.0) {
                    discordant += 1;
                    let (hi, lo) = if de > 0.0 { (a, b) } else { (b, a) };
                    if clearest.is_none_or(|c| de.abs() > c.2) {
                        clearest = Some((hi, lo, de.abs()));
                    }
                }
            }
        }
        let (mut values_sd_more, mut above, mut mismatches) = (0, 0, 0);
        for (k, &gk) in g.iter().enumerate() {
            let (m, s) = grid.point(k);
            let rate_pbgi = gittins_index_grad(m, s, kappa)
                .ok_or_else(|| Error::numerical("no Gittins index gradient"))?
                .d_sigma;
            let rate_ei = exchange_rate((m - spec.best) / s);
            values_sd_more += usize::from(rate_pbgi > rate_ei);
            above += usize::from(gk > spec.best);
            mismatches += usize::from((gk >= spec.best) != (grid.ei[k] >= kappa));
        }
        Ok(Comparison {
            lambda,
            comparable_pairs: comparable,
            discordant_pairs: discordant,
            clearest: clearest.map(|c| (c.0, c.1)),
            values_sd_more,
            index_above_best: above,
            stopping_rule_mismatches: mismatches,
        })
    }

    /// The share of comparable pairs ranked oppositely.
    pub fn discordant_share(&self) -> f64 {
        self.discordant_pairs as f64 / self.comparable_pairs.max(1) as f64
    }
}

/// The contour `f(μ, σ) = level` of a function strictly increasing in σ: for each mean, the σ
/// in `[sd_lo, sd_hi]` where it is reached, found by bisection (means where the level lies
/// outside `[f(μ, sd_lo), f(μ, sd_hi)]` are skipped).
pub fn contour_line(
    f: &dyn Fn(f64, f64) -> f64,
    level: f64,
    means: &[f64],
    [sd_lo, sd_hi]: [f64; 2],
) -> Vec<(f64, f64)> {
    let mut line = Vec::new();
    for &m in means {
        if !(f(m, sd_lo) <= level && level <= f(m, sd_hi)) {
            continue;
        }
        let (mut lo, mut hi) = (sd_lo, sd_hi);
        for _ in 0..BISECTION_STEPS {
            let mid = 0.5 * (lo + hi);
            if f(m, mid) < level {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        line.push((m, 0.5 * (lo + hi)));
    }
    line
}

/// `levels` values evenly spaced strictly between the smallest and largest of `values`.
fn contour_levels(values: &[f64], levels: usize) -> Vec<f64> {
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (1..=levels)
        .map(|k| lo + (hi - lo) * k as f64 / (levels + 1) as f64)
        .collect()
}

/// A panel of contour lines (x: μ, y: σ), one series per level.
fn contour_figure(
    name: String,
    title: String,
    label: &str,
    f: &dyn Fn(f64, f64) -> f64,
    values: &[f64],
    spec: &ContoursSpec,
    means: &[f64],
) -> Figure {
    let series = contour_levels(values, spec.levels)
        .into_iter()
        .map(|level| Series {
            name: format!("{label} = {}", significant(level, 4)),
            points: contour_line(f, level, means, spec.sd_range)
                .into_iter()
                .map(|(x, y)| SeriesPoint {
                    x,
                    y,
                    low: None,
                    high: None,
                })
                .collect(),
        })
        .filter(|s| s.points.len() >= 2)
        .collect();
    Figure {
        name,
        title,
        x_label: "posterior mean μ".into(),
        y_label: "posterior standard deviation σ".into(),
        log_x: false,
        series,
    }
}

/// A file-name-safe rendering of λ (`0.0001` → `1e-4`).
fn lambda_tag(l: f64) -> String {
    let s = format!("{l:e}");
    s.replace('.', "p")
}

/// A finer axis for contour lines than the grid, so lines are smooth on coarse grids.
fn fine_means(spec: &ContoursSpec) -> Vec<f64> {
    axis(spec.mean_range, 81)
}

fn output(spec: &ContoursSpec, grid: &AcquisitionGrid) -> Result<StudyOutput> {
    let comparisons = (0..spec.lambdas.len())
        .map(|w| Comparison::compute(spec, grid, w))
        .collect::<Result<Vec<_>>>()?;
    let means = fine_means(spec);
    let best = spec.best;
    let mut figures = vec![contour_figure(
        "figure-3-left-ei".into(),
        format!("Figure 3 (left): EI(μ, σ; y* = {best}) contours"),
        "EI",
        &|m, s| ei(m, s, best),
        &grid.ei,
        spec,
        &means,
    )];
    for (w, &lambda) in spec.lambdas.iter().enumerate() {
        let kappa = lambda * spec.cost;
        figures.push(contour_figure(
            format!("figure-3-left-pbgi-lambda-{}", lambda_tag(lambda)),
            format!(
                "Figure 3 (left): PBGI contours, λ = {lambda}, c = {}",
                spec.cost
            ),
            "g",
            &|m, s| gittins_index(m, s, kappa).unwrap_or(f64::NAN),
            &grid.index[w],
            spec,
            &means,
        ));
    }
    let mut columns = vec!["μ".to_string(), "σ".to_string(), "EI".to_string()];
    columns.extend(spec.lambdas.iter().map(|l| format!("g (λ = {l})")));
    let rows = (0..grid.len())
        .map(|k| {
            let (m, s) = grid.point(k);
            let mut row = vec![Cell::from(m), s.into(), grid.ei[k].into()];
            row.extend(grid.index.iter().map(|g| Cell::from(g[k])));
            row
        })
        .collect();
    Ok(StudyOutput {
        figures,
        tables: vec![
            Table {
                name: "figure-3-left".into(),
                title: format!(
                    "EI and the Gittins index g on the (μ, σ) grid (y* = {best}, c = {})",
                    spec.cost
                ),
                columns,
                rows,
            },
            summary_table(spec, grid, &comparisons),
        ],
        findings: comparisons.iter().map(|c| finding(spec, grid, c)).collect(),
        data: serde_json::json!({ "grid": grid, "comparisons": comparisons }),
        measurements: Vec::new(),
    })
}

fn summary_table(spec: &ContoursSpec, grid: &AcquisitionGrid, cs: &[Comparison]) -> Table {
    let columns = [
        "λ",
        "λc",
        "pairs ranked oppositely",
        "share of comparable pairs",
        "points where PBGI values σ more",
        "points with g > y*",
        "points",
    ];
    Table {
        name: "figure-3-left-rankings".into(),
        title: format!("Where EI and PBGI disagree (y* = {})", spec.best),
        columns: columns.iter().map(|c| c.to_string()).collect(),
        rows: cs
            .iter()
            .map(|c| {
                vec![
                    Cell::from(c.lambda),
                    (c.lambda * spec.cost).into(),
                    (c.discordant_pairs as f64).into(),
                    c.discordant_share().into(),
                    (c.values_sd_more as f64).into(),
                    (c.index_above_best as f64).into(),
                    (grid.len() as f64).into(),
                ]
            })
            .collect(),
    }
}

fn describe(grid: &AcquisitionGrid, g: &[f64], k: usize) -> String {
    let (m, s) = grid.point(k);
    format!(
        "(μ = {}, σ = {}: EI {}, g {})",
        significant(m, 4),
        significant(s, 4),
        significant(grid.ei[k], 4),
        significant(g[k], 4)
    )
}

fn finding(spec: &ContoursSpec, grid: &AcquisitionGrid, c: &Comparison) -> String {
    let w = spec
        .lambdas
        .iter()
        .position(|&l| l == c.lambda)
        .unwrap_or(0);
    let g = &grid.index[w];
    let pair = c.clearest.map_or_else(
        || "no pair of grid points is ranked oppositely".to_string(),
        |(a, b)| {
            format!(
                "the clearest case: EI prefers {} to {}, PBGI the other way",
                describe(grid, g, a),
                describe(grid, g, b)
            )
        },
    );
    let agree = if c.values_sd_more == c.index_above_best {
        "exactly where g > y*, as φ/Φ decreasing predicts"
    } else {
        "NOT only where g > y*, against what φ/Φ decreasing predicts"
    };
    format!(
        "λ = {}: EI and PBGI rank {} of {} comparable pairs of grid points oppositely ({:.2}%); {pair}. PBGI trades more mean for σ than EI at {} of {} points, {agree} ({} points); g ≥ y* and EI(y*) ≥ λc (the Pandora stopping rule) disagree at {} points.",
        c.lambda,
        c.discordant_pairs,
        c.comparable_pairs,
        100.0 * c.discordant_share(),
        c.values_sd_more,
        grid.len(),
        c.index_above_best,
        c.stopping_rule_mismatches
    )
}
