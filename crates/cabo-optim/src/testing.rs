//! Checks shared by this crate's unit tests.

use cabo_core::Objective;

/// Asserts [`Objective::value_grads`]' contract on the rows of `xs` (points of `d`
/// coordinates, row-major): each row's value and gradient have the bits of
/// [`Objective::value_grad`] at that point alone.
pub(crate) fn assert_batched_rows_match_single_points(f: &dyn Objective, xs: &[f64], d: usize) {
    let rows = xs.len() / d;
    let (mut values, mut grads) = (vec![0.0; rows], vec![0.0; xs.len()]);
    f.value_grads(xs, &mut values, &mut grads);
    for (r, x) in xs.chunks_exact(d).enumerate() {
        let mut g = vec![0.0; d];
        assert_eq!(
            values[r].to_bits(),
            f.value_grad(x, &mut g).to_bits(),
            "row {r}"
        );
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&grads[r * d..(r + 1) * d]), bits(&g), "row {r}");
    }
}
