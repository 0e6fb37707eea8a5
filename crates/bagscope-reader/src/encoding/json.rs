//! JSON messages (MCAP channels of encoding `json`, schema encoding `jsonschema`, as Foxglove's
//! tools write them): the JSON Schema becomes a definition like a ROS one (objects are types,
//! `properties` their fields, in the schema's order), and each message is parsed into the same
//! value tree, so the inspector, `echo`, plots, `csv` and Find work on them.
//!
//! `number` is a float64, `integer` an int64, `boolean` a bool, `string` a string (also for a
//! property without a type, or of several types: its JSON text), `object` a nested type,
//! `array` a list of its `items`' type. A property missing from a message takes its type's
//! default (0, `false`, `""`, empty); a value of the wrong type is an error naming its path.
//! A `string` of `contentEncoding: base64` is bytes (a `uint8[]`), as Foxglove's schemas write
//! images', clouds' and videos' data.

use serde_json::Value as J;

use super::{Node, Value};
use crate::definition::msg::{ArrayKind, Field, FieldType, MsgDef, MsgType, Primitive};
use crate::error::{DecodeError, DefError};

/// Deepest nesting of objects in a schema or a message.
const MAX_DEPTH: usize = 64;

/// The definition of a JSON Schema (`name` names its root type).
pub fn compile(schema: &str, name: &str) -> Result<MsgDef, DefError> {
    let err = |reason: String| DefError {
        kind: crate::error::DefErrorKind::Invalid,
        datatype: name.to_string(),
        line: None,
        reason,
    };
    let s: J = serde_json::from_str(schema).map_err(|e| err(format!("JSON Schema: {e}")))?;
    let mut types = Vec::new();
    // The one thing that fails: objects nested deeper than MAX_DEPTH.
    object_type(&s, name, &mut types, 0).ok_or_else(|| err("objects nested too deep".into()))?;
    Ok(MsgDef {
        types,
        chars_are_text: false,
    })
}

/// Adds the type of object schema `s` (and those of its nested objects); returns its index.
/// `None` when objects nest deeper than [`MAX_DEPTH`].
fn object_type(s: &J, name: &str, types: &mut Vec<MsgType>, depth: usize) -> Option<usize> {
    if depth > MAX_DEPTH {
        return None;
    }
    let me = types.len();
    types.push(MsgType {
        name: name.to_string(),
        fields: Vec::new(),
        constants: Vec::new(),
    });
    let mut fields = Vec::new();
    if let Some(J::Object(props)) = s.get("properties") {
        for (k, p) in props {
            let (ty, array, type_text) = match p.get("type").and_then(J::as_str) {
                // Bytes, as Foxglove's schemas write them: a base64 string.
                Some("string")
                    if p.get("contentEncoding").and_then(J::as_str) == Some("base64") =>
                {
                    (
                        FieldType::Primitive(Primitive::U8),
                        ArrayKind::Variable,
                        "uint8[]".to_string(),
                    )
                }
                Some("array") => {
                    let items = p.get("items").unwrap_or(&J::Null);
                    let (ty, text) = element(items, &format!("{name}.{k}"), types, depth)?;
                    (ty, ArrayKind::Variable, format!("{text}[]"))
                }
                _ => {
                    let (ty, text) = element(p, &format!("{name}.{k}"), types, depth)?;
                    (ty, ArrayKind::Scalar, text)
                }
            };
            fields.push(Field {
                name: k.clone(),
                type_text,
                ty,
                array,
            });
        }
    }
    types[me].fields = fields;
    Some(me)
}

/// The type of a non-array schema.
fn element(
    p: &J,
    name: &str,
    types: &mut Vec<MsgType>,
    depth: usize,
) -> Option<(FieldType, String)> {
    Some(match p.get("type").and_then(J::as_str) {
        Some("number") => (FieldType::Primitive(Primitive::F64), "number".into()),
        Some("integer") => (FieldType::Primitive(Primitive::I64), "integer".into()),
        Some("boolean") => (FieldType::Primitive(Primitive::Bool), "boolean".into()),
        Some("string") => (FieldType::Primitive(Primitive::String), "string".into()),
        Some("object") => (
            FieldType::Message(object_type(p, name, types, depth + 1)?),
            "object".into(),
        ),
        // No type, several, null, or an array of arrays: kept as its JSON text.
        _ => (FieldType::Primitive(Primitive::String), "json".into()),
    })
}

/// Decodes one JSON message of `def`'s root type.
pub fn decode(def: &MsgDef, data: &[u8]) -> Result<Node, DecodeError> {
    let v: J = serde_json::from_slice(data).map_err(|e| DecodeError {
        path: String::new(),
        offset: 0,
        reason: format!("not JSON: {e}"),
        kind: crate::error::DecodeErrorKind::Content,
    })?;
    let end = data.len() as u32;
    let mut path = Vec::new();
    object(def, 0, &v, end, &mut path, 0)
}

fn object(
    def: &MsgDef,
    ty: usize,
    v: &J,
    end: u32,
    path: &mut Vec<String>,
    depth: usize,
) -> Result<Node, DecodeError> {
    let err = |path: &[String], reason: String| DecodeError {
        path: path.join("."),
        offset: 0,
        reason,
        kind: crate::error::DecodeErrorKind::Content,
    };
    if depth > MAX_DEPTH {
        return Err(err(path, "objects nested too deep".into()));
    }
    let obj = match v {
        J::Object(o) => Some(o),
        J::Null => None,
        other => return Err(err(path, format!("an object expected, found {other}"))),
    };
    let mut fields = Vec::new();
    for f in &def.types[ty].fields {
        path.push(f.name.clone());
        let x = obj.and_then(|o| o.get(&f.name)).unwrap_or(&J::Null);
        let value = match f.array {
            ArrayKind::Scalar => one(def, &f.ty, &f.type_text, x, end, path, depth)?,
            // Bytes (a base64 string): the only arrays of uint8 a schema makes.
            _ if f.ty == FieldType::Primitive(Primitive::U8) => match x {
                J::Null => Value::Bytes(Vec::new()),
                J::String(s) => Value::Bytes(
                    super::base64::decode(s.as_bytes())
                        .ok_or_else(|| err(path, "not base64 text".into()))?,
                ),
                other => return Err(err(path, format!("base64 text expected, found {other}"))),
            },
            _ => {
                let items = match x {
                    J::Array(a) => a.as_slice(),
                    J::Null => &[],
                    other => return Err(err(path, format!("an array expected, found {other}"))),
                };
                let mut out = Vec::with_capacity(items.len());
                for (i, it) in items.iter().enumerate() {
                    path.push(i.to_string());
                    out.push(Node {
                        value: one(def, &f.ty, &f.type_text, it, end, path, depth)?,
                        start: 0,
                        end,
                    });
                    path.pop();
                }
                Value::Array(out)
            }
        };
        fields.push(Node {
            value,
            start: 0,
            end,
        });
        path.pop();
    }
    Ok(Node {
        value: Value::Message { ty, fields },
        start: 0,
        end,
    })
}

fn one(
    def: &MsgDef,
    ty: &FieldType,
    type_text: &str,
    x: &J,
    end: u32,
    path: &mut Vec<String>,
    depth: usize,
) -> Result<Value, DecodeError> {
    let wrong = |path: &[String], what: &str| DecodeError {
        path: path.join("."),
        offset: 0,
        reason: format!("{what} expected, found {x}"),
        kind: crate::error::DecodeErrorKind::Content,
    };
    Ok(match ty {
        FieldType::Message(t) => object(def, *t, x, end, path, depth + 1)?.value,
        FieldType::Primitive(Primitive::F64) => match x {
            J::Null => Value::F64(0.0),
            J::Number(n) => Value::F64(n.as_f64().unwrap_or(0.0)),
            _ => return Err(wrong(path, "a number")),
        },
        FieldType::Primitive(Primitive::I64) => match x {
            J::Null => Value::I64(0),
            J::Number(n) => match (n.as_i64(), n.as_f64()) {
                (Some(i), _) => Value::I64(i),
                // An integer past i64 or written with a fraction: kept as a float.
                (None, Some(f)) => Value::F64(f),
                _ => return Err(wrong(path, "an integer")),
            },
            _ => return Err(wrong(path, "an integer")),
        },
        FieldType::Primitive(Primitive::Bool) => match x {
            J::Null => Value::Bool(false),
            J::Bool(b) => Value::Bool(*b),
            _ => return Err(wrong(path, "a boolean")),
        },
        _ if type_text.starts_with("json") => match x {
            J::Null => Value::String(Vec::new()),
            J::String(s) => Value::String(s.clone().into_bytes()),
            other => Value::String(other.to_string().into_bytes()),
        },
        _ => match x {
            J::Null => Value::String(Vec::new()),
            J::String(s) => Value::String(s.clone().into_bytes()),
            _ => return Err(wrong(path, "a string")),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCHEMA: &str = r#"{"type":"object","properties":{
        "x":{"type":"number"},"n":{"type":"integer"},"ok":{"type":"boolean"},
        "name":{"type":"string"},"any":{},
        "pos":{"type":"object","properties":{"lat":{"type":"number"}}},
        "pts":{"type":"array","items":{"type":"object","properties":{"v":{"type":"number"}}}},
        "tags":{"type":"array","items":{"type":"string"}}}}"#;

    #[test]
    fn a_schema_and_messages_of_it() {
        let def = compile(SCHEMA, "T").unwrap();
        let names: Vec<&str> = def.types[0]
            .fields
            .iter()
            .map(|f| f.name.as_str())
            .collect();
        assert_eq!(names, ["any", "n", "name", "ok", "pos", "pts", "tags", "x"]);
        assert_eq!(def.types.len(), 3);
        let n = decode(
            &def,
            br#"{"x":1.5,"n":-7,"ok":true,"name":"a","any":[1,{"b":2}],"pos":{"lat":57.1},"pts":[{"v":1},{"v":2}],"tags":["p","q"],"extra":3}"#,
        )
        .unwrap();
        let Value::Message { fields, .. } = &n.value else {
            panic!()
        };
        assert_eq!(fields[0].value, Value::String(br#"[1,{"b":2}]"#.to_vec()));
        assert_eq!(fields[1].value, Value::I64(-7));
        assert_eq!(fields[3].value, Value::Bool(true));
        let Value::Message { fields: pos, .. } = &fields[4].value else {
            panic!()
        };
        assert_eq!(pos[0].value, Value::F64(57.1));
        let Value::Array(pts) = &fields[5].value else {
            panic!()
        };
        assert_eq!(pts.len(), 2);
        assert_eq!(fields[7].value, Value::F64(1.5));
        // Missing properties take defaults.
        let n = decode(&def, b"{}").unwrap();
        let Value::Message { fields, .. } = &n.value else {
            panic!()
        };
        assert_eq!(fields[7].value, Value::F64(0.0));
        assert_eq!(fields[5].value, Value::Array(vec![]));
    }

    #[test]
    fn wrong_values_name_their_path() {
        let def = compile(SCHEMA, "T").unwrap();
        let e = decode(&def, br#"{"pts":[{"v":1},{"v":"no"}]}"#).unwrap_err();
        assert_eq!(e.path, "pts.1.v");
        assert!(e.reason.contains("a number expected"), "{e}");
        assert!(decode(&def, b"{nope")
            .unwrap_err()
            .reason
            .starts_with("not JSON"));
        assert!(decode(&def, b"[1]").is_err());
        assert!(compile("{", "T").is_err());
        // A deeply nested schema is refused, not followed to a stack overflow (past 128
        // levels serde_json itself refuses it).
        let nest = |n: usize| {
            let mut s = String::from(r#"{"type":"number"}"#);
            for _ in 0..n {
                s = format!(r#"{{"type":"object","properties":{{"a":{s}}}}}"#);
            }
            s
        };
        assert!(compile(&nest(40), "T").is_ok());
        assert!(compile(&nest(300), "T").is_err());
    }

    /// Bytes as Foxglove's schemas write them (`contentEncoding: base64`) are a `uint8[]`.
    #[test]
    fn base64_strings_are_bytes() {
        let def = compile(
            r#"{"type":"object","properties":{"data":{"type":"string","contentEncoding":"base64"}}}"#,
            "T",
        )
        .unwrap();
        assert_eq!(def.types[0].fields[0].type_text, "uint8[]");
        let n = decode(&def, br#"{"data":"Af8="}"#).unwrap();
        let Value::Message { fields, .. } = &n.value else {
            panic!()
        };
        assert_eq!(fields[0].value, Value::Bytes(vec![1, 255]));
        let n = decode(&def, b"{}").unwrap();
        let Value::Message { fields, .. } = &n.value else {
            panic!()
        };
        assert_eq!(fields[0].value, Value::Bytes(vec![]));
        let e = decode(&def, br#"{"data":"A*8="}"#).unwrap_err();
        assert_eq!(e.path, "data");
        assert!(decode(&def, br#"{"data":[1]}"#).is_err());
    }
}
