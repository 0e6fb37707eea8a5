//! Reading every message of every chunk on all cores and verifying every record against the
//! index: what `bagscope check` reports.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::bag::{scan_chunk_records, Bag, IndexEntry};
use crate::error::Result;

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

/// Calls `f(chunk index, uncompressed data)` for every chunk, on `threads` threads, in no
/// particular order. Errors reading a chunk are passed as `Err`.
pub fn for_each_chunk_parallel(
    bag: &Bag,
    threads: usize,
    f: &(dyn Fn(usize, Result<&[u8]>) + Sync),
) {
    let n = bag.summary().chunks.len();
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..threads.max(1) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                match bag.decompress_chunk(i) {
                    Ok(d) => f(i, Ok(&d)),
                    Err(e) => f(i, Err(e)),
                }
            });
        }
    });
}

/// Per-message hook of a check: `(connection index, time, data)`, returning a problem if any.
pub type MessageCheck<'a> = dyn Fn(usize, u64, &[u8]) -> Option<String> + Sync + 'a;

/// Reads and verifies every record of every chunk; `per_message` may verify more (decoding).
pub fn check(bag: &Bag, threads: usize, per_message: Option<&MessageCheck<'_>>) -> Result<CheckReport> {
    let s = bag.summary();
    let tables = bag.tables()?;
    let conn_index: HashMap<u32, usize> = s.connections.iter().enumerate().map(|(i, c)| (c.id, i)).collect();
    // The table entries of each chunk, to compare with what the chunk really holds.
    let mut want: Vec<Vec<(usize, IndexEntry)>> = vec![Vec::new(); s.chunks.len()];
    for (ci, t) in tables.per_connection.iter().enumerate() {
        for e in t {
            if let Some(v) = want.get_mut(e.chunk as usize) {
                v.push((ci, *e));
            }
        }
    }
    let report = Mutex::new(CheckReport {
        problems: s.warnings.iter().map(|w| format!("warning: {w}")).collect(),
        ..CheckReport::default()
    });
    let raw = s.chunks.iter().any(|c| c.raw);
    if raw {
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
                    Err(err) => r.problems.push(format!("message of {} at {}: {err}", s.connections[ci].topic, e.time_ns)),
                }
            }
        }
        r.uncompressed_bytes = s.file_size;
        r.compressed_bytes = s.file_size;
        return Ok(r);
    }
    for_each_chunk_parallel(bag, threads, &|i, data| {
        let ch = &s.chunks[i];
        let mut problems = Vec::new();
        let (mut messages, mut bytes) = (0u64, 0u64);
        let mut found: Vec<(usize, IndexEntry)> = Vec::new();
        match data {
            Err(e) => problems.push(e.to_string()),
            Ok(data) => {
                let r = scan_chunk_records(data, ch.pos, i as u32, |_| {}, |id, e| {
                    match conn_index.get(&id) {
                        Some(&ci) => found.push((ci, e)),
                        None => problems.push(format!(
                            "message at byte {} of the chunk at byte {} names undefined connection {id}",
                            e.offset, ch.pos
                        )),
                    }
                });
                if let Err(e) = r {
                    problems.push(e.to_string());
                }
                for &(ci, e) in &found {
                    if e.time_ns < ch.start_ns || e.time_ns > ch.end_ns {
                        problems.push(format!(
                            "message at byte {} of the chunk at byte {} has time {} outside the chunk's range {}..{}",
                            e.offset, ch.pos, e.time_ns, ch.start_ns, ch.end_ns
                        ));
                    }
                    let at = e.offset as usize;
                    // Message data follows the 4-byte header length, header and 4-byte data length.
                    let msg = crate::record::frame_record(data, at, crate::error::Location::InChunk { chunk_pos: ch.pos, offset: at as u64 })
                        .map(|r| r.data);
                    if let Ok(d) = msg {
                        messages += 1;
                        bytes += d.len() as u64;
                        if let Some(p) = per_message.and_then(|f| f(ci, e.time_ns, d)) {
                            problems.push(p);
                        }
                    }
                }
                let mut a = found.clone();
                let mut b = want[i].clone();
                a.sort_unstable();
                b.sort_unstable();
                if a != b {
                    problems.push(format!(
                        "chunk at byte {}: its records hold {} messages, the index lists {}{}",
                        ch.pos,
                        a.len(),
                        b.len(),
                        if a.len() == b.len() { " (at different places or times)" } else { "" }
                    ));
                }
            }
        }
        if let Ok(mut r) = report.lock() {
            r.chunks += 1;
            r.messages += messages;
            r.message_bytes += bytes;
            r.compressed_bytes += ch.data_len;
            r.uncompressed_bytes += u64::from(ch.size);
            r.problems.extend(problems);
        }
    });
    Ok(report.into_inner().unwrap_or_default())
}
