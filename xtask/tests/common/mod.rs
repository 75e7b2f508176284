//! Running the real `xtask` binary from the workspace root, as a researcher would.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs `cargo xtask ARGS` (the built binary) in the workspace root.
pub fn xtask(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(args)
        .current_dir(workspace_root())
        .output()
        .expect("xtask runs")
}

/// The workspace root (the parent of the `xtask` crate).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}
