//! The two vector kernels every numerical plugin shares, so that a policy combining vectors a
//! model handed it (sample-path weights, features) sums them in the same order as the model.
//!
//! Both are `#[inline(always)]`: they are compiled into their callers, including the AVX2
//! builds of this crate's kernels, and perform the same operations in every build.

/// Dot product of the common prefix of `a` and `b`, written so the compiler vectorises it:
/// four independent accumulators (lane l sums the indices ≡ l mod 4), added pairwise, then
/// the tail in order.
#[inline(always)]
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [0.0f64; 4];
    let chunks = n / 4;
    for c in 0..chunks {
        let i = 4 * c;
        acc[0] += a[i] * b[i];
        acc[1] += a[i + 1] * b[i + 1];
        acc[2] += a[i + 2] * b[i + 2];
        acc[3] += a[i + 3] * b[i + 3];
    }
    let mut s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    for i in 4 * chunks..n {
        s += a[i] * b[i];
    }
    s
}

/// `y += a·x` elementwise over the common prefix of `x` and `y`.
#[inline(always)]
pub fn axpy(a: f64, x: &[f64], y: &mut [f64]) {
    for (yi, xi) in y.iter_mut().zip(x) {
        *yi += a * xi;
    }
}
