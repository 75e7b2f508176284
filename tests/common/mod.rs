//! Helpers shared by the workspace tests.

// Each test crate compiles this module for itself and uses a part of it.
#![allow(dead_code)]

use cabo_core::registry::Kind;
use cabo_runner::{LoadedSpec, RunError, RunOptions};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::AtomicBool;

/// Every result file under `dir` except times (`*.times.jsonl` and the runtime view, the only
/// files that may differ between equal runs), by path relative to `dir`.
pub fn result_files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("readable") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else if !cabo_engine::times::varies_between_runs(&p) {
                let rel = p.strip_prefix(dir).unwrap().to_string_lossy().to_string();
                files.insert(rel, std::fs::read(&p).expect("readable"));
            }
        }
    }
    files
}

/// A catalogue acquisition or policy with its example.
pub struct Entry {
    /// Acquisition or policy.
    pub kind: Kind,
    /// Its registered name.
    pub name: &'static str,
    /// Its registered example.
    pub example: &'static str,
}

impl Entry {
    /// The spec key its entry goes under.
    pub fn key(&self) -> &'static str {
        if self.kind == Kind::Acquisition {
            "acquisition"
        } else {
            "policy"
        }
    }
}

/// Every acquisition and policy of the catalogue.
pub fn catalogue_entries() -> Vec<Entry> {
    cabo_core::registry::catalogue()
        .iter()
        .filter(|p| matches!(p.kind, Kind::Acquisition | Kind::Policy))
        .map(|p| Entry {
            kind: p.kind,
            name: p.name,
            example: p.example_yaml,
        })
        .collect()
}

/// A one-policy smoke spec of `setting` with `model` and the policy entry `key: example`.
pub fn spec_text(setting: &str, model: &str, key: &str, example: &str, name: &str) -> String {
    format!(
        "name: {name}\nreplications: 1\n{setting}model: {model}\npolicies:\n  - name: P\n    \
         {key}: {example}\noptimizer: {{ raw_samples: 16, restarts: 2, max_iters: 10 }}\n\
         smoke: {{ replications: 1 }}\n"
    )
}

/// `text` parsed as the spec file `<name>.yaml`, in smoke mode.
pub fn parse(name: &str, text: &str) -> Result<LoadedSpec, String> {
    LoadedSpec::parse(Path::new(&format!("{name}.yaml")), text, true).map_err(|e| e.to_string())
}

/// Runs the specs together (in parallel); returns the failure message of each spec that
/// failed, by spec name.
pub fn run_all(specs: &[LoadedSpec], out: &Path) -> BTreeMap<String, String> {
    if specs.is_empty() {
        return BTreeMap::new();
    }
    let opts = RunOptions {
        smoke: true,
        out: out.to_path_buf(),
        report: false,
        ..RunOptions::default()
    };
    let mut failed = BTreeMap::new();
    match cabo_runner::run_specs(specs, &opts, &AtomicBool::new(false)) {
        Ok(outcomes) => {
            for o in outcomes {
                let done = o
                    .summary
                    .as_ref()
                    .is_some_and(|s| s.policies.iter().all(|p| p.replications == 1));
                if !(o.complete && done) {
                    failed.insert(o.name.clone(), "no complete run".to_string());
                }
            }
        }
        Err(RunError::Runs(messages)) => {
            for s in specs {
                let prefix = format!("{} (", s.spec.name);
                if let Some(m) = messages.iter().find(|m| m.starts_with(&prefix)) {
                    failed.insert(s.spec.name.clone(), m.clone());
                }
            }
        }
        Err(e) => panic!("{e}"),
    }
    failed
}
