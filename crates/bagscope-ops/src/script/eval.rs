//! Series scripts over a recording: every source checked against the recording before any
//! work, read in one pass over the chunks, then the scripts run (each in its own Lua state, on
//! up to `threads` threads), a script that reads another's series after it.

use std::sync::atomic::AtomicBool;

use bagscope_reader::bag::Bag;
use bagscope_reader::encoding::Value;
use bagscope_reader::expr::{Expr, Node};
use bagscope_reader::series::{compile_source, expr_series, Env, Point, Source};

use super::series::{self, Dialect, Samples, SeriesScript};
use super::{plotjuggler, Limits, ScriptError, ScriptErrorKind};

/// A series a script made.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScriptSeries {
    /// Its name (the script's, or `SCRIPT.key`).
    pub name: String,
    /// Its points (`F64` values).
    pub points: Vec<Point>,
}

/// What one script gave.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScriptRun {
    /// Its series.
    pub series: Vec<ScriptSeries>,
    /// What it printed (the first lines).
    pub printed: Vec<String>,
    /// What the user should know: samples of a source that were not numbers, paths absent
    /// from some messages.
    pub notes: Vec<String>,
}

/// Where a script's source comes from.
#[derive(Debug, Clone)]
enum Origin {
    /// The k-th expression read.
    Read(usize),
    /// Script `i`'s series named `name`.
    Script(usize, String),
}

/// The expression of source `src` of a script of `dialect`.
fn expr_of(bag: &Bag, src: &str, dialect: Dialect) -> Result<Expr, String> {
    match dialect {
        Dialect::PlotJuggler => plotjuggler::path(src, bag.quick_summary())
            .map(|p| Expr {
                text: src.to_string(),
                root: Node::Path(p),
            })
            .ok_or_else(|| format!("{src:?}: no topic of this recording starts it")),
        Dialect::Bagscope => Expr::parse(src).map_err(|e| e.to_string()),
    }
}

/// Whether `name` is a series one of `scripts` makes (a script's name, or `NAME.key`).
pub fn makes(scripts: &[SeriesScript], name: &str) -> bool {
    script_source(scripts, name).is_some()
}

/// Which script's series `src` names, if any: a script's name, or `NAME.key`.
fn script_source(scripts: &[SeriesScript], src: &str) -> Option<(usize, String)> {
    if let Some(i) = scripts.iter().position(|s| s.name == src) {
        return Some((i, src.to_string()));
    }
    let (head, _) = src.rsplit_once('.')?;
    let i = scripts.iter().position(|s| s.name == head)?;
    Some((i, src.to_string()))
}

/// Every script's sources resolved against `bag` (the expressions to read, and where each
/// source comes from), nothing read yet.
#[allow(clippy::type_complexity)]
fn plan(
    bag: &Bag,
    scripts: &[SeriesScript],
    env: &Env,
) -> (Vec<Expr>, Vec<Result<Vec<Origin>, ScriptError>>) {
    let mut exprs: Vec<Expr> = Vec::new();
    let mut plans: Vec<Result<Vec<Origin>, ScriptError>> = Vec::new();
    // Every source checked before anything is read.
    for s in scripts {
        let fail = |m: String| ScriptError::script(&s.name, ScriptErrorKind::Source, m);
        let mut origins = Vec::new();
        let mut bad = None;
        if s.linked.trim().is_empty() {
            bad = Some(fail(
                "names no main series (PlotJuggler's linked source)".into(),
            ));
        }
        for src in std::iter::once(&s.linked).chain(&s.additional) {
            if bad.is_some() {
                break;
            }
            if let Some((i, n)) = script_source(scripts, src) {
                origins.push(Origin::Script(i, n));
                continue;
            }
            match expr_of(bag, src, s.dialect) {
                Ok(e) => {
                    for p in e.paths() {
                        let check = compile_source(
                            bag,
                            Source {
                                path: p,
                                text: &e.text,
                                vars: &env.vars,
                            },
                        );
                        if let Err(err) = check {
                            bad = Some(fail(format!("source {src:?}: {err}")));
                        }
                    }
                    let k = exprs
                        .iter()
                        .position(|x| x.text == e.text)
                        .unwrap_or_else(|| {
                            exprs.push(e);
                            exprs.len() - 1
                        });
                    origins.push(Origin::Read(k));
                }
                Err(m) => bad = Some(fail(format!("source {m}"))),
            }
        }
        plans.push(match bad {
            Some(e) => Err(e),
            None => Ok(origins),
        });
    }
    (exprs, plans)
}

/// What is wrong with `scripts` over `bag` before any work: a source that is not in the
/// recording, Lua that does not parse. Empty when all is well.
pub fn check(bag: &Bag, scripts: &[SeriesScript], env: &Env) -> Vec<ScriptError> {
    let (_, plans) = plan(bag, scripts, env);
    let mut out = Vec::new();
    for (p, s) in plans.into_iter().zip(scripts) {
        match p {
            Err(e) => out.push(e),
            Ok(_) => {
                if let Err(e) = series::parse(s) {
                    out.push(e);
                }
            }
        }
    }
    out
}

/// Runs `scripts` over `bag` within `range`. Each script's result is its own: one that fails
/// (a source not in the recording, a Lua error, a script it reads that failed) leaves the
/// others. Only a recording that cannot be read fails the whole.
pub fn evaluate(
    bag: &Bag,
    scripts: &[SeriesScript],
    env: &Env,
    range: (Option<u64>, Option<u64>),
    limits: Limits,
    cancel: &AtomicBool,
) -> crate::Result<Vec<Result<ScriptRun, ScriptError>>> {
    let threads = bag.options().threads();
    let (exprs, plans) = plan(bag, scripts, env);
    // One pass over the chunks for every source.
    let read = expr_series(bag, &exprs, env, range, threads, cancel)?;
    let mut notes: Vec<Vec<String>> = vec![Vec::new(); exprs.len()];
    let samples: Vec<Samples> = read
        .iter()
        .zip(&mut notes)
        .map(|(s, n)| {
            let mut skipped = 0u64;
            let v: Samples = s
                .points
                .iter()
                .filter_map(|p| {
                    let x = p.value.as_f64();
                    skipped += u64::from(x.is_none());
                    Some((p.time_ns, x?))
                })
                .collect();
            n.extend(s.problems.iter().cloned());
            if s.missing > 0 {
                n.push(format!("absent from {} messages", s.missing));
            }
            if skipped > 0 {
                n.push(format!("{skipped} values are not numbers (left out)"));
            }
            v
        })
        .collect();
    // Scripts in rounds: each round those whose sources are all made.
    let mut results: Vec<Option<Result<ScriptRun, ScriptError>>> = vec![None; scripts.len()];
    for (i, p) in plans.iter().enumerate() {
        if let Err(e) = p {
            results[i] = Some(Err(e.clone()));
        }
    }
    loop {
        let ready: Vec<usize> = (0..scripts.len())
            .filter(|&i| results[i].is_none())
            .filter(|&i| {
                plans[i].as_ref().is_ok_and(|f| {
                    f.iter().all(|f| match f {
                        Origin::Read(_) => true,
                        Origin::Script(j, _) => results[*j].is_some(),
                    })
                })
            })
            .collect();
        if ready.is_empty() {
            break;
        }
        let done: Vec<(usize, Result<ScriptRun, ScriptError>)> = std::thread::scope(|sc| {
            let mut out = Vec::new();
            for batch in ready.chunks(threads.max(1)) {
                let handles: Vec<_> = batch
                    .iter()
                    .map(|&i| {
                        let (s, origins) = (&scripts[i], plans[i].as_ref().ok());
                        let (samples, notes, results) = (&samples, &notes, &results);
                        sc.spawn(move || {
                            (
                                i,
                                run_one(
                                    s,
                                    origins.unwrap_or(&Vec::new()),
                                    samples,
                                    notes,
                                    results,
                                    scripts,
                                    limits,
                                    cancel,
                                ),
                            )
                        })
                    })
                    .collect();
                for h in handles {
                    if let Ok(r) = h.join() {
                        out.push(r);
                    }
                }
            }
            out
        });
        for (i, r) in done {
            results[i] = Some(r);
        }
    }
    Ok(results
        .into_iter()
        .zip(scripts)
        .map(|(r, s)| {
            r.unwrap_or_else(|| {
                Err(ScriptError::script(
                    &s.name,
                    ScriptErrorKind::Source,
                    "its sources read each other in a circle".into(),
                ))
            })
        })
        .collect())
}

/// Runs one script whose sources are all at hand.
#[allow(clippy::too_many_arguments)]
fn run_one(
    s: &SeriesScript,
    origins: &[Origin],
    samples: &[Samples],
    notes: &[Vec<String>],
    results: &[Option<Result<ScriptRun, ScriptError>>],
    scripts: &[SeriesScript],
    limits: Limits,
    cancel: &AtomicBool,
) -> Result<ScriptRun, ScriptError> {
    let mut owned: Vec<Samples> = Vec::new();
    let mut inputs: Vec<&[(u64, f64)]> = Vec::new();
    let mut run = ScriptRun::default();
    let mut srcs = std::iter::once(&s.linked).chain(&s.additional);
    // Another script's series as samples.
    for f in origins {
        let src = srcs.next().map(String::as_str).unwrap_or("");
        match f {
            Origin::Read(k) => {
                for n in &notes[*k] {
                    run.notes.push(format!("{src}: {n}"));
                }
                inputs.push(&samples[*k]);
            }
            Origin::Script(j, name) => match &results[*j] {
                Some(Ok(r)) => {
                    let found = r.series.iter().find(|x| x.name == *name);
                    owned.push(
                        found
                            .map(|x| {
                                x.points
                                    .iter()
                                    .filter_map(|p| Some((p.time_ns, p.value.as_f64()?)))
                                    .collect()
                            })
                            .unwrap_or_default(),
                    );
                    inputs.push(&[]);
                }
                _ => {
                    return Err(ScriptError::script(
                        &s.name,
                        ScriptErrorKind::Source,
                        format!("reads {:?}, which failed", scripts[*j].name),
                    ))
                }
            },
        }
    }
    // The other scripts' series in their places.
    let mut o = owned.iter();
    for (slot, f) in inputs.iter_mut().zip(origins) {
        if let Origin::Script(..) = f {
            if let Some(v) = o.next() {
                *slot = v;
            }
        }
    }
    let (main, extra) = inputs.split_first().ok_or_else(|| {
        ScriptError::script(&s.name, ScriptErrorKind::Source, "has no source".into())
    })?;
    let made = series::run(s, main, extra, limits, cancel)?;
    run.printed = made.printed;
    run.series = made
        .series
        .into_iter()
        .map(|(name, v)| ScriptSeries {
            name,
            points: v
                .into_iter()
                .map(|(time_ns, x)| Point {
                    time_ns,
                    value: Value::F64(x),
                })
                .collect(),
        })
        .collect();
    Ok(run)
}

/// Every series `runs` made, by name, and the errors, in the scripts' order.
pub fn flatten(runs: Vec<Result<ScriptRun, ScriptError>>) -> (Vec<ScriptSeries>, Vec<ScriptError>) {
    let (mut all, mut errors) = (Vec::new(), Vec::new());
    for r in runs {
        match r {
            Ok(r) => all.extend(r.series),
            Err(e) => errors.push(e),
        }
    }
    (all, errors)
}

/// The scripts of `scripts` that the series `wanted` need: those that make them and those they
/// read, in `scripts`' order.
pub fn needed(scripts: &[SeriesScript], wanted: &[&str]) -> Vec<SeriesScript> {
    let mut keep = vec![false; scripts.len()];
    let mut todo: Vec<usize> = wanted
        .iter()
        .filter_map(|w| script_source(scripts, w).map(|(i, _)| i))
        .collect();
    while let Some(i) = todo.pop() {
        if std::mem::replace(&mut keep[i], true) {
            continue;
        }
        let s = &scripts[i];
        for src in std::iter::once(&s.linked).chain(&s.additional) {
            if let Some((j, _)) = script_source(scripts, src) {
                todo.push(j);
            }
        }
    }
    scripts
        .iter()
        .zip(keep)
        .filter(|(_, k)| *k)
        .map(|(s, _)| s.clone())
        .collect()
}
