//! Oracles for the Figure 3 (left) study: EI against its closed form with Φ integrated
//! numerically (no erfc) and against Monte Carlo, the tabulated Gittins index against its
//! defining equation `EI(μ, σ; g) = λc`, the exchange rates against finite differences, the
//! contours against the functions they trace, and the ranking counts against a recount.

use cabo_core::study::{Cell, StudyContext};
use cabo_core::{Rng, StudySpec};
use cabo_pbgi::illustration::{
    AcquisitionGrid, Comparison, ContoursSpec, contour_line, exchange_rate,
};

/// `φ(z)` from its definition.
fn phi(z: f64) -> f64 {
    (-0.5 * z * z).exp() / (2.0 * std::f64::consts::PI).sqrt()
}

/// `Φ(z) = ½ ± ∫₀^|z| φ` by composite Simpson with 20 000 panels (error < 1e-15 for |z| ≤ 10).
fn big_phi(z: f64) -> f64 {
    let n = 20_000;
    let h = z.abs() / n as f64;
    let mut s = phi(0.0) + phi(z.abs());
    for i in 1..n {
        let w = if i % 2 == 1 { 4.0 } else { 2.0 };
        s += w * phi(i as f64 * h);
    }
    let half_mass = s * h / 3.0;
    if z >= 0.0 {
        0.5 + half_mass
    } else {
        0.5 - half_mass
    }
}

/// EI's closed form `(μ − t)Φ(z) + σφ(z)`, `z = (μ − t)/σ`, on the integrated Φ.
fn ei_closed(mean: f64, sd: f64, t: f64) -> f64 {
    let z = (mean - t) / sd;
    (mean - t) * big_phi(z) + sd * phi(z)
}

fn spec(mean_points: usize, sd_points: usize) -> ContoursSpec {
    serde_json::from_value(serde_json::json!({
        "best": 0.2, "cost": 2.0, "lambdas": [0.05, 1e-4],
        "mean_range": [-1.0, 1.0], "mean_points": mean_points,
        "sd_range": [0.05, 1.5], "sd_points": sd_points, "levels": 5
    }))
    .unwrap()
}

#[test]
fn ei_matches_its_closed_form_and_monte_carlo() {
    let s = spec(21, 20);
    let grid = AcquisitionGrid::compute(&s).unwrap();
    for k in 0..grid.len() {
        let (m, sd) = grid.point(k);
        let want = ei_closed(m, sd, s.best);
        assert!(
            (grid.ei[k] - want).abs() <= 1e-13 + 1e-11 * want,
            "EI({m}, {sd}) = {} vs closed form {want}",
            grid.ei[k]
        );
    }
    // Monte Carlo at three points: within 4 standard errors of 10⁶ draws.
    let mut rng = Rng::new(7);
    for (m, sd) in [(0.5, 0.3), (-0.4, 1.2), (0.2, 0.05)] {
        let n = 1_000_000;
        let (mut sum, mut sum2) = (0.0, 0.0);
        for _ in 0..n {
            let v = (m + sd * rng.normal() - s.best).max(0.0);
            sum += v;
            sum2 += v * v;
        }
        let mean = sum / n as f64;
        let se = ((sum2 / n as f64 - mean * mean) / n as f64).sqrt();
        let ei = cabo_toolkit::numerics::ei(m, sd, s.best);
        assert!(
            (mean - ei).abs() <= 4.0 * se,
            "EI({m}, {sd}) = {ei}, Monte Carlo {mean} ± {se}"
        );
    }
}

#[test]
fn tabulated_index_solves_its_defining_equation() {
    let s = spec(21, 20);
    let grid = AcquisitionGrid::compute(&s).unwrap();
    for (w, &lambda) in s.lambdas.iter().enumerate() {
        let kappa = lambda * s.cost;
        for k in 0..grid.len() {
            let (m, sd) = grid.point(k);
            let g = grid.index[w][k];
            let resid = ei_closed(m, sd, g) - kappa;
            assert!(
                resid.abs() <= 1e-10,
                "λ = {lambda}, (μ, σ) = ({m}, {sd}): EI(g = {g}) − λc = {resid:e}"
            );
        }
    }
}

/// A function of (μ, σ).
type Surface<'a> = &'a dyn Fn(f64, f64) -> f64;

#[test]
fn exchange_rates_match_finite_differences() {
    // (∂/∂σ)/(∂/∂μ) of EI(μ, σ; t) by central differences: of the closed form over
    // v = (μ − t)/σ from −3 to 3, and of cabo's LogEI (the same ratio, as ln is monotone)
    // in the lower tail, where EI itself is below the closed form's cancellation error.
    let (sd, t, step) = (0.7, 0.1, 1e-6);
    let closed = |m: f64, s: f64| ei_closed(m, s, t);
    let log_ei = |m: f64, s: f64| cabo_toolkit::numerics::log_ei(m, s, t);
    let cases: [(f64, Surface); 10] = [
        (-3.0, &closed),
        (-1.5, &closed),
        (-1.0, &closed),
        (-0.5, &closed),
        (0.0, &closed),
        (1.0, &closed),
        (3.0, &closed),
        (-8.0, &log_ei),
        (-20.0, &log_ei),
        (-1.2, &log_ei),
    ];
    for (v, f) in cases {
        let m = t + v * sd;
        let d_sd = (f(m, sd + step) - f(m, sd - step)) / (2.0 * step);
        let d_m = (f(m + step, sd) - f(m - step, sd)) / (2.0 * step);
        let rate = exchange_rate(v);
        assert!(
            (rate - d_sd / d_m).abs() <= 1e-5 * rate,
            "v = {v}: rate {rate} vs finite differences {}",
            d_sd / d_m
        );
    }
}

#[test]
fn contours_lie_on_their_levels() {
    let s = spec(11, 10);
    let means: Vec<f64> = (0..41).map(|i| -1.0 + 0.05 * i as f64).collect();
    let level = 0.15;
    let line = contour_line(
        &|m, sd| cabo_toolkit::numerics::ei(m, sd, s.best),
        level,
        &means,
        s.sd_range,
    );
    assert!(line.len() > 10, "only {} contour points", line.len());
    for (m, sd) in line {
        assert!(
            (ei_closed(m, sd, s.best) - level).abs() <= 1e-10,
            "({m}, {sd})"
        );
    }
    // The index's contour at y* is EI's contour at λc (the Pandora stopping rule).
    let kappa = s.lambdas[0] * s.cost;
    let index_line = contour_line(
        &|m, sd| cabo_pbgi::index::gittins_index(m, sd, kappa).unwrap(),
        s.best,
        &means,
        s.sd_range,
    );
    assert!(!index_line.is_empty());
    for (m, sd) in index_line {
        assert!(
            (ei_closed(m, sd, s.best) - kappa).abs() <= 1e-9,
            "({m}, {sd})"
        );
    }
}

#[test]
fn ranking_counts_match_a_recount_of_the_table() {
    let s = spec(9, 8);
    let out = s.run(&StudyContext { seed: 0 }).unwrap();
    let table = &out.tables[0];
    let num = |c: &Cell| match c {
        Cell::Number(v) => *v,
        Cell::Text(t) => panic!("text cell {t}"),
    };
    let grid = AcquisitionGrid::compute(&s).unwrap();
    for w in 0..s.lambdas.len() {
        let c = Comparison::compute(&s, &grid, w).unwrap();
        // Ordered pairs over the table's rows: each unordered pair counts twice.
        let (mut comparable, mut discordant) = (0u64, 0u64);
        for a in &table.rows {
            for b in &table.rows {
                let de = num(&a[2]) - num(&b[2]);
                let dg = num(&a[3 + w]) - num(&b[3 + w]);
                if de != 0.0 && dg != 0.0 {
                    comparable += 1;
                    discordant += u64::from(de * dg < 0.0);
                }
            }
        }
        assert_eq!(2 * c.comparable_pairs, comparable);
        assert_eq!(2 * c.discordant_pairs, discordant);
        assert!(c.discordant_pairs > 0, "the panels must disagree somewhere");
        // φ/Φ decreasing: PBGI trades more mean for σ exactly where g > y*.
        assert_eq!(c.values_sd_more, c.index_above_best);
        assert_eq!(c.stopping_rule_mismatches, 0);
        let (hi, lo) = c.clearest.unwrap();
        assert!(grid.ei[hi] > grid.ei[lo] && grid.index[w][hi] < grid.index[w][lo]);
    }
    assert_eq!(out.findings.len(), s.lambdas.len());
    assert_eq!(out.figures.len(), 1 + s.lambdas.len());
}

#[test]
fn bad_parameters_are_named() {
    let cases = [
        (r#"{"lambdas": []}"#, "lambdas"),
        (r#"{"lambdas": [0.1, -1]}"#, "lambdas"),
        (r#"{"cost": 0}"#, "cost"),
        (r#"{"sd_range": [0, 1]}"#, "sd_range"),
        (r#"{"mean_range": [1, -1]}"#, "mean_range"),
        (r#"{"mean_points": 1}"#, "mean_points"),
        (r#"{"levels": 0}"#, "levels"),
    ];
    for (json, key) in cases {
        let s: ContoursSpec = serde_json::from_str(json).unwrap();
        let e = s.validate().unwrap_err().to_string();
        assert!(e.contains(key), "{json}: {e}");
    }
    assert!(serde_json::from_str::<ContoursSpec>(r#"{"lambda": [0.1]}"#).is_err());
}
