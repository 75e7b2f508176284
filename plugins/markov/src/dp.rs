//! Algorithm 1: the value array over two-point histories, by Theorem 1's decomposition.
//!
//! For an interval `[x_i, x_{i+d}]` with endpoint levels `(y_L, y_R)` the value is
//! `V = max(R, C)`, `C = max_{0<e<d} Σ_w P(w | y_L, y_R) (V[i, e][y_L, w] + V[i+e, d−e][w, y_R]) − c`:
//! sampling the interior point `x_{i+e}` splits the interval into two independent
//! sub-problems (Theorem 1), whose values are already known because they are shorter. For a
//! translation-invariant prior `V` does not depend on `i` (Proposition 2), so the state is
//! `(y_L, y_R, d)`; otherwise it is `(i, y_L, y_R, d)`.
//!
//! Two exact savings: for a reversible prior (Brownian motion; compound Poisson with its
//! symmetric jumps) `V[y_L, y_R] = V[y_R, y_L]` on the 3-D state, so only `y_R ≥ y_L` is
//! computed (the mirrored split point is `d − e`); and Gaussian cells further than
//! `PHI_CUT = 9` standard deviations from the bridge mean carry exactly zero mass (the
//! neglected `Φ(−9) ≈ 1.1e-19`), so inner products run over the bridge's support only.
//!
//! Cost: `O(m² n³)` multiply-adds for `m` x-points and `n` y-levels (`O(m³ n³)` without
//! invariance). Loops run over `d` (shortest first), then `e`; for each `(d, e)` the rows over
//! `y_L` run in parallel with rayon. Every entry is computed by the same sequence of floating
//! operations whatever the thread count, so results are bit-identical across machines'
//! thread pools.

use crate::grid::Grid;
use crate::prior::{Kernel, KernelKind, PHI_CUT, Prior};
use crate::reward::{Reward, reward_table_at, reward_table_invariant};
use cabo_core::normal::cdf;
use cabo_core::{Error, Result};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// Everything that defines one feasibility-determination problem.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Setup {
    /// The prior on the path.
    pub prior: Prior,
    /// The classification reward.
    pub reward: Reward,
    /// The discretisation.
    pub grid: Grid,
    /// Cost per sample c (≥ 0).
    pub cost: f64,
}

impl Setup {
    /// Rejects bad input with a message naming the field.
    pub fn validate(&self) -> Result<()> {
        self.prior.validate()?;
        self.reward.validate()?;
        self.grid.validate()?;
        if !(self.cost.is_finite() && self.cost >= 0.0) {
            return Err(Error::invalid(format!(
                "`cost` must be a non-negative finite number, got {}",
                self.cost
            )));
        }
        Ok(())
    }
}

/// Options of [`Solution::solve`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SolveOptions {
    /// Also tabulate the one-step lookahead gains (doubles the inner products).
    pub one_step: bool,
    /// Use the 4-D state even for a translation-invariant prior (for cross-checks).
    pub force_full_state: bool,
}

impl Default for SolveOptions {
    fn default() -> Self {
        SolveOptions {
            one_step: true,
            force_full_state: false,
        }
    }
}

/// What solving cost.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SolveStats {
    /// Wall-clock seconds of the whole solve (reward table included).
    pub seconds: f64,
    /// Seconds spent on the reward table alone.
    pub reward_seconds: f64,
    /// Peak bytes of the arrays the solve allocates (tables, kernel shapes, scratch).
    pub peak_bytes: usize,
    /// 3 (translation invariant) or 4.
    pub state_dims: usize,
    /// Probability mass the compound Poisson lattice cuts off (0 for Gaussian priors).
    pub lattice_tail_mass: f64,
}

/// The solved dynamic program: values, rewards and both policies' tables.
#[derive(Debug, Clone)]
pub struct Solution {
    setup: Setup,
    kernel: Kernel,
    full_state: bool,
    n: usize,
    /// `slot_offset[d]`: first slot of intervals of length `d` (4-D state only).
    slot_offset: Vec<usize>,
    v: Vec<f64>,
    r: Vec<f64>,
    cont: Vec<f64>,
    best: Vec<u16>,
    gain1: Vec<f64>,
    best1: Vec<u16>,
    stats: SolveStats,
}

/// `Σ k[w]·(a[w] + b[w])` with four independent accumulators (vectorises; the summation
/// order is fixed, so results do not depend on the caller's thread).
#[inline]
fn dot2(k: &[f64], a: &[f64], b: &[f64]) -> f64 {
    let len = k.len().min(a.len()).min(b.len());
    let (k, a, b) = (&k[..len], &a[..len], &b[..len]);
    let mut acc = [0.0f64; 4];
    let (kc, ac, bc) = (k.chunks_exact(4), a.chunks_exact(4), b.chunks_exact(4));
    let (kr, ar, br) = (kc.remainder(), ac.remainder(), bc.remainder());
    for ((k4, a4), b4) in kc.zip(ac).zip(bc) {
        for l in 0..4 {
            acc[l] += k4[l] * (a4[l] + b4[l]);
        }
    }
    let mut tail = 0.0;
    for ((kv, av), bv) in kr.iter().zip(ar).zip(br) {
        tail += kv * (av + bv);
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3]) + tail
}

/// `(Σ_w p(w)(a_v + b_v), Σ_w p(w)(a_r + b_r))` for the lattice bridge law `p`, computed
/// without writing the row: the unnormalised weights `p_e(w − y_L)·p_{d−e}(y_R − w)` are
/// accumulated with their sum and divided once. `None` when the weights underflow (the
/// caller then uses [`Kernel::row`]'s fallback).
#[inline]
#[allow(clippy::too_many_arguments)]
fn lattice_dot(
    lat: &crate::prior::Lattice,
    n: usize,
    d: usize,
    e: usize,
    il: usize,
    ir: usize,
    a: (&[f64], &[f64]),
    b: (&[f64], &[f64]),
    one_step: bool,
) -> Option<(f64, f64)> {
    let width = 2 * lat.half + 1;
    let pl_start = e * width + lat.half - il;
    let pr_start = (d - e) * width + lat.half - ir;
    let pl = &lat.steps[pl_start..pl_start + n];
    let pr = &lat.steps_rev[pr_start..pr_start + n];
    let (mut z, mut sv, mut sr) = ([0.0f64; 4], [0.0f64; 4], [0.0f64; 4]);
    let chunks = n / 4;
    for c in 0..chunks {
        for l in 0..4 {
            let w = 4 * c + l;
            let p = pl[w] * pr[w];
            z[l] += p;
            sv[l] += p * (a.0[w] + b.0[w]);
            if one_step {
                sr[l] += p * (a.1[w] + b.1[w]);
            }
        }
    }
    let (mut zt, mut svt, mut srt) = (0.0, 0.0, 0.0);
    for w in 4 * chunks..n {
        let p = pl[w] * pr[w];
        zt += p;
        svt += p * (a.0[w] + b.0[w]);
        if one_step {
            srt += p * (a.1[w] + b.1[w]);
        }
    }
    let total = |v: [f64; 4], t: f64| (v[0] + v[1]) + (v[2] + v[3]) + t;
    let zz = total(z, zt);
    if !(zz > 0.0 && zz.is_finite()) {
        return None;
    }
    Some((total(sv, svt) / zz, total(sr, srt) / zz))
}

/// The `d` normal bridge shapes of one `(d, e)` for Brownian motion: cell masses, lower and
/// upper tails at every offset `k = w − ⌊mean⌋ ∈ −(n−1)..=(n−1)`, for each fractional offset
/// `f/d` of the mean. Values are bit-identical to [`Kernel::row`].
struct Shapes {
    width: usize,
    /// Per shape: first and last offset index with non-zero cell mass.
    first: Vec<i64>,
    last: Vec<i64>,
    mass: Vec<f64>,
    lower: Vec<f64>,
    upper: Vec<f64>,
}

impl Shapes {
    fn build(kernel: &Kernel, scale: f64, d: usize, e: usize, out: &mut Shapes) {
        let n = kernel.grid.y_levels;
        let width = 2 * n - 1;
        out.width = width;
        for buf in [&mut out.mass, &mut out.lower, &mut out.upper] {
            buf.clear();
            buf.resize(d * width, 0.0);
        }
        // The ratio Δ/s of this (d, e); the mean offsets are f/d.
        let pos0 = kernel.gauss_pos(scale, 1.0, 0, d, e, 0, 0);
        let ratio = pos0.ratio;
        let chunks = out
            .mass
            .par_chunks_mut(width)
            .zip(out.lower.par_chunks_mut(width))
            .zip(out.upper.par_chunks_mut(width));
        chunks.enumerate().for_each_init(
            || (vec![0.0; width + 1], vec![0.0; width + 1]),
            |(lower_cdf, upper_cdf), (f, ((ms, lo_t), up_t))| {
                let o = f as f64 / d as f64;
                // Φ(z) and Φ(−z) at every cell boundary b (between offsets b−1 and b): two
                // erfc per boundary instead of four per cell. The z values and the cut-off
                // are exactly those of `gauss_cell`, so masses are bit-identical.
                for b in 0..=width {
                    let z = (b as i64 - (n as i64 - 1)) as f64 - 0.5 - o;
                    let z = z * ratio;
                    if z < -PHI_CUT {
                        lower_cdf[b] = 0.0;
                        upper_cdf[b] = 1.0;
                    } else if z > PHI_CUT {
                        lower_cdf[b] = 1.0;
                        upper_cdf[b] = 0.0;
                    } else {
                        lower_cdf[b] = cdf(z);
                        upper_cdf[b] = cdf(-z);
                    }
                }
                for idx in 0..width {
                    let k = idx as i64 - (n as i64 - 1);
                    let lo = (k as f64 - 0.5 - o) * ratio;
                    let hi = (k as f64 + 0.5 - o) * ratio;
                    ms[idx] = if hi <= 0.0 {
                        lower_cdf[idx + 1] - lower_cdf[idx]
                    } else if lo >= 0.0 {
                        upper_cdf[idx] - upper_cdf[idx + 1]
                    } else {
                        1.0 - lower_cdf[idx] - upper_cdf[idx + 1]
                    };
                    lo_t[idx] = lower_cdf[idx + 1];
                    up_t[idx] = upper_cdf[idx];
                }
            },
        );
        out.first.clear();
        out.last.clear();
        for ms in out.mass.chunks(width) {
            let first = ms.iter().position(|&p| p != 0.0).unwrap_or(width);
            let last = ms.iter().rposition(|&p| p != 0.0).unwrap_or(0);
            out.first.push(first as i64);
            out.last.push(last as i64);
        }
    }

    /// `(first interior level w₀, masses of levels w₀.., mass of level 0, mass of level n−1)`:
    /// the interior slice is cut to the cells with non-zero mass, so short intervals cost
    /// only the width of their bridge.
    #[inline]
    fn row(&self, n: usize, fl: i64, f: usize) -> (usize, &[f64], f64, f64) {
        let shift = n as i64 - 1 - fl;
        let base = f * self.width + shift as usize;
        // Interior levels 1..=n−2 intersected with the support [first, last] of shape f.
        let w0 = (self.first[f] - shift).max(1);
        let w1 = (self.last[f] - shift).min(n as i64 - 2);
        let mid: &[f64] = if w1 >= w0 {
            &self.mass[base + w0 as usize..base + w1 as usize + 1]
        } else {
            &[]
        };
        (
            w0.max(1) as usize,
            mid,
            self.lower[base],
            self.upper[base + n - 1],
        )
    }
}

/// Per-entry running maxima over the split point e.
#[derive(Clone, Copy)]
struct Acc {
    cont: f64,
    best: u16,
    gain: f64,
    best1: u16,
}

impl Acc {
    /// No split point seen yet.
    const EMPTY: Acc = Acc {
        cont: f64::NEG_INFINITY,
        best: 0,
        gain: f64::NEG_INFINITY,
        best1: 0,
    };
}

/// Where each interval's tables live: one slot per interval length (3-D state, for a
/// translation-invariant prior) or per (left end, length) (4-D state).
struct Layout {
    n: usize,
    full_state: bool,
    /// `slot_offset[d]`: the first slot of length `d`; `slot_offset[m]` slots in all.
    slot_offset: Vec<usize>,
}

impl Layout {
    fn new(m: usize, n: usize, full_state: bool) -> Self {
        let mut slot_offset = vec![0usize; m + 1];
        for d in 0..m {
            let count = if full_state { m - d } else { 1 };
            slot_offset[d + 1] = slot_offset[d] + count;
        }
        Layout {
            n,
            full_state,
            slot_offset,
        }
    }

    fn slots(&self) -> usize {
        *self.slot_offset.last().expect("at least one x level")
    }

    /// The slot of the interval of length `d` starting at x-index `i`.
    fn slot(&self, i: usize, d: usize) -> usize {
        if self.full_state {
            self.slot_offset[d] + i
        } else {
            d
        }
    }
}

/// Peak memory before the induction: the solution's tables (`entries` values each), the
/// kernel's own tables and the reward quadrature's per-thread scratch (lattice: increment
/// laws and prefix sums at every node).
fn peak_bytes(kernel: &Kernel, setup: &Setup, entries: usize, one_step: bool) -> usize {
    let tables_f64 = if one_step { 6 } else { 5 };
    let mut peak = entries * (tables_f64 * 8 + 2 * 2) + kernel.heap_bytes();
    if let KernelKind::Lattice(lat) = &kernel.kind {
        let q = crate::reward::lattice_nodes(lat, setup.grid.length);
        peak += rayon::current_num_threads() * 4 * q * (2 * lat.half + 1) * 8;
    }
    peak
}

/// The reward of stopping, `R`, of every slot (zero for length 0).
fn reward_tables(kernel: &Kernel, setup: &Setup, layout: &Layout) -> Vec<f64> {
    let nn = layout.n * layout.n;
    if !layout.full_state {
        return reward_table_invariant(kernel, &setup.reward);
    }
    let m = layout.slot_offset.len() - 1;
    let mut r = vec![0.0; layout.slots() * nn];
    let mut jobs: Vec<(usize, usize)> = Vec::new();
    for d in 1..m {
        for i in 0..m - d {
            jobs.push((i, d));
        }
    }
    let slabs: Vec<(usize, Vec<f64>)> = jobs
        .par_iter()
        .map(|&(i, d)| {
            let mut slab = vec![0.0; nn];
            reward_table_at(kernel, &setup.reward, i, d, &mut slab);
            (layout.slot(i, d), slab)
        })
        .collect();
    for (s, slab) in slabs {
        r[s * nn..(s + 1) * nn].copy_from_slice(&slab);
    }
    r
}

/// The tables the induction fills, slot by slot.
struct Tables {
    /// `V = max(R, C)`.
    v: Vec<f64>,
    /// `V` transposed within each slot, for contiguous inner products over `y_R`.
    vt: Vec<f64>,
    /// The continuation value `C` (best split minus the cost).
    cont: Vec<f64>,
    /// The best split point (0: none).
    best: Vec<u16>,
    /// The one-step lookahead's gain over stopping (with `one_step` only).
    gain1: Vec<f64>,
    /// The one-step lookahead's split point.
    best1: Vec<u16>,
    one_step: bool,
}

impl Tables {
    fn new(entries: usize, one_step: bool) -> Self {
        Tables {
            v: vec![0.0; entries],
            vt: vec![0.0; entries],
            cont: vec![f64::NEG_INFINITY; entries],
            best: vec![0u16; entries],
            gain1: if one_step {
                vec![f64::NEG_INFINITY; entries]
            } else {
                Vec::new()
            },
            best1: vec![0u16; entries],
            one_step,
        }
    }

    /// Stores the slot at `base` of length `d` from its rewards and the accumulated splits:
    /// `V = max(R, C)`.
    fn store(&mut self, base: usize, d: usize, r: &[f64], acc: &[Acc]) {
        for (idx, a) in acc.iter().enumerate() {
            let rv = r[base + idx];
            let (cv, bv) = if d >= 2 {
                (a.cont, a.best)
            } else {
                (f64::NEG_INFINITY, 0)
            };
            self.cont[base + idx] = cv;
            self.best[base + idx] = bv;
            self.v[base + idx] = if cv > rv { cv } else { rv };
            if self.one_step {
                self.gain1[base + idx] = if d >= 2 {
                    a.gain - rv
                } else {
                    f64::NEG_INFINITY
                };
                self.best1[base + idx] = if d >= 2 { a.best1 } else { 0 };
            }
        }
    }

    /// Fills the entries below the diagonal (`y_L > y_R`) of the slot at `base` from those
    /// above: reversal maps (y_L, y_R, e) to (y_R, y_L, d − e), same value and
    /// continuation, mirrored split point.
    fn mirror(&mut self, base: usize, n: usize, d: usize) {
        let flip = |e: u16| if e == 0 { 0 } else { d as u16 - e };
        for il in 0..n {
            for ir in 0..il {
                let (dst, src) = (base + il * n + ir, base + ir * n + il);
                self.v[dst] = self.v[src];
                self.cont[dst] = self.cont[src];
                self.best[dst] = flip(self.best[src]);
                if self.one_step {
                    self.gain1[dst] = self.gain1[src];
                    self.best1[dst] = flip(self.best1[src]);
                }
            }
        }
    }

    /// Copies the slot at `base` transposed into `vt`.
    fn transpose_into_vt(&mut self, base: usize, n: usize) {
        for il in 0..n {
            for ir in 0..n {
                self.vt[base + ir * n + il] = self.v[base + il * n + ir];
            }
        }
    }
}

/// The induction's working state: the best split of every entry of the slot in hand, and
/// the Brownian bridge shapes reused between split points.
struct Induction<'a> {
    kernel: &'a Kernel,
    layout: &'a Layout,
    cost: f64,
    one_step: bool,
    /// A reversible prior on a 3-D state: only `y_R ≥ y_L` is computed, the rest mirrored.
    mirror: bool,
    /// Brownian motion on a 3-D state: rows come from precomputed bridge shapes.
    gauss_scale: Option<f64>,
    shapes: Shapes,
    shape_bytes: usize,
    acc: Vec<Acc>,
}

impl<'a> Induction<'a> {
    fn new(kernel: &'a Kernel, layout: &'a Layout, cost: f64, one_step: bool) -> Self {
        let full_state = layout.full_state;
        let gauss_scale = match (&kernel.kind, full_state) {
            (KernelKind::Gauss { scale, exponent }, false) if *exponent == 1.0 => Some(*scale),
            _ => None,
        };
        Induction {
            kernel,
            layout,
            cost,
            one_step,
            mirror: !full_state && kernel.reversible,
            gauss_scale,
            shapes: Shapes {
                width: 0,
                first: Vec::new(),
                last: Vec::new(),
                mass: Vec::new(),
                lower: Vec::new(),
                upper: Vec::new(),
            },
            shape_bytes: 0,
            acc: vec![Acc::EMPTY; layout.n * layout.n],
        }
    }

    /// The best split point of every entry of the interval of length `d ≥ 2` at x-index `i`
    /// (and the one-step lookahead's), into `self.acc`.
    fn continuations(&mut self, i: usize, d: usize, (r, rt): (&[f64], &[f64]), t: &Tables) {
        let n = self.layout.n;
        let nn = n * n;
        self.acc.iter_mut().for_each(|a| *a = Acc::EMPTY);
        // Split points in pairs (e, d−e): their bridge shapes coincide (same
        // variance, same set of fractional offsets), so each pair builds once.
        let mut order = Vec::with_capacity(d);
        for e1 in 1..=d / 2 {
            order.push((e1, true));
            if d - e1 != e1 {
                order.push((d - e1, false));
            }
        }
        for (e, rebuild) in order {
            let (sl, sr) = (self.layout.slot(i, e), self.layout.slot(i + e, d - e));
            if let (Some(scale), true) = (self.gauss_scale, rebuild) {
                Shapes::build(self.kernel, scale, d, e, &mut self.shapes);
                self.shape_bytes = self.shape_bytes.max(3 * self.shapes.mass.len() * 8);
            }
            let left = (&t.v[sl * nn..(sl + 1) * nn], &r[sl * nn..(sl + 1) * nn]);
            let right = (&t.vt[sr * nn..(sr + 1) * nn], &rt[sr * nn..(sr + 1) * nn]);
            self.split_at(i, d, e, left, right);
        }
    }

    /// Folds split point `e` of the interval `(i, d)` into every entry's running maxima;
    /// `left` and `right` are the (value, reward) tables of the two halves, the right one
    /// transposed.
    fn split_at(
        &mut self,
        i: usize,
        d: usize,
        e: usize,
        (vl, rl): (&[f64], &[f64]),
        (vr, rr): (&[f64], &[f64]),
    ) {
        let n = self.layout.n;
        let shapes_ref = &self.shapes;
        let lattice = match &self.kernel.kind {
            KernelKind::Lattice(lat) => Some(lat),
            KernelKind::Gauss { .. } => None,
        };
        let kernel_ref = self.kernel;
        let (one_step, mirror, gauss_scale, c) =
            (self.one_step, self.mirror, self.gauss_scale, self.cost);
        self.acc.par_chunks_mut(n).enumerate().for_each_init(
            || vec![0.0; n],
            |buf, (il, row_acc)| {
                let a_v = &vl[il * n..(il + 1) * n];
                let a_r = &rl[il * n..(il + 1) * n];
                // With a reversible prior only y_R ≥ y_L is computed;
                // the rest is mirrored below.
                let first = if mirror { il } else { 0 };
                for (ir, slot_acc) in row_acc.iter_mut().enumerate().skip(first) {
                    let b_v = &vr[ir * n..(ir + 1) * n];
                    let b_r = &rr[ir * n..(ir + 1) * n];
                    let (ev, er) = if gauss_scale.is_some() {
                        let r_ = (il * (d - e) + ir * e) as i64;
                        let (fl, f) = (r_ / d as i64, (r_ % d as i64) as usize);
                        let (w0, mid, lo, hi) = shapes_ref.row(n, fl, f);
                        let span = w0..w0 + mid.len();
                        let ev = lo * (a_v[0] + b_v[0])
                            + hi * (a_v[n - 1] + b_v[n - 1])
                            + dot2(mid, &a_v[span.clone()], &b_v[span.clone()]);
                        let er = if one_step {
                            lo * (a_r[0] + b_r[0])
                                + hi * (a_r[n - 1] + b_r[n - 1])
                                + dot2(mid, &a_r[span.clone()], &b_r[span])
                        } else {
                            0.0
                        };
                        (ev, er)
                    } else if let Some(pair) = lattice.and_then(|lat| {
                        lattice_dot(lat, n, d, e, il, ir, (a_v, a_r), (b_v, b_r), one_step)
                    }) {
                        pair
                    } else {
                        kernel_ref.row(i, d, e, il, ir, buf);
                        let ev = dot2(buf, a_v, b_v);
                        let er = if one_step { dot2(buf, a_r, b_r) } else { 0.0 };
                        (ev, er)
                    };
                    // Ties go to the leftmost split point, whatever the
                    // order the split points were visited in.
                    let cv = ev - c;
                    let e16 = e as u16;
                    if cv > slot_acc.cont || (cv == slot_acc.cont && e16 < slot_acc.best) {
                        slot_acc.cont = cv;
                        slot_acc.best = e16;
                    }
                    if one_step
                        && (er > slot_acc.gain || (er == slot_acc.gain && e16 < slot_acc.best1))
                    {
                        slot_acc.gain = er;
                        slot_acc.best1 = e16;
                    }
                }
            },
        );
    }
}

impl Solution {
    /// Runs Algorithm 1 for `setup`.
    pub fn solve(setup: &Setup, opts: &SolveOptions) -> Result<Solution> {
        setup.validate()?;
        let started = Instant::now();
        let kernel = Kernel::new(&setup.prior, &setup.grid)?;
        let (m, n) = (setup.grid.x_levels, setup.grid.y_levels);
        let full_state = opts.force_full_state || !kernel.translation_invariant();
        let layout = Layout::new(m, n, full_state);
        let slots = layout.slots();
        let nn = n * n;
        let mut peak = peak_bytes(&kernel, setup, slots * nn, opts.one_step);

        let reward_started = Instant::now();
        let r = reward_tables(&kernel, setup, &layout);
        let reward_seconds = reward_started.elapsed().as_secs_f64();
        let rt = transpose_all(&r, n);

        let mut tables = Tables::new(slots * nn, opts.one_step);
        let mut induction = Induction::new(&kernel, &layout, setup.cost, opts.one_step);
        peak += nn * std::mem::size_of::<Acc>();
        peak += rayon::current_num_threads() * n * 8;
        // Backward induction over interval lengths: every slot of length d needs only
        // slots of shorter lengths.
        for d in 1..m {
            let i_range = if full_state { 0..m - d } else { 0..1 };
            for i in i_range {
                if d >= 2 {
                    induction.continuations(i, d, (&r, &rt), &tables);
                }
                let base = layout.slot(i, d) * nn;
                tables.store(base, d, &r, &induction.acc);
                if induction.mirror && d >= 2 {
                    tables.mirror(base, n, d);
                }
                tables.transpose_into_vt(base, n);
            }
        }
        peak += induction.shape_bytes;
        let stats = SolveStats {
            seconds: started.elapsed().as_secs_f64(),
            reward_seconds,
            peak_bytes: peak,
            state_dims: if full_state { 4 } else { 3 },
            lattice_tail_mass: kernel.lattice_tail_mass(),
        };
        let Tables {
            v,
            cont,
            best,
            gain1,
            best1,
            ..
        } = tables;
        Ok(Solution {
            setup: setup.clone(),
            kernel,
            full_state,
            n,
            slot_offset: layout.slot_offset,
            v,
            r,
            cont,
            best,
            gain1,
            best1,
            stats,
        })
    }

    fn index(&self, i: usize, j: usize, il: usize, ir: usize) -> usize {
        debug_assert!(i < j && j < self.setup.grid.x_levels);
        let d = j - i;
        let s = if self.full_state {
            self.slot_offset[d] + i
        } else {
            d
        };
        (s * self.n + il) * self.n + ir
    }

    /// The problem this solves.
    pub fn setup(&self) -> &Setup {
        &self.setup
    }

    /// The discretised prior.
    pub fn kernel(&self) -> &Kernel {
        &self.kernel
    }

    /// Time and memory of the solve.
    pub fn stats(&self) -> &SolveStats {
        &self.stats
    }

    /// `V_{[x_i, x_j]}({(x_i, y_il), (x_j, y_ir)})` for x-indices `i < j`.
    pub fn value(&self, i: usize, j: usize, il: usize, ir: usize) -> f64 {
        self.v[self.index(i, j, il, ir)]
    }

    /// The stopping reward `R_{[x_i, x_j]}` of the same two-point history.
    pub fn reward(&self, i: usize, j: usize, il: usize, ir: usize) -> f64 {
        self.r[self.index(i, j, il, ir)]
    }

    /// `max_x' E[V(H ∪ {x'})] − c` within the interval (−∞ when it has no interior point).
    pub fn continuation(&self, i: usize, j: usize, il: usize, ir: usize) -> f64 {
        self.cont[self.index(i, j, il, ir)]
    }

    /// The x-index the optimal policy samples in the interval, or `None` when it stops there.
    pub fn optimal_sample(&self, i: usize, j: usize, il: usize, ir: usize) -> Option<usize> {
        let k = self.index(i, j, il, ir);
        (self.cont[k] > self.r[k]).then(|| i + self.best[k] as usize)
    }

    /// Largest one-step gain `E[R(H ∪ {x'})] − R(H)` in the interval and its x-index
    /// (`None` when the interval has no interior point or one-step tables were not built).
    pub fn one_step_best(&self, i: usize, j: usize, il: usize, ir: usize) -> Option<(f64, usize)> {
        if self.gain1.is_empty() || j - i < 2 {
            return None;
        }
        let k = self.index(i, j, il, ir);
        Some((self.gain1[k], i + self.best1[k] as usize))
    }

    /// The value of the whole domain `[0, ℓ]` given `Y(0) = y_start`, `Y(ℓ) = y_end`
    /// (both must be grid levels).
    pub fn initial_value(&self, y_start: f64, y_end: f64) -> Result<f64> {
        let g = &self.setup.grid;
        let (a, b) = (g.level_of(y_start)?, g.level_of(y_end)?);
        Ok(self.value(0, g.x_levels - 1, a, b))
    }

    /// Whether the one-step tables were built.
    pub fn has_one_step(&self) -> bool {
        !self.gain1.is_empty()
    }
}

fn transpose_all(a: &[f64], n: usize) -> Vec<f64> {
    let nn = n * n;
    let mut out = vec![0.0; a.len()];
    for (src, dst) in a.chunks(nn).zip(out.chunks_mut(nn)) {
        for il in 0..n {
            for ir in 0..n {
                dst[ir * n + il] = src[il * n + ir];
            }
        }
    }
    out
}
