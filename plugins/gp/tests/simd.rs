//! The AVX2 build of the GP kernels gives bitwise the same results as the baseline build,
//! so results do not depend on the machine (see `cabo_linalg::simd`). On a processor without
//! AVX2 both runs take the baseline build and the comparison holds trivially.

mod common;
use cabo_core::{Posterior, TrainingData};
use cabo_gp::linalg::Cholesky;
use cabo_gp::{ExactGp, GpConfig, KernelKind, Prior};
use cabo_linalg::simd::Isa;
use common::*;

/// Everything a MAP fit produces that the rest of cabo reads, as bit patterns.
fn fit_bits(kind: KernelKind, n: usize, d: usize) -> Vec<u64> {
    let x = points(n, d, 3 + n as u64);
    let y: Vec<f64> = x.chunks_exact(d).map(target).collect();
    let mut gp = ExactGp::new(GpConfig::map(kind, Prior::Gamma, true)).unwrap();
    let post = gp
        .fit(
            TrainingData {
                dim: d,
                x: &x,
                y: &y,
            },
            5,
        )
        .unwrap();
    let mut bits: Vec<u64> = post.diagnostics().values().map(|v| v.to_bits()).collect();
    for p in points(7, d, 99).chunks_exact(d) {
        let mv = post.mean_var(p);
        bits.extend([mv.mean.to_bits(), mv.var.to_bits()]);
        let g = post.mean_var_grad(p).unwrap();
        bits.extend(g.dmean.iter().chain(&g.dvar).map(|v| v.to_bits()));
    }
    bits
}

fn factor_bits(n: usize) -> Vec<u64> {
    let x = points(n, 3, 11);
    let k = cabo_gp::Kernel::new(KernelKind::Rbf, vec![0.3; 3], 1.0)
        .unwrap()
        .gram(&x);
    let chol = Cholesky::factor(&k, n).unwrap();
    let mut bits: Vec<u64> = (0..n)
        .flat_map(|i| chol.row(i).to_vec())
        .map(f64::to_bits)
        .collect();
    bits.extend(chol.inverse().iter().map(|v| v.to_bits()));
    bits.push(chol.jitter().to_bits());
    // Both triangular solves, on a right-hand side with no structure.
    let mut z: Vec<f64> = points(n, 1, 17).iter().map(|v| v - 0.5).collect();
    chol.solve_lower_in_place(&mut z);
    bits.extend(z.iter().map(|v| v.to_bits()));
    chol.solve_upper_in_place(&mut z);
    bits.extend(z.iter().map(|v| v.to_bits()));
    let m = 7;
    let mut zs: Vec<f64> = points(n * m, 1, 19).iter().map(|v| v - 0.5).collect();
    chol.solve_lower_matrix_in_place(&mut zs, m);
    bits.extend(zs.iter().map(|v| v.to_bits()));
    bits
}

#[test]
fn avx2_and_baseline_builds_agree_to_the_bit() {
    let run = |baseline: bool| {
        cabo_linalg::simd::limit(if baseline { Isa::Baseline } else { Isa::Avx512 });
        let mut all = Vec::new();
        for (kind, n, d) in [
            (KernelKind::Matern52, 37, 5),
            (KernelKind::Rbf, 50, 3),
            (KernelKind::Matern32, 23, 8),
            (KernelKind::Matern12, 9, 2),
        ] {
            all.push(fit_bits(kind, n, d));
        }
        for n in [1, 2, 5, 8, 13, 64, 101] {
            all.push(factor_bits(n));
        }
        all
    };
    let baseline = run(true);
    let wide = run(false);
    assert_eq!(baseline, wide);
    println!("widest build: {:?}", cabo_linalg::simd::detected());
}
