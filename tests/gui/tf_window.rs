//! The TF window following the playhead.

use bagscope_app::Cmd;
use egui_kittest::kittest::Queryable;

use crate::common;
use crate::*;

#[test]
fn the_tf_window_follows_the_playhead() {
    let dir = common::temp_dir("ui-tf");
    let p = dir.join("demo.bag");
    bagscope_ops::demo::write_demo(&p, 20).unwrap();
    let mut h = harness(Some(p.clone()));
    wait_for(&mut h, "indexing", indexed);
    let a = h.state().doc.as_ref().unwrap().rec.range().0;
    h.state_mut().apply(Cmd::SetPlayhead(a + 10_000_000_000));
    menu(&mut h, "View", "TF");
    h.run_steps(2);
    wait_for(&mut h, "the transforms", |app| {
        app.doc.as_ref().is_some_and(|d| d.tf.history.is_some())
    });
    // The tree at +10 s and the deepest frame's pose in the tree's root (map), as `bagscope tf`
    // gives them; the robot's own frames (the wheels, the mast and its camera) worked out
    // from its URDF and joint states are in it too.
    for f in ["base_link", "laser", "left_wheel", "camera_head"] {
        assert!(h.query_all_by_label(f).count() >= 1, "{f}");
    }
    assert!(
        h.query_all_by_label_contains("Transform tree at +10.000 s (9 frames")
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
        // The window's first choice: the deepest frame (the mast's camera, moved by the
        // joint states).
        &"camera_head",
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
    // The camera's track in the map, as three plot series over the recording (50 Hz for 20 s).
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
            "camera_head in map: x (m)",
            "camera_head in map: y (m)",
            "camera_head in map: yaw (°)"
        ]
    );
    // A point at each transform of its chain (the base's and the joints', 50 Hz each).
    assert!(
        d.plots.series.iter().all(|s| s.points.len() >= 1000),
        "{:?}",
        d.plots
            .series
            .iter()
            .map(|s| s.points.len())
            .collect::<Vec<_>>()
    );
    // A recording without transforms has no TF button.
    let mut h = harness(Some(common::corpus_dir().join("ros_numpy/test.bag")));
    wait_for(&mut h, "indexing", indexed);
    assert!(h.query_by_label("TF").is_none());
}
