//! The policy set-up shared by the cvs policy tests (`etc.rs`, `psq.rs`): a problem view
//! with given control sets and costs, and policies built from their JSON specs. Every test
//! binary that declares this module uses all of it; the other shared pieces sit beside it
//! (`opaque.rs`, `seed004.rs`) and are included by path where they are used, so that no
//! binary compiles a helper it leaves unused.

use cabo_core::{BuildContext, Policy, PolicySpec, ProblemInfo, Result};
use cabo_cvs::{InputDistributions, VariableDistribution};

/// A `dim`-variable problem with `sets` and known `costs` (`None`: unknown costs), every
/// open variable a truncated normal of variance 0.04 (seed 002's middle setting).
pub fn problem(dim: usize, sets: &[Vec<usize>], costs: Option<&[f64]>) -> ProblemInfo {
    let open = VariableDistribution::TruncatedNormal { variance: 0.04 };
    let dists = InputDistributions::every(open, dim).expect("a valid variance");
    cabo_cvs::problem_info("test", sets, costs, dists).expect("valid control sets")
}

/// The policy of `spec` (JSON) on `info`, built with seed 5.
pub fn build(spec: &str, info: &ProblemInfo) -> Result<Box<dyn Policy>> {
    let spec: Box<dyn PolicySpec> = serde_json::from_str(spec).expect("a policy spec");
    spec.build(&BuildContext {
        problem: info,
        seed: 5,
    })
}
