//! One series script run over series in memory, as PlotJuggler runs a custom function
//! (`plotjuggler_app/transforms/lua_custom_function.cpp`): the global section once, then
//! `calc(time, value, v1, …, vN)` for every sample of the main series, each additional source
//! at its sample **nearest** in time (an empty source gives NaN).

use std::sync::atomic::{AtomicBool, Ordering};

use mlua::{Function, MultiValue, Value};

use super::sandbox::{Limits, Sandbox};
use super::{Part, ScriptError, ScriptErrorKind};

/// How a script's return is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
pub enum Dialect {
    /// bagscope's: `nil` (or nothing) gives no point for that sample.
    #[default]
    Bagscope,
    /// PlotJuggler's: `nil` is an error that stops the series, as PlotJuggler has it.
    PlotJuggler,
}

/// A series script (in a layout file: `name`, `global`, `function`, `source`, `sources`,
/// `dialect`).
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
pub struct SeriesScript {
    /// Its name: the name of the series it makes (several: `NAME.key`).
    pub name: String,
    /// Run once, before the first sample (PlotJuggler's "global variables"); a script file
    /// is all global section and defines `calc` itself.
    pub global: String,
    /// The body of `calc(time, value, v1, …)`, or `None` when the global section defines
    /// `calc`.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub function: Option<String>,
    /// The main series (PlotJuggler's linked source): an expression, or another script's
    /// series by name.
    #[cfg_attr(feature = "serde", serde(rename = "source"))]
    pub linked: String,
    /// The additional sources `v1…vN`.
    #[cfg_attr(feature = "serde", serde(rename = "sources"))]
    pub additional: Vec<String>,
    /// How its return is read.
    pub dialect: Dialect,
}

impl SeriesScript {
    /// Reads one from a layout file's JSON (the keys the serde form writes).
    pub fn from_json(v: &serde_json::Value) -> Result<SeriesScript, String> {
        let text = |k: &str| {
            v.get(k)
                .and_then(serde_json::Value::as_str)
                .map(str::to_string)
        };
        let name = text("name").ok_or("a script without a \"name\"")?;
        Ok(SeriesScript {
            global: text("global").unwrap_or_default(),
            function: text("function"),
            linked: text("source").unwrap_or_default(),
            additional: v
                .get("sources")
                .and_then(serde_json::Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect(),
            dialect: match v.get("dialect").and_then(serde_json::Value::as_str) {
                Some("plotjuggler") => Dialect::PlotJuggler,
                Some("bagscope") | None => Dialect::Bagscope,
                Some(other) => {
                    return Err(format!(
                        "script {name:?}: a dialect {other:?} that is not bagscope or plotjuggler"
                    ))
                }
            },
            name,
        })
    }
}

/// A series in memory: times (ns) and numbers.
pub type Samples = Vec<(u64, f64)>;

/// What a script made.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Made {
    /// Its series: `(name, samples)`; the first is the script's own name when it returned
    /// numbers or points, then `NAME.key` for each key of a table of named numbers, in the
    /// order first met.
    pub series: Vec<(String, Samples)>,
    /// What it printed (the first lines).
    pub printed: Vec<String>,
}

/// `e` with its line within `text` (an error at the wrapper's closing `end`, after a function
/// body's last line, is said at that last line).
fn within(mut e: ScriptError, text: &str) -> ScriptError {
    let n = text.trim_end().lines().count().max(1) as u32;
    e.line = e.line.map(|l| l.min(n));
    e
}

/// Whether `script`'s Lua parses (nothing run).
pub fn parse(script: &SeriesScript) -> Result<(), ScriptError> {
    let name = script.name.as_str();
    let lua = mlua::Lua::new();
    lua.load(&script.global)
        .set_name("=global")
        .into_function()
        .map_err(|e| lua_error(name, Part::Global, &e, 0))?;
    if let Some(body) = &script.function {
        let code = format!("function calc(...)\n{body}\nend");
        lua.load(&code)
            .set_name("=function")
            .into_function()
            .map_err(|e| within(lua_error(name, Part::Function, &e, 1), body))?;
    }
    Ok(())
}

/// `NAME:LINE: message` of a chunk named `=NAME`, as (line, message).
fn split_lua_message(msg: &str, chunk: &str) -> (Option<u32>, String) {
    // The first line only: a traceback follows it.
    let first = msg.lines().next().unwrap_or(msg);
    let first = first
        .strip_prefix("runtime error: ")
        .or_else(|| first.strip_prefix("syntax error: "))
        .unwrap_or(first);
    if let Some(rest) = first.strip_prefix(chunk).and_then(|r| r.strip_prefix(':')) {
        if let Some((n, m)) = rest.split_once(':') {
            if let Ok(n) = n.parse::<u32>() {
                return (Some(n), m.trim_start().to_string());
            }
        }
    }
    (None, first.to_string())
}

/// A script error of Lua's `e` in `part`.
pub(crate) fn lua_error(name: &str, part: Part, e: &mlua::Error, shift: u32) -> ScriptError {
    let chunk = match part {
        Part::Function => "function",
        _ => "global",
    };
    // The error a callback or the hook raised is inside a wrapper.
    let mut inner = e;
    while let mlua::Error::CallbackError { cause, .. } = inner {
        inner = cause;
    }
    let (kind, text) = match inner {
        mlua::Error::SyntaxError { message, .. } => (ScriptErrorKind::Syntax, message.clone()),
        mlua::Error::MemoryError(_) => (
            ScriptErrorKind::Memory,
            "ran past its memory limit".to_string(),
        ),
        mlua::Error::RuntimeError(m) if m.contains("instructions (a loop that does not end?)") => {
            (ScriptErrorKind::Budget, m.clone())
        }
        other => (ScriptErrorKind::Runtime, other.to_string()),
    };
    let (mut line, mut message) = split_lua_message(&text, chunk);
    if kind == ScriptErrorKind::Budget {
        // The hook's own `chunk:line: ` before its words.
        if let Some(i) = message.find("stopped after") {
            let before = message[..i].trim_end().trim_end_matches(':');
            let l = before
                .rsplit(':')
                .next()
                .and_then(|n| n.trim().parse().ok());
            line = l.or(line);
            message = message[i..].to_string();
        }
    }
    ScriptError {
        script: name.to_string(),
        kind,
        part,
        line: line.map(|l| l.saturating_sub(shift).max(1)),
        time_ns: None,
        sample: None,
        message,
    }
}

/// The values of `source` at each of `times` (ns): its sample nearest in time (PlotJuggler's
/// alignment: the first at or after, or the one before when strictly nearer), NaN where it is
/// empty.
pub fn align_nearest(times: &[u64], source: &[(u64, f64)]) -> Vec<f64> {
    let xs: Vec<f64> = source.iter().map(|&(t, _)| t as f64 / 1e9).collect();
    let mut from = 0;
    times
        .iter()
        .map(|&t| nearest(&xs, t as f64 / 1e9, &mut from).map_or(f64::NAN, |i| source[i].1))
        .collect()
}

/// The index of `xs`' sample nearest `x`, as PlotJuggler's `getIndexFromX` finds it: the first
/// at or after `x`, or the one before it when that is strictly nearer; the last when all are
/// before. `from` is where the search may start (the answer for an earlier `x`).
pub(crate) fn nearest(xs: &[f64], x: f64, from: &mut usize) -> Option<usize> {
    if xs.is_empty() {
        return None;
    }
    let mut i = *from;
    while i < xs.len() && xs[i] < x {
        i += 1;
    }
    *from = i;
    if i >= xs.len() {
        return Some(xs.len() - 1);
    }
    if i > 0 && (xs[i - 1] - x).abs() < (xs[i] - x).abs() {
        return Some(i - 1);
    }
    Some(i)
}

/// Runs `script` over `main` (its main series) and `extra` (its additional sources, in order),
/// within `limits`; `cancel` stops it (what was made so far is dropped).
///
/// A script written in the numbers-only subset of Lua (see `script::numeric`) runs compiled,
/// without a Lua state; any other, or one that would raise an error, runs in Lua.
pub fn run(
    script: &SeriesScript,
    main: &[(u64, f64)],
    extra: &[&[(u64, f64)]],
    limits: Limits,
    cancel: &AtomicBool,
) -> Result<Made, ScriptError> {
    if let Some(p) = super::numeric::Program::compile(script, extra.len()) {
        if let Some(made) = p.run(script, main, extra, cancel) {
            return Ok(made);
        }
    }
    run_in_lua(script, main, extra, limits, cancel)
}

/// Whether `script` (with `extra` additional sources) runs compiled rather than in Lua (as
/// long as it raises no error).
pub fn compiled(script: &SeriesScript, extra: usize) -> bool {
    super::numeric::Program::compile(script, extra).is_some()
}

/// [`run`] in Lua always (the compiled subset left out): what the compiled run is held against.
pub fn run_in_lua(
    script: &SeriesScript,
    main: &[(u64, f64)],
    extra: &[&[(u64, f64)]],
    limits: Limits,
    cancel: &AtomicBool,
) -> Result<Made, ScriptError> {
    let name = script.name.as_str();
    let sb = Sandbox::new(limits).map_err(|e| lua_error(name, Part::Script, &e, 0))?;
    let lua = &sb.lua;
    sb.start_call();
    lua.load(&script.global)
        .set_name("=global")
        .exec()
        .map_err(|e| lua_error(name, Part::Global, &e, 0))?;
    let calc: Function = match &script.function {
        Some(body) => {
            let params: Vec<String> = (1..=extra.len()).map(|i| format!("v{i}")).collect();
            let mut head = String::from("function calc(time, value");
            for p in &params {
                head.push_str(", ");
                head.push_str(p);
            }
            head.push_str(")\n");
            let code = format!("{head}{body}\nend");
            sb.start_call();
            lua.load(&code)
                .set_name("=function")
                .exec()
                .map_err(|e| within(lua_error(name, Part::Function, &e, 1), body))?;
            lua.globals().get("calc").map_err(|_| {
                ScriptError::script(
                    name,
                    ScriptErrorKind::Syntax,
                    "calc is not a function".into(),
                )
            })?
        }
        None => match lua.globals().get::<Value>("calc") {
            Ok(Value::Function(f)) => f,
            _ => {
                return Err(ScriptError::script(
                    name,
                    ScriptErrorKind::Syntax,
                    "defines no function calc(time, value, ...): a script file defines it".into(),
                ))
            }
        },
    };
    // A script that cannot repeat itself runs a bounded number of instructions a call: its
    // calls run without the count hook, which Lua checks at every instruction while it is set
    // (about 30 % of a short snippet's time). The hook stays for every other script.
    if script.function.as_deref().is_some_and(bounded) && bounded(&script.global) {
        lua.remove_hook();
    }
    // The function's part: the wrapper's (its lines shifted by one) or the file's own.
    let (part, shift) = match script.function {
        Some(_) => (Part::Function, 1),
        None => (Part::Global, 0),
    };
    let xs: Vec<Vec<f64>> = extra
        .iter()
        .map(|s| s.iter().map(|&(t, _)| t as f64 / 1e9).collect())
        .collect();
    let mut cursors = vec![0usize; extra.len()];
    let mut out = Made::default();
    let mut own: Samples = Vec::with_capacity(main.len());
    let mut named: Vec<(String, Samples)> = Vec::new();
    let mut args: Vec<f64> = Vec::with_capacity(2 + extra.len());
    for (k, &(t_ns, value)) in main.iter().enumerate() {
        if k % 4096 == 0 && cancel.load(Ordering::Relaxed) {
            return Ok(Made::default());
        }
        let t = t_ns as f64 / 1e9;
        args.clear();
        args.push(t);
        args.push(value);
        for (j, s) in extra.iter().enumerate() {
            let v = nearest(&xs[j], t, &mut cursors[j]).map_or(f64::NAN, |i| s[i].1);
            args.push(v);
        }
        sb.start_call();
        let at = |mut e: ScriptError| {
            e.time_ns = Some(t_ns);
            e.sample = Some(k as u64);
            e
        };
        // Up to three sources, the arguments and the first two returns go through the Lua
        // stack as they are (no list of values made for each call).
        let r: mlua::Result<(Value, Value)> = match args[..] {
            [t, v] => calc.call((t, v)),
            [t, v, a] => calc.call((t, v, a)),
            [t, v, a, b] => calc.call((t, v, a, b)),
            [t, v, a, b, c] => calc.call((t, v, a, b, c)),
            _ => calc
                .call::<MultiValue>(MultiValue::from_iter(
                    args.iter().map(|&x| Value::Number(x)),
                ))
                .map(|m| {
                    let mut it = m.into_iter();
                    (
                        it.next().unwrap_or(Value::Nil),
                        it.next().unwrap_or(Value::Nil),
                    )
                }),
        };
        let (first, second) = r.map_err(|e| at(lua_error(name, part, &e, shift)))?;
        take_return(script, t_ns, (&first, &second), &mut own, &mut named).map_err(|m| {
            at(ScriptError {
                script: name.to_string(),
                kind: ScriptErrorKind::Return,
                part,
                line: None,
                time_ns: None,
                sample: None,
                message: m,
            })
        })?;
    }
    if !own.is_empty() || named.is_empty() {
        own.sort_by_key(|p| p.0);
        out.series.push((name.to_string(), own));
    }
    for (key, s) in named {
        out.series.push((format!("{name}.{key}"), s));
    }
    out.printed = sb.printed();
    Ok(out)
}

/// Whether Lua code `text` cannot repeat itself: none of the words that make a loop or a
/// function (`while`, `for`, `repeat`, `goto`, `function`) is in it, anywhere (in a comment or
/// a string too: such a script just keeps the budget's hook). The sandbox has no `load` and no
/// coroutines, so without them every statement runs at most once a call, and a call's
/// instructions are bounded by the code's length, far below the budget: it needs no counting.
/// (What runs in C, `string.rep` say, no hook interrupts either way.)
pub(crate) fn bounded(text: &str) -> bool {
    const WORDS: [&str; 5] = ["while", "for", "repeat", "goto", "function"];
    !text
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .any(|w| WORDS.contains(&w))
}

/// A Lua number as f64 (integers converted), else `None`.
fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(x) => Some(*x),
        Value::Integer(i) => Some(*i as f64),
        _ => None,
    }
}

/// Seconds as ns, or what is wrong with them.
pub(crate) fn ns_of(t: f64) -> Result<u64, String> {
    if (0.0..1.8e10).contains(&t) {
        Ok((t * 1e9).round() as u64)
    } else {
        Err(format!(
            "returned a time of {t} s, not a time of the recording"
        ))
    }
}

/// One call's return into the series.
fn take_return(
    script: &SeriesScript,
    t_ns: u64,
    (first, second): (&Value, &Value),
    own: &mut Samples,
    named: &mut Vec<(String, Samples)>,
) -> Result<(), String> {
    let second = Some(second);
    match first {
        Value::Nil => match script.dialect {
            Dialect::Bagscope => Ok(()),
            Dialect::PlotJuggler => Err(
                "returned nil: PlotJuggler stops the series here; return a number, a (time, value) pair or a table of {time, value} points"
                    .into(),
            ),
        },
        v if number(v).is_some() => {
            let x = number(v).unwrap_or(f64::NAN);
            match second.and_then(number) {
                // `return time, value`.
                Some(y) => own.push((ns_of(x)?, y)),
                None => own.push((t_ns, x)),
            }
            Ok(())
        }
        Value::Table(tab) => {
            if tab.raw_len() > 0 {
                // `{ {t, v}, {t, v}, … }`.
                for p in tab.clone().sequence_values::<Value>() {
                    let p = p.map_err(|e| e.to_string())?;
                    let Value::Table(p) = p else {
                        return Err("returned a table whose items are not {time, value} pairs".into());
                    };
                    let (a, b) = (p.raw_get::<Value>(1), p.raw_get::<Value>(2));
                    match (a.ok().as_ref().and_then(number), b.ok().as_ref().and_then(number)) {
                        (Some(x), Some(y)) => own.push((ns_of(x)?, y)),
                        _ => {
                            return Err(
                                "returned a table whose items are not {time, value} pairs".into()
                            )
                        }
                    }
                }
                return Ok(());
            }
            // `{ key = number, … }`: several named series.
            for pair in tab.clone().pairs::<Value, Value>() {
                let (k, v) = pair.map_err(|e| e.to_string())?;
                let key = match &k {
                    Value::String(s) => s.to_string_lossy(),
                    other => {
                        return Err(format!(
                            "returned a table with a {} key; named series have text keys",
                            other.type_name()
                        ))
                    }
                };
                let Some(y) = number(&v) else {
                    if v.is_nil() {
                        continue;
                    }
                    return Err(format!("returned {key} = a {}, not a number", v.type_name()));
                };
                match named.iter_mut().find(|(n, _)| *n == key) {
                    Some((_, s)) => s.push((t_ns, y)),
                    None => named.push((key, vec![(t_ns, y)])),
                }
            }
            Ok(())
        }
        other => Err(format!(
            "returned a {}: return a number, a (time, value) pair or a table of {{time, value}} points",
            other.type_name()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script(global: &str, function: &str, extra: usize) -> SeriesScript {
        SeriesScript {
            name: "s".into(),
            global: global.into(),
            function: Some(function.into()),
            linked: "/a.x".into(),
            additional: (0..extra).map(|i| format!("/b{i}.x")).collect(),
            dialect: Dialect::PlotJuggler,
        }
    }

    fn go(
        s: &SeriesScript,
        main: &[(u64, f64)],
        extra: &[&[(u64, f64)]],
    ) -> Result<Made, ScriptError> {
        run(s, main, extra, Limits::default(), &AtomicBool::new(false))
    }

    #[test]
    fn only_code_that_cannot_repeat_itself_runs_without_the_hook() {
        assert!(bounded("dx = time - prevX\nreturn dy / dx"));
        assert!(bounded("forward = 1; is_first = true -- the first"));
        for text in [
            "while true do end",
            "for i = 1, 10 do end",
            "repeat until false",
            "::a:: goto a",
            "f = function() end",
            "x = 1 --[[ for ]]",
        ] {
            assert!(!bounded(text), "{text}");
        }
        // A loop in the global section keeps the hook for the calls (a function it defines
        // may loop): stopped by the budget.
        let limits = Limits {
            instructions: 10_000,
            memory: 1 << 20,
        };
        let s = script("function spin() while true do end end", "spin()", 0);
        let e = run(&s, &[(0, 0.0)], &[], limits, &AtomicBool::new(false)).unwrap_err();
        assert!(
            e.message.contains("stopped after 10000 instructions"),
            "{e}"
        );
        // A call of loop-free code runs without it, and its result is the same.
        let s = script("k = 2", "return value * k", 0);
        let m = run(&s, &[(0, 1.5)], &[], limits, &AtomicBool::new(false)).unwrap();
        assert_eq!(m.series[0].1, [(0, 3.0)]);
    }

    #[test]
    fn state_is_kept_from_sample_to_sample() {
        let s = script("sum = 0", "sum = sum + value\nreturn sum", 0);
        let main: Vec<(u64, f64)> = (0..5).map(|i| (i * 1_000_000_000, i as f64)).collect();
        let m = go(&s, &main, &[]).unwrap();
        let v: Vec<f64> = m.series[0].1.iter().map(|p| p.1).collect();
        assert_eq!(v, [0.0, 1.0, 3.0, 6.0, 10.0]);
    }

    #[test]
    fn additional_sources_take_the_nearest_sample_ties_to_the_later() {
        let s = script("", "return v1", 1);
        let s_ = |x: f64| (x * 1e9) as u64;
        let main = [
            (0, 0.0),
            (s_(2.5), 0.0),
            (s_(3.75), 0.0),
            (s_(5.0), 0.0),
            (s_(99.0), 0.0),
        ];
        let b = [(s_(1.0), 1.0), (s_(4.0), 2.0), (s_(6.0), 3.0)];
        let m = go(&s, &main, &[&b]).unwrap();
        let v: Vec<f64> = m.series[0].1.iter().map(|p| p.1).collect();
        // 2.5 s is 1.5 s from 1 s and from 4 s: the later; 5 s is 1 s from 4 s and 6 s: the later.
        assert_eq!(v, [1.0, 2.0, 2.0, 3.0, 3.0]);
        let empty: [(u64, f64); 0] = [];
        let m = go(&s, &main[..1], &[&empty]).unwrap();
        assert!(m.series[0].1[0].1.is_nan());
    }

    #[test]
    fn returns_of_every_form() {
        let main = [(1_000_000_000u64, 2.0)];
        let pair = go(&script("", "return time + 1, value * 2", 0), &main, &[]).unwrap();
        assert_eq!(pair.series[0].1, [(2_000_000_000, 4.0)]);
        let pts = go(
            &script("", "return {{time, 1}, {time + 0.5, 2}}", 0),
            &main,
            &[],
        )
        .unwrap();
        assert_eq!(
            pts.series[0].1,
            [(1_000_000_000, 1.0), (1_500_000_000, 2.0)]
        );
        let named = go(&script("", "return {a = value, b = -value}", 0), &main, &[]).unwrap();
        let names: Vec<&str> = named.series.iter().map(|s| s.0.as_str()).collect();
        assert!(
            names.contains(&"s.a") && names.contains(&"s.b"),
            "{names:?}"
        );
        let nil = go(&script("", "return nil", 0), &main, &[]).unwrap_err();
        assert_eq!(nil.kind, ScriptErrorKind::Return);
        let mut s = script("", "if value > 1 then return nil end return value", 0);
        s.dialect = Dialect::Bagscope;
        assert_eq!(
            go(&s, &[(0, 1.0), (1, 2.0)], &[]).unwrap().series[0].1,
            [(0, 1.0)]
        );
    }

    #[test]
    fn errors_name_the_part_the_line_and_the_sample() {
        let main = [(0u64, 1.0), (1_000_000_000, 2.0), (2_000_000_000, 3.0)];
        let e = go(
            &script(
                "x = 1",
                "local y = 2\nif value > 2 then error('boom') end\nreturn y",
                0,
            ),
            &main,
            &[],
        )
        .unwrap_err();
        assert_eq!(
            (e.kind, e.part, e.line, e.sample),
            (ScriptErrorKind::Runtime, Part::Function, Some(2), Some(2))
        );
        assert!(e.to_string().contains("boom"), "{e}");
        let e = go(&script("x = = 1", "return 1", 0), &main, &[]).unwrap_err();
        assert_eq!(
            (e.kind, e.part, e.line),
            (ScriptErrorKind::Syntax, Part::Global, Some(1))
        );
        let e = go(&script("", "while true do end", 0), &main, &[]).unwrap_err();
        assert_eq!((e.kind, e.sample), (ScriptErrorKind::Budget, Some(0)));
        let e = go(
            &script(
                "t = {}",
                "for i = 1, 1e9 do t[i] = string.rep('x', 100) .. i end",
                0,
            ),
            &main,
            &[],
        )
        .unwrap_err();
        assert_eq!(e.kind, ScriptErrorKind::Memory, "{e}");
        let e = go(&script("io.open('/etc/passwd')", "return 1", 0), &main, &[]).unwrap_err();
        assert_eq!(e.kind, ScriptErrorKind::Runtime);
        assert!(e.message.contains("io"), "{e}");
        for banned in [
            "require",
            "load",
            "dofile",
            "loadfile",
            "debug",
            "os.execute",
            "os.remove",
            "string.dump",
        ] {
            let e = go(
                &script(
                    &format!("assert({banned} == nil, '{banned}')"),
                    "return 1",
                    0,
                ),
                &main,
                &[],
            );
            assert!(e.is_ok(), "{banned} is reachable: {e:?}");
        }
    }
}
