//! Fixtures and helpers of the reader's tests (writers of small recordings, temporary
//! directories, reads of everything): what the reader alone can make and check. The
//! workspace's integration tests (`tests/common/`) take them too.
#![allow(dead_code, clippy::unwrap_used)]

use std::path::PathBuf;

use bagscope_reader::{BagWriter, Compression, ConnectionSpec, WriteOptions};

/// The n-th message (time order, ties in storage order) of a topic over all its connections.
pub fn nth_of_topic(
    bag: &bagscope_reader::Bag,
    topic: &str,
    n: usize,
) -> Option<bagscope_reader::Message> {
    let t = bag.summary().topic(topic)?;
    let tables = bag.tables().ok()?;
    let mut all: Vec<(bagscope_reader::IndexEntry, usize)> = Vec::new();
    for &c in &t.connections {
        all.extend(tables.per_connection[c].iter().map(|e| (*e, c)));
    }
    all.sort();
    let (e, c) = *all.get(n)?;
    bag.message(c, e).ok()
}

/// (topic, receive time, bytes) of every message of `bag`, in the order it reads them.
pub fn messages(bag: &bagscope_reader::Bag) -> Vec<(String, u64, Vec<u8>)> {
    messages_of(bag, &bagscope_reader::Filter::default())
}

/// `bag`'s messages that `f` lets through as (topic, time, bytes), in time order.
pub fn messages_of(
    bag: &bagscope_reader::Bag,
    f: &bagscope_reader::Filter,
) -> Vec<(String, u64, Vec<u8>)> {
    let s = bag.summary();
    bag.messages(f)
        .expect("messages")
        .map(|m| {
            let m = m.expect("message");
            (
                s.connections[m.conn].topic.clone(),
                m.time_ns,
                m.data.to_vec(),
            )
        })
        .collect()
}

/// A fresh temporary directory for one test, removed when the test passes (kept for a look
/// when it fails).
pub fn temp_dir(name: &str) -> TempDir {
    let d = std::env::temp_dir().join(format!("bagscope-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("create temp dir");
    TempDir(d)
}

/// A test's temporary directory: a path that removes itself on drop unless the test panicked.
pub struct TempDir(PathBuf);

impl std::ops::Deref for TempDir {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        &self.0
    }
}

impl AsRef<std::path::Path> for TempDir {
    fn as_ref(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("kept for a look: {}", self.0.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// A Float64 connection on `topic`.
pub fn spec(topic: &str, datatype: &str) -> ConnectionSpec {
    ConnectionSpec {
        topic: topic.into(),
        datatype: datatype.into(),
        md5sum: "fdb28210bfa9d7c91146260178d9a584".into(),
        message_definition: "float64 data\n".into(),
        callerid: Some("/test_node".into()),
        latching: false,
    }
}

/// Writes a bag of `n` messages on three connections (two on one topic) and returns what it
/// wrote: (connection, time, data).
pub fn write_fixture(
    path: &std::path::Path,
    compression: Compression,
    chunk_size: usize,
    n: u64,
) -> Vec<(u32, u64, Vec<u8>)> {
    let mut w = BagWriter::create(
        path,
        WriteOptions {
            compression,
            chunk_size,
        },
    )
    .unwrap();
    let a = w.add_connection(spec("/a", "std_msgs/Float64"));
    let b = w.add_connection(spec("/b", "std_msgs/Float64"));
    let b2 = w.add_connection(ConnectionSpec {
        callerid: Some("/other".into()),
        ..spec("/b", "std_msgs/Float64")
    });
    let mut wrote = Vec::new();
    for i in 0..n {
        let conn = [a, b, b2][(i % 3) as usize];
        // Times slightly out of order, as a recorder sees them.
        let t = 1_600_000_000_000_000_000 + i * 1_000_000 + (i % 7) * 300_000;
        let data = (i as f64 * 0.5).to_le_bytes().to_vec();
        w.write(conn, t, &data).unwrap();
        wrote.push((conn, t, data));
    }
    w.finish().unwrap();
    wrote
}

/// Writes a format 1.2 bag (`#ROSRECORD V1.2`): a bag header padded to 4096 bytes, a definition
/// record before each topic's first message, message records, and (when `indexed`) one index
/// record (ver 0) per topic whose first entry points at the definition record, as rosbag 1.2
/// wrote them. Returns (topic, time, data) of every message in file order.
pub fn write_v12(path: &std::path::Path, indexed: bool, n: u64) -> Vec<(String, u64, Vec<u8>)> {
    use bagscope_reader::storage::ros1::record::{put_field, put_record};
    let topics = [("/a", "std_msgs/Float64"), ("/b", "std_msgs/Float64")];
    let md5 = b"fdb28210bfa9d7c91146260178d9a584";
    let mut out = b"#ROSRECORD V1.2\n".to_vec();
    let header_at = out.len();
    let bag_header = |index_pos: u64| {
        let mut h = Vec::new();
        put_field(&mut h, "op", &[3]);
        put_field(&mut h, "index_pos", &index_pos.to_le_bytes());
        // The record is padded with spaces to 4096 bytes.
        let pad = 4096 - (4 + h.len() + 4);
        let mut rec = Vec::new();
        put_record(&mut rec, &h, &vec![b' '; pad]);
        rec
    };
    out.extend_from_slice(&bag_header(0));
    let mut positions: Vec<Vec<(u64, u64)>> = vec![Vec::new(); topics.len()];
    let mut defined = [false; 2];
    let mut wrote = Vec::new();
    for i in 0..n {
        let k = (i % 2) as usize;
        let (topic, ty) = topics[k];
        let t = 1_300_000_000_000_000_000 + i * 10_000_000 + (i % 5) * 1_000;
        if !defined[k] {
            defined[k] = true;
            positions[k].push((t, out.len() as u64));
            let mut h = Vec::new();
            put_field(&mut h, "op", &[1]);
            put_field(&mut h, "topic", topic.as_bytes());
            put_field(&mut h, "md5", md5);
            put_field(&mut h, "type", ty.as_bytes());
            put_field(&mut h, "def", b"float64 data\n");
            put_record(&mut out, &h, &[]);
        } else {
            positions[k].push((t, out.len() as u64));
        }
        let data = (i as f64 * 0.25).to_le_bytes().to_vec();
        let mut h = Vec::new();
        put_field(&mut h, "op", &[2]);
        put_field(&mut h, "topic", topic.as_bytes());
        put_field(&mut h, "md5", md5);
        put_field(&mut h, "type", ty.as_bytes());
        put_field(&mut h, "sec", &((t / 1_000_000_000) as u32).to_le_bytes());
        put_field(&mut h, "nsec", &((t % 1_000_000_000) as u32).to_le_bytes());
        put_record(&mut out, &h, &data);
        wrote.push((topic.to_string(), t, data));
    }
    if indexed {
        let index_pos = out.len() as u64;
        for (k, (topic, ty)) in topics.iter().enumerate() {
            let mut h = Vec::new();
            put_field(&mut h, "op", &[4]);
            put_field(&mut h, "ver", &0u32.to_le_bytes());
            put_field(&mut h, "topic", topic.as_bytes());
            put_field(&mut h, "type", ty.as_bytes());
            put_field(&mut h, "count", &(positions[k].len() as u32).to_le_bytes());
            let mut d = Vec::new();
            for (t, pos) in &positions[k] {
                d.extend_from_slice(&((t / 1_000_000_000) as u32).to_le_bytes());
                d.extend_from_slice(&((t % 1_000_000_000) as u32).to_le_bytes());
                d.extend_from_slice(&pos.to_le_bytes());
            }
            put_record(&mut out, &h, &d);
        }
        let hdr = bag_header(index_pos);
        out[header_at..header_at + hdr.len()].copy_from_slice(&hdr);
    }
    std::fs::write(path, out).expect("write 1.2 bag");
    wrote
}

/// Runs `f` on a thread of its own and returns what it returns, or fails the test when it
/// takes more than `secs` seconds (a hang on damaged input is a failure, not a slow test).
pub fn within<T: Send + 'static>(
    secs: u64,
    what: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)));
    });
    match rx.recv_timeout(std::time::Duration::from_secs(secs)) {
        Ok(Ok(v)) => v,
        Ok(Err(p)) => std::panic::resume_unwind(p),
        Err(_) => panic!("{what} did not finish in {secs} s: a hang"),
    }
}

/// The chunks of a whole recording as (where the chunk record ends, its messages), for
/// [`after_cut`].
pub fn chunk_ends(bag: &bagscope_reader::Bag) -> Vec<(u64, u64)> {
    bag.summary()
        .chunks
        .iter()
        .map(|c| (c.data_pos + c.data_len, c.message_count()))
        .collect()
}

/// What a copy of the recording cut at byte `cut` must give back: (the messages of every chunk
/// the cut leaves whole, the messages of the chunk it cuts through, at most of which return).
pub fn after_cut(chunks: &[(u64, u64)], cut: usize) -> (u64, u64) {
    let whole = chunks
        .iter()
        .filter(|c| c.0 <= cut as u64)
        .map(|c| c.1)
        .sum();
    let cut_through = chunks.iter().find(|c| c.0 > cut as u64).map_or(0, |c| c.1);
    (whole, cut_through)
}
