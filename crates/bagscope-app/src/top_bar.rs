//! The bar at the top of the window: opening, recent files, windows, play controls, the
//! selected range and the status of the background work.

use super::*;

impl App {
    pub(super) fn top_bar(&mut self, ui: &mut egui::Ui) {
        egui::Panel::top("menu").show(ui, |ui| {
            ui.horizontal(|ui| {
                self.open_menus(ui);
                if let Some(d) = &self.doc {
                    window_buttons(ui, d, self.show_info, &mut self.cmds);
                }
            });
            self.status_lines(ui);
        });
    }

    /// Open…, Open folder…, Recent, Demo bag, Definitions (the message search path).
    fn open_menus(&mut self, ui: &mut egui::Ui) {
        ui.strong("bagscope");
        if ui.button("Open…").clicked() {
            self.cmds.push(Cmd::OpenDialog);
        }
        if ui
            .button("Open folder…")
            .on_hover_text("A rosbag2 recording: the folder with metadata.yaml")
            .clicked()
        {
            self.cmds.push(Cmd::OpenFolderDialog);
        }
        // Menus with a text field stay open while it is clicked into.
        let typed = egui::containers::menu::MenuConfig::new()
            .close_behavior(egui::PopupCloseBehavior::CloseOnClickOutside);
        #[cfg(feature = "remote")]
        egui::containers::menu::MenuButton::new("Open URL…")
            .config(typed.clone())
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
                self.cmds.push(Cmd::Open(PathBuf::from(url)));
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
                }
            }
        });
        if ui.button("Demo bag").clicked() {
            self.cmds.push(Cmd::OpenDemo);
        }
        if ui
            .button("Live…")
            .on_hover_text("Record from a live ROS 1 master or ROS 2 domain and watch it grow")
            .clicked()
        {
            self.cmds.push(Cmd::ShowLive(!self.live.open));
        }
        egui::containers::menu::MenuButton::new("Definitions")
            .config(typed)
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
                let dirs = bagscope_reader::definition::sources::search_dirs();
                if dirs.is_empty() {
                    ui.weak("(no folder set: only the definitions bagscope ships)");
                }
                for d in dirs {
                    ui.monospace(d.display().to_string());
                }
            });
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

/// The buttons of an open recording: Log, Add to timeline…, Recordings, Find…, TF, Export…,
/// Bag info, Close, and its path.
fn window_buttons(ui: &mut egui::Ui, d: &Doc, show_info: bool, cmds: &mut Vec<Cmd>) {
    let n = d.log.lines.len();
    let worst = d.log.worst;
    let label = match worst {
        Some(l) if n > 0 => egui::RichText::new(format!("Log ({n})"))
            .color(super::style::level_color(l, ui.visuals().text_color())),
        _ => egui::RichText::new(format!("Log ({n})")),
    };
    if ui
        .add_enabled(n > 0 || d.log.done.is_none(), egui::Button::new(label))
        .on_hover_text("The recording's /rosout messages")
        .clicked()
    {
        cmds.push(Cmd::ShowLog(!d.log.open));
    }
    if ui
        .button("Add to timeline…")
        .on_hover_text(
            "Open another recording beside this one (a split part, or another run to compare)",
        )
        .clicked()
    {
        cmds.push(Cmd::AddDialog);
    }
    if d.rec.parts.len() > 1
        && ui
            .button(format!("Recordings ({})", d.rec.parts.len()))
            .clicked()
    {
        cmds.push(Cmd::ShowRecordings(!d.recordings.open));
    }
    if ui
        .button("Find…")
        .on_hover_text("Messages where a field meets a condition (Ctrl+F)")
        .clicked()
    {
        cmds.push(Cmd::ShowFind(!d.find.open));
    }
    if d.rec.has_tf
        && ui
            .button("TF")
            .on_hover_text("The transform tree at the playhead, and one frame's pose in another")
            .clicked()
    {
        cmds.push(Cmd::ShowTf(!d.tf.open));
    }
    if ui
        .button("3D")
        .on_hover_text("A 3D view at the playhead: clouds, scans, markers, poses, maps and frames")
        .clicked()
    {
        cmds.push(Cmd::OpenScene(None));
    }
    if ui.button("Export…").clicked() {
        cmds.push(Cmd::ShowExport(!d.export.open));
    }
    if ui.button("Bag info").clicked() {
        cmds.push(Cmd::ShowInfo(!show_info));
    }
    if ui.button("Close").clicked() {
        cmds.push(Cmd::Close);
    }
    if ui
        .button("Publish…")
        .on_hover_text(
            "Publish topics onto a live ROS 1 system as the playhead passes their messages",
        )
        .clicked()
    {
        cmds.push(Cmd::ShowPublish(!d.publish.open));
    }
    ui.separator();
    ui.label(d.rec.path.display().to_string());
}
