//! The rows of the timeline on screen: a topic's name, its density, thumbnails of an image
//! topic, the rate line and the log marks.

use egui::{Color32, Pos2, Rect, Sense, Stroke, Vec2};

use super::density::{density, row_scale};
use super::{bar, topic_color, CacheKey, Cmd, Doc, Geom, RowHeights, ROW_H};

/// The rows on screen (virtualised: only those are computed and drawn), the footer saying
/// which, and the thumbnails they are missing asked for.
#[allow(clippy::too_many_arguments)]
pub(super) fn draw_rows(
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
pub(super) fn draw_row(
    ui: &egui::Ui,
    d: &mut Doc,
    cmds: &mut Vec<Cmd>,
    painter: &egui::Painter,
    g: &Geom,
    (r, ti): (usize, usize),
    row: Rect,
    key: CacheKey,
    missing_thumbs: &mut Vec<crate::inspector::InspectKey>,
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
pub(super) fn density_bars(
    painter: &egui::Painter,
    counts: &[u32],
    ti: usize,
    x0: f32,
    base: f32,
    hmax: f32,
) {
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
pub(super) fn log_marks(
    painter: &egui::Painter,
    g: &Geom,
    marks: &[(u64, bagscope_ops::reports::log::Level)],
    y0: f32,
    text: Color32,
) {
    let (a, strip, px) = (g.a, g.strip, g.px());
    let mut worst: Vec<Option<bagscope_ops::reports::log::Level>> = vec![None; px + 1];
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
                egui::Stroke::new(2.0, crate::style::level_color(*l, text)),
            );
        }
    }
}

/// Draws an image row's thumbnails in `area`: one per slot as wide as a thumbnail, each the
/// message at or before the slot's middle (a slot with no message before it stays empty, and
/// a message is drawn once even if it falls in several slots). Missing ones are collected.
pub(super) fn thumbnails(
    ui: &egui::Ui,
    d: &Doc,
    ti: usize,
    area: Rect,
    view: (f64, f64),
    missing: &mut Vec<crate::inspector::InspectKey>,
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
pub(super) fn rate_line(
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
