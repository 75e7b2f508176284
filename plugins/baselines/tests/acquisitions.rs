//! Every acquisition through the cabo-core traits, on closed-form mock posteriors and cost
//! beliefs: gradients against finite differences, closed forms against Monte Carlo, β
//! schedules, seeding, batching and bad input.

use cabo_core::capability::SamplePaths;
use cabo_core::{
    Acquisition, AcquisitionSpec, Budget, BudgetState, BuildContext, CostBelief, CostFunction,
    Dataset, DecisionContext, LnCost, MeanVar, MeanVarGrad, Objective, Observation,
    OptimizerSettings, Posterior, ProblemInfo, Result, Rng,
};
use std::sync::Arc;

const D: usize = 3;

/// μ(x) = shift + Σ 0.8 sin(3xᵢ + i), σ²(x) = 0.05 + Σ 0.3 (xᵢ − 0.4)².
#[derive(Clone, Copy)]
struct MockPosterior {
    shift: f64,
    dim: usize,
    paths: bool,
}

impl MockPosterior {
    fn new(shift: f64) -> Self {
        MockPosterior {
            shift,
            dim: D,
            paths: true,
        }
    }
}

impl Posterior for MockPosterior {
    fn dim(&self) -> usize {
        self.dim
    }
    fn mean_var(&self, x: &[f64]) -> MeanVar {
        let g = self.mean_var_grad(x).unwrap();
        MeanVar {
            mean: g.mean,
            var: g.var,
        }
    }
    fn mean_var_grad(&self, x: &[f64]) -> Result<MeanVarGrad> {
        let mut out = MeanVarGrad {
            mean: self.shift,
            var: 0.05,
            ..Default::default()
        };
        for (i, &xi) in x.iter().enumerate() {
            let a = 3.0 * xi + i as f64;
            out.mean += 0.8 * a.sin();
            out.var += 0.3 * (xi - 0.4) * (xi - 0.4);
            out.dmean.push(2.4 * a.cos());
            out.dvar.push(0.6 * (xi - 0.4));
        }
        Ok(out)
    }
    fn noise_variance(&self) -> f64 {
        1e-6
    }
    fn sample_paths(&self) -> Option<&dyn SamplePaths> {
        if self.paths { Some(self) } else { None }
    }
}

impl SamplePaths for MockPosterior {
    fn sample_path(&self, seed: u64) -> Result<Box<dyn Objective + Send + Sync>> {
        Ok(Box::new(MockPath {
            post: *self,
            z: Rng::new(seed).normal(),
        }))
    }
}

/// The path μ(x) + z·σ(x) for one standard-normal z.
struct MockPath {
    post: MockPosterior,
    z: f64,
}

impl Objective for MockPath {
    fn value(&self, x: &[f64]) -> f64 {
        let m = self.post.mean_var(x);
        m.mean + self.z * m.var.sqrt()
    }
    fn value_grad(&self, x: &[f64], grad: &mut [f64]) -> f64 {
        let g = self.post.mean_var_grad(x).unwrap();
        let s = g.var.sqrt();
        for ((out, dm), dv) in grad.iter_mut().zip(&g.dmean).zip(&g.dvar) {
            *out = dm + self.z * dv / (2.0 * s);
        }
        g.mean + self.z * s
    }
}

/// ln c(x) ~ N(0.4 + Σ 0.5 cos(2xᵢ), 0.1 + 0.2 x₀²).
struct MockCost;

impl CostBelief for MockCost {
    fn dim(&self) -> usize {
        D
    }
    fn ln_cost(&self, x: &[f64]) -> LnCost {
        self.ln_cost_grad(x)
    }
    fn ln_cost_grad(&self, x: &[f64]) -> LnCost {
        let mut l = LnCost {
            mean: 0.4,
            var: 0.1 + 0.2 * x[0] * x[0],
            ..Default::default()
        };
        for (i, &xi) in x.iter().enumerate() {
            l.mean += 0.5 * (2.0 * xi).cos();
            l.dmean.push(-(2.0 * xi).sin());
            l.dvar.push(if i == 0 { 0.4 * x[0] } else { 0.0 });
        }
        l
    }
    fn is_known(&self) -> bool {
        false
    }
}

/// c(x) = 1 + Σ xᵢ², known exactly.
#[derive(Debug)]
struct KnownCost;

impl CostFunction for KnownCost {
    fn cost(&self, x: &[f64]) -> f64 {
        1.0 + x.iter().map(|v| v * v).sum::<f64>()
    }
    fn cost_grad(&self, x: &[f64], grad: &mut [f64]) -> f64 {
        for (g, v) in grad.iter_mut().zip(x) {
            *g = 2.0 * v;
        }
        self.cost(x)
    }
}

struct Setup {
    problem: ProblemInfo,
    data: Dataset,
    budget: BudgetState,
    opt: OptimizerSettings,
}

impl Setup {
    fn new(best_y: Option<f64>) -> Self {
        let mut data = Dataset::new(D);
        if let Some(y) = best_y {
            for (x, y) in [(vec![0.1; D], y - 1.0), (vec![0.7; D], y)] {
                data.push(Observation::initial(x, y, 1.0)).unwrap();
            }
        }
        let mut budget = BudgetState::new(Budget {
            cost: Some(10.0),
            iterations: None,
        });
        budget.charge(4.0); // ν = 0.6
        Setup {
            problem: ProblemInfo::continuous("mock", D),
            data,
            budget,
            opt: OptimizerSettings::default(),
        }
    }

    fn ctx(
        &self,
        post: MockPosterior,
        cost: bool,
        iteration: usize,
        seed: u64,
    ) -> DecisionContext<'_> {
        let ctx = DecisionContext::new(
            &self.problem,
            &self.data,
            &self.budget,
            iteration,
            seed,
            &self.opt,
        )
        .with_posterior(Box::new(post));
        if cost {
            ctx.with_cost_belief(Box::new(MockCost))
        } else {
            ctx
        }
    }
}

fn build(json: &str) -> Box<dyn Acquisition> {
    cabo_baselines::plugins();
    let spec: Box<dyn AcquisitionSpec> = serde_json::from_str(json).unwrap();
    spec.validate(D).unwrap();
    let problem = ProblemInfo::continuous("mock", D);
    spec.build(&BuildContext {
        problem: &problem,
        seed: 0,
    })
    .unwrap()
}

fn spec_err(json: &str) -> String {
    cabo_baselines::plugins();
    match serde_json::from_str::<Box<dyn AcquisitionSpec>>(json) {
        Err(e) => e.to_string(),
        Ok(spec) => {
            let problem = ProblemInfo::continuous("mock", D);
            let v = spec.validate(D).err().map(|e| e.to_string());
            let b = spec
                .build(&BuildContext {
                    problem: &problem,
                    seed: 0,
                })
                .err()
                .map(|e| e.to_string());
            assert_eq!(
                v.is_some(),
                b.is_some(),
                "validate and build disagree on {json}"
            );
            v.unwrap_or_else(|| panic!("{json} was accepted"))
        }
    }
}

fn points(n: usize, seed: u64) -> Vec<Vec<f64>> {
    let mut rng = Rng::new(seed);
    (0..n)
        .map(|_| (0..D).map(|_| rng.uniform()).collect())
        .collect()
}

/// Central differences against the analytic gradient, relative error < 1e-5.
fn check_gradient(f: &dyn cabo_core::AcquisitionFn, x: &[f64], what: &str) {
    let mut grad = vec![0.0; D];
    let v = f.value_grad(x, &mut grad);
    assert!(
        (v - f.value(x)).abs() <= 1e-13 * v.abs().max(1e-300),
        "{what}: value_grad and value differ"
    );
    for i in 0..D {
        let h = 1e-6;
        let (mut xp, mut xm) = (x.to_vec(), x.to_vec());
        xp[i] += h;
        xm[i] -= h;
        let fd = (f.value(&xp) - f.value(&xm)) / (2.0 * h);
        let err = (grad[i] - fd).abs() / grad[i].abs().max(1e-3 * v.abs().max(1e-12));
        assert!(
            err < 1e-5,
            "{what}: ∂{i} at {x:?}: analytic {} vs FD {fd} (rel {err:e})",
            grad[i]
        );
    }
}

const ALL: [&str; 8] = [
    r#"{"type":"ei"}"#,
    r#"{"type":"log_ei"}"#,
    r#"{"type":"ei_per_cost"}"#,
    r#"{"type":"ei_puc_cc"}"#,
    r#"{"type":"ucb","beta":2.0}"#,
    r#"{"type":"ucb","schedule":"srinivas"}"#,
    r#"{"type":"thompson"}"#,
    r#"{"type":"log_ei","best_f":9.0}"#,
];

#[test]
fn every_gradient_matches_finite_differences() {
    let setup = Setup::new(Some(1.0));
    for shift in [0.5, 1.5] {
        for json in ALL {
            let acq = build(json);
            let ctx = setup.ctx(MockPosterior::new(shift), true, 4, 99);
            let f = acq.prepare(&ctx).unwrap();
            for x in points(25, 3) {
                check_gradient(f.as_ref(), &x, json);
            }
        }
    }
    // The known-cost path of EI per cost (no cost model; the problem discloses c).
    let mut setup = Setup::new(Some(1.0));
    setup.problem.known_cost = Some(Arc::new(KnownCost));
    for json in [r#"{"type":"ei_per_cost"}"#, r#"{"type":"ei_puc_cc"}"#] {
        let acq = build(json);
        let ctx = setup.ctx(MockPosterior::new(1.0), false, 4, 99);
        let f = acq.prepare(&ctx).unwrap();
        for x in points(25, 4) {
            check_gradient(f.as_ref(), &x, json);
        }
    }
}

#[test]
fn batched_values_equal_pointwise_values() {
    let setup = Setup::new(Some(1.0));
    let xs = points(40, 8);
    let flat: Vec<f64> = xs.concat();
    for json in ALL {
        let acq = build(json);
        let ctx = setup.ctx(MockPosterior::new(0.9), true, 2, 5);
        let f = acq.prepare(&ctx).unwrap();
        let mut out = vec![0.0; xs.len()];
        f.values(&flat, &mut out);
        for (x, o) in xs.iter().zip(&out) {
            assert_eq!(*o, f.value(x), "{json}");
        }
    }
}

#[test]
fn cost_weighted_ei_matches_closed_forms_and_monte_carlo() {
    let setup = Setup::new(Some(1.2));
    let post = MockPosterior::new(1.0);
    let x = [0.3, 0.6, 0.2];
    let mv = post.mean_var(&x);
    let (mu, sigma) = (mv.mean, mv.var.sqrt());
    let ln = MockCost.ln_cost(&x);
    let ei = cabo_toolkit::numerics::ei(mu, sigma, 1.2);
    for (json, nu) in [
        (r#"{"type":"ei_per_cost"}"#, 1.0),
        (r#"{"type":"ei_puc_cc"}"#, 0.6),
    ] {
        let acq = build(json);
        let ctx = setup.ctx(post, true, 1, 0);
        let f = acq.prepare(&ctx).unwrap();
        assert!(f.non_negative());
        let got = f.value(&x);
        // Seed 001, Prop. 2: EI · exp(−ν μ_ln c + ν² σ²_ln c / 2).
        let closed = ei * (-nu * ln.mean + 0.5 * nu * nu * ln.var).exp();
        assert!(
            (got / closed - 1.0).abs() < 1e-14,
            "{json}: {got} vs {closed}"
        );
        if nu != 1.0 {
            assert!((f.diagnostics()["nu"] - nu).abs() < 1e-15);
        }
        // Independent oracle: E[(f − best)⁺ / c^ν] with f and ln c drawn independently.
        let mut rng = Rng::new(123);
        let n = 400_000;
        let (mut s1, mut s2) = (0.0, 0.0);
        for _ in 0..n {
            let fv = mu + sigma * rng.normal();
            let lc = ln.mean + ln.var.sqrt() * rng.normal();
            let v = (fv - 1.2).max(0.0) * (-nu * lc).exp();
            s1 += v;
            s2 += v * v;
        }
        let m = s1 / n as f64;
        let se = ((s2 / n as f64 - m * m) / n as f64).sqrt();
        assert!((got - m).abs() < 4.0 * se, "{json}: {got} vs MC {m} ± {se}");
    }
    // Known cost: exactly EI / c and EI / c^ν.
    let mut known = Setup::new(Some(1.2));
    known.problem.known_cost = Some(Arc::new(KnownCost));
    let c = KnownCost.cost(&x);
    for (json, nu) in [
        (r#"{"type":"ei_per_cost"}"#, 1.0),
        (r#"{"type":"ei_puc_cc"}"#, 0.6),
    ] {
        let acq = build(json);
        let ctx = known.ctx(post, false, 1, 0);
        let got = acq.prepare(&ctx).unwrap().value(&x);
        assert!((got / (ei / c.powf(nu)) - 1.0).abs() < 1e-14, "{json}");
    }
}

#[test]
fn ei_and_ucb_values_follow_their_formulas() {
    let setup = Setup::new(Some(1.1));
    let post = MockPosterior::new(0.7);
    let x = [0.9, 0.1, 0.5];
    let mv = post.mean_var(&x);
    let (mu, sigma) = (mv.mean, mv.var.sqrt());

    let ei = build(r#"{"type":"ei"}"#);
    let ctx = setup.ctx(post, false, 3, 0);
    let f = ei.prepare(&ctx).unwrap();
    assert!(f.non_negative());
    assert_eq!(f.diagnostics()["best_f"], 1.1);
    assert_eq!(f.value(&x), cabo_toolkit::numerics::ei(mu, sigma, 1.1));

    let fixed = build(r#"{"type":"ei","best_f":0.25}"#);
    let f = fixed.prepare(&ctx).unwrap();
    assert_eq!(f.value(&x), cabo_toolkit::numerics::ei(mu, sigma, 0.25));

    let log_ei = build(r#"{"type":"log_ei"}"#);
    let f = log_ei.prepare(&ctx).unwrap();
    assert!(!f.non_negative());
    assert!((f.value(&x) - cabo_toolkit::numerics::ei(mu, sigma, 1.1).ln()).abs() < 1e-13);

    let ucb = build(r#"{"type":"ucb","beta":2.5}"#);
    let f = ucb.prepare(&ctx).unwrap();
    assert!((f.value(&x) - (mu + 2.5f64.sqrt() * sigma)).abs() < 1e-15);

    // Srinivas schedule at d = 3, t = 5: β = 2 ln(3·25·π²/(6·0.1)) / 5.
    let ucb = build(r#"{"type":"ucb","schedule":"srinivas"}"#);
    let ctx5 = setup.ctx(post, false, 5, 0);
    let f = ucb.prepare(&ctx5).unwrap();
    let pi2 = std::f64::consts::PI.powi(2);
    let beta = 2.0 * (3.0 * 25.0 * pi2 / 0.6).ln() / 5.0;
    assert!((f.diagnostics()["beta"] - beta).abs() < 1e-15);
    assert!((f.value(&x) - (mu + beta.sqrt() * sigma)).abs() < 1e-14);
    // A custom δ and scale.
    let ucb = build(r#"{"type":"ucb","schedule":"srinivas","delta":0.05,"scale_down":1.0}"#);
    let f = ucb.prepare(&ctx5).unwrap();
    assert!((f.diagnostics()["beta"] - 2.0 * (3.0 * 25.0 * pi2 / 0.3).ln()).abs() < 1e-14);
}

#[test]
fn thompson_is_seeded_by_the_decision() {
    let setup = Setup::new(Some(1.0));
    let acq = build(r#"{"type":"thompson"}"#);
    let x = [0.2, 0.4, 0.8];
    let value = |seed| {
        let ctx = setup.ctx(MockPosterior::new(0.0), false, 1, seed);
        acq.prepare(&ctx).unwrap().value(&x)
    };
    assert_eq!(value(7), value(7));
    assert_ne!(value(7), value(8));
    // The path is the posterior's own draw for the derived seed.
    let post = MockPosterior::new(0.0);
    let path = post
        .sample_path(cabo_baselines::acquisitions::Thompson::path_seed(7))
        .unwrap();
    assert_eq!(value(7), path.value(&x));
    // A posterior without sample paths is a clear error.
    let ctx = setup.ctx(
        MockPosterior {
            paths: false,
            ..MockPosterior::new(0.0)
        },
        false,
        1,
        7,
    );
    let e = acq.prepare(&ctx).err().unwrap().to_string();
    assert!(e.contains("sample_paths"), "{e}");
}

#[test]
fn bad_input_is_a_clear_error() {
    // No observations and no best_f.
    let empty = Setup::new(None);
    for json in [
        r#"{"type":"ei"}"#,
        r#"{"type":"log_ei"}"#,
        r#"{"type":"ei_per_cost"}"#,
        r#"{"type":"ei_puc_cc"}"#,
    ] {
        let ctx = empty.ctx(MockPosterior::new(0.0), true, 1, 0);
        let e = build(json).prepare(&ctx).err().unwrap().to_string();
        assert!(e.contains("best_f"), "{json}: {e}");
    }
    // ...but a fixed best_f works before any observation.
    let ctx = empty.ctx(MockPosterior::new(0.0), true, 1, 0);
    assert!(build(r#"{"type":"ei","best_f":0.0}"#).prepare(&ctx).is_ok());

    // No cost model and no known cost.
    let setup = Setup::new(Some(1.0));
    let ctx = setup.ctx(MockPosterior::new(0.0), false, 1, 0);
    let e = build(r#"{"type":"ei_per_cost"}"#)
        .prepare(&ctx)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("cost_model"), "{e}");

    // No model at all.
    let bare = DecisionContext::new(&setup.problem, &setup.data, &setup.budget, 1, 0, &setup.opt);
    let e = build(r#"{"type":"ucb","beta":1.0}"#)
        .prepare(&bare)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("model"), "{e}");

    // A posterior of the wrong dimension.
    let ctx = setup.ctx(
        MockPosterior {
            dim: 2,
            ..MockPosterior::new(0.0)
        },
        false,
        1,
        0,
    );
    let e = build(r#"{"type":"ei"}"#)
        .prepare(&ctx)
        .err()
        .unwrap()
        .to_string();
    assert!(e.contains("dimension"), "{e}");

    // Spec errors.
    assert!(spec_err(r#"{"type":"ucb"}"#).contains("schedule"));
    assert!(spec_err(r#"{"type":"ucb","beta":1.0,"schedule":"srinivas"}"#).contains("not both"));
    assert!(spec_err(r#"{"type":"ucb","beta":-1.0}"#).contains("beta"));
    assert!(spec_err(r#"{"type":"ucb","beta":1.0,"delta":0.1}"#).contains("delta"));
    assert!(spec_err(r#"{"type":"ucb","schedule":"srinivas","delta":1.5}"#).contains("delta"));
    assert!(
        spec_err(r#"{"type":"ucb","schedule":"srinivas","scale_down":0}"#).contains("scale_down")
    );
    assert!(spec_err(r#"{"type":"ucb","schedule":"linear"}"#).contains("unknown variant"));
    assert!(spec_err(r#"{"type":"ei","beta":1.0}"#).contains("unknown field"));
    assert!(spec_err(r#"{"type":"thompson","seed":1}"#).contains("unknown field"));
}
