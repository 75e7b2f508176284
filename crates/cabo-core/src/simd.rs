//! Wider vectors where the CPU has them, with results that do not depend on it.
//!
//! [`avx2_dispatch!`](crate::avx2_dispatch) defines a function whose body is compiled twice —
//! for the x86-64 baseline (SSE2) and for AVX2 — and picks the AVX2 build at run time when
//! the processor supports it. Both builds run the same Rust code, and Rust never contracts a
//! multiply and an add into a fused multiply-add, so every lane performs the same IEEE
//! operations in the same order: the two builds give bitwise identical results and only the
//! vector width differs. That keeps cabo's results reproducible across machines while the
//! hot kernels (Cholesky, triangular products, Gram matrices) use 256-bit vectors.
//!
//! Code inside the body should be written so the compiler can vectorise it: elementwise
//! loops over contiguous slices, and reductions with explicit independent accumulators
//! (the compiler never reorders a floating-point sum on its own). Helpers the body calls
//! must be `#[inline(always)]` to be compiled for AVX2 as well.

use std::sync::atomic::{AtomicBool, Ordering};

static BASELINE_ONLY: AtomicBool = AtomicBool::new(false);

/// Restricts (or, with `false`, stops restricting) every dispatching function to its
/// baseline build, process-wide. Results do not change — that is the point — so this exists
/// for the tests that check it and for benchmarks that measure the difference.
pub fn force_baseline(on: bool) {
    BASELINE_ONLY.store(on, Ordering::Relaxed);
}

/// Whether hand-written AVX-512F kernels may run on this machine (not while the baseline is
/// forced). Like the AVX2 builds they perform the same IEEE operations per lane as the
/// baseline, only over wider vectors.
#[inline]
pub fn has_avx512f() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        !BASELINE_ONLY.load(Ordering::Relaxed) && std::arch::is_x86_feature_detected!("avx512f")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether the AVX2 build of [`avx2_dispatch!`](crate::avx2_dispatch) functions runs on this
/// machine (detection is cached by the standard library after the first query).
#[inline]
pub fn has_avx2() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        !BASELINE_ONLY.load(Ordering::Relaxed) && std::arch::is_x86_feature_detected!("avx2")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Defines a free function whose body runs compiled for AVX2 when the CPU supports it and
/// for the baseline target otherwise, with bitwise identical results (see [`crate::simd`]).
///
/// ```
/// cabo_core::avx2_dispatch! {
///     /// `y += a·x` elementwise.
///     pub fn scaled_add(a: f64, x: &[f64], y: &mut [f64]) {
///         for (yi, xi) in y.iter_mut().zip(x) {
///             *yi += a * xi;
///         }
///     }
/// }
/// let mut y = vec![1.0; 5];
/// scaled_add(2.0, &[1.0, 2.0, 3.0, 4.0, 5.0], &mut y);
/// assert_eq!(y, [3.0, 5.0, 7.0, 9.0, 11.0]);
/// ```
#[macro_export]
macro_rules! avx2_dispatch {
    (
        $(#[$meta:meta])*
        $vis:vis fn $name:ident $(<$($lt:lifetime),+>)? ($($arg:ident : $ty:ty),* $(,)?) $(-> $ret:ty)?
        $body:block
    ) => {
        $(#[$meta])*
        $vis fn $name $(<$($lt),+>)? ($($arg: $ty),*) $(-> $ret)? {
            #[inline(always)]
            fn body $(<$($lt),+>)? ($($arg: $ty),*) $(-> $ret)? $body
            #[cfg(target_arch = "x86_64")]
            {
                #[target_feature(enable = "avx2")]
                fn avx2 $(<$($lt),+>)? ($($arg: $ty),*) $(-> $ret)? {
                    body($($arg),*)
                }
                if $crate::simd::has_avx2() {
                    // SAFETY: the processor supports AVX2, checked just above.
                    return unsafe { avx2($($arg),*) };
                }
            }
            body($($arg),*)
        }
    };
}
