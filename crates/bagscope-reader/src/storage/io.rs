//! Reading bytes: a recording's [`Source`] (a file read with positioned reads, bytes in memory,
//! a SQLite database), reads that say how many bytes there were, and the read-ahead that runs
//! a job per chunk on reader threads and hands the results on in order.

use std::fs::File;
use std::sync::Arc;

/// Where a bag's bytes come from: a file opened read-only, or bytes in memory.
pub(crate) enum Source {
    /// A file, read with positioned reads (shared by threads without a lock).
    File(File),
    /// Bytes in memory.
    Memory(Arc<[u8]>),
    /// A SQLite database opened read-only (rosbag2).
    Sqlite(Box<crate::storage::rosbag2::SqliteSource>),
    /// An object in object storage or behind an HTTP server, read by ranges through a block
    /// cache.
    #[cfg(feature = "remote")]
    Remote(Arc<crate::storage::remote::RemoteFile>),
}

impl Source {
    /// Whether every read is a request over the network (so reads are worth saving).
    pub(crate) fn is_remote(&self) -> bool {
        #[cfg(feature = "remote")]
        if let Source::Remote(_) = self {
            return true;
        }
        false
    }

    pub(crate) fn len(&self) -> std::io::Result<u64> {
        match self {
            Source::File(f) => Ok(f.metadata()?.len()),
            Source::Memory(b) => Ok(b.len() as u64),
            Source::Sqlite(s) => Ok(s.size),
            #[cfg(feature = "remote")]
            Source::Remote(r) => Ok(r.head.size),
        }
    }
}

/// Like [`read_at`], into `buf` (its allocation reused: a scan of many regions then touches
/// no fresh memory for each one).
pub(crate) fn read_at_into(
    src: &Source,
    pos: u64,
    len: usize,
    buf: &mut Vec<u8>,
) -> std::io::Result<()> {
    #[cfg(feature = "remote")]
    if let Source::Remote(r) = src {
        return r.read_at_into(pos, len, buf);
    }
    let Source::File(file) = src else {
        *buf = read_at(src, pos, len)?;
        return Ok(());
    };
    let len = clamp_to_file(file, pos, len)?;
    // Room for a somewhat larger read next: chunks differ a little in size, and a buffer
    // reused for them should not be replaced (its pages faulted in again) each time.
    let room = len.saturating_add(len / 8);
    if buf.capacity() == 0 {
        // A fresh buffer allocated zeroed (large ones come as zero pages, no memset).
        *buf = vec![0u8; room];
    } else if buf.capacity() < len {
        // Grown where it lies when the allocator can (a large one is remapped, its pages
        // kept).
        buf.reserve_exact(room - buf.len());
    }
    // A buffer reused: only a part it did not hold is zeroed before the read.
    buf.resize(len, 0);
    let filled = pread_full(file, buf, pos)?;
    buf.truncate(filled);
    Ok(())
}

/// Fills `out` from `pos`; whether there were that many bytes. A file is read straight into
/// `out` (a buffer reused keeps what it held past them, and is not zeroed first).
pub(crate) fn read_exact_at(src: &Source, pos: u64, out: &mut [u8]) -> std::io::Result<bool> {
    if let Source::File(file) = src {
        return Ok(pread_full(file, out, pos)? == out.len());
    }
    let got = read_at(src, pos, out.len())?;
    if got.len() < out.len() {
        return Ok(false);
    }
    out.copy_from_slice(&got);
    Ok(true)
}

/// Reads of this many bytes or fewer are not clamped to the file's length first: what they
/// allocate is small anyway, the read stops at the file's end, and the length is not asked of
/// the file (a `statx`) for each record read alone.
pub(crate) const UNCLAMPED_READ: usize = 64 << 10;

/// `len`, or less: no more than the file has past `pos` (a length read from a damaged record may
/// claim anything; fuzzing found one claiming more than memory can hold).
fn clamp_to_file(file: &File, pos: u64, len: usize) -> std::io::Result<usize> {
    if len <= UNCLAMPED_READ {
        return Ok(len);
    }
    let avail = file.metadata()?.len().saturating_sub(pos);
    Ok(len.min(usize::try_from(avail).unwrap_or(usize::MAX)))
}

/// Fills `buf` from `pos` as far as the file goes: the bytes read (fewer only at its end).
pub(crate) fn pread_full(file: &File, buf: &mut [u8], pos: u64) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        let n = pread(file, &mut buf[filled..], pos + filled as u64)?;
        if n == 0 {
            break;
        }
        filled += n;
    }
    Ok(filled)
}

/// Reads up to `len` bytes at `pos` (fewer at the end of the file).
pub(crate) fn read_at(src: &Source, pos: u64, len: usize) -> std::io::Result<Vec<u8>> {
    match src {
        #[cfg(feature = "remote")]
        Source::Remote(r) => {
            let mut buf = Vec::new();
            r.read_at_into(pos, len, &mut buf)?;
            Ok(buf)
        }
        Source::File(file) => {
            // A fresh buffer allocated zeroed (large ones come as zero pages: no memset of
            // every chunk before the read overwrites it).
            let mut buf = vec![0u8; clamp_to_file(file, pos, len)?];
            let filled = pread_full(file, &mut buf, pos)?;
            buf.truncate(filled);
            Ok(buf)
        }
        Source::Memory(b) => {
            let start = pos.min(b.len() as u64) as usize;
            let end = start.saturating_add(len).min(b.len());
            Ok(b[start..end].to_vec())
        }
        Source::Sqlite(..) => Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "a SQLite storage is read by rows, not bytes",
        )),
    }
}

/// Reader threads of [`read_ahead_on`]: enough reads in flight to keep a disk busy (a cold read
/// of small index regions one at a time ran at 390 MB/s on a disk that gives 1 GB/s).
pub(crate) const READERS: usize = 4;

/// Reader threads of [`read_ahead_on`] for a remote file: each waits out a round trip, so many
/// requests in flight (a thread each) hide the latency.
pub(crate) const REMOTE_READERS: usize = 24;

/// Runs `job(i, buf)` for every `i` in `0..n` on reader threads, ahead of `consume`, which is
/// given each result with the buffer it filled, in order of `i`, on the calling thread.
/// Used where a table build reads many small regions of a file (the index after each chunk):
/// from a cold page cache, one read at a time waits out each read's latency, and the parsing
/// waits on the reads. At most `READERS * 3` buffers are in flight; buffers are reused. An
/// error from `consume` stops the readers and is returned. `single_threaded`
/// ([`crate::OpenOptions::threads`] 1): every job runs on the calling thread. A remote file gets
/// more readers ([`REMOTE_READERS`]).
pub(crate) fn read_ahead_on<T, J, C>(
    remote: bool,
    single_threaded: bool,
    n: usize,
    job: J,
    consume: C,
) -> crate::error::Result<()>
where
    T: Send,
    J: Fn(usize, &mut Vec<u8>) -> crate::error::Result<T> + Sync,
    C: FnMut(usize, crate::error::Result<T>, &[u8]) -> crate::error::Result<()>,
{
    let readers = if single_threaded {
        1
    } else if remote {
        REMOTE_READERS
    } else {
        READERS
    };
    read_ahead_with(readers, n, job, consume)
}

fn read_ahead_with<T, J, C>(
    readers: usize,
    n: usize,
    job: J,
    mut consume: C,
) -> crate::error::Result<()>
where
    T: Send,
    J: Fn(usize, &mut Vec<u8>) -> crate::error::Result<T> + Sync,
    C: FnMut(usize, crate::error::Result<T>, &[u8]) -> crate::error::Result<()>,
{
    use std::sync::mpsc::{channel, sync_channel};
    if n < 2 || readers < 2 {
        let mut buf = Vec::new();
        for i in 0..n {
            let r = job(i, &mut buf);
            consume(i, r, &buf)?;
        }
        return Ok(());
    }
    let readers = readers.min(n);
    std::thread::scope(|sc| {
        let mut ready = Vec::with_capacity(readers);
        let mut spent = Vec::with_capacity(readers);
        for k in 0..readers {
            let (tx, rx) = sync_channel::<(crate::error::Result<T>, Vec<u8>)>(2);
            let (back_tx, back_rx) = channel::<Vec<u8>>();
            ready.push(rx);
            spent.push(back_tx);
            let job = &job;
            sc.spawn(move || {
                for i in (k..n).step_by(readers) {
                    let mut buf = back_rx.try_recv().unwrap_or_default();
                    let r = job(i, &mut buf);
                    // The receiver is gone when `consume` stopped early.
                    if tx.send((r, buf)).is_err() {
                        return;
                    }
                }
            });
        }
        for i in 0..n {
            let k = i % readers;
            let Ok((r, buf)) = ready[k].recv() else {
                // Only a panic in `job` ends a reader before its last region.
                return Err(crate::error::Error::Invalid(format!(
                    "the reader of region {i} stopped"
                )));
            };
            consume(i, r, &buf)?;
            let _ = spent[k].send(buf);
        }
        Ok(())
    })
}

#[cfg(unix)]
pub(crate) fn pread(file: &File, buf: &mut [u8], pos: u64) -> std::io::Result<usize> {
    use std::os::unix::fs::FileExt;
    loop {
        match file.read_at(buf, pos) {
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            r => return r,
        }
    }
}

#[cfg(windows)]
pub(crate) fn pread(file: &File, buf: &mut [u8], pos: u64) -> std::io::Result<usize> {
    use std::os::windows::fs::FileExt;
    file.seek_read(buf, pos)
}

/// Reads a little-endian u32 at `pos`, if there are 4 bytes.
#[inline]
pub fn le_u32(b: &[u8], pos: usize) -> Option<u32> {
    let s = b.get(pos..pos.checked_add(4)?)?;
    Some(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

/// Reads a little-endian u64 at `pos`, if there are 8 bytes.
#[inline]
pub fn le_u64(b: &[u8], pos: usize) -> Option<u64> {
    let s = b.get(pos..pos.checked_add(8)?)?;
    let mut a = [0u8; 8];
    a.copy_from_slice(s);
    Some(u64::from_le_bytes(a))
}
