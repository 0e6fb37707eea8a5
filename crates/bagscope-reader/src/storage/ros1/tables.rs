//! Building the message tables of an indexed bag from the index data records that follow
//! each chunk. A chunk whose index data is unusable is decompressed and its records scanned.

use super::{parse_index_region, scan_chunk_records};
use crate::error::{Error, Result};
use crate::storage::ros1::record::INDEX_ENTRY_V1;
use crate::storage::{read_at_into, ChunkEntries, IndexEntry, MessageTables, TablesProgress};
use crate::storage::{ChunkLayout, ChunkReader};

/// Builds the tables; see `Bag::build_tables`.
pub(crate) fn build(
    bag: &dyn ChunkReader,
    want: &dyn Fn(usize) -> bool,
    progress: &mut dyn FnMut(TablesProgress, &ChunkEntries) -> bool,
) -> Result<MessageTables> {
    let s = bag.summary();
    let conn_index = s.connection_index();
    let mut per_connection: Vec<Vec<IndexEntry>> = s
        .connections
        .iter()
        // Counts come from the file: reserve no more than its bytes can hold (12 per entry).
        .map(|c| {
            Vec::with_capacity(c.message_count.min(s.file_size / INDEX_ENTRY_V1 as u64) as usize)
        })
        .collect();
    let mut warnings = Vec::new();
    let mut bytes_done = 0u64;
    let mut ce = ChunkEntries {
        chunk: 0,
        entries: Vec::new(),
    };
    let todo: Vec<usize> = (0..s.chunks.len()).filter(|&i| want(i)).collect();
    if u32::try_from(s.chunks.len()).is_err() {
        return Err(Error::Limit {
            what: "chunks",
            count: s.chunks.len() as u64,
            limit: u64::from(u32::MAX),
        });
    }
    let (file, index_pos) = (bag.file(), bag.index_pos());
    // Chunks are in file order; the index data of chunk i lies between its data and the next
    // chunk (or the index section). Read ahead on reader threads (with the chunk's header
    // where the summary has not read it yet), parsed here in chunk order. A chunk header that
    // cannot be read fails the build, as it did the summary; index data that cannot be read
    // is rebuilt from the chunk.
    type Read = (ChunkLayout, u64, u64, std::io::Result<()>);
    let read_index = |j: usize, region: &mut Vec<u8>| -> Result<Read> {
        let i = todo[j];
        let ch = &s.chunks[i];
        let layout = match ch.layout() {
            Some(l) => l,
            None => super::read_chunk_layout(file, ch.pos, index_pos)?,
        };
        let start = layout.data_pos + layout.data_len;
        let end = s.chunks.get(i + 1).map_or(index_pos, |n| n.pos).max(start);
        let expected_bytes =
            ch.message_count() * INDEX_ENTRY_V1 as u64 + ch.counts.len() as u64 * 128;
        let want = (end - start).min(expected_bytes + 65536);
        let read = read_at_into(file, start, want as usize, region);
        Ok((layout, start, end, read))
    };
    super::super::read_ahead_on(
        bag.file().is_remote(),
        bag.options().single_threaded(),
        todo.len(),
        read_index,
        |j, read, region| {
            let i = todo[j];
            let chunk = i as u32;
            let ch = &s.chunks[i];
            let (layout, start, end, read) = read?;
            // One buffer for every chunk's entries: a fresh one each (a few hundred KB) cost more
            // in page clearing than the parsing.
            let entries = &mut ce.entries;
            entries.clear();
            entries.reserve(
                ch.message_count()
                    .min(region.len() as u64 / INDEX_ENTRY_V1 as u64) as usize,
            );
            let parsed = read.map_err(Error::from).and_then(|()| {
                parse_index_region(region, start, chunk, &conn_index, &ch.counts, entries)
            });
            match parsed {
                Ok(consumed) => {
                    let left = end - start - consumed as u64;
                    if left > 0 {
                        warnings.push(format!(
                        "{left} bytes of unexplained data at byte {} (after the index data of the chunk at byte {}, before byte {end}); ignored",
                        start + consumed as u64,
                        ch.pos
                    ));
                    }
                }
                Err(e) => {
                    entries.clear();
                    let mut unknown = 0usize;
                    let r = bag.chunk_data(i).and_then(|data| {
                        scan_chunk_records(
                            &data,
                            ch.pos,
                            chunk,
                            |_| {},
                            |id, e| match conn_index.get(&id) {
                                Some(&ci) => entries.push((ci, e)),
                                None => unknown += 1,
                            },
                        )
                    });
                    let mut w = format!(
                    "index data of the chunk at byte {} is unusable ({e}); rebuilt its {} entries from the chunk's records",
                    ch.pos,
                    entries.len()
                );
                    if let Err(e2) = r {
                        w.push_str(&format!(", which stop early: {e2}"));
                    }
                    if unknown > 0 {
                        w.push_str(&format!(
                        "; {unknown} messages name connections the index does not define and are left out"
                    ));
                    }
                    if entries.len() as u64 != ch.message_count() {
                        w.push_str(&format!(
                            "; the chunk info counts {} messages",
                            ch.message_count()
                        ));
                    }
                    warnings.push(w);
                }
            }
            bytes_done += layout.data_len;
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
    for v in &mut t.per_connection {
        v.shrink_to_fit();
    }
    Ok(t)
}
