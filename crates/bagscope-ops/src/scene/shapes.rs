//! Solid shapes as triangles (box, sphere, cylinder, cone, arrow), placed by a pose and shaded
//! by a fixed light, so the renderer draws plain coloured triangles.

use super::{Rgba, Scene};
use crate::tf::Pose;

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

    /// A quad `a b c d` (in order round it) as two triangles.
    fn quad(&mut self, a: [f64; 3], b: [f64; 3], c: [f64; 3], d: [f64; 3], color: Rgba) {
        self.triangle(a, b, c, color);
        self.triangle(a, c, d, color);
    }

    /// A box of size `s` centred on the pose.
    pub fn cube(&mut self, at: &Pose, s: [f64; 3], color: Rgba) {
        let h = [s[0] / 2.0, s[1] / 2.0, s[2] / 2.0];
        let c = |i: usize| {
            at.apply([
                if i & 1 != 0 { h[0] } else { -h[0] },
                if i & 2 != 0 { h[1] } else { -h[1] },
                if i & 4 != 0 { h[2] } else { -h[2] },
            ])
        };
        let v: Vec<[f64; 3]> = (0..8).map(c).collect();
        for [a, b, cc, d] in [
            [0, 2, 3, 1],
            [4, 5, 7, 6],
            [0, 1, 5, 4],
            [2, 6, 7, 3],
            [0, 4, 6, 2],
            [1, 3, 7, 5],
        ] {
            self.quad(v[a], v[b], v[cc], v[d], color);
        }
    }

    /// An ellipsoid of diameters `s` centred on the pose.
    pub fn sphere(&mut self, at: &Pose, s: [f64; 3], color: Rgba) {
        let p = |i: usize, j: usize| {
            let th = std::f64::consts::PI * i as f64 / RINGS as f64;
            let ph = std::f64::consts::TAU * j as f64 / ROUND as f64;
            at.apply([
                s[0] / 2.0 * th.sin() * ph.cos(),
                s[1] / 2.0 * th.sin() * ph.sin(),
                s[2] / 2.0 * th.cos(),
            ])
        };
        for i in 0..RINGS {
            for j in 0..ROUND {
                let (a, b, c, d) = (p(i, j), p(i + 1, j), p(i + 1, j + 1), p(i, j + 1));
                if i != 0 {
                    self.triangle(a, b, d, color);
                }
                if i + 1 != RINGS {
                    self.triangle(b, c, d, color);
                }
            }
        }
    }

    /// A cylinder along the pose's z: diameters `s[0]`, `s[1]`, height `s[2]`, centred.
    pub fn cylinder(&mut self, at: &Pose, s: [f64; 3], color: Rgba) {
        self.frustum(
            at,
            [s[0] / 2.0, s[1] / 2.0],
            [s[0] / 2.0, s[1] / 2.0],
            s[2],
            color,
        );
    }

    /// A truncated cone along the pose's z from `-h/2` (radii `r0`) to `h/2` (radii `r1`).
    fn frustum(&mut self, at: &Pose, r0: [f64; 2], r1: [f64; 2], h: f64, color: Rgba) {
        let ring = |r: [f64; 2], z: f64, j: usize| {
            let a = std::f64::consts::TAU * j as f64 / ROUND as f64;
            at.apply([r[0] * a.cos(), r[1] * a.sin(), z])
        };
        let (bot, top) = (
            at.apply([0.0, 0.0, -h / 2.0]),
            at.apply([0.0, 0.0, h / 2.0]),
        );
        for j in 0..ROUND {
            let (a, b) = (ring(r0, -h / 2.0, j), ring(r0, -h / 2.0, j + 1));
            let (c, d) = (ring(r1, h / 2.0, j + 1), ring(r1, h / 2.0, j));
            self.triangle(a, b, c, color);
            if r1 != [0.0, 0.0] {
                self.triangle(a, c, d, color);
                self.triangle(top, d, c, color);
            }
            self.triangle(bot, b, a, color);
        }
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
        let shaft_len = len - hl;
        if shaft_len > 0.0 {
            let mid = [
                a[0] + d[0] / len * shaft_len / 2.0,
                a[1] + d[1] / len * shaft_len / 2.0,
                a[2] + d[2] / len * shaft_len / 2.0,
            ];
            self.frustum(
                &Pose { t: mid, q },
                [shaft / 2.0; 2],
                [shaft / 2.0; 2],
                shaft_len,
                color,
            );
        }
        let hm = [
            b[0] - d[0] / len * hl / 2.0,
            b[1] - d[1] / len * hl / 2.0,
            b[2] - d[2] / len * hl / 2.0,
        ];
        self.frustum(&Pose { t: hm, q }, [head / 2.0; 2], [0.0; 2], hl, color);
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

/// Coordinates as the renderer takes them.
pub fn f32s(p: [f64; 3]) -> [f32; 3] {
    [p[0] as f32, p[1] as f32, p[2] as f32]
}
