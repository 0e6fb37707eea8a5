//! 3D things through a camera: a cloud's points painted into a layer the image's size, lines
//! clipped in front of the camera and cut so the lens bends them, markers as shapes.

use super::overlay::Layers;
use super::Camera;
use crate::geom::Pose;
use crate::media::annotate::draw::Canvas;
use crate::media::annotate::{Kind as ShapeKind, Shape};
use crate::spatial::scene::cloud::Points;
use crate::spatial::scene::markers;

/// Paints `p`'s points (placed in the camera's frame by `place`) into `px`, leaving out those
/// behind a surface of `hidden_by` (1/z a pixel, 0: none: the robot drawn into the image);
/// returns how many landed in the image.
pub(super) fn paint_points(
    cam: &Camera,
    place: &Pose,
    p: &Points,
    size: (u32, u32),
    layers: &Layers,
    hidden_by: Option<&[f32]>,
    px: &mut [u8],
) -> usize {
    let mut canvas = Canvas {
        width: size.0,
        height: size.1,
        px,
    };
    let by_field = layers.color_field.is_some() && p.value.len() == p.xyz.len();
    let (lo, hi) = if by_field {
        p.value
            .iter()
            .filter(|v| v.is_finite())
            .fold((f32::INFINITY, f32::NEG_INFINITY), |(a, b), &v| {
                (a.min(v), b.max(v))
            })
    } else {
        (0.5, 30.0)
    };
    let span = if hi > lo { hi - lo } else { 1.0 };
    let r = layers.point_size.max(1.0) / 2.0;
    // A dot's pixels and their coverage, worked out once: a million points are a million
    // small stamps, not a million discs measured pixel by pixel.
    let reach = r.ceil() as i64;
    let dot: Vec<(i64, i64, f32)> = (-reach..=reach)
        .flat_map(|dy| (-reach..=reach).map(move |dx| (dx, dy)))
        .map(|(dx, dy)| {
            (
                dx,
                dy,
                (r + 0.5 - (dx as f32).hypot(dy as f32)).clamp(0.0, 1.0),
            )
        })
        .filter(|d| d.2 > 0.0)
        .collect();
    let lut = crate::media::image::colormap_lut(crate::media::image::Colormap::Turbo);
    let (w, h) = (f64::from(size.0), f64::from(size.1));
    let mut n = 0;
    for (i, q) in p.xyz.iter().enumerate() {
        let c = place.apply([f64::from(q[0]), f64::from(q[1]), f64::from(q[2])]);
        let Some(uv) = cam.project(c, layers.rectified) else {
            continue;
        };
        if uv[0] < -0.5 || uv[1] < -0.5 || uv[0] >= w - 0.5 || uv[1] >= h - 0.5 {
            continue;
        }
        let (x, y) = (uv[0].round() as i64, uv[1].round() as i64);
        // Behind the robot's surface at its pixel (1/z smaller than the robot's): hidden.
        if let Some(d) = hidden_by {
            let at = y as usize * size.0 as usize + x as usize;
            if d.get(at)
                .is_some_and(|&rz| rz > 0.0 && 1.0 / (c[2] as f32) < rz)
            {
                continue;
            }
        }
        let v = if by_field { p.value[i] } else { c[2] as f32 };
        let k = (((v - lo) / span).clamp(0.0, 1.0) * 255.0).round() as usize;
        let [cr, cg, cb] = lut[k.min(255)];
        let col = [cr, cg, cb, 255];
        for &(dx, dy, cov) in &dot {
            canvas.blend(x + dx, y + dy, col, cov);
        }
        n += 1;
    }
    n
}

/// A polyline through 3D points of the camera's frame: each segment clipped in front of the
/// camera and cut in pieces, so the lens bends it as it bends the picture.
pub(super) fn line_shape(
    cam: &Camera,
    rectified: bool,
    pts: &[[f64; 3]],
    closed: bool,
    label: String,
) -> Shape {
    let mut s = Shape {
        kind: ShapeKind::LineStrip,
        points: Vec::new(),
        color: [255, 255, 255, 255],
        colors: Vec::new(),
        fill: None,
        thickness: 1.5,
        radius: 0.0,
        text: String::new(),
        font_size: 12.0,
        label,
    };
    let near = 0.05;
    let pieces = if rectified || cam.lens.model == super::Model::None {
        1
    } else {
        12
    };
    let mut seq: Vec<[f64; 3]> = pts.to_vec();
    if closed && pts.len() > 2 {
        seq.push(pts[0]);
    }
    for w in seq.windows(2) {
        let (mut a, mut b) = (w[0], w[1]);
        if a[2] < near && b[2] < near {
            continue;
        }
        let cut = |p: [f64; 3], q: [f64; 3]| {
            let t = (near - p[2]) / (q[2] - p[2]);
            [p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1]), near]
        };
        if a[2] < near {
            a = cut(a, b);
        } else if b[2] < near {
            b = cut(b, a);
        }
        for k in 0..=pieces {
            let f = k as f64 / pieces as f64;
            let p = [
                a[0] + f * (b[0] - a[0]),
                a[1] + f * (b[1] - a[1]),
                a[2] + f * (b[2] - a[2]),
            ];
            if let Some(uv) = cam.project(p, rectified) {
                s.points.push([uv[0] as f32, uv[1] as f32]);
            }
        }
    }
    s
}

pub(super) fn text_shape(at: [f64; 2], text: &str, color: [u8; 4], label: String) -> Shape {
    Shape {
        kind: ShapeKind::Text,
        points: vec![[at[0] as f32, at[1] as f32]],
        color,
        colors: Vec::new(),
        fill: None,
        thickness: 1.0,
        radius: 0.0,
        text: text.to_string(),
        font_size: 12.0,
        label,
    }
}

/// A marker, placed in the camera's frame by `place` (its pose included), as shapes.
pub(super) fn marker_shapes(
    cam: &Camera,
    rectified: bool,
    place: &Pose,
    m: &markers::Marker,
    topic: &str,
) -> Vec<Shape> {
    let label = format!("{topic} {}/{}", m.ns, m.id);
    let col = m.color;
    let [sx, sy, sz] = m.scale.map(|v| v / 2.0);
    let pts: Vec<[f64; 3]> = m.points.iter().map(|p| place.apply(*p)).collect();
    let mut out = Vec::new();
    let mut line = |ps: &[[f64; 3]], closed: bool| {
        let mut s = line_shape(cam, rectified, ps, closed, label.clone());
        s.color = col;
        if s.points.len() > 1 {
            out.push(s);
        }
    };
    match m.kind {
        0 => {
            let (a, b) = match m.points.as_slice() {
                [a, b, ..] => (place.apply(*a), place.apply(*b)),
                _ => (place.apply([0.0; 3]), place.apply([m.scale[0], 0.0, 0.0])),
            };
            line(&[a, b], false);
        }
        1 | 3 => {
            // A box (a cylinder drawn as the box it stands in).
            let c = |x: f64, y: f64, z: f64| place.apply([x * sx, y * sy, z * sz]);
            let bottom = [
                c(-1., -1., -1.),
                c(1., -1., -1.),
                c(1., 1., -1.),
                c(-1., 1., -1.),
            ];
            let top = [
                c(-1., -1., 1.),
                c(1., -1., 1.),
                c(1., 1., 1.),
                c(-1., 1., 1.),
            ];
            line(&bottom, true);
            line(&top, true);
            for i in 0..4 {
                line(&[bottom[i], top[i]], false);
            }
        }
        2 => {
            // A sphere: its outline as seen, a circle of the projected radius.
            let centre = place.apply([0.0; 3]);
            if let Some(uv) = cam.project(centre, rectified) {
                let k = if rectified {
                    cam.drawn_p()[0]
                } else {
                    cam.drawn_k()[0]
                };
                let mut s = text_shape(uv, "", col, label.clone());
                s.kind = ShapeKind::Circle;
                s.radius = (k * sx.max(sy).max(sz) / centre[2].max(1e-6)) as f32;
                s.thickness = 1.5;
                out.push(s);
            }
        }
        4 => line(&pts, false),
        5 => {
            for w in pts.chunks_exact(2) {
                line(w, false);
            }
        }
        11 => {
            for w in pts.chunks_exact(3) {
                line(w, true);
            }
        }
        9 => {
            if let Some(uv) = cam.project(place.apply([0.0; 3]), rectified) {
                out.push(text_shape(uv, &m.text, col, label.clone()));
            }
        }
        _ => {
            // Points, cube and sphere lists, meshes: their points (a mesh: its origin).
            let pts = if pts.is_empty() {
                vec![place.apply([0.0; 3])]
            } else {
                pts
            };
            let mut s = text_shape([0.0; 2], "", col, label.clone());
            s.kind = ShapeKind::Points;
            s.points.clear();
            s.thickness = 4.0;
            for (i, p) in pts.iter().enumerate() {
                if let Some(uv) = cam.project(*p, rectified) {
                    s.points.push([uv[0] as f32, uv[1] as f32]);
                    if let Some(c) = m.colors.get(i) {
                        s.colors.push(*c);
                    }
                }
            }
            if s.colors.len() != s.points.len() {
                s.colors.clear();
            }
            out.push(s);
        }
    }
    out
}
