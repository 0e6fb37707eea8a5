//! A catalog of many recordings: every recording found under some directories, recognised by
//! content, as two Parquet tables a query engine reads — `recordings` (one row each: what
//! `info --json` says of it, its log messages by severity, its metadata, whether it is damaged)
//! and `topics` (one row per recording and topic: type, encoding, count, rates, gaps, where the
//! definition came from).
//!
//! Reads what the recording's index and summary hold (and its log topics' messages for the
//! severity counts), on every core. Incremental: a recording whose path, size and modification
//! time are those of a row of the catalog already in the output directory is taken from it, not
//! read again. A recording that does not open, or is damaged, is a row that says so.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::UNIX_EPOCH;

use bagscope_reader::bag::Bag;
use bagscope_reader::error::{Error, Result};

pub mod expect;
pub(crate) mod table;

use table::{read_previous, recordings_batch, topics_batch, write_parquet};

/// A recording found by the walk: where, how big, when last changed.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Found {
    /// The file, or the rosbag2 directory.
    pub path: PathBuf,
    /// Bytes (a directory: of its files).
    pub size: u64,
    /// Modification time in ns since the epoch (a directory: its newest file's).
    pub mtime_ns: i64,
    /// A remote recording's entity tag (a prefix: its objects' tags joined), which changes
    /// whenever it does.
    pub etag: Option<String>,
}

/// File endings of recordings: a file with one of these that does not open is a damaged
/// recording (a row saying so); any other file is a recording only if its content says so.
const ENDINGS: [&str; 6] = ["bag", "mcap", "db3", "zstd", "active", "orig"];

/// Whether `dir` is one rosbag2 recording: a `metadata.yaml`, or (as rosbag2 leaves a split
/// recording whose metadata was lost) only storage files `NAME_0.db3`, `NAME_1.db3`, ... of one
/// name (`.mcap`, `.zstd` too), and no other recording or folder.
fn is_rosbag2_dir(dir: &Path) -> bool {
    if dir.join("metadata.yaml").is_file() {
        return true;
    }
    let mut names = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            return false;
        }
        let name = e.file_name().to_string_lossy().into_owned();
        let stem = name.trim_end_matches(".zstd");
        let storage = stem.ends_with(".db3") || stem.ends_with(".mcap");
        if !storage
            && !name.ends_with("-wal")
            && !name.ends_with("-shm")
            && looks_like_recording(&p)
        {
            return false;
        }
        names.push(name);
    }
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    is_split_names(&names)
}

fn stat(p: &Path) -> (u64, i64) {
    let meta = std::fs::metadata(p).ok();
    let size = meta.as_ref().map_or(0, |m| m.len());
    let mtime = meta
        .and_then(|m| m.modified().ok())
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
    (size, mtime)
}

fn dir_stat(dir: &Path) -> (u64, i64) {
    let mut size = 0;
    let mut mtime = 0;
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let (s, m) = stat(&e.path());
        size += s;
        mtime = mtime.max(m);
    }
    (size, mtime)
}

/// Whether a file is a recording by its first bytes (or its ending, to list damaged ones).
fn looks_like_recording(p: &Path) -> bool {
    let ending = p
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| ENDINGS.contains(&e));
    if ending {
        return true;
    }
    let mut head = [0u8; 16];
    let n = File::open(p)
        .and_then(|mut f| std::io::Read::read(&mut f, &mut head))
        .unwrap_or(0);
    starts_like_recording(&head[..n])
}

/// Whether a file's first bytes are those of a recording.
fn starts_like_recording(h: &[u8]) -> bool {
    h.starts_with(b"#ROSBAG")
        || h.starts_with(b"#ROSRECORD")
        || h.starts_with(b"\x89MCAP")
        || h.starts_with(b"SQLite format 3\0")
}

/// Every recording under `roots` (files and directories), sorted by path; a rosbag2
/// directory is one recording, not its storage files.
pub fn find(roots: &[PathBuf]) -> Vec<Found> {
    let mut out = Vec::new();
    let mut stack: Vec<PathBuf> = Vec::new();
    for r in roots {
        #[cfg(feature = "remote")]
        if bagscope_reader::storage::remote::is_url(r) {
            out.extend(find_remote(&r.to_string_lossy()));
            continue;
        }
        stack.push(r.clone());
    }
    stack.reverse();
    while let Some(p) = stack.pop() {
        if p.is_dir() {
            let whole = is_rosbag2_dir(&p);
            let mut children: Vec<PathBuf> = std::fs::read_dir(&p)
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path())
                // A rosbag2 directory's files are its own; a folder in it is looked into.
                .filter(|c| !whole || c.is_dir())
                .collect();
            if whole {
                let (size, mtime_ns) = dir_stat(&p);
                out.push(Found {
                    path: p,
                    size,
                    mtime_ns,
                    etag: None,
                });
            }
            children.sort();
            stack.extend(children.into_iter().rev());
        } else if p.is_file() && looks_like_recording(&p) {
            // SQLite's side files belong to their database.
            let name = p.file_name().map(|n| n.to_string_lossy().into_owned());
            if name.is_some_and(|n| n.ends_with("-wal") || n.ends_with("-shm")) {
                continue;
            }
            let (size, mtime_ns) = stat(&p);
            out.push(Found {
                path: p,
                size,
                mtime_ns,
                etag: None,
            });
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out.dedup_by(|a, b| a.path == b.path);
    out
}

/// The recordings at or under a remote location: the object itself, or (a prefix) every
/// rosbag2 recording (a folder with `metadata.yaml`, or of one split recording's storage files)
/// and every other object that is a recording by its ending or its first bytes. A plain HTTP
/// location cannot be listed: it is one recording. A location that cannot be listed is a
/// row that says why.
#[cfg(feature = "remote")]
fn find_remote(url: &str) -> Vec<Found> {
    use bagscope_reader::storage::remote;
    let one = |url: &str, h: Option<&remote::Head>| Found {
        path: PathBuf::from(url),
        size: h.map_or(0, |h| h.size),
        mtime_ns: h.map_or(0, |h| i64::try_from(h.mtime_ns).unwrap_or(i64::MAX)),
        etag: h.map(|h| h.etag.clone()),
    };
    if let Ok(h) = remote::head(url) {
        return vec![one(url, Some(&h))];
    }
    if remote::is_http(url) {
        return vec![one(url, None)];
    }
    let base = url.trim_end_matches('/');
    let Ok(objects) = remote::list(base) else {
        return vec![one(url, None)];
    };
    // Objects by folder (relative to the prefix).
    let mut folders: BTreeMap<String, Vec<(String, &remote::Head)>> = BTreeMap::new();
    for (u, h) in &objects {
        let rel = u[base.len()..].trim_start_matches('/');
        let (dir, name) = rel.rsplit_once('/').unwrap_or(("", rel));
        folders
            .entry(dir.to_string())
            .or_default()
            .push((name.to_string(), h));
    }
    let mut out = Vec::new();
    for (dir, files) in &folders {
        let dir_url = if dir.is_empty() {
            base.to_string()
        } else {
            format!("{base}/{dir}")
        };
        let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
        let whole = names.contains(&"metadata.yaml") || is_split_names(&names);
        if whole {
            let mut size = 0;
            let mut mtime = 0;
            let mut tags = Vec::new();
            for (n, h) in files {
                size += h.size;
                mtime = mtime.max(h.mtime_ns);
                tags.push(format!("{n}={}", h.etag));
            }
            out.push(Found {
                path: PathBuf::from(dir_url),
                size,
                mtime_ns: i64::try_from(mtime).unwrap_or(i64::MAX),
                etag: Some(tags.join(",")),
            });
            continue;
        }
        for (n, h) in files {
            if n.ends_with("-wal") || n.ends_with("-shm") {
                continue;
            }
            let u = format!("{dir_url}/{n}");
            let ending = Path::new(n)
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| ENDINGS.contains(&e));
            // The listing gave its size and version: its first bytes are the one request.
            let by_content = || {
                remote::RemoteFile::open_listed(&u, (*h).clone())
                    .and_then(|f| {
                        let mut b = Vec::new();
                        f.read_at_into(0, 16, &mut b)?;
                        Ok(b)
                    })
                    .is_ok_and(|h| starts_like_recording(&h))
            };
            if ending || (h.size > 0 && by_content()) {
                out.push(one(&u, Some(h)));
            }
        }
    }
    out
}

/// Whether the names of one folder are those of a split rosbag2 recording whose metadata was
/// lost: `NAME_0.db3`, `NAME_1.db3`, ... of one name (`.mcap`, `.zstd` too), and no other
/// recording.
fn is_split_names(names: &[&str]) -> bool {
    let mut stems = Vec::new();
    for name in names {
        let stem = name.trim_end_matches(".zstd");
        let Some(stem) = stem
            .strip_suffix(".db3")
            .or_else(|| stem.strip_suffix(".mcap"))
        else {
            let ending = Path::new(name)
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| ENDINGS.contains(&e));
            if ending {
                return false;
            }
            continue;
        };
        match stem.rsplit_once('_') {
            Some((base, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
                stems.push(base.to_string());
            }
            _ => return false,
        }
    }
    stems.len() >= 2 && stems.iter().all(|n| *n == stems[0])
}

/// One row of the `recordings` table.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RecordingRow {
    /// The path as found.
    pub path: String,
    /// Bytes of its storage files (`info`'s size).
    pub size: i64,
    /// Bytes of everything it is made of on disk (a rosbag2 directory's `metadata.yaml` too),
    /// and its modification time (ns since the epoch): what says it is unchanged.
    pub disk_bytes: i64,
    /// Modification time (ns since the epoch).
    pub mtime_ns: i64,
    /// A remote recording's entity tag (see [`Found::etag`]).
    pub etag: Option<String>,
    /// `2.0`, `1.2`, `mcap`, `rosbag2-sqlite3`, ... (`info`'s version); empty when it did not
    /// open.
    pub format: String,
    /// First and last message times, and the time between (ns).
    pub start_ns: Option<i64>,
    /// Last message time.
    pub end_ns: Option<i64>,
    /// From first to last message.
    pub duration_ns: i64,
    /// Messages.
    pub messages: i64,
    /// Topics.
    pub topics: i64,
    /// Connections.
    pub connections: i64,
    /// Chunks (ROS 1, MCAP).
    pub chunks: i64,
    /// Chunks by compression.
    pub compression: Vec<(String, String)>,
    /// Whether it has an index (or summary).
    pub indexed: bool,
    /// What the storage says of itself (`info`'s `storage`).
    pub storage: Vec<(String, String)>,
    /// MCAP metadata records and rosbag2 `custom_data`, as `name.key` → value.
    pub metadata: Vec<(String, String)>,
    /// Warnings given while opening (what was found wrong or recovered).
    pub warnings: Vec<String>,
    /// Damaged: it did not open, or opened with warnings.
    pub damaged: bool,
    /// Why it did not open.
    pub error: Option<String>,
    /// Log messages by severity: debug, info, warn, error, fatal.
    pub logs: [i64; 5],
    /// Diagnostic statuses by level: OK, WARN, ERROR, STALE.
    pub diagnostics: [i64; 4],
    /// Bookmarks kept in the recording (MCAP metadata records, its sidecar): `label @ +S s`.
    pub bookmarks: Vec<String>,
}

/// One row of the `topics` table.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TopicRow {
    /// The recording's path.
    pub path: String,
    /// The topic.
    pub topic: String,
    /// Its type.
    pub msgtype: String,
    /// Its encoding (`ros1`, `cdr`, `protobuf`, `json`).
    pub encoding: String,
    /// Messages.
    pub messages: i64,
    /// Connections.
    pub connections: i64,
    /// Messages per second over its own span.
    pub mean_rate_hz: Option<f64>,
    /// The median time between messages (s).
    pub median_period_s: Option<f64>,
    /// The longest time between messages (s).
    pub longest_gap_s: Option<f64>,
    /// Where the definition came from, or why there is none (`info`'s note).
    pub definition: String,
}

fn i64_of(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// The rows of one recording, reading what its index holds and its log topics.
pub fn read_one(f: &Found) -> (RecordingRow, Vec<TopicRow>) {
    let path = f.path.display().to_string();
    let mut row = RecordingRow {
        path: path.clone(),
        size: i64_of(f.size),
        disk_bytes: i64_of(f.size),
        mtime_ns: f.mtime_ns,
        etag: f.etag.clone(),
        ..Default::default()
    };
    let bag = match Bag::open(&f.path) {
        Ok(b) => b,
        Err(e) => {
            row.damaged = true;
            row.error = Some(e.to_string());
            return (row, Vec::new());
        }
    };
    match describe(&bag, &mut row) {
        Ok(topics) => (row, topics),
        Err(e) => {
            row.damaged = true;
            row.error = Some(e.to_string());
            (row, Vec::new())
        }
    }
}

fn describe(bag: &Bag, row: &mut RecordingRow) -> Result<Vec<TopicRow>> {
    let s = bag.summary();
    row.format = s.version.as_str().to_string();
    row.size = i64_of(s.file_size);
    row.start_ns = s.start_ns.map(i64_of);
    row.end_ns = s.end_ns.map(i64_of);
    row.duration_ns = i64_of(s.duration_ns());
    row.messages = i64_of(s.message_count);
    row.topics = s.topics.len() as i64;
    row.connections = s.connections.len() as i64;
    row.chunks = s.chunks.iter().filter(|c| c.kind.records_alone()).count() as i64;
    row.compression = bag
        .compression_counts()
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    row.indexed = s.indexed;
    row.storage = s
        .storage_facts
        .iter()
        .cloned()
        .collect::<BTreeMap<_, _>>()
        .into_iter()
        .collect();
    // A record written again under the same name (rosbag2 writes its `rosbag2` record at the
    // start and at the end) replaces the earlier one's keys: map keys are unique.
    let mut metadata: Vec<(String, String)> = Vec::new();
    for (name, kv) in &s.metadata {
        for (k, v) in kv {
            let key = format!("{name}.{k}");
            match metadata.iter_mut().find(|(x, _)| *x == key) {
                Some(slot) => slot.1 = v.clone(),
                None => metadata.push((key, v.clone())),
            }
        }
    }
    row.metadata = metadata;
    let tables = bag.tables()?;
    let mut topics = Vec::new();
    for t in &s.topics {
        let mut times: Vec<u64> = t
            .connections
            .iter()
            .filter_map(|&c| tables.per_connection.get(c))
            .flat_map(|v| v.iter().map(|e| e.time_ns))
            .collect();
        times.sort_unstable();
        let gaps: Vec<u64> = times.windows(2).map(|w| w[1] - w[0]).collect();
        let span = times.last().zip(times.first()).map(|(l, f)| l - f);
        let mut sorted = gaps.clone();
        sorted.sort_unstable();
        let c0 = t.connections[0];
        topics.push(TopicRow {
            path: row.path.clone(),
            topic: t.name.clone(),
            msgtype: t.datatype.clone(),
            encoding: s.connections[c0].encoding.clone(),
            messages: i64_of(t.message_count),
            connections: t.connections.len() as i64,
            mean_rate_hz: span
                .filter(|&d| d > 0)
                .map(|d| (times.len() - 1) as f64 / (d as f64 * 1e-9)),
            median_period_s: sorted.get(sorted.len() / 2).map(|&g| g as f64 * 1e-9),
            longest_gap_s: sorted.last().map(|&g| g as f64 * 1e-9),
            definition: crate::reports::info::type_note(bag, c0),
        });
    }
    let mut logs = [0i64; 5];
    let log_topics = crate::reports::log::log_topics(bag);
    if !log_topics.is_empty() {
        crate::reports::log::read_logs(bag, &log_topics, &AtomicBool::new(false), &mut |batch| {
            for l in batch {
                if let Some(i) = crate::reports::log::Level::ALL
                    .iter()
                    .position(|&x| x == l.level)
                {
                    logs[i] += 1;
                }
            }
            true
        })?;
    }
    row.logs = logs;
    let diag = crate::reports::diagnostics::diagnostic_topics(bag);
    if !diag.is_empty() {
        let d = crate::reports::diagnostics::read_diagnostics(bag, &diag, &AtomicBool::new(false))?;
        let c = d.counts();
        row.diagnostics = [c[0], c[1], c[2], c[3]].map(|n| n as i64);
    }
    let start = s.start_ns.unwrap_or(0);
    row.bookmarks = crate::bookmarks::read_bookmarks(bag)
        .0
        .iter()
        .map(|n| {
            let at = |t: u64| t.saturating_sub(start) as f64 / 1e9;
            match n.end_ns {
                Some(e) => format!("{} @ +{:.3}..+{:.3} s", n.label, at(n.start_ns), at(e)),
                None => format!("{} @ +{:.3} s", n.label, at(n.start_ns)),
            }
        })
        .collect();
    row.warnings = bag.warnings();
    row.damaged = !row.warnings.is_empty();
    Ok(topics)
}

/// What a catalog run did.
#[derive(Debug, Clone, Default)]
pub struct CatalogReport {
    /// Recordings found.
    pub recordings: usize,
    /// Of those, read (the others were unchanged since the catalog in the output directory).
    pub read: usize,
    /// Of those, damaged or not opened.
    pub damaged: usize,
    /// Topic rows.
    pub topics: usize,
}

/// Catalogs every recording under `roots` into `out` (`recordings.parquet`, `topics.parquet`),
/// on `threads` threads, calling `progress(done, total)` as recordings are read.
pub fn catalog(
    roots: &[PathBuf],
    out: &Path,
    threads: usize,
    progress: &(dyn Fn(usize, usize) + Sync),
) -> Result<CatalogReport> {
    std::fs::create_dir_all(out).map_err(|e| Error::Open {
        path: out.to_path_buf(),
        source: e,
    })?;
    let found = find(roots);
    let previous = read_previous(out);
    let mut rows: Vec<Option<(RecordingRow, Vec<TopicRow>)>> = found
        .iter()
        .map(|f| {
            previous
                .get(&(
                    f.path.display().to_string(),
                    i64_of(f.size),
                    f.mtime_ns,
                    f.etag.clone(),
                ))
                .cloned()
        })
        .collect();
    let todo: Vec<usize> = (0..found.len()).filter(|&i| rows[i].is_none()).collect();
    let read = crate::tables::in_parallel(&todo, threads, &|&i| read_one(&found[i]), progress)?;
    for (&i, r) in todo.iter().zip(read) {
        rows[i] = Some(r);
    }
    let rows: Vec<(RecordingRow, Vec<TopicRow>)> = rows.into_iter().flatten().collect();
    let recs: Vec<&RecordingRow> = rows.iter().map(|(r, _)| r).collect();
    let topics: Vec<&TopicRow> = rows.iter().flat_map(|(_, t)| t).collect();
    write_parquet(&out.join("recordings.parquet"), recordings_batch(&recs)?)?;
    write_parquet(&out.join("topics.parquet"), topics_batch(&topics)?)?;
    Ok(CatalogReport {
        recordings: recs.len(),
        read: todo.len(),
        damaged: recs.iter().filter(|r| r.damaged).count(),
        topics: topics.len(),
    })
}

/// The schema of the `recordings` table (for readers that want it without a file).
pub fn recordings_schema() -> Result<arrow_schema::SchemaRef> {
    Ok(recordings_batch(&[])?.schema())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;
