//! Multi-start maximisation over the unit cube: BoTorch's `optimize_acqf` recipe.
//!
//! 1. Score `raw_samples` scrambled Sobol' points (in batches through [`Objective::values`]).
//! 2. Choose `restarts` of them as initial conditions with BoTorch's heuristic
//!    ([`initial_conditions`]): Boltzmann sampling on standardised values
//!    (`initialize_q_batch`), or, for non-negative objectives such as EI, sampling among the
//!    points within a fraction of the best value (`initialize_q_batch_nonneg`). The best raw
//!    point is always kept.
//! 3. Run L-BFGS-B from each start on the negated objective — then from the caller's warm
//!    and partial starts ([`MaximizeOptions`]) — and return the best end point, or the best
//!    raw point when it is better.
//!
//! Every step is seeded from the `seed` argument, so the result is a deterministic function
//! of the objective, the settings, the options and the seed.
//!
//! ## Lockstep local searches
//!
//! Step 3 spends most of a decision's time evaluating the objective one point at a time.
//! The local searches (restarts, then warm starts, then partial starts) therefore run
//! together as resumable L-BFGS-B state machines ([`lbfgsb::minimize_lockstep`]): each round
//! every search still running requests one point, and all those points, in that fixed
//! order, go to **one** call of [`Objective::value_grads`], whose values and gradients are
//! negated one by one exactly as a search of −f negates them. Models override
//! `value_grads` to evaluate many points much faster than one by one.
//!
//! The result does not move by a bit. `value_grads` must give every point bitwise what
//! [`Objective::value_grad`] gives there; each search then receives the numbers it would
//! have received running alone, so it follows the same trajectory to the same end point
//! (the searches share no state that outlives a step). The end points are compared in the
//! old order — restarts, warm starts, partial starts, and the best raw sample last — and
//! the first of equal values still wins. So [`maximize`] returns what running the searches one after
//! another returns; the crate's tests keep that sequential recipe as their reference.

use crate::lbfgsb::{self, LbfgsbOptions, Tolerances};
use crate::sobol;
use cabo_core::{Error, Objective, OptimizerSettings, Result, Rng, derive_seed};

/// The best point found, its value and where its search started.
#[derive(Debug, Clone, PartialEq)]
pub struct Maximum {
    /// The maximiser (inside the box searched).
    pub x: Vec<f64>,
    /// The objective value there.
    pub value: f64,
    /// Where the search that found it started.
    pub start: Start,
}

/// Where the search that found a [`Maximum`] started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    /// A scored point: a raw sample (polished by L-BFGS-B, or as scored) or a finite
    /// domain's candidate.
    Raw,
    /// [`MaximizeOptions::warm_starts`]`[i]`.
    Warm(usize),
    /// [`MaximizeOptions::partial_starts`]`[i]`.
    Partial(usize),
}

/// How [`maximize`] searches besides the [`OptimizerSettings`]. The default searches the
/// whole cube from the restarts alone, stopping at [`Tolerances::TIGHT`].
#[derive(Debug, Clone, Copy, Default)]
pub struct MaximizeOptions<'a> {
    /// The box `(lower, upper) ⊆ [0,1]^d` searched; `None` is the whole cube. A coordinate
    /// with `lower == upper` is fixed at that value (control-set policies optimise only some
    /// variables); the raw samples then fill only the free coordinates.
    pub bounds: Option<(&'a [f64], &'a [f64])>,
    /// Whole points searched from after the restarts, such as a previous decision's
    /// maximiser.
    pub warm_starts: &'a [Vec<f64>],
    /// Leading coordinates of starts searched from after the warm ones, each completed by
    /// the best raw sample (the last of equal values) or, when no raw sample is finite, by
    /// repeating it. A scenario tree moves its root this way to points found in `d`
    /// dimensions, which the raw samples of its many variables reach only by chance.
    pub partial_starts: &'a [Vec<f64>],
    /// When each L-BFGS-B search stops (its iteration cap is the settings' `max_iters`).
    pub tolerances: Tolerances,
}

/// The temperature η of BoTorch's Boltzmann initial-condition heuristic.
pub const ETA: f64 = 1.0;

/// Raw samples scored per call of [`Objective::values`]: bounds the memory of the batch
/// while keeping it large enough for matrix-product batching in posteriors.
const RAW_BATCH: usize = 1024;

/// Maximises `f` over the box of `options` in `[0,1]^dim`; see the module documentation for
/// the recipe.
///
/// Errors when the settings are inconsistent (`restarts` of 0 or above `raw_samples`), when
/// `dim` is 0, when the bounds or starts do not fit `dim`, or when the objective is
/// non-finite at every raw sample and every end point.
pub fn maximize(
    f: &dyn Objective,
    dim: usize,
    settings: &OptimizerSettings,
    seed: u64,
    options: &MaximizeOptions<'_>,
) -> Result<Maximum> {
    let unit;
    let (lower, upper) = match options.bounds {
        Some(b) => b,
        None => {
            unit = (vec![0.0; dim], vec![1.0; dim]);
            (&unit.0[..], &unit.1[..])
        }
    };
    check(dim, lower, upper, settings, options)?;
    let free: Vec<usize> = (0..dim).filter(|&i| lower[i] < upper[i]).collect();
    if free.is_empty() {
        return only_point(f, lower);
    }
    let raw = RawSamples::scored(f, settings.raw_samples, lower, upper, &free, seed);
    let starts = initial_conditions(
        &raw.values,
        settings.restarts,
        f.non_negative(),
        derive_seed(&[&seed, &"initial_conditions"]),
    );
    let opts = LbfgsbOptions::new(settings.max_iters, options.tolerances);
    // The searches start, in this order, from the restarts, the warm starts, then the partial
    // starts completed by the last of the best raw samples; they run in lockstep and the
    // first of equal end values wins.
    let base = match options.partial_starts {
        [] => None,
        _ => last_best_finite(&raw.values).map(|i| raw.row(i)),
    };
    let mut x0s: Vec<&[f64]> = starts.iter().map(|&s| raw.row(s)).collect();
    x0s.extend(options.warm_starts.iter().map(|w| &w[..]));
    let partial: Vec<Vec<f64>> = (options.partial_starts.iter())
        .map(|lead| completed(lead, base, dim))
        .collect();
    x0s.extend(partial.iter().map(|p| &p[..]));
    let ends = local_searches(f, &x0s, lower, upper, &opts);
    let labels = (starts.iter().map(|_| Start::Raw))
        .chain((0..options.warm_starts.len()).map(Start::Warm))
        .chain((0..options.partial_starts.len()).map(Start::Partial));
    let mut best = None;
    for (m, start) in ends.into_iter().zip(labels) {
        consider(&mut best, m.x, -m.value, start);
    }
    // The raw samples compete too: an objective whose gradient path fails everywhere still
    // yields its best scored point.
    if let Some((i, v)) = best_finite(&raw.values) {
        consider(&mut best, raw.row(i).to_vec(), v, Start::Raw);
    }
    best.ok_or_else(|| {
        Error::numerical(format!(
            "optimizer: the objective is not finite at any of the {} raw samples or \
             {} local searches",
            settings.raw_samples,
            starts.len() + options.warm_starts.len() + options.partial_starts.len()
        ))
    })
}

/// L-BFGS-B on −f from each of `x0s` inside the box, in lockstep: every round, the points
/// requested by all searches still running go to one call of [`Objective::value_grads`],
/// whose values and gradients are negated one by one, exactly as a search of −f one point
/// at a time would negate them. The minima of −f, in the order of `x0s`.
fn local_searches(
    f: &dyn Objective,
    x0s: &[&[f64]],
    lower: &[f64],
    upper: &[f64],
    opts: &LbfgsbOptions,
) -> Vec<lbfgsb::Minimum> {
    let mut neg = |xs: &[f64], values: &mut [f64], grads: &mut [f64]| {
        f.value_grads(xs, values, grads);
        for v in values.iter_mut() {
            *v = -*v;
        }
        for gi in grads.iter_mut() {
            *gi = -*gi;
        }
    };
    lbfgsb::minimize_lockstep(&mut neg, x0s, lower, upper, opts)
}

/// A partial start's whole point: `lead` followed by the rest of `base`, or, without a base,
/// `lead` repeated to `dim` coordinates.
fn completed(lead: &[f64], base: Option<&[f64]>, dim: usize) -> Vec<f64> {
    let mut x0: Vec<f64> = match base {
        Some(b) => b.to_vec(),
        None => (0..dim).map(|j| lead[j % lead.len()]).collect(),
    };
    x0[..lead.len()].copy_from_slice(lead);
    x0
}

/// Keeps `(x, value)` in `best` when the value is finite and larger than the best so far.
fn consider(best: &mut Option<Maximum>, x: Vec<f64>, value: f64, start: Start) {
    if value.is_finite() && best.as_ref().is_none_or(|b| value > b.value) {
        *best = Some(Maximum { x, value, start });
    }
}

/// Rejects a zero dimension, bounds or starts that do not fit `dim`, and inconsistent
/// settings.
fn check(
    dim: usize,
    lower: &[f64],
    upper: &[f64],
    settings: &OptimizerSettings,
    options: &MaximizeOptions<'_>,
) -> Result<()> {
    if dim == 0 {
        return Err(Error::invalid("optimizer: the objective has dimension 0"));
    }
    if lower.len() != dim || upper.len() != dim {
        return Err(Error::invalid(format!(
            "optimizer: the objective has dimension {dim} but the bounds have {} and {} entries",
            lower.len(),
            upper.len()
        )));
    }
    for i in 0..dim {
        if !(0.0 <= lower[i] && lower[i] <= upper[i] && upper[i] <= 1.0) {
            return Err(Error::invalid(format!(
                "optimizer: bound {i} is [{}, {}]; need 0 ≤ lower ≤ upper ≤ 1",
                lower[i], upper[i]
            )));
        }
    }
    if settings.raw_samples == 0
        || settings.restarts == 0
        || settings.restarts > settings.raw_samples
    {
        return Err(Error::invalid(format!(
            "optimizer: need 1 ≤ restarts ≤ raw_samples, got restarts = {}, raw_samples = {}",
            settings.restarts, settings.raw_samples
        )));
    }
    if let Some(w) = options.warm_starts.iter().find(|w| w.len() != dim) {
        return Err(Error::invalid(format!(
            "optimizer: a warm start has {} coordinates, the objective has dimension {dim}",
            w.len()
        )));
    }
    if let Some(p) = (options.partial_starts.iter()).find(|p| p.is_empty() || p.len() > dim) {
        return Err(Error::invalid(format!(
            "optimizer: a partial start has {} coordinates; need 1 to {dim}",
            p.len()
        )));
    }
    Ok(())
}

/// The local maximum of `f` over `[0,1]^d` that one L-BFGS-B search reaches from `from`
/// (projected into the cube) within `max_iters` iterations, or `from` itself when the search
/// ends lower (a failed line search never loses ground this way).
///
/// The regret of a run is measured against the best value known on its problem; where that
/// is a global search's estimate, a run may find a better basin, and this ascent from the
/// run's best point gives a value above it without a new global search. Errors when `from`
/// has a non-finite coordinate or `f` is not finite there.
pub fn ascend(f: &dyn Objective, from: &[f64], max_iters: usize) -> Result<Maximum> {
    let dim = from.len();
    let x0: Vec<f64> = from.iter().map(|v| v.clamp(0.0, 1.0)).collect();
    let start = only_point(f, &x0)?;
    let mut neg = |x: &[f64], g: &mut [f64]| {
        let v = f.value_grad(x, g);
        g.iter_mut().for_each(|gi| *gi = -*gi);
        -v
    };
    let opts = LbfgsbOptions::new(max_iters, Tolerances::TIGHT);
    let m = lbfgsb::try_minimize(&mut neg, &x0, &vec![0.0; dim], &vec![1.0; dim], &opts)?;
    Ok(if -m.value > start.value {
        Maximum {
            x: m.x,
            value: -m.value,
            start: Start::Warm(0),
        }
    } else {
        start
    })
}

/// The maximum of a box that is a single point.
fn only_point(f: &dyn Objective, x: &[f64]) -> Result<Maximum> {
    let mut v = [0.0];
    f.values(x, &mut v);
    if v[0].is_finite() {
        Ok(Maximum {
            x: x.to_vec(),
            value: v[0],
            start: Start::Raw,
        })
    } else {
        Err(Error::numerical(format!(
            "optimizer: the objective is {} at the only feasible point",
            v[0]
        )))
    }
}

/// The scored raw samples of one maximisation.
struct RawSamples {
    /// The points, row-major.
    xs: Vec<f64>,
    /// The objective at each point.
    values: Vec<f64>,
    /// Coordinates per point.
    dim: usize,
}

impl RawSamples {
    /// `n` scrambled Sobol' points of the box filling only the coordinates `free` (the
    /// others stay at `lower`), scored through [`Objective::values`] in batches.
    fn scored(
        f: &dyn Objective,
        n: usize,
        lower: &[f64],
        upper: &[f64],
        free: &[usize],
        seed: u64,
    ) -> RawSamples {
        let dim = lower.len();
        let unit = sobol::points(n, free.len(), derive_seed(&[&seed, &"raw_samples"]));
        let mut xs = vec![0.0; n * dim];
        for (row, u) in xs.chunks_exact_mut(dim).zip(unit.chunks_exact(free.len())) {
            row.copy_from_slice(lower);
            for (&i, &u) in free.iter().zip(u) {
                row[i] = (lower[i] + (upper[i] - lower[i]) * u).clamp(lower[i], upper[i]);
            }
        }
        let mut values = vec![0.0; n];
        for (xb, vb) in xs.chunks(RAW_BATCH * dim).zip(values.chunks_mut(RAW_BATCH)) {
            f.values(xb, vb);
        }
        RawSamples { xs, values, dim }
    }

    /// Point `i`.
    fn row(&self, i: usize) -> &[f64] {
        &self.xs[i * self.dim..(i + 1) * self.dim]
    }
}

/// The index of the largest finite value, the last of ties.
fn last_best_finite(values: &[f64]) -> Option<usize> {
    values
        .iter()
        .enumerate()
        .filter(|(_, v)| v.is_finite())
        .max_by(|a, b| a.1.total_cmp(b.1))
        .map(|(i, _)| i)
}

/// The index and value of the largest finite value, the first of ties.
fn best_finite(values: &[f64]) -> Option<(usize, f64)> {
    values
        .iter()
        .enumerate()
        .filter(|(_, v)| v.is_finite())
        .max_by(|a, b| a.1.total_cmp(b.1).then(b.0.cmp(&a.0)))
        .map(|(i, &v)| (i, v))
}

/// Chooses `n` distinct indices of `values` (the objective at the raw samples) as starting
/// points, as BoTorch's `initialize_q_batch` (or `initialize_q_batch_nonneg` when
/// `non_negative`) does with `η = 1`:
///
/// - **Boltzmann**: standardise the finite values to `z`, sample without replacement with
///   weights `exp(η z)` (halving `η z` while any weight overflows); when all values are equal
///   choose at random.
/// - **Non-negative**: when no value is positive choose at random; when fewer than `n` are
///   positive take them all and fill up at random; otherwise sample without replacement, with
///   weights `exp(η (v / v_max − 1))`, among the points with `v ≥ α v_max` (`α = 10⁻⁴`,
///   divided by 10 until at least `n` points qualify).
///
/// In every case the index of the best finite value is included (replacing the last pick if
/// needed). Non-finite values get weight 0. Returns every index when `n ≥ values.len()`.
pub fn initial_conditions(values: &[f64], n: usize, non_negative: bool, seed: u64) -> Vec<usize> {
    let n_raw = values.len();
    if n >= n_raw {
        return (0..n_raw).collect();
    }
    if n == 0 {
        return Vec::new();
    }
    let mut rng = Rng::new(seed);
    let Some((best_idx, max_val)) = best_finite(values) else {
        return random_subset(n_raw, n, &mut rng, &[]);
    };
    let mut weights = vec![0.0; n_raw];
    let mut picks = if non_negative {
        if max_val <= 0.0 {
            random_subset(n_raw, n, &mut rng, &[])
        } else {
            let positive: Vec<usize> = (0..n_raw).filter(|&i| values[i] > 0.0).collect();
            if positive.len() < n {
                let mut picks = positive.clone();
                picks.extend(random_subset(
                    n_raw,
                    n - positive.len(),
                    &mut rng,
                    &positive,
                ));
                picks
            } else {
                let mut alpha = 1e-4;
                while (0..n_raw).filter(|&i| values[i] >= alpha * max_val).count() < n {
                    alpha *= 0.1;
                }
                for i in 0..n_raw {
                    if values[i] >= alpha * max_val {
                        weights[i] = (ETA * (values[i] / max_val - 1.0)).exp();
                    }
                }
                weighted_without_replacement(&weights, n, &mut rng)
            }
        }
    } else {
        let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        let m = finite.len() as f64;
        let mean = finite.iter().sum::<f64>() / m;
        let var = if finite.len() > 1 {
            finite.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (m - 1.0)
        } else {
            0.0
        };
        let std = var.sqrt();
        if !(std > 0.0 && std.is_finite()) {
            random_subset(n_raw, n, &mut rng, &[])
        } else {
            let mut scale = ETA;
            loop {
                let mut overflow = false;
                for i in 0..n_raw {
                    weights[i] = if values[i].is_finite() {
                        (scale * (values[i] - mean) / std).exp()
                    } else {
                        0.0
                    };
                    overflow |= weights[i].is_infinite();
                }
                if !overflow {
                    break;
                }
                scale *= 0.5;
            }
            weighted_without_replacement(&weights, n, &mut rng)
        }
    };
    if !picks.contains(&best_idx)
        && let Some(last) = picks.last_mut()
    {
        *last = best_idx;
    }
    picks
}

/// `n` distinct indices from `0..n_raw` avoiding `exclude`, uniformly at random.
fn random_subset(n_raw: usize, n: usize, rng: &mut Rng, exclude: &[usize]) -> Vec<usize> {
    let mut excluded = vec![false; n_raw];
    for &i in exclude {
        excluded[i] = true;
    }
    let mut pool: Vec<usize> = (0..n_raw).filter(|&i| !excluded[i]).collect();
    let n = n.min(pool.len());
    // Partial Fisher–Yates: the first n slots end up a uniform random subset in random order.
    for i in 0..n {
        let j = i + rng.below((pool.len() - i) as u64) as usize;
        pool.swap(i, j);
    }
    pool.truncate(n);
    pool
}

/// `n` distinct indices drawn without replacement with probabilities proportional to
/// `weights` (Efraimidis–Spirakis keys `ln(u)/w`, which give the same distribution as
/// sequential draws in `O(N log N)`). Zero weights are drawn only when the positive ones run
/// out, uniformly at random.
fn weighted_without_replacement(weights: &[f64], n: usize, rng: &mut Rng) -> Vec<usize> {
    let mut keys: Vec<(f64, usize)> = weights
        .iter()
        .enumerate()
        .map(|(i, &w)| {
            let u = rng.uniform_open();
            let key = if w > 0.0 {
                u.ln() / w
            } else {
                f64::NEG_INFINITY
            };
            (key, i)
        })
        .collect();
    keys.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut picks: Vec<usize> = keys
        .iter()
        .take(n)
        .filter(|k| k.0 > f64::NEG_INFINITY)
        .map(|k| k.1)
        .collect();
    if picks.len() < n {
        let taken = picks.clone();
        picks.extend(random_subset(weights.len(), n - taken.len(), rng, &taken));
    }
    picks
}

#[cfg(test)]
mod tests {
    //! The lockstep searches against the sequential recipe they replaced: equal bits.

    use super::*;
    use std::cell::Cell;

    /// [`maximize`] as it was before the searches ran in lockstep: one L-BFGS-B run after
    /// another through [`lbfgsb::minimize`] and [`Objective::value_grad`], restarts first,
    /// then warm starts, then partial starts. The reference every lockstep result must match
    /// bit for bit.
    fn sequential_maximize(
        f: &dyn Objective,
        dim: usize,
        settings: &OptimizerSettings,
        seed: u64,
        options: &MaximizeOptions<'_>,
    ) -> Result<Maximum> {
        let unit;
        let (lower, upper) = match options.bounds {
            Some(b) => b,
            None => {
                unit = (vec![0.0; dim], vec![1.0; dim]);
                (&unit.0[..], &unit.1[..])
            }
        };
        check(dim, lower, upper, settings, options)?;
        let free: Vec<usize> = (0..dim).filter(|&i| lower[i] < upper[i]).collect();
        if free.is_empty() {
            return only_point(f, lower);
        }
        let raw = RawSamples::scored(f, settings.raw_samples, lower, upper, &free, seed);
        let starts = initial_conditions(
            &raw.values,
            settings.restarts,
            f.non_negative(),
            derive_seed(&[&seed, &"initial_conditions"]),
        );
        let opts = LbfgsbOptions::new(settings.max_iters, options.tolerances);
        let search = |x0: &[f64]| sequential_search(f, x0, lower, upper, &opts);
        let mut best = None;
        for &s in &starts {
            let (x, v) = search(raw.row(s));
            consider(&mut best, x, v, Start::Raw);
        }
        for (i, x0) in options.warm_starts.iter().enumerate() {
            let (x, v) = search(x0);
            consider(&mut best, x, v, Start::Warm(i));
        }
        let base = match options.partial_starts {
            [] => None,
            _ => last_best_finite(&raw.values).map(|i| raw.row(i)),
        };
        for (i, lead) in options.partial_starts.iter().enumerate() {
            let (x, v) = search(&completed(lead, base, dim));
            consider(&mut best, x, v, Start::Partial(i));
        }
        if let Some((i, v)) = best_finite(&raw.values) {
            consider(&mut best, raw.row(i).to_vec(), v, Start::Raw);
        }
        best.ok_or_else(|| Error::numerical("optimizer: nothing finite"))
    }

    /// One L-BFGS-B run on −f from `x0`, one point at a time.
    fn sequential_search(
        f: &dyn Objective,
        x0: &[f64],
        lower: &[f64],
        upper: &[f64],
        opts: &LbfgsbOptions,
    ) -> (Vec<f64>, f64) {
        let mut neg = |x: &[f64], g: &mut [f64]| {
            let v = f.value_grad(x, g);
            for gi in g.iter_mut() {
                *gi = -*gi;
            }
            -v
        };
        let m = lbfgsb::minimize(&mut neg, x0, lower, upper, opts);
        (m.x, -m.value)
    }

    /// A closure-backed objective that counts its single-point evaluations and its batched
    /// calls, and evaluates batches row by row through the closure (an override of
    /// [`Objective::value_grads`] that honours the contract).
    struct Counted<F: Fn(&[f64], &mut [f64]) -> f64> {
        f: F,
        non_negative: bool,
        singles: Cell<usize>,
        batches: Cell<usize>,
        batch_points: Cell<usize>,
        widest: Cell<usize>,
        first_batch: Cell<usize>,
    }

    impl<F: Fn(&[f64], &mut [f64]) -> f64> Counted<F> {
        fn new(f: F) -> Self {
            Counted {
                f,
                non_negative: false,
                singles: Cell::new(0),
                batches: Cell::new(0),
                batch_points: Cell::new(0),
                widest: Cell::new(0),
                first_batch: Cell::new(0),
            }
        }
    }

    impl<F: Fn(&[f64], &mut [f64]) -> f64> Objective for Counted<F> {
        fn value(&self, x: &[f64]) -> f64 {
            (self.f)(x, &mut vec![0.0; x.len()])
        }
        fn value_grad(&self, x: &[f64], grad: &mut [f64]) -> f64 {
            self.singles.set(self.singles.get() + 1);
            (self.f)(x, grad)
        }
        fn value_grads(&self, xs: &[f64], values: &mut [f64], grads: &mut [f64]) {
            let rows = values.len();
            if self.batches.get() == 0 {
                self.first_batch.set(rows);
            }
            self.batches.set(self.batches.get() + 1);
            self.batch_points.set(self.batch_points.get() + rows);
            self.widest.set(self.widest.get().max(rows));
            let d = xs.len() / rows;
            for r in 0..rows {
                let x = &xs[r * d..(r + 1) * d];
                values[r] = (self.f)(x, &mut grads[r * d..(r + 1) * d]);
            }
        }
        fn non_negative(&self) -> bool {
            self.non_negative
        }
    }

    /// Smooth, multimodal and not separable: a sum of sines of each coordinate and of their
    /// sum.
    fn sines(x: &[f64], g: &mut [f64]) -> f64 {
        let mut v = 0.0;
        let mut sum = 0.0;
        for i in 0..x.len() {
            let a = 3.0 + 2.0 * i as f64;
            let b = 0.7 * i as f64;
            v += (a * x[i] + b).sin();
            g[i] = a * (a * x[i] + b).cos();
            sum += x[i];
        }
        v += 0.5 * (5.0 * sum).sin();
        let gs = 2.5 * (5.0 * sum).cos();
        for gi in g.iter_mut() {
            *gi += gs;
        }
        v
    }

    /// [`sines`], NaN (value and gradient) where `x₀ + x₁ > 1.3`.
    fn sines_nan_region(x: &[f64], g: &mut [f64]) -> f64 {
        if x[0] + x[1] > 1.3 {
            g.fill(f64::NAN);
            return f64::NAN;
        }
        sines(x, g)
    }

    /// [`sines`] whose gradient is NaN (the value finite) where `x₀ < 0.3`: restarts there end
    /// after their first evaluation, line-search trials there count as too long.
    fn sines_failing_gradient(x: &[f64], g: &mut [f64]) -> f64 {
        let v = sines(x, g);
        if x[0] < 0.3 {
            g[0] = f64::NAN;
        }
        v
    }

    /// Non-negative (EI-like): a bump with flat zeros far from it.
    fn bump(x: &[f64], g: &mut [f64]) -> f64 {
        let r2: f64 = x.iter().map(|&t| (t - 0.6) * (t - 0.6)).sum();
        let e = if r2 < 0.3 { (-8.0 * r2).exp() } else { 0.0 };
        for i in 0..x.len() {
            g[i] = -16.0 * (x[i] - 0.6) * e;
        }
        e
    }

    fn settings(d: usize) -> OptimizerSettings {
        OptimizerSettings {
            raw_samples: 40 * d,
            restarts: 4 * d,
            max_iters: 200,
        }
    }

    fn same_bits(a: &Maximum, b: &Maximum, what: &str) {
        let bits = |v: &[f64]| v.iter().map(|t| t.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&a.x), bits(&b.x), "{what}: x {a:?} vs {b:?}");
        assert_eq!(a.value.to_bits(), b.value.to_bits(), "{what}: value");
        assert_eq!(a.start, b.start, "{what}: start");
    }

    /// Runs both drivers and checks equal bits, equal evaluation counts and real batching.
    fn compare<F: Fn(&[f64], &mut [f64]) -> f64>(
        f: &Counted<F>,
        dim: usize,
        seed: u64,
        options: &MaximizeOptions<'_>,
        what: &str,
    ) -> Maximum {
        let s = settings(dim);
        let reference = sequential_maximize(f, dim, &s, seed, options).unwrap();
        let sequential_points = f.singles.replace(0);
        let lockstep = maximize(f, dim, &s, seed, options).unwrap();
        assert_eq!(
            f.singles.get(),
            0,
            "{what}: maximize evaluated points one at a time"
        );
        same_bits(&lockstep, &reference, what);
        assert_eq!(
            f.batch_points.get(),
            sequential_points,
            "{what}: the lockstep searches evaluated a different number of points"
        );
        assert!(
            f.widest.get() > 1,
            "{what}: no batch had more than one point"
        );
        assert!(
            f.batches.get() < f.batch_points.get(),
            "{what}: batches {} for {} points",
            f.batches.get(),
            f.batch_points.get()
        );
        lockstep
    }

    /// The first round evaluates every search's start in one call (restarts, warm and
    /// partial starts), and the searches together evaluate exactly the points the sequential
    /// searches evaluate one at a time.
    #[test]
    fn lockstep_batches_every_search_and_evaluates_as_many_points() {
        let d = 4;
        let warm = vec![vec![0.2; d], vec![0.7; d]];
        let partial = vec![vec![0.4, 0.1]];
        let options = MaximizeOptions {
            warm_starts: &warm,
            partial_starts: &partial,
            ..MaximizeOptions::default()
        };
        let f = Counted::new(sines);
        compare(&f, d, 8, &options, "counts");
        assert_eq!(f.first_batch.get(), settings(d).restarts + 3);
        assert_eq!(f.widest.get(), settings(d).restarts + 3);
    }

    #[test]
    fn lockstep_equals_sequential_on_smooth_multimodal_objectives() {
        for (d, seed) in [(2, 1), (5, 2), (12, 3)] {
            let f = Counted::new(sines);
            compare(
                &f,
                d,
                seed,
                &MaximizeOptions::default(),
                &format!("d = {d}"),
            );
        }
    }

    #[test]
    fn lockstep_equals_sequential_with_non_finite_regions() {
        for d in [2, 5] {
            let f = Counted::new(sines_nan_region);
            compare(
                &f,
                d,
                11,
                &MaximizeOptions::default(),
                &format!("NaN, d = {d}"),
            );
        }
    }

    #[test]
    fn lockstep_equals_sequential_when_gradients_fail_at_starts() {
        for d in [2, 5] {
            let f = Counted::new(sines_failing_gradient);
            compare(
                &f,
                d,
                5,
                &MaximizeOptions::default(),
                &format!("grad, d = {d}"),
            );
        }
    }

    #[test]
    fn lockstep_equals_sequential_on_non_negative_objectives() {
        let mut f = Counted::new(bump);
        f.non_negative = true;
        compare(&f, 4, 9, &MaximizeOptions::default(), "non-negative");
    }

    #[test]
    fn lockstep_equals_sequential_with_fixed_coordinates_and_starts() {
        let d = 6;
        let lower = [0.0, 0.25, 0.0, 0.5, 0.1, 0.0];
        let upper = [1.0, 0.25, 0.8, 0.5, 0.9, 1.0];
        let warm = vec![
            vec![0.9, 0.25, 0.1, 0.5, 0.2, 0.3],
            // Outside the box: projected onto it.
            vec![1.0, 0.0, 1.0, 0.0, 1.0, 0.0],
            // Not finite: no search, as with `lbfgsb::minimize`.
            vec![f64::NAN, 0.25, 0.5, 0.5, 0.5, 0.5],
        ];
        let partial = vec![vec![0.05], vec![0.7, 0.25, 0.4]];
        let options = MaximizeOptions {
            bounds: Some((&lower, &upper)),
            warm_starts: &warm,
            partial_starts: &partial,
            tolerances: Tolerances::TIGHT,
        };
        let f = Counted::new(sines);
        let m = compare(&f, d, 21, &options, "box with starts");
        assert_eq!((m.x[1], m.x[3]), (0.25, 0.5));
        let f = Counted::new(sines_failing_gradient);
        compare(&f, d, 22, &options, "box with starts, failing gradients");
        let scipy = MaximizeOptions {
            tolerances: Tolerances::SCIPY,
            ..options
        };
        let f = Counted::new(sines_nan_region);
        compare(
            &f,
            d,
            23,
            &scipy,
            "box with starts, NaN region, SciPy tolerances",
        );
    }

    /// A warm or partial start wins only when it is strictly better: a wide objective whose
    /// restarts all miss the narrow peak a warm start sits on, so the start label is tested.
    #[test]
    fn lockstep_keeps_the_start_of_the_winner() {
        let peak = |x: &[f64], g: &mut [f64]| {
            let mut v = 0.0;
            for i in 0..x.len() {
                let t = x[i] - 0.123;
                v -= 400.0 * t * t;
                g[i] = -800.0 * t;
            }
            let wide: f64 = x.iter().map(|t| (t - 0.9) * (t - 0.9)).sum();
            let e = (-400.0 * v.abs()).exp();
            for gi in g.iter_mut() {
                *gi *= 400.0 * e;
            }
            for i in 0..x.len() {
                g[i] -= 0.02 * (x[i] - 0.9);
            }
            e - 0.01 * wide
        };
        let warm = vec![vec![0.4; 3], vec![0.123; 3]];
        let options = MaximizeOptions {
            warm_starts: &warm,
            ..MaximizeOptions::default()
        };
        let f = Counted::new(peak);
        let m = compare(&f, 3, 4, &options, "narrow peak");
        assert_eq!(m.start, Start::Warm(1), "{m:?}");
    }

    #[test]
    fn an_ascent_climbs_the_basin_it_starts_in_and_never_ends_below_its_start() {
        // f(x) = cos(3π x) on [0, 1]: maxima at 0 (value 1) and 2/3 (value 1), minima at 1/3
        // and 1. From 0.6 the ascent reaches 2/3, the maximum of its own basin.
        let f = Counted::new(|x: &[f64], g: &mut [f64]| {
            let a = 3.0 * std::f64::consts::PI;
            g[0] = -a * (a * x[0]).sin();
            (a * x[0]).cos()
        });
        let m = ascend(&f, &[0.6], 200).unwrap();
        assert!((m.x[0] - 2.0 / 3.0).abs() < 1e-6, "{:?}", m.x);
        assert!((m.value - 1.0).abs() < 1e-10, "{}", m.value);
        // A start outside the cube is projected into it first (here onto the maximum at 0).
        let edge = ascend(&f, &[-0.5], 200).unwrap();
        assert_eq!((edge.x[0], edge.value), (0.0, 1.0));
        // With no iteration left the start is what it returns, never anything lower.
        let stay = ascend(&f, &[0.6], 0).unwrap();
        assert_eq!(stay.x, vec![0.6]);
        assert!(ascend(&f, &[f64::NAN], 10).is_err());
    }
}
