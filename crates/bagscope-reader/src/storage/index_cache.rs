//! The index cache: what a linear scan of a recording without a usable index found (summary and
//! message tables) is kept in a file in the user's cache, keyed by the recording's path, size
//! and modification time, so that reopening a large recovered recording is instant instead of
//! a scan of every byte again (as `ros_comm` PR #2180 did for rosbag). The recording itself is
//! never written; a sidecar that does not match its recording, or that does not parse, is
//! ignored (it is untrusted input like the recording).
//!
//! rosbag2 SQLite files, whose summary needs a scan of every row (SQLite has no index of them
//! by topic), keep that scan the same way (`store_rows`, `load_rows`).
//!
//! Where: `$BAGSCOPE_INDEX_DIR`, else `$XDG_CACHE_HOME/bagscope/index`, else
//! `~/.cache/bagscope/index`; `BAGSCOPE_INDEX_DIR=off` turns it off. Only recordings of at least
//! [`MIN_SIZE`] bytes that were opened by a scan are kept.

use crate::IndexCache;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::storage::compression::Compression;
use crate::storage::{
    Chunk, ChunkKind, Connection, IndexEntry, MessageTables, Opened, Summary, Version,
};

/// Recordings smaller than this are scanned again rather than cached.
pub const MIN_SIZE: u64 = 64 << 20;
const MAGIC: &[u8] = b"BAGSCOPE-INDEX 3\n";

/// What identifies the recording a sidecar belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Key {
    path: String,
    size: u64,
    mtime_ns: u64,
    /// The cache directory the entry lives in.
    dir: PathBuf,
}

impl Key {
    /// The key of the file at `path` in the cache `cache`, if it can be told (canonical path,
    /// size, mtime) and the cache is on.
    pub(crate) fn of(path: &Path, cache: &IndexCache) -> Option<Key> {
        let dir = dir(cache)?;
        let meta = std::fs::metadata(path).ok()?;
        let mtime = meta.modified().ok()?;
        let mtime_ns = mtime.duration_since(std::time::UNIX_EPOCH).ok()?.as_nanos() as u64;
        let path = std::fs::canonicalize(path).ok()?;
        Some(Key {
            path: path.to_string_lossy().into_owned(),
            size: meta.len(),
            mtime_ns,
            dir,
        })
    }
}

#[cfg(feature = "remote")]
impl Key {
    /// The key of a remote object: its location (as shown, without credentials), size and
    /// entity tag (which changes whenever the object does).
    pub(crate) fn remote(
        shown: &str,
        head: &crate::storage::remote::Head,
        cache: &IndexCache,
    ) -> Option<Key> {
        let dir = dir(cache)?;
        let mut h = DefaultHasher::new();
        head.etag.hash(&mut h);
        Some(Key {
            path: shown.to_string(),
            size: head.size,
            mtime_ns: h.finish(),
            dir,
        })
    }
}

/// The cache directory `cache` names, or `None` when turned off or unknown.
pub fn dir(cache: &IndexCache) -> Option<PathBuf> {
    match cache {
        IndexCache::Off => return None,
        IndexCache::Dir(d) => return Some(d.clone()),
        IndexCache::FromEnvironment => {}
    }
    match std::env::var_os("BAGSCOPE_INDEX_DIR") {
        Some(d) if d == "off" || d.is_empty() => None,
        Some(d) => Some(PathBuf::from(d)),
        None => std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
            .map(|c| c.join("bagscope").join("index")),
    }
}

fn file_for(key: &Key) -> Option<PathBuf> {
    let mut h = DefaultHasher::new();
    key.path.hash(&mut h);
    Some(key.dir.join(format!("{:016x}.idx", h.finish())))
}

struct W(Vec<u8>);
impl W {
    fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn str(&mut self, s: &str) {
        self.bytes(s.as_bytes());
    }
    fn bytes(&mut self, b: &[u8]) {
        self.u64(b.len() as u64);
        self.0.extend_from_slice(b);
    }
    fn len(&mut self, n: usize) {
        self.u64(n as u64);
    }
    /// The magic and the key of the recording ([`R::header`] reads them).
    fn header(&mut self, magic: &[u8], key: &Key) {
        self.0.extend_from_slice(magic);
        self.str(&key.path);
        self.u64(key.size);
        self.u64(key.mtime_ns);
    }
}

struct R<'a> {
    b: &'a [u8],
    pos: usize,
}
impl<'a> R<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let s = self.b.get(self.pos..end)?;
        self.pos = end;
        Some(s)
    }
    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn str(&mut self) -> Option<String> {
        String::from_utf8(self.bytes()?).ok()
    }
    fn bytes(&mut self) -> Option<Vec<u8>> {
        let n = usize::try_from(self.u64()?).ok()?;
        Some(self.take(n)?.to_vec())
    }
    /// The magic at both ends and the key of the recording, which must be `key`.
    fn header(&mut self, magic: &[u8], key: &Key) -> Option<()> {
        if self.take(magic.len())? != magic || !self.b.ends_with(magic) {
            return None;
        }
        let k = Key {
            path: self.str()?,
            size: self.u64()?,
            mtime_ns: self.u64()?,
            dir: key.dir.clone(),
        };
        (&k == key).then_some(())
    }

    /// A count of items of at least `min` bytes each: no more than the bytes left can hold.
    fn len(&mut self, min: usize) -> Option<usize> {
        let n = usize::try_from(self.u64()?).ok()?;
        (n <= (self.b.len() - self.pos) / min.max(1)).then_some(n)
    }
}

/// A table of entries, read as one block (a hundred million of them are read in about a
/// second); `None` if one names a chunk past `chunks`.
fn entries(r: &mut R<'_>, chunks: usize) -> Option<Vec<IndexEntry>> {
    let n = r.len(16)?;
    let block = r.take(n.checked_mul(16)?)?;
    let mut tab = Vec::with_capacity(n);
    let mut bad = false;
    tab.extend(block.chunks_exact(16).map(|e| {
        let entry = IndexEntry {
            time_ns: u64::from_le_bytes([e[0], e[1], e[2], e[3], e[4], e[5], e[6], e[7]]),
            chunk: u32::from_le_bytes([e[8], e[9], e[10], e[11]]),
            offset: u32::from_le_bytes([e[12], e[13], e[14], e[15]]),
        };
        bad |= entry.chunk as usize >= chunks;
        entry
    }));
    (!bad).then_some(tab)
}

fn version_code(v: Version) -> u8 {
    match v {
        Version::V2_0 => 0,
        Version::V1_2 => 1,
        Version::V1_1 => 2,
        Version::V1_0 => 3,
        Version::V0 => 4,
        Version::Mcap => 5,
        Version::Rosbag2Sqlite => 6,
        Version::Rosbag2Mcap => 7,
    }
}

fn version_of(c: u8) -> Option<Version> {
    Some(match c {
        0 => Version::V2_0,
        1 => Version::V1_2,
        2 => Version::V1_1,
        3 => Version::V1_0,
        4 => Version::V0,
        5 => Version::Mcap,
        _ => return None,
    })
}

fn kind_code(k: ChunkKind) -> u8 {
    match k {
        ChunkKind::Ros1 => 0,
        ChunkKind::Ros1Raw => 1,
        ChunkKind::Mcap => 2,
        ChunkKind::Rows => 3,
        ChunkKind::Ros1Old => 4,
    }
}

fn kind_of(c: u8) -> Option<ChunkKind> {
    Some(match c {
        0 => ChunkKind::Ros1,
        1 => ChunkKind::Ros1Raw,
        2 => ChunkKind::Mcap,
        4 => ChunkKind::Ros1Old,
        _ => return None,
    })
}

/// Writes the sidecar of a recording opened by a scan (errors are not the caller's concern:
/// the cache is an optimisation). Written to a temporary file and renamed into place.
pub(crate) fn store(
    key: &Key,
    s: &Summary,
    index_pos: u64,
    profile: &str,
    t: &MessageTables,
) -> std::io::Result<()> {
    let Some(file) = file_for(key) else {
        return Ok(());
    };
    if s.files.len() > 1 || s.chunks.iter().any(|c| c.kind == ChunkKind::Rows) {
        return Ok(());
    }
    let mut w = W(Vec::with_capacity(t.len() * 16 + (1 << 20)));
    w.header(MAGIC, key);
    w.u8(version_code(s.version));
    w.u8(u8::from(s.indexed));
    w.u64(index_pos);
    w.str(profile);
    w.len(s.connections.len());
    for c in &s.connections {
        w.u32(c.id);
        for x in [
            &c.topic,
            &c.datatype,
            &c.md5sum,
            &c.message_definition,
            &c.encoding,
            &c.schema_encoding,
            &c.qos,
            &c.distro,
            &c.type_hash,
        ] {
            w.str(x);
        }
        w.bytes(&c.schema_data);
        match &c.callerid {
            Some(id) => {
                w.u8(1);
                w.str(id);
            }
            None => w.u8(0),
        }
        w.u8(u8::from(c.latching) | (u8::from(c.latching_stated) << 1));
    }
    w.len(s.chunks.len());
    for c in &s.chunks {
        w.u64(c.pos);
        w.u64(c.start_ns);
        w.u64(c.end_ns);
        w.len(c.counts.len());
        for &(ci, n) in &c.counts {
            w.u32(ci);
            w.u32(n);
        }
        w.str(c.compression.name());
        w.u64(c.data_pos);
        w.u64(c.data_len);
        w.u32(c.size);
        w.u8(kind_code(c.kind));
        w.u64(c.index_pos);
    }
    for list in [&s.warnings, &t.warnings] {
        w.len(list.len());
        for x in list {
            w.str(x);
        }
    }
    w.len(s.attachments.len());
    for (n, m, z) in &s.attachments {
        w.str(n);
        w.str(m);
        w.u64(*z);
    }
    w.len(s.metadata.len());
    for (n, kv) in &s.metadata {
        w.str(n);
        w.len(kv.len());
        for (k, v) in kv {
            w.str(k);
            w.str(v);
        }
    }
    w.len(s.storage_facts.len());
    for (k, v) in &s.storage_facts {
        w.str(k);
        w.str(v);
    }
    w.len(t.per_connection.len());
    for tab in &t.per_connection {
        w.len(tab.len());
        for e in tab {
            w.u64(e.time_ns);
            w.u32(e.chunk);
            w.u32(e.offset);
        }
    }
    w.0.extend_from_slice(MAGIC);
    write_atomically(&file, &w.0)
}

/// The summary and tables kept for the recording `key`, if a sidecar matches it and parses
/// into a consistent whole.
pub(crate) fn load(key: &Key, path: &Path) -> Option<Opened> {
    let file = file_for(key)?;
    let b = std::fs::read(file).ok()?;
    let mut r = R { b: &b, pos: 0 };
    r.header(MAGIC, key)?;
    let version = version_of(r.u8()?)?;
    let indexed = r.u8()? != 0;
    let index_pos = r.u64()?;
    let profile = r.str()?;
    let n = r.len(4 + 10 * 8 + 2)?;
    let mut connections = Vec::with_capacity(n);
    for _ in 0..n {
        let id = r.u32()?;
        let mut s = [(); 9].map(|_| String::new());
        for x in &mut s {
            *x = r.str()?;
        }
        let [topic, datatype, md5sum, message_definition, encoding, schema_encoding, qos, distro, type_hash] =
            s;
        let schema_data = r.bytes()?;
        let callerid = match r.u8()? {
            0 => None,
            _ => Some(r.str()?),
        };
        let flags = r.u8()?;
        let (latching, latching_stated) = (flags & 1 != 0, flags & 2 != 0);
        connections.push(Connection {
            id,
            topic,
            datatype,
            md5sum,
            message_definition,
            callerid,
            latching,
            latching_stated,
            message_count: 0,
            encoding,
            schema_encoding,
            schema_data,
            qos,
            file: 0,
            distro,
            type_hash,
        });
    }
    let n = r.len(8 * 7 + 4 + 1)?;
    let mut chunks = Vec::with_capacity(n);
    for _ in 0..n {
        let pos = r.u64()?;
        let start_ns = r.u64()?;
        let end_ns = r.u64()?;
        let m = r.len(8)?;
        let mut counts = Vec::with_capacity(m);
        for _ in 0..m {
            let ci = r.u32()?;
            if ci as usize >= connections.len() {
                return None;
            }
            counts.push((ci, r.u32()?));
        }
        let compression = Compression::from_name(r.str()?.as_bytes())?;
        chunks.push(Chunk {
            pos,
            start_ns,
            end_ns,
            counts,
            compression,
            data_pos: r.u64()?,
            data_len: r.u64()?,
            size: r.u32()?,
            kind: kind_of(r.u8()?)?,
            index_pos: r.u64()?,
            ..Default::default()
        });
    }
    let mut lists = [Vec::new(), Vec::new()];
    for list in &mut lists {
        let m = r.len(8)?;
        for _ in 0..m {
            list.push(r.str()?);
        }
    }
    let [warnings, table_warnings] = lists;
    let m = r.len(24)?;
    let mut attachments = Vec::with_capacity(m);
    for _ in 0..m {
        attachments.push((r.str()?, r.str()?, r.u64()?));
    }
    let m = r.len(16)?;
    let mut metadata = Vec::with_capacity(m);
    for _ in 0..m {
        let name = r.str()?;
        let k = r.len(16)?;
        let mut kv = Vec::with_capacity(k);
        for _ in 0..k {
            kv.push((r.str()?, r.str()?));
        }
        metadata.push((name, kv));
    }
    let m = r.len(16)?;
    let mut storage_facts = Vec::with_capacity(m);
    for _ in 0..m {
        storage_facts.push((r.str()?, r.str()?));
    }
    let m = r.len(8)?;
    if m != connections.len() {
        return None;
    }
    let mut per_connection = Vec::with_capacity(m);
    for _ in 0..m {
        let tab = entries(&mut r, chunks.len())?;
        per_connection.push(tab);
    }
    if r.pos + MAGIC.len() != b.len() {
        return None;
    }
    let mut summary = Summary {
        path: path.to_path_buf(),
        file_size: key.size,
        version,
        indexed,
        connections,
        chunks,
        warnings,
        attachments,
        metadata,
        storage_facts,
        ..Default::default()
    };
    summary.finish();
    summary
        .warnings
        .push("opened from bagscope's index cache (the recording was scanned once before)".into());
    Some(Opened {
        summary,
        index_pos,
        tables: Some(MessageTables {
            per_connection,
            warnings: table_warnings,
        }),
        profile,
        deferred: None,
        keep: None,
    })
}

const ROWS_MAGIC: &[u8] = b"BAGSCOPE-ROWS 1\n";

/// What the scan of a rosbag2 SQLite file's rows found: its blocks of rows (chunks), each
/// connection's table entries, and the rows naming no defined topic.
pub(crate) struct Rows {
    pub chunks: Vec<Chunk>,
    pub per: Vec<Vec<IndexEntry>>,
    pub unknown: u64,
}

/// Keeps the row scan of the SQLite file `key` (of at least [`MIN_SIZE`] bytes).
pub(crate) fn store_rows(key: &Key, rows: &Rows) -> std::io::Result<()> {
    let Some(file) = file_for(key) else {
        return Ok(());
    };
    if key.size < MIN_SIZE {
        return Ok(());
    }
    let n: usize = rows.per.iter().map(Vec::len).sum();
    let mut w = W(Vec::with_capacity(n * 16 + rows.chunks.len() * 64 + 1024));
    w.header(ROWS_MAGIC, key);
    w.u64(rows.unknown);
    w.len(rows.chunks.len());
    for c in &rows.chunks {
        w.u64(c.pos);
        w.u64(c.start_ns);
        w.u64(c.end_ns);
        w.u64(c.index_pos);
        w.u64(c.first_row as u64);
        w.len(c.counts.len());
        for &(ci, k) in &c.counts {
            w.u32(ci);
            w.u32(k);
        }
    }
    w.len(rows.per.len());
    for tab in &rows.per {
        w.len(tab.len());
        for e in tab {
            w.u64(e.time_ns);
            w.u32(e.chunk);
            w.u32(e.offset);
        }
    }
    w.0.extend_from_slice(ROWS_MAGIC);
    write_atomically(&file, &w.0)
}

/// The row scan kept for the SQLite file `key` with `connections` topics, if one matches it and
/// parses into a consistent whole.
pub(crate) fn load_rows(key: &Key, connections: usize) -> Option<Rows> {
    let b = std::fs::read(file_for(key)?).ok()?;
    let mut r = R { b: &b, pos: 0 };
    r.header(ROWS_MAGIC, key)?;
    let unknown = r.u64()?;
    let n = r.len(48)?;
    let mut chunks = Vec::with_capacity(n);
    for _ in 0..n {
        let pos = r.u64()?;
        let start_ns = r.u64()?;
        let end_ns = r.u64()?;
        let index_pos = r.u64()?;
        let first_row = r.u64()? as i64;
        let m = r.len(8)?;
        let mut counts = Vec::with_capacity(m);
        for _ in 0..m {
            let ci = r.u32()?;
            if ci as usize >= connections {
                return None;
            }
            counts.push((ci, r.u32()?));
        }
        chunks.push(Chunk {
            pos,
            start_ns,
            end_ns,
            counts,
            compression: Compression::None,
            kind: ChunkKind::Rows,
            index_pos,
            first_row,
            ..Default::default()
        });
    }
    if r.len(8)? != connections {
        return None;
    }
    let mut per = Vec::with_capacity(connections);
    for _ in 0..connections {
        let tab = entries(&mut r, chunks.len())?;
        per.push(tab);
    }
    (r.pos + ROWS_MAGIC.len() == b.len()).then_some(Rows {
        chunks,
        per,
        unknown,
    })
}

/// Writes `bytes` to `file` through a temporary name beside it (synced), renamed into place:
/// a reader never sees a half-written file, and a failure leaves what was there.
pub fn write_atomically(file: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(parent) = file.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let tmp = file.with_extension(format!("partial-{}", std::process::id()));
    let mut f = std::fs::File::create(&tmp)?;
    let r = f.write_all(bytes).and_then(|()| f.sync_all());
    drop(f);
    match r {
        Ok(()) => std::fs::rename(&tmp, file),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(e)
        }
    }
}
