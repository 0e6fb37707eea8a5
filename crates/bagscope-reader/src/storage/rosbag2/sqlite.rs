//! SQLite storage files: opened read-only (`immutable`, or a private copy of a WAL), zstd file and message modes, their topics, definitions and row blocks.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::{
    BlockBuf, Capture, Deferred, Metadata, Opener, Part, RowScan, RowScanner, RowsToScan,
    ScannedRows, TempDir, MAX_FILE, MAX_MESSAGE, MMAP_PRAGMA, SQLITE_MAGIC, ZSTD_MAGIC,
};
use crate::error::{Error, Result};
use crate::storage::rosbag2::sqlite_file::{columns, leading_ints, Column, Leaf, Row, SqliteFile};
use crate::storage::{Connection, MessageTables, Opened, Source, Summary, Version};

/// `meta`: the recording's metadata.yaml when this is its only storage file (a SQLite file
/// it bears out then opens without reading its rows).
pub(super) fn open_part(
    path: &Path,
    message_mode: bool,
    meta: Option<&Metadata>,
    opener: Opener,
    opts: &crate::OpenOptions,
) -> Result<Part> {
    if let Some(src) = opener(path) {
        return mcap_part(path, src, opts);
    }
    let mut f = std::fs::File::open(path).map_err(|e| Error::Open {
        path: path.to_path_buf(),
        source: e,
    })?;
    let mut head = [0u8; 16];
    let n = read_full(&mut f, &mut head)?;
    let head = &head[..n];
    if head.starts_with(ZSTD_MAGIC) {
        // File mode: the whole storage file is one zstd stream.
        let tmp = TempDir::new()?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().trim_end_matches(".zstd").to_string())
            .unwrap_or_else(|| "storage".into());
        let out_path = tmp.0.join(&name);
        {
            let src = std::fs::File::open(path)?;
            let dec = zstd::stream::read::Decoder::new(src).map_err(|e| Error::Storage {
                path: path.to_path_buf(),
                reason: format!("zstd: {e}"),
            })?;
            let mut out = std::fs::File::create(&out_path)?;
            let copied = std::io::copy(&mut dec.take(MAX_FILE + 1), &mut out).map_err(|e| {
                Error::Storage {
                    path: path.to_path_buf(),
                    reason: format!("cannot decompress (zstd, file mode): {e}"),
                }
            })?;
            if copied > MAX_FILE {
                return Err(Error::Storage {
                    path: path.to_path_buf(),
                    reason: format!("decompresses to more than {MAX_FILE} bytes"),
                });
            }
        }
        let mut part = open_plain(&out_path, message_mode, Some(tmp), meta, opts)?;
        part.compression = ("zstd".into(), "file".into());
        if let Source::Sqlite(s) = &mut part.source {
            s.shown_path = path.to_path_buf();
        }
        return Ok(part);
    }
    open_plain(path, message_mode, None, meta, opts)
}

pub(super) fn read_full(f: &mut std::fs::File, buf: &mut [u8]) -> Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match f.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(n)
}

pub(super) fn open_plain(
    path: &Path,
    message_mode: bool,
    tmp: Option<TempDir>,
    meta: Option<&Metadata>,
    opts: &crate::OpenOptions,
) -> Result<Part> {
    let mut f = std::fs::File::open(path)?;
    let mut head = [0u8; 16];
    let n = read_full(&mut f, &mut head)?;
    if head[..n].starts_with(SQLITE_MAGIC) {
        return open_sqlite(path, message_mode, tmp, meta, opts);
    }
    if head[..n].starts_with(crate::storage::mcap::MAGIC) {
        let src = match tmp {
            // A decompressed temporary file is read into memory, then removed.
            Some(_) => Source::Memory(std::fs::read(path)?.into()),
            None => Source::File(f),
        };
        return mcap_part(path, src, opts);
    }
    Err(Error::Storage {
        path: path.to_path_buf(),
        reason: format!(
            "not a rosbag2 storage file: it starts with {:?}, neither SQLite nor MCAP",
            String::from_utf8_lossy(&head[..n])
                .escape_debug()
                .to_string()
        ),
    })
}

/// An MCAP storage file of a rosbag2 recording, read from `src`.
fn mcap_part(path: &Path, src: Source, opts: &crate::OpenOptions) -> Result<Part> {
    let size = src.len()?;
    let opened = crate::storage::mcap::open(&src, path, size, opts)?;
    let distro = opened
        .summary
        .metadata
        .iter()
        .find(|(n, _)| n == "rosbag2")
        .and_then(|(_, kv)| kv.iter().find(|(k, _)| k == "ros_distro"))
        .map(|(_, v)| v.clone())
        .unwrap_or_default();
    Ok(Part {
        source: src,
        opened,
        storage: "mcap",
        compression: (String::new(), String::new()),
        distro,
        newer_schema: false,
    })
}

/// A SQLite storage file, opened read-only.
pub(crate) struct SqliteSource {
    /// Connections to the file: the first, then one more per reading thread where the file
    /// can be opened again (a pool: readers take the first free one).
    pub(crate) conns: Vec<Mutex<rusqlite::Connection>>,
    pub(crate) size: u64,
    /// The file as the user knows it (not the temporary copy).
    pub(crate) shown_path: PathBuf,
    /// Whether each message is a zstd frame (message-mode compression).
    pub(crate) zstd_messages: bool,
    /// The `messages` table read from the file's pages directly, where its schema is
    /// rosbag2's (else every read goes through SQLite).
    pub(crate) direct: Option<Direct>,
    /// Set when the direct reader refused a page of a deferred scan: every read then goes
    /// through SQLite.
    pub(super) direct_refused: std::sync::atomic::AtomicBool,
    pub(super) _tmp: Option<TempDir>,
}

impl SqliteSource {
    /// The direct reader, unless the file has none or it refused a page.
    pub(crate) fn direct(&self) -> Option<&Direct> {
        self.direct.as_ref().filter(|_| {
            !self
                .direct_refused
                .load(std::sync::atomic::Ordering::Relaxed)
        })
    }
}

thread_local! {
    /// Each reading thread's buffer for runs of pages (kept: a fresh one per block would
    /// fault its pages in again).
    static PAGES: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The `messages` table of a database, read from its b-tree pages (see [`crate::storage::rosbag2::sqlite_file`]).
#[derive(Debug)]
pub(crate) struct Direct {
    pub(super) file: SqliteFile,
    pub(super) leaves: Vec<Leaf>,
    /// Indexes of the `topic_id`, `timestamp` and `data` columns in a record.
    pub(super) cols: [usize; 3],
    /// Whether those are rosbag2's own (`id, topic_id, timestamp, data`): rows then take the
    /// fast path of [`leading_ints`].
    pub(super) standard: bool,
}

impl Direct {
    /// The direct reader for `path`, whose schema `conn` reads, or `None` where the `messages`
    /// table is not a plain rowid table with `id INTEGER PRIMARY KEY`, `topic_id`,
    /// `timestamp` and `data` (SQLite then reads it), or the file's pages cannot be walked.
    pub(super) fn new(conn: &rusqlite::Connection, path: &Path) -> Option<Direct> {
        let (root, sql): (i64, String) = conn
            .query_row(
                "SELECT rootpage, sql FROM sqlite_master WHERE type='table' AND name='messages'",
                [],
                |r| {
                    Ok((
                        r.get(0)?,
                        r.get::<_, Option<String>>(1)?.unwrap_or_default(),
                    ))
                },
            )
            .ok()?;
        if sql.to_ascii_uppercase().contains("WITHOUT ROWID") {
            return None;
        }
        let info: Vec<(String, String, i64)> = conn
            .prepare("SELECT name, type, pk FROM pragma_table_info('messages') ORDER BY cid")
            .and_then(|mut s| {
                s.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                    .collect::<rusqlite::Result<Vec<_>>>()
            })
            .ok()?;
        let pk: Vec<&(String, String, i64)> = info.iter().filter(|c| c.2 > 0).collect();
        if pk.len() != 1 || pk[0].0 != "id" || !pk[0].1.eq_ignore_ascii_case("INTEGER") {
            return None;
        }
        let col = |name: &str| info.iter().position(|c| c.0 == name);
        let cols = [col("topic_id")?, col("timestamp")?, col("data")?];
        let file = SqliteFile::open(path).ok()?;
        let leaves = file.leaves(u32::try_from(root).ok()?).ok()?;
        Some(Direct {
            file,
            leaves,
            cols,
            standard: cols == [1, 2, 3],
        })
    }

    /// Scans the rows of `leaves` (a run of this table's leaves) into blocks and tables,
    /// keeping the payloads `cap` asks for; `hints`: room for each connection's entries.
    pub(super) fn scan(
        &self,
        leaves: &[Leaf],
        by_topic_id: &HashMap<i64, usize>,
        ncon: usize,
        cap: Option<&Capture<'_>>,
        hints: &[usize],
    ) -> Result<RowScan> {
        let mut sc = RowScanner::new(by_topic_id, ncon).capturing(cap);
        for (v, &h) in sc.out.per.iter_mut().zip(hints) {
            v.reserve_exact(h);
        }
        let mut prev: Option<i64> = None;
        PAGES.with_borrow_mut(|buf| {
            self.file.for_each_leaf(leaves, buf, |leaf, b| {
                self.file.leaf_rows(leaf.page, b, |row| {
                    if prev.is_some_and(|p| row.rowid <= p) || row.rowid > leaf.max_key {
                        return Err(self.row_err(leaf.page, row.rowid, "ids out of order"));
                    }
                    prev = Some(row.rowid);
                    if self.standard {
                        if let Some((topic, time)) = leading_ints(row.local) {
                            let ci = sc.push(row.rowid, topic, time);
                            if sc.wants(ci) {
                                self.capture_row(&mut sc, &row);
                            }
                            return Ok(());
                        }
                    }
                    let [topic, time, _] = columns(row.local, row.size, self.cols)
                        .map_err(|e| self.row_err(leaf.page, row.rowid, e))?;
                    let int = |c: Option<Column>, what: &str| {
                        c.and_then(|c| self.int(&row, c)).ok_or_else(|| {
                            self.row_err(leaf.page, row.rowid, &format!("{what} is not an integer"))
                        })
                    };
                    let ci = sc.push(row.rowid, int(topic, "topic_id")?, int(time, "timestamp")?);
                    if sc.wants(ci) {
                        self.capture_row(&mut sc, &row);
                    }
                    Ok(())
                })
            })
        })?;
        Ok(sc.finish())
    }

    /// Keeps `row`'s payload in `sc`'s capture.
    pub(super) fn capture_row(&self, sc: &mut RowScanner<'_>, row: &Row<'_>) {
        let data = columns(row.local, row.size, self.cols)
            .ok()
            .and_then(|[_, _, d]| d.filter(|c| c.is_bytes() && c.len() <= MAX_MESSAGE));
        sc.capture(row.rowid, |d| match data {
            Some(c) => {
                d.reserve((c.len() as usize).min(1 << 20));
                self.file.payload_bytes(row, c.at, c.len(), d)
            }
            None => Err(Error::Invalid("no data column".into())),
        });
    }

    /// An integer column's value, from the leaf or (after a large value) the overflow chain.
    pub(super) fn int(&self, row: &Row<'_>, c: Column) -> Option<i64> {
        c.int(row.local).or_else(|| {
            let mut b = Vec::with_capacity(8);
            self.file.payload_bytes(row, c.at, c.len(), &mut b).ok()?;
            Column { at: 0, ..c }.int(&b)
        })
    }

    pub(super) fn row_err(&self, page: u32, rowid: i64, what: &str) -> Error {
        self.file.bad(page, format!("messages row {rowid}: {what}"))
    }

    /// The rows with ids in `first..=last` (of the topic ids `topics`, if given), into `out`.
    pub(super) fn rows(
        &self,
        first: i64,
        last: i64,
        topics: Option<&[i64]>,
        out: &mut BlockBuf<'_>,
    ) -> Result<()> {
        let a = self.leaves.partition_point(|l| l.max_key < first);
        let b = (self.leaves.partition_point(|l| l.max_key < last) + 1).min(self.leaves.len());
        let Some(run) = self.leaves.get(a..b) else {
            return Ok(());
        };
        PAGES.with_borrow_mut(|buf| {
            self.file.for_each_leaf(run, buf, |leaf, page| {
                self.file.leaf_rows(leaf.page, page, |row| {
                    if row.rowid < first || row.rowid > last {
                        return Ok(());
                    }
                    // A row of another topic is passed over on its first bytes where it can be.
                    if let (Some(t), true) = (topics, self.standard) {
                        if let Some((id, _)) = leading_ints(row.local) {
                            if !t.contains(&id) {
                                return Ok(());
                            }
                        }
                    }
                    let [topic, _, data] = columns(row.local, row.size, self.cols)
                        .map_err(|e| self.row_err(leaf.page, row.rowid, e))?;
                    if let Some(t) = topics {
                        let id = topic.and_then(|c| self.int(&row, c));
                        if !id.is_some_and(|id| t.contains(&id)) {
                            return Ok(());
                        }
                    }
                    out.push(row.rowid, |d| {
                        if let Some(c) = data.filter(Column::is_bytes) {
                            if c.len() > MAX_MESSAGE {
                                return Err(self.row_err(
                                    leaf.page,
                                    row.rowid,
                                    &format!("a message of {} bytes", c.len()),
                                ));
                            }
                            // Room for the bytes as they are read, not as claimed.
                            d.reserve((c.len() as usize).min(1 << 20));
                            self.file.payload_bytes(&row, c.at, c.len(), d)?;
                        }
                        Ok(())
                    })
                })
            })
        })
    }
}

pub(super) fn uri_of(path: &Path) -> String {
    let p = path.to_string_lossy();
    let mut out = String::from("file:");
    for b in p.bytes() {
        match b {
            b'?' | b'#' | b'%' => out.push_str(&format!("%{b:02X}")),
            _ => out.push(b as char),
        }
    }
    out
}

pub(super) fn sql_err<'a>(path: &'a Path, what: &str) -> impl Fn(rusqlite::Error) -> Error + 'a {
    let what = what.to_string();
    move |e| Error::Storage {
        path: path.to_path_buf(),
        reason: format!("{what}: {e}"),
    }
}

/// Opens a database file read-only and immutable: SQLite writes nothing beside it (no -shm,
/// no journal) and reads it through a memory map.
pub(super) fn open_immutable(path: &Path) -> rusqlite::Result<rusqlite::Connection> {
    let c = rusqlite::Connection::open_with_flags(
        format!("{}?mode=ro&immutable=1", uri_of(path)),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY
            | rusqlite::OpenFlags::SQLITE_OPEN_URI
            | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    c.execute_batch(MMAP_PRAGMA)?;
    Ok(c)
}

pub(super) fn open_sqlite(
    path: &Path,
    message_mode: bool,
    mut tmp: Option<TempDir>,
    meta: Option<&Metadata>,
    opts: &crate::OpenOptions,
) -> Result<Part> {
    let size = std::fs::metadata(path)?.len();
    let (conn, wal_copy) = open_database(path, &mut tmp)?;
    // Read through a memory map rather than read(2) calls (the file is never written).
    let _ = conn.execute_batch(MMAP_PRAGMA);
    let Schema {
        newer_schema,
        connections,
        by_topic_id,
        distro,
    } = read_schema(&conn, path)?;
    // The rows, in id order, make both the blocks and the tables: the id range is split
    // between threads, each with its own read-only connection.
    // One min() or max() a query: SQLite answers each from the rowid b-tree's ends.
    let lo: Option<i64> = conn
        .query_row("SELECT min(id) FROM messages", [], |r| r.get(0))
        .map_err(sql_err(path, "reading the messages table"))?;
    let hi: Option<i64> = conn
        .query_row("SELECT max(id) FROM messages", [], |r| r.get(0))
        .map_err(sql_err(path, "reading the messages table"))?;
    let mut warnings = Vec::new();
    // More connections, for the threads that scan and later read rows (not for a private copy
    // of a WAL database, which the first connection alone reads with its WAL).
    let extra: Vec<Mutex<rusqlite::Connection>> = if wal_copy {
        Vec::new()
    } else {
        (1..opts.threads().clamp(1, 4))
            .filter_map(|_| open_immutable(path).ok().map(Mutex::new))
            .collect()
    };
    // A plain file scanned before (not a private copy of a WAL or zstd file) reopens from the
    // index cache, keyed by its path, size and modification time.
    let key = if tmp.is_none() && !wal_copy {
        crate::storage::index_cache::Key::of(path, &opts.index_cache)
    } else {
        None
    };
    // The rows read from the file's pages where they can be (not a private copy with its WAL:
    // the pages there are not the database until SQLite applies the log).
    let direct = if wal_copy || !opts.sqlite_pages {
        None
    } else {
        Direct::new(&conn, path)
    };
    let first_data: Option<Vec<u8>> = conn
        .query_row("SELECT data FROM messages ORDER BY id LIMIT 1", [], |r| {
            r.get::<_, Vec<u8>>(0)
        })
        .ok();
    // Message-mode compression: said by metadata.yaml, or seen in the data.
    let zstd_messages = message_mode
        || first_data
            .as_deref()
            .is_some_and(|d| d.starts_with(ZSTD_MAGIC));
    // A recording whose metadata.yaml the database bears out opens without reading its rows:
    // the summary is metadata.yaml's, the scan (or the index cache's copy of it) waits for
    // the first call that needs it, which a time window read through the timestamp index
    // may never make.
    let quick = match (meta, &direct) {
        (Some(m), Some(_)) => quick_counts(&conn, m, &connections, lo, hi),
        _ => None,
    };
    let cached = key
        .as_ref()
        .filter(|_| quick.is_none())
        .and_then(|k| crate::storage::index_cache::load_rows(k, connections.len()));
    let mut src = SqliteSource {
        conns: {
            let mut v = vec![Mutex::new(conn)];
            v.extend(extra);
            v
        },
        size,
        shown_path: path.to_path_buf(),
        zstd_messages,
        direct,
        direct_refused: std::sync::atomic::AtomicBool::new(false),
        _tmp: tmp,
    };
    let ncon = connections.len();
    let mut rows = RowsToScan {
        by_topic_id,
        ncon,
        expected: None,
        range: lo.zip(hi),
        key,
        meta: meta.cloned(),
        threads: opts.threads(),
    };
    let mut summary = Summary {
        path: path.to_path_buf(),
        file_size: size,
        version: Version::Rosbag2Sqlite,
        indexed: true,
        connections,
        warnings: Vec::new(),
        ..Default::default()
    };
    let (tables, deferred) = if let Some((counts, start, end)) = quick {
        for (c, &n) in summary.connections.iter_mut().zip(&counts) {
            c.message_count = n;
        }
        rows.expected = Some(counts);
        summary.rows_pending = true;
        summary.start_ns = Some(start);
        summary.end_ns = Some(end);
        (None, Some(Deferred { rows }))
    } else {
        let scan = if let Some(c) = cached {
            warnings.push(
                "rows read from bagscope's index cache (the file was scanned once before)".into(),
            );
            ScannedRows {
                chunks: c.chunks,
                per: c.per,
                unknown: c.unknown,
                captured: HashMap::new(),
                from_cache: true,
            }
        } else {
            rows.scan(&src, None)?
        };
        // Pages the direct reader refused go to SQLite from now on.
        if src
            .direct_refused
            .load(std::sync::atomic::Ordering::Relaxed)
        {
            src.direct = None;
        }
        let (chunks, per) = scan.into_blocks(&mut warnings, zstd_messages);
        summary.chunks = chunks;
        (
            Some(MessageTables {
                per_connection: per,
                warnings: Vec::new(),
            }),
            None,
        )
    };
    summary.warnings = warnings;
    summary.finish();
    Ok(Part {
        source: Source::Sqlite(Box::new(src)),
        opened: Opened {
            profile: String::new(),
            deferred,
            keep: None,
            summary,
            index_pos: 0,
            tables,
        },
        storage: "sqlite3",
        newer_schema,
        compression: if zstd_messages {
            ("zstd".into(), "message".into())
        } else {
            (String::new(), String::new())
        },
        distro,
    })
}

/// The database at `path` opened read-only and immutable; or, when its `-wal` file holds
/// writes not yet checkpointed, a private copy of both in a temporary directory kept in `tmp`
/// (`true`), so that nothing is written beside the recording.
fn open_database(path: &Path, tmp: &mut Option<TempDir>) -> Result<(rusqlite::Connection, bool)> {
    use rusqlite::OpenFlags;
    let wal = {
        let mut w = path.as_os_str().to_owned();
        w.push("-wal");
        PathBuf::from(w)
    };
    let wal_has_data = std::fs::metadata(&wal).is_ok_and(|m| m.len() > 0);
    let wal_copy = wal_has_data && tmp.is_none();
    let conn = if wal_copy {
        // Uncheckpointed writes live in the -wal file: read a private copy of both, so that
        // nothing is written beside the bag.
        let t = TempDir::new()?;
        let name = path.file_name().unwrap_or_default();
        let copy = t.0.join(name);
        std::fs::copy(path, &copy)?;
        let mut wcopy = copy.as_os_str().to_owned();
        wcopy.push("-wal");
        std::fs::copy(&wal, PathBuf::from(wcopy))?;
        let c = rusqlite::Connection::open_with_flags(
            &copy,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(sql_err(path, "cannot open the SQLite database"))?;
        *tmp = Some(t);
        c
    } else {
        open_immutable(path).map_err(sql_err(path, "cannot open the SQLite database"))?
    };
    Ok((conn, wal_copy))
}

/// What the tables other than `messages` say: the connections (topics with their types,
/// serialization formats, QoS and, in newer files, definitions), topic ids to connections,
/// the ROS distro.
struct Schema {
    /// The file has the `message_definitions` table (iron and later).
    newer_schema: bool,
    connections: Vec<Connection>,
    by_topic_id: HashMap<i64, usize>,
    distro: String,
}

fn read_schema(conn: &rusqlite::Connection, path: &Path) -> Result<Schema> {
    let tables: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type='table'")
        .and_then(|mut s| {
            s.query_map([], |r| r.get::<_, String>(0))?
                .collect::<rusqlite::Result<Vec<_>>>()
        })
        .map_err(sql_err(path, "not a readable SQLite database"))?;
    let has = |t: &str| tables.iter().any(|x| x == t);
    if !has("topics") || !has("messages") {
        return Err(Error::Storage {
            path: path.to_path_buf(),
            reason: "a SQLite database without the `topics` and `messages` tables of rosbag2"
                .into(),
        });
    }
    let cols: Vec<String> = conn
        .prepare("SELECT name FROM pragma_table_info('topics')")
        .and_then(|mut s| {
            s.query_map([], |r| r.get::<_, String>(0))?
                .collect::<rusqlite::Result<Vec<_>>>()
        })
        .map_err(sql_err(path, "reading the topics table"))?;
    let col = |c: &str| {
        if cols.iter().any(|x| x == c) {
            c.to_string()
        } else {
            "''".to_string()
        }
    };
    let q = format!(
        "SELECT id, name, type, {}, {}, {} FROM topics ORDER BY id",
        col("serialization_format"),
        col("offered_qos_profiles"),
        col("type_description_hash")
    );
    type TopicRow = (i64, String, String, String, String, String);
    let topics: Vec<TopicRow> = conn
        .prepare(&q)
        .and_then(|mut s| {
            s.query_map([], |r| {
                let text = |i| r.get::<_, Option<String>>(i).map(Option::unwrap_or_default);
                Ok((r.get(0)?, text(1)?, text(2)?, text(3)?, text(4)?, text(5)?))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()
        })
        .map_err(sql_err(path, "reading the topics table"))?;
    let mut defs: HashMap<String, (String, String)> = HashMap::new();
    if has("message_definitions") {
        let rows: Vec<(String, String, String)> = conn
            .prepare(
                "SELECT topic_type, encoding, encoded_message_definition FROM message_definitions",
            )
            .and_then(|mut s| {
                s.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                    .collect::<rusqlite::Result<Vec<_>>>()
            })
            .map_err(sql_err(path, "reading the message_definitions table"))?;
        // An empty text is kept with its language: an empty `ros2msg` is std_msgs/msg/Empty's
        // definition (a definition of nothing is looked up elsewhere first).
        for (t, enc, text) in rows {
            let have = defs.get(&t).is_some_and(|d| !d.1.trim().is_empty());
            if !have {
                defs.insert(t, (enc, text));
            }
        }
    }
    let distro: String = if has("schema") {
        conn.query_row("SELECT ros_distro FROM schema LIMIT 1", [], |r| {
            r.get::<_, String>(0)
        })
        .unwrap_or_default()
    } else {
        String::new()
    };
    let mut by_topic_id: HashMap<i64, usize> = HashMap::new();
    let mut connections = Vec::with_capacity(topics.len());
    for (id, name, ty, fmt, qos, type_hash) in topics {
        let (schema_encoding, def) = defs.get(&ty).cloned().unwrap_or_default();
        by_topic_id.insert(id, connections.len());
        connections.push(Connection {
            id: u32::try_from(id).unwrap_or(u32::MAX),
            topic: name,
            datatype: ty,
            message_definition: def,
            encoding: if fmt.is_empty() { "cdr".into() } else { fmt },
            schema_encoding,
            qos,
            type_hash,
            ..Default::default()
        });
    }
    Ok(Schema {
        newer_schema: has("message_definitions"),
        connections,
        by_topic_id,
        distro,
    })
}

/// Per-connection counts and the time range of a database from `m` (its metadata.yaml), where
/// the database bears them out without reading its rows: every topic of one and the other
/// listed in both with the same type, the number of rows (the span of the row ids: rosbag2
/// never deletes one) equal to the message count, and the first and last timestamps (the ends
/// of an index on `timestamp`, which rosbag2 writes) equal to the recording's start and end.
/// `None` where any of this is not so or cannot be checked: the rows are then read at open.
pub(super) fn quick_counts(
    conn: &rusqlite::Connection,
    m: &Metadata,
    connections: &[Connection],
    lo: Option<i64>,
    hi: Option<i64>,
) -> Option<(Vec<u64>, u64, u64)> {
    let total = m.message_count?;
    let (lo, hi) = lo.zip(hi)?;
    if total == 0 || i128::from(hi) - i128::from(lo) + 1 != i128::from(total) {
        return None;
    }
    let mut names = std::collections::BTreeSet::new();
    let mut counts = Vec::with_capacity(connections.len());
    for c in connections {
        // One connection a topic: metadata.yaml's count cannot be split between several.
        if !names.insert(c.topic.as_str()) {
            return None;
        }
        let (ty, _, _, n) = m.topics.get(&c.topic)?;
        if *ty != c.datatype {
            return None;
        }
        counts.push(*n);
    }
    if names.len() != m.topics.len() || counts.iter().sum::<u64>() != total {
        return None;
    }
    let indexed: bool = conn
        .query_row(
            "SELECT count(*) > 0 FROM pragma_index_list('messages') AS l, \
             pragma_index_info(l.name) AS i WHERE i.seqno = 0 AND i.name = 'timestamp'",
            [],
            |r| r.get(0),
        )
        .ok()?;
    if !indexed {
        return None;
    }
    // One min() or max() a query: each is then the end of the index.
    let first: i64 = conn
        .query_row("SELECT min(timestamp) FROM messages", [], |r| r.get(0))
        .ok()?;
    let last: i64 = conn
        .query_row("SELECT max(timestamp) FROM messages", [], |r| r.get(0))
        .ok()?;
    let start = u64::try_from(first).ok()?;
    let end = u64::try_from(last).ok()?;
    if m.start_ns? != i128::from(first) || m.start_ns? + m.duration_ns? != i128::from(last) {
        return None;
    }
    Some((counts, start, end))
}
