//! The 3D scene's library side, continued: maps, camera frustums, covariances and paths from
//! the fields that place them; Foxglove's schemas drawn as their ROS equivalents; every marker
//! type written by rosbags.

#![allow(clippy::unwrap_used)]

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use bagscope_ops::spatial::scene::{Builder, Kind, Layer, Shape};
use bagscope_ops::spatial::tf::TfHistory;
use bagscope_reader::definition::msg::MsgDef;
use bagscope_reader::encoding::Plan;
use bagscope_reader::Bag;

use super::scene::request;
use crate::common;

const SEP: &str =
    "\n================================================================================\n";
const HDR: &str = "MSG: std_msgs/Header\nuint32 seq\ntime stamp\nstring frame_id";
const POSE: &str = "MSG: geometry_msgs/Pose\nPoint position\nQuaternion orientation";
const POINT: &str = "MSG: geometry_msgs/Point\nfloat64 x\nfloat64 y\nfloat64 z";
const QUAT: &str = "MSG: geometry_msgs/Quaternion\nfloat64 x\nfloat64 y\nfloat64 z\nfloat64 w";

fn def(main: &str, deps: &[&str]) -> String {
    let mut s = main.to_string();
    for d in deps {
        s.push_str(SEP);
        s.push_str(d);
    }
    s.push('\n');
    s
}

/// Little-endian ROS 1 bytes.
#[derive(Default)]
struct W(Vec<u8>);

impl W {
    fn u32(&mut self, v: u32) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn f64s(&mut self, v: &[f64]) -> &mut Self {
        for x in v {
            self.0.extend_from_slice(&x.to_le_bytes());
        }
        self
    }
    fn header(&mut self, t: u64) -> &mut Self {
        self.u32(0)
            .u32((t / 1_000_000_000) as u32)
            .u32((t % 1_000_000_000) as u32);
        self.u32(3);
        self.0.extend_from_slice(b"map");
        self
    }
    /// A pose at `p` facing along x.
    fn pose(&mut self, p: [f64; 3]) -> &mut Self {
        self.f64s(&p).f64s(&[0.0, 0.0, 0.0, 1.0])
    }
}

/// A map, a camera's calibration, a pose with covariance and a path, written with bagscope's
/// writer, each drawn where its fields put it.
#[test]
fn maps_frustums_covariances_and_paths_land_where_their_fields_say() {
    use bagscope_reader::{BagWriter, ConnectionSpec, WriteOptions};
    let dir = common::temp_dir("scene-kinds");
    let path = dir.join("kinds.bag");
    let mut w = BagWriter::create(&path, WriteOptions::default()).unwrap();
    let mut add = |topic: &str, datatype: &str, text: String| {
        let d = MsgDef::parse(datatype, &text).unwrap();
        w.add_connection(ConnectionSpec {
            topic: topic.into(),
            datatype: datatype.into(),
            md5sum: Plan::new(d).md5,
            message_definition: text,
            callerid: None,
            latching: false,
        })
    };
    let map = add(
        "/map",
        "nav_msgs/OccupancyGrid",
        def(
            "Header header\nMapMetaData info\nint8[] data",
            &[HDR, "MSG: nav_msgs/MapMetaData\ntime map_load_time\nfloat32 resolution\nuint32 width\nuint32 height\ngeometry_msgs/Pose origin", POSE, POINT, QUAT],
        ),
    );
    let cam = add(
        "/camera_info",
        "sensor_msgs/CameraInfo",
        def(
            "Header header\nuint32 height\nuint32 width\nstring distortion_model\nfloat64[] D\nfloat64[9] K\nfloat64[9] R\nfloat64[12] P\nuint32 binning_x\nuint32 binning_y\nRegionOfInterest roi",
            &[HDR, "MSG: sensor_msgs/RegionOfInterest\nuint32 x_offset\nuint32 y_offset\nuint32 height\nuint32 width\nbool do_rectify"],
        ),
    );
    let pose = add(
        "/initialpose",
        "geometry_msgs/PoseWithCovarianceStamped",
        def(
            "Header header\nPoseWithCovariance pose",
            &[
                HDR,
                "MSG: geometry_msgs/PoseWithCovariance\nPose pose\nfloat64[36] covariance",
                POSE,
                POINT,
                QUAT,
            ],
        ),
    );
    let route = add(
        "/route",
        "nav_msgs/Path",
        def(
            "Header header\ngeometry_msgs/PoseStamped[] poses",
            &[
                HDR,
                "MSG: geometry_msgs/PoseStamped\nHeader header\nPose pose",
                POSE,
                POINT,
                QUAT,
            ],
        ),
    );
    let t = 1_700_000_000_000_000_000u64;
    // A 4 × 3 map of 0.5 m cells at (1, 2): a row free, a row occupied, a row unknown.
    let mut m = W::default();
    m.header(t).u32(0).u32(0);
    m.0.extend_from_slice(&0.5f32.to_le_bytes());
    m.u32(4).u32(3).pose([1.0, 2.0, 0.0]).u32(12);
    m.0.extend_from_slice(&[0, 0, 0, 0, 100, 100, 100, 100, 255, 255, 255, 255]);
    w.write(map, t, &m.0).unwrap();
    // 100 × 80 pixels, fx = fy = 100, cx = 50, cy = 40, at the map's origin.
    let mut c = W::default();
    c.header(t).u32(80).u32(100).u32(0).u32(0);
    c.f64s(&[100.0, 0.0, 50.0, 0.0, 100.0, 40.0, 0.0, 0.0, 1.0]);
    c.f64s(&[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0])
        .f64s(&[0.0; 12]);
    c.u32(0).u32(0).u32(0).u32(0).u32(0).u32(0);
    c.0.push(0);
    w.write(cam, t, &c.0).unwrap();
    // At (3, 1) with variances 4 m² along x and 1 m² along y: a 1-sigma ellipse 2 m by 1 m.
    let mut p = W::default();
    p.header(t).pose([3.0, 1.0, 0.0]);
    let mut cov = [0.0; 36];
    cov[0] = 4.0;
    cov[7] = 1.0;
    p.f64s(&cov);
    w.write(pose, t, &p.0).unwrap();
    let mut r = W::default();
    r.header(t).u32(3);
    for q in [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 1.0, 0.0]] {
        r.header(t).pose(q);
    }
    w.write(route, t, &r.0).unwrap();
    w.finish().unwrap();

    let bag = Bag::open(&path).unwrap();
    let tables = bag.tables().unwrap();
    let mut b = Builder::new(bag, tables, None);
    let cancel = AtomicBool::new(false);
    let layer = |topic: &str, kind| Layer::new(topic, kind, 0);
    let scene = |b: &mut Builder, l: Layer| b.build(&request(t, "map", vec![l]), &cancel);

    let s = scene(&mut b, layer("/map", Kind::Map));
    assert_eq!(s.status[0].text, "1 messages, 8 drawn", "{:?}", s.status);
    assert_eq!(s.tri_pos.len(), 8 * 6);
    let (lo, hi) = s.bounds().unwrap();
    assert_eq!(
        (lo, hi),
        ([1.0, 2.0, 0.0], [3.0, 3.0, 0.0]),
        "two rows of 2 m × 0.5 m"
    );
    let free = s.tri_color[0];
    let occupied = s.tri_color[s.tri_color.len() - 1];
    assert_eq!((free[0], occupied[0]), (235, 25));

    let s = scene(&mut b, layer("/camera_info", Kind::Camera));
    assert_eq!(s.line_a.len(), 8);
    // The image's top-left corner at 1 m: ((0 - 50) / 100, (0 - 40) / 100, 1).
    assert!(s.line_b.contains(&[-0.5, -0.4, 1.0]), "{:?}", s.line_b);
    assert!(s.line_b.contains(&[0.5, 0.4, 1.0]));

    let s = scene(&mut b, layer("/initialpose", Kind::PoseCov));
    let xs: Vec<f32> = s.line_a.iter().map(|p| p[0]).collect();
    let ys: Vec<f32> = s.line_a.iter().map(|p| p[1]).collect();
    let span = |v: &[f32]| {
        v.iter().cloned().fold(f32::MIN, f32::max) - v.iter().cloned().fold(f32::MAX, f32::min)
    };
    assert!(
        (span(&xs) - 4.0).abs() < 0.02 && (span(&ys) - 2.0).abs() < 0.02,
        "{} × {}",
        span(&xs),
        span(&ys)
    );
    assert_eq!(
        s.solids.iter().map(|x| x.shape).collect::<Vec<_>>(),
        [Shape::Cylinder, Shape::Cone],
        "the pose's arrow"
    );
    let pick = &s.picks[0];
    assert_eq!(pick.pos, [3.0, 1.0, 0.0]);

    let s = scene(&mut b, layer("/route", Kind::Path));
    assert_eq!(s.line_a, vec![[0.0, 0.0, 0.0], [1.0, 0.0, 0.0]]);
    assert_eq!(s.line_b, vec![[1.0, 0.0, 0.0], [1.0, 1.0, 0.0]]);
    // A frame the map does not know: said.
    let s = b.build(
        &request(t, "odom", vec![layer("/route", Kind::Path)]),
        &cancel,
    );
    assert!(
        s.status[0].problems[0].contains("no transform from map to odom: the recording has no TF"),
        "{:?}",
        s.status
    );
}

/// Runs `tests/py/SCRIPT OUT`, a fixture written by a peer's own library; fails loudly when the
/// peer is missing.
fn peer_fixture(script: &str, out: &std::path::Path, peer: &str) {
    peer_fixture_with(script, &[], out, peer);
}

/// [`peer_fixture`] with arguments before `OUT`.
fn peer_fixture_with(script: &str, args: &[&str], out: &std::path::Path, peer: &str) {
    let o = std::process::Command::new("python3")
        .arg(format!("tests/py/{script}"))
        .args(args)
        .arg(out)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{peer}; .ci/run installs it) wrote nothing: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Foxglove's own schemas (protobuf, written by Foxglove's SDK: `tests/py/foxglove_scene.py`):
/// `FrameTransform`s make the transform tree, a `PointCloud` with its own pose and a uint8
/// field, a `SceneUpdate`'s cube, arrow and text placed through it, an entity deleted, a
/// `PoseInFrame`.
#[test]
fn foxglove_schemas_are_drawn_as_their_ros_equivalents() {
    let dir = common::temp_dir("scene-foxglove");
    let file = dir.join("fg.mcap");
    peer_fixture(
        "foxglove_scene.py",
        &file,
        "Foxglove's SDK (pip install foxglove-sdk)",
    );
    let bag = Bag::open(&file).unwrap();
    let tables = bag.tables().unwrap();
    assert_eq!(bagscope_ops::spatial::tf::tf_topics(&bag).len(), 1);
    let tf = TfHistory::read(&bag, None, None, &AtomicBool::new(false)).unwrap();
    assert_eq!(tf.bad, 0);
    let t0 = 1_700_000_000_000_000_000u64;
    // Half way between the transforms at 0 s and 1 s: (2, 0.5, 0), turned 90° about z.
    let p = tf
        .lookup_between("world", "base", t0 + 500_000_000)
        .unwrap();
    assert!(
        (p.t[0] - 2.0).abs() < 1e-9 && (p.t[1] - 0.5).abs() < 1e-9,
        "{p:?}"
    );
    let mut b = Builder::new(bag, tables, Some(Arc::new(tf)));
    let cancel = AtomicBool::new(false);
    let mut cloud = Layer::new("/cloud", Kind::of("foxglove.PointCloud").unwrap(), 0);
    cloud.paint = "intensity".into();
    let layers = vec![
        cloud,
        Layer::new("/scene", Kind::of("foxglove.SceneUpdate").unwrap(), 1),
        Layer::new("/pose", Kind::of("foxglove.PoseInFrame").unwrap(), 2),
    ];
    let s = b.build(&request(t0 + 700_000_000, "world", layers.clone()), &cancel);
    for st in &s.status {
        assert!(st.problems.is_empty(), "{:?}", s.status);
    }
    // The cloud's points (1, 0, 0), (0, 2, 0), (0, 0, 3) lifted 1 m by its pose, in base at
    // its stamp: x -> y, y -> -x, then (2, 0.5, 0).
    let near = |a: [f32; 3], b: [f32; 3]| a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-4);
    let pts = &s.layer_points(0).pos;
    let want = [[2.0, 1.5, 1.0], [0.0, 0.5, 1.0], [2.0, 0.5, 4.0]];
    assert_eq!(pts.len(), 3);
    for (p, w) in pts.iter().zip(want) {
        assert!(near(*p, w), "{pts:?}");
    }
    assert_eq!(
        s.status[0].range,
        Some((10.0, 30.0)),
        "painted by the uint8 intensity"
    );
    assert_eq!(s.status[1].text, "3 markers");
    let pick = |s: &bagscope_ops::spatial::scene::Scene, what: &str| {
        s.picks
            .iter()
            .find(|k| k.what.contains(what))
            .map(|k| k.pos)
    };
    assert_eq!(pick(&s, "box/0 (CUBE) in world"), Some([1.0, 0.0, 0.0]));
    assert!(near(
        pick(&s, "arrow/0 (ARROW) in base").unwrap(),
        [2.0, 0.5, 0.0]
    ));
    assert!(s
        .labels
        .iter()
        .any(|l| l.text == "hello" && l.pos == [0.0, 0.0, 2.0]));
    assert_eq!(pick(&s, "/pose pose in world"), Some([0.0, 3.0, 0.0]));
    // After the deletion at 1.5 s the box is gone.
    let s = b.build(&request(t0 + 1_600_000_000, "world", layers), &cancel);
    assert_eq!(s.status[1].text, "2 markers");
    assert!(pick(&s, "box/0").is_none());
}

/// Every marker type, written by rosbags (`tests/py/rosbags_markers.py`): each drawn as its
/// shape, then one deleted and one modified, then all deleted.
#[test]
fn every_marker_type_written_by_rosbags_is_drawn() {
    let dir = common::temp_dir("scene-rosbags-markers");
    let file = dir.join("markers.bag");
    peer_fixture("rosbags_markers.py", &file, "rosbags (pip install rosbags)");
    let bag = Bag::open(&file).unwrap();
    let tables = bag.tables().unwrap();
    let mut b = Builder::new(bag, tables, None);
    let cancel = AtomicBool::new(false);
    let t0 = 1_700_000_000_000_000_000u64;
    let at = |b: &mut Builder, s: u64| {
        let l = Layer::new("/markers", Kind::Markers, 0);
        b.build(
            &request(t0 + s * 1_000_000_000 + 500_000_000, "map", vec![l]),
            &cancel,
        )
    };
    let s = at(&mut b, 1);
    assert_eq!(s.status[0].text, "12 markers", "{:?}", s.status);
    assert!(s.status[0].problems.is_empty());
    // Solids (arrow, cube, sphere, cylinder, cube list, sphere list, the mesh's box, the
    // triangle list) as triangles over x = 0 .. 22; strips and lists as lines; points; text.
    let (tri_pos, _) = s.all_triangles();
    let tri_x = |lo: f32, hi: f32| tri_pos.iter().filter(|p| p[0] >= lo && p[0] <= hi).count();
    for (i, what) in [
        (0, "arrow"),
        (1, "cube"),
        (2, "sphere"),
        (3, "cylinder"),
        (6, "cube list"),
        (7, "sphere list"),
        (10, "mesh box"),
        (11, "triangle list"),
    ] {
        let x = 2.0 * i as f32;
        assert!(
            tri_x(x - 0.3, x + 1.1) > 0,
            "no triangles for the {what} at x = {x}"
        );
    }
    // Line strip through 4 points: 3 segments; line list of 4 points: 2.
    let lines_x = |x: f32| {
        s.line_a
            .iter()
            .filter(|p| (p[0] - x).abs() <= 1.0 + 1e-4 && p[0] >= x)
            .count()
    };
    assert_eq!(lines_x(8.0), 3);
    assert_eq!(lines_x(10.0), 2);
    let pts: Vec<_> = s.points.iter().filter(|p| p.metres).collect();
    assert_eq!(pts.len(), 1);
    assert_eq!(pts[0].pos.len(), 4);
    assert_eq!(pts[0].size, 0.5);
    assert!(s
        .labels
        .iter()
        .any(|l| l.text == "hi" && l.pos == [18.0, 0.0, 0.0]));
    // At 2 s: id 3 deleted, id 0 blue.
    let s = at(&mut b, 2);
    assert_eq!(s.status[0].text, "11 markers");
    assert!(!s.picks.iter().any(|k| k.what.contains("all/3 ")));
    let (tri_pos, tri_color) = s.all_triangles();
    let arrow = tri_color
        .iter()
        .zip(&tri_pos)
        .find(|(_, p)| p[0] < 0.6)
        .unwrap()
        .0;
    assert!(arrow[2] > 100 && arrow[0] == 0, "{arrow:?}");
    // At 3 s: DELETEALL.
    assert_eq!(at(&mut b, 3).status[0].text, "0 markers");
}

/// Markers read straight from a message's bytes equal those read through the value tree, on
/// every marker message of rosbags' fixture (ROS 1, and ROS 2 Humble's types in CDR) and of
/// the demo recording; the fast path answers for each of them.
#[test]
fn markers_from_bytes_equal_markers_from_the_value_tree() {
    use bagscope_ops::spatial::scene::{marker_bytes, markers};
    let dir = common::temp_dir("scene-marker-bytes");
    let rosbags = dir.join("markers.bag");
    peer_fixture(
        "rosbags_markers.py",
        &rosbags,
        "rosbags (pip install rosbags)",
    );
    let ros2 = dir.join("markers-ros2");
    peer_fixture_with(
        "rosbags_markers.py",
        &["--ros2"],
        &ros2,
        "rosbags (pip install rosbags)",
    );
    let demo = dir.join("demo.bag");
    common::bagscope(&[&"demo", &demo, &"--seconds", &"20"]).ok();
    let mut checked = [0usize; 2];
    for (k, file) in [(0, &rosbags), (0, &demo), (1, &ros2)] {
        let bag = Bag::open(file).unwrap();
        let conns: Vec<usize> = bag
            .summary()
            .topics
            .iter()
            .filter(|t| t.datatype.contains("MarkerArray"))
            .flat_map(|t| t.connections.clone())
            .collect();
        assert!(!conns.is_empty(), "{}: no marker topic", file.display());
        let filter = bagscope_reader::Filter {
            connections: Some(conns),
            ..Default::default()
        };
        for m in bag.messages(&filter).unwrap() {
            let m = m.unwrap();
            let (plan, _) = bag.plan(m.conn).unwrap();
            assert_eq!(plan.is_cdr(), k == 1);
            let slow = markers::parse(&plan.def, &plan.decode(&m.data).unwrap()).unwrap();
            let fast = marker_bytes::markers(&plan, &m.data);
            assert_eq!(
                fast.as_ref(),
                Some(&slow),
                "{} at {}",
                file.display(),
                m.time_ns
            );
            checked[k] += 1;
        }
    }
    assert!(
        checked[0] >= 20 && checked[1] >= 3,
        "{checked:?} messages compared (ROS 1, CDR)"
    );
}
