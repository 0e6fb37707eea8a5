//! [`Plan`]: a connection's definition compiled for decoding (sizes per type, the wire format), and where the definition comes from.

use super::{decoder, json, protobuf, skip, Build, Decoder, Node, EMPTY_MD5};
use crate::definition::msg::{ArrayKind, Dialect, Field, FieldType, MsgDef, Primitive};
use crate::error::{DecodeError, DefError, DefErrorKind};

/// A connection's definition, compiled for decoding.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The definition.
    pub def: MsgDef,
    /// Wire size of each type when it has no variable part.
    pub(super) fixed: Vec<Option<usize>>,
    /// Fewest bytes a value of each type can take.
    pub(super) min: Vec<usize>,
    /// The md5sum computed from the definition.
    pub md5: String,
    /// How messages are laid out on the wire.
    pub wire: Wire,
    /// The definition compiled for [`Self::validates`], at its first use (after `wire` is
    /// settled); `None` inside where the decoder's walk does it.
    pub(super) skip: std::sync::OnceLock<Option<skip::Skip>>,
}

/// The wire format a [`Plan`] decodes.
#[derive(Debug, Clone)]
pub enum Wire {
    /// ROS 1 serialization: little endian, packed.
    Ros1,
    /// CDR (ROS 2): an encapsulation header, values aligned to their size.
    Cdr,
    /// Protobuf, with the wire facts of the definition's fields.
    Protobuf(std::sync::Arc<protobuf::Schema>),
    /// JSON text (the definition made from a JSON Schema).
    Json,
}

impl Plan {
    /// Whether messages are CDR (ROS 2).
    pub fn is_cdr(&self) -> bool {
        matches!(self.wire, Wire::Cdr)
    }

    /// Whether messages are protobuf or JSON: a definition made from a foreign schema, with
    /// nothing of ROS layout.
    pub fn is_foreign(&self) -> bool {
        matches!(self.wire, Wire::Protobuf(_) | Wire::Json)
    }
}

pub(super) fn prim_min(p: Primitive) -> usize {
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
            wire: Wire::Ros1,
            skip: std::sync::OnceLock::new(),
        }
    }

    /// A plan for JSON messages described by a JSON Schema, the root type named `name`.
    pub fn json(schema: &str, name: &str) -> Result<Plan, DefError> {
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
            wire: match proto {
                Some(p) => Wire::Protobuf(std::sync::Arc::new(p)),
                None => Wire::Json,
            },
            skip: std::sync::OnceLock::new(),
        }
    }

    /// A plan for protobuf messages of type `root` (`pkg.Msg`) from a binary
    /// `FileDescriptorSet`.
    pub fn protobuf(set: &[u8], root: &str) -> Result<Plan, DefError> {
        let (def, schema) = protobuf::compile(set, root)?;
        Ok(Plan::foreign(def, Some(schema)))
    }

    /// Compiles a parsed definition for CDR-encoded (ROS 2) messages.
    pub fn new_cdr(def: MsgDef) -> Plan {
        let mut p = Plan::new(def);
        p.wire = Wire::Cdr;
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
    /// found on the search path (`msg_path` first, then the environment's) or shipped with
    /// bagscope (see [`crate::definition::sources`]). Encodings other than `ros1` and `cdr` are
    /// not decoded.
    pub fn for_connection(
        c: &crate::Connection,
        msg_path: &[std::path::PathBuf],
    ) -> Result<Plan, DefError> {
        Ok(Self::for_connection_with_source(c, msg_path)?.0)
    }

    /// Like [`Plan::for_connection`], and says where the definition came from.
    pub fn for_connection_with_source(
        c: &crate::Connection,
        msg_path: &[std::path::PathBuf],
    ) -> Result<(Plan, crate::definition::sources::DefSource), DefError> {
        let err = |kind: DefErrorKind, reason: String| DefError {
            kind,
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
                    .map(|p| (p, crate::definition::sources::DefSource::Recording));
            }
            "json" if c.schema_encoding == "jsonschema" => {
                let name = if c.datatype.is_empty() {
                    "json"
                } else {
                    &c.datatype
                };
                return Plan::json(&c.message_definition, name)
                    .map(|p| (p, crate::definition::sources::DefSource::Recording));
            }
            other => {
                return Err(err(
                    DefErrorKind::NotDecoded,
                    format!("not decoded: encoding {other}"),
                ))
            }
        };
        let dialect = if cdr { Dialect::Ros2 } else { Dialect::Ros1 };
        let text = c.message_definition.as_str();
        let stored: Option<Result<MsgDef, DefError>> = if !text.trim().is_empty() {
            Some(match c.schema_encoding.as_str() {
                "" | "ros1msg" | "ros2msg" => MsgDef::parse_dialect(&c.datatype, text, dialect),
                "ros2idl" | "omgidl" => crate::definition::idl::parse(&c.datatype, text),
                other => Err(err(
                    DefErrorKind::NotDecoded,
                    format!("not decoded: definition language {other} (bagscope reads ros1msg, ros2msg, ros2idl and omgidl)"),
                )),
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
            Some(Err(e)) => match crate::definition::sources::lookup_for(&c.datatype, dialect, &c.distro, msg_path) {
                Some((text, found)) => (
                    MsgDef::parse_dialect(&c.datatype, &text, dialect)?,
                    crate::definition::sources::DefSource::Instead {
                        found: Box::new(found),
                        stored_error: e.to_string(),
                    },
                ),
                None => return Err(e),
            },
            None => match crate::definition::sources::lookup_for(&c.datatype, dialect, &c.distro, msg_path) {
                Some((text, found)) => (MsgDef::parse_dialect(&c.datatype, &text, dialect)?, found),
                // An empty `ros2msg` schema is the definition of an empty message
                // (`std_msgs/msg/Empty`): nothing found elsewhere says otherwise.
                None if cdr && c.schema_encoding == "ros2msg" => (
                    MsgDef::parse_dialect(&c.datatype, "", dialect)?,
                    crate::definition::sources::DefSource::Recording,
                ),
                None => {
                    return Err(err(
                        DefErrorKind::Missing,
                        format!(
                            "the recording stores no definition for {} on {}, and none was found on the message search path (--msg-path, BAGSCOPE_MSG_PATH, AMENT_PREFIX_PATH, ROS_PACKAGE_PATH) or among the definitions bagscope ships",
                            c.datatype, c.topic
                        ),
                    ))
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

    pub(super) fn elem_sizes(&self, f: &Field) -> (Option<usize>, usize) {
        match f.ty {
            FieldType::Primitive(p) => (p.size(), prim_min(p)),
            FieldType::Message(j) => (self.fixed[j], self.min[j]),
        }
    }

    /// Whether [`Self::decode`] would decode `data`, found without building its value tree
    /// (no allocation): the same walk, skipping. `false` says nothing of where it fails; decode
    /// it for that.
    #[inline]
    pub fn validates(&self, data: &[u8]) -> bool {
        if self.is_foreign() {
            return self.decode(data).is_ok();
        }
        match self.skip.get_or_init(|| skip::Skip::compile(self)) {
            Some(s) => s.validates(data),
            None => self.validates_walk(data),
        }
    }

    /// [`Self::validates`] by the decoder's own walk.
    pub(super) fn validates_walk(&self, data: &[u8]) -> bool {
        let mut d = Decoder::new(self, data);
        if self.is_cdr() && d.cdr_header().is_err() {
            return false;
        }
        if d.skip_message(0).is_err() {
            return false;
        }
        let slack = if self.is_cdr() { 3 } else { 0 };
        d.pos + slack >= data.len()
    }

    /// Decodes a whole message. Trailing bytes after the last field are an error.
    pub fn decode(&self, data: &[u8]) -> Result<Node, DecodeError> {
        match &self.wire {
            Wire::Protobuf(p) => p.decode(&self.def, data),
            Wire::Json => json::decode(&self.def, data),
            Wire::Ros1 | Wire::Cdr => self.decode_with(data, &mut decoder::Nodes),
        }
    }

    /// Decodes a whole message into what `b` builds, straight from the bytes for ROS 1 and CDR
    /// (protobuf and JSON through the value tree). Trailing bytes are an error, as for
    /// [`Self::decode`].
    pub fn decode_with<B: Build>(&self, data: &[u8], b: &mut B) -> Result<B::Out, DecodeError> {
        match &self.wire {
            Wire::Protobuf(_) | Wire::Json => return Ok(decoder::replay(&self.decode(data)?, b)),
            Wire::Ros1 | Wire::Cdr => {}
        }
        let mut d = Decoder::new(self, data);
        if self.is_cdr() {
            d.cdr_header()?;
        }
        let root = d.message_with(0, b)?;
        // CDR may pad the end to a multiple of 4 (the header's options say by how much).
        let slack = if self.is_cdr() { 3 } else { 0 };
        if d.pos + slack < data.len() {
            return Err(DecodeError {
                path: String::new(),
                offset: d.pos,
                reason: format!("{} trailing bytes after the last field", data.len() - d.pos),
                kind: crate::error::DecodeErrorKind::Trailing,
            });
        }
        Ok(root)
    }
}
