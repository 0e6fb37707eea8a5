//! What a time-ordered stream of chunks finds in each chunk, format by format: the wanted
//! messages of a chunk (`Slot`s: time, connection, where the payload lies) from its MCAP
//! records walked once, from its MCAP message indexes (read alone, and an uncompressed chunk
//! read in pieces from wanted record to wanted record), or from a block of rosbag2 SQLite rows
//! placed by the tables. The open recording's iterator (`bag::iter`) asks; it decides
//! nothing about a format.

use crate::error::{Error, Result};
use crate::storage::mcap::{self, MessageAt};
use crate::storage::{
    rosbag2, ChunkKind, ChunkLayout, ChunkReader, IndexEntry, MessageRef, MessageTables,
};

/// A channel id's place in [`Want::by_id`] when its connection is not wanted.
pub(crate) const NOT_WANTED: u32 = u32::MAX;

/// What a stream wants of a chunk's records.
pub(crate) struct Want<'a> {
    /// Per storage file, per channel id: the connection index when wanted, else
    /// [`NOT_WANTED`].
    pub(crate) by_id: &'a [Vec<u32>],
    /// The time window: messages from `lo` (inclusive) to `hi` (exclusive).
    pub(crate) lo: u64,
    pub(crate) hi: u64,
}

/// The buffers a reading thread finds a chunk's wanted messages with, kept from chunk to
/// chunk.
#[derive(Default)]
pub(crate) struct Buffers {
    /// A chunk's records, whose wanted messages are copied out when they are a small part of
    /// it.
    pub(crate) plain: Vec<u8>,
    /// A wanted channel's MessageIndex record.
    pub(crate) index: Vec<u8>,
    /// The wanted messages a chunk's message indexes list: (time, offset in the chunk,
    /// connection, channel id).
    pub(crate) entries: Vec<(u64, u32, u32, u16)>,
    /// `entries` by place in the chunk (indices into it).
    pub(crate) order: Vec<u32>,
}

/// A wanted message of a chunk read by a time-ordered stream, found by walking the chunk's records
/// once (on a read-ahead thread where there is one): the reader slices it out without parsing
/// its header again.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Slot {
    pub(crate) time_ns: u64,
    pub(crate) publish_ns: u64,
    /// Where the record starts in the chunk (its place in the tables).
    pub(crate) offset: u32,
    /// Where its payload lies in the chunk.
    pub(crate) start: u32,
    pub(crate) end: u32,
    pub(crate) sequence: u32,
    pub(crate) conn: u32,
}

impl Slot {
    /// The message in `data`, the chunk `chunk`'s bytes (`None` past their end, which the walk
    /// that made the slot rules out).
    pub(crate) fn lend<'a>(&self, chunk: u32, data: &'a [u8]) -> Option<MessageRef<'a>> {
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

impl Slot {
    /// `slots` in the order the merge of the tables yields messages: time, then place in the
    /// chunk (mostly so already: then a pass).
    pub(crate) fn in_merge_order(slots: &mut [Slot]) {
        if !slots.is_sorted_by_key(|m| (m.time_ns, m.offset)) {
            slots.sort_unstable_by_key(|m| (m.time_ns, m.offset));
        }
    }

    /// The slot of message `m` of connection `conn`, at `offset` in its chunk, its payload
    /// from `start` to `end` of what the reader is handed.
    fn of(m: &MessageAt, conn: u32, offset: u32, (start, end): (u32, u32)) -> Slot {
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

/// The rows of block `c` (its buffer `data`, as `rosbag2::read_rows` lays it out: a count,
/// then each row's start and length, then the payloads) of connections `conns`, as the tables
/// place them, sorted as the merge of the tables yields them (time, then row). A block's
/// entries are one run of each connection's table: the blocks do not overlap in time (see
/// `Messages::rows_stream_for`).
pub(crate) fn rows_slots(
    r: &impl ChunkReader,
    tables: &MessageTables,
    conns: &[usize],
    c: u32,
    data: &[u8],
    mut slots: Vec<Slot>,
) -> Result<Vec<Slot>> {
    let s = r.summary();
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
            let (start, end) =
                rosbag2::row_in_block(data, k).ok_or_else(|| rosbag2::row_gone(ch, k))?;
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
const PIECE: u64 = 64 << 10;
/// The Message record at `rel` of `data`, if it is the one of channel `id` at time `t` that an
/// index entry says is there (its payload may run past `data`'s end).
fn indexed_record(data: &[u8], rel: usize, id: u16, t: u64) -> Option<MessageAt> {
    mcap::message_record_at(data, rel).filter(|m| m.channel == id && m.log_ns == t)
}

/// The slots of `entries` (time, offset in the chunk, connection, channel id) in `data`, a chunk's records: `false`,
/// with `slots` to be refilled, where a record is not the Message of the channel and time
/// its index gives.
pub(crate) fn slots_from_index(
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

/// The wanted messages (`entries`, as [`index_entries`] lists them) of uncompressed chunk
/// `c`, read from the file in pieces of at most [`PIECE`] bytes, each from a wanted record's
/// start, into `plain`;
/// their payloads copied into `out` as they come (one longer than what a piece holds, read
/// straight into `out`), `slots` pointing there, in the order of the entries. `false` where a
/// record is not what the index says it is (the chunk is then walked).
pub(crate) fn read_pieces(
    r: &impl ChunkReader,
    c: u32,
    layout: ChunkLayout,
    Buffers {
        plain,
        entries,
        order,
        ..
    }: &mut Buffers,
    out: &mut Vec<u8>,
    slots: &mut Vec<Slot>,
) -> Result<bool> {
    let ch = r
        .summary()
        .chunks
        .get(c as usize)
        .ok_or_else(|| Error::NotFound(format!("no chunk {c}")))?;
    let src = r.source(ch)?;
    let size = u64::from(layout.size);
    let truncated = |needed: u64, available: u64| Error::Truncated {
        kind: crate::error::RecordKind::Chunk,
        at: crate::error::Location::File(ch.pos),
        needed,
        available,
    };
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
        super::read_at_into(src, layout.data_pos + from, (to - from) as usize, plain)?;
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
            if rel + 9 + mcap::MESSAGE_HEADER > plain.len() {
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
                    if !super::read_exact_at(src, pos, &mut out[at..])? {
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

/// The wanted messages of chunk `c` in the window, as the MessageIndex records of its
/// wanted channels list them (one read of each), sorted by time and place into
/// `work.entries`; `false` where they cannot say (the summary did not give where they
/// lie, a record that does not read as the summary describes it) or should not be asked
/// (a remote recording).
pub(crate) fn index_entries(
    r: &impl ChunkReader,
    want: &Want<'_>,
    c: u32,
    work: &mut Buffers,
) -> bool {
    let s = r.summary();
    let Some(ch) = s.chunks.get(c as usize) else {
        return false;
    };
    if ch.kind != ChunkKind::Mcap {
        return false;
    }
    // A remote recording's chunk is one request, its message index another (and the
    // pieces more): there the chunk is read whole and walked.
    let Ok(src) = r.source(ch) else {
        return false;
    };
    if src.is_remote() {
        return false;
    }
    let ids = want
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
        let Some(recs) = mcap::channel_index(src, ch, k, id, &mut work.index) else {
            return false;
        };
        for (t, o) in mcap::index_records(recs) {
            let Ok(o) = u32::try_from(o) else {
                return false;
            };
            if t >= want.lo && t < want.hi {
                work.entries.push((t, o, conn, id));
            }
        }
    }
    if !work.entries.is_sorted_by_key(|e| (e.0, e.1)) {
        work.entries.sort_unstable_by_key(|e| (e.0, e.1));
    }
    true
}

/// The wanted messages of chunk `c` (its MCAP records `data`, walked), sorted as the merge
/// of the tables yields them: by time, then place in the chunk (mostly in order already: the
/// sort is a pass). Into `slots`, a vector of a chunk finished with.
pub(crate) fn record_slots(
    r: &impl ChunkReader,
    want: &Want<'_>,
    wanted: usize,
    c: u32,
    data: &[u8],
    mut slots: Vec<Slot>,
) -> Result<Vec<Slot>> {
    let s = r.summary();
    let ch = s
        .chunks
        .get(c as usize)
        .ok_or_else(|| Error::NotFound(format!("no chunk {c}")))?;
    let ids = want
        .by_id
        .get(ch.file as usize)
        .map_or(&[][..], Vec::as_slice);
    let (lo, hi) = (want.lo, want.hi);
    // The count comes from the file: no more than the records' bytes can hold (a
    // Message record takes 31 bytes at least).
    slots.clear();
    slots.reserve(wanted.min(data.len() / 31));
    mcap::scan_chunk_message_records(data, ch.pos, |m| {
        let conn = ids
            .get(usize::from(m.channel))
            .copied()
            .unwrap_or(NOT_WANTED);
        if conn != NOT_WANTED && m.log_ns >= lo && m.log_ns < hi {
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
