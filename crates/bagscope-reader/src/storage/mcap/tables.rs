//! The message tables from the message index records after each chunk (or by scanning a chunk that has none), and the encodings a recording uses.

use std::collections::{BTreeMap, HashMap};

use super::{opcode, walk_records, Fields};
use crate::error::{Error, Location, RecordKind, Result};
use crate::storage::compression::MAX_CHUNK_SIZE;
use crate::storage::{
    read_at_into, Chunk, ChunkEntries, IndexEntry, MessageTables, Source, Summary, TablesProgress,
};

/// Builds the message tables of an indexed file from the message index records after each
/// chunk; a chunk whose index is missing or unusable is decompressed and scanned.
pub(crate) fn build_tables(
    bag: &dyn crate::storage::ChunkReader,
    want: &dyn Fn(usize) -> bool,
    progress: &mut dyn FnMut(TablesProgress, &ChunkEntries) -> bool,
) -> Result<MessageTables> {
    let s = bag.summary();
    let by_file = connections_by_file(s);
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
        read_chunk_index(sources[j], &s.chunks[todo[j]], region)
    };
    crate::storage::read_ahead_on(
        bag.file().is_remote(),
        bag.options().single_threaded(),
        todo.len(),
        read_index,
        |j, read, region| {
            let i = todo[j];
            let ch = &s.chunks[i];
            let Some(by_id) = by_file.get(ch.file as usize) else {
                return Err(Error::NotFound(format!("no storage file {}", ch.file)));
            };
            let entries = &mut ce.entries;
            entries.clear();
            let ok = match read.map_err(|e| index_unusable(ch, &e)) {
                Ok(false) => false,
                Ok(true) => match chunk_index_entries(region, ch, i as u32, by_id, entries) {
                    Ok(()) => true,
                    Err(w) => {
                        warnings.push(w);
                        false
                    }
                },
                Err(w) => {
                    warnings.push(w);
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
            bytes_done += ch.data_len;
            crate::storage::chunk_done(
                &mut per_connection,
                &mut ce,
                i,
                s.chunks.len(),
                bytes_done,
                progress,
            )
        },
    )?;
    let mut t = MessageTables {
        per_connection,
        warnings,
    };
    t.sort();
    Ok(t)
}

/// Per storage file, a channel id's connection.
pub(crate) fn connections_by_file(s: &Summary) -> Vec<HashMap<u32, usize>> {
    let mut by_file = vec![HashMap::new(); s.files.len().max(1)];
    for (i, c) in s.connections.iter().enumerate() {
        let f = c.file as usize;
        if by_file.len() <= f {
            by_file.resize(f + 1, HashMap::new());
        }
        by_file[f].insert(c.id, i);
    }
    by_file
}

/// Reads the message index records that follow chunk `ch` into `region`: `false` where it
/// has none (a stretch of an unchunked file).
pub(crate) fn read_chunk_index(src: &Source, ch: &Chunk, region: &mut Vec<u8>) -> Result<bool> {
    if ch.index_pos == 0 {
        return Ok(false);
    }
    let file_len = src.len().unwrap_or(0);
    let want = (ch.message_count() * 16 + ch.counts.len() as u64 * 15)
        .min(file_len.saturating_sub(ch.index_pos));
    read_at_into(src, ch.index_pos, want as usize, region)?;
    Ok(true)
}

/// The entries (connection, entry) the message index records `region` of chunk `ch` (index
/// `chunk`) list, `by_id` giving a channel's connection; or the warning that says why they
/// cannot be used, as the tables give it (the chunk is then read for its records).
pub(crate) fn chunk_index_entries(
    region: &[u8],
    ch: &Chunk,
    chunk: u32,
    by_id: &HashMap<u32, usize>,
    entries: &mut Vec<(usize, IndexEntry)>,
) -> std::result::Result<(), String> {
    // Counts come from the file: reserve no more than its bytes can hold.
    entries.clear();
    entries.reserve(
        ch.message_count()
            .min(region.len() as u64 / 16 + 1)
            .min(1 << 24) as usize,
    );
    match parse_message_indexes(region, ch.index_pos, chunk, by_id, entries) {
        Ok(()) if entries.len() as u64 == ch.message_count() => Ok(()),
        Ok(()) => Err(format!(
            "message indexes of the chunk at byte {} list {} messages, the chunk index {}; rebuilt from the chunk",
            ch.pos,
            entries.len(),
            ch.message_count()
        )),
        Err(e) => Err(index_unusable(ch, &e)),
    }
}

pub(crate) fn index_unusable(ch: &Chunk, e: &Error) -> String {
    format!(
        "message indexes of the chunk at byte {} are unusable ({e}); rebuilt from the chunk",
        ch.pos
    )
}

/// A MessageIndex record's content `c`: its channel id and its records, 16 bytes each (log
/// time, offset in the chunk's records).
fn message_index_record(c: &[u8], at: Location) -> Result<(u16, &[u8])> {
    let mut f = Fields::new(c, opcode::MESSAGE_INDEX, at);
    let ch = f.u16("channel_id")?;
    let recs = f.entries32("records", 16)?;
    Ok((ch, recs))
}

/// The records (16 bytes each: log time, offset in the chunk's records) of the MessageIndex
/// record of channel `id` that the `k`-th of chunk `ch`'s counts stands for, read alone
/// into `buf` (one read, where the summary's chunk index says it lies): `None` where the
/// summary does not say, or the bytes there are not that channel's record of that count.
pub(crate) fn channel_index<'a>(
    src: &Source,
    ch: &Chunk,
    k: usize,
    id: u16,
    buf: &'a mut Vec<u8>,
) -> Option<&'a [u8]> {
    let (&(_, n), &at) = (ch.counts.get(k)?, ch.index_at.get(k)?);
    // opcode, length, channel id, the records' length, 16 bytes a message.
    let len = 15 + 16 * u64::from(n);
    if ch.index_pos == 0 || at == u32::MAX || len > MAX_CHUNK_SIZE {
        return None;
    }
    let pos = ch.index_pos + u64::from(at);
    read_at_into(src, pos, len as usize, buf).ok()?;
    let (&op, rest) = buf.split_first()?;
    let said = crate::storage::le_u64(rest, 0)?;
    if buf.len() as u64 != len || op != opcode::MESSAGE_INDEX || said != len - 9 {
        return None;
    }
    let (ch_id, recs) = message_index_record(&buf[9..], Location::File(pos)).ok()?;
    (ch_id == id && recs.len() as u64 == 16 * u64::from(n)).then_some(recs)
}

/// The entries of a MessageIndex record's records (see [`message_index_record`]): each
/// message's log time and offset in the chunk's records.
pub(crate) fn index_records(recs: &[u8]) -> impl Iterator<Item = (u64, u64)> + '_ {
    use crate::storage::le_u64;
    recs.chunks_exact(16)
        .map(|r| (le_u64(r, 0).unwrap_or(0), le_u64(r, 8).unwrap_or(0)))
}

pub(super) fn parse_message_indexes(
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
        let (ch, recs) = message_index_record(c, at)?;
        let Some(&ci) = by_id.get(&u32::from(ch)) else {
            return Err(Error::Malformed {
                kind: RecordKind::Mcap("MessageIndex"),
                at,
                reason: format!("names channel {ch}, which the summary does not define"),
            });
        };
        for (t, o) in index_records(recs) {
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
