//! `bagscope play` and `bagscope record` against a real ROS 1 graph: Debian's `roscore`, the
//! C++ `rosbag record`, `rostopic pub` and `rostopic hz` (installed by `.ci/run`; a missing one
//! fails the test, it never skips). Every master and node listens on 127.0.0.1 only, on free
//! ports, each test with a master of its own.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use bagscope_reader::{Bag, BagWriter, ConnectionSpec, Filter, WriteOptions};
use common::ros1::{run_for, spawn, Master};

const BIN: &str = env!("CARGO_BIN_EXE_bagscope");

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("bagscope-ros1live-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Each topic's messages (bytes, in time order) of the connections `keep` accepts, and each
/// topic's (type, md5sum, definition, latching).
type Topics = BTreeMap<String, (Vec<Vec<u8>>, (String, String, String, bool))>;

fn topics_of(path: &Path, keep: impl Fn(&bagscope_reader::Connection) -> bool) -> Topics {
    let bag = Bag::open(path).unwrap();
    let s = bag.summary();
    let conns: Vec<usize> = (0..s.connections.len())
        .filter(|&c| keep(&s.connections[c]))
        .collect();
    let mut out = Topics::new();
    for &c in &conns {
        let k = &s.connections[c];
        out.entry(k.topic.clone()).or_insert_with(|| {
            (
                Vec::new(),
                (
                    k.datatype.clone(),
                    k.md5sum.clone(),
                    k.message_definition.clone(),
                    k.latching,
                ),
            )
        });
    }
    let f = Filter {
        connections: Some(conns),
        ..Default::default()
    };
    for m in bag.messages(&f).unwrap() {
        let m = m.unwrap();
        let t = &s.connections[m.conn].topic;
        out.get_mut(t).unwrap().0.push(m.data.to_vec());
    }
    out
}

/// `bagscope play` of the corpus bag at `rate` once every topic has a subscriber; every
/// message published.
fn play_example(m: &Master, rate: &str) {
    let mut play = m.command(BIN);
    play.arg("play")
        .arg(example_bag())
        .args(["--rate", rate, "--wait-for-subscribers", "-q"]);
    let o = run_for(&mut play, Duration::from_secs(60));
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{said}");
    assert!(said.contains("published 8647 message(s)"), "{said}");
}

/// Starts the C++ `rosbag record -a` into `DIR/cpp.bag`, up (subscribed to /rosout, its first
/// topic) when this returns.
fn cpp_record(m: &Master, dir: &Path) -> (common::ros1::Proc, PathBuf) {
    let out = dir.join("cpp.bag");
    let mut rec = m.command("rosbag");
    rec.args(["record", "-a", "-O"]).arg(&out);
    let rec = spawn(rec, "rosbag record", &dir.join("record.log"));
    m.wait_for("/rosout", false);
    (rec, out)
}

/// Stops the C++ `rosbag record` (SIGINT) and reads what bagscope play published into it.
fn cpp_recorded(rec: common::ros1::Proc, out: &Path, dir: &Path) -> Topics {
    std::thread::sleep(Duration::from_secs(1));
    rec.interrupt(Duration::from_secs(20));
    // The `rosbag` script returns before its C++ recorder has renamed `OUT.active`.
    let end = Instant::now() + Duration::from_secs(20);
    while !out.exists() && Instant::now() < end {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        out.exists(),
        "rosbag record wrote nothing: {}",
        std::fs::read_to_string(dir.join("record.log")).unwrap_or_default()
    );
    topics_of(out, |c| {
        c.callerid
            .as_deref()
            .is_some_and(|id| id.starts_with("/bagscope_play"))
    })
}

/// The same topics with the same type, md5sum, definition (and latching, when `latching`)
/// and the same messages byte for byte.
fn assert_arrived(want: &Topics, got: &Topics, latching: bool) {
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>()
    );
    for (topic, (msgs, (ty, md5, def, latched))) in want {
        let (gmsgs, (gty, gmd5, gdef, glatched)) = &got[topic];
        assert_eq!((gty, gmd5, gdef), (ty, md5, def), "{topic}");
        if latching {
            assert_eq!(glatched, latched, "{topic}: latching");
        }
        assert_eq!(gmsgs.len(), msgs.len(), "{topic}: messages");
        assert!(gmsgs == msgs, "{topic}: bytes differ");
    }
}

fn example_bag() -> PathBuf {
    common::corpus_dir().join("rosbag.js/example.bag")
}

/// The corpus bag played by `bagscope play` while the C++ `rosbag record -a` records: every
/// topic arrives with its type, md5sum, definition and latching, every message byte for byte.
#[test]
fn play_is_recorded_by_cpp_rosbag_record_byte_for_byte() {
    let dir = scratch("cpp-record");
    let m = Master::start(&dir);
    let (rec, out) = cpp_record(&m, &dir);
    play_example(&m, "4");
    let got = cpp_recorded(rec, &out, &dir);
    assert_arrived(&topics_of(&example_bag(), |_| true), &got, true);
}

/// `rostopic pub` recorded by `bagscope record`: Debian's `rosbag info` and `rosbag check`
/// read the file and agree with bagscope; Ctrl-C leaves the finished file under its name.
#[test]
fn rostopic_pub_is_recorded_and_rosbag_reads_the_file() {
    let dir = scratch("record-pub");
    let m = Master::start(&dir);
    let mut publ = m.command("rostopic");
    publ.args([
        "pub",
        "-r",
        "20",
        "/chatter",
        "std_msgs/String",
        "data: hello bagscope",
    ]);
    let _publ = spawn(publ, "rostopic pub", &dir.join("pub.log"));
    m.wait_for("/chatter", true);
    let out = dir.join("rec.bag");
    let mut rec = m.command(BIN);
    rec.args(["record", "-q", "--topic", "/chatter", "-o"])
        .arg(&out);
    let rec = spawn(rec, "bagscope record", &dir.join("rec.log"));
    std::thread::sleep(Duration::from_secs(3));
    let status = rec.interrupt(Duration::from_secs(10));
    let log = std::fs::read_to_string(dir.join("rec.log")).unwrap();
    assert!(status.success(), "{log}");
    assert!(
        out.is_file() && !dir.join("rec.bag.active").exists(),
        "{log}"
    );

    let bag = Bag::open(&out).unwrap();
    let s = bag.summary();
    let n = s.message_count;
    assert!(n >= 30, "{n} messages in 3 s at 20 Hz");
    let c = &s.connections[0];
    assert_eq!(
        (c.topic.as_str(), c.datatype.as_str(), c.md5sum.as_str()),
        (
            "/chatter",
            "std_msgs/String",
            "992ce8a1687cec8c8bd883ec73ca41d1"
        )
    );
    assert!(c.message_definition.contains("string data"));
    let first = bag
        .messages(&Filter::default())
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    let text = b"hello bagscope";
    assert_eq!(&first.data[4..], text);

    let info = m
        .command("rosbag")
        .args(["info", "--yaml"])
        .arg(&out)
        .output()
        .unwrap();
    let info = String::from_utf8_lossy(&info.stdout).into_owned();
    assert!(info.contains(&format!("messages: {n}\n")), "{info}");
    assert!(info.contains("topic: /chatter"), "{info}");
    assert!(info.contains("type: std_msgs/String"), "{info}");
    let check = m.command("rosbag").arg("check").arg(&out).output().unwrap();
    assert!(check.status.success());
    assert!(
        String::from_utf8_lossy(&check.stdout).contains("does not need any migrations"),
        "{}",
        String::from_utf8_lossy(&check.stdout)
    );
    let ours = Command::new(BIN).arg("check").arg(&out).output().unwrap();
    assert!(
        ours.status.success(),
        "{}",
        String::from_utf8_lossy(&ours.stdout)
    );
}

/// bagscope to bagscope through Debian's master: every message recorded as played, latching
/// kept; the recorder killed with SIGKILL leaves `OUT.active`, which opens with every message
/// received more than a second before.
#[test]
fn a_recorder_killed_leaves_every_message_older_than_a_second() {
    let dir = scratch("kill");
    let m = Master::start(&dir);
    let out = dir.join("rec.mcap");
    let mut rec = m.command(BIN);
    rec.args([
        "record",
        "-q",
        "--all",
        "--format",
        "mcap",
        "--compression",
        "zstd",
        "-o",
    ])
    .arg(&out);
    let rec = spawn(rec, "bagscope record", &dir.join("rec.log"));
    m.wait_for("/rosout", false);
    play_example(&m, "5");
    std::thread::sleep(Duration::from_millis(1500));
    rec.signal("-KILL");
    drop(rec);
    let active = dir.join("rec.mcap.active");
    assert!(active.is_file() && !out.exists());
    let want = topics_of(&example_bag(), |_| true);
    // Only rosout's own /rosout_agg is recorded beside what was played.
    let got = topics_of(&active, |c| c.topic != "/rosout_agg");
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>()
    );
    for (topic, (msgs, meta)) in &want {
        let (gmsgs, gmeta) = &got[topic];
        assert_eq!(gmeta, meta, "{topic}: type, md5sum, definition, latching");
        assert!(
            gmsgs == msgs,
            "{topic}: {} of {} messages, or bytes differ",
            gmsgs.len(),
            msgs.len()
        );
    }
    // `check` reads the file as left (no summary) whole, and says it was not closed.
    let total = Bag::open(&active).unwrap().summary().message_count;
    let ours = Command::new(BIN)
        .arg("check")
        .arg(&active)
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&ours.stdout);
    assert!(
        said.contains(&format!("{total} messages")) && said.contains("not closed"),
        "{said}"
    );
}

/// A 50 Hz topic played at rate 1: `rostopic hz` measures 50 Hz within 5 %; a late subscriber
/// of a latched topic gets its message.
#[test]
fn rostopic_hz_sees_the_recorded_rate_and_late_subscribers_get_latched_messages() {
    let dir = scratch("hz");
    let bag = dir.join("hz.bag");
    let mut w = BagWriter::create(&bag, WriteOptions::default()).unwrap();
    let chatter = w.add_connection(ConnectionSpec {
        topic: "/chatter".into(),
        datatype: "std_msgs/String".into(),
        md5sum: "992ce8a1687cec8c8bd883ec73ca41d1".into(),
        message_definition: "string data\n".into(),
        ..Default::default()
    });
    let latched = w.add_connection(ConnectionSpec {
        topic: "/map_name".into(),
        datatype: "std_msgs/String".into(),
        md5sum: "992ce8a1687cec8c8bd883ec73ca41d1".into(),
        message_definition: "string data\n".into(),
        latching: true,
        ..Default::default()
    });
    let t0 = 1_700_000_000_000_000_000u64;
    let msg = |s: &str| {
        let mut b = (s.len() as u32).to_le_bytes().to_vec();
        b.extend_from_slice(s.as_bytes());
        b
    };
    w.write(latched, t0, &msg("warehouse")).unwrap();
    for i in 0..400u64 {
        w.write(chatter, t0 + i * 20_000_000, &msg(&format!("n{i}")))
            .unwrap();
    }
    w.finish().unwrap();

    let m = Master::start(&dir);
    // `rostopic hz` subscribes once the topic is advertised: the delay gives it time to.
    let mut play = m.command(BIN);
    play.arg("play").arg(&bag).args(["-q", "--delay", "3"]);
    let started = Instant::now();
    let mut play = spawn(play, "bagscope play", &dir.join("play.log"));
    m.wait_for("/chatter", true);
    let mut hz = m.command("rostopic");
    hz.args(["hz", "/chatter", "-w", "200"]);
    let hz = spawn(hz, "rostopic hz", &dir.join("hz.log"));
    m.wait_for("/chatter", false);
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "hz subscribed too late"
    );
    // Joins after the latched message was published.
    std::thread::sleep(Duration::from_secs(5).saturating_sub(started.elapsed()));
    let late = m
        .command("rostopic")
        .args(["echo", "-n", "1", "/map_name"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&late.stdout).contains("data: \"warehouse\""),
        "{}{}",
        String::from_utf8_lossy(&late.stdout),
        String::from_utf8_lossy(&late.stderr)
    );
    let end = Instant::now() + Duration::from_secs(30);
    while play.child.try_wait().unwrap().is_none() {
        assert!(Instant::now() < end, "play did not end");
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = hz.interrupt(Duration::from_secs(10));
    let log = std::fs::read_to_string(dir.join("hz.log")).unwrap();
    let rates: Vec<f64> = log
        .lines()
        .filter_map(|l| l.trim().strip_prefix("average rate: "))
        .filter_map(|r| r.trim().parse().ok())
        .collect();
    // The last full window of 200 messages.
    let rate = *rates.last().unwrap_or_else(|| panic!("no rate in {log}"));
    assert!(
        (rate - 50.0).abs() <= 2.5,
        "rostopic hz saw {rate} Hz: {log}"
    );
}

/// A ROS 2 recording played with `--to-ros1` while the C++ `rosbag record -a` records: every
/// topic that converts arrives with the ROS 1 type, md5sum, definition and bytes that
/// `bagscope export --to-ros1` writes for it (the same conversion, on the fly).
#[test]
fn a_ros2_recording_played_with_to_ros1_arrives_as_export_converts_it() {
    let dir = scratch("to-ros1");
    let src = common::corpus2_dir().join("rosbags-rs/test_bag_mcap");
    let conv = dir.join("conv.bag");
    let o = run_for(
        Command::new(BIN)
            .arg("export")
            .arg(&src)
            .arg("-o")
            .arg(&conv)
            .arg("--to-ros1"),
        Duration::from_secs(60),
    );
    assert!(
        o.status.success() || conv.exists(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let want = topics_of(&conv, |_| true);
    assert!(want.len() > 50, "{} topics converted", want.len());

    let m = Master::start(&dir);
    let (rec, out) = cpp_record(&m, &dir);
    let mut play = m.command(BIN);
    play.arg("play")
        .arg(&src)
        .args(["--to-ros1", "--rate", "2", "--wait-for-subscribers", "-q"]);
    let o = run_for(&mut play, Duration::from_secs(90));
    let said = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{said}");
    let n: usize = want.values().map(|(m, _)| m.len()).sum();
    assert!(
        said.contains(&format!("published {n} message(s)")),
        "{said}"
    );
    let got = cpp_recorded(rec, &out, &dir);
    assert_arrived(&want, &got, false);
}

/// `bagscope record --split-duration 1`: a new file every second (`run_0.bag`, `run_1.bag`,
/// ...), each finished and indexed, together every message played, in order.
#[test]
fn a_split_recording_holds_every_message_across_its_files() {
    let dir = scratch("split");
    let m = Master::start(&dir);
    let out = dir.join("run.bag");
    let mut rec = m.command(BIN);
    rec.args(["record", "-q", "--all", "--split-duration", "1", "-o"])
        .arg(&out);
    let rec = spawn(rec, "bagscope record", &dir.join("rec.log"));
    m.wait_for("/rosout", false);
    play_example(&m, "4");
    std::thread::sleep(Duration::from_millis(1500));
    let status = rec.interrupt(Duration::from_secs(20));
    assert!(status.success());
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy().into_owned();
            n.starts_with("run_") && n.ends_with(".bag")
        })
        .collect();
    files.sort_by_key(|p| {
        let n = p.file_stem().unwrap().to_string_lossy().into_owned();
        n["run_".len()..].parse::<u32>().unwrap()
    });
    assert!(files.len() >= 4, "{files:?}");
    let want = topics_of(&example_bag(), |_| true);
    let mut got: BTreeMap<String, Vec<Vec<u8>>> = BTreeMap::new();
    for f in &files {
        for (t, (msgs, _)) in topics_of(f, |c| c.topic != "/rosout_agg") {
            got.entry(t).or_default().extend(msgs);
        }
    }
    for (topic, (msgs, _)) in &want {
        assert!(got.get(topic) == Some(msgs), "{topic}");
    }
}
