//! Field series: every value of a field path over the messages of a topic, read in parallel
//! over chunks and handed over in increments (one chunk's points at a time) so a plot can fill
//! in while it runs.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::bag::{Bag, IndexEntry};
use crate::encoding::{Extractor, FieldPath, Value};
use crate::error::{Error, Result};

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

/// One extractor per connection (index into the summary's connections) of a topic.
pub type Extractors = Vec<(usize, Extractor)>;

/// Compiles `path` for each connection of its topic; connections with other definitions each
/// get their own extractor. Fails only when no connection has the path.
pub fn compile(bag: &Bag, path: &FieldPath) -> Result<(Extractors, Vec<String>)> {
    // Connections only: the same before the rows of a recording are read.
    let s = bag.quick_summary();
    let topic = s
        .topic(&path.topic)
        .ok_or_else(|| Error::NotFound(format!("no topic {:?} in the bag", path.topic)))?;
    let mut out = Vec::new();
    let mut problems = Vec::new();
    for &ci in &topic.connections {
        let c = &s.connections[ci];
        let r = bag
            .plan(ci)
            .map_err(Error::from)
            .and_then(|(p, _)| Extractor::new(&p, &path.segments).map_err(Error::from));
        match r {
            Ok(e) => out.push((ci, e)),
            Err(e) => problems.push(format!("{path} on connection {}: {e}", c.id)),
        }
    }
    if out.is_empty() {
        return Err(Error::Invalid(problems.join("; ")));
    }
    Ok((out, problems))
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
    let (extractors, mut problems) = compile(bag, path)?;
    let conns: Vec<usize> = extractors.iter().map(|(ci, _)| *ci).collect();
    // (Rows not read yet, of a rosbag2 SQLite recording: these connections' are kept as the
    // scan passes them, and given back by read_chunk_for.)
    let tables = bag.tables_for(&crate::Filter {
        connections: Some(conns.clone()),
        ..Default::default()
    })?;
    let s = bag.summary();
    let lo = start_ns.unwrap_or(0);
    let hi = end_ns.unwrap_or(u64::MAX);
    // For each chunk, the (extractor, entry) pairs it holds.
    let mut per_chunk: Vec<Vec<(usize, IndexEntry)>> = vec![Vec::new(); s.chunks.len()];
    for (xi, (ci, _)) in extractors.iter().enumerate() {
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
    let missing = AtomicUsize::new(0);
    let all: Mutex<Vec<Vec<Point>>> = Mutex::new(Vec::new());
    let errs: Mutex<Vec<String>> = Mutex::new(Vec::new());
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
                        v.push(e.to_string());
                    }
                    continue;
                }
            }
        };
        let mut pts = Vec::with_capacity(entries.len());
        let mut miss = 0;
        for &(xi, e) in entries {
            let (ci, ex) = &extractors[xi];
            let m = match &buf {
                Some(b) => bag.message_in_buffer(Arc::clone(b), *ci, e),
                None => bag.message(*ci, e),
            };
            match m.map(|m| ex.extract(&m.data)) {
                Ok(Some(value)) => pts.push(Point {
                    time_ns: e.time_ns,
                    value,
                }),
                Ok(None) => miss += 1,
                Err(err) => {
                    miss += 1;
                    if let Ok(mut v) = errs.lock() {
                        if v.len() < 100 {
                            v.push(err.to_string());
                        }
                    }
                }
            }
        }
        pts.sort_by_key(|p| p.time_ns);
        missing.fetch_add(miss, Ordering::Relaxed);
        on_part(&pts);
        if let Ok(mut a) = all.lock() {
            a.push(pts);
        }
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
    let mut points: Vec<Point> = all
        .into_inner()
        .unwrap_or_default()
        .into_iter()
        .flatten()
        .collect();
    points.sort_by_key(|p| p.time_ns);
    problems.extend(errs.into_inner().unwrap_or_default());
    Ok(Series {
        points,
        missing: missing.into_inner() as u64,
        problems,
    })
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
