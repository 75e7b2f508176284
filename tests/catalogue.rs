//! The catalogue is complete — no plugin registration was dropped by the linker — every
//! registered example is a valid spec of its kind, and the catalogue's names are exactly the
//! `type` names spec parsing (typetag) accepts, kind by kind.

use cabo_core::registry::{self, Kind};
use cabo_core::{
    AcquisitionSpec, CostFunctionSpec, CostModelSpec, ModelSpec, PolicySpec, ProblemSpec, StudySpec,
};
use std::collections::BTreeSet;
use std::path::Path;

/// Every `#[cabo_core::plugin(name = "…", …)]` in the sources, found by reading the files:
/// an oracle independent of the linker. (Names produced inside `macro_rules!` bodies are not
/// literal and are not seen here.)
fn registered_in_sources() -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut stack = vec![
        Path::new("plugins").to_path_buf(),
        Path::new("crates").to_path_buf(),
        Path::new("app").to_path_buf(),
    ];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).expect("readable") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                let text = std::fs::read_to_string(&p).expect("readable");
                // Only attributes in code: doc comments show the attribute too.
                let mut rest = text.as_str();
                while let Some(at) = rest.find("#[cabo_core::plugin(") {
                    let line_start = rest[..at].rfind('\n').map_or(0, |i| i + 1);
                    let in_code = rest[line_start..at].trim().is_empty();
                    rest = &rest[at + "#[cabo_core::plugin(".len()..];
                    let name = rest
                        .trim_start()
                        .strip_prefix("name = \"")
                        .and_then(|r| r.split('"').next());
                    if let (true, Some(name)) = (in_code, name) {
                        names.insert(name.to_string());
                    }
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
fn every_plugin_belongs_to_one_of_the_facades_groups() {
    // Each group's crate registers something, and the groups together are the catalogue:
    // a plugin of a crate missing from the facade's list would be left over here.
    cabo::init().expect("every group registers plugins");
    let groups = cabo::plugin_crates();
    assert!(groups.len() >= 9, "{groups:?}");
    let mut in_groups = 0;
    for name in &groups {
        let group = cabo_core::registry::PluginGroup::new(name);
        let mine = group.plugins();
        assert!(!mine.is_empty(), "{name} registers no plugin");
        assert!(mine.iter().all(|p| p.crate_name == *name));
        in_groups += mine.len();
    }
    assert_eq!(in_groups, cabo_core::registry::catalogue().len());
    assert!(
        cabo_core::registry::PluginGroup::new("cabo-no-such-crate")
            .plugins()
            .is_empty()
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

/// The `type` names typetag deserialises into specs of `kind`, read from its message for an
/// unknown `type`, which lists every registered name.
fn serde_tags(kind: Kind) -> BTreeSet<String> {
    fn message<T: serde::de::DeserializeOwned>() -> String {
        match serde_json::from_str::<T>(r#"{"type": "no plugin has this name"}"#) {
            Ok(_) => panic!("a plugin is named `no plugin has this name`"),
            Err(e) => e.to_string(),
        }
    }
    let message = match kind {
        Kind::Problem => message::<Box<dyn ProblemSpec>>(),
        Kind::CostFunction => message::<Box<dyn CostFunctionSpec>>(),
        Kind::Model => message::<Box<dyn ModelSpec>>(),
        Kind::CostModel => message::<Box<dyn CostModelSpec>>(),
        Kind::Acquisition => message::<Box<dyn AcquisitionSpec>>(),
        Kind::Policy => message::<Box<dyn PolicySpec>>(),
        Kind::Study => message::<Box<dyn StudySpec>>(),
    };
    // "unknown variant `…`, expected one of `a`, `b` at line …" (or "expected `a`").
    let (_, expected) = message
        .split_once(", expected ")
        .unwrap_or_else(|| panic!("{kind}: unexpected message {message:?}"));
    expected
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// A plugin's catalogue entry and its spec type's serde tag are written by one attribute; this
/// holds them to it: for every kind, the names in the catalogue are exactly the names specs
/// can use, so no spec type is missing from `cargo xtask list` and no entry names a `type`
/// that does not parse.
#[test]
fn catalogue_names_are_the_serde_tags_of_their_kind() {
    cabo::init().expect("every kind has registrations");
    for kind in Kind::ALL {
        let catalogue: BTreeSet<String> = registry::names(kind)
            .into_iter()
            .map(str::to_string)
            .collect();
        let tags = serde_tags(kind);
        assert!(!tags.is_empty(), "{kind}: no spec types registered");
        assert_eq!(
            catalogue, tags,
            "{kind}: catalogue names differ from the spec types' serde tags"
        );
    }
}
