//! A 3D scene of a recording at one time: point clouds, laser scans, markers, poses, paths,
//! maps, camera frustums and the TF tree, each message placed in a fixed frame through the
//! recording's transform history ([`TfHistory`]). What the app's 3D panel draws; built on a
//! worker into plain arrays (points, lines, triangles, labels) that the renderer uploads as
//! they are.
//!
//! A message is placed by the transform at its `header.stamp` where the stamp lies on the
//! recording's clock (within the recording's span, as it does for a live recording), else at
//! the time it was recorded (a simulation clock, or no stamp). A marker with `frame_locked`
//! follows its frame at the scene's time. An object whose transform is missing is left out and
//! its layer says why.

pub mod cloud;
pub mod marker_bytes;
pub mod markers;
mod nav;
mod pool;
pub mod read;
mod replay;
pub(crate) mod robot;
pub mod shapes;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use self::cloud::{Paint, Points};
use self::replay::Replay;
use crate::geom::{Affine32, Pose};
use crate::spatial::tf::TfHistory;
use crate::timefmt::thousands;
use bagscope_reader::encoding::Plan;
use bagscope_reader::storage::MessageTables;
use bagscope_reader::Bag;

mod model;

use model::MAP_SIDE;
pub use model::{
    CloudDraw, CloudPaint, Frames, Kind, Label, Layer, MeshDraw, Pick, PointSet, Request, Rgba,
    Scene, Source, Status, Values, MAX_SCENE_POINTS, MAX_TRIANGLES,
};
use nav::{covariance, grid, map};
pub use pool::ScenePool;
pub use shapes::{Shape, Solid, UnitMesh};

#[derive(Clone, PartialEq, Eq, Hash)]
struct CloudKey {
    source: Source,
    kind: Kind,
}

/// Builds scenes of one recording, keeping what later scenes reuse: the decoding plans, the
/// decoded clouds of the last seconds, and each marker layer's state.
pub struct Builder {
    bag: Bag,
    tables: Arc<MessageTables>,
    tf: Option<Arc<TfHistory>>,
    plans: HashMap<usize, Result<Arc<Plan>, String>>,
    /// Clouds read, oldest first, kept up to [`CACHE_BYTES`]: a message within a layer's
    /// decay is read once, not once a scene.
    clouds: Vec<(CloudKey, Arc<Points>)>,
    cloud_bytes: usize,
    replays: HashMap<String, Replay>,
    /// The recording's span (ns), to tell stamps on its clock.
    span: (u64, u64),
    /// With no fixed frame asked for: the first frame met, which everything is drawn in.
    adopted: std::cell::RefCell<Option<String>>,
    /// The robot model, read at the first scene that draws it (`Some(None)`: there is none).
    robot: Option<Option<Result<robot::Robot, String>>>,
    /// A URDF file that stands for the recording's robot description (`--urdf`).
    urdf: Option<std::path::PathBuf>,
    /// Where scenes' buffers come from and go back to.
    pool: Option<ScenePool>,
}

/// The memory budget of clouds kept read across scenes (bytes of positions, values and
/// colours): 1 GiB, over twice what [`MAX_SCENE_POINTS`] points take, so every cloud a scene
/// draws stays read; beyond it the oldest read go first.
pub const CACHE_BYTES: usize = 1 << 30;

impl Builder {
    /// A builder over `bag` (its tables built) and, when it has one, its transform history.
    pub fn new(bag: Bag, tables: Arc<MessageTables>, tf: Option<Arc<TfHistory>>) -> Builder {
        let s = bag.summary();
        let span = (
            s.start_ns.unwrap_or(0).saturating_sub(5_000_000_000),
            s.end_ns.unwrap_or(u64::MAX).saturating_add(5_000_000_000),
        );
        Builder {
            bag,
            tables,
            tf,
            plans: HashMap::new(),
            clouds: Vec::new(),
            cloud_bytes: 0,
            replays: HashMap::new(),
            span,
            adopted: std::cell::RefCell::new(None),
            robot: None,
            urdf: None,
            pool: None,
        }
    }

    /// The builder with its scenes' buffers taken from `pool` and given back to it when a
    /// scene is dropped (`None`: each scene allocated and freed on its own).
    pub fn with_pool(mut self, pool: Option<ScenePool>) -> Builder {
        self.pool = pool;
        self
    }

    /// The builder with the robot model read from the URDF file `urdf` in place of the
    /// recording's description (`None`: the recording's own).
    pub fn with_urdf(mut self, urdf: Option<std::path::PathBuf>) -> Builder {
        self.urdf = urdf;
        self
    }

    /// Swaps in the transform history once it has been read.
    pub fn set_tf(&mut self, tf: Option<Arc<TfHistory>>) {
        self.tf = tf;
    }

    fn plan(&mut self, conn: usize) -> Result<Arc<Plan>, String> {
        let bag = &self.bag;
        self.plans
            .entry(conn)
            .or_insert_with(|| bag.plan(conn).map(|(p, _)| p).map_err(|e| e.to_string()))
            .clone()
    }

    /// The messages of `topic` recorded in `[from, to]`, in time order; with `from == None`,
    /// the last one at or before `to`.
    fn sources(&self, topic: &str, from: Option<u64>, to: u64) -> Vec<Source> {
        let out = self.between(topic, from, to);
        // A decay shorter than the gap between messages still shows the latest.
        if out.is_empty() && from.is_some() {
            return self.between(topic, None, to);
        }
        out
    }

    /// The messages of `topic` recorded in `[from, to]` (none there: none), or with
    /// `from == None` the last at or before `to`.
    fn between(&self, topic: &str, from: Option<u64>, to: u64) -> Vec<Source> {
        let s = self.bag.summary();
        let Some(tp) = s.topics.iter().find(|t| t.name == topic) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for &c in &tp.connections {
            let Some(v) = self.tables.per_connection.get(c) else {
                continue;
            };
            let end = v.partition_point(|e| e.time_ns <= to);
            let start = match from {
                Some(f) => v.partition_point(|e| e.time_ns < f),
                None => end.saturating_sub(1),
            };
            out.extend(v[start..end].iter().map(|&entry| Source { conn: c, entry }));
        }
        out.sort_by_key(|s| s.entry.time_ns);
        if from.is_none() && out.len() > 1 {
            out.drain(..out.len() - 1);
        }
        out
    }

    /// A message's plan and its bytes as stored.
    fn raw(&mut self, src: Source) -> Result<(Arc<Plan>, bagscope_reader::storage::Bytes), String> {
        let plan = self.plan(src.conn)?;
        let m = self
            .bag
            .message(src.conn, src.entry)
            .map_err(|e| e.to_string())?;
        Ok((plan, m.data))
    }

    fn decode(
        &mut self,
        src: Source,
    ) -> Result<(Arc<Plan>, bagscope_reader::encoding::Node), String> {
        let (plan, data) = self.raw(src)?;
        let node = plan.decode(&data).map_err(|e| e.to_string())?;
        Ok((plan, node))
    }

    /// The time a message is placed at: its stamp where that is on the recording's clock.
    fn when(&self, stamp: Option<u64>, received: u64) -> u64 {
        match stamp {
            Some(s) if s >= self.span.0 && s <= self.span.1 => s,
            _ => received,
        }
    }

    /// The transform taking `frame` to `fixed` at `t`.
    fn place(&self, fixed: &str, frame: &str, t: u64) -> Result<Pose, String> {
        let frame = frame.trim_start_matches('/');
        // No fixed frame (a recording without transforms): the first frame met is it.
        let adopted;
        let fixed = if fixed.is_empty() {
            adopted = self
                .adopted
                .borrow_mut()
                .get_or_insert_with(|| frame.to_string())
                .clone();
            adopted.as_str()
        } else {
            fixed
        };
        if frame.is_empty() || frame == fixed {
            return Ok(Pose::IDENTITY);
        }
        let Some(tf) = &self.tf else {
            return Err(format!(
                "no transform from {frame} to {fixed}: the recording has no TF"
            ));
        };
        tf.lookup_between(fixed, frame, t)
            .map_err(|e| format!("no transform from {frame} to {fixed}: {e}"))
    }

    /// A message's points as read, with every column and colour it has: read once whatever
    /// it is painted by.
    fn cloud(&mut self, kind: Kind, src: Source) -> Result<Arc<Points>, String> {
        let key = CloudKey { source: src, kind };
        if let Some((_, p)) = self.clouds.iter().find(|(k, _)| *k == key) {
            return Ok(Arc::clone(p));
        }
        let (plan, node) = self.decode(src)?;
        let def = &plan.def;
        let mut p = match kind {
            Kind::Cloud2 => cloud::cloud2(def, &node, &Paint::Flat)?,
            Kind::Cloud1 => cloud::cloud1(def, &node, &Paint::Flat)?,
            _ => cloud::scan(def, &node)?,
        };
        p.measure();
        let p = Arc::new(p);
        self.cloud_bytes += p.bytes();
        self.clouds.push((key, Arc::clone(&p)));
        while self.cloud_bytes > CACHE_BYTES && self.clouds.len() > 1 {
            let (_, old) = self.clouds.remove(0);
            self.cloud_bytes -= old.bytes();
        }
        Ok(p)
    }

    /// Builds the scene `req` asks for. Checks `cancel` between messages: a cancelled build
    /// returns what it had.
    pub fn build(&mut self, req: &Request, cancel: &AtomicBool) -> Scene {
        let t0 = std::time::Instant::now();
        let mut scene = self
            .pool
            .as_ref()
            .map_or_else(Scene::default, ScenePool::take);
        scene.t = req.t;
        scene.fixed = req.fixed.clone();
        if req.grid > 0 {
            grid(&mut scene, req.grid);
        }
        for (i, layer) in req.layers.iter().enumerate() {
            let mut st = Status {
                topic: layer.topic.clone(),
                ..Default::default()
            };
            if layer.visible {
                self.layer(&mut scene, req, i, layer, &mut st, cancel);
            } else {
                st.text = "hidden".into();
            }
            scene.status.push(st);
            if cancel.load(Ordering::Relaxed) {
                break;
            }
        }
        if req.fixed.is_empty() {
            if let Some(f) = self.adopted.borrow().clone() {
                scene.frame_names.push(f.clone());
                scene.fixed = f;
            }
        }
        self.frames(&mut scene, req);
        if req.frames.robot && !cancel.load(Ordering::Relaxed) {
            let mut r = self
                .robot
                .take()
                .unwrap_or_else(|| robot::load(&self.bag, self.urdf.as_deref()));
            match &mut r {
                Some(Ok(rb)) => {
                    scene.robot_status =
                        rb.draw(&mut scene, (req.frames.collision, &req.fixed), |link| {
                            self.place(&req.fixed, link, req.t)
                        });
                    if let Some(tf) = &self.tf {
                        let r = &tf.robot;
                        if !r.unknown_joints.is_empty() {
                            scene.robot_status.problems.push(format!(
                                "the joint states name joints the URDF does not have: {}",
                                r.unknown_joints.join(", ")
                            ));
                        }
                    }
                }
                Some(Err(e)) => {
                    scene.robot_status = Status {
                        topic: "/robot_description".into(),
                        text: "the robot model is not drawn".into(),
                        problems: vec![e.clone()],
                        ..Default::default()
                    };
                }
                None => {}
            }
            self.robot = Some(r);
        }
        scene.build_ms = t0.elapsed().as_secs_f64() * 1e3;
        scene
    }

    fn layer(
        &mut self,
        scene: &mut Scene,
        req: &Request,
        li: usize,
        layer: &Layer,
        st: &mut Status,
        cancel: &AtomicBool,
    ) {
        let from = (layer.decay_s > 0.0).then(|| {
            req.t
                .saturating_sub((f64::from(layer.decay_s) * 1e9) as u64)
        });
        let mut problems: Vec<String> = Vec::new();
        let mut note = |p: String| {
            if !problems.contains(&p) {
                problems.push(p);
            }
        };
        match layer.kind {
            k if k.is_points() => {
                let srcs = self.sources(&layer.topic, from, req.t);
                let paint = match (k, layer.paint()) {
                    // A scan is valued by intensity or range whatever the field's name.
                    (Kind::Scan, Paint::Field(_)) => Paint::Field("value".into()),
                    (_, p) => p,
                };
                let first = scene.clouds.len();
                let mut drawn = 0usize;
                let mut range: Option<(f32, f32)> = None;
                // The newest first, so a cap leaves out the oldest.
                for &src in srcs.iter().rev() {
                    if cancel.load(Ordering::Relaxed) {
                        break;
                    }
                    let pts = match self.cloud(k, src) {
                        Ok(p) => p,
                        Err(e) => {
                            note(format!("{e} (message at {})", src.entry.time_ns));
                            continue;
                        }
                    };
                    if st.fields.is_empty() {
                        st.fields = pts.fields.clone();
                    }
                    let at = self.when(pts.stamp, src.entry.time_ns);
                    let pose = match self.place(&req.fixed, &pts.frame, at) {
                        Ok(p) => p,
                        Err(e) => {
                            note(e);
                            continue;
                        }
                    };
                    if drawn + pts.xyz.len() > MAX_SCENE_POINTS {
                        note(format!(
                            "only the newest {} points are drawn (at most {} a scene)",
                            thousands(drawn),
                            thousands(MAX_SCENE_POINTS)
                        ));
                        scene.clouds_dropped += 1;
                        break;
                    }
                    let rgb = !pts.rgb.is_empty() && paint == Paint::Rgb;
                    // What it is painted by, and that's range: a coordinate, or a column.
                    let (values, span) = match &paint {
                        Paint::Field(f) if !rgb => match f.as_str() {
                            "x" | "y" | "z" => {
                                let a = usize::from(f == "y") + 2 * usize::from(f == "z");
                                (Values::Axis(a), pts.bounds.map(|(lo, hi)| (lo[a], hi[a])))
                            }
                            name => match pts.column(name) {
                                Some(c) => (
                                    Values::Column(c),
                                    pts.column_ranges.get(c).copied().flatten(),
                                ),
                                None => (Values::None, None),
                            },
                        },
                        _ => (Values::None, None),
                    };
                    let valued = values != Values::None;
                    if let Some((a, b)) = span {
                        range = Some(range.map_or((a, b), |(lo, hi)| (lo.min(a), hi.max(b))));
                    }
                    drawn += pts.xyz.len();
                    if st.text.is_empty() {
                        st.text = pts.note.clone();
                    }
                    scene.clouds.push(CloudDraw {
                        id: cloud_id(k, src),
                        layer: li,
                        pose: Affine32::new(&pose).mat4(),
                        size: layer.point_size,
                        paint: if rgb {
                            CloudPaint::Rgb
                        } else if valued {
                            // The layer's range, set below once every cloud is in.
                            CloudPaint::Value {
                                lo: 0.0,
                                hi: 1.0,
                                flat: layer.color,
                            }
                        } else {
                            CloudPaint::Flat(layer.color)
                        },
                        values,
                        points: pts,
                        source: src,
                    });
                }
                // Coloured by value over the values' own range, across the layer's clouds.
                st.range = range;
                let (lo, hi) = range.unwrap_or((0.0, 1.0));
                for c in &mut scene.clouds[first..] {
                    if let CloudPaint::Value { flat, .. } = c.paint {
                        c.paint = CloudPaint::Value { lo, hi, flat };
                    }
                }
                let clouds = scene.clouds.len() - first;
                if clouds > 1 {
                    st.text = format!("{clouds} messages, {} points", thousands(drawn));
                } else if clouds == 0 && srcs.is_empty() {
                    st.text = "no message yet".into();
                }
            }
            Kind::Markers => self.markers(scene, req, layer, st, &mut note, cancel),
            _ => {
                let srcs = self.sources(&layer.topic, from, req.t);
                if srcs.is_empty() {
                    st.text = "no message yet".into();
                }
                let mut drawn = 0;
                for &src in srcs.iter().rev().take(10_000) {
                    if cancel.load(Ordering::Relaxed) {
                        break;
                    }
                    match self.other(scene, req, layer, src) {
                        Ok(n) => drawn += n,
                        Err(e) => note(e),
                    }
                }
                if !srcs.is_empty() {
                    st.text = format!("{} messages, {drawn} drawn", srcs.len());
                }
            }
        }
        st.problems = problems;
    }

    /// Poses, paths, maps and camera frustums: the number of things drawn.
    fn other(
        &mut self,
        scene: &mut Scene,
        req: &Request,
        layer: &Layer,
        src: Source,
    ) -> Result<usize, String> {
        use read::{header, items, numbers, pose, sub};
        let (plan, node) = self.decode(src)?;
        let def = &plan.def;
        let (frame, stamp) = header(def, &node);
        let at = self.when(stamp, src.entry.time_ns);
        let place = self.place(&req.fixed, &frame, at)?;
        let col = layer.color;
        let pick = |scene: &mut Scene, p: [f64; 3], what: String| {
            scene.picks.push(Pick {
                pos: crate::geom::f32s(p),
                what,
                source: Some(src),
            })
        };
        let frame_name = if frame.is_empty() {
            req.fixed.clone()
        } else {
            frame.clone()
        };
        Ok(match layer.kind {
            Kind::Odometry | Kind::PoseCov | Kind::Pose => {
                // Odometry and PoseWithCovariance nest the pose once more.
                let outer = sub(def, &node, "pose").ok_or("no pose field")?;
                let (p, cov) = match sub(def, outer, "pose") {
                    Some(inner) => (pose(def, inner), numbers(def, outer, "covariance")),
                    None => (pose(def, outer), Vec::new()),
                };
                let p = place.then(&p.ok_or("a pose that is not a number")?);
                scene.pose_arrow(&p, 1.0, col);
                if cov.len() == 36 {
                    covariance(scene, &p, &place, &cov, col);
                }
                pick(scene, p.t, format!("{} pose in {frame_name}", layer.topic));
                1
            }
            Kind::PoseArray => {
                let ps = items(def, &node, "poses");
                for q in ps {
                    if let Some(q) = pose(def, q) {
                        scene.pose_arrow(&place.then(&q), 0.5, col);
                    }
                }
                ps.len()
            }
            Kind::Path => {
                let ps: Vec<[f64; 3]> = items(def, &node, "poses")
                    .iter()
                    .filter_map(|s| sub(def, s, "pose").and_then(|p| pose(def, p)))
                    .map(|p| place.apply(p.t))
                    .collect();
                for w in ps.windows(2) {
                    scene.line(w[0], w[1], col, 0.0);
                }
                if let Some(&last) = ps.last() {
                    pick(
                        scene,
                        last,
                        format!(
                            "{} path end ({} poses) in {frame_name}",
                            layer.topic,
                            ps.len()
                        ),
                    );
                }
                ps.len()
            }
            Kind::Map => map(scene, def, &node, &place)?,
            Kind::Camera => {
                let k = numbers(def, &node, "K");
                let k = if k.len() == 9 {
                    k
                } else {
                    numbers(def, &node, "k")
                };
                let w = node.number(def, "width").unwrap_or(0.0);
                let h = node.number(def, "height").unwrap_or(0.0);
                if k.len() != 9 || k[0] <= 0.0 || k[4] <= 0.0 || w <= 0.0 || h <= 0.0 {
                    return Err("camera info without a calibration (K, width, height)".into());
                }
                // The image's corners at 1 m (optical frame: z forward).
                let corner =
                    |u: f64, v: f64| place.apply([(u - k[2]) / k[0], (v - k[5]) / k[4], 1.0]);
                let c = [
                    corner(0.0, 0.0),
                    corner(w, 0.0),
                    corner(w, h),
                    corner(0.0, h),
                ];
                for i in 0..4 {
                    scene.line(place.t, c[i], col, 0.0);
                    scene.line(c[i], c[(i + 1) % 4], col, 0.0);
                }
                1
            }
            _ => 0,
        })
    }

    /// The TF tree at the scene's time: axes, names, links, and a frame's trail.
    fn frames(&mut self, scene: &mut Scene, req: &Request) {
        let Some(tf) = self.tf.clone() else {
            scene.frames_status.text = "the recording has no transforms".into();
            return;
        };
        let f = &req.frames;
        let tree = tf.tree_at(req.t);
        scene.frame_names = tree.iter().map(|x| tf.frames[x.frame].clone()).collect();
        scene.frame_names.sort();
        let mut drawn = 0;
        let mut missing = 0;
        for x in &tree {
            let name = &tf.frames[x.frame];
            if !f.only.is_empty() && !f.only.contains(name) {
                continue;
            }
            let Ok(p) = tf.lookup(&req.fixed, name, req.t) else {
                missing += 1;
                continue;
            };
            if f.axes {
                scene.axes(&p, f64::from(f.size));
            }
            if f.names {
                scene.label(p.t, name, [230, 230, 230, 255], 0.0);
            }
            if f.links {
                if let Some(s) = x.from_parent {
                    if let Ok(pp) = tf.lookup(&req.fixed, &tf.frames[s.parent as usize], req.t) {
                        scene.line(pp.t, p.t, [200, 200, 120, 160], 0.0);
                    }
                }
            }
            scene.picks.push(Pick {
                pos: crate::geom::f32s(p.t),
                what: format!("frame {name} in {}", req.fixed),
                source: None,
            });
            drawn += 1;
        }
        scene.frames_status.text = format!("{drawn} frames");
        if missing > 0 {
            scene
                .frames_status
                .problems
                .push(format!("{missing} frames not connected to {}", req.fixed));
        }
        if !f.trail.is_empty() {
            match tf.track(&req.fixed, &f.trail, 20_000) {
                Ok(track) => {
                    let pts: Vec<[f64; 3]> = track.iter().map(|(_, p)| p.t).collect();
                    for w in pts.windows(2) {
                        scene.line(w[0], w[1], [120, 220, 255, 255], 0.0);
                    }
                }
                Err(e) => scene
                    .frames_status
                    .problems
                    .push(format!("no trail of {}: {e}", f.trail)),
            }
        }
    }
}

/// A cloud's identity: its message and what it was read as (whatever it is painted by).
fn cloud_id(kind: Kind, src: Source) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    (kind, src).hash(&mut h);
    h.finish()
}

/// A marker type's name.
pub fn marker_type(k: i64) -> &'static str {
    match k {
        0 => "ARROW",
        1 => "CUBE",
        2 => "SPHERE",
        3 => "CYLINDER",
        4 => "LINE_STRIP",
        5 => "LINE_LIST",
        6 => "CUBE_LIST",
        7 => "SPHERE_LIST",
        8 => "POINTS",
        9 => "TEXT_VIEW_FACING",
        10 => "MESH_RESOURCE",
        11 => "TRIANGLE_LIST",
        _ => "unknown",
    }
}
