//! A field as a state over time (a mode, a state machine's state, a flag): the runs of equal
//! values of a string, boolean or integer field, each integer named by the constant of its
//! definition that has its value (`uint8 MODE_AUTO=2` shows `MODE_AUTO`), for the timeline's
//! state rows.

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::atomic::AtomicBool;

use bagscope_reader::definition::msg::{FieldType, MsgDef};
use bagscope_reader::encoding::{FieldPath, Node, Segment, Value};
use bagscope_reader::{Bag, Error, Result};

/// Distinct values a state takes at most (more: it is a signal to plot, not a state).
pub const MAX_STATES: usize = 256;

/// Equal values in a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StateRun {
    /// The first message's receive time (ns).
    pub start_ns: u64,
    /// The last one's.
    pub last_ns: u64,
    /// Index into [`StateTrack::labels`].
    pub value: u32,
}

/// A field's states over the recording.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StateTrack {
    /// The bands, in time order.
    pub runs: Vec<StateRun>,
    /// Each distinct value's label, in order of first appearance.
    pub labels: Vec<String>,
    /// What did not read (connections without the path, ...).
    pub problems: Vec<String>,
}

impl StateTrack {
    /// The run in force at `t` (the last starting at or before it).
    pub fn at(&self, t: u64) -> Option<&StateRun> {
        let i = self.runs.partition_point(|r| r.start_ns <= t);
        self.runs.get(i.checked_sub(1)?)
    }
}

/// The type (index into `def.types`) holding the field `path` ends on.
fn owner(def: &MsgDef, path: &FieldPath) -> Option<usize> {
    let mut ty = 0usize;
    let fields: Vec<&str> = path
        .segments
        .iter()
        .filter_map(|s| match s {
            Segment::Field(n) => Some(n.as_str()),
            Segment::Index(_) => None,
        })
        .collect();
    let (_, parents) = fields.split_last()?;
    for name in parents {
        let f = def.types.get(ty)?.fields.iter().find(|f| f.name == *name)?;
        match f.ty {
            FieldType::Message(i) => ty = i,
            FieldType::Primitive(_) => return None,
        }
    }
    Some(ty)
}

/// The value at `segments` of a decoded message (an element of a numeric array read out of
/// its bytes).
fn walk(def: &MsgDef, mut n: &Node, segments: &[Segment]) -> Option<Value> {
    for (k, s) in segments.iter().enumerate() {
        n = match s {
            Segment::Field(name) => n.field(def, name)?,
            Segment::Index(i) => {
                let len = n.value.len()?;
                let at = if *i < 0 {
                    len.checked_sub(i.unsigned_abs() as usize)?
                } else {
                    *i as usize
                };
                match &n.value {
                    Value::Array(v) => v.get(at)?,
                    // Bytes or numbers: the element is a leaf.
                    other => {
                        return (k + 1 == segments.len())
                            .then(|| other.element(at).map(|(v, _)| v))
                            .flatten()
                    }
                }
            }
        };
    }
    Some(n.value.clone())
}

/// How a value is shown: text as it is, booleans, numbers by the constant with their value.
fn label(v: &Value, def: Option<(&MsgDef, usize)>) -> Option<String> {
    let named = |x: Option<f64>, text: Option<&[u8]>| {
        def.and_then(|(d, o)| {
            d.types
                .get(o)?
                .constants_matching(x, text)
                .first()
                .map(|c| c.name.clone())
        })
    };
    Some(match v {
        Value::String(s) => String::from_utf8_lossy(s).into_owned(),
        Value::Bool(b) => b.to_string(),
        Value::F32(_) | Value::F64(_) | Value::Array(_) | Value::Message { .. } => return None,
        _ => {
            let x = v.as_f64()?;
            named(Some(x), None).unwrap_or_else(|| format!("{x}"))
        }
    })
}

/// The states `path` (`/robot/mode.data`) takes over the recording, at each message's receive
/// time or (`header_time`) at its `header.stamp` (messages without one left out and counted in
/// the track's problems; a topic with none is an error).
pub fn state_track(
    bag: &Bag,
    path: &str,
    header_time: bool,
    cancel: &AtomicBool,
) -> Result<StateTrack> {
    let p = FieldPath::parse(path).map_err(|e| Error::Invalid(format!("{path}: {}", e.reason)))?;
    let topic = bag
        .summary()
        .topic(&p.topic)
        .ok_or_else(|| Error::NotFound(format!("no topic {:?}", p.topic)))?;
    let plan = topic
        .connections
        .first()
        .and_then(|&c| bag.plan(c).ok())
        .map(|(plan, _)| plan);
    let def = plan.as_ref().map(|pl| &pl.def);
    let own = def.and_then(|d| owner(d, &p).map(|o| (d, o)));
    // Each connection's stamp reader, where the stamps are asked for.
    let mut stamps: HashMap<usize, crate::reports::timing::StampReader> = HashMap::new();
    if header_time {
        for &c in &topic.connections {
            if let Ok(r) = bag.plan(c).map_err(Error::from).and_then(|(pl, _)| {
                crate::reports::timing::StampReader::new(&pl).map_err(Error::from)
            }) {
                stamps.insert(c, r);
            }
        }
        if stamps.is_empty() {
            return Err(Error::Invalid(format!(
                "{}: its messages have no header.stamp to draw the states at",
                p.topic
            )));
        }
    }
    let mut t = StateTrack::default();
    let mut index: HashMap<String, u32> = HashMap::new();
    let (mut missing, mut unstamped) = (0u64, 0u64);
    // (time, value) of every message, in receive order.
    let mut seen: Vec<(u64, u32)> = Vec::new();
    // Each message decoded (state topics are slow; a string needs its message decoded).
    crate::decoded::each_decoded(bag, topic.connections.clone(), cancel, |m, decoded| {
        let Some(v) = decoded.and_then(|(plan, node)| walk(&plan.def, node, &p.segments)) else {
            missing += 1;
            return Ok(ControlFlow::Continue(()));
        };
        let time = if header_time {
            match stamps.get(&m.conn).and_then(|r| r.read(&m.data)) {
                Some(s) if s >= 0 => u64::try_from(s).unwrap_or(u64::MAX),
                _ => {
                    unstamped += 1;
                    return Ok(ControlFlow::Continue(()));
                }
            }
        } else {
            m.time_ns
        };
        let Some(l) = label(&v, own) else {
            return Err(Error::Invalid(format!(
                "{path} is not a text, boolean or integer field: plot it rather than draw it as states"
            )));
        };
        let v = match index.get(&l) {
            Some(&v) => v,
            None => {
                if t.labels.len() >= MAX_STATES {
                    return Err(Error::Invalid(format!(
                        "{path} takes more than {MAX_STATES} values: plot it rather than draw it as states"
                    )));
                }
                t.labels.push(l.clone());
                index.insert(l, t.labels.len() as u32 - 1);
                t.labels.len() as u32 - 1
            }
        };
        seen.push((time, v));
        Ok(ControlFlow::Continue(()))
    })?;
    // Stamps need not come in receive order.
    if header_time {
        seen.sort_by_key(|&(time, _)| time);
    }
    for (time, v) in seen {
        match t.runs.last_mut() {
            Some(r) if r.value == v && time >= r.last_ns => r.last_ns = time,
            _ => t.runs.push(StateRun {
                start_ns: time,
                last_ns: time,
                value: v,
            }),
        }
    }
    if missing > 0 {
        t.problems
            .push(format!("{missing} messages without {path}"));
    }
    if unstamped > 0 {
        t.problems.push(format!(
            "{unstamped} messages without a header stamp left out"
        ));
    }
    if t.runs.is_empty() && (missing > 0 || unstamped > 0) {
        return Err(Error::Invalid(format!("no message has {path}")));
    }
    Ok(t)
}
