//! The marginal likelihood of Bayesian linear regression on random features, with its
//! gradient in every hyperparameter, in two algebraically equal forms.
//!
//! The model is `y = μ + Φw + ε`, `w ~ N(0, I_m)`, `ε ~ N(0, σ²I_n)`, so `y ~ N(μ, K̃)` with
//! `K̃ = ΦΦᵀ + σ²I` and, with `r = y − μ`,
//! `log p(y) = −½ rᵀK̃⁻¹r − ½ log|K̃| − (n/2) log 2π`.
//!
//! - **Weight form** (m × m, [`Form::Weights`]): with `A = ΦᵀΦ + σ²I = LLᵀ` and
//!   `w̄ = A⁻¹Φᵀr`, `rᵀK̃⁻¹r = ‖r − Φw̄‖²/σ² + ‖w̄‖²` (the regularised least-squares minimum,
//!   a sum of squares, so no cancellation when σ² is small) and
//!   `log|K̃| = log|A| + (n − m) log σ²`. O(n·m² + m³).
//! - **Data form** (n × n, [`Form::Data`]): the exact GP's algebra with the kernel
//!   `φ(x)ᵀφ(x')`. O(n²·m + n³).
//!
//! A fit uses whichever is cheaper ([`Form::cheaper`]: the data form while n < m); a test
//! holds the two equal. Gradients come from `∂ log p/∂Φ = G = WΦ`, `W = ααᵀ − K̃⁻¹`,
//! `α = K̃⁻¹r`: in the weight form `α = (r − Φw̄)/σ²` and `G = αw̄ᵀ − ΦA⁻¹` (because
//! `K̃⁻¹Φ = ΦA⁻¹` and `Φᵀα = w̄`). Then, with `t = Σ_ik (ΦA⁻¹)_ik Φ_ik = tr(K̃⁻¹ΦΦᵀ)`:
//! - `∂/∂ln s = ½ Σ G∘Φ` (Φ scales with √s),
//! - `∂/∂ln ℓ_j = Σ_ik G_ik · a sin(ω_kᵀx_i + b_k) · ω_kj x_ij` (ω = z/ℓ),
//! - `∂/∂ln σ² = ½σ² tr W`, which in the weight form is `½(σ²‖α‖² − n + t)`,
//! - `∂/∂μ = Σ α`.

use crate::dense::{gram_lower, product_nt, transpose};
use crate::features::Features;
use cabo_core::{Error, Result};
use cabo_gp::LikelihoodGradient;
use cabo_linalg::Cholesky;
use cabo_linalg::vector::{axpy, dot};

/// Which of the two equal forms of the marginal likelihood to evaluate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// Through the m × m precision of the weights.
    Weights,
    /// Through the n × n covariance of the data.
    Data,
}

impl Form {
    /// The cheaper form for n points and m features: the data form while n < m.
    pub fn cheaper(n: usize, m: usize) -> Form {
        if n < m { Form::Data } else { Form::Weights }
    }
}

/// `log p(y)` of Bayesian linear regression on `features` with noise variance `noise` and
/// constant mean `mean`, at inputs `x` (row-major) and targets `y` (model units), with its
/// gradient. `Ok(None)` when the covariance cannot be factorised (the fit treats that as an
/// infinite objective, as the exact GP does).
///
/// One function because the two forms are two routes to the same four quantities (the
/// value, `α`, `G` and `∂/∂ln σ²`), written as the two arms of one `match`: side by side,
/// each arm reads against the module docs' formulas and against the other, and the
/// gradients in `ln s`, `ln ℓ` and `μ` after it are computed once from whichever `G` and
/// `α` the arm gave.
pub fn log_marginal_likelihood(
    features: &Features,
    noise: f64,
    mean: f64,
    x: &[f64],
    y: &[f64],
    form: Form,
) -> Result<Option<(f64, LikelihoodGradient)>> {
    let d = features.dim();
    let n = y.len();
    let m = features.len();
    if x.len() != n * d {
        return Err(Error::invalid(format!(
            "random-feature likelihood: {} input coordinates for {n} targets in dimension {d}",
            x.len()
        )));
    }
    if !(noise.is_finite() && noise > 0.0) {
        return Err(Error::invalid(format!(
            "random-feature likelihood: noise variance {noise} must be finite and > 0"
        )));
    }
    let (phi_t, sin_t) = features.design_t(x, true);
    let r: Vec<f64> = y.iter().map(|v| v - mean).collect();
    let ln_2pi_half = n as f64 * cabo_core::normal::LN_SQRT_2PI;
    // `g_t` is G feature-major (m × n), like the design.
    let (value, alpha, g_t, g_noise) = match form {
        Form::Weights => {
            let mut a = gram_lower(&phi_t, m, n);
            for k in 0..m {
                a[k * m + k] += noise;
            }
            let Ok(chol) = Cholesky::factor(&a, m) else {
                return Ok(None);
            };
            let mut w: Vec<f64> = phi_t.chunks_exact(n.max(1)).map(|f| dot(f, &r)).collect();
            w.resize(m, 0.0);
            chol.solve_in_place(&mut w);
            let mut e = r.clone();
            if n > 0 {
                for (wk, f) in w.iter().zip(phi_t.chunks_exact(n)) {
                    axpy(-wk, f, &mut e);
                }
            }
            let quad = dot(&e, &e) / noise + dot(&w, &w);
            let log_det = chol.log_det() + (n as f64 - m as f64) * noise.ln();
            let value = -0.5 * quad - 0.5 * log_det - ln_2pi_half;
            let alpha: Vec<f64> = e.iter().map(|v| v / noise).collect();
            // Zᵀ = A⁻¹Φᵀ: row k is Σ_l (A⁻¹)_kl φ_l, i.e. the dot products of the rows of
            // the (symmetric) inverse with the rows of Φ.
            let a_inv = chol.inverse();
            let phi = transpose(&phi_t, m, n);
            let mut g_t = product_nt(&a_inv, m, &phi, n, m);
            let t = dot(&g_t, &phi_t);
            if n > 0 {
                for (row, wk) in g_t.chunks_exact_mut(n).zip(&w) {
                    for (g, a) in row.iter_mut().zip(&alpha) {
                        *g = wk * a - *g;
                    }
                }
            }
            let g_noise = 0.5 * (noise * dot(&alpha, &alpha) - n as f64 + t);
            (value, alpha, g_t, g_noise)
        }
        Form::Data => {
            let phi = transpose(&phi_t, m, n);
            let mut k = gram_lower(&phi, n, m);
            for i in 0..n {
                k[i * n + i] += noise;
            }
            let Ok(chol) = Cholesky::factor(&k, n) else {
                return Ok(None);
            };
            let mut alpha = r.clone();
            chol.solve_in_place(&mut alpha);
            let value = -0.5 * dot(&r, &alpha) - 0.5 * chol.log_det() - ln_2pi_half;
            // W = ααᵀ − K̃⁻¹ (symmetric), then Gᵀ = ΦᵀW row by row.
            let mut w = chol.inverse();
            let trace: f64 = (0..n).map(|i| w[i * n + i]).sum();
            for i in 0..n {
                for l in 0..n {
                    w[i * n + l] = alpha[i] * alpha[l] - w[i * n + l];
                }
            }
            let g_t = product_nt(&phi_t, m, &w, n, n);
            let g_noise = 0.5 * noise * (dot(&alpha, &alpha) - trace);
            (value, alpha, g_t, g_noise)
        }
    };
    let g_s = 0.5 * dot(&g_t, &phi_t);
    let mut g_ls = vec![0.0; d];
    if n > 0 {
        let x_cols = transpose(x, n, d);
        let mut h = vec![0.0; n];
        let omega = features.frequencies();
        for ((g, s), w) in g_t
            .chunks_exact(n)
            .zip(sin_t.chunks_exact(n))
            .zip(omega.chunks_exact(d))
        {
            for ((hi, gi), si) in h.iter_mut().zip(g).zip(s) {
                *hi = gi * si;
            }
            for ((gl, xc), wj) in g_ls.iter_mut().zip(x_cols.chunks_exact(n)).zip(w) {
                *gl += wj * dot(&h, xc);
            }
        }
    }
    Ok(Some((
        value,
        LikelihoodGradient {
            lengthscales: g_ls,
            outputscale: g_s,
            noise: g_noise,
            mean: alpha.iter().sum(),
        },
    )))
}
