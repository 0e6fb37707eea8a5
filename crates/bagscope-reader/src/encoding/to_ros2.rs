//! ROS 1 messages re-encoded as CDR with their ROS 2 types (`bagscope export --to-ros2`).
//!
//! A connection's ROS 2 type is its ROS 1 name with `/msg/` (`std_msgs/Header` becomes
//! `std_msgs/msg/Header`), its definition the one bagscope finds for that name (search path,
//! shipped interfaces). The two definitions are matched field by field, by name, before any
//! message is converted: every ROS 2 field must have a ROS 1 field of a compatible type, and
//! every ROS 1 field a ROS 2 one, but for `Header.seq`, which ROS 2 dropped. `time` and
//! `duration` become `builtin_interfaces/Time` and `Duration` (`sec`, `nanosec`). A type
//! that does not match is refused with the field that differs: it is left out, never guessed.
//!
//! A type with no ROS 2 definition anywhere is translated from its ROS 1 definition, as
//! rosbags-convert does and as a ROS 2 port of a package keeps its `.msg` files: `pkg/Type`
//! becomes `pkg/msg/Type`, `time`/`duration` `builtin_interfaces/Time`/`Duration`, and the
//! types it uses their ROS 2 definitions where found (`std_msgs/Header`, without `seq`), else
//! translated too; the translated text is the output's definition. Where a ROS 2 type of
//! another name with exactly the same fields is what ROS 2 tools expect (`tf/tfMessage` →
//! `tf2_msgs/msg/TFMessage`, so that RViz 2 shows `/tf`), the connection is mapped to it.
//! With `strict` ([`ToRos2::with_types`]) neither happens.

use super::convert::{field_named, is_header_seq, match_types, Rules};
use crate::definition::msg::{ArrayKind, Dialect, FieldType, MsgDef, Primitive};
use crate::encoding::{Plan, Value};
use crate::error::ConvertError;

/// A connection's conversion, compiled once.
#[derive(Debug, Clone)]
pub struct ToRos2 {
    /// The ROS 1 plan that decodes the source.
    pub src: Plan,
    /// The ROS 2 definition written.
    pub dst: MsgDef,
    /// The ROS 2 type name (`pkg/msg/Type`).
    pub datatype: String,
    /// The ROS 2 definition text (with its dependencies), for the output's schema.
    pub definition: String,
    /// Whether both types list their fields in the same order (but for `Header.seq` and the
    /// member of an empty ROS 2 type): messages are then re-encoded as they are read, without
    /// a value tree.
    direct: bool,
    /// Per ROS 1 type (of `src`): whether its `seq` field is dropped (a `Header`).
    drop_seq: Vec<bool>,
    /// Where the ROS 2 type came from.
    pub origin: Ros2Origin,
}

/// Where a converted connection's ROS 2 type came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ros2Origin {
    /// The same name's ROS 2 definition (search path or shipped).
    Found,
    /// Another ROS 2 type with exactly the same fields, which ROS 2 tools expect.
    Mapped,
    /// Translated from the ROS 1 definition; the ROS 2 names of the types translated (the
    /// message's own first).
    Translated(Vec<String>),
}

/// ROS 1 types whose messages ROS 2 tools expect under another type of the same fields.
const MAPPED: &[(&str, &str)] = &[("tf/tfMessage", "tf2_msgs/msg/TFMessage")];

/// The ROS 2 `.msg` text of ROS 1 definition `src` (its types and what they use, in
/// sections): each type's ROS 2 definition where one is found, else its ROS 1 definition
/// translated. Returns the text and the names of the types translated.
fn translate(src: &MsgDef, msg_path: &[std::path::PathBuf]) -> (String, Vec<String>) {
    let mut sections: Vec<(String, String)> = Vec::new();
    let mut translated = Vec::new();
    let mut builtins = std::collections::BTreeSet::new();
    for (i, t) in src.types.iter().enumerate() {
        let name = ros2_name(&crate::definition::msg::normalize_type(&t.name));
        if sections.iter().any(|(n, _)| *n == name) {
            continue;
        }
        if i > 0 {
            if let Some((text, _)) =
                crate::definition::sources::lookup_for(&name, Dialect::Ros2, "", msg_path)
            {
                sections.push((name, text));
                continue;
            }
        }
        let mut body = String::new();
        for c in &t.constants {
            body.push_str(&format!("{} {}={}\n", c.ty.name(), c.name, c.value));
        }
        for f in &t.fields {
            let base = match f.ty {
                FieldType::Primitive(Primitive::Time) => {
                    builtins.insert("builtin_interfaces/msg/Time");
                    "builtin_interfaces/Time".to_string()
                }
                FieldType::Primitive(Primitive::Duration) => {
                    builtins.insert("builtin_interfaces/msg/Duration");
                    "builtin_interfaces/Duration".to_string()
                }
                FieldType::Primitive(p) => p.name().to_string(),
                FieldType::Message(j) => {
                    ros2_name(&crate::definition::msg::normalize_type(&src.types[j].name))
                        .replace("/msg/", "/")
                }
            };
            let suffix = match f.array {
                ArrayKind::Scalar => String::new(),
                ArrayKind::Fixed(n) => format!("[{n}]"),
                ArrayKind::Variable => "[]".into(),
            };
            body.push_str(&format!("{base}{suffix} {}\n", f.name));
        }
        translated.push(name.clone());
        sections.push((name, body));
    }
    for b in builtins {
        if !sections.iter().any(|(n, _)| n == b) {
            if let Some((text, _)) =
                crate::definition::sources::lookup_for(b, Dialect::Ros2, "", msg_path)
            {
                sections.push((b.to_string(), text));
            }
        }
    }
    let mut text = String::new();
    for (k, (name, body)) in sections.iter().enumerate() {
        if k > 0 {
            text.push_str(&"=".repeat(80));
            text.push_str(&format!("\nMSG: {name}\n"));
        }
        text.push_str(body);
        if !body.ends_with('\n') {
            text.push('\n');
        }
    }
    (text, translated)
}

/// Whether the ROS 2 fields of `d` are the ROS 1 fields of `s` in the same order (after
/// [`check`]: types compatible), all the way down.
fn in_order(
    src: &MsgDef,
    s: usize,
    dst: &MsgDef,
    d: usize,
    depth: usize,
    drop_seq: &mut [bool],
) -> bool {
    if depth > 64 {
        return false;
    }
    let st = &src.types[s];
    let dt = &dst.types[d];
    if st.fields.iter().any(|f| is_header_seq(st, dt, f)) {
        drop_seq[s] = true;
    }
    let mut sf = st
        .fields
        .iter()
        .filter(|f| !is_header_seq(st, dt, f))
        .peekable();
    for g in &dt.fields {
        let Some(f) = sf.next() else { return false };
        if !f.name.eq_ignore_ascii_case(&g.name) {
            return false;
        }
        if let (FieldType::Message(i), FieldType::Message(j)) = (&f.ty, &g.ty) {
            if !in_order(src, *i, dst, *j, depth + 1, drop_seq) {
                return false;
            }
        }
    }
    sf.peek().is_none()
}

/// `Header.seq`, which ROS 2 dropped.
/// The first `n` bytes of `inp`, taken off it.
fn take<'a>(inp: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
    if inp.len() < n {
        return None;
    }
    let (a, b) = inp.split_at(n);
    *inp = b;
    Some(a)
}

fn take_u32(inp: &mut &[u8]) -> Option<u32> {
    take(inp, 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// `pkg/Type` as ROS 2 names it.
pub fn ros2_name(ros1: &str) -> String {
    if ros1.contains("/msg/") {
        return ros1.to_string();
    }
    match ros1.split_once('/') {
        Some((pkg, ty)) => format!("{pkg}/msg/{ty}"),
        None => ros1.to_string(),
    }
}

fn is_builtin(def: &MsgDef, ty: usize, which: &str) -> bool {
    crate::definition::msg::normalize_type(&def.types[ty].name)
        == format!("builtin_interfaces/{which}")
}

/// Checks that ROS 1 type `src` converts to ROS 2 type `dst`.
fn check(src: &MsgDef, dst: &MsgDef) -> Result<(), ConvertError> {
    let leaf = |a: &FieldType, b: &FieldType| match (a, b) {
        (FieldType::Primitive(a), FieldType::Primitive(b)) => {
            a == b || (a.size() == b.size() && a.is_numeric() == b.is_numeric())
        }
        (FieldType::Primitive(Primitive::Time), FieldType::Message(j)) => {
            is_builtin(dst, *j, "Time")
        }
        (FieldType::Primitive(Primitive::Duration), FieldType::Message(j)) => {
            is_builtin(dst, *j, "Duration")
        }
        _ => false,
    };
    match_types(
        src,
        0,
        dst,
        0,
        &Rules::between_ros(("ROS 1", "ROS 2"), &leaf),
    )
    .map(|_| ())
}

impl ToRos2 {
    /// Compiles the conversion of a ROS 1 connection, or says why it cannot be converted:
    /// types without a ROS 2 definition are translated from their ROS 1 one.
    /// Definitions not stored are searched in `msg_path` first.
    pub fn new(
        c: &crate::Connection,
        msg_path: &[std::path::PathBuf],
    ) -> Result<ToRos2, ConvertError> {
        ToRos2::with_types(c, false, msg_path)
    }

    /// [`Self::new`]; with `strict`, only a ROS 2 definition of the same name is taken (no
    /// translation, no mapping to another type).
    pub fn with_types(
        c: &crate::Connection,
        strict: bool,
        msg_path: &[std::path::PathBuf],
    ) -> Result<ToRos2, ConvertError> {
        if c.encoding != "ros1" {
            return Err(ConvertError::new(format!(
                "{} is {}-encoded, not ROS 1",
                c.topic, c.encoding
            )));
        }
        let src =
            Plan::for_connection(c, msg_path).map_err(|e| ConvertError::new(e.to_string()))?;
        let compile = |datatype: &str, text: String, origin: Ros2Origin| {
            let dst = MsgDef::parse_dialect(datatype, &text, Dialect::Ros2)
                .map_err(|e| ConvertError::new(e.to_string()))?;
            check(&src.def, &dst).map_err(|e| e.of(format!("{} → {datatype}", c.datatype)))?;
            let mut drop_seq = vec![false; src.def.types.len()];
            let direct = in_order(&src.def, 0, &dst, 0, 0, &mut drop_seq);
            Ok::<_, ConvertError>(ToRos2 {
                src: src.clone(),
                dst,
                datatype: datatype.to_string(),
                definition: text,
                direct,
                drop_seq,
                origin,
            })
        };
        if !strict {
            let ros1 = crate::definition::msg::normalize_type(&c.datatype);
            if let Some(&(_, to)) = MAPPED.iter().find(|(from, _)| *from == ros1) {
                if let Some((text, _)) =
                    crate::definition::sources::lookup_for(to, Dialect::Ros2, "", msg_path)
                {
                    if let Ok(t) = compile(to, text, Ros2Origin::Mapped) {
                        return Ok(t);
                    }
                }
            }
        }
        let datatype = ros2_name(&c.datatype);
        match crate::definition::sources::lookup_for(&datatype, Dialect::Ros2, "", msg_path) {
            Some((text, _)) => compile(&datatype, text, Ros2Origin::Found),
            None if strict => Err(ConvertError::new(format!(
                "{} has no ROS 2 definition (none on the search path or shipped)",
                c.datatype
            ))),
            None => {
                let (text, names) = translate(&src.def, msg_path);
                compile(&datatype, text, Ros2Origin::Translated(names))
            }
        }
    }

    /// What to tell the user of the type chosen, if anything (a translation or a mapping).
    pub fn note(&self) -> Option<String> {
        let ros1 = &self.src.def.types[0].name;
        match &self.origin {
            Ros2Origin::Found => None,
            Ros2Origin::Mapped => Some(format!(
                "{ros1} → {}: the ROS 2 type with the same fields, which ROS 2 tools expect",
                self.datatype
            )),
            Ros2Origin::Translated(names) => Some(format!(
                "{ros1} → {}: no ROS 2 definition found, translated from the ROS 1 one ({})",
                self.datatype,
                names.join(", ")
            )),
        }
    }

    /// Converts one message: ROS 1 bytes in, CDR (little endian, with its header) out.
    pub fn convert(&self, ros1: &[u8]) -> Result<Vec<u8>, ConvertError> {
        let mut out = Vec::with_capacity(ros1.len() + 16);
        self.convert_into(ros1, &mut out)?;
        Ok(out)
    }

    /// [`Self::convert`], appending to `out` (nothing appended on an error).
    pub fn convert_into(&self, ros1: &[u8], out: &mut Vec<u8>) -> Result<(), ConvertError> {
        if self.direct {
            let base = out.len();
            out.extend_from_slice(&[0, 1, 0, 0]);
            let mut w = Cdr {
                out,
                base,
                drop_seq: &self.drop_seq,
            };
            let mut inp = ros1;
            if w.direct(&self.src.def, 0, &self.dst, 0, &mut inp).is_some() && inp.is_empty() {
                return Ok(());
            }
            // A message the direct path cannot read: the decoder says what is wrong with it.
            out.truncate(base);
        }
        let v = self.convert_by_value(ros1)?;
        out.extend_from_slice(&v);
        Ok(())
    }

    /// Whether messages are re-encoded as they are read (fields in the same order), not
    /// through a value tree.
    #[doc(hidden)]
    pub fn is_direct(&self) -> bool {
        self.direct
    }

    /// [`Self::convert`] through the decoded value tree (any field order; and the errors).
    #[doc(hidden)]
    pub fn convert_by_value(&self, ros1: &[u8]) -> Result<Vec<u8>, ConvertError> {
        let v = self
            .src
            .decode(ros1)
            .map_err(|e| ConvertError::new(e.to_string()))?;
        let mut out = Vec::with_capacity(ros1.len() + 16);
        out.extend_from_slice(&[0, 1, 0, 0]);
        let mut w = Cdr {
            out: &mut out,
            base: 0,
            drop_seq: &self.drop_seq,
        };
        w.message(&self.src.def, &self.dst, 0, &v.value)?;
        Ok(out)
    }
}

struct Cdr<'a> {
    out: &'a mut Vec<u8>,
    /// Where this message starts in `out` (alignment counts from after its 4-byte header).
    base: usize,
    drop_seq: &'a [bool],
}

impl Cdr<'_> {
    fn align(&mut self, n: usize) {
        let rel = self.out.len() - self.base - 4;
        let pad = (n - rel % n) % n;
        self.out.resize(self.out.len() + pad, 0);
    }

    fn u32(&mut self, x: u32) {
        self.align(4);
        self.out.extend_from_slice(&x.to_le_bytes());
    }

    fn prim(&mut self, p: Primitive, v: &Value) -> Result<(), ConvertError> {
        // Values are written at the ROS 2 type's width (equal to the ROS 1 one, checked).
        let le: Vec<u8> = match v {
            Value::Bool(b) => vec![u8::from(*b)],
            Value::I8(x) => x.to_le_bytes().to_vec(),
            Value::U8(x) => vec![*x],
            Value::I16(x) => x.to_le_bytes().to_vec(),
            Value::U16(x) => x.to_le_bytes().to_vec(),
            Value::I32(x) => x.to_le_bytes().to_vec(),
            Value::U32(x) => x.to_le_bytes().to_vec(),
            Value::I64(x) => x.to_le_bytes().to_vec(),
            Value::U64(x) => x.to_le_bytes().to_vec(),
            Value::F32(x) => x.to_le_bytes().to_vec(),
            Value::F64(x) => x.to_le_bytes().to_vec(),
            Value::String(s) => {
                self.u32(s.len() as u32 + 1);
                self.out.extend_from_slice(s);
                self.out.push(0);
                return Ok(());
            }
            other => {
                return Err(ConvertError::new(format!(
                    "cannot write {other:?} as {p:?}"
                )))
            }
        };
        self.align(le.len());
        self.out.extend_from_slice(&le);
        Ok(())
    }

    /// Re-encodes ROS 1 type `s` read from `inp` as ROS 2 type `d` (fields in the same order,
    /// see [`in_order`]). `None` if the input is short or not what the types say.
    fn direct(
        &mut self,
        src: &MsgDef,
        s: usize,
        dst: &MsgDef,
        d: usize,
        inp: &mut &[u8],
    ) -> Option<()> {
        let st = &src.types[s];
        let dt = &dst.types[d];
        if dt.fields.is_empty() && st.fields.is_empty() {
            self.out.push(0);
            return Some(());
        }
        let mut gs = dt.fields.iter();
        let drop_seq = self.drop_seq.get(s).copied().unwrap_or(false);
        for f in &st.fields {
            if drop_seq && f.name == "seq" {
                take(inp, 4)?;
                continue;
            }
            let g = gs.next()?;
            let n = match f.array {
                ArrayKind::Scalar => {
                    self.direct_one(src, &f.ty, dst, &g.ty, inp)?;
                    continue;
                }
                ArrayKind::Fixed(n) => n,
                ArrayKind::Variable => {
                    let n = take_u32(inp)?;
                    self.u32(n);
                    n as usize
                }
            };
            match &f.ty {
                FieldType::Primitive(p)
                    if !matches!(p, Primitive::String | Primitive::Time | Primitive::Duration) =>
                {
                    let size = p.size()?;
                    let bytes = take(inp, n.checked_mul(size)?)?;
                    if n > 0 {
                        self.align(size);
                    }
                    if *p == Primitive::Bool {
                        // As decoded: any byte but 0 is true, written as 1.
                        self.out.extend(bytes.iter().map(|&x| u8::from(x != 0)));
                    } else {
                        self.out.extend_from_slice(bytes);
                    }
                }
                ty => {
                    // Every element takes at least one byte: a count past the input is short.
                    if n > inp.len() {
                        return None;
                    }
                    for _ in 0..n {
                        self.direct_one(src, ty, dst, &g.ty, inp)?;
                    }
                }
            }
        }
        Some(())
    }

    fn direct_one(
        &mut self,
        src: &MsgDef,
        ty: &FieldType,
        dst: &MsgDef,
        dty: &FieldType,
        inp: &mut &[u8],
    ) -> Option<()> {
        match ty {
            FieldType::Primitive(Primitive::String) => {
                let n = take_u32(inp)?;
                let b = take(inp, n as usize)?;
                self.u32(n.checked_add(1)?);
                self.out.extend_from_slice(b);
                self.out.push(0);
            }
            FieldType::Primitive(Primitive::Time | Primitive::Duration) => {
                let b = take(inp, 8)?;
                self.align(4);
                self.out.extend_from_slice(b);
            }
            FieldType::Primitive(Primitive::Bool) => {
                let b = take(inp, 1)?;
                self.out.push(u8::from(b[0] != 0));
            }
            FieldType::Primitive(p) => {
                let size = p.size()?;
                let b = take(inp, size)?;
                self.align(size);
                self.out.extend_from_slice(b);
            }
            FieldType::Message(i) => {
                let FieldType::Message(j) = dty else {
                    return None;
                };
                self.direct(src, *i, dst, *j, inp)?;
            }
        }
        Some(())
    }

    fn time(&mut self, sec: i64, nsec: i64) {
        self.align(4);
        self.out.extend_from_slice(&(sec as i32).to_le_bytes());
        self.out.extend_from_slice(&(nsec as u32).to_le_bytes());
    }

    fn scalar(
        &mut self,
        src: &MsgDef,
        dst: &MsgDef,
        ty: &FieldType,
        v: &Value,
    ) -> Result<(), ConvertError> {
        match (ty, v) {
            (FieldType::Message(_), Value::Time { sec, nsec }) => {
                self.time(i64::from(*sec), i64::from(*nsec));
                Ok(())
            }
            (FieldType::Message(_), Value::Duration { sec, nsec }) => {
                self.time(i64::from(*sec), i64::from(*nsec));
                Ok(())
            }
            (FieldType::Message(j), v) => self.message(src, dst, *j, v),
            (FieldType::Primitive(p), v) => self.prim(*p, v),
        }
    }

    fn message(
        &mut self,
        src: &MsgDef,
        dst: &MsgDef,
        d: usize,
        v: &Value,
    ) -> Result<(), ConvertError> {
        let Value::Message { ty: s, fields } = v else {
            return Err(ConvertError::new("expected a message"));
        };
        let st = &src.types[*s];
        if dst.types[d].fields.is_empty() {
            // An empty ROS 2 type is one byte in CDR.
            self.out.push(0);
            return Ok(());
        }
        for g in &dst.types[d].fields {
            let Some(k) = field_named(&st.fields, &g.name) else {
                return Err(ConvertError::new(format!(
                    "{}: no ROS 1 field for it",
                    g.name
                )));
            };
            let val = &fields[k].value;
            match g.array {
                ArrayKind::Scalar => self.scalar(src, dst, &g.ty, val)?,
                ArrayKind::Fixed(_) | ArrayKind::Variable => {
                    let n = val.len().unwrap_or(0);
                    if g.array == ArrayKind::Variable {
                        self.u32(n as u32);
                    }
                    match val {
                        Value::Bytes(b) => self.out.extend_from_slice(b),
                        Value::Array(items) => {
                            for it in items {
                                self.scalar(src, dst, &g.ty, &it.value)?;
                            }
                        }
                        Value::Prims(..) => {
                            for i in 0..n {
                                let e = val
                                    .element(i)
                                    .map(|x| x.0)
                                    .ok_or_else(|| ConvertError::new("array element"))?;
                                self.scalar(src, dst, &g.ty, &e)?;
                            }
                        }
                        other => {
                            return Err(ConvertError::new(format!(
                                "{}: not an array: {other:?}",
                                g.name
                            )))
                        }
                    }
                }
            }
        }
        Ok(())
    }
}
