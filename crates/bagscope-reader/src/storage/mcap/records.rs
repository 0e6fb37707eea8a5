//! MCAP records: the magic, opcodes, field readers, schemas and channels, record and chunk headers.

use std::collections::HashMap;

use crate::error::{Error, Location, RecordKind, Result};
use crate::storage::compression::Compression;
use crate::storage::{read_at, Connection, Source};

/// The 8 bytes at the start and the end of an MCAP file.
pub const MAGIC: &[u8; 8] = b"\x89MCAP0\r\n";

/// Record opcodes.
pub mod opcode {
    /// Header record.
    pub const HEADER: u8 = 0x01;
    /// Footer record.
    pub const FOOTER: u8 = 0x02;
    /// Schema record.
    pub const SCHEMA: u8 = 0x03;
    /// Channel record.
    pub const CHANNEL: u8 = 0x04;
    /// Message record.
    pub const MESSAGE: u8 = 0x05;
    /// Chunk record.
    pub const CHUNK: u8 = 0x06;
    /// Message index record.
    pub const MESSAGE_INDEX: u8 = 0x07;
    /// Chunk index record.
    pub const CHUNK_INDEX: u8 = 0x08;
    /// Attachment record.
    pub const ATTACHMENT: u8 = 0x09;
    /// Attachment index record.
    pub const ATTACHMENT_INDEX: u8 = 0x0A;
    /// Statistics record.
    pub const STATISTICS: u8 = 0x0B;
    /// Metadata record.
    pub const METADATA: u8 = 0x0C;
    /// Metadata index record.
    pub const METADATA_INDEX: u8 = 0x0D;
    /// Summary offset record.
    pub const SUMMARY_OFFSET: u8 = 0x0E;
    /// Data end record.
    pub const DATA_END: u8 = 0x0F;
}

pub(super) fn op_name(op: u8) -> &'static str {
    match op {
        opcode::HEADER => "Header",
        opcode::FOOTER => "Footer",
        opcode::SCHEMA => "Schema",
        opcode::CHANNEL => "Channel",
        opcode::MESSAGE => "Message",
        opcode::CHUNK => "Chunk",
        opcode::MESSAGE_INDEX => "MessageIndex",
        opcode::CHUNK_INDEX => "ChunkIndex",
        opcode::ATTACHMENT => "Attachment",
        opcode::ATTACHMENT_INDEX => "AttachmentIndex",
        opcode::STATISTICS => "Statistics",
        opcode::METADATA => "Metadata",
        opcode::METADATA_INDEX => "MetadataIndex",
        opcode::SUMMARY_OFFSET => "SummaryOffset",
        opcode::DATA_END => "DataEnd",
        _ => "unknown",
    }
}

/// Largest summary section read at once.
pub(super) const MAX_SUMMARY: u64 = 1 << 30;
/// Largest record outside a chunk read whole (attachments are skipped, not read).
pub(super) const MAX_RECORD: u64 = 1 << 30;
/// Unchunked messages are grouped into stretches of about this many bytes.
pub(super) const STRETCH: u64 = 4 << 20;

/// A cursor over the fields of one record's content; every read is bounds-checked and a
/// failure names the record and its file offset.
pub(crate) struct Fields<'a> {
    pub(super) b: &'a [u8],
    pub(super) pos: usize,
    pub(super) kind: RecordKind,
    pub(super) at: Location,
}

impl<'a> Fields<'a> {
    pub(crate) fn new(b: &'a [u8], op: u8, at: Location) -> Self {
        Fields {
            b,
            pos: 0,
            kind: RecordKind::Mcap(op_name(op)),
            at,
        }
    }
    pub(super) fn short(&self, what: &str, need: u64) -> Error {
        Error::Malformed {
            kind: self.kind,
            at: self.at,
            reason: format!(
                "field {what} needs {need} bytes at byte {} of the record, which has {}",
                self.pos,
                self.b.len()
            ),
        }
    }
    pub(super) fn take(&mut self, n: u64, what: &str) -> Result<&'a [u8]> {
        let left = (self.b.len() - self.pos) as u64;
        if n > left {
            return Err(self.short(what, n));
        }
        let s = &self.b[self.pos..self.pos + n as usize];
        self.pos += n as usize;
        Ok(s)
    }
    pub(super) fn u16(&mut self, what: &str) -> Result<u16> {
        let b = self.take(2, what)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }
    pub(super) fn u32(&mut self, what: &str) -> Result<u32> {
        let b = self.take(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    pub(super) fn u64(&mut self, what: &str) -> Result<u64> {
        let b = self.take(8, what)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }
    pub(super) fn string(&mut self, what: &str) -> Result<String> {
        let n = self.u32(what)?;
        let b = self.take(u64::from(n), what)?;
        Ok(String::from_utf8_lossy(b).into_owned())
    }
    pub(super) fn bytes32(&mut self, what: &str) -> Result<&'a [u8]> {
        let n = self.u32(what)?;
        self.take(u64::from(n), what)
    }
    /// A length-prefixed field of `size`-byte entries (a length that is not a multiple of
    /// `size` is an error).
    pub(super) fn entries32(&mut self, what: &str, size: usize) -> Result<&'a [u8]> {
        let b = self.bytes32(what)?;
        if b.len() % size != 0 {
            return Err(Error::Malformed {
                kind: self.kind,
                at: self.at,
                reason: format!(
                    "field {what} has {} bytes, not a multiple of its {size}-byte entries",
                    b.len()
                ),
            });
        }
        Ok(b)
    }
    pub(super) fn map_str(&mut self, what: &str) -> Result<Vec<(String, String)>> {
        let b = self.bytes32(what)?;
        let mut f = Fields {
            b,
            pos: 0,
            kind: self.kind,
            at: self.at,
        };
        let mut out = Vec::new();
        while f.pos < b.len() {
            let k = f.string(what)?;
            let v = f.string(what)?;
            out.push((k, v));
        }
        Ok(out)
    }
}

/// One schema record.
#[derive(Debug, Clone)]
pub(super) struct Schema {
    pub(super) name: String,
    pub(super) encoding: String,
    pub(super) data: Vec<u8>,
}

/// One channel record.
#[derive(Debug, Clone)]
pub(super) struct Channel {
    pub(super) id: u16,
    pub(super) schema_id: u16,
    pub(super) topic: String,
    pub(super) message_encoding: String,
    pub(super) metadata: Vec<(String, String)>,
}

pub(super) fn parse_schema(c: &[u8], at: Location) -> Result<(u16, Schema)> {
    let mut f = Fields::new(c, opcode::SCHEMA, at);
    let id = f.u16("id")?;
    let name = f.string("name")?;
    let encoding = f.string("encoding")?;
    let data = f.bytes32("data")?.to_vec();
    Ok((
        id,
        Schema {
            name,
            encoding,
            data,
        },
    ))
}

pub(super) fn parse_channel(c: &[u8], at: Location) -> Result<Channel> {
    let mut f = Fields::new(c, opcode::CHANNEL, at);
    Ok(Channel {
        id: f.u16("id")?,
        schema_id: f.u16("schema_id")?,
        topic: f.string("topic")?,
        message_encoding: f.string("message_encoding")?,
        metadata: f.map_str("metadata")?,
    })
}

/// The fixed fields of a message record's content, before its data.
pub(crate) const MESSAGE_HEADER: usize = 2 + 4 + 8 + 8;

/// Schemas and channels as they are met, turned into connections in first-seen order.
#[derive(Default)]
pub(super) struct Catalog {
    pub(super) schemas: HashMap<u16, Schema>,
    pub(super) channels: Vec<Channel>,
    pub(super) by_id: HashMap<u16, usize>,
    pub(super) warnings: Vec<String>,
}

impl Catalog {
    pub(super) fn schema(&mut self, id: u16, s: Schema) {
        if let Some(old) = self.schemas.get(&id) {
            if old.name != s.name || old.data != s.data || old.encoding != s.encoding {
                self.warnings.push(format!(
                    "schema {id} is defined twice, differently ({} and {}); the first is kept",
                    old.name, s.name
                ));
            }
            return;
        }
        self.schemas.insert(id, s);
    }
    pub(super) fn channel(&mut self, c: Channel) -> usize {
        if let Some(&i) = self.by_id.get(&c.id) {
            let old = &self.channels[i];
            if old.topic != c.topic || old.schema_id != c.schema_id {
                self.warnings.push(format!(
                    "channel {} is defined twice, differently ({} and {}); the first is kept",
                    c.id, old.topic, c.topic
                ));
            }
            return i;
        }
        self.by_id.insert(c.id, self.channels.len());
        self.channels.push(c);
        self.channels.len() - 1
    }
    pub(super) fn connections(&self) -> Vec<Connection> {
        self.channels
            .iter()
            .map(|c| {
                let schema = if c.schema_id == 0 {
                    None
                } else {
                    self.schemas.get(&c.schema_id)
                };
                let (datatype, schema_encoding, def) = match schema {
                    Some(s) => (
                        s.name.clone(),
                        s.encoding.clone(),
                        String::from_utf8_lossy(&s.data).into_owned(),
                    ),
                    None => (String::new(), String::new(), String::new()),
                };
                // Binary schemas (protobuf, flatbuffer) kept byte for byte.
                let schema_data = match schema {
                    Some(s) if std::str::from_utf8(&s.data).is_err() => s.data.clone(),
                    _ => Vec::new(),
                };
                let qos = c
                    .metadata
                    .iter()
                    .find(|(k, _)| k == "offered_qos_profiles")
                    .map(|(_, v)| v.clone())
                    .unwrap_or_default();
                let meta = |k: &str| {
                    c.metadata
                        .iter()
                        .find(|(key, _)| key == k)
                        .map(|(_, v)| v.clone())
                };
                Connection {
                    id: u32::from(c.id),
                    topic: c.topic.clone(),
                    datatype,
                    // ROS 1 channels carry their connection header's fields as metadata
                    // (mcap's ros1 converters); without one, `*` matches any definition.
                    md5sum: meta("md5sum").unwrap_or_else(|| {
                        if c.message_encoding == "ros1" {
                            "*".into()
                        } else {
                            String::new()
                        }
                    }),
                    message_definition: def,
                    schema_data,
                    callerid: meta("callerid"),
                    latching: meta("latching").is_some_and(|v| v == "1" || v == "true"),
                    latching_stated: meta("latching").is_some(),
                    message_count: 0,
                    encoding: c.message_encoding.clone(),
                    schema_encoding,
                    qos,
                    file: 0,
                    distro: String::new(),
                    type_hash: String::new(),
                }
            })
            .collect()
    }
}

/// Reads the record at `pos`: its opcode and content, checked against the file size.
pub(super) fn read_record(src: &Source, pos: u64, file_size: u64) -> Result<(u8, Vec<u8>)> {
    let at = Location::File(pos);
    let head = read_at(src, pos, 9)?;
    if head.len() < 9 {
        return Err(Error::Truncated {
            kind: RecordKind::Mcap("record"),
            at,
            needed: 9,
            available: head.len() as u64,
        });
    }
    let op = head[0];
    let len = u64::from_le_bytes(head[1..9].try_into().unwrap_or([0; 8]));
    let avail = file_size.saturating_sub(pos + 9);
    if len > avail {
        return Err(Error::Truncated {
            kind: RecordKind::Mcap(op_name(op)),
            at,
            needed: len.saturating_add(9),
            available: avail + 9,
        });
    }
    if len > MAX_RECORD {
        return Err(Error::TooLarge {
            kind: RecordKind::Mcap(op_name(op)),
            at,
            len,
            limit: MAX_RECORD,
        });
    }
    let content = read_at(src, pos + 9, len as usize)?;
    Ok((op, content))
}

/// The chunk record's fixed fields.
pub(super) struct ChunkHead {
    pub(super) start: u64,
    pub(super) end: u64,
    pub(super) size: u64,
    pub(super) compression: String,
    /// Offset of the compressed records from the start of the record.
    pub(super) records_at: u64,
    pub(super) records_len: u64,
}

pub(super) fn parse_chunk_head(c: &[u8], at: Location) -> Result<ChunkHead> {
    let mut f = Fields::new(c, opcode::CHUNK, at);
    let start = f.u64("message_start_time")?;
    let end = f.u64("message_end_time")?;
    let size = f.u64("uncompressed_size")?;
    let _crc = f.u32("uncompressed_crc")?;
    let compression = f.string("compression")?;
    let records_len = f.u64("records")?;
    Ok(ChunkHead {
        start,
        end,
        size,
        compression,
        records_at: 9 + f.pos as u64,
        records_len,
    })
}

pub(super) fn compression_of(name: &str, at: Location) -> Result<Compression> {
    match name {
        "" => Ok(Compression::None),
        "lz4" => Ok(Compression::Lz4),
        "zstd" => Ok(Compression::Zstd),
        other => Err(Error::UnknownCompression {
            chunk_pos: match at {
                Location::File(p) => p,
                Location::InChunk { chunk_pos, .. } => chunk_pos,
            },
            name: other.to_string(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A field of fixed-size entries reads whole entries only; a length between two counts
    /// is an error naming the record, where it is and the field.
    #[test]
    fn a_field_of_entries_is_whole_entries_or_an_error() {
        let at = Location::File(1234);
        let field = |n: u32| {
            let mut b = n.to_le_bytes().to_vec();
            b.extend(std::iter::repeat_n(7u8, n as usize));
            b
        };
        let whole = field(20);
        let mut f = Fields::new(&whole, opcode::CHUNK_INDEX, at);
        assert_eq!(
            f.entries32("message_index_offsets", 10)
                .map(<[u8]>::len)
                .ok(),
            Some(20)
        );
        let cut = field(15);
        let mut f = Fields::new(&cut, opcode::MESSAGE_INDEX, at);
        let e = f
            .entries32("records", 16)
            .map(|_| ())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("MessageIndex") && e.contains("1234") && e.contains("records has 15 bytes"),
            "{e}"
        );
    }
}
