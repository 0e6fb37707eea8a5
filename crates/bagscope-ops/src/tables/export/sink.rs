//! The output of an export: one writer for every format (ROS 1 bag, MCAP, rosbag2), opened
//! with options made from the inputs, and the commands the converting stage sends it.

use std::path::{Path, PathBuf};

use bagscope_reader::bag::{Bag, Connection};
use bagscope_reader::definition::sources::definition_of;
use bagscope_reader::error::{ConvertError, Error, Result};
use bagscope_reader::storage::compression::Compression;
use bagscope_reader::storage::mcap::writer::{McapOptions, McapWriter};
use bagscope_reader::storage::ros1::writer::{BagWriter, ConnectionSpec};
use bagscope_reader::storage::rosbag2::writer::{
    Rosbag2Options, Rosbag2Storage, Rosbag2Writer, TopicSpec,
};

use super::{ExportOptions, ExportProgress, OutputFormat};

/// What the converting stage of an export found: the messages and bytes written, the
/// connections written, and per (input, connection) the messages not converted (count, first
/// time, first error).
pub(super) type ConvertOutcome = (
    ExportProgress,
    usize,
    std::collections::BTreeMap<(usize, usize), (u64, u64, ConvertError)>,
);

/// What the export loop hands its writer thread.
pub(super) enum Cmd {
    /// A connection, whose id is the number of connections added before it.
    Add(Box<Connection>),
    /// A message on an added connection, with its sequence number.
    Write(u32, bagscope_reader::Message, u32),
}

/// Where messages go.
pub(super) enum Sink {
    Bag(BagWriter),
    Mcap(McapWriter, std::collections::HashMap<(String, String), u16>),
    Rosbag2(Rosbag2Writer),
}

impl Sink {
    pub(super) fn add(&mut self, c: &Connection, msg_path: &[std::path::PathBuf]) -> Result<u32> {
        match self {
            Sink::Bag(w) => Ok(w.add_connection(ConnectionSpec {
                topic: c.topic.clone(),
                datatype: c.datatype.clone(),
                md5sum: c.md5sum.clone(),
                message_definition: c.message_definition.clone(),
                callerid: c.callerid.clone(),
                latching: c.latching,
            })),
            Sink::Mcap(w, schemas) => {
                let (text, lang) = definition_of(c, msg_path);
                // A binary schema (protobuf) goes out byte for byte, not as its text reading.
                let data = if c.schema_data.is_empty() {
                    text.as_bytes()
                } else {
                    &c.schema_data
                };
                let schema = if c.datatype.is_empty() {
                    0
                } else {
                    let key = (c.datatype.clone(), text.clone());
                    match schemas.get(&key) {
                        Some(&s) => s,
                        None => {
                            let s = w.add_schema(&c.datatype, &lang, data)?;
                            schemas.insert(key, s);
                            s
                        }
                    }
                };
                let mut meta = Vec::new();
                if c.encoding == "ros1" {
                    meta.push(("md5sum".to_string(), c.md5sum.clone()));
                    if let Some(id) = &c.callerid {
                        meta.push(("callerid".to_string(), id.clone()));
                    }
                    if c.latching {
                        meta.push(("latching".to_string(), "1".to_string()));
                    }
                }
                if !c.qos.is_empty() {
                    meta.push(("offered_qos_profiles".to_string(), c.qos.clone()));
                }
                Ok(u32::from(w.add_channel(
                    schema,
                    &c.topic,
                    &c.encoding,
                    &meta,
                )?))
            }
            Sink::Rosbag2(w) => {
                let (text, lang) = definition_of(c, msg_path);
                Ok(w.add_topic(TopicSpec {
                    name: c.topic.clone(),
                    datatype: if c.datatype.contains("/msg/") || !c.datatype.contains('/') {
                        c.datatype.clone()
                    } else {
                        c.datatype.replacen('/', "/msg/", 1)
                    },
                    serialization_format: c.encoding.clone(),
                    // Version 9's QoS list form is not what metadata version 8 holds.
                    qos: if c.qos.contains("reliability: reliable")
                        || c.qos.contains("reliability: best_effort")
                    {
                        String::new()
                    } else {
                        c.qos.clone()
                    },
                    definition: if lang == "ros2msg" {
                        text
                    } else {
                        String::new()
                    },
                    // Recordings do not carry the hash through bagscope's reader.
                    type_hash: String::new(),
                }) as u32)
            }
        }
    }

    pub(super) fn write(&mut self, id: u32, m: &bagscope_reader::Message, seq: u32) -> Result<()> {
        match self {
            Sink::Bag(w) => w.write(id, m.time_ns, &m.data),
            Sink::Mcap(w, _) => w.write(id as u16, seq, m.time_ns, m.publish_ns, &m.data),
            Sink::Rosbag2(w) => w.write(id as usize, m.time_ns, &m.data),
        }
    }

    /// Writes metadata records (MCAP); `false` where the format holds none.
    pub(super) fn add_metadata(
        &mut self,
        records: &[(String, Vec<(String, String)>)],
    ) -> Result<bool> {
        match self {
            Sink::Mcap(w, _) => {
                for (name, pairs) in records {
                    w.add_metadata(name, pairs)?;
                }
                Ok(true)
            }
            Sink::Bag(_) | Sink::Rosbag2(_) => Ok(false),
        }
    }

    pub(super) fn finish(self) -> Result<PathBuf> {
        match self {
            Sink::Bag(w) => w.finish(),
            Sink::Mcap(w, _) => w.finish(),
            Sink::Rosbag2(w) => w.finish(),
        }
    }
}

pub(super) fn size_of(p: &Path) -> u64 {
    if p.is_dir() {
        std::fs::read_dir(p)
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .filter_map(|e| e.metadata().ok())
                    .map(|m| m.len())
                    .sum()
            })
            .unwrap_or(0)
    } else {
        std::fs::metadata(p).map(|m| m.len()).unwrap_or(0)
    }
}

/// Messages an unsplit rosbag2 SQLite output needs for its large pages to pay.
pub(super) const LARGE_SQLITE_OUTPUT: u64 = 1_000_000;

/// SQLite's largest pages (64 KiB) for an output of `total` messages in one file or in files of
/// 256 MiB or more (half the insert time); rosbag2's 4 KiB otherwise (0), where the 64 KiB per
/// table of every file would outweigh what they save.
pub(super) fn large_sqlite_pages(total: u64, opts: &ExportOptions) -> u32 {
    let big_files = opts.split_ns.is_none() && opts.split_bytes.is_none_or(|b| b >= 256 << 20);
    if total >= LARGE_SQLITE_OUTPUT && big_files {
        65536
    } else {
        0
    }
}

/// The writer of the output, its options made from the inputs (the MCAP profile, rosbag2's
/// distro and page size).
pub(super) fn open_sink(
    bags: &[Bag],
    out: &Path,
    opts: &ExportOptions,
    format: OutputFormat,
    total: u64,
) -> Result<Sink> {
    let distro = bags
        .first()
        .and_then(|b| {
            b.summary()
                .storage_facts
                .iter()
                .find(|(k, _)| k == "ros_distro")
                .map(|(_, v)| v.clone())
        })
        .unwrap_or_default();
    Ok(match format {
        // Written by `parquet::export_parquet`, never through a sink.
        OutputFormat::Parquet => {
            return Err(Error::Invalid("Parquet is not a recording sink".into()))
        }
        OutputFormat::Ros1Bag => Sink::Bag(BagWriter::create(out, opts.write)?),
        OutputFormat::Mcap => {
            let all_cdr = bags.iter().all(|b| {
                b.summary().connections.iter().all(|c| {
                    (c.encoding == "cdr" && !opts.to_ros1) || (opts.to_ros2 && c.encoding == "ros1")
                })
            });
            let all_ros1 = !opts.to_ros2
                && bags.iter().all(|b| {
                    b.summary()
                        .connections
                        .iter()
                        .all(|c| c.encoding == "ros1" || (opts.to_ros1 && c.encoding == "cdr"))
                });
            Sink::Mcap(
                McapWriter::create(
                    out,
                    McapOptions {
                        compression: match opts.write.compression {
                            Compression::Bz2 => Compression::Zstd,
                            c => c,
                        },
                        chunk_size: opts.write.chunk_size,
                        profile: if all_cdr {
                            "ros2".into()
                        } else if all_ros1 {
                            "ros1".into()
                        } else {
                            String::new()
                        },
                        ..McapOptions::default()
                    },
                )?,
                Default::default(),
            )
        }
        OutputFormat::Rosbag2Sqlite3 | OutputFormat::Rosbag2Mcap => {
            Sink::Rosbag2(Rosbag2Writer::create(
                out,
                Rosbag2Options {
                    storage: if format == OutputFormat::Rosbag2Mcap {
                        Rosbag2Storage::Mcap
                    } else {
                        Rosbag2Storage::Sqlite3
                    },
                    compression: opts.rosbag2_compression,
                    split_bytes: opts.split_bytes,
                    split_ns: opts.split_ns,
                    ros_distro: distro,
                    sqlite_page_size: large_sqlite_pages(total, opts),
                },
            )?)
        }
    })
}
