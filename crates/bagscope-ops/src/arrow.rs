//! A topic's messages as Arrow record batches: `time_ns` and the message's fields as typed,
//! nested columns built from its definition, for every encoding the library decodes (ROS 1,
//! CDR, protobuf, JSON).
//!
//! The schema depends on the definition alone (and the fields chosen), so tables of one type
//! from different recordings concatenate:
//!
//! | definition | Arrow |
//! |---|---|
//! | `bool`, `int8` … `uint64`, `float32`, `float64` | `Boolean`, `Int8` … `UInt64`, `Float32`, `Float64` |
//! | `string` | `Utf8` (bytes that are not UTF-8 escaped `\xNN`, as `echo` prints them) |
//! | `time`, `duration` (ROS 1) | `Timestamp(ns)`, `Duration(ns)` |
//! | a message | `Struct` of its fields (a type with no fields is left out) |
//! | `T[]`, `T[N]` | `List<T>`, `FixedSizeList<T, N>` |
//! | `uint8[]`, `uint8[N]` | `Binary`, `FixedSizeBinary(N)` |
//!
//! Nothing is nullable: every message has every field (protobuf and JSON fill defaults). Rows
//! come in time order, in batches of bounded size ([`BATCH_ROWS`], [`BATCH_BYTES`]).

use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::{
    ArrayRef, BinaryArray, BooleanArray, DurationNanosecondArray, FixedSizeBinaryArray,
    FixedSizeListArray, Float32Array, Float64Array, Int16Array, Int32Array, Int64Array, Int8Array,
    ListArray, RecordBatch, RecordBatchOptions, StringArray, StructArray, TimestampNanosecondArray,
    UInt16Array, UInt32Array, UInt64Array, UInt8Array,
};
use arrow_buffer::{Buffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{ArrowError, DataType, Field as AField, Fields, Schema, SchemaRef, TimeUnit};

use bagscope_reader::definition::msg::{ArrayKind, Field, FieldType, MsgDef, Primitive};
use bagscope_reader::encoding::{escape_bytes, Plan, Value};
use bagscope_reader::error::Error;
use bagscope_reader::{Bag, Filter};

/// Rows of a batch at most.
pub const BATCH_ROWS: usize = 1 << 16;
/// Message bytes a batch holds at most (a batch always holds at least one message), which also
/// keeps every 32-bit offset of a batch in range.
pub const BATCH_BYTES: usize = 256 << 20;

/// Which fields of a type become columns: all of them, or some (by index in the type), each
/// with what of it is chosen.
#[derive(Debug, Clone)]
enum Choice {
    All,
    Some(Vec<(usize, Choice)>),
}

impl Choice {
    /// The choice of dotted field paths (`header.stamp`, `linear_acceleration`) in type `ty`.
    fn of_paths(def: &MsgDef, ty: usize, paths: &[String]) -> Result<Choice, Error> {
        let mut c = Choice::Some(Vec::new());
        for p in paths {
            let parts: Vec<&str> = p.split('.').collect();
            if parts.iter().any(|s| s.is_empty()) {
                return Err(Error::Invalid(format!("field {p:?}: an empty name")));
            }
            c.add(def, ty, &parts, p)?;
        }
        Ok(c)
    }

    fn add(&mut self, def: &MsgDef, ty: usize, parts: &[&str], whole: &str) -> Result<(), Error> {
        let Choice::Some(chosen) = self else {
            return Ok(());
        };
        let Some((first, rest)) = parts.split_first() else {
            *self = Choice::All;
            return Ok(());
        };
        let fields = &def.types[ty].fields;
        let i = fields
            .iter()
            .position(|f| f.name == *first)
            .ok_or_else(|| {
                Error::NotFound(format!(
                    "field {whole:?}: {} has no field {first:?} (it has {})",
                    def.types[ty].name,
                    fields
                        .iter()
                        .map(|f| f.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })?;
        let sub = match chosen.iter().position(|(j, _)| *j == i) {
            Some(k) => &mut chosen[k].1,
            None => {
                chosen.push((i, Choice::Some(Vec::new())));
                let k = chosen.len() - 1;
                &mut chosen[k].1
            }
        };
        match fields[i].ty {
            FieldType::Message(j) => sub.add(def, j, rest, whole),
            FieldType::Primitive(_) if rest.is_empty() => {
                *sub = Choice::All;
                Ok(())
            }
            FieldType::Primitive(_) => Err(Error::NotFound(format!(
                "field {whole:?}: {first} is not a message"
            ))),
        }
    }

    /// The chosen fields of type `ty`, in the definition's order.
    fn fields(&self, def: &MsgDef, ty: usize) -> Vec<(usize, Choice)> {
        match self {
            Choice::All => (0..def.types[ty].fields.len())
                .map(|i| (i, Choice::All))
                .collect(),
            Choice::Some(v) => {
                let mut v = v.clone();
                v.sort_by_key(|(i, _)| *i);
                v
            }
        }
    }
}

/// A column being filled, shaped as its Arrow type.
#[derive(Debug)]
enum Col {
    /// Fixed-size primitives (bool, numbers, time, duration) as their little-endian bytes.
    Num {
        p: Primitive,
        le: Vec<u8>,
    },
    Str {
        off: Vec<i32>,
        data: Vec<u8>,
    },
    Bin {
        off: Vec<i32>,
        data: Vec<u8>,
    },
    FixedBin {
        n: usize,
        data: Vec<u8>,
        len: usize,
    },
    List {
        off: Vec<i32>,
        item: Box<Col>,
        field: Arc<AField>,
    },
    Fixed {
        n: usize,
        item: Box<Col>,
        field: Arc<AField>,
    },
    Struct {
        members: Vec<(usize, Col)>,
        fields: Fields,
        len: usize,
    },
}

fn prim_type(p: Primitive) -> DataType {
    match p {
        Primitive::Bool => DataType::Boolean,
        Primitive::I8 => DataType::Int8,
        Primitive::U8 => DataType::UInt8,
        Primitive::I16 => DataType::Int16,
        Primitive::U16 => DataType::UInt16,
        Primitive::I32 => DataType::Int32,
        Primitive::U32 => DataType::UInt32,
        Primitive::I64 => DataType::Int64,
        Primitive::U64 => DataType::UInt64,
        Primitive::F32 => DataType::Float32,
        Primitive::F64 => DataType::Float64,
        Primitive::String => DataType::Utf8,
        Primitive::Time => DataType::Timestamp(TimeUnit::Nanosecond, None),
        Primitive::Duration => DataType::Duration(TimeUnit::Nanosecond),
    }
}

impl Col {
    /// The column of one value of field `f` (an element, for an array), or `None` for a
    /// message type with nothing chosen in it (a type with no fields).
    fn element(def: &MsgDef, f: &Field, choice: &Choice) -> Option<(DataType, Col)> {
        Some(match f.ty {
            FieldType::Primitive(Primitive::String) => (
                DataType::Utf8,
                Col::Str {
                    off: vec![0],
                    data: Vec::new(),
                },
            ),
            FieldType::Primitive(p) => (prim_type(p), Col::Num { p, le: Vec::new() }),
            FieldType::Message(j) => {
                let (fields, members) = Col::members(def, j, choice);
                if members.is_empty() {
                    return None;
                }
                (
                    DataType::Struct(fields.clone()),
                    Col::Struct {
                        members,
                        fields,
                        len: 0,
                    },
                )
            }
        })
    }

    /// The columns of the chosen fields of type `ty`.
    fn members(def: &MsgDef, ty: usize, choice: &Choice) -> (Fields, Vec<(usize, Col)>) {
        let mut fields = Vec::new();
        let mut members = Vec::new();
        for (i, c) in choice.fields(def, ty) {
            let f = &def.types[ty].fields[i];
            if let Some((dt, col)) = Col::field(def, f, &c) {
                fields.push(AField::new(&f.name, dt, false));
                members.push((i, col));
            }
        }
        (Fields::from(fields), members)
    }

    /// The column of field `f` (arrays wrapped around the element).
    fn field(def: &MsgDef, f: &Field, choice: &Choice) -> Option<(DataType, Col)> {
        let bytes = matches!(f.ty, FieldType::Primitive(Primitive::U8));
        // An IDL `char` array is text (decoded up to its first NUL).
        if def.is_char_text(f) {
            let col = Col::Str {
                off: vec![0],
                data: Vec::new(),
            };
            return Some((DataType::Utf8, col));
        }
        match f.array {
            ArrayKind::Scalar => Col::element(def, f, choice),
            ArrayKind::Variable if bytes => Some((
                DataType::Binary,
                Col::Bin {
                    off: vec![0],
                    data: Vec::new(),
                },
            )),
            ArrayKind::Fixed(n) if bytes => Some((
                DataType::FixedSizeBinary(i32::try_from(n).ok()?),
                Col::FixedBin {
                    n,
                    data: Vec::new(),
                    len: 0,
                },
            )),
            ArrayKind::Variable => {
                let (dt, item) = Col::element(def, f, choice)?;
                let field = Arc::new(AField::new("item", dt, false));
                Some((
                    DataType::List(field.clone()),
                    Col::List {
                        off: vec![0],
                        item: Box::new(item),
                        field,
                    },
                ))
            }
            ArrayKind::Fixed(n) => {
                let (dt, item) = Col::element(def, f, choice)?;
                let field = Arc::new(AField::new("item", dt, false));
                Some((
                    DataType::FixedSizeList(field.clone(), i32::try_from(n).ok()?),
                    Col::Fixed {
                        n,
                        item: Box::new(item),
                        field,
                    },
                ))
            }
        }
    }

    fn len(&self) -> usize {
        match self {
            Col::Num { p, le } => le.len() / p.size().unwrap_or(1).max(1),
            Col::Str { off, .. } | Col::Bin { off, .. } | Col::List { off, .. } => off.len() - 1,
            Col::FixedBin { len, .. } | Col::Struct { len, .. } => *len,
            Col::Fixed { n, item, .. } => item.len() / (*n).max(1),
        }
    }

    /// Appends one value.
    fn push(&mut self, v: &Value) -> Result<(), String> {
        match self {
            Col::Num { p, le } => push_scalar(*p, v, le),
            Col::Str { off, data } => {
                let Value::String(b) = v else {
                    return Err(mismatch("a string", v));
                };
                match std::str::from_utf8(b) {
                    Ok(_) => data.extend_from_slice(b),
                    Err(_) => {
                        let mut s = String::new();
                        escape_bytes(b, &mut s);
                        data.extend_from_slice(s.as_bytes());
                    }
                }
                push_offset(off, data.len())
            }
            Col::Bin { off, data } => {
                bytes_of(v, data)?;
                push_offset(off, data.len())
            }
            Col::FixedBin { n, data, len } => {
                let before = data.len();
                bytes_of(v, data)?;
                if data.len() - before != *n {
                    let got = data.len() - before;
                    data.truncate(before);
                    return Err(format!("{got} bytes where the definition has {n}"));
                }
                *len += 1;
                Ok(())
            }
            Col::List { off, item, .. } => {
                item.extend(v)?;
                push_offset(off, item.len())
            }
            Col::Fixed { n, item, .. } => {
                let before = item.len();
                item.extend(v)?;
                let got = item.len() - before;
                if got != *n {
                    return Err(format!("{got} elements where the definition has {n}"));
                }
                Ok(())
            }
            Col::Struct { members, len, .. } => {
                let Value::Message { fields, .. } = v else {
                    return Err(mismatch("a message", v));
                };
                for (i, col) in members.iter_mut() {
                    let f = fields
                        .get(*i)
                        .ok_or_else(|| format!("a message without field {i}"))?;
                    col.push(&f.value)?;
                }
                *len += 1;
                Ok(())
            }
        }
    }

    /// Appends the elements of an array value.
    fn extend(&mut self, v: &Value) -> Result<(), String> {
        match (self, v) {
            (Col::Num { p, le }, Value::Prims(q, b)) if p == q => {
                le.extend_from_slice(b);
                Ok(())
            }
            (
                Col::Num {
                    p: Primitive::U8,
                    le,
                },
                Value::Bytes(b),
            ) => {
                le.extend_from_slice(b);
                Ok(())
            }
            (col, Value::Array(items)) => items.iter().try_for_each(|n| col.push(&n.value)),
            (_, v) => Err(mismatch("an array", v)),
        }
    }

    /// The column's values so far as an Arrow array; the column starts again empty.
    fn take(&mut self) -> Result<ArrayRef, ArrowError> {
        Ok(match self {
            Col::Num { p, le } => num_array(*p, &std::mem::take(le)),
            Col::Str { off, data } => Arc::new(StringArray::try_new(
                offsets(off),
                Buffer::from_vec(std::mem::take(data)),
                None,
            )?),
            Col::Bin { off, data } => Arc::new(BinaryArray::try_new(
                offsets(off),
                Buffer::from_vec(std::mem::take(data)),
                None,
            )?),
            Col::FixedBin { n, data, len } => {
                let size = i32::try_from(*n).unwrap_or(i32::MAX);
                let rows = std::mem::take(len);
                Arc::new(FixedSizeBinaryArray::try_new_with_len(
                    size,
                    Buffer::from_vec(std::mem::take(data)),
                    None,
                    rows,
                )?)
            }
            Col::List { off, item, field } => {
                let values = item.take()?;
                Arc::new(ListArray::try_new(
                    field.clone(),
                    offsets(off),
                    values,
                    None,
                )?)
            }
            Col::Fixed { n, item, field } => {
                let rows = item.len() / (*n).max(1);
                let values = item.take()?;
                let size = i32::try_from(*n).unwrap_or(i32::MAX);
                Arc::new(FixedSizeListArray::try_new_with_length(
                    field.clone(),
                    size,
                    values,
                    None,
                    rows,
                )?)
            }
            Col::Struct {
                members,
                fields,
                len,
            } => {
                let arrays = members
                    .iter_mut()
                    .map(|(_, c)| c.take())
                    .collect::<Result<Vec<_>, _>>()?;
                let rows = std::mem::take(len);
                Arc::new(StructArray::try_new_with_length(
                    fields.clone(),
                    arrays,
                    None,
                    rows,
                )?)
            }
        })
    }
}

fn mismatch(want: &str, got: &Value) -> String {
    format!("{got} where the definition has {want}")
}

fn push_offset(off: &mut Vec<i32>, end: usize) -> Result<(), String> {
    off.push(i32::try_from(end).map_err(|_| "more than 2 GiB in one batch".to_string())?);
    Ok(())
}

/// The offsets so far, leaving `[0]` for the next batch.
fn offsets(off: &mut Vec<i32>) -> OffsetBuffer<i32> {
    let v = std::mem::replace(off, vec![0]);
    OffsetBuffer::new(ScalarBuffer::from(v))
}

/// Appends the bytes of a `uint8` array value.
fn bytes_of(v: &Value, data: &mut Vec<u8>) -> Result<(), String> {
    match v {
        Value::Bytes(b) | Value::Prims(Primitive::U8 | Primitive::I8, b) => {
            data.extend_from_slice(b);
            Ok(())
        }
        Value::Array(items) => items.iter().try_for_each(|n| match n.value {
            Value::U8(x) => {
                data.push(x);
                Ok(())
            }
            ref other => Err(mismatch("uint8", other)),
        }),
        other => Err(mismatch("bytes", other)),
    }
}

/// Appends a scalar's little-endian bytes as primitive `p` stores them.
fn push_scalar(p: Primitive, v: &Value, le: &mut Vec<u8>) -> Result<(), String> {
    match (p, v) {
        (Primitive::Bool, Value::Bool(b)) => le.push(u8::from(*b)),
        (Primitive::I8, Value::I8(x)) => le.extend_from_slice(&x.to_le_bytes()),
        (Primitive::U8, Value::U8(x)) => le.push(*x),
        (Primitive::I16, Value::I16(x)) => le.extend_from_slice(&x.to_le_bytes()),
        (Primitive::U16, Value::U16(x)) => le.extend_from_slice(&x.to_le_bytes()),
        (Primitive::I32, Value::I32(x)) => le.extend_from_slice(&x.to_le_bytes()),
        (Primitive::U32, Value::U32(x)) => le.extend_from_slice(&x.to_le_bytes()),
        (Primitive::I64, Value::I64(x)) => le.extend_from_slice(&x.to_le_bytes()),
        (Primitive::U64, Value::U64(x)) => le.extend_from_slice(&x.to_le_bytes()),
        (Primitive::F32, Value::F32(x)) => le.extend_from_slice(&x.to_le_bytes()),
        (Primitive::F64, Value::F64(x)) => le.extend_from_slice(&x.to_le_bytes()),
        (Primitive::Time, Value::Time { sec, nsec }) => {
            le.extend_from_slice(&sec.to_le_bytes());
            le.extend_from_slice(&nsec.to_le_bytes());
        }
        (Primitive::Duration, Value::Duration { sec, nsec }) => {
            le.extend_from_slice(&sec.to_le_bytes());
            le.extend_from_slice(&nsec.to_le_bytes());
        }
        (p, v) => return Err(mismatch(&format!("{p:?}"), v)),
    }
    Ok(())
}

/// Little-endian values of `N` bytes, read in order.
fn words<const N: usize>(le: &[u8]) -> impl Iterator<Item = [u8; N]> + '_ {
    le.chunks_exact(N).map(|c| {
        let mut a = [0u8; N];
        a.copy_from_slice(c);
        a
    })
}

macro_rules! typed {
    ($array:ty, $t:ty, $n:literal, $le:expr) => {
        Arc::new(<$array>::new(
            ScalarBuffer::from(
                words::<$n>($le)
                    .map(<$t>::from_le_bytes)
                    .collect::<Vec<$t>>(),
            ),
            None,
        )) as ArrayRef
    };
}

/// Nanoseconds of ROS 1 `time` (unsigned halves) or `duration` (signed) values, each its
/// seconds then nanoseconds as two 32-bit little-endian words.
fn nanos(le: &[u8], signed: bool) -> ScalarBuffer<i64> {
    words::<8>(le)
        .map(|w| {
            let [a, b, c, d, e, f, g, h] = w;
            let (s, n) = ([a, b, c, d], [e, f, g, h]);
            let (s, n) = if signed {
                (
                    i64::from(i32::from_le_bytes(s)),
                    i64::from(i32::from_le_bytes(n)),
                )
            } else {
                (
                    i64::from(u32::from_le_bytes(s)),
                    i64::from(u32::from_le_bytes(n)),
                )
            };
            s * 1_000_000_000 + n
        })
        .collect::<Vec<i64>>()
        .into()
}

/// A primitive column from its little-endian bytes.
fn num_array(p: Primitive, le: &[u8]) -> ArrayRef {
    match p {
        Primitive::Bool => Arc::new(BooleanArray::from(
            le.iter().map(|&b| b != 0).collect::<Vec<bool>>(),
        )),
        Primitive::I8 => typed!(Int8Array, i8, 1, le),
        Primitive::U8 => Arc::new(UInt8Array::new(ScalarBuffer::from(le.to_vec()), None)),
        Primitive::I16 => typed!(Int16Array, i16, 2, le),
        Primitive::U16 => typed!(UInt16Array, u16, 2, le),
        Primitive::I32 => typed!(Int32Array, i32, 4, le),
        Primitive::U32 => typed!(UInt32Array, u32, 4, le),
        Primitive::I64 => typed!(Int64Array, i64, 8, le),
        Primitive::U64 => typed!(UInt64Array, u64, 8, le),
        Primitive::F32 => typed!(Float32Array, f32, 4, le),
        Primitive::F64 => typed!(Float64Array, f64, 8, le),
        Primitive::Time => Arc::new(TimestampNanosecondArray::new(nanos(le, false), None)),
        Primitive::Duration => Arc::new(DurationNanosecondArray::new(nanos(le, true), None)),
        // Strings have their own column.
        Primitive::String => Arc::new(StringArray::from(Vec::<&str>::new())),
    }
}

/// Fills record batches of one message type: `time_ns` and the chosen fields.
#[derive(Debug)]
pub struct BatchBuilder {
    schema: SchemaRef,
    time: Vec<i64>,
    root: Col,
    bytes: usize,
}

impl BatchBuilder {
    /// A builder for messages of `plan`'s type, every field or those of `fields` (dotted
    /// paths from the message: `header.stamp`, `linear_acceleration`).
    pub fn new(plan: &Plan, fields: Option<&[String]>) -> Result<BatchBuilder, Error> {
        let def = &plan.def;
        let choice = match fields {
            None => Choice::All,
            Some(paths) => Choice::of_paths(def, 0, paths)?,
        };
        let (fields, members) = Col::members(def, 0, &choice);
        // The time column's name, made unique if the message has a field of that name.
        let mut time_name = "time_ns".to_string();
        while fields.iter().any(|f| f.name() == &time_name) {
            time_name.push('_');
        }
        let mut all = vec![Arc::new(AField::new(time_name, DataType::Int64, false))];
        all.extend(fields.iter().cloned());
        let meta = HashMap::from([("bagscope.msgtype".to_string(), def.types[0].name.clone())]);
        Ok(BatchBuilder {
            schema: Arc::new(Schema::new_with_metadata(all, meta)),
            time: Vec::new(),
            root: Col::Struct {
                members,
                fields,
                len: 0,
            },
            bytes: 0,
        })
    }

    /// The schema of every batch.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// Rows so far in the batch being filled.
    pub fn rows(&self) -> usize {
        self.time.len()
    }

    /// Whether the batch being filled has reached its bounds.
    pub fn full(&self) -> bool {
        self.time.len() >= BATCH_ROWS || self.bytes >= BATCH_BYTES
    }

    /// Appends a decoded message received at `time_ns`, `size` bytes as stored. An `Err` (a
    /// value that does not have the definition's shape) leaves the batch unusable.
    pub fn push(&mut self, time_ns: u64, msg: &Value, size: usize) -> Result<(), String> {
        self.root.push(msg)?;
        self.time.push(i64::try_from(time_ns).unwrap_or(i64::MAX));
        self.bytes += size;
        Ok(())
    }

    /// The rows so far as a batch; the builder starts again empty.
    pub fn finish(&mut self) -> Result<RecordBatch, ArrowError> {
        let rows = self.time.len();
        let mut columns: Vec<ArrayRef> = vec![Arc::new(Int64Array::new(
            ScalarBuffer::from(std::mem::take(&mut self.time)),
            None,
        ))];
        self.bytes = 0;
        let root = self.root.take()?;
        if let Some(s) = root.as_any().downcast_ref::<StructArray>() {
            columns.extend(s.columns().iter().cloned());
        }
        RecordBatch::try_new_with_options(
            self.schema.clone(),
            columns,
            &RecordBatchOptions::new().with_row_count(Some(rows)),
        )
    }
}

/// The messages of one topic as record batches, read as they are asked for (memory holds one
/// batch and the chunks being read).
pub struct TopicBatches {
    builder: BatchBuilder,
    plan: Arc<Plan>,
    it: bagscope_reader::iter::Messages,
    /// Messages that did not decode, left out, and the first one's error.
    skipped: usize,
    first_skip: Option<String>,
    topic: String,
    done: bool,
}

impl std::fmt::Debug for TopicBatches {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TopicBatches")
            .field("topic", &self.topic)
            .field("schema", &self.builder.schema)
            .finish_non_exhaustive()
    }
}

/// The connections of `topic` and the one definition they share.
fn topic_plan(bag: &Bag, topic: &str) -> Result<(Vec<usize>, Arc<Plan>), Error> {
    let conns = bag.connections_of_topics(&[topic])?;
    let mut plan: Option<(usize, Arc<Plan>)> = None;
    for &c in &conns {
        let (p, _) = bag.plan(c)?;
        match &plan {
            None => plan = Some((c, p)),
            Some((c0, p0)) if p0.def != p.def => {
                let s = bag.quick_summary();
                let name = |i: usize| {
                    s.connections
                        .get(i)
                        .map(|c| c.datatype.clone())
                        .unwrap_or_default()
                };
                return Err(Error::Invalid(format!(
                    "topic {topic} has connections of different definitions ({} in connection {c0}, {} in connection {c}): one table needs one",
                    name(*c0),
                    name(c)
                )));
            }
            Some(_) => {}
        }
    }
    match plan {
        Some((_, p)) => Ok((conns, p)),
        None => Err(Error::NotFound(format!(
            "no topic {topic:?} in the recording"
        ))),
    }
}

/// The schema of [`TopicBatches`] for `topic` and `fields`, without reading a message.
pub fn topic_schema(bag: &Bag, topic: &str, fields: Option<&[String]>) -> Result<SchemaRef, Error> {
    let (_, plan) = topic_plan(bag, topic)?;
    Ok(BatchBuilder::new(&plan, fields)?.schema())
}

impl TopicBatches {
    /// The messages of `topic` within `[start_ns, end_ns)`, every field or those of `fields`.
    /// Every connection of the topic must have the same definition.
    pub fn new(
        bag: &Bag,
        topic: &str,
        fields: Option<&[String]>,
        start_ns: Option<u64>,
        end_ns: Option<u64>,
    ) -> Result<TopicBatches, Error> {
        let (conns, plan) = topic_plan(bag, topic)?;
        let builder = BatchBuilder::new(&plan, fields)?;
        let it = bag.messages(&Filter {
            connections: Some(conns),
            start_ns,
            end_ns,
        })?;
        Ok(TopicBatches {
            builder,
            plan,
            it,
            skipped: 0,
            first_skip: None,
            topic: topic.to_string(),
            done: false,
        })
    }

    /// The schema of every batch.
    pub fn schema(&self) -> SchemaRef {
        self.builder.schema()
    }

    /// Messages that did not decode and were left out, and the first one's error.
    pub fn skipped(&self) -> (usize, Option<&str>) {
        (self.skipped, self.first_skip.as_deref())
    }

    /// The next batch, `None` after the last.
    pub fn next_batch(&mut self) -> Result<Option<RecordBatch>, Error> {
        if self.done {
            return Ok(None);
        }
        while !self.builder.full() {
            let Some(m) = self.it.next() else {
                self.done = true;
                break;
            };
            let m = m?;
            match self.plan.decode(&m.data) {
                Ok(node) => self.builder.push(m.time_ns, &node.value, m.data.len()).map_err(|e| {
                    Error::Invalid(format!(
                        "{} at {} ns: the decoded message does not have its definition's shape: {e}",
                        self.topic, m.time_ns
                    ))
                })?,
                Err(e) => {
                    self.skipped += 1;
                    if self.first_skip.is_none() {
                        self.first_skip =
                            Some(format!("{} at {} ns: {e}", self.topic, m.time_ns));
                    }
                }
            }
        }
        if self.done && self.builder.rows() == 0 {
            return Ok(None);
        }
        self.builder
            .finish()
            .map(Some)
            .map_err(|e| Error::Invalid(format!("{}: building the Arrow batch: {e}", self.topic)))
    }
}

impl Iterator for TopicBatches {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_batch()
            .map_err(|e| ArrowError::ExternalError(Box::new(e)))
            .transpose()
    }
}

impl arrow_array::RecordBatchReader for TopicBatches {
    fn schema(&self) -> SchemaRef {
        self.builder.schema()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
