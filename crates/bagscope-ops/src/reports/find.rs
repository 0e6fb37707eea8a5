//! Find the messages where a field meets a condition: `/odom.twist.twist.linear.x > 0.5`,
//! `/battery.data crosses 12.2`, `/rosout.msg contains "battery"` (case-insensitive, in every
//! string under the path; a bare topic searches all its strings). The left side of a
//! comparison is any expression (`/imu.orientation.yaw_deg > 30`,
//! `/a/odom.twist.twist.linear.x - /b/odom.twist.twist.linear.x crosses 0`).

use std::sync::atomic::{AtomicBool, Ordering};

use crate::timefmt::ArgError;
use bagscope_reader::bag::Bag;
use bagscope_reader::encoding::{FieldPath, Node, Value};
use bagscope_reader::error::{Error, Result};
use bagscope_reader::expr::Expr;
use bagscope_reader::series::{expr_series, Env};
use bagscope_reader::Filter;

/// A comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// The value passes the threshold (either way) between a message and the one before.
    Crosses,
    /// A string under the path contains the text (case-insensitive).
    Contains,
}

impl Op {
    /// Every operator as written, longest first (so `>=` is tried before `>`).
    pub const WRITTEN: [(&'static str, Op); 8] = [
        (" contains ", Op::Contains),
        (" crosses ", Op::Crosses),
        (">=", Op::Ge),
        ("<=", Op::Le),
        ("==", Op::Eq),
        ("!=", Op::Ne),
        (">", Op::Gt),
        ("<", Op::Lt),
    ];
}

/// A parsed query.
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    /// The expression compared (not for `contains`).
    pub expr: Option<Expr>,
    /// For `contains`, the subtree or topic searched; for a comparison, the expression's
    /// first topic (and its fields where it is a field path).
    pub path: FieldPath,
    /// The comparison.
    pub op: Op,
    /// The number compared with (not for `contains`).
    pub number: f64,
    /// The text searched for (`contains`, lower-cased).
    pub text: String,
}

/// Parses `PATH OP VALUE`.
///
/// ```
/// use bagscope_ops::reports::find::{parse_query, Op};
/// let q = parse_query("/battery.data crosses 12.2").unwrap();
/// assert_eq!((q.path.topic.as_str(), q.op, q.number), ("/battery", Op::Crosses, 12.2));
/// let e = parse_query("/battery.data > twelve").unwrap_err();
/// assert_eq!((e.what, e.input.as_str()), ("query", "/battery.data > twelve"));
/// ```
pub fn parse_query(q: &str) -> std::result::Result<Query, ArgError> {
    let q = q.trim();
    let err = |reason: String| ArgError::new("query", q, reason);
    let (i, word, op) = Op::WRITTEN
        .iter()
        .filter_map(|&(w, op)| top_level_find(q, w).map(|i| (i, w, op)))
        .min_by_key(|&(i, w, _)| (i, std::cmp::Reverse(w.len())))
        .ok_or_else(|| {
            err(format!(
                "{q:?}: expected PATH OP VALUE with OP one of > >= < <= == != crosses contains"
            ))
        })?;
    let left = q[..i].trim();
    if op != Op::Contains {
        return comparison(q, left, op, q[i + word.len()..].trim());
    }
    let path = FieldPath::parse(left).map_err(|e| err(e.reason))?;
    if path.topic.is_empty() {
        return Err(err(format!(
            "{q:?}: the path must start with its topic (/topic.field)"
        )));
    }
    let value = q[i + word.len()..].trim();
    if op == Op::Contains {
        let text = value
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .unwrap_or(value);
        if text.is_empty() {
            return Err(err(format!("{q:?}: nothing to search for")));
        }
        return Ok(Query {
            expr: None,
            path,
            op,
            number: 0.0,
            text: text.to_lowercase(),
        });
    }
    Err(err(format!("{q:?}: expected PATH contains TEXT")))
}

/// The first place of `w` in `q` outside brackets, braces, parentheses and quotes.
fn top_level_find(q: &str, w: &str) -> Option<usize> {
    let mut depth = 0i32;
    let mut quote: Option<char> = None;
    for (i, c) in q.char_indices() {
        match (quote, c) {
            (Some(qc), _) if c == qc => quote = None,
            (Some(_), _) => continue,
            (None, '\'' | '"') => quote = Some(c),
            (None, '[' | '{' | '(') => depth += 1,
            (None, ']' | '}' | ')') => depth -= 1,
            _ => {}
        }
        if quote.is_none() && depth == 0 && q[i..].starts_with(w) {
            return Some(i);
        }
    }
    None
}

/// `EXPRESSION OP NUMBER`.
fn comparison(q: &str, left: &str, op: Op, value: &str) -> std::result::Result<Query, ArgError> {
    let err = |reason: String| ArgError::new("query", q, reason);
    let expr = Expr::parse(left).map_err(|e| err(e.to_string()))?;
    if expr.plain_path().is_some_and(|p| p.segs.is_empty()) {
        return Err(err(format!(
            "{q:?}: compare a field, not the whole message"
        )));
    }
    let number: f64 = value
        .parse()
        .map_err(|_| err(format!("{q:?}: {value:?} is not a number")))?;
    let path = FieldPath::parse(left).unwrap_or_else(|_| FieldPath {
        topic: expr
            .topics()
            .first()
            .map_or(String::new(), |t| t.to_string()),
        segments: Vec::new(),
    });
    Ok(Query {
        expr: Some(expr),
        path,
        op,
        number,
        text: String::new(),
    })
}

/// A message that matched.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// Its receive time (ns).
    pub time_ns: u64,
    /// The value that matched, as text.
    pub value: String,
}

/// Most hits kept (the search stops there and says so).
pub const MAX_HITS: usize = 100_000;

/// The hits of `q` in time order, and whether the search stopped at [`MAX_HITS`].
pub fn find(bag: &Bag, q: &Query, cancel: &AtomicBool) -> Result<(Vec<Hit>, bool)> {
    if q.op == Op::Contains {
        return find_text(bag, q, cancel);
    }
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let Some(expr) = &q.expr else {
        return Err(Error::Invalid("a comparison without its expression".into()));
    };
    let series = expr_series(
        bag,
        std::slice::from_ref(expr),
        &Env::default(),
        (None, None),
        threads,
        cancel,
    )?
    .pop()
    .unwrap_or_default();
    if cancel.load(Ordering::Relaxed) {
        return Err(Error::Cancelled);
    }
    Ok(hits_of(&series.points, q.op, q.number))
}

/// The points of `points` that meet `op number`, and whether there were more than
/// [`MAX_HITS`].
pub fn hits_of(points: &[bagscope_reader::series::Point], op: Op, x: f64) -> (Vec<Hit>, bool) {
    let mut hits = Vec::new();
    let mut prev: Option<f64> = None;
    for p in points {
        let Some(v) = p.value.as_f64() else { continue };
        let hit = match op {
            Op::Gt => v > x,
            Op::Ge => v >= x,
            Op::Lt => v < x,
            Op::Le => v <= x,
            Op::Eq => v == x,
            Op::Ne => v != x,
            Op::Crosses => prev.is_some_and(|pv| (pv < x && v >= x) || (pv > x && v <= x)),
            Op::Contains => false,
        };
        prev = Some(v);
        if hit {
            hits.push(Hit {
                time_ns: p.time_ns,
                value: p.value.to_string(),
            });
            if hits.len() >= MAX_HITS {
                return (hits, true);
            }
        }
    }
    (hits, false)
}

/// `NAME OP NUMBER` where NAME is a series one of `scripts` makes (its name, or `NAME.key`):
/// the name, the comparison and the number; `None` when the query's left side is not one.
pub fn script_query(q: &str, scripts: &[crate::script::SeriesScript]) -> Option<(String, Op, f64)> {
    let q = q.trim();
    let (i, word, op) = Op::WRITTEN
        .iter()
        .filter(|(_, op)| *op != Op::Contains)
        .filter_map(|&(w, op)| q.find(w).map(|i| (i, w, op)))
        .min_by_key(|&(i, w, _)| (i, std::cmp::Reverse(w.len())))?;
    let left = q[..i].trim();
    let x: f64 = q[i + word.len()..].trim().parse().ok()?;
    crate::script::makes(scripts, left).then(|| (left.to_string(), op, x))
}

/// The samples of script series `name` (made by `scripts`, run with those they read) that meet
/// `op x`.
pub fn find_scripted(
    bag: &Bag,
    scripts: &[crate::script::SeriesScript],
    (name, op, x): (&str, Op, f64),
    cancel: &AtomicBool,
) -> crate::Result<(Vec<Hit>, bool)> {
    let scripts = crate::script::eval::needed(scripts, &[name]);
    let env = Env::default();
    if let Some(e) = crate::script::check(bag, &scripts, &env).into_iter().next() {
        return Err(Error::Invalid(e.to_string()).into());
    }
    let runs = crate::script::evaluate(
        bag,
        &scripts,
        &env,
        (None, None),
        Default::default(),
        cancel,
    )?;
    for r in runs {
        let r = r.map_err(|e| Error::Invalid(e.to_string()))?;
        if let Some(s) = r.series.iter().find(|s| s.name == name) {
            return Ok(hits_of(&s.points, op, x));
        }
    }
    Err(Error::Invalid(format!("no script made a series {name:?}")).into())
}

/// The first string under `node` that contains `text` (lower-case).
fn find_string(node: &Node, text: &str) -> Option<String> {
    match &node.value {
        Value::String(s) => {
            let s = String::from_utf8_lossy(s);
            s.to_lowercase().contains(text).then(|| s.into_owned())
        }
        Value::Array(items) => items.iter().find_map(|n| find_string(n, text)),
        Value::Message { fields, .. } => fields.iter().find_map(|n| find_string(n, text)),
        _ => None,
    }
}

fn find_text(bag: &Bag, q: &Query, cancel: &AtomicBool) -> Result<(Vec<Hit>, bool)> {
    let conns = bag.connections_of_topics(&[q.path.topic.as_str()])?;
    let plans: Vec<_> = conns
        .iter()
        .map(|&c| (c, bag.plan(c).ok().map(|(p, _)| p)))
        .collect();
    let mut hits = Vec::new();
    for m in bag.messages(&Filter {
        connections: Some(conns.clone()),
        ..Default::default()
    })? {
        if cancel.load(Ordering::Relaxed) {
            return Err(Error::Cancelled);
        }
        let m = m?;
        let Some(plan) = plans
            .iter()
            .find(|(c, _)| *c == m.conn)
            .and_then(|(_, p)| p.as_ref())
        else {
            continue;
        };
        let Ok(node) = plan.decode(&m.data) else {
            continue;
        };
        let found = node
            .at(&plan.def, &q.path.segments)
            .and_then(|n| find_string(n, &q.text));
        if let Some(s) = found {
            hits.push(Hit {
                time_ns: m.time_ns,
                value: s,
            });
            if hits.len() >= MAX_HITS {
                return Ok((hits, true));
            }
        }
    }
    Ok((hits, false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_parse() {
        let q = parse_query("/odom.twist.twist.linear.x >= -0.5").unwrap();
        assert_eq!(q.op, Op::Ge);
        assert_eq!(q.number, -0.5);
        assert_eq!(q.path.to_string(), "/odom.twist.twist.linear.x");
        let q = parse_query("/battery.data crosses 12.2").unwrap();
        assert_eq!(q.op, Op::Crosses);
        let q = parse_query("/rosout.msg contains \"Battery Low\"").unwrap();
        assert_eq!((q.op, q.text.as_str()), (Op::Contains, "battery low"));
        let q = parse_query("/rosout contains x>1").unwrap();
        assert_eq!((q.op, q.text.as_str()), (Op::Contains, "x>1"));
        assert!(parse_query("/odom > 1").is_err());
        assert!(parse_query("odom.x > 1").is_err());
        assert!(parse_query("/odom.x > one").is_err());
        assert!(parse_query("/odom.x").is_err());
        let q = parse_query("/diag.status[:]{level>=2}.level == 2").unwrap();
        assert_eq!((q.op, q.number), (Op::Eq, 2.0));
        let q = parse_query("/a.x - /b.x crosses 0").unwrap();
        assert_eq!((q.op, q.path.topic.as_str()), (Op::Crosses, "/a"));
        let e = parse_query("/a.x.@derivative(2) > 1").unwrap_err();
        assert!(e.reason.contains("column"), "{e}");
    }
}
