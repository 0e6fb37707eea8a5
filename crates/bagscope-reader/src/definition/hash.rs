//! The ROS 2 type hash of REP 2011 (`RIHS01_…`): the sha256 of a type's description (its
//! fields' names and types, and every type it refers to) as `rosidl_generator_type_description`
//! writes it in JSON. rosbag2 stores it per topic (`type_description_hash` in `metadata.yaml`
//! and in a SQLite file's `topics` table); a publisher announces it in its USER_DATA.
//!
//! The description is made from a parsed definition ([`MsgDef`]): each field's type id (the
//! `FIELD_TYPE_*` constants of `type_description_interfaces/msg/FieldType`), the capacity of a
//! bounded or fixed array, the bound of a bounded string, a nested type's name. Constants and
//! default values are not part of it; an empty type has rosidl's one `uint8` member.

use sha2::{Digest, Sha256};

use super::msg::{ArrayKind, FieldType, MsgDef, MsgType};
use crate::error::{DefError, DefErrorKind};

/// Offsets added to an element's type id: a fixed array, a bounded and an unbounded sequence.
const ARRAY: u32 = 48;
const BOUNDED_SEQUENCE: u32 = 96;
const UNBOUNDED_SEQUENCE: u32 = 144;
/// A nested type's id; a bounded string's and a bounded wide string's.
const NESTED: u32 = 1;
const BOUNDED_STRING: u32 = 21;
const BOUNDED_WSTRING: u32 = 22;

/// The id of a base type as the definition writes it: `char` is a character in `.msg` too
/// (rosbag2's recorded hashes of `std_msgs/msg/Char` say so), `octet` (which bagscope's IDL
/// compiler writes `byte`, the `.msg` name of an octet) a byte.
fn base_id(word: &str) -> Option<u32> {
    Some(match word {
        "int8" => 2,
        "uint8" => 3,
        "int16" => 4,
        "uint16" => 5,
        "int32" => 6,
        "uint32" => 7,
        "int64" => 8,
        "uint64" => 9,
        "float32" => 10,
        "float64" => 11,
        "char" => 13,
        "wchar" => 14,
        "bool" => 15,
        "byte" | "octet" => 16,
        "string" => 17,
        "wstring" => 18,
        _ => return None,
    })
}

/// `pkg/Type` as ROS 2 names a message type: `pkg/msg/Type`.
pub fn ros2_name(name: &str) -> String {
    let parts: Vec<&str> = name.split('/').collect();
    match parts.as_slice() {
        [pkg, ty] => format!("{pkg}/msg/{ty}"),
        _ => name.to_string(),
    }
}

/// Appends `s` to `out` as a JSON string (what Python's `json.dumps` writes with its defaults:
/// ASCII only, other characters escaped).
fn json_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || (c as u32) > 0x7e => {
                let mut buf = [0u16; 2];
                for u in c.encode_utf16(&mut buf) {
                    out.push_str(&format!("\\u{u:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// One type's description: `{"type_name": ..., "fields": [...]}`.
fn describe(def: &MsgDef, t: &MsgType, out: &mut String) -> Result<(), String> {
    out.push_str("{\"type_name\": ");
    json_str(out, &ros2_name(&t.name));
    out.push_str(", \"fields\": [");
    let placeholder = [(
        "structure_needs_at_least_one_member".to_string(),
        3u32,
        0usize,
        0u64,
        String::new(),
    )];
    let mut fields = Vec::with_capacity(t.fields.len());
    for f in &t.fields {
        // The type as written: a base, a string bound (`string<=10`), an array suffix.
        let (base, suffix) = match f.type_text.find('[') {
            Some(i) => (&f.type_text[..i], &f.type_text[i..]),
            None => (f.type_text.as_str(), ""),
        };
        let (offset, capacity) = match f.array {
            ArrayKind::Scalar => (0, 0),
            ArrayKind::Fixed(n) => (ARRAY, n),
            ArrayKind::Variable => match suffix
                .trim_start_matches('[')
                .trim_end_matches(']')
                .strip_prefix("<=")
                .and_then(|b| b.trim().parse::<usize>().ok())
            {
                Some(b) => (BOUNDED_SEQUENCE, b),
                None => (UNBOUNDED_SEQUENCE, 0),
            },
        };
        let (id, string_capacity, nested) = match &f.ty {
            FieldType::Message(j) => {
                let name = def.types.get(*j).map_or("", |n| n.name.as_str());
                (NESTED, 0, ros2_name(name))
            }
            FieldType::Primitive(_) => match base.split_once("<=") {
                Some((w, b)) => {
                    let b: u64 = b
                        .trim()
                        .parse()
                        .map_err(|_| format!("field {}: bound {b:?} is not a number", f.name))?;
                    let id = match w.trim() {
                        "string" => BOUNDED_STRING,
                        "wstring" => BOUNDED_WSTRING,
                        other => return Err(format!("field {}: a bounded {other}", f.name)),
                    };
                    (id, b, String::new())
                }
                None => {
                    let word = base.trim();
                    let id = base_id(word).ok_or_else(|| {
                        format!(
                            "field {}: type {word} has no ROS 2 counterpart (a ROS 1 type)",
                            f.name
                        )
                    })?;
                    (id, 0, String::new())
                }
            },
        };
        fields.push((
            f.name.clone(),
            id + offset,
            capacity,
            string_capacity,
            nested,
        ));
    }
    let fields = if fields.is_empty() {
        &placeholder[..]
    } else {
        &fields[..]
    };
    for (k, (name, id, capacity, string_capacity, nested)) in fields.iter().enumerate() {
        if k > 0 {
            out.push_str(", ");
        }
        out.push_str("{\"name\": ");
        json_str(out, name);
        out.push_str(&format!(
            ", \"type\": {{\"type_id\": {id}, \"capacity\": {capacity}, \"string_capacity\": {string_capacity}, \"nested_type_name\": "
        ));
        json_str(out, nested);
        out.push_str("}}");
    }
    out.push_str("]}");
    Ok(())
}

/// The REP 2011 hash (`RIHS01_` and 64 hex digits) of `def`'s main type. An error (a
/// definition that ROS 2 does not describe) names the field whose type ROS 2 has not (a ROS 1
/// `time`, say).
pub fn rihs01(def: &MsgDef) -> Result<String, DefError> {
    let not_ros2 = |reason: String| DefError {
        kind: DefErrorKind::NotDecoded,
        datatype: def.root().name.clone(),
        line: None,
        reason,
    };
    // The main type, then the types it refers to (directly or not) sorted by name.
    let mut used = vec![false; def.types.len()];
    let mut stack = vec![0usize];
    while let Some(i) = stack.pop() {
        if std::mem::replace(&mut used[i], true) {
            continue;
        }
        for f in &def.types[i].fields {
            if let FieldType::Message(j) = f.ty {
                if j < used.len() && !used[j] {
                    stack.push(j);
                }
            }
        }
    }
    let mut refs: Vec<(String, usize)> = (1..def.types.len())
        .filter(|&i| used[i])
        .map(|i| (ros2_name(&def.types[i].name), i))
        .filter(|(n, _)| *n != ros2_name(&def.types[0].name))
        .collect();
    refs.sort();
    refs.dedup_by(|a, b| a.0 == b.0);
    let mut text = String::from("{\"type_description\": ");
    describe(def, def.root(), &mut text).map_err(not_ros2)?;
    text.push_str(", \"referenced_type_descriptions\": [");
    for (k, (_, i)) in refs.iter().enumerate() {
        if k > 0 {
            text.push_str(", ");
        }
        describe(def, &def.types[*i], &mut text).map_err(not_ros2)?;
    }
    text.push_str("]}");
    let digest = Sha256::digest(text.as_bytes());
    let mut hex = String::with_capacity(64);
    for b in digest {
        hex.push_str(&format!("{b:02x}"));
    }
    Ok(format!("RIHS01_{hex}"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn hash(name: &str, text: &str) -> String {
        rihs01(&MsgDef::parse_dialect(name, text, super::super::msg::Dialect::Ros2).unwrap())
            .unwrap()
    }

    /// Hashes ROS 2 publishes (`ros2 interface show --hash`, rosbag2's metadata of Jazzy
    /// recordings): a string, a nested type with its references, bounds and arrays.
    #[test]
    fn known_hashes() {
        assert_eq!(
            hash("std_msgs/msg/String", "string data"),
            "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18"
        );
        let header = "builtin_interfaces/Time stamp\nstring frame_id\n\
            ================================================================================\n\
            MSG: builtin_interfaces/Time\nint32 sec\nuint32 nanosec\n";
        assert_eq!(
            hash("std_msgs/msg/Header", header),
            "RIHS01_f49fb3ae2cf070f793645ff749683ac6b06203e41c891e17701b1cb597ce6a01"
        );
        // A ROS 1 type has no hash.
        let def =
            MsgDef::parse("std_msgs/Header", "uint32 seq\ntime stamp\nstring frame_id").unwrap();
        let e = rihs01(&def).unwrap_err();
        assert_eq!(e.kind, DefErrorKind::NotDecoded);
        assert_eq!(e.datatype, "std_msgs/Header");
        assert!(e.reason.contains("time has no ROS 2 counterpart"), "{e}");
    }

    #[test]
    fn empty_types_bounds_and_arrays_change_the_hash() {
        let a = hash("t/msg/A", "");
        assert_eq!(
            a,
            hash("t/msg/A", "uint8 structure_needs_at_least_one_member")
        );
        let kinds = [
            "int32 x",
            "int32[3] x",
            "int32[] x",
            "int32[<=3] x",
            "string<=5 x",
            "string<=5[<=2] x",
            "byte x",
            "char x",
            "uint8 x",
        ];
        let hashes: std::collections::BTreeSet<String> =
            kinds.iter().map(|k| hash("t/msg/A", k)).collect();
        assert_eq!(hashes.len(), kinds.len());
    }
}
