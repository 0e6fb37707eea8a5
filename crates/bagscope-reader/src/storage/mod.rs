//! The storage layer: what every storage (ROS 1 bag, MCAP, rosbag2) gives the rest of bagscope.
//!
//! A storage knows binary messages and their metadata, nothing of what the bytes mean (that is
//! [`crate::encoding`], with definitions from [`crate::definition`]). Opening a storage gives
//! a [`Summary`] (connections, chunks with per-chunk time ranges and counts for the timeline
//! density, topics, counts, time range, warnings) and, where the storage has no index to read
//! them from lazily, the [`MessageTables`] (time and place of every message, 16 bytes each).
//! A [`Chunk`] is the unit of reading: a ROS 1 chunk record, a stretch of an unchunked or old
//! file, an MCAP chunk, a block of SQLite rows. Its [`ChunkKind`] says how its bytes are read
//! and how a message is found at an offset in them; `dispatch.rs` answers every question that
//! depends on it, so nothing above the storage layer matches on the file format.
//!
//! - [`ros1`]: ROS 1 bags, 2.0 (chunked, indexed), 1.2, and 1.1 / 1.0 / version 0;
//! - [`mcap`]: MCAP files, indexed (summary, message indexes) or recovered by a linear scan;
//! - [`rosbag2`]: rosbag2 directories (metadata.yaml, split files, SQLite or MCAP storage,
//!   zstd in file or message mode);
//! - [`compression`]: the chunk compressions (lz4, bz2, zstd) with bounded output;
//! - writers: [`ros1::writer`] (2.0 bags), [`mcap::writer`], [`rosbag2::writer`].

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::storage::compression::Compression;

// What only the workspace's other crates, its fuzz targets and its tests call: public so they
// can, hidden from the reader's documented API.
#[doc(hidden)]
pub mod bz2;
pub mod compression;
pub(crate) mod index_cache;
#[doc(hidden)]
pub use index_cache::write_atomically;
pub mod mcap;
#[doc(hidden)]
pub mod output;
#[cfg(feature = "remote")]
pub mod remote;
pub mod ros1;
pub mod rosbag2;
pub(crate) mod stream;

mod dispatch;
mod io;

#[doc(hidden)]
pub use dispatch::chunk_messages;
pub use dispatch::sniff;
pub(crate) use dispatch::{
    build_tables, chunk_layout, message_in_data, message_in_record, open_file,
    read_for_connections, read_message_alone, read_unframed, recognise, record_len, tables_by_time,
    ChunkReader, Opened, OwnIndex, OwnIndexes, ReadWindow, Recognised,
};
pub(crate) use dispatch::{check_read, definitions_required, CheckRead};
pub(crate) use io::{
    le_u32, le_u64, pread_full, read_ahead_on, read_at, read_at_into, read_exact_at, Source,
    UNCLAMPED_READ,
};

/// Format (storage and version) of a recording.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Version {
    /// `#ROSBAG V2.0`: chunked.
    #[default]
    V2_0,
    /// `#ROSRECORD V1.2`: records in sequence, index ver 0.
    V1_2,
    /// `#ROSRECORD V1.1` or `#ROSLOG V1.1`: text lines and a 12-byte block per record.
    V1_1,
    /// `#ROSLOG V1.0` (and `##MULTILOG##`): declared topics, then records.
    V1_0,
    /// Version 0: one topic, no magic line.
    V0,
    /// A standalone MCAP file.
    Mcap,
    /// A rosbag2 recording stored in SQLite (`.db3`) files.
    Rosbag2Sqlite,
    /// A rosbag2 recording stored in MCAP files.
    Rosbag2Mcap,
}

impl Version {
    /// "2.0", "1.2", "MCAP", "rosbag2 sqlite3", "rosbag2 mcap".
    pub fn as_str(self) -> &'static str {
        match self {
            Self::V2_0 => "2.0",
            Self::V1_2 => "1.2",
            Self::V1_1 => "1.1",
            Self::V1_0 => "1.0",
            Self::V0 => "0",
            Self::Mcap => "MCAP",
            Self::Rosbag2Sqlite => "rosbag2 sqlite3",
            Self::Rosbag2Mcap => "rosbag2 mcap",
        }
    }

    /// Whether this is a ROS 1 bag (any version).
    pub fn is_ros1(self) -> bool {
        matches!(
            self,
            Self::V2_0 | Self::V1_2 | Self::V1_1 | Self::V1_0 | Self::V0
        )
    }
}

/// What a [`Chunk`] is in its storage, which says how its bytes are read and how a message is
/// found at an offset in them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ChunkKind {
    /// A ROS 1 chunk record: its data holds ROS 1 records.
    #[default]
    Ros1,
    /// A raw segment of a ROS 1 format 1.2 file, read message by message from the file.
    Ros1Raw,
    /// MCAP records: a chunk's records once decompressed, or a stretch of an unchunked file.
    Mcap,
    /// A block of SQLite rows (rosbag2): offsets are row numbers within the block.
    Rows,
    /// A stretch of a ROS 1 file before format 1.2: offsets point at a record's 12-byte block.
    Ros1Old,
}

impl ChunkKind {
    /// Whether the storage keeps a per-chunk index of message times that a time-ranged table
    /// build can narrow to (ROS 1 2.0 chunks, MCAP chunks).
    pub fn time_indexed(self) -> bool {
        matches!(self, ChunkKind::Ros1 | ChunkKind::Mcap)
    }

    /// Whether messages are sliced out of the chunk's data read whole (all but the raw
    /// segments of format 1.2, read message by message from the file).
    pub fn buffered(self) -> bool {
        self != ChunkKind::Ros1Raw
    }

    /// Whether one message record can be read alone from an uncompressed chunk of this kind
    /// (`record_len`, `message_in_record`) instead of the whole chunk.
    pub fn records_alone(self) -> bool {
        matches!(self, ChunkKind::Ros1 | ChunkKind::Mcap)
    }
}

/// One connection: a topic as recorded from one publisher with one type (an MCAP channel, a
/// rosbag2 topic of one storage file).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Connection {
    /// Connection id as written in the bag (format 1.2: its order of appearance).
    pub id: u32,
    /// Topic name.
    pub topic: String,
    /// Message type, `pkg/Type`.
    pub datatype: String,
    /// md5sum of the type as recorded.
    pub md5sum: String,
    /// Full message definition text as recorded.
    pub message_definition: String,
    /// Publishing node, when recorded.
    pub callerid: Option<String>,
    /// Latching publisher.
    pub latching: bool,
    /// Whether the recording says if the publisher was latching (a ROS 1 connection header's
    /// `latching` field, which some publishers leave out).
    pub latching_stated: bool,
    /// Number of messages on this connection.
    pub message_count: u64,
    /// How messages are serialized: `ros1`, `cdr`, `protobuf`, `json`, ...
    pub encoding: String,
    /// The language of `message_definition`: `ros1msg`, `ros2msg`, ... (empty: none stored).
    pub schema_encoding: String,
    /// The schema's bytes as stored when they are not text (an MCAP `protobuf` schema is a
    /// binary `FileDescriptorSet`), kept so that an export writes them unchanged;
    /// `message_definition` then holds them read as text, for display only. Empty otherwise.
    pub schema_data: Vec<u8>,
    /// QoS profiles the publishers offered (rosbag2), as recorded.
    pub qos: String,
    /// Index of the storage file that defines it, into [`Summary::files`] (split recordings).
    pub file: u32,
    /// The ROS distro that recorded it, where the recording says (rosbag2).
    pub distro: String,
    /// The type's REP 2011 hash (`RIHS01_…`) as the recording states it (rosbag2's
    /// `type_description_hash`), or empty. [`crate::definition::hash`] computes it from the
    /// definition.
    pub type_hash: String,
}

/// A chunk: its place in the file and what it holds. Format 1.2 files are split into raw
/// segments that play the same part, so nothing above the library knows the version.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Chunk {
    /// File offset of the chunk record (of the segment, for raw segments).
    pub pos: u64,
    /// Earliest message time (ns); `u64::MAX` when empty.
    pub start_ns: u64,
    /// Latest message time (ns); 0 when empty.
    pub end_ns: u64,
    /// Messages per connection index.
    pub counts: Vec<(u32, u32)>,
    /// MCAP, from the summary's chunk index: for each entry of `counts`, where that channel's
    /// MessageIndex record starts, counted from `index_pos` (`u32::MAX` past 4 GiB of it), so
    /// that one connection's messages can be found without walking the chunk. Empty where
    /// the summary did not say (a scanned file, other storages).
    pub index_at: Vec<u32>,
    /// Compression of the chunk data.
    pub compression: Compression,
    /// File offset of the chunk's (compressed) data. ROS 1: 0 while the chunk record's header
    /// has not been read (a bag of many chunks opens from its chunk infos alone, and each
    /// header is read when its chunk or index is: see [`Chunk::header_pending`]); then
    /// `data_len`, `size` and `compression` are not known either.
    pub data_pos: u64,
    /// Bytes of compressed data in the file.
    pub data_len: u64,
    /// Declared uncompressed size.
    pub size: u32,
    /// What the chunk is in its storage.
    pub kind: ChunkKind,
    /// Index of the storage file holding it (split recordings), into [`Summary::files`].
    pub file: u32,
    /// MCAP: file offset of the chunk's message index records (0: none). SQLite: the last row
    /// id of the block.
    pub index_pos: u64,
    /// SQLite: the first row id of the block.
    pub first_row: i64,
}

/// Where a chunk's data lies and how it is compressed, read from its record header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkLayout {
    /// File offset of the (compressed) data.
    pub data_pos: u64,
    /// Bytes of (compressed) data.
    pub data_len: u64,
    /// Declared uncompressed size.
    pub size: u32,
    /// Compression.
    pub compression: Compression,
}

impl Chunk {
    /// Whether the chunk's record header is still to be read (ROS 1 bags of many chunks):
    /// `data_pos`, `data_len`, `size` and `compression` are then unknown.
    pub fn header_pending(&self) -> bool {
        self.kind == ChunkKind::Ros1 && self.data_pos == 0
    }

    /// The layout, as far as the summary knows it (`None` while the header is pending).
    pub fn layout(&self) -> Option<ChunkLayout> {
        (!self.header_pending()).then_some(ChunkLayout {
            data_pos: self.data_pos,
            data_len: self.data_len,
            size: self.size,
            compression: self.compression,
        })
    }

    /// Number of messages in the chunk.
    pub fn message_count(&self) -> u64 {
        self.counts.iter().map(|&(_, n)| u64::from(n)).sum()
    }
}

/// A topic and the connections recorded on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Topic {
    /// Topic name.
    pub name: String,
    /// Type of the first connection (connections may disagree; each keeps its own).
    pub datatype: String,
    /// Indexes into [`Summary::connections`].
    pub connections: Vec<usize>,
    /// Messages over all its connections.
    pub message_count: u64,
}

/// What is known of a bag after reading its index: shown first, before any chunk is read.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Summary {
    /// The path the bag was opened from.
    pub path: PathBuf,
    /// File size in bytes.
    pub file_size: u64,
    /// Format version.
    pub version: Version,
    /// Whether the bag was opened from a complete index (false: recovered by a linear scan).
    pub indexed: bool,
    /// Connections, in id order.
    pub connections: Vec<Connection>,
    /// Chunks in file order.
    pub chunks: Vec<Chunk>,
    /// Topics by name, each grouping its connections.
    pub topics: Vec<Topic>,
    /// Total messages.
    pub message_count: u64,
    /// Time of the first message (ns), if any.
    pub start_ns: Option<u64>,
    /// Time of the last message (ns), if any.
    pub end_ns: Option<u64>,
    /// What was odd, recovered or skipped, each with where.
    pub warnings: Vec<String>,
    /// The storage files, in order (one for a single file).
    pub files: Vec<PathBuf>,
    /// Attachments (MCAP): name, media type, size in bytes.
    pub attachments: Vec<(String, String, u64)>,
    /// Metadata records (MCAP): name and key/value pairs.
    pub metadata: Vec<(String, Vec<(String, String)>)>,
    /// What the storage says about itself: MCAP profile and library, rosbag2 storage,
    /// compression, ROS distro, metadata.yaml version.
    pub storage_facts: Vec<(String, String)>,
    /// The storage's rows are not read yet (a rosbag2 SQLite recording opened from its
    /// metadata.yaml, which the database bore out): `chunks` is empty, and the counts and time
    /// range are metadata.yaml's. Only [`crate::Bag::quick_summary`] gives such a summary.
    pub rows_pending: bool,
}

impl Summary {
    /// Chunks per compression name (chunks whose header is pending are left out:
    /// [`crate::Bag::compression_counts`] reads them).
    pub fn compression_counts(&self) -> BTreeMap<&'static str, usize> {
        let mut m = BTreeMap::new();
        for c in self
            .chunks
            .iter()
            .filter(|c| matches!(c.kind, ChunkKind::Ros1 | ChunkKind::Mcap) && !c.header_pending())
        {
            *m.entry(c.compression.name()).or_insert(0) += 1;
        }
        m
    }

    /// Connection id (as written in the bag) to index into [`Summary::connections`].
    pub fn connection_index(&self) -> HashMap<u32, usize> {
        self.connections
            .iter()
            .enumerate()
            .map(|(i, c)| (c.id, i))
            .collect()
    }

    /// The topic named `name`; `/mouse` finds a topic named `mouse` (and the other way round)
    /// when there is no exact match.
    pub fn topic(&self, name: &str) -> Option<&Topic> {
        let find = |n: &str| {
            self.topics
                .binary_search_by(|t| t.name.as_str().cmp(n))
                .ok()
                .map(|i| &self.topics[i])
        };
        // MCAP topics need not start with `/` (`mouse`); field paths do (`/mouse.clientX`).
        find(name).or_else(|| match name.strip_prefix('/') {
            Some(bare) => find(bare),
            None => find(&format!("/{name}")),
        })
    }

    /// Duration between first and last message, in ns.
    pub fn duration_ns(&self) -> u64 {
        match (self.start_ns, self.end_ns) {
            (Some(s), Some(e)) => e.saturating_sub(s),
            _ => 0,
        }
    }

    /// Bytes of uncompressed chunk data.
    pub fn uncompressed_size(&self) -> u64 {
        self.chunks.iter().map(|c| u64::from(c.size)).sum()
    }

    /// Recomputes topics, counts and the time range from connections and chunks.
    pub(crate) fn finish(&mut self) {
        let (mut start, mut end) = (u64::MAX, 0u64);
        if !self.rows_pending {
            for c in &mut self.connections {
                c.message_count = 0;
            }
            for ch in &self.chunks {
                for &(ci, n) in &ch.counts {
                    if let Some(c) = self.connections.get_mut(ci as usize) {
                        c.message_count += u64::from(n);
                    }
                }
                if ch.message_count() > 0 {
                    start = start.min(ch.start_ns);
                    end = end.max(ch.end_ns);
                }
            }
        }
        self.message_count = self.connections.iter().map(|c| c.message_count).sum();
        if self.rows_pending {
            // Counts and times as given (metadata.yaml's).
        } else if self.message_count > 0 {
            self.start_ns = Some(start);
            self.end_ns = Some(end);
        } else {
            self.start_ns = None;
            self.end_ns = None;
        }
        let mut by_name: BTreeMap<&str, Topic> = BTreeMap::new();
        for (i, c) in self.connections.iter().enumerate() {
            let t = by_name.entry(&c.topic).or_insert_with(|| Topic {
                name: c.topic.clone(),
                datatype: c.datatype.clone(),
                connections: Vec::new(),
                message_count: 0,
            });
            t.connections.push(i);
            t.message_count += c.message_count;
        }
        self.topics = by_name.into_values().collect();
        if self.message_count == 0 && self.warnings.is_empty() {
            self.warnings
                .push("the bag holds no messages (header only)".to_string());
        }
    }
}

/// Where one message lives: 16 bytes a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct IndexEntry {
    /// Receive time (ns).
    pub time_ns: u64,
    /// Index into [`Summary::chunks`].
    pub chunk: u32,
    /// Offset of the message data record in the chunk's uncompressed data.
    pub offset: u32,
}

/// For each connection, every message's time and place, sorted by time.
#[derive(Debug, Clone, Default)]
pub struct MessageTables {
    /// Indexed like [`Summary::connections`].
    pub per_connection: Vec<Vec<IndexEntry>>,
    /// What building the tables found odd (chunks whose index was rebuilt, stray bytes).
    pub warnings: Vec<String>,
}

impl MessageTables {
    /// The last message of `topic` (over its connections) at or before `t`: its connection
    /// and entry (the later connection's where two share a time).
    pub fn last_at(&self, topic: &Topic, t: u64) -> Option<(usize, IndexEntry)> {
        let mut best: Option<(usize, IndexEntry)> = None;
        for &c in &topic.connections {
            let es = self.per_connection.get(c)?;
            let k = es.partition_point(|e| e.time_ns <= t);
            if k == 0 {
                continue;
            }
            let e = es[k - 1];
            if best.is_none_or(|(_, b)| e.time_ns >= b.time_ns) {
                best = Some((c, e));
            }
        }
        best
    }

    /// Total number of entries.
    pub fn len(&self) -> usize {
        self.per_connection.iter().map(Vec::len).sum()
    }
    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Bytes of memory held by the tables.
    pub fn heap_bytes(&self) -> usize {
        self.per_connection
            .iter()
            .map(|v| v.capacity() * std::mem::size_of::<IndexEntry>())
            .sum()
    }
    /// Sorts each table by time (stable; already-sorted tables cost one pass).
    pub fn sort(&mut self) {
        for t in &mut self.per_connection {
            if !t.is_sorted() {
                t.sort();
            }
        }
    }
}

/// Progress of building the message tables, reported once per chunk.
#[derive(Debug, Clone, Copy)]
pub struct TablesProgress {
    /// Chunks done.
    pub chunks_done: usize,
    /// Chunks in all.
    pub chunks_total: usize,
    /// File bytes covered by the chunks done.
    pub bytes_done: u64,
}

/// The entries of one chunk, handed to a progress callback as the tables are built.
#[derive(Debug, Clone)]
pub struct ChunkEntries {
    /// Chunk index.
    pub chunk: usize,
    /// (connection index, entry) for every message of the chunk.
    pub entries: Vec<(usize, IndexEntry)>,
}

/// The end of one chunk of a table build: its entries (`ce.entries`) added to the tables, and
/// `progress` told; an error when it asks to stop.
pub(crate) fn chunk_done(
    per_connection: &mut [Vec<IndexEntry>],
    ce: &mut ChunkEntries,
    chunk: usize,
    chunks_total: usize,
    bytes_done: u64,
    progress: &mut dyn FnMut(TablesProgress, &ChunkEntries) -> bool,
) -> Result<()> {
    for &(ci, e) in ce.entries.iter() {
        per_connection[ci].push(e);
    }
    ce.chunk = chunk;
    let p = TablesProgress {
        chunks_done: chunk + 1,
        chunks_total,
        bytes_done,
    };
    if !progress(p, ce) {
        return Err(Error::Cancelled);
    }
    Ok(())
}

/// Bytes of one message, kept alive by a shared decompressed chunk.
#[derive(Debug, Clone)]
pub struct Bytes {
    buf: Arc<Vec<u8>>,
    start: usize,
    end: usize,
}

impl Bytes {
    /// A slice `start..end` of a shared buffer.
    ///
    /// # Panics
    /// Where `start..end` is not within `buf`.
    pub fn slice(buf: Arc<Vec<u8>>, start: usize, end: usize) -> Self {
        assert!(
            start <= end && end <= buf.len(),
            "Bytes::slice out of its buffer"
        );
        Bytes { buf, start, end }
    }

    /// The same bytes, copied into a buffer of their own where they are a small part of a
    /// large shared one (a message in a decompressed chunk): a long-lived holder of one
    /// message then neither keeps the chunk alive nor frees it (the UI thread must not).
    pub fn detach(self) -> Self {
        let len = self.end - self.start;
        if self.buf.len() > 2 * len + (64 << 10) {
            Bytes::from_vec(self.to_vec())
        } else {
            self
        }
    }

    /// Wraps a whole buffer.
    pub fn from_vec(v: Vec<u8>) -> Self {
        let end = v.len();
        Bytes {
            buf: Arc::new(v),
            start: 0,
            end,
        }
    }
}

impl std::ops::Deref for Bytes {
    type Target = [u8];
    // Inlined across codegen units: the call was 3-10 % of a one-core read of every message.
    #[inline]
    fn deref(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }
}

impl AsRef<[u8]> for Bytes {
    #[inline]
    fn as_ref(&self) -> &[u8] {
        self
    }
}

/// One message read from the bag.
#[derive(Debug, Clone)]
pub struct Message {
    /// Index into [`Summary::connections`].
    pub conn: usize,
    /// Receive time (ns).
    pub time_ns: u64,
    /// The serialized message.
    pub data: Bytes,
    /// Where it is: chunk and offset.
    pub entry: IndexEntry,
    /// Publish time (ns) where the storage records one (MCAP, rosbag2 from jazzy); else the
    /// receive time.
    pub publish_ns: u64,
    /// Sequence number where the storage records one (MCAP), else 0.
    pub sequence: u32,
}

/// One message as [`crate::bag::iter::Messages::next_ref`] lends it: its bytes borrowed from the
/// chunk being read, so neither a reference count nor a copy is paid per message. Made owned
/// with [`MessageRef::to_owned_message`] when it must outlive the next call.
#[derive(Debug, Clone, Copy)]
pub struct MessageRef<'a> {
    /// Index into [`Summary::connections`].
    pub conn: usize,
    /// Receive time (ns).
    pub time_ns: u64,
    /// The serialized message.
    pub data: &'a [u8],
    /// Where it is: chunk and offset.
    pub entry: IndexEntry,
    /// Publish time (ns); see [`Message::publish_ns`].
    pub publish_ns: u64,
    /// Sequence number; see [`Message::sequence`].
    pub sequence: u32,
}

impl MessageRef<'_> {
    /// The message with its bytes copied into a buffer of their own.
    pub fn to_owned_message(&self) -> Message {
        self.with_bytes(Bytes::from_vec(self.data.to_vec()))
    }

    /// The message holding `data` (its bytes, held elsewhere) as its bytes.
    pub(crate) fn with_bytes(&self, data: Bytes) -> Message {
        debug_assert!(*data == *self.data);
        Message {
            conn: self.conn,
            time_ns: self.time_ns,
            data,
            entry: self.entry,
            publish_ns: self.publish_ns,
            sequence: self.sequence,
        }
    }
}

impl Message {
    /// The message lent as a [`MessageRef`].
    pub fn borrowed(&self) -> MessageRef<'_> {
        MessageRef {
            conn: self.conn,
            time_ns: self.time_ns,
            data: &self.data,
            entry: self.entry,
            publish_ns: self.publish_ns,
            sequence: self.sequence,
        }
    }
}

/// Which messages to read.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Connection indexes; `None` for all.
    pub connections: Option<Vec<usize>>,
    /// Inclusive start time (ns).
    pub start_ns: Option<u64>,
    /// Exclusive end time (ns).
    pub end_ns: Option<u64>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    /// Results come in order with their buffers, on threads or not; an error from the consumer
    /// stops the readers and comes back.
    #[test]
    fn read_ahead_hands_out_regions_in_order_and_stops_on_error() {
        let job = |i: usize, buf: &mut Vec<u8>| -> crate::error::Result<usize> {
            buf.clear();
            buf.extend(std::iter::repeat_n((i % 251) as u8, i % 300));
            if i == 77 {
                return Err(Error::Invalid("region 77".into()));
            }
            Ok(i * 3)
        };
        let mut seen = Vec::new();
        read_ahead_on(false, false, 1000, job, |i, r, buf| {
            assert_eq!(buf.len(), i % 300);
            assert!(buf.iter().all(|&b| b == (i % 251) as u8));
            match r {
                Ok(v) => assert_eq!(v, i * 3),
                Err(e) => assert_eq!(i, 77, "{e}"),
            }
            seen.push(i);
            Ok(())
        })
        .unwrap();
        assert_eq!(seen, (0..1000).collect::<Vec<_>>());
        let mut last = 0;
        let r = read_ahead_on(false, false, 1000, job, |i, r, _| {
            last = i;
            r.map(|_| ())
        });
        assert!(matches!(r, Err(Error::Invalid(m)) if m == "region 77"));
        assert_eq!(last, 77);
        // One region, none: no thread, no call.
        let mut n = 0;
        read_ahead_on(false, false, 1, job, |_, _, _| {
            n += 1;
            Ok(())
        })
        .unwrap();
        read_ahead_on(false, false, 0, job, |_, _, _| unreachable!()).unwrap();
        assert_eq!(n, 1);
    }
}
