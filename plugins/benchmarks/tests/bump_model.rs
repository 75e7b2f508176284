//! The `bump_scaled_gp` posterior against independent oracles: the stationary exact GP,
//! a dense brute-force conditioning, finite differences, refitting, and draws of the
//! `bump_prior_sample` problem (whose prior it claims to be).

use cabo_benchmarks::bump::BumpPriorSampleSpec;
use cabo_benchmarks::bump_model::{
    BumpKernel, BumpProfile, BumpScaledGpPosterior, BumpScaledGpSpec,
};
use cabo_core::{BuildContext, Model, ModelSpec, Posterior, ProblemInfo, ProblemSpec, Query};
use cabo_core::{MeanVar, TrainingData};
use cabo_gp::{ExactGp, GpConfig, KernelKind, Lengthscale};

/// The prior parameters used by most tests: the problem's defaults but a domain of
/// [−10, 10], so a lengthscale is 1/20 of the unit interval and data can be spread out.
fn spec(std_low: f64, std_high: f64) -> BumpScaledGpSpec {
    BumpScaledGpSpec {
        bounds: [-10.0, 10.0],
        lengthscale: 1.0,
        center: 0.5,
        width: 1.0,
        std_low,
        std_high,
        noise: 1e-6,
        profile: BumpProfile::Std,
    }
}

fn kernel(s: &BumpScaledGpSpec) -> BumpKernel {
    BumpKernel::from_parameters(
        s.bounds,
        s.lengthscale,
        s.center,
        s.width,
        [s.std_low, s.std_high],
    )
    .unwrap()
}

/// Native z → unit x for the [−10, 10] domain.
fn unit(z: f64) -> f64 {
    (z + 10.0) / 20.0
}

/// Training inputs on and off the bump (native units), with smooth targets.
fn training() -> (Vec<f64>, Vec<f64>) {
    let z = [-7.3, -3.1, -1.4, -0.2, 0.4, 0.7, 1.9, 3.3, 6.2, 9.1];
    let x: Vec<f64> = z.iter().map(|&z| unit(z)).collect();
    let y: Vec<f64> = z
        .iter()
        .map(|z: &f64| (0.9 * z).sin() * 0.8 + 0.1 * z)
        .collect();
    (x, y)
}

fn posterior(s: &BumpScaledGpSpec, x: &[f64], y: &[f64]) -> BumpScaledGpPosterior {
    s.model()
        .unwrap()
        .posterior(TrainingData { dim: 1, x, y })
        .unwrap()
}

/// Query points (unit interval): near the bump, between and at the data, and far away.
fn queries() -> Vec<f64> {
    (0..=400).map(|i| i as f64 / 400.0 + 1e-4).collect()
}

/// Relative error with a floor, so that values near zero are compared absolutely.
fn rel(a: f64, b: f64, floor: f64) -> f64 {
    (a - b).abs() / b.abs().max(floor)
}

#[test]
fn equal_standard_deviations_give_the_stationary_exact_gp() {
    let s_val = 0.7;
    let s = spec(s_val, s_val);
    let (x, y) = training();
    let ours = posterior(&s, &x, &y);
    // The stationary oracle: Matérn-5/2, outputscale s², lengthscale ℓ/(hi − lo), same fixed
    // noise, zero mean, no standardisation.
    let config = GpConfig::fixed(
        KernelKind::Matern52,
        Lengthscale::Scalar(s.lengthscale / 20.0),
        s_val * s_val,
        s.noise,
    );
    let gp = ExactGp::new(config)
        .unwrap()
        .fit(
            TrainingData {
                dim: 1,
                x: &x,
                y: &y,
            },
            0,
        )
        .unwrap();
    let mut worst: f64 = 0.0;
    for q in queries() {
        let (a, b) = (ours.mean_var(&[q]), gp.mean_var(&[q]));
        // The mean is compared relative to the prior standard deviation (it crosses zero).
        worst = worst.max(rel(a.mean, b.mean, s_val));
        worst = worst.max(rel(a.var, b.var, 0.0));
        let (ga, gb) = (
            ours.mean_var_grad(&[q]).unwrap(),
            gp.mean_var_grad(&[q]).unwrap(),
        );
        worst = worst.max(rel(ga.dmean[0], gb.dmean[0], 1e-3));
        worst = worst.max(rel(ga.dvar[0], gb.dvar[0], 1e-3));
    }
    println!("stationary oracle: worst relative error {worst:.3e}");
    assert!(worst < 1e-10, "worst relative error {worst:.3e}");
}

/// The non-stationary kernel written out from the module doc in native units, independently
/// of [`BumpKernel`].
fn native_kernel(s: &BumpScaledGpSpec, a: f64, b: f64) -> f64 {
    let sd = |z: f64| {
        let b = (-0.5 * ((z - s.center) / s.width).powi(2)).exp();
        match s.profile {
            BumpProfile::Std => s.std_low + (s.std_high - s.std_low) * b,
            BumpProfile::Variance => {
                (s.std_low.powi(2) + (s.std_high.powi(2) - s.std_low.powi(2)) * b).sqrt()
            }
        }
    };
    let r = (a - b).abs() / s.lengthscale;
    let q = 5f64.sqrt() * r;
    sd(a) * sd(b) * (1.0 + q + q * q / 3.0) * (-q).exp()
}

/// Solves `a · X = b` (a: n × n, b: n × m, both row-major) by Gaussian elimination with
/// partial pivoting: a generic method, sharing nothing with the Cholesky code.
fn gauss_solve(mut a: Vec<f64>, mut b: Vec<f64>, n: usize, m: usize) -> Vec<f64> {
    for c in 0..n {
        let p = (c..n)
            .max_by(|&i, &j| a[i * n + c].abs().total_cmp(&a[j * n + c].abs()))
            .unwrap();
        for k in 0..n {
            a.swap(c * n + k, p * n + k);
        }
        for k in 0..m {
            b.swap(c * m + k, p * m + k);
        }
        for r in c + 1..n {
            let f = a[r * n + c] / a[c * n + c];
            for k in c..n {
                a[r * n + k] -= f * a[c * n + k];
            }
            for k in 0..m {
                b[r * m + k] -= f * b[c * m + k];
            }
        }
    }
    for c in (0..n).rev() {
        for k in 0..m {
            let s: f64 = (c + 1..n).map(|j| a[c * n + j] * b[j * m + k]).sum();
            b[c * m + k] = (b[c * m + k] - s) / a[c * n + c];
        }
    }
    b
}

/// Brute-force posterior mean vector and covariance at native points `zq`, from the full
/// covariance of training and query values.
fn brute_force(s: &BumpScaledGpSpec, zx: &[f64], y: &[f64], zq: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let (n, m) = (zx.len(), zq.len());
    let all: Vec<f64> = zx.iter().chain(zq).copied().collect();
    let t = n + m;
    let mut full = vec![0.0; t * t];
    for i in 0..t {
        for j in 0..t {
            full[i * t + j] = native_kernel(s, all[i], all[j]);
        }
    }
    let kxx: Vec<f64> = (0..n * n)
        .map(|p| full[(p / n) * t + p % n] + if p / n == p % n { s.noise } else { 0.0 })
        .collect();
    // Right-hand sides: y, then k(X, z_q) for every query.
    let mut rhs = vec![0.0; n * (m + 1)];
    for i in 0..n {
        rhs[i * (m + 1)] = y[i];
        for q in 0..m {
            rhs[i * (m + 1) + q + 1] = full[i * t + n + q];
        }
    }
    let sol = gauss_solve(kxx, rhs, n, m + 1);
    let mean = (0..m)
        .map(|q| {
            (0..n)
                .map(|i| full[(n + q) * t + i] * sol[i * (m + 1)])
                .sum()
        })
        .collect();
    let mut cov = vec![0.0; m * m];
    for a in 0..m {
        for b in 0..m {
            let proj: f64 = (0..n)
                .map(|i| full[(n + a) * t + i] * sol[i * (m + 1) + b + 1])
                .sum();
            cov[a * m + b] = full[(n + a) * t + n + b] - proj;
        }
    }
    (mean, cov)
}

#[test]
fn mean_variance_and_joint_equal_a_dense_brute_force() {
    let s = spec(0.1, 1.0);
    let (x, y) = training();
    let zx: Vec<f64> = x.iter().map(|v| v * 20.0 - 10.0).collect();
    let post = posterior(&s, &x, &y);
    let mut worst: f64 = 0.0;
    for q in queries() {
        let z = q * 20.0 - 10.0;
        let (mean, cov) = brute_force(&s, &zx, &y, &[z]);
        let mv = post.mean_var(&[q]);
        // Absolute errors: y and the prior standard deviations are O(0.1–1).
        worst = worst.max((mv.mean - mean[0]).abs());
        worst = worst.max((mv.var - cov[0].max(1e-10)).abs());
    }
    // The joint covariance of a few points, off-diagonal entries included.
    let zq = [-8.0, -0.9, 0.1, 0.55, 1.2, 2.6, 7.7];
    let xq: Vec<f64> = zq.iter().map(|&z| unit(z)).collect();
    let (mean, cov) = brute_force(&s, &zx, &y, &zq);
    let (jm, jc) = post.joint(&xq).unwrap();
    for (a, b) in jm.iter().zip(&mean).chain(jc.iter().zip(&cov)) {
        worst = worst.max((a - b).abs());
    }
    println!("dense oracle: worst absolute error {worst:.3e}");
    assert!(worst < 1e-9, "worst absolute error {worst:.3e}");
}

#[test]
fn gradients_match_finite_differences_near_and_far_from_the_bump() {
    let s = spec(0.1, 1.0);
    let (x, y) = training();
    let post = posterior(&s, &x, &y);
    let prior = posterior(&s, &[], &[]);
    // Native points on the bump's flanks, at its centre, between data and far from both.
    let zs = [0.5, -0.35, 1.35, 2.05, -2.2, 4.6, -5.0, 7.9, 9.8];
    let h = 1e-6;
    let mut worst: f64 = 0.0;
    for p in [&post, &prior] {
        for &z in &zs {
            let q = unit(z);
            let g = p.mean_var_grad(&[q]).unwrap();
            let (up, dn) = (p.mean_var(&[q + h]), p.mean_var(&[q - h]));
            let fd_mean = (up.mean - dn.mean) / (2.0 * h);
            let fd_var = (up.var - dn.var) / (2.0 * h);
            let mv = p.mean_var(&[q]);
            assert_eq!((g.mean, g.var), (mv.mean, mv.var), "value at z = {z}");
            // A derivative of 1e-3 per unit interval is 5e-5 per lengthscale: below that
            // the comparison is absolute.
            let (em, ev) = (rel(g.dmean[0], fd_mean, 1e-3), rel(g.dvar[0], fd_var, 1e-3));
            assert!(
                em < 1e-5 && ev < 1e-5,
                "z = {z}: mean {em:.2e}, var {ev:.2e}"
            );
            worst = worst.max(em).max(ev);
        }
    }
    println!("finite differences: worst relative error {worst:.3e}");
}

#[test]
fn condition_equals_refitting_and_joint_diagonal_equals_mean_var() {
    let s = spec(0.1, 1.0);
    let (mut x, mut y) = training();
    let post = posterior(&s, &x, &y);
    let (xn, yn) = (unit(0.95), -0.4);
    let fantasy = post.condition_one(xn, yn).unwrap();
    x.push(xn);
    y.push(yn);
    let refit = posterior(&s, &x, &y);
    let qs = queries();
    let mut worst: f64 = 0.0;
    for &q in &qs {
        let (a, b) = (fantasy.mean_var(&[q]), refit.mean_var(&[q]));
        worst = worst
            .max((a.mean - b.mean).abs())
            .max((a.var - b.var).abs());
    }
    println!("condition vs refit: worst absolute error {worst:.3e}");
    assert!(worst < 1e-9, "worst absolute error {worst:.3e}");
    assert_eq!(fantasy.noise_variance(), 1e-6);
    assert_eq!(fantasy.diagnostics()["bump_gp.n"], 11.0);
    // The original posterior is unchanged.
    assert_eq!(
        post.mean_var(&[xn]),
        posterior(&s, &x[..10], &y[..10]).mean_var(&[xn])
    );

    let xq: Vec<f64> = qs.iter().step_by(20).copied().collect();
    let (jm, jc) = fantasy.joint(&xq).unwrap();
    let m = xq.len();
    let mut worst_joint: f64 = 0.0;
    for (i, &q) in xq.iter().enumerate() {
        let mv = fantasy.mean_var(&[q]);
        worst_joint = worst_joint
            .max((jm[i] - mv.mean).abs())
            .max((jc[i * m + i] - mv.var).abs());
        for j in 0..m {
            assert_eq!(jc[i * m + j], jc[j * m + i]);
        }
    }
    println!("joint diagonal vs mean_var: worst absolute error {worst_joint:.3e}");
    assert!(worst_joint < 1e-12, "{worst_joint:.3e}");
}

#[test]
fn the_prior_variance_is_sigma_squared_and_empty_data_give_the_prior() {
    let s = spec(0.1, 1.0);
    let k = kernel(&s);
    let prior = posterior(&s, &[], &[]);
    for q in queries() {
        let z = q * 20.0 - 10.0;
        let sd = 0.1 + 0.9 * (-0.5 * (z - 0.5).powi(2)).exp();
        let mv = prior.mean_var(&[q]);
        assert_eq!(mv.mean, 0.0);
        assert!(rel(mv.var, sd * sd, 0.0) < 1e-14, "z = {z}");
        assert_eq!(mv.var, k.value(q, q));
    }
    assert_eq!(prior.mean_var(&[unit(0.5)]).var, 1.0);
    let (jm, jc) = prior.joint(&[unit(0.5), unit(0.5)]).unwrap();
    assert_eq!((jm, jc), (vec![0.0, 0.0], vec![1.0; 4]));
}

/// `profile: variance` is the authors' `VariableAmplitudeKernel` (PandoraBayesOpt
/// `pandora_bayesopt/kernel.py` l.30-37): k(z, z') = κ(z − z') √(a(z) a(z')) with
/// a(z) = ε² + (1 − ε²) b(z), ε = 0.1 (`scripts/variable_amplitude.py` l.64-69).
#[test]
fn the_variance_profile_is_the_authors_amplitude_kernel() {
    let s = BumpScaledGpSpec {
        profile: BumpProfile::Variance,
        ..spec(0.1, 1.0)
    };
    let k = kernel(&s).with_profile(BumpProfile::Variance);
    let prior = posterior(&s, &[], &[]);
    let eps2: f64 = 0.01;
    for q in queries() {
        let z = q * 20.0 - 10.0;
        let a = eps2 + (1.0 - eps2) * (-0.5 * (z - 0.5).powi(2)).exp();
        assert!(rel(prior.mean_var(&[q]).var, a, 0.0) < 1e-14, "z = {z}");
        assert_eq!(prior.mean_var(&[q]).var, k.value(q, q));
    }
    // Far away the prior standard deviation is ε = 0.1, at the centre 1; on the shoulder
    // b = ½ it is √0.505, not the `std` profile's 0.55.
    assert!((prior.mean_var(&[unit(9.5)]).var.sqrt() - 0.1).abs() < 1e-12);
    assert_eq!(prior.mean_var(&[unit(0.5)]).var, 1.0);
    let shoulder = unit(0.5 + (2.0 * 2f64.ln()).sqrt());
    assert!((prior.mean_var(&[shoulder]).var - 0.505).abs() < 1e-12);
    // The posterior against the dense oracle, and its gradients against finite differences.
    let (x, y) = training();
    let zx: Vec<f64> = x.iter().map(|v| v * 20.0 - 10.0).collect();
    let post = posterior(&s, &x, &y);
    let zq = [-8.0, -0.9, 0.1, 0.55, 1.2, 2.6, 7.7];
    let xq: Vec<f64> = zq.iter().map(|&z| unit(z)).collect();
    let (mean, cov) = brute_force(&s, &zx, &y, &zq);
    let (jm, jc) = post.joint(&xq).unwrap();
    for (a, b) in jm.iter().zip(&mean).chain(jc.iter().zip(&cov)) {
        assert!((a - b).abs() < 1e-9, "{a} vs {b}");
    }
    let h = 1e-6;
    for &z in &[0.5, -0.35, 1.35, 2.05, -2.2, 4.6, 9.8] {
        let q = unit(z);
        let g = post.mean_var_grad(&[q]).unwrap();
        let (up, dn) = (post.mean_var(&[q + h]), post.mean_var(&[q - h]));
        let em = rel(g.dmean[0], (up.mean - dn.mean) / (2.0 * h), 1e-3);
        let ev = rel(g.dvar[0], (up.var - dn.var) / (2.0 * h), 1e-3);
        assert!(
            em < 1e-5 && ev < 1e-5,
            "z = {z}: mean {em:.2e}, var {ev:.2e}"
        );
    }
    // Unknown profiles are refused by name.
    let e = serde_json::from_str::<BumpScaledGpSpec>(r#"{"profile":"varaince"}"#).unwrap_err();
    assert!(e.to_string().contains("variance"), "{e}");
}

#[test]
fn posterior_errors_on_problem_draws_are_calibrated() {
    // Objectives drawn by the problem itself (random features, an unbiased estimate of the
    // prior covariance), so E[(f − μ)²/v] = 1 for any linear predictor μ with its correct
    // variance v, Gaussian or not.
    let problem: BumpPriorSampleSpec = serde_json::from_str(r#"{"features":1024}"#).unwrap();
    let model = BumpScaledGpSpec::of_problem(&problem, 1e-6)
        .model()
        .unwrap();
    let native = |z: f64| (z + 500.0) / 1000.0;
    let train: Vec<f64> = [-2.0, -0.5, 0.8, 2.2, 40.0].map(native).to_vec();
    let test: Vec<f64> = [-1.2, 0.1, 1.5, 3.5, 41.3, -100.0].map(native).to_vec();
    let seeds = 1000;
    let (mut z2, mut z1) = (0.0, 0.0);
    for seed in 0..seeds {
        let p = problem.build(seed).unwrap();
        let f = |x: f64| p.evaluate(&Query::at(vec![x]), 0).unwrap().y;
        let y: Vec<f64> = train.iter().map(|&x| f(x)).collect();
        let post = model
            .posterior(TrainingData {
                dim: 1,
                x: &train,
                y: &y,
            })
            .unwrap();
        for &x in &test {
            let MeanVar { mean, var } = post.mean_var(&[x]);
            let z = (f(x) - mean) / var.sqrt();
            z1 += z / (seeds * test.len() as u64) as f64;
            z2 += z * z / (seeds * test.len() as u64) as f64;
        }
    }
    // Even if the six scores of a draw were perfectly correlated, the standard error of the
    // mean of z² is √(2/1000) ≈ 0.045 and of z √(1/1000) ≈ 0.032; allow four of them.
    println!("calibration: mean z² = {z2:.4}, mean z = {z1:.4}");
    assert!((z2 - 1.0).abs() < 4.0 * 0.045, "mean z² = {z2}");
    assert!(z1.abs() < 4.0 * 0.032, "mean z = {z1}");
}

#[test]
fn the_spec_shares_the_problem_defaults_and_rejects_bad_input() {
    let from_yaml: Box<dyn ModelSpec> =
        serde_json::from_str(r#"{"type":"bump_scaled_gp"}"#).unwrap();
    let problem: BumpPriorSampleSpec = serde_json::from_str("{}").unwrap();
    let ours: BumpScaledGpSpec = serde_json::from_str("{}").unwrap();
    assert_eq!(ours, BumpScaledGpSpec::of_problem(&problem, 1e-6));
    assert!(
        serde_json::from_str::<Box<dyn ModelSpec>>(r#"{"type":"bump_scaled_gp","cost_high":5}"#)
            .is_err()
    );

    let err = from_yaml.validate(2).unwrap_err().to_string();
    assert!(
        err.contains("one-dimensional") && err.contains('2'),
        "{err}"
    );
    from_yaml.validate(1).unwrap();
    let bad = |json: &str| {
        serde_json::from_str::<Box<dyn ModelSpec>>(json)
            .unwrap()
            .validate(1)
            .unwrap_err()
            .to_string()
    };
    assert!(bad(r#"{"type":"bump_scaled_gp","width":0}"#).contains("bump_scaled_gp: width"));
    assert!(bad(r#"{"type":"bump_scaled_gp","noise":-1}"#).contains("noise"));
    assert!(bad(r#"{"type":"bump_scaled_gp","bounds":[3,3]}"#).contains("bounds"));

    let info = ProblemInfo::continuous("host", 1);
    let mut model = from_yaml
        .build(&BuildContext {
            problem: &info,
            seed: 0,
        })
        .unwrap();
    let fit = |m: &mut Box<dyn Model>, dim: usize, x: &[f64], y: &[f64]| {
        m.fit(TrainingData { dim, x, y }, 0)
            .err()
            .map(|e| e.to_string())
    };
    let e = fit(&mut model, 1, &[0.2, 0.4], &[1.0, f64::NAN]).unwrap();
    assert!(e.contains("y[1]"), "{e}");
    let e = fit(&mut model, 2, &[0.2, 0.4], &[1.0]).unwrap();
    assert!(e.contains("dimension 2"), "{e}");
    let e = fit(&mut model, 1, &[0.2, 0.4], &[1.0]).unwrap();
    assert!(e.contains("2 inputs for 1 targets"), "{e}");
    let post = model
        .fit(
            TrainingData {
                dim: 1,
                x: &[0.5],
                y: &[0.3],
            },
            0,
        )
        .unwrap();
    assert!(post.mean_var_grad(&[0.1, 0.2]).is_err());
    let fantasize = post.fantasize().unwrap();
    assert!(fantasize.condition(&[0.1], &[f64::INFINITY]).is_err());
    assert!(fantasize.condition(&[], &[0.0]).is_err());
    assert!(fantasize.condition(&[0.1, 0.2], &[0.0]).is_err());
    assert_eq!(
        fantasize
            .condition(&[0.1, 0.2], &[0.0, 0.4])
            .unwrap()
            .diagnostics()["bump_gp.n"],
        3.0
    );
    assert!(post.mean_var(&[0.1, 0.2]).mean.is_nan());
    assert_eq!(post.dim(), 1);
    assert!(post.covariance().is_none() && post.sample_paths().is_none());
    let concrete = posterior(&spec(0.1, 1.0), &[0.5], &[0.3]);
    assert!(concrete.joint(&[0.1, f64::NAN]).is_err());
}
