//! The exact GP posterior. Besides means and variances it offers every capability of
//! [`cabo_core::capability`]: fantasies by Cholesky extension ([`GpPosterior::condition_many`]),
//! covariances between prepared points (`covariance.rs`), pathwise sample paths, draws on a
//! shared Fourier basis (`fourier.rs`), the knowledge gradient's fast objective (`kg.rs`) and
//! expected bounds over open variables (`bounds.rs`).
//!
//! Internally everything is in *model units* (standardised y when the model standardises);
//! every public method reports in the units of the observed y, like BoTorch's
//! `Standardize` outcome transform, unless its doc says otherwise.

use crate::kernel::{Kernel, scaled_profiles};
use crate::rff::RandomFeatures;
use cabo_core::capability::{
    Covariance, Fantasize, FantasyMeans, FourierSamples, OpenBounds, SamplePaths,
};
use cabo_core::{
    Diagnostics, Error, MeanVar, MeanVarGrad, Objective, Posterior, Result, Rng, TrainingData,
};
use cabo_linalg::Cholesky;
use cabo_linalg::distance::{
    BLOCK_LANES, block_squared_distances, inverse_lengthscaled_squared_distances,
    scaled_by_coordinate, squared_distances, weighted_differences, weighted_kernel_gradients,
};
use cabo_linalg::{axpy, dot};
use std::cell::RefCell;
use std::sync::Arc;

thread_local! {
    /// Per-thread scratch of the single-point prediction paths, which the optimiser calls
    /// thousands of times per decision: reusing it avoids two zeroed allocations per call
    /// while the posterior itself stays immutable (`Send + Sync`).
    static SCRATCH: RefCell<Vec<f64>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` on a scratch slice of `len` values (contents unspecified), from the
/// thread-local buffer when it is free and from a fresh allocation otherwise (re-entrant use).
fn with_scratch<R>(len: usize, f: impl FnOnce(&mut [f64]) -> R) -> R {
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut buf) => {
            if buf.len() < len {
                buf.resize(len, 0.0);
            }
            f(&mut buf[..len])
        }
        Err(_) => f(&mut vec![0.0; len]),
    })
}

/// Points [`Posterior::mean_var_grads`] evaluates together: enough to share each load of the
/// Cholesky factor among many right-hand sides, few enough that their kernel rows and
/// weights (2 · 16 · n values, 200 KB at n = 800) stay in the L2 cache.
/// One block of [`block_squared_distances`].
const GRAD_BLOCK: usize = BLOCK_LANES;

/// Number of random Fourier features of posterior sample paths (seed 002, App. C.2).
pub const SAMPLE_PATH_FEATURES: usize = 1024;

/// Smallest posterior variance reported, in model units: GPyTorch's float64 floor, so that
/// EI-type acquisitions never divide by zero at training points.
pub const MIN_VARIANCE: f64 = 1e-10;

/// The affine map between model units and observed y: `y = shift + scale · y_model`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OutputTransform {
    /// Location (the training mean when standardising, else 0).
    pub shift: f64,
    /// Scale (the training standard deviation when standardising, else 1).
    pub scale: f64,
}

impl OutputTransform {
    /// The identity map.
    pub const IDENTITY: OutputTransform = OutputTransform {
        shift: 0.0,
        scale: 1.0,
    };

    /// BoTorch's `Standardize`: mean and unbiased standard deviation of `y`, with the scale
    /// replaced by 1 when fewer than two points or a spread below 1e-8 make it meaningless.
    pub fn standardize(y: &[f64]) -> OutputTransform {
        let n = y.len();
        if n == 0 {
            return Self::IDENTITY;
        }
        let mean = y.iter().sum::<f64>() / n as f64;
        let sd = if n >= 2 {
            (y.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
        } else {
            0.0
        };
        OutputTransform {
            shift: mean,
            scale: if sd >= 1e-8 { sd } else { 1.0 },
        }
    }

    /// A prediction in model units — mean, variance before its floor, and their gradients
    /// in x — in y units, the variance floored at [`MIN_VARIANCE`] first: what every GP-type
    /// posterior returns from `mean_var_grad`.
    pub fn mean_var_grad(
        &self,
        mean: f64,
        raw_var: f64,
        dmean: Vec<f64>,
        dvar: Vec<f64>,
    ) -> MeanVarGrad {
        let s2 = self.scale * self.scale;
        MeanVarGrad {
            mean: self.shift + self.scale * mean,
            var: s2 * raw_var.max(MIN_VARIANCE),
            dmean: dmean.into_iter().map(|g| self.scale * g).collect(),
            dvar: dvar.into_iter().map(|g| s2 * g).collect(),
        }
    }
}

/// Training inputs shared between a posterior and its fantasies.
#[derive(Debug)]
struct Train {
    dim: usize,
    /// Inputs, row-major `n × d`, unit cube.
    x: Vec<f64>,
    /// Inputs divided by the lengthscales (so distances need no division).
    x_scaled: Vec<f64>,
    /// Inputs laid out by coordinate (`d × n`), so one point's distances to all of them run
    /// side by side.
    x_by_coordinate: Vec<f64>,
    /// Targets in model units.
    y: Vec<f64>,
}

impl Train {
    fn new(dim: usize, x: Vec<f64>, x_scaled: Vec<f64>, y: Vec<f64>) -> Train {
        let mut x_by_coordinate = vec![0.0; x.len()];
        scaled_by_coordinate(&x, &vec![1.0; dim], &mut x_by_coordinate);
        Train {
            dim,
            x,
            x_scaled,
            x_by_coordinate,
            y,
        }
    }
}

/// The posterior of an exact GP with a constant mean and Gaussian noise. Cheap to clone
/// (the factor and data are copied, O(n²)); conditioning extends the Cholesky factor.
#[derive(Debug, Clone)]
pub struct GpPosterior {
    kernel: Kernel,
    inv_ls: Vec<f64>,
    mean: f64,
    noise: f64,
    train: Arc<Train>,
    chol: Cholesky,
    /// `(K + σ²I)⁻¹ (y − mean)`, model units.
    alpha: Vec<f64>,
    transform: OutputTransform,
    diagnostics: Diagnostics,
}

impl GpPosterior {
    /// The posterior given hyperparameters in model units (`kernel`, `noise` variance,
    /// constant `mean`), training data in observed units and the map `transform` from model
    /// to observed units. Fails on non-finite data (naming the index), a dimension
    /// mismatch, or a covariance that stays indefinite after jitter. Empty data gives the
    /// prior.
    pub fn new(
        kernel: Kernel,
        noise: f64,
        mean: f64,
        data: TrainingData<'_>,
        transform: OutputTransform,
    ) -> Result<Self> {
        check_data(&data)?;
        if data.dim != kernel.dim() {
            return Err(Error::invalid(format!(
                "GP: data have dimension {}, the kernel has {} lengthscales",
                data.dim,
                kernel.dim()
            )));
        }
        if !(noise.is_finite() && noise >= 0.0) {
            return Err(Error::invalid(format!(
                "GP: noise variance {noise} must be finite and ≥ 0"
            )));
        }
        if !(mean.is_finite() && transform.scale > 0.0 && transform.shift.is_finite()) {
            return Err(Error::invalid(
                "GP: mean and output transform must be finite",
            ));
        }
        let inv_ls: Vec<f64> = kernel.lengthscales.iter().map(|l| 1.0 / l).collect();
        let x_scaled = scale_rows(data.x, &inv_ls);
        let n = data.len();
        let gram = gram_rows(&kernel, noise, &x_scaled, data.dim, 0..n);
        let chol = Cholesky::factor(&gram, n)?;
        Ok(Self::assemble(
            kernel, inv_ls, noise, mean, data, x_scaled, chol, transform,
        ))
    }

    /// The posterior of the same kernel, noise and mean given `data`, whose first points are
    /// this posterior's training inputs, computed by extending this posterior's Cholesky
    /// factor by the new rows instead of factorising afresh: bitwise the posterior
    /// [`GpPosterior::new`] returns (see [`Cholesky::extend_rows_in_place`]). `None` when
    /// that does not apply (other hyperparameters or inputs, a factor that needed jitter, a
    /// grown matrix that would), and the caller factorises.
    pub fn grown(
        &self,
        kernel: &Kernel,
        noise: f64,
        mean: f64,
        data: TrainingData<'_>,
        transform: OutputTransform,
    ) -> Option<Result<GpPosterior>> {
        let (d, n0) = (self.train.dim, self.len());
        let same_model = *kernel == self.kernel
            && noise.to_bits() == self.noise.to_bits()
            && mean.to_bits() == self.mean.to_bits();
        if !same_model || data.dim != d || data.len() < n0 || data.x.len() != data.y.len() * d {
            return None;
        }
        let same_inputs =
            (data.x[..n0 * d].iter().zip(&self.train.x)).all(|(a, b)| a.to_bits() == b.to_bits());
        if !same_inputs {
            return None;
        }
        if let Err(e) = check_data(&data) {
            return Some(Err(e));
        }
        if !(transform.scale > 0.0 && transform.shift.is_finite()) {
            return None;
        }
        let mut x_scaled = self.train.x_scaled.clone();
        x_scaled.extend(scale_rows(&data.x[n0 * d..], &self.inv_ls));
        let n = data.len();
        let rows = gram_rows(kernel, noise, &x_scaled, d, n0..n);
        let mut chol = self.chol.clone();
        match chol.extend_rows_in_place(&rows, n - n0) {
            Ok(true) => {}
            Ok(false) => return None,
            Err(e) => return Some(Err(e)),
        }
        let inv_ls = self.inv_ls.clone();
        Some(Ok(Self::assemble(
            kernel.clone(),
            inv_ls,
            noise,
            mean,
            data,
            x_scaled,
            chol,
            transform,
        )))
    }

    /// The posterior from its validated parts and factor.
    #[allow(clippy::too_many_arguments)]
    fn assemble(
        kernel: Kernel,
        inv_ls: Vec<f64>,
        noise: f64,
        mean: f64,
        data: TrainingData<'_>,
        x_scaled: Vec<f64>,
        chol: Cholesky,
        transform: OutputTransform,
    ) -> GpPosterior {
        let y: Vec<f64> = data
            .y
            .iter()
            .map(|v| (v - transform.shift) / transform.scale)
            .collect();
        let train = Train::new(data.dim, data.x.to_vec(), x_scaled, y);
        let mut post = GpPosterior {
            kernel,
            inv_ls,
            mean,
            noise,
            train: Arc::new(train),
            chol,
            alpha: Vec::new(),
            transform,
            diagnostics: Diagnostics::new(),
        };
        post.update_alpha();
        post.diagnostics = post.base_diagnostics();
        post
    }

    fn update_alpha(&mut self) {
        let mut a: Vec<f64> = self.train.y.iter().map(|v| v - self.mean).collect();
        self.chol.solve_in_place(&mut a);
        self.alpha = a;
    }

    fn base_diagnostics(&self) -> Diagnostics {
        let mut d = Diagnostics::new();
        for (i, l) in self.kernel.lengthscales.iter().enumerate() {
            d.insert(format!("gp.lengthscale[{i}]"), *l);
        }
        d.insert("gp.outputscale".into(), self.kernel.outputscale);
        d.insert("gp.noise".into(), self.noise);
        d.insert("gp.mean".into(), self.mean);
        d.insert("gp.jitter".into(), self.chol.jitter());
        d.insert("gp.n".into(), self.len() as f64);
        d
    }

    /// Adds entries to the diagnostics (the fitter records its objective and iterations).
    pub(crate) fn set_diagnostic(&mut self, key: &str, value: f64) {
        self.diagnostics.insert(key.to_string(), value);
    }

    /// Number of training points (fantasies included).
    pub fn len(&self) -> usize {
        self.train.y.len()
    }

    /// True for the prior (no training points).
    pub fn is_empty(&self) -> bool {
        self.train.y.is_empty()
    }

    /// The kernel, in model units (its outputscale is the model-unit prior variance).
    pub fn kernel(&self) -> &Kernel {
        &self.kernel
    }

    /// Constant prior mean, model units.
    pub fn mean_constant(&self) -> f64 {
        self.mean
    }

    /// Noise variance in model units (see [`Posterior::noise_variance`] for y units).
    pub fn model_noise_variance(&self) -> f64 {
        self.noise
    }

    /// The map from model units to observed y.
    pub fn output_transform(&self) -> OutputTransform {
        self.transform
    }

    /// Training inputs, row-major `n × d` (fantasy points included).
    pub fn train_x(&self) -> &[f64] {
        &self.train.x
    }

    /// Training inputs laid out by coordinate (`d × n`, fantasy points included).
    pub(crate) fn train_x_by_coordinate(&self) -> &[f64] {
        &self.train.x_by_coordinate
    }

    /// Training targets in observed units (fantasy values included).
    pub fn train_y(&self) -> Vec<f64> {
        let t = self.transform;
        self.train.y.iter().map(|v| t.shift + t.scale * v).collect()
    }

    /// The Cholesky factor of `K + σ²I` (model units; its jitter is recorded).
    pub fn cholesky(&self) -> &Cholesky {
        &self.chol
    }

    /// `(K + σ²I)⁻¹ (y − mean)` in model units.
    pub fn alpha(&self) -> &[f64] {
        &self.alpha
    }

    /// Prior covariance `k(a, b)` in y units.
    pub fn prior_covariance(&self, a: &[f64], b: &[f64]) -> f64 {
        self.transform.scale.powi(2) * self.kernel.value(a, b)
    }

    /// Cross-covariances `k(x, X_i)` with every training input, in y units.
    pub fn cross_covariance(&self, x: &[f64], out: &mut [f64]) {
        self.cross_model(x, out);
        let s2 = self.transform.scale.powi(2);
        for v in out.iter_mut() {
            *v *= s2;
        }
    }

    /// Cross-covariances `k(x, X_i)` (y units) and their x-gradients, `grad` row-major
    /// `n × d` (row i is `∂k(x, X_i)/∂x`).
    pub fn cross_covariance_grad(&self, x: &[f64], out: &mut [f64], grad: &mut [f64]) {
        self.cross_grad_model(x, out, grad);
        let s2 = self.transform.scale.powi(2);
        for v in out.iter_mut().chain(grad.iter_mut()) {
            *v *= s2;
        }
    }

    /// k(x, X) in model units.
    fn cross_model(&self, x: &[f64], out: &mut [f64]) {
        let d = self.train.dim;
        let mut xs = [0.0f64; 64];
        let xs_vec;
        let xsc: &[f64] = if d <= 64 {
            for ((o, a), il) in xs.iter_mut().zip(x).zip(&self.inv_ls) {
                *o = a * il;
            }
            &xs[..d]
        } else {
            xs_vec = x
                .iter()
                .zip(&self.inv_ls)
                .map(|(a, il)| a * il)
                .collect::<Vec<_>>();
            &xs_vec
        };
        let s = self.kernel.outputscale;
        for (o, row) in out.iter_mut().zip(self.train.x_scaled.chunks_exact(d)) {
            *o = s * self.kernel.kind.profile(sqdist(xsc, row)).0;
        }
    }

    /// k(x, X) and ∂k/∂x (row-major n × d) in model units.
    fn cross_grad_model(&self, x: &[f64], out: &mut [f64], grad: &mut [f64]) {
        let d = self.train.dim;
        let s = self.kernel.outputscale;
        for (i, (o, g)) in out.iter_mut().zip(grad.chunks_exact_mut(d)).enumerate() {
            let xi = &self.train.x[i * d..(i + 1) * d];
            // The scaled differences go into the gradient row first, so the second pass
            // only rescales them.
            let mut r2 = 0.0;
            for j in 0..d {
                let t = (x[j] - xi[j]) * self.inv_ls[j];
                g[j] = t;
                r2 += t * t;
            }
            let (k, dk) = self.kernel.kind.profile(r2);
            *o = s * k;
            let c = 2.0 * s * dk;
            for (gj, il) in g.iter_mut().zip(&self.inv_ls) {
                *gj *= c * il;
            }
        }
    }

    /// Mean and variance in model units (variance floored at [`MIN_VARIANCE`]).
    fn mean_var_model(&self, x: &[f64]) -> (f64, f64) {
        let n = self.len();
        with_scratch(n, |k| {
            self.cross_model(x, k);
            let mean = self.mean + dot(k, &self.alpha);
            self.chol.solve_lower_in_place(k);
            let var = self.kernel.outputscale - dot(k, k);
            (mean, var.max(MIN_VARIANCE))
        })
    }

    /// Means, variances and their gradients at the rows of `xs` (at most [`GRAD_BLOCK`]
    /// points), pushed onto `out` in y units.
    ///
    /// Both gradients are sums over training points of a weight times the scaled difference
    /// row `t_i = (x − X_i)/ℓ`, rescaled by `1/ℓ` once at the end: `∂mean/∂x = Σ α_i c_i t_i/ℓ`
    /// and `∂var/∂x = −2 Σ u_i c_i t_i/ℓ` with `c_i = 2 s κ'(r_i²)` and `u = K⁻¹k`, so `∂k/∂x`
    /// is never stored. The block's kernel rows are computed training row by training row and
    /// its triangular solves share each load of the factor; per point the operations and
    /// their order are those of one point alone, so grouping never changes a bit.
    fn mean_var_grad_block(&self, xs: &[f64], out: &mut Vec<Result<MeanVarGrad>>) {
        let (d, n) = (self.train.dim, self.len());
        let b = xs.len() / d;
        debug_assert!(b <= GRAD_BLOCK);
        let s = self.kernel.outputscale;
        with_scratch(d * b + 2 * b * n + 2 * n, |buf| {
            let (points, rest) = buf.split_at_mut(d * b);
            let (k, rest) = rest.split_at_mut(b * n);
            let (c, weights) = rest.split_at_mut(b * n);
            self.block_squared_distances(xs, points, k);
            let mut mean = [0.0; GRAD_BLOCK];
            for (p, m) in mean[..b].iter_mut().enumerate() {
                let kp = &mut k[p * n..(p + 1) * n];
                scaled_profiles(self.kernel.kind, s, kp, &mut c[p * n..(p + 1) * n]);
                *m = self.mean + dot(kp, &self.alpha);
            }
            // v = L⁻¹k gives the variance; u = L⁻ᵀv = K⁻¹k gives its gradient.
            self.chol.solve_lower_many_in_place(k);
            let mut raw_var = [0.0; GRAD_BLOCK];
            for (p, v) in raw_var[..b].iter_mut().enumerate() {
                let kp = &k[p * n..(p + 1) * n];
                *v = s - dot(kp, kp);
            }
            let with_var = |p: usize| raw_var[p] > MIN_VARIANCE;
            if (0..b).all(with_var) {
                self.chol.solve_upper_many_in_place(k);
            } else {
                for p in (0..b).filter(|&p| with_var(p)) {
                    self.chol.solve_upper_in_place(&mut k[p * n..(p + 1) * n]);
                }
            }
            for (p, xp) in points.chunks_exact(d).enumerate() {
                let (u, cp) = (&k[p * n..(p + 1) * n], &c[p * n..(p + 1) * n]);
                let (dmean, dvar) = self.moment_gradients(xp, u, cp, with_var(p), weights);
                out.push(Ok(self
                    .transform
                    .mean_var_grad(mean[p], raw_var[p], dmean, dvar)));
            }
        });
    }

    /// The scaled points of `xs` (row-major, into `points`) and their squared distances to
    /// every training input (row p of `k`, `n` values per point). From four points on the
    /// block's distances to one training input run side by side in vector lanes (the points
    /// laid out by coordinate); each is summed in ascending coordinate order either way, so
    /// both give the bits of `sqdist` one point at a time.
    fn block_squared_distances(&self, xs: &[f64], points: &mut [f64], k: &mut [f64]) {
        let (d, n) = (self.train.dim, self.len());
        let b = xs.len() / d;
        for ((o, x), il) in points.iter_mut().zip(xs).zip(self.inv_ls.iter().cycle()) {
            *o = x * il;
        }
        let rows = &self.train.x_scaled;
        if b < 4 {
            for (i, xi) in rows.chunks_exact(d).enumerate() {
                for (p, xp) in points.chunks_exact(d).enumerate() {
                    k[p * n + i] = sqdist(xp, xi);
                }
            }
            return;
        }
        let mut by_coordinate = vec![0.0; d * BLOCK_LANES];
        for (p, xp) in points.chunks_exact(d).enumerate() {
            for (j, &v) in xp.iter().enumerate() {
                by_coordinate[j * BLOCK_LANES + p] = v;
            }
        }
        block_squared_distances(&by_coordinate, b, rows, k);
    }

    /// `(∂mean/∂x, ∂var/∂x)` in model units at the scaled point `xp` from `u = K⁻¹k` and the
    /// weights `c` of [`GpPosterior::mean_var_grad_block`]; the variance's gradient is zero
    /// when the variance sits at its floor. `weights` (2n values) is scratch for the sums' weights.
    fn moment_gradients(
        &self,
        xp: &[f64],
        u: &[f64],
        c: &[f64],
        with_var: bool,
        weights: &mut [f64],
    ) -> (Vec<f64>, Vec<f64>) {
        let d = self.train.dim;
        let mut dmean = vec![0.0; d];
        let mut dvar = vec![0.0; d];
        let (wm, wv) = weights.split_at_mut(u.len());
        for (w, (a, ci)) in wm.iter_mut().zip(self.alpha.iter().zip(c)) {
            *w = a * ci;
        }
        for (w, (ui, ci)) in wv.iter_mut().zip(u.iter().zip(c)) {
            *w = if with_var { -2.0 * ui * ci } else { 0.0 };
        }
        weighted_differences(xp, &self.train.x_scaled, wm, wv, &mut dmean, &mut dvar);
        for ((gm, gv), il) in dmean.iter_mut().zip(dvar.iter_mut()).zip(&self.inv_ls) {
            *gm *= il;
            *gv *= il;
        }
        (dmean, dvar)
    }

    /// The posterior after observing `ys` (y units) at the rows of `xs` with the model's
    /// noise: the Cholesky factor is extended one row at a time (O(n²) each), never
    /// refactorised, and hyperparameters are kept.
    pub fn condition_many(&self, xs: &[f64], ys: &[f64]) -> Result<GpPosterior> {
        let d = self.train.dim;
        if xs.len() != ys.len() * d {
            return Err(Error::invalid(format!(
                "condition: {} inputs for {} values in dimension {d}",
                xs.len(),
                ys.len()
            )));
        }
        check_data(&TrainingData {
            dim: d,
            x: xs,
            y: ys,
        })?;
        let mut out = self.clone();
        let (mut x_all, mut x_scaled, mut y_all) = (
            self.train.x.clone(),
            self.train.x_scaled.clone(),
            self.train.y.clone(),
        );
        let t = self.transform;
        for (x, &y) in xs.chunks_exact(d).zip(ys) {
            let mut k = vec![0.0; y_all.len()];
            // Cross terms against the current (growing) training set.
            let s = self.kernel.outputscale;
            let xsc: Vec<f64> = x.iter().zip(&self.inv_ls).map(|(a, il)| a * il).collect();
            for (o, row) in k.iter_mut().zip(x_scaled.chunks_exact(d)) {
                *o = s * self.kernel.kind.profile(sqdist(&xsc, row)).0;
            }
            out.chol.extend_in_place(&k, s + self.noise)?;
            x_all.extend_from_slice(x);
            x_scaled.extend_from_slice(&xsc);
            y_all.push((y - t.shift) / t.scale);
        }
        out.train = Arc::new(Train::new(d, x_all, x_scaled, y_all));
        out.update_alpha();
        out.diagnostics = out.base_diagnostics();
        Ok(out)
    }

    /// Joint mean (length m) and covariance (row-major m × m, y units) at the m rows of
    /// `xs`.
    pub fn joint(&self, xs: &[f64]) -> Result<(Vec<f64>, Vec<f64>)> {
        let d = self.train.dim;
        if d == 0 || !xs.len().is_multiple_of(d) {
            return Err(Error::invalid(format!(
                "joint: {} coordinates are not a whole number of points of dimension {d}",
                xs.len()
            )));
        }
        let m = xs.len() / d;
        let n = self.len();
        let t = self.transform;
        let mut kt = vec![0.0; n * m];
        let mut col = vec![0.0; n];
        for (j, p) in xs.chunks_exact(d).enumerate() {
            self.cross_model(p, &mut col);
            for i in 0..n {
                kt[i * m + j] = col[i];
            }
        }
        let mut mean = vec![self.mean; m];
        for (i, row) in kt.chunks_exact(m).enumerate() {
            axpy(self.alpha[i], row, &mut mean);
        }
        self.chol.solve_lower_matrix_in_place(&mut kt, m);
        let mut cov = vec![0.0; m * m];
        for a in 0..m {
            let pa = &xs[a * d..(a + 1) * d];
            for b in 0..=a {
                let mut c = self.kernel.value(pa, &xs[b * d..(b + 1) * d]);
                for row in kt.chunks_exact(m) {
                    c -= row[a] * row[b];
                }
                if a == b {
                    c = c.max(MIN_VARIANCE);
                }
                cov[a * m + b] = t.scale * t.scale * c;
                cov[b * m + a] = cov[a * m + b];
            }
        }
        Ok((
            mean.into_iter().map(|v| t.shift + t.scale * v).collect(),
            cov,
        ))
    }

    /// A pathwise-conditioned posterior sample (Wilson et al. 2020): a prior draw from
    /// [`SAMPLE_PATH_FEATURES`] random Fourier features, updated exactly by
    /// `f(x) = f_prior(x) + k(x, X)(K + σ²I)⁻¹(y − f_prior(X) − ε)`, `ε ~ N(0, σ²I)`.
    pub fn pathwise_sample(&self, seed: u64) -> Result<PathwiseSample> {
        self.pathwise_sample_with(SAMPLE_PATH_FEATURES, seed)
    }

    /// [`GpPosterior::pathwise_sample`] with a chosen number of features.
    pub fn pathwise_sample_with(&self, n_features: usize, seed: u64) -> Result<PathwiseSample> {
        let prior = RandomFeatures::from_kernel(&self.kernel, n_features, seed)?;
        let mut rng = Rng::new(cabo_core::derive_seed(&[&seed, &"pathwise noise"]));
        let sd = self.noise.sqrt();
        let d = self.train.dim;
        let mut v: Vec<f64> = self
            .train
            .x
            .chunks_exact(d)
            .zip(&self.train.y)
            .map(|(x, y)| y - self.mean - prior.value(x) - sd * rng.normal())
            .collect();
        self.chol.solve_in_place(&mut v);
        let mut x_scaled_by_coordinate = vec![0.0; self.train.x_scaled.len()];
        scaled_by_coordinate(
            &self.train.x_scaled,
            &vec![1.0; d],
            &mut x_scaled_by_coordinate,
        );
        Ok(PathwiseSample {
            posterior: self.clone(),
            prior,
            weights: v,
            x_scaled_by_coordinate,
        })
    }

    /// A posterior sample by Bayesian linear regression on [`SAMPLE_PATH_FEATURES`] random
    /// Fourier features (seed 002, App. C.2): `f(x) = mean + φ(x)ᵀw` with w drawn exactly
    /// from its Gaussian posterior under the prior N(0, I) and noise σ². The draw uses
    /// Matheron's rule in weight space, `w = w₀ + Φᵀ(ΦΦᵀ + σ²I)⁻¹(y − Φw₀ − ε)`, which costs
    /// O(n²m) instead of the O(m³) of forming the m × m posterior covariance.
    pub fn rff_blr_sample(&self, seed: u64) -> Result<RandomFeaturesSample> {
        self.rff_blr_sample_with(SAMPLE_PATH_FEATURES, seed)
    }

    /// [`GpPosterior::rff_blr_sample`] with a chosen number of features.
    pub fn rff_blr_sample_with(
        &self,
        n_features: usize,
        seed: u64,
    ) -> Result<RandomFeaturesSample> {
        let mut features = RandomFeatures::from_kernel(&self.kernel, n_features, seed)?;
        let n = self.len();
        let m = n_features;
        if n > 0 {
            let phi = features.feature_matrix(&self.train.x);
            let mut gram = vec![0.0; n * n];
            for i in 0..n {
                for j in 0..=i {
                    gram[i * n + j] = dot(&phi[i * m..(i + 1) * m], &phi[j * m..(j + 1) * m]);
                }
                gram[i * n + i] += self.noise;
            }
            let chol = Cholesky::factor(&gram, n)?;
            let mut rng = Rng::new(cabo_core::derive_seed(&[&seed, &"blr noise"]));
            let sd = self.noise.sqrt();
            let w0 = features.weights().to_vec();
            let mut r: Vec<f64> = (0..n)
                .map(|i| {
                    self.train.y[i]
                        - self.mean
                        - dot(&phi[i * m..(i + 1) * m], &w0)
                        - sd * rng.normal()
                })
                .collect();
            chol.solve_in_place(&mut r);
            let mut w = w0;
            for (i, ri) in r.iter().enumerate() {
                axpy(*ri, &phi[i * m..(i + 1) * m], &mut w);
            }
            features.set_weights(w)?;
        }
        Ok(RandomFeaturesSample {
            features,
            mean: self.mean,
            transform: self.transform,
        })
    }
}

impl Posterior for GpPosterior {
    fn dim(&self) -> usize {
        self.train.dim
    }

    fn mean_var(&self, x: &[f64]) -> MeanVar {
        let (m, v) = self.mean_var_model(x);
        let t = self.transform;
        MeanVar {
            mean: t.shift + t.scale * m,
            var: t.scale * t.scale * v,
        }
    }

    fn mean_var_batch(&self, xs: &[f64], out: &mut [MeanVar]) {
        let d = self.train.dim;
        let m = out.len().min(xs.len() / d.max(1));
        let n = self.len();
        let t = self.transform;
        let s = self.kernel.outputscale;
        if n == 0 {
            for o in out.iter_mut() {
                *o = MeanVar {
                    mean: t.shift + t.scale * self.mean,
                    var: t.scale * t.scale * s,
                };
            }
            return;
        }
        // Kᵀ laid out n × m so the mean is a sum of rows and the triangular solve updates
        // whole contiguous rows.
        if m == 0 {
            return;
        }
        // The points laid out by coordinate, so each row's distances run side by side.
        let mut points = vec![0.0; m * d];
        scaled_by_coordinate(&xs[..m * d], &self.inv_ls, &mut points);
        let mut kt = vec![0.0; n * m];
        let mut weights = vec![0.0; m];
        for (row, xi) in kt
            .chunks_exact_mut(m)
            .zip(self.train.x_scaled.chunks_exact(d))
        {
            squared_distances(&points, m, xi, row);
            scaled_profiles(self.kernel.kind, s, row, &mut weights);
        }
        let mut mean = vec![self.mean; m];
        for (i, row) in kt.chunks_exact(m).enumerate() {
            axpy(self.alpha[i], row, &mut mean);
        }
        self.chol.solve_lower_matrix_in_place(&mut kt, m);
        let mut var = vec![s; m];
        for row in kt.chunks_exact(m) {
            for (v, r) in var.iter_mut().zip(row) {
                *v -= r * r;
            }
        }
        for ((o, mu), v) in out.iter_mut().zip(&mean).zip(&var) {
            *o = MeanVar {
                mean: t.shift + t.scale * mu,
                var: t.scale * t.scale * v.max(MIN_VARIANCE),
            };
        }
    }

    fn mean_var_grad(&self, x: &[f64]) -> Result<MeanVarGrad> {
        let d = self.train.dim;
        if x.len() != d {
            return Err(Error::invalid(format!(
                "mean_var_grad: point has {} coordinates, the model has dimension {d}",
                x.len()
            )));
        }
        let mut out = Vec::with_capacity(1);
        self.mean_var_grad_block(x, &mut out);
        out.pop().expect("one point gives one result")
    }

    /// Blocks of 16 points share each load of the Cholesky factor; every result
    /// has the bits of [`GpPosterior::mean_var_grad`] at its point (one code path serves
    /// both).
    fn mean_var_grads(&self, xs: &[f64]) -> Vec<Result<MeanVarGrad>> {
        let d = self.train.dim;
        let points = xs.len() / d;
        let mut out = Vec::with_capacity(points);
        for block in xs[..points * d].chunks(GRAD_BLOCK * d) {
            self.mean_var_grad_block(block, &mut out);
        }
        out
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

    fn fantasy_means(&self) -> Option<&dyn FantasyMeans> {
        Some(self)
    }

    fn open_bounds(&self) -> Option<&dyn OpenBounds> {
        Some(self)
    }
}

impl Fantasize for GpPosterior {
    /// [`GpPosterior::condition_many`]: the Cholesky factor is extended, not refactorised.
    fn condition(&self, xs: &[f64], ys: &[f64]) -> Result<Box<dyn Posterior>> {
        Ok(Box::new(self.condition_many(xs, ys)?))
    }
}

impl SamplePaths for GpPosterior {
    /// [`GpPosterior::pathwise_sample`].
    fn sample_path(&self, seed: u64) -> Result<Box<dyn Objective + Send + Sync>> {
        Ok(Box::new(self.pathwise_sample(seed)?))
    }
}

/// A posterior sample path by pathwise (Matheron) conditioning of a random-feature prior
/// draw; see [`GpPosterior::pathwise_sample`]. Values are in y units.
///
/// Thompson sampling maximises it from hundreds of starts, so its kernel terms run over the
/// training inputs side by side: squared distances from inputs laid out by coordinate,
/// kernel values and gradient weights in one vectorised loop, and the gradient's weighted
/// sum without storing the kernel's Jacobian. Each entry has the operations, in the order,
/// of the point-by-point loop over training inputs (`cross_model`, `cross_grad_model`), so
/// the values are those bits.
#[derive(Debug, Clone)]
pub struct PathwiseSample {
    posterior: GpPosterior,
    prior: RandomFeatures,
    /// `(K + σ²I)⁻¹(y − mean − f_prior(X) − ε)`.
    weights: Vec<f64>,
    /// The training inputs divided by the lengthscales, laid out by coordinate (`d × n`).
    x_scaled_by_coordinate: Vec<f64>,
}

impl Objective for PathwiseSample {
    fn value(&self, x: &[f64]) -> f64 {
        let p = &self.posterior;
        let n = p.len();
        with_scratch(2 * n + x.len(), |buf| {
            let (k, rest) = buf.split_at_mut(n);
            let (c, xsc) = rest.split_at_mut(n);
            for ((s, a), il) in xsc.iter_mut().zip(x).zip(&p.inv_ls) {
                *s = a * il;
            }
            squared_distances(&self.x_scaled_by_coordinate, n, xsc, k);
            scaled_profiles(p.kernel.kind, p.kernel.outputscale, k, c);
            let f = p.mean + self.prior.value(x) + dot(k, &self.weights);
            p.transform.shift + p.transform.scale * f
        })
    }

    fn value_grad(&self, x: &[f64], grad: &mut [f64]) -> f64 {
        let p = &self.posterior;
        let n = p.len();
        with_scratch(2 * n, |buf| {
            let (k, c) = buf.split_at_mut(n);
            let by_coordinate = &p.train.x_by_coordinate;
            inverse_lengthscaled_squared_distances(by_coordinate, n, x, &p.inv_ls, k);
            scaled_profiles(p.kernel.kind, p.kernel.outputscale, k, c);
            let f = p.mean + self.prior.value_grad(x, grad) + dot(k, &self.weights);
            weighted_kernel_gradients(x, &p.train.x, c, &self.weights, &p.inv_ls, grad);
            for g in grad.iter_mut() {
                *g *= p.transform.scale;
            }
            p.transform.shift + p.transform.scale * f
        })
    }
}

/// A posterior sample path `mean + φ(x)ᵀw` from Bayesian linear regression on random
/// features; see [`GpPosterior::rff_blr_sample`]. Values are in y units.
#[derive(Debug, Clone)]
pub struct RandomFeaturesSample {
    features: RandomFeatures,
    mean: f64,
    transform: OutputTransform,
}

impl RandomFeaturesSample {
    /// The features with their posterior weights (model units).
    pub fn features(&self) -> &RandomFeatures {
        &self.features
    }
}

impl Objective for RandomFeaturesSample {
    fn value(&self, x: &[f64]) -> f64 {
        self.transform.shift + self.transform.scale * (self.mean + self.features.value(x))
    }

    fn value_grad(&self, x: &[f64], grad: &mut [f64]) -> f64 {
        let v = self.features.value_grad(x, grad);
        for g in grad.iter_mut() {
            *g *= self.transform.scale;
        }
        self.transform.shift + self.transform.scale * (self.mean + v)
    }
}

/// Rejects inconsistent shapes and non-finite values, naming the first bad index.
pub(crate) fn check_data(data: &TrainingData<'_>) -> Result<()> {
    if data.dim == 0 {
        return Err(Error::invalid("GP: input dimension must be ≥ 1"));
    }
    if data.x.len() != data.y.len() * data.dim {
        return Err(Error::invalid(format!(
            "GP: {} input coordinates for {} targets in dimension {} (expected {})",
            data.x.len(),
            data.y.len(),
            data.dim,
            data.y.len() * data.dim
        )));
    }
    if let Some(i) = data.y.iter().position(|v| !v.is_finite()) {
        return Err(Error::invalid(format!(
            "GP: y[{i}] = {} is not finite",
            data.y[i]
        )));
    }
    if let Some(p) = data.x.iter().position(|v| !v.is_finite()) {
        return Err(Error::invalid(format!(
            "GP: x[{}][{}] = {} is not finite",
            p / data.dim,
            p % data.dim,
            data.x[p]
        )));
    }
    Ok(())
}

/// Rows `rows` of `K + noise·I` for the scaled inputs `x_scaled` (`d` per point): row-major
/// `rows.len() × n` with `n` the number of points, entries `0..=i` of row i filled (the rest
/// zero), each `s·κ(|x_i − x_j|²)` with the noise on the diagonal, as every factorisation of
/// the exact GP reads them.
fn gram_rows(
    kernel: &Kernel,
    noise: f64,
    x_scaled: &[f64],
    d: usize,
    rows: std::ops::Range<usize>,
) -> Vec<f64> {
    let n = x_scaled.len() / d;
    let first = rows.start;
    let mut gram = vec![0.0; rows.len() * n];
    for i in rows {
        let xi = &x_scaled[i * d..(i + 1) * d];
        let row = &mut gram[(i - first) * n..(i - first + 1) * n];
        for (j, g) in row[..=i].iter_mut().enumerate() {
            *g = kernel.outputscale
                * kernel
                    .kind
                    .profile(sqdist(xi, &x_scaled[j * d..(j + 1) * d]))
                    .0;
        }
        row[i] += noise;
    }
    gram
}

#[inline]
pub(crate) fn sqdist(a: &[f64], b: &[f64]) -> f64 {
    let mut s = 0.0;
    for (x, y) in a.iter().zip(b) {
        let t = x - y;
        s += t * t;
    }
    s
}

pub(crate) fn scale_rows(x: &[f64], inv_ls: &[f64]) -> Vec<f64> {
    let d = inv_ls.len();
    let mut out = x.to_vec();
    for row in out.chunks_exact_mut(d) {
        for (v, il) in row.iter_mut().zip(inv_ls) {
            *v *= il;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ExactGp, GpConfig, KernelKind, Lengthscale};
    use cabo_core::{Rng, TrainingData};

    /// [`PathwiseSample`]'s value and gradient as the point-by-point loop over training
    /// inputs computes them: the reference its vectorised kernel terms must match bitwise.
    fn one_training_point_at_a_time(
        path: &PathwiseSample,
        x: &[f64],
        grad: &mut [f64],
    ) -> [f64; 2] {
        let p = &path.posterior;
        let (d, n) = (p.train.dim, p.len());
        let mut k = vec![0.0; n];
        p.cross_model(x, &mut k);
        let value = p.transform.shift
            + p.transform.scale * (p.mean + path.prior.value(x) + dot(&k, &path.weights));
        let mut dk = vec![0.0; n * d];
        p.cross_grad_model(x, &mut k, &mut dk);
        let f = p.mean + path.prior.value_grad(x, grad) + dot(&k, &path.weights);
        for (w, g) in path.weights.iter().zip(dk.chunks_exact(d)) {
            axpy(*w, g, grad);
        }
        for g in grad.iter_mut() {
            *g *= p.transform.scale;
        }
        [value, p.transform.shift + p.transform.scale * f]
    }

    #[test]
    fn sample_paths_have_the_bits_of_the_point_by_point_loop() {
        let kinds = [
            KernelKind::Rbf,
            KernelKind::Matern12,
            KernelKind::Matern32,
            KernelKind::Matern52,
        ];
        for kind in kinds {
            for (n, d, standardize) in [
                (0, 2, false),
                (1, 1, true),
                (9, 3, true),
                (37, 8, false),
                (66, 32, true),
                (21, 13, false),
            ] {
                let mut rng = Rng::new((n * 100 + d) as u64);
                let x: Vec<f64> = (0..n * d).map(|_| rng.uniform()).collect();
                let y: Vec<f64> = x
                    .chunks_exact(d)
                    .map(|p| p.iter().map(|v| (3.0 * v).sin()).sum())
                    .collect();
                let ls = Lengthscale::PerDim((0..d).map(|j| 0.15 + 0.05 * j as f64).collect());
                let mut config = GpConfig::fixed(kind, ls, 1.7, 1e-4);
                config.standardize = standardize;
                let data = TrainingData {
                    dim: d,
                    x: &x,
                    y: &y,
                };
                let mut post = ExactGp::new(config).unwrap().fit(data, 0).unwrap();
                if n > 0 {
                    // A conditioned posterior (a fantasy) extends the training inputs.
                    let fx: Vec<f64> = (0..2 * d).map(|_| rng.uniform()).collect();
                    post = post.condition_many(&fx, &[0.3, -0.2]).unwrap();
                }
                let path = post.pathwise_sample_with(64, 11).unwrap();
                for _ in 0..20 {
                    let q: Vec<f64> = (0..d).map(|_| rng.uniform()).collect();
                    let (mut g, mut want_g) = (vec![0.0; d], vec![0.0; d]);
                    let value = path.value(&q);
                    let value_grad = path.value_grad(&q, &mut g);
                    let want = one_training_point_at_a_time(&path, &q, &mut want_g);
                    assert_eq!(
                        [value.to_bits(), value_grad.to_bits()],
                        want.map(f64::to_bits),
                        "{kind:?} n = {n} d = {d}"
                    );
                    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(&g), bits(&want_g), "{kind:?} n = {n} d = {d}");
                }
            }
        }
    }
}
