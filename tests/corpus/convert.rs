//! Export to every storage and back: real recordings (ROS 2 corpus and ROS 1 corpus) written
//! as MCAP, rosbag2 SQLite and rosbag2 MCAP (zstd per file, per message, split), read back by
//! bagscope with the same messages, times and bytes, and by the peers: rosbags for rosbag2,
//! the `mcap` package for MCAP (pip; in CI their absence fails).
#![allow(clippy::unwrap_used)]

use crate::common;

use std::path::Path;
use std::sync::atomic::AtomicBool;

use bagscope_ops::tables::export::{export, export_many, ExportOptions, OutputFormat};
use bagscope_reader::storage::rosbag2::writer::Rosbag2Compression;
use bagscope_reader::{Bag, Compression, Filter, WriteOptions};

/// (topic, time, bytes) of every message, in time order (ties by topic and bytes, since
/// storages may order equal times differently).
pub(crate) fn messages(b: &Bag) -> Vec<(String, u64, Vec<u8>)> {
    let s = b.summary();
    let mut v: Vec<_> = b
        .messages(&Filter::default())
        .unwrap()
        .map(|m| {
            let m = m.unwrap();
            (
                s.connections[m.conn].topic.clone(),
                m.time_ns,
                m.data.to_vec(),
            )
        })
        .collect();
    v.sort_by(|a, b| (a.1, &a.0, &a.2).cmp(&(b.1, &b.0, &b.2)));
    v
}

pub(crate) fn opts(
    format: OutputFormat,
    comp: Compression,
    r2: Rosbag2Compression,
    split: Option<u64>,
) -> ExportOptions {
    ExportOptions {
        filter: Filter::default(),
        write: WriteOptions {
            compression: comp,
            chunk_size: 4096,
        },
        format: Some(format),
        rosbag2_compression: r2,
        split_bytes: split,
        split_ns: None,
        to_ros2: false,
        strict_types: false,
        to_ros1: false,
        migrate: None,
        bookmarks: None,
    }
}

pub(crate) fn run(b: &Bag, out: &Path, o: &ExportOptions) -> Bag {
    let r = export(b, out, o, &AtomicBool::new(false), &mut |_| {}).unwrap();
    Bag::open(&r.path).unwrap()
}

#[test]
fn ros2_recordings_round_trip_through_every_storage() {
    let dir = common::corpus2_dir();
    let d = common::temp_dir("convert2");
    let cases = [
        (
            OutputFormat::Mcap,
            Compression::Zstd,
            Rosbag2Compression::None,
            None,
            "a.mcap",
        ),
        (
            OutputFormat::Mcap,
            Compression::Lz4,
            Rosbag2Compression::None,
            None,
            "b.mcap",
        ),
        (
            OutputFormat::Mcap,
            Compression::None,
            Rosbag2Compression::None,
            None,
            "c.mcap",
        ),
        (
            OutputFormat::Rosbag2Sqlite3,
            Compression::None,
            Rosbag2Compression::None,
            None,
            "d",
        ),
        (
            OutputFormat::Rosbag2Sqlite3,
            Compression::None,
            Rosbag2Compression::Message,
            Some(300),
            "e",
        ),
        (
            OutputFormat::Rosbag2Sqlite3,
            Compression::None,
            Rosbag2Compression::File,
            None,
            "f",
        ),
        (
            OutputFormat::Rosbag2Mcap,
            Compression::None,
            Rosbag2Compression::None,
            Some(300),
            "g",
        ),
        (
            OutputFormat::Rosbag2Mcap,
            Compression::None,
            Rosbag2Compression::File,
            None,
            "h",
        ),
    ];
    for src in [
        "rosbag2/humble_talker",
        "rosbag2/rolling_mcap/wbag",
        "rosbag2/rolling_sqlite3/cdr_test",
        "rosbags-rs/test_bag_mcap",
        "rosbag2/reindex_test_bags/message_compression",
    ] {
        let b = Bag::open(dir.join(src)).unwrap();
        let want = messages(&b);
        assert!(!want.is_empty(), "{src}");
        for (i, (f, c, r2, split, name)) in cases.iter().enumerate() {
            let out = d.join(format!("{}-{i}-{name}", src.replace('/', "_")));
            let back = run(&b, &out, &opts(*f, *c, *r2, *split));
            assert_eq!(messages(&back), want, "{src} as {name}");
            assert!(
                back.warnings().is_empty(),
                "{src} as {name}: {:?}",
                back.warnings()
            );
            // Every type written into the new recording with a definition it can decode.
            for c in &back.summary().connections {
                if c.message_count > 0 {
                    let plan = bagscope_reader::encoding::Plan::for_connection(c, &[])
                        .unwrap_or_else(|e| panic!("{src} as {name}: {e}"));
                    // Stored, unless the type is empty (its definition is no text at all).
                    let empty = plan
                        .def
                        .root()
                        .fields
                        .iter()
                        .all(|f| f.name == "structure_needs_at_least_one_member");
                    assert!(
                        empty || !c.message_definition.is_empty(),
                        "{src} as {name}: {} has no stored definition",
                        c.topic
                    );
                }
            }
            if split.is_some() {
                assert!(back.summary().files.len() > 1, "{src} as {name}: not split");
            }
        }
    }
}

#[test]
fn ros1_bags_round_trip_through_mcap_and_rosbag2_refuses_them() {
    let d = common::temp_dir("convert1");
    let src = common::corpus_dir().join("rosbag.js/example.bag");
    let b = Bag::open(&src).unwrap();
    let want = messages(&b);
    let m = run(
        &b,
        &d.join("ex.mcap"),
        &opts(
            OutputFormat::Mcap,
            Compression::Zstd,
            Rosbag2Compression::None,
            None,
        ),
    );
    assert_eq!(messages(&m), want);
    // ROS 1 channels keep type, md5sum and definition: back to a bag, byte for byte.
    for c in &m.summary().connections {
        let orig = b
            .summary()
            .connections
            .iter()
            .find(|o| o.topic == c.topic)
            .unwrap();
        assert_eq!(
            (&c.datatype, &c.md5sum, &c.message_definition, &c.encoding),
            (
                &orig.datatype,
                &orig.md5sum,
                &orig.message_definition,
                &"ros1".to_string()
            )
        );
    }
    let back = run(
        &m,
        &d.join("ex.bag"),
        &opts(
            OutputFormat::Ros1Bag,
            Compression::Lz4,
            Rosbag2Compression::None,
            None,
        ),
    );
    assert_eq!(messages(&back), want);
    let e = export(
        &b,
        &d.join("ex_r2"),
        &opts(
            OutputFormat::Rosbag2Sqlite3,
            Compression::None,
            Rosbag2Compression::None,
            None,
        ),
        &AtomicBool::new(false),
        &mut |_| {},
    )
    .unwrap_err();
    assert!(e.to_string().contains("CDR"), "{e}");
    assert!(!d.join("ex_r2").exists());
}

#[test]
fn a_range_of_a_split_recording_and_merged_inputs() {
    let dir = common::corpus2_dir();
    let d = common::temp_dir("convert3");
    let b = Bag::open(dir.join("rosbag2/rolling_mcap/wbag")).unwrap();
    let all = messages(&b);
    let (t0, t1) = (1500, 2500);
    let mut o = opts(
        OutputFormat::Mcap,
        Compression::Zstd,
        Rosbag2Compression::None,
        None,
    );
    o.filter.start_ns = Some(t0);
    o.filter.end_ns = Some(t1);
    o.filter.connections = Some(b.connections_of_topics(&["AAA", "CCC"]).unwrap());
    let part = run(&b, &d.join("part.mcap"), &o);
    let want: Vec<_> = all
        .iter()
        .filter(|m| (m.0 == "AAA" || m.0 == "CCC") && m.1 >= t0 && m.1 < t1)
        .cloned()
        .collect();
    assert!(!want.is_empty());
    assert_eq!(messages(&part), want);
    // Two recordings merged in time order.
    let talker = Bag::open(dir.join("rosbag2/humble_talker")).unwrap();
    let r = export_many(
        &[talker.clone(), b.clone()],
        &d.join("merged.mcap"),
        &opts(
            OutputFormat::Mcap,
            Compression::Zstd,
            Rosbag2Compression::None,
            None,
        ),
        &AtomicBool::new(false),
        &mut |_| {},
    )
    .unwrap();
    let merged = Bag::open(&r.path).unwrap();
    let mut want = messages(&talker);
    want.extend(all);
    want.sort_by(|a, b| (a.1, &a.0, &a.2).cmp(&(b.1, &b.0, &b.2)));
    assert_eq!(messages(&merged), want);
    // Never into the recording being read.
    let e = export(
        &b,
        &dir.join("rosbag2/rolling_mcap/wbag/x.mcap"),
        &o,
        &AtomicBool::new(false),
        &mut |_| {},
    )
    .unwrap_err();
    assert!(e.to_string().contains("being read"), "{e}");
}

pub(crate) fn python_has(module: &str) -> bool {
    std::process::Command::new("python3")
        .args(["-c", &format!("import {module}")])
        .status()
        .is_ok_and(|s| s.success())
}

const ROSBAGS_READ: &str = r#"
import sys, hashlib
from rosbags.rosbag2 import Reader
with Reader(sys.argv[1]) as r:
    for c, t, raw in r.messages():
        print(c.topic, t, hashlib.sha256(raw).hexdigest())
"#;

const MCAP_READ: &str = r#"
import sys, hashlib
from mcap.reader import make_reader
with open(sys.argv[1], 'rb') as f:
    r = make_reader(f)
    for schema, ch, m in r.iter_messages(log_time_order=True):
        print(ch.topic, m.log_time, hashlib.sha256(m.data).hexdigest())
"#;

pub(crate) fn peer_lines(script: &str, path: &Path) -> Vec<(String, u64, String)> {
    let out = run_ok(
        std::process::Command::new("python3")
            .args(["-c", script])
            .arg(path),
        &format!("the peer on {}", path.display()),
    );
    let mut v: Vec<_> = out
        .lines()
        .map(|l| {
            let f: Vec<&str> = l.split(' ').collect();
            (f[0].to_string(), f[1].parse().unwrap(), f[2].to_string())
        })
        .collect();
    v.sort();
    v
}

#[test]
fn peers_read_what_bagscope_exports() {
    if !(python_has("rosbags.rosbag2") && python_has("mcap.reader")) {
        assert!(
            std::env::var_os("CI").is_none(),
            "rosbags or mcap (pip) is missing but CI is set: .ci/run must install them"
        );
        eprintln!("rosbags or mcap is not installed: skipping");
        return;
    }
    use sha2::{Digest, Sha256};
    let dir = common::corpus2_dir();
    let d = common::temp_dir("convert-peer");
    let b = Bag::open(dir.join("rosbags-rs/test_bag_mcap")).unwrap();
    let mut want: Vec<(String, u64, String)> = messages(&b)
        .into_iter()
        .map(|(t, n, data)| {
            let h: String = Sha256::digest(&data)
                .iter()
                .map(|x| format!("{x:02x}"))
                .collect();
            (t, n, h)
        })
        .collect();
    want.sort();
    for (f, c, r2, name) in [
        (
            OutputFormat::Rosbag2Sqlite3,
            Compression::None,
            Rosbag2Compression::None,
            "r2sql",
        ),
        (
            OutputFormat::Rosbag2Sqlite3,
            Compression::None,
            Rosbag2Compression::Message,
            "r2sqlz",
        ),
        (
            OutputFormat::Rosbag2Mcap,
            Compression::None,
            Rosbag2Compression::None,
            "r2mcap",
        ),
    ] {
        let r = export(
            &b,
            &d.join(name),
            &opts(f, c, r2, None),
            &AtomicBool::new(false),
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(peer_lines(ROSBAGS_READ, &r.path), want, "rosbags on {name}");
    }
    for c in [Compression::Zstd, Compression::Lz4, Compression::None] {
        let p = d.join(format!("out-{}.mcap", c.name()));
        let r = export(
            &b,
            &p,
            &opts(OutputFormat::Mcap, c, Rosbag2Compression::None, None),
            &AtomicBool::new(false),
            &mut |_| {},
        )
        .unwrap();
        assert_eq!(peer_lines(MCAP_READ, &r.path), want, "mcap on {}", c.name());
    }
}

/// Runs `cmd`, which must succeed (else the test fails with `what` and its stderr); its stdout.
pub(crate) fn run_ok(cmd: &mut std::process::Command, what: &str) -> String {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}
