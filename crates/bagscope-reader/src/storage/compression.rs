//! Chunk decompression, with the declared uncompressed size capped and checked.

use std::borrow::Cow;
use std::io::Read;

use crate::error::{Error, Result};

/// The compression of a chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum Compression {
    /// Uncompressed chunk.
    #[default]
    None,
    /// LZ4 frame (roslz4).
    Lz4,
    /// bzip2.
    Bz2,
    /// zstd (MCAP chunks, rosbag2 files and messages; never in ROS 1 bags).
    Zstd,
}

impl Compression {
    /// The name as written in the `compression` field.
    pub fn name(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Lz4 => "lz4",
            Self::Bz2 => "bz2",
            Self::Zstd => "zstd",
        }
    }
    /// Parses a `compression` field or a command-line name.
    pub fn from_name(s: &[u8]) -> Option<Self> {
        match s {
            b"none" | b"" => Some(Self::None),
            b"lz4" => Some(Self::Lz4),
            b"bz2" => Some(Self::Bz2),
            _ => None,
        }
    }
}

/// Largest uncompressed chunk bagscope accepts (rosbag's chunks are 768 KiB by default; real
/// bags with one huge message reach tens of MiB).
pub const MAX_CHUNK_SIZE: u64 = 1 << 30;

/// Decompresses a chunk's data, which must produce exactly `size` bytes.
///
/// Uncompressed chunks are borrowed, not copied.
pub fn decompress(
    compression: Compression,
    data: &[u8],
    size: u32,
    chunk_pos: u64,
) -> Result<Cow<'_, [u8]>> {
    let (out, err) = decompress_lenient(compression, data, size, chunk_pos);
    match err {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// Like [`decompress`], into `out` (a buffer of an earlier chunk, reused: its memory is
/// neither allocated nor zeroed again), with `out` handed back. zstd is decompressed in one
/// call into `out`'s memory; every error, and every other compression, goes the way of
/// [`decompress`], which says exactly what is wrong.
pub fn decompress_into(
    compression: Compression,
    data: &[u8],
    size: u32,
    chunk_pos: u64,
    mut out: Vec<u8>,
) -> Result<Vec<u8>> {
    let want = size as usize;
    // A forged size past what the bytes present can expand to is not reserved: the
    // streaming decoder grows its buffer as output arrives instead.
    let plausible = data.len().saturating_mul(256).saturating_add(1 << 16);
    if compression == Compression::Zstd && u64::from(size) <= MAX_CHUNK_SIZE && want <= plausible {
        out.clear();
        // With room for a somewhat larger chunk next (see `read_at_into`).
        if out.capacity() < want {
            out.reserve_exact(want.saturating_add(want / 8));
        }
        let n = ZSTD.with(|z| {
            let mut z = z.borrow_mut();
            if z.is_none() {
                *z = zstd::bulk::Decompressor::new().ok();
            }
            z.as_mut().map(|d| d.decompress_to_buffer(data, &mut out))
        });
        if let Some(Ok(n)) = n {
            if n == want {
                return Ok(out);
            }
        }
    }
    match decompress_lenient_into(compression, data, size, chunk_pos, out) {
        (_, Some(e)) => Err(e),
        (out, None) => Ok(out.into_owned()),
    }
}

thread_local! {
    /// Each thread's zstd decompression context, made once (its tables are reused).
    static ZSTD: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> =
        const { std::cell::RefCell::new(None) };
}

/// Decompresses as much as possible: returns what was produced and the error that stopped it,
/// if any. The recovery scan uses this on truncated chunks.
pub fn decompress_lenient(
    compression: Compression,
    data: &[u8],
    size: u32,
    chunk_pos: u64,
) -> (Cow<'_, [u8]>, Option<Error>) {
    decompress_lenient_into(compression, data, size, chunk_pos, Vec::new())
}

/// [`decompress_lenient`] into `out`'s memory (uncompressed data is borrowed instead).
fn decompress_lenient_into(
    compression: Compression,
    data: &[u8],
    size: u32,
    chunk_pos: u64,
    out: Vec<u8>,
) -> (Cow<'_, [u8]>, Option<Error>) {
    let err = |reason: String| Error::Decompress {
        chunk_pos,
        compression: compression.name().into(),
        reason,
    };
    if u64::from(size) > MAX_CHUNK_SIZE {
        return (
            Cow::Borrowed(&[][..]),
            Some(err(format!(
                "declared uncompressed size {size} exceeds the limit of {MAX_CHUNK_SIZE}"
            ))),
        );
    }
    let size = size as usize;
    match compression {
        Compression::None => {
            if data.len() == size {
                (Cow::Borrowed(data), None)
            } else {
                let n = data.len().min(size);
                (
                    Cow::Borrowed(&data[..n]),
                    Some(err(format!(
                        "declared size {size} but the chunk holds {} bytes",
                        data.len()
                    ))),
                )
            }
        }
        Compression::Lz4 => {
            let mut dec = lz4_flex::frame::FrameDecoder::new(data);
            read_exact_size(&mut dec, size, data.len(), err, out)
        }
        Compression::Bz2 => {
            // bagscope's decoder of a whole chunk (see `super::bz2`) first; on any error the
            // chunk goes through libbz2, which gives the error and what it could decode.
            let mut out = out;
            if super::bz2::decode(data, &mut out, size).is_ok() && out.len() == size {
                return (Cow::Owned(out), None);
            }
            // Straight from the slice (a `BufRead`): no copy through a reader's buffer.
            let mut dec = bzip2::bufread::BzDecoder::new(data);
            read_exact_size(&mut dec, size, data.len(), err, out)
        }
        Compression::Zstd => match zstd::stream::read::Decoder::with_buffer(data) {
            Ok(mut dec) => read_exact_size(&mut dec, size, data.len(), err, out),
            Err(e) => (Cow::Borrowed(&[][..]), Some(err(e.to_string()))),
        },
    }
}

fn read_exact_size<'a>(
    r: &mut dyn Read,
    size: usize,
    compressed: usize,
    err: impl Fn(String) -> Error,
    mut out: Vec<u8>,
) -> (Cow<'a, [u8]>, Option<Error>) {
    // The declared size comes from the file. Allocate it at once only while it is plausible
    // for the bytes present (lz4 expands at most ~255x); past that, grow as output arrives,
    // so a forged size costs nothing. A buffer reused is zeroed only past what it held.
    let plausible = compressed.saturating_mul(256).saturating_add(1 << 16);
    let first = size.min(plausible);
    if out.capacity() == 0 {
        out = vec![0u8; first];
    } else {
        out.truncate(first);
        out.resize(first, 0);
    }
    let mut filled = 0;
    loop {
        if filled == out.len() {
            if out.len() >= size {
                break;
            }
            let grow = (out.len() * 2).clamp(1 << 16, size);
            out.resize(grow, 0);
        }
        match r.read(&mut out[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => {
                out.truncate(filled);
                return (Cow::Owned(out), Some(err(e.to_string())));
            }
        }
    }
    out.truncate(filled);
    if filled < size {
        return (
            Cow::Owned(out),
            Some(err(format!(
                "produced {filled} bytes, but the chunk declares {size}"
            ))),
        );
    }
    // The stream must end exactly at the declared size.
    let mut probe = [0u8; 1];
    match r.read(&mut probe) {
        Ok(0) => (Cow::Owned(out), None),
        Ok(_) => (
            Cow::Owned(out),
            Some(err(format!(
                "produces more than the {size} bytes the chunk declares"
            ))),
        ),
        Err(e) => (Cow::Owned(out), Some(err(e.to_string()))),
    }
}

/// Compresses a chunk's records for writing.
pub fn compress(compression: Compression, data: &[u8]) -> Result<Vec<u8>> {
    use std::io::Write;
    match compression {
        Compression::None => Ok(data.to_vec()),
        Compression::Lz4 => {
            // roslz4 (ROS 1's own reader: `rosbag play`, rqt_bag, the C++ and Python APIs) takes
            // only frames of independent blocks that carry a content checksum.
            let info = lz4_flex::frame::FrameInfo::new()
                .block_mode(lz4_flex::frame::BlockMode::Independent)
                .content_checksum(true);
            let mut enc = lz4_flex::frame::FrameEncoder::with_frame_info(
                info,
                Vec::with_capacity(data.len() / 2),
            );
            enc.write_all(data)?;
            enc.finish()
                .map_err(|e| Error::Io(std::io::Error::other(e.to_string())))
        }
        Compression::Zstd => Ok(zstd::bulk::compress(data, 3)?),
        Compression::Bz2 => {
            let mut enc = bzip2::write::BzEncoder::new(
                Vec::with_capacity(data.len() / 3),
                bzip2::Compression::new(9),
            );
            enc.write_all(data)?;
            Ok(enc.finish()?)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_checks_the_declared_size() {
        let data: Vec<u8> = (0..100_000u32)
            .flat_map(|i| (i % 251).to_le_bytes())
            .collect();
        for c in [Compression::None, Compression::Lz4, Compression::Bz2] {
            let z = compress(c, &data).unwrap();
            let out = decompress(c, &z, data.len() as u32, 0).unwrap();
            assert_eq!(&out[..], &data[..], "{c:?}");
            assert!(
                decompress(c, &z, data.len() as u32 - 1, 0).is_err(),
                "{c:?} too big"
            );
            assert!(
                decompress(c, &z, data.len() as u32 + 1, 0).is_err(),
                "{c:?} too small"
            );
            let e = decompress(c, &z, u32::MAX, 5).unwrap_err();
            assert!(e.to_string().contains("exceeds the limit"), "{e}");
            // A truncated stream gives its prefix and an error, never a panic.
            let (part, err) = decompress_lenient(c, &z[..z.len() / 2], data.len() as u32, 0);
            assert!(err.is_some());
            assert_eq!(&part[..], &data[..part.len()]);
        }
    }

    /// Into a reused buffer (zstd in one call, lz4 and bz2 streamed into its memory): the
    /// same bytes as the streaming decoder into a fresh one, whatever the buffer held before;
    /// a wrong declared size, a cut stream or a forged size is the same error.
    #[test]
    fn into_a_reused_buffer_checks_as_the_stream_does() {
        let data: Vec<u8> = (0..300_000u32)
            .flat_map(|i| (i % 997).to_le_bytes())
            .collect();
        let n = data.len() as u32;
        for c in [Compression::Zstd, Compression::Lz4, Compression::Bz2] {
            let z = compress(c, &data).unwrap();
            for reuse in [Vec::new(), vec![7u8; 10], vec![9u8; 2_000_000]] {
                let out = decompress_into(c, &z, n, 0, reuse).unwrap();
                assert_eq!(out, data, "{c:?}");
            }
            for (size, cut) in [
                (n - 1, z.len()),
                (n + 1, z.len()),
                (n, z.len() / 2),
                (u32::MAX, z.len()),
            ] {
                let into = decompress_into(c, &z[..cut], size, 3, vec![1u8; 4 << 20]);
                let stream = decompress(c, &z[..cut], size, 3).map(|c| c.into_owned());
                assert_eq!(
                    into.unwrap_err().to_string(),
                    stream.unwrap_err().to_string(),
                    "{c:?} {size} {cut}"
                );
            }
        }
    }
}
