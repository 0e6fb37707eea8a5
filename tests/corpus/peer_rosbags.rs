//! Bags written by bagscope read back in the peer reader rosbags (pip) with exactly the same
//! messages. Runs where rosbags is installed; in CI (CI=true, which installs it) its absence fails.
#![allow(clippy::unwrap_used)]

use crate::common;

use bagscope_reader::Compression;

const READ: &str = r#"
import sys
from rosbags.rosbag1 import Reader
with Reader(sys.argv[1]) as r:
    for conn, t, raw in r.messages():
        print(conn.topic, conn.msgtype, conn.digest, t, raw.hex())
"#;

fn rosbags_available() -> bool {
    std::process::Command::new("python3")
        .args(["-c", "import rosbags.rosbag1"])
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn rosbags_reads_what_bagscope_writes() {
    if !rosbags_available() {
        assert!(
            std::env::var_os("CI").is_none(),
            "rosbags is not installed but CI is set: .ci/run must install it"
        );
        eprintln!("rosbags is not installed: skipping the peer cross-check (pip install rosbags)");
        return;
    }
    let d = common::temp_dir("peer");
    for compression in [Compression::None, Compression::Lz4, Compression::Bz2] {
        let p = d.join(format!("peer-{}.bag", compression.name()));
        let mut wrote = common::write_fixture(&p, compression, 4000, 500);
        let out = std::process::Command::new("python3")
            .args(["-c", READ])
            .arg(&p)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "rosbags failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        let got: Vec<(String, u64, String)> = text
            .lines()
            .map(|l| {
                let f: Vec<&str> = l.split(' ').collect();
                // rosbags names types the ROS 2 way.
                assert_eq!(f[1], "std_msgs/msg/Float64");
                assert_eq!(f[2], "fdb28210bfa9d7c91146260178d9a584");
                (f[0].to_string(), f[3].parse().unwrap(), f[4].to_string())
            })
            .collect();
        wrote.sort_by_key(|w| w.1);
        let want: Vec<(String, u64, String)> = wrote
            .iter()
            .map(|(c, t, data)| {
                let topic = if *c == 0 { "/a" } else { "/b" };
                (
                    topic.to_string(),
                    *t,
                    data.iter().map(|b| format!("{b:02x}")).collect(),
                )
            })
            .collect();
        assert_eq!(got, want, "{compression:?}");
    }
}
