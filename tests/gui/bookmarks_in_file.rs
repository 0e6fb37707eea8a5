//! File › Save bookmarks into the recording…: asked first, then written (a bag: the sidecar
//! beside it); a fresh app (no storage of its own) opens the recording with them.

use bagscope_app::Cmd;

use crate::common;
use crate::*;

#[test]
fn bookmarks_saved_into_the_recording_come_back_in_a_fresh_app() {
    let dir = common::temp_dir("ui-notes");
    let run = dir.join("run.bag");
    bagscope_ops::demo::write_demo(&run, 10).unwrap();
    let mut h = harness(Some(run.clone()));
    wait_for(&mut h, "indexing", indexed);
    let (a, _) = h.state().doc.as_ref().unwrap().rec.range();
    h.state_mut().apply(Cmd::AddBookmark(a + 3_000_000_000));
    // A range, from the selection (Ctrl+B), in a colour of its own.
    h.state_mut().apply(Cmd::SetSelection(Some((
        a + 5_000_000_000,
        a + 7_000_000_000,
    ))));
    h.run_steps(1);
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::B);
    h.run_steps(2);
    menu(&mut h, "File", "Save bookmarks into the recording…");
    assert!(h.state().doc.as_ref().unwrap().bookmarks_io.asking);
    h.run_steps(3);
    assert!(
        h.query_all_by_label_contains("run.bag.bookmarks.json")
            .count()
            >= 1
    );
    h.get_by_label("Write").click();
    h.run_steps(2);
    let side = dir.join("run.bag.bookmarks.json");
    wait_for(&mut h, "the sidecar", |a| {
        a.notice
            .as_deref()
            .is_some_and(|n| n.starts_with("Bookmarks written"))
    });
    assert!(side.is_file());
    // A fresh app, nothing kept of its own: the bookmark comes from beside the recording.
    let mut h = harness(Some(run));
    wait_for(&mut h, "indexing", indexed);
    let d = h.state().doc.as_ref().unwrap();
    assert_eq!(d.nav.bookmarks.len(), 2);
    assert_eq!(d.nav.bookmarks[0].0, a + 3_000_000_000);
    let range = &d.rec.notes[1];
    assert_eq!(
        (range.start_ns, range.end_ns, range.label.as_str()),
        (a + 5_000_000_000, Some(a + 7_000_000_000), "Range 2")
    );
    assert!(range.color.starts_with('#'));
}
