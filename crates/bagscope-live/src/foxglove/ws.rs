//! The WebSocket protocol (RFC 6455), server side, as the Foxglove protocol uses it: the opening
//! handshake with a subprotocol, a client's frames read into whole messages (masked,
//! fragmented, with pings and a close), and the server's frames written. Everything a client
//! sends is bounded: the handshake's size, a message's size, a control frame's size.

use std::io::{self, BufRead, IoSlice, Read, Write};

use sha1::{Digest, Sha1};

/// The largest opening handshake read (a browser's is under 2 KB).
const MAX_HANDSHAKE: usize = 16 << 10;

/// Why a client's bytes were refused: the close code to send, and what was wrong.
#[derive(Debug)]
pub enum WsError {
    /// The connection failed or ended.
    Io(io::Error),
    /// The client broke the protocol: the close code (RFC 6455 §7.4.1) and why.
    Protocol(u16, String),
}

impl std::fmt::Display for WsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WsError::Io(e) => write!(f, "{e}"),
            WsError::Protocol(code, why) => write!(f, "{why} (close code {code})"),
        }
    }
}

impl From<io::Error> for WsError {
    fn from(e: io::Error) -> Self {
        WsError::Io(e)
    }
}

fn protocol<T>(code: u16, why: impl Into<String>) -> Result<T, WsError> {
    Err(WsError::Protocol(code, why.into()))
}

/// A client's opening handshake, as far as a server needs it.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Request {
    /// The request's path.
    pub path: String,
    /// `Sec-WebSocket-Key`.
    pub key: String,
    /// `Sec-WebSocket-Protocol`, each one offered, in order.
    pub protocols: Vec<String>,
    /// `Upgrade: websocket` and `Connection: upgrade` were both there.
    pub upgrade: bool,
    /// `Sec-WebSocket-Version`.
    pub version: String,
}

/// Reads the opening handshake (up to the blank line, at most 16 KB) and parses it.
pub fn read_request(r: &mut impl BufRead) -> Result<Request, WsError> {
    let mut head = Vec::new();
    loop {
        let n = r
            .by_ref()
            .take((MAX_HANDSHAKE - head.len()) as u64 + 1)
            .read_until(b'\n', &mut head)?;
        if n == 0 {
            return protocol(1002, "the connection ended inside the handshake");
        }
        if head.len() > MAX_HANDSHAKE {
            return protocol(1009, "a handshake over 16 KB");
        }
        if head.ends_with(b"\r\n\r\n") || head.ends_with(b"\n\n") {
            break;
        }
    }
    parse_request(&head)
}

/// Parses an opening handshake's text.
pub fn parse_request(head: &[u8]) -> Result<Request, WsError> {
    let text =
        std::str::from_utf8(head).or_else(|_| protocol(1002, "a handshake that is not text"))?;
    let mut lines = text.lines();
    let first = lines.next().unwrap_or_default();
    let mut parts = first.split_whitespace();
    let (Some("GET"), Some(path), Some(_)) = (parts.next(), parts.next(), parts.next()) else {
        return protocol(1002, format!("not a GET request: {first:?}"));
    };
    let mut req = Request {
        path: path.to_string(),
        ..Request::default()
    };
    let (mut upgrade, mut connection) = (false, false);
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        let list = || value.split(',').map(str::trim).filter(|v| !v.is_empty());
        match name.trim().to_ascii_lowercase().as_str() {
            "upgrade" => upgrade |= list().any(|v| v.eq_ignore_ascii_case("websocket")),
            "connection" => connection |= list().any(|v| v.eq_ignore_ascii_case("upgrade")),
            "sec-websocket-key" => req.key = value.to_string(),
            "sec-websocket-version" => req.version = value.to_string(),
            "sec-websocket-protocol" => req.protocols.extend(list().map(str::to_string)),
            _ => {}
        }
    }
    req.upgrade = upgrade && connection;
    Ok(req)
}

/// `Sec-WebSocket-Accept` for a client's key.
pub fn accept_key(key: &str) -> String {
    let mut h = Sha1::new();
    h.update(key.as_bytes());
    h.update(b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11");
    bagscope_reader::encoding::base64::encode(&h.finalize())
}

/// The server's answer to `req` when it speaks `protocol`: the 101 response.
pub fn switching(req: &Request, protocol: &str) -> String {
    format!(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Accept: {}\r\nSec-WebSocket-Protocol: {protocol}\r\n\r\n",
        accept_key(&req.key)
    )
}

/// A refusal of the handshake: the status line and a text body saying why.
pub fn refusal(status: &str, why: &str) -> String {
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{why}",
        why.len()
    )
}

/// A message from the client.
#[derive(Debug, PartialEq, Eq)]
pub enum Incoming {
    /// A text message (UTF-8 checked).
    Text(String),
    /// A binary message.
    Binary(Vec<u8>),
    /// A ping, to be answered with a pong of the same payload.
    Ping(Vec<u8>),
    /// A pong.
    Pong,
    /// The client closes: its code, if it gave one.
    Close(Option<u16>),
}

/// Reads a client's frames into messages, none larger than `max_message` bytes.
pub struct Reader<R> {
    r: R,
    max_message: usize,
    /// A fragmented message being read: its opcode and the bytes so far (kept across the
    /// control frames that may come between its fragments).
    partial: Option<(u8, Vec<u8>)>,
}

impl<R: Read> Reader<R> {
    /// Frames read from `r`.
    pub fn new(r: R, max_message: usize) -> Self {
        Reader {
            r,
            max_message,
            partial: None,
        }
    }

    /// The next whole message (control frames between a message's fragments come first).
    pub fn read(&mut self) -> Result<Incoming, WsError> {
        loop {
            let mut h = [0u8; 2];
            self.r.read_exact(&mut h)?;
            let fin = h[0] & 0x80 != 0;
            if h[0] & 0x70 != 0 {
                return protocol(1002, "reserved bits set (no extension was agreed)");
            }
            let opcode = h[0] & 0x0f;
            if h[1] & 0x80 == 0 {
                return protocol(1002, "a client frame that is not masked");
            }
            let len = match h[1] & 0x7f {
                126 => {
                    let mut b = [0u8; 2];
                    self.r.read_exact(&mut b)?;
                    u64::from(u16::from_be_bytes(b))
                }
                127 => {
                    let mut b = [0u8; 8];
                    self.r.read_exact(&mut b)?;
                    u64::from_be_bytes(b)
                }
                n => u64::from(n),
            };
            let control = opcode & 0x08 != 0;
            if control && (len > 125 || !fin) {
                return protocol(1002, "a control frame over 125 bytes or fragmented");
            }
            let have = self.partial.as_ref().map_or(0, |p| p.1.len()) as u64;
            if have.saturating_add(len) > self.max_message as u64 {
                return protocol(1009, format!("a message over {} bytes", self.max_message));
            }
            let mut mask = [0u8; 4];
            self.r.read_exact(&mut mask)?;
            let mut payload = Vec::new();
            (&mut self.r).take(len).read_to_end(&mut payload)?;
            if payload.len() as u64 != len {
                return Err(WsError::Io(io::ErrorKind::UnexpectedEof.into()));
            }
            for (i, b) in payload.iter_mut().enumerate() {
                *b ^= mask[i % 4];
            }
            match opcode {
                0x8 => {
                    let code =
                        (payload.len() >= 2).then(|| u16::from_be_bytes([payload[0], payload[1]]));
                    return Ok(Incoming::Close(code));
                }
                0x9 => return Ok(Incoming::Ping(payload)),
                0xA => return Ok(Incoming::Pong),
                0x0 => match self.partial.as_mut() {
                    Some(p) => p.1.extend_from_slice(&payload),
                    None => return protocol(1002, "a continuation frame with nothing to continue"),
                },
                0x1 | 0x2 => {
                    if self.partial.is_some() {
                        return protocol(1002, "a new message inside a fragmented one");
                    }
                    self.partial = Some((opcode, payload));
                }
                op => return protocol(1002, format!("unknown opcode {op:#x}")),
            }
            if fin {
                let Some((op, data)) = self.partial.take() else {
                    continue;
                };
                return if op == 0x1 {
                    String::from_utf8(data)
                        .map(Incoming::Text)
                        .or_else(|_| protocol(1007, "a text message that is not UTF-8"))
                } else {
                    Ok(Incoming::Binary(data))
                };
            }
        }
    }
}

/// Frame opcodes a server sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opcode {
    /// A text message.
    Text = 0x1,
    /// A binary message.
    Binary = 0x2,
    /// Closing.
    Close = 0x8,
    /// Ping.
    Ping = 0x9,
    /// Pong.
    Pong = 0xA,
}

/// A server frame's header for a payload of `len` bytes (servers do not mask).
pub fn header(op: Opcode, len: usize) -> ([u8; 10], usize) {
    let mut h = [0u8; 10];
    h[0] = 0x80 | op as u8;
    let n = if len < 126 {
        h[1] = len as u8;
        2
    } else if len <= usize::from(u16::MAX) {
        h[1] = 126;
        h[2..4].copy_from_slice(&(len as u16).to_be_bytes());
        4
    } else {
        h[1] = 127;
        h[2..10].copy_from_slice(&(len as u64).to_be_bytes());
        10
    };
    (h, n)
}

/// Writes one unfragmented frame: its header, then the payload's parts in order, in one
/// vectored write where the writer takes it (a camera frame goes out with its headers in one
/// system call, not a small segment and then the image).
pub fn write_frame(w: &mut impl Write, op: Opcode, parts: &[&[u8]]) -> io::Result<()> {
    let len = parts.iter().map(|p| p.len()).sum();
    let (h, n) = header(op, len);
    let mut slices = [IoSlice::new(&[]); 4];
    slices[0] = IoSlice::new(&h[..n]);
    let mut k = 1;
    for p in parts.iter().filter(|p| !p.is_empty()) {
        if k == slices.len() {
            // More parts than slices: the rest one by one.
            write_all_vectored(w, &mut slices[..k])?;
            k = 0;
        }
        slices[k] = IoSlice::new(p);
        k += 1;
    }
    write_all_vectored(w, &mut slices[..k])
}

/// `Write::write_all_vectored` (not stable yet): every slice written, in order.
fn write_all_vectored(w: &mut impl Write, mut bufs: &mut [IoSlice<'_>]) -> io::Result<()> {
    IoSlice::advance_slices(&mut bufs, 0);
    while !bufs.is_empty() {
        match w.write_vectored(bufs) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => IoSlice::advance_slices(&mut bufs, n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// A close frame's payload: the code and a reason cut to fit a control frame.
pub fn close_payload(code: u16, reason: &str) -> Vec<u8> {
    let mut p = code.to_be_bytes().to_vec();
    let mut end = reason.len().min(123);
    while !reason.is_char_boundary(end) {
        end -= 1;
    }
    p.extend_from_slice(&reason.as_bytes()[..end]);
    p
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// A client frame (masked) of `payload`.
    fn client_frame(fin: bool, op: u8, payload: &[u8]) -> Vec<u8> {
        let mask = [0x37, 0xfa, 0x21, 0x3d];
        let mut f = vec![if fin { 0x80 } else { 0 } | op];
        match payload.len() {
            n if n < 126 => f.push(0x80 | n as u8),
            n if n <= 0xffff => {
                f.push(0x80 | 126);
                f.extend_from_slice(&(n as u16).to_be_bytes());
            }
            n => {
                f.push(0x80 | 127);
                f.extend_from_slice(&(n as u64).to_be_bytes());
            }
        }
        f.extend_from_slice(&mask);
        f.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
        f
    }

    #[test]
    fn rfc_example_key() {
        // RFC 6455 §1.3's example.
        assert_eq!(
            accept_key("dGhlIHNhbXBsZSBub25jZQ=="),
            "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
        );
    }

    #[test]
    fn handshake_parsed() {
        let head = b"GET /x HTTP/1.1\r\nHost: a\r\nUpgrade: WebSocket\r\nConnection: keep-alive, Upgrade\r\n\
            Sec-WebSocket-Key: k==\r\nSec-WebSocket-Protocol: foxglove.sdk.v1, foxglove.websocket.v1\r\n\
            Sec-WebSocket-Version: 13\r\n\r\n";
        let r = read_request(&mut &head[..]).unwrap();
        assert!(r.upgrade);
        assert_eq!(r.path, "/x");
        assert_eq!(r.key, "k==");
        assert_eq!(r.protocols, ["foxglove.sdk.v1", "foxglove.websocket.v1"]);
        assert_eq!(r.version, "13");
        let big = vec![b'a'; MAX_HANDSHAKE + 10];
        assert!(matches!(
            read_request(&mut &big[..]),
            Err(WsError::Protocol(1009, _))
        ));
        assert!(read_request(&mut &b"POST / HTTP/1.1\r\n\r\n"[..]).is_err());
        assert!(read_request(&mut &b"GET / HTTP/1.1\r\n"[..]).is_err());
    }

    #[test]
    fn fragments_and_controls() {
        let mut s = client_frame(false, 1, b"wor");
        s.extend(client_frame(true, 9, b"p"));
        s.extend(client_frame(true, 0, b"ld"));
        s.extend(client_frame(true, 2, &vec![7u8; 70_000]));
        s.extend(client_frame(true, 8, &[0x03, 0xe8]));
        let mut r = Reader::new(&s[..], 1 << 20);
        assert_eq!(r.read().unwrap(), Incoming::Ping(b"p".to_vec()));
        assert_eq!(r.read().unwrap(), Incoming::Text("world".into()));
        assert_eq!(r.read().unwrap(), Incoming::Binary(vec![7u8; 70_000]));
        assert_eq!(r.read().unwrap(), Incoming::Close(Some(1000)));
        assert!(matches!(r.read(), Err(WsError::Io(_))));
    }

    #[test]
    fn refusals() {
        let refused = |bytes: Vec<u8>, code: u16| {
            let got = Reader::new(&bytes[..], 100).read();
            assert!(
                matches!(&got, Err(WsError::Protocol(c, _)) if *c == code),
                "{got:?}"
            );
        };
        refused(client_frame(true, 2, &[0; 101]), 1009);
        refused(client_frame(true, 1, &[0xff, 0xfe]), 1007);
        refused(client_frame(true, 3, b""), 1002);
        refused(client_frame(true, 0, b"x"), 1002);
        refused(client_frame(false, 9, b"x"), 1002);
        refused(vec![0x82, 0x01, 0x00], 1002); // not masked
        refused(vec![0xc2, 0x80, 0, 0, 0, 0], 1002); // RSV1
                                                     // A length of 2^63 is refused before anything is allocated.
        let mut huge = vec![0x82, 0xff];
        huge.extend_from_slice(&(1u64 << 63).to_be_bytes());
        refused(huge, 1009);
    }

    /// Random bytes (and random bytes after a valid frame header), 20,000 inputs: every read
    /// ends in a message or an error, never a panic, and no allocation past the limit.
    #[test]
    fn random_input() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for i in 0..20_000 {
            let n = (next() % 600) as usize;
            let mut bytes: Vec<u8> = (0..n).map(|_| next() as u8).collect();
            if i % 2 == 0 && bytes.len() > 2 {
                // A plausible first byte and a masked length, so the deeper paths run.
                bytes[0] = 0x80 | [0, 1, 2, 8, 9, 10][(next() % 6) as usize];
                bytes[1] |= 0x80;
            }
            let mut r = Reader::new(&bytes[..], 256);
            for _ in 0..64 {
                if r.read().is_err() {
                    break;
                }
            }
            let _ = parse_request(&bytes);
        }
    }

    #[test]
    fn server_headers() {
        for (len, n) in [(0, 2), (125, 2), (126, 4), (65535, 4), (65536, 10)] {
            let (h, got) = header(Opcode::Binary, len);
            assert_eq!(got, n);
            assert_eq!(h[0], 0x82);
        }
        let mut out = Vec::new();
        write_frame(&mut out, Opcode::Text, &[b"ab", b"c"]).unwrap();
        assert_eq!(out, b"\x81\x03abc");
        assert_eq!(close_payload(1000, "é".repeat(100).as_str()).len(), 2 + 122);
    }
}
