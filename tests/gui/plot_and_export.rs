//! A plot made from the inspector and a range exported; the window icon.

use bagscope_app::Cmd;
use egui::Key;
use egui_kittest::kittest::Queryable;

use crate::common;
use crate::*;

#[test]
fn plot_from_the_inspector_and_export_a_range() {
    let dir = common::temp_dir("ui-plot");
    let p = dir.join("demo.bag");
    bagscope_ops::demo::write_demo(&p, 20).unwrap();
    // The value the inspector will show after one step: the bag starts with the static
    // transform, so → goes to the first imu message.
    let bag = bagscope_reader::Bag::open(&p).unwrap();
    let conn = bag.summary().topic("/imu/data").unwrap().connections[0];
    let plan =
        bagscope_reader::encoding::Plan::for_connection(&bag.summary().connections[conn], &[])
            .unwrap();
    let m = bag.nth_message(conn, 0).unwrap();
    let ex = bagscope_reader::encoding::Extractor::new(
        &plan,
        &bagscope_reader::encoding::FieldPath::parse("linear_acceleration.z")
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
    click_at(&mut h, at);
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
    menu(&mut h, "File", "Export…");
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
    let cut = bagscope_reader::Bag::open(&out).unwrap();
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
    let icon = eframe::icon_data::from_png_bytes(include_bytes!(
        "../../crates/bagscope-app/assets/icon.png"
    ))
    .unwrap();
    assert_eq!((icon.width, icon.height), (128, 128));
    assert_eq!(icon.rgba.len(), 128 * 128 * 4);
}
