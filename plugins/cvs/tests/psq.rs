//! Policy-level checks of the sampling baselines TS-PSQ and EI-PSQ: TS-PSQ on one full
//! control set is Thompson sampling on the RFF path, decisions depend only on the seeds (not
//! on the thread count), and bad set-ups are clear errors.

mod common;
#[path = "common/opaque.rs"]
mod opaque;
use cabo_core::{
    Budget, BudgetState, Dataset, Decision, DecisionContext, Observation, OptimizerSettings,
    Posterior, ProblemInfo, Query, Rng, TrainingData, derive_seed,
};
use cabo_cvs::fourier::FourierPaths;
use cabo_gp::{GpPosterior, Kernel, KernelKind, OutputTransform};
use cabo_optim::{MaximizeOptions, maximize};
use common::{build, problem};
use opaque::Opaque;

const D: usize = 3;

fn data(n: usize) -> Dataset {
    let mut rng = Rng::new(2);
    let mut set = Dataset::new(D);
    for _ in 0..n {
        let x: Vec<f64> = (0..D).map(|_| rng.uniform()).collect();
        let y = (5.0 * x[0]).sin() + x[1] * x[2];
        set.push(Observation::initial(x, y, 1.0)).unwrap();
    }
    set
}

fn posterior(data: &Dataset) -> GpPosterior {
    let (x, y) = (data.x_matrix(), data.ys());
    GpPosterior::new(
        Kernel::new(KernelKind::Rbf, vec![0.2; D], 1.0).unwrap(),
        1e-4,
        0.0,
        TrainingData {
            dim: D,
            x: &x,
            y: &y,
        },
        OutputTransform::standardize(&y),
    )
    .unwrap()
}

const SETTINGS: OptimizerSettings = OptimizerSettings {
    raw_samples: 32,
    restarts: 2,
    max_iters: 30,
};

/// One decision of `spec` at decision seed 21.
fn decide(
    spec: &str,
    info: &ProblemInfo,
    data: &Dataset,
    post: Box<dyn Posterior>,
) -> cabo_core::Result<Query> {
    let budget = BudgetState::new(Budget {
        cost: Some(10.0),
        iterations: None,
    });
    let ctx = DecisionContext::new(info, data, &budget, 1, 21, &SETTINGS).with_posterior(post);
    match build(spec, info)?.decide(&ctx)? {
        Decision::Evaluate(q) => Ok(q),
        other => panic!("unexpected decision {other:?}"),
    }
}

/// Oracle: on a problem whose only control set is the full one, TS-PSQ is Thompson sampling:
/// its query is the maximiser of the same RFF path found by maximising the path directly
/// (same seeds), to 1e-6 per coordinate.
#[test]
fn ts_psq_on_the_full_set_maximises_its_sample_path() {
    let data = data(12);
    let post = posterior(&data);
    let info = problem(D, &[vec![0, 1, 2]], Some(&[1.0]));
    let q = decide(
        r#"{"type": "ts_psq", "features": 256, "mc_samples": 16}"#,
        &info,
        &data,
        Box::new(post.clone()),
    )
    .unwrap();
    assert_eq!(q.control_set, Some(0));
    let paths =
        FourierPaths::sample(&post, 256, 1, derive_seed(&[&21u64, &"ts_psq path"])).unwrap();
    let path = paths.path(0);
    let seed = derive_seed(&[&21u64, &0usize]);
    let oracle = maximize(&path, D, &SETTINGS, seed, &MaximizeOptions::default()).unwrap();
    for k in 0..D {
        assert!(
            (q.x[k] - oracle.x[k]).abs() < 1e-6,
            "{:?} vs {:?}",
            q.x,
            oracle.x
        );
    }
}

/// Every variant decides identically on 1 and 2 threads, and twice in a row.
#[test]
fn decisions_depend_only_on_the_seeds() {
    let data = data(15);
    let post = posterior(&data);
    let sets = [vec![0], vec![1, 2], vec![0, 1, 2]];
    let info = problem(D, &sets, Some(&[0.1, 0.3, 1.0]));
    for spec in [
        r#"{"type": "ts_psq", "features": 256, "mc_samples": 64}"#,
        r#"{"type": "ts_psq", "features": 256, "mc_samples": 64, "per_unit_cost": true}"#,
        r#"{"type": "ei_psq", "samples": 8, "features": 256, "mc_samples": 64}"#,
        r#"{"type": "ei_psq", "samples": 8, "features": 256, "mc_samples": 64, "per_unit_cost": true}"#,
    ] {
        let run = |threads: usize| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap()
                .install(|| decide(spec, &info, &data, Box::new(post.clone())).unwrap())
        };
        let one = run(1);
        assert_eq!(one, run(2), "{spec}");
        assert_eq!(one, run(2), "{spec}");
        let set = one.control_set.expect("a control-set query");
        assert!(set < sets.len());
        assert!(one.x.iter().all(|v| (0.0..=1.0).contains(v)));
    }
}

#[test]
fn bad_set_ups_are_clear_errors() {
    let data = data(6);
    let post = posterior(&data);
    let sets = [vec![0], vec![0, 1, 2]];
    let known = problem(D, &sets, Some(&[0.1, 1.0]));
    let ei = r#"{"type": "ei_psq", "samples": 4, "features": 64, "mc_samples": 16}"#;
    // EI-PSQ needs draws on a Fourier basis; TS-PSQ falls back on the posterior's own
    // sample paths.
    let err = decide(ei, &known, &data, Box::new(Opaque(post.clone()))).unwrap_err();
    assert!(err.to_string().contains("fourier_samples"), "{err}");
    let ts = r#"{"type": "ts_psq", "features": 64, "mc_samples": 16}"#;
    assert!(decide(ts, &known, &data, Box::new(Opaque(post.clone()))).is_ok());
    // No observation: no incumbent.
    let err = decide(ei, &known, &Dataset::new(D), Box::new(post.clone())).unwrap_err();
    assert!(err.to_string().contains("incumbent"), "{err}");
    // Per unit cost needs known costs.
    let unknown = problem(D, &sets, None);
    for spec in [
        r#"{"type": "ei_psq", "per_unit_cost": true}"#,
        r#"{"type": "ts_psq", "per_unit_cost": true}"#,
        r#"{"type": "ucb_psq", "per_unit_cost": true}"#,
    ] {
        assert!(build(spec, &unknown).is_err(), "{spec}");
        assert!(build(spec, &known).is_ok(), "{spec}");
    }
}
