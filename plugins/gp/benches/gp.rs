//! GP benchmarks: MAP fitting at n = 100 (d = 8, 16), batched posterior over 512 points,
//! single-point mean/variance with gradients, the two triangular solves of one
//! posterior variance and its gradient (n = 100, 400), and a Thompson sample path's value
//! and gradient (n = 600, d = 16, 32). Run with `cargo bench -p cabo-gp`.

use cabo_core::{MeanVar, Objective, Posterior, Rng, TrainingData};
use cabo_gp::{ExactGp, GpConfig, GpPosterior, KernelKind, Prior};
use cabo_linalg::Cholesky;
use divan::Bencher;

fn main() {
    divan::main();
}

fn data(n: usize, d: usize) -> (Vec<f64>, Vec<f64>) {
    let mut r = Rng::new(1);
    let x: Vec<f64> = (0..n * d).map(|_| r.uniform()).collect();
    let y = x
        .chunks_exact(d)
        .map(|p| {
            p.iter()
                .enumerate()
                .map(|(j, v)| ((j as f64 + 1.0) * 3.0 * v).sin())
                .sum::<f64>()
                + 0.05 * r.normal()
        })
        .collect();
    (x, y)
}

fn config() -> GpConfig {
    GpConfig::map(KernelKind::Matern52, Prior::Gamma, true)
}

/// A cold MAP fit (fresh model, one L-BFGS start), as BoTorch's `fit_gpytorch_mll` does.
#[divan::bench(args = [8, 16], sample_count = 20)]
fn map_fit_n100(bencher: Bencher, d: usize) {
    let (x, y) = data(100, d);
    bencher.bench(|| {
        let mut gp = ExactGp::new(config()).unwrap();
        gp.fit(
            TrainingData {
                dim: d,
                x: &x,
                y: &y,
            },
            0,
        )
        .unwrap()
    });
}

fn posterior(d: usize) -> GpPosterior {
    fitted(config(), 100, d)
}

/// A GP of `config` fitted to `n` points of [`data`] in `d` dimensions.
fn fitted(config: GpConfig, n: usize, d: usize) -> GpPosterior {
    let (x, y) = data(n, d);
    let data = TrainingData {
        dim: d,
        x: &x,
        y: &y,
    };
    ExactGp::new(config).unwrap().fit(data, 0).unwrap()
}

#[divan::bench(args = [8, 16])]
fn posterior_batch_512(bencher: Bencher, d: usize) {
    let post = posterior(d);
    let mut r = Rng::new(2);
    let xs: Vec<f64> = (0..512 * d).map(|_| r.uniform()).collect();
    let mut out = vec![MeanVar::default(); 512];
    bencher.bench_local(|| post.mean_var_batch(divan::black_box(&xs), &mut out));
}

#[divan::bench(args = [8, 16])]
fn mean_var_grad_single(bencher: Bencher, d: usize) {
    let post = posterior(d);
    let x = vec![0.37; d];
    bencher.bench(|| post.mean_var_grad(divan::black_box(&x)).unwrap());
}

#[divan::bench(args = [8])]
fn condition_one_fantasy(bencher: Bencher, d: usize) {
    let post = posterior(d);
    let x = vec![0.41; d];
    bencher.bench(|| post.condition_many(divan::black_box(&x), &[0.3]).unwrap());
}

/// `L⁻¹k` then `L⁻ᵀ(L⁻¹k)`: what every posterior variance with a gradient (and every node of
/// a scenario tree) pays against the training data.
#[divan::bench(args = [100, 400])]
fn solve_lower_then_upper(bencher: Bencher, n: usize) {
    let (x, _) = data(n, 4);
    let kern = cabo_gp::Kernel::new(KernelKind::Matern52, vec![0.3; 4], 1.0).unwrap();
    let mut k = vec![0.0; n * n];
    for i in 0..n {
        kern.cross(&x[i * 4..(i + 1) * 4], &x, &mut k[i * n..(i + 1) * n]);
        k[i * n + i] += 1e-4;
    }
    let chol = Cholesky::factor(&k, n).unwrap();
    let b: Vec<f64> = k[..n].to_vec();
    let mut z = b.clone();
    bencher.bench_local(|| {
        z.copy_from_slice(&b);
        chol.solve_lower_in_place(divan::black_box(&mut z));
        chol.solve_upper_in_place(&mut z);
    });
}

/// One value and gradient of a Thompson sample path (1024 random features, pathwise update
/// over n = 600 training points), at seed 000's d = 16 and 32: what each L-BFGS-B step of
/// a Thompson-sampling decision pays.
#[divan::bench(args = [16, 32])]
fn sample_path_value_grad_n600(bencher: Bencher, d: usize) {
    let ls = cabo_gp::Lengthscale::PerDim(vec![0.1; d]);
    let post = fitted(GpConfig::fixed(KernelKind::Matern52, ls, 1.0, 1e-4), 600, d);
    let path = post.pathwise_sample(7).unwrap();
    let q = vec![0.43; d];
    let mut g = vec![0.0; d];
    bencher.bench_local(|| path.value_grad(divan::black_box(&q), &mut g));
}
