//! Layout files opened and saved from the app (File › Open layout…, Save layout…, and
//! `bagscope --layout FILE`): the dialogs and the file's reading and writing on workers, the
//! layout applied to the recording shown, or to the one being opened once it is.

use std::path::{Path, PathBuf};

use super::job::Job;
use super::layout_file;
use super::{App, Cmd};

/// What a layout worker hands back.
pub enum LayoutIo {
    /// A file chosen in a dialog: to save to (`true`) or open.
    Chosen(bool, Option<PathBuf>),
    /// A file read.
    Read(PathBuf, Result<String, String>),
    /// A file written.
    Wrote(Result<PathBuf, String>),
}

impl App {
    fn layout_job(&mut self, name: &str, work: impl FnOnce() -> LayoutIo + Send + 'static) {
        match Job::spawn(name, 1, &self.ctx, move |h| {
            h.send(work());
        }) {
            Ok(j) => self.layout_io.push(j),
            Err(e) => self.error = Some(e),
        }
    }

    /// The layout commands.
    pub(super) fn layout_cmd(&mut self, cmd: Cmd) {
        match cmd {
            Cmd::SaveLayoutDialog | Cmd::OpenLayoutDialog => {
                let save = cmd == Cmd::SaveLayoutDialog;
                self.layout_job("layout-dialog", move || {
                    let d = rfd::FileDialog::new().add_filter("Layouts", &["json", "xml"]);
                    LayoutIo::Chosen(
                        save,
                        if save {
                            d.set_file_name("layout.json").save_file()
                        } else {
                            d.pick_file()
                        },
                    )
                });
            }
            Cmd::OpenLayoutFrom(p) => self.layout_job("layout-read", move || {
                let r = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()));
                LayoutIo::Read(p, r)
            }),
            Cmd::SaveLayoutTo(p) => {
                let Some(d) = &self.doc else { return };
                let text = layout_file::capture(d).to_json();
                self.layout_job("layout-write", move || {
                    LayoutIo::Wrote(
                        bagscope_reader::storage::write_atomically(&p, text.as_bytes())
                            .map(|()| p.clone())
                            .map_err(|e| format!("{}: {e}", p.display())),
                    )
                });
            }
            _ => {}
        }
    }

    /// Takes what the layout workers finished.
    pub(super) fn poll_layout(&mut self) {
        let mut done = Vec::new();
        self.layout_io.retain_mut(|j| match j.take() {
            Some(r) => {
                done.push(r);
                false
            }
            None => true,
        });
        for r in done {
            match r {
                LayoutIo::Chosen(true, Some(p)) => self.cmds.push(Cmd::SaveLayoutTo(p)),
                LayoutIo::Chosen(false, Some(p)) => self.cmds.push(Cmd::OpenLayoutFrom(p)),
                LayoutIo::Chosen(_, None) => {}
                LayoutIo::Read(_, Err(e)) | LayoutIo::Wrote(Err(e)) => self.error = Some(e),
                LayoutIo::Wrote(Ok(p)) => {
                    self.notice = Some(format!("Layout saved to {}", p.display()));
                }
                LayoutIo::Read(p, Ok(text)) => {
                    if self.doc.is_some() && self.opening.is_none() {
                        self.apply_layout(&p, &text);
                    } else {
                        // Applied to the recording being opened, once it is.
                        self.pending_layout = Some((p, text));
                    }
                }
            }
        }
    }

    /// Shows the layout `text` (read from `p`) on the open recording.
    pub(super) fn apply_layout(&mut self, p: &Path, text: &str) {
        let Some(d) = &mut self.doc else { return };
        let (f, notes) = match layout_file::parse(text, d.rec.bag.summary()) {
            Ok(x) => x,
            Err(e) => {
                self.error = Some(format!("{}: {e}", p.display()));
                return;
            }
        };
        d.plots.series.clear();
        let applied = layout_file::apply(d, &f);
        d.layout_notes.extend(notes);
        if let Some(parts) = applied.reopen {
            // The runs at the layout's offsets first; the layout again once they are open.
            self.pending_layout = Some((p.to_path_buf(), text.to_string()));
            self.cmds.push(Cmd::OpenMany(parts));
            return;
        }
        self.cmds
            .extend(applied.state_rows.into_iter().map(Cmd::AddStateRow));
        if d.rec.indexed.is_some() {
            self.cmds
                .extend(applied.series.into_iter().map(Cmd::AddSeries));
        } else {
            self.pending_series = applied.series;
        }
    }
}
