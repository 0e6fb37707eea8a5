//! Reading every message of every chunk on all cores and verifying every record against the
//! index: what `bagscope check` reports.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::bag::{Bag, IndexEntry};
use crate::error::{DefError, DefErrorKind, Result};

/// What a check found.
#[derive(Debug, Clone, Default)]
pub struct CheckReport {
    /// Chunks read.
    pub chunks: usize,
    /// Messages read.
    pub messages: u64,
    /// Bytes of message data.
    pub message_bytes: u64,
    /// Bytes of chunk data in the file.
    pub compressed_bytes: u64,
    /// Bytes of chunk data after decompression.
    pub uncompressed_bytes: u64,
    /// Every problem found, each with where.
    pub problems: Vec<String>,
}

fn digest(conn: usize, e: &IndexEntry) -> u64 {
    // splitmix64 of the entry: sums of these are equal (almost surely) only for equal sets.
    let mut z =
        (e.time_ns ^ (u64::from(e.offset) << 32 | conn as u64)).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A record's connection by its storage file and the id it carries: a table by id where the
/// ids are small (they are: MCAP's are 16 bits, ROS 1's count up), else a hash map. Hashed,
/// the lookup was a third of the work per message of a check besides decompression.
struct ConnLookup {
    dense: Vec<Vec<u32>>,
    sparse: std::collections::HashMap<(u32, u32), usize>,
}

impl ConnLookup {
    const DENSE_IDS: u32 = 1 << 16;

    fn new(s: &crate::Summary) -> ConnLookup {
        let mut l = ConnLookup {
            dense: Vec::new(),
            sparse: std::collections::HashMap::new(),
        };
        for (ci, c) in s.connections.iter().enumerate() {
            let (Ok(f), Ok(id), Ok(v)) = (
                usize::try_from(c.file),
                usize::try_from(c.id),
                u32::try_from(ci + 1),
            ) else {
                continue;
            };
            if c.id < Self::DENSE_IDS && c.file < Self::DENSE_IDS {
                if l.dense.len() <= f {
                    l.dense.resize(f + 1, Vec::new());
                }
                let ids = &mut l.dense[f];
                if ids.len() <= id {
                    ids.resize(id + 1, 0);
                }
                ids[id] = v;
            } else {
                l.sparse.insert((c.file, c.id), ci);
            }
        }
        l
    }

    /// The lookup of the records of one storage file (a chunk's: its table found once).
    fn in_file(&self, file: u32) -> FileLookup<'_> {
        FileLookup {
            dense: self.dense.get(file as usize).map_or(&[], Vec::as_slice),
            file,
            all: self,
        }
    }
}

/// A [`ConnLookup`] for the records of one storage file.
struct FileLookup<'a> {
    dense: &'a [u32],
    file: u32,
    all: &'a ConnLookup,
}

impl FileLookup<'_> {
    #[inline]
    fn get(&self, id: u32) -> Option<usize> {
        match self.dense.get(id as usize) {
            Some(&v) if v > 0 => Some(v as usize - 1),
            _ => self.all.sparse.get(&(self.file, id)).copied(),
        }
    }
}

/// A count and an order-free digest of the table entries of each of `chunks` chunks, the
/// connections shared out among `threads` threads (one pass over 5,000,000 entries on the
/// calling thread was a sixth of a whole check of a zstd MCAP file).
fn chunk_digests(tables: &crate::MessageTables, chunks: usize, threads: usize) -> Vec<(u64, u64)> {
    let part = |conns: &[Vec<IndexEntry>], first: usize| {
        let mut want: Vec<(u64, u64)> = vec![(0, 0); chunks];
        for (k, t) in conns.iter().enumerate() {
            for e in t {
                if let Some(w) = want.get_mut(e.chunk as usize) {
                    w.0 += 1;
                    w.1 = w.1.wrapping_add(digest(first + k, e));
                }
            }
        }
        want
    };
    let conns = &tables.per_connection;
    let total: usize = conns.iter().map(Vec::len).sum();
    if threads <= 1 || total < 100_000 {
        return part(conns, 0);
    }
    // Groups of connections with about the same number of entries each.
    let mut groups = Vec::with_capacity(threads);
    let (mut start, mut acc) = (0, 0);
    for (ci, t) in conns.iter().enumerate() {
        acc += t.len();
        if acc * threads >= total * (groups.len() + 1) && groups.len() + 1 < threads {
            groups.push(start..ci + 1);
            start = ci + 1;
        }
    }
    groups.push(start..conns.len());
    let parts: Vec<Vec<(u64, u64)>> = std::thread::scope(|sc| {
        let hs: Vec<_> = groups
            .into_iter()
            .map(|g| sc.spawn(move || part(&conns[g.clone()], g.start)))
            .collect();
        hs.into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect()
    });
    let mut want = vec![(0u64, 0u64); chunks];
    for p in parts {
        for (w, x) in want.iter_mut().zip(p) {
            w.0 += x.0;
            w.1 = w.1.wrapping_add(x.1);
        }
    }
    want
}

/// Calls `f(chunk index, uncompressed data)` for every chunk, on `threads` threads, in no
/// particular order. Errors reading a chunk are passed as `Err`. Each thread reads every
/// chunk it takes into the same buffers.
pub fn for_each_chunk_parallel(
    bag: &Bag,
    threads: usize,
    f: &(dyn Fn(usize, Result<&[u8]>) + Sync),
) {
    let n = bag.summary().chunks.len();
    let next = AtomicUsize::new(0);
    let work = || {
        let (mut buf, mut scratch) = (Vec::new(), Vec::new());
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= n {
                break;
            }
            match bag.decompress_chunk_reusing(i, std::mem::take(&mut buf), &mut scratch) {
                Ok(d) => {
                    f(i, Ok(&d));
                    buf = d;
                }
                Err(e) => f(i, Err(e)),
            }
        }
    };
    if threads <= 1 {
        // On the calling thread: no thread started (the single-threaded mode).
        work();
        return;
    }
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(work);
        }
    });
}

/// Like [`for_each_chunk_parallel`], handing over each chunk's data (no copy).
fn for_each_chunk_parallel_owned(
    bag: &Bag,
    threads: usize,
    f: &(dyn Fn(usize, Result<Vec<u8>>) + Sync),
) {
    let n = bag.summary().chunks.len();
    if threads <= 1 {
        for i in 0..n {
            f(i, bag.decompress_chunk(i));
        }
        return;
    }
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                f(i, bag.decompress_chunk(i));
            });
        }
    });
}

/// Per-message hook of a check: `(connection index, time, data)`, returning a problem if any.
pub type MessageCheck<'a> = dyn Fn(usize, u64, &[u8]) -> Option<String> + Sync + 'a;

/// Reads and verifies every record of every chunk; `per_message` may verify more (decoding).
pub fn check(
    bag: &Bag,
    threads: usize,
    per_message: Option<&MessageCheck<'_>>,
) -> Result<CheckReport> {
    let s = bag.summary();
    if bag.tables_if_built().is_none() {
        if let Some(own) = crate::storage::OwnIndexes::for_summary(s) {
            return check_by_own_indexes(bag, threads, per_message, &own);
        }
    }
    let tables = bag.tables()?;
    // A record's connection: by its storage file and the id it carries.
    let conn_index = ConnLookup::new(s);
    // A count and an order-free digest of the table entries of each chunk, to compare with
    // what the chunk really holds without keeping a copy of the tables.
    let want = chunk_digests(&tables, s.chunks.len(), threads);
    let report = Mutex::new(CheckReport {
        problems: s.warnings.iter().map(|w| format!("warning: {w}")).collect(),
        ..CheckReport::default()
    });
    let how = crate::storage::check_read(s);
    if how == crate::storage::CheckRead::OneByOne {
        // Format 1.2: no chunks; read every message through the tables.
        let mut r = report.into_inner().unwrap_or_default();
        for (ci, t) in tables.per_connection.iter().enumerate() {
            for e in t {
                match bag.message(ci, *e) {
                    Ok(m) => {
                        r.messages += 1;
                        r.message_bytes += m.data.len() as u64;
                        if let Some(p) = per_message.and_then(|f| f(ci, m.time_ns, &m.data)) {
                            r.problems.push(p);
                        }
                    }
                    Err(err) => r.problems.push(format!(
                        "message of {} at {}: {err}",
                        s.connections[ci].topic, e.time_ns
                    )),
                }
            }
        }
        r.uncompressed_bytes = s.file_size;
        r.compressed_bytes = s.file_size;
        return Ok(r);
    }
    // ROS 1 chunks and MCAP chunks (or stretches) are read record by record and compared
    // with the tables by a count and a digest per chunk; other storages (SQLite rows, the old
    // formats) through the tables.
    if how == crate::storage::CheckRead::Tables {
        return check_via_tables(bag, &tables, threads, per_message, report);
    }
    for_each_chunk_parallel(bag, threads, &|i, data| {
        let chunk = check_chunk(bag, i, data, Some(want[i]), &conn_index, per_message);
        add_chunk(bag, &report, i, chunk);
    });
    Ok(report.into_inner().unwrap_or_default())
}

/// A check of an MCAP recording whose tables are not built: each chunk is compared with its
/// own message indexes, read beside it on the same thread, so no table of the whole recording
/// is built first (5,000,000 entries took a quarter of a check).
fn check_by_own_indexes(
    bag: &Bag,
    threads: usize,
    per_message: Option<&MessageCheck<'_>>,
    own: &crate::storage::OwnIndexes,
) -> Result<CheckReport> {
    let s = bag.summary();
    let conn_index = ConnLookup::new(s);
    let report = Mutex::new(CheckReport {
        problems: s.warnings.iter().map(|w| format!("warning: {w}")).collect(),
        ..CheckReport::default()
    });
    let buffers = thread_local_buffers();
    for_each_chunk_parallel(bag, threads, &|i, data| {
        let ch = &s.chunks[i];
        let (mut warning, mut want) = (None, None);
        if data.is_ok() {
            buffers.with(|b| {
                let (region, entries) = &mut *b.borrow_mut();
                let idx = bag
                    .source(ch)
                    .map(|src| own.read(src, ch, i as u32, region, entries));
                match idx {
                    Ok(crate::storage::OwnIndex::Listed) => {
                        let mut w = (entries.len() as u64, 0u64);
                        for (ci, e) in entries.iter() {
                            w.1 = w.1.wrapping_add(digest(*ci, e));
                        }
                        want = Some(w);
                    }
                    Ok(crate::storage::OwnIndex::None) => {}
                    Ok(crate::storage::OwnIndex::Unusable(w)) => warning = Some(w),
                    Err(e) => warning = Some(e.to_string()),
                }
            });
        }
        let mut chunk = check_chunk(bag, i, data, want, &conn_index, per_message);
        if let Some(w) = warning {
            chunk.problems.insert(0, format!("warning: {w}"));
        }
        add_chunk(bag, &report, i, chunk);
    });
    Ok(report.into_inner().unwrap_or_default())
}

/// Each thread's buffers for a chunk's own index: its bytes and its entries.
type IndexBuffers = std::cell::RefCell<(Vec<u8>, Vec<(usize, IndexEntry)>)>;

fn thread_local_buffers() -> &'static std::thread::LocalKey<IndexBuffers> {
    thread_local! {
        static BUFFERS: IndexBuffers = const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
    }
    &BUFFERS
}

/// What one chunk's check found.
#[derive(Default)]
struct ChunkFound {
    problems: Vec<String>,
    messages: u64,
    bytes: u64,
}

/// Reads chunk `i`'s records (`data`), verifies each against the index (`want`: the count
/// and digest of the chunk's index entries; none where the records are the index) and hands
/// each message to `per_message`.
fn check_chunk(
    bag: &Bag,
    i: usize,
    data: Result<&[u8]>,
    want: Option<(u64, u64)>,
    conn_index: &ConnLookup,
    per_message: Option<&MessageCheck<'_>>,
) -> ChunkFound {
    let ch = &bag.summary().chunks[i];
    let mut out = ChunkFound::default();
    let data = match data {
        Err(e) => {
            out.problems.push(e.to_string());
            return out;
        }
        Ok(d) => d,
    };
    let mut found: (u64, u64) = (0, 0);
    let mut outside = 0u64;
    let problems = &mut out.problems;
    let (messages, bytes) = (&mut out.messages, &mut out.bytes);
    let conn_index = conn_index.in_file(ch.file);
    let on_message = |id: u32, e: IndexEntry, d: &[u8]| {
        let Some(ci) = conn_index.get(id) else {
            problems.push(format!(
                "message at byte {} of the chunk at byte {} names undefined connection {id}",
                e.offset, ch.pos
            ));
            return;
        };
        found.0 += 1;
        found.1 = found.1.wrapping_add(digest(
            ci,
            &IndexEntry {
                chunk: i as u32,
                ..e
            },
        ));
        if e.time_ns < ch.start_ns || e.time_ns > ch.end_ns {
            outside += 1;
        }
        *messages += 1;
        *bytes += d.len() as u64;
        if let Some(p) = per_message.and_then(|f| f(ci, e.time_ns, d)) {
            problems.push(p);
        }
    };
    let r = crate::storage::chunk_messages(ch, data, on_message);
    if let Err(e) = r {
        out.problems.push(e.to_string());
    }
    if outside > 0 {
        out.problems.push(format!(
            "chunk at byte {}: {outside} messages have times outside the chunk info's range {}..{}",
            ch.pos, ch.start_ns, ch.end_ns
        ));
    }
    if let Some(want) = want.filter(|&w| w != found) {
        if found.0 == want.0 {
            if let Some(k) = entries_at_connections(bag, i, data, found) {
                out.problems.push(format!(
                    "warning: chunk at byte {}: {k} index entries point at the connection record just before their message; read past it, as ROS's own reader does",
                    ch.pos
                ));
                return out;
            }
        }
        out.problems.push(format!(
            "chunk at byte {}: its records hold {} messages, the index lists {}{}",
            ch.pos,
            found.0,
            want.0,
            if found.0 == want.0 {
                " (at different places or times)"
            } else {
                ""
            }
        ));
    }
    out
}

/// How many of chunk `i`'s index entries point at the connection record before their message
/// (ROS 1), where with each such entry read past it (as ROS's reader and bagscope's read it)
/// the index lists exactly the messages the chunk holds (`found`: their count and digest);
/// `None` where that does not explain the difference.
fn entries_at_connections(bag: &Bag, i: usize, data: &[u8], found: (u64, u64)) -> Option<usize> {
    let ch = &bag.summary().chunks[i];
    if ch.kind != crate::storage::ChunkKind::Ros1 {
        return None;
    }
    let tables = bag.tables_if_built()?;
    let (mut resolved, mut moved) = ((0u64, 0u64), 0usize);
    for (ci, t) in tables.per_connection.iter().enumerate() {
        for e in t.iter().filter(|e| e.chunk as usize == i) {
            let (off, _, skipped) =
                crate::storage::ros1::message_at(data, ch.pos, e.offset as usize).ok()?;
            let offset = u32::try_from(off).ok()?;
            resolved.0 += 1;
            resolved.1 = resolved
                .1
                .wrapping_add(digest(ci, &IndexEntry { offset, ..*e }));
            moved += usize::from(skipped > 0);
        }
    }
    (resolved == found && moved > 0).then_some(moved)
}

/// Adds what chunk `i`'s check found to the report.
fn add_chunk(bag: &Bag, report: &Mutex<CheckReport>, i: usize, found: ChunkFound) {
    if let Ok(mut r) = report.lock() {
        r.chunks += 1;
        r.messages += found.messages;
        r.message_bytes += found.bytes;
        let (comp, unc) = bag
            .chunk_layout(i)
            .map_or((0, 0), |l| (l.data_len, u64::from(l.size)));
        r.compressed_bytes += comp;
        r.uncompressed_bytes += unc;
        r.problems.extend(found.problems);
    }
}

/// Storages other than ROS 1: every chunk (or row block) is read and every message the tables
/// list is sliced out of it and handed to `per_message`.
fn check_via_tables(
    bag: &Bag,
    tables: &crate::MessageTables,
    threads: usize,
    per_message: Option<&MessageCheck<'_>>,
    report: Mutex<CheckReport>,
) -> Result<CheckReport> {
    let s = bag.summary();
    let mut per_chunk: Vec<Vec<(usize, IndexEntry)>> = vec![Vec::new(); s.chunks.len()];
    for (ci, t) in tables.per_connection.iter().enumerate() {
        for e in t {
            if let Some(v) = per_chunk.get_mut(e.chunk as usize) {
                v.push((ci, *e));
            }
        }
    }
    for_each_chunk_parallel_owned(bag, threads, &|i, data| {
        let ch = &s.chunks[i];
        let mut problems = Vec::new();
        let (mut messages, mut bytes, mut outside) = (0u64, 0u64, 0u64);
        match data {
            Err(e) => problems.push(e.to_string()),
            Ok(data) => {
                let buf = std::sync::Arc::new(data);
                for &(ci, e) in &per_chunk[i] {
                    match bag.message_in_buffer(buf.clone(), ci, e) {
                        Ok(m) => {
                            messages += 1;
                            bytes += m.data.len() as u64;
                            if m.time_ns != e.time_ns {
                                problems.push(format!(
                                    "message of {} at {} is stamped {} in its record",
                                    s.connections[ci].topic, e.time_ns, m.time_ns
                                ));
                            }
                            if e.time_ns < ch.start_ns || e.time_ns > ch.end_ns {
                                outside += 1;
                            }
                            if let Some(p) = per_message.and_then(|f| f(ci, m.time_ns, &m.data)) {
                                problems.push(p);
                            }
                        }
                        Err(err) => problems.push(format!(
                            "message of {} at {}: {err}",
                            s.connections[ci].topic, e.time_ns
                        )),
                    }
                }
                if outside > 0 {
                    problems.push(format!(
                        "chunk at byte {}: {outside} messages have times outside its range {}..{}",
                        ch.pos, ch.start_ns, ch.end_ns
                    ));
                }
            }
        }
        if let Ok(mut r) = report.lock() {
            r.chunks += 1;
            r.messages += messages;
            r.message_bytes += bytes;
            let (comp, unc) = bag
                .chunk_layout(i)
                .map_or((0, 0), |l| (l.data_len, u64::from(l.size)));
            r.compressed_bytes += comp;
            r.uncompressed_bytes += unc;
            r.problems.extend(problems);
        }
    });
    let r = report.into_inner().unwrap_or_default();
    if r.messages != tables.len() as u64 {
        let mut r = r;
        r.problems.push(format!(
            "{} messages read, the tables list {}",
            r.messages,
            tables.len()
        ));
        return Ok(r);
    }
    Ok(r)
}

/// Decodes every message against its connection's definition during a check: definitions
/// that do not parse are reported once, messages that do not decode are counted per
/// connection and the first few reported with their place.
pub struct DecodeCheck {
    plans: Vec<std::result::Result<crate::encoding::Plan, DefError>>,
    failures: Vec<AtomicUsize>,
    topics: Vec<String>,
}

/// Messages reported in full per connection; the rest are counted.
const REPORTED_PER_CONNECTION: usize = 3;

impl DecodeCheck {
    /// Compiles every connection's definition (those not stored searched in `msg_path`
    /// first).
    pub fn new(summary: &crate::Summary, msg_path: &[std::path::PathBuf]) -> DecodeCheck {
        DecodeCheck {
            plans: summary
                .connections
                .iter()
                .map(|c| crate::encoding::Plan::for_connection(c, msg_path))
                .collect(),
            failures: summary
                .connections
                .iter()
                .map(|_| AtomicUsize::new(0))
                .collect(),
            topics: summary
                .connections
                .iter()
                .map(|c| c.topic.clone())
                .collect(),
        }
    }

    /// Decodes one message; a problem to report, if any.
    #[inline]
    pub fn message(&self, conn: usize, time_ns: u64, data: &[u8]) -> Option<String> {
        let Some(Ok(plan)) = self.plans.get(conn) else {
            return None;
        };
        if plan.validates(data) {
            return None;
        }
        let err = plan.decode(data).err()?;
        let n = self.failures[conn].fetch_add(1, Ordering::Relaxed);
        (n < REPORTED_PER_CONNECTION).then(|| {
            format!(
                "message of {} at {} does not decode: {err}",
                self.topics[conn],
                format_args!("{}.{:09}", time_ns / 1_000_000_000, time_ns % 1_000_000_000)
            )
        })
    }

    /// Problems with definitions (unparsable, md5 mismatch) and failure counts, once a check
    /// has run.
    pub fn summary_problems(&self, summary: &crate::Summary) -> Vec<String> {
        let mut out = Vec::new();
        for (i, c) in summary.connections.iter().enumerate() {
            match &self.plans[i] {
                // Encodings bagscope does not decode and definitions nowhere to be found are
                // not damage (`info` lists them).
                Err(e)
                    if e.kind == DefErrorKind::NotDecoded
                        || (e.kind == DefErrorKind::Missing
                            && !crate::storage::definitions_required(summary)) => {}
                Err(e) => out.push(format!("connection {} on {}: {e}", c.id, c.topic)),
                Ok(p) if c.encoding == "ros1" && !p.md5_matches(&c.md5sum) => out.push(format!(
                    "connection {} on {}: md5sum of the stored definition is {}, the bag says {}",
                    c.id, c.topic, p.md5, c.md5sum
                )),
                Ok(_) => {}
            }
            let n = self.failures[i].load(Ordering::Relaxed);
            if n > 0 {
                out.push(format!(
                    "{n} messages of {} (connection {}) do not decode",
                    c.topic, c.id
                ));
            }
        }
        out
    }

    /// Messages that failed to decode, over all connections.
    pub fn failures(&self) -> usize {
        self.failures
            .iter()
            .map(|f| f.load(Ordering::Relaxed))
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_looked_up_by_file_and_id() {
        let mut s = crate::Summary::default();
        for (file, id) in [(0, 0), (0, 7), (1, 7), (0, 70_000), (2, u32::MAX)] {
            s.connections.push(crate::Connection {
                file,
                id,
                ..Default::default()
            });
        }
        let l = ConnLookup::new(&s);
        assert_eq!(l.in_file(0).get(0), Some(0));
        assert_eq!(l.in_file(0).get(7), Some(1));
        assert_eq!(l.in_file(1).get(7), Some(2));
        assert_eq!(l.in_file(0).get(70_000), Some(3));
        assert_eq!(l.in_file(2).get(u32::MAX), Some(4));
        assert_eq!(l.in_file(0).get(1), None);
        assert_eq!(l.in_file(1).get(0), None);
        assert_eq!(l.in_file(5).get(7), None);
        assert_eq!(l.in_file(2).get(0), None);
    }

    /// Shared out among threads, the digests are those of one pass, connection by connection.
    #[test]
    fn chunk_digests_on_threads_equal_one_pass() {
        let per_connection: Vec<Vec<IndexEntry>> = (0..7u64)
            .map(|c| {
                (0..40_000 * (c + 1))
                    .map(|i| IndexEntry {
                        time_ns: i * 1000 + c,
                        chunk: ((i * 7 + c) % 97) as u32,
                        offset: (i % 5000) as u32 * 16,
                    })
                    .collect()
            })
            .collect();
        let tables = crate::MessageTables {
            per_connection,
            warnings: Vec::new(),
        };
        let one = chunk_digests(&tables, 97, 1);
        assert_eq!(one.iter().map(|w| w.0).sum::<u64>(), 40_000 * 28);
        for threads in [2, 3, 8] {
            assert_eq!(
                chunk_digests(&tables, 97, threads),
                one,
                "{threads} threads"
            );
        }
        // The digest tells connections apart: the same entries under another connection differ.
        let mut swapped = tables.clone();
        swapped.per_connection.swap(0, 1);
        assert_ne!(chunk_digests(&swapped, 97, 2), one);
    }
}
