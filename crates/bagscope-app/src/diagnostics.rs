//! The Diagnostics panel: one row per status name of the recording's
//! `diagnostic_msgs/DiagnosticArray` topics with its level over time (OK, WARN, ERROR, STALE
//! in colour), the message and key/values of the chosen name at the playhead; filtered by name
//! or level; a click seeks. Read once on a worker (`bagscope-diagnostics`).

use std::sync::Arc;

use bagscope_ops::reports::diagnostics::{
    diagnostic_topics, read_diagnostics, DiagLevel, Diagnostics,
};
use egui::{Color32, Rect, Sense, Stroke};

use super::job::Job;
use super::{Cmd, Doc};

/// The panel's state.
#[derive(Default)]
pub struct DiagnosticsState {
    pub open: bool,
    pub job: Option<Job<Result<Arc<Diagnostics>, String>>>,
    /// What was read, or why not.
    pub data: Option<Result<Arc<Diagnostics>, String>>,
    /// Names containing this (any case).
    pub filter: String,
    /// Only names that reached at least this level (0: all, 1: WARN, 2: ERROR, 3: STALE).
    pub min_level: usize,
    /// The name whose details are shown.
    pub selected: Option<String>,
}

/// A level's colour.
pub fn level_color(l: DiagLevel, visuals: &egui::Visuals) -> Color32 {
    match l {
        DiagLevel::Ok => Color32::from_rgb(70, 160, 90),
        DiagLevel::Warn => visuals.warn_fg_color,
        DiagLevel::Error => visuals.error_fg_color,
        DiagLevel::Stale | DiagLevel::Other(_) => Color32::from_gray(120),
    }
}

/// Starts reading the diagnostics, once.
pub fn start(d: &mut Doc, ctx: &egui::Context) {
    if d.diag.job.is_some() || d.diag.data.is_some() {
        return;
    }
    let bag = d.rec.bag.clone();
    let r = Job::spawn("diagnostics", 1, ctx, move |h| {
        let topics = diagnostic_topics(&bag);
        let r = read_diagnostics(&bag, &topics, h.cancel_flag())
            .map(Arc::new)
            .map_err(|e| e.to_string());
        h.send(r);
    });
    match r {
        Ok(j) => d.diag.job = Some(j),
        Err(e) => d.diag.data = Some(Err(e)),
    }
}

/// Takes what the worker read.
pub fn poll(d: &mut Doc) {
    if let Some(j) = &mut d.diag.job {
        if let Some(r) = j.take() {
            d.diag.data = Some(r);
            d.diag.job = None;
        }
    }
}

const ROW_H: f32 = 20.0;
const NAME_W: f32 = 240.0;

/// The window.
pub fn show(ctx: &egui::Context, d: &mut Doc, cmds: &mut Vec<Cmd>) {
    let mut open = d.diag.open;
    egui::Window::new("Diagnostics")
        .open(&mut open)
        .default_width(760.0)
        .default_height(520.0)
        .default_pos([ctx.content_rect().width() * 0.25, 110.0])
        .show(ctx, |ui| match d.diag.data.clone() {
            None => {
                ui.horizontal(|ui| {
                    ui.spinner();
                    ui.label("Reading the diagnostics…");
                });
            }
            Some(Err(e)) => {
                ui.colored_label(ui.visuals().error_fg_color, e);
            }
            Some(Ok(diag)) => body(ui, d, &diag, cmds),
        });
    d.diag.open = open;
}

fn body(ui: &mut egui::Ui, d: &mut Doc, diag: &Diagnostics, cmds: &mut Vec<Cmd>) {
    let c = diag.counts();
    ui.horizontal(|ui| {
        ui.add(
            egui::TextEdit::singleline(&mut d.diag.filter)
                .hint_text("filter names")
                .desired_width(180.0),
        );
        egui::ComboBox::new("diag-level", "")
            .selected_text(
                ["all levels", "WARN and worse", "ERROR and worse", "STALE"][d.diag.min_level],
            )
            .show_ui(ui, |ui| {
                for (i, t) in ["all levels", "WARN and worse", "ERROR and worse", "STALE"]
                    .into_iter()
                    .enumerate()
                {
                    ui.selectable_value(&mut d.diag.min_level, i, t);
                }
            });
        ui.label(format!("{} names ·", diag.tracks.len()));
        for l in DiagLevel::ALL {
            ui.colored_label(
                level_color(l, ui.visuals()),
                format!("{} {}", c[l.index()], l.name()),
            );
        }
    });
    if diag.coarse {
        ui.weak(
            "A long recording: some statuses' key/values were not kept (levels and messages were).",
        );
    }
    if diag.bad > 0 {
        ui.colored_label(
            ui.visuals().warn_fg_color,
            format!("{} messages did not decode as DiagnosticArray", diag.bad),
        );
    }
    let needle = d.diag.filter.to_lowercase();
    let shown: Vec<usize> = (0..diag.tracks.len())
        .filter(|&i| {
            let t = &diag.tracks[i];
            t.name.to_lowercase().contains(&needle)
                && t.worst()
                    .is_some_and(|w| w.index().min(3) >= d.diag.min_level)
        })
        .collect();
    let (a, b) = d.rec.range();
    let playhead = d.nav.playhead;
    let details_h = if d.diag.selected.is_some() {
        160.0
    } else {
        0.0
    };
    egui::ScrollArea::vertical()
        .max_height((ui.available_height() - details_h).max(120.0))
        .auto_shrink([false, true])
        .show_rows(ui, ROW_H, shown.len(), |ui, rows| {
            for &i in &shown[rows] {
                let t = &diag.tracks[i];
                let now = t.at(playhead);
                let selected = d.diag.selected.as_deref() == Some(&t.name);
                ui.horizontal(|ui| {
                    let color = now.map_or(ui.visuals().weak_text_color(), |r| {
                        level_color(r.level, ui.visuals())
                    });
                    let name = ui
                        .allocate_ui_with_layout(
                            egui::vec2(NAME_W, ROW_H - 2.0),
                            egui::Layout::left_to_right(egui::Align::Center),
                            |ui| {
                                ui.set_min_width(NAME_W);
                                ui.add(
                                    egui::Button::selectable(
                                        selected,
                                        egui::RichText::new(&t.name).color(color),
                                    )
                                    .truncate(),
                                )
                            },
                        )
                        .inner
                        .on_hover_text(&t.name);
                    if name.clicked() {
                        d.diag.selected = Some(t.name.clone());
                    }
                    let (strip, resp) = ui.allocate_exact_size(
                        egui::vec2(ui.available_width() - 4.0, ROW_H - 6.0),
                        Sense::click(),
                    );
                    resp.widget_info(|| {
                        egui::WidgetInfo::labeled(
                            egui::accesskit::Role::Button,
                            true,
                            format!("{} over time", t.name),
                        )
                    });
                    strip_bands(ui, t, strip, (a, b), playhead);
                    let t_of = |x: f32| {
                        let f = f64::from(((x - strip.min.x) / strip.width()).clamp(0.0, 1.0));
                        a + (f * (b - a) as f64) as u64
                    };
                    if resp.clicked() {
                        d.diag.selected = Some(t.name.clone());
                        if let Some(p) = resp.interact_pointer_pos() {
                            cmds.push(Cmd::SetPlayhead(t_of(p.x)));
                        }
                    }
                    if let Some(p) = resp.hover_pos() {
                        let at = t_of(p.x);
                        if let Some(r) = t.at(at) {
                            resp.on_hover_text(format!(
                                "{} {}: {}\n+{:.3} s",
                                t.name,
                                r.level.name(),
                                diag.string(r.message),
                                at.saturating_sub(a) as f64 / 1e9
                            ));
                        }
                    }
                });
            }
        });
    if shown.is_empty() {
        ui.weak("No name matches.");
    }
    if let Some(name) = d.diag.selected.clone() {
        details(ui, diag, &name, playhead, a);
    }
}

/// A name's levels over the recording as bands in `strip`, the playhead across.
fn strip_bands(
    ui: &egui::Ui,
    t: &bagscope_ops::reports::diagnostics::Track,
    strip: Rect,
    (a, b): (u64, u64),
    playhead: u64,
) {
    let p = ui.painter();
    let v = ui.visuals();
    p.rect_filled(strip, 0.0, v.extreme_bg_color);
    let span = (b - a).max(1) as f64;
    let x_of = |ns: u64| strip.min.x + (ns.saturating_sub(a) as f64 / span) as f32 * strip.width();
    // Runs narrower than a pixel: the worst of each pixel is drawn.
    let mut last: Option<(i32, DiagLevel)> = None;
    for (k, r) in t.runs.iter().enumerate() {
        let end = t.runs.get(k + 1).map_or(r.last_ns, |n| n.start_ns);
        let (x0, x1) = (x_of(r.start_ns), x_of(end).max(x_of(r.start_ns) + 1.0));
        let px = x0 as i32;
        if x1 - x0 <= 1.0 {
            if let Some((lp, ll)) = last {
                if lp == px && ll >= r.level {
                    continue;
                }
            }
        }
        last = Some((px, r.level));
        p.rect_filled(
            Rect::from_min_max(
                egui::pos2(x0, strip.min.y),
                egui::pos2(x1.min(strip.max.x), strip.max.y),
            ),
            0.0,
            level_color(r.level, v),
        );
    }
    let x = x_of(playhead);
    p.line_segment(
        [
            egui::pos2(x, strip.min.y - 2.0),
            egui::pos2(x, strip.max.y + 2.0),
        ],
        Stroke::new(1.5, Color32::from_rgb(230, 80, 80)),
    );
}

/// The chosen name's status at the playhead: level, message, hardware id, key/values.
fn details(ui: &mut egui::Ui, diag: &Diagnostics, name: &str, playhead: u64, start: u64) {
    ui.separator();
    let Some(t) = diag.tracks.iter().find(|t| t.name == name) else {
        return;
    };
    ui.horizontal(|ui| {
        ui.strong(&t.name);
        if !t.hardware_id.is_empty() {
            ui.weak(format!("hardware {}", t.hardware_id));
        }
    });
    let Some(r) = t.at(playhead) else {
        ui.weak("No status at or before the playhead.");
        return;
    };
    ui.horizontal(|ui| {
        ui.colored_label(level_color(r.level, ui.visuals()), r.level.name());
        ui.label(diag.string(r.message));
        ui.weak(format!(
            "since +{:.3} s ({} statuses alike)",
            r.start_ns.saturating_sub(start) as f64 / 1e9,
            r.count
        ));
    });
    egui::ScrollArea::vertical()
        .id_salt("diag-values")
        .max_height(110.0)
        .show(ui, |ui| {
            egui::Grid::new("diag-kv").striped(true).show(ui, |ui| {
                for (k, v) in diag.values(r.values) {
                    ui.label(k);
                    ui.monospace(v);
                    ui.end_row();
                }
            });
        });
}
