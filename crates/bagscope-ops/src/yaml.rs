//! YAML read into a tree whose every node knows its line, so that a rules or mapping file's
//! error names the line it is on (`rules.yaml:12: rate: expected [MIN, MAX] in Hz`).

use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::{Marker, TScalarStyle};

/// A node and the line (1-based) it starts on.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// Line in the file, from 1.
    pub line: usize,
    /// In a mapping, the line of the key it is the value of (else its own line).
    pub key_line: usize,
    /// What it holds.
    pub kind: Kind,
}

/// A node's content.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// A scalar as written, and whether it was quoted (a quoted `null` or `1` is text).
    Scalar(String, bool),
    /// A sequence.
    Seq(Vec<Node>),
    /// A mapping, in the file's order; keys are scalars' text.
    Map(Vec<(String, Node)>),
}

/// An error at a line of a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineError {
    /// Line from 1 (0: the file as a whole).
    pub line: usize,
    /// What is wrong.
    pub reason: String,
}

impl LineError {
    /// An error at `line`.
    pub fn new(line: usize, reason: impl Into<String>) -> LineError {
        LineError {
            line,
            reason: reason.into(),
        }
    }

    /// `FILE:LINE: reason`.
    pub fn at(&self, file: &str) -> String {
        if self.line == 0 {
            format!("{file}: {}", self.reason)
        } else {
            format!("{file}:{}: {}", self.line, self.reason)
        }
    }
}

/// Parses one YAML document. Anchors and aliases are refused (a rules file has no need of them,
/// and an alias bomb could not grow here).
pub fn parse(text: &str) -> Result<Node, LineError> {
    let mut b = Builder::default();
    let mut p = Parser::new_from_str(text);
    p.load(&mut b, false)
        .map_err(|e| LineError::new(e.marker().line(), e.info().to_string()))?;
    if let Some(e) = b.error {
        return Err(e);
    }
    Ok(b.root.unwrap_or(Node {
        line: 1,
        key_line: 1,
        kind: Kind::Map(Vec::new()),
    }))
}

#[derive(Default)]
struct Builder {
    /// Open collections, each with the key it will be stored under in its parent.
    stack: Vec<(Option<String>, Node)>,
    /// A mapping's key read, waiting for its value.
    key: Vec<Option<(String, usize)>>,
    root: Option<Node>,
    error: Option<LineError>,
}

impl Builder {
    fn push_value(&mut self, mut node: Node) {
        let Some((_, parent)) = self.stack.last_mut() else {
            self.root = Some(node);
            return;
        };
        match &mut parent.kind {
            Kind::Seq(v) => v.push(node),
            Kind::Map(m) => {
                let Some(slot) = self.key.last_mut() else {
                    return;
                };
                match slot.take() {
                    Some((k, key_line)) => {
                        node.key_line = key_line;
                        if m.iter().any(|(have, _)| *have == k) && self.error.is_none() {
                            self.error = Some(LineError::new(
                                key_line,
                                format!("{k:?} is given twice in one mapping"),
                            ));
                        }
                        m.push((k, node));
                    }
                    None => match node.kind {
                        Kind::Scalar(s, _) => *slot = Some((s, node.line)),
                        _ if self.error.is_none() => {
                            self.error = Some(LineError::new(
                                node.line,
                                "a mapping's key must be a plain value",
                            ));
                        }
                        _ => {}
                    },
                }
            }
            Kind::Scalar(..) => {}
        }
    }
}

impl MarkedEventReceiver for Builder {
    fn on_event(&mut self, ev: Event, mark: Marker) {
        let line = mark.line();
        match ev {
            Event::Scalar(s, style, anchor, _) => {
                if anchor != 0 && self.error.is_none() {
                    self.error = Some(LineError::new(line, "anchors (&) are not read here"));
                }
                let quoted = style != TScalarStyle::Plain;
                self.push_value(Node {
                    line,
                    key_line: line,
                    kind: Kind::Scalar(s, quoted),
                });
            }
            Event::Alias(_) if self.error.is_none() => {
                self.error = Some(LineError::new(line, "aliases (*) are not read here"));
            }
            Event::SequenceStart(..) => self.stack.push((
                None,
                Node {
                    line,
                    key_line: line,
                    kind: Kind::Seq(Vec::new()),
                },
            )),
            Event::MappingStart(..) => {
                self.stack.push((
                    None,
                    Node {
                        line,
                        key_line: line,
                        kind: Kind::Map(Vec::new()),
                    },
                ));
                self.key.push(None);
            }
            Event::SequenceEnd | Event::MappingEnd => {
                if matches!(ev, Event::MappingEnd) {
                    self.key.pop();
                }
                if let Some((_, node)) = self.stack.pop() {
                    self.push_value(node);
                }
            }
            _ => {}
        }
    }
}

impl Node {
    /// The mapping's entries, or an error naming `what` was expected.
    pub fn map(&self, what: &str) -> Result<&[(String, Node)], LineError> {
        match &self.kind {
            Kind::Map(m) => Ok(m),
            _ => Err(LineError::new(
                self.line,
                format!("{what}: expected a mapping (KEY: VALUE lines)"),
            )),
        }
    }

    /// The sequence's items (a lone scalar is a sequence of one).
    pub fn items(&self, what: &str) -> Result<Vec<&Node>, LineError> {
        match &self.kind {
            Kind::Seq(v) => Ok(v.iter().collect()),
            Kind::Scalar(..) => Ok(vec![self]),
            Kind::Map(_) => Err(LineError::new(
                self.line,
                format!("{what}: expected a list ([a, b] or - lines)"),
            )),
        }
    }

    /// The scalar's text.
    pub fn text(&self, what: &str) -> Result<&str, LineError> {
        match &self.kind {
            Kind::Scalar(s, _) => Ok(s),
            _ => Err(LineError::new(
                self.line,
                format!("{what}: expected a value"),
            )),
        }
    }

    /// Whether this is YAML's null (`~`, `null`, or nothing).
    pub fn is_null(&self) -> bool {
        matches!(&self.kind, Kind::Scalar(s, false) if matches!(s.as_str(), "" | "~" | "null" | "Null" | "NULL"))
    }

    /// The scalar as a finite number.
    pub fn number(&self, what: &str) -> Result<f64, LineError> {
        let s = self.text(what)?;
        match s.trim().parse::<f64>() {
            Ok(x) if x.is_finite() => Ok(x),
            _ => Err(LineError::new(
                self.line,
                format!("{what}: expected a number, not {s:?}"),
            )),
        }
    }

    /// The scalar as a boolean (`true`/`false`, `yes`/`no`).
    pub fn boolean(&self, what: &str) -> Result<bool, LineError> {
        let s = self.text(what)?;
        match s.trim() {
            "true" | "True" | "TRUE" | "yes" | "Yes" | "on" => Ok(true),
            "false" | "False" | "FALSE" | "no" | "No" | "off" => Ok(false),
            _ => Err(LineError::new(
                self.line,
                format!("{what}: expected true or false, not {s:?}"),
            )),
        }
    }

    /// `[MIN, MAX]`, either side `null` for unbounded; a single number is `[N, N]`.
    pub fn bounds(&self, what: &str, unit: &str) -> Result<(Option<f64>, Option<f64>), LineError> {
        let bad = || LineError::new(self.line, format!("{what}: expected [MIN, MAX]{unit}"));
        let items = match &self.kind {
            Kind::Seq(v) => v,
            Kind::Scalar(..) => {
                let x = self.number(what)?;
                return Ok((Some(x), Some(x)));
            }
            Kind::Map(_) => return Err(bad()),
        };
        let [lo, hi] = items.as_slice() else {
            return Err(bad());
        };
        let side = |n: &Node| -> Result<Option<f64>, LineError> {
            if n.is_null() {
                Ok(None)
            } else {
                n.number(what).map(Some)
            }
        };
        let (lo, hi) = (side(lo)?, side(hi)?);
        if let (Some(a), Some(b)) = (lo, hi) {
            if a > b {
                return Err(LineError::new(
                    self.line,
                    format!("{what}: MIN {a} is above MAX {b}"),
                ));
            }
        }
        Ok((lo, hi))
    }
}

/// Fails on a key of `map` not in `known`, naming it, its line and the keys that are.
pub fn only_keys(map: &[(String, Node)], known: &[&str], what: &str) -> Result<(), LineError> {
    for (k, n) in map {
        if !known.contains(&k.as_str()) {
            return Err(LineError::new(
                n.key_line,
                format!("{what}: unknown key {k:?} (known: {})", known.join(", ")),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_know_their_lines() {
        let n = parse("topics:\n  /imu:\n    rate: [90, 110]\n    max_gap: 0.5\n").unwrap();
        let m = n.map("file").unwrap();
        assert_eq!(m[0].0, "topics");
        let imu = &m[0].1.map("topics").unwrap()[0];
        assert_eq!(imu.0, "/imu");
        let fields = imu.1.map("/imu").unwrap();
        assert_eq!(fields[0].1.line, 3);
        assert_eq!(
            fields[0].1.bounds("rate", " Hz").unwrap(),
            (Some(90.0), Some(110.0))
        );
        assert_eq!(fields[1].1.line, 4);
        assert_eq!(fields[1].1.number("max_gap").unwrap(), 0.5);
    }

    #[test]
    fn errors_say_the_line() {
        let e = parse("a: 1\nb: [1, 2\n").unwrap_err();
        assert!(e.line >= 2, "{e:?}");
        let e = parse("a: 1\na: 2\n").unwrap_err();
        assert_eq!(e.line, 2);
        let e = parse("a: &x 1\nb: *x\n").unwrap_err();
        assert_eq!(e.line, 1);
        let n = parse("r: [5, null]\nq: [3, 1]\n").unwrap();
        let m = n.map("f").unwrap();
        assert_eq!(m[0].1.bounds("r", "").unwrap(), (Some(5.0), None));
        assert_eq!(m[1].1.bounds("q", "").unwrap_err().line, 2);
        assert!(parse("").unwrap().map("f").unwrap().is_empty());
    }
}
