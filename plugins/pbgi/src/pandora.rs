//! Gittins indices of single Pandora's boxes (seed 000 eq. 5): the fair price `g` with
//! `E[(R − g)⁺] = c`, for discrete rewards (exactly, the equation is piecewise linear in g)
//! and normal rewards (through [`crate::index`]).
//!
//! Weitzman's policy opens the closed box of largest index while that index exceeds the best
//! reward found, and is Bayes-optimal for independent boxes; the crate's tests check this
//! against a brute-force dynamic program.

use cabo_core::{Error, Result};

/// The index of a box with reward `values[k]` w.p. `probs[k]` and opening cost `cost > 0`.
///
/// `E[(R − g)⁺]` is continuous, convex, piecewise linear and strictly decreasing while
/// positive, with kinks at the support points; the root is found segment by segment from
/// the top, with slope `−P(R > g)` on each.
pub fn discrete_index(values: &[f64], probs: &[f64], cost: f64) -> Result<f64> {
    if values.is_empty() || values.len() != probs.len() {
        return Err(Error::invalid(format!(
            "a discrete reward needs as many probabilities as values (≥ 1), got {} values and {} probabilities",
            values.len(),
            probs.len()
        )));
    }
    if values.iter().any(|v| !v.is_finite()) || probs.iter().any(|p| !(p.is_finite() && *p >= 0.0))
    {
        return Err(Error::invalid(
            "discrete reward values must be finite and probabilities ≥ 0",
        ));
    }
    let total: f64 = probs.iter().sum();
    if (total - 1.0).abs() > 1e-9 {
        return Err(Error::invalid(format!(
            "discrete reward probabilities must sum to 1, got {total}"
        )));
    }
    if !(cost.is_finite() && cost > 0.0) {
        return Err(Error::invalid(format!(
            "box cost must be finite and > 0, got {cost}"
        )));
    }
    let mut support: Vec<(f64, f64)> = values.iter().copied().zip(probs.iter().copied()).collect();
    support.sort_by(|a, b| b.0.total_cmp(&a.0));
    // Walking down from the top value v₀ (where E[(R − g)⁺] = 0): on [v_{k+1}, v_k] the
    // function is Σ_{j ≤ k} p_j (v_j − g) = m_k − P_k g.
    let (mut mass, mut first_moment) = (0.0, 0.0);
    for k in 0..support.len() {
        mass += support[k].1;
        first_moment += support[k].1 * support[k].0;
        if mass <= 0.0 {
            continue;
        }
        let g = (first_moment - cost) / mass;
        let lower = support.get(k + 1).map_or(f64::NEG_INFINITY, |s| s.0);
        if g >= lower {
            return Ok(g);
        }
    }
    // The last segment extends to −∞ and contains the root whenever the mass is positive,
    // which the checks above guarantee; this is only reached for degenerate input.
    Err(Error::numerical(format!(
        "no Gittins index found for a box with cost {cost}"
    )))
}

/// The index of a box with reward `N(mean, std²)` and cost `cost`: `g` with `std·h((mean − g)/std) = cost`.
pub fn normal_index(mean: f64, std: f64, cost: f64) -> Result<f64> {
    crate::index::gittins_index(mean, std, cost).ok_or_else(|| {
        Error::invalid(format!(
            "a normal box needs a finite mean, std > 0 and cost > 0, got mean {mean}, std {std}, cost {cost}"
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discrete_index_solves_its_equation() {
        let values = [3.0, -1.0, 0.5, 2.0];
        let probs = [0.1, 0.4, 0.3, 0.2];
        for cost in [1e-3, 0.05, 0.3, 0.7, 2.0, 10.0] {
            let g = discrete_index(&values, &probs, cost).unwrap();
            let ei: f64 = values
                .iter()
                .zip(&probs)
                .map(|(v, p)| p * (v - g).max(0.0))
                .sum();
            assert!((ei - cost).abs() < 1e-14, "cost {cost}: g {g}, EI {ei}");
        }
    }

    #[test]
    fn bad_boxes_are_rejected() {
        assert!(discrete_index(&[], &[], 1.0).is_err());
        assert!(discrete_index(&[1.0], &[0.5], 1.0).is_err());
        assert!(discrete_index(&[1.0], &[1.0], 0.0).is_err());
        assert!(normal_index(0.0, 0.0, 1.0).is_err());
    }
}
