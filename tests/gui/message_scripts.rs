//! The Scripts window's message scripts: a virtual topic written in the app, applied (the
//! recording opened again with it on the loader's worker, the plots kept), its values what
//! the script made; a syntax error shown at its line, the recording open without it; saved in
//! a layout and made again when that layout is opened on the recording.

use egui_kittest::kittest::Queryable;

use bagscope_app::message_scripts::Draft;
use bagscope_app::Cmd;

use crate::common;
use crate::*;

fn draft<'a>(h: &'a mut Harness<'static, App>) -> &'a mut Draft {
    &mut h.state_mut().doc.as_mut().unwrap().scripts.message.draft
}

/// The recording open again and indexed, with the topic `/speed` (`has`) or not.
fn wait_reopened(h: &mut Harness<'static, App>, what: &str, has: bool) {
    wait_for(h, what, |a| {
        a.opening.is_none()
            && a.doc.as_ref().is_some_and(|d| {
                d.rec.indexed.is_some()
                    && d.rec.bag.summary().topic("/speed").is_some() == has
                    && (has || !d.scripts.message_errors.is_empty())
            })
    });
}

/// Every value of the expression `path` with its receive time, as the library reads them.
fn values(d: &bagscope_app::Doc, path: &str) -> Vec<(u64, f64)> {
    let e = bagscope_reader::expr::Expr::parse(path).unwrap();
    let s = bagscope_reader::series::expr_series(
        &d.rec.bag,
        &[e],
        &Default::default(),
        (None, None),
        1,
        &std::sync::atomic::AtomicBool::new(false),
    )
    .unwrap();
    s[0].points
        .iter()
        .map(|p| (p.time_ns, p.value.as_f64().unwrap()))
        .collect()
}

#[test]
fn a_message_script_is_written_applied_saved_and_opened_again() {
    let dir = common::temp_dir("ui-message-scripts");
    let run = dir.join("run.bag");
    bagscope_ops::demo::write_demo(&run, 10).unwrap();
    let mut h = harness(Some(run.clone()));
    wait_for(&mut h, "indexing", indexed);
    h.state_mut()
        .apply(Cmd::AddSeries("/odom.pose.pose.position.x".into()));
    menu(&mut h, "View", "Scripts");
    h.run_steps(3);
    h.get_by_label("Message scripts (virtual topics)").click();
    h.run_steps(2);
    h.get_by_label("New").click();
    h.run_steps(2);
    // A syntax error: the recording opens again without the script, the error at its line.
    *draft(&mut h) = Draft {
        topic: "/speed".into(),
        output_type: "std_msgs/msg/Float64".into(),
        inputs: "/odom".into(),
        code: "function message(topic, msg, time)\n  return { data = 3.6 * }\nend\n".into(),
    };
    h.run_steps(2);
    h.get_by_label("Apply").click();
    h.run_steps(2);
    wait_reopened(&mut h, "the recording again, without the script", false);
    h.run_steps(3);
    let d = h.state().doc.as_ref().unwrap();
    let e = &d.scripts.message_errors[0];
    assert_eq!((e.script.as_str(), e.line), ("/speed", Some(2)), "{e}");
    assert!(d.scripts.open && d.scripts.messages_tab);
    assert_eq!(d.scripts.message.draft.topic, "/speed", "the draft kept");
    assert!(h.query_by_label_contains("line 2").is_some());
    // Fixed: the virtual topic made on the loader's worker; the plot kept.
    draft(&mut h).code =
        "function message(topic, msg, time)\n  return { data = 3.6 * msg.twist.twist.linear.x }\nend\n"
            .into();
    h.run_steps(2);
    h.get_by_label("Apply").click();
    h.run_steps(2);
    wait_reopened(&mut h, "the virtual topic", true);
    wait_for(&mut h, "the plot again", |a| {
        a.doc.as_ref().is_some_and(|d| {
            d.plots
                .series
                .iter()
                .any(|s| s.path == "/odom.pose.pose.position.x" && s.done)
        })
    });
    let d = h.state().doc.as_ref().unwrap();
    assert!(d.scripts.message_errors.is_empty());
    let odom = values(d, "/odom.twist.twist.linear.x");
    let speed = values(d, "/speed.data");
    assert!(odom.len() > 50);
    assert_eq!(speed.len(), odom.len());
    for ((t, v), (ts, s)) in odom.iter().zip(&speed) {
        assert_eq!((*ts, *s), (*t, 3.6 * v));
    }
    // Saved in a layout, and made again from it on the recording opened afresh.
    let layout = dir.join("speed.json");
    h.state_mut().apply(Cmd::SaveLayoutTo(layout.clone()));
    wait_for(&mut h, "the layout written", |_| layout.exists());
    let text = std::fs::read_to_string(&layout).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["message_scripts"][0]["topic"], "/speed", "{text}");
    assert_eq!(v["message_scripts"][0]["type"], "std_msgs/msg/Float64");
    let mut fresh = harness(Some(run));
    wait_for(&mut fresh, "indexing", indexed);
    assert!(fresh
        .state()
        .doc
        .as_ref()
        .unwrap()
        .rec
        .bag
        .summary()
        .topic("/speed")
        .is_none());
    fresh.state_mut().apply(Cmd::OpenLayoutFrom(layout));
    wait_reopened(&mut fresh, "the layout's virtual topic", true);
    let d = fresh.state().doc.as_ref().unwrap();
    assert_eq!(values(d, "/speed.data"), speed);
    assert_eq!(d.scripts.messages.len(), 1);
}
