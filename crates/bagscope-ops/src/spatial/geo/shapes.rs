//! `foxglove.GeoJSON` messages: RFC 7946 text parsed into the points, lines and polygons the
//! map draws, with the style Foxglove's map reads from each feature's `style` property
//! (`color`, `weight`, `opacity`, `fillColor`, `fillOpacity`, as Leaflet's path options).

use std::ops::ControlFlow;
use std::sync::atomic::AtomicBool;

use bagscope_reader::encoding::Value;
use bagscope_reader::Bag;
use serde_json::Value as Json;

use super::GeoError;
use crate::Result;

/// How a shape is drawn; colours as `[r, g, b, a]`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Style {
    /// The line's (and a point's outline) colour.
    pub color: [u8; 4],
    /// Line width in pixels.
    pub weight: f32,
    /// A polygon's fill.
    pub fill: [u8; 4],
}

impl Default for Style {
    fn default() -> Self {
        // Leaflet's defaults: #3388ff, weight 3, opacity 1, fill opacity 0.2.
        Style {
            color: [0x33, 0x88, 0xff, 255],
            weight: 3.0,
            fill: [0x33, 0x88, 0xff, 51],
        }
    }
}

/// One drawable piece: its kind and its positions as `(lat, lon)`.
#[derive(Debug, Clone, PartialEq)]
pub enum Shape {
    /// A point.
    Point((f64, f64)),
    /// A line through the positions.
    Line(Vec<(f64, f64)>),
    /// A polygon: its outer ring (holes are drawn as lines).
    Polygon(Vec<(f64, f64)>),
}

/// A feature: its shapes, style and name (the `name` or `title` property, if any).
#[derive(Debug, Clone, PartialEq)]
pub struct Feature {
    /// The shapes of its geometry.
    pub shapes: Vec<Shape>,
    /// Its style.
    pub style: Style,
    /// Its name.
    pub name: Option<String>,
}

/// A colour as CSS writes it (`#rgb`, `#rrggbb`, `#rrggbbaa`, a few names), with an opacity,
/// as `[r, g, b, a]`.
pub fn css_colour(s: &str, opacity: f64) -> Option<[u8; 4]> {
    let s = s.trim();
    let hex = |h: &str| u8::from_str_radix(h, 16).ok();
    let a = (opacity.clamp(0.0, 1.0) * 255.0).round() as u8;
    let rgb = match s.strip_prefix('#') {
        Some(h) if h.len() == 3 => {
            let d = |i: usize| hex(&h[i..=i]).map(|v| v * 17);
            [d(0)?, d(1)?, d(2)?, a]
        }
        Some(h) if h.len() == 6 || h.len() == 8 => {
            let alpha = if h.len() == 8 { hex(&h[6..8])? } else { 255 };
            let scaled = (f64::from(alpha) * f64::from(a) / 255.0).round() as u8;
            [hex(&h[0..2])?, hex(&h[2..4])?, hex(&h[4..6])?, scaled]
        }
        _ => {
            let [r, g, b] = match s.to_ascii_lowercase().as_str() {
                "red" => [255, 0, 0],
                "green" => [0, 128, 0],
                "blue" => [0, 0, 255],
                "yellow" => [255, 255, 0],
                "orange" => [255, 165, 0],
                "black" => [0, 0, 0],
                "white" => [255, 255, 255],
                "purple" => [128, 0, 128],
                _ => return None,
            };
            [r, g, b, a]
        }
    };
    Some(rgb)
}

/// A feature's style from its `style` property (missing keys keep Leaflet's defaults).
fn style_of(props: &Json) -> Style {
    let mut st = Style::default();
    let Some(s) = props.get("style") else {
        return st;
    };
    let f = |k: &str| s.get(k).and_then(Json::as_f64);
    let opacity = f("opacity").unwrap_or(1.0);
    if let Some(c) = s.get("color").and_then(Json::as_str) {
        st.color = css_colour(c, opacity).unwrap_or(st.color);
        st.fill = css_colour(c, 0.2).unwrap_or(st.fill);
    } else {
        st.color[3] = (opacity.clamp(0.0, 1.0) * 255.0) as u8;
    }
    if let Some(w) = f("weight") {
        st.weight = w.clamp(0.0, 50.0) as f32;
    }
    let fill_opacity = f("fillOpacity").unwrap_or(0.2);
    if let Some(c) = s.get("fillColor").and_then(Json::as_str) {
        st.fill = css_colour(c, fill_opacity).unwrap_or(st.fill);
    } else if s.get("fillOpacity").is_some() {
        st.fill[3] = (fill_opacity.clamp(0.0, 1.0) * 255.0) as u8;
    }
    st
}

/// A position `[lon, lat, (alt)]` as `(lat, lon)`, checked.
fn position(v: &Json, at: &str) -> std::result::Result<(f64, f64), String> {
    let a = v
        .as_array()
        .filter(|a| a.len() >= 2)
        .ok_or_else(|| format!("{at}: a position is [longitude, latitude]"))?;
    let (lon, lat) = (
        a[0].as_f64().unwrap_or(f64::NAN),
        a[1].as_f64().unwrap_or(f64::NAN),
    );
    if !(-90.0..=90.0).contains(&lat) || !(-180.0..=180.0).contains(&lon) {
        return Err(format!("{at}: position [{}, {}] out of range", a[0], a[1]));
    }
    Ok((lat, lon))
}

/// A list of positions.
fn positions(v: &Json, at: &str) -> std::result::Result<Vec<(f64, f64)>, String> {
    v.as_array()
        .ok_or_else(|| format!("{at}: coordinates are a list"))?
        .iter()
        .enumerate()
        .map(|(i, p)| position(p, &format!("{at}[{i}]")))
        .collect()
}

/// A geometry's shapes.
fn geometry(g: &Json, at: &str, out: &mut Vec<Shape>) -> std::result::Result<(), String> {
    let c = &g["coordinates"];
    let ty = g["type"].as_str().unwrap_or("");
    let at = format!("{at} ({ty})");
    match ty {
        "Point" => out.push(Shape::Point(position(c, &at)?)),
        "MultiPoint" => out.extend(positions(c, &at)?.into_iter().map(Shape::Point)),
        "LineString" => out.push(Shape::Line(positions(c, &at)?)),
        "MultiLineString" | "Polygon" | "MultiPolygon" => {
            let parts: Vec<&Json> = if ty == "MultiPolygon" {
                c.as_array()
                    .ok_or_else(|| format!("{at}: coordinates are a list"))?
                    .iter()
                    .collect()
            } else {
                vec![c]
            };
            for (pi, part) in parts.into_iter().enumerate() {
                let rings = part
                    .as_array()
                    .ok_or_else(|| format!("{at}[{pi}]: coordinates are a list of lists"))?;
                for (ri, ring) in rings.iter().enumerate() {
                    let pts = positions(ring, &format!("{at}[{pi}][{ri}]"))?;
                    out.push(match (ty, ri) {
                        ("MultiLineString", _) => Shape::Line(pts),
                        (_, 0) => Shape::Polygon(pts),
                        _ => Shape::Line(pts),
                    });
                }
            }
        }
        "GeometryCollection" => {
            for (i, g) in g["geometries"].as_array().into_iter().flatten().enumerate() {
                geometry(g, &format!("{at}.geometries[{i}]"), out)?;
            }
        }
        other => return Err(format!("{at}: unknown geometry type {other:?}")),
    }
    Ok(())
}

/// The features of a GeoJSON text (a FeatureCollection, a Feature or a bare geometry); an
/// error says what is wrong and where (the feature's number, the coordinate's place).
pub fn parse_geojson(text: &str) -> std::result::Result<Vec<Feature>, String> {
    let v: Json = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
    let feature = |f: &Json, at: &str| -> std::result::Result<Feature, String> {
        let mut shapes = Vec::new();
        if !f["geometry"].is_null() {
            geometry(&f["geometry"], &format!("{at}.geometry"), &mut shapes)?;
        }
        let props = &f["properties"];
        let name = ["name", "title"]
            .iter()
            .find_map(|k| props.get(*k).and_then(Json::as_str))
            .map(str::to_string);
        Ok(Feature {
            shapes,
            style: style_of(props),
            name,
        })
    };
    match v["type"].as_str() {
        Some("FeatureCollection") => v["features"]
            .as_array()
            .ok_or("a FeatureCollection without a features list")?
            .iter()
            .enumerate()
            .map(|(i, f)| feature(f, &format!("features[{i}]")))
            .collect(),
        Some("Feature") => Ok(vec![feature(&v, "feature")?]),
        Some(_) => {
            let mut shapes = Vec::new();
            geometry(&v, "geometry", &mut shapes)?;
            Ok(vec![Feature {
                shapes,
                style: Style::default(),
                name: None,
            }])
        }
        None => Err("no \"type\": not GeoJSON".into()),
    }
}

/// A GeoJSON topic's messages: each message's time and its features, or why they could not
/// be read.
pub type GeoJsonMessages = Vec<(u64, std::result::Result<Vec<Feature>, String>)>;

/// Reads every message of a GeoJSON topic (its `geojson` text field) and parses it; a
/// message that does not decode is said in its place.
pub fn read_geojson(bag: &Bag, topic: &str, cancel: &AtomicBool) -> Result<GeoJsonMessages> {
    let t = bag.summary().topic(topic).ok_or_else(|| GeoError {
        what: topic.into(),
        reason: "no such topic in the recording".into(),
    })?;
    let mut out = Vec::new();
    crate::decoded::each_decoded(bag, t.connections.clone(), cancel, |m, decoded| {
        let parsed = match decoded {
            Some((plan, node)) => match node.field_value(&plan.def, "geojson") {
                Some(Value::String(b)) => parse_geojson(&String::from_utf8_lossy(b)),
                Some(v) => Err(format!("geojson is not text: {v:?}")),
                None => Err("the message has no geojson field".into()),
            },
            None => Err("the message does not decode".into()),
        };
        out.push((m.time_ns, parsed));
        Ok(ControlFlow::Continue(()))
    })?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn features_and_styles() {
        let f = parse_geojson(
            r##"{"type":"FeatureCollection","features":[
              {"type":"Feature","properties":{"name":"depot","style":{"color":"#ff0000","weight":5}},
               "geometry":{"type":"Point","coordinates":[11.5,48.1]}},
              {"type":"Feature","properties":{"style":{"fillColor":"#0f0","fillOpacity":0.5}},
               "geometry":{"type":"Polygon","coordinates":[[[11,48],[12,48],[12,49],[11,48]],[[11.2,48.2],[11.3,48.2],[11.2,48.3]]]}}]}"##,
        )
        .unwrap();
        assert_eq!(f[0].shapes, vec![Shape::Point((48.1, 11.5))]);
        assert_eq!(f[0].name.as_deref(), Some("depot"));
        assert_eq!(f[0].style.color, [255, 0, 0, 255]);
        assert_eq!(f[0].style.weight, 5.0);
        assert!(matches!(f[1].shapes[0], Shape::Polygon(ref r) if r.len() == 4));
        assert!(matches!(f[1].shapes[1], Shape::Line(_)));
        assert_eq!(f[1].style.fill, [0, 255, 0, 128]);
    }

    #[test]
    fn bad_geojson_says_where() {
        assert!(parse_geojson("{").unwrap_err().starts_with("not JSON"));
        let e = parse_geojson(
            r#"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"LineString","coordinates":[[0,0],[0,95]]}}]}"#,
        )
        .unwrap_err();
        assert!(e.contains("features[0].geometry (LineString)[1]"), "{e}");
        assert!(e.contains("out of range"), "{e}");
        let e = parse_geojson(r#"{"type":"Blob","coordinates":[]}"#).unwrap_err();
        assert!(e.contains("unknown geometry type"), "{e}");
    }
}
