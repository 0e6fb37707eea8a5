//! A path compiled against one connection's definition: a [`Getter`] gives the path's values
//! in a message. A path of fields and indexes reads its value in place ([`Extractor`], no
//! value tree); slices, filters and `$variable` filters decode the message and walk the tree.

use std::collections::HashMap;

use super::ast::{Bound, CmpOp, Lit, MsgPath, Seg};
use super::ExprError;
use crate::definition::msg::{ArrayKind, FieldType, Primitive};
use crate::encoding::{Extractor, Plan, Segment, TimePart, Value};

/// The values of `$variables`, by name.
pub type Vars = HashMap<String, Lit>;

/// A field a path names that no definition has: computed from the fields of a quaternion
/// (`x y z w`) or a vector (`x y [z]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Virtual {
    /// Rotation about x, radians (`roll`; `roll_deg` in degrees).
    Roll(bool),
    /// About y.
    Pitch(bool),
    /// About z.
    Yaw(bool),
    /// Length of the vector (or quaternion).
    Norm,
}

/// The names of the virtual fields.
pub const VIRTUAL_FIELDS: &[&str] = &[
    "roll",
    "pitch",
    "yaw",
    "roll_deg",
    "pitch_deg",
    "yaw_deg",
    "norm",
];

impl Virtual {
    fn named(name: &str) -> Option<Virtual> {
        Some(match name {
            "roll" => Virtual::Roll(false),
            "pitch" => Virtual::Pitch(false),
            "yaw" => Virtual::Yaw(false),
            "roll_deg" => Virtual::Roll(true),
            "pitch_deg" => Virtual::Pitch(true),
            "yaw_deg" => Virtual::Yaw(true),
            "norm" => Virtual::Norm,
            _ => return None,
        })
    }

    /// The value from the components (x, y, z, w as there are).
    pub fn of(self, c: &[f64]) -> f64 {
        let deg = |d: bool, v: f64| if d { v.to_degrees() } else { v };
        if self == Virtual::Norm {
            return c.iter().map(|v| v * v).sum::<f64>().sqrt();
        }
        let [x, y, z, w] = match c {
            [x, y, z, w] => [*x, *y, *z, *w],
            _ => return f64::NAN,
        };
        // Normalised first, as scipy's Rotation.from_quat does; a zero quaternion is none.
        let n = (x * x + y * y + z * z + w * w).sqrt();
        if n.is_nan() || n <= 0.0 {
            return f64::NAN;
        }
        let (x, y, z, w) = (x / n, y / n, z / n, w / n);
        match self {
            Virtual::Roll(d) => deg(
                d,
                (2.0 * (w * x + y * z)).atan2(1.0 - 2.0 * (x * x + y * y)),
            ),
            Virtual::Pitch(d) => {
                // The form that keeps its precision near ±90°.
                let s = 2.0 * (w * y - z * x);
                let p = 2.0 * (1.0 + s).max(0.0).sqrt().atan2((1.0 - s).max(0.0).sqrt())
                    - std::f64::consts::FRAC_PI_2;
                deg(d, p)
            }
            Virtual::Yaw(d) => deg(
                d,
                (2.0 * (w * z + x * y)).atan2(1.0 - 2.0 * (y * y + z * z)),
            ),
            Virtual::Norm => f64::NAN,
        }
    }
}

/// A step over a decoded value.
#[derive(Debug, Clone)]
enum Step {
    Field(usize),
    Half(TimePart),
    Index(i64),
    /// Both ends included; `None`: open.
    Slice(Option<i64>, Option<i64>),
    Filter(Box<CCond>),
    /// A virtual field from these fields of the message.
    Virtual(Virtual, Vec<usize>),
}

/// A filter's condition, compiled.
#[derive(Debug, Clone)]
struct CCond {
    steps: Vec<Step>,
    op: CmpOp,
    value: Lit,
}

#[derive(Debug, Clone)]
enum Kind {
    /// Read in place.
    Fast(Extractor),
    /// A virtual field of components read in place.
    FastVirtual(Virtual, Vec<Extractor>),
    /// The message decoded and walked.
    Tree(Plan, Vec<Step>),
}

/// A path compiled for one definition.
#[derive(Debug, Clone)]
pub struct Getter {
    kind: Kind,
}

impl Getter {
    /// Whether the path may give several values per message (a slice).
    pub fn is_multi(&self) -> bool {
        matches!(&self.kind, Kind::Tree(_, steps) if steps.iter().any(|s| matches!(s, Step::Slice(..))))
    }

    /// Whether the path has filters (a message without a value is then one filtered out, not
    /// one missing the path).
    pub fn filters(&self) -> bool {
        matches!(&self.kind, Kind::Tree(_, steps) if steps.iter().any(|s| matches!(s, Step::Filter(_))))
    }

    /// Whether the path gives a value in the message (its filters pass).
    pub fn matches(&self, data: &[u8]) -> bool {
        let mut out = Vec::new();
        self.values(data, &mut out);
        !out.is_empty()
    }

    /// Whether each message is decoded whole (slices, filters).
    pub fn decodes(&self) -> bool {
        matches!(self.kind, Kind::Tree(..))
    }

    /// The path's values in one message, onto `out` (none where the message lacks them or a
    /// filter drops them).
    pub fn values(&self, data: &[u8], out: &mut Vec<Value>) {
        match &self.kind {
            Kind::Fast(x) => out.extend(x.extract(data)),
            Kind::FastVirtual(v, xs) => {
                let mut c = [0.0f64; 4];
                for (slot, x) in c.iter_mut().zip(xs) {
                    match x.extract(data).and_then(|v| v.as_f64()) {
                        Some(f) => *slot = f,
                        None => return,
                    }
                }
                out.push(Value::F64(v.of(&c[..xs.len()])));
            }
            Kind::Tree(plan, steps) => {
                if let Ok(n) = plan.decode(data) {
                    walk(n.value, steps, out);
                }
            }
        }
    }

    /// The first of the path's values in one message.
    pub fn value(&self, data: &[u8]) -> Option<Value> {
        match &self.kind {
            Kind::Fast(x) => x.extract(data),
            _ => {
                let mut out = Vec::new();
                self.values(data, &mut out);
                out.into_iter().next()
            }
        }
    }
}

/// `v`'s values along `steps`, onto `out`.
fn walk(v: Value, steps: &[Step], out: &mut Vec<Value>) {
    let Some((step, rest)) = steps.split_first() else {
        out.push(v);
        return;
    };
    match step {
        Step::Field(i) => {
            if let Value::Message { fields, .. } = v {
                if let Some(f) = fields.into_iter().nth(*i) {
                    walk(f.value, rest, out);
                }
            }
        }
        Step::Half(h) => {
            if let Some(x) = h.of(v) {
                walk(x, rest, out);
            }
        }
        Step::Index(i) => {
            let Some(k) = v.len().and_then(|n| resolve(*i, n)) else {
                return;
            };
            if let Some(e) = element(v, k) {
                walk(e, rest, out);
            }
        }
        Step::Slice(a, b) => {
            let Some(n) = v.len() else { return };
            let lo = a.map_or(Some(0), |a| resolve_clamped(a, n));
            let hi = b.map_or(n.checked_sub(1), |b| resolve_clamped(b, n));
            let (Some(lo), Some(hi)) = (lo, hi) else {
                return;
            };
            if lo > hi || lo >= n {
                return;
            }
            let hi = hi.min(n - 1);
            match v {
                Value::Array(items) => {
                    for it in items.into_iter().skip(lo).take(hi - lo + 1) {
                        walk(it.value, rest, out);
                    }
                }
                other => {
                    for k in lo..=hi {
                        if let Some((e, _)) = other.element(k) {
                            walk(e, rest, out);
                        }
                    }
                }
            }
        }
        Step::Filter(c) => {
            if holds(&v, c) {
                walk(v, rest, out);
            }
        }
        Step::Virtual(kind, fields) => {
            let Value::Message { fields: fs, .. } = &v else {
                return;
            };
            let mut c = [0.0f64; 4];
            for (slot, &i) in c.iter_mut().zip(fields) {
                match fs.get(i).and_then(|f| f.value.as_f64()) {
                    Some(x) => *slot = x,
                    None => return,
                }
            }
            walk(Value::F64(kind.of(&c[..fields.len()])), rest, out);
        }
    }
}

/// Index `i` (negative from the end) of `n` elements.
fn resolve(i: i64, n: usize) -> Option<usize> {
    let k = if i < 0 {
        n.checked_sub(usize::try_from(i.unsigned_abs()).ok()?)?
    } else {
        usize::try_from(i).ok()?
    };
    (k < n).then_some(k)
}

/// A slice's end: negative from the end, clamped at the first element.
fn resolve_clamped(i: i64, n: usize) -> Option<usize> {
    if i < 0 {
        Some(n.saturating_sub(usize::try_from(i.unsigned_abs()).ok()?))
    } else {
        usize::try_from(i).ok()
    }
}

fn element(v: Value, k: usize) -> Option<Value> {
    match v {
        Value::Array(items) => items.into_iter().nth(k).map(|n| n.value),
        other => other.element(k).map(|e| e.0),
    }
}

/// The value of a condition's sub-path in `v`.
fn cond_value(v: &Value, steps: &[Step]) -> Option<Value> {
    let Some((step, rest)) = steps.split_first() else {
        return Some(v.clone());
    };
    match (step, v) {
        (Step::Field(i), Value::Message { fields, .. }) => cond_value(&fields.get(*i)?.value, rest),
        (Step::Half(h), _) => cond_value(&h.of(v.clone())?, rest),
        (Step::Index(i), Value::Array(items)) => {
            let k = resolve(*i, items.len())?;
            cond_value(&items[k].value, rest)
        }
        (Step::Index(i), _) => {
            let k = resolve(*i, v.len()?)?;
            cond_value(&v.element(k)?.0, rest)
        }
        _ => None,
    }
}

/// Whether `c` holds on `v`.
fn holds(v: &Value, c: &CCond) -> bool {
    let Some(x) = cond_value(v, &c.steps) else {
        return false;
    };
    let ord = match (&x, &c.value) {
        (Value::String(s), Lit::Str(t)) => s.as_slice().cmp(t.as_bytes()),
        (Value::Bool(a), Lit::Bool(b)) => a.cmp(b),
        (_, Lit::Int(i)) if int_of(&x).is_some() => {
            int_of(&x).map_or(std::cmp::Ordering::Less, |a| a.cmp(&i128::from(*i)))
        }
        (_, Lit::Int(i)) => match x.as_f64().and_then(|a| a.partial_cmp(&(*i as f64))) {
            Some(o) => o,
            None => return c.op == CmpOp::Ne,
        },
        (_, Lit::Float(f)) => match x.as_f64().and_then(|a| a.partial_cmp(f)) {
            Some(o) => o,
            None => return c.op == CmpOp::Ne,
        },
        (_, Lit::Bool(b)) => match x.as_f64() {
            Some(a) => a.total_cmp(&f64::from(u8::from(*b))),
            None => return false,
        },
        _ => return false,
    };
    use std::cmp::Ordering::*;
    match c.op {
        CmpOp::Eq => ord == Equal,
        CmpOp::Ne => ord != Equal,
        CmpOp::Lt => ord == Less,
        CmpOp::Le => ord != Greater,
        CmpOp::Gt => ord == Greater,
        CmpOp::Ge => ord != Less,
    }
}

fn int_of(v: &Value) -> Option<i128> {
    Some(match *v {
        Value::I8(x) => x.into(),
        Value::U8(x) => x.into(),
        Value::I16(x) => x.into(),
        Value::U16(x) => x.into(),
        Value::I32(x) => x.into(),
        Value::U32(x) => x.into(),
        Value::I64(x) => x.into(),
        Value::U64(x) => x.into(),
        _ => return None,
    })
}

/// Where a compile stands: the type of the value(s) at hand, and whether they are an array.
#[derive(Debug, Clone, Copy)]
enum Ty {
    Msg(usize),
    Prim(Primitive),
    /// A value of a virtual field.
    Number,
}

/// Compiles the segments of `p` (its modifiers are the series') against `plan`; `text` is
/// the expression `p` was parsed from (for the errors' positions).
pub fn compile(plan: &Plan, p: &MsgPath, vars: &Vars, text: &str) -> Result<Getter, ExprError> {
    compile_with(plan, p, vars, text, false)
}

/// [`compile`] for a path that selects messages (`echo --filter`): it may end anywhere (at a
/// message, a string, an array), and a message matches where it gives a value
/// ([`Getter::matches`]).
pub fn compile_match(
    plan: &Plan,
    p: &MsgPath,
    vars: &Vars,
    text: &str,
) -> Result<Getter, ExprError> {
    compile_with(plan, p, vars, text, true)
}

fn compile_with(
    plan: &Plan,
    p: &MsgPath,
    vars: &Vars,
    text: &str,
    any_end: bool,
) -> Result<Getter, ExprError> {
    let err = |at: usize, reason: String| ExprError {
        text: text.to_string(),
        at,
        reason,
    };
    let types = &plan.def.types;
    let mut ty = Ty::Msg(0);
    let mut array: Option<&str> = None; // the array's type as written, when at an array
    let mut walked = p.topic.clone();
    let mut steps: Vec<Step> = Vec::new();
    let mut fast: Option<Vec<Segment>> = Some(Vec::new());
    let mut virt: Option<(Virtual, Vec<&'static str>)> = None;
    let mut last_at = p.at;
    for seg in &p.segs {
        match seg {
            Seg::Field { name, at } => {
                last_at = *at;
                if let Some(a) = array {
                    return Err(err(*at, format!("{walked} is an array ({a}): index it (`[0]`, `[-1]`) or slice it (`[:]`) before `.{name}`")));
                }
                match ty {
                    Ty::Prim(pr @ (Primitive::Time | Primitive::Duration)) => {
                        let Some(h) = TimePart::named(name) else {
                            return Err(err(
                                *at,
                                format!(
                                    "{walked} is a {}: its fields are secs and nsecs, not {name:?}",
                                    pr.name()
                                ),
                            ));
                        };
                        steps.push(Step::Half(h));
                        if let Some(f) = &mut fast {
                            f.push(Segment::Field(name.clone()));
                        }
                        ty = Ty::Prim(Primitive::U32);
                    }
                    Ty::Prim(_) | Ty::Number => {
                        // The type in words, as `echo` names it (`a uint32`, `an int8`).
                        let what = match ty {
                            Ty::Prim(p) => p.name(),
                            _ => "number",
                        };
                        let a = if what.starts_with(['i', 'u'])
                            && what != "uint8"
                            && what.starts_with("int")
                        {
                            "an"
                        } else {
                            "a"
                        };
                        return Err(err(
                            *at,
                            format!("{walked} is {a} {what}, it has no field {name:?}"),
                        ));
                    }
                    Ty::Msg(t) => {
                        let def = &types[t];
                        if let Some(fi) = def.fields.iter().position(|f| f.name == *name) {
                            let f = &def.fields[fi];
                            steps.push(Step::Field(fi));
                            if let Some(fp) = &mut fast {
                                fp.push(Segment::Field(name.clone()));
                            }
                            ty = match f.ty {
                                FieldType::Message(j) => Ty::Msg(j),
                                FieldType::Primitive(pr) => Ty::Prim(pr),
                            };
                            array = (f.array != ArrayKind::Scalar).then_some(f.type_text.as_str());
                        } else if let Some(v) = Virtual::named(name) {
                            let comps: &[&'static str] = match v {
                                Virtual::Norm if has(def, "w") => &["x", "y", "z", "w"],
                                Virtual::Norm if has(def, "z") => &["x", "y", "z"],
                                Virtual::Norm => &["x", "y"],
                                _ => &["x", "y", "z", "w"],
                            };
                            let idx: Option<Vec<usize>> = comps
                                .iter()
                                .map(|c| {
                                    def.fields.iter().position(|f| {
                                        f.name == *c && f.array == ArrayKind::Scalar && matches!(f.ty, FieldType::Primitive(p) if p.size().is_some() && !matches!(p, Primitive::Time | Primitive::Duration))
                                    })
                                })
                                .collect();
                            let Some(idx) = idx else {
                                let shape = if v == Virtual::Norm {
                                    "a vector (x, y[, z])"
                                } else {
                                    "a quaternion (x, y, z, w)"
                                };
                                return Err(err(*at, format!("{} has no field {name:?}, and {name} is computed only on {shape}", def.name)));
                            };
                            steps.push(Step::Virtual(v, idx));
                            virt = Some((v, comps.to_vec()));
                            ty = Ty::Number;
                        } else {
                            return Err(err(*at, no_field(def, name)));
                        }
                    }
                }
                walked.push('.');
                walked.push_str(name);
            }
            Seg::Slice {
                start,
                end,
                single,
                at,
            } => {
                last_at = *at;
                if array.is_none() {
                    return Err(err(*at, format!("{walked} is not an array")));
                }
                array = None;
                let b = |x: &Bound| -> Result<Option<i64>, ExprError> {
                    match x {
                        Bound::Int(i) => Ok(Some(*i)),
                        Bound::Open => Ok(None),
                        Bound::Var(v) => match vars.get(v) {
                            Some(Lit::Int(i)) => Ok(Some(*i)),
                            Some(Lit::Float(f)) if f.fract() == 0.0 && f.abs() < 9e15 => {
                                Ok(Some(*f as i64))
                            }
                            Some(other) => {
                                Err(err(*at, format!("${v} is {other:?}, not a whole number")))
                            }
                            None => Err(err(*at, format!("no variable ${v}"))),
                        },
                    }
                };
                let (s, e) = (b(start)?, b(end)?);
                if *single {
                    let i = s.unwrap_or(0);
                    steps.push(Step::Index(i));
                    if let Some(fp) = &mut fast {
                        fp.push(Segment::Index(i));
                    }
                    walked.push_str(&format!("[{i}]"));
                } else {
                    steps.push(Step::Slice(s, e));
                    fast = None;
                    walked.push_str("[:]");
                }
            }
            Seg::Filter(c) => {
                last_at = c.at;
                let Ty::Msg(t) = ty else {
                    return Err(err(c.at, format!("{walked} is not a message: a filter picks messages or elements of an array of messages")));
                };
                if let Some(a) = array {
                    return Err(err(c.at, format!("{walked} is an array ({a}): slice it (`[:]`) before filtering its elements")));
                }
                steps.push(Step::Filter(Box::new(compile_cond(
                    plan, t, c, vars, &err,
                )?)));
                fast = None;
            }
        }
    }
    if any_end && (array.is_some() || matches!(ty, Ty::Msg(_) | Ty::Prim(Primitive::String))) {
        return Ok(Getter {
            kind: Kind::Tree(plan.clone(), steps),
        });
    }
    if let Some(a) = array {
        return Err(err(
            last_at,
            format!("{walked} is an array ({a}): add an index (`[0]`, `[-1]`) or a slice (`[:]`)"),
        ));
    }
    match ty {
        Ty::Msg(t) if p.segs.is_empty() => Err(err(
            p.end,
            format!(
                "{walked} is a whole message ({}): name one of its fields",
                types[t].name
            ),
        )),
        Ty::Msg(t) => Err(err(
            last_at,
            format!(
                "{walked} is a message ({}): name one of its fields",
                types[t].name
            ),
        )),
        Ty::Prim(Primitive::String) => {
            Err(err(last_at, format!("{walked} is a string, not a number")))
        }
        _ => {
            let kind = match (fast, virt) {
                (Some(segs), None) => {
                    Kind::Fast(Extractor::new(plan, &segs).map_err(|e| err(p.at, e.reason))?)
                }
                (Some(segs), Some((v, comps))) => {
                    let xs = comps
                        .iter()
                        .map(|c| {
                            let mut s = segs.clone();
                            s.push(Segment::Field((*c).to_string()));
                            Extractor::new(plan, &s).map_err(|e| err(p.at, e.reason))
                        })
                        .collect::<Result<Vec<_>, _>>()?;
                    Kind::FastVirtual(v, xs)
                }
                (None, _) => Kind::Tree(plan.clone(), steps),
            };
            Ok(Getter { kind })
        }
    }
}

/// `TYPE has no field NAME (fields: ...)`.
fn no_field(def: &crate::definition::msg::MsgType, name: &str) -> String {
    let names: Vec<&str> = def.fields.iter().map(|f| f.name.as_str()).collect();
    format!(
        "{} has no field {name:?} (fields: {})",
        def.name,
        names.join(", ")
    )
}

fn has(def: &crate::definition::msg::MsgType, name: &str) -> bool {
    def.fields.iter().any(|f| f.name == name)
}

/// A filter's condition against messages of type `t`.
fn compile_cond(
    plan: &Plan,
    t: usize,
    c: &super::ast::Cond,
    vars: &Vars,
    err: &dyn Fn(usize, String) -> ExprError,
) -> Result<CCond, ExprError> {
    let types = &plan.def.types;
    let mut ty = Ty::Msg(t);
    let mut is_array = false;
    let mut steps = Vec::new();
    let mut walked = String::new();
    for seg in &c.path {
        match seg {
            Seg::Field { name, at } => {
                if is_array {
                    return Err(err(
                        *at,
                        format!("{walked} is an array: index it (`[0]`) before `.{name}`"),
                    ));
                }
                match ty {
                    Ty::Prim(Primitive::Time | Primitive::Duration)
                        if TimePart::named(name).is_some() =>
                    {
                        steps.extend(TimePart::named(name).map(Step::Half));
                        ty = Ty::Prim(Primitive::U32);
                    }
                    Ty::Msg(k) => {
                        let def = &types[k];
                        let Some(fi) = def.fields.iter().position(|f| f.name == *name) else {
                            return Err(err(*at, no_field(def, name)));
                        };
                        let f = &def.fields[fi];
                        steps.push(Step::Field(fi));
                        is_array = f.array != ArrayKind::Scalar;
                        ty = match f.ty {
                            FieldType::Message(j) => Ty::Msg(j),
                            FieldType::Primitive(p) => Ty::Prim(p),
                        };
                    }
                    _ => return Err(err(*at, format!("{walked} has no field {name:?}"))),
                }
                if !walked.is_empty() {
                    walked.push('.');
                }
                walked.push_str(name);
            }
            Seg::Slice { start, at, .. } => {
                if !is_array {
                    return Err(err(*at, format!("{walked} is not an array")));
                }
                is_array = false;
                let i = match start {
                    Bound::Int(i) => *i,
                    Bound::Var(v) => match vars.get(v) {
                        Some(Lit::Int(i)) => *i,
                        _ => return Err(err(*at, format!("${v} is not a whole-number variable"))),
                    },
                    Bound::Open => 0,
                };
                steps.push(Step::Index(i));
            }
            Seg::Filter(_) => return Err(err(c.at, "a filter inside a filter".into())),
        }
    }
    if is_array || matches!(ty, Ty::Msg(_)) {
        return Err(err(c.at, format!("{walked} is not one value: a filter compares a field of numbers, text or true/false")));
    }
    let value = match &c.value {
        Lit::Var(v) => vars
            .get(v)
            .cloned()
            .ok_or_else(|| err(c.at, format!("no variable ${v}")))?,
        other => other.clone(),
    };
    let is_str = matches!(ty, Ty::Prim(Primitive::String));
    match (&value, is_str) {
        (Lit::Str(_), false) => {
            return Err(err(
                c.at,
                format!("{walked} is a number: compare it with a number, not text"),
            ))
        }
        (Lit::Int(_) | Lit::Float(_) | Lit::Bool(_), true) => {
            return Err(err(
                c.at,
                format!("{walked} is a string: compare it with quoted text ('...')"),
            ))
        }
        _ => {}
    }
    Ok(CCond {
        steps,
        op: c.op,
        value,
    })
}
