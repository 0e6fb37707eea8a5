//! MCAP files written record by record (no summary, unchunked, as a minimal writer leaves
//! them), for files bagscope's own writer would not make: other encodings, odd orders.

pub fn record(op: u8, content: &[u8]) -> Vec<u8> {
    let mut r = vec![op];
    r.extend_from_slice(&(content.len() as u64).to_le_bytes());
    r.extend_from_slice(content);
    r
}

pub fn string(s: &str) -> Vec<u8> {
    let mut v = (s.len() as u32).to_le_bytes().to_vec();
    v.extend_from_slice(s.as_bytes());
    v
}

pub fn schema(id: u16, name: &str, encoding: &str, data: &str) -> Vec<u8> {
    schema_bytes(id, name, encoding, data.as_bytes())
}

/// A schema record whose data is any bytes (a binary protobuf `FileDescriptorSet`).
pub fn schema_bytes(id: u16, name: &str, encoding: &str, data: &[u8]) -> Vec<u8> {
    let mut c = id.to_le_bytes().to_vec();
    c.extend(string(name));
    c.extend(string(encoding));
    c.extend_from_slice(&(data.len() as u32).to_le_bytes());
    c.extend_from_slice(data);
    record(0x03, &c)
}

pub fn channel(id: u16, schema: u16, topic: &str, encoding: &str) -> Vec<u8> {
    let mut c = id.to_le_bytes().to_vec();
    c.extend_from_slice(&schema.to_le_bytes());
    c.extend(string(topic));
    c.extend(string(encoding));
    c.extend_from_slice(&0u32.to_le_bytes()); // empty metadata map
    record(0x04, &c)
}

pub fn message(channel: u16, seq: u32, t: u64, data: &[u8]) -> Vec<u8> {
    let mut c = channel.to_le_bytes().to_vec();
    c.extend_from_slice(&seq.to_le_bytes());
    c.extend_from_slice(&t.to_le_bytes());
    c.extend_from_slice(&(t + 1).to_le_bytes());
    c.extend_from_slice(data);
    record(0x05, &c)
}

pub fn file(records: &[Vec<u8>]) -> Vec<u8> {
    let magic = b"\x89MCAP0\r\n";
    let mut f = magic.to_vec();
    let mut h = string("");
    h.extend(string("bagscope test"));
    f.extend(record(0x01, &h));
    for r in records {
        f.extend_from_slice(r);
    }
    f.extend(record(0x0F, &0u32.to_le_bytes()));
    let mut footer = 0u64.to_le_bytes().to_vec();
    footer.extend_from_slice(&0u64.to_le_bytes());
    footer.extend_from_slice(&0u32.to_le_bytes());
    f.extend(record(0x02, &footer));
    f.extend_from_slice(magic);
    f
}
