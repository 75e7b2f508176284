//! `cargo xtask new-plugin` as a researcher meets it: for every kind, the crate it writes
//! builds and passes its tests, the smoke spec it writes runs, and wrong input is refused with
//! a clear message and nothing written.
//!
//! The generated crates are built in a workspace of their own (a temporary directory with the
//! facade's two files, which `new-plugin` edits, and the generated crates as its only members),
//! against this workspace's `cabo-core` and `Cargo.lock`, offline, into a target directory
//! kept between runs under `target/tmp/`: after the first run only the generated crates
//! compile.

mod common;

use common::{result_files, workspace_root, xtask};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::AtomicBool;
use std::time::Instant;

/// The kinds and the names their crates get here: hyphens and digits, so every form of the
/// name (`quad-bowl`, `quad_bowl`, `QuadBowl`) is substituted.
const GENERATED: [(&str, &str); 3] = [
    ("acquisition", "upper-bound2"),
    ("problem", "quad-bowl"),
    ("policy", "hill-climb"),
];

/// A directory holding what `new-plugin` reads and edits: the facade's `lib.rs` and
/// `Cargo.toml`, and (for the package-name check) `crates/cabo-core/Cargo.toml`.
fn facade_workspace() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    let root = workspace_root();
    for f in [
        "app/cabo/src/lib.rs",
        "app/cabo/Cargo.toml",
        "crates/cabo-core/Cargo.toml",
    ] {
        let to = ws.path().join(f);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(root.join(f), to).unwrap();
    }
    ws
}

/// `cargo xtask new-plugin KIND NAME --workspace WS`.
fn new_plugin(ws: &Path, kind: &str, name: &str) -> Output {
    xtask(&[
        "new-plugin",
        kind,
        name,
        "--workspace",
        ws.to_str().unwrap(),
    ])
}

/// The manifest of a workspace whose members are its `plugins/*`: this workspace's
/// `[workspace…]` and `[profile…]` tables (the same dependency versions, features and
/// profiles, so dependencies build as they do here) with `members` replaced and every `path`
/// made absolute (so `cabo-core` is this workspace's).
fn generated_workspace_manifest(root: &Path) -> String {
    let text = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let mut out = String::new();
    let mut keep = false;
    let mut members = 0;
    for line in text.lines() {
        if line.starts_with('[') {
            keep = line.starts_with("[workspace") || line.starts_with("[profile");
        }
        if !keep {
            continue;
        }
        if line.starts_with("members = ") {
            out.push_str("members = [\"plugins/*\"]\n");
            members += 1;
            continue;
        }
        let absolute = format!("path = \"{}/", root.display());
        out.push_str(&line.replace("path = \"", &absolute));
        out.push('\n');
    }
    assert_eq!(
        members, 1,
        "the workspace manifest has one `members = ` line"
    );
    out
}

#[test]
fn generated_crates_of_every_kind_build_and_pass_their_tests() {
    let started = Instant::now();
    let ws = facade_workspace();
    let root = workspace_root();
    for (kind, name) in GENERATED {
        let out = new_plugin(ws.path(), kind, name);
        assert!(
            out.status.success(),
            "{kind} {name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let type_name = name.replace('-', "_");
        let lib =
            std::fs::read_to_string(ws.path().join(format!("plugins/{name}/src/lib.rs"))).unwrap();
        assert!(
            lib.contains(&format!("name = \"{type_name}\"")) && lib.contains("#[test]"),
            "{lib}"
        );
        let spec =
            std::fs::read_to_string(ws.path().join(format!("specs/{name}-smoke.yaml"))).unwrap();
        assert!(spec.contains(&format!("type: {type_name}")), "{spec}");
        let facade = std::fs::read_to_string(ws.path().join("app/cabo/src/lib.rs")).unwrap();
        let ident = format!("cabo_{type_name}");
        assert!(
            facade.contains(&format!("    {ident}::plugins,\n")),
            "{facade}"
        );
        let toml = std::fs::read_to_string(ws.path().join("app/cabo/Cargo.toml")).unwrap();
        assert!(
            toml.contains(&format!(
                "cabo-{name} = {{ path = \"../../plugins/{name}\" }}"
            )),
            "{toml}"
        );
    }

    std::fs::write(
        ws.path().join("Cargo.toml"),
        generated_workspace_manifest(&root),
    )
    .unwrap();
    std::fs::copy(root.join("Cargo.lock"), ws.path().join("Cargo.lock")).unwrap();
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("new-plugin-target");
    let mut cargo = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cargo
        .current_dir(ws.path())
        .args(["test", "--offline"])
        .env("CARGO_TARGET_DIR", &target)
        // The generated code must be as clean as the workspace's own.
        .env(
            "RUSTFLAGS",
            format!(
                "{} -D warnings",
                std::env::var("RUSTFLAGS").unwrap_or_default()
            ),
        );
    for (_, name) in GENERATED {
        cargo.args(["-p", &format!("cabo-{name}")]);
    }
    let out = cargo.output().expect("cargo runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    // Each crate's unit tests, three per template.
    let passed = stdout
        .matches("test result: ok. 3 passed; 0 failed")
        .count();
    assert_eq!(passed, GENERATED.len(), "{stdout}");
    eprintln!(
        "generated, built and tested {} crates in {:.0?}",
        GENERATED.len(),
        started.elapsed()
    );
}

#[test]
fn every_template_smoke_spec_runs_with_its_plugin_linked() {
    cabo::init().expect("plugins registered");
    for group in [
        cabo_template_acquisition::plugins(),
        cabo_template_problem::plugins(),
        cabo_template_policy::plugins(),
    ] {
        // As the facade does: the group keeps the crate, and its registrations, in this
        // binary, and each template registers its one plugin.
        assert_eq!(group.plugins().len(), 1, "{}", group.crate_name());
    }
    let out = tempfile::tempdir().unwrap();
    let opts = cabo_runner::RunOptions {
        smoke: true,
        out: out.path().to_path_buf(),
        report: false,
        ..cabo_runner::RunOptions::default()
    };
    let paths: Vec<PathBuf> = GENERATED
        .iter()
        .map(|(kind, _)| workspace_root().join(format!("xtask/templates/{kind}/smoke.yaml")))
        .collect();
    let specs = cabo_runner::load_specs(&paths, &opts).expect("the smoke specs are valid");
    let outcomes =
        cabo_runner::run_specs(&specs, &opts, &AtomicBool::new(false)).expect("they run");
    assert_eq!(outcomes.len(), GENERATED.len());
    for o in outcomes {
        assert!(o.complete && o.executed == 1, "{}: {o:?}", o.name);
    }
}

/// Runs `new-plugin` with `args` and checks the refusal: exit code 2, no panic, and every
/// fragment in the message.
fn assert_refused(ws: &Path, kind: &str, name: &str, fragments: &[&str]) {
    let out = new_plugin(ws, kind, name);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{kind} {name}: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    for f in fragments {
        assert!(
            stderr.contains(f),
            "{kind} {name}: message lacks {f:?}:\n{stderr}"
        );
    }
}

#[test]
fn wrong_input_is_refused_with_a_clear_message_and_nothing_written() {
    let ws = facade_workspace();
    let w = ws.path();
    // What a refusal must leave as it is: an existing crate and spec of the same name.
    std::fs::create_dir_all(w.join("plugins/taken/src")).unwrap();
    std::fs::write(w.join("plugins/taken/src/lib.rs"), "// mine\n").unwrap();
    std::fs::create_dir_all(w.join("specs")).unwrap();
    std::fs::write(w.join("specs/spec-taken-smoke.yaml"), "# mine\n").unwrap();
    let before = result_files(w);

    assert_refused(
        w,
        "policie",
        "x",
        &[
            "unknown plugin kind `policie`",
            "did you mean `policy`",
            "acquisition, problem, policy",
        ],
    );
    assert_refused(
        w,
        "model",
        "x",
        &[
            "unknown plugin kind `model`",
            "acquisition, problem, policy",
        ],
    );
    for bad in ["Hill", "hill_climb", "2d", "hill-", "a--b", "hill climb"] {
        assert_refused(
            w,
            "policy",
            bad,
            &["lowercase letters, digits and single `-`"],
        );
    }
    assert_refused(w, "policy", "self", &["`Self`", "keyword"]);
    assert_refused(
        w,
        "policy",
        "random-search",
        &["policy plugin named `random_search` is already registered"],
    );
    assert_refused(w, "problem", "core", &["already has a package `cabo-core`"]);
    assert_refused(
        w,
        "acquisition",
        "ei",
        &["an acquisition plugin named `ei` is already registered"],
    );
    assert_refused(
        w,
        "acquisition",
        "taken",
        &["plugins/taken already exists", "never overwrites"],
    );
    assert_refused(
        w,
        "acquisition",
        "spec-taken",
        &["spec-taken-smoke.yaml already exists", "never overwrites"],
    );
    let empty = tempfile::tempdir().unwrap();
    assert_refused(empty.path(), "policy", "fine", &["not the cabo workspace"]);

    assert_eq!(
        result_files(w),
        before,
        "a refusal wrote into the workspace"
    );
    assert!(result_files(empty.path()).is_empty());
}

/// A copy of this workspace's sources (not `target/`, `.git/` or results) at a fixed place
/// under `target/tmp/`, with their modification times, so that a target directory kept
/// between runs rebuilds only what `new-plugin` changes.
fn workspace_copy() -> PathBuf {
    let root = workspace_root();
    let copy = Path::new(env!("CARGO_TARGET_TMPDIR")).join("new-plugin-workspace");
    if copy.exists() {
        std::fs::remove_dir_all(&copy).unwrap();
    }
    std::fs::create_dir_all(&copy).unwrap();
    for e in std::fs::read_dir(&root).unwrap().flatten() {
        let name = e.file_name();
        if [".git", "target", "results", "slurm"].contains(&name.to_str().unwrap_or("")) {
            continue;
        }
        let status = Command::new("cp")
            .arg("-a")
            .arg(e.path())
            .arg(&copy)
            .status()
            .expect("cp runs");
        assert!(status.success(), "cannot copy {}", e.path().display());
    }
    copy
}

/// `cargo test -p cabo-tests --test specs` in `ws`, offline, with `env` set.
fn spec_snapshot_test(ws: &Path, env: &[(&str, &str)]) -> Output {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("new-plugin-workspace-target");
    let mut cargo = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cargo
        .current_dir(ws)
        .args(["test", "--offline", "-p", "cabo-tests", "--test", "specs"])
        .env("CARGO_TARGET_DIR", &target)
        .env_remove("INSTA_UPDATE")
        .env_remove("INSTA_GLOB_FILTER");
    for (k, v) in env {
        cargo.env(k, v);
    }
    cargo.output().expect("cargo runs")
}

/// The workspace's snapshot test of every spec fails on a generated smoke spec until its
/// snapshot is recorded; the one command `new-plugin` prints records it, and then the test
/// passes without recording anything. Run on a copy of the workspace, so the repository
/// itself is never touched.
#[test]
fn the_printed_command_records_the_smoke_specs_snapshot() {
    let ws = workspace_copy();
    let repo = result_files(&workspace_root().join("specs"));
    // Every kind is generated first, so that the copy's workspace is built once (a full
    // build of it, in a target directory of its own, is most of this test's time).
    let commands: Vec<String> = GENERATED
        .iter()
        .map(|(kind, name)| {
            let out = new_plugin(&ws, kind, name);
            let stdout = String::from_utf8_lossy(&out.stdout).to_string();
            assert!(
                out.status.success(),
                "{kind}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            // The command is printed on a line of its own, ready to paste.
            stdout
                .lines()
                .map(str::trim)
                .find(|l| l.starts_with("INSTA_GLOB_FILTER="))
                .unwrap_or_else(|| panic!("{kind}: no snapshot command in:\n{stdout}"))
                .to_string()
        })
        .collect();
    for ((kind, name), command) in GENERATED.into_iter().zip(commands) {
        let snapshot = ws.join(format!(
            "tests/snapshots/specs__every_spec_runs_in_smoke_mode_and_matches_its_snapshot@{name}-smoke.yaml.snap"
        ));
        let filter = format!("{name}-smoke.yaml");
        // Without the snapshot, the workspace's test fails (as CI runs it: no update).
        let before = spec_snapshot_test(
            &ws,
            &[("INSTA_GLOB_FILTER", &filter), ("INSTA_UPDATE", "no")],
        );
        assert!(
            !before.status.success(),
            "{kind}: the spec test passed without a snapshot:\n{}",
            String::from_utf8_lossy(&before.stderr)
        );
        assert!(!snapshot.exists());
        // The printed command: its environment, then `cargo test …` as written.
        let mut words = command.split_whitespace();
        let env: Vec<(&str, &str)> = words
            .by_ref()
            .take(2)
            .map(|w| w.split_once('=').expect("NAME=VALUE"))
            .collect();
        assert_eq!(
            words.collect::<Vec<_>>().join(" "),
            "cargo test -p cabo-tests --test specs",
            "{command}"
        );
        let recorded = spec_snapshot_test(&ws, &env);
        assert!(
            recorded.status.success() && snapshot.is_file(),
            "{kind}: `{command}` did not record {}:\n{}",
            snapshot.display(),
            String::from_utf8_lossy(&recorded.stderr)
        );
        let after = spec_snapshot_test(
            &ws,
            &[("INSTA_GLOB_FILTER", &filter), ("INSTA_UPDATE", "no")],
        );
        assert!(
            after.status.success(),
            "{kind}: the spec test fails with the recorded snapshot:\n{}",
            String::from_utf8_lossy(&after.stderr)
        );
    }
    assert_eq!(
        result_files(&workspace_root().join("specs")),
        repo,
        "the repository's specs changed"
    );
    std::fs::remove_dir_all(&ws).unwrap();
}
