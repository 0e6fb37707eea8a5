//! Export: the chosen connections within a time range, copied byte for byte (no decode) with
//! their connections, definitions and times into a new recording: a ROS 1 bag, a standalone
//! MCAP file or a rosbag2 directory (SQLite or MCAP storage), fully indexed. Several inputs
//! are merged in time order. Exporting a whole recovered bag is the repair `rosbag reindex`
//! does. Every output is written under a temporary name and renamed into place; it may not be,
//! or lie inside, a recording being read.

pub mod parquet;
mod sink;
mod stages;

use sink::{open_sink, size_of};
use stages::run_stages;

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use bagscope_reader::bag::{Bag, Connection, Filter};
use bagscope_reader::error::ConvertError;
use bagscope_reader::error::{Error, Result};
use bagscope_reader::storage::ros1::writer::WriteOptions;
use bagscope_reader::storage::rosbag2::writer::Rosbag2Compression;

/// What to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OutputFormat {
    /// A ROS 1 bag, format 2.0 (`.bag`).
    #[default]
    Ros1Bag,
    /// A standalone MCAP file (`.mcap`).
    Mcap,
    /// A rosbag2 directory with SQLite storage.
    Rosbag2Sqlite3,
    /// A rosbag2 directory with MCAP storage.
    Rosbag2Mcap,
    /// A directory of decoded Parquet files, one per topic ([`parquet`]).
    Parquet,
}

impl OutputFormat {
    /// Whether the output is a rosbag2 directory.
    pub fn is_rosbag2(self) -> bool {
        matches!(
            self,
            OutputFormat::Rosbag2Sqlite3 | OutputFormat::Rosbag2Mcap
        )
    }

    /// The name `--format` takes.
    pub fn name(self) -> &'static str {
        match self {
            Self::Ros1Bag => "bag",
            Self::Mcap => "mcap",
            Self::Rosbag2Sqlite3 => "rosbag2-sqlite3",
            Self::Rosbag2Mcap => "rosbag2-mcap",
            Self::Parquet => "parquet",
        }
    }

    /// Parses a `--format` name.
    pub fn parse(s: &str) -> Option<OutputFormat> {
        Some(match s {
            "bag" | "ros1" => Self::Ros1Bag,
            "mcap" => Self::Mcap,
            "rosbag2" | "rosbag2-sqlite3" | "sqlite3" => Self::Rosbag2Sqlite3,
            "rosbag2-mcap" => Self::Rosbag2Mcap,
            "parquet" => Self::Parquet,
            _ => return None,
        })
    }

    /// The format an output path asks for: `.bag`, `.mcap`, else (a directory name) rosbag2
    /// with SQLite storage.
    pub fn from_path(p: &Path) -> OutputFormat {
        match p.extension().and_then(|e| e.to_str()) {
            Some("bag") => Self::Ros1Bag,
            Some("mcap") => Self::Mcap,
            _ => Self::Rosbag2Sqlite3,
        }
    }

    /// The message encoding the format can hold (`None`: any).
    fn requires(self) -> Option<&'static str> {
        match self {
            Self::Ros1Bag => Some("ros1"),
            Self::Mcap => None,
            Self::Rosbag2Sqlite3 | Self::Rosbag2Mcap => Some("cdr"),
            Self::Parquet => None,
        }
    }
}

/// What to export.
#[derive(Debug, Clone, Default)]
pub struct ExportOptions {
    /// Which messages (connections, `[start, end)`); with several inputs, the connections
    /// are those of the first and are matched in the others by topic name.
    pub filter: Filter,
    /// Compression and chunk size (ROS 1 bag: none/lz4/bz2; MCAP: none/lz4/zstd).
    pub write: WriteOptions,
    /// The output format (`None`: from the output path).
    pub format: Option<OutputFormat>,
    /// rosbag2: zstd per file or per message.
    pub rosbag2_compression: Rosbag2Compression,
    /// rosbag2: split into files of about this many bytes.
    pub split_bytes: Option<u64>,
    /// rosbag2: split into files of at most this many nanoseconds of messages.
    pub split_ns: Option<u64>,
    /// Re-encode ROS 1 messages as CDR with their ROS 2 types; connections whose type has no
    /// ROS 2 counterpart are left out and listed in the report.
    pub to_ros2: bool,
    /// With `to_ros2`: only types with a ROS 2 definition of the same name are converted
    /// (others left out), none translated from its ROS 1 definition or mapped to another.
    pub strict_types: bool,
    /// Re-encode ROS 2 (CDR) messages in ROS 1 serialization with their ROS 1 types;
    /// connections whose type has no ROS 1 counterpart are left out and listed in the report.
    pub to_ros1: bool,
    /// Migrate messages whose type has a different definition in this folder (of packages,
    /// a workspace, or `.msg` files) to that definition.
    pub migrate: Option<PathBuf>,
    /// Bookmarks written with the messages (MCAP: metadata records; other formats: a sidecar
    /// beside the output); `None`: the first recording's own. Those in the range only.
    pub bookmarks: Option<Vec<crate::bookmarks::Bookmark>>,
}

/// Progress of an export.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExportProgress {
    /// Messages written.
    pub messages: u64,
    /// Messages to write.
    pub total: u64,
    /// Bytes of message data written.
    pub bytes: u64,
}

/// What an export wrote.
#[derive(Debug, Clone)]
pub struct ExportReport {
    /// The new recording.
    pub path: PathBuf,
    /// Messages written.
    pub messages: u64,
    /// Connections written.
    pub connections: usize,
    /// Size of the new recording (all its files).
    pub file_size: u64,
    /// Its format.
    pub format: OutputFormat,
    /// Connections left out, each with why (`--to-ros2`).
    pub skipped: Vec<String>,
    /// What was migrated, and what could not be (`--migrate`).
    pub notes: Vec<String>,
    /// Messages that could not be converted and were left out, once per connection with a
    /// count and the first error (everything else is written).
    pub unconverted: Vec<String>,
}

/// Compiles a connection's conversion (`--to-ros2`, `--to-ros1`), or says why it cannot.
type MakeTransform<'a> = &'a dyn Fn(&Connection) -> std::result::Result<Transform, ConvertError>;

/// How a connection's messages are changed on the way.
enum Transform {
    ToRos2(bagscope_reader::encoding::to_ros2::ToRos2),
    ToRos1(bagscope_reader::encoding::to_ros1::ToRos1),
    Migrate(bagscope_reader::encoding::migrate::Migration),
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

/// Refuses an output that is, or lies inside, a recording being read.
fn check_output(bag: &Bag, out: &Path) -> Result<()> {
    let s = bag.summary();
    let src = &s.path;
    let out_abs = std::fs::canonicalize(out.parent().unwrap_or(Path::new(".")))
        .map(|p| p.join(out.file_name().unwrap_or_default()))
        .unwrap_or_else(|_| out.to_path_buf());
    let src_abs = std::fs::canonicalize(src).unwrap_or_else(|_| src.clone());
    if same_file(src, out)
        || src == out
        || s.files.iter().any(|f| same_file(f, out))
        || (src_abs.is_dir() && out_abs.starts_with(&src_abs))
    {
        return Err(Error::Invalid(format!(
            "{} is the recording being read, or inside it: export elsewhere",
            out.display()
        )));
    }
    Ok(())
}

/// The connection written for `orig`, whose messages `conv` (if any) re-encodes.
fn output_connection(orig: &Connection, conv: Option<&Transform>) -> Connection {
    match conv {
        Some(Transform::ToRos2(t)) => Connection {
            datatype: t.datatype.clone(),
            md5sum: String::new(),
            message_definition: t.definition.clone(),
            encoding: "cdr".into(),
            schema_encoding: "ros2msg".into(),
            qos: String::new(),
            ..orig.clone()
        },
        Some(Transform::ToRos1(t)) => Connection {
            datatype: t.datatype.clone(),
            md5sum: t.md5.clone(),
            message_definition: t.definition.clone(),
            encoding: "ros1".into(),
            schema_encoding: "ros1msg".into(),
            qos: String::new(),
            ..orig.clone()
        },
        Some(Transform::Migrate(m)) => Connection {
            md5sum: if orig.encoding == "ros1" {
                m.md5.clone()
            } else {
                String::new()
            },
            message_definition: m.definition.clone(),
            ..orig.clone()
        },
        None => orig.clone(),
    }
}

/// Exports messages of `bag` to `out`. `progress` is called every few thousand messages;
/// setting `cancel` stops the export and removes the partial output. The recording being read
/// is never written: `out` may not be it.
///
/// Ten seconds of the demo bag's topics to MCAP (the format follows the file name):
///
/// ```
/// use std::sync::atomic::AtomicBool;
/// use bagscope_ops::tables::export::{export, ExportOptions};
/// # let dir = std::env::temp_dir().join(format!("bagscope-doc-export-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir)?;
/// # let path = dir.join("demo.bag");
/// # bagscope_ops::demo::write_demo(&path, 20)?;
/// let bag = bagscope_reader::Bag::open(&path)?;
/// let start = bag.summary().start_ns.unwrap_or(0);
/// let mut opts = ExportOptions::default();
/// opts.filter.start_ns = Some(start);
/// opts.filter.end_ns = Some(start + 10_000_000_000);
/// let out = dir.join("first-10s.mcap");
/// let report = export(&bag, &out, &opts, &AtomicBool::new(false), &mut |_| {})?;
/// let copy = bagscope_reader::Bag::open(&out)?;
/// assert_eq!(copy.summary().message_count, report.messages);
/// assert!(copy.summary().end_ns < Some(start + 10_000_000_000));
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), bagscope_ops::Error>(())
/// ```
pub fn export(
    bag: &Bag,
    out: &Path,
    opts: &ExportOptions,
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(ExportProgress),
) -> Result<ExportReport> {
    export_many(std::slice::from_ref(bag), out, opts, cancel, progress)
}

/// Exports the messages of several recordings, merged in time order (split recordings joined,
/// or different ones merged), into one output. The filter's connections are those of the
/// first input; in the others the same topics are taken.
pub fn export_many(
    bags: &[Bag],
    out: &Path,
    opts: &ExportOptions,
    cancel: &AtomicBool,
    progress: &mut dyn FnMut(ExportProgress),
) -> Result<ExportReport> {
    let Some(first) = bags.first() else {
        return Err(Error::Invalid("nothing to export".into()));
    };
    for b in bags {
        check_output(b, out)?;
    }
    let format = opts.format.unwrap_or_else(|| OutputFormat::from_path(out));
    check_options(opts, format)?;
    if format == OutputFormat::Parquet {
        // Decoded columns: no conversion, each topic its own file.
        if opts.to_ros2 || opts.to_ros1 || opts.migrate.is_some() {
            return Err(Error::Invalid(
                "Parquet holds decoded values: --to-ros2, --to-ros1 and --migrate do not apply"
                    .into(),
            ));
        }
        let topics: Option<Vec<String>> = opts.filter.connections.as_ref().map(|cs| {
            let mut t: Vec<String> = cs
                .iter()
                .filter_map(|&c| first.summary().connections.get(c))
                .map(|c| c.topic.clone())
                .collect();
            t.dedup();
            t
        });
        return parquet::export_parquet(
            bags,
            out,
            topics.as_deref(),
            &opts.filter,
            cancel,
            progress,
        );
    }
    // The connections of each input.
    let topics: Option<Vec<String>> = opts.filter.connections.as_ref().map(|cs| {
        cs.iter()
            .filter_map(|&c| first.summary().connections.get(c))
            .map(|c| c.topic.clone())
            .collect()
    });
    let mut filters = Vec::new();
    let mut skipped = Vec::new();
    // Each connection's conversion, compiled once (None: copied as it is).
    let mut convert: Vec<Vec<Option<Transform>>> = Vec::new();
    let mut notes = Vec::new();
    for (i, b) in bags.iter().enumerate() {
        let s = b.summary();
        let mut conns: Vec<usize> = match (&opts.filter.connections, &topics) {
            (Some(c), _) if i == 0 => c.clone(),
            (_, Some(t)) => (0..s.connections.len())
                .filter(|&c| t.contains(&s.connections[c].topic))
                .collect(),
            _ => (0..s.connections.len()).collect(),
        };
        let mut conv: Vec<Option<Transform>> = (0..s.connections.len()).map(|_| None).collect();
        if let Some(dir) = &opts.migrate {
            migrations(s, &conns, dir, &mut conv, &mut notes);
        }
        conversions(b, opts, &mut conns, &mut conv, &mut notes, &mut skipped);
        check_encodings(s, format, &conns, &conv)?;
        filters.push(Filter {
            connections: Some(conns),
            start_ns: opts.filter.start_ns,
            end_ns: opts.filter.end_ns,
        });
        convert.push(conv);
    }
    let mut iters = Vec::new();
    let mut total = 0u64;
    for (b, f) in bags.iter().zip(&filters) {
        let it = b.messages(f)?;
        total += it.total() as u64;
        iters.push(it);
    }
    let sink = open_sink(bags, out, opts, format, total)?;
    let outcome = run_stages(bags, iters, sink, &convert, total, cancel, progress)?;
    let Some((sink, (p, written_conns, unconverted))) = outcome else {
        return Err(Error::Cancelled);
    };
    // The first recording's metadata records and bookmarks go along.
    let (mut notes_out, _) = crate::bookmarks::read_bookmarks(first);
    if let Some(n) = &opts.bookmarks {
        notes_out = n.clone();
    }
    let f = &opts.filter;
    notes_out.retain(|n| {
        f.start_ns.is_none_or(|s| n.start_ns >= s) && f.end_ns.is_none_or(|e| n.start_ns < e)
    });
    let mut records: Vec<(String, Vec<(String, String)>)> = first
        .summary()
        .metadata
        .iter()
        .filter(|(n, _)| n != crate::bookmarks::METADATA_NAME)
        .cloned()
        .collect();
    records.extend(
        notes_out
            .iter()
            .map(|n| (crate::bookmarks::METADATA_NAME.to_string(), n.to_pairs())),
    );
    let mut sink = sink;
    let in_file = sink.add_metadata(&records)?;
    let path = sink.finish()?;
    if !in_file && !notes_out.is_empty() {
        crate::bookmarks::write_sidecar(&path, &notes_out)?;
    }
    progress(p);
    let unconverted = unconverted
        .into_iter()
        .map(|((k, c), (n, t, e))| {
            let conn = &bags[k].summary().connections[c];
            format!(
                "{} (connection {}): {n} message(s) not converted, the first at {}: {e}",
                conn.topic,
                conn.id,
                crate::timefmt::date(t)
            )
        })
        .collect();
    Ok(ExportReport {
        file_size: size_of(&path),
        path,
        messages: p.messages,
        connections: written_conns,
        format,
        skipped,
        notes,
        unconverted,
    })
}

/// Options that do not go together, or with the output format.
fn check_options(opts: &ExportOptions, format: OutputFormat) -> Result<()> {
    if opts.to_ros2 && format == OutputFormat::Ros1Bag {
        return Err(Error::Invalid(
            "--to-ros2 writes CDR messages, which a ROS 1 bag cannot hold: write MCAP or rosbag2"
                .into(),
        ));
    }
    if opts.to_ros2 && opts.to_ros1 {
        return Err(Error::Invalid(
            "--to-ros2 and --to-ros1 do not combine: choose the direction".into(),
        ));
    }
    if opts.to_ros1 && format.requires() == Some("cdr") {
        return Err(Error::Invalid(
            "--to-ros1 writes ROS 1 messages, which a rosbag2 recording does not hold: write a .bag or MCAP"
                .into(),
        ));
    }
    if (opts.to_ros2 || opts.to_ros1) && opts.migrate.is_some() {
        return Err(Error::Invalid(
            "--to-ros2 and --migrate do not combine: migrate first, then convert".into(),
        ));
    }
    Ok(())
}

/// `--migrate DIR`: the migration of each of `conns` whose type DIR defines differently, and
/// a note per type of what was added and dropped, or why it could not migrate.
fn migrations(
    s: &bagscope_reader::Summary,
    conns: &[usize],
    dir: &Path,
    conv: &mut [Option<Transform>],
    notes: &mut Vec<String>,
) {
    let mut seen = std::collections::BTreeSet::new();
    for &ci in conns {
        let c = &s.connections[ci];
        let dialect = if c.encoding == "cdr" {
            bagscope_reader::definition::msg::Dialect::Ros2
        } else {
            bagscope_reader::definition::msg::Dialect::Ros1
        };
        let Some((text, file)) = bagscope_reader::definition::sources::lookup_in(
            &[dir.to_path_buf()],
            &c.datatype,
            dialect,
            &c.message_definition,
        ) else {
            continue;
        };
        match bagscope_reader::encoding::migrate::Migration::new(c, &text) {
            Ok(Some(m)) => {
                if seen.insert(c.datatype.clone()) {
                    let mut n = format!("{} migrated to {}", c.datatype, file.display());
                    if !m.added.is_empty() {
                        n.push_str(&format!("; added (default values): {}", m.added.join(", ")));
                    }
                    if !m.dropped.is_empty() {
                        n.push_str(&format!("; dropped: {}", m.dropped.join(", ")));
                    }
                    notes.push(n);
                }
                conv[ci] = Some(Transform::Migrate(m));
            }
            Ok(None) => {}
            Err(e) => {
                if seen.insert(c.datatype.clone()) {
                    notes.push(format!(
                        "{} not migrated (left as recorded): {e}",
                        c.datatype
                    ));
                }
            }
        }
    }
}

/// Keeps `bookmarks` with the recording `bag` (its bookmarks are replaced by them): in an MCAP
/// file,
/// the file is written again beside it with them as metadata records and renamed over it (the
/// caller asks the user first); otherwise into its sidecar. Returns the file written.
pub fn rewrite_with_bookmarks(
    bag: &Bag,
    bookmarks: &[crate::bookmarks::Bookmark],
    cancel: &AtomicBool,
) -> Result<PathBuf> {
    let s = bag.summary();
    if !crate::bookmarks::in_file(bag) {
        return crate::bookmarks::write_sidecar(&s.path, bookmarks);
    }
    let path = s.path.clone();
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let fresh = path.with_file_name(format!(".{name}.bookmarks.mcap"));
    let opts = ExportOptions {
        format: Some(OutputFormat::Mcap),
        bookmarks: Some(bookmarks.to_vec()),
        ..Default::default()
    };
    let r = export(bag, &fresh, &opts, cancel, &mut |_| {});
    if let Err(e) = r {
        let _ = std::fs::remove_file(&fresh);
        return Err(e);
    }
    std::fs::rename(&fresh, &path).map_err(|e| {
        let _ = std::fs::remove_file(&fresh);
        Error::Invalid(format!("{}: {e}", path.display()))
    })?;
    Ok(path)
}

/// `--to-ros2` / `--to-ros1`: each connection of the source encoding gets its conversion, or
/// is left out of `conns` with the reason in `skipped`.
fn conversions(
    bag: &Bag,
    opts: &ExportOptions,
    conns: &mut Vec<usize>,
    conv: &mut [Option<Transform>],
    notes: &mut Vec<String>,
    skipped: &mut Vec<String>,
) {
    let s = bag.summary();
    let strict = opts.strict_types;
    // Definitions not stored are searched where the recording was opened to search them.
    let msg_path = &bag.options().msg_path;
    let to_ros2 = move |c: &Connection| {
        bagscope_reader::encoding::to_ros2::ToRos2::with_types(c, strict, msg_path)
            .map(Transform::ToRos2)
    };
    let to_ros1 = |c: &Connection| {
        bagscope_reader::encoding::to_ros1::ToRos1::new(c, msg_path).map(Transform::ToRos1)
    };
    let direction: Option<(&str, MakeTransform)> = if opts.to_ros2 {
        Some(("ros1", &to_ros2))
    } else if opts.to_ros1 {
        Some(("cdr", &to_ros1))
    } else {
        None
    };
    if let Some((from, make)) = direction {
        let mut failed: std::collections::BTreeMap<String, ConvertError> = Default::default();
        conns.retain(|&ci| {
            let c = &s.connections[ci];
            if c.encoding != from {
                return true;
            }
            match make(c) {
                Ok(t) => {
                    if let Transform::ToRos2(r) = &t {
                        if let Some(n) = r.note().filter(|n| !notes.contains(n)) {
                            notes.push(n);
                        }
                    }
                    conv[ci] = Some(t);
                    true
                }
                Err(e) => {
                    if c.message_count > 0 {
                        failed.insert(format!("{} ({})", c.topic, c.datatype), e);
                    }
                    false
                }
            }
        });
        skipped.extend(failed.into_iter().map(|(k, v)| format!("{k}: {v}")));
    }
}

/// Refuses an output format that cannot hold the messages of `conns` as they will be written.
fn check_encodings(
    s: &bagscope_reader::Summary,
    format: OutputFormat,
    conns: &[usize],
    conv: &[Option<Transform>],
) -> Result<()> {
    if let Some(need) = format.requires() {
        if let Some(c) = conns
            .iter()
            .filter(|&&i| {
                !matches!(
                    conv[i],
                    Some(Transform::ToRos2(_)) | Some(Transform::ToRos1(_))
                )
            })
            .filter_map(|&i| s.connections.get(i))
            .find(|c| c.encoding != need && c.message_count > 0)
        {
            return Err(Error::Invalid(format!(
                "a {} holds {} messages only; {} is {}-encoded ({} recording): choose another format (MCAP holds any encoding){}",
                match format {
                    OutputFormat::Ros1Bag => "ROS 1 bag",
                    _ => "rosbag2 recording",
                },
                if need == "ros1" { "ROS 1" } else { "CDR (ROS 2)" },
                c.topic,
                c.encoding,
                s.version.as_str(),
                if need == "cdr" && c.encoding == "ros1" {
                    "; --to-ros2 converts ROS 1 messages to ROS 2"
                } else if need == "ros1" && c.encoding == "cdr" {
                    "; --to-ros1 converts ROS 2 messages to ROS 1"
                } else {
                    ""
                }
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::sink::large_sqlite_pages;
    use super::*;

    #[test]
    fn large_sqlite_pages_only_for_large_unsplit_outputs() {
        let o = |split_bytes, split_ns| ExportOptions {
            split_bytes,
            split_ns,
            ..Default::default()
        };
        assert_eq!(large_sqlite_pages(5_000_000, &o(None, None)), 65536);
        assert_eq!(
            large_sqlite_pages(5_000_000, &o(Some(1 << 30), None)),
            65536
        );
        assert_eq!(large_sqlite_pages(999_999, &o(None, None)), 0);
        assert_eq!(large_sqlite_pages(5_000_000, &o(Some(1 << 20), None)), 0);
        assert_eq!(
            large_sqlite_pages(5_000_000, &o(None, Some(1_000_000_000))),
            0
        );
    }
}
