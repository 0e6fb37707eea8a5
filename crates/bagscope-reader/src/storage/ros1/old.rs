//! ROS 1 bag layouts before 1.2 (`../shared/format-notes/old-formats-0-1.1.md`): version 0
//! (one topic, no magic), `#ROSLOG V1.0` (and `##MULTILOG##`), and `#ROSLOG V1.1` /
//! `#ROSRECORD V1.1`. None has an index or stores definitions: the file is read once, record
//! by record, into stretches of whole records that play the part of chunks; definitions come
//! from the search path or those bagscope ships (ROS 1 flavour).
//!
//! Every record ends in the same 12-byte block, `u32 sec | u32 nsec | u32 length` (little
//! endian), then `length` bytes of ROS 1 serialized message. An entry's offset points at the
//! block, so a message is read from its stretch with no text to parse again.

use std::collections::HashMap;
use std::path::Path;

use crate::error::{Error, Location, RecordKind, Result};
use crate::storage::{
    read_at, Bytes, Chunk, ChunkKind, Connection, IndexEntry, Message, MessageTables, Opened,
    Source, Summary, Version,
};

/// Stretches grow to about this many bytes (a record is never split).
const STRETCH: u64 = 4 << 20;
/// Longest text line accepted (topic, md5sum, type).
const MAX_LINE: usize = 4096;
/// Largest message accepted.
const MAX_MESSAGE: u64 = 1 << 30;

/// Which layout, from the first line.
pub(crate) fn classify(head: &[u8]) -> Option<Version> {
    let line_end = head.iter().position(|&b| b == b'\n')?;
    let line = &head[..line_end];
    if line.starts_with(b"#ROS") {
        let text = String::from_utf8_lossy(line);
        if let Some((_, v)) = text.rsplit_once(" V") {
            return match v.trim() {
                "1.1" => Some(Version::V1_1),
                "1.0" => Some(Version::V1_0),
                _ => None,
            };
        }
        return Some(Version::V1_0);
    }
    if line.starts_with(b"#") {
        // `##MULTILOG##` and any other `#` line: read as 1.0, as the C++ Player did.
        return Some(Version::V1_0);
    }
    // Version 0: a topic line, then two lines that are `*`, an md5 or a type name.
    let mut lines = head.split(|&b| b == b'\n');
    let topic = lines.next()?;
    let l2 = lines.next()?;
    let l3 = lines.next()?;
    let plausible = |l: &[u8]| {
        !l.is_empty()
            && l.len() < 256
            && l.iter()
                .all(|&b| b.is_ascii_alphanumeric() || b"*/_".contains(&b))
    };
    let topic_ok =
        !topic.is_empty() && topic.len() < 256 && topic.iter().all(|&b| b.is_ascii_graphic());
    (topic_ok && plausible(l2) && plausible(l3) && (l2 == b"*" || l3 == b"*" || l2.len() == 32))
        .then_some(Version::V0)
}

/// Reads the file through a window, so small records cost no system call each.
struct Reader<'a> {
    w: crate::storage::ReadWindow<'a>,
    size: u64,
}

impl Reader<'_> {
    fn get(&mut self, pos: u64, len: usize) -> Result<&[u8]> {
        self.w.get(pos, len)
    }

    /// The LF-terminated line at `pos`, and the position after it.
    fn line(&mut self, pos: u64) -> Result<(String, u64)> {
        let b = self.get(pos, MAX_LINE)?;
        match b.iter().position(|&c| c == b'\n') {
            Some(n) => Ok((
                String::from_utf8_lossy(&b[..n]).trim_end().to_string(),
                pos + n as u64 + 1,
            )),
            None if (b.len() as u64) < MAX_LINE as u64 => Err(Error::Truncated {
                kind: RecordKind::Record,
                at: Location::File(pos),
                needed: b.len() as u64 + 1,
                available: b.len() as u64,
            }),
            None => Err(Error::Malformed {
                kind: RecordKind::Record,
                at: Location::File(pos),
                reason: format!("no end of line within {MAX_LINE} bytes: not a text line"),
            }),
        }
    }

    /// The 12-byte block at `pos`: time (ns) and data length, checked against the file.
    fn block(&mut self, pos: u64) -> Result<(u64, u64)> {
        let size = self.size;
        let b = self.get(pos, 12)?;
        if b.len() < 12 {
            return Err(Error::Truncated {
                kind: RecordKind::MessageData,
                at: Location::File(pos),
                needed: 12,
                available: b.len() as u64,
            });
        }
        let w = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        let (sec, nsec, len) = (w(0), w(4), u64::from(w(8)));
        if len > MAX_MESSAGE {
            return Err(Error::TooLarge {
                kind: RecordKind::MessageData,
                at: Location::File(pos),
                len,
                limit: MAX_MESSAGE,
            });
        }
        if pos + 12 + len > size {
            return Err(Error::Truncated {
                kind: RecordKind::MessageData,
                at: Location::File(pos),
                needed: 12 + len,
                available: size - pos,
            });
        }
        Ok((u64::from(sec) * 1_000_000_000 + u64::from(nsec), len))
    }
}

/// `*`, an md5 or a type name: which is which, by content (version 0 and 1.0 writers put the
/// type before the md5, the readers the other way round).
fn md5_and_type(a: &str, b: &str) -> (String, String) {
    let is_md5 = |s: &str| s.len() == 32 && s.bytes().all(|c| c.is_ascii_hexdigit());
    if is_md5(a) || (a == "*" && b != "*") {
        (a.to_string(), b.to_string())
    } else {
        (b.to_string(), a.to_string())
    }
}

#[derive(Default)]
struct Builder {
    conns: Vec<Connection>,
    by_key: HashMap<(String, String, String), usize>,
    chunks: Vec<Chunk>,
    per: Vec<Vec<IndexEntry>>,
}

impl Builder {
    fn conn(&mut self, topic: &str, md5: &str, datatype: &str) -> usize {
        let key = (topic.to_string(), md5.to_string(), datatype.to_string());
        if let Some(&i) = self.by_key.get(&key) {
            return i;
        }
        let datatype = datatype
            .replace("rostools/Header", "roslib/Header")
            .replace("rostools/Log", "roslib/Log")
            .replace("rostools/Time", "roslib/Time");
        self.conns.push(Connection {
            id: self.conns.len() as u32,
            topic: topic.to_string(),
            datatype: if datatype == "*" {
                String::new()
            } else {
                datatype
            },
            md5sum: md5.to_string(),
            encoding: "ros1".into(),
            schema_encoding: String::new(),
            ..Default::default()
        });
        self.per.push(Vec::new());
        self.by_key.insert(key, self.conns.len() - 1);
        self.conns.len() - 1
    }

    /// Adds the message whose record starts at `rec` and whose block is at `block`.
    fn add(&mut self, ci: usize, rec: u64, block: u64, end: u64, t: u64) {
        let new = match self.chunks.last() {
            None => true,
            Some(c) => end - c.data_pos > STRETCH && c.data_len > 0,
        };
        if new {
            self.chunks.push(Chunk {
                pos: rec,
                start_ns: u64::MAX,
                end_ns: 0,
                data_pos: rec,
                kind: ChunkKind::Ros1Old,
                ..Default::default()
            });
        }
        let k = self.chunks.len() - 1;
        let c = &mut self.chunks[k];
        c.data_len = end - c.data_pos;
        c.size = c.data_len as u32;
        c.start_ns = c.start_ns.min(t);
        c.end_ns = c.end_ns.max(t);
        match c.counts.iter_mut().find(|x| x.0 as usize == ci) {
            Some(x) => x.1 += 1,
            None => c.counts.push((ci as u32, 1)),
        }
        self.per[ci].push(IndexEntry {
            time_ns: t,
            chunk: k as u32,
            offset: (block - c.data_pos) as u32,
        });
    }
}

/// Reads an old-format file whole.
pub(crate) fn open(src: &Source, path: &Path, file_size: u64, version: Version) -> Result<Opened> {
    let mut r = Reader {
        w: crate::storage::ReadWindow::new(src, file_size),
        size: file_size,
    };
    let mut b = Builder::default();
    let mut warnings = Vec::new();
    let mut pos;
    let mut declared: HashMap<String, (String, String)> = HashMap::new();
    let mut v0_conn = None;
    match version {
        Version::V0 => {
            let (topic, p) = r.line(0)?;
            let (l2, p) = r.line(p)?;
            let (l3, p) = r.line(p)?;
            let (md5, ty) = md5_and_type(&l2, &l3);
            v0_conn = Some(b.conn(&topic, &md5, &ty));
            pos = p;
        }
        Version::V1_0 => {
            let (_, p) = r.line(0)?;
            let (q, mut p) = r.line(p)?;
            let n: usize = q.trim().parse().map_err(|_| Error::Malformed {
                kind: RecordKind::BagHeader,
                at: Location::File(p),
                reason: format!("the topic count line reads {q:?}, not a number"),
            })?;
            for _ in 0..n.min(100_000) {
                let (topic, p1) = r.line(p)?;
                let (l2, p2) = r.line(p1)?;
                let (l3, p3) = r.line(p2)?;
                declared.insert(topic, md5_and_type(&l2, &l3));
                p = p3;
            }
            pos = p;
        }
        _ => {
            let (_, p) = r.line(0)?;
            pos = p;
        }
    }
    let mut undeclared = 0u64;
    while pos < file_size {
        let rec = pos;
        let step = (|| -> Result<(usize, u64, u64, u64)> {
            let (ci, block) = match version {
                Version::V0 => (v0_conn.unwrap_or(0), rec),
                Version::V1_0 => {
                    let (topic, p) = r.line(rec)?;
                    let (md5, ty) = match declared.get(&topic) {
                        Some(d) => d.clone(),
                        None => {
                            undeclared += 1;
                            ("*".to_string(), "*".to_string())
                        }
                    };
                    (b.conn(&topic, &md5, &ty), p)
                }
                _ => {
                    let (topic, p1) = r.line(rec)?;
                    let (md5, p2) = r.line(p1)?;
                    let (ty, p3) = r.line(p2)?;
                    (b.conn(&topic, &md5, &ty), p3)
                }
            };
            let (t, len) = r.block(block)?;
            Ok((ci, block, block + 12 + len, t))
        })();
        match step {
            Ok((ci, block, end, t)) => {
                b.add(ci, rec, block, end, t);
                pos = end;
            }
            Err(e) => {
                warnings.push(format!(
                    "the file ends in an incomplete record at byte {rec} ({e}): cut off while recording; the {} messages before it are kept",
                    b.per.iter().map(Vec::len).sum::<usize>()
                ));
                break;
            }
        }
    }
    if undeclared > 0 {
        warnings.push(format!(
            "{undeclared} records name a topic the file does not declare; read with an unknown type"
        ));
    }
    if version != Version::V1_1 || !path_is_rosrecord(src) {
        warnings.push(format!(
            "format {} stores times relative to the start of recording, not absolute times",
            version.as_str()
        ));
    }
    let mut summary = Summary {
        path: path.to_path_buf(),
        file_size,
        version,
        indexed: true,
        connections: b.conns,
        chunks: b.chunks,
        warnings,
        ..Default::default()
    };
    summary.finish();
    summary.storage_facts.push((
        "definitions".into(),
        "none stored (format before 1.2)".into(),
    ));
    Ok(Opened {
        keep: None,
        summary,
        index_pos: 0,
        tables: Some(MessageTables {
            per_connection: b.per,
            warnings: Vec::new(),
        }),
        profile: String::new(),
        deferred: None,
    })
}

/// Whether the magic is `#ROSRECORD` (absolute times) rather than `#ROSLOG` (relative).
fn path_is_rosrecord(src: &Source) -> bool {
    read_at(src, 0, 10).is_ok_and(|h| h.starts_with(b"#ROSRECORD"))
}

/// The message whose 12-byte block is at `entry.offset` of a stretch.
pub(crate) fn message_in_stretch(
    buf: std::sync::Arc<Vec<u8>>,
    chunk_pos: u64,
    conn: usize,
    entry: IndexEntry,
) -> Result<Message> {
    let off = entry.offset as usize;
    let at = Location::InChunk {
        chunk_pos,
        offset: off as u64,
    };
    let b = buf.get(off..off + 12).ok_or(Error::Truncated {
        kind: RecordKind::MessageData,
        at,
        needed: 12,
        available: buf.len().saturating_sub(off) as u64,
    })?;
    let len = u32::from_le_bytes([b[8], b[9], b[10], b[11]]) as usize;
    let start = off + 12;
    if start + len > buf.len() {
        return Err(Error::Truncated {
            kind: RecordKind::MessageData,
            at,
            needed: 12 + len as u64,
            available: (buf.len() - off) as u64,
        });
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
