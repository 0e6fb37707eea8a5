//! Background workers of the app. Each owns its I/O and hands results to the UI thread over a
//! bounded channel the UI drains with `try_recv`; the UI never waits on them.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::job::{Handle, Job, Requests, Service};
use bagscope_reader::bag::TablesProgress;
use bagscope_reader::encoding::{Node, Plan};
use bagscope_reader::{Bag, IndexEntry, MessageTables, Summary};

/// Bins of the coarse per-topic density kept while the tables are being built.
pub const HIST_BINS: usize = 4096;

/// Per-topic message counts in [`HIST_BINS`] equal bins over the bag's time range.
pub type Histogram = Vec<Vec<u32>>;

/// What the loader reports.
pub enum LoadEvent {
    /// The bag is open: its summary is known, with a first density from the chunk infos.
    Opened {
        /// The bag.
        bag: Bag,
        /// The first density.
        hist: Arc<Histogram>,
        /// The recordings it was made of, with their time shifts.
        parts: Vec<bagscope_reader::merge::Part>,
        /// The first recording's canonical path (worked out here: it touches the file system).
        canonical: PathBuf,
        /// It is the app's own demo bag.
        demo: bool,
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
    let dirs = bagscope_reader::definition::sources::search_dirs();
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

/// The stride of [`Indexed::topic_skip`].
pub const SKIP: usize = 64;

/// A topic's message times, sorted: its one connection's table read in place (no copy: at 1 TB
/// the copies took 1.6 GB and most of a second), or the times of its several connections
/// merged.
#[derive(Clone)]
pub enum Times {
    /// Connection `.1` of the tables.
    Table(Arc<MessageTables>, usize),
    /// Merged times.
    Merged(Arc<Vec<u64>>),
}

impl Times {
    /// The times of `conns` (a topic's connections).
    pub fn of(tables: &Arc<MessageTables>, conns: &[usize]) -> Times {
        match conns {
            [c] if *c < tables.per_connection.len() => Times::Table(Arc::clone(tables), *c),
            _ => Times::Merged(Arc::new(bagscope_ops::timing::connection_times(
                tables, conns,
            ))),
        }
    }

    /// Number of messages.
    pub fn len(&self) -> usize {
        match self {
            Times::Table(t, c) => t.per_connection[*c].len(),
            Times::Merged(v) => v.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The `i`-th time.
    pub fn get(&self, i: usize) -> Option<u64> {
        match self {
            Times::Table(t, c) => t.per_connection[*c].get(i).map(|e| e.time_ns),
            Times::Merged(v) => v.get(i).copied(),
        }
    }

    /// The number of leading times for which `pred` holds (`pred` true, then false).
    pub fn partition_point(&self, mut pred: impl FnMut(u64) -> bool) -> usize {
        match self {
            Times::Table(t, c) => t.per_connection[*c].partition_point(|e| pred(e.time_ns)),
            Times::Merged(v) => v.partition_point(|&x| pred(x)),
        }
    }

    /// Like [`Times::partition_point`], over the times `lo..hi` only (an index from `lo`).
    pub fn partition_point_in(
        &self,
        lo: usize,
        hi: usize,
        mut pred: impl FnMut(u64) -> bool,
    ) -> usize {
        match self {
            Times::Table(t, c) => t.per_connection[*c][lo..hi].partition_point(|e| pred(e.time_ns)),
            Times::Merged(v) => v[lo..hi].partition_point(|&x| pred(x)),
        }
    }

    /// Every `step`-th time, from the first.
    pub fn every(&self, step: usize) -> Vec<u64> {
        match self {
            Times::Table(t, c) => t.per_connection[*c]
                .iter()
                .step_by(step)
                .map(|e| e.time_ns)
                .collect(),
            Times::Merged(v) => v.iter().step_by(step).copied().collect(),
        }
    }

    /// The times as one vector (a copy for a table's).
    pub fn to_vec(&self) -> Arc<Vec<u64>> {
        match self {
            Times::Table(t, c) => {
                Arc::new(t.per_connection[*c].iter().map(|e| e.time_ns).collect())
            }
            Times::Merged(v) => Arc::clone(v),
        }
    }

    /// The median period and the gaps longer than `factor` times it, longest first: see
    /// [`bagscope_ops::timing::gaps`].
    pub fn gaps(&self, factor: f64) -> (Option<u64>, Vec<bagscope_ops::timing::Gap>) {
        match self {
            Times::Table(t, c) => {
                let tab = &t.per_connection[*c];
                bagscope_ops::timing::gaps_by(tab.len(), |i| tab[i].time_ns, factor)
            }
            Times::Merged(v) => bagscope_ops::timing::gaps_by(v.len(), |i| v[i], factor),
        }
    }

    /// The median time between two messages: see [`bagscope_ops::timing::median_period`].
    pub fn median_period(&self) -> Option<u64> {
        match self {
            Times::Table(t, c) => {
                let tab = &t.per_connection[*c];
                bagscope_ops::timing::median_period_by(tab.len(), |i| tab[i].time_ns)
            }
            Times::Merged(v) => bagscope_ops::timing::median_period(v),
        }
    }
}

/// Maps a time to its histogram bin.
pub fn bin_of(s: &Summary, t: u64) -> usize {
    let (Some(a), Some(b)) = (s.start_ns, s.end_ns) else {
        return 0;
    };
    let span = (b - a).max(1) as f64;
    let x = (t.saturating_sub(a)) as f64 / span * HIST_BINS as f64;
    (x as usize).min(HIST_BINS - 1)
}

fn topic_of_connection(s: &Summary) -> Vec<usize> {
    let mut v = vec![0; s.connections.len()];
    for (ti, t) in s.topics.iter().enumerate() {
        for &c in &t.connections {
            if let Some(x) = v.get_mut(c) {
                *x = ti;
            }
        }
    }
    v
}

/// A density from the chunk infos alone: each chunk's counts spread over its time range.
fn chunk_histogram(s: &Summary) -> Histogram {
    let topic_of = topic_of_connection(s);
    let mut h = vec![vec![0u32; HIST_BINS]; s.topics.len()];
    for ch in &s.chunks {
        chunk_estimate(&mut h, s, &topic_of, ch, u32::saturating_add);
    }
    h
}

/// Adds (or with `u32::saturating_sub`, takes back) a chunk's messages per topic spread evenly
/// over its time range: the density the timeline shows before the chunk's index is read.
fn chunk_estimate(
    h: &mut Histogram,
    s: &Summary,
    topic_of: &[usize],
    ch: &bagscope_reader::Chunk,
    op: fn(u32, u32) -> u32,
) {
    let (b0, b1) = (
        bin_of(s, ch.start_ns),
        bin_of(s, ch.end_ns.max(ch.start_ns)),
    );
    let nb = (b1 - b0 + 1) as u64;
    for &(ci, n) in &ch.counts {
        let Some(&ti) = topic_of.get(ci as usize) else {
            continue;
        };
        let per = u64::from(n) / nb;
        let mut rest = u64::from(n) % nb;
        for x in &mut h[ti][b0..=b1] {
            let extra = u64::from(rest > 0);
            rest = rest.saturating_sub(1);
            *x = op(*x, u32::try_from(per + extra).unwrap_or(u32::MAX));
        }
    }
}

/// The density while the tables build: chunk `entries.chunk`'s estimate replaced by where its
/// messages really are, so the strip covers the whole recording from the first frame and
/// sharpens chunk by chunk.
fn refine_histogram(
    h: &mut Histogram,
    s: &Summary,
    topic_of: &[usize],
    entries: &bagscope_reader::storage::ChunkEntries,
) {
    if let Some(ch) = s.chunks.get(entries.chunk) {
        chunk_estimate(h, s, topic_of, ch, u32::saturating_sub);
    }
    for (ci, e) in &entries.entries {
        if let Some(&ti) = topic_of.get(*ci) {
            let b = bin_of(s, e.time_ns);
            h[ti][b] = h[ti][b].saturating_add(1);
        }
    }
}

/// A bag being opened and indexed on a named thread.
pub type Loader = Job<LoadEvent>;

/// Opens the recordings `parts` (or writes the demo bag first when there are none) and builds
/// their tables on a background thread. With `align`, the recordings are first shifted to
/// start together.
pub fn loader(
    parts: Vec<bagscope_reader::merge::Part>,
    align: bool,
    ctx: &egui::Context,
) -> Loader {
    Job::spawn("indexer", 64, ctx, move |h| load(parts, align, h))
        .unwrap_or_else(|e| Job::done(LoadEvent::Failed(e)))
}

fn load(mut parts: Vec<bagscope_reader::merge::Part>, align: bool, h: &Handle<LoadEvent>) {
    if parts.is_empty() {
        match bagscope_ops::demo::ensure_demo() {
            Ok(p) => parts.push(bagscope_reader::merge::Part {
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
        match bagscope_reader::merge::align_starts(&parts) {
            Ok(p) => parts = p,
            Err(e) => {
                h.send(LoadEvent::Failed(format!("cannot align the starts: {e}")));
                return;
            }
        }
    }
    let bag = match Bag::open_many(&parts) {
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
    let opened = LoadEvent::Opened {
        bag: bag.clone(),
        hist: first,
        parts,
        canonical,
        demo,
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
            let info =
                bagscope_ops::info::summary_text(&b, false).unwrap_or_else(|e| e.to_string());
            h.send(LoadEvent::Info(info));
        },
        LoadEvent::Info,
    );
    let topic_of = topic_of_connection(&s);
    let mut hist: Histogram = (*estimate).clone();
    let mut last = Instant::now();
    let r = bag.build_tables(&mut |p, entries| {
        refine_histogram(&mut hist, &s, &topic_of, entries);
        if last.elapsed() > Duration::from_millis(40) {
            last = Instant::now();
            // Progress may be dropped when the UI is behind: the next one supersedes it.
            if !h.offer(LoadEvent::Progress(p, Arc::new(hist.clone()))) {
                return false;
            }
        }
        !h.cancelled()
    });
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

/// Reads and decodes a message into an image (the image panels' and the thumbnails' workers).
pub fn decode_image(bag: &Bag, key: InspectKey) -> Result<bagscope_ops::image::Image, String> {
    let (plan, _) = bag.plan(key.conn).map_err(|e| e.to_string())?;
    let m = bag
        .message(key.conn, key.entry)
        .map_err(|e| e.to_string())?;
    bagscope_ops::image::decode_message(&plan, &m.data).map_err(|e| e.to_string())
}

/// A message to show in the inspector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct InspectKey {
    /// Connection index.
    pub conn: usize,
    /// Where it is.
    pub entry: IndexEntry,
}

/// A message read and decoded for the inspector.
pub struct Inspected {
    /// What was asked.
    pub key: InspectKey,
    /// Its bytes.
    pub data: Result<bagscope_reader::Bytes, String>,
    /// Its decoded tree, with the plan that decoded it.
    pub decoded: Result<(Arc<Plan>, Node), String>,
}

/// The inspector's worker: reads and decodes the message asked for on a named thread; only
/// the latest request matters, so older ones waiting in the queue are skipped.
pub fn inspector(bag: Bag, ctx: &egui::Context) -> Result<Service<InspectKey, Inspected>, String> {
    Service::spawn(
        "inspector",
        4,
        4,
        ctx,
        move |reqs: Requests<InspectKey>, h| {
            let plans: Vec<Result<Arc<Plan>, String>> = (0..bag.summary().connections.len())
                .map(|ci| bag.plan(ci).map(|(p, _)| p).map_err(|e| e.to_string()))
                .collect();
            while let Some(key) = reqs.latest() {
                // Detached from its chunk: the UI thread keeps the result and drops it.
                let data = bag.message(key.conn, key.entry).map(|m| m.data.detach());
                let decoded = match (&data, plans.get(key.conn)) {
                    (Ok(d), Some(Ok(p))) => p
                        .decode(d)
                        .map(|n| (Arc::clone(p), n))
                        .map_err(|e| e.to_string()),
                    (Err(e), _) => Err(e.to_string()),
                    (_, Some(Err(e))) => Err(e.clone()),
                    (_, None) => Err("no such connection".into()),
                };
                let out = Inspected {
                    key,
                    data: data.map_err(|e| e.to_string()),
                    decoded,
                };
                if !h.send(out) {
                    return;
                }
            }
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// While the tables build, the density starts as the chunks' estimate over the whole
    /// recording and ends, chunk by chunk, as the exact count of every message.
    #[test]
    fn density_refined_chunk_by_chunk_ends_exact() {
        let dir = std::env::temp_dir().join(format!("bagscope-hist-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("demo.bag");
        bagscope_ops::demo::write_demo(&path, 20).unwrap();
        let bag = Bag::open(&path).unwrap();
        let s = bag.summary().clone();
        assert!(s.chunks.len() > 3, "{} chunks", s.chunks.len());
        let topic_of = topic_of_connection(&s);
        let estimate = chunk_histogram(&s);
        let total = |h: &Histogram| h.iter().flatten().map(|&x| u64::from(x)).sum::<u64>();
        assert_eq!(total(&estimate), s.message_count);
        let mut hist = estimate.clone();
        let mut halfway = None;
        bag.build_tables(&mut |p, entries| {
            refine_histogram(&mut hist, &s, &topic_of, entries);
            // Every message counted once at each step: estimated or placed.
            assert_eq!(total(&hist), s.message_count);
            if p.chunks_done == p.chunks_total / 2 {
                halfway = Some(hist.clone());
            }
            true
        })
        .unwrap();
        let mut exact: Histogram = vec![vec![0u32; HIST_BINS]; s.topics.len()];
        let tables = bag.tables().unwrap();
        for (ci, t) in tables.per_connection.iter().enumerate() {
            for e in t {
                exact[topic_of[ci]][bin_of(&s, e.time_ns)] += 1;
            }
        }
        assert_eq!(hist, exact);
        let halfway = halfway.unwrap();
        assert_ne!(halfway, exact);
        assert_ne!(halfway, estimate);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
