//! The open recording as the app holds it: [`Recording`] (what it is and what the background
//! built of it), [`Nav`] (where the user is in it: playhead, selection, view, playback,
//! bookmarks) and each panel's own state, side by side in a [`Doc`]. Panels read the
//! recording and the navigation and change them only through [`super::Cmd`]s.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use super::inspector::InspectKey;
use super::loader::{DefInfo, Indexed};
use super::timeline::density_bins::Histogram;
use super::timeline::times::Times;
use super::topics::{self, timing};
use super::{export, find, images, inspector, log, plot, scene, tf, timeline};
use bagscope_reader::bag::TablesProgress;
use bagscope_reader::Bag;

/// The open recording: the bag, and what the loader built of it.
pub struct Recording {
    /// The bag.
    pub bag: Bag,
    /// A URDF file that stands for its robot description (`--urdf`).
    pub urdf: Option<PathBuf>,
    /// Each connection's definition source and comparison with the search path, once known.
    pub defs: Option<Arc<Vec<DefInfo>>>,
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
    /// What the Bag info window shows, made once (the summary does not change).
    pub info_text: Option<String>,
    /// The bag's warnings (the summary's, then the tables' once built): copied when they
    /// change, not every frame.
    pub warnings: Vec<String>,
    /// Whether the recording has transform topics.
    pub has_tf: bool,
    /// The bookmarks kept in the recording, as read (their ranges and colours).
    pub notes: Vec<bagscope_ops::bookmarks::Bookmark>,
    /// It has diagnostic topics (`diagnostic_msgs/DiagnosticArray`).
    pub has_diagnostics: bool,
    /// The topics the map draws (fixes, GeoJSON), found once.
    pub map_topics: Vec<String>,
    /// The recordings on the timeline, with their time shifts (one for a single file).
    pub parts: Vec<bagscope_reader::bag::merge::Part>,
    /// The first recording's canonical path: what bookmarks are kept under.
    pub canonical: PathBuf,
}

impl Recording {
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
    pub fn times(&self, ti: usize) -> Option<&Times> {
        self.indexed.as_ref().and_then(|i| i.topic_times.get(ti))
    }

    /// Every [`crate::timeline::times::SKIP`]-th message time of topic `ti`, once indexed.
    pub fn times_skip(&self, ti: usize) -> Option<&[u64]> {
        self.indexed
            .as_ref()
            .and_then(|i| i.topic_skip.get(ti))
            .map(|v| v.as_slice())
    }

    /// The message of topic `ti` at or before `t`.
    pub fn message_at(&self, ti: usize, t: u64) -> Option<InspectKey> {
        let ix = self.indexed.as_ref()?;
        ix.tables
            .last_at(self.bag.summary().topics.get(ti)?, t)
            .map(|(conn, entry)| InspectKey { conn, entry })
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
}

/// Where the user is in the recording and what they look at.
pub struct Nav {
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
    pub play_pos: f64,
    /// The second cursor (absolute ns): the toolbar shows its distance from the playhead.
    pub cursor2: Option<u64>,
    /// Bookmarks (absolute ns, name), in time order; kept per file in the app's storage.
    pub bookmarks: Vec<(u64, String)>,
}

/// The Recordings window (time shifts of several recordings on one timeline).
#[derive(Default)]
pub struct RecordingsState {
    /// Shown.
    pub open: bool,
    /// Shifts being edited, in seconds.
    pub offsets: Vec<f64>,
}

/// An open recording and everything the panels show of it.
pub struct Doc {
    /// The recording.
    pub rec: Recording,
    /// Where the user is in it.
    pub nav: Nav,
    /// The timeline.
    pub timeline: timeline::TimelineState,
    /// The inspector.
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
    /// The Scripts window.
    pub scripts: super::scripts::ScriptsState,
    /// 3D panels.
    pub scene: scene::SceneState,
    /// Map panels.
    pub map: super::map::MapState,
    /// The Publish window (toggles per topic, the worker publishing onto ROS 1).
    pub publish: super::publish::PublishState,
    /// The Timing section.
    pub timing: timing::TimingState,
    /// The topic tree.
    pub tree: topics::TreeState,
    /// The Recordings window.
    pub recordings: RecordingsState,
    /// The Compare runs window.
    pub compare: super::compare::CompareState,
    /// The Diagnostics panel.
    pub diag: super::diagnostics::DiagnosticsState,
    /// The timeline's state rows.
    pub states: timeline::state_rows::StatesState,
    /// The layout file last opened on it (its unknown fields, its panels this recording lacks).
    pub layout_kept: super::layout_file::LayoutFile,
    /// Plotted paths of that layout whose topics this recording lacks.
    pub layout_missing: Vec<String>,
    /// What of that layout is not shown (missing topics, panels not imported).
    pub layout_notes: Vec<String>,
    /// Writing the bookmarks into the recording: asked (the confirmation shown), under way.
    pub bookmarks_io: super::bookmarks_io::BookmarksIo,
    /// Checking the recording against a rules file (its failures become bookmarks).
    pub expect: super::expect::Expect,
}

impl Doc {
    /// The panels' first state for a recording just opened.
    /// `context`: the robot model file and the scene buffers of the app.
    pub fn new(bag: Bag, hist: Arc<Histogram>, context: &crate::AppContext) -> Doc {
        let s = bag.summary();
        let start = s.start_ns.unwrap_or(0);
        let dur = s.duration_ns().max(1) as f64;
        let n = s.topics.len();
        let export = export::ExportState::new(&s.path, s.version.is_ros1());
        let warnings = bag.warnings();
        let has_tf = bagscope_ops::spatial::tf::has_transforms(&bag, context.urdf.as_deref());
        let has_diagnostics =
            !bagscope_ops::reports::diagnostics::diagnostic_topics(&bag).is_empty();
        let map_topics = bagscope_ops::spatial::geo::map_topics(s)
            .into_iter()
            .map(|(name, _)| name)
            .collect();
        Doc {
            rec: Recording {
                urdf: context.urdf.clone(),
                defs: None,
                path: s.path.clone(),
                bag,
                progress: None,
                index_started: Instant::now(),
                index_end: None,
                indexed: None,
                hist,
                info_text: None,
                warnings,
                has_tf,
                has_diagnostics,
                map_topics,
                notes: Vec::new(),
                parts: Vec::new(),
                canonical: PathBuf::new(),
            },
            nav: Nav {
                visible: vec![true; n],
                selected: None,
                playhead: start,
                selection: None,
                view: (0.0, dur),
                playing: false,
                speed: 1.0,
                play_pos: start as f64,
                cursor2: None,
                bookmarks: Vec::new(),
            },
            timeline: Default::default(),
            insp: Default::default(),
            plots: plot::PlotState::with_scripts(context.scripts.series.clone()),
            export,
            images: Default::default(),
            log: Default::default(),
            find: Default::default(),
            tf: Default::default(),
            scripts: super::scripts::ScriptsState {
                messages: context.scripts.messages.clone(),
                ..Default::default()
            },
            scene: scene::SceneState::with_pool(context.scene_pool.clone()),
            map: Default::default(),
            publish: Default::default(),
            timing: Default::default(),
            tree: Default::default(),
            recordings: Default::default(),
            compare: Default::default(),
            diag: Default::default(),
            states: Default::default(),
            layout_kept: Default::default(),
            layout_missing: Vec::new(),
            layout_notes: Vec::new(),
            bookmarks_io: Default::default(),
            expect: Default::default(),
        }
    }

    /// The next (`forward`) or previous message time of the selected topic, or of any topic
    /// shown.
    pub fn step(&self, forward: bool) -> Option<u64> {
        let topics: Vec<usize> = match self.nav.selected {
            Some(t) => vec![t],
            None => (0..self.rec.bag.summary().topics.len())
                .filter(|&t| self.nav.visible[t])
                .collect(),
        };
        let p = self.nav.playhead;
        let mut best: Option<u64> = None;
        for t in topics {
            let Some(v) = self.rec.times(t) else { continue };
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

impl Doc {
    /// Whether `rec` has the same topics and connections, in the same order, as the recording
    /// shown: then it can take its place with every panel kept (a live recording that grew).
    pub fn same_topics(&self, rec: &Recording) -> bool {
        let (a, b) = (self.rec.bag.summary(), rec.bag.summary());
        a.connections.len() == b.connections.len()
            && a.topics.len() == b.topics.len()
            && a.topics
                .iter()
                .zip(&b.topics)
                .all(|(x, y)| x.name == y.name && x.datatype == y.datatype)
    }

    /// Takes `rec`, a newer state of the recording shown with the same topics (see
    /// [`Doc::same_topics`]): navigation, selections and panels stay; each panel's workers
    /// read the new state, and what a panel shows stays until they have.
    pub fn take_newer(&mut self, rec: Recording, ctx: &egui::Context) {
        self.rec = rec;
        self.timeline.forget_data();
        self.insp.worker = None;
        self.images.forget_worker();
        self.scene.forget_worker();
        super::log::refresh(self, ctx);
        super::plot::refresh(self, ctx);
        super::tf::refresh(self, ctx);
        self.timing.forget_data();
        if self.publish.active() {
            super::publish::disconnect(self);
        }
    }
}
