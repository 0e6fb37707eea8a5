//! Process-wide settings of the library, the lowest module: every layer may read them.
//!
//! They are one struct, [`Settings`], set for the whole process ([`set`], [`update`]) and read
//! with [`get`]: how many threads the library uses for its own work (the storages, the
//! read-ahead and the operations ask [`default_threads`] or [`single_threaded`]), where message
//! definitions are searched first, where the index cache lives, and how rosbag2 SQLite rows are
//! read. The command line sets them from its flags, the app from its persisted settings.
//!
//! ```
//! use bagscope_reader::settings;
//! settings::update(|s| s.threads = 1);
//! assert!(settings::single_threaded());
//! settings::update(|s| s.threads = 0);
//! assert!(settings::default_threads() >= 1);
//! ```

use std::path::PathBuf;
use std::sync::RwLock;

/// The library's settings for this process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    /// Threads the library uses for its own work (read-ahead decompression in
    /// [`crate::Bag::messages`], parallel checks and series, SQLite row scans). `1` is the
    /// single-threaded mode: the library starts no thread at all and does every step on the
    /// calling thread, as fuzz targets and embedders that own their threads want. `0`: the
    /// machine's parallelism, at most 8.
    pub threads: usize,
    /// Directories searched first for message definitions (`--msg-path`, the app's setting),
    /// before `BAGSCOPE_MSG_PATH`, `AMENT_PREFIX_PATH` and `ROS_PACKAGE_PATH`; each holds
    /// packages (`PKG/msg/Type.msg`).
    pub msg_path: Vec<PathBuf>,
    /// The index cache's directory: `None` to take it from the environment
    /// (`$BAGSCOPE_INDEX_DIR`, else the user's cache), `Some(None)` for no cache,
    /// `Some(Some(dir))` for `dir` (see [`crate::storage::index_cache`]).
    pub index_dir: Option<Option<PathBuf>>,
    /// rosbag2 SQLite rows are read from the file's b-tree pages where the schema allows
    /// (`true`, the default) or always through SQLite's own cursor (`false`; both give the
    /// same rows, the second is there to check the first), in databases opened from now on.
    pub direct_sqlite_reads: bool,
}

impl Settings {
    /// The settings a process starts with.
    pub const DEFAULT: Settings = Settings {
        threads: 0,
        msg_path: Vec::new(),
        index_dir: None,
        direct_sqlite_reads: true,
    };
}

impl Default for Settings {
    fn default() -> Self {
        Settings::DEFAULT
    }
}

static SETTINGS: RwLock<Settings> = RwLock::new(Settings::DEFAULT);

/// The settings as they are now.
pub fn get() -> Settings {
    SETTINGS
        .read()
        .map(|s| s.clone())
        .unwrap_or(Settings::DEFAULT)
}

/// Replaces the settings.
pub fn set(s: Settings) {
    update(|cur| *cur = s);
}

/// Changes some of the settings.
pub fn update(f: impl FnOnce(&mut Settings)) {
    // A writer that panicked left a whole struct behind: take it and go on.
    let mut g = SETTINGS.write().unwrap_or_else(|e| e.into_inner());
    f(&mut g);
}

fn read<T>(f: impl FnOnce(&Settings) -> T) -> T {
    match SETTINGS.read() {
        Ok(s) => f(&s),
        Err(e) => f(&e.into_inner()),
    }
}

/// Sets [`Settings::threads`].
pub fn set_threads(n: usize) {
    update(|s| s.threads = n);
}

/// Whether the settings ask for one thread.
pub fn single_threaded() -> bool {
    read(|s| s.threads == 1)
}

/// Threads used to decompress ahead: [`Settings::threads`] when set, else the machine's
/// parallelism, at most 8.
pub fn default_threads() -> usize {
    // The machine's parallelism read once (each reading opens three cgroup files).
    static MACHINE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    match read(|s| s.threads) {
        0 => *MACHINE
            .get_or_init(|| std::thread::available_parallelism().map_or(2, |n| n.get().min(8))),
        n => n,
    }
}
