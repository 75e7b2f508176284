//! The acquisition bridge: continuous and finite domains, and `AcquisitionPolicy` decisions
//! with a hand-written posterior and closed-form acquisitions.

// Numeric tests index several parallel arrays at once.
#![allow(clippy::needless_range_loop)]

use cabo_core::{
    Acquisition, AcquisitionFn, Budget, BudgetState, Dataset, Decision, DecisionContext,
    Diagnostics, Domain, MeanVar, MeanVarGrad, Objective, OptimizerSettings, Policy, Posterior,
    ProblemInfo, Result,
};
use cabo_optim::acquisition::maximize_finite;
use cabo_optim::{AcquisitionPolicy, maximize_acquisition};

/// Posterior with mean −|x − c|² and variance s²·(1 + |x − c|²): closed forms with
/// gradients, enough to drive a UCB acquisition.
struct Bowl {
    c: Vec<f64>,
    s2: f64,
}

impl Posterior for Bowl {
    fn dim(&self) -> usize {
        self.c.len()
    }
    fn mean_var(&self, x: &[f64]) -> MeanVar {
        let r2: f64 = x.iter().zip(&self.c).map(|(a, b)| (a - b) * (a - b)).sum();
        MeanVar {
            mean: -r2,
            var: self.s2 * (1.0 + r2),
        }
    }
    fn mean_var_grad(&self, x: &[f64]) -> Result<MeanVarGrad> {
        let mv = self.mean_var(x);
        let dr2: Vec<f64> = x.iter().zip(&self.c).map(|(a, b)| 2.0 * (a - b)).collect();
        Ok(MeanVarGrad {
            mean: mv.mean,
            var: mv.var,
            dmean: dr2.iter().map(|d| -d).collect(),
            dvar: dr2.iter().map(|d| self.s2 * d).collect(),
        })
    }
    fn noise_variance(&self) -> f64 {
        0.0
    }
}

/// UCB μ + β·σ with an optional stopping threshold on the maximum.
struct Ucb {
    beta: f64,
    stop_above: Option<f64>,
}

struct UcbFn<'a> {
    post: &'a dyn Posterior,
    beta: f64,
    stop_above: Option<f64>,
}

impl Objective for UcbFn<'_> {
    fn value(&self, x: &[f64]) -> f64 {
        let mv = self.post.mean_var(x);
        mv.mean + self.beta * mv.var.sqrt()
    }

    fn value_grad(&self, x: &[f64], grad: &mut [f64]) -> f64 {
        let m = self.post.mean_var_grad(x).unwrap();
        let sd = m.var.sqrt();
        for i in 0..x.len() {
            grad[i] = m.dmean[i] + self.beta * m.dvar[i] / (2.0 * sd);
        }
        m.mean + self.beta * sd
    }
}

impl AcquisitionFn for UcbFn<'_> {
    fn stop_at(&self, max_value: f64) -> Option<String> {
        self.stop_above
            .filter(|&t| max_value > t)
            .map(|t| format!("max UCB above {t}"))
    }

    fn diagnostics(&self) -> Diagnostics {
        Diagnostics::from([("beta".to_string(), self.beta)])
    }
}

impl Acquisition for Ucb {
    fn prepare<'a>(&'a self, ctx: &'a DecisionContext<'a>) -> Result<Box<dyn AcquisitionFn + 'a>> {
        Ok(Box::new(UcbFn {
            post: ctx.posterior()?,
            beta: self.beta,
            stop_above: self.stop_above,
        }))
    }
}

fn decide(acq: Ucb, problem: &ProblemInfo, c: Vec<f64>, seed: u64) -> (Decision, Diagnostics) {
    let data = Dataset::new(problem.dim);
    let budget = BudgetState::new(Budget {
        cost: None,
        iterations: Some(10),
    });
    let settings = OptimizerSettings::default();
    let ctx = DecisionContext::new(problem, &data, &budget, 1, seed, &settings)
        .with_posterior(Box::new(Bowl { c, s2: 0.04 }));
    let mut policy = AcquisitionPolicy::new(Box::new(acq));
    let d = policy.decide(&ctx).unwrap();
    (d, policy.diagnostics())
}

#[test]
fn policy_evaluates_the_closed_form_maximiser() {
    // μ + βσ = −r² + 0.2β·sqrt(1 + r²) has its maximum at r = 0 while β < 10.
    let c = vec![0.25, 0.6, 0.9];
    let problem = ProblemInfo::continuous("bowl", 3);
    let (d, diag) = decide(
        Ucb {
            beta: 2.0,
            stop_above: None,
        },
        &problem,
        c.clone(),
        7,
    );
    let Decision::Evaluate(q) = d else {
        panic!("expected a query, got {d:?}")
    };
    assert_eq!(q.control_set, None);
    for i in 0..3 {
        assert!((q.x[i] - c[i]).abs() < 1e-6, "{:?}", q.x);
    }
    assert!((diag["acq_value"] - 0.4).abs() < 1e-12, "{diag:?}");
    assert_eq!(diag["beta"], 2.0);
}

#[test]
fn policy_stops_when_the_rule_fires() {
    let problem = ProblemInfo::continuous("bowl", 2);
    let (d, diag) = decide(
        Ucb {
            beta: 1.0,
            stop_above: Some(0.1),
        },
        &problem,
        vec![0.5, 0.5],
        0,
    );
    assert_eq!(d, Decision::Stop("max UCB above 0.1".to_string()));
    assert!((diag["acq_value"] - 0.2).abs() < 1e-12);
    // Not firing: evaluate.
    let (d, _) = decide(
        Ucb {
            beta: 1.0,
            stop_above: Some(0.3),
        },
        &problem,
        vec![0.5, 0.5],
        0,
    );
    assert!(matches!(d, Decision::Evaluate(_)));
}

#[test]
fn policy_without_a_posterior_reports_the_error() {
    let problem = ProblemInfo::continuous("bowl", 2);
    let data = Dataset::new(2);
    let budget = BudgetState::new(Budget {
        cost: None,
        iterations: Some(1),
    });
    let settings = OptimizerSettings::default();
    let ctx = DecisionContext::new(&problem, &data, &budget, 1, 0, &settings);
    let mut policy = AcquisitionPolicy::new(Box::new(Ucb {
        beta: 1.0,
        stop_above: None,
    }));
    let e = policy.decide(&ctx).unwrap_err();
    assert!(e.to_string().contains("model"), "{e}");
}

#[test]
fn finite_domains_enumerate_every_candidate() {
    let c = vec![0.3, 0.3];
    let post = Bowl {
        c: c.clone(),
        s2: 0.0,
    };
    let f = UcbFn {
        post: &post,
        beta: 0.0,
        stop_above: None,
    };
    // 3000 candidates (more than one batch) on a grid; the best is the grid point nearest c.
    let candidates: Vec<Vec<f64>> = (0..3000)
        .map(|i| vec![(i % 60) as f64 / 59.0, (i / 60) as f64 / 49.0])
        .collect();
    let mut problem = ProblemInfo::continuous("grid", 2);
    problem.domain = Domain::Finite(candidates.clone());
    let m = maximize_acquisition(&f, &problem, &OptimizerSettings::default(), 0).unwrap();
    let brute = candidates
        .iter()
        .max_by(|a, b| f.value(a).total_cmp(&f.value(b)))
        .unwrap();
    assert_eq!(&m.x, brute);
    assert_eq!(m.value, f.value(brute));

    assert!(maximize_finite(&f, &[], 2).is_err());
    let e = maximize_finite(&f, &[vec![0.1, 0.2], vec![0.3]], 2).unwrap_err();
    assert!(e.to_string().contains("candidate 1"), "{e}");
}

#[test]
fn continuous_maximisation_is_deterministic_in_the_seed() {
    let post = Bowl {
        c: vec![0.1, 0.2, 0.3, 0.4],
        s2: 0.01,
    };
    let f = UcbFn {
        post: &post,
        beta: 1.0,
        stop_above: None,
    };
    let problem = ProblemInfo::continuous("bowl", 4);
    let s = OptimizerSettings {
        raw_samples: 32,
        restarts: 3,
        max_iters: 3,
    };
    let a = maximize_acquisition(&f, &problem, &s, 1).unwrap();
    let b = maximize_acquisition(&f, &problem, &s, 1).unwrap();
    assert_eq!(a, b);
}
