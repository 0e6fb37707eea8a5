//! A formula's value: numbers stay numbers, series are aligned on the union of their times
//! (each holding its last value, or interpolated linearly) and combined sample by sample.

use super::ast::{BinOp, Node};
use super::modifier::{self, Points};

/// How a series gives a value at a time between its samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Interp {
    /// Its last value at or before that time (zero-order hold); none before its first.
    #[default]
    Hold,
    /// Linear between the samples around it; the last value after its last, none before
    /// its first.
    Linear,
}

impl std::str::FromStr for Interp {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "hold" | "zoh" | "previous" => Ok(Interp::Hold),
            "linear" => Ok(Interp::Linear),
            _ => Err(format!("{s:?}: hold or linear")),
        }
    }
}

/// A formula's functions of several arguments: name, arity (`None`: any, at least one) and
/// what it does (for completion and the docs). Every one-value modifier is a function too
/// (`sqrt(x)`, `abs(x)`).
pub const FUNCTIONS: &[(&str, Option<usize>, &str)] = &[
    ("hypot", None, "sqrt of the sum of squares of its arguments"),
    ("atan2", Some(2), "atan2(y, x), radians"),
    ("pow", Some(2), "pow(a, b) = a^b"),
    ("min", None, "the least of its arguments"),
    ("max", None, "the greatest of its arguments"),
];

/// Whether `name` is a function taking `n` arguments.
pub(crate) fn check_call(name: &str, n: usize) -> Result<(), String> {
    if modifier::unary(name).is_some() {
        return if n == 1 {
            Ok(())
        } else {
            Err(format!("{name}() takes one argument, not {n}"))
        };
    }
    match FUNCTIONS.iter().find(|f| f.0 == name) {
        Some((_, Some(k), _)) if *k != n => Err(format!("{name}() takes {k} arguments, not {n}")),
        Some(_) if n == 0 => Err(format!("{name}() takes at least one argument")),
        Some(_) => Ok(()),
        None => Err(format!(
            "unknown function `{name}` ({}, or any one-value modifier: sqrt, abs, sin ...)",
            FUNCTIONS.iter().map(|f| f.0).collect::<Vec<_>>().join(", ")
        )),
    }
}

/// A value in a formula.
#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    /// The same at every time.
    Num(f64),
    /// A series.
    Series(Points),
}

/// What a formula's leaves are: a path's series (by its place among the formula's paths, in
/// the order written), a `$name`'s value.
pub trait Leaves {
    /// The series of the `i`-th path, its modifiers applied.
    fn path(&mut self, i: usize) -> Result<Points, String>;
    /// A `$name`: a named series or a variable's number.
    fn var(&mut self, name: &str) -> Result<Val, String>;
}

/// Evaluates `n`.
pub fn eval(n: &Node, leaves: &mut dyn Leaves, interp: Interp) -> Result<Val, String> {
    let mut next_path = 0usize;
    eval_at(n, leaves, interp, &mut next_path)
}

fn eval_at(
    n: &Node,
    leaves: &mut dyn Leaves,
    interp: Interp,
    next_path: &mut usize,
) -> Result<Val, String> {
    Ok(match n {
        Node::Num(v) => Val::Num(*v),
        Node::Path(_) => {
            let i = *next_path;
            *next_path += 1;
            Val::Series(leaves.path(i)?)
        }
        Node::Var { name, .. } => leaves.var(name)?,
        Node::Neg(a) => combine(vec![eval_at(a, leaves, interp, next_path)?], interp, &|v| {
            -v[0]
        }),
        Node::Bin(op, a, b) => {
            let a = eval_at(a, leaves, interp, next_path)?;
            let b = eval_at(b, leaves, interp, next_path)?;
            let f: &dyn Fn(&[f64]) -> f64 = match op {
                BinOp::Add => &|v| v[0] + v[1],
                BinOp::Sub => &|v| v[0] - v[1],
                BinOp::Mul => &|v| v[0] * v[1],
                BinOp::Div => &|v| v[0] / v[1],
                BinOp::Rem => &|v| v[0] % v[1],
                BinOp::Pow => &|v| v[0].powf(v[1]),
            };
            combine(vec![a, b], interp, f)
        }
        Node::Call { name, args, .. } => {
            let vals = args
                .iter()
                .map(|a| eval_at(a, leaves, interp, next_path))
                .collect::<Result<Vec<_>, _>>()?;
            if let Some(u) = modifier::unary(name) {
                return Ok(combine(vals, interp, &|v| u(v[0])));
            }
            let f: &dyn Fn(&[f64]) -> f64 = match name.as_str() {
                "hypot" => &|v| v.iter().map(|x| x * x).sum::<f64>().sqrt(),
                "atan2" => &|v| v[0].atan2(v[1]),
                "pow" => &|v| v[0].powf(v[1]),
                "min" => &|v| v.iter().copied().fold(f64::INFINITY, f64::min),
                "max" => &|v| v.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                _ => return Err(format!("unknown function `{name}`")),
            };
            combine(vals, interp, f)
        }
        Node::Modified(a, mods) => match eval_at(a, leaves, interp, next_path)? {
            Val::Num(v) => {
                // A number's modifiers: those of one value apply, the others need a series.
                let mut pts = vec![(0u64, v)];
                for m in mods {
                    if modifier::unary(&m.name).is_none()
                        && !matches!(m.name.as_str(), "scale" | "offset")
                    {
                        return Err(format!(".@{} needs a series, not a number", m.name));
                    }
                    pts = modifier::apply(m, pts);
                }
                Val::Num(pts.first().map_or(f64::NAN, |p| p.1))
            }
            Val::Series(mut pts) => {
                for m in mods {
                    pts = modifier::apply(m, pts);
                }
                Val::Series(pts)
            }
        },
    })
}

/// `f` of the values sample by sample, aligned on the union of the series' times.
pub fn combine(vals: Vec<Val>, interp: Interp, f: &dyn Fn(&[f64]) -> f64) -> Val {
    let mut args = vec![0.0; vals.len()];
    if vals.iter().all(|v| matches!(v, Val::Num(_))) {
        for (a, v) in args.iter_mut().zip(&vals) {
            if let Val::Num(x) = v {
                *a = *x;
            }
        }
        return Val::Num(f(&args));
    }
    // One series alone: no alignment to do.
    if let [Val::Series(s)] = vals.as_slice() {
        return Val::Series(s.iter().map(|&(t, v)| (t, f(&[v]))).collect());
    }
    let times = union_times(&vals);
    let mut heads = vec![0usize; vals.len()];
    let mut out = Vec::with_capacity(times.len());
    for t in times {
        for ((a, v), h) in args.iter_mut().zip(&vals).zip(heads.iter_mut()) {
            *a = match v {
                Val::Num(x) => *x,
                Val::Series(s) => value_at(s, h, t, interp),
            };
        }
        out.push((t, f(&args)));
    }
    Val::Series(out)
}

/// The times of every series, in order, each once.
fn union_times(vals: &[Val]) -> Vec<u64> {
    let mut times: Vec<u64> = Vec::new();
    for v in vals {
        if let Val::Series(s) = v {
            if times.is_empty() {
                times = s.iter().map(|p| p.0).collect();
            } else {
                let mut merged = Vec::with_capacity(times.len() + s.len());
                let (mut i, mut j) = (0, 0);
                while i < times.len() || j < s.len() {
                    let next = match (times.get(i), s.get(j)) {
                        (Some(&a), Some(&(b, _))) if a <= b => {
                            i += 1;
                            a
                        }
                        (_, Some(&(b, _))) => {
                            j += 1;
                            b
                        }
                        (Some(&a), None) => {
                            i += 1;
                            a
                        }
                        (None, None) => break,
                    };
                    merged.push(next);
                }
                times = merged;
            }
        }
    }
    times.dedup();
    times
}

/// The value of `s` at `t`, `head` left at the first sample after `t` (the times asked for
/// only grow). Several samples at one time: the last of them.
fn value_at(s: &[(u64, f64)], head: &mut usize, t: u64, interp: Interp) -> f64 {
    while *head < s.len() && s[*head].0 <= t {
        *head += 1;
    }
    let Some(&(t0, v0)) = head.checked_sub(1).and_then(|i| s.get(i)) else {
        return f64::NAN;
    };
    match (interp, s.get(*head)) {
        (Interp::Linear, Some(&(t1, v1))) if t0 < t => {
            let w = (t - t0) as f64 / (t1 - t0) as f64;
            v0 + (v1 - v0) * w
        }
        _ => v0,
    }
}
