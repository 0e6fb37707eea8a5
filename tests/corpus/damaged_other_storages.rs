//! Truncation and byte flips for the storages `damage.rs` (ROS 1 2.0) and `damage2.rs` (MCAP,
//! a few rosbag2 cases) do not cover: ROS 1 1.2, 1.1, 1.0 and version 0 files, rosbag2 SQLite
//! files, rosbag2 directories of MCAP files, zstd-compressed storage files. Copies of real
//! recordings are damaged in a temporary directory: each gives messages or a clear error, never
//! a panic or a hang, and a file cut short gives back the messages before the cut.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::path::Path;

use bagscope_reader::{Bag, Filter};

/// Messages read (ok, failed) in time order, then the check; the error text if it does not
/// open. Within 30 s: a hang fails.
fn read_all(p: &Path) -> Result<(usize, usize), String> {
    let p = p.to_path_buf();
    let what = format!("reading {}", p.display());
    common::within(30, &what, move || read_all_now(&p))
}

fn read_all_now(p: &Path) -> Result<(usize, usize), String> {
    let b = Bag::open(p).map_err(|e| e.to_string())?;
    let (mut ok, mut bad) = (0, 0);
    if let Ok(it) = b.messages(&Filter::default()) {
        for m in it {
            match m {
                Ok(_) => ok += 1,
                Err(_) => bad += 1,
            }
        }
    }
    let _ = bagscope_reader::check::check(&b, 2, None);
    Ok((ok, bad))
}

/// A small deterministic generator (xorshift), so a failing case can be repeated.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Cuts `bytes` (a file named `name`) at about `cuts` places: every cut opens with messages (as
/// many as or more than any cut before it: a cut never takes back what comes before it) or
/// fails with an error that is not empty; the longest cut gives at least `min_at_end`.
fn cut_everywhere(name: &str, bytes: &[u8], cuts: usize, min_at_end: usize) {
    let d = common::temp_dir(&format!("cut-{name}"));
    let p = d.join(name);
    let step = (bytes.len() / cuts).max(1);
    let mut last = 0usize;
    for cut in (0..bytes.len()).step_by(step) {
        std::fs::write(&p, &bytes[..cut]).unwrap();
        match read_all(&p) {
            Ok((n, _)) => {
                assert!(
                    n >= last,
                    "{name} cut at {cut}: {n} messages after {last} at an earlier cut"
                );
                last = last.max(n);
            }
            Err(e) => assert!(!e.is_empty(), "{name} cut at {cut}: an empty error"),
        }
    }
    assert!(
        last >= min_at_end,
        "{name}: only {last} messages recovered from the longest cut"
    );
}

/// Overwrites `n` seeded runs of 1-8 bytes at random places of `bytes`: opening and reading
/// must return (messages or an error).
fn flip_everywhere(name: &str, bytes: &[u8], n: usize, seed: u64) {
    let d = common::temp_dir(&format!("flip-{name}"));
    let p = d.join(name);
    let mut rng = Rng(seed);
    for _ in 0..n {
        let mut b = bytes.to_vec();
        let at = (rng.next() % b.len() as u64) as usize;
        let len = 1 + (rng.next() % 8) as usize;
        for i in at..(at + len).min(b.len()) {
            b[i] = rng.next() as u8;
        }
        std::fs::write(&p, &b).unwrap();
        let _ = read_all(&p);
    }
}

#[test]
fn ros1_formats_before_2_0_cut_and_flipped() {
    let c = common::corpus_dir();
    // 1.2: records one after another, recovered message by message.
    let v12 = std::fs::read(c.join("ccny/gpsd_viewer_demo_a.bag")).unwrap();
    let full = Bag::open(c.join("ccny/gpsd_viewer_demo_a.bag"))
        .unwrap()
        .summary()
        .message_count as usize;
    cut_everywhere("v12.bag", &v12, 60, full * 9 / 10);
    flip_everywhere("v12.bag", &v12, 150, 12);
    // 1.1 (ekf_test.bag, 5,930 messages) and 1.0 (monster.bag, one 675 KB message): the first
    // 256 KB of the 1.1 file keep the cuts cheap.
    let v11 = std::fs::read(c.join("old-formats/ekf_test.bag")).unwrap();
    let v11 = &v11[..v11.len().min(256 << 10)];
    cut_everywhere("v11.bag", v11, 60, 100);
    flip_everywhere("v11.bag", v11, 150, 11);
    let v10 = std::fs::read(c.join("old-formats/monster.bag")).unwrap();
    // Its one message is 675 KB: every cut but the whole file loses it.
    cut_everywhere("v10.bag", &v10, 40, 0);
    assert_eq!(
        read_all(&c.join("old-formats/monster.bag")).unwrap().0,
        1,
        "the whole 1.0 file"
    );
    flip_everywhere("v10.bag", &v10, 100, 10);
    // Version 0: one topic, no magic line.
    let mut v0 = b"/chatter\nstd_msgs/String\n*\n".to_vec();
    for i in 0..200u32 {
        let text = format!("message {i}");
        let mut data = (text.len() as u32).to_le_bytes().to_vec();
        data.extend_from_slice(text.as_bytes());
        v0.extend_from_slice(&(i + 1).to_le_bytes());
        v0.extend_from_slice(&0u32.to_le_bytes());
        v0.extend_from_slice(&(data.len() as u32).to_le_bytes());
        v0.extend_from_slice(&data);
    }
    cut_everywhere("v0.bag", &v0, 50, 190);
    flip_everywhere("v0.bag", &v0, 150, 0x5eed);
}

#[test]
fn rosbag2_sqlite_files_cut_and_flipped() {
    let c = common::corpus2_dir().join("rosbag2");
    // A storage file opened alone (no metadata.yaml): cut and overwritten.
    let db = std::fs::read(c.join("rolling_cpp_bags/topics_and_services.db3")).unwrap();
    // SQLite refuses a database shorter than its header says until the cut is in the last
    // page; then the rows come back.
    cut_everywhere("t.db3", &db, 40, 13);
    flip_everywhere("t.db3", &db, 150, 3);
    // In its directory, with a metadata.yaml that now disagrees: a warning or an error.
    let d = common::temp_dir("r2-sqlite-dir");
    let src = c.join("rolling_sqlite3/talker");
    for e in std::fs::read_dir(&src).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), d.join(e.file_name())).unwrap();
    }
    let dbs: Vec<_> = std::fs::read_dir(&d)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "db3"))
        .collect();
    for db in dbs {
        let bytes = std::fs::read(&db).unwrap();
        std::fs::write(&db, &bytes[..bytes.len() / 2]).unwrap();
    }
    match Bag::open(&d) {
        Ok(b) => {
            let _ = b.tables();
            let _ = read_all(&d);
        }
        Err(e) => assert!(e.to_string().contains("db3"), "{e}"),
    }
}

#[test]
fn rosbag2_mcap_directory_cut_keeps_messages_before_the_cut() {
    let c = common::corpus2_dir().join("rosbag2/rolling_mcap/multiple_files");
    let d = common::temp_dir("r2-mcap-dir");
    for e in std::fs::read_dir(&c).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), d.join(e.file_name())).unwrap();
    }
    let full = read_all(&d).unwrap().0;
    assert!(full > 0);
    let mcaps: Vec<_> = std::fs::read_dir(&d)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "mcap"))
        .collect();
    let victim = &mcaps[0];
    let bytes = std::fs::read(victim).unwrap();
    let mut last = 0;
    for k in 1..20 {
        let cut = bytes.len() * k / 20;
        std::fs::write(victim, &bytes[..cut]).unwrap();
        match Bag::open(&d) {
            Ok(b) => {
                assert!(
                    b.warnings().iter().any(|w| !w.is_empty()),
                    "cut at {cut}: no warning"
                );
                let (n, _) = read_all(&d).unwrap();
                assert!(n >= last, "cut at {cut}: {n} after {last}");
                last = last.max(n);
            }
            Err(e) => assert!(!e.to_string().is_empty()),
        }
    }
    assert!(last > 0, "no messages recovered from any cut");
    flip_everywhere("multiple_files_0.mcap", &bytes, 150, 21);
}

#[test]
fn zstd_storage_files_cut_and_flipped() {
    let c = common::corpus2_dir().join("rosbag2/reindex_test_bags/file_compression");
    let z = std::fs::read(c.join("file_compression_0.db3.zstd")).unwrap();
    let d = common::temp_dir("zstd-cut");
    let p = d.join("f.db3.zstd");
    for k in 0..30 {
        std::fs::write(&p, &z[..z.len() * k / 30]).unwrap();
        if let Err(e) = read_all(&p) {
            assert!(!e.is_empty());
        }
    }
    flip_everywhere("f.db3.zstd", &z, 100, 7);
}
