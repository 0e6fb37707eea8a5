//! Opening a bag: the summary, the message tables and message access.
//!
//! [`Bag::open`] reads only the bag header and the index section of an indexed 2.0 bag, so
//! topics, counts and the time range are known after O(chunks) bytes. The message tables are
//! built on demand from the index data records after each chunk, without decompressing chunks.
//! Unindexed and damaged bags are recovered by the linear scan in [`crate::scan`].

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use crate::chunk;
use crate::error::{Error, Location, RecordKind, Result};
use crate::record::{
    self, frame_record, le_u32, op, BagHeader, ChunkHeader, ChunkInfoRecord, ChunkRecord,
    Compression, ConnectionRecord, IndexDataHeader, INDEX_ENTRY_V1,
};

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
    /// QoS profiles the publishers offered (rosbag2), as recorded.
    pub qos: String,
    /// Index of the storage file that defines it, into [`Summary::files`] (split recordings).
    pub file: u32,
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
    pub counts: Vec<(usize, u32)>,
    /// Compression of the chunk data.
    pub compression: Compression,
    /// File offset of the chunk's (compressed) data.
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

impl Chunk {
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
}

impl Summary {
    /// Chunks per compression name.
    pub fn compression_counts(&self) -> BTreeMap<&'static str, usize> {
        let mut m = BTreeMap::new();
        for c in self
            .chunks
            .iter()
            .filter(|c| matches!(c.kind, ChunkKind::Ros1 | ChunkKind::Mcap))
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

    /// The topic named `name`.
    pub fn topic(&self, name: &str) -> Option<&Topic> {
        self.topics
            .binary_search_by(|t| t.name.as_str().cmp(name))
            .ok()
            .map(|i| &self.topics[i])
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
        for c in &mut self.connections {
            c.message_count = 0;
        }
        let (mut start, mut end) = (u64::MAX, 0u64);
        for ch in &self.chunks {
            for &(ci, n) in &ch.counts {
                if let Some(c) = self.connections.get_mut(ci) {
                    c.message_count += u64::from(n);
                }
            }
            if ch.message_count() > 0 {
                start = start.min(ch.start_ns);
                end = end.max(ch.end_ns);
            }
        }
        self.message_count = self.connections.iter().map(|c| c.message_count).sum();
        if self.message_count > 0 {
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

/// Bounded cache of decompressed chunks, least recently used evicted first.
struct ChunkCache {
    map: HashMap<u32, (Arc<Vec<u8>>, u64)>,
    bytes: usize,
    tick: u64,
    budget: usize,
}

impl ChunkCache {
    fn get(&mut self, k: u32) -> Option<Arc<Vec<u8>>> {
        self.tick += 1;
        let t = self.tick;
        self.map.get_mut(&k).map(|e| {
            e.1 = t;
            e.0.clone()
        })
    }
    fn put(&mut self, k: u32, v: Arc<Vec<u8>>) {
        self.tick += 1;
        self.bytes += v.len();
        if let Some(old) = self.map.insert(k, (v, self.tick)) {
            self.bytes -= old.0.len();
        }
        while self.bytes > self.budget && self.map.len() > 1 {
            let Some((&oldest, _)) = self.map.iter().min_by_key(|(_, e)| e.1) else {
                break;
            };
            if let Some(e) = self.map.remove(&oldest) {
                self.bytes -= e.0.len();
            }
        }
    }
}

pub(crate) struct Inner {
    /// The storage files, indexed like [`Summary::files`].
    pub(crate) files: Vec<Source>,
    pub(crate) summary: Summary,
    /// Byte offset of the index section (index_pos), for the region after the last chunk.
    pub(crate) index_pos: u64,
    tables: OnceLock<Arc<MessageTables>>,
    cache: Mutex<ChunkCache>,
}

/// An open bag: cheap to clone and share between threads. The file is opened read-only.
#[derive(Clone)]
pub struct Bag {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for Bag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bag")
            .field("path", &self.inner.summary.path)
            .finish()
    }
}

/// Where a bag's bytes come from: a file opened read-only, or bytes in memory.
pub(crate) enum Source {
    /// A file, read with positioned reads (shared by threads without a lock).
    File(File),
    /// Bytes in memory.
    Memory(Arc<[u8]>),
    /// A SQLite database opened read-only (rosbag2).
    Sqlite(Box<crate::rosbag2::SqliteSource>),
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

/// Reads up to `len` bytes at `pos` (fewer at the end of the file).
pub(crate) fn read_at(src: &Source, pos: u64, len: usize) -> std::io::Result<Vec<u8>> {
    let file = match src {
        Source::File(f) => f,
        Source::Memory(b) => {
            let start = pos.min(b.len() as u64) as usize;
            let end = start.saturating_add(len).min(b.len());
            return Ok(b[start..end].to_vec());
        }
        Source::Sqlite(..) => {
            return Err(std::io::Error::new(
                std::io::ErrorKind::Unsupported,
                "a SQLite storage is read by rows, not bytes",
            ))
        }
    };
    let mut buf = vec![0u8; len];
    let mut filled = 0;
    while filled < len {
        let n = pread(file, &mut buf[filled..], pos + filled as u64)?;
        if n == 0 {
            break;
        }
        filled += n;
    }
    buf.truncate(filled);
    Ok(buf)
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
}

/// Default budget of the decompressed chunk cache.
pub const DEFAULT_CACHE_BYTES: usize = 256 << 20;

/// The magic line at the start of a file, classified.
fn classify_magic(head: &[u8]) -> Result<Version> {
    if head.is_empty() {
        return Err(Error::EmptyFile);
    }
    if head.starts_with(record::MAGIC_V2) {
        return Ok(Version::V2_0);
    }
    if head.starts_with(record::MAGIC_V12) {
        return Ok(Version::V1_2);
    }
    if head.starts_with(b"#ROSRECORD V1.1") || head.starts_with(b"#ROSLOG V1.1") {
        return Ok(Version::V1_1);
    }
    if head.starts_with(b"#ROSLOG V1.0") || head.starts_with(b"##MULTILOG##") {
        return Ok(Version::V1_0);
    }
    for (magic, version) in [
        (&b"#ROSBAG V"[..], "2.x (unknown minor version)"),
        (b"#ROSRECORD V", "1.x (unknown minor version)"),
    ] {
        if head.starts_with(magic) {
            return Err(Error::UnsupportedVersion {
                version: version.into(),
            });
        }
    }
    let line: Vec<u8> = head.iter().take(24).copied().collect();
    Err(Error::NotABag {
        start: String::from_utf8_lossy(&line).escape_debug().to_string(),
    })
}

impl Bag {
    /// Opens a bag read-only and reads its summary: from the index when it is complete,
    /// otherwise by a linear scan that recovers what it can and records warnings.
    ///
    /// `path` may be a ROS 1 bag, an MCAP file, a rosbag2 directory or its `metadata.yaml`, a
    /// single rosbag2 storage file (`.db3`), or a zstd-compressed `.db3.zstd`/`.mcap.zstd`;
    /// the format is recognised by content, not by the name.
    pub fn open(path: impl AsRef<Path>) -> Result<Bag> {
        let path = path.as_ref();
        if path.is_dir() {
            return crate::rosbag2::open_dir(path);
        }
        let file = File::open(path).map_err(|e| Error::Open {
            path: path.to_path_buf(),
            source: e,
        })?;
        let src = Source::File(file);
        let head = read_at(&src, 0, 64)?;
        if head.starts_with(crate::rosbag2::SQLITE_MAGIC)
            || head.starts_with(crate::rosbag2::ZSTD_MAGIC)
        {
            return crate::rosbag2::open_file(path);
        }
        if crate::rosbag2::looks_like_metadata(path, &head) {
            let dir = path.parent().unwrap_or(Path::new("."));
            return crate::rosbag2::open_dir(if dir.as_os_str().is_empty() {
                Path::new(".")
            } else {
                dir
            });
        }
        Bag::open_source(path, src)
    }

    /// Opens a bag held in memory (`name` stands for its path in messages): what the fuzz
    /// targets use, and a way to read a bag that is not a file.
    pub fn from_bytes(name: impl AsRef<Path>, bytes: Vec<u8>) -> Result<Bag> {
        Bag::open_source(name.as_ref(), Source::Memory(bytes.into()))
    }

    fn open_source(path: &Path, file: Source) -> Result<Bag> {
        let file_size = file.len()?;
        let head = read_at(&file, 0, 64)?;
        if head.starts_with(crate::mcap::MAGIC) {
            let mut opened = crate::mcap::open(&file, path, file_size)?;
            if opened.profile == "ros2" && opened.summary.metadata.iter().any(|m| m.0 == "rosbag2")
            {
                opened.summary.warnings.insert(
                    0,
                    "single storage file, no metadata.yaml: a rosbag2 MCAP file opened on its own"
                        .into(),
                );
            }
            return Ok(Bag::from_opened(vec![file], opened));
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
        let version = match classify_magic(&head) {
            Ok(v) => v,
            Err(e) => match crate::old::classify(&read_at(&file, 0, 1024)?) {
                Some(v) => v,
                None => return Err(e),
            },
        };
        let opened = match version {
            Version::V2_0 => open_v2(&file, path, file_size)?,
            Version::V1_2 => crate::v12::open(&file, path, file_size)?,
            Version::V1_1 | Version::V1_0 | Version::V0 => {
                crate::old::open(&file, path, file_size, version)?
            }
            _ => return Err(Error::Invalid("not a ROS 1 bag".into())),
        };
        // A complete bag with no messages (indexed, zero connections) opens, as rosbag does;
        // a file cut off right after its header has neither index nor records: an error.
        let s = &opened.summary;
        if !s.indexed && s.connections.is_empty() && s.chunks.is_empty() && s.message_count == 0 {
            return Err(Error::HeaderOnly { size: file_size });
        }
        Ok(Bag::from_opened(vec![file], opened))
    }

    pub(crate) fn from_opened(files: Vec<Source>, mut opened: Opened) -> Bag {
        let tables = OnceLock::new();
        if opened.summary.files.is_empty() {
            opened.summary.files.push(opened.summary.path.clone());
        }
        if let Some(mut t) = opened.tables {
            t.sort();
            let _ = tables.set(Arc::new(t));
        }
        Bag {
            inner: Arc::new(Inner {
                files,
                summary: opened.summary,
                index_pos: opened.index_pos,
                tables,
                cache: Mutex::new(ChunkCache {
                    map: HashMap::new(),
                    bytes: 0,
                    tick: 0,
                    budget: DEFAULT_CACHE_BYTES,
                }),
            }),
        }
    }

    /// What the index says: connections, chunks, topics, counts, time range, warnings.
    pub fn summary(&self) -> &Summary {
        &self.inner.summary
    }

    /// Every warning: the summary's, then those of the message tables once built.
    pub fn warnings(&self) -> Vec<String> {
        let mut w = self.inner.summary.warnings.clone();
        if let Some(t) = self.inner.tables.get() {
            w.extend(t.warnings.iter().cloned());
        }
        w
    }

    /// The message tables if they have been built already.
    pub fn tables_if_built(&self) -> Option<Arc<MessageTables>> {
        self.inner.tables.get().cloned()
    }

    /// The message tables, built now if needed (from index data records, without
    /// decompressing chunks whose index is sound).
    pub fn tables(&self) -> Result<Arc<MessageTables>> {
        if let Some(t) = self.inner.tables.get() {
            return Ok(t.clone());
        }
        self.build_tables(&mut |_, _| true)
    }

    /// Builds the message tables, calling `progress` after each chunk with that chunk's entries;
    /// `progress` returns false to cancel ([`Error::Cancelled`]). Returns the tables and any
    /// warnings about chunks whose index had to be rebuilt from their content.
    pub fn build_tables(
        &self,
        progress: &mut dyn FnMut(TablesProgress, &ChunkEntries) -> bool,
    ) -> Result<Arc<MessageTables>> {
        if let Some(t) = self.inner.tables.get() {
            // Already known (recovered bags are scanned whole at open): replay per chunk.
            let s = &self.inner.summary;
            let mut per_chunk: Vec<Vec<(usize, IndexEntry)>> = vec![Vec::new(); s.chunks.len()];
            for (ci, tab) in t.per_connection.iter().enumerate() {
                for e in tab {
                    if let Some(v) = per_chunk.get_mut(e.chunk as usize) {
                        v.push((ci, *e));
                    }
                }
            }
            let mut bytes = 0;
            for (i, entries) in per_chunk.into_iter().enumerate() {
                bytes += s.chunks[i].data_len;
                let p = TablesProgress {
                    chunks_done: i + 1,
                    chunks_total: s.chunks.len(),
                    bytes_done: bytes,
                };
                if !progress(p, &ChunkEntries { chunk: i, entries }) {
                    return Err(Error::Cancelled);
                }
            }
            return Ok(t.clone());
        }
        let tables = Arc::new(if self.inner.summary.version.is_ros1() {
            crate::tables::build(self, progress)?
        } else {
            crate::mcap::build_tables(self, progress)?
        });
        let _ = self.inner.tables.set(tables.clone());
        Ok(self.inner.tables.get().cloned().unwrap_or(tables))
    }

    /// The uncompressed data of chunk `idx`, through the bounded cache.
    pub fn chunk_data(&self, idx: usize) -> Result<Arc<Vec<u8>>> {
        let key = u32::try_from(idx).map_err(|_| Error::NotFound(format!("no chunk {idx}")))?;
        if let Ok(mut c) = self.inner.cache.lock() {
            if let Some(d) = c.get(key) {
                return Ok(d);
            }
        }
        let d = Arc::new(self.decompress_chunk(idx)?);
        if let Ok(mut c) = self.inner.cache.lock() {
            c.put(key, d.clone());
        }
        Ok(d)
    }

    /// Reads and decompresses chunk `idx` without the cache.
    pub fn decompress_chunk(&self, idx: usize) -> Result<Vec<u8>> {
        let ch = self
            .inner
            .summary
            .chunks
            .get(idx)
            .ok_or_else(|| Error::NotFound(format!("no chunk {idx}")))?;
        let file = self.source(ch)?;
        if ch.kind == ChunkKind::Rows {
            return crate::rosbag2::read_rows(file, ch, None);
        }
        if ch.kind == ChunkKind::Ros1Raw {
            return Ok(read_at(file, ch.data_pos, ch.data_len as usize)?);
        }
        let raw = read_at(file, ch.data_pos, ch.data_len as usize)?;
        if (raw.len() as u64) < ch.data_len {
            return Err(Error::Truncated {
                kind: RecordKind::Chunk,
                at: Location::File(ch.pos),
                needed: ch.data_len,
                available: raw.len() as u64,
            });
        }
        Ok(
            match chunk::decompress(ch.compression, &raw, ch.size, ch.pos)? {
                std::borrow::Cow::Borrowed(_) => raw,
                std::borrow::Cow::Owned(v) => v,
            },
        )
    }

    /// Like [`Bag::decompress_chunk`], but only the messages of connections `conns` need be
    /// readable in the result (a SQLite storage then reads only their rows). Not cached.
    pub fn read_chunk_for(&self, idx: usize, conns: &[usize]) -> Result<Vec<u8>> {
        let s = &self.inner.summary;
        let ch = s
            .chunks
            .get(idx)
            .ok_or_else(|| Error::NotFound(format!("no chunk {idx}")))?;
        if ch.kind != ChunkKind::Rows {
            return self.decompress_chunk(idx);
        }
        let mut ids: Vec<i64> = conns
            .iter()
            .filter_map(|&c| s.connections.get(c))
            .filter(|c| c.file == ch.file)
            .map(|c| i64::from(c.id))
            .collect();
        ids.sort_unstable();
        ids.dedup();
        crate::rosbag2::read_rows(self.source(ch)?, ch, Some(&ids))
    }

    /// The storage file that holds chunk `ch`.
    pub(crate) fn source(&self, ch: &Chunk) -> Result<&Source> {
        self.inner
            .files
            .get(ch.file as usize)
            .ok_or_else(|| Error::NotFound(format!("no storage file {}", ch.file)))
    }

    /// Reads the message at `entry` of connection `conn`.
    pub fn message(&self, conn: usize, entry: IndexEntry) -> Result<Message> {
        let ch = self
            .inner
            .summary
            .chunks
            .get(entry.chunk as usize)
            .ok_or_else(|| Error::NotFound(format!("no chunk {}", entry.chunk)))?;
        if ch.kind == ChunkKind::Ros1Raw {
            let data =
                crate::v12::read_message(self.source(ch)?, ch.data_pos + u64::from(entry.offset))?;
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

    /// Whether a chunk's messages are read from its decompressed data (all but the raw
    /// segments of format 1.2, which are read message by message).
    pub(crate) fn chunk_is_buffered(&self, chunk: u32) -> bool {
        self.inner
            .summary
            .chunks
            .get(chunk as usize)
            .is_some_and(|c| c.kind != ChunkKind::Ros1Raw)
    }

    /// Slices the message at `entry` out of the decompressed data of its chunk.
    pub(crate) fn message_in_buffer(
        &self,
        buf: Arc<Vec<u8>>,
        conn: usize,
        entry: IndexEntry,
    ) -> Result<Message> {
        let ch = self
            .inner
            .summary
            .chunks
            .get(entry.chunk as usize)
            .ok_or_else(|| Error::NotFound(format!("no chunk {}", entry.chunk)))?;
        match ch.kind {
            ChunkKind::Ros1 => message_in_chunk(buf, ch.pos, conn, entry),
            ChunkKind::Mcap => crate::mcap::message_in_records(buf, ch.pos, conn, entry),
            ChunkKind::Rows => crate::rosbag2::message_in_rows(buf, ch, conn, entry),
            ChunkKind::Ros1Old => crate::old::message_in_stretch(buf, ch.pos, conn, entry),
            ChunkKind::Ros1Raw => self.message(conn, entry),
        }
    }

    /// The `n`-th message (time order) of connection `conn`, without scanning its chunk.
    pub fn nth_message(&self, conn: usize, n: usize) -> Result<Message> {
        let t = self.tables()?;
        let e = t
            .per_connection
            .get(conn)
            .and_then(|v| v.get(n))
            .ok_or_else(|| Error::NotFound(format!("connection {conn} has no message {n}")))?;
        self.message(conn, *e)
    }

    /// Connection indexes of the topics named.
    pub fn connections_of_topics<S: AsRef<str>>(&self, topics: &[S]) -> Result<Vec<usize>> {
        let mut out = Vec::new();
        for t in topics {
            let topic = self
                .summary()
                .topic(t.as_ref())
                .ok_or_else(|| Error::NotFound(format!("no topic {:?} in the bag", t.as_ref())))?;
            out.extend_from_slice(&topic.connections);
        }
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }

    /// Messages matching `filter`, in time order across chunks, decompressing ahead on
    /// `threads` background threads.
    pub fn messages(&self, filter: &Filter) -> Result<crate::iter::Messages> {
        crate::iter::Messages::new(self.clone(), filter, crate::iter::default_threads())
    }

    pub(crate) fn file(&self) -> &Source {
        &self.inner.files[0]
    }

    pub(crate) fn index_pos(&self) -> u64 {
        self.inner.index_pos
    }
}

/// Slices the message record at `entry.offset` out of a decompressed chunk.
pub(crate) fn message_in_chunk(
    buf: Arc<Vec<u8>>,
    chunk_pos: u64,
    conn: usize,
    entry: IndexEntry,
) -> Result<Message> {
    let off = entry.offset as usize;
    let at = Location::InChunk {
        chunk_pos,
        offset: off as u64,
    };
    let rec = frame_record(&buf, off, at)?;
    match ChunkRecord::parse(rec.header, at)? {
        ChunkRecord::Message(_) => {}
        ChunkRecord::Connection => return Err(not_a_message(at, op::CONNECTION)),
        ChunkRecord::Other(o) => return Err(not_a_message(at, o)),
    }
    let start = off + 4 + rec.header.len() + 4;
    let end = start + rec.data.len();
    Ok(Message {
        conn,
        time_ns: entry.time_ns,
        data: Bytes { buf, start, end },
        entry,
        publish_ns: entry.time_ns,
        sequence: 0,
    })
}

fn not_a_message(at: Location, found: u8) -> Error {
    Error::Malformed {
        kind: RecordKind::MessageData,
        at,
        reason: format!(
            "the index points here, but this record has op {found:#04x}, not a message"
        ),
    }
}

/// Opens a format 2.0 bag from its index, or recovers it by a linear scan.
fn open_v2(file: &Source, path: &Path, file_size: u64) -> Result<Opened> {
    let magic_len = record::MAGIC_V2.len() as u64;
    let head = read_at(file, magic_len, 8192)?;
    let at = Location::File(magic_len);
    let mut warnings = Vec::new();
    let header = match frame_record(&head, 0, at).and_then(|r| {
        let opc = record::header_op(r.header, at)?;
        if opc != op::BAG_HEADER {
            return Err(Error::Malformed {
                kind: RecordKind::BagHeader,
                at,
                reason: format!("the first record has op {opc:#04x}, not the bag header"),
            });
        }
        BagHeader::parse(r.header, at)
    }) {
        Ok(h) => Some(h),
        Err(e) => {
            // The bag header is padded to 4096 bytes; a file cut inside it still may have its
            // header fields, so try them before giving up on the index.
            warnings.push(format!("bag header: {e}"));
            None
        }
    };
    let Some(header) = header else {
        return crate::scan::scan_v2(file, path, file_size, None, warnings);
    };
    if header.index_pos == 0 {
        warnings.push(
            "not indexed (index_pos is 0: the recording was interrupted); recovered by a linear scan"
                .to_string(),
        );
        return crate::scan::scan_v2(file, path, file_size, Some(header), warnings);
    }
    if header.index_pos > file_size {
        warnings.push(format!(
            "index_pos {} is past the end of the file ({file_size} bytes): the file is truncated; recovered by a linear scan",
            header.index_pos
        ));
        return crate::scan::scan_v2(file, path, file_size, Some(header), warnings);
    }
    match read_index(file, path, file_size, &header) {
        Ok(mut o) => {
            o.summary.warnings.splice(0..0, warnings);
            if o.summary.message_count == 0 && o.summary.chunks.is_empty() && header.chunk_count > 0
            {
                // The header promises chunks the index does not list: look for them.
                let w = vec![format!(
                    "the bag header claims {} chunks but the index lists none; scanned the file",
                    header.chunk_count
                )];
                return crate::scan::scan_v2(file, path, file_size, Some(header), w);
            }
            o.summary.finish();
            Ok(o)
        }
        Err(e) => {
            warnings.push(format!("index section: {e}; recovered by a linear scan"));
            crate::scan::scan_v2(file, path, file_size, Some(header), warnings)
        }
    }
}

/// Largest index section read in one piece.
const MAX_INDEX_SECTION: u64 = 512 << 20;

/// Reads connections and chunk infos from the index section, then each chunk's header.
fn read_index(file: &Source, path: &Path, file_size: u64, header: &BagHeader) -> Result<Opened> {
    let len = file_size - header.index_pos;
    if len > MAX_INDEX_SECTION {
        return Err(Error::TooLarge {
            kind: RecordKind::Record,
            at: Location::File(header.index_pos),
            len,
            limit: MAX_INDEX_SECTION,
        });
    }
    let buf = read_at(file, header.index_pos, len as usize)?;
    let mut pos = 0usize;
    let mut conns: Vec<ConnectionRecord> = Vec::new();
    let mut infos: Vec<(u64, ChunkInfoRecord)> = Vec::new();
    let mut warnings = Vec::new();
    while pos < buf.len() {
        let at = Location::File(header.index_pos + pos as u64);
        let rec = frame_record(&buf, pos, at)?;
        match record::header_op(rec.header, at)? {
            op::CONNECTION => {
                let c = ConnectionRecord::parse(rec.header, rec.data, at)?;
                if !conns.iter().any(|x| x.conn == c.conn) {
                    conns.push(c);
                }
            }
            op::CHUNK_INFO => infos.push((
                header.index_pos + pos as u64,
                ChunkInfoRecord::parse(rec.header, rec.data, at)?,
            )),
            other => warnings.push(format!(
                "unexpected record with op {other:#04x} in the index section at byte {}; skipped",
                header.index_pos + pos as u64
            )),
        }
        pos += rec.len;
    }
    if infos.len() != header.chunk_count as usize {
        warnings.push(format!(
            "the bag header says {} chunks but the index has {} chunk infos",
            header.chunk_count,
            infos.len()
        ));
    }
    if conns.len() != header.conn_count as usize {
        warnings.push(format!(
            "the bag header says {} connections but the index has {}",
            header.conn_count,
            conns.len()
        ));
    }
    conns.sort_by_key(|c| c.conn);
    let conn_index: HashMap<u32, usize> =
        conns.iter().enumerate().map(|(i, c)| (c.conn, i)).collect();
    infos.sort_by_key(|(_, i)| i.chunk_pos);
    let mut chunks = Vec::with_capacity(infos.len());
    for (info_at, info) in infos {
        if info.chunk_pos >= header.index_pos {
            return Err(Error::Malformed {
                kind: RecordKind::ChunkInfo,
                at: Location::File(info_at),
                reason: format!(
                    "chunk_pos {} is not before the index section at {}",
                    info.chunk_pos, header.index_pos
                ),
            });
        }
        let at = Location::File(info.chunk_pos);
        let head = read_at(file, info.chunk_pos, 4096)?;
        let (hdr, data_pos, data_len) = chunk_header_at(&head, info.chunk_pos)?;
        if data_pos + data_len > header.index_pos {
            return Err(Error::Truncated {
                kind: RecordKind::Chunk,
                at,
                needed: data_pos + data_len - info.chunk_pos,
                available: header.index_pos - info.chunk_pos,
            });
        }
        let mut counts = Vec::with_capacity(info.counts.len());
        for (id, n) in info.counts {
            match conn_index.get(&id) {
                Some(&ci) => counts.push((ci, n)),
                None => {
                    return Err(Error::Malformed {
                        kind: RecordKind::ChunkInfo,
                        at: Location::File(info_at),
                        reason: format!("names connection {id}, which the index does not define"),
                    })
                }
            }
        }
        chunks.push(Chunk {
            pos: info.chunk_pos,
            start_ns: info.start_ns,
            end_ns: info.end_ns,
            counts,
            compression: hdr.compression,
            data_pos,
            data_len,
            size: hdr.size,
            ..Default::default()
        });
    }
    let connections = conns
        .into_iter()
        .map(|c| Connection {
            id: c.conn,
            topic: c.topic,
            datatype: c.datatype,
            md5sum: c.md5sum,
            message_definition: c.message_definition,
            callerid: c.callerid,
            latching: c.latching,
            message_count: 0,
            encoding: "ros1".into(),
            schema_encoding: "ros1msg".into(),
            ..Default::default()
        })
        .collect();
    Ok(Opened {
        profile: String::new(),
        summary: Summary {
            path: path.to_path_buf(),
            file_size,
            version: Version::V2_0,
            indexed: true,
            connections,
            chunks,
            topics: Vec::new(),
            message_count: 0,
            start_ns: None,
            end_ns: None,
            warnings,
            ..Default::default()
        },
        index_pos: header.index_pos,
        tables: None,
    })
}

/// Parses the chunk record header at the start of `head` (read from file offset `pos`):
/// returns the header, the file offset of its data and the data length.
pub(crate) fn chunk_header_at(head: &[u8], pos: u64) -> Result<(ChunkHeader, u64, u64)> {
    let at = Location::File(pos);
    let hlen = le_u32(head, 0).ok_or(Error::Truncated {
        kind: RecordKind::Chunk,
        at,
        needed: 4,
        available: head.len() as u64,
    })? as usize;
    let dl = hlen
        .checked_add(4)
        .and_then(|p| le_u32(head, p))
        .ok_or(Error::Malformed {
            kind: RecordKind::Chunk,
            at,
            reason: format!("header length {hlen} is not plausible for a chunk"),
        })?;
    let h = &head[4..4 + hlen];
    let opc = record::header_op(h, at)?;
    if opc != op::CHUNK {
        return Err(Error::Malformed {
            kind: RecordKind::Chunk,
            at,
            reason: format!("expected a chunk (op 0x05), found op {opc:#04x}"),
        });
    }
    let ch = ChunkHeader::parse(h, at)?;
    Ok((ch, pos + 8 + hlen as u64, u64::from(dl)))
}

/// Parses the index data records in `region` (file offset `base`), mapping connection ids to
/// indexes. Returns the entries per connection index and how many bytes were consumed.
pub(crate) fn parse_index_region(
    region: &[u8],
    base: u64,
    chunk: u32,
    conn_index: &HashMap<u32, usize>,
    expected: &[(usize, u32)],
    out: &mut Vec<(usize, IndexEntry)>,
) -> Result<usize> {
    let mut pos = 0;
    let mut remaining: usize = expected.len();
    while remaining > 0 && pos < region.len() {
        let at = Location::File(base + pos as u64);
        let rec = frame_record(region, pos, at)?;
        if record::header_op(rec.header, at)? != op::INDEX_DATA {
            break;
        }
        let h = IndexDataHeader::parse(rec.header, at)?;
        if h.ver != 1 {
            return Err(Error::Malformed {
                kind: RecordKind::IndexData,
                at,
                reason: format!("index version {} (expected 1)", h.ver),
            });
        }
        let need = h.count as usize * INDEX_ENTRY_V1;
        if rec.data.len() != need {
            return Err(Error::Malformed {
                kind: RecordKind::IndexData,
                at,
                reason: format!(
                    "data has {} bytes but count {} needs {need}",
                    rec.data.len(),
                    h.count
                ),
            });
        }
        let ci = *conn_index.get(&h.conn).ok_or_else(|| Error::Malformed {
            kind: RecordKind::IndexData,
            at,
            reason: format!(
                "names connection {}, which the index does not define",
                h.conn
            ),
        })?;
        match expected.iter().find(|(c, _)| *c == ci) {
            Some(&(_, n)) if n == h.count => {}
            other => {
                return Err(Error::Malformed {
                    kind: RecordKind::IndexData,
                    at,
                    reason: format!(
                        "lists {} messages of connection {} but the chunk info says {}",
                        h.count,
                        h.conn,
                        other.map_or(0, |x| x.1)
                    ),
                })
            }
        }
        out.reserve(rec.data.len() / INDEX_ENTRY_V1);
        for e in rec.data.chunks_exact(INDEX_ENTRY_V1) {
            let t = record::time_ns(le_u32(e, 0).unwrap_or(0), le_u32(e, 4).unwrap_or(0));
            out.push((
                ci,
                IndexEntry {
                    time_ns: t,
                    chunk,
                    offset: le_u32(e, 8).unwrap_or(0),
                },
            ));
        }
        remaining -= 1;
        pos += rec.len;
    }
    if remaining > 0 {
        return Err(Error::Malformed {
            kind: RecordKind::IndexData,
            at: Location::File(base + pos as u64),
            reason: format!("{remaining} connections of the chunk have no index data record"),
        });
    }
    Ok(pos)
}

/// Calls `f(connection id, entry, message data)` for every message record of a decompressed
/// chunk (entries carry chunk 0: the caller knows the chunk).
pub fn scan_chunk_messages(
    data: &[u8],
    chunk_pos: u64,
    f: impl FnMut(u32, IndexEntry, &[u8]),
) -> Result<()> {
    scan_chunk(data, chunk_pos, 0, |_, _, _| Ok(()), f)
}

/// Scans the records of a decompressed chunk: connections and messages.
pub(crate) fn scan_chunk_records(
    data: &[u8],
    chunk_pos: u64,
    chunk: u32,
    mut on_conn: impl FnMut(ConnectionRecord),
    mut on_msg: impl FnMut(u32, IndexEntry),
) -> Result<()> {
    scan_chunk(
        data,
        chunk_pos,
        chunk,
        |h, d, at| {
            on_conn(ConnectionRecord::parse(h, d, at)?);
            Ok(())
        },
        |id, e, _| on_msg(id, e),
    )
}

/// The one loop over a decompressed chunk's records: connection records go to `on_conn`
/// (header, data), messages to `on_msg`; any other op is an error.
fn scan_chunk(
    data: &[u8],
    chunk_pos: u64,
    chunk: u32,
    mut on_conn: impl FnMut(&[u8], &[u8], Location) -> Result<()>,
    mut on_msg: impl FnMut(u32, IndexEntry, &[u8]),
) -> Result<()> {
    let mut pos = 0usize;
    while pos < data.len() {
        let at = Location::InChunk {
            chunk_pos,
            offset: pos as u64,
        };
        let rec = frame_record(data, pos, at)?;
        match ChunkRecord::parse(rec.header, at)? {
            ChunkRecord::Message(h) => {
                let offset = u32::try_from(pos).map_err(|_| Error::TooLarge {
                    kind: RecordKind::Chunk,
                    at,
                    len: pos as u64,
                    limit: u64::from(u32::MAX),
                })?;
                on_msg(
                    h.conn,
                    IndexEntry {
                        time_ns: h.time_ns,
                        chunk,
                        offset,
                    },
                    rec.data,
                );
            }
            ChunkRecord::Connection => on_conn(rec.header, rec.data, at)?,
            ChunkRecord::Other(other) => {
                return Err(Error::Malformed {
                    kind: RecordKind::Record,
                    at,
                    reason: format!("op {other:#04x} is not expected inside a chunk"),
                })
            }
        }
        pos += rec.len;
    }
    Ok(())
}
