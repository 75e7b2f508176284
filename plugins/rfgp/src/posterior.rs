//! The weight posterior of Bayesian linear regression on random features, and every
//! capability it offers in its own terms.
//!
//! In model units, `f(x) = μ + φ(x)ᵀw` with prior `w ~ N(0, I_m)` and noise σ². After n
//! observations the weights are `N(w̄, Σ)` with `Σ = σ²(ΦᵀΦ + σ²I)⁻¹` and
//! `w̄ = ΣΦᵀ(y − μ)/σ²`. The posterior keeps Σ in whichever of two equal forms is cheaper
//! ([`Form::cheaper`]):
//! - **data form** (n < m): Σ is the prior minus a rank-n term, `Σ = I − UUᵀ` with
//!   `Uᵀ = L⁻¹Φ` (n × m) and `LLᵀ = ΦΦᵀ + σ²I`; `w̄ = Uρ`, `ρ = L⁻¹(y − μ)`. A variance costs
//!   O(n·m): `‖φ‖² − ‖Uᵀφ‖²`. A fantasised observation adds one column to U (and one row to
//!   L), O(m·n) — the rank-one downdate `Σ − ΣφφᵀΣ/(φᵀΣφ + σ²)` of the weight covariance.
//! - **weight form** (n ≥ m): `A = ΦᵀΦ + σ²I = LLᵀ` (m × m), `Σ = σ²A⁻¹`, `w̄ = A⁻¹Φᵀ(y − μ)`.
//!   A variance costs O(m²): `σ²‖L⁻¹φ‖²`. A fantasy adds `φφᵀ` to A, a rank-one update of L
//!   in O(m²), and `(y − μ)φ` to `Φᵀ(y − μ)`.
//!
//! Either way k fantasies cost at most O(m²k), never a refit. Then
//! - mean `μ + φ(x)ᵀw̄`, variance `φ(x)ᵀΣφ(x)`, covariance `φ(x)ᵀΣφ(x')`;
//! - gradients through `∂φ_k/∂x = −a sin(ω_kᵀx + b_k) ω_k` (J = ∂φ/∂x): `∂mean = Jᵀw̄`,
//!   `∂var = 2 JᵀΣφ(x)`, `∂cov/∂x = J(x)ᵀΣφ(x')`;
//! - a sample path is `μ + φ(x)ᵀw` with w an exact draw from `N(w̄, Σ)`: `w̄ + σL⁻ᵀε` in the
//!   weight form, Matheron's rule `w₀ + U(ρ − Uᵀw₀ − L⁻¹ε)` in the data form
//!   (`w₀ ~ N(0, I)`, `ε ~ N(0, σ²I)`) — a draw from this model's posterior, not an
//!   approximation of one.
//!
//! Every public value is in the units of the observed y (`y = shift + scale·y_model`), as
//! for the exact GP; variances are floored at the exact GP's [`MIN_VARIANCE`] (model units).

use crate::dense::gram_lower;
use crate::features::Features;
use crate::likelihood::Form;
use cabo_core::capability::{
    Covariance, Fantasize, FourierDraws, FourierSamples, PreparedPoint, SamplePaths,
};
use cabo_core::{
    Diagnostics, Error, MeanVar, MeanVarGrad, Objective, Posterior, Result, Rng, TrainingData,
    derive_seed,
};
use cabo_gp::OutputTransform;
use cabo_gp::posterior::MIN_VARIANCE;
use cabo_linalg::Cholesky;
use cabo_linalg::vector::{axpy, dot};
use std::sync::Arc;

/// Points per block of a batched prediction in the weight form: the block's features
/// (`m × 32`) stay in the cache while the triangular solve sweeps the factor once for all.
const BATCH: usize = 32;

/// The weight covariance Σ in one of its two forms (see the module doc).
#[derive(Debug, Clone)]
enum Weights {
    /// `Σ = I − UUᵀ`.
    Data {
        /// `L` with `LLᵀ = ΦΦᵀ + σ²I` (n × n).
        chol: Cholesky,
        /// `Uᵀ = L⁻¹Φ`, row-major `n × m`: row j is the j-th column of U.
        ut: Vec<f64>,
        /// `ρ = L⁻¹(y − μ)`.
        rho: Vec<f64>,
    },
    /// `Σ = σ²A⁻¹`.
    Weights {
        /// `L` with `LLᵀ = A = ΦᵀΦ + σ²I` (m × m).
        chol: Cholesky,
        /// `Φᵀ(y − μ)`, kept so that a fantasy adds its term instead of the sum being redone.
        b: Vec<f64>,
    },
}

/// The posterior of a random-feature GP. Cloning copies Σ's factors (O(n·m) or O(m²)).
#[derive(Debug, Clone)]
pub struct RfGpPosterior {
    features: Arc<Features>,
    noise: f64,
    mean: f64,
    weights: Weights,
    /// `w̄`.
    w: Vec<f64>,
    n: usize,
    transform: OutputTransform,
    diagnostics: Diagnostics,
}

impl RfGpPosterior {
    /// The posterior on `features` given the noise variance and constant mean (model
    /// units), training data in observed units and the map `transform` from model to
    /// observed units, with Σ in the cheaper form. Empty data give the prior. Errors on a
    /// dimension mismatch, a noise variance that is not positive, non-finite values, or a
    /// matrix that stays indefinite after jitter.
    pub fn new(
        features: Arc<Features>,
        noise: f64,
        mean: f64,
        data: TrainingData<'_>,
        transform: OutputTransform,
    ) -> Result<Self> {
        let form = Form::cheaper(data.len(), features.len());
        Self::with_form(features, noise, mean, data, transform, form)
    }

    /// [`RfGpPosterior::new`] with Σ in the given form (the two are equal to rounding).
    pub fn with_form(
        features: Arc<Features>,
        noise: f64,
        mean: f64,
        data: TrainingData<'_>,
        transform: OutputTransform,
        form: Form,
    ) -> Result<Self> {
        crate::check_data(&data)?;
        let d = features.dim();
        if data.dim != d {
            return Err(Error::invalid(format!(
                "random-feature GP: data have dimension {}, the features {d}",
                data.dim
            )));
        }
        if !(noise.is_finite() && noise > 0.0) {
            return Err(Error::invalid(format!(
                "random-feature GP: noise variance {noise} must be finite and > 0"
            )));
        }
        if !(mean.is_finite() && transform.scale > 0.0 && transform.shift.is_finite()) {
            return Err(Error::invalid(
                "random-feature GP: mean and output transform must be finite",
            ));
        }
        let n = data.len();
        let m = features.len();
        let (phi_t, _) = features.design_t(data.x, false);
        let r: Vec<f64> = data
            .y
            .iter()
            .map(|v| (v - transform.shift) / transform.scale - mean)
            .collect();
        let (weights, w) = match form {
            Form::Data => {
                let mut ut = crate::dense::transpose(&phi_t, m, n);
                let mut k = gram_lower(&ut, n, m);
                for i in 0..n {
                    k[i * n + i] += noise;
                }
                let chol = Cholesky::factor(&k, n)?;
                chol.solve_lower_matrix_in_place(&mut ut, m);
                let mut rho = r;
                chol.solve_lower_in_place(&mut rho);
                let mut w = vec![0.0; m];
                for (rj, u) in rho.iter().zip(ut.chunks_exact(m)) {
                    axpy(*rj, u, &mut w);
                }
                (Weights::Data { chol, ut, rho }, w)
            }
            Form::Weights => {
                let mut a = gram_lower(&phi_t, m, n);
                for k in 0..m {
                    a[k * m + k] += noise;
                }
                let chol = Cholesky::factor(&a, m)?;
                let b: Vec<f64> = if n == 0 {
                    vec![0.0; m]
                } else {
                    phi_t.chunks_exact(n).map(|f| dot(f, &r)).collect()
                };
                let mut w = b.clone();
                chol.solve_in_place(&mut w);
                (Weights::Weights { chol, b }, w)
            }
        };
        let mut post = RfGpPosterior {
            features,
            noise,
            mean,
            weights,
            w,
            n,
            transform,
            diagnostics: Diagnostics::new(),
        };
        post.diagnostics = post.base_diagnostics();
        Ok(post)
    }

    fn base_diagnostics(&self) -> Diagnostics {
        let mut d = Diagnostics::new();
        let k = self.features.kernel();
        for (i, l) in k.lengthscales.iter().enumerate() {
            d.insert(format!("gp.lengthscale[{i}]"), *l);
        }
        d.insert("gp.outputscale".into(), k.outputscale);
        d.insert("gp.noise".into(), self.noise);
        d.insert("gp.mean".into(), self.mean);
        d.insert("gp.jitter".into(), self.chol().jitter());
        d.insert("gp.n".into(), self.n as f64);
        d.insert("rfgp.features".into(), self.features.len() as f64);
        d
    }

    fn chol(&self) -> &Cholesky {
        match &self.weights {
            Weights::Data { chol, .. } | Weights::Weights { chol, .. } => chol,
        }
    }

    /// Adds an entry to the diagnostics (the fitter records its objective and iterations).
    pub(crate) fn set_diagnostic(&mut self, key: &str, value: f64) {
        self.diagnostics.insert(key.to_string(), value);
    }

    /// Number of observations (fantasies included).
    pub fn len(&self) -> usize {
        self.n
    }

    /// True for the prior.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The form Σ is kept in.
    pub fn form(&self) -> Form {
        match self.weights {
            Weights::Data { .. } => Form::Data,
            Weights::Weights { .. } => Form::Weights,
        }
    }

    /// The features (model units).
    pub fn features(&self) -> &Features {
        &self.features
    }

    /// The posterior mean of the weights `w̄` (model units).
    pub fn weight_mean(&self) -> &[f64] {
        &self.w
    }

    /// Noise variance in model units.
    pub fn model_noise_variance(&self) -> f64 {
        self.noise
    }

    /// Constant prior mean, model units.
    pub fn mean_constant(&self) -> f64 {
        self.mean
    }

    /// The map from model units to observed y.
    pub fn output_transform(&self) -> OutputTransform {
        self.transform
    }

    /// Checks a point's dimension.
    fn check_point(&self, x: &[f64], what: &str) -> Result<()> {
        let d = self.features.dim();
        if x.len() != d {
            return Err(Error::invalid(format!(
                "{what}: point has {} coordinates, the model has dimension {d}",
                x.len()
            )));
        }
        Ok(())
    }

    /// `φᵀΣφ` (model units, unfloored) for features `phi`; with `sigma_phi`, also `Σφ`
    /// into it. In the data form `l = Uᵀφ` goes to `l` (length n).
    fn quadratic(&self, phi: &[f64], l: &mut Vec<f64>, sigma_phi: Option<&mut [f64]>) -> f64 {
        match &self.weights {
            Weights::Data { ut, .. } => {
                let m = phi.len();
                l.clear();
                l.extend(ut.chunks_exact(m).map(|u| dot(u, phi)));
                if let Some(out) = sigma_phi {
                    out.copy_from_slice(phi);
                    for (lj, u) in l.iter().zip(ut.chunks_exact(m)) {
                        axpy(-lj, u, out);
                    }
                }
                dot(phi, phi) - dot(l, l)
            }
            Weights::Weights { chol, .. } => {
                l.clear();
                l.extend_from_slice(phi);
                chol.solve_lower_in_place(l);
                let raw = self.noise * dot(l, l);
                if let Some(out) = sigma_phi {
                    out.copy_from_slice(l);
                    chol.solve_upper_in_place(out);
                    for v in out.iter_mut() {
                        *v *= self.noise;
                    }
                }
                raw
            }
        }
    }

    /// The posterior after observing `ys` (y units) at the rows of `xs` with the model's
    /// noise, hyperparameters kept: per observation, one column more for U in the data
    /// form (O(n·m)) or a rank-one update of the precision factor in the weight form
    /// (O(m²)), then the new weight mean.
    pub fn condition_many(&self, xs: &[f64], ys: &[f64]) -> Result<RfGpPosterior> {
        let d = self.features.dim();
        if xs.len() != ys.len() * d {
            return Err(Error::invalid(format!(
                "condition: {} inputs for {} values in dimension {d}",
                xs.len(),
                ys.len()
            )));
        }
        crate::check_data(&TrainingData {
            dim: d,
            x: xs,
            y: ys,
        })?;
        let mut out = self.clone();
        let m = self.features.len();
        let mut phi = vec![0.0; m];
        let t = self.transform;
        for (x, &y) in xs.chunks_exact(d).zip(ys) {
            self.features.values(x, &mut phi);
            let r = (y - t.shift) / t.scale - self.mean;
            match &mut out.weights {
                Weights::Data { chol, ut, rho } => {
                    // The new row of L is `l = Uᵀφ` (as L⁻¹Φφ) with pivot
                    // `√(φᵀφ + σ² − ‖l‖²)`; `extend_in_place` takes the cross terms `Φφ = Ll`
                    // and solves for l itself, with the factor's jitter.
                    let n = rho.len();
                    let l: Vec<f64> = ut.chunks_exact(m).map(|u| dot(u, &phi)).collect();
                    let c: Vec<f64> = (0..n).map(|i| dot(chol.row(i), &l[..=i])).collect();
                    chol.extend_in_place(&c, dot(&phi, &phi) + self.noise)?;
                    let row = chol.row(n);
                    let (l, pivot) = (&row[..n], row[n]);
                    let mut u = phi.clone();
                    for (lj, uj) in l.iter().zip(ut.chunks_exact(m)) {
                        axpy(-lj, uj, &mut u);
                    }
                    for v in u.iter_mut() {
                        *v /= pivot;
                    }
                    let rho_new = (r - dot(l, rho)) / pivot;
                    axpy(rho_new, &u, &mut out.w);
                    ut.extend_from_slice(&u);
                    rho.push(rho_new);
                }
                Weights::Weights { chol, b } => {
                    chol.update_rank_one_in_place(&phi)?;
                    axpy(r, &phi, b);
                }
            }
            out.n += 1;
        }
        if let Weights::Weights { chol, b } = &out.weights {
            let mut w = b.clone();
            chol.solve_in_place(&mut w);
            out.w = w;
        }
        out.diagnostics = out.base_diagnostics();
        Ok(out)
    }

    /// Weights drawn exactly from `N(w̄, Σ)` with the normal draws of `rng`.
    fn draw_weights(&self, rng: &mut Rng) -> Vec<f64> {
        let m = self.features.len();
        let mut w0 = vec![0.0; m];
        rng.fill_normal(&mut w0);
        let sd = self.noise.sqrt();
        match &self.weights {
            Weights::Data { chol, ut, rho } => {
                // Matheron's rule: w₀ + U(ρ − Uᵀw₀ − L⁻¹ε).
                let mut eta: Vec<f64> = (0..rho.len()).map(|_| sd * rng.normal()).collect();
                chol.solve_lower_in_place(&mut eta);
                let mut w = w0.clone();
                for ((u, r), e) in ut.chunks_exact(m).zip(rho).zip(&eta) {
                    axpy(r - dot(u, &w0) - e, u, &mut w);
                }
                w
            }
            Weights::Weights { chol, .. } => {
                chol.solve_upper_in_place(&mut w0);
                w0.iter().zip(&self.w).map(|(v, m)| m + sd * v).collect()
            }
        }
    }

    /// One function drawn from the posterior, determined by `seed` (see the module doc).
    pub fn sample(&self, seed: u64) -> WeightSample {
        let w = self.draw_weights(&mut Rng::new(seed));
        WeightSample {
            features: Arc::clone(&self.features),
            weights: w,
            mean: self.mean,
            transform: self.transform,
        }
    }

    /// Mean and raw variance (model units, unfloored) at `x`, and with `grad` their
    /// gradients.
    fn predict(&self, x: &[f64], grad: Option<(&mut [f64], &mut [f64])>) -> (f64, f64) {
        let m = self.features.len();
        let mut phi = vec![0.0; m];
        let mut l = Vec::new();
        match grad {
            None => {
                self.features.values(x, &mut phi);
                let mean = self.mean + dot(&phi, &self.w);
                (mean, self.quadratic(&phi, &mut l, None))
            }
            Some((dmean, dvar)) => {
                let mut sin = vec![0.0; m];
                self.features.values_and_sines(x, &mut phi, &mut sin);
                let mean = self.mean + dot(&phi, &self.w);
                self.features.pull_back(&self.w, &sin, dmean);
                let mut sigma_phi = vec![0.0; m];
                let raw = self.quadratic(&phi, &mut l, Some(&mut sigma_phi));
                if raw > MIN_VARIANCE {
                    for v in sigma_phi.iter_mut() {
                        *v *= 2.0;
                    }
                    self.features.pull_back(&sigma_phi, &sin, dvar);
                } else {
                    dvar.fill(0.0);
                }
                (mean, raw)
            }
        }
    }
}

impl Posterior for RfGpPosterior {
    fn dim(&self) -> usize {
        self.features.dim()
    }

    fn mean_var(&self, x: &[f64]) -> MeanVar {
        let (m, v) = self.predict(x, None);
        let t = self.transform;
        MeanVar {
            mean: t.shift + t.scale * m,
            var: t.scale * t.scale * v.max(MIN_VARIANCE),
        }
    }

    fn mean_var_batch(&self, xs: &[f64], out: &mut [MeanVar]) {
        let d = self.features.dim();
        let count = out.len().min(xs.len() / d);
        let Weights::Weights { chol, .. } = &self.weights else {
            for (o, x) in out[..count].iter_mut().zip(xs.chunks_exact(d)) {
                *o = self.mean_var(x);
            }
            return;
        };
        let m = self.features.len();
        let t = self.transform;
        let mut phi = vec![0.0; m];
        let mut block = vec![0.0; m * BATCH];
        for start in (0..count).step_by(BATCH) {
            let size = (count - start).min(BATCH);
            // Features laid out m × size, so the solve updates whole contiguous rows.
            let block = &mut block[..m * size];
            for (j, x) in xs[start * d..(start + size) * d]
                .chunks_exact(d)
                .enumerate()
            {
                self.features.values(x, &mut phi);
                out[start + j].mean = t.shift + t.scale * (self.mean + dot(&phi, &self.w));
                for (k, p) in phi.iter().enumerate() {
                    block[k * size + j] = *p;
                }
            }
            chol.solve_lower_matrix_in_place(block, size);
            let mut var = vec![0.0; size];
            for row in block.chunks_exact(size) {
                for (v, r) in var.iter_mut().zip(row) {
                    *v += r * r;
                }
            }
            for (o, v) in out[start..start + size].iter_mut().zip(&var) {
                o.var = t.scale * t.scale * (self.noise * v).max(MIN_VARIANCE);
            }
        }
    }

    fn mean_var_grad(&self, x: &[f64]) -> Result<MeanVarGrad> {
        self.check_point(x, "mean_var_grad")?;
        let d = x.len();
        let (mut dmean, mut dvar) = (vec![0.0; d], vec![0.0; d]);
        let (mean, raw) = self.predict(x, Some((&mut dmean, &mut dvar)));
        Ok(self.transform.mean_var_grad(mean, raw, dmean, dvar))
    }

    fn noise_variance(&self) -> f64 {
        self.transform.scale * self.transform.scale * self.noise
    }

    fn diagnostics(&self) -> Diagnostics {
        self.diagnostics.clone()
    }

    fn covariance(&self) -> Option<&dyn Covariance> {
        Some(self)
    }

    fn fantasize(&self) -> Option<&dyn Fantasize> {
        Some(self)
    }

    fn sample_paths(&self) -> Option<&dyn SamplePaths> {
        Some(self)
    }

    fn fourier_samples(&self) -> Option<&dyn FourierSamples> {
        Some(self)
    }
}

impl Covariance for RfGpPosterior {
    fn dim(&self) -> usize {
        self.features.dim()
    }

    fn fantasy_noise(&self) -> f64 {
        Posterior::noise_variance(self)
    }

    /// The working vectors make `cov(a, b)` a dot product: in the weight form
    /// `v = σL⁻¹φ(x)` (`Rᵀφ(x)` for `Σ = RRᵀ`, `R = σL⁻ᵀ`), so `cov = v_a·v_b`; in the data
    /// form `v = [φ(x), Uᵀφ(x)]`, so `cov = φ_a·φ_b − (Uᵀφ_a)·(Uᵀφ_b)`. With gradients also
    /// `u = Σφ(x)` and `jv = ∂φ(x)/∂x` (row-major `m × d`).
    fn prepare(&self, x: &[f64], grad: bool, p: &mut PreparedPoint) {
        let t = self.transform;
        let s2 = t.scale * t.scale;
        let m = self.features.len();
        let d = x.len();
        let mut phi = vec![0.0; m];
        p.x.clear();
        p.x.extend_from_slice(x);
        p.dmean.clear();
        p.dvar.clear();
        p.u.clear();
        let mut sin = Vec::new();
        if grad {
            sin.resize(m, 0.0);
            self.features.values_and_sines(x, &mut phi, &mut sin);
            p.jv.resize(m * d, 0.0);
            self.features.jacobian(&sin, &mut p.jv);
            p.dmean.resize(d, 0.0);
            self.features.pull_back(&self.w, &sin, &mut p.dmean);
            for g in p.dmean.iter_mut() {
                *g *= t.scale;
            }
            p.u.resize(m, 0.0);
        } else {
            p.jv.clear();
            self.features.values(x, &mut phi);
        }
        p.mean = t.shift + t.scale * (self.mean + dot(&phi, &self.w));
        let mut l = Vec::new();
        let raw = self.quadratic(&phi, &mut l, grad.then_some(&mut p.u[..]));
        p.v.clear();
        match self.weights {
            Weights::Data { .. } => {
                p.v.extend_from_slice(&phi);
                p.v.extend_from_slice(&l);
            }
            Weights::Weights { .. } => {
                let sd = self.noise.sqrt();
                p.v.extend(l.iter().map(|v| sd * v));
            }
        }
        if grad {
            p.dvar.resize(d, 0.0);
            if raw > MIN_VARIANCE {
                jacobian_transpose_times(&p.jv, &p.u, 2.0 * s2, &mut p.dvar);
            }
        }
        p.var = s2 * raw.max(MIN_VARIANCE);
    }

    fn cov(&self, a: &PreparedPoint, b: &PreparedPoint, ga: &mut [f64], gb: &mut [f64]) -> f64 {
        let t = self.transform;
        let s2 = t.scale * t.scale;
        if !ga.is_empty() {
            jacobian_transpose_times(&a.jv, &b.u, s2, ga);
            jacobian_transpose_times(&b.jv, &a.u, s2, gb);
        }
        let raw = match self.weights {
            Weights::Data { .. } => {
                let m = self.features.len();
                dot(&a.v[..m], &b.v[..m]) - dot(&a.v[m..], &b.v[m..])
            }
            Weights::Weights { .. } => dot(&a.v, &b.v),
        };
        s2 * raw
    }
}

/// `out = c · Jᵀu` for a row-major `m × d` Jacobian `jac`.
fn jacobian_transpose_times(jac: &[f64], u: &[f64], c: f64, out: &mut [f64]) {
    let d = out.len();
    out.fill(0.0);
    for (row, uk) in jac.chunks_exact(d).zip(u) {
        axpy(*uk, row, out);
    }
    for o in out.iter_mut() {
        *o *= c;
    }
}

impl Fantasize for RfGpPosterior {
    /// [`RfGpPosterior::condition_many`]: rank-one updates of the weight posterior.
    fn condition(&self, xs: &[f64], ys: &[f64]) -> Result<Box<dyn Posterior>> {
        Ok(Box::new(self.condition_many(xs, ys)?))
    }
}

impl SamplePaths for RfGpPosterior {
    /// [`RfGpPosterior::sample`]: exact weights drawn from their posterior.
    fn sample_path(&self, seed: u64) -> Result<Box<dyn Objective + Send + Sync>> {
        Ok(Box::new(self.sample(seed)))
    }
}

impl FourierSamples for RfGpPosterior {
    /// `count` exact draws of this model's posterior on its own basis of m features. The
    /// model *is* a function on that basis, so its draws are exact on it and on no other:
    /// the `features` a policy asks for (the size of the basis on which a kernel model would
    /// approximate its posterior) is not used, and the draws report m features, which the
    /// policies read from [`FourierDraws::features`].
    fn draw(&self, _features: usize, count: usize, seed: u64) -> Result<FourierDraws> {
        if count == 0 {
            return Err(Error::invalid("sample paths: need at least 1"));
        }
        let f = &self.features;
        let t = self.transform;
        let mut rng = Rng::new(derive_seed(&[&seed, &"weights"]));
        let scale = f.amplitude() * t.scale;
        let mut weights = Vec::with_capacity(count * f.len());
        for _ in 0..count {
            let w = self.draw_weights(&mut rng);
            weights.extend(w.iter().map(|v| v * scale));
        }
        Ok(FourierDraws {
            dim: f.dim(),
            frequencies: f.frequencies().to_vec(),
            phases: f.phases().to_vec(),
            weights,
            offset: t.shift + t.scale * self.mean,
        })
    }
}

/// A function drawn from the weight posterior, `μ + φ(x)ᵀw` (reported in y units).
#[derive(Debug, Clone)]
pub struct WeightSample {
    features: Arc<Features>,
    weights: Vec<f64>,
    mean: f64,
    transform: OutputTransform,
}

impl WeightSample {
    /// The drawn weights (model units).
    pub fn weights(&self) -> &[f64] {
        &self.weights
    }
}

impl Objective for WeightSample {
    fn value(&self, x: &[f64]) -> f64 {
        let mut phi = vec![0.0; self.features.len()];
        self.features.values(x, &mut phi);
        let t = self.transform;
        t.shift + t.scale * (self.mean + dot(&phi, &self.weights))
    }

    fn value_grad(&self, x: &[f64], grad: &mut [f64]) -> f64 {
        let m = self.features.len();
        let (mut phi, mut sin) = (vec![0.0; m], vec![0.0; m]);
        self.features.values_and_sines(x, &mut phi, &mut sin);
        self.features.pull_back(&self.weights, &sin, grad);
        let t = self.transform;
        for g in grad.iter_mut() {
            *g *= t.scale;
        }
        t.shift + t.scale * (self.mean + dot(&phi, &self.weights))
    }
}
