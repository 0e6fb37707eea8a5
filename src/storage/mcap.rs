//! The MCAP storage: standalone `.mcap` files and the storage files of rosbag2's MCAP plugin.
//!
//! An indexed file opens from its summary section alone (schemas, channels, chunk indexes,
//! statistics, attachment and metadata indexes), found through the footer; the message tables
//! come from the message index records after each chunk, without decompressing chunks. A file
//! with no summary or an incomplete one (a recording that was cut off, an unchunked file) is
//! recovered by a linear scan of its records that keeps what it can and says what it skipped.
//!
//! Channels become [`Connection`]s (the schema name is the type, its data the definition) and
//! chunks become [`Chunk`]s of kind [`ChunkKind::Mcap`], whose uncompressed records hold the
//! messages; stretches of an unchunked file play the part of chunks, so everything above reads
//! both alike.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;

use crate::error::{Error, Location, RecordKind, Result};
use crate::storage::compression::MAX_CHUNK_SIZE;
use crate::storage::ros1::record::Compression;
use crate::storage::{
    read_at, read_at_into, Bytes, Chunk, ChunkEntries, ChunkKind, Connection, IndexEntry, Message,
    MessageTables, Opened, Source, Summary, TablesProgress, Version,
};

/// The 8 bytes at the start and the end of an MCAP file.
pub const MAGIC: &[u8; 8] = b"\x89MCAP0\r\n";

/// Record opcodes.
pub mod opcode {
    /// Header record.
    pub const HEADER: u8 = 0x01;
    /// Footer record.
    pub const FOOTER: u8 = 0x02;
    /// Schema record.
    pub const SCHEMA: u8 = 0x03;
    /// Channel record.
    pub const CHANNEL: u8 = 0x04;
    /// Message record.
    pub const MESSAGE: u8 = 0x05;
    /// Chunk record.
    pub const CHUNK: u8 = 0x06;
    /// Message index record.
    pub const MESSAGE_INDEX: u8 = 0x07;
    /// Chunk index record.
    pub const CHUNK_INDEX: u8 = 0x08;
    /// Attachment record.
    pub const ATTACHMENT: u8 = 0x09;
    /// Attachment index record.
    pub const ATTACHMENT_INDEX: u8 = 0x0A;
    /// Statistics record.
    pub const STATISTICS: u8 = 0x0B;
    /// Metadata record.
    pub const METADATA: u8 = 0x0C;
    /// Metadata index record.
    pub const METADATA_INDEX: u8 = 0x0D;
    /// Summary offset record.
    pub const SUMMARY_OFFSET: u8 = 0x0E;
    /// Data end record.
    pub const DATA_END: u8 = 0x0F;
}

fn op_name(op: u8) -> &'static str {
    match op {
        opcode::HEADER => "Header",
        opcode::FOOTER => "Footer",
        opcode::SCHEMA => "Schema",
        opcode::CHANNEL => "Channel",
        opcode::MESSAGE => "Message",
        opcode::CHUNK => "Chunk",
        opcode::MESSAGE_INDEX => "MessageIndex",
        opcode::CHUNK_INDEX => "ChunkIndex",
        opcode::ATTACHMENT => "Attachment",
        opcode::ATTACHMENT_INDEX => "AttachmentIndex",
        opcode::STATISTICS => "Statistics",
        opcode::METADATA => "Metadata",
        opcode::METADATA_INDEX => "MetadataIndex",
        opcode::SUMMARY_OFFSET => "SummaryOffset",
        opcode::DATA_END => "DataEnd",
        _ => "unknown",
    }
}

/// Largest summary section read at once.
const MAX_SUMMARY: u64 = 1 << 30;
/// Largest record outside a chunk read whole (attachments are skipped, not read).
const MAX_RECORD: u64 = 1 << 30;
/// Unchunked messages are grouped into stretches of about this many bytes.
const STRETCH: u64 = 4 << 20;

/// A cursor over the fields of one record's content; every read is bounds-checked and a
/// failure names the record and its file offset.
pub(crate) struct Fields<'a> {
    b: &'a [u8],
    pos: usize,
    kind: RecordKind,
    at: Location,
}

impl<'a> Fields<'a> {
    pub(crate) fn new(b: &'a [u8], op: u8, at: Location) -> Self {
        Fields {
            b,
            pos: 0,
            kind: RecordKind::Mcap(op_name(op)),
            at,
        }
    }
    fn short(&self, what: &str, need: u64) -> Error {
        Error::Malformed {
            kind: self.kind,
            at: self.at,
            reason: format!(
                "field {what} needs {need} bytes at byte {} of the record, which has {}",
                self.pos,
                self.b.len()
            ),
        }
    }
    fn take(&mut self, n: u64, what: &str) -> Result<&'a [u8]> {
        let left = (self.b.len() - self.pos) as u64;
        if n > left {
            return Err(self.short(what, n));
        }
        let s = &self.b[self.pos..self.pos + n as usize];
        self.pos += n as usize;
        Ok(s)
    }
    fn u16(&mut self, what: &str) -> Result<u16> {
        let b = self.take(2, what)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }
    fn u32(&mut self, what: &str) -> Result<u32> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn u64(&mut self, what: &str) -> Result<u64> {
        let b = self.take(8, what)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }
    fn string(&mut self, what: &str) -> Result<String> {
        let n = self.u32(what)?;
        let b = self.take(u64::from(n), what)?;
        Ok(String::from_utf8_lossy(b).into_owned())
    }
    fn bytes32(&mut self, what: &str) -> Result<&'a [u8]> {
        let n = self.u32(what)?;
        self.take(u64::from(n), what)
    }
    fn map_str(&mut self, what: &str) -> Result<Vec<(String, String)>> {
        let b = self.bytes32(what)?;
        let mut f = Fields {
            b,
            pos: 0,
            kind: self.kind,
            at: self.at,
        };
        let mut out = Vec::new();
        while f.pos < b.len() {
            let k = f.string(what)?;
            let v = f.string(what)?;
            out.push((k, v));
        }
        Ok(out)
    }
}

/// One schema record.
#[derive(Debug, Clone)]
struct Schema {
    name: String,
    encoding: String,
    data: Vec<u8>,
}

/// One channel record.
#[derive(Debug, Clone)]
struct Channel {
    id: u16,
    schema_id: u16,
    topic: String,
    message_encoding: String,
    metadata: Vec<(String, String)>,
}

fn parse_schema(c: &[u8], at: Location) -> Result<(u16, Schema)> {
    let mut f = Fields::new(c, opcode::SCHEMA, at);
    let id = f.u16("id")?;
    let name = f.string("name")?;
    let encoding = f.string("encoding")?;
    let data = f.bytes32("data")?.to_vec();
    Ok((
        id,
        Schema {
            name,
            encoding,
            data,
        },
    ))
}

fn parse_channel(c: &[u8], at: Location) -> Result<Channel> {
    let mut f = Fields::new(c, opcode::CHANNEL, at);
    Ok(Channel {
        id: f.u16("id")?,
        schema_id: f.u16("schema_id")?,
        topic: f.string("topic")?,
        message_encoding: f.string("message_encoding")?,
        metadata: f.map_str("metadata")?,
    })
}

/// The fixed fields of a message record's content, before its data.
const MESSAGE_HEADER: usize = 2 + 4 + 8 + 8;

/// Schemas and channels as they are met, turned into connections in first-seen order.
#[derive(Default)]
struct Catalog {
    schemas: HashMap<u16, Schema>,
    channels: Vec<Channel>,
    by_id: HashMap<u16, usize>,
    warnings: Vec<String>,
}

impl Catalog {
    fn schema(&mut self, id: u16, s: Schema) {
        if let Some(old) = self.schemas.get(&id) {
            if old.name != s.name || old.data != s.data || old.encoding != s.encoding {
                self.warnings.push(format!(
                    "schema {id} is defined twice, differently ({} and {}); the first is kept",
                    old.name, s.name
                ));
            }
            return;
        }
        self.schemas.insert(id, s);
    }
    fn channel(&mut self, c: Channel) -> usize {
        if let Some(&i) = self.by_id.get(&c.id) {
            let old = &self.channels[i];
            if old.topic != c.topic || old.schema_id != c.schema_id {
                self.warnings.push(format!(
                    "channel {} is defined twice, differently ({} and {}); the first is kept",
                    c.id, old.topic, c.topic
                ));
            }
            return i;
        }
        self.by_id.insert(c.id, self.channels.len());
        self.channels.push(c);
        self.channels.len() - 1
    }
    fn connections(&self) -> Vec<Connection> {
        self.channels
            .iter()
            .map(|c| {
                let schema = if c.schema_id == 0 {
                    None
                } else {
                    self.schemas.get(&c.schema_id)
                };
                let (datatype, schema_encoding, def) = match schema {
                    Some(s) => (
                        s.name.clone(),
                        s.encoding.clone(),
                        String::from_utf8_lossy(&s.data).into_owned(),
                    ),
                    None => (String::new(), String::new(), String::new()),
                };
                // Binary schemas (protobuf, flatbuffer) kept byte for byte.
                let schema_data = match schema {
                    Some(s) if std::str::from_utf8(&s.data).is_err() => s.data.clone(),
                    _ => Vec::new(),
                };
                let qos = c
                    .metadata
                    .iter()
                    .find(|(k, _)| k == "offered_qos_profiles")
                    .map(|(_, v)| v.clone())
                    .unwrap_or_default();
                let meta = |k: &str| {
                    c.metadata
                        .iter()
                        .find(|(key, _)| key == k)
                        .map(|(_, v)| v.clone())
                };
                Connection {
                    id: u32::from(c.id),
                    topic: c.topic.clone(),
                    datatype,
                    // ROS 1 channels carry their connection header's fields as metadata
                    // (mcap's ros1 converters); without one, `*` matches any definition.
                    md5sum: meta("md5sum").unwrap_or_else(|| {
                        if c.message_encoding == "ros1" {
                            "*".into()
                        } else {
                            String::new()
                        }
                    }),
                    message_definition: def,
                    schema_data,
                    callerid: meta("callerid"),
                    latching: meta("latching").is_some_and(|v| v == "1" || v == "true"),
                    message_count: 0,
                    encoding: c.message_encoding.clone(),
                    schema_encoding,
                    qos,
                    file: 0,
                    distro: String::new(),
                }
            })
            .collect()
    }
}

/// Reads the record at `pos`: its opcode and content, checked against the file size.
fn read_record(src: &Source, pos: u64, file_size: u64) -> Result<(u8, Vec<u8>)> {
    let at = Location::File(pos);
    let head = read_at(src, pos, 9)?;
    if head.len() < 9 {
        return Err(Error::Truncated {
            kind: RecordKind::Mcap("record"),
            at,
            needed: 9,
            available: head.len() as u64,
        });
    }
    let op = head[0];
    let len = u64::from_le_bytes(head[1..9].try_into().unwrap_or([0; 8]));
    let avail = file_size.saturating_sub(pos + 9);
    if len > avail {
        return Err(Error::Truncated {
            kind: RecordKind::Mcap(op_name(op)),
            at,
            needed: len.saturating_add(9),
            available: avail + 9,
        });
    }
    if len > MAX_RECORD {
        return Err(Error::TooLarge {
            kind: RecordKind::Mcap(op_name(op)),
            at,
            len,
            limit: MAX_RECORD,
        });
    }
    let content = read_at(src, pos + 9, len as usize)?;
    Ok((op, content))
}

/// The chunk record's fixed fields.
struct ChunkHead {
    start: u64,
    end: u64,
    size: u64,
    compression: String,
    /// Offset of the compressed records from the start of the record.
    records_at: u64,
    records_len: u64,
}

fn parse_chunk_head(c: &[u8], at: Location) -> Result<ChunkHead> {
    let mut f = Fields::new(c, opcode::CHUNK, at);
    let start = f.u64("message_start_time")?;
    let end = f.u64("message_end_time")?;
    let size = f.u64("uncompressed_size")?;
    let _crc = f.u32("uncompressed_crc")?;
    let compression = f.string("compression")?;
    let records_len = f.u64("records")?;
    Ok(ChunkHead {
        start,
        end,
        size,
        compression,
        records_at: 9 + f.pos as u64,
        records_len,
    })
}

fn compression_of(name: &str, at: Location) -> Result<Compression> {
    match name {
        "" => Ok(Compression::None),
        "lz4" => Ok(Compression::Lz4),
        "zstd" => Ok(Compression::Zstd),
        other => Err(Error::UnknownCompression {
            chunk_pos: match at {
                Location::File(p) => p,
                Location::InChunk { chunk_pos, .. } => chunk_pos,
            },
            name: other.to_string(),
        }),
    }
}

/// Opens an MCAP file: from its summary when that is complete, else by a linear scan.
pub(crate) fn open(src: &Source, path: &Path, file_size: u64) -> Result<Opened> {
    let mut o = match open_indexed(src, path, file_size) {
        Ok(Some(o)) => o,
        Ok(None) => scan(src, path, file_size, Vec::new())?,
        Err(e) => scan(
            src,
            path,
            file_size,
            vec![format!(
                "the summary section is unusable ({e}); the file was read by a linear scan"
            )],
        )?,
    };
    // The header record: profile and writing library.
    if let Ok((opcode::HEADER, c)) = read_record(src, 8, file_size) {
        let mut f = Fields::new(&c, opcode::HEADER, Location::File(8));
        if let (Ok(profile), Ok(library)) = (f.string("profile"), f.string("library")) {
            o.profile = profile.clone();
            o.summary
                .storage_facts
                .push(("MCAP profile".into(), profile));
            o.summary.storage_facts.push(("written by".into(), library));
        }
    }
    Ok(o)
}

/// Reads the footer and summary. `Ok(None)`: there is no usable summary with chunk indexes
/// (an unchunked file, a file without summary, or one cut off), so the file must be scanned.
fn open_indexed(src: &Source, path: &Path, file_size: u64) -> Result<Option<Opened>> {
    // Footer record (1 + 8 + 20 bytes) then the magic.
    if file_size < (MAGIC.len() * 2 + 29) as u64 {
        return Ok(None);
    }
    let tail_pos = file_size - 37;
    let tail = read_at(src, tail_pos, 37)?;
    if &tail[29..] != MAGIC || tail[0] != opcode::FOOTER {
        return Ok(None);
    }
    let mut f = Fields::new(&tail[9..29], opcode::FOOTER, Location::File(tail_pos));
    let summary_start = f.u64("summary_start")?;
    let _summary_offset_start = f.u64("summary_offset_start")?;
    if summary_start == 0 {
        return Ok(None);
    }
    if summary_start < 8 || summary_start > tail_pos {
        return Err(Error::Malformed {
            kind: RecordKind::Mcap("Footer"),
            at: Location::File(tail_pos),
            reason: format!("summary_start {summary_start} is outside the file"),
        });
    }
    let len = tail_pos - summary_start;
    if len > MAX_SUMMARY {
        return Err(Error::TooLarge {
            kind: RecordKind::Mcap("summary section"),
            at: Location::File(summary_start),
            len,
            limit: MAX_SUMMARY,
        });
    }
    let buf = read_at(src, summary_start, len as usize)?;
    let buf_start = buf.as_ptr() as usize;
    let mut cat = Catalog::default();
    let mut chunk_indexes = Vec::new();
    let mut stats: Option<(u64, u32, u32, u32)> = None;
    let mut attachments = Vec::new();
    let mut metadata_idx = Vec::new();
    walk_records_at(
        &buf,
        |off| Location::File(summary_start + off as u64),
        |off, op, c| {
            let at = Location::File(summary_start + off as u64);
            match op {
                opcode::SCHEMA => {
                    let (id, s) = parse_schema(c, at)?;
                    cat.schema(id, s);
                }
                opcode::CHANNEL => {
                    cat.channel(parse_channel(c, at)?);
                }
                opcode::CHUNK_INDEX => {
                    // Where the content lies in `buf`, to parse after the walk.
                    let from = (c.as_ptr() as usize).saturating_sub(buf_start);
                    chunk_indexes.push((at, from, c.len()));
                }
                opcode::STATISTICS => {
                    let mut f = Fields::new(c, op, at);
                    let n = f.u64("message_count")?;
                    let _schemas = f.u16("schema_count")?;
                    let _channels = f.u32("channel_count")?;
                    let att = f.u32("attachment_count")?;
                    let meta = f.u32("metadata_count")?;
                    let chunks = f.u32("chunk_count")?;
                    stats = Some((n, chunks, att, meta));
                }
                opcode::ATTACHMENT_INDEX => {
                    let mut f = Fields::new(c, op, at);
                    let _off = f.u64("offset")?;
                    let _len = f.u64("length")?;
                    let _log = f.u64("log_time")?;
                    let _create = f.u64("create_time")?;
                    let size = f.u64("data_size")?;
                    let name = f.string("name")?;
                    let media = f.string("media_type")?;
                    attachments.push((name, media, size));
                }
                opcode::METADATA_INDEX => {
                    let mut f = Fields::new(c, op, at);
                    let off = f.u64("offset")?;
                    let _len = f.u64("length")?;
                    let _name = f.string("name")?;
                    metadata_idx.push(off);
                }
                _ => {}
            }
            Ok(())
        },
    )?;
    let Some((stat_messages, stat_chunks, stat_att, stat_meta)) = stats else {
        // Without statistics the summary cannot say whether messages lie outside chunks.
        return Ok(None);
    };
    if chunk_indexes.len() as u64 != u64::from(stat_chunks)
        || (chunk_indexes.is_empty() && stat_messages > 0)
        || attachments.len() as u64 != u64::from(stat_att)
        || metadata_idx.len() as u64 != u64::from(stat_meta)
    {
        // The summary does not index everything the file holds: read it all.
        return Ok(None);
    }
    // Channel id to connection index, as a table: looked up for every channel of every chunk
    // (a hash lookup each was most of the time of opening a large file).
    let mut dense = vec![u32::MAX; usize::from(u16::MAX) + 1];
    for (&id, &i) in &cat.by_id {
        dense[usize::from(id)] = i as u32;
    }
    // Channel id to connection index, as a table: looked up for every channel of every chunk
    // (a hash lookup each was most of the time of opening a large file).
    let mut dense = vec![u32::MAX; usize::from(u16::MAX) + 1];
    for (&id, &i) in &cat.by_id {
        dense[usize::from(id)] = i as u32;
    }
    for c in &cat.channels {
        if c.schema_id != 0 && !cat.schemas.contains_key(&c.schema_id) {
            return Ok(None);
        }
    }
    // The chunk indexes, parsed on several threads: a terabyte file has tens of thousands,
    // each naming every channel of its chunk.
    let chunk_indexes: Vec<(Location, &[u8])> = chunk_indexes
        .into_iter()
        .map(|(at, from, n)| (at, buf.get(from..from + n).unwrap_or_default()))
        .collect();
    // Each thread gathers its chunks' counts in one list (a vector per chunk made on a
    // thread grew that thread's heap a system call at a time); this thread hands them out.
    // (chunks, counts, where each chunk's counts end, chunk indexes whose compressed_size
    // disagrees with their chunk)
    type Part = (
        Vec<Chunk>,
        Vec<(u32, u32)>,
        Vec<usize>,
        Vec<(u64, u64, u64)>,
    );
    let parse = |part: &[(Location, &[u8])]| -> Result<Option<Part>> {
        let mut out = Vec::with_capacity(part.len());
        let mut offsets = Vec::new();
        let mut counts = Vec::new();
        let mut ends = Vec::with_capacity(part.len());
        let mut disagree = Vec::new();
        for &(at, c) in part {
            match parse_chunk_index(c, at, &dense, file_size, &mut offsets, &mut counts)? {
                Some((ch, index_said)) => {
                    if let Some(said) = index_said {
                        disagree.push((ch.pos, said, ch.data_len));
                    }
                    out.push(ch);
                    ends.push(counts.len());
                }
                None => return Ok(None),
            }
        }
        Ok(Some((out, counts, ends, disagree)))
    };
    let threads = crate::settings::default_threads().min(4);
    let parts: Vec<Result<Option<Part>>> = if threads <= 1 || chunk_indexes.len() < 4096 {
        vec![parse(&chunk_indexes)]
    } else {
        let per = chunk_indexes.len().div_ceil(threads);
        std::thread::scope(|sc| {
            let handles: Vec<_> = chunk_indexes
                .chunks(per)
                .map(|p| sc.spawn(move || parse(p)))
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or(Err(Error::ThreadPanicked("a summary-reading thread")))
                })
                .collect()
        })
    };
    let mut chunks = Vec::with_capacity(chunk_indexes.len());
    let mut disagree = Vec::new();
    for p in parts {
        match p? {
            Some((v, counts, ends, d)) => {
                disagree.extend(d);
                let mut from = 0;
                for (mut ch, end) in v.into_iter().zip(ends) {
                    ch.counts = counts[from..end].to_vec();
                    from = end;
                    chunks.push(ch);
                }
            }
            // A chunk index the summary cannot stand for: read the whole file.
            None => return Ok(None),
        }
    }
    let counted: u64 = chunks.iter().map(Chunk::message_count).sum();
    let mut warnings = std::mem::take(&mut cat.warnings);
    if let Some(&(pos, said, own)) = disagree.first() {
        warnings.push(format!(
            "{} chunk index record(s) give a compressed_size that is not their chunk's own (the first: the chunk at byte {pos} holds {own} bytes of records, its index says {said}); the chunks' own lengths are used",
            disagree.len()
        ));
    }
    if counted != stat_messages {
        warnings.push(format!(
            "the statistics record counts {stat_messages} messages, the message indexes {counted}"
        ));
    }
    chunks.sort_by_key(|c| c.pos);
    let mut metadata = Vec::new();
    for off in metadata_idx {
        match read_record(src, off, file_size).and_then(|(op, c)| {
            if op != opcode::METADATA {
                return Err(Error::Malformed {
                    kind: RecordKind::Mcap("MetadataIndex"),
                    at: Location::File(off),
                    reason: format!("points at a {} record, not Metadata", op_name(op)),
                });
            }
            let mut f = Fields::new(&c, op, Location::File(off));
            Ok((f.string("name")?, f.map_str("metadata")?))
        }) {
            Ok(m) => metadata.push(m),
            Err(e) => warnings.push(format!("metadata record unreadable: {e}")),
        }
    }
    let mut summary = Summary {
        path: path.to_path_buf(),
        file_size,
        version: Version::Mcap,
        indexed: true,
        connections: cat.connections(),
        chunks,
        warnings,
        attachments,
        metadata,
        ..Default::default()
    };
    summary.finish();
    Ok(Some(Opened {
        profile: String::new(),
        deferred: None,
        summary,
        index_pos: 0,
        tables: None,
    }))
}

/// One chunk index record of the summary as a chunk; `None` when the summary cannot stand for
/// the chunk (a channel it does not define, no message index for a chunk of messages). With
/// the chunk, the index's `compressed_size` where it is not the chunk record's own length
/// (an early Python writer's), which is then taken from the record's length instead.
fn parse_chunk_index(
    c: &[u8],
    at: Location,
    dense: &[u32],
    file_size: u64,
    offsets: &mut Vec<(u16, u64)>,
    counts: &mut Vec<(u32, u32)>,
) -> Result<Option<(Chunk, Option<u64>)>> {
    let op = opcode::CHUNK_INDEX;
    let mut f = Fields::new(c, op, at);
    let start = f.u64("message_start_time")?;
    let end = f.u64("message_end_time")?;
    let chunk_start = f.u64("chunk_start_offset")?;
    let chunk_len = f.u64("chunk_length")?;
    let offsets_bytes = f.bytes32("message_index_offsets")?;
    if offsets_bytes.len() % 10 != 0 {
        return Err(Error::Malformed {
            kind: RecordKind::Mcap("ChunkIndex"),
            at,
            reason: format!(
                "message_index_offsets has {} bytes, not a multiple of 10",
                offsets_bytes.len()
            ),
        });
    }
    let mi_len = f.u64("message_index_length")?;
    let comp = f.string("compression")?;
    let csize = f.u64("compressed_size")?;
    let f_csize = csize;
    let usize_ = f.u64("uncompressed_size")?;
    // One pass over the offsets (into the caller's buffer, reused for every chunk): every
    // channel defined, in file order as writers list them (sorted where not).
    offsets.clear();
    let mut sorted = true;
    let mut prev = 0u64;
    for e in offsets_bytes.chunks_exact(10) {
        let ch = u16::from_le_bytes([e[0], e[1]]);
        let off = u64::from_le_bytes([e[2], e[3], e[4], e[5], e[6], e[7], e[8], e[9]]);
        if dense[usize::from(ch)] == u32::MAX {
            return Ok(None);
        }
        sorted &= off >= prev;
        prev = off;
        offsets.push((ch, off));
    }
    if !sorted {
        offsets.sort_by_key(|&(_, o)| o);
    }
    if mi_len == 0 && usize_ > 0 {
        return Ok(None);
    }
    let compression = compression_of(&comp, at)?;
    if usize_ > MAX_CHUNK_SIZE {
        return Err(Error::TooLarge {
            kind: RecordKind::Mcap("Chunk"),
            at: Location::File(chunk_start),
            len: usize_,
            limit: MAX_CHUNK_SIZE,
        });
    }
    let data_pos = chunk_start + 9 + 8 + 8 + 8 + 4 + 4 + comp.len() as u64 + 8;
    // The chunk record's own records length, as its length says (chunk_length spans the
    // record from its opcode).
    let own = chunk_start
        .saturating_add(chunk_len)
        .checked_sub(data_pos)
        .filter(|&n| n != csize);
    let csize = own.unwrap_or(csize);
    let index_said = own.map(|_| f_csize);
    if data_pos.saturating_add(csize) > file_size
        || chunk_start.saturating_add(chunk_len) > file_size
    {
        return Err(Error::Truncated {
            kind: RecordKind::Mcap("Chunk"),
            at: Location::File(chunk_start),
            needed: chunk_len,
            available: file_size.saturating_sub(chunk_start),
        });
    }
    // Counts per channel from the sizes of the message index records: each is 15 bytes of
    // header and 16 a message.
    let mi_start = chunk_start.saturating_add(chunk_len);
    let mi_end = mi_start.saturating_add(mi_len);
    let outside = match (offsets.first(), offsets.last()) {
        (Some(&(_, lo)), Some(&(_, hi))) => lo < mi_start || hi >= mi_end,
        _ => false,
    };
    if mi_end > file_size || outside {
        return Err(Error::Malformed {
            kind: RecordKind::Mcap("ChunkIndex"),
            at,
            reason: format!(
                "its message indexes ({mi_len} bytes from byte {mi_start}) lie outside the file or the region"
            ),
        });
    }
    // The counts go to the caller's flat list; the caller gives each chunk its own.
    for (k, &(ch, off)) in offsets.iter().enumerate() {
        let next = offsets.get(k + 1).map_or(mi_end, |&(_, o)| o);
        let n = next.saturating_sub(off).saturating_sub(15) / 16;
        if n > 0 {
            counts.push((dense[usize::from(ch)], u32::try_from(n).unwrap_or(u32::MAX)));
        }
    }
    Ok(Some((
        Chunk {
            pos: chunk_start,
            start_ns: start,
            end_ns: end,
            compression,
            data_pos,
            data_len: csize,
            size: usize_ as u32,
            kind: ChunkKind::Mcap,
            index_pos: chunk_start + chunk_len,
            ..Default::default()
        },
        index_said,
    )))
}

/// Reads a file record by record from the start: chunks are decompressed and their records
/// scanned, unchunked messages grouped into stretches. Stops with a warning at the first
/// record that cannot be read.
fn scan(src: &Source, path: &Path, file_size: u64, mut warnings: Vec<String>) -> Result<Opened> {
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
    let mut cat = Catalog::default();
    let mut chunks: Vec<Chunk> = Vec::new();
    let mut per_channel: Vec<Vec<IndexEntry>> = Vec::new();
    let mut attachments = Vec::new();
    let mut metadata = Vec::new();
    // The open stretch of unchunked records: (start offset, chunk index).
    let mut stretch: Option<(u64, usize)> = None;
    let mut pos = 8u64;
    let mut ended = false;
    let mut reader = crate::storage::ReadWindow::new(src, file_size);
    while pos < file_size {
        let at = Location::File(pos);
        let hdr = match reader.get(pos, 9) {
            Ok(h) if h.len() == 9 => h.to_vec(),
            _ => {
                warnings.push(format!(
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
            warnings.push(format!(
                "{} record at byte {pos} declares {len} bytes but only {avail} remain: the file was cut off; the records before it are kept",
                op_name(op)
            ));
            break;
        }
        let end = pos + 9 + len;
        if op != opcode::MESSAGE {
            stretch = None;
        }
        match op {
            opcode::MESSAGE => {
                let c = reader.get(pos + 9, (len as usize).min(MESSAGE_HEADER))?;
                let mut f = Fields::new(c, op, at);
                let parsed = (|| -> Result<(u16, u64)> {
                    let ch = f.u16("channel_id")?;
                    let _seq = f.u32("sequence")?;
                    Ok((ch, f.u64("log_time")?))
                })();
                match parsed {
                    Ok((ch, t)) => {
                        let Some(&ci) = cat.by_id.get(&ch) else {
                            warnings.push(format!(
                                "message at byte {pos} names channel {ch}, which no Channel record before it defines; skipped"
                            ));
                            pos = end;
                            continue;
                        };
                        let (start, k) = match stretch {
                            Some((s, k)) if end - s <= STRETCH || chunks[k].counts.is_empty() => {
                                (s, k)
                            }
                            _ => {
                                chunks.push(Chunk {
                                    pos,
                                    start_ns: u64::MAX,
                                    end_ns: 0,
                                    data_pos: pos,
                                    kind: ChunkKind::Mcap,
                                    ..Default::default()
                                });
                                stretch = Some((pos, chunks.len() - 1));
                                (pos, chunks.len() - 1)
                            }
                        };
                        let chunk = &mut chunks[k];
                        chunk.data_len = end - start;
                        chunk.size = chunk.data_len as u32;
                        add_entry(chunk, &mut per_channel, ci, t, k, (pos - start) as u32);
                    }
                    Err(e) => warnings.push(format!("{e}; skipped")),
                }
            }
            opcode::CHUNK => match scan_chunk(src, pos, len, &mut cat, chunks.len()) {
                Ok((chunk, entries)) => {
                    if chunk.message_count() > 0 || !entries.is_empty() {
                        let k = chunks.len();
                        chunks.push(chunk);
                        for (ci, e) in entries {
                            if per_channel.len() <= ci {
                                per_channel.resize(ci + 1, Vec::new());
                            }
                            per_channel[ci].push(IndexEntry {
                                chunk: k as u32,
                                ..e
                            });
                        }
                    }
                }
                Err(e) => warnings.push(format!("chunk at byte {pos} skipped: {e}")),
            },
            opcode::SCHEMA | opcode::CHANNEL | opcode::METADATA | opcode::HEADER => {
                match reader.get(pos + 9, len as usize).map(<[u8]>::to_vec) {
                    Ok(c) => {
                        let r = match op {
                            opcode::SCHEMA => parse_schema(&c, at).map(|(id, s)| cat.schema(id, s)),
                            opcode::CHANNEL => parse_channel(&c, at).map(|ch| {
                                cat.channel(ch);
                            }),
                            opcode::METADATA => {
                                let mut f = Fields::new(&c, op, at);
                                f.string("name")
                                    .and_then(|n| Ok((n, f.map_str("metadata")?)))
                                    .map(|m| metadata.push(m))
                            }
                            _ => Ok(()),
                        };
                        if let Err(e) = r {
                            warnings.push(format!("{e}; skipped"));
                        }
                    }
                    Err(e) => warnings.push(format!("{e}; skipped")),
                }
            }
            opcode::ATTACHMENT => {
                let c = reader.get(pos + 9, (len as usize).min(1 << 16))?.to_vec();
                let mut f = Fields::new(&c, op, at);
                let r = (|| -> Result<(String, String, u64)> {
                    let _log = f.u64("log_time")?;
                    let _create = f.u64("create_time")?;
                    let name = f.string("name")?;
                    let media = f.string("media_type")?;
                    let size = f.u64("data")?;
                    Ok((name, media, size))
                })();
                match r {
                    Ok(a) => attachments.push(a),
                    Err(e) => warnings.push(format!("{e}; skipped")),
                }
            }
            opcode::DATA_END => {
                ended = true;
                break;
            }
            opcode::FOOTER => {
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
        warnings.push(format!(
            "the file does not end with a footer and the MCAP magic (it stops at byte {file_size}, after the data section): its summary was cut off; the messages were read by a linear scan"
        ));
    }
    if !ended && !warnings.iter().any(|w| w.contains("cut off")) {
        warnings.push(format!(
            "the data section has no end record (the file stops at byte {file_size}): the recording was not closed"
        ));
    }
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
        warnings: warnings.clone(),
        attachments,
        metadata,
        ..Default::default()
    };
    summary.finish();
    Ok(Opened {
        profile: String::new(),
        deferred: None,
        summary,
        index_pos: 0,
        tables: Some(MessageTables {
            per_connection: per_channel,
            warnings: Vec::new(),
        }),
    })
}

fn add_entry(
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
fn scan_chunk(
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

/// Calls `f(offset, opcode, content)` for each record of a chunk's uncompressed records.
fn walk_records(
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
fn walk_records_at(
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

/// Builds the message tables of an indexed file from the message index records after each
/// chunk; a chunk whose index is missing or unusable is decompressed and scanned.
pub(crate) fn build_tables(
    bag: &dyn crate::storage::ChunkReader,
    want: &dyn Fn(usize) -> bool,
    progress: &mut dyn FnMut(TablesProgress, &ChunkEntries) -> bool,
) -> Result<MessageTables> {
    let s = bag.summary();
    let by_file_id: HashMap<(u32, u32), usize> = s
        .connections
        .iter()
        .enumerate()
        .map(|(i, c)| ((c.file, c.id), i))
        .collect();
    let mut per_connection: Vec<Vec<IndexEntry>> = s
        .connections
        .iter()
        .map(|c| Vec::with_capacity(c.message_count.min(s.file_size / 16) as usize))
        .collect();
    let mut warnings = Vec::new();
    let mut bytes_done = 0u64;
    // One buffer for every chunk's entries (see the ROS 1 table build).
    let mut ce = ChunkEntries {
        chunk: 0,
        entries: Vec::new(),
    };
    let todo: Vec<usize> = (0..s.chunks.len()).filter(|&i| want(i)).collect();
    let sources = todo
        .iter()
        .map(|&i| bag.source(&s.chunks[i]))
        .collect::<Result<Vec<&Source>>>()?;
    // A chunk's message indexes follow it (stretches of unchunked files have none): read
    // ahead on reader threads, parsed here in chunk order.
    let read_index = |j: usize, region: &mut Vec<u8>| -> Result<bool> {
        let ch = &s.chunks[todo[j]];
        if ch.index_pos == 0 {
            return Ok(false);
        }
        let src = sources[j];
        let file_len = src.len().unwrap_or(0);
        let want = (ch.message_count() * 16 + ch.counts.len() as u64 * 15)
            .min(file_len.saturating_sub(ch.index_pos));
        read_at_into(src, ch.index_pos, want as usize, region)?;
        Ok(true)
    };
    crate::storage::read_ahead(todo.len(), read_index, |j, read, region| {
        let i = todo[j];
        let ch = &s.chunks[i];
        let by_id: HashMap<u32, usize> = by_file_id
            .iter()
            .filter(|((f, _), _)| *f == ch.file)
            .map(|(&(_, id), &ci)| (id, ci))
            .collect();
        // Counts come from the file: reserve no more than its bytes can hold.
        let entries = &mut ce.entries;
        entries.clear();
        entries.reserve(
            ch.message_count()
                .min(region.len() as u64 / 16 + 1)
                .min(1 << 24) as usize,
        );
        let ok = match read.and_then(|indexed| {
            if indexed {
                parse_message_indexes(region, ch.index_pos, i as u32, &by_id, entries)
                    .map(|()| true)
            } else {
                Ok(false)
            }
        }) {
            Ok(false) => false,
            Ok(true) if entries.len() as u64 == ch.message_count() => true,
            Ok(true) => {
                warnings.push(format!(
                    "message indexes of the chunk at byte {} list {} messages, the chunk index {}; rebuilt from the chunk",
                    ch.pos,
                    entries.len(),
                    ch.message_count()
                ));
                false
            }
            Err(e) => {
                warnings.push(format!(
                    "message indexes of the chunk at byte {} are unusable ({e}); rebuilt from the chunk",
                    ch.pos
                ));
                false
            }
        };
        if !ok {
            entries.clear();
            let data = bag.chunk_data(i)?;
            let r = walk_records(&data, ch.pos, |off, op, c| {
                if op == opcode::MESSAGE {
                    let at = Location::InChunk {
                        chunk_pos: ch.pos,
                        offset: off as u64,
                    };
                    let mut f = Fields::new(c, op, at);
                    let id = f.u16("channel_id")?;
                    let _ = f.u32("sequence")?;
                    let t = f.u64("log_time")?;
                    if let Some(&ci) = by_id.get(&u32::from(id)) {
                        entries.push((
                            ci,
                            IndexEntry {
                                time_ns: t,
                                chunk: i as u32,
                                offset: off as u32,
                            },
                        ));
                    }
                }
                Ok(())
            });
            if let Err(e) = r {
                warnings.push(format!("chunk at byte {}: {e}", ch.pos));
            }
        }
        for &(ci, e) in entries.iter() {
            per_connection[ci].push(e);
        }
        bytes_done += ch.data_len;
        let p = TablesProgress {
            chunks_done: i + 1,
            chunks_total: s.chunks.len(),
            bytes_done,
        };
        ce.chunk = i;
        if !progress(p, &ce) {
            return Err(Error::Cancelled);
        }
        Ok(())
    })?;
    let mut t = MessageTables {
        per_connection,
        warnings,
    };
    t.sort();
    Ok(t)
}

fn parse_message_indexes(
    region: &[u8],
    region_pos: u64,
    chunk: u32,
    by_id: &HashMap<u32, usize>,
    entries: &mut Vec<(usize, IndexEntry)>,
) -> Result<()> {
    let mut off = 0usize;
    while off + 9 <= region.len() {
        let at = Location::File(region_pos + off as u64);
        let op = region[off];
        if op != opcode::MESSAGE_INDEX {
            break;
        }
        let len = u64::from_le_bytes(region[off + 1..off + 9].try_into().unwrap_or([0; 8]));
        let Some(c) = region.get(off + 9..(off as u64 + 9).saturating_add(len) as usize) else {
            return Err(Error::Truncated {
                kind: RecordKind::Mcap("MessageIndex"),
                at,
                needed: len + 9,
                available: (region.len() - off) as u64,
            });
        };
        let mut f = Fields::new(c, op, at);
        let ch = f.u16("channel_id")?;
        let recs = f.bytes32("records")?;
        let Some(&ci) = by_id.get(&u32::from(ch)) else {
            return Err(Error::Malformed {
                kind: RecordKind::Mcap("MessageIndex"),
                at,
                reason: format!("names channel {ch}, which the summary does not define"),
            });
        };
        if recs.len() % 16 != 0 {
            return Err(Error::Malformed {
                kind: RecordKind::Mcap("MessageIndex"),
                at,
                reason: format!(
                    "its records take {} bytes, not a multiple of 16",
                    recs.len()
                ),
            });
        }
        for r in recs.chunks_exact(16) {
            let t = u64::from_le_bytes(r[..8].try_into().unwrap_or([0; 8]));
            let o = u64::from_le_bytes(r[8..].try_into().unwrap_or([0; 8]));
            let offset = u32::try_from(o).map_err(|_| Error::Malformed {
                kind: RecordKind::Mcap("MessageIndex"),
                at,
                reason: format!("offset {o} is past any chunk"),
            })?;
            entries.push((
                ci,
                IndexEntry {
                    time_ns: t,
                    chunk,
                    offset,
                },
            ));
        }
        off += 9 + len as usize;
    }
    Ok(())
}

/// Facts of a summary for `info`: the library and profile are not kept; counts by encoding.
pub fn encodings(s: &Summary) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for c in &s.connections {
        *m.entry(c.encoding.clone()).or_insert(0) += 1;
    }
    m
}
