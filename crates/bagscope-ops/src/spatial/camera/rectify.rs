//! Undistorting an image: for each pixel of the undistorted (rectified) image, where it is in
//! the image as recorded, computed as OpenCV's `initUndistortRectifyMap` (and its fisheye
//! twin) computes it, kept in OpenCV's fixed point (1/32 px), and sampled as `remap` samples
//! 8-bit images (bilinear, 15-bit weights, a black border), so the picture is OpenCV's to the
//! grey level. Depth and float images are sampled at the nearest pixel: blending two depths
//! makes a depth that was not there.

use super::{Camera, Model};
use crate::media::image::{Image, Pixels};

/// OpenCV's `INTER_BITS`: a map's fractions are 1/32 px.
const BITS: i32 = 5;
const TAB: i32 = 1 << BITS;

/// Where each pixel of an undistorted image comes from in the recorded one.
#[derive(Debug, Clone, PartialEq)]
pub struct Map {
    /// The undistorted image's width.
    pub width: u32,
    /// Its height.
    pub height: u32,
    /// Per pixel, row by row: the source's `x` and `y` in 1/32 px (OpenCV's `CV_16SC2` and
    /// its fractions, joined).
    at: Vec<[i32; 2]>,
}

/// The inverse of a 3×3 matrix (row by row), or `None` where it is singular.
fn inverse(m: &[f64; 9]) -> Option<[f64; 9]> {
    let c = [
        m[4] * m[8] - m[5] * m[7],
        m[5] * m[6] - m[3] * m[8],
        m[3] * m[7] - m[4] * m[6],
    ];
    let det = m[0] * c[0] + m[1] * c[1] + m[2] * c[2];
    if !det.is_finite() || det.abs() < 1e-300 {
        return None;
    }
    let i = 1.0 / det;
    Some([
        c[0] * i,
        (m[2] * m[7] - m[1] * m[8]) * i,
        (m[1] * m[5] - m[2] * m[4]) * i,
        c[1] * i,
        (m[0] * m[8] - m[2] * m[6]) * i,
        (m[2] * m[3] - m[0] * m[5]) * i,
        c[2] * i,
        (m[1] * m[6] - m[0] * m[7]) * i,
        (m[0] * m[4] - m[1] * m[3]) * i,
    ])
}

fn mul(a: &[f64; 9], b: &[f64; 9]) -> [f64; 9] {
    let mut o = [0.0; 9];
    for r in 0..3 {
        for c in 0..3 {
            o[r * 3 + c] = (0..3).map(|k| a[r * 3 + k] * b[k * 3 + c]).sum();
        }
    }
    o
}

/// A coordinate in 1/32 px as OpenCV rounds it (`saturate_cast<int>`: to nearest, ties to
/// even), kept within what its 16-bit maps hold.
fn fixed(v: f64) -> i32 {
    if v.is_nan() {
        return i32::from(i16::MIN) << BITS;
    }
    let lim = f64::from(i32::from(i16::MAX) << BITS);
    (v * f64::from(TAB)).round_ties_even().clamp(-lim, lim) as i32
}

impl Map {
    /// The map of `initUndistortRectifyMap(K, D, R, new_k, size)`: `camera`'s `K` and lens
    /// (as drawn: ROI and binning applied), the rotation `r` and the undistorted image's
    /// matrix `new_k`. `None` where `new_k · r` is singular.
    pub fn new(camera: &Camera, r: &[f64; 9], new_k: &[f64; 9], size: (u32, u32)) -> Option<Map> {
        let ir = inverse(&mul(new_k, r))?;
        let k = camera.drawn_k();
        let (fx, fy, u0, v0) = (k[0], k[4], k[2], k[5]);
        let (w, h) = size;
        let mut at = Vec::with_capacity(w as usize * h as usize);
        let fisheye = camera.lens.model == Model::Equidistant;
        for i in 0..h {
            let i = f64::from(i);
            let (mut x_, mut y_, mut w_) =
                (i * ir[1] + ir[2], i * ir[4] + ir[5], i * ir[7] + ir[8]);
            for _ in 0..w {
                let (u, v) = if fisheye && w_ <= 0.0 {
                    (
                        if x_ > 0.0 {
                            f64::NEG_INFINITY
                        } else {
                            f64::INFINITY
                        },
                        if y_ > 0.0 {
                            f64::NEG_INFINITY
                        } else {
                            f64::INFINITY
                        },
                    )
                } else {
                    let iw = 1.0 / w_;
                    let (xd, yd) = camera.lens.distort(x_ * iw, y_ * iw);
                    (fx * xd + u0, fy * yd + v0)
                };
                at.push([fixed(u), fixed(v)]);
                x_ += ir[0];
                y_ += ir[3];
                w_ += ir[6];
            }
        }
        Some(Map {
            width: w,
            height: h,
            at,
        })
    }

    /// The map that rectifies `camera`'s images as `image_geometry`'s `rectifyImage` does
    /// (`R`, and `P`'s left 3×3 as the new matrix), at the drawn image's size.
    pub fn rectify(camera: &Camera) -> Option<Map> {
        let p = camera.drawn_p();
        let new_k = [p[0], p[1], p[2], p[4], p[5], p[6], p[8], p[9], p[10]];
        Map::new(camera, &camera.r, &new_k, camera.image_size())
    }

    /// `image` sampled through the map; the image must be the size the camera draws.
    pub fn apply(&self, image: &Image) -> Result<Image, String> {
        let n = image.width as usize * image.height as usize;
        let pixels = match &image.pixels {
            Pixels::Mono8(p) if p.len() == n => {
                Pixels::Mono8(self.bilinear::<1>(p, image.width, image.height))
            }
            Pixels::Rgba(p) if p.len() == n * 4 => {
                Pixels::Rgba(self.bilinear::<4>(p, image.width, image.height))
            }
            Pixels::U16(p) if p.len() == n => {
                Pixels::U16(self.nearest(p, image.width, image.height, 0))
            }
            Pixels::I16(p) if p.len() == n => {
                Pixels::I16(self.nearest(p, image.width, image.height, 0))
            }
            Pixels::F32(p) if p.len() == n => {
                Pixels::F32(self.nearest(p, image.width, image.height, f32::NAN))
            }
            Pixels::Mono8(_)
            | Pixels::Rgba(_)
            | Pixels::U16(_)
            | Pixels::I16(_)
            | Pixels::F32(_) => return Err("the image's pixels do not fill its size".into()),
            _ => return Err(format!("a {} image is not a camera's", image.encoding)),
        };
        Ok(Image {
            width: self.width,
            height: self.height,
            encoding: format!("{} rectified", image.encoding),
            pixels,
            map: None,
        })
    }

    /// `remap(src, INTER_LINEAR, BORDER_CONSTANT 0)` of an 8-bit image of `C` channels.
    pub fn bilinear<const C: usize>(&self, src: &[u8], sw: u32, sh: u32) -> Vec<u8> {
        let (sw, sh) = (sw as i32, sh as i32);
        let mut out = vec![0u8; self.at.len() * C];
        let px = |x: i32, y: i32, c: usize| -> i32 {
            if x >= 0 && y >= 0 && x < sw && y < sh {
                i32::from(src[(y as usize * sw as usize + x as usize) * C + c])
            } else {
                0
            }
        };
        for (o, &[fx32, fy32]) in out.chunks_exact_mut(C).zip(&self.at) {
            let (sx, sy) = (fx32 >> BITS, fy32 >> BITS);
            if sx >= sw || sx + 1 < 0 || sy >= sh || sy + 1 < 0 {
                continue;
            }
            let (ax, ay) = (fx32 & (TAB - 1), fy32 & (TAB - 1));
            let w = [
                (TAB - ax) * (TAB - ay) * 32,
                ax * (TAB - ay) * 32,
                (TAB - ax) * ay * 32,
                ax * ay * 32,
            ];
            for (c, o) in o.iter_mut().enumerate() {
                let v = px(sx, sy, c) * w[0]
                    + px(sx + 1, sy, c) * w[1]
                    + px(sx, sy + 1, c) * w[2]
                    + px(sx + 1, sy + 1, c) * w[3];
                *o = ((v + (1 << 14)) >> 15).clamp(0, 255) as u8;
            }
        }
        out
    }

    fn nearest<T: Copy>(&self, src: &[T], sw: u32, sh: u32, none: T) -> Vec<T> {
        self.at
            .iter()
            .map(|&[fx32, fy32]| {
                let (x, y) = ((fx32 + TAB / 2) >> BITS, (fy32 + TAB / 2) >> BITS);
                if x >= 0 && y >= 0 && (x as u32) < sw && (y as u32) < sh {
                    src[y as usize * sw as usize + x as usize]
                } else {
                    none
                }
            })
            .collect()
    }
}

impl Camera {
    /// `K` for the image as drawn: the ROI's offset taken off, divided by the binning.
    pub fn drawn_k(&self) -> [f64; 9] {
        let (bx, by) = (
            f64::from(self.binning.0.max(1)),
            f64::from(self.binning.1.max(1)),
        );
        let (rx, ry) = (f64::from(self.roi.x), f64::from(self.roi.y));
        let k = &self.k;
        [
            k[0] / bx,
            k[1] / bx,
            (k[2] - rx) / bx,
            0.0,
            k[4] / by,
            (k[5] - ry) / by,
            0.0,
            0.0,
            1.0,
        ]
    }

    /// `P` for the image as drawn (as [`Camera::drawn_k`]).
    pub fn drawn_p(&self) -> [f64; 12] {
        let (bx, by) = (
            f64::from(self.binning.0.max(1)),
            f64::from(self.binning.1.max(1)),
        );
        let (rx, ry) = (f64::from(self.roi.x), f64::from(self.roi.y));
        let p = &self.p;
        [
            p[0] / bx,
            p[1] / bx,
            (p[2] - rx * p[10]) / bx,
            (p[3] - rx * p[11]) / bx,
            p[4] / by,
            p[5] / by,
            (p[6] - ry * p[10]) / by,
            (p[7] - ry * p[11]) / by,
            p[8],
            p[9],
            p[10],
            p[11],
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spatial::camera::Lens;

    #[test]
    fn no_distortion_is_the_same_image() {
        let k = [100.0, 0.0, 16.0, 0.0, 100.0, 12.0, 0.0, 0.0, 1.0];
        let cam = Camera::new(32, 24, k, Lens::NONE).unwrap();
        let map = Map::rectify(&cam).unwrap();
        let src: Vec<u8> = (0..32 * 24).map(|i| (i * 7 % 251) as u8).collect();
        assert_eq!(map.bilinear::<1>(&src, 32, 24), src);
    }

    #[test]
    fn inverse_of_a_matrix() {
        let m = [2.0, 1.0, 0.0, 0.0, 3.0, 1.0, 1.0, 0.0, 4.0];
        let i = inverse(&m).unwrap();
        let p = mul(&m, &i);
        for (a, b) in p.iter().zip([1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]) {
            assert!((a - b).abs() < 1e-12);
        }
        assert!(inverse(&[0.0; 9]).is_none());
    }
}
