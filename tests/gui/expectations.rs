//! File › Check expectations… (and `--expect`): the recording checked against a rules file on a
//! worker, its failures red range bookmarks on the timeline; a check run again replaces them; a
//! rules file's mistake is said with its line.

use bagscope_app::Cmd;

use crate::common;
use crate::*;

#[test]
fn failed_expectations_are_red_bookmarks_over_their_ranges() {
    let dir = common::temp_dir("ui-expect");
    let run = dir.join("run.bag");
    bagscope_ops::demo::write_demo(&run, 10).unwrap();
    let rules = dir.join("rules.yaml");
    std::fs::write(
        &rules,
        "topics:\n  /imu/data:\n    rate: [200, null]\n    max_gap: 1\n  /battery/voltage:\n    values:\n      - .data > 100\n",
    )
    .unwrap();
    let mut h = harness(Some(run));
    wait_for(&mut h, "indexing", indexed);
    // The menu item is there (it opens a file dialog, not clicked here).
    h.get_by_label("File").click();
    h.run_steps(2);
    assert!(h
        .query_all_by_label_contains("Check expectations…")
        .next()
        .is_some());
    h.key_press(egui::Key::Escape);
    h.run_steps(1);
    h.state_mut().apply(Cmd::CheckExpectations(rules.clone()));
    wait_for(&mut h, "the check", |a| {
        a.notice
            .as_deref()
            .is_some_and(|n| n.contains("2 of 5 expectations failed"))
    });
    let d = h.state().doc.as_ref().unwrap();
    let (a, b) = d.rec.range();
    let marks: Vec<&(u64, String)> = d
        .nav
        .bookmarks
        .iter()
        .filter(|(_, l)| l.starts_with(bagscope_app::expect::LABEL))
        .collect();
    assert_eq!(marks.len(), 2, "{:?}", d.nav.bookmarks);
    assert!(marks
        .iter()
        .any(|(_, l)| l.contains("rate /imu/data") && l.ends_with("rules.yaml:3]")));
    let battery = d
        .rec
        .notes
        .iter()
        .find(|n| n.label.contains("value /battery/voltage"))
        .unwrap();
    // Every battery sample fails: the range is the first to the last.
    assert!(battery.start_ns >= a && battery.end_ns.unwrap() <= b);
    assert!(battery.end_ns.unwrap() - battery.start_ns > 8_000_000_000);
    assert_eq!(battery.color, "#e0483e");
    h.run_steps(3);
    // Met rules: the failures of the check before are gone.
    std::fs::write(&rules, "topics:\n  /imu/data:\n    rate: [90, 110]\n").unwrap();
    h.state_mut().apply(Cmd::CheckExpectations(rules.clone()));
    wait_for(&mut h, "the second check", |a| {
        a.notice
            .as_deref()
            .is_some_and(|n| n.contains("all 2 expectations met"))
    });
    let d = h.state().doc.as_ref().unwrap();
    assert!(!d
        .nav
        .bookmarks
        .iter()
        .any(|(_, l)| l.starts_with(bagscope_app::expect::LABEL)));
    // A mistake: said with its line, nothing changed.
    std::fs::write(&rules, "topics:\n  /imu/data:\n    rte: [90, 110]\n").unwrap();
    h.state_mut().apply(Cmd::CheckExpectations(rules));
    wait_for(&mut h, "the error", |a| {
        a.error
            .as_deref()
            .is_some_and(|e| e.contains("rules.yaml:3: /imu/data: unknown key \"rte\""))
    });
}
