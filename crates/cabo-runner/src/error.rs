//! Errors that point back into the spec file: file, line/column, key path, what was expected
//! and the closest valid name.

use cabo_core::registry::{self, Kind};
use std::fmt;
use std::path::{Path, PathBuf};

/// A problem with a spec file, located as precisely as the parser allows.
#[derive(Debug, Clone, PartialEq)]
pub struct SpecError {
    /// The spec file.
    pub file: PathBuf,
    /// 1-based line and column, where known.
    pub location: Option<(u64, u64)>,
    /// The key path, e.g. `policies[1].acquisition.type` (empty for the whole file).
    pub key: String,
    /// What is wrong and what was expected.
    pub message: String,
}

impl SpecError {
    /// A located error.
    pub fn new(file: &Path, location: Option<(u64, u64)>, key: &str, message: String) -> Self {
        SpecError {
            file: file.to_path_buf(),
            location,
            key: key.to_string(),
            message,
        }
    }
}

impl fmt::Display for SpecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some((line, col)) = self.location {
            write!(f, ":{line}:{col}")?;
        }
        if self.key.is_empty() {
            write!(f, ": {}", self.message)
        } else {
            write!(f, ": `{}`: {}", self.key, self.message)
        }
    }
}

impl std::error::Error for SpecError {}

/// Deserialises YAML text, turning parser errors into [`SpecError`]s with the key path
/// (tracked by `serde_path_to_error`) and the location (reported by serde-saphyr).
pub fn parse_yaml<T: serde::de::DeserializeOwned>(path: &Path, text: &str) -> Result<T, SpecError> {
    // (key path, message, location) of a deserialisation error, captured inside the closure.
    type Tracked = (String, String, Option<(u64, u64)>);
    let mut tracked: Option<Tracked> = None;
    let result =
        serde_saphyr::with_deserializer_from_str(
            text,
            |de| match serde_path_to_error::deserialize::<_, T>(de) {
                Ok(v) => Ok(Some(v)),
                Err(e) => {
                    let key = e.path().to_string();
                    let inner = e.into_inner();
                    let loc = inner.location().map(|l| (l.line(), l.column()));
                    tracked = Some((key, plain_message(&inner), loc));
                    Ok(None)
                }
            },
        );
    match (result, tracked) {
        (Ok(Some(v)), _) => Ok(v),
        (_, Some((key, message, loc))) => {
            let key = if key == "." || key == "?" {
                String::new()
            } else {
                key
            };
            let message = explain(&key, &message);
            Err(SpecError::new(path, loc, &key, message))
        }
        (Err(e), None) => {
            let loc = e.location().map(|l| (l.line(), l.column()));
            Err(SpecError::new(path, loc, "", plain_message(&e)))
        }
        (Ok(None), None) => Err(SpecError::new(
            path,
            None,
            "",
            "the spec could not be read".into(),
        )),
    }
}

/// The parser's message without its rendered source snippet (we print our own location).
fn plain_message(e: &serde_saphyr::Error) -> String {
    let full = e.to_string();
    let first = full.lines().next().unwrap_or("").trim();
    // serde-saphyr prefixes "error: " and may append " at line X column Y".
    let first = first.strip_prefix("error: ").unwrap_or(first);
    match first.find(" at line ") {
        Some(i) => first[..i].to_string(),
        None => first.to_string(),
    }
}

/// Adds what a researcher needs to fix common mistakes: the registered names of a plugin
/// kind and the closest one to an unknown `type`, or the closest field name.
fn explain(key: &str, message: &str) -> String {
    if let Some(name) = between(message, "unknown variant `", "`")
        && let Some(kind) = kind_of_key(key)
    {
        let names = registry::names(kind);
        let closest = registry::closest(kind, &name)
            .map(|c| format!("; did you mean `{c}`?"))
            .unwrap_or_default();
        return format!(
            "unknown {kind} type `{name}`{closest} Registered {kind} types: {}",
            names.join(", ")
        );
    }
    if let Some(field) = between(message, "unknown field `", "`")
        && let Some(rest) = message.split("expected ").nth(1)
    {
        let expected: Vec<&str> = rest
            .split(['`', ',', ' '])
            .filter(|s| !s.is_empty() && *s != "one" && *s != "of" && *s != "or")
            .collect();
        if let Some(c) = registry::closest_of(&field, &expected) {
            return format!(
                "unknown field `{field}`; did you mean `{c}`? Valid fields: {}",
                expected.join(", ")
            );
        }
    }
    message.to_string()
}

fn between(s: &str, start: &str, end: &str) -> Option<String> {
    let i = s.find(start)? + start.len();
    let j = s[i..].find(end)? + i;
    Some(s[i..j].to_string())
}

/// The plugin kind held by the last segment of a key path (`policies[0].acquisition`).
fn kind_of_key(key: &str) -> Option<Kind> {
    let key = key.strip_suffix(".type").unwrap_or(key);
    let last = key.rsplit('.').next()?;
    let last = last.split('[').next()?;
    Kind::ALL.into_iter().find(|k| k.spec_key() == last)
}
