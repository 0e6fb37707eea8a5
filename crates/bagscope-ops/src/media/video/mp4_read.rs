//! MP4 files read as recordings: a dataset's videos (LeRobot keeps its cameras as AV1 in MP4),
//! a camera's own file. Each video track (H.264 `avc1`/`avc3`, H.265 `hvc1`/`hev1`, AV1 `av01`)
//! becomes a topic of `foxglove_msgs/msg/CompressedVideo`, a sample a message at its
//! presentation time, written into an MCAP file in the cache ([`to_mcap`]) that bagscope then
//! opens as any recording: the image panel decodes it in-process, `export` cuts it.
//!
//! The samples are made into the packets bagscope's decoders take, as a camera driver sends
//! them: H.264 and H.265 length-prefixed NAL units into an Annex B stream, with the parameter
//! sets of the sample entry (`avcC`, `hvcC`) before each sync sample; an AV1 sample (a
//! temporal unit without its temporal delimiter, AV1-ISOBMFF §2.4) gets the delimiter back, and
//! the sequence header of `av1C` before a sync sample that lacks one.
//!
//! The file is untrusted: every box is bounded by its parent, every table by its box, and the
//! movie box by [`MAX_MOOV`]; what does not fit is an error naming the box.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use super::Codec;

/// The largest movie box (`moov`) read: its sample tables, held in memory.
pub const MAX_MOOV: u64 = 256 << 20;

/// A video track of an MP4 file.
#[derive(Debug, Clone)]
pub struct Track {
    /// `tkhd`'s track ID.
    pub id: u32,
    /// Its codec.
    pub codec: Codec,
    /// The sample entry's width and height.
    pub size: (u16, u16),
    /// Ticks a second of its times.
    pub timescale: u32,
    /// Its samples, in decoding order.
    pub samples: Vec<Sample>,
    /// Parameter sets (H.264/H.265 NAL units) or configuration OBUs (AV1) of its sample entry.
    pub config: Vec<Vec<u8>>,
    /// Bytes of each NAL unit's length in a sample (H.264/H.265).
    pub nal_len: usize,
}

/// A sample of a track.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sample {
    /// Where its bytes are in the file.
    pub offset: u64,
    /// How many.
    pub size: u32,
    /// Presentation time, in the track's ticks.
    pub pts: i64,
    /// A sync sample (a keyframe).
    pub sync: bool,
}

fn err(at: &str, what: impl std::fmt::Display) -> String {
    format!("MP4 {at}: {what}")
}

/// A box's payload being read, bounded.
struct Cur<'a> {
    b: &'a [u8],
    at: &'a str,
}

impl<'a> Cur<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.b.len() < n {
            return Err(err(self.at, "shorter than its fields"));
        }
        let (h, t) = self.b.split_at(n);
        self.b = t;
        Ok(h)
    }
    fn u8(&mut self) -> Result<u8, String> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, String> {
        let b = self.take(2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }
    fn u32(&mut self) -> Result<u32, String> {
        let b = self.take(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn u64(&mut self) -> Result<u64, String> {
        Ok((u64::from(self.u32()?) << 32) | u64::from(self.u32()?))
    }
    /// A full box's version (its flags skipped).
    fn version(&mut self) -> Result<u8, String> {
        let v = self.u8()?;
        self.take(3)?;
        Ok(v)
    }
    /// A table's entry count, bounded by the bytes left (`each` bytes an entry).
    fn count(&mut self, each: usize) -> Result<usize, String> {
        let n = self.u32()? as usize;
        if n.saturating_mul(each) > self.b.len() {
            return Err(err(
                self.at,
                format!("{n} entries in {} bytes", self.b.len()),
            ));
        }
        Ok(n)
    }
}

/// Boxes as (type, payload).
type Boxes<'a> = Vec<([u8; 4], &'a [u8])>;

/// The child boxes of a payload.
fn boxes(mut b: &[u8]) -> Result<Boxes<'_>, String> {
    let mut out = Vec::new();
    while b.len() >= 8 {
        let size32 = u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as u64;
        let ty = [b[4], b[5], b[6], b[7]];
        let (head, size) = match size32 {
            0 => (8, b.len() as u64),
            1 => {
                if b.len() < 16 {
                    return Err(err(&name(ty), "a large size cut short"));
                }
                let s = u64::from_be_bytes([b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]]);
                (16, s)
            }
            s => (8, s),
        };
        if size < head as u64 || size > b.len() as u64 {
            return Err(err(
                &name(ty),
                format!("{size} bytes where its parent has {}", b.len()),
            ));
        }
        out.push((ty, &b[head..size as usize]));
        b = &b[size as usize..];
    }
    Ok(out)
}

fn name(ty: [u8; 4]) -> String {
    String::from_utf8_lossy(&ty).into_owned()
}

fn child<'a>(b: &'a [u8], ty: &[u8; 4]) -> Result<Option<&'a [u8]>, String> {
    Ok(boxes(b)?.into_iter().find(|(t, _)| t == ty).map(|(_, p)| p))
}

fn need<'a>(b: &'a [u8], ty: &[u8; 4], parent: &str) -> Result<&'a [u8], String> {
    child(b, ty)?.ok_or_else(|| err(parent, format!("no {} box", name(*ty))))
}

/// Whether the file starts as an MP4 (ISO BMFF) file does: an `ftyp` box first.
pub fn is_mp4(path: &Path) -> bool {
    let mut head = [0u8; 8];
    File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| &head[4..8] == b"ftyp")
}

/// The video tracks of the MP4 file at `path` (other tracks, audio say, are left out).
pub fn tracks(path: &Path) -> Result<Vec<Track>, String> {
    let mut f = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let len = f.metadata().map_err(|e| e.to_string())?.len();
    // Top-level boxes, read by their headers: the movie box is read whole.
    let mut pos = 0u64;
    let mut moov = None;
    while pos + 8 <= len {
        let mut h = [0u8; 16];
        f.seek(SeekFrom::Start(pos)).map_err(|e| e.to_string())?;
        let n = (len - pos).min(16) as usize;
        f.read_exact(&mut h[..n]).map_err(|e| e.to_string())?;
        let ty = [h[4], h[5], h[6], h[7]];
        let (head, size) = match u32::from_be_bytes([h[0], h[1], h[2], h[3]]) {
            0 => (8, len - pos),
            1 if n == 16 => (
                16,
                u64::from_be_bytes([h[8], h[9], h[10], h[11], h[12], h[13], h[14], h[15]]),
            ),
            1 => return Err(err(&name(ty), "a large size cut short")),
            s => (8, u64::from(s)),
        };
        if size < head || pos + size > len {
            return Err(err(
                &name(ty),
                format!("{size} bytes at {pos}, past the file's end ({len})"),
            ));
        }
        if &ty == b"moov" {
            if size > MAX_MOOV {
                return Err(err("moov", format!("{size} bytes, more than {MAX_MOOV}")));
            }
            let mut b = vec![0u8; (size - head) as usize];
            f.seek(SeekFrom::Start(pos + head))
                .map_err(|e| e.to_string())?;
            f.read_exact(&mut b).map_err(|e| e.to_string())?;
            moov = Some(b);
            break;
        }
        pos += size;
    }
    let moov = moov.ok_or_else(|| err("file", "no moov box (a fragmented or cut MP4?)"))?;
    let mut out = Vec::new();
    for (ty, trak) in boxes(&moov)? {
        if &ty == b"trak" {
            if let Some(t) = track(trak)? {
                out.push(t);
            }
        }
    }
    Ok(out)
}

/// A `trak` box's track, if it is video of a codec bagscope decodes.
fn track(trak: &[u8]) -> Result<Option<Track>, String> {
    let mut tkhd = Cur {
        b: need(trak, b"tkhd", "trak")?,
        at: "tkhd",
    };
    let id = if tkhd.version()? == 1 {
        tkhd.take(16)?;
        tkhd.u32()?
    } else {
        tkhd.take(8)?;
        tkhd.u32()?
    };
    let mdia = need(trak, b"mdia", "trak")?;
    let mut hdlr = Cur {
        b: need(mdia, b"hdlr", "mdia")?,
        at: "hdlr",
    };
    hdlr.version()?;
    hdlr.take(4)?;
    if hdlr.take(4)? != b"vide" {
        return Ok(None);
    }
    let mut mdhd = Cur {
        b: need(mdia, b"mdhd", "mdia")?,
        at: "mdhd",
    };
    if mdhd.version()? == 1 {
        mdhd.take(16)?;
    } else {
        mdhd.take(8)?;
    }
    let timescale = mdhd.u32()?;
    if timescale == 0 {
        return Err(err("mdhd", "a timescale of 0"));
    }
    let stbl = need(need(mdia, b"minf", "mdia")?, b"stbl", "minf")?;
    let mut stsd = Cur {
        b: need(stbl, b"stsd", "stbl")?,
        at: "stsd",
    };
    stsd.version()?;
    stsd.u32()?;
    let Some((entry, body)) = boxes(stsd.b)?.into_iter().next() else {
        return Err(err("stsd", "no sample entry"));
    };
    let codec = match &entry {
        b"avc1" | b"avc3" => Codec::H264,
        b"hvc1" | b"hev1" => Codec::H265,
        b"av01" => Codec::Av1,
        _ => return Ok(None),
    };
    // A visual sample entry: 78 bytes of fields, then its boxes.
    let mut vse = Cur {
        b: body,
        at: "sample entry",
    };
    vse.take(24)?;
    let size = (vse.u16()?, vse.u16()?);
    vse.take(50)?;
    let (config, nal_len) = match codec {
        Codec::H264 => avcc(need(vse.b, b"avcC", "avc1")?)?,
        Codec::H265 => hvcc(need(vse.b, b"hvcC", "hvc1")?)?,
        Codec::Av1 => {
            let c = need(vse.b, b"av1C", "av01")?;
            if c.len() < 4 {
                return Err(err("av1C", "shorter than its fields"));
            }
            (
                if c.len() > 4 {
                    vec![c[4..].to_vec()]
                } else {
                    Vec::new()
                },
                0,
            )
        }
    };
    Ok(Some(Track {
        id,
        codec,
        size,
        timescale,
        samples: samples(stbl)?,
        config,
        nal_len,
    }))
}

/// `avcC`: the SPS and PPS, and the NAL length size.
fn avcc(b: &[u8]) -> Result<(Vec<Vec<u8>>, usize), String> {
    let mut c = Cur { b, at: "avcC" };
    c.take(4)?;
    let nal_len = usize::from(c.u8()? & 3) + 1;
    let mut sets = Vec::new();
    for mask in [0x1f, 0xff] {
        let n = c.u8()? & mask;
        for _ in 0..n {
            let len = usize::from(c.u16()?);
            sets.push(c.take(len)?.to_vec());
        }
    }
    Ok((sets, nal_len))
}

/// `hvcC`: the VPS, SPS and PPS, and the NAL length size.
fn hvcc(b: &[u8]) -> Result<(Vec<Vec<u8>>, usize), String> {
    let mut c = Cur { b, at: "hvcC" };
    c.take(21)?;
    let nal_len = usize::from(c.u8()? & 3) + 1;
    let mut sets = Vec::new();
    for _ in 0..c.u8()? {
        c.u8()?;
        for _ in 0..c.u16()? {
            let len = usize::from(c.u16()?);
            sets.push(c.take(len)?.to_vec());
        }
    }
    Ok((sets, nal_len))
}

/// The samples of a sample table, in decoding order.
fn samples(stbl: &[u8]) -> Result<Vec<Sample>, String> {
    let mut stsz = Cur {
        b: need(stbl, b"stsz", "stbl")?,
        at: "stsz",
    };
    stsz.version()?;
    let fixed = stsz.u32()?;
    let n = stsz.u32()? as usize;
    let sizes: Vec<u32> = if fixed != 0 {
        if n > MAX_MOOV as usize {
            return Err(err("stsz", format!("{n} samples")));
        }
        vec![fixed; n]
    } else {
        if n.saturating_mul(4) > stsz.b.len() {
            return Err(err(
                "stsz",
                format!("{n} samples in {} bytes", stsz.b.len()),
            ));
        }
        (0..n).map(|_| stsz.u32()).collect::<Result<_, _>>()?
    };
    // Chunk offsets, then which samples each chunk holds.
    let offsets: Vec<u64> = if let Some(b) = child(stbl, b"stco")? {
        let mut c = Cur { b, at: "stco" };
        c.version()?;
        let k = c.count(4)?;
        (0..k)
            .map(|_| c.u32().map(u64::from))
            .collect::<Result<_, _>>()?
    } else {
        let mut c = Cur {
            b: need(stbl, b"co64", "stbl")?,
            at: "co64",
        };
        c.version()?;
        let k = c.count(8)?;
        (0..k).map(|_| c.u64()).collect::<Result<_, _>>()?
    };
    let mut stsc = Cur {
        b: need(stbl, b"stsc", "stbl")?,
        at: "stsc",
    };
    stsc.version()?;
    let runs: Vec<(u32, u32)> = {
        let k = stsc.count(12)?;
        (0..k)
            .map(|_| {
                let first = stsc.u32()?;
                let per = stsc.u32()?;
                stsc.u32()?;
                Ok((first, per))
            })
            .collect::<Result<_, String>>()?
    };
    let mut out = Vec::with_capacity(n);
    // The runs are in chunk order: the one in force moves forward with the chunks.
    let mut run = 0;
    'chunks: for (ci, &off) in offsets.iter().enumerate() {
        let chunk = ci as u32 + 1;
        while runs.get(run + 1).is_some_and(|r| r.0 <= chunk) {
            run += 1;
        }
        let per = runs.get(run).filter(|r| r.0 <= chunk).map_or(0, |r| r.1);
        let mut at = off;
        for _ in 0..per {
            let k = out.len();
            let Some(&size) = sizes.get(k) else {
                break 'chunks;
            };
            out.push(Sample {
                offset: at,
                size,
                pts: 0,
                sync: true,
            });
            at = at.saturating_add(u64::from(size));
        }
    }
    if out.len() != n {
        return Err(err(
            "stsc",
            format!("{} samples in the chunks, {n} in stsz", out.len()),
        ));
    }
    // Decoding times, then composition offsets.
    let mut stts = Cur {
        b: need(stbl, b"stts", "stbl")?,
        at: "stts",
    };
    stts.version()?;
    let mut dts = 0i64;
    let mut k = 0;
    for _ in 0..stts.count(8)? {
        let (count, delta) = (stts.u32()?, stts.u32()?);
        // (A forged count runs no further than the samples.)
        for s in out.iter_mut().skip(k).take(count as usize) {
            s.pts = dts;
            k += 1;
            dts = dts.saturating_add(i64::from(delta));
        }
    }
    if let Some(b) = child(stbl, b"ctts")? {
        let mut c = Cur { b, at: "ctts" };
        c.version()?;
        let mut k = 0;
        for _ in 0..c.count(8)? {
            let count = c.u32()?;
            let raw = c.u32()?;
            // Signed in version 1; in version 0 unsigned, though muxers write negative
            // offsets there too: a value past 2^31 is read as one.
            let off = i64::from(raw as i32);
            for s in out.iter_mut().skip(k).take(count as usize) {
                s.pts = s.pts.saturating_add(off);
                k += 1;
            }
        }
    }
    if let Some(b) = child(stbl, b"stss")? {
        let mut c = Cur { b, at: "stss" };
        c.version()?;
        for s in out.iter_mut() {
            s.sync = false;
        }
        for _ in 0..c.count(4)? {
            let i = c.u32()? as usize;
            if let Some(s) = i.checked_sub(1).and_then(|i| out.get_mut(i)) {
                s.sync = true;
            }
        }
    }
    Ok(out)
}

/// Sample `bytes` of `t` as the packet bagscope's decoders take (see the module's notes).
pub fn packet(t: &Track, s: &Sample, bytes: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(bytes.len() + 64);
    match t.codec {
        Codec::Av1 => {
            // The temporal delimiter (OBU type 2, with a size of 0).
            out.extend_from_slice(&[0x12, 0x00]);
            let first_is_seq = bytes.first().is_some_and(|b| (b >> 3) & 0xf == 1);
            if s.sync && !first_is_seq {
                for c in &t.config {
                    out.extend_from_slice(c);
                }
            }
            out.extend_from_slice(bytes);
        }
        Codec::H264 | Codec::H265 => {
            if s.sync {
                for p in &t.config {
                    out.extend_from_slice(&[0, 0, 0, 1]);
                    out.extend_from_slice(p);
                }
            }
            let mut b = bytes;
            while !b.is_empty() {
                if b.len() < t.nal_len {
                    return Err(err("sample", "a NAL unit's length cut short"));
                }
                let len = b[..t.nal_len]
                    .iter()
                    .fold(0usize, |a, &x| (a << 8) | usize::from(x));
                b = &b[t.nal_len..];
                if len > b.len() {
                    return Err(err(
                        "sample",
                        format!("a NAL unit of {len} bytes in {}", b.len()),
                    ));
                }
                out.extend_from_slice(&[0, 0, 0, 1]);
                out.extend_from_slice(&b[..len]);
                b = &b[len..];
            }
        }
    }
    Ok(out)
}

/// The definition its topics are written with.
const DEFINITION: &str =
    "builtin_interfaces/Time timestamp\nstring frame_id\nuint8[] data\nstring format\n\
================================================================================\n\
MSG: builtin_interfaces/Time\nint32 sec\nuint32 nanosec\n";

/// A `foxglove_msgs/msg/CompressedVideo` in CDR.
fn cdr(time_ns: u64, frame_id: &str, data: &[u8], format: &str) -> Vec<u8> {
    fn string(out: &mut Vec<u8>, s: &str) {
        while !(out.len() - 4).is_multiple_of(4) {
            out.push(0);
        }
        out.extend_from_slice(&(s.len() as u32 + 1).to_le_bytes());
        out.extend_from_slice(s.as_bytes());
        out.push(0);
    }
    let mut out = Vec::with_capacity(data.len() + 64);
    out.extend_from_slice(&[0, 1, 0, 0]);
    out.extend_from_slice(&((time_ns / 1_000_000_000) as i32).to_le_bytes());
    out.extend_from_slice(&((time_ns % 1_000_000_000) as u32).to_le_bytes());
    string(&mut out, frame_id);
    while !(out.len() - 4).is_multiple_of(4) {
        out.push(0);
    }
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out.extend_from_slice(data);
    string(&mut out, format);
    out
}

/// The topic of a track: `/video`, or `/video_ID` where the file has several.
pub fn topic_of(t: &Track, tracks: usize) -> String {
    if tracks == 1 {
        "/video".into()
    } else {
        format!("/video_{}", t.id)
    }
}

/// Writes the video tracks of the MP4 file `mp4` as an MCAP recording at `out` (written under
/// a temporary name and renamed into place): a topic a track ([`topic_of`]), a sample a message
/// in decoding order, the N-th message at the N-th presentation time (so that the N-th picture
/// shown is at its own time), times from 0 at the first picture. Returns the number of samples.
pub fn to_mcap(mp4: &Path, out: &Path) -> crate::Result<usize> {
    use bagscope_reader::storage::mcap::writer::{McapOptions, McapWriter};
    let bad = |reason: String| -> crate::Error {
        super::VideoError {
            topic: mp4.display().to_string(),
            time_ns: None,
            codec: None,
            reason,
        }
        .into()
    };
    let tracks = tracks(mp4).map_err(bad)?;
    if tracks.is_empty() {
        return Err(bad("no H.264, H.265 or AV1 video track".into()));
    }
    let mut f = File::open(mp4)?;
    let len = f.metadata()?.len();
    for t in &tracks {
        if let Some((k, s)) = t
            .samples
            .iter()
            .enumerate()
            .find(|(_, s)| s.offset.saturating_add(u64::from(s.size)) > len)
        {
            return Err(bad(format!(
                "track {}, sample {k}: {} bytes at {}, past the file's end ({len})",
                t.id, s.size, s.offset
            )));
        }
    }
    let mut w = McapWriter::create(
        out,
        McapOptions {
            profile: "ros2".into(),
            ..McapOptions::default()
        },
    )?;
    let schema = w.add_schema(
        "foxglove_msgs/msg/CompressedVideo",
        "ros2msg",
        DEFINITION.as_bytes(),
    )?;
    let mut all = Vec::new();
    for t in &tracks {
        let ch = w.add_channel(schema, &topic_of(t, tracks.len()), "cdr", &[])?;
        let first = t.samples.iter().map(|s| s.pts).min().unwrap_or(0);
        let mut shown: Vec<i64> = t.samples.iter().map(|s| s.pts - first).collect();
        shown.sort_unstable();
        let format = match t.codec {
            Codec::H264 => "h264",
            Codec::H265 => "h265",
            Codec::Av1 => "av1",
        };
        for (k, s) in t.samples.iter().enumerate() {
            let ticks = u128::try_from(shown[k].max(0)).unwrap_or(0);
            let time =
                u64::try_from(ticks * 1_000_000_000 / u128::from(t.timescale)).unwrap_or(u64::MAX);
            all.push((time, ch, t, *s, format));
        }
    }
    // In time order across tracks (each track's own order kept).
    all.sort_by_key(|m| m.0);
    let mut buf = Vec::new();
    for (seq, (time, ch, t, s, format)) in all.iter().enumerate() {
        buf.resize(s.size as usize, 0);
        f.seek(SeekFrom::Start(s.offset))?;
        f.read_exact(&mut buf).map_err(|e| {
            bad(format!(
                "sample {seq} ({} bytes at {}): {e}",
                s.size, s.offset
            ))
        })?;
        let data = packet(t, s, &buf).map_err(bad)?;
        w.write(
            *ch,
            seq as u32,
            *time,
            *time,
            &cdr(*time, "video", &data, format),
        )?;
    }
    w.finish()?;
    Ok(all.len())
}

/// The recording made of the MP4 file `mp4` in the cache folder `cache` ([`to_mcap`]), made
/// once: again only when the file (its path, size or time) or bagscope's version changes.
pub fn cached(mp4: &Path, cache: &Path) -> crate::Result<std::path::PathBuf> {
    let canonical = std::fs::canonicalize(mp4).unwrap_or_else(|_| mp4.to_path_buf());
    let m = std::fs::metadata(mp4)?;
    let key = format!(
        "{}\n{}\n{} {:?}\n",
        env!("CARGO_PKG_VERSION"),
        canonical.display(),
        m.len(),
        m.modified().ok()
    );
    std::fs::create_dir_all(cache)?;
    let out = cache.join(format!("mp4-{:x}.mcap", md5::compute(key.as_bytes())));
    if !out.is_file() {
        to_mcap(mp4, &out)?;
    }
    Ok(out)
}
