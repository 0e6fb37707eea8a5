//! Layout files: the view of a recording saved as a documented, versioned JSON file
//! (`docs/layout-format.md`) a colleague opens on the same run or the next one: image, 3D and
//! log panels, plotted expressions, the topics hidden on the timeline, the runs' offsets,
//! bookmarks (from the start) and the windows open. Fields a newer bagscope writes and this one
//! does not know are kept and written back. The plot series of a Lichtblick/Foxglove layout
//! (JSON) and of a PlotJuggler layout (XML) are imported.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::layout::Layout;
use super::Doc;
use bagscope_reader::Summary;

/// A script kept but not run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NotRun {
    pub name: String,
    pub language: String,
    pub text: String,
}

impl From<bagscope_ops::script::plotjuggler::NotRun> for NotRun {
    fn from(n: bagscope_ops::script::plotjuggler::NotRun) -> Self {
        NotRun {
            name: n.name,
            language: n.language,
            text: n.text,
        }
    }
}

/// The format's version this bagscope writes.
pub const VERSION: u32 = 1;

/// A bookmark, from the recording's start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bookmark {
    pub from_start_ns: u64,
    pub label: String,
}

/// The windows open.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Windows {
    pub info: bool,
    pub tf: bool,
    pub find: bool,
    pub diagnostics: bool,
    pub compare: bool,
    pub scripts: bool,
}

/// A layout file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LayoutFile {
    #[serde(rename = "bagscope_layout")]
    pub version: u32,
    #[serde(flatten)]
    pub layout: Layout,
    #[serde(default)]
    pub hidden_topics: Vec<String>,
    /// Each recording's time shift on the timeline (s), several runs.
    #[serde(default)]
    pub offsets_s: Vec<f64>,
    #[serde(default)]
    pub bookmarks: Vec<Bookmark>,
    #[serde(default)]
    pub windows: Windows,
    /// Fields drawn as state rows under the timeline.
    #[serde(default)]
    pub state_rows: Vec<String>,
    /// Series scripts: a plotted series named after one is what it makes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scripts: Vec<bagscope_ops::script::SeriesScript>,
    /// Scripts kept but not run (PlotJuggler's Python and JavaScript snippets, Lichtblick's
    /// TypeScript user scripts): `{name, language, text}`, written back as they came.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scripts_not_run: Vec<NotRun>,
    /// Message scripts: the virtual topics the recording is opened with.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub message_scripts: Vec<bagscope_ops::script::message::MessageScript>,
    /// Fields this bagscope does not know (a newer one's), written back as they came.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Default for LayoutFile {
    fn default() -> Self {
        LayoutFile {
            version: VERSION,
            layout: Layout::default(),
            hidden_topics: Vec::new(),
            offsets_s: Vec::new(),
            bookmarks: Vec::new(),
            windows: Windows::default(),
            state_rows: Vec::new(),
            scripts: Vec::new(),
            scripts_not_run: Vec::new(),
            message_scripts: Vec::new(),
            extra: Map::new(),
        }
    }
}

impl LayoutFile {
    /// As written to disk: pretty JSON, a newline at the end.
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(self).unwrap_or_default();
        s.push('\n');
        s
    }
}

/// The layout of what `d` shows now; `kept` (the layout file last opened) gives the fields
/// this bagscope does not know, and the panels whose topics this recording lacks
/// (`d.layout_missing`) stay in it.
pub fn capture(d: &Doc) -> LayoutFile {
    let s = d.rec.bag.summary();
    let start = d.rec.range().0;
    let mut layout = super::layout::capture(d);
    let kept = &d.layout_kept;
    for name in &kept.layout.images {
        if s.topic(name).is_none() && !layout.images.contains(name) {
            layout.images.push(name.clone());
        }
    }
    for p in &kept.layout.series {
        if !layout.series.contains(p) && d.layout_missing.contains(p) {
            layout.series.push(p.clone());
        }
    }
    LayoutFile {
        version: VERSION.max(kept.version),
        layout,
        hidden_topics: s
            .topics
            .iter()
            .zip(&d.nav.visible)
            .filter(|(_, v)| !**v)
            .map(|(t, _)| t.name.clone())
            .collect(),
        offsets_s: if d.rec.parts.len() > 1 {
            d.rec
                .parts
                .iter()
                .map(|p| p.offset_ns as f64 / 1e9)
                .collect()
        } else {
            Vec::new()
        },
        bookmarks: d
            .nav
            .bookmarks
            .iter()
            .map(|(t, l)| Bookmark {
                from_start_ns: t.saturating_sub(start),
                label: l.clone(),
            })
            .collect(),
        windows: Windows {
            info: false,
            tf: d.tf.open,
            find: d.find.open,
            diagnostics: d.diag.open,
            compare: d.compare.open,
            scripts: d.scripts.open,
        },
        state_rows: d.states.rows.iter().map(|r| r.path.clone()).collect(),
        scripts: d.plots.scripts.clone(),
        scripts_not_run: kept.scripts_not_run.clone(),
        message_scripts: d.scripts.messages.clone(),
        extra: kept.extra.clone(),
    }
}

/// What applying a layout leaves to do.
pub struct Applied {
    /// Series to plot once the tables are built.
    pub series: Vec<String>,
    /// Fields to draw as state rows.
    pub state_rows: Vec<String>,
    /// The runs again with the layout's offsets (when they differ from the open ones).
    pub reopen: Option<Vec<bagscope_reader::bag::merge::Part>>,
}

/// Shows `f` on `d`: its panels, plots (returned, plotted once the tables are built), hidden
/// topics, bookmarks and windows; what this recording lacks is listed in `d.layout_missing`
/// and kept for the next save.
pub fn apply(d: &mut Doc, f: &LayoutFile) -> Applied {
    let s = d.rec.bag.summary().clone();
    let start = d.rec.range().0;
    d.plots.scripts = f.scripts.clone();
    let series = super::layout::apply(d, &f.layout);
    let mut missing: Vec<String> = f
        .layout
        .images
        .iter()
        .filter(|t| s.topic(t).is_none())
        .map(|t| format!("{t} (image panel)"))
        .collect();
    let mut plotted = Vec::new();
    d.layout_missing.clear();
    for p in series {
        let known = bagscope_ops::script::makes(&d.plots.scripts, &p)
            || bagscope_reader::expr::Expr::parse(&p)
                .is_ok_and(|e| e.topics().iter().all(|t| s.topic(t).is_some()));
        if known {
            plotted.push(p);
        } else {
            missing.push(format!("{p} (plot)"));
            d.layout_missing.push(p);
        }
    }
    for (t, v) in s.topics.iter().zip(d.nav.visible.iter_mut()) {
        *v = !f.hidden_topics.contains(&t.name);
    }
    if !f.bookmarks.is_empty() {
        d.nav.bookmarks = f
            .bookmarks
            .iter()
            .map(|b| (start + b.from_start_ns, b.label.clone()))
            .collect();
        d.nav.bookmarks.sort();
    }
    d.tf.open = f.windows.tf && d.rec.has_tf;
    d.find.open = f.windows.find;
    d.diag.open = f.windows.diagnostics && d.rec.has_diagnostics;
    d.compare.open = f.windows.compare && d.rec.parts.len() > 1;
    d.scripts.open |= f.windows.scripts;
    // A layout of virtual topics and no series script: the window on its message scripts.
    d.scripts.messages_tab |= f.scripts.is_empty() && !f.message_scripts.is_empty();
    for n in &f.scripts_not_run {
        missing.push(format!("{} ({}): kept, not run", n.name, n.language));
    }
    d.layout_notes = missing;
    d.layout_kept = f.clone();
    let reopen = (f.offsets_s.len() == d.rec.parts.len() && d.rec.parts.len() > 1)
        .then(|| {
            d.rec
                .parts
                .iter()
                .zip(&f.offsets_s)
                .map(|(p, o)| bagscope_reader::bag::merge::Part {
                    path: p.path.clone(),
                    offset_ns: (o * 1e9).round() as i64,
                })
                .collect::<Vec<_>>()
        })
        .filter(|v| *v != d.rec.parts);
    d.states.rows.clear();
    Applied {
        series: plotted,
        state_rows: f.state_rows.clone(),
        reopen,
    }
}

/// Reads a layout: bagscope's JSON, a Lichtblick/Foxglove layout (JSON with `configById`) or
/// a PlotJuggler layout (XML; its curve names are split into topic and field against
/// `summary`'s topics). Returns it and what the user should know of what did not come across.
pub fn parse(text: &str, summary: &Summary) -> Result<(LayoutFile, Vec<String>), String> {
    let t = text.trim_start();
    if t.starts_with('<') {
        return Ok(plotjuggler(t, summary));
    }
    let v: Value = serde_json::from_str(t).map_err(|e| format!("not a layout: {e}"))?;
    if v.get("bagscope_layout").is_some() {
        let f: LayoutFile = serde_json::from_value(v)
            .map_err(|e| format!("a bagscope layout that does not read: {e}"))?;
        let mut notes = Vec::new();
        if f.version > VERSION {
            notes.push(format!(
                "made by a newer bagscope (format {}, this one reads {VERSION}): what it does not know is kept",
                f.version
            ));
        }
        return Ok((f, notes));
    }
    if let Some(panels) = v.get("configById").and_then(Value::as_object) {
        let (mut f, mut notes) = lichtblick(panels);
        for n in bagscope_ops::script::layout::lichtblick_scripts(&v) {
            notes.push(format!("{} ({}): kept, not run", n.name, n.language));
            f.scripts_not_run.push(n.into());
        }
        return Ok((f, notes));
    }
    Err("not a layout bagscope reads: bagscope's JSON, a Lichtblick/Foxglove layout or a PlotJuggler XML".into())
}

/// A Lichtblick/Foxglove layout: its plots' paths, image panels' topics, a log panel, a
/// diagnostics panel.
/// What a Lichtblick/Foxglove Image panel lays over its image: its visible annotation topics
/// (`imageMode.annotations`), its calibration topic, the 3D topics it draws (`topics`), and
/// the robot where a visible URDF layer is among its `layers`.
fn lichtblick_image_overlay(cfg: &Value) -> super::images::overlay::Settings {
    let visible = |v: Option<&Value>| -> Vec<String> {
        v.and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter(|(_, c)| c.get("visible").and_then(Value::as_bool) != Some(false))
            .map(|(t, _)| t.clone())
            .collect()
    };
    super::images::overlay::Settings {
        annotations: visible(cfg.pointer("/imageMode/annotations")),
        calibration: cfg
            .pointer("/imageMode/calibrationTopic")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
            .map(str::to_string),
        projected: visible(cfg.get("topics")),
        // Its custom layers: a URDF layer draws the robot into the image.
        robot: cfg
            .get("layers")
            .and_then(Value::as_object)
            .is_some_and(|m| {
                m.values().any(|l| {
                    l.get("layerId").and_then(Value::as_str) == Some("foxglove.Urdf")
                        && l.get("visible").and_then(Value::as_bool) != Some(false)
                })
            }),
        ..Default::default()
    }
}

fn lichtblick(panels: &Map<String, Value>) -> (LayoutFile, Vec<String>) {
    let mut f = LayoutFile::default();
    let mut notes = Vec::new();
    for (id, cfg) in panels {
        let kind = id.split('!').next().unwrap_or("");
        match kind {
            "Plot" | "StateTransitions" => {
                for p in cfg
                    .get("paths")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if let Some(v) = p.get("value").and_then(Value::as_str) {
                        if !v.is_empty() && !f.layout.series.iter().any(|s| s == v) {
                            f.layout.series.push(v.to_string());
                        }
                        // Foxglove's and Lichtblick's per-path time base.
                        let stamp = p.get("timestampMethod").and_then(Value::as_str);
                        if stamp == Some("headerStamp")
                            && !f.layout.header_stamp_series.iter().any(|s| s == v)
                        {
                            f.layout.header_stamp_series.push(v.to_string());
                        }
                    }
                }
            }
            "Image" | "ImageViewPanel" => {
                let topic = cfg
                    .pointer("/imageMode/imageTopic")
                    .or_else(|| cfg.get("cameraTopic"))
                    .and_then(Value::as_str);
                if let Some(t) = topic.filter(|t| !t.is_empty()) {
                    f.layout.images.push(t.to_string());
                    f.layout.image_overlays.push(lichtblick_image_overlay(cfg));
                }
            }
            "RosOut" => f.layout.log = true,
            "map" | "Map" => f.layout.maps.push(lichtblick_map(cfg)),
            "DiagnosticSummary" | "DiagnosticStatusPanel" => f.windows.diagnostics = true,
            _ => notes.push(format!("{id}: a panel bagscope does not import")),
        }
    }
    (f, notes)
}

/// A Lichtblick/Foxglove Map panel: its view (`center`, `zoomLevel`), tiles (`layer`: `map`
/// or `custom` with `customTileUrl`), the topic it follows, the topics' colours and the
/// topics turned off (all others with fixes are drawn: they are chosen when the recording
/// opens, as Lichtblick does).
pub fn lichtblick_map(cfg: &Value) -> super::map::Settings {
    let mut s = super::map::Settings {
        all_topics: true,
        ..Default::default()
    };
    let lat = cfg.pointer("/center/lat").and_then(Value::as_f64);
    let lon = cfg.pointer("/center/lon").and_then(Value::as_f64);
    if let (Some(lat), Some(lon)) = (lat, lon) {
        s.center = Some((lat, lon));
    }
    // Leaflet's zoom counts 256-pixel tiles as bagscope's does.
    s.zoom = cfg.get("zoomLevel").and_then(Value::as_f64);
    if s.center.is_none() {
        s.zoom = None;
    }
    let custom = cfg
        .get("customTileUrl")
        .and_then(Value::as_str)
        .filter(|u| !u.is_empty());
    if let (Some("custom"), Some(url)) = (cfg.get("layer").and_then(Value::as_str), custom) {
        // Leaflet's templates may carry `{s}` (a subdomain): the first one is used.
        s.tiles = url.replace("{s}", "a");
    }
    if let Some(t) = cfg
        .get("followTopic")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
    {
        s.follow = true;
        s.topics.push(t.to_string());
    }
    let colours = cfg
        .get("topicColors")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .chain(
            cfg.get("topicConfig")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
                .filter_map(|(t, c)| c.get("color").map(|c| (t, c))),
        );
    for (topic, c) in colours {
        if let Some(c) = c.as_str() {
            s.colours.insert(topic.clone(), c.chars().take(7).collect());
        }
    }
    s.disabled = cfg
        .get("disabledTopics")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|t| t.as_str().map(str::to_string))
        .collect();
    s
}

/// The XML entities of an attribute value, undone.
fn unescape(s: &str) -> String {
    s.replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

/// The `name` attributes of every `<curve …>` element, in order.
fn curve_names(xml: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = xml;
    while let Some(i) = rest.find("<curve") {
        rest = &rest[i + 6..];
        let end = rest.find('>').unwrap_or(rest.len());
        let tag = &rest[..end];
        for q in ['"', '\''] {
            let key = format!("name={q}");
            if let Some(a) = tag.find(&key) {
                let v = &tag[a + key.len()..];
                if let Some(b) = v.find(q) {
                    out.push(unescape(&v[..b]));
                    break;
                }
            }
        }
        rest = &rest[end..];
    }
    out
}

/// A PlotJuggler layout: its curves, as paths of `summary`'s topics, and its custom functions
/// (Lua run, others kept and said).
fn plotjuggler(xml: &str, summary: &Summary) -> (LayoutFile, Vec<String>) {
    let mut f = LayoutFile::default();
    let mut notes = Vec::new();
    match bagscope_ops::script::plotjuggler::read(xml) {
        Ok(imported) => {
            f.scripts = imported.scripts;
            for n in imported.not_run {
                notes.push(format!("{} ({}): kept, not run", n.name, n.language));
                f.scripts_not_run.push(n.into());
            }
        }
        Err(e) => notes.push(format!("its custom functions do not read: {e}")),
    }
    for name in curve_names(xml) {
        if f.scripts.iter().any(|s| s.name == name) {
            if !f.layout.series.contains(&name) {
                f.layout.series.push(name);
            }
            continue;
        }
        if f.scripts_not_run.iter().any(|s| s.name == name) {
            continue;
        }
        match bagscope_ops::script::plotjuggler::path_text(&name, summary) {
            Some(p) if !f.layout.series.contains(&p) => f.layout.series.push(p),
            Some(_) => {}
            None => notes.push(format!("{name}: no topic of this recording starts it")),
        }
    }
    (f, notes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(topics: &[&str]) -> Summary {
        let mut s = Summary::default();
        for t in topics {
            s.topics.push(bagscope_reader::storage::Topic {
                name: (*t).into(),
                datatype: String::new(),
                connections: Vec::new(),
                message_count: 0,
            });
        }
        s
    }

    #[test]
    fn a_layout_round_trips_and_keeps_what_it_does_not_know() {
        let text = r#"{
  "bagscope_layout": 3,
  "images": ["/cam"],
  "series": ["/imu.linear_acceleration.x"],
  "log": true,
  "hidden_topics": ["/tf"],
  "bookmarks": [{"from_start_ns": 5000000000, "label": "turn"}],
  "future_rows": [{"path": "/mode.data"}],
  "zeta": 1.5
}"#;
        let (f, notes) = parse(text, &summary(&[])).unwrap();
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert_eq!(f.layout.images, ["/cam"]);
        assert!(f.layout.log);
        assert_eq!(f.extra.len(), 2);
        let out = f.to_json();
        let (g, _) = parse(&out, &summary(&[])).unwrap();
        assert_eq!(f, g);
        assert_eq!(g.to_json(), out, "byte for byte");
        assert!(out.contains("\"future_rows\"") && out.contains("\"zeta\": 1.5"));
    }

    #[test]
    fn lichtblick_plots_images_and_log_come_across() {
        let text = r#"{"configById": {
            "Plot!a1": {"paths": [{"value": "/odom.pose.pose.position.x", "enabled": true},
                                  {"value": "/imu.angular_velocity.z.@derivative"}]},
            "Image!b2": {"imageMode": {"imageTopic": "/camera/image_raw"}},
            "RosOut!c3": {},
            "3D!d4": {}
        }, "layout": "Plot!a1"}"#;
        let (f, notes) = parse(text, &summary(&[])).unwrap();
        assert_eq!(
            f.layout.series,
            [
                "/odom.pose.pose.position.x",
                "/imu.angular_velocity.z.@derivative"
            ]
        );
        assert_eq!(f.layout.images, ["/camera/image_raw"]);
        assert!(f.layout.log);
        assert_eq!(notes, ["3D!d4: a panel bagscope does not import"]);
    }

    #[test]
    fn a_lichtblick_image_panels_overlay_comes_across() {
        let text = r#"{"configById": {
            "Image!b2": {"imageMode": {"imageTopic": "/cam/image_raw",
                                       "calibrationTopic": "/cam/camera_info",
                                       "annotations": {"/det": {"visible": true},
                                                       "/off": {"visible": false}}},
                         "topics": {"/points": {"visible": true}},
                         "layers": {"u1": {"layerId": "foxglove.Urdf", "visible": true}}},
            "Image!c3": {"imageMode": {"imageTopic": "/cam2"},
                         "layers": {"u2": {"layerId": "foxglove.Urdf", "visible": false},
                                    "g": {"layerId": "foxglove.Grid"}}}
        }}"#;
        let (f, _) = parse(text, &summary(&[])).unwrap();
        let o = &f.layout.image_overlays;
        assert_eq!(o[0].annotations, ["/det"]);
        assert_eq!(o[0].calibration.as_deref(), Some("/cam/camera_info"));
        assert_eq!(o[0].projected, ["/points"]);
        assert!(o[0].robot);
        assert!(!o.get(1).is_some_and(|x| x.robot));
    }

    #[test]
    fn plotjuggler_curves_become_paths() {
        let xml = r##"<?xml version='1.0' encoding='UTF-8'?>
<root><tabbed_widget name="Main Window" parent="main_window"><Tab containers="1" tab_name="tab1">
<Container><DockSplitter orientation="-" sizes="1" count="1"><DockArea name="...">
<plot mode="TimeSeries" style="Lines">
 <curve color="#1f77b4" name="/imu/data/linear_acceleration/x"/>
 <curve name="/joint_states/position[1]" color="#d62728"/>
 <curve name="/joint_states/position.2" color="#d62728"/>
 <curve name="/gone/x" color="#d62728"/>
</plot></DockArea></DockSplitter></Container></Tab></tabbed_widget></root>"##;
        let s = summary(&["/imu", "/imu/data", "/joint_states"]);
        let (f, notes) = parse(xml, &s).unwrap();
        assert_eq!(
            f.layout.series,
            [
                "/imu/data.linear_acceleration.x",
                "/joint_states.position[1]",
                "/joint_states.position[2]"
            ]
        );
        assert_eq!(notes, ["/gone/x: no topic of this recording starts it"]);
    }

    #[test]
    fn plotjuggler_custom_functions_come_across_and_round_trip() {
        let xml = r##"<root><tabbed_widget name="Main Window" parent="main_window"><Tab tab_name="t">
<plot mode="TimeSeries"><curve name="/imu/data/x"/><curve name="speed kmh"/><curve name="js"/></plot></Tab></tabbed_widget>
<customMathEquations>
 <snippet name="speed kmh"><global>k = 3.6</global><function>return value * k</function><linked_source>/imu/data/x</linked_source></snippet>
 <snippet name="js"><global/><equation>$$x$$</equation></snippet>
</customMathEquations></root>"##;
        let (f, notes) = parse(xml, &summary(&["/imu/data"])).unwrap();
        assert_eq!(f.layout.series, ["/imu/data.x", "speed kmh"]);
        assert_eq!(f.scripts.len(), 1);
        assert_eq!(f.scripts[0].function.as_deref(), Some("return value * k"));
        assert_eq!(f.scripts_not_run.len(), 1);
        assert!(
            notes.iter().any(|n| n.starts_with("js (javascript")),
            "{notes:?}"
        );
        // Written as bagscope's layout and read back, by this app and by the command line's
        // reader of layouts.
        let out = f.to_json();
        let (g, _) = parse(&out, &summary(&["/imu/data"])).unwrap();
        assert_eq!(f, g);
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let s = bagscope_ops::script::SeriesScript::from_json(&v["scripts"][0]).unwrap();
        assert_eq!(s, f.scripts[0]);
        let cols = bagscope_ops::script::layout::read(&out, &summary(&["/imu/data"])).unwrap();
        let names: Vec<&str> = cols.columns.iter().map(|c| c.0.as_str()).collect();
        assert_eq!(names, ["/imu/data.x", "speed kmh"]);
    }
}
