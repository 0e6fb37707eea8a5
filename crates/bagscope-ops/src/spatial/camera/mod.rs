//! A camera's calibration (`sensor_msgs/CameraInfo`, `foxglove.CameraCalibration`) as a
//! camera model: a point of the camera's optical frame to its pixel in the image as recorded
//! (through `K` and the lens, [`lens`]) or in the rectified image (through `P`), with the
//! binning and region of interest ROS's `image_geometry` applies; and the maps that undistort
//! an image ([`rectify`]), as OpenCV's `initUndistortRectifyMap` and `remap` make them.

pub mod lens;
pub mod overlay;
mod project;
pub mod rectify;
pub mod robot;

pub use lens::{project_points, Lens, Model};

use super::scene::read::{header, numbers, sub};
use bagscope_reader::definition::msg::MsgDef;
use bagscope_reader::encoding::Node;

/// Whether a message type is a camera calibration.
pub fn is_calibration_type(datatype: &str) -> bool {
    matches!(
        datatype.replace("/msg/", "/").as_str(),
        "sensor_msgs/CameraInfo" | "foxglove.CameraCalibration" | "foxglove_msgs/CameraCalibration"
    )
}

/// A region of interest of the full sensor (`CameraInfo.roi`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Roi {
    /// Left edge (px of the full image).
    pub x: u32,
    /// Top edge.
    pub y: u32,
    /// Width (0: the full image).
    pub width: u32,
    /// Height (0: the full image).
    pub height: u32,
}

/// A camera's calibration, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Camera {
    /// The image's width in pixels, as calibrated (before binning and ROI).
    pub width: u32,
    /// Its height.
    pub height: u32,
    /// `header.frame_id`: the optical frame (z forward, x right, y down).
    pub frame: String,
    /// `header.stamp` (ns), where set.
    pub stamp: Option<u64>,
    /// The intrinsic matrix, row by row.
    pub k: [f64; 9],
    /// The lens.
    pub lens: Lens,
    /// The rectification rotation, row by row (the identity for a monocular camera).
    pub r: [f64; 9],
    /// The projection matrix of the rectified image, row by row.
    pub p: [f64; 12],
    /// `binning_x`, `binning_y` (1: none).
    pub binning: (u32, u32),
    /// The region of interest.
    pub roi: Roi,
    /// Whatever was taken in place of a missing part (`P` of zeros, `R` of zeros), said.
    pub notes: Vec<String>,
    /// The square of the largest normalised radius the lens model is good for (worked out once:
    /// see [`Camera::project`]).
    reach2: f64,
}

/// A 3×3 matrix, row by row, from a field of 9 numbers.
fn mat3(v: &[f64]) -> Option<[f64; 9]> {
    v.try_into().ok()
}

const IDENTITY: [f64; 9] = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];

impl Camera {
    /// The calibration of a decoded `CameraInfo` (ROS 1's `D K R P`, ROS 2's `d k r p`) or
    /// `foxglove.CameraCalibration`, or what is wrong with it: a zero or non-finite focal
    /// length, a distortion model bagscope does not know, coefficients of the wrong number.
    pub fn from_message(def: &MsgDef, node: &Node) -> Result<Camera, String> {
        let (frame, stamp) = header(def, node);
        let field = |upper: &str| {
            let v = numbers(def, node, upper);
            if v.is_empty() {
                numbers(def, node, &upper.to_lowercase())
            } else {
                v
            }
        };
        let dim = |n: &str| node.number(def, n).unwrap_or(0.0);
        let (w, h) = (dim("width"), dim("height"));
        let model_name =
            super::scene::read::text(def, node, "distortion_model").unwrap_or_default();
        let model = Model::parse(&model_name).ok_or_else(|| {
            format!(
                "unknown distortion model {model_name:?} (bagscope knows plumb_bob, \
                 rational_polynomial and equidistant)"
            )
        })?;
        let d = field("D");
        let model = if model == Model::None && !d.is_empty() && d.iter().any(|&v| v != 0.0) {
            // ROS drivers that leave the model empty mean plumb_bob.
            Model::PlumbBob
        } else {
            model
        };
        let k = mat3(&field("K")).ok_or("K is not 9 numbers")?;
        let mut notes = Vec::new();
        let r = match mat3(&field("R")) {
            Some(r) if r.iter().any(|&v| v != 0.0) => r,
            _ => {
                notes.push("R is not set: the identity taken".to_string());
                IDENTITY
            }
        };
        let p = match <[f64; 12]>::try_from(field("P").as_slice()) {
            Ok(p) if p[0] != 0.0 && p[5] != 0.0 => p,
            _ => {
                notes.push("P is not set: K taken for the rectified image".to_string());
                [
                    k[0], k[1], k[2], 0.0, k[3], k[4], k[5], 0.0, k[6], k[7], k[8], 0.0,
                ]
            }
        };
        let bin = |n: &str| match node.number(def, n) {
            Some(b) if b >= 1.0 => b as u32,
            _ => 1,
        };
        let roi = sub(def, node, "roi")
            .map(|r| {
                let n = |f: &str| r.number(def, f).unwrap_or(0.0).max(0.0) as u32;
                Roi {
                    x: n("x_offset"),
                    y: n("y_offset"),
                    width: n("width"),
                    height: n("height"),
                }
            })
            .unwrap_or_default();
        let mut cam = Camera {
            width: w.max(0.0) as u32,
            height: h.max(0.0) as u32,
            frame,
            stamp,
            k,
            lens: Lens::new(model, &d)?,
            r,
            p,
            binning: (bin("binning_x"), bin("binning_y")),
            roi,
            notes,
            reach2: f64::INFINITY,
        };
        cam.check()?;
        cam.reach2 = cam.max_r2();
        Ok(cam)
    }

    /// A camera of `k` and `lens` with no rectification, binning or ROI.
    pub fn new(width: u32, height: u32, k: [f64; 9], lens: Lens) -> Result<Camera, String> {
        let mut cam = Camera {
            width,
            height,
            frame: String::new(),
            stamp: None,
            k,
            lens,
            r: IDENTITY,
            p: [
                k[0], k[1], k[2], 0.0, k[3], k[4], k[5], 0.0, k[6], k[7], k[8], 0.0,
            ],
            binning: (1, 1),
            roi: Roi::default(),
            notes: Vec::new(),
            reach2: f64::INFINITY,
        };
        cam.check()?;
        cam.reach2 = cam.max_r2();
        Ok(cam)
    }

    fn check(&self) -> Result<(), String> {
        if self.width == 0 || self.height == 0 {
            return Err(format!(
                "the calibration's image is {}×{}",
                self.width, self.height
            ));
        }
        for (name, m) in [("K", &self.k[..]), ("R", &self.r[..]), ("P", &self.p[..])] {
            if let Some(i) = m.iter().position(|v| !v.is_finite()) {
                return Err(format!("{name}[{i}] is {}", m[i]));
            }
        }
        if self.k[0] <= 0.0 || self.k[4] <= 0.0 {
            return Err(format!(
                "K has no focal length (fx {}, fy {})",
                self.k[0], self.k[4]
            ));
        }
        Ok(())
    }

    /// The drawn image's size: the ROI's (or the full image's) over the binning.
    pub fn image_size(&self) -> (u32, u32) {
        let w = if self.roi.width > 0 {
            self.roi.width
        } else {
            self.width
        };
        let h = if self.roi.height > 0 {
            self.roi.height
        } else {
            self.height
        };
        (w / self.binning.0.max(1), h / self.binning.1.max(1))
    }

    /// A pixel of the full-resolution image in the drawn image (ROI, then binning).
    fn to_drawn(&self, u: f64, v: f64) -> [f64; 2] {
        [
            (u - f64::from(self.roi.x)) / f64::from(self.binning.0.max(1)),
            (v - f64::from(self.roi.y)) / f64::from(self.binning.1.max(1)),
        ]
    }

    /// The pixel of point `p` (the camera's optical frame, m) in the image as recorded (the
    /// lens applied), or in the rectified image (`rectified`: through `P`, as
    /// `image_geometry`'s `project3dToPixel`). `None` behind the camera, and (recorded image)
    /// beyond the field the lens model is good for, where a polynomial folds back.
    pub fn project(&self, p: [f64; 3], rectified: bool) -> Option<[f64; 2]> {
        if !p.iter().all(|v| v.is_finite()) || p[2] <= 1e-6 {
            return None;
        }
        if rectified {
            let m = &self.p;
            let w = m[8] * p[0] + m[9] * p[1] + m[10] * p[2] + m[11];
            if !w.is_finite() || w <= 1e-12 {
                return None;
            }
            let u = (m[0] * p[0] + m[1] * p[1] + m[2] * p[2] + m[3]) / w;
            let v = (m[4] * p[0] + m[5] * p[1] + m[6] * p[2] + m[7]) / w;
            return Some(self.to_drawn(u, v));
        }
        let (x, y) = (p[0] / p[2], p[1] / p[2]);
        if x * x + y * y > self.reach2 {
            return None;
        }
        let (xd, yd) = self.lens.distort(x, y);
        let k = &self.k;
        Some(self.to_drawn(k[0] * xd + k[1] * yd + k[2], k[4] * yd + k[5]))
    }

    /// The square of the largest normalised radius the image's edge sees (with a margin):
    /// beyond it a distortion polynomial is outside what was calibrated.
    fn max_r2(&self) -> f64 {
        if self.lens.model == Model::None {
            return f64::INFINITY;
        }
        let (w, h) = (f64::from(self.width), f64::from(self.height));
        let k = &self.k;
        let mut best: f64 = 0.0;
        for i in 0..=16 {
            let f = f64::from(i) / 16.0;
            for (u, v) in [(f * w, 0.0), (f * w, h), (0.0, f * h), (w, f * h)] {
                let yd = (v - k[5]) / k[4];
                let xd = (u - k[2] - k[1] * yd) / k[0];
                match self.lens.undistort(xd, yd) {
                    Some((x, y)) => best = best.max(x * x + y * y),
                    None => return f64::INFINITY,
                }
            }
        }
        best * 1.2 * 1.2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roi_and_binning_move_the_pixel() {
        let k = [500.0, 0.0, 320.0, 0.0, 500.0, 240.0, 0.0, 0.0, 1.0];
        let mut c = Camera::new(640, 480, k, Lens::NONE).unwrap();
        assert_eq!(c.project([0.0, 0.0, 2.0], false), Some([320.0, 240.0]));
        assert_eq!(c.project([0.0, 0.0, -2.0], false), None);
        c.binning = (2, 2);
        c.roi = Roi {
            x: 100,
            y: 40,
            width: 400,
            height: 300,
        };
        assert_eq!(c.image_size(), (200, 150));
        assert_eq!(c.project([0.0, 0.0, 2.0], false), Some([110.0, 100.0]));
        assert_eq!(c.project([0.0, 0.0, 2.0], true), Some([110.0, 100.0]));
    }

    #[test]
    fn a_bad_calibration_is_said() {
        let k = [0.0, 0.0, 320.0, 0.0, 500.0, 240.0, 0.0, 0.0, 1.0];
        let e = Camera::new(640, 480, k, Lens::NONE).unwrap_err();
        assert!(e.contains("focal length"), "{e}");
        let mut k2 = k;
        k2[0] = 500.0;
        k2[2] = f64::NAN;
        assert!(Camera::new(640, 480, k2, Lens::NONE)
            .unwrap_err()
            .contains("K[2]"));
    }
}
