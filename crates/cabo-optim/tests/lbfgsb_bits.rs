//! L-BFGS-B keeps its bits: a fixed, varied set of problems (Rosenbrock, convex and
//! indefinite quadratics, multimodal, barely smooth, ill-conditioned, nearly
//! one-dimensional and noisy objectives in 1 to 32 dimensions, over open, closed,
//! half-open and degenerate boxes, with 1 to 10 correction pairs), run through `minimize`
//! and `minimize_lockstep`, hashes every point the solver evaluates and every result it
//! returns. Any change to any bit of any iterate changes it; a change that moves it on
//! purpose says in its commit how the moved results compare with the old ones.

// Numeric test objectives index several parallel arrays at once.
#![allow(clippy::needless_range_loop)]

use cabo_core::Rng;
use cabo_optim::lbfgsb::{BatchObjectiveFn, LbfgsbOptions, Minimum, ObjectiveFn, Tolerances};

/// The signature of `minimize`.
pub type Minimize = fn(&mut ObjectiveFn<'_>, &[f64], &[f64], &[f64], &LbfgsbOptions) -> Minimum;
/// The signature of `minimize_lockstep` for starts held as vectors.
pub type Lockstep =
    fn(&mut BatchObjectiveFn<'_>, &[Vec<f64>], &[f64], &[f64], &LbfgsbOptions) -> Vec<Minimum>;

/// FNV-1a over 64-bit words.
struct Fnv(u64);

impl Fnv {
    fn new() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    fn word(&mut self, w: u64) {
        for b in w.to_le_bytes() {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    fn floats(&mut self, v: &[f64]) {
        for x in v {
            self.word(x.to_bits());
        }
    }

    fn minimum(&mut self, m: &Minimum) {
        self.floats(&m.x);
        self.word(m.value.to_bits());
        self.word(m.iterations as u64);
        self.word(m.evaluations as u64);
        self.word(u64::from(m.converged));
    }
}

/// One objective of the set.
struct Problem {
    kind: usize,
    n: usize,
    a: Vec<f64>,
    b: Vec<f64>,
    c: Vec<f64>,
}

/// How many objective kinds the random cases draw from.
const KINDS: usize = 11;
/// The kind whose second half of coordinates repeats the first half scaled by 2.
const DOUBLED: usize = 11;

impl Problem {
    fn new(kind: usize, n: usize, rng: &mut Rng) -> Self {
        let mut a = vec![0.0; n * n];
        match kind {
            // SPD: QᵀQ + 0.1 I.
            1 => {
                let q: Vec<f64> = (0..n * n).map(|_| normal(rng)).collect();
                for i in 0..n {
                    for j in 0..n {
                        a[i * n + j] = (0..n).map(|k| q[k * n + i] * q[k * n + j]).sum::<f64>();
                    }
                    a[i * n + i] += 0.1;
                }
            }
            // Symmetric indefinite.
            2 => {
                for i in 0..n {
                    for j in 0..=i {
                        let v = normal(rng);
                        a[i * n + j] = v;
                        a[j * n + i] = v;
                    }
                }
            }
            _ => {}
        }
        let b = (0..n).map(|_| 3.0 * normal(rng)).collect();
        let c = (0..n).map(|_| rng.uniform()).collect();
        Problem { kind, n, a, b, c }
    }

    // One function because it is the problem set's table of objectives: one arm per kind,
    // each under the comment saying what it is, selected by the `kind` number the cases
    // draw. The hashes pin every bit these arms compute.
    fn value_grad(&self, x: &[f64], g: &mut [f64]) -> f64 {
        let (n, a, b, c) = (self.n, &self.a, &self.b, &self.c);
        match self.kind {
            0 => {
                g.fill(0.0);
                let mut f = 0.0;
                for i in 0..n.saturating_sub(1) {
                    let p = x[i + 1] - x[i] * x[i];
                    let q = 1.0 - x[i];
                    f += 100.0 * p * p + q * q;
                    g[i] += -400.0 * p * x[i] - 2.0 * q;
                    g[i + 1] += 200.0 * p;
                }
                if n == 1 {
                    g[0] = 2.0 * (x[0] - 1.0);
                    f = (x[0] - 1.0) * (x[0] - 1.0);
                }
                f
            }
            1 | 2 => {
                let mut f = 0.0;
                for i in 0..n {
                    let ax: f64 = (0..n).map(|j| a[i * n + j] * x[j]).sum();
                    g[i] = ax - b[i];
                    f += 0.5 * x[i] * ax - b[i] * x[i];
                }
                f
            }
            3 => awkward(x, g),
            4 => {
                let mut v = 0.0;
                let mut sum = 0.0;
                for i in 0..n {
                    let p = 3.0 + 2.0 * i as f64;
                    let q = 0.7 * i as f64 + b[i];
                    v += sin(p * x[i] + q);
                    g[i] = p * cos(p * x[i] + q);
                    sum += x[i];
                }
                v += 0.5 * sin(5.0 * sum);
                let gs = 2.5 * cos(5.0 * sum);
                for gi in g.iter_mut() {
                    *gi += gs;
                }
                v
            }
            // Barely smooth: |t|^1.5 with a coupling term; tiny curvature near the kinks.
            5 => {
                let mut v = 0.0;
                for i in 0..n {
                    let t = x[i] - c[i];
                    v += t.abs() * t.abs().sqrt() + 0.01 * x[i] * x[(i + 1) % n];
                    g[i] = 1.5 * t.abs().sqrt() * t.signum();
                }
                for i in 0..n {
                    g[i] += 0.01 * x[(i + 1) % n] + 0.01 * x[(i + n - 1) % n];
                }
                v
            }
            // Ill-conditioned with a quartic coupling.
            6 => {
                let mut v = 0.0;
                let s: f64 = x.iter().sum();
                for i in 0..n {
                    let q = 1.0 + i as f64;
                    let w = q * q * q * q;
                    let t = x[i] - c[i];
                    v += w * t * t;
                    g[i] = 2.0 * w * t + 0.04 * s * s * s;
                }
                v + 0.01 * s * s * s * s
            }
            // Minus a sum of Gaussian bumps (flat far away, like an acquisition).
            7 => {
                g.fill(0.0);
                let mut v = 0.0;
                for k in 0..3 {
                    let mut r2 = 0.0;
                    for i in 0..n {
                        let t = x[i] - (c[i] + 0.3 * k as f64 * b[i]).fract();
                        r2 += t * t;
                    }
                    let e = exp(-r2 / (0.05 * (k + 1) as f64 * n as f64));
                    v -= e;
                    for i in 0..n {
                        let t = x[i] - (c[i] + 0.3 * k as f64 * b[i]).fract();
                        g[i] += e * 2.0 * t / (0.05 * (k + 1) as f64 * n as f64);
                    }
                }
                v
            }
            // Nearly one-dimensional: every step points along much the same direction, so the
            // stored pairs are close to dependent.
            9 => {
                let t: f64 = (0..n).map(|i| b[i] * x[i]).sum::<f64>() - 1.0;
                let dphi = 4.0 * t * t * t + 3.0 * cos(3.0 * t);
                let mut v = t * t * t * t + sin(3.0 * t);
                for i in 0..n {
                    v += 1e-9 * x[i] * x[i];
                    g[i] = dphi * b[i] + 2e-9 * x[i];
                }
                v
            }
            // A quadratic whose gradient carries deterministic noise (a hash of the point):
            // curvature pairs of every sign and size.
            10 => {
                let mut v = 0.0;
                for i in 0..n {
                    let t = x[i] - c[i];
                    let mut h = Fnv::new();
                    h.floats(x);
                    h.word(i as u64);
                    let noise = (h.0 >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
                    v += (1.0 + i as f64) * t * t;
                    g[i] = 2.0 * (1.0 + i as f64) * t + 0.3 * noise * b[i];
                }
                v
            }
            // φᵢ(xᵢ) + 4·φᵢ(x_{h+i}/2) for i < h = n/2 (and φ of a last odd coordinate), with
            // multimodal φᵢ: from x_{h+i} = 2xᵢ the solver keeps every quantity of
            // coordinate h + i exactly twice that of i, so both reach their bounds at the
            // same step with different gradients.
            DOUBLED => {
                let h = n / 2;
                let mut v = 0.0;
                for i in 0..n {
                    let (j, scale) = if i < h || i == 2 * h {
                        (i, 1.0)
                    } else {
                        (i - h, 2.0)
                    };
                    let t = x[i] / scale - b[j];
                    v += scale * scale * (t * t - 3.0 * cos(2.0 * t));
                    g[i] = scale * (2.0 * t + 6.0 * sin(2.0 * t));
                }
                v
            }
            // Linear: every variable runs to a bound (or the search to infinity).
            _ => {
                let mut v = 0.0;
                for i in 0..n {
                    v += b[i] * x[i] + 1e-3 * x[i] * x[i] * c[i];
                    g[i] = b[i] + 2e-3 * x[i] * c[i];
                }
                v
            }
        }
    }
}

/// An approximately standard normal draw (Irwin–Hall from four uniforms): the problem set
/// uses only correctly rounded operations, so its bits do not depend on the platform's libm.
fn normal(rng: &mut Rng) -> f64 {
    let s = rng.uniform() + rng.uniform() + rng.uniform() + rng.uniform();
    (s - 2.0) * 3f64.sqrt()
}

/// `(sin t, cos t)` from `+ − × ÷` only (range reduction, a Taylor series at t/8 and three
/// angle doublings), for the same reason as [`normal`].
fn sin_cos(t: f64) -> (f64, f64) {
    let tau = std::f64::consts::TAU;
    let h = (t - (t / tau).round() * tau) / 8.0;
    let h2 = h * h;
    let (mut s, mut c) = (0.0, 0.0);
    let (mut ts, mut tc) = (h, 1.0);
    for k in 0..8 {
        s += ts;
        c += tc;
        let k = k as f64;
        ts *= -h2 / ((2.0 * k + 2.0) * (2.0 * k + 3.0));
        tc *= -h2 / ((2.0 * k + 1.0) * (2.0 * k + 2.0));
    }
    for _ in 0..3 {
        (s, c) = (2.0 * s * c, c * c - s * s);
    }
    (s, c)
}

fn sin(t: f64) -> f64 {
    sin_cos(t).0
}

fn cos(t: f64) -> f64 {
    sin_cos(t).1
}

/// `eˣ` for `x ≤ 0` from `+ − × ÷` only (a Taylor series at `x/2ᵏ` squared `k` times).
fn exp(x: f64) -> f64 {
    if x < -700.0 {
        return 0.0;
    }
    let mut k = 0;
    let mut y = x;
    while y < -0.5 {
        y /= 2.0;
        k += 1;
    }
    let (mut e, mut term) = (0.0, 1.0);
    for j in 1..16 {
        e += term;
        term *= y / j as f64;
    }
    for _ in 0..k {
        e *= e;
    }
    e
}

/// Multimodal, +∞ with a NaN gradient where `x₀ > 1.5`, and with a NaN gradient (finite
/// value) where `x₁ < −1.5`.
fn awkward(x: &[f64], g: &mut [f64]) -> f64 {
    if x[0] > 1.5 {
        g.fill(f64::NAN);
        return f64::INFINITY;
    }
    let n = x.len();
    let mut v = 0.0;
    for i in 0..n {
        let t = x[i] - 0.3 * i as f64;
        v += t * t - 3.0 * cos(2.0 * t) + 0.1 * x[i] * x[(i + 1) % n];
        g[i] = 2.0 * t + 6.0 * sin(2.0 * t);
    }
    for i in 0..n {
        g[i] += 0.1 * x[(i + 1) % n] + 0.1 * x[(i + n - 1) % n];
    }
    if n > 1 && x[1] < -1.5 {
        g[1] = f64::NAN;
    }
    v
}

/// A random box of one of four shapes.
fn random_box(n: usize, rng: &mut Rng) -> (Vec<f64>, Vec<f64>) {
    let shape = rng.below(4);
    let mut lo = vec![f64::NEG_INFINITY; n];
    let mut hi = vec![f64::INFINITY; n];
    for i in 0..n {
        match shape {
            0 => {}
            1 => {
                lo[i] = -2.0 * rng.uniform();
                hi[i] = 2.0 * rng.uniform();
            }
            2 => {
                let a = 2.0 * normal(rng);
                match rng.below(6) {
                    0 => (lo[i], hi[i]) = (a, a),
                    1 => lo[i] = a,
                    2 => hi[i] = a,
                    _ => (lo[i], hi[i]) = (a, a + 2.0 * rng.uniform()),
                }
            }
            _ => (lo[i], hi[i]) = (0.0, 1.0),
        }
    }
    (lo, hi)
}

fn random_options(rng: &mut Rng) -> LbfgsbOptions {
    let tolerances = match rng.below(3) {
        0 => Tolerances::TIGHT,
        1 => Tolerances::SCIPY,
        _ => Tolerances {
            pgtol: 1e-13,
            ftol: 0.0,
        },
    };
    LbfgsbOptions {
        max_iters: [3, 40, 200, 400][rng.below(4) as usize],
        memory: 1 + rng.below(10) as usize,
        tolerances,
    }
}

fn random_start(n: usize, rng: &mut Rng) -> Vec<f64> {
    (0..n).map(|_| 1.5 * normal(rng)).collect()
}

const DIMS: [usize; 12] = [1, 2, 3, 4, 5, 7, 8, 12, 16, 20, 24, 32];

/// One hash per case: the bits of every point the solver evaluates and of every result,
/// over `cases` single searches and `cases / 4` lockstep runs.
pub fn record(minimize: Minimize, lockstep: Lockstep, cases: usize) -> Vec<u64> {
    let mut out = Vec::new();
    let mut rng = Rng::new(20_240_611);
    for case in 0..cases {
        let n = DIMS[case % DIMS.len()];
        let kind = (case / DIMS.len()) % KINDS;
        let problem = Problem::new(kind, n, &mut rng);
        let (lo, hi) = random_box(n, &mut rng);
        let opts = random_options(&mut rng);
        let x0 = random_start(n, &mut rng);
        out.push(hashed_search(minimize, &problem, &x0, &lo, &hi, &opts));
    }
    // Indefinite quadratics over boxes open on some sides, with little memory: the rare
    // runs where the Schur complement of the middle matrix fails and LU takes over.
    for case in 0..cases / 4 {
        let n = DIMS[case % DIMS.len()];
        let problem = Problem::new(2, n, &mut rng);
        let (lo, hi) = random_box(n, &mut rng);
        let mut opts = random_options(&mut rng);
        opts.memory = 2 + case % 3;
        let x0 = random_start(n, &mut rng);
        out.push(hashed_search(minimize, &problem, &x0, &lo, &hi, &opts));
    }
    for case in 0..cases / 4 {
        let n = DIMS[case % DIMS.len()];
        let kind = (case / DIMS.len() + case) % KINDS;
        let problem = Problem::new(kind, n, &mut rng);
        let (lo, hi) = random_box(n, &mut rng);
        let opts = random_options(&mut rng);
        let starts: Vec<Vec<f64>> = (0..1 + case % 9)
            .map(|_| random_start(n, &mut rng))
            .collect();
        let mut h = Fnv::new();
        let mut f = |xs: &[f64], values: &mut [f64], grads: &mut [f64]| {
            h.floats(xs);
            for r in 0..values.len() {
                values[r] =
                    problem.value_grad(&xs[r * n..(r + 1) * n], &mut grads[r * n..(r + 1) * n]);
            }
        };
        for m in lockstep(&mut f, &starts, &lo, &hi, &opts) {
            h.minimum(&m);
        }
        out.push(h.0);
    }
    // Coordinates paired with a copy scaled by 2 (box and start too): breakpoints of the
    // Cauchy path tie, so the order in which ties are taken decides the iterates.
    for case in 0..cases / 8 {
        let n = DIMS[case % DIMS.len()].max(2);
        let half = n / 2;
        let problem = Problem::new(DOUBLED, n, &mut rng);
        let (mut lo, mut hi) = random_box(n, &mut rng);
        let opts = random_options(&mut rng);
        let mut x0 = random_start(n, &mut rng);
        for i in 0..half {
            let j = half + i;
            (lo[j], hi[j], x0[j]) = (2.0 * lo[i], 2.0 * hi[i], 2.0 * x0[i]);
        }
        out.push(hashed_search(minimize, &problem, &x0, &lo, &hi, &opts));
    }
    out
}

/// The hash of one search's evaluated points and result.
fn hashed_search(
    minimize: Minimize,
    problem: &Problem,
    x0: &[f64],
    lo: &[f64],
    hi: &[f64],
    opts: &LbfgsbOptions,
) -> u64 {
    let mut h = Fnv::new();
    let mut f = |x: &[f64], g: &mut [f64]| {
        h.floats(x);
        problem.value_grad(x, g)
    };
    let m = minimize(&mut f, x0, lo, hi, opts);
    h.minimum(&m);
    h.0
}

/// The hash of all case hashes.
pub fn fingerprint(cases: &[u64]) -> u64 {
    let mut h = Fnv::new();
    for &c in cases {
        h.word(c);
    }
    h.0
}

/// Single searches in the set (plus a quarter as many indefinite quadratics and lockstep
/// runs).
pub const CASES: usize = 8000;

#[test]
fn every_iterate_keeps_its_bits() {
    use cabo_optim::lbfgsb::{minimize, minimize_lockstep};
    let cases = record(minimize, minimize_lockstep::<Vec<f64>>, CASES);
    assert_eq!(fingerprint(&cases), FINGERPRINT);
}

/// [`fingerprint`] of the set.
const FINGERPRINT: u64 = 0xe799_6d28_6581_7771;
