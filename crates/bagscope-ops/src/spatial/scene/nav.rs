//! What the scene draws of the world around the robot: the ground grid, a pose's covariance
//! ellipse and an occupancy grid map.

use super::read::{pose, sub};
use super::{Rgba, Scene, MAP_SIDE};
use crate::geom::Pose;

/// A ground grid of `n` 1 m cells a side on z = 0.
pub(super) fn grid(scene: &mut Scene, n: u32) {
    let h = f64::from(n) / 2.0;
    for i in 0..=n {
        let v = f64::from(i) - h;
        let c = [110, 110, 110, 140];
        scene.line([-h, v, 0.0], [h, v, 0.0], c, 0.0);
        scene.line([v, -h, 0.0], [v, h, 0.0], c, 0.0);
    }
}

/// The 1-sigma ellipse of a pose's x/y covariance (in the pose's parent frame) as a line loop.
pub(super) fn covariance(scene: &mut Scene, p: &Pose, place: &Pose, cov: &[f64], col: Rgba) {
    let (a, b, c) = (cov[0], cov[1], cov[7]);
    if !(a.is_finite() && b.is_finite() && c.is_finite()) || a < 0.0 || c < 0.0 {
        return;
    }
    // Eigen-decomposition of [[a, b], [b, c]].
    let tr = (a + c) / 2.0;
    let d = (((a - c) / 2.0).powi(2) + b * b).sqrt();
    let (l1, l2) = ((tr + d).max(0.0).sqrt(), (tr - d).max(0.0).sqrt());
    let th = 0.5 * (2.0 * b).atan2(a - c);
    let z = p.t;
    let mut prev = None;
    for i in 0..=32 {
        let u = std::f64::consts::TAU * f64::from(i) / 32.0;
        let (x, y) = (l1 * u.cos(), l2 * u.sin());
        let (dx, dy) = (x * th.cos() - y * th.sin(), x * th.sin() + y * th.cos());
        let d = place.turn([dx, dy, 0.0]);
        let q = [z[0] + d[0], z[1] + d[1], z[2] + d[2]];
        if let Some(pv) = prev {
            scene.line(pv, q, col, 0.0);
        }
        prev = Some(q);
    }
}

/// A `nav_msgs/OccupancyGrid` on its plane: free cells light, occupied dark, unknown left out;
/// a grid of more than [`MAP_SIDE`] cells a side drawn by blocks (the most occupied cell of
/// each). The number of cells drawn.
pub(super) fn map(
    scene: &mut Scene,
    def: &bagscope_reader::definition::msg::MsgDef,
    node: &bagscope_reader::encoding::Node,
    place: &Pose,
) -> Result<usize, String> {
    let info = sub(def, node, "info").ok_or("no info field")?;
    let res = info.number(def, "resolution").ok_or("no resolution")?;
    let w = info.number(def, "width").ok_or("no width")? as usize;
    let h = info.number(def, "height").ok_or("no height")? as usize;
    let origin = sub(def, info, "origin")
        .and_then(|o| pose(def, o))
        .unwrap_or(Pose::IDENTITY);
    let cells: &[u8] = match sub(def, node, "data").map(|n| &n.value) {
        Some(bagscope_reader::encoding::Value::Prims(_, b))
        | Some(bagscope_reader::encoding::Value::Bytes(b)) => b,
        _ => return Err("no int8[] data field".into()),
    };
    if !(res > 0.0 && res.is_finite()) {
        return Err(format!("map resolution {res} is not positive"));
    }
    if cells.len() < w.saturating_mul(h) {
        return Err(format!(
            "map of {w}×{h} cells holds only {} values",
            cells.len()
        ));
    }
    let block = w.max(h).div_ceil(MAP_SIDE).max(1);
    let at = place.then(&origin);
    let mut drawn = 0;
    for by in (0..h).step_by(block) {
        for bx in (0..w).step_by(block) {
            let mut v: i16 = -1;
            for y in by..(by + block).min(h) {
                for x in bx..(bx + block).min(w) {
                    v = v.max(i16::from(cells[y * w + x] as i8));
                }
            }
            if v < 0 {
                continue;
            }
            let g = (235.0 - 2.1 * f64::from(v.min(100))) as u8;
            let col = [g, g, g, 230];
            let (x0, y0) = (bx as f64 * res, by as f64 * res);
            let (x1, y1) = (
                ((bx + block).min(w)) as f64 * res,
                ((by + block).min(h)) as f64 * res,
            );
            let c = [
                at.apply([x0, y0, 0.0]),
                at.apply([x1, y0, 0.0]),
                at.apply([x1, y1, 0.0]),
                at.apply([x0, y1, 0.0]),
            ];
            scene.triangle_colored([c[0], c[1], c[2]], [col; 3]);
            scene.triangle_colored([c[0], c[2], c[3]], [col; 3]);
            drawn += 1;
        }
    }
    Ok(drawn)
}
