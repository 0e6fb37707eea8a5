//! An annotation topic matched to images by header stamp, not by arrival: each message's stamp
//! read once ([`Index::build`]), then for an image's stamp the messages of the nearest stamp
//! within a tolerance (0: the exact stamp), with ImageMarkers whose `lifetime` still covers the
//! image, replaced by `ns/id` and removed by `REMOVE` as they come ([`Index::at`]).

use std::ops::ControlFlow;
use std::sync::atomic::AtomicBool;

use super::{parse, Shape};
use crate::decoded::each_decoded;
use crate::{Error, Result};
use bagscope_reader::storage::IndexEntry;
use bagscope_reader::Bag;

#[derive(Debug, Clone, Copy)]
struct Entry {
    /// The stamp (ns), or the receive time where the message has none.
    stamp: u64,
    conn: usize,
    entry: IndexEntry,
    /// The longest ImageMarker lifetime in it (ns).
    lifetime: u64,
}

/// An annotation topic's messages by stamp.
#[derive(Debug, Clone, Default)]
pub struct Index {
    /// The topic.
    pub topic: String,
    entries: Vec<Entry>,
    /// Messages without a stamp (matched by their receive time).
    pub without_stamp: usize,
    /// Messages that did not decode.
    pub undecoded: usize,
    longest_life: u64,
}

/// The annotations matched to one image.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Matched {
    /// The shapes to draw.
    pub shapes: Vec<Shape>,
    /// The stamp matched (ns), where one was within the tolerance.
    pub stamp: Option<u64>,
    /// How far the matched stamp is from the image's (ns, signed: later is positive).
    pub offset_ns: i64,
    /// What was left out or taken in place (said under the image).
    pub notes: Vec<String>,
}

impl Index {
    /// Reads every message of `topic` once for its stamp.
    pub fn build(bag: &Bag, topic: &str, cancel: &AtomicBool) -> Result<Index> {
        let conns = bag.connections_of_topics(&[topic])?;
        let mut ix = Index {
            topic: topic.to_string(),
            ..Default::default()
        };
        each_decoded(bag, conns, cancel, |m, d| {
            let Some((plan, node)) = d else {
                ix.undecoded += 1;
                return Ok(ControlFlow::Continue(()));
            };
            let (stamp, lifetime) = super::stamp_and_lifetime(&plan.def, node);
            let stamp = stamp.unwrap_or_else(|| {
                ix.without_stamp += 1;
                m.time_ns
            });
            ix.longest_life = ix.longest_life.max(lifetime);
            ix.entries.push(Entry {
                stamp,
                conn: m.conn,
                entry: m.entry,
                lifetime,
            });
            Ok(ControlFlow::Continue(()))
        })?;
        ix.entries.sort_by_key(|e| (e.stamp, e.entry.time_ns));
        Ok(ix)
    }

    /// How many messages it holds.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The stamp nearest `stamp` within `tolerance_ns`, ties to the earlier.
    fn nearest(&self, stamp: u64, tolerance_ns: u64) -> Option<u64> {
        let k = self.entries.partition_point(|e| e.stamp < stamp);
        let after = self.entries.get(k).map(|e| e.stamp);
        let before = k.checked_sub(1).map(|i| self.entries[i].stamp);
        let best = match (before, after) {
            (Some(b), Some(a)) if a - stamp < stamp - b => Some(a),
            (Some(b), _) => Some(b),
            (None, a) => a,
        }?;
        (best.abs_diff(stamp) <= tolerance_ns).then_some(best)
    }

    /// The annotations for an image stamped `stamp`.
    pub fn at(&self, bag: &Bag, stamp: u64, tolerance_ns: u64) -> Result<Matched> {
        let mut out = Matched::default();
        let matched = self.nearest(stamp, tolerance_ns);
        // Messages of the matched stamp, and earlier ones a lifetime may still cover.
        let from = match matched {
            Some(m) => m.min(stamp.saturating_sub(self.longest_life)),
            None if self.longest_life > 0 => stamp.saturating_sub(self.longest_life),
            None => return Ok(self.said(out)),
        };
        let to = matched.unwrap_or(stamp).max(stamp);
        let lo = self.entries.partition_point(|e| e.stamp < from);
        let hi = self.entries.partition_point(|e| e.stamp <= to);
        // Kept by label, in stamp order: a later message with the same ns/id replaces.
        let mut kept: Vec<Shape> = Vec::new();
        for e in &self.entries[lo..hi] {
            let is_match = Some(e.stamp) == matched;
            if !is_match && (e.lifetime == 0 || e.stamp > stamp || e.stamp + e.lifetime < stamp) {
                continue;
            }
            let (plan, _) = bag.plan(e.conn).map_err(Error::from)?;
            let m = bag.message(e.conn, e.entry)?;
            let node = match plan.decode(&m.data) {
                Ok(n) => n,
                Err(err) => {
                    out.notes
                        .push(format!("{} at {}: {err}", self.topic, e.entry.time_ns));
                    continue;
                }
            };
            let a = parse(&plan.def, &node);
            kept.retain(|s| !a.removes.contains(&s.label));
            for (s, life) in a.shapes.into_iter().zip(a.lifetimes) {
                let alive = is_match
                    || (life > 0
                        && e.stamp.saturating_add(u64::try_from(life).unwrap_or(0)) >= stamp);
                if !alive {
                    continue;
                }
                if s.label.contains('/') {
                    kept.retain(|k| k.label != s.label);
                }
                kept.push(s);
            }
            out.notes.extend(a.notes);
        }
        out.shapes = kept;
        if let Some(m) = matched {
            out.stamp = Some(m);
            out.offset_ns = i64::try_from(i128::from(m) - i128::from(stamp)).unwrap_or(0);
        }
        Ok(self.said(out))
    }

    fn said(&self, mut out: Matched) -> Matched {
        if out.stamp.is_none() && out.shapes.is_empty() && !self.entries.is_empty() {
            out.notes
                .push(format!("{}: no annotation at this stamp", self.topic));
        }
        if self.without_stamp > 0 {
            out.notes.push(format!(
                "{}: {} messages without a stamp, matched by receive time",
                self.topic, self.without_stamp
            ));
        }
        out
    }
}
