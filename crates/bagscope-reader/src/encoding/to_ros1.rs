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

use super::convert::{field_named, match_types, Rules};
use crate::definition::msg::{ArrayKind, Dialect, FieldType, MsgDef, Primitive};
use crate::encoding::{Plan, Value};
use crate::error::ConvertError;

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
    msg_path: &[std::path::PathBuf],
) -> Result<(String, MsgDef), ConvertError> {
    let (text, _) = crate::definition::sources::lookup_for(datatype, dialect, "", msg_path)
        .ok_or_else(|| {
            ConvertError::new(format!(
                "{} has no {} definition (none on the search path or shipped)",
                c.datatype,
                if dialect == Dialect::Ros1 {
                    "ROS 1"
                } else {
                    "ROS 2"
                }
            ))
        })?;
    let def = MsgDef::parse_dialect(datatype, &text, dialect)
        .map_err(|e| ConvertError::new(e.to_string()))?;
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

/// Checks that ROS 2 type `s` (of `src`) converts to ROS 1 type `d` (of `dst`).
fn check(src: &MsgDef, dst: &MsgDef) -> Result<(), ConvertError> {
    let leaf = |a: &FieldType, b: &FieldType| match (a, b) {
        (FieldType::Message(j), FieldType::Primitive(Primitive::Time)) => {
            is_builtin(src, *j, "Time")
        }
        (FieldType::Message(j), FieldType::Primitive(Primitive::Duration)) => {
            is_builtin(src, *j, "Duration")
        }
        (FieldType::Primitive(a), FieldType::Primitive(b)) => {
            let same_width = a.size() == b.size() && a.is_numeric() == b.is_numeric();
            let time = |p: &Primitive| matches!(p, Primitive::Time | Primitive::Duration);
            (a == b || same_width) && !time(a) && !time(b)
        }
        _ => false,
    };
    match_types(
        src,
        0,
        dst,
        0,
        &Rules::between_ros(("ROS 2", "ROS 1"), &leaf),
    )
    .map(|_| ())
}

impl ToRos1 {
    /// Compiles the conversion of a ROS 2 (CDR) connection, or says why it cannot be converted;
    /// definitions not stored are searched in `msg_path` first.
    pub fn new(
        c: &crate::Connection,
        msg_path: &[std::path::PathBuf],
    ) -> Result<ToRos1, ConvertError> {
        if c.encoding != "cdr" {
            return Err(ConvertError::new(format!(
                "{} is {}-encoded, not CDR",
                c.topic, c.encoding
            )));
        }
        let src =
            Plan::for_connection(c, msg_path).map_err(|e| ConvertError::new(e.to_string()))?;
        let datatype = ros1_name(&c.datatype);
        let (definition, dst) = target_definition(c, &datatype, Dialect::Ros1, msg_path)?;
        check(&src.def, &dst).map_err(|e| e.of(format!("{} → {datatype}", c.datatype)))?;
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
    pub fn convert(&self, cdr: &[u8]) -> Result<Vec<u8>, ConvertError> {
        let v = self
            .src
            .decode(cdr)
            .map_err(|e| ConvertError::new(e.to_string()))?;
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
fn sec_nsec(v: &Value) -> Result<(i64, i64), ConvertError> {
    match v {
        Value::Time { sec, nsec } => Ok((i64::from(*sec), i64::from(*nsec))),
        Value::Duration { sec, nsec } => Ok((i64::from(*sec), i64::from(*nsec))),
        Value::Message { fields, .. } if fields.len() == 2 => {
            let s =
                int(&fields[0].value).ok_or_else(|| ConvertError::new("sec is not an integer"))?;
            let n = int(&fields[1].value)
                .ok_or_else(|| ConvertError::new("nanosec is not an integer"))?;
            Ok((s, n))
        }
        other => Err(ConvertError::new(format!("not a time: {other:?}"))),
    }
}

fn prim(out: &mut Vec<u8>, p: Primitive, v: &Value) -> Result<(), ConvertError> {
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
        other => {
            return Err(ConvertError::new(format!(
                "cannot write {other:?} as {p:?}"
            )))
        }
    }
    Ok(())
}

fn scalar(
    out: &mut Vec<u8>,
    src: &MsgDef,
    dst: &MsgDef,
    ty: &FieldType,
    v: &Value,
) -> Result<(), ConvertError> {
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
) -> Result<(), ConvertError> {
    let Value::Message { ty: s, fields } = v else {
        return Err(ConvertError::new("expected a message"));
    };
    let st = &src.types[*s];
    for g in &dst.types[d].fields {
        let Some(k) = field_named(&st.fields, &g.name) else {
            // Only Header.seq has no ROS 2 field (checked).
            out.extend_from_slice(&0u32.to_le_bytes());
            continue;
        };
        let val = &fields
            .get(k)
            .ok_or_else(|| ConvertError::new("a field is missing"))?
            .value;
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
                            let e = val
                                .element(i)
                                .map(|x| x.0)
                                .ok_or_else(|| ConvertError::new("array element"))?;
                            scalar(out, src, dst, &g.ty, &e)?;
                        }
                    }
                    other => {
                        return Err(ConvertError::new(format!(
                            "{}: not an array: {other:?}",
                            g.name
                        )))
                    }
                }
            }
        }
    }
    Ok(())
}
