//! The timeline: a time axis, one density row per visible topic (messages per pixel, drawn as
//! runs of equal-height bars, never one shape per message), the playhead, the selected range.
//!
//! Wheel or pinch over the rows zooms around the pointer; dragging pans; a click or a drag on
//! the axis moves the playhead; shift-drag selects a range, whose edges can be dragged; the
//! wheel over the topic names scrolls the rows (only the rows on screen are drawn).

use std::collections::HashMap;

use egui::{Color32, Pos2, Rect, Sense, Stroke, StrokeKind, Vec2};

use super::worker::{Times, HIST_BINS, SKIP};
use super::{Cmd, Doc};
use crate::timefmt;

const ROW_H: f32 = 22.0;
/// Colour of the second cursor.
const CURSOR2: Color32 = Color32::from_rgb(90, 200, 120);
/// Height of an image topic's row when it shows thumbnails.
const THUMB_ROW_H: f32 = 58.0;
const AXIS_H: f32 = 30.0;
/// The line under the rows that says which are shown, when not all fit.
const FOOTER_H: f32 = 14.0;
const NAME_W: f32 = 200.0;
const SPEEDS: [f32; 9] = [0.1, 0.25, 0.5, 1.0, 1.5, 2.0, 4.0, 5.0, 10.0];

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
    pub thumbs: super::thumbs::Thumbs,
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

/// First index at or after `from` whose time is `>= t`, searching outwards from `from` (the
/// next pixel's boundary is usually near the last one).
fn gallop_by<T>(v: &[T], key: impl Fn(&T) -> u64, from: usize, t: u64) -> usize {
    let mut lo = from;
    let mut step = 1;
    let mut hi = from;
    while hi < v.len() && key(&v[hi]) < t {
        lo = hi + 1;
        hi = from + step;
        step *= 2;
    }
    let hi = hi.min(v.len());
    lo + v[lo..hi].partition_point(|x| key(x) < t)
}

/// First index at or after `from` of `v` whose time is `>= t` (every time before `from` is
/// below `t`), through `skip` (every [`SKIP`]-th time of `v`) when given.
fn first_at_by<T>(
    v: &[T],
    key: impl Fn(&T) -> u64 + Copy,
    skip: Option<&[u64]>,
    from: usize,
    t: u64,
) -> usize {
    match skip {
        Some(sk) => {
            let s = gallop_by(sk, |&x| x, from / SKIP, t);
            if s == 0 {
                return from;
            }
            let lo = (s - 1) * SKIP;
            let hi = (s * SKIP).min(v.len());
            (lo + v[lo..hi].partition_point(|x| key(x) < t)).max(from)
        }
        None => gallop_by(v, key, from, t),
    }
}

/// [`first_at_by`] over a topic's times, wherever they are kept.
fn first_at(v: &Times, skip: Option<&[u64]>, from: usize, t: u64) -> usize {
    match v {
        Times::Table(tab, c) => first_at_by(&tab.per_connection[*c], |e| e.time_ns, skip, from, t),
        Times::Merged(m) => first_at_by(m, |&x| x, skip, from, t),
    }
}

/// Messages of topic `ti` per pixel over `view` (ns from the start), `px` pixels wide: from
/// the histogram when a pixel spans several of its bins (exact once indexed), else from the
/// message times.
fn density(d: &Doc, ti: usize, view: (f64, f64), px: usize) -> Vec<u32> {
    let (start, end) = d.rec.range();
    let w = (view.1 - view.0) / px as f64;
    let span = (end - start).max(1) as f64;
    let bins_per_px = w / span * HIST_BINS as f64;
    if let (Some(v), true) = (d.rec.times(ti), bins_per_px < 2.0) {
        let mut out = Vec::with_capacity(px);
        let to_t = |j: usize| -> u64 {
            let x = start as f64 + view.0 + w * j as f64;
            if x <= 0.0 {
                0
            } else {
                x as u64
            }
        };
        // Dense rows find each pixel's first message in every SKIP-th time first, then
        // within SKIP times: a row of millions of messages touches a sixty-fourth of them.
        let skip = d
            .rec
            .times_skip(ti)
            .filter(|_| v.len() / px.max(1) > 4 * SKIP);
        let mut prev = v.partition_point(|t| t < to_t(0));
        for j in 0..px {
            let t1 = to_t(j + 1);
            // The last pixel includes the bag's end.
            let t1 = if j + 1 == px && t1 >= end {
                end + 1
            } else {
                t1
            };
            let next = first_at(v, skip, prev, t1);
            out.push((next - prev) as u32);
            prev = next;
        }
        return out;
    }
    let Some(h) = d.rec.hist.get(ti) else {
        return vec![0; px];
    };
    let mut cum = Vec::with_capacity(HIST_BINS + 1);
    let mut acc = 0u64;
    cum.push(0u64);
    for &c in h {
        acc += u64::from(c);
        cum.push(acc);
    }
    let at = |x: f64| -> f64 {
        let b = (x / span * HIST_BINS as f64).clamp(0.0, HIST_BINS as f64);
        let i = (b as usize).min(HIST_BINS - 1);
        let f = b - i as f64;
        cum[i] as f64 + (cum[i + 1] - cum[i]) as f64 * f
    };
    (0..px)
        .map(|j| {
            let a = at(view.0 + w * j as f64);
            let b = at(view.0 + w * (j + 1) as f64);
            (b - a).round().max(0.0) as u32
        })
        .collect()
}

/// Bar height of a pixel column: at least 2 px for any message, capped at the row.
fn bar(c: u32, scale: f32, hmax: f32) -> f32 {
    if c == 0 {
        0.0
    } else {
        (c as f32 / scale * hmax).clamp(2.0, hmax).round()
    }
}

fn row_scale(counts: &[u32]) -> f32 {
    let mut nz: Vec<u32> = counts.iter().copied().filter(|&c| c > 0).collect();
    if nz.is_empty() {
        return 1.0;
    }
    let k = (nz.len() * 95 / 100).min(nz.len() - 1);
    let (_, p, _) = nz.select_nth_unstable(k);
    (*p as f32 * 1.15).max(1.0)
}

fn rel(d: &Doc, t: u64) -> String {
    let (a, _) = d.rec.range();
    format!("{:.3}", (t as f64 - a as f64) / 1e9)
}

fn toolbar(ui: &mut egui::Ui, d: &mut Doc, cmds: &mut Vec<Cmd>) {
    let (a, b) = d.rec.range();
    ui.horizontal_wrapped(|ui| {
        let play = if d.nav.playing { "Pause" } else { "Play" };
        if ui.button(play).on_hover_text("Space").clicked() {
            cmds.push(Cmd::TogglePlay);
        }
        if ui
            .button("|<")
            .on_hover_text("Previous message (←)")
            .clicked()
        {
            cmds.push(Cmd::Step(false));
        }
        if ui.button(">|").on_hover_text("Next message (→)").clicked() {
            cmds.push(Cmd::Step(true));
        }
        egui::ComboBox::new("speed", "speed")
            .width(64.0)
            .selected_text(format!("{}×", d.nav.speed))
            .show_ui(ui, |ui| {
                for s in SPEEDS {
                    if ui
                        .selectable_label(d.nav.speed == s, format!("{s}×"))
                        .clicked()
                    {
                        cmds.push(Cmd::SetSpeed(s));
                    }
                }
            });
        ui.separator();
        ui.label(format!(
            "t = +{} s  ·  {} UTC",
            rel(d, d.nav.playhead),
            timefmt::date(d.nav.playhead)
        ));
        if let Some(c2) = d.nav.cursor2 {
            let dt = c2 as i128 - d.nav.playhead as i128;
            let sign = if dt < 0 { "-" } else { "+" };
            ui.colored_label(
                CURSOR2,
                format!("Δt = {sign}{}", timefmt::period(dt.unsigned_abs() as u64)),
            )
            .on_hover_text(
                "Second cursor minus playhead (right-click the timeline to move or clear it)",
            );
        }
        ui.separator();
        if ui
            .button("Bookmark")
            .on_hover_text("Bookmark the playhead (B); bookmarks are kept per file")
            .clicked()
        {
            cmds.push(Cmd::AddBookmark(d.nav.playhead));
        }
        if !d.nav.bookmarks.is_empty() {
            ui.menu_button(format!("Bookmarks ({})", d.nav.bookmarks.len()), |ui| {
                for (i, (t, name)) in d.nav.bookmarks.iter().enumerate() {
                    ui.horizontal(|ui| {
                        if ui.button(format!("{name}  +{} s", rel(d, *t))).clicked() {
                            cmds.push(Cmd::SetPlayhead(*t));
                            ui.close();
                        }
                        if ui.small_button("x").on_hover_text("Remove").clicked() {
                            cmds.push(Cmd::RemoveBookmark(i));
                        }
                    });
                }
            });
        }
        ui.separator();
        if ui.button("Fit all").clicked() {
            cmds.push(Cmd::FitAll);
        }
        if d.rec
            .bag
            .summary()
            .topics
            .iter()
            .any(|t| crate::ops::image::is_image_type(&t.datatype))
        {
            ui.toggle_value(&mut d.timeline.show_thumbs, "Thumbnails")
                .on_hover_text("Images on the camera topics' rows");
        }
        ui.separator();
        // The selected range, typed or dragged.
        if d.timeline.sel_text_for != Some(d.nav.selection) {
            d.timeline.sel_text = match d.nav.selection {
                Some((x, y)) => (rel(d, x), rel(d, y)),
                None => (String::new(), String::new()),
            };
            d.timeline.sel_text_for = Some(d.nav.selection);
        }
        ui.label("Range");
        let r1 = ui.add(
            egui::TextEdit::singleline(&mut d.timeline.sel_text.0)
                .desired_width(70.0)
                .hint_text("start s"),
        );
        ui.label("–");
        let r2 = ui.add(
            egui::TextEdit::singleline(&mut d.timeline.sel_text.1)
                .desired_width(70.0)
                .hint_text("end s"),
        );
        if (r1.lost_focus() || r2.lost_focus()) && ui.input(|i| i.key_pressed(egui::Key::Enter)) {
            let p = |s: &str| {
                s.trim()
                    .parse::<f64>()
                    .ok()
                    .map(|x| (a as f64 + x * 1e9).max(0.0) as u64)
            };
            match (p(&d.timeline.sel_text.0), p(&d.timeline.sel_text.1)) {
                (Some(x), Some(y)) => cmds.push(Cmd::SetSelection(Some((x, y)))),
                (Some(x), None) => cmds.push(Cmd::SetSelection(Some((x, b)))),
                (None, Some(y)) => cmds.push(Cmd::SetSelection(Some((a, y)))),
                (None, None) => cmds.push(Cmd::SetSelection(None)),
            }
            d.timeline.sel_text_for = None;
        }
        if let Some((x, y)) = d.nav.selection {
            ui.weak(timefmt::duration(y - x));
            if ui.small_button("Clear").clicked() {
                cmds.push(Cmd::SetSelection(None));
            }
        } else {
            ui.weak("shift-drag");
        }
    });
}

/// The timeline panel.
pub fn show(ui: &mut egui::Ui, d: &mut Doc, cmds: &mut Vec<Cmd>) {
    toolbar(ui, d, cmds);
    let (a, b) = d.rec.range();
    let rows: Vec<usize> = (0..d.rec.bag.summary().topics.len())
        .filter(|&t| d.nav.visible[t])
        .collect();
    let full = ui.available_rect_before_wrap();
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
    // Hover read-out.
    if let Some(p) = resp.hover_pos() {
        let t = g.abs_of(p.x);
        resp.on_hover_text_at_pointer(format!("+{} s\n{} UTC", rel(d, t), timefmt::date(t)));
    }
    ui.allocate_rect(full, Sense::hover());
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
                if thumbs_on && crate::ops::image::is_image_type(&s.topics[t].datatype) {
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

/// The rows on screen (virtualised: only those are computed and drawn), the footer saying
/// which, and the thumbnails they are missing asked for.
#[allow(clippy::too_many_arguments)]
fn draw_rows(
    ui: &egui::Ui,
    d: &mut Doc,
    cmds: &mut Vec<Cmd>,
    painter: &egui::Painter,
    g: &Geom,
    rows: &[usize],
    heights: &RowHeights,
    thumbs_on: bool,
) {
    let visuals = ui.visuals().clone();
    let first = d.timeline.first_row;
    let visible_rows = heights.fit_from(first);
    let shown = &rows[first.min(rows.len())..(first + visible_rows).min(rows.len())];
    {
        let s = d.rec.bag.summary();
        let topic_of_conn = |c: usize| s.topics.iter().position(|t| t.connections.contains(&c));
        d.timeline.thumbs.poll(ui.ctx(), topic_of_conn);
    }
    let mut missing_thumbs = Vec::new();
    let mut y = g.rows_top;
    let source = d
        .rec
        .indexed
        .as_ref()
        .map_or(std::sync::Arc::as_ptr(&d.rec.hist) as usize, |i| {
            std::sync::Arc::as_ptr(&i.tables) as usize
        });
    let key = CacheKey {
        view: g.view,
        px: g.px(),
        source,
    };
    for (r, &ti) in shown.iter().enumerate() {
        let rh = heights.h[first + r];
        let row = Rect::from_min_size(Pos2::new(g.full.left(), y), Vec2::new(g.full.width(), rh));
        y += rh;
        draw_row(
            ui,
            d,
            cmds,
            painter,
            g,
            (r, ti),
            row,
            key,
            &mut missing_thumbs,
        );
    }
    if thumbs_on {
        let bag = d.rec.bag.clone();
        d.timeline.thumbs.request(&bag, ui.ctx(), missing_thumbs);
    }
    if rows.is_empty() {
        painter.text(
            Pos2::new(g.strip.center().x, g.rows_top + 40.0),
            egui::Align2::CENTER_CENTER,
            "No topic is shown: tick topics in the tree.",
            egui::FontId::proportional(14.0),
            visuals.weak_text_color(),
        );
    } else if rows.len() > visible_rows {
        painter.text(
            Pos2::new(g.full.left() + 4.0, g.full.bottom() - 2.0),
            egui::Align2::LEFT_BOTTOM,
            format!(
                "rows {}–{} of {} (wheel here to scroll)",
                first + 1,
                first + shown.len(),
                rows.len()
            ),
            egui::FontId::proportional(11.0),
            visuals.weak_text_color(),
        );
    }
}

/// One topic's row: its name (a click selects it; its menu turns the rate line on), its
/// density (with thumbnails above it for an image row), the rate line, the log marks.
#[allow(clippy::too_many_arguments)]
fn draw_row(
    ui: &egui::Ui,
    d: &mut Doc,
    cmds: &mut Vec<Cmd>,
    painter: &egui::Painter,
    g: &Geom,
    (r, ti): (usize, usize),
    row: Rect,
    key: CacheKey,
    missing_thumbs: &mut Vec<super::worker::InspectKey>,
) {
    let visuals = ui.visuals();
    let (strip, rh, y0) = (g.strip, row.height(), row.top());
    if d.nav.selected == Some(ti) {
        painter.rect_filled(row, 0.0, visuals.selection.bg_fill.gamma_multiply(0.35));
    } else if r % 2 == 1 {
        painter.rect_filled(row, 0.0, visuals.faint_bg_color);
    }
    let label_rect = Rect::from_min_max(row.min, Pos2::new(strip.left(), row.bottom()));
    let lr = ui.interact(label_rect, ui.scope_id().with(("row", ti)), Sense::click());
    if lr.clicked() {
        cmds.push(Cmd::SelectTopic(Some(ti)));
    }
    let mut rate_on = d.timeline.rate_rows.contains(&ti);
    lr.context_menu(|ui| {
        if ui.checkbox(&mut rate_on, "Rate over time").changed() {
            ui.close();
        }
    });
    if rate_on != d.timeline.rate_rows.contains(&ti) {
        if rate_on {
            d.timeline.rate_rows.insert(ti);
        } else {
            d.timeline.rate_rows.remove(&ti);
        }
    }
    painter.rect_filled(
        Rect::from_min_size(
            Pos2::new(row.left() + 2.0, y0 + 5.0),
            Vec2::new(4.0, rh - 10.0),
        ),
        1.0,
        topic_color(ti),
    );
    let t = &d.rec.bag.summary().topics[ti];
    let name = if t.name.len() > 28 {
        format!("…{}", &t.name[t.name.len() - 27..])
    } else {
        t.name.clone()
    };
    painter.text(
        Pos2::new(row.left() + 10.0, y0 + rh / 2.0),
        egui::Align2::LEFT_CENTER,
        name,
        egui::FontId::proportional(13.0),
        if lr.hovered() {
            visuals.strong_text_color()
        } else {
            visuals.text_color()
        },
    );
    if !matches!(d.timeline.cache.get(&ti), Some((k, _)) if *k == key) {
        let v = density(d, ti, g.view, g.px());
        d.timeline.cache.insert(ti, (key, v));
    }
    // With thumbnails the density keeps a thin band at the bottom of the row.
    let hmax = if rh > ROW_H { 8.0 } else { ROW_H - 6.0 };
    if rh > ROW_H {
        thumbnails(
            ui,
            d,
            ti,
            Rect::from_min_max(
                Pos2::new(strip.left(), y0 + 2.0),
                Pos2::new(strip.right(), row.bottom() - hmax - 5.0),
            ),
            g.view,
            missing_thumbs,
        );
    }
    let counts = &d.timeline.cache[&ti].1;
    density_bars(painter, counts, ti, strip.left(), row.bottom() - 3.0, hmax);
    if d.timeline.rate_rows.contains(&ti) && !counts.is_empty() {
        rate_line(
            painter,
            counts,
            g.ns_per_px,
            strip.left(),
            row,
            visuals.strong_text_color(),
        );
    }
    if let Some(marks) = d.log.marks.get(&ti) {
        log_marks(painter, g, marks, y0, visuals.text_color());
    }
}

/// A row's density as bars from `base` up, scaled to a high percentile (not the maximum, so
/// one burst does not flatten the row); runs of equal height are one rectangle, the row one
/// mesh.
fn density_bars(painter: &egui::Painter, counts: &[u32], ti: usize, x0: f32, base: f32, hmax: f32) {
    let max = row_scale(counts);
    let color = topic_color(ti);
    let mut mesh = egui::Mesh::default();
    let mut j = 0;
    while j < counts.len() {
        let h = bar(counts[j], max, hmax);
        let mut e = j + 1;
        while e < counts.len() && bar(counts[e], max, hmax) == h {
            e += 1;
        }
        if h > 0.0 {
            mesh.add_colored_rect(
                Rect::from_min_max(
                    Pos2::new(x0 + j as f32, base - h),
                    Pos2::new(x0 + e as f32, base),
                ),
                color,
            );
        }
        j = e;
    }
    painter.add(egui::Shape::mesh(mesh));
}

/// Warnings and worse of a log topic: a tick each (the worst per pixel) over its row.
fn log_marks(
    painter: &egui::Painter,
    g: &Geom,
    marks: &[(u64, crate::ops::log::Level)],
    y0: f32,
    text: Color32,
) {
    let (a, strip, px) = (g.a, g.strip, g.px());
    let mut worst: Vec<Option<crate::ops::log::Level>> = vec![None; px + 1];
    // Marks are in time order: only those in view are looked at.
    let (v0, v1) = (a as f64 + g.view.0, a as f64 + g.view.1);
    let lo = marks.partition_point(|m| (m.0 as f64) < v0);
    let hi = marks.partition_point(|m| (m.0 as f64) <= v1);
    for &(t, l) in &marks[lo..hi.max(lo)] {
        if t < a {
            continue;
        }
        let x = g.x_of((t - a) as f64);
        if x < strip.left() || x > strip.right() {
            continue;
        }
        let col = ((x - strip.left()) as usize).min(px);
        if worst[col].is_none_or(|w| l.rank() > w.rank()) {
            worst[col] = Some(l);
        }
    }
    for (col, l) in worst.iter().enumerate() {
        if let Some(l) = l {
            let x = strip.left() + col as f32 + 0.5;
            painter.line_segment(
                [Pos2::new(x, y0 + 2.0), Pos2::new(x, y0 + ROW_H * 0.55)],
                egui::Stroke::new(2.0, super::style::level_color(*l, text)),
            );
        }
    }
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
        if x < strip.left() || x > strip.right() {
            continue;
        }
        let c = Color32::from_rgb(120, 200, 255);
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

/// Draws an image row's thumbnails in `area`: one per slot as wide as a thumbnail, each the
/// message at or before the slot's middle (a slot with no message before it stays empty, and
/// a message is drawn once even if it falls in several slots). Missing ones are collected.
fn thumbnails(
    ui: &egui::Ui,
    d: &Doc,
    ti: usize,
    area: Rect,
    view: (f64, f64),
    missing: &mut Vec<super::worker::InspectKey>,
) {
    if area.height() < 12.0 || area.width() < 12.0 {
        return;
    }
    let aspect = d
        .timeline
        .thumbs
        .aspect
        .get(&ti)
        .copied()
        .unwrap_or(4.0 / 3.0);
    let tw = (area.height() * aspect).clamp(8.0, 400.0);
    let gap = 3.0;
    let slots = ((area.width() + gap) / (tw + gap)).floor() as usize;
    let a = d.rec.range().0 as f64;
    let ns_per_px = (view.1 - view.0) / f64::from(area.width().max(1.0));
    let painter = ui.painter_at(area);
    let mut last = None;
    for k in 0..slots {
        let x0 = area.left() + k as f32 * (tw + gap);
        let mid = a + view.0 + f64::from(x0 - area.left() + tw / 2.0) * ns_per_px;
        if mid < a {
            continue;
        }
        let Some(key) = d.rec.message_at(ti, mid as u64) else {
            continue;
        };
        if last == Some(key) {
            continue;
        }
        last = Some(key);
        let r = Rect::from_min_size(Pos2::new(x0, area.top()), Vec2::new(tw, area.height()));
        match d.timeline.thumbs.get(&key) {
            Some(Some(tex)) => {
                painter.image(
                    tex.id(),
                    r,
                    Rect::from_min_max(Pos2::ZERO, Pos2::new(1.0, 1.0)),
                    Color32::WHITE,
                );
            }
            Some(None) => {
                painter.rect_stroke(
                    r,
                    2.0,
                    Stroke::new(1.0, Color32::from_rgb(200, 80, 70)),
                    egui::StrokeKind::Inside,
                );
            }
            None => {
                painter.rect_filled(r, 2.0, ui.visuals().faint_bg_color);
                missing.push(key);
            }
        }
    }
}

/// A topic's rate over time drawn over its row: messages per second in a sliding window of a
/// few pixels (at least 1 ms), scaled to the row, with its peak written at the right.
fn rate_line(
    painter: &egui::Painter,
    counts: &[u32],
    ns_per_px: f64,
    x0: f32,
    row: Rect,
    color: Color32,
) {
    let win = ((1e6 / ns_per_px).ceil() as usize).clamp(5, 400);
    let mut sum: u64 = 0;
    let mut rate = Vec::with_capacity(counts.len());
    for j in 0..counts.len() {
        sum += u64::from(counts[j]);
        if j >= win {
            sum -= u64::from(counts[j - win]);
        }
        let n = (j + 1).min(win) as f64;
        rate.push(sum as f64 / (n * ns_per_px / 1e9));
    }
    let peak = rate.iter().copied().fold(0.0f64, f64::max);
    if peak <= 0.0 {
        return;
    }
    let h = row.height() - 6.0;
    let pts: Vec<Pos2> = rate
        .iter()
        .enumerate()
        .map(|(j, r)| Pos2::new(x0 + j as f32, row.bottom() - 3.0 - (r / peak) as f32 * h))
        .collect();
    painter.add(egui::Shape::line(pts, Stroke::new(1.2, color)));
    painter.text(
        Pos2::new(row.right() - 4.0, row.top() + 2.0),
        egui::Align2::RIGHT_TOP,
        format!("peak {peak:.1} Hz"),
        egui::FontId::proportional(10.0),
        color,
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pixel boundaries found through the skip list equal a plain search, on dense and
    /// sparse stretches, repeated times and boundaries before and after every time.
    #[test]
    fn first_at_through_skip_equals_plain_search() {
        let mut v = Vec::new();
        let mut t = 1_000u64;
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for i in 0..100_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Bursts, gaps and equal times.
            t += match x % 10 {
                0 => 0,
                1 => 5_000,
                _ => x % 7,
            } + u64::from(i % 50_000 == 0) * 1_000_000;
            v.push(t);
        }
        let skip: Vec<u64> = v.iter().step_by(SKIP).copied().collect();
        for step in [1u64, 3, 17, 250, 4_000, 90_000] {
            let mut prev_plain = 0;
            let mut prev_skip = 0;
            let mut edge = 0u64;
            while edge <= t + 2 * step {
                let a = first_at_by(&v, |&x| x, None, prev_plain, edge);
                let b = first_at_by(&v, |&x| x, Some(&skip), prev_skip, edge);
                assert_eq!(a, v.partition_point(|&y| y < edge), "plain at {edge}");
                assert_eq!(b, a, "skip at {edge}, step {step}");
                prev_plain = a;
                prev_skip = b;
                edge += step;
            }
        }
        // The same through a topic's times kept in its table, and merged.
        let tables = std::sync::Arc::new(crate::MessageTables {
            per_connection: vec![v
                .iter()
                .map(|&time_ns| crate::IndexEntry {
                    time_ns,
                    chunk: 0,
                    offset: 0,
                })
                .collect()],
            warnings: Vec::new(),
        });
        let table = Times::of(&tables, &[0]);
        assert!(matches!(table, Times::Table(..)));
        let merged = Times::Merged(std::sync::Arc::new(v.clone()));
        assert_eq!(table.len(), v.len());
        assert_eq!(table.every(SKIP), skip);
        assert_eq!(table.median_period(), crate::ops::timing::median_period(&v));
        assert_eq!(*table.to_vec(), v);
        for factor in [1.5, 3.0] {
            let want = crate::ops::timing::gaps(&v, factor);
            assert_eq!(table.gaps(factor).1, want);
            assert_eq!(merged.gaps(factor), (table.median_period(), want));
        }
        for edge in (0..t + 10_000).step_by(49_999) {
            let want = v.partition_point(|&y| y < edge);
            for times in [&table, &merged] {
                assert_eq!(first_at(times, None, 0, edge), want);
                assert_eq!(first_at(times, Some(&skip), 0, edge), want);
                assert_eq!(times.partition_point(|y| y < edge), want);
                assert_eq!(times.get(want), v.get(want).copied());
            }
        }
    }
}
