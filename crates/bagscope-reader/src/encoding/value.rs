//! The value tree a message decodes into: [`Value`], [`Node`] (a value and its bytes).

use std::fmt;
use std::fmt::Write as _;

use super::Segment;
use crate::definition::msg::{MsgDef, Primitive};

/// A decoded value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `bool`.
    Bool(bool),
    /// `int8`, `byte`.
    I8(i8),
    /// `uint8`, `char`.
    U8(u8),
    /// `int16`.
    I16(i16),
    /// `uint16`.
    U16(u16),
    /// `int32`.
    I32(i32),
    /// `uint32`.
    U32(u32),
    /// `int64`.
    I64(i64),
    /// `uint64`.
    U64(u64),
    /// `float32`.
    F32(f32),
    /// `float64`.
    F64(f64),
    /// `string`: the bytes as stored (not necessarily UTF-8).
    String(Vec<u8>),
    /// `time`.
    Time {
        /// Seconds.
        sec: u32,
        /// Nanoseconds.
        nsec: u32,
    },
    /// `duration`.
    Duration {
        /// Seconds.
        sec: i32,
        /// Nanoseconds.
        nsec: i32,
    },
    /// `uint8[]`/`char[]` (fixed or variable): one value, however long.
    Bytes(Vec<u8>),
    /// An array of another fixed-size primitive, kept as its little-endian bytes; see
    /// [`Value::element`].
    Prims(Primitive, Vec<u8>),
    /// An array of strings or messages.
    Array(Vec<Node>),
    /// A message: its type (index into [`MsgDef::types`]) and its fields in order.
    Message {
        /// Type index.
        ty: usize,
        /// One node per field.
        fields: Vec<Node>,
    },
}

/// A value and the bytes of the message it was read from (`start..end`).
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// The value.
    pub value: Value,
    /// First byte.
    pub start: u32,
    /// One past the last byte.
    pub end: u32,
}

/// A primitive's value from its little-endian bytes: `None` for a string (no fixed size) or
/// where `b` is shorter than the primitive.
pub fn prim_value(p: Primitive, b: &[u8]) -> Option<Value> {
    let n = p.size()?;
    (b.len() >= n).then(|| read_prim(p, b))
}

/// A primitive's value from its little-endian bytes (at least its size of them).
pub(crate) fn read_prim(p: Primitive, b: &[u8]) -> Value {
    let a = |n: usize| -> [u8; 8] {
        let mut x = [0u8; 8];
        x[..n].copy_from_slice(&b[..n]);
        x
    };
    match p {
        Primitive::Bool => Value::Bool(b[0] != 0),
        Primitive::I8 => Value::I8(b[0] as i8),
        Primitive::U8 => Value::U8(b[0]),
        Primitive::I16 => Value::I16(i16::from_le_bytes([b[0], b[1]])),
        Primitive::U16 => Value::U16(u16::from_le_bytes([b[0], b[1]])),
        Primitive::I32 => Value::I32(i32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        Primitive::U32 => Value::U32(u32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        Primitive::F32 => Value::F32(f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        Primitive::I64 => Value::I64(i64::from_le_bytes(a(8))),
        Primitive::U64 => Value::U64(u64::from_le_bytes(a(8))),
        Primitive::F64 => Value::F64(f64::from_le_bytes(a(8))),
        Primitive::Time => Value::Time {
            sec: u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            nsec: u32::from_le_bytes([b[4], b[5], b[6], b[7]]),
        },
        Primitive::Duration => Value::Duration {
            sec: i32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            nsec: i32::from_le_bytes([b[4], b[5], b[6], b[7]]),
        },
        // Strings are never read through here (they have no fixed size).
        Primitive::String => Value::String(Vec::new()),
    }
}

impl Node {
    /// Field `name` of this message node as a number (`None` where there is no such field or
    /// it is not a number).
    pub fn number(&self, def: &MsgDef, name: &str) -> Option<f64> {
        self.field(def, name)?.value.as_f64()
    }

    /// The value of field `name` of this message (see [`Node::field`]).
    pub fn field_value<'a>(&'a self, def: &MsgDef, name: &str) -> Option<&'a Value> {
        self.field(def, name).map(|n| &n.value)
    }

    /// Field `name` of this message node (`None` if it is not a message or has no such field).
    pub fn field<'a>(&'a self, def: &MsgDef, name: &str) -> Option<&'a Node> {
        let Value::Message { ty, fields } = &self.value else {
            return None;
        };
        let i = def
            .types
            .get(*ty)?
            .fields
            .iter()
            .position(|f| f.name == name)?;
        fields.get(i)
    }

    /// The node at `segments` under this one (fields by name, array elements by index,
    /// negative from the end).
    pub fn at<'a>(&'a self, def: &MsgDef, segments: &[Segment]) -> Option<&'a Node> {
        let mut node = self;
        for s in segments {
            node = match (s, &node.value) {
                (Segment::Field(name), _) => node.field(def, name)?,
                (Segment::Index(i), Value::Array(items)) => {
                    let n = items.len() as i64;
                    let k = if *i < 0 { n + i } else { *i };
                    items.get(usize::try_from(k).ok()?)?
                }
                _ => return None,
            };
        }
        Some(node)
    }
}

impl Value {
    /// The number a plot shows for a scalar: booleans as 0/1, times in seconds.
    pub fn as_f64(&self) -> Option<f64> {
        Some(match *self {
            Value::Bool(b) => f64::from(u8::from(b)),
            Value::I8(v) => f64::from(v),
            Value::U8(v) => f64::from(v),
            Value::I16(v) => f64::from(v),
            Value::U16(v) => f64::from(v),
            Value::I32(v) => f64::from(v),
            Value::U32(v) => f64::from(v),
            Value::I64(v) => v as f64,
            Value::U64(v) => v as f64,
            Value::F32(v) => f64::from(v),
            Value::F64(v) => v,
            Value::Time { sec, nsec } => f64::from(sec) + f64::from(nsec) * 1e-9,
            Value::Duration { sec, nsec } => f64::from(sec) + f64::from(nsec) * 1e-9,
            _ => return None,
        })
    }

    /// Elements of an array value (`Bytes`, `Prims`, `Array`), else `None`.
    pub fn len(&self) -> Option<usize> {
        match self {
            Value::Bytes(b) => Some(b.len()),
            Value::Prims(p, b) => Some(b.len() / p.size().unwrap_or(1).max(1)),
            Value::Array(a) => Some(a.len()),
            _ => None,
        }
    }

    /// Whether this is an array with no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == Some(0)
    }

    /// Element `i` of a `Bytes` or `Prims` array, and its byte offset within the array.
    pub fn element(&self, i: usize) -> Option<(Value, usize)> {
        match self {
            Value::Bytes(b) => b.get(i).map(|&x| (Value::U8(x), i)),
            Value::Prims(p, b) => {
                let sz = p.size()?;
                let off = i.checked_mul(sz)?;
                b.get(off..off + sz).map(|s| (read_prim(*p, s), off))
            }
            _ => None,
        }
    }
}

/// Writes bytes as text: UTF-8 as is, anything else escaped (`\xNN`), never dropped.
pub fn escape_bytes(b: &[u8], out: &mut String) {
    for chunk in b.utf8_chunks() {
        out.push_str(chunk.valid());
        for x in chunk.invalid() {
            let _ = write!(out, "\\x{x:02x}");
        }
    }
}

impl fmt::Display for Value {
    /// Scalars as `rostopic echo` shows them; arrays and messages as a short summary.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Bool(v) => write!(f, "{}", if *v { "True" } else { "False" }),
            Value::I8(v) => write!(f, "{v}"),
            Value::U8(v) => write!(f, "{v}"),
            Value::I16(v) => write!(f, "{v}"),
            Value::U16(v) => write!(f, "{v}"),
            Value::I32(v) => write!(f, "{v}"),
            Value::U32(v) => write!(f, "{v}"),
            Value::I64(v) => write!(f, "{v}"),
            Value::U64(v) => write!(f, "{v}"),
            Value::F32(v) => write!(f, "{v:?}"),
            Value::F64(v) => write!(f, "{v:?}"),
            Value::String(b) => {
                let mut s = String::new();
                escape_bytes(b, &mut s);
                write!(f, "{s:?}")
            }
            Value::Time { sec, nsec } => write!(f, "{sec}.{nsec:09}"),
            Value::Duration { sec, nsec } => {
                let total = i64::from(*sec) * 1_000_000_000 + i64::from(*nsec);
                let sign = if total < 0 { "-" } else { "" };
                let a = total.unsigned_abs();
                write!(f, "{sign}{}.{:09}", a / 1_000_000_000, a % 1_000_000_000)
            }
            Value::Bytes(b) => write!(f, "<{} bytes>", b.len()),
            Value::Prims(p, b) => {
                write!(f, "<{} × {:?}>", b.len() / p.size().unwrap_or(1).max(1), p)
            }
            Value::Array(a) => write!(f, "<{} items>", a.len()),
            Value::Message { fields, .. } => write!(f, "<{} fields>", fields.len()),
        }
    }
}
