//! Message scripts: a Lua function of the messages of one or more input topics, in time order,
//! that returns a message of a declared type (any ROS 2 type bagscope knows, or of the search
//! path, or one of Foxglove's schemas, `foxglove.SceneUpdate` and the others, written as JSON:
//! [`super::foxglove`]) or `nil`: the messages of a **virtual topic**. Its messages are written, with their
//! definition, to an MCAP file beside the recording's own (the *overlay*) that the recording is
//! opened with ([`write_overlay`]): every reader of topics sees the virtual topic as a real one.
//!
//! A message script file:
//!
//! ```lua
//! -- topic: /odom_marker
//! -- type: visualization_msgs/msg/MarkerArray
//! -- input: /odom
//! function message(topic, msg, time)
//!   local p = msg.pose.pose.position
//!   return { markers = { { header = msg.header, type = 2, action = 0,
//!     pose = { position = p, orientation = { w = 1 } },
//!     scale = { x = 0.3, y = 0.3, z = 0.3 }, color = { r = 1, a = 1 } } } }
//! end
//! ```

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use bagscope_reader::definition::msg::{Dialect as MsgDialect, MsgDef};
use bagscope_reader::definition::sources;
use bagscope_reader::storage::mcap::writer::{McapOptions, McapWriter};
use bagscope_reader::Bag;
use mlua::{Function, Value};

use super::sandbox::{Limits, Sandbox};
use super::{Part, ScriptError, ScriptErrorKind};
use crate::open::OpenError;

/// A message script.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
pub struct MessageScript {
    /// The virtual topic it makes.
    pub topic: String,
    /// Its messages' type (`visualization_msgs/msg/MarkerArray`).
    #[cfg_attr(feature = "serde", serde(rename = "type"))]
    pub output_type: String,
    /// The topics whose messages it is given, in time order.
    pub inputs: Vec<String>,
    /// Lua run once, defining `message(topic, msg, time)`.
    pub code: String,
}

impl MessageScript {
    /// Its name in errors: its topic.
    pub fn name(&self) -> &str {
        &self.topic
    }
}

/// Whether `text` is a message script file (its header declares `-- type:`).
pub fn is_message_file(text: &str) -> bool {
    header(text).any(|(k, _)| k == "type")
}

/// The `-- key: value` lines of a file's header.
fn header(text: &str) -> impl Iterator<Item = (String, String)> + '_ {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take_while(|l| l.starts_with("--"))
        .filter_map(|l| {
            let (k, v) = l.trim_start_matches('-').split_once(':')?;
            Some((k.trim().to_string(), v.trim().to_string()))
        })
}

/// Reads a message script file: `-- topic:`, `-- type:`, `-- input:` (repeatable, or several
/// separated by commas), then the Lua that defines `message`.
pub fn read_file(text: &str) -> Result<MessageScript, String> {
    let mut s = MessageScript {
        code: text.to_string(),
        ..Default::default()
    };
    for (k, v) in header(text) {
        match k.as_str() {
            "topic" => s.topic = v,
            "type" => s.output_type = v,
            "input" | "inputs" => s.inputs.extend(
                v.split(',')
                    .map(|t| t.trim().to_string())
                    .filter(|t| !t.is_empty()),
            ),
            _ => {}
        }
    }
    if s.topic.is_empty() {
        return Err("names no topic: add `-- topic: /virtual/name`".into());
    }
    if s.inputs.is_empty() {
        return Err(format!(
            "{}: names no input: add `-- input: /topic`",
            s.topic
        ));
    }
    Ok(s)
}

/// A virtual topic's declared type: what its messages are written as.
#[derive(Debug, Clone)]
pub struct Output {
    /// `pkg/msg/Type`, or `foxglove.Name`.
    pub datatype: String,
    /// Its definition: ROS 2 `.msg` text with its dependencies, or a JSON Schema.
    pub definition: String,
    /// The definition parsed.
    pub def: MsgDef,
    /// Written as JSON (a Foxglove schema), else as CDR.
    pub json: bool,
}

impl Output {
    /// The table a script returned as a message of this type.
    pub fn encode(&self, t: &mlua::Table) -> Result<Vec<u8>, String> {
        if self.json {
            super::foxglove::encode_json(&self.def, t)
        } else {
            super::encode::encode_cdr(&self.def, t)
        }
    }

    /// The MCAP schema and message encodings of its messages.
    pub fn encodings(&self) -> (&'static str, &'static str) {
        if self.json {
            ("jsonschema", "json")
        } else {
            ("ros2msg", "cdr")
        }
    }
}

/// The declared type's definition: a Foxglove schema (`foxglove.SceneUpdate`), else a ROS 2
/// type (named `pkg/msg/Type`).
pub fn output_definition(ty: &str, msg_path: &[PathBuf]) -> Result<Output, String> {
    if let Some(schema) = super::foxglove::schema(ty) {
        let name = ty.trim().to_string();
        let def =
            bagscope_reader::encoding::json::compile(schema, &name).map_err(|e| e.to_string())?;
        return Ok(Output {
            datatype: name,
            definition: schema.to_string(),
            def,
            json: true,
        });
    }
    let (text, _) = sources::lookup(ty, MsgDialect::Ros2, msg_path).ok_or_else(|| {
        if ty.trim().starts_with("foxglove.") {
            format!("{ty:?}: not one of Foxglove's schemas (foxglove.SceneUpdate, foxglove.RawImage, ...; docs/scripts.md lists them)")
        } else {
            format!("{ty:?}: a type bagscope does not know (a ROS 2 message type, one on the message search path, or a foxglove.* schema)")
        }
    })?;
    let name = match ty.split('/').collect::<Vec<_>>()[..] {
        [pkg, t] => format!("{pkg}/msg/{t}"),
        _ => ty.to_string(),
    };
    let def = MsgDef::parse_dialect(&name, &text, MsgDialect::Ros2).map_err(|e| e.to_string())?;
    Ok(Output {
        datatype: name,
        definition: text,
        def,
        json: false,
    })
}

/// What a message script made.
#[derive(Debug, Clone, Default)]
pub struct Virtual {
    /// The topic.
    pub topic: String,
    /// `pkg/msg/Type`, or `foxglove.Name`.
    pub datatype: String,
    /// Its definition (ROS 2 `.msg` text with its dependencies, or a JSON Schema).
    pub definition: String,
    /// Its messages' MCAP schema and message encodings (`ros2msg` and `cdr`, or `jsonschema`
    /// and `json`; empty: the first).
    pub encodings: (String, String),
    /// Its messages: receive time (the input message's) and their bytes (CDR or JSON).
    pub messages: Vec<(u64, Vec<u8>)>,
    /// What the script printed.
    pub printed: Vec<String>,
}

impl Virtual {
    /// An empty virtual topic of type `output`.
    fn of(topic: &str, output: &Output) -> Virtual {
        let (s, m) = output.encodings();
        Virtual {
            topic: topic.to_string(),
            datatype: output.datatype.clone(),
            definition: output.definition.clone(),
            encodings: (s.to_string(), m.to_string()),
            ..Default::default()
        }
    }
}

fn err(s: &MessageScript, kind: ScriptErrorKind, m: String) -> ScriptError {
    ScriptError::script(s.name(), kind, m)
}

/// What is wrong with `s` over `bag` before any work: an input topic it lacks, an output type
/// bagscope does not know, Lua that does not parse. Else the output type.
pub fn check(bag: &Bag, s: &MessageScript) -> Result<Output, ScriptError> {
    for t in &s.inputs {
        if bag.quick_summary().topic(t).is_none() {
            return Err(err(
                s,
                ScriptErrorKind::Source,
                format!("no input topic {t:?} in the recording"),
            ));
        }
    }
    let out = output_definition(&s.output_type, &bag.options().msg_path)
        .map_err(|m| err(s, ScriptErrorKind::Source, m))?;
    mlua::Lua::new()
        .load(&s.code)
        .set_name("=global")
        .into_function()
        .map_err(|e| super::series::lua_error(s.name(), Part::Global, &e, 0))?;
    Ok(out)
}

/// Runs `s` over `bag`'s messages of its inputs, in time order.
pub fn run(
    bag: &Bag,
    s: &MessageScript,
    limits: Limits,
    cancel: &AtomicBool,
) -> crate::Result<Result<Virtual, ScriptError>> {
    let output = match check(bag, s) {
        Ok(d) => d,
        Err(e) => return Ok(Err(e)),
    };
    let name = s.name();
    let sb = match Sandbox::new(limits) {
        Ok(sb) => sb,
        Err(e) => return Ok(Err(super::series::lua_error(name, Part::Script, &e, 0))),
    };
    let lua = &sb.lua;
    sb.start_call();
    if let Err(e) = lua.load(&s.code).set_name("=global").exec() {
        return Ok(Err(super::series::lua_error(name, Part::Global, &e, 0)));
    }
    let f: Function = match lua.globals().get::<Value>("message") {
        Ok(Value::Function(f)) => f,
        _ => {
            return Ok(Err(err(
                s,
                ScriptErrorKind::Syntax,
                "defines no function message(topic, msg, time)".into(),
            )))
        }
    };
    let summary = bag.summary();
    let conns: Vec<usize> = s
        .inputs
        .iter()
        .filter_map(|t| summary.topic(t))
        .flat_map(|t| t.connections.iter().copied())
        .collect();
    let mut out = Virtual::of(&s.topic, &output);
    let mut failed: Option<ScriptError> = None;
    let mut k = 0u64;
    crate::decoded::each_decoded(bag, conns, cancel, |m, decoded| {
        let n = k;
        k += 1;
        let at = |mut e: ScriptError| {
            e.time_ns = Some(m.time_ns);
            e.sample = Some(n);
            e
        };
        let Some((plan, node)) = decoded else {
            return Ok(ControlFlow::Continue(()));
        };
        let topic = &summary.connections[m.conn].topic;
        let msg = match super::encode::message_to_lua(lua, &plan.def, node) {
            Ok(v) => v,
            Err(e) => {
                failed = Some(at(super::series::lua_error(name, Part::Function, &e, 0)));
                return Ok(ControlFlow::Break(()));
            }
        };
        sb.start_call();
        let r: mlua::Result<Value> = f.call((topic.as_str(), msg, m.time_ns as f64 / 1e9));
        match r {
            Ok(Value::Nil) => {}
            Ok(Value::Table(t)) => match output.encode(&t) {
                Ok(b) => out.messages.push((m.time_ns, b)),
                Err(e) => {
                    failed = Some(at(ScriptError {
                        script: name.to_string(),
                        kind: ScriptErrorKind::Return,
                        part: Part::Global,
                        line: None,
                        time_ns: None,
                        sample: None,
                        message: format!("returned a table that is not a {}: {e}", s.output_type),
                    }));
                    return Ok(ControlFlow::Break(()));
                }
            },
            Ok(other) => {
                failed = Some(at(err(
                    s,
                    ScriptErrorKind::Return,
                    format!(
                        "returned a {}: return a table shaped as {} or nil",
                        other.type_name(),
                        s.output_type
                    ),
                )));
                return Ok(ControlFlow::Break(()));
            }
            Err(e) => {
                failed = Some(at(super::series::lua_error(name, Part::Global, &e, 0)));
                return Ok(ControlFlow::Break(()));
            }
        }
        Ok(ControlFlow::Continue(()))
    })?;
    if let Some(e) = failed {
        return Ok(Err(e));
    }
    out.printed = sb.printed();
    Ok(Ok(out))
}

/// Runs `scripts` over `bag` and writes their virtual topics to an MCAP file at `path` (a
/// recording of its own, opened beside `bag`'s). Returns each script's error, if any (a script
/// that fails writes no topic), and what the scripts printed.
pub fn write_overlay(
    bag: &Bag,
    scripts: &[MessageScript],
    path: &Path,
    limits: Limits,
    cancel: &AtomicBool,
) -> crate::Result<(Vec<ScriptError>, Vec<String>)> {
    let (mut errors, mut printed, mut made) = (Vec::new(), Vec::new(), Vec::new());
    for s in scripts {
        match run(bag, s, limits, cancel)? {
            Ok(mut v) => {
                printed.extend(v.printed.drain(..).map(|p| format!("{}: {p}", v.topic)));
                made.push(v);
            }
            Err(e) => errors.push(e),
        }
    }
    write_virtuals(path, &made)?;
    Ok((errors, printed))
}

/// Writes virtual topics to an MCAP file at `path`, their messages in time order.
pub fn write_virtuals(path: &Path, topics: &[Virtual]) -> crate::Result<()> {
    let mut w = McapWriter::create(
        path,
        McapOptions {
            profile: "ros2".into(),
            ..McapOptions::default()
        },
    )?;
    let mut all: Vec<(u64, u16, &[u8])> = Vec::new();
    for v in topics {
        let (schema_enc, msg_enc) = match (v.encodings.0.as_str(), v.encodings.1.as_str()) {
            ("", _) | (_, "") => ("ros2msg", "cdr"),
            (s, m) => (s, m),
        };
        let schema = w.add_schema(&v.datatype, schema_enc, v.definition.as_bytes())?;
        let ch = w.add_channel(schema, &v.topic, msg_enc, &[])?;
        all.extend(v.messages.iter().map(|(t, b)| (*t, ch, b.as_slice())));
    }
    all.sort_by_key(|m| m.0);
    for (seq, (t, ch, b)) in all.into_iter().enumerate() {
        w.write(ch, seq as u32, t, t, b)?;
    }
    w.finish()?;
    Ok(())
}

/// `path` opened with the overlay `overlay` beside it, topic names kept.
pub fn open_beside(
    path: &Path,
    overlay: &Path,
    opts: &bagscope_reader::OpenOptions,
) -> bagscope_reader::Result<Bag> {
    let part = |p: &Path| bagscope_reader::bag::merge::Part {
        path: p.to_path_buf(),
        offset_ns: 0,
    };
    Bag::open_many_with(
        &[part(path), part(overlay)],
        bagscope_reader::bag::merge::TopicNames::Overlaid,
        opts,
    )
}

/// A virtual topic made by a function rather than a script (the Python package's
/// `Recording.with_virtual`): `f(topic, msg, time_ns)` is given each message of `inputs` in time
/// order, decoded, and returns the message of `output_type` as JSON-shaped data (objects,
/// arrays, numbers, strings; written as a script's table is) or `None`.
#[allow(clippy::type_complexity)]
pub fn make_virtual(
    bag: &Bag,
    topic: &str,
    output_type: &str,
    inputs: &[String],
    cancel: &AtomicBool,
    f: &mut dyn FnMut(
        &str,
        &MsgDef,
        &bagscope_reader::encoding::Node,
        u64,
    ) -> Result<Option<serde_json::Value>, String>,
) -> crate::Result<Result<Virtual, String>> {
    let summary = bag.summary();
    for t in inputs {
        if summary.topic(t).is_none() {
            return Ok(Err(format!("no input topic {t:?} in the recording")));
        }
    }
    let output = match output_definition(output_type, &bag.options().msg_path) {
        Ok(x) => x,
        Err(m) => return Ok(Err(m)),
    };
    let conns: Vec<usize> = inputs
        .iter()
        .filter_map(|t| summary.topic(t))
        .flat_map(|t| t.connections.iter().copied())
        .collect();
    let lua = mlua::Lua::new();
    let mut out = Virtual::of(topic, &output);
    let mut failed = None;
    let mut k = 0u64;
    crate::decoded::each_decoded(bag, conns, cancel, |m, decoded| {
        let n = k;
        k += 1;
        let Some((plan, node)) = decoded else {
            return Ok(ControlFlow::Continue(()));
        };
        let at = |e: String| {
            format!(
                "{topic}, at {} (message {n}): {e}",
                crate::timefmt::secs(m.time_ns)
            )
        };
        let input = &summary.connections[m.conn].topic;
        let made = f(input, &plan.def, node, m.time_ns).and_then(|v| match v {
            None => Ok(None),
            Some(v) => match json_to_lua(&lua, &v).map_err(|e| e.to_string())? {
                Value::Table(t) => output
                    .encode(&t)
                    .map(Some)
                    .map_err(|e| format!("not a {output_type}: {e}")),
                _ => Err(format!("returned a {} where a message goes", kind_of(&v))),
            },
        });
        match made {
            Ok(Some(b)) => out.messages.push((m.time_ns, b)),
            Ok(None) => {}
            Err(e) => {
                failed = Some(at(e));
                return Ok(ControlFlow::Break(()));
            }
        }
        Ok(ControlFlow::Continue(()))
    })?;
    Ok(match failed {
        Some(e) => Err(e),
        None => Ok(out),
    })
}

fn kind_of(v: &serde_json::Value) -> &'static str {
    match v {
        serde_json::Value::Null => "None",
        serde_json::Value::Bool(_) => "bool",
        serde_json::Value::Number(_) => "number",
        serde_json::Value::String(_) => "string",
        serde_json::Value::Array(_) => "list",
        serde_json::Value::Object(_) => "dict",
    }
}

/// JSON-shaped data as a Lua value (objects as tables of fields, arrays as sequences).
fn json_to_lua(lua: &mlua::Lua, v: &serde_json::Value) -> mlua::Result<Value> {
    use serde_json::Value as J;
    Ok(match v {
        J::Null => Value::Nil,
        J::Bool(b) => Value::Boolean(*b),
        J::Number(n) => match n.as_i64() {
            Some(i) => Value::Integer(i),
            None => Value::Number(n.as_f64().unwrap_or(f64::NAN)),
        },
        J::String(s) => Value::String(lua.create_string(s)?),
        J::Array(items) => {
            let t = lua.create_table_with_capacity(items.len(), 0)?;
            for (i, x) in items.iter().enumerate() {
                t.raw_set(i + 1, json_to_lua(lua, x)?)?;
            }
            Value::Table(t)
        }
        J::Object(m) => {
            let t = lua.create_table()?;
            for (k, x) in m {
                t.raw_set(k.as_str(), json_to_lua(lua, x)?)?;
            }
            Value::Table(t)
        }
    })
}

/// `bag`, opened from `path`, with the virtual topics of `scripts`: their messages are made
/// once into an MCAP file under `cache` (named by the recording's path, size and time,
/// bagscope's version and the scripts: made again when any changes), opened beside the
/// recording with the topics' names kept. Returns the recording and what the scripts printed.
/// ([`crate::open::open`] is the open that calls this.)
pub fn with_scripts(
    bag: Bag,
    path: &Path,
    scripts: &[MessageScript],
    opts: &bagscope_reader::OpenOptions,
    cache: &Path,
    cancel: &AtomicBool,
) -> Result<(Bag, Vec<String>), OpenError> {
    if scripts.is_empty() {
        return Ok((bag, Vec::new()));
    }
    let wrong: Vec<ScriptError> = scripts
        .iter()
        .filter_map(|s| check(&bag, s).err())
        .collect();
    if !wrong.is_empty() {
        return Err(OpenError::Scripts(wrong));
    }
    let mut key = format!("{}\n{}\n", env!("CARGO_PKG_VERSION"), path.display());
    if let Ok(m) = std::fs::metadata(path) {
        key.push_str(&format!("{} {:?}\n", m.len(), m.modified().ok()));
    }
    for s in scripts {
        key.push_str(&format!("{s:?}\n"));
    }
    std::fs::create_dir_all(cache)?;
    let overlay = cache.join(format!("{:x}.mcap", md5::compute(key.as_bytes())));
    let mut printed = Vec::new();
    if !overlay.is_file() {
        let (errors, p) = write_overlay(&bag, scripts, &overlay, Limits::default(), cancel)?;
        if !errors.is_empty() {
            let _ = std::fs::remove_file(&overlay);
            return Err(OpenError::Scripts(errors));
        }
        printed = p;
    }
    // The recording as it is open (its tables built while the scripts ran), beside the overlay.
    let parts = [path, overlay.as_path()].map(|p| bagscope_reader::bag::merge::Part {
        path: p.to_path_buf(),
        offset_ns: 0,
    });
    let beside = Bag::open_with(&overlay, opts)?;
    let bag = Bag::join(
        vec![bag, beside],
        &parts,
        bagscope_reader::bag::merge::TopicNames::Overlaid,
        opts,
    )?;
    Ok((bag, printed))
}
