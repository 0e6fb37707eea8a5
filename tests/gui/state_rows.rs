//! State rows: a field drawn under the timeline as bands of its values, integers named by
//! their definition's constants (`rosgraph_msgs/Log`'s `level`: INFO, WARN), a click on a band
//! seeks to its start; fields that are no states say why.

use bagscope_app::Cmd;
use egui_kittest::kittest::Queryable;

use crate::common;
use crate::*;

fn row_done(a: &App, path: &str) -> bool {
    a.doc.as_ref().is_some_and(|d| {
        d.states
            .rows
            .iter()
            .any(|r| r.path == path && r.track.is_some())
    })
}

#[test]
fn a_field_drawn_as_states_under_the_timeline() {
    let dir = common::temp_dir("ui-states");
    let p = dir.join("demo.bag");
    bagscope_ops::demo::write_demo(&p, 60).unwrap();
    let mut h = harness(Some(p));
    wait_for(&mut h, "indexing", indexed);
    // Typed in the toolbar's box.
    let input = h
        .query_all_by_role(egui::accesskit::Role::TextInput)
        .find(|n| {
            use egui_kittest::kittest::NodeT;
            n.accesskit_node()
                .placeholder()
                .is_some_and(|p| p.starts_with("state row"))
        })
        .expect("the state row box");
    input.focus();
    h.run_steps(1);
    h.query_all_by_role(egui::accesskit::Role::TextInput)
        .find(|n| n.is_focused())
        .unwrap()
        .type_text("/rosout.level");
    h.get_by_label("+ state").click();
    h.run_steps(2);
    wait_for(&mut h, "the states", |a| row_done(a, "/rosout.level"));
    let (labels, runs) = {
        let d = h.state().doc.as_ref().unwrap();
        let Some(Ok(t)) = &d.states.rows[0].track else {
            panic!(
                "{:?}",
                d.states.rows[0].track.as_ref().map(|r| r.as_ref().err())
            )
        };
        (t.labels.clone(), t.runs.clone())
    };
    assert!(labels.contains(&"INFO".to_string()), "{labels:?}");
    assert!(labels.contains(&"WARN".to_string()), "{labels:?}");
    assert!(runs.len() > 2);
    assert!(h.query_all_by_label("/rosout.level").count() >= 1);
    // A click in the middle of the row: the playhead goes to the start of the run there.
    h.get_by_label("/rosout.level states").click();
    h.run_steps(2);
    let d = h.state().doc.as_ref().unwrap();
    let t = d.nav.playhead;
    assert!(
        runs.iter().any(|r| r.start_ns == t),
        "{t} is no run's start"
    );
    // A string field: its values as they are.
    h.state_mut().apply(Cmd::AddStateRow("/rosout.name".into()));
    wait_for(&mut h, "the names", |a| row_done(a, "/rosout.name"));
    {
        let d = h.state().doc.as_ref().unwrap();
        let Some(Ok(t)) = &d.states.rows[1].track else {
            panic!("no names")
        };
        assert!(
            !t.labels.is_empty() && t.labels.iter().all(|l| l.starts_with('/')),
            "{:?}",
            t.labels
        );
    }
    // Fields that are no states: said on their row.
    h.state_mut()
        .apply(Cmd::AddStateRow("/imu/data.linear_acceleration.x".into()));
    h.state_mut().apply(Cmd::AddStateRow("/nope.x".into()));
    wait_for(&mut h, "the refused rows", |a| {
        row_done(a, "/imu/data.linear_acceleration.x") && row_done(a, "/nope.x")
    });
    let d = h.state().doc.as_ref().unwrap();
    let err = |i: usize| {
        d.states.rows[i]
            .track
            .as_ref()
            .unwrap()
            .as_ref()
            .err()
            .cloned()
    };
    assert!(err(2).unwrap().contains("plot it"), "{:?}", err(2));
    assert!(err(3).unwrap().contains("no topic"), "{:?}", err(3));
}
