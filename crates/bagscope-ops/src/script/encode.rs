//! Messages as Lua tables and back: a decoded message given to a script as a table of its
//! fields (numbers, strings, `uint8[]` as a Lua string, arrays as sequences, nested messages
//! as tables), and the table a script returns written as CDR (ROS 2) against the declared
//! type's definition: a field left out is its zero (as ROS's constructors make it); a key the
//! type does not have, or a value of the wrong kind, is an error that names the field.

use bagscope_reader::definition::msg::{ArrayKind, Field, FieldType, MsgDef, MsgType, Primitive};
use bagscope_reader::encoding::{Node, Value};
use mlua::{Lua, Table, Value as Lua_};

/// `v` (a value of type `ty` of `def`, or a field's value) as a Lua value.
pub fn to_lua(lua: &Lua, def: &MsgDef, v: &Value) -> mlua::Result<Lua_> {
    Ok(match v {
        Value::Bool(b) => Lua_::Boolean(*b),
        Value::I8(x) => Lua_::Integer(i64::from(*x)),
        Value::U8(x) => Lua_::Integer(i64::from(*x)),
        Value::I16(x) => Lua_::Integer(i64::from(*x)),
        Value::U16(x) => Lua_::Integer(i64::from(*x)),
        Value::I32(x) => Lua_::Integer(i64::from(*x)),
        Value::U32(x) => Lua_::Integer(i64::from(*x)),
        Value::I64(x) => Lua_::Integer(*x),
        Value::U64(x) => Lua_::Integer(*x as i64),
        Value::F32(x) => Lua_::Number(f64::from(*x)),
        Value::F64(x) => Lua_::Number(*x),
        Value::String(s) | Value::Bytes(s) => Lua_::String(lua.create_string(s)?),
        Value::Time { sec, nsec } => {
            let t = lua.create_table()?;
            t.set("sec", *sec)?;
            t.set("nsec", *nsec)?;
            Lua_::Table(t)
        }
        Value::Duration { sec, nsec } => {
            let t = lua.create_table()?;
            t.set("sec", *sec)?;
            t.set("nsec", *nsec)?;
            Lua_::Table(t)
        }
        Value::Prims(p, bytes) => {
            let n = p.size().unwrap_or(1).max(1);
            let t = lua.create_table_with_capacity(bytes.len() / n, 0)?;
            for (i, c) in bytes.chunks_exact(n).enumerate() {
                let x =
                    bagscope_reader::encoding::prim_value(*p, c).unwrap_or(Value::F64(f64::NAN));
                t.raw_set(i + 1, to_lua(lua, def, &x)?)?;
            }
            Lua_::Table(t)
        }
        Value::Array(items) => {
            let t = lua.create_table_with_capacity(items.len(), 0)?;
            for (i, n) in items.iter().enumerate() {
                t.raw_set(i + 1, to_lua(lua, def, &n.value)?)?;
            }
            Lua_::Table(t)
        }
        Value::Message { ty, fields } => {
            let t = lua.create_table()?;
            if let Some(mt) = def.types.get(*ty) {
                for (f, n) in mt.fields.iter().zip(fields) {
                    t.set(f.name.as_str(), to_lua(lua, def, &n.value)?)?;
                }
            }
            Lua_::Table(t)
        }
    })
}

/// A message's tree as a Lua table.
pub fn message_to_lua(lua: &Lua, def: &MsgDef, n: &Node) -> mlua::Result<Lua_> {
    to_lua(lua, def, &n.value)
}

/// CDR (little endian, XCDR1) being written: values aligned to their size from the start of
/// the payload, after the 4-byte encapsulation header.
struct Cdr {
    out: Vec<u8>,
}

impl Cdr {
    fn align(&mut self, n: usize) {
        let pos = self.out.len() - 4;
        let pad = (n - pos % n) % n;
        self.out.resize(self.out.len() + pad, 0);
    }
    fn u32(&mut self, x: u32) {
        self.align(4);
        self.out.extend_from_slice(&x.to_le_bytes());
    }
}

/// Writes the table `v` a script returned as a message of `def`'s type, in CDR.
pub fn encode_cdr(def: &MsgDef, v: &Table) -> Result<Vec<u8>, String> {
    let mut w = Cdr {
        out: vec![0, 1, 0, 0],
    };
    message(def, 0, Some(v), &mut w, &At::Root)?;
    Ok(w.out)
}

pub(super) fn kind(v: &Lua_) -> &'static str {
    v.type_name()
}

/// Where in the returned table a value is (`markers[1].scale.x`): written out only for an
/// error, so that a table that fits costs no text.
#[derive(Clone, Copy)]
pub(super) enum At<'a> {
    /// The table returned.
    Root,
    /// A field of a message.
    Field(&'a At<'a>, &'a str),
    /// An item of an array (shown from 1, as Lua counts).
    Item(&'a At<'a>, usize),
}

impl std::fmt::Display for At<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            At::Root => Ok(()),
            At::Field(At::Root, n) => f.write_str(n),
            At::Field(p, n) => write!(f, "{p}.{n}"),
            At::Item(p, i) => write!(f, "{p}[{}]", i + 1),
        }
    }
}

/// What a key a type has no field of stands for ([`field_values`]).
pub(super) enum Alias {
    /// Not a key of the type: an error.
    No,
    /// Dropped (a ROS 1 header's `seq` in a ROS 2 header).
    Dropped,
    /// The field of that name, where the table does not give it under its own name.
    For(&'static str),
}

/// The values of table `t` for each field of `mt`, in the fields' order (nil where left out),
/// in one pass over `t`. A key `mt` has no field of is an error naming it, unless `alias` says
/// what it stands for.
pub(super) fn field_values(
    mt: &MsgType,
    t: &Table,
    at: &At,
    alias: impl Fn(&str) -> Alias,
) -> Result<Vec<Lua_>, String> {
    let mut out = vec![Lua_::Nil; mt.fields.len()];
    let mut stand_ins: Vec<(usize, Lua_)> = Vec::new();
    let mut wrong: Option<String> = None;
    let there = *at;
    t.for_each(|k: Lua_, x: Lua_| {
        if wrong.is_some() {
            return Ok(());
        }
        let Lua_::String(s) = &k else {
            wrong = Some(format!(
                "{}: a {} key where {} has named fields",
                if matches!(there, At::Root) {
                    "the message".to_string()
                } else {
                    there.to_string()
                },
                kind(&k),
                mt.name
            ));
            return Ok(());
        };
        let b = s.as_bytes();
        if let Some(i) = mt.fields.iter().position(|f| f.name.as_bytes() == &b[..]) {
            out[i] = x;
            return Ok(());
        }
        let name = String::from_utf8_lossy(&b);
        match alias(&name) {
            Alias::Dropped => {}
            Alias::For(n) => {
                if let Some(i) = mt.fields.iter().position(|f| f.name == n) {
                    stand_ins.push((i, x));
                }
            }
            Alias::No => {
                wrong = Some(format!(
                    "{}: {} has no field {name:?}",
                    At::Field(&there, &name),
                    mt.name
                ))
            }
        }
        Ok(())
    })
    .map_err(|e| e.to_string())?;
    if let Some(w) = wrong {
        return Err(w);
    }
    for (i, x) in stand_ins {
        if out[i] == Lua_::Nil {
            out[i] = x;
        }
    }
    Ok(out)
}

/// The items of a Lua sequence.
pub(super) fn items(t: &Table) -> Result<Vec<Lua_>, String> {
    let mut v = Vec::with_capacity(t.raw_len());
    t.for_each_value(|x: Lua_| {
        v.push(x);
        Ok(())
    })
    .map_err(|e| e.to_string())?;
    Ok(v)
}

fn message(def: &MsgDef, ty: usize, v: Option<&Table>, w: &mut Cdr, at: &At) -> Result<(), String> {
    let mt = def
        .types
        .get(ty)
        .ok_or_else(|| format!("{at}: a type the definition does not have"))?;
    let values = match v {
        Some(t) => field_values(mt, t, at, |name| ros1_alias(&mt.name, name))?,
        None => vec![Lua_::Nil; mt.fields.len()],
    };
    if mt.fields.is_empty() {
        // An empty structure is one byte on the wire.
        w.out.push(0);
    }
    for (f, fv) in mt.fields.iter().zip(&values) {
        field(def, f, fv, w, &At::Field(at, &f.name))?;
    }
    Ok(())
}

/// A time in seconds as whole seconds and nanoseconds (rounded to the nearest).
pub(super) fn split_seconds(x: f64, at: &At) -> Result<(i64, u32), String> {
    if !x.is_finite() || x.abs() > 9.2e9 {
        return Err(format!("{at}: {x} s is not a time"));
    }
    let ns = (x * 1e9).round() as i64;
    Ok((
        ns.div_euclid(1_000_000_000),
        ns.rem_euclid(1_000_000_000) as u32,
    ))
}

/// A builtin_interfaces time or duration.
fn is_time(ty: &str) -> bool {
    matches!(
        ty,
        "builtin_interfaces/msg/Time"
            | "builtin_interfaces/Time"
            | "builtin_interfaces/msg/Duration"
            | "builtin_interfaces/Duration"
    )
}

/// A key of a ROS 1 message that its ROS 2 type does not have, taken as ROS's own bridge takes
/// it: a header's `seq` dropped, a time's `nsec` read as `nanosec`.
fn ros1_alias(ty: &str, key: &str) -> Alias {
    match key {
        "seq" if matches!(ty, "std_msgs/msg/Header" | "std_msgs/Header") => Alias::Dropped,
        "nsec" if is_time(ty) => Alias::For("nanosec"),
        _ => Alias::No,
    }
}

fn field(def: &MsgDef, f: &Field, v: &Lua_, w: &mut Cdr, at: &At) -> Result<(), String> {
    match f.array {
        ArrayKind::Scalar => one(def, &f.ty, v, w, at),
        ArrayKind::Fixed(_) | ArrayKind::Variable => {
            let fixed = match f.array {
                ArrayKind::Fixed(n) => Some(n),
                _ => None,
            };
            // uint8[] and int8[] may be a Lua string.
            if let (Lua_::String(s), FieldType::Primitive(Primitive::U8 | Primitive::I8)) =
                (v, &f.ty)
            {
                let b = s.as_bytes();
                if let Some(n) = fixed {
                    if b.len() != n {
                        return Err(format!("{at}: {} bytes where the type has {n}", b.len()));
                    }
                } else {
                    w.u32(b.len() as u32);
                }
                w.out.extend_from_slice(&b);
                return Ok(());
            }
            let items: Vec<Lua_> = match v {
                Lua_::Nil => Vec::new(),
                Lua_::Table(t) => items(t)?,
                other => return Err(format!("{at}: a {} where an array goes", kind(other))),
            };
            let count = match fixed {
                Some(n) if !items.is_empty() && items.len() != n => {
                    return Err(format!(
                        "{at}: {} items where the type has {n}",
                        items.len()
                    ))
                }
                Some(n) => n,
                None => {
                    w.u32(items.len() as u32);
                    items.len()
                }
            };
            for i in 0..count {
                let item = items.get(i).unwrap_or(&Lua_::Nil);
                one(def, &f.ty, item, w, &At::Item(at, i))?;
            }
            Ok(())
        }
    }
}

pub(super) fn number(v: &Lua_, at: &At) -> Result<f64, String> {
    match v {
        Lua_::Nil => Ok(0.0),
        Lua_::Integer(i) => Ok(*i as f64),
        Lua_::Number(x) => Ok(*x),
        Lua_::Boolean(b) => Ok(f64::from(u8::from(*b))),
        other => Err(format!("{at}: a {} where a number goes", kind(other))),
    }
}

pub(super) fn integer(v: &Lua_, at: &At) -> Result<i64, String> {
    match v {
        Lua_::Nil => Ok(0),
        Lua_::Integer(i) => Ok(*i),
        Lua_::Number(x) if x.fract() == 0.0 && x.is_finite() => Ok(*x as i64),
        Lua_::Boolean(b) => Ok(i64::from(*b)),
        Lua_::Number(x) => Err(format!("{at}: {x} where an integer goes")),
        other => Err(format!("{at}: a {} where an integer goes", kind(other))),
    }
}

fn one(def: &MsgDef, ty: &FieldType, v: &Lua_, w: &mut Cdr, at: &At) -> Result<(), String> {
    let p = match ty {
        FieldType::Message(t) => {
            return match v {
                Lua_::Nil => message(def, *t, None, w, at),
                // A time in seconds (the script's `time`) for a builtin_interfaces time.
                Lua_::Integer(_) | Lua_::Number(_)
                    if def.types.get(*t).is_some_and(|mt| is_time(&mt.name)) =>
                {
                    let (sec, nsec) = split_seconds(number(v, at)?, at)?;
                    w.u32(sec as u32);
                    w.u32(nsec);
                    Ok(())
                }
                Lua_::Table(tab) => message(def, *t, Some(tab), w, at),
                other => Err(format!("{at}: a {} where a message goes", kind(other))),
            };
        }
        FieldType::Primitive(p) => *p,
    };
    macro_rules! put {
        ($t:ty, $x:expr) => {{
            let b = ($x as $t).to_le_bytes();
            w.align(b.len());
            w.out.extend_from_slice(&b);
        }};
    }
    match p {
        Primitive::Bool => put!(u8, integer(v, at)? != 0),
        Primitive::I8 => put!(i8, integer(v, at)?),
        Primitive::U8 => put!(u8, integer(v, at)?),
        Primitive::I16 => put!(i16, integer(v, at)?),
        Primitive::U16 => put!(u16, integer(v, at)?),
        Primitive::I32 => put!(i32, integer(v, at)?),
        Primitive::U32 => put!(u32, integer(v, at)?),
        Primitive::I64 => put!(i64, integer(v, at)?),
        Primitive::U64 => put!(u64, integer(v, at)?),
        Primitive::F32 => put!(f32, number(v, at)?),
        Primitive::F64 => put!(f64, number(v, at)?),
        Primitive::String => {
            let mut text = |b: &[u8]| {
                w.u32(b.len() as u32 + 1);
                w.out.extend_from_slice(b);
                w.out.push(0);
            };
            match v {
                Lua_::Nil => text(b""),
                Lua_::String(s) => text(&s.as_bytes()),
                Lua_::Integer(_) | Lua_::Number(_) => {
                    text(v.to_string().map_err(|e| e.to_string())?.as_bytes())
                }
                other => return Err(format!("{at}: a {} where a string goes", kind(other))),
            }
        }
        Primitive::Time | Primitive::Duration => {
            let (s, n) = match v {
                Lua_::Nil => (0, 0),
                Lua_::Table(t) => (
                    integer(&t.raw_get::<Lua_>("sec").map_err(|e| e.to_string())?, at)?,
                    integer(&t.raw_get::<Lua_>("nsec").map_err(|e| e.to_string())?, at)?,
                ),
                other => return Err(format!("{at}: a {} where a time goes", kind(other))),
            };
            put!(i32, s);
            put!(i32, n);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use bagscope_reader::encoding::{to_json, Plan};

    fn def(ty: &str) -> MsgDef {
        super::super::message::output_definition(ty, &[])
            .unwrap()
            .def
    }

    /// A table written as CDR decodes (bagscope's decoder) to the values it held; fields left
    /// out are zeros.
    #[test]
    fn a_table_written_as_cdr_decodes_to_its_values() {
        let lua = Lua::new();
        for (ty, code, want) in [
            (
                "geometry_msgs/msg/PoseStamped",
                "return { header = { stamp = { sec = 5, nanosec = 7 }, frame_id = 'map' }, pose = { position = { x = 1.5, z = -2 }, orientation = { w = 1 } } }",
                serde_json::json!({"header": {"stamp": {"sec": 5, "nanosec": 7}, "frame_id": "map"},
                    "pose": {"position": {"x": 1.5, "y": 0.0, "z": -2.0}, "orientation": {"x": 0.0, "y": 0.0, "z": 0.0, "w": 1.0}}}),
            ),
            (
                // A ROS 1 header (seq, a time's sec and nsec) written as a ROS 2 one.
                "std_msgs/msg/Header",
                "return { seq = 4, stamp = { sec = 5, nsec = 7 }, frame_id = 'odom' }",
                serde_json::json!({"stamp": {"sec": 5, "nanosec": 7}, "frame_id": "odom"}),
            ),
            (
                "std_msgs/msg/Float64MultiArray",
                "return { layout = { dim = { { label = 'a', size = 3, stride = 3 } } }, data = { 1, 2.5, 3 } }",
                serde_json::json!({"layout": {"dim": [{"label": "a", "size": 3, "stride": 3}], "data_offset": 0}, "data": [1.0, 2.5, 3.0]}),
            ),
            (
                "sensor_msgs/msg/Image",
                "return { height = 1, width = 2, encoding = 'mono8', step = 2, data = '\\1\\255' }",
                serde_json::json!({"header": {"stamp": {"sec": 0, "nanosec": 0}, "frame_id": ""}, "height": 1, "width": 2,
                    "encoding": "mono8", "is_bigendian": 0, "step": 2, "data": "Af8="}),
            ),
        ] {
            let d = def(ty);
            let t: Table = lua.load(code).eval().unwrap();
            let bytes = encode_cdr(&d, &t).unwrap();
            let plan = Plan::new_cdr(d.clone());
            let node = plan.decode(&bytes).unwrap();
            let mut text = String::new();
            to_json(&d, &node.value, &mut text);
            let got: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(got, want, "{ty}");
        }
    }

    #[test]
    fn what_does_not_fit_the_type_names_the_field() {
        let lua = Lua::new();
        let d = def("visualization_msgs/msg/MarkerArray");
        for (code, want) in [
            (
                "return { markers = { { pose = { pose_typo = {} } } } }",
                "markers[1].pose.pose_typo",
            ),
            (
                "return { markers = { { scale = { x = 'big' } } } }",
                "markers[1].scale.x: a string where a number goes",
            ),
            (
                "return { markers = 3 }",
                "markers: a integer where an array goes",
            ),
            (
                "return { markers = { { id = 1.5 } } }",
                "markers[1].id: 1.5 where an integer goes",
            ),
        ] {
            let t: Table = lua.load(code).eval().unwrap();
            let e = encode_cdr(&d, &t).unwrap_err();
            assert!(e.contains(want), "{code}: {e}");
        }
    }
}
