//! The camera recording of tests/py/camera_fixture.py (rosbags' writer, Foxglove's SDK), with
//! where its overlays must land as OpenCV computes them.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Writes `cam.bag` (ROS 1), `fox.mcap` (Foxglove's schemas in protobuf) and `ros2/` (rosbag2,
/// CDR, Foxglove's ROS 2 ImageAnnotations) into `dir`; returns the first two paths and the
/// expected pixels and stamps.
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
        .args([&bag, &fox, &exp, &dir.join("ros2")])
        .output()
        .expect("python3");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let expected = serde_json::from_slice(&std::fs::read(&exp).expect("expected")).expect("json");
    (bag, fox, expected)
}

/// The robot of tests/py/camera_robot.py written to `urdf`, and the pixels OpenCV projects its
/// box's faces to.
pub fn robot(urdf: &Path) -> Vec<(f64, f64)> {
    let o = Command::new("python3")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/py/camera_robot.py"
        ))
        .arg(urdf)
        .output()
        .expect("python3");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    points(&serde_json::from_slice(&o.stdout).expect("json"))
}

/// A JSON array of `[u, v]` pairs.
pub fn points(v: &serde_json::Value) -> Vec<(f64, f64)> {
    v.as_array()
        .expect("an array")
        .iter()
        .map(|p| {
            (
                p[0].as_f64().unwrap_or(f64::NAN),
                p[1].as_f64().unwrap_or(f64::NAN),
            )
        })
        .collect()
}
