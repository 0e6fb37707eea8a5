//! Recording a live system to a file: the messages as received, with the definitions and
//! connection details their publishers sent, written by bagscope's writers. Crash-safe: the
//! file is written as `OUT.active` and its open chunk is closed and handed to the operating
//! system every half second, so a recorder killed at any moment leaves a file that bagscope
//! reads with every message received up to half a second before; a clean stop (Ctrl-C)
//! finishes the index and renames it into place.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use super::ros1::{Node, Received};
use crate::error::{Error, Result};
use crate::storage::mcap_writer::{McapOptions, McapWriter};
use crate::storage::ros1::record::Compression;
use crate::storage::ros1::writer::{BagWriter, ConnectionSpec, WriteOptions};

/// How often the open chunk is closed and written out.
const FLUSH_EVERY: Duration = Duration::from_millis(500);
/// How often the master is asked for new topics (`--all`, `--regex`).
const DISCOVER_EVERY: Duration = Duration::from_millis(500);
/// Messages received and not yet written before the receiving threads wait.
const BACKLOG: usize = 1 << 16;

/// The file format written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A ROS 1 bag (2.0).
    Bag,
    /// An MCAP file (`ros1` profile).
    Mcap,
}

impl Format {
    /// `bag` or `mcap`.
    pub fn parse(s: &str) -> Result<Format> {
        match s {
            "bag" => Ok(Format::Bag),
            "mcap" => Ok(Format::Mcap),
            other => Err(Error::Invalid(format!(
                "a ROS 1 recording is written as bag or mcap, not {other:?}"
            ))),
        }
    }

    /// The chunk compression `name` (none, lz4, bz2 for a bag; none, lz4, zstd for MCAP).
    pub fn compression(self, name: &str) -> Result<Compression> {
        let c = match name {
            "none" | "" => Compression::None,
            "lz4" => Compression::Lz4,
            "bz2" if self == Format::Bag => Compression::Bz2,
            "zstd" if self == Format::Mcap => Compression::Zstd,
            other => {
                return Err(Error::Invalid(format!(
                    "compression {other:?} does not apply: a bag takes none, lz4 or bz2; MCAP none, lz4 or zstd"
                )))
            }
        };
        Ok(c)
    }

    fn extension(self) -> &'static str {
        match self {
            Format::Bag => "bag",
            Format::Mcap => "mcap",
        }
    }
}

/// Which topics to record.
pub enum Select {
    /// These topics.
    Topics(Vec<String>),
    /// Every topic whose name matches one of these (and the topics named).
    Matching(Vec<String>, Vec<regex::Regex>),
    /// Every topic.
    All,
}

impl Select {
    fn wants(&self, topic: &str) -> bool {
        match self {
            Select::Topics(t) => t.iter().any(|x| x == topic),
            Select::Matching(t, r) => {
                t.iter().any(|x| x == topic) || r.iter().any(|r| r.is_match(topic))
            }
            Select::All => true,
        }
    }

    fn named(&self) -> &[String] {
        match self {
            Select::Topics(t) | Select::Matching(t, _) => t,
            Select::All => &[],
        }
    }

    fn discovers(&self) -> bool {
        !matches!(self, Select::Topics(_))
    }
}

/// Where and how to record.
pub struct RecordOptions {
    /// The output file (with splits: its stem numbered, `run_0.bag`, `run_1.bag`, ...).
    pub out: PathBuf,
    /// File format.
    pub format: Format,
    /// Chunk compression.
    pub compression: Compression,
    /// Start a new file when this many bytes are written.
    pub split_size: Option<u64>,
    /// Start a new file after this long.
    pub split_duration: Option<Duration>,
    /// Which topics.
    pub select: Select,
}

/// What a recording holds so far.
#[derive(Debug, Clone, Default)]
pub struct RecordStats {
    /// Messages written.
    pub messages: u64,
    /// Message bytes written.
    pub bytes: u64,
    /// Messages per topic.
    pub topics: BTreeMap<String, u64>,
    /// Files finished.
    pub files: Vec<PathBuf>,
}

/// One publisher's connection as a file records it.
#[derive(Clone, PartialEq, Eq, Hash)]
struct ConnKey {
    topic: String,
    datatype: String,
    md5sum: String,
    definition: String,
    callerid: String,
    latching: bool,
}

enum Writer {
    Bag(BagWriter),
    Mcap(McapWriter, u32),
}

/// One output file being written.
struct Out {
    w: Writer,
    conns: HashMap<ConnKey, u32>,
    started: Instant,
    bytes: u64,
}

impl Out {
    fn create(path: &Path, opts: &RecordOptions) -> Result<Out> {
        let w = match opts.format {
            Format::Bag => Writer::Bag(BagWriter::create_active(
                path,
                WriteOptions {
                    compression: opts.compression,
                    ..Default::default()
                },
            )?),
            Format::Mcap => Writer::Mcap(
                McapWriter::create_active(
                    path,
                    McapOptions {
                        compression: opts.compression,
                        profile: "ros1".into(),
                        ..Default::default()
                    },
                )?,
                0,
            ),
        };
        Ok(Out {
            w,
            conns: HashMap::new(),
            started: Instant::now(),
            bytes: 0,
        })
    }

    fn write(&mut self, m: &Received) -> Result<()> {
        let h = &m.header;
        let key = ConnKey {
            topic: m.topic.clone(),
            datatype: h.get("type").unwrap_or("").to_string(),
            md5sum: h.get("md5sum").unwrap_or("").to_string(),
            definition: h.get("message_definition").unwrap_or("").to_string(),
            callerid: h.get("callerid").unwrap_or("").to_string(),
            latching: h.get("latching") == Some("1"),
        };
        let id = match self.conns.get(&key) {
            Some(&id) => id,
            None => {
                let id = match &mut self.w {
                    Writer::Bag(w) => w.add_connection(ConnectionSpec {
                        topic: key.topic.clone(),
                        datatype: key.datatype.clone(),
                        md5sum: key.md5sum.clone(),
                        message_definition: key.definition.clone(),
                        callerid: Some(key.callerid.clone()).filter(|c| !c.is_empty()),
                        latching: key.latching,
                    }),
                    Writer::Mcap(w, _) => {
                        let schema =
                            w.add_schema(&key.datatype, "ros1msg", key.definition.as_bytes())?;
                        let mut meta = vec![("md5sum".to_string(), key.md5sum.clone())];
                        if !key.callerid.is_empty() {
                            meta.push(("callerid".into(), key.callerid.clone()));
                        }
                        if key.latching {
                            meta.push(("latching".into(), "1".into()));
                        }
                        u32::from(w.add_channel(schema, &key.topic, "ros1", &meta)?)
                    }
                };
                self.conns.insert(key, id);
                id
            }
        };
        match &mut self.w {
            Writer::Bag(w) => w.write(id, m.time_ns, &m.data)?,
            Writer::Mcap(w, seq) => {
                *seq = seq.wrapping_add(1);
                let ch =
                    u16::try_from(id).map_err(|_| Error::Invalid("too many channels".into()))?;
                w.write(ch, *seq, m.time_ns, m.time_ns, &m.data)?;
            }
        }
        self.bytes += m.data.len() as u64;
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        match &mut self.w {
            Writer::Bag(w) => w.flush(),
            Writer::Mcap(w, _) => w.flush(),
        }
    }

    fn finish(self) -> Result<PathBuf> {
        match self.w {
            Writer::Bag(w) => w.finish(),
            Writer::Mcap(w, _) => w.finish(),
        }
    }
}

/// The path of split file `n` of `out` (`run.bag` → `run_0.bag`), or `out` itself unsplit.
fn split_path(out: &Path, n: Option<u32>, ext: &str) -> PathBuf {
    let Some(n) = n else {
        return out.to_path_buf();
    };
    let stem = out
        .file_stem()
        .map_or_else(|| "recording".into(), |s| s.to_string_lossy().into_owned());
    let ext = out
        .extension()
        .map_or_else(|| ext.to_string(), |e| e.to_string_lossy().into_owned());
    out.with_file_name(format!("{stem}_{n}.{ext}"))
}

/// Records from the ROS 1 graph `node` is part of until `stop`, calling `on_progress` about
/// twice a second.
pub fn record_ros1(
    node: &Node,
    opts: &RecordOptions,
    stop: &AtomicBool,
    on_progress: &mut dyn FnMut(&RecordStats),
) -> Result<RecordStats> {
    let (tx, rx) = mpsc::sync_channel::<Received>(BACKLOG);
    for t in opts.select.named() {
        node.subscribe(t, tx.clone())?;
    }
    let split = opts.split_size.is_some() || opts.split_duration.is_some();
    let mut part = 0u32;
    let ext = opts.format.extension();
    let mut out = Out::create(&split_path(&opts.out, split.then_some(part), ext), opts)?;
    let mut stats = RecordStats::default();
    let mut last_flush = Instant::now();
    let mut last_discover: Option<Instant> = None;
    let mut subscribed: std::collections::HashSet<String> =
        opts.select.named().iter().cloned().collect();
    let write = |out: &mut Out, m: Received, stats: &mut RecordStats| -> Result<()> {
        out.write(&m)?;
        stats.messages += 1;
        stats.bytes += m.data.len() as u64;
        *stats.topics.entry(m.topic).or_insert(0) += 1;
        Ok(())
    };
    loop {
        if stop.load(Ordering::Relaxed) || node.shutdown_requested() {
            break;
        }
        if opts.select.discovers() && last_discover.is_none_or(|t| t.elapsed() >= DISCOVER_EVERY) {
            last_discover = Some(Instant::now());
            for (topic, _) in node.published_topics()? {
                if opts.select.wants(&topic) && subscribed.insert(topic.clone()) {
                    node.subscribe(&topic, tx.clone())?;
                }
            }
        }
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(m) => {
                write(&mut out, m, &mut stats)?;
                // Whatever else has arrived, before looking at the clock again.
                for _ in 0..4096 {
                    match rx.try_recv() {
                        Ok(m) => write(&mut out, m, &mut stats)?,
                        Err(_) => break,
                    }
                }
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
        if last_flush.elapsed() >= FLUSH_EVERY {
            out.flush()?;
            last_flush = Instant::now();
            on_progress(&stats);
        }
        let full = opts.split_size.is_some_and(|s| out.bytes >= s)
            || opts
                .split_duration
                .is_some_and(|d| out.started.elapsed() >= d);
        if full {
            part += 1;
            let next = Out::create(&split_path(&opts.out, Some(part), ext), opts)?;
            let done = std::mem::replace(&mut out, next);
            stats.files.push(done.finish()?);
        }
    }
    // What had arrived when asked to stop is written too.
    while let Ok(m) = rx.try_recv() {
        write(&mut out, m, &mut stats)?;
    }
    stats.files.push(out.finish()?);
    on_progress(&stats);
    Ok(stats)
}
