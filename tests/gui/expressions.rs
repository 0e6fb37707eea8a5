//! Expressions in the plot's path box: typed with completion (a virtual field, then a
//! modifier), plotted; a formula; XY plots (a trajectory, a scan at the playhead against its
//! index); a bad one answered under the box with a caret.

use egui::accesskit::Role;
use egui::Key;
use egui_kittest::kittest::{NodeT, Queryable};

use crate::common;
use crate::*;

/// The plot's path box.
fn path_box<'a>(h: &'a Harness<'_, bagscope_app::App>) -> egui_kittest::Node<'a> {
    h.query_all_by_label("Plots")
        .find(|n| n.accesskit_node().role() == Role::TextInput)
        .expect("the plot's path box")
}

fn type_in(h: &mut Harness<'_, bagscope_app::App>, text: &str) {
    path_box(h).focus();
    h.run_steps(1);
    path_box(h).type_text(text);
    h.run_steps(2);
}

fn done(n: usize) -> impl Fn(&bagscope_app::App) -> bool {
    move |a| {
        a.doc
            .as_ref()
            .is_some_and(|d| d.plots.series.len() == n && d.plots.series.iter().all(|s| s.done))
    }
}

#[test]
fn an_expression_typed_with_completion_becomes_a_plot() {
    let dir = common::temp_dir("ui-expr");
    let p = dir.join("demo.bag");
    bagscope_ops::demo::write_demo(&p, 20).unwrap();
    let mut h = harness(Some(p.clone()));
    wait_for(&mut h, "indexing", indexed);
    // A virtual field, completed and plotted at once.
    type_in(&mut h, "/imu/data.orientation.ya");
    // (The pointer comes to the completion before it clicks, as a hand moves.)
    h.get_by_label("/imu/data.orientation.yaw").hover();
    h.run_steps(1);
    h.get_by_label("/imu/data.orientation.yaw").click();
    h.run_steps(2);
    wait_for(&mut h, "the yaw series", done(1));
    // A modifier, completed into the box, then Enter.
    type_in(&mut h, "/imu/data.angular_velocity.z.@deriv");
    h.get_by_label_contains(".@derivative").click();
    h.run_steps(2);
    assert_eq!(
        h.state().doc.as_ref().unwrap().plots.input,
        "/imu/data.angular_velocity.z.@derivative"
    );
    type_in(&mut h, ".@movavg(0.5s)");
    h.key_press(Key::Enter);
    h.run_steps(2);
    wait_for(&mut h, "the derived series", done(2));
    // A formula.
    type_in(
        &mut h,
        "hypot(/imu/data.linear_acceleration.x, /imu/data.linear_acceleration.y) * 2",
    );
    h.key_press(Key::Enter);
    h.run_steps(2);
    wait_for(&mut h, "the formula", done(3));
    let d = h.state().doc.as_ref().unwrap();
    let [yaw, deriv, formula] = &d.plots.series[..] else {
        panic!("three series")
    };
    assert_eq!(yaw.path, "/imu/data.orientation.yaw");
    assert_eq!(yaw.points.len(), 2000, "20 s at 100 Hz");
    assert!(yaw.points.iter().all(|p| p.y.abs() <= std::f64::consts::PI));
    assert_eq!(
        deriv.path,
        "/imu/data.angular_velocity.z.@derivative.@movavg(0.5s)"
    );
    assert_eq!(
        deriv.points.len(),
        1999,
        "the first sample has no derivative"
    );
    assert!(deriv.note.is_none(), "{:?}", deriv.note);
    assert_eq!(formula.points.len(), 2000);
    assert!(formula.points.iter().all(|p| p.y >= 0.0));
    // What the library computes from the same recording, independently of the app.
    let bag = bagscope_reader::Bag::open(&p).unwrap();
    let e = bagscope_reader::expr::Expr::parse(&deriv.path).unwrap();
    let want = bagscope_reader::series::expr_series(
        &bag,
        &[e],
        &Default::default(),
        (None, None),
        2,
        &Default::default(),
    )
    .unwrap();
    let start = bag.summary().start_ns.unwrap();
    for (got, w) in deriv.points.iter().zip(&want[0].points) {
        assert_eq!(got.x, (w.time_ns - start) as f64 / 1e9);
        assert_eq!(got.y, w.value.as_f64().unwrap());
    }
    // A plotted series named, then used by its name in a formula.
    h.state_mut().doc.as_mut().unwrap().plots.series[0].name = "yaw".into();
    type_in(&mut h, "$yaw.@rad2deg - 90");
    h.key_press(Key::Enter);
    h.run_steps(2);
    wait_for(&mut h, "the named series' formula", done(4));
    let d = h.state().doc.as_ref().unwrap();
    let (yaw, named) = (&d.plots.series[0], &d.plots.series[3]);
    assert_eq!(named.points.len(), yaw.points.len());
    assert!(named
        .points
        .iter()
        .zip(&yaw.points)
        .all(|(n, y)| n.x == y.x && (n.y - (y.y.to_degrees() - 90.0)).abs() < 1e-9));
    h.state_mut().doc.as_mut().unwrap().plots.series.pop();
    // A variable in an index, set in the panel's variables box.
    h.state_mut().doc.as_mut().unwrap().plots.vars = "i=3, unused='x'".into();
    type_in(&mut h, "/scan.ranges[$i]");
    h.key_press(Key::Enter);
    h.run_steps(2);
    wait_for(&mut h, "the series of a variable's index", done(4));
    let want = bagscope_reader::series::expr_series(
        &bag,
        &[bagscope_reader::expr::Expr::parse("/scan.ranges[3]").unwrap()],
        &Default::default(),
        (None, None),
        2,
        &Default::default(),
    )
    .unwrap();
    let d = h.state().doc.as_ref().unwrap();
    let got = &d.plots.series[3];
    assert!(!want[0].points.is_empty());
    assert_eq!(got.points.len(), want[0].points.len());
    assert!(got
        .points
        .iter()
        .zip(&want[0].points)
        .all(|(g, w)| g.y == w.value.as_f64().unwrap()));
    h.state_mut().doc.as_mut().unwrap().plots.series.pop();
    // XY: a trajectory over the whole recording, and the scan at the playhead against its
    // index.
    type_in(
        &mut h,
        "/odom.pose.pose.position.y vs /odom.pose.pose.position.x",
    );
    h.key_press(Key::Enter);
    type_in(&mut h, "/scan.ranges[:] vs index");
    h.key_press(Key::Enter);
    h.run_steps(2);
    let (a, _) = h.state().doc.as_ref().unwrap().rec.range();
    h.state_mut()
        .apply(bagscope_app::Cmd::SetPlayhead(a + 5_000_000_000));
    wait_for(&mut h, "the XY plots", |a| {
        a.doc.as_ref().is_some_and(|d| {
            d.plots.xy.len() == 2 && d.plots.xy.iter().all(|s| !s.points.is_empty())
        })
    });
    let d = h.state().doc.as_ref().unwrap();
    assert!(
        d.plots.xy[0].points.len() > 10,
        "{}",
        d.plots.xy[0].points.len()
    );
    assert!(!d.plots.xy[0].at_playhead && d.plots.xy[1].at_playhead);
    // The scan at the playhead, as the library reads that message.
    let topic = bag.summary().topic("/scan").unwrap();
    let (c, e) = bag
        .tables()
        .unwrap()
        .last_at(topic, a + 5_000_000_000)
        .unwrap();
    let m = bag.message(c, e).unwrap();
    let plan = bagscope_reader::encoding::Plan::for_connection(&bag.summary().connections[c], &[])
        .unwrap();
    let node = plan.decode(&m.data).unwrap();
    let ranges = node
        .at(
            &plan.def,
            &[bagscope_reader::encoding::Segment::Field("ranges".into())],
        )
        .unwrap();
    let n = ranges.value.len().unwrap();
    let scan = &d.plots.xy[1].points;
    let finite: Vec<f64> = (0..n)
        .map(|i| ranges.value.element(i).unwrap().0.as_f64().unwrap())
        .filter(|v| v.is_finite())
        .collect();
    assert_eq!(scan.len(), finite.len());
    assert!(scan.iter().zip(&finite).all(|(p, v)| p.y == *v));
    // A bad expression: nothing is added, the error points at the place.
    type_in(&mut h, "/imu/data.orientation.@movavg(fast)");
    h.key_press(Key::Enter);
    h.run_steps(3);
    let d = h.state().doc.as_ref().unwrap();
    assert_eq!(d.plots.series.len(), 3);
    assert_eq!(d.plots.xy.len(), 2);
    let err = d.plots.error.clone().unwrap_or_default();
    assert!(err.contains("column 31") && err.ends_with("^"), "{err}");
    assert!(h.query_all_by_label_contains("expected a number").count() >= 1);
}
