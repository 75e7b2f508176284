//! The JSON-lines protocol between cabo and an objective program.
//!
//! cabo writes one request per line to the program's standard input:
//!
//! ```json
//! {"x": [3.2, -1.5], "seed": 1234567, "eval": 7}
//! ```
//!
//! with `"replication": r` added in a run (the replication's index in the spec, from 0, for
//! a program whose instance depends on it: the same for every request of the run) and
//! `"control_set": i` when the query is a control-set play (the open variables are already
//! drawn: `x` is always the full point). The program answers each request with
//! one line on its standard output, echoing the request's `eval`:
//!
//! ```json
//! {"eval": 7, "y": 0.83, "cost": 12.5, "metrics": {"train_s": 11.9}}
//! ```
//!
//! `cost` is required when the spec says `cost: reported`; `metrics` is optional (each name
//! declared in the spec's `metrics:`), and so is `value`, the noise-free value simple regret
//! is measured with. `{"eval": 7, "error": "why"}` reports an evaluation that failed.
//! Anything else on standard output is a protocol error — an answer without `eval` or with
//! another request's, a line printed before its request was sent, a line longer than
//! [`MAX_LINE`] bytes: the program's own messages belong on standard error, which cabo keeps
//! in the run's log. The echo is what keeps a program in step: an extra line is never taken
//! for the next request's answer.

use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// One request, as written to the program.
#[derive(Debug, Serialize)]
pub struct Request<'a> {
    /// The point in the program's own units.
    pub x: &'a [f64],
    /// A seed for whatever the program draws at random, determined by the run.
    pub seed: u64,
    /// The evaluation's index in the run (the initial design included), from 0.
    pub eval: usize,
    /// The run's replication index, when the problem serves a run's replication.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replication: Option<usize>,
    /// The control set played, for a control-set query.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub control_set: Option<usize>,
}

/// A well-formed answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// An evaluation.
    Evaluated(Evaluation),
    /// The program reported that the evaluation failed, saying why.
    Failed(String),
}

/// What an evaluation answered.
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    /// The observed objective.
    pub y: f64,
    /// The cost, when reported.
    pub cost: Option<f64>,
    /// The noise-free value, when the program knows it.
    pub value: Option<f64>,
    /// Named numbers the evaluation reported.
    pub metrics: BTreeMap<String, f64>,
}

/// The longest line of standard output cabo reads, newline excluded: 16 MiB. A longer one
/// (output without a newline, say) is a protocol error rather than memory without limit.
pub const MAX_LINE: usize = 16 << 20;

/// The keys an answer may have.
const KEYS: [&str; 6] = ["eval", "y", "cost", "value", "metrics", "error"];

/// Parses one line of the program's standard output, the answer to evaluation `eval`; the
/// error says what is wrong with it in a sentence that can follow "the program's answer …".
pub fn parse(line: &str, eval: usize, declared_metrics: &[String]) -> Result<Answer, String> {
    let shown = shorten(line);
    let value: Value = serde_json::from_str(line).map_err(|_| match non_finite(line) {
        Some(why) => why,
        None => format!(
            "is not a JSON object: `{shown}` (a program must print only its answers on \
             standard output, one JSON line each; print logs to standard error)"
        ),
    })?;
    let Value::Object(map) = value else {
        return Err(format!("is not a JSON object: `{shown}`"));
    };
    if let Some(unknown) = map.keys().find(|k| !KEYS.contains(&k.as_str())) {
        return Err(format!(
            "has the unknown key {unknown:?}{} (an answer has `eval` and `y`, optionally \
             `cost`, `value` and `metrics`, or `eval` and `error`)",
            closest(unknown, &KEYS)
        ));
    }
    check_eval(&map, eval, &shown)?;
    if let Some(why) = map.get("error") {
        if map.len() > 2 {
            return Err(
                "has `error` beside other keys (an answer is an evaluation or an \
                        error, not both)"
                    .into(),
            );
        }
        let why = match why {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        return Ok(Answer::Failed(why));
    }
    let y = number(&map, "y")?.ok_or_else(|| {
        format!("has no `y`: an evaluation answers {{\"eval\": {eval}, \"y\": <number>}}")
    })?;
    Ok(Answer::Evaluated(Evaluation {
        y,
        cost: number(&map, "cost")?,
        value: number(&map, "value")?,
        metrics: metrics(map.get("metrics"), declared_metrics)?,
    }))
}

/// The answer's `eval` is the request's: a missing or other index means the program is out
/// of step (an extra line, an answer printed before its request), and taking the line as
/// this evaluation's answer would shift every later result.
fn check_eval(map: &Map<String, Value>, eval: usize, shown: &str) -> Result<(), String> {
    match map.get("eval") {
        None => Err(format!(
            "has no `eval`: `{shown}` (each answer echoes its request's index: print \
             {{\"eval\": {eval}, \"y\": …}} for the request {{\"eval\": {eval}, …}})"
        )),
        Some(v) if v.as_u64() == Some(eval as u64) => Ok(()),
        Some(v) => Err(format!(
            "has `eval`: {v}, but evaluation {eval} was asked: `{shown}` (the program is out \
             of step; print exactly one answer per request, echoing the request's `eval`)"
        )),
    }
}

/// The finite number under `key`, if present.
fn number(map: &Map<String, Value>, key: &str) -> Result<Option<f64>, String> {
    match map.get(key) {
        None => Ok(None),
        Some(v) => match v.as_f64() {
            Some(x) if x.is_finite() => Ok(Some(x)),
            _ => Err(format!("has `{key}`: {v}, which is not a finite number")),
        },
    }
}

/// Why a line that is not JSON was meant as an answer with a number JSON cannot hold:
/// `NaN`, `Infinity` or `-Infinity` (what Python's `json.dumps` prints for non-finite
/// floats) or a literal such as `1e400` beyond the largest double. Names the first one.
fn non_finite(line: &str) -> Option<String> {
    let bytes = line.as_bytes();
    let (mut i, mut in_string) = (0, false);
    while i < bytes.len() {
        let c = bytes[i];
        if in_string {
            match c {
                b'\\' => i += 1,
                b'"' => in_string = false,
                _ => {}
            }
            i += 1;
            continue;
        }
        if c == b'"' {
            in_string = true;
            i += 1;
            continue;
        }
        let rest = &line[i..];
        let token = ["-Infinity", "Infinity", "NaN"]
            .into_iter()
            .find(|t| rest.starts_with(t))
            .map(str::to_string)
            .or_else(|| overflowing_number(rest));
        if let Some(token) = token {
            return Some(format!(
                "has {}{token}, which is not a finite number (JSON has no NaN or infinity: \
                 answer {{\"eval\": …, \"error\": \"why\"}} when an evaluation has no \
                 finite result)",
                key_before(&line[..i])
            ));
        }
        i += 1;
    }
    None
}

/// The number literal `rest` starts with, when it overflows a double (`1e400`).
fn overflowing_number(rest: &str) -> Option<String> {
    if !rest.starts_with(|c: char| c == '-' || c.is_ascii_digit()) {
        return None;
    }
    let len = rest
        .find(|c: char| !(c.is_ascii_digit() || "+-.eE".contains(c)))
        .unwrap_or(rest.len());
    let literal = &rest[..len];
    literal
        .parse::<f64>()
        .is_ok_and(|x| x.is_infinite())
        .then(|| literal.to_string())
}

/// "`key`: " for the key whose value starts where `before` ends, if there is one.
fn key_before(before: &str) -> String {
    before
        .trim_end()
        .strip_suffix(':')
        .map(str::trim_end)
        .and_then(|k| k.strip_suffix('"'))
        .and_then(|k| k.rfind('"').map(|at| &k[at + 1..]))
        .map(|key| format!("`{key}`: "))
        .unwrap_or_default()
}

/// The `metrics` object: finite numbers under declared names.
fn metrics(value: Option<&Value>, declared: &[String]) -> Result<BTreeMap<String, f64>, String> {
    let Some(value) = value else {
        return Ok(BTreeMap::new());
    };
    let Value::Object(map) = value else {
        return Err(format!(
            "has `metrics`: {value}, which is not an object of named numbers"
        ));
    };
    let names: Vec<&str> = declared.iter().map(String::as_str).collect();
    map.iter()
        .map(|(name, v)| {
            if !names.contains(&name.as_str()) {
                return Err(if names.is_empty() {
                    format!(
                        "reports the metric {name:?}, but the spec declares none (list the \
                         metrics in the problem's `metrics:`)"
                    )
                } else {
                    format!(
                        "reports the metric {name:?}, which the spec's `metrics:` does not \
                         declare{}",
                        closest(name, &names)
                    )
                });
            }
            match v.as_f64() {
                Some(x) if x.is_finite() => Ok((name.clone(), x)),
                _ => Err(format!(
                    "reports the metric {name:?} as {v}, which is not a finite number"
                )),
            }
        })
        .collect()
}

/// " (did you mean `k`?)" for the closest of `candidates`, when one is close.
fn closest(name: &str, candidates: &[&str]) -> String {
    cabo_core::registry::closest_of(name, candidates)
        .filter(|c| strsim::jaro_winkler(name, c) > 0.7)
        .map(|c| format!(" (did you mean {c:?}?)"))
        .unwrap_or_default()
}

/// At most 120 characters of a line, for messages.
pub(crate) fn shorten(line: &str) -> String {
    let line = line.trim_end();
    match line.char_indices().nth(120) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn declared() -> Vec<String> {
        vec!["train_s".to_string()]
    }

    #[test]
    fn reads_evaluations_and_errors() {
        let a = parse(
            r#"{"eval": 3, "y": 1.5, "cost": 2, "metrics": {"train_s": 0.25}}"#,
            3,
            &declared(),
        )
        .unwrap();
        let Answer::Evaluated(e) = a else {
            panic!("not an evaluation: {a:?}")
        };
        assert_eq!((e.y, e.cost, e.value), (1.5, Some(2.0), None));
        assert_eq!(e.metrics["train_s"], 0.25);
        assert_eq!(
            parse(r#"{"eval": 0, "error": "diverged"}"#, 0, &[]).unwrap(),
            Answer::Failed("diverged".into())
        );
    }

    #[test]
    fn says_what_is_wrong_with_a_bad_answer() {
        let cases = [
            ("epoch 1 loss 0.3", "print logs to standard error"),
            ("[1, 2]", "is not a JSON object"),
            (
                r#"{"eval": 4, "y": 1, "cots": 2}"#,
                "did you mean \"cost\"?",
            ),
            (r#"{"eval": 4, "cost": 2}"#, "has no `y`"),
            (r#"{"eval": 4, "y": "high"}"#, "not a finite number"),
            (
                r#"{"eval": 4, "y": 1, "metrics": {"train": 1}}"#,
                "did you mean \"train_s\"?",
            ),
            (
                r#"{"eval": 4, "y": 1, "metrics": [1]}"#,
                "not an object of named numbers",
            ),
            (r#"{"eval": 4, "y": 1, "error": "x"}"#, "not both"),
            (
                r#"{"y": 1}"#,
                r#"has no `eval`: `{"y": 1}` (each answer echoes"#,
            ),
            (r#"{"y": 1}"#, r#"print {"eval": 4, "y": …}"#),
            (
                r#"{"eval": 3, "y": 1}"#,
                "has `eval`: 3, but evaluation 4 was asked",
            ),
            (r#"{"eval": "4", "y": 1}"#, "out of step"),
            (r#"{"eval": 4, "error": 1, "y": 2}"#, "not both"),
            (
                r#"{"eval": 4, "y": NaN}"#,
                "has `y`: NaN, which is not a finite number",
            ),
            (
                r#"{"eval": 4, "y": 1, "cost": Infinity}"#,
                "has `cost`: Infinity, which is not a finite number",
            ),
            (r#"{"eval": 4, "y": -Infinity}"#, "has `y`: -Infinity"),
            (
                r#"{"eval": 4, "y": 1e400}"#,
                "has `y`: 1e400, which is not a finite",
            ),
            (
                r#"{"eval": 4, "y": 1, "metrics": {"train_s": NaN}}"#,
                "has `train_s`: NaN",
            ),
            (r#"{"eval": 4, "y": "NaN" x}"#, "is not a JSON object"),
        ];
        for (line, expected) in cases {
            let err = parse(line, 4, &declared()).unwrap_err();
            assert!(err.contains(expected), "{line}: {err}");
        }
    }

    #[test]
    fn requests_are_one_json_line() {
        let r = Request {
            x: &[0.5, -2.0],
            seed: 7,
            eval: 3,
            replication: None,
            control_set: Some(1),
        };
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"x":[0.5,-2.0],"seed":7,"eval":3,"control_set":1}"#
        );
        let r = Request {
            replication: Some(4),
            control_set: None,
            ..r
        };
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"x":[0.5,-2.0],"seed":7,"eval":3,"replication":4}"#
        );
    }
}
