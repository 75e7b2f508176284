//! Every model of the catalogue against every acquisition and policy of the catalogue, end
//! to end in smoke mode: where the model declares every capability the policy requires the
//! run must succeed; where it lacks one, validation must refuse the spec before anything
//! runs, naming the policy, the capability and the model.
//!
//! Nothing is listed by hand. Models, acquisitions and policies come from the catalogue with
//! their registered examples; each policy's problem is the first of a few small settings
//! (a plain continuous problem with a known cost and a log-GP cost model, a control-set
//! problem with known costs, one with unknown costs, a Markov path) on which it runs with
//! `exact_gp`, which offers every capability, so a new policy is covered as soon as it
//! registers and a policy that fits none of the settings fails the test. A model whose own
//! validation rejects a setting (the bump-scaled GP is one-dimensional) does not apply to
//! the policies homed there; `exact_gp` and `random_feature_gp` must apply everywhere. A
//! last column runs every entry on its setting with four asynchronous workers (`exact_gp`):
//! every policy must decide with points pending, and a setting with control sets must
//! refuse several workers.

mod common;

use cabo_core::registry::{self, Kind};
use cabo_core::{Capabilities, Requirements};
use cabo_runner::LoadedSpec;
use common::{Entry, catalogue_entries, parse, run_all, spec_text};
use std::collections::BTreeMap;

/// The settings a policy may need, as spec fragments, in the order they are tried.
const SETTINGS: [(&str, &str); 4] = [
    (
        "plain",
        "problem: { type: ackley, dim: 1 }
cost: { type: linear_mean, scale: 1, offset: 1 }
cost_model: { type: log_gp, kernel: { type: matern52 }, fit: map, prior: gamma, standardize: true }
budget: { cost: 4 }
initial_design: { points: 3 }
",
    ),
    (
        "control sets",
        "problem: { type: cvs, objective: { type: hartmann3 }, control_sets: [[0], [1], [2], [0, 1, 2]], costs: [0.1, 0.1, 0.1, 1.0], distribution: { type: truncated_normal, variance: 0.02 }, noise_std: 0.01, value_samples: 16, optimum: { raw_samples: 16, restarts: 1, max_iters: 5 } }
budget: { iterations: 2 }
initial_design: { type: random, points: 4 }
",
    ),
    (
        "control sets, unknown costs",
        "problem: { type: cvs, objective: { type: hartmann3 }, control_sets: [[0], [1], [2], [0, 1, 2]], costs: [0.1, 0.1, 0.1, 1.0], unknown_costs: { sd: 0.01, min: 0.001, max: 2.0 }, distribution: { type: truncated_normal, variance: 0.02 }, noise_std: 0.01, alpha: 0.1, value_samples: 16, optimum: { raw_samples: 16, restarts: 1, max_iters: 5 } }
budget: { iterations: 2 }
initial_design: { type: random, points: 4 }
",
    ),
    (
        "markov path",
        "problem: { type: markov_path, prior: { type: brownian, scale: 1.0 }, x_levels: 9, y_levels: 15, y_min: -3.0, y_max: 3.0, cost: 0.01 }
budget: { iterations: 2 }
initial_design: { points: 0 }
",
    ),
];

/// The model every policy's setting is found with: it offers every capability.
const REFERENCE: &str = "exact_gp";

/// The quickstart's problem (`specs/quickstart.yaml`) with a cost budget of its smoke size,
/// where the k = 4 column runs the entries of the plain setting.
const QUICKSTART: &str = "problem: { type: ackley, dim: 2 }
cost: { type: linear_mean, scale: 20, offset: 0.05 }
cost_model: { type: log_gp, kernel: { type: matern52 }, fit: map, prior: gamma, standardize: true }
budget: { cost: 40 }
initial_design: { points: 3 }
";

/// The column of four asynchronous workers, with the reference model.
const K4: &str = "exact_gp, k = 4";

/// What the k = 4 column found: a cell per entry, and the failures.
struct Column<'a> {
    cells: Vec<(&'a str, String)>,
    failures: Vec<String>,
}

/// Every entry on its own setting (the plain one as the quickstart's problem) with the
/// reference model and `workers: 4`: it must run,
/// deciding with the other workers' points pending, except on a setting with control sets,
/// whose validation must refuse several workers and say why. Every entry runs with sampled
/// fantasies too, every acquisition with local penalisation, and every whole policy must
/// refuse local penalisation.
fn with_four_workers<'a>(
    entries: &'a [Entry],
    home: &BTreeMap<&'a str, (usize, Requirements)>,
    model: &str,
    out: &std::path::Path,
) -> Column<'a> {
    let mut column = Column {
        cells: Vec::new(),
        failures: Vec::new(),
    };
    let mut batch = Vec::new();
    for e in entries {
        let Some(&(si, _)) = home.get(e.name) else {
            continue;
        };
        let (setting_name, setting) = SETTINGS[si];
        let name = format!("matrix-{}-k4", e.name);
        // The plain setting becomes the quickstart's problem: Ackley in 2-D with its cost.
        let setting = match setting_name {
            "plain" => QUICKSTART.to_string(),
            _ => setting.to_string(),
        };
        let setting = format!("{setting}workers: 4\n");
        let control_sets = setting_name.starts_with("control sets");
        let refusal = |m: &str| m.contains("has control sets") && m.contains("`workers: 1`");
        match parse(
            &name,
            &spec_text(&setting, model, e.key(), e.example, &name),
        ) {
            Ok(_) if control_sets => column.failures.push(format!(
                "{} validates with control sets and 4 workers, which must be refused",
                e.name
            )),
            Ok(loaded) => batch.push((e.name, setting_name, loaded)),
            Err(m) if control_sets && refusal(&m) => {
                column.cells.push((e.name, "refused: control sets".into()))
            }
            Err(m) => column
                .failures
                .push(format!("{} with 4 workers: {m}", e.name)),
        }
        if !control_sets {
            for (rule, suffix) in [("sampled_fantasies", "sf"), ("local_penalization", "lp")] {
                let name = format!("matrix-{}-k4-{suffix}", e.name);
                let setting = setting.replace(
                    "workers: 4\n",
                    &format!("workers: {{ count: 4, pending: {rule} }}\n"),
                );
                let text = spec_text(&setting, model, e.key(), e.example, &name);
                let whole = e.key() == "policy" && rule == "local_penalization";
                match (whole, parse(&name, &text)) {
                    (false, Ok(loaded)) => batch.push((e.name, setting_name, loaded)),
                    (false, Err(m)) => column.failures.push(format!("{} with {rule}: {m}", e.name)),
                    (true, Ok(_)) => column.failures.push(format!(
                        "policy {} validates with local penalisation, which needs an acquisition",
                        e.name
                    )),
                    (true, Err(m))
                        if m.contains("local penalisation multiplies an acquisition") => {}
                    (true, Err(m)) => column.failures.push(format!(
                        "policy {} is refused local penalisation without saying why: {m}",
                        e.name
                    )),
                }
            }
        }
    }
    let specs: Vec<LoadedSpec> = batch.iter().map(|b| b.2.clone()).collect();
    let failed = run_all(&specs, &out.join("k4"));
    let mut ran: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (entry, setting_name, loaded) in &batch {
        match failed.get(&loaded.spec.name) {
            None => ran
                .entry(entry)
                .or_default()
                .push(match loaded.spec.name.rsplit('-').next() {
                    Some("lp") => "penalised",
                    Some("sf") => "sampled",
                    _ => "runs",
                }),
            Some(m) => column.failures.push(format!(
                "{entry} failed with 4 workers on {setting_name}: {m}"
            )),
        }
    }
    for (entry, how) in ran {
        column.cells.push((entry, how.join(", ")));
    }
    column
}

fn requirements(loaded: &LoadedSpec) -> Requirements {
    let entry = &loaded.spec.policies[0];
    match (&entry.acquisition, &entry.policy) {
        (Some(a), _) => a.requires(),
        (_, Some(p)) => p.requires(),
        _ => Requirements::NONE,
    }
}

// One test because its phases feed each other: the first finds each policy's setting with
// the reference model, the second tries every other model on that setting (or marks it not
// applicable), and the matrix printed at the end holds what both found. Each phase runs all
// its specs as one parallel batch (`run_all`), which tests per policy or per model would
// give up.
#[test]
fn every_policy_runs_with_every_model_offering_what_it_needs_and_is_refused_otherwise() {
    cabo::init().expect("plugins registered");
    let catalogue = registry::catalogue();
    let models: Vec<(&str, &str)> = catalogue
        .iter()
        .filter(|p| p.kind == Kind::Model)
        .map(|p| (p.name, p.example_yaml))
        .collect();
    for needed in [REFERENCE, "random_feature_gp"] {
        assert!(
            models.iter().any(|m| m.0 == needed),
            "{needed} is not registered"
        );
    }
    let entries: Vec<Entry> = catalogue_entries();
    let model_yaml = |name: &str| models.iter().find(|m| m.0 == name).unwrap().1;
    let out = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    // Each entry's setting, and what it requires, found with the reference model.
    let mut home: BTreeMap<&str, (usize, Requirements)> = BTreeMap::new();
    let mut tried: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for (si, (setting_name, setting)) in SETTINGS.iter().enumerate() {
        let mut batch = Vec::new();
        for e in entries.iter().filter(|e| !home.contains_key(e.name)) {
            let name = format!("matrix-{}-{REFERENCE}", e.name);
            let text = spec_text(setting, model_yaml(REFERENCE), e.key(), e.example, &name);
            match parse(&name, &text) {
                Ok(loaded) => batch.push((e.name, loaded)),
                Err(m) => tried
                    .entry(e.name)
                    .or_default()
                    .push(format!("{setting_name}: {m}")),
            }
        }
        let specs: Vec<LoadedSpec> = batch.iter().map(|b| b.1.clone()).collect();
        let failed = run_all(&specs, &out.path().join(format!("setting-{si}")));
        for (name, loaded) in &batch {
            match failed.get(&loaded.spec.name) {
                Some(m) => tried
                    .entry(name)
                    .or_default()
                    .push(format!("{setting_name}: {m}")),
                None => {
                    home.insert(name, (si, requirements(loaded)));
                }
            }
        }
    }
    for e in &entries {
        if !home.contains_key(e.name) {
            failures.push(format!(
                "{} `{}` runs in none of the settings with {REFERENCE}:\n    {}",
                e.kind,
                e.name,
                tried
                    .get(e.name)
                    .map(|t| t.join("\n    "))
                    .unwrap_or_default()
            ));
        }
    }
    // Every other model on each entry's setting.
    let mut matrix: BTreeMap<(&str, &str), String> = BTreeMap::new();
    for name in home.keys() {
        matrix.insert((name, REFERENCE), "runs".into());
    }
    let mut batch = Vec::new();
    for &(model, yaml) in models.iter().filter(|m| m.0 != REFERENCE) {
        for (si, (setting_name, setting)) in SETTINGS.iter().enumerate() {
            // What the model declares, and whether it accepts the setting at all.
            let probe = format!("matrix-probe-{model}-{si}");
            let probe_text = spec_text(setting, yaml, "policy", "{ type: random_search }", &probe);
            let offered: Capabilities = match parse(&probe, &probe_text) {
                Ok(loaded) => loaded.spec.model.as_ref().unwrap().capabilities(),
                Err(m) => {
                    if model == "random_feature_gp" {
                        failures.push(format!("{model} rejects the setting {setting_name}: {m}"));
                    }
                    for e in entries
                        .iter()
                        .filter(|e| home.get(e.name).map(|h| h.0) == Some(si))
                    {
                        matrix.insert((e.name, model), format!("n/a ({setting_name})"));
                    }
                    continue;
                }
            };
            for e in entries
                .iter()
                .filter(|e| home.get(e.name).map(|h| h.0) == Some(si))
            {
                let name = format!("matrix-{}-{model}", e.name);
                let text = spec_text(setting, yaml, e.key(), e.example, &name);
                let missing = home[e.name].1.model.missing_from(offered);
                match (missing.first(), parse(&name, &text)) {
                    (None, Ok(loaded)) => batch.push((e.name, model, loaded)),
                    (None, Err(m)) => failures.push(format!(
                        "{model} declares every capability `{}` requires, yet the spec is \
                         refused: {m}",
                        e.name
                    )),
                    (Some(c), Ok(_)) => failures.push(format!(
                        "{model} lacks `{c}`, which `{}` requires, yet the spec validates",
                        e.name
                    )),
                    (Some(c), Err(m)) => {
                        let named = m.contains("policy \"P\"")
                            && m.contains(&format!("`{}`", e.name))
                            && m.contains(&format!("capability `{c}`"))
                            && m.contains(&format!("model `{model}` does not offer it"));
                        if !named {
                            failures.push(format!(
                                "{model} × {}: the refusal does not name the policy, the \
                                 capability `{c}` and the model: {m}",
                                e.name
                            ));
                        }
                        matrix.insert((e.name, model), format!("refused: {c}"));
                    }
                }
            }
        }
    }
    let specs: Vec<LoadedSpec> = batch.iter().map(|b| b.2.clone()).collect();
    let failed = run_all(&specs, &out.path().join("models"));
    for (entry, model, loaded) in &batch {
        match failed.get(&loaded.spec.name) {
            Some(m) => failures.push(format!(
                "{model} declares every capability `{entry}` requires, yet the run failed: {m}"
            )),
            None => {
                matrix.insert((entry, model), "runs".into());
            }
        }
    }
    let k4 = with_four_workers(&entries, &home, model_yaml(REFERENCE), out.path());
    for (entry, cell) in k4.cells {
        matrix.insert((entry, K4), cell);
    }
    failures.extend(k4.failures);
    // The matrix, for the test log.
    let columns: Vec<&str> = models.iter().map(|m| m.0).chain([K4]).collect();
    let mut table = format!("{:<16}", "");
    for m in &columns {
        table += &format!(" {m:<22}");
    }
    for e in &entries {
        table += &format!("\n{:<16}", e.name);
        for m in &columns {
            let cell = matrix.get(&(e.name, m)).map_or("-", String::as_str);
            table += &format!(" {cell:<22}");
        }
    }
    eprintln!("{table}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
