//! Records of the bag format: framing, header fields and one typed struct per op.
//!
//! Everything here parses borrowed bytes and does no I/O, so the indexed reader, the linear
//! recovery scan, the fuzz targets and the tests share it.

use crate::error::{Error, Location, RecordKind, Result};
use crate::storage::compression::Compression;

/// Record op codes (the `op` header field).
pub mod op {
    /// Format 1.2 message definition.
    pub const MSG_DEF: u8 = 0x01;
    /// Message data.
    pub const MSG_DATA: u8 = 0x02;
    /// Bag header.
    pub const BAG_HEADER: u8 = 0x03;
    /// Index data.
    pub const INDEX_DATA: u8 = 0x04;
    /// Chunk.
    pub const CHUNK: u8 = 0x05;
    /// Chunk info.
    pub const CHUNK_INFO: u8 = 0x06;
    /// Connection.
    pub const CONNECTION: u8 = 0x07;
}

/// The version line of format 2.0, newline included.
pub const MAGIC_V2: &[u8] = b"#ROSBAG V2.0\n";
/// The version line of format 1.2, newline included.
pub const MAGIC_V12: &[u8] = b"#ROSRECORD V1.2\n";

/// Converts a ROS time (seconds, nanoseconds) to nanoseconds since the epoch.
#[inline]
pub fn time_ns(sec: u32, nsec: u32) -> u64 {
    u64::from(sec) * 1_000_000_000 + u64::from(nsec)
}

/// Splits nanoseconds back into a ROS time (seconds, nanoseconds), saturating at u32::MAX seconds.
#[inline]
pub fn split_ns(ns: u64) -> (u32, u32) {
    let sec = u32::try_from(ns / 1_000_000_000).unwrap_or(u32::MAX);
    (sec, (ns % 1_000_000_000) as u32)
}

pub use crate::storage::io::{le_u32, le_u64};

/// One record framed in a buffer: `header_len, header, data_len, data`.
#[derive(Debug, Clone, Copy)]
pub struct RawRecord<'a> {
    /// The header bytes (name=value fields).
    pub header: &'a [u8],
    /// The data bytes.
    pub data: &'a [u8],
    /// Total length of the record including both length prefixes.
    pub len: usize,
}

/// Frames the record starting at `pos` of `buf`. `at` says where `pos` is, for errors.
pub fn frame_record(buf: &[u8], pos: usize, at: Location) -> Result<RawRecord<'_>> {
    let avail = buf.len().saturating_sub(pos) as u64;
    let hlen = le_u32(buf, pos).ok_or(Error::Truncated {
        kind: RecordKind::Record,
        at,
        needed: 4,
        available: avail,
    })? as usize;
    if hlen == 0 {
        return Err(Error::Malformed {
            kind: RecordKind::Record,
            at,
            reason: "header length is 0".into(),
        });
    }
    let hstart = pos + 4;
    let hend = hstart as u64 + hlen as u64;
    if hend + 4 > buf.len() as u64 {
        return Err(Error::Truncated {
            kind: RecordKind::Record,
            at,
            needed: 8 + hlen as u64,
            available: avail,
        });
    }
    let hend = hend as usize;
    let dlen = le_u32(buf, hend).unwrap_or(0) as usize;
    let dstart = hend + 4;
    let dend = dstart as u64 + dlen as u64;
    if dend > buf.len() as u64 {
        return Err(Error::Truncated {
            kind: RecordKind::Record,
            at,
            needed: 8 + hlen as u64 + dlen as u64,
            available: avail,
        });
    }
    Ok(RawRecord {
        header: &buf[hstart..hend],
        data: &buf[dstart..dend as usize],
        len: 8 + hlen + dlen,
    })
}

/// Iterates the `name=value` fields of a record header.
pub struct Fields<'a> {
    rest: &'a [u8],
    at: Location,
    kind: RecordKind,
}

/// Iterates the fields of `header`; errors name `kind` and `at`.
pub fn fields(header: &[u8], kind: RecordKind, at: Location) -> Fields<'_> {
    Fields {
        rest: header,
        at,
        kind,
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = Result<(&'a [u8], &'a [u8])>;
    fn next(&mut self) -> Option<Self::Item> {
        if self.rest.is_empty() {
            return None;
        }
        let Some(len) = le_u32(self.rest, 0) else {
            self.rest = &[];
            return Some(Err(self.malformed("a header field length is cut short")));
        };
        let len = len as usize;
        let left = self.rest.len() - 4;
        if len > left {
            self.rest = &[];
            return Some(Err(self.malformed(&format!(
                "a header field declares {len} bytes but the header has {left} left"
            ))));
        }
        let field = &self.rest[4..4 + len];
        self.rest = &self.rest[4 + len..];
        match field.iter().position(|&b| b == b'=') {
            Some(eq) => Some(Ok((&field[..eq], &field[eq + 1..]))),
            None => {
                self.rest = &[];
                Some(Err(self.malformed("a header field has no '='")))
            }
        }
    }
}

impl Fields<'_> {
    fn malformed(&self, reason: &str) -> Error {
        Error::Malformed {
            kind: self.kind,
            at: self.at,
            reason: reason.into(),
        }
    }
}

/// Reads the `op` field of a header, scanning its fields once.
pub fn header_op(header: &[u8], at: Location) -> Result<u8> {
    for f in fields(header, RecordKind::Record, at) {
        let (name, value) = f?;
        if name == b"op" {
            return match value {
                [op] => Ok(*op),
                _ => Err(Error::Malformed {
                    kind: RecordKind::Record,
                    at,
                    reason: format!("the op field has {} bytes, not 1", value.len()),
                }),
            };
        }
    }
    Err(Error::MissingField {
        kind: RecordKind::Record,
        at,
        field: "op",
    })
}

fn width_err(kind: RecordKind, at: Location, field: &str, want: usize, got: usize) -> Error {
    Error::Malformed {
        kind,
        at,
        reason: format!("field `{field}` has {got} bytes, expected {want}"),
    }
}

fn field_u32(v: &[u8], kind: RecordKind, at: Location, name: &str) -> Result<u32> {
    if v.len() != 4 {
        return Err(width_err(kind, at, name, 4, v.len()));
    }
    Ok(u32::from_le_bytes([v[0], v[1], v[2], v[3]]))
}

fn field_u64(v: &[u8], kind: RecordKind, at: Location, name: &str) -> Result<u64> {
    if v.len() != 8 {
        return Err(width_err(kind, at, name, 8, v.len()));
    }
    le_u64(v, 0).ok_or_else(|| width_err(kind, at, name, 8, v.len()))
}

/// A ROS time field (sec, nsec little-endian u32 each) as nanoseconds.
fn field_time(v: &[u8], kind: RecordKind, at: Location, name: &str) -> Result<u64> {
    if v.len() != 8 {
        return Err(width_err(kind, at, name, 8, v.len()));
    }
    Ok(time_ns(
        le_u32(v, 0).unwrap_or(0),
        le_u32(v, 4).unwrap_or(0),
    ))
}

fn field_string(v: &[u8]) -> String {
    String::from_utf8_lossy(v).into_owned()
}

fn missing(kind: RecordKind, at: Location, field: &'static str) -> Error {
    Error::MissingField { kind, at, field }
}

/// op 0x03: the bag header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BagHeader {
    /// File offset of the index section (first connection record); 0 while recording.
    pub index_pos: u64,
    /// Number of connections the index holds.
    pub conn_count: u32,
    /// Number of chunks the index holds.
    pub chunk_count: u32,
}

impl BagHeader {
    /// Parses a bag header's header fields (format 2.0; in 1.2 only `index_pos` exists).
    pub fn parse(header: &[u8], at: Location) -> Result<Self> {
        let k = RecordKind::BagHeader;
        let mut out = BagHeader::default();
        let mut have_pos = false;
        for f in fields(header, k, at) {
            let (n, v) = f?;
            match n {
                b"index_pos" => {
                    out.index_pos = field_u64(v, k, at, "index_pos")?;
                    have_pos = true;
                }
                b"conn_count" => out.conn_count = field_u32(v, k, at, "conn_count")?,
                b"chunk_count" => out.chunk_count = field_u32(v, k, at, "chunk_count")?,
                _ => {}
            }
        }
        if !have_pos {
            return Err(missing(k, at, "index_pos"));
        }
        Ok(out)
    }
}

/// op 0x05: a chunk's header fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChunkHeader {
    /// Compression of the data.
    pub compression: Compression,
    /// Declared uncompressed size.
    pub size: u32,
}

impl ChunkHeader {
    /// Parses a chunk record's header fields.
    pub fn parse(header: &[u8], at: Location) -> Result<Self> {
        let k = RecordKind::Chunk;
        let mut compression = None;
        let mut size = None;
        for f in fields(header, k, at) {
            let (n, v) = f?;
            match n {
                b"compression" => {
                    compression = Some(Compression::from_name(v).ok_or_else(|| {
                        Error::UnknownCompression {
                            chunk_pos: match at {
                                Location::File(o) => o,
                                Location::InChunk { chunk_pos, .. } => chunk_pos,
                            },
                            name: field_string(v),
                        }
                    })?)
                }
                b"size" => size = Some(field_u32(v, k, at, "size")?),
                _ => {}
            }
        }
        Ok(ChunkHeader {
            compression: compression.ok_or_else(|| missing(k, at, "compression"))?,
            size: size.ok_or_else(|| missing(k, at, "size"))?,
        })
    }
}

/// op 0x07: a connection (a topic, with the publisher's type and definition).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ConnectionRecord {
    /// Connection id, unique within the bag.
    pub conn: u32,
    /// Topic the messages were recorded from.
    pub topic: String,
    /// Message type, `pkg/Type`.
    pub datatype: String,
    /// md5sum of the message type.
    pub md5sum: String,
    /// Full text of the message definition.
    pub message_definition: String,
    /// Node that published, when recorded.
    pub callerid: Option<String>,
    /// Whether the publisher was latching.
    pub latching: bool,
    /// Whether the header has a `latching` field at all.
    pub latching_stated: bool,
}

impl ConnectionRecord {
    /// Parses a connection record (header: conn, topic; data: a header of type fields).
    pub fn parse(header: &[u8], data: &[u8], at: Location) -> Result<Self> {
        let k = RecordKind::Connection;
        let mut conn = None;
        let mut out = ConnectionRecord::default();
        for f in fields(header, k, at) {
            let (n, v) = f?;
            match n {
                b"conn" => conn = Some(field_u32(v, k, at, "conn")?),
                b"topic" => out.topic = field_string(v),
                _ => {}
            }
        }
        out.conn = conn.ok_or_else(|| missing(k, at, "conn"))?;
        let mut have_type = false;
        for f in fields(data, k, at) {
            let (n, v) = f?;
            match n {
                // The record header's topic wins: it is the one rosbag reads.
                b"topic" if out.topic.is_empty() => out.topic = field_string(v),
                b"type" => {
                    out.datatype = field_string(v);
                    have_type = true;
                }
                b"md5sum" => out.md5sum = field_string(v),
                b"message_definition" => out.message_definition = field_string(v),
                b"callerid" => out.callerid = Some(field_string(v)),
                b"latching" => {
                    out.latching = v == b"1";
                    out.latching_stated = true;
                }
                _ => {}
            }
        }
        if !have_type {
            return Err(missing(k, at, "type"));
        }
        Ok(out)
    }
}

/// op 0x02 in format 2.0: a message's header fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageHeader {
    /// Connection id.
    pub conn: u32,
    /// Receive time, nanoseconds since the epoch.
    pub time_ns: u64,
}

impl MessageHeader {
    /// Parses a message data header (format 2.0).
    pub fn parse(header: &[u8], at: Location) -> Result<Self> {
        let k = RecordKind::MessageData;
        let (mut conn, mut time) = (None, None);
        for f in fields(header, k, at) {
            let (n, v) = f?;
            match n {
                b"conn" => conn = Some(field_u32(v, k, at, "conn")?),
                b"time" => time = Some(field_time(v, k, at, "time")?),
                _ => {}
            }
        }
        Ok(MessageHeader {
            conn: conn.ok_or_else(|| missing(k, at, "conn"))?,
            time_ns: time.ok_or_else(|| missing(k, at, "time"))?,
        })
    }
}

/// What a record inside a chunk is, read in one pass over its header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkRecord {
    /// op 0x02 with its connection id and time.
    Message(MessageHeader),
    /// op 0x07.
    Connection,
    /// Any other op.
    Other(u8),
}

impl ChunkRecord {
    /// Parses the header of a record found inside a chunk (the hot path of every scan).
    #[inline]
    pub fn parse(header: &[u8], at: Location) -> Result<Self> {
        let k = RecordKind::MessageData;
        let (mut opc, mut conn, mut time) = (None, None, None);
        for f in fields(header, k, at) {
            let (n, v) = f?;
            match n {
                b"op" => {
                    if v.len() != 1 {
                        return Err(width_err(RecordKind::Record, at, "op", 1, v.len()));
                    }
                    opc = Some(v[0]);
                }
                b"conn" => conn = Some(v),
                b"time" => time = Some(v),
                _ => {}
            }
        }
        match opc {
            Some(op::MSG_DATA) => Ok(ChunkRecord::Message(MessageHeader {
                conn: field_u32(conn.ok_or_else(|| missing(k, at, "conn"))?, k, at, "conn")?,
                time_ns: field_time(time.ok_or_else(|| missing(k, at, "time"))?, k, at, "time")?,
            })),
            Some(op::CONNECTION) => Ok(ChunkRecord::Connection),
            Some(o) => Ok(ChunkRecord::Other(o)),
            None => Err(missing(RecordKind::Record, at, "op")),
        }
    }
}

/// op 0x04 version 1: the header of a chunk's index data for one connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexDataHeader {
    /// Index version (1 in format 2.0, 0 in 1.2).
    pub ver: u32,
    /// Connection id.
    pub conn: u32,
    /// Number of entries.
    pub count: u32,
}

/// Size of one index entry of version 1: time (8) and offset (4).
pub const INDEX_ENTRY_V1: usize = 12;

impl IndexDataHeader {
    /// Parses an index data header (format 2.0).
    pub fn parse(header: &[u8], at: Location) -> Result<Self> {
        let k = RecordKind::IndexData;
        let (mut ver, mut conn, mut count) = (None, None, None);
        for f in fields(header, k, at) {
            let (n, v) = f?;
            match n {
                b"ver" => ver = Some(field_u32(v, k, at, "ver")?),
                b"conn" => conn = Some(field_u32(v, k, at, "conn")?),
                b"count" => count = Some(field_u32(v, k, at, "count")?),
                _ => {}
            }
        }
        Ok(IndexDataHeader {
            ver: ver.ok_or_else(|| missing(k, at, "ver"))?,
            conn: conn.ok_or_else(|| missing(k, at, "conn"))?,
            count: count.ok_or_else(|| missing(k, at, "count"))?,
        })
    }
}

/// op 0x06: a chunk info, the summary of one chunk in the index section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkInfoRecord {
    /// File offset of the chunk record.
    pub chunk_pos: u64,
    /// Earliest message time in the chunk (ns).
    pub start_ns: u64,
    /// Latest message time in the chunk (ns).
    pub end_ns: u64,
    /// Messages per connection id in the chunk.
    pub counts: Vec<(u32, u32)>,
}

impl ChunkInfoRecord {
    /// Parses a chunk info record.
    pub fn parse(header: &[u8], data: &[u8], at: Location) -> Result<Self> {
        let k = RecordKind::ChunkInfo;
        let (mut pos, mut start, mut end, mut count) = (None, None, None, None);
        for f in fields(header, k, at) {
            let (n, v) = f?;
            match n {
                b"ver" => {
                    let ver = field_u32(v, k, at, "ver")?;
                    if ver != 1 {
                        return Err(Error::Malformed {
                            kind: k,
                            at,
                            reason: format!("unknown chunk info version {ver}"),
                        });
                    }
                }
                b"chunk_pos" => pos = Some(field_u64(v, k, at, "chunk_pos")?),
                b"start_time" => start = Some(field_time(v, k, at, "start_time")?),
                b"end_time" => end = Some(field_time(v, k, at, "end_time")?),
                b"count" => count = Some(field_u32(v, k, at, "count")?),
                _ => {}
            }
        }
        let count = count.ok_or_else(|| missing(k, at, "count"))? as usize;
        if data.len() != count.saturating_mul(8) {
            return Err(Error::Malformed {
                kind: k,
                at,
                reason: format!(
                    "data has {} bytes but count {count} needs {}",
                    data.len(),
                    count.saturating_mul(8)
                ),
            });
        }
        let counts = data
            .chunks_exact(8)
            .map(|c| (le_u32(c, 0).unwrap_or(0), le_u32(c, 4).unwrap_or(0)))
            .collect();
        Ok(ChunkInfoRecord {
            chunk_pos: pos.ok_or_else(|| missing(k, at, "chunk_pos"))?,
            start_ns: start.ok_or_else(|| missing(k, at, "start_time"))?,
            end_ns: end.ok_or_else(|| missing(k, at, "end_time"))?,
            counts,
        })
    }
}

/// Format 1.2 fields of op 0x01 and 0x02 records (topic, md5, type, def, sec, nsec).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct V12Header {
    /// Record op.
    pub op: u8,
    /// `topic` field.
    pub topic: String,
    /// `md5` field.
    pub md5: String,
    /// `type` field.
    pub datatype: String,
    /// `def` field (op 0x01).
    pub def: String,
    /// Receive time from `sec` and `nsec` (op 0x02).
    pub time_ns: u64,
    /// `latching` field, if present.
    pub latching: bool,
    /// Whether the `latching` field is present.
    pub latching_stated: bool,
    /// `callerid` field, if present.
    pub callerid: Option<String>,
    /// `index_pos` (op 0x03).
    pub index_pos: u64,
    /// `count` (op 0x04).
    pub count: u32,
    /// `ver` (op 0x04).
    pub ver: u32,
}

impl V12Header {
    /// Parses any format 1.2 record header.
    pub fn parse(header: &[u8], at: Location) -> Result<Self> {
        let k = RecordKind::Record;
        let mut out = V12Header::default();
        let (mut sec, mut nsec, mut have_op) = (0u32, 0u32, false);
        for f in fields(header, k, at) {
            let (n, v) = f?;
            match n {
                b"op" => {
                    out.op = *v
                        .first()
                        .filter(|_| v.len() == 1)
                        .ok_or_else(|| width_err(k, at, "op", 1, v.len()))?;
                    have_op = true;
                }
                b"topic" => out.topic = field_string(v),
                b"md5" => out.md5 = field_string(v),
                b"type" => out.datatype = field_string(v),
                b"def" => out.def = field_string(v),
                b"sec" => sec = field_u32(v, k, at, "sec")?,
                b"nsec" => nsec = field_u32(v, k, at, "nsec")?,
                b"latching" => {
                    out.latching = v == b"1";
                    out.latching_stated = true;
                }
                b"callerid" => out.callerid = Some(field_string(v)),
                b"index_pos" => out.index_pos = field_u64(v, k, at, "index_pos")?,
                b"count" => out.count = field_u32(v, k, at, "count")?,
                b"ver" => out.ver = field_u32(v, k, at, "ver")?,
                _ => {}
            }
        }
        if !have_op {
            return Err(missing(k, at, "op"));
        }
        out.time_ns = time_ns(sec, nsec);
        Ok(out)
    }
}

/// Appends one `name=value` header field.
pub fn put_field(out: &mut Vec<u8>, name: &str, value: &[u8]) {
    let len = (name.len() + 1 + value.len()) as u32;
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(name.as_bytes());
    out.push(b'=');
    out.extend_from_slice(value);
}

/// Appends a whole record (`header_len, header, data_len, data`).
pub fn put_record(out: &mut Vec<u8>, header: &[u8], data: &[u8]) {
    out.extend_from_slice(&(header.len() as u32).to_le_bytes());
    out.extend_from_slice(header);
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out.extend_from_slice(data);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_and_parses_a_message_record() {
        let mut h = Vec::new();
        put_field(&mut h, "op", &[op::MSG_DATA]);
        put_field(&mut h, "conn", &7u32.to_le_bytes());
        let mut t = Vec::new();
        t.extend_from_slice(&5u32.to_le_bytes());
        t.extend_from_slice(&6u32.to_le_bytes());
        put_field(&mut h, "time", &t);
        let mut rec = Vec::new();
        put_record(&mut rec, &h, b"abc");
        let r = frame_record(&rec, 0, Location::File(0)).unwrap();
        assert_eq!(r.data, b"abc");
        assert_eq!(r.len, rec.len());
        assert_eq!(
            header_op(r.header, Location::File(0)).unwrap(),
            op::MSG_DATA
        );
        let m = MessageHeader::parse(r.header, Location::File(0)).unwrap();
        assert_eq!(
            m,
            MessageHeader {
                conn: 7,
                time_ns: 5_000_000_006
            }
        );
    }

    #[test]
    fn truncated_and_wrong_width_fields_are_errors() {
        let mut rec = Vec::new();
        put_record(&mut rec, b"\x05\x00\x00\x00op=\x02", b"abcdef");
        for cut in 0..rec.len() {
            assert!(frame_record(&rec[..cut], 0, Location::File(0)).is_err());
        }
        let mut h = Vec::new();
        put_field(&mut h, "op", &[op::MSG_DATA]);
        put_field(&mut h, "conn", &7u16.to_le_bytes());
        put_field(&mut h, "time", &[0; 8]);
        let e = MessageHeader::parse(&h, Location::File(9)).unwrap_err();
        assert!(e.to_string().contains("`conn` has 2 bytes"), "{e}");
        // A field length past the header's end.
        let e = header_op(b"\xff\x00\x00\x00op=", Location::File(0)).unwrap_err();
        assert!(e.to_string().contains("declares 255 bytes"), "{e}");
    }
}
