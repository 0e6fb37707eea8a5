//! The camera recording of tests/py/camera_fixture.py (rosbags' writer, Foxglove's SDK), with
//! where its overlays must land as OpenCV computes them.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Writes `cam.bag` (ROS 1) and `fox.mcap` (Foxglove's schemas) into `dir`; returns their
/// paths and the expected pixels and stamps.
pub fn recording(dir: &Path) -> (PathBuf, PathBuf, serde_json::Value) {
    let (bag, fox, exp) = (
        dir.join("cam.bag"),
        dir.join("fox.mcap"),
        dir.join("exp.json"),
    );
    let o = Command::new("python3")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/py/camera_fixture.py"
        ))
        .args([&bag, &fox, &exp])
        .output()
        .expect("python3");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let expected = serde_json::from_slice(&std::fs::read(&exp).expect("expected")).expect("json");
    (bag, fox, expected)
}
