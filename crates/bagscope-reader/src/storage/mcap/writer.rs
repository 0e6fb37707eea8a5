//! Writing MCAP files: chunked (none, lz4 or zstd), each chunk followed by its message index
//! records, then a full summary (schemas, channels, statistics, chunk indexes, metadata
//! indexes, summary offsets) and the footer, so that readers open it from the summary alone.
//! The file is written to a temporary path beside the target and renamed into place by
//! [`McapWriter::finish`]; dropped unfinished, it leaves nothing behind.

use crate::storage::output::Staged;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::storage::compression::Compression;
use crate::storage::mcap::{opcode, MAGIC};

/// Options of an [`McapWriter`].
#[derive(Debug, Clone)]
pub struct McapOptions {
    /// Chunk compression: none, lz4 or zstd.
    pub compression: Compression,
    /// Uncompressed bytes at which a chunk is closed.
    pub chunk_size: usize,
    /// The header's profile (`ros1`, `ros2`, or empty).
    pub profile: String,
    /// Threads: `1` compresses every chunk on the writing thread; otherwise a chunk is
    /// compressed on a thread of its own while the next one fills (the default, `0`).
    pub threads: usize,
}

impl Default for McapOptions {
    fn default() -> Self {
        McapOptions {
            compression: Compression::Zstd,
            chunk_size: 1 << 20,
            profile: String::new(),
            threads: 0,
        }
    }
}

fn put_str(b: &mut Vec<u8>, s: &str) {
    b.extend_from_slice(&(s.len() as u32).to_le_bytes());
    b.extend_from_slice(s.as_bytes());
}

fn put_map(b: &mut Vec<u8>, m: &[(String, String)]) {
    let mut inner = Vec::new();
    for (k, v) in m {
        put_str(&mut inner, k);
        put_str(&mut inner, v);
    }
    b.extend_from_slice(&(inner.len() as u32).to_le_bytes());
    b.extend_from_slice(&inner);
}

fn put_record(out: &mut Vec<u8>, op: u8, content: &[u8]) {
    out.push(op);
    out.extend_from_slice(&(content.len() as u64).to_le_bytes());
    out.extend_from_slice(content);
}

struct ChunkIndex {
    start: u64,
    end: u64,
    pos: u64,
    len: u64,
    offsets: Vec<(u16, u64)>,
    mi_len: u64,
    compressed: u64,
    uncompressed: u64,
}

/// Writes an MCAP file.
pub struct McapWriter {
    out: Option<BufWriter<File>>,
    staged: Staged,
    opts: McapOptions,
    pos: u64,
    schemas: Vec<Vec<u8>>,
    channels: Vec<Vec<u8>>,
    chunk: Vec<u8>,
    chunk_index: BTreeMap<u16, Vec<u8>>,
    chunk_times: (u64, u64),
    chunk_indexes: Vec<ChunkIndex>,
    metadata: Vec<(u64, u64, String)>,
    counts: BTreeMap<u16, u64>,
    times: (u64, u64),
    messages: u64,
    /// Chunks being compressed on other threads, oldest first (written in this order).
    pending: std::collections::VecDeque<PendingChunk>,
}

/// A chunk handed to a compressing thread, with what its records need once it is written.
struct PendingChunk {
    compressed: std::thread::JoinHandle<Result<Vec<u8>>>,
    uncompressed: u64,
    times: (u64, u64),
    index: BTreeMap<u16, Vec<u8>>,
}

/// Chunks compressed at once on other threads while the next one fills.
const IN_FLIGHT: usize = 2;

impl McapWriter {
    /// Starts writing an MCAP file that will appear at `target` when finished.
    pub fn create(target: impl AsRef<Path>, opts: McapOptions) -> Result<McapWriter> {
        McapWriter::create_via(Staged::new(target.as_ref()), opts)
    }

    /// Starts writing a recording from a live system: written as `target.active` and renamed
    /// to `target` when finished; a recorder killed before then leaves the `.active` file with
    /// every chunk [`McapWriter::flush`] closed, which bagscope reads without its summary.
    pub fn create_active(target: impl AsRef<Path>, opts: McapOptions) -> Result<McapWriter> {
        McapWriter::create_via(Staged::active(target.as_ref()), opts)
    }

    /// Closes the open chunk and hands everything written so far to the operating system.
    pub fn flush(&mut self) -> Result<()> {
        self.flush_chunk()?;
        // Chunks still being compressed on other threads are written first.
        self.drain()?;
        if let Some(out) = self.out.as_mut() {
            out.flush()?;
        }
        Ok(())
    }

    fn create_via(staged: Staged, opts: McapOptions) -> Result<McapWriter> {
        if opts.chunk_size == 0 {
            return Err(Error::Invalid("chunk size must be positive".into()));
        }
        if opts.compression == Compression::Bz2 {
            return Err(Error::Invalid(
                "MCAP chunks are none, lz4 or zstd, not bz2".into(),
            ));
        }
        let file = staged.create().map_err(|e| Error::Open {
            path: staged.path().to_path_buf(),
            source: e,
        })?;
        let mut w = McapWriter {
            out: Some(BufWriter::with_capacity(1 << 20, file)),
            staged,
            opts,
            pos: 0,
            schemas: Vec::new(),
            channels: Vec::new(),
            chunk: Vec::new(),
            chunk_index: BTreeMap::new(),
            chunk_times: (u64::MAX, 0),
            chunk_indexes: Vec::new(),
            metadata: Vec::new(),
            counts: BTreeMap::new(),
            times: (u64::MAX, 0),
            messages: 0,
            pending: Default::default(),
        };
        let mut head = MAGIC.to_vec();
        let mut h = Vec::new();
        put_str(&mut h, &w.opts.profile.clone());
        put_str(&mut h, concat!("bagscope ", env!("CARGO_PKG_VERSION")));
        put_record(&mut head, opcode::HEADER, &h);
        w.write_raw(&head)?;
        Ok(w)
    }

    fn write_raw(&mut self, b: &[u8]) -> Result<()> {
        let out = self
            .out
            .as_mut()
            .ok_or_else(|| Error::Invalid("writer already finished".into()))?;
        out.write_all(b)?;
        self.pos += b.len() as u64;
        Ok(())
    }

    /// Adds a schema (`encoding`: `ros1msg`, `ros2msg`, ...) and returns its id (from 1).
    pub fn add_schema(&mut self, name: &str, encoding: &str, data: &[u8]) -> Result<u16> {
        let id = u16::try_from(self.schemas.len() + 1)
            .map_err(|_| Error::Invalid("more than 65,535 schemas".into()))?;
        let mut c = id.to_le_bytes().to_vec();
        put_str(&mut c, name);
        put_str(&mut c, encoding);
        c.extend_from_slice(&(data.len() as u32).to_le_bytes());
        c.extend_from_slice(data);
        let mut r = Vec::new();
        put_record(&mut r, opcode::SCHEMA, &c);
        // Schemas and channels go in the data section (where a reader scanning meets them
        // first) and again in the summary.
        self.write_raw(&r)?;
        self.schemas.push(r);
        Ok(id)
    }

    /// Adds a channel on `schema` (0: none) and returns its id (from 0).
    pub fn add_channel(
        &mut self,
        schema: u16,
        topic: &str,
        message_encoding: &str,
        metadata: &[(String, String)],
    ) -> Result<u16> {
        let id = u16::try_from(self.channels.len())
            .map_err(|_| Error::Invalid("more than 65,536 channels".into()))?;
        let mut c = id.to_le_bytes().to_vec();
        c.extend_from_slice(&schema.to_le_bytes());
        put_str(&mut c, topic);
        put_str(&mut c, message_encoding);
        put_map(&mut c, metadata);
        let mut r = Vec::new();
        put_record(&mut r, opcode::CHANNEL, &c);
        self.write_raw(&r)?;
        self.channels.push(r);
        Ok(id)
    }

    /// Adds a message on `channel`.
    pub fn write(
        &mut self,
        channel: u16,
        sequence: u32,
        log_time: u64,
        publish_time: u64,
        data: &[u8],
    ) -> Result<()> {
        if usize::from(channel) >= self.channels.len() {
            return Err(Error::Invalid(format!("no channel {channel}")));
        }
        let offset = self.chunk.len() as u64;
        // The record written in place: opcode, length, then the message's fields and bytes.
        let c = &mut self.chunk;
        c.push(opcode::MESSAGE);
        c.extend_from_slice(&(22 + data.len() as u64).to_le_bytes());
        c.extend_from_slice(&channel.to_le_bytes());
        c.extend_from_slice(&sequence.to_le_bytes());
        c.extend_from_slice(&log_time.to_le_bytes());
        c.extend_from_slice(&publish_time.to_le_bytes());
        c.extend_from_slice(data);
        let idx = self.chunk_index.entry(channel).or_default();
        idx.extend_from_slice(&log_time.to_le_bytes());
        idx.extend_from_slice(&offset.to_le_bytes());
        self.chunk_times.0 = self.chunk_times.0.min(log_time);
        self.chunk_times.1 = self.chunk_times.1.max(log_time);
        self.times.0 = self.times.0.min(log_time);
        self.times.1 = self.times.1.max(log_time);
        *self.counts.entry(channel).or_insert(0) += 1;
        self.messages += 1;
        if self.chunk.len() >= self.opts.chunk_size {
            self.flush_chunk()?;
        }
        Ok(())
    }

    /// Adds a metadata record (name and key/value pairs).
    pub fn add_metadata(&mut self, name: &str, pairs: &[(String, String)]) -> Result<()> {
        self.flush_chunk()?;
        self.drain()?;
        let mut c = Vec::new();
        put_str(&mut c, name);
        put_map(&mut c, pairs);
        let mut r = Vec::new();
        put_record(&mut r, opcode::METADATA, &c);
        let pos = self.pos;
        self.write_raw(&r)?;
        self.metadata.push((pos, r.len() as u64, name.to_string()));
        Ok(())
    }

    fn flush_chunk(&mut self) -> Result<()> {
        if self.chunk.is_empty() {
            return Ok(());
        }
        let records = std::mem::take(&mut self.chunk);
        let times = std::mem::replace(&mut self.chunk_times, (u64::MAX, 0));
        let index = std::mem::take(&mut self.chunk_index);
        let uncompressed = records.len() as u64;
        let compression = self.opts.compression;
        if compression == Compression::None {
            self.drain()?;
            return self.write_chunk(&records, uncompressed, times, index);
        }
        if self.opts.threads == 1 {
            self.drain()?;
            let compressed = crate::storage::compression::compress(compression, &records)?;
            return self.write_chunk(&compressed, uncompressed, times, index);
        }
        // Compressed on another thread while the next chunk fills; written in order.
        let compressed = std::thread::Builder::new()
            .name("bagscope-mcap-compress".into())
            .spawn(move || crate::storage::compression::compress(compression, &records))?;
        self.pending.push_back(PendingChunk {
            compressed,
            uncompressed,
            times,
            index,
        });
        while self.pending.len() > IN_FLIGHT {
            self.write_oldest()?;
        }
        Ok(())
    }

    /// Waits for the oldest chunk being compressed and writes it.
    fn write_oldest(&mut self) -> Result<()> {
        let Some(p) = self.pending.pop_front() else {
            return Ok(());
        };
        let compressed = p
            .compressed
            .join()
            .map_err(|_| Error::ThreadPanicked("a chunk-compressing thread"))??;
        self.write_chunk(&compressed, p.uncompressed, p.times, p.index)
    }

    /// Writes every chunk still being compressed.
    fn drain(&mut self) -> Result<()> {
        while !self.pending.is_empty() {
            self.write_oldest()?;
        }
        Ok(())
    }

    /// Writes a chunk record and its message indexes.
    fn write_chunk(
        &mut self,
        compressed: &[u8],
        uncompressed: u64,
        times: (u64, u64),
        index: BTreeMap<u16, Vec<u8>>,
    ) -> Result<()> {
        let comp_name = match self.opts.compression {
            Compression::None => "",
            Compression::Lz4 => "lz4",
            _ => "zstd",
        };
        let mut c = Vec::with_capacity(compressed.len() + 64);
        c.extend_from_slice(&times.0.to_le_bytes());
        c.extend_from_slice(&times.1.to_le_bytes());
        c.extend_from_slice(&uncompressed.to_le_bytes());
        c.extend_from_slice(&0u32.to_le_bytes()); // no CRC
        put_str(&mut c, comp_name);
        c.extend_from_slice(&(compressed.len() as u64).to_le_bytes());
        c.extend_from_slice(compressed);
        let mut r = Vec::new();
        put_record(&mut r, opcode::CHUNK, &c);
        let chunk_pos = self.pos;
        self.write_raw(&r)?;
        let chunk_len = r.len() as u64;
        // Message indexes, one per channel.
        let mut offsets = Vec::new();
        let mi_start = self.pos;
        let mut mi = Vec::new();
        for (ch, entries) in index {
            offsets.push((ch, mi_start + mi.len() as u64));
            let mut m = ch.to_le_bytes().to_vec();
            m.extend_from_slice(&(entries.len() as u32).to_le_bytes());
            m.extend_from_slice(&entries);
            put_record(&mut mi, opcode::MESSAGE_INDEX, &m);
        }
        self.write_raw(&mi)?;
        self.chunk_indexes.push(ChunkIndex {
            start: times.0,
            end: times.1,
            pos: chunk_pos,
            len: chunk_len,
            offsets,
            mi_len: mi.len() as u64,
            compressed: compressed.len() as u64,
            uncompressed,
        });
        Ok(())
    }

    /// Messages written so far.
    pub fn message_count(&self) -> u64 {
        self.messages
    }

    /// Closes the last chunk, writes the summary and footer and renames the file into place.
    pub fn finish(mut self) -> Result<PathBuf> {
        self.flush_chunk()?;
        self.drain()?;
        let mut data_end = Vec::new();
        put_record(&mut data_end, opcode::DATA_END, &0u32.to_le_bytes());
        self.write_raw(&data_end)?;
        let summary_start = self.pos;
        let mut groups: Vec<(u8, u64, u64)> = Vec::new();
        let mut summary = Vec::new();
        let mut group = |summary: &mut Vec<u8>, op: u8, records: &[Vec<u8>]| {
            if records.is_empty() {
                return;
            }
            let start = summary_start + summary.len() as u64;
            for r in records {
                summary.extend_from_slice(r);
            }
            groups.push((op, start, summary_start + summary.len() as u64 - start));
        };
        group(&mut summary, opcode::SCHEMA, &self.schemas);
        group(&mut summary, opcode::CHANNEL, &self.channels);
        let mut st = Vec::new();
        st.extend_from_slice(&self.messages.to_le_bytes());
        st.extend_from_slice(&(self.schemas.len() as u16).to_le_bytes());
        st.extend_from_slice(&(self.channels.len() as u32).to_le_bytes());
        st.extend_from_slice(&0u32.to_le_bytes()); // attachments
        st.extend_from_slice(&(self.metadata.len() as u32).to_le_bytes());
        st.extend_from_slice(&(self.chunk_indexes.len() as u32).to_le_bytes());
        let (t0, t1) = if self.messages == 0 {
            (0, 0)
        } else {
            self.times
        };
        st.extend_from_slice(&t0.to_le_bytes());
        st.extend_from_slice(&t1.to_le_bytes());
        let mut counts = Vec::new();
        for (ch, n) in &self.counts {
            counts.extend_from_slice(&ch.to_le_bytes());
            counts.extend_from_slice(&n.to_le_bytes());
        }
        st.extend_from_slice(&(counts.len() as u32).to_le_bytes());
        st.extend_from_slice(&counts);
        let mut r = Vec::new();
        put_record(&mut r, opcode::STATISTICS, &st);
        group(&mut summary, opcode::STATISTICS, &[r]);
        let comp_name = match self.opts.compression {
            Compression::None => "",
            Compression::Lz4 => "lz4",
            _ => "zstd",
        };
        let cis: Vec<Vec<u8>> = self
            .chunk_indexes
            .iter()
            .map(|ci| {
                let mut c = Vec::new();
                c.extend_from_slice(&ci.start.to_le_bytes());
                c.extend_from_slice(&ci.end.to_le_bytes());
                c.extend_from_slice(&ci.pos.to_le_bytes());
                c.extend_from_slice(&ci.len.to_le_bytes());
                let mut m = Vec::new();
                for (ch, off) in &ci.offsets {
                    m.extend_from_slice(&ch.to_le_bytes());
                    m.extend_from_slice(&off.to_le_bytes());
                }
                c.extend_from_slice(&(m.len() as u32).to_le_bytes());
                c.extend_from_slice(&m);
                c.extend_from_slice(&ci.mi_len.to_le_bytes());
                put_str(&mut c, comp_name);
                c.extend_from_slice(&ci.compressed.to_le_bytes());
                c.extend_from_slice(&ci.uncompressed.to_le_bytes());
                let mut r = Vec::new();
                put_record(&mut r, opcode::CHUNK_INDEX, &c);
                r
            })
            .collect();
        group(&mut summary, opcode::CHUNK_INDEX, &cis);
        let metadata_indexes: Vec<Vec<u8>> = self
            .metadata
            .iter()
            .map(|(pos, len, name)| {
                let mut c = Vec::new();
                c.extend_from_slice(&pos.to_le_bytes());
                c.extend_from_slice(&len.to_le_bytes());
                put_str(&mut c, name);
                let mut r = Vec::new();
                put_record(&mut r, opcode::METADATA_INDEX, &c);
                r
            })
            .collect();
        group(&mut summary, opcode::METADATA_INDEX, &metadata_indexes);
        let summary_offset_start = summary_start + summary.len() as u64;
        for (op, start, len) in &groups {
            let mut c = vec![*op];
            c.extend_from_slice(&start.to_le_bytes());
            c.extend_from_slice(&len.to_le_bytes());
            put_record(&mut summary, opcode::SUMMARY_OFFSET, &c);
        }
        let mut footer = Vec::new();
        footer.extend_from_slice(&summary_start.to_le_bytes());
        footer.extend_from_slice(&summary_offset_start.to_le_bytes());
        footer.extend_from_slice(&0u32.to_le_bytes()); // no CRC
        put_record(&mut summary, opcode::FOOTER, &footer);
        summary.extend_from_slice(MAGIC);
        self.write_raw(&summary)?;
        let out = self
            .out
            .take()
            .ok_or_else(|| Error::Invalid("writer already finished".into()))?;
        crate::storage::ros1::writer::commit(out, &self.staged)?;
        Ok(self.staged.target().to_path_buf())
    }
}

impl Drop for McapWriter {
    fn drop(&mut self) {
        if self.out.take().is_some() {
            self.staged.discard();
        }
    }
}
