//! Layouts: the image panels, plotted fields, log panel and 3D panels of a recording, remembered in the
//! app's storage under the recording's set of topics and types, and re-applied to any
//! recording with the same set (the next run of the same robot).

use super::Doc;
use bagscope_reader::Summary;

/// What is re-applied.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Layout {
    /// Topics with an image panel, in order.
    pub images: Vec<String>,
    /// What each image panel lays over its picture (annotations, projected layers, rectify),
    /// in the order of `images`; left out where none has anything.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub image_overlays: Vec<super::images::overlay::Settings>,
    /// Plotted field paths, in order.
    pub series: Vec<String>,
    /// Of `series`, those plotted at their messages' header stamps.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub header_stamp_series: Vec<String>,
    /// The state rows drawn at their messages' header stamps.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub header_stamp_state_rows: Vec<String>,
    /// The log panel open.
    pub log: bool,
    /// The 3D panels: layers, fixed frame, camera.
    pub scenes: Vec<super::scene::Settings>,
    /// The map panels: topics, tiles, colouring, view.
    pub maps: Vec<super::map::Settings>,
}

/// The key of a recording's topic set: md5 of its sorted `name type` lines.
pub fn key(s: &Summary) -> String {
    let mut lines: Vec<String> = s
        .topics
        .iter()
        .map(|t| format!("{} {}", t.name, t.datatype))
        .collect();
    lines.sort();
    format!("{:x}", md5::compute(lines.join("\n")))
}

/// The layout of an open recording.
pub fn capture(d: &Doc) -> Layout {
    let s = d.rec.bag.summary();
    Layout {
        images: d
            .images
            .panels
            .iter()
            .filter_map(|p| s.topics.get(p.topic).map(|t| t.name.clone()))
            .collect(),
        image_overlays: if d.images.panels.iter().any(|p| p.overlay.any()) {
            d.images
                .panels
                .iter()
                .filter(|p| s.topics.get(p.topic).is_some())
                .map(|p| p.overlay.clone())
                .collect()
        } else {
            Vec::new()
        },
        series: d
            .plots
            .series
            .iter()
            .filter(|x| {
                bagscope_reader::expr::Expr::parse(&x.path).is_ok_and(|e| {
                    !e.paths().is_empty() && e.topics().iter().all(|t| s.topic(t).is_some())
                })
            })
            .map(|x| x.path.clone())
            .collect(),
        header_stamp_series: d
            .plots
            .series
            .iter()
            .filter(|x| x.header_time)
            .map(|x| x.path.clone())
            .collect(),
        header_stamp_state_rows: d
            .states
            .rows
            .iter()
            .filter(|r| r.header_time)
            .map(|r| r.path.clone())
            .collect(),
        log: d.log.open,
        scenes: d.scene.panels.iter().map(|p| p.settings.clone()).collect(),
        maps: d.map.settings(),
    }
}

/// Opens the layout's image panels and log panel; its series wait for the tables
/// (returned, to be plotted then).
pub fn apply(d: &mut Doc, l: &Layout) -> Vec<String> {
    let s = d.rec.bag.summary().clone();
    d.images.panels.clear();
    for (i, name) in l.images.iter().enumerate() {
        if let Some(ti) = s.topics.iter().position(|t| t.name == *name) {
            d.images.open(ti);
            if let (Some(o), Some(p)) = (l.image_overlays.get(i), d.images.panels.last_mut()) {
                p.overlay = o.clone();
            }
        }
    }
    d.plots.header_paths = l.header_stamp_series.iter().cloned().collect();
    d.states.header_paths = l.header_stamp_state_rows.iter().cloned().collect();
    d.log.open = l.log;
    d.scene.panels.clear();
    for sc in &l.scenes {
        d.scene.open_with(sc.clone());
    }
    d.map.panels.clear();
    for m in &l.maps {
        d.map.open_with(m.clone());
    }
    l.series.clone()
}
