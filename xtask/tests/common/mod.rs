//! Running the real `xtask` binary from the workspace root, as a researcher would, and
//! reading what it wrote.

// Each test crate compiles this module for itself and uses a part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs `cargo xtask ARGS` (the built binary) in the workspace root.
pub fn xtask(args: &[&str]) -> Output {
    xtask_in(&workspace_root(), args)
}

/// Runs `cargo xtask ARGS` (the built binary) in `dir`.
pub fn xtask_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("xtask runs")
}

/// Every file of a results tree except times (`*.times.jsonl` and the runtime view, which
/// differ between runs), with its
/// bytes, by path relative to `root`, sorted.
pub fn result_files(root: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if !cabo_engine::times::varies_between_runs(&p) {
                out.push((
                    p.strip_prefix(root).unwrap().to_path_buf(),
                    std::fs::read(&p).unwrap(),
                ));
            }
        }
    }
    out.sort();
    out
}

/// The workspace root (the parent of the `xtask` crate).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}
