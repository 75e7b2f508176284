//! The capabilities each spec of this crate declares are exactly those its fitted posteriors
//! and beliefs offer (the runner validates policies against the declarations), and the
//! trivial ones of known and uniform costs behave as a cost known exactly should.

mod common;
use cabo_core::capability::PreparedPoint;
use cabo_core::{
    Capabilities, CostBelief, CostFunction, CostModelSpec, Dataset, Model, ModelSpec, Observation,
    TrainingData,
};
use cabo_gp::{ExactGp, GpConfig, KernelKind, KnownCost, Lengthscale, LogGp, UniformCost};
use common::*;
use std::sync::Arc;

fn config() -> GpConfig {
    GpConfig::fixed(KernelKind::Matern52, Lengthscale::Scalar(0.3), 1.0, 1e-4)
}

#[test]
fn exact_gp_offers_what_it_declares_from_the_prior_on() {
    let declared = ModelSpec::capabilities(&config());
    let d = 2;
    for n in [0, 6] {
        let x = points(n, d, 4);
        let y: Vec<f64> = x.chunks_exact(d).map(target).collect();
        let mut model = ExactGp::new(config()).unwrap();
        let post = Model::fit(
            &mut model,
            TrainingData {
                dim: d,
                x: &x,
                y: &y,
            },
            0,
        )
        .unwrap();
        assert_eq!(Capabilities::offered_by(post.as_ref()), declared, "n = {n}");
        let fantasy = post
            .fantasize()
            .unwrap()
            .condition(&[0.2, 0.7, 0.4, 0.1], &[0.5, -0.5])
            .unwrap();
        assert_eq!(Capabilities::offered_by(fantasy.as_ref()), declared);
    }
}

/// c(x) = 2 + x₀.
#[derive(Debug)]
struct Linear;

impl CostFunction for Linear {
    fn cost(&self, x: &[f64]) -> f64 {
        2.0 + x[0]
    }
    fn cost_grad(&self, x: &[f64], grad: &mut [f64]) -> f64 {
        grad.fill(0.0);
        grad[0] = 1.0;
        self.cost(x)
    }
}

fn spec(json: &str) -> Box<dyn CostModelSpec> {
    serde_json::from_str(json).unwrap()
}

#[test]
fn cost_models_offer_what_they_declare() {
    let d = 2;
    let mut data = Dataset::new(d);
    for (i, p) in points(5, d, 3).chunks_exact(d).enumerate() {
        data.push(Observation::initial(p.to_vec(), 0.0, 1.0 + i as f64))
            .unwrap();
    }
    let log_gp = LogGp::new(config())
        .unwrap()
        .fit_costs(d, &data.x_matrix(), &data.costs(), 0);
    let beliefs: [(&str, Box<dyn CostBelief>); 3] = [
        (
            r#"{"type": "log_gp", "kernel": {"type": "matern52"}}"#,
            Box::new(log_gp.unwrap()),
        ),
        (
            r#"{"type": "known"}"#,
            Box::new(KnownCost::new(d, Arc::new(Linear))),
        ),
        (r#"{"type": "uniform"}"#, Box::new(UniformCost::new(d))),
    ];
    for (json, belief) in beliefs {
        let declared = spec(json).capabilities();
        assert!(!declared.is_empty(), "{json}");
        assert_eq!(
            Capabilities::offered_by_cost(belief.as_ref()),
            declared,
            "{json}"
        );
        let fantasy = belief
            .fantasize()
            .unwrap()
            .condition(&[0.3, 0.3], &[0.1])
            .unwrap();
        assert_eq!(
            Capabilities::offered_by_cost(fantasy.as_ref()),
            declared,
            "{json}"
        );
    }
}

/// A known cost as a tree point: its ln c and gradient with zero variance, no covariance
/// with any other point, no fantasy noise; a fantasy leaves it unchanged.
#[test]
fn a_known_cost_is_a_certain_value_in_a_tree() {
    let known = KnownCost::new(2, Arc::new(Linear));
    let cov = known.covariance().unwrap();
    assert_eq!(cov.dim(), 2);
    assert_eq!(cov.fantasy_noise(), 0.0);
    let (mut a, mut b) = (PreparedPoint::default(), PreparedPoint::default());
    cov.prepare(&[0.5, 0.1], true, &mut a);
    cov.prepare(&[0.2, 0.9], false, &mut b);
    assert_eq!(a.mean, 2.5f64.ln());
    assert_eq!((a.var, a.dvar.as_slice()), (0.0, &[0.0, 0.0][..]));
    assert_eq!(a.dmean, vec![1.0 / 2.5, 0.0]);
    assert_eq!(b.mean, 2.2f64.ln());
    let (mut ga, mut gb) = (vec![1.0; 2], vec![1.0; 2]);
    assert_eq!(cov.cov(&a, &b, &mut ga, &mut gb), 0.0);
    assert_eq!((ga, gb), (vec![0.0; 2], vec![0.0; 2]));
    let after = known
        .fantasize()
        .unwrap()
        .condition(&[0.5, 0.1], &[7.0])
        .unwrap();
    assert_eq!(after.ln_cost(&[0.5, 0.1]), known.ln_cost(&[0.5, 0.1]));
}
