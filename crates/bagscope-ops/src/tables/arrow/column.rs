//! One column of a topic's batch: values appended as messages are decoded, finished into an Arrow
//! array of the type the definition gives.

use std::sync::Arc;

use arrow_array::{
    ArrayRef, BinaryArray, BooleanArray, DurationNanosecondArray, FixedSizeBinaryArray,
    FixedSizeListArray, Float32Array, Float64Array, Int16Array, Int32Array, Int64Array, Int8Array,
    ListArray, StringArray, StructArray, TimestampNanosecondArray, UInt16Array, UInt32Array,
    UInt64Array, UInt8Array,
};
use arrow_buffer::{Buffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{ArrowError, DataType, Field as AField, Fields, TimeUnit};

use bagscope_reader::definition::msg::{ArrayKind, Field, FieldType, MsgDef, Primitive};
use bagscope_reader::encoding::{escape_bytes, Value};

use super::Choice;

/// A column being filled, shaped as its Arrow type.
#[derive(Debug)]
pub(super) enum Col {
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

pub(super) fn prim_type(p: Primitive) -> DataType {
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
    pub(super) fn element(def: &MsgDef, f: &Field, choice: &Choice) -> Option<(DataType, Col)> {
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
    pub(super) fn members(def: &MsgDef, ty: usize, choice: &Choice) -> (Fields, Vec<(usize, Col)>) {
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
    pub(super) fn field(def: &MsgDef, f: &Field, choice: &Choice) -> Option<(DataType, Col)> {
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

    pub(super) fn len(&self) -> usize {
        match self {
            Col::Num { p, le } => le.len() / p.size().unwrap_or(1).max(1),
            Col::Str { off, .. } | Col::Bin { off, .. } | Col::List { off, .. } => off.len() - 1,
            Col::FixedBin { len, .. } | Col::Struct { len, .. } => *len,
            Col::Fixed { n, item, .. } => item.len() / (*n).max(1),
        }
    }

    /// Appends one value.
    pub(super) fn push(&mut self, v: &Value) -> Result<(), String> {
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
    pub(super) fn extend(&mut self, v: &Value) -> Result<(), String> {
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
    pub(super) fn take(&mut self) -> Result<ArrayRef, ArrowError> {
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

pub(super) fn mismatch(want: &str, got: &Value) -> String {
    format!("{got} where the definition has {want}")
}

pub(super) fn push_offset(off: &mut Vec<i32>, end: usize) -> Result<(), String> {
    off.push(i32::try_from(end).map_err(|_| "more than 2 GiB in one batch".to_string())?);
    Ok(())
}

/// The offsets so far, leaving `[0]` for the next batch.
pub(super) fn offsets(off: &mut Vec<i32>) -> OffsetBuffer<i32> {
    let v = std::mem::replace(off, vec![0]);
    OffsetBuffer::new(ScalarBuffer::from(v))
}

/// Appends the bytes of a `uint8` array value.
pub(super) fn bytes_of(v: &Value, data: &mut Vec<u8>) -> Result<(), String> {
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
pub(super) fn push_scalar(p: Primitive, v: &Value, le: &mut Vec<u8>) -> Result<(), String> {
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
pub(super) fn words<const N: usize>(le: &[u8]) -> impl Iterator<Item = [u8; N]> + '_ {
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
pub(super) fn nanos(le: &[u8], signed: bool) -> ScalarBuffer<i64> {
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
pub(super) fn num_array(p: Primitive, le: &[u8]) -> ArrayRef {
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
