//! `echo`, `csv` and `export` go on past messages that cannot be decoded (a short buffer, a
//! definition that does not parse): each reported once per connection with a count, the rest
//! written, and a non-zero exit code at the end.
#![allow(clippy::unwrap_used)]

use crate::common;

use bagscope_reader::{BagWriter, Compression, ConnectionSpec, WriteOptions};

/// /good (Float64, 10 messages), /short (Float64, 10 messages of which 3 are 4 bytes long),
/// /broken (a custom type whose definition does not parse, found nowhere else, 5 messages).
fn fixture(dir: &std::path::Path) -> std::path::PathBuf {
    let p = dir.join("mixed.bag");
    let mut w = BagWriter::create(
        &p,
        WriteOptions {
            compression: Compression::None,
            ..Default::default()
        },
    )
    .unwrap();
    let spec = |topic: &str, def: &str| ConnectionSpec {
        topic: topic.into(),
        datatype: if topic == "/broken" {
            "my_pkg/Broken".into()
        } else {
            "std_msgs/Float64".into()
        },
        md5sum: "fdb28210bfa9d7c91146260178d9a584".into(),
        message_definition: def.into(),
        ..Default::default()
    };
    let good = w.add_connection(spec("/good", "float64 data\n"));
    let short = w.add_connection(spec("/short", "float64 data\n"));
    let broken = w.add_connection(spec("/broken", "float64[ data\n"));
    let t0 = 1_700_000_000_000_000_000u64;
    for i in 0..10u64 {
        let t = t0 + i * 100_000_000;
        w.write(good, t, &(i as f64).to_le_bytes()).unwrap();
        if i % 3 == 1 {
            w.write(short, t + 1, &[1, 2, 3, 4]).unwrap();
        } else {
            w.write(short, t + 1, &(i as f64).to_le_bytes()).unwrap();
        }
        if i < 5 {
            w.write(broken, t + 2, &(i as f64).to_le_bytes()).unwrap();
        }
    }
    w.finish().unwrap();
    p
}

fn bagscope(args: &[&dyn AsRef<std::ffi::OsStr>]) -> (Option<i32>, String, String) {
    let r = common::bagscope(args);
    (r.code, r.stdout, r.stderr)
}

#[test]
fn echo_goes_on_and_reports_once_per_connection() {
    let dir = common::temp_dir("undecodable-echo");
    let p = fixture(&dir);
    let (code, out, err) = bagscope(&[&"echo", &p, &"--json"]);
    assert_eq!(code, Some(1), "{err}");
    // 10 good + 7 whole /short messages.
    assert_eq!(out.lines().count(), 17, "{out}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 3, "{err}");
    assert_eq!(
        lines[2], "bagscope: 17 message(s) printed, 8 not decoded",
        "{err}"
    );
    assert!(lines
        .iter()
        .any(|l| l.contains("/short") && l.contains("3 message(s) did not decode")));
    assert!(lines
        .iter()
        .any(|l| l.contains("/broken") && l.contains("5 message(s) did not decode")));
}

#[test]
fn csv_writes_every_readable_row() {
    let dir = common::temp_dir("undecodable-csv");
    let p = fixture(&dir);
    let out = dir.join("out.csv");
    let (code, _, err) = bagscope(&[&"csv", &p, &"/good.data", &"/short.data", &"-o", &out]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("/short.data: absent from 3 messages"), "{err}");
    let text = std::fs::read_to_string(&out).unwrap();
    // A header and a row per time: 10 of /good, 7 of /short.
    assert_eq!(text.lines().count(), 1 + 17, "{text}");
}

#[test]
fn export_to_ros2_leaves_out_what_does_not_convert() {
    let dir = common::temp_dir("undecodable-export");
    let p = fixture(&dir);
    let out = dir.join("out.mcap");
    let (code, _, err) = bagscope(&[&"export", &p, &"-o", &out, &"--to-ros2"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("/short (connection 1): 3 message(s) not converted"),
        "{err}"
    );
    let bag = bagscope_reader::Bag::open(&out).unwrap();
    let counts: Vec<(String, u64)> = bag
        .summary()
        .topics
        .iter()
        .map(|t| (t.name.clone(), t.message_count))
        .collect();
    assert!(counts.contains(&("/good".to_string(), 10)), "{counts:?}");
    assert!(counts.contains(&("/short".to_string(), 7)), "{counts:?}");
}

/// A stored definition that does not parse gives way to the one on the search path or
/// shipped, and `info` says which was used.
#[test]
fn a_stored_definition_that_does_not_parse_falls_back_and_says_so() {
    let dir = common::temp_dir("undecodable-fallback");
    let p = dir.join("fallback.bag");
    let mut w = BagWriter::create(&p, WriteOptions::default()).unwrap();
    let c = w.add_connection(ConnectionSpec {
        topic: "/f".into(),
        datatype: "std_msgs/Float64".into(),
        md5sum: "fdb28210bfa9d7c91146260178d9a584".into(),
        message_definition: "float64[ data\n".into(),
        ..Default::default()
    });
    w.write(c, 1_700_000_000_000_000_000, &2.5f64.to_le_bytes())
        .unwrap();
    w.finish().unwrap();
    let out = common::bagscope(&[&"echo", &p, &"--json"]).ok();
    assert_eq!(
        out.trim(),
        r#"{"time_ns": 1700000000000000000, "topic": "/f", "message": {"data": 2.5}}"#
    );
    let bag = bagscope_reader::Bag::open(&p).unwrap();
    let (_, source) = bagscope_reader::encoding::Plan::for_connection_with_source(
        &bag.summary().connections[0],
        &[],
    )
    .unwrap();
    let said = source.to_string();
    assert!(
        said.starts_with("shipped with bagscope (ros1_noetic), in place of the one stored in the recording, which does not parse:"),
        "{said}"
    );
    // A .msg on --msg-path comes before the shipped one.
    let msgs = dir.join("msgs/std_msgs/msg");
    std::fs::create_dir_all(&msgs).unwrap();
    std::fs::write(msgs.join("Float64.msg"), "float64 data\n").unwrap();
    let out = common::bagscope(&[&"echo", &p, &"--json", &"--msg-path", &dir.join("msgs")]).ok();
    assert!(out.contains(r#""data": 2.5"#), "{out}");
    // The same through the library: the search path is an option of the open recording, and
    // a recording opened without it in the same process still takes the shipped one.
    let opts = bagscope_reader::OpenOptions::default().with_msg_path(vec![dir.join("msgs")]);
    let with = bagscope_reader::Bag::open_with(&p, &opts).unwrap();
    let (_, source) = with.plan(0).unwrap();
    assert!(
        source
            .to_string()
            .contains(&msgs.join("Float64.msg").display().to_string()),
        "{source}"
    );
    let (_, source) = bagscope_reader::Bag::open(&p).unwrap().plan(0).unwrap();
    assert!(
        source.to_string().starts_with("shipped with bagscope"),
        "{source}"
    );
}

/// A reader that stops early (`bagscope info run.bag | head`, `echo`): the command ends
/// quietly (echo stops writing, others with SIGPIPE's status, 141), no panic and no backtrace
/// on stderr. `info` of 3,000 topics writes more than a pipe holds.
#[test]
fn a_closed_pipe_ends_the_command_quietly() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let dir = common::temp_dir("closed-pipe");
    let p = dir.join("many.bag");
    let mut w = BagWriter::create(&p, WriteOptions::default()).unwrap();
    for i in 0..3000u64 {
        let c = w.add_connection(common::spec(&format!("/topic_{i:04}"), "std_msgs/Float64"));
        w.write(c, 1_000 + i, &(i as f64).to_le_bytes()).unwrap();
    }
    w.finish().unwrap();
    for verb in ["info", "echo"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_bagscope"))
            .args([verb, p.to_str().unwrap()])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        // The reading end closed after one line (dropped with its reader).
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        assert!(!first.is_empty());
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            matches!(out.status.code(), Some(0 | 141)),
            "{verb}: {:?} {err}",
            out.status
        );
        assert!(!err.contains("panicked"), "{verb}: {err}");
    }
}
