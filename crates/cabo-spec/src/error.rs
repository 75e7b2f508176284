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
/// (tracked by `serde_path_to_error`), the location (reported by serde-saphyr) and a message
/// in the researcher's words rather than the parser's.
pub fn parse_yaml<T: serde::de::DeserializeOwned>(path: &Path, text: &str) -> Result<T, SpecError> {
    parse_yaml_with(path, text, serde_saphyr::Options::default())
}

/// [`parse_yaml`] with the parser's `options` (the gallery's files read YAML 1.2 booleans,
/// so that a key such as `on:` stays a word).
pub fn parse_yaml_with<T: serde::de::DeserializeOwned>(
    path: &Path,
    text: &str,
    options: serde_saphyr::Options,
) -> Result<T, SpecError> {
    let (key, error) = match deserialize_tracked::<T>(text, options) {
        Ok(v) => return Ok(v),
        Err(failure) => *failure,
    };
    // A broken document (an unclosed `{`, a repeated key, …) often surfaces first as a type
    // error where the parser misread the text; reading the document without the schema
    // finds the real cause. Its key path is only known when both errors are the same one.
    let (key, error) = match document_error(text) {
        Some(doc) if location_of(&doc) != location_of(&error) => (String::new(), doc),
        _ => (key, error),
    };
    let message = explain(&key, &describe::<T>(text, &key, &error));
    Err(SpecError::new(
        path,
        located(text, &key, &error),
        &key,
        message,
    ))
}

/// Where the error is: the parser's location, unless the key path leads to a later line. A
/// plugin's mapping (typetag) is buffered before it is read, so the parser places every
/// error inside it at the mapping's start; the key path still names the line at fault.
fn located(text: &str, key: &str, error: &serde_saphyr::Error) -> Option<Loc> {
    let parser = location_of(error);
    if key.is_empty() {
        return parser;
    }
    match (parser, crate::locate::Locator::new(text).find(key)) {
        (Some(p), Some(k)) if k.0 > p.0 => Some(k),
        (None, k) => k,
        (p, _) => p,
    }
}

type Loc = (u64, u64);

/// Deserialises `T`, returning on failure the key path and the parser's error.
fn deserialize_tracked<T: serde::de::DeserializeOwned>(
    text: &str,
    options: serde_saphyr::Options,
) -> Result<T, Box<(String, serde_saphyr::Error)>> {
    let mut tracked = None;
    let result = serde_saphyr::with_deserializer_from_str_with_options(text, options, |de| {
        match serde_path_to_error::deserialize::<_, T>(de) {
            Ok(v) => Ok(Some(v)),
            Err(e) => {
                tracked = Some((clean_key(&e.path().to_string()), e.into_inner()));
                Ok(None)
            }
        }
    });
    match (result, tracked) {
        (Ok(Some(v)), _) => Ok(v),
        (_, Some(failure)) => Err(Box::new(failure)),
        (Err(e), None) => Err(Box::new((String::new(), e))),
        (Ok(None), None) => Err(Box::new((
            String::new(),
            serde::de::Error::custom("the spec could not be read"),
        ))),
    }
}

/// A key path without the parser's placeholders: `.` is the whole file, and a trailing `?`
/// is a key the parser had not read yet.
fn clean_key(key: &str) -> String {
    let mut key = key;
    while let Some(k) = key.strip_suffix(".?") {
        key = k;
    }
    if key == "." || key == "?" {
        String::new()
    } else {
        key.to_string()
    }
}

/// The error of reading `text` as YAML alone, whatever the schema.
fn document_error(text: &str) -> Option<serde_saphyr::Error> {
    serde_saphyr::from_str::<serde::de::IgnoredAny>(text).err()
}

fn location_of(e: &serde_saphyr::Error) -> Option<Loc> {
    e.location().map(|l| (l.line(), l.column()))
}

/// The error itself, without the source snippet serde-saphyr may wrap around it.
fn unwrapped(e: &serde_saphyr::Error) -> &serde_saphyr::Error {
    match e {
        serde_saphyr::Error::WithSnippet { error, .. } => unwrapped(error),
        other => other,
    }
}

/// The one place where serde-saphyr's and serde's errors become the researcher's words: what
/// a key takes (an integer, a list, a mapping) and what the file holds instead, never a Rust
/// type or a library option.
fn describe<T: serde::de::DeserializeOwned>(
    text: &str,
    key: &str,
    e: &serde_saphyr::Error,
) -> String {
    use serde_saphyr::Error as E;
    match unwrapped(e) {
        E::Budget { breach, .. } => budget_message(breach),
        E::DuplicateMappingKey {
            key: name,
            location,
        } => duplicate_message(text, name.as_deref(), (location.line(), location.column())),
        E::MultipleDocuments { .. } => {
            "a spec file holds one YAML document, but a second one starts here".into()
        }
        E::Eof { .. } => "the file ends in the middle of a value".into(),
        E::SerdeInvalidType {
            unexpected,
            expected,
            ..
        }
        | E::SerdeInvalidValue {
            unexpected,
            expected,
            ..
        } => mismatch(expected, unexpected),
        E::SerdeInvalidLength { len, expected, .. } => format!(
            "expected {}, found {len} {}",
            plain_expected(expected),
            if *len == 1 { "entry" } else { "entries" }
        ),
        E::SerdeUnknownVariant {
            variant, expected, ..
        } => format!(
            "unknown variant `{variant}`, expected one of {}",
            quoted_list(expected)
        ),
        E::SerdeMissingField { field, .. } => format!("missing field `{field}`"),
        E::Unexpected { expected, .. } => {
            mismatch_from_schema::<T>(text, key, shape_expected(expected))
        }
        E::InvalidScalar { ty, .. } => {
            mismatch_from_schema::<T>(text, key, Some(plain_expected(ty)))
        }
        E::NullIntoString { .. } => "expected text, found an empty value".into(),
        E::NonFiniteFloat { value, .. } => format!("`{value}` is not a finite number"),
        other => {
            let message = plain_message(other);
            // A breach met inside a plugin's mapping reaches us as text; reading the document
            // alone meets it again, as the parser's own error.
            if let Some(breach) = message.strip_prefix("budget breached: ") {
                return budget_text(breach);
            }
            // Plugins' specs (typetag) pass the parser's errors on as plain text.
            if let Some(hint) = scalar_error_text(&message) {
                return mismatch_from_schema::<T>(text, key, hint);
            }
            match location_of(other) {
                Some(at) => syntax_message(text, &message, at),
                None => plain_serde_text(&message),
            }
        }
    }
}

/// What serde-saphyr's "expected sequence start" and the like expect, in plain words; `None`
/// for "string scalar", which says only that a single value belongs here.
fn shape_expected(expected: &str) -> Option<String> {
    match expected {
        "sequence start" => Some("a list".into()),
        "mapping start" => Some("a mapping".into()),
        _ => None,
    }
}

/// For a scalar or shape error that reached us only as text ("invalid u64", "expected
/// string scalar"), what it expects (as [`shape_expected`]); `None` for any other message.
fn scalar_error_text(message: &str) -> Option<Option<String>> {
    if let Some(expected) = message.strip_prefix("expected ")
        && matches!(
            expected,
            "string scalar" | "sequence start" | "mapping start"
        )
    {
        return Some(shape_expected(expected));
    }
    // Only serde-saphyr's "invalid <type>" (not "invalid indentation …").
    let ty = message.strip_prefix("invalid ")?;
    let plain = plain_expected(ty);
    (plain != ty).then_some(Some(plain))
}

/// What a key took and what it found, when the error names both.
fn mismatch(expected: &str, found: &str) -> String {
    format!(
        "expected {}, found {}",
        plain_expected(expected),
        plain_found(found)
    )
}

/// "expected …, found …" for a value of the wrong kind at `key`. serde-saphyr's own errors
/// say only that it wanted a scalar ("string scalar") or could not read one as a `u64`, so
/// the document is read again into a plain value: what it holds at `key` is what was found,
/// and reading that value into `T` yields serde's error, which names the expected type.
/// `hint` is what the parser's error says was expected, if anything.
fn mismatch_from_schema<T: serde::de::DeserializeOwned>(
    text: &str,
    key: &str,
    hint: Option<String>,
) -> String {
    let value: Option<serde_json::Value> = serde_saphyr::from_str(text).ok();
    let found = value
        .as_ref()
        .and_then(|v| crate::locate::value_at(v, key))
        .map(describe_value);
    let expected = match (value, &found) {
        (Some(v), Some(f)) => schema_expected::<T>(v, key, f),
        _ => None,
    }
    .or(hint)
    .unwrap_or_else(|| "a single value".into());
    match found {
        Some(f) => format!("expected {expected}, found {f}"),
        None => format!("expected {expected}"),
    }
}

/// What `T` expects at `key`, from serde's error on reading `value` into it; `found` (the
/// plain description of the value at `key`) must match the value serde complains about.
fn schema_expected<T: serde::de::DeserializeOwned>(
    value: serde_json::Value,
    key: &str,
    found: &str,
) -> Option<String> {
    let e = serde_path_to_error::deserialize::<_, T>(value).err()?;
    let path = clean_key(&e.path().to_string());
    // A plain value keeps no key order, so another error may be met first; a plugin's
    // mapping (typetag) is buffered, so its errors carry only the plugin's own path.
    let inside = path.is_empty()
        || key == path
        || key.starts_with(&format!("{path}."))
        || key.starts_with(&format!("{path}["));
    let message = e.into_inner().to_string();
    let (f, expected) = split_invalid(&message)?;
    (inside && plain_found(f) == found).then(|| plain_expected(expected))
}

/// A plain value as a researcher would name it: a list, a mapping, text "abc", the number 2.
fn describe_value(v: &serde_json::Value) -> String {
    use serde_json::Value as V;
    match v {
        V::Array(_) => "a list".into(),
        V::Object(_) => "a mapping".into(),
        V::String(s) => format!("text {s:?}"),
        V::Number(n) => format!("the number {n}"),
        V::Bool(b) => b.to_string(),
        V::Null => "an empty value".into(),
    }
}

/// Splits serde's "invalid type: X, expected Y" (or "invalid value: …") into (X, Y).
fn split_invalid(message: &str) -> Option<(&str, &str)> {
    let rest = message
        .strip_prefix("invalid type: ")
        .or_else(|| message.strip_prefix("invalid value: "))?;
    rest.split_once(", expected ")
}

/// Rewrites serde's generic phrasing left in a message (custom errors of plugins that pass
/// serde's own text along).
fn plain_serde_text(message: &str) -> String {
    if let Some((found, expected)) = split_invalid(message) {
        return mismatch(expected, found);
    }
    if message.starts_with("data did not match any variant of untagged enum") {
        return "the value has none of the forms this key accepts".into();
    }
    message.to_string()
}

/// What serde's `expected` text (a visitor's description, often a Rust type) means in a spec.
fn plain_expected(expected: &str) -> String {
    let e = expected.trim();
    let plain = match e {
        "u8" | "u16" | "u32" | "u64" | "u128" | "usize" | "i8" | "i16" | "i32" | "i64" | "i128"
        | "isize" | "integer" | "an integer" => "an integer",
        "f32" | "f64" | "float" | "a float" | "floating point" | "a number" => "a number",
        "a string" | "string" | "a borrowed string" => "text",
        "a boolean" | "bool" | "boolean" => "true or false",
        "a character" | "char" => "a single character",
        "a sequence" | "sequence" | "sequence start" => "a list",
        "a map" | "map" | "mapping" | "mapping start" | "struct variant" => "a mapping",
        "unit" => "an empty value",
        _ if e.starts_with("struct ") || e.contains("tagged enum") => "a mapping",
        // A plugin (typetag): a mapping naming its `type`.
        _ if e.starts_with("dyn ") => "a mapping with a `type` key",
        _ if e.starts_with("tuple of size ") => {
            return format!("a list of {} values", &e["tuple of size ".len()..]);
        }
        _ if e.starts_with("tuple") || e.starts_with("a sequence") || e.starts_with("an array") => {
            "a list"
        }
        _ if e.starts_with("enum ") || e.starts_with("variant") => "one of the allowed names",
        _ => e,
    };
    plain.to_string()
}

/// What serde's `Unexpected` text (the value found) means in a spec.
fn plain_found(found: &str) -> String {
    let f = found.trim();
    let number = f
        .strip_prefix("integer `")
        .or_else(|| f.strip_prefix("floating point `"))
        .and_then(|n| n.strip_suffix('`'));
    if let Some(n) = number {
        return format!("the number {n}");
    }
    if let Some(s) = f.strip_prefix("string ") {
        return format!("text {s}");
    }
    if let Some(b) = f.strip_prefix("boolean ") {
        return b.to_string();
    }
    let plain = match f {
        "sequence" => "a list",
        "map" => "a mapping",
        "unit value" | "null" | "Option value" | "unit" => "an empty value",
        _ => f,
    };
    plain.to_string()
}

/// The limit a YAML budget breach exceeded, in the default budget's numbers.
fn budget_message(breach: &serde_saphyr::budget::BudgetBreach) -> String {
    budget_text(&format!("{breach:?}"))
}

/// What a budget breach means, from its name as the parser prints it (`Nodes { nodes: 250001
/// }`): a breach met inside a plugin's mapping reaches us only as that text.
fn budget_text(breach: &str) -> String {
    let limits = serde_saphyr::budget::Budget::default();
    let name = breach.split([' ', '{']).next().unwrap_or("");
    match name {
        "Depth" => format!("nesting deeper than {} levels", limits.max_depth),
        "Events" => format!(
            "the file is too large: more than {} YAML items",
            limits.max_events
        ),
        "Nodes" => format!(
            "the file expands to more than {} values: each alias (`*name`) repeats the whole \
             value its anchor (`&name`) names, so aliases of aliases multiply; write the values \
             out, or use fewer aliases",
            limits.max_nodes
        ),
        "ScalarBytes" => format!(
            "the file is too large: more than {} bytes of text in values",
            limits.max_total_scalar_bytes
        ),
        "Aliases" => format!("more than {} aliases (`*name`)", limits.max_aliases),
        "Anchors" => format!("more than {} anchors (`&name`)", limits.max_anchors),
        "Documents" => format!("more than {} YAML documents", limits.max_documents),
        "MergeKeys" => format!("more than {} merge keys (`<<`)", limits.max_merge_keys),
        "AliasAnchorRatio" => {
            "aliases (`*name`) repeat their anchors too often: the file would expand too much"
                .into()
        }
        "SequenceUnbalanced" => "more closing brackets than opening ones".into(),
        _ => "the file exceeds a size limit of the YAML reader (too large, too deeply nested, \
              or its aliases expand too much)"
            .into(),
    }
}

/// A repeated key and where it first appeared.
fn duplicate_message(text: &str, name: Option<&str>, repeat: Loc) -> String {
    let Some(name) = name else {
        return "a key appears twice in the same mapping".into();
    };
    match crate::locate::first_occurrence(text, name, repeat) {
        Some((line, col)) => format!("duplicate key `{name}` (first at {line}:{col})"),
        None => format!("duplicate key `{name}`"),
    }
}

/// A YAML syntax error (or any other message); an unclosed `{` or `[` is named with where
/// it was opened, since the parser notices it only later (at the next key, or at the end of
/// the file).
fn syntax_message(text: &str, msg: &str, at: Loc) -> String {
    // The parser's symptoms of a bracket left open.
    let flow = [
        "flow mapping",
        "flow sequence",
        "unclosed bracket",
        "illegal placement of ':'",
    ];
    if !flow.iter().any(|f| msg.contains(f)) {
        return plain_serde_text(msg);
    }
    let opener = if msg.starts_with("unclosed bracket") {
        // The parser reports the bracket itself.
        msg.chars()
            .find(|c| matches!(c, '{' | '['))
            .map(|c| (c, at))
    } else {
        crate::locate::open_bracket_before(text, at)
    };
    match opener {
        Some((c, (line, col))) if msg.contains("EOF") || msg.starts_with("unclosed") => {
            format!("unclosed `{c}` opened at {line}:{col} (the file ends first)")
        }
        Some((c, (line, col))) => {
            let close = if c == '{' { '}' } else { ']' };
            format!("unclosed `{c}` opened at {line}:{col} (expected `,` or `{close}` here)")
        }
        None => plain_serde_text(msg),
    }
}

fn quoted_list(names: &[&str]) -> String {
    let names: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    names.join(", ")
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
    let expected = expected_names(message);
    if let Some(name) = between(message, "unknown variant `", "`")
        && let Some(kind) = kind_of_key(key)
        // A key named like a plugin kind may hold a plain choice instead (the `external`
        // problem's `cost: reported | wall_time | none`): its names are not the kind's.
        && expected.iter().all(|e| registry::names(kind).contains(e))
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
        && let Some(c) = registry::closest_of(&field, &expected)
    {
        return format!(
            "unknown field `{field}`; did you mean `{c}`? Valid fields: {}",
            expected.join(", ")
        );
    }
    // Outside plugin kinds a "variant" is one of a key's fixed names.
    match message.strip_prefix("unknown variant ") {
        Some(rest) => {
            let closest = between(message, "unknown variant `", "`")
                .and_then(|name| registry::closest_of(&name, &expected))
                .map(|c| format!(" (did you mean `{c}`?)"))
                .unwrap_or_default();
            format!("unknown value {rest}{closest}")
        }
        None => message.to_string(),
    }
}

/// The names serde lists after "expected" (`expected one of `a`, `b``), if any.
fn expected_names(message: &str) -> Vec<&str> {
    let Some(rest) = message.split("expected ").nth(1) else {
        return Vec::new();
    };
    rest.split(['`', ',', ' '])
        .filter(|s| !s.is_empty() && *s != "one" && *s != "of" && *s != "or")
        .collect()
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
