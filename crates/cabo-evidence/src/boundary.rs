//! Group-sequential boundaries: how far a standardised statistic must lie from zero at each
//! planned look so that, over all looks together, a true null is rejected with probability
//! at most the level.
//!
//! The level is spent across the looks by the Lan–DeMets O'Brien–Fleming function
//! α(t) = 2 − 2Φ(z₁₋α/₂ / √t) of the information fraction t = n / N: almost nothing at the
//! early looks, and nearly the whole level at the last, so that a design that looks four times
//! loses little power against one that looks once. The boundaries come from the joint law of
//! the statistics under the null (Brownian motion in information time), integrated look by
//! look on a grid (Armitage, McPherson & Rowe's recursion, as in Jennison & Turnbull, *Group
//! Sequential Methods*, ch. 19).

use statrs::distribution::{Continuous, ContinuousCDF, Normal};

/// Simpson intervals on each continuation region: the densities are smooth, so 200
/// intervals leave an error far below the 1e-6 the boundaries are checked to.
const INTERVALS: usize = 200;

fn standard_normal() -> Normal {
    Normal::standard()
}

/// The share of a two-sided `level` spent by information fraction `t` (0 < t ≤ 1): each
/// side spends half the level by α(t) = 2 − 2Φ(z₁₋α/₂ / √t) at α = level / 2, the
/// convention of gsDesign's `sfLDOF` for symmetric two-sided designs.
pub fn spent(level: f64, t: f64) -> f64 {
    let n = standard_normal();
    let z = n.inverse_cdf(1.0 - level / 4.0);
    2.0 * (2.0 * n.sf(z / t.sqrt()))
}

/// The sub-density of the statistic at one look over its continuation region, on Simpson
/// nodes: `(node, weight × density)` pairs.
struct Continuation {
    nodes: Vec<(f64, f64)>,
}

impl Continuation {
    /// The statistic at the first look is standard normal (shifted by `mean`), continued on
    /// (−c, c).
    fn first(c: f64, mean: f64) -> Continuation {
        let n = standard_normal();
        Continuation::on(c, |z| n.pdf(z - mean))
    }

    /// Simpson nodes on (−c, c) with weights times `density`.
    fn on(c: f64, density: impl Fn(f64) -> f64) -> Continuation {
        let h = 2.0 * c / INTERVALS as f64;
        let nodes = (0..=INTERVALS)
            .map(|i| {
                let z = -c + h * i as f64;
                let simpson = match i {
                    0 => 1.0,
                    i if i == INTERVALS => 1.0,
                    i if i % 2 == 1 => 4.0,
                    _ => 2.0,
                };
                (z, simpson * h / 3.0 * density(z))
            })
            .collect();
        Continuation { nodes }
    }

    /// Probability of having continued this far and then landing above `c` and below `−c'`
    /// at the next look, whose statistic is `r·u + shift + s·ε`.
    fn crossing(&self, step: Step, upper: f64, lower: f64) -> (f64, f64) {
        let n = standard_normal();
        let (mut up, mut down) = (0.0, 0.0);
        for &(u, w) in &self.nodes {
            let centre = step.r * u + step.shift;
            up += w * n.sf((upper - centre) / step.s);
            down += w * n.cdf((lower - centre) / step.s);
        }
        (up, down)
    }

    /// The sub-density at the next look on (−c, c).
    fn next(&self, step: Step, c: f64) -> Continuation {
        let n = standard_normal();
        Continuation::on(c, |z| {
            self.nodes
                .iter()
                .map(|&(u, w)| w * n.pdf((z - step.r * u - step.shift) / step.s) / step.s)
                .sum()
        })
    }
}

/// How the statistic moves from one look to the next: Z_k = r·Z_{k−1} + shift + s·ε.
#[derive(Clone, Copy)]
struct Step {
    r: f64,
    s: f64,
    shift: f64,
}

impl Step {
    /// From fraction `t0` to `t1` under a drift `theta` (the statistic's mean at t = 1).
    fn between(t0: f64, t1: f64, theta: f64) -> Step {
        Step {
            r: (t0 / t1).sqrt(),
            s: ((t1 - t0) / t1).sqrt(),
            shift: theta * (t1 - t0) / t1.sqrt(),
        }
    }
}

/// The symmetric two-sided boundaries c₁ … c_K at the information fractions `fractions`
/// (increasing, the last 1), spending `level` by the O'Brien–Fleming function.
pub fn obrien_fleming(level: f64, fractions: &[f64]) -> Vec<f64> {
    let Some((&first, rest)) = fractions.split_first() else {
        return Vec::new();
    };
    // The first look stands alone: its boundary is a normal quantile.
    let c1 = standard_normal().inverse_cdf(1.0 - spent(level, first) / 2.0);
    let mut bounds = vec![c1];
    let mut region = Continuation::first(c1, 0.0);
    let mut previous = first;
    for &t in rest {
        let target = spent(level, t) - spent(level, previous);
        let step = Step::between(previous, t, 0.0);
        let c = solve_decreasing(|c| {
            let (up, down) = region.crossing(step, c, -c);
            up + down - target
        });
        region = region.next(step, c);
        bounds.push(c);
        previous = t;
    }
    bounds
}

/// Per look, the probabilities of first crossing the upper and the lower boundary when the
/// statistic drifts to mean `theta` at t = 1 (θ = δ√N/σ for a paired mean difference δ with
/// standard deviation σ over N replications): the design's power, look by look.
pub fn crossing_probabilities(bounds: &[f64], fractions: &[f64], theta: f64) -> Vec<(f64, f64)> {
    let n = standard_normal();
    let mut out = Vec::with_capacity(bounds.len());
    let mut region: Option<Continuation> = None;
    let mut previous = 0.0;
    for (&c, &t) in bounds.iter().zip(fractions) {
        let crossing = match &region {
            None => {
                let mean = theta * t.sqrt();
                (n.sf(c - mean), n.cdf(-c - mean))
            }
            Some(r) => r.crossing(Step::between(previous, t, theta), c, -c),
        };
        out.push(crossing);
        region = Some(match &region {
            None => Continuation::first(c, theta * t.sqrt()),
            Some(r) => r.next(Step::between(previous, t, theta), c),
        });
        previous = t;
    }
    out
}

/// The root of a function that decreases in c from positive to negative on [0, 40].
fn solve_decreasing(f: impl Fn(f64) -> f64) -> f64 {
    let (mut lo, mut hi) = (0.0f64, 40.0f64);
    // Bisection to 1e-10: a boundary feeds a t quantile, and the crossing probability is
    // smooth and monotone in c, so no faster method is needed for four or five looks.
    while hi - lo > 1e-10 {
        let mid = 0.5 * (lo + hi);
        if f(mid) > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// gsDesign's `gsDesign(k = 4, test.type = 2, alpha = 0.025, sfu = sfLDOF)` (two-sided
    /// 5 %, equally spaced looks) gives 4.3326, 2.9631, 2.3590, 2.0141.
    #[test]
    fn four_equal_looks_match_gsdesign() {
        let b = obrien_fleming(0.05, &[0.25, 0.5, 0.75, 1.0]);
        for (got, want) in b.iter().zip([4.3326, 2.9631, 2.3590, 2.0141]) {
            assert!((got - want).abs() < 6e-5, "{b:?}");
        }
    }

    /// One look is the fixed-sample test.
    #[test]
    fn one_look_is_the_fixed_sample_quantile() {
        let b = obrien_fleming(0.05, &[1.0]);
        assert!((b[0] - 1.959963984540054).abs() < 1e-9, "{b:?}");
    }

    /// Under the null, the crossing probabilities add up to the level, look by look as spent.
    #[test]
    fn the_null_crossing_probabilities_are_the_spending() {
        let f = [0.2, 0.45, 0.7, 1.0];
        let b = obrien_fleming(0.05, &f);
        let p = crossing_probabilities(&b, &f, 0.0);
        let mut cumulative = 0.0;
        for (k, (up, down)) in p.iter().enumerate() {
            cumulative += up + down;
            assert!((cumulative - spent(0.05, f[k])).abs() < 1e-7, "look {k}");
            assert!((up - down).abs() < 1e-9);
        }
    }
}
