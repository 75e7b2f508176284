//! Only `cabo-linalg` contains `unsafe` code. Every other crate's root forbids it, so the
//! compiler refuses it there; this test also keeps it out of the sources the attribute does
//! not reach (integration tests, benches) and out of comments, so that a reader looking for
//! `unsafe` finds it in one crate. The kernels that need it (SIMD intrinsics, run-time
//! feature dispatch) live in `crates/cabo-linalg`, whose bitwise-equivalence harness
//! checks them.

use std::path::{Path, PathBuf};

const FORBID: &str = "#![forbid(unsafe_code)]";

/// The `.rs` files under `dir`, recursively.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("readable") {
        let p = e.expect("entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn only_cabo_linalg_contains_unsafe_code() {
    let linalg = Path::new("crates/cabo-linalg");
    let mut files = Vec::new();
    for top in ["app", "crates", "plugins", "xtask"] {
        rust_files(Path::new(top), &mut files);
    }
    let mut found = Vec::new();
    for f in files.iter().filter(|f| !f.starts_with(linalg)) {
        let text = std::fs::read_to_string(f).expect("readable");
        for (i, line) in text.lines().enumerate() {
            if line.replace(FORBID, "").contains("unsafe") {
                found.push(format!("{}:{}: {}", f.display(), i + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "`unsafe` outside crates/cabo-linalg (kernels that need it belong there):\n{}",
        found.join("\n")
    );
}

#[test]
fn every_other_crate_root_forbids_unsafe_code() {
    let mut roots = vec![PathBuf::from("xtask/src/main.rs")];
    for top in ["app", "crates", "plugins", "xtask/templates"] {
        for e in std::fs::read_dir(top).expect("readable") {
            let dir = e.expect("entry").path();
            if dir.join("Cargo.toml").is_file() && !dir.ends_with("cabo-linalg") {
                roots.push(dir.join("src/lib.rs"));
            }
        }
    }
    assert!(roots.len() > 10, "found only {roots:?}");
    for root in &roots {
        let text = std::fs::read_to_string(root).expect("every crate has a src/lib.rs");
        assert!(
            text.lines().any(|l| l.trim() == FORBID),
            "{} does not declare {FORBID}",
            root.display()
        );
    }
}
