//! A small HTTP/1.1 server on 127.0.0.1 for the remote tests: serves the files of a directory
//! with `HEAD` and single `Range` requests (206, `Content-Range`, an `ETag`), counts requests,
//! and fails on demand (answers 500, or drops the connection after half the body); over TLS
//! too (rustls on ring, as the client), with a certificate and key given as PEM files.

use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

#[derive(Default)]
pub struct State {
    /// Requests answered (any method).
    pub requests: AtomicUsize,
    /// The next this many GETs answer 500.
    pub fail_500: AtomicUsize,
    /// The next this many GETs send half their body, then close.
    pub drop: AtomicUsize,
}

pub struct Server {
    pub url: String,
    pub state: Arc<State>,
}

/// Serves `root` on a free port of 127.0.0.1 from a thread (a thread per connection).
pub fn serve(root: PathBuf) -> Server {
    serve_with(root, None)
}

/// [`serve`] over TLS (`https://`), with the certificate chain and key of these PEM files.
pub fn serve_tls(root: PathBuf, cert_pem: &Path, key_pem: &Path) -> Server {
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, PrivateKeyDer};
    let certs = CertificateDer::pem_file_iter(cert_pem)
        .expect("certificate file")
        .collect::<Result<Vec<_>, _>>()
        .expect("certificate PEM");
    let key = PrivateKeyDer::from_pem_file(key_pem).expect("key PEM");
    let config = rustls::ServerConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .expect("TLS versions")
    .with_no_client_auth()
    .with_single_cert(certs, key)
    .expect("certificate and key");
    serve_with(root, Some(Arc::new(config)))
}

fn serve_with(root: PathBuf, tls: Option<Arc<rustls::ServerConfig>>) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
    let scheme = if tls.is_some() { "https" } else { "http" };
    let url = format!("{scheme}://{}", listener.local_addr().expect("local addr"));
    let state = Arc::new(State::default());
    let st = state.clone();
    std::thread::spawn(move || {
        for conn in listener.incoming().flatten() {
            let root = root.clone();
            let st = st.clone();
            let tls = tls.clone();
            std::thread::spawn(move || {
                let _ = match tls {
                    None => handle(conn, &root, &st),
                    Some(config) => rustls::ServerConnection::new(config)
                        .map_err(std::io::Error::other)
                        .and_then(|c| handle(rustls::StreamOwned::new(c, conn), &root, &st)),
                };
            });
        }
    });
    Server { url, state }
}

fn take(a: &AtomicUsize) -> bool {
    a.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
        .is_ok()
}

fn handle<S: Read + Write>(conn: S, root: &Path, st: &State) -> std::io::Result<()> {
    let mut reader = BufReader::new(conn);
    loop {
        // The answer before is sent whole (TLS holds what is written until flushed).
        reader.get_mut().flush()?;
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let mut parts = line.split_whitespace();
        let method = parts.next().unwrap_or("").to_string();
        let path = parts.next().unwrap_or("/").to_string();
        let mut range = None;
        loop {
            let mut h = String::new();
            if reader.read_line(&mut h)? == 0 {
                return Ok(());
            }
            let h = h.trim_end();
            if h.is_empty() {
                break;
            }
            if let Some((k, v)) = h.split_once(':') {
                if k.eq_ignore_ascii_case("range") {
                    range = Some(v.trim().to_string());
                }
            }
        }
        st.requests.fetch_add(1, Ordering::SeqCst);
        // (Every byte of the request is read: what the reader holds now is the next one's.)
        let out = reader.get_mut();
        let get = method == "GET";
        if get && take(&st.fail_500) {
            out.write_all(b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\n\r\nfail")?;
            continue;
        }
        let rel = path.split('?').next().unwrap_or("").trim_start_matches('/');
        let file = root.join(rel);
        let ok = !rel.split('/').any(|c| c == "..") && file.is_file();
        if !ok || (method != "GET" && method != "HEAD") {
            let status = if ok {
                "405 Method Not Allowed"
            } else {
                "404 Not Found"
            };
            write!(out, "HTTP/1.1 {status}\r\nContent-Length: 0\r\n\r\n")?;
            continue;
        }
        let meta = std::fs::metadata(&file)?;
        let size = meta.len();
        let (start, end, status) = match range.as_deref().and_then(|r| r.strip_prefix("bytes=")) {
            Some(r) => {
                let (a, b) = r.split_once('-').unwrap_or((r, ""));
                let (s, e) = if a.is_empty() {
                    let n: u64 = b.parse().unwrap_or(0);
                    (size.saturating_sub(n), size.saturating_sub(1))
                } else {
                    let s: u64 = a.parse().unwrap_or(0);
                    let e = b
                        .parse::<u64>()
                        .map_or(size.saturating_sub(1), |e| e.min(size - 1));
                    (s, e)
                };
                (s, e, "206 Partial Content")
            }
            None => (0, size.saturating_sub(1), "200 OK"),
        };
        let n = if size == 0 { 0 } else { end + 1 - start };
        write!(
            out,
            "HTTP/1.1 {status}\r\nContent-Length: {n}\r\nAccept-Ranges: bytes\r\nETag: \"{size}-{}\"\r\nLast-Modified: Tue, 24 Nov 2026 10:00:00 GMT\r\n",
            meta.modified().ok().and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).map_or(0, |d| d.as_nanos())
        )?;
        if status.starts_with("206") {
            write!(out, "Content-Range: bytes {start}-{end}/{size}\r\n")?;
        }
        out.write_all(b"\r\n")?;
        if !get {
            continue;
        }
        let mut f = std::fs::File::open(&file)?;
        f.seek(SeekFrom::Start(start))?;
        let mut body = vec![0u8; n as usize];
        f.read_exact(&mut body)?;
        if take(&st.drop) {
            out.write_all(&body[..body.len() / 2])?;
            out.flush()?;
            return Ok(());
        }
        out.write_all(&body)?;
    }
}
