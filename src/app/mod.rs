//! The desktop app: one module per panel; panels read the state and push [`Cmd`]s, which
//! [`App::apply`] carries out in one place after the frame's panels have run.

pub mod export;
pub mod find;
pub mod images;
mod inspector;
pub mod layout;
pub mod log;
pub mod plot;
mod screens;
pub mod tf;
pub mod thumbs;
pub mod timeline;
pub mod timing;
mod top_bar;
mod topics;
pub mod worker;

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use crate::bag::TablesProgress;
use crate::{timefmt, Bag};

use screens::{preview_screen, recordings_window};
use worker::{Histogram, Indexed, InspectKey, Inspected, Inspector, LoadEvent, Loader};

/// Most files kept in the recent list.
const RECENT_MAX: usize = 10;

/// What panels ask for.
#[derive(Debug, Clone, PartialEq)]
pub enum Cmd {
    /// Open a bag file.
    Open(PathBuf),
    /// Open several recordings on one timeline, each with its time shift.
    OpenMany(Vec<crate::merge::Part>),
    /// Show the Open dialog to add a recording to the timeline.
    AddDialog,
    /// Show or hide the Recordings window (time shifts of several recordings).
    ShowRecordings(bool),
    /// Reopen the recordings on the timeline shifted to start together (worked out on the
    /// loader thread: it opens each).
    AlignStarts,
    /// Open (writing it first if needed) the demo bag.
    OpenDemo,
    /// Show the Open dialog (a file).
    OpenDialog,
    /// Show the Open dialog for a folder (a rosbag2 recording).
    OpenFolderDialog,
    /// Close the bag.
    Close,
    /// Stop building the message tables.
    CancelIndexing,
    /// Select a topic (index into the summary's topics) or none.
    SelectTopic(Option<usize>),
    /// Show or hide a topic's timeline row.
    SetVisible(usize, bool),
    /// Show or hide every topic.
    SetAllVisible(bool),
    /// Move the playhead (ns, clamped to the bag).
    SetPlayhead(u64),
    /// Step to the next (`true`) or previous message of the selected topic, or of any topic.
    Step(bool),
    /// Play or pause.
    TogglePlay,
    /// Playback speed.
    SetSpeed(f32),
    /// The selected range (ns), or none.
    SetSelection(Option<(u64, u64)>),
    /// The visible time window (ns, as offsets from the bag start, fractional).
    SetView(f64, f64),
    /// Show the whole bag.
    FitAll,
    /// Show the bag info window.
    ShowInfo(bool),
    /// Set the message search path (directories separated as in PATH) and reopen.
    SetMsgPath(String),
    /// Plot a field path (`/imu.linear_acceleration.x`).
    AddSeries(String),
    /// Show the export window.
    ShowExport(bool),
    /// Export the bag as the export window is set.
    ExportBag,
    /// Export the plotted series to CSV as the export window is set.
    ExportCsv,
    /// Open an image panel on a topic.
    OpenImage(usize),
    /// Show or hide the log panel.
    ShowLog(bool),
    /// Show or hide the Find window.
    ShowFind(bool),
    /// Show or hide the TF window.
    ShowTf(bool),
    /// Search for the Find window's query.
    Find,
    /// Move the playhead to the next (`true`) or previous hit of the last search.
    FindStep(bool),
    /// Set or clear the second cursor (ns).
    SetCursor2(Option<u64>),
    /// Bookmark a time (ns).
    AddBookmark(u64),
    /// Remove the i-th bookmark.
    RemoveBookmark(usize),
    /// Plot a topic's header.stamp minus its receive time.
    PlotStampDelay(usize),
}

/// An open bag and everything the panels show of it.
pub struct Doc {
    /// The bag.
    pub bag: Bag,
    /// Each connection's definition source and comparison with the search path, once known.
    pub defs: Option<Arc<Vec<worker::DefInfo>>>,
    /// Its path.
    pub path: PathBuf,
    /// Tables progress, while indexing.
    pub progress: Option<TablesProgress>,
    /// When indexing started.
    pub index_started: Instant,
    /// How indexing ended, if it has: `Ok` when the tables exist.
    pub index_end: Option<Result<(), String>>,
    /// The tables and derived data, once built.
    pub indexed: Option<Indexed>,
    /// Density per topic (coarse, while indexing; exact after).
    pub hist: Arc<Histogram>,
    /// Per topic: shown on the timeline.
    pub visible: Vec<bool>,
    /// The selected topic.
    pub selected: Option<usize>,
    /// The playhead (absolute ns).
    pub playhead: u64,
    /// The selected range (absolute ns).
    pub selection: Option<(u64, u64)>,
    /// The visible window, as ns offsets from the start.
    pub view: (f64, f64),
    /// Playing.
    pub playing: bool,
    /// Playback speed.
    pub speed: f32,
    /// Playback position carried between frames with sub-ns precision.
    play_pos: f64,
    /// What the Bag info window shows, made once (the summary does not change).
    info_text: Option<String>,
    /// The bag's warnings (the summary's, then the tables' once built): copied when they
    /// change, not every frame.
    pub warnings: Vec<String>,
    /// The inspector's worker.
    inspector: Inspector,
    /// The last message asked for.
    pub inspect_key: Option<InspectKey>,
    /// The last message received.
    pub inspected: Option<Inspected>,
    /// Topic filter text.
    pub filter: String,
    /// Panels' own state.
    pub timeline: timeline::TimelineState,
    /// Inspector state.
    pub insp: inspector::InspectorState,
    /// Plots.
    pub plots: plot::PlotState,
    /// The export window.
    pub export: export::ExportState,
    /// Image panels.
    pub images: images::ImagesState,
    /// The log panel.
    pub log: log::LogState,
    /// The Find window.
    pub find: find::FindState,
    /// The TF window.
    pub tf: tf::TfState,
    /// Whether the recording has transform topics.
    pub has_tf: bool,
    /// The second cursor (absolute ns): the toolbar shows its distance from the playhead.
    pub cursor2: Option<u64>,
    /// Bookmarks (absolute ns, name), in time order; kept per file in the app's storage.
    pub bookmarks: Vec<(u64, String)>,
    /// The recordings on the timeline, with their time shifts (one for a single file).
    pub parts: Vec<crate::merge::Part>,
    /// The first recording's canonical path: what bookmarks are kept under.
    pub canonical: PathBuf,
    /// The Recordings window: shown, and the shifts (s) as edited.
    pub recordings_open: bool,
    /// Shifts being edited, in seconds.
    pub offsets_edit: Vec<f64>,
    /// The Timing section.
    pub timing: timing::TimingState,
    /// The topic tree's folding and rows.
    pub tree: topics::TreeState,
}

impl Doc {
    fn new(bag: Bag, hist: Arc<Histogram>, ctx: &egui::Context) -> Doc {
        let s = bag.summary();
        let start = s.start_ns.unwrap_or(0);
        let dur = s.duration_ns().max(1) as f64;
        let n = s.topics.len();
        let export = export::ExportState::new(&s.path, s.version.is_ros1());
        let warnings = bag.warnings();
        let has_tf = !crate::ops::tf::tf_topics(&bag).is_empty();
        Doc {
            defs: None,
            path: s.path.clone(),
            inspector: Inspector::spawn(bag.clone(), ctx.clone()),
            bag,
            progress: None,
            index_started: Instant::now(),
            index_end: None,
            indexed: None,
            hist,
            visible: vec![true; n],
            selected: None,
            playhead: start,
            selection: None,
            view: (0.0, dur),
            playing: false,
            speed: 1.0,
            play_pos: start as f64,
            info_text: None,
            warnings,
            inspect_key: None,
            inspected: None,
            filter: String::new(),
            timeline: Default::default(),
            insp: Default::default(),
            plots: Default::default(),
            export,
            images: Default::default(),
            log: Default::default(),
            find: Default::default(),
            tf: Default::default(),
            has_tf,
            cursor2: None,
            bookmarks: Vec::new(),
            parts: Vec::new(),
            canonical: PathBuf::new(),
            recordings_open: false,
            offsets_edit: Vec::new(),
            timing: Default::default(),
            tree: Default::default(),
        }
    }

    /// Start and end of the bag (ns).
    pub fn range(&self) -> (u64, u64) {
        let s = self.bag.summary();
        (s.start_ns.unwrap_or(0), s.end_ns.unwrap_or(0))
    }

    /// Whether the tables are being built.
    pub fn indexing(&self) -> bool {
        self.index_end.is_none()
    }

    /// Times of the messages of topic `ti`, once indexed.
    pub fn times(&self, ti: usize) -> Option<&worker::Times> {
        self.indexed.as_ref().and_then(|i| i.topic_times.get(ti))
    }

    /// Every [`worker::SKIP`]-th message time of topic `ti`, once indexed.
    pub fn times_skip(&self, ti: usize) -> Option<&[u64]> {
        self.indexed
            .as_ref()
            .and_then(|i| i.topic_skip.get(ti))
            .map(|v| v.as_slice())
    }

    /// The message of topic `ti` at or before `t`.
    pub fn message_at(&self, ti: usize, t: u64) -> Option<InspectKey> {
        let ix = self.indexed.as_ref()?;
        let topic = self.bag.summary().topics.get(ti)?;
        let mut best: Option<InspectKey> = None;
        for &c in &topic.connections {
            let es = ix.tables.per_connection.get(c)?;
            let k = es.partition_point(|e| e.time_ns <= t);
            if k == 0 {
                continue;
            }
            let e = es[k - 1];
            if best.is_none_or(|b| e.time_ns >= b.entry.time_ns) {
                best = Some(InspectKey { conn: c, entry: e });
            }
        }
        best
    }

    /// The first message of topic `ti`, once indexed.
    pub fn first_message(&self, ti: usize) -> Option<InspectKey> {
        let ix = self.indexed.as_ref()?;
        let topic = self.bag.summary().topics.get(ti)?;
        topic
            .connections
            .iter()
            .filter_map(|&c| {
                let e = *ix.tables.per_connection.get(c)?.first()?;
                Some(InspectKey { conn: c, entry: e })
            })
            .min_by_key(|k| k.entry.time_ns)
    }

    fn step(&self, forward: bool) -> Option<u64> {
        let topics: Vec<usize> = match self.selected {
            Some(t) => vec![t],
            None => (0..self.bag.summary().topics.len())
                .filter(|&t| self.visible[t])
                .collect(),
        };
        let p = self.playhead;
        let mut best: Option<u64> = None;
        for t in topics {
            let Some(v) = self.times(t) else { continue };
            let cand = if forward {
                v.get(v.partition_point(|x| x <= p))
            } else {
                let k = v.partition_point(|x| x < p);
                k.checked_sub(1).and_then(|k| v.get(k))
            };
            if let Some(c) = cand {
                best = Some(match best {
                    None => c,
                    Some(b) if forward => b.min(c),
                    Some(b) => b.max(c),
                });
            }
        }
        best
    }
}

/// The application.
pub struct App {
    /// The open bag.
    pub doc: Option<Doc>,
    /// A bag being opened.
    loader: Option<Loader>,
    /// What is being opened (for the status line).
    pub opening: Option<String>,
    /// What is known of the recording being opened before its rows are read.
    pub preview: Option<Arc<crate::Summary>>,
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
    /// The message search path set in the app (directories separated as in PATH), as edited.
    pub msg_path: String,
    /// Bookmarks per file (canonical path), of the files not open now.
    pub bookmarks: std::collections::BTreeMap<String, Vec<(u64, String)>>,
    /// Layouts per topic set ([`layout::key`]), of the recordings not open now.
    pub layouts: std::collections::BTreeMap<String, layout::Layout>,
    /// Series of a re-applied layout, plotted once the tables are built.
    pending_series: Vec<String>,
    dialog: Option<std::sync::mpsc::Receiver<Option<Vec<PathBuf>>>>,
    /// The dialog shown adds to the timeline (instead of opening).
    adding: bool,
    ctx: egui::Context,
}

/// Puts the app's message search path in front of the command line's `--msg-path` and the
/// environment's.
fn apply_msg_path(text: &str) {
    static FROM_CLI: std::sync::OnceLock<Vec<PathBuf>> = std::sync::OnceLock::new();
    let cli = FROM_CLI.get_or_init(crate::definition::sources::search_path);
    let mut dirs: Vec<PathBuf> = std::env::split_paths(text.trim())
        .filter(|p| !p.as_os_str().is_empty())
        .collect();
    dirs.extend(cli.iter().cloned());
    crate::definition::sources::set_search_path(dirs);
}

impl App {
    /// A new app; `bag` is opened on the first frame when given.
    pub fn new(storage: Option<&dyn eframe::Storage>, bag: Option<PathBuf>) -> App {
        let recent = storage
            .and_then(|s| s.get_string("recent"))
            .map(|s| {
                s.lines()
                    .filter(|l| !l.is_empty())
                    .map(PathBuf::from)
                    .collect()
            })
            .unwrap_or_default();
        let msg_path = storage
            .and_then(|s| s.get_string("msg_path"))
            .unwrap_or_default();
        let bookmarks = storage
            .and_then(|s| s.get_string("bookmarks"))
            .and_then(|j| serde_json::from_str(&j).ok())
            .unwrap_or_default();
        apply_msg_path(&msg_path);
        let layouts = storage
            .and_then(|s| s.get_string("layouts"))
            .map(|j| layout::from_json(&j))
            .unwrap_or_default();
        let mut app = App {
            msg_path,
            bookmarks,
            layouts,
            pending_series: Vec::new(),
            doc: None,
            loader: None,
            opening: None,
            preview: None,
            error: None,
            notice: None,
            recent,
            cmds: Vec::new(),
            show_info: false,
            dialog: None,
            adding: false,
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
            let k = d.canonical.display().to_string();
            if d.bookmarks.is_empty() {
                m.remove(&k);
            } else {
                m.insert(k, d.bookmarks.clone());
            }
        }
        m
    }

    /// Every layout, the open recording's as it is now.
    pub fn all_layouts(&self) -> std::collections::BTreeMap<String, layout::Layout> {
        let mut m = self.layouts.clone();
        if let Some(d) = &self.doc {
            m.insert(layout::key(d.bag.summary()), layout::capture(d));
        }
        m
    }

    /// Whether a bag is being opened or indexed.
    pub fn busy(&self) -> bool {
        self.loader.is_some()
    }

    fn start_loading(&mut self, parts: Vec<crate::merge::Part>, label: String) {
        self.start_loading_with(parts, false, label);
    }

    fn start_loading_with(&mut self, parts: Vec<crate::merge::Part>, align: bool, label: String) {
        if let Some(l) = self.loader.take() {
            l.cancel.store(true, Ordering::Relaxed);
        }
        self.error = None;
        self.preview = None;
        self.opening = Some(label);
        self.loader = Some(Loader::spawn(parts, align, self.ctx.clone()));
    }

    /// Puts a file (its canonical path, from the loader) first in the recent list.
    fn remember(&mut self, p: PathBuf, demo: bool) {
        if demo {
            return;
        }
        self.recent.retain(|x| *x != p);
        self.recent.insert(0, p);
        self.recent.truncate(RECENT_MAX);
    }

    /// Carries out one command.
    pub fn apply(&mut self, cmd: Cmd) {
        match cmd {
            Cmd::Open(p) => {
                let label = p.display().to_string();
                self.start_loading(crate::merge::parts_of(&[p]), label);
            }
            Cmd::OpenMany(parts) => {
                let label = parts
                    .iter()
                    .map(|p| p.path.display().to_string())
                    .collect::<Vec<_>>()
                    .join(" + ");
                self.start_loading(parts, label);
            }
            Cmd::OpenDemo => self.start_loading(Vec::new(), "demo bag".into()),
            Cmd::AlignStarts => {
                if let Some(d) = &self.doc {
                    let parts = d.parts.clone();
                    self.start_loading_with(parts, true, "aligning the recordings".into());
                }
            }
            Cmd::ShowRecordings(b) => {
                if let Some(d) = &mut self.doc {
                    d.recordings_open = b;
                }
            }
            Cmd::OpenDialog | Cmd::OpenFolderDialog | Cmd::AddDialog => {
                let folder = cmd == Cmd::OpenFolderDialog;
                self.adding = cmd == Cmd::AddDialog;
                let (tx, rx) = std::sync::mpsc::channel();
                let ctx = self.ctx.clone();
                let r = std::thread::Builder::new()
                    .name("bagscope-file-dialog".into())
                    .spawn(move || {
                        let dialog = rfd::FileDialog::new();
                        // Several files may be chosen: they go on one timeline.
                        let f = if folder {
                            dialog
                                .set_title("Open a rosbag2 recording (its folder)")
                                .pick_folder()
                                .map(|p| vec![p])
                        } else {
                            dialog
                                .add_filter(
                                    "Recordings",
                                    &["bag", "active", "orig", "mcap", "db3", "zstd", "yaml"],
                                )
                                .add_filter("All files", &["*"])
                                .pick_files()
                                .filter(|v| !v.is_empty())
                        };
                        let _ = tx.send(f);
                        ctx.request_repaint();
                    });
                match r {
                    Ok(_) => self.dialog = Some(rx),
                    Err(e) => self.error = Some(format!("cannot show the Open dialog: {e}")),
                }
            }
            Cmd::Close => {
                self.bookmarks = self.all_bookmarks();
                self.layouts = self.all_layouts();
                if let Some(l) = self.loader.take() {
                    l.cancel.store(true, Ordering::Relaxed);
                }
                self.doc = None;
                self.opening = None;
            }
            Cmd::CancelIndexing => {
                if let Some(l) = &self.loader {
                    l.cancel.store(true, Ordering::Relaxed);
                }
            }
            Cmd::ShowInfo(b) => self.show_info = b,
            Cmd::SetMsgPath(p) => {
                self.msg_path = p;
                apply_msg_path(&self.msg_path);
                // Definitions are resolved when a recording opens: open it again.
                if let Some(d) = &self.doc {
                    let path = d.path.clone();
                    self.cmds.push(Cmd::Open(path));
                }
            }
            Cmd::AddSeries(p) => {
                if let Some(d) = &mut self.doc {
                    if let Err(e) = plot::add_series(d, &p, &self.ctx) {
                        self.error = Some(format!("cannot plot {p}: {e}"));
                    }
                }
            }
            Cmd::ShowExport(b) => {
                if let Some(d) = &mut self.doc {
                    d.export.open = b;
                }
            }
            Cmd::ExportBag => {
                if let Some(d) = &mut self.doc {
                    export::start_bag_export(d, &self.ctx);
                }
            }
            Cmd::PlotStampDelay(ti) => {
                if let Some(d) = &mut self.doc {
                    timing::plot_stamp_delay(d, ti, &self.ctx);
                }
            }
            Cmd::Find => {
                if let Some(d) = &mut self.doc {
                    find::start(d, &self.ctx);
                }
            }
            Cmd::ExportCsv => {
                if let Some(d) = &mut self.doc {
                    export::start_csv_export(d, &self.ctx);
                }
            }
            other => {
                if let Some(d) = &mut self.doc {
                    apply_doc(d, other);
                }
            }
        }
    }

    fn poll(&mut self) {
        if let Some(rx) = &self.dialog {
            match rx.try_recv() {
                Ok(Some(mut chosen)) => {
                    self.dialog = None;
                    let cmd = match (&self.doc, self.adding) {
                        (Some(d), true) => {
                            let mut parts = d.parts.clone();
                            for p in chosen {
                                parts = add_part(&parts, p);
                            }
                            Cmd::OpenMany(parts)
                        }
                        _ if chosen.len() == 1 => Cmd::Open(chosen.remove(0)),
                        _ => Cmd::OpenMany(crate::merge::parts_of(&chosen)),
                    };
                    self.apply(cmd);
                }
                Ok(None) => {
                    self.dialog = None;
                    self.notice = Some(
                        "No file chosen. If no dialog appeared, this desktop has no file portal: drop a bag on the window or pass it on the command line.".into(),
                    );
                }
                Err(std::sync::mpsc::TryRecvError::Empty) => {}
                Err(_) => self.dialog = None,
            }
        }
        let mut done = false;
        // A bounded number of events a frame keeps the frame short.
        for _ in 0..64 {
            let Some(l) = &self.loader else { break };
            let Ok(ev) = l.rx.try_recv() else { break };
            {
                match ev {
                    LoadEvent::Opened {
                        bag,
                        hist,
                        parts,
                        canonical,
                        demo,
                    } => {
                        self.bookmarks = self.all_bookmarks();
                        self.layouts = self.all_layouts();
                        let mut doc = Doc::new(bag, hist, &self.ctx);
                        doc.offsets_edit = parts.iter().map(|p| p.offset_ns as f64 / 1e9).collect();
                        doc.recordings_open = parts.len() > 1;
                        doc.parts = parts;
                        log::start(&mut doc, &self.ctx);
                        doc.bookmarks = self
                            .bookmarks
                            .get(&canonical.display().to_string())
                            .cloned()
                            .unwrap_or_default();
                        doc.canonical = canonical.clone();
                        // A recording with the same topics as one seen before gets its layout;
                        // the demo shows its cameras from the first frame.
                        self.pending_series.clear();
                        if let Some(l) = self.layouts.get(&layout::key(doc.bag.summary())) {
                            self.pending_series = layout::apply(&mut doc, l);
                        } else if demo {
                            for ti in images::image_topics(&doc) {
                                if crate::ops::image::is_camera_type(
                                    &doc.bag.summary().topics[ti].datatype,
                                ) {
                                    doc.images.open(ti);
                                }
                            }
                        }
                        self.doc = Some(doc);
                        self.opening = None;
                        self.preview = None;
                        self.remember(canonical, demo);
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
                            d.progress = Some(p);
                            d.hist = h;
                        }
                    }
                    LoadEvent::Indexed(ix) => {
                        if let Some(d) = &mut self.doc {
                            d.warnings = d.bag.warnings();
                            d.hist = Arc::clone(&ix.hist);
                            d.indexed = Some(ix);
                            d.index_end = Some(Ok(()));
                            d.progress = None;
                        }
                        for p in std::mem::take(&mut self.pending_series) {
                            self.cmds.push(Cmd::AddSeries(p));
                        }
                        done = true;
                    }
                    LoadEvent::Definitions(v) => {
                        if let Some(d) = &mut self.doc {
                            d.defs = Some(v);
                        }
                    }
                    LoadEvent::Info(info) => {
                        if let Some(d) = &mut self.doc {
                            d.info_text = Some(info);
                        }
                    }
                    LoadEvent::Cancelled => {
                        if let Some(d) = &mut self.doc {
                            d.index_end = Some(Err("indexing cancelled".into()));
                        }
                        done = true;
                    }
                    LoadEvent::IndexFailed(e) => {
                        if let Some(d) = &mut self.doc {
                            d.index_end = Some(Err(e.clone()));
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
        if let Some(d) = &mut self.doc {
            log::poll(d);
            find::poll(d);
            timing::poll(d);
            while let Ok(r) = d.inspector.rx.try_recv() {
                d.inspected = Some(r);
            }
            d.inspector.flush();
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
                .push(Cmd::OpenMany(crate::merge::parts_of(&dropped))),
        }
    }

    fn keyboard(&mut self, ui: &egui::Ui) {
        if self.doc.is_none() {
            return;
        }
        use egui::Key;
        // Find works from anywhere, the query box included.
        // Shift+F3 first: a key without Shift also matches the event with it.
        let (ctrl_f, shift_f3, f3) = ui.input_mut(|i| {
            (
                i.consume_key(egui::Modifiers::COMMAND, Key::F),
                i.consume_key(egui::Modifiers::SHIFT, Key::F3),
                i.consume_key(egui::Modifiers::NONE, Key::F3),
            )
        });
        if ctrl_f {
            self.cmds.push(Cmd::ShowFind(true));
        }
        if f3 || shift_f3 {
            self.cmds.push(Cmd::FindStep(f3));
        }
        if ui.ctx().egui_wants_keyboard_input() {
            return;
        }
        let (space, left, right, home, end, bkey) = ui.input_mut(|i| {
            (
                i.consume_key(egui::Modifiers::NONE, Key::Space),
                i.consume_key(egui::Modifiers::NONE, Key::ArrowLeft),
                i.consume_key(egui::Modifiers::NONE, Key::ArrowRight),
                i.consume_key(egui::Modifiers::NONE, Key::Home),
                i.consume_key(egui::Modifiers::NONE, Key::End),
                i.consume_key(egui::Modifiers::NONE, Key::B),
            )
        });
        let Some(d) = &self.doc else { return };
        let (a, b) = d.range();
        if space {
            self.cmds.push(Cmd::TogglePlay);
        }
        if bkey {
            self.cmds.push(Cmd::AddBookmark(d.playhead));
        }
        if left {
            self.cmds.push(Cmd::Step(false));
        }
        if right {
            self.cmds.push(Cmd::Step(true));
        }
        if home {
            self.cmds.push(Cmd::SetPlayhead(a));
        }
        if end {
            self.cmds.push(Cmd::SetPlayhead(b));
        }
    }

    fn advance_playback(&mut self, ui: &egui::Ui) {
        let Some(d) = &mut self.doc else { return };
        if !d.playing {
            return;
        }
        let dt = ui.input(|i| i.stable_dt).min(0.1) as f64;
        let (_, end) = d.range();
        d.play_pos += dt * 1e9 * f64::from(d.speed);
        if d.play_pos >= end as f64 {
            d.play_pos = end as f64;
            d.playing = false;
        }
        d.playhead = d.play_pos as u64;
        ui.ctx().request_repaint();
    }

    fn request_inspection(&mut self) {
        let Some(d) = &mut self.doc else { return };
        let key = d.selected.and_then(|t| d.message_at(t, d.playhead));
        if key != d.inspect_key {
            d.inspect_key = key;
            if let Some(k) = key {
                d.inspector.request(k);
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
                            egui::Panel::bottom("plots")
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
                            egui::Panel::top("images")
                                .resizable(true)
                                .default_size((h * 0.45).max(220.0).min(h * 0.6))
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
                    if d.recordings_open && d.parts.len() > 1 {
                        recordings_window(ui.ctx(), d, &mut cmds);
                    }
                }
                self.cmds.append(&mut cmds);
            }
            false => {
                egui::CentralPanel::default().show(ui, |ui| match self.preview.clone() {
                    Some(p) => preview_screen(ui, &p),
                    None => self.start_screen(ui),
                });
            }
        }
        if self.show_info {
            self.info_window(ui);
        }
        for c in std::mem::take(&mut self.cmds) {
            self.apply(c);
        }
        self.request_inspection();
        if let Some(d) = &mut self.doc {
            images::update(d, ui.ctx());
        }
        if self.busy() {
            ui.ctx()
                .request_repaint_after(std::time::Duration::from_millis(50));
        }
    }

    /// Saves the recent files.
    pub fn save(&self, storage: &mut dyn eframe::Storage) {
        let s: Vec<String> = self
            .recent
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        storage.set_string("recent", s.join("\n"));
        storage.set_string("msg_path", self.msg_path.clone());
        if let Ok(j) = serde_json::to_string(&self.all_bookmarks()) {
            storage.set_string("bookmarks", j);
        }
        storage.set_string("layouts", layout::to_json(&self.all_layouts()));
    }
}

fn apply_doc(d: &mut Doc, cmd: Cmd) {
    let (a, b) = d.range();
    match cmd {
        Cmd::SelectTopic(t) => d.selected = t,
        Cmd::SetVisible(t, v) => {
            if let Some(x) = d.visible.get_mut(t) {
                *x = v;
            }
        }
        Cmd::SetAllVisible(v) => d.visible.iter_mut().for_each(|x| *x = v),
        Cmd::SetPlayhead(t) => {
            d.playhead = t.clamp(a, b.max(a));
            d.play_pos = d.playhead as f64;
        }
        Cmd::Step(fwd) => {
            if let Some(t) = d.step(fwd) {
                d.playhead = t;
                d.play_pos = t as f64;
                d.playing = false;
            }
        }
        Cmd::TogglePlay => {
            if !d.playing && d.playhead >= b {
                d.playhead = a;
            }
            d.playing = !d.playing;
            d.play_pos = d.playhead as f64;
        }
        Cmd::SetSpeed(s) => d.speed = s.clamp(0.1, 10.0),
        Cmd::SetSelection(r) => {
            d.selection = r.map(|(x, y)| {
                let (x, y) = (x.min(y), x.max(y));
                (x.clamp(a, b), y.clamp(a, b))
            })
        }
        Cmd::SetView(x, y) => {
            let dur = (b - a).max(1) as f64;
            let w = (y - x).clamp(1e3, dur * 1.2);
            let x = x.clamp(-dur * 0.1, dur - w * 0.5);
            d.view = (x, x + w);
        }
        Cmd::FitAll => d.view = (0.0, (b - a).max(1) as f64),
        Cmd::OpenImage(ti) if ti < d.bag.summary().topics.len() => d.images.open(ti),
        Cmd::ShowLog(b) => d.log.open = b,
        Cmd::ShowTf(b) => d.tf.open = b && d.has_tf,
        Cmd::ShowFind(b) => {
            d.find.focus_query = b && !d.find.open;
            d.find.open = b;
        }
        Cmd::SetCursor2(t) => d.cursor2 = t.map(|t| t.clamp(a, b.max(a))),
        Cmd::AddBookmark(t) => {
            let t = t.clamp(a, b.max(a));
            if !d.bookmarks.iter().any(|x| x.0 == t) {
                let n = d.bookmarks.len() + 1;
                d.bookmarks.push((t, format!("Bookmark {n}")));
                d.bookmarks.sort_by_key(|x| x.0);
            }
        }
        Cmd::RemoveBookmark(i) if i < d.bookmarks.len() => {
            d.bookmarks.remove(i);
        }
        Cmd::FindStep(fwd) => {
            if let Some(t) = d.find.next_from(d.playhead, fwd) {
                d.playhead = t;
                d.play_pos = t as f64;
            }
        }
        _ => {}
    }
}

/// The parts with one more recording (a path already there is not added twice).
fn add_part(parts: &[crate::merge::Part], p: PathBuf) -> Vec<crate::merge::Part> {
    let mut v = parts.to_vec();
    if !v.iter().any(|x| x.path == p) {
        v.push(crate::merge::Part {
            path: p,
            offset_ns: 0,
        });
    }
    v
}

impl eframe::App for App {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        App::ui(self, ui);
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        App::save(self, storage);
    }
}

/// Runs the app in a window.
pub fn run(bags: Vec<PathBuf>) -> eframe::Result<()> {
    let options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title("bagscope")
            .with_inner_size([1600.0, 1000.0])
            .with_drag_and_drop(true)
            .with_icon(std::sync::Arc::new(
                // Made by scripts/make_icon.py; a PNG that is ours, so it always decodes.
                eframe::icon_data::from_png_bytes(include_bytes!("../../assets/icon.png"))
                    .unwrap_or_default(),
            )),
        ..Default::default()
    };
    eframe::run_native(
        "bagscope",
        options,
        Box::new(move |cc| {
            let mut app = App::new(cc.storage, None);
            match bags.len() {
                // The first run, nothing opened before: the demo recording, not an empty window.
                0 if app.recent.is_empty() => app.cmds.push(Cmd::OpenDemo),
                0 => {}
                1 => app.cmds.extend(bags.into_iter().map(Cmd::Open)),
                _ => app.cmds.push(Cmd::OpenMany(crate::merge::parts_of(&bags))),
            }
            Ok(Box::new(app))
        }),
    )
}
