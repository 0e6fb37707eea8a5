//! The storage layer: what every storage (ROS 1 bag, MCAP, rosbag2) gives the rest of bagscope.
//!
//! A storage knows binary messages and their metadata, nothing of what the bytes mean (that is
//! [`crate::encoding`], with definitions from [`crate::definition`]). Opening a storage gives
//! a [`Summary`] (connections, chunks with per-chunk time ranges and counts for the timeline
//! density, topics, counts, time range, warnings) and, where the storage has no index to read
//! them from lazily, the [`MessageTables`] (time and place of every message, 16 bytes each).
//! A [`Chunk`] is the unit of reading: a ROS 1 chunk record, a stretch of an unchunked or old
//! file, an MCAP chunk, a block of SQLite rows. Its [`ChunkKind`] says how its bytes are read
//! and how a message is found at an offset in them; [`crate::Bag`] dispatches on it, so
//! nothing above the library matches on the file format.
//!
//! - [`ros1`]: ROS 1 bags, 2.0 (chunked, indexed), 1.2, and 1.1 / 1.0 / version 0;
//! - [`mcap`]: MCAP files, indexed (summary, message indexes) or recovered by a linear scan;
//! - [`rosbag2`]: rosbag2 directories (metadata.yaml, split files, SQLite or MCAP storage,
//!   zstd in file or message mode);
//! - [`compression`]: the chunk compressions (lz4, bz2, zstd) with bounded output;
//! - writers: [`ros1::writer`] (2.0 bags), [`mcap_writer`], [`rosbag2_writer`].

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{Error, Location, RecordKind, Result};
use crate::storage::ros1::record::Compression;

pub mod compression;
pub mod index_cache;
pub mod mcap;
pub mod mcap_writer;
pub mod ros1;
pub mod rosbag2;
pub mod rosbag2_writer;
pub(crate) mod sqlite_file;

/// Format (storage and version) of a recording.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
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

/// Bytes of one message, kept alive by a shared decompressed chunk.
#[derive(Debug, Clone)]
pub struct Bytes {
    buf: Arc<Vec<u8>>,
    start: usize,
    end: usize,
}

impl Bytes {
    /// A slice `start..end` of a shared buffer (checked by the caller).
    pub(crate) fn slice(buf: Arc<Vec<u8>>, start: usize, end: usize) -> Self {
        debug_assert!(start <= end && end <= buf.len());
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
    fn deref(&self) -> &[u8] {
        &self.buf[self.start..self.end]
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

/// Where a bag's bytes come from: a file opened read-only, or bytes in memory.
pub(crate) enum Source {
    /// A file, read with positioned reads (shared by threads without a lock).
    File(File),
    /// Bytes in memory.
    Memory(Arc<[u8]>),
    /// A SQLite database opened read-only (rosbag2).
    Sqlite(Box<crate::storage::rosbag2::SqliteSource>),
}

impl Source {
    pub(crate) fn len(&self) -> std::io::Result<u64> {
        match self {
            Source::File(f) => Ok(f.metadata()?.len()),
            Source::Memory(b) => Ok(b.len() as u64),
            Source::Sqlite(s) => Ok(s.size),
        }
    }
}

/// Like [`read_at`], into `buf` (its allocation reused: a scan of many regions then touches
/// no fresh memory for each one).
pub(crate) fn read_at_into(
    src: &Source,
    pos: u64,
    len: usize,
    buf: &mut Vec<u8>,
) -> std::io::Result<()> {
    let Source::File(file) = src else {
        *buf = read_at(src, pos, len)?;
        return Ok(());
    };
    // No more room than the file has past `pos`: a length read from a damaged record may claim
    // anything (fuzzing found one claiming more than memory can hold).
    let avail = file.metadata()?.len().saturating_sub(pos);
    let len = len.min(usize::try_from(avail).unwrap_or(usize::MAX));
    buf.resize(len, 0);
    let filled = pread_full(file, buf, pos)?;
    buf.truncate(filled);
    Ok(())
}

/// Fills `buf` from `pos` as far as the file goes: the bytes read (fewer only at its end).
pub(crate) fn pread_full(file: &File, buf: &mut [u8], pos: u64) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        let n = pread(file, &mut buf[filled..], pos + filled as u64)?;
        if n == 0 {
            break;
        }
        filled += n;
    }
    Ok(filled)
}

/// Reads up to `len` bytes at `pos` (fewer at the end of the file).
pub(crate) fn read_at(src: &Source, pos: u64, len: usize) -> std::io::Result<Vec<u8>> {
    match src {
        Source::File(_) => {
            let mut buf = Vec::new();
            read_at_into(src, pos, len, &mut buf)?;
            Ok(buf)
        }
        Source::Memory(b) => {
            let start = pos.min(b.len() as u64) as usize;
            let end = start.saturating_add(len).min(b.len());
            Ok(b[start..end].to_vec())
        }
        Source::Sqlite(..) => Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "a SQLite storage is read by rows, not bytes",
        )),
    }
}

/// Reader threads of [`read_ahead`]: enough reads in flight to keep a disk busy (a cold read
/// of small index regions one at a time ran at 390 MB/s on a disk that gives 1 GB/s).
const READERS: usize = 4;

/// Runs `job(i, buf)` for every `i` in `0..n` on reader threads, ahead of `consume`, which is
/// given each result with the buffer it filled, in order of `i`, on the calling thread.
/// Used where a table build reads many small regions of a file (the index after each chunk):
/// from a cold page cache, one read at a time waits out each read's latency, and the parsing
/// waits on the reads. At most `READERS * 3` buffers are in flight; buffers are reused. An
/// error from `consume` stops the readers and is returned. In the single-threaded mode
/// ([`crate::settings::set_threads`]) every job runs on the calling thread.
pub(crate) fn read_ahead<T, J, C>(n: usize, job: J, mut consume: C) -> crate::error::Result<()>
where
    T: Send,
    J: Fn(usize, &mut Vec<u8>) -> crate::error::Result<T> + Sync,
    C: FnMut(usize, crate::error::Result<T>, &[u8]) -> crate::error::Result<()>,
{
    use std::sync::mpsc::{channel, sync_channel};
    if n < 2 || crate::settings::single_threaded() {
        let mut buf = Vec::new();
        for i in 0..n {
            let r = job(i, &mut buf);
            consume(i, r, &buf)?;
        }
        return Ok(());
    }
    let readers = READERS.min(n);
    std::thread::scope(|sc| {
        let mut ready = Vec::with_capacity(readers);
        let mut spent = Vec::with_capacity(readers);
        for k in 0..readers {
            let (tx, rx) = sync_channel::<(crate::error::Result<T>, Vec<u8>)>(2);
            let (back_tx, back_rx) = channel::<Vec<u8>>();
            ready.push(rx);
            spent.push(back_tx);
            let job = &job;
            sc.spawn(move || {
                for i in (k..n).step_by(readers) {
                    let mut buf = back_rx.try_recv().unwrap_or_default();
                    let r = job(i, &mut buf);
                    // The receiver is gone when `consume` stopped early.
                    if tx.send((r, buf)).is_err() {
                        return;
                    }
                }
            });
        }
        for i in 0..n {
            let k = i % readers;
            let Ok((r, buf)) = ready[k].recv() else {
                // Only a panic in `job` ends a reader before its last region.
                return Err(crate::error::Error::Invalid(format!(
                    "the reader of region {i} stopped"
                )));
            };
            consume(i, r, &buf)?;
            let _ = spent[k].send(buf);
        }
        Ok(())
    })
}

#[cfg(unix)]
fn pread(file: &File, buf: &mut [u8], pos: u64) -> std::io::Result<usize> {
    use std::os::unix::fs::FileExt;
    loop {
        match file.read_at(buf, pos) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            r => return r,
        }
    }
}

#[cfg(windows)]
fn pread(file: &File, buf: &mut [u8], pos: u64) -> std::io::Result<usize> {
    use std::os::windows::fs::FileExt;
    file.seek_read(buf, pos)
}

/// What the opening steps found, before it becomes a [`Bag`].
#[derive(Default)]
pub(crate) struct Opened {
    pub summary: Summary,
    pub index_pos: u64,
    pub tables: Option<MessageTables>,
    /// MCAP: the header's profile (`ros1`, `ros2`, ...).
    pub profile: String,
    /// rosbag2 SQLite: the row scan that completes `summary` (blocks, exact counts and times)
    /// and gives `tables`, left for the first call that needs them (`summary` is then
    /// metadata.yaml's, checked against the database: see [`rosbag2::Deferred`]).
    pub deferred: Option<rosbag2::Deferred>,
}

/// What a storage needs from the open recording above it while building its message tables:
/// the summary, its files and its (cached) chunk data. [`crate::Bag`] implements it.
pub(crate) trait ChunkReader {
    /// The summary.
    fn summary(&self) -> &Summary;
    /// The storage file that holds chunk `ch`.
    fn source(&self, ch: &Chunk) -> crate::error::Result<&Source>;
    /// The uncompressed data of chunk `idx`.
    fn chunk_data(&self, idx: usize) -> crate::error::Result<Arc<Vec<u8>>>;
    /// The first storage file.
    fn file(&self) -> &Source;
    /// ROS 1 2.0: the offset of the index section.
    fn index_pos(&self) -> u64;
}

/// A read window over a source, so that a scan of many small records reads in large blocks.
pub(crate) struct ReadWindow<'a> {
    src: &'a Source,
    size: u64,
    start: u64,
    buf: Vec<u8>,
}

impl<'a> ReadWindow<'a> {
    pub(crate) fn new(src: &'a Source, size: u64) -> Self {
        ReadWindow {
            src,
            size,
            start: 0,
            buf: Vec::new(),
        }
    }
    /// Up to `len` bytes at `pos` (fewer at the end of the file).
    pub(crate) fn get(&mut self, pos: u64, len: usize) -> crate::error::Result<&[u8]> {
        let end = pos.saturating_add(len as u64).min(self.size);
        if pos < self.start || end > self.start + self.buf.len() as u64 {
            let want = (len as u64).max(1 << 20).min(self.size.saturating_sub(pos));
            self.buf = read_at(self.src, pos, want as usize)?;
            self.start = pos;
        }
        let a = (pos - self.start) as usize;
        let b = ((end - self.start) as usize).min(self.buf.len()).max(a);
        Ok(&self.buf[a..b])
    }
}

/// What a path turned out to be: a recording opened already (a rosbag2 directory, its
/// `metadata.yaml`, a storage file of one), or a single file for [`open_file`] (a ROS 1 bag,
/// an MCAP file), which the index cache may stand in for.
pub(crate) enum Recognised {
    Opened(Vec<Source>, Box<Opened>),
    File(Source),
}

/// Recognises a recording by its content (not its name) and opens what is not a single ROS 1
/// bag or MCAP file.
pub(crate) fn recognise(path: &Path) -> Result<Recognised> {
    if path.is_dir() {
        let (files, opened) = rosbag2::open_dir(path)?;
        return Ok(Recognised::Opened(files, Box::new(opened)));
    }
    let file = File::open(path).map_err(|e| Error::Open {
        path: path.to_path_buf(),
        source: e,
    })?;
    let src = Source::File(file);
    let head = read_at(&src, 0, 64)?;
    if head.starts_with(rosbag2::SQLITE_MAGIC) || head.starts_with(rosbag2::ZSTD_MAGIC) {
        let (files, opened) = rosbag2::open_file(path)?;
        return Ok(Recognised::Opened(files, Box::new(opened)));
    }
    if rosbag2::looks_like_metadata(path, &head) {
        let dir = path.parent().unwrap_or(Path::new("."));
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        let (files, opened) = rosbag2::open_dir(dir)?;
        return Ok(Recognised::Opened(files, Box::new(opened)));
    }
    Ok(Recognised::File(src))
}

/// Opens a single ROS 1 bag (any version) or MCAP file, recognised by its first bytes.
pub(crate) fn open_file(path: &Path, file: &Source) -> Result<Opened> {
    let file_size = file.len()?;
    let head = read_at(file, 0, 64)?;
    if head.starts_with(mcap::MAGIC) {
        let mut opened = mcap::open(file, path, file_size)?;
        if opened.profile == "ros2" && opened.summary.metadata.iter().any(|m| m.0 == "rosbag2") {
            opened.summary.warnings.insert(
                0,
                "single storage file, no metadata.yaml: a rosbag2 MCAP file opened on its own"
                    .into(),
            );
        }
        return Ok(opened);
    }
    if head.starts_with(b"\x89MCAP") {
        let shown: Vec<String> = head.iter().take(8).map(|b| format!("{b:02X}")).collect();
        return Err(Error::Malformed {
            kind: RecordKind::Magic,
            at: Location::File(0),
            reason: format!(
                "an MCAP file whose magic is damaged: {} instead of 89 4D 43 41 50 30 0D 0A (a CR LF turned into LF by a line-ending conversion shifts every offset after it); it cannot be read",
                shown.join(" ")
            ),
        });
    }
    let version = match ros1::classify_magic(&head) {
        Ok(v) => v,
        Err(e) => match ros1::old::classify(&read_at(file, 0, 1024)?) {
            Some(v) => v,
            None => return Err(e),
        },
    };
    let opened = match version {
        Version::V2_0 => ros1::open_v2(file, path, file_size)?,
        Version::V1_2 => ros1::v12::open(file, path, file_size)?,
        Version::V1_1 | Version::V1_0 | Version::V0 => {
            ros1::old::open(file, path, file_size, version)?
        }
        _ => return Err(Error::Invalid("not a ROS 1 bag".into())),
    };
    // A complete bag with no messages (indexed, zero connections) opens, as rosbag does;
    // a file cut off right after its header has neither index nor records: an error.
    let s = &opened.summary;
    if !s.indexed && s.connections.is_empty() && s.chunks.is_empty() && s.message_count == 0 {
        return Err(Error::HeaderOnly { size: file_size });
    }
    Ok(opened)
}

/// Slices the message at `entry` out of the decompressed data of chunk `ch`, as the chunk's
/// storage lays its records out; `None` for a format 1.2 "chunk", whose messages are read one
/// by one from the file.
pub(crate) fn message_in_data(
    buf: Arc<Vec<u8>>,
    ch: &Chunk,
    conn: usize,
    entry: IndexEntry,
) -> Option<Result<Message>> {
    Some(match ch.kind {
        ChunkKind::Ros1 => ros1::message_in_chunk(buf, ch.pos, conn, entry),
        ChunkKind::Mcap => mcap::message_in_records(buf, ch.pos, conn, entry),
        ChunkKind::Rows => rosbag2::message_in_rows(buf, ch, conn, entry),
        ChunkKind::Ros1Old => ros1::old::message_in_stretch(buf, ch.pos, conn, entry),
        ChunkKind::Ros1Raw => return None,
    })
}

/// Where chunk `ch`'s data lies and how it is compressed: from the summary when it knows
/// (MCAP chunk indexes, scans), else from the chunk record's header in the file (a ROS 1
/// index names only the chunk's position); `index_pos` bounds the record.
pub(crate) fn chunk_layout(src: &Source, ch: &Chunk, index_pos: u64) -> Result<ChunkLayout> {
    match ch.layout() {
        Some(l) => Ok(l),
        None => ros1::read_chunk_layout(src, ch.pos, index_pos),
    }
}

/// The bytes of chunk `ch` for storages that are not chunk records with a compression (SQLite
/// row blocks, format 1.2 raw segments); `None` for the rest, read through their chunk layout.
pub(crate) fn read_unframed(src: &Source, ch: &Chunk) -> Option<Result<Vec<u8>>> {
    match ch.kind {
        ChunkKind::Rows => Some(rosbag2::read_rows(src, ch, None)),
        ChunkKind::Ros1Raw => {
            Some(read_at(src, ch.data_pos, ch.data_len as usize).map_err(Error::from))
        }
        _ => None,
    }
}

/// The bytes of chunk `ch` holding (at least) the messages of connections `conns`, for the
/// storages that can read only those (SQLite row blocks: their topics' rows); `None` for the
/// rest, read whole.
pub(crate) fn read_for_connections(
    src: &Source,
    s: &Summary,
    ch: &Chunk,
    conns: &[usize],
) -> Option<Result<Vec<u8>>> {
    if ch.kind != ChunkKind::Rows {
        return None;
    }
    let mut ids: Vec<i64> = conns
        .iter()
        .filter_map(|&c| s.connections.get(c))
        .filter(|c| c.file == ch.file)
        .map(|c| i64::from(c.id))
        .collect();
    ids.sort_unstable();
    ids.dedup();
    Some(rosbag2::read_rows(src, ch, Some(&ids)))
}

/// The message at `entry` of a chunk read message by message from the file (format 1.2);
/// `None` for the other kinds, whose messages come out of the chunk's data.
pub(crate) fn read_message_alone(
    src: &Source,
    ch: &Chunk,
    entry: IndexEntry,
) -> Option<Result<Vec<u8>>> {
    (ch.kind == ChunkKind::Ros1Raw)
        .then(|| ros1::v12::read_message(src, ch.data_pos + u64::from(entry.offset)))
}

/// The length of the message record whose first bytes are `head`, in an uncompressed chunk of
/// `kind` (see [`ChunkKind::records_alone`]); `None` when the head does not frame one.
pub(crate) fn record_len(kind: ChunkKind, head: &[u8]) -> Option<u64> {
    match kind {
        ChunkKind::Ros1 => {
            let hlen = u64::from(ros1::record::le_u32(head, 0)?);
            let dlen = u64::from(ros1::record::le_u32(head, 4 + hlen as usize)?);
            Some(8 + hlen + dlen)
        }
        ChunkKind::Mcap => Some(9 + ros1::record::le_u64(head, 1)?),
        _ => None,
    }
}

/// The message in one record read alone (at offset 0 of `rec`) from chunk `ch`.
pub(crate) fn message_in_record(
    rec: Arc<Vec<u8>>,
    ch: &Chunk,
    conn: usize,
    entry: IndexEntry,
) -> Option<Message> {
    let at0 = IndexEntry { offset: 0, ..entry };
    let m = match ch.kind {
        ChunkKind::Ros1 => ros1::message_in_chunk(rec, ch.pos, conn, at0),
        ChunkKind::Mcap => mcap::message_in_records(rec, ch.pos, conn, at0),
        _ => return None,
    };
    m.ok().map(|m| Message { entry, ..m })
}

/// How a check reads a recording's messages, as its storage lays them out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckRead {
    /// Format 1.2: no chunks; every message is read through the tables.
    OneByOne,
    /// Chunks (ROS 1 2.0, MCAP) read record by record and compared with the index by a count
    /// and a digest per chunk ([`chunk_messages`]).
    Records,
    /// Through the tables: SQLite row blocks, the formats before 1.2.
    Tables,
}

/// How a check reads the recording `s` describes.
pub fn check_read(s: &Summary) -> CheckRead {
    if s.chunks.iter().any(|c| c.kind == ChunkKind::Ros1Raw) {
        return CheckRead::OneByOne;
    }
    let mcap = s.chunks.iter().all(|c| c.kind == ChunkKind::Mcap);
    if matches!(s.version, Version::V2_0 | Version::V1_2) || mcap {
        CheckRead::Records
    } else {
        CheckRead::Tables
    }
}

/// Every message record of a chunk's decompressed data (ROS 1 or MCAP records), with its
/// connection id, table entry and bytes: what a check compares with the index.
pub fn chunk_messages(
    ch: &Chunk,
    data: &[u8],
    f: impl FnMut(u32, IndexEntry, &[u8]),
) -> crate::error::Result<()> {
    match ch.kind {
        ChunkKind::Mcap => mcap::scan_chunk_messages(data, ch.pos, f),
        _ => ros1::scan_chunk_messages(data, ch.pos, f),
    }
}

/// Whether a definition a connection lacks is damage: in a ROS 1 bag (2.0, 1.2) every
/// connection carries its definition; other storages may leave it out (`info` says so).
pub fn definitions_required(s: &Summary) -> bool {
    matches!(s.version, Version::V2_0 | Version::V1_2)
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
        read_ahead(1000, job, |i, r, buf| {
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
        let r = read_ahead(1000, job, |i, r, _| {
            last = i;
            r.map(|_| ())
        });
        assert!(matches!(r, Err(Error::Invalid(m)) if m == "region 77"));
        assert_eq!(last, 77);
        // One region, none: no thread, no call.
        let mut n = 0;
        read_ahead(1, job, |_, _, _| {
            n += 1;
            Ok(())
        })
        .unwrap();
        read_ahead(0, job, |_, _, _| unreachable!()).unwrap();
        assert_eq!(n, 1);
    }
}
