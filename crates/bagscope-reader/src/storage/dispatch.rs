//! What depends on a storage's kind, answered in one place: recognising a file by its
//! content and opening it, and every question about a chunk's kind (where its data lies, how
//! its bytes are read, how a message is found in them, how a check reads it), so that the open
//! recording above never matches on a format.

use std::fs::File;
use std::path::Path;
use std::sync::Arc;

use super::{
    mcap, read_at, ros1, rosbag2, Chunk, ChunkEntries, ChunkKind, ChunkLayout, IndexEntry, Message,
    MessageTables, Source, Summary, TablesProgress, Version,
};
use crate::error::{Error, Location, RecordKind, Result};
use crate::OpenOptions;

#[cfg(feature = "remote")]
use super::remote;

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
    /// What must live as long as the recording (the local copy of a remote rosbag2
    /// directory's files).
    pub keep: Option<Arc<dyn std::any::Any + Send + Sync>>,
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
    /// The options the recording was opened with (threads).
    fn options(&self) -> &crate::OpenOptions;
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

/// The kind of recording at a local `path`, told as `recognise` tells it (by content, not by
/// name) but without opening it: `"ros1"` (a ROS 1 bag of any version), `"mcap"`, `"rosbag2"`
/// (a directory, its `metadata.yaml`, a SQLite or zstd storage file). `None` for a file whose
/// first bytes are no recording's, an empty one included. Only the first kilobyte is read.
pub fn sniff(path: &Path) -> std::io::Result<Option<&'static str>> {
    if path.is_dir() {
        return Ok(Some("rosbag2"));
    }
    let src = Source::File(File::open(path)?);
    let head = read_at(&src, 0, 1024).map_err(|e| std::io::Error::other(e.to_string()))?;
    Ok(if head.starts_with(b"\x89MCAP") {
        Some("mcap")
    } else if head.starts_with(rosbag2::SQLITE_MAGIC)
        || head.starts_with(rosbag2::ZSTD_MAGIC)
        || (!head.is_empty() && rosbag2::looks_like_metadata(path, &head))
    {
        Some("rosbag2")
    } else if head.starts_with(b"#ROS")
        || head.starts_with(b"##MULTILOG##")
        || ros1::old::classify(&head).is_some()
    {
        Some("ros1")
    } else {
        None
    })
}

/// Recognises a recording by its content (not its name) and opens what is not a single ROS 1
/// bag or MCAP file.
pub(crate) fn recognise(path: &Path, opts: &OpenOptions) -> Result<Recognised> {
    #[cfg(feature = "remote")]
    if remote::is_url(path) {
        return recognise_remote(path, opts);
    }
    if path.is_dir() {
        let (files, opened) = rosbag2::open_dir(path, opts)?;
        return Ok(Recognised::Opened(files, Box::new(opened)));
    }
    let file = File::open(path).map_err(|e| Error::Open {
        path: path.to_path_buf(),
        source: e,
    })?;
    let src = Source::File(file);
    let head = read_at(&src, 0, 64)?;
    if head.starts_with(rosbag2::SQLITE_MAGIC) || head.starts_with(rosbag2::ZSTD_MAGIC) {
        let (files, opened) = rosbag2::open_file(path, opts)?;
        return Ok(Recognised::Opened(files, Box::new(opened)));
    }
    if rosbag2::looks_like_metadata(path, &head) {
        let dir = path.parent().unwrap_or(Path::new("."));
        let dir = if dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            dir
        };
        let (files, opened) = rosbag2::open_dir(dir, opts)?;
        return Ok(Recognised::Opened(files, Box::new(opened)));
    }
    Ok(Recognised::File(src))
}

/// [`recognise`] for a remote location: an object read by ranges (a ROS 1 bag, an MCAP file),
/// or a rosbag2 recording (its prefix, its `metadata.yaml`, a storage file), whose files are
/// fetched into a temporary directory that lives as long as the recording.
#[cfg(feature = "remote")]
fn recognise_remote(path: &Path, opts: &OpenOptions) -> Result<Recognised> {
    let url = path.to_string_lossy().into_owned();
    let open_err = |e: std::io::Error| Error::Open {
        path: std::path::PathBuf::from(remote::shown(&url)),
        source: e,
    };
    let file = if url.ends_with('/') {
        None
    } else {
        match remote::RemoteFile::open(&url) {
            Ok(f) => Some(f),
            // No object there: a prefix (a rosbag2 directory), if anything.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(open_err(e)),
        }
    };
    let Some(file) = file else {
        return remote_dir(&url, None, opts);
    };
    let src = Source::Remote(Arc::new(file));
    let head = read_at(&src, 0, 64)?;
    let name = url.rsplit('/').next().unwrap_or("");
    if head.starts_with(rosbag2::SQLITE_MAGIC) || head.starts_with(rosbag2::ZSTD_MAGIC) {
        let dir = url.rsplit_once('/').map(|p| p.0).unwrap_or(&url);
        return remote_dir(dir, Some(name), opts);
    }
    if rosbag2::looks_like_metadata(Path::new(name), &head) {
        let dir = url.rsplit_once('/').map(|p| p.0).unwrap_or(&url);
        return remote_dir(dir, None, opts);
    }
    Ok(Recognised::File(src))
}

/// A remote rosbag2 recording: `metadata.yaml` and the storage files it lists (or, without
/// one, those under the prefix), or only the storage file `single`, fetched whole into a
/// temporary directory and opened from there; its paths are then the remote ones.
#[cfg(feature = "remote")]
fn remote_dir(dir_url: &str, single: Option<&str>, opts: &OpenOptions) -> Result<Recognised> {
    let base = dir_url.trim_end_matches('/');
    let shown_base = remote::shown(base);
    let open_err = |what: &str, e: std::io::Error| Error::Open {
        path: std::path::PathBuf::from(if what.is_empty() {
            shown_base.clone()
        } else {
            format!("{shown_base}/{what}")
        }),
        source: e,
    };
    let tmp = rosbag2::TempDir::new()?;
    let fetch = |name: &str| -> Result<()> {
        remote::download(&format!("{base}/{name}"), &tmp.0.join(name))
            .map_err(|e| open_err(name, e))?;
        Ok(())
    };
    let mut names: Vec<String> = Vec::new();
    let mut wal: Vec<String> = Vec::new();
    if let Some(n) = single {
        names.push(n.to_string());
    } else {
        let meta = remote::get_all(&format!("{base}/metadata.yaml"), 64 << 20);
        match meta {
            Ok(text) => {
                std::fs::write(tmp.0.join("metadata.yaml"), &text)?;
                let m = rosbag2::parse_metadata(
                    &String::from_utf8_lossy(&text),
                    Path::new(&format!("{shown_base}/metadata.yaml")),
                )?;
                for f in &m.files {
                    // Files are named from the bag directory (or, before version 4, from its
                    // parent, `bagname/bagname_0.db3`): the name is what is looked up.
                    if let Some(n) = f.rsplit('/').next() {
                        names.push(n.to_string());
                    }
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(open_err("metadata.yaml", e)),
        }
        if names.is_empty() {
            // No listing: the storage files under the prefix (object stores list; a plain
            // HTTP server cannot).
            if remote::is_http(base) {
                return Err(open_err(
                    "",
                    std::io::Error::new(
                        std::io::ErrorKind::NotFound,
                        "no such object, and no metadata.yaml under it (an HTTP server cannot list a directory: name the storage file)",
                    ),
                ));
            }
            let listed = remote::list(base).map_err(|e| open_err("", e))?;
            for (u, _) in &listed {
                let rel = u[base.len()..].trim_start_matches('/');
                if !rel.contains('/') && rosbag2::is_storage_file(Path::new(rel)) {
                    names.push(rel.to_string());
                }
            }
            if names.is_empty() {
                return Err(open_err(
                    "",
                    std::io::Error::new(
                        std::io::ErrorKind::NotFound,
                        "no such object, and no rosbag2 recording (metadata.yaml or storage files) under it",
                    ),
                ));
            }
            // A SQLite database's write-ahead log holds rows too.
            for (u, _) in &listed {
                let rel = u[base.len()..].trim_start_matches('/');
                if names.iter().any(|n| rel == format!("{n}-wal")) {
                    wal.push(rel.to_string());
                }
            }
        }
    }
    names.extend(wal);
    // MCAP storage files are read by ranges where they are (an empty stand-in in the
    // directory); the others (SQLite, zstd) are fetched whole.
    let mut ranged: std::collections::HashMap<std::path::PathBuf, Arc<remote::RemoteFile>> =
        std::collections::HashMap::new();
    for n in &names {
        if n.contains(['/', '\\']) || n == ".." || n == "." {
            return Err(Error::Storage {
                path: std::path::PathBuf::from(format!("{shown_base}/metadata.yaml")),
                reason: format!("lists {n:?}, which is not a file name"),
            });
        }
        if n.ends_with(".mcap") {
            match remote::RemoteFile::open(&format!("{base}/{n}")) {
                Ok(f) => {
                    std::fs::write(tmp.0.join(n), b"")?;
                    ranged.insert(tmp.0.join(n), Arc::new(f));
                    continue;
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound && single.is_none() => continue,
                Err(e) => return Err(open_err(n, e)),
            }
        }
        match fetch(n) {
            Ok(()) => {}
            // Missing listed files are said by the directory's open, as for local ones.
            Err(Error::Open { source, .. })
                if source.kind() == std::io::ErrorKind::NotFound && single.is_none() => {}
            Err(e) => return Err(e),
        }
    }
    let opener = |p: &Path| ranged.get(p).map(|f| Source::Remote(f.clone()));
    let (files, mut opened) = match single {
        Some(n) => rosbag2::open_file(&tmp.0.join(n), opts)?,
        None => rosbag2::open_dir_with(&tmp.0, &opener, opts)?,
    };
    let to_remote = |p: &Path| -> std::path::PathBuf {
        match p.strip_prefix(&tmp.0) {
            Ok(rel) if rel.as_os_str().is_empty() => std::path::PathBuf::from(&shown_base),
            Ok(rel) => std::path::PathBuf::from(format!("{shown_base}/{}", rel.to_string_lossy())),
            Err(_) => p.to_path_buf(),
        }
    };
    let s = &mut opened.summary;
    s.path = to_remote(&s.path);
    s.files = s.files.iter().map(|f| to_remote(f)).collect();
    let local = tmp.0.to_string_lossy().into_owned();
    for w in s.warnings.iter_mut() {
        *w = w.replace(&local, &shown_base);
    }
    opened.keep = Some(Arc::new(tmp));
    Ok(Recognised::Opened(files, Box::new(opened)))
}

/// Opens a single ROS 1 bag (any version) or MCAP file, recognised by its first bytes.
pub(crate) fn open_file(path: &Path, file: &Source, opts: &OpenOptions) -> Result<Opened> {
    let file_size = file.len()?;
    let head = read_at(file, 0, 64)?;
    if head.starts_with(mcap::MAGIC) {
        let mut opened = mcap::open(file, path, file_size, opts)?;
        if opened.profile == "ros2" && opened.summary.metadata.iter().any(|m| m.0 == "rosbag2") {
            let (k, v) = crate::storage::rosbag2::ALONE_FACT;
            opened.summary.storage_facts.insert(0, (k.into(), v.into()));
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
        Version::V2_0 => ros1::open_v2(file, path, file_size, opts)?,
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
/// storage lays its records out (a chunk that is [`ChunkKind::buffered`]: a format 1.2
/// segment's messages are read one by one from the file). On every message's path: a plain
/// `Result` (an `Option` around it cost iteration some 10%).
#[inline]
pub(crate) fn message_in_data(
    buf: Arc<Vec<u8>>,
    ch: &Chunk,
    conn: usize,
    entry: IndexEntry,
) -> Result<Message> {
    match ch.kind {
        ChunkKind::Ros1 => ros1::message_in_chunk(buf, ch.pos, conn, entry),
        ChunkKind::Mcap => mcap::message_in_records(buf, ch.pos, conn, entry),
        ChunkKind::Rows => rosbag2::message_in_rows(buf, ch, conn, entry),
        ChunkKind::Ros1Old => ros1::old::message_in_stretch(buf, ch.pos, conn, entry),
        // Read message by message ([`read_message_alone`]), never out of a chunk's data.
        ChunkKind::Ros1Raw => Err(Error::Invalid(format!(
            "the format 1.2 segment at byte {} has no chunk data to slice",
            ch.pos
        ))),
    }
}

/// Builds the message tables of the chunks `want` accepts from the storage's per-chunk
/// indexes (ROS 1 index data records, MCAP message index records; a chunk without a usable
/// index is scanned), calling `progress` after each chunk.
pub(crate) fn build_tables(
    reader: &dyn ChunkReader,
    want: &dyn Fn(usize) -> bool,
    progress: &mut dyn FnMut(TablesProgress, &ChunkEntries) -> bool,
) -> Result<MessageTables> {
    if reader.summary().version.is_ros1() {
        ros1::tables::build(reader, want, progress)
    } else {
        mcap::build_tables(reader, want, progress)
    }
}

/// Whether tables of only some chunks can be built for a time range: an indexed ROS 1 2.0 or
/// MCAP file whose every chunk indexes its message times.
pub(crate) fn tables_by_time(s: &Summary) -> bool {
    s.indexed
        && matches!(s.version, Version::V2_0 | Version::Mcap)
        && s.chunks.iter().all(|c| c.kind.time_indexed())
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

/// Each chunk's own index, read beside the chunk without the tables of the whole recording:
/// where every chunk of an indexed recording keeps the records that list its messages right
/// after it (MCAP's message indexes), a check compares each chunk with its own, on all cores.
pub(crate) struct OwnIndexes {
    /// Per storage file, a channel id's connection.
    by_file: Vec<std::collections::HashMap<u32, usize>>,
}

/// What a chunk's own index says.
pub(crate) enum OwnIndex {
    /// It lists these entries (connection, entry), handed over in the caller's buffer.
    Listed,
    /// The chunk has none (a stretch of an unchunked file): its records are its index.
    None,
    /// It cannot be used, for the reason given (as the tables' warning says it: the tables
    /// would be built from the chunk's records).
    Unusable(String),
}

impl OwnIndexes {
    /// For the recording `s`, where its storage keeps such indexes.
    pub(crate) fn for_summary(s: &Summary) -> Option<OwnIndexes> {
        let mcap = !s.chunks.is_empty() && s.chunks.iter().all(|c| c.kind == ChunkKind::Mcap);
        (s.indexed && mcap).then(|| OwnIndexes {
            by_file: mcap::connections_by_file(s),
        })
    }

    /// The index of chunk `ch` (index `chunk`) in `src`, into `entries`, with `region` to
    /// read it into.
    pub(crate) fn read(
        &self,
        src: &Source,
        ch: &Chunk,
        chunk: u32,
        region: &mut Vec<u8>,
        entries: &mut Vec<(usize, IndexEntry)>,
    ) -> OwnIndex {
        entries.clear();
        let empty = std::collections::HashMap::new();
        let by_id = self.by_file.get(ch.file as usize).unwrap_or(&empty);
        match mcap::read_chunk_index(src, ch, region) {
            Ok(false) => OwnIndex::None,
            Ok(true) => match mcap::chunk_index_entries(region, ch, chunk, by_id, entries) {
                Ok(()) => OwnIndex::Listed,
                Err(w) => OwnIndex::Unusable(w),
            },
            Err(e) => OwnIndex::Unusable(mcap::index_unusable(ch, &e)),
        }
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
