//! The distributions P_ℓ of the variables a control set leaves to the environment.
//!
//! Seed 002 (App. C) draws every uncontrolled variable from a normal with mean 0.5 truncated
//! to [0, 1] whose *variance after truncation* is 0.02, 0.04 or 0.08; the scale σ of the
//! untruncated normal that produces that variance is found here by a bracketing root finder.

use cabo_core::{Error, Result, Rng, normal};
use serde::{Deserialize, Serialize};

/// Variance of the uniform distribution on [0, 1]: the supremum of the variances a
/// symmetric truncated normal on [0, 1] can reach (as its scale grows without bound).
pub const UNIFORM_VARIANCE: f64 = 1.0 / 12.0;

/// One variable's distribution on [0, 1], as written in a spec.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum VariableDistribution {
    /// A normal with mean 0.5 truncated to [0, 1] whose variance (after truncation) is
    /// `variance`, which must lie in (0, 1/12).
    TruncatedNormal {
        /// The variance after truncation.
        variance: f64,
    },
    /// Uniform on [0, 1].
    Uniform,
}

/// A variable's distribution ready for sampling.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Sampler {
    /// Truncated normal with mean 0.5 and untruncated scale `scale` on [0, 1]; `lo` and `hi`
    /// are Φ(−0.5/scale) and Φ(0.5/scale), the cdf range inverted when sampling.
    TruncatedNormal {
        /// Scale σ of the untruncated normal.
        scale: f64,
        /// Φ at the lower truncation point (in standard units).
        lo: f64,
        /// Φ at the upper truncation point (in standard units).
        hi: f64,
    },
    /// Uniform on [0, 1].
    Uniform,
}

impl VariableDistribution {
    /// Checks the parameters and prepares the sampler (solving for the scale).
    pub fn sampler(&self) -> Result<Sampler> {
        match *self {
            VariableDistribution::Uniform => Ok(Sampler::Uniform),
            VariableDistribution::TruncatedNormal { variance } => {
                let scale = truncated_normal_scale(variance)?;
                let a = 0.5 / scale;
                Ok(Sampler::TruncatedNormal {
                    scale,
                    lo: normal::cdf(-a),
                    hi: normal::cdf(a),
                })
            }
        }
    }
}

/// Variance of N(0.5, scale²) truncated to [0, 1]: with a = 0.5/scale,
/// `scale² · (1 − 2aφ(a) / (2Φ(a) − 1))`. The denominator is written as erf(a/√2) so it
/// keeps full relative precision when a is small (large scales, variances near 1/12).
pub fn truncated_normal_variance(scale: f64) -> f64 {
    let a = 0.5 / scale;
    let mass = libm::erf(a / std::f64::consts::SQRT_2);
    scale * scale * (1.0 - 2.0 * a * normal::pdf(a) / mass)
}

/// The scale σ for which N(0.5, σ²) truncated to [0, 1] has variance `variance`.
///
/// The truncated variance increases monotonically from 0 (σ → 0) to 1/12 (σ → ∞), so the
/// root is bracketed on a log scale and found by Brent's method to |Var(σ) − v| < 1e-12.
/// Errors unless 0 < v < 1/12.
pub fn truncated_normal_scale(variance: f64) -> Result<f64> {
    if !(variance.is_finite() && variance > 0.0 && variance < UNIFORM_VARIANCE) {
        return Err(Error::invalid(format!(
            "truncated_normal.variance: must be in (0, 1/12) (1/12 is the uniform's variance), got {variance}"
        )));
    }
    // In log σ: Var is ~σ² for small σ, and the bracket [1e-4, 1e4] covers every variance
    // from 1e-8 up to 1/12 − 1e-10.
    let g = |ls: f64| truncated_normal_variance(ls.exp()) - variance;
    let (mut lo, mut hi) = (
        -4.0 * std::f64::consts::LN_10,
        4.0 * std::f64::consts::LN_10,
    );
    if g(lo) > 0.0 || g(hi) < 0.0 {
        return Err(Error::invalid(format!(
            "truncated_normal.variance: {variance} is too close to 0 or to 1/12 to solve for a scale"
        )));
    }
    // Bisection to a tight bracket, then Brent to machine precision.
    for _ in 0..30 {
        let mid = 0.5 * (lo + hi);
        if g(mid) < 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let ls = cabo_optim::roots::brent(g, lo, hi, 1e-15, 200)?;
    Ok(ls.exp())
}

impl Sampler {
    /// One draw (the environment's draws of the open variables).
    pub fn sample(&self, rng: &mut Rng) -> f64 {
        match *self {
            Sampler::Uniform => rng.uniform(),
            Sampler::TruncatedNormal { .. } => self.quantile(rng.uniform_open()),
        }
    }

    /// The inverse cdf: the value below which the variable falls with probability `u`, for
    /// `u` in (0, 1). It maps uniform points, random or quasi-random, onto the distribution
    /// exactly.
    pub fn quantile(&self, u: f64) -> f64 {
        match *self {
            Sampler::Uniform => u,
            Sampler::TruncatedNormal { scale, lo, hi } => {
                // Inverting the cdf stays exact however little mass lies in [0, 1].
                let p = lo + (hi - lo) * u;
                (0.5 + scale * normal::quantile(p)).clamp(0.0, 1.0)
            }
        }
    }

    /// The exact mean (0.5 for both families: they are symmetric about 0.5).
    pub fn mean(&self) -> f64 {
        0.5
    }

    /// The exact variance.
    pub fn variance(&self) -> f64 {
        match *self {
            Sampler::Uniform => UNIFORM_VARIANCE,
            Sampler::TruncatedNormal { scale, .. } => truncated_normal_variance(scale),
        }
    }
}

/// Half the spacing of the 32-bit Sobol' grid, 2⁻³³.
const HALF_CELL: f64 = 1.0 / (1u64 << 33) as f64;

/// The largest `f64` below 1.
const BELOW_ONE: f64 = 1.0 - f64::EPSILON / 2.0;

/// A Sobol' coordinate `k·2⁻³²` moved to the centre of its cell, `(k + ½)·2⁻³²` (exact in
/// binary), so that it lies strictly inside (0, 1) where the inverse cdfs are finite; the
/// Latin-hypercube coordinates above 256 dimensions are kept below 1 the same way.
fn cell_centre(v: f64) -> f64 {
    (v + HALF_CELL).min(BELOW_ONE)
}

/// The input distributions of a control-set problem: one sampler per variable. Attached to
/// `ProblemInfo` as a typed extension so policies can draw the uncontrolled variables.
#[derive(Debug, Clone, PartialEq)]
pub struct InputDistributions {
    /// One sampler per input dimension.
    pub variables: Vec<Sampler>,
}

impl InputDistributions {
    /// The samplers of a spec's `distribution` (every input) or, when given, its per-input
    /// `distributions`; a bad one is named as `<key>.distributions[l]`.
    pub fn from_spec(
        key: &str,
        every: VariableDistribution,
        per_input: Option<&[VariableDistribution]>,
        d: usize,
    ) -> Result<Self> {
        let list: Vec<VariableDistribution> = match per_input {
            Some(ds) => ds.to_vec(),
            None => vec![every; d],
        };
        let variables = list
            .iter()
            .enumerate()
            .map(|(l, v)| {
                v.sampler()
                    .map_err(|e| e.at(&format!("{key}.distributions[{l}]")))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(InputDistributions { variables })
    }

    /// `d` variables that all follow `distribution` (a spec's `distribution` without
    /// per-input overrides), for building a problem's view outside a spec.
    pub fn every(distribution: VariableDistribution, d: usize) -> Result<Self> {
        let sampler = distribution.sampler()?;
        Ok(InputDistributions {
            variables: vec![sampler; d],
        })
    }

    /// Input dimension.
    pub fn dim(&self) -> usize {
        self.variables.len()
    }

    /// Overwrites the coordinates of `x` outside `controlled` (sorted indices) with draws.
    pub fn fill_uncontrolled(&self, controlled: &[usize], x: &mut [f64], rng: &mut Rng) {
        for (l, (xl, s)) in x.iter_mut().zip(&self.variables).enumerate() {
            if controlled.binary_search(&l).is_err() {
                *xl = s.sample(rng);
            }
        }
    }

    /// `m` points of every variable, row-major `m × d`, determined by `seed`: the fixed
    /// sample set that expectations over the uncontrolled variables average over.
    ///
    /// They are the first `m` scrambled Sobol' points of dimension d
    /// ([`cabo_optim::sobol::points`], scrambled from `seed`; a randomised Latin hypercube
    /// above its 256 dimensions), each coordinate mapped through its variable's inverse cdf.
    /// Every point is distributed exactly as a draw of the variables, so averages stay
    /// unbiased, and the points fill the space evenly: on the seeds' problems 128 of them
    /// average the expected bounds, and 256 a posterior path, as accurately as 1024
    /// independent draws (docs/decisions.md). A power of two keeps the net's
    /// balance (exactly `m / 2^k` points in each of `2^k` equal-mass bins of every
    /// variable).
    pub fn sample_matrix(&self, m: usize, seed: u64) -> Vec<f64> {
        let d = self.dim();
        let mut points = cabo_optim::sobol::points(m, d, seed);
        for row in points.chunks_exact_mut(d) {
            for (v, s) in row.iter_mut().zip(&self.variables) {
                *v = s.quantile(cell_centre(*v));
            }
        }
        points
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_solver_reaches_the_target_variance_to_1e_10() {
        for v in [1e-4, 0.005, 0.02, 0.04, 0.08, 0.083] {
            let s = truncated_normal_scale(v).unwrap();
            let got = truncated_normal_variance(s);
            assert!((got - v).abs() < 1e-10, "v = {v}: got {got} at scale {s}");
        }
    }

    #[test]
    fn small_variances_need_the_untruncated_scale() {
        // With almost no mass outside [0, 1] the truncation is invisible: σ² ≈ v.
        let s = truncated_normal_scale(1e-3).unwrap();
        assert!((s * s - 1e-3).abs() < 1e-12, "{s}");
    }

    #[test]
    fn samples_match_the_analytic_mean_and_variance() {
        for v in [0.02, 0.04, 0.08] {
            let d = VariableDistribution::TruncatedNormal { variance: v };
            let s = d.sampler().unwrap();
            let mut rng = Rng::new(11);
            let n = 200_000;
            let xs: Vec<f64> = (0..n).map(|_| s.sample(&mut rng)).collect();
            assert!(xs.iter().all(|x| (0.0..=1.0).contains(x)));
            let mean = xs.iter().sum::<f64>() / n as f64;
            let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
            let m4 = xs.iter().map(|x| (x - 0.5).powi(4)).sum::<f64>() / n as f64;
            // Four standard errors: sd(mean) = √(v/n), sd(var) ≈ √((μ₄ − v²)/n).
            let se_mean = (v / n as f64).sqrt();
            let se_var = ((m4 - v * v) / n as f64).sqrt();
            assert!((mean - 0.5).abs() < 4.0 * se_mean, "v = {v}: mean {mean}");
            assert!(
                (var - v).abs() < 4.0 * se_var,
                "v = {v}: var {var} (se {se_var})"
            );
            assert!((s.variance() - v).abs() < 1e-10);
        }
    }

    #[test]
    fn uniform_samples_have_variance_one_twelfth() {
        let s = VariableDistribution::Uniform.sampler().unwrap();
        let mut rng = Rng::new(3);
        let n = 100_000;
        let xs: Vec<f64> = (0..n).map(|_| s.sample(&mut rng)).collect();
        let mean = xs.iter().sum::<f64>() / n as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
        assert!((mean - 0.5).abs() < 4.0 * (UNIFORM_VARIANCE / n as f64).sqrt());
        assert!((var - UNIFORM_VARIANCE).abs() < 4.0 * (1.0 / 180.0 / n as f64).sqrt());
    }

    /// The sample matrix's one-point-per-bin balance bounds its errors exactly: with one of
    /// `m` points in each of the `m` equal-mass bins of a variable, the average of a function
    /// of that variable with total variation V is within V/m of its expectation. The mean
    /// (x, V ≤ 1) and the variance ((x − ½)², V = ½) are checked against those bounds.
    #[test]
    fn sobol_sample_matrix_meets_its_stratification_bounds() {
        let m = 1 << 12;
        for every in [
            VariableDistribution::TruncatedNormal { variance: 0.02 },
            VariableDistribution::TruncatedNormal { variance: 0.08 },
            VariableDistribution::Uniform,
        ] {
            let dists = InputDistributions::from_spec("t", every, None, 5).unwrap();
            let s = dists.variables[0];
            let xs = dists.sample_matrix(m, 21);
            assert_eq!(xs.len(), m * 5);
            assert!(xs.iter().all(|x| (0.0..=1.0).contains(x)));
            for l in 0..5 {
                let col = xs.iter().skip(l).step_by(5);
                let mean = col.clone().sum::<f64>() / m as f64;
                let var = col.map(|x| (x - 0.5).powi(2)).sum::<f64>() / m as f64;
                assert!(
                    (mean - 0.5).abs() <= 1.0 / m as f64,
                    "{every:?} {l}: mean {mean}"
                );
                assert!(
                    (var - s.variance()).abs() <= 0.5 / m as f64 + 1e-12,
                    "{every:?} {l}: variance {var} vs {}",
                    s.variance()
                );
            }
        }
    }

    /// The same seed gives the same bits; another seed another scramble.
    #[test]
    fn sample_matrix_is_determined_by_its_seed() {
        let every = VariableDistribution::TruncatedNormal { variance: 0.04 };
        let dists = InputDistributions::from_spec("t", every, None, 3).unwrap();
        let a = dists.sample_matrix(256, 5);
        let b = dists.sample_matrix(256, 5);
        assert!(a.iter().zip(&b).all(|(x, y)| x.to_bits() == y.to_bits()));
        assert_ne!(a, dists.sample_matrix(256, 6));
        // The first points of a larger set are the smaller set (one sequence, one scramble).
        assert_eq!(&dists.sample_matrix(512, 5)[..256 * 3], &a[..]);
    }

    /// The inverse cdf inverts the truncated normal's cdf, (Φ((x − ½)/σ) − lo)/(hi − lo),
    /// to 1e-12, and reaches the ends of [0, 1] without leaving it.
    #[test]
    fn quantile_inverts_the_truncated_cdf() {
        for v in [0.005, 0.02, 0.08] {
            let s = VariableDistribution::TruncatedNormal { variance: v }
                .sampler()
                .unwrap();
            let Sampler::TruncatedNormal { scale, lo, hi } = s else {
                unreachable!()
            };
            for u in [1e-9, 0.01, 0.3, 0.5, 0.77, 0.999] {
                let x = s.quantile(u);
                let back = (normal::cdf((x - 0.5) / scale) - lo) / (hi - lo);
                assert!((back - u).abs() < 1e-12, "v = {v}, u = {u}: {back}");
            }
            assert_eq!(s.quantile(0.5), 0.5);
            assert!((0.0..=1.0).contains(&s.quantile(f64::MIN_POSITIVE)));
            assert!((0.0..=1.0).contains(&s.quantile(1.0 - f64::EPSILON / 2.0)));
        }
        assert_eq!(Sampler::Uniform.quantile(0.25), 0.25);
    }

    #[test]
    fn bad_variances_are_rejected() {
        for v in [0.0, -0.1, 1.0 / 12.0, 0.1, f64::NAN] {
            let d = VariableDistribution::TruncatedNormal { variance: v };
            assert!(d.sampler().is_err(), "{v}");
        }
    }
}
