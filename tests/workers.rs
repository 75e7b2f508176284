//! The simulated workers' schedule, checked by hand: a scripted policy chooses known
//! points, the known cost `c(x) = 4·(1/4 + x)` makes every duration a small integer, and
//! the order of the evaluations, their workers, start and finish times, the pending sets
//! the decisions saw and the budget they were shown are asserted exactly, in the
//! asynchronous and synchronous modes and under a wall-time budget.

mod common;

use cabo_core::{
    BuildContext, Decision, DecisionContext, Diagnostics, Policy, PolicySpec, Query, Result,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::Path;

/// Decision `i` evaluates `points[i - 1]`, and reports what it saw.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScriptedSpec {
    points: Vec<f64>,
    /// Report the posterior at the last fantasy (the spec then needs a model).
    #[serde(default)]
    posterior: bool,
}

#[cabo_core::plugin(
    name = "scripted_points",
    summary = "Decision i evaluates points[i - 1] (a test policy)",
    paper = "test",
    example = "{ type: scripted_points, points: [0.5] }"
)]
impl PolicySpec for ScriptedSpec {
    fn build(&self, _ctx: &BuildContext<'_>) -> Result<Box<dyn Policy>> {
        Ok(Box::new(Scripted {
            points: self.points.clone(),
            posterior: self.posterior,
            seen: Diagnostics::new(),
        }))
    }
}

struct Scripted {
    points: Vec<f64>,
    posterior: bool,
    seen: Diagnostics,
}

impl Policy for Scripted {
    fn decide(&mut self, ctx: &DecisionContext<'_>) -> Result<Decision> {
        self.seen = Diagnostics::from([
            ("decision".to_string(), ctx.iteration as f64),
            ("fantasies".to_string(), ctx.fantasies as f64),
            ("data".to_string(), ctx.data.len() as f64),
            ("spent_seen".to_string(), ctx.budget.spent),
        ]);
        if let Some(fantasy) = ctx.data.observations().last().filter(|_| ctx.fantasies > 0) {
            let observed = &ctx.data.ys()[..ctx.data.len() - ctx.fantasies];
            let lowest = observed.iter().copied().fold(f64::INFINITY, f64::min);
            self.seen.insert("fantasy_y".into(), fantasy.outcome.y);
            self.seen.insert("observed_min".into(), lowest);
            let means: Vec<f64> = (ctx.fantasy_samples().iter())
                .map(|p| p.mean_var(&fantasy.outcome.x).mean)
                .collect();
            if !means.is_empty() {
                let n = means.len() as f64;
                let avg = means.iter().sum::<f64>() / n;
                let var = means.iter().map(|m| (m - avg).powi(2)).sum::<f64>() / (n - 1.0);
                self.seen.insert("samples".into(), n);
                self.seen.insert("samples_mean".into(), avg);
                self.seen.insert("samples_sd".into(), var.sqrt());
            }
            if self.posterior {
                let p = ctx.posterior()?;
                let at = p.mean_var(&fantasy.outcome.x);
                self.seen.insert("mean_at_fantasy".into(), at.mean);
                self.seen.insert("var_at_fantasy".into(), at.var);
                self.seen.insert("noise_var".into(), p.noise_variance());
            }
        }
        Ok(Decision::Evaluate(Query::at(vec![
            self.points[ctx.iteration - 1],
        ])))
    }

    fn diagnostics(&self) -> Diagnostics {
        self.seen.clone()
    }

    fn checkpoint(&self) -> Result<Option<cabo_core::PluginState>> {
        Ok(Some(cabo_core::PluginState::stateless()))
    }
}

/// One evaluation as its record says: (evaluation, worker, start, finish, pending, cost,
/// cum_cost) and, for a decision, (decision, fantasies, spent_seen).
type Row = (
    u64,
    u64,
    f64,
    f64,
    Vec<u64>,
    f64,
    f64,
    Option<(f64, f64, f64)>,
);

fn spec(workers: &str, budget: &str) -> String {
    format!(
        "name: schedule\nreplications: 1\nproblem: {{ type: ackley, dim: 1 }}\n\
         cost: {{ type: linear_mean, scale: 4, offset: 0.25 }}\nbudget: {budget}\n\
         workers: {workers}\ninitial_design: {{ type: corner, points: 1 }}\npolicies:\n  \
         - name: P\n    policy: {{ type: scripted_points, points: [0.5, 0.0, 0.25, 0.75, 1.0] }}\n\
         smoke: {{ replications: 1 }}\n"
    )
}

/// Runs `text` and returns its records, in the order they were written.
fn rows(text: &str) -> (Vec<Row>, Value) {
    cabo::init().expect("plugins registered");
    let out = tempfile::tempdir().unwrap();
    let loaded = common::parse("schedule", text).unwrap();
    let failed = common::run_all(&[loaded], out.path());
    assert!(failed.is_empty(), "{failed:?}");
    let dir = out.path().join("schedule/smoke/P");
    let records = std::fs::read_to_string(dir.join("rep-0.jsonl")).unwrap();
    let summary =
        serde_json::from_str(&std::fs::read_to_string(dir.join("rep-0.json")).unwrap()).unwrap();
    (records.lines().map(row).collect(), summary)
}

fn row(line: &str) -> Row {
    let r: Value = serde_json::from_str(line).unwrap();
    let f = |k: &str| r[k].as_f64().unwrap();
    let u = |k: &str| r[k].as_u64().unwrap();
    let d = &r["diagnostics"];
    let seen = d.get("decision").map(|_| {
        let g = |k: &str| d[k].as_f64().unwrap();
        (g("decision"), g("fantasies"), g("spent_seen"))
    });
    let pending = r["pending"].as_array().unwrap();
    (
        u("evaluation"),
        u("worker"),
        f("start"),
        f("finish"),
        pending.iter().map(|p| p.as_u64().unwrap()).collect(),
        f("cost"),
        f("cum_cost"),
        seen,
    )
}

#[test]
fn asynchronous_workers_start_as_they_free_and_decide_with_the_others_pending() {
    let (rows, summary) = rows(&spec("2", "{ cost: 9 }"));
    // t = 0: the corner point (cost 1) runs alone: decisions wait for the whole design.
    // t = 1: decision 1 takes x = 0.5 (cost 3) on worker 0, decision 2 x = 0 (cost 1) on
    //        worker 1 with evaluation 1 pending (its known cost 3 charged: spent seen 3).
    // t = 2: worker 1 frees; decision 3 takes x = 0.25 (cost 2), evaluation 1 pending.
    // t = 4: evaluations 1 and 3 finish together, worker 0's first. Decision 4 takes
    //        x = 0.75 (cost 4) with evaluation 3 pending (spent 4 + 2 seen). Then worker 1
    //        frees, and decision 5 would see 6 + 4 = 10 ≥ 9 spent: it is not made.
    // t = 8: evaluation 4 finishes; spent 10, nothing in flight: the run ends.
    let expected: Vec<Row> = vec![
        (0, 0, 0.0, 1.0, vec![], 1.0, 0.0, None),
        (2, 1, 1.0, 2.0, vec![1], 1.0, 1.0, Some((2.0, 1.0, 3.0))),
        (1, 0, 1.0, 4.0, vec![], 3.0, 4.0, Some((1.0, 0.0, 0.0))),
        (3, 1, 2.0, 4.0, vec![1], 2.0, 6.0, Some((3.0, 1.0, 4.0))),
        (4, 0, 4.0, 8.0, vec![3], 4.0, 10.0, Some((4.0, 1.0, 6.0))),
    ];
    assert_eq!(rows, expected);
    assert_eq!(summary["makespan"], 8.0);
    assert_eq!(summary["budget_spent"], 10.0);
    assert_eq!(summary["overshoot"], 1.0);
    assert_eq!(summary["stop_reason"], "budget exhausted");
}

#[test]
fn a_synchronous_batch_waits_for_all_its_evaluations_and_chooses_the_next_together() {
    let (rows, summary) = rows(&spec("{ count: 2, mode: synchronous }", "{ cost: 9 }"));
    // t = 1: the first batch, decisions 1 and 2 (the second with the first pending).
    // t = 2: evaluation 2 finishes, but its worker waits for the batch.
    // t = 4: the batch is done; decisions 3 (nothing pending, spent 4) and 4 (evaluation 3
    //        pending: 4 + 2 seen) start together.
    // t = 8: the second batch is done at spent 10 ≥ 9.
    let expected: Vec<Row> = vec![
        (0, 0, 0.0, 1.0, vec![], 1.0, 0.0, None),
        (2, 1, 1.0, 2.0, vec![1], 1.0, 1.0, Some((2.0, 1.0, 3.0))),
        (1, 0, 1.0, 4.0, vec![], 3.0, 4.0, Some((1.0, 0.0, 0.0))),
        (3, 0, 4.0, 6.0, vec![], 2.0, 6.0, Some((3.0, 0.0, 4.0))),
        (4, 1, 4.0, 8.0, vec![3], 4.0, 10.0, Some((4.0, 1.0, 6.0))),
    ];
    assert_eq!(rows, expected);
    assert_eq!(summary["makespan"], 8.0);
}

#[test]
fn a_wall_time_budget_counts_the_clock_from_the_designs_end() {
    let (rows, summary) = rows(&spec("{ count: 2, budget: wall_time }", "{ cost: 5 }"));
    // The budget starts at t = 1, when the design is complete, and a decision is shown the
    // time since then as spent, pending costs not added: decisions 1 and 2 see 0, decision
    // 3 sees 1, decisions 4 and 5 (t = 4) see 3; at t = 8, 7 ≥ 5 and nothing more starts.
    let expected: Vec<Row> = vec![
        (0, 0, 0.0, 1.0, vec![], 1.0, 0.0, None),
        (2, 1, 1.0, 2.0, vec![1], 1.0, 1.0, Some((2.0, 1.0, 0.0))),
        (1, 0, 1.0, 4.0, vec![], 3.0, 4.0, Some((1.0, 0.0, 0.0))),
        (3, 1, 2.0, 4.0, vec![1], 2.0, 6.0, Some((3.0, 1.0, 1.0))),
        (4, 0, 4.0, 8.0, vec![3], 4.0, 10.0, Some((4.0, 1.0, 3.0))),
        (5, 1, 4.0, 9.0, vec![4], 5.0, 15.0, Some((5.0, 1.0, 3.0))),
    ];
    assert_eq!(rows, expected);
    assert_eq!(summary["makespan"], 9.0);
    assert_eq!(
        summary["budget_spent"], 15.0,
        "the cost spent over both workers"
    );
    assert_eq!(summary["overshoot"], 3.0, "the clock ran to 9 - 1 = 8 of 5");
}

#[test]
fn one_worker_records_no_schedule() {
    let text = spec("1", "{ cost: 9 }");
    cabo::init().expect("plugins registered");
    let out = tempfile::tempdir().unwrap();
    let failed = common::run_all(&[common::parse("schedule", &text).unwrap()], out.path());
    assert!(failed.is_empty(), "{failed:?}");
    let records = Path::new(out.path()).join("schedule/smoke/P/rep-0.jsonl");
    let text = std::fs::read_to_string(records).unwrap();
    assert!(
        !text.contains("\"worker\"") && !text.contains("\"pending\""),
        "{text}"
    );
    assert_eq!(
        text.lines().count(),
        5,
        "the design and decisions 1-4 (3+1+2+4 = 10 ≥ 9)"
    );
}

/// The decisions with a point pending of a run with four workers and `pending` (a rule, or
/// `None` for the policy's default), each as its diagnostics.
fn fantasy_decisions(pending: Option<&str>) -> Vec<Value> {
    let rule = pending.map_or(String::new(), |r| format!(", pending: {r}"));
    let text = format!(
        "name: schedule\nreplications: 1\nproblem: {{ type: ackley, dim: 1 }}\n\
         cost: {{ type: linear_mean, scale: 4, offset: 0.25 }}\nbudget: {{ iterations: 4 }}\n\
         workers: {{ count: 4{rule} }}\ninitial_design: {{ points: 3 }}\n\
         model: {{ type: exact_gp, kernel: {{ type: rbf, lengthscale: 0.3 }}, fit: fixed }}\n\
         policies:\n  - name: P\n    policy: {{ type: scripted_points, points: [0.9, 0.1, 0.5, 0.7], \
         posterior: true }}\nsmoke: {{ replications: 1 }}\n"
    );
    cabo::init().expect("plugins registered");
    let out = tempfile::tempdir().unwrap();
    let failed = common::run_all(&[common::parse("schedule", &text).unwrap()], out.path());
    assert!(failed.is_empty(), "{failed:?}");
    let records = out.path().join("schedule/smoke/P/rep-0.jsonl");
    let decisions: Vec<Value> = std::fs::read_to_string(records)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap()["diagnostics"].clone())
        .filter(|d| d.get("fantasy_y").is_some())
        .collect();
    assert_eq!(
        decisions.len(),
        3,
        "decisions 2, 3 and 4 see points pending"
    );
    decisions
}

#[test]
fn the_kriging_believer_fantasises_the_posterior_mean_and_conditions_on_it() {
    for d in fantasy_decisions(None) {
        let g = |k: &str| d[k].as_f64().unwrap();
        // Conditioning on y = μ(x) at x leaves the mean there at μ(x) (to rounding), and
        // leaves the latent variance there at most the noise variance.
        let (y, mean) = (g("fantasy_y"), g("mean_at_fantasy"));
        assert!((y - mean).abs() <= 1e-9 * (1.0 + y.abs()), "{d}");
        assert!(g("var_at_fantasy") <= g("noise_var") * (1.0 + 1e-9), "{d}");
    }
}

#[test]
fn a_constant_liar_fantasises_its_lie_and_the_posterior_passes_near_it() {
    for d in fantasy_decisions(Some("constant_liar_min")) {
        let g = |k: &str| d[k].as_f64().unwrap();
        assert_eq!(g("fantasy_y"), g("observed_min"), "{d}");
        assert!(g("var_at_fantasy") <= g("noise_var") * (1.0 + 1e-9), "{d}");
    }
}

#[test]
fn sampled_fantasies_draw_sixteen_outcomes_around_the_believers_mean() {
    for d in fantasy_decisions(Some("sampled_fantasies")) {
        let g = |k: &str| d[k].as_f64().unwrap();
        assert_eq!(g("samples"), 16.0, "{d}");
        // The data keep the believer's fantasy; the draws scatter around it.
        assert!(
            (g("fantasy_y") - g("mean_at_fantasy")).abs() <= 1e-9 * (1.0 + g("fantasy_y").abs())
        );
        let (sd, mean) = (g("samples_sd"), g("samples_mean"));
        assert!(sd > 1e-6, "the draws differ: {d}");
        assert!((mean - g("fantasy_y")).abs() <= 4.0 * sd / 4.0, "{d}");
    }
    for d in fantasy_decisions(None) {
        assert!(
            d.get("samples").is_none(),
            "the believer draws nothing: {d}"
        );
    }
}
