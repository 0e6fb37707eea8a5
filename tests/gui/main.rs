//! The real app driven headless with egui_kittest: open a corpus bag and a dropped file, wait
//! for indexing, check the tree, select a topic, step the playhead with the keyboard, check the
//! inspector's decoded value, select a range, cancel indexing, open a non-bag.
#![cfg(feature = "gui")]
#![allow(clippy::unwrap_used)]

mod bookmarks_in_file;
mod camera_overlay;
mod camera_screen;
#[path = "../common/mod.rs"]
mod common;
mod compare_runs;
mod diagnostics_panel;
mod encodings_and_url;
mod expectations;
mod export_window;
mod expressions;
mod image_encodings;
mod image_panels;
mod layout_files;
mod log_and_find;
mod map_panel;
mod map_screen;
mod menus_and_palette;
mod message_scripts;
mod open_and_navigate;
mod persisted;
mod plot_and_export;
mod publish_and_live;
mod scene_panel;
mod screen;
mod scripts_window;
mod state_rows;
mod tf_window;
mod timing_layout_runs;
mod tree_and_inspector;
mod video_panel;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use bagscope_app::App;
use egui_kittest::kittest::{NodeT, Queryable};
use egui_kittest::Harness;

pub(crate) fn harness(bag: Option<PathBuf>) -> Harness<'static, App> {
    harness_with(None, bag)
}

/// The app started with `storage` (what a previous run saved).
pub(crate) fn harness_with(
    storage: Option<&dyn eframe::Storage>,
    bag: Option<PathBuf>,
) -> Harness<'static, App> {
    Harness::builder()
        .with_size([1600.0, 1000.0])
        .build_ui_state(|ui, app: &mut App| app.ui(ui), App::new(storage, bag))
}

/// Clicks `item` in the menu bar's `menu` (File, View, Tools, Help).
pub(crate) fn menu(h: &mut Harness<'_, App>, menu: &str, item: &str) {
    h.get_by_label(menu).click();
    h.run_steps(2);
    // An item's label carries its shortcut after its name.
    h.query_all_by_label_contains(item)
        .find(|n| {
            n.accesskit_node()
                .label()
                .is_some_and(|l| l == item || l.starts_with(&format!("{item} ")))
        })
        .unwrap_or_else(|| {
            let seen: Vec<String> = h
                .query_all_by_label_contains(item)
                .filter_map(|n| n.accesskit_node().label())
                .collect();
            panic!("no {item} in {menu}: {seen:?}")
        })
        .click();
    h.run_steps(2);
}

/// Waits for the export job the window started and returns how it ended.
pub(crate) fn export_result(h: &mut Harness<'_, App>) -> Option<Result<String, String>> {
    wait_for(h, "the export", |a| {
        a.doc
            .as_ref()
            .is_some_and(|d| d.export.job.as_ref().is_some_and(|j| j.result.is_some()))
    });
    h.state()
        .doc
        .as_ref()
        .and_then(|d| d.export.job.as_ref())
        .and_then(|j| j.result.clone())
}

/// A primary click at `at` (moved there, pressed, released), and two frames after.
pub(crate) fn click_at(h: &mut Harness<'_, App>, at: egui::Pos2) {
    h.event(egui::Event::PointerMoved(at));
    h.step();
    for pressed in [true, false] {
        h.event(egui::Event::PointerButton {
            pos: at,
            button: egui::PointerButton::Primary,
            pressed,
            modifiers: egui::Modifiers::NONE,
        });
        h.step();
    }
    h.run_steps(2);
}

/// Steps frames until `f` holds (the workers run on their own threads).
pub(crate) fn wait_for(h: &mut Harness<'_, App>, what: &str, f: impl Fn(&App) -> bool) {
    let t0 = Instant::now();
    while !f(h.state()) {
        assert!(
            t0.elapsed() < Duration::from_secs(60),
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(5));
        h.step();
    }
    h.run_steps(2);
}

pub(crate) fn indexed(a: &App) -> bool {
    a.doc.as_ref().is_some_and(|d| d.rec.indexed.is_some())
}

/// The inspector shows the message at the playhead (there is one).
pub(crate) fn inspected(a: &App) -> bool {
    a.doc.as_ref().is_some_and(|d| {
        d.insp.key.is_some()
            && d.insp
                .shown
                .as_ref()
                .is_some_and(|i| Some(i.key) == d.insp.key)
    })
}

/// The index of topic `name` in the open recording.
pub(crate) fn topic_index(h: &Harness<'_, App>, name: &str) -> usize {
    let d = h.state().doc.as_ref().unwrap();
    d.rec
        .bag
        .summary()
        .topics
        .iter()
        .position(|t| t.name == name)
        .unwrap()
}

/// An in-memory stand-in for the app's persistent storage.
#[derive(Default)]
pub(crate) struct MemStorage(std::collections::HashMap<String, String>);

impl eframe::Storage for MemStorage {
    fn get_string(&self, key: &str) -> Option<String> {
        self.0.get(key).cloned()
    }
    fn set_string(&mut self, key: &str, value: String) {
        self.0.insert(key.to_string(), value);
    }
    fn remove_string(&mut self, key: &str) {
        self.0.remove(key);
    }
    fn flush(&mut self) {}
}
