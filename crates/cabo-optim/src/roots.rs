//! Bracketing root finders for scalar equations (e.g. PBGI's `EI(g) = λc`).
//!
//! Both methods need a sign change on `[a, b]` and keep a bracket throughout, so they cannot
//! wander off; [`brent`] converges superlinearly on smooth functions and never needs more
//! than a few times the bisection count on rough ones.

use cabo_core::{Error, Result};

/// Checks the bracket and returns `(f(a), f(b))`, or `Ok(Err(root))` when an end is a root.
fn check_bracket(
    f: &mut impl FnMut(f64) -> f64,
    a: f64,
    b: f64,
    xtol: f64,
    name: &str,
) -> Result<std::result::Result<(f64, f64), f64>> {
    if !(a.is_finite() && b.is_finite()) {
        return Err(Error::invalid(format!(
            "{name}: the bracket [{a}, {b}] must be finite"
        )));
    }
    if xtol.is_nan() || xtol <= 0.0 {
        return Err(Error::invalid(format!(
            "{name}: xtol must be positive, got {xtol}"
        )));
    }
    let fa = f(a);
    let fb = f(b);
    if fa.is_nan() || fb.is_nan() {
        return Err(Error::numerical(format!(
            "{name}: f is NaN at an end of the bracket [{a}, {b}]"
        )));
    }
    if fa == 0.0 {
        return Ok(Err(a));
    }
    if fb == 0.0 {
        return Ok(Err(b));
    }
    if fa.signum() == fb.signum() {
        return Err(Error::numerical(format!(
            "{name}: no sign change on [{a}, {b}] (f(a) = {fa}, f(b) = {fb})"
        )));
    }
    Ok(Ok((fa, fb)))
}

/// Brent's method (Brent 1973, `zeroin`): inverse quadratic interpolation and secant steps,
/// falling back to bisection whenever they do not shrink the bracket fast enough.
///
/// Returns a point within `xtol` (plus a few ulps) of a root in `[a, b]`. Errors when
/// `f(a)` and `f(b)` have the same sign, when the bracket is not finite, when `xtol ≤ 0`, when
/// `f` returns NaN, or when `max_iter` iterations do not suffice.
pub fn brent(
    mut f: impl FnMut(f64) -> f64,
    a: f64,
    b: f64,
    xtol: f64,
    max_iter: usize,
) -> Result<f64> {
    let (mut fa, mut fb) = match check_bracket(&mut f, a, b, xtol, "brent")? {
        Ok(v) => v,
        Err(root) => return Ok(root),
    };
    let (mut a, mut b) = (a, b);
    // c is the previous iterate on the other side of the root from b.
    let (mut c, mut fc) = (a, fa);
    let mut d = b - a;
    let mut e = d;
    for _ in 0..max_iter {
        if fb.signum() == fc.signum() {
            c = a;
            fc = fa;
            d = b - a;
            e = d;
        }
        if fc.abs() < fb.abs() {
            a = b;
            b = c;
            c = a;
            fa = fb;
            fb = fc;
            fc = fa;
        }
        let tol = 2.0 * f64::EPSILON * b.abs() + 0.5 * xtol;
        let m = 0.5 * (c - b);
        if m.abs() <= tol || fb == 0.0 {
            return Ok(b);
        }
        if e.abs() >= tol && fa.abs() > fb.abs() {
            // Interpolate: secant when only two distinct points, inverse quadratic otherwise.
            let s = fb / fa;
            let (mut p, mut q);
            if a == c {
                p = 2.0 * m * s;
                q = 1.0 - s;
            } else {
                let qa = fa / fc;
                let r = fb / fc;
                p = s * (2.0 * m * qa * (qa - r) - (b - a) * (r - 1.0));
                q = (qa - 1.0) * (r - 1.0) * (s - 1.0);
            }
            if p > 0.0 {
                q = -q;
            } else {
                p = -p;
            }
            if 2.0 * p < (3.0 * m * q - (tol * q).abs()).min((e * q).abs()) {
                e = d;
                d = p / q;
            } else {
                d = m;
                e = m;
            }
        } else {
            d = m;
            e = m;
        }
        a = b;
        fa = fb;
        b += if d.abs() > tol { d } else { tol.copysign(m) };
        fb = f(b);
        if fb.is_nan() {
            return Err(Error::numerical(format!("brent: f({b}) is NaN")));
        }
    }
    Err(Error::numerical(format!(
        "brent: no convergence to xtol = {xtol} in {max_iter} iterations"
    )))
}

/// Bisection: halves the bracket until it is shorter than `2·xtol` and returns its midpoint.
///
/// Same contract and errors as [`brent`]; slower but immune to any misbehaviour of `f`
/// between sign changes.
pub fn bisect(
    mut f: impl FnMut(f64) -> f64,
    a: f64,
    b: f64,
    xtol: f64,
    max_iter: usize,
) -> Result<f64> {
    let (fa, _) = match check_bracket(&mut f, a, b, xtol, "bisect")? {
        Ok(v) => v,
        Err(root) => return Ok(root),
    };
    let (mut lo, mut hi) = (a, b);
    let lo_negative = fa < 0.0;
    for _ in 0..max_iter {
        let mid = 0.5 * (lo + hi);
        if (hi - lo).abs() <= 2.0 * xtol || mid == lo || mid == hi {
            return Ok(mid);
        }
        let fm = f(mid);
        if fm.is_nan() {
            return Err(Error::numerical(format!("bisect: f({mid}) is NaN")));
        }
        if fm == 0.0 {
            return Ok(mid);
        }
        if (fm < 0.0) == lo_negative {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Err(Error::numerical(format!(
        "bisect: no convergence to xtol = {xtol} in {max_iter} iterations"
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brent_finds_known_roots_to_tolerance() {
        // (f, a, b, root)
        type Case = (fn(f64) -> f64, f64, f64, f64);
        let cases: [Case; 5] = [
            (|x| x * x - 2.0, 0.0, 2.0, std::f64::consts::SQRT_2),
            (|x| x.cos() - x, 0.0, 1.0, 0.739_085_133_215_160_6),
            (|x| x.exp() - 10.0, -5.0, 5.0, 10f64.ln()),
            (|x| (x - 1.0).powi(3), -3.0, 4.0, 1.0),
            // Infinite slope at the root: exercises the bisection fallback.
            (
                |x| (x - 0.3).signum() * (x - 0.3).abs().sqrt(),
                0.0,
                1.0,
                0.3,
            ),
        ];
        for (f, a, b, root) in cases {
            let r = brent(f, a, b, 1e-13, 200).unwrap();
            assert!((r - root).abs() < 1e-12, "root {r} vs {root}");
            // Also with the bracket given backwards.
            let r = brent(f, b, a, 1e-13, 200).unwrap();
            assert!((r - root).abs() < 1e-12, "reversed: root {r} vs {root}");
            let r = bisect(f, a, b, 1e-13, 200).unwrap();
            assert!((r - root).abs() < 1e-12, "bisect root {r} vs {root}");
        }
    }

    #[test]
    fn brent_beats_bisection_on_smooth_functions() {
        let mut calls_brent = 0;
        let mut calls_bisect = 0;
        brent(
            |x| {
                calls_brent += 1;
                x.cos() - x
            },
            0.0,
            1.0,
            1e-14,
            100,
        )
        .unwrap();
        bisect(
            |x| {
                calls_bisect += 1;
                x.cos() - x
            },
            0.0,
            1.0,
            1e-14,
            100,
        )
        .unwrap();
        assert!(calls_brent < 15, "{calls_brent}");
        assert!(calls_bisect > 40, "{calls_bisect}");
    }

    #[test]
    fn exact_roots_at_the_ends_are_returned() {
        assert_eq!(brent(|x| x - 1.0, 1.0, 2.0, 1e-12, 10).unwrap(), 1.0);
        assert_eq!(bisect(|x| x - 2.0, 1.0, 2.0, 1e-12, 10).unwrap(), 2.0);
    }

    #[test]
    fn bad_brackets_are_clear_errors() {
        let e = brent(|x| x * x + 1.0, -1.0, 1.0, 1e-12, 100).unwrap_err();
        assert!(e.to_string().contains("no sign change"), "{e}");
        let e = bisect(|x| x * x + 1.0, -1.0, 1.0, 1e-12, 100).unwrap_err();
        assert!(e.to_string().contains("no sign change"), "{e}");
        assert!(brent(|x| x, f64::NEG_INFINITY, 1.0, 1e-12, 100).is_err());
        assert!(brent(|x| x, -1.0, 1.0, 0.0, 100).is_err());
        assert!(bisect(|_| f64::NAN, -1.0, 1.0, 1e-12, 100).is_err());
        // Too few iterations is reported, not silently returned.
        let e = bisect(|x| x - 0.123, 0.0, 1.0, 1e-15, 5).unwrap_err();
        assert!(e.to_string().contains("no convergence"), "{e}");
    }
}
