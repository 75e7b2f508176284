//! One UCB-CVS decision's expected-UCB maximisation: 7 control sets, n = 100 observations,
//! d = 5, 1024 Monte Carlo samples (seed 002, App. C.4 reports 38–87 s of CPU for this).

use cabo_core::{OptimizerSettings, Rng, TrainingData};
use cabo_cvs::dist::{InputDistributions, VariableDistribution};
use cabo_cvs::{ExpectedBounds, maximize_sets};
use cabo_gp::{GpPosterior, Kernel, KernelKind, OutputTransform};

fn main() {
    divan::main();
}

fn setup() -> (GpPosterior, Vec<f64>, Vec<Vec<usize>>) {
    let (n, d) = (100, 5);
    let mut rng = Rng::new(1);
    let x: Vec<f64> = (0..n * d).map(|_| rng.uniform()).collect();
    let y: Vec<f64> = x
        .chunks_exact(d)
        .map(|p| (4.0 * p[0]).sin() * p[1] + p[4])
        .collect();
    let post = GpPosterior::new(
        Kernel::new(KernelKind::Rbf, vec![0.2; d], 1.0).unwrap(),
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
    let s = VariableDistribution::TruncatedNormal { variance: 0.04 }
        .sampler()
        .unwrap();
    let samples = InputDistributions {
        variables: vec![s; d],
    }
    .sample_matrix(1024, 2);
    let sets = vec![
        vec![3, 4],
        vec![1, 4],
        vec![0, 3],
        vec![1, 2],
        vec![2, 4],
        vec![0, 1],
        vec![2, 3],
    ];
    (post, samples, sets)
}

/// The whole decision: 7 multi-start maximisations (64 raw samples, 4 restarts, ≤ 50
/// L-BFGS-B iterations each), parallel over sets.
#[divan::bench(sample_count = 5)]
fn ucb_cvs_iteration_7_sets_n100_d5_m1024(b: divan::Bencher) {
    let (post, samples, sets) = setup();
    let settings = OptimizerSettings {
        raw_samples: 64,
        restarts: 4,
        max_iters: 50,
    };
    let all: Vec<usize> = (0..sets.len()).collect();
    b.bench(|| {
        let bounds = ExpectedBounds::new(&post, &samples).unwrap();
        maximize_sets(&bounds, &sets, &all, 2.0, &settings, 3).unwrap()
    });
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
