//! Speed of the triangular solves with many right-hand sides (`cargo bench -p cabo-linalg
//! --bench solves`): the `_many` solves against one solve per right-hand side, and the tiled
//! `solve_lower_rows` against the row-by-row loop it replaced (`solve_lower_rows_by_row`).
//! The factors are those of well-conditioned kernel matrices of order 400 and 800, whose
//! packed factors (0.6 and 2.5 MB) no longer fit in the level-1 and level-2 caches (and, for
//! `solve_lower_rows`, also of order 20 and 100).

use cabo_core::Rng;
use cabo_linalg::Cholesky;
use cabo_linalg::cholesky::{solve_lower_rows, solve_lower_rows_by_row};
use cabo_linalg::simd::{self, Isa};
use divan::{Bencher, black_box};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// Runs the benches, at the instruction-set level named by `CABO_BENCH_ISA` (`portable`,
/// `baseline`, `avx2` or `avx512`; the widest the processor has by default), to measure
/// what each build gains.
fn main() {
    if let Ok(isa) = std::env::var("CABO_BENCH_ISA") {
        let isa = match isa.as_str() {
            "portable" => Isa::Portable,
            "baseline" => Isa::Baseline,
            "avx2" => Isa::Avx2,
            "avx512" => Isa::Avx512,
            other => panic!("CABO_BENCH_ISA: unknown level {other:?}"),
        };
        simd::limit(isa);
        eprintln!("kernels limited to {:?}", simd::active());
    }
    divan::main();
}

/// Orders of the factors.
const ORDERS: [usize; 2] = [400, 800];

/// Factors by order, built once.
type Factors = HashMap<usize, (Cholesky, Vec<f64>)>;

/// The factor of a squared-exponential kernel matrix on `n` random points of the unit cube
/// (length scale 0.3) plus 1e-2 noise, and its packed form: a GP's factor, well
/// conditioned.
fn factor(n: usize) -> (Cholesky, Vec<f64>) {
    static CACHE: OnceLock<Mutex<Factors>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    let mut cache = cache.lock().unwrap();
    cache
        .entry(n)
        .or_insert_with(|| {
            let mut rng = Rng::new(n as u64);
            let x: Vec<[f64; 3]> = (0..n)
                .map(|_| [rng.uniform(), rng.uniform(), rng.uniform()])
                .collect();
            let mut a = vec![0.0; n * n];
            for i in 0..n {
                for j in 0..n {
                    let d2: f64 = (0..3).map(|k| (x[i][k] - x[j][k]).powi(2)).sum();
                    a[i * n + j] = (-d2 / (2.0 * 0.09)).exp() + if i == j { 1e-2 } else { 0.0 };
                }
            }
            let c = Cholesky::factor(&a, n).expect("a positive-definite kernel matrix");
            let packed = (0..n).flat_map(|i| c.row(i).to_vec()).collect();
            (c, packed)
        })
        .clone()
}

/// `len` standard normal values.
fn values(len: usize, seed: u64) -> Vec<f64> {
    let mut rng = Rng::new(seed);
    (0..len).map(|_| rng.normal()).collect()
}

/// Forward substitution of `M` right-hand sides of order `n`, one `solve_lower_in_place`
/// each.
#[divan::bench(args = ORDERS, consts = [16, 64])]
fn lower_one_at_a_time<const M: usize>(bencher: Bencher, n: usize) {
    let (c, _) = factor(n);
    let bs = values(n * M, 1);
    bencher.with_inputs(|| bs.clone()).bench_local_refs(|bs| {
        for b in bs.chunks_exact_mut(n) {
            c.solve_lower_in_place(black_box(b));
        }
    });
}

/// The same solves with one `solve_lower_many_in_place`.
#[divan::bench(args = ORDERS, consts = [16, 64])]
fn lower_many<const M: usize>(bencher: Bencher, n: usize) {
    let (c, _) = factor(n);
    let bs = values(n * M, 1);
    bencher
        .with_inputs(|| bs.clone())
        .bench_local_refs(|bs| c.solve_lower_many_in_place(black_box(bs)));
}

/// Backward substitution of `M` right-hand sides of order `n`, one `solve_upper_in_place`
/// each.
#[divan::bench(args = ORDERS, consts = [16, 64])]
fn upper_one_at_a_time<const M: usize>(bencher: Bencher, n: usize) {
    let (c, _) = factor(n);
    let bs = values(n * M, 2);
    bencher.with_inputs(|| bs.clone()).bench_local_refs(|bs| {
        for b in bs.chunks_exact_mut(n) {
            c.solve_upper_in_place(black_box(b));
        }
    });
}

/// The same solves with one `solve_upper_many_in_place`.
#[divan::bench(args = ORDERS, consts = [16, 64])]
fn upper_many<const M: usize>(bencher: Bencher, n: usize) {
    let (c, _) = factor(n);
    let bs = values(n * M, 2);
    bencher
        .with_inputs(|| bs.clone())
        .bench_local_refs(|bs| c.solve_upper_many_in_place(black_box(bs)));
}

/// Columns of the raw-sample scoring path's `solve_lower_rows` (one per point).
const POINTS: usize = 1024;

/// Orders of the `solve_lower_rows` benches: a small and a mid-sized training set too.
const ROWS_ORDERS: [usize; 4] = [20, 100, 400, 800];

/// `solve_lower_rows` of an `n × 1024` right-hand side, the row-by-row loop it replaced.
#[divan::bench(args = ROWS_ORDERS)]
fn lower_rows_reference(bencher: Bencher, n: usize) {
    let (_, packed) = factor(n);
    let b = values(n * POINTS, 3);
    bencher
        .with_inputs(|| b.clone())
        .bench_local_refs(|b| solve_lower_rows_by_row(&packed, n, black_box(b), POINTS));
}

/// The same solve with the tiled `solve_lower_rows` (checked to give the reference's bits).
#[divan::bench(args = ROWS_ORDERS)]
fn lower_rows_tiled(bencher: Bencher, n: usize) {
    let (_, packed) = factor(n);
    let b = values(n * POINTS, 3);
    let (mut got, mut want) = (b.clone(), b.clone());
    solve_lower_rows(&packed, n, &mut got, POINTS);
    solve_lower_rows_by_row(&packed, n, &mut want, POINTS);
    assert!(
        got.iter()
            .zip(&want)
            .all(|(g, w)| g.to_bits() == w.to_bits()),
        "the tiled solve must give the reference's bits"
    );
    bencher
        .with_inputs(|| b.clone())
        .bench_local_refs(|b| solve_lower_rows(&packed, n, black_box(b), POINTS));
}
