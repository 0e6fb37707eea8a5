//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::path::PathBuf;

pub mod camera;
pub mod gps;
#[cfg(feature = "remote")]
pub mod http;
pub mod images;
pub mod mcap;
pub mod ros1;
pub mod ros2;
pub mod video;

// The reader's own fixtures (writers of small recordings, temporary directories), shared.
#[path = "../../crates/bagscope-reader/tests/kit/mod.rs"]
mod kit;
pub use kit::*;

/// The real corpus, `../shared/bags` beside the project. Panics (never skips) when it is
/// missing, so a CI run without it fails loudly.
pub fn corpus_dir() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/bags");
    assert!(
        d.join("expected.json").is_file(),
        "the real bag corpus is missing: expected {} (TESTING.md, '../shared': what it holds and where it comes from)",
        d.display()
    );
    d
}

/// `expected.json` of the corpus.
pub fn expected() -> serde_json::Map<String, serde_json::Value> {
    let p = corpus_dir().join("expected.json");
    let text = std::fs::read_to_string(&p).expect("read expected.json");
    match serde_json::from_str(&text).expect("parse expected.json") {
        serde_json::Value::Object(m) => m,
        _ => panic!("expected.json is not an object"),
    }
}

/// The real ROS 2 and MCAP corpus, `../shared/bags2` beside the project. Panics (never skips)
/// when it is missing.
pub fn corpus2_dir() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/bags2");
    assert!(
        d.join("expected.json").is_file() && d.join("expected_decoded.jsonl").is_file(),
        "the real ROS 2 / MCAP corpus is missing: expected {} (TESTING.md, '../shared': what it holds and where it comes from)",
        d.display()
    );
    d
}

/// What a run of the `bagscope` binary gave.
pub struct Ran {
    /// Exit code.
    pub code: Option<i32>,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

impl Ran {
    /// The standard output of a run that must have succeeded.
    pub fn ok(self) -> String {
        assert_eq!(self.code, Some(0), "{}", self.stderr);
        self.stdout
    }
}

/// Runs the `bagscope` binary with `args` (paths and words alike: `&[&"echo", &bag]`).
pub fn bagscope(args: &[&dyn AsRef<std::ffi::OsStr>]) -> Ran {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_bagscope"))
        .args(args.iter().map(|a| a.as_ref()))
        .output()
        .expect("run bagscope");
    Ran {
        code: o.status.code(),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// JSON values equal: integers exactly; a number with a fraction or an exponent within half a
/// float32 unit in the last place (a float32 printed in its shortest form against the same value
/// widened to a double), which a float64 printed in its shortest form by both sides meets
/// exactly.
pub fn same_json(a: &serde_json::Value, b: &serde_json::Value) -> bool {
    use serde_json::Value as J;
    match (a, b) {
        (J::Number(x), J::Number(y)) => {
            let int = |n: &serde_json::Number| {
                n.as_i64()
                    .map(i128::from)
                    .or_else(|| n.as_u64().map(i128::from))
            };
            match (int(x), int(y)) {
                (Some(p), Some(q)) => p == q,
                _ => {
                    let (p, q) = (x.as_f64().unwrap(), y.as_f64().unwrap());
                    p == q || (p - q).abs() <= f64::from(f32::EPSILON) / 2.0 * p.abs().max(q.abs())
                }
            }
        }
        (J::Array(x), J::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_json(a, b))
        }
        (J::Object(x), J::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| same_json(v, w)))
        }
        _ => a == b,
    }
}

/// `dir/name`: a rosbag2 SQLite recording of the corpus's turtles (`rosbag.js/example.bag`)
/// converted by `bagscope export --to-ros2`, with only the `topics` given.
pub fn turtles_rosbag2(dir: &std::path::Path, name: &str, topics: &[&str]) -> PathBuf {
    let out = dir.join(name);
    let src = corpus_dir().join("rosbag.js/example.bag");
    let mut args: Vec<&dyn AsRef<std::ffi::OsStr>> = vec![
        &"export",
        &src,
        &"--format",
        &"rosbag2-sqlite3",
        &"--to-ros2",
        &"-o",
        &out,
    ];
    for t in topics {
        args.push(&"--topic");
        args.push(t);
    }
    bagscope(&args).ok();
    out
}
