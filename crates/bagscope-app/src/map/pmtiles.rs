//! PMTiles version 3 archives (one file of map tiles, read by ranges: the map's fully offline
//! source), read synchronously on the tile worker: the 127-byte header, the root directory,
//! leaf directories (gzip or uncompressed), and a tile's bytes by its Hilbert tile id, as the
//! specification (github.com/protomaps/PMTiles, `spec/v3/spec.md`) lays them out. The
//! `pmtiles` crate reads them through tokio and async traits; this is the part the map needs
//! (about 150 lines, no runtime), checked against archives written by PyPI's `pmtiles`.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// One directory entry: tiles `tile_id .. tile_id + run_length` at `offset`, or (run length 0)
/// a leaf directory there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    tile_id: u64,
    offset: u64,
    length: u32,
    run_length: u32,
}

/// An open archive.
#[derive(Debug)]
pub struct PmTiles {
    file: File,
    root: Vec<Entry>,
    leaf_offset: u64,
    data_offset: u64,
    /// Directories' compression: 1 none, 2 gzip.
    internal: u8,
    /// Tiles' compression: 1 none, 2 gzip.
    tile_compression: u8,
    /// Zoom levels held.
    pub min_zoom: u8,
    /// See `min_zoom`.
    pub max_zoom: u8,
}

/// The Hilbert tile id of `z/x/y`: the tiles of the zooms before, then the position on the
/// zoom's Hilbert curve.
pub fn tile_id(z: u8, x: u32, y: u32) -> u64 {
    let mut acc: u64 = 0;
    for t in 0..u32::from(z) {
        acc += 1u64 << (2 * t);
    }
    let (mut x, mut y) = (u64::from(x), u64::from(y));
    let mut d: u64 = 0;
    let mut s: u64 = (1u64 << z) / 2;
    while s > 0 {
        let rx = u64::from(x & s > 0);
        let ry = u64::from(y & s > 0);
        d += s * s * ((3 * rx) ^ ry);
        if ry == 0 {
            if rx == 1 {
                // As the reference does it in unsigned arithmetic: the bits above `s` are
                // never looked at again.
                x = (s - 1).wrapping_sub(x);
                y = (s - 1).wrapping_sub(y);
            }
            std::mem::swap(&mut x, &mut y);
        }
        s /= 2;
    }
    acc + d
}

fn varint(b: &[u8], pos: &mut usize) -> Result<u64, String> {
    let mut v: u64 = 0;
    for shift in (0..64).step_by(7) {
        let byte = *b.get(*pos).ok_or("a directory ends inside a number")?;
        *pos += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err("a directory number longer than 64 bits".into())
}

fn decompress(bytes: Vec<u8>, compression: u8, what: &str) -> Result<Vec<u8>, String> {
    match compression {
        0 | 1 => Ok(bytes),
        2 => {
            let mut out = Vec::new();
            flate2::read::GzDecoder::new(bytes.as_slice())
                .take(64 << 20)
                .read_to_end(&mut out)
                .map_err(|e| format!("{what}: gzip: {e}"))?;
            Ok(out)
        }
        c => Err(format!(
            "{what}: compression {c} (3 brotli, 4 zstd) is not read: write the archive with gzip or none"
        )),
    }
}

fn directory(b: &[u8]) -> Result<Vec<Entry>, String> {
    let mut pos = 0;
    let n = varint(b, &mut pos)?;
    if n > (b.len() as u64) {
        return Err(format!("a directory of {n} entries in {} bytes", b.len()));
    }
    let n = n as usize;
    let mut e = vec![
        Entry {
            tile_id: 0,
            offset: 0,
            length: 0,
            run_length: 0
        };
        n
    ];
    let mut last = 0u64;
    for x in &mut e {
        last = last.saturating_add(varint(b, &mut pos)?);
        x.tile_id = last;
    }
    for x in &mut e {
        x.run_length = varint(b, &mut pos)? as u32;
    }
    for x in &mut e {
        x.length = varint(b, &mut pos)? as u32;
    }
    for i in 0..n {
        let v = varint(b, &mut pos)?;
        e[i].offset = if v == 0 && i > 0 {
            e[i - 1].offset + u64::from(e[i - 1].length)
        } else {
            v.saturating_sub(1)
        };
    }
    Ok(e)
}

impl PmTiles {
    fn read_at(&mut self, offset: u64, len: u64) -> Result<Vec<u8>, String> {
        if len > 64 << 20 {
            return Err(format!("a {len}-byte read: not a tile archive's"));
        }
        let mut b = vec![0; len as usize];
        self.file
            .seek(SeekFrom::Start(offset))
            .and_then(|_| self.file.read_exact(&mut b))
            .map_err(|e| format!("{len} bytes at {offset}: {e}"))?;
        Ok(b)
    }

    /// Opens an archive: its header and root directory.
    pub fn open(path: &Path) -> Result<PmTiles, String> {
        let name = path.display();
        let mut file = File::open(path).map_err(|e| format!("{name}: {e}"))?;
        let mut h = [0u8; 127];
        file.read_exact(&mut h)
            .map_err(|e| format!("{name}: no PMTiles header: {e}"))?;
        if &h[..7] != b"PMTiles" || h[7] != 3 {
            return Err(format!("{name}: not a PMTiles version 3 archive"));
        }
        let u = |i: usize| {
            let mut a = [0u8; 8];
            a.copy_from_slice(&h[i..i + 8]);
            u64::from_le_bytes(a)
        };
        let mut p = PmTiles {
            file,
            root: Vec::new(),
            leaf_offset: u(40),
            data_offset: u(56),
            internal: h[97],
            tile_compression: h[98],
            min_zoom: h[100],
            max_zoom: h[101],
        };
        let root = p.read_at(u(8), u(16))?;
        p.root = directory(&decompress(root, p.internal, "root directory")?)
            .map_err(|e| format!("{name}: root directory: {e}"))?;
        Ok(p)
    }

    /// The bytes of tile `z/x/y`, decompressed; `None` where the archive has none.
    pub fn tile(&mut self, z: u8, x: u32, y: u32) -> Result<Option<Vec<u8>>, String> {
        if z < self.min_zoom || z > self.max_zoom {
            return Ok(None);
        }
        let id = tile_id(z, x, y);
        let mut dir = self.root.clone();
        // A leaf directory can point at another: at most a few levels in any real archive.
        for _ in 0..4 {
            let i = dir.partition_point(|e| e.tile_id <= id);
            let Some(e) = i.checked_sub(1).map(|i| dir[i]) else {
                return Ok(None);
            };
            if e.run_length == 0 {
                let b = self.read_at(self.leaf_offset + e.offset, u64::from(e.length))?;
                dir = directory(&decompress(b, self.internal, "leaf directory")?)?;
                continue;
            }
            if id >= e.tile_id + u64::from(e.run_length) {
                return Ok(None);
            }
            let b = self.read_at(self.data_offset + e.offset, u64::from(e.length))?;
            return decompress(b, self.tile_compression, "tile").map(Some);
        }
        Err("leaf directories nested more than four deep".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tile_ids_as_the_specification_numbers_them() {
        // The specification's table: 0/0/0 is 0, zoom 1's four tiles are 1..=4 along the
        // curve, 12/3423/1763 is 19078479 (the JavaScript reference's test).
        assert_eq!(tile_id(0, 0, 0), 0);
        assert_eq!(tile_id(1, 0, 0), 1);
        assert_eq!(tile_id(1, 0, 1), 2);
        assert_eq!(tile_id(1, 1, 1), 3);
        assert_eq!(tile_id(1, 1, 0), 4);
        assert_eq!(tile_id(2, 0, 0), 5);
        assert_eq!(tile_id(12, 3423, 1763), 19_078_479);
    }

    #[test]
    fn directories_and_bad_input() {
        // Two entries: tiles 0 (run 1) at 0 (10 bytes) and 5..7 (run 3) right after.
        let b = [2, 0, 5, 1, 3, 10, 20, 1, 0];
        let e = directory(&b).unwrap();
        assert_eq!(e[1].tile_id, 5);
        assert_eq!(e[1].run_length, 3);
        assert_eq!(e[1].offset, 10);
        assert!(directory(&[200]).is_err());
        assert!(directory(&[3, 0, 1]).is_err());
    }
}
