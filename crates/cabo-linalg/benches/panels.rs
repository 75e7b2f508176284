//! Speed of the panel products behind the exact GP's expected confidence bounds (`cargo
//! bench -p cabo-linalg --bench panels`): `L·K` and `Lᵀ·V` for an explicit lower-triangular
//! `L` of order 300 and 680 (the training-set sizes of the unknown-cost airfoil runs) and one
//! block of [`BLOCK`] columns. Each product does n(n+1)/2 · 64 multiply-adds; divan's time
//! per product gives the arithmetic rate.

use cabo_core::Rng;
use cabo_linalg::panel::{BLOCK, PANEL_ROWS, Panels};
use divan::{Bencher, black_box};

fn main() {
    divan::main();
}

/// A dense lower-triangular matrix of order `n` and an `n × BLOCK` operand, both random.
fn operands(n: usize) -> (Panels, Vec<f64>) {
    let mut rng = Rng::new(n as u64);
    let mut l = vec![0.0; n * n];
    for i in 0..n {
        for k in 0..=i {
            l[i * n + k] = rng.uniform() - 0.5;
        }
    }
    let src = (0..n * BLOCK).map(|_| rng.uniform()).collect();
    (Panels::new(&l, n), src)
}

#[divan::bench(args = [300, 680])]
fn lower_product(b: Bencher, n: usize) {
    let (panels, src) = operands(n);
    let mut out = vec![0.0; n.next_multiple_of(PANEL_ROWS) * BLOCK];
    b.bench_local(|| panels.lower_product(black_box(&src), &mut out, BLOCK));
}

#[divan::bench(args = [300, 680])]
fn lower_transpose_product(b: Bencher, n: usize) {
    let (panels, src) = operands(n);
    let mut out = vec![0.0; n.next_multiple_of(PANEL_ROWS) * BLOCK];
    b.bench_local(|| panels.lower_transpose_product(black_box(&src), &mut out, BLOCK));
}
