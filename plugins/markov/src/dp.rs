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

impl Solution {
    /// Runs Algorithm 1 for `setup`.
    pub fn solve(setup: &Setup, opts: &SolveOptions) -> Result<Solution> {
        setup.validate()?;
        let started = Instant::now();
        let kernel = Kernel::new(&setup.prior, &setup.grid)?;
        let g = &setup.grid;
        let (m, n) = (g.x_levels, g.y_levels);
        let full_state = opts.force_full_state || !kernel.translation_invariant();
        // Slots: one per interval length (3-D) or per (left end, length) (4-D).
        let mut slot_offset = vec![0usize; m + 1];
        for d in 0..m {
            let count = if full_state { m - d } else { 1 };
            slot_offset[d + 1] = slot_offset[d] + count;
        }
        let slots = slot_offset[m];
        let nn = n * n;
        let tables_f64 = if opts.one_step { 6 } else { 5 };
        // Peak memory: the tables below, the kernel's own tables, the reward quadrature's
        // per-thread scratch (lattice: increment laws and prefix sums at every node), the
        // per-entry accumulators, per-thread rows and the largest shape set.
        let threads = rayon::current_num_threads();
        let mut peak = slots * nn * (tables_f64 * 8 + 2 * 2) + kernel.heap_bytes();
        if let KernelKind::Lattice(lat) = &kernel.kind {
            let q = crate::reward::lattice_nodes(lat, g.length);
            peak += threads * 4 * q * (2 * lat.half + 1) * 8;
        }

        let reward_started = Instant::now();
        let mut r = vec![0.0; slots * nn];
        if full_state {
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
                    reward_table_at(&kernel, &setup.reward, i, d, &mut slab);
                    (slot_offset[d] + i, slab)
                })
                .collect();
            for (s, slab) in slabs {
                r[s * nn..(s + 1) * nn].copy_from_slice(&slab);
            }
        } else {
            r = reward_table_invariant(&kernel, &setup.reward);
        }
        let reward_seconds = reward_started.elapsed().as_secs_f64();
        let rt = transpose_all(&r, n);

        let mut v = vec![0.0; slots * nn];
        let mut vt = vec![0.0; slots * nn];
        let mut cont = vec![f64::NEG_INFINITY; slots * nn];
        let mut best = vec![0u16; slots * nn];
        let mut gain1 = if opts.one_step {
            vec![f64::NEG_INFINITY; slots * nn]
        } else {
            Vec::new()
        };
        let mut best1 = vec![0u16; slots * nn];
        let c = setup.cost;
        let slot =
            |i: usize, d: usize| -> usize { if full_state { slot_offset[d] + i } else { d } };
        let mirror = !full_state && kernel.reversible;
        let gauss_scale = match (&kernel.kind, full_state) {
            (KernelKind::Gauss { scale, exponent }, false) if *exponent == 1.0 => Some(*scale),
            _ => None,
        };
        let mut shapes = Shapes {
            width: 0,
            first: Vec::new(),
            last: Vec::new(),
            mass: Vec::new(),
            lower: Vec::new(),
            upper: Vec::new(),
        };
        let mut shape_bytes = 0usize;
        let mut acc = vec![
            Acc {
                cont: f64::NEG_INFINITY,
                best: 0,
                gain: f64::NEG_INFINITY,
                best1: 0,
            };
            nn
        ];
        peak += nn * std::mem::size_of::<Acc>();
        peak += threads * n * 8;

        for d in 1..m {
            let i_range = if full_state { 0..m - d } else { 0..1 };
            for i in i_range {
                let s = slot(i, d);
                if d >= 2 {
                    acc.iter_mut().for_each(|a| {
                        *a = Acc {
                            cont: f64::NEG_INFINITY,
                            best: 0,
                            gain: f64::NEG_INFINITY,
                            best1: 0,
                        }
                    });
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
                        let (sl, sr) = (slot(i, e), slot(i + e, d - e));
                        if let (Some(scale), true) = (gauss_scale, rebuild) {
                            Shapes::build(&kernel, scale, d, e, &mut shapes);
                            shape_bytes = shape_bytes.max(3 * shapes.mass.len() * 8);
                        }
                        let (vl, vr) = (&v[sl * nn..(sl + 1) * nn], &vt[sr * nn..(sr + 1) * nn]);
                        let (rl, rr) = (&r[sl * nn..(sl + 1) * nn], &rt[sr * nn..(sr + 1) * nn]);
                        let shapes_ref = &shapes;
                        let lattice = match &kernel.kind {
                            KernelKind::Lattice(lat) => Some(lat),
                            KernelKind::Gauss { .. } => None,
                        };
                        let kernel_ref = &kernel;
                        let one_step = opts.one_step;
                        acc.par_chunks_mut(n).enumerate().for_each_init(
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
                                        lattice_dot(
                                            lat,
                                            n,
                                            d,
                                            e,
                                            il,
                                            ir,
                                            (a_v, a_r),
                                            (b_v, b_r),
                                            one_step,
                                        )
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
                                    if cv > slot_acc.cont
                                        || (cv == slot_acc.cont && e16 < slot_acc.best)
                                    {
                                        slot_acc.cont = cv;
                                        slot_acc.best = e16;
                                    }
                                    if one_step
                                        && (er > slot_acc.gain
                                            || (er == slot_acc.gain && e16 < slot_acc.best1))
                                    {
                                        slot_acc.gain = er;
                                        slot_acc.best1 = e16;
                                    }
                                }
                            },
                        );
                    }
                }
                // V = max(R, C); store transposed copies for the contiguous inner products.
                let base = s * nn;
                for idx in 0..nn {
                    let rv = r[base + idx];
                    let a = acc[idx];
                    let (cv, bv) = if d >= 2 {
                        (a.cont, a.best)
                    } else {
                        (f64::NEG_INFINITY, 0)
                    };
                    cont[base + idx] = cv;
                    best[base + idx] = bv;
                    v[base + idx] = if cv > rv { cv } else { rv };
                    if opts.one_step {
                        gain1[base + idx] = if d >= 2 {
                            a.gain - rv
                        } else {
                            f64::NEG_INFINITY
                        };
                        best1[base + idx] = if d >= 2 { a.best1 } else { 0 };
                    }
                }
                if mirror && d >= 2 {
                    // Reversal maps (y_L, y_R, e) to (y_R, y_L, d − e): same value and
                    // continuation, mirrored split point.
                    for il in 0..n {
                        for ir in 0..il {
                            let (dst, src) = (base + il * n + ir, base + ir * n + il);
                            v[dst] = v[src];
                            cont[dst] = cont[src];
                            best[dst] = if best[src] == 0 {
                                0
                            } else {
                                d as u16 - best[src]
                            };
                            if opts.one_step {
                                gain1[dst] = gain1[src];
                                best1[dst] = if best1[src] == 0 {
                                    0
                                } else {
                                    d as u16 - best1[src]
                                };
                            }
                        }
                    }
                }
                for il in 0..n {
                    for ir in 0..n {
                        vt[base + ir * n + il] = v[base + il * n + ir];
                    }
                }
            }
        }
        peak += shape_bytes;
        let stats = SolveStats {
            seconds: started.elapsed().as_secs_f64(),
            reward_seconds,
            peak_bytes: peak,
            state_dims: if full_state { 4 } else { 3 },
            lattice_tail_mass: kernel.lattice_tail_mass(),
        };
        Ok(Solution {
            setup: setup.clone(),
            kernel,
            full_state,
            n,
            slot_offset,
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
