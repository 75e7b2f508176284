//! The shared machinery of the synthetic test functions: a [`TestFunction`] written in its
//! own units and maximised, the [`SyntheticProblem`] that maps the unit cube onto its box,
//! scales its output, appends ignored inputs and adds observation noise, and the
//! [`Bounds`] every synthetic spec accepts.

use cabo_core::{Error, Outcome, Problem, ProblemInfo, Query, Result, Rng};
use serde::{Deserialize, Serialize};
use std::fmt::Debug;

/// A deterministic test function in its own (native) units, in maximisation form.
///
/// Minimisation benchmarks (Levy, Rosenbrock, Branin, …) are implemented negated, as the
/// papers' code does, so every function here is maximised.
pub trait TestFunction: Send + Sync + Debug {
    /// Human-readable name, e.g. `ackley(d=4)`.
    fn name(&self) -> String;
    /// Number of inputs the function uses.
    fn dim(&self) -> usize;
    /// f(z).
    fn value(&self, z: &[f64]) -> f64;
    /// f(z), writing ∇f(z) into `grad` (a subgradient at kinks, zero at the optimiser).
    fn value_grad(&self, z: &[f64], grad: &mut [f64]) -> f64;
    /// A global maximiser in native units, where one is published.
    fn maximizer(&self) -> Option<Vec<f64>>;
    /// The global maximum in native units, where it is published.
    fn maximum(&self) -> Option<f64>;
    /// The period `P` seed 001's cosine cost family uses for this function, where that
    /// paper defines one.
    fn cosine_period(&self) -> Option<f64> {
        None
    }
    /// The point x* seed 001's cosine cost family is centred on; the maximiser unless that
    /// paper's code rounds it (Shekel-5 uses 4 in every coordinate).
    fn cosine_center(&self) -> Option<Vec<f64>> {
        self.maximizer()
    }
}

/// An input box as written in a spec: one `[lo, hi]` for every coordinate, or one pair per
/// coordinate (`[[-5, 10], [0, 15]]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Bounds {
    /// The same interval for every coordinate.
    Same([f64; 2]),
    /// One interval per coordinate.
    PerDim(Vec<[f64; 2]>),
}

impl Bounds {
    /// Lower ends and widths for `d` coordinates; `key` names the spec key in errors.
    pub fn resolve(&self, d: usize, key: &str) -> Result<(Vec<f64>, Vec<f64>)> {
        let pairs: Vec<[f64; 2]> = match self {
            Bounds::Same(p) => vec![*p; d],
            Bounds::PerDim(v) => {
                if v.len() != d {
                    return Err(Error::invalid(format!(
                        "{key}: gives {} intervals, the function has {d} inputs",
                        v.len()
                    )));
                }
                v.clone()
            }
        };
        let mut lo = Vec::with_capacity(d);
        let mut width = Vec::with_capacity(d);
        for (i, [a, b]) in pairs.into_iter().enumerate() {
            if !(a.is_finite() && b.is_finite() && a < b) {
                return Err(Error::invalid(format!(
                    "{key}: interval {i} is [{a}, {b}], need finite lo < hi"
                )));
            }
            lo.push(a);
            width.push(b - a);
        }
        Ok((lo, width))
    }
}

/// The options every synthetic problem spec shares, checked in one place.
#[derive(Debug, Clone)]
pub struct SyntheticOptions {
    /// The box (the function's default when `None`).
    pub bounds: Option<Bounds>,
    /// Output multiplier (the function's default when `None`).
    pub scale: Option<f64>,
    /// Ignored inputs appended after the function's own.
    pub dummy_dims: usize,
    /// Standard deviation of Gaussian observation noise on y.
    pub noise_std: f64,
    /// The inputs' names (dummy inputs included), or none for `x0`, `x1`, ….
    pub names: Vec<String>,
}

impl SyntheticOptions {
    /// Checks the options for a function with `d` inputs; `name` prefixes error messages.
    pub fn validate(&self, name: &str, d: usize, default_bounds: &Bounds) -> Result<()> {
        // Before the box, which holds a number per input (dummy inputs included).
        cabo_core::check_count(&format!("{name}.dummy_dims"), self.dummy_dims, DUMMY_DIMS)?;
        self.bounds
            .as_ref()
            .unwrap_or(default_bounds)
            .resolve(d, &format!("{name}.bounds"))?;
        if let Some(s) = self.scale
            && !(s.is_finite() && s > 0.0)
        {
            return Err(Error::invalid(format!(
                "{name}.scale: must be a finite positive number (a negative scale would turn maximisation into minimisation), got {s}"
            )));
        }
        if !(self.noise_std.is_finite() && self.noise_std >= 0.0) {
            return Err(Error::invalid(format!(
                "{name}.noise_std: must be finite and ≥ 0, got {}",
                self.noise_std
            )));
        }
        self.check_names(name, d + self.dummy_dims)
    }

    /// Names, if given, are one per input (`total` of them), distinct, and usable as the
    /// columns of an observations file ([`cabo_core::check_input_names`]).
    fn check_names(&self, name: &str, total: usize) -> Result<()> {
        cabo_core::check_input_names(&format!("{name}.names"), &self.names, total)
    }

    /// Builds the problem around `f` after validating.
    pub fn build(
        &self,
        name: &str,
        f: Box<dyn TestFunction>,
        default_bounds: &Bounds,
        default_scale: f64,
    ) -> Result<SyntheticProblem> {
        let d = f.dim();
        self.validate(name, d, default_bounds)?;
        let (lo, width) = self
            .bounds
            .as_ref()
            .unwrap_or(default_bounds)
            .resolve(d, &format!("{name}.bounds"))?;
        let mut problem = SyntheticProblem::new(
            f,
            lo,
            width,
            self.scale.unwrap_or(default_scale),
            self.dummy_dims,
            self.noise_std,
        )?;
        problem.info.input_names = self.names.clone();
        Ok(problem)
    }
}

/// A [`TestFunction`] posed as a cabo problem on `[0,1]^(d+k)`.
///
/// The first `d` coordinates are mapped affinely onto the box, the last `k` (`dummy_dims`)
/// are ignored by the objective (they are mapped onto the last coordinate's interval by
/// [`Problem::to_native`], so cost functions written in native units still see them).
/// The objective is `scale · f(native(x))`, the observation adds `noise_std · N(0,1)`, and
/// the problem's own cost is 1.
#[derive(Debug)]
pub struct SyntheticProblem {
    f: Box<dyn TestFunction>,
    lo: Vec<f64>,
    width: Vec<f64>,
    scale: f64,
    dummy_dims: usize,
    noise_std: f64,
    info: ProblemInfo,
    optimum: Option<f64>,
}

impl SyntheticProblem {
    /// Poses `f` on the box given by lower ends `lo` and `width`s (one per input of `f`).
    pub fn new(
        f: Box<dyn TestFunction>,
        lo: Vec<f64>,
        width: Vec<f64>,
        scale: f64,
        dummy_dims: usize,
        noise_std: f64,
    ) -> Result<Self> {
        let d = f.dim();
        if lo.len() != d || width.len() != d {
            return Err(Error::invalid(format!(
                "{}: the box has {} coordinates, the function {d}",
                f.name(),
                lo.len()
            )));
        }
        let valid = scale.is_finite() && scale > 0.0 && noise_std.is_finite() && noise_std >= 0.0;
        if !valid {
            return Err(Error::invalid(format!(
                "{}: need scale > 0 and noise_std ≥ 0, got {scale} and {noise_std}",
                f.name()
            )));
        }
        // The published optimum counts only when its maximiser lies inside the box.
        let optimum = match (f.maximizer(), f.maximum()) {
            (Some(z), Some(m))
                if z.iter()
                    .enumerate()
                    .all(|(i, zi)| *zi >= lo[i] - 1e-12 && *zi <= lo[i] + width[i] + 1e-12) =>
            {
                Some(scale * m)
            }
            _ => None,
        };
        let mut name = f.name();
        if dummy_dims > 0 {
            name = format!("{name}+{dummy_dims}");
        }
        let info = ProblemInfo::continuous(name, d + dummy_dims);
        Ok(SyntheticProblem {
            f,
            lo,
            width,
            scale,
            dummy_dims,
            noise_std,
            info,
            optimum,
        })
    }

    /// The wrapped function.
    pub fn function(&self) -> &dyn TestFunction {
        self.f.as_ref()
    }

    /// The output multiplier.
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// Number of ignored inputs appended to the function's own.
    pub fn dummy_dims(&self) -> usize {
        self.dummy_dims
    }

    /// The noise-free objective at a unit-cube point of dimension `d + k`.
    pub fn value(&self, x: &[f64]) -> f64 {
        let z = self.native_f(x);
        self.scale * self.f.value(&z)
    }

    /// The noise-free objective with its gradient with respect to the unit-cube point
    /// (zero in the dummy coordinates).
    pub fn value_grad(&self, x: &[f64], grad: &mut [f64]) -> f64 {
        let d = self.f.dim();
        let z = self.native_f(x);
        let v = self.f.value_grad(&z, &mut grad[..d]);
        for (g, w) in grad[..d].iter_mut().zip(&self.width) {
            *g *= self.scale * w;
        }
        grad[d..].iter_mut().for_each(|g| *g = 0.0);
        self.scale * v
    }

    /// A global maximiser of the objective in unit-cube coordinates (dummy coordinates at
    /// 0.5), when the published one lies inside the box.
    pub fn unit_maximizer(&self) -> Option<Vec<f64>> {
        self.optimum?;
        let z = self.f.maximizer()?;
        let mut x: Vec<f64> = z
            .iter()
            .zip(self.lo.iter().zip(&self.width))
            .map(|(z, (l, w))| (z - l) / w)
            .collect();
        x.resize(x.len() + self.dummy_dims, 0.5);
        Some(x)
    }

    fn native_f(&self, x: &[f64]) -> Vec<f64> {
        x.iter()
            .zip(self.lo.iter().zip(&self.width))
            .map(|(x, (l, w))| l + w * x)
            .collect()
    }

    /// Checks a query: full, of the right length, finite and inside the cube.
    fn check(&self, query: &Query) -> Result<()> {
        check_unit_query(&self.info.name, self.info.dim, query)
    }
}

/// Rejects control-set queries, wrong lengths and points outside `[0,1]^dim`.
pub(crate) fn check_unit_query(name: &str, dim: usize, query: &Query) -> Result<()> {
    if query.control_set.is_some() {
        return Err(Error::invalid(format!(
            "{name}: has no control sets, got a query for control set {:?}",
            query.control_set
        )));
    }
    if query.x.len() != dim {
        return Err(Error::invalid(format!(
            "{name}: query has {} inputs, the problem has {dim}",
            query.x.len()
        )));
    }
    // A little slack for optimisers that land a rounding error outside the cube.
    if let Some((i, v)) = query
        .x
        .iter()
        .enumerate()
        .find(|(_, v)| !(v.is_finite() && **v >= -1e-9 && **v <= 1.0 + 1e-9))
    {
        return Err(Error::invalid(format!(
            "{name}: query coordinate {i} is {v}, outside the unit cube [0,1]"
        )));
    }
    Ok(())
}

impl Problem for SyntheticProblem {
    fn info(&self) -> &ProblemInfo {
        &self.info
    }

    fn evaluate(&self, query: &Query, seed: u64) -> Result<Outcome> {
        self.check(query)?;
        let value = self.value(&query.x);
        let y = if self.noise_std > 0.0 {
            value + self.noise_std * Rng::new(seed).normal()
        } else {
            value
        };
        Ok(Outcome::new(y, 1.0, query.x.clone(), Some(value)))
    }

    fn optimum(&self) -> Option<f64> {
        self.optimum
    }

    fn to_native(&self, x: &[f64]) -> Vec<f64> {
        let d = self.f.dim();
        x.iter()
            .enumerate()
            .map(|(i, x)| {
                let j = i.min(d - 1);
                self.lo[j] + self.width[j] * x
            })
            .collect()
    }

    /// `(z − lo) / width` per coordinate, dummy inputs on the last coordinate's interval as
    /// in [`Problem::to_native`]; exact where the box's ends and width are powers of two
    /// (or zero), within a few ulps elsewhere.
    fn native_to_unit(&self, native: &[f64]) -> Vec<f64> {
        let d = self.f.dim();
        native
            .iter()
            .enumerate()
            .map(|(i, z)| {
                let j = i.min(d - 1);
                (z - self.lo[j]) / self.width[j]
            })
            .collect()
    }
}

/// Rejects a variable dimension of 0 (or below `min`), naming the spec key.
pub(crate) fn check_dim(name: &str, dim: usize, min: usize) -> Result<()> {
    if dim < min {
        return Err(Error::invalid(format!(
            "{name}.dim: must be at least {min}, got {dim}"
        )));
    }
    cabo_core::check_count(&format!("{name}.dim"), dim, min..=MAX_DIM)
}

/// Largest `dim` of a problem: the box and every query hold a number per input, and
/// 10 000 is far past the dimensions BO is used at (the resource limits refuse most
/// specs there anyway, with their own message).
pub const MAX_DIM: usize = 10_000;

/// Range of `dummy_dims`: ignored inputs count as inputs for the box and every model, so
/// they take the bound of [`MAX_DIM`]; seed 004 appends 6.
pub const DUMMY_DIMS: std::ops::RangeInclusive<usize> = 0..=MAX_DIM;

/// Declares a synthetic problem's spec — the shared options (`bounds`, `scale`,
/// `dummy_dims`, `noise_std`), plus `dim` for functions of any dimension — with its
/// `ProblemSpec` impl and catalogue entry, so each function's file holds only mathematics.
///
/// `any_dim: MIN` gives the spec a `dim` field (at least `MIN`); `fixed_dim: D` fixes it.
/// `make` builds the function for a dimension; `bounds` and `scale` are the defaults.
macro_rules! synthetic_spec {
    (
        $spec:ident, $name:literal,
        $(any_dim: $min:literal,)? $(fixed_dim: $fixed:literal,)?
        make: $make:expr, bounds: $bounds:expr, scale: $scale:expr,
        summary: $summary:literal, paper: $paper:literal, example: $example:literal $(,)?
    ) => {
        #[doc = concat!("Spec of the `", $name, "` problem (`problem: ", $example, "`): ", $summary, ".")]
        // The summary is plain text shared with the catalogue (`xtask list`): its brackets
        // are intervals such as [0,1]^d, not links.
        #[allow(rustdoc::broken_intra_doc_links)]
        #[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct $spec {
            $(
                #[doc = concat!("Number of inputs the function uses (at least ", $min, ").")]
                pub dim: usize,
            )?
            /// Native box (one `[lo, hi]` for all coordinates or one per coordinate); the
            /// seeds' box by default.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub bounds: Option<$crate::synthetic::Bounds>,
            /// Output multiplier (> 0); the seeds' scaling by default.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub scale: Option<f64>,
            /// Ignored inputs appended (seed 004 appends 6); default 0.
            #[serde(default)]
            pub dummy_dims: usize,
            /// Gaussian observation-noise standard deviation; default 0.
            #[serde(default)]
            pub noise_std: f64,
            /// The inputs' names, one per input (dummy inputs included), as the columns of
            /// an observations file (`cargo xtask suggest`); `x0`, `x1`, … by default.
            #[serde(default, skip_serializing_if = "Vec::is_empty")]
            pub names: Vec<String>,
        }

        impl $spec {
            fn options(&self) -> $crate::synthetic::SyntheticOptions {
                $crate::synthetic::SyntheticOptions {
                    bounds: self.bounds.clone(),
                    scale: self.scale,
                    dummy_dims: self.dummy_dims,
                    noise_std: self.noise_std,
                    names: self.names.clone(),
                }
            }

            /// The dimension of the function itself (without dummy inputs).
            fn function_dim(&self) -> cabo_core::Result<usize> {
                $(
                    $crate::synthetic::check_dim($name, self.dim, $min)?;
                    return Ok(self.dim);
                )?
                $(
                    return Ok($fixed);
                )?
            }
        }

        #[cabo_core::plugin(
            name = $name,
            summary = $summary,
            paper = $paper,
            example = $example
        )]
        impl cabo_core::ProblemSpec for $spec {
            fn dim(&self) -> cabo_core::Result<usize> {
                let d = self.function_dim()?;
                self.options().validate($name, d, &$bounds)?;
                Ok(d + self.dummy_dims)
            }
            fn build(&self, _seed: u64) -> cabo_core::Result<Box<dyn cabo_core::Problem>> {
                let make: fn(usize) -> Box<dyn $crate::synthetic::TestFunction> = $make;
                let f = make(self.function_dim()?);
                Ok(Box::new(self.options().build($name, f, &$bounds, $scale)?))
            }
        }
    };
}
pub(crate) use synthetic_spec;

#[cfg(test)]
pub(crate) mod testing {
    //! Oracles shared by the test functions' tests.
    use super::TestFunction;

    /// Largest relative error between the analytic gradient and central differences at `z`.
    pub fn gradient_error(f: &dyn TestFunction, z: &[f64]) -> f64 {
        let d = z.len();
        let mut g = vec![0.0; d];
        f.value_grad(z, &mut g);
        let mut worst: f64 = 0.0;
        for i in 0..d {
            let h = 1e-6 * z[i].abs().max(1.0);
            let mut zp = z.to_vec();
            let mut zm = z.to_vec();
            zp[i] += h;
            zm[i] -= h;
            let fd = (f.value(&zp) - f.value(&zm)) / (2.0 * h);
            let err = (g[i] - fd).abs() / g[i].abs().max(fd.abs()).max(1e-2);
            worst = worst.max(err);
        }
        worst
    }

    /// Asserts the analytic gradient matches finite differences (relative error < 1e-5) at
    /// `n` pseudo-random points of the box `[lo, hi]^d`.
    pub fn check_gradients(f: &dyn TestFunction, lo: &[f64], hi: &[f64], n: usize) {
        let mut rng = cabo_core::Rng::new(11);
        for _ in 0..n {
            let z: Vec<f64> = lo
                .iter()
                .zip(hi)
                .map(|(l, h)| rng.uniform_in(*l, *h))
                .collect();
            let e = gradient_error(f, &z);
            assert!(e < 1e-5, "{}: gradient error {e:e} at {z:?}", f.name());
        }
    }

    /// Refines a local maximiser from `z0` by Newton steps on the analytic gradient (Hessian
    /// by central differences of the gradient) and returns it.
    pub fn newton_refine(f: &dyn TestFunction, z0: &[f64]) -> Vec<f64> {
        let d = z0.len();
        let mut z = z0.to_vec();
        let mut g = vec![0.0; d];
        for _ in 0..20 {
            f.value_grad(&z, &mut g);
            let mut hess = vec![0.0; d * d];
            for j in 0..d {
                let h = 1e-5;
                let (mut zp, mut zm) = (z.clone(), z.clone());
                zp[j] += h;
                zm[j] -= h;
                let (mut gp, mut gm) = (vec![0.0; d], vec![0.0; d]);
                f.value_grad(&zp, &mut gp);
                f.value_grad(&zm, &mut gm);
                for i in 0..d {
                    hess[i * d + j] = (gp[i] - gm[i]) / (2.0 * h);
                }
            }
            // Solve H s = −g by Gaussian elimination with partial pivoting.
            let mut a = hess;
            let mut b: Vec<f64> = g.iter().map(|v| -v).collect();
            for c in 0..d {
                let p = (c..d)
                    .max_by(|&r, &s| a[r * d + c].abs().total_cmp(&a[s * d + c].abs()))
                    .unwrap();
                for k in 0..d {
                    a.swap(c * d + k, p * d + k);
                }
                b.swap(c, p);
                for r in c + 1..d {
                    let m = a[r * d + c] / a[c * d + c];
                    for k in c..d {
                        a[r * d + k] -= m * a[c * d + k];
                    }
                    b[r] -= m * b[c];
                }
            }
            let mut s = vec![0.0; d];
            for r in (0..d).rev() {
                let mut acc = b[r];
                for k in r + 1..d {
                    acc -= a[r * d + k] * s[k];
                }
                s[r] = acc / a[r * d + r];
            }
            for i in 0..d {
                z[i] += s[i];
            }
        }
        z
    }

    /// Euclidean norm of the gradient at `z`.
    pub fn grad_norm(f: &dyn TestFunction, z: &[f64]) -> f64 {
        let mut g = vec![0.0; z.len()];
        f.value_grad(z, &mut g);
        g.iter().map(|v| v * v).sum::<f64>().sqrt()
    }
}

#[cfg(test)]
mod tests {
    use cabo_core::{Problem, ProblemSpec, Rng};

    fn build(json: &str) -> Box<dyn Problem> {
        serde_json::from_str::<Box<dyn ProblemSpec>>(json)
            .unwrap()
            .build(0)
            .unwrap()
    }

    /// Largest error of `native → unit → native` and `unit → native → unit` at random
    /// points of the box, relative to the box's size.
    fn round_trip_error(p: &dyn Problem, box_size: f64) -> f64 {
        let d = p.info().dim;
        let mut rng = Rng::new(5);
        let lo = p.to_native(&vec![0.0; d]);
        let hi = p.to_native(&vec![1.0; d]);
        let mut worst: f64 = 0.0;
        for _ in 0..500 {
            let z: Vec<f64> = lo
                .iter()
                .zip(&hi)
                .map(|(l, h)| rng.uniform_in(*l, *h))
                .collect();
            let back = p.to_native(&p.native_to_unit(&z));
            let u: Vec<f64> = (0..d).map(|_| rng.uniform()).collect();
            let again = p.native_to_unit(&p.to_native(&u));
            for i in 0..d {
                worst = worst.max((back[i] - z[i]).abs() / box_size);
                worst = worst.max((again[i] - u[i]).abs());
            }
        }
        worst
    }

    #[test]
    fn native_to_unit_inverts_to_native() {
        // Branin's box [-5, 10] × [0, 15], with an ignored input on the last interval.
        let p = build(r#"{"type":"branin","dummy_dims":1}"#);
        assert_eq!(p.native_to_unit(&[-5.0, 15.0, 0.0]), vec![0.0, 1.0, 0.0]);
        assert!(round_trip_error(p.as_ref(), 15.0) <= 1e-12);
    }

    #[test]
    fn names_are_the_problems_input_names_and_are_checked() {
        let p = build(r#"{"type":"branin","dummy_dims":1,"names":["a","b","c"]}"#);
        assert_eq!(p.info().input_names, ["a", "b", "c"]);
        assert!(build(r#"{"type":"branin"}"#).info().input_names.is_empty());
        for (names, gist) in [
            (r#"["a","b"]"#, "gives 2 names, the problem has 3 inputs"),
            (r#"["a","b","a"]"#, "names[2]: \"a\" names two inputs"),
            (r#"["a","y","c"]"#, "names[1]: \"y\" cannot name an input"),
            (r#"["a","b,c","d"]"#, "names[1]"),
            (r#"["a"," b","d"]"#, "names[1]"),
        ] {
            let json = format!(r#"{{"type":"branin","dummy_dims":1,"names":{names}}}"#);
            let spec: Box<dyn ProblemSpec> = serde_json::from_str(&json).unwrap();
            let err = spec.dim().unwrap_err().to_string();
            assert!(err.contains(gist), "{names}: {err}");
        }
    }

    #[test]
    fn boxes_of_powers_of_two_map_exactly() {
        let p = build(r#"{"type":"ackley","dim":2,"bounds":[[0,4],[0,0.5]]}"#);
        let mut rng = Rng::new(9);
        for _ in 0..500 {
            let u = vec![rng.uniform(), rng.uniform()];
            assert_eq!(p.native_to_unit(&p.to_native(&u)), u);
        }
    }
}
