//! The rosbag2 storage: a directory with `metadata.yaml` and one or more storage files
//! (`.db3` SQLite or `.mcap`, each perhaps zstd-compressed whole), or a single storage file.
//!
//! Split recordings are read as one: each file's topics become connections (topic ids are per
//! file), each file's chunks or row blocks are kept with the index of their file, and the
//! message tables of all files are merged in time order (ties: file order, then position).
//!
//! SQLite files are opened read-only; a file in WAL mode whose `-wal` side file is empty is
//! opened `immutable` (nothing is written beside it), one whose `-wal` holds data is read from a
//! private copy. `metadata.yaml` (versions 1 to 9) is read for what it says, and compared with
//! the storage, which wins: every disagreement becomes a warning.

use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use yaml_rust2::{Yaml, YamlLoader};

use crate::error::{Error, Result};
use crate::storage::ros1::record::Compression;
use crate::storage::sqlite_file::{columns, leading_ints, Column, Leaf, Row, SqliteFile};
use crate::storage::{
    Bytes, Chunk, ChunkKind, Connection, IndexEntry, Message, MessageTables, Opened, Source,
    Summary, Version,
};

/// The first bytes of a SQLite database.
pub const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";
/// The first bytes of a zstd frame.
pub const ZSTD_MAGIC: &[u8] = &[0x28, 0xB5, 0x2F, 0xFD];

/// Rows per block: the unit the cache, the prefetch and the timeline density work in.
const BLOCK_ROWS: usize = 2048;
/// Maps up to 64 GiB of a database file instead of reading it with system calls.
const MMAP_PRAGMA: &str = "PRAGMA mmap_size = 68719476736;";

/// Widest id range of a block (ids are dense unless rows were deleted).
const BLOCK_ID_SPAN: i64 = 8192;
/// Largest message accepted after per-message zstd.
const MAX_MESSAGE: u64 = 1 << 30;
/// Largest storage file decompressed from `.zstd` (file mode).
const MAX_FILE: u64 = 64 << 30;

/// Whether `path`, whose first bytes are `head`, looks like a rosbag2 `metadata.yaml`.
pub(crate) fn looks_like_metadata(path: &Path, head: &[u8]) -> bool {
    let name_fits = path
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.ends_with(".yaml") || n.ends_with(".yml"));
    name_fits || head.starts_with(b"rosbag2_bagfile_information")
}

/// What `metadata.yaml` says, as far as bagscope uses it.
#[derive(Debug, Default, Clone)]
pub struct Metadata {
    /// `version`.
    pub version: i64,
    /// `storage_identifier`.
    pub storage: String,
    /// `relative_file_paths`.
    pub files: Vec<String>,
    /// `message_count`.
    pub message_count: Option<u64>,
    /// `starting_time`.
    pub start_ns: Option<i128>,
    /// `duration`.
    pub duration_ns: Option<i128>,
    /// `compression_format` and `compression_mode`.
    pub compression: (String, String),
    /// `ros_distro` (version 8 on).
    pub ros_distro: String,
    /// Per topic: type, serialization format, QoS text, message count.
    pub topics: BTreeMap<String, (String, String, String, u64)>,
}

fn yaml_text(y: &Yaml) -> String {
    match y {
        Yaml::String(s) | Yaml::Real(s) => s.clone(),
        Yaml::Integer(i) => i.to_string(),
        Yaml::Boolean(b) => b.to_string(),
        Yaml::Null | Yaml::BadValue => String::new(),
        other => {
            let mut out = String::new();
            let mut e = yaml_rust2::YamlEmitter::new(&mut out);
            let _ = e.dump(other);
            out.trim_start_matches("---").trim().to_string()
        }
    }
}

fn yaml_int(y: &Yaml) -> Option<i128> {
    match y {
        Yaml::Integer(i) => Some(i128::from(*i)),
        Yaml::String(s) | Yaml::Real(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// Parses `metadata.yaml`.
pub fn parse_metadata(text: &str, path: &Path) -> Result<Metadata> {
    let docs = YamlLoader::load_from_str(text).map_err(|e| Error::Storage {
        path: path.to_path_buf(),
        reason: format!("not valid YAML: {e}"),
    })?;
    let info = docs
        .first()
        .map(|d| &d["rosbag2_bagfile_information"])
        .filter(|y| !y.is_badvalue())
        .ok_or_else(|| Error::Storage {
            path: path.to_path_buf(),
            reason: "no `rosbag2_bagfile_information` mapping: not a rosbag2 metadata.yaml".into(),
        })?;
    let mut m = Metadata {
        version: yaml_int(&info["version"]).unwrap_or(0) as i64,
        storage: yaml_text(&info["storage_identifier"]),
        ..Default::default()
    };
    if let Some(v) = info["relative_file_paths"].as_vec() {
        m.files = v.iter().map(yaml_text).collect();
    }
    m.message_count = yaml_int(&info["message_count"]).map(|n| n.max(0) as u64);
    m.start_ns = yaml_int(&info["starting_time"]["nanoseconds_since_epoch"]);
    m.duration_ns = yaml_int(&info["duration"]["nanoseconds"]);
    m.compression = (
        yaml_text(&info["compression_format"]),
        yaml_text(&info["compression_mode"]),
    );
    m.ros_distro = yaml_text(&info["ros_distro"]);
    let top_format = yaml_text(&info["serialization_format"]);
    if let Some(v) = info["topics_with_message_count"].as_vec() {
        for t in v {
            let meta = if t["topic_metadata"].is_badvalue() {
                &t["topic_and_type"]
            } else {
                &t["topic_metadata"]
            };
            let name = yaml_text(&meta["name"]);
            let mut format = yaml_text(&meta["serialization_format"]);
            if format.is_empty() {
                format = top_format.clone();
            }
            let qos = yaml_text(&meta["offered_qos_profiles"]);
            let count = yaml_int(&t["message_count"]).unwrap_or(0).max(0) as u64;
            m.topics
                .insert(name, (yaml_text(&meta["type"]), format, qos, count));
        }
    }
    Ok(m)
}

/// A temporary directory removed when dropped (decompressed or copied storage files).
#[derive(Debug)]
pub(crate) struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Result<TempDir> {
        static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let p = std::env::temp_dir().join(format!("bagscope-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&p)?;
        Ok(TempDir(p))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Opens a rosbag2 directory (or the directory of a `metadata.yaml`).
pub(crate) fn open_dir(dir: &Path) -> Result<(Vec<Source>, Opened)> {
    let meta_path = dir.join("metadata.yaml");
    let mut warnings = Vec::new();
    let meta = if meta_path.is_file() {
        let text = std::fs::read_to_string(&meta_path).map_err(|e| Error::Open {
            path: meta_path.clone(),
            source: e,
        })?;
        Some(parse_metadata(&text, &meta_path)?)
    } else {
        None
    };
    let mut on_disk: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| Error::Open {
            path: dir.to_path_buf(),
            source: e,
        })?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && is_storage_file(p))
        .collect();
    on_disk.sort_by_key(|p| natural_key(p));
    let files: Vec<PathBuf> = match &meta {
        Some(m) if !m.files.is_empty() => {
            let mut listed = Vec::new();
            for f in &m.files {
                if let Some(p) = listed_file(dir, f, m.version) {
                    listed.push(p);
                } else {
                    warnings.push(format!(
                        "metadata.yaml lists {f:?}, which is not in the directory"
                    ));
                }
            }
            for p in &on_disk {
                if !listed.contains(p) {
                    if let Some(n) = p.file_name() {
                        warnings.push(format!(
                            "{} is in the directory but not listed in metadata.yaml; not read",
                            n.to_string_lossy()
                        ));
                    }
                }
            }
            listed
        }
        Some(_) => on_disk,
        None => {
            if on_disk.is_empty() {
                return Err(Error::Storage {
                    path: dir.to_path_buf(),
                    reason: "no metadata.yaml and no storage file (.db3, .mcap, .zstd) in the directory: not a rosbag2 recording".into(),
                });
            }
            warnings.push(
                "no metadata.yaml in the bag directory; the recording was read from its storage files".into(),
            );
            on_disk
        }
    };
    if files.is_empty() {
        warnings.push("no storage file to read".into());
    }
    open_files(dir, &files, meta.as_ref(), warnings)
}

/// Where a file `relative_file_paths` lists is. Metadata versions 1-3 (eloquent, foxy) name
/// files from the *parent* of the bag directory (`bagname/bagname_0.db3`), as rosbag2's own
/// `resolve_relative_paths` reads them; later versions from the bag directory. A listing of the
/// other kind, or one naming a bag directory since renamed, is found by its file name in the
/// bag directory.
fn listed_file(dir: &Path, f: &str, version: i64) -> Option<PathBuf> {
    let own = if version < 4 {
        dir.parent().map(|p| p.join(f))
    } else {
        Some(dir.join(f))
    };
    let in_dir = Path::new(f).file_name().map(|n| dir.join(n));
    // Named as the directory listing names it, so that the two compare.
    [own, Some(dir.join(f)), in_dir]
        .into_iter()
        .flatten()
        .find(|p| p.is_file() && p.parent().is_some_and(|d| same_dir(d, dir)))
        .and_then(|p| p.file_name().map(|n| dir.join(n)))
}

fn same_dir(a: &Path, b: &Path) -> bool {
    a == b || std::fs::canonicalize(a).ok() == std::fs::canonicalize(b).ok()
}

/// Opens a single storage file (`.db3`, `.db3.zstd`, `.mcap.zstd`) as a recording.
pub(crate) fn open_file(path: &Path) -> Result<(Vec<Source>, Opened)> {
    open_files(
        path,
        &[path.to_path_buf()],
        None,
        vec!["single storage file, no metadata.yaml".into()],
    )
}

fn is_storage_file(p: &Path) -> bool {
    let n = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
    [".db3", ".mcap", ".db3.zstd", ".mcap.zstd"]
        .iter()
        .any(|e| n.ends_with(e))
}

/// Sort key that puts `x_2.db3` before `x_10.db3`.
fn natural_key(p: &Path) -> (String, u64, String) {
    let n = p
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("")
        .to_string();
    let stem = n.split('.').next().unwrap_or("");
    let digits: String = stem
        .chars()
        .rev()
        .take_while(char::is_ascii_digit)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    let prefix = stem[..stem.len() - digits.len()].to_string();
    (prefix, digits.parse().unwrap_or(0), n)
}

/// One storage file, opened.
struct Part {
    source: Source,
    opened: Opened,
    storage: &'static str,
    compression: (String, String),
    distro: String,
    /// SQLite: the file has the `message_definitions` table of iron and later.
    newer_schema: bool,
}

fn open_files(
    root: &Path,
    files: &[PathBuf],
    meta: Option<&Metadata>,
    mut warnings: Vec<String>,
) -> Result<(Vec<Source>, Opened)> {
    let message_mode = meta.is_some_and(|m| m.compression.1.eq_ignore_ascii_case("message"));
    // Listed in metadata.yaml but not found (the files opened are those found).
    let files_listed_missing = meta.map_or(0, |m| m.files.len().saturating_sub(files.len()));
    let mut parts = Vec::new();
    let only = if files.len() == 1 { meta } else { None };
    for f in files {
        let p = open_part(f, message_mode, only)?;
        if let Some(m) = meta {
            if p.newer_schema && m.version < 7 {
                warnings.push(format!(
                    "metadata.yaml version {} but {} has the schema/message_definitions tables of a newer writer",
                    m.version,
                    f.file_name().unwrap_or_default().to_string_lossy()
                ));
            }
        }
        parts.push(p);
    }
    // Merge: connections of every file, chunks tagged with their file.
    let mut summary = Summary {
        path: root.to_path_buf(),
        indexed: true,
        files: files.to_vec(),
        ..Default::default()
    };
    let mut tables: Option<MessageTables> = Some(MessageTables::default());
    let any_mcap = parts.iter().any(|p| p.storage == "mcap");
    let any_sqlite = parts.iter().any(|p| p.storage == "sqlite3");
    summary.version = if any_mcap && !any_sqlite {
        Version::Rosbag2Mcap
    } else {
        Version::Rosbag2Sqlite
    };
    let mut compression = (String::new(), String::new());
    let mut distro = String::new();
    let mut sources = Vec::with_capacity(parts.len());
    let mut deferred = None;
    for (fi, p) in parts.into_iter().enumerate() {
        let o = p.opened;
        sources.push(p.source);
        if o.deferred.is_some() {
            // The only file, opened from metadata.yaml: its counts and times are the summary's.
            deferred = o.deferred;
            summary.rows_pending = true;
            (summary.start_ns, summary.end_ns) = (o.summary.start_ns, o.summary.end_ns);
        }
        let conn_base = summary.connections.len();
        let chunk_base = summary.chunks.len() as u32;
        summary.file_size += o.summary.file_size;
        summary.indexed &= o.summary.indexed;
        let name = files[fi]
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        for w in o.summary.warnings {
            warnings.push(format!("{name}: {w}"));
        }
        summary.attachments.extend(o.summary.attachments);
        if fi == 0 {
            summary.storage_facts.extend(o.summary.storage_facts);
        }
        summary.metadata.extend(o.summary.metadata);
        for mut c in o.summary.connections {
            c.file = fi as u32;
            summary.connections.push(c);
        }
        for mut ch in o.summary.chunks {
            ch.file = fi as u32;
            for c in &mut ch.counts {
                c.0 += conn_base as u32;
            }
            summary.chunks.push(ch);
        }
        match (o.tables, &mut tables) {
            (Some(t), Some(all)) => {
                all.per_connection.resize(conn_base, Vec::new());
                for v in t.per_connection {
                    all.per_connection.push(
                        v.into_iter()
                            .map(|e| IndexEntry {
                                chunk: e.chunk + chunk_base,
                                ..e
                            })
                            .collect(),
                    );
                }
                all.warnings.extend(t.warnings);
            }
            _ => tables = None,
        }
        if compression.0.is_empty() {
            compression = p.compression;
        }
        if distro.is_empty() {
            distro = p.distro;
        }
    }
    if let Some(t) = &mut tables {
        t.per_connection
            .resize(summary.connections.len(), Vec::new());
    }
    summary.finish();
    // What the storage says about itself, for `info`.
    let mut facts = Vec::new();
    if !compression.0.is_empty() {
        facts.push((
            "compression".into(),
            format!("{} ({} mode)", compression.0, compression.1),
        ));
    }
    if distro.is_empty() {
        distro = meta.map(|m| m.ros_distro.clone()).unwrap_or_default();
    }
    if !distro.is_empty() {
        // Definitions not stored are looked up for this distro first.
        for c in &mut summary.connections {
            c.distro = distro.clone();
        }
        facts.push(("ros_distro".into(), distro));
    }
    if let Some(m) = meta {
        facts.push(("metadata.yaml version".into(), m.version.to_string()));
        compare_metadata(m, &summary, &mut warnings);
        if let Some(lost) = missing(m, &summary, files_listed_missing) {
            facts.push((MISSING_FACT.into(), lost));
        }
    }
    summary.storage_facts.splice(0..0, facts);
    // Drop the "holds no messages" note of finish() when a reason is already given.
    summary
        .warnings
        .retain(|w| !w.contains("holds no messages"));
    summary.warnings.splice(0..0, warnings);
    if summary.message_count == 0 && summary.warnings.is_empty() {
        summary
            .warnings
            .push("the recording holds no messages".into());
    }
    Ok((
        sources,
        Opened {
            profile: String::new(),
            deferred,
            summary,
            index_pos: 0,
            tables,
        },
    ))
}

/// The storage fact that says a rosbag2 recording lacks what its metadata.yaml lists (files, or
/// messages): `check` calls such a recording damaged, `export` refuses to write it empty.
pub const MISSING_FACT: &str = "missing";

/// What metadata.yaml lists that the storage does not hold: absent files, fewer messages.
fn missing(m: &Metadata, s: &Summary, files_missing: usize) -> Option<String> {
    let mut out = Vec::new();
    if files_missing > 0 {
        out.push(format!(
            "{files_missing} of the {} storage files metadata.yaml lists",
            m.files.len()
        ));
    }
    if let Some(n) = m.message_count.filter(|&n| n > s.message_count) {
        out.push(format!(
            "{} of the {n} messages metadata.yaml counts",
            n - s.message_count
        ));
    }
    (!out.is_empty()).then(|| out.join("; "))
}

fn compare_metadata(m: &Metadata, s: &Summary, warnings: &mut Vec<String>) {
    let mut stored: BTreeMap<&str, (&str, &str, &str, u64)> = BTreeMap::new();
    for c in &s.connections {
        let e = stored
            .entry(c.topic.as_str())
            .or_insert((&c.datatype, &c.encoding, &c.qos, 0));
        e.3 += c.message_count;
    }
    for (name, (ty, format, qos, count)) in &m.topics {
        match stored.get(name.as_str()) {
            None => warnings.push(format!(
                "topic {name} is in metadata.yaml but in no storage file"
            )),
            Some(&(sty, sfmt, sqos, n)) => {
                if ty != sty && !sty.is_empty() {
                    warnings.push(format!(
                        "{name}: type {ty:?} in metadata.yaml, {sty:?} in storage"
                    ));
                }
                if format != sfmt && !sfmt.is_empty() && !format.is_empty() {
                    warnings.push(format!(
                        "{name}: serialization format {format:?} in metadata.yaml, {sfmt:?} in storage"
                    ));
                }
                if !qos.is_empty() && !sqos.is_empty() && qos_norm(qos) != qos_norm(sqos) {
                    warnings.push(format!(
                        "{name}: offered_qos_profiles in metadata.yaml differ from the storage's"
                    ));
                }
                if *count != n {
                    warnings.push(format!(
                        "{name}: metadata.yaml counts {count} messages, the storage {n}"
                    ));
                }
            }
        }
    }
    for name in stored.keys() {
        if !m.topics.contains_key(*name) {
            warnings.push(format!(
                "topic {name} is in storage but not in metadata.yaml"
            ));
        }
    }
    if let Some(n) = m.message_count {
        if n != s.message_count {
            warnings.push(format!(
                "metadata.yaml counts {n} messages, the storage {}",
                s.message_count
            ));
        }
    }
    if let (Some(start), Some(first)) = (m.start_ns, s.start_ns) {
        if s.message_count > 0 && start != i128::from(first) {
            warnings.push(format!(
                "metadata.yaml says the recording starts at {start} ns, the first message is at {first} ns"
            ));
        }
    }
    if let (Some(d), Some(_)) = (m.duration_ns, s.start_ns) {
        if s.message_count > 0 && d != i128::from(s.duration_ns()) {
            warnings.push(format!(
                "metadata.yaml says the recording lasts {d} ns, the messages span {} ns",
                s.duration_ns()
            ));
        }
    }
}

/// A one-line summary of recorded QoS profiles (either YAML form: enum numbers of versions
/// 4-8, names of version 9): reliability, durability, history and depth of the first profile.
pub fn qos_summary(text: &str) -> String {
    let Ok(docs) = YamlLoader::load_from_str(text) else {
        return text.lines().next().unwrap_or("").to_string();
    };
    let Some(list) = docs.first().and_then(|d| d.as_vec()) else {
        return String::new();
    };
    let name = |key: &str, v: &Yaml| -> String {
        let n = yaml_int(v);
        let table: &[&str] = match key {
            "reliability" => &["system_default", "reliable", "best_effort", "unknown"],
            "durability" => &["system_default", "transient_local", "volatile", "unknown"],
            "history" => &["system_default", "keep_last", "keep_all", "unknown"],
            _ => &[],
        };
        match n {
            Some(i) if (i as usize) < table.len() && i >= 0 => table[i as usize].to_string(),
            _ => yaml_text(v),
        }
    };
    let mut parts = Vec::new();
    if let Some(p) = list.first() {
        for key in ["reliability", "durability", "history"] {
            if !p[key].is_badvalue() {
                parts.push(name(key, &p[key]));
            }
        }
        if let Some(d) = yaml_int(&p["depth"]) {
            parts.push(format!("depth {d}"));
        }
    }
    let mut s = parts.join(", ");
    if list.len() > 1 {
        s.push_str(&format!(" ({} publishers)", list.len()));
    }
    s
}

/// QoS text with whitespace and quoting removed, to compare the YAML-in-YAML forms.
fn qos_norm(q: &str) -> String {
    q.chars()
        .filter(|c| !c.is_whitespace() && *c != '"' && *c != '\'')
        .collect()
}

/// `meta`: the recording's metadata.yaml when this is its only storage file (a SQLite file
/// it bears out then opens without reading its rows).
fn open_part(path: &Path, message_mode: bool, meta: Option<&Metadata>) -> Result<Part> {
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
        let mut part = open_plain(&out_path, message_mode, Some(tmp), meta)?;
        part.compression = ("zstd".into(), "file".into());
        if let Source::Sqlite(s) = &mut part.source {
            s.shown_path = path.to_path_buf();
        }
        return Ok(part);
    }
    open_plain(path, message_mode, None, meta)
}

fn read_full(f: &mut std::fs::File, buf: &mut [u8]) -> Result<usize> {
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

fn open_plain(
    path: &Path,
    message_mode: bool,
    tmp: Option<TempDir>,
    meta: Option<&Metadata>,
) -> Result<Part> {
    let mut f = std::fs::File::open(path)?;
    let mut head = [0u8; 16];
    let n = read_full(&mut f, &mut head)?;
    if head[..n].starts_with(SQLITE_MAGIC) {
        return open_sqlite(path, message_mode, tmp, meta);
    }
    if head[..n].starts_with(crate::storage::mcap::MAGIC) {
        let size = f.metadata()?.len();
        let src = match tmp {
            // A decompressed temporary file is read into memory, then removed.
            Some(_) => Source::Memory(std::fs::read(path)?.into()),
            None => Source::File(f),
        };
        let opened = crate::storage::mcap::open(&src, path, size)?;
        let distro = opened
            .summary
            .metadata
            .iter()
            .find(|(n, _)| n == "rosbag2")
            .and_then(|(_, kv)| kv.iter().find(|(k, _)| k == "ros_distro"))
            .map(|(_, v)| v.clone())
            .unwrap_or_default();
        return Ok(Part {
            source: src,
            opened,
            storage: "mcap",
            compression: (String::new(), String::new()),
            distro,
            newer_schema: false,
        });
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
    direct_refused: std::sync::atomic::AtomicBool,
    _tmp: Option<TempDir>,
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

/// The `messages` table of a database, read from its b-tree pages (see [`crate::storage::sqlite_file`]).
#[derive(Debug)]
pub(crate) struct Direct {
    file: SqliteFile,
    leaves: Vec<Leaf>,
    /// Indexes of the `topic_id`, `timestamp` and `data` columns in a record.
    cols: [usize; 3],
    /// Whether those are rosbag2's own (`id, topic_id, timestamp, data`): rows then take the
    /// fast path of [`leading_ints`].
    standard: bool,
}

impl Direct {
    /// The direct reader for `path`, whose schema `conn` reads, or `None` where the `messages`
    /// table is not a plain rowid table with `id INTEGER PRIMARY KEY`, `topic_id`,
    /// `timestamp` and `data` (SQLite then reads it), or the file's pages cannot be walked.
    fn new(conn: &rusqlite::Connection, path: &Path) -> Option<Direct> {
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
    fn scan(
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
    fn capture_row(&self, sc: &mut RowScanner<'_>, row: &Row<'_>) {
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
    fn int(&self, row: &Row<'_>, c: Column) -> Option<i64> {
        c.int(row.local).or_else(|| {
            let mut b = Vec::with_capacity(8);
            self.file.payload_bytes(row, c.at, c.len(), &mut b).ok()?;
            Column { at: 0, ..c }.int(&b)
        })
    }

    fn row_err(&self, page: u32, rowid: i64, what: &str) -> Error {
        self.file.bad(page, format!("messages row {rowid}: {what}"))
    }

    /// The rows with ids in `first..=last` (of the topic ids `topics`, if given), into `out`.
    fn rows(
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

fn uri_of(path: &Path) -> String {
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

fn sql_err<'a>(path: &'a Path, what: &str) -> impl Fn(rusqlite::Error) -> Error + 'a {
    let what = what.to_string();
    move |e| Error::Storage {
        path: path.to_path_buf(),
        reason: format!("{what}: {e}"),
    }
}

/// Opens a database file read-only and immutable: SQLite writes nothing beside it (no -shm,
/// no journal) and reads it through a memory map.
fn open_immutable(path: &Path) -> rusqlite::Result<rusqlite::Connection> {
    let c = rusqlite::Connection::open_with_flags(
        format!("{}?mode=ro&immutable=1", uri_of(path)),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY
            | rusqlite::OpenFlags::SQLITE_OPEN_URI
            | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    c.execute_batch(MMAP_PRAGMA)?;
    Ok(c)
}

fn open_sqlite(
    path: &Path,
    message_mode: bool,
    mut tmp: Option<TempDir>,
    meta: Option<&Metadata>,
) -> Result<Part> {
    use rusqlite::OpenFlags;
    let size = std::fs::metadata(path)?.len();
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
        tmp = Some(t);
        c
    } else {
        open_immutable(path).map_err(sql_err(path, "cannot open the SQLite database"))?
    };
    // Read through a memory map rather than read(2) calls (the file is never written).
    let _ = conn.execute_batch(MMAP_PRAGMA);
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
        "SELECT id, name, type, {}, {} FROM topics ORDER BY id",
        col("serialization_format"),
        col("offered_qos_profiles")
    );
    let topics: Vec<(i64, String, String, String, String)> = conn
        .prepare(&q)
        .and_then(|mut s| {
            s.query_map([], |r| {
                Ok((
                    r.get(0)?,
                    r.get::<_, Option<String>>(1)?.unwrap_or_default(),
                    r.get::<_, Option<String>>(2)?.unwrap_or_default(),
                    r.get::<_, Option<String>>(3)?.unwrap_or_default(),
                    r.get::<_, Option<String>>(4)?.unwrap_or_default(),
                ))
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
        for (t, enc, text) in rows {
            if !text.trim().is_empty() {
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
    for (id, name, ty, fmt, qos) in topics {
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
            ..Default::default()
        });
    }
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
        (1..crate::settings::default_threads().clamp(1, 4))
            .filter_map(|_| open_immutable(path).ok().map(Mutex::new))
            .collect()
    };
    // A plain file scanned before (not a private copy of a WAL or zstd file) reopens from the
    // index cache, keyed by its path, size and modification time.
    let key = if tmp.is_none() && !wal_copy {
        crate::storage::sidecar::Key::of(path)
    } else {
        None
    };
    let cached = key
        .as_ref()
        .and_then(|k| crate::storage::sidecar::load_rows(k, connections.len()));
    // The rows read from the file's pages where they can be (not a private copy with its WAL:
    // the pages there are not the database until SQLite applies the log).
    let direct = if wal_copy || !DIRECT.load(std::sync::atomic::Ordering::Relaxed) {
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
    // the summary is metadata.yaml's, the scan waits for the first call that needs it.
    let quick = match (meta, &direct, &cached) {
        (Some(m), Some(_), None) => quick_counts(&conn, m, &connections, lo, hi),
        _ => None,
    };
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
            summary,
            index_pos: 0,
            tables,
        },
        storage: "sqlite3",
        newer_schema: has("message_definitions"),
        compression: if zstd_messages {
            ("zstd".into(), "message".into())
        } else {
            (String::new(), String::new())
        },
        distro,
    })
}

/// Per-connection counts and the time range of a database from `m` (its metadata.yaml), where
/// the database bears them out without reading its rows: every topic of one and the other
/// listed in both with the same type, the number of rows (the span of the row ids: rosbag2
/// never deletes one) equal to the message count, and the first and last timestamps (the ends
/// of an index on `timestamp`, which rosbag2 writes) equal to the recording's start and end.
/// `None` where any of this is not so or cannot be checked: the rows are then read at open.
fn quick_counts(
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

/// What scanning a database's rows needs: its topic ids, its row id range, the index cache's
/// key, its metadata.yaml.
#[derive(Debug)]
struct RowsToScan {
    by_topic_id: HashMap<i64, usize>,
    ncon: usize,
    /// Messages expected per connection (metadata.yaml's, borne out by the database): the
    /// tables are given their room at once instead of growing by doubling.
    expected: Option<Vec<u64>>,
    range: Option<(i64, i64)>,
    key: Option<crate::storage::sidecar::Key>,
    meta: Option<Metadata>,
}

/// The row scan of a rosbag2 SQLite recording opened from its metadata.yaml (see
/// [`Opened::deferred`]): run by [`complete`] when the blocks or tables are first needed.
#[derive(Debug)]
pub(crate) struct Deferred {
    rows: RowsToScan,
}

/// Every row's block and table entry, the rows naming no known topic, and the blocks of the
/// rows captured (by block index).
struct ScannedRows {
    chunks: Vec<Chunk>,
    per: Vec<Vec<IndexEntry>>,
    unknown: u64,
    captured: HashMap<u32, Vec<u8>>,
}

impl ScannedRows {
    /// The blocks (chunks) and tables, with a warning for rows of unknown topics.
    fn into_blocks(
        mut self,
        warnings: &mut Vec<String>,
        zstd_messages: bool,
    ) -> (Vec<Chunk>, Vec<Vec<IndexEntry>>) {
        if self.unknown > 0 {
            warnings.push(format!(
                "{} messages name a topic id that the topics table does not define; left out",
                self.unknown
            ));
        }
        if zstd_messages {
            for c in &mut self.chunks {
                c.compression = Compression::Zstd;
            }
        }
        (self.chunks, self.per)
    }
}

impl RowsToScan {
    /// Reads every row's id, topic and time: from the file's pages where the direct reader
    /// takes them (else, or where it refuses a page, through SQLite, which says what is wrong
    /// if anything is), the work split between threads; then keeps the result in the index
    /// cache.
    ///
    /// `capture`: connections whose payloads are kept as they are met (up to
    /// [`CAPTURE_BYTES`]), for reading them next without a second pass.
    fn scan(&self, src: &SqliteSource, capture: Option<&[usize]>) -> Result<ScannedRows> {
        let path = src.shown_path.as_path();
        let ncon = self.ncon;
        let by_topic_id = &self.by_topic_id;
        let bytes = std::sync::atomic::AtomicUsize::new(0);
        let given_up = std::sync::atomic::AtomicBool::new(false);
        let cap = capture.map(|conns| Capture {
            want: (0..ncon).map(|c| conns.contains(&c)).collect(),
            zstd: src.zstd_messages,
            path,
            bytes: &bytes,
            budget: CAPTURE_BYTES,
            given_up: &given_up,
        });
        let direct_scan = src.direct().and_then(|d| {
            let threads = crate::settings::default_threads().clamp(1, 4);
            let per_thread = d.leaves.len().div_ceil(threads).max(1);
            let parts: Vec<&[Leaf]> = d.leaves.chunks(per_thread).collect();
            // Room for each part's share of the expected messages (no more than the file
            // could hold: rows take 4 bytes or more).
            let leaves = d.leaves.len().max(1) as u128;
            let most = u128::from(src.size / 4);
            // The first part's tables get room for every part's entries: the others' are
            // appended to them without moving them (room not written to takes no memory).
            let hints = |part: &[Leaf], first: bool| -> Vec<usize> {
                let Some(e) = &self.expected else {
                    return Vec::new();
                };
                e.iter()
                    .map(|&n| {
                        let share = match first {
                            true => u128::from(n),
                            false => u128::from(n) * part.len() as u128 / leaves,
                        };
                        (share + share / 64 + 16).min(most) as usize
                    })
                    .collect()
            };
            let scan = |part: &&[Leaf], first: bool| {
                d.scan(part, by_topic_id, ncon, cap.as_ref(), &hints(part, first))
            };
            let r = scan_parts(&parts, |p| scan(p, true), |_, p| scan(p, false))
                .into_iter()
                .collect::<Result<Vec<RowScan>>>()
                .ok();
            if r.is_none() {
                src.direct_refused
                    .store(true, std::sync::atomic::Ordering::Relaxed);
            }
            r
        });
        let mut out = ScannedRows {
            chunks: Vec::new(),
            per: vec![Vec::new(); ncon],
            unknown: 0,
            captured: HashMap::new(),
        };
        let scans = if let Some(scans) = direct_scan {
            scans
        } else if let Some((lo, hi)) = self.range {
            let threads = crate::settings::default_threads().clamp(1, 4) as i64;
            // Ids may be anywhere in i64 (a forged file): split in i128.
            let (l, h, n) = (i128::from(lo), i128::from(hi), i128::from(threads));
            let span = (h - l) / n + 1;
            let ranges: Vec<(i64, i64)> = (0..n)
                .map(|k| (l + k * span, (l + (k + 1) * span - 1).min(h)))
                .filter(|(a, b)| a <= b)
                .filter_map(|(a, b)| Some((i64::try_from(a).ok()?, i64::try_from(b).ok()?)))
                .collect();
            let main = || {
                src.conns[0].lock().map_err(|_| Error::Storage {
                    path: path.to_path_buf(),
                    reason: "a reading thread failed".into(),
                })
            };
            // The first range on the first connection, here; each other on a connection of
            // its own.
            let results = scan_parts(
                &ranges,
                |&(a, b)| scan_rows(&*main()?, path, a, b, by_topic_id, ncon),
                |k, &(a, b)| match src.conns.get(k + 1).and_then(|c| c.lock().ok()) {
                    Some(c) => scan_rows(&c, path, a, b, by_topic_id, ncon),
                    None => Err(Error::Storage {
                        path: path.to_path_buf(),
                        reason: "no second connection to the database".into(),
                    }),
                },
            );
            let mut scans = Vec::new();
            for (k, r) in results.into_iter().enumerate() {
                match r {
                    Ok(s) => scans.push(s),
                    // A second connection may be refused (a private copy of a WAL database):
                    // read that range on the main connection.
                    Err(_) if k > 0 => {
                        if let Some(&(a, b)) = ranges.get(k) {
                            scans.push(scan_rows(&*main()?, path, a, b, by_topic_id, ncon)?);
                        }
                    }
                    Err(e) => return Err(e),
                }
            }
            scans
        } else {
            Vec::new()
        };
        merge_scans(
            scans,
            &mut out.chunks,
            &mut out.per,
            &mut out.unknown,
            &mut out.captured,
        );
        // Rows SQLite read are not captured; nor are any once the budget was spent.
        if given_up.load(std::sync::atomic::Ordering::Relaxed) {
            out.captured = HashMap::new();
        }
        // (A scan for some connections has tables for those only: not kept.)
        if let (Some(k), None) = (&self.key, capture) {
            let rows = crate::storage::sidecar::Rows {
                chunks: out.chunks,
                per: out.per,
                unknown: out.unknown,
            };
            // The cache only saves time: a failure to write it changes nothing.
            let _ = crate::storage::sidecar::store_rows(k, &rows);
            (out.chunks, out.per, out.unknown) = (rows.chunks, rows.per, rows.unknown);
        }
        Ok(out)
    }
}

/// Bytes of payloads a row scan keeps for the connections about to be read (see
/// [`RowsToScan::scan`]); past it, nothing is kept and they are read again.
const CAPTURE_BYTES: usize = 256 << 20;

/// Blocks of rows kept by the row scan for connections about to be read, by block index, with
/// those connections (sorted).
pub(crate) type Captured = (Vec<usize>, HashMap<u32, Vec<u8>>);

/// The whole tables of a recording whose summary a scan for some connections completed
/// (`summary`): the rows read again, every connection's entries kept.
pub(crate) fn complete_tables(
    d: &Deferred,
    src: &Source,
    summary: &Summary,
) -> Result<MessageTables> {
    let Source::Sqlite(s) = src else {
        return Err(Error::Invalid(
            "a row scan of a storage that is not SQLite".into(),
        ));
    };
    let scan = d.rows.scan(s, None)?;
    if scan.chunks.len() != summary.chunks.len() {
        return Err(Error::Storage {
            path: s.shown_path.clone(),
            reason: format!(
                "the rows changed between two reads ({} blocks, then {})",
                summary.chunks.len(),
                scan.chunks.len()
            ),
        });
    }
    Ok(MessageTables {
        per_connection: scan.per,
        warnings: Vec::new(),
    })
}

/// Completes the summary `quick` of a recording opened with its row scan deferred: reads the
/// rows of `src` (the recording's one storage file) into blocks and tables, counts and times
/// from them, and says where metadata.yaml disagrees with them. With `capture`, the payloads
/// of those connections are kept on the way, in blocks laid out as [`read_rows`] lays them.
///
/// With `capture`, the tables hold those connections' entries only (the others' are left
/// empty: [`complete_tables`] reads them when they are needed).
pub(crate) fn complete(
    d: &Deferred,
    src: &Source,
    quick: &Summary,
    capture: Option<&[usize]>,
) -> Result<(Summary, MessageTables, Option<Captured>)> {
    let Source::Sqlite(s) = src else {
        return Err(Error::Invalid(
            "a row scan of a storage that is not SQLite".into(),
        ));
    };
    let mut scan = d.rows.scan(s, capture)?;
    let captured = std::mem::take(&mut scan.captured);
    let captured = capture.filter(|_| !captured.is_empty()).map(|c| {
        let mut conns = c.to_vec();
        conns.sort_unstable();
        conns.dedup();
        (conns, captured)
    });
    let mut warnings = Vec::new();
    let (mut chunks, per) = scan.into_blocks(&mut warnings, s.zstd_messages);
    for c in &mut chunks {
        c.file = 0;
    }
    let mut full = quick.clone();
    full.rows_pending = false;
    full.chunks = chunks;
    full.finish();
    let name = quick
        .files
        .first()
        .and_then(|f| f.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    for w in warnings {
        full.warnings.push(format!("{name}: {w}"));
    }
    if let Some(m) = &d.rows.meta {
        let mut w = Vec::new();
        compare_metadata(m, &full, &mut w);
        for w in w {
            if !full.warnings.contains(&w) {
                full.warnings.push(w);
            }
        }
    }
    Ok((
        full,
        MessageTables {
            per_connection: per,
            warnings: Vec::new(),
        },
        captured,
    ))
}

/// Scans `parts` (consecutive id ranges, or runs of leaves), the first with `first` on this
/// thread and each other with `rest` (given its index among the others) on a thread of its
/// own: one result per part, in order; a thread that panicked gives an error.
fn scan_parts<P: Sync>(
    parts: &[P],
    first: impl FnOnce(&P) -> Result<RowScan>,
    rest: impl Fn(usize, &P) -> Result<RowScan> + Sync,
) -> Vec<Result<RowScan>> {
    let Some((head, tail)) = parts.split_first() else {
        return Vec::new();
    };
    std::thread::scope(|sc| {
        let rest = &rest;
        let handles: Vec<_> = tail
            .iter()
            .enumerate()
            .map(|(k, p)| sc.spawn(move || rest(k, p)))
            .collect();
        let mut out = vec![first(head)];
        out.extend(handles.into_iter().map(|h| {
            h.join()
                .unwrap_or(Err(Error::ThreadPanicked("a row-scanning thread")))
        }));
        out
    })
}

/// Appends the scans of consecutive id ranges, in order, to the blocks and tables.
fn merge_scans(
    scans: Vec<RowScan>,
    chunks: &mut Vec<Chunk>,
    per: &mut [Vec<IndexEntry>],
    unknown: &mut u64,
    captured: &mut HashMap<u32, Vec<u8>>,
) {
    // Per connection, the entries of each scan with the index of its first block.
    let mut cols: Vec<Vec<(u32, Vec<IndexEntry>)>> = vec![Vec::new(); per.len()];
    for sc in scans {
        let base = chunks.len() as u32;
        captured.extend(sc.captured.into_iter().map(|(k, b)| (k + base, b)));
        for (ci, v) in sc.per.into_iter().enumerate() {
            if let Some(c) = cols.get_mut(ci) {
                c.push((base, v));
            }
        }
        chunks.extend(sc.chunks);
        *unknown += sc.unknown;
    }
    let append = |per: &mut [Vec<IndexEntry>], cols: &mut [Vec<(u32, Vec<IndexEntry>)>]| {
        for (p, c) in per.iter_mut().zip(cols.iter_mut()) {
            for (base, v) in c.drain(..) {
                if base == 0 && p.is_empty() {
                    // The first scan's entries are moved, not copied.
                    *p = v;
                    continue;
                }
                p.reserve(v.len());
                p.extend(v.into_iter().map(|e| IndexEntry {
                    chunk: e.chunk + base,
                    ..e
                }));
            }
            // Grown by doubling while scanning: give back the unused half (16 bytes a
            // message kept), but not a little room left by a good guess (that would copy).
            if p.capacity() - p.len() > p.len() / 16 + 64 {
                p.shrink_to_fit();
            }
        }
    };
    // Half the connections on another thread (the copies are tens of MB at millions of rows).
    let half = per.len() / 2;
    let (p1, p2) = per.split_at_mut(half);
    let (c1, c2) = cols.split_at_mut(half);
    if crate::settings::default_threads() > 1 && half > 0 {
        std::thread::scope(|sc| {
            sc.spawn(|| append(p1, c1));
            append(p2, c2);
        });
    } else {
        append(p1, c1);
        append(p2, c2);
    }
}

/// Whether rows are read from the file's pages where the schema allows (the default), or
/// always through SQLite (for comparing the two; see [`set_direct_reads`]).
static DIRECT: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);

/// Reads SQLite `messages` rows from the file's b-tree pages (`true`, the default) or through
/// SQLite's own cursor (`false`) in databases opened from now on. Both give the same rows; the
/// second is there to check the first.
#[doc(hidden)]
pub fn set_direct_reads(on: bool) {
    DIRECT.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// What one thread's scan of an id range found.
struct RowScan {
    per: Vec<Vec<IndexEntry>>,
    chunks: Vec<Chunk>,
    unknown: u64,
    /// Blocks (by index in this scan) of the captured rows, in the layout of [`read_rows`].
    captured: Vec<(u32, Vec<u8>)>,
}

/// Rows of some connections kept while the rows are scanned, so that reading those
/// connections next needs no second pass over the pages (`csv` of one topic).
pub(crate) struct Capture<'a> {
    /// Per connection index: wanted.
    want: Vec<bool>,
    zstd: bool,
    path: &'a Path,
    /// Bytes kept by every scanning thread, against `budget`.
    bytes: &'a std::sync::atomic::AtomicUsize,
    budget: usize,
    /// Set when the budget is spent or a row would not keep: nothing is kept then.
    given_up: &'a std::sync::atomic::AtomicBool,
}

/// One thread's rows being captured: the current block's (id, start, length) in `data`.
struct Capturing<'a> {
    cap: &'a Capture<'a>,
    rows: Vec<(i64, usize, usize)>,
    data: Vec<u8>,
}

/// Scans the rows with ids in `a..=b` into blocks and table entries (chunk indexes relative to
/// this scan's first block). An entry's offset is its id's distance from its block's first id.
fn scan_rows(
    conn: &rusqlite::Connection,
    path: &Path,
    a: i64,
    b: i64,
    by_topic_id: &HashMap<i64, usize>,
    ncon: usize,
) -> Result<RowScan> {
    let err = sql_err(path, "reading the messages table");
    let mut stmt = conn
        .prepare(
            "SELECT id, topic_id, timestamp FROM messages WHERE id BETWEEN ?1 AND ?2 ORDER BY id",
        )
        .map_err(&err)?;
    let mut rows = stmt.query([a, b]).map_err(&err)?;
    let mut sc = RowScanner::new(by_topic_id, ncon);
    while let Some(r) = rows.next().map_err(&err)? {
        let int = |i: usize| -> Result<i64> {
            r.get_ref(i)
                .map_err(&err)?
                .as_i64()
                .map_err(|e| sql_err(path, "a messages column is not an integer")(e.into()))
        };
        sc.push(int(0)?, int(1)?, int(2)?);
    }
    // (Rows read through SQLite are not captured: they are read again the usual way.)
    Ok(sc.finish())
}

/// Makes blocks and table entries of rows given in id order.
struct RowScanner<'a> {
    out: RowScan,
    capturing: Option<Capturing<'a>>,
    /// Table entries kept for these connections only (a scan for some connections); the
    /// blocks count every row.
    entries_for: Option<Vec<bool>>,
    counts: Vec<u32>,
    rows_in_block: usize,
    /// Topic ids are small: looked up in a table, not a hash map, for each of millions of rows.
    dense: Option<Vec<Option<usize>>>,
    by_topic_id: HashMap<i64, usize>,
}

impl<'a> RowScanner<'a> {
    fn new(by_topic_id: &HashMap<i64, usize>, ncon: usize) -> RowScanner<'a> {
        let max_id = by_topic_id.keys().copied().max().unwrap_or(0);
        let dense = (0..=65536).contains(&max_id).then(|| {
            let mut v = vec![None; max_id as usize + 1];
            for (&k, &ci) in by_topic_id {
                if let Ok(k) = usize::try_from(k) {
                    v[k] = Some(ci);
                }
            }
            v
        });
        RowScanner {
            out: RowScan {
                per: vec![Vec::new(); ncon],
                chunks: Vec::new(),
                unknown: 0,
                captured: Vec::new(),
            },
            capturing: None,
            entries_for: None,
            counts: vec![0u32; ncon],
            rows_in_block: 0,
            dense,
            by_topic_id: by_topic_id.clone(),
        }
    }

    fn lookup(&self, topic: i64) -> Option<usize> {
        match &self.dense {
            Some(v) => usize::try_from(topic)
                .ok()
                .and_then(|k| v.get(k).copied().flatten()),
            None => self.by_topic_id.get(&topic).copied(),
        }
    }

    /// Keeps the rows of `cap`'s connections too.
    fn capturing(mut self, cap: Option<&'a Capture<'a>>) -> RowScanner<'a> {
        self.entries_for = cap.map(|c| c.want.clone());
        self.capturing = cap.map(|cap| Capturing {
            cap,
            rows: Vec::new(),
            data: Vec::new(),
        });
        self
    }

    /// Whether the row just pushed (of connection `ci`) is to be captured.
    fn wants(&self, ci: Option<usize>) -> bool {
        match (&self.capturing, ci) {
            (Some(c), Some(ci)) => {
                c.cap.want.get(ci).copied().unwrap_or(false)
                    && !c.cap.given_up.load(std::sync::atomic::Ordering::Relaxed)
            }
            _ => false,
        }
    }

    /// Captures row `id`'s payload, which `fill` appends to the buffer it is given.
    fn capture(&mut self, id: i64, fill: impl FnOnce(&mut Vec<u8>) -> Result<()>) {
        let Some(c) = &mut self.capturing else {
            return;
        };
        let at = c.data.len();
        let ok = fill(&mut c.data).is_ok();
        let len = c.data.len() - at;
        let total = c
            .cap
            .bytes
            .fetch_add(len, std::sync::atomic::Ordering::Relaxed)
            + len;
        if !ok || total > c.cap.budget {
            c.cap
                .given_up
                .store(true, std::sync::atomic::Ordering::Relaxed);
            self.capturing = None;
            self.out.captured = Vec::new();
            return;
        }
        c.rows.push((id, at, len));
    }

    /// The current block's captured rows, laid out as [`read_rows`] lays out a block.
    fn flush_capture(&mut self) {
        let (Some(c), Some(ch)) = (&mut self.capturing, self.out.chunks.last()) else {
            return;
        };
        if c.rows.is_empty() {
            return;
        }
        let slots = (i128::from(ch.index_pos as i64) - i128::from(ch.first_row) + 1) as usize;
        let mut b =
            BlockBuf::with_payload(slots, c.data.len(), c.cap.zstd, ch.first_row, c.cap.path);
        let mut ok = true;
        for &(id, at, len) in &c.rows {
            let data = &c.data[at..at + len];
            ok &= b
                .push(id, |d| {
                    d.extend_from_slice(data);
                    Ok(())
                })
                .is_ok();
        }
        c.rows.clear();
        c.data.clear();
        if ok {
            let k = (self.out.chunks.len() - 1) as u32;
            self.out.captured.push((k, b.buf));
        } else {
            // Errors are said when the rows are read the usual way.
            c.cap
                .given_up
                .store(true, std::sync::atomic::Ordering::Relaxed);
            self.capturing = None;
            self.out.captured = Vec::new();
        }
    }

    fn flush(&mut self) {
        self.flush_capture();
        if let Some(ch) = self.out.chunks.last_mut() {
            ch.counts = self
                .counts
                .iter()
                .enumerate()
                .filter(|(_, &n)| n > 0)
                .map(|(i, &n)| (i as u32, n))
                .collect();
            self.counts.iter_mut().for_each(|c| *c = 0);
        }
    }

    /// One row: its id, topic id and timestamp. Returns its connection index.
    #[inline]
    fn push(&mut self, id: i64, topic: i64, t: i64) -> Option<usize> {
        let Some(ci) = self.lookup(topic) else {
            self.out.unknown += 1;
            return None;
        };
        let t = u64::try_from(t).unwrap_or(0);
        let new_block = match self.out.chunks.last() {
            None => true,
            Some(c) => {
                self.rows_in_block >= BLOCK_ROWS
                    || i128::from(id) - i128::from(c.first_row) >= i128::from(BLOCK_ID_SPAN)
            }
        };
        if new_block {
            self.flush();
            self.out.chunks.push(Chunk {
                pos: id as u64,
                start_ns: u64::MAX,
                end_ns: 0,
                kind: ChunkKind::Rows,
                first_row: id,
                compression: Compression::None,
                ..Default::default()
            });
            self.rows_in_block = 0;
        }
        let k = self.out.chunks.len() - 1;
        let ch = &mut self.out.chunks[k];
        ch.index_pos = id as u64;
        ch.start_ns = ch.start_ns.min(t);
        ch.end_ns = ch.end_ns.max(t);
        self.counts[ci] += 1;
        if self
            .entries_for
            .as_ref()
            .is_some_and(|w| !w.get(ci).copied().unwrap_or(false))
        {
            self.rows_in_block += 1;
            return Some(ci);
        }
        self.out.per[ci].push(IndexEntry {
            time_ns: t,
            chunk: k as u32,
            // Less than BLOCK_ID_SPAN: a new block starts before the gap grows larger.
            offset: (i128::from(id) - i128::from(ch.first_row)) as u32,
        });
        self.rows_in_block += 1;
        Some(ci)
    }

    fn finish(mut self) -> RowScan {
        self.flush();
        self.out
    }
}

/// A block of rows being read into the layout of [`read_rows`]: the slot table, then each
/// payload appended as its row comes (per-message zstd undone on the way).
struct BlockBuf<'a> {
    buf: Vec<u8>,
    slots: usize,
    zstd: bool,
    first_row: i64,
    path: &'a Path,
}

impl BlockBuf<'_> {
    fn new(slots: usize, zstd: bool, first_row: i64, path: &Path) -> BlockBuf<'_> {
        BlockBuf::with_payload(slots, 64 * slots, zstd, first_row, path)
    }

    /// With room for `payload` bytes of payloads.
    fn with_payload(
        slots: usize,
        payload: usize,
        zstd: bool,
        first_row: i64,
        path: &Path,
    ) -> BlockBuf<'_> {
        let mut buf = Vec::with_capacity(4 + 8 * slots + payload);
        buf.extend_from_slice(&(slots as u32).to_le_bytes());
        for _ in 0..slots {
            buf.extend_from_slice(&0u32.to_le_bytes());
            buf.extend_from_slice(&u32::MAX.to_le_bytes());
        }
        BlockBuf {
            buf,
            slots,
            zstd,
            first_row,
            path,
        }
    }

    /// Appends row `id`'s payload, which `fill` appends to the buffer it is given.
    fn push(&mut self, id: i64, fill: impl FnOnce(&mut Vec<u8>) -> Result<()>) -> Result<()> {
        let Some(slot) = usize::try_from(i128::from(id) - i128::from(self.first_row))
            .ok()
            .filter(|&k| k < self.slots)
        else {
            return Ok(());
        };
        let at = self.buf.len();
        if self.zstd {
            let mut raw = Vec::new();
            fill(&mut raw)?;
            let dec = zstd::stream::read::Decoder::new(&raw[..])
                .and_then(|d| d.take(MAX_MESSAGE + 1).read_to_end(&mut self.buf));
            let bad = |reason: String| Error::Storage {
                path: self.path.to_path_buf(),
                reason,
            };
            match dec {
                Ok(n) if (n as u64) <= MAX_MESSAGE => {}
                Ok(_) => {
                    return Err(bad(format!(
                        "message row {id} decompresses to more than {MAX_MESSAGE} bytes"
                    )))
                }
                Err(e) => {
                    return Err(bad(format!(
                        "message row {id} is not a zstd frame (message-mode compression): {e}"
                    )))
                }
            }
        } else {
            fill(&mut self.buf)?;
        }
        let len = self.buf.len() - at;
        let (Ok(at32), Ok(len32)) = (u32::try_from(at), u32::try_from(len)) else {
            return Err(Error::Storage {
                path: self.path.to_path_buf(),
                reason: format!(
                    "the block of rows from {} holds more than 4 GiB",
                    self.first_row
                ),
            });
        };
        let e = 4 + 8 * slot;
        self.buf[e..e + 4].copy_from_slice(&at32.to_le_bytes());
        self.buf[e + 4..e + 8].copy_from_slice(&len32.to_le_bytes());
        Ok(())
    }
}

/// Reads a block of rows into one buffer: a u32 slot count (the block's id span), then a
/// (start, length) u32 pair per id (length `u32::MAX`: no such row, or not asked for), then the
/// payloads, per-message zstd undone. `topics` limits the rows read to those topic ids.
pub(crate) fn read_rows(src: &Source, ch: &Chunk, topics: Option<&[i64]>) -> Result<Vec<u8>> {
    let Source::Sqlite(s) = src else {
        return Err(Error::Invalid(
            "a row block outside a SQLite storage".into(),
        ));
    };
    let err = sql_err(&s.shown_path, "reading messages");
    let last = ch.index_pos as i64;
    let slots = usize::try_from(i128::from(last) - i128::from(ch.first_row) + 1)
        .ok()
        .filter(|&n| n <= BLOCK_ID_SPAN as usize)
        .ok_or_else(|| {
            Error::Invalid(format!("row block {}..{last} is not a block", ch.first_row))
        })?;
    let mut out = BlockBuf::new(slots, s.zstd_messages, ch.first_row, &s.shown_path);
    if let Some(d) = s.direct() {
        d.rows(ch.first_row, last, topics, &mut out)?;
        return Ok(out.buf);
    }
    let conn = s
        .conns
        .iter()
        .find_map(|c| c.try_lock().ok())
        .map_or_else(|| s.conns[0].lock(), Ok)
        .map_err(|_| Error::Invalid("the SQLite connection was poisoned".into()))?;
    let sql = match topics {
        Some(t) => format!(
            "SELECT id, data FROM messages WHERE id BETWEEN ?1 AND ?2 AND topic_id IN ({}) ORDER BY id",
            t.iter().map(i64::to_string).collect::<Vec<_>>().join(",")
        ),
        None => "SELECT id, data FROM messages WHERE id BETWEEN ?1 AND ?2 ORDER BY id".into(),
    };
    let mut stmt = conn.prepare_cached(&sql).map_err(&err)?;
    let mut rows = stmt.query([ch.first_row, last]).map_err(&err)?;
    while let Some(r) = rows.next().map_err(&err)? {
        let id: i64 = r.get(0).map_err(&err)?;
        let d: &[u8] = match r.get_ref(1).map_err(&err)? {
            rusqlite::types::ValueRef::Blob(b) | rusqlite::types::ValueRef::Text(b) => b,
            _ => &[],
        };
        out.push(id, |b| {
            b.extend_from_slice(d);
            Ok(())
        })?;
    }
    drop(rows);
    drop(stmt);
    Ok(out.buf)
}

/// The message at row `entry.offset` of a block read by [`read_rows`].
pub(crate) fn message_in_rows(
    buf: Arc<Vec<u8>>,
    ch: &Chunk,
    conn: usize,
    entry: IndexEntry,
) -> Result<Message> {
    let k = entry.offset as usize;
    let word = |i: usize| -> Option<u32> {
        buf.get(i..i + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let n = word(0).unwrap_or(0) as usize;
    let missing = || {
        Error::NotFound(format!(
            "row {k} of the block from message id {} is gone (the database changed since it was opened)",
            ch.first_row
        ))
    };
    if k >= n {
        return Err(missing());
    }
    let start = word(4 + 8 * k).ok_or_else(missing)? as usize;
    let len = word(8 + 8 * k).ok_or_else(missing)?;
    if len == u32::MAX {
        return Err(missing());
    }
    let len = len as usize;
    if start + len > buf.len() {
        return Err(missing());
    }
    Ok(Message {
        conn,
        time_ns: entry.time_ns,
        data: Bytes::slice(buf, start, start + len),
        entry,
        publish_ns: entry.time_ns,
        sequence: 0,
    })
}
