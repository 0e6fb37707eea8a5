//! Writing rosbag2 recordings: a directory with `metadata.yaml` (version 8) and one or more
//! storage files, SQLite (schema version 4, with `message_definitions`) or MCAP (profile
//! `ros2`, `ros2msg` schemas, QoS in the channel metadata); optionally split by size, and
//! zstd-compressed per file (`.db3.zstd`, `.mcap.zstd`) or per message.
//!
//! The recording is built in a temporary directory beside the target and renamed into place
//! by [`Rosbag2Writer::finish`]; dropped unfinished, it leaves nothing behind. The target must
//! not exist.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::storage::compression::Compression;
use crate::storage::mcap::writer::{McapOptions, McapWriter};

/// The storage plugin of a rosbag2 recording.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Rosbag2Storage {
    /// `.db3` files.
    #[default]
    Sqlite3,
    /// `.mcap` files.
    Mcap,
}

/// zstd compression of a rosbag2 recording.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Rosbag2Compression {
    /// None.
    #[default]
    None,
    /// Each storage file compressed whole once written (`.db3.zstd`).
    File,
    /// Each message compressed on its own.
    Message,
}

/// Options of a [`Rosbag2Writer`].
#[derive(Debug, Clone, Default)]
pub struct Rosbag2Options {
    /// SQLite or MCAP files.
    pub storage: Rosbag2Storage,
    /// zstd per file or per message.
    pub compression: Rosbag2Compression,
    /// Start a new storage file once the current one holds this many bytes of messages.
    pub split_bytes: Option<u64>,
    /// Start a new storage file with the first message this many nanoseconds or more after
    /// the current file's first message (rosbag2's `max_bag_duration`).
    pub split_ns: Option<u64>,
    /// The distro written into the storage and metadata.yaml (empty: unknown).
    pub ros_distro: String,
    /// SQLite page size, a power of two from 512 to 65,536 (0: 4,096). Large pages insert
    /// millions of rows in about half the time (fewer b-tree splits) for the same size, but
    /// cost some 64 KiB per table in every file: for large files, not for small or split ones.
    pub sqlite_page_size: u32,
}

/// A topic as the writer records it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TopicSpec {
    /// Topic name.
    pub name: String,
    /// Type, `pkg/msg/Type`.
    pub datatype: String,
    /// Serialization format (`cdr`).
    pub serialization_format: String,
    /// Offered QoS profiles, in the YAML form of metadata version 4 to 8 (or empty).
    pub qos: String,
    /// The `ros2msg` definition (with its dependencies), or empty.
    pub definition: String,
    /// The type's hash as its publisher announced it (`RIHS01_…`), or empty.
    pub type_hash: String,
}

struct FileStat {
    name: String,
    start: u64,
    end: u64,
    count: u64,
}

/// Page size of the SQLite files written unless [`Rosbag2Options::sqlite_page_size`] says
/// otherwise: SQLite's (and rosbag2's) default.
const DEFAULT_PAGE_SIZE: u32 = 4096;

/// Rows inserted by one statement.
const ROWS_PER_INSERT: usize = 128;

/// Shortest split duration accepted: 1 ms.
pub const MIN_SPLIT_NS: u64 = 1_000_000;

/// The statement that inserts one row, and the one that inserts [`ROWS_PER_INSERT`].
const INSERT_ONE: &str = "INSERT INTO messages(topic_id, timestamp, data) VALUES (?,?,?)";
static INSERT_MANY: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    format!(
        "INSERT INTO messages(topic_id, timestamp, data) VALUES {}",
        vec!["(?,?,?)"; ROWS_PER_INSERT].join(",")
    )
});

/// Inserts the pending rows: full statements of [`ROWS_PER_INSERT`] rows, then one row at a time.
fn insert_pending(
    conn: &rusqlite::Connection,
    pending: &mut Vec<(i64, i64, usize)>,
    data: &mut Vec<u8>,
) -> rusqlite::Result<()> {
    let mut start = 0usize;
    let mut rows = pending.as_slice();
    while !rows.is_empty() {
        let (n, sql) = if rows.len() >= ROWS_PER_INSERT {
            (ROWS_PER_INSERT, INSERT_MANY.as_str())
        } else {
            (1, INSERT_ONE)
        };
        let mut stmt = conn.prepare_cached(sql)?;
        for (k, &(id, t, end)) in rows[..n].iter().enumerate() {
            stmt.raw_bind_parameter(3 * k + 1, id)?;
            stmt.raw_bind_parameter(3 * k + 2, t)?;
            stmt.raw_bind_parameter(3 * k + 3, &data[start..end])?;
            start = end;
        }
        stmt.raw_execute()?;
        rows = &rows[n..];
    }
    pending.clear();
    data.clear();
    Ok(())
}

enum Current {
    None,
    Sqlite {
        conn: Box<rusqlite::Connection>,
        bytes: u64,
        /// Topic index to the file's topic id (topics are added to each file when first used).
        ids: Vec<Option<i64>>,
        /// Rows not yet inserted: (topic id, time, end of the payload in `data`); inserted
        /// [`ROWS_PER_INSERT`] at a time (one statement per row costs more than the row).
        pending: Vec<(i64, i64, usize)>,
        data: Vec<u8>,
    },
    Mcap {
        w: Box<McapWriter>,
        bytes: u64,
        channels: Vec<Option<u16>>,
        schemas: std::collections::HashMap<String, u16>,
    },
}

/// Writes a rosbag2 recording.
pub struct Rosbag2Writer {
    tmp: PathBuf,
    target: PathBuf,
    stem: String,
    opts: Rosbag2Options,
    topics: Vec<TopicSpec>,
    counts: Vec<u64>,
    files: Vec<FileStat>,
    current: Current,
    done: bool,
    /// Written as `target.active` by a live recorder: kept when dropped unfinished.
    active: bool,
}

fn yaml_str(s: &str) -> String {
    // A JSON string is a valid YAML double-quoted scalar.
    serde_json::Value::String(s.to_string()).to_string()
}

impl Rosbag2Writer {
    /// Starts writing a recording that will appear as the directory `target` when finished.
    pub fn create(target: impl AsRef<Path>, opts: Rosbag2Options) -> Result<Rosbag2Writer> {
        let target = target.as_ref().to_path_buf();
        if opts.split_ns.is_some_and(|d| d < MIN_SPLIT_NS) {
            return Err(Error::Invalid(
                "a split duration must be at least 1 ms (rosbag2's max bag duration)".into(),
            ));
        }
        let ps = opts.sqlite_page_size;
        if ps != 0 && !(ps.is_power_of_two() && (512..=65536).contains(&ps)) {
            return Err(Error::Invalid(format!(
                "SQLite page size {ps}: a power of two from 512 to 65536"
            )));
        }
        if opts.split_bytes == Some(0) {
            return Err(Error::Invalid(
                "a split size must be at least 1 byte".into(),
            ));
        }
        if target.exists() {
            return Err(Error::Invalid(format!(
                "{} exists: a rosbag2 recording is written into a new directory",
                target.display()
            )));
        }
        let stem = target
            .file_name()
            .map_or_else(|| "bag".into(), |n| n.to_string_lossy().into_owned());
        let tmp = crate::storage::output::temp_path_for(&target);
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&tmp).map_err(|e| Error::Open {
            path: tmp.clone(),
            source: e,
        })?;
        Ok(Rosbag2Writer {
            tmp,
            target,
            stem,
            opts,
            topics: Vec::new(),
            counts: Vec::new(),
            files: Vec::new(),
            current: Current::None,
            done: false,
            active: false,
        })
    }

    /// Starts writing a recording from a live system: built in the directory `target.active`
    /// (renamed to `target` when finished); a recorder killed before then leaves that directory
    /// with everything [`Rosbag2Writer::flush`] wrote: SQLite files committed, MCAP files
    /// (`NAME_0.mcap.active`) with every chunk closed. bagscope opens it without its
    /// metadata.yaml.
    pub fn create_active(target: impl AsRef<Path>, opts: Rosbag2Options) -> Result<Rosbag2Writer> {
        let target = target.as_ref().to_path_buf();
        let active = crate::storage::output::active_path_for(&target);
        if active.exists() {
            return Err(Error::Invalid(format!(
                "{} exists (a recording being written, or one a killed recorder left): not overwritten",
                active.display()
            )));
        }
        let mut w = Rosbag2Writer::create(&target, opts)?;
        let _ = std::fs::remove_dir_all(&w.tmp);
        std::fs::create_dir_all(&active).map_err(|e| Error::Open {
            path: active.clone(),
            source: e,
        })?;
        w.tmp = active;
        w.active = true;
        Ok(w)
    }

    /// Hands everything written so far to the operating system: the SQLite transaction is
    /// committed (and a new one begun), the MCAP file's chunk closed.
    pub fn flush(&mut self) -> Result<()> {
        let r = match &mut self.current {
            Current::None => Ok(()),
            Current::Sqlite {
                conn,
                pending,
                data,
                ..
            } => insert_pending(conn, pending, data)
                .and_then(|_| conn.execute_batch("COMMIT; BEGIN;")),
            Current::Mcap { w, .. } => return w.flush(),
        };
        r.map_err(|e| self.storage_err(e))
    }

    /// Adds a topic; its index is what [`Rosbag2Writer::write`] takes.
    pub fn add_topic(&mut self, t: TopicSpec) -> usize {
        self.topics.push(t);
        self.counts.push(0);
        match &mut self.current {
            Current::Sqlite { ids, .. } => ids.push(None),
            Current::Mcap { channels, .. } => channels.push(None),
            Current::None => {}
        }
        self.topics.len() - 1
    }

    fn storage_err(&self, e: rusqlite::Error) -> Error {
        Error::Storage {
            path: self.tmp.clone(),
            reason: format!("writing SQLite: {e}"),
        }
    }

    fn open_file(&mut self) -> Result<()> {
        let i = self.files.len();
        let ext = match self.opts.storage {
            Rosbag2Storage::Sqlite3 => "db3",
            Rosbag2Storage::Mcap => "mcap",
        };
        let name = format!("{}_{i}.{ext}", self.stem);
        let path = self.tmp.join(&name);
        self.current = match self.opts.storage {
            Rosbag2Storage::Sqlite3 => {
                // One thread writes a file nobody else reads until it is renamed into place:
                // no mutex, no locking, no journal, no syncing, a large page cache.
                let conn = rusqlite::Connection::open_with_flags(
                    &path,
                    rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE
                        | rusqlite::OpenFlags::SQLITE_OPEN_CREATE
                        | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
                )
                .map_err(|e| self.storage_err(e))?;
                conn.execute_batch(&format!(
                    "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA page_size={};
                     PRAGMA locking_mode=EXCLUSIVE; PRAGMA cache_size=-65536;
                     CREATE TABLE schema(schema_version INTEGER PRIMARY KEY,ros_distro TEXT NOT NULL);
                     INSERT INTO schema VALUES(4, {});
                     CREATE TABLE metadata(id INTEGER PRIMARY KEY,metadata_version INTEGER NOT NULL,metadata TEXT NOT NULL);
                     CREATE TABLE topics(id INTEGER PRIMARY KEY,name TEXT NOT NULL,type TEXT NOT NULL,serialization_format TEXT NOT NULL,offered_qos_profiles TEXT NOT NULL,type_description_hash TEXT NOT NULL);
                     CREATE TABLE message_definitions(id INTEGER PRIMARY KEY,topic_type TEXT NOT NULL,encoding TEXT NOT NULL,encoded_message_definition TEXT NOT NULL,type_description_hash TEXT NOT NULL);
                     CREATE TABLE messages(id INTEGER PRIMARY KEY,topic_id INTEGER NOT NULL,timestamp INTEGER NOT NULL, data BLOB NOT NULL);
                     CREATE INDEX timestamp_idx ON messages (timestamp ASC);
                     BEGIN;",
                    if self.opts.sqlite_page_size == 0 {
                        DEFAULT_PAGE_SIZE
                    } else {
                        self.opts.sqlite_page_size
                    },
                    sql_quote(&self.opts.ros_distro)
                ))
                .map_err(|e| self.storage_err(e))?;
                Current::Sqlite {
                    conn: Box::new(conn),
                    bytes: 0,
                    ids: vec![None; self.topics.len()],
                    pending: Vec::with_capacity(ROWS_PER_INSERT),
                    data: Vec::new(),
                }
            }
            Rosbag2Storage::Mcap => {
                let mo = McapOptions {
                    compression: Compression::Zstd,
                    chunk_size: 1 << 20,
                    profile: "ros2".into(),
                    ..McapOptions::default()
                };
                let w = if self.active {
                    McapWriter::create_active(&path, mo)?
                } else {
                    McapWriter::create(&path, mo)?
                };
                Current::Mcap {
                    w: Box::new(w),
                    bytes: 0,
                    channels: vec![None; self.topics.len()],
                    schemas: Default::default(),
                }
            }
        };
        self.files.push(FileStat {
            name,
            start: u64::MAX,
            end: 0,
            count: 0,
        });
        Ok(())
    }

    fn close_file(&mut self) -> Result<()> {
        match std::mem::replace(&mut self.current, Current::None) {
            Current::None => return Ok(()),
            Current::Sqlite {
                conn,
                mut pending,
                mut data,
                ..
            } => {
                insert_pending(&conn, &mut pending, &mut data).map_err(|e| self.storage_err(e))?;
                conn.execute_batch("COMMIT;")
                    .map_err(|e| self.storage_err(e))?;
                drop(conn);
            }
            Current::Mcap { w, .. } => {
                if !self.opts.ros_distro.is_empty() {
                    let mut w = w;
                    w.add_metadata(
                        "rosbag2",
                        &[("ROS_DISTRO".to_string(), self.opts.ros_distro.clone())],
                    )?;
                    w.finish()?;
                } else {
                    w.finish()?;
                }
            }
        }
        if self.opts.compression == Rosbag2Compression::File {
            let Some(f) = self.files.last_mut() else {
                return Ok(());
            };
            let src = self.tmp.join(&f.name);
            let dst_name = format!("{}.zstd", f.name);
            let dst = self.tmp.join(&dst_name);
            {
                let mut input = std::fs::File::open(&src)?;
                let out = std::fs::File::create(&dst)?;
                let mut enc = zstd::stream::write::Encoder::new(out, 3)?;
                std::io::copy(&mut input, &mut enc)?;
                enc.finish()?;
            }
            std::fs::remove_file(&src)?;
            f.name = dst_name;
        }
        Ok(())
    }

    /// Adds a message of topic `topic` received at `time_ns`.
    pub fn write(&mut self, topic: usize, time_ns: u64, data: &[u8]) -> Result<()> {
        if topic >= self.topics.len() {
            return Err(Error::Invalid(format!("no topic {topic}")));
        }
        let full = match &self.current {
            Current::Sqlite { bytes, .. } | Current::Mcap { bytes, .. } => {
                self.opts.split_bytes.is_some_and(|b| *bytes >= b)
                    || self.opts.split_ns.is_some_and(|d| {
                        self.files
                            .last()
                            .is_some_and(|f| f.count > 0 && time_ns.saturating_sub(f.start) >= d)
                    })
            }
            Current::None => true,
        };
        if full {
            self.close_file()?;
            self.open_file()?;
        }
        let compressed;
        let payload = if self.opts.compression == Rosbag2Compression::Message {
            compressed = zstd::bulk::compress(data, 3)?;
            &compressed[..]
        } else {
            data
        };
        let spec = &self.topics[topic];
        match &mut self.current {
            Current::Sqlite {
                conn,
                bytes,
                ids,
                pending,
                data,
            } => {
                let id = match ids[topic] {
                    Some(id) => id,
                    None => {
                        let id = ids.iter().flatten().count() as i64 + 1;
                        conn.execute(
                            "INSERT INTO topics(id, name, type, serialization_format, offered_qos_profiles, type_description_hash) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                            rusqlite::params![id, spec.name, spec.datatype, spec.serialization_format, spec.qos, spec.type_hash],
                        )
                        .map_err(|e| Error::Storage { path: PathBuf::from(&spec.name), reason: format!("writing SQLite: {e}") })?;
                        if !spec.definition.is_empty() {
                            let known: i64 = conn
                                .query_row(
                                    "SELECT count(*) FROM message_definitions WHERE topic_type = ?1",
                                    [&spec.datatype],
                                    |r| r.get(0),
                                )
                                .unwrap_or(0);
                            if known == 0 {
                                conn.execute(
                                    "INSERT INTO message_definitions(topic_type, encoding, encoded_message_definition, type_description_hash) VALUES (?1, 'ros2msg', ?2, ?3)",
                                    rusqlite::params![spec.datatype, spec.definition, spec.type_hash],
                                )
                                .map_err(|e| Error::Storage { path: PathBuf::from(&spec.name), reason: format!("writing SQLite: {e}") })?;
                            }
                        }
                        ids[topic] = Some(id);
                        id
                    }
                };
                let t = i64::try_from(time_ns).unwrap_or(i64::MAX);
                data.extend_from_slice(payload);
                pending.push((id, t, data.len()));
                if pending.len() >= ROWS_PER_INSERT {
                    insert_pending(conn, pending, data).map_err(|e| Error::Storage {
                        path: PathBuf::from(&spec.name),
                        reason: format!("writing SQLite: {e}"),
                    })?;
                }
                *bytes += payload.len() as u64 + 32;
            }
            Current::Mcap {
                w,
                bytes,
                channels,
                schemas,
            } => {
                let ch = match channels[topic] {
                    Some(c) => c,
                    None => {
                        let schema = if spec.definition.is_empty() {
                            0
                        } else if let Some(&s) = schemas.get(&spec.datatype) {
                            s
                        } else {
                            let s = w.add_schema(
                                &spec.datatype,
                                "ros2msg",
                                spec.definition.as_bytes(),
                            )?;
                            schemas.insert(spec.datatype.clone(), s);
                            s
                        };
                        let c = w.add_channel(
                            schema,
                            &spec.name,
                            &spec.serialization_format,
                            &[
                                ("offered_qos_profiles".to_string(), spec.qos.clone()),
                                ("topic_type_hash".to_string(), String::new()),
                            ],
                        )?;
                        channels[topic] = Some(c);
                        c
                    }
                };
                let seq = w.message_count() as u32;
                w.write(ch, seq, time_ns, time_ns, payload)?;
                *bytes += payload.len() as u64 + 31;
            }
            Current::None => return Err(Error::Invalid("no storage file open".into())),
        }
        if let Some(f) = self.files.last_mut() {
            f.start = f.start.min(time_ns);
            f.end = f.end.max(time_ns);
            f.count += 1;
        }
        self.counts[topic] += 1;
        Ok(())
    }

    /// Closes the last file, writes metadata.yaml and renames the directory into place.
    pub fn finish(mut self) -> Result<PathBuf> {
        if self.files.is_empty() {
            // No message: still one (empty) storage file, as rosbag2 leaves.
            self.open_file()?;
        }
        self.close_file()?;
        let yaml = self.metadata_yaml();
        std::fs::write(self.tmp.join("metadata.yaml"), yaml)?;
        std::fs::rename(&self.tmp, &self.target)?;
        self.done = true;
        Ok(self.target.clone())
    }

    fn metadata_yaml(&self) -> String {
        let total: u64 = self.counts.iter().sum();
        let start = self.files.iter().map(|f| f.start).min().unwrap_or(u64::MAX);
        let end = self.files.iter().map(|f| f.end).max().unwrap_or(0);
        let (start, dur) = if total == 0 {
            (0, 0)
        } else {
            (start, end - start)
        };
        let mut y = String::from("rosbag2_bagfile_information:\n  version: 8\n");
        let storage = match self.opts.storage {
            Rosbag2Storage::Sqlite3 => "sqlite3",
            Rosbag2Storage::Mcap => "mcap",
        };
        let _ = writeln!(y, "  storage_identifier: {storage}");
        y.push_str("  relative_file_paths:\n");
        for f in &self.files {
            let _ = writeln!(y, "    - {}", yaml_str(&f.name));
        }
        let _ = writeln!(y, "  duration:\n    nanoseconds: {dur}");
        let _ = writeln!(y, "  starting_time:\n    nanoseconds_since_epoch: {start}");
        let _ = writeln!(y, "  message_count: {total}");
        y.push_str("  topics_with_message_count:\n");
        for (t, n) in self.topics.iter().zip(&self.counts) {
            if *n == 0 {
                continue;
            }
            let _ = writeln!(y, "    - topic_metadata:");
            let _ = writeln!(y, "        name: {}", yaml_str(&t.name));
            let _ = writeln!(y, "        type: {}", yaml_str(&t.datatype));
            let _ = writeln!(
                y,
                "        serialization_format: {}",
                yaml_str(&t.serialization_format)
            );
            let _ = writeln!(y, "        offered_qos_profiles: {}", yaml_str(&t.qos));
            let _ = writeln!(
                y,
                "        type_description_hash: {}",
                yaml_str(&t.type_hash)
            );
            let _ = writeln!(y, "      message_count: {n}");
        }
        let (fmt, mode) = match self.opts.compression {
            Rosbag2Compression::None => ("", ""),
            Rosbag2Compression::File => ("zstd", "FILE"),
            Rosbag2Compression::Message => ("zstd", "MESSAGE"),
        };
        let _ = writeln!(y, "  compression_format: {}", yaml_str(fmt));
        let _ = writeln!(y, "  compression_mode: {}", yaml_str(mode));
        y.push_str("  files:\n");
        for f in &self.files {
            let (s, d) = if f.count == 0 {
                (0, 0)
            } else {
                (f.start, f.end - f.start)
            };
            let _ = writeln!(y, "    - path: {}", yaml_str(&f.name));
            let _ = writeln!(
                y,
                "      starting_time:\n        nanoseconds_since_epoch: {s}"
            );
            let _ = writeln!(y, "      duration:\n        nanoseconds: {d}");
            let _ = writeln!(y, "      message_count: {}", f.count);
        }
        y.push_str("  custom_data: ~\n");
        let _ = writeln!(y, "  ros_distro: {}", yaml_str(&self.opts.ros_distro));
        y
    }
}

fn sql_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

impl Drop for Rosbag2Writer {
    fn drop(&mut self) {
        if !self.done && !self.active {
            self.current = Current::None;
            let _ = std::fs::remove_dir_all(&self.tmp);
        }
    }
}
