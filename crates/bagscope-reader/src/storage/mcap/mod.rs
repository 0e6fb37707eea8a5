//! The MCAP storage: standalone `.mcap` files and the storage files of rosbag2's MCAP plugin.
//!
//! An indexed file opens from its summary section alone (schemas, channels, chunk indexes,
//! statistics, attachment and metadata indexes), found through the footer; the message tables
//! come from the message index records after each chunk, without decompressing chunks. A file
//! with no summary or an incomplete one (a recording that was cut off, an unchunked file) is
//! recovered by a linear scan of its records that keeps what it can and says what it skipped.
//!
//! Channels become [`Connection`](crate::storage::Connection)s (the schema name is the type, its data the definition) and
//! chunks become [`Chunk`](crate::storage::Chunk)s of kind [`ChunkKind::Mcap`](crate::storage::ChunkKind::Mcap), whose uncompressed records hold the
//! messages; stretches of an unchunked file play the part of chunks, so everything above reads
//! both alike.

mod records;
mod scan;
mod summary;
mod tables;
pub mod writer;

use records::{
    compression_of, op_name, parse_channel, parse_chunk_head, parse_schema, read_record, Catalog,
    MAX_SUMMARY, STRETCH,
};
pub use records::{opcode, MAGIC};
pub(crate) use records::{Fields, MESSAGE_HEADER};
pub(crate) use scan::{
    message_in_records, message_record_at, scan_chunk_message_records, scan_chunk_messages,
    MessageAt,
};
use scan::{scan, walk_records, walk_records_at};
pub(crate) use summary::open;
pub use tables::encodings;
pub(crate) use tables::{
    build_tables, channel_index, chunk_index_entries, connections_by_file, index_records,
    index_unusable, read_chunk_index,
};
