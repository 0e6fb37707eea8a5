//! `bagscope play --ros2` and `bagscope record --ros2` against real ROS 2 peers: rclpy with
//! Fast DDS and Cyclone DDS's Python API (pip packages installed by `.ci/run`; a missing one
//! fails the test). Each test runs its processes in a network namespace of its own with only
//! loopback up (`tests/common/ros2.rs`), every participant configured for localhost too.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::path::{Path, PathBuf};
use std::time::Duration;

use bagscope_reader::encoding::to_ros2::ToRos2;
use bagscope_reader::{Bag, Filter};
use common::ros2::{assert_same, in_netns, padded, seen, Seen};

const BIN: &str = env!("CARGO_BIN_EXE_bagscope");

/// Each message of `topics` in `path` (time order): topic, time, bytes.
fn recorded(path: &Path, topics: &[&str]) -> Vec<(String, u64, Vec<u8>)> {
    let bag = Bag::open(path).unwrap();
    let conns = bag
        .connections_of_topics(&topics.iter().map(|t| t.to_string()).collect::<Vec<_>>())
        .unwrap();
    let f = Filter {
        connections: Some(conns),
        ..Default::default()
    };
    common::messages_of(&bag, &f)
}

/// `got`'s messages of `topic`, in arrival order.
fn of(got: &[Seen], topic: &str) -> Vec<Vec<u8>> {
    got.iter()
        .filter(|s| s.topic == topic)
        .map(|s| s.data.clone())
        .collect()
}

fn span(ts: impl Iterator<Item = u64> + Clone) -> f64 {
    let lo = ts.clone().min().unwrap_or(0);
    let hi = ts.max().unwrap_or(0);
    (hi - lo) as f64 / 1e9
}

/// Plays `recording`'s `/topic` (std_msgs/msg/String) at rate 1 to an rclpy subscriber and a
/// Cyclone DDS reader at once: both receive every message, byte for byte, over a span within
/// 2 % of the recorded one.
fn play_talker_to_both_peers(recording: &Path, name: &str) {
    let dir = common::temp_dir(&format!("ros2-play-{name}"));
    let want = recorded(recording, &["/topic"]);
    assert_eq!(want.len(), 10, "the corpus talker has 10 messages");
    let script = format!(
        "python3 \"$PEER\" sub rclpy.jsonl /topic=std_msgs/msg/String --count 10 --timeout 40 > rclpy.log 2>&1 &\n\
         python3 \"$PEER\" cyclone-sub cyclone.jsonl /topic=std_msgs/msg/String --count 10 --timeout 40 > cyclone.log 2>&1 &\n\
         ready rclpy.log cyclone.log\n\
         # The first subscriber matched, two more seconds for the other.\n\
         \"$BAGSCOPE\" play --ros2 -q --topic /topic --wait-for-subscribers --delay 2 '{}'\n\
         wait\n",
        recording.display()
    );
    let out = in_netns(&dir, BIN, &script, Duration::from_secs(90));
    let log = String::from_utf8_lossy(&out.stderr);
    assert!(log.contains("published 10 message(s)"), "{log}");
    let recorded_span = span(want.iter().map(|m| m.1));
    for peer in ["rclpy", "cyclone"] {
        let got = seen(&dir.join(format!("{peer}.jsonl")));
        assert_same(
            &of(&got, "/topic"),
            &want.iter().map(|m| m.2.clone()).collect::<Vec<_>>(),
            &format!("{peer} received the recorded bytes, all of them, in order"),
        );
        let s = span(got.iter().map(|g| g.t));
        assert!(
            (s - recorded_span).abs() <= 0.02 * recorded_span,
            "{peer}: received over {s:.3} s, recorded over {recorded_span:.3} s"
        );
    }
}

#[test]
fn rosbag2_sqlite_plays_to_rclpy_and_cyclone_byte_for_byte() {
    let rec = common::corpus2_dir().join("rosbag2/rolling_sqlite3/talker");
    play_talker_to_both_peers(&rec, "sqlite");
}

#[test]
fn mcap_plays_to_rclpy_and_cyclone_byte_for_byte() {
    let rec = common::corpus2_dir().join("rosbag2/rolling_mcap/talker");
    play_talker_to_both_peers(&rec, "mcap");
}

/// A recording rosbags wrote (CDR payloads of 10 to 13 bytes, not padded to a multiple of
/// four as Fast DDS pads what it sends) played to an rclpy subscriber: it receives exactly
/// what it receives when rclpy itself publishes the same serialized bytes
/// (`Publisher.publish` of bytes over Fast DDS): the recording's bytes, then the zeros that
/// pad them to a multiple of four.
#[test]
fn play_delivers_what_rclpy_delivers_of_unpadded_recordings() {
    let dir = common::temp_dir("ros2-play-unpadded");
    let rec = dir.join("rosbags");
    let texts = ["a", "ab", "abc", "abcd", "hello world"];
    let write = [
        "from rosbags.rosbag2 import Writer",
        "from rosbags.typesys import Stores, get_typestore",
        "store = get_typestore(Stores.LATEST)",
        "String = store.types['std_msgs/msg/String']",
        "with Writer(REC, version=Writer.VERSION_LATEST) as w:",
        "    c = w.add_connection('/topic', 'std_msgs/msg/String', typestore=store)",
        "    for i, t in enumerate(TEXTS):",
        "        data = store.serialize_cdr(String(data=t), 'std_msgs/msg/String')",
        "        w.write(c, 10**9 + i * 10**8, bytes(data))",
    ]
    .join("\n")
    .replace("REC", &format!("{:?}", rec.display().to_string()))
    .replace("TEXTS", &format!("{texts:?}"));
    let out = std::process::Command::new("python3")
        .args(["-c", &write])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let want: Vec<Vec<u8>> = recorded(&rec, &["/topic"])
        .into_iter()
        .map(|m| m.2)
        .collect();
    assert_eq!(want.len(), texts.len());
    assert!(want.iter().any(|m| m.len() % 4 != 0), "payloads not padded");
    let lines: String = want
        .iter()
        .map(|m| {
            let hex: String = m.iter().map(|b| format!("{b:02x}")).collect();
            format!("{{\"hex\": \"{hex}\"}}\n")
        })
        .collect();
    std::fs::write(dir.join("recorded.jsonl"), lines).unwrap();
    let n = texts.len();
    let script = format!(
        "python3 \"$PEER\" sub played.jsonl /topic=std_msgs/msg/String --count {n} --timeout 40 > a.log 2>&1 &\n\
         ready a.log\n\
         \"$BAGSCOPE\" play --ros2 -q --topic /topic --wait-for-subscribers '{}'\n\
         wait\n\
         python3 \"$PEER\" sub published.jsonl /topic=std_msgs/msg/String --count {n} --timeout 40 > b.log 2>&1 &\n\
         ready b.log\n\
         python3 \"$PEER\" pub-raw /topic recorded.jsonl\n\
         wait\n",
        rec.display()
    );
    in_netns(&dir, BIN, &script, Duration::from_secs(120));
    let played: Vec<Vec<u8>> = seen(&dir.join("played.jsonl"))
        .into_iter()
        .map(|s| s.data)
        .collect();
    let published: Vec<Vec<u8>> = seen(&dir.join("published.jsonl"))
        .into_iter()
        .map(|s| s.data)
        .collect();
    assert_same(
        &played,
        &published,
        "played by bagscope vs published by rclpy",
    );
    for (got, rec) in played.iter().zip(&want) {
        assert_eq!(&got[..rec.len()], &rec[..], "the recording's bytes first");
        assert!(got[rec.len()..].iter().all(|&b| b == 0) && got.len() == rec.len().div_ceil(4) * 4);
    }
}

/// A ROS 1 bag (a real lidar recording: odometry, laser scans, 1.1 MB point clouds) played
/// with --to-ros2: rclpy receives the odometry and scans, a Cyclone DDS reader the point
/// clouds, each message as bagscope's conversion makes it. (The clouds go to Cyclone: a Fast
/// DDS subscriber over UDP loses most samples this large from RustDDS's writer, whose
/// 256-byte fragments arrive in one burst that overflows its socket buffer and are not all
/// repaired; README, "Live ROS 2".)
#[test]
fn ros1_bag_plays_to_ros2_converted() {
    let dir = common::temp_dir("ros2-play-to-ros2");
    let bag_path = common::corpus_dir().join("embag/test.bag");
    let bag = Bag::open(&bag_path).unwrap();
    let s = bag.summary();
    let convs: Vec<Option<ToRos2>> = s
        .connections
        .iter()
        .map(|c| ToRos2::new(c, &[]).ok())
        .collect();
    let mut want: std::collections::BTreeMap<String, Vec<Vec<u8>>> = Default::default();
    let mut types: std::collections::BTreeMap<String, String> = Default::default();
    for m in bag.messages(&Filter::default()).unwrap() {
        let m = m.unwrap();
        let c = &s.connections[m.conn];
        let conv = convs[m.conn]
            .as_ref()
            .expect("every type of this bag converts");
        types.insert(c.topic.clone(), conv.datatype.clone());
        want.entry(c.topic.clone())
            .or_default()
            .push(conv.convert(&m.data).unwrap());
    }
    let count = |t: &[&str]| -> usize { t.iter().map(|t| want[*t].len()).sum() };
    let small = ["/base_pose_ground_truth", "/base_scan"];
    let clouds = "/luminar_pointcloud";
    assert_eq!(types[clouds], "sensor_msgs/msg/PointCloud2");
    assert!(count(&small) >= 10 && count(&[clouds]) >= 5);
    let pairs: Vec<String> = small.iter().map(|t| format!("{t}={}", types[*t])).collect();
    let script = format!(
        "python3 \"$PEER\" sub rclpy.jsonl {} --count {} --timeout 60 > rclpy.log 2>&1 &\n\
         python3 \"$PEER\" cyclone-sub cyclone.jsonl {clouds}=sensor_msgs/msg/PointCloud2 --count {} --timeout 60 > cyclone.log 2>&1 &\n\
         ready rclpy.log cyclone.log\n\
         \"$BAGSCOPE\" play --ros2 --to-ros2 -q --rate 2 --wait-for-subscribers --delay 2 '{}'\n\
         wait\n",
        pairs.join(" "),
        count(&small),
        count(&[clouds]),
        bag_path.display()
    );
    in_netns(&dir, BIN, &script, Duration::from_secs(90));
    let got = seen(&dir.join("rclpy.jsonl"));
    for topic in small {
        assert_same(
            &of(&got, topic),
            &want[topic],
            &format!("{topic}: the converted bytes"),
        );
    }
    let got = seen(&dir.join("cyclone.jsonl"));
    assert_same(
        &of(&got, clouds),
        &want[clouds],
        "the converted point clouds",
    );
}

/// A CDR `tf2_msgs/msg/TFMessage` with one transform `parent` → `child`.
fn tf_message(parent: &str, child: &str, x: f64) -> Vec<u8> {
    let mut b = vec![0u8, 1, 0, 0];
    let align = |b: &mut Vec<u8>, n: usize| {
        while !(b.len() - 4).is_multiple_of(n) {
            b.push(0);
        }
    };
    let string = |b: &mut Vec<u8>, s: &str| {
        align(b, 4);
        b.extend_from_slice(&(s.len() as u32 + 1).to_le_bytes());
        b.extend_from_slice(s.as_bytes());
        b.push(0);
    };
    b.extend_from_slice(&1u32.to_le_bytes());
    b.extend_from_slice(&100i32.to_le_bytes());
    b.extend_from_slice(&5u32.to_le_bytes());
    string(&mut b, parent);
    string(&mut b, child);
    align(&mut b, 8);
    for v in [x, 2.0, 0.5, 0.0, 0.0, 0.0, 1.0] {
        b.extend_from_slice(&f64::to_le_bytes(v));
    }
    b
}

/// A 6 s MCAP recording: `/tf_static` once at the start (transient-local, as robot state
/// publishers offer it) and `/chatter` twice a second.
fn tf_static_recording(path: &Path) -> Vec<u8> {
    use bagscope_reader::storage::mcap::writer::{McapOptions, McapWriter};
    let mut w = McapWriter::create(
        path,
        McapOptions {
            profile: "ros2".into(),
            ..Default::default()
        },
    )
    .unwrap();
    let tf = w
        .add_schema("tf2_msgs/msg/TFMessage", "ros2msg", b"")
        .unwrap();
    let st = w
        .add_schema("std_msgs/msg/String", "ros2msg", b"string data\n")
        .unwrap();
    let qos = |d: &str| {
        vec![(
            "offered_qos_profiles".to_string(),
            format!(
                "- history: keep_last\n  depth: 1\n  reliability: reliable\n  durability: {d}\n"
            ),
        )]
    };
    let tf_ch = w
        .add_channel(tf, "/tf_static", "cdr", &qos("transient_local"))
        .unwrap();
    let st_ch = w
        .add_channel(st, "/chatter", "cdr", &qos("volatile"))
        .unwrap();
    let t0 = 1_700_000_000_000_000_000u64;
    let tf_msg = tf_message("base_link", "laser", 0.25);
    w.write(tf_ch, 0, t0, t0, &tf_msg).unwrap();
    for i in 0..13u32 {
        let t = t0 + u64::from(i) * 500_000_000;
        let s = format!("tick {i}");
        let mut m = vec![0u8, 1, 0, 0];
        m.extend_from_slice(&(s.len() as u32 + 1).to_le_bytes());
        m.extend_from_slice(s.as_bytes());
        m.push(0);
        w.write(st_ch, i, t, t, &m).unwrap();
    }
    w.finish().unwrap();
    tf_msg
}

/// A subscriber that joins two seconds into the playback still gets `/tf_static`, which was
/// published once at its start: the topic is played transient-local as it was recorded.
#[test]
fn a_late_subscriber_gets_the_transient_local_tf_static() {
    let dir = common::temp_dir("ros2-tf-static");
    let rec = dir.join("tf.mcap");
    let tf_msg = tf_static_recording(&rec);
    let script = format!(
        "\"$BAGSCOPE\" play --ros2 -q '{}' > play.log 2>&1 &\n\
         sleep 2\n\
         python3 \"$PEER\" cyclone-sub late_cyclone.jsonl /tf_static=tf2_msgs/msg/TFMessage --transient-local --count 1 --timeout 20 > c.log 2>&1 &\n\
         python3 \"$PEER\" sub late_rclpy.jsonl /chatter=std_msgs/msg/String --count 2 --timeout 20 > r.log 2>&1 &\n\
         wait\n\
         cat play.log >&2\n",
        rec.display()
    );
    let out = in_netns(&dir, BIN, &script, Duration::from_secs(60));
    let got = seen(&dir.join("late_cyclone.jsonl"));
    assert_same(
        &of(&got, "/tf_static"),
        &[tf_msg],
        &format!(
            "the late reader got the static transform ({})",
            String::from_utf8_lossy(&out.stderr)
        ),
    );
    // The volatile topic is not replayed to it: what it gets is from after it joined.
    let chatter = of(&seen(&dir.join("late_rclpy.jsonl")), "/chatter");
    assert!(!chatter.is_empty());
    assert!(
        !chatter.iter().any(|m| m.ends_with(b"tick 0\0")),
        "the late subscriber got the first /chatter message"
    );
}

/// The messages a talker sent (from its log), in order.
fn sent(path: &Path) -> Vec<Seen> {
    seen(path)
}

fn recorded_bytes(path: &Path, topic: &str) -> Vec<Vec<u8>> {
    recorded(path, &[topic]).into_iter().map(|m| m.2).collect()
}

/// An rclpy talker recorded by `bagscope record --ros2` as MCAP and as rosbag2 directories of
/// SQLite and of MCAP files: `bagscope check` passes, the bytes
/// are those sent, as an rclpy subscriber beside it receives them, with the type's
/// definition and the publisher's QoS.
#[test]
fn record_an_rclpy_talker() {
    let dir = common::temp_dir("ros2-record");
    // Three recorders at once: MCAP, and rosbag2 directories of SQLite and of MCAP files.
    let script = "\"$BAGSCOPE\" record --ros2 -q --topic /chatter -o out.mcap > rec.log 2>&1 &\n\
         REC=$!\n\
         \"$BAGSCOPE\" record --ros2 -q --topic /chatter --format rosbag2-sqlite3 --compression zstd -o out_db3 > rec_db3.log 2>&1 &\n\
         REC2=$!\n\
         \"$BAGSCOPE\" record --ros2 -q --topic /chatter --format rosbag2-mcap -o out_r2 > rec_r2.log 2>&1 &\n\
         REC3=$!\n\
         python3 \"$PEER\" sub rclpy.jsonl /chatter=std_msgs/msg/String --count 40 --timeout 30 > sub.log 2>&1 &\n\
         SUB=$!\n\
         ready sub.log\n\
         python3 \"$PEER\" pub /chatter 40 20 sent.jsonl --wait 4\n\
         wait $SUB\n\
         sleep 1\n\
         kill -INT $REC $REC2 $REC3\n\
         wait $REC $REC2 $REC3\n\
         cat rec.log rec_db3.log rec_r2.log >&2\n\
         \"$BAGSCOPE\" check out.mcap\n\
         \"$BAGSCOPE\" check out_db3\n\
         \"$BAGSCOPE\" check out_r2\n";
    let out = in_netns(&dir, BIN, script, Duration::from_secs(90));
    let log = String::from_utf8_lossy(&out.stdout);
    assert_eq!(log.matches("OK").count(), 3, "{log}");
    let out_path: PathBuf = dir.join("out.mcap");
    let sent: Vec<Vec<u8>> = sent(&dir.join("sent.jsonl"))
        .into_iter()
        .map(|s| padded(&s.data))
        .collect();
    assert_eq!(sent.len(), 40);
    let got = recorded_bytes(&out_path, "/chatter");
    assert_same(&got, &sent, "recorded vs sent");
    assert_same(
        &got,
        &of(&seen(&dir.join("rclpy.jsonl")), "/chatter"),
        "recorded vs an rclpy subscriber",
    );
    let bag = Bag::open(&out_path).unwrap();
    let c = &bag.summary().connections[0];
    assert_eq!(c.datatype, "std_msgs/msg/String");
    assert_eq!(c.encoding, "cdr");
    assert!(c.message_definition.contains("string data"), "{c:?}");
    assert!(c.qos.contains("reliability: reliable"), "{}", c.qos);
    // The rosbag2 directories: metadata.yaml and their storage, the same messages, the type,
    // its definition and the QoS.
    for (name, file) in [("out_db3", "out_db3_0.db3"), ("out_r2", "out_r2_0.mcap")] {
        let d = dir.join(name);
        assert!(
            d.join("metadata.yaml").is_file() && d.join(file).is_file(),
            "{name}"
        );
        assert!(!dir.join(format!("{name}.active")).exists());
        assert_same(
            &recorded_bytes(&d, "/chatter"),
            &sent,
            &format!("{name} vs sent"),
        );
        let bag = Bag::open(&d).unwrap();
        let c = &bag.summary().connections[0];
        assert_eq!(c.datatype, "std_msgs/msg/String", "{name}");
        assert!(
            c.message_definition.contains("string data"),
            "{name}: {c:?}"
        );
        assert!(c.qos.contains("reliability: reliable"), "{name}: {}", c.qos);
    }
}

/// A type bagscope does not ship (`nav_msgs/msg/Goals`, new in Jazzy) recorded from an rclpy
/// talker: its definition is the one the talker's node gives through
/// `~/get_type_description`, so the recording decodes anywhere; the messages that arrived
/// while it was asked for are written with their own receive times; rosbag2's metadata keeps
/// the type's hash. A talker whose node offers no type description is recorded raw, its type
/// named, and decodes with the type on the search path.
#[test]
fn a_type_is_recorded_with_its_publishers_description() {
    let dir = common::temp_dir("ros2-typedesc");
    std::fs::create_dir_all(dir.join("msgs/nav_msgs/msg")).unwrap();
    std::fs::write(
        dir.join("msgs/nav_msgs/msg/Goals.msg"),
        "std_msgs/Header header\ngeometry_msgs/PoseStamped[] goals\n",
    )
    .unwrap();
    let script = "\"$BAGSCOPE\" record --ros2 --topic /goals -o goals.mcap > rec.log 2>&1 &\n\
         REC=$!\n\
         \"$BAGSCOPE\" record --ros2 --topic /goals --format rosbag2-sqlite3 -o goals_db3 > rec_db3.log 2>&1 &\n\
         REC2=$!\n\
         python3 \"$PEER\" sub rclpy.jsonl /goals=nav_msgs/msg/Goals --count 20 --timeout 30 > sub.log 2>&1 &\n\
         SUB=$!\n\
         ready sub.log\n\
         python3 \"$PEER\" pub /goals 20 20 sent.jsonl --wait 3 --type nav_msgs/msg/Goals\n\
         wait $SUB\n\
         sleep 1\n\
         kill -INT $REC $REC2\n\
         wait $REC $REC2\n\
         \"$BAGSCOPE\" record --ros2 --topic /plain -o plain.mcap > rec_plain.log 2>&1 &\n\
         REC=$!\n\
         python3 \"$PEER\" pub /plain 10 20 sent_plain.jsonl --wait 1 --type nav_msgs/msg/Goals --no-type-description\n\
         sleep 1\n\
         kill -INT $REC\n\
         wait $REC\n\
         cat rec.log rec_db3.log rec_plain.log >&2\n\
         \"$BAGSCOPE\" check goals.mcap\n\
         \"$BAGSCOPE\" check goals_db3\n\
         \"$BAGSCOPE\" echo goals.mcap --topic /goals | tail -12\n\
         echo ---plain\n\
         \"$BAGSCOPE\" echo plain.mcap --msg-path msgs | tail -12\n";
    let out = in_netns(&dir, BIN, script, Duration::from_secs(90));
    let log = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(log.matches("OK").count(), 2, "{log}");
    assert!(
        err.contains(
            "/goals: definition of nav_msgs/msg/Goals from its publisher's node /bagscope_test_talker"
        ),
        "{err}"
    );
    assert_eq!(seen(&dir.join("sent.jsonl")).len(), 20);
    // The bytes on the wire, as an rclpy subscriber received them (a Goals message has
    // alignment padding, which rclpy's serializer leaves as it finds it in memory: the
    // bytes it reports sending differ there).
    let wire = of(&seen(&dir.join("rclpy.jsonl")), "/goals");
    assert_eq!(wire.len(), 20);
    for path in [dir.join("goals.mcap"), dir.join("goals_db3")] {
        let got = recorded(&path, &["/goals"]);
        assert_same(
            &got.iter().map(|m| m.2.clone()).collect::<Vec<_>>(),
            &wire,
            &format!("{} vs an rclpy subscriber", path.display()),
        );
        // Sent at 20 Hz: the receive times of the messages held while the description was
        // asked for are their own, not the time they were written.
        let s = span(got.iter().map(|m| m.1));
        assert!(s > 0.8, "{}: span {s}", path.display());
        let bag = Bag::open(&path).unwrap();
        let c = &bag.summary().connections[0];
        assert_eq!(c.datatype, "nav_msgs/msg/Goals");
        assert!(
            c.message_definition
                .starts_with("std_msgs/msg/Header header\ngeometry_msgs/msg/PoseStamped[] goals\n")
                && c.message_definition
                    .contains("MSG: geometry_msgs/msg/Quaternion\n"),
            "{}",
            c.message_definition
        );
    }
    // Decoded from the description: the last message has 19 goals, the last at x = 18.
    let goals = log.split("---plain").next().unwrap();
    assert!(
        goals.contains("frame_id: \"map\"") && goals.contains("x: 18.0"),
        "{log}"
    );
    let meta = std::fs::read_to_string(dir.join("goals_db3/metadata.yaml")).unwrap();
    assert!(meta.contains("type_description_hash: \"RIHS01_"), "{meta}");
    // No description: raw, the type named, decoded with the type on the search path.
    assert!(
        err.contains("/plain: no definition of nav_msgs/msg/Goals on the search path or shipped and its publisher's node did not describe it"),
        "{err}"
    );
    let bag = Bag::open(dir.join("plain.mcap")).unwrap();
    let c = &bag.summary().connections[0];
    assert_eq!(c.datatype, "nav_msgs/msg/Goals");
    assert_eq!(c.message_definition, "");
    assert_eq!(bag.summary().message_count, 10);
    let plain = log.split("---plain").nth(1).unwrap();
    assert!(plain.contains("x: 8.0"), "{log}");
}

/// A Cyclone DDS writer recorded by `bagscope record --ros2 --all`: the topic is found by
/// discovery and its messages recorded as sent (a Cyclone sample serialized by Cyclone).
#[test]
fn record_a_cyclone_writer_found_by_discovery() {
    let dir = common::temp_dir("ros2-record-cyclone");
    let script = "\"$BAGSCOPE\" record --ros2 -q --all -o out.mcap > rec.log 2>&1 &\n\
         REC=$!\n\
         python3 \"$PEER\" cyclone-pub /cyclone_chatter 25 20 sent.jsonl\n\
         kill -INT $REC\n\
         wait $REC\n\
         cat rec.log >&2\n";
    in_netns(&dir, BIN, script, Duration::from_secs(90));
    let sent: Vec<Vec<u8>> = sent(&dir.join("sent.jsonl"))
        .into_iter()
        .map(|s| padded(&s.data))
        .collect();
    assert_eq!(sent.len(), 25);
    let out_path = dir.join("out.mcap");
    assert_same(
        &recorded_bytes(&out_path, "/cyclone_chatter"),
        &sent,
        "recorded vs what Cyclone sent",
    );
    let bag = Bag::open(&out_path).unwrap();
    let t = bag.summary().topic("/cyclone_chatter").unwrap();
    assert_eq!(t.datatype, "std_msgs/msg/String");
}

/// 20,000 small messages played at 10 kHz (`--rate 1`) into `bagscope record --ros2`: every
/// one arrives, in order per topic (the player waits on the writers' acknowledgement windows
/// and, at the end, lingers half a second for repairs; the recorder's readers keep what it has
/// not taken yet). With both cores busy (two `yes` loops beside it) the last few messages were
/// lost in 2 of 8 runs before the player lingered, none in 6 runs since.
#[test]
fn a_flood_played_into_the_recorder_loses_nothing() {
    let dir = common::temp_dir("ros2-flood");
    let bag_path = dir.join("flood.bag");
    let mut w =
        bagscope_reader::BagWriter::create(&bag_path, bagscope_reader::WriteOptions::default())
            .unwrap();
    let conns: Vec<u32> = (0..4)
        .map(|k| {
            w.add_connection(bagscope_reader::ConnectionSpec {
                topic: format!("/flood_{k}"),
                datatype: "std_msgs/Float64".into(),
                md5sum: "fdb28210bfa9d7c91146260178d9a584".into(),
                message_definition: "float64 data\n".into(),
                ..Default::default()
            })
        })
        .collect();
    let t0 = 1_700_000_000_000_000_000u64;
    for i in 0..20_000u64 {
        let c = conns[(i % 4) as usize];
        w.write(c, t0 + i * 100_000, &(i as f64).to_le_bytes())
            .unwrap();
    }
    w.finish().unwrap();
    let script = format!(
        "\"$BAGSCOPE\" record --ros2 -q --regex '^/flood_' -o out.mcap > rec.log 2>&1 &\n\
         REC=$!\n\
         sleep 1\n\
         \"$BAGSCOPE\" play --ros2 --to-ros2 --rate 1 --wait-for-subscribers '{}'\n\
         sleep 2\n\
         kill -INT $REC\n\
         wait $REC\n\
         cat rec.log >&2\n",
        bag_path.display()
    );
    let out = in_netns(&dir, BIN, &script, Duration::from_secs(90));
    let got = recorded(
        &dir.join("out.mcap"),
        &["/flood_0", "/flood_1", "/flood_2", "/flood_3"],
    );
    if got.len() != 20_000 {
        // Which were lost: the first, the last, or between.
        let mut seen = vec![false; 20_000];
        for m in &got {
            let v = f64::from_le_bytes(m.2[4..12].try_into().unwrap()) as usize;
            if let Some(x) = seen.get_mut(v) {
                *x = true;
            }
        }
        let lost: Vec<usize> = (0..20_000).filter(|&i| !seen[i]).collect();
        panic!(
            "{} of 20,000 recorded; lost: {:?}\n{}",
            got.len(),
            &lost[..lost.len().min(40)],
            String::from_utf8_lossy(&out.stderr)
        );
    }
    for k in 0..4u64 {
        let values: Vec<f64> = got
            .iter()
            .filter(|m| m.0 == format!("/flood_{k}"))
            .map(|m| f64::from_le_bytes(m.2[4..12].try_into().unwrap()))
            .collect();
        let want: Vec<f64> = (0..5_000u64).map(|j| (j * 4 + k) as f64).collect();
        assert!(values == want, "/flood_{k}: the values in order");
    }
}

/// A recorder killed with SIGKILL mid-recording leaves `OUT.active` (a file, or a rosbag2
/// directory), which holds every message sent more than a second before the kill.
#[test]
fn a_killed_ros2_recorder_leaves_every_message_older_than_a_second() {
    let dir = common::temp_dir("ros2-record-kill");
    let script = "\"$BAGSCOPE\" record --ros2 -q --topic /chatter -o out.mcap > rec.log 2>&1 &\n\
         REC=$!\n\
         \"$BAGSCOPE\" record --ros2 -q --topic /chatter --format rosbag2-sqlite3 -o out_db3 > rec_db3.log 2>&1 &\n\
         REC2=$!\n\
         \"$BAGSCOPE\" record --ros2 -q --topic /chatter --format rosbag2-mcap -o out_r2 > rec_r2.log 2>&1 &\n\
         REC3=$!\n\
         python3 \"$PEER\" pub /chatter 200 20 sent.jsonl --wait 3 &\n\
         PUB=$!\n\
         for _ in $(seq 200); do [ \"$(wc -l < sent.jsonl 2>/dev/null || echo 0)\" -ge 60 ] && break; sleep 0.05; done\n\
         date +%s%N > killed_at\n\
         kill -KILL $REC $REC2 $REC3\n\
         kill $PUB || true\n\
         wait || true\n";
    in_netns(&dir, BIN, script, Duration::from_secs(90));
    let killed: u64 = std::fs::read_to_string(dir.join("killed_at"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let active = dir.join("out.mcap.active");
    assert!(active.is_file(), "the killed recorder left out.mcap.active");
    assert!(!dir.join("out.mcap").exists());
    let sent = sent(&dir.join("sent.jsonl"));
    let old: Vec<Vec<u8>> = sent
        .iter()
        .filter(|s| s.t + 1_000_000_000 < killed)
        .map(|s| padded(&s.data))
        .collect();
    assert!(
        old.len() >= 30,
        "{} messages older than a second",
        old.len()
    );
    // A rosbag2 recorder leaves its directory as OUT.active: committed SQLite, an MCAP file
    // with its chunks closed; bagscope opens the directory without its metadata.yaml.
    let db3 = dir.join("out_db3.active");
    let r2 = dir.join("out_r2.active");
    assert!(db3.join("out_db3_0.db3").is_file() && r2.join("out_r2_0.mcap.active").is_file());
    for path in [active, db3, r2] {
        let got = recorded_bytes(&path, "/chatter");
        assert!(
            got.len() >= old.len() && got[..old.len()] == old[..],
            "{}: {} recorded of {} sent more than a second before the kill",
            path.display(),
            got.len(),
            old.len()
        );
    }
}
