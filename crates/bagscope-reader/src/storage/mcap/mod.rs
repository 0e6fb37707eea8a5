//! The MCAP storage: standalone `.mcap` files and the storage files of rosbag2's MCAP plugin.
//!
//! An indexed file opens from its summary section alone (schemas, channels, chunk indexes,
//! statistics, attachment and metadata indexes), found through the footer; the message tables
//! come from the message index records after each chunk, without decompressing chunks. A file
//! with no summary or an incomplete one (a recording that was cut off, an unchunked file) is
//! recovered by a linear scan of its records that keeps what it can and says what it skipped.
//!
//! Channels become [`Connection`]s (the schema name is the type, its data the definition) and
//! chunks become [`Chunk`]s of kind [`ChunkKind::Mcap`], whose uncompressed records hold the
//! messages; stretches of an unchunked file play the part of chunks, so everything above reads
//! both alike.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;

use crate::error::{Error, Location, RecordKind, Result};
use crate::storage::compression::Compression;
use crate::storage::compression::MAX_CHUNK_SIZE;
use crate::storage::{
    read_at, read_at_into, Bytes, Chunk, ChunkEntries, ChunkKind, Connection, IndexEntry, Message,
    MessageTables, Opened, Source, Summary, TablesProgress, Version,
};

mod records;
mod scan;
mod summary;
mod tables;
pub mod writer;

pub use records::*;
pub(crate) use scan::*;
pub(crate) use summary::*;
pub use tables::*;
