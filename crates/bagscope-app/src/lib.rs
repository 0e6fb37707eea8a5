//! The desktop app: one module per panel; panels read the state and push [`Cmd`]s, which
//! [`App::apply`] carries out in one place after the frame's panels have run.

#![forbid(unsafe_code)]

pub mod actions;
pub mod bookmarks_io;
mod cmd;
mod compare;
mod diagnostics;
mod doc;
pub mod expect;
pub mod export;
pub mod find;
pub mod images;
pub mod inspector;
pub mod job;
pub mod layout;
pub mod layout_file;
mod layout_io;
pub mod live;
pub mod loader;
pub mod log;
pub mod map;
pub mod message_scripts;
pub mod palette;
pub mod persist;
pub mod plot;
pub mod publish;
pub mod scene;
mod screens;
pub mod scripts;
mod serve;
mod style;
pub mod tf;
pub mod timeline;
mod top_bar;
mod topics;

use std::path::PathBuf;
use std::sync::Arc;

use cmd::add_part;
pub use cmd::Cmd;
pub use doc::{Doc, Nav, Recording, RecordingsState};
use job::Job;
use loader::{LoadEvent, Loader};
use persist::Persisted;
use screens::{preview_screen, recordings_window};

/// Most files kept in the recent list.
const RECENT_MAX: usize = 10;

/// The application.
pub struct App {
    /// The open bag.
    pub doc: Option<Doc>,
    /// A bag being opened.
    loader: Option<Loader>,
    /// What is being opened (for the status line).
    pub opening: Option<String>,
    /// What is known of the recording being opened before its rows are read.
    pub preview: Option<Arc<bagscope_reader::Summary>>,
    /// The last error, shown until dismissed.
    pub error: Option<String>,
    /// A passing notice.
    pub notice: Option<String>,
    /// Recently opened files, newest first.
    pub recent: Vec<PathBuf>,
    /// Commands queued this frame.
    pub cmds: Vec<Cmd>,
    /// Bag info window open.
    pub show_info: bool,
    /// Help window (the shortcuts) open.
    pub show_help: bool,
    /// The command palette.
    pub palette: palette::Palette,
    /// The message search path set in the app (directories separated as in PATH), as edited.
    pub msg_path: String,
    /// The location typed in "Open URL…" (`s3://`, `gs://`, `az://`, `http(s)://`).
    pub url_input: String,
    /// Bookmarks per file (canonical path), of the files not open now.
    pub bookmarks: std::collections::BTreeMap<String, Vec<(u64, String)>>,
    /// Layouts per topic set ([`layout::key`]), of the recordings not open now.
    pub layouts: std::collections::BTreeMap<String, layout::Layout>,
    /// Series of a re-applied layout, plotted once the tables are built.
    pending_series: Vec<String>,
    /// A layout file read, to apply to the recording being opened (its path and text).
    pending_layout: Option<(PathBuf, String)>,
    /// The Scripts window to show on its message scripts once the recording is open again
    /// (their Apply): the one edited.
    scripts_after_load: Option<Option<usize>>,
    /// A rules file to check the recording being opened against, once it is.
    pending_expect: Option<PathBuf>,
    /// Layout dialogs, reads and writes under way.
    layout_io: Vec<Job<layout_io::LayoutIo>>,
    dialog: Option<Job<Option<Vec<PathBuf>>>>,
    /// The dialog shown adds to the timeline (instead of opening).
    adding: bool,
    /// The Live window and recording.
    pub live: live::LiveState,
    /// What the app was started with, for every recording it opens.
    pub context: AppContext,
    ctx: egui::Context,
}

/// What the app was started with (the command line's flags) and what it owns for every
/// recording it opens: the library reads no settings of its own, the app hands them over.
#[derive(Debug, Clone, Default)]
pub struct AppContext {
    /// `--msg-path`: directories searched for definitions, after the app's own setting.
    pub msg_path: Vec<PathBuf>,
    /// `--urdf`: the robot model in place of the recordings' description.
    pub urdf: Option<PathBuf>,
    /// The 3D panels' scene buffers, reused from scene to scene.
    pub scene_pool: Option<bagscope_ops::spatial::scene::ScenePool>,
    /// `--script`: message scripts whose virtual topics every recording opened alone has, and
    /// series scripts every recording's plots know.
    pub scripts: Scripts,
}

/// The scripts of the command line's `--script` files.
#[derive(Debug, Clone, Default)]
pub struct Scripts {
    /// Message scripts: virtual topics.
    pub messages: Vec<bagscope_ops::script::message::MessageScript>,
    /// Series scripts: a plotted series named after one is what it makes.
    pub series: Vec<bagscope_ops::script::SeriesScript>,
}

/// The options recordings are opened with: the app's message search path (the Definitions
/// menu, `text`) in front of the command line's `--msg-path` (and, in the library, the
/// environment's).
fn open_options(text: &str, context: &AppContext) -> bagscope_reader::OpenOptions {
    let mut dirs: Vec<PathBuf> = std::env::split_paths(text.trim())
        .filter(|p| !p.as_os_str().is_empty())
        .collect();
    dirs.extend(context.msg_path.iter().cloned());
    bagscope_reader::OpenOptions::default().with_msg_path(dirs)
}

/// A path as the app shows it: a remote location without its credentials.
pub(crate) fn shown_path(p: &std::path::Path) -> String {
    #[cfg(feature = "remote")]
    if bagscope_reader::storage::remote::is_url(p) {
        return bagscope_reader::storage::remote::shown(&p.to_string_lossy());
    }
    p.display().to_string()
}

impl App {
    /// A new app; `bag` is opened on the first frame when given.
    pub fn new(storage: Option<&dyn eframe::Storage>, bag: Option<PathBuf>) -> App {
        let Persisted {
            recent,
            msg_path,
            bookmarks,
            layouts,
        } = Persisted::load(storage);
        let mut app = App {
            context: AppContext {
                // Scenes' buffers recycled on a thread of the pool's (none if it cannot start).
                scene_pool: bagscope_ops::spatial::scene::ScenePool::new().ok(),
                ..AppContext::default()
            },
            msg_path,
            url_input: String::new(),
            bookmarks,
            layouts,
            pending_series: Vec::new(),
            pending_layout: None,
            scripts_after_load: None,
            pending_expect: None,
            layout_io: Vec::new(),
            doc: None,
            loader: None,
            opening: None,
            preview: None,
            error: None,
            notice: None,
            recent,
            cmds: Vec::new(),
            show_info: false,
            show_help: false,
            palette: palette::Palette::default(),
            dialog: None,
            adding: false,
            live: Default::default(),
            ctx: egui::Context::default(),
        };
        if let Some(b) = bag {
            app.cmds.push(Cmd::Open(b));
        }
        app
    }

    /// Every file's bookmarks, the open one's as they are now.
    pub fn all_bookmarks(&self) -> std::collections::BTreeMap<String, Vec<(u64, String)>> {
        let mut m = self.bookmarks.clone();
        if let Some(d) = &self.doc {
            let k = d.rec.canonical.display().to_string();
            if d.nav.bookmarks.is_empty() {
                m.remove(&k);
            } else {
                m.insert(k, d.nav.bookmarks.clone());
            }
        }
        m
    }

    /// Every layout, the open recording's as it is now.
    pub fn all_layouts(&self) -> std::collections::BTreeMap<String, layout::Layout> {
        let mut m = self.layouts.clone();
        if let Some(d) = &self.doc {
            m.insert(layout::key(d.rec.bag.summary()), layout::capture(d));
        }
        m
    }

    /// The options the app opens recordings with.
    pub fn open_options(&self) -> bagscope_reader::OpenOptions {
        open_options(&self.msg_path, &self.context)
    }

    /// The app with what the command line gave it (`--msg-path`, `--urdf`).
    pub fn with_flags(mut self, msg_path: Vec<PathBuf>, urdf: Option<PathBuf>) -> App {
        self.context.msg_path = msg_path;
        self.context.urdf = urdf;
        self
    }

    /// The command line's `--script` files, read.
    pub fn with_scripts(mut self, scripts: Scripts) -> App {
        self.context.scripts = scripts;
        self
    }

    /// Whether a bag is being opened or indexed.
    pub fn busy(&self) -> bool {
        self.loader.is_some()
    }

    fn start_loading(&mut self, parts: Vec<bagscope_reader::bag::merge::Part>, label: String) {
        self.start_loading_with(parts, false, label);
    }

    fn start_loading_with(
        &mut self,
        parts: Vec<bagscope_reader::bag::merge::Part>,
        align: bool,
        label: String,
    ) {
        // Dropping the loader cancels it.
        self.loader = None;
        self.error = None;
        self.preview = None;
        self.opening = Some(label);
        let opts = self.open_options();
        let scripts = self.context.scripts.messages.clone();
        self.loader = Some(loader::loader(parts, align, opts, scripts, &self.ctx));
    }

    /// Puts a file (its canonical path, from the loader) first in the recent list.
    fn remember(&mut self, p: PathBuf, demo: bool) {
        if demo {
            return;
        }
        // A remote location is kept as it may be shown (no user information or query).
        let p = PathBuf::from(shown_path(&p));
        self.recent.retain(|x| *x != p);
        self.recent.insert(0, p);
        self.recent.truncate(RECENT_MAX);
    }

    fn poll(&mut self) {
        self.poll_layout();
        if let Some(job) = &mut self.dialog {
            match job.take() {
                Some(Some(mut chosen)) => {
                    self.dialog = None;
                    let cmd = match (&self.doc, self.adding) {
                        (Some(d), true) => {
                            let mut parts = d.rec.parts.clone();
                            for p in chosen {
                                parts = add_part(&parts, p);
                            }
                            Cmd::OpenMany(parts)
                        }
                        _ if chosen.len() == 1 => Cmd::Open(chosen.remove(0)),
                        _ => Cmd::OpenMany(bagscope_reader::bag::merge::parts_of(&chosen)),
                    };
                    self.apply(cmd);
                }
                Some(None) => {
                    self.dialog = None;
                    self.notice = Some(
                        "No file chosen. If no dialog appeared, this desktop has no file portal: drop a bag on the window or pass it on the command line.".into(),
                    );
                }
                None if job.ended() => self.dialog = None,
                None => {}
            }
        }
        let mut done = false;
        // A bounded number of events a frame keeps the frame short.
        for _ in 0..64 {
            if done {
                break;
            }
            let Some(l) = &mut self.loader else { break };
            let Some(ev) = l.take() else {
                // A loader that stopped without a last word (it panicked).
                if l.ended() {
                    self.error = Some("the loader stopped unexpectedly".into());
                    done = true;
                }
                break;
            };
            {
                match ev {
                    LoadEvent::Opened {
                        bag,
                        hist,
                        parts,
                        canonical,
                        demo,
                        notes,
                        script_errors,
                    } => {
                        self.bookmarks = self.all_bookmarks();
                        self.layouts = self.all_layouts();
                        let mut doc = Doc::new(bag, hist, &self.context);
                        doc.recordings.offsets =
                            parts.iter().map(|p| p.offset_ns as f64 / 1e9).collect();
                        doc.recordings.open = parts.len() > 1;
                        // The file opened, as the user named it (an MP4 file's recording is
                        // made in the cache).
                        if let [p] = &parts[..] {
                            doc.rec.path = p.path.clone();
                        }
                        doc.rec.parts = parts;
                        log::start(&mut doc, &self.ctx);
                        doc.nav.bookmarks = self
                            .bookmarks
                            .get(&canonical.display().to_string())
                            .cloned()
                            .unwrap_or_default();
                        doc.rec.canonical = canonical.clone();
                        message_scripts::opened(
                            &mut doc,
                            script_errors,
                            self.scripts_after_load.take(),
                        );
                        bookmarks_io::take(&mut doc, notes, &mut self.error);
                        // A recording with the same topics as one seen before gets its layout;
                        // the demo shows its cameras from the first frame.
                        self.pending_series.clear();
                        if let Some(l) = self.layouts.get(&layout::key(doc.rec.bag.summary())) {
                            self.pending_series = layout::apply(&mut doc, l);
                        } else if demo {
                            for ti in images::image_topics(&doc) {
                                if bagscope_ops::media::image::is_camera_type(
                                    &doc.rec.bag.summary().topics[ti].datatype,
                                ) {
                                    doc.images.open(ti);
                                }
                            }
                        }
                        self.doc = Some(doc);
                        self.opening = None;
                        self.preview = None;
                        self.remember(canonical, demo);
                        if let Some((p, text)) = self.pending_layout.take() {
                            self.apply_layout(&p, &text);
                        }
                        self.cmds
                            .extend(self.pending_expect.take().map(Cmd::CheckExpectations));
                    }
                    LoadEvent::Preview(s) => self.preview = Some(s),
                    LoadEvent::Failed(e) => {
                        self.error = Some(e);
                        self.opening = None;
                        self.preview = None;
                        done = true;
                    }
                    LoadEvent::Progress(p, h) => {
                        if let Some(d) = &mut self.doc {
                            d.rec.progress = Some(p);
                            d.rec.hist = h;
                        }
                    }
                    LoadEvent::Indexed(ix) => {
                        if let Some(d) = &mut self.doc {
                            d.rec.warnings = d.rec.bag.warnings();
                            d.rec.hist = Arc::clone(&ix.hist);
                            d.rec.indexed = Some(ix);
                            d.rec.index_end = Some(Ok(()));
                            d.rec.progress = None;
                        }
                        for p in std::mem::take(&mut self.pending_series) {
                            self.cmds.push(Cmd::AddSeries(p));
                        }
                        done = true;
                    }
                    LoadEvent::Definitions(v) => {
                        if let Some(d) = &mut self.doc {
                            d.rec.defs = Some(v);
                        }
                    }
                    LoadEvent::Info(info) => {
                        if let Some(d) = &mut self.doc {
                            d.rec.info_text = Some(info);
                        }
                    }
                    LoadEvent::Cancelled => {
                        if let Some(d) = &mut self.doc {
                            d.rec.index_end = Some(Err("indexing cancelled".into()));
                        }
                        done = true;
                    }
                    LoadEvent::IndexFailed(e) => {
                        if let Some(d) = &mut self.doc {
                            d.rec.index_end = Some(Err(e.clone()));
                        }
                        self.error = Some(format!("indexing failed: {e}"));
                        done = true;
                    }
                }
            }
        }
        if done {
            self.loader = None;
        }
        live::poll(self);
        if let Some(d) = &mut self.doc {
            log::poll(d);
            find::poll(d);
            compare::poll(d);
            diagnostics::poll(d);
            timeline::state_rows::poll(d);
            expect::poll(d, &self.ctx, &mut self.notice, &mut self.error);
            if let Some(r) = bookmarks_io::poll(d) {
                match r {
                    Ok(p) => self.notice = Some(format!("Bookmarks written to {}", p.display())),
                    Err(e) => self.error = Some(e),
                }
            }
            topics::timing::poll(d, &mut self.cmds);
            if let Some(w) = &mut d.insp.worker {
                while let Some(r) = w.take() {
                    d.insp.shown = Some(r);
                }
                w.flush();
            }
        }
    }

    fn handle_drops(&mut self, ui: &egui::Ui) {
        let dropped: Vec<PathBuf> = ui.input(|i| {
            i.raw
                .dropped_files
                .iter()
                .map(|f| f.path().to_path_buf())
                .filter(|p| !p.as_os_str().is_empty())
                .collect()
        });
        match dropped.len() {
            0 => {}
            1 => self.cmds.extend(dropped.into_iter().map(Cmd::Open)),
            _ => self
                .cmds
                .push(Cmd::OpenMany(bagscope_reader::bag::merge::parts_of(
                    &dropped,
                ))),
        }
    }

    /// The shortcuts pressed: every one is an action of [`actions`].
    fn keyboard(&mut self, ui: &egui::Ui) {
        let cmds = actions::pressed(self, ui.ctx());
        self.cmds.extend(cmds);
    }

    fn advance_playback(&mut self, ui: &egui::Ui) {
        let Some(d) = &mut self.doc else { return };
        if !d.nav.playing {
            return;
        }
        let dt = ui.input(|i| i.stable_dt).min(0.1) as f64;
        let (_, end) = d.rec.range();
        d.nav.play_pos += dt * 1e9 * f64::from(d.nav.speed);
        if d.nav.play_pos >= end as f64 {
            d.nav.play_pos = end as f64;
            d.nav.playing = false;
        }
        d.nav.playhead = d.nav.play_pos as u64;
        ui.ctx().request_repaint();
    }

    fn request_inspection(&mut self) {
        let Some(d) = &mut self.doc else { return };
        let key = d
            .nav
            .selected
            .and_then(|t| d.rec.message_at(t, d.nav.playhead));
        if key != d.insp.key {
            d.insp.key = key;
            if let Some(k) = key {
                if d.insp.worker.is_none() {
                    match inspector::inspector(d.rec.bag.clone(), &self.ctx) {
                        Ok(w) => d.insp.worker = Some(w),
                        Err(e) => self.error = Some(e),
                    }
                }
                if let Some(w) = &mut d.insp.worker {
                    w.ask(k, |_, _| true);
                }
            }
        }
    }

    /// The whole UI for one frame.
    pub fn ui(&mut self, ui: &mut egui::Ui) {
        if self.ctx != *ui.ctx() {
            self.ctx = ui.ctx().clone();
        }
        self.poll();
        self.handle_drops(ui);
        self.keyboard(ui);
        self.advance_playback(ui);
        self.top_bar(ui);
        match self.doc.is_some() {
            true => {
                let mut cmds = std::mem::take(&mut self.cmds);
                if let Some(d) = &mut self.doc {
                    // The side panels never take the timeline's room: a long topic name or
                    // string value is clipped (the inspector scrolls sideways) rather than
                    // widening its panel.
                    let w = ui.available_width();
                    egui::Panel::left("topics")
                        .resizable(true)
                        .default_size(330.0)
                        .max_size((w * 0.3).max(200.0))
                        .show(ui, |ui| topics::show(ui, d, &mut cmds));
                    egui::Panel::right("inspector")
                        .resizable(true)
                        .default_size(420.0)
                        .max_size((w * 0.35).max(240.0))
                        .show(ui, |ui| inspector::show(ui, d, &mut cmds));
                    egui::CentralPanel::default().show(ui, |ui| {
                        // The image panels' first height from the whole middle (not what a
                        // progress line left of it): the same view however it was opened.
                        let middle = ui.max_rect().height();
                        // Two panels by id: egui remembers a panel's size, so the one-line bar
                        // shown without series would otherwise keep the plots squeezed.
                        let panel = if d.plots.series.is_empty() {
                            egui::Panel::bottom("plots-bar").default_size(60.0)
                        } else {
                            let h = ui.available_height();
                            // With image panels too, the plots take less.
                            let share = if d.images.panels.is_empty() {
                                0.55
                            } else {
                                0.38
                            };
                            // By id with whether images are open too: the sizes follow what
                            // is shown, not the order it was opened in (a layout file's view
                            // is the one built by hand).
                            egui::Panel::bottom(("plots", d.images.panels.is_empty()))
                                .default_size((h * share).max(260.0))
                                .min_size(200.0)
                                .max_size((h * 0.6).max(260.0))
                        };
                        panel
                            .resizable(true)
                            .show(ui, |ui| plot::show(ui, d, &mut cmds));
                        if !d.images.panels.is_empty() {
                            // The timeline keeps at least a third of what is left.
                            let h = ui.available_height();
                            let first = (middle - 60.0).max(0.0);
                            egui::Panel::top(("images", d.plots.series.is_empty()))
                                .resizable(true)
                                .default_size((first * 0.45).max(220.0).min(h * 0.6))
                                .min_size(140.0)
                                .max_size((h * 0.66).max(160.0))
                                .show(ui, |ui| images::show(ui, d, &mut cmds));
                        }
                        timeline::show(ui, d, &mut cmds);
                    });
                    if d.export.open {
                        export::show(ui.ctx(), d, &mut cmds);
                    }
                    if d.log.open {
                        log::show(ui.ctx(), d, &mut cmds);
                    }
                    if d.find.open {
                        find::show(ui.ctx(), d, &mut cmds);
                    }
                    if d.tf.open {
                        tf::show(ui.ctx(), d, &mut cmds);
                    }
                    if d.scripts.open {
                        scripts::show(ui.ctx(), d, &mut cmds);
                    }
                    if !d.scene.panels.is_empty() {
                        scene::show(ui.ctx(), d, &mut cmds);
                    }
                    if !d.map.panels.is_empty() {
                        map::show(ui.ctx(), d, &mut cmds);
                    }
                    if d.publish.open {
                        publish::show(ui.ctx(), d, &mut cmds);
                    }
                    if self.live.open {
                        live::show(ui.ctx(), &mut self.live, &mut cmds);
                    }
                    if d.recordings.open && d.rec.parts.len() > 1 {
                        recordings_window(ui.ctx(), d, &mut cmds);
                    }
                    if d.bookmarks_io.asking || d.bookmarks_io.job.is_some() {
                        bookmarks_io::show(ui.ctx(), d, &mut cmds);
                    }
                    if d.diag.open {
                        diagnostics::show(ui.ctx(), d, &mut cmds);
                    }
                    if d.compare.open && d.rec.parts.len() > 1 {
                        compare::show(ui.ctx(), d, &mut cmds);
                    }
                }
                self.cmds.append(&mut cmds);
            }
            false => {
                egui::CentralPanel::default().show(ui, |ui| match self.preview.clone() {
                    Some(p) => preview_screen(ui, &p),
                    None => self.start_screen(ui),
                });
                if self.live.open {
                    live::show(ui.ctx(), &mut self.live, &mut self.cmds);
                }
            }
        }
        if self.show_info {
            self.info_window(ui);
        }
        self.palette(ui.ctx());
        for c in std::mem::take(&mut self.cmds) {
            self.apply(c);
        }
        self.request_inspection();
        if let Some(d) = &mut self.doc {
            images::update(d, ui.ctx());
            // The transform history is the recording's, read once for whichever panel needs
            // it (the TF window, the 3D panels, image overlays): started and taken here, not
            // by a panel.
            let overlays_need_tf = d.images.panels.iter().any(|p| p.overlay.needs_tf());
            if d.tf.open || (d.rec.has_tf && (!d.scene.panels.is_empty() || overlays_need_tf)) {
                tf::start(d, ui.ctx());
                tf::poll(d, &mut self.cmds);
            }
            scene::update(d, ui.ctx());
            map::update(d, ui.ctx());
            publish::update(d);
            if d.publish.active() {
                // The subscriber counts change without input.
                ui.ctx()
                    .request_repaint_after(std::time::Duration::from_millis(500));
            }
        }
        if self.busy() {
            ui.ctx()
                .request_repaint_after(std::time::Duration::from_millis(50));
        }
        if self.live.running() {
            // The counts and the file grow without input.
            ui.ctx()
                .request_repaint_after(std::time::Duration::from_millis(250));
        }
    }

    /// What is kept between runs, the open recording's bookmarks and layout as they are now.
    pub fn persisted(&self) -> Persisted {
        Persisted {
            recent: self.recent.clone(),
            msg_path: self.msg_path.clone(),
            bookmarks: self.all_bookmarks(),
            layouts: self.all_layouts(),
        }
    }

    /// Saves what is kept between runs.
    pub fn save(&self, storage: &mut dyn eframe::Storage) {
        self.persisted().save(storage);
    }
}

impl eframe::App for App {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        App::ui(self, ui);
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        App::save(self, storage);
    }

    fn on_exit(&mut self, _gl: Option<&eframe::glow::Context>) {
        live::finish(&mut self.live);
    }
}

/// Runs the app in a window.
pub fn run(
    bags: Vec<PathBuf>,
    layout: Option<PathBuf>,
    msg_path: Vec<PathBuf>,
    urdf: Option<PathBuf>,
    scripts: Scripts,
    expect: Option<PathBuf>,
) -> eframe::Result<()> {
    let options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title("bagscope")
            .with_inner_size([1600.0, 1000.0])
            .with_drag_and_drop(true)
            .with_icon(std::sync::Arc::new(
                // Made by scripts/data/icon.py; a PNG that is ours, so it always decodes.
                eframe::icon_data::from_png_bytes(include_bytes!("../assets/icon.png"))
                    .unwrap_or_default(),
            )),
        // The 3D panels draw with depth testing into the window's framebuffer.
        depth_buffer: 24,
        ..Default::default()
    };
    eframe::run_native(
        "bagscope",
        options,
        Box::new(move |cc| {
            let mut app = App::new(cc.storage, None)
                .with_flags(msg_path, urdf)
                .with_scripts(scripts);
            match bags.len() {
                // The first run, nothing opened before: the demo recording, not an empty window.
                0 if app.recent.is_empty() => app.cmds.push(Cmd::OpenDemo),
                0 => {}
                1 => app.cmds.extend(bags.into_iter().map(Cmd::Open)),
                _ => app
                    .cmds
                    .push(Cmd::OpenMany(bagscope_reader::bag::merge::parts_of(&bags))),
            }
            // Read now, applied to the recording once it is open.
            app.cmds.extend(layout.map(Cmd::OpenLayoutFrom));
            app.cmds.extend(expect.map(Cmd::CheckExpectations));
            Ok(Box::new(app))
        }),
    )
}
