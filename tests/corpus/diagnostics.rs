//! Diagnostics of a real recording (navigation/gps_data.bag, a Husky's `/diagnostics`):
//! `bagscope info --freq --json` counts the statuses per name and level as rosbags' own
//! deserializer gives them (`tests/py/diagnostics_rosbags.py`); without --freq it names the
//! topic and says how to count.

use std::process::Command;

use serde_json::Value;

use crate::common;

#[test]
fn info_counts_diagnostics_as_rosbags_reads_them() {
    let bag = common::corpus_dir().join("navigation/gps_data.bag");
    let out = Command::new(env!("CARGO_BIN_EXE_bagscope"))
        .args(["info", "--freq", "--json"])
        .arg(&bag)
        .output()
        .unwrap();
    assert!(out.status.success());
    let ours: Value = serde_json::from_slice(&out.stdout).unwrap();
    let d = &ours["diagnostics"];
    let out = Command::new("python3")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/py/diagnostics_rosbags.py"
        ))
        .arg(&bag)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let theirs: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(d["messages"], theirs["messages"]);
    let names = theirs["counts"].as_object().unwrap();
    assert_eq!(d["names"], names.len());
    assert!(names.len() >= 5, "{names:?}");
    for (name, counts) in names {
        assert_eq!(&d["per_name"][name]["statuses"], counts, "{name}");
    }
    assert_eq!(d["per_name"]["Power System"]["worst"], "ERROR");
    let text = Command::new(env!("CARGO_BIN_EXE_bagscope"))
        .arg("info")
        .arg(&bag)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("diagnostics: /diagnostics (67 messages; --freq counts"),
        "{text}"
    );
}
