//! The compiled subset held against Lua 5.4 itself (the vendored interpreter mlua runs):
//! random expressions over integers, floats, booleans and nil at their edges, and snippets
//! with state.

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;

use super::compile::{self, Gen};
use super::num::{Val, V};
use super::{lex, parse, Program};
use crate::script::sandbox::{Limits, Sandbox};
use crate::script::series::{self, Dialect, SeriesScript};

/// xorshift64*: the same expressions on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[(self.next() % xs.len() as u64) as usize]
    }
}

const LEAVES: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "3",
    "7",
    "-7",
    "0.5",
    "-2.5",
    "3.0",
    "0.0",
    "-0.0",
    "1e308",
    "0x10",
    "math.huge",
    "-math.huge",
    "math.pi",
    "math.maxinteger",
    "math.mininteger",
    "9007199254740993",
    "2^53",
    "2^63",
    "-(2^63)",
    "(0/0)",
    "time",
    "value",
    "i",
    "n",
    "b",
    "z",
    "true",
    "false",
    "nil",
    "63",
    "64",
    "-64",
    "1e-300",
];

const BINARY: &[&str] = &[
    "+", "-", "*", "/", "//", "%", "^", "&", "|", "~", "<<", ">>", "==", "~=", "<", "<=", ">",
    ">=", "and", "or",
];

const MATH: &[(&str, usize)] = &[
    ("abs", 1),
    ("ceil", 1),
    ("floor", 1),
    ("sqrt", 1),
    ("sin", 1),
    ("cos", 1),
    ("tan", 1),
    ("asin", 1),
    ("acos", 1),
    ("atan", 1),
    ("atan", 2),
    ("exp", 1),
    ("log", 1),
    ("log", 2),
    ("fmod", 2),
    ("max", 1),
    ("max", 3),
    ("min", 2),
    ("tointeger", 1),
    ("ult", 2),
];

fn gen(r: &mut Rng, depth: u32) -> String {
    if depth == 0 || r.next().is_multiple_of(4) {
        return r.pick(LEAVES).to_string();
    }
    match r.next() % 6 {
        0 => format!("{}({})", r.pick(&["-", "not ", "~"]), gen(r, depth - 1)),
        1 => {
            let (f, n) = MATH[(r.next() % MATH.len() as u64) as usize];
            let args: Vec<String> = (0..n).map(|_| gen(r, depth - 1)).collect();
            format!("math.{f}({})", args.join(", "))
        }
        _ => format!(
            "({} {} {})",
            gen(r, depth - 1),
            r.pick(BINARY),
            gen(r, depth - 1)
        ),
    }
}

const PRELUDE: &str = "local i, n, b, z = 5, -3, true, nil\n";

/// Lua's value of `calc(time, value)` for `body`, or `None` when it raises an error.
fn lua_value(sb: &Sandbox, body: &str, t: f64, v: f64) -> Option<V> {
    let code = format!("return function(time, value)\n{PRELUDE}{body}\nend");
    let f: mlua::Function = sb.lua.load(&code).eval().ok()?;
    let r: mlua::Value = f.call((t, v)).ok()?;
    Some(match r {
        mlua::Value::Nil => V::Nil,
        mlua::Value::Boolean(b) => V::Bool(b),
        mlua::Value::Integer(i) => V::Int(i),
        mlua::Value::Number(x) => V::Float(x),
        other => panic!("{body}: Lua returned a {}", other.type_name()),
    })
}

/// The compiled value of the same, `Err(())` when it bails, `None` when not compiled.
fn compiled_value(body: &str, t: f64, v: f64) -> Option<Result<V, ()>> {
    let mut globals = HashMap::new();
    let params = ["time".to_string(), "value".to_string()];
    let toks = lex::tokens(&format!("{PRELUDE}{body}"))?;
    let chunk = parse::Parser::new(toks, &params, &mut globals).chunk()?;
    let mut gen = Gen::new(globals.len());
    let (code, at) = gen.chunk(&chunk.body, chunk.slots)?;
    let mut r = gen.init;
    r[at as usize] = Val::of(V::Float(t));
    r[at as usize + 1] = Val::of(V::Float(v));
    Some(
        compile::run(&code, &mut r)
            .map(|(a, _)| a.v())
            .map_err(|_| ()),
    )
}

fn same(a: V, b: V) -> bool {
    match (a, b) {
        (V::Float(x), V::Float(y)) => x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()),
        _ => a == b,
    }
}

#[test]
fn random_expressions_equal_lua_value_for_value() {
    let sb = Sandbox::new(Limits::default()).unwrap();
    let mut r = Rng(0x9e37_79b9_7f4a_7c15);
    let (mut agreed, mut errors, mut left) = (0, 0, 0);
    for k in 0..20_000 {
        let e = gen(&mut r, 1 + (k % 4) as u32);
        let body = format!("return {e}");
        let (t, v) = [(1.5, -0.25), (0.0, 3.0), (1e9, -1e-9)][k % 3];
        let want = lua_value(&sb, &body, t, v);
        let Some(got) = compiled_value(&body, t, v) else {
            // Constant folding it does not follow (`x - (true and 0)`).
            left += 1;
            continue;
        };
        match (want, got) {
            (None, Err(())) => errors += 1,
            (None, Ok(x)) => panic!("{body}: Lua raised an error, compiled gave {x:?}"),
            (Some(w), Err(())) => panic!("{body}: Lua gave {w:?}, compiled bailed"),
            (Some(w), Ok(x)) => {
                assert!(
                    same(w, x),
                    "{body} at ({t}, {v}): Lua {w:?}, compiled {x:?}"
                );
                agreed += 1;
            }
        }
    }
    // Both kinds are well represented.
    assert!(
        agreed > 8_000 && errors > 1_000 && left < agreed / 20,
        "{agreed} agreed, {errors} errors, {left} left to Lua"
    );
}

#[test]
fn statements_scopes_and_multiple_assignment_equal_lua() {
    let sb = Sandbox::new(Limits::default()).unwrap();
    let bodies = [
        "local a, b = 1\nreturn b",
        "local a, b = 1, 2, 3\nreturn a + b",
        "local x = 1\ndo local x = x + 10\ni = x end\nreturn x + i",
        "local x = time\nif x > 1 then x = 1 elseif x > 0 then x = 0.5 else x = -1 end\nreturn x",
        "local p, q = time, value\np, q = q, p\nreturn p - q",
        "if value < 0 then return end\nreturn 1",
        "if z then return 1 end;;\nreturn 2;",
        "i = i // 2 + n % 4 * 2 ^ 3 // 1\nreturn i",
        "local t = time and value or 0\nreturn t",
        "return -2 ^ 2 + 2 ^ -1 + 2 ^ 3 ^ 2",
        "return 1 + 2 .. 3 == nil",
        "return not nil == true",
        "return 7 // 0.0, 1",
        // Lua codes `x - 0` as `x + 0`: -0.0 - 0 is 0.0, and so with a folded 0; not with 0.0.
        "local m = -value * 0\nreturn 1 / (m - 0)",
        "local m = -value * 0\nreturn 1 / (m - (2 - 2))",
        "local m = -value * 0\nreturn 1 / (m - 0.0)",
        "local m = -value * 0\nreturn 1 / (m - -0)",
        // A name assigned from an expression that reads it.
        "i = value and i + 1\nreturn i",
        "i = z or i * 2\nreturn i",
        "i = (i + 1) * i - n\nreturn i",
        "local p, q = time, value\np, q = q + p, p\nreturn p * 10 + q",
        "local i = i + 1\nreturn i",
        "n = math.max(n, i, time)\nreturn n",
        "if not z then i = 1 elseif i then i = 2 end\nreturn i",
        "local x\nif value > 0 then x = 1 end\nreturn x",
        "return time > value, 2",
        "return time >= value and value or time",
    ];
    for body in bodies {
        for (t, v) in [(1.5, -0.25), (0.5, 3.0), (-2.0, 0.0)] {
            let want = lua_value(&sb, body, t, v);
            match compiled_value(body, t, v) {
                None => assert!(body.contains(".."), "not compiled: {body}"),
                Some(got) => match (want, got) {
                    (Some(w), Ok(x)) => assert!(same(w, x), "{body}: Lua {w:?}, compiled {x:?}"),
                    (None, Err(())) => {}
                    (w, x) => panic!("{body}: Lua {w:?}, compiled {x:?}"),
                },
            }
        }
    }
}

#[test]
fn what_is_not_the_subset_is_left_to_lua() {
    for body in [
        "for k = 1, 3 do end return 1",
        "return string.len('x')",
        "print(value) return value",
        "local f = function() end return 1",
        "return #value",
        "t = {} return 1",
        "return value.x",
        "return math.random()",
        "return math",
        "calc = 1 return 1",
        "local x <const> = 1 return x",
        "return 1 x = 2",
        "goto done ::done:: return 1",
        "return value ..",
    ] {
        assert!(compiled_value(body, 0.0, 0.0).is_none(), "compiled: {body}");
    }
    let deep = format!("return {}1{}", "(".repeat(500), ")".repeat(500));
    assert!(compiled_value(&deep, 0.0, 0.0).is_none());
    let long = format!("return 1{}", " + 1".repeat(5_000));
    assert!(compiled_value(&long, 0.0, 0.0).is_none());
}

#[test]
fn every_global_of_the_sandbox_is_reserved() {
    let sb = Sandbox::new(Limits::default()).unwrap();
    for pair in sb.lua.globals().pairs::<String, mlua::Value>() {
        let (name, _) = pair.unwrap();
        assert!(parse::reserved(&name), "{name} is a global of the sandbox");
    }
}

/// A run's series with their values' bits (NaN equal to NaN).
fn bits(m: &series::Made) -> Vec<(String, Vec<(u64, u64)>)> {
    m.series
        .iter()
        .map(|(n, s)| {
            (
                n.clone(),
                s.iter().map(|&(t, v)| (t, v.to_bits())).collect(),
            )
        })
        .collect()
}

fn script(global: &str, function: &str, dialect: Dialect) -> SeriesScript {
    SeriesScript {
        name: "s".into(),
        global: global.into(),
        function: Some(function.into()),
        linked: "/a".into(),
        additional: vec!["/b".into()],
        dialect,
    }
}

#[test]
fn a_series_run_compiled_equals_the_run_in_lua_and_errors_are_lua_s() {
    let main: Vec<(u64, f64)> = (0..500u64)
        .map(|k| {
            (
                1_000_000_000 + k * 10_000_000,
                (k as f64 * 0.37).sin() * 4.0,
            )
        })
        .collect();
    let b: Vec<(u64, f64)> = (0..80u64)
        .map(|k| (995_000_000 + k * 61_000_000, k as f64 - 40.0))
        .collect();
    let cancel = AtomicBool::new(false);
    let cases = [
        (
            "prevX = 0\nprevY = 0\nis_first = true",
            "if (is_first) then\n  is_first = false\n  prevX = time\n  prevY = value\nend\ndx = time - prevX\ndy = value - prevY\nprevX = time\nprevY = value\nreturn dy/dx",
        ),
        ("n = 0", "n = n + 1\nif n % 3 == 0 then return nil end\nreturn n * value + v1"),
        ("", "return time + 0.25, math.max(value, v1)"),
        ("acc = 0", "acc = acc + value * 0.01\nreturn acc"),
        ("", "return math.floor(v1) // 4 & 3"),
    ];
    for (global, function) in cases {
        for dialect in [Dialect::Bagscope, Dialect::PlotJuggler] {
            let s = script(global, function, dialect);
            let p = Program::compile(&s, 1).unwrap_or_else(|| panic!("not compiled: {function}"));
            let fast = p.run(&s, &main, &[&b], &cancel);
            let lua = series::run_in_lua(&s, &main, &[&b], Limits::default(), &cancel);
            match (fast, lua) {
                (Some(f), Ok(l)) => assert_eq!(bits(&f), bits(&l), "{function}"),
                (None, Err(_)) => {}
                (f, l) => panic!("{function} ({dialect:?}): compiled {f:?}, Lua {l:?}"),
            }
        }
    }
    // An error stops the compiled run, and `run` says Lua's error with its sample.
    let s = script(
        "n = 0",
        "n = n + 1\nif n == 7 then return value + nil end\nreturn value",
        Dialect::Bagscope,
    );
    let e = series::run(&s, &main, &[&b], Limits::default(), &cancel).unwrap_err();
    assert_eq!(e.sample, Some(6), "{e}");
    assert!(e.to_string().contains("arithmetic on a nil value"), "{e}");
}
