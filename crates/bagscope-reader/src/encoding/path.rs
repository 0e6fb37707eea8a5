//! Field paths as Foxglove and PlotJuggler write them (`/topic.field.sub[3].x`), and the paths to every primitive field of a definition.

use std::fmt;

use crate::definition::msg::{ArrayKind, Field, FieldType, MsgDef};
use crate::error::PathError;

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
    ///
    /// ```
    /// use bagscope_reader::encoding::{FieldPath, Segment};
    /// let p = FieldPath::parse("/tf.transforms[-1].transform.translation.x").unwrap();
    /// assert_eq!(p.topic, "/tf");
    /// assert_eq!(p.segments[1], Segment::Index(-1));
    /// let e = FieldPath::parse("/imu.orientation[").unwrap_err();
    /// assert_eq!(e.path, "/imu.orientation[");
    /// assert!(e.reason.contains("unclosed `[`"));
    /// ```
    pub fn parse(s: &str) -> Result<FieldPath, PathError> {
        let s = s.trim();
        let err = |reason: String| PathError {
            path: s.to_string(),
            reason,
        };
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
                    return Err(err(format!("unclosed `[` in {s:?}")));
                };
                let i: i64 = after[..close]
                    .trim()
                    .parse()
                    .map_err(|_| err(format!("bad index {:?} in {s:?}", &after[..close])))?;
                segments.push(Segment::Index(i));
                r = &after[close + 1..];
            } else {
                let body = match r.strip_prefix('.') {
                    Some(b) => b,
                    None if first => r,
                    None => return Err(err(format!("expected `.` or `[` at {r:?} in {s:?}"))),
                };
                let end = body.find(['.', '[']).unwrap_or(body.len());
                let name = &body[..end];
                if name.is_empty() {
                    return Err(err(format!("empty field name in {s:?}")));
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
