//! The row blocks of a GP's MAP objective: the Gram matrix of the training points with its
//! kernel profiles, and the log-likelihood gradient's share of each row. Both take a range of
//! rows so that a caller can split the triangle into blocks of equal area and run them in
//! parallel; the arithmetic of a row does not depend on the split.

use crate::profile::Profile;
use crate::simd::avx2_dispatch;

avx2_dispatch! {
/// Rows `rows` of the Gram matrix of the points whose coordinates are the rows of `x_cols`
/// (`d × n`, already divided by the lengthscales, `n = gram.len() / rows.len()`): `κ(r²)` and
/// `dκ/dr²` into `kappa` and `dkappa` (packed lower triangle, starting at the first row),
/// `s·κ + noise·I` into `gram` (rows of length n starting at the first row, of which only
/// the entries up to the diagonal are written). `scale_noise` is `[s, noise]`.
pub fn fill_rows(
    profile: Profile,
    rows: std::ops::Range<usize>,
    x_cols: &[f64],
    scale_noise: [f64; 2],
    kappa: &mut [f64],
    dkappa: &mut [f64],
    gram: &mut [f64],
) {
    let [s, noise] = scale_noise;
    let n = gram.len() / rows.len().max(1);
    let first = rows.start;
    let mut r2 = vec![0.0; n];
    let mut idx = 0;
    for i in rows {
        // r² to points 0..=i, one coordinate at a time (the same sum, in the same order,
        // as a per-pair loop over coordinates).
        let r2 = &mut r2[..=i];
        r2.fill(0.0);
        for col in x_cols.chunks_exact(n) {
            let xi = col[i];
            for (r, c) in r2.iter_mut().zip(&col[..=i]) {
                let t = xi - c;
                *r += t * t;
            }
        }
        let (k, dk) = (&mut kappa[idx..=idx + i], &mut dkappa[idx..=idx + i]);
        profile.values(r2, k, dk);
        let g = &mut gram[(i - first) * n..(i - first + 1) * n];
        for (g, k) in g.iter_mut().zip(k.iter()) {
            *g = s * k;
        }
        g[i] += noise;
        idx += i + 1;
    }
}
}

/// One row block's share of the log-likelihood gradient (see [`gradient_rows`]).
#[derive(Debug, Clone, PartialEq)]
pub struct GradientShare {
    /// Towards each log-lengthscale.
    pub ls: Vec<f64>,
    /// Towards the log-outputscale.
    pub outputscale: f64,
    /// Towards the log-noise.
    pub noise: f64,
}

avx2_dispatch! {
/// The rows' share of the log-likelihood gradient `½ tr(W ∂K)` with `W = ααᵀ − K⁻¹` (only
/// the lower triangle of `K⁻¹`, row-major `n × n`, is read), for log-lengthscales,
/// log-outputscale and log-noise. `x_cols` are the scaled points by coordinate (`d × n`),
/// `kappa`/`dkappa` the rows' packed profiles from [`fill_rows`], `scale_noise` `[s, noise]`.
/// Off-diagonal sums run in four lanes (pair (a, b) in lane b mod 4), added pairwise at the
/// end, so that they vectorise.
pub fn gradient_rows(
    rows: std::ops::Range<usize>,
    x_cols: &[f64],
    alpha: &[f64],
    kinv: &[f64],
    scale_noise: [f64; 2],
    kappa: &[f64],
    dkappa: &[f64],
) -> GradientShare {
    let [s, noise] = scale_noise;
    let n = alpha.len();
    let d = x_cols.len() / n.max(1);
    let mut ls = vec![[0.0f64; 4]; d];
    let mut os = [0.0f64; 4];
    let (mut os_diag, mut noise_diag) = (0.0, 0.0);
    let mut c = vec![0.0; n];
    let mut idx = 0;
    for a in rows {
        // Pairs (a, b < a): w·s·κ towards the outputscale, c = −2 w s dκ/dr² weighting
        // (x_a − x_b)² towards each lengthscale.
        let (ka, dka) = (&kappa[idx..idx + a], &dkappa[idx..idx + a]);
        let kinv_a = &kinv[a * n..a * n + a];
        let c = &mut c[..a];
        let body = a - a % 4;
        for b in 0..a {
            let w = alpha[a] * alpha[b] - kinv_a[b];
            os[b % 4] += w * s * ka[b];
            c[b] = -2.0 * w * s * dka[b];
        }
        for (col, sum) in x_cols.chunks_exact(n).zip(ls.iter_mut()) {
            let xa = col[a];
            // A local copy, so the four lanes live in one register across the loop.
            let mut acc = *sum;
            for (cq, xq) in c[..body].chunks_exact(4).zip(col[..body].chunks_exact(4)) {
                for l in 0..4 {
                    let t = xa - xq[l];
                    acc[l] += cq[l] * (t * t);
                }
            }
            for b in body..a {
                let t = xa - col[b];
                acc[b % 4] += c[b] * (t * t);
            }
            *sum = acc;
        }
        let w = alpha[a] * alpha[a] - kinv[a * n + a];
        os_diag += 0.5 * w * s * kappa[idx + a];
        noise_diag += 0.5 * w * noise;
        idx += a + 1;
    }
    let lanes = |v: [f64; 4]| (v[0] + v[1]) + (v[2] + v[3]);
    GradientShare {
        ls: ls.into_iter().map(lanes).collect(),
        outputscale: lanes(os) + os_diag,
        noise: noise_diag,
    }
}
}
