//! `bagscope gen-sparse OUT --size 1T`: writes a *sparse* benchmark recording for the Scale
//! figures: a real, complete index for every message, real message records for the small
//! topics, and camera images whose pixels are left as holes in the file, so that a 1 TB
//! recording of 200,000,000 messages takes about 15 GB of disk and is made in minutes.
//!
//! The recording: 100 topics over `messages / 20,000` seconds (one message every 50 µs):
//! ten `/camera_K/image_raw` topics (`sensor_msgs/Image`, mono8, one image per camera per
//! chunk, its pixels a hole), 45 `/sensor_KK/value` (`std_msgs/Float64`) and 45
//! `/sensor_KK/point` (`geometry_msgs/Point`) topics in turn. Every chunk is uncompressed and
//! about `--chunk` bytes long; it is followed by its index (ROS 1: index data records; MCAP:
//! message index records), and the file ends with a full index (ROS 1: connections and chunk
//! infos; MCAP: schemas, channels, statistics, chunk indexes, summary offsets). Every message
//! decodes: image headers and sizes are real, only the pixel bytes are zeros. Both files are
//! written to a temporary path and renamed into place.

use std::fs::File;
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use crate::{cli::Error, cli::Result};
use bagscope_reader::definition::msg::{Dialect, MsgDef};
use bagscope_reader::definition::sources::lookup;
use bagscope_reader::encoding::Plan;
use bagscope_reader::storage::ros1::record::{put_field, put_record};

/// Start time of the generated recordings (2026-01-01T00:00:00Z).
const T0: u64 = 1_767_225_600_000_000_000;
/// One message every 50 µs, over all topics.
const STEP_NS: u64 = 50_000;
const CAMERAS: usize = 10;
const TOPICS: usize = 100;
/// Image width; the height follows from the image size.
const WIDTH: u64 = 2048;

/// What to generate.
#[derive(Debug, Clone)]
pub struct SparseArgs {
    pub out: PathBuf,
    /// "bag", "mcap" or "rosbag2-sqlite3" (not sparse: every row is written).
    pub format: String,
    /// Apparent size in bytes.
    pub size: u64,
    /// Messages; 0: 200,000,000 per TiB of `size`.
    pub messages: u64,
    /// Bytes per chunk (uncompressed).
    pub chunk: u64,
    /// Leave the index out, as a recording that was cut off does (ROS 1: index_pos 0 and no
    /// chunk infos; MCAP: no summary section and no footer).
    pub no_index: bool,
}

/// Parses `1T`, `100G`, `512M`, `4096`.
pub fn parse_size(s: &str) -> std::result::Result<u64, bagscope_ops::timefmt::ArgError> {
    let s = s.trim();
    let err = |reason: String| bagscope_ops::timefmt::ArgError::new("size", s, reason);
    let (num, mul) = match s.char_indices().last() {
        Some((i, 'k' | 'K')) => (&s[..i], 1u64 << 10),
        Some((i, 'm' | 'M')) => (&s[..i], 1 << 20),
        Some((i, 'g' | 'G')) => (&s[..i], 1 << 30),
        Some((i, 't' | 'T')) => (&s[..i], 1 << 40),
        _ => (s, 1),
    };
    let n: f64 = num
        .parse()
        .map_err(|_| err(format!("{s:?} is not a size (examples: 1T, 100G, 512M)")))?;
    if !(n.is_finite() && n > 0.0) {
        return Err(err(format!("{s:?} is not a positive size")));
    }
    Ok((n * mul as f64) as u64)
}

struct Topic {
    name: String,
    datatype: &'static str,
    definition: String,
    md5: String,
}

fn topics() -> Result<Vec<Topic>> {
    let def = |t: &'static str| -> Result<(String, String)> {
        let (text, _) = lookup(t, Dialect::Ros1, &[])
            .ok_or_else(|| Error::Invalid(format!("no shipped definition of {t}")))?;
        let md5 = MsgDef::parse(t, &text)
            .map(|d| Plan::new(d).md5)
            .map_err(|e| Error::Invalid(format!("{t}: {e}")))?;
        Ok((text, md5))
    };
    let image = def("sensor_msgs/Image")?;
    let float = def("std_msgs/Float64")?;
    let point = def("geometry_msgs/Point")?;
    let mut v = Vec::with_capacity(TOPICS);
    for k in 0..CAMERAS {
        v.push(Topic {
            name: format!("/camera_{k}/image_raw"),
            datatype: "sensor_msgs/Image",
            definition: image.0.clone(),
            md5: image.1.clone(),
        });
    }
    for k in 0..TOPICS - CAMERAS {
        let (kind, datatype, d) = if k % 2 == 0 {
            ("value", "std_msgs/Float64", &float)
        } else {
            ("point", "geometry_msgs/Point", &point)
        };
        v.push(Topic {
            name: format!("/sensor_{:02}/{kind}", k / 2),
            datatype,
            definition: d.0.clone(),
            md5: d.1.clone(),
        });
    }
    Ok(v)
}

/// A file written front to back, with holes where bytes are left unwritten.
struct Out {
    w: BufWriter<File>,
    pos: u64,
    real: u64,
}

impl Out {
    fn put(&mut self, b: &[u8]) -> Result<()> {
        self.w.write_all(b)?;
        self.pos += b.len() as u64;
        self.real += b.len() as u64;
        Ok(())
    }
    fn hole(&mut self, n: u64) -> Result<()> {
        let to = i64::try_from(n).map_err(|_| Error::Invalid("hole too large".into()))?;
        self.w.seek(SeekFrom::Current(to))?;
        self.pos += n;
        Ok(())
    }
}

/// One message of a chunk: its topic, time and either small real bytes or an image header
/// whose pixels are a hole of `hole` bytes.
struct Msg {
    topic: usize,
    time_ns: u64,
    data: Vec<u8>,
    hole: u64,
}

/// The messages of chunk `c` (messages `first..first + n`), the cameras spread through it.
fn chunk_messages(first: u64, n: u64, image_bytes: u64, seq: &mut [u32]) -> Vec<Msg> {
    let mut out = Vec::with_capacity(n as usize);
    let cams = (CAMERAS as u64).min(n);
    let every = (n / cams.max(1)).max(1);
    let mut small = 0u64;
    for i in 0..n {
        let g = first + i;
        let t = T0 + g * STEP_NS;
        let (sec, nsec) = ((t / 1_000_000_000) as u32, (t % 1_000_000_000) as u32);
        if i % every == 0 && i / every < cams {
            let k = (i / every) as usize;
            let height = image_bytes / WIDTH;
            let mut d = Vec::with_capacity(64);
            d.extend_from_slice(&seq[k].to_le_bytes());
            seq[k] = seq[k].wrapping_add(1);
            d.extend_from_slice(&sec.to_le_bytes());
            d.extend_from_slice(&nsec.to_le_bytes());
            let frame = format!("camera_{k}");
            d.extend_from_slice(&(frame.len() as u32).to_le_bytes());
            d.extend_from_slice(frame.as_bytes());
            d.extend_from_slice(&(height as u32).to_le_bytes());
            d.extend_from_slice(&(WIDTH as u32).to_le_bytes());
            d.extend_from_slice(&5u32.to_le_bytes());
            d.extend_from_slice(b"mono8");
            d.push(0);
            d.extend_from_slice(&(WIDTH as u32).to_le_bytes());
            d.extend_from_slice(&((height * WIDTH) as u32).to_le_bytes());
            out.push(Msg {
                topic: k,
                time_ns: t,
                data: d,
                hole: height * WIDTH,
            });
        } else {
            let topic = CAMERAS + (small % (TOPICS - CAMERAS) as u64) as usize;
            small += 1;
            let x = (g as f64 * 1e-3).sin();
            let mut d = x.to_le_bytes().to_vec();
            if (topic - CAMERAS) % 2 == 1 {
                d.extend_from_slice(&(x * 2.0).to_le_bytes());
                d.extend_from_slice(&(g as f64).to_le_bytes());
            }
            out.push(Msg {
                topic,
                time_ns: t,
                data: d,
                hole: 0,
            });
        }
    }
    out
}

/// Plan of the recording: chunk count, messages per chunk and the image size that brings the
/// file to about `size` bytes.
fn layout(a: &SparseArgs) -> Result<(u64, u64, u64)> {
    let messages = if a.messages > 0 {
        a.messages
    } else {
        // 200,000,000 for 1 TiB.
        ((a.size as u128 * 200_000_000) >> 40).max(1_000) as u64
    };
    let chunks = a.size.div_ceil(a.chunk).max(1);
    let per_chunk = messages.div_ceil(chunks);
    if per_chunk < CAMERAS as u64 + 1 {
        return Err(Error::Invalid(format!(
            "{messages} messages in {chunks} chunks is fewer than {} a chunk: use a larger --chunk",
            CAMERAS + 1
        )));
    }
    // Small messages cost about 70 bytes with their index entry.
    let small = (per_chunk - CAMERAS as u64) * 70;
    let image = (a.chunk.saturating_sub(small) / CAMERAS as u64) / WIDTH * WIDTH;
    if image > u64::from(u32::MAX) / 2 {
        return Err(Error::Invalid("chunks too large: images over 2 GB".into()));
    }
    Ok((messages, chunks, image.max(WIDTH)))
}

/// A rosbag2 SQLite recording of `messages` small messages on 100 topics (50 Float64, 50
/// Point, one every 50 µs): SQLite keeps every byte it is given, so it cannot be sparse, and
/// its size is that of its rows.
fn write_rosbag2_sqlite(out: &Path, messages: u64) -> Result<()> {
    use bagscope_reader::storage::rosbag2::writer::{
        Rosbag2Options, Rosbag2Storage, Rosbag2Writer, TopicSpec,
    };
    let t0 = Instant::now();
    let mut w = Rosbag2Writer::create(
        out,
        Rosbag2Options {
            storage: Rosbag2Storage::Sqlite3,
            ros_distro: "humble".into(),
            ..Default::default()
        },
    )?;
    let def = |t: &str| {
        lookup(t, Dialect::Ros2, &[])
            .map(|(text, _)| text)
            .unwrap_or_default()
    };
    let (float, point) = (def("std_msgs/msg/Float64"), def("geometry_msgs/msg/Point"));
    let mut ids = Vec::new();
    for k in 0..TOPICS {
        let (name, datatype, definition) = if k % 2 == 0 {
            (
                format!("/sensor_{:02}/value", k / 2),
                "std_msgs/msg/Float64",
                &float,
            )
        } else {
            (
                format!("/sensor_{:02}/point", k / 2),
                "geometry_msgs/msg/Point",
                &point,
            )
        };
        ids.push(w.add_topic(TopicSpec {
            name,
            datatype: datatype.into(),
            serialization_format: "cdr".into(),
            qos: String::new(),
            definition: definition.clone(),
            type_hash: String::new(),
        }));
    }
    let mut data = Vec::with_capacity(32);
    for g in 0..messages {
        let k = (g % TOPICS as u64) as usize;
        let x = (g as f64 * 1e-3).sin();
        data.clear();
        data.extend_from_slice(&[0, 1, 0, 0]);
        data.extend_from_slice(&x.to_le_bytes());
        if k % 2 == 1 {
            data.extend_from_slice(&(x * 2.0).to_le_bytes());
            data.extend_from_slice(&(g as f64).to_le_bytes());
        }
        w.write(ids[k], T0 + g * STEP_NS, &data)?;
    }
    let path = w.finish()?;
    let bytes: u64 = std::fs::read_dir(&path)
        .map(|r| {
            r.filter_map(|e| e.ok()?.metadata().ok())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0);
    println!(
        "{}: {bytes} bytes ({:.2} GB); {messages} messages on {TOPICS} topics (rosbag2, SQLite); {:.1} s",
        path.display(),
        bytes as f64 / 1e9,
        t0.elapsed().as_secs_f64()
    );
    Ok(())
}

/// Writes the recording; prints what was written.
pub fn generate(a: &SparseArgs) -> Result<()> {
    if a.format == "rosbag2-sqlite3" {
        let messages = if a.messages > 0 {
            a.messages
        } else {
            layout(a)?.0
        };
        return write_rosbag2_sqlite(&a.out, messages);
    }
    let t0 = Instant::now();
    let (messages, planned, image) = layout(a)?;
    let topics = topics()?;
    // A device such as /dev/null is written in place (see `storage::output`).
    let staged = bagscope_reader::storage::output::Staged::new(&a.out);
    let file = staged.create().map_err(|e| Error::Open {
        path: staged.path().to_path_buf(),
        source: e,
    })?;
    let mut out = Out {
        w: BufWriter::with_capacity(4 << 20, file),
        pos: 0,
        real: 0,
    };
    let r = match a.format.as_str() {
        "bag" => write_bag(&mut out, &topics, messages, planned, image, a.no_index),
        "mcap" => write_mcap(&mut out, &topics, messages, planned, image, a.no_index),
        f => Err(Error::Invalid(format!(
            "--format {f:?}: choose bag, mcap or rosbag2-sqlite3"
        ))),
    };
    let done = r.and_then(|chunks| {
        let file = out.w.into_inner().map_err(|e| Error::Io(e.into_error()))?;
        if !staged.in_place() {
            file.set_len(out.pos)?;
            drop(file);
            std::fs::rename(staged.path(), staged.target())?;
        }
        Ok(chunks)
    });
    let chunks = match done {
        Ok(n) => n,
        Err(e) => {
            staged.discard();
            return Err(e);
        }
    };
    println!(
        "{}: {} bytes ({:.1} GB), {} real ({:.2} GB); {messages} messages on {TOPICS} topics in {chunks} chunks, images {} bytes; {:.1} s",
        a.out.display(),
        out.pos,
        out.pos as f64 / 1e9,
        out.real,
        out.real as f64 / 1e9,
        image,
        t0.elapsed().as_secs_f64()
    );
    Ok(())
}

fn ros1_time(ns: u64) -> [u8; 8] {
    let mut b = [0u8; 8];
    b[..4].copy_from_slice(&((ns / 1_000_000_000) as u32).to_le_bytes());
    b[4..].copy_from_slice(&((ns % 1_000_000_000) as u32).to_le_bytes());
    b
}

fn ros1_bag_header(index_pos: u64, conns: u32, chunks: u32) -> Vec<u8> {
    let mut h = Vec::new();
    put_field(&mut h, "op", &[0x03]);
    put_field(&mut h, "index_pos", &index_pos.to_le_bytes());
    put_field(&mut h, "conn_count", &conns.to_le_bytes());
    put_field(&mut h, "chunk_count", &chunks.to_le_bytes());
    let mut r = Vec::with_capacity(4096);
    put_record(&mut r, &h, &vec![b' '; 4096 - 8 - h.len()]);
    r
}

fn write_bag(
    out: &mut Out,
    topics: &[Topic],
    messages: u64,
    chunks: u64,
    image: u64,
    no_index: bool,
) -> Result<u32> {
    out.put(b"#ROSBAG V2.0\n")?;
    out.put(&ros1_bag_header(0, 0, 0))?;
    let per_chunk = messages.div_ceil(chunks);
    let mut seq = vec![0u32; CAMERAS];
    // Chunk infos: position, start, end, (connection, count) pairs.
    let mut infos: Vec<u8> = Vec::new();
    let mut chunk_count = 0u32;
    let mut first = 0u64;
    while first < messages {
        let n = per_chunk.min(messages - first);
        let msgs = chunk_messages(first, n, image, &mut seq);
        first += n;
        // Record headers, real bytes and holes, in order; offsets within the chunk data.
        let mut index: Vec<Vec<u8>> = vec![Vec::new(); topics.len()];
        let mut counts = vec![0u32; topics.len()];
        let mut data_len = 0u64;
        let mut heads = Vec::with_capacity(msgs.len());
        for m in &msgs {
            let mut h = Vec::with_capacity(48);
            put_field(&mut h, "op", &[0x02]);
            put_field(&mut h, "conn", &(m.topic as u32).to_le_bytes());
            put_field(&mut h, "time", &ros1_time(m.time_ns));
            let ix = &mut index[m.topic];
            ix.extend_from_slice(&ros1_time(m.time_ns));
            ix.extend_from_slice(&(data_len as u32).to_le_bytes());
            counts[m.topic] += 1;
            data_len += 4 + h.len() as u64 + 4 + m.data.len() as u64 + m.hole;
            heads.push(h);
        }
        let size = u32::try_from(data_len)
            .map_err(|_| Error::Invalid("a chunk over 4 GB: use a smaller --chunk".into()))?;
        let chunk_pos = out.pos;
        let mut ch = Vec::new();
        put_field(&mut ch, "op", &[0x05]);
        put_field(&mut ch, "compression", b"none");
        put_field(&mut ch, "size", &size.to_le_bytes());
        let mut buf = Vec::with_capacity(1 << 20);
        buf.extend_from_slice(&(ch.len() as u32).to_le_bytes());
        buf.extend_from_slice(&ch);
        buf.extend_from_slice(&size.to_le_bytes());
        for (m, h) in msgs.iter().zip(&heads) {
            buf.extend_from_slice(&(h.len() as u32).to_le_bytes());
            buf.extend_from_slice(h);
            buf.extend_from_slice(&((m.data.len() as u64 + m.hole) as u32).to_le_bytes());
            buf.extend_from_slice(&m.data);
            if m.hole > 0 {
                out.put(&buf)?;
                buf.clear();
                out.hole(m.hole)?;
            }
        }
        // Index data records, one per connection in the chunk.
        for (c, ix) in index.iter().enumerate() {
            if counts[c] == 0 {
                continue;
            }
            let mut h = Vec::new();
            put_field(&mut h, "op", &[0x04]);
            put_field(&mut h, "ver", &1u32.to_le_bytes());
            put_field(&mut h, "conn", &(c as u32).to_le_bytes());
            put_field(&mut h, "count", &counts[c].to_le_bytes());
            put_record(&mut buf, &h, ix);
        }
        out.put(&buf)?;
        let (start, end) = (
            msgs.first().map_or(0, |m| m.time_ns),
            msgs.last().map_or(0, |m| m.time_ns),
        );
        let present: Vec<usize> = (0..topics.len()).filter(|&c| counts[c] > 0).collect();
        let mut h = Vec::new();
        put_field(&mut h, "op", &[0x06]);
        put_field(&mut h, "ver", &1u32.to_le_bytes());
        put_field(&mut h, "chunk_pos", &chunk_pos.to_le_bytes());
        put_field(&mut h, "start_time", &ros1_time(start));
        put_field(&mut h, "end_time", &ros1_time(end));
        put_field(&mut h, "count", &(present.len() as u32).to_le_bytes());
        let mut d = Vec::with_capacity(present.len() * 8);
        for c in present {
            d.extend_from_slice(&(c as u32).to_le_bytes());
            d.extend_from_slice(&counts[c].to_le_bytes());
        }
        put_record(&mut infos, &h, &d);
        chunk_count += 1;
    }
    let index_pos = out.pos;
    let mut idx = Vec::new();
    for (c, t) in topics.iter().enumerate() {
        let mut h = Vec::new();
        put_field(&mut h, "op", &[0x07]);
        put_field(&mut h, "conn", &(c as u32).to_le_bytes());
        put_field(&mut h, "topic", t.name.as_bytes());
        let mut d = Vec::new();
        put_field(&mut d, "topic", t.name.as_bytes());
        put_field(&mut d, "type", t.datatype.as_bytes());
        put_field(&mut d, "md5sum", t.md5.as_bytes());
        put_field(&mut d, "message_definition", t.definition.as_bytes());
        put_field(&mut d, "callerid", b"/gen_sparse");
        put_record(&mut idx, &h, &d);
    }
    out.put(&idx)?;
    if no_index {
        // Cut off before the index: the header still says index_pos 0.
        return Ok(chunk_count);
    }
    out.put(&infos)?;
    out.w.flush()?;
    let end = out.pos;
    out.w.seek(SeekFrom::Start(13))?;
    out.w.write_all(&ros1_bag_header(
        index_pos,
        topics.len() as u32,
        chunk_count,
    ))?;
    out.w.seek(SeekFrom::Start(end))?;
    Ok(chunk_count)
}

fn mcap_str(b: &mut Vec<u8>, s: &str) {
    b.extend_from_slice(&(s.len() as u32).to_le_bytes());
    b.extend_from_slice(s.as_bytes());
}

fn mcap_record(out: &mut Vec<u8>, op: u8, content: &[u8]) {
    out.push(op);
    out.extend_from_slice(&(content.len() as u64).to_le_bytes());
    out.extend_from_slice(content);
}

fn write_mcap(
    out: &mut Out,
    topics: &[Topic],
    messages: u64,
    chunks: u64,
    image: u64,
    no_index: bool,
) -> Result<u32> {
    use bagscope_reader::storage::mcap::{opcode, MAGIC};
    let mut head = MAGIC.to_vec();
    let mut h = Vec::new();
    mcap_str(&mut h, "ros1");
    mcap_str(&mut h, "bagscope gen-sparse");
    mcap_record(&mut head, opcode::HEADER, &h);
    out.put(&head)?;
    // One schema per type, one channel per topic.
    let mut types: Vec<&str> = topics.iter().map(|t| t.datatype).collect();
    types.sort_unstable();
    types.dedup();
    let mut schemas = Vec::new();
    for (i, t) in types.iter().enumerate() {
        let def = topics
            .iter()
            .find(|x| x.datatype == *t)
            .map_or("", |x| x.definition.as_str());
        let mut c = ((i + 1) as u16).to_le_bytes().to_vec();
        mcap_str(&mut c, t);
        mcap_str(&mut c, "ros1msg");
        mcap_str(&mut c, def);
        mcap_record(&mut schemas, opcode::SCHEMA, &c);
    }
    let mut channels = Vec::new();
    for (c, t) in topics.iter().enumerate() {
        let schema = types.iter().position(|x| *x == t.datatype).unwrap_or(0) + 1;
        let mut r = (c as u16).to_le_bytes().to_vec();
        r.extend_from_slice(&(schema as u16).to_le_bytes());
        mcap_str(&mut r, &t.name);
        mcap_str(&mut r, "ros1");
        let mut meta = Vec::new();
        mcap_str(&mut meta, "md5sum");
        mcap_str(&mut meta, &t.md5);
        r.extend_from_slice(&(meta.len() as u32).to_le_bytes());
        r.extend_from_slice(&meta);
        mcap_record(&mut channels, opcode::CHANNEL, &r);
    }
    if no_index {
        // A recording cut off: its schemas and channels come before the chunks that use them.
        out.put(&schemas)?;
        out.put(&channels)?;
    }
    let per_chunk = messages.div_ceil(chunks);
    let mut seq = vec![0u32; CAMERAS];
    let mut chunk_indexes: Vec<u8> = Vec::new();
    let mut counts_all = vec![0u64; topics.len()];
    let (mut t_first, mut t_last) = (u64::MAX, 0u64);
    let mut chunk_count = 0u32;
    let mut first = 0u64;
    while first < messages {
        let n = per_chunk.min(messages - first);
        let msgs = chunk_messages(first, n, image, &mut seq);
        first += n;
        let mut index: Vec<Vec<u8>> = vec![Vec::new(); topics.len()];
        let mut records_len = 0u64;
        for m in &msgs {
            let ix = &mut index[m.topic];
            ix.extend_from_slice(&m.time_ns.to_le_bytes());
            ix.extend_from_slice(&records_len.to_le_bytes());
            counts_all[m.topic] += 1;
            records_len += 9 + 22 + m.data.len() as u64 + m.hole;
        }
        let (start, end) = (
            msgs.first().map_or(0, |m| m.time_ns),
            msgs.last().map_or(0, |m| m.time_ns),
        );
        t_first = t_first.min(start);
        t_last = t_last.max(end);
        let chunk_pos = out.pos;
        // Chunk record: times, sizes, no CRC, no compression, then the records.
        let content_len = 8 + 8 + 8 + 4 + 4 + 8 + records_len;
        let mut buf = Vec::with_capacity(1 << 20);
        buf.push(opcode::CHUNK);
        buf.extend_from_slice(&content_len.to_le_bytes());
        buf.extend_from_slice(&start.to_le_bytes());
        buf.extend_from_slice(&end.to_le_bytes());
        buf.extend_from_slice(&records_len.to_le_bytes());
        buf.extend_from_slice(&0u32.to_le_bytes());
        mcap_str(&mut buf, "");
        buf.extend_from_slice(&records_len.to_le_bytes());
        for m in &msgs {
            buf.push(opcode::MESSAGE);
            buf.extend_from_slice(&(22 + m.data.len() as u64 + m.hole).to_le_bytes());
            buf.extend_from_slice(&(m.topic as u16).to_le_bytes());
            buf.extend_from_slice(&0u32.to_le_bytes());
            buf.extend_from_slice(&m.time_ns.to_le_bytes());
            buf.extend_from_slice(&m.time_ns.to_le_bytes());
            buf.extend_from_slice(&m.data);
            if m.hole > 0 {
                out.put(&buf)?;
                buf.clear();
                out.hole(m.hole)?;
            }
        }
        out.put(&buf)?;
        buf.clear();
        let chunk_len = out.pos - chunk_pos;
        // Message index records, one per channel in the chunk.
        let mi_start = out.pos;
        let mut offsets = Vec::new();
        for (c, ix) in index.iter().enumerate() {
            if ix.is_empty() {
                continue;
            }
            offsets.extend_from_slice(&(c as u16).to_le_bytes());
            offsets.extend_from_slice(&(mi_start + buf.len() as u64).to_le_bytes());
            let mut m = (c as u16).to_le_bytes().to_vec();
            m.extend_from_slice(&(ix.len() as u32).to_le_bytes());
            m.extend_from_slice(ix);
            mcap_record(&mut buf, opcode::MESSAGE_INDEX, &m);
        }
        out.put(&buf)?;
        let mut ci = Vec::with_capacity(64 + offsets.len());
        ci.extend_from_slice(&start.to_le_bytes());
        ci.extend_from_slice(&end.to_le_bytes());
        ci.extend_from_slice(&chunk_pos.to_le_bytes());
        ci.extend_from_slice(&chunk_len.to_le_bytes());
        ci.extend_from_slice(&(offsets.len() as u32).to_le_bytes());
        ci.extend_from_slice(&offsets);
        ci.extend_from_slice(&(buf.len() as u64).to_le_bytes());
        mcap_str(&mut ci, "");
        ci.extend_from_slice(&records_len.to_le_bytes());
        ci.extend_from_slice(&records_len.to_le_bytes());
        mcap_record(&mut chunk_indexes, opcode::CHUNK_INDEX, &ci);
        chunk_count += 1;
    }
    if no_index {
        return Ok(chunk_count);
    }
    let mut tail = Vec::new();
    mcap_record(&mut tail, opcode::DATA_END, &0u32.to_le_bytes());
    let summary_start = out.pos + tail.len() as u64;
    let mut groups: Vec<(u8, u64, u64)> = Vec::new();
    let mut summary = Vec::new();
    let mut group = |summary: &mut Vec<u8>, op: u8, records: &[u8]| {
        let start = summary_start + summary.len() as u64;
        summary.extend_from_slice(records);
        groups.push((op, start, records.len() as u64));
    };
    group(&mut summary, opcode::SCHEMA, &schemas);
    group(&mut summary, opcode::CHANNEL, &channels);
    let mut st = Vec::new();
    st.extend_from_slice(&messages.to_le_bytes());
    st.extend_from_slice(&(types.len() as u16).to_le_bytes());
    st.extend_from_slice(&(topics.len() as u32).to_le_bytes());
    st.extend_from_slice(&0u32.to_le_bytes());
    st.extend_from_slice(&0u32.to_le_bytes());
    st.extend_from_slice(&chunk_count.to_le_bytes());
    st.extend_from_slice(&t_first.to_le_bytes());
    st.extend_from_slice(&t_last.to_le_bytes());
    let mut counts = Vec::new();
    for (c, n) in counts_all.iter().enumerate() {
        counts.extend_from_slice(&(c as u16).to_le_bytes());
        counts.extend_from_slice(&n.to_le_bytes());
    }
    st.extend_from_slice(&(counts.len() as u32).to_le_bytes());
    st.extend_from_slice(&counts);
    let mut r = Vec::new();
    mcap_record(&mut r, opcode::STATISTICS, &st);
    group(&mut summary, opcode::STATISTICS, &r);
    group(&mut summary, opcode::CHUNK_INDEX, &chunk_indexes);
    let summary_offset_start = summary_start + summary.len() as u64;
    for (op, start, len) in &groups {
        let mut c = vec![*op];
        c.extend_from_slice(&start.to_le_bytes());
        c.extend_from_slice(&len.to_le_bytes());
        mcap_record(&mut summary, opcode::SUMMARY_OFFSET, &c);
    }
    let mut footer = Vec::new();
    footer.extend_from_slice(&summary_start.to_le_bytes());
    footer.extend_from_slice(&summary_offset_start.to_le_bytes());
    footer.extend_from_slice(&0u32.to_le_bytes());
    mcap_record(&mut summary, opcode::FOOTER, &footer);
    summary.extend_from_slice(MAGIC);
    out.put(&tail)?;
    out.put(&summary)?;
    Ok(chunk_count)
}

/// The output path's directory must exist; the output must not be an existing recording
/// being read elsewhere (it is replaced atomically).
pub fn check_out(out: &Path) -> Result<()> {
    match out.parent() {
        Some(p) if !p.as_os_str().is_empty() && !p.is_dir() => Err(Error::Invalid(format!(
            "{}: no such directory",
            p.display()
        ))),
        _ => Ok(()),
    }
}
