//! The regret reference of a report: where runs beat their problem's optimum search, every
//! run of that instance is measured against the best known value, one reference per
//! replication for every policy; where nothing beats it, the recorded regrets stand bit
//! for bit.

use cabo_report as report;
use cabo_runner::{LoadedSpec, RunOptions};
use std::path::Path;
use std::sync::atomic::AtomicBool;

fn load_plugins() {
    cabo_baselines::plugins();
    cabo_benchmarks::plugins();
    cabo_cvs::plugins();
    cabo_gp::plugins();
}

/// Three replications of EI and random search on a 2-D GP sample whose optimum search is
/// `search`.
fn spec(search: &str) -> LoadedSpec {
    load_plugins();
    let text = format!(
        "name: regret-reference
replications: 3
problem: {{ type: gp_prior_sample, dim: 2, kernel: {{ type: matern52, lengthscale: 0.2 }}, features: 256, optimum_search: {search} }}
budget: {{ iterations: 25 }}
initial_design: {{ type: sobol, points: 4 }}
model: {{ type: exact_gp, kernel: {{ type: matern52, lengthscale: 0.2, outputscale: 1.0 }}, fit: fixed, noise: 1.0e-4 }}
policies:
  - name: EI
    acquisition: {{ type: ei }}
  - name: Random
    policy: {{ type: random_search }}
optimizer: {{ raw_samples: 256, restarts: 4, max_iters: 100 }}
report: {{ x: iteration, y: log10_simple_regret }}
"
    );
    LoadedSpec::parse(Path::new("regret-reference.yaml"), &text, false).unwrap()
}

/// Runs `spec` into `out` and loads its report's runs.
fn run(spec: &LoadedSpec, out: &Path) -> (report::Runs, serde_json::Value) {
    let opts = RunOptions {
        out: out.to_path_buf(),
        report: false,
        ..RunOptions::default()
    };
    cabo_runner::run_specs(std::slice::from_ref(spec), &opts, &AtomicBool::new(false)).unwrap();
    let dir = out.join("regret-reference");
    let json = report::read_spec_json(&dir).unwrap();
    (report::load(&dir, &json, None).unwrap(), json)
}

/// Each run's (replication, final best value, final regret) as its completion marker
/// recorded them.
fn recorded(out: &Path) -> Vec<(usize, f64, f64)> {
    let mut v = Vec::new();
    for policy in ["EI", "Random"] {
        for r in 0..3 {
            let path = out.join(format!("regret-reference/{policy}/rep-{r}.json"));
            let m: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
            v.push((
                r,
                m["best_value"].as_f64().unwrap(),
                m["simple_regret"].as_f64().unwrap(),
            ));
        }
    }
    v
}

/// The final log10 regret of each run the report counts, by (policy, replication).
fn final_log_regret(runs: &report::Runs) -> Vec<((String, usize), f64)> {
    let report = runs.report(None).unwrap();
    runs.traces(&report)
        .into_iter()
        .map(|(p, t)| ((p.to_string(), t.replication), t.steps.last().unwrap().1))
        .collect()
}

#[test]
fn runs_past_a_weak_optimum_search_are_measured_against_one_best_known_value() {
    // A search of one point and one step: the runs find far better values.
    let out = tempfile::tempdir().unwrap();
    let (runs, _) = run(
        &spec("{ raw_samples: 1, restarts: 1, max_iters: 1 }"),
        out.path(),
    );
    let marks = recorded(out.path());
    assert!(
        marks.iter().filter(|m| m.2 == 0.0).count() >= 3,
        "the weak search should be beaten: {marks:?}"
    );
    let report = runs.report(None).unwrap();
    assert_eq!(
        report.references.raised.len(),
        3,
        "{:?}",
        report.references.raised
    );
    let finals = final_log_regret(&runs);
    for ((policy, r), log_regret) in &finals {
        // Above −300 (the floor of log10 0) by far: the ascent passes every run's best.
        assert!(*log_regret > -12.0, "{policy} {r}: {log_regret}");
        let raised = report
            .references
            .raised
            .iter()
            .find(|x| x.replication == *r)
            .unwrap();
        let best = marks
            .iter()
            .filter(|m| m.0 == *r)
            .map(|m| m.1)
            .fold(f64::NEG_INFINITY, f64::max);
        assert!(raised.reference > best, "{raised:?} vs best {best}");
        // One reference for both policies: regret + best value is the reference.
        let mine = marks
            .iter()
            .zip(["EI", "EI", "EI", "Random", "Random", "Random"])
            .find(|(m, p)| m.0 == *r && *p == policy)
            .map(|(m, _)| m.1)
            .unwrap();
        let regret = 10f64.powf(*log_regret);
        assert!(
            (regret + mine - raised.reference).abs() < 1e-9 * raised.reference.abs().max(1.0),
            "{policy} {r}: {regret} + {mine} vs {}",
            raised.reference
        );
    }
}

#[test]
fn where_no_run_beats_a_thorough_search_the_recorded_regrets_stand() {
    let out = tempfile::tempdir().unwrap();
    let (runs, _) = run(
        &spec("{ raw_samples: 4096, restarts: 64, max_iters: 200 }"),
        out.path(),
    );
    let report = runs.report(None).unwrap();
    assert!(
        report.references.raised.is_empty(),
        "{:?}",
        report.references.raised
    );
    let marks = recorded(out.path());
    let finals = final_log_regret(&runs);
    assert_eq!(finals.len(), marks.len());
    for (((policy, r), log_regret), (mr, _, regret)) in finals.iter().zip(&marks) {
        assert_eq!(r, mr);
        assert_eq!(
            log_regret.to_bits(),
            regret.max(1e-300).log10().to_bits(),
            "{policy} {r}"
        );
    }
}

#[test]
fn an_exact_optimum_reached_is_a_regret_of_zero() {
    // Pandora's boxes: a finite domain whose optimum is the best reward drawn, exactly.
    // Random search opens all three boxes, so every run reaches it; nothing is raised and
    // the regret stays 0, not an ascent's value.
    load_plugins();
    let text = "name: regret-reference
replications: 2
problem: { type: pandora, boxes: [{ cost: 1, reward: { type: normal, mean: 0, std: 1 } }, { cost: 1, reward: { type: normal, mean: 0, std: 1 } }, { cost: 1, reward: { type: normal, mean: 0, std: 1 } }] }
budget: { iterations: 2 }
initial_design: { type: sobol, points: 1 }
policies:
  - name: Random
    policy: { type: random_search }
report: { x: iteration, y: simple_regret }
";
    let spec = LoadedSpec::parse(Path::new("regret-reference.yaml"), text, false).unwrap();
    let out = tempfile::tempdir().unwrap();
    let (runs, _) = run(&spec, out.path());
    let report = runs.report(None).unwrap();
    assert_eq!(report.references, report::reference::References::default());
    let finals: Vec<f64> = runs
        .traces(&report)
        .into_iter()
        .map(|(_, t)| t.steps.last().unwrap().1)
        .collect();
    assert_eq!(finals, vec![0.0, 0.0]);
}

#[test]
fn plays_past_a_weak_search_of_the_control_sets_optima_are_measured_by_an_ascent_in_their_set() {
    // Seed 002's problem with each set's optimum searched from one point for one step: the
    // plays beat it, and the ascent within the set each run's best play used passes them.
    // No set holds every variable (that one would take Hartmann-3's known optimum).
    load_plugins();
    let text = "name: regret-reference
replications: 2
problem: { type: cvs, objective: { type: hartmann3 }, control_sets: [[0], [1], [2], [0, 1]], costs: [0.1, 0.1, 0.1, 0.2], distribution: { type: truncated_normal, variance: 0.02 }, value_samples: 16, optimum: { raw_samples: 1, restarts: 1, max_iters: 1 } }
budget: { cost: 3 }
initial_design: { type: random, points: 3 }
model: { type: exact_gp, kernel: { type: rbf, lengthscale: 0.1, outputscale: 1.0 }, fit: fixed, noise: 1.0e-4 }
policies:
  - name: UCB-PSQ
    policy: { type: ucb_psq, beta: 2.0 }
  - name: ETC-50
    policy: { type: cvs_etc, plays: 50 }
optimizer: { raw_samples: 16, restarts: 2, max_iters: 20 }
report: { x: cumulative_cost, y: simple_regret }
";
    let spec = LoadedSpec::parse(Path::new("regret-reference.yaml"), text, false).unwrap();
    let out = tempfile::tempdir().unwrap();
    let (runs, _) = run(&spec, out.path());
    let mut marks = Vec::new();
    for policy in ["UCB-PSQ", "ETC-50"] {
        for r in 0..2 {
            let path = out
                .path()
                .join(format!("regret-reference/{policy}/rep-{r}.json"));
            let m: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
            let best = m["best_value"].as_f64().unwrap();
            marks.push((
                (policy.to_string(), r),
                best,
                m["simple_regret"].as_f64().unwrap(),
            ));
        }
    }
    let report = runs.report(None).unwrap();
    assert_eq!(report.references.unchecked, None);
    let raised = &report.references.raised;
    // Every instance where a play reached the search's value has its reference raised.
    for ((_, r), _, regret) in &marks {
        if *regret == 0.0 {
            assert!(
                raised.iter().any(|x| x.replication == *r),
                "{marks:?} {raised:?}"
            );
        }
    }
    assert!(
        !raised.is_empty(),
        "the weak search should be beaten: {marks:?}"
    );
    let traces = runs.traces(&report);
    assert_eq!(traces.len(), marks.len());
    for (policy, trace) in traces {
        let key = (policy.to_string(), trace.replication);
        let (_, best, recorded) = marks.iter().find(|m| m.0 == key).unwrap();
        let regret = trace.steps.last().unwrap().1;
        match raised.iter().find(|x| x.replication == trace.replication) {
            Some(x) => {
                assert!(x.reference > x.search.unwrap_or(f64::NEG_INFINITY));
                assert!(regret > 0.0, "{key:?}: {regret}");
                assert!(
                    (regret + best - x.reference).abs() < 1e-9 * x.reference.abs().max(1.0),
                    "{key:?}: {regret} + {best} vs {}",
                    x.reference
                );
            }
            None => assert_eq!(regret.to_bits(), recorded.to_bits(), "{key:?}"),
        }
    }
}
