//! Quadrature rules used by the reward integrals.
//!
//! * [`GaussLegendre`]: nodes and weights by Newton iteration on the Legendre recurrence
//!   (nodes to machine precision for any order used here).
//! * [`AbsIntegrator`]: `∫₀¹ |g(t)| dt` for a smooth `g` known at Gauss nodes. The maximum of
//!   two class rewards is `(E f₊ + E f₋)/2 + |E f₊ − E f₋|/2`, and the absolute value has a kink
//!   where the classes swap. A plain Gauss rule converges only like `O(Q⁻²)` across a kink, so
//!   we interpolate `g` by its Legendre series through the nodes, locate its sign changes by
//!   bisection on the series, and integrate the series exactly on each piece: the error is then
//!   that of the polynomial interpolant, spectrally small for the polynomial-in-`t` laws of the
//!   lattice compound Poisson process.

/// Gauss–Legendre nodes and weights on `[0, 1]`.
#[derive(Debug, Clone)]
pub struct GaussLegendre {
    /// Nodes in `(0, 1)`, increasing.
    pub nodes: Vec<f64>,
    /// Weights (summing to 1).
    pub weights: Vec<f64>,
}

/// `P_n(x)` and `P_n'(x)` by the three-term recurrence.
fn legendre_and_derivative(n: usize, x: f64) -> (f64, f64) {
    let (mut p0, mut p1) = (1.0, x);
    if n == 0 {
        return (1.0, 0.0);
    }
    for k in 2..=n {
        let kf = k as f64;
        let p2 = ((2.0 * kf - 1.0) * x * p1 - (kf - 1.0) * p0) / kf;
        p0 = p1;
        p1 = p2;
    }
    let dp = n as f64 * (x * p1 - p0) / (x * x - 1.0);
    (p1, dp)
}

impl GaussLegendre {
    /// The `q`-point rule (`q ≥ 1`), mapped to `[0, 1]`.
    pub fn new(q: usize) -> Self {
        let q = q.max(1);
        let mut nodes = vec![0.0; q];
        let mut weights = vec![0.0; q];
        for i in 0..q {
            // Tricomi's initial guess, then Newton; converges in a handful of steps.
            let mut x = (std::f64::consts::PI * (i as f64 + 0.75) / (q as f64 + 0.5)).cos();
            for _ in 0..100 {
                let (p, dp) = legendre_and_derivative(q, x);
                let dx = p / dp;
                x -= dx;
                if dx.abs() < 1e-16 {
                    break;
                }
            }
            let (_, dp) = legendre_and_derivative(q, x);
            let w = 2.0 / ((1.0 - x * x) * dp * dp);
            // Map [-1,1] → [0,1]; the guess runs from +1 downwards, so store reversed.
            nodes[q - 1 - i] = 0.5 * (x + 1.0);
            weights[q - 1 - i] = 0.5 * w;
        }
        GaussLegendre { nodes, weights }
    }

    /// `∫₀¹ f` for values `f(nodes[i])`.
    pub fn sum(&self, values: &[f64]) -> f64 {
        self.weights.iter().zip(values).map(|(w, v)| w * v).sum()
    }
}

/// Exact integration of `|ĝ|` where `ĝ` is the Legendre interpolant of node values.
#[derive(Debug, Clone)]
pub struct AbsIntegrator {
    rule: GaussLegendre,
    /// `proj[n][i] = (2n+1)/2 · w_i · P_n(x_i)` on `[-1, 1]`: coefficients by discrete projection.
    proj: Vec<f64>,
}

impl AbsIntegrator {
    /// An integrator on `q` Gauss nodes.
    pub fn new(q: usize) -> Self {
        let rule = GaussLegendre::new(q);
        let q = rule.nodes.len();
        let mut proj = vec![0.0; q * q];
        for (i, (&t, &w)) in rule.nodes.iter().zip(&rule.weights).enumerate() {
            let x = 2.0 * t - 1.0;
            let (mut p0, mut p1) = (1.0, x);
            for n in 0..q {
                let pn = if n == 0 {
                    1.0
                } else if n == 1 {
                    x
                } else {
                    let nf = n as f64;
                    let p2 = ((2.0 * nf - 1.0) * x * p1 - (nf - 1.0) * p0) / nf;
                    p0 = p1;
                    p1 = p2;
                    p2
                };
                // Weight on [-1,1] is 2w.
                proj[n * q + i] = (2.0 * n as f64 + 1.0) / 2.0 * (2.0 * w) * pn;
            }
        }
        AbsIntegrator { rule, proj }
    }

    /// The underlying Gauss rule (evaluate `g` at its nodes).
    pub fn rule(&self) -> &GaussLegendre {
        &self.rule
    }

    /// `∫₀¹ |g|` from `g` at the nodes; `coef` is scratch of the rule's length.
    pub fn integrate_abs(&self, values: &[f64], coef: &mut [f64]) -> f64 {
        let q = self.rule.nodes.len();
        let (mut pos, mut neg) = (false, false);
        for &v in values {
            pos |= v > 0.0;
            neg |= v < 0.0;
        }
        if !(pos && neg) {
            // No sign change among the nodes: treat g as one-signed (the Gauss sum).
            return self.rule.sum(values).abs();
        }
        for (n, c) in coef.iter_mut().enumerate().take(q) {
            let row = &self.proj[n * q..(n + 1) * q];
            *c = row.iter().zip(values).map(|(p, v)| p * v).sum();
        }
        let coef = &coef[..q];
        // Walk the sample points (−1, the nodes, +1); at each sign change of the series find
        // the root by the Illinois variant of regula falsi (superlinear, bracketed), and add
        // the absolute integral of the piece that ends there.
        let mut total = 0.0;
        let mut left_int = 0.0;
        // At the nodes the interpolant equals the data, so only the ends need the series.
        let (mut prev_x, mut prev_v) = (-1.0, series(coef, -1.0).0);
        let ends = std::iter::once((1.0, series(coef, 1.0).0));
        let samples = self
            .rule
            .nodes
            .iter()
            .zip(values)
            .map(|(t, &v)| (2.0 * t - 1.0, v))
            .chain(ends);
        for (x, v) in samples {
            if (prev_v < 0.0 && v > 0.0) || (prev_v > 0.0 && v < 0.0) {
                let root = illinois(coef, prev_x, prev_v, x, v);
                let int = series(coef, root).1;
                total += (int - left_int).abs();
                left_int = int;
            }
            if v != 0.0 {
                prev_v = v;
                prev_x = x;
            }
        }
        total += (series(coef, 1.0).1 - left_int).abs();
        // Map ∫_{-1}^{1} back to ∫_0^1.
        0.5 * total
    }
}

/// Root of the series in `[a, b]` where it changes sign, to about 1e-15.
fn illinois(coef: &[f64], mut a: f64, mut fa: f64, mut b: f64, mut fb: f64) -> f64 {
    let mut side = 0;
    for _ in 0..100 {
        let c = (a * fb - b * fa) / (fb - fa);
        if !(c > a.min(b) && c < a.max(b)) || (b - a).abs() < 1e-15 {
            return 0.5 * (a + b);
        }
        let fc = series(coef, c).0;
        if fc == 0.0 {
            return c;
        }
        if (fc > 0.0) == (fb > 0.0) {
            b = c;
            fb = fc;
            if side == -1 {
                fa *= 0.5;
            }
            side = -1;
        } else {
            a = c;
            fa = fc;
            if side == 1 {
                fb *= 0.5;
            }
            side = 1;
        }
        if (b - a).abs() < 1e-15 * (1.0 + a.abs()) {
            break;
        }
    }
    let c = (a * fb - b * fa) / (fb - fa);
    if c.is_finite() { c } else { 0.5 * (a + b) }
}

/// The Legendre series `Σ a_n P_n(x)` and its antiderivative from −1, at `x` (no allocation:
/// it runs inside the bisection).
fn series(coef: &[f64], x: f64) -> (f64, f64) {
    // ∫_{-1}^x P_0 = x + 1; ∫_{-1}^x P_n = (P_{n+1} − P_{n−1})/(2n+1) for n ≥ 1.
    let mut val = coef[0];
    let mut int = coef[0] * (x + 1.0);
    let (mut prev, mut cur) = (1.0, x);
    for (n, &c) in coef.iter().enumerate().skip(1) {
        let nf = n as f64;
        let next = ((2.0 * nf + 1.0) * x * cur - nf * prev) / (nf + 1.0);
        val += c * cur;
        int += c * (next - prev) / (2.0 * nf + 1.0);
        prev = cur;
        cur = next;
    }
    (val, int)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gauss_legendre_integrates_polynomials_exactly() {
        let r = GaussLegendre::new(10);
        for k in 0..20 {
            let vals: Vec<f64> = r.nodes.iter().map(|t| t.powi(k)).collect();
            let exact = 1.0 / (k as f64 + 1.0);
            assert!((r.sum(&vals) - exact).abs() < 1e-15, "degree {k}");
        }
    }

    #[test]
    fn abs_integral_of_polynomial_with_kinks_is_exact() {
        // g(t) = (t − 0.3)(t − 0.8): ∫₀¹ |g| computed by hand.
        let a = AbsIntegrator::new(12);
        let vals: Vec<f64> = a
            .rule()
            .nodes
            .iter()
            .map(|t| (t - 0.3) * (t - 0.8))
            .collect();
        let antider = |t: f64| t * t * t / 3.0 - 1.1 * t * t / 2.0 + 0.24 * t;
        let exact = (antider(0.3) - antider(0.0)).abs()
            + (antider(0.8) - antider(0.3)).abs()
            + (antider(1.0) - antider(0.8)).abs();
        let mut scratch = vec![0.0; 12];
        let got = a.integrate_abs(&vals, &mut scratch);
        assert!((got - exact).abs() < 1e-14, "{got} vs {exact}");
    }
}
