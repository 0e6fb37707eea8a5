//! Field series: every value of a field path over the messages of a topic, read in parallel
//! over chunks and handed over in increments (one chunk's points at a time) so a plot can fill
//! in while it runs.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::bag::{Bag, IndexEntry};
use crate::encoding::{FieldPath, Value};
use crate::error::{Error, Result};
use crate::expr::{Getter, MsgPath, Vars};

mod expr;

pub use expr::{expr_series, Env};

/// One sample.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// Receive time of the message (ns).
    pub time_ns: u64,
    /// The value at the path.
    pub value: Value,
}

/// A series and what could not be read.
#[derive(Debug, Clone, Default)]
pub struct Series {
    /// Points in time order.
    pub points: Vec<Point>,
    /// Messages in which the path did not resolve (short message, index past the end).
    pub missing: u64,
    /// Problems: connections whose definition does not have the path, unreadable chunks.
    pub problems: Vec<String>,
}

/// One getter per connection (index into the summary's connections) of a topic.
pub type Extractors = Vec<(usize, Getter)>;

/// One path to read: parsed, the text it was parsed from (for errors' positions) and the
/// values of its `$variables`.
#[derive(Debug, Clone, Copy)]
pub struct Source<'a> {
    /// The path (its modifiers are not the reader's: see [`expr_series`]).
    pub path: &'a MsgPath,
    /// The expression it was parsed from.
    pub text: &'a str,
    /// Variables.
    pub vars: &'a Vars,
}

/// Compiles `path` for each connection of its topic; connections with other definitions each
/// get their own extractor. Fails only when no connection has the path.
pub fn compile(bag: &Bag, path: &FieldPath) -> Result<(Extractors, Vec<String>)> {
    let (mp, text) = (MsgPath::from(path), path.to_string());
    let vars = Vars::new();
    compile_source(
        bag,
        Source {
            path: &mp,
            text: &text,
            vars: &vars,
        },
    )
}

/// [`compile`] for a path of an expression.
pub fn compile_source(bag: &Bag, src: Source<'_>) -> Result<(Extractors, Vec<String>)> {
    // Connections only: the same before the rows of a recording are read.
    let s = bag.quick_summary();
    let topic = topic_of(s, &src.path.topic)?;
    let mut out = Vec::new();
    let mut problems = Vec::new();
    let mut first: Option<Error> = None;
    for &ci in &topic.connections {
        let c = &s.connections[ci];
        let r = bag.plan(ci).map_err(Error::from).and_then(|(p, _)| {
            crate::expr::compile(&p, src.path, src.vars, src.text).map_err(Error::from)
        });
        match r {
            Ok(e) => out.push((ci, e)),
            Err(e) => {
                problems.push(format!("{} on connection {}: {e}", src.text, c.id));
                first.get_or_insert(e);
            }
        }
    }
    if out.is_empty() {
        // One connection (the usual case): its error as it is, pointing into the text.
        if let (Some(e), 1) = (first, problems.len()) {
            return Err(e);
        }
        return Err(Error::Invalid(problems.join("; ")));
    }
    Ok((out, problems))
}

/// The topic named `topic`.
fn topic_of<'a>(s: &'a crate::Summary, topic: &str) -> Result<&'a crate::storage::Topic> {
    if topic.is_empty() {
        return Err(Error::Invalid(
            "the path names no topic: start it with one (/topic.field)".into(),
        ));
    }
    s.topic(topic)
        .ok_or_else(|| Error::NotFound(format!("no topic {topic:?} in the bag")))
}

/// `paths` as sources (owned parts in `keep`).
fn owned_sources(paths: &[FieldPath]) -> Vec<(MsgPath, String)> {
    paths
        .iter()
        .map(|p| (MsgPath::from(p), p.to_string()))
        .collect()
}

/// Sources borrowing `owned`.
fn sources<'a>(owned: &'a [(MsgPath, String)], vars: &'a Vars) -> Vec<Source<'a>> {
    owned
        .iter()
        .map(|(path, text)| Source { path, text, vars })
        .collect()
}

/// Reads the series of `path` within `[start_ns, end_ns)` on `threads` threads; `on_part` gets
/// each chunk's points (in time order within the chunk) as soon as they are read. Setting
/// `cancel` stops it early (the points so far are returned).
pub fn field_series(
    bag: &Bag,
    path: &FieldPath,
    start_ns: Option<u64>,
    end_ns: Option<u64>,
    threads: usize,
    cancel: &AtomicBool,
    on_part: &(dyn Fn(&[Point]) + Sync),
) -> Result<Series> {
    let owned = owned_sources(std::slice::from_ref(path));
    let vars = Vars::new();
    let mut v = series_pass(
        bag,
        &sources(&owned, &vars),
        (start_ns, end_ns),
        threads,
        cancel,
        &|_, pts| on_part(pts),
    )?;
    Ok(v.pop().unwrap_or_default())
}

/// The series of several paths in one pass over the chunks (each chunk read and decompressed
/// once for all of them, where a pass per path read it once per path), in the order of
/// `paths`.
pub fn field_series_many(
    bag: &Bag,
    paths: &[FieldPath],
    start_ns: Option<u64>,
    end_ns: Option<u64>,
    threads: usize,
    cancel: &AtomicBool,
) -> Result<Vec<Series>> {
    let owned = owned_sources(paths);
    let vars = Vars::new();
    series_pass(
        bag,
        &sources(&owned, &vars),
        (start_ns, end_ns),
        threads,
        cancel,
        &|_, _| {},
    )
}

/// A path's points, a part a chunk: (chunk, its points).
type ChunkParts = Vec<(usize, Vec<Point>)>;

/// One extractor per (path, connection): (path index, connection, extractor).
type PathExtractors = Vec<(usize, usize, Getter)>;

/// The extractors of `paths`, each path's problems, and the filter of their connections in
/// `[start_ns, end_ns)`.
fn extractors_for(
    bag: &Bag,
    paths: &[Source<'_>],
    start_ns: Option<u64>,
    end_ns: Option<u64>,
) -> Result<(PathExtractors, Vec<Vec<String>>, crate::Filter)> {
    let mut extractors: PathExtractors = Vec::new();
    let mut problems: Vec<Vec<String>> = Vec::with_capacity(paths.len());
    for (pi, path) in paths.iter().enumerate() {
        let (x, p) = compile_source(bag, *path)?;
        extractors.extend(x.into_iter().map(|(ci, e)| (pi, ci, e)));
        problems.push(p);
    }
    let conns = extractors.iter().map(|(_, ci, _)| *ci).collect();
    Ok((extractors, problems, filter_of(conns, start_ns, end_ns)))
}

/// The filter of connections `conns` (in any order, repeated or not) in `[start_ns, end_ns)`.
fn filter_of(mut conns: Vec<usize>, start_ns: Option<u64>, end_ns: Option<u64>) -> crate::Filter {
    conns.sort_unstable();
    conns.dedup();
    crate::Filter {
        connections: Some(conns),
        start_ns,
        end_ns,
    }
}

/// A time window's messages in time order, read without the recording's tables.
enum InOrder {
    /// Rows of a rosbag2 SQLite recording.
    Rows(Box<dyn Iterator<Item = Result<crate::Message>>>),
    /// MCAP chunks read as a stream: each message lent from its chunk, not counted out.
    Stream(Box<crate::bag::iter::Messages>),
}

impl InOrder {
    /// Each message (its connection, time and bytes), or the error in its place, to `f`.
    fn for_each(self, mut f: impl FnMut(Result<(usize, u64, &[u8])>) -> Result<()>) -> Result<()> {
        match self {
            InOrder::Rows(rows) => {
                for m in rows {
                    match m {
                        Ok(m) => f(Ok((m.conn, m.time_ns, &m.data)))?,
                        Err(e) => f(Err(e))?,
                    }
                }
            }
            InOrder::Stream(mut s) => {
                while let Some(m) = s.next_ref() {
                    f(m.map(|m| (m.conn, m.time_ns, m.data)))?;
                }
            }
        }
        Ok(())
    }
}

/// The messages of `filter`, a time window, in time order without the recording's tables,
/// where the storage gives them so; `None` otherwise.
fn in_time_order(bag: &Bag, filter: &crate::Filter, threads: usize) -> Option<InOrder> {
    // A time window of a rosbag2 SQLite recording whose rows are not read yet: its rows
    // through the database's timestamp index, none other read.
    if let Some(rows) = bag.sqlite_window(filter) {
        return Some(InOrder::Rows(Box::new(rows)));
    }
    // A time window of an MCAP recording whose chunks follow each other in time: the chunks
    // it touches, decompressed ahead, and no message index read.
    let read_ahead = bag.reader_threads(threads.max(1));
    crate::bag::iter::Messages::window_stream(bag, filter, read_ahead)
        .map(|m| InOrder::Stream(Box::new(m)))
}

/// What receives a row: its time and each path's value there, if it has one.
pub type OnRow<'a> = dyn FnMut(u64, &[Option<Value>]) -> Result<()> + 'a;

/// What [`rows_in_time_order`] found of each path (by its index in `paths`).
#[derive(Debug, Clone, Default)]
pub struct RowsRead {
    /// Messages in which the path did not resolve.
    pub missing: Vec<u64>,
    /// Problems: connections whose definition does not have the path, unreadable messages.
    pub problems: Vec<Vec<String>>,
}

/// The rows [`merge_rows`] makes of the series of `paths` in `[start_ns, end_ns)`, handed to
/// `on_row` as the messages are read, where the recording gives a window's messages in time
/// order (see [`field_series_many`]): no series is kept, and the rows are written while the
/// read-ahead threads read on. `None` where it does not (read the series, then merge them).
pub fn rows_in_time_order(
    bag: &Bag,
    paths: &[FieldPath],
    (start_ns, end_ns): (Option<u64>, Option<u64>),
    threads: usize,
    cancel: &AtomicBool,
    on_row: &mut OnRow<'_>,
) -> Result<Option<RowsRead>> {
    let owned = owned_sources(paths);
    let vars = Vars::new();
    rows_in_time_order_of(
        bag,
        &sources(&owned, &vars),
        (start_ns, end_ns),
        threads,
        cancel,
        on_row,
    )
}

/// [`rows_in_time_order`] of the paths of expressions.
pub fn rows_in_time_order_of(
    bag: &Bag,
    paths: &[Source<'_>],
    (start_ns, end_ns): (Option<u64>, Option<u64>),
    threads: usize,
    cancel: &AtomicBool,
    on_row: &mut OnRow<'_>,
) -> Result<Option<RowsRead>> {
    if start_ns.is_none() && end_ns.is_none() {
        return Ok(None);
    }
    // The window is read ahead while the paths are compiled (their definitions parsed): every
    // connection of the paths' topics, those whose definition lacks a path read and passed over
    // as `each_value` passes over any message no extractor takes.
    let mut conns = Vec::new();
    {
        let s = bag.quick_summary();
        for p in paths {
            conns.extend_from_slice(&topic_of(s, &p.path.topic)?.connections);
        }
    }
    let filter = filter_of(conns, start_ns, end_ns);
    let Some(msgs) = in_time_order(bag, &filter, threads) else {
        return Ok(None);
    };
    let (extractors, mut problems, _) = extractors_for(bag, paths, start_ns, end_ns)?;
    let n = paths.len();
    let mut missing = vec![0u64; n];
    // Each path's values at time `at`, not yet in a row: rows are made once a later time
    // comes (as merge_rows makes them: the k-th row at a time takes each path's k-th value).
    // With one path each value is a row of its own, handed on as it comes, nothing held.
    let mut pending: Vec<VecDeque<Value>> = vec![VecDeque::new(); n];
    let mut row: Vec<Option<Value>> = vec![None; n];
    let mut at: Option<u64> = None;
    each_value(
        msgs,
        &extractors,
        &mut problems,
        &mut missing,
        cancel,
        |pi, t, value| {
            if n == 1 {
                row[0] = Some(value);
                return on_row(t, &row);
            }
            if at != Some(t) {
                flush_rows(at, &mut pending, &mut row, on_row)?;
                at = Some(t);
            }
            pending[pi].push_back(value);
            Ok(())
        },
    )?;
    flush_rows(at, &mut pending, &mut row, on_row)?;
    Ok(Some(RowsRead { missing, problems }))
}

/// The rows of time `at` (if any) from each path's values held in `pending`, through `row`, to
/// `on_row`: the k-th row takes each path's k-th value.
fn flush_rows(
    at: Option<u64>,
    pending: &mut [VecDeque<Value>],
    row: &mut [Option<Value>],
    on_row: &mut OnRow<'_>,
) -> Result<()> {
    let Some(t) = at else { return Ok(()) };
    loop {
        let mut any = false;
        for (cell, q) in row.iter_mut().zip(pending.iter_mut()) {
            *cell = q.pop_front();
            any |= cell.is_some();
        }
        if !any {
            return Ok(());
        }
        on_row(t, row)?;
    }
}

/// Reads every path's series in one pass; `on_part` gets each chunk's points of each path
/// (its index in `paths`).
pub(crate) fn series_pass(
    bag: &Bag,
    paths: &[Source<'_>],
    (start_ns, end_ns): (Option<u64>, Option<u64>),
    threads: usize,
    cancel: &AtomicBool,
    on_part: &(dyn Fn(usize, &[Point]) + Sync),
) -> Result<Vec<Series>> {
    let (extractors, problems, filter) = extractors_for(bag, paths, start_ns, end_ns)?;
    if let Some(msgs) = in_time_order(bag, &filter, threads) {
        return series_of_rows(msgs, paths.len(), &extractors, problems, cancel, on_part);
    }
    let conns = filter.connections.clone().unwrap_or_default();
    // (Rows not read yet, of a rosbag2 SQLite recording: these connections' are kept as the
    // scan passes them, and given back by read_chunk_for.)
    // A window of an indexed recording reads the indexes of its chunks only.
    let tables = bag.tables_for(&filter)?;
    let s = bag.summary();
    let lo = start_ns.unwrap_or(0);
    let hi = end_ns.unwrap_or(u64::MAX);
    // For each chunk, the (extractor, entry) pairs it holds.
    let mut per_chunk: Vec<Vec<(usize, IndexEntry)>> = vec![Vec::new(); s.chunks.len()];
    for (xi, (_, ci, _)) in extractors.iter().enumerate() {
        let Some(t) = tables.per_connection.get(*ci) else {
            continue;
        };
        let from = t.partition_point(|e| e.time_ns < lo);
        for e in &t[from..] {
            if e.time_ns >= hi {
                break;
            }
            if let Some(v) = per_chunk.get_mut(e.chunk as usize) {
                v.push((xi, *e));
            }
        }
    }
    let work: Vec<usize> = (0..per_chunk.len())
        .filter(|&i| !per_chunk[i].is_empty())
        .collect();
    let next = AtomicUsize::new(0);
    let missing: Vec<AtomicUsize> = paths.iter().map(|_| AtomicUsize::new(0)).collect();
    // Per path, each chunk's points.
    // (Each with its chunk: put in chunk order after, so messages of one time keep the
    // recording's order whatever thread read them first.)
    let all: Vec<Mutex<ChunkParts>> = paths.iter().map(|_| Mutex::new(Vec::new())).collect();
    // Chunks that did not read (every path's problem) and messages that did not (their path's).
    let errs: Mutex<Vec<(Option<usize>, String)>> = Mutex::new(Vec::new());
    let run = || loop {
        if cancel.load(Ordering::Relaxed) {
            break;
        }
        let k = next.fetch_add(1, Ordering::Relaxed);
        let Some(&chunk) = work.get(k) else {
            break;
        };
        let entries = &per_chunk[chunk];
        let buf = if !bag.chunk_is_buffered(chunk as u32) {
            None
        } else {
            match bag.read_chunk_for(chunk, &conns) {
                Ok(b) => Some(Arc::new(b)),
                Err(e) => {
                    if let Ok(mut v) = errs.lock() {
                        v.push((None, e.to_string()));
                    }
                    continue;
                }
            }
        };
        let mut pts: Vec<Vec<Point>> = paths.iter().map(|_| Vec::new()).collect();
        let mut miss = vec![0usize; paths.len()];
        let mut vals = Vec::new();
        for &(xi, e) in entries {
            let (pi, ci, ex) = &extractors[xi];
            let m = match &buf {
                Some(b) => bag.message_in_buffer(Arc::clone(b), *ci, e),
                None => bag.message(*ci, e),
            };
            match m.map(|m| {
                vals.clear();
                ex.values(&m.data, &mut vals);
            }) {
                Ok(()) if vals.is_empty() => miss[*pi] += usize::from(!ex.filters()),
                Ok(()) => pts[*pi].extend(vals.drain(..).map(|value| Point {
                    time_ns: e.time_ns,
                    value,
                })),
                Err(err) => {
                    miss[*pi] += 1;
                    if let Ok(mut v) = errs.lock() {
                        if v.len() < 100 {
                            v.push((Some(*pi), err.to_string()));
                        }
                    }
                }
            }
        }
        for (pi, mut p) in pts.into_iter().enumerate() {
            missing[pi].fetch_add(miss[pi], Ordering::Relaxed);
            if p.is_empty() {
                continue;
            }
            // (Stable: the values of one message keep their order.)
            p.sort_by_key(|p| p.time_ns);
            on_part(pi, &p);
            if let Ok(mut a) = all[pi].lock() {
                a.push((chunk, p));
            }
        }
    };
    let threads = if threads <= 1 {
        threads
    } else {
        bag.reader_threads(threads)
    };
    if threads <= 1 {
        // On the calling thread (the single-threaded mode).
        run();
    } else {
        std::thread::scope(|sc| {
            for _ in 0..threads.min(work.len().max(1)) {
                sc.spawn(run);
            }
        });
    }
    let errs = errs.into_inner().unwrap_or_default();
    Ok(all
        .into_iter()
        .zip(missing)
        .zip(problems)
        .enumerate()
        .map(|(pi, ((parts, miss), mut problems))| {
            let mut parts = parts.into_inner().unwrap_or_default();
            parts.sort_unstable_by_key(|(chunk, _)| *chunk);
            let mut points: Vec<Point> = parts.into_iter().flat_map(|(_, p)| p).collect();
            points.sort_by_key(|p| p.time_ns);
            problems.extend(
                errs.iter()
                    .filter(|(p, _)| p.is_none_or(|p| p == pi))
                    .map(|(_, e)| e.clone()),
            );
            Series {
                points,
                missing: miss.into_inner() as u64,
                problems,
            }
        })
        .collect())
}

/// Each value of each path (its index, the message's time, the value) of messages read in
/// time order, to `f`; a message without the path counts in `missing`, one that does not read
/// is every path's problem (as a chunk that does not is).
fn each_value(
    msgs: InOrder,
    extractors: &[(usize, usize, Getter)],
    problems: &mut [Vec<String>],
    missing: &mut [u64],
    cancel: &AtomicBool,
    mut f: impl FnMut(usize, u64, Value) -> Result<()>,
) -> Result<()> {
    let mut vals = Vec::new();
    msgs.for_each(|m| {
        if cancel.load(Ordering::Relaxed) {
            return Err(Error::Cancelled);
        }
        let (conn, time_ns, data) = match m {
            Ok(m) => m,
            Err(e) => {
                for p in problems.iter_mut() {
                    p.push(e.to_string());
                }
                return Ok(());
            }
        };
        for (pi, ci, ex) in extractors {
            if *ci != conn {
                continue;
            }
            vals.clear();
            ex.values(data, &mut vals);
            if vals.is_empty() && !ex.filters() {
                missing[*pi] += 1;
            }
            for value in vals.drain(..) {
                f(*pi, time_ns, value)?;
            }
        }
        Ok(())
    })
}

/// The series of `paths` (`npaths` of them) from messages read in time order.
fn series_of_rows(
    rows: InOrder,
    npaths: usize,
    extractors: &[(usize, usize, Getter)],
    mut problems: Vec<Vec<String>>,
    cancel: &AtomicBool,
    on_part: &(dyn Fn(usize, &[Point]) + Sync),
) -> Result<Vec<Series>> {
    let mut points: Vec<Vec<Point>> = vec![Vec::new(); npaths];
    let mut missing = vec![0u64; npaths];
    each_value(
        rows,
        extractors,
        &mut problems,
        &mut missing,
        cancel,
        |pi, time_ns, value| {
            points[pi].push(Point { time_ns, value });
            Ok(())
        },
    )?;
    for (pi, p) in points.iter().enumerate() {
        if !p.is_empty() {
            on_part(pi, p);
        }
    }
    Ok(points
        .into_iter()
        .zip(missing)
        .zip(problems)
        .map(|((points, missing), problems)| Series {
            points,
            missing,
            problems,
        })
        .collect())
}

/// Rows at the union of the series' times: each row is a time and, per series, the value at
/// that time if it has one. Equal times within a series give one row each.
pub fn merge_rows<'a>(
    series: &'a [&'a [Point]],
) -> impl Iterator<Item = (u64, Vec<Option<&'a Value>>)> + 'a {
    let mut heads = vec![0usize; series.len()];
    std::iter::from_fn(move || {
        let t = series
            .iter()
            .zip(&heads)
            .filter_map(|(s, &h)| s.get(h).map(|p| p.time_ns))
            .min()?;
        let row = series
            .iter()
            .zip(heads.iter_mut())
            .map(|(s, h)| match s.get(*h) {
                Some(p) if p.time_ns == t => {
                    *h += 1;
                    Some(&p.value)
                }
                _ => None,
            })
            .collect();
        Some((t, row))
    })
}
