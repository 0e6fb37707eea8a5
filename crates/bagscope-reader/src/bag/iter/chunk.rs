//! What an iteration loads of a chunk: its data and, for a stream, its wanted messages
//! (`Slot`s), which the storage finds (`storage::stream`): in its records, through its message
//! index, or from the tables' rows.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::bag::{Bag, MessageTables};
use crate::error::Result;
pub(super) use crate::storage::stream::Slot;
use crate::storage::stream::{self, Buffers, Want};

/// An uncompressed chunk at least this large whose wanted messages average at least
/// [`ALONE_BYTES_PER_MESSAGE`] of it each is read record by record ([`Messages`]).
pub(super) const ALONE_MIN_CHUNK: u64 = 256 << 10;
pub(super) const ALONE_BYTES_PER_MESSAGE: u64 = 16 << 10;

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
    /// Per storage file, per channel id: the connection index when wanted, else `NONE`
    /// (see [`Want::by_id`]).
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
    pub(super) const NONE: u32 = stream::NOT_WANTED;

    /// What the storage is asked for.
    fn want(&self) -> Want<'_> {
        Want {
            by_id: &self.by_id,
            lo: self.lo,
            hi: self.hi,
        }
    }
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

/// The buffers a thread loads chunks with, kept from chunk to chunk.
#[derive(Default)]
pub(super) struct Work {
    /// A chunk's compressed bytes.
    pub(super) compressed: Vec<u8>,
    /// For a [`Stream`]: what finding a chunk's wanted messages reads into (its records,
    /// copied out of when they are a small part of it: see [`Loader::load`]).
    pub(super) find: Buffers,
}

impl Loader {
    /// Chunk `c`, into `reuse` (the buffers of a chunk finished with) where it is read
    /// whole, with `work`'s buffers.
    ///
    /// For a [`Stream`], a chunk whose wanted messages are a quarter of its messages or
    /// fewer (one topic of many in a time window) is read into `work.find.plain` and only those
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
    /// Chunk `c` read into `work.find.plain`, its wanted messages copied into `reuse`.
    ///
    /// Where the summary says where the wanted channels' MessageIndex records lie, those
    /// (a few KB) say which messages are wanted: a chunk with none in the window is not read
    /// at all, an uncompressed one is read in pieces from wanted record to wanted record
    /// (`storage::stream::read_pieces`), and no chunk is walked record by record. A message index that
    /// disagrees with the records it points at (a damaged or hand-made file) is set aside
    /// and the chunk walked.
    pub(super) fn load_sparse(&self, bag: &Bag, c: u32, reuse: Spare, work: &mut Work) -> Ready {
        let (mut out, mut slots) = (reuse.data, reuse.slots);
        out.clear();
        slots.clear();
        // A compressed chunk decompressed for its index, kept for the walk should the index
        // not agree with it.
        let mut data = None;
        if stream::index_entries(bag, &self.want(), c, &mut work.find) {
            if work.find.entries.is_empty() {
                return Ok(Loaded {
                    data: Arc::new(out),
                    slots,
                });
            }
            let layout = bag.chunk_layout(c as usize)?;
            if layout.compression == crate::Compression::None
                && u64::from(layout.size) == layout.data_len
            {
                if stream::read_pieces(bag, c, layout, &mut work.find, &mut out, &mut slots)? {
                    return Ok(Loaded {
                        data: Arc::new(out),
                        slots,
                    });
                }
                out.clear();
                slots.clear();
            } else {
                let plain = std::mem::take(&mut work.find.plain);
                let d = bag.decompress_chunk_reusing(c as usize, plain, &mut work.compressed)?;
                if stream::slots_from_index(&work.find.entries, &d, &mut slots) {
                    copy_out(&d, &mut slots, &mut out);
                    work.find.plain = d;
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
                let plain = std::mem::take(&mut work.find.plain);
                bag.decompress_chunk_reusing(c as usize, plain, &mut work.compressed)?
            }
        };
        let mut slots = self.slots(bag, c, &data, slots)?;
        copy_out(&data, &mut slots, &mut out);
        work.find.plain = data;
        Ok(Loaded {
            data: Arc::new(out),
            slots,
        })
    }

    /// The wanted messages of chunk `c` (its records `data`), sorted as the merge of the
    /// tables yields them, into `slots` (a vector of a chunk finished with): from the tables
    /// for a block of SQLite rows, else by walking its records.
    pub(super) fn slots(
        &self,
        bag: &Bag,
        c: u32,
        data: &[u8],
        slots: Vec<Slot>,
    ) -> Result<Vec<Slot>> {
        match &self.rows {
            Some((tables, conns)) => stream::rows_slots(bag, tables, conns, c, data, slots),
            None => {
                let wanted = self.wanted.get(c as usize).copied().unwrap_or(0) as usize;
                stream::record_slots(bag, &self.want(), wanted, c, data, slots)
            }
        }
    }
}
