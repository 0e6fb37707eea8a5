//! Joint values to link transforms, as robot_state_publisher computes them: each joint's
//! child frame in its parent's is its origin, then its motion (a turn about its axis for
//! revolute and continuous joints, a slide along it for prismatic ones); mimic joints follow
//! the joint they name. Floating and planar joints have no value in joint states: their
//! transforms come from `/tf`.

use std::collections::HashMap;

use super::{Joint, JointKind, Model};
use crate::geom::Pose;

/// A joint's child in its parent at `value`.
pub fn joint_pose(j: &Joint, value: f64) -> Pose {
    let motion = match j.kind {
        JointKind::Revolute | JointKind::Continuous => {
            let (s, c) = (value / 2.0).sin_cos();
            Pose {
                t: [0.0; 3],
                q: [j.axis[0] * s, j.axis[1] * s, j.axis[2] * s, c],
            }
        }
        JointKind::Prismatic => Pose {
            t: j.axis.map(|a| a * value),
            q: [0.0, 0.0, 0.0, 1.0],
        },
        JointKind::Fixed | JointKind::Floating | JointKind::Planar => Pose::IDENTITY,
    };
    j.origin.then(&motion)
}

/// Whether a joint's transform comes from joint states (`false`: fixed; floating and planar
/// come from `/tf`).
pub fn moves(j: &Joint) -> bool {
    matches!(
        j.kind,
        JointKind::Revolute | JointKind::Continuous | JointKind::Prismatic
    )
}

impl Model {
    /// Joint `name`'s value in `values`, following mimics (a chain of at most as many joints as
    /// the model has); `None` where it has none.
    pub fn value(&self, name: &str, values: &HashMap<String, f64>) -> Option<f64> {
        let mut name = name;
        let (mut mul, mut add) = (1.0, 0.0);
        for _ in 0..=self.joints.len() {
            let j = self.joints.iter().find(|j| j.name == name)?;
            match &j.mimic {
                Some(m) => {
                    add += mul * m.offset;
                    mul *= m.multiplier;
                    name = &m.joint;
                }
                None => return values.get(name).map(|v| mul * v + add),
            }
        }
        None
    }

    /// Each joint's transform at `values` (parent link, child link, the child in the parent):
    /// fixed joints always, moving ones where `values` (or the joint they mimic) has theirs.
    pub fn transforms(&self, values: &HashMap<String, f64>) -> Vec<(&str, &str, Pose)> {
        self.joints
            .iter()
            .filter_map(|j| {
                let v = if moves(j) {
                    self.value(&j.name, values)?
                } else if j.kind == JointKind::Fixed {
                    0.0
                } else {
                    return None;
                };
                Some((j.parent.as_str(), j.child.as_str(), joint_pose(j, v)))
            })
            .collect()
    }

    /// Every link's pose in the root link's frame at `values` (a joint without a value at 0).
    pub fn link_poses(&self, values: &HashMap<String, f64>) -> HashMap<String, Pose> {
        let mut out = HashMap::new();
        let Some(root) = self.root() else {
            return out;
        };
        out.insert(root.to_string(), Pose::IDENTITY);
        let mut frontier = vec![root.to_string()];
        while let Some(p) = frontier.pop() {
            let base = out[&p];
            for j in self.joints.iter().filter(|j| j.parent == p) {
                let v = self.value(&j.name, values).unwrap_or(0.0);
                out.insert(j.child.clone(), base.then(&joint_pose(j, v)));
                frontier.push(j.child.clone());
            }
        }
        out
    }
}
