//! The Diagnostics panel on a recording of `diagnostic_msgs/DiagnosticArray` written by
//! bagscope's writer: a row per status name, the level at the playhead, the chosen name's
//! message and key/values, filtering by name and level, a click on a row's strip seeks.

use bagscope_app::Cmd;
use bagscope_ops::reports::diagnostics::DiagLevel;
use bagscope_reader::definition::msg::Dialect;
use bagscope_reader::definition::sources::lookup;
use bagscope_reader::{BagWriter, ConnectionSpec, WriteOptions};
use egui_kittest::kittest::Queryable;

use crate::common;
use crate::*;

const T0: u64 = 1_700_000_000_000_000_000;

fn put_str(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u32).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

/// A status: level, name, message, key/values.
type Status<'a> = (u8, &'a str, &'a str, &'a [(&'a str, &'a str)]);

/// A ROS 1 DiagnosticArray of `statuses`.
fn array(i: u32, t: u64, statuses: &[Status<'_>]) -> Vec<u8> {
    let mut m = Vec::new();
    m.extend_from_slice(&i.to_le_bytes());
    m.extend_from_slice(&((t / 1_000_000_000) as u32).to_le_bytes());
    m.extend_from_slice(&((t % 1_000_000_000) as u32).to_le_bytes());
    put_str(&mut m, "");
    m.extend_from_slice(&(statuses.len() as u32).to_le_bytes());
    for (level, name, msg, values) in statuses {
        m.push(*level);
        put_str(&mut m, name);
        put_str(&mut m, msg);
        put_str(&mut m, "robot-1");
        m.extend_from_slice(&(values.len() as u32).to_le_bytes());
        for (k, v) in *values {
            put_str(&mut m, k);
            put_str(&mut m, v);
        }
    }
    m
}

/// Ten seconds at 1 Hz: `motor` OK, WARN from 4 s, ERROR from 6 s, OK from 8 s; `gps` OK;
/// `camera` OK then STALE from 5 s.
pub fn write_diagnostics(path: &std::path::Path) {
    let (def, _) = lookup("diagnostic_msgs/DiagnosticArray", Dialect::Ros1, &[]).expect("shipped");
    let mut w = BagWriter::create(path, WriteOptions::default()).unwrap();
    let c = w.add_connection(ConnectionSpec {
        topic: "/diagnostics".into(),
        datatype: "diagnostic_msgs/DiagnosticArray".into(),
        md5sum: "60810da900de1dd6ddd437c3503511da".into(),
        message_definition: def,
        callerid: Some("/diagnostic_aggregator".into()),
        latching: false,
    });
    for i in 0..10u32 {
        let t = T0 + u64::from(i) * 1_000_000_000;
        let (ml, mm) = match i {
            4 | 5 => (1, "hot"),
            6 | 7 => (2, "overheated"),
            _ => (0, "ok"),
        };
        let temp = format!("{}", 40 + i * 5);
        let cam = if i >= 5 {
            (3, "no data")
        } else {
            (0, "streaming")
        };
        w.write(
            c,
            t,
            &array(
                i,
                t,
                &[
                    (
                        ml,
                        "motor",
                        mm,
                        &[("temperature", temp.as_str()), ("current", "1.5")],
                    ),
                    (0, "gps", "fix", &[]),
                    (cam.0, "camera", cam.1, &[]),
                ],
            ),
        )
        .unwrap();
    }
    w.finish().unwrap();
}

fn diag_read(a: &App) -> bool {
    a.doc
        .as_ref()
        .is_some_and(|d| matches!(&d.diag.data, Some(Ok(x)) if x.tracks.len() == 3))
}

#[test]
fn the_diagnostics_panel_shows_each_name_over_time() {
    let dir = common::temp_dir("ui-diag");
    let p = dir.join("diag.bag");
    write_diagnostics(&p);
    let mut h = harness(Some(p));
    wait_for(&mut h, "indexing", indexed);
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::D);
    h.run_steps(2);
    wait_for(&mut h, "the diagnostics", diag_read);
    {
        let d = h.state().doc.as_ref().unwrap();
        let Some(Ok(x)) = &d.diag.data else {
            unreachable!()
        };
        let names: Vec<&str> = x.tracks.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["camera", "gps", "motor"]);
        assert_eq!(x.counts(), [21, 2, 2, 5, 0]);
        let motor = &x.tracks[2];
        assert_eq!(
            motor.at(T0 + 6_500_000_000).unwrap().level,
            DiagLevel::Error
        );
    }
    for text in [
        "camera", "gps", "motor", "21 OK", "2 WARN", "2 ERROR", "5 STALE",
    ] {
        assert!(h.query_all_by_label_contains(text).count() >= 1, "{text}");
    }
    // A click in the middle of motor's strip: the playhead goes there (4.5 s), motor is
    // chosen and its status there (WARN, hot, its values) is shown.
    let (a, b) = h.state().doc.as_ref().unwrap().rec.range();
    h.get_by_label("motor over time").click();
    h.run_steps(3);
    let d = h.state().doc.as_ref().unwrap();
    assert_eq!(d.diag.selected.as_deref(), Some("motor"));
    let t = d.nav.playhead;
    let mid = a + (b - a) / 2;
    assert!(t.abs_diff(mid) < (b - a) / 50, "{t} vs {mid}");
    for text in ["hot", "temperature", "60", "current", "robot-1"] {
        assert!(
            h.query_all_by_label_contains(text).count() >= 1,
            "{text} at the playhead"
        );
    }
    // Later, where it overheated.
    h.state_mut().apply(Cmd::SetPlayhead(T0 + 6_500_000_000));
    h.run_steps(2);
    assert!(h.query_all_by_label_contains("overheated").count() >= 1);
    // Filters: by level, then by name.
    h.state_mut().doc.as_mut().unwrap().diag.min_level = 3;
    h.run_steps(2);
    assert_eq!(
        h.query_all_by_label_contains("gps").count(),
        0,
        "gps never left OK"
    );
    h.state_mut().doc.as_mut().unwrap().diag.min_level = 0;
    h.state_mut().doc.as_mut().unwrap().diag.filter = "MOT".into();
    h.run_steps(2);
    assert_eq!(h.query_all_by_label_contains("camera").count(), 0);
}
