//! `cargo xtask inspect` reproduces BoTorch 0.18.1: each of the 24 recorded cases (posterior
//! mean and sd of the latent f, EI, LogEI and UCB) is written as an inspect file, run through
//! the same code path as the command, and compared to 1e-7 relative.

use serde_json::{Value, json};

const FIXTURE: &str = "../shared/fixtures/botorch_gp_reference.json";

fn numbers(v: &Value) -> Vec<f64> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_f64().expect("number"))
        .collect()
}

/// Relative error with a floor so values near zero are compared absolutely at 1e-7 scale.
fn rel(got: f64, want: f64) -> f64 {
    (got - want).abs() / want.abs().max(1e-3)
}

/// Runs one inspect file for `case` with `acquisition` and returns the parsed report.
fn inspect(case: &Value, acquisition: Value, dir: &std::path::Path) -> Value {
    let input = json!({
        "dim": case["dim"],
        "data": { "x": case["train_x"], "y": case["train_y"] },
        "model": {
            "type": "exact_gp",
            "kernel": {
                "type": case["kernel"],
                "lengthscale": case["lengthscales"],
                "outputscale": case["outputscale"],
            },
            "noise": case["noise_variance"],
            "mean": case["mean_constant"],
            "fit": "fixed",
        },
        "acquisition": acquisition,
        "points": case["test_x"],
    });
    let path = dir.join(format!("{}.json", case["name"].as_str().unwrap()));
    std::fs::write(&path, serde_json::to_string_pretty(&input).unwrap()).unwrap();
    let out = cabo_runner::inspect::inspect_file(&path).unwrap_or_else(|e| panic!("{e}"));
    serde_json::from_str(&out).expect("inspect prints JSON")
}

#[test]
fn inspect_reproduces_every_botorch_case() {
    cabo::init().expect("plugins registered");
    let text = std::fs::read_to_string(FIXTURE).expect("the BoTorch fixture beside the repository");
    let fixture: Value = serde_json::from_str(&text).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut worst = 0.0f64;
    let cases = fixture["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 24);
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let best_f = case["best_f"].as_f64().unwrap();
        let acquisitions = [
            ("ei", json!({ "type": "ei", "best_f": best_f })),
            ("log_ei", json!({ "type": "log_ei", "best_f": best_f })),
            ("ucb", json!({ "type": "ucb", "beta": case["ucb_beta"] })),
        ];
        for (key, spec) in acquisitions {
            let report = inspect(case, spec, dir.path());
            let points = report["points"].as_array().unwrap();
            let want_acq = numbers(&case[key]);
            let (mean, sd) = (
                numbers(&case["posterior_mean"]),
                numbers(&case["posterior_std"]),
            );
            for (i, p) in points.iter().enumerate() {
                let checks = [
                    ("mean", p["mean"].as_f64().unwrap(), mean[i]),
                    ("sd", p["sd"].as_f64().unwrap(), sd[i]),
                    (key, p["acquisition"].as_f64().unwrap(), want_acq[i]),
                ];
                for (what, got, want) in checks {
                    // EI that underflows in BoTorch is checked through LogEI instead.
                    if what == "ei" && want < 1e-280 {
                        assert!(
                            got < 1e-250,
                            "{name} point {i}: EI {got} for an underflowed reference"
                        );
                        continue;
                    }
                    let e = rel(got, want);
                    worst = worst.max(e);
                    assert!(
                        e < 1e-7,
                        "{name} point {i} {what}: {got} vs BoTorch {want} (rel {e:.2e})"
                    );
                }
            }
        }
    }
    eprintln!("worst relative error against BoTorch: {worst:.2e}");
}
