//! The log panel's filters and Find's hits, each moving the playhead.

use egui::{Event, Key, Modifiers};
use egui_kittest::kittest::Queryable;

use crate::common;
use crate::*;

#[test]
fn the_log_panel_filters_and_moves_the_playhead() {
    // plotjuggler/out.bag: 194 rosout lines (98 INFO, 96 WARN) from /talker and the recorder.
    let bag = common::corpus_dir().join("plotjuggler/out.bag");
    let mut h = harness(Some(bag));
    wait_for(&mut h, "the log", |a| {
        a.doc
            .as_ref()
            .is_some_and(|d| d.rec.indexed.is_some() && d.log.done.is_some())
    });
    assert_eq!(
        h.state()
            .doc
            .as_ref()
            .unwrap()
            .log
            .marks
            .values()
            .map(Vec::len)
            .sum::<usize>(),
        96,
        "a timeline mark per warning"
    );
    h.get_by_label("Log (194)").click();
    // A new window takes a frame to size itself before it is shown.
    h.run_steps(4);
    assert!(h.query_all_by_label_contains("194 of 194 lines").count() >= 1);
    // Hide INFO: the warnings remain.
    h.get_by_label("INFO 98").click();
    h.run_steps(2);
    assert!(h.query_all_by_label_contains("96 of 194 lines").count() >= 1);
    // One node, then a text search.
    h.state_mut().doc.as_mut().unwrap().log.node = "/talker".into();
    h.run_steps(2);
    assert!(h.query_all_by_label_contains("95 of 194 lines").count() >= 1);
    h.state_mut().doc.as_mut().unwrap().log.text = "LOOK AT".into();
    h.run_steps(2);
    assert!(h.query_all_by_label_contains("95 of 194 lines").count() >= 1);
    h.state_mut().doc.as_mut().unwrap().log.text = "nothing like this".into();
    h.run_steps(2);
    assert!(h.query_all_by_label_contains("0 of 194 lines").count() >= 1);
    h.state_mut().doc.as_mut().unwrap().log.text.clear();
    h.run_steps(2);
    // A click on a line moves the playhead to it.
    let (t, label) = {
        let d = h.state().doc.as_ref().unwrap();
        let i = d.log.filtered()[3] as usize;
        let l = &d.log.lines[i];
        let t = l.time_ns;
        let rel = (t - d.rec.range().0) as f64 / 1e9;
        (t, format!("{rel:>9.3}  WARN   /talker:"))
    };
    h.get_all_by_label_contains(&label).next().unwrap().click();
    h.run_steps(2);
    assert_eq!(h.state().doc.as_ref().unwrap().nav.playhead, t);
}

#[test]
fn find_lists_hits_and_steps_the_playhead() {
    let dir = common::temp_dir("ui-find");
    let p = dir.join("demo.bag");
    // 30 s: the robot crosses x = 2 m twice, so that F3 and Shift+F3 have a next and a previous.
    bagscope_ops::demo::write_demo(&p, 30).unwrap();
    let query = "/odom.pose.pose.position.x crosses 2.0";
    // The crossings worked out here from the messages `echo --json` prints (the decoder, not
    // the field extractor Find runs on).
    let expect: Vec<u64> = {
        let out = common::bagscope(&[&"echo", &p, &"--json", &"--topic", &"/odom"]).ok();
        let xs: Vec<(u64, f64)> = out
            .lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                (
                    v["time_ns"].as_u64().unwrap(),
                    v["message"]["pose"]["pose"]["position"]["x"]
                        .as_f64()
                        .unwrap(),
                )
            })
            .collect();
        xs.windows(2)
            .filter(|w| (w[0].1 < 2.0) != (w[1].1 < 2.0))
            .map(|w| w[1].0)
            .collect()
    };
    assert_eq!(expect.len(), 2, "{expect:?}");
    let mut h = harness(Some(p));
    wait_for(&mut h, "indexing", indexed);
    menu(&mut h, "Tools", "Find…");
    h.run_steps(4);
    h.check_accessibility();
    h.state_mut().doc.as_mut().unwrap().find.query = query.into();
    h.get_by_label("Find all").click();
    wait_for(&mut h, "the search", |a| {
        a.doc
            .as_ref()
            .is_some_and(|d| d.find.searched.is_some() && !d.find.running())
    });
    let d = h.state().doc.as_ref().unwrap();
    assert_eq!(
        d.find.hits.iter().map(|h| h.time_ns).collect::<Vec<_>>(),
        expect
    );
    let label = format!(
        "{} hit{} for {query}",
        expect.len(),
        if expect.len() == 1 { "" } else { "s" }
    );
    assert!(h.query_all_by_label_contains(&label).count() >= 1);
    // Next moves the playhead to the first hit, F3 to the next, Shift+F3 back.
    h.get_by_label("Next >").click();
    h.run_steps(2);
    assert_eq!(h.state().doc.as_ref().unwrap().nav.playhead, expect[0]);
    {
        h.key_press(Key::F3);
        h.run_steps(2);
        assert_eq!(h.state().doc.as_ref().unwrap().nav.playhead, expect[1]);
        h.event(Event::Key {
            key: Key::F3,
            physical_key: None,
            pressed: true,
            repeat: false,
            modifiers: Modifiers::SHIFT,
        });
        h.run_steps(2);
        assert_eq!(h.state().doc.as_ref().unwrap().nav.playhead, expect[0]);
    }
    // A bad query says what is wrong.
    h.state_mut().doc.as_mut().unwrap().find.query = "/odom.pose > lots".into();
    h.get_by_label("Find all").click();
    h.run_steps(2);
    assert!(h.query_all_by_label_contains("is not a number").count() >= 1);
}
