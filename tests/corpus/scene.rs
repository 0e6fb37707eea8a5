//! The 3D scene's library side: point clouds of any layout and byte order (and broken ones
//! refused with what is wrong), markers kept as RViz keeps them, and scenes of the demo
//! recording placed through its transform history, with decay.

#![allow(clippy::unwrap_used)]

use crate::common;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use bagscope_ops::spatial::scene::cloud::{cloud2, Paint};
use bagscope_ops::spatial::scene::markers::{parse, Markers};
use bagscope_ops::spatial::scene::{Builder, Frames, Kind, Layer, Request};
use bagscope_ops::spatial::tf::TfHistory;
use bagscope_reader::definition::msg::MsgDef;
use bagscope_reader::encoding::{Node, Plan};
use bagscope_reader::Bag;

const CLOUD_DEF: &str = "Header header\nuint32 height\nuint32 width\nPointField[] fields\nbool is_bigendian\nuint32 point_step\nuint32 row_step\nuint8[] data\nbool is_dense\n================================================================================\nMSG: std_msgs/Header\nuint32 seq\ntime stamp\nstring frame_id\n================================================================================\nMSG: sensor_msgs/PointField\nstring name\nuint32 offset\nuint8 datatype\nuint32 count\n";

struct Field<'a> {
    name: &'a str,
    offset: u32,
    datatype: u8,
}

/// A ROS 1 PointCloud2: `rows` × `width` points of `step` bytes, rows `row_step` apart.
#[allow(clippy::too_many_arguments)]
fn cloud_msg(
    fields: &[Field],
    big: bool,
    step: u32,
    width: u32,
    rows: u32,
    row_step: u32,
    data: &[u8],
) -> (Plan, Node) {
    let mut b = Vec::new();
    let u32le = |b: &mut Vec<u8>, v: u32| b.extend_from_slice(&v.to_le_bytes());
    u32le(&mut b, 7);
    u32le(&mut b, 100);
    u32le(&mut b, 0);
    u32le(&mut b, 5);
    b.extend_from_slice(b"lidar");
    u32le(&mut b, rows);
    u32le(&mut b, width);
    u32le(&mut b, fields.len() as u32);
    for f in fields {
        u32le(&mut b, f.name.len() as u32);
        b.extend_from_slice(f.name.as_bytes());
        u32le(&mut b, f.offset);
        b.push(f.datatype);
        u32le(&mut b, 1);
    }
    b.push(u8::from(big));
    u32le(&mut b, step);
    u32le(&mut b, row_step);
    u32le(&mut b, data.len() as u32);
    b.extend_from_slice(data);
    b.push(1);
    let plan = Plan::new(MsgDef::parse("sensor_msgs/PointCloud2", CLOUD_DEF).unwrap());
    let node = plan.decode(&b).unwrap();
    (plan, node)
}

/// float32 fields one after the other from byte 0.
fn f32_fields<'a>(names: &[&'a str]) -> Vec<Field<'a>> {
    names
        .iter()
        .enumerate()
        .map(|(i, name)| Field {
            name,
            offset: 4 * i as u32,
            datatype: 7,
        })
        .collect()
}

#[test]
fn clouds_of_any_layout_and_byte_order_read_alike() {
    let pts = [[1.0f64, 2.0, 3.0], [-4.5, 0.25, 9.0], [0.0, -1.0, -2.0]];
    // float32 x y z + float32 intensity, little-endian, 16 bytes a point.
    let mut le = Vec::new();
    for (i, p) in pts.iter().enumerate() {
        for v in p {
            le.extend_from_slice(&(*v as f32).to_le_bytes());
        }
        le.extend_from_slice(&(i as f32 * 10.0).to_le_bytes());
    }
    let f32s = f32_fields(&["x", "y", "z", "intensity"]);
    let (plan, node) = cloud_msg(&f32s, false, 16, 3, 1, 48, &le);
    let a = cloud2(&plan.def, &node, &Paint::Field("intensity".into())).unwrap();
    assert_eq!(a.frame, "lidar");
    assert_eq!(a.stamp, Some(100_000_000_000));
    assert_eq!(a.value, vec![0.0, 10.0, 20.0]);
    assert_eq!(a.fields, vec!["x", "y", "z", "intensity"]);
    // The same points as big-endian float64, z first, 4 bytes of padding after each point, in
    // a 3 × 1 organised cloud (three rows of one point) with 8 more bytes after each row.
    let mut be = Vec::new();
    for p in &pts {
        for v in [p[2], p[0], p[1]] {
            be.extend_from_slice(&v.to_be_bytes());
        }
        be.extend_from_slice(&[0xAA; 4]);
        be.extend_from_slice(&[0x55; 8]);
    }
    let f64s = [
        Field {
            name: "z",
            offset: 0,
            datatype: 8,
        },
        Field {
            name: "x",
            offset: 8,
            datatype: 8,
        },
        Field {
            name: "y",
            offset: 16,
            datatype: 8,
        },
    ];
    let (plan, node) = cloud_msg(&f64s, true, 28, 1, 3, 36, &be);
    let b = cloud2(&plan.def, &node, &Paint::Field("z".into())).unwrap();
    assert_eq!(b.xyz, a.xyz, "big-endian float64 with padding");
    assert_eq!(b.value, vec![3.0, 9.0, -2.0], "painted by z");
    // int16 x/y/z (a quantised cloud) read as numbers; a NaN point left out.
    let mut q = Vec::new();
    for v in [1i16, 2, 3, -7, 8, 9] {
        q.extend_from_slice(&v.to_le_bytes());
    }
    let i16s = [
        Field {
            name: "x",
            offset: 0,
            datatype: 3,
        },
        Field {
            name: "y",
            offset: 2,
            datatype: 3,
        },
        Field {
            name: "z",
            offset: 4,
            datatype: 3,
        },
    ];
    let (plan, node) = cloud_msg(&i16s, false, 6, 2, 1, 12, &q);
    let c = cloud2(&plan.def, &node, &Paint::Flat).unwrap();
    assert_eq!(c.xyz, vec![[1.0, 2.0, 3.0], [-7.0, 8.0, 9.0]]);
    let mut nan = le.clone();
    nan[16..20].copy_from_slice(&f32::NAN.to_le_bytes());
    let (plan, node) = cloud_msg(&f32s, false, 16, 3, 1, 48, &nan);
    assert_eq!(cloud2(&plan.def, &node, &Paint::Flat).unwrap().xyz.len(), 2);
}

#[test]
fn packed_rgb_is_read_as_colours() {
    let mut d = Vec::new();
    for (p, rgb) in [
        ([0.0f32, 0.0, 0.0], 0x00FF_8000u32),
        ([1.0, 1.0, 1.0], 0x0000_10FF),
    ] {
        for v in p {
            d.extend_from_slice(&v.to_le_bytes());
        }
        d.extend_from_slice(&rgb.to_le_bytes());
    }
    let fields = f32_fields(&["x", "y", "z", "rgb"]);
    let (plan, node) = cloud_msg(&fields, false, 16, 2, 1, 32, &d);
    let c = cloud2(&plan.def, &node, &Paint::Rgb).unwrap();
    assert_eq!(c.rgb, vec![[255, 128, 0, 255], [0, 16, 255, 255]]);
}

#[test]
fn broken_cloud_layouts_are_refused_with_what_is_wrong() {
    let d = vec![0u8; 64];
    let f = |name, offset, datatype| Field {
        name,
        offset,
        datatype,
    };
    let cases: Vec<(Vec<Field>, u32, u32, u32, &str)> = vec![
        (
            vec![f("x", 0, 7), f("y", 4, 7), f("z", 14, 7)],
            16,
            4,
            64,
            "does not fit a point of 16 bytes",
        ),
        (
            vec![f("x", 0, 7), f("y", 4, 7)],
            0,
            4,
            64,
            "point_step is 0",
        ),
        (vec![f("x", 0, 7), f("q", 4, 7)], 8, 4, 32, "no x and y"),
        (
            vec![f("x", 0, 7), f("y", 4, 42)],
            8,
            4,
            32,
            "unknown datatype 42",
        ),
    ];
    for (fields, step, width, row_step, want) in cases {
        let (plan, node) = cloud_msg(&fields, false, step, width, 1, row_step, &d);
        let e = cloud2(&plan.def, &node, &Paint::Flat).unwrap_err();
        assert!(e.contains(want), "{e} lacks {want}");
    }
    // Rows shorter than their points, and data shorter than claimed: refused, or what is there.
    let fields = [f("x", 0, 7), f("y", 4, 7)];
    let (plan, node) = cloud_msg(&fields, false, 8, 4, 2, 16, &d);
    assert!(cloud2(&plan.def, &node, &Paint::Flat)
        .unwrap_err()
        .contains("row_step 16"));
    let (plan, node) = cloud_msg(&fields, false, 8, 1000, 1, 8000, &d);
    let c = cloud2(&plan.def, &node, &Paint::Flat).unwrap();
    assert_eq!(c.xyz.len(), 8);
    assert!(
        c.note.contains("8 of 1,000 points (the data holds 8)"),
        "{}",
        c.note
    );
}

/// The demo recording of `secs` seconds, with its tables and transforms.
pub(crate) fn demo(
    secs: u32,
    name: &str,
) -> (
    Bag,
    Arc<bagscope_reader::storage::MessageTables>,
    Arc<TfHistory>,
    common::TempDir,
) {
    let dir = common::temp_dir(name);
    let p = dir.join("demo.bag");
    bagscope_ops::demo::write_demo(&p, secs).unwrap();
    let bag = Bag::open(&p).unwrap();
    let tables = bag.tables().unwrap();
    let tf = TfHistory::read(&bag, None, None, &AtomicBool::new(false)).unwrap();
    (bag, tables, Arc::new(tf), dir)
}

pub(crate) fn request(t: u64, fixed: &str, layers: Vec<Layer>) -> Request {
    Request {
        t,
        fixed: fixed.into(),
        layers,
        frames: Frames::default(),
        grid: 0,
    }
}

#[test]
fn the_lidar_cloud_stays_on_the_room_as_the_robot_drives() {
    let (bag, tables, tf, _dir) = demo(40, "scene-room");
    let start = bag.summary().start_ns.unwrap();
    let mut b = Builder::new(bag, tables, Some(tf));
    let cancel = AtomicBool::new(false);
    for secs in [3u64, 11, 17, 26, 38] {
        let layer = Layer::new("/lidar/points", Kind::Cloud2, 0);
        let s = b.build(
            &request(start + secs * 1_000_000_000, "map", vec![layer]),
            &cancel,
        );
        assert!(s.status[0].problems.is_empty(), "{:?}", s.status);
        let pts = &s.layer_points(0).pos;
        assert!(pts.len() > 1500, "{} points", pts.len());
        // The walls are at odom x = ±5, y = ±3 (odom is 0.5, 0.25 into the map), the floor at
        // z = 0: every point lies on one of them, whatever the robot's pose.
        for p in pts {
            let (x, y, z) = (
                f64::from(p[0]) - 0.5,
                f64::from(p[1]) - 0.25,
                f64::from(p[2]),
            );
            let on = z.abs() < 0.02
                || ((x.abs() - 5.0).abs() < 0.02 && y.abs() <= 3.02)
                || ((y.abs() - 3.0).abs() < 0.02 && x.abs() <= 5.02);
            assert!(
                on,
                "at {secs} s, point ({x:.3}, {y:.3}, {z:.3}) of odom is on no wall"
            );
        }
        // In the robot's own frame the room moves instead: the walls are not at fixed places.
        let layer = Layer::new("/lidar/points", Kind::Cloud2, 0);
        let own = b.build(
            &request(start + secs * 1_000_000_000, "base_link", vec![layer]),
            &cancel,
        );
        assert_eq!(own.layer_points(0).pos.len(), pts.len());
    }
}

#[test]
fn decay_keeps_the_messages_of_the_last_seconds() {
    let (bag, tables, tf, _dir) = demo(12, "scene-decay");
    let start = bag.summary().start_ns.unwrap();
    let t = start + 10_000_000_000;
    let latest = bag
        .summary()
        .topics
        .iter()
        .find(|x| x.name == "/lidar/points")
        .unwrap()
        .connections[0];
    let entries = &tables.per_connection[latest];
    let mut b = Builder::new(bag, Arc::clone(&tables), Some(tf));
    let cancel = AtomicBool::new(false);
    let one = b.build(
        &request(
            t,
            "odom",
            vec![Layer::new("/lidar/points", Kind::Cloud2, 0)],
        ),
        &cancel,
    );
    for (decay, want) in [(1.0f32, 5usize), (2.5, 12), (0.1, 1)] {
        let mut l = Layer::new("/lidar/points", Kind::Cloud2, 0);
        l.decay_s = decay;
        let s = b.build(&request(t, "odom", vec![l]), &cancel);
        let from = t - (f64::from(decay) * 1e9) as u64;
        let n = entries
            .iter()
            .filter(|e| e.time_ns >= from && e.time_ns <= t)
            .count();
        // A decay shorter than the period still shows the latest.
        assert_eq!(n.max(1), want, "messages in the last {decay} s");
        if want > 1 {
            assert_eq!(
                s.status[0].text,
                format!(
                    "{want} messages, {} points",
                    bagscope_ops::timefmt::thousands(s.layer_points(0).pos.len())
                )
            );
        }
        // Each message has about the same number of points.
        let per = one.layer_points(0).pos.len() as f64;
        let got = s.layer_points(0).pos.len() as f64 / want as f64;
        assert!(
            (got - per).abs() < per * 0.1,
            "{got} points a message, {per} in one"
        );
    }
}

#[test]
fn markers_are_added_replaced_deleted_and_expire() {
    let (bag, tables, tf, _dir) = demo(8, "scene-markers");
    let start = bag.summary().start_ns.unwrap();
    let conn = bag
        .summary()
        .topics
        .iter()
        .find(|x| x.name == "/planner/markers")
        .unwrap()
        .connections[0];
    let (plan, _) = bag.plan(conn).unwrap();
    let e = tables.per_connection[conn][0];
    let m = bag.message(conn, e).unwrap();
    let node = plan.decode(&m.data).unwrap();
    let ms = parse(&plan.def, &node).unwrap();
    assert_eq!(ms.len(), 4);
    assert_eq!((ms[0].ns.as_str(), ms[0].id, ms[0].kind), ("goal", 0, 0));
    assert_eq!(ms[1].text, "goal 10 s ahead");
    assert_eq!(ms[2].points.len(), 20);
    assert_eq!(ms[0].lifetime_ns, 2_000_000_000);

    let mut st: Markers<u32> = Markers::default();
    st.apply(ms.clone(), 1_000, &1);
    assert_eq!(st.at(1_000).count(), 4);
    // The same ids again replace, not add.
    st.apply(ms.clone(), 2_000, &2);
    assert_eq!(st.at(2_000).count(), 4);
    assert!(st.at(2_000).all(|s| s.source == 2));
    // DELETE one; DELETEALL of a namespace; lifetime runs out 2 s after the last.
    let mut del = ms[2].clone();
    del.action = 2;
    st.apply(vec![del], 3_000, &3);
    assert_eq!(st.at(3_000).count(), 3);
    let mut all_goal = ms[0].clone();
    all_goal.action = 3;
    st.apply(vec![all_goal], 4_000, &4);
    let left: Vec<_> = st.at(4_000).map(|s| s.marker.ns.clone()).collect();
    assert_eq!(left, vec!["obstacles"]);
    assert_eq!(st.at(2_000 + 1_999_999_999).count(), 1);
    assert_eq!(
        st.at(2_000 + 2_000_000_000).count(),
        0,
        "expired after its lifetime"
    );
    let mut all = ms[0].clone();
    all.action = 3;
    all.ns.clear();
    st.apply(ms.clone(), 5_000, &5);
    st.apply(vec![all], 6_000, &6);
    assert_eq!(st.at(6_000).count(), 0, "DELETEALL without a namespace");

    // In a scene: the four markers, the goal's pick where the planner put it (odom into map).
    let mut b = Builder::new(bag, tables, Some(tf));
    let cancel = AtomicBool::new(false);
    let t = start + 5_500_000_000;
    let s = b.build(
        &request(
            t,
            "map",
            vec![Layer::new("/planner/markers", Kind::Markers, 0)],
        ),
        &cancel,
    );
    assert_eq!(s.status[0].text, "4 markers", "{:?}", s.status);
    let goal = s
        .picks
        .iter()
        .find(|p| p.what.contains("goal/0 (ARROW)"))
        .unwrap();
    let ts = (goal.source.unwrap().entry.time_ns - start) as f64 * 1e-9;
    // The message's stamp is its send time, within a millisecond of the receive time.
    let a = 2.0 * std::f64::consts::PI / 60.0;
    let gt = (ts * 1000.0).floor() / 1000.0 + 10.0;
    let (gx, gy) = (
        4.0 * (a * gt).sin() + 0.5,
        2.0 * (2.0 * a * gt).sin() + 0.25,
    );
    assert!(
        (f64::from(goal.pos[0]) - gx).abs() < 0.02 && (f64::from(goal.pos[1]) - gy).abs() < 0.02,
        "{goal:?} vs ({gx}, {gy})"
    );
    assert!(!s.labels.iter().all(|l| l.text != "goal 10 s ahead"));
    // Back in time: replayed from the start, the same.
    let again = b.build(
        &request(
            t - 2_000_000_000,
            "map",
            vec![Layer::new("/planner/markers", Kind::Markers, 0)],
        ),
        &cancel,
    );
    assert_eq!(again.status[0].text, "4 markers");
    // A frame the tree does not have: said, not silently dropped.
    let none = b.build(
        &request(
            t,
            "nowhere",
            vec![Layer::new("/planner/markers", Kind::Markers, 0)],
        ),
        &cancel,
    );
    assert_eq!(none.status[0].text, "0 markers");
    assert!(
        none.status[0]
            .problems
            .iter()
            .any(|p| p.contains("no transform from odom to nowhere")),
        "{:?}",
        none.status
    );
}

/// The point clouds and scans of the corpora (written by other people's tools): every message
/// drawn in its own frame (these recordings have no transforms), as many points as its
/// finite coordinates, and the old `sensor_msgs/PointCloud` too.
#[test]
fn the_corpus_clouds_and_scans_are_drawn() {
    let cases = [
        ("embag/test.bag", "/luminar_pointcloud", Kind::Cloud2),
        ("embag/test.bag", "/base_scan", Kind::Scan),
        ("bag-reader-java/PointCloud2.bag", "", Kind::Cloud2),
        ("ccny/point_cloud_filter_demo.bag", "", Kind::Cloud1),
    ];
    let cancel = AtomicBool::new(false);
    for (file, topic, kind) in cases {
        let path = common::corpus_dir().join(file);
        let bag = Bag::open(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
        let s = bag.summary().clone();
        let tp = s
            .topics
            .iter()
            .find(|t| (topic.is_empty() || t.name == topic) && Kind::of(&t.datatype) == Some(kind))
            .unwrap_or_else(|| panic!("{file} has no {kind:?} topic"));
        let tables = bag.tables().unwrap();
        let mut entries: Vec<_> = tp
            .connections
            .iter()
            .flat_map(|&c| tables.per_connection[c].iter().map(move |e| (c, *e)))
            .collect();
        entries.sort_by_key(|(_, e)| e.time_ns);
        assert!(!entries.is_empty(), "{file} {}", tp.name);
        let mut b = Builder::new(bag.clone(), Arc::clone(&tables), None);
        let mut drawn = 0;
        for (c, e) in entries.iter().take(20) {
            let mut layer = Layer::new(&tp.name, kind, 0);
            layer.paint = "z".into();
            let scene = b.build(&request(e.time_ns, "", vec![layer]), &cancel);
            let st = &scene.status[0];
            assert!(
                st.problems.is_empty(),
                "{file} {}: {:?}",
                tp.name,
                st.problems
            );
            // Independently: the top-down image's reader (ops::image::topdown, older code of its own)
            // counts the finite points too ("point cloud, N of M points").
            let (plan, _) = bag.plan(*c).unwrap();
            let node = plan.decode(&bag.message(*c, *e).unwrap().data).unwrap();
            let counted = |enc: &str| -> usize {
                enc.split(", ")
                    .nth(1)
                    .unwrap()
                    .split(' ')
                    .next()
                    .unwrap()
                    .parse()
                    .unwrap()
            };
            let want = match kind {
                Kind::Cloud2 => counted(
                    &bagscope_ops::media::image::topdown::cloud(&plan.def, &node)
                        .unwrap()
                        .encoding,
                ),
                Kind::Scan => counted(
                    &bagscope_ops::media::image::topdown::scan(&plan.def, &node)
                        .unwrap()
                        .encoding,
                ),
                _ => bagscope_ops::spatial::scene::cloud::cloud1(&plan.def, &node, &Paint::Flat)
                    .unwrap()
                    .xyz
                    .len(),
            };
            let got = scene.layer_points(0).pos.len();
            assert_eq!(got, want, "{file} {} at {}", tp.name, e.time_ns);
            assert!(
                !scene.fixed.is_empty(),
                "the cloud's own frame is the fixed frame"
            );
            drawn += got;
        }
        assert!(drawn > 0, "{file} {}: nothing drawn", tp.name);
        eprintln!(
            "{file} {}: {drawn} points in {} messages",
            tp.name,
            entries.len().min(20)
        );
    }
}

#[test]
fn hostile_cloud_sizes_cost_nothing() {
    let d = vec![0u8; 32];
    let f = |name, offset, datatype| Field {
        name,
        offset,
        datatype,
    };
    // Four billion empty rows; a field at an offset near the end of the address space.
    let (plan, node) = cloud_msg(&[f("x", 0, 7), f("y", 4, 7)], false, 8, 0, u32::MAX, 0, &d);
    let t0 = std::time::Instant::now();
    assert!(cloud2(&plan.def, &node, &Paint::Flat)
        .unwrap()
        .xyz
        .is_empty());
    assert!(t0.elapsed().as_millis() < 500);
    let (plan, node) = cloud_msg(&[f("x", 0, 7), f("y", u32::MAX, 7)], false, 8, 4, 1, 32, &d);
    assert!(cloud2(&plan.def, &node, &Paint::Flat)
        .unwrap_err()
        .contains("does not fit"));
    // A billion points claimed over 32 bytes: what the data holds.
    let (plan, node) = cloud_msg(&[f("x", 0, 7), f("y", 4, 7)], false, 8, 1 << 30, 1, 0, &d);
    let c = cloud2(&plan.def, &node, &Paint::Flat).unwrap();
    assert_eq!(c.xyz.len(), 4);
}
