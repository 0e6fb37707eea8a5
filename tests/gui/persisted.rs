//! What is kept between runs: the settings as one struct, an earlier version's keys, the second
//! cursor and bookmarks per file.

use bagscope_app::Cmd;
use egui::{Event, Key, Modifiers, PointerButton, Pos2};
use egui_kittest::kittest::Queryable;

use crate::common;
use crate::*;

fn persisted_sample() -> bagscope_app::persist::Persisted {
    use bagscope_app::layout::Layout;
    bagscope_app::persist::Persisted {
        recent: vec!["/data/a.bag".into(), "/data/b.mcap".into()],
        msg_path: "/opt/msgs".into(),
        bookmarks: [("/data/a.bag".to_string(), vec![(5, "Bookmark 1".into())])].into(),
        layouts: [(
            "k".to_string(),
            Layout {
                images: vec!["/cam".into()],
                image_overlays: vec![bagscope_app::images::overlay::Settings {
                    annotations: vec!["/det".into()],
                    projected: vec!["/points".into()],
                    tolerance_ms: 5.0,
                    rectify: true,
                    ..Default::default()
                }],
                series: vec!["/imu.linear_acceleration.x".into()],
                header_stamp_series: vec!["/imu.linear_acceleration.x".into()],
                header_stamp_state_rows: vec!["/robot/mode.data".into()],
                log: true,
                scenes: Vec::new(),
                maps: vec![bagscope_app::map::Settings {
                    topics: vec!["/gps/fix".into()],
                    tiles: "/maps/area.pmtiles".into(),
                    center: Some((47.37, 8.55)),
                    zoom: Some(16.5),
                    ..Default::default()
                }],
            },
        )]
        .into(),
    }
}

/// The settings kept between runs are one struct, saved and restored whole.
#[test]
fn persisted_settings_saved_and_loaded_whole() {
    use bagscope_app::persist::Persisted;
    let mut m = MemStorage::default();
    persisted_sample().save(&mut m);
    assert_eq!(Persisted::load(Some(&m)), persisted_sample());
}

/// What an earlier version kept (one storage key a setting) is still read.
#[test]
fn an_earlier_versions_settings_are_read() {
    use bagscope_app::persist::Persisted;
    use eframe::Storage as _;
    let mut m = MemStorage::default();
    let p = persisted_sample();
    m.set_string("recent", "/data/a.bag\n/data/b.mcap".into());
    m.set_string("msg_path", p.msg_path.clone());
    m.set_string("bookmarks", serde_json::to_string(&p.bookmarks).unwrap());
    m.set_string(
        "layouts",
        r#"{"k": {"images": ["/cam"], "series": ["/imu.linear_acceleration.x"], "log": true}}"#
            .into(),
    );
    // An earlier version kept no map panels and no image overlays.
    let mut want = p.clone();
    for l in want.layouts.values_mut() {
        l.maps.clear();
        l.image_overlays.clear();
        l.header_stamp_series.clear();
        l.header_stamp_state_rows.clear();
    }
    assert_eq!(Persisted::load(Some(&m)), want);
}

#[test]
fn second_cursor_and_bookmarks_kept_per_file() {
    let bag = common::corpus_dir().join("rosbag.js/example.bag");
    let mut h = harness(Some(bag.clone()));
    wait_for(&mut h, "indexing", indexed);
    let (a, _) = h.state().doc.as_ref().unwrap().rec.range();
    h.state_mut().apply(Cmd::SetPlayhead(a + 2_000_000_000));
    h.run_steps(1);
    h.key_press(Key::B);
    h.run_steps(2);
    assert_eq!(
        h.state().doc.as_ref().unwrap().nav.bookmarks,
        vec![(a + 2_000_000_000, "Bookmark 1".to_string())]
    );
    assert!(h.query_all_by_label_contains("Bookmarks (1)").count() >= 1);
    // Right-click on the timeline: the second cursor goes there; the bar shows Δt.
    let strip = h.state().doc.as_ref().unwrap().timeline.strip;
    let at = Pos2::new(strip.left() + strip.width() * 0.5, strip.top() + 60.0);
    h.event(Event::PointerMoved(at));
    h.step();
    for pressed in [true, false] {
        h.event(Event::PointerButton {
            pos: at,
            button: PointerButton::Secondary,
            pressed,
            modifiers: Modifiers::NONE,
        });
        h.step();
    }
    h.run_steps(2);
    h.get_by_label("Second cursor here").click();
    h.run_steps(2);
    let d = h.state().doc.as_ref().unwrap();
    let c2 = d.nav.cursor2.expect("the second cursor");
    let dt = c2 as i128 - d.nav.playhead as i128;
    assert!(dt > 0, "right of the playhead");
    let want = format!("Δt = +{}", bagscope_ops::timefmt::period(dt as u64));
    assert!(h.query_all_by_label_contains(&want).count() >= 1, "{want}");
    // Saved, then read back by a new app: the bookmark comes back with the file.
    let mut store = MemStorage::default();
    h.state().save(&mut store);
    let mut h2 = harness_with(Some(&store), Some(bag));
    wait_for(&mut h2, "indexing", indexed);
    assert_eq!(
        h2.state().doc.as_ref().unwrap().nav.bookmarks,
        vec![(a + 2_000_000_000, "Bookmark 1".to_string())]
    );
}
