//! Box-constrained limited-memory BFGS (L-BFGS-B).
//!
//! The algorithm of Byrd, Lu, Nocedal & Zhu (1995), "A limited memory algorithm for bound
//! constrained optimization", with the subspace step of Morales & Nocedal (2011):
//!
//! 1. the limited-memory BFGS matrix is kept in compact form `B = θI − W M Wᵀ` with
//!    `W = [Y, θS]` (at most `memory` correction pairs), the middle matrix `M` by the
//!    factors that apply it (see `Middle`), as L-BFGS-B's own `formt`/`bmv` keep it;
//! 2. the **generalised Cauchy point** minimises the quadratic model along the projected
//!    steepest-descent path, walking the sorted breakpoints where variables hit their bounds;
//! 3. **subspace minimisation** minimises the model over the variables still free at the
//!    Cauchy point (direct primal method: the two-loop recursion when every variable is free,
//!    the reduced matrix `ZᵀBZ` when at most `2k` are, Sherman–Morrison–Woodbury on the
//!    compact form otherwise), then projects onto the box and falls back to the truncated
//!    step when the projection is not a descent direction;
//! 4. a **line search** along the feasible direction enforces the strong Wolfe conditions
//!    (`c₁ = 10⁻⁴`, `c₂ = 0.9`) by bracketing and safeguarded cubic interpolation. A step that
//!    produces a non-finite value or gradient counts as "too long" and is shrunk.
//!
//! Every trial point is projected onto the box, so the objective is never evaluated outside
//! `[lower, upper]` (not even by one rounding error). With all bounds infinite the method is
//! plain L-BFGS, which is what hyperparameter fitting in log space needs.
//!
//! Everything is deterministic: no randomness, and ties among breakpoints are broken by index.
//!
//! ## Resumable searches and lockstep evaluation
//!
//! A search is an `async fn` over the solver's state: where it needs `f` and `∇f` at a point
//! it lends its point and gradient buffers to a one-request slot and yields; a small
//! hand-written executor (polling with [`Waker::noop`], no threads, no dependencies)
//! evaluates the request and resumes it. [`minimize`] answers each request with its closure
//! as it comes. [`minimize_lockstep`] runs many searches over one box together: each round
//! it resumes every search still running, gathers the points they request (in the order of
//! the starts) and evaluates all of them through one call of a [`BatchObjectiveFn`], so
//! that an objective can share work between the points (a posterior's Cholesky factor is
//! loaded once for all of them).
//!
//! Why the bits do not change: the solver's arithmetic is the same code whichever way it is
//! driven, and a search depends only on its start, the box, the options and the values and
//! gradients it receives. The searches share one set of scratch buffers for the model step
//! (middle matrix, Cauchy point, subspace step), which keeps their working set in cache,
//! but every entry of those is rewritten before it is read within a step, so nothing passes
//! from one search to another. When the batched
//! objective gives each point bitwise what the single-point one gives (as
//! [`cabo_core::Objective::value_grads`] promises), every search of
//! [`minimize_lockstep`] makes the same trial points, takes the same steps and ends with
//! the same [`Minimum`] — evaluation count included — as [`minimize`] from its start. Only
//! the moment each evaluation happens differs. The gradient buffer the objective writes
//! into even holds the same stale entries in both drivers (the search's own buffer).

// Linear algebra over several parallel arrays reads best with explicit indices.
#![allow(clippy::needless_range_loop)]

use cabo_core::{Error, Result};
use cabo_linalg::lu::{lu_factor, lu_solve};
use cabo_linalg::rows::{accumulate_rows, fold_rows, free_gram};
use cabo_linalg::vector::dot;
use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::pin::{Pin, pin};
use std::task::{Context, Poll, Waker};

/// Stopping tolerances of [`minimize`], defined here once for every L-BFGS-B run in cabo.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerances {
    /// Converged when the sup-norm of the projected gradient is at most this.
    pub pgtol: f64,
    /// Converged when a step reduces `f` by at most `ftol · max(|f_k|, |f_{k+1}|, 1)`;
    /// `0` disables this test (then only `pgtol`, `max_iters` or a failed line search stop).
    pub ftol: f64,
}

impl Tolerances {
    /// The default, tighter than SciPy's because a cheap acquisition function deserves an
    /// accurate maximiser: `pgtol = 1e-8`, `ftol = 1e-12`.
    pub const TIGHT: Tolerances = Tolerances {
        pgtol: 1e-8,
        ftol: 1e-12,
    };

    /// SciPy's defaults (`pgtol = 1e-5`, `ftol = factr · ε ≈ 2.2e-9`), which BoTorch uses to
    /// fit GP hyperparameters and to optimise multi-step lookahead trees: objectives with
    /// many variables or Monte Carlo noise, where polishing further moves nothing that
    /// matters.
    pub const SCIPY: Tolerances = Tolerances {
        pgtol: 1e-5,
        ftol: 2.2e-9,
    };
}

impl Default for Tolerances {
    fn default() -> Self {
        Tolerances::TIGHT
    }
}

/// Stopping rules and memory of [`minimize`]; the defaults are 200 iterations, 10
/// correction pairs and [`Tolerances::TIGHT`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LbfgsbOptions {
    /// Maximum number of iterations (accepted steps).
    pub max_iters: usize,
    /// Number of correction pairs kept (`m`).
    pub memory: usize,
    /// When a run has converged.
    pub tolerances: Tolerances,
}

impl LbfgsbOptions {
    /// At most `max_iters` iterations, stopping at `tolerances`, with the default memory.
    pub fn new(max_iters: usize, tolerances: Tolerances) -> Self {
        LbfgsbOptions {
            max_iters,
            tolerances,
            ..LbfgsbOptions::default()
        }
    }
}

impl Default for LbfgsbOptions {
    fn default() -> Self {
        LbfgsbOptions {
            max_iters: 200,
            memory: 10,
            tolerances: Tolerances::TIGHT,
        }
    }
}

/// The result of [`minimize`].
#[derive(Debug, Clone, PartialEq)]
pub struct Minimum {
    /// The best point found (inside the box).
    pub x: Vec<f64>,
    /// `f(x)`.
    pub value: f64,
    /// Accepted steps.
    pub iterations: usize,
    /// Calls of `f`.
    pub evaluations: usize,
    /// True when a tolerance was met (not when the iteration cap or a failed line search
    /// ended the run).
    pub converged: bool,
}

/// The objective as L-BFGS-B sees it: returns `f(x)` and writes `∇f(x)` into the slice.
pub type ObjectiveFn<'a> = dyn FnMut(&[f64], &mut [f64]) -> f64 + 'a;

/// Minimises `f` over the box `[lower, upper]` starting from `x0` (projected into the box).
///
/// Bounds may be `±∞`. Invalid input (mismatched lengths, `lower > upper`, NaN bounds or a
/// non-finite start) cannot be reported through this signature, so it yields a non-converged
/// [`Minimum`] at the projected start with `value = NaN` and zero evaluations; call
/// [`try_minimize`] to get the reason as an error instead. A non-finite value or gradient at the
/// start ends the run after that one evaluation (`converged = false`).
pub fn minimize(
    f: &mut ObjectiveFn<'_>,
    x0: &[f64],
    lower: &[f64],
    upper: &[f64],
    opts: &LbfgsbOptions,
) -> Minimum {
    match try_minimize(f, x0, lower, upper, opts) {
        Ok(m) => m,
        Err(_) => invalid_minimum(x0, lower, upper),
    }
}

/// What [`minimize`] returns for invalid input: the projected start, `value = NaN`, no
/// evaluations.
fn invalid_minimum(x0: &[f64], lower: &[f64], upper: &[f64]) -> Minimum {
    Minimum {
        x: x0
            .iter()
            .enumerate()
            .map(|(i, &v)| {
                let lo = lower.get(i).copied().unwrap_or(f64::NEG_INFINITY);
                let hi = upper.get(i).copied().unwrap_or(f64::INFINITY);
                if lo <= hi { v.clamp(lo, hi) } else { v }
            })
            .collect(),
        value: f64::NAN,
        iterations: 0,
        evaluations: 0,
        converged: false,
    }
}

/// [`minimize`], but invalid input is an [`Error::Invalid`] saying what is wrong.
pub fn try_minimize(
    f: &mut ObjectiveFn<'_>,
    x0: &[f64],
    lower: &[f64],
    upper: &[f64],
    opts: &LbfgsbOptions,
) -> Result<Minimum> {
    validate(x0, lower, upper, opts)?;
    let slot = RefCell::new(Slot::default());
    let scratch = RefCell::new(Scratch::new(x0.len(), opts.memory));
    let search = Solver::new(x0.len(), opts.memory, lower, upper).run(&slot, &scratch, x0, opts);
    Ok(drive(search, &slot, f))
}

/// Rejects what [`try_minimize`] rejects.
fn validate(x0: &[f64], lower: &[f64], upper: &[f64], opts: &LbfgsbOptions) -> Result<()> {
    let n = x0.len();
    if lower.len() != n || upper.len() != n {
        return Err(Error::invalid(format!(
            "L-BFGS-B: start has {n} coordinates but the bounds have {} and {}",
            lower.len(),
            upper.len()
        )));
    }
    for i in 0..n {
        if lower[i].is_nan() || upper[i].is_nan() || lower[i] > upper[i] {
            return Err(Error::invalid(format!(
                "L-BFGS-B: bound {i} is [{}, {}]; need lower ≤ upper",
                lower[i], upper[i]
            )));
        }
        if !x0[i].is_finite() {
            return Err(Error::invalid(format!(
                "L-BFGS-B: start coordinate {i} is {}",
                x0[i]
            )));
        }
    }
    if opts.memory == 0 {
        return Err(Error::invalid("L-BFGS-B: memory must be at least 1"));
    }
    Ok(())
}

/// The objective of [`minimize_lockstep`]: values and gradients at many points at once.
/// Called as `f(xs, values, grads)` with `xs` row-major (`values.len()` rows of the bounds'
/// length) and `grads` in the same layout; it writes `values` and `grads`. On entry each
/// row of `grads` holds what that search's gradient buffer held, exactly as the slice given
/// to an [`ObjectiveFn`] by [`minimize`] does.
pub type BatchObjectiveFn<'a> = dyn FnMut(&[f64], &mut [f64], &mut [f64]) + 'a;

/// Runs [`minimize`] from every start in `starts` over the same box, in lockstep: each round
/// every search that still runs requests one point, and all of them are evaluated through
/// one call of `f` (in the order of `starts`), until every search has ended.
///
/// Returns one [`Minimum`] per start, in order. As long as each row `f` evaluates is bitwise
/// what the single-point objective gives there, result `i` is bitwise
/// `minimize(single, &starts[i], lower, upper, opts)`: every search runs the solver's
/// arithmetic unchanged and sees the same values, only when its evaluations happen differs.
/// Invalid input for a start gives what [`minimize`] gives for it, with no evaluation.
pub fn minimize_lockstep<S: AsRef<[f64]>>(
    f: &mut BatchObjectiveFn<'_>,
    starts: &[S],
    lower: &[f64],
    upper: &[f64],
    opts: &LbfgsbOptions,
) -> Vec<Minimum> {
    let slots: Vec<RefCell<Slot>> = starts.iter().map(|_| RefCell::default()).collect();
    let scratch = RefCell::new(Scratch::new(lower.len(), opts.memory.max(1)));
    let mut results: Vec<Option<Minimum>> = vec![None; starts.len()];
    let mut searches: Vec<(usize, Search<'_>)> = Vec::with_capacity(starts.len());
    for (i, (x0, slot)) in starts.iter().zip(&slots).enumerate() {
        let x0 = x0.as_ref();
        match validate(x0, lower, upper, opts) {
            Ok(()) => {
                let solver = Solver::new(x0.len(), opts.memory, lower, upper);
                searches.push((i, Box::pin(solver.run(slot, &scratch, x0, opts))));
            }
            Err(_) => results[i] = Some(invalid_minimum(x0, lower, upper)),
        }
    }
    let n = lower.len();
    let mut xs = Vec::with_capacity(searches.len() * n);
    let mut grads = Vec::with_capacity(searches.len() * n);
    let mut values = Vec::with_capacity(searches.len());
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        // Resume every search; the ones that end leave, the others have requested a point.
        searches.retain_mut(|(i, search)| match search.as_mut().poll(&mut cx) {
            Poll::Ready(m) => {
                results[*i] = Some(m);
                false
            }
            Poll::Pending => true,
        });
        if searches.is_empty() {
            break;
        }
        xs.clear();
        grads.clear();
        for (i, _) in &searches {
            let slot = slots[*i].borrow();
            xs.extend_from_slice(&slot.x);
            grads.extend_from_slice(&slot.g);
        }
        values.clear();
        values.resize(searches.len(), 0.0);
        f(&xs, &mut values, &mut grads);
        for (r, (i, _)) in searches.iter().enumerate() {
            let mut slot = slots[*i].borrow_mut();
            slot.g.copy_from_slice(&grads[r * n..(r + 1) * n]);
            slot.value = values[r];
            slot.pending = false;
        }
    }
    results.into_iter().flatten().collect()
}

/// One running search of [`minimize_lockstep`].
type Search<'a> = Pin<Box<dyn Future<Output = Minimum> + 'a>>;

/// Where a search and its driver exchange one evaluation. The search lends its point and
/// gradient buffers (swapped in, so nothing is copied), marks the request pending and
/// yields; the driver writes the value and the gradient and clears the mark; the search
/// takes its buffers back.
#[derive(Default)]
struct Slot {
    /// The point requested.
    x: Vec<f64>,
    /// The gradient there, written by the driver (on request, what the search's buffer
    /// held).
    g: Vec<f64>,
    /// The value there, written by the driver.
    value: f64,
    /// True from the request until the driver has evaluated it.
    pending: bool,
}

/// Requests `f(x)` (and `∇f(x)` into `g`) through `slot` and waits for the driver: the
/// one suspension point of a search, standing where the solver used to call `f`.
async fn evaluate(slot: &RefCell<Slot>, x: &mut Vec<f64>, g: &mut Vec<f64>) -> f64 {
    {
        let mut s = slot.borrow_mut();
        std::mem::swap(&mut s.x, x);
        std::mem::swap(&mut s.g, g);
        s.pending = true;
    }
    std::future::poll_fn(|_| {
        if slot.borrow().pending {
            Poll::Pending
        } else {
            Poll::Ready(())
        }
    })
    .await;
    let mut s = slot.borrow_mut();
    std::mem::swap(&mut s.x, x);
    std::mem::swap(&mut s.g, g);
    s.value
}

/// Runs one search to its end, answering each of its requests with `f`.
fn drive(
    search: impl Future<Output = Minimum>,
    slot: &RefCell<Slot>,
    f: &mut ObjectiveFn<'_>,
) -> Minimum {
    let mut search = pin!(search);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        match search.as_mut().poll(&mut cx) {
            Poll::Ready(m) => return m,
            Poll::Pending => {
                let mut s = slot.borrow_mut();
                let s = &mut *s;
                s.value = f(&s.x, &mut s.g);
                s.pending = false;
            }
        }
    }
}

/// Correction pairs below this relative curvature are skipped (they would make `B` nearly
/// singular); the value is L-BFGS-B's machine-epsilon test.
const CURVATURE_EPS: f64 = f64::EPSILON;
/// Largest step the line search may take along an unbounded direction (as in L-BFGS-B).
const MAX_STEP: f64 = 1e10;
/// Sufficient-decrease and curvature constants of the strong Wolfe conditions.
const WOLFE_C1: f64 = 1e-4;
const WOLFE_C2: f64 = 0.9;
/// Function evaluations one line search may spend.
const MAX_LINE_EVALS: usize = 30;

/// The buffers a search needs only within one model step (middle matrix, Cauchy point,
/// subspace step) and rewrites before reading: searches run in lockstep share one, which
/// keeps their combined working set small (each search keeps only its pairs, their inner
/// products and its line-search vectors).
#[derive(Default)]
struct Scratch {
    /// `W = [Y, θS]`, row-major `n × 2k` (row stride `2m`), and `Wᵀ` (`2k × n`).
    w: Vec<f64>,
    wt: Vec<f64>,
    /// `W v` for the `v` of the subspace step.
    wv: Vec<f64>,
    /// Ring slots of the stored pairs, oldest first: the slot arithmetic (an integer
    /// division each) is done once per model step instead of in every inner loop.
    order: Vec<usize>,
    /// The middle matrix `M`, as the factors that apply it.
    mid: Middle,
    /// `M` itself (`2k × 2k`, stride `2m`) and `K`'s LU factors, only when `K` has to be
    /// inverted by LU; `piv` also serves the subspace step's LU.
    mmat: Vec<f64>,
    kmat: Vec<f64>,
    piv: Vec<usize>,
    /// Two-loop recursion coefficients.
    two_loop: Vec<f64>,
    // Cauchy point and subspace step.
    xc: Vec<f64>,
    dvec: Vec<f64>,
    c: Vec<f64>,
    p: Vec<f64>,
    v: Vec<f64>,
    v2: Vec<f64>,
    mw: Vec<f64>,
    nmat: Vec<f64>,
    wzzw: Vec<f64>,
    vmat: Vec<f64>,
    r: Vec<f64>,
    free: Vec<usize>,
    /// The breakpoints of the Cauchy path as `(t, index)` with `t` by its bits: `t` is
    /// positive and finite there, so its bits order it as `f64::total_cmp` does.
    breaks: Vec<Reverse<(u64, usize)>>,
}

impl Scratch {
    fn new(n: usize, m: usize) -> Self {
        let m2 = 2 * m;
        Scratch {
            w: vec![0.0; n * m2],
            wt: vec![0.0; m2 * n],
            wv: vec![0.0; n],
            order: Vec::with_capacity(m),
            mid: Middle::new(m),
            mmat: vec![0.0; m2 * m2],
            kmat: vec![0.0; m2 * m2],
            piv: vec![0; m2],
            two_loop: vec![0.0; m],
            xc: vec![0.0; n],
            dvec: vec![0.0; n],
            c: vec![0.0; m2],
            p: vec![0.0; m2],
            v: vec![0.0; m2],
            v2: vec![0.0; m2],
            mw: vec![0.0; m2],
            nmat: vec![0.0; m2 * m2],
            wzzw: vec![0.0; m2 * m2],
            vmat: vec![0.0; m2 * m2],
            r: vec![0.0; n],
            free: Vec::with_capacity(n),
            breaks: Vec::with_capacity(n),
        }
    }
}

/// The middle matrix `M = K⁻¹` of the compact form, `K = [[−D, Lᵀ], [L, θSᵀS]]`, held as
/// what applies it rather than as its `4k²` entries. Usually (`factored`) that is `L` and
/// `D` (`lmat`) and the Cholesky factor `J` of the Schur complement `Σ = θSᵀS + LD⁻¹Lᵀ =
/// JJᵀ` (`schur`), as L-BFGS-B's own `formt`/`bmv` keep them. Then `K = F E Fᵀ` with
/// `F = [[D^½, 0], [−LD^-½, J]]` lower triangular and `E = diag(−I, I)`, so
/// `M = F⁻ᵀ E F⁻¹` and `uᵀMv = (F⁻¹u)ᵀ E (F⁻¹v)`: the model step works in the coordinates
/// `F⁻¹v` ([`Middle::half`], `k²` multiply-adds), where a product with `M` is a change of
/// sign. Forming `M` itself (`≈ 1.2k³`, most of the old middle matrix's cost) is skipped.
///
/// When `Σ` is not numerically positive definite, `K` is inverted by LU and `Mᵀ` is kept
/// (`mmat_t`); the same three operations then read `half = I` and `dual = finish = M`.
#[derive(Default)]
struct Middle {
    /// Pairs kept, and the row stride (`2m`) of `mmat_t`.
    k: usize,
    stride: usize,
    /// True when `lmat`/`schur` hold `M`, false when `mmat_t` does.
    factored: bool,
    /// `lmat[b·k + a] = s_a·y_b` for `a ≥ b`: `L` strictly below the diagonal, `D` on it.
    lmat: Vec<f64>,
    /// `schur[c·k + i] = J[i][c]` for `i ≥ c` (after [`cholesky_by_columns`]).
    schur: Vec<f64>,
    /// `1 / D[b]`, `1 / √D[b]` and `1 / J[c][c]`.
    inv_d: Vec<f64>,
    inv_sqrt_d: Vec<f64>,
    inv_jd: Vec<f64>,
    /// `Mᵀ` (`2k × 2k`, stride `2m`) when `K` was inverted by LU.
    mmat_t: Vec<f64>,
}

impl Middle {
    fn new(m: usize) -> Self {
        Middle {
            k: 0,
            stride: 2 * m,
            factored: false,
            lmat: vec![0.0; m * m],
            schur: vec![0.0; m * m],
            inv_d: vec![0.0; m],
            inv_sqrt_d: vec![0.0; m],
            inv_jd: vec![0.0; m],
            mmat_t: vec![0.0; 4 * m * m],
        }
    }

    /// `out[..2k] = F⁻¹ v`: `u₁ = D^-½ v₁`, `u₂ = J⁻¹(v₂ + LD⁻¹v₁)` (a copy of `v` when
    /// `K` was inverted by LU).
    fn half(&self, v: &[f64], out: &mut [f64]) {
        let k = self.k;
        out[..2 * k].copy_from_slice(&v[..2 * k]);
        if !self.factored {
            return;
        }
        let (u1, u2) = out[..2 * k].split_at_mut(k);
        for b in 0..k {
            let coef = u1[b] * self.inv_d[b];
            let l_col = &self.lmat[b * k + b + 1..(b + 1) * k];
            for (t, &l) in u2[b + 1..].iter_mut().zip(l_col) {
                *t += l * coef;
            }
            u1[b] *= self.inv_sqrt_d[b];
        }
        for c in 0..k {
            let y = u2[c] * self.inv_jd[c];
            u2[c] = y;
            let j_col = &self.schur[c * k + c + 1..(c + 1) * k];
            for (t, &j) in u2[c + 1..].iter_mut().zip(j_col) {
                *t -= j * y;
            }
        }
    }

    /// `out[..2k] = E u`, so that `dual(half(a))·half(b) = aᵀMb` (`M u` when `K` was
    /// inverted by LU).
    fn dual(&self, u: &[f64], out: &mut [f64]) {
        let k = self.k;
        if !self.factored {
            mat_vec(&self.mmat_t, self.stride, 2 * k, u, out);
            return;
        }
        for (o, &x) in out[..k].iter_mut().zip(&u[..k]) {
            *o = -x;
        }
        out[k..2 * k].copy_from_slice(&u[k..2 * k]);
    }

    /// `out[..2k] = F⁻ᵀ E u`, which is `M v` for `u = half(v)`: `z₂ = J⁻ᵀu₂`,
    /// `z₁ = −D^-½u₁ + D⁻¹Lᵀz₂` (`M u` when `K` was inverted by LU).
    fn finish(&self, u: &[f64], out: &mut [f64]) {
        let k = self.k;
        if !self.factored {
            mat_vec(&self.mmat_t, self.stride, 2 * k, u, out);
            return;
        }
        let (z1, z2) = out[..2 * k].split_at_mut(k);
        z2.copy_from_slice(&u[k..2 * k]);
        for c in (0..k).rev() {
            let j_col = &self.schur[c * k + c + 1..(c + 1) * k];
            z2[c] = (z2[c] - dotk(j_col, &z2[c + 1..])) * self.inv_jd[c];
        }
        for b in 0..k {
            let l_col = &self.lmat[b * k + b + 1..(b + 1) * k];
            z1[b] = dotk(l_col, &z2[b + 1..]) * self.inv_d[b] - u[b] * self.inv_sqrt_d[b];
        }
    }

    /// [`Middle::half`] of `cols` vectors at once, held as the columns of `u` (`2k × cols`,
    /// row-major, overwritten): every step of the solve is a whole-row update, which runs
    /// across the vectors side by side.
    fn half_many(&self, u: &mut [f64], cols: usize) {
        let k = self.k;
        if !self.factored {
            return;
        }
        let (u1, u2) = u[..2 * k * cols].split_at_mut(k * cols);
        for b in 0..k {
            let row_b = &mut u1[b * cols..(b + 1) * cols];
            for a in b + 1..k {
                let l = self.lmat[b * k + a] * self.inv_d[b];
                for (t, &x) in u2[a * cols..(a + 1) * cols].iter_mut().zip(row_b.iter()) {
                    *t += l * x;
                }
            }
            for x in row_b.iter_mut() {
                *x *= self.inv_sqrt_d[b];
            }
        }
        for c in 0..k {
            let (done, rest) = u2.split_at_mut((c + 1) * cols);
            let row_c = &mut done[c * cols..];
            for x in row_c.iter_mut() {
                *x *= self.inv_jd[c];
            }
            for i in c + 1..k {
                let j = self.schur[c * k + i];
                let row_i = &mut rest[(i - c - 1) * cols..(i - c) * cols];
                for (t, &y) in row_i.iter_mut().zip(row_c.iter()) {
                    *t -= j * y;
                }
            }
        }
    }

    /// [`Middle::dual`] of the columns of `u` (`2k × cols`, row-major) into `out`.
    fn dual_many(&self, u: &[f64], cols: usize, out: &mut [f64]) {
        let kk = 2 * self.k;
        let (u, out) = (&u[..kk * cols], &mut out[..kk * cols]);
        if self.factored {
            let half = self.k * cols;
            for (o, &x) in out[..half].iter_mut().zip(&u[..half]) {
                *o = -x;
            }
            out[half..].copy_from_slice(&u[half..]);
            return;
        }
        for (r, row) in out.chunks_exact_mut(cols).enumerate() {
            let terms = (0..kk).map(|j| {
                (
                    self.mmat_t[j * self.stride + r],
                    &u[j * cols..(j + 1) * cols],
                )
            });
            combine_rows(terms, 0.0, row, |m, x| m * x);
        }
    }
}

/// All buffers of one run, allocated once so that iterations do not allocate. The model
/// step's buffers live in `sc`: an empty [`Scratch`] except while [`Solver::with_scratch`]
/// lends the shared one.
struct Solver<'b> {
    n: usize,
    m: usize,
    lower: &'b [f64],
    upper: &'b [f64],
    /// Ring buffers of the last `k` steps `s` and gradient changes `y`, each `m × n`.
    s: Vec<f64>,
    y: Vec<f64>,
    /// Index of the oldest pair in the rings and the number of pairs kept.
    head: usize,
    k: usize,
    theta: f64,
    /// Inner products of the stored pairs indexed by ring slot (`m × m`): `sty[a·m + b] =
    /// s_a·y_b` and `sts[a·m + b] = s_a·s_b`. Each new pair adds one row and column, so the
    /// middle matrix never recomputes the O(k²n) products from scratch.
    sty: Vec<f64>,
    sts: Vec<f64>,
    /// The model step's buffers (middle matrix, Cauchy point, subspace step).
    sc: Scratch,
    // Line search.
    xbar: Vec<f64>,
    dir: Vec<f64>,
    t_bound: Vec<f64>,
    xt: Vec<f64>,
    gt: Vec<f64>,
    xlo: Vec<f64>,
    glo: Vec<f64>,
}

impl<'b> Solver<'b> {
    /// A solver with no pairs; its scratch buffers come from a [`Scratch`] lent for each
    /// model step ([`Solver::with_scratch`]).
    fn new(n: usize, m: usize, lower: &'b [f64], upper: &'b [f64]) -> Self {
        Solver {
            n,
            m,
            lower,
            upper,
            s: vec![0.0; m * n],
            y: vec![0.0; m * n],
            head: 0,
            k: 0,
            theta: 1.0,
            sty: vec![0.0; m * m],
            sts: vec![0.0; m * m],
            sc: Scratch::default(),
            xbar: vec![0.0; n],
            dir: vec![0.0; n],
            t_bound: vec![0.0; n],
            xt: vec![0.0; n],
            gt: vec![0.0; n],
            xlo: vec![0.0; n],
            glo: vec![0.0; n],
        }
    }

    /// Runs `step` with the buffers of `scratch` in place of this solver's empty `sc`, and
    /// gives them back. Moves no data, only the buffers' handles; the methods using scratch
    /// buffers rewrite every entry they read, so whatever another search left there does
    /// not matter.
    fn with_scratch<R>(
        &mut self,
        scratch: &RefCell<Scratch>,
        step: impl FnOnce(&mut Self) -> R,
    ) -> R {
        let mut sc = scratch.borrow_mut();
        std::mem::swap(&mut self.sc, &mut sc);
        let r = step(self);
        std::mem::swap(&mut self.sc, &mut sc);
        r
    }

    /// The search from `x0`, evaluating the objective through `slot` (see [`evaluate`]).
    ///
    /// One function because it is the iteration of Byrd et al. (1995) in the paper's order —
    /// projected-gradient test, Cauchy point, subspace step, line search, correction-pair
    /// update — closed by SciPy's relative-reduction test. A stage that fails resets the
    /// memory and `continue`s or `break`s this loop; split into pieces, those exits would
    /// become flags handed back to it.
    async fn run(
        mut self,
        slot: &RefCell<Slot>,
        scratch: &RefCell<Scratch>,
        x0: &[f64],
        opts: &LbfgsbOptions,
    ) -> Minimum {
        let n = self.n;
        let mut x: Vec<f64> = x0
            .iter()
            .enumerate()
            .map(|(i, &v)| v.clamp(self.lower[i], self.upper[i]))
            .collect();
        let mut g = vec![0.0; n];
        let mut fx = evaluate(slot, &mut x, &mut g).await;
        let mut evaluations = 1;
        let mut iterations = 0;
        if !fx.is_finite() || g.iter().any(|v| !v.is_finite()) {
            return Minimum {
                x,
                value: fx,
                iterations,
                evaluations,
                converged: false,
            };
        }
        let mut converged = false;
        loop {
            if self.projected_gradient_norm(&x, &g) <= opts.tolerances.pgtol {
                converged = true;
                break;
            }
            if iterations >= opts.max_iters {
                break;
            }
            let stepped = self.with_scratch(scratch, |s| {
                if s.k > 0 && !s.form_middle_matrix() {
                    return false;
                }
                s.cauchy_point(&x, &g);
                s.subspace_step(&x, &g);
                true
            });
            if !stepped {
                self.reset();
                continue;
            }
            let mut dphi0 = 0.0;
            let mut dnorm2 = 0.0;
            for i in 0..n {
                let d = self.xbar[i] - x[i];
                self.dir[i] = d;
                dphi0 += g[i] * d;
                dnorm2 += d * d;
            }
            if dphi0.is_nan() || dphi0 >= 0.0 {
                // No descent from the model: its curvature information is stale.
                if self.k > 0 {
                    self.reset();
                    continue;
                }
                break;
            }
            let t_max = self.max_feasible_step(&x).min(MAX_STEP);
            // Without curvature information the step length has no natural scale; a unit
            // move in x is the conventional first guess (as in L-BFGS-B).
            let t0 = if self.k == 0 {
                (1.0 / dnorm2.sqrt()).min(1.0).min(t_max)
            } else {
                1.0f64.min(t_max)
            };
            let Some((_, f_new)) = self
                .line_search(slot, &x, fx, dphi0, t0, t_max, &mut evaluations)
                .await
            else {
                if self.k > 0 {
                    self.reset();
                    continue;
                }
                break;
            };
            iterations += 1;
            // s = x_new − x and y = g_new − g go to scratch first: a pair that fails the
            // curvature test must not overwrite the oldest stored pair.
            let (mut sy, mut yy) = (0.0, 0.0);
            for i in 0..n {
                let si = self.xlo[i] - x[i];
                let yi = self.glo[i] - g[i];
                self.xt[i] = si;
                self.gt[i] = yi;
                sy += si * yi;
                yy += yi * yi;
            }
            if sy > CURVATURE_EPS * yy && yy > 0.0 {
                let slot = if self.k < self.m {
                    (self.head + self.k) % self.m
                } else {
                    self.head
                };
                self.s[slot * n..(slot + 1) * n].copy_from_slice(&self.xt);
                self.y[slot * n..(slot + 1) * n].copy_from_slice(&self.gt);
                if self.k < self.m {
                    self.k += 1;
                } else {
                    self.head = (self.head + 1) % self.m;
                }
                self.update_products(slot);
                self.theta = yy / sy;
            }
            let f_old = fx;
            x.copy_from_slice(&self.xlo);
            g.copy_from_slice(&self.glo);
            fx = f_new;
            let noise = 16.0 * f64::EPSILON * f_old.abs();
            // Relative-reduction test (SciPy's `factr · ε`); a step whose change is within
            // rounding says nothing about convergence, and `ftol = 0` disables the test.
            if opts.tolerances.ftol > 0.0
                && f_old - fx > -noise
                && f_old - fx <= opts.tolerances.ftol * f_old.abs().max(fx.abs()).max(1.0)
            {
                converged = true;
                break;
            }
        }
        Minimum {
            x,
            value: fx,
            iterations,
            evaluations,
            converged,
        }
    }

    fn reset(&mut self) {
        self.k = 0;
        self.head = 0;
        self.theta = 1.0;
    }

    /// Sup-norm of the projected gradient `P(x − g) − x`.
    fn projected_gradient_norm(&self, x: &[f64], g: &[f64]) -> f64 {
        let mut norm: f64 = 0.0;
        for i in 0..self.n {
            let gi = if g[i] < 0.0 {
                (x[i] - self.upper[i]).max(g[i])
            } else {
                (x[i] - self.lower[i]).min(g[i])
            };
            norm = norm.max(gi.abs());
        }
        norm
    }

    /// The largest `t` with `x + t·dir` inside the box; also records in `t_bound` the step at
    /// which each coordinate reaches its bound.
    fn max_feasible_step(&mut self, x: &[f64]) -> f64 {
        let mut t = f64::INFINITY;
        for i in 0..self.n {
            let d = self.dir[i];
            let ti = if d > 0.0 {
                (self.upper[i] - x[i]) / d
            } else if d < 0.0 {
                (self.lower[i] - x[i]) / d
            } else {
                f64::INFINITY
            };
            self.t_bound[i] = ti;
            t = t.min(ti);
        }
        t.max(0.0)
    }

    /// Records the inner products of the pair just stored in `slot` with every stored pair
    /// (itself included).
    fn update_products(&mut self, slot: usize) {
        let (n, m) = (self.n, self.m);
        let sn = &self.s[slot * n..(slot + 1) * n];
        let yn = &self.y[slot * n..(slot + 1) * n];
        for j in 0..self.k {
            let other = (self.head + j) % m;
            let so = &self.s[other * n..(other + 1) * n];
            let yo = &self.y[other * n..(other + 1) * n];
            let ss = dot(so, sn);
            self.sts[other * m + slot] = ss;
            self.sts[slot * m + other] = ss;
            self.sty[other * m + slot] = dot(so, yn);
            self.sty[slot * m + other] = dot(sn, yo);
        }
    }

    /// Builds `W` and the middle matrix `M = K⁻¹` with `K = [[−D, Lᵀ], [L, θSᵀS]]` (see
    /// [`Middle`]); false when `K` is singular or `M` not finite.
    fn form_middle_matrix(&mut self) -> bool {
        let (k, m) = (self.k, self.m);
        self.sc.order.clear();
        self.sc.order.extend((0..k).map(|j| (self.head + j) % m));
        self.form_w();
        self.sc.mid.k = k;
        if self.form_middle_schur() {
            return true;
        }
        // When the Schur complement is not numerically positive definite, K is inverted by LU.
        self.form_middle_lu() && self.transpose_middle()
    }

    /// `M = K⁻¹` by LU factorisation of `K`; false when `K` is singular.
    fn form_middle_lu(&mut self) -> bool {
        let (k, m) = (self.k, self.m);
        let (kk, m2) = (2 * k, 2 * m);
        for (a, &sa) in self.sc.order.iter().enumerate() {
            for (b, &sb) in self.sc.order.iter().enumerate() {
                // Upper-left −D, lower-left L (strictly lower part of SᵀY), lower-right θSᵀS.
                let sayb = self.sty[sa * m + sb];
                self.sc.kmat[a * kk + b] = if a == b { -sayb } else { 0.0 };
                self.sc.kmat[(k + a) * kk + b] = if a > b { sayb } else { 0.0 };
                self.sc.kmat[b * kk + k + a] = if a > b { sayb } else { 0.0 };
                self.sc.kmat[(k + a) * kk + k + b] = self.theta * self.sts[sa * m + sb];
            }
        }
        if !lu_factor(&mut self.sc.kmat[..kk * kk], kk, &mut self.sc.piv[..kk]) {
            return false;
        }
        for col in 0..kk {
            let e = &mut self.sc.v[..kk];
            e.fill(0.0);
            e[col] = 1.0;
            lu_solve(&self.sc.kmat[..kk * kk], kk, &self.sc.piv[..kk], e);
            for row in 0..kk {
                self.sc.mmat[row * m2 + col] = e[row];
            }
        }
        true
    }

    /// `W = [Y, θS]` and `Wᵀ`: column `j` of `W` (row `j` of `Wᵀ`) holds the `j`-th oldest
    /// pair. Products with `W`'s rows read `W`, those with its columns `Wᵀ`.
    fn form_w(&mut self) {
        let (n, k, m2) = (self.n, self.k, 2 * self.m);
        let theta = self.theta;
        let (wt_y, wt_s) = self.sc.wt.split_at_mut(k * n);
        for (j, &slot) in self.sc.order.iter().enumerate() {
            let ys = &self.y[slot * n..(slot + 1) * n];
            let ss = &self.s[slot * n..(slot + 1) * n];
            let (ty, ts) = (&mut wt_y[j * n..(j + 1) * n], &mut wt_s[j * n..(j + 1) * n]);
            for (((row, (&yi, &si)), ty), ts) in (self.sc.w.chunks_exact_mut(m2))
                .zip(ys.iter().zip(ss))
                .zip(ty)
                .zip(ts)
            {
                let tsi = theta * si;
                row[j] = yi;
                row[k + j] = tsi;
                *ty = yi;
                *ts = tsi;
            }
        }
    }

    /// The factored middle matrix (see [`Middle`]): `L`, `D` and the Cholesky factor `J` of
    /// the Schur complement `Σ = θSᵀS + L D⁻¹ Lᵀ` (positive definite when the pairs are
    /// independent), as L-BFGS-B's own `formt` keeps them. False when the Cholesky factor
    /// fails or an entry is not finite.
    fn form_middle_schur(&mut self) -> bool {
        let k = self.k;
        self.form_schur_complement();
        let mid = &mut self.sc.mid;
        if !cholesky_by_columns(&mut mid.schur[..k * k], k) {
            return false;
        }
        let mut finite = true;
        for c in 0..k {
            mid.inv_d[c] = 1.0 / mid.lmat[c * k + c];
            mid.inv_sqrt_d[c] = 1.0 / mid.lmat[c * k + c].sqrt();
            mid.inv_jd[c] = 1.0 / mid.schur[c * k + c];
            finite &= mid.inv_d[c].is_finite() && mid.inv_jd[c].is_finite();
            let (l_col, j_col) = (
                &mid.lmat[c * k + c..(c + 1) * k],
                &mid.schur[c * k + c..(c + 1) * k],
            );
            finite &= l_col.iter().chain(j_col).all(|v| v.is_finite());
        }
        mid.factored = finite;
        finite
    }

    /// `lmat` and the Schur complement `Σ = θSᵀS + L D⁻¹ Lᵀ` in `schur`, both stored by
    /// columns (`k × k`): `lmat[b·k + a] = s_a·y_b` for `a ≥ b` (the strictly lower `L` of
    /// `SᵀY` and its diagonal `D`), and `schur[b·k + a] = Σ[a][b]` for `a ≥ b`, which is
    /// `θ·s_a·s_b + Σ_{c<b} L[a][c]·L[b][c] / D[c]` in ascending `c`. The entries of a column
    /// of `Σ` take their terms side by side ([`fold_rows`]).
    fn form_schur_complement(&mut self) {
        let (k, m) = (self.k, self.m);
        let theta = self.theta;
        let slot = &self.sc.order;
        let lt = &mut self.sc.mid.lmat[..k * k];
        for b in 0..k {
            for a in b..k {
                lt[b * k + a] = self.sty[slot[a] * m + slot[b]];
            }
        }
        let lt = &self.sc.mid.lmat[..k * k];
        for b in 0..k {
            let col = &mut self.sc.mid.schur[b * k + b..(b + 1) * k];
            for (v, &sa) in col.iter_mut().zip(&slot[b..]) {
                *v = theta * self.sts[sa * m + slot[b]];
            }
            let column_terms = (0..b).map(|c| {
                let lac = &lt[c * k + b..(c + 1) * k];
                ((lt[c * k + b], lt[c * k + c]), lac)
            });
            fold_rows(column_terms, col, |v, (lbc, dc), lac| v + lac * lbc / dc);
        }
    }

    /// `Mᵀ` (from LU) into the middle matrix's `mmat_t`, which [`mat_vec`] reads; false when
    /// `M` is not finite.
    fn transpose_middle(&mut self) -> bool {
        let (kk, m2) = (2 * self.k, 2 * self.m);
        let mut finite = true;
        for (r, row) in self.sc.mmat.chunks_exact(m2).take(kk).enumerate() {
            for (c, &v) in row[..kk].iter().enumerate() {
                finite &= v.is_finite();
                self.sc.mid.mmat_t[c * m2 + r] = v;
            }
        }
        self.sc.mid.factored = false;
        finite
    }

    /// The generalised Cauchy point `xc` and `c = Wᵀ(xc − x)`, the latter held as `F⁻¹c`
    /// (see [`Middle`]), as is the path's `p`: each breakpoint then costs one
    /// [`Middle::half`] of its row of `W` and three inner products of `2k`.
    ///
    /// One function because it transcribes the generalised Cauchy point (Algorithm CP of
    /// Byrd et al. 1995) step by step: the initialisation of `d`, `f'`, `f''` and `p`,
    /// the walk over the breakpoints that fixes one variable at each and updates `c`, `p`,
    /// `f'` and `f''`, then the last segment. Kept in the paper's order it can be checked
    /// against the paper line by line.
    fn cauchy_point(&mut self, x: &[f64], g: &[f64]) {
        let (n, kk, m2) = (self.n, 2 * self.k, 2 * self.m);
        self.sc.breaks.clear();
        let mut f1 = 0.0;
        for i in 0..n {
            let t = if g[i] < 0.0 {
                (x[i] - self.upper[i]) / g[i]
            } else if g[i] > 0.0 {
                (x[i] - self.lower[i]) / g[i]
            } else {
                f64::INFINITY
            };
            self.sc.xc[i] = x[i];
            if t <= 0.0 {
                self.sc.dvec[i] = 0.0;
            } else {
                self.sc.dvec[i] = -g[i];
                f1 -= g[i] * g[i];
                if t.is_finite() {
                    self.sc.breaks.push(Reverse((t.to_bits(), i)));
                }
            }
        }
        self.sc.c[..kk].fill(0.0);
        self.sc.p[..kk].fill(0.0);
        if f1 == 0.0 {
            return;
        }
        let theta = self.theta;
        // f'' = dᵀBd = θ dᵀd − pᵀMp.
        let p_mp = if kk > 0 {
            self.sc.v[..kk].fill(0.0);
            accumulate_rows(&self.sc.w, m2, &self.sc.dvec, &mut self.sc.v[..kk]);
            self.sc.mid.half(&self.sc.v, &mut self.sc.p);
            self.sc.mid.dual(&self.sc.p, &mut self.sc.v);
            dotk(&self.sc.p[..kk], &self.sc.v[..kk])
        } else {
            0.0
        };
        let mut f2 = -theta * f1 - p_mp;
        let f2_org = f2;
        let mut dt_min = if f2 > 0.0 { -f1 / f2 } else { f64::INFINITY };
        // The breakpoints are visited in increasing (t, index) order, ties to the lower
        // index, through a min-heap: the walk usually stops after a few, so sorting all
        // of them would be wasted.
        let mut breaks = BinaryHeap::from(std::mem::take(&mut self.sc.breaks));
        let mut t_old = 0.0;
        while let Some(Reverse((bits, b))) = breaks.pop() {
            let tb = f64::from_bits(bits);
            let dt = tb - t_old;
            if dt_min < dt {
                break;
            }
            // Variable b reaches its bound: fix it there and update the slope and curvature.
            let xb = if self.sc.dvec[b] > 0.0 {
                self.upper[b]
            } else {
                self.lower[b]
            };
            let zb = xb - x[b];
            self.sc.xc[b] = xb;
            let gb = g[b];
            for j in 0..kk {
                self.sc.c[j] += dt * self.sc.p[j];
            }
            let (wb_mc, wb_mp, wb_mwb) = if kk > 0 {
                let wb = &self.sc.w[b * m2..b * m2 + kk];
                self.sc.mid.half(wb, &mut self.sc.v2);
                self.sc.mid.dual(&self.sc.v2, &mut self.sc.mw);
                let ub = &self.sc.v2[..kk];
                dot3(&self.sc.mw[..kk], &self.sc.c[..kk], &self.sc.p[..kk], ub)
            } else {
                (0.0, 0.0, 0.0)
            };
            f1 += dt * f2 + gb * gb + theta * gb * zb - gb * wb_mc;
            f2 -= theta * gb * gb + 2.0 * gb * wb_mp + gb * gb * wb_mwb;
            f2 = f2.max(f64::EPSILON * f2_org);
            for j in 0..kk {
                self.sc.p[j] += gb * self.sc.v2[j];
            }
            self.sc.dvec[b] = 0.0;
            dt_min = if f2 > 0.0 { -f1 / f2 } else { f64::INFINITY };
            t_old = tb;
        }
        self.sc.breaks = breaks.into_vec();
        let dt_min = if dt_min.is_finite() {
            dt_min.max(0.0)
        } else {
            0.0
        };
        let t = t_old + dt_min;
        for i in 0..n {
            if self.sc.dvec[i] != 0.0 {
                self.sc.xc[i] = (x[i] + t * self.sc.dvec[i]).clamp(self.lower[i], self.upper[i]);
            }
        }
        for j in 0..kk {
            self.sc.c[j] += dt_min * self.sc.p[j];
        }
    }

    /// Minimises the model over the variables free at the Cauchy point, writing `xbar`.
    fn subspace_step(&mut self, x: &[f64], g: &[f64]) {
        let (n, kk, m2) = (self.n, 2 * self.k, 2 * self.m);
        let theta = self.theta;
        self.xbar.copy_from_slice(&self.sc.xc);
        self.sc.free.clear();
        for i in 0..n {
            if self.lower[i] < self.sc.xc[i] && self.sc.xc[i] < self.upper[i] {
                self.sc.free.push(i);
            }
        }
        if self.sc.free.is_empty() {
            return;
        }
        // Reduced gradient of the model at xc: r = Zᵀ(g + θ(xc − x) − W M c).
        if kk > 0 {
            self.sc.mid.finish(&self.sc.c, &mut self.sc.v);
            w_times(&self.sc.wt, n, &self.sc.v[..kk], &mut self.sc.wv);
        }
        for &i in &self.sc.free {
            let wmc = if kk > 0 { self.sc.wv[i] } else { 0.0 };
            self.sc.r[i] = g[i] + theta * (self.sc.xc[i] - x[i]) - wmc;
        }
        if kk > 0 && self.sc.free.len() == n {
            // Every variable is free, so the reduced model matrix is B itself and
            // du = −B⁻¹r is the two-loop recursion with H₀ = I/θ (B's compact form starts
            // from θI with the same pairs): O(kn) instead of the O(k³ + k²n) below.
            self.two_loop_solve();
        } else if kk > 0 && self.sc.free.len() <= kk {
            // Few free variables: solving with the reduced matrix ZᵀBZ itself is cheaper
            // than the 2k × 2k system of Sherman–Morrison–Woodbury.
            if !self.reduced_newton_step() {
                // Keep the Cauchy point; the caller's descent test decides what happens next.
                return;
            }
            self.project_subspace_step(x, g);
            return;
        } else if kk > 0 {
            // du = −r/θ − Zᵀ W (I − M WᵀZZᵀW/θ)⁻¹ M WᵀZ r / θ²  (Sherman–Morrison–Woodbury).
            // Only b ≥ a is accumulated (each entry summed over the free variables in order)
            // and the lower triangle is mirrored.
            let (v2, wzzw) = (&mut self.sc.v2[..kk], &mut self.sc.wzzw[..kk * kk]);
            free_gram(&self.sc.w, m2, &self.sc.free, &self.sc.r, v2, wzzw);
            for a in 0..kk {
                for b in 0..a {
                    wzzw[a * kk + b] = wzzw[b * kk + a];
                }
            }
            self.sc.mid.half(&self.sc.v2, &mut self.sc.mw);
            self.sc.mid.finish(&self.sc.mw, &mut self.sc.v);
            self.form_smw_matrix();
            if !lu_factor(&mut self.sc.nmat[..kk * kk], kk, &mut self.sc.piv[..kk]) {
                // Keep the Cauchy point; the caller's descent test decides what happens next.
                return;
            }
            lu_solve(
                &self.sc.nmat[..kk * kk],
                kk,
                &self.sc.piv[..kk],
                &mut self.sc.v[..kk],
            );
        }
        if !(kk > 0 && self.sc.free.len() == n) {
            self.apply_smw_correction();
        }
        self.project_subspace_step(x, g);
    }

    /// `N = I − M·WᵀZZᵀW/θ` into `nmat` (`2k × 2k`), from `wzzw` with both triangles
    /// filled: column `b` is `e_b − M·(WᵀZZᵀW)_b / θ`, one application of `M` each (the
    /// Gram matrix is symmetric, so its column `b` is its row `b`).
    fn form_smw_matrix(&mut self) {
        let kk = 2 * self.k;
        let theta = self.theta;
        for b in 0..kk {
            self.sc
                .mid
                .half(&self.sc.wzzw[b * kk..(b + 1) * kk], &mut self.sc.v2);
            self.sc.mid.finish(&self.sc.v2, &mut self.sc.mw);
            for a in 0..kk {
                let delta = if a == b { 1.0 } else { 0.0 };
                self.sc.nmat[a * kk + b] = delta - self.sc.mw[a] / theta;
            }
        }
    }

    /// `r ← −(ZᵀBZ)⁻¹ r` over the free variables, with the reduced matrix
    /// `ZᵀBZ = θI − ZᵀW M WᵀZ` formed (`n_f × n_f`, `n_f ≤ 2k`) and solved by LU. With
    /// `U = F⁻¹WᵀZ` ([`Middle::half_many`]) its entry `(a, b)` is `θδ_ab − Σ_j U[j][a]·(EU)[j][b]`
    /// in ascending `j` (bitwise symmetric: the products differ only in the order of their
    /// factors). False (and `r` untouched) when it is singular.
    fn reduced_newton_step(&mut self) -> bool {
        let (kk, m2, nf) = (2 * self.k, 2 * self.m, self.sc.free.len());
        let theta = self.theta;
        let u = &mut self.sc.wzzw[..kk * nf];
        for (a, &i) in self.sc.free.iter().enumerate() {
            for (j, &wij) in self.sc.w[i * m2..i * m2 + kk].iter().enumerate() {
                u[j * nf + a] = wij;
            }
        }
        self.sc.mid.half_many(u, nf);
        self.sc.mid.dual_many(&self.sc.wzzw, nf, &mut self.sc.vmat);
        let (u, v) = (&self.sc.wzzw[..kk * nf], &self.sc.vmat[..kk * nf]);
        let red = &mut self.sc.nmat[..nf * nf];
        for (a, row) in red.chunks_exact_mut(nf).enumerate() {
            let terms = (0..kk).map(|j| (u[j * nf + a], &v[j * nf..(j + 1) * nf]));
            combine_rows(terms, 0.0, row, |x, y| x * y);
            for e in row.iter_mut() {
                *e = -*e;
            }
            row[a] += theta;
        }
        for (a, &i) in self.sc.free.iter().enumerate() {
            self.sc.v[a] = self.sc.r[i];
        }
        if !lu_factor(red, nf, &mut self.sc.piv[..nf]) {
            return false;
        }
        lu_solve(red, nf, &self.sc.piv[..nf], &mut self.sc.v[..nf]);
        for (a, &i) in self.sc.free.iter().enumerate() {
            self.sc.r[i] = -self.sc.v[a];
        }
        true
    }

    /// `r ← −r/θ − W v/θ²` over the free variables (the Sherman–Morrison–Woodbury step,
    /// with `v` from [`Solver::subspace_step`]; `v` is unused without pairs).
    fn apply_smw_correction(&mut self) {
        let (n, kk) = (self.n, 2 * self.k);
        let theta = self.theta;
        if kk > 0 {
            w_times(&self.sc.wt, n, &self.sc.v[..kk], &mut self.sc.wv);
        }
        for &i in &self.sc.free {
            let corr = if kk > 0 {
                self.sc.wv[i] / (theta * theta)
            } else {
                0.0
            };
            // r now holds the unconstrained subspace step du.
            self.sc.r[i] = -self.sc.r[i] / theta - corr;
        }
    }

    /// `r ← −H r` by the two-loop recursion over the stored pairs (oldest to newest), where
    /// H is the inverse of the compact matrix B.
    fn two_loop_solve(&mut self) {
        let (n, m, k) = (self.n, self.m, self.k);
        let q = &mut self.sc.r[..n];
        for j in (0..k).rev() {
            let slot = self.sc.order[j];
            let sj = &self.s[slot * n..(slot + 1) * n];
            let yj = &self.y[slot * n..(slot + 1) * n];
            let a = dot(sj, q) / self.sty[slot * m + slot];
            self.sc.two_loop[j] = a;
            for (qi, yi) in q.iter_mut().zip(yj) {
                *qi -= a * yi;
            }
        }
        let inv_theta = 1.0 / self.theta;
        for qi in q.iter_mut() {
            *qi *= inv_theta;
        }
        for j in 0..k {
            let slot = self.sc.order[j];
            let sj = &self.s[slot * n..(slot + 1) * n];
            let yj = &self.y[slot * n..(slot + 1) * n];
            let b = dot(yj, q) / self.sty[slot * m + slot];
            let c = self.sc.two_loop[j] - b;
            for (qi, si) in q.iter_mut().zip(sj) {
                *qi += c * si;
            }
        }
        for qi in q.iter_mut() {
            *qi = -*qi;
        }
    }

    /// Projects the subspace step onto the box (Morales–Nocedal), writing `xbar`.
    fn project_subspace_step(&mut self, x: &[f64], g: &[f64]) {
        let n = self.n;
        // Projected step (Morales–Nocedal); if it is not a descent direction, truncate the
        // step at the first bound instead.
        let mut dphi = 0.0;
        for i in 0..n {
            if self.lower[i] < self.sc.xc[i] && self.sc.xc[i] < self.upper[i] {
                self.xbar[i] = (self.sc.xc[i] + self.sc.r[i]).clamp(self.lower[i], self.upper[i]);
            }
            dphi += g[i] * (self.xbar[i] - x[i]);
        }
        if dphi < 0.0 {
            return;
        }
        let mut alpha: f64 = 1.0;
        for &i in &self.sc.free {
            let du = self.sc.r[i];
            if du > 0.0 {
                alpha = alpha.min((self.upper[i] - self.sc.xc[i]) / du);
            } else if du < 0.0 {
                alpha = alpha.min((self.lower[i] - self.sc.xc[i]) / du);
            }
        }
        let alpha = alpha.max(0.0);
        self.xbar.copy_from_slice(&self.sc.xc);
        for &i in &self.sc.free {
            self.xbar[i] =
                (self.sc.xc[i] + alpha * self.sc.r[i]).clamp(self.lower[i], self.upper[i]);
        }
    }

    /// Strong-Wolfe line search along `dir` from `x`; on success returns `(t, f)` and leaves
    /// the accepted point and its gradient in `xlo` / `glo`.
    ///
    /// One function because its bracketing and zoom phases (Algorithms 3.5 and 3.6 of
    /// Nocedal & Wright 2006) share one loop: each trial point is built, evaluated and tested
    /// against the Wolfe conditions once, and whether `hi` is set yet decides between
    /// extrapolating and interpolating the next one. Written as the book's two functions,
    /// the trial and its tests would be written twice.
    #[allow(clippy::too_many_arguments)]
    async fn line_search(
        &mut self,
        slot: &RefCell<Slot>,
        x: &[f64],
        fx: f64,
        dphi0: f64,
        t_init: f64,
        t_max: f64,
        evaluations: &mut usize,
    ) -> Option<(f64, f64)> {
        #[derive(Clone, Copy)]
        struct Trial {
            t: f64,
            f: f64,
            dphi: f64,
        }
        let n = self.n;
        let mut lo = Trial {
            t: 0.0,
            f: fx,
            dphi: dphi0,
        };
        let mut lo_is_step = false;
        let mut hi: Option<Trial> = None;
        let mut t = t_init;
        for _ in 0..MAX_LINE_EVALS {
            for i in 0..n {
                let d = self.dir[i];
                // A coordinate whose bound is reached lands on it exactly: `x + t·d` can miss
                // it by an ulp, which would leave the variable spuriously free.
                self.xt[i] = if t >= self.t_bound[i] {
                    if d > 0.0 {
                        self.upper[i]
                    } else {
                        self.lower[i]
                    }
                } else {
                    (x[i] + t * d).clamp(self.lower[i], self.upper[i])
                };
            }
            let ft = evaluate(slot, &mut self.xt, &mut self.gt).await;
            *evaluations += 1;
            let dphi = dot(&self.gt[..n], &self.dir[..n]);
            if !ft.is_finite() || !dphi.is_finite() {
                // Treat the failure as "the step was too long".
                hi = Some(Trial {
                    t,
                    f: f64::INFINITY,
                    dphi: f64::NAN,
                });
            } else if ft <= fx + 16.0 * f64::EPSILON * fx.abs()
                && ft >= fx + WOLFE_C1 * t * dphi0
                && WOLFE_C2 * dphi0 <= dphi
                && dphi <= -WOLFE_C2 * dphi0
                && dphi.abs() < 0.5 * dphi0.abs()
            {
                // Approximate Wolfe (Hager & Zhang 2005): near a minimiser the decrease is below
                // the rounding error of f, so Armijo cannot be verified, but a step that
                // halves the directional derivative without raising f beyond rounding is
                // still progress towards a KKT point. Equality counts as unverified: when
                // `c₁·t·φ'(0)` is below half an ulp of f, an unchanged f "passes" Armijo
                // only by rounding, and taking it as a failed step (f ≥ f(lo)) would
                // shrink the bracket around t = 0 until the search gives up.
                std::mem::swap(&mut self.xt, &mut self.xlo);
                std::mem::swap(&mut self.gt, &mut self.glo);
                return Some((t, ft));
            } else if ft > fx + WOLFE_C1 * t * dphi0 || ft >= lo.f {
                hi = Some(Trial { t, f: ft, dphi });
            } else {
                if dphi.abs() <= -WOLFE_C2 * dphi0 {
                    std::mem::swap(&mut self.xt, &mut self.xlo);
                    std::mem::swap(&mut self.gt, &mut self.glo);
                    return Some((t, ft));
                }
                match hi {
                    Some(h) if dphi * (h.t - t) >= 0.0 => hi = Some(lo),
                    None if dphi >= 0.0 => hi = Some(lo),
                    _ => {}
                }
                lo = Trial { t, f: ft, dphi };
                lo_is_step = true;
                std::mem::swap(&mut self.xt, &mut self.xlo);
                std::mem::swap(&mut self.gt, &mut self.glo);
            }
            match hi {
                None => {
                    // Still descending at the longest step tried: extrapolate, or stop at the
                    // boundary of the box.
                    if t >= t_max {
                        return Some((lo.t, lo.f));
                    }
                    t = (4.0 * t).min(t_max);
                }
                Some(h) => {
                    let (a, b) = if lo.t < h.t { (lo.t, h.t) } else { (h.t, lo.t) };
                    let width = b - a;
                    if width <= 1e-15 * b.abs().max(1e-300) {
                        break;
                    }
                    let guess = interpolate(lo.t, lo.f, lo.dphi, h.t, h.f, h.dphi);
                    let guess = if guess.is_finite() {
                        guess
                    } else {
                        0.5 * (a + b)
                    };
                    t = guess.clamp(a + 0.1 * width, b - 0.1 * width);
                }
            }
        }
        if lo_is_step { Some((lo.t, lo.f)) } else { None }
    }
}

/// Minimiser of the cubic (or, failing that, quadratic) interpolant of two line-search points.
fn interpolate(t1: f64, f1: f64, d1: f64, t2: f64, f2: f64, d2: f64) -> f64 {
    if !f2.is_finite() {
        return f64::NAN;
    }
    if d2.is_finite() {
        let e = d1 + d2 - 3.0 * (f1 - f2) / (t1 - t2);
        let disc = e * e - d1 * d2;
        if disc >= 0.0 {
            let sq = disc.sqrt().copysign(t2 - t1);
            let denom = d2 - d1 + 2.0 * sq;
            if denom != 0.0 {
                return t2 - (t2 - t1) * (d2 + sq - e) / denom;
            }
        }
    }
    let dt = t2 - t1;
    let denom = 2.0 * (f2 - f1 - d1 * dt);
    if denom > 0.0 {
        t1 - d1 * dt * dt / denom
    } else {
        f64::NAN
    }
}

/// `out = M · a` for the leading `kk × kk` block of `M`, given `Mᵀ` (row stride `stride`).
/// Entry `r` sums `M[r][j]·a[j]` in ascending `j` from `−0.0`, as [`dotk`] of row `r` with
/// `a` does; reading `M` by columns lets the `kk` sums run side by side.
fn mat_vec(mt: &[f64], stride: usize, kk: usize, a: &[f64], out: &mut [f64]) {
    let terms = a[..kk].iter().copied().zip(mt.chunks_exact(stride));
    combine_rows(terms, -0.0, &mut out[..kk], |aj, mrj| mrj * aj);
}

/// `out = W v` over all `n` rows of `W`, given `Wᵀ` (`wt`, rows of `n`): entry `i` sums
/// `W[i][j]·v[j]` in ascending `j` from `−0.0`, as [`dotk`] of row `i` with `v` does;
/// reading `W` by columns lets the `n` sums run side by side.
fn w_times(wt: &[f64], n: usize, v: &[f64], out: &mut [f64]) {
    let terms = v.iter().copied().zip(wt.chunks_exact(n));
    out.fill(-0.0);
    fold_rows(terms, out, |s, vj, wij| s + wij * vj);
}

fn dotk(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// `(dotk(a, b1), dotk(a, b2), dotk(a, b3))` in one pass: three sums side by side, each in
/// ascending order from `−0.0` as `dotk` takes it.
fn dot3(a: &[f64], b1: &[f64], b2: &[f64], b3: &[f64]) -> (f64, f64, f64) {
    let (mut s1, mut s2, mut s3) = (-0.0, -0.0, -0.0);
    for (((&x, &y1), &y2), &y3) in a.iter().zip(b1).zip(b2).zip(b3) {
        s1 += x * y1;
        s2 += x * y2;
        s3 += x * y3;
    }
    (s1, s2, s3)
}

/// `out[i] = init + prod(x₁, r₁[i]) + prod(x₂, r₂[i]) + …` over the terms `(x_t, r_t)` in
/// order, each sum taken left to right as a plain loop over the terms does.
#[inline]
fn combine_rows<'a>(
    terms: impl Iterator<Item = (f64, &'a [f64])> + Clone,
    init: f64,
    out: &mut [f64],
    prod: impl Fn(f64, f64) -> f64 + Copy,
) {
    out.fill(init);
    fold_rows(terms, out, move |s, x, y| s + prod(x, y));
}

/// In-place Cholesky factor `J` (`Σ = JJᵀ`) of the `k × k` matrix stored by columns in
/// `a` (`a[c·k + i] = Σ[i][c]` for `i ≥ c`, overwritten by `J[i][c]`), column by column:
/// `J[i][j] = (Σ[i][j] − Σ_{c<j} J[i][c]·J[j][c]) / J[j][j]`, subtracted in ascending `c` as
/// the textbook loop does, with the entries of a column taking their terms side by side
/// ([`fold_rows`]). False when a pivot is not positive and finite.
fn cholesky_by_columns(a: &mut [f64], k: usize) -> bool {
    for j in 0..k {
        let (done, rest) = a.split_at_mut(j * k);
        let col = &mut rest[j..k];
        let terms = (0..j).map(|c| (done[c * k + j], &done[c * k + j..(c + 1) * k]));
        fold_rows(terms, col, |v, ljc, lic| v - lic * ljc);
        let d = col[0];
        if !(d.is_finite() && d > 0.0) {
            return false;
        }
        let d = d.sqrt();
        col[0] = d;
        for v in &mut col[1..] {
            *v /= d;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use cabo_core::Rng;

    fn rosenbrock(x: &[f64], g: &mut [f64]) -> f64 {
        let n = x.len();
        g.fill(0.0);
        let mut f = 0.0;
        for i in 0..n - 1 {
            let a = x[i + 1] - x[i] * x[i];
            let b = 1.0 - x[i];
            f += 100.0 * a * a + b * b;
            g[i] += -400.0 * a * x[i] - 2.0 * b;
            g[i + 1] += 200.0 * a;
        }
        f
    }

    fn tight() -> LbfgsbOptions {
        LbfgsbOptions {
            max_iters: 2000,
            memory: 10,
            tolerances: Tolerances {
                pgtol: 1e-12,
                ftol: 0.0,
            },
        }
    }

    #[test]
    fn rosenbrock_unconstrained_to_1e_8() {
        for (x0, n) in [
            (vec![-1.2, 1.0], 2),
            (vec![-1.2; 10], 10),
            (vec![0.5; 30], 30),
        ] {
            let inf = vec![f64::INFINITY; n];
            let ninf = vec![f64::NEG_INFINITY; n];
            let m = minimize(&mut rosenbrock, &x0, &ninf, &inf, &tight());
            for (i, xi) in m.x.iter().enumerate() {
                assert!((xi - 1.0).abs() < 1e-8, "n = {n}: x[{i}] = {xi}, {m:?}");
            }
            assert!(m.value < 1e-16, "{m:?}");
            assert!(m.converged, "{m:?}");
        }
    }

    #[test]
    fn default_options_converge_on_rosenbrock() {
        let m = minimize(
            &mut rosenbrock,
            &[-1.2, 1.0],
            &[f64::NEG_INFINITY; 2],
            &[f64::INFINITY; 2],
            &LbfgsbOptions::default(),
        );
        assert!(m.converged, "{m:?}");
        assert!(
            (m.x[0] - 1.0).abs() < 1e-5 && (m.x[1] - 1.0).abs() < 1e-5,
            "{m:?}"
        );
        assert!(m.iterations < 100, "{m:?}");
    }

    /// Exact solution of a box-constrained convex QP by cyclic coordinate descent (each
    /// coordinate update is the exact 1-D minimiser), an oracle independent of L-BFGS-B.
    fn qp_oracle(a: &[f64], b: &[f64], lo: &[f64], hi: &[f64]) -> Vec<f64> {
        let n = b.len();
        let mut x = vec![0.0; n];
        for i in 0..n {
            x[i] = 0.0f64.clamp(lo[i], hi[i]);
        }
        for _ in 0..20_000 {
            for i in 0..n {
                let mut r = b[i];
                for j in 0..n {
                    if j != i {
                        r -= a[i * n + j] * x[j];
                    }
                }
                x[i] = (r / a[i * n + i]).clamp(lo[i], hi[i]);
            }
        }
        x
    }

    #[test]
    fn bound_constrained_quadratics_meet_exact_kkt() {
        let mut rng = Rng::new(42);
        for trial in 0..20 {
            let n = 2 + trial % 9;
            // A = QᵀQ + 0.1 I is SPD with a spread of curvatures.
            let q: Vec<f64> = (0..n * n).map(|_| rng.normal()).collect();
            let mut a = vec![0.0; n * n];
            for i in 0..n {
                for j in 0..n {
                    a[i * n + j] = (0..n).map(|k| q[k * n + i] * q[k * n + j]).sum::<f64>();
                }
                a[i * n + i] += 0.1;
            }
            // Unconstrained optimum far outside the box, so several bounds are active.
            let b: Vec<f64> = (0..n).map(|_| 10.0 * rng.normal()).collect();
            let lo: Vec<f64> = (0..n).map(|_| -rng.uniform()).collect();
            let hi: Vec<f64> = (0..n).map(|_| rng.uniform()).collect();
            let mut quad = |x: &[f64], g: &mut [f64]| {
                let mut f = 0.0;
                for i in 0..n {
                    let ax: f64 = (0..n).map(|j| a[i * n + j] * x[j]).sum();
                    g[i] = ax - b[i];
                    f += 0.5 * x[i] * ax - b[i] * x[i];
                }
                f
            };
            let x0: Vec<f64> = (0..n).map(|i| 0.5 * (lo[i] + hi[i])).collect();
            let m = minimize(&mut quad, &x0, &lo, &hi, &tight());
            let oracle = qp_oracle(&a, &b, &lo, &hi);
            let mut active = 0;
            let mut g = vec![0.0; n];
            quad(&m.x, &mut g);
            for i in 0..n {
                assert!(
                    (m.x[i] - oracle[i]).abs() < 1e-8,
                    "trial {trial}: {:?} vs {oracle:?}",
                    m.x
                );
                // KKT: zero gradient inside, gradient pointing out of the box at a bound. The
                // interior tolerance is set by rounding: once the remaining decrease g²/(2λ)
                // drops below ε|f| ≈ 5e-15, no method can tell points apart by value.
                if m.x[i] == lo[i] {
                    active += 1;
                    assert!(
                        g[i] >= -1e-7,
                        "trial {trial}: at lower bound with g = {}",
                        g[i]
                    );
                } else if m.x[i] == hi[i] {
                    active += 1;
                    assert!(
                        g[i] <= 1e-7,
                        "trial {trial}: at upper bound with g = {}",
                        g[i]
                    );
                } else {
                    assert!(g[i].abs() < 1e-7, "trial {trial}: free with g = {}", g[i]);
                }
            }
            assert!(active > 0, "trial {trial}: the test needs active bounds");
        }
    }

    /// `f = 10³ + 0.3x²` from `x = 10⁻⁷`: every value near the start rounds to 10³, so no
    /// step can show a decrease, but the gradient (`0.6x`) is exact. The search must still
    /// follow it to the minimiser 0 (closed form) instead of failing its line searches.
    #[test]
    fn flat_values_still_accept_steps_that_reduce_the_slope() {
        let mut f = |x: &[f64], g: &mut [f64]| {
            g[0] = 0.6 * x[0];
            1e3 + 0.3 * x[0] * x[0]
        };
        let m = minimize(&mut f, &[1e-7], &[-1.0], &[1.0], &tight());
        assert!(m.converged, "{m:?}");
        assert!(m.x[0].abs() <= 1e-12 / 0.6, "{m:?}");
        assert_eq!(m.value, 1e3);
    }

    /// Many random boxes (some sides infinite, some coordinates fixed), starts and smooth or
    /// awkward objectives: no evaluation may leave the box, and the result is a KKT point.
    #[test]
    fn never_evaluates_outside_the_box() {
        let mut rng = Rng::new(7);
        let mut total_evals = 0;
        for trial in 0..300 {
            let n = 1 + (rng.below(8) as usize);
            let mut lo = vec![0.0; n];
            let mut hi = vec![0.0; n];
            for i in 0..n {
                let a = 4.0 * rng.normal();
                let w = 3.0 * rng.uniform();
                lo[i] = a;
                hi[i] = match rng.below(10) {
                    0 => a,
                    1 => f64::INFINITY,
                    _ => a + w,
                };
                if rng.below(10) == 0 {
                    lo[i] = f64::NEG_INFINITY;
                }
            }
            let x0: Vec<f64> = (0..n).map(|_| 5.0 * rng.normal()).collect();
            let centre: Vec<f64> = (0..n).map(|_| 3.0 * rng.normal()).collect();
            let kind = trial % 3;
            let mut evaluated: Vec<Vec<f64>> = Vec::new();
            let mut f = |x: &[f64], g: &mut [f64]| {
                evaluated.push(x.to_vec());
                let mut v = 0.0;
                for i in 0..n {
                    let t = x[i] - centre[i];
                    match kind {
                        // Smooth convex.
                        0 => {
                            v += (i + 1) as f64 * t * t;
                            g[i] = 2.0 * (i + 1) as f64 * t;
                        }
                        // Multimodal.
                        1 => {
                            v += t * t - 3.0 * (2.0 * t).cos();
                            g[i] = 2.0 * t + 6.0 * (2.0 * t).sin();
                        }
                        // Unbounded below along some directions (pushes to the bounds).
                        _ => {
                            v += -t.abs().powi(3) / 3.0 + t;
                            g[i] = -t * t.abs() + 1.0;
                        }
                    }
                }
                v
            };
            let m = minimize(&mut f, &x0, &lo, &hi, &LbfgsbOptions::default());
            total_evals += evaluated.len();
            assert_eq!(evaluated.len(), m.evaluations);
            for x in &evaluated {
                for i in 0..n {
                    assert!(
                        lo[i] <= x[i] && x[i] <= hi[i],
                        "trial {trial}: x[{i}] = {} outside [{}, {}]",
                        x[i],
                        lo[i],
                        hi[i]
                    );
                }
            }
            for i in 0..n {
                if lo[i] == hi[i] {
                    assert_eq!(m.x[i], lo[i], "fixed coordinate moved");
                }
            }
        }
        assert!(total_evals > 3000, "{total_evals}");
    }

    #[test]
    fn non_finite_values_shrink_the_step() {
        // x² − 4x has its minimum at 2, but the function is +∞ beyond 1: the best reachable
        // point is just below 1, and L-BFGS-B must get there without ever returning ∞.
        let mut calls_inf = 0;
        let mut f = |x: &[f64], g: &mut [f64]| {
            if x[0] > 1.0 {
                calls_inf += 1;
                g[0] = f64::NAN;
                return f64::INFINITY;
            }
            g[0] = 2.0 * x[0] - 4.0;
            x[0] * x[0] - 4.0 * x[0]
        };
        let m = minimize(
            &mut f,
            &[-5.0],
            &[-10.0],
            &[10.0],
            &LbfgsbOptions::default(),
        );
        assert!(m.value.is_finite(), "{m:?}");
        assert!(m.x[0] <= 1.0 && m.x[0] > 0.99, "{m:?}");
        assert!(calls_inf > 0, "the test should hit the non-finite region");
    }

    #[test]
    fn non_finite_start_and_bad_input() {
        let mut f = |_: &[f64], g: &mut [f64]| {
            g.fill(0.0);
            f64::NAN
        };
        let m = minimize(&mut f, &[0.5], &[0.0], &[1.0], &LbfgsbOptions::default());
        assert!(!m.converged && m.evaluations == 1 && m.value.is_nan());

        let mut q = |x: &[f64], g: &mut [f64]| {
            g[0] = 2.0 * x[0];
            x[0] * x[0]
        };
        let opts = LbfgsbOptions::default();
        let e = try_minimize(&mut q, &[0.5], &[0.0, 0.0], &[1.0], &opts).unwrap_err();
        assert!(e.to_string().contains("bounds"), "{e}");
        let e = try_minimize(&mut q, &[0.5], &[1.0], &[0.0], &opts).unwrap_err();
        assert!(e.to_string().contains("lower ≤ upper"), "{e}");
        assert!(try_minimize(&mut q, &[f64::NAN], &[0.0], &[1.0], &opts).is_err());
        assert!(try_minimize(&mut q, &[0.5], &[f64::NAN], &[1.0], &opts).is_err());
        let bad = LbfgsbOptions { memory: 0, ..opts };
        assert!(try_minimize(&mut q, &[0.5], &[0.0], &[1.0], &bad).is_err());
        let m = minimize(&mut q, &[0.5], &[1.0], &[0.0], &opts);
        assert!(m.value.is_nan() && !m.converged && m.evaluations == 0);
        // A start outside the box is projected onto it.
        let m = minimize(&mut q, &[5.0], &[1.0], &[2.0], &opts);
        assert_eq!(m.x, vec![1.0]);
        assert!(m.converged);
    }

    #[test]
    fn deterministic() {
        let run = || {
            minimize(
                &mut rosenbrock,
                &[-1.2, 1.0, 0.3],
                &[-2.0, -0.5, 0.0],
                &[0.8, 2.0, 3.0],
                &LbfgsbOptions::default(),
            )
        };
        assert_eq!(run(), run());
    }

    #[test]
    fn bounded_rosenbrock_stops_on_the_bound() {
        // With x₀ ≤ 0.5 the constrained minimiser is (0.5, 0.25).
        let m = minimize(
            &mut rosenbrock,
            &[-1.2, 1.0],
            &[-2.0, -2.0],
            &[0.5, 2.0],
            &tight(),
        );
        assert_eq!(m.x[0], 0.5);
        assert!((m.x[1] - 0.25).abs() < 1e-10, "{m:?}");
    }

    /// The factored middle matrix against `K⁻¹` by LU (an independent route to the same
    /// matrix): `finish(half(v)) = M v` and `dual(half(a))·half(b) = aᵀMb` for random pairs
    /// with positive curvature, to 1e-10 of M's largest entry.
    #[test]
    fn factored_middle_matrix_applies_k_inverse() {
        let mut rng = Rng::new(11);
        let (n, m) = (12, 5);
        let (lo, hi) = (vec![-1.0; n], vec![1.0; n]);
        for k in 1..=m {
            let mut solver = Solver::new(n, m, &lo, &hi);
            solver.sc = Scratch::new(n, m);
            for slot in 0..k {
                for i in 0..n {
                    let si = rng.normal();
                    solver.s[slot * n + i] = si;
                    solver.y[slot * n + i] = 2.0 * si + 0.3 * rng.normal();
                }
                solver.k = slot + 1;
                solver.update_products(slot);
            }
            solver.theta = 1.7;
            assert!(solver.form_middle_matrix() && solver.sc.mid.factored);
            let kk = 2 * k;
            let vs: Vec<Vec<f64>> = (0..kk)
                .map(|_| (0..kk).map(|_| rng.normal()).collect())
                .collect();
            let (mut u, mut z, mut du) = (vec![0.0; kk], vec![0.0; kk], vec![0.0; kk]);
            let mut factored = Vec::new();
            for v in &vs {
                solver.sc.mid.half(v, &mut u);
                solver.sc.mid.finish(&u, &mut z);
                solver.sc.mid.dual(&u, &mut du);
                factored.push((z.clone(), du.clone(), u.clone()));
            }
            assert!(solver.form_middle_lu() && solver.transpose_middle());
            let m2 = 2 * m;
            let mmat = |r: usize, c: usize| solver.sc.mmat[r * m2 + c];
            let scale = (0..kk * kk)
                .map(|e| mmat(e / kk, e % kk).abs())
                .fold(0.0, f64::max);
            for (a, v) in vs.iter().enumerate() {
                for r in 0..kk {
                    let mv: f64 = (0..kk).map(|c| mmat(r, c) * v[c]).sum();
                    assert!((factored[a].0[r] - mv).abs() <= 1e-10 * scale, "k {k}");
                }
                for (b, w) in vs.iter().enumerate() {
                    let amb: f64 = (0..kk)
                        .map(|r| v[r] * (0..kk).map(|c| mmat(r, c) * w[c]).sum::<f64>())
                        .sum();
                    let via_half = dotk(&factored[a].1, &factored[b].2);
                    let size: f64 = v.iter().chain(w).map(|x| x.abs()).sum();
                    assert!(
                        (via_half - amb).abs() <= 1e-10 * scale * size * size,
                        "k {k}"
                    );
                }
            }
        }
    }

    #[test]
    fn memory_one_and_zero_iterations() {
        let opts = LbfgsbOptions {
            memory: 1,
            ..tight()
        };
        let m = minimize(&mut rosenbrock, &[-1.2, 1.0], &[-5.0; 2], &[5.0; 2], &opts);
        assert!(
            (m.x[0] - 1.0).abs() < 1e-8 && (m.x[1] - 1.0).abs() < 1e-8,
            "{m:?}"
        );
        let opts = LbfgsbOptions {
            max_iters: 0,
            ..tight()
        };
        let m = minimize(&mut rosenbrock, &[-1.2, 1.0], &[-5.0; 2], &[5.0; 2], &opts);
        assert_eq!(
            (m.x.clone(), m.iterations, m.evaluations),
            (vec![-1.2, 1.0], 0, 1)
        );
        assert!(!m.converged);
    }

    /// Bitwise equality of two results (NaN values included).
    fn same_minimum(a: &Minimum, b: &Minimum) -> bool {
        let bits = |v: &[f64]| v.iter().map(|t| t.to_bits()).collect::<Vec<_>>();
        bits(&a.x) == bits(&b.x)
            && a.value.to_bits() == b.value.to_bits()
            && (a.iterations, a.evaluations, a.converged)
                == (b.iterations, b.evaluations, b.converged)
    }

    /// Multimodal, +∞ with a NaN gradient where `x₀ > 1.5`, and with a NaN gradient (finite
    /// value) where `x₁ < −1.5`.
    fn awkward(x: &[f64], g: &mut [f64]) -> f64 {
        if x[0] > 1.5 {
            g.fill(f64::NAN);
            return f64::INFINITY;
        }
        let mut v = 0.0;
        for i in 0..x.len() {
            let t = x[i] - 0.3 * i as f64;
            v += t * t - 3.0 * (2.0 * t).cos() + 0.1 * x[i] * x[(i + 1) % x.len()];
            g[i] = 2.0 * t + 6.0 * (2.0 * t).sin();
        }
        for i in 0..x.len() {
            let n = x.len();
            g[i] += 0.1 * x[(i + 1) % n] + 0.1 * x[(i + n - 1) % n];
        }
        if x.len() > 1 && x[1] < -1.5 {
            g[1] = f64::NAN;
        }
        v
    }

    /// Every search of the lockstep driver ends where `minimize` from its start ends, bit for
    /// bit, with the same counts; invalid starts give `minimize`'s invalid result.
    #[test]
    fn lockstep_searches_equal_minimize_from_each_start() {
        let mut rng = Rng::new(3);
        for (n, lo, hi) in [(2, -2.0, 2.0), (5, -3.0, 1.0), (12, -2.0, 3.0)] {
            let lower = vec![lo; n];
            let mut upper = vec![hi; n];
            upper[n - 1] = f64::INFINITY;
            let mut starts: Vec<Vec<f64>> = (0..25)
                .map(|_| {
                    (0..n)
                        .map(|_| lo + (hi - lo + 1.0) * rng.uniform())
                        .collect()
                })
                .collect();
            starts[3][0] = f64::NAN;
            starts[7] = vec![0.5; n + 1];
            for memory in [1, 5] {
                let opts = LbfgsbOptions {
                    max_iters: 60,
                    memory,
                    tolerances: Tolerances::TIGHT,
                };
                let (mut calls, mut points, mut widest) = (0, 0, 0);
                let mut batch = |xs: &[f64], values: &mut [f64], grads: &mut [f64]| {
                    calls += 1;
                    points += values.len();
                    widest = widest.max(values.len());
                    for r in 0..values.len() {
                        values[r] =
                            awkward(&xs[r * n..(r + 1) * n], &mut grads[r * n..(r + 1) * n]);
                    }
                };
                let together = minimize_lockstep(&mut batch, &starts, &lower, &upper, &opts);
                assert_eq!(together.len(), starts.len());
                let mut sequential = 0;
                for (i, x0) in starts.iter().enumerate() {
                    let alone = minimize(&mut awkward, x0, &lower, &upper, &opts);
                    sequential += alone.evaluations;
                    assert!(
                        same_minimum(&together[i], &alone),
                        "n = {n}, start {i}: {:?} vs {alone:?}",
                        together[i]
                    );
                }
                assert_eq!(points, sequential);
                assert!(
                    widest > 1 && calls < points,
                    "{calls} calls, {points} points"
                );
            }
        }
        let mut never = |_: &[f64], _: &mut [f64], _: &mut [f64]| panic!("no search to run");
        let none: [Vec<f64>; 0] = [];
        assert!(
            minimize_lockstep(&mut never, &none, &[0.0], &[1.0], &LbfgsbOptions::default())
                .is_empty()
        );
    }
}
