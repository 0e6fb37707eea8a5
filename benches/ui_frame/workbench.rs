//! The workbench's panels on a recording written here with bagscope's writer: 200 diagnostic
//! status names at 1 Hz and 20 state fields (text) changing at 10 Hz over ten minutes; frames
//! with 20 state rows under the timeline and the Diagnostics panel open on the 200 names:
//! zoomed out, zooming, playing.

use std::time::{Duration, Instant};

use bagscope_app::Cmd;
use bagscope_reader::definition::msg::Dialect;
use bagscope_reader::definition::sources::lookup;
use bagscope_reader::storage::ros1::writer::ConnectionSpec;

use super::{bench_bag, report, zooming, Bench};

fn put_str(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u32).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

/// A DiagnosticArray of 200 names at second `i`: levels that change now and then.
fn diagnostics(i: u32, t: u64) -> Vec<u8> {
    let mut m = Vec::new();
    m.extend_from_slice(&i.to_le_bytes());
    m.extend_from_slice(&((t / 1_000_000_000) as u32).to_le_bytes());
    m.extend_from_slice(&((t % 1_000_000_000) as u32).to_le_bytes());
    put_str(&mut m, "");
    m.extend_from_slice(&200u32.to_le_bytes());
    for k in 0..200u32 {
        let level = match (i / (10 + k % 23) + k) % 11 {
            7 => 1u8,
            9 => 2,
            10 if k % 5 == 0 => 3,
            _ => 0,
        };
        m.push(level);
        put_str(&mut m, &format!("robot/subsystem_{k:03}"));
        put_str(
            &mut m,
            ["ok", "degraded", "failed", "no data"][level as usize],
        );
        put_str(&mut m, "robot-1");
        m.extend_from_slice(&2u32.to_le_bytes());
        put_str(&mut m, "temperature");
        put_str(&mut m, &format!("{}", 40 + (i + k) % 30));
        put_str(&mut m, "uptime");
        put_str(&mut m, &i.to_string());
    }
    m
}

pub fn workbench(n: usize) {
    const T0: u64 = 1_700_000_000_000_000_000;
    // Ten minutes; one in the short mode (every case run once as a test).
    let seconds: u32 = if n < 300 { 60 } else { 600 };
    let (dir, path, mut w) = bench_bag("workbench", bagscope_reader::Compression::Lz4);
    let (def, _) = lookup("diagnostic_msgs/DiagnosticArray", Dialect::Ros1, &[]).expect("shipped");
    let dc = w.add_connection(ConnectionSpec {
        topic: "/diagnostics".into(),
        datatype: "diagnostic_msgs/DiagnosticArray".into(),
        md5sum: "60810da900de1dd6ddd437c3503511da".into(),
        message_definition: def,
        callerid: Some("/aggregator".into()),
        latching: false,
    });
    let modes: Vec<u32> = (0..20)
        .map(|k| {
            w.add_connection(ConnectionSpec {
                topic: format!("/mode_{k:02}"),
                datatype: "std_msgs/String".into(),
                md5sum: "992ce8a1687cec8c8bd883ec73ca41d1".into(),
                message_definition: "string data\n".into(),
                callerid: Some("/fsm".into()),
                latching: false,
            })
        })
        .collect();
    for i in 0..seconds * 10 {
        let t = T0 + u64::from(i) * 100_000_000;
        if i % 10 == 0 {
            w.write(dc, t, &diagnostics(i / 10, t)).expect("write");
        }
        for (k, &c) in modes.iter().enumerate() {
            let state =
                ["IDLE", "DRIVE", "DOCK", "CHARGE", "FAULT"][((i / (7 + k as u32)) % 5) as usize];
            let mut m = Vec::new();
            put_str(&mut m, state);
            w.write(c, t, &m).expect("write");
        }
    }
    w.finish().expect("finish");
    let mut b = Bench::indexed(&path);
    for k in 0..20 {
        b.app.apply(Cmd::AddStateRow(format!("/mode_{k:02}.data")));
    }
    b.app.apply(Cmd::ShowDiagnostics(true));
    let t0 = Instant::now();
    loop {
        b.frame();
        let d = b.app.doc.as_ref().expect("open");
        let rows = d.states.rows.iter().all(|r| matches!(r.track, Some(Ok(_))));
        if rows && matches!(d.diag.data, Some(Ok(_))) {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(300),
            "the state rows and diagnostics were not read"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    let d = b.app.doc.as_ref().expect("open");
    let names = d
        .diag
        .data
        .as_ref()
        .map_or(0, |r| r.as_ref().map_or(0, |x| x.tracks.len()));
    assert_eq!(names, 200);
    println!(
        "20 state rows and 200 diagnostic names read in {:.2} s while drawing",
        t0.elapsed().as_secs_f64()
    );
    let run = |b: &mut Bench, n: usize| (0..n).map(|_| b.frame()).collect::<Vec<_>>();
    b.app.apply(Cmd::FitAll);
    run(&mut b, 5);
    report("20 state rows + diag 200, zoomed out", run(&mut b, n));
    report("20 state rows + diag 200, zooming", zooming(&mut b, n));
    b.app.apply(Cmd::FitAll);
    b.app.apply(Cmd::TogglePlay);
    run(&mut b, 5);
    report("20 state rows + diag 200, playing", run(&mut b, n));
    drop(b);
    let _ = std::fs::remove_dir_all(&dir);
}
