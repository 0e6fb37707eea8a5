//! The Scripts window: a new series script written, applied and plotted (its points the
//! function of its sources'); a syntax error shown at its line, nothing plotted; Revert back to
//! the script as applied.

use bagscope_app::scripts::Draft;
use egui_kittest::kittest::Queryable;

use crate::common;
use crate::*;

fn draft<'a>(h: &'a mut Harness<'static, App>) -> &'a mut Draft {
    &mut h.state_mut().doc.as_mut().unwrap().scripts.draft
}

#[test]
fn a_script_is_written_applied_and_plotted() {
    let dir = common::temp_dir("ui-scripts");
    let run = dir.join("run.bag");
    bagscope_ops::demo::write_demo(&run, 10).unwrap();
    let mut h = harness(Some(run));
    wait_for(&mut h, "indexing", indexed);
    menu(&mut h, "View", "Scripts");
    h.run_steps(3);
    assert!(
        h.state().doc.as_ref().unwrap().scripts.open,
        "the window is open"
    );
    h.get_by_label("New").click();
    h.run_steps(2);
    // A syntax error: said at its line, in the function, before anything runs.
    *draft(&mut h) = Draft {
        name: "speed kmh".into(),
        sources: "/odom.twist.twist.linear.x\n/odom.twist.twist.angular.z".into(),
        global: "k = 3.6".into(),
        function: "local x = value * k\nreturn x +\n".into(),
    };
    h.run_steps(2);
    h.get_by_label("Apply").click();
    h.run_steps(3);
    let d = h.state().doc.as_ref().unwrap();
    let e = d.scripts.error.as_ref().expect("the syntax error");
    assert_eq!(
        (e.part, e.line),
        (bagscope_ops::script::Part::Function, Some(2)),
        "{e}"
    );
    assert!(h.query_by_label_contains("function line 2").is_some());
    assert!(d.plots.series.is_empty());
    // Fixed: applied, plotted on a worker, its points value * 3.6 + v1 at each sample.
    draft(&mut h).function = "local x = value * k\nreturn x + v1\n".into();
    h.run_steps(2);
    h.get_by_label("Apply").click();
    wait_for(&mut h, "the script's series", |a| {
        a.doc.as_ref().is_some_and(|d| {
            d.plots
                .series
                .iter()
                .any(|s| s.path == "speed kmh" && s.done)
        })
    });
    let d = h.state().doc.as_ref().unwrap();
    assert!(d.scripts.error.is_none());
    assert_eq!(d.plots.scripts.len(), 1);
    let s = d
        .plots
        .series
        .iter()
        .find(|s| s.path == "speed kmh")
        .unwrap();
    assert!(s.note.is_none(), "{:?}", s.note);
    let bag = &d.rec.bag;
    let cols = bagscope_ops::script::evaluate(
        bag,
        &d.plots.scripts,
        &Default::default(),
        (None, None),
        bagscope_ops::script::Limits::default(),
        &std::sync::atomic::AtomicBool::new(false),
    )
    .unwrap();
    let want = &cols[0].as_ref().unwrap().series[0].points;
    assert!(want.len() > 50);
    assert_eq!(s.points.len(), want.len());
    let start = d.rec.range().0;
    for (p, w) in s.points.iter().zip(want) {
        assert_eq!(p.x, (w.time_ns - start) as f64 / 1e9);
        assert_eq!(Some(p.y), w.value.as_f64());
    }
    // The script's series in an XY plot against its main source: at each sample the pair
    // (source, series).
    let xs: Vec<f64> = d
        .plots
        .series
        .iter()
        .find(|s| s.path == "speed kmh")
        .unwrap()
        .points
        .iter()
        .map(|p| p.y)
        .collect();
    h.state_mut().apply(bagscope_app::Cmd::AddSeries(
        "speed kmh vs /odom.twist.twist.linear.x".into(),
    ));
    wait_for(&mut h, "the XY plot", |a| {
        a.doc.as_ref().is_some_and(|d| {
            d.plots
                .xy
                .first()
                .is_some_and(|x| !x.points.is_empty() || x.note.is_some())
        })
    });
    let xy = &h.state().doc.as_ref().unwrap().plots.xy[0];
    assert!(xy.note.is_none(), "{:?}", xy.note);
    assert_eq!(xy.points.len(), xs.len());
    for (p, y) in xy.points.iter().zip(&xs) {
        assert_eq!(p.y, *y);
    }
    // Find searches the script's series by its name, on a worker: the samples above 2.
    let above = xs.iter().filter(|&&y| y > 2.0).count();
    assert!(above > 0 && above < xs.len());
    h.state_mut().doc.as_mut().unwrap().find.query = "speed kmh > 2".into();
    h.state_mut().apply(bagscope_app::Cmd::Find);
    wait_for(&mut h, "the hits", |a| {
        a.doc
            .as_ref()
            .is_some_and(|d| !d.find.running() && d.find.searched.is_some())
    });
    let f = &h.state().doc.as_ref().unwrap().find;
    assert!(f.error.is_none(), "{:?}", f.error);
    assert_eq!(f.hits.len(), above);
    // Edited, then reverted to the script as applied.
    draft(&mut h).global = "k = 1".into();
    h.run_steps(2);
    h.get_by_label("Revert").click();
    h.run_steps(2);
    assert_eq!(draft(&mut h).global, "k = 3.6");
}
