//! Bookmarks kept in the recording: written into an MCAP as metadata records (the pip `mcap`
//! reader reads them back byte for byte, the file's old bytes untouched, its other metadata
//! and messages kept), read back by bagscope, carried by export (MCAP: records; a bag: a
//! sidecar beside it, only those in the range).

use std::path::Path;
use std::process::Command;
use std::sync::atomic::AtomicBool;

use bagscope_ops::bookmarks::{read_bookmarks, sidecar_path, Bookmark, METADATA_NAME};
use bagscope_ops::tables::export::rewrite_with_bookmarks;
use bagscope_reader::storage::mcap::writer::{McapOptions, McapWriter};
use bagscope_reader::Bag;
use sha2::Digest;

use crate::common;

const T0: u64 = 1_700_000_000_000_000_000;

/// An MCAP of 100 JSON messages at 10 Hz, with a metadata record of its own.
fn mcap(path: &Path) {
    let mut w = McapWriter::create(path, McapOptions::default()).unwrap();
    let s = w
        .add_schema("Reading", "jsonschema", br#"{"type":"object"}"#)
        .unwrap();
    let ch = w.add_channel(s, "/reading", "json", &[]).unwrap();
    for i in 0..100u32 {
        let t = T0 + u64::from(i) * 100_000_000;
        w.write(ch, i, t, t, format!("{{\"v\":{i}}}").as_bytes())
            .unwrap();
    }
    w.add_metadata("robot", &[("serial".into(), "X-1".into())])
        .unwrap();
    w.finish().unwrap();
}

fn sha(p: &Path) -> String {
    format!("{:x}", sha2::Sha256::digest(std::fs::read(p).unwrap()))
}

/// The metadata records the pip `mcap` package reads: (name, pairs in key order).
fn peer_metadata(p: &Path) -> Vec<(String, Vec<(String, String)>)> {
    let out = Command::new("python3")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/py/mcap_metadata.py"
        ))
        .arg(p)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let mut pairs: Vec<(String, String)> = v["metadata"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_string()))
                .collect();
            pairs.sort();
            (v["name"].as_str().unwrap().to_string(), pairs)
        })
        .collect()
}

#[test]
fn bookmarks_go_into_an_mcap_and_come_back() {
    let dir = common::temp_dir("notes");
    let run = dir.join("run.mcap");
    mcap(&run);
    // The file's present bytes, held by a second name of the same inode.
    let old = dir.join("old-bytes.mcap");
    std::fs::hard_link(&run, &old).unwrap();
    let before = sha(&old);
    let notes = vec![
        Bookmark {
            start_ns: T0 + 2_000_000_000,
            end_ns: None,
            label: "wheel slip — left".into(),
            color: String::new(),
        },
        Bookmark {
            start_ns: T0 + 5_500_000_000,
            end_ns: Some(T0 + 7_000_000_000),
            label: "dock \"B\" ∆ retry".into(),
            color: "#ff8800".into(),
        },
    ];
    let bag = Bag::open(&run).unwrap();
    rewrite_with_bookmarks(&bag, &notes, &AtomicBool::new(false)).unwrap();
    drop(bag);
    assert_eq!(sha(&old), before, "the old bytes are never written");
    assert_ne!(sha(&run), before);
    assert!(!dir.join(".run.mcap.bookmarks.mcap").exists());
    // The pip reader: the robot's record kept, one record a bookmark, strings as entered.
    let meta = peer_metadata(&run);
    assert_eq!(
        meta[0],
        ("robot".into(), vec![("serial".into(), "X-1".into())])
    );
    let mut want: Vec<(String, Vec<(String, String)>)> = notes
        .iter()
        .map(|n| {
            let mut p = n.to_pairs();
            p.sort();
            (METADATA_NAME.to_string(), p)
        })
        .collect();
    want.insert(0, meta[0].clone());
    assert_eq!(meta, want);
    assert!(meta[2]
        .1
        .contains(&("label".into(), "dock \"B\" ∆ retry".into())));
    // bagscope, opened again: the same bookmarks, every message still there.
    let again = Bag::open(&run).unwrap();
    assert_eq!(read_bookmarks(&again).0, notes);
    assert_eq!(again.summary().message_count, 100);
    let st = Command::new(env!("CARGO_BIN_EXE_bagscope"))
        .arg("check")
        .arg(&run)
        .status()
        .unwrap();
    assert!(st.success());
    // Export of the first 4 s: the bookmark in it.
    let out = dir.join("first.mcap");
    let st = Command::new(env!("CARGO_BIN_EXE_bagscope"))
        .args(["export", "--end", "+4", "-o"])
        .arg(&out)
        .arg(&run)
        .status()
        .unwrap();
    assert!(st.success());
    assert_eq!(peer_metadata(&out), want[..2]);
    // Export to MCAP: records again (the robot's too).
    let out = dir.join("copy.mcap");
    let st = Command::new(env!("CARGO_BIN_EXE_bagscope"))
        .args(["export", "-o"])
        .arg(&out)
        .arg(&run)
        .status()
        .unwrap();
    assert!(st.success());
    assert_eq!(peer_metadata(&out), want);
}

#[test]
fn a_bags_bookmarks_go_beside_it_and_export_carries_them() {
    let dir = common::temp_dir("notes-bag");
    let run = dir.join("run.bag");
    bagscope_ops::demo::write_demo(&run, 10).unwrap();
    let before = sha(&run);
    let bag = Bag::open(&run).unwrap();
    let t0 = bag.summary().start_ns.unwrap();
    let notes = vec![
        Bookmark {
            start_ns: t0 + 1_000_000_000,
            end_ns: Some(t0 + 2_000_000_000),
            label: "bump".into(),
            color: "#00ff00".into(),
        },
        Bookmark {
            start_ns: t0 + 8_000_000_000,
            end_ns: None,
            label: "late".into(),
            color: String::new(),
        },
    ];
    let side = rewrite_with_bookmarks(&bag, &notes, &AtomicBool::new(false)).unwrap();
    assert_eq!(side, dir.join("run.bag.bookmarks.json"));
    assert_eq!(sha(&run), before, "the bag is not touched");
    assert_eq!(read_bookmarks(&Bag::open(&run).unwrap()).0, notes);
    let out = dir.join("first.bag");
    let st = Command::new(env!("CARGO_BIN_EXE_bagscope"))
        .args(["export", "--end", "+5", "-o"])
        .arg(&out)
        .arg(&run)
        .status()
        .unwrap();
    assert!(st.success());
    assert_eq!(read_bookmarks(&Bag::open(&out).unwrap()).0, notes[..1]);
    // A sidecar that is not JSON: said, not fatal.
    std::fs::write(sidecar_path(&out), "{oops").unwrap();
    let (n, problem) = read_bookmarks(&Bag::open(&out).unwrap());
    assert!(n.is_empty());
    assert!(problem.unwrap().contains("first.bag.bookmarks.json"));
}
