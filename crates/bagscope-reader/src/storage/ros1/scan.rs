//! Linear recovery scan of a format 2.0 bag: reads records in sequence from the start, keeps
//! every connection and message it can read, and records what it skipped.

use std::collections::HashMap;
use std::path::Path;

use super::scan_chunk_records;
use crate::error::{Error, Location, RecordKind, Result};
use crate::storage::compression::{self, MAX_CHUNK_SIZE};
use crate::storage::ros1::record::{self, le_u32, op, BagHeader, ChunkHeader, ConnectionRecord};
use crate::storage::{
    read_at, Chunk, Connection, IndexEntry, MessageTables, Opened, Summary, Version,
};

/// Largest record header read while scanning.
const MAX_HEADER: usize = 1 << 20;

/// Scans the whole file; `header` is the bag header if it could be read.
pub(crate) fn scan_v2(
    file: &crate::storage::Source,
    path: &Path,
    file_size: u64,
    header: Option<BagHeader>,
    warnings: Vec<String>,
) -> Result<Opened> {
    let index_pos = header.map_or(0, |h| h.index_pos);
    let mut pos = record::MAGIC_V2.len() as u64;
    let mut st = Scan {
        warnings,
        ..Default::default()
    };
    let mut jumped = false;
    while pos < file_size {
        let at = Location::File(pos);
        let head = read_at(file, pos, 8)?;
        let problem: Option<String> = (|| {
            let hlen = le_u32(&head, 0)? as u64;
            if hlen == 0 || hlen > MAX_HEADER as u64 || pos + 8 + hlen > file_size {
                return Some(format!(
                    "no readable record at byte {pos} (header length {hlen}, {} bytes left)",
                    file_size - pos
                ));
            }
            None
        })()
        .or_else(|| {
            (head.len() < 8).then(|| {
                format!(
                    "{} stray bytes at the end of the file (byte {pos})",
                    head.len()
                )
            })
        });
        if let Some(p) = problem {
            if !jumped && index_pos > pos && index_pos < file_size {
                st.warnings.push(format!(
                    "{p}; skipped {} bytes to the index at byte {index_pos}",
                    index_pos - pos
                ));
                pos = index_pos;
                jumped = true;
                continue;
            }
            st.warnings.push(format!("{p}; the scan stops there"));
            break;
        }
        let hlen = le_u32(&head, 0).unwrap_or(0) as usize;
        let hbuf = read_at(file, pos + 4, hlen + 4)?;
        let hdr = &hbuf[..hlen];
        let dlen = u64::from(le_u32(&hbuf, hlen).unwrap_or(0));
        let data_pos = pos + 8 + hlen as u64;
        let avail = file_size - data_pos;
        let opc = match record::header_op(hdr, at) {
            Ok(o) => o,
            Err(e) => {
                st.warnings.push(format!("{e}; the scan stops there"));
                break;
            }
        };
        let truncated = dlen > avail;
        match opc {
            op::CHUNK => {
                if !scan_chunk(&mut st, file, pos, hdr, dlen, avail)? {
                    break;
                }
            }
            op::CONNECTION => {
                if truncated {
                    st.warnings.push(format!(
                        "connection record at byte {pos} is truncated; the scan stops there"
                    ));
                    break;
                }
                let data = read_at(file, data_pos, dlen as usize)?;
                match ConnectionRecord::parse(hdr, &data, at) {
                    Ok(c) => add_conn(&mut st.by_id, &mut st.conns, c),
                    Err(e) => st.warnings.push(format!("{e}; skipped")),
                }
            }
            op::BAG_HEADER | op::INDEX_DATA | op::CHUNK_INFO => {
                if truncated {
                    let kind = match opc {
                        op::BAG_HEADER => RecordKind::BagHeader,
                        op::INDEX_DATA => RecordKind::IndexData,
                        _ => RecordKind::ChunkInfo,
                    };
                    st.warnings.push(format!(
                        "{}; the scan stops there",
                        Error::Truncated {
                            kind,
                            at,
                            needed: 8 + hlen as u64 + dlen,
                            available: file_size - pos
                        }
                    ));
                    break;
                }
            }
            other => {
                st.warnings.push(format!(
                    "record with unknown op {other:#04x} at byte {pos}; skipped"
                ));
                if truncated {
                    break;
                }
            }
        }
        pos = data_pos + dlen;
    }
    Ok(st.finish(path, file_size, index_pos))
}

/// What the scan has found so far.
#[derive(Default)]
struct Scan {
    conns: Vec<ConnectionRecord>,
    /// Connection id to its place in `conns`.
    by_id: HashMap<u32, usize>,
    /// Per connection id: the messages found.
    raw_tables: HashMap<u32, Vec<IndexEntry>>,
    chunks: Vec<Chunk>,
    warnings: Vec<String>,
}

/// Adds a connection record the first time its id is seen.
fn add_conn(
    by_id: &mut HashMap<u32, usize>,
    conns: &mut Vec<ConnectionRecord>,
    c: ConnectionRecord,
) {
    if let std::collections::hash_map::Entry::Vacant(v) = by_id.entry(c.conn) {
        v.insert(conns.len());
        conns.push(c);
    }
}

/// The chunk record at `pos` (header `hdr`, `dlen` bytes of data of which `avail` are in the
/// file): what of it decompresses, its connections and messages; `false` when the scan stops
/// there (a chunk header that does not parse, a truncated chunk).
fn scan_chunk(
    st: &mut Scan,
    file: &crate::storage::Source,
    pos: u64,
    hdr: &[u8],
    dlen: u64,
    avail: u64,
) -> Result<bool> {
    let at = Location::File(pos);
    let data_pos = pos + 8 + hdr.len() as u64;
    let truncated = dlen > avail;
    let ch = match ChunkHeader::parse(hdr, at) {
        Ok(c) => c,
        Err(e) => {
            st.warnings.push(format!("{e}; the scan stops there"));
            return Ok(false);
        }
    };
    let take = dlen.min(avail).min(MAX_CHUNK_SIZE);
    let raw = read_at(file, data_pos, take as usize)?;
    let (data, err) = compression::decompress_lenient(ch.compression, &raw, ch.size, pos);
    let idx = st.chunks.len() as u32;
    let mut counts: HashMap<u32, u32> = HashMap::new();
    let (mut lo, mut hi) = (u64::MAX, 0u64);
    let mut found = 0usize;
    let Scan {
        conns,
        by_id,
        raw_tables,
        ..
    } = st;
    let r = scan_chunk_records(
        &data,
        pos,
        idx,
        |c| add_conn(by_id, conns, c),
        |id, e| {
            *counts.entry(id).or_insert(0) += 1;
            lo = lo.min(e.time_ns);
            hi = hi.max(e.time_ns);
            found += 1;
            raw_tables.entry(id).or_default().push(e);
        },
    );
    if truncated || err.is_some() || r.is_err() {
        let mut w = format!("chunk at byte {pos}");
        if truncated {
            w.push_str(&format!(
                " is truncated ({} of {dlen} bytes present)",
                avail
            ));
        }
        if let Some(e) = &err {
            w.push_str(&format!("; {e}"));
        }
        if let Err(e) = r {
            w.push_str(&format!("; {e}"));
        }
        w.push_str(&format!("; recovered {found} messages from it"));
        st.warnings.push(w);
    }
    let mut counts: Vec<(u32, u32)> = counts.into_iter().collect();
    counts.sort_unstable();
    st.chunks.push(Chunk {
        pos,
        start_ns: lo,
        end_ns: hi,
        // Connection ids for now; mapped to indexes below.
        counts: counts.into_iter().collect(),
        compression: ch.compression,
        data_pos,
        data_len: dlen.min(avail),
        size: if err.is_some() || truncated {
            data.len() as u32
        } else {
            ch.size
        },
        ..Default::default()
    });
    Ok(!truncated)
}

impl Scan {
    /// The recording the scan found: connection ids mapped to indexes (messages on
    /// connections no record defines are left out, said in a warning), its summary and tables.
    fn finish(self, path: &Path, file_size: u64, index_pos: u64) -> Opened {
        let Scan {
            mut conns,
            raw_tables,
            mut chunks,
            mut warnings,
            ..
        } = self;
        // Map connection ids to indexes; messages on undefined connections are dropped.
        conns.sort_by_key(|c| c.conn);
        let index: HashMap<u32, usize> =
            conns.iter().enumerate().map(|(i, c)| (c.conn, i)).collect();
        let mut per_connection = vec![Vec::new(); conns.len()];
        for (id, v) in raw_tables {
            match index.get(&id) {
                Some(&i) => per_connection[i] = v,
                None => warnings.push(format!(
                    "{} messages name connection {id}, which no connection record defines; left out",
                    v.len()
                )),
            }
        }
        for ch in &mut chunks {
            ch.counts = ch
                .counts
                .iter()
                .filter_map(|&(id, n)| index.get(&id).map(|&i| (i as u32, n)))
                .collect();
        }
        let connections = conns.into_iter().map(Connection::from).collect();
        let mut summary = Summary {
            path: path.to_path_buf(),
            file_size,
            version: Version::V2_0,
            indexed: false,
            connections,
            chunks,
            topics: Vec::new(),
            message_count: 0,
            start_ns: None,
            end_ns: None,
            warnings,
            ..Default::default()
        };
        summary.finish();
        let n = summary.message_count;
        summary.warnings.push(format!(
            "linear scan recovered {n} messages in {} chunks on {} connections",
            summary.chunks.len(),
            summary.connections.len()
        ));
        Opened {
            keep: None,
            profile: String::new(),
            deferred: None,
            summary,
            index_pos,
            tables: Some(MessageTables {
                per_connection,
                warnings: Vec::new(),
            }),
        }
    }
}
