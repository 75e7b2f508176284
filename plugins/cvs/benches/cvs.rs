//! One decision of the control-set policies with 7 control sets, n = 100 observations,
//! d = 5 and 1024 points of the open variables (the seeds' count, which the rows named
//! `m1024` keep so that they compare across changes of the defaults): UCB-CVS's expected-UCB
//! maximisation (seed 002, App. C.4 reports 38–87 s of CPU for this), a whole TS-PSQ
//! decision (4–232 s there) and a whole EI-PSQ decision. Also one α-ETC exploitation round
//! (seed 004) on seed 004's Hartmann-3 + 3 control sets with n = 300, and on seed 004's
//! airfoil problem an α-ETC exploitation round and an ETC-50 decision at n = 300 with the
//! default count and with 1024.
//!
//! Seed 002's App. C.4 table (CPU seconds of one TS-PSQ and one UCB-CVS iteration at n = 100
//! on each problem) is reproduced last: `c4_iteration` times each whole decision with divan,
//! and after divan's table the bench prints the paper's numbers beside the median CPU time
//! of the process (every thread) over three decisions of each.

use cabo_core::{
    Budget, BudgetState, BuildContext, Dataset, Decision, DecisionContext, Objective, Observation,
    OptimizerSettings, Outcome, Phase, PolicySpec, ProblemInfo, Rng, TrainingData,
};
use cabo_cvs::{ExpectedBounds, problem_info};
use cabo_cvs::{InputDistributions, VariableDistribution};
use cabo_gp::{GpPosterior, Kernel, KernelKind, OutputTransform};

#[path = "../tests/common/seed004.rs"]
mod seed004;

fn main() {
    cabo_cvs::plugins();
    divan::main();
    // Listing or test mode runs nothing worth tabulating.
    if !std::env::args().any(|a| a == "--list" || a == "--test") {
        print!("{}", c4::table());
    }
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
    smooth_data(N, 1)
}

/// `n` uniform points (from stream `seed`) of a smooth function of the first five variables.
fn smooth_data(n: usize, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let mut rng = Rng::new(seed);
    let x: Vec<f64> = (0..n * D).map(|_| rng.uniform()).collect();
    let y: Vec<f64> = x
        .chunks_exact(D)
        .map(|p| (4.0 * p[0]).sin() * p[1] + p[4])
        .collect();
    (x, y)
}

/// The RBF posterior (lengthscale 0.2, noise 1e-4) on `x`, `y`.
fn rbf_posterior(x: &[f64], y: &[f64]) -> GpPosterior {
    GpPosterior::new(
        Kernel::new(KernelKind::Rbf, vec![0.2; D], 1.0).unwrap(),
        1e-4,
        0.0,
        TrainingData { dim: D, x, y },
        OutputTransform::IDENTITY,
    )
    .unwrap()
}

fn posterior() -> GpPosterior {
    let (x, y) = training();
    rbf_posterior(&x, &y)
}

/// Seed 002's airfoil control sets (those of the App. C.4 table).
fn sets() -> Vec<Vec<usize>> {
    c4::SETS_AIRFOIL.iter().map(|s| s.to_vec()).collect()
}

/// `dim` variables, each truncated normal of variance `variance` around 0.5.
fn distributions(dim: usize, variance: f64) -> InputDistributions {
    let open = VariableDistribution::TruncatedNormal { variance };
    InputDistributions::every(open, dim).unwrap()
}

fn setup() -> (GpPosterior, Vec<f64>, Vec<Vec<usize>>) {
    (
        posterior(),
        distributions(D, 0.04).sample_matrix(1024, 2),
        sets(),
    )
}

/// A problem as a policy sees it: `sets` with costs 0.1, 0.2, … in order and every open
/// variable truncated normal of variance 0.04.
fn priced(name: &str, dim: usize, sets: &[Vec<usize>]) -> ProblemInfo {
    let costs: Vec<f64> = (0..sets.len()).map(|i| 0.1 * (i + 1) as f64).collect();
    problem_info(name, sets, Some(&costs), distributions(dim, 0.04)).unwrap()
}

/// The problem of the n = 100 rows: the 7 airfoil sets with costs 0.1…0.7.
fn problem() -> ProblemInfo {
    priced("bench", D, &sets())
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
    b.bench(|| decide_once(spec.as_ref(), &info, &data, &post));
}

/// One whole decision of `spec` with 100 units of budget left, building the policy included
/// (which draws its Monte Carlo samples).
fn decide_once(
    spec: &dyn PolicySpec,
    info: &ProblemInfo,
    data: &Dataset,
    post: &GpPosterior,
) -> Decision {
    let budget = BudgetState::new(Budget {
        cost: Some(100.0),
        iterations: None,
    });
    let mut policy = spec
        .build(&BuildContext {
            problem: info,
            seed: 4,
        })
        .unwrap();
    let ctx = DecisionContext::new(info, data, &budget, 1, 9, &SETTINGS)
        .with_posterior(Box::new(post.clone()));
    policy.decide(&ctx).unwrap()
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
    bench_decision(
        b,
        r#"{"type": "ts_psq", "features": 1024, "mc_samples": 1024}"#,
    );
}

/// One EI-PSQ decision: 32 paths on one 1024-feature basis, their incumbents over the 100
/// observations, and the mean improvement of their expectations maximised per set.
#[divan::bench(sample_count = 5)]
fn ei_psq_decision_7_sets_n100_d5_m1024_s32(b: divan::Bencher) {
    bench_decision(
        b,
        r#"{"type": "ei_psq", "samples": 32, "features": 1024, "mc_samples": 1024}"#,
    );
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
    let (info, post) = (seed004::problem(), dummy_posterior());
    let spec = r#"{"type": "alpha_etc", "tau": 1, "mc_samples": 1024}"#;
    bench_exploitation(b, spec, &info, &post, &seed004::MODERATE_COSTS);
}

/// Times one α-ETC exploitation round of `spec` (JSON, with `tau: 1`) on `info` under
/// `post`: one exploration round over the sets (costs `costs`) runs once outside the
/// timing, and each sample restores its checkpoint.
fn bench_exploitation(
    b: divan::Bencher,
    spec: &str,
    info: &ProblemInfo,
    post: &GpPosterior,
    costs: &[f64],
) {
    let spec: Box<dyn PolicySpec> = serde_json::from_str(spec).unwrap();
    let build = || {
        spec.build(&BuildContext {
            problem: info,
            seed: 4,
        })
        .unwrap()
    };
    let data = Dataset::new(info.dim);
    let budget = BudgetState::new(Budget {
        cost: Some(100.0),
        iterations: None,
    });
    let decide = |policy: &mut Box<dyn cabo_core::Policy>, iteration: usize| {
        let ctx = DecisionContext::new(info, &data, &budget, iteration, 9, &SETTINGS)
            .with_posterior(Box::new(post.clone()));
        let Decision::Evaluate(query) = policy.decide(&ctx).unwrap() else {
            panic!("alpha_etc stopped");
        };
        query
    };
    let mut policy = build();
    for t in 0..info.control_sets.len() {
        let query = decide(&mut policy, t + 1);
        let cost = costs[query.control_set.unwrap()];
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
        decide(&mut policy, info.control_sets.len() + 1)
    });
}

/// Seed 004's airfoil problem as α-ETC and ETC-50 see it: the 7 two-variable sets (no full
/// set, so α-ETC's exploitation searches every set's UCB and LCB, and ETC-50, grouping by
/// size, commits at once and searches every set's UCB), unknown costs, open variables
/// truncated normal of variance 0.02.
mod airfoil004 {
    use super::*;

    /// The mean costs of the cheap grid.
    pub const COSTS: [f64; 7] = [0.01, 0.01, 0.01, 0.1, 0.1, 0.1, 1.0];

    /// The problem with unknown costs.
    pub fn problem() -> ProblemInfo {
        problem_info("seed004-airfoil", &sets(), None, distributions(D, 0.02)).unwrap()
    }

    /// An RBF posterior (lengthscale 0.2) on `n` uniform points of a smooth function: a
    /// decision's work depends on n, d, the sets and the samples, not on the values.
    pub fn posterior(n: usize) -> (Dataset, GpPosterior) {
        let (x, y) = super::smooth_data(n, 3);
        let mut data = Dataset::new(D);
        for (p, v) in x.chunks_exact(D).zip(&y) {
            data.push(Observation::initial(p.to_vec(), *v, 1.0))
                .unwrap();
        }
        let post = super::rbf_posterior(&x, &y);
        (data, post)
    }
}

/// Sample counts of the seed-004 airfoil rows: the default, and the 1024 of before.
const AIRFOIL_SAMPLES: [Option<usize>; 2] = [None, Some(1024)];

/// `,"mc_samples":m` for an explicit count, nothing for the default.
fn samples_key(m: Option<usize>) -> String {
    m.map(|m| format!(r#","mc_samples":{m}"#))
        .unwrap_or_default()
}

/// One α-ETC exploitation round on seed 004's airfoil problem at n = 300 (the decisions
/// of a seed-004 airfoil run spend their time here), with the default sample count and with
/// 1024.
#[divan::bench(sample_count = 3, args = AIRFOIL_SAMPLES)]
fn seed004_airfoil_alpha_etc_exploitation_n300(b: divan::Bencher, m: Option<usize>) {
    let (info, (_, post)) = (airfoil004::problem(), airfoil004::posterior(300));
    let spec = format!(r#"{{"type":"alpha_etc","tau":1{}}}"#, samples_key(m));
    bench_exploitation(b, &spec, &info, &post, &airfoil004::COSTS);
}

/// One ETC-50 decision (grouped by size: every airfoil set has two variables, so the one
/// group holds all seven sets, and an exploring decision maximises over every set, as a
/// committing one does) on seed 004's airfoil problem at n = 300, with the default sample
/// count and with 1024.
#[divan::bench(sample_count = 3, args = AIRFOIL_SAMPLES)]
fn seed004_airfoil_etc50_decision_n300(b: divan::Bencher, m: Option<usize>) {
    let (info, (data, post)) = (airfoil004::problem(), airfoil004::posterior(300));
    let spec = format!(
        r#"{{"type":"cvs_etc","plays":50,"group_by":"size"{}}}"#,
        samples_key(m)
    );
    let spec: Box<dyn PolicySpec> = serde_json::from_str(&spec).unwrap();
    b.bench(|| decide_once(spec.as_ref(), &info, &data, &post));
}

/// Seed 002's App. C.4: the CPU time of one iteration of TS-PSQ and UCB-CVS with a dataset of
/// 100 observations, per problem, beside cabo's.
mod c4 {
    use super::*;

    /// One column of the paper's table: a problem as the policies see it.
    pub struct Problem {
        /// The paper's name.
        pub name: &'static str,
        /// Input dimension.
        pub dim: usize,
        /// The RBF lengthscale of App. C.1 (the GP's, fixed).
        pub lengthscale: f64,
        /// The control sets of App. C.1, 0-based, cheapest first.
        pub sets: &'static [&'static [usize]],
        /// The paper's CPU seconds of one TS-PSQ and one UCB-CVS iteration.
        pub paper: [f64; 2],
    }

    const SETS_3D: &[&[usize]] = &[&[0], &[1], &[2], &[0, 1], &[0, 2], &[1, 2], &[0, 1, 2]];
    pub const SETS_AIRFOIL: &[&[usize]] = &[
        &[3, 4],
        &[1, 4],
        &[0, 3],
        &[1, 2],
        &[2, 4],
        &[0, 1],
        &[2, 3],
    ];

    /// The problems of App. C.4 that cabo has (the plant growth simulator is built from
    /// private data), with the paper's numbers.
    pub const PROBLEMS: [Problem; 3] = [
        Problem {
            name: "GP sample",
            dim: 3,
            lengthscale: 0.1,
            sets: SETS_3D,
            paper: [6.27, 37.92],
        },
        Problem {
            name: "Hartmann",
            dim: 3,
            lengthscale: 0.1,
            sets: SETS_3D,
            paper: [4.14, 52.34],
        },
        Problem {
            name: "Airfoil",
            dim: 5,
            lengthscale: 0.2,
            sets: SETS_AIRFOIL,
            paper: [232.27, 87.09],
        },
    ];

    /// The policies of the table, as App. C.2 sets them: βₜ = 2, 1024 random Fourier
    /// features, 1024 Monte Carlo samples of the open variables.
    pub const POLICIES: [(&str, &str); 2] = [
        (
            "TS-PSQ",
            r#"{"type": "ts_psq", "features": 1024, "mc_samples": 1024}"#,
        ),
        (
            "UCB-CVS",
            r#"{"type": "ucb_cvs", "beta": 2.0, "mc_samples": 1024}"#,
        ),
    ];

    /// Decisions timed per (problem, policy) for the table.
    const REPEATS: usize = 3;

    /// The problem as a policy sees it: its sets with costs 0.1, …, 0.7 and open variables
    /// truncated normal with variance 0.04.
    fn info(p: &Problem) -> ProblemInfo {
        let sets: Vec<Vec<usize>> = p.sets.iter().map(|s| s.to_vec()).collect();
        super::priced("c4", p.dim, &sets)
    }

    /// n = 100 uniform full queries of a smooth function and the GP posterior on them
    /// (fixed hyperparameters, as App. C.1 fixes the lengthscale): a decision's work depends
    /// on n, d, the sets and the samples, not on the objective's values.
    fn data(p: &Problem) -> (Dataset, GpPosterior) {
        let d = p.dim;
        let mut rng = Rng::new(1);
        let x: Vec<f64> = (0..N * d).map(|_| rng.uniform()).collect();
        let y: Vec<f64> = x
            .chunks_exact(d)
            .map(|q| (4.0 * q[0]).sin() * q[1] + q[d - 1])
            .collect();
        let mut data = Dataset::new(d);
        for (q, v) in x.chunks_exact(d).zip(&y) {
            data.push(Observation::initial(q.to_vec(), *v, 1.0))
                .unwrap();
        }
        let post = GpPosterior::new(
            Kernel::new(KernelKind::Rbf, vec![p.lengthscale; d], 1.0).unwrap(),
            1e-4,
            0.0,
            TrainingData {
                dim: d,
                x: &x,
                y: &y,
            },
            OutputTransform::IDENTITY,
        )
        .unwrap();
        (data, post)
    }

    /// A closure making one whole decision of `policy` on `problem` (building the policy
    /// included, which draws its Monte Carlo samples).
    pub fn decision(problem: &Problem, policy: &str) -> impl Fn() -> Decision {
        let spec: Box<dyn PolicySpec> = serde_json::from_str(policy).unwrap();
        let info = info(problem);
        let (data, post) = data(problem);
        move || super::decide_once(spec.as_ref(), &info, &data, &post)
    }

    /// The median CPU seconds of the process (every thread) over [`REPEATS`] decisions, or
    /// `None` where the platform has no process CPU clock.
    fn cpu_median(decide: impl Fn() -> Decision) -> Option<f64> {
        let mut secs = Vec::with_capacity(REPEATS);
        for _ in 0..REPEATS {
            let start = cabo_engine::cpu_time::process_cpu_seconds()?;
            std::hint::black_box(decide());
            secs.push(cabo_engine::cpu_time::process_cpu_seconds()? - start);
        }
        secs.sort_by(f64::total_cmp);
        Some(secs[REPEATS / 2])
    }

    /// The App. C.4 table with cabo's measurements beside the paper's.
    pub fn table() -> String {
        use std::fmt::Write;
        let mut out = String::from(
            "\nSeed 002, App. C.4: CPU seconds of one iteration at n = 100 (paper: 2 × Xeon Gold \
             6326, BoTorch; cabo: this machine, median of 3 decisions, every thread counted)\n\
             problem     policy    paper (s)   cabo (s)   paper / cabo\n",
        );
        for p in &PROBLEMS {
            for ((name, spec), paper) in POLICIES.iter().zip(p.paper) {
                let cabo = cpu_median(decision(p, spec));
                let (mine, ratio) = match cabo {
                    Some(c) => (format!("{c:.3}"), format!("{:.0}×", paper / c)),
                    None => ("—".into(), "—".into()),
                };
                let _ = writeln!(
                    out,
                    "{:<11} {name:<9} {paper:>9.2}   {mine:>8}   {ratio:>12}",
                    p.name
                );
            }
        }
        // The paper's plant growth simulator is a GP of private data.
        let _ = writeln!(
            out,
            "{:<11} {:<9} {:>9.2}   {:>8}   {:>12}\n{:<11} {:<9} {:>9.2}   {:>8}   {:>12}",
            "Plant", "TS-PSQ", 8.96, "—", "—", "Plant", "UCB-CVS", 61.96, "—", "—"
        );
        out
    }
}

/// One whole decision of each policy of seed 002's App. C.4 on each of its problems
/// (`problem/policy`).
#[divan::bench(sample_count = 3, args = c4_cases())]
fn c4_iteration(b: divan::Bencher, case: &C4Case) {
    let decide = c4::decision(&c4::PROBLEMS[case.problem], c4::POLICIES[case.policy].1);
    b.bench(decide);
}

/// A (problem, policy) pair of the App. C.4 table, named for divan's output.
struct C4Case {
    problem: usize,
    policy: usize,
}

impl std::fmt::Display for C4Case {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = c4::PROBLEMS[self.problem].name.replace(' ', "-");
        write!(f, "{name}/{}", c4::POLICIES[self.policy].0)
    }
}

fn c4_cases() -> Vec<C4Case> {
    (0..c4::PROBLEMS.len())
        .flat_map(|problem| (0..c4::POLICIES.len()).map(move |policy| C4Case { problem, policy }))
        .collect()
}
