//! The bar at the top of the window: the menus (File, View, Tools, Help, each item with its
//! shortcut, from [`actions`](super::actions)), the recording's name and log level, then the
//! status of the background work; and the Help window with every shortcut.

use bagscope_ops::timefmt;

use super::actions::{actions, Action, Menu};
use super::{live, shown_path, App, Cmd, Doc};

impl App {
    pub(super) fn top_bar(&mut self, ui: &mut egui::Ui) {
        egui::Panel::top("menu").show(ui, |ui| {
            egui::MenuBar::new().ui(ui, |ui| {
                let all = actions(self);
                for menu in Menu::ALL {
                    ui.menu_button(menu.name(), |ui| {
                        for a in all.iter().filter(|a| a.menu == menu) {
                            self.menu_item(ui, a);
                            // What is not one command: typed locations, lists.
                            match a.name {
                                "Open folder…" => self.open_submenus(ui),
                                "Command palette…" => self.definitions_menu(ui),
                                _ => {}
                            }
                        }
                        if menu == Menu::Help {
                            ui.separator();
                            ui.weak(format!("bagscope {}", env!("CARGO_PKG_VERSION")));
                        }
                    });
                }
                if let Some(d) = &self.doc {
                    ui.separator();
                    log_button(ui, d, &mut self.cmds);
                    if d.rec.parts.len() > 1
                        && ui
                            .button(format!("Recordings ({})", d.rec.parts.len()))
                            .on_hover_text("Their time shifts on the timeline")
                            .clicked()
                    {
                        self.cmds.push(Cmd::ShowRecordings(!d.recordings.open));
                    }
                    ui.label(egui::RichText::new(shown_path(&d.rec.path)).strong())
                        .on_hover_text(d.rec.path.display().to_string());
                }
            });
            self.status_lines(ui);
        });
        if self.show_help {
            self.help_window(ui.ctx());
        }
    }

    /// One action's menu item: its name, its shortcut beside it, greyed out where it cannot act.
    fn menu_item(&mut self, ui: &mut egui::Ui, a: &Action) {
        let mut b = egui::Button::new(a.name);
        if let Some(k) = &a.keys {
            b = b.shortcut_text(ui.ctx().format_shortcut(k));
        }
        let r = ui.add_enabled(a.cmd.is_some(), b).on_hover_text(a.hint);
        if r.clicked() {
            self.cmds.extend(a.cmd.clone());
            ui.close();
        }
    }

    /// File: Open URL… and Recent.
    fn open_submenus(&mut self, ui: &mut egui::Ui) {
        // Menus with a text field stay open while it is clicked into.
        #[cfg(feature = "remote")]
        egui::containers::menu::SubMenuButton::new("Open URL…")
            .config(
                egui::containers::menu::MenuConfig::new()
                    .close_behavior(egui::PopupCloseBehavior::CloseOnClickOutside),
            )
            .ui(ui, |ui| {
            ui.label("A recording in object storage or on a web server:");
            ui.weak("s3://bucket/run.bag  gs://…  az://…  https://host/run.mcap  (a rosbag2 folder: its prefix)");
            let r = ui.add(
                egui::TextEdit::singleline(&mut self.url_input)
                    .hint_text("s3://bucket/path/run.mcap")
                    .desired_width(420.0),
            );
            let url = self.url_input.trim().to_string();
            let valid = bagscope_reader::storage::remote::is_url(std::path::Path::new(&url));
            let enter = r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
            if ui.add_enabled(valid, egui::Button::new("Open")).clicked() || (enter && valid) {
                self.cmds.push(Cmd::Open(std::path::PathBuf::from(url)));
                ui.close();
            }
            ui.weak("Credentials come from the environment (AWS_*, GOOGLE_*, AZURE_*) and ~/.aws; never shown.");
            });
        ui.menu_button("Recent", |ui| {
            if self.recent.is_empty() {
                ui.label("No recent files");
            }
            for p in &self.recent {
                if ui.button(shown_path(p)).clicked() {
                    self.cmds.push(Cmd::Open(p.clone()));
                    ui.close();
                }
            }
        });
    }

    /// Tools: Definitions (the message search path).
    fn definitions_menu(&mut self, ui: &mut egui::Ui) {
        egui::containers::menu::SubMenuButton::new("Definitions")
            .config(
                egui::containers::menu::MenuConfig::new()
                    .close_behavior(egui::PopupCloseBehavior::CloseOnClickOutside),
            )
            .ui(ui, |ui| {
                ui.label(
                "Message search path: folders of ROS packages (PKG/msg/Type.msg), separated by ':'",
            );
                ui.text_edit_singleline(&mut self.msg_path);
                if ui.button("Apply (reopens the recording)").clicked() {
                    self.cmds.push(Cmd::SetMsgPath(self.msg_path.clone()));
                    ui.close();
                }
                ui.separator();
                ui.label("Searched in order, then the definitions bagscope ships:");
                let dirs = bagscope_reader::definition::sources::search_dirs(
                    &self.open_options().msg_path,
                );
                if dirs.is_empty() {
                    ui.weak("(no folder set: only the definitions bagscope ships)");
                }
                for d in dirs {
                    ui.monospace(d.display().to_string());
                }
            });
    }

    /// Help: every action with its shortcut, by menu, and what the mouse does.
    fn help_window(&mut self, ctx: &egui::Context) {
        let mut open = true;
        let all = actions(self);
        egui::Window::new("Keyboard shortcuts")
            .open(&mut open)
            .default_pos([420.0, 90.0])
            .default_width(520.0)
            .show(ctx, |ui| {
                egui::Grid::new("shortcuts").striped(true).show(ui, |ui| {
                    for menu in Menu::ALL {
                        for a in all.iter().filter(|a| a.menu == menu) {
                            let Some(k) = &a.keys else { continue };
                            ui.monospace(ctx.format_shortcut(k));
                            ui.label(a.name.trim_end_matches('…'));
                            ui.weak(menu.name());
                            ui.end_row();
                        }
                    }
                });
                ui.separator();
                ui.strong("On the timeline");
                for (what, does) in [
                    ("Click", "move the playhead"),
                    ("Drag", "pan the visible window (on the time axis: scrub the playhead)"),
                    ("Shift+drag", "select a range (Export and the plots use it); drag its edges to change it"),
                    ("Wheel, pinch", "zoom around the pointer (over the names: scroll the rows)"),
                    ("Double-click", "fit the whole recording"),
                    ("Right-click", "the second cursor, a bookmark, the playhead there"),
                ] {
                    ui.horizontal(|ui| {
                        ui.monospace(what);
                        ui.label(does);
                    });
                }
                ui.weak("Plain keys act when no text field has the keyboard; Ctrl keys and F-keys always.");
            });
        self.show_help = open;
    }

    /// The recording's warnings, what is being opened, the indexing progress, the last error
    /// and notice.
    fn status_lines(&mut self, ui: &mut egui::Ui) {
        if let Some(s) = &self.live.session {
            live::status(ui, s, &mut self.cmds);
        }
        if let Some(d) = &self.doc {
            // Warnings of a recovered bag: visible, never blocking.
            let w = &d.rec.warnings;
            if let Some(first) = w.first() {
                ui.horizontal(|ui| {
                    ui.colored_label(ui.visuals().warn_fg_color, format!("Warning: {first}"));
                    if w.len() > 1 {
                        let more = ui
                            .link(format!("(+{} more)", w.len() - 1))
                            .on_hover_text(w.join("\n"));
                        if more.clicked() {
                            self.cmds.push(Cmd::ShowInfo(true));
                        }
                    }
                });
            }
        }
        if let Some(d) = &mut self.doc {
            if !d.layout_notes.is_empty() {
                ui.horizontal(|ui| {
                    ui.colored_label(
                        ui.visuals().warn_fg_color,
                        format!("Layout: not shown: {}", d.layout_notes.join("; ")),
                    );
                    if ui.small_button("OK").clicked() {
                        d.layout_notes.clear();
                    }
                });
            }
        }
        if let Some(o) = &self.opening {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label(format!("Opening {o}…"));
            });
        }
        if let Some(d) = &self.doc {
            if d.rec.indexing() {
                ui.horizontal(|ui| {
                    let s = d.rec.bag.summary();
                    let (frac, text) = match d.rec.progress {
                        Some(p) => {
                            let total = s.file_size.max(1);
                            let f = p.bytes_done as f32 / total as f32;
                            let el = d.rec.index_started.elapsed().as_secs_f32();
                            let left = if f > 0.01 { el / f - el } else { f32::NAN };
                            (
                                f,
                                format!(
                                    "Indexing: {} of {} chunks, {} of {}{}",
                                    p.chunks_done,
                                    p.chunks_total,
                                    timefmt::bytes(p.bytes_done),
                                    timefmt::bytes(total),
                                    if left.is_finite() {
                                        format!(", {left:.0} s left")
                                    } else {
                                        String::new()
                                    }
                                ),
                            )
                        }
                        None => (0.0, "Indexing…".to_string()),
                    };
                    ui.add(egui::ProgressBar::new(frac).desired_width(460.0).text(text));
                    if ui.button("Cancel").clicked() {
                        self.cmds.push(Cmd::CancelIndexing);
                    }
                });
            } else if let Some(Err(e)) = &d.rec.index_end {
                ui.colored_label(
                    ui.visuals().warn_fg_color,
                    format!("Message tables not built ({e}): the timeline shows chunk densities; reopen the bag to index it."),
                );
            }
        }
        let mut dismiss = false;
        if let Some(e) = &self.error {
            ui.horizontal(|ui| {
                ui.colored_label(ui.visuals().error_fg_color, format!("Error: {e}"));
                dismiss = ui.small_button("Dismiss").clicked();
            });
        }
        if dismiss {
            self.error = None;
        }
        let mut dismiss = false;
        if let Some(n) = &self.notice {
            ui.horizontal(|ui| {
                ui.label(n);
                dismiss = ui.small_button("OK").clicked();
            });
        }
        if dismiss {
            self.notice = None;
        }
    }
}

/// The log's count, coloured by its worst level: a click shows the log.
fn log_button(ui: &mut egui::Ui, d: &Doc, cmds: &mut Vec<Cmd>) {
    let n = d.log.lines.len();
    let label = match d.log.worst {
        Some(l) if n > 0 => egui::RichText::new(format!("Log ({n})"))
            .color(super::style::level_color(l, ui.visuals().text_color())),
        _ => egui::RichText::new(format!("Log ({n})")),
    };
    if ui
        .add_enabled(n > 0 || d.log.done.is_none(), egui::Button::new(label))
        .on_hover_text("The recording's /rosout messages (Ctrl+L)")
        .clicked()
    {
        cmds.push(Cmd::ShowLog(!d.log.open));
    }
}
