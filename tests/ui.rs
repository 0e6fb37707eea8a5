//! The real app driven headless with egui_kittest: open a corpus bag and a dropped file, wait
//! for indexing, check the tree, select a topic, step the playhead with the keyboard, check the
//! inspector's decoded value, select a range, cancel indexing, open a non-bag.
#![cfg(feature = "gui")]
#![allow(clippy::unwrap_used)]

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use bagscope::app::{App, Cmd};
use egui::{Event, Key, Modifiers, PointerButton, Pos2};
use egui_kittest::kittest::Queryable;
use egui_kittest::Harness;

fn harness(bag: Option<PathBuf>) -> Harness<'static, App> {
    harness_with(None, bag)
}

/// The app started with `storage` (what a previous run saved).
fn harness_with(
    storage: Option<&dyn eframe::Storage>,
    bag: Option<PathBuf>,
) -> Harness<'static, App> {
    Harness::builder()
        .with_size([1600.0, 1000.0])
        .build_ui_state(|ui, app: &mut App| app.ui(ui), App::new(storage, bag))
}

/// Waits for the export job the window started and returns how it ended.
fn export_result(h: &mut Harness<'_, App>) -> Option<Result<String, String>> {
    wait_for(h, "the export", |a| {
        a.doc
            .as_ref()
            .is_some_and(|d| d.export.job.as_ref().is_some_and(|j| j.result.is_some()))
    });
    h.state()
        .doc
        .as_ref()
        .and_then(|d| d.export.job.as_ref())
        .and_then(|j| j.result.clone())
}

/// Steps frames until `f` holds (the workers run on their own threads).
fn wait_for(h: &mut Harness<'_, App>, what: &str, f: impl Fn(&App) -> bool) {
    let t0 = Instant::now();
    while !f(h.state()) {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(5));
        h.step();
    }
    h.run_steps(2);
}

fn indexed(a: &App) -> bool {
    a.doc.as_ref().is_some_and(|d| d.rec.indexed.is_some())
}

/// The inspector shows the message at the playhead (there is one).
fn inspected(a: &App) -> bool {
    a.doc.as_ref().is_some_and(|d| {
        d.insp.key.is_some()
            && d.insp
                .shown
                .as_ref()
                .is_some_and(|i| Some(i.key) == d.insp.key)
    })
}

/// The index of topic `name` in the open recording.
fn topic_index(h: &Harness<'_, App>, name: &str) -> usize {
    let d = h.state().doc.as_ref().unwrap();
    d.rec
        .bag
        .summary()
        .topics
        .iter()
        .position(|t| t.name == name)
        .unwrap()
}

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
    // x and y of the first pose (the turtle starts at the centre; rosbags agrees: tests/decode.rs).
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
    common::write_fixture(&p, bagscope::Compression::Lz4, 2000, 600);
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
    common::write_fixture(&p, bagscope::Compression::None, 1000, 5000);
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
    bagscope::demo::write_demo(&p, 20).unwrap();
    let bag = bagscope::Bag::open(&p).unwrap();
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

#[test]
fn plot_from_the_inspector_and_export_a_range() {
    let dir = common::temp_dir("ui-plot");
    let p = dir.join("demo.bag");
    bagscope::demo::write_demo(&p, 20).unwrap();
    // The value the inspector will show after one step: the bag starts with the static
    // transform, so → goes to the first imu message.
    let bag = bagscope::Bag::open(&p).unwrap();
    let conn = bag.summary().topic("/imu/data").unwrap().connections[0];
    let plan = bagscope::encoding::Plan::for_connection(&bag.summary().connections[conn]).unwrap();
    let m = bag.nth_message(conn, 0).unwrap();
    let ex = bagscope::encoding::Extractor::new(
        &plan,
        &bagscope::encoding::FieldPath::parse("linear_acceleration.z")
            .unwrap()
            .segments,
    )
    .unwrap();
    let z = ex.extract(&m.data).unwrap().to_string();

    let mut h = harness(Some(p.clone()));
    wait_for(&mut h, "indexing", indexed);
    h.get_by_label("imu/data").click();
    h.run_steps(1);
    h.key_press(Key::ArrowRight);
    wait_for(&mut h, "the inspector", inspected);
    // Click the number: a series of that field is added and fills in.
    h.get_by_label(&z).click();
    h.run_steps(2);
    wait_for(&mut h, "the series", |a| {
        a.doc
            .as_ref()
            .is_some_and(|d| d.plots.series.first().is_some_and(|s| s.done))
    });
    let d = h.state().doc.as_ref().unwrap();
    let s = &d.plots.series[0];
    assert_eq!(s.path, "/imu/data.linear_acceleration.z");
    assert_eq!(s.points.len(), 2000, "20 s at 100 Hz");
    assert!(s.points.iter().all(|p| (p.y - 9.81).abs() < 0.2));
    assert!(h.query_all_by_label_contains("2000 points").count() >= 1);
    // Clicking the plot moves the playhead there.
    let r = h.state().doc.as_ref().unwrap().plots.rects[0];
    let at = egui::Pos2::new(r.left() + r.width() * 0.6, r.center().y);
    h.event(Event::PointerMoved(at));
    h.step();
    for pressed in [true, false] {
        h.event(Event::PointerButton {
            pos: at,
            button: PointerButton::Primary,
            pressed,
            modifiers: Modifiers::NONE,
        });
        h.step();
    }
    h.run_steps(2);
    let d = h.state().doc.as_ref().unwrap();
    let (a, b) = d.rec.range();
    let f = (d.nav.playhead - a) as f64 / (b - a) as f64;
    assert!((0.45..0.75).contains(&f), "playhead at {f} of the bag");
    // Export 5 s of the imu and battery topics through the export window.
    let (a, _) = d.rec.range();
    let range = (a + 5_000_000_000, a + 10_000_000_000);
    h.state_mut().apply(Cmd::SetSelection(Some(range)));
    h.state_mut().apply(Cmd::SetAllVisible(false));
    let s = bag.summary();
    for t in ["/imu/data", "/battery/voltage"] {
        let ti = s.topics.iter().position(|x| x.name == t).unwrap();
        h.state_mut().apply(Cmd::SetVisible(ti, true));
    }
    h.get_by_label("Export…").click();
    h.run_steps(3);
    assert!(
        h.state().doc.as_ref().unwrap().export.open,
        "the export window opens"
    );
    h.check_accessibility();
    let out = dir.join("cut.bag");
    h.state_mut().doc.as_mut().unwrap().export.bag_out = out.display().to_string();
    h.get_by_label("Export recording").click();
    let res = export_result(&mut h);
    // What the source holds in that range, counted independently of the export.
    let tables = bag.tables().unwrap();
    let count = |t: &str| -> u64 {
        s.topic(t)
            .unwrap()
            .connections
            .iter()
            .map(|&c| {
                tables.per_connection[c]
                    .iter()
                    .filter(|e| e.time_ns >= range.0 && e.time_ns < range.1)
                    .count() as u64
            })
            .sum()
    };
    let (nb, ni) = (count("/battery/voltage"), count("/imu/data"));
    assert!(
        (4..=5).contains(&nb) && (499..=501).contains(&ni),
        "{nb} {ni}"
    );
    let want = format!("Wrote {} messages", nb + ni);
    assert!(
        matches!(&res, Some(Ok(m)) if m.contains(&want)),
        "{res:?}, want {want}"
    );
    let cut = bagscope::Bag::open(&out).unwrap();
    let topics: Vec<(&str, u64)> = cut
        .summary()
        .topics
        .iter()
        .map(|t| (t.name.as_str(), t.message_count))
        .collect();
    assert_eq!(topics, [("/battery/voltage", nb), ("/imu/data", ni)]);
}

#[test]
fn the_window_icon_decodes() {
    let icon =
        eframe::icon_data::from_png_bytes(include_bytes!("../crates/bagscope-app/assets/icon.png"))
            .unwrap();
    assert_eq!((icon.width, icon.height), (128, 128));
    assert_eq!(icon.rgba.len(), 128 * 128 * 4);
}

#[test]
fn image_panels_follow_the_playhead() {
    let dir = common::temp_dir("ui-images");
    let p = dir.join("demo.bag");
    bagscope::demo::write_demo(&p, 20).unwrap();
    let bag = bagscope::Bag::open(&p).unwrap();
    let mut h = harness(Some(p));
    wait_for(&mut h, "indexing", indexed);
    // Three camera topics, the laser scan and the lidar's cloud, each with an image button in
    // the tree.
    assert_eq!(h.get_all_by_label("image").count(), 5);
    let topics: Vec<String> = {
        let d = h.state().doc.as_ref().unwrap();
        bagscope::app::images::image_topics(d)
            .into_iter()
            .map(|t| d.rec.bag.summary().topics[t].name.clone())
            .collect()
    };
    let front = topics
        .iter()
        .position(|t| t == "/camera/front/image_raw")
        .unwrap();
    h.get_all_by_label("image").nth(front).unwrap().click();
    h.run_steps(2);
    // Move the playhead to 10.05 s: the panel shows the frame at or before it (5 Hz: 10.0 s).
    let (a, _) = h.state().doc.as_ref().unwrap().rec.range();
    h.state_mut().apply(Cmd::SetPlayhead(a + 10_050_000_000));
    let conn = bag
        .summary()
        .topic("/camera/front/image_raw")
        .unwrap()
        .connections[0];
    let tables = bag.tables().unwrap();
    let want = *tables.per_connection[conn]
        .iter()
        .rfind(|e| e.time_ns <= a + 10_050_000_000)
        .unwrap();
    wait_for(&mut h, "the frame", |app| {
        app.doc.as_ref().is_some_and(|d| {
            d.images.panels[0]
                .frame
                .as_ref()
                .is_some_and(|f| f.key.entry == want)
        })
    });
    let (plan, _) = bag.plan(conn).unwrap();
    let expect =
        bagscope::ops::image::decode_message(&plan, &bag.message(conn, want).unwrap().data)
            .unwrap();
    {
        let f = h.state().doc.as_ref().unwrap().images.panels[0]
            .frame
            .as_ref()
            .unwrap();
        assert_eq!(*f.image, expect);
        assert!(f.decode_ms.is_some());
    }
    assert!(h.query_all_by_label_contains("160×120 rgb8").count() >= 1);
    // Hovering over the image shows the pixel under the cursor.
    let area = h.state().doc.as_ref().unwrap().images.panels[0].area;
    h.event(Event::PointerMoved(area.center()));
    h.run_steps(2);
    let hover = h.state().doc.as_ref().unwrap().images.panels[0]
        .hover
        .clone();
    let hover = hover.expect("a value under the cursor");
    assert!(hover.contains(": r "), "{hover}");
    // Turn it: the panel asks again and shows 120 × 160.
    h.get_by_label("Turn").click();
    wait_for(&mut h, "the turned frame", |app| {
        app.doc.as_ref().is_some_and(|d| {
            d.images.panels[0]
                .frame
                .as_ref()
                .is_some_and(|f| f.look.orient.quarter_turns == 1)
        })
    });
    // Thumbnails on the camera rows and the scan's, made in the background: each shows some.
    wait_for(&mut h, "a thumbnail on every camera row", |app| {
        app.doc
            .as_ref()
            .is_some_and(|d| d.timeline.thumbs.aspect.len() == 4)
    });
    assert!(h.state().doc.as_ref().unwrap().timeline.thumbs.made() >= 4);
    // The depth camera: a single channel drawn through turbo by default over its valid range.
    let depth = topics
        .iter()
        .position(|t| t == "/camera/front/depth/image_raw")
        .unwrap();
    h.get_all_by_label("image").nth(depth).unwrap().click();
    wait_for(&mut h, "the depth frame", |app| {
        app.doc
            .as_ref()
            .is_some_and(|d| d.images.panels.len() == 2 && d.images.panels[1].frame.is_some())
    });
    let d = h.state().doc.as_ref().unwrap();
    let f = d.images.panels[1].frame.as_ref().unwrap();
    assert_eq!(f.cmap, bagscope::ops::image::Colormap::Turbo);
    assert!(f.range.0 > 0.0 && f.range.1 > f.range.0, "{:?}", f.range);
    assert!(h.query_all_by_label_contains("80×60 16UC1").count() >= 1);
    // The laser scan from above, its ranges through turbo.
    let scan = topics.iter().position(|t| t == "/scan").unwrap();
    h.get_all_by_label("image").nth(scan).unwrap().click();
    wait_for(&mut h, "the scan from above", |app| {
        app.doc
            .as_ref()
            .is_some_and(|d| d.images.panels.len() == 3 && d.images.panels[2].frame.is_some())
    });
    let d = h.state().doc.as_ref().unwrap();
    let f = d.images.panels[2].frame.as_ref().unwrap();
    assert!(
        f.image.encoding.starts_with("laser scan, "),
        "{}",
        f.image.encoding
    );
    assert_eq!(f.cmap, bagscope::ops::image::Colormap::Turbo);
}

#[test]
fn the_log_panel_filters_and_moves_the_playhead() {
    // plotjuggler/out.bag: 194 rosout lines (98 INFO, 96 WARN) from /talker and the recorder.
    let bag = common::corpus_dir().join("plotjuggler/out.bag");
    let mut h = harness(Some(bag));
    wait_for(&mut h, "the log", |a| {
        a.doc
            .as_ref()
            .is_some_and(|d| d.rec.indexed.is_some() && d.log.done.is_some())
    });
    assert_eq!(
        h.state()
            .doc
            .as_ref()
            .unwrap()
            .log
            .marks
            .values()
            .map(Vec::len)
            .sum::<usize>(),
        96,
        "a timeline mark per warning"
    );
    h.get_by_label("Log (194)").click();
    // A new window takes a frame to size itself before it is shown.
    h.run_steps(4);
    assert!(h.query_all_by_label_contains("194 of 194 lines").count() >= 1);
    // Hide INFO: the warnings remain.
    h.get_by_label("INFO 98").click();
    h.run_steps(2);
    assert!(h.query_all_by_label_contains("96 of 194 lines").count() >= 1);
    // One node, then a text search.
    h.state_mut().doc.as_mut().unwrap().log.node = "/talker".into();
    h.run_steps(2);
    assert!(h.query_all_by_label_contains("95 of 194 lines").count() >= 1);
    h.state_mut().doc.as_mut().unwrap().log.text = "LOOK AT".into();
    h.run_steps(2);
    assert!(h.query_all_by_label_contains("95 of 194 lines").count() >= 1);
    h.state_mut().doc.as_mut().unwrap().log.text = "nothing like this".into();
    h.run_steps(2);
    assert!(h.query_all_by_label_contains("0 of 194 lines").count() >= 1);
    h.state_mut().doc.as_mut().unwrap().log.text.clear();
    h.run_steps(2);
    // A click on a line moves the playhead to it.
    let (t, label) = {
        let d = h.state().doc.as_ref().unwrap();
        let i = d.log.filtered()[3] as usize;
        let l = &d.log.lines[i];
        let t = l.time_ns;
        let rel = (t - d.rec.range().0) as f64 / 1e9;
        (t, format!("{rel:>9.3}  WARN   /talker:"))
    };
    h.get_all_by_label_contains(&label).next().unwrap().click();
    h.run_steps(2);
    assert_eq!(h.state().doc.as_ref().unwrap().nav.playhead, t);
}

#[test]
fn find_lists_hits_and_steps_the_playhead() {
    let dir = common::temp_dir("ui-find");
    let p = dir.join("demo.bag");
    // 30 s: the robot crosses x = 2 m twice, so that F3 and Shift+F3 have a next and a previous.
    bagscope::demo::write_demo(&p, 30).unwrap();
    let query = "/odom.pose.pose.position.x crosses 2.0";
    // The crossings worked out here from the messages `echo --json` prints (the decoder, not
    // the field extractor Find runs on).
    let expect: Vec<u64> = {
        let out = common::bagscope(&[&"echo", &p, &"--json", &"--topic", &"/odom"]).ok();
        let xs: Vec<(u64, f64)> = out
            .lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                (
                    v["time_ns"].as_u64().unwrap(),
                    v["message"]["pose"]["pose"]["position"]["x"]
                        .as_f64()
                        .unwrap(),
                )
            })
            .collect();
        xs.windows(2)
            .filter(|w| (w[0].1 < 2.0) != (w[1].1 < 2.0))
            .map(|w| w[1].0)
            .collect()
    };
    assert_eq!(expect.len(), 2, "{expect:?}");
    let mut h = harness(Some(p));
    wait_for(&mut h, "indexing", indexed);
    h.get_by_label("Find…").click();
    h.run_steps(4);
    h.check_accessibility();
    h.state_mut().doc.as_mut().unwrap().find.query = query.into();
    h.get_by_label("Find all").click();
    wait_for(&mut h, "the search", |a| {
        a.doc
            .as_ref()
            .is_some_and(|d| d.find.searched.is_some() && !d.find.running())
    });
    let d = h.state().doc.as_ref().unwrap();
    assert_eq!(
        d.find.hits.iter().map(|h| h.time_ns).collect::<Vec<_>>(),
        expect
    );
    let label = format!(
        "{} hit{} for {query}",
        expect.len(),
        if expect.len() == 1 { "" } else { "s" }
    );
    assert!(h.query_all_by_label_contains(&label).count() >= 1);
    // Next moves the playhead to the first hit, F3 to the next, Shift+F3 back.
    h.get_by_label("Next >").click();
    h.run_steps(2);
    assert_eq!(h.state().doc.as_ref().unwrap().nav.playhead, expect[0]);
    {
        h.key_press(Key::F3);
        h.run_steps(2);
        assert_eq!(h.state().doc.as_ref().unwrap().nav.playhead, expect[1]);
        h.event(Event::Key {
            key: Key::F3,
            physical_key: None,
            pressed: true,
            repeat: false,
            modifiers: Modifiers::SHIFT,
        });
        h.run_steps(2);
        assert_eq!(h.state().doc.as_ref().unwrap().nav.playhead, expect[0]);
    }
    // A bad query says what is wrong.
    h.state_mut().doc.as_mut().unwrap().find.query = "/odom.pose > lots".into();
    h.get_by_label("Find all").click();
    h.run_steps(2);
    assert!(h.query_all_by_label_contains("is not a number").count() >= 1);
}

/// An in-memory stand-in for the app's persistent storage.
#[derive(Default)]
struct MemStorage(std::collections::HashMap<String, String>);

impl eframe::Storage for MemStorage {
    fn get_string(&self, key: &str) -> Option<String> {
        self.0.get(key).cloned()
    }
    fn set_string(&mut self, key: &str, value: String) {
        self.0.insert(key.to_string(), value);
    }
    fn remove_string(&mut self, key: &str) {
        self.0.remove(key);
    }
    fn flush(&mut self) {}
}

fn persisted_sample() -> bagscope::app::persist::Persisted {
    use bagscope::app::layout::Layout;
    bagscope::app::persist::Persisted {
        recent: vec!["/data/a.bag".into(), "/data/b.mcap".into()],
        msg_path: "/opt/msgs".into(),
        bookmarks: [("/data/a.bag".to_string(), vec![(5, "Bookmark 1".into())])].into(),
        layouts: [(
            "k".to_string(),
            Layout {
                images: vec!["/cam".into()],
                series: vec!["/imu.linear_acceleration.x".into()],
                log: true,
                scenes: Vec::new(),
            },
        )]
        .into(),
    }
}

/// The settings kept between runs are one struct, saved and restored whole.
#[test]
fn persisted_settings_saved_and_loaded_whole() {
    use bagscope::app::persist::Persisted;
    let mut m = MemStorage::default();
    persisted_sample().save(&mut m);
    assert_eq!(Persisted::load(Some(&m)), persisted_sample());
}

/// What an earlier version kept (one storage key a setting) is still read.
#[test]
fn an_earlier_versions_settings_are_read() {
    use bagscope::app::persist::Persisted;
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
    assert_eq!(Persisted::load(Some(&m)), p);
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
    let want = format!("Δt = +{}", bagscope::timefmt::period(dt as u64));
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

#[test]
fn timing_section_gaps_and_stamp_delay_plot() {
    let dir = common::temp_dir("ui-timing");
    let p = dir.join("demo.bag");
    bagscope::demo::write_demo(&p, 20).unwrap();
    let mut h = harness(Some(p));
    wait_for(&mut h, "indexing", indexed);
    let ti = topic_index(&h, "/odom");
    h.state_mut().apply(Cmd::SelectTopic(Some(ti)));
    // The rate over time on the row, on request: drawn without trouble.
    h.state_mut()
        .doc
        .as_mut()
        .unwrap()
        .timeline
        .rate_rows
        .insert(ti);
    h.run_steps(2);
    h.get_by_label("Timing").click();
    h.run_steps(2);
    wait_for(&mut h, "the gaps", |a| {
        a.doc.as_ref().is_some_and(|d| !d.timing.gaps_busy())
    });
    assert!(
        h.query_all_by_label_contains("median period 20.0 ms")
            .count()
            >= 1
    );
    assert!(h.query_all_by_label_contains("0 gap(s)").count() >= 1);
    h.get_by_label("Plot stamp − receive time").click();
    wait_for(&mut h, "the stamp delays", |a| {
        a.doc.as_ref().is_some_and(|d| {
            d.plots
                .series
                .iter()
                .any(|s| s.done && s.name.contains("stamp"))
        })
    });
    let d = h.state().doc.as_ref().unwrap();
    let s = d
        .plots
        .series
        .iter()
        .find(|s| s.name.contains("stamp"))
        .unwrap();
    assert_eq!(s.name, "/odom stamp − receive time (ms)");
    assert_eq!(s.points.len(), 1000, "20 s at 50 Hz");
    // The demo stamps each message 0.2 to 0.5 ms before it is recorded.
    assert!(
        s.points.iter().all(|p| (-0.51..=-0.19).contains(&p.y)),
        "{:?}",
        &s.points[..3]
    );
}

#[test]
fn a_layout_is_reapplied_to_a_recording_with_the_same_topics() {
    let dir = common::temp_dir("ui-layout");
    let (p1, p2) = (dir.join("run1.bag"), dir.join("run2.bag"));
    bagscope::demo::write_demo(&p1, 10).unwrap();
    bagscope::demo::write_demo(&p2, 12).unwrap();
    let mut h = harness(Some(p1));
    wait_for(&mut h, "indexing", indexed);
    let cam = topic_index(&h, "/camera/front/image_raw");
    h.state_mut().apply(Cmd::OpenImage(cam));
    h.state_mut()
        .apply(Cmd::AddSeries("/battery/voltage.data".into()));
    h.state_mut().apply(Cmd::ShowLog(true));
    h.state_mut().apply(Cmd::OpenScene(None));
    {
        let sc = &mut h.state_mut().doc.as_mut().unwrap().scene.panels[0].settings;
        sc.fixed = "odom".into();
        sc.layers[0].decay_s = 2.0;
        sc.camera.top = true;
    }
    h.run_steps(2);
    // Every widget of the log window and the plot's series list can be reached by name (the
    // log's node list had none: the harness failed whenever it settled with the log open).
    h.check_accessibility();
    let mut store = MemStorage::default();
    h.state().save(&mut store);
    // The second run, in a new app: the same panels, plot and log come back.
    let mut h2 = harness_with(Some(&store), Some(p2));
    wait_for(&mut h2, "the layout", |a| {
        a.doc
            .as_ref()
            .is_some_and(|d| d.rec.indexed.is_some() && d.plots.series.iter().any(|s| s.done))
    });
    let d = h2.state().doc.as_ref().unwrap();
    let s = d.rec.bag.summary();
    let images: Vec<&str> = d
        .images
        .panels
        .iter()
        .map(|p| s.topics[p.topic].name.as_str())
        .collect();
    assert_eq!(images, ["/camera/front/image_raw"]);
    assert_eq!(d.plots.series[0].path, "/battery/voltage.data");
    assert_eq!(d.plots.series[0].points.len(), 12, "12 s at 1 Hz");
    assert!(d.log.open);
    let sc = &d.scene.panels[0].settings;
    assert_eq!(
        (sc.fixed.as_str(), sc.layers[0].decay_s, sc.camera.top),
        ("odom", 2.0, true)
    );
    assert_eq!(sc.layers.len(), 5);
}

#[test]
fn two_recordings_on_one_timeline_with_an_offset() {
    let dir = common::temp_dir("ui-two");
    let (r1, r2) = (dir.join("run1.bag"), dir.join("run2.bag"));
    bagscope::demo::write_demo(&r1, 10).unwrap();
    bagscope::demo::write_demo(&r2, 12).unwrap();
    let mut h = harness(None);
    h.state_mut().apply(Cmd::OpenMany(vec![
        bagscope::merge::Part {
            path: r1.clone(),
            offset_ns: 0,
        },
        bagscope::merge::Part {
            path: r2.clone(),
            offset_ns: 30_000_000_000,
        },
    ]));
    wait_for(&mut h, "indexing", indexed);
    // Grouped per recording in the tree; the timeline covers both.
    h.get_by_label("run1/");
    h.get_by_label("run2/");
    let (a, b) = h.state().doc.as_ref().unwrap().rec.range();
    assert!(b - a > 40_000_000_000, "42 s: run2 starts 30 s later");
    assert!(h.query_all_by_label_contains("Recordings (2)").count() >= 1);
    // Align the starts in the Recordings window: the timeline shrinks to the longer run.
    h.run_steps(3);
    h.get_by_label("Align starts").click();
    wait_for(&mut h, "the aligned recordings", |app| {
        app.doc.as_ref().is_some_and(|d| {
            d.rec.indexed.is_some() && d.rec.parts.iter().all(|p| p.offset_ns != 30_000_000_000)
        })
    });
    let (a, b) = h.state().doc.as_ref().unwrap().rec.range();
    assert!(
        b - a < 13_000_000_000,
        "aligned: {} s",
        (b - a) as f64 / 1e9
    );
    // The same field of both runs on one plot.
    h.state_mut()
        .apply(Cmd::AddSeries("/run1/battery/voltage.data".into()));
    h.state_mut()
        .apply(Cmd::AddSeries("/run2/battery/voltage.data".into()));
    wait_for(&mut h, "both series", |app| {
        app.doc
            .as_ref()
            .is_some_and(|d| d.plots.series.len() == 2 && d.plots.series.iter().all(|s| s.done))
    });
    let d = h.state().doc.as_ref().unwrap();
    assert_eq!(d.plots.series[0].plot, d.plots.series[1].plot);
    assert_eq!(
        (
            d.plots.series[0].points.len(),
            d.plots.series[1].points.len()
        ),
        (10, 12)
    );
    assert!((d.plots.series[0].points[0].x - d.plots.series[1].points[0].x).abs() < 0.01);
}

/// Opens an image panel on every image topic of `bag` through the app and returns, per topic,
/// what the panel shows.
fn panel_images(bag: PathBuf) -> Vec<(String, bagscope::ops::image::Image)> {
    let mut h = harness(Some(bag));
    wait_for(&mut h, "indexing", indexed);
    let topics = bagscope::app::images::image_topics(h.state().doc.as_ref().unwrap());
    let mut out = Vec::new();
    for ti in topics {
        // One panel at a time, as a user would look at each camera.
        h.state_mut().doc.as_mut().unwrap().images.panels.clear();
        h.state_mut().apply(Cmd::OpenImage(ti));
        wait_for(&mut h, "the panel's frame", |a| {
            a.doc.as_ref().is_some_and(|d| {
                d.images
                    .panels
                    .first()
                    .is_some_and(|p| p.frame.is_some() || p.error.is_some())
            })
        });
        let d = h.state().doc.as_ref().unwrap();
        let p = &d.images.panels[0];
        let name = d.rec.bag.summary().topics[ti].name.clone();
        match &p.frame {
            Some(f) => out.push((name, (*f.image).clone())),
            None => panic!("{name}: {:?}", p.error),
        }
    }
    out
}

#[test]
fn image_panels_decode_every_encoding_family() {
    let (_dir, bag) = common::images::fixture_bag("ui-image-families");
    let shown = panel_images(bag);
    let want = common::images::fixtures();
    for (name, _, _, w, hh, pixels) in want {
        let topic = format!("/cam/{name}");
        let (_, img) = shown
            .iter()
            .find(|(t, _)| *t == topic)
            .unwrap_or_else(|| panic!("no panel for {topic}"));
        assert_eq!((img.width, img.height), (w, hh), "{topic}");
        match (&img.pixels, &pixels) {
            (bagscope::ops::image::Pixels::F32(a), bagscope::ops::image::Pixels::F32(b)) => {
                assert!(a
                    .iter()
                    .zip(b)
                    .all(|(x, y)| x == y || (x.is_nan() && y.is_nan())))
            }
            (a, b) => assert_eq!(a, b, "{topic}"),
        }
    }
    // The occupancy grid, as a map with +y up.
    let (_, map) = shown.iter().find(|(t, _)| t == "/map").unwrap();
    assert_eq!(
        map.pixels,
        bagscope::ops::image::Pixels::Occupancy(common::images::MAP_SHOWN.to_vec())
    );
    let (_, jpeg) = shown.iter().find(|(t, _)| t == "/cam/jpeg").unwrap();
    assert_eq!(
        (jpeg.width, jpeg.height, jpeg.encoding.as_str()),
        (32, 16, "jpeg")
    );
    // Real ones: a fiducials camera frame (CompressedImage jpeg), ros_numpy's raw rgb8 Image and
    // png, and ROS 2 mono8 Images from a rosbag2 SQLite recording.
    let dims = |v: &[(String, bagscope::ops::image::Image)]| -> Vec<(String, u32, u32, String)> {
        v.iter()
            .map(|(t, i)| (t.clone(), i.width, i.height, i.encoding.clone()))
            .collect()
    };
    let shown = panel_images(common::corpus_dir().join("fiducials/aruco_images.bag"));
    assert_eq!(
        dims(&shown),
        [(
            "/raspicam_node/image/compressed".to_string(),
            1280,
            960,
            "jpeg".to_string()
        )]
    );
    let shown = panel_images(common::corpus_dir().join("ros_numpy/test.bag"));
    assert_eq!(
        dims(&shown),
        [
            ("/compressedimage".to_string(), 2, 2, "png".to_string()),
            ("/image".to_string(), 360, 240, "rgb8".to_string()),
            (
                "/occupancygrid".to_string(),
                30,
                30,
                "occupancy grid".to_string()
            ),
            (
                "/pointcloud".to_string(),
                400,
                400,
                "point cloud, 100 of 100 points".to_string()
            )
        ]
    );
    let shown = panel_images(common::corpus2_dir().join("ros2bag_tools/images.bag"));
    assert_eq!(
        dims(&shown),
        [("/image".to_string(), 2, 2, "mono8".to_string())]
    );
}

/// A ROS 2 recording exported through the export window into a ROS 1 bag with "ROS 2 messages
/// to ROS 1" ticked: the bag holds the talker's strings with their ROS 1 type; /rosout, which
/// has no ROS 1 type, is left out and said so.
#[test]
fn export_window_converts_ros2_to_a_ros1_bag() {
    let dir = common::temp_dir("ui-to-ros1");
    let mut h = harness(Some(common::corpus2_dir().join("rosbag2/humble_talker")));
    wait_for(&mut h, "indexing", indexed);
    h.get_by_label("Export…").click();
    h.run_steps(3);
    h.get_by_label("ROS 1 bag").click();
    h.run_steps(2);
    h.get_by_label_contains("ROS 2 messages to ROS 1").click();
    h.run_steps(2);
    let out = dir.join("talker.bag");
    h.state_mut().doc.as_mut().unwrap().export.bag_out = out.display().to_string();
    h.get_by_label("Export recording").click();
    let res = export_result(&mut h);
    assert!(
        matches!(&res, Some(Ok(m)) if m.contains("/rosout")),
        "the result names what was left out: {res:?}"
    );
    let b = bagscope::Bag::open(&out).unwrap();
    let s = b.summary();
    let t = s.topic("/topic").expect("the talker's topic");
    assert_eq!(t.message_count, 10);
    assert_eq!(t.datatype, "std_msgs/String");
    assert!(s.topic("/rosout").is_none());
    assert!(s.connections.iter().all(|c| c.encoding == "ros1"));
}

/// The export window's rosbag2 output split by time: the split fields show for rosbag2 formats,
/// and a recording exported with a third of its span per file comes out in three or more
/// storage files holding every message.
#[test]
fn export_window_splits_a_rosbag2_output_by_time() {
    let dir = common::temp_dir("ui-split");
    let src = common::corpus2_dir().join("rosbag2/humble_talker");
    let mut h = harness(Some(src.clone()));
    wait_for(&mut h, "indexing", indexed);
    h.get_by_label("Export…").click();
    h.run_steps(3);
    assert!(
        h.query_by_label("split every").is_none(),
        "split shown for a bag"
    );
    h.get_by_label("rosbag2 (SQLite)").click();
    h.run_steps(2);
    h.get_by_label("split every");
    let (a, z, n) = {
        let s = h.state().doc.as_ref().unwrap().rec.bag.summary();
        (s.start_ns.unwrap(), s.end_ns.unwrap(), s.message_count)
    };
    let out = dir.join("talker_split");
    {
        let e = &mut h.state_mut().doc.as_mut().unwrap().export;
        e.bag_out = out.display().to_string();
        e.split_s = ((z - a) / 3 + 1) as f64 / 1e9;
    }
    h.get_by_label("Export recording").click();
    let res = export_result(&mut h);
    assert!(matches!(res, Some(Ok(_))), "{res:?}");
    let b = bagscope::Bag::open(&out).unwrap();
    assert!(
        b.summary().files.len() >= 3,
        "{} files",
        b.summary().files.len()
    );
    assert_eq!(b.summary().message_count, n);
}

#[test]
fn a_sqlite_recording_shows_its_topics_before_its_rows_are_read() {
    use bagscope::app::worker::{loader, LoadEvent};
    let src = common::corpus2_dir().join("rosbag2/humble_talker");
    let quick = bagscope::Bag::open(&src).unwrap().quick_summary().clone();
    assert!(
        quick.rows_pending,
        "humble_talker opens from its metadata.yaml"
    );
    // The loader sends what it knows before reading the rows, then the opened recording.
    let mut l = loader(
        bagscope::merge::parts_of(std::slice::from_ref(&src)),
        false,
        &egui::Context::default(),
    );
    let mut next = || l.wait(Duration::from_secs(60)).unwrap();
    match next() {
        LoadEvent::Preview(s) => {
            assert!(s.rows_pending);
            assert_eq!(s.topics, quick.topics);
        }
        _ => panic!("the first event is not the preview"),
    }
    match next() {
        LoadEvent::Opened { bag, .. } => {
            let s = bag.summary();
            assert!(!s.rows_pending && !s.chunks.is_empty());
            assert_eq!(s.message_count, quick.message_count);
        }
        _ => panic!("the preview is not followed by the opened recording"),
    }
    l.cancel();
    // The app draws the preview: topics, types, counts, and that the rows are being read.
    let mut h = harness(None);
    h.state_mut().preview = Some(std::sync::Arc::new(quick.clone()));
    h.run_steps(2);
    h.get_by_label_contains("Reading the rows");
    h.get_by_label_contains("as metadata.yaml counts them");
    for t in &quick.topics {
        h.get_by_label(&t.name);
        assert!(
            h.get_all_by_label(&t.message_count.to_string())
                .next()
                .is_some(),
            "{}: no count",
            t.name
        );
    }
}

#[test]
fn a_message_in_an_encoding_bagscope_does_not_decode_shows_its_text_and_bytes() {
    use common::mcap::{channel, file, message, schema};
    let dir = common::temp_dir("ui-json");
    let p = dir.join("json.mcap");
    let json = b"{\"mmsi\": 209014000, \"speed\": 8.5}";
    std::fs::write(
        &p,
        file(&[
            schema(1, "std_msgs/Float64", "ros1msg", "float64 data\n"),
            channel(1, 1, "/ros1", "ros1"),
            channel(2, 0, "/ais", "json"),
            message(1, 1, 1_000_000_000, &2.5f64.to_le_bytes()),
            message(2, 2, 1_500_000_000, json),
        ]),
    )
    .unwrap();
    let mut h = harness(Some(p));
    wait_for(&mut h, "indexing", indexed);
    let ti = topic_index(&h, "/ais");
    h.state_mut().apply(Cmd::SelectTopic(Some(ti)));
    h.state_mut().apply(Cmd::SetPlayhead(1_500_000_000));
    h.run_steps(2);
    wait_for(&mut h, "the inspector", inspected);
    // Said plainly, not as an error; the JSON readable above the hex view.
    h.get_by_label_contains("Encoding json: not decoded");
    assert_eq!(h.query_all_by_label_contains("Cannot decode").count(), 0);
    h.get_by_label_contains("Text in it (one run)");
    h.get_by_label("{\"mmsi\": 209014000, \"speed\": 8.5}");
    h.get_by_label_contains("00000000  7b 22 6d 6d");
}

#[test]
fn a_namespace_folds_and_unfolds_in_the_tree() {
    let bag = common::corpus_dir().join("rosbag.js/example.bag");
    let mut h = harness(Some(bag));
    wait_for(&mut h, "indexing", indexed);
    assert_eq!(h.get_all_by_label("pose").count(), 2);
    h.get_by_label("turtle1/").click();
    h.run_steps(2);
    assert_eq!(
        h.get_all_by_label("pose").count(),
        1,
        "turtle1/pose folded away"
    );
    h.get_by_label("turtle1/").click();
    h.run_steps(2);
    assert_eq!(h.get_all_by_label("pose").count(), 2);
    // The filter keeps the folding and shows what matches.
    h.state_mut().doc.as_mut().unwrap().tree.filter = "turtle2".into();
    h.run_steps(2);
    assert_eq!(h.get_all_by_label("pose").count(), 1);
}

#[test]
fn the_tf_window_follows_the_playhead() {
    let dir = common::temp_dir("ui-tf");
    let p = dir.join("demo.bag");
    bagscope::demo::write_demo(&p, 20).unwrap();
    let mut h = harness(Some(p.clone()));
    wait_for(&mut h, "indexing", indexed);
    let a = h.state().doc.as_ref().unwrap().rec.range().0;
    h.state_mut().apply(Cmd::SetPlayhead(a + 10_000_000_000));
    h.get_by_label("TF").click();
    h.run_steps(2);
    wait_for(&mut h, "the transforms", |app| {
        app.doc.as_ref().is_some_and(|d| d.tf.history.is_some())
    });
    // The tree at +10 s and the laser's pose in the tree's root (map), as `bagscope tf`
    // gives them.
    for f in ["base_link", "laser"] {
        assert!(h.query_all_by_label(f).count() >= 1, "{f}");
    }
    assert!(
        h.query_all_by_label_contains("Transform tree at +10.000 s (4 frames")
            .count()
            >= 1
    );
    let cli = common::bagscope(&[
        &"tf",
        &p,
        &"--at",
        &"+10",
        &"--target",
        &"map",
        &"--source",
        &"laser",
    ])
    .ok();
    // The CLI's 4 decimals rounded to the window's 3.
    let x: f64 = cli
        .split("xyz [")
        .nth(1)
        .unwrap()
        .split(',')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    h.get_by_label_contains(&format!("xyz [{x:.3}, "));
    // The link to the transform's time moves the playhead there (at most one period back).
    let before = h.state().doc.as_ref().unwrap().nav.playhead;
    h.get_all_by_label_contains(" ago").next().unwrap().click();
    h.run_steps(2);
    let after = h.state().doc.as_ref().unwrap().nav.playhead;
    assert!(
        after <= before && before - after <= 20_000_000,
        "{before} -> {after}"
    );
    // The laser's track in odom, as three plot series over the recording (50 Hz for 20 s).
    h.get_by_label("Plot x, y, yaw over time").click();
    wait_for(&mut h, "the track", |app| {
        app.doc
            .as_ref()
            .is_some_and(|d| !d.tf.tracking() && d.plots.series.len() == 3)
    });
    let d = h.state().doc.as_ref().unwrap();
    let names: Vec<&str> = d.plots.series.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "laser in map: x (m)",
            "laser in map: y (m)",
            "laser in map: yaw (°)"
        ]
    );
    assert!(
        d.plots.series.iter().all(|s| s.points.len() == 1000),
        "one a transform"
    );
    // A recording without transforms has no TF button.
    let mut h = harness(Some(common::corpus_dir().join("ros_numpy/test.bag")));
    wait_for(&mut h, "indexing", indexed);
    assert!(h.query_by_label("TF").is_none());
}

#[test]
fn a_protobuf_message_decodes_in_the_inspector() {
    let mut h = harness(Some(common::corpus2_dir().join("keelson/test.mcap")));
    wait_for(&mut h, "indexing", indexed);
    let ti = topic_index(&h, "rise/v0/sjofartsverket/pubsub/raw/ais/json/209014000/3");
    let end = h.state().doc.as_ref().unwrap().rec.range().1;
    h.state_mut().apply(Cmd::SelectTopic(Some(ti)));
    h.state_mut().apply(Cmd::SetPlayhead(end));
    h.run_steps(2);
    wait_for(&mut h, "the inspector", inspected);
    // Field by field from the FileDescriptorSet; the bytes field's JSON shown as text.
    h.get_by_label("timestamp");
    h.get_by_label("google.protobuf.Timestamp");
    h.get_by_label("seconds");
    // The Timestamp's date beside it, read here from the message's own fields.
    let stamp_ns = {
        let d = h.state().doc.as_ref().unwrap();
        let got = d.insp.shown.as_ref().unwrap();
        let (plan, node) = got.decoded.as_ref().unwrap();
        let ts = node.field(&plan.def, "timestamp").unwrap();
        let secs = ts
            .field(&plan.def, "seconds")
            .unwrap()
            .value
            .as_f64()
            .unwrap();
        let nanos = ts
            .field(&plan.def, "nanos")
            .unwrap()
            .value
            .as_f64()
            .unwrap();
        secs as u64 * 1_000_000_000 + nanos as u64
    };
    h.get_by_label(&format!("{} UTC", bagscope::timefmt::date(stamp_ns)));
    assert!(
        h.query_all_by_label_contains("\\\"mmsi\\\":209014000")
            .count()
            >= 1
    );
    assert_eq!(h.query_all_by_label_contains("not decoded").count(), 0);
}

#[test]
fn a_json_field_of_a_topic_without_a_slash_plots_from_the_inspector() {
    let mut h = harness(Some(common::corpus2_dir().join("lichtblick/example.mcap")));
    wait_for(&mut h, "indexing", indexed);
    let ti = topic_index(&h, "mouse");
    let a = h.state().doc.as_ref().unwrap().rec.range().0;
    h.state_mut().apply(Cmd::SelectTopic(Some(ti)));
    h.state_mut().apply(Cmd::SetPlayhead(a));
    h.run_steps(2);
    wait_for(&mut h, "the inspector", inspected);
    // The first event's x, decoded from the JSON Schema's `number`.
    h.get_by_label("1511.0").click();
    h.run_steps(2);
    wait_for(&mut h, "the series", |a| {
        a.doc
            .as_ref()
            .is_some_and(|d| d.plots.series.first().is_some_and(|s| s.done))
    });
    let d = h.state().doc.as_ref().unwrap();
    let s = &d.plots.series[0];
    assert_eq!(s.path, "/mouse.clientX");
    assert_eq!(s.points.len(), 111, "{:?}", s.note);
}

/// "Open URL…": a location typed in the bar's menu opens a recording served over HTTP (from a
/// server on 127.0.0.1), shown by its URL.
#[cfg(feature = "remote")]
#[test]
fn open_url_opens_a_recording_over_http() {
    let dir = common::temp_dir("ui-url");
    common::write_fixture(&dir.join("run.bag"), bagscope::Compression::Lz4, 2000, 600);
    let srv = common::http::serve(dir.to_path_buf());
    let url = format!("{}/run.bag", srv.url);
    let mut h = harness(None);
    h.run_steps(2);
    h.get_by_label("Open URL…").click();
    h.run_steps(2);
    h.get_by_role(egui::accesskit::Role::TextInput).focus();
    h.run_steps(1);
    h.get_by_role(egui::accesskit::Role::TextInput)
        .type_text(&url);
    h.run_steps(1);
    assert_eq!(h.state().url_input, url);
    h.get_by_label("Open").click();
    h.step();
    wait_for(&mut h, "the recording over HTTP", |a| {
        assert_eq!(a.error, None);
        indexed(a)
    });
    let d = h.state().doc.as_ref().unwrap();
    assert_eq!(d.rec.path, PathBuf::from(&url));
    assert!(
        h.query_all_by_label_contains("Float64 · 400").count() >= 1,
        "/b has 400 messages"
    );
    assert!(srv.state.requests.load(std::sync::atomic::Ordering::SeqCst) > 0);
}

/// A ROS 1 bag of `/speed` (std_msgs/Float64): 0.0, 1.0, ... 19.0 every half second from t0.
fn speed_bag(dir: &Path) -> (PathBuf, u64) {
    let bag = dir.join("speed.bag");
    let mut w = bagscope::BagWriter::create(&bag, bagscope::WriteOptions::default()).unwrap();
    let c = w.add_connection(bagscope::ConnectionSpec {
        topic: "/speed".into(),
        datatype: "std_msgs/Float64".into(),
        md5sum: "fdb28210bfa9d7c91146260178d9a584".into(),
        message_definition: "float64 data\n".into(),
        ..Default::default()
    });
    let t0 = 1_700_000_000_000_000_000u64;
    for i in 0..20u64 {
        w.write(c, t0 + i * 500_000_000, &(i as f64).to_le_bytes())
            .unwrap();
    }
    w.finish().unwrap();
    (bag, t0)
}

/// The Publish window against a real ROS 1 graph (Debian's roscore, `rostopic echo` as the
/// subscriber): every toggle starts off; a topic turned on publishes the message at the
/// playhead when seeking while paused and the messages the playhead passes while playing;
/// the status line says where it publishes and how many subscribers the topic has.
#[test]
fn publish_toggle_sends_what_the_playhead_passes_to_a_live_ros1_subscriber() {
    let dir = common::temp_dir("ui-publish");
    let (bag, t0) = speed_bag(&dir);

    let m = common::ros1::Master::start(&dir);
    let mut echo = m.command("rostopic");
    echo.args(["echo", "/speed"]);
    let _echo = common::ros1::spawn(echo, "rostopic echo", &dir.join("echo.log"));
    let echoed = || std::fs::read_to_string(dir.join("echo.log")).unwrap_or_default();

    let mut h = harness(Some(bag));
    wait_for(&mut h, "indexing", indexed);
    h.get_by_label("Publish…").click();
    h.run_steps(4);
    let d = h.state().doc.as_ref().unwrap();
    assert!(d.publish.open && d.publish.on.is_empty() && !d.publish.active());
    h.get_by_label_contains("every toggle is off");
    h.state_mut().doc.as_mut().unwrap().publish.master = m.uri.clone();
    h.get_by(|n| {
        n.role() == egui::accesskit::Role::CheckBox && n.label().as_deref() == Some("/speed")
    })
    .click();
    h.run_steps(2);
    // rostopic echo finds the new publisher and subscribes.
    wait_for(&mut h, "rostopic echo to subscribe", |a| {
        let p = &a.doc.as_ref().unwrap().publish;
        p.status
            .as_ref()
            .is_some_and(|s| s.topics.get(&0).is_some_and(|(subs, _)| *subs >= 1))
    });
    h.get_by_label_contains("1 topic(s), 1 subscriber(s)");
    h.get_by_label_contains(&format!("Publishing to the ROS 1 master at {}", m.uri));
    // Seeking while paused publishes the message at the playhead: 3.0 (at 1.5 s).
    h.state_mut().apply(Cmd::SetPlayhead(t0 + 1_700_000_000));
    let t = Instant::now();
    while !echoed().contains("data: 3.0") {
        assert!(t.elapsed() < Duration::from_secs(20), "{}", echoed());
        h.step();
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!echoed().contains("data: 4.0"), "{}", echoed());
    // Playing publishes the messages the playhead passes, in order.
    h.state_mut().apply(Cmd::SetSpeed(4.0));
    h.state_mut().apply(Cmd::TogglePlay);
    let t = Instant::now();
    while !echoed().contains("data: 6.0") {
        assert!(t.elapsed() < Duration::from_secs(20), "{}", echoed());
        h.step();
        std::thread::sleep(Duration::from_millis(20));
    }
    let log = echoed();
    let (i4, i5, i6) = (
        log.find("data: 4.0").unwrap(),
        log.find("data: 5.0").unwrap(),
        log.find("data: 6.0").unwrap(),
    );
    assert!(i4 < i5 && i5 < i6, "{log}");
    // Turned off, nothing more is sent.
    h.state_mut().apply(Cmd::TogglePlay);
    h.state_mut().apply(Cmd::PublishDisconnect);
    h.run_steps(2);
    assert!(!h.state().doc.as_ref().unwrap().publish.active());
}

/// DDS discovers by multicast: a ROS 2 test runs itself again (this test binary, test `name`
/// alone) inside a network namespace of its own with only loopback, and fails if it cannot
/// make one (needs root). True in the outer run, where the test has then been run; false
/// inside, where the test goes on.
fn rerun_in_own_netns(name: &str) -> bool {
    if std::env::var_os("BAGSCOPE_TEST_IN_NETNS").is_some() {
        return false;
    }
    common::ros2::require_peers();
    let out = std::process::Command::new("unshare")
        .args([
            "--net",
            "--",
            "bash",
            "-c",
            "ip link set lo up && ip link set lo multicast on && exec \"$@\"",
            "bash",
        ])
        .arg(std::env::current_exe().unwrap())
        .args(["--exact", name, "--nocapture", "--test-threads", "1"])
        .env("BAGSCOPE_TEST_IN_NETNS", "1")
        .env("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        .env("RMW_IMPLEMENTATION", "rmw_fastrtps_cpp")
        .output()
        .expect("unshare runs");
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success() && all.contains("1 passed"),
        "the test in a network namespace of its own (needs root) failed:\n{all}"
    );
    true
}

/// The Publish window onto a ROS 2 domain, with an rclpy subscriber (Fast DDS) as the peer:
/// the test runs itself again inside a network namespace of its own with only loopback (DDS
/// discovers by multicast), where a topic turned on publishes the message at the playhead
/// when seeking while paused and those the playhead passes while playing, converted from the
/// ROS 1 recording to ROS 2; the status line says the domain and the subscriber.
#[test]
fn publish_toggle_sends_to_a_live_ros2_subscriber() {
    if rerun_in_own_netns("publish_toggle_sends_to_a_live_ros2_subscriber") {
        return;
    }
    let dir = common::temp_dir("ui-publish-ros2");
    let (bag, t0) = speed_bag(&dir);
    let got_path = dir.join("got.jsonl");
    let mut sub = std::process::Command::new("python3")
        .arg(common::ros2::peer())
        .args(["sub"])
        .arg(&got_path)
        .args([
            "/speed=std_msgs/msg/Float64",
            "--count",
            "4",
            "--timeout",
            "60",
        ])
        .env("ROS_LOG_DIR", dir.join("roslog"))
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("the rclpy subscriber starts");

    let mut h = harness(Some(bag));
    wait_for(&mut h, "indexing", indexed);
    h.get_by_label("Publish…").click();
    h.run_steps(4);
    h.get_by_label("ROS 2").click();
    h.run_steps(2);
    assert!(h.state().doc.as_ref().unwrap().publish.ros2);
    h.get_by(|n| {
        n.role() == egui::accesskit::Role::CheckBox && n.label().as_deref() == Some("/speed")
    })
    .click();
    h.run_steps(2);
    wait_for(&mut h, "the rclpy subscriber to match", |a| {
        let p = &a.doc.as_ref().unwrap().publish;
        p.status
            .as_ref()
            .is_some_and(|s| s.topics.get(&0).is_some_and(|(subs, _)| *subs >= 1))
    });
    h.get_by_label_contains(
        "Publishing to ROS 2 domain 0 (localhost only): 1 topic(s), 1 subscriber(s)",
    );
    // Discovery is two-sided: a moment for the subscriber to match this writer too.
    std::thread::sleep(Duration::from_secs(1));
    // Seeking while paused publishes the message at the playhead: 3.0 (at 1.5 s).
    h.state_mut().apply(Cmd::SetPlayhead(t0 + 1_700_000_000));
    h.run_steps(4);
    std::thread::sleep(Duration::from_millis(500));
    // Playing publishes the messages the playhead passes: 4.0, 5.0, 6.0, ...
    h.state_mut().apply(Cmd::SetSpeed(4.0));
    h.state_mut().apply(Cmd::TogglePlay);
    let t = Instant::now();
    while !got_path.exists() {
        assert!(
            t.elapsed() < Duration::from_secs(40),
            "the subscriber got 4 messages"
        );
        h.step();
        std::thread::sleep(Duration::from_millis(20));
    }
    h.state_mut().apply(Cmd::TogglePlay);
    let _ = sub.wait();
    let values: Vec<f64> = common::ros2::seen(&got_path)
        .iter()
        .map(|s| {
            assert_eq!(s.data.len(), 12, "a CDR std_msgs/msg/Float64");
            f64::from_le_bytes(s.data[4..12].try_into().unwrap())
        })
        .collect();
    assert_eq!(values, [3.0, 4.0, 5.0, 6.0]);
    h.state_mut().apply(Cmd::PublishDisconnect);
    h.run_steps(2);
    assert!(!h.state().doc.as_ref().unwrap().publish.active());
}

/// Opens the Live window (recordings into `dir`/cache), picks ROS 2 when `ros2`, finds the
/// topics (`topic` of type `datatype` among them), starts, and waits for the first messages
/// of `topic` on the timeline.
fn start_live(h: &mut Harness<'_, App>, dir: &Path, ros2: bool, topic: &str, datatype: &str) {
    h.state_mut().live.dir = Some(dir.join("cache"));
    h.get_by_label("Live…").click();
    h.run_steps(4);
    if ros2 {
        h.get_by_label("ROS 2").click();
        h.run_steps(2);
    }
    h.get_by_label("Find topics").click();
    h.run_steps(2);
    wait_for(h, "the topics found", |a| a.live.found.is_some());
    let found = h.state().live.found.clone().unwrap().unwrap();
    assert!(
        found.contains(&(topic.to_string(), datatype.to_string())),
        "{found:?}"
    );
    h.get_by_label("Start").click();
    h.run_steps(2);
    wait_for(h, "the first messages on the timeline", |a| {
        a.doc
            .as_ref()
            .is_some_and(|d| indexed(a) && d.rec.bag.summary().topic(topic).is_some())
    });
}

/// Clicks Stop and waits until the recording is finished and shown from its final file.
fn stop_live(h: &mut Harness<'_, App>) {
    h.get_by_label("Stop").click();
    h.run_steps(2);
    wait_for(h, "the file finished and read", |a| {
        let s = a.live.session.as_ref().unwrap();
        s.end.is_some() && a.doc.as_ref().is_some_and(|d| d.rec.path == s.file) && indexed(a)
    });
    let s = h.state().live.session.as_ref().unwrap();
    assert!(matches!(s.end, Some(Ok(()))), "{:?}", s.end);
}

/// Live against a real ROS 1 graph (Debian's roscore, `rostopic pub` as the publisher): Find
/// topics lists what is published, Start records into the cache and the document fills in
/// as messages arrive (the timeline's counts, the inspector at the newest message, a plotted
/// series that keeps its points while it is read again); the view follows the newest time
/// unless scrolled back, Follow brings it back; Stop finishes the file, which holds every
/// message counted, and Save as copies it out.
#[test]
fn live_records_a_ros1_graph_and_the_view_fills_in() {
    let dir = common::temp_dir("ui-live");
    let m = common::ros1::Master::start(&dir);
    let mut publisher = m.command("rostopic");
    publisher.args(["pub", "-r", "20", "/speed", "std_msgs/Float64", "data: 2.5"]);
    let _pub = common::ros1::spawn(publisher, "rostopic pub", &dir.join("pub.log"));
    m.wait_for("/speed", true);

    let mut h = harness(None);
    h.state_mut().live.master = m.uri.clone();
    start_live(&mut h, &dir, false, "/speed", "std_msgs/Float64");
    assert!(h.state().live.picked.contains("/speed"));
    h.get_by_label_contains("Live from the ROS 1 master at");
    let count = |a: &App| {
        let d = a.doc.as_ref().unwrap();
        let ti = d
            .rec
            .bag
            .summary()
            .topics
            .iter()
            .position(|t| t.name == "/speed")
            .unwrap();
        d.rec.times(ti).map_or(0, |v| v.len())
    };
    let n1 = count(h.state());
    assert!(n1 > 0);
    // The inspector shows the newest message; a plotted field keeps filling in.
    let ti = topic_index(&h, "/speed");
    h.state_mut().apply(Cmd::SelectTopic(Some(ti)));
    h.state_mut().apply(Cmd::AddSeries("/speed.data".into()));
    wait_for(&mut h, "the inspector", inspected);
    // The decoded value is shown (other labels may contain "2.5" too: a time, a count).
    assert!(h.query_all_by_label("2.5").next().is_some());
    wait_for(&mut h, "the series", |a| {
        a.doc
            .as_ref()
            .unwrap()
            .plots
            .series
            .first()
            .is_some_and(|s| s.done)
    });
    let p1 = h.state().doc.as_ref().unwrap().plots.series[0].points.len();
    wait_for(&mut h, "more messages on the timeline", |a| {
        count(a) > n1 + 20
    });
    wait_for(&mut h, "more points in the plot", |a| {
        let s = &a.doc.as_ref().unwrap().plots.series[0];
        s.done && s.points.len() > p1 + 20
    });
    {
        let d = h.state().doc.as_ref().unwrap();
        let (a, b) = d.rec.range();
        assert_eq!(d.nav.playhead, b, "the playhead is at the newest message");
        assert!(d.nav.view.1 >= (b - a) as f64 - 1.0, "{:?}", d.nav.view);
        assert_eq!(d.plots.series[0].points.len(), count(h.state()));
        assert!(d.plots.series[0].points.iter().all(|p| p.y == 2.5));
    }
    // Scrolled back, the view stays where the user put it.
    let dur = {
        let (a, b) = h.state().doc.as_ref().unwrap().rec.range();
        (b - a) as f64
    };
    h.state_mut().apply(Cmd::SetView(0.0, dur / 2.0));
    let n2 = count(h.state());
    wait_for(&mut h, "another reading", |a| count(a) > n2 + 10);
    assert_eq!(h.state().doc.as_ref().unwrap().nav.view, (0.0, dur / 2.0));
    assert!(!h.state().live.session.as_ref().unwrap().follow);
    h.get_by_label("Follow").click();
    h.run_steps(2);
    {
        let d = h.state().doc.as_ref().unwrap();
        let (a, b) = d.rec.range();
        assert_eq!(d.nav.view.1, (b - a) as f64);
    }
    // Stop finishes the file: every message counted is in it.
    stop_live(&mut h);
    let s = h.state().live.session.as_ref().unwrap();
    assert!(s.file.is_file() && !s.file.with_extension("bag.active").exists());
    let recorded = s.stats.topics.get("/speed").copied().unwrap();
    let file = s.file.clone();
    let bag = bagscope::Bag::open(&file).unwrap();
    let t = bag.summary().topic("/speed").unwrap();
    assert_eq!(t.message_count, recorded);
    assert_eq!(count(h.state()) as u64, recorded);
    h.get_by_label_contains("Recorded");
    // Save as copies it out.
    let kept = dir.join("kept.bag");
    h.state_mut().apply(Cmd::LiveSaveTo(kept.clone()));
    wait_for(&mut h, "the copy", |a| a.live.saved.is_some());
    assert_eq!(h.state().live.saved.clone().unwrap().unwrap(), kept);
    assert_eq!(std::fs::read(&kept).unwrap(), std::fs::read(&file).unwrap());
    h.get_by_label("Live…").click();
    h.run_steps(4);
    h.get_by_label("Save as…");
    h.get_by_label_contains("Saved as");
}

/// Live from a ROS 2 domain (in a network namespace of its own), with an rclpy talker (Fast
/// DDS) as the publisher: Find topics discovers it, Start records it into MCAP and the
/// document fills in; every message recorded is one the talker sent, in order and none
/// missing between the first and the last.
#[test]
fn live_records_a_ros2_domain() {
    if rerun_in_own_netns("live_records_a_ros2_domain") {
        return;
    }
    let dir = common::temp_dir("ui-live-ros2");
    let sent = dir.join("sent.jsonl");
    let mut talker = std::process::Command::new("python3")
        .arg(common::ros2::peer())
        .args(["pub", "/chatter", "400", "20"])
        .arg(&sent)
        .env("ROS_LOG_DIR", dir.join("roslog"))
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("the rclpy talker starts");
    let t = Instant::now();
    while !sent.exists() {
        assert!(t.elapsed() < Duration::from_secs(30), "the talker started");
        std::thread::sleep(Duration::from_millis(50));
    }

    let mut h = harness(None);
    start_live(&mut h, &dir, true, "/chatter", "std_msgs/msg/String");
    h.get_by_label_contains("Live from ROS 2 domain 0 (localhost only)");
    let count = |a: &App| {
        a.doc
            .as_ref()
            .and_then(|d| {
                d.rec
                    .bag
                    .summary()
                    .topic("/chatter")
                    .map(|t| t.message_count)
            })
            .unwrap_or(0)
    };
    let n1 = count(h.state());
    let ti = topic_index(&h, "/chatter");
    h.state_mut().apply(Cmd::SelectTopic(Some(ti)));
    wait_for(&mut h, "more messages", |a| count(a) > n1 + 20);
    wait_for(&mut h, "the inspector", inspected);
    assert!(h.query_all_by_label_contains("\"hello ").count() >= 1);
    stop_live(&mut h);
    let s = h.state().live.session.as_ref().unwrap();
    assert_eq!(s.file.extension().unwrap(), "mcap");
    let bag = bagscope::Bag::open(&s.file).unwrap();
    let got = common::messages(&bag);
    // std_msgs/msg/String "hello N": 4 bytes of encapsulation, a length, the text, a NUL.
    let numbers: Vec<u64> = got
        .iter()
        .map(|(topic, _, data)| {
            assert_eq!(topic, "/chatter");
            let len = u32::from_le_bytes(data[4..8].try_into().unwrap()) as usize;
            let text = std::str::from_utf8(&data[8..8 + len - 1]).unwrap();
            text.strip_prefix("hello ").unwrap().parse().unwrap()
        })
        .collect();
    assert!(numbers.len() as u64 > n1 + 20);
    assert!(
        numbers.windows(2).all(|w| w[1] == w[0] + 1),
        "in order, none missing: {numbers:?}"
    );
    let _ = talker.kill();
    let _ = talker.wait();
}

fn panel(a: &App) -> &bagscope::app::scene::ScenePanel {
    &a.doc.as_ref().unwrap().scene.panels[0]
}

/// The 3D panel on the demo: opened from the bar with every drawable topic, a fixed frame
/// picked from the tree, changed to another, hovering a lidar point and a frame shows what and
/// where, clicking a marker moves the inspector to its message.
#[test]
fn a_3d_panel_follows_the_playhead_in_a_fixed_frame() {
    let dir = common::temp_dir("ui-scene");
    let p = dir.join("demo.bag");
    bagscope::demo::write_demo(&p, 20).unwrap();
    let mut h = harness(Some(p));
    wait_for(&mut h, "indexing", indexed);
    let start = h.state().doc.as_ref().unwrap().rec.range().0;
    h.state_mut()
        .apply(Cmd::SetPlayhead(start + 12_000_000_000));
    // The bar's button (each drawable topic's row has one too).
    h.get_all_by_label("3D").next().unwrap().click();
    wait_for(&mut h, "the scene", |a| {
        a.doc
            .as_ref()
            .is_some_and(|d| d.scene.panels.first().is_some_and(|p| p.scene.is_some()))
    });
    // Every drawable topic is a layer; the fixed frame is the tree's map.
    for t in [
        "/lidar/points",
        "/odom",
        "/plan",
        "/planner/markers",
        "/scan",
    ] {
        assert!(h.query_by_label(t).is_some(), "no layer {t}");
    }
    wait_for(&mut h, "map as fixed frame", |a| {
        panel(a).scene.as_ref().is_some_and(|s| s.fixed == "map")
    });
    let s = panel(h.state()).scene.clone().unwrap();
    assert!(s.point_count() > 2000, "{}", s.point_count());
    assert_eq!(s.status[3].text, "4 markers");
    assert!(
        h.query_by_label("2084 of 2084 points").is_some() || s.status[0].text.ends_with("points")
    );
    // The fixed frame changed to odom: the scene is built again there.
    h.get_by_label("Fixed frame").click();
    h.run_steps(2);
    h.get_all_by_label("odom").last().unwrap().click();
    wait_for(&mut h, "the scene in odom", |a| {
        panel(a).scene.as_ref().is_some_and(|s| s.fixed == "odom")
    });
    let s = panel(h.state()).scene.clone().unwrap();
    // Hover: a frame's pick, then a lidar point away from every pick.
    let (rect, cam) = {
        let p = panel(h.state());
        (p.rect, p.settings.camera)
    };
    let ppp = h.ctx.pixels_per_point();
    let view = cam.view(rect.width() * ppp, rect.height() * ppp);
    let at = |q: [f32; 3]| {
        cam.project(&view, q, rect)
            .filter(|p| rect.shrink(4.0).contains(*p))
    };
    let base = s
        .picks
        .iter()
        .find(|k| k.what.starts_with("frame base_link"))
        .unwrap();
    h.event(Event::PointerMoved(
        at(base.pos).expect("base_link in view"),
    ));
    h.run_steps(3);
    let hover = panel(h.state())
        .hover
        .clone()
        .expect("something under the pointer");
    assert!(hover.starts_with("frame base_link in odom"), "{hover}");
    let picks: Vec<Pos2> = s.picks.iter().filter_map(|k| at(k.pos)).collect();
    let lidar = s.points.iter().find(|p| p.layer == 0).unwrap();
    let point = lidar
        .pos
        .iter()
        .filter_map(|q| at(*q))
        .find(|p| picks.iter().all(|k| k.distance(*p) > 12.0))
        .expect("a lidar point in view");
    h.event(Event::PointerMoved(point));
    h.run_steps(3);
    let hover = panel(h.state())
        .hover
        .clone()
        .expect("a point under the pointer");
    assert!(hover.starts_with("/lidar/points point"), "{hover}");
    assert!(hover.ends_with("in odom"), "{hover}");
    // Clicking the goal marker moves the inspector to its message.
    let goal = s
        .picks
        .iter()
        .find(|k| k.what.contains("goal/0 (ARROW)"))
        .unwrap();
    let src = goal.source.unwrap();
    let gp = at(goal.pos).expect("the goal in view");
    h.event(Event::PointerMoved(gp));
    h.run_steps(2);
    h.event(Event::PointerButton {
        pos: gp,
        button: PointerButton::Primary,
        pressed: true,
        modifiers: Modifiers::NONE,
    });
    h.event(Event::PointerButton {
        pos: gp,
        button: PointerButton::Primary,
        pressed: false,
        modifiers: Modifiers::NONE,
    });
    h.run_steps(3);
    let d = h.state().doc.as_ref().unwrap();
    assert_eq!(d.nav.playhead, src.entry.time_ns);
    assert_eq!(
        d.rec.bag.summary().topics[d.nav.selected.unwrap()].name,
        "/planner/markers"
    );
}
