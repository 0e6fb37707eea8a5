//! The decoder of ROS 1 serialization and CDR: one walk over a [`Plan`] that builds the value tree, skips, or validates; [`DecodeError`] says what, where and at which field.

use std::fmt::Write as _;

use super::{prim_align, Node, Plan, Value, MAX_EMPTY_ELEMENTS};
use crate::definition::msg::{ArrayKind, Field, FieldType, Primitive};
use crate::error::DecodeError;

pub(super) enum PathPart<'a> {
    Field(&'a str),
    Index(u64),
}

pub(super) struct Decoder<'p, 'd> {
    pub(super) plan: &'p Plan,
    pub(super) data: &'d [u8],
    pub(super) pos: usize,
    pub(super) path: Vec<PathPart<'p>>,
    /// CDR: big-endian data.
    pub(super) be: bool,
    /// CDR: where alignment is counted from (after the encapsulation header).
    pub(super) origin: usize,
    /// CDR: largest alignment (8 in XCDR1, 4 in XCDR2).
    pub(super) max_align: usize,
}

impl<'p, 'd> Decoder<'p, 'd> {
    pub(super) fn new(plan: &'p Plan, data: &'d [u8]) -> Decoder<'p, 'd> {
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

impl<'p, 'd> Decoder<'p, 'd> {
    pub(super) fn err(&self, reason: String) -> DecodeError {
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
            kind: crate::error::DecodeErrorKind::Content,
        }
    }

    /// The next `n` bytes of the message (borrowed from the message, not the decoder).
    pub(super) fn take(&mut self, n: usize) -> Result<&'d [u8], DecodeError> {
        let avail = self.data.len() - self.pos;
        if n > avail {
            return Err(self.err(format!("needs {n} bytes, only {avail} left in the message")));
        }
        let data: &'d [u8] = self.data;
        let s = &data[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    pub(super) fn u32(&mut self) -> Result<u32, DecodeError> {
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

    pub(super) fn prim(&mut self, p: Primitive) -> Result<Node, DecodeError> {
        self.prim_with(p, &mut Nodes)
    }

    fn prim_with<B: Build>(&mut self, p: Primitive, b: &mut B) -> Result<B::Out, DecodeError> {
        self.align(prim_align(p))?;
        let start = self.pos as u32;
        match p {
            Primitive::String => {
                let n = self.u32()? as usize;
                let cdr = self.plan.is_cdr();
                let bytes = self.take(n)?;
                // CDR strings count and carry their terminating NUL.
                let bytes = if cdr {
                    bytes.strip_suffix(&[0]).unwrap_or(bytes)
                } else {
                    bytes
                };
                let end = self.pos as u32;
                Ok(b.string(bytes, start, end))
            }
            _ => {
                // One value: read in place (no buffer), its bytes swapped on a stack copy when
                // the CDR data is big-endian.
                let sz = p.size().unwrap_or(0);
                let swap = self.be && self.plan.is_cdr();
                let value = crate::encoding::cdr::prim_value(p, self.take(sz)?, swap);
                Ok(b.prim(value, start, self.pos as u32))
            }
        }
    }

    /// [`Self::message`] without the value: the same reads and checks, nothing kept.
    pub(super) fn skip_message(&mut self, ty: usize) -> Result<(), DecodeError> {
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
    pub(super) fn empty_pad(&mut self) -> Result<(), DecodeError> {
        if self.plan.is_cdr() {
            self.take(1)?;
        }
        Ok(())
    }

    pub(super) fn skip_scalar(&mut self, f: &Field) -> Result<(), DecodeError> {
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
    pub(super) fn skip_field(&mut self, f: &Field) -> Result<(), DecodeError> {
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

    /// Message type `ty` at the current position, built by `b`.
    pub(super) fn message_with<B: Build>(
        &mut self,
        ty: usize,
        b: &mut B,
    ) -> Result<B::Out, DecodeError> {
        let plan = self.plan;
        let start = self.pos as u32;
        let t = &plan.def.types[ty];
        if t.fields.is_empty() {
            self.empty_pad()?;
        }
        let mut fields = Vec::with_capacity(t.fields.len());
        for f in &t.fields {
            self.path.push(PathPart::Field(&f.name));
            let n = self.field_with(f, b)?;
            self.path.pop();
            fields.push(n);
        }
        Ok(b.message(ty, fields, start, self.pos as u32))
    }

    fn scalar_with<B: Build>(&mut self, f: &Field, b: &mut B) -> Result<B::Out, DecodeError> {
        match f.ty {
            FieldType::Primitive(p) => self.prim_with(p, b),
            FieldType::Message(j) => self.message_with(j, b),
        }
    }

    /// An array field's element count (its length read, for a variable array) and fixed
    /// element size, once the elements are known to fit in what is left; `None` for a scalar.
    pub(super) fn array_head(
        &mut self,
        f: &Field,
    ) -> Result<Option<(u64, Option<usize>)>, DecodeError> {
        let count = match f.array {
            ArrayKind::Scalar => return Ok(None),
            ArrayKind::Fixed(n) => n as u64,
            ArrayKind::Variable => u64::from(self.u32()?),
        };
        let fixed = match (&f.ty, self.plan.is_cdr()) {
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

    fn field_with<B: Build>(&mut self, f: &Field, b: &mut B) -> Result<B::Out, DecodeError> {
        let Some((count, fixed)) = self.array_head(f)? else {
            return self.scalar_with(f, b);
        };
        let start = if f.array == ArrayKind::Variable {
            self.pos as u32 - 4
        } else {
            self.pos as u32
        };
        match (f.ty.clone(), fixed) {
            (FieldType::Primitive(Primitive::U8), _) => {
                let bytes = self.take(count as usize)?;
                let end = self.pos as u32;
                if self.plan.def.is_char_text(f) {
                    // Text up to the first NUL (a fixed array is padded with them); the
                    // value's range still covers every byte.
                    let n = bytes.iter().position(|&c| c == 0).unwrap_or(bytes.len());
                    return Ok(b.string(&bytes[..n], start, end));
                }
                Ok(b.bytes(bytes, start, end))
            }
            (FieldType::Primitive(p), Some(sz)) => {
                let count = count as usize;
                if count > 0 {
                    self.align(prim_align(p))?;
                }
                let swap = self.be && self.plan.is_cdr() && sz > 1;
                let bytes = self.take(count * sz)?;
                let end = self.pos as u32;
                if swap {
                    let mut v = bytes.to_vec();
                    for c in v.chunks_exact_mut(prim_align(p)) {
                        c.reverse();
                    }
                    Ok(b.prims(p, &v, start, end))
                } else {
                    Ok(b.prims(p, bytes, start, end))
                }
            }
            _ => {
                let mut items = Vec::with_capacity(count as usize);
                for i in 0..count {
                    self.path.push(PathPart::Index(i));
                    items.push(self.scalar_with(f, b)?);
                    self.path.pop();
                }
                Ok(b.array(items, start, self.pos as u32))
            }
        }
    }
}

/// What a decoded message is built into, as the decoder walks it: [`Node`]s (the value tree,
/// each with its bytes' range), or another representation straight from the bytes (the Python
/// package's objects) without the tree in between. `start..end` are the bytes of each value.
pub trait Build {
    /// What a value becomes.
    type Out;
    /// A fixed-size primitive (not a string).
    fn prim(&mut self, value: Value, start: u32, end: u32) -> Self::Out;
    /// A string: its bytes as stored (not necessarily UTF-8), without CDR's NUL.
    fn string(&mut self, bytes: &[u8], start: u32, end: u32) -> Self::Out;
    /// A `uint8[]`/`uint8[N]` array.
    fn bytes(&mut self, bytes: &[u8], start: u32, end: u32) -> Self::Out;
    /// An array of another fixed-size primitive, as little-endian bytes.
    fn prims(&mut self, p: Primitive, le: &[u8], start: u32, end: u32) -> Self::Out;
    /// An array of strings or messages.
    fn array(&mut self, items: Vec<Self::Out>, start: u32, end: u32) -> Self::Out;
    /// A message of type `ty` (an index into the definition's types), its fields in order.
    fn message(&mut self, ty: usize, fields: Vec<Self::Out>, start: u32, end: u32) -> Self::Out;
}

/// Builds the value tree.
pub(super) struct Nodes;

impl Build for Nodes {
    type Out = Node;
    fn prim(&mut self, value: Value, start: u32, end: u32) -> Node {
        Node { value, start, end }
    }
    fn string(&mut self, bytes: &[u8], start: u32, end: u32) -> Node {
        Node {
            value: Value::String(bytes.to_vec()),
            start,
            end,
        }
    }
    fn bytes(&mut self, bytes: &[u8], start: u32, end: u32) -> Node {
        Node {
            value: Value::Bytes(bytes.to_vec()),
            start,
            end,
        }
    }
    fn prims(&mut self, p: Primitive, le: &[u8], start: u32, end: u32) -> Node {
        Node {
            value: Value::Prims(p, le.to_vec()),
            start,
            end,
        }
    }
    fn array(&mut self, items: Vec<Node>, start: u32, end: u32) -> Node {
        Node {
            value: Value::Array(items),
            start,
            end,
        }
    }
    fn message(&mut self, ty: usize, fields: Vec<Node>, start: u32, end: u32) -> Node {
        Node {
            value: Value::Message { ty, fields },
            start,
            end,
        }
    }
}

/// A value tree built again into `b` (for encodings decoded to the tree first: protobuf, JSON,
/// and for a tree already decoded).
pub fn replay<B: Build>(n: &Node, b: &mut B) -> B::Out {
    let (start, end) = (n.start, n.end);
    match &n.value {
        Value::String(s) => b.string(s, start, end),
        Value::Bytes(s) => b.bytes(s, start, end),
        Value::Prims(p, le) => b.prims(*p, le, start, end),
        Value::Array(items) => {
            let items = items.iter().map(|x| replay(x, b)).collect();
            b.array(items, start, end)
        }
        Value::Message { ty, fields } => {
            let fields = fields.iter().map(|x| replay(x, b)).collect();
            b.message(*ty, fields, start, end)
        }
        v => b.prim(v.clone(), start, end),
    }
}
