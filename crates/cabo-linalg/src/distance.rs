//! Squared distances between one point and many stored by coordinate, and the Jacobian rows
//! of a stationary kernel: the kernel rows of a GP posterior at a block of points, or of one
//! point against every training input, with the sums running side by side in vector lanes.
//!
//! A point-by-point loop sums its `d` squared differences in one dependent chain per
//! distance. Laid out by coordinate, the same sums run side by side in vector lanes, one
//! point per lane, each still summed in ascending coordinate order from zero, so every
//! distance has exactly the bits of the plain loop `Σ_j (x_j − y_j)²`.

use crate::simd::avx2_dispatch;

avx2_dispatch! {
/// `out[p] = Σ_j (points[j·m + p] − row[j])²` for `p < m`, with `points` stored by
/// coordinate (`row.len() × m`, coordinate j of every point in one run of `m`) and each sum
/// taken in ascending `j` starting from zero — the bits of `sqdist(point_p, row)` computed
/// one point at a time.
pub fn squared_distances(points: &[f64], m: usize, row: &[f64], out: &mut [f64]) {
    let out = &mut out[..m];
    out.fill(0.0);
    for (j, &rj) in row.iter().enumerate() {
        let coordinate = &points[j * m..(j + 1) * m];
        for (o, &x) in out.iter_mut().zip(coordinate) {
            let t = x - rj;
            *o += t * t;
        }
    }
}
}

avx2_dispatch! {
/// `out[p] = Σ_j ((x[j] − points[j·m + p]) / lengthscales[j])²` for `p < m`, with `points`
/// stored by coordinate (`x.len() × m`) and each sum taken in ascending `j` from zero — the
/// bits of a kernel's `r²(x, point_p)` computed one point at a time (divisions included:
/// a vector division is the same IEEE operation as a scalar one).
pub fn lengthscaled_squared_distances(
    points: &[f64],
    m: usize,
    x: &[f64],
    lengthscales: &[f64],
    out: &mut [f64],
) {
    let out = &mut out[..m];
    out.fill(0.0);
    for (j, (&xj, &lj)) in x.iter().zip(lengthscales).enumerate() {
        let coordinate = &points[j * m..(j + 1) * m];
        for (o, &p) in out.iter_mut().zip(coordinate) {
            let t = (xj - p) / lj;
            *o += t * t;
        }
    }
}
}

avx2_dispatch! {
/// `jac[i·d + j] = c[i] · (x[j] − rows[i·d + j]) / (lengthscales[j] · lengthscales[j])` for
/// every row i of `rows` (row-major, `d = x.len()` per row): the x-gradient of a stationary
/// kernel's value at `x` against each row, given its weights `c[i] = 2s·κ'(r_i²)`, with the
/// operations of the plain loop.
pub fn kernel_jacobian(x: &[f64], rows: &[f64], c: &[f64], lengthscales: &[f64], jac: &mut [f64]) {
    let d = x.len();
    for ((g, row), &ci) in jac.chunks_exact_mut(d).zip(rows.chunks_exact(d)).zip(c) {
        for (((g, &a), &b), &l) in g.iter_mut().zip(x).zip(row).zip(lengthscales) {
            *g = ci * (a - b) / (l * l);
        }
    }
}
}

/// `points` (row-major, `scale.len()` coordinates per point) laid out by coordinate into
/// `out` (the same length), each coordinate multiplied by `scale[j]` first: the layout
/// [`squared_distances`] reads.
pub fn scaled_by_coordinate(points: &[f64], scale: &[f64], out: &mut [f64]) {
    let d = scale.len();
    let m = points.len() / d.max(1);
    for (p, x) in points.chunks_exact(d).enumerate() {
        for (j, (&xj, &sj)) in x.iter().zip(scale).enumerate() {
            out[j * m + p] = xj * sj;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances_have_the_bits_of_a_loop_per_point() {
        let (d, m) = (7, 13);
        let points: Vec<f64> = (0..d * m).map(|i| (i as f64 * 0.37).sin()).collect();
        let scale: Vec<f64> = (0..d).map(|j| 1.0 / (0.3 + j as f64)).collect();
        let row: Vec<f64> = (0..d).map(|j| (j as f64 * 1.3).cos()).collect();
        let mut by_coordinate = vec![0.0; d * m];
        scaled_by_coordinate(&points, &scale, &mut by_coordinate);
        let mut out = vec![f64::NAN; m];
        squared_distances(&by_coordinate, m, &row, &mut out);
        for (p, x) in points.chunks_exact(d).enumerate() {
            let mut s = 0.0;
            for j in 0..d {
                let t = x[j] * scale[j] - row[j];
                s += t * t;
            }
            assert_eq!(out[p].to_bits(), s.to_bits(), "point {p}");
        }
    }
}
