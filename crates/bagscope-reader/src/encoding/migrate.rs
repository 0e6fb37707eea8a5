//! Migration of recorded messages to newer definitions of their types (`bagscope export
//! --migrate DIR`).
//!
//! For a connection whose type has a definition in DIR that differs from the recorded one, the
//! two are matched by field name before anything is written: a field in both is carried over
//! (numbers widened where no value can be lost: `int32` to `int64`, `float32` to `float64`,
//! `uint8` to `int16`...); a field only in the new definition takes its default (zero, empty,
//! or the nested type's default); a field only in the old one is dropped and reported. A field
//! whose type changed in a way that could lose values (narrowing, number to string, a message
//! type to another shape, a fixed array of another length) makes the type unmigratable: it is
//! named with that field and its messages are left as they were. Messages are re-encoded in
//! their own encoding (ROS 1 serialization or CDR).

use super::convert::{match_types, same_arrays, Changes, Rules};
use crate::definition::msg::{ArrayKind, Dialect, FieldType, MsgDef, Primitive};
use crate::encoding::{Plan, Value};
use crate::error::ConvertError;

/// A connection's migration, compiled once.
#[derive(Debug, Clone)]
pub struct Migration {
    src: Plan,
    dst: MsgDef,
    cdr: bool,
    /// The new definition text.
    pub definition: String,
    /// The new md5sum (ROS 1).
    pub md5: String,
    /// Fields of the old definition that the new one drops (`Type.field`).
    pub dropped: Vec<String>,
    /// Fields the new definition adds, written with their defaults.
    pub added: Vec<String>,
}

/// Whether every value of `a` fits in `b`.
fn widens(a: Primitive, b: Primitive) -> bool {
    use Primitive::*;
    if a == b {
        return true;
    }
    let int = |p| match p {
        I8 => Some((true, 8)),
        U8 | Bool => Some((false, 8)),
        I16 => Some((true, 16)),
        U16 => Some((false, 16)),
        I32 => Some((true, 32)),
        U32 => Some((false, 32)),
        I64 => Some((true, 64)),
        U64 => Some((false, 64)),
        _ => None,
    };
    match (int(a), int(b), b) {
        (Some((sa, wa)), Some((sb, wb)), _) if a != Bool && b != Bool => {
            (sa == sb && wb >= wa) || (!sa && sb && wb > wa)
        }
        (Some((_, wa)), None, F64) => wa <= 32,
        (Some((_, wa)), None, F32) => wa <= 16,
        (None, None, F64) => a == F32,
        _ => false,
    }
}

impl Migration {
    /// Compiles the migration of connection `c` to the definition `text` of its type, or says
    /// why it cannot migrate. `Ok(None)`: the definitions are the same.
    pub fn new(c: &crate::Connection, text: &str) -> Result<Option<Migration>, ConvertError> {
        let cdr = match c.encoding.as_str() {
            "ros1" => false,
            "cdr" => true,
            e => return Err(ConvertError::new(format!("encoding {e} is not migrated"))),
        };
        // The source is the recording's own definition (a migration is from what was
        // recorded); nothing is searched for it.
        let src = Plan::for_connection(c, &[]).map_err(|e| ConvertError::new(e.to_string()))?;
        let dialect = if cdr { Dialect::Ros2 } else { Dialect::Ros1 };
        let dst = MsgDef::parse_dialect(&c.datatype, text, dialect)
            .map_err(|e| ConvertError::new(e.to_string()))?;
        if dst == src.def {
            return Ok(None);
        }
        let leaf = |a: &FieldType, b: &FieldType| match (a, b) {
            (FieldType::Primitive(a), FieldType::Primitive(b)) => widens(*a, *b),
            _ => false,
        };
        let rules = Rules {
            sides: ("the recording", "the new definition"),
            exact_names: true,
            header_seq: false,
            drop_missing: true,
            default_missing: true,
            by_type: true,
            // A fixed array fits a sequence.
            arrays: |a, b| {
                same_arrays(a, b) || matches!((a, b), (ArrayKind::Fixed(_), ArrayKind::Variable))
            },
            leaf: &leaf,
        };
        let Changes { dropped, added } = match_types(&src.def, 0, &dst, 0, &rules)?;
        let md5 = dst.md5();
        if !cdr && md5 == src.md5 {
            return Ok(None);
        }
        Ok(Some(Migration {
            src,
            dst,
            cdr,
            definition: text.to_string(),
            md5,
            dropped,
            added,
        }))
    }

    /// Re-encodes one message.
    pub fn convert(&self, data: &[u8]) -> Result<Vec<u8>, ConvertError> {
        let v = self
            .src
            .decode(data)
            .map_err(|e| ConvertError::new(e.to_string()))?;
        let mut w = Out {
            out: Vec::with_capacity(data.len() + 16),
            cdr: self.cdr,
        };
        if self.cdr {
            w.out.extend_from_slice(&[0, 1, 0, 0]);
        }
        w.message(&self.src.def, &self.dst, 0, Some(&v.value))?;
        Ok(w.out)
    }
}

struct Out {
    out: Vec<u8>,
    cdr: bool,
}

fn as_i128(v: &Value) -> Option<i128> {
    Some(match v {
        Value::Bool(b) => i128::from(*b),
        Value::I8(x) => i128::from(*x),
        Value::U8(x) => i128::from(*x),
        Value::I16(x) => i128::from(*x),
        Value::U16(x) => i128::from(*x),
        Value::I32(x) => i128::from(*x),
        Value::U32(x) => i128::from(*x),
        Value::I64(x) => i128::from(*x),
        Value::U64(x) => i128::from(*x),
        _ => return None,
    })
}

impl Out {
    fn align(&mut self, n: usize) {
        if self.cdr && n > 1 {
            let rel = self.out.len() - 4;
            self.out.resize(self.out.len() + (n - rel % n) % n, 0);
        }
    }

    fn u32(&mut self, x: u32) {
        self.align(4);
        self.out.extend_from_slice(&x.to_le_bytes());
    }

    /// Writes `v` (or the default, when `None`) as primitive `p`.
    fn prim(&mut self, p: Primitive, v: Option<&Value>) -> Result<(), ConvertError> {
        let i = v.and_then(as_i128).unwrap_or(0);
        let f = match v {
            Some(Value::F32(x)) => f64::from(*x),
            Some(Value::F64(x)) => *x,
            Some(other) => as_i128(other).unwrap_or(0) as f64,
            None => 0.0,
        };
        let b: Vec<u8> = match p {
            Primitive::Bool => vec![u8::from(i != 0)],
            Primitive::I8 => (i as i8).to_le_bytes().to_vec(),
            Primitive::U8 => (i as u8).to_le_bytes().to_vec(),
            Primitive::I16 => (i as i16).to_le_bytes().to_vec(),
            Primitive::U16 => (i as u16).to_le_bytes().to_vec(),
            Primitive::I32 => (i as i32).to_le_bytes().to_vec(),
            Primitive::U32 => (i as u32).to_le_bytes().to_vec(),
            Primitive::I64 => (i as i64).to_le_bytes().to_vec(),
            Primitive::U64 => (i as u64).to_le_bytes().to_vec(),
            Primitive::F32 => (f as f32).to_le_bytes().to_vec(),
            Primitive::F64 => f.to_le_bytes().to_vec(),
            Primitive::String => {
                let s: &[u8] = match v {
                    Some(Value::String(s)) => s,
                    _ => &[],
                };
                let n = s.len() + usize::from(self.cdr);
                self.u32(n as u32);
                self.out.extend_from_slice(s);
                if self.cdr {
                    self.out.push(0);
                }
                return Ok(());
            }
            Primitive::Time | Primitive::Duration => {
                let (a, b) = match v {
                    Some(Value::Time { sec, nsec }) => (*sec, *nsec),
                    Some(Value::Duration { sec, nsec }) => (*sec as u32, *nsec as u32),
                    _ => (0, 0),
                };
                self.align(4);
                self.out.extend_from_slice(&a.to_le_bytes());
                self.out.extend_from_slice(&b.to_le_bytes());
                return Ok(());
            }
        };
        self.align(b.len());
        self.out.extend_from_slice(&b);
        Ok(())
    }

    fn scalar(
        &mut self,
        src: &MsgDef,
        dst: &MsgDef,
        ty: &FieldType,
        v: Option<&Value>,
    ) -> Result<(), ConvertError> {
        match ty {
            FieldType::Primitive(p) => self.prim(*p, v),
            FieldType::Message(j) => self.message(src, dst, *j, v),
        }
    }

    /// Writes a message of new type `d` from the old value `v` (`None`: all defaults).
    fn message(
        &mut self,
        src: &MsgDef,
        dst: &MsgDef,
        d: usize,
        v: Option<&Value>,
    ) -> Result<(), ConvertError> {
        let (st, fields) = match v {
            Some(Value::Message { ty, fields }) => (Some(&src.types[*ty]), Some(fields)),
            _ => (None, None),
        };
        for g in &dst.types[d].fields {
            let old = st.zip(fields).and_then(|(st, fields)| {
                st.fields
                    .iter()
                    .position(|f| f.name == g.name)
                    .map(|k| &fields[k].value)
            });
            match g.array {
                ArrayKind::Scalar => self.scalar(src, dst, &g.ty, old)?,
                ArrayKind::Fixed(_) | ArrayKind::Variable => {
                    let n = match (g.array, old) {
                        (ArrayKind::Fixed(n), _) => n,
                        (_, Some(v)) => v.len().unwrap_or(0),
                        _ => 0,
                    };
                    if g.array == ArrayKind::Variable {
                        self.u32(n as u32);
                    }
                    for i in 0..n {
                        let e: Option<Value> = match old {
                            Some(Value::Array(items)) => items.get(i).map(|x| x.value.clone()),
                            Some(v) => v.element(i).map(|x| x.0),
                            None => None,
                        };
                        self.scalar(src, dst, &g.ty, e.as_ref())?;
                    }
                }
            }
        }
        Ok(())
    }
}
