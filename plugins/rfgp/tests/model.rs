//! The model as a spec builds it: what it declares is what its posteriors offer, MAP
//! fitting, determinism of the basis, checkpoints, and bad input.

mod common;
use cabo_core::{
    BuildContext, Capabilities, Model, ModelSpec, Posterior, ProblemInfo, TrainingData,
};
use cabo_gp::{FitMode, KernelKind, Lengthscale, Noise, Prior};
use cabo_rfgp::{DEFAULT_FEATURES, Form, RandomFeatureGp, RfGpConfig};
use common::*;

fn spec(yaml_json: &str) -> Box<dyn ModelSpec> {
    serde_json::from_str(yaml_json).unwrap()
}

fn fixed(features: usize) -> RfGpConfig {
    let mut c = RfGpConfig::map(KernelKind::Matern52, Prior::Gamma, false, features);
    c.fit = FitMode::Fixed;
    c.kernel.lengthscale = Some(Lengthscale::Scalar(0.3));
    c.kernel.outputscale = Some(1.0);
    c.noise = Some(Noise::Fixed(1e-4));
    c
}

#[test]
fn offers_what_it_declares_from_the_prior_on() {
    let declared = ModelSpec::capabilities(&fixed(32));
    assert_eq!(declared, Capabilities::of(&cabo_core::Capability::ALL));
    let d = 2;
    for n in [0, 6] {
        let x = points(n, d, 4);
        let y: Vec<f64> = x.chunks_exact(d).map(target).collect();
        let mut model = RandomFeatureGp::new(fixed(32), d, 1).unwrap();
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
        assert!(post.fantasy_means().is_none() && post.open_bounds().is_none());
    }
}

/// The prior (no data) has the kernel's variance up to the features' Monte Carlo error:
/// `‖φ(x)‖² = (2s/m) Σ cos²(·)`, whose mean is s and standard deviation `s/√(2m)`.
#[test]
fn prior_variance_is_the_outputscale_on_average() {
    let m = 2048;
    let mut model = RandomFeatureGp::new(fixed(m), 3, 9).unwrap();
    let post = model
        .fit(
            TrainingData {
                dim: 3,
                x: &[],
                y: &[],
            },
            0,
        )
        .unwrap();
    for p in points(5, 3, 2).chunks_exact(3) {
        let mv = post.mean_var(p);
        assert_eq!(mv.mean, 0.0);
        assert!(
            (mv.var - 1.0).abs() < 4.0 / (2.0 * m as f64).sqrt(),
            "{}",
            mv.var
        );
    }
}

/// A MAP fit lowers the objective below its default start, records its diagnostics, and is
/// a deterministic function of the data and seeds; a model restored from a checkpoint
/// makes the same next fit as the one it was taken from.
#[test]
fn map_fit_descends_and_resumes_exactly() {
    let d = 2;
    let x = points(30, d, 3);
    let y: Vec<f64> = x.chunks_exact(d).map(|p| 5.0 * target(p) + 1.0).collect();
    let data = TrainingData {
        dim: d,
        x: &x,
        y: &y,
    };
    let config = RfGpConfig::map(KernelKind::Matern52, Prior::Gamma, true, 64);
    let mut model = RandomFeatureGp::new(config.clone(), d, 5).unwrap();
    let post = model.fit(data, 7).unwrap();
    let diag = post.diagnostics();
    let fitted = diag["gp.fit.neg_log_posterior_per_point"];
    assert!(diag["gp.fit.iterations"] >= 1.0);
    assert_eq!(diag["rfgp.features"], 64.0);
    assert_eq!(diag["gp.n"], 30.0);
    // The objective at the default start, in model units (standardised y).
    let t = cabo_gp::OutputTransform::standardize(&y);
    let ym: Vec<f64> = y.iter().map(|v| (v - t.shift) / t.scale).collect();
    let model_data = TrainingData {
        dim: d,
        x: &x,
        y: &ym,
    };
    let space = cabo_gp::HyperparameterSpace::new(&config.gp_config(), d, &ym).unwrap();
    let start = space.default_start();
    let mut g = vec![0.0; start.len()];
    let at_start = model
        .objective(model_data, &start, &mut g, Form::Data)
        .unwrap();
    assert!(fitted < at_start - 1e-3, "{fitted} vs {at_start}");
    // Determinism and resumption.
    let again = RandomFeatureGp::new(config.clone(), d, 5)
        .unwrap()
        .fit(data, 7)
        .unwrap();
    assert_eq!(again.weight_mean(), post.weight_mean());
    let state = Model::checkpoint(&model).unwrap().unwrap();
    let mut restored = RandomFeatureGp::new(config.clone(), d, 5).unwrap();
    Model::restore(&mut restored, &state).unwrap();
    let (a, b) = (model.fit(data, 8).unwrap(), restored.fit(data, 8).unwrap());
    assert_eq!(a.weight_mean(), b.weight_mean());
    // Another basis seed is another model.
    let other = RandomFeatureGp::new(config, d, 6)
        .unwrap()
        .fit(data, 7)
        .unwrap();
    assert_ne!(other.weight_mean(), post.weight_mean());
}

#[test]
fn spec_parses_with_the_exact_gp_keys_and_builds_from_the_run_seed() {
    let s =
        spec(r#"{"type": "random_feature_gp", "kernel": {"type": "rbf"}, "standardize": true}"#);
    let info = ProblemInfo::continuous("t", 2);
    s.validate(2).unwrap();
    let json = serde_json::to_string(&s).unwrap();
    assert!(
        !json.contains("features"),
        "the default is not written: {json}"
    );
    let config: RfGpConfig =
        serde_json::from_str(r#"{"kernel": {"type": "rbf"}, "standardize": true}"#).unwrap();
    assert_eq!(config.features, DEFAULT_FEATURES);
    let x = points(5, 2, 1);
    let y: Vec<f64> = x.chunks_exact(2).map(target).collect();
    let data = TrainingData {
        dim: 2,
        x: &x,
        y: &y,
    };
    let fit = |seed: u64| {
        let spec = spec(
            r#"{"type": "random_feature_gp", "kernel": {"type": "rbf", "lengthscale": 0.3},
                "fit": "fixed", "features": 16}"#,
        );
        let mut m = spec
            .build(&BuildContext {
                problem: &info,
                seed,
            })
            .unwrap();
        m.fit(data, 0).unwrap().mean_var(&[0.5, 0.5]).mean
    };
    assert_eq!(fit(1), fit(1));
    assert_ne!(fit(1), fit(2));
}

#[test]
fn bad_input_is_an_error() {
    let bad = [
        r#"{"type": "random_feature_gp", "kernel": {"type": "rbf"}, "features": 0}"#,
        r#"{"type": "random_feature_gp", "kernel": {"type": "rbf"}, "features": 100000}"#,
        r#"{"type": "random_feature_gp", "kernel": {"type": "rbf", "lengthscale": 0.2}, "fit": "fixed", "noise": 0.0}"#,
        r#"{"type": "random_feature_gp", "kernel": {"type": "rbf", "lengthscale": [0.2, 0.3, 0.1]}}"#,
    ];
    for b in bad {
        assert!(spec(b).validate(2).is_err(), "{b}");
    }
    assert!(
        serde_json::from_str::<Box<dyn ModelSpec>>(
            r#"{"type": "random_feature_gp", "kernel": {"type": "rbf"}, "featurez": 3}"#
        )
        .is_err()
    );
    let mut model = RandomFeatureGp::new(fixed(8), 2, 1).unwrap();
    let nan = TrainingData {
        dim: 2,
        x: &[0.1, f64::NAN],
        y: &[1.0],
    };
    assert!(model.fit(nan, 0).is_err());
    let wrong_dim = TrainingData {
        dim: 3,
        x: &[0.1, 0.2, 0.3],
        y: &[1.0],
    };
    assert!(model.fit(wrong_dim, 0).is_err());
    let post = model
        .fit(
            TrainingData {
                dim: 2,
                x: &[0.1, 0.2],
                y: &[1.0],
            },
            0,
        )
        .unwrap();
    assert!(post.mean_var_grad(&[0.1]).is_err());
    assert!(post.condition_many(&[0.1, 0.2, 0.3], &[1.0]).is_err());
    assert!(post.condition_many(&[0.1, 0.2], &[f64::INFINITY]).is_err());
}
