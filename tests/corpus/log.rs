//! Log messages over a whole recording: ROS 1 rosgraph_msgs/Log and ROS 2
//! rcl_interfaces/msg/Log from the real corpora, and `bagscope log` with its filters.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::sync::atomic::AtomicBool;

use bagscope_ops::reports::log::{log_topics, read_logs, Level, LogLine};
use bagscope_reader::Bag;

fn all_lines(bag: &Bag) -> (Vec<LogLine>, u64) {
    let mut v = Vec::new();
    let bad = read_logs(bag, &log_topics(bag), &AtomicBool::new(false), &mut |b| {
        v.extend(b);
        true
    })
    .unwrap();
    (v, bad)
}

#[test]
fn ros1_and_ros2_logs_read_in_time_order() {
    let bag = Bag::open(common::corpus_dir().join("plotjuggler/out.bag")).unwrap();
    let (lines, bad) = all_lines(&bag);
    assert_eq!(bad, 0);
    assert_eq!(lines.len(), 194);
    assert!(lines.windows(2).all(|w| w[0].time_ns <= w[1].time_ns));
    let warn = lines.iter().filter(|l| l.level == Level::Warn).count();
    assert_eq!(warn, 96);
    let l = lines.iter().find(|l| l.node == "/talker").unwrap();
    assert!(l.file.ends_with("dummy_rosout/src/main.cpp"), "{}", l.file);
    assert!(l.stamp_ns.is_some());

    let bag = Bag::open(common::corpus2_dir().join("rosbag2/humble_talker")).unwrap();
    let (lines, bad) = all_lines(&bag);
    assert_eq!(bad, 0);
    assert_eq!(lines.len(), 10);
    for (i, l) in lines.iter().enumerate() {
        assert_eq!(l.level, Level::Info);
        assert_eq!(l.node, "minimal_publisher");
        assert_eq!(l.msg, format!("Publishing: 'Hello, world! {i}'"));
        assert_eq!(l.line, 38);
        // ROS 2 stamps are builtin_interfaces/Time: close to the record time.
        let s = l.stamp_ns.unwrap();
        assert!(
            s.abs_diff(l.time_ns) < 1_000_000_000,
            "{s} vs {}",
            l.time_ns
        );
    }
}

#[test]
fn bagscope_log_filters() {
    let bag = common::corpus_dir().join("plotjuggler/out.bag");
    let run = |args: &[&str]| {
        let mut all: Vec<&dyn AsRef<std::ffi::OsStr>> = vec![&"log", &bag];
        all.extend(args.iter().map(|a| a as &dyn AsRef<std::ffi::OsStr>));
        common::bagscope(&all).ok()
    };
    assert_eq!(run(&[]).lines().count(), 194);
    let warn = run(&["--level", "warn"]);
    assert_eq!(warn.lines().count(), 96);
    assert!(warn.lines().all(|l| l.contains("[WARN]")));
    assert_eq!(
        run(&["--level", "warn", "--node", "talker"])
            .lines()
            .count(),
        95
    );
    let json = run(&["--grep", "LOOK AT", "--json"]);
    let first: serde_json::Value = serde_json::from_str(json.lines().next().unwrap()).unwrap();
    assert_eq!(first["node"], "/talker");
    assert_eq!(first["topic"], "rosout");
    // A recording without a log topic: exit 1 and a clear message.
    let ran = common::bagscope(&[&"log", &common::corpus_dir().join("ros_numpy/test.bag")]);
    assert_eq!(ran.code, Some(1));
    assert!(ran.stderr.contains("no log topic"));
}

#[test]
fn find_text_and_numbers_on_real_recordings() {
    use bagscope_ops::reports::find::{find, parse_query};
    let no = AtomicBool::new(false);
    // ROS 2 strings: std_msgs/msg/String on /topic.
    let bag = Bag::open(common::corpus2_dir().join("rosbag2/humble_talker")).unwrap();
    let (hits, capped) =
        find(&bag, &parse_query("/topic contains WORLD! 1").unwrap(), &no).unwrap();
    assert!(!capped);
    let v: Vec<&str> = hits.iter().map(|h| h.value.as_str()).collect();
    assert_eq!(v, ["Hello, world! 1"]);
    // bagscope find: exit 1 with no hit.
    let ran = common::bagscope(&[
        &"find",
        &common::corpus_dir().join("rosbag.js/example.bag"),
        &"/turtle1/pose.x > 1000",
    ]);
    assert_eq!(ran.code, Some(1));
    // ROS 1 numbers: the turtle's x crossing 6 m, checked against the values rosbags reads
    // (a reader of its own, with the bag's stored definition).
    let path = common::corpus_dir().join("rosbag.js/example.bag");
    let bag = Bag::open(&path).unwrap();
    let q = parse_query("/turtle1/pose.x crosses 6").unwrap();
    let (hits, _) = find(&bag, &q, &no).unwrap();
    const XS: &str = r#"
import sys
from pathlib import Path
from rosbags.highlevel import AnyReader
with AnyReader([Path(sys.argv[1])]) as r:
    conns = [c for c in r.connections if c.topic == '/turtle1/pose']
    for c, t, raw in r.messages(connections=conns):
        print(t, repr(r.deserialize(raw, c.msgtype).x))
"#;
    let out = std::process::Command::new("python3")
        .args(["-c", XS])
        .arg(&path)
        .output()
        .unwrap();
    if !out.status.success() {
        assert!(
            std::env::var_os("CI").is_none(),
            "rosbags failed but CI is set: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        eprintln!("rosbags is not installed: the crossings are not checked");
        return;
    }
    let xs: Vec<(u64, f64)> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let (t, x) = l.split_once(' ').unwrap();
            (t.parse().unwrap(), x.parse().unwrap())
        })
        .collect();
    assert_eq!(xs.len(), 1344);
    let want: Vec<u64> = xs
        .windows(2)
        .filter(|w| (w[0].1 < 6.0) != (w[1].1 < 6.0))
        .map(|w| w[1].0)
        .collect();
    assert!(!want.is_empty());
    assert_eq!(hits.iter().map(|h| h.time_ns).collect::<Vec<_>>(), want);
}

#[test]
fn bagscope_timing_on_real_recordings() {
    let run =
        |bag: std::path::PathBuf, topic: &str| common::bagscope(&[&"timing", &bag, &topic]).ok();
    // rosbag.js/example.bag /tf: 2688 messages in 21.7 s; bursty, so the median period is
    // far shorter than the mean.
    let out = run(common::corpus_dir().join("rosbag.js/example.bag"), "/tf");
    assert!(out.contains("messages:       2688"), "{out}");
    assert!(out.contains("mean rate:      123.8"), "{out}");
    assert!(out.contains("median period:  371 µs"), "{out}");
    // ROS 2: rcl_interfaces/msg/Log has a top-level stamp.
    let out = run(
        common::corpus2_dir().join("rosbag2/humble_talker"),
        "/rosout",
    );
    assert!(out.contains("median period:  500.0 ms"), "{out}");
    assert!(out.contains("(10 messages)"), "{out}");
}
