//! A file read record by record (no summary, an incomplete one, unchunked, cut off), and a message found in a chunk's records.

use std::path::Path;
use std::sync::Arc;

use super::{
    compression_of, op_name, opcode, parse_channel, parse_chunk_head, parse_schema, Catalog,
    Fields, MAGIC, MESSAGE_HEADER, STRETCH,
};
use crate::error::{Error, Location, RecordKind, Result};
use crate::storage::compression::MAX_CHUNK_SIZE;
use crate::storage::{
    read_at, Bytes, Chunk, ChunkKind, IndexEntry, Message, MessageTables, Opened, Source, Summary,
    Version,
};

/// Reads a file record by record from the start: chunks are decompressed and their records
/// scanned, unchunked messages grouped into stretches. Stops with a warning at the first
/// record that cannot be read.
pub(super) fn scan(
    src: &Source,
    path: &Path,
    file_size: u64,
    warnings: Vec<String>,
) -> Result<Opened> {
    let head = read_at(src, 0, 8)?;
    if head.as_slice() != MAGIC {
        return Err(Error::Malformed {
            kind: RecordKind::Magic,
            at: Location::File(0),
            reason: format!(
                "the file starts with {:?}, not the MCAP magic",
                String::from_utf8_lossy(&head).escape_debug().to_string()
            ),
        });
    }
    let mut st = Scan {
        warnings,
        ..Default::default()
    };
    let mut pos = 8u64;
    let mut ended = false;
    let mut reader = crate::storage::ReadWindow::new(src, file_size);
    while pos < file_size {
        let at = Location::File(pos);
        let hdr = match reader.get(pos, 9) {
            Ok(h) if h.len() == 9 => h.to_vec(),
            _ => {
                st.warnings.push(format!(
                    "the file ends inside a record header at byte {pos}: cut off; the records before it are kept"
                ));
                break;
            }
        };
        let op = hdr[0];
        let len = u64::from_le_bytes(hdr[1..9].try_into().unwrap_or([0; 8]));
        let avail = file_size - pos - 9;
        if len > avail {
            // The magic at the very end is 8 bytes, not a record.
            if file_size - pos == 8 && reader.get(pos, 8).is_ok_and(|b| b == MAGIC) {
                break;
            }
            st.warnings.push(format!(
                "{} record at byte {pos} declares {len} bytes but only {avail} remain: the file was cut off; the records before it are kept",
                op_name(op)
            ));
            break;
        }
        let end = pos + 9 + len;
        if op != opcode::MESSAGE {
            st.stretch = None;
        }
        match op {
            opcode::MESSAGE => {
                let c = reader.get(pos + 9, (len as usize).min(MESSAGE_HEADER))?;
                st.message(c, pos, end);
            }
            opcode::CHUNK => st.chunk(src, pos, len),
            opcode::SCHEMA | opcode::CHANNEL | opcode::METADATA | opcode::HEADER => {
                match reader.get(pos + 9, len as usize) {
                    Ok(c) => st.record(op, c, at),
                    Err(e) => st.warnings.push(format!("{e}; skipped")),
                }
            }
            opcode::ATTACHMENT => {
                let c = reader.get(pos + 9, (len as usize).min(1 << 16))?;
                st.attachment(c, at);
            }
            opcode::DATA_END | opcode::FOOTER => {
                ended = true;
                break;
            }
            _ => {}
        }
        pos = end;
    }
    let tail_ok =
        file_size >= 16 && read_at(src, file_size - 8, 8).is_ok_and(|t| t.as_slice() == MAGIC);
    if ended && !tail_ok {
        st.warnings.push(format!(
            "the file does not end with a footer and the MCAP magic (it stops at byte {file_size}, after the data section): its summary was cut off; the messages were read by a linear scan"
        ));
    }
    if !ended && !st.warnings.iter().any(|w| w.contains("cut off")) {
        st.warnings.push(format!(
            "the data section has no end record (the file stops at byte {file_size}): the recording was not closed"
        ));
    }
    Ok(st.finish(path, file_size))
}

/// What a scan has found so far.
#[derive(Default)]
struct Scan {
    cat: Catalog,
    chunks: Vec<Chunk>,
    per_channel: Vec<Vec<IndexEntry>>,
    attachments: Vec<(String, String, u64)>,
    metadata: Vec<(String, Vec<(String, String)>)>,
    /// The open stretch of unchunked records: (start offset, chunk index).
    stretch: Option<(u64, usize)>,
    warnings: Vec<String>,
}

impl Scan {
    /// An unchunked message record at `pos` (ending at `end`; `c` its first bytes): added to
    /// the open stretch of unchunked records, or to a new one.
    fn message(&mut self, c: &[u8], pos: u64, end: u64) {
        let mut f = Fields::new(c, opcode::MESSAGE, Location::File(pos));
        let parsed = (|| -> Result<(u16, u64)> {
            let ch = f.u16("channel_id")?;
            let _seq = f.u32("sequence")?;
            Ok((ch, f.u64("log_time")?))
        })();
        let (ch, t) = match parsed {
            Ok(x) => x,
            Err(e) => {
                self.warnings.push(format!("{e}; skipped"));
                return;
            }
        };
        let Some(&ci) = self.cat.by_id.get(&ch) else {
            self.warnings.push(format!(
                "message at byte {pos} names channel {ch}, which no Channel record before it defines; skipped"
            ));
            return;
        };
        let chunks = &mut self.chunks;
        let (start, k) = match self.stretch {
            Some((s, k)) if end - s <= STRETCH || chunks[k].counts.is_empty() => (s, k),
            _ => {
                chunks.push(Chunk {
                    pos,
                    start_ns: u64::MAX,
                    end_ns: 0,
                    data_pos: pos,
                    kind: ChunkKind::Mcap,
                    ..Default::default()
                });
                self.stretch = Some((pos, chunks.len() - 1));
                (pos, chunks.len() - 1)
            }
        };
        let chunk = &mut chunks[k];
        chunk.data_len = end - start;
        chunk.size = chunk.data_len as u32;
        add_entry(chunk, &mut self.per_channel, ci, t, k, (pos - start) as u32);
    }

    /// A chunk record at `pos`: decompressed, its records scanned; skipped with a warning
    /// when it cannot be read.
    fn chunk(&mut self, src: &Source, pos: u64, len: u64) {
        match scan_chunk(src, pos, len, &mut self.cat, self.chunks.len()) {
            Ok((chunk, entries)) => {
                if chunk.message_count() > 0 || !entries.is_empty() {
                    let k = self.chunks.len();
                    self.chunks.push(chunk);
                    for (ci, e) in entries {
                        if self.per_channel.len() <= ci {
                            self.per_channel.resize(ci + 1, Vec::new());
                        }
                        self.per_channel[ci].push(IndexEntry {
                            chunk: k as u32,
                            ..e
                        });
                    }
                }
            }
            Err(e) => self
                .warnings
                .push(format!("chunk at byte {pos} skipped: {e}")),
        }
    }

    /// A schema, channel, metadata or header record (`c` its content).
    fn record(&mut self, op: u8, c: &[u8], at: Location) {
        let r = match op {
            opcode::SCHEMA => parse_schema(c, at).map(|(id, s)| self.cat.schema(id, s)),
            opcode::CHANNEL => parse_channel(c, at).map(|ch| {
                self.cat.channel(ch);
            }),
            opcode::METADATA => {
                let mut f = Fields::new(c, op, at);
                f.string("name")
                    .and_then(|n| Ok((n, f.map_str("metadata")?)))
                    .map(|m| self.metadata.push(m))
            }
            _ => Ok(()),
        };
        if let Err(e) = r {
            self.warnings.push(format!("{e}; skipped"));
        }
    }

    /// An attachment record (`c` its first bytes): its name, media type and size.
    fn attachment(&mut self, c: &[u8], at: Location) {
        let mut f = Fields::new(c, opcode::ATTACHMENT, at);
        let r = (|| -> Result<(String, String, u64)> {
            let _log = f.u64("log_time")?;
            let _create = f.u64("create_time")?;
            let name = f.string("name")?;
            let media = f.string("media_type")?;
            let size = f.u64("data")?;
            Ok((name, media, size))
        })();
        match r {
            Ok(a) => self.attachments.push(a),
            Err(e) => self.warnings.push(format!("{e}; skipped")),
        }
    }

    /// The recording the scan found, its summary and tables.
    fn finish(self, path: &Path, file_size: u64) -> Opened {
        let Scan {
            mut cat,
            chunks,
            mut per_channel,
            attachments,
            metadata,
            mut warnings,
            ..
        } = self;
        let mut connections = cat.connections();
        warnings.extend(std::mem::take(&mut cat.warnings));
        per_channel.resize(connections.len(), Vec::new());
        for (c, t) in connections.iter_mut().zip(&per_channel) {
            c.message_count = t.len() as u64;
        }
        let mut summary = Summary {
            path: path.to_path_buf(),
            file_size,
            version: Version::Mcap,
            indexed: false,
            connections,
            chunks,
            warnings,
            attachments,
            metadata,
            ..Default::default()
        };
        summary.finish();
        Opened {
            profile: String::new(),
            deferred: None,
            keep: None,
            summary,
            index_pos: 0,
            tables: Some(MessageTables {
                per_connection: per_channel,
                warnings: Vec::new(),
            }),
        }
    }
}

pub(super) fn add_entry(
    chunk: &mut Chunk,
    per_channel: &mut Vec<Vec<IndexEntry>>,
    ci: usize,
    t: u64,
    k: usize,
    offset: u32,
) {
    chunk.start_ns = chunk.start_ns.min(t);
    chunk.end_ns = chunk.end_ns.max(t);
    match chunk.counts.iter_mut().find(|(c, _)| *c as usize == ci) {
        Some(e) => e.1 += 1,
        None => chunk.counts.push((ci as u32, 1)),
    }
    if per_channel.len() <= ci {
        per_channel.resize(ci + 1, Vec::new());
    }
    per_channel[ci].push(IndexEntry {
        time_ns: t,
        chunk: k as u32,
        offset,
    });
}

/// Reads, decompresses and scans one chunk record met by the linear scan: its schemas and
/// channels go to the catalog, its messages become entries (chunk index filled by the caller).
pub(super) fn scan_chunk(
    src: &Source,
    pos: u64,
    len: u64,
    cat: &mut Catalog,
    k: usize,
) -> Result<(Chunk, Vec<(usize, IndexEntry)>)> {
    let at = Location::File(pos);
    let head = read_at(src, pos + 9, (len as usize).min(4096))?;
    let h = parse_chunk_head(&head, at)?;
    // Checked: a forged records length must not wrap around the comparison.
    let end = h
        .records_at
        .checked_sub(9)
        .and_then(|a| a.checked_add(h.records_len));
    if end.is_none_or(|e| e > len) {
        return Err(Error::Malformed {
            kind: RecordKind::Mcap("Chunk"),
            at,
            reason: format!(
                "its records ({} bytes) run past the end of the record ({len} bytes)",
                h.records_len
            ),
        });
    }
    if h.size > MAX_CHUNK_SIZE {
        return Err(Error::TooLarge {
            kind: RecordKind::Mcap("Chunk"),
            at,
            len: h.size,
            limit: MAX_CHUNK_SIZE,
        });
    }
    let compression = compression_of(&h.compression, at)?;
    let mut chunk = Chunk {
        pos,
        start_ns: u64::MAX,
        end_ns: 0,
        compression,
        data_pos: pos + h.records_at,
        data_len: h.records_len,
        size: h.size as u32,
        kind: ChunkKind::Mcap,
        ..Default::default()
    };
    let raw = read_at(src, chunk.data_pos, chunk.data_len as usize)?;
    let data = crate::storage::compression::decompress(compression, &raw, chunk.size, pos)?;
    let mut entries = Vec::new();
    let mut per: Vec<Vec<IndexEntry>> = Vec::new();
    walk_records(&data, pos, |off, op, c| {
        let at = Location::InChunk {
            chunk_pos: pos,
            offset: off as u64,
        };
        match op {
            opcode::SCHEMA => {
                let (id, s) = parse_schema(c, at)?;
                cat.schema(id, s);
            }
            opcode::CHANNEL => {
                cat.channel(parse_channel(c, at)?);
            }
            opcode::MESSAGE => {
                let mut f = Fields::new(c, op, at);
                let ch = f.u16("channel_id")?;
                let _seq = f.u32("sequence")?;
                let t = f.u64("log_time")?;
                let Some(&ci) = cat.by_id.get(&ch) else {
                    return Err(Error::Malformed {
                        kind: RecordKind::Mcap("Message"),
                        at,
                        reason: format!(
                            "names channel {ch}, which no Channel record before it defines"
                        ),
                    });
                };
                add_entry(&mut chunk, &mut per, ci, t, k, off as u32);
                entries.push((
                    ci,
                    IndexEntry {
                        time_ns: t,
                        chunk: k as u32,
                        offset: off as u32,
                    },
                ));
            }
            _ => {}
        }
        Ok(())
    })?;
    if chunk.message_count() == 0 {
        chunk.start_ns = h.start;
        chunk.end_ns = h.end;
    }
    Ok((chunk, entries))
}

/// Calls `f(channel id, entry, payload)` for each Message record of a chunk's uncompressed
/// records (or a stretch of an unchunked file), in order; the entry's chunk is 0 and its offset
/// the record's. What `check` compares with the tables.
pub(crate) fn scan_chunk_messages(
    data: &[u8],
    chunk_pos: u64,
    mut f: impl FnMut(u32, IndexEntry, &[u8]),
) -> Result<()> {
    walk_records(data, chunk_pos, |off, op, c| {
        if op != opcode::MESSAGE {
            return Ok(());
        }
        let (Some(ch), Some(t), Some(payload)) =
            (c.get(0..2), c.get(6..14), c.get(MESSAGE_HEADER..))
        else {
            return Err(Error::Truncated {
                kind: RecordKind::Mcap("Message"),
                at: Location::InChunk {
                    chunk_pos,
                    offset: off as u64,
                },
                needed: MESSAGE_HEADER as u64,
                available: c.len() as u64,
            });
        };
        let time_ns = u64::from_le_bytes(t.try_into().unwrap_or([0; 8]));
        let entry = IndexEntry {
            time_ns,
            chunk: 0,
            offset: off as u32,
        };
        f(
            u32::from(u16::from_le_bytes([ch[0], ch[1]])),
            entry,
            payload,
        );
        Ok(())
    })
}

/// A Message record of a chunk's uncompressed records, found by walking them: its fields and
/// where its payload lies, so that it is sliced out later without its header read again.
#[derive(Debug, Clone, Copy)]
pub(crate) struct MessageAt {
    /// The channel id the record carries.
    pub channel: u16,
    pub sequence: u32,
    pub log_ns: u64,
    pub publish_ns: u64,
    /// Where the record starts in the records (its opcode).
    pub offset: u32,
    /// Where its payload starts and ends in the records.
    pub start: u32,
    pub end: u32,
}

/// Calls `f` with each Message record of a chunk's uncompressed records, in order: what the
/// stream of a whole recording reads (each header parsed once). Records past 4 GiB of the
/// chunk (beyond what an offset of the tables holds) are an error.
pub(crate) fn scan_chunk_message_records(
    data: &[u8],
    chunk_pos: u64,
    mut f: impl FnMut(MessageAt),
) -> Result<()> {
    walk_records(data, chunk_pos, |off, op, c| {
        if op != opcode::MESSAGE {
            return Ok(());
        }
        let at = Location::InChunk {
            chunk_pos,
            offset: off as u64,
        };
        let (Some(head), Ok(offset), Ok(end)) = (
            c.get(..MESSAGE_HEADER),
            u32::try_from(off),
            u32::try_from(off + 9 + c.len()),
        ) else {
            return Err(if c.len() < MESSAGE_HEADER {
                Error::Truncated {
                    kind: RecordKind::Mcap("Message"),
                    at,
                    needed: MESSAGE_HEADER as u64,
                    available: c.len() as u64,
                }
            } else {
                Error::Malformed {
                    kind: RecordKind::Mcap("Message"),
                    at,
                    reason: "lies past the 4 GiB a chunk offset can address".into(),
                }
            });
        };
        f(message_at(head, offset, end));
        Ok(())
    })
}

/// The Message record whose fixed fields are `head` ([`MESSAGE_HEADER`] bytes), starting at
/// `offset` and ending at `end`.
#[inline]
fn message_at(head: &[u8], offset: u32, end: u32) -> MessageAt {
    use crate::storage::{le_u32, le_u64};
    MessageAt {
        channel: u16::from_le_bytes([head[0], head[1]]),
        sequence: le_u32(head, 2).unwrap_or(0),
        log_ns: le_u64(head, 6).unwrap_or(0),
        publish_ns: le_u64(head, 14).unwrap_or(0),
        offset,
        start: offset + (9 + MESSAGE_HEADER) as u32,
        end,
    }
}

/// The Message record at `off` of (a part of) a chunk's records `data`: `None` where no
/// Message record's opcode, length and fixed fields are there. Its payload may run past the
/// end of `data` (a piece of a chunk), which the caller checks against `end`. Positions are
/// from the start of `data` (a u32 holds them: `data` is at most a chunk).
#[inline]
pub(crate) fn message_record_at(data: &[u8], off: usize) -> Option<MessageAt> {
    let len = crate::storage::le_u64(data, off + 1)?;
    let head = data.get(off + 9..off + 9 + MESSAGE_HEADER)?;
    if data.get(off) != Some(&opcode::MESSAGE) || len < MESSAGE_HEADER as u64 {
        return None;
    }
    let offset = u32::try_from(off).ok()?;
    let end = u32::try_from((off as u64 + 9).checked_add(len)?).ok()?;
    Some(message_at(head, offset, end))
}

/// Calls `f(offset, opcode, content)` for each record of a chunk's uncompressed records.
pub(super) fn walk_records(
    data: &[u8],
    chunk_pos: u64,
    f: impl FnMut(usize, u8, &[u8]) -> Result<()>,
) -> Result<()> {
    walk_records_at(
        data,
        |off| Location::InChunk {
            chunk_pos,
            offset: off as u64,
        },
        f,
    )
}

/// Calls `f(offset, opcode, content)` for each record of `data` (a chunk's records, or the
/// summary section), `locate` saying where an offset is for errors.
pub(super) fn walk_records_at(
    data: &[u8],
    locate: impl Fn(usize) -> Location,
    mut f: impl FnMut(usize, u8, &[u8]) -> Result<()>,
) -> Result<()> {
    let mut off = 0usize;
    while off < data.len() {
        let at = locate(off);
        if data.len() - off < 9 {
            return Err(Error::Truncated {
                kind: RecordKind::Mcap("record"),
                at,
                needed: 9,
                available: (data.len() - off) as u64,
            });
        }
        let op = data[off];
        let len = u64::from_le_bytes(data[off + 1..off + 9].try_into().unwrap_or([0; 8]));
        let avail = (data.len() - off - 9) as u64;
        if len > avail {
            return Err(Error::Truncated {
                kind: RecordKind::Mcap(op_name(op)),
                at,
                needed: len + 9,
                available: avail + 9,
            });
        }
        f(off, op, &data[off + 9..off + 9 + len as usize])?;
        off += 9 + len as usize;
    }
    Ok(())
}

/// Slices the message record at `entry.offset` out of a chunk's uncompressed records (or a
/// stretch of an unchunked file).
pub(crate) fn message_in_records(
    buf: Arc<Vec<u8>>,
    chunk_pos: u64,
    conn: usize,
    entry: IndexEntry,
) -> Result<Message> {
    let off = entry.offset as usize;
    let at = Location::InChunk {
        chunk_pos,
        offset: off as u64,
    };
    let head = buf
        .get(off..off + 9 + MESSAGE_HEADER)
        .ok_or(Error::Truncated {
            kind: RecordKind::Mcap("Message"),
            at,
            needed: (9 + MESSAGE_HEADER) as u64,
            available: buf.len().saturating_sub(off) as u64,
        })?;
    if head[0] != opcode::MESSAGE {
        return Err(Error::Malformed {
            kind: RecordKind::Mcap("Message"),
            at,
            reason: format!(
                "the index points here, but this is a {} record",
                op_name(head[0])
            ),
        });
    }
    let len = u64::from_le_bytes(head[1..9].try_into().unwrap_or([0; 8]));
    let end = (off as u64 + 9).saturating_add(len);
    if end > buf.len() as u64 || len < MESSAGE_HEADER as u64 {
        return Err(Error::Truncated {
            kind: RecordKind::Mcap("Message"),
            at,
            needed: len + 9,
            available: buf.len().saturating_sub(off) as u64,
        });
    }
    let mut f = Fields::new(&head[9..], opcode::MESSAGE, at);
    let _ch = f.u16("channel_id")?;
    let sequence = f.u32("sequence")?;
    let log = f.u64("log_time")?;
    let publish_ns = f.u64("publish_time")?;
    let start = off + 9 + MESSAGE_HEADER;
    Ok(Message {
        conn,
        time_ns: log,
        data: Bytes::slice(buf, start, end as usize),
        entry,
        publish_ns,
        sequence,
    })
}
