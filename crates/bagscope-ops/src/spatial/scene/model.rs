//! What a scene is: its layers as the user sets them, the request a worker builds from, and the
//! scene built (points, lines, triangles, labels), with its buffers recycled between scenes.

use super::pool::{ScenePool, RECYCLE_BYTES};
use bagscope_reader::storage::IndexEntry;

use std::sync::Arc;

use super::cloud::{Paint, Points};
use super::shapes;
use crate::geom::bounds_of;

/// A colour, 8-bit RGBA.
pub type Rgba = [u8; 4];

/// Most points a scene draws; the oldest clouds of a long decay are left out beyond it.
pub const MAX_SCENE_POINTS: usize = 20_000_000;
/// Most triangles a scene draws (markers, maps); beyond, the layer says what was left out.
pub const MAX_TRIANGLES: usize = 6_000_000;
/// Most cells of a map drawn on a side: a larger grid is drawn coarser.
pub(super) const MAP_SIDE: usize = 1024;

/// What a layer draws, by its message type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Kind {
    /// `sensor_msgs/PointCloud2`.
    Cloud2,
    /// `sensor_msgs/PointCloud`.
    Cloud1,
    /// `sensor_msgs/LaserScan`.
    Scan,
    /// `visualization_msgs/Marker` or `MarkerArray`.
    Markers,
    /// `nav_msgs/Odometry`.
    Odometry,
    /// `geometry_msgs/PoseStamped`.
    Pose,
    /// `geometry_msgs/PoseWithCovarianceStamped`.
    PoseCov,
    /// `geometry_msgs/PoseArray`.
    PoseArray,
    /// `nav_msgs/Path`.
    Path,
    /// `nav_msgs/OccupancyGrid`.
    Map,
    /// `sensor_msgs/CameraInfo`.
    Camera,
}

impl Kind {
    /// The kind of a message type, if the scene draws it (ROS's types, and Foxglove's own
    /// schemas of the same things).
    pub fn of(datatype: &str) -> Option<Kind> {
        let t = datatype.replace("/msg/", "/");
        Some(match t.as_str() {
            "foxglove.PointCloud" => Kind::Cloud2,
            "foxglove.SceneUpdate" => Kind::Markers,
            "foxglove.PoseInFrame" => Kind::Pose,
            "foxglove.PosesInFrame" => Kind::PoseArray,
            "sensor_msgs/PointCloud2" => Kind::Cloud2,
            "sensor_msgs/PointCloud" => Kind::Cloud1,
            "sensor_msgs/LaserScan" => Kind::Scan,
            "visualization_msgs/Marker" | "visualization_msgs/MarkerArray" => Kind::Markers,
            "nav_msgs/Odometry" => Kind::Odometry,
            "geometry_msgs/PoseStamped" => Kind::Pose,
            "geometry_msgs/PoseWithCovarianceStamped" => Kind::PoseCov,
            "geometry_msgs/PoseArray" => Kind::PoseArray,
            "nav_msgs/Path" => Kind::Path,
            "nav_msgs/OccupancyGrid" => Kind::Map,
            "sensor_msgs/CameraInfo" => Kind::Camera,
            _ => return None,
        })
    }

    /// Whether its messages are points (painted, sized, decayed).
    pub fn is_points(self) -> bool {
        matches!(self, Kind::Cloud2 | Kind::Cloud1 | Kind::Scan)
    }
}

/// One layer as the user set it.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Layer {
    /// Its topic.
    pub topic: String,
    /// What it draws.
    pub kind: Kind,
    /// Drawn.
    pub visible: bool,
    /// Points: painted by (`""` flat, `"rgb"` packed colour, else a field's value).
    pub paint: String,
    /// The flat colour (points, arrows, paths).
    pub color: Rgba,
    /// Points: size in pixels.
    pub point_size: f32,
    /// Keep the messages of the last this many seconds (0: only the latest).
    pub decay_s: f32,
}

impl Layer {
    /// A layer on `topic` of `kind` with the defaults a first look wants: clouds painted by
    /// their height, scans by intensity or range, one of a few colours by `index`.
    pub fn new(topic: &str, kind: Kind, index: usize) -> Layer {
        const PALETTE: [Rgba; 6] = [
            [255, 200, 40, 255],
            [80, 200, 255, 255],
            [255, 90, 200, 255],
            [120, 255, 120, 255],
            [255, 140, 60, 255],
            [180, 140, 255, 255],
        ];
        Layer {
            topic: topic.to_string(),
            kind,
            visible: true,
            paint: match kind {
                Kind::Cloud2 | Kind::Cloud1 => "z".into(),
                Kind::Scan => "value".into(),
                _ => String::new(),
            },
            color: PALETTE[index % PALETTE.len()],
            point_size: 3.0,
            decay_s: 0.0,
        }
    }

    pub(super) fn paint(&self) -> Paint {
        match self.paint.as_str() {
            "" | "flat" => Paint::Flat,
            "rgb" | "rgba" => Paint::Rgb,
            f => Paint::Field(f.to_string()),
        }
    }
}

/// What the TF tree (and the robot model on it) adds to a scene.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(default))]
pub struct Frames {
    /// Each frame's axes.
    pub axes: bool,
    /// Their names.
    pub names: bool,
    /// A line from each frame to its parent.
    pub links: bool,
    /// Only these frames (empty: all).
    pub only: Vec<String>,
    /// Length of the axes (m).
    pub size: f32,
    /// A frame whose trail over the whole recording is drawn (empty: none).
    pub trail: String,
    /// The robot model (URDF) drawn at its links' frames.
    pub robot: bool,
    /// Its collision geometry rather than its visual.
    pub collision: bool,
}

impl Default for Frames {
    fn default() -> Self {
        Frames {
            axes: true,
            names: true,
            links: true,
            only: Vec::new(),
            size: 0.5,
            trail: String::new(),
            robot: true,
            collision: false,
        }
    }
}

/// A scene to build.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// The time (ns, the recording's clock).
    pub t: u64,
    /// The frame everything is drawn in.
    pub fixed: String,
    /// The layers.
    pub layers: Vec<Layer>,
    /// The TF tree's part.
    pub frames: Frames,
    /// A ground grid of this many 1 m cells a side (0: none).
    pub grid: u32,
}

/// A set of points of one size.
#[derive(Debug, Clone, Default)]
pub struct PointSet {
    /// Size in pixels, or in metres when `metres`.
    pub size: f32,
    /// See `size`.
    pub metres: bool,
    /// Positions (fixed frame).
    pub pos: Vec<[f32; 3]>,
    /// Colours.
    pub color: Vec<Rgba>,
    /// The layer it belongs to (`usize::MAX` for markers' points without one).
    pub layer: usize,
    /// The newest message it holds.
    pub source: Option<Source>,
}

/// How a cloud's points are coloured: by the GPU from what was read, so a new value range or
/// colour costs no pass over the points.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CloudPaint {
    /// One colour.
    Flat(Rgba),
    /// Each point's packed colour ([`Points::rgb`]).
    Rgb,
    /// Each point's value through turbo over `lo..hi` (the layer's range across its clouds); a
    /// point without a finite value in `flat`.
    Value {
        /// The range's low end.
        lo: f32,
        /// Its high end.
        hi: f32,
        /// A point without a value.
        flat: Rgba,
    },
}

/// Where the values a cloud is painted by come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Values {
    /// None (flat or packed colour).
    None,
    /// A coordinate of the points in their own frame (0 x, 1 y, 2 z).
    Axis(usize),
    /// A column of [`Points::columns`].
    Column(usize),
}

/// `v` moved by the column-major 4 × 4 matrix `m` (as the GPU's shaders move it).
#[inline]
fn transform(m: &[[f32; 4]; 4], v: [f32; 3]) -> [f32; 3] {
    [
        m[0][0] * v[0] + m[1][0] * v[1] + m[2][0] * v[2] + m[3][0],
        m[0][1] * v[0] + m[1][1] * v[1] + m[2][1] * v[2] + m[3][1],
        m[0][2] * v[0] + m[1][2] * v[1] + m[2][2] * v[2] + m[3][2],
    ]
}

/// One message's points in a scene: kept as read, in the message's own frame, for as long as
/// the message is within its layer's decay (the same [`Arc`] from one scene to the next, and
/// the same `id`, which the renderer keeps its GPU buffers by), placed by `pose` and painted
/// by `paint`, both worked out anew for each scene.
#[derive(Debug, Clone)]
pub struct CloudDraw {
    /// The message and how it was read (the same for the same geometry).
    pub id: u64,
    /// The layer of the request it belongs to.
    pub layer: usize,
    /// Its points, in its frame.
    pub points: Arc<Points>,
    /// From its frame to the fixed frame, a column-major 4 × 4 matrix.
    pub pose: [[f32; 4]; 4],
    /// Point size in pixels.
    pub size: f32,
    /// How it is coloured.
    pub paint: CloudPaint,
    /// What a [`CloudPaint::Value`] paints by.
    pub values: Values,
    /// Its message.
    pub source: Source,
}

impl CloudDraw {
    /// A point of its frame in the fixed frame (as the GPU places it).
    #[inline]
    pub fn place(&self, v: [f32; 3]) -> [f32; 3] {
        transform(&self.pose, v)
    }

    /// The colour of point `i` (as the GPU paints it).
    pub fn color(&self, i: usize) -> Rgba {
        match self.paint {
            CloudPaint::Flat(c) => c,
            CloudPaint::Rgb => self.points.rgb.get(i).copied().unwrap_or([255; 4]),
            CloudPaint::Value { lo, hi, flat } => match self.value(i) {
                Some(v) if v.is_finite() => {
                    let span = if hi > lo { hi - lo } else { 1.0 };
                    let [r, g, b] = crate::media::image::render::turbo((v - lo) / span);
                    [r, g, b, 255]
                }
                _ => flat,
            },
        }
    }

    /// The value point `i` is painted by.
    pub fn value(&self, i: usize) -> Option<f32> {
        let p = &self.points;
        match self.values {
            Values::None => None,
            Values::Axis(a) => p.xyz.get(i).map(|v| v[a.min(2)]),
            Values::Column(c) => p.columns.get(c).and_then(|(_, v)| v.get(i).copied()),
        }
    }

    /// The corners of its points' box, in the fixed frame.
    fn corners(&self) -> Vec<[f32; 3]> {
        let Some((lo, hi)) = self.points.bounds else {
            return Vec::new();
        };
        (0..8)
            .map(|k| {
                self.place([
                    if k & 1 == 0 { lo[0] } else { hi[0] },
                    if k & 2 == 0 { lo[1] } else { hi[1] },
                    if k & 4 == 0 { lo[2] } else { hi[2] },
                ])
            })
            .collect()
    }
}

/// A mesh in a scene (a robot link's): kept as read, in its own frame and scale, for as long
/// as the model is drawn (the same [`Arc`]s and `id` from one scene to the next, which the
/// renderer keeps its GPU buffers by), placed by `pose` each scene and lit by the GPU as
/// [`Scene::triangle`] lights a triangle on the CPU.
#[derive(Debug, Clone)]
pub struct MeshDraw {
    /// The mesh, its scale and colour (the same for the same geometry).
    pub id: u64,
    /// Corners, three a triangle, in the mesh's frame.
    pub pos: Arc<Vec<[f32; 3]>>,
    /// Each corner's normal (its triangle's), in the mesh's frame.
    pub normal: Arc<Vec<[f32; 3]>>,
    /// Each corner's colour, unlit.
    pub color: Arc<Vec<Rgba>>,
    /// From its frame to the fixed frame, a column-major 4 × 4 matrix.
    pub pose: [[f32; 4]; 4],
}

impl MeshDraw {
    /// A corner of its frame in the fixed frame.
    pub fn place(&self, v: [f32; 3]) -> [f32; 3] {
        transform(&self.pose, v)
    }

    /// Corner `i`'s colour lit by its normal turned into the fixed frame.
    pub fn lit(&self, i: usize) -> Rgba {
        let m = &self.pose;
        let n = self.normal.get(i).copied().unwrap_or([0.0; 3]);
        let t = |r: usize| f64::from(m[0][r] * n[0] + m[1][r] * n[1] + m[2][r] * n[2]);
        super::shapes::shade(
            self.color.get(i).copied().unwrap_or([255; 4]),
            [t(0), t(1), t(2)],
        )
    }
}

/// A label drawn facing the viewer.
#[derive(Debug, Clone, PartialEq)]
pub struct Label {
    /// Where (fixed frame).
    pub pos: [f32; 3],
    /// What.
    pub text: String,
    /// Colour.
    pub color: Rgba,
    /// Height in metres (0: the UI's own size).
    pub height: f32,
}

/// A thing the pointer can pick: a marker, a pose, a frame.
#[derive(Debug, Clone, PartialEq)]
pub struct Pick {
    /// Where (fixed frame).
    pub pos: [f32; 3],
    /// What it is ("/markers goal/0 (ARROW) in map").
    pub what: String,
    /// Its message.
    pub source: Option<Source>,
}

/// Where a drawn thing came from: a message of the recording.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Source {
    /// Connection.
    pub conn: usize,
    /// Its place.
    pub entry: IndexEntry,
}

/// How one layer fared.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Status {
    /// The layer's topic.
    pub topic: String,
    /// What it drew ("3 clouds, 36,000 points").
    pub text: String,
    /// What it could not draw, and why.
    pub problems: Vec<String>,
    /// Fields its points can be painted by.
    pub fields: Vec<String>,
    /// The range its values were painted over.
    pub range: Option<(f32, f32)>,
}

/// A built scene: everything in the fixed frame.
#[derive(Debug, Clone, Default)]
pub struct Scene {
    /// The time it shows.
    pub t: u64,
    /// Its fixed frame.
    pub fixed: String,
    /// Point sets (markers' points, and whatever a caller adds).
    pub points: Vec<PointSet>,
    /// The clouds and scans of the point layers, a message each.
    pub clouds: Vec<CloudDraw>,
    /// Clouds left out by the memory budget while within their decay: how many.
    pub clouds_dropped: usize,
    /// Meshes (the robot's links), each kept on the GPU and placed by its pose.
    pub meshes: Vec<MeshDraw>,
    /// Boxes, spheres, cylinders and cones (markers, arrows, the robot's primitives): unit
    /// shapes placed one by one, drawn instanced.
    pub solids: Vec<shapes::Solid>,
    /// The triangles the solids draw.
    pub(super) solid_triangles: usize,
    /// Line segments: ends.
    pub line_a: Vec<[f32; 3]>,
    /// See `line_a`.
    pub line_b: Vec<[f32; 3]>,
    /// Line colours.
    pub line_color: Vec<Rgba>,
    /// Line widths in metres (0: thin).
    pub line_width: Vec<f32>,
    /// Triangles: three corners each.
    pub tri_pos: Vec<[f32; 3]>,
    /// A colour per corner.
    pub tri_color: Vec<Rgba>,
    /// Labels.
    pub labels: Vec<Label>,
    /// Things to pick.
    pub picks: Vec<Pick>,
    /// Per layer of the request: how it fared.
    pub status: Vec<Status>,
    /// The TF tree's part: how it fared.
    pub frames_status: Status,
    /// The robot model: how it fared (empty text: the recording has none).
    pub robot_status: Status,
    /// Frames known at this time (for the fixed frame's list).
    pub frame_names: Vec<String>,
    /// Time to build (ms).
    pub build_ms: f64,
    /// Marker messages read to bring the marker layers to its time.
    pub replayed: usize,
    /// Point buffers of an earlier scene, emptied, to fill again.
    pub(super) spare: Vec<(Vec<[f32; 3]>, Vec<Rgba>)>,
    /// The pool the scene came from and goes back to when dropped.
    pub(super) pool: Option<ScenePool>,
}

impl Drop for Scene {
    /// A scene taken from a [`ScenePool`] goes back to it (its buffers moved, nothing freed
    /// here); any other is freed where it is dropped.
    fn drop(&mut self) {
        let Some(pool) = self.pool.take() else { return };
        if self.bytes() < RECYCLE_BYTES {
            return;
        }
        pool.give(std::mem::take(self));
    }
}

impl Scene {
    /// About how many bytes its buffers hold.
    pub(super) fn bytes(&self) -> usize {
        let pts: usize = self
            .points
            .iter()
            .map(|p| p.pos.capacity() * 12 + p.color.capacity() * 4)
            .sum();
        let spare: usize = self
            .spare
            .iter()
            .map(|(a, b)| a.capacity() * 12 + b.capacity() * 4)
            .sum();
        pts + spare
            + self.solids.capacity() * std::mem::size_of::<shapes::Solid>()
            + (self.line_a.capacity() + self.line_b.capacity() + self.tri_pos.capacity()) * 12
            + (self.line_color.capacity() + self.line_width.capacity() + self.tri_color.capacity())
                * 4
    }

    /// Empties every buffer, keeping its memory; the point sets' go to `spare`.
    pub(super) fn empty_into_spare(&mut self) {
        for p in self.points.drain(..) {
            let (mut a, mut b) = (p.pos, p.color);
            a.clear();
            b.clear();
            self.spare.push((a, b));
        }
        self.spare
            .sort_by_key(|(a, _)| std::cmp::Reverse(a.capacity()));
        self.line_a.clear();
        self.line_b.clear();
        self.line_color.clear();
        self.line_width.clear();
        self.tri_pos.clear();
        self.tri_color.clear();
        self.labels.clear();
        self.clouds.clear();
        self.clouds_dropped = 0;
        self.replayed = 0;
        self.meshes.clear();
        self.solids.clear();
        self.solid_triangles = 0;
        self.picks.clear();
        self.status.clear();
        self.frame_names.clear();
        self.frames_status = Status::default();
        self.robot_status = Status::default();
    }

    /// An empty point set, on an earlier scene's buffers when there are some (the largest).
    pub(super) fn point_set(&mut self, size: f32, metres: bool, layer: usize) -> PointSet {
        let (pos, color) = if self.spare.is_empty() {
            Default::default()
        } else {
            self.spare.remove(0)
        };
        PointSet {
            size,
            metres,
            pos,
            color,
            layer,
            source: None,
        }
    }

    /// A line segment.
    pub fn line(&mut self, a: [f64; 3], b: [f64; 3], color: Rgba, width_m: f64) {
        self.line_a.push(crate::geom::f32s(a));
        self.line_b.push(crate::geom::f32s(b));
        self.line_color.push(color);
        self.line_width.push(width_m as f32);
    }

    /// A point `size` metres wide (a marker's POINTS).
    pub fn point(&mut self, p: [f64; 3], color: Rgba, size: f64) {
        let size = size as f32;
        let fits = |s: &PointSet| s.metres && s.size == size && s.layer == usize::MAX;
        if !self.points.last().is_some_and(fits) {
            let set = self.point_set(size, true, usize::MAX);
            self.points.push(set);
        }
        if let Some(s) = self.points.last_mut() {
            s.pos.push(crate::geom::f32s(p));
            s.color.push(color);
        }
    }

    /// A label.
    pub fn label(&mut self, p: [f64; 3], text: &str, color: Rgba, height: f64) {
        self.labels.push(Label {
            pos: crate::geom::f32s(p),
            text: text.to_string(),
            color,
            height: height as f32,
        });
    }

    /// Number of points drawn.
    pub fn point_count(&self) -> usize {
        self.points.iter().map(|s| s.pos.len()).sum::<usize>()
            + self
                .clouds
                .iter()
                .map(|c| c.points.xyz.len())
                .sum::<usize>()
    }

    /// The corners the meshes put in the fixed frame (three a triangle) with their lit
    /// colours: what the GPU draws of them, on the CPU (for tests).
    pub fn mesh_triangles(&self) -> (Vec<[f32; 3]>, Vec<Rgba>) {
        let mut pos = Vec::new();
        let mut col = Vec::new();
        for m in &self.meshes {
            pos.extend(m.pos.iter().map(|&v| m.place(v)));
            col.extend((0..m.pos.len()).map(|i| m.lit(i)));
        }
        (pos, col)
    }

    /// The points a layer's clouds put in the fixed frame, with their colours, newest message
    /// first: what the GPU draws of them, worked out on the CPU (for tests and exports).
    pub fn layer_points(&self, layer: usize) -> PointSet {
        let mut set = PointSet {
            layer,
            ..Default::default()
        };
        for c in self.clouds.iter().filter(|c| c.layer == layer) {
            set.size = c.size;
            set.source.get_or_insert(c.source);
            set.pos.extend(c.points.xyz.iter().map(|&v| c.place(v)));
            set.color
                .extend((0..c.points.xyz.len()).map(|i| c.color(i)));
        }
        set
    }

    /// The box holding everything drawn, if anything is.
    pub fn bounds(&self) -> Option<([f32; 3], [f32; 3])> {
        let corners = self.cloud_corners();
        let all = self
            .points
            .iter()
            .flat_map(|s| s.pos.iter())
            .chain(&corners)
            .chain(&self.line_a)
            .chain(&self.line_b)
            .chain(&self.tri_pos);
        bounds_of(all)
    }

    /// The box holding the points and solids (not the lines of a ground grid or a trail), else
    /// everything.
    pub fn content_bounds(&self) -> Option<([f32; 3], [f32; 3])> {
        let corners = self.cloud_corners();
        bounds_of(
            self.points
                .iter()
                .flat_map(|s| s.pos.iter())
                .chain(&corners)
                .chain(&self.tri_pos),
        )
        .or_else(|| self.bounds())
    }

    /// The corners of the clouds' and solids' boxes and the meshes' corners, in the fixed frame.
    fn cloud_corners(&self) -> Vec<[f32; 3]> {
        let meshes = self
            .meshes
            .iter()
            .flat_map(|m| m.pos.iter().map(|&v| m.place(v)));
        self.clouds
            .iter()
            .flat_map(|c| c.corners())
            .chain(meshes)
            .chain(self.solid_box_corners())
            .collect()
    }
}
