//! Foxglove's schemas as output types of message scripts: a script declaring
//! `-- type: foxglove.SceneUpdate` returns a table shaped as that schema, written as a JSON
//! message with the schema as a JSON Schema (MCAP `json` / `jsonschema`, one of the encodings
//! Foxglove's own tools write), so the 3D, image, map and TF panels draw it as they draw a
//! recorded one, and `export` writes it as a real topic.
//!
//! The schemas (`data/foxglove_schemas.json`) are generated from the `foxglove-schemas-protobuf`
//! package's descriptors by `scripts/data/foxglove_schemas.py`: the fields Foxglove defines, in
//! the JSON form Foxglove uses (times `{sec, nsec}`, bytes base64, enums integers).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use bagscope_reader::definition::msg::{ArrayKind, Field, FieldType, MsgDef, Primitive};
use mlua::{Table, Value as Lua_};
use serde_json::{Map, Number, Value as J};

use super::encode::{field_values, integer, items, kind, number, split_seconds, Alias, At};

const SCHEMAS: &str = include_str!("../../data/foxglove_schemas.json");

fn schemas() -> &'static BTreeMap<String, String> {
    static S: OnceLock<BTreeMap<String, String>> = OnceLock::new();
    S.get_or_init(|| {
        let doc: J = serde_json::from_str(SCHEMAS).unwrap_or(J::Null);
        let mut out = BTreeMap::new();
        if let Some(J::Object(m)) = doc.get("schemas") {
            for (k, v) in m {
                out.insert(k.clone(), v.to_string());
            }
        }
        out
    })
}

/// The JSON Schema of a Foxglove schema (`foxglove.SceneUpdate`), if it is one.
pub fn schema(name: &str) -> Option<&'static str> {
    schemas().get(name.trim()).map(String::as_str)
}

/// The names of every Foxglove schema a script may return.
pub fn names() -> impl Iterator<Item = &'static str> {
    schemas().keys().map(String::as_str)
}

/// Writes the table `v` a script returned as a JSON message of `def` (a Foxglove schema
/// compiled as JSON Schema): a field left out is left out (its reader takes its default); a key
/// the schema does not have, or a value of the wrong kind, is an error that names the field.
pub fn encode_json(def: &MsgDef, v: &Table) -> Result<Vec<u8>, String> {
    let j = message(def, 0, v, &At::Root)?;
    serde_json::to_vec(&j).map_err(|e| e.to_string())
}

/// A time as Foxglove writes it: an object of exactly `sec` and `nsec`.
fn is_time(def: &MsgDef, ty: usize) -> bool {
    def.types.get(ty).is_some_and(|mt| {
        mt.fields.len() == 2
            && mt.fields.iter().any(|f| f.name == "sec")
            && mt.fields.iter().any(|f| f.name == "nsec")
    })
}

fn message(def: &MsgDef, ty: usize, t: &Table, at: &At) -> Result<J, String> {
    let mt = def
        .types
        .get(ty)
        .ok_or_else(|| format!("{at}: a type the definition does not have"))?;
    let time = is_time(def, ty);
    // A ROS 2 time's `nanosec` for Foxglove's `nsec`.
    let values = field_values(mt, t, at, |k| {
        if time && k == "nanosec" {
            Alias::For("nsec")
        } else {
            Alias::No
        }
    })?;
    let mut out = Map::new();
    for (f, x) in mt.fields.iter().zip(&values) {
        if *x == Lua_::Nil {
            continue;
        }
        out.insert(f.name.clone(), field(def, f, x, &At::Field(at, &f.name))?);
    }
    Ok(J::Object(out))
}

fn field(def: &MsgDef, f: &Field, v: &Lua_, at: &At) -> Result<J, String> {
    if f.array == ArrayKind::Scalar {
        return one(def, &f.ty, v, at);
    }
    let list = match v {
        Lua_::Table(t) => Some(items(t)?),
        _ => None,
    };
    if f.ty == FieldType::Primitive(Primitive::U8) {
        // Bytes: a Lua string, or a sequence of byte values; written as base64.
        let bytes: Vec<u8> = match (v, list) {
            (Lua_::String(s), _) => s.as_bytes().to_vec(),
            (_, Some(list)) => list
                .iter()
                .enumerate()
                .map(|(i, x)| {
                    let at = At::Item(at, i);
                    u8::try_from(integer(x, &at)?).map_err(|_| format!("{at}: not a byte (0-255)"))
                })
                .collect::<Result<_, String>>()?,
            (other, _) => return Err(format!("{at}: a {} where bytes go", kind(other))),
        };
        return Ok(J::String(bagscope_reader::encoding::base64::encode(&bytes)));
    }
    let Some(list) = list else {
        return Err(format!("{at}: a {} where an array goes", kind(v)));
    };
    list.iter()
        .enumerate()
        .map(|(i, x)| one(def, &f.ty, x, &At::Item(at, i)))
        .collect::<Result<Vec<J>, String>>()
        .map(J::Array)
}

fn one(def: &MsgDef, ty: &FieldType, v: &Lua_, at: &At) -> Result<J, String> {
    Ok(match ty {
        FieldType::Message(t) => match v {
            Lua_::Table(tab) => message(def, *t, tab, at)?,
            // A time in seconds (the script's `time`).
            Lua_::Integer(_) | Lua_::Number(_) if is_time(def, *t) => {
                let (sec, nsec) = split_seconds(number(v, at)?, at)?;
                serde_json::json!({ "sec": sec, "nsec": nsec })
            }
            Lua_::Nil => J::Object(Map::new()),
            other => return Err(format!("{at}: a {} where a message goes", kind(other))),
        },
        FieldType::Primitive(Primitive::F64) => {
            let x = number(v, at)?;
            J::Number(
                Number::from_f64(x).ok_or_else(|| {
                    format!("{at}: {x}, which JSON cannot hold, where a number goes")
                })?,
            )
        }
        FieldType::Primitive(Primitive::I64) => J::Number(integer(v, at)?.into()),
        FieldType::Primitive(Primitive::Bool) => match v {
            Lua_::Boolean(b) => J::Bool(*b),
            Lua_::Integer(_) | Lua_::Number(_) => J::Bool(number(v, at)? != 0.0),
            other => return Err(format!("{at}: a {} where a boolean goes", kind(other))),
        },
        _ => match v {
            Lua_::String(s) => J::String(s.to_string_lossy()),
            Lua_::Integer(_) | Lua_::Number(_) => {
                J::String(v.to_string().map_err(|e| e.to_string())?)
            }
            other => return Err(format!("{at}: a {} where a string goes", kind(other))),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use bagscope_reader::encoding::json;
    use mlua::Lua;

    fn def(name: &str) -> MsgDef {
        json::compile(schema(name).unwrap(), name).unwrap()
    }

    #[test]
    fn every_schema_compiles_and_the_ones_panels_draw_are_there() {
        let all: Vec<&str> = names().collect();
        assert!(all.len() >= 40, "{all:?}");
        for n in [
            "foxglove.SceneUpdate",
            "foxglove.FrameTransforms",
            "foxglove.RawImage",
            "foxglove.CompressedImage",
            "foxglove.ImageAnnotations",
            "foxglove.LocationFix",
            "foxglove.PointCloud",
            "foxglove.PosesInFrame",
            "foxglove.Log",
        ] {
            assert!(all.contains(&n), "{n}");
        }
        for n in all {
            json::compile(schema(n).unwrap(), n).unwrap();
        }
    }

    /// A table written as JSON decodes (bagscope's JSON decoder, over the same schema) to its
    /// values: times from seconds and from a ROS 2 stamp, bytes from a Lua string, enums.
    #[test]
    fn a_table_written_as_json_decodes_to_its_values() {
        let lua = Lua::new();
        for (ty, code, want) in [
            (
                "foxglove.FrameTransform",
                "return { timestamp = 12.25, parent_frame_id = 'map', child_frame_id = 'base', translation = { x = 1, y = -2.5 }, rotation = { w = 1 } }",
                serde_json::json!({"timestamp": {"sec": 12, "nsec": 250_000_000}, "parent_frame_id": "map", "child_frame_id": "base",
                    "translation": {"x": 1.0, "y": -2.5}, "rotation": {"w": 1.0}}),
            ),
            (
                "foxglove.RawImage",
                "return { timestamp = { sec = 3, nanosec = 9 }, width = 2, height = 1, encoding = 'mono8', step = 2, data = '\\1\\255' }",
                serde_json::json!({"timestamp": {"sec": 3, "nsec": 9}, "width": 2, "height": 1, "encoding": "mono8", "step": 2, "data": "Af8="}),
            ),
            (
                "foxglove.SceneUpdate",
                "return { entities = { { id = 'a', frame_id = 'map', cubes = { { pose = { position = { x = 1 } }, size = { x = 1, y = 1, z = 1 }, color = { r = 1, a = 1 } } } } } }",
                serde_json::json!({"entities": [{"id": "a", "frame_id": "map", "cubes": [{"pose": {"position": {"x": 1.0}},
                    "size": {"x": 1.0, "y": 1.0, "z": 1.0}, "color": {"r": 1.0, "a": 1.0}}]}]}),
            ),
        ] {
            let d = def(ty);
            let t: Table = lua.load(code).eval().unwrap();
            let bytes = encode_json(&d, &t).unwrap();
            let got: J = serde_json::from_slice(&bytes).unwrap();
            assert_eq!(got, want, "{ty}");
            // bagscope's JSON reader takes it back.
            json::decode(&d, &bytes).unwrap();
        }
    }

    #[test]
    fn what_does_not_fit_the_schema_names_the_field() {
        let lua = Lua::new();
        let d = def("foxglove.SceneUpdate");
        for (code, want) in [
            (
                "return { entities = { { cubes = { { pose = { place = {} } } } } } }",
                "entities[1].cubes[1].pose.place",
            ),
            (
                "return { entities = { { id = {} } } }",
                "entities[1].id: a table where a string goes",
            ),
            (
                "return { entities = 3 }",
                "entities: a integer where an array goes",
            ),
            (
                "return { entities = { { lifetime = 'long' } } }",
                "entities[1].lifetime: a string where a message goes",
            ),
            (
                "return { entities = { { arrows = { { shaft_length = 0/0 } } } } }",
                "entities[1].arrows[1].shaft_length: NaN",
            ),
        ] {
            let t: Table = lua.load(code).eval().unwrap();
            let e = encode_json(&d, &t).unwrap_err();
            assert!(e.contains(want), "{code}: {e}");
        }
    }
}
