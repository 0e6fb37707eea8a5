//! `visualization_msgs/Marker` and `MarkerArray`: the markers standing at a time, kept by
//! namespace and id as RViz keeps them (`ADD`/`MODIFY` replaces, `DELETE` removes one,
//! `DELETEALL` removes all or a namespace's, a non-zero `lifetime` expires), and each drawn as
//! triangles, lines, points or text.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::read::{color, header, items, nanos, pose, sub, text, vec3};
use super::{Rgba, Scene};
use crate::geom::Pose;
use bagscope_reader::definition::msg::MsgDef;
use bagscope_reader::encoding::Node;

/// One marker as published.
#[derive(Debug, Clone, PartialEq)]
pub struct Marker {
    /// Namespace.
    pub ns: String,
    /// Id within the namespace.
    pub id: i64,
    /// `type`: 0 ARROW ... 11 TRIANGLE_LIST.
    pub kind: i64,
    /// `action`: 0 ADD/MODIFY, 2 DELETE, 3 DELETEALL.
    pub action: i64,
    /// `header.frame_id`.
    pub frame: String,
    /// `header.stamp` (ns), if set.
    pub stamp: Option<u64>,
    /// Its pose in its frame.
    pub pose: Pose,
    /// `scale`.
    pub scale: [f64; 3],
    /// `color`.
    pub color: Rgba,
    /// `lifetime` (ns; 0 for ever).
    pub lifetime_ns: i128,
    /// Drawn at the current time's transform, not at its stamp's.
    pub frame_locked: bool,
    /// `points`.
    pub points: Vec<[f64; 3]>,
    /// `colors` (one per point, or empty).
    pub colors: Vec<Rgba>,
    /// `text`.
    pub text: String,
}

/// The markers of a `Marker` or `MarkerArray` message (told apart by a `markers` field), or
/// of Foxglove's `foxglove.SceneUpdate` (see [`scene_update`]).
pub fn parse(def: &MsgDef, node: &Node) -> Result<Vec<Marker>, String> {
    if node.field(def, "entities").is_some() {
        return Ok(scene_update(def, node));
    }
    if node.field(def, "markers").is_some() {
        return items(def, node, "markers")
            .iter()
            .map(|m| one(def, m))
            .collect();
    }
    one(def, node).map(|m| vec![m])
}

fn one(def: &MsgDef, node: &Node) -> Result<Marker, String> {
    let (frame, stamp) = header(def, node);
    let int = |n: &str| node.number(def, n).map(|v| v as i64);
    let pose = sub(def, node, "pose")
        .and_then(|p| pose(def, p))
        .unwrap_or(Pose::IDENTITY);
    Ok(Marker {
        ns: text(def, node, "ns").unwrap_or_default(),
        id: int("id").ok_or("a marker without an id")?,
        kind: int("type").ok_or("a marker without a type")?,
        action: int("action").unwrap_or(0),
        frame,
        stamp,
        pose,
        scale: sub(def, node, "scale")
            .and_then(|s| vec3(def, s))
            .unwrap_or([1.0; 3]),
        color: sub(def, node, "color")
            .and_then(|c| color(def, c))
            .unwrap_or([255; 4]),
        lifetime_ns: sub(def, node, "lifetime")
            .and_then(|l| nanos(def, l))
            .unwrap_or(0),
        frame_locked: node.number(def, "frame_locked").unwrap_or(0.0) != 0.0,
        points: items(def, node, "points")
            .iter()
            .filter_map(|p| vec3(def, p))
            .collect(),
        colors: items(def, node, "colors")
            .iter()
            .filter_map(|c| color(def, c))
            .collect(),
        text: text(def, node, "text").unwrap_or_default(),
    })
}

/// A Foxglove `SceneUpdate` as markers: its deletions first (`MATCHING_ID` removes the entity's
/// namespace, `ALL` everything), then each entity replacing what its id had: every primitive a
/// marker in the namespace of the entity's id (cubes, spheres, cylinders, arrows, lines as
/// strips, loops or lists with their indices, triangle lists, texts; models are files outside
/// the recording and are left out).
pub fn scene_update(def: &MsgDef, node: &Node) -> Vec<Marker> {
    let mut out = Vec::new();
    let blank = |ns: String, action: i64| Marker {
        ns,
        id: 0,
        kind: 0,
        action,
        frame: String::new(),
        stamp: None,
        pose: Pose::IDENTITY,
        scale: [1.0; 3],
        color: [255; 4],
        lifetime_ns: 0,
        frame_locked: false,
        points: Vec::new(),
        colors: Vec::new(),
        text: String::new(),
    };
    for d in items(def, node, "deletions") {
        let id = text(def, d, "id").unwrap_or_default();
        if d.number(def, "type").unwrap_or(0.0) as i64 == 1 {
            out.push(blank(String::new(), 3));
        } else {
            // An empty namespace would mean all: an entity id is never empty here.
            out.push(blank(format!("\u{1}{id}"), 3));
        }
    }
    for e in items(def, node, "entities") {
        let (frame, stamp) = header(def, e);
        let ns = format!("\u{1}{}", text(def, e, "id").unwrap_or_default());
        out.push(blank(ns.clone(), 3));
        let lifetime_ns = sub(def, e, "lifetime")
            .and_then(|l| nanos(def, l))
            .unwrap_or(0);
        let frame_locked = e.number(def, "frame_locked").unwrap_or(0.0) != 0.0;
        let mut n = 0i64;
        let mut push = |kind: i64,
                        p: &Node,
                        scale: [f64; 3],
                        points: Vec<[f64; 3]>,
                        colors: Vec<[u8; 4]>,
                        t: String| {
            let mut m = blank(ns.clone(), 0);
            m.id = n;
            n += 1;
            m.kind = kind;
            m.frame = frame.clone();
            m.stamp = stamp;
            m.pose = sub(def, p, "pose")
                .and_then(|q| pose(def, q))
                .unwrap_or(Pose::IDENTITY);
            m.scale = scale;
            m.color = sub(def, p, "color")
                .and_then(|c| color(def, c))
                .unwrap_or([255; 4]);
            m.lifetime_ns = lifetime_ns;
            m.frame_locked = frame_locked;
            m.points = points;
            m.colors = colors;
            m.text = t;
            out.push(m);
        };
        let size = |p: &Node| {
            sub(def, p, "size")
                .and_then(|s| vec3(def, s))
                .unwrap_or([1.0; 3])
        };
        for (field, kind) in [("cubes", 1), ("spheres", 2), ("cylinders", 3)] {
            for p in items(def, e, field) {
                push(kind, p, size(p), Vec::new(), Vec::new(), String::new());
            }
        }
        for p in items(def, e, "arrows") {
            let g = |f: &str| p.number(def, f).unwrap_or(0.0);
            let len = g("shaft_length") + g("head_length");
            push(
                0,
                p,
                [g("shaft_diameter"), g("head_diameter"), g("head_length")],
                vec![[0.0; 3], [len, 0.0, 0.0]],
                Vec::new(),
                String::new(),
            );
        }
        let listed = |p: &Node| -> (Vec<[f64; 3]>, Vec<[u8; 4]>) {
            let pts: Vec<[f64; 3]> = items(def, p, "points")
                .iter()
                .filter_map(|q| vec3(def, q))
                .collect();
            let cols: Vec<[u8; 4]> = items(def, p, "colors")
                .iter()
                .filter_map(|c| color(def, c))
                .collect();
            let idx: Vec<usize> = super::read::numbers(def, p, "indices")
                .into_iter()
                .map(|i| i as usize)
                .collect();
            if idx.is_empty() {
                return (pts, cols);
            }
            let pick = |v: &[[f64; 3]]| idx.iter().filter_map(|&i| v.get(i).copied()).collect();
            let pick_c = |v: &[[u8; 4]]| idx.iter().filter_map(|&i| v.get(i).copied()).collect();
            (
                pick(&pts),
                if cols.is_empty() { cols } else { pick_c(&cols) },
            )
        };
        for p in items(def, e, "lines") {
            let (mut pts, mut cols) = listed(p);
            let ty = p.number(def, "type").unwrap_or(0.0) as i64;
            if ty == 1 && !pts.is_empty() {
                pts.push(pts[0]);
                if !cols.is_empty() {
                    cols.push(cols[0]);
                }
            }
            let scale_invariant = p.number(def, "scale_invariant").unwrap_or(0.0) != 0.0;
            let w = if scale_invariant {
                0.0
            } else {
                p.number(def, "thickness").unwrap_or(0.0)
            };
            push(
                if ty == 2 { 5 } else { 4 },
                p,
                [w, 0.0, 0.0],
                pts,
                cols,
                String::new(),
            );
        }
        for p in items(def, e, "triangles") {
            let (pts, cols) = listed(p);
            push(11, p, [1.0; 3], pts, cols, String::new());
        }
        for p in items(def, e, "texts") {
            let scale_invariant = p.number(def, "scale_invariant").unwrap_or(0.0) != 0.0;
            let h = if scale_invariant {
                0.0
            } else {
                p.number(def, "font_size").unwrap_or(0.0)
            };
            let t = text(def, p, "text").unwrap_or_default();
            push(9, p, [0.0, 0.0, h], Vec::new(), Vec::new(), t);
        }
    }
    out
}

/// A marker standing, with when it arrived and which message it came from.
#[derive(Debug, Clone)]
pub struct Standing<K> {
    /// The marker.
    pub marker: Marker,
    /// When its message was recorded (ns).
    pub received: u64,
    /// Its message.
    pub source: K,
}

/// The markers standing at some time, by namespace and id. Each is shared: a copy of the state
/// (a snapshot) copies no marker.
#[derive(Debug, Clone)]
pub struct Markers<K> {
    /// Standing markers.
    pub live: BTreeMap<(String, i64), Arc<Standing<K>>>,
}

impl<K> Default for Markers<K> {
    fn default() -> Self {
        Markers {
            live: BTreeMap::new(),
        }
    }
}

impl<K: Clone> Markers<K> {
    /// Applies the markers of one message recorded at `received`.
    pub fn apply(&mut self, ms: Vec<Marker>, received: u64, source: &K) {
        for m in ms {
            match m.action {
                2 => {
                    self.live.remove(&(m.ns, m.id));
                }
                3 => {
                    if m.ns.is_empty() {
                        self.live.clear();
                    } else {
                        self.live.retain(|(ns, _), _| *ns != m.ns);
                    }
                }
                _ => {
                    self.live.insert(
                        (m.ns.clone(), m.id),
                        Arc::new(Standing {
                            marker: m,
                            received,
                            source: source.clone(),
                        }),
                    );
                }
            }
        }
    }

    /// The markers still standing at `t` (those whose lifetime has not run out).
    pub fn at(&self, t: u64) -> impl Iterator<Item = &Standing<K>> {
        self.live.values().map(|s| s.as_ref()).filter(move |s| {
            s.marker.lifetime_ns <= 0
                || i128::from(s.received) + s.marker.lifetime_ns > i128::from(t)
        })
    }
}

/// Draws one marker into `scene`, `at` taking its frame to the fixed frame.
pub fn draw(scene: &mut Scene, m: &Marker, at: &Pose) {
    let pose = at.then(&m.pose);
    let s = m.scale;
    let col = |i: usize| m.colors.get(i).copied().unwrap_or(m.color);
    let pt = |p: [f64; 3]| pose.apply(p);
    match m.kind {
        0 => {
            if m.points.len() >= 2 {
                let head_len = if s[2] > 0.0 { s[2] } else { s[1] * 2.0 };
                scene.arrow(
                    pt(m.points[0]),
                    pt(m.points[1]),
                    s[0],
                    s[1],
                    head_len,
                    m.color,
                );
            } else {
                let b = pose.apply([s[0], 0.0, 0.0]);
                let w = s[1].max(s[2]);
                scene.arrow(pose.t, b, w * 0.5, w, s[0] * 0.23, m.color);
            }
        }
        1 => scene.cube(&pose, s, m.color),
        2 => scene.sphere(&pose, s, m.color),
        3 => scene.cylinder(&pose, s, m.color),
        4 => {
            for i in 1..m.points.len() {
                scene.line(pt(m.points[i - 1]), pt(m.points[i]), col(i), s[0]);
            }
        }
        5 => {
            for i in (1..m.points.len()).step_by(2) {
                scene.line(pt(m.points[i - 1]), pt(m.points[i]), col(i), s[0]);
            }
        }
        6 | 7 => {
            for (i, &p) in m.points.iter().enumerate() {
                // A list of a million spheres would be hundreds of millions of triangles.
                if scene.triangle_count() > super::MAX_TRIANGLES {
                    break;
                }
                let at = Pose {
                    t: pt(p),
                    q: pose.q,
                };
                if m.kind == 6 {
                    scene.cube(&at, s, col(i));
                } else {
                    scene.sphere(&at, s, col(i));
                }
            }
        }
        8 => {
            for (i, &p) in m.points.iter().enumerate() {
                scene.point(pt(p), col(i), s[0]);
            }
        }
        9 => scene.label(pose.t, &m.text, m.color, s[2]),
        11 => {
            for (i, t) in m.points.chunks_exact(3).enumerate() {
                scene.triangle_colored(
                    [pt(t[0]), pt(t[1]), pt(t[2])],
                    [col(3 * i), col(3 * i + 1), col(3 * i + 2)],
                );
            }
        }
        // MESH_RESOURCE (10) names a file outside the recording: a box stands in for it.
        _ => scene.cube(&pose, s, m.color),
    }
}
