//! Expressions over a recording: every path read in one pass over the chunks, then each
//! expression's modifiers and formula applied to the series.

use std::sync::atomic::AtomicBool;

use super::{series_pass, Point, Series, Source};
use crate::bag::Bag;
use crate::encoding::Value;
use crate::error::{Error, Result};
use crate::expr::{apply, eval, Expr, Interp, Leaves, Lit, MsgPath, Points, Seg, Val, Vars};

/// What expressions are evaluated with.
#[derive(Debug, Clone, Default)]
pub struct Env {
    /// Values of `$variables` (in indexes, slices, filters, and numbers in formulas).
    pub vars: Vars,
    /// Named series: `$name` in a formula is that expression's series.
    pub named: Vec<(String, Expr)>,
    /// How series are aligned in formulas.
    pub interp: Interp,
}

impl Env {
    fn named(&self, name: &str) -> Option<&Expr> {
        self.named.iter().find(|(n, _)| n == name).map(|(_, e)| e)
    }
}

/// A path's identity, whatever its place in the text: its topic and steps, no modifiers.
fn key(p: &MsgPath) -> String {
    let segs: Vec<Seg> = p
        .segs
        .iter()
        .map(|s| match s.clone() {
            Seg::Field { name, .. } => Seg::Field { name, at: 0 },
            Seg::Slice {
                start, end, single, ..
            } => Seg::Slice {
                start,
                end,
                single,
                at: 0,
            },
            Seg::Filter(mut c) => {
                c.at = 0;
                Seg::Filter(c)
            }
        })
        .collect();
    format!("{}{segs:?}", p.topic)
}

/// The series of each of `exprs` within `[start_ns, end_ns)`: their paths (and those of the
/// named series they use) read in one pass on `threads` threads. An expression that is one path
/// with no modifier gives the messages' values as they are; any other gives numbers (`F64`),
/// NaN where a value is missing or undefined.
pub fn expr_series(
    bag: &Bag,
    exprs: &[Expr],
    env: &Env,
    (start_ns, end_ns): (Option<u64>, Option<u64>),
    threads: usize,
    cancel: &AtomicBool,
) -> Result<Vec<Series>> {
    // Every expression to read: those asked for, and the named series they use.
    let mut all: Vec<&Expr> = exprs.iter().collect();
    let mut k = 0;
    while k < all.len() {
        for v in all[k].root.vars() {
            if let Some(e) = env.named(v) {
                if !all.iter().any(|x| std::ptr::eq(*x, e)) {
                    all.push(e);
                }
            }
        }
        k += 1;
    }
    // Their paths, each once.
    let mut keys: Vec<String> = Vec::new();
    let mut leaves: Vec<(MsgPath, &str)> = Vec::new();
    for e in &all {
        for p in e.paths() {
            let kp = key(p);
            if !keys.contains(&kp) {
                keys.push(kp);
                let mut bare = p.clone();
                bare.mods.clear();
                leaves.push((bare, e.text.as_str()));
            }
        }
    }
    let sources: Vec<Source<'_>> = leaves
        .iter()
        .map(|(path, text)| Source {
            path,
            text,
            vars: &env.vars,
        })
        .collect();
    let read = series_pass(
        bag,
        &sources,
        (start_ns, end_ns),
        threads,
        cancel,
        &|_, _| {},
    )?;
    exprs
        .iter()
        .map(|e| {
            if e.plain_path().is_some() {
                let i = keys.iter().position(|k| *k == key(e.paths()[0]));
                return Ok(i.map(|i| read[i].clone()).unwrap_or_default());
            }
            let mut ctx = Ctx {
                env,
                keys: &keys,
                read: &read,
                expr: e,
                depth: 0,
                used: Vec::new(),
            };
            let v = eval(&e.root, &mut ctx, env.interp)
                .map_err(|r| Error::Invalid(format!("{}: {r}", e.text)))?;
            let Val::Series(points) = v else {
                return Err(Error::Invalid(format!(
                    "{}: the formula reads no path, so it has no times to give values at",
                    e.text
                )));
            };
            let mut s = Series {
                points: points
                    .into_iter()
                    .map(|(time_ns, v)| Point {
                        time_ns,
                        value: Value::F64(v),
                    })
                    .collect(),
                ..Series::default()
            };
            for i in ctx.used {
                s.missing += read[i].missing;
                s.problems.extend(read[i].problems.iter().cloned());
            }
            Ok(s)
        })
        .collect()
}

/// A formula's leaves over the series read.
struct Ctx<'a> {
    env: &'a Env,
    keys: &'a [String],
    read: &'a [Series],
    expr: &'a Expr,
    /// Named series within named series: stops a loop.
    depth: usize,
    /// The series read that the formula used.
    used: Vec<usize>,
}

impl Leaves for Ctx<'_> {
    fn path(&mut self, i: usize) -> std::result::Result<Points, String> {
        let paths = self.expr.paths();
        let p = paths.get(i).ok_or("no such path")?;
        let k = key(p);
        let at = self
            .keys
            .iter()
            .position(|x| *x == k)
            .ok_or("a path not read")?;
        if !self.used.contains(&at) {
            self.used.push(at);
        }
        let mut pts: Points = self.read[at]
            .points
            .iter()
            .map(|p| (p.time_ns, p.value.as_f64().unwrap_or(f64::NAN)))
            .collect();
        for m in &p.mods {
            pts = apply(m, pts);
        }
        Ok(pts)
    }

    fn var(&mut self, name: &str) -> std::result::Result<Val, String> {
        if let Some(e) = self.env.named(name) {
            if self.depth > 16 {
                return Err(format!("${name} refers to itself"));
            }
            let mut inner = Ctx {
                env: self.env,
                keys: self.keys,
                read: self.read,
                expr: e,
                depth: self.depth + 1,
                used: Vec::new(),
            };
            let v = eval(&e.root, &mut inner, self.env.interp)?;
            for u in inner.used {
                if !self.used.contains(&u) {
                    self.used.push(u);
                }
            }
            return Ok(v);
        }
        match self.env.vars.get(name) {
            Some(Lit::Int(i)) => Ok(Val::Num(*i as f64)),
            Some(Lit::Float(f)) => Ok(Val::Num(*f)),
            Some(Lit::Bool(b)) => Ok(Val::Num(f64::from(u8::from(*b)))),
            Some(other) => Err(format!("${name} is {other:?}, not a number")),
            None => Err(format!("no series or variable named ${name}")),
        }
    }
}
