//! Recordings in object storage and over HTTP: `s3://`, `gs://`, `az://` (and `abfs://`,
//! `adl://`, `azure://`), `http://` and `https://` locations, read through the Arrow project's
//! `object_store` client with ranged reads, a block cache and read-ahead, so that an indexed
//! ROS 1 bag or MCAP opens from its index in a few round trips and a reader fetches only the
//! chunks it reads.
//!
//! Credentials and endpoints come from each cloud's standard environment (`AWS_*` with
//! `AWS_ENDPOINT_URL` for S3-compatible servers such as MinIO, `GOOGLE_*`, `AZURE_*`) and, for
//! S3, the shared files `~/.aws/credentials` and `~/.aws/config` (`AWS_PROFILE`). They never
//! appear in what bagscope prints: a location is shown without its user information and query
//! ([`shown`]), and an error from the client is scrubbed of every credential value
//! ([`scrub`]).
//!
//! The client is asynchronous; its requests run on a small runtime of our own
//! (`runtime`), and every reader waits on its own request (reader threads issue theirs side by
//! side).

use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use object_store::{ObjectStore, ObjectStoreExt, ObjectStoreScheme};

/// The unit of the block cache: small reads (a record header, an index) fetch a whole block,
/// so the records around them are at hand.
pub const BLOCK: u64 = 64 << 10;
/// Blocks kept per remote file, 64 MiB (least recently used dropped first).
const CACHE_BLOCKS: usize = 1024;
/// Read-ahead grows while reads are sequential, up to this many blocks in one request.
const MAX_AHEAD: u64 = 256;
/// The first read of a file's last block takes this many blocks before it too (1 MiB).
const TAIL_BLOCKS: u64 = 16;
/// A read spanning more than this many blocks is fetched as it is, not through the cache.
const DIRECT_BLOCKS: u64 = 4;

/// Whether `path` names a remote location rather than a local file.
pub fn is_url(path: &Path) -> bool {
    let Some(s) = path.to_str() else {
        return false;
    };
    let Some((scheme, rest)) = s.split_once("://") else {
        return false;
    };
    !rest.is_empty()
        && matches!(
            scheme.to_ascii_lowercase().as_str(),
            "s3" | "s3a" | "gs" | "az" | "adl" | "azure" | "abfs" | "abfss" | "http" | "https"
        )
}

/// Whether `url` is plain HTTP(S) (no listing; no store of ours behind it).
pub fn is_http(url: &str) -> bool {
    let u = url.to_ascii_lowercase();
    (u.starts_with("http://") || u.starts_with("https://"))
        && url::Url::parse(url)
            .ok()
            .and_then(|p| ObjectStoreScheme::parse(&p).ok())
            .is_some_and(|(s, _)| s == ObjectStoreScheme::Http)
}

/// `url` as it may be shown: without user information (`user:password@`) and without its
/// query or fragment (a presigned URL's or SAS token's signature).
pub fn shown(url: &str) -> String {
    let (scheme, rest) = match url.split_once("://") {
        Some(p) => p,
        None => return url.to_string(),
    };
    let rest = rest.split(['?', '#']).next().unwrap_or("");
    let (host, path) = match rest.find('/') {
        Some(i) => rest.split_at(i),
        None => (rest, ""),
    };
    let host = host.rsplit_once('@').map(|(_, h)| h).unwrap_or(host);
    format!("{scheme}://{host}{path}")
}

/// The values of the credential variables of every cloud, and of the user information and
/// query of `url`: what [`scrub`] takes out of a message.
fn secrets(url: &str) -> Vec<String> {
    let mut out: Vec<String> = std::env::vars()
        .filter(|(k, _)| {
            let k = k.to_ascii_uppercase();
            (k.starts_with("AWS_") || k.starts_with("AZURE_") || k.starts_with("GOOGLE_"))
                && ["SECRET", "KEY", "TOKEN", "PASSWORD", "CREDENTIAL", "SAS"]
                    .iter()
                    .any(|w| k.contains(w))
        })
        .map(|(_, v)| v)
        .collect();
    if let Some((_, rest)) = url.split_once("://") {
        if let Some(q) = rest.split_once('?').map(|(_, q)| q) {
            out.push(q.to_string());
            out.extend(
                q.split('&')
                    .filter_map(|kv| kv.split_once('='))
                    .map(|(_, v)| v.to_string()),
            );
        }
        let host = rest.split('/').next().unwrap_or("");
        if let Some((user, _)) = host.rsplit_once('@') {
            out.push(user.to_string());
            out.extend(user.split(':').map(str::to_string));
        }
    }
    out.retain(|s| s.len() >= 4);
    out.sort_by_key(|s| std::cmp::Reverse(s.len()));
    out
}

/// `msg` with every credential value of the environment and of `url` replaced by `***`.
pub fn scrub(msg: &str, url: &str) -> String {
    let mut m = msg.to_string();
    for s in secrets(url) {
        m = m.replace(&s, "***");
    }
    m
}

/// The runtime the client's requests run on: two worker threads (requests wait on the
/// network, not on a core).
fn runtime() -> std::io::Result<&'static tokio::runtime::Runtime> {
    static RT: OnceLock<Result<tokio::runtime::Runtime, String>> = OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("bagscope-net")
            .enable_all()
            .build()
            .map_err(|e| e.to_string())
    })
    .as_ref()
    .map_err(|e| std::io::Error::other(format!("cannot start the network runtime: {e}")))
}

/// Runs `fut` to completion on the runtime.
fn block_on<F: std::future::Future>(fut: F) -> std::io::Result<F::Output> {
    Ok(runtime()?.block_on(fut))
}

/// Retries: a failed request (an error status of 5xx or 429, a dropped connection, a
/// timeout) is tried again with backoff, at most [`retries`] times; then its error is final.
fn retry_config() -> object_store::RetryConfig {
    object_store::RetryConfig {
        backoff: object_store::BackoffConfig {
            init_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(5),
            base: 2.0,
        },
        max_retries: retries(),
        retry_timeout: Duration::from_secs(60),
    }
}

/// How many times a failed request is tried again: `BAGSCOPE_RETRIES`, else 3.
pub fn retries() -> usize {
    std::env::var("BAGSCOPE_RETRIES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3)
}

fn client_options(allow_http: bool) -> object_store::ClientOptions {
    object_store::ClientOptions::new()
        .with_allow_http(allow_http)
        .with_connect_timeout(Duration::from_secs(10))
        .with_timeout(Duration::from_secs(120))
}

/// An AWS shared-file profile's `key = value` lines (`~/.aws/credentials` `[name]`, or
/// `~/.aws/config` `[profile name]` / `[default]`).
fn aws_profile(file: &Path, section: &str) -> Vec<(String, String)> {
    let Ok(text) = std::fs::read_to_string(file) else {
        return Vec::new();
    };
    let mut inside = false;
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') && line.ends_with(']') {
            inside = line[1..line.len() - 1].trim() == section;
        } else if inside {
            if let Some((k, v)) = line.split_once('=') {
                out.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
            }
        }
    }
    out
}

/// An S3 client from the environment, completed from the shared AWS files of the profile
/// (`AWS_PROFILE`, else `default`) where the environment says nothing.
fn s3_builder(url: &str) -> object_store::aws::AmazonS3Builder {
    use object_store::aws::AmazonS3ConfigKey as K;
    let mut b = object_store::aws::AmazonS3Builder::from_env();
    let profile = std::env::var("AWS_PROFILE").unwrap_or_else(|_| "default".into());
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let creds = std::env::var_os("AWS_SHARED_CREDENTIALS_FILE")
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".aws/credentials")));
    let config = std::env::var_os("AWS_CONFIG_FILE")
        .map(PathBuf::from)
        .or_else(|| home.as_ref().map(|h| h.join(".aws/config")));
    let config_section = if profile == "default" {
        profile.clone()
    } else {
        format!("profile {profile}")
    };
    let mut from_files = Vec::new();
    if let Some(c) = config {
        from_files.extend(aws_profile(&c, &config_section));
    }
    if let Some(c) = creds {
        from_files.extend(aws_profile(&c, &profile));
    }
    for (k, v) in from_files {
        let (key, var) = match k.as_str() {
            "aws_access_key_id" => (K::AccessKeyId, "AWS_ACCESS_KEY_ID"),
            "aws_secret_access_key" => (K::SecretAccessKey, "AWS_SECRET_ACCESS_KEY"),
            "aws_session_token" => (K::Token, "AWS_SESSION_TOKEN"),
            "region" => (K::Region, "AWS_REGION"),
            "endpoint_url" => (K::Endpoint, "AWS_ENDPOINT_URL"),
            _ => continue,
        };
        if std::env::var_os(var).is_none() {
            b = b.with_config(key, v);
        }
    }
    // An endpoint on plain HTTP (MinIO, moto, a local gateway) is what the user asked for.
    let endpoint = b.get_config_value(&K::Endpoint).unwrap_or_default();
    let allow_http = endpoint.starts_with("http://");
    b.with_url(url)
        .with_retry(retry_config())
        .with_client_options(client_options(allow_http))
}

/// The store that holds `url`, and the object's path in it.
pub(crate) fn store_for(
    url: &str,
) -> std::io::Result<(Arc<dyn ObjectStore>, object_store::path::Path)> {
    let bad = |e: String| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("{}: {}", shown(url), scrub(&e, url)),
        )
    };
    let parsed = url::Url::parse(url).map_err(|e| bad(format!("not a URL ({e})")))?;
    // TLS is rustls on ring (Cargo.toml says why); reqwest is built without a provider of its
    // own and takes the process default, which is set once here (an error only says one is
    // set already: ours from an earlier store, or the embedding program's own).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let (scheme, path) = ObjectStoreScheme::parse(&parsed).map_err(|e| bad(e.to_string()))?;
    // Every store's builder (types of their own, no common trait) with our retries and client
    // options, built.
    macro_rules! built {
        ($builder:expr, $plain_http:expr) => {
            Arc::new(
                $builder
                    .with_retry(retry_config())
                    .with_client_options(client_options($plain_http))
                    .build()
                    .map_err(|e| bad(e.to_string()))?,
            )
        };
    }
    let store: Arc<dyn ObjectStore> = match scheme {
        ObjectStoreScheme::AmazonS3 => {
            Arc::new(s3_builder(url).build().map_err(|e| bad(e.to_string()))?)
        }
        ObjectStoreScheme::GoogleCloudStorage => built!(
            object_store::gcp::GoogleCloudStorageBuilder::from_env().with_url(url),
            false
        ),
        ObjectStoreScheme::MicrosoftAzure => built!(
            object_store::azure::MicrosoftAzureBuilder::from_env().with_url(url),
            false
        ),
        ObjectStoreScheme::Http => built!(
            object_store::http::HttpBuilder::new().with_url(&parsed[..url::Position::BeforePath]),
            parsed.scheme() == "http"
        ),
        _ => return Err(bad("not a remote location".into())),
    };
    Ok((store, path))
}

/// An object's size and version, as its store tells them.
#[derive(Debug, Clone)]
pub struct Head {
    /// Bytes.
    pub size: u64,
    /// The store's entity tag (changes whenever the object does), or the time of the last
    /// change where the server gives none.
    pub etag: String,
    /// Nanoseconds since the epoch of the last change.
    pub mtime_ns: u64,
}

/// The client's error as one line: its first line (an error page's HTML left out), scrubbed
/// of credentials, at most 300 characters.
fn reason(e: &object_store::Error, url: &str) -> String {
    let full = e.to_string();
    let line = full.split(['\n', '<']).next().unwrap_or("").trim();
    let line = line
        .trim_start_matches("Generic HTTP error: ")
        .trim_end_matches(':')
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let mut m = scrub(&line, url);
    if m.len() > 300 {
        let mut cut = 300;
        while !m.is_char_boundary(cut) {
            cut -= 1;
        }
        m.truncate(cut);
        m.push('…');
    }
    m
}

/// `e` as an I/O error: `what` (which may name the location) and the client's reason.
fn io_error(e: object_store::Error, url: &str, what: &str) -> std::io::Error {
    let kind = match &e {
        object_store::Error::NotFound { .. } => std::io::ErrorKind::NotFound,
        object_store::Error::PermissionDenied { .. }
        | object_store::Error::Unauthenticated { .. } => std::io::ErrorKind::PermissionDenied,
        _ => std::io::ErrorKind::Other,
    };
    let msg = match &e {
        object_store::Error::NotFound { .. } => "no such object".to_string(),
        _ => reason(&e, url),
    };
    let msg = if what.is_empty() {
        msg
    } else {
        format!("{what}: {msg}")
    };
    std::io::Error::new(kind, msg)
}

/// The size and version of the object at `url`.
pub fn head(url: &str) -> std::io::Result<Head> {
    let (store, path) = store_for(url)?;
    head_in(&*store, &path, url)
}

fn head_in(
    store: &dyn ObjectStore,
    path: &object_store::path::Path,
    url: &str,
) -> std::io::Result<Head> {
    // Said within an error that names the location already.
    let m = block_on(store.head(path))?.map_err(|e| io_error(e, url, ""))?;
    let mtime_ns = m.last_modified.timestamp_nanos_opt().unwrap_or(0).max(0) as u64;
    Ok(Head {
        size: m.size,
        etag: m.e_tag.unwrap_or_else(|| format!("mtime:{mtime_ns}")),
        mtime_ns,
    })
}

/// The objects under the prefix `url` (a "directory"), as full URLs with their heads, in
/// name order.
pub fn list(url: &str) -> std::io::Result<Vec<(String, Head)>> {
    use futures_util::TryStreamExt;
    let (store, path) = store_for(url)?;
    let base = url.trim_end_matches('/');
    let prefix_len = path.as_ref().len();
    let items: Vec<object_store::ObjectMeta> = block_on(store.list(Some(&path)).try_collect())?
        .map_err(|e| io_error(e, url, &format!("cannot list {}", shown(url))))?;
    let mut out: Vec<(String, Head)> = items
        .into_iter()
        .map(|m| {
            let rel = m.location.as_ref()[prefix_len..].trim_start_matches('/');
            let mtime_ns = m.last_modified.timestamp_nanos_opt().unwrap_or(0).max(0) as u64;
            (
                format!("{base}/{rel}"),
                Head {
                    size: m.size,
                    etag: m.e_tag.unwrap_or_else(|| format!("mtime:{mtime_ns}")),
                    mtime_ns,
                },
            )
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

/// The whole object at `url` (a `metadata.yaml`), in one request; more than `limit` bytes is
/// an error.
pub fn get_all(url: &str, limit: u64) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    fetch_into(url, &mut out, limit)?;
    Ok(out)
}

/// Streams the whole object at `url` into the file `dest` (a storage file fetched whole), in
/// one request.
pub fn download(url: &str, dest: &Path) -> std::io::Result<u64> {
    let mut f = std::io::BufWriter::new(std::fs::File::create(dest)?);
    let n = fetch_into(url, &mut f, u64::MAX)?;
    std::io::Write::flush(&mut f)?;
    Ok(n)
}

fn fetch_into(url: &str, out: &mut dyn std::io::Write, limit: u64) -> std::io::Result<u64> {
    use futures_util::StreamExt;
    let (store, path) = store_for(url)?;
    block_on(async {
        let r = store.get(&path).await.map_err(|e| io_error(e, url, ""))?;
        let size = r.meta.size;
        if size > limit {
            return Err(std::io::Error::other(format!(
                "{} is {size} bytes, more than the {limit} expected",
                shown(url)
            )));
        }
        let mut stream = r.into_stream();
        let mut n = 0u64;
        while let Some(b) = stream.next().await {
            let b = b.map_err(|e| io_error(e, url, &format!("cannot read {}", shown(url))))?;
            n += b.len() as u64;
            out.write_all(&b)?;
        }
        if n != size {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!("{}: {n} of {size} bytes arrived", shown(url)),
            ));
        }
        Ok(n)
    })?
}

/// The least recently used blocks of a remote file, and where the last read ended.
#[derive(Default)]
struct Blocks {
    map: HashMap<u64, (bytes::Bytes, u64)>,
    tick: u64,
    /// The block after the last read, and the read-ahead earned by sequential reads.
    next: u64,
    ahead: u64,
}

/// A remote object read by ranges, as a `Source`.
pub struct RemoteFile {
    url: String,
    store: Arc<dyn ObjectStore>,
    path: object_store::path::Path,
    /// Size and version when opened; every read asks for that version's bytes.
    pub head: Head,
    blocks: Mutex<Blocks>,
    requests: AtomicU64,
    fetched: AtomicU64,
}

impl std::fmt::Debug for RemoteFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RemoteFile({})", shown(&self.url))
    }
}

impl RemoteFile {
    /// Opens the object at `url`: one request for its size and version.
    pub fn open(url: &str) -> std::io::Result<RemoteFile> {
        let (store, path) = store_for(url)?;
        let head = head_in(&*store, &path, url)?;
        Ok(RemoteFile::with(url, store, path, head, 1))
    }

    /// Opens the object at `url` whose size and version a listing already gave: no request.
    pub fn open_listed(url: &str, head: Head) -> std::io::Result<RemoteFile> {
        let (store, path) = store_for(url)?;
        Ok(RemoteFile::with(url, store, path, head, 0))
    }

    fn with(
        url: &str,
        store: Arc<dyn ObjectStore>,
        path: object_store::path::Path,
        head: Head,
        requests: u64,
    ) -> RemoteFile {
        RemoteFile {
            url: url.to_string(),
            store,
            path,
            head,
            blocks: Mutex::new(Blocks {
                next: u64::MAX,
                ..Blocks::default()
            }),
            requests: AtomicU64::new(requests),
            fetched: AtomicU64::new(0),
        }
    }

    /// The location as it may be shown.
    pub fn shown(&self) -> String {
        shown(&self.url)
    }

    /// Requests made so far (the open's included), and bytes fetched.
    pub fn stats(&self) -> (u64, u64) {
        (
            self.requests.load(Ordering::Relaxed),
            self.fetched.load(Ordering::Relaxed),
        )
    }

    /// Fetches `ranges` (one request each, side by side), checking that every byte asked for
    /// arrived: a short answer is an error, never a short read taken for the end of the file.
    fn fetch(&self, ranges: &[Range<u64>]) -> std::io::Result<Vec<bytes::Bytes>> {
        self.requests
            .fetch_add(ranges.len() as u64, Ordering::Relaxed);
        let what = || {
            let r = &ranges[0];
            format!(
                "cannot read bytes {}..{} of {}",
                r.start,
                r.end,
                self.shown()
            )
        };
        let got = if ranges.len() == 1 {
            vec![
                block_on(self.store.get_range(&self.path, ranges[0].clone()))?
                    .map_err(|e| io_error(e, &self.url, &what()))?,
            ]
        } else {
            block_on(self.store.get_ranges(&self.path, ranges))?
                .map_err(|e| io_error(e, &self.url, &what()))?
        };
        for (r, b) in ranges.iter().zip(&got) {
            if b.len() as u64 != r.end - r.start {
                return Err(std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    format!(
                        "{}: asked for bytes {}..{}, {} arrived (did the object change?)",
                        self.shown(),
                        r.start,
                        r.end,
                        b.len()
                    ),
                ));
            }
            self.fetched.fetch_add(b.len() as u64, Ordering::Relaxed);
        }
        Ok(got)
    }

    /// Up to `len` bytes at `pos` into `buf` (fewer at the end of the object).
    pub fn read_at_into(&self, pos: u64, len: usize, buf: &mut Vec<u8>) -> std::io::Result<()> {
        buf.clear();
        let size = self.head.size;
        let end = pos.saturating_add(len as u64).min(size);
        if pos >= end {
            return Ok(());
        }
        let first = pos / BLOCK;
        let last = (end - 1) / BLOCK;
        // A large read (a chunk) is fetched as asked, not cached and not read ahead of: what
        // reads chunks reads them ahead itself, and keeps them decompressed.
        if last - first >= DIRECT_BLOCKS {
            let b = self.fetch(std::slice::from_ref(&(pos..end)))?;
            buf.extend_from_slice(&b[0]);
            return Ok(());
        }
        let n_blocks = size.div_ceil(BLOCK);
        // What is missing, and how far past it to read ahead.
        let missing: Vec<u64> = {
            let mut g = self.blocks.lock().unwrap_or_else(|p| p.into_inner());
            let seq = first == g.next || first.checked_add(1) == Some(g.next);
            g.ahead = if seq {
                (g.ahead * 2).clamp(1, MAX_AHEAD)
            } else {
                0
            };
            g.next = last + 1;
            let ahead = g.ahead;
            let mut m: Vec<u64> = (first..=last).filter(|b| !g.map.contains_key(b)).collect();
            // The end of a file holds the index of a ROS 1 bag and the summary of an MCAP:
            // the first read there takes the last [`TAIL_BLOCKS`] blocks in one request.
            if m.last() == Some(&(n_blocks - 1)) {
                let mut before: Vec<u64> = (n_blocks.saturating_sub(TAIL_BLOCKS)..first)
                    .filter(|b| !g.map.contains_key(b))
                    .collect();
                before.append(&mut m);
                m = before;
            }
            if !m.is_empty() {
                let mut b = last + 1;
                while b < n_blocks && b <= last + ahead && !g.map.contains_key(&b) {
                    m.push(b);
                    b += 1;
                }
            }
            m
        };
        let mut fetched: Vec<(u64, bytes::Bytes)> = Vec::new();
        if !missing.is_empty() {
            // Runs of consecutive blocks, one request each.
            let mut runs: Vec<Range<u64>> = Vec::new();
            for &b in &missing {
                match runs.last_mut() {
                    Some(r) if r.end == b => r.end = b + 1,
                    _ => runs.push(b..b + 1),
                }
            }
            let ranges: Vec<Range<u64>> = runs
                .iter()
                .map(|r| r.start * BLOCK..(r.end * BLOCK).min(size))
                .collect();
            let got = self.fetch(&ranges)?;
            for (r, bytes) in runs.iter().zip(got) {
                for b in r.clone() {
                    let a = ((b - r.start) * BLOCK) as usize;
                    let z = (a + BLOCK as usize).min(bytes.len());
                    fetched.push((b, bytes.slice(a..z)));
                }
            }
        }
        let mut g = self.blocks.lock().unwrap_or_else(|p| p.into_inner());
        g.tick += 1;
        let tick = g.tick;
        for (b, bytes) in fetched.iter() {
            g.map.insert(*b, (bytes.clone(), tick));
        }
        buf.reserve((end - pos) as usize);
        for b in first..=last {
            let block = match g.map.get_mut(&b) {
                Some(e) => {
                    e.1 = tick;
                    e.0.clone()
                }
                // Evicted by another reader in between: this read's own copy.
                None => match fetched.iter().find(|(k, _)| *k == b) {
                    Some((_, bytes)) => bytes.clone(),
                    None => {
                        drop(g);
                        return self.read_at_into(pos, len, buf);
                    }
                },
            };
            let bs = b * BLOCK;
            let a = pos.max(bs) - bs;
            let z = end.min(bs + block.len() as u64) - bs;
            buf.extend_from_slice(&block[a as usize..z as usize]);
        }
        while g.map.len() > CACHE_BLOCKS {
            let Some(old) = g.map.iter().min_by_key(|(_, v)| v.1).map(|(k, _)| *k) else {
                break;
            };
            g.map.remove(&old);
        }
        Ok(())
    }
}
