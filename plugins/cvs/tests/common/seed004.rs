//! Seed 004's Hartmann-3 + 3 set-up in miniature, shared by the α-ETC test and benchmark:
//! its seven control sets with unknown costs, truncated-normal open variables, a peak that
//! needs x₀, x₁ and x₂ together, and an RBF GP that, like a MAP fit, gives the three dummy
//! variables a long lengthscale.

use cabo_core::{ProblemInfo, TrainingData};
use cabo_cvs::{InputDistributions, VariableDistribution};
use cabo_gp::{GpPosterior, Kernel, KernelKind, OutputTransform};

/// Number of variables: three that matter, three dummies.
pub const DIM: usize = 6;

/// Mean costs of seed 004's moderate set, in the order of [`control_sets`].
pub const MODERATE_COSTS: [f64; 7] = [0.1, 0.1, 0.1, 0.2, 0.2, 0.2, 1.0];

/// The control sets of seed 004's Hartmann-3 + 3 specs; the last is the full set.
pub fn control_sets() -> Vec<Vec<usize>> {
    vec![
        vec![0],
        vec![1],
        vec![2],
        vec![3, 4, 5],
        vec![0, 1, 2],
        vec![0, 3, 4, 5],
        vec![0, 1, 2, 3, 4, 5],
    ]
}

/// Open variables: truncated normals of variance 0.02 around 0.5.
pub fn distributions() -> InputDistributions {
    let open = VariableDistribution::TruncatedNormal { variance: 0.02 };
    InputDistributions::every(open, DIM).expect("a valid variance")
}

/// The problem as α-ETC sees it: the control sets with unknown costs and their open
/// variables' distributions.
pub fn problem() -> ProblemInfo {
    let name = "seed004-hartmann3-dummy3";
    cabo_cvs::problem_info(name, &control_sets(), None, distributions()).expect("valid sets")
}

/// A peak of height 3 at x₀ = x₁ = x₂ = 0.8; the dummies do not matter.
pub fn peak(x: &[f64]) -> f64 {
    let r2: f64 = x[..3].iter().map(|v| (v - 0.8) * (v - 0.8)).sum();
    3.0 * (-r2 / 0.1).exp()
}

/// The GP posterior given row-major inputs `x` and outputs `y`: RBF, lengthscale 0.2 on
/// the variables that matter and 5 on the dummies, outputscale 1, noise 1e-4.
pub fn posterior(x: &[f64], y: &[f64]) -> GpPosterior {
    GpPosterior::new(
        Kernel::new(KernelKind::Rbf, vec![0.2, 0.2, 0.2, 5.0, 5.0, 5.0], 1.0).expect("valid"),
        1e-4,
        0.0,
        TrainingData { dim: DIM, x, y },
        OutputTransform::IDENTITY,
    )
    .expect("a positive-definite training covariance")
}
