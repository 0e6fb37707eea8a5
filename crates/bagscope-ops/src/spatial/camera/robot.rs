//! The robot model drawn into a camera image, as RViz's camera display draws it over the
//! picture: every link's visual shapes (boxes, cylinders, spheres, meshes, in the URDF's or the
//! mesh's colours, lit as the 3D panel lights them) placed by the transform tree at the image's
//! stamp, carried into the camera's optical frame and rasterised through the calibration with a
//! depth buffer, so near links hide far ones. Triangles are split until their projected edges
//! are short (a lens bends a straight edge), and cut at a near plane in front of the camera.
//! The layer is painted on the worker and kept while the links stand where they stood for the
//! camera (a camera on the robot sees its arm move, not its base).

use std::path::PathBuf;
use std::sync::Arc;

use super::Camera;
use crate::geom::Pose;
use crate::spatial::scene::robot::{self, Robot};
use crate::spatial::scene::{Rgba, Scene};
use bagscope_reader::Bag;

/// How opaque the robot is over the picture (RViz's camera overlay draws at 0.5 by default;
/// a little more here so a grey link stays visible on a grey image).
pub const ROBOT_ALPHA: u8 = 190;

/// Triangles closer than this to the camera's plane (m) are cut there.
const NEAR: f64 = 0.02;

/// A projected triangle with an edge longer than this (px) is split in four.
const SPLIT_PX: f64 = 12.0;

/// How many times a triangle is split at most (4⁵ pieces).
const MAX_SPLITS: u32 = 5;

/// The robot painted into one image.
pub struct PaintedRobot {
    /// RGBA, the image's size.
    pub px: Vec<u8>,
    /// 1/z (m⁻¹) of the robot's surface at each pixel (0: none): clouds behind it are hidden.
    pub depth: Vec<f32>,
    /// The pixels it covers.
    pub covered: usize,
    /// Which painting this is (a new one each time the robot is painted anew).
    pub generation: u64,
}

/// What a painted robot depends on: each link's pose in the camera's frame, the camera, the
/// image's size and whether it is rectified.
#[derive(PartialEq)]
struct Key {
    poses: Vec<Option<Pose>>,
    camera: Camera,
    size: (u32, u32),
    rectified: bool,
}

/// The robot of a recording (its `/robot_description` or a URDF file), read once, and the
/// layer painted last.
pub struct RobotLayer {
    urdf: Option<PathBuf>,
    /// `None`: not read yet; `Some(None)`: the recording has no robot description.
    robot: Option<Option<Result<Robot, String>>>,
    last: Option<(Key, Arc<PaintedRobot>, Vec<String>)>,
    paintings: u64,
}

impl RobotLayer {
    /// The robot of the recording, or of the URDF file `urdf` in its place.
    pub fn new(urdf: Option<PathBuf>) -> RobotLayer {
        RobotLayer {
            urdf,
            robot: None,
            last: None,
            paintings: 0,
        }
    }

    /// The robot painted into an image of `size` seen by `cam`, each link placed in the
    /// camera's optical frame by `place`, with what could not be drawn.
    pub fn paint(
        &mut self,
        bag: &Bag,
        cam: &Camera,
        (size, rectified): ((u32, u32), bool),
        place: impl Fn(&str) -> Result<Pose, String>,
    ) -> Result<(Arc<PaintedRobot>, Vec<String>), String> {
        let urdf = self.urdf.clone();
        let robot = self
            .robot
            .get_or_insert_with(|| robot::load(bag, urdf.as_deref()));
        let rb = match robot {
            None => {
                return Err("no robot model (no /robot_description, and no --urdf given)".into())
            }
            Some(Err(e)) => return Err(format!("the robot model: {e}")),
            Some(Ok(rb)) => rb,
        };
        let poses: Vec<Option<Pose>> = rb
            .model()
            .links
            .iter()
            .map(|l| place(&l.name).ok())
            .collect();
        let key = Key {
            poses,
            camera: Camera {
                stamp: None,
                ..cam.clone()
            },
            size,
            rectified,
        };
        if let Some((k, done, notes)) = &self.last {
            if *k == key {
                return Ok((Arc::clone(done), notes.clone()));
            }
        }
        let mut scene = Scene::default();
        scene.fixed = cam.frame.clone();
        let names: Vec<String> = rb.model().links.iter().map(|l| l.name.clone()).collect();
        let status = rb.draw(&mut scene, (false, &cam.frame), |link| {
            names
                .iter()
                .position(|n| n == link)
                .and_then(|i| key.poses[i])
                .ok_or_else(|| format!("{link}: no transform"))
        });
        let (pos, col) = scene.all_triangles();
        let mut px = vec![0; size.0 as usize * size.1 as usize * 4];
        let (covered, depth) = paint_triangles(cam, rectified, &pos, &col, size, &mut px);
        self.paintings += 1;
        let done = Arc::new(PaintedRobot {
            px,
            depth,
            covered,
            generation: self.paintings,
        });
        self.last = Some((key, Arc::clone(&done), status.problems.clone()));
        Ok((done, status.problems))
    }
}

/// Rasterises triangles (corners in the camera's optical frame, three a triangle, with their
/// colours) into `px` (RGBA, `size`), the nearest surface on top, at [`ROBOT_ALPHA`]; returns
/// the pixels covered and each pixel's 1/z (0: none). A pixel is covered when its centre (OpenCV's: pixel `i` centred on `i`)
/// is inside a projected triangle.
pub fn paint_triangles(
    cam: &Camera,
    rectified: bool,
    pos: &[[f32; 3]],
    col: &[Rgba],
    size: (u32, u32),
    px: &mut [u8],
) -> (usize, Vec<f32>) {
    let mut r = Raster {
        cam,
        rectified,
        w: size.0 as usize,
        h: size.1 as usize,
        depth: vec![0.0; size.0 as usize * size.1 as usize],
        px,
    };
    for (t, c) in pos.chunks_exact(3).zip(col.chunks_exact(3)) {
        let v = [t[0], t[1], t[2]].map(|p| p.map(f64::from));
        let avg =
            |k: usize| ((u32::from(c[0][k]) + u32::from(c[1][k]) + u32::from(c[2][k])) / 3) as u8;
        let color = [avg(0), avg(1), avg(2)];
        for tri in clip_near(v) {
            r.triangle(tri, color, 0);
        }
    }
    (r.depth.iter().filter(|d| **d > 0.0).count(), r.depth)
}

/// The part of a triangle in front of the near plane, as at most two triangles.
fn clip_near(v: [[f64; 3]; 3]) -> Vec<[[f64; 3]; 3]> {
    let inside = v.map(|p| p[2] >= NEAR);
    if inside.iter().all(|&i| i) {
        return vec![v];
    }
    if !inside.iter().any(|&i| i) {
        return Vec::new();
    }
    // Sutherland–Hodgman against z = NEAR.
    let mut poly = Vec::with_capacity(4);
    for i in 0..3 {
        let (a, b) = (v[i], v[(i + 1) % 3]);
        let (ia, ib) = (inside[i], inside[(i + 1) % 3]);
        if ia {
            poly.push(a);
        }
        if ia != ib {
            let s = (NEAR - a[2]) / (b[2] - a[2]);
            poly.push([a[0] + (b[0] - a[0]) * s, a[1] + (b[1] - a[1]) * s, NEAR]);
        }
    }
    (1..poly.len().saturating_sub(1))
        .map(|i| [poly[0], poly[i], poly[i + 1]])
        .collect()
}

fn mid(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        (a[0] + b[0]) / 2.0,
        (a[1] + b[1]) / 2.0,
        (a[2] + b[2]) / 2.0,
    ]
}

struct Raster<'a> {
    cam: &'a Camera,
    rectified: bool,
    w: usize,
    h: usize,
    /// 1/z of the nearest surface drawn at each pixel (0: none).
    depth: Vec<f32>,
    px: &'a mut [u8],
}

impl Raster<'_> {
    fn triangle(&mut self, v: [[f64; 3]; 3], color: [u8; 3], splits: u32) {
        let uv = v.map(|p| self.cam.project(p, self.rectified));
        let long = match uv {
            [Some(a), Some(b), Some(c)] => {
                let d = |p: [f64; 2], q: [f64; 2]| (p[0] - q[0]).hypot(p[1] - q[1]);
                let (lo, hi) = (
                    -(self.w.max(self.h) as f64),
                    2.0 * self.w.max(self.h) as f64,
                );
                let out = |p: [f64; 2]| p[0] < lo || p[1] < lo || p[0] > hi || p[1] > hi;
                if out(a) && out(b) && out(c) && splits >= MAX_SPLITS {
                    return;
                }
                d(a, b).max(d(b, c)).max(d(c, a)) > SPLIT_PX
            }
            // A corner beyond what the lens model is good for: split, and leave out the
            // pieces that still have one.
            _ => true,
        };
        if long && splits < MAX_SPLITS {
            let (ab, bc, ca) = (mid(v[0], v[1]), mid(v[1], v[2]), mid(v[2], v[0]));
            for t in [[v[0], ab, ca], [ab, v[1], bc], [ca, bc, v[2]], [ab, bc, ca]] {
                self.triangle(t, color, splits + 1);
            }
            return;
        }
        let [Some(a), Some(b), Some(c)] = uv else {
            return;
        };
        self.fill([a, b, c], v.map(|p| (1.0 / p[2]) as f32), color);
    }

    /// Fills the pixels whose centres are inside `p`, 1/z interpolated across it.
    fn fill(&mut self, p: [[f64; 2]; 3], inv_z: [f32; 3], color: [u8; 3]) {
        let area =
            (p[1][0] - p[0][0]) * (p[2][1] - p[0][1]) - (p[2][0] - p[0][0]) * (p[1][1] - p[0][1]);
        if area.abs() < 1e-12 || !area.is_finite() {
            return;
        }
        // The pixel centres the triangle's box covers along an axis, within the image.
        let span = |axis: usize, size: usize| {
            let lo = p.iter().map(|q| q[axis]).fold(f64::INFINITY, f64::min);
            let hi = p.iter().map(|q| q[axis]).fold(f64::NEG_INFINITY, f64::max);
            (lo.ceil().max(0.0), hi.floor().min(size as f64 - 1.0))
        };
        let ((x0, x1), (y0, y1)) = (span(0, self.w), span(1, self.h));
        if x0 > x1 || y0 > y1 {
            return;
        }
        let edge = |a: [f64; 2], b: [f64; 2], x: f64, y: f64| {
            (b[0] - a[0]) * (y - a[1]) - (b[1] - a[1]) * (x - a[0])
        };
        for y in (y0 as usize)..=(y1 as usize) {
            for x in (x0 as usize)..=(x1 as usize) {
                let (fx, fy) = (x as f64, y as f64);
                let w0 = edge(p[1], p[2], fx, fy) / area;
                let w1 = edge(p[2], p[0], fx, fy) / area;
                let w2 = 1.0 - w0 - w1;
                if w0 < 0.0 || w1 < 0.0 || w2 < 0.0 {
                    continue;
                }
                let z = (w0 as f32) * inv_z[0] + (w1 as f32) * inv_z[1] + (w2 as f32) * inv_z[2];
                let i = y * self.w + x;
                if z <= self.depth[i] {
                    continue;
                }
                self.depth[i] = z;
                self.px[4 * i..4 * i + 4].copy_from_slice(&[
                    color[0],
                    color[1],
                    color[2],
                    ROBOT_ALPHA,
                ]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spatial::camera::{Lens, Model};

    fn camera(model: Model, d: &[f64]) -> Camera {
        let k = [400.0, 0.0, 159.5, 0.0, 410.0, 119.5, 0.0, 0.0, 1.0];
        let mut c = Camera::new(320, 240, k, Lens::new(model, d).unwrap()).unwrap();
        c.frame = "cam".into();
        c
    }

    /// A box's faces as triangles (corners in the camera's frame).
    fn cube(centre: [f64; 3], half: f64) -> Vec<[f32; 3]> {
        let c = |sx: f64, sy: f64, sz: f64| {
            [
                (centre[0] + sx * half) as f32,
                (centre[1] + sy * half) as f32,
                (centre[2] + sz * half) as f32,
            ]
        };
        let mut t = Vec::new();
        for axis in 0..3 {
            for s in [-1.0, 1.0] {
                let q = |a: f64, b: f64| {
                    let mut v = [0.0; 3];
                    v[axis] = s;
                    v[(axis + 1) % 3] = a;
                    v[(axis + 2) % 3] = b;
                    c(v[0], v[1], v[2])
                };
                t.extend([q(-1.0, -1.0), q(1.0, -1.0), q(1.0, 1.0)]);
                t.extend([q(-1.0, -1.0), q(1.0, 1.0), q(-1.0, 1.0)]);
            }
        }
        t
    }

    #[test]
    fn a_box_covers_the_pixels_its_surface_projects_to() {
        for (model, d) in [
            (Model::PlumbBob, vec![-0.2, 0.07, 0.001, -0.002, 0.0]),
            (Model::Equidistant, vec![0.05, -0.01, 0.002, 0.0]),
        ] {
            let cam = camera(model, &d);
            let tris = cube([0.15, -0.05, 1.2], 0.12);
            let cols = vec![[200, 30, 30, 255]; tris.len()];
            let mut px = vec![0; 320 * 240 * 4];
            let (n, _) = paint_triangles(&cam, false, &tris, &cols, (320, 240), &mut px);
            assert!(n > 500, "{model:?}: {n} pixels");
            // Points on the front face (z nearest) project into covered pixels (those within a
            // pixel of its silhouette left out: a pixel centre there may be just outside).
            let (mut hit, mut all) = (0, 0);
            for i in 2..=38 {
                for j in 2..=38 {
                    let p = [
                        0.15 - 0.12 + 0.24 * f64::from(i) / 40.0,
                        -0.05 - 0.12 + 0.24 * f64::from(j) / 40.0,
                        1.2 - 0.12,
                    ];
                    let uv = cam.project(p, false).unwrap();
                    let (x, y) = (uv[0].round() as usize, uv[1].round() as usize);
                    all += 1;
                    if px[4 * (y * 320 + x) + 3] == ROBOT_ALPHA {
                        hit += 1;
                    }
                }
            }
            assert_eq!(hit, all, "{model:?}");
            // Nothing painted far from the box: a pixel more than 3 px from every projected
            // point of its surface stays clear.
            let mut near = vec![false; 320 * 240];
            for i in 0..=60 {
                for j in 0..=60 {
                    for axis in 0..3 {
                        for s in [-1.0, 1.0] {
                            let mut v = [0.0; 3];
                            v[axis] = s * 0.12;
                            v[(axis + 1) % 3] = -0.12 + 0.24 * f64::from(i) / 60.0;
                            v[(axis + 2) % 3] = -0.12 + 0.24 * f64::from(j) / 60.0;
                            let p = [0.15 + v[0], -0.05 + v[1], 1.2 + v[2]];
                            let uv = cam.project(p, false).unwrap();
                            for dy in -3..=3i64 {
                                for dx in -3..=3i64 {
                                    let (x, y) =
                                        (uv[0].round() as i64 + dx, uv[1].round() as i64 + dy);
                                    if (0..320).contains(&x) && (0..240).contains(&y) {
                                        near[y as usize * 320 + x as usize] = true;
                                    }
                                }
                            }
                        }
                    }
                }
            }
            let stray = (0..320 * 240)
                .filter(|&i| px[4 * i + 3] > 0 && !near[i])
                .count();
            assert_eq!(stray, 0, "{model:?}");
        }
    }

    #[test]
    fn the_nearer_surface_is_on_top_and_what_is_behind_the_camera_is_cut() {
        let cam = camera(Model::None, &[]);
        let mut tris = cube([0.0, 0.0, 2.0], 0.3);
        let near = cube([0.0, 0.0, 1.0], 0.05);
        let mut cols = vec![[0, 0, 255, 255]; tris.len()];
        cols.extend(vec![[255, 0, 0, 255]; near.len()]);
        tris.extend(near);
        let mut px = vec![0; 320 * 240 * 4];
        paint_triangles(&cam, false, &tris, &cols, (320, 240), &mut px);
        let at = |x: usize, y: usize| &px[4 * (y * 320 + x)..4 * (y * 320 + x) + 4];
        // The small red box in front, in the middle; the blue one around it.
        assert_eq!(at(160, 120)[..3], [255, 0, 0]);
        assert_eq!(at(160 + 40, 120)[..3], [0, 0, 255]);
        // A triangle through the camera's plane: only its part in front is drawn, no panic.
        let through = [[-0.5, 0.0, -1.0], [0.5, 0.0, -1.0], [0.0, 0.1, 3.0]];
        let mut px = vec![0; 320 * 240 * 4];
        let (n, _) = paint_triangles(
            &cam,
            false,
            &through,
            &[[9, 9, 9, 255]; 3],
            (320, 240),
            &mut px,
        );
        assert!(n > 0);
        // Nothing in front at all.
        let behind = [[-0.5, 0.0, -1.0], [0.5, 0.0, -1.0], [0.0, 0.1, -3.0]];
        let mut px = vec![0; 320 * 240 * 4];
        assert_eq!(
            paint_triangles(
                &cam,
                false,
                &behind,
                &[[9, 9, 9, 255]; 3],
                (320, 240),
                &mut px
            )
            .0,
            0
        );
    }
}
