//! One decision of the control-set policies with 7 control sets, n = 100 observations,
//! d = 5 and 1024 Monte Carlo samples: UCB-CVS's expected-UCB maximisation (seed 002,
//! App. C.4 reports 38–87 s of CPU for this), a whole TS-PSQ decision (4–232 s there) and a
//! whole EI-PSQ decision. Also one α-ETC exploitation round (seed 004) on seed 004's
//! Hartmann-3 + 3 control sets with n = 300.

use cabo_core::{
    Budget, BudgetState, BuildContext, ControlSet, Dataset, Decision, DecisionContext, Objective,
    Observation, OptimizerSettings, Outcome, Phase, PolicySpec, ProblemInfo, Rng, TrainingData,
};
use cabo_cvs::ExpectedBounds;
use cabo_cvs::dist::{InputDistributions, VariableDistribution};
use cabo_gp::{GpPosterior, Kernel, KernelKind, OutputTransform};

#[path = "../tests/common/seed004.rs"]
mod seed004;

fn main() {
    std::hint::black_box(cabo_cvs::link)();
    divan::main();
}

const N: usize = 100;
const D: usize = 5;

/// The seeds' optimiser settings for these benches: 64 raw samples, 4 restarts, ≤ 50
/// L-BFGS-B iterations.
const SETTINGS: OptimizerSettings = OptimizerSettings {
    raw_samples: 64,
    restarts: 4,
    max_iters: 50,
};

fn training() -> (Vec<f64>, Vec<f64>) {
    let mut rng = Rng::new(1);
    let x: Vec<f64> = (0..N * D).map(|_| rng.uniform()).collect();
    let y: Vec<f64> = x
        .chunks_exact(D)
        .map(|p| (4.0 * p[0]).sin() * p[1] + p[4])
        .collect();
    (x, y)
}

fn posterior() -> GpPosterior {
    let (x, y) = training();
    GpPosterior::new(
        Kernel::new(KernelKind::Rbf, vec![0.2; D], 1.0).unwrap(),
        1e-4,
        0.0,
        TrainingData {
            dim: D,
            x: &x,
            y: &y,
        },
        OutputTransform::IDENTITY,
    )
    .unwrap()
}

fn sets() -> Vec<Vec<usize>> {
    vec![
        vec![3, 4],
        vec![1, 4],
        vec![0, 3],
        vec![1, 2],
        vec![2, 4],
        vec![0, 1],
        vec![2, 3],
    ]
}

fn distributions() -> InputDistributions {
    let s = VariableDistribution::TruncatedNormal { variance: 0.04 }
        .sampler()
        .unwrap();
    InputDistributions {
        variables: vec![s; D],
    }
}

fn setup() -> (GpPosterior, Vec<f64>, Vec<Vec<usize>>) {
    (posterior(), distributions().sample_matrix(1024, 2), sets())
}

/// The problem as a policy sees it: the 7 sets with costs 0.1…0.7 and their distributions.
fn problem() -> ProblemInfo {
    let mut info = ProblemInfo::continuous("bench", D);
    info.control_sets = sets()
        .into_iter()
        .enumerate()
        .map(|(i, variables)| ControlSet {
            variables,
            known_cost: Some(0.1 * (i + 1) as f64),
        })
        .collect();
    info.with_extension(distributions())
}

/// The 100 training points as full-query observations.
fn dataset() -> Dataset {
    let (x, y) = training();
    let mut data = Dataset::new(D);
    for (p, v) in x.chunks_exact(D).zip(y) {
        data.push(Observation::initial(p.to_vec(), v, 1.0)).unwrap();
    }
    data
}

/// Builds the policy in `spec` (JSON) and times whole decisions (building included, which
/// draws the 1024 Monte Carlo samples).
fn bench_decision(b: divan::Bencher, spec: &str) {
    let spec: Box<dyn PolicySpec> = serde_json::from_str(spec).unwrap();
    let (info, data, post) = (problem(), dataset(), posterior());
    let budget = BudgetState::new(Budget {
        cost: Some(100.0),
        iterations: None,
    });
    b.bench(|| {
        let mut policy = spec
            .build(&BuildContext {
                problem: &info,
                seed: 4,
            })
            .unwrap();
        let ctx = DecisionContext::new(&info, &data, &budget, 1, 9, &SETTINGS)
            .with_posterior(Box::new(post.clone()));
        policy.decide(&ctx).unwrap()
    });
}

/// The whole decision: 7 multi-start maximisations, parallel over sets.
#[divan::bench(sample_count = 5)]
fn ucb_cvs_iteration_7_sets_n100_d5_m1024(b: divan::Bencher) {
    let (post, samples, sets) = setup();
    let all: Vec<usize> = (0..sets.len()).collect();
    b.bench(|| {
        let bounds = ExpectedBounds::new(&post, &samples).unwrap();
        bounds
            .maximize_sets(&sets, &all, 2.0, &SETTINGS, 3)
            .unwrap()
    });
}

/// One TS-PSQ decision: a 1024-feature posterior sample path, then its expectation over
/// the open variables maximised per set.
#[divan::bench(sample_count = 5)]
fn ts_psq_decision_7_sets_n100_d5_m1024(b: divan::Bencher) {
    bench_decision(b, r#"{"type": "ts_psq", "features": 1024}"#);
}

/// One EI-PSQ decision: 32 paths on one 1024-feature basis, their incumbents over the 100
/// observations, and the mean improvement of their expectations maximised per set.
#[divan::bench(sample_count = 5)]
fn ei_psq_decision_7_sets_n100_d5_m1024_s32(b: divan::Bencher) {
    bench_decision(b, r#"{"type": "ei_psq", "samples": 32, "features": 1024}"#);
}

/// One expected-UCB value and gradient (1024 samples, n = 100).
#[divan::bench]
fn expected_ucb_value_grad(b: divan::Bencher) {
    let (post, samples, sets) = setup();
    let bounds = ExpectedBounds::new(&post, &samples).unwrap();
    let f = bounds.for_set(&sets[0], 2.0).unwrap();
    b.bench(|| {
        let mut g = [0.0; 2];
        f.value_grad(divan::black_box(&[0.3, 0.6]), &mut g)
    });
}

/// A posterior over seed 004's Hartmann-3 + 3 variables from n = 300 uniform points of a
/// peak that needs all of x₀, x₁, x₂: only the sets holding {0, 1, 2} stay plausible once
/// exploration has narrowed S₁.
fn dummy_posterior() -> GpPosterior {
    let n = 300;
    let mut rng = Rng::new(7);
    let x: Vec<f64> = (0..n * seed004::DIM).map(|_| rng.uniform()).collect();
    let y: Vec<f64> = x.chunks_exact(seed004::DIM).map(seed004::peak).collect();
    seed004::posterior(&x, &y)
}

/// One α-ETC exploitation round (paper rule, 1024 samples): the cheap full-set LCB search,
/// then the expected-UCB searches of the sets still in S₁. Exploration (one round over the 7
/// sets) runs once outside the timing; each sample restores its checkpoint.
#[divan::bench(sample_count = 5)]
fn alpha_etc_exploitation_round_7_sets_n300_d6_m1024(b: divan::Bencher) {
    let (d, info) = (seed004::DIM, seed004::problem());
    let spec: Box<dyn PolicySpec> =
        serde_json::from_str(r#"{"type": "alpha_etc", "tau": 1}"#).unwrap();
    let build = || {
        spec.build(&BuildContext {
            problem: &info,
            seed: 4,
        })
        .unwrap()
    };
    let (post, data) = (dummy_posterior(), Dataset::new(d));
    let budget = BudgetState::new(Budget {
        cost: Some(100.0),
        iterations: None,
    });
    let decide = |policy: &mut Box<dyn cabo_core::Policy>, iteration: usize| {
        let ctx = DecisionContext::new(&info, &data, &budget, iteration, 9, &SETTINGS)
            .with_posterior(Box::new(post.clone()));
        let Decision::Evaluate(query) = policy.decide(&ctx).unwrap() else {
            panic!("alpha_etc stopped");
        };
        query
    };
    let mut policy = build();
    for t in 0..seed004::control_sets().len() {
        let query = decide(&mut policy, t + 1);
        let cost = seed004::MODERATE_COSTS[query.control_set.unwrap()];
        let outcome = Outcome::new(0.0, cost, query.x.clone(), None);
        let seen = Observation {
            query,
            outcome,
            phase: Phase::Policy,
        };
        policy.observe(&data, &seen).unwrap();
    }
    let explored = policy
        .checkpoint()
        .unwrap()
        .expect("alpha_etc is resumable");
    b.bench(|| {
        let mut policy = build();
        policy.restore(&explored).unwrap();
        decide(&mut policy, 8)
    });
}
