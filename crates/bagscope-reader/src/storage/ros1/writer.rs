//! Writing format 2.0 bags with a complete index. The bag is written to a temporary file beside
//! the target and renamed into place by [`BagWriter::finish`]; dropped unfinished, it leaves
//! nothing behind.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::storage::compression;
use crate::storage::compression::Compression;
use crate::storage::output::Staged;
use crate::storage::ros1::record::{self, op, put_field, put_record, split_ns};

/// Options of a [`BagWriter`].
#[derive(Debug, Clone, Copy)]
pub struct WriteOptions {
    /// Chunk compression.
    pub compression: Compression,
    /// Uncompressed bytes at which a chunk is closed (rosbag's default is 768 KiB).
    pub chunk_size: usize,
}

impl Default for WriteOptions {
    fn default() -> Self {
        WriteOptions {
            compression: Compression::None,
            chunk_size: 768 * 1024,
        }
    }
}

/// What describes a connection to the writer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConnectionSpec {
    /// Topic name.
    pub topic: String,
    /// Message type, `pkg/Type`.
    pub datatype: String,
    /// md5sum of the type.
    pub md5sum: String,
    /// Full message definition.
    pub message_definition: String,
    /// Publishing node.
    pub callerid: Option<String>,
    /// Latching publisher.
    pub latching: bool,
}

struct ChunkInfo {
    pos: u64,
    start: u64,
    end: u64,
    counts: BTreeMap<u32, u32>,
}

/// Writes a format 2.0 bag: under a temporary name beside the target, renamed into place by
/// [`BagWriter::finish`] (dropped unfinished, it leaves nothing).
///
/// ```
/// use bagscope_reader::{Bag, BagWriter, Compression, ConnectionSpec, Filter, WriteOptions};
///
/// let dir = std::env::temp_dir().join(format!("bagscope-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// let path = dir.join("out.bag");
/// let opts = WriteOptions { compression: Compression::Lz4, ..Default::default() };
/// let mut w = BagWriter::create(&path, opts)?;
/// let c = w.add_connection(ConnectionSpec {
///     topic: "/speed".into(),
///     datatype: "std_msgs/Float64".into(),
///     md5sum: "fdb28210bfa9d7c91146260178d9a584".into(),
///     message_definition: "float64 data\n".into(),
///     ..Default::default()
/// });
/// for i in 0..3u64 {
///     w.write(c, 1_700_000_000_000_000_000 + i, &(i as f64).to_le_bytes())?;
/// }
/// w.finish()?;
///
/// let bag = Bag::open(&path)?;
/// assert_eq!(bag.summary().message_count, 3);
/// let last = bag.messages(&Filter::default())?.last().unwrap()?;
/// assert_eq!(&last.data[..], &2.0f64.to_le_bytes());
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), bagscope_reader::Error>(())
/// ```
pub struct BagWriter {
    out: Option<BufWriter<File>>,
    staged: Staged,
    opts: WriteOptions,
    conns: Vec<(ConnectionSpec, Vec<u8>)>,
    written_conn: Vec<bool>,
    chunk: Vec<u8>,
    chunk_index: BTreeMap<u32, Vec<u8>>,
    chunk_counts: BTreeMap<u32, u32>,
    chunk_start: u64,
    chunk_end: u64,
    infos: Vec<ChunkInfo>,
    pos: u64,
    messages: u64,
}

fn conn_record(id: u32, c: &ConnectionSpec) -> Vec<u8> {
    let mut h = Vec::new();
    put_field(&mut h, "op", &[op::CONNECTION]);
    put_field(&mut h, "conn", &id.to_le_bytes());
    put_field(&mut h, "topic", c.topic.as_bytes());
    let mut d = Vec::new();
    put_field(&mut d, "topic", c.topic.as_bytes());
    put_field(&mut d, "type", c.datatype.as_bytes());
    put_field(&mut d, "md5sum", c.md5sum.as_bytes());
    put_field(
        &mut d,
        "message_definition",
        c.message_definition.as_bytes(),
    );
    if let Some(cid) = &c.callerid {
        put_field(&mut d, "callerid", cid.as_bytes());
    }
    if c.latching {
        put_field(&mut d, "latching", b"1");
    }
    let mut r = Vec::new();
    put_record(&mut r, &h, &d);
    r
}

fn time_bytes(ns: u64) -> [u8; 8] {
    let (s, n) = split_ns(ns);
    let mut b = [0u8; 8];
    b[..4].copy_from_slice(&s.to_le_bytes());
    b[4..].copy_from_slice(&n.to_le_bytes());
    b
}

fn bag_header(index_pos: u64, conn_count: u32, chunk_count: u32) -> Vec<u8> {
    let mut h = Vec::new();
    put_field(&mut h, "op", &[op::BAG_HEADER]);
    put_field(&mut h, "index_pos", &index_pos.to_le_bytes());
    put_field(&mut h, "conn_count", &conn_count.to_le_bytes());
    put_field(&mut h, "chunk_count", &chunk_count.to_le_bytes());
    // Padded so the whole record is 4096 bytes, as rosbag does.
    let pad = 4096 - 8 - h.len();
    let mut r = Vec::with_capacity(4096);
    put_record(&mut r, &h, &vec![b' '; pad]);
    r
}

/// Flushes a finished file, syncs it and renames it into place (see [`Staged::commit`]).
pub(crate) fn commit(out: BufWriter<File>, staged: &Staged) -> Result<()> {
    let file = out.into_inner().map_err(|e| Error::Io(e.into_error()))?;
    staged.commit(file)
}

impl BagWriter {
    /// Starts writing a bag that will appear at `target` when finished.
    pub fn create(target: impl AsRef<Path>, opts: WriteOptions) -> Result<BagWriter> {
        BagWriter::create_via(Staged::new(target.as_ref()), opts)
    }

    /// Starts writing a recording from a live system: written as `target.active` (the name
    /// `rosbag record` uses) and renamed to `target` when finished. A recorder killed before
    /// then leaves the `.active` file with every chunk [`BagWriter::flush`] closed, which
    /// bagscope reads (and `export` rewrites) without its index.
    pub fn create_active(target: impl AsRef<Path>, opts: WriteOptions) -> Result<BagWriter> {
        BagWriter::create_via(Staged::active(target.as_ref()), opts)
    }

    fn create_via(staged: Staged, opts: WriteOptions) -> Result<BagWriter> {
        if opts.chunk_size == 0 {
            return Err(Error::Invalid("chunk size must be positive".into()));
        }
        let file = staged.create()?;
        let mut w = BagWriter {
            out: Some(BufWriter::with_capacity(1 << 20, file)),
            staged,
            opts,
            conns: Vec::new(),
            written_conn: Vec::new(),
            chunk: Vec::with_capacity(opts.chunk_size + 65536),
            chunk_index: BTreeMap::new(),
            chunk_counts: BTreeMap::new(),
            chunk_start: u64::MAX,
            chunk_end: 0,
            infos: Vec::new(),
            pos: 0,
            messages: 0,
        };
        w.write_raw(record::MAGIC_V2)?;
        w.write_raw(&bag_header(0, 0, 0))?;
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

    /// Adds a connection and returns its id.
    pub fn add_connection(&mut self, spec: ConnectionSpec) -> u32 {
        let id = self.conns.len() as u32;
        let rec = conn_record(id, &spec);
        self.conns.push((spec, rec));
        self.written_conn.push(false);
        id
    }

    /// Writes one message of connection `conn` received at `time_ns`.
    pub fn write(&mut self, conn: u32, time_ns: u64, data: &[u8]) -> Result<()> {
        let ci = conn as usize;
        if ci >= self.conns.len() {
            return Err(Error::Invalid(format!("no connection {conn} was added")));
        }
        if !self.written_conn[ci] {
            // A connection record precedes the connection's first message, inside the chunk.
            self.written_conn[ci] = true;
            let rec = self.conns[ci].1.clone();
            self.chunk.extend_from_slice(&rec);
        }
        let offset = u32::try_from(self.chunk.len())
            .map_err(|_| Error::Invalid("chunk grew past 4 GiB".into()))?;
        let tb = time_bytes(time_ns);
        let mut h = Vec::with_capacity(40);
        put_field(&mut h, "op", &[op::MSG_DATA]);
        put_field(&mut h, "conn", &conn.to_le_bytes());
        put_field(&mut h, "time", &tb);
        put_record(&mut self.chunk, &h, data);
        let idx = self.chunk_index.entry(conn).or_default();
        idx.extend_from_slice(&tb);
        idx.extend_from_slice(&offset.to_le_bytes());
        *self.chunk_counts.entry(conn).or_insert(0) += 1;
        self.chunk_start = self.chunk_start.min(time_ns);
        self.chunk_end = self.chunk_end.max(time_ns);
        self.messages += 1;
        if self.chunk.len() >= self.opts.chunk_size {
            self.flush_chunk()?;
        }
        Ok(())
    }

    /// Closes the open chunk and hands everything written so far to the operating system (a
    /// process killed after this loses none of it).
    pub fn flush(&mut self) -> Result<()> {
        self.flush_chunk()?;
        if let Some(out) = self.out.as_mut() {
            out.flush()?;
        }
        Ok(())
    }

    /// Messages written so far.
    pub fn message_count(&self) -> u64 {
        self.messages
    }

    fn flush_chunk(&mut self) -> Result<()> {
        if self.chunk_counts.is_empty() && self.chunk.is_empty() {
            return Ok(());
        }
        let chunk_pos = self.pos;
        let data = compression::compress(self.opts.compression, &self.chunk)?;
        let mut h = Vec::new();
        put_field(&mut h, "op", &[op::CHUNK]);
        put_field(
            &mut h,
            "compression",
            self.opts.compression.name().as_bytes(),
        );
        put_field(&mut h, "size", &(self.chunk.len() as u32).to_le_bytes());
        let mut rec = Vec::with_capacity(data.len() + h.len() + 8);
        put_record(&mut rec, &h, &data);
        let index = std::mem::take(&mut self.chunk_index);
        for (conn, entries) in &index {
            let mut ih = Vec::new();
            put_field(&mut ih, "op", &[op::INDEX_DATA]);
            put_field(&mut ih, "ver", &1u32.to_le_bytes());
            put_field(&mut ih, "conn", &conn.to_le_bytes());
            put_field(
                &mut ih,
                "count",
                &((entries.len() / 12) as u32).to_le_bytes(),
            );
            put_record(&mut rec, &ih, entries);
        }
        self.write_raw(&rec)?;
        self.infos.push(ChunkInfo {
            pos: chunk_pos,
            start: self.chunk_start,
            end: self.chunk_end,
            counts: std::mem::take(&mut self.chunk_counts),
        });
        self.chunk.clear();
        self.chunk_start = u64::MAX;
        self.chunk_end = 0;
        Ok(())
    }

    /// Closes the last chunk, writes the index and renames the bag into place.
    pub fn finish(mut self) -> Result<PathBuf> {
        self.flush_chunk()?;
        let index_pos = self.pos;
        let mut idx = Vec::new();
        for (_, rec) in &self.conns {
            idx.extend_from_slice(rec);
        }
        for ci in &self.infos {
            let mut h = Vec::new();
            put_field(&mut h, "op", &[op::CHUNK_INFO]);
            put_field(&mut h, "ver", &1u32.to_le_bytes());
            put_field(&mut h, "chunk_pos", &ci.pos.to_le_bytes());
            put_field(&mut h, "start_time", &time_bytes(ci.start));
            put_field(&mut h, "end_time", &time_bytes(ci.end));
            put_field(&mut h, "count", &(ci.counts.len() as u32).to_le_bytes());
            let mut d = Vec::new();
            for (c, n) in &ci.counts {
                d.extend_from_slice(&c.to_le_bytes());
                d.extend_from_slice(&n.to_le_bytes());
            }
            put_record(&mut idx, &h, &d);
        }
        self.write_raw(&idx)?;
        let header = bag_header(index_pos, self.conns.len() as u32, self.infos.len() as u32);
        let mut out = self
            .out
            .take()
            .ok_or_else(|| Error::Invalid("writer already finished".into()))?;
        out.seek(SeekFrom::Start(record::MAGIC_V2.len() as u64))?;
        out.write_all(&header)?;
        commit(out, &self.staged)?;
        Ok(self.staged.target().to_path_buf())
    }
}

impl Drop for BagWriter {
    fn drop(&mut self) {
        if self.out.take().is_some() {
            self.staged.discard();
        }
    }
}
