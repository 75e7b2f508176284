//! The plugin catalogue as `cargo xtask list` prints it, and the check that every
//! registered example parses as a spec of its kind.

use cabo_core::registry::{self, Kind, PluginInfo};
use cabo_core::{
    AcquisitionSpec, CostFunctionSpec, CostModelSpec, ModelSpec, PendingRule, PolicySpec,
    ProblemSpec, StudySpec,
};
use std::fmt::Write;
use std::path::Path;

/// The catalogue as text (grouped by kind) or JSON.
pub fn render(json: bool) -> String {
    let all = registry::catalogue();
    if json {
        return serde_json::to_string_pretty(&all).unwrap_or_default() + "\n";
    }
    let mut out = String::new();
    for kind in Kind::ALL {
        let of_kind: Vec<&PluginInfo> = all.iter().copied().filter(|p| p.kind == kind).collect();
        let _ = writeln!(
            out,
            "== {} (`{}:`) — {} registered",
            kind.plural(),
            kind.spec_key(),
            of_kind.len()
        );
        for p in of_kind {
            let _ = writeln!(out, "  {:<22} {}", p.name, p.summary);
            let _ = writeln!(out, "  {:<22} paper: {}", "", p.paper);
            let _ = writeln!(out, "  {:<22} {}: {}", "", kind.spec_key(), p.example_yaml);
            if let Some(rule) = pending_rule(p) {
                let _ = writeln!(out, "  {:<22} with points pending: {}", "", rule.name());
            }
        }
        out.push('\n');
    }
    out
}

/// The rule an acquisition or policy states for deciding with points pending (read from its
/// registered example); `None` for the other kinds.
fn pending_rule(info: &PluginInfo) -> Option<PendingRule> {
    let path = Path::new("<example>");
    let text = info.example_yaml;
    match info.kind {
        Kind::Acquisition => cabo_spec::error::parse_yaml::<Box<dyn AcquisitionSpec>>(path, text)
            .ok()
            .map(|a| a.pending()),
        Kind::Policy => cabo_spec::error::parse_yaml::<Box<dyn PolicySpec>>(path, text)
            .ok()
            .map(|p| p.pending()),
        _ => None,
    }
}

/// Examples are written as they would appear in a spec under `specs/<folder>/` (a data
/// file's `path:` is relative to the spec file's directory), so relative paths in them
/// resolve from here, relative to the workspace root.
pub const EXAMPLE_SPEC_DIR: &str = "specs/benchmarks";

/// Parses a plugin's example YAML as a spec of its kind and runs its `validate` hook for a
/// dimension the example implies (problems report their own; others are checked at d = 2
/// unless the example needs another, which is what `dim_hint` is for).
pub fn check_example(info: &PluginInfo) -> Result<(), String> {
    let path = Path::new("<example>");
    let text = info.example_yaml;
    let err = |e: crate::SpecError| format!("{} {}: {e}", info.kind, info.name);
    let check_type = |yaml_type: &str| {
        if yaml_type == info.name {
            Ok(())
        } else {
            Err(format!(
                "{} {}: its example has type `{yaml_type}`",
                info.kind, info.name
            ))
        }
    };
    let type_name = example_type(text)
        .ok_or_else(|| format!("{} {}: the example has no `type` key", info.kind, info.name))?;
    check_type(&type_name)?;
    match info.kind {
        Kind::Problem => {
            let mut s: Box<dyn ProblemSpec> =
                cabo_spec::error::parse_yaml(path, text).map_err(err)?;
            s.set_spec_dir(Path::new(EXAMPLE_SPEC_DIR));
            s.dim().map(|_| ()).map_err(|e| e.to_string())
        }
        Kind::CostFunction => cabo_spec::error::parse_yaml::<Box<dyn CostFunctionSpec>>(path, text)
            .map(|_| ())
            .map_err(err),
        Kind::Model => cabo_spec::error::parse_yaml::<Box<dyn ModelSpec>>(path, text)
            .map(|_| ())
            .map_err(err),
        Kind::CostModel => cabo_spec::error::parse_yaml::<Box<dyn CostModelSpec>>(path, text)
            .map(|_| ())
            .map_err(err),
        Kind::Acquisition => cabo_spec::error::parse_yaml::<Box<dyn AcquisitionSpec>>(path, text)
            .map(|_| ())
            .map_err(err),
        Kind::Policy => cabo_spec::error::parse_yaml::<Box<dyn PolicySpec>>(path, text)
            .map(|_| ())
            .map_err(err),
        Kind::Study => {
            let s: Box<dyn StudySpec> = cabo_spec::error::parse_yaml(path, text).map_err(err)?;
            s.validate().map_err(|e| e.to_string())
        }
    }
}

/// The `type` value of a flow or block mapping.
fn example_type(text: &str) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Tagged {
        #[serde(rename = "type")]
        kind: String,
    }
    // Unknown keys are fine here: only the tag is read.
    serde_saphyr::from_str::<Tagged>(text).ok().map(|t| t.kind)
}
