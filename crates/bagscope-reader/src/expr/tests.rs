//! The language on one message: a table of paths with their values, errors with their
//! columns, modifiers and formulas on small series.
#![allow(clippy::unwrap_used)]

use super::*;
use crate::definition::msg::MsgDef;
use crate::encoding::Plan;

const DEF: &str = "std_msgs/Header header\ngeometry_msgs/Quaternion orientation\n\
geometry_msgs/Vector3 vel\nfloat64[] xs\nint32[4] fixed\nt/Item[] items\nstring name\nbool flag\n\
uint8[] raw\n\
================\nMSG: std_msgs/Header\nuint32 seq\ntime stamp\nstring frame_id\n\
================\nMSG: geometry_msgs/Quaternion\nfloat64 x\nfloat64 y\nfloat64 z\nfloat64 w\n\
================\nMSG: geometry_msgs/Vector3\nfloat64 x\nfloat64 y\nfloat64 z\n\
================\nMSG: t/Item\nint32 id\nfloat32 value\nstring label\nt/Status[] status\n\
================\nMSG: t/Status\nuint8 level\nstring name\n";

/// The quaternion of roll 0.1, pitch 0.2, yaw 0.3 (x, y, z, w).
fn quat() -> [f64; 4] {
    let (r, p, y) = (0.05f64, 0.1f64, 0.15f64);
    let (cr, sr, cp, sp, cy, sy) = (r.cos(), r.sin(), p.cos(), p.sin(), y.cos(), y.sin());
    [
        sr * cp * cy - cr * sp * sy,
        cr * sp * cy + sr * cp * sy,
        cr * cp * sy - sr * sp * cy,
        cr * cp * cy + sr * sp * sy,
    ]
}

fn s(out: &mut Vec<u8>, t: &str) {
    out.extend_from_slice(&(t.len() as u32).to_le_bytes());
    out.extend_from_slice(t.as_bytes());
}

/// The message (ROS 1 serialization).
fn message() -> Vec<u8> {
    let mut m = Vec::new();
    m.extend_from_slice(&7u32.to_le_bytes());
    m.extend_from_slice(&100u32.to_le_bytes());
    m.extend_from_slice(&500u32.to_le_bytes());
    s(&mut m, "base");
    for v in quat() {
        m.extend_from_slice(&v.to_le_bytes());
    }
    for v in [3.0f64, 4.0, 12.0] {
        m.extend_from_slice(&v.to_le_bytes());
    }
    m.extend_from_slice(&5u32.to_le_bytes());
    for v in [1.5f64, 2.5, 3.5, 4.5, 5.5] {
        m.extend_from_slice(&v.to_le_bytes());
    }
    for v in [10i32, 20, 30, 40] {
        m.extend_from_slice(&v.to_le_bytes());
    }
    /// id, value, label, status (level, name).
    type Item<'a> = (i32, f32, &'a str, &'a [(u8, &'a str)]);
    let items: [Item<'_>; 3] = [
        (1, 0.5, "a", &[(0, "ok")]),
        (2, 1.5, "b", &[(2, "motor"), (1, "x")]),
        (3, 2.5, "a", &[]),
    ];
    m.extend_from_slice(&3u32.to_le_bytes());
    for (id, value, label, status) in items {
        m.extend_from_slice(&id.to_le_bytes());
        m.extend_from_slice(&value.to_le_bytes());
        s(&mut m, label);
        m.extend_from_slice(&(status.len() as u32).to_le_bytes());
        for (level, name) in status {
            m.push(*level);
            s(&mut m, name);
        }
    }
    s(&mut m, "robot");
    m.push(1);
    m.extend_from_slice(&3u32.to_le_bytes());
    m.extend_from_slice(&[9, 8, 7]);
    m
}

fn vars() -> Vars {
    let mut v = Vars::new();
    v.insert("i".into(), Lit::Int(2));
    v.insert("j".into(), Lit::Int(3));
    v.insert("neg".into(), Lit::Int(-2));
    v.insert("want".into(), Lit::Int(3));
    v.insert("lab".into(), Lit::Str("b".into()));
    v
}

/// The values of `text` in the message.
fn values(text: &str) -> Result<Vec<f64>, ExprError> {
    let plan = Plan::new(MsgDef::parse("t/Rich", DEF).unwrap());
    let e = Expr::parse(text)?;
    let Node::Path(p) = &e.root else {
        panic!("{text} is not a path");
    };
    let g = compile(&plan, p, &vars(), text)?;
    let mut out = Vec::new();
    g.values(&message(), &mut out);
    Ok(out.iter().map(|v| v.as_f64().unwrap()).collect())
}

#[test]
fn the_documented_paths_give_their_values() {
    let deg = |v: f64| v.to_degrees();
    let table: &[(&str, &[f64])] = &[
        ("/t.header.seq", &[7.0]),
        ("/t.header.stamp.secs", &[100.0]),
        ("/t.header.stamp.nsecs", &[500.0]),
        ("/t.header.stamp", &[100.0000005]),
        ("/t.orientation.w", &[quat()[3]]),
        ("/t.orientation.roll", &[0.1]),
        ("/t.orientation.pitch", &[0.2]),
        ("/t.orientation.yaw", &[0.3]),
        ("/t.orientation.roll_deg", &[deg(0.1)]),
        ("/t.orientation.pitch_deg", &[deg(0.2)]),
        ("/t.orientation.yaw_deg", &[deg(0.3)]),
        ("/t.orientation.norm", &[1.0]),
        ("/t.vel.norm", &[13.0]),
        ("/t.xs[0]", &[1.5]),
        ("/t.xs[4]", &[5.5]),
        ("/t.xs[-1]", &[5.5]),
        ("/t.xs[-5]", &[1.5]),
        ("/t.xs[5]", &[]),
        ("/t.xs[-6]", &[]),
        ("/t.xs[1:3]", &[2.5, 3.5, 4.5]),
        ("/t.xs[:]", &[1.5, 2.5, 3.5, 4.5, 5.5]),
        ("/t.xs[:1]", &[1.5, 2.5]),
        ("/t.xs[3:]", &[4.5, 5.5]),
        ("/t.xs[-2:-1]", &[4.5, 5.5]),
        ("/t.xs[-2:]", &[4.5, 5.5]),
        ("/t.xs[3:1]", &[]),
        ("/t.xs[2:100]", &[3.5, 4.5, 5.5]),
        ("/t.xs[ 1 : 2 ]", &[2.5, 3.5]),
        ("/t.xs[$i]", &[3.5]),
        ("/t.xs[$i:$j]", &[3.5, 4.5]),
        ("/t.xs[$neg]", &[4.5]),
        ("/t.xs[$neg:]", &[4.5, 5.5]),
        ("/t.fixed[0]", &[10.0]),
        ("/t.fixed[-1]", &[40.0]),
        ("/t.fixed[1:2]", &[20.0, 30.0]),
        ("/t.raw[0]", &[9.0]),
        ("/t.raw[:]", &[9.0, 8.0, 7.0]),
        ("/t.items[0].id", &[1.0]),
        ("/t.items[-1].value", &[2.5]),
        ("/t.items[:].id", &[1.0, 2.0, 3.0]),
        ("/t.items[:]{id==2}.value", &[1.5]),
        ("/t.items[:]{id!=2}.value", &[0.5, 2.5]),
        ("/t.items[:]{id>1}.id", &[2.0, 3.0]),
        ("/t.items[:]{id>=2}.id", &[2.0, 3.0]),
        ("/t.items[:]{id<2}.id", &[1.0]),
        ("/t.items[:]{id<=2}.id", &[1.0, 2.0]),
        ("/t.items[:]{id==-1}.id", &[]),
        ("/t.items[:]{label=='a'}.id", &[1.0, 3.0]),
        ("/t.items[:]{label==\"b\"}.id", &[2.0]),
        ("/t.items[:]{label>'a'}.id", &[2.0]),
        ("/t.items[:]{value>1.0}.id", &[2.0, 3.0]),
        ("/t.items[:]{value==1.5}.id", &[2.0]),
        ("/t.items[:]{id>1}{label=='a'}.id", &[3.0]),
        ("/t.items[:]{id>1 && label=='a'}.id", &[3.0]),
        ("/t.items[:]{status[0].level>=2}.id", &[2.0]),
        ("/t.items[:]{status[-1].name=='x'}.id", &[2.0]),
        ("/t.items[:]{status[0].name=='ok'}.id", &[1.0]),
        ("/t.items[:]{id==$want}.value", &[2.5]),
        ("/t.items[:]{label==$lab}.id", &[2.0]),
        ("/t.items[1].status[:].level", &[2.0, 1.0]),
        ("/t.items[:].status[:].level", &[0.0, 2.0, 1.0]),
        ("/t.items[:].status[0].level", &[0.0, 2.0]),
        ("/t.items[:]{id==2}.status[:]{level==1}.level", &[1.0]),
        ("/t{flag==true}.header.seq", &[7.0]),
        ("/t{flag==false}.header.seq", &[]),
        ("/t{name=='robot'}.xs[0]", &[1.5]),
        ("/t{header.seq==7}.vel.x", &[3.0]),
        ("/t{header.stamp.secs==100}.vel.y", &[4.0]),
        ("/t{header.frame_id=='base'}{flag==true}.vel.z", &[12.0]),
        ("\"/t\".vel.z", &[12.0]),
        ("/t.\"vel\".x", &[3.0]),
        ("/t.flag", &[1.0]),
        ("/t.xs[:]{x>1}", &[]),
    ];
    assert!(table.len() >= 60);
    let mut failed = Vec::new();
    for (text, want) in table {
        let got = match values(text) {
            Ok(v) => v,
            // `{x>1}` on numbers is the one row that must not compile.
            Err(e) if text.ends_with("{x>1}") => {
                assert!(e.reason.contains("not a message"), "{e}");
                continue;
            }
            Err(e) => {
                failed.push(format!("{text}: {e}"));
                continue;
            }
        };
        let ok = got.len() == want.len()
            && got
                .iter()
                .zip(*want)
                .all(|(a, b)| (a - b).abs() <= 1e-12 * b.abs().max(1.0));
        if !ok {
            failed.push(format!("{text}: got {got:?}, want {want:?}"));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

#[test]
fn simple_paths_read_in_place_and_the_rest_decode() {
    let plan = Plan::new(MsgDef::parse("t/Rich", DEF).unwrap());
    let g = |t: &str| {
        let e = Expr::parse(t).unwrap();
        compile(&plan, e.plain_path().unwrap(), &vars(), t).unwrap()
    };
    for t in [
        "/t.xs[-1]",
        "/t.orientation.yaw",
        "/t.xs[$i]",
        "/t.header.stamp.secs",
    ] {
        assert!(!g(t).decodes(), "{t}");
    }
    for t in [
        "/t.xs[:]",
        "/t.items[:]{id==2}.value",
        "/t{flag==true}.vel.x",
    ] {
        assert!(g(t).decodes(), "{t}");
    }
}

#[test]
fn errors_point_at_the_place() {
    let cases: &[(&str, usize, &str)] = &[
        ("/t.nope", 4, "has no field \"nope\""),
        ("/t.xs", 4, "is an array"),
        ("/t.xs[0", 8, "expected `]`"),
        ("/t.items[:]{id=}", 15, "expected a comparison"),
        ("/t.items[:]{id==}", 17, "expected a value"),
        ("/t.name", 4, "is a string"),
        ("/t.items[:]{label==3}", 13, "compare it with quoted text"),
        ("/t.items[:]{id=='a'}", 13, "compare it with a number"),
        ("/t.xs[0].@bogus", 9, "unknown modifier"),
        ("/t.xs[0].@movavg()", 9, "time window"),
        ("/t.xs[0].@movavg(3parsecs)", 19, "unknown unit"),
        ("/t.header", 4, "is a message"),
        ("/t.xs[$missing]", 6, "no variable $missing"),
        ("/t.vel.roll", 8, "quaternion"),
        (
            "/t.orientation.x.y",
            18,
            "is a float64, it has no field \"y\"",
        ),
        ("/t.header.seq.x", 15, "is a uint32, it has no field"),
        ("/t.fixed[0].x", 13, "is an int32, it has no field"),
        ("/t.vel.norm.x", 13, "is a number, it has no field"),
        ("/t.xs[]", 6, "empty `[]`"),
        ("/t.items[:]{}", 13, "empty filter"),
        ("/t.header.stamp.foo", 17, "secs and nsecs"),
        ("/t.items{id==1}", 10, "slice it"),
        ("/t..x", 4, "expected a field name"),
        ("/t.xs[0] +", 11, "expected a number, a path"),
        ("hypot(/t.xs[0])x", 16, "unexpected `x`"),
        ("nosuch(/t.xs[0])", 1, "unknown function"),
        ("atan2(/t.xs[0])", 1, "takes 2 arguments"),
        ("speed * 2", 1, "unknown name `speed`"),
        ("(/t.xs[0]", 10, "expected `)`"),
        ("/t.items[:]{label=='a}", 20, "unclosed `'`"),
    ];
    let mut failed = Vec::new();
    for (text, col, what) in cases {
        match values(text) {
            Ok(v) => failed.push(format!("{text}: no error, {v:?}")),
            Err(e) if e.column() == *col && e.reason.contains(what) => {}
            Err(e) => failed.push(format!("{text}: want column {col} and {what:?}, got {e}")),
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
    let e = Expr::parse("/t.xs[0].@bogus").unwrap_err().to_string();
    assert!(e.ends_with("  /t.xs[0].@bogus\n          ^"), "{e}");
}

fn pts(v: &[(u64, f64)]) -> Points {
    v.to_vec()
}

fn apply_all(text: &str, p: Points) -> Points {
    let e = Expr::parse(&format!("/a.x{text}")).unwrap();
    let mut p = p;
    for m in &e.paths()[0].mods {
        p = apply(m, p);
    }
    p
}

#[test]
fn modifiers_chain_in_order() {
    let s = 1_000_000_000u64;
    let p = pts(&[(0, 0.0), (s, 2.0), (2 * s, 6.0), (4 * s, 6.0)]);
    assert_eq!(
        apply_all(".@derivative", p.clone()),
        vec![(s, 2.0), (2 * s, 4.0), (4 * s, 0.0)]
    );
    assert_eq!(
        apply_all(".@integral", p.clone()),
        vec![(0, 0.0), (s, 1.0), (2 * s, 5.0), (4 * s, 17.0)]
    );
    assert_eq!(
        apply_all(".@delta", p.clone()),
        vec![(s, 2.0), (2 * s, 4.0), (4 * s, 0.0)]
    );
    assert_eq!(
        apply_all(".@dt", p.clone()),
        vec![(s, 1.0), (2 * s, 1.0), (4 * s, 2.0)]
    );
    assert_eq!(apply_all(".@scale(2).@offset(-1)", p.clone())[1], (s, 3.0));
    assert_eq!(apply_all(".@offset(-1).@scale(2)", p.clone())[1], (s, 2.0));
    // (t - 1.5 s, t]: the samples within, means.
    assert_eq!(
        apply_all(".@movavg(1.5s)", p.clone()),
        vec![(0, 0.0), (s, 1.0), (2 * s, 4.0), (4 * s, 6.0)]
    );
    let m2 = apply_all(".@movavg(2)", p.clone());
    assert!(m2[0].1.is_nan());
    assert_eq!(&m2[1..], &[(s, 1.0), (2 * s, 4.0), (4 * s, 6.0)]);
    assert_eq!(
        apply_all(".@derivative.@abs.@negative", p.clone())[1],
        (2 * s, -4.0)
    );
    // A derivative over dt = 0 is NaN, not a panic.
    let d = apply_all(".@derivative", pts(&[(5, 1.0), (5, 2.0)]));
    assert!(d[0].1.is_nan());
    // Rounding as JavaScript rounds; sign of zero.
    let r = apply_all(".@round", pts(&[(0, -2.5), (1, 2.5), (2, 0.49)]));
    assert_eq!(
        r.iter().map(|p| p.1).collect::<Vec<_>>(),
        vec![-2.0, 3.0, 0.0]
    );
    assert_eq!(apply_all(".@sign", pts(&[(0, 0.0)]))[0].1, 0.0);
    assert_eq!(
        apply_all(".@rad2deg", pts(&[(0, std::f64::consts::PI)]))[0].1,
        180.0
    );
    assert!((apply_all(".@mps2kph", pts(&[(0, 10.0)]))[0].1 - 36.0).abs() < 1e-12);
    // A low-pass settles on a constant and lags a step.
    let step: Points = (0..200)
        .map(|i| (i * s / 100, if i < 100 { 0.0 } else { 1.0 }))
        .collect();
    let lp = apply_all(".@lowpass(5hz)", step);
    assert!(lp[100].1 > 0.0 && lp[100].1 < 0.5, "{:?}", lp[100]);
    assert!(lp[199].1 > 0.99);
}

struct Fixed(Vec<Points>);

impl Leaves for Fixed {
    fn path(&mut self, i: usize) -> Result<Points, String> {
        Ok(self.0[i].clone())
    }
    fn var(&mut self, name: &str) -> Result<Val, String> {
        match name {
            "k" => Ok(Val::Num(10.0)),
            _ => Err(format!("no ${name}")),
        }
    }
}

#[test]
fn formulas_align_on_the_union_of_times() {
    let a = pts(&[(10, 1.0), (20, 2.0), (30, 3.0)]);
    let b = pts(&[(15, 10.0), (30, 30.0)]);
    let run = |text: &str, interp: Interp| {
        let e = Expr::parse(text).unwrap();
        eval(&e.root, &mut Fixed(vec![a.clone(), b.clone()]), interp).unwrap()
    };
    let Val::Series(s) = run("/a.x - /b.x", Interp::Hold) else {
        panic!()
    };
    assert_eq!(s.len(), 4);
    assert!(s[0].1.is_nan());
    assert_eq!(
        &s[1..],
        &[(15, 1.0 - 10.0), (20, 2.0 - 10.0), (30, 3.0 - 30.0)]
    );
    // The first path written is `a`'s series, the second `b`'s, whatever their names.
    let Val::Series(s) = run("/b.x - /a.x", Interp::Linear) else {
        panic!()
    };
    assert!(s[0].1.is_nan());
    assert_eq!(s[1], (15, 1.5 - 10.0));
    assert_eq!(s[2].0, 20);
    assert!((s[2].1 - (2.0 - (10.0 + 20.0 / 3.0))).abs() < 1e-12);
    assert_eq!(s[3], (30, 3.0 - 30.0));
    let Val::Series(s) = run("hypot(/a.x, 2 * $k) ^ 2 / 4 + -1", Interp::Hold) else {
        panic!()
    };
    assert!((s[0].1 - ((1.0 + 400.0) / 4.0 - 1.0)).abs() < 1e-12);
    let Val::Series(s) = run("(/a.x * 2).@derivative", Interp::Hold) else {
        panic!()
    };
    assert_eq!(s[0].0, 20);
    assert!((s[0].1 - 2e8).abs() < 1e-3);
    assert!(matches!(run("2 ^ 3 ^ 2", Interp::Hold), Val::Num(v) if v == 512.0));
    assert!(matches!(run("1 / 0 - 1 / 0", Interp::Hold), Val::Num(v) if v.is_nan()));
    assert!(matches!(run("-2 ** 2", Interp::Hold), Val::Num(v) if v == -4.0));
    assert!(matches!(run("7 % 4 + max(1, 5, 3)", Interp::Hold), Val::Num(v) if v == 8.0));
}

/// Expressions made by mutating the documented ones (characters inserted, removed, replaced
/// from the grammar's alphabet and beyond), each parsed, compiled against the definition and
/// evaluated on the message, on a truncated message and as a formula: errors, never a panic.
#[test]
fn mutated_expressions_never_panic() {
    let plan = Plan::new(MsgDef::parse("t/Rich", DEF).unwrap());
    let msg = message();
    let seeds = [
        "/t.items[:]{status[0].level>=2}{label=='a'}.id.@derivative.@movavg(0.5s)",
        "hypot(/t.xs[$i:$j], /t.vel.norm) - /t.orientation.yaw_deg ^ 2 % 3",
        "\"/t\".\"vel\".x.@lowpass(5hz).@scale(-2.5e3)",
        "(/t.fixed[-1] * $k).@integral / max(/t.raw[0], 1, /t.header.stamp.secs)",
    ];
    let alphabet: Vec<char> = "/.[]{}()$@:=!<>&'\"-+*^%, 0123456789aexyzé\\"
        .chars()
        .collect();
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut next = move |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    let vars = vars();
    let mut parsed = 0;
    for round in 0..20_000 {
        let mut s: Vec<char> = seeds[round % seeds.len()].chars().collect();
        for _ in 0..1 + next(4) {
            let at = next(s.len() + 1);
            match next(3) {
                0 => s.insert(at, alphabet[next(alphabet.len())]),
                1 if at < s.len() => {
                    s.remove(at);
                }
                _ if at < s.len() => s[at] = alphabet[next(alphabet.len())],
                _ => {}
            }
        }
        let text: String = s.into_iter().collect();
        let e = match Expr::parse(&text) {
            Ok(e) => e,
            Err(err) => {
                assert!(err.at <= text.len(), "{text:?}: {err:?}");
                let _ = err.to_string();
                continue;
            }
        };
        parsed += 1;
        let mut series = Vec::new();
        for p in e.paths() {
            let mut pts = Vec::new();
            if let Ok(g) = compile(&plan, p, &vars, &text) {
                for (k, cut) in [msg.len(), msg.len() / 3, 1].into_iter().enumerate() {
                    let mut out = Vec::new();
                    g.values(&msg[..cut], &mut out);
                    pts.extend(
                        out.iter()
                            .map(|v| (k as u64, v.as_f64().unwrap_or(f64::NAN))),
                    );
                }
            }
            series.push(pts);
        }
        let _ = eval(&e.root, &mut Fixed(series), Interp::Linear);
    }
    assert!(parsed > 1000, "{parsed} of the mutations parsed");
}
