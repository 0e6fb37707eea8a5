//! `bagscope compare` held against numbers worked out with pandas from rosbags-dataframe
//! (`tests/py/compare_pandas.py`) on the same runs: two demo recordings of different lengths,
//! the second cut to a range and without one topic, aligned by their starts and by an event.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::common;

const BIN: &str = env!("CARGO_BIN_EXE_bagscope");

fn json_of(cmd: &mut Command) -> Value {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// `a` and `b` agree: the same shape, integers equal, numbers within 1e-9 relative.
fn close(a: &Value, b: &Value, at: &str) {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if x.is_u64() && y.is_u64() => {
            assert_eq!(x, y, "{at}")
        }
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            assert!(
                (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1e-3),
                "{at}: {x} vs {y}"
            );
        }
        (Value::Object(x), Value::Object(y)) => {
            for (k, v) in y {
                close(&x[k], v, &format!("{at}.{k}"));
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            assert_eq!(x.len(), y.len(), "{at}");
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                close(p, q, &format!("{at}[{i}]"));
            }
        }
        _ => assert_eq!(a, b, "{at}"),
    }
}

fn runs(dir: &Path) -> (String, String) {
    let a = dir.join("a.bag");
    let full = dir.join("full.bag");
    let b = dir.join("b.bag");
    bagscope_ops::demo::write_demo(&a, 20).unwrap();
    bagscope_ops::demo::write_demo(&full, 30).unwrap();
    let st = Command::new(BIN)
        .args([
            "export",
            "--start",
            "+3",
            "--end",
            "+27",
            "-t",
            "/imu/data",
            "-t",
            "/odom",
        ])
        .args(["-t", "/cmd_vel", "-o"])
        .arg(&b)
        .arg(&full)
        .status()
        .unwrap();
    assert!(st.success());
    (a.display().to_string(), b.display().to_string())
}

#[test]
fn compare_gives_what_pandas_gives() {
    let dir = common::temp_dir("compare");
    let (a, b) = runs(&dir);
    let topics = ["/battery/voltage", "/cmd_vel", "/imu/data", "/odom"];
    let fields = [
        "/imu/data.linear_acceleration.x",
        "/odom.twist.twist.linear.x",
        "/cmd_vel.angular.z",
        "/battery/voltage.data",
    ];
    for align in ["start", "/cmd_vel"] {
        let mut ours = Command::new(BIN);
        ours.args(["compare", &a, &b, "--json", "--align", align]);
        let mut theirs = Command::new("python3");
        theirs
            .arg(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/py/compare_pandas.py"
            ))
            .args([&a, &b, "--align", align]);
        for t in topics {
            ours.args(["-t", t]);
            theirs.args(["--topic", t]);
        }
        for f in fields {
            ours.args(["-f", f]);
            theirs.args(["--field", f]);
        }
        let (ours, theirs) = (json_of(&mut ours), json_of(&mut theirs));
        close(&ours["zeros_ns"], &theirs["zeros_ns"], "zeros");
        close(&ours["topics"], &theirs["topics"], align);
        close(&ours["fields"], &theirs["fields"], align);
        // The run without /battery/voltage has none of it; the cut run's counts differ.
        assert_eq!(ours["topics"][0]["runs"][1], Value::Null);
        assert_eq!(ours["fields"][3]["runs"][1], Value::Null);
        let imu = &ours["topics"][2]["runs"];
        assert_ne!(imu[0]["count"], imu[1]["count"]);
    }
    // Aligned on each run's own bookmark "turn" (kept beside each bag): the zeros are the
    // bookmarks' times, every time shifted by the same.
    let start_of = |p: &str| {
        bagscope_reader::Bag::open(p)
            .unwrap()
            .summary()
            .start_ns
            .unwrap()
    };
    let (za, zb) = (start_of(&a) + 4_000_000_000, start_of(&b) + 1_500_000_000);
    for (p, z) in [(&a, za), (&b, zb)] {
        std::fs::write(
            format!("{p}.bookmarks.json"),
            serde_json::json!({"bagscope_bookmarks": 1, "bookmarks": [{"start_ns": z, "label": "turn"}]})
                .to_string(),
        )
        .unwrap();
    }
    let by_start =
        json_of(Command::new(BIN).args(["compare", &a, &b, "--json", "-t", "/imu/data"]));
    let by_mark = json_of(Command::new(BIN).args([
        "compare",
        &a,
        &b,
        "--json",
        "-t",
        "/imu/data",
        "--align",
        "bookmark:turn",
    ]));
    assert_eq!(by_mark["zeros_ns"], serde_json::json!([za, zb]));
    for (k, z) in [(0, za - start_of(&a)), (1, zb - start_of(&b))] {
        let f0 = by_start["topics"][0]["runs"][k]["first_s"]
            .as_f64()
            .unwrap();
        let f1 = by_mark["topics"][0]["runs"][k]["first_s"].as_f64().unwrap();
        assert!((f0 - z as f64 / 1e9 - f1).abs() < 1e-9, "{f0} {f1}");
    }
    // The text table: a block a topic, B − A beside.
    let out = Command::new(BIN)
        .args([
            "compare",
            &a,
            &b,
            "-t",
            "/imu/data",
            "-f",
            "/imu/data.linear_acceleration.x",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("B − A") && text.contains("mean rate (Hz)"),
        "{text}"
    );
    assert!(text.contains("  std "), "{text}");
    // Bad requests: a clear error, not a panic.
    for (args, says) in [
        (vec!["-t", "/nope"], "no topic /nope"),
        (vec!["--align", "/nope"], "no topic"),
        (
            vec!["-f", "/imu/data.linear_acceleration["],
            "/imu/data.linear_acceleration[",
        ),
        (vec!["--at", "1"], "--at gives 1 times for 2 runs"),
        (vec!["--align", "bookmark:nope"], "no bookmark \"nope\""),
    ] {
        let out = Command::new(BIN)
            .args(["compare", &a, &b])
            .args(&args)
            .output()
            .unwrap();
        // An error's exit status (1 or 2 by kind), never a panic's 101.
        assert!(
            matches!(out.status.code(), Some(1 | 2)),
            "{args:?}: {:?}",
            out.status
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
    }
}
