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
    sums_of_scaled_squares(points, m, x, lengthscales, out, |diff, l| diff / l);
}
}

/// `out[p] = Σ_j scaled(x[j] − points[j·m + p], scale[j])²` for `p < m`, `points` stored by
/// coordinate, each sum in ascending `j` from zero: the one loop of
/// [`lengthscaled_squared_distances`] and [`inverse_lengthscaled_squared_distances`],
/// inlined into each so that it vectorises in their builds.
#[inline(always)]
fn sums_of_scaled_squares(
    points: &[f64],
    m: usize,
    x: &[f64],
    scale: &[f64],
    out: &mut [f64],
    scaled: impl Fn(f64, f64) -> f64,
) {
    let out = &mut out[..m];
    out.fill(0.0);
    for (j, (&xj, &sj)) in x.iter().zip(scale).enumerate() {
        let coordinate = &points[j * m..(j + 1) * m];
        for (o, &p) in out.iter_mut().zip(coordinate) {
            let t = scaled(xj - p, sj);
            *o += t * t;
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

/// Points per block of [`block_squared_distances`]: the lanes of its running sums, which
/// stay in registers (four 256-bit vectors) while the coordinates stream past.
pub const BLOCK_LANES: usize = 16;

avx2_dispatch! {
/// `out[p·n + i] = Σ_j (points[j·BLOCK_LANES + p] − rows[i·d + j])²` for every row i of
/// `rows` (row-major, `n` rows of `d = points.len() / BLOCK_LANES` coordinates) and every
/// lane `p < lanes`, with `points` stored by coordinate in [`BLOCK_LANES`] lanes (lanes
/// from `lanes` on are ignored). Each sum runs in ascending `j` from zero — the bits of
/// [`squared_distances`] and of `sqdist(point_p, row_i)` one point at a time — while the
/// block's sums stay in registers for a whole row (two rows per pass, whose chains of
/// additions overlap): a posterior's kernel rows at a block of points, laid out point by
/// point.
pub fn block_squared_distances(points: &[f64], lanes: usize, rows: &[f64], out: &mut [f64]) {
    assert!(lanes <= BLOCK_LANES && points.len().is_multiple_of(BLOCK_LANES));
    let d = points.len() / BLOCK_LANES;
    if d == 0 {
        out.fill(0.0);
        return;
    }
    let n = rows.len() / d;
    assert!(out.len() >= lanes * n);
    // Two rows per pass: each sum is a chain of dependent additions, and two rows' chains
    // side by side keep twice as many additions in flight (each sum's order is unchanged).
    let mut pairs = rows.chunks_exact(2 * d);
    for (q, pair) in (&mut pairs).enumerate() {
        let (r0, r1) = pair.split_at(d);
        let mut acc0 = [0.0f64; BLOCK_LANES];
        let mut acc1 = [0.0f64; BLOCK_LANES];
        for ((coordinate, &a), &b) in points.chunks_exact(BLOCK_LANES).zip(r0).zip(r1) {
            for ((s0, s1), &x) in acc0.iter_mut().zip(acc1.iter_mut()).zip(coordinate) {
                let (t0, t1) = (x - a, x - b);
                *s0 += t0 * t0;
                *s1 += t1 * t1;
            }
        }
        for (p, (&a0, &a1)) in acc0[..lanes].iter().zip(&acc1[..lanes]).enumerate() {
            out[p * n + 2 * q] = a0;
            out[p * n + 2 * q + 1] = a1;
        }
    }
    if n % 2 == 1 {
        let (i, row) = (n - 1, pairs.remainder());
        let mut acc = [0.0f64; BLOCK_LANES];
        for (coordinate, &rj) in points.chunks_exact(BLOCK_LANES).zip(row) {
            for (a, &x) in acc.iter_mut().zip(coordinate) {
                let t = x - rj;
                *a += t * t;
            }
        }
        for (p, &a) in acc[..lanes].iter().enumerate() {
            out[p * n + i] = a;
        }
    }
}
}

avx2_dispatch! {
/// `gm[j] += wm[i]·(x[j] − rows[i·d + j])` and `gv[j] += wv[i]·(x[j] − rows[i·d + j])`
/// over the rows i of `rows` (row-major, `d = x.len()` per row) in ascending order, with
/// exactly the plain loop's operations per entry: a GP's mean and variance gradients at `x`
/// as weighted sums of its differences to the training inputs. Eight coordinates at a time
/// keep their two running sums in registers while the rows stream past.
pub fn weighted_differences(
    x: &[f64],
    rows: &[f64],
    wm: &[f64],
    wv: &[f64],
    gm: &mut [f64],
    gv: &mut [f64],
) {
    let d = x.len();
    assert!(gm.len() == d && gv.len() == d);
    let mut j0 = 0;
    while j0 + 8 <= d {
        differences_chunk::<8>(x, rows, wm, wv, gm, gv, j0);
        j0 += 8;
    }
    if j0 + 4 <= d {
        differences_chunk::<4>(x, rows, wm, wv, gm, gv, j0);
        j0 += 4;
    }
    while j0 < d {
        differences_chunk::<1>(x, rows, wm, wv, gm, gv, j0);
        j0 += 1;
    }
}
}

/// [`weighted_differences`] over the `W` coordinates from `j0`.
#[inline(always)]
fn differences_chunk<const W: usize>(
    x: &[f64],
    rows: &[f64],
    wm: &[f64],
    wv: &[f64],
    gm: &mut [f64],
    gv: &mut [f64],
    j0: usize,
) {
    let d = x.len();
    let xs: [f64; W] = std::array::from_fn(|t| x[j0 + t]);
    let mut am: [f64; W] = std::array::from_fn(|t| gm[j0 + t]);
    let mut av: [f64; W] = std::array::from_fn(|t| gv[j0 + t]);
    for ((row, &a), &b) in rows.chunks_exact(d).zip(wm).zip(wv) {
        let r: &[f64; W] = row[j0..j0 + W].try_into().expect("W coordinates");
        for (((m, v), &xt), &rt) in am.iter_mut().zip(av.iter_mut()).zip(&xs).zip(r) {
            let diff = xt - rt;
            *m += a * diff;
            *v += b * diff;
        }
    }
    gm[j0..j0 + W].copy_from_slice(&am);
    gv[j0..j0 + W].copy_from_slice(&av);
}

/// Calls `chunk::<W>(args…, j0)` over the coordinates `0..d` in blocks of `W` = 8, 4, 2 and 1
/// from `j0`: the column blocks of a weighted sum over rows whose running sums stay in
/// registers while the rows stream past (a chunk function per kernel, one blocking).
macro_rules! in_column_blocks {
    ($d:expr, $chunk:ident($($arg:expr),*)) => {{
        let d = $d;
        let mut j0 = 0;
        while j0 < d {
            let width = match d - j0 {
                8.. => 8,
                4..=7 => 4,
                2..=3 => 2,
                _ => 1,
            };
            match width {
                8 => $chunk::<8>($($arg,)* j0),
                4 => $chunk::<4>($($arg,)* j0),
                2 => $chunk::<2>($($arg,)* j0),
                _ => $chunk::<1>($($arg,)* j0),
            }
            j0 += width;
        }
    }};
}

avx2_dispatch! {
/// `g[j] += (c[i]·f[i])·(x[j] − rows[i·d + j])` over the rows i of `rows` (row-major,
/// `d = x.len()` per row) in ascending order, with exactly the plain loop's operations per
/// entry: a weighted sum of a stationary kernel's gradients at `x` (`c` its gradient
/// weights, `f` the caller's). Blocks of 8, 4, 2 and 1 coordinates keep their running sums
/// in registers while the rows stream past.
pub fn product_weighted_differences(x: &[f64], rows: &[f64], c: &[f64], f: &[f64], g: &mut [f64]) {
    assert!(g.len() == x.len());
    in_column_blocks!(x.len(), product_chunk(x, rows, c, f, g));
}
}

/// [`product_weighted_differences`] over the `W` coordinates from `j0`.
#[inline(always)]
fn product_chunk<const W: usize>(
    x: &[f64],
    rows: &[f64],
    c: &[f64],
    f: &[f64],
    g: &mut [f64],
    j0: usize,
) {
    let d = x.len();
    let xs: [f64; W] = std::array::from_fn(|t| x[j0 + t]);
    let mut acc: [f64; W] = std::array::from_fn(|t| g[j0 + t]);
    for ((row, &ci), &fi) in rows.chunks_exact(d).zip(c).zip(f) {
        let w = ci * fi;
        let r: &[f64; W] = row[j0..j0 + W].try_into().expect("W coordinates");
        for ((a, &xt), &rt) in acc.iter_mut().zip(&xs).zip(r) {
            *a += w * (xt - rt);
        }
    }
    g[j0..j0 + W].copy_from_slice(&acc);
}

avx2_dispatch! {
/// `out[p] = Σ_j ((x[j] − points[j·m + p])·inverse_lengthscales[j])²` for `p < m`, with
/// `points` stored by coordinate (`x.len() × m`) and each sum taken in ascending `j` from
/// zero — the bits of a kernel's `r²(x, point_p)` with the differences multiplied by the
/// inverse lengthscales, computed one point at a time.
pub fn inverse_lengthscaled_squared_distances(
    points: &[f64],
    m: usize,
    x: &[f64],
    inverse_lengthscales: &[f64],
    out: &mut [f64],
) {
    sums_of_scaled_squares(points, m, x, inverse_lengthscales, out, |diff, il| diff * il);
}
}

avx2_dispatch! {
/// `g[j] += w[i]·(((x[j] − rows[i·d + j])·il[j])·(c[i]·il[j]))` over the rows i of `rows`
/// (row-major, `d = x.len()` per row) in ascending order, `il` the inverse lengthscales,
/// with exactly the plain loop's operations per entry: a weighted sum of a stationary
/// kernel's gradients at `x` (`c` its gradient weights `2s·κ'(r_i²)`, `w` the caller's),
/// without storing them. Blocks of 8, 4, 2 and 1 coordinates keep their running sums in
/// registers while the rows stream past.
pub fn weighted_kernel_gradients(
    x: &[f64],
    rows: &[f64],
    c: &[f64],
    w: &[f64],
    inverse_lengthscales: &[f64],
    g: &mut [f64],
) {
    let il = inverse_lengthscales;
    assert!(g.len() == x.len() && il.len() == x.len());
    in_column_blocks!(x.len(), kernel_gradients_chunk(x, rows, c, w, il, g));
}
}

/// [`weighted_kernel_gradients`] over the `W` coordinates from `j0`.
#[inline(always)]
fn kernel_gradients_chunk<const W: usize>(
    x: &[f64],
    rows: &[f64],
    c: &[f64],
    w: &[f64],
    inverse_lengthscales: &[f64],
    g: &mut [f64],
    j0: usize,
) {
    let d = x.len();
    let xs: [f64; W] = std::array::from_fn(|t| x[j0 + t]);
    let il: [f64; W] = std::array::from_fn(|t| inverse_lengthscales[j0 + t]);
    let mut acc: [f64; W] = std::array::from_fn(|t| g[j0 + t]);
    for ((row, &ci), &wi) in rows.chunks_exact(d).zip(c).zip(w) {
        let r: &[f64; W] = row[j0..j0 + W].try_into().expect("W coordinates");
        for (((a, &xt), &rt), &lt) in acc.iter_mut().zip(&xs).zip(r).zip(&il) {
            *a += wi * (((xt - rt) * lt) * (ci * lt));
        }
    }
    g[j0..j0 + W].copy_from_slice(&acc);
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
