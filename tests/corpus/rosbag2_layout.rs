//! rosbag2 directory layouts: metadata.yaml of the early distros (versions 1-3, eloquent and
//! foxy) lists files from the parent of the bag directory (`bagname/bagname_0.db3`), as
//! rosbag2's `resolve_relative_paths` reads them; and a recording that lacks the files or
//! messages its metadata lists is damaged for `check` and is not exported as an empty file.
#![allow(clippy::unwrap_used)]

use crate::common;

use std::path::Path;

/// A rosbag2 SQLite recording `dir/name` of the corpus's turtles (both cmd_vel topics, 565
/// messages), written by bagscope.
fn recording(dir: &Path, name: &str) -> std::path::PathBuf {
    common::turtles_rosbag2(dir, name, &["/turtle1/cmd_vel", "/turtle2/cmd_vel"])
}

/// The recording as rosbag2 of foxy wrote it: metadata.yaml version 3 (no QoS, no file list,
/// no custom data) naming its files from the bag directory's parent, and a database without
/// the tables later distros added.
fn as_version_3(bag: &Path) {
    let name = bag.file_name().unwrap().to_str().unwrap();
    let db = rusqlite::Connection::open(bag.join(format!("{name}_0.db3"))).unwrap();
    db.execute_batch("DROP TABLE IF EXISTS message_definitions; DROP TABLE IF EXISTS schema;")
        .unwrap();
    drop(db);
    let p = bag.join("metadata.yaml");
    let text = std::fs::read_to_string(&p).unwrap();
    let mut out = String::new();
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("files:") {
            break;
        }
        if t.starts_with("offered_qos_profiles") || t.starts_with("type_description_hash") {
            continue;
        }
        if t.starts_with("version:") {
            out.push_str("  version: 3\n");
        } else if t == format!("- \"{name}_0.db3\"") {
            out.push_str(&format!("    - {name}/{name}_0.db3\n"));
        } else {
            out.push_str(line);
            out.push('\n');
        }
    }
    assert!(out.contains(&format!("- {name}/{name}_0.db3")), "{out}");
    std::fs::write(&p, out).unwrap();
}

#[test]
fn early_distro_metadata_names_files_from_the_parent_directory() {
    let d = common::temp_dir("rosbag2-v3");
    let bag = recording(&d, "foxy_bag");
    let want = bagscope_reader::Bag::open(&bag)
        .unwrap()
        .summary()
        .message_count;
    assert_eq!(want, 565);
    as_version_3(&bag);
    let b = bagscope_reader::Bag::open(&bag).unwrap();
    assert_eq!(b.summary().message_count, want);
    assert!(b.warnings().is_empty(), "{:?}", b.warnings());
    let r = common::bagscope(&[&"check", &bag]);
    assert_eq!(r.code, Some(0), "{}", r.stdout);
    assert!(r.stdout.contains(": OK — 565 messages"), "{}", r.stdout);
    // Opened from inside the bag directory, or through its metadata.yaml.
    let r = common::bagscope(&[&"info", &bag.join("metadata.yaml")]);
    assert!(r.ok().contains("565"));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_bagscope"))
        .args(["check", "."])
        .current_dir(&bag)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn a_recording_without_its_listed_files_or_messages_is_damaged_and_not_exported() {
    let d = common::temp_dir("rosbag2-missing");
    let bag = recording(&d, "lost");
    std::fs::remove_file(bag.join("lost_0.db3")).unwrap();
    let r = common::bagscope(&[&"check", &bag]);
    assert_eq!(r.code, Some(1), "{}", r.stdout);
    assert!(r.stdout.contains(": DAMAGED — 0 messages"), "{}", r.stdout);
    let r = common::bagscope(&[&"info", &bag]);
    assert!(
        r.stdout
            .contains("1 of the 1 storage files metadata.yaml lists; 565 of the 565 messages metadata.yaml counts"),
        "{}",
        r.stdout
    );
    let out = d.join("out.mcap");
    let r = common::bagscope(&[&"export", &bag, &"-o", &out]);
    assert_eq!(r.code, Some(2), "{}", r.stderr);
    assert!(
        r.stderr.contains("none of its messages could be read"),
        "{}",
        r.stderr
    );
    assert!(!out.exists(), "nothing is written");
    assert_eq!(
        std::fs::read_dir(&d).unwrap().count(),
        1,
        "no temporary file is left beside"
    );

    // Fewer messages than metadata.yaml counts (a file of the split lost): damaged too.
    let bag = recording(&d, "fewer");
    let p = bag.join("metadata.yaml");
    let text = std::fs::read_to_string(&p).unwrap();
    std::fs::write(
        &p,
        text.replacen("  message_count: 565\n", "  message_count: 600\n", 1),
    )
    .unwrap();
    let r = common::bagscope(&[&"check", &bag]);
    assert_eq!(r.code, Some(1), "{}", r.stdout);
    assert!(r.stdout.contains("DAMAGED"), "{}", r.stdout);
    let r = common::bagscope(&[&"info", &bag]);
    assert!(
        r.stdout
            .contains("35 of the 600 messages metadata.yaml counts"),
        "{}",
        r.stdout
    );
}
