//! MCAP channels whose schemas are OMG IDL (`ros2idl` as rosbag2 stores rosidl's `.idl`
//! text, `omgidl` as eProsima's DDS recorder and Foxglove's tools write it) decode like any
//! other: held against rosbags, which builds and serializes the messages from the same IDL
//! (tests/py/idl_fixture.py), and against wire bytes written by hand for what rosbags' IDL
//! reader does not take (enums, `@value`, `@bit_bound`, multidimensional arrays, XCDR2).
#![allow(clippy::unwrap_used)]

use crate::common;

use common::mcap::{channel, file, message, schema};
use serde_json::Value;

fn python_peers() -> bool {
    let ok = std::process::Command::new("python3")
        .args(["-c", "import rosbags.typesys, mcap.writer, numpy"])
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "rosbags and mcap are not installed but CI is set: .ci/run must install them"
        );
        eprintln!("rosbags or mcap not installed: skipping (pip install -r ../shared/tools/requirements.txt)");
    }
    ok
}

#[test]
fn idl_channels_decode_as_rosbags_decodes_them() {
    if !python_peers() {
        return;
    }
    let d = common::temp_dir("idl-rosbags");
    let mcap = d.join("idl.mcap");
    let expected = d.join("idl.jsonl");
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/py/idl_fixture.py");
    let out = std::process::Command::new("python3")
        .arg(&script)
        .arg(&mcap)
        .arg(&expected)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let want: Vec<Value> = std::fs::read_to_string(&expected)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(want.len(), 12);
    let got = common::bagscope(&[&"echo", &mcap, &"--json"]).ok();
    let got: Vec<Value> = got
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(&want) {
        assert!(common::same_json(g, w), "bagscope: {g}\nrosbags:  {w}");
    }
    // Where each definition came from, and the constants of rosidl's `Reading_Constants`.
    let bag = bagscope_reader::Bag::open(&mcap).unwrap();
    let s = bag.summary();
    for c in &s.connections {
        let (plan, source) =
            bagscope_reader::encoding::Plan::for_connection_with_source(c, &[]).unwrap();
        assert_eq!(source.to_string(), "stored in the recording");
        if c.topic == "/reading" {
            let consts: Vec<(&str, &str, &str)> = plan.def.types[0]
                .constants
                .iter()
                .map(|k| (k.type_text.as_str(), k.name.as_str(), k.value.as_str()))
                .collect();
            assert_eq!(
                consts,
                [
                    ("uint8", "LOW", "0"),
                    ("uint8", "HIGH", "2"),
                    ("string", "UNIT", "m/s")
                ]
            );
            assert_eq!(plan.def.types[0].fields[1].type_text, "float64[9]");
            assert_eq!(plan.def.types[0].fields[2].type_text, "float32[<=5]");
        }
    }
    // Field paths, csv and check work on such channels.
    let csv = common::bagscope(&[&"csv", &mcap, &"/reading.covariance[8]", &"/scan.u16"]).ok();
    let rows: Vec<&str> = csv.lines().collect();
    assert_eq!(rows[0], "time_ns,/reading.covariance[8],/scan.u16");
    assert_eq!(rows[1], "1700000000000000000,2.0,");
    assert_eq!(rows[4], "1700000000004000000,,1000");
    let r = common::bagscope(&[&"check", &mcap]);
    assert_eq!(r.code, Some(0), "{}{}", r.stdout, r.stderr);
    assert!(r.stdout.contains(": OK"), "{}", r.stdout);
}

/// CDR little endian: header, then values aligned from the end of the header.
struct Cdr(Vec<u8>, usize);

impl Cdr {
    fn new(xcdr2: bool) -> Cdr {
        Cdr(
            vec![0, if xcdr2 { 7 } else { 1 }, 0, 0],
            if xcdr2 { 4 } else { 8 },
        )
    }
    fn align(&mut self, n: usize) {
        let n = n.min(self.1);
        while !(self.0.len() - 4).is_multiple_of(n) {
            self.0.push(0);
        }
    }
    fn put<const N: usize>(&mut self, b: [u8; N]) -> &mut Self {
        self.align(N);
        self.0.extend_from_slice(&b);
        self
    }
}

const HAND: &str = r#"
// As eProsima's DDS recorder writes a type: enums, annotations, a 2-D array.
module robot {
  @bit_bound(8) enum Level { @value(10) LOW, HIGH };
  enum Mode { IDLE, RUN = 7, STOP };
  typedef long Grid[2][3];
  @appendable
  struct State {
    @key unsigned short id;
    Mode mode;
    Level level;
    Grid grid;
    double speed;
  };
};
"#;

fn hand_state(xcdr2: bool, mode: u32, level: u8, speed: f64) -> Vec<u8> {
    let mut c = Cdr::new(xcdr2);
    c.put(7u16.to_le_bytes())
        .put(mode.to_le_bytes())
        .put([level]);
    for k in 0..6i32 {
        c.put((k - 2).to_le_bytes());
    }
    c.put(speed.to_le_bytes());
    c.0
}

#[test]
fn enums_annotations_and_multidimensional_arrays_decode_from_hand_written_bytes() {
    let d = common::temp_dir("idl-hand");
    let p = d.join("hand.mcap");
    std::fs::write(
        &p,
        file(&[
            schema(1, "robot::State", "omgidl", HAND),
            channel(1, 1, "/state", "cdr"),
            message(1, 0, 1_000, &hand_state(false, 7, 11, 1.5)),
            message(1, 1, 2_000, &hand_state(true, 8, 10, -0.25)),
        ]),
    )
    .unwrap();
    let out = common::bagscope(&[&"echo", &p, &"--json"]).ok();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines,
        [
            r#"{"time_ns": 1000, "topic": "/state", "message": {"id": 7, "mode": 7, "level": 11, "grid": [-2, -1, 0, 1, 2, 3], "speed": 1.5}}"#,
            r#"{"time_ns": 2000, "topic": "/state", "message": {"id": 7, "mode": 8, "level": 10, "grid": [-2, -1, 0, 1, 2, 3], "speed": -0.25}}"#,
        ]
    );
    // The enum's labels are constants tied to the enum, as for protobuf.
    let bag = bagscope_reader::Bag::open(&p).unwrap();
    let plan = bagscope_reader::encoding::Plan::for_connection(&bag.summary().connections[0], &[])
        .unwrap();
    let t = &plan.def.types[0];
    assert_eq!(t.fields[1].type_text, "enum Mode");
    assert_eq!(t.fields[2].type_text, "enum Level");
    assert_eq!(t.fields[3].type_text, "int32[6]");
    let consts: Vec<(&str, &str, &str)> = t
        .constants
        .iter()
        .map(|k| (k.type_text.as_str(), k.name.as_str(), k.value.as_str()))
        .collect();
    assert_eq!(
        consts,
        [
            ("enum Mode", "IDLE", "0"),
            ("enum Mode", "RUN", "7"),
            ("enum Mode", "STOP", "8"),
            ("enum Level", "LOW", "10"),
            ("enum Level", "HIGH", "11"),
        ]
    );
}

#[test]
fn empty_messages_decode_to_nothing_in_mcap_and_sqlite() {
    let d = common::temp_dir("idl-empty");
    // An MCAP channel with an empty ros2msg schema, one with rosidl's IDL of an empty type.
    let empty_idl = "module std_msgs { module msg {\n  struct Empty {\n    uint8 structure_needs_at_least_one_member;\n  };\n}; };\n";
    let p = d.join("empty.mcap");
    std::fs::write(
        &p,
        file(&[
            schema(1, "test_msgs/msg/Empty", "ros2msg", ""),
            schema(2, "std_msgs/msg/Empty", "ros2idl", empty_idl),
            channel(1, 1, "/empty_msg", "cdr"),
            channel(2, 2, "/empty_idl", "cdr"),
            message(1, 0, 1_000, &[0, 1, 0, 0, 0]),
            message(2, 0, 2_000, &[0, 1, 0, 0, 0]),
        ]),
    )
    .unwrap();
    let out = common::bagscope(&[&"echo", &p, &"--json"]).ok();
    assert_eq!(
        out.lines().collect::<Vec<_>>(),
        [
            r#"{"time_ns": 1000, "topic": "/empty_msg", "message": {}}"#,
            r#"{"time_ns": 2000, "topic": "/empty_idl", "message": {}}"#,
        ]
    );
    // rosbag2 SQLite with no stored definition: the shipped std_msgs/msg/Empty, no member.
    let sqlite = common::corpus2_dir().join("rosbags-rs/test_bag_sqlite3");
    let out = common::bagscope(&[
        &"echo",
        &sqlite,
        &"--json",
        &"--topic",
        &"/test/std_msgs/empty",
    ])
    .ok();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 2, "{out}");
    for l in lines {
        assert!(l.ends_with(r#""message": {}}"#), "{l}");
    }
    // A message with an empty type nested: the byte is read, nothing shown.
    let nested = "std_msgs/Empty e\nuint8 after\n================================================================================\nMSG: std_msgs/Empty\n";
    let p = d.join("nested.mcap");
    std::fs::write(
        &p,
        file(&[
            schema(1, "pkg/msg/Nested", "ros2msg", nested),
            channel(1, 1, "/nested", "cdr"),
            message(1, 0, 1_000, &[0, 1, 0, 0, 0, 42]),
        ]),
    )
    .unwrap();
    let out = common::bagscope(&[&"echo", &p, &"--json"]).ok();
    assert_eq!(
        out.trim(),
        r#"{"time_ns": 1000, "topic": "/nested", "message": {"e": {}, "after": 42}}"#
    );
}

#[test]
fn a_schema_that_does_not_parse_says_where() {
    let d = common::temp_dir("idl-bad");
    let p = d.join("bad.mcap");
    std::fs::write(
        &p,
        file(&[
            schema(
                1,
                "a::B",
                "omgidl",
                "module a {\n  struct B { wstring w; };\n};\n",
            ),
            channel(1, 1, "/b", "cdr"),
            message(1, 0, 1_000, &[0, 1, 0, 0, 0, 0, 0, 0]),
        ]),
    )
    .unwrap();
    let r = common::bagscope(&[&"echo", &p, &"--json"]);
    assert_eq!(r.code, Some(1));
    assert!(
        r.stderr.contains("line 2") && r.stderr.contains("wstring is not supported"),
        "{}",
        r.stderr
    );
}

/// rosbag2 SQLite (iron and later) stores a type built from IDL as `ros2idl` in its
/// `message_definitions` table: read like the `ros2msg` definition it replaces.
#[test]
fn a_sqlite_recording_with_ros2idl_definitions() {
    let d = common::temp_dir("idl-sqlite");
    let bag = common::turtles_rosbag2(&d, "twist", &["/turtle1/cmd_vel"]);
    let before = common::bagscope(&[&"echo", &bag, &"--json"]).ok();
    assert_eq!(before.lines().count(), 357);
    let idl = "// generated from rosidl_adapter/resource/msg.idl.em\n#include \"geometry_msgs/msg/Vector3.idl\"\n\nmodule geometry_msgs {\n  module msg {\n    @verbatim (language=\"comment\", text=\n      \"This expresses velocity in free space broken into its linear and angular parts.\")\n    struct Twist {\n      geometry_msgs::msg::Vector3 linear;\n\n      geometry_msgs::msg::Vector3 angular;\n    };\n  };\n};\n\n================================================================================\nIDL: geometry_msgs/msg/Vector3\nmodule geometry_msgs {\n  module msg {\n    struct Vector3 {\n      double x;\n\n      double y;\n\n      double z;\n    };\n  };\n};\n";
    let db = rusqlite::Connection::open(bag.join("twist_0.db3")).unwrap();
    let n = db
        .execute(
            "UPDATE message_definitions SET encoding = 'ros2idl', encoded_message_definition = ?1 WHERE topic_type = 'geometry_msgs/msg/Twist'",
            [idl],
        )
        .unwrap();
    assert_eq!(n, 1);
    drop(db);
    let b = bagscope_reader::Bag::open(&bag).unwrap();
    let c = &b.summary().connections[0];
    assert_eq!(c.schema_encoding, "ros2idl");
    let (plan, source) =
        bagscope_reader::encoding::Plan::for_connection_with_source(c, &[]).unwrap();
    assert_eq!(source.to_string(), "stored in the recording");
    assert_eq!(plan.def.types[1].name, "geometry_msgs/msg/Vector3");
    let after = common::bagscope(&[&"echo", &bag, &"--json"]).ok();
    assert_eq!(after, before);
}

/// OMG IDL `char` arrays and sequences are text (DDS recorders write names so): shown and
/// exported up to the first NUL, where rosidl's `.msg` `char` (a `uint8`) stays a number.
#[test]
fn idl_char_arrays_are_text() {
    let d = common::temp_dir("idl-char");
    let p = d.join("chars.mcap");
    let idl =
        "module dds { struct Name { char name[8]; sequence<char> note; char c; octet o[2]; }; };";
    let mut c = Cdr::new(false);
    c.0.extend_from_slice(b"abc\0\0\0\0\0");
    c.put(5u32.to_le_bytes());
    c.0.extend_from_slice(b"hello");
    c.0.extend_from_slice(b"x\x01\x02");
    std::fs::write(
        &p,
        file(&[
            schema(1, "dds::Name", "omgidl", idl),
            channel(1, 1, "/name", "cdr"),
            message(1, 0, 1_000, &c.0),
        ]),
    )
    .unwrap();
    let out = common::bagscope(&[&"echo", &p, &"--json"]).ok();
    assert_eq!(
        out.trim(),
        r#"{"time_ns": 1000, "topic": "/name", "message": {"name": "abc", "note": "hello", "c": 120, "o": "AQI="}}"#
    );
    // The raw bytes stay: the value's range covers the whole array, NULs included.
    let bag = bagscope_reader::Bag::open(&p).unwrap();
    let plan = bagscope_reader::encoding::Plan::for_connection(&bag.summary().connections[0], &[])
        .unwrap();
    let m = bag
        .messages(&bagscope_reader::Filter::default())
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    let node = plan.decode(&m.data).unwrap();
    let bagscope_reader::encoding::Value::Message { fields, .. } = &node.value else {
        panic!("{node:?}");
    };
    assert_eq!((fields[0].start, fields[0].end), (4, 12));
    // Exported as text too: an Arrow (Parquet) string column, the octets a binary one.
    let mut batches =
        bagscope_ops::tables::arrow::TopicBatches::new(&bag, "/name", None, None, None).unwrap();
    let batch = batches.next_batch().unwrap().unwrap();
    let schema = batch.schema();
    let types: Vec<String> = schema
        .fields()
        .iter()
        .map(|f| format!("{}: {}", f.name(), f.data_type()))
        .collect();
    assert_eq!(
        types,
        [
            "time_ns: Int64",
            "name: Utf8",
            "note: Utf8",
            "c: UInt8",
            "o: FixedSizeBinary(2)"
        ]
    );
    // A `.msg` char is a number.
    let def = bagscope_reader::definition::msg::MsgDef::parse("t/C", "char[3] c").unwrap();
    let plan = bagscope_reader::encoding::Plan::new(def);
    let node = plan.decode(b"ab\0").unwrap();
    assert!(format!("{node:?}").contains("Bytes"), "{node:?}");
}
