//! The loader: a recording opened and its tables built on a worker of its own, which hands each
//! step to the UI thread over a bounded channel the UI drains with `try_recv` (the UI never
//! waits on it); with the density strips' first bins (`timeline/density_bins.rs`) and the
//! timeline's times (`timeline/times.rs`) made on the way.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::job::{Handle, Job};
use bagscope_reader::bag::TablesProgress;
use bagscope_reader::{Bag, MessageTables, Summary};

use crate::timeline::density_bins::{
    bin_of, chunk_histogram, refine_histogram, topic_of_connection, Histogram, HIST_BINS,
};
use crate::timeline::times::{Times, SKIP};

/// What the loader reports.
pub enum LoadEvent {
    /// The bag is open: its summary is known, with a first density from the chunk infos.
    Opened {
        /// The bag.
        bag: Bag,
        /// The first density.
        hist: Arc<Histogram>,
        /// The recordings it was made of, with their time shifts.
        parts: Vec<bagscope_reader::bag::merge::Part>,
        /// The first recording's canonical path (worked out here: it touches the file system).
        canonical: PathBuf,
        /// It is the app's own demo bag.
        demo: bool,
        /// The bookmarks kept in it (MCAP metadata records, its sidecar), and why a sidecar
        /// did not read.
        notes: (Vec<bagscope_ops::bookmarks::Bookmark>, Option<String>),
        /// Why the message scripts made no virtual topics (it opened without them).
        script_errors: Vec<bagscope_ops::script::ScriptError>,
    },
    /// Known before the recording's rows are read (a rosbag2 SQLite recording opened from its
    /// metadata.yaml): what the app shows while they are read.
    Preview(Arc<Summary>),
    /// It did not open.
    Failed(String),
    /// Tables progress and the density so far.
    Progress(TablesProgress, Arc<Histogram>),
    /// The tables are built.
    Indexed(Indexed),
    /// Indexing was cancelled.
    Cancelled,
    /// Building the tables failed (the summary stays usable).
    IndexFailed(String),
    /// Where each connection's definition comes from, and how it compares with the search path.
    Definitions(Arc<Vec<DefInfo>>),
    /// The Bag info text.
    Info(String),
}

/// A connection's definition, as the topic details show it.
#[derive(Debug, Clone)]
pub struct DefInfo {
    /// Where it came from (or why there is none usable).
    pub source: String,
    /// ROS 1: whether the md5sum matches the definition.
    pub md5: Option<String>,
    /// How the definition on the message search path compares (for `--migrate`).
    pub search_path: String,
}

/// Works out connection `ci`'s [`DefInfo`] (reads `.msg` files: on the loader thread; the plan
/// it compiles stays cached in the bag for the UI).
pub fn def_info(bag: &Bag, ci: usize) -> DefInfo {
    let c = &bag.summary().connections[ci];
    let (source, md5, def) = match bag.plan(ci) {
        Ok((p, src)) => {
            let md5 = (c.encoding == "ros1").then(|| {
                if p.md5_matches(&c.md5sum) {
                    "md5 ok: matches the definition".to_string()
                } else {
                    format!("md5 MISMATCH: the definition gives {}", p.md5)
                }
            });
            (src.to_string(), md5, Some(p.def.clone()))
        }
        Err(e) => (format!("none usable: {}", e.reason), None, None),
    };
    let dirs = bagscope_reader::definition::sources::search_dirs(&bag.options().msg_path);
    let dialect = if c.encoding == "cdr" {
        bagscope_reader::definition::msg::Dialect::Ros2
    } else {
        bagscope_reader::definition::msg::Dialect::Ros1
    };
    let search_path = if dirs.is_empty() {
        "no message search path set (Definitions menu)".to_string()
    } else {
        match bagscope_reader::definition::sources::lookup_in(
            &dirs,
            &c.datatype,
            dialect,
            &c.message_definition,
        ) {
            None => "not on the search path".to_string(),
            Some((text, file)) => {
                match bagscope_reader::definition::msg::MsgDef::parse_dialect(
                    &c.datatype,
                    &text,
                    dialect,
                ) {
                    Ok(d) if Some(&d) == def.as_ref() => format!("same as {}", file.display()),
                    Ok(_) => format!(
                        "differs from {} (export --migrate re-encodes into it)",
                        file.display()
                    ),
                    Err(e) => format!("{} does not parse: {e}", file.display()),
                }
            }
        }
    };
    DefInfo {
        source,
        md5,
        search_path,
    }
}

/// What the UI needs once the tables exist.
pub struct Indexed {
    /// The tables.
    pub tables: Arc<MessageTables>,
    /// For each topic (in summary order), every message time, sorted.
    pub topic_times: Vec<Times>,
    /// For each topic, every [`SKIP`]-th of its message times: the timeline finds where a
    /// pixel's messages start in these first, so drawing a dense topic touches a sixty-fourth
    /// of its times.
    pub topic_skip: Vec<Arc<Vec<u64>>>,
    /// For each topic, the median time between two messages (ns).
    pub median_period: Vec<Option<u64>>,
    /// The exact density.
    pub hist: Arc<Histogram>,
}

/// A bag being opened and indexed on a named thread.
pub type Loader = Job<LoadEvent>;

/// Opens the recordings `parts` (or writes the demo bag first when there are none) and builds
/// their tables on a background thread. With `align`, the recordings are first shifted to
/// start together.
pub fn loader(
    parts: Vec<bagscope_reader::bag::merge::Part>,
    align: bool,
    opts: bagscope_reader::OpenOptions,
    scripts: Vec<bagscope_ops::script::message::MessageScript>,
    ctx: &egui::Context,
) -> Loader {
    Job::spawn("indexer", 64, ctx, move |h| {
        load(parts, align, &opts, &scripts, h)
    })
    .unwrap_or_else(|e| Job::done(LoadEvent::Failed(e)))
}

fn load(
    mut parts: Vec<bagscope_reader::bag::merge::Part>,
    align: bool,
    opts: &bagscope_reader::OpenOptions,
    scripts: &[bagscope_ops::script::message::MessageScript],
    h: &Handle<LoadEvent>,
) {
    if parts.is_empty() {
        match bagscope_ops::demo::ensure_demo() {
            Ok(p) => parts.push(bagscope_reader::bag::merge::Part {
                path: p,
                offset_ns: 0,
            }),
            Err(e) => {
                h.send(LoadEvent::Failed(format!("cannot write the demo bag: {e}")));
                return;
            }
        }
    }
    if align {
        match bagscope_reader::bag::merge::align_starts(&parts, opts) {
            Ok(p) => parts = p,
            Err(e) => {
                h.send(LoadEvent::Failed(format!("cannot align the starts: {e}")));
                return;
            }
        }
    }
    // A recording opened alone gets the message scripts' virtual topics (made on this worker,
    // once: they are kept in the cache).
    // Scripts that are wrong, or fail as they run: said, and the recording opened without them.
    let mut script_errors = Vec::new();
    let opened = match &parts[..] {
        // (An MP4 file too: its video tracks made into a recording in the cache.)
        [p] if p.offset_ns == 0 => {
            use bagscope_ops::open::{open, OpenError};
            let cache = bagscope_ops::demo::cache_dir().join("virtual");
            let cancel = std::sync::atomic::AtomicBool::new(false);
            match open(&p.path, scripts, opts, &cache, &cancel) {
                Ok((b, _)) => Ok(b),
                Err(OpenError::Scripts(errors)) => {
                    script_errors = errors;
                    open(&p.path, &[], opts, &cache, &cancel)
                        .map(|(b, _)| b)
                        .map_err(|e| e.to_string())
                }
                Err(e) => Err(e.to_string()),
            }
        }
        _ => Bag::open_many(&parts, opts).map_err(|e| e.to_string()),
    };
    let bag = match opened {
        Ok(b) => b,
        Err(e) => {
            let names: Vec<String> = parts.iter().map(|p| p.path.display().to_string()).collect();
            h.send(LoadEvent::Failed(format!("{}: {e}", names.join(" + "))));
            return;
        }
    };
    if bag.quick_summary().rows_pending {
        // Topics, counts and times at once; the blocks the timeline needs come with the rows.
        h.send(LoadEvent::Preview(Arc::new(bag.quick_summary().clone())));
    }
    let s = bag.summary().clone();
    let first = Arc::new(chunk_histogram(&s));
    let estimate = Arc::clone(&first);
    let canonical = std::fs::canonicalize(&parts[0].path).unwrap_or_else(|_| parts[0].path.clone());
    let demo = parts.len() == 1
        && std::fs::canonicalize(bagscope_ops::demo::demo_path()).is_ok_and(|d| d == canonical);
    let notes = bagscope_ops::bookmarks::read_bookmarks(&bag);
    let opened = LoadEvent::Opened {
        bag: bag.clone(),
        hist: first,
        parts,
        canonical,
        demo,
        notes,
        script_errors,
    };
    if !h.send(opened) {
        return;
    }
    let infos: Vec<DefInfo> = (0..s.connections.len())
        .map(|ci| def_info(&bag, ci))
        .collect();
    if !h.send(LoadEvent::Definitions(Arc::new(infos))) {
        return;
    }
    // The Bag info text (it says where each definition came from) on a thread of its own: it
    // reads the chunk headers a ROS 1 summary does not have (32,766 at 1 TB, 1.5-2.3 s from a
    // cold page cache), which the tables need not wait for.
    let b = bag.clone();
    h.helper(
        "info",
        move |h| {
            let info = bagscope_ops::reports::info::summary_text(&b, false)
                .unwrap_or_else(|e| e.to_string());
            h.send(LoadEvent::Info(info));
        },
        LoadEvent::Info,
    );
    let topic_of = topic_of_connection(&s);
    let mut hist: Histogram = (*estimate).clone();
    let mut last = Instant::now();
    // Tables built already (a recording joined to its scripts' virtual topics was indexed as
    // they ran) are taken as they are: the exact histogram below needs no replay of them.
    let r = match bag.tables_if_built() {
        Some(t) => Ok(t),
        None => bag.build_tables(&mut |p, entries| {
            refine_histogram(&mut hist, &s, &topic_of, entries);
            if last.elapsed() > Duration::from_millis(40) {
                last = Instant::now();
                // Progress may be dropped when the UI is behind: the next one supersedes it.
                if !h.offer(LoadEvent::Progress(p, Arc::new(hist.clone()))) {
                    return false;
                }
            }
            !h.cancelled()
        }),
    };
    let tables = match r {
        Ok(t) => t,
        Err(bagscope_reader::Error::Cancelled) => {
            h.send(LoadEvent::Cancelled);
            return;
        }
        Err(e) => {
            h.send(LoadEvent::IndexFailed(e.to_string()));
            return;
        }
    };
    let mut topic_times = Vec::with_capacity(s.topics.len());
    let mut periods = Vec::with_capacity(s.topics.len());
    let mut skips = Vec::with_capacity(s.topics.len());
    let mut exact: Histogram = vec![vec![0u32; HIST_BINS]; s.topics.len()];
    for (ti, t) in s.topics.iter().enumerate() {
        let v = Times::of(&tables, &t.connections);
        // The times are sorted and `bin_of` never decreases: each bin's count is two binary
        // searches apart, not a division per message (6.5 ms a topic of 2,000,000).
        let mut lo = 0;
        for (b, n) in exact[ti].iter_mut().enumerate() {
            let hi = lo + v.partition_point_in(lo, v.len(), |x| bin_of(&s, x) <= b);
            *n = u32::try_from(hi - lo).unwrap_or(u32::MAX);
            lo = hi;
        }
        periods.push(v.median_period());
        skips.push(Arc::new(v.every(SKIP)));
        topic_times.push(v);
    }
    h.send(LoadEvent::Indexed(Indexed {
        tables,
        topic_times,
        topic_skip: skips,
        median_period: periods,
        hist: Arc::new(exact),
    }));
}
