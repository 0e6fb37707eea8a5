//! A rosbag2 SQLite recording whose metadata.yaml the database bears out opens without reading
//! its rows (`Bag::quick_summary`, `rows_pending`); the first call that needs them reads them,
//! and everything is then what reading them at open gives. A metadata.yaml the database does
//! not bear out makes the rows be read at open, as before; one that the row ids and timestamps
//! cannot catch (per-topic counts swapped) is caught by the scan, with a warning.

#![allow(clippy::unwrap_used)]

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use bagscope_ops::tables::export::{export, ExportOptions, OutputFormat};
use bagscope_reader::storage::rosbag2::writer::Rosbag2Compression;
use bagscope_reader::{Bag, Filter};

/// A rosbag2 SQLite recording written by bagscope from its demo bag (several topics and types,
/// converted to ROS 2).
fn recording(dir: &Path, name: &str, r2: Rosbag2Compression) -> PathBuf {
    let src = dir.join(format!("{name}-src.bag"));
    bagscope_ops::demo::write_demo(&src, 6).unwrap();
    let bag = Bag::open(&src).unwrap();
    let o = ExportOptions {
        format: Some(OutputFormat::Rosbag2Sqlite3),
        rosbag2_compression: r2,
        to_ros2: true,
        ..Default::default()
    };
    export(
        &bag,
        &dir.join(name),
        &o,
        &AtomicBool::new(false),
        &mut |_| {},
    )
    .unwrap()
    .path
}

fn every_message(bag: &Bag) -> Vec<(usize, u64, Vec<u8>)> {
    bag.messages(&Filter::default())
        .unwrap()
        .map(|m| {
            let m = m.unwrap();
            (m.conn, m.time_ns, m.data.to_vec())
        })
        .collect()
}

fn db3_of(dir: &Path) -> PathBuf {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".db3"))
        .unwrap()
}

/// The laser scans' `angle_increment` series of `b` between `start` and `end`: its points
/// (printed) and how many messages lacked the field.
fn scan_series(b: &Bag, start: Option<u64>, end: Option<u64>) -> (String, usize) {
    let scan = b
        .quick_summary()
        .topics
        .iter()
        .find(|t| t.datatype.ends_with("LaserScan"))
        .unwrap();
    let path =
        bagscope_reader::encoding::FieldPath::parse(&format!("{}.angle_increment", scan.name))
            .unwrap();
    let s = bagscope_reader::series::field_series(
        b,
        &path,
        start,
        end,
        2,
        &AtomicBool::new(false),
        &|_| {},
    )
    .unwrap();
    (format!("{:?} {}", s.points, s.missing), s.points.len())
}

#[test]
fn a_recording_its_metadata_bears_out_opens_before_its_rows_are_read() {
    let tmp = common::temp_dir("deferred");
    for (name, r2) in [
        ("plain", Rosbag2Compression::None),
        ("per-message-zstd", Rosbag2Compression::Message),
    ] {
        let rec = recording(&tmp, name, r2);
        let bag = Bag::open(&rec).unwrap();
        let q = bag.quick_summary().clone();
        assert!(q.rows_pending, "{name}: opened from metadata.yaml");
        assert!(q.chunks.is_empty());
        assert!(bag.tables_if_built().is_none(), "{name}: no row read yet");
        assert!(q.message_count > 1000, "{name}: {}", q.message_count);
        // The rows are read on first need; the complete summary agrees with the quick one.
        let s = bag.summary().clone();
        assert!(!s.rows_pending && !s.chunks.is_empty());
        assert_eq!(bag.quick_summary().chunks.len(), s.chunks.len());
        assert_eq!(s.message_count, q.message_count);
        assert_eq!((s.start_ns, s.end_ns), (q.start_ns, q.end_ns));
        let counts = |s: &bagscope_reader::Summary| -> Vec<(String, u64)> {
            s.topics
                .iter()
                .map(|t| (t.name.clone(), t.message_count))
                .collect()
        };
        assert_eq!(counts(&s), counts(&q), "{name}");
        assert!(s.warnings.is_empty(), "{name}: {:?}", s.warnings);
        // The same as reading the rows at open (the .db3 alone, without its metadata.yaml).
        let eager = Bag::open(db3_of(&rec)).unwrap();
        assert!(!eager.quick_summary().rows_pending);
        assert_eq!(eager.summary().chunks, s.chunks);
        assert_eq!(
            eager.tables().unwrap().per_connection,
            bag.tables().unwrap().per_connection
        );
        assert_eq!(every_message(&eager), every_message(&bag), "{name}");
        // Reading some topics only gives their messages, in time order.
        let conns = vec![0, s.connections.len() - 1];
        let fresh = Bag::open(&rec).unwrap();
        let some: Vec<(usize, u64)> = fresh
            .messages(&Filter {
                connections: Some(conns.clone()),
                ..Default::default()
            })
            .unwrap()
            .map(|m| m.map(|m| (m.conn, m.time_ns)).unwrap())
            .collect();
        let want: Vec<(usize, u64)> = every_message(&eager)
            .into_iter()
            .filter(|m| conns.contains(&m.0))
            .map(|m| (m.0, m.1))
            .collect();
        assert_eq!(some, want, "{name}");
        // That scan kept those connections' tables only; the whole tables come with a second.
        assert!(fresh.tables_if_built().is_none());
        assert_eq!(fresh.summary().chunks, s.chunks);
        assert_eq!(
            fresh.tables().unwrap().per_connection,
            eager.tables().unwrap().per_connection
        );
        assert_eq!(every_message(&fresh), every_message(&eager), "{name}");
        // A field series of one topic first, then every message: the same values as eager.
        let fresh = Bag::open(&rec).unwrap();
        let scan = s
            .topics
            .iter()
            .find(|t| t.datatype.ends_with("LaserScan"))
            .unwrap();
        let series = |b: &Bag| {
            let (text, n) = scan_series(b, None, None);
            assert_eq!(n as u64, scan.message_count);
            text
        };
        assert_eq!(series(&fresh), series(&eager), "{name}");
        assert_eq!(every_message(&fresh), every_message(&eager), "{name}");
    }
}

#[test]
fn a_metadata_yaml_the_database_does_not_bear_out_is_not_trusted() {
    let tmp = common::temp_dir("deferred-stale");
    let rec = recording(&tmp, "rec", Rosbag2Compression::None);
    let meta = rec.join("metadata.yaml");
    let text = std::fs::read_to_string(&meta).unwrap();
    let bag = Bag::open(&rec).unwrap();
    let truth = bag.summary().clone();
    let total = truth.message_count;

    // A stale total (a recording cut off before metadata.yaml was rewritten): the rows are
    // read at open and the disagreement said.
    let stale = text.replacen(
        &format!("message_count: {total}"),
        &format!("message_count: {}", total - 1),
        1,
    );
    assert_ne!(stale, text);
    std::fs::write(&meta, &stale).unwrap();
    let b = Bag::open(&rec).unwrap();
    assert!(!b.quick_summary().rows_pending);
    assert_eq!(b.summary().message_count, total);
    assert!(
        b.warnings()
            .iter()
            .any(|w| w.contains(&format!("metadata.yaml counts {}", total - 1))),
        "{:?}",
        b.warnings()
    );

    // A start time that is not the first message's: read at open too.
    let start = truth.start_ns.unwrap();
    let moved = text.replacen(
        &format!("nanoseconds_since_epoch: {start}"),
        &format!("nanoseconds_since_epoch: {}", start + 1),
        1,
    );
    assert_ne!(moved, text);
    std::fs::write(&meta, &moved).unwrap();
    assert!(!Bag::open(&rec).unwrap().quick_summary().rows_pending);

    // Two topics' counts swapped: the totals and times agree, so the rows wait; the quick
    // summary shows metadata.yaml's counts, the scan the true ones, with a warning each.
    let (a, b) = {
        let mut t: Vec<_> = truth.topics.iter().collect();
        t.sort_by_key(|t| t.message_count);
        let a = t[0];
        let b = t
            .iter()
            .rev()
            .find(|x| x.message_count != a.message_count)
            .unwrap();
        (a.clone(), (*b).clone())
    };
    let swapped = swap_count(&text, &a.name, a.message_count, b.message_count);
    let swapped = swap_count(&swapped, &b.name, b.message_count, a.message_count);
    std::fs::write(&meta, &swapped).unwrap();
    let bag = Bag::open(&rec).unwrap();
    let q = bag.quick_summary().clone();
    assert!(q.rows_pending);
    assert_eq!(q.topic(&a.name).unwrap().message_count, b.message_count);
    let s = bag.summary();
    assert_eq!(s.topic(&a.name).unwrap().message_count, a.message_count);
    assert_eq!(s.topic(&b.name).unwrap().message_count, b.message_count);
    let w = bag.warnings();
    for t in [&a.name, &b.name] {
        assert!(
            w.iter()
                .any(|w| w.starts_with(&format!("{t}: metadata.yaml counts"))),
            "{t}: {w:?}"
        );
    }

    // The database damaged where the open-time checks do not look: it opens, reading the rows
    // fails with an error naming the page, the summary says so, and nothing panics.
    std::fs::write(&meta, &text).unwrap();
    let db = db3_of(&rec);
    let mut bytes = std::fs::read(&db).unwrap();
    let page = match u16::from_be_bytes([bytes[16], bytes[17]]) {
        1 => 65536,
        n => usize::from(n),
    };
    // A table leaf page (type 13) in the middle of the file, neither the first nor the last
    // leaf of the messages table: its first cell pointer sent past the page.
    let leaves: Vec<usize> = (1..bytes.len() / page)
        .filter(|&p| bytes[p * page] == 0x0d)
        .collect();
    assert!(leaves.len() > 4, "{} leaves", leaves.len());
    let p = leaves[leaves.len() / 2] * page;
    bytes[p + 8] = 0xff;
    bytes[p + 9] = 0xff;
    std::fs::write(&db, &bytes).unwrap();
    let bag = Bag::open(&rec).unwrap();
    assert!(bag.quick_summary().rows_pending);
    let s = bag.summary();
    let err = bag.tables().unwrap_err().to_string();
    assert!(err.contains("rec_0.db3"), "{err}");
    assert!(
        s.warnings
            .iter()
            .any(|w| w.contains("the rows could not be read")),
        "{:?}",
        s.warnings
    );
    assert!(bag.messages(&Filter::default()).is_err());
}

/// `text` with the message count of topic `name` (which is `from`) set to `to`: the first
/// count after the topic's name (bagscope writes `topic_metadata` first, as rosbag2 does).
fn swap_count(text: &str, name: &str, from: u64, to: u64) -> String {
    let at = text
        .find(&format!("name: \"{name}\""))
        .or_else(|| text.find(&format!("name: {name}\n")))
        .unwrap();
    let old = format!("message_count: {from}");
    let k = at + text[at..].find(&old).unwrap();
    format!(
        "{}message_count: {to}{}",
        &text[..k],
        &text[k + old.len()..]
    )
}

/// A time window of a recording whose rows are not read yet is read through the database's
/// timestamp index (as rosbag2's reader does): the same messages, in the same order, as the
/// tables give, for every topic or some, plain or zstd per message, with the rows still
/// unread afterwards; the same field series; and a window read after the tables are built
/// goes through them.
#[test]
fn a_time_window_is_read_through_the_timestamp_index() {
    let tmp = common::temp_dir("window");
    for (name, r2) in [
        ("plain", Rosbag2Compression::None),
        ("per-message-zstd", Rosbag2Compression::Message),
    ] {
        let rec = recording(&tmp, name, r2);
        let eager = Bag::open(db3_of(&rec)).unwrap();
        let s = eager.summary().clone();
        let (t0, t1) = (s.start_ns.unwrap(), s.end_ns.unwrap());
        let third = (t1 - t0) / 3;
        let some = vec![0, s.connections.len() - 1];
        for (start, end, conns) in [
            (Some(t0 + third), Some(t0 + 2 * third), None),
            (Some(t0 + third), None, Some(some.clone())),
            (None, Some(t0 + third), Some(vec![1])),
            // An end exactly at a message's time leaves it out; a start at one keeps it.
            (Some(t0), Some(t1), None),
        ] {
            let f = Filter {
                connections: conns.clone(),
                start_ns: start,
                end_ns: end,
            };
            let read = |b: &Bag| -> (usize, Vec<(usize, u64, Vec<u8>)>) {
                let it = b.messages(&f).unwrap();
                let total = it.total();
                (
                    total,
                    it.map(|m| {
                        let m = m.unwrap();
                        (m.conn, m.time_ns, m.data.to_vec())
                    })
                    .collect(),
                )
            };
            let (want_total, want) = read(&eager);
            let lazy = Bag::open(&rec).unwrap();
            assert!(lazy.quick_summary().rows_pending);
            let (total, got) = read(&lazy);
            assert!(!want.is_empty(), "{name} {f:?}");
            assert_eq!(got.len(), want.len(), "{name} {f:?}");
            assert!(got == want, "{name} {f:?}: the messages differ");
            assert_eq!(total, want_total, "{name} {f:?}");
            assert!(
                lazy.quick_summary().rows_pending && lazy.tables_if_built().is_none(),
                "{name} {f:?}: the window was read without the row scan"
            );
        }
        // A field series of a window: the same points, the rows still unread.
        let series = |b: &Bag| {
            let (text, n) = scan_series(b, Some(t0 + third), Some(t1));
            assert!(n > 0);
            text
        };
        let lazy = Bag::open(&rec).unwrap();
        assert_eq!(series(&lazy), series(&eager), "{name}");
        assert!(lazy.quick_summary().rows_pending, "{name}");
        // Once the tables are built, a window goes through them.
        lazy.tables().unwrap();
        let f = Filter {
            start_ns: Some(t0 + third),
            ..Default::default()
        };
        let n = lazy.messages(&f).unwrap().count();
        assert_eq!(n, eager.messages(&f).unwrap().count(), "{name}");
    }
}
