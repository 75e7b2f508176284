//! Wider vectors where the CPU has them, with results that do not depend on it.
//!
//! Every kernel of this crate exists in several builds — portable Rust, the x86-64 baseline
//! (SSE2), AVX2 with FMA and, for the panel products, some triangular solves and the kernel
//! profiles, AVX-512 — and picks the widest one the processor supports at run time. All
//! builds perform the same IEEE operations per output element in the same order, so they
//! give bitwise identical results and only the vector width differs, which keeps cabo's
//! results reproducible across machines:
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
//! **One dispatch.** A kernel is written once, as a body that is either the same in every
//! build or generic over its level (a `const ISA: u8` parameter, an [`Isa`] as `u8`, that
//! picks the vector code it runs), and this module's `avx2_dispatch!` and `avx512_dispatch!`
//! compile it once per level, each build with its level's features enabled, and run the
//! widest build the processor and the [`limit`] allow. Each level's features are named in
//! one place — where the macros enable them and where [`detected`] checks them — so a build
//! never runs on a processor that lacks one of its features, and no kernel tests a feature
//! by itself. Explicit vector code is written once too: generic over the vector type where
//! the width may change with the level (256-bit vectors in the AVX2 builds, 512-bit ones in
//! the AVX-512 builds), and with 256-bit vectors at both levels where the four lanes are
//! part of the result (the lanes of a dot product's sums). So the equivalence tests of the
//! AVX2 builds also run the source of the AVX-512 ones, on any processor with AVX2: only the
//! instantiation at 512 bits differs.
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
    /// 512-bit AVX-512F with AVX-512VL (32 vector registers for 256-bit code too), AVX2 and
    /// FMA: every build of this level is compiled for all four, and the level is detected
    /// only where the processor has all four. Only the panel products,
    /// [`solve_lower_rows`](crate::cholesky::solve_lower_rows),
    /// [`solve_lower_many`](crate::cholesky::solve_lower_many),
    /// [`solve_upper_many`](crate::cholesky::solve_upper_many) and
    /// [`scaled_profiles`](crate::profile::scaled_profiles) have such a build; the other
    /// kernels run their AVX2 build at this level.
    Avx512 = 3,
}

impl Isa {
    /// Every level, narrowest first.
    pub const ALL: [Isa; 4] = [Isa::Portable, Isa::Baseline, Isa::Avx2, Isa::Avx512];
}

/// [`Isa::Portable`] as the `ISA` argument of a kernel generic over its level.
pub(crate) const PORTABLE: u8 = Isa::Portable as u8;
/// [`Isa::Avx2`] as the `ISA` argument of a kernel generic over its level.
#[cfg(target_arch = "x86_64")]
pub(crate) const AVX2: u8 = Isa::Avx2 as u8;
/// [`Isa::Avx512`] as the `ISA` argument of a kernel generic over its level.
#[cfg(target_arch = "x86_64")]
pub(crate) const AVX512: u8 = Isa::Avx512 as u8;

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

/// Whether the processor has AVX2 and FMA, what the [`Isa::Avx2`] builds are compiled for
/// (the features `dispatch!` enables for them: the two lists must agree).
#[cfg(target_arch = "x86_64")]
#[inline]
fn has_avx2() -> bool {
    std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
}

/// Whether the processor has AVX-512F, AVX-512VL, AVX2 and FMA, what the [`Isa::Avx512`]
/// builds are compiled for (the features `dispatch!` enables for them: the two lists must
/// agree).
#[cfg(target_arch = "x86_64")]
#[inline]
fn has_avx512() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512vl")
        && has_avx2()
}

/// Whether the processor has every feature the builds of level `isa` are compiled for.
#[cfg(target_arch = "x86_64")]
#[inline]
fn supports(isa: Isa) -> bool {
    match isa {
        Isa::Portable | Isa::Baseline => true,
        Isa::Avx2 => has_avx2(),
        Isa::Avx512 => has_avx512(),
    }
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
    LIMIT.load(Ordering::Relaxed) >= isa as u8 && supports(isa)
}

/// [`allows`] for a kernel whose level was fixed earlier, `bound` (chosen with [`allows`]
/// when its data was laid out for that build, as [`Panels`](crate::panel::Panels) are):
/// whether it may run its build of level `isa`, i.e. `isa` is at most `bound` and the
/// processor supports it. The [`limit`] is not consulted, so such a kernel keeps the build
/// it chose.
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn allows_within(bound: Isa, isa: Isa) -> bool {
    isa <= bound && supports(isa)
}

/// Defines a kernel: a free function whose body is compiled once per build — for each level
/// in the list (widest first) with that level's features enabled, and for the target's
/// baseline — and that runs the widest build [`allows`] permits. The entry points are
/// [`avx2_dispatch!`] and [`avx512_dispatch!`], which name the list; the kernel takes one of
/// three forms:
///
/// - `fn name(args) -> ret { body }`: the same body in every build. It should be written so
///   the compiler can vectorise it for each: elementwise loops over contiguous slices, and
///   reductions with explicit independent accumulators. Functions the body calls must be
///   `#[inline(always)]` to be compiled for the build as well. A body that fuses writes
///   [`f64::mul_add`], which becomes `vfmadd` (vectorised) in the vector builds and the C
///   library's `fma` in the baseline one, with the same bits.
/// - `fn name<const ISA: u8>(args) -> ret { body }`: the body is generic over its level
///   (`ISA` is an [`Isa`] as `u8`: [`PORTABLE`] in the baseline build, [`AVX2`] or [`AVX512`]
///   in the vector ones) and passes it on to the vector code it calls, which picks its
///   vectors with it. The body is an `unsafe fn` whose contract is that the processor
///   supports the instructions of `ISA`.
/// - `fn name<const ISA: u8>(level: Isa, args) -> ret { body }`: as the previous form, but the
///   kernel runs the widest build of at most `level` (see [`allows_within`]) rather than of
///   the [`limit`]: for a kernel whose data is laid out for a build chosen earlier.
///
/// Every build is generated here, so a level's features are enabled in one place; they must
/// be those its detection checks (`has_avx2`, `has_avx512`). The macros stay inside this
/// crate: their expansions hold `unsafe` blocks, and only this crate contains `unsafe` code.
macro_rules! dispatch {
    // The kernel: `$select` says how a build is allowed (`allows`, or `within` the bound
    // passed in the leading parameter).
    (@kernel [$($level:ident),+] [$($select:tt)*] [$(#[$meta:meta])*] [$vis:vis] $name:ident
        [$($lt:lifetime),*] [$($bound:ident : $bty:ty)?] ($($arg:ident : $ty:ty),*)
        [$($ret:ty)?] $body:block
    ) => {
        $(#[$meta])*
        $vis fn $name<$($lt),*>($($bound: $bty,)? $($arg: $ty),*) $(-> $ret)? {
            /// The kernel's body in the build of level `ISA` (an `Isa` as `u8`).
            ///
            /// # Safety
            /// The processor must support the instructions of level `ISA`.
            #[inline(always)]
            // The inner functions repeat the kernel's signature: whether it has too many
            // arguments is decided on the kernel itself.
            #[allow(clippy::too_many_arguments)]
            unsafe fn body<$($lt,)* const ISA: u8>($($arg: $ty),*) $(-> $ret)? $body
            #[cfg(target_arch = "x86_64")]
            {
                $crate::simd::dispatch!(
                    @builds [$($level),+] {[$($select)*] [$($lt),*] ($($arg: $ty),*) [$($ret)?]}
                );
            }
            $(
                // Off x86-64 the level passed in has nothing to choose from.
                #[cfg(not(target_arch = "x86_64"))]
                let _ = $bound;
            )?
            // SAFETY: the portable build needs nothing beyond the target's baseline.
            unsafe { body::<{ $crate::simd::PORTABLE }>($($arg),*) }
        }
    };
    // The vector builds, widest first (one at a time: the signature repeats in each).
    (@builds [$level:ident $(, $rest:ident)*] $signature:tt) => {
        $crate::simd::dispatch!(@build $level $signature);
        $crate::simd::dispatch!(@builds [$($rest),*] $signature);
    };
    (@builds [] $signature:tt) => {};
    // One vector build: the body compiled for the level's features, and the test that runs
    // it. The features are those `has_avx2` and `has_avx512` check.
    (@build Avx2 {[$($select:tt)*] [$($lt:lifetime),*] ($($arg:ident : $ty:ty),*)
        [$($ret:ty)?]}
    ) => {
        /// The body compiled for AVX2 and FMA, the features of `Isa::Avx2`.
        ///
        /// # Safety
        /// The processor must support AVX2 and FMA.
        #[target_feature(enable = "avx2,fma")]
        #[allow(clippy::too_many_arguments)]
        unsafe fn avx2<$($lt),*>($($arg: $ty),*) $(-> $ret)? {
            // SAFETY: the processor supports the features of `Isa::Avx2` (this function's
            // contract), which are the instructions the body may use at that level.
            unsafe { body::<{ $crate::simd::AVX2 }>($($arg),*) }
        }
        if $crate::simd::dispatch!(@allows [$($select)*] Avx2) {
            // SAFETY: the processor supports AVX2 and FMA (checked by the test above).
            return unsafe { avx2($($arg),*) };
        }
    };
    (@build Avx512 {[$($select:tt)*] [$($lt:lifetime),*] ($($arg:ident : $ty:ty),*)
        [$($ret:ty)?]}
    ) => {
        /// The body compiled for AVX-512F, AVX-512VL, AVX2 and FMA, the features of
        /// `Isa::Avx512`.
        ///
        /// # Safety
        /// The processor must support AVX-512F, AVX-512VL, AVX2 and FMA.
        #[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
        #[allow(clippy::too_many_arguments)]
        unsafe fn avx512<$($lt),*>($($arg: $ty),*) $(-> $ret)? {
            // SAFETY: the processor supports the features of `Isa::Avx512` (this function's
            // contract), which are the instructions the body may use at that level.
            unsafe { body::<{ $crate::simd::AVX512 }>($($arg),*) }
        }
        if $crate::simd::dispatch!(@allows [$($select)*] Avx512) {
            // SAFETY: the processor supports AVX-512F, AVX-512VL, AVX2 and FMA (checked by
            // the test above).
            return unsafe { avx512($($arg),*) };
        }
    };
    (@allows [allows] $level:ident) => {
        $crate::simd::allows($crate::simd::Isa::$level)
    };
    (@allows [within $bound:ident] $level:ident) => {
        $crate::simd::allows_within($bound, $crate::simd::Isa::$level)
    };
    // The three forms of a kernel.
    (
        [$($level:ident),+]
        $(#[$meta:meta])*
        $vis:vis fn $name:ident <$($lt:lifetime,)* const ISA: u8>
            ($bound:ident : Isa $(, $arg:ident : $ty:ty)* $(,)?) $(-> $ret:ty)?
        $body:block
    ) => {
        $crate::simd::dispatch!(
            @kernel [$($level),+] [within $bound] [$(#[$meta])*] [$vis] $name [$($lt),*]
            [$bound: $crate::simd::Isa] ($($arg: $ty),*) [$($ret)?] $body
        );
    };
    (
        [$($level:ident),+]
        $(#[$meta:meta])*
        $vis:vis fn $name:ident <$($lt:lifetime,)* const ISA: u8>
            ($($arg:ident : $ty:ty),* $(,)?) $(-> $ret:ty)?
        $body:block
    ) => {
        $crate::simd::dispatch!(
            @kernel [$($level),+] [allows] [$(#[$meta])*] [$vis] $name [$($lt),*] []
            ($($arg: $ty),*) [$($ret)?] $body
        );
    };
    (
        [$($level:ident),+]
        $(#[$meta:meta])*
        $vis:vis fn $name:ident $(<$($lt:lifetime),+>)? ($($arg:ident : $ty:ty),* $(,)?)
            $(-> $ret:ty)?
        $body:block
    ) => {
        $crate::simd::dispatch!(
            @kernel [$($level),+] [allows] [$(#[$meta])*] [$vis] $name [$($($lt),+)?] []
            ($($arg: $ty),*) [$($ret)?] $body
        );
    };
}
pub(crate) use dispatch;

/// Defines a kernel (see [`dispatch!`]) with an AVX2 build: it runs compiled for AVX2 and FMA
/// where [`allows`] says so and for the baseline target otherwise, with bitwise identical
/// results (see the module documentation).
macro_rules! avx2_dispatch {
    ($($kernel:tt)*) => {
        $crate::simd::dispatch!([Avx2] $($kernel)*);
    };
}
pub(crate) use avx2_dispatch;

/// [`avx2_dispatch!`] with one more build: the kernel also runs compiled for AVX-512 (F and
/// VL, with AVX2 and FMA) where [`allows`] says so. For kernels whose vector code takes
/// 512-bit vectors at that level (the generic form's `ISA` is then [`AVX512`]), that needs
/// AVX-512VL's 32 vector registers, or whose elementwise loops gain from twice as many
/// entries in flight (the kernel profiles); the same rules hold.
macro_rules! avx512_dispatch {
    ($($kernel:tt)*) => {
        $crate::simd::dispatch!([Avx512, Avx2] $($kernel)*);
    };
}
pub(crate) use avx512_dispatch;

/// The vector types of the kernels' explicit vector code, so that one generic source serves
/// both vector widths: `__m256d` (four lanes) in the builds of [`Isa::Avx2`] and `__m512d`
/// (eight lanes) in those of [`Isa::Avx512`]. A kernel's 512-bit code is then its 256-bit
/// code instantiated at twice the width, which the equivalence tests of the AVX2 builds run
/// on every processor with AVX2. Every method is one instruction, `#[inline(always)]` so
/// that it is compiled into the build that calls it.
///
/// # Safety
/// Every method requires the processor to support the type's instructions — AVX and FMA
/// for `__m256d` (in every build from [`Isa::Avx2`] on), AVX-512F for `__m512d` (in the
/// builds of [`Isa::Avx512`]) — and [`Vector::load`] and [`Vector::store`] require `p` to
/// be valid for reading, respectively writing, [`Vector::LANES`] values.
#[cfg(target_arch = "x86_64")]
pub(crate) trait Vector: Copy {
    /// Values per vector.
    const LANES: usize;
    /// Every lane zero.
    unsafe fn zero() -> Self;
    /// Every lane `x`.
    unsafe fn splat(x: f64) -> Self;
    /// The values at `p..p + LANES`, unaligned.
    unsafe fn load(p: *const f64) -> Self;
    /// Stores the lanes to `p..p + LANES`, unaligned.
    unsafe fn store(self, p: *mut f64);
    /// `self + b`, lane by lane.
    unsafe fn add(self, b: Self) -> Self;
    /// `self − b`, lane by lane.
    unsafe fn sub(self, b: Self) -> Self;
    /// `self · b`, lane by lane.
    unsafe fn mul(self, b: Self) -> Self;
    /// `self / b`, lane by lane.
    unsafe fn div(self, b: Self) -> Self;
    /// `self · b + c`, lane by lane, rounded once (`vfmadd`): [`f64::mul_add`]'s bits.
    unsafe fn mul_add(self, b: Self, c: Self) -> Self;
    /// `c − self · b`, lane by lane, rounded once (`vfnmadd`): the bits of
    /// `(−self).mul_add(b, c)`.
    unsafe fn neg_mul_add(self, b: Self, c: Self) -> Self;
}

/// Implements [`Vector`] for a vector type with its intrinsics.
#[cfg(target_arch = "x86_64")]
macro_rules! vector {
    ($t:ident, $lanes:literal, $zero:ident, $splat:ident, $load:ident, $store:ident,
        $add:ident, $sub:ident, $mul:ident, $div:ident, $fmadd:ident, $fnmadd:ident) => {
        // SAFETY (every block below): the caller guarantees the type's instructions and, for
        // loads and stores, `LANES` valid values at `p` (the trait's contract).
        impl Vector for std::arch::x86_64::$t {
            const LANES: usize = $lanes;
            #[inline(always)]
            unsafe fn zero() -> Self {
                // SAFETY: see above.
                unsafe { std::arch::x86_64::$zero() }
            }
            #[inline(always)]
            unsafe fn splat(x: f64) -> Self {
                // SAFETY: see above.
                unsafe { std::arch::x86_64::$splat(x) }
            }
            #[inline(always)]
            unsafe fn load(p: *const f64) -> Self {
                // SAFETY: see above.
                unsafe { std::arch::x86_64::$load(p) }
            }
            #[inline(always)]
            unsafe fn store(self, p: *mut f64) {
                // SAFETY: see above.
                unsafe { std::arch::x86_64::$store(p, self) }
            }
            #[inline(always)]
            unsafe fn add(self, b: Self) -> Self {
                // SAFETY: see above.
                unsafe { std::arch::x86_64::$add(self, b) }
            }
            #[inline(always)]
            unsafe fn sub(self, b: Self) -> Self {
                // SAFETY: see above.
                unsafe { std::arch::x86_64::$sub(self, b) }
            }
            #[inline(always)]
            unsafe fn mul(self, b: Self) -> Self {
                // SAFETY: see above.
                unsafe { std::arch::x86_64::$mul(self, b) }
            }
            #[inline(always)]
            unsafe fn div(self, b: Self) -> Self {
                // SAFETY: see above.
                unsafe { std::arch::x86_64::$div(self, b) }
            }
            #[inline(always)]
            unsafe fn mul_add(self, b: Self, c: Self) -> Self {
                // SAFETY: see above.
                unsafe { std::arch::x86_64::$fmadd(self, b, c) }
            }
            #[inline(always)]
            unsafe fn neg_mul_add(self, b: Self, c: Self) -> Self {
                // SAFETY: see above.
                unsafe { std::arch::x86_64::$fnmadd(self, b, c) }
            }
        }
    };
}

#[cfg(target_arch = "x86_64")]
vector!(
    __m256d,
    4,
    _mm256_setzero_pd,
    _mm256_set1_pd,
    _mm256_loadu_pd,
    _mm256_storeu_pd,
    _mm256_add_pd,
    _mm256_sub_pd,
    _mm256_mul_pd,
    _mm256_div_pd,
    _mm256_fmadd_pd,
    _mm256_fnmadd_pd
);

#[cfg(target_arch = "x86_64")]
vector!(
    __m512d,
    8,
    _mm512_setzero_pd,
    _mm512_set1_pd,
    _mm512_loadu_pd,
    _mm512_storeu_pd,
    _mm512_add_pd,
    _mm512_sub_pd,
    _mm512_mul_pd,
    _mm512_div_pd,
    _mm512_fmadd_pd,
    _mm512_fnmadd_pd
);
