//! What an iteration loads of a chunk: its data and, for a stream, its wanted messages
//! (`Slot`s) found in its records, through its message index, or from the tables' rows.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::bag::{Bag, IndexEntry, MessageRef, MessageTables};
use crate::error::{Error, Result};
use crate::storage::mcap::MessageAt;
use crate::storage::ChunkKind;

/// An uncompressed chunk at least this large whose wanted messages average at least
/// [`ALONE_BYTES_PER_MESSAGE`] of it each is read record by record ([`Messages`]).
pub(super) const ALONE_MIN_CHUNK: u64 = 256 << 10;
pub(super) const ALONE_BYTES_PER_MESSAGE: u64 = 16 << 10;

/// A wanted message of a chunk read by a [`Stream`], found by walking the chunk's records
/// once (on a read-ahead thread where there is one): the reader slices it out without parsing
/// its header again.
#[derive(Debug, Clone, Copy)]
pub(super) struct Slot {
    pub(super) time_ns: u64,
    pub(super) publish_ns: u64,
    /// Where the record starts in the chunk (its place in the tables).
    pub(super) offset: u32,
    /// Where its payload lies in the chunk.
    pub(super) start: u32,
    pub(super) end: u32,
    pub(super) sequence: u32,
    pub(super) conn: u32,
}

/// A chunk as an iteration reads it: its data and, for a [`Stream`], its wanted messages in
/// order.
pub(super) struct Loaded {
    pub(super) data: Arc<Vec<u8>>,
    pub(super) slots: Vec<Slot>,
}

/// A chunk loaded, or its error with its kind kept (a `Truncated` stays one).
pub(super) type Ready = Result<Loaded>;

/// The buffers of a chunk finished with, for the next chunk loaded: its data and its slots
/// (both large enough that a fresh allocation of each per chunk costs page faults).
#[derive(Default)]
pub(super) struct Spare {
    pub(super) data: Vec<u8>,
    pub(super) slots: Vec<Slot>,
}

impl Slot {
    /// The message in `data`, the chunk `chunk`'s bytes (`None` past their end, which the walk
    /// that made the slot rules out).
    pub(super) fn lend<'a>(&self, chunk: u32, data: &'a [u8]) -> Option<MessageRef<'a>> {
        Some(MessageRef {
            conn: self.conn as usize,
            time_ns: self.time_ns,
            data: data.get(self.start as usize..self.end as usize)?,
            entry: IndexEntry {
                time_ns: self.time_ns,
                chunk,
                offset: self.offset,
            },
            publish_ns: self.publish_ns,
            sequence: self.sequence,
        })
    }
}

impl Loaded {
    /// Its buffers, when nothing else holds its data any more.
    pub(super) fn into_spare(self) -> Option<Spare> {
        Arc::try_unwrap(self.data).ok().map(|data| Spare {
            data,
            slots: self.slots,
        })
    }
}

/// How an iteration loads a chunk: of some connections only (a block of SQLite rows is then
/// read with their rows only: a `csv` of one topic copies that topic's payloads, not every
/// row's), and for a [`Stream`] with its wanted messages found and sorted.
pub(super) struct Loader {
    pub(super) conns: Option<Vec<usize>>,
    pub(super) index: Option<StreamIndex>,
}

/// What a [`Stream`] wants of each chunk's records.
pub(super) struct StreamIndex {
    /// Per storage file, per channel id: the connection index when wanted, else `NONE`.
    pub(super) by_id: Vec<Vec<u32>>,
    /// Per chunk, how many of its messages are of wanted connections (from its counts).
    pub(super) wanted: Vec<u32>,
    /// Per chunk, whether those are a quarter of its messages or fewer (see [`Loader::load`]).
    pub(super) sparse: Vec<bool>,
    /// The time window: messages from `lo` (inclusive) to `hi` (exclusive).
    pub(super) lo: u64,
    pub(super) hi: u64,
    /// Sparse chunks walked record by record, their message indexes not telling where the
    /// wanted messages are (none given, or one that disagrees with the records).
    pub(super) walked: AtomicUsize,
    /// Blocks of rosbag2 SQLite rows: the tables that say each row's connection and time
    /// (a block's rows hold neither), and the connections wanted.
    pub(super) rows: Option<(Arc<MessageTables>, Vec<usize>)>,
}

impl StreamIndex {
    pub(super) const NONE: u32 = u32::MAX;
}

/// The rows of block `c` (its buffer `data`, as `rosbag2::read_rows` lays it out: a count,
/// then each row's start and length, then the payloads) of connections `conns`, as the tables
/// place them, sorted as the merge of the tables yields them (time, then row). A block's
/// entries are one run of each connection's table: the blocks do not overlap in time (see
/// [`Messages::rows_stream_for`]).
pub(super) fn rows_slots(
    bag: &Bag,
    tables: &MessageTables,
    conns: &[usize],
    c: u32,
    data: &[u8],
    mut slots: Vec<Slot>,
) -> Result<Vec<Slot>> {
    let s = bag.summary();
    let ch = s
        .chunks
        .get(c as usize)
        .ok_or_else(|| Error::NotFound(format!("no chunk {c}")))?;
    slots.clear();
    slots.reserve(ch.message_count().min(data.len() as u64 / 8) as usize);
    for &conn in conns {
        let Some(t) = tables.per_connection.get(conn) else {
            continue;
        };
        let from = t.partition_point(|e| (e.time_ns, e.chunk) < (ch.start_ns, c));
        let to = t.partition_point(|e| (e.time_ns, e.chunk) <= (ch.end_ns, c));
        for e in &t[from..to.max(from)] {
            if e.chunk != c {
                continue;
            }
            let k = e.offset;
            let (start, end) = crate::storage::rosbag2::row_in_block(data, k)
                .ok_or_else(|| crate::storage::rosbag2::row_gone(ch, k))?;
            slots.push(Slot {
                time_ns: e.time_ns,
                publish_ns: e.time_ns,
                offset: k,
                start,
                end,
                sequence: 0,
                conn: conn as u32,
            });
        }
    }
    Slot::in_merge_order(&mut slots);
    Ok(slots)
}

/// How much of an uncompressed chunk [`read_pieces`] reads at a time: small enough to stay in
/// a core's cache and to cost a reader thread few fresh pages, large enough that its reads are
/// few (and under [`crate::storage::UNCLAMPED_READ`], so no length is asked of the file).
pub(super) const PIECE: u64 = 64 << 10;

/// The Message record at `rel` of `data`, if it is the one of channel `id` at time `t` that an
/// index entry says is there (its payload may run past `data`'s end).
pub(super) fn indexed_record(data: &[u8], rel: usize, id: u16, t: u64) -> Option<MessageAt> {
    crate::storage::mcap::message_record_at(data, rel).filter(|m| m.channel == id && m.log_ns == t)
}

impl Slot {
    /// `slots` in the order the merge of the tables yields messages: time, then place in the
    /// chunk (mostly so already: then a pass).
    pub(super) fn in_merge_order(slots: &mut [Slot]) {
        if !slots.is_sorted_by_key(|m| (m.time_ns, m.offset)) {
            slots.sort_unstable_by_key(|m| (m.time_ns, m.offset));
        }
    }

    /// The slot of message `m` of connection `conn`, at `offset` in its chunk, its payload
    /// from `start` to `end` of what the reader is handed.
    pub(super) fn of(m: &MessageAt, conn: u32, offset: u32, (start, end): (u32, u32)) -> Slot {
        Slot {
            time_ns: m.log_ns,
            publish_ns: m.publish_ns,
            offset,
            start,
            end,
            sequence: m.sequence,
            conn,
        }
    }
}

/// The slots of `entries` (see [`Work::entries`]) in `data`, a chunk's records: `false`,
/// with `slots` to be refilled, where a record is not the Message of the channel and time
/// its index gives.
pub(super) fn slots_from_index(
    entries: &[(u64, u32, u32, u16)],
    data: &[u8],
    slots: &mut Vec<Slot>,
) -> bool {
    slots.clear();
    slots.reserve(entries.len());
    for &(t, off, conn, id) in entries {
        match indexed_record(data, off as usize, id, t) {
            Some(m) if m.end as usize <= data.len() => {
                slots.push(Slot::of(&m, conn, off, (m.start, m.end)));
            }
            _ => return false,
        }
    }
    true
}

/// The payloads of `slots` (in `data`) copied into `out`, the slots made to point there.
pub(super) fn copy_out(data: &[u8], slots: &mut [Slot], out: &mut Vec<u8>) {
    let wanted: usize = slots.iter().map(|m| (m.end - m.start) as usize).sum();
    out.reserve(wanted);
    for m in slots {
        let at = out.len();
        out.extend_from_slice(data.get(m.start as usize..m.end as usize).unwrap_or(&[]));
        // Within `data`'s length, as the slots are: a u32 holds it.
        (m.start, m.end) = (at as u32, out.len() as u32);
    }
}

/// The wanted messages (`work.entries`) of uncompressed chunk `c`, read from the file in
/// pieces of at most [`PIECE`] bytes, each from a wanted record's start, into `work.plain`;
/// their payloads copied into `out` as they come (one longer than what a piece holds, read
/// straight into `out`), `slots` pointing there, in the order of the entries. `false` where a
/// record is not what the index says it is (the chunk is then walked).
pub(super) fn read_pieces(
    bag: &Bag,
    c: u32,
    layout: crate::storage::ChunkLayout,
    work: &mut Work,
    out: &mut Vec<u8>,
    slots: &mut Vec<Slot>,
) -> Result<bool> {
    let ch = bag
        .summary()
        .chunks
        .get(c as usize)
        .ok_or_else(|| Error::NotFound(format!("no chunk {c}")))?;
    let src = bag.source(ch)?;
    let size = u64::from(layout.size);
    let truncated = |needed: u64, available: u64| Error::Truncated {
        kind: crate::error::RecordKind::Chunk,
        at: crate::error::Location::File(ch.pos),
        needed,
        available,
    };
    let Work {
        plain,
        entries,
        order,
        ..
    } = work;
    order.clear();
    order.extend(0..entries.len() as u32);
    if !entries.is_sorted_by_key(|e| e.1) {
        order.sort_unstable_by_key(|&i| entries[i as usize].1);
    }
    // The end of the record read last: the next starts there or after.
    let mut done = 0u64;
    let mut k = 0;
    while let Some(&first) = order.get(k) {
        let from = u64::from(entries[first as usize].1);
        if from >= size || from < done {
            return Ok(false);
        }
        let to = (from + PIECE).min(size);
        crate::storage::read_at_into(src, layout.data_pos + from, (to - from) as usize, plain)?;
        if (plain.len() as u64) < to - from {
            return Err(truncated(to - from, plain.len() as u64));
        }
        let piece_starts = k;
        while let Some(&i) = order.get(k) {
            let (t, off, conn, id) = entries[i as usize];
            let off = u64::from(off);
            if off < done {
                return Ok(false);
            }
            let rel = (off - from) as usize;
            if rel + 9 + crate::storage::mcap::MESSAGE_HEADER > plain.len() {
                if k == piece_starts {
                    // Not even the record a piece starts with has its header in the chunk.
                    return Ok(false);
                }
                // Its header is past this piece: the next piece starts with it.
                break;
            }
            let Some(m) = indexed_record(plain, rel, id, t) else {
                return Ok(false);
            };
            // Where it ends in the chunk.
            let end = from + u64::from(m.end);
            if end > size {
                return Ok(false);
            }
            let at = out.len();
            match plain.get(m.start as usize..m.end as usize) {
                Some(b) => out.extend_from_slice(b),
                None => {
                    out.resize(at + (m.end - m.start) as usize, 0);
                    let pos = layout.data_pos + from + u64::from(m.start);
                    if !crate::storage::read_exact_at(src, pos, &mut out[at..])? {
                        return Err(truncated(end, size));
                    }
                }
            }
            let (Ok(s), Ok(e), Ok(o)) = (
                u32::try_from(at),
                u32::try_from(out.len()),
                u32::try_from(off),
            ) else {
                return Ok(false);
            };
            slots.push(Slot::of(&m, conn, o, (s, e)));
            done = end;
            k += 1;
        }
    }
    Slot::in_merge_order(slots);
    Ok(true)
}

/// The buffers a thread loads chunks with, kept from chunk to chunk.
#[derive(Default)]
pub(super) struct Work {
    /// A chunk's compressed bytes.
    pub(super) compressed: Vec<u8>,
    /// For a [`Stream`]: a chunk's records, whose wanted messages are copied out when they
    /// are a small part of it (see [`Loader::load`]).
    pub(super) plain: Vec<u8>,
    /// A wanted channel's MessageIndex record.
    pub(super) index: Vec<u8>,
    /// The wanted messages a chunk's message indexes list: (time, offset in the chunk,
    /// connection, channel id).
    pub(super) entries: Vec<(u64, u32, u32, u16)>,
    /// `entries` by place in the chunk (indices into it).
    pub(super) order: Vec<u32>,
}

impl Loader {
    /// Chunk `c`, into `reuse` (the buffers of a chunk finished with) where it is read
    /// whole, with `work`'s buffers.
    ///
    /// For a [`Stream`], a chunk whose wanted messages are a quarter of its messages or
    /// fewer (one topic of many in a time window) is read into `work.plain` and only those
    /// messages are copied into `reuse`: the buffers handed to the reader stay small and the
    /// chunk-sized one stays with this thread, its pages already in place (a 1 MB buffer
    /// touched afresh costs 256 page faults).
    pub(super) fn load(&self, bag: &Bag, c: u32, reuse: Spare, work: &mut Work) -> Ready {
        if let (None, Some(ix)) = (&self.conns, &self.index) {
            if ix.sparse.get(c as usize).copied().unwrap_or(false) {
                return ix.load_sparse(bag, c, reuse, work);
            }
        }
        let data = match &self.conns {
            Some(conns) => bag.read_chunk_for(c as usize, conns)?,
            None => bag.decompress_chunk_reusing(c as usize, reuse.data, &mut work.compressed)?,
        };
        let slots = match &self.index {
            Some(ix) => ix.slots(bag, c, &data, reuse.slots)?,
            None => Vec::new(),
        };
        Ok(Loaded {
            data: Arc::new(data),
            slots,
        })
    }
}

impl StreamIndex {
    /// Chunk `c` read into `work.plain`, its wanted messages copied into `reuse`.
    ///
    /// Where the summary says where the wanted channels' MessageIndex records lie, those
    /// (a few KB) say which messages are wanted: a chunk with none in the window is not read
    /// at all, an uncompressed one is read in pieces from wanted record to wanted record
    /// ([`read_pieces`]), and no chunk is walked record by record. A message index that
    /// disagrees with the records it points at (a damaged or hand-made file) is set aside
    /// and the chunk walked.
    pub(super) fn load_sparse(&self, bag: &Bag, c: u32, reuse: Spare, work: &mut Work) -> Ready {
        let (mut out, mut slots) = (reuse.data, reuse.slots);
        out.clear();
        slots.clear();
        // A compressed chunk decompressed for its index, kept for the walk should the index
        // not agree with it.
        let mut data = None;
        if self.index_entries(bag, c, work) {
            if work.entries.is_empty() {
                return Ok(Loaded {
                    data: Arc::new(out),
                    slots,
                });
            }
            let layout = bag.chunk_layout(c as usize)?;
            if layout.compression == crate::Compression::None
                && u64::from(layout.size) == layout.data_len
            {
                if read_pieces(bag, c, layout, work, &mut out, &mut slots)? {
                    return Ok(Loaded {
                        data: Arc::new(out),
                        slots,
                    });
                }
                out.clear();
                slots.clear();
            } else {
                let plain = std::mem::take(&mut work.plain);
                let d = bag.decompress_chunk_reusing(c as usize, plain, &mut work.compressed)?;
                if slots_from_index(&work.entries, &d, &mut slots) {
                    copy_out(&d, &mut slots, &mut out);
                    work.plain = d;
                    return Ok(Loaded {
                        data: Arc::new(out),
                        slots,
                    });
                }
                data = Some(d);
            }
        }
        self.walked.fetch_add(1, Ordering::Relaxed);
        let data = match data {
            Some(d) => d,
            None => {
                let plain = std::mem::take(&mut work.plain);
                bag.decompress_chunk_reusing(c as usize, plain, &mut work.compressed)?
            }
        };
        let mut slots = self.slots(bag, c, &data, slots)?;
        copy_out(&data, &mut slots, &mut out);
        work.plain = data;
        Ok(Loaded {
            data: Arc::new(out),
            slots,
        })
    }

    /// The wanted messages of chunk `c` in the window, as the MessageIndex records of its
    /// wanted channels list them (one read of each), sorted by time and place into
    /// `work.entries`; `false` where they cannot say (the summary did not give where they
    /// lie, a record that does not read as the summary describes it) or should not be asked
    /// (a remote recording).
    pub(super) fn index_entries(&self, bag: &Bag, c: u32, work: &mut Work) -> bool {
        let s = bag.summary();
        let Some(ch) = s.chunks.get(c as usize) else {
            return false;
        };
        if ch.kind != ChunkKind::Mcap {
            return false;
        }
        // A remote recording's chunk is one request, its message index another (and the
        // pieces more): there the chunk is read whole and walked.
        let Ok(src) = bag.source(ch) else {
            return false;
        };
        if src.is_remote() {
            return false;
        }
        let ids = self
            .by_id
            .get(ch.file as usize)
            .map_or(&[][..], Vec::as_slice);
        work.entries.clear();
        for (k, &(conn, _)) in ch.counts.iter().enumerate() {
            let Some(id) = s
                .connections
                .get(conn as usize)
                .and_then(|c| u16::try_from(c.id).ok())
            else {
                return false;
            };
            if ids.get(usize::from(id)).copied() != Some(conn) {
                continue;
            }
            let Some(recs) = crate::storage::mcap::channel_index(src, ch, k, id, &mut work.index)
            else {
                return false;
            };
            for (t, o) in crate::storage::mcap::index_records(recs) {
                let Ok(o) = u32::try_from(o) else {
                    return false;
                };
                if t >= self.lo && t < self.hi {
                    work.entries.push((t, o, conn, id));
                }
            }
        }
        if !work.entries.is_sorted_by_key(|e| (e.0, e.1)) {
            work.entries.sort_unstable_by_key(|e| (e.0, e.1));
        }
        true
    }

    /// The wanted messages of chunk `c` (its records `data`), sorted as the merge of the
    /// tables yields them: by time, then place in the chunk (mostly in order already: the
    /// sort is a pass). Into `slots`, a vector of a chunk finished with.
    pub(super) fn slots(
        &self,
        bag: &Bag,
        c: u32,
        data: &[u8],
        mut slots: Vec<Slot>,
    ) -> Result<Vec<Slot>> {
        if let Some((tables, conns)) = &self.rows {
            return rows_slots(bag, tables, conns, c, data, slots);
        }
        let s = bag.summary();
        let ch = s
            .chunks
            .get(c as usize)
            .ok_or_else(|| Error::NotFound(format!("no chunk {c}")))?;
        let ids = self
            .by_id
            .get(ch.file as usize)
            .map_or(&[][..], Vec::as_slice);
        let (lo, hi) = (self.lo, self.hi);
        // The count comes from the file: no more than the records' bytes can hold (a
        // Message record takes 31 bytes at least).
        let wanted = self.wanted.get(c as usize).copied().unwrap_or(0) as usize;
        slots.clear();
        slots.reserve(wanted.min(data.len() / 31));
        crate::storage::mcap::scan_chunk_message_records(data, ch.pos, |m| {
            let conn = ids
                .get(usize::from(m.channel))
                .copied()
                .unwrap_or(Self::NONE);
            if conn != Self::NONE && m.log_ns >= lo && m.log_ns < hi {
                slots.push(Slot {
                    time_ns: m.log_ns,
                    publish_ns: m.publish_ns,
                    offset: m.offset,
                    start: m.start,
                    end: m.end,
                    sequence: m.sequence,
                    conn,
                });
            }
        })?;
        Slot::in_merge_order(&mut slots);
        Ok(slots)
    }
}
