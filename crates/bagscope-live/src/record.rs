//! Recording a live system to a file: the messages as received, with the definitions and
//! connection details their publishers sent, written by bagscope's writers. Crash-safe: the
//! file is written as `OUT.active` and its open chunk is closed and handed to the operating
//! system every half second, so a recorder killed at any moment leaves a file that bagscope
//! reads with every message received up to half a second before; a clean stop (Ctrl-C)
//! finishes the index and renames it into place.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::ros1::Node;
use super::ros2::Participant;
pub use crate::source::Select;
use crate::source::{ConnKey, Ros1Source, Ros2Source, Source, DISCOVER_EVERY};
use crate::{Error, Result};
use bagscope_reader::storage::compression::Compression;
use bagscope_reader::storage::mcap::writer::{McapOptions, McapWriter};
use bagscope_reader::storage::ros1::writer::{BagWriter, ConnectionSpec, WriteOptions};
use bagscope_reader::storage::rosbag2::writer::{
    Rosbag2Compression, Rosbag2Options, Rosbag2Storage, Rosbag2Writer, TopicSpec as Rosbag2Topic,
};

/// How often the open chunk is closed and written out.
const FLUSH_EVERY: Duration = Duration::from_millis(500);
/// When asked to stop, messages are still taken until none has come for this long...
const STOP_QUIET: Duration = Duration::from_millis(300);
/// ... or this long has passed.
const STOP_MAX: Duration = Duration::from_secs(3);

/// The file format written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A ROS 1 bag (2.0).
    Bag,
    /// An MCAP file (`ros1` or `ros2` profile).
    Mcap,
    /// A rosbag2 directory of SQLite files (ROS 2 only).
    Rosbag2Sqlite,
    /// A rosbag2 directory of MCAP files (ROS 2 only).
    Rosbag2Mcap,
}

impl Format {
    /// `bag`, `mcap`, `rosbag2-sqlite3` or `rosbag2-mcap`.
    pub fn parse(s: &str) -> Result<Format> {
        match s {
            "bag" => Ok(Format::Bag),
            "mcap" => Ok(Format::Mcap),
            "rosbag2-sqlite3" | "sqlite3" => Ok(Format::Rosbag2Sqlite),
            "rosbag2-mcap" => Ok(Format::Rosbag2Mcap),
            other => Err(Error::Invalid(format!(
                "a recording is written as bag, mcap, rosbag2-sqlite3 or rosbag2-mcap, not {other:?}"
            ))),
        }
    }

    /// Whether it is a rosbag2 directory.
    pub fn is_rosbag2(self) -> bool {
        matches!(self, Format::Rosbag2Sqlite | Format::Rosbag2Mcap)
    }

    /// The compression `name` (none, lz4, bz2 for a bag's chunks; none, lz4, zstd for MCAP's;
    /// none or zstd for rosbag2: each SQLite row compressed, MCAP storage chunks always zstd).
    pub fn compression(self, name: &str) -> Result<Compression> {
        let c = match name {
            "none" | "" => Compression::None,
            "lz4" if !self.is_rosbag2() => Compression::Lz4,
            "bz2" if self == Format::Bag => Compression::Bz2,
            "zstd" if self != Format::Bag => Compression::Zstd,
            other => {
                return Err(Error::Invalid(format!(
                    "compression {other:?} does not apply: a bag takes none, lz4 or bz2; MCAP none, lz4 or zstd; rosbag2 none or zstd"
                )))
            }
        };
        Ok(c)
    }

    fn extension(self) -> &'static str {
        match self {
            Format::Bag => "bag",
            Format::Mcap => "mcap",
            // A directory: named as given.
            Format::Rosbag2Sqlite | Format::Rosbag2Mcap => "",
        }
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
    /// Directories searched first for the definitions of ROS 2 types (`--msg-path`).
    pub msg_path: Vec<PathBuf>,
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
    /// What the user should know of how topics were recorded (a type recorded without its
    /// definition).
    pub notes: Vec<String>,
}

enum Writer {
    Bag(BagWriter),
    Mcap(McapWriter, u32),
    Rosbag2(Box<Rosbag2Writer>),
}

/// One output file being written.
struct Out {
    w: Writer,
    conns: HashMap<ConnKey, u32>,
    started: Instant,
    bytes: u64,
}

impl Out {
    fn create(path: &Path, opts: &RecordOptions, profile: &str) -> Result<Out> {
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
                        profile: profile.into(),
                        ..Default::default()
                    },
                )?,
                0,
            ),
            Format::Rosbag2Sqlite | Format::Rosbag2Mcap => {
                if profile != "ros2" {
                    return Err(Error::Invalid(
                        "a rosbag2 recording holds ROS 2 (CDR) messages: record from ROS 1 as bag or mcap".into(),
                    ));
                }
                Writer::Rosbag2(Box::new(Rosbag2Writer::create_active(
                    path,
                    Rosbag2Options {
                        storage: if opts.format == Format::Rosbag2Sqlite {
                            Rosbag2Storage::Sqlite3
                        } else {
                            Rosbag2Storage::Mcap
                        },
                        // SQLite rows compressed one by one, as rosbag2's MESSAGE mode; the
                        // MCAP storage's chunks are zstd already.
                        compression: if opts.compression == Compression::Zstd
                            && opts.format == Format::Rosbag2Sqlite
                        {
                            Rosbag2Compression::Message
                        } else {
                            Rosbag2Compression::None
                        },
                        // rosbag2 splits into files of one directory.
                        split_bytes: opts.split_size,
                        split_ns: opts
                            .split_duration
                            .map(|d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)),
                        ros_distro: std::env::var("ROS_DISTRO").unwrap_or_default(),
                        ..Default::default()
                    },
                )?))
            }
        };
        Ok(Out {
            w,
            conns: HashMap::new(),
            started: Instant::now(),
            bytes: 0,
        })
    }

    fn add(&mut self, key: &ConnKey) -> Result<u32> {
        Ok(match &mut self.w {
            Writer::Bag(w) => w.add_connection(ConnectionSpec {
                topic: key.topic.clone(),
                datatype: key.datatype.clone(),
                md5sum: key.md5sum.clone(),
                message_definition: key.definition.clone(),
                callerid: Some(key.callerid.clone()).filter(|c| !c.is_empty()),
                latching: key.latching,
            }),
            Writer::Mcap(w, _) => {
                let schema = match (key.encoding, key.definition.is_empty()) {
                    // Recorded raw: a schema of no encoding (MCAP's "no schema is
                    // available") names the type, whose definition a reader may find on its
                    // own search path.
                    ("cdr", true) => w.add_schema(&key.datatype, "", b"")?,
                    ("cdr", false) => {
                        w.add_schema(&key.datatype, "ros2msg", key.definition.as_bytes())?
                    }
                    _ => w.add_schema(&key.datatype, "ros1msg", key.definition.as_bytes())?,
                };
                let mut meta = Vec::new();
                if !key.md5sum.is_empty() {
                    meta.push(("md5sum".to_string(), key.md5sum.clone()));
                }
                if !key.callerid.is_empty() {
                    meta.push(("callerid".into(), key.callerid.clone()));
                }
                if key.latching {
                    meta.push(("latching".into(), "1".into()));
                }
                if !key.qos.is_empty() {
                    meta.push(("offered_qos_profiles".into(), key.qos.clone()));
                }
                u32::from(w.add_channel(schema, &key.topic, key.encoding, &meta)?)
            }
            Writer::Rosbag2(w) => {
                let t = w.add_topic(Rosbag2Topic {
                    name: key.topic.clone(),
                    datatype: key.datatype.clone(),
                    serialization_format: key.encoding.into(),
                    qos: key.qos.clone(),
                    definition: key.definition.clone(),
                    type_hash: key.type_hash.clone(),
                });
                u32::try_from(t).map_err(|_| Error::Invalid("too many topics".into()))?
            }
        })
    }

    /// Writes one message and counts it in `stats`.
    fn write(
        &mut self,
        key: &ConnKey,
        time_ns: u64,
        data: &[u8],
        stats: &mut RecordStats,
    ) -> Result<()> {
        let id = match self.conns.get(key) {
            Some(&id) => id,
            None => {
                let id = self.add(key)?;
                self.conns.insert(key.clone(), id);
                id
            }
        };
        match &mut self.w {
            Writer::Bag(w) => w.write(id, time_ns, data)?,
            Writer::Mcap(w, seq) => {
                *seq = seq.wrapping_add(1);
                let ch =
                    u16::try_from(id).map_err(|_| Error::Invalid("too many channels".into()))?;
                w.write(ch, *seq, time_ns, time_ns, data)?;
            }
            Writer::Rosbag2(w) => w.write(id as usize, time_ns, data)?,
        }
        self.bytes += data.len() as u64;
        stats.messages += 1;
        stats.bytes += data.len() as u64;
        match stats.topics.get_mut(&key.topic) {
            Some(n) => *n += 1,
            None => {
                stats.topics.insert(key.topic.clone(), 1);
            }
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        Ok(match &mut self.w {
            Writer::Bag(w) => w.flush(),
            Writer::Mcap(w, _) => w.flush(),
            Writer::Rosbag2(w) => w.flush(),
        }?)
    }

    fn finish(self) -> Result<PathBuf> {
        Ok(match self.w {
            Writer::Bag(w) => w.finish(),
            Writer::Mcap(w, _) => w.finish(),
            Writer::Rosbag2(w) => w.finish(),
        }?)
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

/// twice a second.
pub fn record_ros1(
    node: &Node,
    opts: &RecordOptions,
    stop: &AtomicBool,
    on_progress: &mut dyn FnMut(&RecordStats),
) -> Result<RecordStats> {
    let mut source = Ros1Source::new(node, &opts.select)?;
    record(&mut source, opts, stop, on_progress)
}

/// Records from the DDS domain `participant` is on until `stop`, calling `on_progress` about
/// twice a second. Topics named in `opts.select` are subscribed to once a publisher of them
/// is seen (its type and QoS are what the subscription asks for).
pub fn record_ros2(
    participant: &Participant,
    opts: &RecordOptions,
    stop: &AtomicBool,
    on_progress: &mut dyn FnMut(&RecordStats),
) -> Result<RecordStats> {
    if opts.format == Format::Bag {
        return Err(Error::Invalid(
            "a ROS 2 recording is written as MCAP (--format mcap): a ROS 1 bag does not hold CDR messages"
                .into(),
        ));
    }
    let mut source = Ros2Source::new(participant, &opts.msg_path);
    let mut stats = record(&mut source, opts, stop, on_progress)?;
    stats.notes = source.take_notes();
    Ok(stats)
}

/// Records what `source` receives until `stop`.
fn record(
    source: &mut dyn Source,
    opts: &RecordOptions,
    stop: &AtomicBool,
    on_progress: &mut dyn FnMut(&RecordStats),
) -> Result<RecordStats> {
    let split =
        !opts.format.is_rosbag2() && (opts.split_size.is_some() || opts.split_duration.is_some());
    let mut part = 0u32;
    let ext = opts.format.extension();
    let profile = source.profile();
    let mut out = Out::create(
        &split_path(&opts.out, split.then_some(part), ext),
        opts,
        profile,
    )?;
    let mut stats = RecordStats::default();
    let mut last_flush = Instant::now();
    let mut last_discover: Option<Instant> = None;
    // Discovery of topics named (ROS 2) or matched is asked again every half second.
    let discovers = opts.select.discovers() || profile == "ros2";
    loop {
        if stop.load(Ordering::Relaxed) || source.shutdown_requested() {
            break;
        }
        if discovers && last_discover.is_none_or(|t| t.elapsed() >= DISCOVER_EVERY) {
            last_discover = Some(Instant::now());
            source.discover(&opts.select)?;
        }
        source.receive(Duration::from_millis(50), &mut |key, t, data| {
            out.write(key, t, data, &mut stats)
        })?;
        if last_flush.elapsed() >= FLUSH_EVERY {
            out.flush()?;
            last_flush = Instant::now();
            on_progress(&stats);
        }
        // rosbag2 splits into files of its one directory itself.
        let full = !opts.format.is_rosbag2() && opts.split_size.is_some_and(|s| out.bytes >= s)
            || opts
                .split_duration
                .is_some_and(|d| out.started.elapsed() >= d);
        if full {
            part += 1;
            let next = Out::create(&split_path(&opts.out, Some(part), ext), opts, profile)?;
            let done = std::mem::replace(&mut out, next);
            stats.files.push(done.finish()?);
        }
    }
    // What reaches this side when asked to stop is written too: received until nothing more
    // has come for STOP_QUIET (at most STOP_MAX; a busy machine's sockets and DDS threads
    // may still hold what a player sent just before), then whatever is left.
    let asked = Instant::now();
    let mut last = Instant::now();
    while asked.elapsed() < STOP_MAX && last.elapsed() < STOP_QUIET {
        let before = stats.messages;
        source.receive(Duration::from_millis(20), &mut |key, t, data| {
            out.write(key, t, data, &mut stats)
        })?;
        if stats.messages > before {
            last = Instant::now();
        }
    }
    source.rest(&mut |key, t, data| out.write(key, t, data, &mut stats))?;
    stats.files.push(out.finish()?);
    on_progress(&stats);
    Ok(stats)
}
