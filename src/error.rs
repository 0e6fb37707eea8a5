//! The one error type of the bag library: every variant says what went wrong and where.

use std::fmt;

/// What kind of record an error is about, in the bag format's own words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordKind {
    /// The version line at the start of the file.
    Magic,
    /// op 0x03: bag header.
    BagHeader,
    /// op 0x05: chunk.
    Chunk,
    /// op 0x07: connection.
    Connection,
    /// op 0x02: message data.
    MessageData,
    /// op 0x04: index data.
    IndexData,
    /// op 0x06: chunk info.
    ChunkInfo,
    /// op 0x01: message definition (format 1.2).
    MessageDefinition,
    /// A record whose op is not known yet.
    Record,
    /// An MCAP record (the name of its opcode).
    Mcap(&'static str),
}

impl fmt::Display for RecordKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Magic => "version line",
            Self::BagHeader => "bag header record",
            Self::Chunk => "chunk record",
            Self::Connection => "connection record",
            Self::MessageData => "message data record",
            Self::IndexData => "index data record",
            Self::ChunkInfo => "chunk info record",
            Self::MessageDefinition => "message definition record",
            Self::Record => "record",
            Self::Mcap(name) => return write!(f, "MCAP {name} record"),
        })
    }
}

/// Where a problem is: a byte offset in the file, or an offset inside a chunk's uncompressed data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Location {
    /// Offset from the start of the file.
    File(u64),
    /// Offset inside the uncompressed data of the chunk record at file offset `chunk_pos`.
    InChunk { chunk_pos: u64, offset: u64 },
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::File(o) => write!(f, "byte {o}"),
            Self::InChunk { chunk_pos, offset } => {
                write!(f, "byte {offset} of the chunk at byte {chunk_pos}")
            }
        }
    }
}

/// Errors of the bag library.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The operating system refused a read or write.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    /// A file or directory could not be opened.
    #[error("cannot open {}: {source}", path.display())]
    Open {
        /// What was opened.
        path: std::path::PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// A storage (SQLite, metadata.yaml, MCAP structure) is unreadable or inconsistent.
    #[error("{}: {reason}", path.display())]
    Storage {
        /// The file concerned.
        path: std::path::PathBuf,
        /// What is wrong, and where in the file.
        reason: String,
    },
    /// The file has no bytes at all.
    #[error("the file is empty (0 bytes): not a bag")]
    EmptyFile,
    /// The file holds a version line (and perhaps a bag header) and no record after it, and
    /// no index: an interrupted recording that never wrote anything, with nothing to recover.
    #[error("the file holds only a bag header and no records ({size} bytes): an interrupted recording with nothing to recover")]
    HeaderOnly {
        /// File size.
        size: u64,
    },
    /// The file does not start with a known bag version line.
    #[error("not a recording bagscope knows: the file starts with {start:?}, not a ROS bag version line (\"#ROSBAG V2.0\", \"#ROSRECORD V1.2\"), the MCAP magic or a SQLite/zstd header")]
    NotABag {
        /// The first bytes of the file, escaped.
        start: String,
    },
    /// A bag version that bagscope recognises but cannot read.
    #[error("bag format {version} is recognised but not supported (bagscope reads 2.0 and 1.2)")]
    UnsupportedVersion {
        /// The version named in the magic line.
        version: String,
    },
    /// A record runs past the bytes that exist.
    #[error("{kind} at {at} is truncated: it needs {needed} bytes but only {available} remain")]
    Truncated {
        /// Record kind.
        kind: RecordKind,
        /// Where the record starts.
        at: Location,
        /// Bytes the record declares.
        needed: u64,
        /// Bytes left in the file or chunk.
        available: u64,
    },
    /// A record or header field is malformed.
    #[error("malformed {kind} at {at}: {reason}")]
    Malformed {
        /// Record kind.
        kind: RecordKind,
        /// Where the record starts.
        at: Location,
        /// What is wrong.
        reason: String,
    },
    /// A required header field is absent.
    #[error("{kind} at {at} has no `{field}` field")]
    MissingField {
        /// Record kind.
        kind: RecordKind,
        /// Where the record starts.
        at: Location,
        /// The missing field.
        field: &'static str,
    },
    /// A chunk could not be decompressed.
    #[error("chunk at byte {chunk_pos} ({compression}) cannot be decompressed: {reason}")]
    Decompress {
        /// File offset of the chunk record.
        chunk_pos: u64,
        /// Compression name.
        compression: String,
        /// What the decompressor said.
        reason: String,
    },
    /// A compression the format does not define.
    #[error("chunk at byte {chunk_pos} uses unknown compression {name:?}")]
    UnknownCompression {
        /// File offset of the chunk record.
        chunk_pos: u64,
        /// The compression field as written.
        name: String,
    },
    /// A length that cannot be real (more than the file or the configured limit).
    #[error("{kind} at {at} declares {len} bytes, more than the limit of {limit}")]
    TooLarge {
        /// Record kind.
        kind: RecordKind,
        /// Where the record starts.
        at: Location,
        /// Declared length.
        len: u64,
        /// The limit it exceeds.
        limit: u64,
    },
    /// A connection, topic or message that does not exist was asked for.
    #[error("{0}")]
    NotFound(String),
    /// The operation was cancelled by its caller.
    #[error("cancelled")]
    Cancelled,
    /// A bad argument from the caller (not from the file).
    #[error("{0}")]
    Invalid(String),
    /// A worker thread of the library stopped by panicking (a bug, never bad input).
    #[error("{0} panicked")]
    ThreadPanicked(&'static str),
    /// A recording larger than the library's tables hold (more chunks than a `u32` counts).
    #[error("{what}: {count}, more than the {limit} bagscope's tables hold")]
    Limit {
        /// What there are too many of.
        what: &'static str,
        /// How many there are.
        count: u64,
        /// How many fit.
        limit: u64,
    },
}

/// An error crosses threads whole (the read-ahead hands a chunk's error to the reader): every
/// variant is kept as it is, an I/O error by its kind and message.
impl Clone for Error {
    fn clone(&self) -> Self {
        match self {
            Error::Io(e) => Error::Io(std::io::Error::new(e.kind(), e.to_string())),
            Error::Open { path, source } => Error::Open {
                path: path.clone(),
                source: std::io::Error::new(source.kind(), source.to_string()),
            },
            Error::Storage { path, reason } => Error::Storage {
                path: path.clone(),
                reason: reason.clone(),
            },
            Error::EmptyFile => Error::EmptyFile,
            Error::HeaderOnly { size } => Error::HeaderOnly { size: *size },
            Error::NotABag { start } => Error::NotABag {
                start: start.clone(),
            },
            Error::UnsupportedVersion { version } => Error::UnsupportedVersion {
                version: version.clone(),
            },
            Error::Truncated {
                kind,
                at,
                needed,
                available,
            } => Error::Truncated {
                kind: *kind,
                at: *at,
                needed: *needed,
                available: *available,
            },
            Error::Malformed { kind, at, reason } => Error::Malformed {
                kind: *kind,
                at: *at,
                reason: reason.clone(),
            },
            Error::MissingField { kind, at, field } => Error::MissingField {
                kind: *kind,
                at: *at,
                field,
            },
            Error::Decompress {
                chunk_pos,
                compression,
                reason,
            } => Error::Decompress {
                chunk_pos: *chunk_pos,
                compression: compression.clone(),
                reason: reason.clone(),
            },
            Error::UnknownCompression { chunk_pos, name } => Error::UnknownCompression {
                chunk_pos: *chunk_pos,
                name: name.clone(),
            },
            Error::TooLarge {
                kind,
                at,
                len,
                limit,
            } => Error::TooLarge {
                kind: *kind,
                at: *at,
                len: *len,
                limit: *limit,
            },
            Error::NotFound(s) => Error::NotFound(s.clone()),
            Error::Cancelled => Error::Cancelled,
            Error::Invalid(s) => Error::Invalid(s.clone()),
            Error::ThreadPanicked(w) => Error::ThreadPanicked(w),
            Error::Limit { what, count, limit } => Error::Limit {
                what,
                count: *count,
                limit: *limit,
            },
        }
    }
}

/// Result with the bag library's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
