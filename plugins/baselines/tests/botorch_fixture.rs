//! EI, LogEI and UCB against BoTorch 0.18.1 float64 values (`botorch_gp_reference.json`),
//! evaluated at the fixture's own posterior mean and standard deviation, so these tests
//! check the acquisition formulas independently of any GP implementation.

use cabo_baselines::acquisitions::{Score, UcbScore};
use cabo_toolkit::numerics::{ei, ei_grad, log_ei};
use serde_json::Value;

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../../shared/fixtures/botorch_gp_reference.json"
);

fn numbers(v: &Value) -> Vec<f64> {
    v.as_array()
        .expect("an array")
        .iter()
        .map(|x| x.as_f64().expect("a number"))
        .collect()
}

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs().max(1e-300)
}

#[test]
fn ei_log_ei_and_ucb_match_botorch() {
    let text = std::fs::read_to_string(FIXTURE).expect("the BoTorch reference fixture");
    let json: Value = serde_json::from_str(&text).unwrap();
    let cases = json["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 24);
    let (mut checked, mut underflowed, mut worst) = (0, 0, 0.0f64);
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let mean = numbers(&case["posterior_mean"]);
        let std = numbers(&case["posterior_std"]);
        let best = case["best_f"].as_f64().unwrap();
        let beta = case["ucb_beta"].as_f64().unwrap();
        let (ref_ei, ref_log_ei, ref_ucb) = (
            numbers(&case["ei"]),
            numbers(&case["log_ei"]),
            numbers(&case["ucb"]),
        );
        let ucb = UcbScore { kappa: beta.sqrt() };
        for i in 0..mean.len() {
            let (m, s) = (mean[i], std[i]);
            let e = ei(m, s, best);
            if ref_ei[i] == 0.0 {
                // BoTorch's EI underflows below u ≈ −38; ours must agree that it is ~0
                // (it may keep a subnormal), and LogEI must still match.
                assert!(e < 1e-300, "{name}[{i}]: EI {e} where BoTorch has 0");
                underflowed += 1;
            } else {
                let r = rel(e, ref_ei[i]);
                worst = worst.max(r);
                assert!(r < 1e-9, "{name}[{i}]: EI {e} vs {}", ref_ei[i]);
                assert_eq!(ei_grad(m, s, best).value, e);
            }
            let r = rel(log_ei(m, s, best), ref_log_ei[i]);
            worst = worst.max(r);
            assert!(
                r < 1e-9,
                "{name}[{i}]: LogEI {} vs {}",
                log_ei(m, s, best),
                ref_log_ei[i]
            );
            let r = rel(ucb.value(m, s), ref_ucb[i]);
            worst = worst.max(r);
            assert!(
                r < 1e-9,
                "{name}[{i}]: UCB {} vs {}",
                ucb.value(m, s),
                ref_ucb[i]
            );
            checked += 1;
        }
    }
    assert!(checked >= 24 * 4, "only {checked} test points");
    assert!(
        underflowed > 0,
        "the fixture is expected to contain underflowed EI values"
    );
    eprintln!(
        "{checked} points ({underflowed} with EI = 0 in BoTorch), worst relative error {worst:e}"
    );
}
