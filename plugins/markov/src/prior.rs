//! Markov-process priors on `[0, ℓ]` and their conditional laws on the y-grid.
//!
//! Every computation needs one thing from a prior: the law of `Y(x')` on the y-grid given the
//! two neighbouring observations `Y(x_a) = y_L`, `Y(x_b) = y_R` (`x_a < x' < x_b`). By the
//! Markov property nothing else in the history matters.
//!
//! * **Gaussian priors** (Brownian motion, time-changed Brownian motion): the bridge is normal
//!   in closed form. The grid law gives each level the probability of its cell
//!   `[y_w − Δ/2, y_w + Δ/2]`, the end levels absorbing the tails, so a row sums to one by
//!   telescoping.
//! * **Compound Poisson** (rate μ, jumps `N(0, σ_J²)`): with `Y(0) = Y(1)` observed exactly,
//!   the continuum model is degenerate (an exact tie has positive probability only when no
//!   jump occurred, so the posterior would be "no jumps" with certainty). cabo therefore uses
//!   the lattice process whose jumps are the normal jumps rounded to the y-spacing Δ (a
//!   continuous-time random walk on `Δℤ`), for which the grid law is exact: conditioning on
//!   the number of jumps `N` in a span `t`,
//!   `P(Y(x+t) − Y(x) = jΔ) = Σ_N Pois(N; μt) J^{*N}(j)`,
//!   and the bridge law is `p_{t₁}(w − y_L) p_{t₂}(y_R − w)` normalised over the grid levels
//!   (the truncation to the grid's range is the only approximation; see
//!   [`Kernel::lattice_tail_mass`]).

use crate::grid::Grid;
use cabo_core::normal::{cdf, quantile};
use cabo_core::{Error, Result, Rng};
use serde::{Deserialize, Serialize};

fn one() -> f64 {
    1.0
}

/// A Markov-process prior on `[0, ℓ]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Prior {
    /// Brownian motion with `Var[Y(x+t) − Y(x)] = scale²·t` (translation invariant).
    Brownian {
        /// The scale σ.
        scale: f64,
    },
    /// Brownian motion run on the clock `v(x) = scale²·x^exponent`: a Gaussian process with
    /// independent increments that is *not* translation invariant unless `exponent = 1`, so
    /// the dynamic program keeps the left end of an interval as a fourth state variable.
    TimeChangedBrownian {
        /// The scale σ.
        scale: f64,
        /// The clock exponent (> 0).
        exponent: f64,
    },
    /// Compound Poisson process with rate μ and `N(0, jump_sd²)` jumps, on the y-lattice.
    CompoundPoisson {
        /// The jump rate μ.
        rate: f64,
        /// Standard deviation of a jump (default 1).
        #[serde(default = "one")]
        jump_sd: f64,
    },
}

impl Prior {
    /// Rejects bad parameters.
    pub fn validate(&self) -> Result<()> {
        let pos = |name: &str, v: f64| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(Error::invalid(format!(
                    "prior `{name}` must be positive and finite, got {v}"
                )))
            }
        };
        match *self {
            Prior::Brownian { scale } => pos("scale", scale),
            Prior::TimeChangedBrownian { scale, exponent } => {
                pos("scale", scale)?;
                pos("exponent", exponent)
            }
            Prior::CompoundPoisson { rate, jump_sd } => {
                pos("rate", rate)?;
                pos("jump_sd", jump_sd)
            }
        }
    }

    /// True when the path reversed in x has the same law (Brownian motion; compound Poisson
    /// with its symmetric jumps), so `V[y_L, y_R] = V[y_R, y_L]` on the 3-D state.
    pub fn reversible(&self) -> bool {
        matches!(self, Prior::Brownian { .. } | Prior::CompoundPoisson { .. })
    }

    /// True when the law of the path is invariant under shifts in x (a 3-D state suffices).
    pub fn translation_invariant(&self) -> bool {
        match *self {
            Prior::Brownian { .. } | Prior::CompoundPoisson { .. } => true,
            Prior::TimeChangedBrownian { exponent, .. } => exponent == 1.0,
        }
    }
}

/// Precomputed lattice laws of the compound Poisson process.
#[derive(Debug, Clone)]
pub(crate) struct Lattice {
    pub rate: f64,
    /// Half-width `L` of the increment lattice `−L..=L` (in units of Δ).
    pub half: usize,
    /// `conv[N·(2L+1) + L + j] = J^{*N}(j)`, `N = 0..=n_max`.
    pub conv: Vec<f64>,
    pub n_max: usize,
    /// `steps[e·(2L+1) + L + j] = p_{e·h}(j)` for `e = 0..x_levels`.
    pub steps: Vec<f64>,
    /// `steps_rev[e·(2L+1) + L + j] = p_{e·h}(−j)`: lets the dynamic program read
    /// `p(y_R − w)` as a forward slice in `w`.
    pub steps_rev: Vec<f64>,
    /// `1 − Σ_j p_ℓ(j)`: probability mass the lattice cut off over the whole domain.
    pub tail_mass: f64,
}

impl Lattice {
    fn new(rate: f64, jump_sd: f64, grid: &Grid) -> Result<Self> {
        let dy = grid.dy();
        let mu_l = rate * grid.length;
        if mu_l > 600.0 {
            return Err(Error::invalid(format!(
                "compound Poisson rate × length = {mu_l} is too large (at most 600)"
            )));
        }
        let n = grid.y_levels;
        let half = 2 * (n - 1);
        let width = 2 * half + 1;
        // Jump pmf: N(0, jump_sd²) mass of each lattice cell, cut at ±9 sd (mass < 1e-18).
        let jw = ((9.0 * jump_sd / dy).ceil() as usize).clamp(1, half);
        let mut jump = vec![0.0; 2 * jw + 1];
        for (k, p) in jump.iter_mut().enumerate() {
            let j = k as f64 - jw as f64;
            let lo = (j - 0.5) * dy / jump_sd;
            let hi = (j + 0.5) * dy / jump_sd;
            *p = if hi <= 0.0 {
                cdf(hi) - cdf(lo)
            } else if lo >= 0.0 {
                cdf(-lo) - cdf(-hi)
            } else {
                1.0 - cdf(lo) - cdf(-hi)
            };
        }
        let s: f64 = jump.iter().sum();
        jump.iter_mut().for_each(|p| *p /= s);
        // Poisson tail beyond n_max is below 1e-17 for the largest span ℓ.
        let n_max = (mu_l + 12.0 * mu_l.sqrt() + 25.0).ceil() as usize;
        let mut conv = vec![0.0; (n_max + 1) * width];
        conv[half] = 1.0;
        for nn in 1..=n_max {
            let (prev, cur) = conv.split_at_mut(nn * width);
            let prev = &prev[(nn - 1) * width..];
            let cur = &mut cur[..width];
            for (i, &pv) in prev.iter().enumerate() {
                if pv == 0.0 {
                    continue;
                }
                let lo = i.saturating_sub(jw);
                let hi = (i + jw).min(width - 1);
                for t in lo..=hi {
                    cur[t] += pv * jump[t + jw - i];
                }
            }
        }
        let mut lat = Lattice {
            rate,
            half,
            conv,
            n_max,
            steps: Vec::new(),
            steps_rev: Vec::new(),
            tail_mass: 0.0,
        };
        let m = grid.x_levels;
        let mut steps = vec![0.0; m * width];
        for e in 0..m {
            lat.increment_pmf(e as f64 * grid.dx(), &mut steps[e * width..(e + 1) * width]);
        }
        lat.tail_mass = 1.0 - steps[(m - 1) * width..].iter().sum::<f64>();
        let mut rev = steps.clone();
        for row in rev.chunks_mut(width) {
            row.reverse();
        }
        lat.steps = steps;
        lat.steps_rev = rev;
        Ok(lat)
    }

    /// `out[L + j] = P(Y(x+t) − Y(x) = jΔ)` for `j = −L..=L`.
    pub fn increment_pmf(&self, t: f64, out: &mut [f64]) {
        let width = 2 * self.half + 1;
        out.iter_mut().for_each(|v| *v = 0.0);
        let lam = self.rate * t;
        if lam == 0.0 {
            out[self.half] = 1.0;
            return;
        }
        // Poisson weights in log space so large μt neither underflows nor overflows.
        let mut lw = -lam;
        for nn in 0..=self.n_max {
            if nn > 0 {
                lw += lam.ln() - (nn as f64).ln();
            }
            let w = lw.exp();
            if w < 1e-300 {
                continue;
            }
            let c = &self.conv[nn * width..(nn + 1) * width];
            for (o, &cv) in out.iter_mut().zip(c) {
                *o += w * cv;
            }
        }
    }

    /// The row of p_{e h} around offset `j` (`j` may range over `−L..=L`).
    #[inline]
    pub fn step(&self, e: usize, j: i64) -> f64 {
        let width = 2 * self.half + 1;
        self.steps[e * width + (self.half as i64 + j) as usize]
    }
}

/// The kind of grid law a [`Kernel`] holds.
#[derive(Debug, Clone)]
pub(crate) enum KernelKind {
    /// Gaussian bridge on the clock `scale²·x^exponent`.
    Gauss { scale: f64, exponent: f64 },
    /// Compound Poisson on the lattice.
    Lattice(Lattice),
}

/// A prior discretised on a grid: the conditional law of an interior observation.
#[derive(Debug, Clone)]
pub struct Kernel {
    pub(crate) grid: Grid,
    pub(crate) kind: KernelKind,
    pub(crate) invariant: bool,
    pub(crate) reversible: bool,
}

/// Where the normal bridge sits in grid units: mean index `fl + o` (`0 ≤ o < 1`) and
/// `ratio = Δ/s`. Shared by the direct rows, the dynamic program's shape tables and the
/// sampler, so all three use bit-identical probabilities.
#[derive(Debug, Clone, Copy)]
pub(crate) struct GaussPos {
    pub fl: i64,
    pub o: f64,
    pub ratio: f64,
}

/// Grid laws take `Φ(z) = 0` below `−PHI_CUT` and `1` above it: the neglected mass is
/// `Φ(−9) ≈ 1.1e-19` per tail, and every cell far from the bridge mean is then exactly zero,
/// which lets the dynamic program skip it.
pub(crate) const PHI_CUT: f64 = 9.0;

/// Φ with the cut-off of [`PHI_CUT`].
#[inline]
pub(crate) fn cdf_cut(z: f64) -> f64 {
    if z < -PHI_CUT {
        0.0
    } else if z > PHI_CUT {
        1.0
    } else {
        cdf(z)
    }
}

/// Probability of the normal mass between standardised bounds `lo < hi`, computed on the
/// side that avoids cancellation.
#[inline]
pub(crate) fn normal_mass(lo: f64, hi: f64) -> f64 {
    if hi <= 0.0 {
        cdf_cut(hi) - cdf_cut(lo)
    } else if lo >= 0.0 {
        cdf_cut(-lo) - cdf_cut(-hi)
    } else {
        1.0 - cdf_cut(lo) - cdf_cut(-hi)
    }
}

/// Probability of grid level `w` of `n` for a normal bridge at `pos` (`k = w − fl`).
#[inline]
pub(crate) fn gauss_cell(k: i64, w: usize, n: usize, pos: GaussPos) -> f64 {
    let lo = (k as f64 - 0.5 - pos.o) * pos.ratio;
    let hi = (k as f64 + 0.5 - pos.o) * pos.ratio;
    if w == 0 {
        cdf_cut(hi)
    } else if w == n - 1 {
        cdf_cut(-lo)
    } else {
        normal_mass(lo, hi)
    }
}

impl Kernel {
    /// Discretises `prior` on `grid`.
    pub fn new(prior: &Prior, grid: &Grid) -> Result<Self> {
        prior.validate()?;
        grid.validate()?;
        let kind = match *prior {
            Prior::Brownian { scale } => KernelKind::Gauss {
                scale,
                exponent: 1.0,
            },
            Prior::TimeChangedBrownian { scale, exponent } => KernelKind::Gauss { scale, exponent },
            Prior::CompoundPoisson { rate, jump_sd } => {
                KernelKind::Lattice(Lattice::new(rate, jump_sd, grid)?)
            }
        };
        Ok(Kernel {
            grid: grid.clone(),
            kind,
            invariant: prior.translation_invariant(),
            reversible: prior.reversible(),
        })
    }

    /// The grid this kernel lives on.
    pub fn grid(&self) -> &Grid {
        &self.grid
    }

    /// True when rows do not depend on the interval's left end.
    pub fn translation_invariant(&self) -> bool {
        self.invariant
    }

    /// Probability mass the compound Poisson increment lattice cuts off over the whole
    /// domain (0 for Gaussian priors); a check that the y-range is wide enough.
    pub fn lattice_tail_mass(&self) -> f64 {
        match &self.kind {
            KernelKind::Lattice(l) => l.tail_mass,
            KernelKind::Gauss { .. } => 0.0,
        }
    }

    /// `P(Y(x + t) − Y(x) = jΔ)` for the compound Poisson lattice (0 beyond the lattice's
    /// half-width `2(y_levels − 1)`); unsupported for Gaussian priors, whose increments are
    /// continuous.
    pub fn increment_prob(&self, t: f64, j: i64) -> Result<f64> {
        match &self.kind {
            KernelKind::Lattice(lat) => {
                if !(t.is_finite() && t >= 0.0) {
                    return Err(Error::invalid(format!("time span must be ≥ 0, got {t}")));
                }
                if j.unsigned_abs() as usize > lat.half {
                    return Ok(0.0);
                }
                let mut out = vec![0.0; 2 * lat.half + 1];
                lat.increment_pmf(t, &mut out);
                Ok(out[(lat.half as i64 + j) as usize])
            }
            KernelKind::Gauss { .. } => Err(Error::unsupported(
                "lattice increment probabilities exist only for the compound Poisson prior",
            )),
        }
    }

    /// Bytes of the tables this kernel holds (the compound Poisson convolution powers and
    /// increment laws; nothing for Gaussian priors).
    pub fn heap_bytes(&self) -> usize {
        match &self.kind {
            KernelKind::Lattice(l) => 8 * (l.conv.len() + l.steps.len() + l.steps_rev.len()),
            KernelKind::Gauss { .. } => 0,
        }
    }

    /// The Gaussian clock `v(x)`.
    #[inline]
    pub(crate) fn clock(scale: f64, exponent: f64, x: f64) -> f64 {
        if exponent == 1.0 {
            scale * scale * x
        } else {
            scale * scale * x.powf(exponent)
        }
    }

    /// Position of the normal bridge at `x_{i+e}` in the interval `[x_i, x_{i+d}]`.
    // A split is named by five integers; the clock by two floats.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn gauss_pos(
        &self,
        scale: f64,
        exponent: f64,
        i: usize,
        d: usize,
        e: usize,
        il: usize,
        ir: usize,
    ) -> GaussPos {
        let dy = self.grid.dy();
        let h = self.grid.dx();
        if exponent == 1.0 {
            // Exact integer arithmetic for the mean index (il(d−e) + ir·e)/d, so the
            // dynamic program can tabulate the d possible fractional offsets.
            let r = (il * (d - e) + ir * e) as i64;
            let dd = d as i64;
            let s = scale * (h * (e * (d - e)) as f64 / d as f64).sqrt();
            GaussPos {
                fl: r / dd,
                o: (r % dd) as f64 / dd as f64,
                ratio: dy / s,
            }
        } else {
            let va = Self::clock(scale, exponent, self.grid.x(i));
            let vp = Self::clock(scale, exponent, self.grid.x(i + e));
            let vb = Self::clock(scale, exponent, self.grid.x(i + d));
            let p = (vp - va) / (vb - va);
            let s = ((vp - va) * (vb - vp) / (vb - va)).sqrt();
            let mi = il as f64 + p * (ir as f64 - il as f64);
            let fl = mi.floor();
            GaussPos {
                fl: fl as i64,
                o: mi - fl,
                ratio: dy / s,
            }
        }
    }

    /// Writes into `out` (length `y_levels`) the grid law of `Y(x_{i+e})` given
    /// `Y(x_i) = y_il`, `Y(x_{i+d}) = y_ir`, for `0 < e < d`, `i + d < x_levels`.
    pub fn row(&self, i: usize, d: usize, e: usize, il: usize, ir: usize, out: &mut [f64]) {
        let n = self.grid.y_levels;
        debug_assert!(0 < e && e < d && i + d < self.grid.x_levels && out.len() == n);
        match &self.kind {
            KernelKind::Gauss { scale, exponent } => {
                let pos = self.gauss_pos(*scale, *exponent, i, d, e, il, ir);
                for (w, o) in out.iter_mut().enumerate() {
                    *o = gauss_cell(w as i64 - pos.fl, w, n, pos);
                }
            }
            KernelKind::Lattice(lat) => lattice_row(lat, n, d, e, il, ir, out),
        }
    }

    /// Draws the grid level of `Y(x_{i+e})` given its neighbours (see [`Kernel::row`]);
    /// `scratch` has length `y_levels`.
    // The same five integers as `row`, plus the generator and the scratch row it reuses.
    #[allow(clippy::too_many_arguments)]
    pub fn sample(
        &self,
        i: usize,
        d: usize,
        e: usize,
        il: usize,
        ir: usize,
        rng: &mut Rng,
        scratch: &mut [f64],
    ) -> usize {
        let n = self.grid.y_levels;
        match &self.kind {
            KernelKind::Gauss { scale, exponent } => {
                // Inverse CDF in closed form: the CDF at the upper edge of level w is
                // Φ((w − fl + ½ − o)·ratio), so w is the first level whose edge exceeds z.
                let pos = self.gauss_pos(*scale, *exponent, i, d, e, il, ir);
                let z = quantile(rng.uniform_open());
                let k = (z / pos.ratio + pos.o - 0.5).floor() + 1.0;
                let w = k + pos.fl as f64;
                w.clamp(0.0, (n - 1) as f64) as usize
            }
            KernelKind::Lattice(lat) => {
                lattice_row(lat, n, d, e, il, ir, scratch);
                let u = rng.uniform();
                let mut acc = 0.0;
                for (w, p) in scratch.iter().enumerate() {
                    acc += p;
                    if u < acc {
                        return w;
                    }
                }
                // Rounding left u above the final partial sum: the last level with mass.
                scratch.iter().rposition(|&p| p > 0.0).unwrap_or(n - 1)
            }
        }
    }
}

/// The lattice bridge law over the grid levels, normalised; an interval whose endpoint
/// values are jointly impossible in double precision (never reached from a feasible start)
/// falls back to the level nearest the linear interpolant, so the table stays finite.
pub(crate) fn lattice_row(
    lat: &Lattice,
    n: usize,
    d: usize,
    e: usize,
    il: usize,
    ir: usize,
    out: &mut [f64],
) {
    let mut z = 0.0;
    for (w, o) in out.iter_mut().enumerate() {
        let p = lat.step(e, w as i64 - il as i64) * lat.step(d - e, ir as i64 - w as i64);
        *o = p;
        z += p;
    }
    if z > 0.0 && z.is_finite() {
        let inv = 1.0 / z;
        out.iter_mut().for_each(|o| *o *= inv);
    } else {
        out.iter_mut().for_each(|o| *o = 0.0);
        let mid = il as f64 + (e as f64 / d as f64) * (ir as f64 - il as f64);
        out[(mid.round() as usize).min(n - 1)] = 1.0;
    }
}
