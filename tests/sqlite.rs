//! rosbag2 SQLite rows read from the database file's pages (bagscope's own b-tree reader) are
//! the rows SQLite itself returns: on every SQLite recording of the real corpus and on
//! databases made here with every page size, large messages on overflow chains, deleted rows
//! and an unusual schema (which must go to SQLite). One test: the switch is process-wide.

#![allow(clippy::unwrap_used)]

mod common;

use std::path::{Path, PathBuf};

use bagscope_reader::{Bag, Filter};

/// Everything a reader sees of a recording: whether each SQLite file was read from its pages,
/// counts, time range, and every message (connection, time, bytes) in time order.
struct Contents {
    pages: Vec<bool>,
    count: u64,
    range: (Option<u64>, Option<u64>),
    messages: Vec<(usize, u64, Vec<u8>)>,
}

/// `path` read whole, its SQLite rows from the file's pages where they can be (`pages`) or
/// always through SQLite's cursor.
fn contents(path: &Path, pages: bool) -> Contents {
    let opts = bagscope_reader::OpenOptions::default().with_sqlite_pages(pages);
    let bag = Bag::open_with(path, &opts).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let s = bag.summary();
    let msgs = bag
        .messages(&Filter::default())
        .unwrap()
        .map(|m| {
            let m = m.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            (m.conn, m.time_ns, m.data.to_vec())
        })
        .collect();
    Contents {
        pages: bag.sqlite_reads_pages(),
        count: s.message_count,
        range: (s.start_ns, s.end_ns),
        messages: msgs,
    }
}

/// The recordings of the corpus that store SQLite: directories holding `.db3` files, and
/// single `.db3` files.
fn corpus_sqlite() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![common::corpus2_dir()];
    while let Some(d) = stack.pop() {
        let mut has_db3 = false;
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.to_string_lossy().ends_with(".db3") {
                has_db3 = true;
                out.push(p.clone());
            }
        }
        if has_db3 && d.join("metadata.yaml").is_file() {
            out.push(d);
        }
    }
    out.sort();
    out
}

fn make_db(path: &Path, page_size: u32, sizes: &[usize], schema: &str) {
    let _ = std::fs::remove_file(path);
    let c = rusqlite::Connection::open(path).unwrap();
    c.execute_batch(&format!("PRAGMA page_size = {page_size};"))
        .unwrap();
    c.execute_batch(
        "CREATE TABLE topics(id INTEGER PRIMARY KEY, name TEXT NOT NULL, type TEXT NOT NULL, \
         serialization_format TEXT NOT NULL, offered_qos_profiles TEXT NOT NULL);",
    )
    .unwrap();
    c.execute_batch(schema).unwrap();
    c.execute_batch("CREATE INDEX timestamp_idx ON messages (timestamp ASC);")
        .unwrap();
    for (id, name) in [(1, "/a"), (2, "/b"), (3, "/c")] {
        c.execute(
            "INSERT INTO topics VALUES (?1, ?2, 'std_msgs/msg/String', 'cdr', '')",
            rusqlite::params![id, name],
        )
        .unwrap();
    }
    let tx = c.unchecked_transaction().unwrap();
    for (i, &n) in sizes.iter().enumerate() {
        // A CDR string of n bytes, with a pattern that shows misplaced bytes.
        let mut data = vec![0u8, 1, 0, 0];
        data.extend_from_slice(&(n as u32 + 1).to_le_bytes());
        data.extend((0..n).map(|k| b'a' + ((k * 7 + i) % 26) as u8));
        data.push(0);
        tx.execute(
            "INSERT INTO messages (id, topic_id, timestamp, data) VALUES (?1, ?2, ?3, ?4)",
            rusqlite::params![
                i as i64 + 1,
                1 + (i % 3) as i64,
                1_000_000_000 + (i as i64 * 7919) % 5_000_000,
                data
            ],
        )
        .unwrap();
    }
    tx.commit().unwrap();
    // Gaps in the ids, and a freed page or two.
    c.execute_batch("DELETE FROM messages WHERE id % 17 = 5 OR id BETWEEN 300 AND 340;")
        .unwrap();
}

#[test]
fn rows_read_from_pages_equal_rows_read_through_sqlite() {
    let mut paths = corpus_sqlite();
    assert!(paths.len() >= 15, "only {} SQLite recordings", paths.len());
    let d = common::temp_dir("sqlite-pages");
    let standard = "CREATE TABLE messages(id INTEGER PRIMARY KEY, topic_id INTEGER NOT NULL, \
                    timestamp INTEGER NOT NULL, data BLOB NOT NULL);";
    let sizes: Vec<usize> = (0..2000)
        .map(|i| match i % 10 {
            0 => 0,
            1 => 600,
            2 => 5000,
            3 => 70_000,
            4 if i % 100 == 4 => 300_000,
            _ => i % 90,
        })
        .collect();
    let mut made = Vec::new();
    for page in [512u32, 1024, 4096, 65536] {
        let p = d.join(format!("p{page}.db3"));
        make_db(&p, page, &sizes, standard);
        made.push(p);
    }
    // Columns in another order: read by name. Not a rowid alias: SQLite reads it.
    let (reordered, odd) = (d.join("reordered.db3"), d.join("without_rowid.db3"));
    for (p, schema) in [
        (
            &reordered,
            "CREATE TABLE messages(data BLOB NOT NULL, timestamp INTEGER NOT NULL, \
             id INTEGER PRIMARY KEY, topic_id INTEGER NOT NULL);",
        ),
        (
            &odd,
            "CREATE TABLE messages(id INTEGER NOT NULL PRIMARY KEY, topic_id INTEGER NOT NULL, \
             timestamp INTEGER NOT NULL, data BLOB NOT NULL) WITHOUT ROWID;",
        ),
    ] {
        make_db(p, 4096, &sizes[..300], schema);
    }
    made.push(reordered);
    paths.extend(made.iter().cloned());
    paths.push(odd.clone());

    let mut via_pages = 0;
    for p in &paths {
        let a = contents(p, true);
        let b = contents(p, false);
        assert!(
            b.pages.iter().all(|x| !x),
            "{}: switch ignored",
            p.display()
        );
        assert_eq!(a.count, b.count, "{}: message count", p.display());
        assert_eq!(a.range, b.range, "{}: time range", p.display());
        assert_eq!(
            a.messages.len(),
            b.messages.len(),
            "{}: messages",
            p.display()
        );
        for (k, (x, y)) in a.messages.iter().zip(&b.messages).enumerate() {
            assert!(x == y, "{}: message {k} differs", p.display());
        }
        if a.pages.iter().any(|&x| x) {
            via_pages += 1;
        }
        if made.contains(p) {
            assert_eq!(
                a.pages,
                vec![true],
                "{}: not read from its pages",
                p.display()
            );
            assert!(
                a.count > 1500 || p.ends_with("reordered.db3"),
                "{}",
                p.display()
            );
        }
    }
    assert_eq!(
        contents(&odd, true).pages,
        vec![false],
        "WITHOUT ROWID read from pages"
    );
    // Most of the corpus's SQLite files are plain (a few hold their rows in a WAL).
    assert!(
        via_pages >= 12,
        "only {via_pages} recordings read from pages"
    );
}
