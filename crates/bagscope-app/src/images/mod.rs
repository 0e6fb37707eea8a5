//! Image panels: each a window bound to an image topic, showing the message at or before the
//! playhead. Reading, decoding, colouring and turning happen on the image worker; the UI
//! thread only uploads the finished pixels. Only the latest request of each panel is worked
//! on, so scrubbing never queues up frames.

use std::sync::Arc;
use std::time::Instant;

use egui::{Color32, Pos2, Rect, Sense, Vec2};

pub mod overlay;
pub(crate) mod video;

use super::inspector::InspectKey;
use super::job::{Requests, Service};
use super::{Cmd, Doc};
use bagscope_ops::media::image::{Colormap, Image, Orientation, Pixels};
use bagscope_reader::Bag;

/// How a panel wants its image drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Look {
    /// Colormap for single-channel images; `None`: turbo for depth and float, grey otherwise.
    pub cmap: Option<Colormap>,
    /// A fixed range, or `None` for the image's own.
    pub range: Option<(f32, f32)>,
    /// Turn and flips.
    pub orient: Orientation,
}

#[derive(Clone, PartialEq)]
struct Request {
    panel: u64,
    key: InspectKey,
    look: Look,
    overlay: Option<overlay::Asked>,
}

/// A frame ready to show.
pub struct Frame {
    /// What was asked.
    pub key: InspectKey,
    /// How.
    pub look: Look,
    /// The decoded image (for the value under the cursor).
    pub image: Arc<Image>,
    /// The pixels as drawn.
    pub color: egui::ColorImage,
    /// The range the values were drawn over.
    pub range: (f32, f32),
    /// The colormap used.
    pub cmap: Colormap,
    /// Time to read and decode the message (ms), or `None` when it came from the cache.
    pub decode_ms: Option<f64>,
    /// Time to colour and turn it (ms).
    pub render_ms: f64,
    /// What is laid over it, where the panel asked for anything.
    pub overlay: Option<overlay::Done>,
    /// Why the picture is not rectified as asked.
    pub rectify_error: Option<String>,
}

struct Reply {
    panel: u64,
    frame: Result<Frame, String>,
}

/// Default colormap of an image.
pub fn default_cmap(img: &Image) -> Colormap {
    match img.pixels {
        Pixels::U16(_) | Pixels::I16(_) | Pixels::F32(_) | Pixels::Points(_) => Colormap::Turbo,
        _ => Colormap::Grey,
    }
}

fn work(
    bag: &Bag,
    req: Request,
    cache: &mut Vec<(InspectKey, Arc<Image>)>,
    videos: &mut video::Videos,
    overlays: &mut overlay::Overlays,
) -> Reply {
    let t0 = Instant::now();
    let cached = cache
        .iter()
        .find(|(k, _)| *k == req.key)
        .map(|(_, i)| Arc::clone(i));
    let (image, decode_ms) = match cached {
        Some(i) => (Ok(i), None),
        None => {
            let r = match videos.image(bag, req.key) {
                Some(v) => v,
                None => super::inspector::decode_image(bag, req.key),
            }
            .map(Arc::new);
            if let Ok(i) = &r {
                cache.push((req.key, Arc::clone(i)));
                if cache.len() > 8 {
                    cache.remove(0);
                }
            }
            (r, Some(t0.elapsed().as_secs_f64() * 1e3))
        }
    };
    let mut rectify_error = None;
    let image = image.map(|image| match &req.overlay {
        Some(a) if a.settings.rectify => match overlays.rectify(bag, a, req.key, &image) {
            Ok(r) => Arc::new(r),
            Err(e) => {
                rectify_error = Some(e);
                image
            }
        },
        _ => image,
    });
    let frame = image.map(|image| {
        let t1 = Instant::now();
        let cmap = req.look.cmap.unwrap_or_else(|| default_cmap(&image));
        let range = req.look.range.unwrap_or_else(|| image.default_range());
        let (w, h, px) = image.render(cmap, range, req.look.orient);
        let color = egui::ColorImage::from_rgba_unmultiplied([w as usize, h as usize], &px);
        let overlay = req
            .overlay
            .as_ref()
            .filter(|a| a.settings.draws())
            .map(|a| overlays.work(a, req.key, (image.width, image.height), req.look.orient));
        Frame {
            key: req.key,
            look: req.look,
            image,
            color,
            range,
            cmap,
            decode_ms,
            render_ms: t1.elapsed().as_secs_f64() * 1e3,
            overlay,
            rectify_error,
        }
    });
    Reply {
        panel: req.panel,
        frame,
    }
}

/// The image worker of an open recording: the latest request of each panel, in the order
/// panels asked.
type ImageWorker = Service<Request, Reply>;

fn image_worker(
    bag: Bag,
    urdf: Option<std::path::PathBuf>,
    ctx: &egui::Context,
) -> Result<ImageWorker, String> {
    Service::spawn("images", 16, 4, ctx, move |reqs: Requests<Request>, h| {
        let mut cache = Vec::new();
        let mut videos = video::Videos::default();
        let mut overlays = overlay::Overlays::new(bag.clone(), urdf.clone());
        loop {
            // While nothing is asked, video decodes ahead of the frames shown.
            let first = match reqs.try_recv() {
                Some(r) => r,
                None if videos.prefetch(&bag) => continue,
                None => match reqs.recv() {
                    Some(r) => r,
                    None => return,
                },
            };
            let mut latest: Vec<Request> = vec![first];
            while let Some(r) = reqs.try_recv() {
                latest.retain(|x| x.panel != r.panel);
                latest.push(r);
            }
            for r in latest {
                if !h.send(work(&bag, r, &mut cache, &mut videos, &mut overlays)) {
                    return;
                }
            }
        }
    })
}

/// One image panel.
pub struct ImagePanel {
    /// Its id (stable while open).
    pub id: u64,
    /// The topic it shows.
    pub topic: usize,
    /// Still open.
    pub open: bool,
    /// How it is drawn, as the user set it.
    pub look: Look,
    /// Automatic range (else `look.range`).
    auto_range: bool,
    /// Range being edited.
    edit_range: (f32, f32),
    /// Zoom over the fitted size, and the pan in points.
    zoom: f32,
    pan: Vec2,
    /// What is laid over the picture, as the user set it.
    pub overlay: overlay::Settings,
    /// What was last asked for.
    asked: Option<(InspectKey, Look, Option<overlay::Asked>)>,
    /// When the overlay was last asked again while annotation stamps were being read.
    pending_since: Option<Instant>,
    /// The frame shown.
    pub frame: Option<Frame>,
    texture: Option<egui::TextureHandle>,
    /// The overlay's painted layer.
    overlay_texture: Option<egui::TextureHandle>,
    /// The last error.
    pub error: Option<String>,
    /// The value under the cursor last frame.
    pub hover: Option<String>,
    /// Where the image was drawn last frame (its fitted area).
    pub area: Rect,
}

/// Every image panel of a recording, and their worker.
#[derive(Default)]
pub struct ImagesState {
    /// Open panels.
    pub panels: Vec<ImagePanel>,
    worker: Option<ImageWorker>,
    next_id: u64,
}

impl ImagesState {
    /// Drops the worker (it reads a recording replaced by a newer state of it); each panel
    /// keeps its picture until the next worker sends one.
    pub fn forget_worker(&mut self) {
        self.worker = None;
        for p in &mut self.panels {
            p.asked = None;
        }
    }

    /// Opens a panel on topic `ti`.
    pub fn open(&mut self, ti: usize) {
        self.next_id += 1;
        self.panels.push(ImagePanel {
            id: self.next_id,
            topic: ti,
            open: true,
            look: Look {
                cmap: None,
                range: None,
                orient: Orientation::default(),
            },
            auto_range: true,
            edit_range: (0.0, 1.0),
            zoom: 1.0,
            pan: Vec2::ZERO,
            overlay: overlay::Settings::default(),
            asked: None,
            pending_since: None,
            frame: None,
            texture: None,
            overlay_texture: None,
            error: None,
            hover: None,
            area: Rect::NOTHING,
        });
    }
}

/// Asks the worker for what each panel should show now, and takes what it finished. Never
/// blocks.
pub fn update(d: &mut Doc, ctx: &egui::Context) {
    if d.images.panels.is_empty() {
        return;
    }
    if d.images.worker.is_none() {
        match image_worker(d.rec.bag.clone(), d.rec.urdf.clone(), ctx) {
            Ok(w) => d.images.worker = Some(w),
            Err(e) => {
                for p in &mut d.images.panels {
                    p.error = Some(e.clone());
                }
                return;
            }
        }
    }
    use bagscope_ops::spatial::camera::overlay::Transforms;
    let tf = match (&d.tf.history, &d.tf.error) {
        (Some(h), _) => Transforms::Read(Arc::clone(h)),
        (None, Some(e)) => Transforms::Failed(e.clone()),
        (None, None) if d.rec.has_tf => Transforms::Reading,
        (None, None) => Transforms::None,
    };
    let names: Vec<Arc<str>> = panel_topics(d).into_iter().map(Arc::from).collect();
    let wants: Vec<(usize, Option<InspectKey>)> = d
        .images
        .panels
        .iter()
        .enumerate()
        .map(|(i, p)| {
            (
                i,
                d.rec
                    .message_at(p.topic, d.nav.playhead)
                    .or_else(|| d.rec.first_message(p.topic)),
            )
        })
        .collect();
    let st = &mut d.images;
    let Some(w) = st.worker.as_mut() else { return };
    while let Some(r) = w.take() {
        let Some(p) = st.panels.iter_mut().find(|p| p.id == r.panel) else {
            continue;
        };
        // A reply for something no longer wanted is still shown until the next arrives.
        match r.frame {
            Ok(mut f) => {
                // The pixels move into the texture: no copy on the UI thread.
                let color = std::mem::take(&mut f.color);
                let painted = f.overlay.as_mut().and_then(|o| o.raster.take());
                match painted {
                    Some(img) => {
                        let opts = egui::TextureOptions::LINEAR;
                        match &mut p.overlay_texture {
                            Some(t) => t.set(img, opts),
                            None => {
                                p.overlay_texture = Some(ctx.load_texture(
                                    format!("image-overlay-{}", p.id),
                                    img,
                                    opts,
                                ))
                            }
                        }
                    }
                    None => p.overlay_texture = None,
                }
                let opts = egui::TextureOptions {
                    magnification: egui::TextureFilter::Nearest,
                    minification: egui::TextureFilter::Linear,
                    ..Default::default()
                };
                match &mut p.texture {
                    Some(t) => t.set(color, opts),
                    None => {
                        p.texture = Some(ctx.load_texture(format!("image-{}", p.id), color, opts))
                    }
                }
                if p.auto_range {
                    p.edit_range = f.range;
                }
                p.error = None;
                p.frame = Some(f);
            }
            Err(e) => p.error = Some(e),
        }
    }
    for (i, key) in wants {
        let p = &mut st.panels[i];
        let Some(key) = key else {
            p.asked = None;
            continue;
        };
        let look = p.look;
        let over = p.overlay.any().then(|| overlay::Asked {
            settings: p.overlay.clone(),
            topic: Arc::clone(&names[i]),
            tf: if p.overlay.needs_tf() {
                tf.clone()
            } else {
                Transforms::None
            },
        });
        let asked = Some((key, look, over.clone()));
        // Annotation stamps still being read: asked again until they are in.
        let pending = p
            .frame
            .as_ref()
            .and_then(|f| f.overlay.as_ref())
            .is_some_and(|o| o.pending);
        if pending && p.asked == asked {
            ctx.request_repaint_after(std::time::Duration::from_millis(200));
            if p.pending_since
                .is_none_or(|t| t.elapsed().as_millis() >= 200)
            {
                p.pending_since = Some(Instant::now());
                p.asked = None;
            }
        }
        if p.asked != asked {
            p.asked = asked;
            w.ask(
                Request {
                    panel: p.id,
                    key,
                    look,
                    overlay: over,
                },
                |a, b| a.panel == b.panel,
            );
        }
    }
    w.flush();
}

/// Draws the image panels side by side in `ui` (a strip above the timeline), each with its
/// topic, a close button and its tools.
pub fn show(ui: &mut egui::Ui, d: &mut Doc, cmds: &mut Vec<Cmd>) {
    let names = panel_topics(d);
    // (The recording's handle, so its topics are lent to the overlay menus without a copy.)
    let bag = d.rec.bag.clone();
    let topics = &bag.summary().topics;
    let indexed = d.rec.indexed.is_some();
    let playhead = d.nav.playhead;
    let start = d.rec.range().0;
    let n = d.images.panels.len();
    if n == 0 {
        return;
    }
    let panels = &mut d.images.panels;
    ui.columns(n, |cols| {
        for ((col, p), name) in cols.iter_mut().zip(panels.iter_mut()).zip(&names) {
            egui::Frame::group(col.style())
                .inner_margin(4.0)
                .show(col, |ui| {
                    ui.set_min_size(ui.available_size());
                    ui.horizontal(|ui| {
                        if ui
                            .small_button("x")
                            .on_hover_text("Close this image panel")
                            .clicked()
                        {
                            p.open = false;
                        }
                        ui.add(egui::Label::new(egui::RichText::new(name).strong()).truncate());
                    });
                    panel_ui(ui, p, (indexed, playhead, start), (topics, name), cmds);
                });
        }
    });
    panels.retain(|p| p.open);
}

fn panel_ui(
    ui: &mut egui::Ui,
    p: &mut ImagePanel,
    (indexed, playhead, start): (bool, u64, u64),
    (topics, name): (&[bagscope_reader::storage::Topic], &str),
    cmds: &mut Vec<Cmd>,
) {
    let scalar = p.frame.as_ref().is_some_and(|f| f.image.is_scalar());
    ui.horizontal_wrapped(|ui| {
        if ui
            .button("Turn")
            .on_hover_text("Turn 90° clockwise")
            .clicked()
        {
            p.look.orient.quarter_turns = (p.look.orient.quarter_turns + 1) % 4;
        }
        ui.toggle_value(&mut p.look.orient.flip_h, "Flip H")
            .on_hover_text("Mirror left-right");
        ui.toggle_value(&mut p.look.orient.flip_v, "Flip V")
            .on_hover_text("Mirror top-bottom");
        let label = if p.overlay.any() {
            "Overlay (on)"
        } else {
            "Overlay"
        };
        ui.menu_button(label, |ui| overlay::menu(ui, &mut p.overlay, topics, name))
            .response
            .on_hover_text("Annotations, 3D layers through the calibration, TF axes, rectify");
        if ui
            .button("Fit")
            .on_hover_text("Zoom to fit (or double-click)")
            .clicked()
        {
            p.zoom = 1.0;
            p.pan = Vec2::ZERO;
        }
        if scalar {
            let shown = p.frame.as_ref().map_or(Colormap::Grey, |f| f.cmap);
            let mut c = p.look.cmap.unwrap_or(shown);
            egui::ComboBox::from_id_salt(("cmap", p.id))
                .selected_text(match c {
                    Colormap::Grey => "grey",
                    Colormap::Turbo => "turbo",
                })
                .width(60.0)
                .show_ui(ui, |ui| {
                    ui.selectable_value(&mut c, Colormap::Grey, "grey");
                    ui.selectable_value(&mut c, Colormap::Turbo, "turbo");
                });
            if c != shown || p.look.cmap.is_some() {
                p.look.cmap = Some(c);
            }
            if ui
                .checkbox(&mut p.auto_range, "auto")
                .on_hover_text("Range from the image's valid values (0 and NaN are no reading)")
                .changed()
            {
                p.look.range = (!p.auto_range).then_some(p.edit_range);
            }
            let speed = ((p.edit_range.1 - p.edit_range.0).abs() / 200.0).max(1e-3);
            let a = ui.add_enabled(
                !p.auto_range,
                egui::DragValue::new(&mut p.edit_range.0)
                    .speed(speed)
                    .prefix("min "),
            );
            let b = ui.add_enabled(
                !p.auto_range,
                egui::DragValue::new(&mut p.edit_range.1)
                    .speed(speed)
                    .prefix("max "),
            );
            if (a.changed() || b.changed()) && !p.auto_range {
                p.look.range = Some(p.edit_range);
            }
        }
    });
    // Two status lines: the frame, and the value under the cursor.
    let status_h = 2.0 * (ui.text_style_height(&egui::TextStyle::Body) + 6.0);
    let avail = ui.available_size() - Vec2::new(0.0, status_h);
    let (rect, resp) =
        ui.allocate_exact_size(avail.max(Vec2::splat(40.0)), Sense::click_and_drag());
    let painter = ui.painter_at(rect);
    painter.rect_filled(rect, 0.0, Color32::from_gray(24));
    p.hover = None;
    p.area = rect;
    match (&p.frame, &p.texture) {
        (Some(f), Some(tex)) => {
            let size = tex.size_vec2();
            let fit = (rect.width() / size.x).min(rect.height() / size.y);
            // Wheel zooms about the pointer; drag pans; double-click fits.
            if resp.hovered() {
                let (scroll, zoom_delta) = ui.input(|i| (i.smooth_scroll_delta.y, i.zoom_delta()));
                let factor = (scroll / 200.0).exp() * zoom_delta;
                if factor != 1.0 {
                    let new_zoom = (p.zoom * factor).clamp(0.1, 64.0);
                    if let Some(ptr) = resp.hover_pos() {
                        let c = rect.center() + p.pan;
                        p.pan += (ptr - c) * (1.0 - new_zoom / p.zoom);
                    }
                    p.zoom = new_zoom;
                }
            }
            if resp.dragged() {
                p.pan += resp.drag_delta();
            }
            if resp.double_clicked() {
                p.zoom = 1.0;
                p.pan = Vec2::ZERO;
            }
            let scale = fit * p.zoom;
            let img_rect = Rect::from_center_size(rect.center() + p.pan, size * scale);
            let uv = Rect::from_min_max(Pos2::ZERO, Pos2::new(1.0, 1.0));
            painter.image(tex.id(), img_rect, uv, Color32::WHITE);
            let size_src = (f.image.width, f.image.height);
            if let Some(o) = &f.overlay {
                if let Some(t) = &p.overlay_texture {
                    painter.image(t.id(), img_rect, uv, Color32::WHITE);
                }
                overlay::paint(
                    &painter,
                    &o.shapes,
                    img_rect,
                    scale,
                    size_src,
                    f.look.orient,
                );
            }
            if let Some(ptr) = resp.hover_pos().filter(|q| img_rect.contains(*q)) {
                let x = ((ptr.x - img_rect.left()) / scale) as u32;
                let y = ((ptr.y - img_rect.top()) / scale) as u32;
                let (w, h) = (f.image.width, f.image.height);
                let (dw, dh) = f.look.orient.size(w, h);
                if x < dw && y < dh {
                    let (sx, sy) = f.look.orient.to_source(x, y, w, h);
                    if let Some(v) = f.image.value_text(sx, sy) {
                        // A map's text names its cell itself.
                        p.hover = Some(if f.image.map.is_some() {
                            v
                        } else {
                            format!("x {sx} y {sy}: {v}")
                        });
                    }
                    let named = f.overlay.as_ref().and_then(|o| {
                        overlay::under(&o.shapes, ptr, img_rect, scale, size_src, f.look.orient)
                    });
                    if let Some(n) = named {
                        p.hover = Some(format!("{} · {n}", p.hover.take().unwrap_or_default()));
                    }
                }
            }
        }
        _ => {
            let msg = if !indexed {
                "waiting for the message tables…"
            } else if p.asked.is_none() {
                "no message at or before the playhead"
            } else {
                "decoding…"
            };
            painter.text(
                rect.center(),
                egui::Align2::CENTER_CENTER,
                msg,
                egui::FontId::proportional(13.0),
                Color32::GRAY,
            );
        }
    }
    if let Some(e) = &p.error {
        painter.text(
            rect.left_top() + Vec2::new(6.0, 6.0),
            egui::Align2::LEFT_TOP,
            e,
            egui::FontId::proportional(12.0),
            Color32::from_rgb(255, 110, 90),
        );
    }
    ui.horizontal(|ui| {
        if let Some(f) = &p.frame {
            let age = playhead.saturating_sub(f.key.entry.time_ns) as f64 / 1e9;
            let ahead = f.key.entry.time_ns > playhead;
            let t = f.key.entry.time_ns.saturating_sub(start) as f64 / 1e9;
            if ui
                .small_button(format!("{t:.3} s"))
                .on_hover_text("Move the playhead to this frame")
                .clicked()
            {
                cmds.push(Cmd::SetPlayhead(f.key.entry.time_ns));
            }
            // Timings on hover: the line itself stays the same from one run to the next.
            let timing = match f.decode_ms {
                Some(ms) => format!("decoded in {ms:.1} ms, drawn in {:.1} ms", f.render_ms),
                None => format!("from the cache, drawn in {:.1} ms", f.render_ms),
            };
            let range = if f.image.is_scalar() {
                format!(" · {:.4}…{:.4}", f.range.0, f.range.1)
            } else {
                String::new()
            };
            let over = match (&f.overlay, &f.rectify_error) {
                (_, Some(e)) => format!(" · not rectified: {e}"),
                (Some(o), None) if !o.notes.is_empty() => format!(" · {}", o.notes.join("; ")),
                (Some(o), None) => format!(
                    " · {} shapes, {} points{} over it in {:.1} ms",
                    o.shapes.len(),
                    o.points,
                    if o.robot_pixels > 0 {
                        format!(", the robot on {} px", o.robot_pixels)
                    } else {
                        String::new()
                    },
                    o.ms
                ),
                (None, None) => String::new(),
            };
            ui.add(
                egui::Label::new(
                    egui::RichText::new(format!(
                        "{}×{} {}{range}{}{over}",
                        f.image.width,
                        f.image.height,
                        f.image.encoding,
                        if ahead {
                            " · first frame (after the playhead)".to_string()
                        } else if age > 1.0 {
                            format!(" · {age:.1} s old")
                        } else {
                            String::new()
                        }
                    ))
                    .weak(),
                )
                .truncate(),
            )
            .on_hover_text(timing);
        }
    });
    let hover = p
        .hover
        .as_deref()
        .unwrap_or("hover the image for a pixel's value; wheel zooms, drag pans");
    ui.add(egui::Label::new(egui::RichText::new(hover).monospace()).truncate());
}

/// Each panel's topic name, in panel order.
fn panel_topics(d: &Doc) -> Vec<String> {
    let s = d.rec.bag.summary();
    d.images
        .panels
        .iter()
        .map(|p| {
            s.topics
                .get(p.topic)
                .map_or(String::new(), |t| t.name.clone())
        })
        .collect()
}

/// Topics whose type is an image.
pub fn image_topics(d: &Doc) -> Vec<usize> {
    d.rec
        .bag
        .summary()
        .topics
        .iter()
        .enumerate()
        .filter(|(_, t)| bagscope_ops::media::image::is_image_type(&t.datatype))
        .map(|(i, _)| i)
        .collect()
}
