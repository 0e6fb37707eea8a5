//! Image panels following the playhead.

use bagscope_app::Cmd;
use egui::Event;
use egui_kittest::kittest::Queryable;

use crate::common;
use crate::*;

#[test]
fn image_panels_follow_the_playhead() {
    let dir = common::temp_dir("ui-images");
    let p = dir.join("demo.bag");
    bagscope_ops::demo::write_demo(&p, 20).unwrap();
    let bag = bagscope_reader::Bag::open(&p).unwrap();
    let mut h = harness(Some(p));
    wait_for(&mut h, "indexing", indexed);
    // Three camera topics, the H.264 video camera, the laser scan and the lidar's cloud, each
    // with an image button in the tree.
    assert_eq!(h.get_all_by_label("image").count(), 6);
    let topics: Vec<String> = {
        let d = h.state().doc.as_ref().unwrap();
        bagscope_app::images::image_topics(d)
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
        bagscope_ops::media::image::decode_message(&plan, &bag.message(conn, want).unwrap().data)
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
    assert_eq!(f.cmap, bagscope_ops::media::image::Colormap::Turbo);
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
    assert_eq!(f.cmap, bagscope_ops::media::image::Colormap::Turbo);
}
