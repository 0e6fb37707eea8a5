//! Small behaviours of the command line: `csv -o -` is standard output, an attachment without
//! a media type prints plainly, a ROS 1 `time` field takes `.secs`/`.nsecs` in a field path
//! (as `echo` prints it), a path into a number says what the number is in words, and an output
//! that is a pipe or a device is written in place, and the executable is linked without PIE
//! (its start; see `build.rs`).
#![allow(clippy::unwrap_used)]

use crate::common;

use common::mcap::{channel, file, message, record, schema, string};

#[test]
fn csv_dash_is_standard_output() {
    let d = common::temp_dir("cli-csv-dash");
    let bag = common::corpus_dir().join("rosbag.js/example.bag");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_bagscope"))
        .args(["csv"])
        .arg(&bag)
        .args(["/turtle1/pose.x", "-o", "-"])
        .current_dir(&d)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 1 + 1344);
    assert!(text.starts_with("time_ns,/turtle1/pose.x\n"), "{text}");
    assert_eq!(std::fs::read_dir(&d).unwrap().count(), 0, "no file named -");
}

#[test]
fn an_attachment_without_a_media_type() {
    let d = common::temp_dir("cli-attachment");
    let p = d.join("att.mcap");
    let mut a = 5u64.to_le_bytes().to_vec();
    a.extend_from_slice(&6u64.to_le_bytes());
    a.extend(string("calibration.yaml"));
    a.extend(string(""));
    a.extend_from_slice(&685u64.to_le_bytes());
    a.extend_from_slice(&[b'x'; 685]);
    a.extend_from_slice(&0u32.to_le_bytes()); // no CRC
    std::fs::write(
        &p,
        file(&[
            schema(1, "std_msgs/Float64", "ros1msg", "float64 data\n"),
            channel(1, 1, "/x", "ros1"),
            message(1, 0, 10, &1.0f64.to_le_bytes()),
            record(0x09, &a),
        ]),
    )
    .unwrap();
    let info = common::bagscope(&[&"info", &p]).ok();
    assert!(
        info.contains("attachments: calibration.yaml (685 B, no media type)"),
        "{info}"
    );
}

#[test]
fn a_ros1_time_field_takes_secs_and_nsecs() {
    let bag = common::corpus_dir().join("robot_localization/test1.bag");
    let info = common::bagscope(&[&"info", &bag]).ok();
    assert!(info.contains("/imu/data"), "{info}");
    // echo prints each stamp as {secs, nsecs}: the expectation.
    let echo = common::bagscope(&[&"echo", &bag, &"--json", &"--topic", &"/imu/data"]).ok();
    let want: Vec<(u64, i64, i64)> = echo
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let s = &v["message"]["header"]["stamp"];
            (
                v["time_ns"].as_u64().unwrap(),
                s["secs"].as_i64().unwrap(),
                s["nsecs"].as_i64().unwrap(),
            )
        })
        .collect();
    assert!(!want.is_empty());
    let csv = common::bagscope(&[
        &"csv",
        &bag,
        &"/imu/data.header.stamp.secs",
        &"/imu/data.header.stamp.nsecs",
    ])
    .ok();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("time_ns,/imu/data.header.stamp.secs,/imu/data.header.stamp.nsecs")
    );
    let got: Vec<(u64, i64, i64)> = lines
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            (
                f[0].parse().unwrap(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
            )
        })
        .collect();
    assert_eq!(got, want);
    // Errors name types in words.
    let r = common::bagscope(&[&"csv", &bag, &"/imu/data.header.stamp.x"]);
    assert_ne!(r.code, Some(0));
    assert!(
        r.stderr
            .contains(".header.stamp is a time: its fields are secs and nsecs, not \"x\""),
        "{}",
        r.stderr
    );
    let r = common::bagscope(&[&"csv", &bag, &"/imu/data.header.seq.x"]);
    assert!(
        r.stderr
            .contains(".header.seq is a uint32, it has no field \"x\""),
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("Some("), "{}", r.stderr);
}

/// `-o` naming a pipe (a FIFO, `>(gzip > out.gz)`, `/dev/stdout` on a pipe) or a device
/// (`/dev/null`): written in place, never replaced by a file renamed over it (as root, a
/// rename over /dev/null turns it into a regular file).
#[test]
fn an_output_that_is_a_pipe_is_written_in_place() {
    let d = common::temp_dir("cli-fifo");
    let bag = common::corpus_dir().join("rosbag.js/example.bag");
    let fifo = d.join("out.fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success(), "mkfifo");
    let is_fifo = |p: &std::path::Path| {
        use std::os::unix::fs::FileTypeExt;
        std::fs::symlink_metadata(p).unwrap().file_type().is_fifo()
    };
    type Check<'a> = &'a dyn Fn(&[u8]);
    let runs: [(&[&str], Check); 2] = [
        (&["csv", "/turtle1/pose.x"], &|b: &[u8]| {
            let text = std::str::from_utf8(b).unwrap();
            assert_eq!(text.lines().count(), 1 + 1344);
            assert!(text.starts_with("time_ns,/turtle1/pose.x\n"), "{text}");
        }),
        // MCAP is written front to back, so a pipe can take it.
        (
            &["export", "--format", "mcap", "-t", "/turtle1/pose"],
            &|b: &[u8]| {
                let copy = d.join("copy.mcap");
                std::fs::write(&copy, b).unwrap();
                let read = bagscope_reader::Bag::open(&copy).unwrap();
                assert_eq!(read.summary().message_count, 1344);
                std::fs::remove_file(&copy).unwrap();
            },
        ),
    ];
    for (args, check) in runs {
        let reader = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::read(fifo).unwrap())
        };
        let (first, rest) = args.split_first().unwrap();
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_bagscope"))
            .arg(first)
            .arg(&bag)
            .args(rest)
            .arg("-o")
            .arg(&fifo)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        // Before the reader is joined: a pipe renamed over would leave it waiting forever.
        assert!(is_fifo(&fifo), "{args:?}: the pipe is still a pipe");
        check(&reader.join().unwrap());
        let left: Vec<_> = std::fs::read_dir(&d)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(
            left,
            vec![std::ffi::OsString::from("out.fifo")],
            "{args:?}: nothing else is left"
        );
    }
}

/// On Linux (glibc) the executable is linked position-dependent (`build.rs`): an ELF of type
/// `ET_EXEC`, whose start costs no relative relocations (unless built with `BAGSCOPE_PIE=1`).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[test]
fn the_executable_is_linked_without_pie() {
    use std::io::Read;
    // The ELF header's first 18 bytes: magic, class, data, version, ABI, padding, `e_type`.
    let mut elf = [0u8; 18];
    std::fs::File::open(env!("CARGO_BIN_EXE_bagscope"))
        .and_then(|mut f| f.read_exact(&mut elf))
        .unwrap();
    assert_eq!(&elf[..4], b"\x7fELF");
    let e_type = u16::from_le_bytes([elf[16], elf[17]]);
    let want = if option_env!("BAGSCOPE_PIE") == Some("1") {
        3
    } else {
        2
    };
    assert_eq!(e_type, want, "ELF type (2: ET_EXEC, 3: ET_DYN)");
}
