//! ROS 1's own library reads every bag bagscope writes. Debian's python3-rosbag (what
//! `rosbag play`, rqt_bag and the Python API use; its lz4 goes through roslz4, which takes only
//! frames that carry a content checksum) reads each bag — bagscope's writer, `export` of real
//! bags, the demo, `--to-ros1` — in none, lz4 and bz2, and every message's topic, type,
//! md5sum, latching, time and bytes equal what bagscope reads; genpy's md5sum of each stored
//! definition equals the recorded one. Runs where Debian's ROS 1 library is installed; in CI
//! (CI=true, whose .ci/run installs it) its absence fails.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::path::Path;

use bagscope_reader::{Bag, Compression, Filter};

const PY: &str = "/usr/bin/python3";

fn rosbag_available() -> bool {
    std::process::Command::new(PY)
        .args(["-c", "import rosbag, roslz4"])
        .status()
        .is_ok_and(|s| s.success())
}

/// (topic, type, md5sum, latching, time, bytes as hex) of every message, in time order (ties
/// in file order).
type Row = (String, String, String, bool, u64, String);

fn read_with_rosbag(bag: &Path) -> Vec<Row> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/py/rosbag1_read.py");
    let out = std::process::Command::new(PY)
        .arg(&script)
        .arg(bag)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "ROS 1's rosbag could not read {}: {}",
        bag.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    text.lines()
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            assert_eq!(f.len(), 7, "{l}");
            assert_eq!(
                f[2],
                f[3],
                "{}: {} md5sum {} but genpy computes {} from the stored definition",
                bag.display(),
                f[1],
                f[2],
                f[3]
            );
            (
                f[0].to_string(),
                f[1].to_string(),
                f[2].to_string(),
                f[4] == "1",
                f[5].parse().unwrap(),
                f[6].to_string(),
            )
        })
        .collect()
}

fn read_with_bagscope(bag: &Path) -> Vec<Row> {
    let b = Bag::open(bag).unwrap();
    let s = b.summary();
    let mut rows = Vec::new();
    for m in b.messages(&Filter::default()).unwrap() {
        let m = m.unwrap();
        let c = &s.connections[m.conn];
        rows.push((
            c.topic.clone(),
            c.datatype.clone(),
            c.md5sum.clone(),
            c.latching,
            m.time_ns,
            m.data.iter().map(|b| format!("{b:02x}")).collect(),
        ));
    }
    rows
}

fn same_messages(bag: &Path, at_least: usize) {
    let mut theirs = read_with_rosbag(bag);
    let mut ours = read_with_bagscope(bag);
    assert!(
        ours.len() >= at_least,
        "{}: {} messages",
        bag.display(),
        ours.len()
    );
    // Both read in time order; ties may fall either way between connections.
    theirs.sort_by(|a, b| (a.4, &a.0, &a.5).cmp(&(b.4, &b.0, &b.5)));
    ours.sort_by(|a, b| (a.4, &a.0, &a.5).cmp(&(b.4, &b.0, &b.5)));
    assert_eq!(theirs.len(), ours.len(), "{}", bag.display());
    for (t, o) in theirs.iter().zip(&ours) {
        assert_eq!(t, o, "{}", bag.display());
    }
}

fn skip_unless_available() -> bool {
    if rosbag_available() {
        return false;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "Debian's python3-rosbag is not installed but CI is set: .ci/run must install it"
    );
    eprintln!("python3-rosbag is not installed: skipping (apt-get install python3-rosbag)");
    true
}

#[test]
fn ros1_reads_bagscope_writer_output_in_every_compression() {
    if skip_unless_available() {
        return;
    }
    let d = common::temp_dir("ros1-peer-writer");
    for compression in [Compression::None, Compression::Lz4, Compression::Bz2] {
        // Small chunks: many of them, so every chunk's frame is read.
        let p = d.join(format!("writer-{}.bag", compression.name()));
        let wrote = common::write_fixture(&p, compression, 4000, 3000);
        same_messages(&p, wrote.len());
    }
}

#[test]
fn ros1_reads_what_export_writes_from_real_bags() {
    if skip_unless_available() {
        return;
    }
    let corpus = common::corpus_dir();
    let d = common::temp_dir("ros1-peer-export");
    for (name, min) in [
        ("rosbag.js/example.bag", 8000),
        ("ros_comm/rosbag_storage_test.bag", 5),
        ("matlab_rosbag/empty_msgs.bag", 1),
        ("fiducials/aruco_images.bag", 10),
    ] {
        let src = corpus.join(name);
        for c in ["none", "lz4", "bz2"] {
            let out = d.join(format!("{}-{c}.bag", name.replace('/', "_")));
            common::bagscope(&[&"export", &src, &"-o", &out, &"--compression", &c]).ok();
            same_messages(&out, min);
        }
        // lz4 is what `export -o X.bag` writes when not told.
        let out = d.join(format!("{}-default.bag", name.replace('/', "_")));
        common::bagscope(&[&"export", &src, &"-o", &out]).ok();
        same_messages(&out, min);
    }
}

#[test]
fn ros1_reads_the_demo_and_a_ros2_recording_converted_to_ros1() {
    if skip_unless_available() {
        return;
    }
    let d = common::temp_dir("ros1-peer-demo");
    let demo = d.join("demo.bag");
    common::bagscope(&[&"demo", &demo]).ok();
    same_messages(&demo, 1000);
    let ros2 = common::corpus2_dir().join("rosbags-rs/test_bag_sqlite3");
    for c in ["lz4", "bz2"] {
        let out = d.join(format!("from-ros2-{c}.bag"));
        let r = common::bagscope(&[
            &"export",
            &ros2,
            &"-o",
            &out,
            &"--to-ros1",
            &"--compression",
            &c,
        ]);
        assert!(out.is_file(), "{}", r.stderr);
        same_messages(&out, 10);
    }
}
