//! Aggregation of replications on a common x-grid.
//!
//! Every run is a step function of x (cumulative cost or iteration): the value recorded by
//! its last evaluation at or before x, as in the papers' plots, so runs that spent their
//! budget in different increments become comparable point by point. Each grid point then gets
//! the median with quartiles and the mean with its standard error over the replications that
//! have a value there.

use cabo_spec::XAxis;

/// One run's trace: `(x, y)` at each evaluation, in evaluation order (x never decreases).
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    /// Replication index.
    pub replication: usize,
    /// Steps of the function: at `x` the value becomes `y`.
    pub steps: Vec<(f64, f64)>,
}

impl Trace {
    /// The value in force at `x`: that of the last step at or before `x`; `None` before the
    /// first step (for example while a counted initial design is still being paid for).
    pub fn at(&self, x: f64) -> Option<f64> {
        // Steps are sorted by x, so the last step ≤ x is found by binary search.
        let n = self.steps.partition_point(|&(sx, _)| sx <= x);
        (n > 0).then(|| self.steps[n - 1].1).filter(|y| !y.is_nan())
    }

    /// The largest x of the trace (0 when empty).
    pub fn end(&self) -> f64 {
        self.steps.last().map_or(0.0, |s| s.0)
    }
}

/// Statistics of one policy at one grid point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// Grid x.
    pub x: f64,
    /// Replications with a value at x.
    pub n: usize,
    /// Median.
    pub median: f64,
    /// 25% quantile.
    pub q25: f64,
    /// 75% quantile.
    pub q75: f64,
    /// Mean.
    pub mean: f64,
    /// Standard error of the mean (NaN with fewer than two values).
    pub stderr: f64,
}

/// Number of grid intervals on a cost axis: fine enough that steps look like the runs'.
pub const COST_GRID_INTERVALS: usize = 200;

/// Iteration budgets up to this many get a grid point at every iteration.
pub const MAX_ITERATION_GRID: usize = 1000;

/// The common grid: `0..=budget` in equal steps for cost and wall time, every integer iteration for
/// iterations. Without a budget limit on that axis the longest trace sets the end.
pub fn grid(axis: XAxis, limit: Option<f64>, traces: &[&Trace]) -> Vec<f64> {
    let longest = traces.iter().map(|t| t.end()).fold(0.0, f64::max);
    let end = limit.unwrap_or(longest);
    match axis {
        XAxis::Iteration => {
            let n = end.ceil().max(0.0) as usize;
            if n <= MAX_ITERATION_GRID {
                (0..=n).map(|i| i as f64).collect()
            } else {
                // Long runs: evenly spaced whole iterations keep files and figures small.
                let mut g: Vec<f64> = (0..=COST_GRID_INTERVALS)
                    .map(|k| ((n * k) as f64 / COST_GRID_INTERVALS as f64).round())
                    .collect();
                g.dedup();
                g
            }
        }
        XAxis::CumulativeCost | XAxis::WallTime => {
            if end <= 0.0 {
                return vec![0.0];
            }
            (0..=COST_GRID_INTERVALS)
                .map(|k| end * k as f64 / COST_GRID_INTERVALS as f64)
                .collect()
        }
    }
}

/// Statistics of `values` (NaN-free) at `x`.
pub fn stats(x: f64, mut values: Vec<f64>) -> Point {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    // Summed in sorted order so the result does not depend on the order runs were read.
    let mean = if n == 0 {
        f64::NAN
    } else {
        values.iter().sum::<f64>() / n as f64
    };
    let stderr = if n < 2 {
        f64::NAN
    } else {
        let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        (var / n as f64).sqrt()
    };
    Point {
        x,
        n,
        median: quantile(&values, 0.5),
        q25: quantile(&values, 0.25),
        q75: quantile(&values, 0.75),
        mean,
        stderr,
    }
}

/// Aggregates traces on a grid.
pub fn aggregate(grid: &[f64], traces: &[&Trace]) -> Vec<Point> {
    grid.iter()
        .map(|&x| stats(x, traces.iter().filter_map(|t| t.at(x)).collect()))
        .collect()
}

/// Linear-interpolation quantile (type 7, as numpy's default) of sorted values.
pub fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let pos = q * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn trace(steps: &[(f64, f64)]) -> Trace {
        Trace {
            replication: 0,
            steps: steps.to_vec(),
        }
    }

    #[test]
    fn step_function_holds_the_last_value_at_or_before_x() {
        let t = trace(&[(0.0, 5.0), (1.5, 3.0), (4.0, 1.0)]);
        assert_eq!(t.at(-0.1), None);
        assert_eq!(t.at(0.0), Some(5.0));
        assert_eq!(t.at(1.4999), Some(5.0));
        assert_eq!(t.at(1.5), Some(3.0));
        assert_eq!(t.at(3.9), Some(3.0));
        assert_eq!(t.at(100.0), Some(1.0), "the last value is carried forward");
    }

    #[test]
    fn quartiles_mean_and_standard_error_match_hand_computation() {
        let p = stats(2.0, vec![4.0, 1.0, 3.0, 2.0]);
        assert_eq!(p.n, 4);
        assert_eq!(p.median, 2.5);
        assert_eq!(p.q25, 1.75);
        assert_eq!(p.q75, 3.25);
        assert_eq!(p.mean, 2.5);
        // Sample variance 5/3, standard error sqrt(5/12).
        assert!((p.stderr - (5.0f64 / 12.0).sqrt()).abs() < 1e-15);
        let one = stats(0.0, vec![7.0]);
        assert_eq!((one.median, one.mean), (7.0, 7.0));
        assert!(one.stderr.is_nan());
    }

    #[test]
    fn grids_follow_the_axis() {
        let a = trace(&[(0.0, 1.0), (3.0, 0.5)]);
        let b = trace(&[(0.0, 1.0), (7.0, 0.5)]);
        let g = grid(XAxis::Iteration, None, &[&a, &b]);
        assert_eq!(g, vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]);
        let g = grid(XAxis::CumulativeCost, Some(10.0), &[&a]);
        assert_eq!(g.len(), COST_GRID_INTERVALS + 1);
        assert_eq!((g[0], g[COST_GRID_INTERVALS]), (0.0, 10.0));
        let pts = aggregate(&[0.0, 5.0], &[&a, &b]);
        assert_eq!(pts[0].median, 1.0);
        assert_eq!(
            pts[1].median, 0.75,
            "one run improved by x = 5, the other not yet"
        );
    }
}
