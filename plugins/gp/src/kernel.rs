//! Stationary kernels with ARD lengthscales and an outputscale, in the GPyTorch convention
//! `k(x, x') = s · κ(r)` with `r = ‖(x − x')/ℓ‖` (the Matérn distance is *not* pre-scaled by
//! √(2ν); the factor appears inside κ).
//!
//! Every kernel is written as a profile of `r²`: `κ(r²)` and `dκ/d(r²)`. Gradients follow by
//! the chain rule, `∂k/∂x_j = dk/d(r²) · 2(x_j − x'_j)/ℓ_j²` and
//! `∂k/∂ln ℓ_j = dk/d(r²) · (−2(x_j − x'_j)²/ℓ_j²)`, which keeps them finite at r = 0 for
//! every kernel except Matérn-1/2 (whose gradient is undefined there; 0 is used, a valid
//! subgradient).

use cabo_core::{Error, Result};
use cabo_linalg::distance::{
    product_weighted_differences, scaled_by_coordinate, squared_distances,
};
use cabo_linalg::profile::Profile;
use serde::{Deserialize, Serialize};

/// Which stationary kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KernelKind {
    /// Squared exponential `exp(−r²/2)`.
    Rbf,
    /// Matérn-1/2 `exp(−r)`.
    Matern12,
    /// Matérn-3/2 `(1 + √3 r) exp(−√3 r)`.
    Matern32,
    /// Matérn-5/2 `(1 + √5 r + 5r²/3) exp(−√5 r)`.
    Matern52,
}

impl KernelKind {
    /// The smoothness ν of a Matérn kernel (`None` for RBF, the ν → ∞ limit).
    pub fn nu(self) -> Option<f64> {
        match self {
            KernelKind::Rbf => None,
            KernelKind::Matern12 => Some(0.5),
            KernelKind::Matern32 => Some(1.5),
            KernelKind::Matern52 => Some(2.5),
        }
    }

    /// The kernel's profile in `r²`, whose values and SIMD loops are
    /// `cabo_linalg::profile`'s.
    #[inline(always)]
    pub fn shape(self) -> Profile {
        match self {
            KernelKind::Rbf => Profile::Rbf,
            KernelKind::Matern12 => Profile::Matern12,
            KernelKind::Matern32 => Profile::Matern32,
            KernelKind::Matern52 => Profile::Matern52,
        }
    }

    /// Unit-outputscale kernel value and its derivative with respect to `r²`.
    #[inline(always)]
    pub fn profile(self, r2: f64) -> (f64, f64) {
        self.shape().value(r2)
    }

    /// [`KernelKind::profile`] of every `r2[j]` into `k[j]` and `dk[j]`, as one loop per
    /// kernel that the compiler vectorises (the values are the same as one call per entry).
    #[inline(always)]
    pub fn profiles(self, r2: &[f64], k: &mut [f64], dk: &mut [f64]) {
        self.shape().values(r2, k, dk)
    }
}

/// In place over `k`: each `r²` becomes `s·κ(r²)`, and `2s·dκ/d(r²)` goes to the same entry
/// of `c` — the kernel values and gradient weights of one point against many, as one
/// vectorised loop (the values are those of a [`KernelKind::profile`] call per entry).
#[inline]
pub fn scaled_profiles(kind: KernelKind, s: f64, k: &mut [f64], c: &mut [f64]) {
    cabo_linalg::profile::scaled_profiles(kind.shape(), s, k, c)
}

/// A kernel with its hyperparameters: ARD lengthscales (one per input dimension) and an
/// outputscale (the prior variance `k(x, x)`).
#[derive(Debug, Clone, PartialEq)]
pub struct Kernel {
    /// Which kernel.
    pub kind: KernelKind,
    /// One lengthscale per input dimension, all > 0.
    pub lengthscales: Vec<f64>,
    /// Prior variance, > 0.
    pub outputscale: f64,
}

impl Kernel {
    /// A kernel, checking that every hyperparameter is finite and positive.
    pub fn new(kind: KernelKind, lengthscales: Vec<f64>, outputscale: f64) -> Result<Self> {
        if lengthscales.is_empty() {
            return Err(Error::invalid("kernel: need at least one lengthscale"));
        }
        if let Some((i, l)) = lengthscales
            .iter()
            .enumerate()
            .find(|(_, l)| !(l.is_finite() && **l > 0.0))
        {
            return Err(Error::invalid(format!(
                "kernel: lengthscale[{i}] = {l} must be finite and > 0"
            )));
        }
        if !(outputscale.is_finite() && outputscale > 0.0) {
            return Err(Error::invalid(format!(
                "kernel: outputscale = {outputscale} must be finite and > 0"
            )));
        }
        Ok(Kernel {
            kind,
            lengthscales,
            outputscale,
        })
    }

    /// Input dimension.
    pub fn dim(&self) -> usize {
        self.lengthscales.len()
    }

    /// Scaled squared distance `‖(x − y)/ℓ‖²`.
    #[inline]
    pub fn r2(&self, x: &[f64], y: &[f64]) -> f64 {
        let mut s = 0.0;
        for ((a, b), l) in x.iter().zip(y).zip(&self.lengthscales) {
            let t = (a - b) / l;
            s += t * t;
        }
        s
    }

    /// `k(x, y)`.
    #[inline]
    pub fn value(&self, x: &[f64], y: &[f64]) -> f64 {
        self.outputscale * self.kind.profile(self.r2(x, y)).0
    }

    /// `k(x, y)`, writing `∂k/∂x` into `grad`.
    pub fn value_grad_x(&self, x: &[f64], y: &[f64], grad: &mut [f64]) -> f64 {
        let (k, dk) = self.kind.profile(self.r2(x, y));
        let c = 2.0 * self.outputscale * dk;
        for (((g, a), b), l) in grad.iter_mut().zip(x).zip(y).zip(&self.lengthscales) {
            *g = c * (a - b) / (l * l);
        }
        self.outputscale * k
    }

    /// `k(x, X_i)` for every row of `xs` (row-major, `dim` columns) into `out`, and
    /// `∂k(x, X_i)/∂x` into row `i` of `jac` (row-major, `dim` columns); `weights` (one per
    /// row) is scratch. Bitwise the same as [`Kernel::value_grad_x`] row by row, with the
    /// kernel profiles evaluated as one vectorised batch.
    pub fn cross_grad_x(
        &self,
        x: &[f64],
        xs: &[f64],
        out: &mut [f64],
        jac: &mut [f64],
        weights: &mut [f64],
    ) {
        let d = self.dim();
        for (o, row) in out.iter_mut().zip(xs.chunks_exact(d)) {
            *o = self.r2(x, row);
        }
        scaled_profiles(self.kind, self.outputscale, out, weights);
        for ((g, row), &c) in jac
            .chunks_exact_mut(d)
            .zip(xs.chunks_exact(d))
            .zip(&*weights)
        {
            for (((g, a), b), l) in g.iter_mut().zip(x).zip(row).zip(&self.lengthscales) {
                *g = c * (a - b) / (l * l);
            }
        }
    }

    /// The rows of `xs` (row-major, `dim` columns) divided by the lengthscales once, for
    /// callers that evaluate one point against the same rows many times.
    pub fn scale_rows(&self, xs: &[f64]) -> ScaledRows {
        let inv: Vec<f64> = self.lengthscales.iter().map(|l| 1.0 / l).collect();
        let rows = xs
            .chunks_exact(self.dim())
            .flat_map(|row| row.iter().zip(&inv).map(|(x, i)| x * i))
            .collect();
        let mut by_coordinate = vec![0.0; xs.len()];
        scaled_by_coordinate(xs, &inv, &mut by_coordinate);
        ScaledRows {
            kind: self.kind,
            outputscale: self.outputscale,
            inv_lengthscales: inv,
            rows,
            by_coordinate,
        }
    }

    /// `k(x, X_i)` for every row of `xs` (row-major, `dim` columns).
    ///
    /// The profiles are evaluated in vectorised batches; the values are those of
    /// [`Kernel::value`] row by row.
    pub fn cross(&self, x: &[f64], xs: &[f64], out: &mut [f64]) {
        const BATCH: usize = 64;
        let d = self.dim();
        let mut unused = [0.0; BATCH];
        for (out, xs) in out.chunks_mut(BATCH).zip(xs.chunks(BATCH * d)) {
            for (o, row) in out.iter_mut().zip(xs.chunks_exact(d)) {
                *o = self.r2(x, row);
            }
            scaled_profiles(self.kind, self.outputscale, out, &mut unused[..out.len()]);
        }
    }

    /// The Gram matrix `k(X_i, X_j)` (row-major `n × n`).
    pub fn gram(&self, xs: &[f64]) -> Vec<f64> {
        let d = self.dim();
        let n = xs.len() / d;
        let mut k = vec![0.0; n * n];
        for i in 0..n {
            let xi = &xs[i * d..(i + 1) * d];
            for j in 0..=i {
                let v = self.value(xi, &xs[j * d..(j + 1) * d]);
                k[i * n + j] = v;
                k[j * n + i] = v;
            }
        }
        k
    }
}

/// Points `X_i / ℓ` pre-divided by a kernel's lengthscales ([`Kernel::scale_rows`]): a
/// point's kernel values against all of them cost no division, and weighted sums of their
/// gradients need no `n × d` Jacobian. Values agree with [`Kernel::cross`] to rounding (the
/// division moves from each difference to each coordinate).
#[derive(Debug, Clone)]
pub struct ScaledRows {
    kind: KernelKind,
    outputscale: f64,
    inv_lengthscales: Vec<f64>,
    rows: Vec<f64>,
    /// The same scaled rows laid out by coordinate (`d × n`), for the distances.
    by_coordinate: Vec<f64>,
}

/// Largest dimension whose scaled point lives on the stack.
const STACK_DIM: usize = 16;

impl ScaledRows {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.rows.len() / self.inv_lengthscales.len()
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// `k(x, X_i)` into `out` and the gradient weights `c_i` (with
    /// `∂k(x, X_i)/∂x = c_i (x − X_i)/ℓ²`) into `weights`, one entry per row.
    pub fn cross_weights(&self, x: &[f64], out: &mut [f64], weights: &mut [f64]) {
        // Σ_j (X_ij/ℓ_j − x_j/ℓ_j)², the rows side by side in vector lanes: each sum in
        // ascending j from zero, as one row at a time (a difference and its negation have
        // the same square).
        let n = self.len();
        self.with_scaled(x, |xs| squared_distances(&self.by_coordinate, n, xs, out));
        scaled_profiles(self.kind, self.outputscale, out, weights);
    }

    /// `out += Σᵢ fᵢ ∂k(x, X_i)/∂x`, given the rows' gradient weights at `x` from
    /// [`ScaledRows::cross_weights`]: `n·d` multiply-adds, the lengthscales applied once.
    pub fn add_weighted_grad_x(&self, x: &[f64], weights: &[f64], f: &[f64], out: &mut [f64]) {
        let d = x.len();
        with_zeroed(d, |acc| {
            self.with_scaled(x, |xs| {
                product_weighted_differences(xs, &self.rows, weights, f, acc);
            });
            for ((o, a), i) in out.iter_mut().zip(&*acc).zip(&self.inv_lengthscales) {
                *o += a * i;
            }
        });
    }

    /// Calls `f` with `x / ℓ` (on the stack for small dimensions).
    fn with_scaled(&self, x: &[f64], f: impl FnOnce(&[f64])) {
        debug_assert_eq!(x.len(), self.inv_lengthscales.len());
        with_zeroed(x.len(), |xs| {
            for ((s, a), i) in xs.iter_mut().zip(x).zip(&self.inv_lengthscales) {
                *s = a * i;
            }
            f(xs);
        });
    }
}

/// Calls `f` with `d` zeros, on the stack up to [`STACK_DIM`] (these buffers are per point,
/// inside the hottest loops, where an allocation would cost more than the work).
fn with_zeroed(d: usize, f: impl FnOnce(&mut [f64])) {
    if d <= STACK_DIM {
        f(&mut [0.0; STACK_DIM][..d]);
    } else {
        f(&mut vec![0.0; d]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batched_cross_values_and_gradients_equal_pairwise_ones() {
        let d = 3;
        let xs: Vec<f64> = (0..137 * d)
            .map(|i| ((i * 7919) % 101) as f64 / 101.0)
            .collect();
        let x = [0.31, 0.77, 0.05];
        for kind in [
            KernelKind::Rbf,
            KernelKind::Matern12,
            KernelKind::Matern32,
            KernelKind::Matern52,
        ] {
            let k = Kernel::new(kind, vec![0.2, 0.7, 1.3], 1.7).unwrap();
            let n = xs.len() / d;
            let (mut out, mut jac, mut w) = (vec![0.0; n], vec![0.0; n * d], vec![0.0; n]);
            k.cross_grad_x(&x, &xs, &mut out, &mut jac, &mut w);
            let mut values = vec![0.0; n];
            k.cross(&x, &xs, &mut values);
            for (i, row) in xs.chunks_exact(d).enumerate() {
                let mut g = [0.0; 3];
                let v = k.value_grad_x(&x, row, &mut g);
                assert_eq!(v.to_bits(), out[i].to_bits(), "{kind:?} value, row {i}");
                assert_eq!(v.to_bits(), values[i].to_bits(), "{kind:?} cross, row {i}");
                for j in 0..d {
                    assert_eq!(
                        g[j].to_bits(),
                        jac[i * d + j].to_bits(),
                        "{kind:?} ∂/∂x{j}, row {i}"
                    );
                }
            }
        }
    }

    /// Pre-scaled rows against `cross_grad_x`: the values to 1e-14 and the Jacobian-free
    /// weighted gradient against `Jᵀf` to 1e-13 relative (only where the lengthscales are
    /// applied differs), for `d` below and above the stack buffers' size.
    #[test]
    fn weighted_gradient_sums_equal_the_jacobian_product() {
        for d in [3, 19] {
            let n = 61;
            let xs: Vec<f64> = (0..n * d)
                .map(|i| ((i * 7919) % 101) as f64 / 101.0)
                .collect();
            let x: Vec<f64> = (0..d).map(|j| 0.1 + 0.8 * j as f64 / d as f64).collect();
            let f: Vec<f64> = (0..n).map(|i| (i as f64 * 0.37).sin()).collect();
            let ls: Vec<f64> = (0..d).map(|j| 0.3 + 0.1 * j as f64).collect();
            let k = Kernel::new(KernelKind::Matern52, ls, 1.7).unwrap();
            let (mut out, mut jac, mut w) = (vec![0.0; n], vec![0.0; n * d], vec![0.0; n]);
            k.cross_grad_x(&x, &xs, &mut out, &mut jac, &mut w);
            let rows = k.scale_rows(&xs);
            assert_eq!(rows.len(), n);
            let (mut values, mut c) = (vec![0.0; n], vec![0.0; n]);
            rows.cross_weights(&x, &mut values, &mut c);
            for (i, (v, o)) in values.iter().zip(&out).enumerate() {
                assert!((v - o).abs() <= 1e-14, "d {d}, row {i}: {v} vs {o}");
            }
            let mut got = vec![1.0; d];
            rows.add_weighted_grad_x(&x, &c, &f, &mut got);
            for j in 0..d {
                let want = 1.0 + (0..n).map(|i| f[i] * jac[i * d + j]).sum::<f64>();
                assert!(
                    (got[j] - want).abs() <= 1e-13 * want.abs().max(1.0),
                    "d {d}, ∂{j}: {} vs {want}",
                    got[j]
                );
            }
        }
    }

    #[test]
    fn rejects_bad_hyperparameters() {
        assert!(Kernel::new(KernelKind::Rbf, vec![0.1, -1.0], 1.0).is_err());
        assert!(Kernel::new(KernelKind::Rbf, vec![0.1], f64::NAN).is_err());
        assert!(Kernel::new(KernelKind::Rbf, vec![], 1.0).is_err());
    }
}
