//! The transform tree (`/tf`, `/tf_static`) over a recording: every transform of every
//! `tf2_msgs/TFMessage` (ROS 1 `tf/tfMessage`, ROS 2 `tf2_msgs/msg/TFMessage`) read once into a
//! per-frame history, so that the tree at any time and the transform between any two frames
//! (as `tf_echo` gives it) are a binary search away. For the app's TF window and `bagscope tf`.
//!
//! Times are the recording's (when each message was recorded), the timeline's clock; a
//! transform from a `tf_static` topic holds at every time, as tf2 treats it.

mod robot_frames;
pub use robot_frames::{add_robot_frames, RobotFrames};
use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::atomic::AtomicBool;

use crate::geom::Pose;
use bagscope_reader::definition::msg::MsgDef;
use bagscope_reader::encoding::{Node, Value};
use bagscope_reader::{Bag, Error, Result};

/// Why a transform lookup has no answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TfError {
    /// The recording has no transform to or from this frame.
    #[error("no frame {0:?} in the recording")]
    NoFrame(String),
    /// The two frames are in different trees at that time.
    #[error("{target} and {frame} are not connected at that time{why}")]
    NotConnected {
        /// The frame the pose is expressed in.
        target: String,
        /// The frame whose pose it is.
        frame: String,
        /// Which root each is under, in words (empty when both are roots).
        why: String,
    },
}

/// Most transforms kept from one recording (72 bytes each): beyond, the rest are not read and
/// [`TfHistory::truncated`] says so.
pub const MAX_SAMPLES: usize = 20_000_000;

/// One transform of a frame from its parent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// When it was recorded (ns).
    pub time_ns: u64,
    /// The parent frame (index into [`TfHistory::frames`]).
    pub parent: u32,
    /// The child's pose in the parent's frame.
    pub pose: Pose,
}

/// Every transform of a recording, per child frame.
#[derive(Debug, Default)]
pub struct TfHistory {
    /// Frame names (without a leading `/`).
    pub frames: Vec<String>,
    /// Per frame: its transforms from its parent, in time order.
    pub samples: Vec<Vec<Sample>>,
    /// Per frame: whether its transforms came from a static topic.
    pub is_static: Vec<bool>,
    /// Messages that could not be read as transforms.
    pub bad: u64,
    /// Whether reading stopped at [`MAX_SAMPLES`].
    pub truncated: bool,
    /// The robot's frames added from its URDF and joint states (see
    /// [`robot_frames::add_robot_frames`]).
    pub robot: RobotFrames,
}

/// A frame as it stands at some time.
#[derive(Debug, Clone, PartialEq)]
pub struct FrameAt {
    /// Index into [`TfHistory::frames`].
    pub frame: usize,
    /// Its parent, its pose there and when that was recorded; `None` for a root.
    pub from_parent: Option<Sample>,
    /// Depth in the tree (roots 0).
    pub depth: usize,
}

/// Whether the recording has transforms: transform topics, or a robot description (whose
/// fixed joints are transforms, and whose joint states give the others), its own or a URDF
/// file the user chose (`urdf`).
pub fn has_transforms(bag: &Bag, urdf: Option<&std::path::Path>) -> bool {
    let topics = &bag.summary().topics;
    let joints = || {
        topics
            .iter()
            .any(|t| crate::spatial::robot::joint_states::is_joint_state_type(&t.datatype))
    };
    !tf_topics(bag).is_empty()
        || urdf.is_some()
        || topics
            .iter()
            .any(|t| t.name.trim_start_matches('/') == "robot_description")
        // A ROS 2 recording of robot_state_publisher's parameters and the joint states.
        || (topics.iter().any(|t| t.name == "/parameter_events") && joints())
}

/// Whether a type is a transform message: ROS's `TFMessage` (`tf/tfMessage`), or Foxglove's
/// `foxglove.FrameTransform(s)`.
pub fn is_tf_type(datatype: &str) -> bool {
    let base = datatype.rsplit('/').next().unwrap_or(datatype);
    base.eq_ignore_ascii_case("tfMessage")
        || datatype == "foxglove.FrameTransform"
        || datatype == "foxglove.FrameTransforms"
}

/// The transform topics of a recording (every topic of a transform type).
pub fn tf_topics(bag: &Bag) -> Vec<usize> {
    let s = bag.summary();
    (0..s.topics.len())
        .filter(|&t| is_tf_type(&s.topics[t].datatype))
        .collect()
}

fn text(def: &MsgDef, n: &Node, name: &str) -> Option<String> {
    match n.field_value(def, name)? {
        Value::String(s) => Some(
            String::from_utf8_lossy(s)
                .trim_start_matches('/')
                .to_string(),
        ),
        _ => None,
    }
}

/// The (parent, child, pose) of each transform of a decoded `TFMessage`, or of Foxglove's
/// `FrameTransform` (one) or `FrameTransforms` (a list).
fn transforms(def: &MsgDef, node: &Node) -> Option<Vec<(String, String, Pose)>> {
    let one;
    let items: &[Node] = match node.field_value(def, "transforms") {
        Some(Value::Array(items)) => items,
        _ if node.field(def, "parent_frame_id").is_some() => {
            one = [node.clone()];
            &one
        }
        _ => return None,
    };
    let mut out = Vec::with_capacity(items.len());
    for ts in items {
        // ROS: header.frame_id, child_frame_id, transform; Foxglove: parent_frame_id,
        // child_frame_id, translation and rotation at the top.
        let (parent, tr) = match ts.field(def, "header") {
            Some(h) => (text(def, h, "frame_id")?, ts.field(def, "transform")?),
            None => (text(def, ts, "parent_frame_id")?, ts),
        };
        let child = text(def, ts, "child_frame_id")?;
        let (v, r) = (tr.field(def, "translation")?, tr.field(def, "rotation")?);
        let t = [
            v.number(def, "x")?,
            v.number(def, "y")?,
            v.number(def, "z")?,
        ];
        let mut q = [
            r.number(def, "x")?,
            r.number(def, "y")?,
            r.number(def, "z")?,
            r.number(def, "w")?,
        ];
        // Normalised as tf2 does; a zero quaternion is taken as no rotation.
        let n = q.iter().map(|c| c * c).sum::<f64>().sqrt();
        q = if n > 0.0 && n.is_finite() {
            q.map(|c| c / n)
        } else {
            Pose::IDENTITY.q
        };
        out.push((parent, child, Pose { t, q }));
    }
    Some(out)
}

impl TfHistory {
    /// Reads every transform of `topics`; when `None`, all the recording's transform topics and
    /// the robot's frames `/tf` lacks (from `/robot_description` and its joint states).
    pub fn read(
        bag: &Bag,
        topics: Option<&[usize]>,
        urdf: Option<&std::path::Path>,
        cancel: &AtomicBool,
    ) -> Result<TfHistory> {
        let mut h = TfHistory::read_topics(bag, topics, cancel)?;
        if topics.is_none() && !h.truncated {
            h.robot = robot_frames::add_robot_frames(bag, &mut h, urdf, cancel)?;
        }
        Ok(h)
    }

    fn read_topics(bag: &Bag, topics: Option<&[usize]>, cancel: &AtomicBool) -> Result<TfHistory> {
        let s = bag.summary();
        let topics = topics.map_or_else(|| tf_topics(bag), <[usize]>::to_vec);
        let mut conns = Vec::new();
        let mut static_conn = vec![false; s.connections.len()];
        for &t in &topics {
            let tp = s
                .topics
                .get(t)
                .ok_or_else(|| Error::NotFound(format!("topic {t}")))?;
            for &c in &tp.connections {
                conns.push(c);
                if let Some(x) = static_conn.get_mut(c) {
                    *x = tp.name.ends_with("tf_static");
                }
            }
        }
        let mut h = TfHistory::default();
        if conns.is_empty() {
            return Ok(h);
        }
        let mut ids: HashMap<String, u32> = HashMap::new();
        let mut id = |h: &mut TfHistory, name: String| -> u32 {
            *ids.entry(name).or_insert_with_key(|k| {
                h.frames.push(k.clone());
                h.samples.push(Vec::new());
                h.is_static.push(false);
                (h.frames.len() - 1) as u32
            })
        };
        let mut kept = 0usize;
        crate::decoded::each_decoded(bag, conns, cancel, |m, decoded| {
            let Some(ts) = decoded.and_then(|(p, n)| transforms(&p.def, n)) else {
                h.bad += 1;
                return Ok(ControlFlow::Continue(()));
            };
            for (parent, child, pose) in ts {
                if kept >= MAX_SAMPLES {
                    h.truncated = true;
                    return Ok(ControlFlow::Break(()));
                }
                let p = id(&mut h, parent);
                let c = id(&mut h, child) as usize;
                h.is_static[c] |= static_conn.get(m.conn).copied().unwrap_or(false);
                h.samples[c].push(Sample {
                    time_ns: m.time_ns,
                    parent: p,
                    pose,
                });
                kept += 1;
            }
            Ok(ControlFlow::Continue(()))
        })?;
        Ok(h)
    }

    /// A frame's index by name, or an error that says it is not there.
    fn named(&self, name: &str) -> std::result::Result<usize, TfError> {
        self.frame(name)
            .ok_or_else(|| TfError::NoFrame(name.to_string()))
    }

    /// A frame's index by name (a leading `/` ignored).
    pub fn frame(&self, name: &str) -> Option<usize> {
        let name = name.trim_start_matches('/');
        self.frames.iter().position(|f| f == name)
    }

    /// The transform of `frame` from its parent in force at `t`: the latest recorded at or
    /// before `t`, or for a static frame its latest whatever the time.
    pub fn sample_at(&self, frame: usize, t: u64) -> Option<Sample> {
        let v = self.samples.get(frame)?;
        if self.is_static.get(frame).copied().unwrap_or(false) {
            return v.last().copied();
        }
        let i = v.partition_point(|s| s.time_ns <= t);
        i.checked_sub(1).map(|i| v[i])
    }

    /// The tree at `t`, depth first, children by name: every frame known by then.
    pub fn tree_at(&self, t: u64) -> Vec<FrameAt> {
        let n = self.frames.len();
        let parent: Vec<Option<Sample>> = (0..n).map(|f| self.sample_at(f, t)).collect();
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
        let mut roots = Vec::new();
        // A frame shows when it has a transform or is the parent of one in force.
        let mut seen = vec![false; n];
        for f in 0..n {
            if let Some(s) = parent[f] {
                seen[f] = true;
                if let Some(x) = seen.get_mut(s.parent as usize) {
                    *x = true;
                }
            }
        }
        for f in 0..n {
            match parent[f] {
                Some(s) if (s.parent as usize) < n && s.parent as usize != f => {
                    children[s.parent as usize].push(f)
                }
                _ if seen[f] => roots.push(f),
                _ => {}
            }
        }
        let by_name = |v: &mut Vec<usize>| v.sort_by(|a, b| self.frames[*a].cmp(&self.frames[*b]));
        by_name(&mut roots);
        for c in &mut children {
            by_name(c);
        }
        let mut out = Vec::new();
        let mut visited = vec![false; n];
        let mut stack: Vec<(usize, usize)> = roots.iter().rev().map(|&r| (r, 0)).collect();
        while let Some((f, depth)) = stack.pop() {
            if std::mem::replace(&mut visited[f], true) {
                continue;
            }
            out.push(FrameAt {
                frame: f,
                from_parent: if depth == 0 { None } else { parent[f] },
                depth,
            });
            for &c in children[f].iter().rev() {
                stack.push((c, depth + 1));
            }
        }
        // Frames on a loop of parents (a damaged tree) have no root: listed at the top.
        for f in 0..n {
            if seen[f] && !visited[f] {
                out.push(FrameAt {
                    frame: f,
                    from_parent: parent[f],
                    depth: 0,
                });
            }
        }
        out
    }

    /// The transform of `frame` from its parent at `t`, interpolated (translation linearly,
    /// rotation along the shorter arc) between the samples either side of `t` when both have
    /// the same parent, as tf2 looks transforms up; the last one at or before `t` otherwise.
    pub fn sample_between(&self, frame: usize, t: u64) -> Option<Sample> {
        let a = self.sample_at(frame, t)?;
        if self.is_static.get(frame).copied().unwrap_or(false) || a.time_ns == t {
            return Some(a);
        }
        let v = self.samples.get(frame)?;
        let i = v.partition_point(|s| s.time_ns <= t);
        let Some(b) = v
            .get(i)
            .filter(|b| b.parent == a.parent && b.time_ns > a.time_ns)
        else {
            return Some(a);
        };
        let f = (t - a.time_ns) as f64 / (b.time_ns - a.time_ns) as f64;
        let lerp = |x: f64, y: f64| x + (y - x) * f;
        let (qa, mut qb) = (a.pose.q, b.pose.q);
        if qa.iter().zip(&qb).map(|(x, y)| x * y).sum::<f64>() < 0.0 {
            qb = qb.map(|x| -x);
        }
        let mut q = [0.0; 4];
        for k in 0..4 {
            q[k] = lerp(qa[k], qb[k]);
        }
        let n = q.iter().map(|x| x * x).sum::<f64>().sqrt().max(1e-12);
        Some(Sample {
            time_ns: t,
            parent: a.parent,
            pose: Pose {
                t: [
                    lerp(a.pose.t[0], b.pose.t[0]),
                    lerp(a.pose.t[1], b.pose.t[1]),
                    lerp(a.pose.t[2], b.pose.t[2]),
                ],
                q: q.map(|x| x / n),
            },
        })
    }

    /// `frame`'s pose in the root of its tree at `t`, and that root; each transform
    /// interpolated when `between`.
    fn in_root_by(&self, frame: usize, t: u64, between: bool) -> (usize, Pose) {
        let mut pose = Pose::IDENTITY;
        let mut f = frame;
        for _ in 0..self.frames.len() {
            let s = if between {
                self.sample_between(f, t)
            } else {
                self.sample_at(f, t)
            };
            match s {
                Some(s) if s.parent as usize != frame => {
                    pose = s.pose.then(&pose);
                    f = s.parent as usize;
                }
                _ => break,
            }
        }
        (f, pose)
    }

    /// The pose of `source` in `target`'s frame at `t` (what `tf_echo target source` prints),
    /// or why there is none.
    pub fn lookup(&self, target: &str, source: &str, t: u64) -> std::result::Result<Pose, TfError> {
        self.lookup_by(target, source, t, false)
    }

    /// As [`TfHistory::lookup`], each transform interpolated between its samples either side
    /// of `t` ([`TfHistory::sample_between`]): where a sensor's data was at its stamp.
    pub fn lookup_between(
        &self,
        target: &str,
        source: &str,
        t: u64,
    ) -> std::result::Result<Pose, TfError> {
        self.lookup_by(target, source, t, true)
    }

    fn lookup_by(
        &self,
        target: &str,
        source: &str,
        t: u64,
        between: bool,
    ) -> std::result::Result<Pose, TfError> {
        let (a, b) = (self.named(target)?, self.named(source)?);
        let (ra, pa) = self.in_root_by(a, t, between);
        let (rb, pb) = self.in_root_by(b, t, between);
        if ra != rb {
            let mut why = Vec::new();
            for (name, f, r) in [(target, a, ra), (source, b, rb)] {
                if r != f {
                    why.push(format!("{name} is under {}", self.frames[r]));
                }
            }
            let why = if why.is_empty() {
                String::new()
            } else {
                format!(" ({})", why.join(", "))
            };
            return Err(TfError::NotConnected {
                target: target.to_string(),
                frame: source.to_string(),
                why,
            });
        }
        Ok(pa.inverse().then(&pb))
    }
}

impl TfHistory {
    /// The pose of `source` in `target` over the recording: at each time one of the frames
    /// between them (as the tree stands at the end) moved, at most `max` of them (evenly
    /// picked), where the two are connected.
    pub fn track(
        &self,
        target: &str,
        source: &str,
        max: usize,
    ) -> std::result::Result<Vec<(u64, Pose)>, TfError> {
        let (a, b) = (self.named(target)?, self.named(source)?);
        // The frames whose transforms move either one: both chains up to their roots.
        let mut frames = Vec::new();
        for start in [a, b] {
            let mut f = start;
            for _ in 0..self.frames.len() {
                frames.push(f);
                match self.sample_at(f, u64::MAX) {
                    Some(s) if (s.parent as usize) != start => f = s.parent as usize,
                    _ => break,
                }
            }
        }
        let mut times: Vec<u64> = frames
            .iter()
            .filter(|&&f| !self.is_static[f])
            .flat_map(|&f| self.samples[f].iter().map(|s| s.time_ns))
            .collect();
        times.sort_unstable();
        times.dedup();
        let step = times.len().div_ceil(max.max(1)).max(1);
        Ok(times
            .iter()
            .step_by(step)
            .filter_map(|&t| self.lookup(target, source, t).ok().map(|p| (t, p)))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: &[f64], b: &[f64]) -> bool {
        a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-9)
    }

    #[test]
    fn poses_compose_and_invert() {
        let s = std::f64::consts::FRAC_1_SQRT_2;
        // A quarter turn left about z, then 1 m along the new x.
        let a = Pose {
            t: [1.0, 2.0, 0.0],
            q: [0.0, 0.0, s, s],
        };
        let b = Pose {
            t: [1.0, 0.0, 0.5],
            q: Pose::IDENTITY.q,
        };
        let ab = a.then(&b);
        assert!(close(&ab.t, &[1.0, 3.0, 0.5]), "{:?}", ab.t);
        assert!(close(&ab.q, &a.q));
        let back = ab.then(&ab.inverse());
        assert!(close(&back.t, &[0.0; 3]), "{:?}", back.t);
        assert!(close(&back.q[..3], &[0.0; 3]) && (back.q[3].abs() - 1.0).abs() < 1e-9);
        assert!(close(&a.rpy(), &[0.0, 0.0, std::f64::consts::FRAC_PI_2]));
    }

    fn sample(time_ns: u64, parent: u32, x: f64) -> Sample {
        Sample {
            time_ns,
            parent,
            pose: Pose {
                t: [x, 0.0, 0.0],
                q: Pose::IDENTITY.q,
            },
        }
    }

    #[test]
    fn the_tree_and_lookups_at_a_time() {
        // map -> odom (static), odom -> base_link (moving), base_link -> laser, and a frame
        // that appears only later.
        let h = TfHistory {
            frames: ["map", "odom", "base_link", "laser", "late"]
                .map(String::from)
                .to_vec(),
            samples: vec![
                vec![],
                vec![sample(50, 0, 10.0)],
                vec![sample(10, 1, 1.0), sample(20, 1, 2.0)],
                vec![sample(10, 2, 0.5)],
                vec![sample(30, 2, 0.1)],
            ],
            is_static: vec![false, true, false, false, false],
            ..Default::default()
        };
        let tree: Vec<(usize, usize)> = h.tree_at(25).iter().map(|f| (f.frame, f.depth)).collect();
        assert_eq!(tree, [(0, 0), (1, 1), (2, 2), (3, 3)], "late not yet there");
        assert_eq!(h.tree_at(30).len(), 5);
        assert_eq!(
            h.tree_at(5).len(),
            2,
            "only the static map -> odom before any motion"
        );
        // laser in map at 15: 10 + 1 + 0.5; at 25: 10 + 2 + 0.5.
        assert!(close(
            &h.lookup("map", "laser", 15).unwrap().t,
            &[11.5, 0.0, 0.0]
        ));
        assert!(close(
            &h.lookup("/map", "laser", 25).unwrap().t,
            &[12.5, 0.0, 0.0]
        ));
        assert!(close(
            &h.lookup("laser", "map", 25).unwrap().t,
            &[-12.5, 0.0, 0.0]
        ));
        assert!(close(
            &h.lookup("late", "laser", 30).unwrap().t,
            &[0.4, 0.0, 0.0]
        ));
        let e = h.lookup("map", "laser", 5).unwrap_err();
        assert!(
            matches!(&e, TfError::NotConnected { target, .. } if target == "map"),
            "{e}"
        );
        assert!(e.to_string().contains("not connected"), "{e}");
        assert_eq!(
            h.lookup("map", "nowhere", 5).unwrap_err(),
            TfError::NoFrame("nowhere".into())
        );
    }

    #[test]
    fn a_track_over_the_moving_frames() {
        let h = TfHistory {
            frames: ["map", "odom", "base_link", "laser"]
                .map(String::from)
                .to_vec(),
            samples: vec![
                vec![],
                vec![sample(5, 0, 10.0)],
                vec![sample(10, 1, 1.0), sample(20, 1, 2.0), sample(30, 1, 3.0)],
                vec![sample(10, 2, 0.5)],
            ],
            is_static: vec![false, true, false, true],
            ..Default::default()
        };
        let t = h.track("map", "laser", 100).unwrap();
        let xs: Vec<(u64, f64)> = t.iter().map(|(t, p)| (*t, p.t[0])).collect();
        assert_eq!(xs, [(10, 11.5), (20, 12.5), (30, 13.5)]);
        assert_eq!(
            h.track("map", "laser", 2).unwrap().len(),
            2,
            "evenly picked"
        );
        assert!(h.track("map", "nowhere", 9).is_err());
    }

    #[test]
    fn a_loop_of_parents_does_not_hang() {
        let h = TfHistory {
            frames: ["a", "b"].map(String::from).to_vec(),
            samples: vec![vec![sample(1, 1, 1.0)], vec![sample(1, 0, 1.0)]],
            is_static: vec![false, false],
            ..Default::default()
        };
        assert_eq!(h.tree_at(5).len(), 2);
        let _ = h.lookup("a", "b", 5);
        let _ = h.track("a", "b", 10);
    }
}
