//! Data-set surrogates: a GP fitted once to a published table, whose posterior mean is the
//! objective (and, for LDA, the cost) on the unit cube.
//!
//! - `airfoil` (seeds 002 and 004): NASA's airfoil self-noise table. Inputs ln F, A, C, V,
//!   ln S, each min-max scaled to \[0,1\]; target P standardised (unbiased sd); Matérn-5/2 GP
//!   with a constant mean. By default the GP uses the reference fit recorded with the data
//!   (lengthscales [0.176, 0.305, 0.178, 0.867, 0.268], outputscale 0.918, noise 0.00438,
//!   mean −0.519), which is what the papers' default BoTorch GP finds; `fit: map` refits it
//!   with cabo-gp's MAP fit (Gamma priors) instead. The objective is the posterior mean,
//!   maximised.
//! - `lda` (seed 001): the online-LDA grid. Inputs log2 minibatch size, kappa and log2 tau0,
//!   min-max scaled over the grid; MAP-fitted Matérn-5/2 GPs on −perplexity and on
//!   ln seconds; objective = posterior mean of −perplexity, cost = exp(posterior mean of
//!   ln seconds)/3600 (hours).
//!
//! The tables are not part of cabo: the spec's `path` (relative to the spec file's
//! directory, like paths in other configuration formats) names them, and a missing or
//! malformed file is reported, with where to get it, when the spec is validated. Fitted surrogates and
//! their optima are cached per process, so the policies of every replication share one fit.

use crate::gp_prior::{FoundOptimum, cached_optimum};
use crate::synthetic::check_unit_query;
use cabo_core::{
    Error, Objective, OptimizerSettings, Outcome, Problem, ProblemInfo, ProblemSpec, Query, Result,
    Rng, TrainingData,
};
use cabo_gp::{ExactGp, GpConfig, GpPosterior, KernelKind, Lengthscale, Prior};
use cabo_optim::{MaximizeOptions, ascend, maximize};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// The posterior mean of a fitted GP as a function on the unit cube, with its gradient.
#[derive(Debug)]
pub struct MeanSurface {
    post: GpPosterior,
}

impl MeanSurface {
    /// Wraps a fitted posterior.
    pub fn new(post: GpPosterior) -> Self {
        MeanSurface { post }
    }

    /// The fitted posterior.
    pub fn posterior(&self) -> &GpPosterior {
        &self.post
    }

    /// Posterior mean at `x` (y units). Only the O(n) mean is computed, not the variance.
    pub fn mean(&self, x: &[f64]) -> f64 {
        let n = self.post.len();
        let mut k = vec![0.0; n];
        self.post.cross_covariance(x, &mut k);
        self.assemble(&k)
    }

    /// Posterior mean at `x` with its gradient.
    pub fn mean_grad(&self, x: &[f64], grad: &mut [f64]) -> f64 {
        let n = self.post.len();
        let d = x.len();
        let mut k = vec![0.0; n];
        let mut dk = vec![0.0; n * d];
        self.post.cross_covariance_grad(x, &mut k, &mut dk);
        let t = self.post.output_transform();
        let alpha = self.post.alpha();
        grad.iter_mut().for_each(|g| *g = 0.0);
        for (a, row) in alpha.iter().zip(dk.chunks_exact(d)) {
            for (g, v) in grad.iter_mut().zip(row) {
                *g += a * v / t.scale;
            }
        }
        self.assemble(&k)
    }

    // cross_covariance is in y units (scale² k_model) while alpha is in model units, so the
    // y-unit mean is shift + scale·c + Σ αᵢ kᵢ / scale.
    fn assemble(&self, k: &[f64]) -> f64 {
        let t = self.post.output_transform();
        let s: f64 = self.post.alpha().iter().zip(k).map(|(a, k)| a * k).sum();
        t.shift + t.scale * self.post.mean_constant() + s / t.scale
    }

    fn maximize(&self, seed: u64) -> Option<FoundOptimum> {
        let settings = OptimizerSettings {
            raw_samples: 2048,
            restarts: 16,
            max_iters: 200,
        };
        let dim = self.post.kernel().dim();
        maximize(self, dim, &settings, seed, &MaximizeOptions::default())
            .ok()
            .map(|m| FoundOptimum {
                x: m.x,
                value: m.value,
            })
    }
}

impl Objective for MeanSurface {
    fn value(&self, x: &[f64]) -> f64 {
        self.mean(x)
    }
    fn value_grad(&self, x: &[f64], grad: &mut [f64]) -> f64 {
        self.mean_grad(x, grad)
    }
}

/// A numeric CSV table with a header row.
#[derive(Debug, Clone)]
pub struct Table {
    /// Column names.
    pub header: Vec<String>,
    /// Rows of numbers.
    pub rows: Vec<Vec<f64>>,
}

impl Table {
    /// Reads `path`; `key` and `origin` (where to get the file) go into error messages.
    pub fn read(path: &str, key: &str, origin: &str) -> Result<Table> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            Error::invalid(format!(
                "{key}.path: cannot read {path} ({e}); it is {origin}, not shipped with cabo: \
                 see ../shared/data/README.md and point `path:` at your copy (a relative \
                 path is taken from the spec file's directory)"
            ))
        })?;
        let mut lines = text.lines().filter(|l| !l.trim().is_empty());
        let header: Vec<String> = lines
            .next()
            .ok_or_else(|| Error::invalid(format!("{key}.path: {path} is empty")))?
            .split(',')
            .map(|s| s.trim().to_string())
            .collect();
        let mut rows = Vec::new();
        for (i, line) in lines.enumerate() {
            let row: Vec<f64> = line
                .split(',')
                .map(|s| s.trim().parse::<f64>())
                .collect::<std::result::Result<_, _>>()
                .map_err(|e| Error::invalid(format!("{key}.path: {path} row {}: {e}", i + 2)))?;
            if row.len() != header.len() {
                return Err(Error::invalid(format!(
                    "{key}.path: {path} row {} has {} fields, the header {}",
                    i + 2,
                    row.len(),
                    header.len()
                )));
            }
            rows.push(row);
        }
        Ok(Table { header, rows })
    }

    /// The column called `name`.
    pub fn column(&self, name: &str, key: &str) -> Result<Vec<f64>> {
        let j = self.header.iter().position(|h| h == name).ok_or_else(|| {
            Error::invalid(format!(
                "{key}.path: the table has no column {name:?} (has {:?})",
                self.header
            ))
        })?;
        Ok(self.rows.iter().map(|r| r[j]).collect())
    }
}

/// Min-max scales columns to [0,1]; returns row-major `n × d`.
fn min_max(columns: &[Vec<f64>], key: &str) -> Result<Vec<f64>> {
    let n = columns[0].len();
    let d = columns.len();
    let mut x = vec![0.0; n * d];
    for (j, c) in columns.iter().enumerate() {
        let lo = c.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = c.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if !(lo.is_finite() && hi.is_finite() && hi > lo) {
            return Err(Error::invalid(format!(
                "{key}: input column {j} is constant or not finite"
            )));
        }
        for i in 0..n {
            x[i * d + j] = (c[i] - lo) / (hi - lo);
        }
    }
    Ok(x)
}

type SurfaceCache =
    Mutex<HashMap<String, Arc<OnceLock<std::result::Result<Arc<Vec<MeanSurface>>, String>>>>>;

/// Fits once per `key` in this process (errors are remembered as messages).
fn cached_fit(
    key: String,
    fit: impl FnOnce() -> Result<Vec<MeanSurface>>,
) -> Result<Arc<Vec<MeanSurface>>> {
    static CACHE: OnceLock<SurfaceCache> = OnceLock::new();
    let cell = {
        let mut map = CACHE
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        map.entry(key).or_default().clone()
    };
    cell.get_or_init(|| fit().map(Arc::new).map_err(|e| e.to_string()))
        .clone()
        .map_err(Error::invalid)
}

/// How the airfoil GP gets its hyperparameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AirfoilFit {
    /// The reference fit recorded with the data (default).
    #[default]
    Reference,
    /// cabo-gp's MAP fit with Gamma priors (slow: an exact GP on 1503 points).
    Map,
}

/// Spec of the airfoil surrogate (`problem: { type: airfoil }`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AirfoilSpec {
    /// Path of `airfoil_self_noise.csv`, relative to the spec file's directory. Required:
    /// no default could be right for spec files in different directories.
    pub path: String,
    /// `reference` (default) or `map`.
    #[serde(default)]
    pub fit: AirfoilFit,
    /// Gaussian observation-noise standard deviation (standardised P units); default 0.
    #[serde(default)]
    pub noise_std: f64,
    /// The spec file's directory, against which a relative `path` resolves. Not serialised,
    /// so a run's fingerprint does not depend on where cabo was started.
    #[serde(skip)]
    pub spec_dir: Option<PathBuf>,
}

/// `path` resolved against the spec file's directory when it is relative.
fn resolve(spec_dir: &Option<PathBuf>, path: &str) -> String {
    match spec_dir {
        Some(dir) if Path::new(path).is_relative() => dir.join(path).display().to_string(),
        _ => path.to_string(),
    }
}

const AIRFOIL_ORIGIN: &str =
    "the UCI 'Airfoil Self-Noise' data set (Brooks, Pope & Marcolini, NASA 1989; CC BY 4.0)";

/// Reads and preprocesses the airfoil table: (inputs row-major n × 5, standardised P).
pub fn airfoil_data(path: &str) -> Result<(Vec<f64>, Vec<f64>)> {
    let t = Table::read(path, "airfoil", AIRFOIL_ORIGIN)?;
    let mut cols = Vec::new();
    for name in ["F", "A", "C", "V", "S"] {
        let mut c = t.column(name, "airfoil")?;
        if name == "F" || name == "S" {
            if c.iter().any(|v| *v <= 0.0) {
                return Err(Error::invalid(format!(
                    "airfoil: column {name} must be positive to take its log"
                )));
            }
            c.iter_mut().for_each(|v| *v = v.ln());
        }
        cols.push(c);
    }
    let x = min_max(&cols, "airfoil")?;
    let p = t.column("P", "airfoil")?;
    let n = p.len() as f64;
    let mean = p.iter().sum::<f64>() / n;
    let sd = (p.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    Ok((x, p.iter().map(|v| (v - mean) / sd).collect()))
}

fn airfoil_config(fit: AirfoilFit) -> GpConfig {
    match fit {
        AirfoilFit::Reference => {
            let mut c = GpConfig::fixed(
                KernelKind::Matern52,
                Lengthscale::PerDim(vec![0.176, 0.305, 0.178, 0.867, 0.268]),
                0.918,
                0.00438,
            );
            c.mean = Some(-0.519);
            c
        }
        AirfoilFit::Map => GpConfig::map(KernelKind::Matern52, Prior::Gamma, false),
    }
}

impl AirfoilSpec {
    fn check(&self) -> Result<()> {
        if !(self.noise_std.is_finite() && self.noise_std >= 0.0) {
            return Err(Error::invalid(format!(
                "airfoil.noise_std: must be finite and ≥ 0, got {}",
                self.noise_std
            )));
        }
        Ok(())
    }
}

#[cabo_core::plugin(
    name = "airfoil",
    summary = "Airfoil self-noise surrogate: posterior mean of a Matern-5/2 GP on the NASA table (5-D, maximised); needs the data file",
    paper = "seed 002 App. C; seed 004",
    example = "{ type: airfoil, path: ../../../shared/data/airfoil_self_noise.csv }"
)]
impl ProblemSpec for AirfoilSpec {
    fn dim(&self) -> Result<usize> {
        self.check()?;
        // Reading the table here rejects a missing or malformed file before anything runs.
        airfoil_data(&resolve(&self.spec_dir, &self.path))?;
        Ok(5)
    }
    fn build(&self, _seed: u64) -> Result<Box<dyn Problem>> {
        self.check()?;
        let path = resolve(&self.spec_dir, &self.path);
        let key = format!("airfoil#{path}#{:?}", self.fit);
        let fit = self.fit;
        let surfaces = cached_fit(key.clone(), move || {
            let (x, y) = airfoil_data(&path)?;
            let mut gp = ExactGp::new(airfoil_config(fit))?;
            let post = gp.fit(
                TrainingData {
                    dim: 5,
                    x: &x,
                    y: &y,
                },
                0,
            )?;
            Ok(vec![MeanSurface::new(post)])
        })?;
        Ok(Box::new(Surrogate {
            info: ProblemInfo::continuous("airfoil", 5),
            surfaces,
            noise_std: self.noise_std,
            cost_hours: false,
            key,
        }))
    }
    fn set_spec_dir(&mut self, dir: &Path) {
        self.spec_dir = Some(dir.to_path_buf());
    }
}

/// Spec of the LDA surrogate (`problem: { type: lda }`).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LdaSpec {
    /// Path of `lda_on_grid.csv`, relative to the spec file's directory. Required: no
    /// default could be right for spec files in different directories.
    pub path: String,
    /// Gaussian observation-noise standard deviation (perplexity units); default 0.
    #[serde(default)]
    pub noise_std: f64,
    /// The spec file's directory, against which a relative `path` resolves. Not serialised,
    /// so a run's fingerprint does not depend on where cabo was started.
    #[serde(skip)]
    pub spec_dir: Option<PathBuf>,
}

const LDA_ORIGIN: &str =
    "the online-LDA grid of Hoffman, Bach & Blei (2010) as distributed with HPOlib (GPL)";

/// Reads and preprocesses the LDA grid: (inputs row-major n × 3, −perplexity, ln seconds).
pub fn lda_data(path: &str) -> Result<(Vec<f64>, Vec<f64>, Vec<f64>)> {
    let t = Table::read(path, "lda", LDA_ORIGIN)?;
    let mb = t.column("minibatch_size", "lda")?;
    let kappa = t.column("kappa", "lda")?;
    let tau0 = t.column("tau0", "lda")?;
    if mb.iter().chain(&tau0).any(|v| *v <= 0.0) {
        return Err(Error::invalid(
            "lda: minibatch_size and tau0 must be positive to take log2",
        ));
    }
    let x = min_max(
        &[
            mb.iter().map(|v| v.log2()).collect(),
            kappa,
            tau0.iter().map(|v| v.log2()).collect(),
        ],
        "lda",
    )?;
    let y = t.column("perplexity", "lda")?.iter().map(|v| -v).collect();
    let secs = t.column("seconds", "lda")?;
    if secs.iter().any(|v| *v <= 0.0) {
        return Err(Error::invalid("lda: seconds must be positive to take logs"));
    }
    Ok((x, y, secs.iter().map(|v| v.ln()).collect()))
}

impl LdaSpec {
    fn check(&self) -> Result<()> {
        if !(self.noise_std.is_finite() && self.noise_std >= 0.0) {
            return Err(Error::invalid(format!(
                "lda.noise_std: must be finite and ≥ 0, got {}",
                self.noise_std
            )));
        }
        Ok(())
    }
}

#[cabo_core::plugin(
    name = "lda",
    summary = "Online-LDA surrogate: GP posterior means of -perplexity (objective) and ln seconds (cost in hours) over 3 hyperparameters; needs the data file",
    paper = "seed 001 §5.1, App. E",
    example = "{ type: lda, path: ../../../shared/data/lda_on_grid.csv }"
)]
impl ProblemSpec for LdaSpec {
    fn dim(&self) -> Result<usize> {
        self.check()?;
        // Reading the table here rejects a missing or malformed file before anything runs.
        lda_data(&resolve(&self.spec_dir, &self.path))?;
        Ok(3)
    }
    fn build(&self, _seed: u64) -> Result<Box<dyn Problem>> {
        self.check()?;
        let path = resolve(&self.spec_dir, &self.path);
        let key = format!("lda#{path}");
        let surfaces = cached_fit(key.clone(), move || {
            let (x, y, lnc) = lda_data(&path)?;
            let mut out = Vec::new();
            for target in [&y, &lnc] {
                let mut gp = ExactGp::new(GpConfig::map(KernelKind::Matern52, Prior::Gamma, true))?;
                let post = gp.fit(
                    TrainingData {
                        dim: 3,
                        x: &x,
                        y: target,
                    },
                    0,
                )?;
                out.push(MeanSurface::new(post));
            }
            Ok(out)
        })?;
        Ok(Box::new(Surrogate {
            info: ProblemInfo::continuous("lda", 3),
            surfaces,
            noise_std: self.noise_std,
            cost_hours: true,
            key,
        }))
    }
    fn set_spec_dir(&mut self, dir: &Path) {
        self.spec_dir = Some(dir.to_path_buf());
    }
}

/// A surrogate problem: objective = first surface; cost = exp(second surface)/3600 when
/// present (LDA), else 1.
#[derive(Debug)]
pub struct Surrogate {
    info: ProblemInfo,
    surfaces: Arc<Vec<MeanSurface>>,
    noise_std: f64,
    cost_hours: bool,
    key: String,
}

impl Surrogate {
    /// The objective surface.
    pub fn objective(&self) -> &MeanSurface {
        &self.surfaces[0]
    }
    /// The ln-seconds surface (LDA only).
    pub fn ln_seconds(&self) -> Option<&MeanSurface> {
        self.surfaces.get(1)
    }
    /// The maximiser found for the objective surface (cached per process).
    pub fn found_optimum(&self) -> Option<FoundOptimum> {
        cached_optimum(format!("{}#optimum", self.key), || {
            self.surfaces[0].maximize(0)
        })
    }
}

impl Problem for Surrogate {
    fn info(&self) -> &ProblemInfo {
        &self.info
    }
    fn evaluate(&self, query: &Query, seed: u64) -> Result<Outcome> {
        check_unit_query(&self.info.name, self.info.dim, query)?;
        let value = self.surfaces[0].mean(&query.x);
        let y = if self.noise_std > 0.0 {
            value + self.noise_std * Rng::new(seed).normal()
        } else {
            value
        };
        let cost = match (self.cost_hours, self.surfaces.get(1)) {
            (true, Some(s)) => s.mean(&query.x).exp() / 3600.0,
            _ => 1.0,
        };
        Ok(Outcome::new(y, cost, query.x.clone(), Some(value)))
    }
    fn optimum(&self) -> Option<f64> {
        self.found_optimum().map(|o| o.value)
    }
    /// The optimum is a 16-restart search of the surface, which a run can beat.
    fn local_optimum(&self, x: &[f64], _control_set: Option<usize>) -> Option<f64> {
        ascend(&self.surfaces[0], x, crate::gp_prior::ASCENT_MAX_ITERS)
            .ok()
            .map(|m| m.value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const AIRFOIL: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/airfoil_self_noise.csv"
    );
    const LDA: &str = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/lda_on_grid.csv"
    );

    fn build(json: String) -> Box<dyn Problem> {
        serde_json::from_str::<Box<dyn ProblemSpec>>(&json)
            .unwrap()
            .build(0)
            .unwrap()
    }

    #[test]
    fn airfoil_preprocessing_and_reference_surrogate() {
        let (x, y) = airfoil_data(AIRFOIL).unwrap();
        assert_eq!(y.len(), 1503);
        assert!(x.iter().all(|v| (0.0..=1.0).contains(v)));
        for j in 0..5 {
            let col: Vec<f64> = x.iter().skip(j).step_by(5).copied().collect();
            assert_eq!(col.iter().copied().fold(f64::INFINITY, f64::min), 0.0);
            assert_eq!(col.iter().copied().fold(f64::NEG_INFINITY, f64::max), 1.0);
        }
        let m = y.iter().sum::<f64>() / 1503.0;
        let v = y.iter().map(|v| (v - m).powi(2)).sum::<f64>() / 1502.0;
        assert!(m.abs() < 1e-12 && (v - 1.0).abs() < 1e-12);

        let p = build(format!(r#"{{"type":"airfoil","path":"{AIRFOIL}"}}"#));
        let s = p.as_any().downcast_ref::<Surrogate>().unwrap();
        // With noise 0.00438 the posterior mean nearly interpolates the data: the RMS
        // residual is well below the data's unit spread.
        let mut sse = 0.0;
        for i in 0..1503 {
            sse += (s.objective().mean(&x[i * 5..i * 5 + 5]) - y[i]).powi(2);
        }
        assert!((sse / 1503.0).sqrt() < 0.2, "rms {}", (sse / 1503.0).sqrt());
        // The mean agrees with cabo-gp's own Posterior::mean_var.
        use cabo_core::Posterior;
        let q = [0.3, 0.6, 0.2, 0.9, 0.4];
        let full = s.objective().posterior().mean_var(&q).mean;
        assert!((s.objective().mean(&q) - full).abs() < 1e-9 * full.abs().max(1.0));
        // Gradient vs central differences.
        let mut g = [0.0; 5];
        s.objective().mean_grad(&q, &mut g);
        for j in 0..5 {
            let h = 1e-6;
            let (mut qp, mut qm) = (q, q);
            qp[j] += h;
            qm[j] -= h;
            let fd = (s.objective().mean(&qp) - s.objective().mean(&qm)) / (2.0 * h);
            assert!(
                (g[j] - fd).abs() <= 1e-5 * fd.abs().max(1e-2),
                "{j}: {} vs {fd}",
                g[j]
            );
        }
        // The optimum dominates every data point's surrogate value.
        let opt = p.optimum().unwrap();
        let best = (0..1503)
            .map(|i| s.objective().mean(&x[i * 5..i * 5 + 5]))
            .fold(f64::NEG_INFINITY, f64::max);
        assert!(opt >= best - 1e-9, "optimum {opt} < best data point {best}");
    }

    #[test]
    fn lda_surrogate_tracks_the_grid() {
        let p = build(format!(r#"{{"type":"lda","path":"{LDA}"}}"#));
        let (x, y, lnc) = lda_data(LDA).unwrap();
        let s = p.as_any().downcast_ref::<Surrogate>().unwrap();
        let n = y.len();
        let (mut e_y, mut e_c) = (0.0, 0.0);
        for i in 0..n {
            let xi = &x[i * 3..i * 3 + 3];
            e_y += (s.objective().mean(xi) - y[i]).abs() / n as f64;
            e_c += (s.ln_seconds().unwrap().mean(xi) - lnc[i]).abs() / n as f64;
        }
        // Perplexities span 1266–5258 and ln seconds 8.8–10.5: the fit must be close.
        assert!(e_y < 100.0, "mean |error| in perplexity {e_y}");
        assert!(e_c < 0.1, "mean |error| in ln seconds {e_c}");
        let out = p.evaluate(&Query::at(x[..3].to_vec()), 0).unwrap();
        assert!((out.cost - (lnc[0].exp() / 3600.0)).abs() < 0.1 * out.cost);
        assert!(
            p.optimum().unwrap() >= y.iter().copied().fold(f64::NEG_INFINITY, f64::max) - 100.0
        );
    }

    #[test]
    fn a_missing_file_names_it_and_the_source() {
        let spec: Box<dyn ProblemSpec> =
            serde_json::from_str(r#"{"type":"lda","path":"/nonexistent/lda.csv"}"#).unwrap();
        let Err(e) = spec.build(0) else {
            panic!("built without its file")
        };
        let msg = e.to_string();
        assert!(
            msg.contains("/nonexistent/lda.csv")
                && msg.contains("HPOlib")
                && msg.contains("README"),
            "{msg}"
        );
    }
}
