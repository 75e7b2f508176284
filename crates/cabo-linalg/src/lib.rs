//! # cabo-linalg
//!
//! cabo's numerical kernels, and the only crate of cabo that contains `unsafe` code: the
//! SIMD builds of every hot loop and the run-time choice between them.
//!
//! - [`vector`]: the shared four-lane [`dot`] and [`axpy`];
//! - [`cholesky`]: the kernels of a row-packed Cholesky factor — factorisation, triangular
//!   solves, `L⁻¹` and the lower triangle of `(L Lᵀ)⁻¹`; [`factor`]: the factor every model
//!   uses ([`Cholesky`]), with its jitter retries, errors, O(n²) extension by a row and
//!   rank-one update, and the split of large inversions between two threads;
//! - [`distance`]: squared distances from one row to a block of points laid out by
//!   coordinate (a posterior's kernel rows at many points);
//! - [`dense`]: tiled products `A Bᵀ` of row-major matrices (a random-feature fit's);
//! - [`panel`]: the register-blocked triangular products of the expected confidence bounds;
//! - [`profile`]: stationary kernel profiles and the `exp` they use; [`gram`]: the row blocks
//!   of a GP's MAP objective (Gram matrix and likelihood gradient);
//! - [`lu`]: LU with partial pivoting; [`rows`]: L-BFGS-B's sums over rows;
//! - [`simd`]: the instruction-set levels and the run-time dispatch every kernel goes
//!   through.
//!
//! **Same bits on every machine.** Each kernel has several builds (portable, x86-64
//! baseline, AVX2 with FMA and, for the panel products, some triangular solves and the
//! kernel profiles, AVX-512F with AVX-512VL), generated and chosen by [`simd`]'s one
//! dispatch, and takes the widest the processor supports. All builds perform the same IEEE operations per
//! output element in the same order — reductions in explicit lanes added in a fixed order,
//! and each multiply-add either fused in every build (the triangular kernels and the panel
//! products: FMA instructions, or `f64::mul_add` where there are none) or separate in every
//! build (the rest) — so they agree to the bit, which keeps every cabo result independent of
//! the CPU it ran on. [`simd`] says which kernels fuse and why. The equivalence tests of this
//! crate run every kernel under every level and compare the bits.
//!
//! Every kernel works on plain slices. The crate depends only on `cabo-core` (the factor's
//! errors are cabo's) and `rayon` (the factor's two-thread split); types with modelling
//! meaning (a GP's hyperparameters, L-BFGS-B's state) live in the crates that use them.

#![deny(unsafe_op_in_unsafe_fn, clippy::undocumented_unsafe_blocks)]
#![warn(missing_docs)]

pub mod cholesky;
pub mod dense;
pub mod distance;
pub mod factor;
pub mod gram;
pub mod lu;
pub mod panel;
pub mod profile;
pub mod rows;
pub mod simd;
pub mod vector;

#[cfg(test)]
mod equivalence;

pub use factor::{Cholesky, PARALLEL_ORDER, join_if_large};
pub use vector::{axpy, dot};
