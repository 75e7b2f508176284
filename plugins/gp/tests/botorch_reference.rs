//! Posterior mean and standard deviation against BoTorch 0.18.1 / GPyTorch 1.15.2 (float64)
//! on the 24 reference cases in the shared fixtures (fixed hyperparameters and noise).

use cabo_core::{MeanVar, Posterior, TrainingData};
use cabo_gp::{ExactGp, GpConfig, GpPosterior, Kernel, KernelKind, Lengthscale, OutputTransform};
use serde_json::Value;

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/fixtures/botorch_gp_reference.json"
);

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .flat_map(|e| match e {
            Value::Array(a) => a.iter().map(|x| x.as_f64().unwrap()).collect::<Vec<_>>(),
            x => vec![x.as_f64().unwrap()],
        })
        .collect()
}

fn kind(name: &str) -> KernelKind {
    match name {
        "rbf" => KernelKind::Rbf,
        "matern12" => KernelKind::Matern12,
        "matern32" => KernelKind::Matern32,
        "matern52" => KernelKind::Matern52,
        other => panic!("unknown kernel {other}"),
    }
}

/// Relative error with a floor of 1e-3 on the reference magnitude, so that means crossing
/// zero are compared absolutely at that scale.
fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs().max(1e-3)
}

#[test]
fn posterior_matches_botorch_on_all_cases() {
    let text = std::fs::read_to_string(FIXTURE).expect("fixture file");
    let doc: Value = serde_json::from_str(&text).unwrap();
    let cases = doc["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 24);
    let (mut worst_mean, mut worst_sd) = (0.0f64, 0.0f64);
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let dim = case["dim"].as_u64().unwrap() as usize;
        let ls = floats(&case["lengthscales"]);
        let s = case["outputscale"].as_f64().unwrap();
        let noise = case["noise_variance"].as_f64().unwrap();
        let c = case["mean_constant"].as_f64().unwrap();
        let x = floats(&case["train_x"]);
        let y = floats(&case["train_y"]);
        let tx = floats(&case["test_x"]);
        let want_mean = floats(&case["posterior_mean"]);
        let want_sd = floats(&case["posterior_std"]);
        let data = TrainingData { dim, x: &x, y: &y };
        let k = kind(case["kernel"].as_str().unwrap());

        // Both construction routes: the direct posterior and the model with `fit: fixed`.
        let kernel = Kernel::new(k, ls.clone(), s).unwrap();
        let direct = GpPosterior::new(kernel, noise, c, data, OutputTransform::IDENTITY).unwrap();
        let mut config = GpConfig::fixed(k, Lengthscale::PerDim(ls), s, noise);
        config.mean = Some(c);
        let fitted = ExactGp::new(config).unwrap().fit(data, 0).unwrap();

        let m = want_mean.len();
        let mut batch = vec![MeanVar::default(); m];
        direct.mean_var_batch(&tx, &mut batch);
        for (i, p) in tx.chunks_exact(dim).enumerate() {
            for post in [&direct, &fitted] {
                let mv = post.mean_var(p);
                let g = post.mean_var_grad(p).unwrap();
                for (mean, var) in [
                    (mv.mean, mv.var),
                    (batch[i].mean, batch[i].var),
                    (g.mean, g.var),
                ] {
                    let em = rel(mean, want_mean[i]);
                    let es = rel(var.sqrt(), want_sd[i]);
                    worst_mean = worst_mean.max(em);
                    worst_sd = worst_sd.max(es);
                    assert!(
                        em < 1e-7,
                        "{name} point {i}: mean {mean} vs {}",
                        want_mean[i]
                    );
                    assert!(
                        es < 1e-7,
                        "{name} point {i}: sd {} vs {}",
                        var.sqrt(),
                        want_sd[i]
                    );
                }
            }
        }
        let (jm, jc) = direct.joint(&tx).unwrap();
        for i in 0..m {
            assert!(rel(jm[i], want_mean[i]) < 1e-7, "{name}: joint mean {i}");
            assert!(
                rel(jc[i * m + i].sqrt(), want_sd[i]) < 1e-7,
                "{name}: joint sd {i}"
            );
        }
    }
    println!("max relative error: mean {worst_mean:.3e}, sd {worst_sd:.3e}");
}
