//! What an image panel lays over its picture: annotation topics matched by header stamp, 3D
//! layers projected through the camera's calibration, the TF tree's axes, and a rectify toggle.
//! The image worker works each overlay out ([`Overlays::work`]): clouds, scans and annotations of
//! many points come as a painted layer (one texture), the rest as shapes the UI thread draws
//! crisp at any zoom, with labels at a legible size; the pixel readout names the annotation
//! under the cursor.

use std::sync::Arc;

use egui::{Color32, Pos2, Rect, Stroke};

use bagscope_ops::media::annotate::draw::Canvas;
use bagscope_ops::media::annotate::{is_annotation_type, Kind, Shape};
use bagscope_ops::media::image::{Colormap, Image, Orientation, Pixels};
use bagscope_ops::spatial::camera::overlay::{
    calibration_among, calibration_beside, is_projectable_type, is_rectified_topic, Layers,
    Overlayer, Transforms,
};
use bagscope_ops::spatial::camera::rectify::Map;
use bagscope_ops::spatial::camera::Camera;
use bagscope_reader::Bag;

use super::super::inspector::InspectKey;

/// Shapes of more points than this are painted on the worker, not drawn point by point.
const PAINT_POINTS: usize = 2_000;

/// A panel's overlay settings, as the user set them.
#[derive(Debug, Clone, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct Settings {
    /// Annotation topics.
    #[serde(default, skip_serializing_if = "is_default")]
    pub annotations: Vec<String>,
    /// How far (ms) an annotation's stamp may be from the image's (0: exact).
    #[serde(default, skip_serializing_if = "is_default")]
    pub tolerance_ms: f64,
    /// The calibration topic (`None`: the one beside the image topic).
    #[serde(default, skip_serializing_if = "is_default")]
    pub calibration: Option<String>,
    /// 3D topics projected into the image.
    #[serde(default, skip_serializing_if = "is_default")]
    pub projected: Vec<String>,
    /// Draw the TF tree's frames.
    #[serde(default, skip_serializing_if = "is_default")]
    pub tf_axes: bool,
    /// Show the image undistorted.
    #[serde(default, skip_serializing_if = "is_default")]
    pub rectify: bool,
    /// Paint projected points by this field (`None`: by depth).
    #[serde(default, skip_serializing_if = "is_default")]
    pub color_field: Option<String>,
    /// Draw the robot model into the image.
    #[serde(default, skip_serializing_if = "is_default")]
    pub robot: bool,
}

impl Settings {
    /// Whether anything is laid over the image.
    pub fn any(&self) -> bool {
        self.draws() || self.rectify
    }

    /// Whether anything is drawn over the picture (rectifying alone draws nothing).
    pub fn draws(&self) -> bool {
        !self.annotations.is_empty() || self.needs_tf()
    }

    /// Whether the transform tree is needed.
    pub fn needs_tf(&self) -> bool {
        !self.projected.is_empty() || self.tf_axes || self.robot
    }

    fn layers(&self, topic: &str) -> Layers {
        Layers {
            annotations: self.annotations.clone(),
            tolerance_ns: (self.tolerance_ms.max(0.0) * 1e6) as u64,
            calibration: self.calibration.clone(),
            projected: self.projected.clone(),
            color_field: self.color_field.clone(),
            tf_axes: self.tf_axes,
            rectified: self.rectify || is_rectified_topic(topic),
            point_size: 2.0,
            robot: self.robot,
        }
    }
}

/// What the worker is asked: the settings, the image topic, and the transforms read so far.
#[derive(Clone, PartialEq)]
pub struct Asked {
    /// The settings.
    pub settings: Settings,
    /// The image topic's name.
    pub topic: Arc<str>,
    /// The transform tree, as far as the app has it (`Transforms::None` where the settings
    /// project nothing).
    pub tf: Transforms,
}

/// An overlay worked out, ready to draw.
#[derive(Default)]
pub struct Done {
    /// Shapes in the image's pixels (OpenCV's: pixel `i` centred on `i`).
    pub shapes: Vec<Shape>,
    /// Painted layer (projected clouds, many-point annotations), as drawn (turned and flipped).
    pub raster: Option<egui::ColorImage>,
    /// What went wrong or was left out.
    pub notes: Vec<String>,
    /// The image's stamp.
    pub stamp: u64,
    /// Cloud and scan points that landed in the image.
    pub points: usize,
    /// Pixels the robot model covers.
    pub robot_pixels: usize,
    /// Time to work it out (ms), rectification included.
    pub ms: f64,
    /// An annotation topic's stamps are still being read: the panel asks again.
    pub pending: bool,
}

/// The worker's side: an overlayer over the recording and the rectify maps made.
pub struct Overlays {
    over: Overlayer,
    maps: Vec<(Camera, Arc<Map>)>,
}

impl Overlays {
    /// Over `bag`, its robot model from `urdf` where given (`--urdf`).
    pub fn new(bag: Bag, urdf: Option<std::path::PathBuf>) -> Overlays {
        Overlays {
            over: Overlayer::new(bag, Transforms::None).with_urdf(urdf),
            maps: Vec::new(),
        }
    }

    /// The picture undistorted with the calibration (`Err`: why not; the picture then stays
    /// as recorded).
    pub fn rectify(
        &mut self,
        bag: &Bag,
        a: &Asked,
        key: InspectKey,
        img: &Image,
    ) -> Result<Image, String> {
        let cal = a
            .settings
            .calibration
            .clone()
            .or_else(|| calibration_beside(bag, &a.topic))
            .ok_or("no calibration topic to rectify with")?;
        let cam = self.over.camera(&cal, key.entry.time_ns)?;
        if cam.image_size() != (img.width, img.height) {
            return Err(format!(
                "{cal} calibrates {}×{} images, this one is {}×{}",
                cam.image_size().0,
                cam.image_size().1,
                img.width,
                img.height
            ));
        }
        let map = match self.maps.iter().find(|(c, _)| *c == cam) {
            Some((_, m)) => Arc::clone(m),
            None => {
                let m = Arc::new(Map::rectify(&cam).ok_or("P·R is singular")?);
                self.maps.push((cam, Arc::clone(&m)));
                if self.maps.len() > 4 {
                    self.maps.remove(0);
                }
                m
            }
        };
        map.apply(img)
    }

    /// The overlay of the image `key` (`w` × `h` pixels as recorded), its painted layer turned
    /// as the picture is.
    pub fn work(
        &mut self,
        a: &Asked,
        key: InspectKey,
        size: (u32, u32),
        orient: Orientation,
    ) -> Done {
        self.over.set_tf(a.tf.clone());
        let layers = a.settings.layers(&a.topic);
        let o = self
            .over
            .overlay(&a.topic, (key.conn, key.entry), size, &layers);
        let (w, h) = size;
        let mut raster = o.raster.map(|(_, _, r)| r);
        let mut shapes = Vec::with_capacity(o.shapes.len());
        for s in o.shapes {
            if s.points.len() > PAINT_POINTS {
                let px = raster.get_or_insert_with(|| vec![0; w as usize * h as usize * 4]);
                Canvas {
                    width: w,
                    height: h,
                    px,
                }
                .shape(&s);
            } else {
                shapes.push(s);
            }
        }
        let raster = raster.map(|r| {
            // Turned and flipped as the picture is (only then copied).
            let (dw, dh, px) = if orient == Orientation::default() {
                (w, h, r)
            } else {
                let img = Image {
                    width: w,
                    height: h,
                    encoding: "overlay".into(),
                    pixels: Pixels::Rgba(r),
                    map: None,
                };
                img.render(Colormap::Grey, (0.0, 1.0), orient)
            };
            egui::ColorImage::from_rgba_unmultiplied([dw as usize, dh as usize], &px)
        });
        let mut notes = o.notes;
        notes.dedup();
        Done {
            shapes,
            raster,
            notes,
            stamp: o.stamp,
            points: o.projected_points,
            robot_pixels: o.robot_pixels,
            ms: o.ms,
            pending: o.pending,
        }
    }
}

/// A point of the image as recorded (OpenCV's pixel coordinates) where it is drawn, in pixels
/// of the drawn (turned, flipped) image from its top-left corner.
pub fn to_drawn(p: [f32; 2], w: u32, h: u32, o: Orientation) -> Pos2 {
    let (mut x, mut y) = (p[0] + 0.5, p[1] + 0.5);
    let (mut cw, mut ch) = (w as f32, h as f32);
    if o.flip_h {
        x = cw - x;
    }
    if o.flip_v {
        y = ch - y;
    }
    for _ in 0..o.quarter_turns % 4 {
        // A quarter turn clockwise: (x, y) → (height − y, x).
        (x, y) = (ch - y, x);
        (cw, ch) = (ch, cw);
    }
    Pos2::new(x, y)
}

/// [`to_drawn`] undone.
pub fn from_drawn(p: Pos2, w: u32, h: u32, o: Orientation) -> [f32; 2] {
    let (mut x, mut y) = (p.x, p.y);
    let turns = o.quarter_turns % 4;
    // The size after all turns, walked back one turn at a time.
    let (mut cw, mut ch) = if turns % 2 == 1 {
        (h as f32, w as f32)
    } else {
        (w as f32, h as f32)
    };
    for _ in 0..turns {
        // Undo (x, y) → (ch_before − y, x): the size before the turn was (ch, cw).
        (x, y) = (y, cw - x);
        (cw, ch) = (ch, cw);
    }
    if o.flip_h {
        x = cw - x;
    }
    if o.flip_v {
        y = ch - y;
    }
    [x - 0.5, y - 0.5]
}

fn c32(c: [u8; 4]) -> Color32 {
    Color32::from_rgba_unmultiplied(c[0], c[1], c[2], c[3])
}

/// Draws `shapes` over the image drawn in `img_rect` at `scale` screen points a pixel.
pub fn paint(
    painter: &egui::Painter,
    shapes: &[Shape],
    img_rect: Rect,
    scale: f32,
    size: (u32, u32),
    o: Orientation,
) {
    let at = |p: [f32; 2]| img_rect.min + to_drawn(p, size.0, size.1, o).to_vec2() * scale;
    for s in shapes {
        let col = c32(s.color);
        let stroke = Stroke::new(s.thickness.clamp(1.0, 20.0), col);
        let pts: Vec<Pos2> = s.points.iter().map(|&p| at(p)).collect();
        match s.kind {
            Kind::Circle => {
                if let Some(&c) = pts.first() {
                    let fill = s.fill.map_or(Color32::TRANSPARENT, c32);
                    painter.circle(c, (s.radius * scale).max(1.0), fill, stroke);
                }
            }
            Kind::Points => {
                for (i, &p) in pts.iter().enumerate() {
                    let c = s.colors.get(i).map_or(col, |&c| c32(c));
                    painter.circle_filled(p, (s.thickness * scale / 2.0).max(1.5), c);
                }
            }
            Kind::LineList => {
                for (i, w) in pts.chunks_exact(2).enumerate() {
                    let c = s.colors.get(2 * i).map_or(col, |&c| c32(c));
                    painter.line_segment([w[0], w[1]], Stroke::new(stroke.width, c));
                }
            }
            Kind::LineStrip | Kind::LineLoop | Kind::Polygon => {
                let closed = s.kind != Kind::LineStrip;
                if closed && pts.len() > 2 {
                    if let Some(f) = s.fill {
                        painter.add(egui::Shape::convex_polygon(
                            pts.clone(),
                            c32(f),
                            Stroke::NONE,
                        ));
                    }
                    painter.add(egui::Shape::closed_line(pts, stroke));
                } else if s.colors.is_empty() {
                    painter.add(egui::Shape::line(pts, stroke));
                } else {
                    for (i, w) in pts.windows(2).enumerate() {
                        let c = s.colors.get(i).map_or(col, |&c| c32(c));
                        painter.line_segment([w[0], w[1]], Stroke::new(stroke.width, c));
                    }
                }
            }
            Kind::Text => {
                let Some(&p) = pts.first() else { continue };
                // Legible at any zoom: never smaller than 11 points on screen.
                let size = (s.font_size * scale).clamp(11.0, 64.0);
                let galley =
                    painter.layout_no_wrap(s.text.clone(), egui::FontId::proportional(size), col);
                let r = Rect::from_min_size(p, galley.size()).expand(2.0);
                if let Some(bg) = s.fill {
                    painter.rect_filled(r, 2.0, c32(bg));
                } else {
                    painter.rect_filled(r, 2.0, Color32::from_black_alpha(110));
                }
                painter.galley(p, galley, col);
            }
        }
    }
}

/// The annotation under `ptr` (screen), within 6 screen points: its label and what it is.
pub fn under(
    shapes: &[Shape],
    ptr: Pos2,
    img_rect: Rect,
    scale: f32,
    size: (u32, u32),
    o: Orientation,
) -> Option<String> {
    let p = from_drawn(((ptr - img_rect.min) / scale).to_pos2(), size.0, size.1, o);
    let tol = 6.0 / scale.max(1e-3);
    shapes
        .iter()
        .map(|s| (s.distance(p), s))
        .filter(|(d, _)| *d <= tol)
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, s)| {
            let what = match s.kind {
                Kind::Circle => "circle",
                Kind::LineStrip => "line strip",
                Kind::LineLoop => "line loop",
                Kind::LineList => "line list",
                Kind::Polygon => "polygon",
                Kind::Points => "points",
                Kind::Text => "text",
            };
            if s.text.is_empty() {
                format!("{} ({what})", s.label)
            } else {
                format!("{} ({what} {:?})", s.label, s.text)
            }
        })
}

/// The overlay menu of a panel on topic `topic`: which annotation topics, 3D layers and
/// calibration, the tolerance, the axes and the rectify toggle.
pub fn menu(
    ui: &mut egui::Ui,
    s: &mut Settings,
    topics: &[bagscope_reader::storage::Topic],
    topic: &str,
) {
    let ann: Vec<&String> = topics
        .iter()
        .filter(|t| is_annotation_type(&t.datatype))
        .map(|t| &t.name)
        .collect();
    let proj: Vec<&String> = topics
        .iter()
        .filter(|t| is_projectable_type(&t.datatype))
        .map(|t| &t.name)
        .collect();
    let cals: Vec<&str> = topics
        .iter()
        .filter(|t| bagscope_ops::spatial::camera::is_calibration_type(&t.datatype))
        .map(|t| t.name.as_str())
        .collect();
    let toggle = |ui: &mut egui::Ui, list: &mut Vec<String>, name: &String| {
        let mut on = list.contains(name);
        if ui.checkbox(&mut on, name.as_str()).changed() {
            if on {
                list.push(name.clone());
            } else {
                list.retain(|x| x != name);
            }
        }
    };
    ui.label(egui::RichText::new("Annotations (by header stamp)").strong());
    if ann.is_empty() {
        ui.weak("no ImageMarker or ImageAnnotations topics");
    }
    for t in ann {
        toggle(ui, &mut s.annotations, t);
    }
    ui.horizontal(|ui| {
        ui.label("tolerance");
        ui.add(
            egui::DragValue::new(&mut s.tolerance_ms)
                .range(0.0..=10_000.0)
                .speed(1.0)
                .suffix(" ms"),
        )
        .on_hover_text("0: only annotations of the image's own stamp");
    });
    ui.separator();
    ui.label(egui::RichText::new("Projected through the calibration").strong());
    let auto = calibration_among(&cals, topic);
    egui::ComboBox::from_id_salt(("calibration", topic))
        .selected_text(
            s.calibration
                .clone()
                .unwrap_or_else(|| format!("auto ({})", auto.unwrap_or("none"))),
        )
        .show_ui(ui, |ui| {
            ui.selectable_value(&mut s.calibration, None, "auto");
            for c in &cals {
                ui.selectable_value(&mut s.calibration, Some((*c).to_string()), *c);
            }
        });
    if proj.is_empty() {
        ui.weak("no cloud, scan or marker topics");
    }
    for t in proj {
        toggle(ui, &mut s.projected, t);
    }
    ui.checkbox(&mut s.tf_axes, "TF frames as axes");
    ui.checkbox(&mut s.robot, "Robot model")
        .on_hover_text("The URDF's links at the image's stamp, nearer links hiding farther ones");
    ui.checkbox(&mut s.rectify, "Rectify (undistort the image)")
        .on_hover_text(
            "Computed on the worker, cached by calibration; projections then go through P",
        );
}

fn is_default<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drawn_and_back() {
        for turns in 0..4u8 {
            for (fh, fv) in [(false, false), (true, false), (false, true), (true, true)] {
                let o = Orientation {
                    quarter_turns: turns,
                    flip_h: fh,
                    flip_v: fv,
                };
                let p = [13.25, 7.5];
                let d = to_drawn(p, 40, 30, o);
                let b = from_drawn(d, 40, 30, o);
                assert!(
                    (b[0] - p[0]).abs() < 1e-4 && (b[1] - p[1]).abs() < 1e-4,
                    "{o:?}: {d:?} {b:?}"
                );
            }
        }
        // One turn clockwise: the top-left corner goes to the top-right.
        let o = Orientation {
            quarter_turns: 1,
            ..Default::default()
        };
        assert_eq!(to_drawn([-0.5, -0.5], 40, 30, o), Pos2::new(30.0, 0.0));
    }
}
