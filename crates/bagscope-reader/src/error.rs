//! The errors of the reader, in one place at its lowest layer: [`Error`], whose every
//! variant says what went wrong and where, and the errors of definitions, decoding, field
//! paths, expressions and conversions that it carries whole. The crates above wrap it in
//! errors of their own (images, transforms, live graphs, arguments).

use std::fmt;

/// What kind of record an error is about, in the bag format's own words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
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
    InChunk {
        /// File offset of the chunk record.
        chunk_pos: u64,
        /// Offset inside the chunk's uncompressed data.
        offset: u64,
    },
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

/// What kind of problem a definition has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DefErrorKind {
    /// The definition or schema is there and does not parse or compile.
    Invalid,
    /// An encoding or definition language bagscope does not decode (not damage).
    NotDecoded,
    /// No definition anywhere: not stored, not on the search path, not shipped.
    Missing,
}

/// What is wrong with a definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefError {
    /// What kind of problem: one to fix, or one bagscope does not handle.
    pub kind: DefErrorKind,
    /// The type being parsed.
    pub datatype: String,
    /// The line (1-based) of the definition text, if the error is on one.
    pub line: Option<usize>,
    /// What.
    pub reason: String,
}

impl DefError {
    /// A definition text that does not parse, for `reason`; the parser adds the type and
    /// the line ([`DefError::of`], [`DefError::on_line`]).
    pub fn invalid(reason: impl Into<String>) -> DefError {
        DefError {
            kind: DefErrorKind::Invalid,
            datatype: String::new(),
            line: None,
            reason: reason.into(),
        }
    }

    /// The same error on `line`, unless it already names one.
    pub fn on_line(mut self, line: usize) -> DefError {
        self.line.get_or_insert(line);
        self
    }

    /// The same error in the definition of `datatype`, unless it already names one.
    pub fn of(mut self, datatype: &str) -> DefError {
        if self.datatype.is_empty() {
            self.datatype = datatype.to_string();
        }
        self
    }
}

impl fmt::Display for DefError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(
                f,
                "definition of {}, line {}: {}",
                self.datatype, l, self.reason
            ),
            None => write!(f, "definition of {}: {}", self.datatype, self.reason),
        }
    }
}

impl std::error::Error for DefError {}

/// Why a message did not decode: what, where (byte offset) and at which field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    /// Field path within the message (`header.frame_id`, `ranges[3]`).
    pub path: String,
    /// Byte offset within the message.
    pub offset: usize,
    /// What went wrong.
    pub reason: String,
    /// Which part of the message is at fault.
    pub kind: DecodeErrorKind,
}

/// Which part of a message did not decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DecodeErrorKind {
    /// A field's bytes: too few, or a value its type cannot hold.
    #[default]
    Content,
    /// CDR's four-byte encapsulation header: missing, or not plain CDR.
    Encapsulation,
    /// Bytes left after the last field (beyond CDR's padding to four bytes).
    Trailing,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = if self.path.is_empty() {
            "(message)"
        } else {
            &self.path
        };
        write!(f, "field {p} at byte {}: {}", self.offset, self.reason)
    }
}

impl std::error::Error for DecodeError {}

/// Why a field path does not parse, or does not fit a message type: the path and what is
/// wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathError {
    /// The path as given.
    pub path: String,
    /// What is wrong, and where in the path.
    pub reason: String,
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.reason)
    }
}

impl std::error::Error for PathError {}

/// Why an expression does not parse or compile: the text, the byte it points at and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExprError {
    /// The expression as written.
    pub text: String,
    /// The byte offset in `text` the error points at.
    pub at: usize,
    /// What is wrong.
    pub reason: String,
}

impl ExprError {
    /// The column (1-based, in characters) the error points at.
    pub fn column(&self) -> usize {
        let at = self.at.min(self.text.len());
        self.text
            .char_indices()
            .take_while(|(i, _)| *i < at)
            .count()
            + 1
    }
}

impl fmt::Display for ExprError {
    /// The reason and column, then the expression and a caret under the place.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let col = self.column();
        write!(
            f,
            "{} (column {col})\n  {}\n  {}^",
            self.reason,
            self.text,
            " ".repeat(col - 1)
        )
    }
}

impl std::error::Error for ExprError {}

/// Why a type or a message does not convert: the types, the field, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConvertError {
    /// The types converted (`sensor_msgs/msg/Imu → sensor_msgs/Imu`), or the topic, when
    /// known; empty otherwise.
    pub types: String,
    /// The field (`header.stamp`, or `Type.field` for a migration), empty for the whole
    /// message.
    pub field: String,
    /// What is wrong.
    pub reason: String,
}

impl ConvertError {
    /// An error about the whole message or type.
    pub fn new(reason: impl Into<String>) -> ConvertError {
        ConvertError {
            types: String::new(),
            field: String::new(),
            reason: reason.into(),
        }
    }

    /// An error at `field`.
    pub fn at(field: impl Into<String>, reason: impl Into<String>) -> ConvertError {
        ConvertError {
            types: String::new(),
            field: field.into(),
            reason: reason.into(),
        }
    }

    /// The same error, said of the conversion `types`.
    pub fn of(mut self, types: impl Into<String>) -> ConvertError {
        self.types = types.into();
        self
    }
}

impl fmt::Display for ConvertError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.types.is_empty() {
            write!(f, "{}: ", self.types)?;
        }
        if !self.field.is_empty() {
            write!(f, "{}: ", self.field)?;
        }
        f.write_str(&self.reason)
    }
}

impl std::error::Error for ConvertError {}

/// Errors of the bag library.
///
/// Each variant says what went wrong and where; match on the variant, not on the text:
///
/// ```
/// # let dir = std::env::temp_dir().join(format!("bagscope-doc-err-{}", std::process::id()));
/// # std::fs::create_dir_all(&dir)?;
/// let notes = dir.join("notes.txt");
/// std::fs::write(&notes, "not a recording")?;
/// match bagscope_reader::Bag::open(&notes) {
///     Err(bagscope_reader::Error::NotABag { start }) => assert!(start.starts_with("not a rec")),
///     other => panic!("{other:?}"),
/// }
/// # std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
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
    #[error(
        "bag format {version} is not one bagscope reads (ROS 1 bags 2.0, 1.2, 1.1, 1.0 and 0)"
    )]
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
    /// A field path that does not parse or does not fit the message type.
    #[error(transparent)]
    Path(#[from] PathError),
    /// An expression that does not parse or does not fit the message types.
    #[error(transparent)]
    Expr(#[from] ExprError),
    /// A message definition or schema that does not compile.
    #[error(transparent)]
    Definition(#[from] DefError),
    /// A message that does not decode with its definition.
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// A message or type that does not convert between ROS 1 and ROS 2.
    #[error(transparent)]
    Convert(#[from] ConvertError),
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
            Error::Path(e) => Error::Path(e.clone()),
            Error::Expr(e) => Error::Expr(e.clone()),
            Error::Definition(e) => Error::Definition(e.clone()),
            Error::Decode(e) => Error::Decode(e.clone()),
            Error::Convert(e) => Error::Convert(e.clone()),
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
