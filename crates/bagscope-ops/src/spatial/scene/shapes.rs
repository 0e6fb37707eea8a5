//! Solid shapes (box, sphere, cylinder, cone, arrow) as instances of four unit shapes, each
//! placed, scaled and coloured on its own and lit by a fixed light; the renderer keeps the unit
//! shapes on the GPU and draws every instance of one in one call, so a scene of ten thousand
//! markers is ten thousand small records, not a million triangles.

use std::sync::OnceLock;

use super::{Rgba, Scene};
use crate::geom::{f32s, Pose};

/// Sides of round shapes.
const ROUND: usize = 16;
/// Rings of a sphere.
const RINGS: usize = 8;

fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

fn norm(a: [f64; 3]) -> f64 {
    (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt()
}

/// A colour lit from above and a little to the side by a triangle's normal.
pub(super) fn shade(c: Rgba, n: [f64; 3]) -> Rgba {
    const L: [f64; 3] = [0.32, 0.45, 0.83];
    let len = norm(n);
    let d = if len > 0.0 {
        ((n[0] * L[0] + n[1] * L[1] + n[2] * L[2]) / len).abs()
    } else {
        1.0
    };
    let k = 0.55 + 0.45 * d;
    [
        (f64::from(c[0]) * k) as u8,
        (f64::from(c[1]) * k) as u8,
        (f64::from(c[2]) * k) as u8,
        c[3],
    ]
}

/// The unit shapes solids are drawn from, each within the box of side 1 centred on its origin.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Shape {
    /// A box of side 1.
    Cube,
    /// A sphere of diameter 1 (8 rings of 16 sides).
    Sphere,
    /// A cylinder along z: diameter 1, from z = -0.5 to 0.5 (16 sides).
    Cylinder,
    /// A cone along z: a base of diameter 1 at z = -0.5, its tip at 0.5.
    Cone,
}

/// A unit shape's triangles: corners (three a triangle) and each corner's normal (its
/// triangle's, of unit length).
#[derive(Debug)]
pub struct UnitMesh {
    /// Corners.
    pub pos: Vec<[f32; 3]>,
    /// Normals.
    pub normal: Vec<[f32; 3]>,
}

impl Shape {
    /// Every shape, in the order of [`Shape::index`].
    pub const ALL: [Shape; 4] = [Shape::Cube, Shape::Sphere, Shape::Cylinder, Shape::Cone];

    /// Its place in [`Shape::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// Its triangles, made once.
    pub fn mesh(self) -> &'static UnitMesh {
        static MESHES: OnceLock<[UnitMesh; 4]> = OnceLock::new();
        &MESHES.get_or_init(|| Shape::ALL.map(unit))[self.index()]
    }

    /// How many triangles it has.
    pub fn triangles(self) -> usize {
        self.mesh().pos.len() / 3
    }
}

/// Builds a unit shape's triangles.
fn unit(shape: Shape) -> UnitMesh {
    let mut m = UnitMesh {
        pos: Vec::new(),
        normal: Vec::new(),
    };
    let mut tri = |a: [f64; 3], b: [f64; 3], c: [f64; 3]| {
        let n = cross(sub(b, a), sub(c, a));
        let len = norm(n);
        let n = if len > 0.0 {
            [n[0] / len, n[1] / len, n[2] / len]
        } else {
            [0.0; 3]
        };
        for p in [a, b, c] {
            m.pos.push(f32s(p));
            m.normal.push(f32s(n));
        }
    };
    match shape {
        Shape::Cube => {
            let v = |i: usize| box_corner(i).map(f64::from);
            for [a, b, c, d] in [
                [0, 2, 3, 1],
                [4, 5, 7, 6],
                [0, 1, 5, 4],
                [2, 6, 7, 3],
                [0, 4, 6, 2],
                [1, 3, 7, 5],
            ] {
                tri(v(a), v(b), v(c));
                tri(v(a), v(c), v(d));
            }
        }
        Shape::Sphere => {
            let p = |i: usize, j: usize| {
                let th = std::f64::consts::PI * i as f64 / RINGS as f64;
                let ph = std::f64::consts::TAU * j as f64 / ROUND as f64;
                [
                    0.5 * th.sin() * ph.cos(),
                    0.5 * th.sin() * ph.sin(),
                    0.5 * th.cos(),
                ]
            };
            for i in 0..RINGS {
                for j in 0..ROUND {
                    let (a, b, c, d) = (p(i, j), p(i + 1, j), p(i + 1, j + 1), p(i, j + 1));
                    if i != 0 {
                        tri(a, b, d);
                    }
                    if i + 1 != RINGS {
                        tri(b, c, d);
                    }
                }
            }
        }
        Shape::Cylinder | Shape::Cone => {
            let top_r = if shape == Shape::Cone { 0.0 } else { 0.5 };
            let ring = |r: f64, z: f64, j: usize| {
                let a = std::f64::consts::TAU * j as f64 / ROUND as f64;
                [r * a.cos(), r * a.sin(), z]
            };
            let (bot, top) = ([0.0, 0.0, -0.5], [0.0, 0.0, 0.5]);
            for j in 0..ROUND {
                let (a, b) = (ring(0.5, -0.5, j), ring(0.5, -0.5, j + 1));
                let (c, d) = (ring(top_r, 0.5, j + 1), ring(top_r, 0.5, j));
                tri(a, b, c);
                if top_r > 0.0 {
                    tri(a, c, d);
                    tri(top, d, c);
                }
                tri(bot, b, a);
            }
        }
    }
    m
}

/// Corner `i` (0 to 7) of the box of side 1 centred on the origin: bits 1, 2, 4 of `i` say
/// +x, +y, +z.
fn box_corner(i: usize) -> [f32; 3] {
    let h = |bit: usize| if i & bit != 0 { 0.5 } else { -0.5 };
    [h(1), h(2), h(4)]
}

/// A solid: a unit [`Shape`] scaled, turned and moved into the fixed frame, of one colour.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Solid {
    /// What it is.
    pub shape: Shape,
    /// The unit shape's x, y and z axes in the fixed frame (scaled and turned), then its
    /// centre: a corner `v` is drawn at `m[0] v.x + m[1] v.y + m[2] v.z + m[3]`.
    pub m: [[f32; 3]; 4],
    /// Its colour, unlit.
    pub color: Rgba,
}

impl Solid {
    /// A corner of its unit shape in the fixed frame.
    pub fn place(&self, v: [f32; 3]) -> [f32; 3] {
        let m = &self.m;
        std::array::from_fn(|r| m[0][r] * v[0] + m[1][r] * v[1] + m[2][r] * v[2] + m[3][r])
    }

    /// Its colour lit on a face of its unit shape whose normal is `n`: the face's normal once
    /// placed is the cofactor matrix of the axes (their cross products) times `n`, as the GPU
    /// lights it.
    pub fn lit(&self, n: [f32; 3]) -> Rgba {
        let col = |v: [f32; 3]| v.map(f64::from);
        let (a, b, c) = (col(self.m[0]), col(self.m[1]), col(self.m[2]));
        let (bc, ca, ab) = (cross(b, c), cross(c, a), cross(a, b));
        let n = n.map(f64::from);
        let placed: [f64; 3] = std::array::from_fn(|r| bc[r] * n[0] + ca[r] * n[1] + ab[r] * n[2]);
        shade(self.color, placed)
    }
}

impl Scene {
    /// One triangle (fixed-frame corners), shaded by its normal.
    pub fn triangle(&mut self, a: [f64; 3], b: [f64; 3], c: [f64; 3], color: Rgba) {
        let col = shade(color, cross(sub(b, a), sub(c, a)));
        for p in [a, b, c] {
            self.tri_pos.push(f32s(p));
            self.tri_color.push(col);
        }
    }

    /// A triangle with a colour per corner, unshaded (a marker's TRIANGLE_LIST, a map's cells).
    pub fn triangle_colored(&mut self, p: [[f64; 3]; 3], c: [Rgba; 3]) {
        for i in 0..3 {
            self.tri_pos.push(f32s(p[i]));
            self.tri_color.push(c[i]);
        }
    }

    /// A unit shape scaled by `s` along its axes, placed by `at`.
    pub fn solid(&mut self, shape: Shape, at: &Pose, s: [f64; 3], color: Rgba) {
        let axis = |i: usize| {
            let mut e = [0.0; 3];
            e[i] = s[i];
            f32s(at.turn(e))
        };
        self.solids.push(Solid {
            shape,
            m: [axis(0), axis(1), axis(2), f32s(at.t)],
            color,
        });
        self.solid_triangles += shape.triangles();
    }

    /// A box of size `s` centred on the pose.
    pub fn cube(&mut self, at: &Pose, s: [f64; 3], color: Rgba) {
        self.solid(Shape::Cube, at, s, color);
    }

    /// An ellipsoid of diameters `s` centred on the pose.
    pub fn sphere(&mut self, at: &Pose, s: [f64; 3], color: Rgba) {
        self.solid(Shape::Sphere, at, s, color);
    }

    /// A cylinder along the pose's z: diameters `s[0]`, `s[1]`, height `s[2]`, centred.
    pub fn cylinder(&mut self, at: &Pose, s: [f64; 3], color: Rgba) {
        self.solid(Shape::Cylinder, at, s, color);
    }

    /// An arrow from `a` to `b` (fixed frame): a shaft of diameter `shaft` and a head of
    /// diameter `head` and length `head_len` (at most the arrow's length).
    pub fn arrow(
        &mut self,
        a: [f64; 3],
        b: [f64; 3],
        shaft: f64,
        head: f64,
        head_len: f64,
        color: Rgba,
    ) {
        let d = sub(b, a);
        let len = norm(d);
        if len <= 0.0 || !len.is_finite() {
            return;
        }
        let hl = head_len.min(len);
        let q = quat_from_z(d);
        let along = |from: [f64; 3], k: f64| {
            [
                from[0] + d[0] / len * k,
                from[1] + d[1] / len * k,
                from[2] + d[2] / len * k,
            ]
        };
        let shaft_len = len - hl;
        if shaft_len > 0.0 {
            let t = along(a, shaft_len / 2.0);
            self.solid(
                Shape::Cylinder,
                &Pose { t, q },
                [shaft, shaft, shaft_len],
                color,
            );
        }
        let t = along(b, -hl / 2.0);
        self.solid(Shape::Cone, &Pose { t, q }, [head, head, hl], color);
    }

    /// A pose as an arrow along its x axis, `len` long.
    pub fn pose_arrow(&mut self, at: &Pose, len: f64, color: Rgba) {
        let b = at.apply([len, 0.0, 0.0]);
        self.arrow(at.t, b, len * 0.1, len * 0.2, len * 0.3, color);
    }

    /// A frame's axes: x red, y green, z blue, `len` long.
    pub fn axes(&mut self, at: &Pose, len: f64) {
        let o = at.t;
        for (i, c) in [[230, 50, 50, 255], [50, 200, 50, 255], [60, 90, 240, 255]]
            .into_iter()
            .enumerate()
        {
            let mut e = [0.0; 3];
            e[i] = len;
            self.line(o, at.apply(e), c, 0.0);
        }
    }

    /// Triangles drawn: the scene's own, its solids' and its meshes'.
    pub fn triangle_count(&self) -> usize {
        self.tri_pos.len() / 3
            + self.solid_triangles
            + self.meshes.iter().map(|m| m.pos.len()).sum::<usize>() / 3
    }

    /// The corners its solids put in the fixed frame (three a triangle) with their lit colours:
    /// what the GPU draws of them, on the CPU (for tests).
    pub fn solid_corners(&self) -> (Vec<[f32; 3]>, Vec<Rgba>) {
        let mut pos = Vec::with_capacity(self.solid_triangles * 3);
        let mut col = Vec::with_capacity(self.solid_triangles * 3);
        for s in &self.solids {
            let mesh = s.shape.mesh();
            pos.extend(mesh.pos.iter().map(|&v| s.place(v)));
            col.extend(mesh.normal.iter().map(|&n| s.lit(n)));
        }
        (pos, col)
    }

    /// Every triangle drawn, in the fixed frame with its corners' colours: the scene's own,
    /// then its solids', then its meshes' (for tests and exports).
    pub fn all_triangles(&self) -> (Vec<[f32; 3]>, Vec<Rgba>) {
        let (mut pos, mut col) = (self.tri_pos.clone(), self.tri_color.clone());
        let (p, c) = self.solid_corners();
        pos.extend(p);
        col.extend(c);
        let (p, c) = self.mesh_triangles();
        pos.extend(p);
        col.extend(c);
        (pos, col)
    }

    /// The corners of each solid's box in the fixed frame.
    pub(super) fn solid_box_corners(&self) -> impl Iterator<Item = [f32; 3]> + '_ {
        self.solids
            .iter()
            .flat_map(|s| (0..8).map(move |i| s.place(box_corner(i))))
    }
}

/// The rotation taking z to the direction `d`.
fn quat_from_z(d: [f64; 3]) -> [f64; 4] {
    let n = norm(d);
    let v = [d[0] / n, d[1] / n, d[2] / n];
    let dot = v[2];
    if dot < -0.999_999 {
        return [1.0, 0.0, 0.0, 0.0];
    }
    let c = cross([0.0, 0.0, 1.0], v);
    let q = [c[0], c[1], c[2], 1.0 + dot];
    let l = (q.iter().map(|x| x * x).sum::<f64>()).sqrt();
    [q[0] / l, q[1] / l, q[2] / l, q[3] / l]
}
