//! The catalogue is complete — no plugin registration was dropped by the linker — and every
//! registered example is a valid spec of its kind.

use std::collections::BTreeSet;
use std::path::Path;

/// Every `register_plugin!(Kind::X, "name", …)` and every `#[typetag::serde(name = "…")]` in
/// the sources, found by reading the files: an oracle independent of the linker. (Names
/// produced inside `macro_rules!` bodies are not literal and are not seen here.)
fn registered_in_sources() -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut stack = vec![
        Path::new("plugins").to_path_buf(),
        Path::new("crates").to_path_buf(),
    ];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).expect("readable") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let text = std::fs::read_to_string(&p).expect("readable");
                if p.ends_with("registry.rs") {
                    continue; // the macro's own definition and doc example
                }
                for chunk in text.split("register_plugin!(").skip(1) {
                    let after_kind = chunk
                        .split_once(',')
                        .map(|x| x.1.trim_start())
                        .unwrap_or("");
                    if let Some(rest) = after_kind.strip_prefix('"') {
                        names.insert(rest.split('"').next().unwrap_or("").to_string());
                    }
                }
                for chunk in text.split("#[typetag::serde(name = \"").skip(1) {
                    names.insert(chunk.split('"').next().unwrap_or("").to_string());
                }
            }
        }
    }
    names
}

#[test]
fn every_registration_in_the_sources_is_in_the_catalogue() {
    cabo::init().expect("every kind has registrations");
    let linked: BTreeSet<String> = cabo_core::registry::catalogue()
        .iter()
        .map(|p| p.name.to_string())
        .collect();
    let sources = registered_in_sources();
    assert!(
        sources.len() >= 10,
        "found only {} registrations",
        sources.len()
    );
    let missing: Vec<_> = sources.difference(&linked).collect();
    assert!(
        missing.is_empty(),
        "registered in source but not linked: {missing:?}"
    );
}

#[test]
fn every_example_is_a_valid_spec_of_its_kind() {
    cabo::init().expect("every kind has registrations");
    let failures: Vec<String> = cabo_core::registry::catalogue()
        .into_iter()
        .filter_map(|p| cabo_runner::catalogue::check_example(p).err())
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn names_are_unique_within_each_kind() {
    cabo::init().expect("every kind has registrations");
    let mut seen = BTreeSet::new();
    for p in cabo_core::registry::catalogue() {
        assert!(
            seen.insert((p.kind, p.name)),
            "{} {} registered twice",
            p.kind,
            p.name
        );
    }
}
