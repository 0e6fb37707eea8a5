//! State rows under the timeline's topic rows: a field drawn as coloured bands of its values
//! over time (a mode, a state machine, a flag), labelled where a band is wide enough, one row
//! per path; a click on a band moves the playhead to its start. Each row's values are read on
//! a worker ([`bagscope_ops::reports::state_rows`]), at the messages' receive times or, the
//! row's **stamp** toggle on, at their `header.stamp`.

use std::sync::Arc;

use bagscope_ops::reports::state_rows::{state_track, StateTrack};
use egui::{Color32, Pos2, Rect, Sense, Stroke};

use super::{Geom, NAME_W};
use crate::job::Job;
use crate::{Cmd, Doc};

/// A state row's height.
pub const STATE_H: f32 = 20.0;

/// One state row.
pub struct StateRow {
    pub path: String,
    /// Drawn at each message's `header.stamp` rather than its receive time.
    pub header_time: bool,
    pub job: Option<Job<Result<Arc<StateTrack>, String>>>,
    /// Its states, or why not.
    pub track: Option<Result<Arc<StateTrack>, String>>,
}

/// The state rows and the box that adds one.
#[derive(Default)]
pub struct StatesState {
    pub rows: Vec<StateRow>,
    pub input: String,
    /// Paths drawn at header stamps when added (from a layout).
    pub header_paths: std::collections::HashSet<String>,
}

/// Adds a row for `path`, read on a worker.
pub fn add(d: &mut Doc, path: String, ctx: &egui::Context) {
    if d.states.rows.iter().any(|r| r.path == path) {
        return;
    }
    let header_time = d.states.header_paths.contains(&path);
    let mut row = StateRow {
        path,
        header_time,
        job: None,
        track: None,
    };
    read(d, &mut row, ctx);
    d.states.rows.push(row);
}

/// Reads `row`'s states on a worker, at the time base it has.
fn read(d: &Doc, row: &mut StateRow, ctx: &egui::Context) {
    let bag = d.rec.bag.clone();
    let (p, header_time) = (row.path.clone(), row.header_time);
    let job = Job::spawn("state", 1, ctx, move |h| {
        h.send(
            state_track(&bag, &p, header_time, h.cancel_flag())
                .map(Arc::new)
                .map_err(|e| e.to_string()),
        );
    });
    (row.job, row.track) = match job {
        Ok(j) => (Some(j), None),
        Err(e) => (None, Some(Err(e))),
    };
}

/// Turns row `k`'s stamp toggle: its states read again at the other time base.
pub fn set_header_time(d: &mut Doc, k: usize, on: bool, ctx: &egui::Context) {
    let Some(mut row) = d.states.rows.get_mut(k).map(|r| StateRow {
        path: std::mem::take(&mut r.path),
        header_time: on,
        job: None,
        track: None,
    }) else {
        return;
    };
    read(d, &mut row, ctx);
    d.states.rows[k] = row;
}

/// Takes what the workers read.
pub fn poll(d: &mut Doc) {
    for r in &mut d.states.rows {
        if let Some(j) = &mut r.job {
            if let Some(t) = j.take() {
                r.track = Some(t);
                r.job = None;
            }
        }
    }
}

/// The colour of a state's `i`-th value.
pub fn value_color(i: u32) -> Color32 {
    let h = (i as f32 * 0.381_966 + 0.08).fract();
    egui::ecolor::Hsva::new(h, 0.5, 0.62, 1.0).into()
}

/// The height the rows take.
pub fn height(d: &Doc) -> f32 {
    if d.states.rows.is_empty() {
        0.0
    } else {
        d.states.rows.len() as f32 * STATE_H + 6.0
    }
}

/// Draws the rows in `area` (as wide as the timeline, the strip's time mapping `g`).
pub(super) fn draw(ui: &mut egui::Ui, d: &mut Doc, cmds: &mut Vec<Cmd>, g: &Geom, area: Rect) {
    let painter = ui.painter_at(area);
    let v = ui.visuals().clone();
    painter.line_segment(
        [area.left_top(), area.right_top()],
        Stroke::new(1.0, v.widgets.noninteractive.bg_stroke.color),
    );
    let (mut remove, mut toggle) = (None, None);
    for (k, row) in d.states.rows.iter().enumerate() {
        let y = area.top() + 4.0 + k as f32 * STATE_H;
        let name = Rect::from_min_max(
            Pos2::new(area.left(), y),
            Pos2::new(area.left() + NAME_W, y + STATE_H),
        );
        let strip = Rect::from_min_max(
            Pos2::new(g.strip.left(), y + 2.0),
            Pos2::new(g.strip.right(), y + STATE_H - 2.0),
        );
        // The name, and × to take the row away.
        let x_rect = Rect::from_min_size(
            Pos2::new(name.left() + 2.0, y + 2.0),
            egui::vec2(16.0, 16.0),
        );
        let x = ui.interact(x_rect, ui.scope_id().with(("state-x", k)), Sense::click());
        painter.text(
            x_rect.center(),
            egui::Align2::CENTER_CENTER,
            "×",
            egui::FontId::proportional(13.0),
            v.weak_text_color(),
        );
        if x.on_hover_text("Remove this state row").clicked() {
            remove = Some(k);
        }
        // The time base: receive time, or (on) each message's header stamp.
        let stamp_rect = Rect::from_min_max(
            Pos2::new(name.right() - 44.0, y + 2.0),
            Pos2::new(name.right() - 4.0, y + STATE_H - 2.0),
        );
        let st = ui.interact(
            stamp_rect,
            ui.scope_id().with(("state-stamp", k)),
            Sense::click(),
        );
        st.widget_info(|| {
            egui::WidgetInfo::selected(
                egui::accesskit::Role::CheckBox,
                true,
                row.header_time,
                format!("{} at header stamps", row.path),
            )
        });
        if row.header_time {
            painter.rect_filled(stamp_rect, 3.0, v.selection.bg_fill.gamma_multiply(0.6));
        }
        painter.text(
            stamp_rect.center(),
            egui::Align2::CENTER_CENTER,
            "stamp",
            egui::FontId::proportional(11.0),
            if row.header_time {
                v.strong_text_color()
            } else {
                v.weak_text_color()
            },
        );
        if st
            .on_hover_text("Draw at each message's header.stamp instead of its receive time")
            .clicked()
        {
            toggle = Some((k, !row.header_time));
        }
        let label = ui.interact(
            Rect::from_min_max(
                Pos2::new(name.left() + 20.0, y),
                Pos2::new(stamp_rect.left() - 2.0, name.bottom()),
            ),
            ui.scope_id().with(("state-name", k)),
            Sense::hover(),
        );
        label.widget_info(|| {
            egui::WidgetInfo::labeled(egui::accesskit::Role::Label, true, &row.path)
        });
        painter.text(
            Pos2::new(name.left() + 20.0, y + STATE_H / 2.0),
            egui::Align2::LEFT_CENTER,
            &row.path,
            egui::FontId::proportional(12.0),
            v.text_color(),
        );
        label.on_hover_text(&row.path);
        let track = match &row.track {
            None => {
                painter.text(
                    strip.left_center(),
                    egui::Align2::LEFT_CENTER,
                    "reading…",
                    egui::FontId::proportional(12.0),
                    v.weak_text_color(),
                );
                continue;
            }
            Some(Err(e)) => {
                // The first line (a path's error draws a caret under it on the next ones).
                let e = e.lines().next().unwrap_or("");
                painter.text(
                    strip.left_center(),
                    egui::Align2::LEFT_CENTER,
                    e,
                    egui::FontId::proportional(12.0),
                    v.error_fg_color,
                );
                continue;
            }
            Some(Ok(t)) => t,
        };
        let resp = ui.interact(
            strip,
            ui.scope_id().with(("state-strip", k)),
            Sense::click(),
        );
        resp.widget_info(|| {
            egui::WidgetInfo::labeled(
                egui::accesskit::Role::Button,
                true,
                format!("{} states", row.path),
            )
        });
        bands(&painter, track, g, strip);
        let t_at = |x: f32| g.abs_of(x);
        if let Some(p) = resp.hover_pos() {
            if let Some(r) = track.at(t_at(p.x)) {
                resp.clone().on_hover_text(format!(
                    "{}\nfrom +{:.3} s",
                    track.labels[r.value as usize],
                    r.start_ns.saturating_sub(g.a) as f64 / 1e9
                ));
            }
        }
        if resp.clicked() {
            if let Some(r) = resp
                .interact_pointer_pos()
                .and_then(|p| track.at(t_at(p.x)))
            {
                cmds.push(Cmd::SetPlayhead(r.start_ns));
            }
        }
    }
    if let Some((k, on)) = toggle {
        set_header_time(d, k, on, ui.ctx());
    }
    if let Some(k) = remove {
        d.states.rows.remove(k);
    }
}

/// A track's runs as bands, each to the next run's start, labelled where there is room.
fn bands(painter: &egui::Painter, t: &StateTrack, g: &Geom, strip: Rect) {
    let font = egui::FontId::proportional(11.0);
    let x_of = |ns: u64| g.x_of(ns.saturating_sub(g.a) as f64);
    let mut last_px = i32::MIN;
    for (k, r) in t.runs.iter().enumerate() {
        let end = t.runs.get(k + 1).map_or(r.last_ns, |n| n.start_ns);
        let (x0, x1) = (
            x_of(r.start_ns).max(strip.left()),
            x_of(end).min(strip.right()),
        );
        if x1 < strip.left() || x0 > strip.right() {
            continue;
        }
        // Runs narrower than a pixel: one drawn a pixel.
        let px = x0 as i32;
        if x1 - x0 < 1.0 && px == last_px {
            continue;
        }
        last_px = px;
        let band = Rect::from_min_max(
            Pos2::new(x0, strip.top()),
            Pos2::new(x1.max(x0 + 1.0), strip.bottom()),
        );
        painter.rect_filled(band, 0.0, value_color(r.value));
        let label = &t.labels[r.value as usize];
        let w = label.len() as f32 * 6.5 + 6.0;
        if band.width() > w {
            painter.text(
                band.left_center() + egui::vec2(3.0, 0.0),
                egui::Align2::LEFT_CENTER,
                label,
                font.clone(),
                Color32::WHITE,
            );
        }
    }
}
