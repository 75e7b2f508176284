//! Bad input: each a clear error or a documented, tested behaviour.

mod common;
use cabo_core::capability::{Fantasize, SamplePaths};
use cabo_core::{
    BuildContext, CostModelSpec, Dataset, Error, ModelSpec, Observation, Posterior, ProblemInfo,
    TrainingData,
};
use cabo_gp::{ExactGp, GpConfig, GpPosterior, KernelKind, Lengthscale, LogGp, Prior};
use common::*;

fn fixed() -> GpConfig {
    GpConfig::fixed(KernelKind::Matern52, Lengthscale::Scalar(0.3), 1.0, 1e-4)
}

/// Fits `config` to `(x, y)` (the success path every case below starts from).
fn fit(config: GpConfig, dim: usize, x: &[f64], y: &[f64]) -> GpPosterior {
    ExactGp::new(config)
        .unwrap()
        .fit(TrainingData { dim, x, y }, 0)
        .unwrap()
}

#[test]
fn non_finite_y_names_the_index() {
    let x = points(4, 2, 1);
    let y = [0.1, 0.2, f64::NAN, 0.3];
    let err = ExactGp::new(fixed())
        .unwrap()
        .fit(
            TrainingData {
                dim: 2,
                x: &x,
                y: &y,
            },
            0,
        )
        .unwrap_err();
    assert!(
        matches!(&err, Error::Invalid(m) if m.contains("y[2]")),
        "{err}"
    );
    let y = [0.1, f64::INFINITY, 0.2, 0.3];
    let err = ExactGp::new(fixed())
        .unwrap()
        .fit(
            TrainingData {
                dim: 2,
                x: &x,
                y: &y,
            },
            0,
        )
        .unwrap_err();
    assert!(err.to_string().contains("y[1]"), "{err}");
}

#[test]
fn empty_data_gives_the_prior() {
    for config in [fixed(), GpConfig::map(KernelKind::Rbf, Prior::Gamma, true)] {
        let post = fit(config, 2, &[], &[]);
        let mv = post.mean_var(&[0.3, 0.4]);
        assert_eq!(mv.mean, 0.0);
        assert!((mv.var - post.kernel().outputscale).abs() < 1e-15);
        let g = post.mean_var_grad(&[0.3, 0.4]).unwrap();
        assert_eq!(g.dmean, vec![0.0, 0.0]);
        // Fantasies and samples work from the prior too.
        let c = post.condition(&[0.3, 0.4], &[1.0]).unwrap();
        assert!(c.mean_var(&[0.3, 0.4]).var < mv.var);
        assert!(post.sample_path(1).unwrap().value(&[0.1, 0.1]).is_finite());
    }
}

#[test]
fn duplicate_points_are_absorbed_by_noise_or_recorded_jitter() {
    let x = [0.2, 0.2, 0.2, 0.2, 0.7, 0.1];
    let y = [1.0, 2.0, 0.5];
    // With noise, duplicates are ordinary: the mean at the point lies between the values.
    let post = fit(fixed(), 2, &x, &y);
    let m = post.mean_var(&[0.2, 0.2]).mean;
    assert!(m > 1.0 && m < 2.0);
    assert_eq!(post.cholesky().jitter(), 0.0);
    // Without noise the covariance is singular: jitter is added and recorded.
    let mut c = fixed();
    c.noise = Some(cabo_gp::Noise::Fixed(0.0));
    let post = fit(c, 2, &x, &y);
    let jitter = post.diagnostics()["gp.jitter"];
    assert!(jitter > 0.0 && jitter <= 1e-3, "jitter {jitter}");
    assert!((post.mean_var(&[0.2, 0.2]).mean - 1.5).abs() < 1e-3);
    // MAP fitting copes as well.
    let mut gp = ExactGp::new(GpConfig::map(KernelKind::Matern32, Prior::Gamma, true)).unwrap();
    assert!(
        gp.fit(
            TrainingData {
                dim: 2,
                x: &x,
                y: &y
            },
            0
        )
        .is_ok()
    );
}

#[test]
fn dimension_mismatches_are_errors() {
    let x = points(3, 2, 1);
    let y = [0.0, 1.0];
    assert!(
        ExactGp::new(fixed())
            .unwrap()
            .fit(
                TrainingData {
                    dim: 2,
                    x: &x,
                    y: &y
                },
                0
            )
            .is_err()
    );
    let mut c = fixed();
    c.kernel.lengthscale = Some(Lengthscale::PerDim(vec![0.1, 0.2, 0.3]));
    let err = ModelSpec::validate(&c, 2).unwrap_err();
    assert!(
        err.to_string().contains("3 entries") && err.to_string().contains("dimension 2"),
        "{err}"
    );
    assert!(ModelSpec::validate(&c, 3).is_ok());
    let y = [0.0, 1.0, 2.0];
    let post = fit(fixed(), 2, &x, &y);
    assert!(post.mean_var_grad(&[0.1, 0.2, 0.3]).is_err());
    assert!(post.joint(&[0.1, 0.2, 0.3]).is_err());
    assert!(post.condition_many(&[0.1, 0.2, 0.3], &[1.0]).is_err());
}

#[test]
fn invalid_configurations_are_errors() {
    let mut c = fixed();
    c.kernel.lengthscale = None;
    assert!(ExactGp::new(c).is_err());
    let mut c = fixed();
    c.noise = Some(cabo_gp::Noise::Fixed(-1.0));
    assert!(ExactGp::new(c).is_err());
    let mut c = GpConfig::map(KernelKind::Rbf, Prior::Gamma, false);
    c.noise = Some(cabo_gp::Noise::Fitted(cabo_gp::NoiseBounds {
        min: 1e-2,
        max: 1e-3,
    }));
    assert!(ExactGp::new(c).is_err());
    let mut c = fixed();
    c.kernel.outputscale = Some(0.0);
    assert!(ExactGp::new(c).is_err());
}

#[test]
fn log_gp_rejects_non_positive_costs() {
    let x = points(3, 2, 1);
    let mut m = LogGp::new(GpConfig::map(KernelKind::Matern52, Prior::Gamma, true)).unwrap();
    for bad in [0.0, -1.0, f64::NAN] {
        let err = m.fit_costs(2, &x, &[1.0, bad, 2.0], 0).unwrap_err();
        assert!(err.to_string().contains("cost[1]"), "{err}");
    }
    assert!(m.fit_costs(2, &x, &[1.0, 3.0, 2.0], 0).is_ok());
}

#[test]
fn known_cost_model_needs_a_known_cost() {
    let spec: Box<dyn CostModelSpec> = serde_json::from_str(r#"{"type": "known"}"#).unwrap();
    let info = ProblemInfo::continuous("p", 2);
    let err = spec
        .build(&BuildContext {
            problem: &info,
            seed: 0,
        })
        .err()
        .unwrap();
    assert!(err.to_string().contains("no known cost"), "{err}");
}

#[test]
fn specs_deserialise_and_reject_unknown_fields() {
    let a: Box<dyn ModelSpec> = serde_json::from_str(
        r#"{"type": "exact_gp", "kernel": {"type": "matern52", "lengthscale": 0.1, "outputscale": 1.0}, "noise": 1.0e-4, "fit": "fixed"}"#,
    )
    .unwrap();
    assert!(a.validate(3).is_ok());
    let b: Box<dyn ModelSpec> = serde_json::from_str(
        r#"{"type": "exact_gp", "kernel": {"type": "matern52"}, "fit": "map", "prior": "gamma", "noise": {"min": 1.0e-4, "max": 1.0e-3}, "standardize": true}"#,
    )
    .unwrap();
    assert!(b.validate(5).is_ok());
    let c: Box<dyn ModelSpec> = serde_json::from_str(
        r#"{"type": "exact_gp", "kernel": {"type": "rbf", "lengthscale": [0.1, 0.2]}, "fit": "fixed"}"#,
    )
    .unwrap();
    assert!(c.validate(2).is_ok() && c.validate(3).is_err());
    assert!(
        serde_json::from_str::<Box<dyn ModelSpec>>(
            r#"{"type": "exact_gp", "kernel": {"type": "rbf"}, "colour": 1}"#
        )
        .is_err()
    );
    assert!(
        serde_json::from_str::<Box<dyn ModelSpec>>(
            r#"{"type": "exact_gp", "kernel": {"type": "rbf", "ell": 1}}"#
        )
        .is_err()
    );
    assert!(
        serde_json::from_str::<Box<dyn ModelSpec>>(
            r#"{"type": "exact_gp", "kernel": {"type": "matern72"}}"#
        )
        .is_err()
    );
    let log: Box<dyn CostModelSpec> = serde_json::from_str(
        r#"{"type": "log_gp", "kernel": {"type": "matern52"}, "standardize": true}"#,
    )
    .unwrap();
    let info = ProblemInfo::continuous("p", 2);
    let mut model = log
        .build(&BuildContext {
            problem: &info,
            seed: 0,
        })
        .unwrap();
    let mut data = Dataset::new(2);
    for (i, p) in points(5, 2, 3).chunks_exact(2).enumerate() {
        data.push(Observation::initial(p.to_vec(), 0.0, 1.0 + i as f64))
            .unwrap();
    }
    let belief = model.fit(&data, 0).unwrap();
    assert!(!belief.is_known());
    assert!(belief.covariance().is_some() && belief.fantasize().is_some());
    let uni: Box<dyn CostModelSpec> = serde_json::from_str(r#"{"type": "uniform"}"#).unwrap();
    let belief = uni
        .build(&BuildContext {
            problem: &info,
            seed: 0,
        })
        .unwrap()
        .fit(&data, 0)
        .unwrap();
    assert_eq!(belief.ln_cost(&[0.1, 0.2]).expected(), 1.0);
}
