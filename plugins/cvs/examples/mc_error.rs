//! How many samples of the open variables the control-set policies need: the error of
//! their averages over the open variables against a high-count reference, by sample count,
//! for scrambled Sobol' points (what [`InputDistributions::sample_matrix`] draws) and for
//! the 1024 independent draws cabo used before.
//!
//! The averages are the ones the policies maximise: the expected UCB and LCB
//! `E[μ ± 2σ]([x^i, X^{-i}])` of UCB-CVS, ETC, UCB-PSQ and α-ETC, and the expectation of a
//! posterior sample path of TS-PSQ and EI-PSQ. Each case is a problem of seed 002 or 004
//! with its control sets, open-variable distribution and model (the specs' `model:` line),
//! the model fitted to `n` uniform points of the objective. For each control set but the
//! full one (which averages nothing) the averages are taken at 4 uniform points x^i, and
//! each estimator is repeated with 32 seeds (independent scrambles, or independent draws).
//! The reference is the mean of two scrambles of 2^15 Sobol' points (2^16 in all); its own
//! error (half the spread of the two) is printed and is far below every estimator's.
//!
//! The table gives each case's root-mean-square error of 1024 iid draws and, for Sobol'
//! counts 2^5 … 2^10, their RMSE as a multiple of it. The count chosen, for the expected
//! bounds and for the paths' expectations each, is the smallest power of two whose RMSE is
//! at most the iid-1024 RMSE in every case (docs/decisions.md; the policies'
//! defaults `DEFAULT_MC_SAMPLES` and `DEFAULT_PATH_MC_SAMPLES`). It takes about ten minutes
//! of two cores.
//!
//! ```text
//! cargo run --release -p cabo-cvs --example mc_error [filter]
//! ```
//!
//! It is deterministic (every seed is fixed); `filter` runs the cases whose name contains it.

use cabo_core::{
    BuildContext, MeanVar, ModelSpec, Posterior, ProblemInfo, ProblemSpec, Query, Rng,
    TrainingData, derive_seed,
};
use cabo_cvs::common::sample_points;
use cabo_cvs::fourier::FourierPaths;
use cabo_cvs::{InputDistributions, VariableDistribution};
use rayon::prelude::*;

/// Sobol' counts compared: 2^5 … 2^10.
const LOG2_COUNTS: std::ops::RangeInclusive<u32> = 5..=10;
/// The iid count the policies used before.
const IID: usize = 1024;
/// Points of the reference: two scrambles of this many.
const REFERENCE: usize = 1 << 15;
/// Repetitions (seeds) of each estimator.
const REPEATS: usize = 32;
/// Points x^i per control set.
const POINTS: usize = 4;
/// Sample paths per case (TS-PSQ and EI-PSQ average each path on its own).
const PATHS: usize = 4;
/// Random Fourier features of a path (seed 002, App. C.2).
const FEATURES: usize = 1024;

/// One problem of the seeds as the policies see it.
struct Case {
    name: String,
    objective: String,
    dim: usize,
    sets: Vec<Vec<usize>>,
    variance: f64,
    model: &'static str,
    n: usize,
}

/// Seed 002's fixed-hyperparameter GP (App. C.1) with lengthscale `ls`.
fn fixed_model(ls: f64) -> &'static str {
    if ls == 0.1 {
        r#"{"type":"exact_gp","kernel":{"type":"rbf","lengthscale":0.1,"outputscale":1.0},"fit":"fixed","noise":1e-4}"#
    } else {
        r#"{"type":"exact_gp","kernel":{"type":"rbf","lengthscale":0.2,"outputscale":1.0},"fit":"fixed","noise":1e-4}"#
    }
}

/// Seed 004's MAP-fitted GP (the `cvs-unknown` specs).
const MAP_MODEL: &str = r#"{"type":"exact_gp","kernel":{"type":"rbf"},"fit":"map","prior":"gamma","noise":{"min":1e-6,"max":1e-2},"standardize":true}"#;

fn airfoil() -> String {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/airfoil_self_noise.csv"
    );
    format!(r#"{{"type":"airfoil","path":"{path}"}}"#)
}

/// The cases, in the table's row order: seed 002's three objectives at both open-variable
/// variances, then seed 004's airfoil at two data sizes and its two objectives with dummy
/// dimensions.
///
/// One function because it is the list of cases written out as data: each case's objective,
/// control sets, variance, model and data size sit together, to be read against the seeds'
/// settings, and the order they are pushed in is the order of the printed table.
fn cases() -> Vec<Case> {
    let sets_3d = vec![
        vec![0],
        vec![1],
        vec![2],
        vec![0, 1],
        vec![0, 2],
        vec![1, 2],
    ];
    let sets_airfoil = vec![
        vec![3, 4],
        vec![1, 4],
        vec![0, 3],
        vec![1, 2],
        vec![2, 4],
        vec![0, 1],
        vec![2, 3],
    ];
    let gp_sample = r#"{"type":"gp_prior_sample","dim":3,"kernel":{"type":"rbf","lengthscale":0.1},"optimum_search":{"raw_samples":64,"restarts":1,"max_iters":5}}"#;
    let mut out = Vec::new();
    for v in [0.02, 0.08] {
        for (name, objective, dim, sets, ls) in [
            (
                "hartmann3",
                r#"{"type":"hartmann3"}"#.to_string(),
                3,
                &sets_3d,
                0.1,
            ),
            ("gp-sample", gp_sample.to_string(), 3, &sets_3d, 0.1),
            ("airfoil", airfoil(), 5, &sets_airfoil, 0.2),
        ] {
            out.push(Case {
                name: format!("002 {name} v{v}"),
                objective,
                dim,
                sets: sets.clone(),
                variance: v,
                model: fixed_model(ls),
                n: 50,
            });
        }
    }
    for n in [50, 200] {
        out.push(Case {
            name: format!("004 airfoil v0.02 n{n}"),
            objective: airfoil(),
            dim: 5,
            sets: sets_airfoil.clone(),
            variance: 0.02,
            model: MAP_MODEL,
            n,
        });
    }
    out.push(Case {
        name: "004 ackley6+6 v0.02".into(),
        objective: r#"{"type":"ackley","dim":6,"dummy_dims":6}"#.into(),
        dim: 12,
        sets: vec![
            vec![0, 1, 2],
            vec![3, 4, 5],
            vec![6, 7, 8],
            vec![9, 10, 11],
            (0..6).collect(),
            (6..12).collect(),
        ],
        variance: 0.02,
        model: MAP_MODEL,
        n: 50,
    });
    out.push(Case {
        name: "004 hartmann3+3 v0.02".into(),
        objective: r#"{"type":"hartmann3","dummy_dims":3}"#.into(),
        dim: 6,
        sets: vec![
            vec![0],
            vec![1],
            vec![2],
            vec![3, 4, 5],
            vec![0, 1, 2],
            vec![0, 3, 4, 5],
        ],
        variance: 0.02,
        model: MAP_MODEL,
        n: 50,
    });
    out
}

/// The case's posterior: its model fitted to `n` uniform points of its objective.
fn posterior(case: &Case) -> Box<dyn Posterior> {
    let spec: Box<dyn ProblemSpec> = serde_json::from_str(&case.objective).expect("objective");
    let problem = spec.build(0).expect("objective builds");
    let d = case.dim;
    let mut rng = Rng::new(derive_seed(&[&"mc_error data", &case.name]));
    let x: Vec<f64> = (0..case.n * d).map(|_| rng.uniform()).collect();
    let y: Vec<f64> = x
        .chunks_exact(d)
        .map(|p| {
            problem
                .evaluate(&Query::at(p.to_vec()), 0)
                .expect("evaluates")
                .y
        })
        .collect();
    let model: Box<dyn ModelSpec> = serde_json::from_str(case.model).expect("model");
    let info = ProblemInfo::continuous("mc_error", d);
    let mut model = model
        .build(&BuildContext {
            problem: &info,
            seed: 1,
        })
        .expect("model builds");
    model
        .fit(
            TrainingData {
                dim: d,
                x: &x,
                y: &y,
            },
            1,
        )
        .expect("model fits")
}

/// The averages one sample set gives at one (set, x^i): E[μ + 2σ], E[μ − 2σ], and each
/// path's expectation.
fn averages(
    post: &dyn Posterior,
    paths: &FourierPaths,
    vars: &[usize],
    xis: &[Vec<f64>],
    samples: &[f64],
) -> Vec<Vec<f64>> {
    let d = post.dim();
    let m = samples.len() / d;
    let expectation = paths.expectation(vars, samples).expect("paths");
    xis.iter()
        .map(|xi| {
            let pts = sample_points(samples, d, vars, xi);
            let mut mv = vec![MeanVar::default(); m];
            post.mean_var_batch(&pts, &mut mv);
            let mean = mv.iter().map(|p| p.mean).sum::<f64>() / m as f64;
            let sd = mv.iter().map(|p| p.var.max(0.0).sqrt()).sum::<f64>() / m as f64;
            let mut out = vec![mean + 2.0 * sd, mean - 2.0 * sd];
            let mut path_values = vec![0.0; PATHS];
            expectation.values(xi, &mut path_values);
            out.extend(path_values);
            out
        })
        .collect()
}

/// `m` independent draws of every variable (the sampling cabo used before).
fn iid(dists: &InputDistributions, m: usize, seed: u64) -> Vec<f64> {
    let mut rng = Rng::new(seed);
    (0..m)
        .flat_map(|_| {
            dists
                .variables
                .iter()
                .map(|s| s.sample(&mut rng))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Root-mean-square errors of one case: per estimator (iid 1024, then each Sobol' count),
/// per quantity (UCB, LCB, path); and the reference's own RMS error.
struct CaseErrors {
    iid: [f64; 3],
    sobol: Vec<[f64; 3]>,
    reference: [f64; 3],
}

/// Accumulated squared errors per quantity (UCB, LCB, paths) and their counts.
#[derive(Default, Clone, Copy)]
struct Sq {
    sum: [f64; 3],
    count: [usize; 3],
}

impl Sq {
    fn add(&mut self, est: &[f64], reference: &[f64]) {
        for (q, (e, r)) in est.iter().zip(reference).enumerate() {
            let k = q.min(2);
            self.sum[k] += (e - r) * (e - r);
            self.count[k] += 1;
        }
    }
    fn merge(mut self, o: Sq) -> Sq {
        for k in 0..3 {
            self.sum[k] += o.sum[k];
            self.count[k] += o.count[k];
        }
        self
    }
    fn rmse(&self) -> [f64; 3] {
        std::array::from_fn(|k| (self.sum[k] / self.count[k].max(1) as f64).sqrt())
    }
}

fn run_case(case: &Case) -> CaseErrors {
    let post = posterior(case);
    let fourier = post
        .fourier_samples()
        .expect("the exact GP draws Fourier paths");
    let paths = FourierPaths::sample(fourier, FEATURES, PATHS, 7).expect("paths");
    let open = VariableDistribution::TruncatedNormal {
        variance: case.variance,
    };
    let dists = InputDistributions::every(open, case.dim).expect("variance");
    let seed = |what: &str, r: usize| derive_seed(&[&"mc_error", &case.name, &what, &r]);
    let counts: Vec<usize> = LOG2_COUNTS.map(|k| 1usize << k).collect();
    let per_set: Vec<(Sq, Vec<Sq>, Sq)> = case
        .sets
        .par_iter()
        .enumerate()
        .map(|(i, vars)| {
            let mut rng = Rng::new(derive_seed(&[&"mc_error points", &case.name, &i]));
            let xis: Vec<Vec<f64>> = (0..POINTS)
                .map(|_| vars.iter().map(|_| rng.uniform()).collect())
                .collect();
            let eval = |s: &[f64]| averages(post.as_ref(), &paths, vars, &xis, s);
            let r1 = eval(&dists.sample_matrix(REFERENCE, seed("reference", 1)));
            let r2 = eval(&dists.sample_matrix(REFERENCE, seed("reference", 2)));
            let reference: Vec<Vec<f64>> = r1
                .iter()
                .zip(&r2)
                .map(|(a, b)| a.iter().zip(b).map(|(x, y)| 0.5 * (x + y)).collect())
                .collect();
            // The mean of two has half the variance of one: its error is |r1 − r2| / 2.
            let mut own = Sq::default();
            for (a, b) in r1.iter().zip(&r2) {
                let half: Vec<f64> = a.iter().zip(b).map(|(x, y)| 0.5 * (x - y)).collect();
                own.add(&half, &vec![0.0; half.len()]);
            }
            let score = |s: &[f64]| {
                let mut sq = Sq::default();
                for (e, r) in eval(s).iter().zip(&reference) {
                    sq.add(e, r);
                }
                sq
            };
            let iid_sq = (0..REPEATS)
                .map(|r| score(&iid(&dists, IID, seed("iid", r))))
                .fold(Sq::default(), Sq::merge);
            let sobol_sq: Vec<Sq> = counts
                .iter()
                .map(|&m| {
                    (0..REPEATS)
                        .map(|r| score(&dists.sample_matrix(m, seed(&format!("sobol {m}"), r))))
                        .fold(Sq::default(), Sq::merge)
                })
                .collect();
            (iid_sq, sobol_sq, own)
        })
        .collect();
    let mut iid_sq = Sq::default();
    let mut sobol_sq = vec![Sq::default(); counts.len()];
    let mut own = Sq::default();
    for (a, b, c) in per_set {
        iid_sq = iid_sq.merge(a);
        for (s, t) in sobol_sq.iter_mut().zip(b) {
            *s = s.merge(t);
        }
        own = own.merge(c);
    }
    CaseErrors {
        iid: iid_sq.rmse(),
        sobol: sobol_sq.iter().map(Sq::rmse).collect(),
        reference: own.rmse(),
    }
}

fn main() {
    cabo_cvs::plugins();
    cabo_gp::plugins();
    cabo_benchmarks::plugins();
    let filter = std::env::args().nth(1).unwrap_or_default();
    let names = ["E[μ+2σ]", "E[μ−2σ]", "path"];
    let mut header = format!(
        "{:<24} {:<8} {:>10} {:>10}",
        "case", "average", "ref RMSE", "iid-1024"
    );
    for k in LOG2_COUNTS {
        header.push_str(&format!(" {:>7}", format!("2^{k}")));
    }
    println!(
        "RMSE of iid-1024 (absolute) and of scrambled Sobol' 2^k (as a multiple of iid-1024);\n\
         {REPEATS} seeds × {POINTS} points × each non-full control set; reference 2 × 2^15 Sobol'\n"
    );
    println!("{header}");
    // The worst ratio per count, for the bounds (UCB and LCB) and for the paths.
    let mut worst = [
        vec![0.0f64; LOG2_COUNTS.count()],
        vec![0.0f64; LOG2_COUNTS.count()],
    ];
    for case in cases().iter().filter(|c| c.name.contains(&filter)) {
        let e = run_case(case);
        for (q, name) in names.iter().enumerate() {
            let mut row = format!(
                "{:<24} {:<8} {:>10.2e} {:>10.2e}",
                case.name, name, e.reference[q], e.iid[q]
            );
            for (k, s) in e.sobol.iter().enumerate() {
                let ratio = s[q] / e.iid[q];
                let w = &mut worst[usize::from(q == 2)][k];
                *w = w.max(ratio);
                row.push_str(&format!(" {ratio:>7.2}"));
            }
            println!("{row}");
        }
    }
    println!();
    for (w, what) in worst.iter().zip(["bounds", "paths"]) {
        let mut row = format!("{:<24} {:<8} {:>10} {:>10}", "worst case", what, "", "");
        for r in w {
            row.push_str(&format!(" {r:>7.2}"));
        }
        println!("{row}");
    }
    println!();
    for (w, what) in worst.iter().zip(["expected bounds", "path expectations"]) {
        match LOG2_COUNTS.zip(w).find(|(_, r)| **r <= 1.0) {
            Some((k, _)) => println!(
                "{what}: the smallest Sobol' count no worse than iid-1024 in every case is 2^{k} = {}",
                1 << k
            ),
            None => println!("{what}: no Sobol' count up to 1024 matches iid-1024 in every case"),
        }
    }
}
