//! The map's tiles: where they come from ([`TileSource`]: OpenStreetMap, any `{z}/{x}/{y}` URL,
//! a folder of tiles, a `.pmtiles` archive, or none), fetched and decoded by worker threads
//! (never the UI thread) with a User-Agent naming bagscope and a bounded disk cache, as
//! OpenStreetMap's tile usage policy asks, and kept as textures (at most [`MAX_TEXTURES`]).
//! A server that stalls, refuses or sends garbage costs its tiles only: each failure is
//! counted and the last one said, and a source that fails every tile is left alone for a while.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// OpenStreetMap's standard tiles.
pub const OSM: &str = "https://tile.openstreetmap.org/{z}/{x}/{y}.png";
/// What OpenStreetMap's tiles ask to be credited as.
pub const OSM_ATTRIBUTION: &str = "© OpenStreetMap contributors";
/// The User-Agent the tile requests send (OSM's policy: one that names the application).
pub const USER_AGENT: &str = concat!(
    "bagscope/",
    env!("CARGO_PKG_VERSION"),
    " (robot recording viewer; +https://github.com/bagscope/bagscope)"
);
/// Textures kept (256×256 RGBA: 256 KiB each).
pub const MAX_TEXTURES: usize = 384;
/// The disk cache of fetched tiles, per source, at most this many bytes.
pub const DISK_CACHE_BYTES: u64 = 256 << 20;
/// Worker threads fetching and decoding.
const FETCHERS: usize = 4;
/// A request waiting longer than this many newer ones is dropped (the view moved on).
const MAX_QUEUED: usize = 256;
/// How long one tile's fetch may take.
#[cfg(feature = "remote")]
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// Where tiles come from, as a layout writes it: `osm`, `none`, an `http(s)://…{z}/{x}/{y}…`
/// template, `file:///dir/{z}/{x}/{y}.png`, or a path ending `.pmtiles`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TileSource {
    /// A URL template.
    Url(String),
    /// A local template (a folder of tiles).
    Folder(String),
    /// A PMTiles archive.
    PmTiles(PathBuf),
    /// No tiles: a plain grid.
    None,
}

impl TileSource {
    /// The source a layout's text names.
    pub fn parse(s: &str) -> Result<TileSource, String> {
        let s = s.trim();
        if s.is_empty() || s.eq_ignore_ascii_case("osm") || s.eq_ignore_ascii_case("openstreetmap")
        {
            return Ok(TileSource::Url(OSM.into()));
        }
        if s.eq_ignore_ascii_case("none") {
            return Ok(TileSource::None);
        }
        let path = s.strip_prefix("file://").unwrap_or(s);
        if path.ends_with(".pmtiles") {
            return Ok(TileSource::PmTiles(PathBuf::from(path)));
        }
        if !(s.contains("{z}") && s.contains("{x}") && s.contains("{y}")) {
            return Err(format!(
                "{s:?}: a tile template has {{z}}, {{x}} and {{y}} (or use osm, none, or a .pmtiles file)"
            ));
        }
        if s.starts_with("http://") || s.starts_with("https://") {
            Ok(TileSource::Url(s.into()))
        } else {
            Ok(TileSource::Folder(path.into()))
        }
    }

    /// The credit to show under the map.
    pub fn attribution(&self) -> &'static str {
        match self {
            TileSource::Url(u) if u.contains("openstreetmap.org") => OSM_ATTRIBUTION,
            _ => "",
        }
    }
}

/// `{z}`, `{x}`, `{y}` of a template filled in.
fn fill(template: &str, (z, x, y): Key) -> String {
    template
        .replace("{z}", &z.to_string())
        .replace("{x}", &x.to_string())
        .replace("{y}", &y.to_string())
}

/// A tile's name: zoom, x, y.
pub type Key = (u8, u32, u32);

/// Why a tile is not here.
enum Miss {
    /// The source has no such tile (a 404, a file or archive entry that is not there): normal
    /// at the edges of what a folder or an archive covers, not said.
    Absent,
    /// The source failed (unreachable, refused, garbage): counted and said.
    Failed(String),
}

/// A tile decoded, or why not.
type Fetched = (Key, Result<egui::ColorImage, Miss>);

/// What a tile slot holds.
enum Slot {
    /// Asked for.
    Waiting,
    /// Drawn from this texture.
    Ready(egui::TextureHandle),
    /// Could not be had (not asked again until the source is reloaded).
    Failed,
}

/// Requests shared by the UI and the fetchers: newest first.
struct Queue {
    wanted: Mutex<(VecDeque<Key>, bool)>,
    ready: Condvar,
}

/// A source's tiles: textures, the fetchers and what went wrong.
pub struct TileLayer {
    pub source: TileSource,
    slots: HashMap<Key, (Slot, u64)>,
    queue: Arc<Queue>,
    results: Receiver<Fetched>,
    /// Frame counter, for least-recently-used eviction.
    frame: u64,
    /// Tiles that could not be had, and the last reason.
    pub failed: usize,
    pub last_error: Option<String>,
    /// Tiles that came.
    pub loaded: usize,
    /// Every tile asked so far failed (at least 8): the source is given up on until this time.
    resting_until: Option<Instant>,
    /// The deepest zoom the source has (OpenStreetMap's 19; a folder's or an archive's own,
    /// found by the fetchers); deeper views stretch its tiles.
    max_zoom: Arc<AtomicU8>,
}

impl Drop for TileLayer {
    fn drop(&mut self) {
        // The fetchers end when they see the queue closed.
        lock(&self.queue.wanted).1 = true;
        self.queue.ready.notify_all();
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl TileLayer {
    /// A layer on `source`, its fetchers started (none for [`TileSource::None`]).
    pub fn new(source: TileSource, ctx: &egui::Context) -> TileLayer {
        let queue = Arc::new(Queue {
            wanted: Mutex::new((VecDeque::new(), false)),
            ready: Condvar::new(),
        });
        let (tx, results) = channel();
        let mut last_error = None;
        let max_zoom = Arc::new(AtomicU8::new(19));
        if source != TileSource::None {
            for i in 0..FETCHERS {
                let (q, tx, src, ctx) =
                    (Arc::clone(&queue), tx.clone(), source.clone(), ctx.clone());
                let mz = (i == 0).then(|| Arc::clone(&max_zoom));
                let started = std::thread::Builder::new()
                    .name(format!("map-tiles-{i}"))
                    .spawn(move || fetcher(&q, &tx, &src, &ctx, mz.as_deref()));
                if let Err(e) = started {
                    last_error = Some(format!("cannot start a tile fetcher: {e}"));
                }
            }
        }
        TileLayer {
            source,
            slots: HashMap::new(),
            queue,
            results,
            frame: 0,
            failed: 0,
            last_error,
            loaded: 0,
            resting_until: None,
            max_zoom,
        }
    }

    /// The deepest zoom the source has.
    pub fn max_zoom(&self) -> u8 {
        self.max_zoom.load(Ordering::Relaxed)
    }

    /// Takes what the fetchers made (at most `budget` uploads a frame, so a burst of tiles does
    /// not cost one frame its budget) and starts a new frame for the LRU.
    pub fn poll(&mut self, ctx: &egui::Context, budget: usize) {
        self.frame += 1;
        for _ in 0..budget {
            let Ok((key, r)) = self.results.try_recv() else {
                break;
            };
            let slot = match r {
                Ok(img) => {
                    self.loaded += 1;
                    let name = format!("tile-{}-{}-{}", key.0, key.1, key.2);
                    Slot::Ready(ctx.load_texture(name, img, egui::TextureOptions::LINEAR))
                }
                Err(Miss::Absent) => Slot::Failed,
                Err(Miss::Failed(e)) => {
                    self.failed += 1;
                    self.last_error = Some(format!("tile {}/{}/{}: {e}", key.0, key.1, key.2));
                    Slot::Failed
                }
            };
            self.slots.insert(key, (slot, self.frame));
        }
        if self.loaded == 0 && self.failed >= 8 && self.resting_until.is_none() {
            // Nothing reachable: the grid alone for a minute, not a stream of requests.
            self.resting_until = Some(Instant::now() + Duration::from_secs(60));
        }
        if self.resting_until.is_some_and(|t| Instant::now() >= t) {
            self.resting_until = None;
            self.failed = 0;
            self.slots.retain(|_, (s, _)| !matches!(s, Slot::Failed));
        }
        let ready = self
            .slots
            .values()
            .filter(|(s, _)| matches!(s, Slot::Ready(_)))
            .count();
        if ready > MAX_TEXTURES {
            let mut by_age: Vec<(u64, Key)> = self
                .slots
                .iter()
                .filter(|(_, (s, _))| matches!(s, Slot::Ready(_)))
                .map(|(k, (_, f))| (*f, *k))
                .collect();
            by_age.sort_unstable();
            for (_, k) in by_age.into_iter().take(ready - MAX_TEXTURES) {
                self.slots.remove(&k);
            }
        }
    }

    /// Whether the source is given up on for now (every tile failed).
    pub fn resting(&self) -> bool {
        self.resting_until.is_some()
    }

    /// The texture of `key` if it is here; asks for it otherwise.
    pub fn get(&mut self, key: Key) -> Option<egui::TextureId> {
        if self.source == TileSource::None || self.resting() {
            return None;
        }
        let frame = self.frame;
        match self.slots.get_mut(&key) {
            Some((Slot::Ready(t), f)) => {
                *f = frame;
                Some(t.id())
            }
            Some(_) => None,
            None => {
                self.slots.insert(key, (Slot::Waiting, frame));
                let mut w = lock(&self.queue.wanted);
                w.0.push_front(key);
                // The oldest requests go (the view moved on): asked again when next seen.
                while w.0.len() > MAX_QUEUED {
                    if let Some(old) = w.0.pop_back() {
                        self.slots.remove(&old);
                    }
                }
                drop(w);
                self.queue.ready.notify_one();
                None
            }
        }
    }

    /// The texture of `key` only if it is here (no request).
    pub fn cached(&self, key: Key) -> Option<egui::TextureId> {
        match self.slots.get(&key) {
            Some((Slot::Ready(t), _)) => Some(t.id()),
            _ => None,
        }
    }
}

/// The deepest zoom of a folder template (its deepest numeric folder where `{z}` is), or of
/// an archive.
fn source_max_zoom(get: &mut Getter) -> Option<u8> {
    match &get.src {
        TileSource::Folder(t) => {
            let (before, _) = t.split_once("{z}")?;
            std::fs::read_dir(before)
                .ok()?
                .flatten()
                .filter_map(|e| e.file_name().to_str()?.parse::<u8>().ok())
                .max()
        }
        TileSource::PmTiles(p) => {
            let pm = get
                .pm
                .get_or_insert_with(|| super::pmtiles::PmTiles::open(p));
            pm.as_ref().ok().map(|pm| pm.max_zoom)
        }
        _ => None,
    }
}

/// A fetcher: takes the newest request, gets and decodes the tile, sends it. The first one
/// also finds the source's deepest zoom.
fn fetcher(
    q: &Queue,
    tx: &Sender<Fetched>,
    src: &TileSource,
    ctx: &egui::Context,
    max_zoom: Option<&AtomicU8>,
) {
    let mut get = Getter::new(src);
    if let Some(mz) = max_zoom {
        if let Some(z) = source_max_zoom(&mut get) {
            mz.store(z.min(24), Ordering::Relaxed);
            ctx.request_repaint();
        }
    }
    loop {
        let key = {
            let mut w = lock(&q.wanted);
            loop {
                if w.1 {
                    return;
                }
                if let Some(k) = w.0.pop_front() {
                    break k;
                }
                w = q.ready.wait(w).unwrap_or_else(PoisonError::into_inner);
            }
        };
        let r = get
            .bytes(key)
            .and_then(|b| decode(&b).map_err(Miss::Failed));
        if tx.send((key, r)).is_err() {
            return;
        }
        ctx.request_repaint();
    }
}

/// A tile image's bytes decoded (PNG, JPEG), at most 1024 pixels a side.
fn decode(b: &[u8]) -> Result<egui::ColorImage, String> {
    let img = image::load_from_memory(b).map_err(|e| format!("not an image: {e}"))?;
    if img.width() > 1024 || img.height() > 1024 {
        return Err(format!("a {}×{} tile", img.width(), img.height()));
    }
    let rgba = img.to_rgba8();
    Ok(egui::ColorImage::from_rgba_unmultiplied(
        [rgba.width() as usize, rgba.height() as usize],
        rgba.as_raw(),
    ))
}

/// How one fetcher gets bytes from its source.
struct Getter {
    src: TileSource,
    pm: Option<Result<super::pmtiles::PmTiles, String>>,
    #[cfg(feature = "remote")]
    net: Option<net::Net>,
    cache: Option<PathBuf>,
    /// When the disk cache was last trimmed (at most once a minute, so a burst of tiles does
    /// not walk the folder each time).
    trimmed: Option<Instant>,
}

impl Getter {
    fn new(src: &TileSource) -> Getter {
        let cache = match src {
            TileSource::Url(u) => Some(
                bagscope_ops::demo::cache_dir()
                    .join("tiles")
                    .join(format!("{:x}", md5::compute(u))),
            ),
            _ => None,
        };
        Getter {
            src: src.clone(),
            pm: None,
            #[cfg(feature = "remote")]
            net: None,
            cache,
            trimmed: None,
        }
    }

    fn bytes(&mut self, key: Key) -> Result<Vec<u8>, Miss> {
        match &self.src {
            TileSource::None => Err(Miss::Absent),
            TileSource::Folder(t) => {
                let p = fill(t, key);
                std::fs::read(&p).map_err(|e| match e.kind() {
                    std::io::ErrorKind::NotFound => Miss::Absent,
                    _ => Miss::Failed(format!("{p}: {e}")),
                })
            }
            TileSource::PmTiles(p) => {
                let pm = self
                    .pm
                    .get_or_insert_with(|| super::pmtiles::PmTiles::open(p));
                match pm {
                    Ok(pm) => pm
                        .tile(key.0, key.1, key.2)
                        .map_err(Miss::Failed)?
                        .ok_or(Miss::Absent),
                    Err(e) => Err(Miss::Failed(e.clone())),
                }
            }
            TileSource::Url(t) => {
                let url = fill(t, key);
                let file = self
                    .cache
                    .as_ref()
                    .map(|d| d.join(format!("{}/{}/{}", key.0, key.1, key.2)));
                if let Some(b) = file.as_ref().and_then(|f| std::fs::read(f).ok()) {
                    return Ok(b);
                }
                let b = self.fetch(&url)?;
                if let (Some(f), Some(dir)) = (file, self.cache.clone()) {
                    // Only what decodes is kept; the cache is trimmed now and then.
                    if decode(&b).is_ok() {
                        let _ = bagscope_reader::storage::write_atomically(&f, &b);
                        if self
                            .trimmed
                            .is_none_or(|t| t.elapsed() > Duration::from_secs(60))
                        {
                            self.trimmed = Some(Instant::now());
                            trim_now(&dir, DISK_CACHE_BYTES);
                        }
                    }
                }
                Ok(b)
            }
        }
    }

    #[cfg(feature = "remote")]
    fn fetch(&mut self, url: &str) -> Result<Vec<u8>, Miss> {
        if self.net.is_none() {
            self.net = Some(net::Net::new().map_err(Miss::Failed)?);
        }
        match &self.net {
            Some(n) => n.get(url),
            None => Err(Miss::Failed("no HTTP client".into())),
        }
    }

    #[cfg(not(feature = "remote"))]
    fn fetch(&mut self, _url: &str) -> Result<Vec<u8>, Miss> {
        Err(Miss::Failed(
            "this build of bagscope has no network support (feature `remote`)".into(),
        ))
    }
}

#[cfg(feature = "remote")]
mod net {
    //! HTTP(S) with reqwest (the client the object-storage reader uses) on a runtime of the
    //! fetcher's own.
    use super::{Miss, FETCH_TIMEOUT, USER_AGENT};

    pub struct Net {
        rt: tokio::runtime::Runtime,
        client: reqwest::Client,
    }

    impl Net {
        pub fn new() -> Result<Net, String> {
            // TLS is rustls on ring, installed as the process default once (see the reader's
            // storage::remote).
            let _ = rustls::crypto::ring::default_provider().install_default();
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| format!("cannot start the network runtime: {e}"))?;
            let client = reqwest::Client::builder()
                .user_agent(USER_AGENT)
                .timeout(FETCH_TIMEOUT)
                .connect_timeout(std::time::Duration::from_secs(5))
                .build()
                .map_err(|e| format!("cannot make an HTTP client: {e}"))?;
            Ok(Net { rt, client })
        }

        pub fn get(&self, url: &str) -> Result<Vec<u8>, Miss> {
            let failed = |e: String| Miss::Failed(format!("{url}: {e}"));
            self.rt.block_on(async {
                let r = self
                    .client
                    .get(url)
                    .send()
                    .await
                    .map_err(|e| failed(e.to_string()))?;
                let status = r.status();
                if status == reqwest::StatusCode::NOT_FOUND {
                    return Err(Miss::Absent);
                }
                if !status.is_success() {
                    return Err(failed(format!("HTTP {status}")));
                }
                let b = r.bytes().await.map_err(|e| failed(e.to_string()))?;
                if b.len() > 4 << 20 {
                    return Err(failed(format!("a {}-byte tile", b.len())));
                }
                Ok(b.to_vec())
            })
        }
    }
}

/// Keeps `dir` under `limit` bytes: the oldest files go first.
pub fn trim_now(dir: &Path, limit: u64) {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            match e.metadata() {
                Ok(m) if m.is_dir() => stack.push(e.path()),
                Ok(m) => files.push((
                    m.modified().unwrap_or(std::time::SystemTime::UNIX_EPOCH),
                    m.len(),
                    e.path(),
                )),
                Err(_) => {}
            }
        }
    }
    let mut total: u64 = files.iter().map(|f| f.1).sum();
    files.sort();
    for (_, len, p) in files {
        if total <= limit {
            break;
        }
        if std::fs::remove_file(&p).is_ok() {
            total -= len;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_as_layouts_write_them() {
        assert_eq!(TileSource::parse("osm"), Ok(TileSource::Url(OSM.into())));
        assert_eq!(TileSource::parse("none"), Ok(TileSource::None));
        assert_eq!(
            TileSource::parse("/maps/area.pmtiles"),
            Ok(TileSource::PmTiles("/maps/area.pmtiles".into()))
        );
        assert_eq!(
            TileSource::parse("file:///tiles/{z}/{x}/{y}.png"),
            Ok(TileSource::Folder("/tiles/{z}/{x}/{y}.png".into()))
        );
        assert!(TileSource::parse("http://x/tiles").is_err());
        assert_eq!(fill("a/{z}/{x}/{y}.png", (3, 4, 5)), "a/3/4/5.png");
        assert!(USER_AGENT.starts_with("bagscope/"));
    }

    #[test]
    fn the_disk_cache_keeps_its_bound() {
        let d = std::env::temp_dir().join(format!("bagscope-tiles-trim-{}", std::process::id()));
        for i in 0..10 {
            let f = d.join(format!("1/{i}/0"));
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(&f, vec![0u8; 1000]).unwrap();
        }
        trim_now(&d, 4500);
        let left: u64 = (0..10)
            .filter_map(|i| std::fs::metadata(d.join(format!("1/{i}/0"))).ok())
            .map(|m| m.len())
            .sum();
        assert!((3000..=4500).contains(&left), "{left}");
        let _ = std::fs::remove_dir_all(&d);
    }
}
