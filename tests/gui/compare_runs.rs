//! The Compare runs window on two recordings on one timeline: each topic's messages side by
//! side with B − A, the fields typed compared, and a field's B − A plotted across the runs.

use egui::accesskit::Role;
use egui_kittest::kittest::{NodeT, Queryable};

use bagscope_app::Cmd;

use crate::common;
use crate::*;

fn compared(a: &App) -> bool {
    a.doc.as_ref().is_some_and(|d| {
        d.compare.job.is_none() && matches!(&d.compare.shown, Some(Ok(c)) if !c.topics.is_empty())
    })
}

#[test]
fn compare_runs_side_by_side_and_plot_the_difference() {
    let dir = common::temp_dir("ui-compare");
    let (r1, r2) = (dir.join("run1.bag"), dir.join("run2.bag"));
    bagscope_ops::demo::write_demo(&r1, 20).unwrap();
    bagscope_ops::demo::write_demo(&r2, 25).unwrap();
    let mut h = harness(None);
    h.state_mut()
        .apply(Cmd::OpenMany(bagscope_reader::bag::merge::parts_of(&[
            r1, r2,
        ])));
    wait_for(&mut h, "indexing", indexed);
    menu(&mut h, "View", "Compare runs");
    wait_for(&mut h, "the comparison", compared);
    // Messages of /imu/data: 2000 and 2500, B − A +500.
    for text in ["/imu/data", "2000", "2500", "+500", "/run1/", "/run2/"] {
        assert!(
            h.query_all_by_label_contains(text).count() >= 1,
            "{text} in the window"
        );
    }
    // A field typed: its statistics in both runs.
    let fields = h
        .query_all_by_role(Role::TextInput)
        .find(|n| {
            n.accesskit_node()
                .placeholder()
                .is_some_and(|p| p.starts_with("/imu/data.linear"))
        })
        .expect("the fields box");
    fields.focus();
    h.run_steps(1);
    h.query_all_by_role(Role::TextInput)
        .find(|n| n.is_focused())
        .unwrap()
        .type_text("/imu/data.linear_acceleration.x");
    h.run_steps(1);
    h.get_by_label("Compare").click();
    h.run_steps(2);
    wait_for(&mut h, "the fields compared", |a| {
        compared(a)
            && a.doc
                .as_ref()
                .is_some_and(|d| matches!(&d.compare.shown, Some(Ok(c)) if c.fields.len() == 1))
    });
    {
        let d = h.state().doc.as_ref().unwrap();
        let Some(Ok(c)) = &d.compare.shown else {
            unreachable!()
        };
        let per = &c.fields[0].1;
        assert_eq!(per[0].as_ref().unwrap().count, 2000);
        assert_eq!(per[1].as_ref().unwrap().count, 2500);
    }
    // B − A over time: the same generator drove both runs, so it is zero where both have
    // messages.
    h.get_by_label("plot B − A").click();
    h.run_steps(2);
    wait_for(&mut h, "the difference plotted", |a| {
        a.doc
            .as_ref()
            .is_some_and(|d| d.plots.series.len() == 1 && d.plots.series[0].done)
    });
    let s = &h.state().doc.as_ref().unwrap().plots.series[0];
    assert_eq!(
        s.path,
        "/run2/imu/data.linear_acceleration.x - /run1/imu/data.linear_acceleration.x"
    );
    assert!(s.note.is_none(), "{:?}", s.note);
    assert!(s.points.len() > 100, "{}", s.points.len());
    let within: Vec<_> = s
        .points
        .iter()
        .filter(|p| p.x > 0.5 && p.x < 19.0)
        .collect();
    assert!(!within.is_empty());
    assert!(
        within.iter().all(|p| p.y.abs() < 1e-12),
        "{:?}",
        within.iter().find(|p| p.y.abs() >= 1e-12)
    );
}
