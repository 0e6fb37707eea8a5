//! Log messages (`rosgraph_msgs/Log` of ROS 1, `rcl_interfaces/msg/Log` of ROS 2) read over a
//! whole recording, for the app's log panel and `bagscope log`.

use std::fmt;
use std::ops::ControlFlow;
use std::sync::atomic::AtomicBool;

use bagscope_reader::definition::msg::MsgDef;
use bagscope_reader::encoding::{Node, Value};
use bagscope_reader::{Bag, Error, Result};

/// A log message's severity, the same for ROS 1 (1, 2, 4, 8, 16) and ROS 2 (10 … 50).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// Debug.
    Debug,
    /// Info.
    Info,
    /// Warn.
    Warn,
    /// Error.
    Error,
    /// Fatal.
    Fatal,
    /// A value neither ROS uses.
    Other(u8),
}

impl Level {
    /// From the `level` field.
    pub fn from_raw(v: u8) -> Level {
        match v {
            1 | 10 => Level::Debug,
            2 | 20 => Level::Info,
            4 | 30 => Level::Warn,
            8 | 40 => Level::Error,
            16 | 50 => Level::Fatal,
            o => Level::Other(o),
        }
    }

    /// The five named levels, lowest first.
    pub const ALL: [Level; 5] = [
        Level::Debug,
        Level::Info,
        Level::Warn,
        Level::Error,
        Level::Fatal,
    ];

    /// Parses `debug`, `info`, `warn`, `error`, `fatal` (any case).
    pub fn parse(s: &str) -> Option<Level> {
        Some(match s.to_ascii_lowercase().as_str() {
            "debug" => Level::Debug,
            "info" => Level::Info,
            "warn" | "warning" => Level::Warn,
            "error" => Level::Error,
            "fatal" => Level::Fatal,
            _ => return None,
        })
    }

    /// Rank for "at least this severe" filters (unknown values rank with info).
    pub fn rank(self) -> u8 {
        match self {
            Level::Debug => 0,
            Level::Info | Level::Other(_) => 1,
            Level::Warn => 2,
            Level::Error => 3,
            Level::Fatal => 4,
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Level::Debug => f.write_str("DEBUG"),
            Level::Info => f.write_str("INFO"),
            Level::Warn => f.write_str("WARN"),
            Level::Error => f.write_str("ERROR"),
            Level::Fatal => f.write_str("FATAL"),
            Level::Other(v) => write!(f, "LEVEL{v}"),
        }
    }
}

/// One log message.
#[derive(Debug, Clone, PartialEq)]
pub struct LogLine {
    /// When it was recorded (ns).
    pub time_ns: u64,
    /// Its own stamp (`header.stamp` or `stamp`), ns.
    pub stamp_ns: Option<u64>,
    /// The log topic it came from (index into the summary's topics).
    pub topic: usize,
    /// Severity.
    pub level: Level,
    /// The node that logged it.
    pub node: String,
    /// The text.
    pub msg: String,
    /// Source file, function and line.
    pub file: String,
    /// Function.
    pub function: String,
    /// Line.
    pub line: u32,
}

/// Whether a type is a log message.
pub fn is_log_type(datatype: &str) -> bool {
    matches!(
        datatype,
        "rosgraph_msgs/Log" | "rcl_interfaces/msg/Log" | "rcl_interfaces/Log"
    )
}

/// A `time` or a `builtin_interfaces/Time` node as ns.
fn stamp_of(def: &MsgDef, n: &Node) -> Option<u64> {
    match &n.value {
        Value::Time { sec, nsec } => Some(u64::from(*sec) * 1_000_000_000 + u64::from(*nsec)),
        Value::Message { .. } => {
            let sec = match &n.field(def, "sec")?.value {
                Value::I32(s) => u64::try_from(*s).ok()?,
                Value::U32(s) => u64::from(*s),
                _ => return None,
            };
            let nsec = match &n
                .field(def, "nanosec")
                .or_else(|| n.field(def, "nsec"))?
                .value
            {
                Value::U32(v) => u64::from(*v),
                Value::I32(v) => u64::try_from(*v).ok()?,
                _ => return None,
            };
            Some(sec * 1_000_000_000 + nsec)
        }
        _ => None,
    }
}

/// The fields of a decoded log message (`None` if it is not one).
pub fn from_node(def: &MsgDef, node: &Node, time_ns: u64, topic: usize) -> Option<LogLine> {
    let text = |n: &str| match node.field_value(def, n) {
        Some(Value::String(s)) => String::from_utf8_lossy(s).into_owned(),
        _ => String::new(),
    };
    let level = match node.field_value(def, "level")? {
        Value::U8(v) => *v,
        Value::I8(v) => *v as u8,
        _ => return None,
    };
    // ROS 1: header.stamp; ROS 2: stamp.
    let stamp_ns = node
        .field(def, "header")
        .and_then(|h| h.field(def, "stamp"))
        .or_else(|| node.field(def, "stamp"))
        .and_then(|n| stamp_of(def, n));
    Some(LogLine {
        time_ns,
        stamp_ns,
        topic,
        level: Level::from_raw(level),
        node: text("name"),
        msg: text("msg"),
        file: text("file"),
        function: text("function"),
        line: match node.field_value(def, "line") {
            Some(Value::U32(l)) => *l,
            _ => 0,
        },
    })
}

/// The log topics of a recording worth reading: every log topic, but `/rosout_agg` only when
/// there is no `/rosout` (it repeats it).
pub fn log_topics(bag: &Bag) -> Vec<usize> {
    let s = bag.summary();
    let all: Vec<usize> = (0..s.topics.len())
        .filter(|&t| is_log_type(&s.topics[t].datatype))
        .collect();
    let has_rosout = all.iter().any(|&t| s.topics[t].name == "/rosout");
    all.into_iter()
        .filter(|&t| !(has_rosout && s.topics[t].name == "/rosout_agg"))
        .collect()
}

/// Reads every log message of `topics` in time order, handing them over in batches; stops
/// early when `on_batch` returns `false` or `cancel` is set. Messages that do not decode are
/// counted, not fatal: returns how many.
pub fn read_logs(
    bag: &Bag,
    topics: &[usize],
    cancel: &AtomicBool,
    on_batch: &mut dyn FnMut(Vec<LogLine>) -> bool,
) -> Result<u64> {
    let s = bag.summary();
    let mut conns = Vec::new();
    let mut topic_of = vec![usize::MAX; s.connections.len()];
    for &t in topics {
        for &c in &s
            .topics
            .get(t)
            .ok_or_else(|| Error::NotFound(format!("topic {t}")))?
            .connections
        {
            conns.push(c);
            if let Some(x) = topic_of.get_mut(c) {
                *x = t;
            }
        }
    }
    if conns.is_empty() {
        return Ok(0);
    }
    let mut batch = Vec::new();
    let mut bad = 0u64;
    crate::decoded::each_decoded(bag, conns, cancel, |m, decoded| {
        let line = decoded.and_then(|(p, n)| from_node(&p.def, n, m.time_ns, topic_of[m.conn]));
        match line {
            Some(l) => batch.push(l),
            None => bad += 1,
        }
        if batch.len() >= 4096 && !on_batch(std::mem::take(&mut batch)) {
            return Ok(ControlFlow::Break(()));
        }
        Ok(ControlFlow::Continue(()))
    })?;
    if !batch.is_empty() {
        on_batch(batch);
    }
    Ok(bad)
}
