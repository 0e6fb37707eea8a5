//! Drawing a map panel: its controls, the tiles under the view (a parent tile stretched where
//! a tile is not here yet, a grid where none is), the tracks thinned to the zoom, GeoJSON
//! shapes, the position at the playhead with its accuracy ellipse, a scale bar, the tiles'
//! credit, hover and click-to-seek.

use egui::{Color32, Pos2, Rect, Sense, Shape, Stroke, Vec2};

use super::thin::{ColourBy, Prepared};
use super::tiles::{TileLayer, TileSource};
use super::{MapPanel, View};
use crate::Cmd;
use bagscope_ops::spatial::geo::mercator;
use bagscope_ops::spatial::geo::shapes::Shape as GeoShape;

/// Tile uploads a frame.
const UPLOADS_PER_FRAME: usize = 8;
/// Deepest zoom the view goes to.
const MAX_VIEW_ZOOM: f64 = 22.0;

/// The panel's controls: topics, colouring, follow, tiles, fit.
pub fn controls(ui: &mut egui::Ui, p: &mut MapPanel, candidates: &[String]) {
    ui.horizontal_wrapped(|ui| {
        ui.menu_button("Topics", |ui| {
            for t in candidates {
                let mut on = p.settings.topics.contains(t);
                if ui.checkbox(&mut on, t).changed() {
                    if on {
                        p.settings.topics.push(t.clone());
                    } else {
                        p.settings.topics.retain(|x| x != t);
                    }
                }
            }
            ui.separator();
            ui.label("Latitude and longitude paths of any topic:");
            let r = ui.add(
                egui::TextEdit::singleline(&mut p.paths_edit)
                    .hint_text("/gps.lat, /gps.lon")
                    .desired_width(260.0),
            );
            if r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)) {
                let t = p.paths_edit.trim().to_string();
                if t.contains(',') && !p.settings.topics.contains(&t) {
                    p.settings.topics.push(t);
                }
            }
        });
        let mut by = p.settings.colour_by.clone();
        egui::ComboBox::from_id_salt(("map-colour", p.id))
            .selected_text(format!("colour: {}", by.label()))
            .show_ui(ui, |ui| {
                for c in [
                    ColourBy::Topic,
                    ColourBy::Speed,
                    ColourBy::Altitude,
                    ColourBy::Accuracy,
                    ColourBy::Status,
                ] {
                    let label = c.label();
                    ui.selectable_value(&mut by, c, label);
                }
                ui.horizontal(|ui| {
                    ui.label("expression:");
                    let r = ui.add(
                        egui::TextEdit::singleline(&mut p.expr_edit)
                            .hint_text("/odom.twist.twist.linear.x")
                            .desired_width(220.0),
                    );
                    if r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)) {
                        by = ColourBy::Expression(p.expr_edit.trim().to_string());
                    }
                });
            });
        p.settings.colour_by = by;
        ui.checkbox(&mut p.settings.follow, "follow")
            .on_hover_text("Keep the position at the playhead in the middle");
        if ui.button("fit").on_hover_text("Show every track").clicked() {
            p.view = None;
            p.settings.follow = false;
        }
        ui.label("tiles:");
        let r = ui.add(
            egui::TextEdit::singleline(&mut p.tiles_edit)
                .desired_width(180.0)
                .hint_text("osm, none, https://…/{z}/{x}/{y}.png, file://…, .pmtiles"),
        );
        if r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)) {
            match TileSource::parse(&p.tiles_edit) {
                Ok(_) => {
                    p.settings.tiles = p.tiles_edit.trim().to_string();
                    p.tiles_error = None;
                }
                Err(e) => p.tiles_error = Some(e),
            }
        }
    });
    if let Some(e) = &p.tiles_error {
        ui.colored_label(Color32::from_rgb(220, 80, 60), e);
    }
    for l in &p.layers {
        if let Some(e) = &l.error {
            ui.colored_label(Color32::from_rgb(220, 80, 60), format!("{}: {e}", l.name));
        }
        // Said as the worker wrote it (nothing counted again each frame).
        if let Some(n) = &l.note {
            ui.colored_label(Color32::from_rgb(220, 80, 60), n);
        }
    }
}

/// A colour of the value ramp (a perceptual blue → green → yellow → red), `f` in 0..=1.
pub fn ramp(f: f32) -> Color32 {
    const STOPS: [[u8; 3]; 5] = [
        [48, 18, 160],
        [30, 140, 230],
        [40, 200, 110],
        [250, 200, 30],
        [220, 40, 30],
    ];
    let f = if f.is_finite() {
        f.clamp(0.0, 1.0)
    } else {
        0.0
    } * 4.0;
    let i = (f.floor() as usize).min(3);
    let t = f - i as f32;
    let (a, b) = (STOPS[i], STOPS[i + 1]);
    let mix = |k: usize| (f32::from(a[k]) + (f32::from(b[k]) - f32::from(a[k])) * t) as u8;
    Color32::from_rgb(mix(0), mix(1), mix(2))
}

/// The view that shows every track (or the world).
fn fitted(p: &MapPanel, size: Vec2) -> View {
    let mut min = [f64::MAX; 2];
    let mut max = [f64::MIN; 2];
    let mut any = false;
    let mut add = |w: [f64; 2]| {
        min = [min[0].min(w[0]), min[1].min(w[1])];
        max = [max[0].max(w[0]), max[1].max(w[1])];
        any = true;
    };
    for l in &p.layers {
        if let Some(t) = &l.track {
            // The last level keeps every fix: its runs' boxes hold them all.
            if let Some(lv) = t.levels.last() {
                for r in &lv.runs {
                    add(r.min);
                    add(r.max);
                }
            }
        }
        if let Some(sh) = &l.shapes {
            // The last message's shapes.
            if let Some((_, Ok(features))) = sh.last() {
                for f in features {
                    for s in &f.shapes {
                        match s {
                            GeoShape::Point(p) => add(mercator::world(p.0, p.1)),
                            GeoShape::Line(v) | GeoShape::Polygon(v) => {
                                v.iter().for_each(|p| add(mercator::world(p.0, p.1)))
                            }
                        }
                    }
                }
            }
        }
    }
    if !any {
        return View {
            center: [0.5, 0.5],
            zoom: 1.0,
        };
    }
    let w = (max[0] - min[0]).max(1e-9);
    let h = (max[1] - min[1]).max(1e-9);
    let zx = (f64::from(size.x) * 0.85 / 256.0 / w).log2();
    let zy = (f64::from(size.y) * 0.85 / 256.0 / h).log2();
    View {
        center: [(min[0] + max[0]) / 2.0, (min[1] + max[1]) / 2.0],
        zoom: zx.min(zy).clamp(0.0, 19.0),
    }
}

/// Screen ↔ world for one frame.
#[derive(Clone, Copy)]
pub struct Frame {
    pub rect: Rect,
    pub view: View,
    /// Pixels per world unit.
    pub scale: f64,
}

impl Frame {
    pub fn new(rect: Rect, view: View) -> Frame {
        Frame {
            rect,
            view,
            scale: 256.0 * view.zoom.exp2(),
        }
    }

    pub fn to_screen(&self, w: [f64; 2]) -> Pos2 {
        let c = self.rect.center();
        Pos2::new(
            c.x + ((w[0] - self.view.center[0]) * self.scale) as f32,
            c.y + ((w[1] - self.view.center[1]) * self.scale) as f32,
        )
    }

    pub fn to_world(&self, p: Pos2) -> [f64; 2] {
        let c = self.rect.center();
        [
            self.view.center[0] + f64::from(p.x - c.x) / self.scale,
            self.view.center[1] + f64::from(p.y - c.y) / self.scale,
        ]
    }

    /// The world box in view.
    fn world_box(&self) -> ([f64; 2], [f64; 2]) {
        (
            self.to_world(self.rect.left_top()),
            self.to_world(self.rect.right_bottom()),
        )
    }
}

/// The tiles under the view: each from its texture, a parent's part, or a grid cell.
fn draw_tiles(painter: &egui::Painter, f: &Frame, tiles: &mut TileLayer) {
    painter.rect_filled(f.rect, 0.0, Color32::from_rgb(236, 236, 230));
    let z = (f.view.zoom.round().max(0.0) as u8).min(tiles.max_zoom());
    let n = 1u32 << z;
    let (a, b) = f.world_box();
    let span = |lo: f64, hi: f64| {
        let nf = f64::from(n);
        let x0 = (lo * nf).floor().clamp(0.0, nf - 1.0) as u32;
        let x1 = (hi * nf).floor().clamp(0.0, nf - 1.0) as u32;
        x0..=x1
    };
    let uv_full = Rect::from_min_max(Pos2::ZERO, Pos2::new(1.0, 1.0));
    let grid = Stroke::new(1.0, Color32::from_gray(205));
    for ty in span(a[1], b[1]) {
        for tx in span(a[0], b[0]) {
            let size = 1.0 / f64::from(n);
            let w0 = [f64::from(tx) * size, f64::from(ty) * size];
            let r = Rect::from_min_max(f.to_screen(w0), f.to_screen([w0[0] + size, w0[1] + size]));
            if let Some(t) = tiles.get((z, tx, ty)) {
                painter.image(t, r, uv_full, Color32::WHITE);
                continue;
            }
            // A parent tile's part, stretched, while this one comes.
            let mut drawn = false;
            for up in 1..=z.min(6) {
                let (px, py) = (tx >> up, ty >> up);
                if let Some(t) = tiles.cached((z - up, px, py)) {
                    let k = 1.0 / f32::from(1u8 << up.min(7));
                    let (ox, oy) = ((tx - (px << up)) as f32, (ty - (py << up)) as f32);
                    let uv = Rect::from_min_size(Pos2::new(ox * k, oy * k), Vec2::splat(k));
                    painter.image(t, r, uv, Color32::WHITE);
                    drawn = true;
                    break;
                }
            }
            if !drawn {
                painter.rect_stroke(r, 0.0, grid, egui::StrokeKind::Inside);
            }
        }
    }
}

/// The index of the kept fix nearest `pos` within `within` pixels, and its distance.
fn nearest_fix(t: &Prepared, f: &Frame, pos: Pos2, within: f32) -> Option<usize> {
    let lv = t.level_for(f.view.zoom);
    let w = f.to_world(pos);
    let reach = f64::from(within) / f.scale;
    let mut best: Option<(f64, usize)> = None;
    for r in &lv.runs {
        if w[0] < r.min[0] - reach
            || w[0] > r.max[0] + reach
            || w[1] < r.min[1] - reach
            || w[1] > r.max[1] + reach
        {
            continue;
        }
        for &i in &lv.idx[r.start..r.end] {
            let p = t.world[i as usize];
            let d = (p[0] - w[0]).hypot(p[1] - w[1]);
            if d <= reach && best.is_none_or(|b| d < b.0) {
                best = Some((d, i as usize));
            }
        }
    }
    best.map(|b| b.1)
}

/// A track's kept fixes in view as lines (one colour, or coloured by value in runs of one
/// colour step).
fn draw_track(painter: &egui::Painter, f: &Frame, t: &Prepared, colour: Color32, by: &ColourBy) {
    let lv = t.level_for(f.view.zoom);
    let (a, b) = f.world_box();
    let margin = 4.0 / f.scale;
    let by_value = *by != ColourBy::Topic && t.range.is_some();
    let (lo, hi) = t.range.unwrap_or((0.0, 1.0));
    let step = |i: usize| -> u8 {
        let v = t.values.get(i).copied().unwrap_or(f32::NAN);
        if v.is_finite() {
            (((v - lo) / (hi - lo)).clamp(0.0, 1.0) * 15.0).round() as u8
        } else {
            255
        }
    };
    let colour_of = |s: u8| {
        if s == 255 {
            Color32::from_gray(130)
        } else {
            ramp(f32::from(s) / 15.0)
        }
    };
    for r in &lv.runs {
        if r.max[0] < a[0] - margin
            || r.min[0] > b[0] + margin
            || r.max[1] < a[1] - margin
            || r.min[1] > b[1] + margin
        {
            continue;
        }
        let idx = &lv.idx[r.start..r.end];
        if !by_value {
            let pts: Vec<Pos2> = idx
                .iter()
                .map(|&i| f.to_screen(t.world[i as usize]))
                .collect();
            if pts.len() == 1 {
                painter.circle_filled(pts[0], 2.5, colour);
            } else {
                painter.add(Shape::line(pts, Stroke::new(2.5, colour)));
            }
            continue;
        }
        let mut k = 0;
        while k + 1 < idx.len() {
            let s = step(idx[k + 1] as usize);
            let mut pts = vec![f.to_screen(t.world[idx[k] as usize])];
            while k + 1 < idx.len() && step(idx[k + 1] as usize) == s {
                k += 1;
                pts.push(f.to_screen(t.world[idx[k] as usize]));
            }
            painter.add(Shape::line(pts, Stroke::new(3.0, colour_of(s))));
        }
    }
}

/// The accuracy ellipse of fix `i` (one standard deviation), if its covariance is known.
fn ellipse(f: &Frame, t: &Prepared, i: usize) -> Option<Vec<Pos2>> {
    let [e, n, en] = t.track.cov.get(i).copied()?.map(f64::from);
    if !(e.is_finite() && n.is_finite() && e >= 0.0 && n >= 0.0) {
        return None;
    }
    let en = if en.is_finite() { en } else { 0.0 };
    // Eigen decomposition of [[e, en], [en, n]].
    let tr = (e + n) / 2.0;
    let d = (((e - n) / 2.0).powi(2) + en * en).sqrt();
    let (l1, l2) = ((tr + d).max(0.0).sqrt(), (tr - d).max(0.0).sqrt());
    let angle = 0.5 * (2.0 * en).atan2(e - n);
    let units = 1.0 / mercator::metres_per_unit(t.track.lat[i]);
    let c = t.world[i];
    Some(
        (0..48)
            .map(|k| {
                let a = f64::from(k) / 48.0 * std::f64::consts::TAU;
                let (x, y) = (l1 * a.cos(), l2 * a.sin());
                let east = x * angle.cos() - y * angle.sin();
                let north = x * angle.sin() + y * angle.cos();
                f.to_screen([c[0] + east * units, c[1] - north * units])
            })
            .collect(),
    )
}

/// A round length (1, 2 or 5 × 10^k metres) near `target` metres.
fn nice_metres(target: f64) -> f64 {
    let mag = 10f64.powf(target.log10().floor());
    [5.0, 2.0, 1.0]
        .into_iter()
        .map(|m| m * mag)
        .find(|&v| v <= target)
        .unwrap_or(mag)
}

/// The map itself, taking the rest of the panel.
pub fn draw(
    ui: &mut egui::Ui,
    p: &mut MapPanel,
    tiles: &mut TileLayer,
    playhead: u64,
    cmds: &mut Vec<Cmd>,
) {
    let started = std::time::Instant::now();
    tiles.poll(ui.ctx(), UPLOADS_PER_FRAME);
    let size = ui.available_size().max(Vec2::new(120.0, 120.0));
    let (rect, resp) = ui.allocate_exact_size(size, Sense::click_and_drag());
    let any_ready = p
        .layers
        .iter()
        .any(|l| l.track.is_some() || l.shapes.is_some());
    let mut view = match p.view {
        Some(v) => v,
        None if any_ready => {
            let v = fitted(p, size);
            p.view = Some(v);
            v
        }
        None => fitted(p, size),
    };
    // Follow: the first track's position at the playhead in the middle.
    if p.settings.follow {
        if let Some(t) = p.layers.iter().find_map(|l| l.track.as_ref()) {
            if let Some(i) = t.track.at(playhead) {
                view.center = t.world[i];
            }
        }
    }
    // Pan and zoom.
    if resp.dragged() {
        let d = resp.drag_delta();
        view.center[0] -= f64::from(d.x) / (256.0 * view.zoom.exp2());
        view.center[1] -= f64::from(d.y) / (256.0 * view.zoom.exp2());
        p.settings.follow = false;
    }
    if let Some(hover) = resp.hover_pos() {
        let (scroll, pinch) = ui.input(|i| (i.smooth_scroll_delta.y, i.zoom_delta()));
        let dz = f64::from(scroll) / 200.0 + f64::from(pinch).log2();
        if dz != 0.0 {
            let before = Frame::new(rect, view).to_world(hover);
            view.zoom = (view.zoom + dz).clamp(0.0, MAX_VIEW_ZOOM);
            let after = Frame::new(rect, view).to_world(hover);
            if !p.settings.follow {
                view.center[0] += before[0] - after[0];
                view.center[1] += before[1] - after[1];
            }
        }
    }
    view.center = [
        view.center[0].clamp(0.0, 1.0),
        view.center[1].clamp(0.0, 1.0),
    ];
    if any_ready || p.view.is_some() {
        p.view = Some(view);
    }
    let f = Frame::new(rect, view);
    let painter = ui.painter_at(rect);
    draw_tiles(&painter, &f, tiles);
    // GeoJSON: each topic's latest message at the playhead.
    for l in &p.layers {
        let Some(sh) = &l.shapes else { continue };
        let i = sh
            .partition_point(|(t, _)| *t <= playhead)
            .saturating_sub(1);
        let Some((_, Ok(features))) = sh.get(i) else {
            continue;
        };
        for feat in features {
            let c = |a: [u8; 4]| Color32::from_rgba_unmultiplied(a[0], a[1], a[2], a[3]);
            let stroke = Stroke::new(feat.style.weight, c(feat.style.color));
            for s in &feat.shapes {
                match s {
                    GeoShape::Point(q) => {
                        let at = f.to_screen(mercator::world(q.0, q.1));
                        painter.circle(at, 5.0, c(feat.style.fill), stroke);
                        if let Some(n) = &feat.name {
                            painter.text(
                                at + Vec2::new(7.0, -7.0),
                                egui::Align2::LEFT_BOTTOM,
                                n,
                                egui::FontId::proportional(12.0),
                                Color32::BLACK,
                            );
                        }
                    }
                    GeoShape::Line(v) | GeoShape::Polygon(v) => {
                        let pts: Vec<Pos2> = v
                            .iter()
                            .map(|q| f.to_screen(mercator::world(q.0, q.1)))
                            .collect();
                        if matches!(s, GeoShape::Polygon(_)) && convex(&pts) {
                            painter.add(Shape::convex_polygon(pts, c(feat.style.fill), stroke));
                        } else if matches!(s, GeoShape::Polygon(_)) {
                            painter.add(Shape::closed_line(pts, stroke));
                        } else {
                            painter.add(Shape::line(pts, stroke));
                        }
                    }
                }
            }
        }
    }
    for l in &p.layers {
        if let Some(t) = &l.track {
            draw_track(&painter, &f, t, l.colour, &p.settings.colour_by);
        }
    }
    // The position at the playhead, with its accuracy.
    for l in &p.layers {
        let Some(t) = &l.track else { continue };
        let Some(i) = t.track.at(playhead) else {
            continue;
        };
        if let Some(e) = ellipse(&f, t, i) {
            painter.add(Shape::convex_polygon(
                e,
                Color32::from_rgba_unmultiplied(l.colour.r(), l.colour.g(), l.colour.b(), 50),
                Stroke::new(1.0, l.colour),
            ));
        }
        let at = f.to_screen(t.world[i]);
        painter.circle(at, 6.0, l.colour, Stroke::new(2.0, Color32::WHITE));
    }
    // Hover: the nearest fix; a click seeks there.
    if let Some(pos) = resp.hover_pos() {
        let hit = p.layers.iter().find_map(|l| {
            let t = l.track.as_ref()?;
            nearest_fix(t, &f, pos, 10.0).map(|i| (l, t, i))
        });
        if let Some((l, t, i)) = hit {
            painter.circle_stroke(
                f.to_screen(t.world[i]),
                7.0,
                Stroke::new(2.0, Color32::BLACK),
            );
            let tr = &t.track;
            let mut text = format!(
                "{}\n{}\n{:.7}°, {:.7}°",
                l.name,
                bagscope_ops::timefmt::date(tr.time_ns[i]),
                tr.lat[i],
                tr.lon[i]
            );
            if tr.alt[i].is_finite() {
                text.push_str(&format!("\naltitude {:.2} m", tr.alt[i]));
            }
            let acc = tr.accuracy(i);
            if acc.is_finite() {
                text.push_str(&format!("\naccuracy {acc:.2} m"));
            }
            if p.settings.colour_by != ColourBy::Topic {
                text.push_str(&format!(
                    "\n{}: {}",
                    p.settings.colour_by.label(),
                    t.values[i]
                ));
            }
            resp.clone().on_hover_text_at_pointer(text);
            if resp.clicked() {
                cmds.push(Cmd::SetPlayhead(tr.time_ns[i]));
            }
        }
    }
    overlay(&painter, &f, p, tiles);
    p.last_frame = Some(f);
    p.frame_ms = started.elapsed().as_secs_f32() * 1e3;
}

/// Whether a ring is convex (egui fills convex polygons only).
fn convex(pts: &[Pos2]) -> bool {
    let n = pts.len();
    if n < 3 {
        return false;
    }
    let mut sign = 0.0f32;
    for i in 0..n {
        let (a, b, c) = (pts[i], pts[(i + 1) % n], pts[(i + 2) % n]);
        let cross = (b - a).x * (c - b).y - (b - a).y * (c - b).x;
        if cross.abs() > 1e-3 {
            if sign != 0.0 && cross.signum() != sign {
                return false;
            }
            sign = cross.signum();
        }
    }
    true
}

/// The scale bar, the credit, the tiles' trouble (said once), the legend.
fn overlay(painter: &egui::Painter, f: &Frame, p: &MapPanel, tiles: &TileLayer) {
    let r = f.rect;
    let font = egui::FontId::proportional(12.0);
    let (lat, _) = mercator::lat_lon(f.view.center);
    let metres_per_px = mercator::metres_per_unit(lat) / f.scale;
    let len_m = nice_metres(metres_per_px * 120.0);
    let len_px = (len_m / metres_per_px) as f32;
    let y = r.bottom() - 14.0;
    let x0 = r.left() + 12.0;
    let bar = Stroke::new(2.0, Color32::BLACK);
    painter.rect_filled(
        Rect::from_min_max(
            Pos2::new(x0 - 6.0, y - 18.0),
            Pos2::new(x0 + len_px + 50.0, y + 8.0),
        ),
        3.0,
        Color32::from_white_alpha(200),
    );
    painter.line_segment([Pos2::new(x0, y), Pos2::new(x0 + len_px, y)], bar);
    painter.line_segment([Pos2::new(x0, y - 5.0), Pos2::new(x0, y)], bar);
    painter.line_segment(
        [Pos2::new(x0 + len_px, y - 5.0), Pos2::new(x0 + len_px, y)],
        bar,
    );
    let label = if len_m >= 1000.0 {
        format!("{} km", len_m / 1000.0)
    } else {
        format!("{len_m} m")
    };
    painter.text(
        Pos2::new(x0 + len_px + 6.0, y),
        egui::Align2::LEFT_CENTER,
        label,
        font.clone(),
        Color32::BLACK,
    );
    let credit = tiles.source.attribution();
    if !credit.is_empty() {
        let g = painter.layout_no_wrap(credit.into(), font.clone(), Color32::from_gray(40));
        let at = Pos2::new(r.right() - g.size().x - 6.0, r.bottom() - g.size().y - 4.0);
        painter.rect_filled(
            Rect::from_min_size(at - Vec2::splat(3.0), g.size() + Vec2::splat(6.0)),
            2.0,
            Color32::from_white_alpha(200),
        );
        painter.galley(at, g, Color32::from_gray(40));
    }
    let trouble = if tiles.source == TileSource::None {
        None
    } else if tiles.resting() {
        Some(format!(
            "no tiles could be had (a plain grid): {}",
            tiles.last_error.as_deref().unwrap_or("")
        ))
    } else if tiles.failed > 0 {
        Some(format!(
            "{} tiles could not be had; the last: {}",
            tiles.failed,
            tiles.last_error.as_deref().unwrap_or("")
        ))
    } else {
        None
    };
    if let Some(t) = trouble {
        let g = painter.layout(
            t,
            font.clone(),
            Color32::from_rgb(160, 40, 30),
            r.width() - 20.0,
        );
        let at = r.left_top() + Vec2::new(8.0, 8.0);
        painter.rect_filled(
            Rect::from_min_size(at - Vec2::splat(3.0), g.size() + Vec2::splat(6.0)),
            2.0,
            Color32::from_white_alpha(220),
        );
        painter.galley(at, g, Color32::from_rgb(160, 40, 30));
    }
    // The legend of a colouring by value.
    let range = p.layers.iter().find_map(|l| l.track.as_ref()?.range);
    if let (Some((lo, hi)), true) = (range, p.settings.colour_by != ColourBy::Topic) {
        let w = 160.0;
        let at = Pos2::new(r.right() - w - 14.0, r.top() + 10.0);
        painter.rect_filled(
            Rect::from_min_size(at - Vec2::splat(6.0), Vec2::new(w + 12.0, 44.0)),
            3.0,
            Color32::from_white_alpha(220),
        );
        for k in 0..32 {
            let x = at.x + w * k as f32 / 32.0;
            painter.rect_filled(
                Rect::from_min_size(Pos2::new(x, at.y + 16.0), Vec2::new(w / 32.0 + 0.5, 10.0)),
                0.0,
                ramp(k as f32 / 31.0),
            );
        }
        painter.text(
            at,
            egui::Align2::LEFT_TOP,
            p.settings.colour_by.label(),
            font.clone(),
            Color32::BLACK,
        );
        painter.text(
            Pos2::new(at.x, at.y + 28.0),
            egui::Align2::LEFT_TOP,
            format!("{lo:.3}"),
            font.clone(),
            Color32::BLACK,
        );
        painter.text(
            Pos2::new(at.x + w, at.y + 28.0),
            egui::Align2::RIGHT_TOP,
            format!("{hi:.3}"),
            font,
            Color32::BLACK,
        );
    }
}
