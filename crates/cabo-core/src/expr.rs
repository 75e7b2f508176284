//! Small arithmetic expressions in the problem dimension, as specs write them: `"200*d"`,
//! `"2*(d+1)"`, `1024`. Parsed (and rejected) when the spec is read, evaluated when the
//! dimension is known.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// An expression over numbers, `d`, `+ - * /` and parentheses.
#[derive(Clone, PartialEq)]
pub struct Expr {
    source: String,
    node: Node,
}

#[derive(Clone, Debug, PartialEq)]
enum Node {
    Num(f64),
    Dim,
    Neg(Box<Node>),
    Bin(char, Box<Node>, Box<Node>),
}

impl Expr {
    /// Parses `source`; the error says where the expression stopped making sense.
    pub fn parse(source: &str) -> Result<Self, String> {
        let chars: Vec<char> = source.chars().filter(|c| !c.is_whitespace()).collect();
        let mut p = Parser { chars, pos: 0 };
        let node = p.sum()?;
        if p.pos != p.chars.len() {
            return Err(format!(
                "cannot read expression {source:?} past position {}: expected a number, `d`, + - * / or parentheses",
                p.pos
            ));
        }
        Ok(Expr {
            source: source.to_string(),
            node,
        })
    }

    /// A constant expression.
    pub fn constant(v: f64) -> Self {
        Expr {
            source: format_number(v),
            node: Node::Num(v),
        }
    }

    /// The value for dimension `d`.
    pub fn eval(&self, d: usize) -> f64 {
        eval(&self.node, d as f64)
    }

    /// The value for dimension `d` as a count: it must be a non-negative whole number.
    pub fn count(&self, d: usize) -> Result<usize, String> {
        let v = self.eval(d);
        if !(v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v < 1e15) {
            return Err(format!(
                "{:?} evaluates to {v} for d = {d}; expected a whole number ≥ 0",
                self.source
            ));
        }
        Ok(v as usize)
    }

    /// The text the expression was written as.
    pub fn source(&self) -> &str {
        &self.source
    }
}

fn format_number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

fn eval(n: &Node, d: f64) -> f64 {
    match n {
        Node::Num(v) => *v,
        Node::Dim => d,
        Node::Neg(a) => -eval(a, d),
        Node::Bin(op, a, b) => {
            let (a, b) = (eval(a, d), eval(b, d));
            match op {
                '+' => a + b,
                '-' => a - b,
                '*' => a * b,
                _ => a / b,
            }
        }
    }
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }
    fn sum(&mut self) -> Result<Node, String> {
        let mut left = self.product()?;
        while let Some(op @ ('+' | '-')) = self.peek() {
            self.pos += 1;
            let right = self.product()?;
            left = Node::Bin(op, Box::new(left), Box::new(right));
        }
        Ok(left)
    }
    fn product(&mut self) -> Result<Node, String> {
        let mut left = self.atom()?;
        while let Some(op @ ('*' | '/')) = self.peek() {
            self.pos += 1;
            let right = self.atom()?;
            left = Node::Bin(op, Box::new(left), Box::new(right));
        }
        Ok(left)
    }
    fn atom(&mut self) -> Result<Node, String> {
        match self.peek() {
            Some('d') => {
                self.pos += 1;
                Ok(Node::Dim)
            }
            Some('-') => {
                self.pos += 1;
                Ok(Node::Neg(Box::new(self.atom()?)))
            }
            Some('(') => {
                self.pos += 1;
                let inner = self.sum()?;
                if self.peek() != Some(')') {
                    return Err(format!("missing `)` at position {}", self.pos));
                }
                self.pos += 1;
                Ok(inner)
            }
            Some(c) if c.is_ascii_digit() || c == '.' => {
                let start = self.pos;
                while let Some(c) = self.peek() {
                    let exp_sign = (c == '-' || c == '+')
                        && matches!(self.chars.get(self.pos.wrapping_sub(1)), Some('e' | 'E'));
                    if c.is_ascii_digit() || c == '.' || c == 'e' || c == 'E' || exp_sign {
                        self.pos += 1;
                    } else {
                        break;
                    }
                }
                let text: String = self.chars[start..self.pos].iter().collect();
                text.parse::<f64>()
                    .map(Node::Num)
                    .map_err(|_| format!("{text:?} is not a number"))
            }
            Some(c) => Err(format!(
                "unexpected {c:?} at position {}: expected a number, `d` or `(`",
                self.pos
            )),
            None => Err("the expression ends too early".to_string()),
        }
    }
}

impl fmt::Debug for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.source)
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

impl Serialize for Expr {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.node {
            Node::Num(v) => s.serialize_f64(v),
            _ => s.serialize_str(&self.source),
        }
    }
}

impl<'de> Deserialize<'de> for Expr {
    fn deserialize<D: Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Expr;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a number or an expression in d such as \"200*d\"")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Expr, E> {
                Ok(Expr::constant(v as f64))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Expr, E> {
                Ok(Expr::constant(v as f64))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<Expr, E> {
                Ok(Expr::constant(v))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Expr, E> {
                Expr::parse(v).map_err(E::custom)
            }
        }
        de.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evaluates_spec_expressions() {
        assert_eq!(Expr::parse("200*d").unwrap().eval(8), 1600.0);
        assert_eq!(Expr::parse("2*(d+1)").unwrap().count(4).unwrap(), 10);
        assert_eq!(Expr::parse("25 * d / 5 - 1").unwrap().eval(4), 19.0);
        assert_eq!(Expr::parse("1e-4").unwrap().eval(1), 1e-4);
        assert_eq!(Expr::parse("-d").unwrap().eval(3), -3.0);
    }

    #[test]
    fn rejects_garbage_with_position() {
        let e = Expr::parse("2*x").unwrap_err();
        assert!(e.contains("position 2"), "{e}");
        assert!(Expr::parse("(d+1").unwrap_err().contains("missing `)`"));
        assert!(Expr::parse("d/2").unwrap().count(3).is_err());
    }
}
