//! `bagscope image --overlay`: annotations matched by header stamp and 3D layers projected
//! through the camera's calibration, painted onto the PNG; `--rectify` undistorts the picture
//! first (and projects through `P`).

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use clap::Args;

use super::glyphs::Glyphs;
use crate::cli::Error;
use bagscope_ops::media::annotate::draw::Canvas;
use bagscope_ops::media::annotate::{is_annotation_type, Kind};
use bagscope_ops::media::image::Image;
use bagscope_ops::spatial::camera::overlay::{
    calibration_beside, is_rectified_topic, Layers, Overlayer,
};
use bagscope_ops::spatial::camera::rectify::Map;
use bagscope_ops::spatial::tf::TfHistory;
use bagscope_reader::storage::IndexEntry;
use bagscope_reader::Bag;

/// What `bagscope image` lays over the picture.
#[derive(Args, Debug, Default)]
pub struct OverlayArgs {
    /// A topic drawn over the image (repeatable): annotations (ImageMarker, ImageMarkerArray,
    /// foxglove.ImageAnnotations) matched by header stamp, or a 3D layer (PointCloud2,
    /// PointCloud, LaserScan, Marker, MarkerArray, foxglove.SceneUpdate) projected through the
    /// camera's calibration.
    #[arg(long = "overlay", value_name = "TOPIC")]
    pub topics: Vec<String>,
    /// The calibration topic (CameraInfo or foxglove.CameraCalibration; default: the
    /// `camera_info` beside the image topic).
    #[arg(long, value_name = "TOPIC")]
    pub calibration: Option<String>,
    /// How far (ms) an annotation's stamp may be from the image's (default 0: the same stamp).
    #[arg(long, value_name = "MS", default_value_t = 0.0)]
    pub tolerance: f64,
    /// Draw the transform tree's frames as axes through the calibration.
    #[arg(long)]
    pub tf_axes: bool,
    /// Undistort the picture with the calibration (as image_geometry's rectifyImage), and
    /// project through `P`.
    #[arg(long)]
    pub rectify: bool,
    /// Paint projected points by this field (default: by depth, 0.5 to 30 m).
    #[arg(long, value_name = "FIELD")]
    pub color_by: Option<String>,
    /// A projected point's size in pixels.
    #[arg(long, value_name = "PX", default_value_t = 2.0)]
    pub point_size: f32,
    /// Draw the robot model (`/robot_description`, or the `--urdf` file) into the image, its
    /// links placed by the transform tree at the image's stamp.
    #[arg(long)]
    pub robot: bool,
}

impl OverlayArgs {
    /// Whether anything is asked.
    pub fn any(&self) -> bool {
        !self.topics.is_empty() || self.tf_axes || self.rectify || self.robot
    }
}

/// The overlay of an image: what to undistort it with, and how to paint over it.
pub struct Painter {
    over: Overlayer,
    layers: Layers,
    topic: String,
    calibration: Option<String>,
    rectify: bool,
}

impl Painter {
    /// Checks the topics asked (each must be in the recording, of a type that is drawn) and
    /// reads the transform tree where 3D layers need it.
    pub fn new(
        bag: &Bag,
        topic: &str,
        a: &OverlayArgs,
        urdf: Option<&std::path::Path>,
    ) -> crate::cli::Result<Painter> {
        let s = bag.summary();
        let type_of = |t: &str| {
            s.topics
                .iter()
                .find(|x| x.name == t)
                .map(|x| x.datatype.clone())
        };
        let mut layers = Layers {
            tolerance_ns: (a.tolerance.max(0.0) * 1e6) as u64,
            calibration: a.calibration.clone(),
            color_field: a.color_by.clone(),
            tf_axes: a.tf_axes,
            rectified: a.rectify || is_rectified_topic(topic),
            point_size: a.point_size,
            robot: a.robot,
            ..Default::default()
        };
        for t in &a.topics {
            let ty = type_of(t)
                .ok_or_else(|| Error::NotFound(format!("--overlay {t}: no such topic")))?;
            if is_annotation_type(&ty) {
                layers.annotations.push(t.clone());
            } else if bagscope_ops::spatial::camera::overlay::is_projectable_type(&ty) {
                layers.projected.push(t.clone());
            } else {
                return Err(Error::Invalid(format!(
                    "--overlay {t}: a {ty} is neither annotations nor a 3D layer"
                )));
            }
        }
        if let Some(c) = &a.calibration {
            if type_of(c).is_none() {
                return Err(Error::NotFound(format!("--calibration {c}: no such topic")));
            }
        }
        let needs_tf = !layers.projected.is_empty() || layers.tf_axes || layers.robot;
        let tf = if needs_tf && bagscope_ops::spatial::tf::has_transforms(bag, urdf) {
            let cancel = AtomicBool::new(false);
            Some(Arc::new(TfHistory::read(bag, None, urdf, &cancel)?))
        } else {
            None
        };
        let calibration = a
            .calibration
            .clone()
            .or_else(|| calibration_beside(bag, topic));
        if (needs_tf || a.rectify) && calibration.is_none() {
            return Err(Error::NotFound(format!(
                "no calibration for {topic}: name one with --calibration"
            )));
        }
        Ok(Painter {
            over: Overlayer::new(bag.clone(), tf.into())
                .waiting()
                .with_urdf(urdf.map(std::path::PathBuf::from)),
            layers,
            topic: topic.to_string(),
            calibration,
            rectify: a.rectify,
        })
    }

    /// The picture undistorted where `--rectify` asked.
    pub fn rectified(&mut self, img: Image, time_ns: u64) -> crate::cli::Result<Image> {
        let (true, Some(cal)) = (self.rectify, self.calibration.clone()) else {
            return Ok(img);
        };
        let cam = self.over.camera(&cal, time_ns).map_err(Error::Invalid)?;
        if cam.image_size() != (img.width, img.height) {
            return Err(Error::Invalid(format!(
                "{cal} calibrates {}×{} images, {} is {}×{}",
                cam.image_size().0,
                cam.image_size().1,
                self.topic,
                img.width,
                img.height
            )));
        }
        let map =
            Map::rectify(&cam).ok_or_else(|| Error::Invalid(format!("{cal}: P·R is singular")))?;
        map.apply(&img).map_err(Error::Invalid)
    }

    /// Paints the overlay of the message `(conn, entry)` onto `px` (RGBA, `w` × `h`); returns
    /// what it had to say.
    pub fn paint(
        &mut self,
        image: (usize, IndexEntry),
        w: u32,
        h: u32,
        px: &mut [u8],
    ) -> Vec<String> {
        let o = self.over.overlay(&self.topic, image, (w, h), &self.layers);
        let mut canvas = Canvas {
            width: w,
            height: h,
            px,
        };
        if let Some((rw, rh, r)) = &o.raster {
            if (*rw, *rh) == (w, h) {
                for (i, p) in r.chunks_exact(4).enumerate() {
                    if p[3] > 0 {
                        let (x, y) = ((i % w as usize) as i64, (i / w as usize) as i64);
                        canvas.blend(x, y, [p[0], p[1], p[2], 255], f32::from(p[3]) / 255.0);
                    }
                }
            }
        }
        let glyphs = Glyphs::new();
        for s in &o.shapes {
            match (s.kind, &glyphs, s.points.first()) {
                (Kind::Text, Some(g), Some(&at)) => {
                    if let Some(bg) = s.fill {
                        let w = g.width(&s.text, s.font_size);
                        canvas.rect(
                            at[0] - 2.0,
                            at[1],
                            at[0] + w + 2.0,
                            at[1] + s.font_size * 1.2,
                            bg,
                        );
                    }
                    g.draw(&mut canvas, at, &s.text, s.font_size, s.color);
                }
                _ => canvas.shape(s),
            }
        }
        let mut notes = o.notes;
        notes.dedup();
        if !self.layers.projected.is_empty() {
            notes.push(format!(
                "{} points projected in {:.1} ms",
                o.projected_points, o.ms
            ));
        }
        if self.layers.robot && o.robot_pixels > 0 {
            notes.push(format!("the robot covers {} pixels", o.robot_pixels));
        }
        notes
    }
}
