//! Diagnostics (`diagnostic_msgs/DiagnosticArray` of ROS 1 and ROS 2) read over a whole
//! recording: one track per status name with its level over time (OK, WARN, ERROR, STALE),
//! its message and key/values at any time, and counts per level, for the app's Diagnostics
//! panel and `bagscope info --freq`.
//!
//! Memory is bounded: consecutive statuses of a name with the same level, message and values
//! are one run; strings and value sets are stored once; past [`MAX_RUNS`] runs in all, a
//! status that keeps its level and message joins the run before it (its values are then those
//! of the run's first status, and [`Diagnostics::coarse`] says so).

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;

use bagscope_reader::definition::msg::MsgDef;
use bagscope_reader::encoding::{Node, Value};
use bagscope_reader::{Bag, Error, Result};

/// A status's level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DiagLevel {
    /// `OK` (0).
    Ok,
    /// `WARN` (1).
    Warn,
    /// `ERROR` (2).
    Error,
    /// `STALE` (3).
    Stale,
    /// A value the message does not define.
    Other(u8),
}

impl DiagLevel {
    /// Every level, from best to worst.
    pub const ALL: [DiagLevel; 4] = [
        DiagLevel::Ok,
        DiagLevel::Warn,
        DiagLevel::Error,
        DiagLevel::Stale,
    ];

    /// The level of a status's `level` byte (any other value kept as it is).
    pub fn from_raw(v: u8) -> DiagLevel {
        match v {
            0 => DiagLevel::Ok,
            1 => DiagLevel::Warn,
            2 => DiagLevel::Error,
            3 => DiagLevel::Stale,
            o => DiagLevel::Other(o),
        }
    }

    /// The level as ROS names it (`OK`, `WARN`, `ERROR`, `STALE`).
    pub fn name(self) -> &'static str {
        match self {
            DiagLevel::Ok => "OK",
            DiagLevel::Warn => "WARN",
            DiagLevel::Error => "ERROR",
            DiagLevel::Stale => "STALE",
            DiagLevel::Other(_) => "OTHER",
        }
    }

    /// Index into a count array of five: OK, WARN, ERROR, STALE, other.
    pub fn index(self) -> usize {
        match self {
            DiagLevel::Ok => 0,
            DiagLevel::Warn => 1,
            DiagLevel::Error => 2,
            DiagLevel::Stale => 3,
            DiagLevel::Other(_) => 4,
        }
    }
}

/// Runs kept in all, at most (about 32 bytes each).
pub const MAX_RUNS: usize = 4 << 20;

/// Statuses of one name in a row that are the same.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Run {
    /// The first status's receive time (ns).
    pub start_ns: u64,
    /// The last one's.
    pub last_ns: u64,
    /// Its level.
    pub level: DiagLevel,
    /// Index into [`Diagnostics::strings`].
    pub message: u32,
    /// Index into [`Diagnostics::value_sets`].
    pub values: u32,
    /// Statuses in it.
    pub count: u32,
}

/// One status name over the recording.
#[derive(Debug, Clone, Default)]
pub struct Track {
    /// The status's name.
    pub name: String,
    /// The status's hardware id.
    pub hardware_id: String,
    /// In time order.
    pub runs: Vec<Run>,
    /// Statuses per level: OK, WARN, ERROR, STALE, other.
    pub counts: [u64; 5],
}

impl Track {
    /// The worst level it reached (by the message's numbers: STALE, 3, above ERROR, 2), or
    /// none without statuses.
    pub fn worst(&self) -> Option<DiagLevel> {
        self.runs.iter().map(|r| r.level).max()
    }

    /// The run holding the status in force at `t`: the last one received at or before it.
    pub fn at(&self, t: u64) -> Option<&Run> {
        let i = self.runs.partition_point(|r| r.start_ns <= t);
        self.runs.get(i.checked_sub(1)?)
    }
}

/// Every diagnostic status of a recording's diagnostic topics.
#[derive(Debug, Clone, Default)]
pub struct Diagnostics {
    /// By name.
    pub tracks: Vec<Track>,
    /// Texts kept once (messages), indexed by the samples.
    pub strings: Vec<String>,
    /// Key-value lists kept once, indexed by the samples.
    pub value_sets: Vec<Vec<(String, String)>>,
    /// DiagnosticArray messages read.
    pub messages: u64,
    /// Messages that did not decode as one.
    pub bad: u64,
    /// Past [`MAX_RUNS`]: some statuses' values were not kept.
    pub coarse: bool,
}

impl Diagnostics {
    /// Statuses per level over every name.
    pub fn counts(&self) -> [u64; 5] {
        let mut c = [0; 5];
        for t in &self.tracks {
            for (a, b) in c.iter_mut().zip(t.counts) {
                *a += b;
            }
        }
        c
    }

    /// Text `i` of [`Self::strings`] (empty when there is none).
    pub fn string(&self, i: u32) -> &str {
        self.strings.get(i as usize).map_or("", String::as_str)
    }

    /// Key-value list `i` of [`Self::value_sets`] (empty when there is none).
    pub fn values(&self, i: u32) -> &[(String, String)] {
        self.value_sets.get(i as usize).map_or(&[], Vec::as_slice)
    }
}

/// Whether a type is a diagnostic array.
pub fn is_diagnostic_type(datatype: &str) -> bool {
    matches!(
        datatype,
        "diagnostic_msgs/DiagnosticArray" | "diagnostic_msgs/msg/DiagnosticArray"
    )
}

/// The diagnostic topics worth reading: every one, but `/diagnostics_agg` only when there is
/// no `/diagnostics` (it regroups the same statuses under paths).
pub fn diagnostic_topics(bag: &Bag) -> Vec<usize> {
    let s = bag.summary();
    let all: Vec<usize> = (0..s.topics.len())
        .filter(|&t| is_diagnostic_type(&s.topics[t].datatype))
        .collect();
    let plain = all.iter().any(|&t| s.topics[t].name == "/diagnostics");
    all.into_iter()
        .filter(|&t| !(plain && s.topics[t].name == "/diagnostics_agg"))
        .collect()
}

fn text(def: &MsgDef, n: &Node, name: &str) -> String {
    match n.field_value(def, name) {
        Some(Value::String(s)) => String::from_utf8_lossy(s).into_owned(),
        _ => String::new(),
    }
}

/// One status of a decoded array: (level, name, message, hardware_id, values).
type Status = (DiagLevel, String, String, String, Vec<(String, String)>);

/// The statuses of a decoded `DiagnosticArray` (`None` if it is not one).
pub fn statuses(def: &MsgDef, node: &Node) -> Option<Vec<Status>> {
    let Value::Array(list) = &node.field(def, "status")?.value else {
        return None;
    };
    let mut out = Vec::with_capacity(list.len());
    for s in list {
        let level = match s.field_value(def, "level")? {
            Value::U8(v) => *v,
            Value::I8(v) => *v as u8,
            _ => return None,
        };
        let values = match s.field(def, "values").map(|v| &v.value) {
            Some(Value::Array(kv)) => kv
                .iter()
                .map(|kv| (text(def, kv, "key"), text(def, kv, "value")))
                .collect(),
            _ => Vec::new(),
        };
        out.push((
            DiagLevel::from_raw(level),
            text(def, s, "name"),
            text(def, s, "message"),
            text(def, s, "hardware_id"),
            values,
        ));
    }
    Some(out)
}

/// Builds the tracks, storing each string and value set once.
#[derive(Default)]
struct Builder {
    d: Diagnostics,
    by_name: HashMap<String, usize>,
    strings: HashMap<String, u32>,
    sets: HashMap<Vec<(String, String)>, u32>,
    runs: usize,
}

impl Builder {
    fn string(&mut self, s: String) -> u32 {
        let n = self.d.strings.len() as u32;
        *self.strings.entry(s).or_insert_with_key(|s| {
            self.d.strings.push(s.clone());
            n
        })
    }

    fn set(&mut self, v: Vec<(String, String)>) -> u32 {
        let n = self.d.value_sets.len() as u32;
        *self.sets.entry(v).or_insert_with_key(|v| {
            self.d.value_sets.push(v.clone());
            n
        })
    }

    fn add(&mut self, t: u64, s: Status) {
        let (level, name, message, hw, values) = s;
        let ti = match self.by_name.get(&name) {
            Some(&i) => i,
            None => {
                self.d.tracks.push(Track {
                    name: name.clone(),
                    hardware_id: hw,
                    ..Track::default()
                });
                self.by_name.insert(name, self.d.tracks.len() - 1);
                self.d.tracks.len() - 1
            }
        };
        let message = self.string(message);
        let full = self.runs >= MAX_RUNS;
        let values = if full { u32::MAX } else { self.set(values) };
        let track = &mut self.d.tracks[ti];
        track.counts[level.index()] += 1;
        if let Some(last) = track.runs.last_mut() {
            let same =
                last.level == level && last.message == message && (last.values == values || full);
            // Statuses arrive in time order per name; one out of order starts its own run.
            if same && t >= last.last_ns {
                last.last_ns = t;
                last.count = last.count.saturating_add(1);
                return;
            }
        }
        if full {
            self.d.coarse = true;
        }
        track.runs.push(Run {
            start_ns: t,
            last_ns: t,
            level,
            message,
            values,
            count: 1,
        });
        self.runs += 1;
    }
}

/// Reads every status of `topics` (diagnostic topics) in time order. Messages that do not
/// decode are counted, not fatal. Setting `cancel` stops it.
pub fn read_diagnostics(bag: &Bag, topics: &[usize], cancel: &AtomicBool) -> Result<Diagnostics> {
    let s = bag.summary();
    let mut conns = Vec::new();
    for &t in topics {
        let topic = s
            .topics
            .get(t)
            .ok_or_else(|| Error::NotFound(format!("topic {t}")))?;
        conns.extend(topic.connections.iter().copied());
    }
    let mut b = Builder::default();
    if conns.is_empty() {
        return Ok(b.d);
    }
    crate::decoded::each_decoded(bag, conns, cancel, |m, decoded| {
        match decoded.and_then(|(p, n)| statuses(&p.def, n)) {
            Some(list) => {
                b.d.messages += 1;
                for st in list {
                    b.add(m.time_ns, st);
                }
            }
            None => b.d.bad += 1,
        }
        Ok(std::ops::ControlFlow::Continue(()))
    })?;
    b.d.tracks.sort_by(|x, y| x.name.cmp(&y.name));
    Ok(b.d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn st(level: u8, name: &str, msg: &str, v: &str) -> Status {
        (
            DiagLevel::from_raw(level),
            name.into(),
            msg.into(),
            "hw".into(),
            vec![("k".into(), v.into())],
        )
    }

    #[test]
    fn runs_join_what_repeats_and_the_level_at_a_time_is_the_last_before() {
        let mut b = Builder::default();
        b.add(10, st(0, "motor", "ok", "1"));
        b.add(20, st(0, "motor", "ok", "1"));
        b.add(30, st(1, "motor", "hot", "90"));
        b.add(40, st(0, "motor", "ok", "2"));
        b.add(40, st(2, "gps", "no fix", ""));
        let d = b.d;
        let m = &d.tracks[0];
        assert_eq!(m.runs.len(), 3);
        assert_eq!((m.runs[0].count, m.runs[0].last_ns), (2, 20));
        assert_eq!(m.counts, [3, 1, 0, 0, 0]);
        assert_eq!(m.worst(), Some(DiagLevel::Warn));
        assert!(m.at(5).is_none());
        assert_eq!(m.at(35).unwrap().level, DiagLevel::Warn);
        assert_eq!(d.string(m.at(35).unwrap().message), "hot");
        assert_eq!(
            d.values(m.at(35).unwrap().values),
            [("k".into(), "90".into())]
        );
        assert_eq!(m.at(1000).unwrap().level, DiagLevel::Ok);
        assert_eq!(d.counts(), [3, 1, 1, 0, 0]);
        // "ok" is stored once.
        assert_eq!(d.strings.iter().filter(|s| *s == "ok").count(), 1);
    }

    #[test]
    fn past_the_budget_values_are_not_kept_but_levels_are() {
        let mut b = Builder {
            runs: MAX_RUNS,
            ..Builder::default()
        };
        b.add(1, st(0, "a", "ok", "1"));
        b.add(2, st(0, "a", "ok", "2"));
        b.add(3, st(3, "a", "stale", "3"));
        let t = &b.d.tracks[0];
        assert_eq!(t.runs.len(), 2);
        assert_eq!(t.runs[0].count, 2);
        assert!(b.d.coarse);
        assert!(b.d.values(t.runs[0].values).is_empty());
        assert_eq!(t.worst(), Some(DiagLevel::Stale));
    }
}
