//! ROS 2 peers in a network namespace of their own: `unshare --net` with only the loopback
//! interface up, so no DDS discovery or data can leave the machine (DDS discovers by
//! multicast). Every participant is also told to stay on localhost. A test that cannot make
//! its namespace fails; it never falls back to the real network.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

/// The peer script (rclpy and Cyclone DDS), `tests/ros2/peer.py`.
pub fn peer() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/ros2/peer.py")
}

/// Checks that the ROS 2 peers are installed (by `.ci/run`): a missing one fails the test.
pub fn require_peers() {
    let out = Command::new("python3")
        .args([
            "-c",
            "import rclpy, std_msgs.msg, sensor_msgs.msg, nav_msgs.msg, cyclonedds",
        ])
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "the ROS 2 peers are missing (pip: ros-rclpy ros-std-msgs ros-sensor-msgs ros-nav-msgs ros-rmw-fastrtps-cpp cyclonedds; .ci/run installs them): {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs bash `script` in a new network namespace with only loopback up, in `dir`, with
/// `BAGSCOPE` naming the binary and `PEER` the peer script; at most `limit`. Panics when the
/// namespace cannot be made, or the script fails (with its output).
pub fn in_netns(dir: &Path, bin: &str, script: &str, limit: Duration) -> Output {
    require_peers();
    // One namespace at a time: the tests measure delivery and spans on 2 cores, and each runs
    // a player, a recorder and Python peers.
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _turn = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let full = format!(
        "set -euo pipefail\n\
         ip link set lo up\n\
         # Multicast on loopback, so DDS discovery works as it does on a host's interfaces.\n\
         ip link set lo multicast on\n\
         # Only loopback: anything else means this is not a namespace of our own.\n\
         if ip -o link show | grep -v ': lo:' | grep -q .; then echo 'not an isolated namespace' >&2; exit 97; fi\n\
         export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST RMW_IMPLEMENTATION=rmw_fastrtps_cpp\n\
         export ROS_DOMAIN_ID=${{ROS_DOMAIN_ID:-0}} ROS_LOG_DIR=\"$PWD/roslog\" PYTHONUNBUFFERED=1\n\
         # Wait until every log named has said 'ready'.\n\
         ready() {{ for f in \"$@\"; do for _ in $(seq 300); do grep -q ready \"$f\" 2>/dev/null && break; sleep 0.1; done; grep -q ready \"$f\" || {{ echo \"$f never got ready\" >&2; cat \"$f\" >&2; exit 98; }}; done; }}\n\
         {script}\n"
    );
    let mut cmd = Command::new("unshare");
    cmd.args(["--net", "--", "timeout", "-k", "5"])
        .arg(format!("{}", limit.as_secs()))
        .args(["bash", "-c", &full])
        .current_dir(dir)
        .env("BAGSCOPE", bin)
        .env("PEER", peer())
        .stdin(Stdio::null());
    let out = cmd.output().expect(
        "unshare runs (util-linux; CI runs as root, which a network namespace of its own needs)",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        !stderr.contains("unshare failed") && !stderr.contains("unshare: "),
        "could not make a network namespace of the test's own (needs root): {stderr}"
    );
    assert!(
        out.status.success(),
        "the script in the namespace failed ({}):\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        stderr
    );
    out
}

/// `sent` as Fast DDS puts it on the wire: padded with zeros to a multiple of 4 bytes (what
/// an rclpy subscriber receives too).
pub fn padded(sent: &[u8]) -> Vec<u8> {
    let mut v = sent.to_vec();
    while !v.len().is_multiple_of(4) {
        v.push(0);
    }
    v
}

/// A message a peer received or sent: topic, bytes, time (ns).
#[derive(Debug, Clone)]
pub struct Seen {
    pub topic: String,
    pub data: Vec<u8>,
    pub t: u64,
}

/// The JSON lines a peer wrote.
pub fn seen(path: &Path) -> Vec<Seen> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("the peer wrote no {}: {e}", path.display()));
    text.lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("a JSON line");
            let hex = v["hex"].as_str().expect("hex");
            let data = (0..hex.len() / 2)
                .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).expect("hex byte"))
                .collect();
            Seen {
                topic: v["topic"].as_str().unwrap_or("").to_string(),
                data,
                t: v["t"].as_u64().expect("t"),
            }
        })
        .collect()
}

/// Asserts that `got` is `want`, saying where they first differ (never printing the bytes of
/// large messages).
pub fn assert_same(got: &[Vec<u8>], want: &[Vec<u8>], what: &str) {
    let first = got.iter().zip(want).position(|(a, b)| a != b);
    if let Some(i) = first {
        let (a, b) = (&got[i], &want[i]);
        let at = a.iter().zip(b.iter()).position(|(x, y)| x != y);
        panic!(
            "{what}: message {i} differs: {} bytes received, {} expected, first difference at byte {at:?}",
            a.len(),
            b.len()
        );
    }
    assert_eq!(
        got.len(),
        want.len(),
        "{what}: {} messages received, {} expected",
        got.len(),
        want.len()
    );
}
