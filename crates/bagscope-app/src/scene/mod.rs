//! 3D panels: windows that show the recording's clouds, scans, markers, poses, paths, maps and
//! frames at the playhead in a fixed frame the user picks. Each panel's scene is built on the
//! scene worker ([`bagscope_ops::spatial::scene::Builder`]), the newest playhead winning; the UI thread
//! only uploads the finished arrays and draws them through eframe's GL context
//! ([`render`]), and projects the few labels and pickable things for text and hover.

pub mod camera;
pub mod labels;
pub mod render;

use std::sync::{Arc, Mutex};

use egui::{Color32, Pos2, Rect, Sense};

use self::camera::Camera;
use super::job::{Requests, Service};
use super::{Cmd, Doc};
use bagscope_ops::spatial::scene::{self, Builder, Frames, Kind, Layer, Request, Scene, ScenePool};
use bagscope_ops::spatial::tf::TfHistory;

mod layers;

use layers::layers;

/// A panel's settings, kept with the layout.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Settings {
    /// The frame everything is drawn in (empty: chosen from the tree).
    pub fixed: String,
    /// Layers, one per topic.
    pub layers: Vec<Layer>,
    /// The TF tree's part.
    pub frames: Frames,
    /// Ground grid cells a side (0: none).
    pub grid: u32,
    /// The camera.
    pub camera: Camera,
    /// A frame the camera follows (empty: none).
    pub follow: String,
    /// The axes' length follows the view (a power of two near a twentieth of the camera's
    /// distance) rather than `frames.size`.
    pub axes_auto: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            fixed: String::new(),
            layers: Vec::new(),
            frames: Frames::default(),
            grid: 20,
            camera: Camera::default(),
            follow: String::new(),
            axes_auto: true,
        }
    }
}

struct Ask {
    panel: u64,
    req: Request,
    tf: Option<Arc<TfHistory>>,
}

struct Reply {
    panel: u64,
    scene: Arc<Scene>,
}

type SceneWorker = Service<Ask, Reply>;

/// The scene worker of `bag`: its builders take the robot model from `urdf` where one is
/// given, and their scenes' buffers from `pool`.
fn worker(
    bag: bagscope_reader::Bag,
    urdf: Option<std::path::PathBuf>,
    pool: Option<ScenePool>,
    ctx: &egui::Context,
) -> Result<SceneWorker, String> {
    Service::spawn("scene", 16, 4, ctx, move |reqs: Requests<Ask>, h| {
        let Ok(tables) = bag.tables() else { return };
        let mut builders: Vec<(u64, Builder)> = Vec::new();
        let mut next = None;
        loop {
            let Some(first) = next.take().or_else(|| reqs.recv()) else {
                return;
            };
            let mut latest = vec![first];
            while let Some(r) = reqs.try_recv() {
                latest.retain(|x| x.panel != r.panel);
                latest.push(r);
            }
            for a in latest {
                let b = match builders.iter().position(|(p, _)| *p == a.panel) {
                    Some(i) => &mut builders[i].1,
                    None => {
                        builders.push((
                            a.panel,
                            Builder::new(bag.clone(), Arc::clone(&tables), None)
                                .with_urdf(urdf.clone())
                                .with_pool(pool.clone()),
                        ));
                        let Some(last) = builders.last_mut() else {
                            return;
                        };
                        &mut last.1
                    }
                };
                b.set_tf(a.tf);
                let scene = Arc::new(b.build(&a.req, h.cancel_flag()));
                if !h.send(Reply {
                    panel: a.panel,
                    scene,
                }) {
                    return;
                }
            }
            // Nothing asked: marker layers replay ahead (snapshots for later seeks), a step at
            // a time, until something is.
            while !h.cancelled() && builders.iter_mut().any(|(_, b)| b.warm(h.cancel_flag())) {
                if let Some(r) = reqs.try_recv() {
                    next = Some(r);
                    break;
                }
            }
        }
    })
}

/// The axes' length for a camera `dist` metres away: a power of two near a twentieth of it
/// (within 2 cm and 64 m), so zooming builds the scene again only when it crosses one.
pub fn auto_axes(dist: f32) -> f32 {
    let want = (dist / 20.0).clamp(0.02, 64.0);
    2f32.powi(want.log2().round() as i32)
}

/// The GL side shared by every panel: the programs, made on the first paint, and each panel's
/// uploaded scene. Touched only by paint callbacks, which run on the UI thread.
#[derive(Default)]
struct GlState {
    renderer: Option<Result<render::Renderer, String>>,
    uploaded: Vec<(u64, Arc<Scene>, render::Gpu)>,
    /// The clouds on the GPU, shared by the panels: a new scene uploads only its new clouds.
    clouds: render::CloudCache,
    /// The panels open this frame: a closed one's buffers are let go at the next draw.
    open: Vec<u64>,
}

struct Shared(Mutex<GlState>);

/// One 3D panel.
pub struct ScenePanel {
    /// Its id (stable while open).
    pub id: u64,
    /// Still open.
    pub open: bool,
    /// What the user set.
    pub settings: Settings,
    asked: Option<Request>,
    /// The scene shown.
    pub scene: Option<Arc<Scene>>,
    /// What is under the pointer.
    pub hover: Option<String>,
    /// The worker's message, if it failed.
    pub error: Option<String>,
    /// Where the view was drawn last frame.
    pub rect: Rect,
    /// The labels drawn last frame (where), and how many were left out as overlapping.
    pub labels_drawn: Vec<Rect>,
    pub labels_hidden: usize,
}

/// Every 3D panel of a recording, and their worker.
#[derive(Default)]
pub struct SceneState {
    /// Open panels.
    pub panels: Vec<ScenePanel>,
    worker: Option<SceneWorker>,
    next_id: u64,
    gl: Option<Arc<Shared>>,
    /// The app's scene buffers ([`crate::AppContext::scene_pool`]).
    pub pool: Option<ScenePool>,
}

impl SceneState {
    /// No panel yet; scenes' buffers from `pool`.
    pub fn with_pool(pool: Option<ScenePool>) -> SceneState {
        SceneState {
            pool,
            ..SceneState::default()
        }
    }

    /// Drops the worker (the recording was replaced by a newer state of it).
    pub fn forget_worker(&mut self) {
        self.worker = None;
        for p in &mut self.panels {
            p.asked = None;
        }
    }

    /// Whether the scene worker runs (while a panel is open).
    pub fn working(&self) -> bool {
        self.worker.is_some()
    }

    /// Opens a panel with `settings`.
    pub fn open_with(&mut self, settings: Settings) {
        self.next_id += 1;
        self.panels.push(ScenePanel {
            id: self.next_id,
            open: true,
            settings,
            asked: None,
            scene: None,
            hover: None,
            error: None,
            rect: Rect::NOTHING,
            labels_drawn: Vec::new(),
            labels_hidden: 0,
        });
    }
}

/// The layers a first panel shows: every topic the scene draws.
pub fn default_settings(d: &Doc) -> Settings {
    let s = d.rec.bag.summary();
    let mut set = Settings::default();
    for t in &s.topics {
        if let Some(k) = Kind::of(&t.datatype) {
            let n = set.layers.len();
            set.layers.push(Layer::new(&t.name, k, n));
        }
    }
    set
}

/// Opens a 3D panel on the recording, with every drawable topic, or with `topic` only.
pub fn open(d: &mut Doc, topic: Option<usize>) {
    let mut set = default_settings(d);
    if let Some(ti) = topic {
        if let Some(t) = d.rec.bag.summary().topics.get(ti) {
            // An existing panel gains the topic instead of a second panel opening.
            let name = t.name.clone();
            if let Some(p) = d.scene.panels.first_mut() {
                if let Some(l) = p.settings.layers.iter_mut().find(|l| l.topic == name) {
                    l.visible = true;
                }
                return;
            }
            for l in &mut set.layers {
                l.visible = l.topic == name;
            }
        }
    }
    d.scene.open_with(set);
}

/// The fixed frame a panel starts with: `map`, `odom`, else a root of the tree.
fn pick_fixed(names: &[String], tf: Option<&TfHistory>) -> String {
    for f in ["map", "odom", "world"] {
        if names.iter().any(|n| n == f) {
            return f.to_string();
        }
    }
    if let Some(tf) = tf {
        if let Some(root) = tf.tree_at(u64::MAX).first() {
            return tf.frames[root.frame].clone();
        }
    }
    names.first().cloned().unwrap_or_default()
}

/// Asks for each panel's scene at the playhead and takes what the worker finished. Never
/// blocks.
pub fn update(d: &mut Doc, ctx: &egui::Context) {
    d.scene.panels.retain(|p| p.open);
    if d.scene.panels.is_empty() {
        // The last panel closed: the worker ends, and its decoded clouds with it.
        d.scene.worker = None;
        return;
    }
    // The transforms, once the app has read them (or none in the recording).
    let tf_ready = !d.rec.has_tf || d.tf.history.is_some() || d.tf.error.is_some();
    if d.rec.indexed.is_none() || !tf_ready {
        return;
    }
    if d.scene.worker.is_none() {
        match worker(
            d.rec.bag.clone(),
            d.rec.urdf.clone(),
            d.scene.pool.clone(),
            ctx,
        ) {
            Ok(w) => d.scene.worker = Some(w),
            Err(e) => {
                for p in &mut d.scene.panels {
                    p.error = Some(e.clone());
                }
                return;
            }
        }
    }
    let tf = d.tf.history.clone();
    let t = d.nav.playhead;
    let st = &mut d.scene;
    let Some(w) = st.worker.as_mut() else { return };
    while let Some(r) = w.take() {
        if let Some(p) = st.panels.iter_mut().find(|p| p.id == r.panel) {
            if p.settings.fixed.is_empty() {
                p.settings.fixed = if r.scene.fixed.is_empty() {
                    pick_fixed(&r.scene.frame_names, tf.as_deref())
                } else {
                    r.scene.fixed.clone()
                };
            }
            // The scene replaced goes back to the builder's pool when its last holder lets
            // go (see `ops::scene::Scene`'s drop): nothing freed here.
            // The first scene of a panel with the camera untouched: framed.
            if p.scene.is_none() && p.settings.camera == Camera::default() {
                if let Some(b) = r.scene.content_bounds() {
                    p.settings.camera.fit(b);
                }
            }
            p.scene = Some(r.scene);
        }
    }
    for p in &mut st.panels {
        let s = &p.settings;
        let fixed = if s.fixed.is_empty() {
            pick_fixed(&[], tf.as_deref())
        } else {
            s.fixed.clone()
        };
        let mut frames = s.frames.clone();
        if s.axes_auto {
            frames.size = auto_axes(s.camera.dist);
        }
        if !s.follow.is_empty() && !frames.only.is_empty() && !frames.only.contains(&s.follow) {
            frames.only.push(s.follow.clone());
        }
        let req = Request {
            t,
            fixed,
            layers: s.layers.clone(),
            frames,
            grid: s.grid,
        };
        if p.asked.as_ref() != Some(&req) {
            p.asked = Some(req.clone());
            w.ask(
                Ask {
                    panel: p.id,
                    req,
                    tf: tf.clone(),
                },
                |a, b| a.panel == b.panel,
            );
        }
    }
    w.flush();
}

fn rgba(c: [u8; 4]) -> Color32 {
    Color32::from_rgba_unmultiplied(c[0], c[1], c[2], c[3])
}

/// Shows every 3D panel as a window.
pub fn show(ctx: &egui::Context, d: &mut Doc, cmds: &mut Vec<Cmd>) {
    let gl = Arc::clone(
        d.scene
            .gl
            .get_or_insert_with(|| Arc::new(Shared(Mutex::new(GlState::default())))),
    );
    let topics: Vec<(String, String)> = d
        .rec
        .bag
        .summary()
        .topics
        .iter()
        .filter(|t| Kind::of(&t.datatype).is_some())
        .map(|t| (t.name.clone(), t.datatype.clone()))
        .collect();
    let tf_frames: Vec<String> =
        d.tf.history
            .as_ref()
            .map(|h| {
                let mut v = h.frames.clone();
                v.sort();
                v
            })
            .unwrap_or_default();
    let waiting = if d.rec.indexed.is_none() {
        Some("waiting for the message tables")
    } else if d.rec.has_tf && d.tf.history.is_none() && d.tf.error.is_none() {
        Some("reading the transforms")
    } else {
        None
    };
    // Only the UI thread takes this lock (paint callbacks run on it too): never a wait.
    if let Ok(mut st) = gl.0.lock() {
        st.open = d.scene.panels.iter().map(|p| p.id).collect();
    }
    for (i, p) in d.scene.panels.iter_mut().enumerate() {
        let title = format!(
            "3D {}",
            if i == 0 {
                String::new()
            } else {
                format!("{}", i + 1)
            }
        );
        let mut open = p.open;
        egui::Window::new(title.trim())
            .id(egui::Id::unique(("scene-panel", p.id)))
            .open(&mut open)
            .default_size([980.0, 640.0])
            .default_pos([340.0 + 30.0 * i as f32, 60.0 + 30.0 * i as f32])
            .resizable(true)
            .show(ctx, |ui| {
                panel(ui, p, &topics, &tf_frames, waiting, &gl, cmds);
            });
        p.open = open;
    }
}

fn panel(
    ui: &mut egui::Ui,
    p: &mut ScenePanel,
    topics: &[(String, String)],
    tf_frames: &[String],
    waiting: Option<&str>,
    gl: &Arc<Shared>,
    cmds: &mut Vec<Cmd>,
) {
    let frames: Vec<String> = match &p.scene {
        Some(s) if !s.frame_names.is_empty() => s.frame_names.clone(),
        _ => tf_frames.to_vec(),
    };
    ui.horizontal_wrapped(|ui| {
        let label = ui.label("Fixed frame");
        egui::ComboBox::from_id_salt(("scene-fixed", p.id))
            .selected_text(if p.settings.fixed.is_empty() {
                "(none)"
            } else {
                p.settings.fixed.as_str()
            })
            .show_ui(ui, |ui| {
                for f in &frames {
                    ui.selectable_value(&mut p.settings.fixed, f.clone(), f);
                }
            })
            .response
            .labelled_by(label.id);
        let label = ui.label("Follow");
        egui::ComboBox::from_id_salt(("scene-follow", p.id))
            .selected_text(if p.settings.follow.is_empty() {
                "(nothing)"
            } else {
                p.settings.follow.as_str()
            })
            .show_ui(ui, |ui| {
                ui.selectable_value(&mut p.settings.follow, String::new(), "(nothing)");
                for f in &frames {
                    ui.selectable_value(&mut p.settings.follow, f.clone(), f);
                }
            })
            .response
            .labelled_by(label.id);
        ui.toggle_value(&mut p.settings.camera.top, "Top-down")
            .on_hover_text("Look straight down, without perspective");
        if ui
            .button("Fit")
            .on_hover_text("Frame everything drawn")
            .clicked()
        {
            if let Some(b) = p.scene.as_ref().and_then(|s| s.bounds()) {
                p.settings.camera.fit(b);
            }
        }
    });
    egui::Panel::left(("scene-layers", p.id))
        .resizable(true)
        .default_size(230.0)
        .show(ui, |ui| {
            egui::ScrollArea::vertical().show(ui, |ui| {
                layers(ui, p, topics, &frames);
            });
        });
    egui::CentralPanel::default().show(ui, |ui| {
        view(ui, p, waiting, gl, cmds);
    });
}

fn view(
    ui: &mut egui::Ui,
    p: &mut ScenePanel,
    waiting: Option<&str>,
    gl: &Arc<Shared>,
    cmds: &mut Vec<Cmd>,
) {
    let (rect, resp) = ui.allocate_exact_size(ui.available_size(), Sense::click_and_drag());
    p.rect = rect;
    let painter = ui.painter_at(rect);
    painter.rect_filled(rect, 0.0, Color32::from_rgb(24, 26, 30));
    // Follow: the camera's target on the followed frame.
    if let Some(s) = &p.scene {
        if !p.settings.follow.is_empty() {
            let want = format!("frame {} in", p.settings.follow);
            if let Some(pk) = s.picks.iter().find(|k| k.what.starts_with(&want)) {
                p.settings.camera.target = pk.pos;
            }
        }
    }
    let cam = &mut p.settings.camera;
    cam.input(ui, &resp, rect);
    let Some(scene) = p.scene.clone() else {
        painter.text(
            rect.center(),
            egui::Align2::CENTER_CENTER,
            waiting.unwrap_or("building the scene…"),
            egui::FontId::proportional(14.0),
            Color32::GRAY,
        );
        return;
    };
    let ppp = ui.ctx().pixels_per_point();
    let cam = *cam;
    let view = cam.view(rect.width() * ppp, rect.height() * ppp);
    let panel = p.id;
    let gl2 = Arc::clone(gl);
    let sc = Arc::clone(&scene);
    let cb = eframe::egui_glow::CallbackFn::new(move |info, painter| {
        let Ok(mut st) = gl2.0.lock() else { return };
        let st = &mut *st;
        let open = &st.open;
        st.uploaded.retain(|(id, _, _)| open.contains(id));
        let r = st
            .renderer
            .get_or_insert_with(|| render::Renderer::new(Arc::clone(painter.gl())));
        let Ok(r) = r else { return };
        let fresh = match st.uploaded.iter().position(|(id, _, _)| *id == panel) {
            Some(i) if Arc::ptr_eq(&st.uploaded[i].1, &sc) => false,
            Some(i) => {
                st.uploaded[i] = (panel, Arc::clone(&sc), r.upload_with(&sc, &mut st.clouds));
                true
            }
            None => {
                let gpu = r.upload_with(&sc, &mut st.clouds);
                st.uploaded.push((panel, Arc::clone(&sc), gpu));
                true
            }
        };
        if fresh {
            // The clouds no panel's scene holds any more leave the GPU.
            let held: std::collections::HashSet<u64> = st
                .uploaded
                .iter()
                .flat_map(|(_, s, _)| {
                    let meshes = s.meshes.iter().map(|m| m.id);
                    s.clouds.iter().map(|c| c.id).chain(meshes)
                })
                .collect();
            st.clouds.keep_only(&held);
        }
        let Some((_, _, gpu)) = st.uploaded.iter().find(|(id, _, _)| *id == panel) else {
            return;
        };
        let vp = info.viewport_in_pixels();
        let viewport = three_d::Viewport {
            x: vp.left_px,
            y: vp.from_bottom_px,
            width: vp.width_px.max(1) as u32,
            height: vp.height_px.max(1) as u32,
        };
        let screen = (info.screen_size_px[0], info.screen_size_px[1]);
        r.draw(gpu, &view, viewport, screen);
    });
    painter.add(egui::PaintCallback {
        rect,
        callback: Arc::new(cb),
    });
    if let Some(Err(e)) = gl.0.lock().ok().as_ref().and_then(|g| g.renderer.as_ref()) {
        painter.text(
            rect.center(),
            egui::Align2::CENTER_CENTER,
            format!("3D drawing is not available: {e}"),
            egui::FontId::proportional(14.0),
            Color32::LIGHT_RED,
        );
    }
    // Labels, facing the viewer: those that would overlap decluttered.
    let pointer = resp.hover_pos();
    let follow = p.settings.follow.clone();
    let mut shown = Vec::new();
    for l in scene.labels.iter().take(2_000) {
        let Some(at) = cam
            .project(&view, l.pos, rect)
            .filter(|a| rect.contains(*a))
        else {
            continue;
        };
        let size = if l.height > 0.0 {
            (l.height * view.px_per_m / cam.depth(l.pos).max(1e-3) / ppp).clamp(8.0, 48.0)
        } else {
            12.0
        };
        let galley = painter.layout_no_wrap(
            l.text.clone(),
            egui::FontId::proportional(size),
            rgba(l.color),
        );
        let pos = at + egui::vec2(4.0, -4.0 - galley.size().y);
        let first = labels::near(pointer, at) || (!follow.is_empty() && l.text == follow);
        shown.push((
            labels::Candidate {
                rect: Rect::from_min_size(pos, galley.size()),
                depth: cam.depth(l.pos),
                first,
            },
            pos,
            galley,
        ));
    }
    let keep = labels::declutter(&shown.iter().map(|s| s.0).collect::<Vec<_>>());
    p.labels_drawn.clear();
    p.labels_hidden = 0;
    for ((c, pos, galley), k) in shown.into_iter().zip(keep) {
        if k {
            p.labels_drawn.push(c.rect);
            painter.galley(pos, galley, Color32::WHITE);
        } else {
            p.labels_hidden += 1;
        }
    }
    // Hover: the nearest pickable thing or point within a few pixels.
    p.hover = None;
    if let Some(pos) = resp.hover_pos() {
        if let Some((text, source)) = pick(&scene, &cam, &view, rect, pos) {
            painter.text(
                pos + egui::vec2(12.0, 12.0),
                egui::Align2::LEFT_TOP,
                &text,
                egui::FontId::monospace(12.0),
                Color32::WHITE,
            );
            if resp.clicked() {
                if let Some(s) = source {
                    cmds.push(Cmd::InspectMessage(s.conn, s.entry.time_ns));
                }
            }
            p.hover = Some(text);
        }
    }
    painter.text(
        rect.left_bottom() + egui::vec2(6.0, -6.0),
        egui::Align2::LEFT_BOTTOM,
        format!(
            "{} · {}",
            scene.fixed,
            if cam.top {
                "top-down"
            } else {
                "drag: orbit · right-drag: pan · wheel: zoom"
            }
        ),
        egui::FontId::proportional(11.0),
        Color32::GRAY,
    );
}

/// The thing under the pointer: a marker, pose or frame within 8 px, else the nearest point of
/// a cloud within 5 px (each set looked at through at most 200,000 of its points).
fn pick(
    scene: &Scene,
    cam: &Camera,
    view: &render::View,
    rect: Rect,
    at: Pos2,
) -> Option<(String, Option<scene::Source>)> {
    let mut best: Option<(f32, String, Option<scene::Source>)> = None;
    for k in &scene.picks {
        if let Some(s) = cam.project(view, k.pos, rect) {
            let d = s.distance(at);
            if d < 8.0 && best.as_ref().is_none_or(|b| d < b.0) {
                best = Some((
                    d,
                    format!(
                        "{}\n({:.3}, {:.3}, {:.3})",
                        k.what, k.pos[0], k.pos[1], k.pos[2]
                    ),
                    k.source,
                ));
            }
        }
    }
    if best.is_some() {
        return best.map(|b| (b.1, b.2));
    }
    // (distance, point, layer, message)
    let mut near: Option<(
        f32,
        [f32; 3],
        usize,
        Option<bagscope_ops::spatial::scene::Source>,
    )> = None;
    let mut consider =
        |q: [f32; 3], layer: usize, source: Option<bagscope_ops::spatial::scene::Source>| {
            if let Some(s) = cam.project(view, q, rect) {
                let d = s.distance(at);
                if d < 5.0 && near.is_none_or(|n| d < n.0) {
                    near = Some((d, q, layer, source));
                }
            }
        };
    for set in &scene.points {
        let step = set.pos.len().div_ceil(200_000).max(1);
        for q in set.pos.iter().step_by(step) {
            consider(*q, set.layer, set.source);
        }
    }
    let all: usize = scene.clouds.iter().map(|c| c.points.xyz.len()).sum();
    let step = all.div_ceil(200_000).max(1);
    for c in &scene.clouds {
        for q in c.points.xyz.iter().step_by(step) {
            consider(c.place(*q), c.layer, Some(c.source));
        }
    }
    near.map(|(_, q, layer, source)| {
        let topic = scene.status.get(layer).map_or("", |s| s.topic.as_str());
        (
            format!(
                "{topic} point\n({:.3}, {:.3}, {:.3}) in {}",
                q[0], q[1], q[2], scene.fixed
            ),
            source,
        )
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn axes_follow_the_view_in_powers_of_two() {
        use super::auto_axes;
        // A twentieth of the distance, to the nearest power of two.
        assert_eq!(auto_axes(10.0), 0.5);
        assert_eq!(auto_axes(20.0), 1.0);
        assert_eq!(auto_axes(160.0), 8.0);
        // Zooming a little keeps the size (no new scene); bounded both ways.
        assert_eq!(auto_axes(11.0), auto_axes(12.0));
        assert_eq!(auto_axes(0.01), 2f32.powi(-6));
        assert_eq!(auto_axes(1e6), 64.0);
    }
}
