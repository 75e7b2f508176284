//! Figures: a report's one line per policy (median or mean, as a step function) with a
//! shaded band (quartiles or ± one standard error), regret on a log axis; and a study's
//! figures (joined points with optional bands, optionally a log x-axis).
//!
//! Drawn with plotters' SVG and bitmap backends and a font compiled into the binary (DejaVu
//! Sans through ab_glyph), so no system library or installed font is involved and the PNG is
//! the same on every machine.

use super::{Report, Y};
use crate::spec::XAxis;
use cabo_core::study::Figure;
use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;
use std::sync::Once;

/// Figure size in pixels.
pub const SIZE: (u32, u32) = (960, 600);

/// The Okabe–Ito palette (distinguishable with the common colour-vision deficiencies),
/// ordered so the first lines get the strongest contrast on white, then four colours of
/// Paul Tol's muted scheme so that up to twelve policies get distinct lines; yellow last.
pub const PALETTE: [RGBColor; 12] = [
    RGBColor(0, 114, 178),   // blue
    RGBColor(230, 159, 0),   // orange
    RGBColor(0, 158, 115),   // bluish green
    RGBColor(213, 94, 0),    // vermillion
    RGBColor(204, 121, 167), // reddish purple
    RGBColor(86, 180, 233),  // sky blue
    RGBColor(0, 0, 0),       // black
    RGBColor(136, 34, 85),   // wine
    RGBColor(68, 170, 153),  // teal
    RGBColor(153, 153, 51),  // olive
    RGBColor(51, 34, 136),   // indigo
    RGBColor(240, 228, 66),  // yellow
];

const FONT: &str = "sans-serif";

fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The bytes are a valid TrueType font shipped by the `dejavu` crate; registration
        // cannot fail for them, and a failure would only show as missing text.
        let _ = plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular());
    });
}

/// Everything one figure shows, in plotted units.
struct Chart {
    caption: String,
    x_label: String,
    y_label: String,
    /// Logarithmic y-axis (non-positive values sit at the floor).
    log_y: bool,
    /// Logarithmic x-axis (drawn as log10 x with the labels in x's own units).
    log_x: bool,
    /// Lines are step functions (best-so-far curves) rather than joined points.
    steps: bool,
    series: Vec<Series>,
}

/// A line and its band, ready to draw (in plotted units: 10^v for log10 metrics).
struct Series {
    name: String,
    colour: RGBColor,
    /// (x, centre, low, high) where the centre is known.
    points: Vec<(f64, f64, f64, f64)>,
    /// A diamond at (x, y), e.g. where a policy settles on the optimal control set.
    marker: Option<(f64, f64)>,
}

fn series(report: &Report) -> Vec<Series> {
    let quartiles = super::quartile_bands(report);
    let un = |v: f64| if report.log10 { 10f64.powf(v) } else { v };
    report
        .curves
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let points: Vec<(f64, f64, f64, f64)> = c
                .points
                .iter()
                .filter(|p| p.n > 0)
                .map(|p| {
                    let (mid, lo, hi) = if quartiles {
                        (p.median, p.q25, p.q75)
                    } else if p.stderr.is_nan() {
                        (p.mean, p.mean, p.mean)
                    } else {
                        (p.mean, p.mean - p.stderr, p.mean + p.stderr)
                    };
                    (p.x, un(mid), un(lo), un(hi))
                })
                .collect();
            // The diamond sits on the line: the step value holding at the marker's x.
            let marker = c.marker.filter(|m| m.settled > 0).and_then(|m| {
                let at = points
                    .iter()
                    .rev()
                    .find(|p| p.0 <= m.x_mean)
                    .or(points.first())?;
                Some((m.x_mean, at.1))
            });
            Series {
                name: format!("{} (n = {})", c.policy, c.runs),
                colour: PALETTE[i % PALETTE.len()],
                points,
                marker,
            }
        })
        .collect()
}

fn labels(report: &Report) -> (String, String) {
    let x = match report.input.report.x {
        XAxis::CumulativeCost => "cumulative cost (cost units)".to_string(),
        XAxis::Iteration => "iteration (policy evaluations)".to_string(),
    };
    let stat = if super::quartile_bands(report) {
        "median, quartile band"
    } else {
        "mean ± standard error"
    };
    let y = match &report.y {
        Y::SimpleRegret => format!("simple regret (objective units, log scale; {stat})"),
        Y::BestY => format!("best observed y (objective units; {stat})"),
        Y::BestValue => format!("best noise-free value (objective units; {stat})"),
        Y::Problem(m) => format!("{m} (problem metric; {stat})"),
    };
    (x, y)
}

/// Log-axis ticks at 1, 2 and 5 times each power of ten in range (plotters' own choice
/// leaves ranges within a decade or two almost unlabelled).
fn ticks(lo: f64, hi: f64) -> Vec<f64> {
    let mut out = Vec::new();
    let (a, b) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    for e in a..=b {
        for m in [1.0, 2.0, 5.0] {
            let v = m * 10f64.powi(e);
            if v >= lo && v <= hi {
                out.push(v);
            }
        }
    }
    out
}

/// A tick label: three significant digits, without trailing zeros.
fn tick(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    let a = v.abs();
    if (1e-3..1e5).contains(&a) {
        let decimals = (2 - a.log10().floor() as i32).max(0) as usize;
        let s = format!("{v:.decimals$}");
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    } else {
        format!("{v:.1e}")
    }
}

/// The step function through `pts`: each value holds until the next x.
fn steps(pts: &[(f64, f64)]) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(pts.len() * 2);
    for (i, &(x, y)) in pts.iter().enumerate() {
        if i > 0 {
            out.push((x, pts[i - 1].1));
        }
        out.push((x, y));
    }
    out
}

/// A report's figure.
fn report_chart(report: &Report) -> Chart {
    let (x_label, y_label) = labels(report);
    Chart {
        caption: report.input.name.clone(),
        x_label,
        y_label,
        log_y: report.y == Y::SimpleRegret,
        log_x: false,
        steps: true,
        series: series(report),
    }
}

/// A study's figure (or a report's runtime figure, on a log y-axis).
fn study_chart(figure: &Figure, log_y: bool) -> Chart {
    let x = |v: f64| if figure.log_x { v.log10() } else { v };
    Chart {
        caption: figure.title.clone(),
        x_label: figure.x_label.clone(),
        y_label: figure.y_label.clone(),
        log_y,
        log_x: figure.log_x,
        steps: false,
        series: figure
            .series
            .iter()
            .enumerate()
            .map(|(i, s)| Series {
                name: s.name.clone(),
                colour: PALETTE[i % PALETTE.len()],
                points: s
                    .points
                    .iter()
                    .filter(|p| p.x.is_finite() && (!figure.log_x || p.x > 0.0))
                    .map(|p| (x(p.x), p.y, p.low.unwrap_or(p.y), p.high.unwrap_or(p.y)))
                    .collect(),
                marker: None,
            })
            .collect(),
    }
}

fn draw<DB: DrawingBackend>(root: DrawingArea<DB, Shift>, chart: &Chart) -> Result<(), String> {
    register_font();
    let err = |e: DrawingAreaErrorKind<DB::ErrorType>| format!("cannot draw the figure: {e}");
    root.fill(&WHITE).map_err(err)?;
    let all = &chart.series;
    let xs = all.iter().flat_map(|s| s.points.iter().map(|p| p.0));
    let (x0, x1) = xs.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), x| {
        (a.min(x), b.max(x))
    });
    let (x0, x1) = if x0.is_finite() && x1 > x0 {
        (x0, x1)
    } else {
        (0.0, 1.0)
    };
    let log = chart.log_y;
    let ys: Vec<f64> = all
        .iter()
        .flat_map(|s| s.points.iter().flat_map(|p| [p.1, p.2, p.3]))
        .filter(|v| v.is_finite() && (!log || *v > 0.0))
        .collect();
    let lo = ys.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = ys.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let caption = chart.caption.clone();
    if log {
        // Zero regret (the optimum found exactly) cannot sit on a log axis: it is drawn at
        // the floor, half a decade below the smallest positive value.
        let (lo, hi) = if lo.is_finite() {
            (lo / 10f64.sqrt(), hi * 10f64.sqrt())
        } else {
            (1e-6, 1.0)
        };
        let floor = lo;
        let plot = ChartBuilder::on(&root)
            .caption(caption, (FONT, 26))
            .margin(16)
            .x_label_area_size(56)
            .y_label_area_size(90)
            .build_cartesian_2d(x0..x1, (lo..hi).log_scale().with_key_points(ticks(lo, hi)))
            .map_err(err)?;
        finish(plot, chart, |v| v.max(floor)).map_err(err)?;
    } else {
        let (lo, hi) = if lo.is_finite() && hi > lo {
            let pad = 0.05 * (hi - lo);
            (lo - pad, hi + pad)
        } else if lo.is_finite() {
            (lo - 1.0, lo + 1.0)
        } else {
            (0.0, 1.0)
        };
        let plot = ChartBuilder::on(&root)
            .caption(caption, (FONT, 26))
            .margin(16)
            .x_label_area_size(56)
            .y_label_area_size(90)
            .build_cartesian_2d(x0..x1, lo..hi)
            .map_err(err)?;
        finish(plot, chart, |v| v).map_err(err)?;
    }
    root.present().map_err(err)
}

fn finish<'a, DB, Y>(
    mut plot: ChartContext<'a, DB, Cartesian2d<plotters::coord::types::RangedCoordf64, Y>>,
    chart: &Chart,
    clamp: impl Fn(f64) -> f64,
) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>>
where
    DB: DrawingBackend + 'a,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
    std::ops::Range<f64>: AsRangedCoord,
{
    let shape = |pts: Vec<(f64, f64)>| if chart.steps { steps(&pts) } else { pts };
    let x_tick = |v: &f64| {
        if chart.log_x {
            tick(10f64.powf(*v))
        } else {
            tick(*v)
        }
    };
    plot.configure_mesh()
        .x_desc(chart.x_label.as_str())
        .y_desc(chart.y_label.as_str())
        .label_style((FONT, 15))
        .axis_desc_style((FONT, 17))
        .y_labels(12)
        .y_label_formatter(&|v| tick(*v))
        .x_label_formatter(&x_tick)
        .light_line_style(RGBColor(246, 246, 246))
        .bold_line_style(RGBColor(215, 215, 215))
        .draw()?;
    for s in &chart.series {
        let band: Vec<(f64, f64)> = {
            let upper = shape(s.points.iter().map(|p| (p.0, clamp(p.3))).collect());
            let lower = shape(s.points.iter().map(|p| (p.0, clamp(p.2))).collect());
            upper.into_iter().chain(lower.into_iter().rev()).collect()
        };
        if band.len() > 2 {
            plot.draw_series(std::iter::once(Polygon::new(
                band,
                s.colour.mix(0.18).filled(),
            )))?;
        }
        let line = shape(s.points.iter().map(|p| (p.0, clamp(p.1))).collect());
        let colour = s.colour;
        if !chart.steps {
            plot.draw_series(line.iter().map(|&p| Circle::new(p, 4, colour.filled())))?;
        }
        plot.draw_series(LineSeries::new(line, colour.stroke_width(3)))?
            .label(s.name.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 24, y)], colour.stroke_width(3))
            });
        if let Some((x, y)) = s.marker {
            let diamond = vec![(0, -9), (9, 0), (0, 9), (-9, 0)];
            plot.draw_series(std::iter::once(
                EmptyElement::at((x, clamp(y)))
                    + Polygon::new(diamond.clone(), colour.filled())
                    + PathElement::new(
                        diamond.into_iter().chain([(0, -9)]).collect::<Vec<_>>(),
                        BLACK.stroke_width(1),
                    ),
            ))?;
        }
    }
    plot.configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .label_font((FONT, 16))
        .background_style(WHITE.mix(0.85))
        .border_style(RGBColor(120, 120, 120))
        .draw()?;
    Ok(())
}

/// The report's figure as SVG text.
pub fn svg(report: &Report) -> Result<String, String> {
    chart_svg(&report_chart(report))
}

/// The report's figure as PNG bytes.
pub fn png(report: &Report) -> Result<Vec<u8>, String> {
    chart_png(&report_chart(report))
}

/// A study's figure as SVG text.
pub fn figure_svg(figure: &Figure) -> Result<String, String> {
    chart_svg(&study_chart(figure, false))
}

/// A study's figure as PNG bytes.
pub fn figure_png(figure: &Figure) -> Result<Vec<u8>, String> {
    chart_png(&study_chart(figure, false))
}

/// A figure of times as SVG text: joined points with their bands on a log y-axis, since
/// the policies compared may differ by orders of magnitude.
pub fn times_svg(figure: &Figure) -> Result<String, String> {
    chart_svg(&study_chart(figure, true))
}

/// A figure of times as PNG bytes (see [`times_svg`]).
pub fn times_png(figure: &Figure) -> Result<Vec<u8>, String> {
    chart_png(&study_chart(figure, true))
}

fn chart_svg(chart: &Chart) -> Result<String, String> {
    let mut out = String::new();
    draw(
        SVGBackend::with_string(&mut out, SIZE).into_drawing_area(),
        chart,
    )?;
    Ok(out)
}

fn chart_png(chart: &Chart) -> Result<Vec<u8>, String> {
    let (w, h) = SIZE;
    let mut rgb = vec![0u8; (w * h * 3) as usize];
    draw(
        BitMapBackend::with_buffer(&mut rgb, SIZE).into_drawing_area(),
        chart,
    )?;
    encode_png(&rgb, w, h)
}

/// Encodes an RGB buffer as PNG (deterministic: no timestamps or text chunks are written).
fn encode_png(rgb: &[u8], w: u32, h: u32) -> Result<Vec<u8>, String> {
    use image::ImageEncoder;
    let mut out = Vec::new();
    image::codecs::png::PngEncoder::new(&mut out)
        .write_image(rgb, w, h, image::ColorType::Rgb8)
        .map_err(|e| format!("cannot encode the PNG figure: {e}"))?;
    Ok(out)
}
