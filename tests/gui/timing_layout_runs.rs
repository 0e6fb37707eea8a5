//! The Timing section, layouts re-applied to a recording with the same topics, two recordings on
//! one timeline.

use bagscope_app::Cmd;
use egui_kittest::kittest::Queryable;

use crate::common;
use crate::*;

#[test]
fn timing_section_gaps_and_stamp_delay_plot() {
    let dir = common::temp_dir("ui-timing");
    let p = dir.join("demo.bag");
    bagscope_ops::demo::write_demo(&p, 20).unwrap();
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
    bagscope_ops::demo::write_demo(&p1, 10).unwrap();
    bagscope_ops::demo::write_demo(&p2, 12).unwrap();
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
    bagscope_ops::demo::write_demo(&r1, 10).unwrap();
    bagscope_ops::demo::write_demo(&r2, 12).unwrap();
    let mut h = harness(None);
    h.state_mut().apply(Cmd::OpenMany(vec![
        bagscope_reader::bag::merge::Part {
            path: r1.clone(),
            offset_ns: 0,
        },
        bagscope_reader::bag::merge::Part {
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
