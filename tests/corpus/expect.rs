//! `bagscope check --expect`: the demo recording meets what it is, the rules file's mistakes
//! are said with their line before any recording is read, and a fleet's table is written by
//! `catalog --expect`. (The measured values against pandas over rosbags, a known gap's range,
//! JUnit XML read by junitparser and the fleet on Dask: `python/tests/test_expect.py`.)

use std::path::Path;
use std::process::{Command, Output};

use crate::common;

const BIN: &str = env!("CARGO_BIN_EXE_bagscope");

fn run(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

fn demo(dir: &Path) -> String {
    let p = dir.join("demo.bag");
    bagscope_ops::demo::write_demo(&p, 30).unwrap();
    p.display().to_string()
}

const DEMO_RULES: &str = "\
topics:
  /imu/data:
    type: sensor_msgs/msg/Imu
    rate: [95, 105]
    rate_share: 0.99
    max_gap: 0.05
    count: [2900, 3100]
    start_within: 0.1
    end_within: 0.1
    values:
      - .linear_acceleration.z > 5
  /battery/voltage:
    rate: [0.9, 1.1]
    values: [.data > 10]
  /gps/fix:
    required: false
alignment:
  - topics: [/imu/data, /odom]
    start: 0.5
values:
  - /odom.twist.twist.linear.x - /cmd_vel.linear.x < 10
duration: [29, 31]
";

#[test]
fn the_demo_meets_what_it_is_and_fails_what_it_is_not() {
    let dir = common::temp_dir("expect_demo");
    let rec = demo(&dir);
    let rules = dir.join("rules.yaml");
    std::fs::write(&rules, DEMO_RULES).unwrap();
    let rules = rules.display().to_string();
    let out = run(&["check", "--expect", &rules, &rec, "-v"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains(": PASS — "), "{text}");
    assert!(text.contains("SKIP required /gps/fix"), "{text}");
    assert!(text.contains("PASS value /battery/voltage"), "{text}");
    // Tighter: a rate the IMU does not have, a battery that is never this full.
    let strict = dir.join("strict.yaml");
    std::fs::write(
        &strict,
        "topics:\n  /imu/data:\n    rate: [200, null]\n  /battery/voltage:\n    values:\n      - .data > 100\n",
    )
    .unwrap();
    let junit = dir.join("out.xml");
    let out = run(&[
        "check",
        "--expect",
        &strict.display().to_string(),
        "--json",
        "--junit",
        &junit.display().to_string(),
        &rec,
    ]);
    assert_eq!(out.status.code(), Some(1));
    let j: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let fails: Vec<(&str, u64)> = j[0]["outcomes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["status"] == "fail")
        .map(|o| (o["check"].as_str().unwrap(), o["line"].as_u64().unwrap()))
        .collect();
    assert_eq!(fails, [("rate", 3), ("value", 6)]);
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("failures=\"2\""), "{xml}");
}

#[test]
fn mistakes_in_the_rules_are_said_with_their_line_before_any_reading() {
    let dir = common::temp_dir("expect_bad");
    let rec = demo(&dir);
    for (rules, said) in [
        // A field the topic's type does not have.
        (
            "topics:\n  /imu/data:\n    values:\n      - .linear_acceleration.w > 1\n",
            ":4: /imu/data.linear_acceleration.w > 1: geometry_msgs/Vector3 has no field \"w\"",
        ),
        (
            "topics:\n  /imu/data:\n    rate: [1, 2\n",
            ":4: while parsing a flow sequence",
        ),
        (
            "topics:\n  /imu/data:\n    rte: [1, 2]\n",
            ":3: /imu/data: unknown key \"rte\"",
        ),
        (
            "topics:\n  /imu/data:\n    rate: fast\n",
            ":3: /imu/data: rate: expected",
        ),
        (
            "values:\n  - /odom.pose crosses 3\n",
            ":2: \"/odom.pose crosses 3\": a condition to hold at every sample",
        ),
        ("\n", ":1: no expectations"),
    ] {
        let p = dir.join("bad.yaml");
        std::fs::write(&p, rules).unwrap();
        let junit = dir.join("bad.xml");
        let out = run(&[
            "check",
            "--expect",
            &p.display().to_string(),
            "--junit",
            &junit.display().to_string(),
            &rec,
        ]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{rules}: {err}");
        assert!(err.contains(&format!("bad.yaml{said}")), "{rules}: {err}");
        assert!(out.stdout.is_empty(), "nothing checked: {:?}", out.stdout);
        assert!(!junit.exists());
    }
    // A recording that does not open fails its own check; the others are checked.
    let missing = dir.join("none.bag").display().to_string();
    let rules = dir.join("ok.yaml");
    std::fs::write(&rules, "topics:\n  /imu/data:\n    rate: [95, 105]\n").unwrap();
    let out = run(&[
        "check",
        "--expect",
        &rules.display().to_string(),
        &missing,
        &rec,
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("none.bag: FAIL"), "{text}");
    assert!(text.contains("demo.bag: PASS"), "{text}");
}

#[test]
fn a_fleet_is_a_table_of_every_recording_and_rule() {
    let dir = common::temp_dir("expect_fleet");
    let runs = dir.join("runs");
    std::fs::create_dir_all(&runs).unwrap();
    demo(&runs);
    std::fs::write(runs.join("broken.bag"), b"#ROSBAG V2.0\nnot a bag").unwrap();
    let rules = dir.join("rules.yaml");
    std::fs::write(&rules, DEMO_RULES).unwrap();
    let out = dir.join("catalog");
    let r = run(&[
        "catalog",
        &runs.display().to_string(),
        "-o",
        &out.display().to_string(),
        "--expect",
        &rules.display().to_string(),
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let f = std::fs::File::open(out.join("expectations.parquet")).unwrap();
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(f)
        .unwrap()
        .build()
        .unwrap();
    let mut rows = Vec::new();
    for b in reader {
        let b = b.unwrap();
        let col = |n: &str| {
            b.column_by_name(n)
                .unwrap()
                .as_any()
                .downcast_ref::<arrow_array::StringArray>()
                .unwrap()
                .clone()
        };
        let (rec, check, status) = (col("recording"), col("check"), col("status"));
        for i in 0..b.num_rows() {
            rows.push((
                rec.value(i).rsplit('/').next().unwrap().to_string(),
                check.value(i).to_string(),
                status.value(i).to_string(),
            ));
        }
    }
    let of = |name: &str| rows.iter().filter(|r| r.0 == name).count();
    assert_eq!(of("broken.bag"), 1, "{rows:?}");
    assert!(rows.contains(&("broken.bag".into(), "open".into(), "fail".into())));
    assert_eq!(of("demo.bag"), 16, "{rows:?}");
    assert!(rows
        .iter()
        .filter(|r| r.0 == "demo.bag")
        .all(|r| r.2 != "fail"));
}
