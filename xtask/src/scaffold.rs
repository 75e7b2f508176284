//! `cargo xtask new-plugin <kind> <name>`: a new plugin crate under `plugins/<name>/` that
//! compiles and passes its tests as generated — a working plugin of the kind, its spec type,
//! its registration, unit tests, and a smoke spec under `specs/` — and the two edits that
//! link it from the facade (`PLUGIN_GROUPS` and the facade's dependency).
//!
//! What it writes is a copy of a real crate, `xtask/templates/<kind>/`, with that crate's
//! names replaced: the templates are workspace members, so `cargo test --workspace` builds,
//! lints and tests them like any plugin, and `xtask/tests/scaffold.rs` builds and tests
//! crates generated from them. The templates are compiled into the binary, so `new-plugin`
//! needs no source tree but the workspace it writes into.
//!
//! A template's names are `template-<kind>` (its directory and, as `cabo-template-<kind>`, its
//! package), `template_<kind>` (its plugin `type` and, as `cabo_template_<kind>`, its crate)
//! and `Template<Kind>` (its Rust types); `new-plugin` replaces each by the new name in the
//! same form, so no other text in a template may contain them.

use std::fmt::Write;
use std::path::{Path, PathBuf};

/// One kind's template crate, as compiled into the binary.
struct Template {
    /// The plugin kind, as `new-plugin` takes it.
    kind: &'static str,
    /// `Cargo.toml`.
    manifest: &'static str,
    /// `src/lib.rs`.
    lib: &'static str,
    /// The smoke spec, written to `specs/<name>-smoke.yaml`.
    smoke: &'static str,
}

/// A template's files by kind, read from `xtask/templates/<kind>/`.
macro_rules! template {
    ($kind:literal) => {
        Template {
            kind: $kind,
            manifest: include_str!(concat!("../templates/", $kind, "/Cargo.toml")),
            lib: include_str!(concat!("../templates/", $kind, "/src/lib.rs")),
            smoke: include_str!(concat!("../templates/", $kind, "/smoke.yaml")),
        }
    };
}

const TEMPLATES: [Template; 3] = [
    template!("acquisition"),
    template!("problem"),
    template!("policy"),
];

/// The kinds a plugin can be scaffolded for.
pub const KINDS: &[&str] = &["acquisition", "problem", "policy"];

/// What was created.
#[derive(Debug, Clone)]
pub struct Scaffolded {
    /// The crate directory.
    pub crate_dir: PathBuf,
    /// The smoke spec.
    pub spec: PathBuf,
    /// The package name (`cabo-<name>`).
    pub package: String,
}

fn check_name(name: &str) -> Result<(), String> {
    let ok = !name.is_empty()
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !name.ends_with('-')
        && !name.contains("--");
    if !ok {
        return Err(format!(
            "plugin name {name:?}: use lowercase letters, digits and single `-` (starting with \
             a letter), e.g. `my-acquisition`; the crate becomes cabo-<name>, the plugin's \
             `type` uses `_` for `-`"
        ));
    }
    // The name also becomes Rust types (`<Name>`, `<Name>Spec`); `Self` is a keyword.
    if camel(name) == "Self" {
        return Err(format!(
            "plugin name {name:?}: its type would be called `Self`, a Rust keyword; choose \
             another name"
        ));
    }
    Ok(())
}

fn camel(name: &str) -> String {
    name.split('-')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// The template's text with its names replaced by `name`'s (see the module docs).
fn instantiate(text: &str, kind: &str, name: &str) -> String {
    let placeholder = format!("template-{kind}");
    text.replace(&placeholder, name)
        .replace(&placeholder.replace('-', "_"), &name.replace('-', "_"))
        .replace(&camel(&placeholder), &camel(name))
}

/// The `name = "…"` of every package directly under `app/`, `crates/`, `plugins/` and
/// `xtask/templates/`, and of the workspace root and `xtask`: a new package must not reuse one.
fn workspace_packages(workspace: &Path) -> Vec<String> {
    let mut manifests = vec![
        workspace.join("Cargo.toml"),
        workspace.join("xtask/Cargo.toml"),
    ];
    for top in ["app", "crates", "plugins", "xtask/templates"] {
        if let Ok(dirs) = std::fs::read_dir(workspace.join(top)) {
            manifests.extend(dirs.flatten().map(|d| d.path().join("Cargo.toml")));
        }
    }
    manifests
        .iter()
        .filter_map(|m| std::fs::read_to_string(m).ok())
        .filter_map(|text| {
            let package = text.split("[package]").nth(1)?;
            let line = package
                .lines()
                .find(|l| l.trim_start().starts_with("name"))?;
            let (_, value) = line.split_once('=')?;
            Some(value.trim().trim_matches('"').to_string())
        })
        .collect()
}

/// The command that records the snapshot of a new smoke spec `specs/<file>`: every spec
/// under `specs/` has one (`tests/specs.rs`), and `cargo test --workspace` fails on a spec
/// without it. The filter runs that spec alone, so no other snapshot is touched.
pub fn snapshot_command(spec_file: &str) -> String {
    format!(
        "INSTA_GLOB_FILTER={spec_file} INSTA_UPDATE=always cargo test -p cabo-tests --test specs"
    )
}

/// Creates the crate and links it; returns a message naming what was written and the
/// commands to run next.
pub fn new_plugin(workspace: &Path, kind: &str, name: &str) -> Result<String, String> {
    let s = scaffold(workspace, kind, name)?;
    let spec_file = format!("{name}-smoke.yaml");
    Ok(format!(
        "created {} (package {}) and {}, and linked it from app/cabo\n\
         try: cargo test -p {} && cargo xtask run {} --smoke\n\
         record the smoke spec's snapshot (cargo test --workspace fails until it exists):\n  {}",
        s.crate_dir.display(),
        s.package,
        s.spec.display(),
        s.package,
        s.spec.display(),
        snapshot_command(&spec_file)
    ))
}

/// Creates the crate, the smoke spec and the facade edits, after checking everything that
/// could fail, so a refusal writes nothing.
pub fn scaffold(workspace: &Path, kind: &str, name: &str) -> Result<Scaffolded, String> {
    let Some(template) = TEMPLATES.iter().find(|t| t.kind == kind) else {
        let closest = cabo::core::registry::closest_of(kind, KINDS)
            .map(|c| format!(" (did you mean `{c}`?)"))
            .unwrap_or_default();
        return Err(format!(
            "unknown plugin kind `{kind}`{closest}; new-plugin scaffolds one of: {}",
            KINDS.join(", ")
        ));
    };
    check_name(name)?;
    check_unregistered(kind, name)?;
    let facade_lib = workspace.join("app/cabo/src/lib.rs");
    let facade_toml = workspace.join("app/cabo/Cargo.toml");
    if !facade_lib.is_file() || !facade_toml.is_file() {
        return Err(format!(
            "{}: not the cabo workspace (no app/cabo/src/lib.rs); run from the workspace \
             root or pass --workspace DIR",
            workspace.display()
        ));
    }
    let crate_dir = workspace.join("plugins").join(name);
    let package = format!("cabo-{name}");
    let spec = workspace.join("specs").join(format!("{name}-smoke.yaml"));
    for existing in [&crate_dir, &spec] {
        if existing.exists() {
            return Err(format!(
                "{} already exists: choose another name (new-plugin never overwrites)",
                existing.display()
            ));
        }
    }
    if workspace_packages(workspace).contains(&package) {
        return Err(format!(
            "the workspace already has a package `{package}`; choose another name"
        ));
    }
    let (new_lib, new_toml) = facade_edits(&facade_lib, &facade_toml, &package, name)?;
    // Everything that could refuse has been checked: from here on it only writes.
    write_crate(template, kind, name, &crate_dir, &spec)?;
    std::fs::write(&facade_lib, new_lib).map_err(|e| format!("{}: {e}", facade_lib.display()))?;
    std::fs::write(&facade_toml, new_toml)
        .map_err(|e| format!("{}: {e}", facade_toml.display()))?;
    Ok(Scaffolded {
        crate_dir,
        spec,
        package,
    })
}

/// Refuses a name whose plugin `type` is already registered for the kind: two spec types
/// under one `type` name would make every spec using it ambiguous.
fn check_unregistered(kind: &str, name: &str) -> Result<(), String> {
    let type_name = name.replace('-', "_");
    let registry_kind = match kind {
        "acquisition" => cabo::core::Kind::Acquisition,
        "problem" => cabo::core::Kind::Problem,
        _ => cabo::core::Kind::Policy,
    };
    if cabo::core::registry::names(registry_kind).contains(&type_name.as_str()) {
        let article = if kind.starts_with(['a', 'e', 'i', 'o', 'u']) {
            "an"
        } else {
            "a"
        };
        return Err(format!(
            "{article} {registry_kind} plugin named `{type_name}` is already registered \
             (`cargo xtask list`); choose another name"
        ));
    }
    Ok(())
}

/// The facade's `lib.rs` with the crate added to `PLUGIN_GROUPS`, and its `Cargo.toml` with
/// the crate as a dependency. Computed before anything is written, so a facade they do not
/// fit is refused with nothing written.
fn facade_edits(
    facade_lib: &Path,
    facade_toml: &Path,
    package: &str,
    name: &str,
) -> Result<(String, String), String> {
    let lib = std::fs::read_to_string(facade_lib)
        .map_err(|e| format!("{}: {e}", facade_lib.display()))?;
    let toml = std::fs::read_to_string(facade_toml)
        .map_err(|e| format!("{}: {e}", facade_toml.display()))?;
    let ident = package.replace('-', "_");
    let anchor = "const PLUGIN_GROUPS: &[fn() -> PluginGroup] = &[\n";
    let Some(at) = lib.find(anchor) else {
        return Err(format!(
            "{}: cannot find `{}` to add the crate to",
            facade_lib.display(),
            anchor.trim_end()
        ));
    };
    let mut new_lib = lib.clone();
    new_lib.insert_str(at + anchor.len(), &format!("    {ident}::plugins,\n"));
    if !toml.contains("[dependencies]") {
        return Err(format!(
            "{}: no [dependencies] table",
            facade_toml.display()
        ));
    }
    let mut new_toml = toml.trim_end().to_string();
    let _ = writeln!(
        new_toml,
        "\n{package} = {{ path = \"../../plugins/{name}\" }}"
    );
    Ok((new_lib, new_toml))
}

/// Writes the template's crate to `crate_dir` and its smoke spec to `spec`, with the
/// template's names replaced by `name`'s.
fn write_crate(
    template: &Template,
    kind: &str,
    name: &str,
    crate_dir: &Path,
    spec: &Path,
) -> Result<(), String> {
    let files = [
        ("Cargo.toml", template.manifest),
        ("src/lib.rs", template.lib),
    ];
    std::fs::create_dir_all(crate_dir.join("src"))
        .map_err(|e| format!("{}: {e}", crate_dir.display()))?;
    for (rel, text) in files {
        let p = crate_dir.join(rel);
        std::fs::write(&p, instantiate(text, kind, name))
            .map_err(|e| format!("{}: {e}", p.display()))?;
    }
    // Names change line lengths, so the code is formatted after substitution; without
    // rustfmt it still compiles, it is only laid out differently.
    let _ = std::process::Command::new("rustfmt")
        .args(["--edition", "2024"])
        .arg(crate_dir.join("src/lib.rs"))
        .status();
    if let Some(d) = spec.parent() {
        std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
    }
    std::fs::write(spec, instantiate(template.smoke, kind, name))
        .map_err(|e| format!("{}: {e}", spec.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_a_template_and_every_template_a_kind() {
        let kinds: Vec<&str> = TEMPLATES.iter().map(|t| t.kind).collect();
        assert_eq!(kinds, KINDS);
    }

    #[test]
    fn instantiation_leaves_no_name_of_the_template() {
        for t in &TEMPLATES {
            for text in [t.manifest, t.lib, t.smoke] {
                let out = instantiate(text, t.kind, "hill-climb2");
                assert!(
                    !out.to_lowercase().contains("template"),
                    "{}: a template name survives:\n{out}",
                    t.kind
                );
                assert!(
                    out.contains("hill_climb2")
                        || out.contains("hill-climb2")
                        || out.contains("HillClimb2")
                );
            }
            let lib = instantiate(t.lib, t.kind, "hill-climb2");
            assert!(lib.contains("//! # cabo-hill-climb2"), "{lib}");
            assert!(lib.contains("name = \"hill_climb2\""), "{lib}");
            assert!(lib.contains("pub struct HillClimb2Spec"), "{lib}");
            let manifest = instantiate(t.manifest, t.kind, "hill-climb2");
            assert!(
                manifest.contains("name = \"cabo-hill-climb2\""),
                "{manifest}"
            );
        }
    }

    #[test]
    fn names_are_checked() {
        for bad in [
            "",
            "Hill",
            "1hill",
            "hill_climb",
            "hill-",
            "hill--climb",
            "self",
        ] {
            assert!(check_name(bad).is_err(), "{bad:?} accepted");
        }
        for good in ["hill", "hill-climb", "h2", "a-1"] {
            assert!(check_name(good).is_ok(), "{good:?} refused");
        }
    }
}
