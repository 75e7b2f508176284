//! Random Fourier features of the exact GP's kernels, split into the part drawn once per
//! run ([`UnitBasis`]: frequencies for unit lengthscales and phases) and the part the
//! hyperparameters set ([`Features`]: `ω = z/ℓ` and the amplitude `√(2s/m)`).
//!
//! `φ_k(x) = a·cos(ω_kᵀx + b_k)` with `a = √(2s/m)`, `b_k ~ U[0, 2π)` and `z_k` drawn from the
//! kernel's spectral density by [`cabo_gp::fourier::FourierBasis`] (a standard normal for
//! RBF, a multivariate Student-t with 2ν degrees of freedom for Matérn-ν), so that
//! `E[φ(x)ᵀφ(x')] = k(x, x')`. Keeping `z` and `b` fixed while the lengthscales move makes
//! the marginal likelihood a smooth function of the hyperparameters, which is what lets a
//! MAP fit differentiate it; redrawing them would make it a different random function at
//! every step.

use cabo_core::{Error, Result};
use cabo_gp::fourier::FourierBasis;
use cabo_gp::{Kernel, KernelKind};
use cabo_linalg::vector::dot;
use std::ops::Range;

/// Feature values above which a design is computed in two threads.
const PARALLEL_VALUES: usize = 1 << 16;

/// Frequencies for unit lengthscales and phases, drawn once from a seed.
#[derive(Debug, Clone, PartialEq)]
pub struct UnitBasis {
    kind: KernelKind,
    dim: usize,
    /// Frequencies at unit lengthscales, row-major `m × d`.
    z: Vec<f64>,
    phase: Vec<f64>,
}

impl UnitBasis {
    /// Draws `features` frequencies of `kind`'s spectral density (at unit lengthscales) and
    /// phases in dimension `dim`, all determined by `seed`: the draw of
    /// [`FourierBasis::draw`] for the unit kernel. Errors when `features` or `dim` is 0.
    pub fn draw(kind: KernelKind, dim: usize, features: usize, seed: u64) -> Result<Self> {
        if dim == 0 {
            return Err(Error::invalid(
                "random features: input dimension must be ≥ 1",
            ));
        }
        let unit = Kernel::new(kind, vec![1.0; dim], 1.0)?;
        let basis = FourierBasis::draw(&unit, features, seed)?;
        Ok(UnitBasis {
            kind,
            dim,
            z: basis.frequencies().to_vec(),
            phase: basis.phases().to_vec(),
        })
    }

    /// Number of features m.
    pub fn len(&self) -> usize {
        self.phase.len()
    }

    /// Always false: a basis has at least one feature.
    pub fn is_empty(&self) -> bool {
        self.phase.is_empty()
    }

    /// Input dimension.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The kernel whose spectral density the frequencies come from.
    pub fn kind(&self) -> KernelKind {
        self.kind
    }

    /// The features of `kernel` (lengthscales and outputscale) on this basis. Errors when
    /// the kernel's kind or dimension differs from the basis's.
    pub fn features(&self, kernel: Kernel) -> Result<Features> {
        if kernel.kind != self.kind || kernel.dim() != self.dim {
            return Err(Error::invalid(format!(
                "random features: a basis of {:?} in dimension {} cannot serve a {:?} kernel \
                 in dimension {}",
                self.kind,
                self.dim,
                kernel.kind,
                kernel.dim()
            )));
        }
        let mut omega = self.z.clone();
        for row in omega.chunks_exact_mut(self.dim) {
            for (v, l) in row.iter_mut().zip(&kernel.lengthscales) {
                *v /= l;
            }
        }
        Ok(Features {
            amplitude: (2.0 * kernel.outputscale / self.len() as f64).sqrt(),
            kernel,
            omega,
            phase: self.phase.clone(),
        })
    }
}

/// The features at given hyperparameters: `φ_k(x) = a·cos(ω_kᵀx + b_k)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Features {
    kernel: Kernel,
    /// Frequencies `z/ℓ`, row-major `m × d`.
    omega: Vec<f64>,
    phase: Vec<f64>,
    amplitude: f64,
}

impl Features {
    /// Number of features m.
    pub fn len(&self) -> usize {
        self.phase.len()
    }

    /// Always false: a basis has at least one feature.
    pub fn is_empty(&self) -> bool {
        self.phase.is_empty()
    }

    /// Input dimension.
    pub fn dim(&self) -> usize {
        self.kernel.dim()
    }

    /// The kernel the features approximate (model units).
    pub fn kernel(&self) -> &Kernel {
        &self.kernel
    }

    /// Frequencies ω, row-major `m × d`.
    pub fn frequencies(&self) -> &[f64] {
        &self.omega
    }

    /// Phases b.
    pub fn phases(&self) -> &[f64] {
        &self.phase
    }

    /// The amplitude `a = √(2s/m)`.
    pub fn amplitude(&self) -> f64 {
        self.amplitude
    }

    /// `φ(x)` into `phi` (length m).
    pub fn values(&self, x: &[f64], phi: &mut [f64]) {
        let d = self.dim();
        for ((o, w), b) in phi
            .iter_mut()
            .zip(self.omega.chunks_exact(d))
            .zip(&self.phase)
        {
            *o = self.amplitude * (dot(w, x) + b).cos();
        }
    }

    /// `φ(x)` into `phi` and `a·sin(ω_kᵀx + b_k)` into `sin`, so that
    /// `∂φ_k/∂x = −sin_k · ω_k`.
    pub fn values_and_sines(&self, x: &[f64], phi: &mut [f64], sin: &mut [f64]) {
        let d = self.dim();
        for (((o, s), w), b) in phi
            .iter_mut()
            .zip(sin.iter_mut())
            .zip(self.omega.chunks_exact(d))
            .zip(&self.phase)
        {
            let (sn, cs) = (dot(w, x) + b).sin_cos();
            *o = self.amplitude * cs;
            *s = self.amplitude * sn;
        }
    }

    /// `Σ_k c_k ∂φ_k(x)/∂x = −Σ_k c_k sin_k ω_k` into `out` (length d), for the `sin` of
    /// [`Features::values_and_sines`].
    pub fn pull_back(&self, c: &[f64], sin: &[f64], out: &mut [f64]) {
        let d = self.dim();
        out.fill(0.0);
        for ((ck, sk), w) in c.iter().zip(sin).zip(self.omega.chunks_exact(d)) {
            let f = -ck * sk;
            for (o, wj) in out.iter_mut().zip(w) {
                *o += f * wj;
            }
        }
    }

    /// The Jacobian `∂φ(x)/∂x` (row-major `m × d`: row k is `−sin_k ω_k`) into `jac`.
    pub fn jacobian(&self, sin: &[f64], jac: &mut [f64]) {
        let d = self.dim();
        for ((row, sk), w) in jac
            .chunks_exact_mut(d)
            .zip(sin)
            .zip(self.omega.chunks_exact(d))
        {
            for (o, wj) in row.iter_mut().zip(w) {
                *o = -sk * wj;
            }
        }
    }

    /// The design `Φᵀ` feature-major (row k holds `φ_k` at every row of `xs`, `m × n`), and
    /// with `sines` also `a·sin(ω_kᵀx_i + b_k)` in the same layout. The features split
    /// between two threads when there are many values to compute (each value is the same
    /// either way).
    pub fn design_t(&self, xs: &[f64], sines: bool) -> (Vec<f64>, Vec<f64>) {
        let d = self.dim();
        let n = xs.len() / d;
        let m = self.len();
        let mut phi = vec![0.0; m * n];
        let mut sin = if sines { vec![0.0; m * n] } else { Vec::new() };
        let fill = |features: Range<usize>, phi: &mut [f64], sin: &mut [f64]| {
            for (j, k) in features.enumerate() {
                let (w, b) = (&self.omega[k * d..(k + 1) * d], self.phase[k]);
                let row = &mut phi[j * n..(j + 1) * n];
                if sines {
                    let srow = &mut sin[j * n..(j + 1) * n];
                    for ((o, s), x) in row.iter_mut().zip(srow).zip(xs.chunks_exact(d)) {
                        let (sn, cs) = (dot(w, x) + b).sin_cos();
                        *o = self.amplitude * cs;
                        *s = self.amplitude * sn;
                    }
                } else {
                    for (o, x) in row.iter_mut().zip(xs.chunks_exact(d)) {
                        *o = self.amplitude * (dot(w, x) + b).cos();
                    }
                }
            }
        };
        if n * m < PARALLEL_VALUES {
            fill(0..m, &mut phi, &mut sin);
        } else {
            let half = m / 2;
            let (pa, pb) = phi.split_at_mut(half * n);
            let (sa, sb) = sin.split_at_mut(if sines { half * n } else { 0 });
            rayon::join(|| fill(0..half, pa, sa), || fill(half..m, pb, sb));
        }
        (phi, sin)
    }
}
