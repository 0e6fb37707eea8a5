//! An image panel's overlay in the real app (kittest): the camera recording of
//! tests/py/camera_fixture.py (rosbags' writer) with annotations matched by header stamp, a
//! cloud and a marker projected through the CameraInfo with the transform at the image's
//! stamp, as OpenCV projects them; the annotation under the cursor named; rectify.

use bagscope_app::Cmd;
use egui::{Event, Rect, Vec2};
use serde_json::Value;

use crate::common;
use crate::*;

#[test]
fn overlays_match_by_stamp_and_land_where_opencv_projects() {
    let dir = common::temp_dir("ui-camera");
    let (bag, _, expected) = common::camera::recording(&dir);
    let mut h = harness(Some(bag));
    wait_for(&mut h, "indexing", indexed);
    {
        let d = h.state_mut().doc.as_mut().unwrap();
        let ti = d
            .rec
            .bag
            .summary()
            .topics
            .iter()
            .position(|t| t.name == "/camera/image_raw")
            .unwrap();
        d.images.open(ti);
        let p = d.images.panels.last_mut().unwrap();
        p.overlay.annotations = vec!["/annotations".into()];
        p.overlay.projected = vec!["/cloud".into(), "/marker".into()];
        p.overlay.tf_axes = true;
    }
    let e = &expected["images"][2];
    let received = e["received"].as_u64().unwrap();
    h.state_mut().apply(Cmd::SetPlayhead(received));
    wait_for(&mut h, "the overlay with the transforms", |app| {
        app.doc.as_ref().is_some_and(|d| {
            d.images.panels[0].frame.as_ref().is_some_and(|f| {
                f.key.entry.time_ns == received
                    && f.overlay
                        .as_ref()
                        .is_some_and(|o| o.points > 0 && o.notes.is_empty())
            })
        })
    });
    let pts = |v: &Value| -> Vec<(f64, f64)> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|p| (p[0].as_f64().unwrap(), p[1].as_f64().unwrap()))
            .collect()
    };
    let in_view = |p: &&(f64, f64)| p.0 >= -0.5 && p.1 >= -0.5 && p.0 < 639.5 && p.1 < 479.5;
    let (circle_at, img_rect) = {
        let d = h.state().doc.as_ref().unwrap();
        let p = &d.images.panels[0];
        let f = p.frame.as_ref().unwrap();
        let o = f.overlay.as_ref().unwrap();
        assert_eq!(
            o.stamp,
            e["stamp"].as_u64().unwrap(),
            "the image's header stamp"
        );
        // Every cloud point OpenCV puts in the image, painted.
        assert_eq!(o.points, pts(&e["cloud_px"]).iter().filter(in_view).count());
        // This image's circle (its stamp's, not a later or earlier one's) and polygon.
        let c = e["circle"].as_array().unwrap();
        let (cx, cy) = (c[0].as_f64().unwrap() as f32, c[1].as_f64().unwrap() as f32);
        let circle = o
            .shapes
            .iter()
            .find(|s| s.label == "det/0")
            .expect("the circle");
        assert_eq!(circle.points, vec![[cx, cy]]);
        assert_eq!(circle.radius, 25.0);
        assert!(o
            .shapes
            .iter()
            .any(|s| s.label == "det/1" && s.points.len() == 4));
        // The marker's four points where OpenCV puts them, within 1 px.
        let marker = o
            .shapes
            .iter()
            .find(|s| s.label.starts_with("/marker wall/7"))
            .expect("the marker");
        let want = pts(&e["marker_px"]);
        assert_eq!(marker.points.len(), want.len());
        for (got, w) in marker.points.iter().zip(&want) {
            assert!(
                (f64::from(got[0]) - w.0).abs() < 1.0 && (f64::from(got[1]) - w.1).abs() < 1.0,
                "marker at {got:?}, OpenCV {w:?}"
            );
        }
        // The image as the panel fits it.
        let area = p.area;
        let fit = (area.width() / 640.0).min(area.height() / 480.0);
        let img_rect = Rect::from_center_size(area.center(), Vec2::new(640.0, 480.0) * fit);
        let at = |x: f32, y: f32| img_rect.min + Vec2::new(x + 0.5, y + 0.5) * fit;
        (at(cx + 25.0, cy), img_rect)
    };
    // Hovering the circle's ring names it.
    h.event(Event::PointerMoved(circle_at));
    h.run_steps(2);
    let hover = h.state().doc.as_ref().unwrap().images.panels[0]
        .hover
        .clone()
        .unwrap_or_default();
    assert!(
        hover.contains("det/0 (circle)"),
        "{hover} at {circle_at:?} in {img_rect:?}"
    );
    // Away from every annotation, only the pixel.
    h.event(Event::PointerMoved(
        img_rect.min + Vec2::new(2.0, img_rect.height() - 2.0),
    ));
    h.run_steps(2);
    let hover = h.state().doc.as_ref().unwrap().images.panels[0]
        .hover
        .clone()
        .unwrap_or_default();
    assert!(!hover.contains("det/"), "{hover}");
    // Rectify: the picture undistorted on the worker.
    h.state_mut().doc.as_mut().unwrap().images.panels[0]
        .overlay
        .rectify = true;
    wait_for(&mut h, "the rectified picture", |app| {
        app.doc.as_ref().is_some_and(|d| {
            d.images.panels[0]
                .frame
                .as_ref()
                .is_some_and(|f| f.image.encoding.ends_with("rectified"))
        })
    });
}

#[test]
fn a_series_plotted_at_header_stamps() {
    let dir = common::temp_dir("ui-stamps");
    let (bag, _, expected) = common::camera::recording(&dir);
    let mut h = harness(Some(bag));
    wait_for(&mut h, "indexing", indexed);
    let path = "/camera/image_raw.header.seq";
    h.state_mut().apply(Cmd::AddSeries(path.into()));
    wait_for(&mut h, "the series", |app| {
        app.doc
            .as_ref()
            .is_some_and(|d| d.plots.series.first().is_some_and(|s| s.done))
    });
    // Its "stamp" toggle: read again at the images' header stamps.
    h.get_by_label("stamp").click();
    h.run_steps(2);
    wait_for(&mut h, "the series at stamps", |app| {
        app.doc.as_ref().is_some_and(|d| {
            d.plots
                .series
                .first()
                .is_some_and(|s| s.header_time && s.done && s.points.len() == 5)
        })
    });
    let d = h.state().doc.as_ref().unwrap();
    let start = d.rec.bag.summary().start_ns.unwrap();
    let s = &d.plots.series[0];
    for (k, img) in expected["images"].as_array().unwrap().iter().enumerate() {
        let stamp = img["stamp"].as_u64().unwrap();
        let x = (i128::from(stamp) - i128::from(start)) as f64 / 1e9;
        let p = s.points.iter().find(|p| p.y == k as f64).unwrap();
        assert!(
            (p.x - x).abs() < 1e-9,
            "image {k}: at {} s, its stamp is at {x} s",
            p.x
        );
    }
    // The layout keeps it.
    let l = bagscope_app::layout::capture(d);
    assert_eq!(l.header_stamp_series, [path]);
}

#[test]
fn a_state_row_drawn_at_header_stamps() {
    let dir = common::temp_dir("ui-state-stamps");
    let (bag, _, expected) = common::camera::recording(&dir);
    let mut h = harness(Some(bag));
    wait_for(&mut h, "indexing", indexed);
    // The annotations (ImageMarker: a CIRCLE then a POLYGON an image) arrive 150 ms after the
    // images but carry their stamps.
    let path = "/annotations.type";
    h.state_mut().apply(Cmd::AddStateRow(path.into()));
    let runs = |h: &Harness<'_, bagscope_app::App>| -> Option<Vec<(u64, String)>> {
        let d = h.state().doc.as_ref()?;
        let row = d.states.rows.first()?;
        let t = row.track.as_ref()?.as_ref().ok()?;
        Some(
            t.runs
                .iter()
                .map(|r| (r.start_ns, t.labels[r.value as usize].clone()))
                .collect(),
        )
    };
    wait_for(&mut h, "the states", |app| {
        app.doc
            .as_ref()
            .is_some_and(|d| d.states.rows.first().is_some_and(|r| r.track.is_some()))
    });
    let at_receive = runs(&h).unwrap();
    h.get_by_label("/annotations.type at header stamps").click();
    h.run_steps(2);
    wait_for(&mut h, "the states at stamps", |app| {
        app.doc.as_ref().is_some_and(|d| {
            d.states
                .rows
                .first()
                .is_some_and(|r| r.header_time && r.track.is_some())
        })
    });
    let at_stamps = runs(&h).unwrap();
    let circles: Vec<u64> = at_stamps
        .iter()
        .filter(|(_, l)| l == "CIRCLE")
        .map(|(t, _)| *t)
        .collect();
    let stamps: Vec<u64> = expected["images"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["stamp"].as_u64().unwrap())
        .collect();
    assert_eq!(circles, stamps, "at receive times: {at_receive:?}");
    // At receive times each circle comes later than its image's stamp.
    let late: Vec<u64> = at_receive
        .iter()
        .filter(|(_, l)| l == "CIRCLE")
        .map(|(t, _)| *t)
        .collect();
    assert_eq!(late.len(), stamps.len());
    assert!(
        late.iter().zip(&stamps).all(|(r, s)| r > s),
        "{late:?} {stamps:?}"
    );
    // The layout keeps it.
    let l = bagscope_app::layout::capture(h.state().doc.as_ref().unwrap());
    assert_eq!(l.header_stamp_state_rows, [path]);
}
