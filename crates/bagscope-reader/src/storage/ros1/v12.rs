//! Format 1.2 (`#ROSRECORD V1.2`): op 0x01 definitions, op 0x02 messages with topic, md5, type,
//! sec and nsec, op 0x03 bag header, op 0x04 index ver 0. Messages are mapped onto raw segments
//! of the file that stand in for chunks, so the rest of bagscope sees the same tables.

use std::collections::HashMap;
use std::path::Path;

use crate::error::{Error, Location, RecordKind, Result};
use crate::storage::compression::Compression;
use crate::storage::ros1::record::{self, le_u32, le_u64, op, V12Header};
use crate::storage::{
    read_at, Chunk, Connection, IndexEntry, MessageTables, Opened, Summary, Version,
};

/// Size of the raw segments that stand in for chunks.
const SEGMENT_BITS: u32 = 24;
const SEGMENT: u64 = 1 << SEGMENT_BITS;
/// Largest record header or definition accepted.
const MAX_HEADER: u64 = 16 << 20;
/// Largest message accepted.
const MAX_MESSAGE: u64 = 1 << 30;

/// Reads the record at `pos`: its header and the file offset and length of its data.
fn record_at(
    file: &crate::storage::Source,
    pos: u64,
    file_size: u64,
) -> Result<(V12Header, u64, u64)> {
    let at = Location::File(pos);
    let head = read_at(file, pos, 4)?;
    let hlen = u64::from(le_u32(&head, 0).ok_or(Error::Truncated {
        kind: RecordKind::Record,
        at,
        needed: 4,
        available: file_size.saturating_sub(pos),
    })?);
    if hlen == 0 || hlen > MAX_HEADER {
        return Err(Error::Malformed {
            kind: RecordKind::Record,
            at,
            reason: format!("header length {hlen} is not plausible"),
        });
    }
    if pos + 8 + hlen > file_size {
        return Err(Error::Truncated {
            kind: RecordKind::Record,
            at,
            needed: 8 + hlen,
            available: file_size - pos,
        });
    }
    let h = read_at(file, pos + 4, hlen as usize + 4)?;
    let dlen = u64::from(le_u32(&h, hlen as usize).unwrap_or(0));
    let data_pos = pos + 8 + hlen;
    if data_pos + dlen > file_size {
        return Err(Error::Truncated {
            kind: RecordKind::Record,
            at,
            needed: 8 + hlen + dlen,
            available: file_size - pos,
        });
    }
    Ok((V12Header::parse(&h[..hlen as usize], at)?, data_pos, dlen))
}

/// Reads the data of the message record at `pos`.
pub(crate) fn read_message(file: &crate::storage::Source, pos: u64) -> Result<Vec<u8>> {
    let size = file.len()?;
    let (h, data_pos, dlen) = record_at(file, pos, size)?;
    if h.op != op::MSG_DATA {
        return Err(Error::Malformed {
            kind: RecordKind::MessageData,
            at: Location::File(pos),
            reason: format!("expected a message (op 0x02), found op {:#04x}", h.op),
        });
    }
    if dlen > MAX_MESSAGE {
        return Err(Error::TooLarge {
            kind: RecordKind::MessageData,
            at: Location::File(pos),
            len: dlen,
            limit: MAX_MESSAGE,
        });
    }
    Ok(read_at(file, data_pos, dlen as usize)?)
}

fn entry(time_ns: u64, pos: u64) -> IndexEntry {
    IndexEntry {
        time_ns,
        chunk: (pos >> SEGMENT_BITS) as u32,
        offset: (pos & (SEGMENT - 1)) as u32,
    }
}

#[derive(Default)]
struct Builder {
    conns: Vec<Connection>,
    by_key: HashMap<(String, String), usize>,
    tables: Vec<Vec<IndexEntry>>,
}

impl Builder {
    fn conn(
        &mut self,
        topic: &str,
        md5: &str,
        datatype: &str,
        def: Option<&str>,
        h: &V12Header,
    ) -> usize {
        let key = (topic.to_string(), md5.to_string());
        if let Some(&i) = self.by_key.get(&key) {
            if let Some(d) = def {
                if self.conns[i].message_definition.is_empty() {
                    self.conns[i].message_definition = d.to_string();
                }
            }
            return i;
        }
        let i = self.conns.len();
        self.conns.push(Connection {
            id: i as u32,
            topic: topic.to_string(),
            datatype: datatype.to_string(),
            md5sum: md5.to_string(),
            message_definition: def.unwrap_or_default().to_string(),
            callerid: h.callerid.clone(),
            latching: h.latching,
            latching_stated: h.latching_stated,
            message_count: 0,
            encoding: "ros1".into(),
            schema_encoding: "ros1msg".into(),
            ..Default::default()
        });
        self.tables.push(Vec::new());
        self.by_key.insert(key, i);
        i
    }
}

/// Opens a 1.2 bag: from its index when it has one, otherwise by a linear scan.
pub(crate) fn open(file: &crate::storage::Source, path: &Path, file_size: u64) -> Result<Opened> {
    let first = record::MAGIC_V12.len() as u64;
    let mut warnings = Vec::new();
    let mut index_pos = 0;
    let mut scan_from = first;
    match record_at(file, first, file_size) {
        Ok((h, dp, dl)) if h.op == op::BAG_HEADER => {
            index_pos = h.index_pos;
            scan_from = dp + dl;
        }
        Ok(_) => {
            warnings.push("no bag header record (an early 1.2 bag); read by a linear scan".into())
        }
        Err(e) => warnings.push(format!("bag header: {e}")),
    }
    let mut b = Builder::default();
    let mut indexed = false;
    if index_pos > 0 && index_pos < file_size {
        match from_index(file, file_size, index_pos, &mut b) {
            Ok(()) => indexed = true,
            Err(e) => {
                warnings.push(format!(
                    "index at byte {index_pos}: {e}; read by a linear scan"
                ));
                b = Builder::default();
            }
        }
    } else if index_pos >= file_size {
        warnings.push(format!(
            "index_pos {index_pos} is past the end of the file ({file_size} bytes); read by a linear scan"
        ));
    } else if scan_from > first {
        warnings.push("not indexed (index_pos is 0); read by a linear scan".into());
    }
    if !indexed {
        linear(file, file_size, scan_from, index_pos, &mut b, &mut warnings);
    }
    // Raw segments stand in for chunks.
    let nseg = (file_size >> SEGMENT_BITS) as usize + 1;
    let mut chunks: Vec<Chunk> = (0..nseg)
        .map(|i| {
            let pos = i as u64 * SEGMENT;
            Chunk {
                pos,
                start_ns: u64::MAX,
                end_ns: 0,
                counts: Vec::new(),
                compression: Compression::None,
                data_pos: pos,
                data_len: SEGMENT.min(file_size - pos),
                size: SEGMENT.min(file_size - pos) as u32,
                kind: crate::storage::ChunkKind::Ros1Raw,
                ..Default::default()
            }
        })
        .collect();
    // An index may point past the end of the file (a damaged or forged one): those entries
    // name no message that can be read.
    let mut outside = 0usize;
    for t in &mut b.tables {
        let before = t.len();
        t.retain(|e| (e.chunk as usize) < nseg);
        outside += before - t.len();
    }
    if outside > 0 {
        warnings.push(format!(
            "{outside} index entries point past the end of the file ({file_size} bytes); left out"
        ));
    }
    for (ci, t) in b.tables.iter().enumerate() {
        let mut per: HashMap<u32, u32> = HashMap::new();
        for e in t {
            let ch = &mut chunks[e.chunk as usize];
            ch.start_ns = ch.start_ns.min(e.time_ns);
            ch.end_ns = ch.end_ns.max(e.time_ns);
            *per.entry(e.chunk).or_insert(0) += 1;
        }
        for (c, n) in per {
            chunks[c as usize].counts.push((ci as u32, n));
        }
    }
    let mut summary = Summary {
        path: path.to_path_buf(),
        file_size,
        version: Version::V1_2,
        indexed,
        connections: b.conns,
        chunks,
        topics: Vec::new(),
        message_count: 0,
        start_ns: None,
        end_ns: None,
        warnings,
        ..Default::default()
    };
    summary.finish();
    Ok(Opened {
        keep: None,
        profile: String::new(),
        deferred: None,
        summary,
        index_pos,
        tables: Some(MessageTables {
            per_connection: b.tables,
            warnings: Vec::new(),
        }),
    })
}

/// Reads the index ver 0 records from `index_pos` to the end of the file.
fn from_index(
    file: &crate::storage::Source,
    file_size: u64,
    index_pos: u64,
    b: &mut Builder,
) -> Result<()> {
    let mut pos = index_pos;
    let mut defs: HashMap<String, (String, String)> = HashMap::new();
    while pos < file_size {
        let (h, dp, dl) = record_at(file, pos, file_size)?;
        if h.op != op::INDEX_DATA || h.ver != 0 {
            return Err(Error::Malformed {
                kind: RecordKind::IndexData,
                at: Location::File(pos),
                reason: format!(
                    "expected an index ver 0 record, found op {:#04x} ver {}",
                    h.op, h.ver
                ),
            });
        }
        if dl != u64::from(h.count) * 16 {
            return Err(Error::Malformed {
                kind: RecordKind::IndexData,
                at: Location::File(pos),
                reason: format!(
                    "data has {dl} bytes but count {} needs {}",
                    h.count,
                    u64::from(h.count) * 16
                ),
            });
        }
        let data = read_at(file, dp, dl as usize)?;
        let mut entries = Vec::with_capacity(h.count as usize);
        let mut conn = None;
        for e in data.chunks_exact(16) {
            let t = record::time_ns(le_u32(e, 0).unwrap_or(0), le_u32(e, 4).unwrap_or(0));
            let mut p = le_u64(e, 8).unwrap_or(0);
            let (mut r, mut rdp, mut rdl) = record_at(file, p, file_size)?;
            if r.op == op::MSG_DEF {
                // The entry points at the definition that precedes the type's first message.
                defs.insert(r.datatype.clone(), (r.md5.clone(), r.def.clone()));
                p = rdp + rdl;
                (r, rdp, rdl) = record_at(file, p, file_size)?;
            }
            let _ = (rdp, rdl);
            if r.op != op::MSG_DATA {
                return Err(Error::Malformed {
                    kind: RecordKind::IndexData,
                    at: Location::File(pos),
                    reason: format!(
                        "entry points at byte {p}, which holds op {:#04x}, not a message",
                        r.op
                    ),
                });
            }
            if conn.is_none() {
                conn = Some((
                    r.topic.clone(),
                    r.md5.clone(),
                    r.datatype.clone(),
                    r.clone(),
                ));
            }
            entries.push(entry(t, p));
            // Only the first record of each topic is read; the others are trusted to the index.
            if conn.is_some() {
                break;
            }
        }
        for e in data.chunks_exact(16).skip(entries.len()) {
            let t = record::time_ns(le_u32(e, 0).unwrap_or(0), le_u32(e, 4).unwrap_or(0));
            entries.push(entry(t, le_u64(e, 8).unwrap_or(0)));
        }
        if let Some((topic, md5, datatype, r)) = conn {
            let ci = b.conn(&topic, &md5, &datatype, None, &r);
            b.tables[ci].extend(entries);
        }
        pos = dp + dl;
    }
    for c in &mut b.conns {
        if let Some((_, def)) = defs.get(&c.datatype) {
            c.message_definition = def.clone();
        }
    }
    if let Some(c) = b.conns.iter().find(|c| c.message_definition.is_empty()) {
        return Err(Error::Malformed {
            kind: RecordKind::MessageDefinition,
            at: Location::File(index_pos),
            reason: format!(
                "no definition reachable from the index for {} ({})",
                c.topic, c.datatype
            ),
        });
    }
    Ok(())
}

/// Reads every record from `pos`, stopping before `index_pos` (when non-zero) or at the first
/// unreadable record.
fn linear(
    file: &crate::storage::Source,
    file_size: u64,
    mut pos: u64,
    index_pos: u64,
    b: &mut Builder,
    warnings: &mut Vec<String>,
) {
    let end = if index_pos > pos && index_pos <= file_size {
        index_pos
    } else {
        file_size
    };
    while pos < end {
        match record_at(file, pos, file_size) {
            Ok((h, dp, dl)) => {
                match h.op {
                    op::MSG_DEF => {
                        b.conn(&h.topic, &h.md5, &h.datatype, Some(&h.def), &h);
                    }
                    op::MSG_DATA => {
                        let ci = b.conn(&h.topic, &h.md5, &h.datatype, None, &h);
                        b.tables[ci].push(entry(h.time_ns, pos));
                    }
                    op::BAG_HEADER | op::INDEX_DATA => {}
                    other => warnings.push(format!(
                        "record with unknown op {other:#04x} at byte {pos}; skipped"
                    )),
                }
                pos = dp + dl;
            }
            Err(e) => {
                warnings.push(format!("{e}; the scan stops there"));
                break;
            }
        }
    }
    for c in &b.conns {
        if c.message_definition.is_empty() {
            warnings.push(format!(
                "no message definition record for {} ({})",
                c.topic, c.datatype
            ));
        }
    }
}
