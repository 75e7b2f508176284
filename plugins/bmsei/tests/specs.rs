//! Every spec in `specs/bmsei/` parses and validates, with and without `--smoke`.

#[test]
fn every_spec_parses_with_and_without_smoke() {
    cabo_bmsei::link();
    cabo_gp::link();
    cabo_baselines::link();
    cabo_benchmarks::link();
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../specs/bmsei");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "yaml") {
            for smoke in [false, true] {
                if let Err(e) = cabo_runner::LoadedSpec::load(&path, smoke) {
                    panic!("{}: {e}", path.display());
                }
            }
            n += 1;
        }
    }
    assert_eq!(n, 6);
}
