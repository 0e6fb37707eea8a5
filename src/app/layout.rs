//! Layouts: the image panels, plotted fields and log panel of a recording, remembered in the
//! app's storage under the recording's set of topics and types, and re-applied to any
//! recording with the same set (the next run of the same robot).

use std::collections::BTreeMap;

use super::Doc;
use crate::Summary;

/// What is re-applied.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Layout {
    /// Topics with an image panel, in order.
    pub images: Vec<String>,
    /// Plotted field paths, in order.
    pub series: Vec<String>,
    /// The log panel open.
    pub log: bool,
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
    let s = d.bag.summary();
    Layout {
        images: d
            .images
            .panels
            .iter()
            .filter_map(|p| s.topics.get(p.topic).map(|t| t.name.clone()))
            .collect(),
        series: d
            .plots
            .series
            .iter()
            .filter(|x| {
                crate::encoding::FieldPath::parse(&x.path)
                    .is_ok_and(|f| !f.segments.is_empty() && s.topic(&f.topic).is_some())
            })
            .map(|x| x.path.clone())
            .collect(),
        log: d.log.open,
    }
}

/// Layouts to and from the JSON kept in the app's storage.
pub fn to_json(m: &BTreeMap<String, Layout>) -> String {
    let v: serde_json::Map<String, serde_json::Value> = m
        .iter()
        .map(|(k, l)| {
            (
                k.clone(),
                serde_json::json!({"images": l.images, "series": l.series, "log": l.log}),
            )
        })
        .collect();
    serde_json::Value::Object(v).to_string()
}

/// See [`to_json`]; anything unreadable is left out.
pub fn from_json(text: &str) -> BTreeMap<String, Layout> {
    let Ok(serde_json::Value::Object(m)) = serde_json::from_str(text) else {
        return BTreeMap::new();
    };
    let strings = |v: Option<&serde_json::Value>| -> Vec<String> {
        v.and_then(|v| v.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    m.into_iter()
        .map(|(k, v)| {
            let l = Layout {
                images: strings(v.get("images")),
                series: strings(v.get("series")),
                log: v.get("log").and_then(|b| b.as_bool()).unwrap_or(false),
            };
            (k, l)
        })
        .collect()
}

/// Opens the layout's image panels and log panel; its series wait for the tables
/// (returned, to be plotted then).
pub fn apply(d: &mut Doc, l: &Layout) -> Vec<String> {
    let s = d.bag.summary().clone();
    d.images.panels.clear();
    for name in &l.images {
        if let Some(ti) = s.topics.iter().position(|t| t.name == *name) {
            d.images.open(ti);
        }
    }
    d.log.open = l.log;
    l.series.clone()
}
