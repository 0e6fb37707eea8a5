//! An open recording: the summary, the message tables and message access, over any storage.
//!
//! [`Bag::open`] recognises the format by content and opens it through its storage
//! ([`crate::storage`]): an indexed file is summarised from its index alone (O(chunks) bytes);
//! the message tables are built on demand, from index records where the storage has them,
//! without decompressing chunks. Unindexed and damaged files are recovered by linear scans.
//! Decompressed chunks are shared through a bounded cache.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

use crate::error::{Error, Location, RecordKind, Result};
use crate::storage::compression;
pub use crate::storage::{
    Bytes, Chunk, ChunkEntries, ChunkKind, Connection, Filter, IndexEntry, Message, MessageRef,
    MessageTables, Summary, TablesProgress, Topic, Version,
};
pub(crate) use crate::storage::{Opened, Source};

mod deferred;
pub mod iter;
pub mod merge;
mod message;

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
    /// The complete summary: set at open, or by the deferred row scan on first use.
    summary: OnceLock<Summary>,
    /// The summary given at open when the row scan is deferred (`rows_pending`).
    quick: Option<Summary>,
    /// A deferred row scan (rosbag2 SQLite) and what it kept, rosbag2's to hold until the
    /// summary and tables are complete.
    pending: crate::storage::rosbag2::Pending,
    /// Why the deferred row scan failed: the tables are then this error.
    scan_error: OnceLock<Error>,
    /// The tables of some connections only (sorted), made by a scan that completed the
    /// summary for them; the whole tables are then read on first need.
    partial: Mutex<Option<(Vec<usize>, Arc<MessageTables>)>>,
    /// Byte offset of the index section (index_pos), for the region after the last chunk.
    pub(crate) index_pos: u64,
    tables: OnceLock<Arc<MessageTables>>,
    /// Each connection's compiled definition and where it came from, made on first use.
    plans: Vec<OnceLock<PlanResult>>,
    cache: Mutex<ChunkCache>,
    /// How the recording was opened; every read of it follows them.
    pub(crate) opts: crate::OpenOptions,
    /// What lives as long as the recording (see [`crate::storage::Opened::keep`]).
    _keep: Option<Arc<dyn std::any::Any + Send + Sync>>,
}

/// An open bag: cheap to clone and share between threads. The file is opened read-only.
#[derive(Clone)]
pub struct Bag {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for Bag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bag")
            .field("path", &self.quick_summary().path)
            .finish()
    }
}

/// A connection's plan and the source of its definition, or why there is none.
type PlanResult = std::result::Result<
    (
        Arc<crate::encoding::Plan>,
        crate::definition::sources::DefSource,
    ),
    crate::error::DefError,
>;

/// Chunks read at once from a remote recording.
pub const REMOTE_CHUNK_READERS: usize = 8;

/// Default budget of the decompressed chunk cache.
pub const DEFAULT_CACHE_BYTES: usize = 256 << 20;

impl Bag {
    /// Opens a bag read-only and reads its summary: from the index when it is complete,
    /// otherwise by a linear scan that recovers what it can and records warnings.
    ///
    /// `path` may be a ROS 1 bag, an MCAP file, a rosbag2 directory or its `metadata.yaml`, a
    /// single rosbag2 storage file (`.db3`), or a zstd-compressed `.db3.zstd`/`.mcap.zstd`;
    /// the format is recognised by content, not by the name.
    pub fn open(path: impl AsRef<Path>) -> Result<Bag> {
        Bag::open_with(path, &crate::OpenOptions::default())
    }

    /// [`Bag::open`] with `opts`: threads, the definition search path, the index cache, how
    /// SQLite rows are read. The recording keeps them ([`Bag::options`]).
    pub fn open_with(path: impl AsRef<Path>, opts: &crate::OpenOptions) -> Result<Bag> {
        let path = path.as_ref();
        let src = match crate::storage::recognise(path, opts)? {
            crate::storage::Recognised::Opened(files, opened) => {
                return Ok(Bag::from_opened(files, *opened, opts))
            }
            crate::storage::Recognised::File(src) => src,
        };
        // A remote object is named as it may be shown (no credentials) and keyed by its
        // location and entity tag.
        #[cfg(feature = "remote")]
        let (shown, key) = match &src {
            Source::Remote(r) => (
                std::path::PathBuf::from(r.shown()),
                crate::storage::index_cache::Key::remote(&r.shown(), &r.head, &opts.index_cache),
            ),
            _ => (
                path.to_path_buf(),
                crate::storage::index_cache::Key::of(path, &opts.index_cache),
            ),
        };
        #[cfg(not(feature = "remote"))]
        let (shown, key) = (
            path.to_path_buf(),
            crate::storage::index_cache::Key::of(path, &opts.index_cache),
        );
        let path = shown.as_path();
        // A recording recovered by a scan before opens from the index cache.
        if let Some(opened) = key
            .as_ref()
            .and_then(|k| crate::storage::index_cache::load(k, path))
        {
            return Ok(Bag::from_opened(vec![src], opened, opts));
        }
        let opened = crate::storage::open_file(path, &src, opts)?;
        let bag = Bag::from_opened(vec![src], opened, opts);
        if let (Some(key), Some(t)) = (&key, bag.inner.tables.get()) {
            let s = bag.summary();
            if !s.indexed && s.file_size >= crate::storage::index_cache::MIN_SIZE {
                // The cache only saves time: a failure to write it changes nothing.
                let _ = crate::storage::index_cache::store(key, s, bag.inner.index_pos, "", t);
            }
        }
        Ok(bag)
    }

    /// The options the recording was opened with.
    pub fn options(&self) -> &crate::OpenOptions {
        &self.inner.opts
    }

    /// Opens a bag held in memory (`name` stands for its path in messages): what the fuzz
    /// targets use, and a way to read a bag that is not a file.
    pub fn from_bytes(name: impl AsRef<Path>, bytes: Vec<u8>) -> Result<Bag> {
        Bag::from_bytes_with(name, bytes, &crate::OpenOptions::default())
    }

    /// [`Bag::from_bytes`] with `opts`.
    pub fn from_bytes_with(
        name: impl AsRef<Path>,
        bytes: Vec<u8>,
        opts: &crate::OpenOptions,
    ) -> Result<Bag> {
        let src = Source::Memory(bytes.into());
        let opened = crate::storage::open_file(name.as_ref(), &src, opts)?;
        Ok(Bag::from_opened(vec![src], opened, opts))
    }

    pub(crate) fn from_opened(
        files: Vec<Source>,
        mut opened: Opened,
        opts: &crate::OpenOptions,
    ) -> Bag {
        let tables = OnceLock::new();
        let n_conns = opened.summary.connections.len();
        if opened.summary.files.is_empty() {
            opened.summary.files.push(opened.summary.path.clone());
        }
        if let Some(mut t) = opened.tables {
            t.sort();
            let _ = tables.set(Arc::new(t));
        }
        let summary = OnceLock::new();
        let quick = if opened.deferred.is_some() {
            Some(opened.summary)
        } else {
            let _ = summary.set(opened.summary);
            None
        };
        Bag {
            inner: Arc::new(Inner {
                files,
                summary,
                quick,
                pending: crate::storage::rosbag2::Pending::new(opened.deferred),
                scan_error: OnceLock::new(),
                partial: Mutex::new(None),
                index_pos: opened.index_pos,
                tables,
                plans: (0..n_conns).map(|_| OnceLock::new()).collect(),
                cache: Mutex::new(ChunkCache {
                    map: HashMap::new(),
                    bytes: 0,
                    tick: 0,
                    budget: DEFAULT_CACHE_BYTES,
                }),
                opts: opts.clone(),
                _keep: opened.keep,
            }),
        }
    }

    /// What the index says: connections, chunks, topics, counts, time range, warnings.
    ///
    /// A rosbag2 SQLite recording whose metadata.yaml the database bears out opens without
    /// reading its rows: the first call of this (or of anything that reads messages) reads
    /// them then, on all cores, and [`Bag::quick_summary`] gives the summary without them.
    pub fn summary(&self) -> &Summary {
        self.inner
            .summary
            .get_or_init(|| self.complete_summary(None))
    }

    /// The summary as far as it is known without reading anything more: [`Bag::summary`]
    /// once complete; before that (a rosbag2 SQLite recording opened from its metadata.yaml)
    /// one with the connections, topics, counts, time range and warnings known at open, no
    /// blocks, and `rows_pending` set. What `bagscope info` prints.
    pub fn quick_summary(&self) -> &Summary {
        match (self.inner.summary.get(), &self.inner.quick) {
            (Some(s), _) => s,
            (None, Some(q)) => q,
            (None, None) => self.summary(),
        }
    }

    /// Every warning: the summary's (completing a summary whose row scan is deferred), then
    /// those of the message tables once built.
    pub fn warnings(&self) -> Vec<String> {
        self.summary();
        self.quick_warnings()
    }

    /// The warnings known so far: [`Bag::quick_summary`]'s, then those of the message tables
    /// once built. Reads nothing.
    pub fn quick_warnings(&self) -> Vec<String> {
        let mut w = self.quick_summary().warnings.clone();
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
        // A deferred row scan gives the tables with the summary (or, after a scan for some
        // connections, with a second scan).
        self.summary();
        if let Some(t) = self.complete_tables() {
            return t;
        }
        if let Some(t) = self.inner.tables.get() {
            return Ok(t.clone());
        }
        self.build_tables(&mut |_, _| true)
    }

    /// The message tables `filter` needs: the whole tables once built; before that, for a
    /// time range of a file opened from its index, tables of only the chunks whose time range
    /// meets it (exporting a minute of a terabyte recording then reads the index of the
    /// chunks of that minute, not of every chunk). Not kept. For some connections of a
    /// rosbag2 SQLite recording whose rows are not read yet: the scan that reads them makes
    /// those connections' tables and keeps their rows (up to 256 MiB) for the reads that
    /// follow (`Bag::read_chunk_for`, [`Bag::messages`]), each block given back once.
    pub fn tables_for(&self, filter: &Filter) -> Result<Arc<MessageTables>> {
        // Some connections of a recording whose rows are not read yet: their rows are kept as
        // the scan passes them, and their tables made.
        if let Some(c) = &filter.connections {
            self.complete_capturing(c);
        }
        let s = self.summary();
        if let Some(t) = self.inner.tables.get() {
            return Ok(t.clone());
        }
        // Tables of some connections, made by the scan that completed the summary.
        if let (Some(want), Ok(p)) = (&filter.connections, self.inner.partial.lock()) {
            if let Some((have, t)) = p.as_ref() {
                if want.iter().all(|c| have.binary_search(c).is_ok()) {
                    return Ok(t.clone());
                }
            }
        }
        let ranged = filter.start_ns.is_some() || filter.end_ns.is_some();
        if !(ranged && crate::storage::tables_by_time(s)) {
            return self.tables();
        }
        let (lo, hi) = (
            filter.start_ns.unwrap_or(0),
            filter.end_ns.unwrap_or(u64::MAX),
        );
        let want = |i: usize| {
            s.chunks
                .get(i)
                .is_some_and(|c| c.start_ns < hi && c.end_ns >= lo)
        };
        let mut none = |_: TablesProgress, _: &ChunkEntries| true;
        Ok(Arc::new(crate::storage::build_tables(
            self, &want, &mut none,
        )?))
    }

    /// Builds the message tables, calling `progress` after each chunk with that chunk's entries;
    /// `progress` returns false to cancel ([`Error::Cancelled`]). Returns the tables and any
    /// warnings about chunks whose index had to be rebuilt from their content.
    pub fn build_tables(
        &self,
        progress: &mut dyn FnMut(TablesProgress, &ChunkEntries) -> bool,
    ) -> Result<Arc<MessageTables>> {
        let s = self.summary();
        if let Some(e) = self.inner.scan_error.get() {
            return Err(e.clone());
        }
        if let Some(Err(e)) = self.complete_tables() {
            return Err(e);
        }
        if let Some(t) = self.inner.tables.get() {
            // Already known (recovered bags are scanned whole at open): replay per chunk.
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
        let tables = Arc::new(crate::storage::build_tables(self, &|_| true, progress)?);
        let _ = self.inner.tables.set(tables.clone());
        Ok(self.inner.tables.get().cloned().unwrap_or(tables))
    }

    /// The uncompressed data of chunk `idx`, through the bounded cache.
    pub(crate) fn chunk_data(&self, idx: usize) -> Result<Arc<Vec<u8>>> {
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
    #[doc(hidden)]
    pub fn decompress_chunk(&self, idx: usize) -> Result<Vec<u8>> {
        self.decompress_chunk_reusing(idx, Vec::new(), &mut Vec::new())
    }

    /// Like [`Bag::decompress_chunk`], into `out`, the buffer of a chunk read before (its
    /// memory is neither allocated nor zeroed again), with `scratch` holding the compressed
    /// bytes: reading every chunk of a recording in turn reuses the same few buffers.
    pub(crate) fn decompress_chunk_reusing(
        &self,
        idx: usize,
        mut out: Vec<u8>,
        scratch: &mut Vec<u8>,
    ) -> Result<Vec<u8>> {
        let ch = self.chunk(idx)?;
        let file = self.source(ch)?;
        if let Some(r) = crate::storage::read_unframed(file, ch) {
            return r;
        }
        let l = self.chunk_layout(idx)?;
        let raw = if l.compression == crate::Compression::None {
            &mut out
        } else {
            &mut *scratch
        };
        crate::storage::read_at_into(file, l.data_pos, l.data_len as usize, raw)?;
        if (raw.len() as u64) < l.data_len {
            return Err(Error::Truncated {
                kind: RecordKind::Chunk,
                at: Location::File(ch.pos),
                needed: l.data_len,
                available: raw.len() as u64,
            });
        }
        if l.compression == crate::Compression::None {
            // Checks the declared size (nothing is copied).
            compression::decompress(l.compression, &out, l.size, ch.pos)?;
            return Ok(out);
        }
        compression::decompress_into(l.compression, scratch, l.size, ch.pos, out)
    }

    /// Chunk `idx` of the summary, or an error naming it.
    fn chunk(&self, idx: usize) -> Result<&crate::storage::Chunk> {
        self.summary()
            .chunks
            .get(idx)
            .ok_or_else(|| Error::NotFound(format!("no chunk {idx}")))
    }

    /// Where chunk `idx`'s data lies and how it is compressed: from the summary, or read from
    /// the chunk's record header where the bag opened without it
    /// ([`crate::storage::Chunk::header_pending`]).
    pub(crate) fn chunk_layout(&self, idx: usize) -> Result<crate::storage::ChunkLayout> {
        let ch = self.chunk(idx)?;
        crate::storage::chunk_layout(self.source(ch)?, ch, self.inner.index_pos)
    }

    /// The layouts of chunks `idx`, in order, to `f`: the headers the summary does not have
    /// are read ahead on reader threads (one at a time, the 32,766 headers of a 1 TB bag took
    /// 2.3 s from a cold page cache).
    fn layouts(&self, idx: &[usize], mut f: impl FnMut(Result<crate::storage::ChunkLayout>)) {
        let _ = crate::storage::read_ahead_on(
            self.inner.files.first().is_some_and(|f| f.is_remote()),
            self.inner.opts.single_threaded(),
            idx.len(),
            |j, _| Ok(self.chunk_layout(idx[j])),
            |_, l, _| {
                f(l.and_then(|l| l));
                Ok(())
            },
        );
    }

    /// Chunks per compression name, reading the headers the summary does not have.
    pub fn compression_counts(&self) -> std::collections::BTreeMap<&'static str, usize> {
        // Only chunks of ROS 1 and MCAP files count: a recording whose rows are pending has none.
        let s = self.quick_summary();
        let mut m = s.compression_counts();
        let pending: Vec<usize> = (0..s.chunks.len())
            .filter(|&i| s.chunks[i].header_pending())
            .collect();
        self.layouts(&pending, |l| {
            let name = l.map_or("unreadable", |l| l.compression.name());
            *m.entry(name).or_insert(0) += 1;
        });
        m
    }

    /// Bytes of uncompressed chunk data, reading the headers the summary does not have.
    pub fn uncompressed_size(&self) -> u64 {
        let all: Vec<usize> = (0..self.summary().chunks.len()).collect();
        let mut size = 0;
        self.layouts(&all, |l| size += l.map_or(0, |l| u64::from(l.size)));
        size
    }

    /// Like [`Bag::decompress_chunk`], but only the messages of connections `conns` need be
    /// readable in the result (a SQLite storage then reads only their rows). Not cached.
    pub(crate) fn read_chunk_for(&self, idx: usize, conns: &[usize]) -> Result<Vec<u8>> {
        let s = self.summary();
        // Kept by the row scan for these connections (read once, then read again if asked).
        if let Some(b) = u32::try_from(idx)
            .ok()
            .and_then(|i| self.take_captured(i, conns))
        {
            return Ok(b);
        }
        let ch = s
            .chunks
            .get(idx)
            .ok_or_else(|| Error::NotFound(format!("no chunk {idx}")))?;
        match crate::storage::read_for_connections(self.source(ch)?, s, ch, conns) {
            Some(r) => r,
            None => self.decompress_chunk(idx),
        }
    }

    /// Connection `conn`'s definition compiled for decoding, and where it came from: worked
    /// out once per open recording (it may read `.msg` files on the search path) and shared by
    /// everything that decodes.
    pub fn plan(
        &self,
        conn: usize,
    ) -> std::result::Result<
        (
            Arc<crate::encoding::Plan>,
            crate::definition::sources::DefSource,
        ),
        crate::error::DefError,
    > {
        // The connections are the same in the quick and the complete summary.
        let c =
            self.quick_summary()
                .connections
                .get(conn)
                .ok_or_else(|| crate::error::DefError {
                    kind: crate::error::DefErrorKind::Invalid,
                    datatype: String::new(),
                    line: None,
                    reason: format!("no connection {conn}"),
                })?;
        match self.inner.plans.get(conn) {
            Some(cell) => cell
                .get_or_init(|| {
                    crate::encoding::Plan::for_connection_with_source(c, &self.inner.opts.msg_path)
                        .map(|(p, src)| (Arc::new(p), src))
                })
                .clone(),
            None => crate::encoding::Plan::for_connection_with_source(c, &self.inner.opts.msg_path)
                .map(|(p, src)| (Arc::new(p), src)),
        }
    }

    /// For each SQLite storage file, whether its rows are read from the file's pages (`true`)
    /// or through SQLite (`false`: an unusual schema, a WAL copy, pages the direct reader
    /// refused).
    #[doc(hidden)]
    pub fn sqlite_reads_pages(&self) -> Vec<bool> {
        self.inner
            .files
            .iter()
            .filter_map(|f| match f {
                Source::Sqlite(s) => Some(s.direct().is_some()),
                _ => None,
            })
            .collect()
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
    /// background threads (none in the single-threaded mode, [`crate::OpenOptions::threads`]).
    pub fn messages(&self, filter: &Filter) -> Result<crate::bag::iter::Messages> {
        let opts = &self.inner.opts;
        let threads = if opts.single_threaded() {
            0
        } else {
            self.reader_threads(opts.threads())
        };
        crate::bag::iter::Messages::new(self.clone(), filter, threads)
    }

    /// Threads that read chunks for a job given `threads` cores: more where every read waits
    /// on the network ([`REMOTE_CHUNK_READERS`] requests in flight hide its latency).
    pub(crate) fn reader_threads(&self, threads: usize) -> usize {
        if self.inner.files.iter().any(|f| f.is_remote()) {
            threads.max(REMOTE_CHUNK_READERS)
        } else {
            threads
        }
    }

    /// The bag's files and summary, when nothing else holds it (joining recordings).
    pub(crate) fn into_files_and_summary(self) -> Option<(Vec<Source>, Summary)> {
        let inner = Arc::try_unwrap(self.inner).ok()?;
        Some((inner.files, inner.summary.into_inner()?))
    }

    pub(crate) fn file(&self) -> &Source {
        &self.inner.files[0]
    }

    pub(crate) fn index_pos(&self) -> u64 {
        self.inner.index_pos
    }
}

impl crate::storage::ChunkReader for Bag {
    fn summary(&self) -> &Summary {
        Bag::summary(self)
    }
    fn source(&self, ch: &Chunk) -> Result<&Source> {
        Bag::source(self, ch)
    }
    fn chunk_data(&self, idx: usize) -> Result<Arc<Vec<u8>>> {
        Bag::chunk_data(self, idx)
    }
    fn file(&self) -> &Source {
        Bag::file(self)
    }
    fn index_pos(&self) -> u64 {
        Bag::index_pos(self)
    }
    fn options(&self) -> &crate::OpenOptions {
        Bag::options(self)
    }
}
