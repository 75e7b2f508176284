//! Wider vectors where the CPU has them, with results that do not depend on it.
//!
//! Every kernel of this crate exists in several builds — portable Rust, the x86-64 baseline
//! (SSE2), AVX2 with FMA and, for the panel products and some triangular solves, AVX-512F —
//! and picks the widest one the processor supports at run time. All builds perform the same
//! IEEE operations per output element in the same order, so they give bitwise identical
//! results and only the vector width differs, which keeps cabo's results reproducible
//! across machines:
//!
//! - Kernels that *fuse* (the triangular kernels of [`crate::cholesky`] and the panel
//!   products of [`crate::panel`]) compute every multiply-add `a·b + c` as one fused
//!   operation, rounded once: `vfmadd`/`vfnmadd` in the AVX2 and AVX-512 builds, and
//!   [`f64::mul_add`] in the portable and baseline builds. `mul_add` is the IEEE
//!   fused multiply-add on every target — one instruction where the processor has FMA
//!   (aarch64 always), the C library's exact software `fma` where it has not — so its bits
//!   are those of the vector instructions. The SSE2 baseline has no FMA instruction, so its
//!   builds of these kernels are the portable ones (slow but exact: a fallback).
//! - Kernels that do *not* fuse (distances, profiles, Gram rows, the dense products, the
//!   L-BFGS-B row sums and the shared [`crate::dot`] / [`crate::axpy`]) use separate
//!   multiply and add instructions in every build; Rust never contracts a multiply and an
//!   add into a fused multiply-add on its own. They keep the bits of code outside this crate
//!   that is compiled for the x86-64 baseline, where a fused operation is a library call.
//!
//! Reductions keep explicit independent accumulators (the compiler never reorders a
//! floating-point sum on its own). The AVX2 and AVX-512 levels require FMA as well
//! ([`detected`] reports them only then): every processor with AVX2 or AVX-512F that cabo
//! targets has it.
//!
//! [`limit`] restricts every kernel to narrower builds, process-wide; the equivalence tests
//! run each kernel under every level with it, and benchmarks can measure what the wider
//! builds gain.

use std::sync::atomic::{AtomicU8, Ordering};

/// An instruction-set level a kernel can be built for, from the narrowest up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Isa {
    /// Plain Rust without intrinsics: what runs off x86-64 (and, under [`limit`], on it).
    Portable = 0,
    /// The x86-64 baseline (SSE2): every kernel compiled for the baseline target. The
    /// kernels that fuse multiply-adds run their portable build here (SSE2 has no FMA).
    Baseline = 1,
    /// 256-bit AVX2 with FMA (and AVX).
    Avx2 = 2,
    /// 512-bit AVX-512F with FMA. Only the panel products,
    /// [`solve_lower_rows`](crate::cholesky::solve_lower_rows),
    /// [`solve_lower_many`](crate::cholesky::solve_lower_many) (which also needs AVX-512VL),
    /// [`solve_upper_many`](crate::cholesky::solve_upper_many) and
    /// [`scaled_profiles`](crate::profile::scaled_profiles) have such a build; the other
    /// kernels run their AVX2 build at this level.
    Avx512 = 3,
}

impl Isa {
    /// Every level, narrowest first.
    pub const ALL: [Isa; 4] = [Isa::Portable, Isa::Baseline, Isa::Avx2, Isa::Avx512];
}

/// The widest level the kernels may use (an [`Isa`] as `u8`); the processor may offer less.
static LIMIT: AtomicU8 = AtomicU8::new(Isa::Avx512 as u8);

/// Restricts every kernel to builds of at most `isa`, process-wide; [`Isa::Avx512`] lifts
/// the restriction. Results do not change — that is the point — so this exists for the tests
/// that check it and for benchmarks that measure the difference. Kernels that choose their
/// build when built (the [`Panels`](crate::panel::Panels)) keep the build they chose.
pub fn limit(isa: Isa) {
    LIMIT.store(isa as u8, Ordering::Relaxed);
}

/// The widest level this processor supports (the standard library caches the detection).
/// The vector levels need FMA as well: a processor with AVX2 but without FMA (none that
/// cabo targets) runs the baseline builds.
pub fn detected() -> Isa {
    #[cfg(target_arch = "x86_64")]
    {
        if has_avx512() {
            Isa::Avx512
        } else if has_avx2() {
            Isa::Avx2
        } else {
            Isa::Baseline
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        Isa::Portable
    }
}

/// Whether the processor has AVX2 and FMA, what the [`Isa::Avx2`] builds are compiled for.
#[cfg(target_arch = "x86_64")]
#[inline]
fn has_avx2() -> bool {
    std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
}

/// Whether the processor has AVX-512F, AVX2 and FMA, what the [`Isa::Avx512`] builds are
/// compiled for.
#[cfg(target_arch = "x86_64")]
#[inline]
fn has_avx512() -> bool {
    std::arch::is_x86_feature_detected!("avx512f") && has_avx2()
}

/// The level kernels run at now: the narrower of [`detected`] and the [`limit`].
pub fn active() -> Isa {
    Isa::ALL[usize::from(LIMIT.load(Ordering::Relaxed)).min(detected() as usize)]
}

/// Whether kernels may use the builds of level `isa`: the processor supports it and the
/// [`limit`] allows it. Called before every dispatching kernel, so it costs one relaxed load
/// and, for the vector levels, the standard library's cached feature test. (Off x86-64 there
/// is only the portable build and nothing to choose.)
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn allows(isa: Isa) -> bool {
    LIMIT.load(Ordering::Relaxed) >= isa as u8
        && match isa {
            Isa::Portable | Isa::Baseline => true,
            Isa::Avx2 => has_avx2(),
            Isa::Avx512 => has_avx512(),
        }
}

/// Defines a free function whose body runs compiled for AVX2 and FMA when [`allows`] says so
/// and for the baseline target otherwise, with bitwise identical results (see the module
/// documentation). The body should be written so the compiler can vectorise it: elementwise
/// loops over contiguous slices, and reductions with explicit independent accumulators.
/// Functions the body calls must be `#[inline(always)]` to be compiled for AVX2 as well. A
/// body that fuses writes [`f64::mul_add`], which becomes `vfmadd` (vectorised) in the
/// AVX2 build and the C library's `fma` in the baseline one, with the same bits.
///
/// The macro stays inside this crate: its expansion holds an `unsafe` block, and only this
/// crate contains `unsafe` code.
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
                /// The body compiled for AVX2 and FMA.
                ///
                /// # Safety
                /// The processor must support AVX2 and FMA.
                #[target_feature(enable = "avx2,fma")]
                unsafe fn avx2 $(<$($lt),+>)? ($($arg: $ty),*) $(-> $ret)? {
                    body($($arg),*)
                }
                if $crate::simd::allows($crate::simd::Isa::Avx2) {
                    // SAFETY: the processor supports AVX2 and FMA (`allows` checks both).
                    return unsafe { avx2($($arg),*) };
                }
            }
            body($($arg),*)
        }
    };
}
pub(crate) use avx2_dispatch;

/// [`avx2_dispatch!`] with one more build: the body also runs compiled for AVX-512F (with
/// AVX2 and FMA) where [`allows`] says so, and for AVX2 or the baseline otherwise. For elementwise
/// bodies whose long dependent chains gain from twice as many entries in flight (the kernel
/// profiles); the same rules hold.
macro_rules! avx512_dispatch {
    (
        $(#[$meta:meta])*
        $vis:vis fn $name:ident ($($arg:ident : $ty:ty),* $(,)?) $(-> $ret:ty)?
        $body:block
    ) => {
        $(#[$meta])*
        $vis fn $name ($($arg: $ty),*) $(-> $ret)? {
            #[inline(always)]
            fn body ($($arg: $ty),*) $(-> $ret)? $body
            #[cfg(target_arch = "x86_64")]
            {
                /// The body compiled for AVX-512F (and AVX2, FMA).
                ///
                /// # Safety
                /// The processor must support AVX-512F, AVX2 and FMA.
                #[target_feature(enable = "avx512f,avx2,fma")]
                unsafe fn avx512 ($($arg: $ty),*) $(-> $ret)? {
                    body($($arg),*)
                }
                /// The body compiled for AVX2 and FMA.
                ///
                /// # Safety
                /// The processor must support AVX2 and FMA.
                #[target_feature(enable = "avx2,fma")]
                unsafe fn avx2 ($($arg: $ty),*) $(-> $ret)? {
                    body($($arg),*)
                }
                if $crate::simd::allows($crate::simd::Isa::Avx512) {
                    // SAFETY: the processor supports AVX-512F, AVX2 and FMA (`allows` checks
                    // them).
                    return unsafe { avx512($($arg),*) };
                }
                if $crate::simd::allows($crate::simd::Isa::Avx2) {
                    // SAFETY: the processor supports AVX2 and FMA (`allows` checks both).
                    return unsafe { avx2($($arg),*) };
                }
            }
            body($($arg),*)
        }
    };
}
pub(crate) use avx512_dispatch;
