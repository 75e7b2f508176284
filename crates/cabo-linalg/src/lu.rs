//! LU factorisation with partial pivoting of a small dense matrix, for L-BFGS-B's `2m × 2m`
//! middle matrices. Plain loops in a fixed order: the solver's iterates must not depend on
//! the machine.

// Dense small-matrix kernels read clearest with explicit indices.
#![allow(clippy::needless_range_loop)]

/// In-place LU factorisation with partial pivoting of the row-major `n × n` matrix `a`:
/// afterwards its strict lower triangle holds the multipliers and its upper triangle `U`,
/// and `piv[c]` the row swapped with row `c` at step `c`. False when a pivot vanishes or is
/// not finite (with `a` partly factored).
pub fn lu_factor(a: &mut [f64], n: usize, piv: &mut [usize]) -> bool {
    for col in 0..n {
        let mut best = col;
        for r in col + 1..n {
            if a[r * n + col].abs() > a[best * n + col].abs() {
                best = r;
            }
        }
        piv[col] = best;
        if best != col {
            for j in 0..n {
                a.swap(col * n + j, best * n + j);
            }
        }
        let pivot = a[col * n + col];
        if pivot == 0.0 || !pivot.is_finite() {
            return false;
        }
        for r in col + 1..n {
            let l = a[r * n + col] / pivot;
            a[r * n + col] = l;
            for j in col + 1..n {
                a[r * n + j] -= l * a[col * n + j];
            }
        }
    }
    true
}

/// Solves `A z = b` in place with the factors from [`lu_factor`].
pub fn lu_solve(a: &[f64], n: usize, piv: &[usize], b: &mut [f64]) {
    for i in 0..n {
        b.swap(i, piv[i]);
    }
    for i in 0..n {
        let mut s = b[i];
        for j in 0..i {
            s -= a[i * n + j] * b[j];
        }
        b[i] = s;
    }
    for i in (0..n).rev() {
        let mut s = b[i];
        for j in i + 1..n {
            s -= a[i * n + j] * b[j];
        }
        b[i] = s / a[i * n + i];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solves_a_system_that_needs_pivoting() {
        // A zero leading entry: no factorisation without a row swap.
        let a0 = [0.0, 2.0, 1.0, 1.0, 1.0, 0.0, 3.0, 0.0, 1.0];
        let (mut a, mut piv) = (a0, [0; 3]);
        assert!(lu_factor(&mut a, 3, &mut piv));
        let want = [1.0, -2.0, 0.5];
        let mut b: Vec<f64> = (0..3)
            .map(|i| (0..3).map(|j| a0[i * 3 + j] * want[j]).sum())
            .collect();
        lu_solve(&a, 3, &piv, &mut b);
        for (z, w) in b.iter().zip(want) {
            assert!((z - w).abs() < 1e-14, "{b:?}");
        }
    }

    #[test]
    fn reports_a_singular_matrix() {
        let mut a = [1.0, 2.0, 2.0, 4.0];
        assert!(!lu_factor(&mut a, 2, &mut [0; 2]));
    }
}
