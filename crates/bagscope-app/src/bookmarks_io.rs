//! Bookmarks kept in the recording: read when it opens (MCAP metadata records, a sidecar
//! beside a bag or rosbag2 recording) and shown with the app's own; written back when the
//! user asks and confirms (File › Save bookmarks into the recording…), on a worker.

use std::path::PathBuf;

use bagscope_ops::bookmarks::{in_file, sidecar_path, Bookmark};
use bagscope_ops::tables::export::rewrite_with_bookmarks;

use super::job::Job;
use super::{Cmd, Doc};

/// Writing the bookmarks into the recording.
#[derive(Default)]
pub struct BookmarksIo {
    /// The confirmation is shown.
    pub asking: bool,
    /// Where they would go, decided when asked (it looks at the file system): into the
    /// MCAP file itself, or the sidecar at this path.
    pub into: Option<Result<(), PathBuf>>,
    /// The write under way.
    pub job: Option<Job<Result<PathBuf, String>>>,
}

/// Takes the bookmarks read with the recording: shown with those the app kept for it.
pub fn take(
    d: &mut Doc,
    (notes, problem): (Vec<Bookmark>, Option<String>),
    error: &mut Option<String>,
) {
    for n in &notes {
        if !d
            .nav
            .bookmarks
            .iter()
            .any(|(t, l)| *t == n.start_ns && *l == n.label)
        {
            d.nav.bookmarks.push((n.start_ns, n.label.clone()));
        }
    }
    d.nav.bookmarks.sort();
    d.rec.notes = notes;
    if let Some(p) = problem {
        *error = Some(format!("bookmarks not read: {p}"));
    }
}

/// The bookmarks shown as notes: with the range and colour the recording held for them.
pub fn of_doc(d: &Doc) -> Vec<Bookmark> {
    d.nav
        .bookmarks
        .iter()
        .map(|(t, l)| {
            d.rec
                .notes
                .iter()
                .find(|n| n.start_ns == *t && n.label == *l)
                .cloned()
                .unwrap_or_else(|| Bookmark {
                    start_ns: *t,
                    end_ns: None,
                    label: l.clone(),
                    color: String::new(),
                })
        })
        .collect()
}

/// Starts writing the bookmarks into the recording.
pub fn start(d: &mut Doc, ctx: &egui::Context) {
    d.bookmarks_io.asking = false;
    let (bag, notes) = (d.rec.bag.clone(), of_doc(d));
    d.rec.notes = notes.clone();
    let r = Job::spawn("notes", 1, ctx, move |h| {
        h.send(rewrite_with_bookmarks(&bag, &notes, h.cancel_flag()).map_err(|e| e.to_string()));
    });
    match r {
        Ok(j) => d.bookmarks_io.job = Some(j),
        Err(e) => d.bookmarks_io.job = Some(Job::done(Err(e))),
    }
}

/// What the write came to, once.
pub fn poll(d: &mut Doc) -> Option<Result<PathBuf, String>> {
    let r = d.bookmarks_io.job.as_mut()?.take()?;
    d.bookmarks_io.job = None;
    Some(r)
}

/// Asks before writing: where they would go is decided here, once (on the command, not every
/// frame the confirmation is drawn).
pub fn ask(d: &mut Doc) {
    d.bookmarks_io.asking = true;
    d.bookmarks_io.into = Some(if in_file(&d.rec.bag) {
        Ok(())
    } else {
        Err(sidecar_path(&d.rec.bag.summary().path))
    });
}

/// The confirmation, or the write under way.
pub fn show(ctx: &egui::Context, d: &mut Doc, cmds: &mut Vec<Cmd>) {
    let path = d.rec.bag.summary().path.clone();
    let n = d.nav.bookmarks.len();
    egui::Window::new("Save bookmarks into the recording")
        .collapsible(false)
        .resizable(false)
        .anchor(egui::Align2::CENTER_TOP, [0.0, 120.0])
        .show(ctx, |ui| {
            if d.bookmarks_io.job.is_some() {
                ui.horizontal(|ui| {
                    ui.spinner();
                    ui.label("Writing…");
                });
                return;
            }
            if let Some(Ok(())) = &d.bookmarks_io.into {
                ui.label(format!(
                    "Write {n} bookmark(s) into {} as MCAP metadata records?",
                    path.display()
                ));
                ui.weak("The recording is written again beside it (its messages byte for byte, its other metadata kept) and renamed over it: the file's present bytes are never written over, and a failure leaves it as it is.");
            } else {
                let side = match &d.bookmarks_io.into {
                    Some(Err(side)) => side.clone(),
                    _ => sidecar_path(&path),
                };
                ui.label(format!("Write {n} bookmark(s) to {}?", side.display()));
                ui.weak("A ROS 1 bag or rosbag2 recording keeps them in this file beside it; the recording is not touched.");
            }
            ui.horizontal(|ui| {
                if ui.button("Write").clicked() {
                    cmds.push(Cmd::SaveNotesConfirmed);
                }
                if ui.button("Cancel").clicked() {
                    d.bookmarks_io.asking = false;
                }
            });
        });
}
