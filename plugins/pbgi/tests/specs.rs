//! Every spec in `specs/pbgi/` parses and validates, full size and smoke: the comparisons
//! and the Figure 3 (left) study.

use std::path::PathBuf;

#[test]
fn pbgi_specs_load_full_and_smoke() {
    cabo_gp::plugins();
    cabo_baselines::plugins();
    cabo_benchmarks::plugins();
    cabo_bmsei::plugins();
    cabo_pbgi::plugins();
    // Lunar Lander and Robot Pushing are Python programs run through the external problem.
    cabo_external::plugins();
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../specs/pbgi");
    let yaml_in = |dir: &std::path::Path| -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
            .collect();
        files.sort();
        files
    };
    let mut files = yaml_in(&dir);
    assert!(
        files.len() >= 40,
        "expected the paper's 36 settings, the Figure 3 (left) study and the 3 runtime specs, \
         found {}",
        files.len()
    );
    // App. D.3: two kernels and two lengthscales, each at d = 4, 8, 16, 32, uniform and
    // cost-aware.
    let ablations = yaml_in(&dir.join("ablations"));
    assert_eq!(ablations.len(), 32, "the kernel and lengthscale ablations");
    files.extend(ablations);
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap();
        for smoke in [false, true] {
            // The Figure 3 (left) study is a study file; `--smoke` fails without a variant.
            if cabo_runner::study::is_study(&text) {
                cabo_runner::study::LoadedStudy::parse(path, &text, smoke)
                    .unwrap_or_else(|e| panic!("{} (smoke {smoke}): {e}", path.display()));
                continue;
            }
            let loaded = cabo_runner::LoadedSpec::load(path, smoke)
                .unwrap_or_else(|e| panic!("{} (smoke {smoke}): {e}", path.display()));
            assert!(
                loaded.spec.smoke.is_some() || smoke,
                "{} has no smoke variant",
                path.display()
            );
        }
    }
}

#[test]
fn bad_pbgi_parameters_are_reported() {
    cabo_pbgi::plugins();
    use cabo_core::{AcquisitionSpec, PolicySpec};
    let bad: Box<dyn AcquisitionSpec> =
        serde_json::from_str(r#"{"type":"pbgi","lambda":-1}"#).unwrap();
    let e = bad.validate(2).unwrap_err().to_string();
    assert!(e.contains("lambda"), "{e}");
    let bad: Box<dyn PolicySpec> =
        serde_json::from_str(r#"{"type":"pbgi_decay","beta":2}"#).unwrap();
    let e = bad.validate(2).unwrap_err().to_string();
    assert!(e.contains("beta"), "{e}");
    assert!(
        serde_json::from_str::<Box<dyn AcquisitionSpec>>(r#"{"type":"pbgi","lamda":1}"#).is_err()
    );
    // λ₀ = 1e-4 (the paper text's value) is expressible.
    let ok: Box<dyn PolicySpec> =
        serde_json::from_str(r#"{"type":"pbgi_decay","lambda0":1e-4}"#).unwrap();
    assert!(ok.validate(2).is_ok());
}
