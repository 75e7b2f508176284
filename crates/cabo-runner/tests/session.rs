//! The ask/tell session: the initial design first, decisions made once whether asked or
//! replayed, known and missing costs, the budget's end, bad points, and `ask_many` leaving
//! the session as it was.

use cabo_benchmarks::bump_model::BumpScaledGpSpec;
use cabo_core::{Phase, Posterior, Query, TrainingData};
use cabo_engine::session::{Session, Suggested, Suggestion};
use cabo_runner::LoadedSpec;
use std::path::Path;

fn load_plugins() {
    cabo_baselines::plugins();
    cabo_benchmarks::plugins();
    cabo_gp::plugins();
    cabo_pbgi::plugins();
}

/// A 2-D Branin on `[0, 8] × [0, 16]` with a known cost, `budget` and `design`.
fn spec_with(budget: &str, design: &str) -> LoadedSpec {
    load_plugins();
    let text = spec_text_with(budget, design);
    LoadedSpec::parse(Path::new("session-test.yaml"), &text, false).unwrap()
}

/// The text of [`spec_with`]'s spec.
fn spec_text_with(budget: &str, design: &str) -> String {
    format!(
        "name: session-test
replications: 1
problem: {{ type: branin, bounds: [[0, 8], [0, 16]] }}
cost: {{ type: linear_mean, scale: 2, offset: 0.5 }}
budget: {budget}
initial_design: {design}
model: {{ type: exact_gp, kernel: {{ type: matern52 }}, fit: map, prior: gamma, standardize: true }}
cost_model: {{ type: known }}
policies:
  - name: EI
    acquisition: {{ type: ei }}
  - name: PBGI-D
    policy: {{ type: pbgi_decay, lambda0: 0.1, beta: 0.5 }}
optimizer: {{ raw_samples: 32, restarts: 2, max_iters: 30 }}
"
    )
}

/// [`spec_with`] three free initial points.
fn spec(budget: &str) -> LoadedSpec {
    spec_with(budget, "{ type: sobol, points: 3 }")
}

/// Branin in native units, maximised (cabo's form): the "experiment".
fn branin(x: &[f64]) -> f64 {
    let pi = std::f64::consts::PI;
    let (b, c, t) = (5.1 / (4.0 * pi * pi), 5.0 / pi, 1.0 / (8.0 * pi));
    let (x1, x2) = (x[0] - 5.0, x[1]);
    -((x2 - b * x1 * x1 + c * x1 - 6.0).powi(2) + 10.0 * (1.0 - t) * x1.cos() + 10.0)
}

fn point(s: Suggestion) -> Suggested {
    match s {
        Suggestion::Evaluate(p) => p,
        Suggestion::Done(reason) => panic!("expected a point, the session is done: {reason}"),
    }
}

/// Asks and tells `n` times, evaluating `branin` at every suggestion.
fn drive(session: &mut Session, n: usize) -> Vec<Suggested> {
    (0..n)
        .map(|_| {
            let p = point(session.ask().unwrap());
            session.tell(&p.x, branin(&p.x), None).unwrap();
            p
        })
        .collect()
}

#[test]
fn the_initial_design_comes_first_then_numbered_decisions() {
    let spec = spec("{ iterations: 4 }");
    let mut s = Session::new(&spec, "EI", 0).unwrap();
    assert_eq!(s.input_names(), ["x0", "x1"]);
    assert_eq!(s.native_bounds(), [(0.0, 8.0), (0.0, 16.0)]);
    assert_eq!(s.initial_design_len(), 3);
    let first = point(s.ask().unwrap());
    assert_eq!(
        point(s.ask().unwrap()),
        first,
        "asking again changes nothing"
    );
    let points = drive(&mut s, 5);
    assert_eq!(points[0], first);
    let phases: Vec<Phase> = points.iter().map(|p| p.phase).collect();
    assert_eq!(phases[..3], [Phase::Initial; 3]);
    assert_eq!(phases[3..], [Phase::Policy; 2]);
    let iterations: Vec<Option<usize>> = points.iter().map(|p| p.iteration).collect();
    assert_eq!(iterations, [None, None, None, Some(1), Some(2)]);
    for (i, p) in points.iter().enumerate() {
        assert_eq!(p.evaluation, i);
        assert_eq!(p.x[0], 8.0 * p.unit[0]);
        assert_eq!(p.x[1], 16.0 * p.unit[1]);
    }
    assert!(points[3].diagnostics.contains_key("acq_value"));
    // The design is free; the two policy evaluations are charged.
    assert_eq!(s.budget().iterations, 2);
    let costs = s.observations().costs();
    assert_eq!(s.budget().spent, costs[3] + costs[4]);
}

/// Asking before telling and telling without asking make the same decisions: a session
/// told observations it never asked for replays the decisions before them, so its models
/// are warm-started and PBGI-D's λ decays exactly as in a session that asked (without the
/// replay, the exact GP's warm starts differ and so do the next points).
#[test]
fn asked_and_replayed_sessions_decide_alike() {
    let spec = spec("{ iterations: 5 }");
    for policy in ["EI", "PBGI-D"] {
        let mut asked = Session::new(&spec, policy, 0).unwrap();
        let points = drive(&mut asked, 7);
        let mut replayed = Session::new(&spec, policy, 0).unwrap();
        for p in &points {
            replayed.tell(&p.x, branin(&p.x), None).unwrap();
        }
        assert_eq!(
            point(replayed.ask().unwrap()),
            point(asked.ask().unwrap()),
            "{policy}"
        );
    }
}

#[test]
fn ask_many_fantasises_on_a_copy_and_leaves_the_session_alone() {
    let spec = spec("{ iterations: 5 }");
    let mut s = Session::new(&spec, "PBGI-D", 0).unwrap();
    drive(&mut s, 4);
    let many: Vec<Suggested> = s.ask_many(3).unwrap().into_iter().map(point).collect();
    assert_eq!(
        many.iter().map(|p| p.pending).collect::<Vec<_>>(),
        [0, 1, 2]
    );
    assert_eq!(
        many.iter().map(|p| p.evaluation).collect::<Vec<_>>(),
        [4, 5, 6]
    );
    assert_ne!(many[0].unit, many[1].unit);
    let next = point(s.ask().unwrap());
    assert_eq!(next, many[0]);
    // Telling the real outcome continues as a session that never asked for more.
    s.tell(&next.x, branin(&next.x), None).unwrap();
    let mut plain = Session::new(&spec, "PBGI-D", 0).unwrap();
    drive(&mut plain, 5);
    assert_eq!(point(s.ask().unwrap()), point(plain.ask().unwrap()));
}

#[test]
fn costs_are_known_or_required() {
    let spec = spec("{ iterations: 3 }");
    let mut s = Session::new(&spec, "EI", 0).unwrap();
    assert!(s.cost_is_known());
    s.tell(&[1.0, 2.0], -10.0, None).unwrap();
    // linear_mean: c(x) = scale · (offset + mean unit x) = 2 · (0.5 + (1/8 + 2/16) / 2).
    assert_eq!(s.observations().costs(), [2.0 * (0.5 + 0.125)]);
    s.tell(&[1.0, 2.0], -10.0, Some(7.0)).unwrap();
    assert_eq!(s.observations().costs()[1], 7.0);
    for bad in [0.0, -1.0, f64::INFINITY] {
        let e = s
            .tell(&[1.0, 2.0], -10.0, Some(bad))
            .unwrap_err()
            .to_string();
        assert!(e.contains("a cost must be a finite positive number"), "{e}");
    }

    let unknown = LoadedSpec::parse(
        Path::new("unknown-cost.yaml"),
        "name: unknown-cost\nreplications: 1\nproblem: { type: branin }\nbudget: { cost: 10 }\n\
         initial_design: { type: sobol, points: 2 }\nmodel: { type: exact_gp, kernel: { type: \
         matern52 } }\ncost_model: { type: log_gp, kernel: { type: matern52 } }\npolicies:\n  \
         - name: EIPC\n    acquisition: { type: ei_per_cost }\n",
        false,
    )
    .unwrap();
    let mut s = Session::new(&unknown, "EIPC", 0).unwrap();
    assert!(!s.cost_is_known());
    let e = s.tell(&[1.0, 2.0], -10.0, None).unwrap_err().to_string();
    assert!(e.contains("the cost is missing"), "{e}");
    assert!(
        s.observations().is_empty(),
        "a refused observation is not kept"
    );
}

#[test]
fn bad_points_are_refused_with_the_input_named() {
    let spec = spec("{ iterations: 3 }");
    let mut s = Session::new(&spec, "EI", 0).unwrap();
    let e = s.tell(&[1.0, 17.0], -1.0, None).unwrap_err().to_string();
    assert!(
        e.contains("input `x1`: 17 is outside the problem's range [0, 16]"),
        "{e}"
    );
    let e = s.tell(&[1.0], -1.0, None).unwrap_err().to_string();
    assert!(
        e.contains("the point has 1 coordinates, the problem 2"),
        "{e}"
    );
    let e = s
        .tell(&[f64::NAN, 1.0], -1.0, None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("input `x0`: NaN is not a finite number"), "{e}");
    let e = s.tell(&[1.0, 1.0], f64::NAN, None).unwrap_err().to_string();
    assert!(e.contains("y = NaN is not a finite number"), "{e}");
    assert!(s.observations().is_empty());
    // The range's ends are inside it.
    s.tell(&[0.0, 16.0], -1.0, None).unwrap();
    assert_eq!(s.observations().observations()[0].outcome.x, [0.0, 1.0]);
}

#[test]
fn a_spent_budget_ends_the_session_without_a_decision() {
    let spec = spec("{ cost: 2.5 }");
    let mut s = Session::new(&spec, "EI", 0).unwrap();
    drive(&mut s, 3);
    let mut told = 3;
    let reason = loop {
        match s.ask().unwrap() {
            Suggestion::Evaluate(p) => {
                s.tell(&p.x, branin(&p.x), None).unwrap();
                told += 1;
                assert!(
                    told < 20,
                    "a cost budget of 2.5 ends within a few evaluations"
                );
            }
            Suggestion::Done(reason) => break reason,
        }
    };
    assert!(reason.contains("the budget is spent"), "{reason}");
    assert!(s.budget().spent >= 2.5);
    // Observations told after the end are kept as data.
    s.tell(&[4.0, 4.0], -5.0, None).unwrap();
    assert_eq!(s.observations().len(), told + 1);
    assert!(matches!(s.ask().unwrap(), Suggestion::Done(_)));
    assert!(matches!(
        s.ask_many(3).unwrap().as_slice(),
        [Suggestion::Done(_)]
    ));
}

#[test]
fn a_counted_initial_design_is_charged() {
    let mut free = Session::new(&spec("{ cost: 100 }"), "EI", 0).unwrap();
    drive(&mut free, 3);
    assert_eq!(free.budget().spent, 0.0);
    let counted = spec_with("{ cost: 100 }", "{ type: sobol, points: 3, counts: true }");
    let mut s = Session::new(&counted, "EI", 0).unwrap();
    drive(&mut s, 3);
    let costs = s.observations().costs();
    assert_eq!(s.budget().spent, costs.iter().sum::<f64>());
}

/// Seed 000's counterexamples start from one point at the domain's lower corner.
#[test]
fn a_corner_design_is_one_point_at_the_lower_corner() {
    let spec = spec_with("{ iterations: 2 }", "{ type: corner, points: 1 }");
    let mut s = Session::new(&spec, "EI", 0).unwrap();
    assert_eq!(s.initial_design_len(), 1);
    let points = drive(&mut s, 2);
    assert_eq!(points[0].phase, Phase::Initial);
    assert_eq!(points[0].unit, [0.0, 0.0]);
    assert_eq!(points[0].x, [0.0, 0.0], "native lower bounds");
    assert_eq!(points[1].phase, Phase::Policy);
    load_plugins();
    let text = spec_text_with("{ iterations: 2 }", "{ type: corner, points: 3 }");
    let e = LoadedSpec::parse(Path::new("session-test.yaml"), &text, false)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("initial_design.points") && e.contains("points: 1"),
        "{e}"
    );
}

#[test]
fn an_unknown_policy_is_refused_with_the_closest_name() {
    let spec = spec("{ iterations: 3 }");
    let e = Session::new(&spec, "PBGI-d", 0).unwrap_err().to_string();
    assert!(
        e.contains("no policy \"PBGI-d\"; did you mean \"PBGI-D\"?"),
        "{e}"
    );
}

/// Reads a spec of the repository's `specs/` directory in full.
fn repository_spec(path: &str) -> LoadedSpec {
    load_plugins();
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path);
    LoadedSpec::load(&path, false).unwrap()
}

/// Empirical mean of y² at unit point `x` over the problems of replications `0..n`: the
/// prior variance of a zero-mean objective.
fn second_moment(spec: &LoadedSpec, x: f64, n: u64) -> f64 {
    (0..n)
        .map(|seed| {
            let problem = spec.spec.problem.build(seed).unwrap();
            problem.evaluate(&Query::at(vec![x]), 0).unwrap().y.powi(2)
        })
        .sum::<f64>()
        / n as f64
}

/// The counterexamples run in the authors' setting (PandoraBayesOpt
/// `scripts/variable_amplitude.py`): one initial point at x = 0 (l.127); the objective is a
/// prior draw times a(x), so its standard deviation is a: 0.01 (Fig. 2) or 0.81 (Fig. 8) far
/// from the bump and 1 at it (l.64-69, 85-89), while the model's prior standard deviation is
/// √a (kernel.py l.30-40); the cost is 0.1 far from the bump and 10 on it (l.71-77).
#[test]
fn the_counterexample_specs_are_the_authors_setting() {
    for (path, far_std, model_far_std) in [
        ("specs/pbgi/eipc-counterexample.yaml", 0.01_f64, 0.1),
        ("specs/pbgi/ei-counterexample.yaml", 0.81, 0.9),
    ] {
        let spec = repository_spec(path);
        let mut s = Session::new(&spec, "PBGI", 0).unwrap();
        assert_eq!(s.initial_design_len(), 1, "{path}");
        assert_eq!(point(s.ask().unwrap()).unit, [0.0], "{path}");
        // Far from the bump (x = 0.25, about 760 bump widths away) and at its centre.
        let n = 2000;
        // The standard error of a variance estimate is σ²·√(2/n) ≈ 0.032 σ².
        let far = second_moment(&spec, 0.25, n);
        assert!(
            (far / far_std.powi(2) - 1.0).abs() < 4.0 * 0.032,
            "{path}: far variance {far}"
        );
        let centre = second_moment(&spec, 0.5, n);
        assert!(
            (centre - 1.0).abs() < 4.0 * 0.032,
            "{path}: centre {centre}"
        );
        let problem = spec.spec.problem.build(0).unwrap();
        let cost = |x: f64| problem.evaluate(&Query::at(vec![x]), 0).unwrap().cost;
        assert!((cost(0.25) - 0.1).abs() < 1e-12 && (cost(0.5) - 10.0).abs() < 1e-12);
        // The model is the authors' amplitude kernel: prior variance a(x).
        let mut model = serde_json::to_value(spec.spec.model.as_ref().unwrap()).unwrap();
        model.as_object_mut().unwrap().remove("type");
        let model: BumpScaledGpSpec = serde_json::from_value(model).unwrap();
        let prior = model
            .model()
            .unwrap()
            .posterior(TrainingData {
                dim: 1,
                x: &[],
                y: &[],
            })
            .unwrap();
        let var = |x: f64| prior.mean_var(&[x]).var;
        assert!((var(0.25).sqrt() - model_far_std).abs() < 1e-12, "{path}");
        assert!((var(0.5) - 1.0).abs() < 1e-12, "{path}");
        assert_eq!(model.noise, 1e-4);
    }
}

/// A run's record: (evaluation index, phase, unit point, y, cost).
type Recorded = (usize, String, Vec<f64>, f64, f64);

fn recorded(path: &Path) -> Vec<Recorded> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let x = v["x"].as_array().unwrap().iter();
            (
                v["iter"].as_u64().unwrap() as usize,
                v["phase"].as_str().unwrap().to_string(),
                x.map(|c| c.as_f64().unwrap()).collect(),
                v["y"].as_f64().unwrap(),
                v["cost"].as_f64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn the_run_loop_and_ask_tell_make_the_same_records() {
    // Both drivers step the same rules (seeds, the known cost, which costs count, the phase
    // and the decision number): told each y a run recorded, a session suggests the run's
    // every point, in its phase and at its index, charges the run's cost, and is done
    // where the run's budget ran out. Bitwise, since the box maps to the unit cube exactly.
    // The known cost is noisy, so a cost drawn with another evaluation's seed shows.
    load_plugins();
    let text = spec_text_with("{ cost: 12 }", "{ type: sobol, points: 3 }").replace(
        "offset: 0.5 }",
        "offset: 0.5, noise: { std: 0.05, min: 0.4 } }",
    );
    assert!(text.contains("noise"));
    let spec = LoadedSpec::parse(Path::new("session-test.yaml"), &text, false).unwrap();
    let out = tempfile::tempdir().unwrap();
    let opts = cabo_runner::RunOptions {
        out: out.path().to_path_buf(),
        report: false,
        ..cabo_runner::RunOptions::default()
    };
    let cancel = std::sync::atomic::AtomicBool::new(false);
    cabo_runner::run_specs(std::slice::from_ref(&spec), &opts, &cancel).unwrap();
    for policy in ["EI", "PBGI-D"] {
        let run = recorded(
            &out.path()
                .join(format!("session-test/{policy}/rep-0.jsonl")),
        );
        assert!(run.len() > 5, "{policy}: {} records", run.len());
        let mut session = Session::new(&spec, policy, 0).unwrap();
        for (iter, phase, x, y, cost) in &run {
            let p = point(session.ask().unwrap());
            let phase_asked = match p.phase {
                Phase::Initial => "initial",
                Phase::Policy => "policy",
            };
            assert_eq!((p.evaluation, phase_asked), (*iter, phase.as_str()));
            assert_eq!(bits(&p.unit), bits(x), "{policy} evaluation {iter}");
            session.tell(&p.x, *y, None).unwrap();
            let charged = *session.observations().costs().last().unwrap();
            assert_eq!(
                charged.to_bits(),
                cost.to_bits(),
                "{policy} evaluation {iter}"
            );
        }
        assert!(
            matches!(session.ask().unwrap(), Suggestion::Done(_)),
            "{policy}"
        );
    }
}

fn bits(x: &[f64]) -> Vec<u64> {
    x.iter().map(|v| v.to_bits()).collect()
}

/// `ask_many(k)` once the design is told is what a run with k workers starts when its design
/// completes: the k decisions in turn, each with the earlier ones pending, on the same
/// fantasies and the same policy and model state, bit for bit.
#[test]
fn ask_many_after_the_design_starts_what_k_workers_start() {
    let text = spec_text_with("{ iterations: 4 }", "{ type: sobol, points: 3 }")
        .replace("name: session-test\n", "name: session-test\nworkers: 3\n");
    load_plugins();
    let spec = LoadedSpec::parse(Path::new("session-test.yaml"), &text, false).unwrap();
    let out = tempfile::tempdir().unwrap();
    let opts = cabo_runner::RunOptions {
        out: out.path().to_path_buf(),
        threads: Some(1),
        report: false,
        ..cabo_runner::RunOptions::default()
    };
    let cancel = std::sync::atomic::AtomicBool::new(false);
    cabo_runner::run_specs(std::slice::from_ref(&spec), &opts, &cancel).unwrap();
    for policy in ["EI", "PBGI-D"] {
        let records = out
            .path()
            .join(format!("session-test/{policy}/rep-0.jsonl"));
        let records: Vec<serde_json::Value> = std::fs::read_to_string(records)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let unit = |r: &serde_json::Value| -> Vec<f64> {
            r["x"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap())
                .collect()
        };
        let started = |e: u64| unit(records.iter().find(|r| r["evaluation"] == e).unwrap());
        let mut s = Session::new(&spec, policy, 0).unwrap();
        for r in records.iter().filter(|r| r["phase"] == "initial") {
            let (y, cost) = (r["y"].as_f64().unwrap(), r["cost"].as_f64().unwrap());
            s.tell_unit(unit(r), y, Some(cost)).unwrap();
        }
        let many: Vec<Suggested> = s.ask_many(3).unwrap().into_iter().map(point).collect();
        for (i, p) in many.iter().enumerate() {
            assert_eq!(
                p.unit,
                started(3 + i as u64),
                "{policy}: decision {}",
                i + 1
            );
            assert_eq!(p.pending, i, "{policy}");
        }
    }
}
