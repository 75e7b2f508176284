//! Finds the line and column of a key path in YAML text, so that errors found after parsing
//! (a lengthscale vector of the wrong length, a duplicate policy name) still point at the
//! offending line; also finds what the parser's own errors leave out (where a repeated key
//! first appeared, where an unclosed bracket was opened).

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::{DuplicateKeyPolicy, NonFiniteFloatPolicy, Spanned};
use std::fmt;

/// The key tree of a YAML document with the location of every node.
#[derive(Debug, Clone, Default)]
pub struct Locator {
    root: Option<Node>,
}

type Loc = (u64, u64);

#[derive(Debug, Clone)]
enum Node {
    Map(Vec<Entry>),
    Seq(Vec<(Loc, Node)>),
    Leaf,
}

/// A mapping entry: its key, where the key and the value are, and the value.
#[derive(Debug, Clone)]
struct Entry {
    key: String,
    key_at: Loc,
    value_at: Loc,
    value: Node,
}

impl Locator {
    /// Indexes `text` (an unparsable document gives an empty index).
    pub fn new(text: &str) -> Self {
        // Read `.nan` and `.inf` too: a check after parsing may be about one of them.
        let options = serde_saphyr::options! {
            non_finite_float_policy: NonFiniteFloatPolicy::PassThrough,
            // YAML 1.2 booleans: a key such as `on:` is a word, not `true`.
            strict_booleans: true,
        };
        Locator {
            root: serde_saphyr::from_str_with_options::<Node>(text, options).ok(),
        }
    }

    /// The location of the deepest node on `path` (`a.b[2].c`) that exists.
    pub fn find(&self, path: &str) -> Option<Loc> {
        let mut node = self.root.as_ref()?;
        let mut found = None;
        for seg in segments(path) {
            let next = match (seg, node) {
                (Seg::Key(k), Node::Map(entries)) => entries
                    .iter()
                    .find(|e| e.key == k)
                    .map(|e| (e.value_at, &e.value)),
                (Seg::Index(i), Node::Seq(items)) => items.get(i).map(|(l, n)| (*l, n)),
                _ => None,
            };
            match next {
                Some((loc, n)) => {
                    found = Some(loc);
                    node = n;
                }
                None => break,
            }
        }
        found
    }
}

/// Where `key` first appears in the mapping in which it appears again at `repeat` (the
/// location serde-saphyr gives a duplicate key).
pub fn first_occurrence(text: &str, key: &str, repeat: Loc) -> Option<Loc> {
    // Pass repeated keys through to the visitor, which keeps every entry.
    let options = serde_saphyr::options! { duplicate_keys: DuplicateKeyPolicy::PassThrough };
    let root = serde_saphyr::from_str_with_options::<Node>(text, options).ok()?;
    first_in(&root, key, repeat)
}

fn first_in(node: &Node, key: &str, repeat: Loc) -> Option<Loc> {
    match node {
        Node::Map(entries) => {
            if entries.iter().any(|e| e.key == key && e.key_at == repeat) {
                return entries.iter().find(|e| e.key == key).map(|e| e.key_at);
            }
            entries.iter().find_map(|e| first_in(&e.value, key, repeat))
        }
        Node::Seq(items) => items.iter().find_map(|(_, n)| first_in(n, key, repeat)),
        Node::Leaf => None,
    }
}

/// The innermost `{` or `[` still open at `before`, with its location. A light scan of the
/// text (quotes and comments skipped), for documents the parser could not read.
pub fn open_bracket_before(text: &str, before: Loc) -> Option<(char, Loc)> {
    let mut scan = BracketScan::default();
    for (i, line) in text.lines().enumerate() {
        let line_no = i as u64 + 1;
        let chars: Vec<char> = line.chars().collect();
        scan.node_start = true;
        scan.after_space = true;
        for (j, &c) in chars.iter().enumerate() {
            let at = (line_no, j as u64 + 1);
            if at >= before {
                return scan.open.last().copied();
            }
            let next = chars.get(j + 1).copied();
            if !scan.step(c, next, at) {
                break; // a comment runs to the end of the line
            }
        }
    }
    scan.open.last().copied()
}

/// The state of [`open_bracket_before`]'s scan.
#[derive(Default)]
struct BracketScan {
    open: Vec<(char, Loc)>,
    quote: Option<char>,
    escaped: bool,
    /// Whether a node may start here: a bracket or a quote then opens a collection or a
    /// quoted scalar rather than being part of plain text such as `a{b` or `it's`.
    node_start: bool,
    /// Whether the last character was white space (or the line just began): a `#` then
    /// starts a comment.
    after_space: bool,
}

impl BracketScan {
    /// Reads one character; false when the rest of the line is a comment.
    fn step(&mut self, c: char, next: Option<char>, at: Loc) -> bool {
        if let Some(q) = self.quote {
            self.step_quoted(q, c);
            return true;
        }
        let in_flow = !self.open.is_empty();
        match c {
            '#' if self.after_space => return false,
            '{' | '[' if self.node_start || in_flow => {
                self.open.push((c, at));
                self.node_start = true;
            }
            '}' | ']' if in_flow => {
                self.open.pop();
                self.node_start = false;
            }
            '\'' | '"' if self.node_start => self.quote = Some(c),
            ',' if in_flow => self.node_start = true,
            ':' | '-' | '?' => {
                self.node_start = next.is_none_or(char::is_whitespace) || in_flow;
            }
            c if c.is_whitespace() => {}
            _ => self.node_start = false,
        }
        self.after_space = c.is_whitespace();
        true
    }

    fn step_quoted(&mut self, q: char, c: char) {
        if self.escaped {
            self.escaped = false;
        } else if q == '"' && c == '\\' {
            self.escaped = true;
        } else if c == q {
            // A doubled '' inside single quotes closes and reopens: same state either way.
            self.quote = None;
            self.node_start = false;
        }
    }
}

/// The node at a key path (`a.b[2].c`) of a plain value, if the path exists.
pub fn value_at<'a>(root: &'a serde_json::Value, path: &str) -> Option<&'a serde_json::Value> {
    segments(path)
        .into_iter()
        .try_fold(root, |node, seg| match seg {
            Seg::Key(k) => node.get(k),
            Seg::Index(i) => node.get(i),
        })
}

enum Seg<'a> {
    Key(&'a str),
    Index(usize),
}

fn segments(path: &str) -> Vec<Seg<'_>> {
    let mut out = Vec::new();
    for part in path.split('.').filter(|p| !p.is_empty()) {
        let mut rest = part;
        if let Some(i) = rest.find('[') {
            if i > 0 {
                out.push(Seg::Key(&rest[..i]));
            }
            rest = &rest[i..];
            while let Some(stripped) = rest.strip_prefix('[') {
                let Some(end) = stripped.find(']') else { break };
                if let Ok(n) = stripped[..end].parse() {
                    out.push(Seg::Index(n));
                }
                rest = &stripped[end + 1..];
            }
        } else {
            out.push(Seg::Key(rest));
        }
    }
    out
}

struct KeyText(String);

impl<'de> Deserialize<'de> for KeyText {
    fn deserialize<D: Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = KeyText;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a scalar key")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<KeyText, E> {
                Ok(KeyText(v.to_string()))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<KeyText, E> {
                Ok(KeyText(v.to_string()))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<KeyText, E> {
                Ok(KeyText(v.to_string()))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<KeyText, E> {
                Ok(KeyText(v.to_string()))
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<KeyText, E> {
                Ok(KeyText(v.to_string()))
            }
        }
        de.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Node;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any YAML node")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
                let mut entries = Vec::new();
                while let Some(k) = map.next_key::<Spanned<KeyText>>()? {
                    let v: Spanned<Node> = map.next_value()?;
                    entries.push(Entry {
                        key: k.value.0,
                        key_at: (k.referenced.line(), k.referenced.column()),
                        value_at: (v.referenced.line(), v.referenced.column()),
                        value: v.value,
                    });
                }
                Ok(Node::Map(entries))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
                let mut items = Vec::new();
                while let Some(v) = seq.next_element::<Spanned<Node>>()? {
                    items.push(((v.referenced.line(), v.referenced.column()), v.value));
                }
                Ok(Node::Seq(items))
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Node, E> {
                Ok(Node::Leaf)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Node, E> {
                Ok(Node::Leaf)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Node, E> {
                Ok(Node::Leaf)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Node, E> {
                Ok(Node::Leaf)
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Node, E> {
                Ok(Node::Leaf)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Node, E> {
                Ok(Node::Leaf)
            }
            fn visit_none<E: de::Error>(self) -> Result<Node, E> {
                Ok(Node::Leaf)
            }
        }
        de.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_nested_keys_and_indices() {
        let text = "name: x\npolicies:\n  - name: a\n    acquisition: { type: ei }\n  - name: b\n    policy:\n      type: random_search\n";
        let l = Locator::new(text);
        assert_eq!(l.find("name").map(|p| p.0), Some(1));
        assert_eq!(l.find("policies[1].policy").map(|p| p.0), Some(7));
        assert_eq!(l.find("policies[0].acquisition.type").map(|p| p.0), Some(4));
        // A missing leaf falls back to its deepest existing parent.
        assert_eq!(l.find("policies[1].nonexistent").map(|p| p.0), Some(5));
    }

    #[test]
    fn finds_the_bracket_left_open_past_quotes_comments_and_plain_text() {
        let text = "name: \"a { b\"  # a [ comment\ndescription: it's {not} open\nproblem: { type: x, dim: [1, 2], f: '}'\nbudget: 3\n";
        assert_eq!(open_bracket_before(text, (4, 7)), Some(('{', (3, 10))));
        // Before it is opened nothing is open; closed brackets are not reported.
        assert_eq!(open_bracket_before(text, (3, 1)), None);
    }

    #[test]
    fn finds_the_first_of_a_repeated_key_in_its_own_mapping() {
        let text = "a: 1\nb:\n  a: 2\n  c: 3\n  a: 4\n";
        assert_eq!(first_occurrence(text, "a", (5, 3)), Some((3, 3)));
        assert_eq!(first_occurrence(text, "a", (9, 9)), None);
    }
}
