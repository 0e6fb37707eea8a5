//! [`Extractor`]: one value of each message read by its field path, skipping what comes before it, without the value tree.

use std::fmt::Write as _;

use super::{read_prim, skip, Decoder, FieldPath, Plan, Segment, Value};
use crate::definition::msg::{ArrayKind, Field, FieldType, Primitive};
use crate::error::PathError;

#[derive(Debug, Clone)]
struct Step {
    ty: usize,
    field: usize,
    /// Offset of the field from the start of its message when every field before it is fixed.
    prefix: Option<usize>,
    index: Option<i64>,
}

/// Reads one scalar of a message by its path, skipping fixed-size runs by offset.
///
/// ```
/// use bagscope_reader::definition::msg::MsgDef;
/// use bagscope_reader::encoding::{Extractor, FieldPath, Plan, Value};
///
/// let plan = Plan::new(MsgDef::parse("pkg/Pair", "time stamp\nfloat64[] xs\n").unwrap());
/// let mut msg = Vec::new();
/// msg.extend_from_slice(&7u32.to_le_bytes()); // stamp.secs
/// msg.extend_from_slice(&9u32.to_le_bytes()); // stamp.nsecs
/// msg.extend_from_slice(&2u32.to_le_bytes()); // two xs
/// msg.extend_from_slice(&1.5f64.to_le_bytes());
/// msg.extend_from_slice(&2.5f64.to_le_bytes());
/// let path = FieldPath::parse("/pair.xs[-1]").unwrap();
/// assert_eq!(path.topic, "/pair");
/// let x = Extractor::new(&plan, &path.segments).unwrap();
/// assert_eq!(x.extract(&msg), Some(Value::F64(2.5)));
/// let secs = Extractor::new(&plan, &FieldPath::parse("stamp.secs").unwrap().segments).unwrap();
/// assert_eq!(secs.extract(&msg), Some(Value::U32(7)));
/// ```
#[derive(Debug, Clone)]
pub struct Extractor {
    plan: Plan,
    steps: Vec<Step>,
    leaf: Primitive,
    /// A ROS 1 `time`/`duration` leaf named down to one of its halves (`.secs`, `.nsecs`, as
    /// `echo` prints them).
    part: Option<TimePart>,
    /// CDR, a path without indexes: what comes before the field compiled (see
    /// [`skip::Skip::compile_to`]), instead of the decoder's walk field by field.
    seek: Option<Box<skip::Skip>>,
}

/// One half of a ROS 1 `time` or `duration`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TimePart {
    Secs,
    Nsecs,
}

impl TimePart {
    /// The half a field name after a `time`/`duration` names (ROS 1's and ROS 2's spellings).
    pub(crate) fn named(name: &str) -> Option<TimePart> {
        match name {
            "secs" | "sec" => Some(TimePart::Secs),
            "nsecs" | "nsec" | "nanosec" => Some(TimePart::Nsecs),
            _ => None,
        }
    }

    pub(crate) fn of(self, v: Value) -> Option<Value> {
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
    pub fn new(plan: &Plan, segments: &[Segment]) -> Result<Extractor, PathError> {
        let err = |reason: String| PathError {
            path: FieldPath {
                topic: String::new(),
                segments: segments.to_vec(),
            }
            .to_string(),
            reason,
        };
        let mut ty = 0usize;
        let mut steps = Vec::new();
        let mut it = segments.iter().peekable();
        let mut leaf = None;
        let mut part = None;
        let mut walked = String::new();
        while let Some(seg) = it.next() {
            let Segment::Field(name) = seg else {
                return Err(err(format!(
                    "index after {walked:?}, which is not an array"
                )));
            };
            if let Some(p) = leaf {
                if part.is_none() && matches!(p, Primitive::Time | Primitive::Duration) {
                    if let Some(half) = TimePart::named(name) {
                        part = Some(half);
                        walked.push('.');
                        walked.push_str(name);
                        continue;
                    }
                    return Err(err(format!(
                        "{walked} is a {}: its fields are secs and nsecs, not {name:?}",
                        p.name()
                    )));
                }
                let what = match (part, p) {
                    (Some(_), Primitive::Time) => "uint32",
                    (Some(_), _) => "int32",
                    (None, p) => p.name(),
                };
                let a = if what.starts_with("int") { "an" } else { "a" };
                return Err(err(format!(
                    "{walked} is {a} {what}, it has no field {name:?}"
                )));
            }
            let t = &plan.def.types[ty];
            let Some(fi) = t.fields.iter().position(|f| f.name == *name) else {
                let names: Vec<&str> = t.fields.iter().map(|f| f.name.as_str()).collect();
                return Err(err(format!(
                    "{} has no field {name:?} (fields: {})",
                    t.name,
                    names.join(", ")
                )));
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
                                return Err(err(format!("index {i} out of {walked}[{n}]")));
                            }
                        }
                        let _ = write!(walked, "[{i}]");
                        Some(i)
                    }
                    _ => {
                        return Err(err(format!(
                            "{walked} is an array ({}); add an index such as [0] or [-1]",
                            f.type_text
                        )))
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
            Some(Primitive::String) => Err(err(format!("{walked} is a string, not a number"))),
            Some(p) => {
                let seek = if plan.is_cdr() && steps.iter().all(|s| s.index.is_none()) {
                    let path: Vec<(usize, usize)> = steps.iter().map(|s| (s.ty, s.field)).collect();
                    skip::Skip::compile_to(plan, &path).map(Box::new)
                } else {
                    None
                };
                Ok(Extractor {
                    plan: plan.clone(),
                    steps,
                    leaf: p,
                    part,
                    seek,
                })
            }
            None if steps.is_empty() => Err(err("the path names no field".into())),
            None => Err(err(format!(
                "{walked} is a message ({}); name one of its fields",
                plan.def.types[ty].name
            ))),
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
        if self.plan.is_foreign() {
            return self.extract_decoded(data);
        }
        let v = if self.plan.is_cdr() {
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
        // A fixed-size primitive at the end of a walk: aligned and read in place, as the
        // decoder reads one (a row of a plot or a CSV is one per message).
        if let (Some(s), Some(sz)) = (&self.seek, self.leaf.size()) {
            let h = data.get(..4)?;
            let (be, max_align) = crate::encoding::cdr::encapsulation(h[0], h[1])?;
            let pos = s.seek(data)?;
            let align = crate::encoding::cdr::prim_align(self.leaf);
            let pos = pos + crate::encoding::cdr::padding(pos.checked_sub(4)?, align, max_align);
            let b = data.get(pos..pos.checked_add(sz)?)?;
            // (Little-endian, the usual case, read here: the call is the most of it.)
            return Some(if be {
                crate::encoding::cdr::prim_value(self.leaf, b, true)
            } else {
                read_prim(self.leaf, b)
            });
        }
        let mut d = Decoder::new(&self.plan, data);
        d.cdr_header().ok()?;
        if let Some(s) = &self.seek {
            d.pos = s.seek(data)?;
            return Some(d.prim(self.leaf).ok()?.value);
        }
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
