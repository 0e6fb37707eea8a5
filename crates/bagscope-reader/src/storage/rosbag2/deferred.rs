//! A SQLite recording opened from its metadata.yaml before its rows are read: the row scan that completes its summary and tables when first needed, keeping the rows of the connections asked for first.

use std::collections::HashMap;

use super::{compare_metadata, scan_rows, Capture, Metadata, RowScan, SqliteSource};
use crate::error::{Error, Result};
use crate::storage::compression::Compression;
use crate::storage::rosbag2::sqlite_file::Leaf;
use crate::storage::{Chunk, IndexEntry, MessageTables, Source, Summary};

/// What scanning a database's rows needs: its topic ids, its row id range, the index cache's
/// key, its metadata.yaml.
#[derive(Debug)]
pub(super) struct RowsToScan {
    pub(super) by_topic_id: HashMap<i64, usize>,
    pub(super) ncon: usize,
    /// Messages expected per connection (metadata.yaml's, borne out by the database): the
    /// tables are given their room at once instead of growing by doubling.
    pub(super) expected: Option<Vec<u64>>,
    pub(super) range: Option<(i64, i64)>,
    pub(super) key: Option<crate::storage::index_cache::Key>,
    pub(super) meta: Option<Metadata>,
    /// Threads the scan may use ([`crate::OpenOptions::threads`], resolved at open).
    pub(super) threads: usize,
}

/// The row scan of a rosbag2 SQLite recording opened from its metadata.yaml (see
/// [`Opened::deferred`]): run by [`complete`] when the blocks or tables are first needed.
#[derive(Debug)]
pub(crate) struct Deferred {
    pub(super) rows: RowsToScan,
}

/// Every row's block and table entry, the rows naming no known topic, and the blocks of the
/// rows captured (by block index).
pub(super) struct ScannedRows {
    pub(super) chunks: Vec<Chunk>,
    pub(super) per: Vec<Vec<IndexEntry>>,
    pub(super) unknown: u64,
    pub(super) captured: HashMap<u32, Vec<u8>>,
    /// Taken from bagscope's index cache, not scanned.
    pub(super) from_cache: bool,
}

impl ScannedRows {
    /// The blocks (chunks) and tables, with a warning for rows of unknown topics.
    pub(super) fn into_blocks(
        mut self,
        warnings: &mut Vec<String>,
        zstd_messages: bool,
    ) -> (Vec<Chunk>, Vec<Vec<IndexEntry>>) {
        if self.unknown > 0 {
            warnings.push(format!(
                "{} messages name a topic id that the topics table does not define; left out",
                self.unknown
            ));
        }
        if zstd_messages {
            for c in &mut self.chunks {
                c.compression = Compression::Zstd;
            }
        }
        (self.chunks, self.per)
    }
}

impl RowsToScan {
    /// Reads every row's id, topic and time: from the file's pages where the direct reader
    /// takes them (else, or where it refuses a page, through SQLite, which says what is wrong
    /// if anything is), the work split between threads; then keeps the result in the index
    /// cache.
    ///
    /// `capture`: connections whose payloads are kept as they are met (up to
    /// [`CAPTURE_BYTES`]), for reading them next without a second pass.
    pub(super) fn scan(
        &self,
        src: &SqliteSource,
        capture: Option<&[usize]>,
    ) -> Result<ScannedRows> {
        let path = src.shown_path.as_path();
        let ncon = self.ncon;
        // Scanned once before: the index cache's copy (every connection's entries).
        if let Some(c) = self
            .key
            .as_ref()
            .and_then(|k| crate::storage::index_cache::load_rows(k, ncon))
        {
            return Ok(ScannedRows {
                chunks: c.chunks,
                per: c.per,
                unknown: c.unknown,
                captured: HashMap::new(),
                from_cache: true,
            });
        }
        let by_topic_id = &self.by_topic_id;
        let bytes = std::sync::atomic::AtomicUsize::new(0);
        let given_up = std::sync::atomic::AtomicBool::new(false);
        let cap = capture.map(|conns| Capture {
            want: (0..ncon).map(|c| conns.contains(&c)).collect(),
            zstd: src.zstd_messages,
            path,
            bytes: &bytes,
            budget: CAPTURE_BYTES,
            given_up: &given_up,
        });
        let direct_scan = src.direct().and_then(|d| {
            let threads = self.threads.clamp(1, 4);
            let per_thread = d.leaves.len().div_ceil(threads).max(1);
            let parts: Vec<&[Leaf]> = d.leaves.chunks(per_thread).collect();
            // Room for each part's share of the expected messages (no more than the file
            // could hold: rows take 4 bytes or more).
            let leaves = d.leaves.len().max(1) as u128;
            let most = u128::from(src.size / 4);
            // The first part's tables get room for every part's entries: the others' are
            // appended to them without moving them (room not written to takes no memory).
            let hints = |part: &[Leaf], first: bool| -> Vec<usize> {
                let Some(e) = &self.expected else {
                    return Vec::new();
                };
                e.iter()
                    .map(|&n| {
                        let share = match first {
                            true => u128::from(n),
                            false => u128::from(n) * part.len() as u128 / leaves,
                        };
                        (share + share / 64 + 16).min(most) as usize
                    })
                    .collect()
            };
            let scan = |part: &&[Leaf], first: bool| {
                d.scan(part, by_topic_id, ncon, cap.as_ref(), &hints(part, first))
            };
            let r = scan_parts(&parts, |p| scan(p, true), |_, p| scan(p, false))
                .into_iter()
                .collect::<Result<Vec<RowScan>>>()
                .ok();
            if r.is_none() {
                src.direct_refused
                    .store(true, std::sync::atomic::Ordering::Relaxed);
            }
            r
        });
        let mut out = ScannedRows {
            chunks: Vec::new(),
            per: vec![Vec::new(); ncon],
            unknown: 0,
            captured: HashMap::new(),
            from_cache: false,
        };
        let scans = if let Some(scans) = direct_scan {
            scans
        } else if let Some((lo, hi)) = self.range {
            let threads = self.threads.clamp(1, 4) as i64;
            // Ids may be anywhere in i64 (a forged file): split in i128.
            let (l, h, n) = (i128::from(lo), i128::from(hi), i128::from(threads));
            let span = (h - l) / n + 1;
            let ranges: Vec<(i64, i64)> = (0..n)
                .map(|k| (l + k * span, (l + (k + 1) * span - 1).min(h)))
                .filter(|(a, b)| a <= b)
                .filter_map(|(a, b)| Some((i64::try_from(a).ok()?, i64::try_from(b).ok()?)))
                .collect();
            let main = || {
                src.conns[0].lock().map_err(|_| Error::Storage {
                    path: path.to_path_buf(),
                    reason: "a reading thread failed".into(),
                })
            };
            // The first range on the first connection, here; each other on a connection of
            // its own.
            let results = scan_parts(
                &ranges,
                |&(a, b)| scan_rows(&*main()?, path, a, b, by_topic_id, ncon),
                |k, &(a, b)| match src.conns.get(k + 1).and_then(|c| c.lock().ok()) {
                    Some(c) => scan_rows(&c, path, a, b, by_topic_id, ncon),
                    None => Err(Error::Storage {
                        path: path.to_path_buf(),
                        reason: "no second connection to the database".into(),
                    }),
                },
            );
            let mut scans = Vec::new();
            for (k, r) in results.into_iter().enumerate() {
                match r {
                    Ok(s) => scans.push(s),
                    // A second connection may be refused (a private copy of a WAL database):
                    // read that range on the main connection.
                    Err(_) if k > 0 => {
                        if let Some(&(a, b)) = ranges.get(k) {
                            scans.push(scan_rows(&*main()?, path, a, b, by_topic_id, ncon)?);
                        }
                    }
                    Err(e) => return Err(e),
                }
            }
            scans
        } else {
            Vec::new()
        };
        merge_scans(
            scans,
            &mut out.chunks,
            &mut out.per,
            &mut out.unknown,
            &mut out.captured,
            self.threads,
        );
        // Rows SQLite read are not captured; nor are any once the budget was spent.
        if given_up.load(std::sync::atomic::Ordering::Relaxed) {
            out.captured = HashMap::new();
        }
        // (A scan for some connections has tables for those only: not kept.)
        if let (Some(k), None) = (&self.key, capture) {
            let rows = crate::storage::index_cache::Rows {
                chunks: out.chunks,
                per: out.per,
                unknown: out.unknown,
            };
            // The cache only saves time: a failure to write it changes nothing.
            let _ = crate::storage::index_cache::store_rows(k, &rows);
            (out.chunks, out.per, out.unknown) = (rows.chunks, rows.per, rows.unknown);
        }
        Ok(out)
    }
}

/// Bytes of payloads a row scan keeps for the connections about to be read (see
/// [`RowsToScan::scan`]); past it, nothing is kept and they are read again.
pub(super) const CAPTURE_BYTES: usize = 256 << 20;

/// Blocks of rows kept by the row scan for connections about to be read, by block index, with
/// those connections (sorted).
pub(crate) type Captured = (Vec<usize>, HashMap<u32, Vec<u8>>);

/// The whole tables of a recording whose summary a scan for some connections completed
/// (`summary`): the rows read again, every connection's entries kept.
pub(crate) fn complete_tables(
    d: &Deferred,
    src: &Source,
    summary: &Summary,
) -> Result<MessageTables> {
    let Source::Sqlite(s) = src else {
        return Err(Error::Invalid(
            "a row scan of a storage that is not SQLite".into(),
        ));
    };
    let scan = d.rows.scan(s, None)?;
    if scan.chunks.len() != summary.chunks.len() {
        return Err(Error::Storage {
            path: s.shown_path.clone(),
            reason: format!(
                "the rows changed between two reads ({} blocks, then {})",
                summary.chunks.len(),
                scan.chunks.len()
            ),
        });
    }
    Ok(MessageTables {
        per_connection: scan.per,
        warnings: Vec::new(),
    })
}

/// Completes the summary `quick` of a recording opened with its row scan deferred: reads the
/// rows of `src` (the recording's one storage file) into blocks and tables, counts and times
/// from them, and says where metadata.yaml disagrees with them. With `capture`, the payloads
/// of those connections are kept on the way, in blocks laid out as [`read_rows`] lays them.
///
/// With `capture`, the tables hold those connections' entries only (the others' are left
/// empty: [`complete_tables`] reads them when they are needed).
pub(crate) fn complete(
    d: &Deferred,
    src: &Source,
    quick: &Summary,
    capture: Option<&[usize]>,
) -> Result<(Summary, MessageTables, Option<Captured>)> {
    let Source::Sqlite(s) = src else {
        return Err(Error::Invalid(
            "a row scan of a storage that is not SQLite".into(),
        ));
    };
    let mut scan = d.rows.scan(s, capture)?;
    let from_cache = scan.from_cache;
    let captured = std::mem::take(&mut scan.captured);
    let captured = capture.filter(|_| !captured.is_empty()).map(|c| {
        let mut conns = c.to_vec();
        conns.sort_unstable();
        conns.dedup();
        (conns, captured)
    });
    let mut warnings = Vec::new();
    if from_cache {
        warnings.push(
            "rows read from bagscope's index cache (the file was scanned once before)".into(),
        );
    }
    let (mut chunks, per) = scan.into_blocks(&mut warnings, s.zstd_messages);
    for c in &mut chunks {
        c.file = 0;
    }
    let mut full = quick.clone();
    full.rows_pending = false;
    full.chunks = chunks;
    full.finish();
    let name = quick
        .files
        .first()
        .and_then(|f| f.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    for w in warnings {
        full.warnings.push(format!("{name}: {w}"));
    }
    if let Some(m) = &d.rows.meta {
        let mut w = Vec::new();
        compare_metadata(m, &full, &mut w);
        for w in w {
            if !full.warnings.contains(&w) {
                full.warnings.push(w);
            }
        }
    }
    Ok((
        full,
        MessageTables {
            per_connection: per,
            warnings: Vec::new(),
        },
        captured,
    ))
}

/// Scans `parts` (consecutive id ranges, or runs of leaves), the first with `first` on this
/// thread and each other with `rest` (given its index among the others) on a thread of its
/// own: one result per part, in order; a thread that panicked gives an error.
pub(super) fn scan_parts<P: Sync>(
    parts: &[P],
    first: impl FnOnce(&P) -> Result<RowScan>,
    rest: impl Fn(usize, &P) -> Result<RowScan> + Sync,
) -> Vec<Result<RowScan>> {
    let Some((head, tail)) = parts.split_first() else {
        return Vec::new();
    };
    std::thread::scope(|sc| {
        let rest = &rest;
        let handles: Vec<_> = tail
            .iter()
            .enumerate()
            .map(|(k, p)| sc.spawn(move || rest(k, p)))
            .collect();
        let mut out = vec![first(head)];
        out.extend(handles.into_iter().map(|h| {
            h.join()
                .unwrap_or(Err(Error::ThreadPanicked("a row-scanning thread")))
        }));
        out
    })
}

/// Appends the scans of consecutive id ranges, in order, to the blocks and tables.
pub(super) fn merge_scans(
    scans: Vec<RowScan>,
    chunks: &mut Vec<Chunk>,
    per: &mut [Vec<IndexEntry>],
    unknown: &mut u64,
    captured: &mut HashMap<u32, Vec<u8>>,
    threads: usize,
) {
    // Per connection, the entries of each scan with the index of its first block.
    let mut cols: Vec<Vec<(u32, Vec<IndexEntry>)>> = vec![Vec::new(); per.len()];
    for sc in scans {
        let base = chunks.len() as u32;
        captured.extend(sc.captured.into_iter().map(|(k, b)| (k + base, b)));
        for (ci, v) in sc.per.into_iter().enumerate() {
            if let Some(c) = cols.get_mut(ci) {
                c.push((base, v));
            }
        }
        chunks.extend(sc.chunks);
        *unknown += sc.unknown;
    }
    let append = |per: &mut [Vec<IndexEntry>], cols: &mut [Vec<(u32, Vec<IndexEntry>)>]| {
        for (p, c) in per.iter_mut().zip(cols.iter_mut()) {
            for (base, v) in c.drain(..) {
                if base == 0 && p.is_empty() {
                    // The first scan's entries are moved, not copied.
                    *p = v;
                    continue;
                }
                p.reserve(v.len());
                p.extend(v.into_iter().map(|e| IndexEntry {
                    chunk: e.chunk + base,
                    ..e
                }));
            }
            // Grown by doubling while scanning: give back the unused half (16 bytes a
            // message kept), but not a little room left by a good guess (that would copy).
            if p.capacity() - p.len() > p.len() / 16 + 64 {
                p.shrink_to_fit();
            }
        }
    };
    // Half the connections on another thread (the copies are tens of MB at millions of rows).
    let half = per.len() / 2;
    let (p1, p2) = per.split_at_mut(half);
    let (c1, c2) = cols.split_at_mut(half);
    if threads > 1 && half > 0 {
        std::thread::scope(|sc| {
            sc.spawn(|| append(p1, c1));
            append(p2, c2);
        });
    } else {
        append(p1, c1);
        append(p2, c2);
    }
}
