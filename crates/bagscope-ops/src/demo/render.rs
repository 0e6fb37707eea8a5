//! The demo robot's camera views of its room: a front camera (a ray cast into the walls), its depth
//! image and an overhead view.

use std::f64::consts::PI;

use super::{pose_at, Pose};

/// Size of the front camera's image.
pub(super) const FRONT_W: u32 = 160;
pub(super) const FRONT_H: u32 = 120;
/// The room: walls at x = ±5 m and y = ±3 m, 2 m high; the camera 0.5 m above the floor.
pub(super) const ROOM: (f64, f64) = (5.0, 3.0);
pub(super) const WALL_H: f64 = 2.0;
pub(super) const EYE_H: f64 = 0.5;
/// The cameras see 90° across.
pub(super) const FOV: f64 = PI / 2.0;

/// Where a ray from `(x, y)` along angle `a` meets the room's walls: distance, which wall
/// (0: +x, 1: -x, 2: +y, 3: -y), and the position along it (m).
pub(super) fn cast(x: f64, y: f64, a: f64) -> (f64, usize, f64) {
    let (c, s) = (a.cos(), a.sin());
    let (rx, wx) = if c > 1e-9 {
        ((ROOM.0 - x) / c, 0)
    } else if c < -1e-9 {
        ((-ROOM.0 - x) / c, 1)
    } else {
        (f64::INFINITY, 0)
    };
    let (ry, wy) = if s > 1e-9 {
        ((ROOM.1 - y) / s, 2)
    } else if s < -1e-9 {
        ((-ROOM.1 - y) / s, 3)
    } else {
        (f64::INFINITY, 2)
    };
    if rx < ry {
        (rx, wx, y + s * rx)
    } else {
        (ry, wy, x + c * ry)
    }
}

/// The front camera's view of the room from pose `p`: sky-blue ceiling, walls of four colours
/// with a door-sized stripe every metre, a checkered floor; rgb8.
pub(super) fn render_front(p: &Pose, w: u32, h: u32) -> Vec<u8> {
    let f = (f64::from(w) / 2.0) / (FOV / 2.0).tan();
    let horizon = f64::from(h) / 2.0;
    let mut out = vec![0u8; (w * h * 3) as usize];
    for col in 0..w {
        let off = (0.5 - (f64::from(col) + 0.5) / f64::from(w)) * FOV;
        let a = p.yaw + off;
        let (r, wall, along) = cast(p.x, p.y, a);
        let d = (r * off.cos()).max(0.05);
        let top = horizon - f * (WALL_H - EYE_H) / d;
        let bottom = horizon + f * EYE_H / d;
        let base: [f64; 3] = match wall {
            0 => [200.0, 80.0, 70.0],
            1 => [70.0, 120.0, 200.0],
            2 => [230.0, 200.0, 90.0],
            _ => [120.0, 190.0, 120.0],
        };
        let stripe = if along.rem_euclid(1.0) < 0.08 {
            0.6
        } else {
            1.0
        };
        let shade = (1.0 / (1.0 + 0.12 * d)) * stripe;
        for row in 0..h {
            let y = f64::from(row) + 0.5;
            let c: [f64; 3] = if y < top {
                [
                    150.0 + 40.0 * y / horizon,
                    190.0 + 30.0 * y / horizon,
                    235.0,
                ]
            } else if y <= bottom {
                [base[0] * shade, base[1] * shade, base[2] * shade]
            } else {
                // The floor point under this pixel.
                let fd = f * EYE_H / (y - horizon).max(1e-6) / off.cos();
                let (fx, fy) = (p.x + a.cos() * fd, p.y + a.sin() * fd);
                let dark = ((fx.floor() + fy.floor()) as i64).rem_euclid(2) == 0;
                let g = if dark { 95.0 } else { 150.0 } / (1.0 + 0.05 * fd);
                [g, g * 0.95, g * 0.85]
            };
            let i = ((row * w + col) * 3) as usize;
            for k in 0..3 {
                out[i + k] = c[k].clamp(0.0, 255.0) as u8;
            }
        }
    }
    out
}

/// The front depth camera (same view, half the size): distance along the optical axis in mm,
/// 0 where nothing is in range (above the walls).
pub(super) fn render_depth(p: &Pose, w: u32, h: u32) -> Vec<u16> {
    let f = (f64::from(w) / 2.0) / (FOV / 2.0).tan();
    let horizon = f64::from(h) / 2.0;
    let mut out = vec![0u16; (w * h) as usize];
    for col in 0..w {
        let off = (0.5 - (f64::from(col) + 0.5) / f64::from(w)) * FOV;
        let (r, _, _) = cast(p.x, p.y, p.yaw + off);
        let d = (r * off.cos()).max(0.05);
        let top = horizon - f * (WALL_H - EYE_H) / d;
        let bottom = horizon + f * EYE_H / d;
        for row in 0..h {
            let y = f64::from(row) + 0.5;
            let z = if y < top {
                0.0
            } else if y <= bottom {
                d
            } else {
                f * EYE_H / (y - horizon).max(1e-6)
            };
            out[(row * w + col) as usize] = (z * 1000.0).round().clamp(0.0, 65535.0) as u16;
        }
    }
    out
}

/// The overhead camera: the room from above with the figure of eight painted on the floor,
/// the path driven so far brighter, and the robot; rgb8.
pub(super) fn render_overhead(p: &Pose, ts: f64, w: u32, h: u32) -> Vec<u8> {
    let scale = f64::from(w) / (2.0 * ROOM.0);
    let mut out = Vec::with_capacity((w * h * 3) as usize);
    for row in 0..h {
        for col in 0..w {
            let edge = row < 3 || col < 3 || row >= h - 3 || col >= w - 3;
            let tile = ((col / 20 + row / 20) % 2) as u8;
            if edge {
                out.extend_from_slice(&[60, 60, 70]);
            } else {
                out.extend_from_slice(&[200 - 12 * tile, 196 - 12 * tile, 186 - 12 * tile]);
            }
        }
    }
    let mut dot = |x: f64, y: f64, r: f64, c: [u8; 3]| {
        let cx = (x + ROOM.0) * scale;
        let cy = (ROOM.1 - y) * scale;
        let ri = r.ceil() as i64;
        for dy in -ri..=ri {
            for dx in -ri..=ri {
                if (dx * dx + dy * dy) as f64 > r * r {
                    continue;
                }
                let (px, py) = (cx as i64 + dx, cy as i64 + dy);
                if px < 0 || py < 0 || px >= i64::from(w) || py >= i64::from(h) {
                    continue;
                }
                let i = ((py as u32 * w + px as u32) * 3) as usize;
                out[i..i + 3].copy_from_slice(&c);
            }
        }
    };
    for k in 0..600 {
        let s = 60.0 * f64::from(k) / 600.0;
        let q = pose_at(s);
        let driven = s <= ts.rem_euclid(60.0) || ts >= 60.0;
        let c = if driven {
            [40, 110, 220]
        } else {
            [150, 170, 200]
        };
        dot(q.x, q.y, 1.5, c);
    }
    for k in 0..8 {
        let l = 0.08 * f64::from(k);
        dot(
            p.x + p.yaw.cos() * l,
            p.y + p.yaw.sin() * l,
            1.5,
            [30, 30, 30],
        );
    }
    dot(p.x, p.y, 6.0, [240, 120, 30]);
    out
}
