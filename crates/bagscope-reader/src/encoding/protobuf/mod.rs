//! Protobuf messages (MCAP channels of encoding `protobuf`, schema encoding `protobuf`): the
//! schema is a binary `google.protobuf.FileDescriptorSet`, read here without a protobuf
//! library. Its message types become a [`MsgDef`] (so the inspector, `echo`, plots, `csv` and
//! Find work on them as on ROS messages) plus the wire facts a ROS definition has no room for
//! (field numbers, varint or fixed or zigzag encodings), and messages decode into the same
//! value tree.
//!
//! Proto3 semantics: a field absent from a message has its default (0, `false`, `""`, no
//! bytes, an empty list); an absent sub-message is an empty message (no fields). Unknown
//! fields are skipped; repeated numbers are read packed or not; groups (proto2, deprecated)
//! are skipped. Errors name the field path and the byte offset.

mod scope;

use std::collections::HashMap;
use std::fmt;

use super::{Node, Value};
use crate::definition::msg::{ArrayKind, Constant, Field, FieldType, MsgDef, MsgType, Primitive};
use crate::error::DecodeError;
use crate::error::DefError;

/// Deepest nesting of messages decoded (a message that nests deeper is refused).
const MAX_DEPTH: usize = 100;

/// How a field's value is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Double,
    Float,
    Int64,
    UInt64,
    Int32,
    Fixed64,
    Fixed32,
    Bool,
    String,
    Bytes,
    Message(usize),
    UInt32,
    Enum,
    SFixed32,
    SFixed64,
    SInt32,
    SInt64,
}

impl Kind {
    /// The primitive a value of this kind is kept as.
    fn prim(self) -> Primitive {
        match self {
            Kind::Double => Primitive::F64,
            Kind::Float => Primitive::F32,
            Kind::Int64 | Kind::SFixed64 | Kind::SInt64 => Primitive::I64,
            Kind::UInt64 | Kind::Fixed64 => Primitive::U64,
            Kind::Int32 | Kind::Enum | Kind::SFixed32 | Kind::SInt32 => Primitive::I32,
            Kind::UInt32 | Kind::Fixed32 => Primitive::U32,
            Kind::Bool => Primitive::Bool,
            Kind::String => Primitive::String,
            Kind::Bytes | Kind::Message(_) => Primitive::U8,
        }
    }

    /// The wire type of one value: 0 varint, 1 eight bytes, 2 length-delimited, 5 four bytes.
    fn wire(self) -> u8 {
        match self {
            Kind::Double | Kind::Fixed64 | Kind::SFixed64 => 1,
            Kind::Float | Kind::Fixed32 | Kind::SFixed32 => 5,
            Kind::String | Kind::Bytes | Kind::Message(_) => 2,
            _ => 0,
        }
    }
}

/// A field's wire facts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct WireField {
    number: u32,
    kind: Kind,
    repeated: bool,
}

/// The wire facts of a [`MsgDef`] made from protobuf descriptors, type by type and field by
/// field in the same order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schema {
    types: Vec<Vec<WireField>>,
    /// Per type: field number to field index.
    by_number: Vec<HashMap<u32, usize>>,
}

/// What is wrong with protobuf bytes (a descriptor set's or a message's), and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WireError {
    /// A varint runs past the end of the bytes.
    VarintPastEnd {
        /// Where it ends.
        at: usize,
    },
    /// A varint longer than 10 bytes.
    VarintTooLong {
        /// Where it stops.
        at: usize,
    },
    /// A length claims more bytes than remain.
    Claimed {
        /// The bytes claimed.
        n: usize,
        /// Where.
        at: usize,
        /// How many bytes there are.
        len: usize,
    },
    /// A field number or length that does not fit.
    OutOfRange(&'static str, u64),
    /// A group without its end.
    UnendedGroup(u32),
    /// A wire type protobuf does not have.
    WireType {
        /// The wire type.
        wire: u8,
        /// Where.
        at: usize,
    },
    /// Message types nested deeper than bagscope follows.
    TooDeep,
    /// Bytes where a number was expected.
    NotANumber,
    /// A wire type that the field's type is never written with.
    KindMismatch {
        /// The wire type.
        wire: u8,
        /// The field's type.
        kind: String,
    },
}

impl fmt::Display for WireError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::VarintPastEnd { at } => write!(f, "a varint runs past the end at byte {at}"),
            Self::VarintTooLong { at } => write!(f, "a varint longer than 10 bytes at byte {at}"),
            Self::Claimed { n, at, len } => write!(f, "{n} bytes claimed at byte {at} of {len}"),
            Self::OutOfRange(what, v) => write!(f, "{what} {v} out of range"),
            Self::UnendedGroup(n) => write!(f, "group {n} has no end"),
            Self::WireType { wire, at } => write!(f, "wire type {wire} at byte {at}"),
            Self::TooDeep => f.write_str("message types nested too deep"),
            Self::KindMismatch { wire, kind } => write!(f, "wire type {wire} for a {kind} field"),
            Self::NotANumber => f.write_str("a length-delimited value where a number was expected"),
        }
    }
}

impl std::error::Error for WireError {}

/// A minimal reader of the protobuf wire format.
struct Wire<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Wire<'a> {
    fn varint(&mut self) -> Result<u64, WireError> {
        let mut v = 0u64;
        for k in 0..10 {
            let byte = *self
                .b
                .get(self.pos)
                .ok_or(WireError::VarintPastEnd { at: self.pos })?;
            self.pos += 1;
            v |= u64::from(byte & 0x7f) << (7 * k);
            if byte & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(WireError::VarintTooLong { at: self.pos })
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], WireError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.b.len())
            .ok_or(WireError::Claimed {
                n,
                at: self.pos,
                len: self.b.len(),
            })?;
        let s = &self.b[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    /// The next field's number and wire type, or `None` at the end.
    fn key(&mut self) -> Result<Option<(u32, u8)>, WireError> {
        if self.pos >= self.b.len() {
            return Ok(None);
        }
        let k = self.varint()?;
        let number =
            u32::try_from(k >> 3).map_err(|_| WireError::OutOfRange("field number", k >> 3))?;
        Ok(Some((number, (k & 7) as u8)))
    }

    fn len_delimited(&mut self) -> Result<&'a [u8], WireError> {
        let v = self.varint()?;
        let n = usize::try_from(v).map_err(|_| WireError::OutOfRange("length", v))?;
        self.take(n)
    }

    /// Skips a value of wire type `wire` (groups to their end).
    fn skip(&mut self, wire: u8, number: u32) -> Result<(), WireError> {
        match wire {
            0 => self.varint().map(|_| ()),
            1 => self.take(8).map(|_| ()),
            2 => self.len_delimited().map(|_| ()),
            5 => self.take(4).map(|_| ()),
            3 => {
                // A group: fields until its end-group key.
                loop {
                    match self.key()? {
                        Some((n, 4)) if n == number => return Ok(()),
                        Some((n, w)) => self.skip(w, n)?,
                        None => return Err(WireError::UnendedGroup(number)),
                    }
                }
            }
            w => Err(WireError::WireType {
                wire: w,
                at: self.pos,
            }),
        }
    }
}

/// A field of a `FieldDescriptorProto`.
#[derive(Default)]
struct FieldDesc {
    name: String,
    number: u32,
    label: u64,
    ty: u64,
    type_name: String,
}

/// A `DescriptorProto`'s fields, under its full name (`.pkg.Outer.Inner`).
struct MessageDesc {
    fields: Vec<FieldDesc>,
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn field_desc(b: &[u8]) -> Result<FieldDesc, WireError> {
    let mut w = Wire { b, pos: 0 };
    let mut f = FieldDesc::default();
    while let Some((n, wt)) = w.key()? {
        match (n, wt) {
            (1, 2) => f.name = text(w.len_delimited()?),
            (3, 0) => {
                let v = w.varint()?;
                f.number = u32::try_from(v).map_err(|_| WireError::OutOfRange("field number", v))?
            }
            (4, 0) => f.label = w.varint()?,
            (5, 0) => f.ty = w.varint()?,
            (6, 2) => f.type_name = text(w.len_delimited()?),
            _ => w.skip(wt, n)?,
        }
    }
    Ok(f)
}

/// Collects the messages and enums of a `DescriptorProto` (`b`) named `full`.
fn message_desc(
    b: &[u8],
    full: &str,
    msgs: &mut HashMap<String, MessageDesc>,
    enums: &mut Vec<EnumDesc>,
    depth: usize,
) -> Result<(), WireError> {
    if depth > MAX_DEPTH {
        return Err(WireError::TooDeep);
    }
    let mut w = Wire { b, pos: 0 };
    let mut fields = Vec::new();
    let mut nested = Vec::new();
    let mut name = String::new();
    while let Some((n, wt)) = w.key()? {
        match (n, wt) {
            (1, 2) => name = text(w.len_delimited()?),
            (2, 2) => fields.push(field_desc(w.len_delimited()?)?),
            (3, 2) => nested.push(w.len_delimited()?),
            (4, 2) => enums.push(enum_desc(w.len_delimited()?)?),
            _ => w.skip(wt, n)?,
        }
    }
    let me = format!("{full}.{name}");
    for e in enums.iter_mut().filter(|e| !e.0.starts_with('.')) {
        e.0 = format!("{me}.{}", e.0);
    }
    for n in nested {
        message_desc(n, &me, msgs, enums, depth + 1)?;
    }
    msgs.insert(me, MessageDesc { fields });
    Ok(())
}

/// An enum's name and its values (name, number).
type EnumDesc = (String, Vec<(String, i32)>);

fn enum_desc(b: &[u8]) -> Result<EnumDesc, WireError> {
    let mut w = Wire { b, pos: 0 };
    let mut name = String::new();
    let mut values = Vec::new();
    while let Some((n, wt)) = w.key()? {
        match (n, wt) {
            (1, 2) => name = text(w.len_delimited()?),
            (2, 2) => {
                let mut vw = Wire {
                    b: w.len_delimited()?,
                    pos: 0,
                };
                let (mut vname, mut number) = (String::new(), 0i32);
                while let Some((n, wt)) = vw.key()? {
                    match (n, wt) {
                        (1, 2) => vname = text(vw.len_delimited()?),
                        (2, 0) => number = vw.varint()? as i32,
                        _ => vw.skip(wt, n)?,
                    }
                }
                values.push((vname, number));
            }
            _ => w.skip(wt, n)?,
        }
    }
    Ok((name, values))
}

/// Every message type of a `FileDescriptorSet`, by full name, and the enums, by full name.
fn descriptors(set: &[u8]) -> Result<(HashMap<String, MessageDesc>, Vec<EnumDesc>), WireError> {
    let mut msgs = HashMap::new();
    let mut enums = Vec::new();
    let mut w = Wire { b: set, pos: 0 };
    while let Some((n, wt)) = w.key()? {
        if (n, wt) != (1, 2) {
            w.skip(wt, n)?;
            continue;
        }
        let file = w.len_delimited()?;
        let mut fw = Wire { b: file, pos: 0 };
        let mut package = String::new();
        let mut types = Vec::new();
        let mut file_enums = Vec::new();
        while let Some((n, wt)) = fw.key()? {
            match (n, wt) {
                (2, 2) => package = text(fw.len_delimited()?),
                (4, 2) => types.push(fw.len_delimited()?),
                (5, 2) => file_enums.push(enum_desc(fw.len_delimited()?)?),
                _ => fw.skip(wt, n)?,
            }
        }
        let prefix = if package.is_empty() {
            String::new()
        } else {
            format!(".{package}")
        };
        enums.extend(
            file_enums
                .into_iter()
                .map(|(e, v)| (format!("{prefix}.{e}"), v)),
        );
        for t in types {
            message_desc(t, &prefix, &mut msgs, &mut enums, 0)?;
        }
    }
    scope::resolve_relative(&mut msgs, &enums);
    Ok((msgs, enums))
}

/// The message types of a `FileDescriptorSet` (`pkg.Msg`, `pkg.Msg.Inner`), sorted; empty when
/// it does not parse.
pub fn message_types(set: &[u8]) -> Vec<String> {
    let mut v: Vec<String> = descriptors(set)
        .map(|(m, _)| {
            m.into_keys()
                .map(|k| k.trim_start_matches('.').to_string())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// The definition and wire facts of message type `root` (`pkg.Msg`) of a `FileDescriptorSet`.
pub fn compile(set: &[u8], root: &str) -> Result<(MsgDef, Schema), DefError> {
    let err = |reason: String| DefError {
        kind: crate::error::DefErrorKind::Invalid,
        datatype: root.to_string(),
        line: None,
        reason,
    };
    let (msgs, enums) = descriptors(set).map_err(|e| err(format!("FileDescriptorSet: {e}")))?;
    let root = format!(".{}", root.trim_start_matches('.'));
    if !msgs.contains_key(&root) {
        return Err(err(format!(
            "the FileDescriptorSet has no message type {}",
            &root[1..]
        )));
    }
    let mut order = vec![root.clone()];
    let mut index: HashMap<String, usize> = HashMap::from([(root, 0)]);
    let mut types = Vec::new();
    let mut wire = Vec::new();
    let mut k = 0;
    while k < order.len() {
        let name = order[k].clone();
        let desc = &msgs[&name];
        let mut fields = Vec::new();
        let mut constants = Vec::new();
        let mut wf = Vec::new();
        for f in &desc.fields {
            let repeated = f.label == 3;
            let kind = match f.ty {
                1 => Kind::Double,
                2 => Kind::Float,
                3 => Kind::Int64,
                4 => Kind::UInt64,
                5 => Kind::Int32,
                6 => Kind::Fixed64,
                7 => Kind::Fixed32,
                8 => Kind::Bool,
                9 => Kind::String,
                10 => continue, // a group: skipped on the wire
                11 | 14 | 0 if !f.type_name.is_empty() => {
                    if msgs.contains_key(&f.type_name) {
                        let i = match index.get(&f.type_name) {
                            Some(&i) => i,
                            None => {
                                order.push(f.type_name.clone());
                                index.insert(f.type_name.clone(), order.len() - 1);
                                order.len() - 1
                            }
                        };
                        Kind::Message(i)
                    } else if enums.iter().any(|e| e.0 == f.type_name) || f.ty == 14 {
                        Kind::Enum
                    } else {
                        return Err(err(format!(
                            "field {} of {}: unknown type {}",
                            f.name,
                            &name[1..],
                            f.type_name
                        )));
                    }
                }
                12 => Kind::Bytes,
                13 => Kind::UInt32,
                15 => Kind::SFixed32,
                16 => Kind::SFixed64,
                17 => Kind::SInt32,
                18 => Kind::SInt64,
                t => return Err(err(format!("field {} of {}: type {t}", f.name, &name[1..]))),
            };
            let (ty, array, type_text) = match kind {
                Kind::Message(i) => (
                    FieldType::Message(i),
                    if repeated {
                        ArrayKind::Variable
                    } else {
                        ArrayKind::Scalar
                    },
                    f.type_name.trim_start_matches('.').to_string(),
                ),
                Kind::Bytes => (
                    FieldType::Primitive(Primitive::U8),
                    ArrayKind::Variable,
                    "bytes".to_string(),
                ),
                Kind::Enum => (
                    FieldType::Primitive(Primitive::I32),
                    if repeated {
                        ArrayKind::Variable
                    } else {
                        ArrayKind::Scalar
                    },
                    format!("enum {}", f.type_name.rsplit('.').next().unwrap_or("")),
                ),
                k => (
                    FieldType::Primitive(k.prim()),
                    if repeated {
                        ArrayKind::Variable
                    } else {
                        ArrayKind::Scalar
                    },
                    format!("{k:?}").to_lowercase(),
                ),
            };
            let type_text = if repeated {
                format!("repeated {type_text}")
            } else {
                type_text
            };
            // An enum's values become constants of the type, tied to the enum by their type
            // text (`enum Mode`), so that only its fields are labelled with them.
            if kind == Kind::Enum {
                let et = format!("enum {}", f.type_name.rsplit('.').next().unwrap_or(""));
                if let Some((_, values)) = enums.iter().find(|e| e.0 == f.type_name) {
                    for (vname, number) in values {
                        if !constants
                            .iter()
                            .any(|c: &Constant| c.type_text == et && c.name == *vname)
                        {
                            constants.push(Constant {
                                ty: Primitive::I32,
                                type_text: et.clone(),
                                name: vname.clone(),
                                value: number.to_string(),
                            });
                        }
                    }
                }
            }
            fields.push(Field {
                name: f.name.clone(),
                type_text,
                ty,
                array,
            });
            wf.push(WireField {
                number: f.number,
                kind,
                repeated,
            });
        }
        types.push(MsgType {
            name: name[1..].to_string(),
            fields,
            constants,
        });
        wire.push(wf);
        k += 1;
    }
    let by_number = wire
        .iter()
        .map(|fs| fs.iter().enumerate().map(|(i, f)| (f.number, i)).collect())
        .collect();
    Ok((
        MsgDef {
            types,
            chars_are_text: false,
        },
        Schema {
            types: wire,
            by_number,
        },
    ))
}

/// What a field gathers while a message is read.
enum Acc {
    None,
    One(Node),
    Prims(Vec<u8>),
    Items(Vec<Node>),
}

impl Schema {
    /// Decodes a message of the main type.
    pub fn decode(&self, def: &MsgDef, data: &[u8]) -> Result<Node, DecodeError> {
        let mut path = Vec::new();
        self.message(def, 0, data, 0, 0, &mut path)
    }

    fn message(
        &self,
        def: &MsgDef,
        ty: usize,
        data: &[u8],
        base: usize,
        depth: usize,
        path: &mut Vec<String>,
    ) -> Result<Node, DecodeError> {
        let err = |path: &[String], offset: usize, reason: WireError| DecodeError {
            path: path.join("."),
            offset,
            reason: reason.to_string(),
            kind: crate::error::DecodeErrorKind::Content,
        };
        if depth > MAX_DEPTH {
            return Err(err(path, base, WireError::TooDeep));
        }
        let fields = &self.types[ty];
        let mut acc: Vec<Acc> = fields.iter().map(|_| Acc::None).collect();
        let mut w = Wire { b: data, pos: 0 };
        loop {
            let at = w.pos;
            let Some((number, wt)) = w.key().map_err(|e| err(path, base + at, e))? else {
                break;
            };
            let Some(&i) = self.by_number[ty].get(&number) else {
                w.skip(wt, number).map_err(|e| err(path, base + at, e))?;
                continue;
            };
            let WireField { kind, repeated, .. } = fields[i];
            let fname = def.types[ty].fields[i].name.clone();
            path.push(fname);
            let start = base + w.pos;
            if repeated && wt == 2 && kind.wire() != 2 {
                // Packed numbers.
                let b = w.len_delimited().map_err(|e| err(path, start, e))?;
                let mut pw = Wire { b, pos: 0 };
                let Acc::Prims(v) = prim_acc(&mut acc[i]) else {
                    unreachable!("prim_acc makes Prims")
                };
                while pw.pos < b.len() {
                    let one = scalar(&mut pw, kind).map_err(|e| err(path, start + pw.pos, e))?;
                    push_le(v, &one);
                }
            } else if wt != kind.wire() {
                return Err(err(
                    path,
                    base + at,
                    WireError::KindMismatch {
                        wire: wt,
                        kind: format!("{kind:?}"),
                    },
                ));
            } else {
                let node = match kind {
                    Kind::Message(t) => {
                        let b = w.len_delimited().map_err(|e| err(path, start, e))?;
                        let off = base + w.pos - b.len();
                        self.message(def, t, b, off, depth + 1, path)?
                    }
                    Kind::String | Kind::Bytes => {
                        let b = w.len_delimited().map_err(|e| err(path, start, e))?;
                        Node {
                            value: if kind == Kind::String {
                                Value::String(b.to_vec())
                            } else {
                                Value::Bytes(b.to_vec())
                            },
                            start: (base + w.pos - b.len()) as u32,
                            end: (base + w.pos) as u32,
                        }
                    }
                    k => {
                        let v = scalar(&mut w, k).map_err(|e| err(path, start, e))?;
                        Node {
                            value: v,
                            start: start as u32,
                            end: (base + w.pos) as u32,
                        }
                    }
                };
                match (repeated, kind) {
                    (true, Kind::Message(_) | Kind::String | Kind::Bytes) => match &mut acc[i] {
                        Acc::Items(v) => v.push(node),
                        a => *a = Acc::Items(vec![node]),
                    },
                    (true, _) => {
                        let Acc::Prims(v) = prim_acc(&mut acc[i]) else {
                            unreachable!("prim_acc makes Prims")
                        };
                        push_le(v, &node.value);
                    }
                    (false, _) => acc[i] = Acc::One(node),
                }
            }
            path.pop();
        }
        let end = (base + data.len()) as u32;
        let values = acc
            .into_iter()
            .zip(fields)
            .map(|(a, &WireField { kind, repeated, .. })| {
                let empty = |value| Node {
                    value,
                    start: end,
                    end,
                };
                match a {
                    Acc::One(n) => n,
                    Acc::Items(v) => Node {
                        start: v.first().map_or(end, |n| n.start),
                        end: v.last().map_or(end, |n| n.end),
                        value: Value::Array(v),
                    },
                    Acc::Prims(b) => empty(Value::Prims(kind.prim(), b)),
                    Acc::None if repeated => match kind {
                        Kind::Message(_) | Kind::String | Kind::Bytes => {
                            empty(Value::Array(vec![]))
                        }
                        k => empty(Value::Prims(k.prim(), Vec::new())),
                    },
                    Acc::None => empty(default_value(kind)),
                }
            })
            .collect();
        Ok(Node {
            value: Value::Message { ty, fields: values },
            start: base as u32,
            end,
        })
    }
}

/// The accumulator of a repeated number, made on first use.
fn prim_acc(a: &mut Acc) -> &mut Acc {
    if !matches!(a, Acc::Prims(_)) {
        *a = Acc::Prims(Vec::new());
    }
    a
}

/// A number's little-endian bytes, as [`Value::Prims`] keeps them.
fn push_le(v: &mut Vec<u8>, x: &Value) {
    match *x {
        Value::Bool(b) => v.push(u8::from(b)),
        Value::I32(n) => v.extend_from_slice(&n.to_le_bytes()),
        Value::U32(n) => v.extend_from_slice(&n.to_le_bytes()),
        Value::I64(n) => v.extend_from_slice(&n.to_le_bytes()),
        Value::U64(n) => v.extend_from_slice(&n.to_le_bytes()),
        Value::F32(n) => v.extend_from_slice(&n.to_le_bytes()),
        Value::F64(n) => v.extend_from_slice(&n.to_le_bytes()),
        _ => {}
    }
}

/// A field's value when the message does not carry it.
fn default_value(k: Kind) -> Value {
    match k {
        Kind::Double => Value::F64(0.0),
        Kind::Float => Value::F32(0.0),
        Kind::Int64 | Kind::SFixed64 | Kind::SInt64 => Value::I64(0),
        Kind::UInt64 | Kind::Fixed64 => Value::U64(0),
        Kind::Int32 | Kind::Enum | Kind::SFixed32 | Kind::SInt32 => Value::I32(0),
        Kind::UInt32 | Kind::Fixed32 => Value::U32(0),
        Kind::Bool => Value::Bool(false),
        Kind::String => Value::String(Vec::new()),
        Kind::Bytes => Value::Bytes(Vec::new()),
        Kind::Message(ty) => Value::Message {
            ty,
            fields: Vec::new(),
        },
    }
}

/// One number of kind `k`.
fn scalar(w: &mut Wire<'_>, k: Kind) -> Result<Value, WireError> {
    let four = |w: &mut Wire<'_>| -> Result<[u8; 4], WireError> {
        let b = w.take(4)?;
        Ok([b[0], b[1], b[2], b[3]])
    };
    let eight = |w: &mut Wire<'_>| -> Result<[u8; 8], WireError> {
        let b = w.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(a)
    };
    Ok(match k {
        Kind::Double => Value::F64(f64::from_le_bytes(eight(w)?)),
        Kind::Float => Value::F32(f32::from_le_bytes(four(w)?)),
        Kind::Fixed64 => Value::U64(u64::from_le_bytes(eight(w)?)),
        Kind::SFixed64 => Value::I64(i64::from_le_bytes(eight(w)?)),
        Kind::Fixed32 => Value::U32(u32::from_le_bytes(four(w)?)),
        Kind::SFixed32 => Value::I32(i32::from_le_bytes(four(w)?)),
        Kind::Int64 => Value::I64(w.varint()? as i64),
        Kind::UInt64 => Value::U64(w.varint()?),
        // int32 and enums are sign-extended to 64 bits on the wire.
        Kind::Int32 | Kind::Enum => Value::I32(w.varint()? as i64 as i32),
        Kind::UInt32 => Value::U32(w.varint()? as u32),
        Kind::Bool => Value::Bool(w.varint()? != 0),
        Kind::SInt32 => {
            let v = w.varint()? as u32;
            Value::I32(((v >> 1) as i32) ^ -((v & 1) as i32))
        }
        Kind::SInt64 => {
            let v = w.varint()?;
            Value::I64(((v >> 1) as i64) ^ -((v & 1) as i64))
        }
        Kind::String | Kind::Bytes | Kind::Message(_) => return Err(WireError::NotANumber),
    })
}

#[cfg(test)]
mod tests;
