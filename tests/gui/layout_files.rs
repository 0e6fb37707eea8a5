//! Layout files: the view built on one run saved, opened in a fresh app on another run (the
//! same panels, plots, hidden topics, bookmarks and windows), saved again byte for byte with
//! the fields a newer bagscope wrote; a layout whose topics are absent keeps its panels and
//! says what is missing; Lichtblick and PlotJuggler layouts' plots come across; `--layout`'s
//! path (the layout read before the recording is open) gives the same view.

use std::path::Path;

use bagscope_app::Cmd;

use crate::common;
use crate::*;

fn written(h: &mut Harness<'static, App>, p: &Path) -> String {
    wait_for(h, "the layout written", |_| p.is_file());
    std::fs::read_to_string(p).unwrap()
}

fn series(a: &App) -> Vec<String> {
    a.doc
        .as_ref()
        .map(|d| d.plots.series.iter().map(|s| s.path.clone()).collect())
        .unwrap_or_default()
}

fn open_layout(h: &mut Harness<'static, App>, p: &Path, n_series: usize) {
    // What the layout last opened left, cleared: its coming back says this one is applied.
    if let Some(d) = h.state_mut().doc.as_mut() {
        d.layout_kept = Default::default();
    }
    h.state_mut().apply(Cmd::OpenLayoutFrom(p.to_path_buf()));
    wait_for(h, "the layout applied", |a| {
        a.doc.as_ref().is_some_and(|d| {
            d.rec.indexed.is_some()
                && d.layout_kept != Default::default()
                && d.plots.series.len() == n_series
                && d.plots.series.iter().all(|s| s.done)
        })
    });
}

#[test]
fn a_layout_saved_on_one_run_shows_the_same_on_another() {
    let dir = common::temp_dir("ui-layout");
    let (r1, r2) = (dir.join("run1.bag"), dir.join("run2.bag"));
    bagscope_ops::demo::write_demo(&r1, 20).unwrap();
    bagscope_ops::demo::write_demo(&r2, 25).unwrap();
    let mut h = harness(Some(r1));
    wait_for(&mut h, "indexing", indexed);
    // The view, by hand: an image panel (the demo opens its cameras: closed first), a plot,
    // the log, /tf hidden, a bookmark at +5 s, the TF window.
    {
        let app = h.state_mut();
        let d = app.doc.as_mut().unwrap();
        d.images.panels.clear();
        let s = d.rec.bag.summary().clone();
        let cam = s
            .topics
            .iter()
            .position(|t| t.name == "/camera/front/image_raw")
            .unwrap();
        let tf = s.topics.iter().position(|t| t.name == "/tf").unwrap();
        let start = d.rec.range().0;
        app.apply(Cmd::OpenImage(cam));
        app.apply(Cmd::AddSeries("/imu/data.linear_acceleration.x".into()));
        app.apply(Cmd::ShowLog(true));
        app.apply(Cmd::SetVisible(tf, false));
        app.apply(Cmd::AddBookmark(start + 5_000_000_000));
        app.apply(Cmd::ShowTf(true));
    }
    h.run_steps(3);
    let first = dir.join("view.json");
    h.state_mut().apply(Cmd::SaveLayoutTo(first.clone()));
    let text = written(&mut h, &first);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["bagscope_layout"], 1);
    assert_eq!(v["images"], serde_json::json!(["/camera/front/image_raw"]));
    assert_eq!(
        v["series"],
        serde_json::json!(["/imu/data.linear_acceleration.x"])
    );
    assert_eq!(v["hidden_topics"], serde_json::json!(["/tf"]));
    assert_eq!(v["bookmarks"][0]["from_start_ns"], 5_000_000_000u64);
    assert_eq!(v["windows"]["tf"], true);
    assert_eq!(v["log"], true);
    // A newer bagscope's field, which this one does not know.
    let mut newer = v.clone();
    newer["future_panel"] = serde_json::json!([{"path": "/cmd_vel.linear.x"}]);
    let newer_path = dir.join("newer.json");
    std::fs::write(&newer_path, newer.to_string()).unwrap();

    // A fresh app on the other run.
    let mut h = harness(Some(r2.clone()));
    wait_for(&mut h, "indexing", indexed);
    open_layout(&mut h, &first, 1);
    h.run_steps(3);
    {
        let d = h.state().doc.as_ref().unwrap();
        let s = d.rec.bag.summary();
        let images: Vec<&str> = d
            .images
            .panels
            .iter()
            .map(|p| s.topics[p.topic].name.as_str())
            .collect();
        assert_eq!(images, ["/camera/front/image_raw"]);
        assert!(d.log.open && d.tf.open);
        let tf = s.topics.iter().position(|t| t.name == "/tf").unwrap();
        assert!(!d.nav.visible[tf]);
        assert_eq!(
            d.nav.bookmarks[0].0 - d.rec.range().0,
            5_000_000_000,
            "from the start"
        );
        assert!(d.layout_notes.is_empty(), "{:?}", d.layout_notes);
    }
    assert_eq!(series(h.state()), ["/imu/data.linear_acceleration.x"]);
    let again = dir.join("again.json");
    h.state_mut().apply(Cmd::SaveLayoutTo(again.clone()));
    assert_eq!(written(&mut h, &again), text, "saved again, byte for byte");
    // The newer bagscope's layout: its field survives a save here.
    open_layout(&mut h, &newer_path, 1);
    let kept_newer = dir.join("kept-newer.json");
    h.state_mut().apply(Cmd::SaveLayoutTo(kept_newer.clone()));
    let back: serde_json::Value = serde_json::from_str(&written(&mut h, &kept_newer)).unwrap();
    assert_eq!(back, newer);

    // Absent topics: the panels stay in the layout and are named.
    let mut missing = v.clone();
    missing["images"] = serde_json::json!(["/camera/front/image_raw", "/nope/image"]);
    missing["series"] = serde_json::json!(["/imu/data.linear_acceleration.x", "/nope.x"]);
    let missing_path = dir.join("missing.json");
    std::fs::write(&missing_path, missing.to_string()).unwrap();
    open_layout(&mut h, &missing_path, 1);
    let notes = h.state().doc.as_ref().unwrap().layout_notes.join("; ");
    assert!(
        notes.contains("/nope/image (image panel)") && notes.contains("/nope.x (plot)"),
        "{notes}"
    );
    assert!(h.query_all_by_label_contains("Layout: not shown").count() >= 1);
    let kept = dir.join("kept.json");
    h.state_mut().apply(Cmd::SaveLayoutTo(kept.clone()));
    let k: serde_json::Value = serde_json::from_str(&written(&mut h, &kept)).unwrap();
    assert_eq!(k["images"], missing["images"]);
    assert_eq!(k["series"], missing["series"]);

    // Before the recording is open (as `bagscope --layout FILE RUN`): applied once it is.
    let mut h = harness(None);
    h.state_mut().apply(Cmd::OpenLayoutFrom(newer_path.clone()));
    h.state_mut().apply(Cmd::Open(r2));
    wait_for(&mut h, "the layout on the opened run", |a| {
        a.doc.as_ref().is_some_and(|d| {
            d.rec.indexed.is_some() && d.plots.series.len() == 1 && d.log.open && d.tf.open
        })
    });
}

#[test]
fn lichtblick_and_plotjuggler_layouts_bring_their_plots() {
    let dir = common::temp_dir("ui-layout-import");
    let run = dir.join("run.bag");
    bagscope_ops::demo::write_demo(&run, 10).unwrap();
    // A Lichtblick layout as its documented JSON holds it: panels by id.
    let licht = dir.join("lichtblick.json");
    std::fs::write(
        &licht,
        serde_json::json!({
            "configById": {
                "Plot!3v9": {"paths": [{"value": "/odom.twist.twist.linear.x", "enabled": true, "timestampMethod": "receiveTime"}]},
                "Image!1x2": {"imageMode": {"imageTopic": "/camera/front/image_raw"}},
                "RosOut!a": {}
            },
            "globalVariables": {}, "userNodes": {}, "playbackConfig": {"speed": 1},
            "layout": {"first": "Plot!3v9", "second": "Image!1x2", "direction": "row"}
        })
        .to_string(),
    )
    .unwrap();
    let mut h = harness(Some(run));
    wait_for(&mut h, "indexing", indexed);
    open_layout(&mut h, &licht, 1);
    assert_eq!(series(h.state()), ["/odom.twist.twist.linear.x"]);
    assert!(h.state().doc.as_ref().unwrap().log.open);
    // A PlotJuggler layout: curves named topic/field/sub.
    let pj = dir.join("pj.xml");
    std::fs::write(
        &pj,
        "<?xml version='1.0' encoding='UTF-8'?>\n<root>\n <tabbed_widget name=\"Main Window\" parent=\"main_window\">\n  <Tab containers=\"1\" tab_name=\"tab1\">\n   <Container>\n    <DockSplitter count=\"1\" sizes=\"1\" orientation=\"-\">\n     <DockArea name=\"...\">\n      <plot flip_x=\"false\" mode=\"TimeSeries\" style=\"Lines\" flip_y=\"false\">\n       <range left=\"0\" right=\"10\" top=\"1\" bottom=\"-1\"/>\n       <limitY/>\n       <curve color=\"#1f77b4\" name=\"/imu/data/angular_velocity/z\"/>\n       <curve color=\"#d62728\" name=\"/battery/voltage/data\"/>\n      </plot>\n     </DockArea>\n    </DockSplitter>\n   </Container>\n  </Tab>\n  <currentTabIndex index=\"0\"/>\n </tabbed_widget>\n <use_relative_time_offset enabled=\"1\"/>\n</root>\n",
    )
    .unwrap();
    open_layout(&mut h, &pj, 2);
    assert_eq!(
        series(h.state()),
        ["/imu/data.angular_velocity.z", "/battery/voltage.data"]
    );
    assert!(h
        .state()
        .doc
        .as_ref()
        .unwrap()
        .plots
        .series
        .iter()
        .all(|s| s.note.is_none() && !s.points.is_empty()));
}

#[test]
fn plotjuggler_snippets_are_plotted_and_a_runaway_one_is_stopped() {
    let dir = common::temp_dir("ui-layout-snippets");
    let run = dir.join("run.bag");
    bagscope_ops::demo::write_demo(&run, 10).unwrap();
    let pj = dir.join("pj.xml");
    std::fs::write(
        &pj,
        "<root>\n <tabbed_widget name=\"Main Window\" parent=\"main_window\"><Tab tab_name=\"t\"><plot mode=\"TimeSeries\">\n  <curve name=\"/odom/twist/twist/linear/x\"/>\n  <curve name=\"speed kmh\"/>\n  <curve name=\"runaway\"/>\n </plot></Tab></tabbed_widget>\n <customMathEquations>\n  <snippet name=\"speed kmh\"><global>k = 3.6</global><function>return value * k</function><linked_source>/odom/twist/twist/linear/x</linked_source></snippet>\n  <snippet name=\"runaway\"><global/><function>while true do end</function><linked_source>/odom/twist/twist/linear/x</linked_source></snippet>\n </customMathEquations>\n</root>\n",
    )
    .unwrap();
    let mut h = harness(Some(run));
    wait_for(&mut h, "indexing", indexed);
    // The app keeps drawing frames while the runaway script runs on its worker, until the
    // budget stops it: no frame waits for it.
    if let Some(d) = h.state_mut().doc.as_mut() {
        d.layout_kept = Default::default();
    }
    h.state_mut().apply(Cmd::OpenLayoutFrom(pj.clone()));
    let (t0, mut slowest, mut frames) = (std::time::Instant::now(), 0f64, 0);
    let done = |a: &App| {
        a.doc
            .as_ref()
            .is_some_and(|d| d.plots.series.len() == 3 && d.plots.series.iter().all(|s| s.done))
    };
    while !done(h.state()) {
        assert!(
            t0.elapsed().as_secs() < 60,
            "the runaway script was not stopped"
        );
        let f = std::time::Instant::now();
        h.step();
        slowest = slowest.max(f.elapsed().as_secs_f64());
        frames += 1;
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let ran = t0.elapsed().as_secs_f64();
    assert!(
        frames > 20 && slowest < 0.25 && slowest < ran / 4.0,
        "{frames} frames in {ran:.2} s while the script ran, the slowest {slowest:.3} s"
    );
    let d = h.state().doc.as_ref().unwrap();
    assert_eq!(
        series(h.state()),
        ["/odom.twist.twist.linear.x", "speed kmh", "runaway"]
    );
    let (src, kmh, runaway) = (&d.plots.series[0], &d.plots.series[1], &d.plots.series[2]);
    assert!(src.points.len() > 50);
    assert_eq!(kmh.points.len(), src.points.len(), "{:?}", kmh.note);
    for (a, b) in src.points.iter().zip(&kmh.points) {
        assert_eq!((a.x, a.y * 3.6), (b.x, b.y));
    }
    let note = runaway.note.as_deref().unwrap_or("");
    assert!(
        note.contains("script \"runaway\", function line 1")
            && note.contains("stopped after")
            && note.contains("(sample 0)"),
        "{note}"
    );
    assert!(runaway.points.is_empty());
}
