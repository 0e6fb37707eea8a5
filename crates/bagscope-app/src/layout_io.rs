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
        // A layout's message scripts: the recording opened again with them first (on the
        // loader's worker), the layout again once it is (the scripts then equal: no loop).
        if !f.message_scripts.is_empty() && f.message_scripts != d.scripts.messages {
            if let Some(parts) = Self::reopen_alone(d) {
                self.context.scripts.messages = f.message_scripts.clone();
                self.pending_layout = Some((p.to_path_buf(), text.to_string()));
                self.cmds.push(Cmd::OpenMany(parts));
                return;
            }
            d.layout_notes.push(
                "message scripts: virtual topics are made of one recording, not of several".into(),
            );
        }
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

    /// The recording of `d` to open again, where it is one recording (message scripts make
    /// virtual topics of one alone).
    fn reopen_alone(d: &crate::Doc) -> Option<Vec<bagscope_reader::bag::merge::Part>> {
        match &d.rec.parts[..] {
            [p] if p.offset_ns == 0 => Some(d.rec.parts.clone()),
            [] => Some(bagscope_reader::bag::merge::parts_of(std::slice::from_ref(
                &d.rec.path,
            ))),
            _ => None,
        }
    }

    /// Opens the recording again with the message scripts `all` (the Scripts window's Apply),
    /// showing what it shows now; the window open on the script edited (`at`).
    pub(super) fn apply_message_scripts(
        &mut self,
        all: Vec<bagscope_ops::script::message::MessageScript>,
        at: Option<usize>,
    ) {
        let Some(d) = &mut self.doc else { return };
        let Some(parts) = Self::reopen_alone(d) else {
            d.scripts.message_apply_error =
                Some("message scripts make virtual topics of one recording, not of several".into());
            return;
        };
        let mut f = layout_file::capture(d);
        f.message_scripts = all.clone();
        f.windows.scripts = true;
        self.context.scripts.messages = all;
        self.scripts_after_load = Some(at.or(Some(f.message_scripts.len().saturating_sub(1))));
        self.pending_layout = Some((PathBuf::from("(message scripts)"), f.to_json()));
        self.cmds.push(Cmd::OpenMany(parts));
    }
}
