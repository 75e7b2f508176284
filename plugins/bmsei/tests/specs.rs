//! Every spec in `specs/bmsei/` parses and validates, with and without `--smoke`: the
//! comparisons and the Theorem 1 study.

#[test]
fn every_spec_parses_with_and_without_smoke() {
    cabo_bmsei::plugins();
    cabo_gp::plugins();
    cabo_baselines::plugins();
    cabo_benchmarks::plugins();
    // robot-push-box2d is a Python program run through the external problem.
    cabo_external::plugins();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../specs/bmsei");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "yaml") {
            let text = std::fs::read_to_string(&path).unwrap();
            for smoke in [false, true] {
                let checked = if cabo_runner::study::is_study(&text) {
                    cabo_runner::study::LoadedStudy::parse(&path, &text, smoke).map(|_| ())
                } else {
                    cabo_runner::LoadedSpec::load(&path, smoke).map(|_| ())
                };
                if let Err(e) = checked {
                    panic!("{}: {e}", path.display());
                }
            }
            n += 1;
        }
    }
    assert_eq!(n, 15);
}
