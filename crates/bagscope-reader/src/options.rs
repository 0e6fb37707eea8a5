//! How a recording is opened and read: [`OpenOptions`], given to [`crate::Bag::open_with`] and
//! kept by the open recording, so that every read of it (the read-ahead, the table builds, the
//! definition search) follows them. The library holds no process-wide settings: the command
//! line and the app make an `OpenOptions` from their flags and persisted settings.
//!
//! ```
//! use bagscope_reader::{IndexCache, OpenOptions};
//! let opts = OpenOptions::default()
//!     .with_threads(1)
//!     .with_index_cache(IndexCache::Off);
//! assert!(opts.single_threaded());
//! assert!(OpenOptions::default().threads() >= 1);
//! ```

use std::path::PathBuf;

/// How a recording is opened and read.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct OpenOptions {
    /// Threads the library uses for its own work on this recording (read-ahead decompression
    /// in [`crate::Bag::messages`], table builds, SQLite row scans, parallel checks and
    /// series). `1` is the single-threaded mode: the library starts no thread at all and does
    /// every step on the calling thread, as fuzz targets and embedders that own their threads
    /// want. `0` (the default): the machine's parallelism, at most 8.
    pub threads: usize,
    /// Directories searched first for message definitions (`--msg-path`, the app's setting),
    /// before `BAGSCOPE_MSG_PATH`, `AMENT_PREFIX_PATH` and `ROS_PACKAGE_PATH`; each holds
    /// packages (`PKG/msg/Type.msg`).
    pub msg_path: Vec<PathBuf>,
    /// Where the index of a recording recovered by a scan is kept between opens.
    pub index_cache: IndexCache,
    /// rosbag2 SQLite rows are read from the file's b-tree pages where the schema allows
    /// (`true`, the default) or always through SQLite's own cursor (`false`; both give the
    /// same rows, the second is there to check the first).
    pub sqlite_pages: bool,
}

/// Where the index cache of recordings recovered by a scan lives.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum IndexCache {
    /// From the environment: `$BAGSCOPE_INDEX_DIR` (`off` for none), else the user's cache
    /// (`$XDG_CACHE_HOME/bagscope/index`, `~/.cache/bagscope/index`).
    #[default]
    FromEnvironment,
    /// No index cache: nothing is read or written.
    Off,
    /// This directory.
    Dir(PathBuf),
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions {
            threads: 0,
            msg_path: Vec::new(),
            index_cache: IndexCache::FromEnvironment,
            sqlite_pages: true,
        }
    }
}

impl OpenOptions {
    /// These options with [`OpenOptions::threads`] set to `n`.
    pub fn with_threads(mut self, n: usize) -> Self {
        self.threads = n;
        self
    }

    /// These options with [`OpenOptions::msg_path`] set to `dirs`.
    pub fn with_msg_path(mut self, dirs: Vec<PathBuf>) -> Self {
        self.msg_path = dirs;
        self
    }

    /// These options with [`OpenOptions::index_cache`] set to `cache`.
    pub fn with_index_cache(mut self, cache: IndexCache) -> Self {
        self.index_cache = cache;
        self
    }

    /// These options with [`OpenOptions::sqlite_pages`] set to `pages`.
    pub fn with_sqlite_pages(mut self, pages: bool) -> Self {
        self.sqlite_pages = pages;
        self
    }

    /// Whether the options ask for one thread (no thread is started).
    pub fn single_threaded(&self) -> bool {
        self.threads == 1
    }

    /// Threads to use: [`OpenOptions::threads`] when set, else the machine's parallelism, at
    /// most 8.
    pub fn threads(&self) -> usize {
        match self.threads {
            0 => machine_threads(),
            n => n,
        }
    }
}

/// The machine's parallelism, at most 8: read once (each reading opens three cgroup files).
pub fn machine_threads() -> usize {
    static MACHINE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *MACHINE.get_or_init(|| std::thread::available_parallelism().map_or(2, |n| n.get().min(8)))
}
