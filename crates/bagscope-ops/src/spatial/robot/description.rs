//! The recording's robot model: a URDF file the user chose, else the recording's
//! `/robot_description` message, else the `robot_description` parameter on
//! `/parameter_events` (ROS 2).

use bagscope_reader::encoding::Value;
use bagscope_reader::{Bag, Filter};

use super::Model;

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
        let Some(Value::String(text)) = node.field_value(&plan.def, "data") else {
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
            let Some(Value::Array(params)) = node.field_value(def, list) else {
                continue;
            };
            for p in params {
                let named = matches!(p.field_value(def, "name"),
                    Some(Value::String(n)) if n.as_slice() == b"robot_description");
                if !named {
                    continue;
                }
                let Some(v) = p.field(def, "value") else {
                    continue;
                };
                let Some(Value::String(text)) = v.field_value(def, "string_value") else {
                    continue;
                };
                let who = match node.field_value(def, "node") {
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
