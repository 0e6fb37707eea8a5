//! Joint states (`sensor_msgs/JointState`): each joint a message names, with what it gives.

use bagscope_reader::encoding::Value;

/// Whether a type is a joint state.
pub fn is_joint_state_type(datatype: &str) -> bool {
    matches!(
        datatype,
        "sensor_msgs/JointState" | "sensor_msgs/msg/JointState"
    )
}

/// One joint of a joint state message.
#[derive(Debug, Clone, PartialEq)]
pub struct JointValue {
    /// The joint's name.
    pub name: String,
    /// Its position (rad or m), if the message gives one.
    pub position: Option<f64>,
    /// Its velocity (rad/s or m/s), if the message gives one.
    pub velocity: Option<f64>,
    /// Its effort (N·m or N), if the message gives one.
    pub effort: Option<f64>,
}

/// Each joint a `sensor_msgs/JointState` names, with what it gives of it (its arrays may be
/// shorter than its names, or empty).
pub fn joint_state(
    def: &bagscope_reader::definition::msg::MsgDef,
    n: &bagscope_reader::encoding::Node,
) -> Option<Vec<JointValue>> {
    let Some(Value::Array(names)) = n.field_value(def, "name") else {
        return None;
    };
    let at = |f: &str, i: usize| {
        n.field_value(def, f)
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
pub(crate) fn joint_values(
    def: &bagscope_reader::definition::msg::MsgDef,
    n: &bagscope_reader::encoding::Node,
) -> Option<Vec<(String, f64)>> {
    let Some(Value::Array(names)) = n.field_value(def, "name") else {
        return None;
    };
    // float64[]: kept as its bytes (`Value::Prims`), read element by element.
    let pos = n.field_value(def, "position")?;
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
