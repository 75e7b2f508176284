//! Figures: a report's one line per policy (median or mean, as a step function) with a
//! shaded band (quartiles or ± one standard error), regret on a log axis; and a study's
//! figures (joined points with optional bands, optionally a log x-axis).
//!
//! Drawn with plotters' SVG and bitmap backends and a font compiled into the binary (DejaVu
//! Sans through ab_glyph), so no system library or installed font is involved and the PNG is
//! the same on every machine.

use super::{Report, Y};
use cabo_core::study::Figure;
use cabo_spec::XAxis;
use plotters::coord::Shift;
use plotters::coord::ranged1d::{AsRangedCoord, ValueFormatter};
use plotters::prelude::*;
use std::sync::Once;

/// Figure size in pixels.
pub const SIZE: (u32, u32) = (960, 600);

/// The Okabe–Ito palette (distinguishable with the common colour-vision deficiencies),
/// ordered so that neighbours in a legend differ in hue and lightness (blue, vermillion,
/// bluish green, reddish purple, …: orange and vermillion, or blue and sky blue, are never
/// next to each other), then four colours of Paul Tol's muted scheme so that up to twelve
/// policies get distinct lines; yellow last. Each line also gets its own dash pattern
/// ([`DASHES`]), so no two lines rely on colour alone.
pub const PALETTE: [RGBColor; 12] = [
    RGBColor(0, 114, 178),   // blue
    RGBColor(213, 94, 0),    // vermillion
    RGBColor(0, 158, 115),   // bluish green
    RGBColor(204, 121, 167), // reddish purple
    RGBColor(0, 0, 0),       // black
    RGBColor(230, 159, 0),   // orange
    RGBColor(86, 180, 233),  // sky blue
    RGBColor(136, 34, 85),   // wine
    RGBColor(68, 170, 153),  // teal
    RGBColor(153, 153, 51),  // olive
    RGBColor(51, 34, 136),   // indigo
    RGBColor(240, 228, 66),  // yellow
];

/// Dash patterns, (dash, gap) in pixels, one per line in the palette's order: solid, then
/// long dashes, dots, short dashes and very long dashes, with widening gaps (`None` is solid).
pub const DASHES: [Option<(u32, u32)>; 6] = [
    None,
    Some((16, 6)),
    Some((3, 5)),
    Some((8, 5)),
    Some((28, 8)),
    Some((3, 10)),
];

const FONT: &str = "sans-serif";

/// Length in pixels of a legend's line sample.
const LEGEND_SAMPLE: i32 = 40;

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
    /// (dash, gap) in pixels, or `None` for a solid line.
    dash: Option<(u32, u32)>,
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
                dash: DASHES[i % DASHES.len()],
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
        XAxis::WallTime => "wall time (cost units, simulated workers)".to_string(),
    };
    let stat = if super::quartile_bands(report) {
        "median, quartile band"
    } else {
        "mean ± standard error"
    };
    // cabo maximises y: regrets fall and best values rise as a policy does well.
    let y = match &report.y {
        Y::SimpleRegret => format!("simple regret, lower is better (log scale; {stat})"),
        Y::BestY => format!("best observed y, higher is better ({stat})"),
        Y::BestValue => format!("best noise-free value, higher is better ({stat})"),
        Y::Problem(m) if m.contains("regret") => format!("{m}, lower is better ({stat})"),
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

/// How an axis writes its tick labels: every label of an axis the same way, so that a log
/// axis never mixes `5.0e-4` with `0.001`.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Notation {
    /// Decimals: `0.002`, `15`, `1200`.
    Plain,
    /// Powers of ten: `5e-4`, `1e-3`, `2.5e6`.
    Scientific,
}

impl Notation {
    /// Plain where every label from `smallest` to `largest` (magnitudes of the nonzero
    /// ticks) reads well as a decimal, scientific otherwise.
    fn for_ticks(smallest: f64, largest: f64) -> Self {
        if smallest >= 1e-3 && largest < 1e5 {
            Notation::Plain
        } else {
            Notation::Scientific
        }
    }

    /// The notation of a linear axis over `lo..hi`: its ticks are about a tenth of the
    /// range apart.
    fn for_range(lo: f64, hi: f64) -> Self {
        let largest = lo.abs().max(hi.abs());
        let step = (hi - lo).abs() / 10.0;
        if !largest.is_finite() || largest == 0.0 {
            return Notation::Plain;
        }
        Notation::for_ticks(step.min(largest), largest)
    }

    /// A tick label: three significant digits, without trailing zeros.
    fn label(self, v: f64) -> String {
        if v == 0.0 {
            return "0".into();
        }
        match self {
            Notation::Plain => {
                let decimals = (2 - v.abs().log10().floor() as i32).max(0) as usize;
                trim_zeros(&format!("{v:.decimals$}"))
            }
            Notation::Scientific => {
                let s = format!("{v:.2e}");
                let (mantissa, exponent) = s.split_once('e').unwrap_or((&s, "0"));
                format!("{}e{exponent}", trim_zeros(mantissa))
            }
        }
    }
}

/// A decimal without trailing zeros (or point).
fn trim_zeros(s: &str) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s.to_string()
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
                dash: DASHES[i % DASHES.len()],
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
    let x_notation = if chart.log_x {
        Notation::for_ticks(10f64.powf(x0), 10f64.powf(x1))
    } else {
        Notation::for_range(x0, x1)
    };
    if log {
        // Zero regret (the optimum found exactly) cannot sit on a log axis: it is drawn at
        // the floor, half a decade below the smallest positive value.
        let (lo, hi) = if lo.is_finite() {
            (lo / 10f64.sqrt(), hi * 10f64.sqrt())
        } else {
            (1e-6, 1.0)
        };
        let floor = lo;
        let key = ticks(lo, hi);
        let y_notation = match (key.first(), key.last()) {
            (Some(&a), Some(&b)) => Notation::for_ticks(a, b),
            _ => Notation::for_ticks(lo, hi),
        };
        let plot = ChartBuilder::on(&root)
            .caption(caption, (FONT, 26))
            .margin(16)
            .x_label_area_size(56)
            .y_label_area_size(90)
            .build_cartesian_2d(x0..x1, (lo..hi).log_scale().with_key_points(key))
            .map_err(err)?;
        let axes = (x_notation, y_notation);
        finish(plot, chart, axes, |v| v.max(floor)).map_err(err)?;
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
        let axes = (x_notation, Notation::for_range(lo, hi));
        finish(plot, chart, axes, |v| v).map_err(err)?;
    }
    root.present().map_err(err)
}

/// Draws a chart into its prepared coordinates: the mesh, then each series' band, line,
/// legend entry and marker, then the legend. One function because every step draws on the
/// same plotters `ChartContext`, whose type (generic in the backend and the y coordinate)
/// each helper would have to restate with its bounds; the body reads in drawing order.
fn finish<'a, DB, Y>(
    mut plot: ChartContext<'a, DB, Cartesian2d<plotters::coord::types::RangedCoordf64, Y>>,
    chart: &Chart,
    (x_notation, y_notation): (Notation, Notation),
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
            x_notation.label(10f64.powf(*v))
        } else {
            x_notation.label(*v)
        }
    };
    plot.configure_mesh()
        .x_desc(chart.x_label.as_str())
        .y_desc(chart.y_label.as_str())
        .label_style((FONT, 15))
        .axis_desc_style((FONT, 17))
        .y_labels(12)
        .y_label_formatter(&|v| y_notation.label(*v))
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
        let style = colour.stroke_width(3);
        let legend = match s.dash {
            None => plot.draw_series(LineSeries::new(line, style))?,
            Some((dash, gap)) => plot.draw_series(DashedLineSeries::new(line, dash, gap, style))?,
        };
        let dash = s.dash;
        legend.label(s.name.clone()).legend(move |(x, y)| {
            let sample = vec![(x, y), (x + LEGEND_SAMPLE, y)];
            match dash {
                None => PathElement::new(sample, style).into_dyn(),
                Some((d, g)) => {
                    plotters::element::DashedPathElement::new(sample, d, g, style).into_dyn()
                }
            }
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
        // Room for a sample long enough to show each line's dash pattern.
        .legend_area_size(LEGEND_SAMPLE + 12)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The labels of a log axis over `lo..hi`, written as the figure writes them.
    fn log_labels(lo: f64, hi: f64) -> Vec<String> {
        let key = ticks(lo, hi);
        let n = Notation::for_ticks(key[0], key[key.len() - 1]);
        key.iter().map(|&v| n.label(v)).collect()
    }

    #[test]
    fn a_log_axis_writes_every_label_one_way() {
        // Below 1e-3 every label is a power of ten, none a decimal (no `5.0e-4` beside `0.001`).
        let wide = log_labels(4e-4, 3.0);
        assert_eq!(wide[..3], ["5e-4", "1e-3", "2e-3"], "{wide:?}");
        assert!(wide.iter().all(|l| l.contains('e')), "{wide:?}");
        let narrow = log_labels(0.0015, 6.0);
        assert_eq!(
            narrow,
            [
                "0.002", "0.005", "0.01", "0.02", "0.05", "0.1", "0.2", "0.5", "1", "2", "5"
            ]
        );
    }

    #[test]
    fn a_linear_axis_picks_its_notation_from_its_range() {
        assert_eq!(Notation::for_range(0.0, 150.0), Notation::Plain);
        assert_eq!(Notation::for_range(0.0, 2e6), Notation::Scientific);
        assert_eq!(Notation::Scientific.label(2.5e6), "2.5e6");
        assert_eq!(Notation::Plain.label(12.5), "12.5");
    }

    #[test]
    fn neighbouring_lines_differ_in_colour_and_dash() {
        for i in 0..PALETTE.len() - 1 {
            assert_ne!(PALETTE[i], PALETTE[i + 1]);
            assert_ne!(DASHES[i % DASHES.len()], DASHES[(i + 1) % DASHES.len()]);
        }
    }
}
