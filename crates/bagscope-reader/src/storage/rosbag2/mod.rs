//! The rosbag2 storage: a directory with `metadata.yaml` and one or more storage files
//! (`.db3` SQLite or `.mcap`, each perhaps zstd-compressed whole), or a single storage file.
//!
//! Split recordings are read as one: each file's topics become connections (topic ids are per
//! file), each file's chunks or row blocks are kept with the index of their file, and the
//! message tables of all files are merged in time order (ties: file order, then position).
//!
//! SQLite files are opened read-only; a file in WAL mode whose `-wal` side file is empty is
//! opened `immutable` (nothing is written beside it), one whose `-wal` holds data is read from a
//! private copy. `metadata.yaml` (versions 1 to 9) is read for what it says, and compared with
//! the storage, which wins: every disagreement becomes a warning.

/// The first bytes of a SQLite database.
pub const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";
/// The first bytes of a zstd frame.
pub const ZSTD_MAGIC: &[u8] = &[0x28, 0xB5, 0x2F, 0xFD];

/// Rows per block: the unit the cache, the prefetch and the timeline density work in.
const BLOCK_ROWS: usize = 2048;
/// Maps up to 64 GiB of a database file instead of reading it with system calls.
const MMAP_PRAGMA: &str = "PRAGMA mmap_size = 68719476736;";

/// Widest id range of a block (ids are dense unless rows were deleted).
const BLOCK_ID_SPAN: i64 = 8192;
/// Largest message accepted after per-message zstd.
const MAX_MESSAGE: u64 = 1 << 30;
/// Largest storage file decompressed from `.zstd` (file mode).
const MAX_FILE: u64 = 64 << 30;

mod deferred;
mod directory;
mod metadata;
mod pending;
mod rows;
mod sqlite;
pub(crate) mod sqlite_file;
mod window;
pub mod writer;

pub(crate) use deferred::{complete, complete_tables, Captured, Deferred};
use deferred::{RowsToScan, ScannedRows};
pub use directory::MISSING_FACT;
use directory::{compare_metadata, Part};
#[cfg(feature = "remote")]
pub(crate) use directory::{is_storage_file, open_dir_with};
pub(crate) use directory::{open_dir, open_file, Opener, TempDir, ALONE_FACT};
pub(crate) use metadata::looks_like_metadata;
use metadata::qos_norm;
pub use metadata::{parse_metadata, qos_profiles, qos_summary, Metadata, QosProfile};
pub(crate) use pending::{Completed, Pending};
pub(crate) use rows::{message_in_rows, read_rows, row_gone, row_in_block, Capture};
use rows::{scan_rows, unzstd_message, BlockBuf, RowScan, RowScanner};
pub(crate) use sqlite::SqliteSource;
use sqlite::{open_immutable, open_part, sql_err};
pub(crate) use window::{window_rows, WindowRows};
