//! The menu bar (File, View, Tools, Help with each item's shortcut), the shortcuts themselves,
//! the Help window that lists them, the command palette (Ctrl+K) and Reload (F5) keeping the
//! plots; the menus fit a narrow window.

use egui::accesskit::Role;
use egui::{Key, Modifiers};
use egui_kittest::kittest::{NodeT, Queryable};

use crate::common;
use crate::*;

fn demo(name: &str) -> (common::TempDir, Harness<'static, App>) {
    let dir = common::temp_dir(name);
    let p = dir.join("demo.bag");
    bagscope_ops::demo::write_demo(&p, 20).unwrap();
    let mut h = harness(Some(p));
    wait_for(&mut h, "indexing", indexed);
    (dir, h)
}

/// Types `text` into the palette's box.
fn palette(h: &mut Harness<'static, App>, text: &str) {
    h.key_press_modifiers(Modifiers::COMMAND, Key::K);
    h.run_steps(3);
    assert!(h.state().palette.open, "Ctrl+K opens the palette");
    h.query_all_by_role(Role::TextInput)
        .find(|n| {
            n.accesskit_node()
                .placeholder()
                .is_some_and(|p| p.starts_with("Type an action"))
        })
        .expect("the palette's box")
        .type_text(text);
    h.run_steps(2);
}

#[test]
fn the_menus_hold_every_action_with_its_shortcut() {
    let (_dir, mut h) = demo("ui-menus");
    // Every action of the table sits in its menu, with its shortcut beside it.
    for m in bagscope_app::actions::Menu::ALL {
        h.get_by_label(m.name()).click();
        h.run_steps(2);
        let all = bagscope_app::actions::actions(h.state());
        for a in all.iter().filter(|a| a.menu == m) {
            assert!(
                h.query_all_by_label_contains(a.name).count() >= 1,
                "{} in {}",
                a.name,
                m.name()
            );
        }
        h.key_press(Key::Escape);
        h.run_steps(2);
    }
    // A shortcut is written beside its item.
    h.get_by_label("View").click();
    h.run_steps(2);
    assert!(h.query_all_by_label_contains("Ctrl+I").count() >= 1);
    h.get_by_label_contains("Bag info").click();
    h.run_steps(2);
    assert!(h.state().show_info, "View › Bag info shows the info window");
    h.state_mut().apply(bagscope_app::Cmd::ShowInfo(false));
    h.run_steps(2);
    // The demo has a transform tree: TF is there and opens its window.
    menu(&mut h, "View", "TF");
    assert!(h.state().doc.as_ref().unwrap().tf.open);
}

#[test]
fn shortcuts_act_and_help_lists_them() {
    let (_dir, mut h) = demo("ui-shortcuts");
    h.key_press(Key::F1);
    h.run_steps(3);
    assert!(h.state().show_help);
    assert!(h.query_all_by_label("Keyboard shortcuts").count() >= 1);
    for k in ["Ctrl+K", "Ctrl+O", "F5", "Space"] {
        assert!(
            h.query_all_by_label(k).count() >= 1,
            "{k} in the Help window"
        );
    }
    // ros2 bag play's keys: ↑ a faster rate, ↓ a slower one.
    assert_eq!(h.state().doc.as_ref().unwrap().nav.speed, 1.0);
    h.key_press(Key::ArrowUp);
    h.run_steps(2);
    assert_eq!(h.state().doc.as_ref().unwrap().nav.speed, 1.5);
    h.key_press(Key::ArrowDown);
    h.key_press(Key::ArrowDown);
    h.run_steps(2);
    assert_eq!(h.state().doc.as_ref().unwrap().nav.speed, 0.5);
    // End, then Home.
    let (a, b) = h.state().doc.as_ref().unwrap().rec.range();
    h.key_press(Key::End);
    h.run_steps(2);
    assert_eq!(h.state().doc.as_ref().unwrap().nav.playhead, b);
    h.key_press(Key::Home);
    h.run_steps(2);
    assert_eq!(h.state().doc.as_ref().unwrap().nav.playhead, a);
    h.key_press_modifiers(Modifiers::COMMAND, Key::E);
    h.run_steps(2);
    assert!(h.state().doc.as_ref().unwrap().export.open, "Ctrl+E");
}

#[test]
fn the_palette_finds_actions_topics_panels_and_bookmarks() {
    let (_dir, mut h) = demo("ui-palette");
    // An action: a few letters of it, Enter.
    palette(&mut h, "expo");
    h.key_press(Key::Enter);
    h.run_steps(2);
    assert!(!h.state().palette.open, "Enter closes it");
    assert!(h.state().doc.as_ref().unwrap().export.open, "Export…");
    // A topic: selected.
    palette(&mut h, "imu dat");
    h.key_press(Key::Enter);
    h.run_steps(2);
    let d = h.state().doc.as_ref().unwrap();
    let selected = d
        .nav
        .selected
        .map(|i| d.rec.bag.summary().topics[i].name.clone());
    assert_eq!(selected.as_deref(), Some("/imu/data"));
    // A panel: the kind's words find it.
    let before = h.state().doc.as_ref().unwrap().images.panels.len();
    palette(&mut h, "image panel front");
    h.key_press(Key::Enter);
    h.run_steps(2);
    assert_eq!(
        h.state().doc.as_ref().unwrap().images.panels.len(),
        before + 1
    );
    // A bookmark: B at a time, then back to it from the start.
    let (a, b) = h.state().doc.as_ref().unwrap().rec.range();
    let mid = a + (b - a) / 2;
    h.state_mut().apply(bagscope_app::Cmd::SetPlayhead(mid));
    h.key_press(Key::B);
    h.run_steps(2);
    let name = h.state().doc.as_ref().unwrap().nav.bookmarks[0].1.clone();
    h.key_press(Key::Home);
    h.run_steps(2);
    palette(&mut h, &name);
    // ↓ and ↑ move the choice; Esc closes without doing anything.
    h.key_press(Key::ArrowDown);
    h.key_press(Key::ArrowUp);
    h.run_steps(1);
    assert_eq!(h.state().palette.selected, 0);
    h.key_press(Key::Enter);
    h.run_steps(2);
    assert_eq!(h.state().doc.as_ref().unwrap().nav.playhead, mid);
    palette(&mut h, "close");
    h.key_press(Key::Escape);
    h.run_steps(2);
    assert!(!h.state().palette.open);
    assert!(h.state().doc.is_some(), "Esc did not close the recording");
}

#[test]
fn reload_keeps_the_plots() {
    let (_dir, mut h) = demo("ui-reload");
    h.state_mut().apply(bagscope_app::Cmd::AddSeries(
        "/imu/data.linear_acceleration.x".into(),
    ));
    h.run_steps(2);
    h.key_press(Key::F5);
    h.run_steps(2);
    wait_for(&mut h, "the reloaded recording", |a| {
        a.opening.is_none()
            && a.doc
                .as_ref()
                .is_some_and(|d| d.rec.indexed.is_some() && d.plots.series.iter().all(|s| s.done))
    });
    let names: Vec<String> = h
        .state()
        .doc
        .as_ref()
        .unwrap()
        .plots
        .series
        .iter()
        .map(|s| s.path.clone())
        .collect();
    assert_eq!(names, ["/imu/data.linear_acceleration.x"]);
}

#[test]
fn the_menus_fit_a_narrow_window() {
    let dir = common::temp_dir("ui-narrow");
    let p = dir.join("demo.bag");
    bagscope_ops::demo::write_demo(&p, 20).unwrap();
    let mut h = Harness::builder()
        .with_size([640.0, 600.0])
        .build_ui_state(|ui, app: &mut App| app.ui(ui), App::new(None, Some(p)));
    wait_for(&mut h, "indexing", indexed);
    for m in ["File", "View", "Tools", "Help"] {
        let r = h.get_by_label(m).rect();
        assert!(r.right() <= 640.0, "{m} at {r:?}");
    }
}
