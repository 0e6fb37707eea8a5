//! Damaged MCAP and rosbag2 recordings (copies of real ones from `../shared/bags2`, cut or
//! overwritten in a temporary directory): they open with warnings or fail with a clear error,
//! never panic, and a recording cut off mid-write gives back the messages before the cut.
#![allow(clippy::unwrap_used)]

use crate::common;

use bagscope_reader::{Bag, Filter};

/// Opens `bytes` as `name` and reads every message, within 30 s.
fn open_and_read(name: &'static str, bytes: Vec<u8>) -> Result<(Bag, usize), String> {
    common::within(30, name, move || {
        let b = Bag::from_bytes(name, bytes).map_err(|e| e.to_string())?;
        let _ = b.tables();
        let (ok, _) = read_all(&b);
        Ok((b, ok))
    })
}

fn read_all(b: &Bag) -> (usize, usize) {
    let (mut ok, mut bad) = (0, 0);
    if let Ok(it) = b.messages(&Filter::default()) {
        for m in it {
            match m {
                Ok(_) => ok += 1,
                Err(_) => bad += 1,
            }
        }
    }
    (ok, bad)
}

fn mcap_sample() -> Vec<u8> {
    let p = common::corpus2_dir().join("rosbag2/rolling_mcap/talker/talker.mcap");
    std::fs::read(p).unwrap()
}

#[test]
fn mcap_cut_anywhere_opens_what_is_left_or_says_why() {
    let full = mcap_sample();
    let whole_file = Bag::from_bytes("talker.mcap", full.clone()).unwrap();
    let total = whole_file.summary().message_count;
    assert!(total > 0);
    let chunks = common::chunk_ends(&whole_file);
    let step = (full.len() / 97).max(1);
    let mut recovered_some = false;
    for cut in (0..full.len()).step_by(step) {
        // The messages of every chunk the cut leaves whole come back; of the chunk it cuts
        // through, at most its own.
        let (whole, cut_through) = common::after_cut(&chunks, cut);
        match open_and_read("cut.mcap", full[..cut].to_vec()) {
            Ok((b, ok)) => {
                let s = b.summary();
                assert!(
                    s.message_count >= whole && s.message_count <= whole + cut_through,
                    "cut at {cut}: {} messages, {whole} in whole chunks before it",
                    s.message_count
                );
                assert_eq!(ok as u64, s.message_count, "cut at {cut}");
                if cut > 8 && cut < full.len() {
                    assert!(!b.warnings().is_empty(), "cut at {cut} gave no warning");
                }
                recovered_some |= s.message_count > 0;
            }
            Err(e) => {
                assert!(!e.is_empty(), "cut at {cut}");
                assert_eq!(whole, 0, "cut at {cut} lost whole chunks: {e}");
            }
        }
    }
    assert!(recovered_some, "no cut-off copy gave any message back");
}

#[test]
fn mcap_with_overwritten_bytes_never_panics() {
    let full = mcap_sample();
    let full_count = Bag::from_bytes("talker.mcap", full.clone())
        .unwrap()
        .summary()
        .message_count;
    let mut x: u64 = 0x2545_F491_4F6C_DD1D;
    for round in 0..300 {
        let mut d = full.clone();
        for _ in 0..1 + round % 8 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let i = (x % d.len() as u64) as usize;
            d[i] = (x >> 24) as u8;
        }
        if let Ok((_, n)) = open_and_read("hit.mcap", d) {
            assert!(n as u64 <= 2 * full_count, "round {round}: {n} messages");
        }
    }
}

#[test]
fn rosbag2_damage_gives_clear_errors() {
    let src = common::corpus2_dir().join("rosbag2/rolling_sqlite3/talker");
    let d = common::temp_dir("r2damage");
    // A .db3 cut in half: SQLite says the image is malformed, named with the file.
    let db = std::fs::read(src.join("talker.db3")).unwrap();
    let cut = d.join("cut.db3");
    std::fs::write(&cut, &db[..db.len() / 2]).unwrap();
    match Bag::open(&cut) {
        Ok(b) => {
            read_all(&b);
        }
        Err(e) => assert!(e.to_string().contains("cut.db3"), "{e}"),
    }
    // A metadata.yaml that is not YAML, beside a good database: the error names the file.
    let dir = d.join("badyaml");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("talker.db3"), &db).unwrap();
    std::fs::write(
        dir.join("metadata.yaml"),
        "rosbag2_bagfile_information: [unclosed",
    )
    .unwrap();
    let e = Bag::open(&dir).unwrap_err().to_string();
    assert!(e.contains("metadata.yaml") && e.contains("YAML"), "{e}");
    // No metadata.yaml: opens from the storage file, with a warning.
    std::fs::remove_file(dir.join("metadata.yaml")).unwrap();
    let b = Bag::open(&dir).unwrap();
    assert!(b.summary().message_count > 0);
    assert!(b.warnings().iter().any(|w| w.contains("no metadata.yaml")));
    // A directory with nothing to read.
    let empty = d.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    let e = Bag::open(&empty).unwrap_err().to_string();
    assert!(e.contains("no metadata.yaml and no storage file"), "{e}");
    // The files opened were only read: nothing was written beside them (no journal, WAL or
    // shared-memory file, no index cache in the bag's folder).
    let mut names: Vec<String> = std::fs::read_dir(&*d)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["badyaml", "cut.db3", "empty"]);
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["talker.db3"]);
}

/// A database with row ids at both ends of i64 and a gap between (found by fuzzing:
/// splitting the id range between threads overflowed): it opens and reads both messages.
#[test]
fn sqlite_rows_with_extreme_ids() {
    let d = common::temp_dir("r2ids");
    let db = d.join("x.db3");
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute_batch(
        "CREATE TABLE topics(id INTEGER PRIMARY KEY, name TEXT NOT NULL, type TEXT NOT NULL, serialization_format TEXT NOT NULL);
         CREATE TABLE messages(id INTEGER PRIMARY KEY, topic_id INTEGER NOT NULL, timestamp INTEGER NOT NULL, data BLOB NOT NULL);
         INSERT INTO topics VALUES (1, '/a', 'std_msgs/msg/String', 'cdr');
         INSERT INTO messages VALUES (-9223372036854775808, 1, 5, x'0001000003000000686900');
         INSERT INTO messages VALUES (9223372036854775807, 1, 6, x'00010000030000006f6b00');",
    )
    .unwrap();
    drop(c);
    let b = Bag::open(&db).unwrap();
    assert_eq!(b.summary().message_count, 2);
    assert_eq!(read_all(&b), (2, 0));
}

/// Found by `open_rosbag2` (2026-11-23): an MCAP file where a `.db3` was expected, its chunk
/// claiming a records length that wrapped the bounds check around, and a read sized from it: a
/// panic ("capacity overflow") on a file, where the same bytes in memory were clamped. Reads
/// from files are now clamped to the file, and the check does not wrap.
#[test]
fn fuzz_found_mcap_chunk_length_that_wrapped_around_its_check() {
    let input: &[u8] = &[
        114, 111, 115, 98, 97, 103, 50, 95, 98, 97, 103, 102, 105, 108, 101, 95, 105, 110, 102,
        111, 114, 109, 97, 116, 105, 111, 110, 58, 10, 32, 32, 118, 101, 114, 115, 105, 109, 0,
        137, 77, 67, 65, 80, 48, 13, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 6, 126, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1,
        0, 0, 46, 0, 0, 0, 0, 0, 132, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 114, 111, 115, 98, 97, 103, 50, 95, 98,
        97, 103, 102, 105, 108, 101, 95, 105, 110, 102, 111, 114, 109, 97, 116, 105, 111, 110, 58,
        10, 32, 32, 118, 101, 114, 115, 105, 109, 0, 137, 77, 67, 65, 80, 48, 13, 10, 0, 0, 0, 0,
        0, 0, 0, 0, 32, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 6, 126, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 46, 114,
        0, 0, 0, 0, 109, 111, 100, 101, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 255, 255, 255,
        255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
        255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
        255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255, 255,
        255, 255, 255, 255, 255, 255, 255, 255, 255, 0, 0, 0, 0, 0, 63, 91, 33, 13, 13, 44, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 35, 0, 0, 0, 101, 95, 151, 145, 153, 32,
        110, 126, 49, 225, 191, 190, 255, 255, 255, 141, 145, 0, 0, 0, 0, 0, 46, 114, 0, 0, 0, 0,
        109, 111, 100, 101, 0, 0, 0, 0, 0, 0, 33, 110, 19, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    ];
    let dir = common::temp_dir("fuzz-r2-wrap");
    let split = input.iter().position(|&b| b == 0).unwrap();
    std::fs::write(dir.join("metadata.yaml"), &input[..split]).unwrap();
    std::fs::write(dir.join("bag_0.db3"), &input[split + 1..]).unwrap();
    if let Ok(bag) = bagscope_reader::Bag::open(&*dir) {
        let _ = bag.tables();
        if let Ok(it) = bag.messages(&bagscope_reader::Filter::default()) {
            for m in it {
                let _ = m;
            }
        }
    }
    // The storage file alone, opened as what it is (an MCAP file): an error or warnings.
    if let Ok(bag) = bagscope_reader::Bag::open(dir.join("bag_0.db3")) {
        let _ = bag.tables();
        let _ = bagscope_reader::check::check(&bag, 1, None);
    }
}
