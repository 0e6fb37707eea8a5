//! Opening recordings (a corpus bag, a rosbag2 folder, a dropped file, the demo), indexing and its
//! cancel, selecting a range and moving the playhead.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bagscope_app::Cmd;
use egui::{Event, Key, Modifiers, PointerButton, Pos2};
use egui_kittest::kittest::Queryable;

use crate::common;
use crate::*;

#[test]
fn opens_a_corpus_bag_inspects_and_steps() {
    let bag = common::corpus_dir().join("rosbag.js/example.bag");
    let mut h = harness(Some(bag));
    wait_for(&mut h, "indexing", indexed);
    // The tree: namespaces and leaves with type, count and rate.
    h.get_by_label("turtle1/");
    assert!(h.query_all_by_label_contains("Pose · 1344").count() >= 1);
    assert!(h.query_all_by_label_contains("tfMessage · 2688").count() >= 1);
    // Select /turtle1/pose on its timeline row label (painted) through the tree's leaf.
    let poses = h.get_all_by_label("pose").count();
    assert_eq!(poses, 2, "turtle1/pose and turtle2/pose");
    h.get_all_by_label("pose").next().unwrap().click();
    h.run_steps(2);
    let d = h.state().doc.as_ref().unwrap();
    let sel = d.nav.selected.unwrap();
    assert_eq!(d.rec.bag.summary().topics[sel].name, "/turtle1/pose");
    // → steps to the topic's first message; the inspector decodes it.
    h.key_press(Key::ArrowRight);
    h.run_steps(2);
    assert_eq!(
        h.state().doc.as_ref().unwrap().nav.playhead,
        1_396_293_888_056_045_055
    );
    wait_for(&mut h, "the inspector", inspected);
    // x and y of the first pose (the turtle starts at the centre; rosbags agrees: tests/corpus/decode.rs).
    assert_eq!(h.get_all_by_label("5.5444446").count(), 2);
    assert!(h.query_all_by_label_contains("message 1 of 1344").count() >= 1);
    h.key_press(Key::ArrowRight);
    h.run_steps(2);
    wait_for(&mut h, "the second message", |a| {
        a.doc.as_ref().is_some_and(|d| {
            d.insp
                .shown
                .as_ref()
                .is_some_and(|i| Some(i.key) == d.insp.key)
        })
    });
    assert!(h.query_all_by_label_contains("message 2 of 1344").count() >= 1);
    h.key_press(Key::ArrowLeft);
    h.run_steps(2);
    assert_eq!(
        h.state().doc.as_ref().unwrap().nav.playhead,
        1_396_293_888_056_045_055
    );
    // End and Home.
    h.key_press(Key::End);
    h.run_steps(1);
    let d = h.state().doc.as_ref().unwrap();
    assert_eq!(d.nav.playhead, d.rec.range().1);
    h.key_press(Key::Home);
    h.run_steps(1);
    let d = h.state().doc.as_ref().unwrap();
    assert_eq!(d.nav.playhead, d.rec.range().0);
    // The Bag info window: its text comes from a thread of its own (it reads chunk headers).
    assert_eq!(h.query_all_by_label_contains("compression:").count(), 0);
    h.state_mut().apply(Cmd::ShowInfo(true));
    let t0 = Instant::now();
    while h
        .query_all_by_label_contains("compression: none [1/1 chunks]")
        .count()
        == 0
    {
        assert!(t0.elapsed() < Duration::from_secs(60), "no Bag info text");
        std::thread::sleep(Duration::from_millis(5));
        h.step();
    }
    assert!(h.query_all_by_label_contains("1344 msgs @").count() >= 1);
    h.check_accessibility();
    h.state_mut().apply(Cmd::ShowRecordings(true));
    h.run_steps(3);
    h.check_accessibility();
}

/// A rosbag2 directory (SQLite, no definitions stored): the tree, the topic details saying the
/// definition was shipped with bagscope, and a CDR message decoded in the inspector.
#[test]
fn opens_a_rosbag2_folder_and_decodes_cdr() {
    let bag = common::corpus2_dir().join("rosbag2/humble_talker");
    let mut h = harness(Some(bag));
    wait_for(&mut h, "indexing", indexed);
    assert!(h.query_all_by_label_contains("Log · 10").count() >= 1);
    h.get_all_by_label("rosout").next().unwrap().click();
    h.run_steps(2);
    let d = h.state().doc.as_ref().unwrap();
    assert_eq!(
        d.rec.bag.summary().topics[d.nav.selected.unwrap()].name,
        "/rosout"
    );
    h.key_press(Key::ArrowRight);
    h.run_steps(2);
    wait_for(&mut h, "the inspector", inspected);
    assert!(
        h.query_all_by_label_contains("minimal_publisher").count() >= 1,
        "the decoded Log's node name"
    );
    // The playhead starts at the first message (a /rosout one): → steps to the second.
    assert!(h.query_all_by_label_contains("message 2 of 10").count() >= 1);
    // The connection's details say where its definition came from.
    h.get_all_by_label_contains("connection 1")
        .next()
        .unwrap()
        .click();
    h.run_steps(2);
    assert!(
        h.query_all_by_label_contains("shipped with bagscope")
            .count()
            >= 1
    );
}

#[test]
fn shift_drag_selects_a_range_and_click_moves_the_playhead() {
    let bag = common::corpus_dir().join("rosbag.js/example.bag");
    let mut h = harness(Some(bag));
    wait_for(&mut h, "indexing", indexed);
    let strip = h.state().doc.as_ref().unwrap().timeline.strip;
    let y = strip.top() + 60.0;
    let x0 = strip.left() + strip.width() * 0.25;
    let x1 = strip.left() + strip.width() * 0.5;
    h.event(Event::PointerMoved(Pos2::new(x0, y)));
    h.event_modifiers(
        Event::PointerButton {
            pos: Pos2::new(x0, y),
            button: PointerButton::Primary,
            pressed: true,
            modifiers: Modifiers::SHIFT,
        },
        Modifiers::SHIFT,
    );
    h.step();
    for i in 1..=10 {
        let x = x0 + (x1 - x0) * i as f32 / 10.0;
        h.event_modifiers(Event::PointerMoved(Pos2::new(x, y)), Modifiers::SHIFT);
        h.step();
    }
    h.event_modifiers(
        Event::PointerButton {
            pos: Pos2::new(x1, y),
            button: PointerButton::Primary,
            pressed: false,
            modifiers: Modifiers::SHIFT,
        },
        Modifiers::SHIFT,
    );
    h.run_steps(2);
    let d = h.state().doc.as_ref().unwrap();
    let (a, b) = d.rec.range();
    let (s0, s1) = d.nav.selection.expect("a selected range");
    let span = (b - a) as f64;
    let f0 = (s0 - a) as f64 / span;
    let f1 = (s1 - a) as f64 / span;
    assert!(
        (f0 - 0.25).abs() < 0.02 && (f1 - 0.5).abs() < 0.02,
        "{f0} {f1}"
    );
    // A plain click puts the playhead there.
    let x = strip.left() + strip.width() * 0.75;
    h.event(Event::PointerMoved(Pos2::new(x, y)));
    h.step();
    for pressed in [true, false] {
        h.event(Event::PointerButton {
            pos: Pos2::new(x, y),
            button: PointerButton::Primary,
            pressed,
            modifiers: Modifiers::NONE,
        });
        h.step();
    }
    h.run_steps(2);
    let d = h.state().doc.as_ref().unwrap();
    let f = (d.nav.playhead - a) as f64 / span;
    assert!((f - 0.75).abs() < 0.02, "playhead at {f}");
    // Space plays, and the playhead moves forward.
    let before = d.nav.playhead;
    h.key_press(Key::Space);
    h.run_steps(5);
    let d = h.state().doc.as_ref().unwrap();
    assert!(d.nav.playing);
    assert!(d.nav.playhead > before);
}

#[derive(Debug)]
struct Dropped(PathBuf);

impl egui::DroppedFile for Dropped {
    fn path(&self) -> &Path {
        &self.0
    }
    fn bytes(&self) -> Result<Vec<u8>, String> {
        std::fs::read(&self.0).map_err(|e| e.to_string())
    }
}

#[test]
fn a_dropped_bag_opens_and_a_non_bag_says_so() {
    let dir = common::temp_dir("ui-drop");
    let p = dir.join("dropped.bag");
    common::write_fixture(&p, bagscope_reader::Compression::Lz4, 2000, 600);
    let mut h = harness(None);
    h.run_steps(2);
    h.get_by_label("Open demo bag");
    h.input_mut()
        .dropped_files
        .push(std::sync::Arc::new(Dropped(p.clone())));
    h.step();
    wait_for(&mut h, "the dropped bag", indexed);
    let d = h.state().doc.as_ref().unwrap();
    assert_eq!(d.rec.path, p);
    assert!(
        h.query_all_by_label_contains("Float64 · 400").count() >= 1,
        "/b has 400 messages"
    );
    // Something that is not a bag: a clear message, and the open bag stays.
    let not_bag = dir.join("notes.bag");
    std::fs::write(&not_bag, b"these are not the bytes of a bag\n").unwrap();
    h.state_mut().apply(Cmd::Open(not_bag));
    wait_for(&mut h, "the error", |a| a.error.is_some());
    let e = h.state().error.clone().unwrap();
    assert!(
        e.contains("notes.bag") && e.contains("not a ROS bag"),
        "{e}"
    );
    assert!(h.query_all_by_label_contains("not a ROS bag").count() >= 1);
    assert!(h.state().doc.is_some(), "the open bag stays open");
}

#[test]
fn indexing_can_be_cancelled() {
    let dir = common::temp_dir("ui-cancel");
    let p = dir.join("big.bag");
    common::write_fixture(&p, bagscope_reader::Compression::None, 1000, 5000);
    let mut h = harness(None);
    h.run_steps(1);
    // Cancel right after the open. The indexer runs on its own thread, so on a loaded machine
    // it can finish this small bag before the cancel lands (the test thread descheduled
    // between the two calls): then open it again. Losing that race five times running is
    // not plausible; a cancel that does not cancel fails on the first try.
    let mut tries = 0;
    loop {
        tries += 1;
        h.state_mut().apply(Cmd::Open(p.clone()));
        h.state_mut().apply(Cmd::CancelIndexing);
        wait_for(&mut h, "the cancellation", |a| {
            a.doc.as_ref().is_some_and(|d| d.rec.index_end.is_some()) && !a.busy()
        });
        let d = h.state().doc.as_ref().unwrap();
        if d.rec.indexed.is_none() || tries == 5 {
            break;
        }
    }
    let d = h.state().doc.as_ref().unwrap();
    assert!(
        d.rec.indexed.is_none(),
        "indexing was never cancelled in {tries} tries"
    );
    assert_eq!(d.rec.index_end, Some(Err("indexing cancelled".into())));
    assert!(
        h.query_all_by_label_contains("Message tables not built")
            .count()
            >= 1
    );
    // The summary is still shown.
    assert!(h.query_all_by_label_contains("Float64 · 1667").count() >= 1);
}

#[test]
fn a_demo_bag_decodes_in_the_inspector() {
    let dir = common::temp_dir("ui-demo");
    let p = dir.join("demo.bag");
    bagscope_ops::demo::write_demo(&p, 20).unwrap();
    let bag = bagscope_reader::Bag::open(&p).unwrap();
    let conn = bag.summary().topic("/battery/voltage").unwrap().connections[0];
    let first = bag.nth_message(conn, 0).unwrap();
    let volts = f32::from_le_bytes(first.data[..4].try_into().unwrap());
    let mut h = harness(Some(p));
    wait_for(&mut h, "the demo bag", indexed);
    assert!(h.query_all_by_label_contains("Imu · 2000").count() >= 1);
    assert!(h.query_all_by_label_contains("LaserScan · 200").count() >= 1);
    // Select the battery, step, read its voltage.
    h.get_by_label("battery/voltage").click();
    h.run_steps(1);
    h.key_press(Key::ArrowRight);
    wait_for(&mut h, "the inspector", inspected);
    h.get_by_label(&format!("{volts:?}"));
}
