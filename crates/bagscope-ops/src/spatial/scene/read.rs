//! Reading the common ROS fields of a decoded message: headers, times, vectors, quaternions,
//! poses and colours, whichever ROS version wrote them (a ROS 1 `time` is a primitive, a ROS 2
//! `builtin_interfaces/Time` a message of `sec` and `nanosec`).

use crate::geom::Pose;
use bagscope_reader::definition::msg::MsgDef;
use bagscope_reader::encoding::{Node, Value};

/// Field `name` of `node`.
pub fn sub<'a>(def: &MsgDef, node: &'a Node, name: &str) -> Option<&'a Node> {
    node.field(def, name)
}

/// Field `name` as text.
pub fn text(def: &MsgDef, node: &Node, name: &str) -> Option<String> {
    match &sub(def, node, name)?.value {
        Value::String(s) => Some(String::from_utf8_lossy(s).into_owned()),
        _ => None,
    }
}

/// A time or duration value in nanoseconds (negative durations as negative).
pub fn nanos(def: &MsgDef, node: &Node) -> Option<i128> {
    match &node.value {
        Value::Time { sec, nsec } => Some(i128::from(*sec) * 1_000_000_000 + i128::from(*nsec)),
        Value::Duration { sec, nsec } => Some(i128::from(*sec) * 1_000_000_000 + i128::from(*nsec)),
        Value::Message { .. } => {
            // ROS 2 `sec`/`nanosec`, protobuf's `seconds`/`nanos`, JSON's `sec`/`nsec`.
            let s = node
                .number(def, "sec")
                .or_else(|| node.number(def, "secs"))
                .or_else(|| node.number(def, "seconds"))?;
            let n = node
                .number(def, "nanosec")
                .or_else(|| node.number(def, "nsec"))
                .or_else(|| node.number(def, "nsecs"))
                .or_else(|| node.number(def, "nanos"))
                .unwrap_or(0.0);
            Some(s as i128 * 1_000_000_000 + n as i128)
        }
        _ => None,
    }
}

/// `header.frame_id` (without a leading `/`) and `header.stamp` (ns; `None` when zero or
/// absent); Foxglove's schemas have `frame_id` and `timestamp` at the top instead.
pub fn header(def: &MsgDef, node: &Node) -> (String, Option<u64>) {
    let (h, stamp_field) = match sub(def, node, "header") {
        Some(h) => (h, "stamp"),
        None => (node, "timestamp"),
    };
    let frame = text(def, h, "frame_id").unwrap_or_default();
    let stamp = sub(def, h, stamp_field)
        .and_then(|s| nanos(def, s))
        .and_then(|n| u64::try_from(n).ok())
        .filter(|&n| n > 0);
    (frame.trim_start_matches('/').to_string(), stamp)
}

/// `x`, `y`, `z` of a vector or point.
pub fn vec3(def: &MsgDef, node: &Node) -> Option<[f64; 3]> {
    Some([
        node.number(def, "x")?,
        node.number(def, "y")?,
        node.number(def, "z").unwrap_or(0.0),
    ])
}

/// A quaternion, normalised; the zero quaternion (left unset by many publishers) is the
/// identity, as RViz takes it.
pub fn quat(def: &MsgDef, node: &Node) -> Option<[f64; 4]> {
    Some(quat_of([
        node.number(def, "x")?,
        node.number(def, "y")?,
        node.number(def, "z")?,
        node.number(def, "w")?,
    ]))
}

/// `x y z w` normalised; the zero quaternion (or one not finite) is the identity.
pub fn quat_of(q: [f64; 4]) -> [f64; 4] {
    let n = q.iter().map(|v| v * v).sum::<f64>().sqrt();
    if !n.is_finite() || n < 1e-9 {
        return [0.0, 0.0, 0.0, 1.0];
    }
    [q[0] / n, q[1] / n, q[2] / n, q[3] / n]
}

/// A `geometry_msgs/Pose` (`position`, `orientation`) or `Transform` (`translation`,
/// `rotation`).
pub fn pose(def: &MsgDef, node: &Node) -> Option<Pose> {
    let t = sub(def, node, "position").or_else(|| sub(def, node, "translation"))?;
    let q = sub(def, node, "orientation").or_else(|| sub(def, node, "rotation"))?;
    let p = Pose {
        t: vec3(def, t)?,
        q: quat(def, q)?,
    };
    p.t.iter().all(|v| v.is_finite()).then_some(p)
}

/// A `std_msgs/ColorRGBA` as 8-bit RGBA.
pub fn color(def: &MsgDef, node: &Node) -> Option<[u8; 4]> {
    let c = |n: &str| node.number(def, n).map(unit_to_u8);
    Some([c("r")?, c("g")?, c("b")?, c("a").unwrap_or(255)])
}

/// A colour channel of 0 to 1 as 8 bits.
pub fn unit_to_u8(v: f64) -> u8 {
    (v.clamp(0.0, 1.0) * 255.0).round() as u8
}

/// The elements of an array field of messages.
pub fn items<'a>(def: &MsgDef, node: &'a Node, name: &str) -> &'a [Node] {
    match sub(def, node, name).map(|n| &n.value) {
        Some(Value::Array(v)) => v,
        _ => &[],
    }
}

/// The numbers of a numeric array field (`float64[36]` covariance, `float32[] ranges`).
pub fn numbers(def: &MsgDef, node: &Node, name: &str) -> Vec<f64> {
    let Some(v) = sub(def, node, name).map(|n| &n.value) else {
        return Vec::new();
    };
    let n = v.len().unwrap_or(0);
    (0..n)
        .filter_map(|i| v.element(i).and_then(|(x, _)| x.as_f64()))
        .collect()
}
