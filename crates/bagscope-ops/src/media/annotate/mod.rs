//! 2D annotations of camera images: `visualization_msgs/ImageMarker` (and arrays of them) and
//! `foxglove.ImageAnnotations` (circles, points and lines, texts) in whatever encoding they were
//! recorded, read into one list of [`Shape`]s in the image's pixels; [`index`] matches an
//! annotation topic to an image by header stamp, [`draw`] paints shapes onto pixels.

pub mod draw;
pub mod index;

use crate::spatial::scene::read::{color, header, items, nanos, sub, text};
use bagscope_reader::definition::msg::MsgDef;
use bagscope_reader::encoding::{Node, Value};

/// A colour, 8-bit RGBA.
pub type Rgba = [u8; 4];

/// Most points one annotation message is read with; beyond, the rest are left out and said.
pub const MAX_POINTS: usize = 200_000;

/// What a shape is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A circle about `points[0]`, of `radius`.
    Circle,
    /// Lines joining the points in turn.
    LineStrip,
    /// A line strip closed back to its first point.
    LineLoop,
    /// Lines joining points 0-1, 2-3, ….
    LineList,
    /// A closed polygon, filled where `fill` is set.
    Polygon,
    /// Points, each a dot of `thickness` pixels.
    Points,
    /// `text` at `points[0]` (its top-left corner).
    Text,
}

/// One annotation, in the image's pixels (x right, y down, 0 at the top-left pixel's corner).
#[derive(Debug, Clone, PartialEq)]
pub struct Shape {
    /// What it is.
    pub kind: Kind,
    /// Its points (a circle's centre, a text's corner).
    pub points: Vec<[f32; 2]>,
    /// The line (or text) colour.
    pub color: Rgba,
    /// One colour a point, where given (else `color`).
    pub colors: Vec<Rgba>,
    /// The fill, where filled.
    pub fill: Option<Rgba>,
    /// Line width or point size, pixels.
    pub thickness: f32,
    /// A circle's radius, pixels.
    pub radius: f32,
    /// A text's words.
    pub text: String,
    /// A text's height, pixels.
    pub font_size: f32,
    /// Who drew it: `ns/id` of an ImageMarker, `circle 3` of ImageAnnotations.
    pub label: String,
}

impl Shape {
    fn new(kind: Kind, label: String) -> Shape {
        Shape {
            kind,
            points: Vec::new(),
            color: [255, 255, 255, 255],
            colors: Vec::new(),
            fill: None,
            thickness: 1.0,
            radius: 0.0,
            text: String::new(),
            font_size: 12.0,
            label,
        }
    }

    /// The distance in pixels from `p` to the shape's outline (or inside a filled one: 0).
    pub fn distance(&self, p: [f32; 2]) -> f32 {
        let d = |a: [f32; 2], b: [f32; 2]| seg_dist(p, a, b);
        let pts = &self.points;
        match self.kind {
            Kind::Circle => match pts.first() {
                Some(c) => {
                    let r = (p[0] - c[0]).hypot(p[1] - c[1]);
                    if self.fill.is_some() && r <= self.radius {
                        0.0
                    } else {
                        (r - self.radius).abs()
                    }
                }
                None => f32::INFINITY,
            },
            Kind::Points => pts
                .iter()
                .map(|q| (p[0] - q[0]).hypot(p[1] - q[1]))
                .fold(f32::INFINITY, f32::min),
            Kind::Text => match pts.first() {
                Some(q) => {
                    let w = self.font_size * 0.6 * self.text.chars().count() as f32;
                    let inside = p[0] >= q[0]
                        && p[0] <= q[0] + w
                        && p[1] >= q[1]
                        && p[1] <= q[1] + self.font_size;
                    if inside {
                        0.0
                    } else {
                        f32::INFINITY
                    }
                }
                None => f32::INFINITY,
            },
            Kind::LineList => pts
                .chunks_exact(2)
                .map(|w| d(w[0], w[1]))
                .fold(f32::INFINITY, f32::min),
            Kind::LineStrip | Kind::LineLoop | Kind::Polygon => {
                let closed = self.kind != Kind::LineStrip;
                if closed && self.fill.is_some() && inside(p, pts) {
                    return 0.0;
                }
                let mut best = pts
                    .windows(2)
                    .map(|w| d(w[0], w[1]))
                    .fold(f32::INFINITY, f32::min);
                if closed && pts.len() > 2 {
                    best = best.min(d(pts[pts.len() - 1], pts[0]));
                }
                if pts.len() == 1 {
                    best = (p[0] - pts[0][0]).hypot(p[1] - pts[0][1]);
                }
                best
            }
        }
    }
}

fn seg_dist(p: [f32; 2], a: [f32; 2], b: [f32; 2]) -> f32 {
    // In f64: a line from far outside the image keeps its place to the pixel.
    let (p, a, b) = (p.map(f64::from), a.map(f64::from), b.map(f64::from));
    let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
    let l2 = dx * dx + dy * dy;
    let t = if l2 > 0.0 {
        (((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / l2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    (p[0] - a[0] - t * dx).hypot(p[1] - a[1] - t * dy) as f32
}

/// Whether `p` is inside the polygon `pts` (even-odd).
pub fn inside(p: [f32; 2], pts: &[[f32; 2]]) -> bool {
    let mut c = false;
    let n = pts.len();
    for i in 0..n {
        let (a, b) = (pts[i], pts[(i + n - 1) % n]);
        if (a[1] > p[1]) != (b[1] > p[1])
            && p[0] < (b[0] - a[0]) * (p[1] - a[1]) / (b[1] - a[1]) + a[0]
        {
            c = !c;
        }
    }
    c
}

/// The annotations of one message, and what was left out of it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Annotations {
    /// The message's stamp: its header's (ImageMarker) or its first element's timestamp
    /// (ImageAnnotations); `None` where none is set.
    pub stamp: Option<u64>,
    /// The shapes.
    pub shapes: Vec<Shape>,
    /// ImageMarkers to remove (`ns/id` of `action` REMOVE).
    pub removes: Vec<String>,
    /// ImageMarker lifetimes, by shape (ns; 0: until replaced), in the order of `shapes`.
    pub lifetimes: Vec<i128>,
    /// What could not be drawn as it was (points past [`MAX_POINTS`], an unknown type).
    pub notes: Vec<String>,
}

/// Whether a type is one [`parse`] reads.
pub fn is_annotation_type(datatype: &str) -> bool {
    let t = datatype.replace("/msg/", "/");
    t.ends_with("/ImageMarker")
        || t.ends_with("/ImageMarkerArray")
        || t == "foxglove.ImageAnnotations"
        || t == "foxglove_msgs/ImageAnnotations"
}

/// The annotations of a decoded ImageMarker, an array of them (a `markers` field) or an
/// ImageAnnotations message.
pub fn parse(def: &MsgDef, node: &Node) -> Annotations {
    let mut out = Annotations::default();
    let mut budget = MAX_POINTS;
    if sub(def, node, "circles").is_some() || sub(def, node, "texts").is_some() {
        foxglove(def, node, &mut out, &mut budget);
    } else if sub(def, node, "markers").is_some() {
        for m in items(def, node, "markers") {
            marker(def, m, &mut out, &mut budget);
        }
    } else {
        marker(def, node, &mut out, &mut budget);
    }
    out
}

/// A message's stamp and its longest ImageMarker lifetime (ns), without reading its shapes:
/// what matching by stamp needs of every message.
pub fn stamp_and_lifetime(def: &MsgDef, node: &Node) -> (Option<u64>, u64) {
    let life = |m: &Node| {
        sub(def, m, "lifetime")
            .and_then(|l| nanos(def, l))
            .and_then(|l| u64::try_from(l).ok())
            .unwrap_or(0)
    };
    let element_stamp = |n: &Node| {
        sub(def, n, "timestamp")
            .and_then(|t| nanos(def, t))
            .and_then(|t| u64::try_from(t).ok())
            .filter(|&t| t > 0)
    };
    if sub(def, node, "circles").is_some() || sub(def, node, "texts").is_some() {
        let stamp = ["circles", "points", "texts"]
            .iter()
            .find_map(|f| items(def, node, f).iter().find_map(element_stamp));
        return (stamp, 0);
    }
    if sub(def, node, "markers").is_some() {
        let ms = items(def, node, "markers");
        let stamp = ms.iter().find_map(|m| header(def, m).1);
        return (stamp, ms.iter().map(life).max().unwrap_or(0));
    }
    (header(def, node).1, life(node))
}

fn point2(def: &MsgDef, n: &Node) -> Option<[f32; 2]> {
    let p = [n.number(def, "x")? as f32, n.number(def, "y")? as f32];
    p.iter().all(|v| v.is_finite()).then_some(p)
}

/// A colour field, or `None` where it is absent or fully transparent.
fn colour(def: &MsgDef, node: &Node, name: &str) -> Option<Rgba> {
    sub(def, node, name)
        .and_then(|c| color(def, c))
        .filter(|c| c[3] > 0)
}

/// The points of `name`, no more than `budget` of them.
fn points(
    def: &MsgDef,
    node: &Node,
    name: &str,
    out: &mut Annotations,
    budget: &mut usize,
) -> Vec<[f32; 2]> {
    let all = items(def, node, name);
    let take = all.len().min(*budget);
    if take < all.len() {
        out.notes.push(format!(
            "{} points: the first {take} drawn (at most {MAX_POINTS} a message)",
            all.len()
        ));
    }
    *budget -= take;
    all[..take].iter().filter_map(|p| point2(def, p)).collect()
}

fn marker(def: &MsgDef, node: &Node, out: &mut Annotations, budget: &mut usize) {
    let (_, stamp) = header(def, node);
    out.stamp = out.stamp.or(stamp);
    let ns = text(def, node, "ns").unwrap_or_default();
    let id = node.number(def, "id").unwrap_or(0.0) as i64;
    let label = format!("{ns}/{id}");
    if node.number(def, "action").unwrap_or(0.0) as i64 == 1 {
        out.removes.push(label);
        return;
    }
    let ty = node.number(def, "type").unwrap_or(0.0) as i64;
    let kind = match ty {
        0 => Kind::Circle,
        1 => Kind::LineStrip,
        2 => Kind::LineList,
        3 => Kind::Polygon,
        4 => Kind::Points,
        t => {
            out.notes
                .push(format!("{label}: ImageMarker type {t} is not one of 0-4"));
            return;
        }
    };
    let mut s = Shape::new(kind, label);
    s.color = colour(def, node, "outline_color").unwrap_or([255, 255, 255, 255]);
    let filled = node.number(def, "filled").unwrap_or(0.0) != 0.0;
    s.fill = filled.then(|| colour(def, node, "fill_color")).flatten();
    let scale = node.number(def, "scale").unwrap_or(1.0) as f32;
    s.colors = items(def, node, "outline_colors")
        .iter()
        .filter_map(|c| color(def, c))
        .collect();
    if kind == Kind::Circle {
        s.points = sub(def, node, "position")
            .and_then(|p| point2(def, p))
            .into_iter()
            .collect();
        s.radius = if scale.is_finite() { scale.abs() } else { 0.0 };
        s.thickness = 1.0;
    } else {
        s.points = points(def, node, "points", out, budget);
        s.thickness = if scale.is_finite() && scale > 0.0 {
            scale
        } else {
            1.0
        };
    }
    let life = sub(def, node, "lifetime")
        .and_then(|l| nanos(def, l))
        .unwrap_or(0);
    out.lifetimes.push(life.max(0));
    out.shapes.push(s);
}

fn foxglove(def: &MsgDef, node: &Node, out: &mut Annotations, budget: &mut usize) {
    let stamp_of = |n: &Node| {
        sub(def, n, "timestamp")
            .and_then(|t| nanos(def, t))
            .and_then(|t| u64::try_from(t).ok())
            .filter(|&t| t > 0)
    };
    for (i, c) in items(def, node, "circles").iter().enumerate() {
        out.stamp = out.stamp.or_else(|| stamp_of(c));
        let mut s = Shape::new(Kind::Circle, format!("circle {i}"));
        s.points = sub(def, c, "position")
            .and_then(|p| point2(def, p))
            .into_iter()
            .collect();
        s.radius = (c.number(def, "diameter").unwrap_or(0.0) / 2.0).abs() as f32;
        s.thickness = c.number(def, "thickness").unwrap_or(1.0) as f32;
        s.color = colour(def, c, "outline_color").unwrap_or([255, 255, 255, 255]);
        s.fill = colour(def, c, "fill_color");
        out.lifetimes.push(0);
        out.shapes.push(s);
    }
    for (i, p) in items(def, node, "points").iter().enumerate() {
        out.stamp = out.stamp.or_else(|| stamp_of(p));
        let ty = match &sub(def, p, "type").map(|t| &t.value) {
            Some(Value::String(s)) => match s.as_slice() {
                b"POINTS" => 1,
                b"LINE_LOOP" => 2,
                b"LINE_STRIP" => 3,
                b"LINE_LIST" => 4,
                _ => 0,
            },
            _ => p.number(def, "type").unwrap_or(0.0) as i64,
        };
        let kind = match ty {
            1 => Kind::Points,
            2 => Kind::LineLoop,
            3 => Kind::LineStrip,
            4 => Kind::LineList,
            t => {
                out.notes.push(format!(
                    "points {i}: type {t} is not POINTS, LINE_LOOP, LINE_STRIP or LINE_LIST"
                ));
                continue;
            }
        };
        let mut s = Shape::new(kind, format!("points {i}"));
        s.points = points(def, p, "points", out, budget);
        s.color = colour(def, p, "outline_color").unwrap_or([255, 255, 255, 255]);
        s.colors = items(def, p, "outline_colors")
            .iter()
            .filter_map(|c| color(def, c))
            .collect();
        s.fill = colour(def, p, "fill_color").filter(|_| kind == Kind::LineLoop);
        s.thickness = p.number(def, "thickness").unwrap_or(1.0) as f32;
        out.lifetimes.push(0);
        out.shapes.push(s);
    }
    for (i, t) in items(def, node, "texts").iter().enumerate() {
        out.stamp = out.stamp.or_else(|| stamp_of(t));
        let mut s = Shape::new(Kind::Text, format!("text {i}"));
        s.points = sub(def, t, "position")
            .and_then(|p| point2(def, p))
            .into_iter()
            .collect();
        s.text = text(def, t, "text").unwrap_or_default();
        s.font_size = t
            .number(def, "font_size")
            .unwrap_or(12.0)
            .clamp(1.0, 1000.0) as f32;
        s.color = colour(def, t, "text_color").unwrap_or([255, 255, 255, 255]);
        s.fill = colour(def, t, "background_color");
        out.lifetimes.push(0);
        out.shapes.push(s);
    }
    for s in &mut out.shapes {
        if !s.thickness.is_finite() || s.thickness <= 0.0 {
            s.thickness = 1.0;
        }
        if !s.radius.is_finite() {
            s.radius = 0.0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances_to_shapes() {
        let mut s = Shape::new(Kind::Polygon, "a".into());
        s.points = vec![[0.0, 0.0], [10.0, 0.0], [10.0, 10.0], [0.0, 10.0]];
        assert_eq!(s.distance([5.0, -2.0]), 2.0);
        assert_eq!(s.distance([5.0, 5.0]), 5.0);
        s.fill = Some([1, 2, 3, 255]);
        assert_eq!(s.distance([5.0, 5.0]), 0.0);
        let mut c = Shape::new(Kind::Circle, "c".into());
        c.points = vec![[0.0, 0.0]];
        c.radius = 5.0;
        assert_eq!(c.distance([8.0, 0.0]), 3.0);
    }
}
