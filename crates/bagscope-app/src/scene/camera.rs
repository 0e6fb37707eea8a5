//! The 3D panel's camera: orbiting a target point (z up, as ROS frames are), panning, zooming
//! about the pointer, and a top-down view without perspective.

use egui::{Pos2, Rect};
use three_d::{Deg, InnerSpace, Mat4, Point3, Vector3, Vector4};

use super::render::View;

/// Vertical field of view of the perspective view (degrees).
const FOV: f32 = 50.0;

/// An orbit camera.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct Camera {
    /// The point looked at (fixed frame).
    pub target: [f32; 3],
    /// Heading of the eye round the target (rad, from +x).
    pub yaw: f32,
    /// Elevation of the eye (rad).
    pub pitch: f32,
    /// Distance from the target (m).
    pub dist: f32,
    /// Looking straight down, orthographic.
    pub top: bool,
}

impl Default for Camera {
    fn default() -> Self {
        Camera {
            target: [0.0; 3],
            yaw: -2.2,
            pitch: 0.6,
            dist: 16.0,
            top: false,
        }
    }
}

impl Camera {
    fn eye(&self) -> [f32; 3] {
        let pitch = if self.top {
            std::f32::consts::FRAC_PI_2 - 1e-4
        } else {
            self.pitch
        };
        let (c, s) = (pitch.cos(), pitch.sin());
        [
            self.target[0] + self.dist * c * self.yaw.cos(),
            self.target[1] + self.dist * c * self.yaw.sin(),
            self.target[2] + self.dist * s,
        ]
    }

    fn matrices(&self, w: f32, h: f32) -> (Mat4, f32) {
        let aspect = (w / h.max(1.0)).max(1e-3);
        let e = self.eye();
        let t = self.target;
        // Top-down: up is the direction the yaw faces, so the view turns with it.
        let up = if self.top {
            Vector3::new(-self.yaw.cos(), -self.yaw.sin(), 0.0)
        } else {
            Vector3::new(0.0, 0.0, 1.0)
        };
        let view = Mat4::look_at_rh(
            Point3::new(e[0], e[1], e[2]),
            Point3::new(t[0], t[1], t[2]),
            up,
        );
        let near = (self.dist * 0.002).max(0.01);
        let far = self.dist * 200.0 + 1000.0;
        if self.top {
            let half = self.dist * (FOV.to_radians() / 2.0).tan();
            let proj = three_d::ortho(-half * aspect, half * aspect, -half, half, -far, far);
            (proj * view, h / 2.0 / half)
        } else {
            let proj = three_d::perspective(Deg(FOV), aspect, near, far);
            (proj * view, h / 2.0 / (FOV.to_radians() / 2.0).tan())
        }
    }

    /// The view of a `w` × `h` pixel viewport.
    pub fn view(&self, w: f32, h: f32) -> View {
        let (m, px_per_m) = self.matrices(w, h);
        View {
            view_proj: m.into(),
            px_per_m,
            clear: Some([24.0 / 255.0, 26.0 / 255.0, 30.0 / 255.0, 1.0]),
        }
    }

    /// Where `p` appears in `rect` (points), if in front of the camera.
    pub fn project(&self, view: &View, p: [f32; 3], rect: Rect) -> Option<Pos2> {
        let m = Mat4::from(view.view_proj);
        let c = m * Vector4::new(p[0], p[1], p[2], 1.0);
        if c.w <= 1e-6 {
            return None;
        }
        let (x, y) = (c.x / c.w, c.y / c.w);
        Some(Pos2::new(
            rect.left() + (x + 1.0) / 2.0 * rect.width(),
            rect.top() + (1.0 - y) / 2.0 * rect.height(),
        ))
    }

    /// Distance of `p` from the eye along the view.
    pub fn depth(&self, p: [f32; 3]) -> f32 {
        if self.top {
            return self.dist;
        }
        let e = self.eye();
        Vector3::new(p[0] - e[0], p[1] - e[1], p[2] - e[2]).magnitude()
    }

    /// Frames the box `b` (fixed frame).
    pub fn fit(&mut self, b: ([f32; 3], [f32; 3])) {
        let (lo, hi) = b;
        self.target = [
            (lo[0] + hi[0]) / 2.0,
            (lo[1] + hi[1]) / 2.0,
            (lo[2] + hi[2]) / 2.0,
        ];
        let r = Vector3::new(hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]).magnitude() / 2.0;
        self.dist = (r / (FOV.to_radians() / 2.0).tan()).clamp(0.5, 1e5);
    }

    /// The point on the plane through the target (z = target's) under `at`.
    fn ground(&self, rect: Rect, at: Pos2) -> Option<[f32; 3]> {
        let (m, _) = self.matrices(rect.width(), rect.height());
        let inv = three_d::SquareMatrix::invert(&m)?;
        let x = (at.x - rect.left()) / rect.width() * 2.0 - 1.0;
        let y = 1.0 - (at.y - rect.top()) / rect.height() * 2.0;
        let a = inv * Vector4::new(x, y, -1.0, 1.0);
        let b = inv * Vector4::new(x, y, 1.0, 1.0);
        let (a, b) = (a.truncate() / a.w, b.truncate() / b.w);
        let d = b - a;
        if d.z.abs() < 1e-9 {
            return None;
        }
        let s = (self.target[2] - a.z) / d.z;
        (s > 0.0).then(|| {
            let p = a + d * s;
            [p.x, p.y, p.z]
        })
    }

    /// Orbit (primary drag), pan (secondary or middle drag, or shift-drag), zoom about the
    /// pointer (wheel or pinch).
    pub fn input(&mut self, ui: &egui::Ui, resp: &egui::Response, rect: Rect) {
        let d = resp.drag_delta();
        let shift = ui.input(|i| i.modifiers.shift);
        let pan = resp.dragged_by(egui::PointerButton::Secondary)
            || resp.dragged_by(egui::PointerButton::Middle)
            || (shift && resp.dragged_by(egui::PointerButton::Primary))
            || (self.top && resp.dragged_by(egui::PointerButton::Primary));
        if pan && d != egui::Vec2::ZERO {
            // One pixel moves the target by what a pixel spans at its distance.
            let (_, px_per_m) = self.matrices(rect.width(), rect.height());
            let k = if self.top { 1.0 } else { self.dist } / px_per_m;
            let (c, s) = (self.yaw.cos(), self.yaw.sin());
            // Right of the view and forward along the ground.
            let right = [-s, c];
            let fwd = [-c, -s];
            self.target[0] -= (right[0] * d.x - fwd[0] * d.y) * k;
            self.target[1] -= (right[1] * d.x - fwd[1] * d.y) * k;
        } else if resp.dragged_by(egui::PointerButton::Primary) {
            self.yaw -= d.x * 0.008;
            self.pitch = (self.pitch + d.y * 0.008).clamp(-1.55, 1.55);
        }
        if resp.hovered() {
            let scroll = ui.input(|i| i.smooth_scroll_delta.y);
            let zoom = ui.input(|i| i.zoom_delta());
            let factor = (-scroll * 0.0015).exp() / zoom;
            if (factor - 1.0).abs() > 1e-4 {
                let at = resp.hover_pos().and_then(|p| self.ground(rect, p));
                let next = (self.dist * factor).clamp(0.05, 1e5);
                let f = next / self.dist;
                if let Some(g) = at {
                    for (t, g) in self.target.iter_mut().zip(g).take(2) {
                        *t = g + (*t - g) * f;
                    }
                }
                self.dist = next;
            }
        }
    }
}
