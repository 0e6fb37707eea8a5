//! The screens and windows around the panels: the start screen, the preview of a recording
//! whose rows are still being read, the Bag info window and the recordings window.

use bagscope_ops::timefmt;

use super::{App, Cmd, Doc};

impl App {
    pub(super) fn start_screen(&mut self, ui: &mut egui::Ui) {
        ui.vertical_centered(|ui| {
            ui.add_space(60.0);
            ui.heading("bagscope");
            ui.label(
                "A fast inspector and timeline viewer for ROS recordings: ROS 1 bags (2.0, 1.2), rosbag2 (SQLite, MCAP) and MCAP files.",
            );
            ui.add_space(20.0);
            if self.live.running() {
                ui.horizontal(|ui| {
                    ui.spinner();
                    ui.label("Recording live: the timeline appears with the first messages on disk.");
                });
                ui.add_space(20.0);
            }
            if ui.button("Open a bag…").clicked() {
                self.cmds.push(Cmd::OpenDialog);
            }
            if ui.button("Open a rosbag2 folder…").clicked() {
                self.cmds.push(Cmd::OpenFolderDialog);
            }
            if ui.button("Open demo bag").clicked() {
                self.cmds.push(Cmd::OpenDemo);
            }
            ui.label("…or drop a .bag, .mcap, .db3 file or a rosbag2 folder on this window.");
            ui.add_space(20.0);
            if !self.recent.is_empty() {
                ui.strong("Recent files");
                for p in &self.recent {
                    if ui.link(p.display().to_string()).clicked() {
                        self.cmds.push(Cmd::Open(p.clone()));
                    }
                }
            }
        });
    }

    pub(super) fn info_window(&mut self, ui: &mut egui::Ui) {
        let Some(d) = &mut self.doc else { return };
        let mut open = true;
        // Made on the loader thread (it says where definitions came from, which may read
        // .msg files).
        let text = d.rec.info_text.as_deref().unwrap_or("…");
        let warnings = &d.rec.warnings;
        egui::Window::new("Bag info")
            .open(&mut open)
            .default_size([720.0, 420.0])
            .show(ui.ctx(), |ui| {
                egui::ScrollArea::both().show(ui, |ui| {
                    // A recovered bag's warnings first: they say what the numbers below rest on.
                    for w in warnings {
                        ui.colored_label(ui.visuals().warn_fg_color, format!("Warning: {w}"));
                    }
                    if !warnings.is_empty() {
                        ui.separator();
                    }
                    ui.add(
                        egui::Label::new(egui::RichText::new(text).monospace()).selectable(true),
                    );
                });
            });
        if !open {
            self.cmds.push(Cmd::ShowInfo(false));
        }
    }
}

/// The recordings on the timeline, each with its time shift: typed, or "Align starts".
pub(super) fn recordings_window(ctx: &egui::Context, d: &mut Doc, cmds: &mut Vec<Cmd>) {
    let mut open = d.recordings.open;
    let screen = ctx.content_rect();
    egui::Window::new("Recordings")
        .open(&mut open)
        .default_pos([screen.width() * 0.3, 70.0])
        .default_width(520.0)
        .show(ctx, |ui| {
            ui.label(
                "Each recording's times are shifted by its offset, to compare runs from one start.",
            );
            egui::Grid::new("parts").num_columns(3).show(ui, |ui| {
                for (i, p) in d.rec.parts.iter().enumerate() {
                    ui.label(
                        p.path
                            .file_name()
                            .map_or(String::new(), |n| n.to_string_lossy().into_owned()),
                    )
                    .on_hover_text(p.path.display().to_string());
                    if let Some(o) = d.recordings.offsets.get_mut(i) {
                        ui.add(egui::DragValue::new(o).speed(0.1).suffix(" s"));
                    }
                    if ui.small_button("remove").clicked() {
                        let mut v = d.rec.parts.clone();
                        v.remove(i);
                        cmds.push(Cmd::OpenMany(v));
                    }
                    ui.end_row();
                }
            });
            ui.horizontal(|ui| {
                if ui.button("Apply offsets").clicked() {
                    let v = d
                        .rec
                        .parts
                        .iter()
                        .zip(&d.recordings.offsets)
                        .map(|(p, o)| bagscope_reader::bag::merge::Part {
                            path: p.path.clone(),
                            offset_ns: (o * 1e9).round() as i64,
                        })
                        .collect();
                    cmds.push(Cmd::OpenMany(v));
                }
                if ui
                    .button("Compare…")
                    .on_hover_text(
                        "The runs side by side: messages, rates, gaps, fields' statistics",
                    )
                    .clicked()
                {
                    cmds.push(Cmd::ShowCompare(true));
                }
                if ui
                    .button("Align starts")
                    .on_hover_text("Shift every recording to start when the first does")
                    .clicked()
                {
                    cmds.push(Cmd::AlignStarts);
                }
            });
        });
    d.recordings.open = open;
}

/// What the app shows of a recording whose rows are being read (opened from its
/// metadata.yaml): its topics, counts and time span, while the timeline waits for the rows.
pub(super) fn preview_screen(ui: &mut egui::Ui, s: &bagscope_reader::Summary) {
    ui.add_space(12.0);
    ui.heading(s.path.display().to_string());
    let span = match (s.start_ns, s.end_ns) {
        (Some(a), Some(b)) => format!(
            ", {} from {} UTC",
            timefmt::duration(b.saturating_sub(a)),
            timefmt::date(a)
        ),
        _ => String::new(),
    };
    ui.label(format!(
        "{} messages on {} topics{span}: as metadata.yaml counts them (the database's row ids and timestamp index agree).",
        s.message_count,
        s.topics.len()
    ));
    ui.horizontal(|ui| {
        ui.spinner();
        ui.label(format!(
            "Reading the rows of {} for the timeline…",
            timefmt::bytes(s.file_size)
        ));
    });
    ui.add_space(8.0);
    let secs = s.duration_ns() as f64 / 1e9;
    egui::ScrollArea::vertical().show(ui, |ui| {
        egui::Grid::new("preview_topics")
            .striped(true)
            .num_columns(4)
            .show(ui, |ui| {
                ui.strong("topic");
                ui.strong("type");
                ui.strong("messages");
                ui.strong("rate");
                ui.end_row();
                for t in &s.topics {
                    ui.label(&t.name);
                    ui.label(&t.datatype);
                    ui.label(t.message_count.to_string());
                    if secs > 0.0 && t.message_count > 1 {
                        ui.label(format!("{:.2} Hz", (t.message_count - 1) as f64 / secs));
                    } else {
                        ui.label("");
                    }
                    ui.end_row();
                }
            });
    });
}
