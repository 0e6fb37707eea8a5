//! Geometry the operations share: [`Pose`] (a rigid transform in `f64`, as transforms are
//! recorded), its single-precision form for the GPU (`Affine32`), and bounding boxes. A leaf:
//! it names nothing else of the crate.

/// A rigid transform: translation (m) and rotation (unit quaternion x, y, z, w).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pose {
    /// Translation.
    pub t: [f64; 3],
    /// Rotation.
    pub q: [f64; 4],
}

impl Pose {
    /// No translation, no rotation.
    pub const IDENTITY: Pose = Pose {
        t: [0.0; 3],
        q: [0.0, 0.0, 0.0, 1.0],
    };

    /// `self` then `o` (`self * o`): a point in `o`'s frame taken to `self`'s parent.
    pub fn then(&self, o: &Pose) -> Pose {
        let r = rotate(self.q, o.t);
        Pose {
            t: [self.t[0] + r[0], self.t[1] + r[1], self.t[2] + r[2]],
            q: qmul(self.q, o.q),
        }
    }

    /// A point of this frame in the parent's frame.
    pub fn apply(&self, p: [f64; 3]) -> [f64; 3] {
        let r = rotate(self.q, p);
        [self.t[0] + r[0], self.t[1] + r[1], self.t[2] + r[2]]
    }

    /// A direction of this frame in the parent's frame (rotation only).
    pub fn turn(&self, v: [f64; 3]) -> [f64; 3] {
        rotate(self.q, v)
    }

    /// The inverse transform.
    pub fn inverse(&self) -> Pose {
        let qi = [-self.q[0], -self.q[1], -self.q[2], self.q[3]];
        let r = rotate(qi, self.t);
        Pose {
            t: [-r[0], -r[1], -r[2]],
            q: qi,
        }
    }

    /// Roll, pitch and yaw (rad, the ZYX convention of tf's `getRPY`).
    pub fn rpy(&self) -> [f64; 3] {
        let [x, y, z, w] = self.q;
        let roll = (2.0 * (w * x + y * z)).atan2(1.0 - 2.0 * (x * x + y * y));
        let pitch = (2.0 * (w * y - z * x)).clamp(-1.0, 1.0).asin();
        let yaw = (2.0 * (w * z + x * y)).atan2(1.0 - 2.0 * (y * y + z * z));
        [roll, pitch, yaw]
    }
}

fn qmul(a: [f64; 4], b: [f64; 4]) -> [f64; 4] {
    let [ax, ay, az, aw] = a;
    let [bx, by, bz, bw] = b;
    [
        aw * bx + ax * bw + ay * bz - az * by,
        aw * by - ax * bz + ay * bw + az * bx,
        aw * bz + ax * by - ay * bx + az * bw,
        aw * bw - ax * bx - ay * by - az * bz,
    ]
}

fn rotate(q: [f64; 4], v: [f64; 3]) -> [f64; 3] {
    let p = qmul(
        qmul(q, [v[0], v[1], v[2], 0.0]),
        [-q[0], -q[1], -q[2], q[3]],
    );
    [p[0], p[1], p[2]]
}

/// A rigid transform as an `f32` rotation matrix and translation: where the GPU places a cloud
/// or a mesh (a [`Pose`] made single precision once, not per point).
pub(crate) struct Affine32 {
    m: [[f32; 3]; 3],
    t: [f32; 3],
}

impl Affine32 {
    pub(crate) fn new(p: &Pose) -> Affine32 {
        let c = |v| f32s(p.turn(v));
        let (x, y, z) = (c([1.0, 0.0, 0.0]), c([0.0, 1.0, 0.0]), c([0.0, 0.0, 1.0]));
        Affine32 {
            m: [[x[0], y[0], z[0]], [x[1], y[1], z[1]], [x[2], y[2], z[2]]],
            t: f32s(p.t),
        }
    }

    /// As a column-major 4 × 4 matrix.
    pub(crate) fn mat4(&self) -> [[f32; 4]; 4] {
        let m = &self.m;
        [
            [m[0][0], m[1][0], m[2][0], 0.0],
            [m[0][1], m[1][1], m[2][1], 0.0],
            [m[0][2], m[1][2], m[2][2], 0.0],
            [self.t[0], self.t[1], self.t[2], 1.0],
        ]
    }
}

/// The smallest box holding every point (`None` for none).
pub(crate) fn bounds_of<'a>(
    all: impl Iterator<Item = &'a [f32; 3]>,
) -> Option<([f32; 3], [f32; 3])> {
    let mut lo = [f32::INFINITY; 3];
    let mut hi = [f32::NEG_INFINITY; 3];
    for p in all {
        for i in 0..3 {
            lo[i] = lo[i].min(p[i]);
            hi[i] = hi[i].max(p[i]);
        }
    }
    (lo[0] <= hi[0]).then_some((lo, hi))
}

/// Coordinates as the renderer takes them.
pub fn f32s(p: [f64; 3]) -> [f32; 3] {
    [p[0] as f32, p[1] as f32, p[2] as f32]
}
