//! An indexed MCAP file opened from its footer and summary alone (schemas, channels, chunk indexes, statistics, attachment and metadata indexes).

use std::path::Path;

use super::{
    compression_of, op_name, opcode, parse_channel, parse_schema, read_record, scan,
    walk_records_at, Catalog, Fields, MAGIC, MAX_SUMMARY,
};
use crate::error::{Error, Location, RecordKind, Result};
use crate::storage::compression::MAX_CHUNK_SIZE;
use crate::storage::{read_at, Chunk, ChunkKind, Opened, Source, Summary, Version};

/// Opens an MCAP file: from its summary when that is complete, else by a linear scan.
pub(crate) fn open(
    src: &Source,
    path: &Path,
    file_size: u64,
    opts: &crate::OpenOptions,
) -> Result<Opened> {
    let mut o = match open_indexed(src, path, file_size, opts.threads()) {
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
pub(super) fn open_indexed(
    src: &Source,
    path: &Path,
    file_size: u64,
    threads: usize,
) -> Result<Option<Opened>> {
    let Some((summary_start, buf)) = summary_section(src, file_size)? else {
        return Ok(None);
    };
    let SummaryRecords {
        mut cat,
        chunk_indexes,
        stats,
        attachments,
        metadata_idx,
    } = walk_summary(&buf, summary_start)?;
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
    // (a hash lookup each was most of the time of opening a large file). As long as the
    // largest id, not every id: 65,536 entries were 64 pages to fault in and fill.
    let ids = cat.by_id.keys().max().map_or(0, |&m| usize::from(m) + 1);
    let mut dense = vec![u32::MAX; ids];
    for (&id, &i) in &cat.by_id {
        dense[usize::from(id)] = i as u32;
    }
    for c in &cat.channels {
        if c.schema_id != 0 && !cat.schemas.contains_key(&c.schema_id) {
            return Ok(None);
        }
    }
    let chunk_indexes: Vec<(Location, &[u8])> = chunk_indexes
        .into_iter()
        .map(|(at, from, n)| (at, buf.get(from..from + n).unwrap_or_default()))
        .collect();
    let Some((mut chunks, disagree)) =
        parse_chunk_indexes(&chunk_indexes, &dense, file_size, threads)?
    else {
        // A chunk index the summary cannot stand for: read the whole file.
        return Ok(None);
    };
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
    let metadata = read_metadata(src, metadata_idx, file_size, &mut warnings);
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
        keep: None,
        summary,
        index_pos: 0,
        tables: None,
    }))
}

/// The summary section the footer points at; `None` for a file without one (or cut off
/// before its footer).
fn summary_section(src: &Source, file_size: u64) -> Result<Option<(u64, Vec<u8>)>> {
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
    Ok(Some((summary_start, buf)))
}

/// What the summary section's records say.
#[derive(Default)]
struct SummaryRecords {
    /// Schemas and channels.
    cat: Catalog,
    /// Each chunk index record: where it is, and where its content lies in the section.
    chunk_indexes: Vec<(Location, usize, usize)>,
    /// The statistics record: messages, chunks, attachments, metadata records.
    stats: Option<(u64, u32, u32, u32)>,
    /// Attachment indexes: name, media type, size.
    attachments: Vec<(String, String, u64)>,
    /// Where each metadata record is.
    metadata_idx: Vec<u64>,
}

/// Walks the records of the summary section `buf` (at `summary_start` in the file).
fn walk_summary(buf: &[u8], summary_start: u64) -> Result<SummaryRecords> {
    let buf_start = buf.as_ptr() as usize;
    let mut r = SummaryRecords::default();
    walk_records_at(
        buf,
        |off| Location::File(summary_start + off as u64),
        |off, op, c| {
            let at = Location::File(summary_start + off as u64);
            match op {
                opcode::SCHEMA => {
                    let (id, s) = parse_schema(c, at)?;
                    r.cat.schema(id, s);
                }
                opcode::CHANNEL => {
                    r.cat.channel(parse_channel(c, at)?);
                }
                opcode::CHUNK_INDEX => {
                    // Where the content lies in `buf`, to parse after the walk.
                    let from = (c.as_ptr() as usize).saturating_sub(buf_start);
                    r.chunk_indexes.push((at, from, c.len()));
                }
                opcode::STATISTICS => {
                    let mut f = Fields::new(c, op, at);
                    let n = f.u64("message_count")?;
                    let _schemas = f.u16("schema_count")?;
                    let _channels = f.u32("channel_count")?;
                    let att = f.u32("attachment_count")?;
                    let meta = f.u32("metadata_count")?;
                    let chunks = f.u32("chunk_count")?;
                    r.stats = Some((n, chunks, att, meta));
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
                    r.attachments.push((name, media, size));
                }
                opcode::METADATA_INDEX => {
                    let mut f = Fields::new(c, op, at);
                    let off = f.u64("offset")?;
                    let _len = f.u64("length")?;
                    let _name = f.string("name")?;
                    r.metadata_idx.push(off);
                }
                _ => {}
            }
            Ok(())
        },
    )?;
    Ok(r)
}

/// The chunk indexes as chunks, parsed on several threads (a terabyte file has tens of
/// thousands, each naming every channel of its chunk), in file order, with the chunks whose
/// index gives a compressed_size that is not the chunk's own; `None` when one cannot stand for
/// its chunk.
#[allow(clippy::type_complexity)]
fn parse_chunk_indexes(
    chunk_indexes: &[(Location, &[u8])],
    dense: &[u32],
    file_size: u64,
    threads: usize,
) -> Result<Option<(Vec<Chunk>, Vec<(u64, u64, u64)>)>> {
    // Each thread gathers its chunks' counts in one list (a vector per chunk made on a
    // thread grew that thread's heap a system call at a time); this thread hands them out.
    // (chunks, counts, where each count's message index lies, where each chunk's counts
    // end, chunk indexes whose compressed_size disagrees with their chunk)
    type Part = (
        Vec<Chunk>,
        Vec<(u32, u32)>,
        Vec<u32>,
        Vec<usize>,
        Vec<(u64, u64, u64)>,
    );
    // `own`: each chunk given its counts here, the lists serving as scratch (on this thread;
    // lists grown for the whole file and then copied out were a hundred pages more to fault
    // in when opening a file of 300 chunks of 50 channels).
    let parse = |part: &[(Location, &[u8])], own: bool| -> Result<Option<Part>> {
        let mut out = Vec::with_capacity(part.len());
        let mut offsets = Vec::new();
        let mut counts = Vec::new();
        let mut index_at = Vec::new();
        let mut ends = Vec::with_capacity(part.len());
        let mut disagree = Vec::new();
        for &(at, c) in part {
            let lists = (&mut offsets, &mut counts, &mut index_at);
            match parse_chunk_index(c, at, dense, file_size, lists)? {
                Some((mut ch, index_said)) => {
                    if let Some(said) = index_said {
                        disagree.push((ch.pos, said, ch.data_len));
                    }
                    if own {
                        ch.counts = counts.clone();
                        ch.index_at = index_at.clone();
                        counts.clear();
                        index_at.clear();
                    }
                    out.push(ch);
                    ends.push(counts.len());
                }
                None => return Ok(None),
            }
        }
        Ok(Some((out, counts, index_at, ends, disagree)))
    };
    // (The machine's cores looked up only for a file with enough chunks to share out.)
    if chunk_indexes.len() < 4096 || threads <= 1 {
        return Ok(
            parse(chunk_indexes, true)?.map(|(chunks, _, _, _, disagree)| (chunks, disagree))
        );
    }
    let per = chunk_indexes.len().div_ceil(threads.min(4));
    let parts: Vec<Result<Option<Part>>> = std::thread::scope(|sc| {
        let handles: Vec<_> = chunk_indexes
            .chunks(per)
            .map(|p| sc.spawn(move || parse(p, false)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or(Err(Error::ThreadPanicked("a summary-reading thread")))
            })
            .collect()
    });
    let mut chunks = Vec::with_capacity(chunk_indexes.len());
    let mut disagree = Vec::new();
    for p in parts {
        match p? {
            Some((v, counts, index_at, ends, d)) => {
                disagree.extend(d);
                let mut from = 0;
                for (mut ch, end) in v.into_iter().zip(ends) {
                    ch.counts = counts[from..end].to_vec();
                    ch.index_at = index_at[from..end].to_vec();
                    from = end;
                    chunks.push(ch);
                }
            }
            // A chunk index the summary cannot stand for: read the whole file.
            None => return Ok(None),
        }
    }
    Ok(Some((chunks, disagree)))
}

/// The metadata records the summary indexes; one that does not read is a warning.
fn read_metadata(
    src: &Source,
    metadata_idx: Vec<u64>,
    file_size: u64,
    warnings: &mut Vec<String>,
) -> Vec<(String, Vec<(String, String)>)> {
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
    metadata
}

/// The connection index of channel `id` in the table `dense`, `u32::MAX` for a channel the
/// summary does not define.
fn conn_of(dense: &[u32], id: u16) -> u32 {
    dense.get(usize::from(id)).copied().unwrap_or(u32::MAX)
}

/// What [`parse_chunk_index`] fills: the channels' offsets (scratch), then the counts and
/// where each count's MessageIndex record lies.
type CountLists<'a> = (
    &'a mut Vec<(u16, u64)>,
    &'a mut Vec<(u32, u32)>,
    &'a mut Vec<u32>,
);

/// One chunk index record of the summary as a chunk; `None` when the summary cannot stand for
/// the chunk (a channel it does not define, no message index for a chunk of messages). With
/// the chunk, the index's `compressed_size` where it is not the chunk record's own length
/// (an early Python writer's), which is then taken from the record's length instead.
///
/// The chunk's counts (and where each count's MessageIndex record lies) go to the lists
/// `(offsets, counts, index_at)`: the channels' offsets, a scratch list reused for every chunk,
/// then the caller's flat lists, which it hands out to each chunk.
pub(super) fn parse_chunk_index(
    c: &[u8],
    at: Location,
    dense: &[u32],
    file_size: u64,
    (offsets, counts, index_at): CountLists<'_>,
) -> Result<Option<(Chunk, Option<u64>)>> {
    let op = opcode::CHUNK_INDEX;
    let mut f = Fields::new(c, op, at);
    let start = f.u64("message_start_time")?;
    let end = f.u64("message_end_time")?;
    let chunk_start = f.u64("chunk_start_offset")?;
    let chunk_len = f.u64("chunk_length")?;
    let offsets_bytes = f.entries32("message_index_offsets", 10)?;
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
        if conn_of(dense, ch) == u32::MAX {
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
            counts.push((conn_of(dense, ch), u32::try_from(n).unwrap_or(u32::MAX)));
            index_at.push(u32::try_from(off.saturating_sub(mi_start)).unwrap_or(u32::MAX));
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
