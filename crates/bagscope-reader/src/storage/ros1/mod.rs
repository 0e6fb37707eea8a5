//! ROS 1 bags: format 2.0 (chunked, indexed; recovered by a linear scan when the index is
//! missing or damaged), 1.2 (`v12`), and the layouts before it (`old`: 1.1, 1.0, 0).
//! [`record`] parses the records, [`writer`] writes 2.0 bags.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use crate::error::{Error, Location, RecordKind, Result};
use crate::storage::{
    read_at, Bytes, Chunk, ChunkLayout, Connection, IndexEntry, Message, Opened, Source, Summary,
    Version,
};
use record::{
    frame_record, le_u32, op, BagHeader, ChunkHeader, ChunkInfoRecord, ChunkRecord,
    ConnectionRecord, IndexDataHeader, RawRecord, INDEX_ENTRY_V1,
};

pub(crate) mod old;

impl From<ConnectionRecord> for Connection {
    /// A ROS 1 connection record as a connection (ROS 1 encoding, `ros1msg` definition).
    fn from(c: ConnectionRecord) -> Connection {
        Connection {
            id: c.conn,
            topic: c.topic,
            datatype: c.datatype,
            md5sum: c.md5sum,
            message_definition: c.message_definition,
            callerid: c.callerid,
            latching: c.latching,
            latching_stated: c.latching_stated,
            encoding: "ros1".into(),
            schema_encoding: "ros1msg".into(),
            ..Default::default()
        }
    }
}
pub mod record;
pub(crate) mod scan;
pub(crate) mod tables;
pub(crate) mod v12;
pub mod writer;

/// The magic line at the start of a file, classified.
pub(crate) fn classify_magic(head: &[u8]) -> Result<Version> {
    if head.is_empty() {
        return Err(Error::EmptyFile);
    }
    if head.starts_with(record::MAGIC_V2) {
        return Ok(Version::V2_0);
    }
    if head.starts_with(record::MAGIC_V12) {
        return Ok(Version::V1_2);
    }
    if head.starts_with(b"#ROSRECORD V1.1") || head.starts_with(b"#ROSLOG V1.1") {
        return Ok(Version::V1_1);
    }
    if head.starts_with(b"#ROSLOG V1.0") || head.starts_with(b"##MULTILOG##") {
        return Ok(Version::V1_0);
    }
    for magic in [&b"#ROSBAG V"[..], b"#ROSRECORD V"] {
        if let Some(rest) = head.strip_prefix(magic) {
            // The version as the magic line names it (`3.0` of `#ROSBAG V3.0`).
            let v: Vec<u8> = rest
                .iter()
                .take_while(|&&b| b != b'\n')
                .take(16)
                .copied()
                .collect();
            return Err(Error::UnsupportedVersion {
                version: String::from_utf8_lossy(&v).escape_debug().to_string(),
            });
        }
    }
    let line: Vec<u8> = head.iter().take(24).copied().collect();
    Err(Error::NotABag {
        start: String::from_utf8_lossy(&line).escape_debug().to_string(),
    })
}

/// Connection records skipped at an index entry's offset before its message is looked for
/// no further (a chunk has one before a connection's first message).
const MAX_CONNECTIONS_BEFORE: usize = 16;

/// Where the message record an index entry's `offset` names starts in a decompressed chunk,
/// the record, and how many connection records were skipped to reach it. An index entry may point at the
/// connection record just before its message (some writers give the offset from before
/// writing it): ROS's own reader skips connection records there
/// (`readMessageDataHeaderFromBuffer`), and so does this one.
pub(crate) fn message_at(
    buf: &[u8],
    chunk_pos: u64,
    offset: usize,
) -> Result<(usize, RawRecord<'_>, usize)> {
    let (mut off, mut skipped) = (offset, 0);
    loop {
        let at = Location::InChunk {
            chunk_pos,
            offset: off as u64,
        };
        let rec = frame_record(buf, off, at)?;
        match ChunkRecord::parse(rec.header, at)? {
            ChunkRecord::Message(_) => return Ok((off, rec, skipped)),
            ChunkRecord::Connection if skipped < MAX_CONNECTIONS_BEFORE => {
                skipped += 1;
                off += rec.len;
            }
            ChunkRecord::Connection => return Err(not_a_message(at, op::CONNECTION)),
            ChunkRecord::Other(o) => return Err(not_a_message(at, o)),
        }
    }
}

/// Slices the message record at `entry.offset` out of a decompressed chunk.
pub(crate) fn message_in_chunk(
    buf: Arc<Vec<u8>>,
    chunk_pos: u64,
    conn: usize,
    entry: IndexEntry,
) -> Result<Message> {
    let (off, rec, _) = message_at(&buf, chunk_pos, entry.offset as usize)?;
    let start = off + 4 + rec.header.len() + 4;
    let end = start + rec.data.len();
    Ok(Message {
        conn,
        time_ns: entry.time_ns,
        data: Bytes { buf, start, end },
        entry,
        publish_ns: entry.time_ns,
        sequence: 0,
    })
}

fn not_a_message(at: Location, found: u8) -> Error {
    Error::Malformed {
        kind: RecordKind::MessageData,
        at,
        reason: format!(
            "the index points here, but this record has op {found:#04x}, not a message"
        ),
    }
}

/// The bag header's fields from its record's header alone (its length and bytes), whatever
/// follows them.
fn header_fields_alone(head: &[u8], at: Location) -> Option<BagHeader> {
    let hlen = le_u32(head, 0)? as usize;
    let h = head.get(4..4usize.checked_add(hlen)?)?;
    if record::header_op(h, at).ok()? != op::BAG_HEADER {
        return None;
    }
    BagHeader::parse(h, at).ok()
}

/// Opens a format 2.0 bag from its index, or recovers it by a linear scan.
pub(crate) fn open_v2(
    file: &Source,
    path: &Path,
    file_size: u64,
    opts: &crate::OpenOptions,
) -> Result<Opened> {
    let magic_len = record::MAGIC_V2.len() as u64;
    let head = read_at(file, magic_len, 8192)?;
    let at = Location::File(magic_len);
    let mut warnings = Vec::new();
    let header = match frame_record(&head, 0, at).and_then(|r| {
        let opc = record::header_op(r.header, at)?;
        if opc != op::BAG_HEADER {
            return Err(Error::Malformed {
                kind: RecordKind::BagHeader,
                at,
                reason: format!("the first record has op {opc:#04x}, not the bag header"),
            });
        }
        BagHeader::parse(r.header, at)
    }) {
        Ok(h) => Some(h),
        // A bag header record written without its data-length field (the padding then reads
        // as one, and runs past the file): ROS's C++ reader and rosbags take its fields and
        // seek to `index_pos`, never using the data; so does this one.
        Err(e) => match header_fields_alone(&head, at) {
            Some(h) if h.index_pos > 0 && h.index_pos <= file_size => {
                warnings.push(format!(
                    "bag header: {e}; its data length is missing or wrong (the padding read as one): its fields were read, the records found through the index at {}",
                    h.index_pos
                ));
                Some(h)
            }
            _ => {
                // The bag header is padded to 4096 bytes; a file cut inside it still may have
                // its header fields, so try them before giving up on the index.
                warnings.push(format!("bag header: {e}"));
                None
            }
        },
    };
    let Some(header) = header else {
        return crate::storage::ros1::scan::scan_v2(file, path, file_size, None, warnings);
    };
    if header.index_pos == 0 {
        warnings.push(
            "not indexed (index_pos is 0: the recording was interrupted); recovered by a linear scan"
                .to_string(),
        );
        return crate::storage::ros1::scan::scan_v2(file, path, file_size, Some(header), warnings);
    }
    if header.index_pos > file_size {
        warnings.push(format!(
            "index_pos {} is past the end of the file ({file_size} bytes): the file is truncated; recovered by a linear scan",
            header.index_pos
        ));
        return crate::storage::ros1::scan::scan_v2(file, path, file_size, Some(header), warnings);
    }
    match read_index(file, path, file_size, &header, opts.threads()) {
        Ok(mut o) => {
            o.summary.warnings.splice(0..0, warnings);
            if o.summary.message_count == 0 && o.summary.chunks.is_empty() && header.chunk_count > 0
            {
                // The header promises chunks the index does not list: look for them.
                let w = vec![format!(
                    "the bag header claims {} chunks but the index lists none; scanned the file",
                    header.chunk_count
                )];
                return crate::storage::ros1::scan::scan_v2(file, path, file_size, Some(header), w);
            }
            o.summary.finish();
            Ok(o)
        }
        Err(e) => {
            warnings.push(format!("index section: {e}; recovered by a linear scan"));
            crate::storage::ros1::scan::scan_v2(file, path, file_size, Some(header), warnings)
        }
    }
}

/// Largest index section read in one piece.
const MAX_INDEX_SECTION: u64 = 512 << 20;

/// Reads connections and chunk infos from the index section, then each chunk's header.
fn read_index(
    file: &Source,
    path: &Path,
    file_size: u64,
    header: &BagHeader,
    threads: usize,
) -> Result<Opened> {
    let len = file_size - header.index_pos;
    if len > MAX_INDEX_SECTION {
        return Err(Error::TooLarge {
            kind: RecordKind::Record,
            at: Location::File(header.index_pos),
            len,
            limit: MAX_INDEX_SECTION,
        });
    }
    let buf = read_at(file, header.index_pos, len as usize)?;
    let mut pos = 0usize;
    let mut conns: Vec<ConnectionRecord> = Vec::new();
    let mut infos: Vec<(u64, ChunkInfoRecord)> = Vec::new();
    let mut warnings = Vec::new();
    while pos < buf.len() {
        let at = Location::File(header.index_pos + pos as u64);
        let rec = frame_record(&buf, pos, at)?;
        match record::header_op(rec.header, at)? {
            op::CONNECTION => {
                let c = ConnectionRecord::parse(rec.header, rec.data, at)?;
                if !conns.iter().any(|x| x.conn == c.conn) {
                    conns.push(c);
                }
            }
            op::CHUNK_INFO => infos.push((
                header.index_pos + pos as u64,
                ChunkInfoRecord::parse(rec.header, rec.data, at)?,
            )),
            other => warnings.push(format!(
                "unexpected record with op {other:#04x} in the index section at byte {}; skipped",
                header.index_pos + pos as u64
            )),
        }
        pos += rec.len;
    }
    if infos.len() != header.chunk_count as usize {
        warnings.push(format!(
            "the bag header says {} chunks but the index has {} chunk infos",
            header.chunk_count,
            infos.len()
        ));
    }
    if conns.len() != header.conn_count as usize {
        warnings.push(format!(
            "the bag header says {} connections but the index has {}",
            header.conn_count,
            conns.len()
        ));
    }
    conns.sort_by_key(|c| c.conn);
    let conn_index: HashMap<u32, usize> =
        conns.iter().enumerate().map(|(i, c)| (c.conn, i)).collect();
    infos.sort_by_key(|(_, i)| i.chunk_pos);
    // Connection id to index as a table where ids are small (they are numbered from 0 by
    // every recorder): a hash lookup for every count of every chunk info cost more than
    // reading them.
    let max_id = conns.iter().map(|c| c.conn).max().unwrap_or(0);
    let dense: Option<Vec<u32>> = (max_id < 1 << 16).then(|| {
        let mut d = vec![u32::MAX; max_id as usize + 1];
        for (i, c) in conns.iter().enumerate() {
            d[c.conn as usize] = i as u32;
        }
        d
    });
    let lookup = |id: u32| -> Option<usize> {
        match &dense {
            Some(d) => d
                .get(id as usize)
                .filter(|&&i| i != u32::MAX)
                .map(|&i| i as usize),
            None => conn_index.get(&id).copied(),
        }
    };
    // Each chunk's record header (compression, sizes, where its data lies): one small read
    // each, split between threads; for a bag of many chunks, read only when the chunk or its
    // index is (a terabyte bag of 32 MB chunks has 32,768 of them, and reading their headers
    // took most of the time of opening it).
    // A remote file's chunk headers are read with their chunks: each would cost a request.
    let lazy = infos.len() > LAZY_CHUNK_HEADERS || file.is_remote();
    let one = |(info_at, info): &(u64, ChunkInfoRecord)| -> Result<Chunk> {
        if info.chunk_pos >= header.index_pos {
            return Err(Error::Malformed {
                kind: RecordKind::ChunkInfo,
                at: Location::File(*info_at),
                reason: format!(
                    "chunk_pos {} is not before the index section at {}",
                    info.chunk_pos, header.index_pos
                ),
            });
        }
        let layout = if lazy {
            None
        } else {
            Some(read_chunk_layout(file, info.chunk_pos, header.index_pos)?)
        };
        let mut counts = Vec::with_capacity(info.counts.len());
        for &(id, n) in &info.counts {
            match lookup(id) {
                Some(ci) => counts.push((ci as u32, n)),
                None => {
                    return Err(Error::Malformed {
                        kind: RecordKind::ChunkInfo,
                        at: Location::File(*info_at),
                        reason: format!("names connection {id}, which the index does not define"),
                    })
                }
            }
        }
        let mut c = Chunk {
            pos: info.chunk_pos,
            start_ns: info.start_ns,
            end_ns: info.end_ns,
            counts,
            ..Default::default()
        };
        if let Some(l) = layout {
            c.data_pos = l.data_pos;
            c.data_len = l.data_len;
            c.size = l.size;
            c.compression = l.compression;
        }
        Ok(c)
    };
    let threads = threads.min(4);
    let chunks: Vec<Chunk> = if threads <= 1 || infos.len() < 2048 {
        infos.iter().map(one).collect::<Result<_>>()?
    } else {
        let per = infos.len().div_ceil(threads);
        let parts: Vec<Result<Vec<Chunk>>> = std::thread::scope(|sc| {
            let handles: Vec<_> = infos
                .chunks(per)
                .map(|part| sc.spawn(move || part.iter().map(one).collect::<Result<Vec<_>>>()))
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or(Err(Error::ThreadPanicked("a reading thread")))
                })
                .collect()
        });
        let mut all = Vec::with_capacity(infos.len());
        for p in parts {
            all.extend(p?);
        }
        all
    };
    let connections = conns.into_iter().map(Connection::from).collect();
    Ok(Opened {
        keep: None,
        profile: String::new(),
        deferred: None,
        summary: Summary {
            path: path.to_path_buf(),
            file_size,
            version: Version::V2_0,
            indexed: true,
            connections,
            chunks,
            topics: Vec::new(),
            message_count: 0,
            start_ns: None,
            end_ns: None,
            warnings,
            ..Default::default()
        },
        index_pos: header.index_pos,
        tables: None,
    })
}

/// Above this many chunks, a bag opens without reading each chunk's record header.
pub(crate) const LAZY_CHUNK_HEADERS: usize = 4096;

/// Reads the record header of the chunk at `pos`: where its data lies, its sizes and
/// compression; the data must end before the index section at `index_pos`.
pub(crate) fn read_chunk_layout(file: &Source, pos: u64, index_pos: u64) -> Result<ChunkLayout> {
    let mut head = read_at(file, pos, 512)?;
    let hlen = u64::from(le_u32(&head, 0).unwrap_or(0));
    if hlen + 8 > head.len() as u64 && hlen < 4096 {
        head = read_at(file, pos, 4096)?;
    }
    let (hdr, data_pos, data_len) = chunk_header_at(&head, pos)?;
    if data_pos + data_len > index_pos {
        return Err(Error::Truncated {
            kind: RecordKind::Chunk,
            at: Location::File(pos),
            needed: data_pos + data_len - pos,
            available: index_pos.saturating_sub(pos),
        });
    }
    Ok(ChunkLayout {
        data_pos,
        data_len,
        size: hdr.size,
        compression: hdr.compression,
    })
}

/// Parses the chunk record header at the start of `head` (read from file offset `pos`):
/// returns the header, the file offset of its data and the data length.
pub(crate) fn chunk_header_at(head: &[u8], pos: u64) -> Result<(ChunkHeader, u64, u64)> {
    let at = Location::File(pos);
    let hlen = le_u32(head, 0).ok_or(Error::Truncated {
        kind: RecordKind::Chunk,
        at,
        needed: 4,
        available: head.len() as u64,
    })? as usize;
    let dl = hlen
        .checked_add(4)
        .and_then(|p| le_u32(head, p))
        .ok_or(Error::Malformed {
            kind: RecordKind::Chunk,
            at,
            reason: format!("header length {hlen} is not plausible for a chunk"),
        })?;
    let h = &head[4..4 + hlen];
    let opc = record::header_op(h, at)?;
    if opc != op::CHUNK {
        return Err(Error::Malformed {
            kind: RecordKind::Chunk,
            at,
            reason: format!("expected a chunk (op 0x05), found op {opc:#04x}"),
        });
    }
    let ch = ChunkHeader::parse(h, at)?;
    Ok((ch, pos + 8 + hlen as u64, u64::from(dl)))
}

/// Parses the index data records in `region` (file offset `base`), mapping connection ids to
/// indexes. Returns the entries per connection index and how many bytes were consumed.
pub(crate) fn parse_index_region(
    region: &[u8],
    base: u64,
    chunk: u32,
    conn_index: &HashMap<u32, usize>,
    expected: &[(u32, u32)],
    out: &mut Vec<(usize, IndexEntry)>,
) -> Result<usize> {
    let mut pos = 0;
    let mut remaining: usize = expected.len();
    while remaining > 0 && pos < region.len() {
        let at = Location::File(base + pos as u64);
        let rec = frame_record(region, pos, at)?;
        if record::header_op(rec.header, at)? != op::INDEX_DATA {
            break;
        }
        let h = IndexDataHeader::parse(rec.header, at)?;
        if h.ver != 1 {
            return Err(Error::Malformed {
                kind: RecordKind::IndexData,
                at,
                reason: format!("index version {} (expected 1)", h.ver),
            });
        }
        let need = h.count as usize * INDEX_ENTRY_V1;
        if rec.data.len() != need {
            return Err(Error::Malformed {
                kind: RecordKind::IndexData,
                at,
                reason: format!(
                    "data has {} bytes but count {} needs {need}",
                    rec.data.len(),
                    h.count
                ),
            });
        }
        let ci = *conn_index.get(&h.conn).ok_or_else(|| Error::Malformed {
            kind: RecordKind::IndexData,
            at,
            reason: format!(
                "names connection {}, which the index does not define",
                h.conn
            ),
        })?;
        match expected.iter().find(|(c, _)| *c as usize == ci) {
            Some(&(_, n)) if n == h.count => {}
            other => {
                return Err(Error::Malformed {
                    kind: RecordKind::IndexData,
                    at,
                    reason: format!(
                        "lists {} messages of connection {} but the chunk info says {}",
                        h.count,
                        h.conn,
                        other.map_or(0, |x| x.1)
                    ),
                })
            }
        }
        out.reserve(rec.data.len() / INDEX_ENTRY_V1);
        for e in rec.data.chunks_exact(INDEX_ENTRY_V1) {
            let t = record::time_ns(le_u32(e, 0).unwrap_or(0), le_u32(e, 4).unwrap_or(0));
            out.push((
                ci,
                IndexEntry {
                    time_ns: t,
                    chunk,
                    offset: le_u32(e, 8).unwrap_or(0),
                },
            ));
        }
        remaining -= 1;
        pos += rec.len;
    }
    if remaining > 0 {
        return Err(Error::Malformed {
            kind: RecordKind::IndexData,
            at: Location::File(base + pos as u64),
            reason: format!("{remaining} connections of the chunk have no index data record"),
        });
    }
    Ok(pos)
}

/// Calls `f(connection id, entry, message data)` for every message record of a decompressed
/// chunk (entries carry chunk 0: the caller knows the chunk).
pub fn scan_chunk_messages(
    data: &[u8],
    chunk_pos: u64,
    f: impl FnMut(u32, IndexEntry, &[u8]),
) -> Result<()> {
    scan_chunk(data, chunk_pos, 0, |_, _, _| Ok(()), f)
}

/// Scans the records of a decompressed chunk: connections and messages.
pub(crate) fn scan_chunk_records(
    data: &[u8],
    chunk_pos: u64,
    chunk: u32,
    mut on_conn: impl FnMut(ConnectionRecord),
    mut on_msg: impl FnMut(u32, IndexEntry),
) -> Result<()> {
    scan_chunk(
        data,
        chunk_pos,
        chunk,
        |h, d, at| {
            on_conn(ConnectionRecord::parse(h, d, at)?);
            Ok(())
        },
        |id, e, _| on_msg(id, e),
    )
}

/// The one loop over a decompressed chunk's records: connection records go to `on_conn`
/// (header, data), messages to `on_msg`; any other op is an error.
fn scan_chunk(
    data: &[u8],
    chunk_pos: u64,
    chunk: u32,
    mut on_conn: impl FnMut(&[u8], &[u8], Location) -> Result<()>,
    mut on_msg: impl FnMut(u32, IndexEntry, &[u8]),
) -> Result<()> {
    let mut pos = 0usize;
    while pos < data.len() {
        let at = Location::InChunk {
            chunk_pos,
            offset: pos as u64,
        };
        let rec = frame_record(data, pos, at)?;
        match ChunkRecord::parse(rec.header, at)? {
            ChunkRecord::Message(h) => {
                let offset = u32::try_from(pos).map_err(|_| Error::TooLarge {
                    kind: RecordKind::Chunk,
                    at,
                    len: pos as u64,
                    limit: u64::from(u32::MAX),
                })?;
                on_msg(
                    h.conn,
                    IndexEntry {
                        time_ns: h.time_ns,
                        chunk,
                        offset,
                    },
                    rec.data,
                );
            }
            ChunkRecord::Connection => on_conn(rec.header, rec.data, at)?,
            ChunkRecord::Other(other) => {
                return Err(Error::Malformed {
                    kind: RecordKind::Record,
                    at,
                    reason: format!("op {other:#04x} is not expected inside a chunk"),
                })
            }
        }
        pos += rec.len;
    }
    Ok(())
}
