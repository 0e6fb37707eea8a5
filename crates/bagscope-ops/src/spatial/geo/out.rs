//! A track written out as GPX 1.1, KML 2.2 (a `gx:Track`, times and positions together) or
//! GeoJSON (RFC 7946: a LineString with the times, altitudes and accuracies as properties), the
//! formats GIS tools, Google Earth and web maps read. Written under a temporary name and
//! renamed into place.

use std::fmt::Write as _;
use std::path::Path;

use super::track::Track;
use crate::timefmt::iso8601;
use crate::Result;

/// A track file's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrackFormat {
    /// GPX 1.1.
    Gpx,
    /// KML 2.2 with Google's `gx:Track`.
    Kml,
    /// GeoJSON.
    GeoJson,
}

impl TrackFormat {
    /// `gpx`, `kml` or `geojson` (also `json`).
    pub fn parse(s: &str) -> Option<TrackFormat> {
        Some(match s.to_ascii_lowercase().as_str() {
            "gpx" => TrackFormat::Gpx,
            "kml" => TrackFormat::Kml,
            "geojson" | "json" => TrackFormat::GeoJson,
            _ => return None,
        })
    }

    /// The format of a path's extension.
    pub fn from_path(p: &Path) -> Option<TrackFormat> {
        p.extension()
            .and_then(|e| e.to_str())
            .and_then(TrackFormat::parse)
    }
}

/// GPX's fix type of a NavSatFix status (`i8::MIN`: the type has none).
fn gpx_fix(status: i8, has_alt: bool) -> Option<&'static str> {
    match status {
        i8::MIN => None,
        1 | 2 => Some("dgps"),
        _ if has_alt => Some("3d"),
        _ => Some("2d"),
    }
}

/// The track as GPX 1.1: one `trk` of one `trkseg`, a `trkpt` a fix with `ele`, `time` and
/// `fix`.
pub fn gpx(t: &Track) -> String {
    let mut s = String::with_capacity(100 + t.len() * 120);
    s.push_str(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<gpx version=\"1.1\" creator=\"bagscope\" \
         xmlns=\"http://www.topografix.com/GPX/1/1\">\n",
    );
    let _ = writeln!(
        s,
        "  <trk>\n    <name>{}</name>\n    <trkseg>",
        quick_xml::escape::escape(&t.name)
    );
    for i in 0..t.len() {
        let _ = write!(s, "      <trkpt lat=\"{}\" lon=\"{}\">", t.lat[i], t.lon[i]);
        let has_alt = t.alt[i].is_finite();
        if has_alt {
            let _ = write!(s, "<ele>{}</ele>", t.alt[i]);
        }
        let _ = write!(s, "<time>{}</time>", iso8601(t.time_ns[i]));
        if let Some(f) = gpx_fix(t.status[i], has_alt) {
            let _ = write!(s, "<fix>{f}</fix>");
        }
        s.push_str("</trkpt>\n");
    }
    s.push_str("    </trkseg>\n  </trk>\n</gpx>\n");
    s
}

/// The track as KML 2.2: a Placemark holding a `gx:Track` (a `when` and a `gx:coord` a fix).
pub fn kml(t: &Track) -> String {
    let mut s = String::with_capacity(300 + t.len() * 90);
    s.push_str(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<kml xmlns=\"http://www.opengis.net/kml/2.2\" \
         xmlns:gx=\"http://www.google.com/kml/ext/2.2\">\n<Document>\n",
    );
    let _ = writeln!(
        s,
        "  <Placemark>\n    <name>{}</name>\n    <gx:Track>\n      <altitudeMode>absolute</altitudeMode>",
        quick_xml::escape::escape(&t.name)
    );
    for &ns in &t.time_ns {
        let _ = writeln!(s, "      <when>{}</when>", iso8601(ns));
    }
    for i in 0..t.len() {
        let alt = if t.alt[i].is_finite() { t.alt[i] } else { 0.0 };
        let _ = writeln!(
            s,
            "      <gx:coord>{} {} {alt}</gx:coord>",
            t.lon[i], t.lat[i]
        );
    }
    s.push_str("    </gx:Track>\n  </Placemark>\n</Document>\n</kml>\n");
    s
}

/// A number for JSON: `null` for NaN and infinities.
fn json_num(v: f64) -> String {
    if v.is_finite() {
        format!("{v}")
    } else {
        "null".into()
    }
}

/// The track as GeoJSON: a FeatureCollection of one LineString (a Point for a single fix)
/// whose properties hold `name`, `times` (ISO 8601), `time_ns`, `altitudes` and
/// `accuracy_m` (null where unknown), one entry a position.
pub fn geojson(t: &Track) -> String {
    let mut s = String::with_capacity(200 + t.len() * 110);
    let coords: Vec<String> = (0..t.len())
        .map(|i| {
            if t.alt[i].is_finite() {
                format!("[{},{},{}]", t.lon[i], t.lat[i], t.alt[i])
            } else {
                format!("[{},{}]", t.lon[i], t.lat[i])
            }
        })
        .collect();
    let geometry = if t.len() == 1 {
        format!("{{\"type\":\"Point\",\"coordinates\":{}}}", coords[0])
    } else {
        format!(
            "{{\"type\":\"LineString\",\"coordinates\":[{}]}}",
            coords.join(",")
        )
    };
    let list = |f: &dyn Fn(usize) -> String| (0..t.len()).map(f).collect::<Vec<_>>().join(",");
    let _ = writeln!(
        s,
        "{{\"type\":\"FeatureCollection\",\"features\":[{{\"type\":\"Feature\",\"geometry\":{geometry},\
         \"properties\":{{\"name\":{},\"times\":[{}],\"time_ns\":[{}],\"altitudes\":[{}],\"accuracy_m\":[{}]}}}}]}}",
        serde_json::Value::String(t.name.clone()),
        list(&|i| format!("\"{}\"", iso8601(t.time_ns[i]))),
        list(&|i| t.time_ns[i].to_string()),
        list(&|i| json_num(t.alt[i])),
        list(&|i| json_num(t.accuracy(i))),
    );
    s
}

/// Writes `t` to `path` in `format` (a temporary name beside it, renamed into place).
pub fn write_track(t: &Track, format: TrackFormat, path: &Path) -> Result<()> {
    let text = match format {
        TrackFormat::Gpx => gpx(t),
        TrackFormat::Kml => kml(t),
        TrackFormat::GeoJson => geojson(t),
    };
    bagscope_reader::storage::write_atomically(path, text.as_bytes())?;
    Ok(())
}
