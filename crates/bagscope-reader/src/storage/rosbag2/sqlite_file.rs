//! SQLite's file format, read directly for one job: walking the rows of rosbag2's `messages`
//! table in id order, faster than SQLite's own cursor (no virtual machine per row, pages read in
//! runs of up to 1 MiB, the walk split between threads).
//!
//! Only what that needs is read: the 100-byte database header, interior and leaf pages of a
//! rowid table's b-tree (<https://www.sqlite.org/fileformat2.html>, sections 1.3, 1.6, 2.1) and
//! overflow chains. Everything else (the schema, WAL files, odd schemas) stays with SQLite
//! itself, through `rusqlite`, which is also the fallback when this reader refuses a file.
//!
//! A database is untrusted input: every page number, cell pointer, varint and length is checked
//! against the file, the walk visits no more pages than the file has, and an error says which
//! page (and its byte offset) is wrong.

use std::fs::File;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Largest run of consecutive pages read by one system call.
const RUN_BYTES: usize = 1 << 20;
/// Pages of other b-trees read over (and not used) between two leaves of one run.
const MAX_GAP: u64 = 4;
/// Deepest b-tree accepted (SQLite's own limit is 20 for any real database).
const MAX_DEPTH: usize = 64;

/// One leaf page of a table b-tree and the largest rowid its parent allows in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Leaf {
    pub page: u32,
    pub max_key: i64,
}

/// An open database file: its page geometry and the file to read pages from.
#[derive(Debug)]
pub(crate) struct SqliteFile {
    file: File,
    path: PathBuf,
    page_size: usize,
    usable: usize,
    pages: u32,
}

/// One row of a table leaf: its rowid, payload size and the part of the payload stored on the
/// leaf (the rest follows the overflow chain from `overflow`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Row<'a> {
    pub rowid: i64,
    pub size: u64,
    pub local: &'a [u8],
    pub overflow: u32,
}

/// A SQLite varint at the start of `b`: (value, length), or `None` if `b` ends first.
#[inline]
pub(crate) fn varint(b: &[u8]) -> Option<(u64, usize)> {
    // Most varints (serial types, small sizes) are one byte.
    match b.first() {
        Some(&x) if x < 0x80 => return Some((u64::from(x), 1)),
        None => return None,
        _ => {}
    }
    let mut v: u64 = 0;
    for i in 0..9 {
        let byte = *b.get(i)?;
        if i == 8 {
            return Some(((v << 8) | u64::from(byte), 9));
        }
        v = (v << 7) | u64::from(byte & 0x7f);
        if byte & 0x80 == 0 {
            return Some((v, i + 1));
        }
    }
    None
}

/// Size in bytes of a record value of serial type `t`, or `None` for the reserved types.
#[inline]
fn serial_size(t: u64) -> Option<u64> {
    Some(match t {
        0 | 8 | 9 => 0,
        1..=4 => t,
        5 => 6,
        6 | 7 => 8,
        10 | 11 => return None,
        _ => (t - 12) / 2,
    })
}

/// A column of a record: its serial type and where its value starts in the payload.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Column {
    pub serial: u64,
    pub at: u64,
}

impl Column {
    /// The value's length in the payload.
    pub fn len(&self) -> u64 {
        serial_size(self.serial).unwrap_or(0)
    }

    /// The integer value, if this column is an integer whose bytes lie in `local`.
    #[inline]
    pub fn int(&self, local: &[u8]) -> Option<i64> {
        let n = match self.serial {
            8 => return Some(0),
            9 => return Some(1),
            1..=6 => serial_size(self.serial)? as usize,
            _ => return None,
        };
        let at = usize::try_from(self.at).ok()?;
        let b = local.get(at..at + n)?;
        // Big-endian two's complement of n bytes, sign-extended.
        let mut v: i64 = if b[0] & 0x80 != 0 { -1 } else { 0 };
        for &x in b {
            v = (v << 8) | i64::from(x);
        }
        Some(v)
    }

    /// Whether the value is a blob or text (the bytes of a message).
    pub fn is_bytes(&self) -> bool {
        self.serial >= 12
    }
}

/// Columns 1 and 2 of a record as integers, when column 0 is a rowid alias (stored as NULL)
/// and the header's first types are one byte each (rosbag2's `id, topic_id, timestamp, ...`):
/// the common case, without the general header walk. `None` otherwise.
#[inline]
pub(crate) fn leading_ints(local: &[u8]) -> Option<(i64, i64)> {
    let h = *local.first()?;
    let (t0, t1, t2) = (*local.get(1)?, *local.get(2)?, *local.get(3)?);
    if !(4..0x80).contains(&h) || t0 != 0 || !matches!(t1, 1..=6 | 8 | 9) {
        return None;
    }
    let a = Column {
        serial: u64::from(t1),
        at: u64::from(h),
    };
    let b = Column {
        serial: u64::from(t2),
        at: u64::from(h) + a.len(),
    };
    Some((a.int(local)?, b.int(local)?))
}

/// The columns `want` (by index in the table's column order) of a record whose first bytes are
/// `local`: serial types and offsets, `None` past the record's last column (a shorter record).
/// `Err` with a reason when the header is malformed or does not lie in `local`.
#[inline]
pub(crate) fn columns<const N: usize>(
    local: &[u8],
    size: u64,
    want: [usize; N],
) -> std::result::Result<[Option<Column>; N], &'static str> {
    let (hlen, mut p) = varint(local).ok_or("record header cut off")?;
    if hlen > size || hlen < p as u64 {
        return Err("record header longer than the record");
    }
    let hlen = usize::try_from(hlen).map_err(|_| "record header too long")?;
    if hlen > local.len() {
        return Err("record header does not fit on its page");
    }
    let mut out = [None; N];
    let mut body = hlen as u64;
    let last = want.iter().copied().max().unwrap_or(0);
    let mut col = 0usize;
    while p < hlen && col <= last {
        let (t, n) = varint(&local[p..hlen]).ok_or("record header cut off")?;
        p += n;
        let len = serial_size(t).ok_or("reserved serial type in a record")?;
        for (k, &w) in want.iter().enumerate() {
            if w == col {
                out[k] = Some(Column {
                    serial: t,
                    at: body,
                });
            }
        }
        body = body.saturating_add(len);
        if body > size {
            return Err("record values longer than the record");
        }
        col += 1;
    }
    Ok(out)
}

impl SqliteFile {
    /// Opens `path` and reads its header; refuses anything that is not a SQLite 3 database.
    pub fn open(path: &Path) -> Result<SqliteFile> {
        let file = File::open(path).map_err(|e| Error::Open {
            path: path.to_path_buf(),
            source: e,
        })?;
        let len = file.metadata()?.len();
        let mut h = [0u8; 100];
        let n = crate::storage::pread_full(&file, &mut h, 0)?;
        let bad = |reason: String| Error::Storage {
            path: path.to_path_buf(),
            reason,
        };
        if n < 100 || &h[..16] != crate::storage::rosbag2::SQLITE_MAGIC {
            return Err(bad("not a SQLite 3 database (header, byte 0)".into()));
        }
        let page_size = match u16::from_be_bytes([h[16], h[17]]) {
            1 => 65536,
            p => usize::from(p),
        };
        if !page_size.is_power_of_two() || !(512..=65536).contains(&page_size) {
            return Err(bad(format!("page size {page_size} (header, byte 16)")));
        }
        let reserved = usize::from(h[20]);
        let usable = page_size - reserved;
        if usable < 480 {
            return Err(bad(format!(
                "{reserved} reserved bytes per page leave fewer than 480 (header, byte 20)"
            )));
        }
        let pages = u32::try_from(len / page_size as u64).unwrap_or(u32::MAX);
        Ok(SqliteFile {
            file,
            path: path.to_path_buf(),
            page_size,
            usable,
            pages,
        })
    }

    /// An error about `page`, with its byte offset in the file.
    pub fn bad(&self, page: u32, what: impl std::fmt::Display) -> Error {
        Error::Storage {
            path: self.path.clone(),
            reason: format!(
                "page {page} (byte {}): {what}",
                u64::from(page.saturating_sub(1)) * self.page_size as u64
            ),
        }
    }

    /// Reads `n` pages from page `first` (1-based) into `buf`.
    pub fn read_pages(&self, first: u32, n: usize, buf: &mut Vec<u8>) -> Result<()> {
        if first == 0 || u64::from(first) + n as u64 - 1 > u64::from(self.pages) {
            return Err(self.bad(
                first,
                format!(
                    "page number past the end of the file ({} pages)",
                    self.pages
                ),
            ));
        }
        buf.resize(n * self.page_size, 0);
        let pos = u64::from(first - 1) * self.page_size as u64;
        if crate::storage::pread_full(&self.file, buf, pos)? < buf.len() {
            return Err(self.bad(first, "the file ends inside this page"));
        }
        Ok(())
    }

    /// The b-tree page header of `page` (its bytes in `b`): (type, cell count, cell pointer
    /// array offset, right-most child for interior pages).
    fn header(&self, page: u32, b: &[u8]) -> Result<(u8, usize, usize, u32)> {
        let h = if page == 1 { 100 } else { 0 };
        let get = |i: usize| b.get(h + i).copied().unwrap_or(0);
        let kind = get(0);
        let cells = usize::from(u16::from_be_bytes([get(3), get(4)]));
        let (ptrs, right) = match kind {
            0x0d => (h + 8, 0),
            0x05 => (
                h + 12,
                u32::from_be_bytes([get(8), get(9), get(10), get(11)]),
            ),
            k => {
                return Err(self.bad(
                    page,
                    format!("page type {k:#04x} where a table b-tree page was expected"),
                ))
            }
        };
        if ptrs + 2 * cells > self.usable {
            return Err(self.bad(page, format!("{cells} cells do not fit on the page")));
        }
        Ok((kind, cells, ptrs, right))
    }

    /// The offset of cell `i` on a page whose cell pointer array starts at `ptrs`.
    fn cell_at(&self, page: u32, b: &[u8], ptrs: usize, i: usize) -> Result<usize> {
        let p = ptrs + 2 * i;
        let at = usize::from(u16::from_be_bytes([b[p], b[p + 1]]));
        if at < ptrs || at >= self.usable {
            return Err(self.bad(page, format!("cell {i} points outside the page ({at})")));
        }
        Ok(at)
    }

    /// How many levels of interior pages lie above the leaves, down the leftmost path (every
    /// leaf of a b-tree is at the same depth).
    fn interior_levels(&self, root: u32, buf: &mut Vec<u8>) -> Result<usize> {
        let mut page = root;
        for levels in 0..=MAX_DEPTH {
            self.read_pages(page, 1, buf)?;
            let (kind, cells, ptrs, right) = self.header(page, buf)?;
            if kind == 0x0d {
                return Ok(levels);
            }
            page = if cells > 0 {
                let at = self.cell_at(page, buf, ptrs, 0)?;
                let c = buf
                    .get(at..at + 4)
                    .ok_or_else(|| self.bad(page, "interior cell 0 cut off"))?;
                u32::from_be_bytes([c[0], c[1], c[2], c[3]])
            } else {
                right
            };
        }
        Err(self.bad(root, format!("b-tree deeper than {MAX_DEPTH} levels")))
    }

    /// The leaves of the table b-tree rooted at `root`, in key order, each with the largest key
    /// its parent allows. Reads interior pages only: every leaf is at the depth of the first
    /// (a leaf that is not is refused when its rows are read).
    pub fn leaves(&self, root: u32) -> Result<Vec<Leaf>> {
        let mut out = Vec::new();
        let mut buf = Vec::new();
        let levels = self.interior_levels(root, &mut buf)?;
        if levels == 0 {
            return Ok(vec![Leaf {
                page: root,
                max_key: i64::MAX,
            }]);
        }
        // (interior page, largest key allowed, depth), taken from the end: children pushed in
        // reverse.
        let mut stack = vec![(root, i64::MAX, 0usize)];
        let mut visited: u64 = 0;
        while let Some((page, max_key, depth)) = stack.pop() {
            visited += 1;
            if visited > u64::from(self.pages) {
                return Err(self.bad(page, "the b-tree has more pages than the file (a loop)"));
            }
            self.read_pages(page, 1, &mut buf)?;
            let (kind, cells, ptrs, right) = self.header(page, &buf)?;
            if kind == 0x0d {
                return Err(self.bad(page, "a leaf above the depth of the b-tree's leaves"));
            }
            let mut children = Vec::with_capacity(cells + 1);
            let mut last = i64::MIN;
            for i in 0..cells {
                let at = self.cell_at(page, &buf, ptrs, i)?;
                let cell = &buf[at..self.usable];
                if cell.len() < 5 {
                    return Err(self.bad(page, format!("interior cell {i} cut off")));
                }
                let child = u32::from_be_bytes([cell[0], cell[1], cell[2], cell[3]]);
                let (key, _) = varint(&cell[4..])
                    .ok_or_else(|| self.bad(page, format!("interior cell {i} key cut off")))?;
                let key = key as i64;
                if key < last || key > max_key {
                    return Err(self.bad(page, format!("interior cell {i}: keys out of order")));
                }
                last = key;
                children.push((child, key));
            }
            children.push((right, max_key));
            if depth + 1 == levels {
                out.extend(
                    children
                        .iter()
                        .map(|&(page, max_key)| Leaf { page, max_key }),
                );
                if out.len() as u64 > u64::from(self.pages) {
                    return Err(
                        self.bad(page, "the b-tree has more leaves than the file has pages")
                    );
                }
            } else {
                for &(child, key) in children.iter().rev() {
                    stack.push((child, key, depth + 1));
                }
            }
        }
        Ok(out)
    }

    /// Calls `f` with every row of the leaf page `page`, whose bytes are `b`, in key order.
    pub fn leaf_rows<'b>(
        &self,
        page: u32,
        b: &'b [u8],
        mut f: impl FnMut(Row<'b>) -> Result<()>,
    ) -> Result<()> {
        let (kind, cells, ptrs, _) = self.header(page, b)?;
        if kind != 0x0d {
            return Err(self.bad(page, "an interior page where a leaf was expected"));
        }
        let u = self.usable;
        let x = u - 35;
        let m = ((u - 12) * 32 / 255) - 23;
        for i in 0..cells {
            let at = self.cell_at(page, b, ptrs, i)?;
            let cell = &b[at..u];
            let (size, n1) =
                varint(cell).ok_or_else(|| self.bad(page, format!("cell {i} cut off")))?;
            let (rowid, n2) =
                varint(&cell[n1..]).ok_or_else(|| self.bad(page, format!("cell {i} cut off")))?;
            let start = n1 + n2;
            // A payload cannot be larger than the file that holds it (a forged size would
            // otherwise be trusted by whoever reserves room for it).
            if size > u64::from(self.pages) * self.page_size as u64 {
                return Err(self.bad(
                    page,
                    format!(
                        "cell {i} (row {}) claims {size} bytes, more than the file",
                        rowid as i64
                    ),
                ));
            }
            let local = if size <= x as u64 {
                size as usize
            } else {
                let k = m as u64 + (size - m as u64) % (u as u64 - 4);
                if k <= x as u64 {
                    k as usize
                } else {
                    m
                }
            };
            let end = start + local;
            let spills = (local as u64) < size;
            let need = end + if spills { 4 } else { 0 };
            if need > cell.len() {
                return Err(self.bad(
                    page,
                    format!("cell {i} (row {}) runs past the page", rowid as i64),
                ));
            }
            let overflow = if spills {
                u32::from_be_bytes([cell[end], cell[end + 1], cell[end + 2], cell[end + 3]])
            } else {
                0
            };
            f(Row {
                rowid: rowid as i64,
                size,
                local: &cell[start..end],
                overflow,
            })?;
        }
        Ok(())
    }

    /// Bytes `at..at + len` of a row's payload (following its overflow chain where they are not
    /// on the leaf), appended to `out`.
    pub fn payload_bytes(&self, row: &Row<'_>, at: u64, len: u64, out: &mut Vec<u8>) -> Result<()> {
        let end = at
            .checked_add(len)
            .filter(|&e| e <= row.size)
            .ok_or_else(|| self.bad(0, format!("row {}: value past the record", row.rowid)))?;
        let local = row.local.len() as u64;
        if at < local {
            out.extend_from_slice(&row.local[at as usize..end.min(local) as usize]);
        }
        if end <= local {
            return Ok(());
        }
        // The rest lies on overflow pages: each holds a next-page number, then usable - 4 bytes.
        let per = (self.usable - 4) as u64;
        let mut page = row.overflow;
        let mut from = local; // payload offset of the current overflow page's first byte
        let mut buf = Vec::new();
        let mut hops = 0u64;
        let max_hops = (row.size - local).div_ceil(per);
        while from < end {
            hops += 1;
            if hops > max_hops || page == 0 {
                return Err(self.bad(
                    page,
                    format!("row {}: overflow chain shorter than the row", row.rowid),
                ));
            }
            let upto = from + per;
            if upto > at {
                self.read_pages(page, 1, &mut buf)?;
                let lo = at.max(from) - from;
                let hi = end.min(upto) - from;
                out.extend_from_slice(&buf[4 + lo as usize..4 + hi as usize]);
                page = u32::from_be_bytes([buf[0], buf[1], buf[2], buf[3]]);
            } else {
                // Only the next-page number is needed from pages before the wanted bytes.
                let mut next = [0u8; 4];
                if page > self.pages {
                    return Err(self.bad(page, "overflow page past the end of the file"));
                }
                let pos = u64::from(page - 1) * self.page_size as u64;
                if crate::storage::pread_full(&self.file, &mut next, pos)? < 4 {
                    return Err(self.bad(page, "the file ends inside this page"));
                }
                page = u32::from_be_bytes(next);
            }
            from = upto;
        }
        Ok(())
    }

    /// Calls `f` for each leaf of `leaves` with its bytes, reading consecutive pages in runs.
    pub fn for_each_leaf(
        &self,
        leaves: &[Leaf],
        buf: &mut Vec<u8>,
        mut f: impl FnMut(&Leaf, &[u8]) -> Result<()>,
    ) -> Result<()> {
        let per_run = (RUN_BYTES / self.page_size).max(1);
        let mut i = 0;
        while i < leaves.len() {
            // A run of leaves in increasing page order, read with the few pages between them
            // (index pages interleave with a table's leaves when both grew together): one
            // system call for up to RUN_BYTES instead of one per stretch of leaves.
            let first = u64::from(leaves[i].page);
            let mut n = 1;
            while i + n < leaves.len() {
                let next = u64::from(leaves[i + n].page);
                let prev = u64::from(leaves[i + n - 1].page);
                if next <= prev || next - prev > MAX_GAP || next - first >= per_run as u64 {
                    break;
                }
                n += 1;
            }
            let span = (u64::from(leaves[i + n - 1].page) - first + 1) as usize;
            self.read_pages(leaves[i].page, span, buf)?;
            for leaf in &leaves[i..i + n] {
                let k = (u64::from(leaf.page) - first) as usize;
                let b = &buf[k * self.page_size..(k + 1) * self.page_size];
                f(leaf, b)?;
            }
            i += n;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_of_every_length() {
        assert_eq!(varint(&[0x05]), Some((5, 1)));
        assert_eq!(varint(&[0x81, 0x00]), Some((128, 2)));
        assert_eq!(varint(&[0xff; 9]), Some((u64::MAX, 9)));
        assert_eq!(varint(&[0x81]), None);
        assert_eq!(varint(&[]), None);
    }

    #[test]
    fn record_columns_and_their_checks() {
        // Header of 5 bytes: NULL (rowid alias), i8, i64, a 3-byte blob; then the values.
        let mut r = vec![5, 0, 1, 6, 18, 7];
        r.extend_from_slice(&(-2i64).to_be_bytes());
        r.extend_from_slice(b"abc");
        let size = r.len() as u64;
        let [a, b, c] = columns(&r, size, [1, 2, 3]).unwrap();
        assert_eq!(a.unwrap().int(&r), Some(7));
        assert_eq!(b.unwrap().int(&r), Some(-2));
        let c = c.unwrap();
        assert!(c.is_bytes() && c.len() == 3 && c.at == 14);
        assert_eq!(leading_ints(&r), Some((7, -2)));
        // A column past the record's last: None, not an error.
        assert!(columns(&r, size, [9]).unwrap()[0].is_none());
        // A header claiming more than the record, or values past its end: errors.
        assert!(columns(&[200, 0], 2, [0]).is_err());
        assert!(columns(&[3, 0, 40], 3, [1]).is_err());
        // Reserved serial types.
        assert!(columns(&[2, 10], 2, [0]).is_err());
    }
}
