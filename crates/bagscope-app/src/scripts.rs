//! The Scripts window: the series scripts the plots know (a layout's, PlotJuggler's snippets,
//! `--script` files), each edited in a text editor with line numbers: its name, sources,
//! global section and function. Apply checks it (sources in the recording, Lua that parses:
//! the error shown at its line) and plots its series, run on a worker; Revert goes back to
//! the script as applied. Nothing runs on the UI thread.

use egui::{Color32, RichText, TextEdit};

use super::{Cmd, Doc};
use bagscope_ops::script::{self, Dialect, Part, ScriptError, SeriesScript};

/// The window's state.
#[derive(Default)]
pub struct ScriptsState {
    /// Shown.
    pub open: bool,
    /// Message scripts shown, not series scripts.
    pub messages_tab: bool,
    /// The message scripts the recording was opened with (asked for: what a layout keeps).
    pub messages: Vec<bagscope_ops::script::message::MessageScript>,
    /// Why they did not make their virtual topics (the recording then opened without them).
    pub message_errors: Vec<ScriptError>,
    /// The message script being edited.
    pub message: super::message_scripts::Editing,
    /// Why the last Apply of a message script was refused before the loader had it.
    pub message_apply_error: Option<String>,
    /// The script being edited: an index into the plots' scripts, or a new one.
    pub selected: Option<usize>,
    /// The text being edited.
    pub draft: Draft,
    /// Why the last Apply was refused.
    pub error: Option<ScriptError>,
}

/// A script as edited.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Draft {
    pub name: String,
    /// The sources, one a line: the main series first.
    pub sources: String,
    pub global: String,
    pub function: String,
}

impl Draft {
    fn of(s: &SeriesScript) -> Draft {
        Draft {
            name: s.name.clone(),
            sources: std::iter::once(&s.linked)
                .chain(&s.additional)
                .cloned()
                .collect::<Vec<_>>()
                .join("\n"),
            global: s.global.clone(),
            function: s.function.clone().unwrap_or_default(),
        }
    }

    /// The script it makes, in the dialect of `was` (a new one: bagscope's).
    pub fn script(&self, was: Option<&SeriesScript>) -> SeriesScript {
        let mut sources = self
            .sources
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(str::to_string);
        let dialect = was.map_or(Dialect::Bagscope, |w| w.dialect);
        let function = match (was, self.function.trim().is_empty()) {
            // A script file defines calc in its global section.
            (Some(w), true) if w.function.is_none() => None,
            _ => Some(self.function.clone()),
        };
        SeriesScript {
            name: self.name.trim().to_string(),
            global: self.global.clone(),
            function,
            linked: sources.next().unwrap_or_default(),
            additional: sources.collect(),
            dialect,
        }
    }
}

/// Applies `s` (replacing script `at`, or added): the error that stops it, else its series
/// plotted again (or for the first time).
pub fn apply(d: &mut Doc, at: Option<usize>, s: SeriesScript, ctx: &egui::Context) {
    let errors = script::check(&d.rec.bag, std::slice::from_ref(&s), &Default::default());
    let taken = d
        .plots
        .scripts
        .iter()
        .enumerate()
        .any(|(i, x)| x.name == s.name && Some(i) != at);
    let error = if s.name.is_empty() || taken {
        Some(ScriptError::script(
            &s.name,
            script::ScriptErrorKind::Source,
            if taken {
                "another script has this name".into()
            } else {
                "give it a name: its series is plotted under it".into()
            },
        ))
    } else {
        // A source that is another script's series is not in the recording: those are fine.
        errors.into_iter().find(|e| {
            !(e.kind == script::ScriptErrorKind::Source
                && d.plots
                    .scripts
                    .iter()
                    .any(|x| e.message.contains(&format!("{:?}", x.name))))
        })
    };
    if let Some(e) = error {
        d.scripts.error = Some(e);
        return;
    }
    d.scripts.error = None;
    let old = at
        .and_then(|i| d.plots.scripts.get(i))
        .map(|x| x.name.clone());
    match at.filter(|&i| i < d.plots.scripts.len()) {
        Some(i) => d.plots.scripts[i] = s.clone(),
        None => {
            d.plots.scripts.push(s.clone());
            d.scripts.selected = Some(d.plots.scripts.len() - 1);
        }
    }
    // Its series (under its old name too) read again; a new one plotted.
    d.plots
        .series
        .retain(|x| old.as_deref() != Some(x.path.as_str()) || x.path == s.name);
    if d.plots.series.iter().any(|x| x.path == s.name) {
        super::plot::refresh(d, ctx);
    } else if let Err(e) = super::plot::add_series(d, &s.name, ctx) {
        d.plots.error = Some(format!("cannot plot: {e}"));
    }
}

/// The editors' margin (the line numbers start as far down).
const MARGIN: egui::Margin = egui::Margin::symmetric(4, 2);

/// A code editor with line numbers; the line `bad` (from 1) numbered in red.
pub(crate) fn editor(ui: &mut egui::Ui, id: &str, text: &mut String, bad: Option<u32>) {
    ui.horizontal_top(|ui| {
        let lines = text.split('\n').count().max(1);
        // The editor's own font and line height, its text below its margin.
        let font = egui::TextStyle::Monospace.resolve(ui.style());
        let mut numbers = egui::text::LayoutJob::default();
        for n in 1..=lines {
            let colour = if Some(n as u32) == bad {
                Color32::from_rgb(252, 129, 129)
            } else {
                ui.visuals().weak_text_color()
            };
            numbers.append(
                &format!("{n:>3}\n"),
                0.0,
                egui::TextFormat {
                    font_id: font.clone(),
                    color: colour,
                    ..Default::default()
                },
            );
        }
        ui.vertical(|ui| {
            ui.add_space(f32::from(MARGIN.top));
            ui.label(numbers);
        });
        ui.add(
            TextEdit::multiline(text)
                .id_salt(id)
                .code_editor()
                .margin(MARGIN)
                .desired_rows(lines.max(4))
                .desired_width(f32::INFINITY),
        );
    });
}

/// The window.
pub fn show(ctx: &egui::Context, d: &mut Doc, cmds: &mut Vec<Cmd>) {
    let mut open = d.scripts.open;
    egui::Window::new("Scripts")
        .open(&mut open)
        .default_size([720.0, 520.0])
        .show(ctx, |ui| {
            ui.horizontal(|ui| {
                ui.selectable_value(&mut d.scripts.messages_tab, false, "Series scripts");
                ui.selectable_value(
                    &mut d.scripts.messages_tab,
                    true,
                    "Message scripts (virtual topics)",
                );
            });
            ui.separator();
            if d.scripts.messages_tab {
                super::message_scripts::show(ui, d, cmds);
                return;
            }
            // Opened with scripts and none chosen: the first.
            if d.scripts.selected.is_none() && d.scripts.draft == Draft::default() {
                if let Some(first) = d.plots.scripts.first() {
                    d.scripts.selected = Some(0);
                    d.scripts.draft = Draft::of(first);
                }
            }
            ui.horizontal_wrapped(|ui| {
                for (i, s) in d.plots.scripts.iter().enumerate() {
                    if ui
                        .selectable_label(d.scripts.selected == Some(i), &s.name)
                        .clicked()
                    {
                        d.scripts.selected = Some(i);
                        d.scripts.draft = Draft::of(s);
                        d.scripts.error = None;
                    }
                }
                if ui.button("New").clicked() {
                    d.scripts.selected = None;
                    d.scripts.draft = Draft {
                        function: "return value".into(),
                        ..Default::default()
                    };
                    d.scripts.error = None;
                }
            });
            ui.separator();
            let was = d.scripts.selected.and_then(|i| d.plots.scripts.get(i)).cloned();
            let s = &mut d.scripts;
            egui::Grid::new("script-head").num_columns(2).show(ui, |ui| {
                ui.label("Name");
                ui.add(
                    TextEdit::singleline(&mut s.draft.name)
                        .id_salt("script-name")
                        .desired_width(420.0),
                );
                ui.end_row();
                ui.label("Sources")
                    .on_hover_text("One a line: the main series (its samples drive the calls), then v1, v2, ...");
                ui.add(
                    TextEdit::multiline(&mut s.draft.sources)
                        .id_salt("script-sources")
                        .code_editor()
                        .desired_rows(2)
                        .desired_width(420.0),
                );
                ui.end_row();
            });
            let bad = |part: Part| {
                s.error
                    .as_ref()
                    .filter(|e| e.part == part)
                    .and_then(|e| e.line)
            };
            let (bad_global, bad_function) = (bad(Part::Global), bad(Part::Function));
            ui.label("Global section (run once)");
            editor(ui, "script-global", &mut s.draft.global, bad_global);
            ui.label("Function: calc(time, value, v1, ...)");
            editor(ui, "script-function", &mut s.draft.function, bad_function);
            if let Some(e) = &s.error {
                ui.label(RichText::new(e.to_string()).color(Color32::from_rgb(252, 129, 129)));
            }
            // A runtime error comes from the worker, as the series' note.
            if let Some(note) = d
                .plots
                .series
                .iter()
                .find(|x| x.path == d.scripts.draft.name.trim())
                .and_then(|x| x.note.clone())
            {
                ui.label(RichText::new(note).color(Color32::from_rgb(246, 173, 85)));
            }
            ui.horizontal(|ui| {
                if ui.button("Apply").clicked() {
                    let script = d.scripts.draft.script(was.as_ref());
                    cmds.push(Cmd::ApplyScript(d.scripts.selected, script));
                }
                let changed = was.as_ref().is_some_and(|w| Draft::of(w) != d.scripts.draft);
                if ui.add_enabled(changed, egui::Button::new("Revert")).clicked() {
                    if let Some(w) = &was {
                        d.scripts.draft = Draft::of(w);
                        d.scripts.error = None;
                    }
                }
            });
        });
    if !open {
        cmds.push(Cmd::ShowScripts(false));
    }
}
