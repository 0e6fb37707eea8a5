//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

use bagscope::{BagWriter, Compression, ConnectionSpec, WriteOptions};

/// The real corpus, `../shared/bags` beside the project. Panics (never skips) when it is
/// missing, so a CI run without it fails loudly.
pub fn corpus_dir() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/bags");
    assert!(
        d.join("expected.json").is_file(),
        "the real bag corpus is missing: expected {} (see README, 'Tests')",
        d.display()
    );
    d
}

/// `expected.json` of the corpus.
pub fn expected() -> serde_json::Map<String, serde_json::Value> {
    let p = corpus_dir().join("expected.json");
    let text = std::fs::read_to_string(&p).expect("read expected.json");
    match serde_json::from_str(&text).expect("parse expected.json") {
        serde_json::Value::Object(m) => m,
        _ => panic!("expected.json is not an object"),
    }
}

/// A fresh temporary directory for one test.
pub fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("bagscope-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("create temp dir");
    d
}

/// A Float64 connection on `topic`.
pub fn spec(topic: &str, datatype: &str) -> ConnectionSpec {
    ConnectionSpec {
        topic: topic.into(),
        datatype: datatype.into(),
        md5sum: "1d99f79f8b325b44fee908053e9c945b".into(),
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
