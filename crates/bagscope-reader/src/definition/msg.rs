//! The `.msg` definition language, `ros1msg` and `ros2msg` ([`Dialect`]): the text a recording
//! stores for each connection (`message_definition` in ROS 1 2.0, `def` in 1.2, the MCAP schema,
//! rosbag2's `message_definitions` table), parsed into a tree of types, and the md5sum ROS 1
//! computes from it. ROS 2 adds `pkg/msg/Type` names, bounded strings (`string<=10`) and
//! sequences (`int32[<=5]`), default values after a field's name, and one `uint8` member in
//! an empty type; `byte` is an unsigned octet there.
//!
//! The text is the main type's definition, then for each type it uses a line of `=` signs, a
//! `MSG: pkg/Type` line and that type's definition. Every line is a field (`float64[9] cov`),
//! a constant (`uint8 DEBUG=1`; a string constant keeps everything after `=`), a comment or
//! blank.

use crate::error::DefError;
use std::collections::HashMap;

/// The two `.msg` dialects: ROS 1 (`byte` is int8, `time`/`duration` built in) and ROS 2
/// (`pkg/msg/Type` names, bounded strings and sequences, default values, `byte` is an octet,
/// an empty type carries one `uint8` on the wire).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Dialect {
    /// `ros1msg`.
    #[default]
    Ros1,
    /// `ros2msg`.
    Ros2,
}

/// `pkg/msg/Type` and `pkg/Type` name the same type.
pub fn normalize_type(name: &str) -> String {
    name.trim().replace("/msg/", "/")
}

/// Deepest nesting of message types accepted (real ROS types nest fewer than ten deep).
pub const MAX_NESTING: usize = 100;

/// The built-in types of ROS 1 messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Primitive {
    /// `bool`: one byte.
    Bool,
    /// `int8` (also `byte`).
    I8,
    /// `uint8` (also `char`).
    U8,
    /// `int16`.
    I16,
    /// `uint16`.
    U16,
    /// `int32`.
    I32,
    /// `uint32`.
    U32,
    /// `int64`.
    I64,
    /// `uint64`.
    U64,
    /// `float32`.
    F32,
    /// `float64`.
    F64,
    /// `string`: a u32 length and that many bytes.
    String,
    /// `time`: u32 secs, u32 nsecs.
    Time,
    /// `duration`: i32 secs, i32 nsecs.
    Duration,
}

impl Primitive {
    /// The primitive a type name denotes, aliases included.
    pub fn from_name(s: &str) -> Option<Primitive> {
        Some(match s {
            "bool" => Primitive::Bool,
            "int8" | "byte" => Primitive::I8,
            "uint8" | "char" => Primitive::U8,
            "int16" => Primitive::I16,
            "uint16" => Primitive::U16,
            "int32" => Primitive::I32,
            "uint32" => Primitive::U32,
            "int64" => Primitive::I64,
            "uint64" => Primitive::U64,
            "float32" => Primitive::F32,
            "float64" => Primitive::F64,
            "string" => Primitive::String,
            "time" => Primitive::Time,
            "duration" => Primitive::Duration,
            _ => return None,
        })
    }

    /// The primitive a type name denotes in a dialect: in ROS 2 `byte` is an unsigned octet.
    pub fn from_name_in(s: &str, dialect: Dialect) -> Option<Primitive> {
        match (dialect, s) {
            (Dialect::Ros2, "byte" | "char") => Some(Primitive::U8),
            (Dialect::Ros2, "time" | "duration") => None,
            _ => Primitive::from_name(s),
        }
    }

    /// The type's name as a `.msg` file writes it (`float64`, `time`).
    pub fn name(self) -> &'static str {
        match self {
            Primitive::Bool => "bool",
            Primitive::I8 => "int8",
            Primitive::U8 => "uint8",
            Primitive::I16 => "int16",
            Primitive::U16 => "uint16",
            Primitive::I32 => "int32",
            Primitive::U32 => "uint32",
            Primitive::I64 => "int64",
            Primitive::U64 => "uint64",
            Primitive::F32 => "float32",
            Primitive::F64 => "float64",
            Primitive::String => "string",
            Primitive::Time => "time",
            Primitive::Duration => "duration",
        }
    }

    /// Bytes on the wire, or `None` for strings.
    pub fn size(self) -> Option<usize> {
        Some(match self {
            Primitive::Bool | Primitive::I8 | Primitive::U8 => 1,
            Primitive::I16 | Primitive::U16 => 2,
            Primitive::I32 | Primitive::U32 | Primitive::F32 => 4,
            Primitive::I64 | Primitive::U64 | Primitive::F64 => 8,
            Primitive::Time | Primitive::Duration => 8,
            Primitive::String => return None,
        })
    }

    /// Whether a value of this type is a number a plot can show.
    pub fn is_numeric(self) -> bool {
        self != Primitive::String
    }
}

/// What a field holds, before any array.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldType {
    /// A built-in.
    Primitive(Primitive),
    /// A nested message: an index into [`MsgDef::types`].
    Message(usize),
}

/// Whether a field is an array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArrayKind {
    /// A single value.
    Scalar,
    /// `T[n]`: exactly n values, no length on the wire.
    Fixed(usize),
    /// `T[]`: a u32 length, then the values.
    Variable,
}

/// One field of a type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// Its name.
    pub name: String,
    /// The type as written (`float64[9]`, `Header`, `geometry_msgs/Point`).
    pub type_text: String,
    /// The element type, resolved.
    pub ty: FieldType,
    /// Array or not.
    pub array: ArrayKind,
}

/// A constant of a type: `uint8 DEBUG=1`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Constant {
    /// Its type.
    pub ty: Primitive,
    /// The type as written.
    pub type_text: String,
    /// Its name.
    pub name: String,
    /// Its value as written (for strings everything after `=`).
    pub value: String,
}

/// One message type of a definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MsgType {
    /// `pkg/Type`.
    pub name: String,
    /// Fields in wire order.
    pub fields: Vec<Field>,
    /// Constants in the order written.
    pub constants: Vec<Constant>,
}

impl MsgType {
    /// The package part of the name.
    pub fn package(&self) -> &str {
        self.name.split_once('/').map_or("", |(p, _)| p)
    }

    /// Constants whose value is `number` (a value read as a number) or `text` (a string's
    /// bytes): the inspector shows them beside the value.
    pub fn constants_matching(&self, number: Option<f64>, text: Option<&[u8]>) -> Vec<&Constant> {
        self.constants
            .iter()
            .filter(|c| {
                number.is_some_and(|x| c.value.trim().parse::<f64>().ok() == Some(x))
                    || text.is_some_and(|t| t == c.value.as_bytes())
            })
            .collect()
    }
}

/// A parsed definition: every type it uses; the first is the main type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MsgDef {
    /// The types; `types[0]` is the message's own type.
    pub types: Vec<MsgType>,
    /// Fields of type `char` (written `char` in [`Field::type_text`]) hold characters, not
    /// numbers: OMG IDL's `char`, where an array of them is text (DDS recorders write names
    /// so). A `.msg` `char` is a `uint8` and stays a number.
    pub chars_are_text: bool,
}

/// A field or constant line before type resolution.
struct RawField {
    name: String,
    type_text: String,
    base: String,
    array: ArrayKind,
    line: usize,
}

struct RawType {
    name: String,
    fields: Vec<RawField>,
    constants: Vec<Constant>,
}

fn is_separator(line: &str) -> bool {
    let t = line.trim();
    t.len() >= 3 && t.bytes().all(|b| b == b'=')
}

fn strip_comment(line: &str) -> &str {
    line.split_once('#').map_or(line, |(a, _)| a).trim()
}

/// Splits `float64[9]` into `("float64", Fixed(9))`.
fn split_array(t: &str) -> Result<(&str, ArrayKind), DefError> {
    let Some(open) = t.find('[') else {
        return Ok((strip_bound(t), ArrayKind::Scalar));
    };
    let Some(inner) = t[open + 1..].strip_suffix(']') else {
        return Err(DefError::invalid(format!("malformed array type {t:?}")));
    };
    let base = strip_bound(&t[..open]);
    if inner.is_empty() {
        return Ok((base, ArrayKind::Variable));
    }
    // A bounded sequence (`[<=5]`) is a sequence on the wire.
    if let Some(b) = inner.strip_prefix("<=") {
        return match b.trim().parse::<usize>() {
            Ok(_) => Ok((base, ArrayKind::Variable)),
            Err(_) => Err(DefError::invalid(format!(
                "malformed sequence bound in {t:?}"
            ))),
        };
    }
    // ROS 2 style bounds (`<=5`) do not occur in ROS 1 bags; refuse them clearly.
    match inner.parse::<usize>() {
        Ok(n) => Ok((base, ArrayKind::Fixed(n))),
        Err(_) => Err(DefError::invalid(format!("malformed array size in {t:?}"))),
    }
}

/// `string<=10` is a string on the wire.
fn strip_bound(t: &str) -> &str {
    t.split_once("<=").map_or(t, |(b, _)| b)
}

fn valid_name(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'/')
}

fn parse_type_body(
    name: &str,
    lines: &[(usize, &str)],
    dialect: Dialect,
) -> Result<RawType, DefError> {
    let err = |line: usize, reason: String| DefError::invalid(reason).of(name).on_line(line);
    let mut t = RawType {
        name: name.to_string(),
        fields: Vec::new(),
        constants: Vec::new(),
    };
    for &(ln, orig) in lines {
        let clean = strip_comment(orig);
        if clean.is_empty() {
            continue;
        }
        let mut parts = clean.split_whitespace();
        let Some(type_text) = parts.next() else {
            continue;
        };
        let after = clean[type_text.len()..].trim();
        let is_constant = match dialect {
            Dialect::Ros1 => clean.contains('='),
            // `string<=5 name` has `=` in its type, `int32 x 5` a default value: a constant
            // is `TYPE NAME=VALUE`.
            Dialect::Ros2 => after
                .split_once('=')
                .is_some_and(|(n, _)| valid_name(n.trim()) && !n.trim().contains(' ')),
        };
        if is_constant {
            let Some(prim) = Primitive::from_name_in(strip_bound(type_text), dialect) else {
                return Err(err(
                    ln,
                    format!("constant of non-primitive type {type_text:?}"),
                ));
            };
            let (cname, value) = if prim == Primitive::String {
                // Everything to the right of `=` is the value, `#` included.
                let o = orig.trim_start();
                let after_type = o[type_text.len()..].trim_start();
                let Some((n, v)) = after_type.split_once('=') else {
                    return Err(err(ln, "malformed constant".into()));
                };
                (n.trim().to_string(), v.trim().to_string())
            } else {
                let rest = clean[type_text.len()..].trim();
                let Some((n, v)) = rest.split_once('=') else {
                    return Err(err(ln, "malformed constant".into()));
                };
                (n.trim().to_string(), v.trim().to_string())
            };
            if !valid_name(&cname) {
                return Err(err(ln, format!("invalid constant name {cname:?}")));
            }
            t.constants.push(Constant {
                ty: prim,
                type_text: type_text.to_string(),
                name: cname,
                value,
            });
            continue;
        }
        let Some(fname) = parts.next() else {
            return Err(err(ln, format!("field of type {type_text:?} has no name")));
        };
        // ROS 2 fields may have a default value after the name.
        if parts.next().is_some() && dialect == Dialect::Ros1 {
            return Err(err(ln, format!("unexpected text after field {fname:?}")));
        }
        if !valid_name(fname) {
            return Err(err(ln, format!("invalid field name {fname:?}")));
        }
        let (base, array) = split_array(type_text).map_err(|e| e.of(name).on_line(ln))?;
        if base.is_empty() {
            return Err(err(ln, "empty type".into()));
        }
        t.fields.push(RawField {
            name: fname.to_string(),
            type_text: type_text.to_string(),
            base: base.to_string(),
            array,
            line: ln,
        });
    }
    // An empty ROS 2 type has no fields here; its one byte on the wire (rosidl's
    // `structure_needs_at_least_one_member`) is the CDR decoder's and writer's business.
    let _ = dialect;
    Ok(t)
}

impl MsgDef {
    /// Parses the definition text of a connection whose type is `datatype` (`pkg/Type`).
    ///
    /// ```
    /// use bagscope_reader::definition::msg::MsgDef;
    ///
    /// let text = "Header header\nfloat64 x\nuint8 OK=0\n\
    ///     ================================================================================\n\
    ///     MSG: std_msgs/Header\nuint32 seq\ntime stamp\nstring frame_id\n";
    /// let def = MsgDef::parse("my_pkg/Reading", text).unwrap();
    /// assert_eq!(def.root().fields.len(), 2);
    /// assert_eq!(def.root().constants[0].name, "OK");
    /// assert_eq!(def.types[1].name, "std_msgs/Header");
    /// // The md5sum ROS computes: the Header's own md5sum stands in for its text.
    /// assert_eq!(def.md5().len(), 32);
    /// ```
    pub fn parse(datatype: &str, text: &str) -> Result<MsgDef, DefError> {
        MsgDef::parse_dialect(datatype, text, Dialect::Ros1)
    }

    /// Parses a definition in the given dialect (`ros2msg` for ROS 2).
    pub fn parse_dialect(datatype: &str, text: &str, dialect: Dialect) -> Result<MsgDef, DefError> {
        let derr = |line: Option<usize>, reason: String| DefError {
            kind: crate::error::DefErrorKind::Invalid,
            datatype: datatype.to_string(),
            line,
            reason,
        };
        // Split into sections: the main type, then `MSG:` sections.
        let mut sections: Vec<(String, Vec<(usize, &str)>)> = vec![(datatype.to_string(), vec![])];
        let mut expect_msg = false;
        for (i, line) in text.lines().enumerate() {
            let ln = i + 1;
            if is_separator(line) {
                expect_msg = true;
                continue;
            }
            if expect_msg {
                let t = line.trim();
                if t.is_empty() {
                    continue;
                }
                let Some(name) = t.strip_prefix("MSG:") else {
                    return Err(derr(
                        Some(ln),
                        format!("expected `MSG: pkg/Type` after a separator, found {t:?}"),
                    ));
                };
                sections.push((name.trim().to_string(), vec![]));
                expect_msg = false;
                continue;
            }
            if let Some(s) = sections.last_mut() {
                s.1.push((ln, line));
            }
        }
        let raws = sections
            .iter()
            .map(|(n, l)| parse_type_body(n, l, dialect))
            .collect::<Result<Vec<_>, _>>()?;
        let mut by_name: HashMap<String, usize> = HashMap::new();
        for (i, r) in raws.iter().enumerate() {
            by_name.entry(normalize_type(&r.name)).or_insert(i);
        }
        let resolve = |owner: &RawType, f: &RawField| -> Result<FieldType, DefError> {
            if let Some(p) = Primitive::from_name_in(&f.base, dialect) {
                return Ok(FieldType::Primitive(p));
            }
            if dialect == Dialect::Ros2 && f.base == "wstring" {
                return Err(DefError {
                    kind: crate::error::DefErrorKind::Invalid,
                    datatype: datatype.to_string(),
                    line: Some(f.line),
                    reason: format!("field {:?}: wstring is not supported yet", f.name),
                });
            }
            let pkg = owner.name.split_once('/').map_or("", |(p, _)| p);
            let mut candidates: Vec<String> = Vec::new();
            if f.base == "Header" {
                candidates.push("std_msgs/Header".into());
                candidates.push("roslib/Header".into());
            }
            if f.base.contains('/') {
                candidates.push(normalize_type(&f.base));
            } else {
                candidates.push(format!("{pkg}/{}", f.base));
            }
            for c in &candidates {
                if let Some(&i) = by_name.get(c.as_str()) {
                    return Ok(FieldType::Message(i));
                }
            }
            // Some writers name a type without its package in the MSG: line, or with another
            // package than the field: accept a unique match on the short name.
            let short = f.base.rsplit('/').next().unwrap_or(&f.base);
            let matches: Vec<usize> = raws
                .iter()
                .enumerate()
                .filter(|(_, r)| r.name.rsplit('/').next() == Some(short))
                .map(|(i, _)| i)
                .collect();
            if let [i] = matches[..] {
                return Ok(FieldType::Message(i));
            }
            Err(DefError {
                kind: crate::error::DefErrorKind::Invalid,
                datatype: datatype.to_string(),
                line: Some(f.line),
                reason: format!(
                    "field {:?} of {} has type {:?}, which the definition does not define",
                    f.name, owner.name, f.base
                ),
            })
        };
        let mut types = Vec::with_capacity(raws.len());
        for r in &raws {
            let mut fields = Vec::with_capacity(r.fields.len());
            for f in &r.fields {
                fields.push(Field {
                    name: f.name.clone(),
                    type_text: f.type_text.clone(),
                    ty: resolve(r, f)?,
                    array: f.array,
                });
            }
            types.push(MsgType {
                name: r.name.clone(),
                fields,
                constants: r.constants.clone(),
            });
        }
        let def = MsgDef {
            types,
            chars_are_text: false,
        };
        def.check_recursion()?;
        Ok(def)
    }

    /// The main type.
    pub fn root(&self) -> &MsgType {
        &self.types[0]
    }

    /// Refuses a type that contains itself (its size would be infinite) and nesting deeper than
    /// [`MAX_NESTING`], so that every recursive walk over the types (sizes, md5, decoding,
    /// printing) has a bounded depth.
    pub(crate) fn check_recursion(&self) -> Result<(), DefError> {
        // 0 = unvisited, 1 = in progress, h + 2 = done with nesting height h.
        fn visit(
            d: &MsgDef,
            i: usize,
            depth: usize,
            state: &mut [usize],
        ) -> Result<usize, DefError> {
            let too_deep =
                || DefError::invalid(format!("types are nested more than {MAX_NESTING} deep"));
            match state[i] {
                1 => {
                    return Err(DefError::invalid(format!(
                        "type {} contains itself",
                        d.types[i].name
                    )))
                }
                0 => {}
                done => return Ok(done - 2),
            }
            if depth > MAX_NESTING {
                return Err(too_deep());
            }
            state[i] = 1;
            let mut height = 0;
            for f in &d.types[i].fields {
                if let FieldType::Message(j) = f.ty {
                    // A variable array of itself is finite on the wire, but ROS 1 has no such
                    // types and it would let an input recurse without bound: refuse all.
                    height = height.max(visit(d, j, depth + 1, state)? + 1);
                }
            }
            if height > MAX_NESTING {
                return Err(too_deep());
            }
            state[i] = height + 2;
            Ok(height)
        }
        let mut state = vec![0usize; self.types.len()];
        for i in 0..self.types.len() {
            visit(self, i, 0, &mut state).map_err(|e| e.of(&self.types[0].name))?;
        }
        Ok(())
    }

    /// The md5sum ROS computes for type `i`: constants, then fields, nested types replaced by
    /// their own md5sum.
    pub fn md5_of(&self, i: usize) -> String {
        let mut memo: Vec<Option<String>> = vec![None; self.types.len()];
        self.md5_memo(i, &mut memo)
    }

    fn md5_memo(&self, i: usize, memo: &mut Vec<Option<String>>) -> String {
        if let Some(Some(m)) = memo.get(i) {
            return m.clone();
        }
        let t = &self.types[i];
        let mut text = String::new();
        for c in &t.constants {
            text.push_str(&format!("{} {}={}\n", c.type_text, c.name, c.value));
        }
        for f in &t.fields {
            match f.ty {
                FieldType::Primitive(_) => text.push_str(&format!("{} {}\n", f.type_text, f.name)),
                FieldType::Message(j) => {
                    let m = self.md5_memo(j, memo);
                    text.push_str(&format!("{m} {}\n", f.name));
                }
            }
        }
        let text = text.trim_end_matches('\n');
        let m = format!("{:x}", md5::compute(text.as_bytes()));
        memo[i] = Some(m.clone());
        m
    }

    /// The md5sum of the main type.
    pub fn md5(&self) -> String {
        self.md5_of(0)
    }

    /// Whether field `f` (of one of these types) holds text though it is stored as `uint8`s:
    /// an OMG IDL `char` array or sequence (see [`MsgDef::chars_are_text`]), decoded up to its
    /// first NUL.
    pub fn is_char_text(&self, f: &Field) -> bool {
        self.chars_are_text
            && f.array != ArrayKind::Scalar
            && f.ty == FieldType::Primitive(Primitive::U8)
            && (f.type_text == "char" || f.type_text.starts_with("char["))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
