//! Forward-mode dual numbers of a fixed width, for the small per-node computations of a
//! scenario tree.
//!
//! A tree node's value depends on its own decision point and on its ancestors' (through the
//! fantasies), i.e. on at most `N·d` numbers, and through them only on the posterior means
//! and covariances of its path's points, at most `N(N + 3)` numbers for the two beliefs.
//! Carrying derivatives with respect to either forward through the node's small joint
//! Cholesky factor is exact and costs `W` flops per operation; `W = 0` gives plain values at
//! no extra cost (raw-sample scoring).

use std::ops::{Add, Div, Mul, Sub};

/// A value with its gradient with respect to up to `W` variables.
#[derive(Debug, Clone, Copy)]
pub(crate) struct D<const W: usize> {
    pub v: f64,
    pub g: [f64; W],
}

impl<const W: usize> D<W> {
    /// A constant.
    #[inline]
    pub fn c(v: f64) -> Self {
        D { v, g: [0.0; W] }
    }

    /// `f(self)` given `f` and `f'` at `self.v` (chain rule).
    #[inline]
    pub fn chain(self, f: f64, df: f64) -> Self {
        let mut g = self.g;
        for x in g.iter_mut() {
            *x *= df;
        }
        D { v: f, g }
    }

    #[inline]
    pub fn sqrt(self) -> Self {
        let s = self.v.sqrt();
        self.chain(s, 0.5 / s)
    }

    #[inline]
    pub fn exp(self) -> Self {
        let e = self.v.exp();
        self.chain(e, e)
    }

    #[inline]
    pub fn ln(self) -> Self {
        self.chain(self.v.ln(), 1.0 / self.v)
    }

    /// `self + a·b` (fused to avoid a temporary).
    #[inline]
    pub fn add_mul(self, a: D<W>, b: D<W>) -> Self {
        let mut g = self.g;
        for ((x, ga), gb) in g.iter_mut().zip(&a.g).zip(&b.g) {
            *x += a.v * gb + b.v * ga;
        }
        D {
            v: self.v + a.v * b.v,
            g,
        }
    }

    /// `self + s·a` for a constant `s`.
    #[inline]
    pub fn add_scaled(self, s: f64, a: D<W>) -> Self {
        let mut g = self.g;
        for (x, ga) in g.iter_mut().zip(&a.g) {
            *x += s * ga;
        }
        D {
            v: self.v + s * a.v,
            g,
        }
    }
}

impl<const W: usize> Add for D<W> {
    type Output = D<W>;
    #[inline]
    fn add(self, o: D<W>) -> D<W> {
        self.add_scaled(1.0, o)
    }
}

impl<const W: usize> Sub for D<W> {
    type Output = D<W>;
    #[inline]
    fn sub(self, o: D<W>) -> D<W> {
        self.add_scaled(-1.0, o)
    }
}

impl<const W: usize> Mul for D<W> {
    type Output = D<W>;
    #[inline]
    fn mul(self, o: D<W>) -> D<W> {
        D::c(0.0).add_mul(self, o)
    }
}

impl<const W: usize> Div for D<W> {
    type Output = D<W>;
    #[inline]
    fn div(self, o: D<W>) -> D<W> {
        let inv = 1.0 / o.v;
        let v = self.v * inv;
        let mut g = self.g;
        for (x, go) in g.iter_mut().zip(&o.g) {
            *x = (*x - v * go) * inv;
        }
        D { v, g }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derivatives_of_a_composite_match_finite_differences() {
        // f(a, b) = ln(a·b + 1)·exp(√a) / b at (0.7, 1.3).
        let f = |a: D<2>, b: D<2>| (a * b + D::c(1.0)).ln() * a.sqrt().exp() / b;
        let (a0, b0) = (0.7, 1.3);
        let a = D {
            v: a0,
            g: [1.0, 0.0],
        };
        let b = D {
            v: b0,
            g: [0.0, 1.0],
        };
        let r = f(a, b);
        let h = 1e-6;
        let fv = |x: f64, y: f64| f(D::c(x), D::c(y)).v;
        let da = (fv(a0 + h, b0) - fv(a0 - h, b0)) / (2.0 * h);
        let db = (fv(a0, b0 + h) - fv(a0, b0 - h)) / (2.0 * h);
        assert!((r.g[0] - da).abs() < 1e-8 * da.abs().max(1.0));
        assert!((r.g[1] - db).abs() < 1e-8 * db.abs().max(1.0));
    }
}
