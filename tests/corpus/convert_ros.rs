//! Conversion between ROS 1 and ROS 2 against rosbags-convert (`--to-ros2`, `--to-ros1`):
//! the same messages, values and names; what is left out said; the direct CDR path equal to
//! the value path; rosbag2 output split by duration; translated types stored, or left out with
//! `strict_types`.

use crate::common;

use std::path::Path;
use std::sync::atomic::AtomicBool;

use bagscope_ops::tables::export::{export, OutputFormat};
use bagscope_reader::storage::rosbag2::writer::Rosbag2Compression;
use bagscope_reader::{Bag, Compression, Filter};

use super::convert::{messages, opts, peer_lines, python_has, run, run_ok};

/// Runs rosbags' own converter from `src` to `dst`.
fn rosbags_convert(src: &Path, dst: &Path) {
    run_ok(
        std::process::Command::new("rosbags-convert")
            .arg("--src")
            .arg(src)
            .arg("--dst")
            .arg(dst),
        &format!("rosbags-convert on {}", src.display()),
    );
}

const ROSBAGS_ALL: &str = r#"
import sys, hashlib
from rosbags.rosbag2 import Reader
with Reader(sys.argv[1]) as r:
    for c, t, raw in r.messages():
        print(c.topic, t, hashlib.sha256(raw).hexdigest(), c.msgtype)
"#;

/// `--to-ros2` gives, for every topic it converts, the same CDR bytes as rosbags' own
/// converter (`rosbags-convert`) on real ROS 1 bags of standard types.
#[test]
fn to_ros2_matches_rosbags_convert() {
    if !python_has("rosbags.rosbag2") {
        assert!(
            std::env::var_os("CI").is_none(),
            "rosbags (pip) is missing but CI is set: .ci/run must install it"
        );
        eprintln!("rosbags is not installed: skipping");
        return;
    }
    let d = common::temp_dir("to-ros2");
    let mut converted_topics = 0;
    let mut notes: Vec<String> = Vec::new();
    for name in [
        "rosbag.js/example.bag",
        "RosBagSharp/dataset.bag",
        "bag-reader-java/Float32MultiArray.bag",
        "bag-reader-java/Int8MultiArray.bag",
        "bag-reader-java/PointCloud2.bag",
        "bag-reader-java/UInt64.bag",
        "embag/test.bag",
    ] {
        let src = common::corpus_dir().join(name);
        let b = Bag::open(&src).unwrap();
        let stem = name.replace(['/', '.'], "_");
        let ours = d.join(format!("{stem}-ours"));
        let mut o = opts(
            OutputFormat::Rosbag2Sqlite3,
            Compression::None,
            Rosbag2Compression::None,
            None,
        );
        o.to_ros2 = true;
        let r = export(&b, &ours, &o, &AtomicBool::new(false), &mut |_| {}).unwrap();
        let theirs = d.join(format!("{stem}-rosbags"));
        rosbags_convert(&src, &theirs);
        let read = |p: &Path| -> Vec<(String, u64, String, String)> {
            let out = run_ok(
                std::process::Command::new("python3")
                    .args(["-c", ROSBAGS_ALL])
                    .arg(p),
                &format!("rosbags on {}", p.display()),
            );
            let mut v: Vec<_> = out
                .lines()
                .map(|l| {
                    let f: Vec<&str> = l.split(' ').collect();
                    (
                        f[0].to_string(),
                        f[1].parse().unwrap(),
                        f[2].to_string(),
                        f[3].to_string(),
                    )
                })
                .collect();
            v.sort();
            v
        };
        let ours_msgs = read(&r.path);
        let theirs_msgs = read(&theirs);
        let topics: std::collections::BTreeSet<String> =
            ours_msgs.iter().map(|m| m.0.clone()).collect();
        let their_topics: std::collections::BTreeSet<String> =
            theirs_msgs.iter().map(|m| m.0.clone()).collect();
        // Types without a ROS 2 definition are translated (and named), not left out: both
        // converters carry the same topics over.
        assert_eq!(topics, their_topics, "{name}: {:?}", r.skipped);
        assert!(r.skipped.is_empty(), "{name}: {:?}", r.skipped);
        notes.extend(r.notes.iter().cloned());
        for t in &topics {
            let a: Vec<_> = ours_msgs.iter().filter(|m| &m.0 == t).collect();
            let b: Vec<_> = theirs_msgs.iter().filter(|m| &m.0 == t).collect();
            assert_eq!(a, b, "{name} {t}: bagscope and rosbags-convert differ");
        }
        converted_topics += topics.len();
    }
    assert_eq!(converted_topics, 18, "topics converted");
    // What was translated and mapped is said, once per type.
    for want in [
        "turtlesim/Pose → turtlesim/msg/Pose: no ROS 2 definition found, translated from the ROS 1 one (turtlesim/msg/Pose)",
        "rosgraph_msgs/Log → rosgraph_msgs/msg/Log: no ROS 2 definition found, translated from the ROS 1 one (rosgraph_msgs/msg/Log)",
        "tf/tfMessage → tf2_msgs/msg/TFMessage: the ROS 2 type with the same fields, which ROS 2 tools expect",
    ] {
        assert!(notes.iter().any(|n| n == want), "{want}\nnot in {notes:#?}");
    }
}

const ROSBAGS1_ALL: &str = r#"
import sys, hashlib
from rosbags.rosbag1 import Reader
with Reader(sys.argv[1]) as r:
    for c, t, raw in r.messages():
        print(c.topic, t, hashlib.sha256(raw).hexdigest())
"#;

/// `--to-ros1` gives, for every topic it converts, the same ROS 1 bytes as `rosbags-convert`
/// (rosbag2 to ROS 1 bag) on real ROS 2 recordings of standard types (the talker recordings
/// are not among them: rosbags-convert writes none of their messages), and every topic it leaves
/// out is named in the report; the md5sums are ROS 1's own (CameraInfo's fields were
/// lowercased in ROS 2: matched by name but for case, with the noetic md5sum).
#[test]
fn to_ros1_matches_rosbags_convert() {
    if !python_has("rosbags.rosbag1") {
        assert!(
            std::env::var_os("CI").is_none(),
            "rosbags (pip) is missing but CI is set: .ci/run must install it"
        );
        eprintln!("rosbags is not installed: skipping");
        return;
    }
    let d = common::temp_dir("to-ros1");
    let mut converted_topics = 0;
    for name in [
        "rosbags-rs/test_bag_sqlite3",
        "rosbags-rs/test_bag_mcap",
        "rosbag2parquet/array_msgs",
    ] {
        let src = common::corpus2_dir().join(name);
        assert!(src.is_dir(), "{} is missing from the corpus", src.display());
        let b = Bag::open(&src).unwrap();
        let stem = name.replace(['/', '.'], "_");
        let ours = d.join(format!("{stem}-ours.bag"));
        let mut o = opts(
            OutputFormat::Ros1Bag,
            Compression::None,
            Rosbag2Compression::None,
            None,
        );
        o.to_ros1 = true;
        let r = export(&b, &ours, &o, &AtomicBool::new(false), &mut |_| {}).unwrap();
        let theirs = d.join(format!("{stem}-rosbags.bag"));
        rosbags_convert(&src, &theirs);
        let ours_msgs = peer_lines(ROSBAGS1_ALL, &r.path);
        let theirs_msgs = peer_lines(ROSBAGS1_ALL, &theirs);
        let topics: std::collections::BTreeSet<String> =
            ours_msgs.iter().map(|m| m.0.clone()).collect();
        assert!(
            !topics.is_empty(),
            "{name}: nothing converted ({:?})",
            r.skipped
        );
        for t in &topics {
            let a: Vec<_> = ours_msgs.iter().filter(|m| &m.0 == t).collect();
            let b: Vec<_> = theirs_msgs.iter().filter(|m| &m.0 == t).collect();
            assert_eq!(a, b, "{name} {t}: bagscope and rosbags-convert differ");
        }
        let theirs_topics: std::collections::BTreeSet<String> =
            theirs_msgs.iter().map(|m| m.0.clone()).collect();
        for t in theirs_topics.difference(&topics) {
            assert!(
                r.skipped.iter().any(|s| s.starts_with(&format!("{t} "))),
                "{name}: {t} neither converted nor reported ({:?})",
                r.skipped
            );
        }
        let out = Bag::open(&r.path).unwrap();
        for c in &out.summary().connections {
            assert_eq!(c.encoding, "ros1");
            assert!(!c.datatype.contains("/msg/"), "{}", c.datatype);
            if c.datatype == "sensor_msgs/CameraInfo" {
                assert_eq!(c.md5sum, "c9a58c1b0b154e0e6da7578cb991d214");
            }
            if c.datatype == "std_msgs/Empty" {
                assert_eq!(c.md5sum, "d41d8cd98f00b204e9800998ecf8427e");
            }
        }
        converted_topics += topics.len();
    }
    assert!(
        converted_topics >= 150,
        "{converted_topics} topics converted"
    );
}

/// A ROS 2 talker converted to ROS 1: the strings decode to the same text as the CDR source,
/// `rcl_interfaces/msg/Log` (no ROS 1 type of that name) is left out and named, and a rosbag2
/// output is refused.
#[test]
fn to_ros1_keeps_values_and_names_what_it_leaves_out() {
    let d = common::temp_dir("to-ros1-talker");
    let src = Bag::open(common::corpus2_dir().join("rosbag2/humble_talker")).unwrap();
    let mut o = opts(
        OutputFormat::Ros1Bag,
        Compression::Lz4,
        Rosbag2Compression::None,
        None,
    );
    o.to_ros1 = true;
    let r = export(
        &src,
        &d.join("t.bag"),
        &o,
        &AtomicBool::new(false),
        &mut |_| {},
    )
    .unwrap();
    assert!(
        r.skipped
            .iter()
            .any(|s| s.starts_with("/rosout ") && s.contains("no ROS 1 definition")),
        "{:?}",
        r.skipped
    );
    let out = Bag::open(&r.path).unwrap();
    let text = |b: &Bag| -> Vec<String> {
        let ci = b.summary().topic("/topic").unwrap().connections[0];
        let plan =
            bagscope_reader::encoding::Plan::for_connection(&b.summary().connections[ci], &[])
                .unwrap();
        b.messages(&Filter {
            connections: Some(vec![ci]),
            ..Default::default()
        })
        .unwrap()
        .map(|m| {
            let n = plan.decode(&m.unwrap().data).unwrap();
            let mut s = String::new();
            bagscope_reader::encoding::to_json(&plan.def, &n.value, &mut s);
            s
        })
        .collect()
    };
    let (a, b) = (text(&src), text(&out));
    assert_eq!(a.len(), 10);
    assert_eq!(a, b);
    assert_eq!(out.summary().connections[0].datatype, "std_msgs/String");
    assert_eq!(
        out.summary().connections[0].md5sum,
        "992ce8a1687cec8c8bd883ec73ca41d1"
    );
    o.format = Some(OutputFormat::Rosbag2Sqlite3);
    let e = export(
        &src,
        &d.join("r2"),
        &o,
        &AtomicBool::new(false),
        &mut |_| {},
    )
    .unwrap_err();
    assert!(e.to_string().contains("--to-ros1"), "{e}");
}

/// The direct ROS 1 → CDR re-encoding (fields read and written in one pass) gives the same
/// bytes as the conversion through the decoded value tree, on every message of every
/// convertible connection of the real ROS 1 corpus; damaged messages get the value path's error.
#[test]
fn to_ros2_direct_path_equals_value_path() {
    let exp = common::expected();
    let (mut direct, mut messages) = (0, 0);
    let mut unopened = Vec::new();
    for name in exp.keys() {
        let path = common::corpus_dir().join(name);
        let Ok(b) = Bag::open(&path) else {
            unopened.push(name.as_str());
            continue;
        };
        for (ci, c) in b.summary().connections.iter().enumerate() {
            let Ok(t) = bagscope_reader::encoding::to_ros2::ToRos2::new(c, &[]) else {
                continue;
            };
            if !t.is_direct() {
                continue;
            }
            direct += 1;
            let f = bagscope_reader::Filter {
                connections: Some(vec![ci]),
                ..Default::default()
            };
            let Ok(it) = b.messages(&f) else { continue };
            for m in it.flatten() {
                messages += 1;
                assert_eq!(
                    t.convert(&m.data),
                    t.convert_by_value(&m.data),
                    "{name} {}: message at {}",
                    c.topic,
                    m.time_ns
                );
                // Cut short: both paths refuse it alike.
                if m.data.len() > 2 {
                    let cut = &m.data[..m.data.len() / 2];
                    assert_eq!(
                        t.convert(cut),
                        t.convert_by_value(cut),
                        "{name} {} cut",
                        c.topic
                    );
                }
            }
        }
    }
    // Every bag of the corpus but the three that are no bags at all (empty, a header that
    // claims 600 chunks and has none, text); every message of every direct connection.
    assert_eq!(
        unopened,
        [
            "rosbag-rs/dummy.bag",
            "rosbag.js/empty-file.bag",
            "webviz/invalid.bag"
        ]
    );
    assert_eq!(
        (direct, messages),
        (194, 261_919),
        "connections on the direct path, messages converted both ways"
    );
    // A boolean stored as another byte than 0 or 1 comes out as the decoder reads it: true, 1.
    let c = bagscope_reader::Connection {
        topic: "/flag".into(),
        datatype: "std_msgs/Bool".into(),
        message_definition: "bool data\n".into(),
        encoding: "ros1".into(),
        ..Default::default()
    };
    let t = bagscope_reader::encoding::to_ros2::ToRos2::new(&c, &[]).unwrap();
    assert!(t.is_direct());
    assert_eq!(t.convert(&[7]), Ok(vec![0, 1, 0, 0, 1]));
    assert_eq!(t.convert(&[7]), t.convert_by_value(&[7]));
    assert!(messages >= 20_000, "only {messages} messages compared");
}

/// `--split-duration`: a rosbag2 output split by time, each storage file holding at most the
/// given span of messages, read back whole (every message, in order) as one recording.
#[test]
fn rosbag2_output_split_by_duration() {
    let dir = common::corpus2_dir();
    let d = common::temp_dir("split-duration");
    for (src, format) in [
        ("rosbag2/humble_talker", OutputFormat::Rosbag2Sqlite3),
        ("rosbags-rs/test_bag_mcap", OutputFormat::Rosbag2Mcap),
    ] {
        let b = Bag::open(dir.join(src)).unwrap();
        let want = messages(&b);
        let (Some(a), Some(z)) = (b.summary().start_ns, b.summary().end_ns) else {
            panic!("{src}: no time range")
        };
        let span = (z - a) / 3 + 1;
        let mut o = opts(format, Compression::None, Rosbag2Compression::None, None);
        // Too short to mean anything (a file per message): refused, nothing written.
        o.split_ns = Some(999_999);
        let refused = d.join(format!("{}-refused", src.replace('/', "_")));
        let e = export(&b, &refused, &o, &AtomicBool::new(false), &mut |_| {}).unwrap_err();
        assert!(e.to_string().contains("at least 1 ms"), "{e}");
        assert!(!refused.exists());
        o.split_ns = Some(span);
        let out = d.join(src.replace('/', "_"));
        let back = run(&b, &out, &o);
        assert_eq!(messages(&back), want, "{src}");
        let files = back.summary().files.clone();
        assert!(files.len() >= 3, "{src}: {} files", files.len());
        for f in &files {
            if format == OutputFormat::Rosbag2Sqlite3 {
                // Small split files keep rosbag2's 4 KiB SQLite pages.
                let head = std::fs::read(f).unwrap();
                assert_eq!(
                    u16::from_be_bytes([head[16], head[17]]),
                    4096,
                    "{}",
                    f.display()
                );
            }
            let part = Bag::open(f).unwrap();
            let s = part.summary();
            let (Some(a), Some(z)) = (s.start_ns, s.end_ns) else {
                panic!("{}: empty part", f.display())
            };
            assert!(
                z - a < span,
                "{}: {} ns in a part of {span}",
                f.display(),
                z - a
            );
        }
    }
}

/// The ROS 2 definitions `--to-ros2` writes for the types it translates are read by rosbags
/// (parsed from the output's own `message_definitions`, not its type store), and every message
/// deserializes with them; `--strict-types` leaves those types out, naming them.
#[test]
fn translated_types_are_stored_and_strict_types_leaves_them_out() {
    if !python_has("rosbags.rosbag2") {
        assert!(
            std::env::var_os("CI").is_none(),
            "rosbags (pip) is missing but CI is set: .ci/run must install it"
        );
        return;
    }
    const READ_WITH_STORED: &str = r#"
import sys
from rosbags.rosbag2 import Reader
from rosbags.typesys import Stores, get_typestore, get_types_from_msg
with Reader(sys.argv[1]) as r:
    store = get_typestore(Stores.EMPTY)
    for c in r.connections:
        store.register(get_types_from_msg(c.msgdef.data, c.msgtype))
    n = {}
    for c, t, raw in r.messages():
        m = store.deserialize_cdr(raw, c.msgtype)
        n[(c.topic, c.msgtype)] = n.get((c.topic, c.msgtype), 0) + 1
    for (topic, ty), k in sorted(n.items()):
        print(topic, ty, k)
"#;
    let d = common::temp_dir("to-ros2-translated");
    let src = common::corpus_dir().join("rosbag.js/example.bag");
    let out = d.join("translated");
    let r = common::bagscope(&[
        &"export",
        &src,
        &"--format",
        &"rosbag2-sqlite3",
        &"--to-ros2",
        &"-o",
        &out,
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    let listed = run_ok(
        std::process::Command::new("python3")
            .args(["-c", READ_WITH_STORED])
            .arg(&out),
        "rosbags with the stored definitions",
    );
    assert_eq!(
        listed.lines().collect::<Vec<_>>(),
        [
            "/rosout rosgraph_msgs/msg/Log 10",
            "/tf tf2_msgs/msg/TFMessage 2688",
            "/tf_static tf2_msgs/msg/TFMessage 1",
            "/turtle1/cmd_vel geometry_msgs/msg/Twist 357",
            "/turtle1/color_sensor turtlesim/msg/Color 1351",
            "/turtle1/pose turtlesim/msg/Pose 1344",
            "/turtle2/cmd_vel geometry_msgs/msg/Twist 208",
            "/turtle2/color_sensor turtlesim/msg/Color 1344",
            "/turtle2/pose turtlesim/msg/Pose 1344",
        ]
    );
    // bagscope reads the translated definitions back and decodes every message.
    let r = common::bagscope(&[&"check", &out]);
    assert_eq!(r.code, Some(0), "{}", r.stdout);
    let strict = d.join("strict");
    let r = common::bagscope(&[
        &"export",
        &src,
        &"--format",
        &"rosbag2-sqlite3",
        &"--to-ros2",
        &"--strict-types",
        &"-o",
        &strict,
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    for t in [
        "/turtle1/pose (turtlesim/Pose)",
        "/rosout (rosgraph_msgs/Log)",
        "/tf (tf/tfMessage)",
    ] {
        assert!(
            r.stderr.contains(&format!("left out: {t}: ")),
            "{t}: {}",
            r.stderr
        );
    }
    assert!(!r.stderr.contains("translated from"), "{}", r.stderr);
    let b = Bag::open(&strict).unwrap();
    assert_eq!(b.summary().message_count, 357 + 208 + 1);
}
