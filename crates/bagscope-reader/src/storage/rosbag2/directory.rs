//! A rosbag2 directory assembled: its files found (as metadata.yaml lists them, or on disk), opened, and their topics, chunks and tables joined into one recording; metadata.yaml compared with the storage.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::{open_part, parse_metadata, qos_norm, Metadata};
use crate::error::{Error, Result};
use crate::storage::{IndexEntry, MessageTables, Opened, Source, Summary, Version};

/// A temporary directory removed when dropped (decompressed or copied storage files).
#[derive(Debug)]
pub(crate) struct TempDir(pub(crate) PathBuf);

impl TempDir {
    pub(crate) fn new() -> Result<TempDir> {
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

/// Where a storage file's bytes come from when it is not the local file of that name (a
/// remote MCAP storage file read by ranges); `None`: the local file.
pub(crate) type Opener<'a> = &'a dyn Fn(&Path) -> Option<Source>;

/// Opens a rosbag2 directory (or the directory of a `metadata.yaml`).
pub(crate) fn open_dir(dir: &Path, opts: &crate::OpenOptions) -> Result<(Vec<Source>, Opened)> {
    open_dir_with(dir, &|_| None, opts)
}

/// [`open_dir`], with the storage files `opener` gives read from there.
pub(crate) fn open_dir_with(
    dir: &Path,
    opener: Opener,
    opts: &crate::OpenOptions,
) -> Result<(Vec<Source>, Opened)> {
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
    open_files(dir, &files, meta.as_ref(), warnings, opener, opts)
}

/// Where a file `relative_file_paths` lists is. Metadata versions 1-3 (eloquent, foxy) name
/// files from the *parent* of the bag directory (`bagname/bagname_0.db3`), as rosbag2's own
/// `resolve_relative_paths` reads them; later versions from the bag directory. A listing of the
/// other kind, or one naming a bag directory since renamed, is found by its file name in the
/// bag directory.
pub(super) fn listed_file(dir: &Path, f: &str, version: i64) -> Option<PathBuf> {
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

pub(super) fn same_dir(a: &Path, b: &Path) -> bool {
    a == b || std::fs::canonicalize(a).ok() == std::fs::canonicalize(b).ok()
}

/// Opens a single storage file (`.db3`, `.db3.zstd`, `.mcap.zstd`) as a recording.
/// Every topic, type, definition and message is in the file: that it is read without its
/// `metadata.yaml` is a fact of the storage (`info` lists it), not a warning.
pub(crate) fn open_file(path: &Path, opts: &crate::OpenOptions) -> Result<(Vec<Source>, Opened)> {
    let (files, mut opened) = open_files(
        path,
        &[path.to_path_buf()],
        None,
        Vec::new(),
        &|_| None,
        opts,
    )?;
    opened
        .summary
        .storage_facts
        .insert(0, (ALONE_FACT.0.into(), ALONE_FACT.1.into()));
    Ok((files, opened))
}

/// The storage fact of a storage file read on its own: (name, value).
pub(crate) const ALONE_FACT: (&str, &str) = (
    "metadata.yaml",
    "none: a rosbag2 storage file read on its own (it holds every topic and message)",
);

pub(crate) fn is_storage_file(p: &Path) -> bool {
    let n = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
    [".db3", ".mcap", ".db3.zstd", ".mcap.zstd", ".mcap.active"]
        .iter()
        .any(|e| n.ends_with(e))
}

/// Sort key that puts `x_2.db3` before `x_10.db3`.
pub(super) fn natural_key(p: &Path) -> (String, u64, String) {
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
pub(super) struct Part {
    pub(super) source: Source,
    pub(super) opened: Opened,
    pub(super) storage: &'static str,
    pub(super) compression: (String, String),
    pub(super) distro: String,
    /// SQLite: the file has the `message_definitions` table of iron and later.
    pub(super) newer_schema: bool,
}

pub(super) fn open_files(
    root: &Path,
    files: &[PathBuf],
    meta: Option<&Metadata>,
    mut warnings: Vec<String>,
    opener: Opener,
    opts: &crate::OpenOptions,
) -> Result<(Vec<Source>, Opened)> {
    let message_mode = meta.is_some_and(|m| m.compression.1.eq_ignore_ascii_case("message"));
    // Listed in metadata.yaml but not found (the files opened are those found).
    let files_listed_missing = meta.map_or(0, |m| m.files.len().saturating_sub(files.len()));
    let mut parts = Vec::new();
    let only = if files.len() == 1 { meta } else { None };
    for f in files {
        let p = open_part(f, message_mode, only, opener, opts)?;
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
        // The type hash metadata.yaml states where the storage did not (an MCAP file).
        for c in &mut summary.connections {
            if c.type_hash.is_empty() {
                if let Some(h) = m.type_hashes.get(&c.topic) {
                    c.type_hash = h.clone();
                }
            }
        }
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
            keep: None,
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
pub(super) fn missing(m: &Metadata, s: &Summary, files_missing: usize) -> Option<String> {
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

pub(super) fn compare_metadata(m: &Metadata, s: &Summary, warnings: &mut Vec<String>) {
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
