//! The timeline: a time axis, one density row per visible topic (messages per pixel, drawn as
//! runs of equal-height bars, never one shape per message), the playhead, the selected range.
//!
//! Wheel or pinch over the rows zooms around the pointer; dragging pans; a click or a drag on
//! the axis moves the playhead; shift-drag selects a range, whose edges can be dragged; the
//! wheel over the topic names scrolls the rows (only the rows on screen are drawn).

use std::collections::HashMap;

use egui::{Color32, Pos2, Rect, Sense, Stroke, StrokeKind, Vec2};

use super::{Cmd, Doc};
use bagscope_ops::timefmt;
use density_bins::HIST_BINS;
use times::{Times, SKIP};

mod density;
pub mod density_bins;
mod rows;
pub mod state_rows;
pub mod thumbs;
pub mod times;
mod toolbar;

use density::bar;
use rows::draw_rows;
use toolbar::toolbar;

const ROW_H: f32 = 22.0;
/// Colour of the second cursor.
const CURSOR2: Color32 = Color32::from_rgb(90, 200, 120);
/// Height of an image topic's row when it shows thumbnails.
const THUMB_ROW_H: f32 = 58.0;
const AXIS_H: f32 = 30.0;
/// The line under the rows that says which are shown, when not all fit.
const FOOTER_H: f32 = 14.0;
const NAME_W: f32 = 200.0;
pub(crate) const SPEEDS: [f32; 9] = [0.1, 0.25, 0.5, 1.0, 1.5, 2.0, 4.0, 5.0, 10.0];

/// What a drag on the timeline does, decided when it starts.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
enum DragMode {
    #[default]
    None,
    Pan,
    Scrub,
    /// Selecting from this anchor (ns).
    Select(u64),
    /// Moving the selection's start (`false`) or end (`true`).
    Edge(bool),
}

/// The timeline's own state.
pub struct TimelineState {
    /// First row shown.
    pub first_row: usize,
    /// Where the density strip (axis and rows) was drawn last frame.
    pub strip: Rect,
    drag: DragMode,
    /// Typed selection bounds (seconds from the start).
    sel_text: (String, String),
    sel_text_for: Option<Option<(u64, u64)>>,
    /// Cached density per topic for the current view and width.
    cache: HashMap<usize, (CacheKey, Vec<u32>)>,
    /// Thumbnails on image topics' rows.
    pub show_thumbs: bool,
    /// Where the context menu was opened (absolute ns).
    menu_t: u64,
    /// Topics whose row draws its rate over time.
    pub rate_rows: std::collections::HashSet<usize>,
    /// The thumbnails made so far.
    pub thumbs: thumbs::Thumbs,
}

impl TimelineState {
    /// Forgets what was worked out of the recording's data (the densities) and the
    /// thumbnail worker reading it, keeping the thumbnails made: the recording grew.
    pub fn forget_data(&mut self) {
        self.cache.clear();
        self.thumbs.forget_worker();
    }
}

impl Default for TimelineState {
    fn default() -> Self {
        TimelineState {
            first_row: 0,
            strip: Rect::NOTHING,
            drag: DragMode::None,
            sel_text: Default::default(),
            sel_text_for: None,
            cache: HashMap::new(),
            show_thumbs: true,
            menu_t: 0,
            rate_rows: Default::default(),
            thumbs: Default::default(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
struct CacheKey {
    view: (f64, f64),
    px: usize,
    source: usize,
}

/// A stable colour per topic.
pub fn topic_color(ti: usize) -> Color32 {
    let h = (ti as f32 * 0.618_034).fract();
    egui::ecolor::Hsva::new(h, 0.55, 0.85, 1.0).into()
}

fn rel(d: &Doc, t: u64) -> String {
    let (a, _) = d.rec.range();
    format!("{:.3}", (t as f64 - a as f64) / 1e9)
}

/// The timeline panel.
pub fn show(ui: &mut egui::Ui, d: &mut Doc, cmds: &mut Vec<Cmd>) {
    toolbar(ui, d, cmds);
    let (a, b) = d.rec.range();
    let rows: Vec<usize> = (0..d.rec.bag.summary().topics.len())
        .filter(|&t| d.nav.visible[t])
        .collect();
    let whole = ui.available_rect_before_wrap();
    // The state rows take the bottom.
    let states_h = state_rows::height(d).min(whole.height() * 0.5);
    let full = Rect::from_min_max(whole.min, Pos2::new(whole.max.x, whole.max.y - states_h));
    let states_area = Rect::from_min_max(Pos2::new(whole.min.x, full.max.y), whole.max);
    let strip = Rect::from_min_max(Pos2::new(full.left() + NAME_W, full.top()), full.max);
    let view = d.nav.view;
    let g = Geom {
        full,
        strip,
        rows_top: full.top() + AXIS_H,
        view,
        ns_per_px: (view.1 - view.0) / strip.width().max(1.0) as f64,
        a,
        b,
    };
    d.timeline.strip = strip;
    let painter = ui.painter_at(full);
    // Image rows are taller when they show thumbnails.
    let thumbs_on = d.timeline.show_thumbs && d.rec.indexed.is_some();
    let heights = RowHeights::new(d, &rows, thumbs_on, &g);
    let resp = ui.interact(
        strip,
        ui.scope_id().with("timeline-strip"),
        Sense::click_and_drag(),
    );
    interact(ui, d, cmds, &g, &resp, heights.max_first());
    draw_axis(ui, &painter, &g);
    draw_rows(ui, d, cmds, &painter, &g, &rows, &heights, thumbs_on);
    draw_marks(ui, d, cmds, &painter, &g);
    if states_h > 0.0 {
        state_rows::draw(ui, d, cmds, &g, states_area);
    }
    // Hover read-out.
    if let Some(p) = resp.hover_pos() {
        let t = g.abs_of(p.x);
        resp.on_hover_text_at_pointer(format!("+{} s\n{} UTC", rel(d, t), timefmt::date(t)));
    }
    ui.allocate_rect(whole, Sense::hover());
}

/// Where the timeline is drawn and how its time maps to x.
struct Geom {
    /// The whole area: names column and strip.
    full: Rect,
    /// The strip right of the names: the axis on top, the rows under it.
    strip: Rect,
    /// Where the rows start.
    rows_top: f32,
    /// The visible window (ns offsets from the start).
    view: (f64, f64),
    ns_per_px: f64,
    /// The recording's start and end (ns).
    a: u64,
    b: u64,
}

impl Geom {
    /// The x of `t` ns after the start.
    fn x_of(&self, t: f64) -> f32 {
        self.strip.left() + ((t - self.view.0) / self.ns_per_px) as f32
    }

    /// The time (ns after the start) at `x`.
    fn t_of(&self, x: f32) -> f64 {
        self.view.0 + f64::from(x - self.strip.left()) * self.ns_per_px
    }

    /// The absolute time at `x`, clamped to the recording.
    fn abs_of(&self, x: f32) -> u64 {
        (self.a as f64 + self.t_of(x)).clamp(self.a as f64, self.b as f64) as u64
    }

    /// The width of the strip in pixel columns.
    fn px(&self) -> usize {
        self.strip.width().max(1.0) as usize
    }
}

/// The heights of the shown rows and how many fit.
struct RowHeights {
    /// Per shown row (in order).
    h: Vec<f32>,
    /// Height left for rows (less a footer line when not all fit).
    room: f32,
}

impl RowHeights {
    fn new(d: &Doc, rows: &[usize], thumbs_on: bool, g: &Geom) -> RowHeights {
        let s = d.rec.bag.summary();
        let h: Vec<f32> = rows
            .iter()
            .map(|&t| {
                if thumbs_on && bagscope_ops::media::image::is_image_type(&s.topics[t].datatype) {
                    THUMB_ROW_H
                } else {
                    ROW_H
                }
            })
            .collect();
        // The footer line says which rows are shown when not all fit.
        let all: f32 = h.iter().sum();
        let room = g.full.bottom() - g.rows_top;
        let room = if all > room { room - FOOTER_H } else { room };
        RowHeights { h, room }
    }

    /// How many rows fit from row `from` on (at least one).
    fn fit_from(&self, from: usize) -> usize {
        let mut y = 0.0;
        let mut n = 0;
        for h in &self.h[from.min(self.h.len())..] {
            if y + h > self.room && n > 0 {
                break;
            }
            y += h;
            n += 1;
        }
        n.max(1)
    }

    /// The first row that still fills the view to its bottom.
    fn max_first(&self) -> usize {
        let mut y = 0.0;
        let mut k = self.h.len();
        while k > 0 && y + self.h[k - 1] <= self.room {
            y += self.h[k - 1];
            k -= 1;
        }
        k
    }
}

/// The wheel, drags, clicks and the context menu over the strip, as commands (the rows'
/// scroll position is the timeline's own).
fn interact(
    ui: &egui::Ui,
    d: &mut Doc,
    cmds: &mut Vec<Cmd>,
    g: &Geom,
    resp: &egui::Response,
    max_first: usize,
) {
    let (strip, view, ns_per_px, a) = (g.strip, g.view, g.ns_per_px, g.a);
    let names = Rect::from_min_max(g.full.min, Pos2::new(strip.left(), g.full.bottom()));
    if let Some(pos) = ui.input(|i| i.pointer.hover_pos()) {
        let (scroll, zoom) = ui.input(|i| (i.smooth_scroll_delta, i.zoom_delta()));
        if strip.contains(pos) {
            let mut factor = f64::from(zoom);
            if scroll.y != 0.0 {
                factor *= (f64::from(scroll.y) * 0.003).exp();
            }
            if (factor - 1.0).abs() > 1e-6 {
                let t = g.t_of(pos.x);
                let nx = t - (t - view.0) / factor;
                let ny = t + (view.1 - t) / factor;
                cmds.push(Cmd::SetView(nx, ny));
            }
            if scroll.x != 0.0 {
                let dx = -f64::from(scroll.x) * ns_per_px;
                cmds.push(Cmd::SetView(view.0 + dx, view.1 + dx));
            }
        } else if names.contains(pos) && scroll.y != 0.0 {
            let step = (-scroll.y / ROW_H).round() as i64;
            d.timeline.first_row =
                (d.timeline.first_row as i64 + step).clamp(0, max_first as i64) as usize;
        }
    }
    d.timeline.first_row = d.timeline.first_row.min(max_first);
    let on_axis = |p: Pos2| p.y < g.rows_top;
    if resp.drag_started() {
        let p = ui
            .input(|i| i.pointer.press_origin())
            .or(resp.interact_pointer_pos())
            .unwrap_or(strip.center());
        let shift = ui.input(|i| i.modifiers.shift);
        let near = |t: u64| (g.x_of((t - a) as f64) - p.x).abs() < 5.0;
        d.timeline.drag = match d.nav.selection {
            Some((x, _)) if near(x) && !on_axis(p) => DragMode::Edge(false),
            Some((_, y)) if near(y) && !on_axis(p) => DragMode::Edge(true),
            _ if shift => DragMode::Select(g.abs_of(p.x)),
            _ if on_axis(p) => DragMode::Scrub,
            _ => DragMode::Pan,
        };
    }
    if resp.dragged() {
        let p = resp.interact_pointer_pos().unwrap_or(strip.center());
        match d.timeline.drag {
            DragMode::Pan => {
                let dx = -f64::from(resp.drag_delta().x) * ns_per_px;
                cmds.push(Cmd::SetView(view.0 + dx, view.1 + dx));
            }
            DragMode::Scrub => cmds.push(Cmd::SetPlayhead(g.abs_of(p.x))),
            DragMode::Select(anchor) => cmds.push(Cmd::SetSelection(Some((anchor, g.abs_of(p.x))))),
            DragMode::Edge(end) => {
                if let Some((x, y)) = d.nav.selection {
                    let t = g.abs_of(p.x);
                    cmds.push(Cmd::SetSelection(Some(if end { (x, t) } else { (t, y) })));
                }
            }
            DragMode::None => {}
        }
    }
    if resp.drag_stopped() {
        d.timeline.drag = DragMode::None;
    }
    if resp.clicked() {
        if let Some(p) = resp.interact_pointer_pos() {
            cmds.push(Cmd::SetPlayhead(g.abs_of(p.x)));
        }
    }
    if resp.double_clicked() {
        cmds.push(Cmd::FitAll);
    }
    if resp.secondary_clicked() {
        if let Some(p) = resp.interact_pointer_pos() {
            d.timeline.menu_t = g.abs_of(p.x);
        }
    }
    let menu_t = d.timeline.menu_t;
    let has_c2 = d.nav.cursor2.is_some();
    resp.context_menu(|ui| {
        ui.weak(format!("at +{} s", rel(d, menu_t)));
        if ui.button("Second cursor here").clicked() {
            cmds.push(Cmd::SetCursor2(Some(menu_t)));
            ui.close();
        }
        if has_c2 && ui.button("Clear the second cursor").clicked() {
            cmds.push(Cmd::SetCursor2(None));
            ui.close();
        }
        if ui.button("Bookmark here").clicked() {
            cmds.push(Cmd::AddBookmark(menu_t));
            ui.close();
        }
        if ui.button("Playhead here").clicked() {
            cmds.push(Cmd::SetPlayhead(menu_t));
            ui.close();
        }
    });
}

/// The time axis: ticks and labels, grid lines down the rows, the wall-clock time of the
/// view's start over the names.
fn draw_axis(ui: &egui::Ui, painter: &egui::Painter, g: &Geom) {
    let visuals = ui.visuals();
    let (full, strip, view) = (g.full, g.strip, g.view);
    let axis = Rect::from_min_max(
        Pos2::new(strip.left(), full.top()),
        Pos2::new(strip.right(), g.rows_top),
    );
    painter.rect_filled(axis, 0.0, visuals.faint_bg_color);
    let step = super::style::nice_step(g.ns_per_px);
    let mut k = (view.0 / step).floor();
    let grid = visuals.widgets.noninteractive.bg_stroke.color;
    while k * step <= view.1 {
        let t = k * step;
        let x = g.x_of(t);
        if x >= strip.left() {
            painter.line_segment(
                [
                    Pos2::new(x, axis.bottom() - 6.0),
                    Pos2::new(x, full.bottom()),
                ],
                Stroke::new(1.0, grid),
            );
            painter.text(
                Pos2::new(x + 3.0, axis.top() + 2.0),
                egui::Align2::LEFT_TOP,
                super::style::tick_label(t, step),
                egui::FontId::proportional(11.0),
                visuals.text_color(),
            );
        }
        k += 1.0;
    }
    painter.text(
        Pos2::new(full.left() + 4.0, full.top() + 2.0),
        egui::Align2::LEFT_TOP,
        format!(
            "{} UTC",
            timefmt::date((g.a as f64 + view.0.max(0.0)) as u64)
        ),
        egui::FontId::proportional(11.0),
        visuals.weak_text_color(),
    );
}

/// What is drawn over every row: the shade outside the recording, the selected range, the
/// bookmarks (a click on a flag moves the playhead), the second cursor and the playhead.
fn draw_marks(ui: &egui::Ui, d: &Doc, cmds: &mut Vec<Cmd>, painter: &egui::Painter, g: &Geom) {
    let visuals = ui.visuals();
    let (a, b, strip) = (g.a, g.b, g.strip);
    let shade = Color32::from_black_alpha(60);
    let bx0 = g.x_of(0.0);
    let bx1 = g.x_of((b - a) as f64);
    if bx0 > strip.left() {
        painter.rect_filled(
            Rect::from_min_max(strip.min, Pos2::new(bx0, strip.bottom())),
            0.0,
            shade,
        );
    }
    if bx1 < strip.right() {
        painter.rect_filled(
            Rect::from_min_max(Pos2::new(bx1, strip.top()), strip.max),
            0.0,
            shade,
        );
    }
    if let Some((x, y)) = d.nav.selection {
        let r = Rect::from_min_max(
            Pos2::new(g.x_of((x - a) as f64).max(strip.left()), strip.top()),
            Pos2::new(g.x_of((y - a) as f64).min(strip.right()), strip.bottom()),
        );
        if r.width() > 0.0 {
            painter.rect_filled(r, 0.0, visuals.selection.bg_fill.gamma_multiply(0.25));
            for xx in [r.left(), r.right()] {
                painter.line_segment(
                    [Pos2::new(xx, strip.top()), Pos2::new(xx, strip.bottom())],
                    Stroke::new(2.0, visuals.selection.bg_fill),
                );
            }
        }
    }
    for (i, (t, name)) in d.nav.bookmarks.iter().enumerate() {
        let x = g.x_of(t.saturating_sub(a) as f64);
        // A range bookmark (read from the recording or made from a selection): its span on
        // the axis, in its colour.
        let note = d
            .rec
            .notes
            .iter()
            .find(|n| n.start_ns == *t && n.label == *name);
        let c = note
            .and_then(|n| Color32::from_hex(&n.color).ok())
            .unwrap_or(Color32::from_rgb(120, 200, 255));
        if let Some(e) = note.and_then(|n| n.end_ns) {
            let x1 = g.x_of(e.saturating_sub(a) as f64).min(strip.right());
            if x1 > strip.left() && x < strip.right() {
                painter.rect_filled(
                    Rect::from_min_max(
                        Pos2::new(x.max(strip.left()), strip.top() + 12.0),
                        Pos2::new(x1, strip.top() + 19.0),
                    ),
                    0.0,
                    c.gamma_multiply(0.45),
                );
            }
        }
        if x < strip.left() || x > strip.right() {
            continue;
        }
        painter.line_segment(
            [
                Pos2::new(x, strip.top() + 12.0),
                Pos2::new(x, strip.bottom()),
            ],
            Stroke::new(1.0, c.gamma_multiply(0.5)),
        );
        let flag = Rect::from_min_size(Pos2::new(x, strip.top() + 12.0), Vec2::new(9.0, 7.0));
        painter.rect_filled(flag, 0.0, c);
        let fr = ui.interact(
            flag.expand(3.0),
            ui.scope_id().with(("bookmark", i)),
            Sense::click(),
        );
        if fr.clicked() {
            cmds.push(Cmd::SetPlayhead(*t));
        }
        fr.on_hover_text(format!("{name} (+{} s)", rel(d, *t)));
    }
    if let Some(c2) = d.nav.cursor2 {
        let x = g.x_of(c2.saturating_sub(a) as f64);
        if x >= strip.left() && x <= strip.right() {
            let mut y = strip.top();
            while y < strip.bottom() {
                painter.line_segment(
                    [Pos2::new(x, y), Pos2::new(x, (y + 6.0).min(strip.bottom()))],
                    Stroke::new(1.5, CURSOR2),
                );
                y += 10.0;
            }
        }
    }
    let px_x = g.x_of((d.nav.playhead - a) as f64);
    if px_x >= strip.left() && px_x <= strip.right() {
        let c = Color32::from_rgb(255, 90, 70);
        painter.line_segment(
            [
                Pos2::new(px_x, strip.top()),
                Pos2::new(px_x, strip.bottom()),
            ],
            Stroke::new(1.5, c),
        );
        painter.add(egui::Shape::convex_polygon(
            vec![
                Pos2::new(px_x - 6.0, strip.top()),
                Pos2::new(px_x + 6.0, strip.top()),
                Pos2::new(px_x, strip.top() + 9.0),
            ],
            c,
            Stroke::NONE,
        ));
    }
    let grid = visuals.widgets.noninteractive.bg_stroke.color;
    painter.rect_stroke(strip, 0.0, Stroke::new(1.0, grid), StrokeKind::Inside);
}
