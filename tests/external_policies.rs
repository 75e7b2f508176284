//! Every acquisition and policy of the catalogue against an external program (the Python
//! Branin of `examples/branin/objective.py`), end to end in smoke mode with the exact GP.
//!
//! The settings cover what the policies need of a problem: costs the program reports
//! (learned by a log-GP cost model), a known cost from the spec's `cost:`, and control sets
//! with known or reported costs, for which cabo draws the open variables and sends full
//! points. Each entry is tried in every setting and must run in at least one; only the Markov policies, which need the
//! `markov_path` problem's prior, may not, and they must be refused at validation. The
//! table of the settings each entry ran in is printed for the test log.
//! Skipped with a printed reason where `python3` is missing.

mod common;

use common::{Entry, catalogue_entries, parse, run_all, spec_text};
use std::collections::BTreeMap;

const PROBLEM: &str = "type: external, command: [python3, examples/branin/objective.py], \
                       bounds: [[-5, 10], [0, 15]], optimum: -0.39788735772973816";

/// The settings, in the order they are tried.
fn settings() -> [(&'static str, String); 4] {
    [
        (
            "reported costs",
            format!(
                "problem: {{ {PROBLEM}, cost: reported }}
cost_model: {{ type: log_gp, kernel: {{ type: matern52 }}, fit: map, prior: gamma, standardize: true }}
budget: {{ cost: 25 }}
initial_design: {{ points: 3 }}
"
            ),
        ),
        (
            "known cost",
            format!(
                "problem: {{ {PROBLEM}, cost: none }}
cost: {{ type: linear_mean, scale: 1, offset: 1 }}
cost_model: {{ type: known }}
budget: {{ cost: 8 }}
initial_design: {{ points: 3 }}
"
            ),
        ),
        (
            "control sets, known costs",
            format!(
                "problem: {{ {PROBLEM}, cost: none, control_sets: [[0], [1], [0, 1]], costs: [0.1, 0.2, 1.0], distribution: {{ type: truncated_normal, variance: 0.02 }} }}
budget: {{ iterations: 2 }}
initial_design: {{ type: random, points: 4 }}
"
            ),
        ),
        (
            "control sets, reported costs",
            format!(
                "problem: {{ {PROBLEM}, cost: reported, control_sets: [[0], [1], [0, 1]], distribution: {{ type: truncated_normal, variance: 0.02 }} }}
budget: {{ iterations: 2 }}
initial_design: {{ type: random, points: 4 }}
"
            ),
        ),
    ]
}

/// Policies that need a problem the external one cannot be: the Markov DP's prior.
const NEED_ANOTHER_PROBLEM: [&str; 2] = ["markov_dp", "markov_one_step"];

#[test]
fn every_policy_runs_against_an_external_program() {
    if std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("skipped: python3 is not installed, and the objective is a Python program");
        return;
    }
    cabo::init().expect("plugins registered");
    let model = "{ type: exact_gp, kernel: { type: matern52 }, fit: map, prior: gamma, \
                 noise: { min: 1.0e-6, max: 1.0e-2 }, standardize: true }";
    let entries: Vec<Entry> = catalogue_entries();
    let out = tempfile::tempdir().unwrap();
    let mut home: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let mut tried: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for (si, (setting_name, setting)) in settings().iter().enumerate() {
        let mut batch = Vec::new();
        for e in &entries {
            let name = format!("external-{}-{si}", e.name);
            let text = spec_text(setting, model, e.key(), e.example, &name);
            match parse(&name, &text) {
                Ok(loaded) => batch.push((e.name, loaded)),
                Err(m) => tried.entry(e.name).or_default().push(m),
            }
        }
        let specs: Vec<_> = batch.iter().map(|b| b.1.clone()).collect();
        let failed = run_all(&specs, &out.path().join(format!("setting-{si}")));
        for (name, loaded) in &batch {
            match failed.get(&loaded.spec.name) {
                Some(m) => tried.entry(name).or_default().push(m.clone()),
                None => home.entry(name).or_default().push(setting_name),
            }
        }
    }
    let mut failures = Vec::new();
    let mut table = String::new();
    for e in &entries {
        let ran = home.get(e.name);
        let cell = ran.map_or("-".to_string(), |r| r.join("; "));
        table += &format!("\n{:<18} {cell}", e.name);
        match (ran, NEED_ANOTHER_PROBLEM.contains(&e.name)) {
            (Some(_), false) => {}
            (None, false) => failures.push(format!(
                "`{}` runs in no external setting:\n    {}",
                e.name,
                tried
                    .get(e.name)
                    .map(|t| t.join("\n    "))
                    .unwrap_or_default()
            )),
            (Some(s), true) => failures.push(format!("`{}` ran in {s:?}", e.name)),
            (None, true) => {
                // Refused before anything ran, in every setting, with a message.
                let t = &tried[e.name];
                if t.len() != settings().len() || t.iter().any(|m| m.contains("no complete run")) {
                    failures.push(format!("`{}` was not refused cleanly: {t:?}", e.name));
                }
            }
        }
    }
    eprintln!("policy             ran with{table}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
