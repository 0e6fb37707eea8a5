//! A marker layer's state at the scene's time: its messages replayed in order, with snapshots
//! of the state on the way (one a second of the recording), so a seek starts from the latest
//! snapshot before it rather than from the recording's start; and a warm-up that, while the
//! worker has nothing asked of it, replays ahead of the playhead to make those snapshots.

use std::sync::atomic::{AtomicBool, Ordering};

use super::marker_bytes;
use super::markers::{self, Markers};
use super::MAX_TRIANGLES;
use super::{marker_type, Builder, Layer, Pick, Request, Scene, Source, Status};

/// Marker snapshots: one a second of the recording at most.
const SNAPSHOT_NS: u64 = 1_000_000_000;
/// Markers held in a layer's snapshots at most (each shared with the state it was taken
/// from, so this counts entries, not copies).
const SNAPSHOT_MARKERS: usize = 1_000_000;
/// Messages a warm-up step reads at most (whole times: more where many share the last one).
const WARM_MESSAGES: usize = 16;
/// A warm-up step stops at the first whole time after this long.
const WARM_STEP: std::time::Duration = std::time::Duration::from_millis(25);

/// A layer's markers replayed up to some time, with snapshots of the state on the way.
pub(super) struct Replay {
    /// The time replayed to: every message at or before it applied (0: none yet).
    pub(super) upto: u64,
    pub(super) state: Markers<Source>,
    /// The state once every message at or before each time was applied, oldest first, one at
    /// most every [`SNAPSHOT_NS`], at most [`SNAPSHOT_MARKERS`] markers in all.
    snapshots: Vec<(u64, Markers<Source>)>,
    /// The warm-up's own replay, ahead of the playhead's: its time and state.
    ahead: Option<(u64, Markers<Source>)>,
    /// The warm-up has read the layer's last message.
    warmed: bool,
}

impl Replay {
    pub(super) fn new() -> Replay {
        Replay {
            upto: 0,
            state: Markers::default(),
            snapshots: Vec::new(),
            ahead: None,
            warmed: false,
        }
    }

    /// Ready to replay up to `t`: kept where it is when that is at or before `t` and no snapshot
    /// lies between; else from the latest snapshot at or before `t` (a seek back, or forward
    /// past a snapshot the warm-up made).
    fn seek(&mut self, t: u64) {
        let snap = self
            .snapshots
            .iter()
            .rposition(|(at, _)| *at <= t)
            .map(|i| self.snapshots[i].0);
        if self.upto > t || snap.is_some_and(|s| s > self.upto) {
            self.rewind(t);
        }
    }

    /// Back to the latest snapshot at or before `t` (or the start).
    fn rewind(&mut self, t: u64) {
        match self.snapshots.iter().rposition(|(at, _)| *at <= t) {
            Some(i) => {
                self.upto = self.snapshots[i].0;
                self.state = self.snapshots[i].1.clone();
            }
            None => {
                self.upto = 0;
                self.state = Markers::default();
            }
        }
    }

    /// Keeps `state` as a snapshot at `t` (every message at or before it applied) when the last
    /// is [`SNAPSHOT_NS`] older; every other snapshot goes past the budget.
    fn keep(snapshots: &mut Vec<(u64, Markers<Source>)>, t: u64, state: &Markers<Source>) {
        if snapshots
            .last()
            .is_some_and(|(at, _)| t < at.saturating_add(SNAPSHOT_NS))
        {
            return;
        }
        snapshots.push((t, state.clone()));
        let held: usize = snapshots.iter().map(|(_, m)| m.live.len()).sum();
        if held > SNAPSHOT_MARKERS {
            let mut k = 0;
            snapshots.retain(|_| {
                k += 1;
                k % 2 == 0
            });
        }
    }

    /// Where the warm-up goes on from: its own replay, or the furthest state known (the
    /// playhead's or the last snapshot) where that is further.
    fn take_ahead(&mut self) -> (u64, Markers<Source>) {
        let last = self.snapshots.last().filter(|(at, _)| *at > self.upto);
        let (at, state) = match last {
            Some((at, m)) => (*at, m),
            None => (self.upto, &self.state),
        };
        match self.ahead.take() {
            Some(a) if a.0 >= at => a,
            _ => (at, state.clone()),
        }
    }
}

/// The first message to replay after a state replayed to `upto`.
fn after(upto: u64) -> u64 {
    if upto == 0 {
        0
    } else {
        upto + 1
    }
}

impl Builder {
    /// A marker layer at the scene's time: its state replayed there, each marker drawn.
    pub(super) fn markers(
        &mut self,
        scene: &mut Scene,
        req: &Request,
        layer: &Layer,
        st: &mut Status,
        note: &mut impl FnMut(String),
        cancel: &AtomicBool,
    ) {
        let mut replay = self
            .replays
            .remove(&layer.topic)
            .unwrap_or_else(Replay::new);
        replay.seek(req.t);
        let from = after(replay.upto);
        let srcs = if from > req.t {
            Vec::new()
        } else {
            self.between(&layer.topic, Some(from), req.t)
        };
        for (i, src) in srcs.iter().enumerate() {
            if cancel.load(Ordering::Relaxed) {
                // Not complete: kept up to the last time all of whose messages were applied
                // (a time only partly applied: back to the snapshot before it).
                if let Some(last) = i.checked_sub(1).map(|j| srcs[j].entry.time_ns) {
                    if last < src.entry.time_ns {
                        replay.upto = last;
                    } else {
                        replay.rewind(last.saturating_sub(1));
                    }
                }
                self.replays.insert(layer.topic.clone(), replay);
                return;
            }
            scene.replayed += 1;
            match self.markers_of(*src) {
                Ok(ms) => replay.state.apply(ms, src.entry.time_ns, src),
                Err(e) => note(e),
            }
            let t = src.entry.time_ns;
            if srcs.get(i + 1).is_none_or(|n| n.entry.time_ns > t) {
                Replay::keep(&mut replay.snapshots, t, &replay.state);
            }
        }
        replay.upto = req.t;
        let mut n = 0;
        for s in replay.state.at(req.t) {
            let m = &s.marker;
            let at = if m.frame_locked {
                req.t
            } else {
                self.when(m.stamp, s.received)
            };
            match self.place(&req.fixed, &m.frame, at) {
                Ok(p) => {
                    if scene.triangle_count() > MAX_TRIANGLES {
                        note(format!("only {n} markers drawn: too many triangles"));
                        break;
                    }
                    markers::draw(scene, m, &p);
                    let pos = p.apply(m.pose.t);
                    scene.picks.push(Pick {
                        pos: crate::geom::f32s(pos),
                        what: format!(
                            "{} {}/{} ({}) in {}",
                            layer.topic,
                            m.ns.trim_start_matches('\u{1}'),
                            m.id,
                            marker_type(m.kind),
                            if m.frame.is_empty() {
                                &req.fixed
                            } else {
                                &m.frame
                            }
                        ),
                        source: Some(s.source),
                    });
                    n += 1;
                }
                Err(e) => note(e),
            }
        }
        st.text = format!("{n} markers");
        self.replays.insert(layer.topic.clone(), replay);
    }

    /// Replays ahead of the playhead a little, for a worker with nothing asked of it: a marker
    /// layer drawn so far goes on from the furthest state known, keeping a snapshot a second,
    /// so a later seek anywhere replays at most about a second of messages. Reads whole times
    /// of at least one message, for about 25 ms at most; returns whether there is more
    /// to do. A message that does not decode is passed over (the scene that shows it says so).
    pub fn warm(&mut self, cancel: &AtomicBool) -> bool {
        let t0 = std::time::Instant::now();
        let Some(topic) = self
            .replays
            .iter()
            .find(|(_, r)| !r.warmed)
            .map(|(t, _)| t.clone())
        else {
            return false;
        };
        let Some(mut r) = self.replays.remove(&topic) else {
            return false;
        };
        let (mut at, mut state) = r.take_ahead();
        let srcs = self.next_times(&topic, after(at), WARM_MESSAGES);
        r.warmed = srcs.is_empty();
        for (i, src) in srcs.iter().enumerate() {
            if cancel.load(Ordering::Relaxed) {
                // Maybe inside a time: the state goes; the snapshots stay.
                self.replays.insert(topic, r);
                return false;
            }
            let t = src.entry.time_ns;
            if let Ok(ms) = self.markers_of(*src) {
                state.apply(ms, t, src);
            }
            if srcs.get(i + 1).is_none_or(|n| n.entry.time_ns > t) {
                at = t;
                Replay::keep(&mut r.snapshots, t, &state);
                if t0.elapsed() >= WARM_STEP {
                    break;
                }
            }
        }
        r.ahead = Some((at, state));
        let more = !r.warmed;
        self.replays.insert(topic, r);
        more || self.replays.values().any(|r| !r.warmed)
    }

    /// A message's markers: straight from its bytes where it is a standard `Marker` or
    /// `MarkerArray` ([`marker_bytes`]), else through the value tree.
    fn markers_of(&mut self, src: Source) -> Result<Vec<markers::Marker>, String> {
        let (plan, data) = self.raw(src)?;
        if let Some(ms) = marker_bytes::markers(&plan, &data) {
            return Ok(ms);
        }
        let node = plan.decode(&data).map_err(|e| e.to_string())?;
        markers::parse(&plan.def, &node)
    }

    /// The messages of `topic` from `from` on: the first `n` and every other at the last's
    /// time, in time order.
    fn next_times(&self, topic: &str, from: u64, n: usize) -> Vec<Source> {
        let s = self.bag.summary();
        let Some(tp) = s.topics.iter().find(|t| t.name == topic) else {
            return Vec::new();
        };
        let mut times: Vec<u64> = Vec::new();
        for &c in &tp.connections {
            if let Some(v) = self.tables.per_connection.get(c) {
                let i = v.partition_point(|e| e.time_ns < from);
                times.extend(v[i..].iter().take(n).map(|e| e.time_ns));
            }
        }
        times.sort_unstable();
        match times.get(n.min(times.len()).wrapping_sub(1)) {
            Some(&until) => self.between(topic, Some(from), until),
            None => Vec::new(),
        }
    }
}
