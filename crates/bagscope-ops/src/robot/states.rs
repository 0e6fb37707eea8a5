//! The robot's frames in a recording's transform tree: its URDF (`/robot_description`) and its
//! joint states (`sensor_msgs/JointState`) give the transforms `/tf` lacks, as
//! robot_state_publisher would have published them (fixed joints once, static; moving joints
//! at each joint state that has their value).

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::atomic::AtomicBool;

use super::kinematics::{joint_pose, moves};
use super::{JointKind, Model};
use crate::image::field;
use crate::tf::{Sample, TfHistory};
use bagscope_reader::encoding::Value;
use bagscope_reader::{Bag, Filter, Result};

/// Whether a type is a joint state.
pub fn is_joint_state_type(datatype: &str) -> bool {
    matches!(
        datatype,
        "sensor_msgs/JointState" | "sensor_msgs/msg/JointState"
    )
}

/// The recording's robot model: the URDF file the user chose (`urdf`, `--urdf`),
/// else the first `/robot_description` message (a `std_msgs/String`), else (a ROS 2 recording
/// of its parameter events) the first `robot_description` parameter a node declared or set on
/// `/parameter_events`, with when it holds from; `None` without one, an error for one that
/// does not read.
pub fn robot_description(
    bag: &Bag,
    urdf: Option<&std::path::Path>,
) -> Option<std::result::Result<(Model, u64), String>> {
    let s = bag.summary();
    if let Some(p) = urdf {
        return Some(super::read_urdf_file(p).map(|m| (m, s.start_ns.unwrap_or(0))));
    }
    let topic = s.topics.iter().find(|t| {
        t.name.trim_start_matches('/') == "robot_description"
            && matches!(
                t.datatype.as_str(),
                "std_msgs/String" | "std_msgs/msg/String"
            )
    });
    if topic.is_none() {
        return parameter_description(bag);
    }
    let t = s.topics.iter().find(|t| {
        t.name.trim_start_matches('/') == "robot_description"
            && matches!(
                t.datatype.as_str(),
                "std_msgs/String" | "std_msgs/msg/String"
            )
    })?;
    let first = || -> std::result::Result<(Model, u64), String> {
        let m = bag
            .messages(&Filter {
                connections: Some(t.connections.clone()),
                ..Default::default()
            })
            .map_err(|e| e.to_string())?
            .next()
            .ok_or("/robot_description has no message")?
            .map_err(|e| e.to_string())?;
        let (plan, _) = bag.plan(m.conn).map_err(|e| e.to_string())?;
        let node = plan.decode(&m.data).map_err(|e| e.to_string())?;
        let Some(Value::String(text)) = field(&plan.def, &node, "data") else {
            return Err("/robot_description holds no text".into());
        };
        let model = Model::parse(&String::from_utf8_lossy(text))
            .map_err(|e| format!("/robot_description: {e}"))?;
        Ok((model, m.time_ns))
    };
    Some(first())
}

/// The first `robot_description` parameter on a ROS 2 recording's `/parameter_events`
/// (robot_state_publisher declares it at start), as [`robot_description`] gives it.
fn parameter_description(bag: &Bag) -> Option<std::result::Result<(Model, u64), String>> {
    let s = bag.summary();
    let conns: Vec<usize> = s
        .topics
        .iter()
        .filter(|t| {
            t.name == "/parameter_events"
                && matches!(
                    t.datatype.as_str(),
                    "rcl_interfaces/msg/ParameterEvent" | "rcl_interfaces/ParameterEvent"
                )
        })
        .flat_map(|t| t.connections.iter().copied())
        .collect();
    if conns.is_empty() {
        return None;
    }
    let messages = match bag.messages(&Filter {
        connections: Some(conns),
        ..Default::default()
    }) {
        Ok(m) => m,
        Err(e) => return Some(Err(format!("/parameter_events: {e}"))),
    };
    for m in messages {
        let Ok(m) = m else { continue };
        let Some((plan, node)) = bag
            .plan(m.conn)
            .ok()
            .and_then(|(p, _)| p.decode(&m.data).ok().map(|n| (p, n)))
        else {
            continue;
        };
        let def = &plan.def;
        for list in ["new_parameters", "changed_parameters"] {
            let Some(Value::Array(params)) = field(def, &node, list) else {
                continue;
            };
            for p in params {
                let named = matches!(field(def, p, "name"),
                    Some(Value::String(n)) if n.as_slice() == b"robot_description");
                if !named {
                    continue;
                }
                let Some(v) = p.field(def, "value") else {
                    continue;
                };
                let Some(Value::String(text)) = field(def, v, "string_value") else {
                    continue;
                };
                let who = match field(def, &node, "node") {
                    Some(Value::String(n)) => String::from_utf8_lossy(n).into_owned(),
                    _ => String::new(),
                };
                return Some(
                    super::Model::parse(&String::from_utf8_lossy(text))
                        .map(|model| (model, m.time_ns))
                        .map_err(|e| {
                            format!("the robot_description parameter of {who} on /parameter_events: {e}")
                        }),
                );
            }
        }
    }
    None
}

/// One joint of a joint state message.
#[derive(Debug, Clone, PartialEq)]
pub struct JointValue {
    pub name: String,
    /// Its position (rad or m), if the message gives one.
    pub position: Option<f64>,
    pub velocity: Option<f64>,
    pub effort: Option<f64>,
}

/// Each joint a `sensor_msgs/JointState` names, with what it gives of it (its arrays may be
/// shorter than its names, or empty).
pub fn joint_state(
    def: &bagscope_reader::definition::msg::MsgDef,
    n: &bagscope_reader::encoding::Node,
) -> Option<Vec<JointValue>> {
    let Some(Value::Array(names)) = field(def, n, "name") else {
        return None;
    };
    let at = |f: &str, i: usize| {
        field(def, n, f)
            .and_then(|a| a.element(i))
            .and_then(|(v, _)| v.as_f64())
    };
    Some(
        names
            .iter()
            .enumerate()
            .map(|(i, a)| JointValue {
                name: match &a.value {
                    Value::String(s) => String::from_utf8_lossy(s).into_owned(),
                    _ => String::new(),
                },
                position: at("position", i),
                velocity: at("velocity", i),
                effort: at("effort", i),
            })
            .collect(),
    )
}

/// A joint state's names and positions.
fn joint_values(
    def: &bagscope_reader::definition::msg::MsgDef,
    n: &bagscope_reader::encoding::Node,
) -> Option<Vec<(String, f64)>> {
    let Some(Value::Array(names)) = field(def, n, "name") else {
        return None;
    };
    // float64[]: kept as its bytes (`Value::Prims`), read element by element.
    let pos = field(def, n, "position")?;
    Some(
        names
            .iter()
            .enumerate()
            .filter_map(
                |(i, a)| match (&a.value, pos.element(i).and_then(|(v, _)| v.as_f64())) {
                    (Value::String(s), Some(v)) => {
                        Some((String::from_utf8_lossy(s).into_owned(), v))
                    }
                    _ => None,
                },
            )
            .collect(),
    )
}

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
    let joints: Vec<&super::Joint> = model
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
    let moving: Vec<&super::Joint> = joints.into_iter().filter(|j| moves(j)).collect();
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
            if kept >= crate::tf::MAX_SAMPLES {
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
