//! The robot's frames in a recording's transform tree: its URDF (`/robot_description`, or a
//! URDF file in its place) and its joint states (`sensor_msgs/JointState`) give the transforms
//! `/tf` lacks, as robot_state_publisher would have published them (fixed joints once, static;
//! moving joints at each joint state that has their value).

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::atomic::AtomicBool;

use super::{Sample, TfHistory, MAX_SAMPLES};
use crate::spatial::robot::description::robot_description;
use crate::spatial::robot::joint_states::{is_joint_state_type, joint_values};
use crate::spatial::robot::kinematics::{joint_pose, moves};
use crate::spatial::robot::{Joint, JointKind};
use bagscope_reader::{Bag, Result};

/// What adding the robot's frames did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RobotFrames {
    /// Frames whose transforms came from the URDF and joint states.
    pub frames: Vec<String>,
    /// Joint state names the URDF does not have (each once).
    pub unknown_joints: Vec<String>,
    /// Why the robot's frames are not there (a URDF that does not read).
    pub problem: Option<String>,
}

/// Adds to `h` the transforms of the recording's robot (the URDF file `urdf` in place of the
/// recording's description) that `/tf` does not have.
pub fn add_robot_frames(
    bag: &Bag,
    h: &mut TfHistory,
    urdf: Option<&std::path::Path>,
    cancel: &AtomicBool,
) -> Result<RobotFrames> {
    let mut out = RobotFrames::default();
    let model = match robot_description(bag, urdf) {
        None => return Ok(out),
        Some(Err(e)) => {
            out.problem = Some(e);
            return Ok(out);
        }
        Some(Ok((m, _))) => m,
    };
    let s = bag.summary();
    let start = s.start_ns.unwrap_or(0);
    // Frames /tf already gives are left to it.
    let from_tf =
        |h: &TfHistory, name: &str| h.frame(name).is_some_and(|f| !h.samples[f].is_empty());
    let joints: Vec<&Joint> = model
        .joints
        .iter()
        .filter(|j| !from_tf(h, &j.child))
        .collect();
    let id = |h: &mut TfHistory, name: &str| -> u32 {
        match h.frame(name) {
            Some(f) => f as u32,
            None => {
                h.frames.push(name.to_string());
                h.samples.push(Vec::new());
                h.is_static.push(false);
                (h.frames.len() - 1) as u32
            }
        }
    };
    for j in joints.iter().filter(|j| j.kind == JointKind::Fixed) {
        let (p, c) = (id(h, &j.parent), id(h, &j.child) as usize);
        h.samples[c].push(Sample {
            time_ns: start,
            parent: p,
            pose: joint_pose(j, 0.0),
        });
        h.is_static[c] = true;
        out.frames.push(j.child.clone());
    }
    let moving: Vec<&Joint> = joints.into_iter().filter(|j| moves(j)).collect();
    let conns: Vec<usize> = s
        .topics
        .iter()
        .filter(|t| is_joint_state_type(&t.datatype))
        .flat_map(|t| t.connections.iter().copied())
        .collect();
    if moving.is_empty() || conns.is_empty() {
        return Ok(out);
    }
    let mut kept: usize = h.samples.iter().map(Vec::len).sum();
    let mut values: HashMap<String, f64> = HashMap::new();
    let mut added = vec![false; moving.len()];
    let mut cut = false;
    crate::decoded::each_decoded(bag, conns, cancel, |m, decoded| {
        let Some(list) = decoded.and_then(|(p, n)| joint_values(&p.def, n)) else {
            return Ok(ControlFlow::Continue(()));
        };
        for (name, _) in &list {
            if !model.joints.iter().any(|j| j.name == *name) && !out.unknown_joints.contains(name) {
                out.unknown_joints.push(name.clone());
            }
        }
        // This message's joints; a joint it does not name keeps its last value.
        let here: Vec<&str> = list.iter().map(|(n, _)| n.as_str()).collect();
        values.extend(list.iter().cloned());
        for (k, j) in moving.iter().enumerate() {
            let master = j
                .mimic
                .as_ref()
                .map_or(j.name.as_str(), |mm| mm.joint.as_str());
            if !here.contains(&master) && !here.contains(&j.name.as_str()) {
                continue;
            }
            let Some(v) = model.value(&j.name, &values) else {
                continue;
            };
            if kept >= MAX_SAMPLES {
                h.truncated = true;
                cut = true;
                return Ok(ControlFlow::Break(()));
            }
            let (p, c) = (id(h, &j.parent), id(h, &j.child) as usize);
            h.samples[c].push(Sample {
                time_ns: m.time_ns,
                parent: p,
                pose: joint_pose(j, v),
            });
            added[k] = true;
            kept += 1;
        }
        Ok(ControlFlow::Continue(()))
    })?;
    if cut {
        return Ok(out);
    }
    out.frames.extend(
        moving
            .iter()
            .zip(&added)
            .filter(|(_, a)| **a)
            .map(|(j, _)| j.child.clone()),
    );
    Ok(out)
}
