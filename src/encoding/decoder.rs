//! The decoder of ROS 1 serialization and CDR: one walk over a [`Plan`] that builds the value tree, skips, or validates; [`DecodeError`] says what, where and at which field.

use super::*;

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

impl Decoder<'_, '_> {
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
        }
    }

    pub(super) fn take(&mut self, n: usize) -> Result<&[u8], DecodeError> {
        let avail = self.data.len() - self.pos;
        if n > avail {
            return Err(self.err(format!("needs {n} bytes, only {avail} left in the message")));
        }
        let s = &self.data[self.pos..self.pos + n];
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

    /// Reads `count` values of `p` (fixed size `sz`) as little-endian bytes.
    pub(super) fn prims(
        &mut self,
        p: Primitive,
        sz: usize,
        count: usize,
    ) -> Result<Vec<u8>, DecodeError> {
        if count > 0 {
            self.align(prim_align(p))?;
        }
        let be = self.be && self.plan.is_cdr();
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

    pub(super) fn prim(&mut self, p: Primitive) -> Result<Node, DecodeError> {
        self.align(prim_align(p))?;
        let start = self.pos as u32;
        let value = match p {
            Primitive::String => {
                let n = self.u32()? as usize;
                let cdr = self.plan.is_cdr();
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
                // One value: read in place (no buffer), its bytes swapped on a stack copy when
                // the CDR data is big-endian.
                let sz = p.size().unwrap_or(0);
                let swap = self.be && self.plan.is_cdr() && sz > 1;
                let b = self.take(sz)?;
                if swap {
                    let mut a = [0u8; 8];
                    a[..sz].copy_from_slice(b);
                    for c in a[..sz].chunks_exact_mut(prim_align(p)) {
                        c.reverse();
                    }
                    read_prim(p, &a[..sz])
                } else {
                    read_prim(p, b)
                }
            }
        };
        Ok(Node {
            value,
            start,
            end: self.pos as u32,
        })
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

    pub(super) fn message(&mut self, ty: usize) -> Result<Node, DecodeError> {
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

    pub(super) fn scalar(&mut self, f: &Field) -> Result<Node, DecodeError> {
        match f.ty {
            FieldType::Primitive(p) => self.prim(p),
            FieldType::Message(j) => self.message(j),
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

    pub(super) fn field(&mut self, f: &Field) -> Result<Node, DecodeError> {
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
