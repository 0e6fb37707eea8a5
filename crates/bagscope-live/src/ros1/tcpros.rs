//! TCPROS framing: the connection header (length-prefixed `key=value` fields, as a bag's
//! connection record holds them) and the length-prefixed messages after it. Lengths read from
//! a peer are bounded before anything is allocated.

use std::io::{ErrorKind, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};

/// The largest connection header read from a peer (message definitions included).
pub const MAX_HEADER: usize = 16 << 20;
/// The largest message read from a peer.
pub const MAX_MESSAGE: usize = 1 << 30;

/// A connection header's fields in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Header(pub Vec<(String, String)>);

impl Header {
    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Adds `key=value`.
    pub fn with(mut self, key: &str, value: &str) -> Header {
        self.0.push((key.to_string(), value.to_string()));
        self
    }

    /// The header as sent: its length, then each field with its own length.
    pub fn encode(&self) -> Vec<u8> {
        let mut body = Vec::new();
        for (k, v) in &self.0 {
            let n = (k.len() + 1 + v.len()) as u32;
            body.extend_from_slice(&n.to_le_bytes());
            body.extend_from_slice(k.as_bytes());
            body.push(b'=');
            body.extend_from_slice(v.as_bytes());
        }
        let mut out = Vec::with_capacity(body.len() + 4);
        out.extend_from_slice(&(body.len() as u32).to_le_bytes());
        out.extend_from_slice(&body);
        out
    }

    /// A header's fields from its bytes (without the leading length).
    pub fn decode(b: &[u8]) -> std::result::Result<Header, String> {
        let mut out = Vec::new();
        let mut at = 0;
        while at < b.len() {
            let n = b
                .get(at..at + 4)
                .and_then(|x| <[u8; 4]>::try_from(x).ok())
                .map(u32::from_le_bytes)
                .ok_or_else(|| format!("a field's length cut at byte {at}"))?
                as usize;
            let f = b
                .get(at + 4..at + 4 + n)
                .ok_or_else(|| format!("a field of {n} bytes at byte {at} runs past the header"))?;
            let eq = f
                .iter()
                .position(|&c| c == b'=')
                .ok_or_else(|| format!("the field at byte {at} has no '='"))?;
            out.push((
                String::from_utf8_lossy(&f[..eq]).into_owned(),
                String::from_utf8_lossy(&f[eq + 1..]).into_owned(),
            ));
            at += 4 + n;
        }
        Ok(Header(out))
    }

    /// Reads a header from `r`.
    pub fn read(r: &mut impl Read) -> std::result::Result<Header, String> {
        let b = read_frame(r, MAX_HEADER, "connection header")?
            .ok_or("the connection closed before its header")?;
        Header::decode(&b)
    }

    /// Writes the header to `w`.
    pub fn write(&self, w: &mut impl Write) -> std::io::Result<()> {
        w.write_all(&self.encode())
    }
}

/// One length-prefixed frame, at most `limit` bytes; None when the stream ends cleanly
/// before it.
pub fn read_frame(
    r: &mut impl Read,
    limit: usize,
    what: &str,
) -> std::result::Result<Option<Vec<u8>>, String> {
    read_frame_until(r, limit, what, None)
}

/// [`read_frame`] on a stream with a read timeout: a timeout is waited through (a quiet
/// publisher) unless `stop` is set, which ends the read with None. Without `stop` a timeout
/// is an error. The buffer grows as bytes arrive, so a length a peer only claims allocates
/// nothing.
pub fn read_frame_until(
    r: &mut impl Read,
    limit: usize,
    what: &str,
    stop: Option<&AtomicBool>,
) -> std::result::Result<Option<Vec<u8>>, String> {
    // Ok(true): read again; Ok(false): stopped.
    let waited = |e: std::io::Error| -> std::result::Result<bool, String> {
        match e.kind() {
            ErrorKind::Interrupted => Ok(true),
            ErrorKind::WouldBlock | ErrorKind::TimedOut if stop.is_some() => {
                Ok(!stop.is_some_and(|s| s.load(Ordering::Relaxed)))
            }
            _ => Err(format!("cannot read a {what}: {e}")),
        }
    };
    let mut len = [0u8; 4];
    let mut got = 0;
    while got < 4 {
        match r.read(&mut len[got..]) {
            Ok(0) if got == 0 => return Ok(None),
            Ok(0) => return Err(format!("the connection closed inside a {what}'s length")),
            Ok(n) => got += n,
            Err(e) => {
                if !waited(e)? {
                    return Ok(None);
                }
            }
        }
    }
    let n = u32::from_le_bytes(len) as usize;
    if n > limit {
        return Err(format!("a {what} of {n} bytes (limit {limit})"));
    }
    let mut b = vec![0u8; n.min(1 << 20)];
    let mut at = 0;
    while at < n {
        if at == b.len() {
            b.resize((b.len() * 2).min(n), 0);
        }
        match r.read(&mut b[at..]) {
            Ok(0) => {
                return Err(format!(
                    "the connection closed after {at} of a {what}'s {n} bytes"
                ))
            }
            Ok(k) => at += k,
            Err(e) => {
                if !waited(e)? {
                    return Ok(None);
                }
            }
        }
    }
    b.truncate(n);
    Ok(Some(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_round_trip_and_bad_ones_are_errors() {
        let h = Header::default()
            .with("topic", "/a")
            .with("message_definition", "int32 x=1\n");
        let b = h.encode();
        let got = Header::read(&mut &b[..]).unwrap();
        assert_eq!(got, h);
        assert_eq!(got.get("message_definition"), Some("int32 x=1\n"));
        assert!(Header::decode(&[9, 0, 0, 0, b'a']).is_err());
        assert!(Header::decode(&[1, 0, 0, 0, b'a']).is_err());
        let huge = (u32::MAX).to_le_bytes();
        assert!(read_frame(&mut &huge[..], 100, "message").is_err());
        assert_eq!(read_frame(&mut &[][..], 100, "message").unwrap(), None);
    }
}
