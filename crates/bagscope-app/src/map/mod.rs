//! Map panels: windows that draw GPS tracks (`sensor_msgs/NavSatFix`, `gps_common/GPSFix`,
//! `foxglove.LocationFix`, or two paths of any topic) and `foxglove.GeoJSON` shapes on map
//! tiles, with the position at the playhead, its accuracy ellipse, hover and click-to-seek.
//! Each topic's whole track is read once on a worker ([`thin::Prepared`], thinned per zoom),
//! the tiles are fetched on theirs ([`tiles`]); the UI thread only draws.

mod pmtiles;
pub mod thin;
pub mod tiles;
pub mod view;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use egui::Color32;

use self::thin::{ColourBy, Prepared};
use self::tiles::{TileLayer, TileSource};
use super::job::Job;
use super::{Cmd, Doc};
use bagscope_ops::spatial::geo::shapes::{read_geojson, GeoJsonMessages};
use bagscope_ops::spatial::geo::{read_track, FixKind, TrackSource};

/// A panel's settings, kept with the layout.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Settings {
    /// Fix and GeoJSON topics, or `lat_path, lon_path` pairs, drawn in order.
    pub topics: Vec<String>,
    /// Where tiles come from: `osm`, `none`, a `{z}/{x}/{y}` URL, `file://…`, a `.pmtiles`.
    pub tiles: String,
    /// What the tracks are coloured by.
    pub colour_by: ColourBy,
    /// The view follows the first track's position at the playhead.
    pub follow: bool,
    /// The view's centre (latitude, longitude); `None`: fitted to the tracks.
    pub center: Option<(f64, f64)>,
    /// The view's zoom (0: the world in 256 pixels); `None`: fitted.
    pub zoom: Option<f64>,
    /// Colours by topic (`#rrggbb`), where not the palette's.
    pub colours: BTreeMap<String, String>,
    /// Every topic the map draws is added when the recording opens, but `disabled` ones (a
    /// Lichtblick layout's Map panel, which draws all fix topics); also when `topics` is empty.
    pub all_topics: bool,
    /// Topics not drawn (a Lichtblick layout's disabled topics).
    pub disabled: Vec<String>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            topics: Vec::new(),
            tiles: "osm".into(),
            colour_by: ColourBy::Topic,
            follow: false,
            center: None,
            zoom: None,
            colours: BTreeMap::new(),
            all_topics: false,
            disabled: Vec::new(),
        }
    }
}

/// Tracks' colours, one a topic in order.
pub const PALETTE: [Color32; 6] = [
    Color32::from_rgb(230, 57, 70),
    Color32::from_rgb(29, 120, 220),
    Color32::from_rgb(42, 157, 80),
    Color32::from_rgb(240, 140, 0),
    Color32::from_rgb(150, 80, 200),
    Color32::from_rgb(0, 160, 170),
];

/// A colour as layouts write it (`#rrggbb`, `#rgb`, a CSS name), as GeoJSON styles are read.
pub fn parse_hex(s: &str) -> Option<Color32> {
    let [r, g, b, a] = bagscope_ops::spatial::geo::shapes::css_colour(s, 1.0)?;
    Some(Color32::from_rgba_unmultiplied(r, g, b, a))
}

/// One topic of a panel: its track or shapes, being read or read.
pub struct Layer {
    /// As the settings name it.
    pub name: String,
    pub colour: Color32,
    /// A track, read.
    pub track: Option<Arc<Prepared>>,
    /// GeoJSON messages, read.
    pub shapes: Option<Arc<GeoJsonMessages>>,
    /// Why it could not be read.
    pub error: Option<String>,
    /// What its reading left out or could not parse, said in the panel (made on the worker).
    pub note: Option<String>,
    job: Option<Job<Result<Loaded, String>>>,
    /// The colouring it was prepared with.
    colour_by: ColourBy,
}

/// What a layer's worker reads.
enum Loaded {
    Track(Arc<Prepared>, Option<String>),
    Shapes(Arc<GeoJsonMessages>, Option<String>),
}

/// What a track's reading left out, and why its colouring failed, in a line or two.
fn track_note(name: &str, p: &Prepared) -> Option<String> {
    let skipped = p.track.summary_of_skipped();
    let mut lines = Vec::new();
    if !skipped.is_empty() {
        lines.push(format!("{name}: left out {skipped}"));
    }
    if let Some(e) = &p.colour_error {
        lines.push(format!("colour: {e}"));
    }
    (!lines.is_empty()).then(|| lines.join("\n"))
}

/// How many of a GeoJSON topic's messages do not parse, and the first one's time and why.
fn shapes_note(name: &str, m: &GeoJsonMessages) -> Option<String> {
    let mut bad = m
        .iter()
        .filter_map(|(t, r)| r.as_ref().err().map(|e| (t, e)));
    let (t, e) = bad.next()?;
    let n = 1 + bad.count();
    let what = if n == 1 {
        "1 message does not parse".to_string()
    } else {
        format!("{n} messages do not parse")
    };
    Some(format!(
        "{name}: {what}; the first at {}: {e}",
        bagscope_ops::timefmt::date(*t)
    ))
}

/// The view: centre on the world square and zoom.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct View {
    pub center: [f64; 2],
    pub zoom: f64,
}

/// An open map panel.
pub struct MapPanel {
    pub id: u64,
    pub open: bool,
    pub settings: Settings,
    pub layers: Vec<Layer>,
    /// `None` until fitted to the tracks (or taken from the settings).
    pub view: Option<View>,
    /// The tile source's text being edited, and why it does not parse.
    pub tiles_edit: String,
    pub tiles_error: Option<String>,
    /// The `lat, lon` paths being typed.
    pub paths_edit: String,
    /// The colouring expression being typed.
    pub expr_edit: String,
    /// The last frame's time drawing (ms), for the figures.
    pub frame_ms: f32,
    /// Where the last frame drew the map (screen rectangle and view).
    pub last_frame: Option<view::Frame>,
    /// The recording's map topics were added (once, for a panel of a layout that names none).
    filled: bool,
}

/// Every map panel and the tile layers they share (one a source).
#[derive(Default)]
pub struct MapState {
    pub panels: Vec<MapPanel>,
    pub tiles: HashMap<String, TileLayer>,
    next_id: u64,
}

impl MapState {
    /// Opens a panel with `settings`.
    pub fn open_with(&mut self, settings: Settings) {
        self.next_id += 1;
        let tiles_edit = settings.tiles.clone();
        // A layout's tile source that does not parse is said (the grid is drawn).
        let tiles_error = TileSource::parse(&tiles_edit).err();
        let filled = !(settings.all_topics || settings.topics.is_empty());
        let view = match (settings.center, settings.zoom) {
            (Some((lat, lon)), Some(zoom)) => Some(View {
                center: bagscope_ops::spatial::geo::mercator::world(lat, lon),
                zoom,
            }),
            _ => None,
        };
        self.panels.push(MapPanel {
            id: self.next_id,
            open: true,
            settings,
            layers: Vec::new(),
            view,
            tiles_edit,
            tiles_error,
            paths_edit: String::new(),
            expr_edit: String::new(),
            frame_ms: 0.0,
            last_frame: None,
            filled,
        });
    }

    /// The settings of every panel, its view included.
    pub fn settings(&self) -> Vec<Settings> {
        self.panels
            .iter()
            .map(|p| {
                let mut s = p.settings.clone();
                if let Some(v) = p.view {
                    let (lat, lon) = bagscope_ops::spatial::geo::mercator::lat_lon(v.center);
                    s.center = Some((lat, lon));
                    s.zoom = Some(v.zoom);
                }
                s
            })
            .collect()
    }
}

/// Opens a map panel on topic `ti`, or on every map topic of the recording.
pub fn open(d: &mut Doc, ti: Option<usize>) {
    let topics = match ti.and_then(|i| d.rec.bag.summary().topics.get(i)) {
        Some(t) => vec![t.name.clone()],
        None => d.rec.map_topics.clone(),
    };
    d.map.open_with(Settings {
        topics,
        ..Settings::default()
    });
}

/// Whether the recording has a topic the map draws.
pub fn has_map_topics(d: &Doc) -> bool {
    !d.rec.map_topics.is_empty()
}

/// Starts reading what a layer needs.
fn start_layer(
    d: &Doc,
    name: &str,
    by: &ColourBy,
    ctx: &egui::Context,
) -> Job<Result<Loaded, String>> {
    let bag = d.rec.bag.clone();
    let name = name.to_string();
    let by = by.clone();
    let kind = d
        .rec
        .bag
        .summary()
        .topic(&name)
        .and_then(|t| FixKind::of(&t.datatype));
    let r = Job::spawn("map-layer", 1, ctx, move |h| {
        let threads = bag.options().threads();
        if kind == Some(FixKind::GeoJson) {
            h.send(
                read_geojson(&bag, &name, h.cancel_flag())
                    .map(|m| {
                        let note = shapes_note(&name, &m);
                        Loaded::Shapes(Arc::new(m), note)
                    })
                    .map_err(|e| e.to_string()),
            );
            return;
        }
        let source = match name.split_once(',') {
            Some((lat, lon)) => TrackSource::Paths {
                lat: lat.trim().into(),
                lon: lon.trim().into(),
            },
            None => TrackSource::Topic(name.clone()),
        };
        let r = read_track(&bag, &source, (None, None), threads, h.cancel_flag())
            .map_err(|e| e.to_string())
            .map(|t| {
                let values = match &by {
                    ColourBy::Expression(e) => {
                        expression_values(&bag, e, &t.time_ns, h.cancel_flag())
                    }
                    _ => Ok(Vec::new()),
                };
                let p = Prepared::new(t, &by, values);
                let note = track_note(&name, &p);
                Loaded::Track(Arc::new(p), note)
            });
        h.send(r);
    });
    r.unwrap_or_else(|e| Job::done(Err(e)))
}

/// An expression's values at each of `times` (the nearest sample).
fn expression_values(
    bag: &bagscope_reader::Bag,
    text: &str,
    times: &[u64],
    cancel: &std::sync::atomic::AtomicBool,
) -> Result<Vec<f32>, String> {
    let e = bagscope_reader::expr::Expr::parse(text).map_err(|e| e.to_string())?;
    let env = bagscope_reader::series::Env::default();
    let s = bagscope_reader::series::expr_series(
        bag,
        std::slice::from_ref(&e),
        &env,
        (None, None),
        bag.options().threads(),
        cancel,
    )
    .map_err(|e| e.to_string())?;
    let pts: Vec<(u64, f64)> = s
        .into_iter()
        .next()
        .map(|s| {
            s.points
                .into_iter()
                .map(|p| (p.time_ns, p.value.as_f64().unwrap_or(f64::NAN)))
                .collect()
        })
        .unwrap_or_default();
    Ok(thin::nearest(times, &pts))
}

/// Keeps each panel's layers in step with its settings: new topics read, removed ones
/// dropped, a changed colouring read again; takes what the workers made (never blocks).
pub fn update(d: &mut Doc, ctx: &egui::Context) {
    d.map.panels.retain(|p| p.open);
    if d.map.panels.is_empty() {
        d.map.tiles.clear();
        return;
    }
    if d.rec.indexed.is_none() {
        return;
    }
    let candidates = &d.rec.map_topics;
    let mut starts = Vec::new();
    for (pi, p) in d.map.panels.iter_mut().enumerate() {
        // A panel from a layout that names no topic (or only the one it follows) draws every
        // topic the map draws, but those turned off.
        if !p.filled {
            p.filled = true;
            for t in candidates {
                if !p.settings.disabled.contains(t) && !p.settings.topics.contains(t) {
                    p.settings.topics.push(t.clone());
                }
            }
        }
        p.layers.retain(|l| p.settings.topics.contains(&l.name));
        for (i, name) in p.settings.topics.iter().enumerate() {
            let colour = p
                .settings
                .colours
                .get(name)
                .and_then(|c| parse_hex(c))
                .unwrap_or(PALETTE[i % PALETTE.len()]);
            match p.layers.iter_mut().find(|l| l.name == *name) {
                Some(l) => {
                    l.colour = colour;
                    let stale = l.track.is_some() && l.colour_by != p.settings.colour_by;
                    if stale && l.job.is_none() {
                        starts.push((pi, name.clone()));
                    }
                }
                None => {
                    p.layers.push(Layer {
                        name: name.clone(),
                        colour,
                        track: None,
                        shapes: None,
                        error: None,
                        note: None,
                        job: None,
                        colour_by: p.settings.colour_by.clone(),
                    });
                    starts.push((pi, name.clone()));
                }
            }
        }
        // Layers in the settings' order.
        let order = &p.settings.topics;
        p.layers.sort_by_key(|l| {
            order
                .iter()
                .position(|t| *t == l.name)
                .unwrap_or(usize::MAX)
        });
    }
    for (pi, name) in starts {
        let by = d.map.panels[pi].settings.colour_by.clone();
        let job = start_layer(d, &name, &by, ctx);
        if let Some(l) = d.map.panels[pi].layers.iter_mut().find(|l| l.name == name) {
            l.job = Some(job);
            l.colour_by = by;
        }
    }
    for p in &mut d.map.panels {
        for l in &mut p.layers {
            let Some(job) = &mut l.job else { continue };
            match job.take() {
                Some(Ok(Loaded::Track(t, note))) => {
                    l.track = Some(t);
                    l.note = note;
                    l.error = None;
                    l.job = None;
                }
                Some(Ok(Loaded::Shapes(s, note))) => {
                    l.shapes = Some(s);
                    l.note = note;
                    l.error = None;
                    l.job = None;
                }
                Some(Err(e)) => {
                    l.error = Some(e);
                    l.job = None;
                }
                None if job.ended() => l.job = None,
                None => {}
            }
        }
    }
}

/// Draws every map panel's window.
pub fn show(ctx: &egui::Context, d: &mut Doc, cmds: &mut Vec<Cmd>) {
    let playhead = d.nav.playhead;
    let candidates = &d.rec.map_topics;
    let waiting = d.rec.indexed.is_none();
    for (i, p) in d.map.panels.iter_mut().enumerate() {
        let key = p.settings.tiles.clone();
        let layer = d.map.tiles.entry(key.clone()).or_insert_with(|| {
            TileLayer::new(TileSource::parse(&key).unwrap_or(TileSource::None), ctx)
        });
        let mut open = p.open;
        egui::Window::new(format!("Map {}", p.id))
            .id(egui::Id::unique(("map-panel", p.id)))
            .open(&mut open)
            .default_size([760.0, 560.0])
            .default_pos([360.0 + 30.0 * i as f32, 80.0 + 30.0 * i as f32])
            .resizable(true)
            .show(ctx, |ui| {
                view::controls(ui, p, candidates);
                if waiting {
                    ui.label("waiting for the message tables…");
                }
                view::draw(ui, p, layer, playhead, cmds);
            });
        p.open = open;
    }
    // Sources no panel uses any more: their textures and fetchers go.
    let used: Vec<String> = d
        .map
        .panels
        .iter()
        .map(|p| p.settings.tiles.clone())
        .collect();
    d.map.tiles.retain(|k, _| used.contains(k));
}
