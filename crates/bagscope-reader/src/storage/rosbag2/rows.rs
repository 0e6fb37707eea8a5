//! The row scan: rosbag2's `messages` table read through SQLite or the page reader, in blocks, on several threads; a message sliced out of a block.

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use super::{sql_err, BLOCK_ID_SPAN, BLOCK_ROWS, MAX_MESSAGE};
use crate::error::{Error, Result};
use crate::storage::compression::Compression;
use crate::storage::{Bytes, Chunk, ChunkKind, IndexEntry, Message, Source};

/// What one thread's scan of an id range found.
pub(super) struct RowScan {
    pub(super) per: Vec<Vec<IndexEntry>>,
    pub(super) chunks: Vec<Chunk>,
    pub(super) unknown: u64,
    /// Blocks (by index in this scan) of the captured rows, in the layout of [`read_rows`].
    pub(super) captured: Vec<(u32, Vec<u8>)>,
}

/// Rows of some connections kept while the rows are scanned, so that reading those
/// connections next needs no second pass over the pages (`csv` of one topic).
pub(crate) struct Capture<'a> {
    /// Per connection index: wanted.
    pub(super) want: Vec<bool>,
    pub(super) zstd: bool,
    pub(super) path: &'a Path,
    /// Bytes kept by every scanning thread, against `budget`.
    pub(super) bytes: &'a std::sync::atomic::AtomicUsize,
    pub(super) budget: usize,
    /// Set when the budget is spent or a row would not keep: nothing is kept then.
    pub(super) given_up: &'a std::sync::atomic::AtomicBool,
}

/// One thread's rows being captured: the current block's (id, start, length) in `data`.
pub(super) struct Capturing<'a> {
    pub(super) cap: &'a Capture<'a>,
    pub(super) rows: Vec<(i64, usize, usize)>,
    pub(super) data: Vec<u8>,
}

/// Scans the rows with ids in `a..=b` into blocks and table entries (chunk indexes relative to
/// this scan's first block). An entry's offset is its id's distance from its block's first id.
pub(super) fn scan_rows(
    conn: &rusqlite::Connection,
    path: &Path,
    a: i64,
    b: i64,
    by_topic_id: &HashMap<i64, usize>,
    ncon: usize,
) -> Result<RowScan> {
    let err = sql_err(path, "reading the messages table");
    let mut stmt = conn
        .prepare(
            "SELECT id, topic_id, timestamp FROM messages WHERE id BETWEEN ?1 AND ?2 ORDER BY id",
        )
        .map_err(&err)?;
    let mut rows = stmt.query([a, b]).map_err(&err)?;
    let mut sc = RowScanner::new(by_topic_id, ncon);
    while let Some(r) = rows.next().map_err(&err)? {
        let int = |i: usize| -> Result<i64> {
            r.get_ref(i)
                .map_err(&err)?
                .as_i64()
                .map_err(|e| sql_err(path, "a messages column is not an integer")(e.into()))
        };
        sc.push(int(0)?, int(1)?, int(2)?);
    }
    // (Rows read through SQLite are not captured: they are read again the usual way.)
    Ok(sc.finish())
}

/// Makes blocks and table entries of rows given in id order.
pub(super) struct RowScanner<'a> {
    pub(super) out: RowScan,
    pub(super) capturing: Option<Capturing<'a>>,
    /// Table entries kept for these connections only (a scan for some connections); the
    /// blocks count every row.
    pub(super) entries_for: Option<Vec<bool>>,
    pub(super) counts: Vec<u32>,
    pub(super) rows_in_block: usize,
    /// Topic ids are small: looked up in a table, not a hash map, for each of millions of rows.
    pub(super) dense: Option<Vec<Option<usize>>>,
    pub(super) by_topic_id: HashMap<i64, usize>,
}

impl<'a> RowScanner<'a> {
    pub(super) fn new(by_topic_id: &HashMap<i64, usize>, ncon: usize) -> RowScanner<'a> {
        let max_id = by_topic_id.keys().copied().max().unwrap_or(0);
        let dense = (0..=65536).contains(&max_id).then(|| {
            let mut v = vec![None; max_id as usize + 1];
            for (&k, &ci) in by_topic_id {
                if let Ok(k) = usize::try_from(k) {
                    v[k] = Some(ci);
                }
            }
            v
        });
        RowScanner {
            out: RowScan {
                per: vec![Vec::new(); ncon],
                chunks: Vec::new(),
                unknown: 0,
                captured: Vec::new(),
            },
            capturing: None,
            entries_for: None,
            counts: vec![0u32; ncon],
            rows_in_block: 0,
            dense,
            by_topic_id: by_topic_id.clone(),
        }
    }

    pub(super) fn lookup(&self, topic: i64) -> Option<usize> {
        match &self.dense {
            Some(v) => usize::try_from(topic)
                .ok()
                .and_then(|k| v.get(k).copied().flatten()),
            None => self.by_topic_id.get(&topic).copied(),
        }
    }

    /// Keeps the rows of `cap`'s connections too.
    pub(super) fn capturing(mut self, cap: Option<&'a Capture<'a>>) -> RowScanner<'a> {
        self.entries_for = cap.map(|c| c.want.clone());
        self.capturing = cap.map(|cap| Capturing {
            cap,
            rows: Vec::new(),
            data: Vec::new(),
        });
        self
    }

    /// Whether the row just pushed (of connection `ci`) is to be captured.
    pub(super) fn wants(&self, ci: Option<usize>) -> bool {
        match (&self.capturing, ci) {
            (Some(c), Some(ci)) => {
                c.cap.want.get(ci).copied().unwrap_or(false)
                    && !c.cap.given_up.load(std::sync::atomic::Ordering::Relaxed)
            }
            _ => false,
        }
    }

    /// Captures row `id`'s payload, which `fill` appends to the buffer it is given.
    pub(super) fn capture(&mut self, id: i64, fill: impl FnOnce(&mut Vec<u8>) -> Result<()>) {
        let Some(c) = &mut self.capturing else {
            return;
        };
        let at = c.data.len();
        let ok = fill(&mut c.data).is_ok();
        let len = c.data.len() - at;
        let total = c
            .cap
            .bytes
            .fetch_add(len, std::sync::atomic::Ordering::Relaxed)
            + len;
        if !ok || total > c.cap.budget {
            c.cap
                .given_up
                .store(true, std::sync::atomic::Ordering::Relaxed);
            self.capturing = None;
            self.out.captured = Vec::new();
            return;
        }
        c.rows.push((id, at, len));
    }

    /// The current block's captured rows, laid out as [`read_rows`] lays out a block.
    pub(super) fn flush_capture(&mut self) {
        let (Some(c), Some(ch)) = (&mut self.capturing, self.out.chunks.last()) else {
            return;
        };
        if c.rows.is_empty() {
            return;
        }
        let slots = (i128::from(ch.index_pos as i64) - i128::from(ch.first_row) + 1) as usize;
        let mut b =
            BlockBuf::with_payload(slots, c.data.len(), c.cap.zstd, ch.first_row, c.cap.path);
        let mut ok = true;
        for &(id, at, len) in &c.rows {
            let data = &c.data[at..at + len];
            ok &= b
                .push(id, |d| {
                    d.extend_from_slice(data);
                    Ok(())
                })
                .is_ok();
        }
        c.rows.clear();
        c.data.clear();
        if ok {
            let k = (self.out.chunks.len() - 1) as u32;
            self.out.captured.push((k, b.buf));
        } else {
            // Errors are said when the rows are read the usual way.
            c.cap
                .given_up
                .store(true, std::sync::atomic::Ordering::Relaxed);
            self.capturing = None;
            self.out.captured = Vec::new();
        }
    }

    pub(super) fn flush(&mut self) {
        self.flush_capture();
        if let Some(ch) = self.out.chunks.last_mut() {
            ch.counts = self
                .counts
                .iter()
                .enumerate()
                .filter(|(_, &n)| n > 0)
                .map(|(i, &n)| (i as u32, n))
                .collect();
            self.counts.iter_mut().for_each(|c| *c = 0);
        }
    }

    /// One row: its id, topic id and timestamp. Returns its connection index.
    #[inline]
    pub(super) fn push(&mut self, id: i64, topic: i64, t: i64) -> Option<usize> {
        let Some(ci) = self.lookup(topic) else {
            self.out.unknown += 1;
            return None;
        };
        let t = u64::try_from(t).unwrap_or(0);
        let new_block = match self.out.chunks.last() {
            None => true,
            Some(c) => {
                self.rows_in_block >= BLOCK_ROWS
                    || i128::from(id) - i128::from(c.first_row) >= i128::from(BLOCK_ID_SPAN)
            }
        };
        if new_block {
            self.flush();
            self.out.chunks.push(Chunk {
                pos: id as u64,
                start_ns: u64::MAX,
                end_ns: 0,
                kind: ChunkKind::Rows,
                first_row: id,
                compression: Compression::None,
                ..Default::default()
            });
            self.rows_in_block = 0;
        }
        let k = self.out.chunks.len() - 1;
        let ch = &mut self.out.chunks[k];
        ch.index_pos = id as u64;
        ch.start_ns = ch.start_ns.min(t);
        ch.end_ns = ch.end_ns.max(t);
        self.counts[ci] += 1;
        if self
            .entries_for
            .as_ref()
            .is_some_and(|w| !w.get(ci).copied().unwrap_or(false))
        {
            self.rows_in_block += 1;
            return Some(ci);
        }
        self.out.per[ci].push(IndexEntry {
            time_ns: t,
            chunk: k as u32,
            // Less than BLOCK_ID_SPAN: a new block starts before the gap grows larger.
            offset: (i128::from(id) - i128::from(ch.first_row)) as u32,
        });
        self.rows_in_block += 1;
        Some(ci)
    }

    pub(super) fn finish(mut self) -> RowScan {
        self.flush();
        self.out
    }
}

/// A block of rows being read into the layout of [`read_rows`]: the slot table, then each
/// payload appended as its row comes (per-message zstd undone on the way).
pub(super) struct BlockBuf<'a> {
    pub(super) buf: Vec<u8>,
    pub(super) slots: usize,
    pub(super) zstd: bool,
    pub(super) first_row: i64,
    pub(super) path: &'a Path,
}

impl BlockBuf<'_> {
    pub(super) fn new(slots: usize, zstd: bool, first_row: i64, path: &Path) -> BlockBuf<'_> {
        BlockBuf::with_payload(slots, 64 * slots, zstd, first_row, path)
    }

    /// With room for `payload` bytes of payloads.
    pub(super) fn with_payload(
        slots: usize,
        payload: usize,
        zstd: bool,
        first_row: i64,
        path: &Path,
    ) -> BlockBuf<'_> {
        let mut buf = Vec::with_capacity(4 + 8 * slots + payload);
        buf.extend_from_slice(&(slots as u32).to_le_bytes());
        for _ in 0..slots {
            buf.extend_from_slice(&0u32.to_le_bytes());
            buf.extend_from_slice(&u32::MAX.to_le_bytes());
        }
        BlockBuf {
            buf,
            slots,
            zstd,
            first_row,
            path,
        }
    }

    /// Appends row `id`'s payload, which `fill` appends to the buffer it is given.
    pub(super) fn push(
        &mut self,
        id: i64,
        fill: impl FnOnce(&mut Vec<u8>) -> Result<()>,
    ) -> Result<()> {
        let Some(slot) = usize::try_from(i128::from(id) - i128::from(self.first_row))
            .ok()
            .filter(|&k| k < self.slots)
        else {
            return Ok(());
        };
        let at = self.buf.len();
        if self.zstd {
            let mut raw = Vec::new();
            fill(&mut raw)?;
            unzstd_message(&raw, id, self.path, &mut self.buf)?;
        } else {
            fill(&mut self.buf)?;
        }
        let len = self.buf.len() - at;
        let (Ok(at32), Ok(len32)) = (u32::try_from(at), u32::try_from(len)) else {
            return Err(Error::Storage {
                path: self.path.to_path_buf(),
                reason: format!(
                    "the block of rows from {} holds more than 4 GiB",
                    self.first_row
                ),
            });
        };
        let e = 4 + 8 * slot;
        self.buf[e..e + 4].copy_from_slice(&at32.to_le_bytes());
        self.buf[e + 4..e + 8].copy_from_slice(&len32.to_le_bytes());
        Ok(())
    }
}

/// Reads a block of rows into one buffer: a u32 slot count (the block's id span), then a
/// (start, length) u32 pair per id (length `u32::MAX`: no such row, or not asked for), then the
/// payloads, per-message zstd undone. `topics` limits the rows read to those topic ids.
pub(crate) fn read_rows(src: &Source, ch: &Chunk, topics: Option<&[i64]>) -> Result<Vec<u8>> {
    let Source::Sqlite(s) = src else {
        return Err(Error::Invalid(
            "a row block outside a SQLite storage".into(),
        ));
    };
    let err = sql_err(&s.shown_path, "reading messages");
    let last = ch.index_pos as i64;
    let slots = usize::try_from(i128::from(last) - i128::from(ch.first_row) + 1)
        .ok()
        .filter(|&n| n <= BLOCK_ID_SPAN as usize)
        .ok_or_else(|| Error::Storage {
            path: s.shown_path.clone(),
            reason: format!("row block {}..{last} is not a block", ch.first_row),
        })?;
    let mut out = BlockBuf::new(slots, s.zstd_messages, ch.first_row, &s.shown_path);
    if let Some(d) = s.direct() {
        d.rows(ch.first_row, last, topics, &mut out)?;
        return Ok(out.buf);
    }
    let conn = s
        .conns
        .iter()
        .find_map(|c| c.try_lock().ok())
        .map_or_else(|| s.conns[0].lock(), Ok)
        .map_err(|_| Error::ThreadPanicked("a SQLite reader"))?;
    let sql = match topics {
        Some(t) => format!(
            "SELECT id, data FROM messages WHERE id BETWEEN ?1 AND ?2 AND topic_id IN ({}) ORDER BY id",
            t.iter().map(i64::to_string).collect::<Vec<_>>().join(",")
        ),
        None => "SELECT id, data FROM messages WHERE id BETWEEN ?1 AND ?2 ORDER BY id".into(),
    };
    let mut stmt = conn.prepare_cached(&sql).map_err(&err)?;
    let mut rows = stmt.query([ch.first_row, last]).map_err(&err)?;
    while let Some(r) = rows.next().map_err(&err)? {
        let id: i64 = r.get(0).map_err(&err)?;
        let d: &[u8] = match r.get_ref(1).map_err(&err)? {
            rusqlite::types::ValueRef::Blob(b) | rusqlite::types::ValueRef::Text(b) => b,
            _ => &[],
        };
        out.push(id, |b| {
            b.extend_from_slice(d);
            Ok(())
        })?;
    }
    drop(rows);
    drop(stmt);
    Ok(out.buf)
}

/// Where row `k`'s payload lies in `buf`, a block read by [`read_rows`] (a count, then each
/// row's start and length, then the payloads): `None` where the block has no such row.
pub(crate) fn row_in_block(buf: &[u8], k: u32) -> Option<(u32, u32)> {
    use crate::storage::le_u32;
    if k >= le_u32(buf, 0)? {
        return None;
    }
    let at = 4 + 8 * k as usize;
    let (start, len) = (le_u32(buf, at)?, le_u32(buf, at + 4)?);
    let end = start.checked_add(len).filter(|_| len != u32::MAX)?;
    (end as usize <= buf.len()).then_some((start, end))
}

/// The error of row `k` of block `ch` that [`row_in_block`] does not find.
pub(crate) fn row_gone(ch: &Chunk, k: u32) -> Error {
    Error::NotFound(format!(
        "row {k} of the block from message id {} is gone (the database changed since it was opened)",
        ch.first_row
    ))
}

/// The message at row `entry.offset` of a block read by [`read_rows`].
pub(crate) fn message_in_rows(
    buf: Arc<Vec<u8>>,
    ch: &Chunk,
    conn: usize,
    entry: IndexEntry,
) -> Result<Message> {
    let (start, end) =
        row_in_block(&buf, entry.offset).ok_or_else(|| row_gone(ch, entry.offset))?;
    Ok(Message {
        conn,
        time_ns: entry.time_ns,
        data: Bytes::slice(buf, start as usize, end as usize),
        entry,
        publish_ns: entry.time_ns,
        sequence: 0,
    })
}

/// Appends row `id`'s payload `raw`, a zstd frame (rosbag2's message-mode compression),
/// decompressed to `out`: at most [`MAX_MESSAGE`] bytes, else an error naming the row.
pub(super) fn unzstd_message(raw: &[u8], id: i64, path: &Path, out: &mut Vec<u8>) -> Result<()> {
    let bad = |reason: String| Error::Storage {
        path: path.to_path_buf(),
        reason,
    };
    match zstd::stream::read::Decoder::new(raw)
        .and_then(|d| d.take(MAX_MESSAGE + 1).read_to_end(out))
    {
        Ok(n) if (n as u64) <= MAX_MESSAGE => Ok(()),
        Ok(_) => Err(bad(format!(
            "message row {id} decompresses to more than {MAX_MESSAGE} bytes"
        ))),
        Err(e) => Err(bad(format!(
            "message row {id} is not a zstd frame (message-mode compression): {e}"
        ))),
    }
}
