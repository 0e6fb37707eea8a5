//! ROS 2 messages (CDR) re-encoded in ROS 1 serialization with their ROS 1 types
//! (`bagscope export --to-ros1`), the reverse of [`super::to_ros2`].
//!
//! A connection's ROS 1 type is its ROS 2 name without `/msg/` (`std_msgs/msg/Header` becomes
//! `std_msgs/Header`), its definition the one bagscope finds for that name (search path,
//! shipped ROS 1 interfaces). The two definitions are matched field by field, by name, before
//! any message is converted: every ROS 1 field must have a ROS 2 field of a compatible type and
//! every ROS 2 field a ROS 1 one, but for `Header.seq`, which ROS 2 dropped (written as 0), and
//! the member rosidl adds to an empty ROS 2 type. `builtin_interfaces/Time` and `Duration`
//! become `time` and `duration`. A type that does not match is refused with the field that
//! differs: it is left out, never guessed.

use crate::definition::msg::{ArrayKind, Dialect, FieldType, MsgDef, Primitive};
use crate::encoding::{Plan, Value};

/// A connection's conversion, compiled once.
#[derive(Debug, Clone)]
pub struct ToRos1 {
    /// The CDR plan that decodes the source.
    pub src: Plan,
    /// The ROS 1 definition written.
    pub dst: MsgDef,
    /// The ROS 1 type name (`pkg/Type`).
    pub datatype: String,
    /// The ROS 1 definition text (with its dependencies), for the output's connection.
    pub definition: String,
    /// The md5sum of the ROS 1 definition.
    pub md5: String,
}

/// The definition of `datatype` in `dialect` that a conversion of connection `c` writes (search
/// path, shipped set), as text and parsed; or why there is none.
pub(crate) fn target_definition(
    c: &crate::Connection,
    datatype: &str,
    dialect: Dialect,
) -> Result<(String, MsgDef), String> {
    let (text, _) =
        crate::definition::sources::lookup_for(datatype, dialect, "").ok_or_else(|| {
            format!(
                "{} has no {} definition (none on the search path or shipped)",
                c.datatype,
                if dialect == Dialect::Ros1 {
                    "ROS 1"
                } else {
                    "ROS 2"
                }
            )
        })?;
    let def = MsgDef::parse_dialect(datatype, &text, dialect).map_err(|e| e.to_string())?;
    Ok((text, def))
}

/// `pkg/msg/Type` as ROS 1 names it.
pub fn ros1_name(ros2: &str) -> String {
    match ros2.split_once("/msg/") {
        Some((pkg, ty)) => format!("{pkg}/{ty}"),
        None => ros2.to_string(),
    }
}

fn is_builtin(def: &MsgDef, ty: usize, which: &str) -> bool {
    crate::definition::msg::normalize_type(&def.types[ty].name)
        == format!("builtin_interfaces/{which}")
}

/// The field of `fields` named `name`, or else the one named so but for ASCII case (ROS 2
/// lowercased some field names: `sensor_msgs/CameraInfo`'s `D`, `K`, `R`, `P` are `d`, `k`,
/// `r`, `p`), if only one is.
pub(crate) fn field_named(fields: &[crate::definition::msg::Field], name: &str) -> Option<usize> {
    if let Some(i) = fields.iter().position(|f| f.name == name) {
        return Some(i);
    }
    let mut it = fields
        .iter()
        .enumerate()
        .filter(|(_, f)| f.name.eq_ignore_ascii_case(name));
    match (it.next(), it.next()) {
        (Some((i, _)), None) => Some(i),
        _ => None,
    }
}

fn is_header_seq(dst: &MsgDef, d: usize, name: &str) -> bool {
    name == "seq" && crate::definition::msg::normalize_type(&dst.types[d].name).ends_with("Header")
}

/// Checks that ROS 2 type `s` (of `src`) converts to ROS 1 type `d` (of `dst`).
fn check(src: &MsgDef, s: usize, dst: &MsgDef, d: usize, path: &str) -> Result<(), String> {
    let st = &src.types[s];
    let dt = &dst.types[d];
    for f in &st.fields {
        if field_named(&dt.fields, &f.name).is_none() {
            return Err(format!(
                "{path}{}: ROS 2 field of {} has no counterpart in ROS 1 {}",
                f.name, st.name, dt.name
            ));
        }
    }
    for g in &dt.fields {
        let Some(f) = field_named(&st.fields, &g.name).map(|i| &st.fields[i]) else {
            if is_header_seq(dst, d, &g.name) {
                continue;
            }
            return Err(format!(
                "{path}{}: ROS 1 field of {} has no counterpart in ROS 2 {}",
                g.name, dt.name, st.name
            ));
        };
        let here = format!("{path}{}.", g.name);
        let arrays_match = match (f.array, g.array) {
            (ArrayKind::Scalar, ArrayKind::Scalar) | (ArrayKind::Variable, ArrayKind::Variable) => {
                true
            }
            (ArrayKind::Fixed(a), ArrayKind::Fixed(b)) => a == b,
            _ => false,
        };
        let differ = || {
            format!(
                "{path}{}: {} in ROS 2, {} in ROS 1",
                g.name, f.type_text, g.type_text
            )
        };
        if !arrays_match {
            return Err(differ());
        }
        match (&f.ty, &g.ty) {
            (FieldType::Message(j), FieldType::Primitive(Primitive::Time))
                if is_builtin(src, *j, "Time") => {}
            (FieldType::Message(j), FieldType::Primitive(Primitive::Duration))
                if is_builtin(src, *j, "Duration") => {}
            (FieldType::Primitive(a), FieldType::Primitive(b)) => {
                let same_width = a.size() == b.size() && a.is_numeric() == b.is_numeric();
                if a != b && !same_width {
                    return Err(differ());
                }
                if matches!(a, Primitive::Time | Primitive::Duration)
                    || matches!(b, Primitive::Time | Primitive::Duration)
                {
                    return Err(differ());
                }
            }
            (FieldType::Message(i), FieldType::Message(j)) => check(src, *i, dst, *j, &here)?,
            _ => return Err(differ()),
        }
    }
    Ok(())
}

impl ToRos1 {
    /// Compiles the conversion of a ROS 2 (CDR) connection, or says why it cannot be converted.
    pub fn new(c: &crate::Connection) -> Result<ToRos1, String> {
        if c.encoding != "cdr" {
            return Err(format!("{} is {}-encoded, not CDR", c.topic, c.encoding));
        }
        let src = Plan::for_connection(c).map_err(|e| e.to_string())?;
        let datatype = ros1_name(&c.datatype);
        let (definition, dst) = target_definition(c, &datatype, Dialect::Ros1)?;
        check(&src.def, 0, &dst, 0, "").map_err(|e| format!("{} → {datatype}: {e}", c.datatype))?;
        let md5 = Plan::new(dst.clone()).md5;
        Ok(ToRos1 {
            src,
            dst,
            datatype,
            definition,
            md5,
        })
    }

    /// Converts one message: CDR bytes (with their header) in, ROS 1 bytes out.
    pub fn convert(&self, cdr: &[u8]) -> Result<Vec<u8>, String> {
        let v = self.src.decode(cdr).map_err(|e| e.to_string())?;
        let mut out = Vec::with_capacity(cdr.len() + 16);
        message(&mut out, &self.src.def, &self.dst, 0, &v.value)?;
        Ok(out)
    }
}

fn int(v: &Value) -> Option<i64> {
    Some(match v {
        Value::I8(x) => i64::from(*x),
        Value::U8(x) => i64::from(*x),
        Value::I16(x) => i64::from(*x),
        Value::U16(x) => i64::from(*x),
        Value::I32(x) => i64::from(*x),
        Value::U32(x) => i64::from(*x),
        Value::I64(x) => *x,
        _ => return None,
    })
}

/// `sec` and `nanosec` of a decoded `builtin_interfaces/Time` or `Duration`.
fn sec_nsec(v: &Value) -> Result<(i64, i64), String> {
    match v {
        Value::Time { sec, nsec } => Ok((i64::from(*sec), i64::from(*nsec))),
        Value::Duration { sec, nsec } => Ok((i64::from(*sec), i64::from(*nsec))),
        Value::Message { fields, .. } if fields.len() == 2 => {
            let s = int(&fields[0].value).ok_or("sec is not an integer")?;
            let n = int(&fields[1].value).ok_or("nanosec is not an integer")?;
            Ok((s, n))
        }
        other => Err(format!("not a time: {other:?}")),
    }
}

fn prim(out: &mut Vec<u8>, p: Primitive, v: &Value) -> Result<(), String> {
    // Values are written at the ROS 1 type's width (equal to the ROS 2 one, checked).
    match v {
        Value::Bool(b) => out.push(u8::from(*b)),
        Value::I8(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::U8(x) => out.push(*x),
        Value::I16(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::U16(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::I32(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::U32(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::I64(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::U64(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::F32(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::F64(x) => out.extend_from_slice(&x.to_le_bytes()),
        Value::String(s) => {
            out.extend_from_slice(&(s.len() as u32).to_le_bytes());
            out.extend_from_slice(s);
        }
        other => return Err(format!("cannot write {other:?} as {p:?}")),
    }
    Ok(())
}

fn scalar(
    out: &mut Vec<u8>,
    src: &MsgDef,
    dst: &MsgDef,
    ty: &FieldType,
    v: &Value,
) -> Result<(), String> {
    match ty {
        FieldType::Primitive(Primitive::Time) => {
            let (s, n) = sec_nsec(v)?;
            out.extend_from_slice(&(s as u32).to_le_bytes());
            out.extend_from_slice(&(n as u32).to_le_bytes());
            Ok(())
        }
        FieldType::Primitive(Primitive::Duration) => {
            let (s, n) = sec_nsec(v)?;
            out.extend_from_slice(&(s as i32).to_le_bytes());
            out.extend_from_slice(&(n as i32).to_le_bytes());
            Ok(())
        }
        FieldType::Primitive(p) => prim(out, *p, v),
        FieldType::Message(j) => message(out, src, dst, *j, v),
    }
}

fn message(
    out: &mut Vec<u8>,
    src: &MsgDef,
    dst: &MsgDef,
    d: usize,
    v: &Value,
) -> Result<(), String> {
    let Value::Message { ty: s, fields } = v else {
        return Err("expected a message".into());
    };
    let st = &src.types[*s];
    for g in &dst.types[d].fields {
        let Some(k) = field_named(&st.fields, &g.name) else {
            // Only Header.seq has no ROS 2 field (checked).
            out.extend_from_slice(&0u32.to_le_bytes());
            continue;
        };
        let val = &fields.get(k).ok_or("a field is missing")?.value;
        match g.array {
            ArrayKind::Scalar => scalar(out, src, dst, &g.ty, val)?,
            ArrayKind::Fixed(_) | ArrayKind::Variable => {
                let n = val.len().unwrap_or(0);
                if g.array == ArrayKind::Variable {
                    out.extend_from_slice(&(n as u32).to_le_bytes());
                }
                match val {
                    Value::Bytes(b) => out.extend_from_slice(b),
                    Value::Array(items) => {
                        for it in items {
                            scalar(out, src, dst, &g.ty, &it.value)?;
                        }
                    }
                    Value::Prims(..) => {
                        for i in 0..n {
                            let e = val.element(i).map(|x| x.0).ok_or("array element")?;
                            scalar(out, src, dst, &g.ty, &e)?;
                        }
                    }
                    other => return Err(format!("{}: not an array: {other:?}", g.name)),
                }
            }
        }
    }
    Ok(())
}
