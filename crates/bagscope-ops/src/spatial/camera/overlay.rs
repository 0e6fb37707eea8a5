//! What is drawn over one camera image: the annotation topics matched to it by header stamp,
//! and the chosen 3D layers (clouds, scans, markers, the TF tree's axes) projected through the
//! camera's calibration at the image's stamp, with the transform from the TF tree at that
//! stamp. Clouds and scans are painted into a transparent layer the image's size (a million
//! points are one texture, not a million shapes); markers, axes and annotations stay shapes,
//! drawn crisp at any zoom. Run on a worker (the app's image worker, `bagscope image`).

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

use super::project::{line_shape, marker_shapes, paint_points, text_shape};
use super::{is_calibration_type, Camera};
use crate::geom::Pose;
use crate::media::annotate::index::Index;
use crate::media::annotate::Shape;
use crate::reports::timing::StampReader;
use crate::spatial::scene::cloud::{cloud1, cloud2, scan, Paint, Points};
use crate::spatial::scene::markers;
use crate::spatial::scene::read::header;
use crate::spatial::tf::TfHistory;
use crate::Result;
use bagscope_reader::storage::IndexEntry;
use bagscope_reader::Bag;

/// What an image panel lays over its image, as the user set it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Layers {
    /// Annotation topics (ImageMarker, ImageMarkerArray, ImageAnnotations).
    pub annotations: Vec<String>,
    /// How far an annotation's stamp may be from the image's (ns; 0: exact).
    pub tolerance_ns: u64,
    /// The calibration topic (`None`: found beside the image topic).
    pub calibration: Option<String>,
    /// 3D topics projected into the image (PointCloud2, PointCloud, LaserScan, markers).
    pub projected: Vec<String>,
    /// Paint projected points by this field (`None`: by depth).
    pub color_field: Option<String>,
    /// Draw the TF tree's frames as axes.
    pub tf_axes: bool,
    /// The image shown is rectified (an `image_rect` topic, or the rectify toggle): project
    /// through `P` rather than `K` and the lens.
    pub rectified: bool,
    /// Size of a projected point, pixels.
    pub point_size: f32,
    /// Draw the robot model (its links at the image's stamp) into the image.
    pub robot: bool,
}

/// What to draw over one image.
#[derive(Debug, Clone, Default)]
pub struct Overlay {
    /// Shapes in the image's pixels (annotations, projected markers and axes).
    pub shapes: Vec<Shape>,
    /// Projected clouds and scans, painted: RGBA, the image's size (`None` where none).
    pub raster: Option<(u32, u32, Vec<u8>)>,
    /// The image's stamp used (its header's, else its receive time).
    pub stamp: u64,
    /// The calibration used.
    pub camera: Option<Camera>,
    /// Points of 3D layers that landed in the image.
    pub projected_points: usize,
    /// Pixels the robot model covers.
    pub robot_pixels: usize,
    /// Time to match, read and project (ms).
    pub ms: f64,
    /// An annotation topic's stamps are still being read: ask again.
    pub pending: bool,
    /// What went wrong or was left out, each said once.
    pub notes: Vec<String>,
}

/// The calibration topic beside `image_topic`: `…/camera_info` in its namespace (or its
/// parent's, for `…/image_raw/compressed`), else the recording's only calibration topic.
pub fn calibration_beside(bag: &Bag, image_topic: &str) -> Option<String> {
    let s = bag.summary();
    let cals: Vec<&str> = s
        .topics
        .iter()
        .filter(|t| is_calibration_type(&t.datatype))
        .map(|t| t.name.as_str())
        .collect();
    calibration_among(&cals, image_topic).map(str::to_string)
}

/// [`calibration_beside`] among the calibration topics `cals`.
pub fn calibration_among<'a>(cals: &[&'a str], image_topic: &str) -> Option<&'a str> {
    let mut ns = image_topic;
    while let Some(i) = ns.rfind('/') {
        ns = &ns[..i];
        for name in ["camera_info", "calibration", "camera_calibration"] {
            let want = format!("{ns}/{name}");
            if let Some(c) = cals.iter().find(|c| **c == want) {
                return Some(c);
            }
        }
    }
    (cals.len() == 1).then(|| cals[0])
}

/// The message of `topic` last received at or before `t` (its first where `t` is `None`).
pub fn message_at_or_before(
    bag: &Bag,
    topic: &str,
    t: Option<u64>,
) -> Result<Option<(usize, IndexEntry)>> {
    let conns = bag.connections_of_topics(&[topic])?;
    let tables = bag.tables()?;
    let mut best: Option<(usize, IndexEntry)> = None;
    for c in conns {
        let Some(es) = tables.per_connection.get(c) else {
            continue;
        };
        let e = match t {
            None => es.first(),
            Some(t) => es
                .partition_point(|e| e.time_ns <= t)
                .checked_sub(1)
                .and_then(|k| es.get(k)),
        };
        if let Some(e) = e {
            let better = best.is_none_or(|b| match t {
                None => e.time_ns < b.1.time_ns,
                Some(_) => e.time_ns > b.1.time_ns,
            });
            if better {
                best = Some((c, *e));
            }
        }
    }
    Ok(best)
}

/// Whether a type is a 3D layer an image can have projected into it: clouds, scans, markers.
pub fn is_projectable_type(datatype: &str) -> bool {
    use crate::spatial::scene::Kind;
    matches!(
        Kind::of(datatype),
        Some(Kind::Cloud2 | Kind::Cloud1 | Kind::Scan | Kind::Markers)
    )
}

/// Whether a topic name says its images are rectified (`image_rect`, `image_rect_color`).
pub fn is_rectified_topic(topic: &str) -> bool {
    topic.split('/').any(|p| p.starts_with("image_rect"))
}

/// The transform tree an overlayer projects with, as far as its caller has it.
#[derive(Debug, Clone, Default)]
pub enum Transforms {
    /// Read.
    Read(Arc<TfHistory>),
    /// Being read: nothing is projected until it is in.
    Reading,
    /// It could not be read (why): nothing is projected.
    Failed(String),
    /// The recording has none: layers are taken as in the camera's frame.
    #[default]
    None,
}

impl PartialEq for Transforms {
    fn eq(&self, o: &Transforms) -> bool {
        match (self, o) {
            (Transforms::Read(a), Transforms::Read(b)) => Arc::ptr_eq(a, b),
            (Transforms::Failed(a), Transforms::Failed(b)) => a == b,
            (Transforms::Reading, Transforms::Reading) | (Transforms::None, Transforms::None) => {
                true
            }
            _ => false,
        }
    }
}

impl From<Option<Arc<TfHistory>>> for Transforms {
    fn from(t: Option<Arc<TfHistory>>) -> Transforms {
        t.map_or(Transforms::None, Transforms::Read)
    }
}

/// Works out overlays, keeping what it read (annotation indexes, calibrations) from one image
/// to the next.
pub struct Overlayer {
    bag: Bag,
    tf: Transforms,
    indexes: HashMap<String, Stamps>,
    cameras: HashMap<(usize, IndexEntry), std::result::Result<Camera, String>>,
    /// Read an annotation topic's stamps before answering (the command line), rather than on a
    /// thread of its own while the images go on (the app).
    wait: bool,
    /// Set when the overlayer is dropped: stops the stamp readers.
    stop: Arc<AtomicBool>,
    /// Per connection, how its header stamp is read from the bytes (`None`: decode).
    stamp_readers: HashMap<usize, Option<Arc<StampReader>>>,
    /// The 3D layers' messages last read (a 10 Hz cloud under a 30 Hz camera is read once).
    read: Vec<(LayerKey, Arc<Layer>)>,
    /// The last cloud painted, and what it was painted for: the next image with the same
    /// cloud, camera and pose (a camera on the robot, a cloud in the robot's frame) takes it.
    painted: Option<(Painted, Arc<PaintedLayer>)>,
    /// The robot model, read when first drawn, and its layer painted last.
    robot: super::robot::RobotLayer,
    /// The robot drawn into the image being worked out: clouds behind it are hidden.
    robot_drawn: Option<Arc<super::robot::PaintedRobot>>,
}

/// A cloud painted: its RGBA layer, and how many points landed in the image.
type PaintedLayer = (Vec<u8>, usize);

/// What a painted cloud depends on.
#[derive(PartialEq)]
struct Painted {
    layer: LayerKey,
    place: Pose,
    camera: Camera,
    size: (u32, u32),
    rectified: bool,
    point_size: f32,
    /// The robot's painting that hides the points behind it.
    robot: Option<u64>,
}

/// A 3D layer's message and how its points are painted.
type LayerKey = (usize, IndexEntry, Option<String>);
/// Its points (clouds, scans) or markers.
type Layer = (Option<Points>, Vec<markers::Marker>);

/// An annotation topic's stamps: being read (a whole recording's chunks may have to be read
/// for them), or read.
enum Stamps {
    Reading(std::sync::mpsc::Receiver<std::result::Result<Arc<Index>, String>>),
    Read(std::result::Result<Arc<Index>, String>),
}

impl Drop for Overlayer {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

impl Overlayer {
    /// An overlayer over `bag`, with its transform tree where it has one.
    pub fn new(bag: Bag, tf: Transforms) -> Overlayer {
        Overlayer {
            bag,
            tf,
            indexes: HashMap::new(),
            cameras: HashMap::new(),
            wait: false,
            stop: Arc::new(AtomicBool::new(false)),
            stamp_readers: HashMap::new(),
            read: Vec::new(),
            painted: None,
            robot: super::robot::RobotLayer::new(None),
            robot_drawn: None,
        }
    }

    /// Draws the robot of the URDF file `urdf` in place of the recording's description.
    pub fn with_urdf(mut self, urdf: Option<std::path::PathBuf>) -> Overlayer {
        self.robot = super::robot::RobotLayer::new(urdf);
        self
    }

    /// Reads annotation stamps before answering (for one image on the command line).
    pub fn waiting(mut self) -> Overlayer {
        self.wait = true;
        self
    }

    /// Replaces the transform tree (read later than the overlayer was made).
    pub fn set_tf(&mut self, tf: Transforms) {
        self.tf = tf;
    }

    /// The annotation index of `topic`, read once on a thread of its own; `Ok(None)` while it
    /// is being read.
    fn index(&mut self, topic: &str) -> std::result::Result<Option<Arc<Index>>, String> {
        if self.wait && !self.indexes.contains_key(topic) {
            let r = Index::build(&self.bag, topic, &self.stop)
                .map(Arc::new)
                .map_err(|e| format!("{topic}: {e}"));
            self.indexes.insert(topic.to_string(), Stamps::Read(r));
        }
        let st = match self.indexes.remove(topic) {
            Some(Stamps::Reading(rx)) => match rx.try_recv() {
                Ok(r) => Stamps::Read(r),
                Err(std::sync::mpsc::TryRecvError::Empty) => Stamps::Reading(rx),
                Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                    Stamps::Read(Err(format!("{topic}: reading its stamps stopped")))
                }
            },
            Some(read) => read,
            None => {
                let (tx, rx) = std::sync::mpsc::sync_channel(1);
                let (bag, t, stop) = (self.bag.clone(), topic.to_string(), Arc::clone(&self.stop));
                let spawned = std::thread::Builder::new()
                    .name("annotation-stamps".into())
                    .spawn(move || {
                        let r = Index::build(&bag, &t, &stop)
                            .map(Arc::new)
                            .map_err(|e| format!("{t}: {e}"));
                        let _ = tx.send(r);
                    });
                match spawned {
                    Ok(_) => Stamps::Reading(rx),
                    Err(e) => Stamps::Read(Err(format!("{topic}: {e}"))),
                }
            }
        };
        let out = match &st {
            Stamps::Reading(_) => Ok(None),
            Stamps::Read(r) => r.clone().map(Some),
        };
        self.indexes.insert(topic.to_string(), st);
        out
    }

    /// The message of `topic` at or before `t` (receive time), else its first.
    fn message_at(&self, topic: &str, t: u64) -> Result<Option<(usize, IndexEntry)>> {
        Ok(match message_at_or_before(&self.bag, topic, Some(t))? {
            Some(m) => Some(m),
            None => message_at_or_before(&self.bag, topic, None)?,
        })
    }

    /// The calibration on `topic` for an image received at `t`.
    pub fn camera(&mut self, topic: &str, t: u64) -> std::result::Result<Camera, String> {
        let (conn, entry) = self
            .message_at(topic, t)
            .map_err(|e| e.to_string())?
            .ok_or_else(|| format!("{topic} has no calibration"))?;
        if let Some(c) = self.cameras.get(&(conn, entry)) {
            return c.clone();
        }
        let r = (|| {
            let (plan, _) = self.bag.plan(conn).map_err(|e| e.to_string())?;
            let m = self.bag.message(conn, entry).map_err(|e| e.to_string())?;
            let node = plan.decode(&m.data).map_err(|e| e.to_string())?;
            Camera::from_message(&plan.def, &node)
        })()
        .map_err(|e| format!("{topic}: {e}"));
        if self.cameras.len() > 64 {
            self.cameras.clear();
        }
        self.cameras.insert((conn, entry), r.clone());
        r
    }

    /// The header stamp of the message `(conn, entry)` (`None` where it has none): read from
    /// its bytes where the encoding allows (the image's pixels are not decoded again), else
    /// from the decoded message (Foxglove's `timestamp`, protobuf).
    pub fn stamp_of(&mut self, conn: usize, entry: IndexEntry) -> Option<u64> {
        let (plan, _) = self.bag.plan(conn).ok()?;
        let reader = self
            .stamp_readers
            .entry(conn)
            .or_insert_with(|| StampReader::new(&plan).ok().map(Arc::new))
            .clone();
        let m = self.bag.message(conn, entry).ok()?;
        if let Some(r) = reader {
            return r
                .read(&m.data)
                .and_then(|s| u64::try_from(s).ok())
                .filter(|&s| s > 0);
        }
        let node = plan.decode(&m.data).ok()?;
        header(&plan.def, &node).1
    }

    /// The overlay of the image `(conn, entry)` of `image_topic`, `size` pixels as shown.
    pub fn overlay(
        &mut self,
        image_topic: &str,
        image: (usize, IndexEntry),
        size: (u32, u32),
        layers: &Layers,
    ) -> Overlay {
        let t0 = Instant::now();
        let mut out = Overlay::default();
        let received = image.1.time_ns;
        out.stamp = match self.stamp_of(image.0, image.1) {
            Some(s) => s,
            None => {
                out.notes.push(format!(
                    "{image_topic} has no header stamp: matched by receive time"
                ));
                received
            }
        };
        for topic in &layers.annotations {
            let ix = match self.index(topic) {
                Ok(Some(ix)) => ix,
                Ok(None) => {
                    out.pending = true;
                    out.notes.push(format!("reading {topic}'s stamps…"));
                    continue;
                }
                Err(e) => {
                    out.notes.push(e);
                    continue;
                }
            };
            match ix.at(&self.bag, out.stamp, layers.tolerance_ns) {
                Ok(m) => {
                    out.shapes.extend(m.shapes);
                    out.notes.extend(m.notes);
                }
                Err(e) => out.notes.push(format!("{topic}: {e}")),
            }
        }
        let wants_3d = !layers.projected.is_empty() || layers.tf_axes || layers.robot;
        if wants_3d {
            let cal = layers
                .calibration
                .clone()
                .or_else(|| calibration_beside(&self.bag, image_topic));
            match cal {
                None => out
                    .notes
                    .push("no calibration topic: nothing projected".into()),
                Some(cal) => match self.camera(&cal, received) {
                    Ok(cam) => {
                        self.project(&cam, size, layers, &mut out);
                        out.camera = Some(cam);
                    }
                    Err(e) => out.notes.push(e),
                },
            }
        }
        out.ms = t0.elapsed().as_secs_f64() * 1e3;
        out
    }

    fn project(&mut self, cam: &Camera, size: (u32, u32), layers: &Layers, out: &mut Overlay) {
        self.robot_drawn = None;
        let drawn = cam.image_size();
        if drawn != size {
            out.notes.push(format!(
                "the calibration is for {}×{} images, this one is {}×{}",
                drawn.0, drawn.1, size.0, size.1
            ));
        }
        let tf = match self.tf.clone() {
            Transforms::Read(tf) => tf,
            Transforms::Reading => {
                out.notes.push("reading the transforms…".into());
                return;
            }
            Transforms::Failed(why) => {
                out.notes
                    .push(format!("the transforms could not be read: {why}"));
                return;
            }
            Transforms::None => {
                out.notes.push(
                    "the recording has no transforms: layers taken as in the camera's frame".into(),
                );
                if layers.robot {
                    out.notes
                        .push("the recording has no transforms: the robot is not placed".into());
                }
                self.layers(cam, None, size, layers, out);
                return;
            }
        };
        if layers.robot {
            self.robot(cam, &tf, size, layers, out);
        }
        self.layers(cam, Some(&tf), size, layers, out);
        if layers.tf_axes {
            for x in tf.tree_at(out.stamp) {
                let name = &tf.frames[x.frame];
                let Ok(p) = tf.lookup(&cam.frame, name, out.stamp) else {
                    continue;
                };
                let o = p.apply([0.0; 3]);
                for (axis, col) in [
                    ([0.3, 0.0, 0.0], [230, 60, 60, 255]),
                    ([0.0, 0.3, 0.0], [60, 200, 60, 255]),
                    ([0.0, 0.0, 0.3], [70, 110, 240, 255]),
                ] {
                    let mut s = line_shape(
                        cam,
                        layers.rectified,
                        &[o, p.apply(axis)],
                        false,
                        format!("frame {name}"),
                    );
                    s.color = col;
                    s.thickness = 2.0;
                    if s.points.len() > 1 {
                        out.shapes.push(s);
                    }
                }
                if let Some(px) = cam.project(o, layers.rectified) {
                    let mut s = text_shape(px, name, [235, 235, 235, 255], format!("frame {name}"));
                    s.font_size = 11.0;
                    out.shapes.push(s);
                }
            }
        }
    }

    /// The robot model painted as the base of the raster, its links placed at the image's
    /// stamp.
    fn robot(
        &mut self,
        cam: &Camera,
        tf: &TfHistory,
        size: (u32, u32),
        layers: &Layers,
        out: &mut Overlay,
    ) {
        let stamp = out.stamp;
        let painted = self
            .robot
            .paint(&self.bag, cam, (size, layers.rectified), |link| {
                Self::place(cam, Some(tf), link, stamp)
            });
        match painted {
            Ok((done, notes)) => {
                out.robot_pixels = done.covered;
                out.notes.extend(notes);
                if done.covered > 0 {
                    out.raster = Some((size.0, size.1, done.px.clone()));
                    self.robot_drawn = Some(done);
                }
            }
            Err(e) => out.notes.push(e),
        }
    }

    /// Where frame `frame`'s points are in the camera's frame at the image's stamp.
    fn place(
        cam: &Camera,
        tf: Option<&TfHistory>,
        frame: &str,
        stamp: u64,
    ) -> std::result::Result<Pose, String> {
        let Some(tf) = tf else {
            return Ok(Pose::IDENTITY);
        };
        if frame.is_empty() || frame == cam.frame {
            return Ok(Pose::IDENTITY);
        }
        tf.lookup_between(&cam.frame, frame, stamp)
            .map_err(|e| e.to_string())
    }

    fn layers(
        &mut self,
        cam: &Camera,
        tf: Option<&TfHistory>,
        size: (u32, u32),
        layers: &Layers,
        out: &mut Overlay,
    ) {
        // Over the robot, where it was drawn.
        let mut raster: Option<Vec<u8>> = out.raster.take().map(|r| r.2);
        for topic in &layers.projected {
            let read = self.read_layer(topic, out.stamp, layers);
            let (key_of_layer, layer) = match read {
                Ok(x) => x,
                Err(e) => {
                    out.notes.push(format!("{topic}: {e}"));
                    continue;
                }
            };
            let (points, marks) = (&layer.0, &layer.1);
            if let Some(p) = points {
                let place = match Self::place(cam, tf, &p.frame, out.stamp) {
                    Ok(x) => x,
                    Err(e) => {
                        out.notes.push(format!("{topic}: {e}"));
                        continue;
                    }
                };
                let key = Painted {
                    layer: key_of_layer.clone(),
                    place,
                    // (The calibration as a model: a new message of the same one matches.)
                    camera: Camera {
                        stamp: None,
                        ..cam.clone()
                    },
                    size,
                    rectified: layers.rectified,
                    point_size: layers.point_size,
                    robot: self.robot_drawn.as_ref().map(|r| r.generation),
                };
                let done = match &self.painted {
                    Some((k, d)) if *k == key => Arc::clone(d),
                    _ => {
                        let mut px = vec![0; size.0 as usize * size.1 as usize * 4];
                        let behind = self.robot_drawn.as_ref().map(|r| r.depth.as_slice());
                        let n = paint_points(cam, &place, p, size, layers, behind, &mut px);
                        let d = Arc::new((px, n));
                        self.painted = Some((key, Arc::clone(&d)));
                        d
                    }
                };
                out.projected_points += done.1;
                match raster.as_mut() {
                    None => raster = Some(done.0.clone()),
                    Some(r) => {
                        // Over the layers painted before it.
                        for (o, c) in r.chunks_exact_mut(4).zip(done.0.chunks_exact(4)) {
                            if c[3] > 0 {
                                o.copy_from_slice(c);
                            }
                        }
                    }
                }
            }
            for m in marks {
                let place = match Self::place(cam, tf, &m.frame, out.stamp) {
                    Ok(x) => x.then(&m.pose),
                    Err(e) => {
                        out.notes.push(format!("{topic} {}/{}: {e}", m.ns, m.id));
                        continue;
                    }
                };
                out.shapes
                    .extend(marker_shapes(cam, layers.rectified, &place, m, topic));
            }
        }
        out.raster = raster.map(|r| (size.0, size.1, r));
    }

    /// The points or markers of `topic`'s message at or before `t`.
    fn read_layer(
        &mut self,
        topic: &str,
        t: u64,
        layers: &Layers,
    ) -> std::result::Result<(LayerKey, Arc<Layer>), String> {
        let (conn, entry) = self
            .message_at(topic, t)
            .map_err(|e| e.to_string())?
            .ok_or("no message")?;
        let key = (conn, entry, layers.color_field.clone());
        if let Some((_, l)) = self.read.iter().find(|(k, _)| *k == key) {
            return Ok((key, Arc::clone(l)));
        }
        let l = Arc::new(self.decode_layer(conn, entry, layers)?);
        self.read.push((key.clone(), Arc::clone(&l)));
        if self.read.len() > 8 {
            self.read.remove(0);
        }
        Ok((key, l))
    }

    fn decode_layer(
        &self,
        conn: usize,
        entry: IndexEntry,
        layers: &Layers,
    ) -> std::result::Result<Layer, String> {
        let s = self.bag.summary();
        let ty = s
            .connections
            .get(conn)
            .map(|c| c.datatype.replace("/msg/", "/"))
            .unwrap_or_default();
        let (plan, _) = self.bag.plan(conn).map_err(|e| e.to_string())?;
        let m = self.bag.message(conn, entry).map_err(|e| e.to_string())?;
        let node = plan.decode(&m.data).map_err(|e| e.to_string())?;
        let def = &plan.def;
        let paint = match &layers.color_field {
            Some(f) => Paint::Field(f.clone()),
            None => Paint::Flat,
        };
        Ok(match ty.as_str() {
            "sensor_msgs/PointCloud2" | "foxglove.PointCloud" => {
                (Some(cloud2(def, &node, &paint)?), Vec::new())
            }
            "sensor_msgs/PointCloud" => (Some(cloud1(def, &node, &paint)?), Vec::new()),
            "sensor_msgs/LaserScan" | "foxglove.LaserScan" => (Some(scan(def, &node)?), Vec::new()),
            _ => (None, markers::parse(def, &node)?),
        })
    }
}
