//! Process-wide settings of the library, the lowest module: every layer may read them.
//!
//! How many threads the library uses for its own work is one setting for the whole process
//! ([`set_threads`]); the storages, the read-ahead and the operations all ask [`default_threads`]
//! or [`single_threaded`].

use std::sync::atomic::{AtomicUsize, Ordering};

/// Threads set by [`set_threads`]; 0: not set.
static THREADS: AtomicUsize = AtomicUsize::new(0);

/// Sets how many threads the library uses for its own work (read-ahead decompression in
/// [`crate::Bag::messages`], parallel checks and series, SQLite row scans), for the whole process.
/// `1` is the single-threaded mode: the library then starts no thread at all and does every
/// step on the calling thread, as fuzz targets and embedders that own their threads want.
/// `0` goes back to the default (the machine's parallelism, at most 8).
pub fn set_threads(n: usize) {
    THREADS.store(n, Ordering::Relaxed);
}

/// Whether [`set_threads`] asked for one thread.
pub fn single_threaded() -> bool {
    THREADS.load(Ordering::Relaxed) == 1
}

/// Threads used to decompress ahead: as set by [`set_threads`], else the machine's
/// parallelism, at most 8.
pub fn default_threads() -> usize {
    match THREADS.load(Ordering::Relaxed) {
        0 => std::thread::available_parallelism().map_or(2, |n| n.get().min(8)),
        n => n,
    }
}
