//! What a researcher reads when a spec (or an `inspect` input, or a `suggest` observations
//! file) is wrong: every file in `bad-input/` is validated (or inspected) by the real binary,
//! every file in `bad-input/suggest/` read by `suggest`, and its message is kept as a
//! snapshot. Messages name the file, line, column and key, in the researcher's words: never
//! a Rust type, a parser option or a library function.

mod common;

use common::{workspace_root, xtask};
use std::path::Path;

/// Words of the parser's and serde's internals that must never reach a researcher.
const INTERNALS: &[&str] = &[
    "u64",
    "usize",
    "f64",
    "DuplicateKeyPolicy",
    "from_str_multiple",
    "Depth {",
    "scalar",
    "variant",
    "invalid type",
    "struct ",
    "dyn ",
    "sequence",
    "configured policy",
    "panicked",
];

/// The gist each corpus file's message must carry (a file without an entry fails the test,
/// so every case states what it expects).
const GIST: &[(&str, &str)] = &[
    (
        "cvs-mc-samples-huge.yaml",
        ":15:13: `policies[0].policy`: cvs_etc.mc_samples: must be a whole number from 1 to 65536, got 4000000000",
    ),
    (
        "ts-psq-features-huge.yaml",
        "`policies[0].policy`: ts_psq.features: must be a whole number from 1 to 8192, got 100000000",
    ),
    (
        "gp-prior-features-huge.yaml",
        ":3:53: `problem.features`: must be a whole number from 1 to 65536, got 100000000",
    ),
    (
        "synthetic-dim-huge.yaml",
        ":3:31: `problem.dim`: must be a whole number from 1 to 10000, got 4000000000",
    ),
    (
        "budget-number.yaml",
        "`budget`: expected a mapping, found the number 20",
    ),
    ("deep-nesting.yaml", "nesting deeper than 64 levels"),
    (
        "marker-equals-without-marker.yaml",
        "`report.marker_equals`: marker_equals says which value of report.marker counts",
    ),
    (
        "duplicate-key.yaml",
        ":5:1: duplicate key `budget` (first at 4:1)",
    ),
    (
        "inspect-log-gp-without-cost.yaml",
        "`cost_model`: cost model `log_gp` needs observed costs: give `data.cost`",
    ),
    ("inspect-nan-point.yaml", ":9:11: `points[1][1]`: NaN"),
    (
        "inspect-tree-node-count.yaml",
        ":10:10: `lookahead.nodes`: 5 node points for a tree of 7 nodes (fantasies [2, 2]): the root, then 2 at stage 1, then 4 at stage 2",
    ),
    (
        "inspect-tree-node-outside.yaml",
        ":12:13: `lookahead.nodes[1][1]`: 1.3 is outside [0, 1]",
    ),
    (
        "inspect-tree-base-sample-pair.yaml",
        ":12:8: `lookahead.base_samples[0][0]`: 2 numbers where policy `ms_ei` draws 1 per fantasy: [ε_y]",
    ),
    (
        "inspect-tree-base-samples-stage.yaml",
        ":13:7: `lookahead.base_samples[1]`: 3 entries for stage 2, which expects 2 (one per fantasy, shared by every parent) or 4 (one per node of the stage)",
    ),
    (
        "inspect-tree-policy-without-tree.yaml",
        "`lookahead.policy`: policy `random_search` has no scenario tree to evaluate; the policies with one are `bmsei`, `kg`, `ms_ei`",
    ),
    (
        "inspect-tree-policy-unknown.yaml",
        "`lookahead.policy.type`: unknown policy type `ms_ie`; did you mean `ms_ei`?",
    ),
    (
        "inspect-tree-without-cost-model.yaml",
        "`lookahead.policy`: policy `bmsei` fantasises costs: give a `cost_model:`",
    ),
    (
        "inspect-seed-text.yaml",
        "`seed`: expected an integer, found text \"random\"",
    ),
    (
        "report-runtime-unknown.yaml",
        "`report.runtime`: unknown value `acquistion_time`, expected one of `decision_time`, `acquisition_time`, `fit_time`, `cpu_time` (did you mean `acquisition_time`?)",
    ),
    (
        "plugin-as-list.yaml",
        "`problem`: expected a mapping with a `type` key, found a list",
    ),
    (
        "plugin-field-list.yaml",
        "`problem.dim`: expected an integer, found a list",
    ),
    (
        "plugin-field-nan.yaml",
        "`problem.noise_std`: `.nan` is not a finite number",
    ),
    (
        "plugin-field-text.yaml",
        "`problem.noise_std`: expected a number, found text \"small\"",
    ),
    (
        "replications-list.yaml",
        ":2:15: `replications`: expected an integer, found a list",
    ),
    (
        "replications-text.yaml",
        "`replications`: expected an integer, found text \"many\"",
    ),
    (
        "study-duplicate-key.yaml",
        ":6:3: duplicate key `x_levels` (first at 4:3)",
    ),
    (
        "study-seed-list.yaml",
        "`seed`: expected an integer, found a list",
    ),
    (
        "two-documents.yaml",
        ":9:1: a spec file holds one YAML document",
    ),
    ("unclosed-brace-at-end.yaml", "unclosed `{` opened at 7:10"),
    ("unclosed-brace.yaml", "unclosed `{` opened at 3:10"),
    ("unclosed-list.yaml", "unclosed `[` opened at 5:27"),
    (
        "tree-base-samples-unknown.yaml",
        "`policies[0].policy.base_samples`: unknown value `sobol`, expected one of independent, shared_sobol",
    ),
    (
        "unknown-fixed-name.yaml",
        "`model.fit`: unknown value `fixd`, expected one of fixed, map (did you mean `fixed`?)",
    ),
    (
        "external-cost-unknown.yaml",
        "external-cost-unknown.yaml:7:9: `problem.cost`: unknown value `wallclock`, expected one of reported, wall_time, none (did you mean `wall_time`?)",
    ),
    (
        "external-cost-twice.yaml",
        "external-cost-twice.yaml:8:7: `cost`: the problem measures each evaluation's cost itself",
    ),
    (
        "external-timeout-huge.yaml",
        "external-timeout-huge.yaml:8:14: `problem.timeout_s`: 1e20 is not a number of seconds from 0.001 to 2592000 (30 days)",
    ),
    (
        "external-retries-huge.yaml",
        "external-retries-huge.yaml:8:12: `problem.retries`: 4000000000 is more than 100, the most times a failed evaluation is asked again",
    ),
    (
        "external-bounds-overflow.yaml",
        "external-bounds-overflow.yaml:6:20: `problem.bounds[1]`: [-1e308, 1e308] is not a box side (need finite low < high, with a finite width high - low)",
    ),
    (
        "external-optimum-nan.yaml",
        "external-optimum-nan.yaml:8:12: `problem.optimum`: .nan is not a finite number",
    ),
    (
        "external-name-comma.yaml",
        "external-name-comma.yaml:8:15: `problem.names[1]`: \"depth, max\" cannot be a column of a data file (a name has no commas, quotes",
    ),
    (
        "external-field-unknown.yaml",
        "external-field-unknown.yaml:8:12: `problem.timeout`: unknown field `timeout`; did you mean `timeout_s`?",
    ),
    (
        "alias-bomb.yaml",
        "alias-bomb.yaml:8:16: the file expands to more than 250000 values: each alias (`*name`)",
    ),
    (
        "limits-memory-tiny.yaml",
        "an estimated 1.39e-5 GB of memory per run, more than limits.max_memory_gb = 1e-9 GB",
    ),
    (
        "smoke-budget-zero.yaml",
        "smoke-budget-zero.yaml:10:11: `smoke.budget`: in the spec with its `smoke:` overrides",
    ),
    (
        "smoke-policy-unknown.yaml",
        "smoke-policy-unknown.yaml:13:14: `smoke.policies[0]`: \"ei\" names no policy of this spec; did you mean \"EI\"?",
    ),
    (
        "smoke-lengthscale-dim.yaml",
        "smoke-lengthscale-dim.yaml:9:12: `policies[0].model`: in the spec with its `smoke:` overrides",
    ),
    (
        "initial-design-5000.yaml",
        "an estimated 59.2 CPU hours per run for the model fits and acquisition optimisation, more than limits.max_cpu_hours = 24 hours",
    ),
    (
        "optimizer-restarts-huge.yaml",
        "CPU hours per run for the model fits and acquisition optimisation, more than limits.max_cpu_hours = 24 hours",
    ),
    (
        "study-paths-huge.yaml",
        "study-paths-huge.yaml:5:3: `study`: paths: need at most 1000 sample paths, got 1000000000",
    ),
    (
        "study-figure2-grid-huge.yaml",
        "`study`: grid: must be a whole number from 2 to 100000, got 4000000000",
    ),
    (
        "study-smoke-grid.yaml",
        "study-smoke-grid.yaml:6:10: `smoke.study`: y_levels: need an odd number from 3 to 1001",
    ),
    (
        "untagged-form.yaml",
        "`model.kernel.lengthscale`: the value has none of the forms",
    ),
    ("workers-zero.yaml", ":4:10: `workers`: must be at least 1"),
    (
        "workers-negative.yaml",
        ":4:10: `workers`: a number of workers must be at least 1, got -2",
    ),
    (
        "workers-huge.yaml",
        "1000 workers exceed the spec's limit of 256; raise `limits.max_workers`",
    ),
    (
        "workers-text.yaml",
        "`workers`: expected a number of workers, or a map with `count`, found text \"four\"",
    ),
    (
        "workers-mode-unknown.yaml",
        "`workers.mode`: unknown value `asynchronus`",
    ),
    (
        "workers-key-unknown.yaml",
        "`workers.pendng`: unknown field `pendng`; did you mean `pending`?",
    ),
    (
        "workers-pending-unknown.yaml",
        "`workers.pending`: unknown value `constant_liar`, expected one of `kriging_believer`",
    ),
    (
        "workers-control-sets.yaml",
        ":4:10: `workers`: 4 workers: the problem has control sets",
    ),
];

/// Validates (or, for `inspect-*` files, inspects) a corpus file by its path relative to the
/// workspace root, so messages do not depend on where the workspace is; returns (exit code,
/// stderr).
fn check(relative: &str) -> (i32, String) {
    let name = Path::new(relative).file_name().unwrap().to_str().unwrap();
    let command = if name.starts_with("inspect-") {
        "inspect"
    } else {
        "validate"
    };
    let out = xtask(&[command, relative]);
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).to_string(),
    )
}

#[test]
fn bad_input_messages() {
    let root = workspace_root();
    insta::glob!("bad-input/*.yaml", |path| {
        let relative = path.strip_prefix(&root).unwrap().to_str().unwrap();
        let name = path.file_name().unwrap().to_str().unwrap();
        let (code, stderr) = check(relative);
        assert_eq!(code, 2, "{name}: expected exit code 2, stderr:\n{stderr}");
        assert!(
            stderr.contains(&format!("{relative}:")),
            "{name}: the message does not name the file:\n{stderr}"
        );
        for word in INTERNALS {
            assert!(
                !stderr.contains(word),
                "{name}: the message leaks {word:?}:\n{stderr}"
            );
        }
        let gist = GIST
            .iter()
            .find(|(file, _)| *file == name)
            .map(|(_, gist)| *gist)
            .unwrap_or_else(|| panic!("{name}: add the gist of its message to GIST"));
        assert!(
            stderr.contains(gist),
            "{name}: the message lacks {gist:?}:\n{stderr}"
        );
        insta::assert_snapshot!(stderr);
    });
}

/// The spec the observations files of `bad-input/suggest/` are read for.
const SUGGEST_SPEC: &str = "xtask/tests/bad-input/suggest/spec.yaml";

/// The gist each observations file's message must carry.
const SUGGEST_GIST: &[(&str, &str)] = &[
    (
        "duplicate-column.csv",
        "duplicate-column.csv:1: column 4 `y` appears twice",
    ),
    (
        "empty-cost-cell.csv",
        "empty-cost-cell.csv:5: column 4 `cost`: the cell is empty: the spec has no known cost",
    ),
    (
        "comments-only.csv",
        "comments-only.csv: the file holds only blank lines and comments: an observations file starts with its header line",
    ),
    (
        "empty.csv",
        "empty.csv: the file is empty: an observations file starts with its header line, even before the first observation (an experiment without observations is the header alone: `length,width,y,cost`)",
    ),
    (
        "huge-y.csv",
        "huge-y.csv:3: column 3 `y`: 1e300: the value is too large to model",
    ),
    (
        "infinite-y.csv",
        "infinite-y.csv:2: column 3 `y`: inf is not a finite number",
    ),
    (
        "missing-cost-column.csv",
        "missing-cost-column.csv:1: the header lacks the column(s) `cost`",
    ),
    (
        "negative-cost.csv",
        "negative-cost.csv:2: column 4 `cost`: -1: a cost must be positive",
    ),
    (
        "not-a-number.csv",
        "not-a-number.csv:2: column 2 `width`: expected a number, found \"abc\"",
    ),
    (
        "outside-range.csv",
        "outside-range.csv:3: column 2 `length`: 12 is outside the problem's range [-5, 10]",
    ),
    (
        "unknown-column.csv",
        "unknown-column.csv:1: column 2 `widht` is not an input of the problem, `y` or `cost`; did you mean `width`?",
    ),
    (
        "wrong-field-count.csv",
        "wrong-field-count.csv:2: the row has 3 fields, the header 4",
    ),
];

/// `suggest` on every observations file of `bad-input/suggest/`: refused with exit code 2,
/// the file, line and column named, and the message kept as a snapshot.
#[test]
fn bad_observations_messages() {
    let root = workspace_root();
    insta::glob!("bad-input/suggest/*.csv", |path| {
        let relative = path.strip_prefix(&root).unwrap().to_str().unwrap();
        let name = path.file_name().unwrap().to_str().unwrap();
        let out = xtask(&["suggest", SUGGEST_SPEC, "--data", relative]);
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        assert_eq!(
            out.status.code(),
            Some(2),
            "{name}: expected exit code 2, stderr:\n{stderr}"
        );
        for word in INTERNALS {
            assert!(
                !stderr.contains(word),
                "{name}: the message leaks {word:?}:\n{stderr}"
            );
        }
        let gist = SUGGEST_GIST
            .iter()
            .find(|(file, _)| *file == name)
            .map(|(_, gist)| *gist)
            .unwrap_or_else(|| panic!("{name}: add the gist of its message to SUGGEST_GIST"));
        assert!(
            stderr.contains(&format!("{relative}:")) && stderr.contains(gist),
            "{name}: the message lacks {gist:?}:\n{stderr}"
        );
        insta::assert_snapshot!(stderr);
    });
}

/// The JSON report of `inspect` on `docs/inspect-known-cost.yaml` with its acquisition
/// replaced.
fn inspect_known_cost(acquisition: &str) -> serde_json::Value {
    let text =
        std::fs::read_to_string(workspace_root().join("docs/inspect-known-cost.yaml")).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("acquisition:"))
        .expect("the example has an acquisition");
    let text = text.replace(line, &format!("acquisition: {acquisition}"));
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("inspect.yaml");
    std::fs::write(&path, text).unwrap();
    let out = xtask(&["inspect", path.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "inspect failed:\n{stderr}");
    serde_json::from_slice(&out.stdout).expect("inspect prints JSON")
}

/// The acquisition value at each point of an `inspect` report.
fn acquisition_values(report: &serde_json::Value) -> Vec<f64> {
    report["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            p["acquisition"]
                .as_f64()
                .expect("a finite acquisition value")
        })
        .collect()
}

fn assert_close(a: f64, b: f64, what: &str) {
    assert!(
        a.is_finite() && (a - b).abs() <= 1e-12 * b.abs().max(1.0),
        "{what}: {a} vs {b}"
    );
}

#[test]
fn inspect_evaluates_known_cost_acquisitions() {
    let eipc = inspect_known_cost("{ type: ei_per_cost }");
    let ei = acquisition_values(&inspect_known_cost("{ type: ei }"));
    let lambda = 1e-4;
    let pbgi = acquisition_values(&inspect_known_cost(&format!(
        "{{ type: pbgi, lambda: {lambda} }}"
    )));
    for (i, point) in eipc["points"].as_array().unwrap().iter().enumerate() {
        let x: Vec<f64> = point["x"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        // The example's cost function: linear_mean with scale 20 and offset 0.05.
        let c = 20.0 * (0.05 + x.iter().sum::<f64>() / x.len() as f64);
        let reported = point["cost"]["expected"].as_f64().unwrap();
        assert_close(reported, c, &format!("c(x) at point {i}"));
        let eipc_value = point["acquisition"].as_f64().unwrap();
        assert_close(
            eipc_value,
            ei[i] / c,
            &format!("EIPC = EI / c at point {i}"),
        );
        // PBGI's index g solves EI(x; g) = λ c(x): EI with the incumbent at g gives λ c.
        let at_g = acquisition_values(&inspect_known_cost(&format!(
            "{{ type: ei, best_f: {:?} }}",
            pbgi[i]
        )));
        let tolerance = 1e-9 * lambda * c;
        assert!(
            (at_g[i] - lambda * c).abs() <= tolerance,
            "PBGI at point {i}: EI(x; g = {}) = {} but λ c = {}",
            pbgi[i],
            at_g[i],
            lambda * c
        );
    }
}
