//! Finds the line and column of a key path in YAML text, so that errors found after parsing
//! (a lengthscale vector of the wrong length, a duplicate policy name) still point at the
//! offending line.

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::Spanned;
use std::fmt;

/// The key tree of a YAML document with the location of every node.
#[derive(Debug, Clone, Default)]
pub struct Locator {
    root: Option<Node>,
}

type Loc = (u64, u64);

#[derive(Debug, Clone)]
enum Node {
    Map(Vec<(String, Loc, Node)>),
    Seq(Vec<(Loc, Node)>),
    Leaf,
}

impl Locator {
    /// Indexes `text` (an unparsable document gives an empty index).
    pub fn new(text: &str) -> Self {
        Locator {
            root: serde_saphyr::from_str::<Node>(text).ok(),
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
                    .find(|(name, _, _)| name == k)
                    .map(|(_, l, n)| (*l, n)),
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
                while let Some(KeyText(k)) = map.next_key()? {
                    let v: Spanned<Node> = map.next_value()?;
                    entries.push((k, (v.referenced.line(), v.referenced.column()), v.value));
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
}
