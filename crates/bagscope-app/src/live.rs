//! Live: the app records from a ROS 1 master or a ROS 2 domain into a file in its cache and
//! shows that recording as it grows. A worker owns the node or participant and the recorder
//! (the library's `live::record`, crash-safe: flushed twice a second); every second, once new
//! messages are on disk, the loader reads the file again on its own thread and the new state
//! takes the old one's place with every panel kept (see [`Doc::take_newer`]). The view follows
//! the newest time unless the user scrolled back; "Save as…" copies the recording out.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use super::job::{Handle, Job};
use super::loader::{self, LoadEvent, Loader};
use super::publish::{connect, Target, Transport};
use super::{layout, App, Cmd, Doc};
use bagscope_live::record::{self, Format, RecordOptions, RecordStats, Select};
use bagscope_reader::storage::compression::Compression;

/// How often the growing recording is read again, at most.
const RELOAD_EVERY: Duration = Duration::from_secs(1);

/// Live recordings kept in the cache (the oldest are removed when a new one starts).
const KEEP: usize = 10;

/// What the recorder reports.
pub enum Event {
    /// Connected: where it records from.
    Started(String),
    /// Messages written so far (each flush).
    Progress(RecordStats),
    /// It stopped: the finished file, or why it failed.
    Finished(Result<RecordStats, String>),
}

/// Topics found on the graph or domain: (name, type).
type Found = Result<Vec<(String, String)>, String>;

/// The Live window and the recording session.
#[derive(Default)]
pub struct LiveState {
    /// The Live window shown.
    pub open: bool,
    /// Record from a ROS 2 domain rather than a ROS 1 master.
    pub ros2: bool,
    /// The master as typed (empty: `ROS_MASTER_URI`, else localhost).
    pub master: String,
    /// The ROS 2 domain as typed (empty: `ROS_DOMAIN_ID`, else 0).
    pub domain: String,
    /// Also record topics that appear after the start.
    pub later: bool,
    /// Where live recordings go, when not [`cache_dir`] (tests).
    pub dir: Option<PathBuf>,
    /// The topics found, once looked for.
    pub found: Option<Found>,
    /// The topics picked.
    pub picked: BTreeSet<String>,
    finding: Option<Job<Found>>,
    /// The recording session, from Start until the next one.
    pub session: Option<Session>,
    /// What the last "Save as…" did.
    pub saved: Option<Result<PathBuf, String>>,
    save_dialog: Option<Job<Option<PathBuf>>>,
    saving: Option<Job<Result<PathBuf, String>>>,
}

/// One live recording.
pub struct Session {
    job: Job<Event>,
    /// Where it is recorded (the finished file's name; `NAME.active` while recording).
    pub file: PathBuf,
    /// Where it records from, once connected.
    pub target: Option<String>,
    /// What is recorded so far.
    pub stats: RecordStats,
    /// How it ended: `Ok` once the file is finished.
    pub end: Option<Result<(), String>>,
    /// The loader reading the file again, and what it has sent.
    loader: Option<(Loader, Option<Doc>)>,
    /// When the last reading started.
    last_load: Option<Instant>,
    /// Messages on disk when the last reading started.
    loaded: u64,
    /// The file was read after the recorder finished it.
    final_loaded: bool,
    /// The view follows the newest time (false once the user scrolled back).
    pub follow: bool,
    /// The panels of the recording shown at the start (image panels, plotted fields, the
    /// log), opened as their topics appear.
    pub wanted: layout::Layout,
}

impl Session {
    /// Whether it is recording.
    pub fn running(&self) -> bool {
        self.end.is_none()
    }

    /// The file as it is on disk now.
    pub fn path_now(&self) -> PathBuf {
        if self.running() {
            bagscope_reader::storage::output::active_path_for(&self.file)
        } else {
            self.file.clone()
        }
    }
}

/// Where the app keeps live recordings: the user's cache directory.
pub fn cache_dir() -> PathBuf {
    bagscope_ops::demo::demo_path()
        .parent()
        .map(|p| p.join("live"))
        .unwrap_or_else(|| std::env::temp_dir().join("bagscope-live"))
}

/// Removes all but the newest [`KEEP`] - 1 live recordings of the cache (before a new one).
fn prune(dir: &Path) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    let mut files: Vec<(std::time::SystemTime, PathBuf)> = rd
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("live-"))
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    files.sort();
    let extra = files.len().saturating_sub(KEEP - 1);
    for (_, p) in files.into_iter().take(extra) {
        let _ = std::fs::remove_file(p);
    }
}

impl LiveState {
    fn target(&self) -> Target {
        if self.ros2 {
            Target::Ros2(self.domain.trim().to_string())
        } else {
            Target::Ros1(self.master.trim().to_string())
        }
    }

    /// Whether a recording is running.
    pub fn running(&self) -> bool {
        self.session.as_ref().is_some_and(|s| s.running())
    }
}

/// Looks for the topics published now (a worker: it joins the graph or domain).
pub fn find_topics(live: &mut LiveState, ctx: &egui::Context) {
    let target = live.target();
    live.found = None;
    live.finding = Some(
        Job::spawn("live-topics", 1, ctx, move |h| {
            h.send(topics_of(&target));
        })
        .unwrap_or_else(|e| Job::done(Err(e))),
    );
}

fn topics_of(target: &Target) -> Found {
    let (t, said) = connect(target)?;
    let mut v = match t {
        Transport::Ros1(node) => node
            .published_topics()
            .map_err(|e| format!("{said}: {e}"))?,
        Transport::Ros2(p) => {
            // Discovery takes a moment: what is announced within two seconds.
            std::thread::sleep(Duration::from_secs(2));
            p.publishers()
                .into_iter()
                .map(|e| (e.topic, e.datatype))
                .collect()
        }
    };
    v.sort();
    v.dedup();
    // The graph's own bookkeeping is not what a user picks first.
    v.retain(|(t, _)| t != "/rosout_agg" && t != "/parameter_events");
    Ok(v)
}

/// Starts recording the picked topics (and later ones, when asked) into a new file in the
/// cache; the recording shown is closed.
pub fn start(app: &mut App) {
    let msg_path = app.open_options().msg_path;
    let live = &mut app.live;
    let select = if !live.later {
        Select::Topics(live.picked.iter().cloned().collect())
    } else {
        // The topics picked and any that appear after the start: every topic but those
        // found and not picked.
        let unpicked: Vec<String> = match &live.found {
            Some(Ok(v)) => v
                .iter()
                .map(|(t, _)| t.clone())
                .filter(|t| !live.picked.contains(t))
                .collect(),
            _ => Vec::new(),
        };
        if unpicked.is_empty() {
            Select::All
        } else {
            Select::Except(unpicked)
        }
    };
    let dir = live.dir.clone().unwrap_or_else(cache_dir);
    let stamp = stamp();
    let format = if live.ros2 { Format::Mcap } else { Format::Bag };
    let ext = if live.ros2 { "mcap" } else { "bag" };
    let file = dir.join(format!("live-{stamp}.{ext}"));
    let opts = RecordOptions {
        out: file.clone(),
        format,
        compression: Compression::None,
        split_size: None,
        split_duration: None,
        select,
        msg_path,
    };
    let target = live.target();
    // What the user looked at goes on looking: the same panels, for the same topics live (a
    // recording of the robot, or the recording being played into the graph).
    let wanted = app.doc.as_ref().map(layout::capture).unwrap_or_default();
    let job = Job::spawn("live", 16, &app.ctx, move |h| run(&dir, &target, &opts, h))
        .unwrap_or_else(|e| Job::done(Event::Finished(Err(e))));
    live.session = Some(Session {
        job,
        file,
        target: None,
        stats: RecordStats::default(),
        end: None,
        loader: None,
        last_load: None,
        loaded: 0,
        final_loaded: false,
        follow: true,
        wanted,
    });
    live.saved = None;
    live.open = false;
    app.cmds.push(Cmd::Close);
}

/// A file name's time stamp (UTC, to the second): `20261125-061502`.
fn stamp() -> String {
    let digits: String = bagscope_ops::timefmt::date(bagscope_live::now_ns())
        .chars()
        .filter(|c| c.is_ascii_digit())
        .collect();
    format!(
        "{}-{}",
        digits.get(0..8).unwrap_or_default(),
        digits.get(8..14).unwrap_or_default()
    )
}

/// The recorder: makes room in the cache directory `dir`, joins the graph or domain and
/// records until the session is dropped or stopped (the job's cancel flag).
fn run(dir: &Path, target: &Target, opts: &RecordOptions, h: &Handle<Event>) {
    if let Err(e) = std::fs::create_dir_all(dir) {
        h.send(Event::Finished(Err(format!(
            "cannot make {}: {e}",
            dir.display()
        ))));
        return;
    }
    prune(dir);
    let (t, said) = match connect(target) {
        Ok(x) => x,
        Err(e) => {
            h.send(Event::Finished(Err(e)));
            return;
        }
    };
    h.send(Event::Started(said));
    let stop: &AtomicBool = h.cancel_flag();
    let mut progress = |s: &RecordStats| {
        // A newer count supersedes one the UI has not taken.
        h.offer(Event::Progress(s.clone()));
    };
    let r = match &t {
        Transport::Ros1(node) => record::record_ros1(node, opts, stop, &mut progress),
        Transport::Ros2(p) => record::record_ros2(p, opts, stop, &mut progress),
    };
    h.send(Event::Finished(r.map_err(|e| e.to_string())));
}

/// Stops the recording: the recorder writes what has arrived and finishes the file.
pub fn stop(live: &mut LiveState) {
    if let Some(s) = &live.session {
        s.job.cancel();
    }
}

/// At exit: stops a recording and lets the recorder finish its file (a few seconds at most;
/// the window is gone, nothing waits on this thread any more). A file not finished in time is
/// left as `NAME.active`, which bagscope opens and recovers.
pub fn finish(live: &mut LiveState) {
    let Some(s) = &mut live.session else { return };
    if !s.running() {
        return;
    }
    s.job.cancel();
    let end = Instant::now() + Duration::from_secs(5);
    while Instant::now() < end {
        match s.job.wait(Duration::from_millis(100)) {
            Some(Event::Finished(_)) => return,
            Some(_) => {}
            None if s.job.ended() => return,
            None => {}
        }
    }
}

/// Takes the recorder's reports, reads the file again when it grew, and puts a new state in
/// place of the shown one (never blocks).
pub fn poll(app: &mut App) {
    poll_save(app);
    if let Some(j) = &mut app.live.finding {
        if let Some(found) = j.take() {
            if let Ok(v) = &found {
                // Every topic is picked at first: recording is not publishing.
                app.live.picked = v.iter().map(|(t, _)| t.clone()).collect();
            }
            app.live.found = Some(found);
            app.live.finding = None;
        } else if j.ended() {
            app.live.finding = None;
        }
    }
    let Some(s) = &mut app.live.session else {
        return;
    };
    while let Some(ev) = s.job.take() {
        match ev {
            Event::Started(t) => s.target = Some(t),
            Event::Progress(st) => s.stats = st,
            Event::Finished(Ok(st)) => {
                s.stats = st;
                s.end = Some(Ok(()));
            }
            Event::Finished(Err(e)) => s.end = Some(Err(e)),
        }
    }
    if s.end.is_none() && s.job.ended() {
        s.end = Some(Err("the recorder stopped unexpectedly".into()));
    }
    // Read the file again: when it has new messages on disk, a second after the last reading
    // started and once that one is done; once more when the recorder has finished it.
    let due = s.loader.is_none()
        && s.stats.messages > 0
        && match &s.end {
            None => {
                s.stats.messages > s.loaded
                    && s.last_load.is_none_or(|t| t.elapsed() >= RELOAD_EVERY)
            }
            Some(Ok(())) => !s.final_loaded,
            Some(Err(_)) => false,
        };
    if due {
        s.last_load = Some(Instant::now());
        s.loaded = s.stats.messages;
        s.final_loaded = s.end.is_some();
        let part = bagscope_reader::bag::merge::Part {
            path: s.path_now(),
            offset_ns: 0,
        };
        // Made when a reload is due, not every frame (fields apart from the live session).
        let opts = crate::open_options(&app.msg_path, &app.context);
        s.loader = Some((
            loader::loader(vec![part], false, opts, Vec::new(), &app.ctx),
            None,
        ));
    }
    let mut swap: Option<Doc> = None;
    if let Some((l, pending)) = &mut s.loader {
        let mut over = false;
        while let Some(ev) = l.take() {
            match ev {
                LoadEvent::Opened {
                    bag,
                    hist,
                    parts,
                    canonical,
                    ..
                } => {
                    // (A live recording keeps no bookmarks of its own yet.)
                    let mut d = Doc::new(bag, hist, &app.context);
                    d.rec.parts = parts;
                    d.rec.canonical = canonical;
                    *pending = Some(d);
                }
                LoadEvent::Definitions(v) => {
                    if let Some(d) = pending {
                        d.rec.defs = Some(v);
                    }
                }
                LoadEvent::Info(t) => {
                    if let Some(d) = pending {
                        d.rec.info_text = Some(t);
                    }
                }
                LoadEvent::Indexed(ix) => {
                    if let Some(mut d) = pending.take() {
                        // A file being written has no index yet: the reader's notes on
                        // recovering it are expected, not news (the finished file has one).
                        d.rec.warnings = if s.final_loaded {
                            d.rec.bag.warnings()
                        } else {
                            Vec::new()
                        };
                        d.rec.hist = std::sync::Arc::clone(&ix.hist);
                        d.rec.indexed = Some(ix);
                        d.rec.index_end = Some(Ok(()));
                        swap = Some(d);
                    }
                    over = true;
                }
                // A reading that fails (the file caught between two writes) is tried again at
                // the next flush.
                LoadEvent::Failed(_) | LoadEvent::IndexFailed(_) | LoadEvent::Cancelled => {
                    over = true;
                    s.loaded = 0;
                    s.final_loaded = false;
                }
                LoadEvent::Preview(_) | LoadEvent::Progress(..) => {}
            }
        }
        if over || l.ended() {
            s.loader = None;
        }
    }
    if let Some(new) = swap {
        let follow = show_newer(app, new);
        if let (Some(s), Some(d)) = (&mut app.live.session, &mut app.doc) {
            s.follow = follow;
            for p in open_wanted(d, &mut s.wanted) {
                app.cmds.push(Cmd::AddSeries(p));
            }
        }
    }
}

/// Opens the panels of `wanted` whose topics are in `d` now (topics appear as their first
/// messages arrive), taking them out of `wanted`; returns the series to plot.
fn open_wanted(d: &mut Doc, wanted: &mut layout::Layout) -> Vec<String> {
    let s = d.rec.bag.summary().clone();
    let index = |name: &str| s.topics.iter().position(|t| t.name == name);
    wanted.images.retain(|name| match index(name) {
        Some(ti) => {
            if !d.images.panels.iter().any(|p| p.topic == ti) {
                d.images.open(ti);
            }
            false
        }
        None => true,
    });
    if wanted.log && !bagscope_ops::reports::log::log_topics(&d.rec.bag).is_empty() {
        d.log.open = true;
        wanted.log = false;
    }
    let mut plot = Vec::new();
    wanted.series.retain(|path| {
        let topic = bagscope_reader::encoding::FieldPath::parse(path).map(|f| f.topic);
        match topic {
            Ok(t) if index(&t).is_some() => {
                plot.push(path.clone());
                false
            }
            Ok(_) => true,
            Err(_) => false,
        }
    });
    plot
}

/// Puts `new`, the growing recording read again, in place of the one shown, keeping the
/// panels; the view and playhead follow the newest time if they were at the end. Returns
/// whether they follow.
fn show_newer(app: &mut App, mut new: Doc) -> bool {
    let Some(mut old) = app.doc.take() else {
        // The first state: the whole recording shown, the playhead at its end.
        let (_, e) = new.rec.range();
        new.nav.playhead = e;
        new.nav.play_pos = e as f64;
        log::start(&mut new, &app.ctx);
        app.doc = Some(new);
        return true;
    };
    let (s0, e0) = old.rec.range();
    let dur0 = e0.saturating_sub(s0) as f64;
    let (v0, v1) = old.nav.view;
    // At the end: the view's right edge within 2 % of its width of the newest time.
    let follow = v1 >= dur0 - 0.02 * (v1 - v0).max(1.0);
    let playhead_at_end = old.nav.playhead >= e0;
    if old.same_topics(&new.rec) {
        old.take_newer(new.rec, &app.ctx);
    } else {
        // New topics: a new document with the navigation and layout carried over by name.
        carry_over(&old, &mut new, &app.ctx);
        for p in layout::apply(&mut new, &layout::capture(&old)) {
            app.cmds.push(Cmd::AddSeries(p));
        }
        old = new;
    }
    let (s1, e1) = old.rec.range();
    let dur1 = e1.saturating_sub(s1) as f64;
    if follow {
        let w = v1 - v0;
        old.nav.view = if v0 <= 0.0 {
            (0.0, dur1.max(1.0))
        } else {
            ((dur1 - w).max(0.0), dur1.max(1.0))
        };
    }
    if playhead_at_end && !old.nav.playing {
        old.nav.playhead = e1;
        old.nav.play_pos = e1 as f64;
    }
    app.doc = Some(old);
    follow
}

/// What the user set in `old` that `new` (with other topics) keeps: topics shown and
/// selected (by name), the view, the playhead, the selection, bookmarks, the panels open.
fn carry_over(old: &Doc, new: &mut Doc, ctx: &egui::Context) {
    let (os, ns) = (old.rec.bag.summary(), new.rec.bag.summary().clone());
    let index = |name: &str| ns.topics.iter().position(|t| t.name == name);
    for (ti, t) in os.topics.iter().enumerate() {
        if let (Some(nt), Some(&v)) = (index(&t.name), old.nav.visible.get(ti)) {
            new.nav.visible[nt] = v;
        }
    }
    new.nav.selected = old
        .nav
        .selected
        .and_then(|ti| os.topics.get(ti))
        .and_then(|t| index(&t.name));
    new.nav.view = old.nav.view;
    new.nav.playhead = old.nav.playhead;
    new.nav.play_pos = old.nav.play_pos;
    new.nav.selection = old.nav.selection;
    new.nav.speed = old.nav.speed;
    new.nav.cursor2 = old.nav.cursor2;
    new.nav.bookmarks = old.nav.bookmarks.clone();
    new.tf.open = old.tf.open;
    new.find.open = old.find.open;
    new.export.open = old.export.open;
    log::start(new, ctx);
}

use super::log;

/// Copies the recording (finished) to a place the user picks.
pub fn save_as(live: &mut LiveState, ctx: &egui::Context) {
    let Some(s) = &live.session else { return };
    let name = s
        .file
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_default();
    live.save_dialog = Some(
        Job::spawn("save-dialog", 1, ctx, move |h| {
            h.send(rfd::FileDialog::new().set_file_name(&name).save_file());
        })
        .unwrap_or_else(|_| Job::done(None)),
    );
}

/// Copies the finished recording to `to` (a worker: a temporary name beside it, then renamed
/// into place).
pub fn save_to(live: &mut LiveState, to: PathBuf, ctx: &egui::Context) {
    let Some(s) = &live.session else { return };
    if s.running() {
        live.saved = Some(Err("stop the recording first".into()));
        return;
    }
    let from = s.file.clone();
    live.saved = None;
    live.saving = Some(
        Job::spawn("save", 1, ctx, move |h| {
            h.send(copy_into_place(&from, &to));
        })
        .unwrap_or_else(|e| Job::done(Err(e))),
    );
}

fn copy_into_place(from: &Path, to: &Path) -> Result<PathBuf, String> {
    let name = to
        .file_name()
        .ok_or_else(|| format!("{} is not a file name", to.display()))?;
    let tmp = to.with_file_name(format!(".{}.part", name.to_string_lossy()));
    std::fs::copy(from, &tmp)
        .and_then(|_| std::fs::rename(&tmp, to))
        .map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            format!("cannot write {}: {e}", to.display())
        })?;
    Ok(to.to_path_buf())
}

/// Takes the Save dialog's answer and the copy's outcome.
fn poll_save(app: &mut App) {
    let live = &mut app.live;
    if let Some(j) = &mut live.save_dialog {
        match j.take() {
            Some(Some(p)) => {
                live.save_dialog = None;
                app.cmds.push(Cmd::LiveSaveTo(p));
            }
            Some(None) => live.save_dialog = None,
            None if j.ended() => live.save_dialog = None,
            None => {}
        }
    }
    if let Some(j) = &mut live.saving {
        if let Some(r) = j.take() {
            live.saved = Some(r);
            live.saving = None;
        } else if j.ended() {
            live.saving = None;
        }
    }
}

/// The Live window: where to connect, the topics found, Start / Stop / Save as….
pub fn show(ctx: &egui::Context, live: &mut LiveState, cmds: &mut Vec<Cmd>) {
    let mut open = live.open;
    egui::Window::new("Live")
        .open(&mut open)
        .default_width(460.0)
        .show(ctx, |ui| {
            ui.label(
                "Records the topics picked from a live ROS 1 master or ROS 2 domain into a file \
                 in the cache and shows it as it grows: timeline, inspector, plots, images and \
                 log fill in as messages arrive.",
            );
            let running = live.running();
            ui.add_enabled_ui(!running, |ui| {
                ui.horizontal(|ui| {
                    ui.radio_value(&mut live.ros2, false, "ROS 1");
                    ui.radio_value(&mut live.ros2, true, "ROS 2");
                });
                ui.horizontal(|ui| {
                    if live.ros2 {
                        ui.label("Domain:");
                        ui.add(
                            egui::TextEdit::singleline(&mut live.domain)
                                .hint_text("ROS_DOMAIN_ID")
                                .desired_width(120.0),
                        );
                    } else {
                        ui.label("Master:");
                        ui.add(
                            egui::TextEdit::singleline(&mut live.master)
                                .hint_text("ROS_MASTER_URI")
                                .desired_width(220.0),
                        );
                    }
                    if live.finding.is_some() {
                        ui.spinner();
                        ui.label("Looking for topics…");
                    } else if ui.button("Find topics").clicked() {
                        cmds.push(Cmd::LiveFindTopics);
                    }
                });
                match &live.found {
                    None => {}
                    Some(Err(e)) => {
                        ui.colored_label(ui.visuals().error_fg_color, e);
                    }
                    Some(Ok(v)) if v.is_empty() => {
                        ui.label("No topic is published now.");
                    }
                    Some(Ok(v)) => {
                        egui::ScrollArea::vertical()
                            .max_height(260.0)
                            .show(ui, |ui| {
                                for (t, ty) in v {
                                    let mut on = live.picked.contains(t);
                                    ui.horizontal(|ui| {
                                        if ui.checkbox(&mut on, t.as_str()).changed() {
                                            if on {
                                                live.picked.insert(t.clone());
                                            } else {
                                                live.picked.remove(t);
                                            }
                                        }
                                        ui.weak(ty.as_str());
                                    });
                                }
                            });
                    }
                }
                ui.checkbox(&mut live.later, "Also topics that appear after the start");
                let can = !live.picked.is_empty() || live.later;
                if ui
                    .add_enabled(can, egui::Button::new("Start"))
                    .on_disabled_hover_text("Find topics and pick some, or tick \"Also topics that appear after the start\"")
                    .clicked()
                {
                    cmds.push(Cmd::LiveStart);
                }
            });
            if let Some(s) = &live.session {
                ui.separator();
                status(ui, s, cmds);
                if !s.running() && s.end.as_ref().is_some_and(|e| e.is_ok()) {
                    ui.horizontal(|ui| {
                        if ui
                            .add_enabled(live.saving.is_none(), egui::Button::new("Save as…"))
                            .clicked()
                        {
                            cmds.push(Cmd::LiveSaveAs);
                        }
                        ui.weak(format!(
                            "The cache keeps the last {KEEP} live recordings."
                        ));
                    });
                }
                match &live.saved {
                    Some(Ok(p)) => {
                        ui.label(format!("Saved as {}", p.display()));
                    }
                    Some(Err(e)) => {
                        ui.colored_label(ui.visuals().error_fg_color, e);
                    }
                    None => {}
                }
            }
        });
    live.open = open;
}

/// The session's status line, with Stop while it records.
pub fn status(ui: &mut egui::Ui, s: &Session, cmds: &mut Vec<Cmd>) {
    ui.horizontal(|ui| {
        let what = format!(
            "{} message(s), {} on {} topic(s)",
            s.stats.messages,
            bagscope_ops::timefmt::bytes(s.stats.bytes),
            s.stats.topics.len()
        );
        match (&s.end, &s.target) {
            (None, None) => {
                ui.spinner();
                ui.label("Live: connecting…");
            }
            (None, Some(t)) => {
                // A red dot: recording.
                let (r, _) = ui.allocate_exact_size(egui::vec2(12.0, 12.0), egui::Sense::hover());
                ui.painter()
                    .circle_filled(r.center(), 5.0, egui::Color32::from_rgb(229, 62, 62));
                ui.label(format!("Live from {t}: {what}"));
            }
            (Some(Ok(())), _) => {
                ui.label(format!("Recorded {what} to {}", s.file.display()));
            }
            (Some(Err(e)), _) => {
                ui.colored_label(ui.visuals().error_fg_color, format!("Live: {e}"));
            }
        }
        if s.running() {
            if ui.button("Stop").clicked() {
                cmds.push(Cmd::LiveStop);
            }
            if !s.follow
                && ui
                    .button("Follow")
                    .on_hover_text("Show the newest time again")
                    .clicked()
            {
                cmds.push(Cmd::LiveFollow);
            }
        }
    });
    for n in &s.stats.notes {
        ui.weak(n);
    }
}
