//! One message of an open recording: from its chunk (cached), read alone from the file
//! where that is cheaper, or from a chunk's buffer an iteration holds.

use std::sync::Arc;

use super::{Bag, Source};
use crate::error::{Error, Result};
use crate::storage::{Bytes, Chunk, IndexEntry, Message};

impl Bag {
    /// The storage file that holds chunk `ch`.
    pub(crate) fn source(&self, ch: &Chunk) -> Result<&Source> {
        self.inner
            .files
            .get(ch.file as usize)
            .ok_or_else(|| Error::NotFound(format!("no storage file {}", ch.file)))
    }

    /// Reads the message at `entry` of connection `conn` (one of a large uncompressed chunk
    /// that is not cached is read alone, without its chunk).
    pub fn message(&self, conn: usize, entry: IndexEntry) -> Result<Message> {
        if let Some(m) = self.message_direct(conn, entry) {
            return Ok(m);
        }
        self.message_via_chunk(conn, entry)
    }

    /// Like [`Bag::message`], always through the chunk's data (what iteration wants: the
    /// chunk is read once for all its messages); format 1.2 messages are read one by one.
    pub(crate) fn message_via_chunk(&self, conn: usize, entry: IndexEntry) -> Result<Message> {
        let ch = self.chunk(entry.chunk as usize)?;
        if ch.kind.buffered() {
            let buf = self.chunk_data(entry.chunk as usize)?;
            return self.message_in_buffer(buf, conn, entry);
        }
        if let Some(data) = crate::storage::read_message_alone(self.source(ch)?, ch, entry) {
            let data = data?;
            return Ok(Message {
                conn,
                time_ns: entry.time_ns,
                data: Bytes::from_vec(data),
                entry,
                publish_ns: entry.time_ns,
                sequence: 0,
            });
        }
        let buf = self.chunk_data(entry.chunk as usize)?;
        self.message_in_buffer(buf, conn, entry)
    }

    /// One message of a large uncompressed chunk that is not in the cache, read alone: its
    /// record, not the whole chunk (the inspector on a bag of 32 MB chunks reads a few hundred
    /// bytes, not 32 MB). `None` where that does not apply or the record does not frame, and
    /// the chunk is then read as usual (which also gives the error its place).
    pub(super) fn message_direct(&self, conn: usize, entry: IndexEntry) -> Option<Message> {
        /// Chunks smaller than this are read whole (and cached).
        const DIRECT_MIN: u64 = 4 << 20;
        let idx = entry.chunk as usize;
        let ch = self.summary().chunks.get(idx)?;
        if !ch.kind.records_alone() {
            return None;
        }
        if self
            .inner
            .cache
            .lock()
            .ok()
            .is_none_or(|c| c.map.contains_key(&entry.chunk))
        {
            return None;
        }
        self.message_alone(conn, entry, DIRECT_MIN)
    }

    /// The message at `entry` read alone from its uncompressed chunk of at least `min_len`
    /// bytes (its record, not the chunk), or `None` where that does not apply.
    pub(crate) fn message_alone(
        &self,
        conn: usize,
        entry: IndexEntry,
        min_len: u64,
    ) -> Option<Message> {
        self.message_alone_into(conn, entry, min_len, &mut Vec::new(), Vec::new())
            .map(|(m, _)| m)
    }

    /// [`Self::message_alone`], its record's first bytes read into `head` and the record into
    /// `buf` (a record's buffer finished with: its memory is neither allocated nor zeroed
    /// again), with the record's buffer handed back beside the message.
    pub(crate) fn message_alone_into(
        &self,
        conn: usize,
        entry: IndexEntry,
        min_len: u64,
        head: &mut Vec<u8>,
        mut buf: Vec<u8>,
    ) -> Option<(Message, Arc<Vec<u8>>)> {
        let idx = entry.chunk as usize;
        let ch = self.summary().chunks.get(idx)?;
        if !ch.kind.records_alone() {
            return None;
        }
        let l = self.chunk_layout(idx).ok()?;
        if l.compression != crate::Compression::None || l.data_len < min_len {
            return None;
        }
        let src = self.source(ch).ok()?;
        let off = u64::from(entry.offset);
        let left = l.data_len.checked_sub(off)?;
        let pos = l.data_pos + off;
        crate::storage::read_at_into(src, pos, 4096.min(left as usize), head).ok()?;
        let total = crate::storage::record_len(ch.kind, head)?;
        if total > left {
            return None;
        }
        // Into the front of `buf`, which keeps its length: the part of it past what it held
        // is zeroed once, not on each record of another size. Its bytes past the record are
        // not read (the record's header bounds it). A record within the bytes read for its
        // header is copied from them; a larger one is read, and the chunk's length coming from
        // the file, one past the file's end is not allocated for (as read_at_into clamps).
        let in_head = usize::try_from(total).ok().and_then(|t| head.get(..t));
        if in_head.is_none()
            && total > crate::storage::UNCLAMPED_READ as u64
            && pos.checked_add(total)? > src.len().ok()?
        {
            return None;
        }
        let total = usize::try_from(total).ok()?;
        if buf.len() < total {
            buf.resize(total, 0);
        }
        match in_head {
            Some(rec) => buf[..total].copy_from_slice(rec),
            None => {
                if !crate::storage::read_exact_at(src, pos, &mut buf[..total]).ok()? {
                    return None;
                }
            }
        }
        let rec = Arc::new(buf);
        let m = crate::storage::message_in_record(rec.clone(), ch, conn, entry)?;
        Some((m, rec))
    }

    /// Whether a chunk's messages are read from its decompressed data (all but the raw
    /// segments of format 1.2, which are read message by message).
    pub(crate) fn chunk_is_buffered(&self, chunk: u32) -> bool {
        self.summary()
            .chunks
            .get(chunk as usize)
            .is_some_and(|c| c.kind.buffered())
    }

    /// Slices the message at `entry` out of the decompressed data of its chunk.
    pub(crate) fn message_in_buffer(
        &self,
        buf: Arc<Vec<u8>>,
        conn: usize,
        entry: IndexEntry,
    ) -> Result<Message> {
        let ch = self.chunk(entry.chunk as usize)?;
        if !ch.kind.buffered() {
            // Format 1.2 has no chunks: the message is read from the file.
            return self.message(conn, entry);
        }
        crate::storage::message_in_data(buf, ch, conn, entry)
    }
}
