//! Message encodings: turning a message's bytes into values, from its definition.
//!
//! A [`Plan`] compiled once per connection decodes a message into a tree of [`Node`]s (values
//! with the byte range they came from), and a [`FieldPath`] compiles against a plan into an
//! [`Extractor`] that reads one value per message without building the tree.
//!
//! Two encodings share one decoder, as they share their structure (fields in order, arrays as
//! a u32 count then elements, fixed arrays without count):
//! - ROS 1 serialization: little endian, packed, strings a u32 length and the bytes;
//! - CDR ([`cdr`], ROS 2): a 4-byte encapsulation header giving the byte order, every value
//!   aligned to its size counted from the end of that header, strings counting their NUL.

use std::fmt::{self, Write as _};

use crate::definition::msg::{ArrayKind, DefError, Dialect, Field, FieldType, MsgDef, Primitive};

pub mod cdr;
pub mod json;
pub mod migrate;
pub mod protobuf;
pub mod to_ros1;
pub mod to_ros2;
use cdr::prim_align;

/// md5sum of an empty definition (`std_msgs/Empty`).
pub const EMPTY_MD5: &str = "d41d8cd98f00b204e9800998ecf8427e";

/// Most elements an array of zero-sized elements may claim (they take no bytes to check).
const MAX_EMPTY_ELEMENTS: u64 = 1 << 20;

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

/// Why a message did not decode: what, where (byte offset) and at which field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    /// Field path within the message (`header.frame_id`, `ranges[3]`).
    pub path: String,
    /// Byte offset within the message.
    pub offset: usize,
    /// What went wrong.
    pub reason: String,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = if self.path.is_empty() {
            "(message)"
        } else {
            &self.path
        };
        write!(f, "field {p} at byte {}: {}", self.offset, self.reason)
    }
}

impl std::error::Error for DecodeError {}

/// A connection's definition, compiled for decoding.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The definition.
    pub def: MsgDef,
    /// Wire size of each type when it has no variable part.
    fixed: Vec<Option<usize>>,
    /// Fewest bytes a value of each type can take.
    min: Vec<usize>,
    /// The md5sum computed from the definition.
    pub md5: String,
    /// Whether messages are CDR (ROS 2) rather than ROS 1 serialization.
    pub cdr: bool,
    /// Protobuf messages: the wire facts of `def`'s fields (`None` for ROS 1 and CDR).
    pub proto: Option<std::sync::Arc<protobuf::Schema>>,
    /// JSON messages (`def` made from a JSON Schema).
    pub json: bool,
}

fn prim_min(p: Primitive) -> usize {
    p.size().unwrap_or(4)
}

impl Plan {
    /// Compiles a parsed definition.
    pub fn new(def: MsgDef) -> Plan {
        let n = def.types.len();
        let mut fixed: Vec<Option<Option<usize>>> = vec![None; n];
        let mut min: Vec<Option<usize>> = vec![None; n];
        fn sizes(
            d: &MsgDef,
            i: usize,
            fixed: &mut [Option<Option<usize>>],
            min: &mut [Option<usize>],
        ) -> (Option<usize>, usize) {
            if let (Some(f), Some(m)) = (fixed[i], min[i]) {
                return (f, m);
            }
            let mut fx = Some(0usize);
            let mut mn = 0usize;
            for f in &d.types[i].fields {
                let (ef, em) = match f.ty {
                    FieldType::Primitive(p) => (p.size(), prim_min(p)),
                    FieldType::Message(j) => sizes(d, j, fixed, min),
                };
                match f.array {
                    ArrayKind::Scalar => {
                        fx = fx.zip(ef).map(|(a, b)| a.saturating_add(b));
                        mn = mn.saturating_add(em);
                    }
                    ArrayKind::Fixed(k) => {
                        fx = fx
                            .zip(ef)
                            .map(|(a, b)| a.saturating_add(b.saturating_mul(k)));
                        mn = mn.saturating_add(em.saturating_mul(k));
                    }
                    ArrayKind::Variable => {
                        fx = None;
                        mn = mn.saturating_add(4);
                    }
                }
            }
            fixed[i] = Some(fx);
            min[i] = Some(mn);
            (fx, mn)
        }
        // Types are acyclic (MsgDef::parse refuses recursion).
        for i in 0..n {
            sizes(&def, i, &mut fixed, &mut min);
        }
        let md5 = def.md5();
        Plan {
            def,
            fixed: fixed.into_iter().map(Option::flatten).collect(),
            min: min.into_iter().map(|m| m.unwrap_or(0)).collect(),
            md5,
            cdr: false,
            proto: None,
            json: false,
        }
    }

    /// A plan for JSON messages described by a JSON Schema, the root type named `name`.
    pub fn json(schema: &str, name: &str) -> Result<Plan, String> {
        Ok(Plan::foreign(json::compile(schema, name)?, None))
    }

    /// A plan for a definition made from a foreign schema (protobuf with its wire facts, else
    /// JSON): nothing of ROS layout, no md5sum.
    fn foreign(def: MsgDef, proto: Option<protobuf::Schema>) -> Plan {
        let n = def.types.len();
        Plan {
            def,
            fixed: vec![None; n],
            min: vec![0; n],
            md5: String::new(),
            cdr: false,
            json: proto.is_none(),
            proto: proto.map(std::sync::Arc::new),
        }
    }

    /// A plan for protobuf messages of type `root` (`pkg.Msg`) from a binary
    /// `FileDescriptorSet`.
    pub fn protobuf(set: &[u8], root: &str) -> Result<Plan, String> {
        let (def, schema) = protobuf::compile(set, root)?;
        Ok(Plan::foreign(def, Some(schema)))
    }

    /// Compiles a parsed definition for CDR-encoded (ROS 2) messages.
    pub fn new_cdr(def: MsgDef) -> Plan {
        let mut p = Plan::new(def);
        p.cdr = true;
        // Alignment makes sizes position-dependent: no fixed-size shortcuts.
        for f in &mut p.fixed {
            *f = None;
        }
        // An empty type is one byte in CDR: never less than that, wherever it is nested.
        p.min = p.cdr_min_sizes();
        p
    }

    /// The fewest bytes a CDR value of each type takes (an empty type's byte counted; alignment
    /// padding not, as it may be none).
    fn cdr_min_sizes(&self) -> Vec<usize> {
        fn min(d: &MsgDef, i: usize, memo: &mut [Option<usize>]) -> usize {
            if let Some(m) = memo[i] {
                return m;
            }
            let t = &d.types[i];
            let mut mn = if t.fields.is_empty() { 1usize } else { 0 };
            for f in &t.fields {
                let em = match f.ty {
                    FieldType::Primitive(p) => prim_min(p),
                    FieldType::Message(j) => min(d, j, memo),
                };
                mn = mn.saturating_add(match f.array {
                    ArrayKind::Scalar => em,
                    ArrayKind::Fixed(k) => em.saturating_mul(k),
                    ArrayKind::Variable => 4,
                });
            }
            memo[i] = Some(mn);
            mn
        }
        let mut memo = vec![None; self.def.types.len()];
        (0..self.def.types.len())
            .map(|i| min(&self.def, i, &mut memo))
            .collect()
    }

    /// Parses and compiles a connection's definition: the one stored in the recording, else one
    /// found on the search paths or shipped with bagscope (see [`crate::definition::sources`]). Encodings other
    /// than `ros1` and `cdr` are not decoded.
    pub fn for_connection(c: &crate::Connection) -> Result<Plan, DefError> {
        Ok(Self::for_connection_with_source(c)?.0)
    }

    /// Like [`Plan::for_connection`], and says where the definition came from.
    pub fn for_connection_with_source(
        c: &crate::Connection,
    ) -> Result<(Plan, crate::definition::sources::DefSource), DefError> {
        let err = |reason: String| DefError {
            datatype: c.datatype.clone(),
            line: None,
            reason,
        };
        let cdr = match c.encoding.as_str() {
            "ros1" | "" => false,
            "cdr" => true,
            "protobuf" if c.schema_encoding == "protobuf" => {
                let set = if c.schema_data.is_empty() {
                    c.message_definition.as_bytes()
                } else {
                    &c.schema_data
                };
                return Plan::protobuf(set, &c.datatype)
                    .map(|p| (p, crate::definition::sources::DefSource::Recording))
                    .map_err(err);
            }
            "json" if c.schema_encoding == "jsonschema" => {
                let name = if c.datatype.is_empty() {
                    "json"
                } else {
                    &c.datatype
                };
                return Plan::json(&c.message_definition, name)
                    .map(|p| (p, crate::definition::sources::DefSource::Recording))
                    .map_err(err);
            }
            other => return Err(err(format!("not decoded: encoding {other}"))),
        };
        let dialect = if cdr { Dialect::Ros2 } else { Dialect::Ros1 };
        let text = c.message_definition.as_str();
        let stored: Option<Result<MsgDef, DefError>> = if !text.trim().is_empty() {
            Some(match c.schema_encoding.as_str() {
                "" | "ros1msg" | "ros2msg" => MsgDef::parse_dialect(&c.datatype, text, dialect),
                "ros2idl" | "omgidl" => crate::definition::idl::parse(&c.datatype, text),
                other => Err(err(format!(
                    "not decoded: definition language {other} (bagscope reads ros1msg, ros2msg, ros2idl and omgidl)"
                ))),
            })
        } else if !cdr && c.md5sum == EMPTY_MD5 {
            Some(MsgDef::parse_dialect(&c.datatype, "", dialect))
        } else {
            None
        };
        let def = match stored {
            Some(Ok(def)) => (def, crate::definition::sources::DefSource::Recording),
            // A definition the recording stores but that does not parse: one from the search
            // path or the shipped interfaces in its place, saying so.
            Some(Err(e)) => match crate::definition::sources::lookup_for(&c.datatype, dialect, &c.distro) {
                Some((text, found)) => (
                    MsgDef::parse_dialect(&c.datatype, &text, dialect)?,
                    crate::definition::sources::DefSource::Instead {
                        found: Box::new(found),
                        stored_error: e.to_string(),
                    },
                ),
                None => return Err(e),
            },
            None => match crate::definition::sources::lookup_for(&c.datatype, dialect, &c.distro) {
                Some((text, found)) => (MsgDef::parse_dialect(&c.datatype, &text, dialect)?, found),
                // An empty `ros2msg` schema is the definition of an empty message
                // (`std_msgs/msg/Empty`): nothing found elsewhere says otherwise.
                None if cdr && c.schema_encoding == "ros2msg" => (
                    MsgDef::parse_dialect(&c.datatype, "", dialect)?,
                    crate::definition::sources::DefSource::Recording,
                ),
                None => {
                    return Err(err(format!(
                        "the recording stores no definition for {} on {}, and none was found on the message search path (--msg-path, BAGSCOPE_MSG_PATH, AMENT_PREFIX_PATH, ROS_PACKAGE_PATH) or among the definitions bagscope ships",
                        c.datatype, c.topic
                    )))
                }
            },
        };
        let (def, source) = def;
        Ok((
            if cdr {
                Plan::new_cdr(def)
            } else {
                Plan::new(def)
            },
            source,
        ))
    }

    /// Whether the computed md5sum equals `recorded` (a `*` wildcard matches anything).
    pub fn md5_matches(&self, recorded: &str) -> bool {
        recorded == "*" || self.md5 == recorded
    }

    /// Wire size of type `ty` if fixed.
    pub fn fixed_size(&self, ty: usize) -> Option<usize> {
        self.fixed.get(ty).copied().flatten()
    }

    fn elem_sizes(&self, f: &Field) -> (Option<usize>, usize) {
        match f.ty {
            FieldType::Primitive(p) => (p.size(), prim_min(p)),
            FieldType::Message(j) => (self.fixed[j], self.min[j]),
        }
    }

    /// Whether [`Self::decode`] would decode `data`, found without building its value tree
    /// (no allocation): the same walk, skipping. `false` says nothing of where it fails; decode
    /// it for that.
    pub fn validates(&self, data: &[u8]) -> bool {
        if self.proto.is_some() || self.json {
            return self.decode(data).is_ok();
        }
        let mut d = Decoder::new(self, data);
        if self.cdr && d.cdr_header().is_err() {
            return false;
        }
        if d.skip_message(0).is_err() {
            return false;
        }
        let slack = if self.cdr { 3 } else { 0 };
        d.pos + slack >= data.len()
    }

    /// Decodes a whole message. Trailing bytes after the last field are an error.
    pub fn decode(&self, data: &[u8]) -> Result<Node, DecodeError> {
        if let Some(p) = &self.proto {
            return p.decode(&self.def, data);
        }
        if self.json {
            return json::decode(&self.def, data);
        }
        let mut d = Decoder::new(self, data);
        if self.cdr {
            d.cdr_header()?;
        }
        let root = d.message(0)?;
        // CDR may pad the end to a multiple of 4 (the header's options say by how much).
        let slack = if self.cdr { 3 } else { 0 };
        if d.pos + slack < data.len() {
            return Err(DecodeError {
                path: String::new(),
                offset: d.pos,
                reason: format!("{} trailing bytes after the last field", data.len() - d.pos),
            });
        }
        Ok(root)
    }
}

enum PathPart<'a> {
    Field(&'a str),
    Index(u64),
}

struct Decoder<'p, 'd> {
    plan: &'p Plan,
    data: &'d [u8],
    pos: usize,
    path: Vec<PathPart<'p>>,
    /// CDR: big-endian data.
    be: bool,
    /// CDR: where alignment is counted from (after the encapsulation header).
    origin: usize,
    /// CDR: largest alignment (8 in XCDR1, 4 in XCDR2).
    max_align: usize,
}

impl<'p, 'd> Decoder<'p, 'd> {
    fn new(plan: &'p Plan, data: &'d [u8]) -> Decoder<'p, 'd> {
        Decoder {
            plan,
            data,
            pos: 0,
            path: Vec::new(),
            be: false,
            origin: 0,
            max_align: 8,
        }
    }
}

impl Decoder<'_, '_> {
    fn err(&self, reason: String) -> DecodeError {
        let mut path = String::new();
        for p in &self.path {
            match p {
                PathPart::Field(n) => {
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(n);
                }
                PathPart::Index(i) => {
                    let _ = write!(path, "[{i}]");
                }
            }
        }
        DecodeError {
            path,
            offset: self.pos,
            reason,
        }
    }

    fn take(&mut self, n: usize) -> Result<&[u8], DecodeError> {
        let avail = self.data.len() - self.pos;
        if n > avail {
            return Err(self.err(format!("needs {n} bytes, only {avail} left in the message")));
        }
        let s = &self.data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    fn u32(&mut self) -> Result<u32, DecodeError> {
        self.align(4)?;
        let be = self.be;
        let b = self.take(4)?;
        let a = [b[0], b[1], b[2], b[3]];
        Ok(if be {
            u32::from_be_bytes(a)
        } else {
            u32::from_le_bytes(a)
        })
    }

    /// Reads `count` values of `p` (fixed size `sz`) as little-endian bytes.
    fn prims(&mut self, p: Primitive, sz: usize, count: usize) -> Result<Vec<u8>, DecodeError> {
        if count > 0 {
            self.align(prim_align(p))?;
        }
        let be = self.be && self.plan.cdr;
        let b = self.take(count * sz)?;
        if !be || sz == 1 {
            return Ok(b.to_vec());
        }
        let mut v = b.to_vec();
        let unit = prim_align(p);
        for c in v.chunks_exact_mut(unit) {
            c.reverse();
        }
        Ok(v)
    }

    fn prim(&mut self, p: Primitive) -> Result<Node, DecodeError> {
        self.align(prim_align(p))?;
        let start = self.pos as u32;
        let value = match p {
            Primitive::String => {
                let n = self.u32()? as usize;
                let cdr = self.plan.cdr;
                let b = self.take(n)?;
                // CDR strings count and carry their terminating NUL.
                let b = if cdr {
                    b.strip_suffix(&[0]).unwrap_or(b)
                } else {
                    b
                };
                Value::String(b.to_vec())
            }
            _ => {
                let sz = p.size().unwrap_or(0);
                let b = self.prims(p, sz, 1)?;
                read_prim(p, &b)
            }
        };
        Ok(Node {
            value,
            start,
            end: self.pos as u32,
        })
    }

    /// [`Self::message`] without the value: the same reads and checks, nothing kept.
    fn skip_message(&mut self, ty: usize) -> Result<(), DecodeError> {
        let plan = self.plan;
        let fields = &plan.def.types[ty].fields;
        if fields.is_empty() {
            return self.empty_pad();
        }
        for f in fields {
            self.skip_field(f)?;
        }
        Ok(())
    }

    /// An empty type in CDR is one byte (rosidl's `structure_needs_at_least_one_member`), which
    /// is not a field of the message; in ROS 1 it is nothing.
    fn empty_pad(&mut self) -> Result<(), DecodeError> {
        if self.plan.cdr {
            self.take(1)?;
        }
        Ok(())
    }

    fn skip_scalar(&mut self, f: &Field) -> Result<(), DecodeError> {
        match f.ty {
            FieldType::Primitive(Primitive::String) => {
                self.align(prim_align(Primitive::String))?;
                let n = self.u32()? as usize;
                self.take(n)?;
                Ok(())
            }
            FieldType::Primitive(p) => {
                self.align(prim_align(p))?;
                self.take(p.size().unwrap_or(0))?;
                Ok(())
            }
            FieldType::Message(j) => self.skip_message(j),
        }
    }

    /// [`Self::field`] without the value.
    fn skip_field(&mut self, f: &Field) -> Result<(), DecodeError> {
        let Some((count, fixed)) = self.array_head(f)? else {
            return self.skip_scalar(f);
        };
        match (&f.ty, fixed) {
            (FieldType::Primitive(Primitive::U8), _) => {
                self.take(count as usize)?;
            }
            (FieldType::Primitive(p), Some(sz)) => {
                if count > 0 {
                    self.align(prim_align(*p))?;
                }
                self.take(count as usize * sz)?;
            }
            _ => {
                for _ in 0..count {
                    self.skip_scalar(f)?;
                }
            }
        }
        Ok(())
    }

    fn message(&mut self, ty: usize) -> Result<Node, DecodeError> {
        let plan = self.plan;
        let start = self.pos as u32;
        let t = &plan.def.types[ty];
        if t.fields.is_empty() {
            self.empty_pad()?;
        }
        let mut fields = Vec::with_capacity(t.fields.len());
        for f in &t.fields {
            self.path.push(PathPart::Field(&f.name));
            let n = self.field(f)?;
            self.path.pop();
            fields.push(n);
        }
        Ok(Node {
            value: Value::Message { ty, fields },
            start,
            end: self.pos as u32,
        })
    }

    fn scalar(&mut self, f: &Field) -> Result<Node, DecodeError> {
        match f.ty {
            FieldType::Primitive(p) => self.prim(p),
            FieldType::Message(j) => self.message(j),
        }
    }

    /// An array field's element count (its length read, for a variable array) and fixed
    /// element size, once the elements are known to fit in what is left; `None` for a scalar.
    fn array_head(&mut self, f: &Field) -> Result<Option<(u64, Option<usize>)>, DecodeError> {
        let count = match f.array {
            ArrayKind::Scalar => return Ok(None),
            ArrayKind::Fixed(n) => n as u64,
            ArrayKind::Variable => u64::from(self.u32()?),
        };
        let fixed = match (&f.ty, self.plan.cdr) {
            // Primitive runs stay contiguous under CDR alignment.
            (FieldType::Primitive(p), true) => p.size(),
            _ => self.plan.elem_sizes(f).0,
        };
        let (_, min) = self.plan.elem_sizes(f);
        let avail = (self.data.len() - self.pos) as u64;
        if count.saturating_mul(min as u64) > avail || (min == 0 && count > MAX_EMPTY_ELEMENTS) {
            return Err(self.err(format!(
                "array of {count} elements cannot fit in the {avail} bytes left"
            )));
        }
        Ok(Some((count, fixed)))
    }

    fn field(&mut self, f: &Field) -> Result<Node, DecodeError> {
        let Some((count, fixed)) = self.array_head(f)? else {
            return self.scalar(f);
        };
        let start = if f.array == ArrayKind::Variable {
            self.pos as u32 - 4
        } else {
            self.pos as u32
        };
        let value = match (f.ty.clone(), fixed) {
            (FieldType::Primitive(Primitive::U8), _) => {
                Value::Bytes(self.take(count as usize)?.to_vec())
            }
            (FieldType::Primitive(p), Some(sz)) => {
                Value::Prims(p, self.prims(p, sz, count as usize)?)
            }
            _ => {
                let mut items = Vec::with_capacity(count as usize);
                for i in 0..count {
                    self.path.push(PathPart::Index(i));
                    items.push(self.scalar(f)?);
                    self.path.pop();
                }
                Value::Array(items)
            }
        };
        Ok(Node {
            value,
            start,
            end: self.pos as u32,
        })
    }
}

// ---------------------------------------------------------------------------------------------
// JSON

fn base64(b: &[u8], out: &mut String) {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for c in b.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        let k = c.len() + 1;
        for i in 0..4 {
            if i < k {
                out.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
}

fn json_str(s: &str, out: &mut String) {
    out.push('"');
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

fn json_float(v: f64, out: &mut String) {
    if v.is_nan() {
        out.push_str("\"NaN\"");
    } else if v.is_infinite() {
        out.push_str(if v > 0.0 {
            "\"Infinity\""
        } else {
            "\"-Infinity\""
        });
    } else {
        let _ = write!(out, "{v:?}");
    }
}

/// Writes a value as JSON: fields named as in the definition, `time`/`duration` as
/// `{"secs", "nsecs"}`, byte arrays as base64, non-finite floats as strings.
pub fn to_json(def: &MsgDef, v: &Value, out: &mut String) {
    match v {
        Value::F32(x) => {
            // Shortest text of the f32 itself, not of its f64 widening.
            if x.is_finite() {
                let _ = write!(out, "{x:?}");
            } else {
                json_float(f64::from(*x), out);
            }
        }
        Value::F64(x) => json_float(*x, out),
        Value::String(b) => {
            let mut s = String::new();
            escape_bytes(b, &mut s);
            json_str(&s, out);
        }
        Value::Time { sec, nsec } => {
            let _ = write!(out, "{{\"secs\": {sec}, \"nsecs\": {nsec}}}");
        }
        Value::Duration { sec, nsec } => {
            let _ = write!(out, "{{\"secs\": {sec}, \"nsecs\": {nsec}}}");
        }
        Value::Bytes(b) => {
            out.push('"');
            base64(b, out);
            out.push('"');
        }
        Value::Prims(..) => {
            out.push('[');
            let mut i = 0;
            while let Some((e, _)) = v.element(i) {
                if i > 0 {
                    out.push_str(", ");
                }
                to_json(def, &e, out);
                i += 1;
            }
            out.push(']');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, n) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                to_json(def, &n.value, out);
            }
            out.push(']');
        }
        Value::Message { ty, fields } => {
            out.push('{');
            if let Some(t) = def.types.get(*ty) {
                for (i, (f, n)) in t.fields.iter().zip(fields).enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    json_str(&f.name, out);
                    out.push_str(": ");
                    to_json(def, &n.value, out);
                }
            }
            out.push('}');
        }
        scalar => {
            let _ = write!(out, "{scalar}");
            if let Value::Bool(b) = scalar {
                // Display gives Python's True/False; JSON wants lowercase.
                out.truncate(out.len() - if *b { 4 } else { 5 });
                out.push_str(if *b { "true" } else { "false" });
            }
        }
    }
}

/// Writes a value the way `rostopic echo` does (YAML-like, indented by `indent`).
pub fn to_yaml(def: &MsgDef, v: &Value, indent: usize, out: &mut String) {
    let pad = "  ".repeat(indent);
    match v {
        Value::Message { ty, fields } => {
            if let Some(t) = def.types.get(*ty) {
                for (f, n) in t.fields.iter().zip(fields) {
                    match &n.value {
                        Value::Message { .. } => {
                            let _ = writeln!(out, "{pad}{}:", f.name);
                            to_yaml(def, &n.value, indent + 1, out);
                        }
                        Value::Time { sec, nsec } => {
                            let _ = writeln!(
                                out,
                                "{pad}{}:\n{pad}  secs: {sec}\n{pad}  nsecs: {nsec}",
                                f.name
                            );
                        }
                        Value::Duration { sec, nsec } => {
                            let _ = writeln!(
                                out,
                                "{pad}{}:\n{pad}  secs: {sec}\n{pad}  nsecs: {nsec}",
                                f.name
                            );
                        }
                        Value::Array(items)
                            if items
                                .iter()
                                .any(|x| matches!(x.value, Value::Message { .. })) =>
                        {
                            let _ = writeln!(out, "{pad}{}:", f.name);
                            for it in items {
                                let _ = writeln!(out, "{pad}  -");
                                to_yaml(def, &it.value, indent + 2, out);
                            }
                        }
                        other => {
                            let _ = write!(out, "{pad}{}: ", f.name);
                            inline(def, other, out);
                            out.push('\n');
                        }
                    }
                }
            }
        }
        other => {
            out.push_str(&pad);
            inline(def, other, out);
            out.push('\n');
        }
    }
}

fn inline(def: &MsgDef, v: &Value, out: &mut String) {
    match v {
        Value::Bytes(_) | Value::Prims(..) | Value::Array(_) => {
            out.push('[');
            let n = v.len().unwrap_or(0);
            for i in 0..n {
                if i > 0 {
                    out.push_str(", ");
                }
                match v {
                    Value::Array(items) => {
                        let _ = write!(out, "{}", items[i].value);
                    }
                    _ => {
                        if let Some((e, _)) = v.element(i) {
                            let _ = write!(out, "{e}");
                        }
                    }
                }
            }
            out.push(']');
        }
        Value::Message { .. } => {
            let mut s = String::new();
            to_json(def, v, &mut s);
            out.push_str(&s);
        }
        other => {
            let _ = write!(out, "{other}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Field paths

/// One step of a field path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    /// `.name`
    Field(String),
    /// `[i]`; negative counts from the end.
    Index(i64),
}

/// The paths (`PREFIX.field.sub[INDEX].x`) to the primitive fields of `def`'s root type that
/// `keep` accepts, arrays entered at element `index` (`0`, `-1`), at most `depth` messages deep
/// and `max` paths, in field order: for field pickers, and for holding extraction to decoding.
pub fn leaf_paths(
    def: &MsgDef,
    prefix: &str,
    index: i64,
    (depth, max): (usize, usize),
    keep: &dyn Fn(&Field) -> bool,
) -> Vec<String> {
    /// Where a walk is: `(index, depth left, max)`.
    type At = (i64, usize, usize);
    fn walk(
        def: &MsgDef,
        ty: usize,
        prefix: &str,
        (index, depth, max): At,
        keep: &dyn Fn(&Field) -> bool,
        out: &mut Vec<String>,
    ) {
        let Some(t) = def.types.get(ty) else { return };
        for f in &t.fields {
            if out.len() >= max {
                return;
            }
            let mut p = format!("{prefix}.{}", f.name);
            if f.array != ArrayKind::Scalar {
                p.push_str(&format!("[{index}]"));
            }
            match f.ty {
                FieldType::Primitive(_) if keep(f) => out.push(p),
                FieldType::Primitive(_) => {}
                FieldType::Message(j) if depth > 0 => {
                    walk(def, j, &p, (index, depth - 1, max), keep, out)
                }
                FieldType::Message(_) => {}
            }
        }
    }
    let mut out = Vec::new();
    walk(def, 0, prefix, (index, depth, max), keep, &mut out);
    out
}

/// A field path as Foxglove and PlotJuggler write it: `/topic.field.sub[3].x`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldPath {
    /// The topic (`/imu`); empty when the path was written without one.
    pub topic: String,
    /// The steps within the message.
    pub segments: Vec<Segment>,
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.topic)?;
        for s in &self.segments {
            match s {
                Segment::Field(n) => write!(f, ".{n}")?,
                Segment::Index(i) => write!(f, "[{i}]")?,
            }
        }
        Ok(())
    }
}

/// A topic's name as a field path starts: with a leading `/` (an MCAP topic may have none:
/// `mouse` is `/mouse.clientX`; [`crate::Summary::topic`] finds it either way).
pub fn path_topic(name: &str) -> std::borrow::Cow<'_, str> {
    if name.starts_with('/') {
        std::borrow::Cow::Borrowed(name)
    } else {
        std::borrow::Cow::Owned(format!("/{name}"))
    }
}

impl FieldPath {
    /// Parses `/topic.a.b[2].c` (topic names hold no `.`), or `a.b[2].c` with no topic.
    pub fn parse(s: &str) -> Result<FieldPath, String> {
        let s = s.trim();
        let (topic, rest) = if s.starts_with('/') {
            match s.find(['.', '[']) {
                Some(i) => (&s[..i], &s[i..]),
                None => (s, ""),
            }
        } else {
            ("", s)
        };
        let mut segments = Vec::new();
        let mut r = rest;
        let mut first = topic.is_empty();
        while !r.is_empty() {
            if let Some(after) = r.strip_prefix('[') {
                let Some(close) = after.find(']') else {
                    return Err(format!("unclosed `[` in {s:?}"));
                };
                let i: i64 = after[..close]
                    .trim()
                    .parse()
                    .map_err(|_| format!("bad index {:?} in {s:?}", &after[..close]))?;
                segments.push(Segment::Index(i));
                r = &after[close + 1..];
            } else {
                let body = match r.strip_prefix('.') {
                    Some(b) => b,
                    None if first => r,
                    None => return Err(format!("expected `.` or `[` at {r:?} in {s:?}")),
                };
                let end = body.find(['.', '[']).unwrap_or(body.len());
                let name = &body[..end];
                if name.is_empty() {
                    return Err(format!("empty field name in {s:?}"));
                }
                segments.push(Segment::Field(name.to_string()));
                r = &body[end..];
            }
            first = false;
        }
        Ok(FieldPath {
            topic: topic.to_string(),
            segments,
        })
    }
}

#[derive(Debug, Clone)]
struct Step {
    ty: usize,
    field: usize,
    /// Offset of the field from the start of its message when every field before it is fixed.
    prefix: Option<usize>,
    index: Option<i64>,
}

/// Reads one scalar of a message by its path, skipping fixed-size runs by offset.
#[derive(Debug, Clone)]
pub struct Extractor {
    plan: Plan,
    steps: Vec<Step>,
    leaf: Primitive,
    /// A ROS 1 `time`/`duration` leaf named down to one of its halves (`.secs`, `.nsecs`, as
    /// `echo` prints them).
    part: Option<TimePart>,
}

/// One half of a ROS 1 `time` or `duration`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TimePart {
    Secs,
    Nsecs,
}

impl TimePart {
    /// The half a field name after a `time`/`duration` names (ROS 1's and ROS 2's spellings).
    fn named(name: &str) -> Option<TimePart> {
        match name {
            "secs" | "sec" => Some(TimePart::Secs),
            "nsecs" | "nsec" | "nanosec" => Some(TimePart::Nsecs),
            _ => None,
        }
    }

    fn of(self, v: Value) -> Option<Value> {
        Some(match (self, v) {
            (TimePart::Secs, Value::Time { sec, .. }) => Value::U32(sec),
            (TimePart::Nsecs, Value::Time { nsec, .. }) => Value::U32(nsec),
            (TimePart::Secs, Value::Duration { sec, .. }) => Value::I32(sec),
            (TimePart::Nsecs, Value::Duration { nsec, .. }) => Value::I32(nsec),
            _ => return None,
        })
    }
}

impl Extractor {
    /// Compiles `segments` against `plan`; the path must end at a numeric scalar (an array
    /// needs an index, a message needs a field).
    pub fn new(plan: &Plan, segments: &[Segment]) -> Result<Extractor, String> {
        let mut ty = 0usize;
        let mut steps = Vec::new();
        let mut it = segments.iter().peekable();
        let mut leaf = None;
        let mut part = None;
        let mut walked = String::new();
        while let Some(seg) = it.next() {
            let Segment::Field(name) = seg else {
                return Err(format!("index after {walked:?}, which is not an array"));
            };
            if let Some(p) = leaf {
                if part.is_none() && matches!(p, Primitive::Time | Primitive::Duration) {
                    if let Some(half) = TimePart::named(name) {
                        part = Some(half);
                        walked.push('.');
                        walked.push_str(name);
                        continue;
                    }
                    return Err(format!(
                        "{walked} is a {}: its fields are secs and nsecs, not {name:?}",
                        p.name()
                    ));
                }
                let what = match (part, p) {
                    (Some(_), Primitive::Time) => "uint32",
                    (Some(_), _) => "int32",
                    (None, p) => p.name(),
                };
                let a = if what.starts_with("int") { "an" } else { "a" };
                return Err(format!("{walked} is {a} {what}, it has no field {name:?}"));
            }
            let t = &plan.def.types[ty];
            let Some(fi) = t.fields.iter().position(|f| f.name == *name) else {
                let names: Vec<&str> = t.fields.iter().map(|f| f.name.as_str()).collect();
                return Err(format!(
                    "{} has no field {name:?} (fields: {})",
                    t.name,
                    names.join(", ")
                ));
            };
            let f = &t.fields[fi];
            walked.push('.');
            walked.push_str(name);
            let mut prefix = Some(0usize);
            for g in &t.fields[..fi] {
                let (ef, _) = plan.elem_sizes(g);
                // An offset too large for usize is left to the walk in `extract`, which
                // checks every step against the message.
                prefix = match g.array {
                    ArrayKind::Scalar => prefix.zip(ef).and_then(|(a, b)| a.checked_add(b)),
                    ArrayKind::Fixed(k) => prefix
                        .zip(ef)
                        .and_then(|(a, b)| a.checked_add(b.checked_mul(k)?)),
                    ArrayKind::Variable => None,
                };
            }
            let index = if f.array != ArrayKind::Scalar {
                match it.peek() {
                    Some(Segment::Index(i)) => {
                        let i = *i;
                        it.next();
                        if let ArrayKind::Fixed(n) = f.array {
                            let ok = if i < 0 {
                                i.unsigned_abs() <= n as u64
                            } else {
                                (i as u64) < n as u64
                            };
                            if !ok {
                                return Err(format!("index {i} out of {walked}[{n}]"));
                            }
                        }
                        let _ = write!(walked, "[{i}]");
                        Some(i)
                    }
                    _ => {
                        return Err(format!(
                            "{walked} is an array ({}); add an index such as [0] or [-1]",
                            f.type_text
                        ))
                    }
                }
            } else {
                None
            };
            steps.push(Step {
                ty,
                field: fi,
                prefix,
                index,
            });
            match f.ty {
                FieldType::Message(j) => ty = j,
                FieldType::Primitive(p) => leaf = Some(p),
            }
        }
        match leaf {
            Some(Primitive::String) => Err(format!("{walked} is a string, not a number")),
            Some(p) => Ok(Extractor {
                plan: plan.clone(),
                steps,
                leaf: p,
                part,
            }),
            None if steps.is_empty() => Err("the path names no field".into()),
            None => Err(format!(
                "{walked} is a message ({}); name one of its fields",
                plan.def.types[ty].name
            )),
        }
    }

    fn skip(&self, f: &Field, data: &[u8], mut pos: usize) -> Option<usize> {
        let count = match f.array {
            ArrayKind::Scalar => 1,
            ArrayKind::Fixed(n) => n,
            ArrayKind::Variable => {
                let n = read_u32(data, pos)? as usize;
                pos += 4;
                n
            }
        };
        let (fixed, _) = self.plan.elem_sizes(f);
        if let Some(sz) = fixed {
            let end = pos.checked_add(count.checked_mul(sz)?)?;
            return (end <= data.len()).then_some(end);
        }
        for _ in 0..count {
            pos = match f.ty {
                FieldType::Primitive(_) => {
                    // Only strings are variable among primitives.
                    let n = read_u32(data, pos)? as usize;
                    pos.checked_add(4 + n).filter(|&e| e <= data.len())?
                }
                FieldType::Message(j) => self.skip_message(j, data, pos)?,
            };
        }
        Some(pos)
    }

    fn skip_message(&self, ty: usize, data: &[u8], mut pos: usize) -> Option<usize> {
        if let Some(sz) = self.plan.fixed[ty] {
            let end = pos.checked_add(sz)?;
            return (end <= data.len()).then_some(end);
        }
        for f in &self.plan.def.types[ty].fields {
            pos = self.skip(f, data, pos)?;
        }
        Some(pos)
    }

    /// The value at the path in one message, or `None` when the message is too short or the
    /// index is past the end of its array.
    pub fn extract(&self, data: &[u8]) -> Option<Value> {
        if self.plan.proto.is_some() || self.plan.json {
            return self.extract_decoded(data);
        }
        let v = if self.plan.cdr {
            self.extract_cdr(data)
        } else {
            self.extract_ros1(data)
        }?;
        match self.part {
            Some(half) => half.of(v),
            None => Some(v),
        }
    }

    fn extract_ros1(&self, data: &[u8]) -> Option<Value> {
        let mut pos = 0usize;
        for s in &self.steps {
            let t = &self.plan.def.types[s.ty];
            match s.prefix {
                Some(p) => pos = pos.checked_add(p)?,
                None => {
                    for g in &t.fields[..s.field] {
                        pos = self.skip(g, data, pos)?;
                    }
                }
            }
            let f = &t.fields[s.field];
            if let Some(i) = s.index {
                let count = match f.array {
                    ArrayKind::Fixed(n) => n,
                    _ => {
                        let n = read_u32(data, pos)? as usize;
                        pos += 4;
                        n
                    }
                };
                let i = if i < 0 {
                    count.checked_sub(i.unsigned_abs() as usize)?
                } else {
                    i as usize
                };
                if i >= count {
                    return None;
                }
                let (fixed, _) = self.plan.elem_sizes(f);
                match fixed {
                    Some(sz) => pos = pos.checked_add(i.checked_mul(sz)?)?,
                    None => {
                        let one = Field {
                            array: ArrayKind::Scalar,
                            ..f.clone()
                        };
                        for _ in 0..i {
                            pos = self.skip(&one, data, pos)?;
                        }
                    }
                }
            }
        }
        let sz = self.leaf.size()?;
        let b = data.get(pos..pos.checked_add(sz)?)?;
        Some(read_prim(self.leaf, b))
    }
}

impl Extractor {
    /// CDR: alignment depends on where each value falls, so the message is decoded and the
    /// path walked in the tree.
    /// CDR: the decoder's walk to the field, skipping what comes before it (no value tree;
    /// what follows the field is not read, as for ROS 1).
    fn extract_cdr(&self, data: &[u8]) -> Option<Value> {
        let mut d = Decoder::new(&self.plan, data);
        d.cdr_header().ok()?;
        let last = self.steps.len().checked_sub(1)?;
        for (k, s) in self.steps.iter().enumerate() {
            let t = &self.plan.def.types[s.ty];
            for g in &t.fields[..s.field] {
                d.skip_field(g).ok()?;
            }
            let f = &t.fields[s.field];
            if let Some(i) = s.index {
                let (count, _) = d.array_head(f).ok()??;
                let i = if i < 0 {
                    count.checked_sub(i.unsigned_abs())?
                } else {
                    i as u64
                };
                if i >= count {
                    return None;
                }
                for _ in 0..i {
                    d.skip_scalar(f).ok()?;
                }
            }
            if k == last {
                return match f.ty {
                    FieldType::Primitive(p) => Some(d.prim(p).ok()?.value),
                    FieldType::Message(_) => None,
                };
            }
        }
        None
    }

    /// [`Self::extract`] by decoding the whole message (`None` where it does not decode): what
    /// the walk is checked against.
    #[doc(hidden)]
    pub fn extract_decoded(&self, data: &[u8]) -> Option<Value> {
        let mut cur = self.plan.decode(data).ok()?.value;
        for s in &self.steps {
            let Value::Message { fields, .. } = cur else {
                return None;
            };
            cur = fields.into_iter().nth(s.field)?.value;
            if let Some(i) = s.index {
                let n = cur.len()?;
                let i = if i < 0 {
                    n.checked_sub(i.unsigned_abs() as usize)?
                } else {
                    i as usize
                };
                cur = match cur {
                    Value::Array(items) => items.into_iter().nth(i)?.value,
                    other => other.element(i)?.0,
                };
            }
        }
        match self.part {
            Some(half) => half.of(cur),
            None => Some(cur),
        }
    }
}

fn read_u32(data: &[u8], pos: usize) -> Option<u32> {
    let b = data.get(pos..pos.checked_add(4)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn plan(text: &str) -> Plan {
        Plan::new(MsgDef::parse("t/T", text).unwrap())
    }

    #[test]
    fn decode_and_extract() {
        let p = plan(
            "string name\nfloat64[] xs\nP[2] ps\nuint8[] raw\n\
             ================\nMSG: t/P\nint32 a\nfloat32 b\n",
        );
        let mut m = Vec::new();
        m.extend_from_slice(&3u32.to_le_bytes());
        m.extend_from_slice(b"ab\xff");
        m.extend_from_slice(&2u32.to_le_bytes());
        m.extend_from_slice(&1.5f64.to_le_bytes());
        m.extend_from_slice(&(-2.5f64).to_le_bytes());
        for (a, b) in [(7i32, 0.25f32), (-9, 4.0)] {
            m.extend_from_slice(&a.to_le_bytes());
            m.extend_from_slice(&b.to_le_bytes());
        }
        m.extend_from_slice(&1u32.to_le_bytes());
        m.push(200);
        let n = p.decode(&m).unwrap();
        let mut j = String::new();
        to_json(&p.def, &n.value, &mut j);
        assert_eq!(
            j,
            r#"{"name": "ab\\xff", "xs": [1.5, -2.5], "ps": [{"a": 7, "b": 0.25}, {"a": -9, "b": 4.0}], "raw": "yA=="}"#
        );
        let ex = |s: &str| Extractor::new(&p, &FieldPath::parse(s).unwrap().segments);
        assert_eq!(ex("xs[-1]").unwrap().extract(&m), Some(Value::F64(-2.5)));
        assert_eq!(ex("ps[1].a").unwrap().extract(&m), Some(Value::I32(-9)));
        assert_eq!(ex("raw[0]").unwrap().extract(&m), Some(Value::U8(200)));
        assert_eq!(ex("xs[5]").unwrap().extract(&m), None);
        assert!(ex("name").is_err());
        assert!(ex("xs").is_err());
        assert!(ex("ps[2].a").is_err());
        assert!(ex("nope").is_err());
        // Short and over-long messages are errors with a place.
        let e = p.decode(&m[..m.len() - 1]).unwrap_err();
        assert_eq!(e.path, "raw");
        let mut long = m.clone();
        long.push(0);
        assert!(p.decode(&long).unwrap_err().reason.contains("trailing"));
        let mut absurd = m.clone();
        absurd[7..11].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(p.decode(&absurd).unwrap_err().reason.contains("cannot fit"));
    }

    #[test]
    fn paths() {
        let p = FieldPath::parse("/imu/data.orientation.x").unwrap();
        assert_eq!(p.topic, "/imu/data");
        assert_eq!(p.to_string(), "/imu/data.orientation.x");
        let p = FieldPath::parse("/tf.transforms[-1].transform.translation.x").unwrap();
        assert_eq!(p.segments[1], Segment::Index(-1));
        assert!(FieldPath::parse("/a.b[").is_err());
        assert!(FieldPath::parse("/a..b").is_err());
    }

    #[test]
    fn base64_matches_rfc4648() {
        for (i, o) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
        ] {
            let mut s = String::new();
            base64(i.as_bytes(), &mut s);
            assert_eq!(s, o);
        }
    }

    #[test]
    fn time_duration_bool_and_aliases() {
        let p = plan("time t\nduration d\nbool b\nbyte y\nchar c\nint16 s\nuint64 u\n");
        let mut m = Vec::new();
        m.extend_from_slice(&1_700_000_000u32.to_le_bytes());
        m.extend_from_slice(&5u32.to_le_bytes());
        m.extend_from_slice(&(-2i32).to_le_bytes());
        m.extend_from_slice(&(-500i32).to_le_bytes());
        m.extend_from_slice(&[1, 0xff, 0xff]);
        m.extend_from_slice(&(-3i16).to_le_bytes());
        m.extend_from_slice(&u64::MAX.to_le_bytes());
        let n = p.decode(&m).unwrap();
        let mut j = String::new();
        to_json(&p.def, &n.value, &mut j);
        assert_eq!(
            j,
            r#"{"t": {"secs": 1700000000, "nsecs": 5}, "d": {"secs": -2, "nsecs": -500}, "b": true, "y": -1, "c": 255, "s": -3, "u": 18446744073709551615}"#
        );
        let Value::Message { fields, .. } = &n.value else {
            panic!("not a message")
        };
        // Byte ranges of each field, for the raw view.
        assert_eq!((fields[0].start, fields[0].end), (0, 8));
        assert_eq!((fields[2].start, fields[2].end), (16, 17));
        let ex = |s: &str| Extractor::new(&p, &FieldPath::parse(s).unwrap().segments).unwrap();
        assert_eq!(
            ex("t").extract(&m).and_then(|v| v.as_f64()),
            Some(1_700_000_000.000_000_005)
        );
        assert_eq!(ex("y").extract(&m), Some(Value::I8(-1)));
        // A time's or duration's halves by name, as echo prints them.
        assert_eq!(ex("t.secs").extract(&m), Some(Value::U32(1_700_000_000)));
        assert_eq!(ex("t.nsecs").extract(&m), Some(Value::U32(5)));
        assert_eq!(ex("d.secs").extract(&m), Some(Value::I32(-2)));
        assert_eq!(ex("d.nsec").extract(&m), Some(Value::I32(-500)));
        assert_eq!(ex("d.nsecs").extract_decoded(&m), Some(Value::I32(-500)));
        let err = |s: &str| Extractor::new(&p, &FieldPath::parse(s).unwrap().segments).unwrap_err();
        assert_eq!(
            err("t.x"),
            ".t is a time: its fields are secs and nsecs, not \"x\""
        );
        assert_eq!(err("s.x"), ".s is an int16, it has no field \"x\"");
        assert_eq!(
            err("t.secs.x"),
            ".t.secs is a uint32, it has no field \"x\""
        );
    }

    #[test]
    fn huge_fixed_arrays_fail_cleanly_without_allocating() {
        // 2^61 float64s: the byte count overflows usize.
        let p = plan("float64[2305843009213693952] huge\nint32 after\n");
        let e = p.decode(&[0u8; 64]).unwrap_err();
        assert_eq!(e.path, "huge");
        assert!(e.reason.contains("cannot fit"), "{e:?}");
        // The field after it can not be located either; extracting says so with None.
        let ex = Extractor::new(&p, &FieldPath::parse("after").unwrap().segments).unwrap();
        assert_eq!(ex.extract(&[0u8; 64]), None);
        // A fixed array of a nested fixed-size type.
        let p = plan("P[4000000000] ps\n================\nMSG: t/P\nfloat64 x\nfloat64 y\n");
        assert!(p.decode(&[0u8; 16]).is_err());
        let ex = Extractor::new(&p, &FieldPath::parse("ps[-1].y").unwrap().segments).unwrap();
        assert_eq!(ex.extract(&[0u8; 16]), None);
        // A million-element array of empty messages claims no bytes, so it is bounded by count.
        let p = plan("E[] es\n================\nMSG: t/E\n");
        assert!(p
            .decode(&u32::MAX.to_le_bytes())
            .unwrap_err()
            .reason
            .contains("cannot fit"));
        let mut ok = 3u32.to_le_bytes().to_vec();
        assert!(p.decode(&ok).is_ok());
        ok.push(0);
        assert!(p.decode(&ok).is_err());
    }

    #[test]
    fn errors_name_the_field_path_and_offset() {
        let p = plan("int32 a\nP[] ps\n================\nMSG: t/P\nstring name\nfloat64 v\n");
        let mut m = Vec::new();
        m.extend_from_slice(&1i32.to_le_bytes());
        m.extend_from_slice(&2u32.to_le_bytes());
        m.extend_from_slice(&1u32.to_le_bytes());
        m.push(b'x');
        m.extend_from_slice(&1.0f64.to_le_bytes());
        // The second element's string claims 100 bytes.
        m.extend_from_slice(&100u32.to_le_bytes());
        m.extend_from_slice(b"abc");
        m.extend_from_slice(&[0u8; 8]);
        let e = p.decode(&m).unwrap_err();
        assert_eq!(e.path, "ps[1].name");
        assert_eq!(e.offset, 25);
        assert!(e.reason.contains("needs 100 bytes"), "{e:?}");
        // Extraction past the damage is None, before it is a value.
        let ex = |s: &str| Extractor::new(&p, &FieldPath::parse(s).unwrap().segments).unwrap();
        assert_eq!(ex("ps[0].v").extract(&m), Some(Value::F64(1.0)));
        assert_eq!(ex("ps[1].v").extract(&m), None);
        assert_eq!(ex("ps[-2].v").extract(&m), Some(Value::F64(1.0)));
    }

    #[test]
    fn strings_that_are_not_utf8_are_escaped_not_dropped() {
        let p = plan("string s\n");
        let mut m = 4u32.to_le_bytes().to_vec();
        m.extend_from_slice(b"a\x00\xfe\"");
        let n = p.decode(&m).unwrap();
        assert_eq!(
            n.value,
            Value::Message {
                ty: 0,
                fields: vec![Node {
                    value: Value::String(b"a\x00\xfe\"".to_vec()),
                    start: 0,
                    end: 8
                }]
            }
        );
        let mut j = String::new();
        to_json(&p.def, &n.value, &mut j);
        let v: serde_json::Value = serde_json::from_str(&j).unwrap();
        let s = v["s"].as_str().unwrap();
        assert!(
            s.starts_with('a') && s.contains("\\xfe") && s.ends_with('"'),
            "{s}"
        );
    }

    /// A CDR message of a ROS 2 definition with every alignment case, little and big endian.
    /// `d` of a CDR case cut one byte short of it: nothing.
    fn x_cut(plan: &Plan, data: &[u8]) -> Option<Value> {
        let fp = FieldPath::parse("/t.d").unwrap();
        let x = Extractor::new(plan, &fp.segments).unwrap();
        assert_eq!(x.extract(&data[..data.len() - 1]), None);
        x.extract(data)
    }

    fn cdr_case(be: bool) -> Vec<u8> {
        let mut b: Vec<u8> = vec![0, if be { 0 } else { 1 }, 0, 0];
        let put = |b: &mut Vec<u8>, le: &[u8]| {
            if be {
                b.extend(le.iter().rev());
            } else {
                b.extend_from_slice(le);
            }
        };
        b.push(0x7f); // int8 a: rel 0
        b.extend_from_slice(&[0; 7]); // pad to 8
        put(&mut b, &2.5f64.to_le_bytes()); // float64 b: rel 8
        put(&mut b, &3u32.to_le_bytes()); // string s: rel 16
        b.extend_from_slice(b"hi\0");
        b.push(0); // pad to 24
        put(&mut b, &2u32.to_le_bytes()); // int32[<=3] v: count
        put(&mut b, &(-7i32).to_le_bytes());
        put(&mut b, &9i32.to_le_bytes());
        put(&mut b, &2u32.to_le_bytes()); // string<=5 t: rel 36
        b.extend_from_slice(b"a\0");
        put(&mut b, &1u16.to_le_bytes()); // uint16[2] f: rel 42
        put(&mut b, &2u16.to_le_bytes());
        b.extend_from_slice(&[0; 2]); // pad to 48
        put(&mut b, &5i32.to_le_bytes()); // int32 d: rel 48
        b
    }

    const CDR_DEF: &str = "int8 a\nfloat64 b\nstring s\nint32[<=3] v\nstring<=5 t\nuint16[2] f\nint32 d 5\nint32 C=3\n";

    #[test]
    fn cdr_little_and_big_endian_with_alignment() {
        let def = MsgDef::parse_dialect("t/msg/T", CDR_DEF, Dialect::Ros2).unwrap();
        assert_eq!(def.root().constants.len(), 1);
        let plan = Plan::new_cdr(def);
        for be in [false, true] {
            let data = cdr_case(be);
            let n = plan.decode(&data).unwrap();
            let Value::Message { fields, .. } = &n.value else {
                panic!()
            };
            assert_eq!(fields[0].value, Value::I8(0x7f));
            assert_eq!(fields[1].value, Value::F64(2.5));
            assert_eq!(
                (fields[1].start, fields[1].end),
                (12, 20),
                "spans count the header"
            );
            assert_eq!(fields[2].value, Value::String(b"hi".to_vec()));
            assert_eq!(fields[3].value.element(1).map(|e| e.0), Some(Value::I32(9)));
            assert_eq!(fields[4].value, Value::String(b"a".to_vec()));
            assert_eq!(fields[5].value.element(1).map(|e| e.0), Some(Value::U16(2)));
            assert_eq!(fields[6].value, Value::I32(5));
            let ex = |p: &str| {
                let fp = FieldPath::parse(&format!("/t.{p}")).unwrap();
                Extractor::new(&plan, &fp.segments).unwrap().extract(&data)
            };
            assert_eq!(ex("b"), Some(Value::F64(2.5)));
            assert_eq!(ex("v[-1]"), Some(Value::I32(9)));
            assert_eq!(ex("d"), Some(Value::I32(5)));
            // The walk to the field gives what decoding the whole message gives, for every
            // path; a message cut before the field gives nothing.
            for p in [
                "a", "b", "v[0]", "v[1]", "v[-2]", "v[2]", "f[0]", "f[-1]", "d",
            ] {
                let fp = FieldPath::parse(&format!("/t.{p}")).unwrap();
                let x = Extractor::new(&plan, &fp.segments).unwrap();
                assert_eq!(x.extract(&data), x.extract_decoded(&data), "{p}");
                for cut in 0..data.len() {
                    if let Some(v) = x.extract(&data[..cut]) {
                        assert_eq!(Some(v), x.extract_decoded(&data), "{p} cut at {cut}");
                    }
                }
            }
            assert_eq!(ex("d"), ex("d").and(x_cut(&plan, &data)));
        }
        // Truncated: a clear error with the field and offset, never a panic.
        let data = cdr_case(false);
        for cut in 0..data.len() {
            assert!(plan.decode(&data[..cut]).is_err());
        }
        // An unknown representation is refused.
        let mut bad = data.clone();
        bad[1] = 2;
        let e = plan.decode(&bad).unwrap_err();
        assert!(e.reason.contains("not plain CDR"), "{e}");
    }

    #[test]
    fn ros2_empty_message_is_one_byte_and_names_normalize() {
        let def = MsgDef::parse_dialect("std_msgs/msg/Empty", "", Dialect::Ros2).unwrap();
        let plan = Plan::new_cdr(def);
        plan.decode(&[0, 1, 0, 0, 0, 0, 0, 0]).unwrap();
        let text = "builtin_interfaces/Time stamp\nHeader h\n================================================================================\nMSG: builtin_interfaces/msg/Time\nint32 sec\nuint32 nanosec\n================================================================================\nMSG: std_msgs/Header\nbuiltin_interfaces/Time stamp\nstring frame_id\n";
        let def = MsgDef::parse_dialect("a/msg/B", text, Dialect::Ros2).unwrap();
        assert_eq!(def.types.len(), 3);
        // `byte` is an unsigned octet in ROS 2, signed in ROS 1.
        let d2 = MsgDef::parse_dialect("a/B", "byte x", Dialect::Ros2).unwrap();
        let d1 = MsgDef::parse("a/B", "byte x").unwrap();
        assert_ne!(d1.root().fields[0].ty, d2.root().fields[0].ty);
    }
}
