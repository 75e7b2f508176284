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

    /// Unit-outputscale kernel value and its derivative with respect to `r²`.
    #[inline]
    pub fn profile(self, r2: f64) -> (f64, f64) {
        match self {
            KernelKind::Rbf => {
                let k = (-0.5 * r2).exp();
                (k, -0.5 * k)
            }
            KernelKind::Matern12 => {
                let r = r2.sqrt();
                let e = (-r).exp();
                (e, if r > 0.0 { -0.5 * e / r } else { 0.0 })
            }
            KernelKind::Matern32 => {
                let a = (3.0 * r2).sqrt();
                let e = (-a).exp();
                ((1.0 + a) * e, -1.5 * e)
            }
            KernelKind::Matern52 => {
                let a = (5.0 * r2).sqrt();
                let e = (-a).exp();
                ((1.0 + a + a * a / 3.0) * e, -(5.0 / 6.0) * (1.0 + a) * e)
            }
        }
    }
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

    /// `k(x, X_i)` for every row of `xs` (row-major, `dim` columns).
    pub fn cross(&self, x: &[f64], xs: &[f64], out: &mut [f64]) {
        let d = self.dim();
        for (o, row) in out.iter_mut().zip(xs.chunks_exact(d)) {
            *o = self.value(x, row);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn profiles_match_closed_forms_and_derivatives() {
        for kind in [
            KernelKind::Rbf,
            KernelKind::Matern12,
            KernelKind::Matern32,
            KernelKind::Matern52,
        ] {
            assert_eq!(kind.profile(0.0).0, 1.0);
            for r2 in [0.01, 0.3, 1.7, 6.0] {
                let h = 1e-6 * r2;
                let fd = (kind.profile(r2 + h).0 - kind.profile(r2 - h).0) / (2.0 * h);
                let an = kind.profile(r2).1;
                assert!((fd - an).abs() < 1e-7 * an.abs(), "{kind:?} r2={r2}");
            }
        }
        // Matérn-5/2 at r = 1 by hand: (1 + √5 + 5/3) e^{−√5}.
        let s5 = 5f64.sqrt();
        let want = (1.0 + s5 + 5.0 / 3.0) * (-s5).exp();
        assert!((KernelKind::Matern52.profile(1.0).0 - want).abs() < 1e-15);
    }

    #[test]
    fn rejects_bad_hyperparameters() {
        assert!(Kernel::new(KernelKind::Rbf, vec![0.1, -1.0], 1.0).is_err());
        assert!(Kernel::new(KernelKind::Rbf, vec![0.1], f64::NAN).is_err());
        assert!(Kernel::new(KernelKind::Rbf, vec![], 1.0).is_err());
    }
}
