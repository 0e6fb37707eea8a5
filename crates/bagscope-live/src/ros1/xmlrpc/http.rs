//! XML-RPC over HTTP/1.0 as ROS 1 speaks it: a bounded client call and a server answering calls on
//! threads.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use crate::Result;

use super::{
    call_document, fault_document, live_err, parse_call, parse_response, response_document, Value,
    MAX_BODY, MAX_HEAD, TIMEOUT,
};

/// `http://host:port/path` split into `host:port` and the path.
pub fn split_uri(uri: &str) -> Option<(String, String)> {
    let rest = uri.strip_prefix("http://")?;
    let (hostport, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    if hostport.is_empty() {
        return None;
    }
    let hostport = if hostport.contains(':') {
        hostport.to_string()
    } else {
        format!("{hostport}:80")
    };
    Some((hostport, path.to_string()))
}

/// Calls `method` at the XML-RPC server `uri` (`http://host:port/`), waiting for its answer.
pub fn call(uri: &str, method: &str, params: &[Value]) -> Result<Value> {
    let what = format!("XML-RPC {method} at {uri}");
    let (hostport, path) =
        split_uri(uri).ok_or_else(|| live_err(&what, "not an http:// address"))?;
    let addr = hostport
        .to_socket_addrs()
        .map_err(|e| live_err(&what, &e.to_string()))?
        .next()
        .ok_or_else(|| live_err(&what, "the host has no address"))?;
    let mut s = TcpStream::connect_timeout(&addr, TIMEOUT)
        .map_err(|e| live_err(&what, &format!("cannot connect: {e}")))?;
    s.set_read_timeout(Some(TIMEOUT))?;
    s.set_write_timeout(Some(TIMEOUT))?;
    let _ = s.set_nodelay(true);
    let body = call_document(method, params);
    let req = format!(
        "POST {path} HTTP/1.1\r\nHost: {hostport}\r\nUser-Agent: bagscope\r\nContent-Type: text/xml\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    s.write_all(req.as_bytes())
        .and_then(|()| s.write_all(body.as_bytes()))
        .map_err(|e| live_err(&what, &format!("cannot send: {e}")))?;
    let mut r = BufReader::new(s);
    let (status, len) = read_head(&mut r).map_err(|e| live_err(&what, &e))?;
    if !status.contains(" 200") {
        return Err(live_err(&what, &format!("HTTP status {status:?}")));
    }
    let body = read_body(&mut r, len).map_err(|e| live_err(&what, &e))?;
    parse_response(&body).map_err(|e| live_err(&what, &e))
}

/// An HTTP message's first line and its `Content-Length` (None: read to the end).
pub(super) fn read_head(
    r: &mut impl BufRead,
) -> std::result::Result<(String, Option<usize>), String> {
    let mut first = String::new();
    let mut len = None;
    let mut total = 0;
    loop {
        let mut line = String::new();
        let n = r
            .by_ref()
            .take((MAX_HEAD - total) as u64 + 1)
            .read_line(&mut line)
            .map_err(|e| format!("cannot read: {e}"))?;
        total += n;
        if n == 0 {
            return Err("the connection closed before the headers ended".into());
        }
        if total > MAX_HEAD {
            return Err(format!("headers longer than {MAX_HEAD} bytes"));
        }
        let line = line.trim_end();
        if first.is_empty() {
            if line.is_empty() {
                continue;
            }
            first = line.to_string();
            continue;
        }
        if line.is_empty() {
            return Ok((first, len));
        }
        if let Some((k, v)) = line.split_once(':') {
            if k.trim().eq_ignore_ascii_case("content-length") {
                len = Some(
                    v.trim()
                        .parse()
                        .map_err(|_| format!("Content-Length {v:?}"))?,
                );
            }
        }
    }
}

pub(super) fn read_body(
    r: &mut impl Read,
    len: Option<usize>,
) -> std::result::Result<String, String> {
    let mut body = Vec::new();
    match len {
        Some(n) if n > MAX_BODY => return Err(format!("a body of {n} bytes (limit {MAX_BODY})")),
        Some(n) => {
            r.take(n as u64)
                .read_to_end(&mut body)
                .map_err(|e| format!("cannot read the body: {e}"))?;
            if body.len() != n {
                return Err(format!("the body ended after {} of {n} bytes", body.len()));
            }
        }
        None => {
            r.take(MAX_BODY as u64 + 1)
                .read_to_end(&mut body)
                .map_err(|e| format!("cannot read the body: {e}"))?;
            if body.len() > MAX_BODY {
                return Err(format!("a body longer than {MAX_BODY} bytes"));
            }
        }
    }
    String::from_utf8(body).map_err(|_| "a body that is not UTF-8".into())
}

/// What answers a server's calls: the method and its parameters to the value returned (an
/// `Err` becomes a fault).
pub type Handler = dyn Fn(&str, &[Value]) -> std::result::Result<Value, String> + Send + Sync;

/// An XML-RPC server on its own thread (a thread per connection), until dropped.
pub struct Server {
    pub(super) uri: String,
    pub(super) stop: Arc<AtomicBool>,
    pub(super) addr: std::net::SocketAddr,
}

impl Server {
    /// Serves `handler` on `host` (a free port), announcing itself as `http://host:port/`.
    pub fn start(host: &str, handler: Arc<Handler>) -> Result<Server> {
        let listener = TcpListener::bind((bind_host(host), 0))?;
        let addr = listener.local_addr()?;
        let uri = format!("http://{host}:{}/", addr.port());
        let stop = Arc::new(AtomicBool::new(false));
        let stop2 = stop.clone();
        thread::Builder::new()
            .name("bagscope-xmlrpc".into())
            .spawn(move || {
                for conn in listener.incoming() {
                    if stop2.load(Ordering::Relaxed) {
                        break;
                    }
                    let Ok(conn) = conn else { continue };
                    let h = handler.clone();
                    let _ = thread::Builder::new()
                        .name("bagscope-xmlrpc-conn".into())
                        .spawn(move || serve(conn, &*h));
                }
            })?;
        Ok(Server { uri, stop, addr })
    }

    /// `http://host:port/`.
    pub fn uri(&self) -> &str {
        &self.uri
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Wakes the accepting thread so that it sees the flag.
        if let Ok(s) = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1)) {
            let _ = s.shutdown(Shutdown::Both);
        }
    }
}

/// The address to listen on for a node announcing itself as `host`: a name is resolved, an
/// unresolvable one listens everywhere.
pub(crate) fn bind_host(host: &str) -> std::net::IpAddr {
    (host, 0)
        .to_socket_addrs()
        .ok()
        .and_then(|mut a| a.next())
        .map_or(std::net::IpAddr::from([0, 0, 0, 0]), |a| a.ip())
}

/// Answers the calls of one connection (keep-alive honoured) until it closes.
pub(super) fn serve(conn: TcpStream, handler: &Handler) {
    let _ = conn.set_read_timeout(Some(Duration::from_secs(60)));
    let _ = conn.set_nodelay(true);
    let Ok(mut w) = conn.try_clone() else { return };
    let mut r = BufReader::new(conn);
    loop {
        let Ok((first, len)) = read_head(&mut r) else {
            return;
        };
        let keep = first.contains("HTTP/1.1");
        let body = match read_body(&mut r, Some(len.unwrap_or(0))) {
            Ok(b) => b,
            Err(_) => return,
        };
        let doc = match parse_call(&body) {
            Ok((method, params)) => match handler(&method, &params) {
                Ok(v) => response_document(&v),
                Err(e) => fault_document(1, &e),
            },
            Err(e) => fault_document(-32700, &format!("not an XML-RPC call: {e}")),
        };
        let head = format!(
            "HTTP/1.1 200 OK\r\nServer: bagscope\r\nContent-Type: text/xml\r\nContent-Length: {}\r\n{}\r\n",
            doc.len(),
            if keep { "" } else { "Connection: close\r\n" }
        );
        if w.write_all(head.as_bytes())
            .and_then(|()| w.write_all(doc.as_bytes()))
            .is_err()
            || !keep
        {
            return;
        }
    }
}
