//! The demo's robot: its URDF (a body, two driven wheels, a caster, the lidar and a camera on a
//! panning, tilting mast), latched on `/robot_description` as robot_state_publisher keeps it,
//! and its joints on `/joint_states` at 50 Hz: the wheels turning as the robot drives, the mast
//! panning and the camera nodding. `/tf` gives the body and the lidar; the 3D panel works the
//! rest out from these two topics.

use super::{Pose, Ser};

/// The URDF. The lidar's joint matches `/tf`'s base_link → laser.
pub(super) const URDF: &str = r#"<?xml version="1.0"?>
<robot name="bagscope_demo_bot">
  <material name="body"><color rgba="0.22 0.42 0.85 1"/></material>
  <material name="tyre"><color rgba="0.12 0.12 0.12 1"/></material>
  <material name="sensor"><color rgba="0.95 0.62 0.12 1"/></material>
  <material name="metal"><color rgba="0.7 0.7 0.72 1"/></material>
  <link name="base_link">
    <visual><origin xyz="0 0 0.11"/><geometry><box size="0.42 0.3 0.12"/></geometry><material name="body"/></visual>
    <collision><origin xyz="0 0 0.11"/><geometry><box size="0.44 0.32 0.14"/></geometry></collision>
  </link>
  <link name="left_wheel">
    <visual><origin rpy="1.5708 0 0"/><geometry><cylinder radius="0.08" length="0.04"/></geometry><material name="tyre"/></visual>
  </link>
  <joint name="left_wheel_joint" type="continuous">
    <parent link="base_link"/><child link="left_wheel"/><origin xyz="0.06 0.17 0.08"/><axis xyz="0 1 0"/>
  </joint>
  <link name="right_wheel">
    <visual><origin rpy="1.5708 0 0"/><geometry><cylinder radius="0.08" length="0.04"/></geometry><material name="tyre"/></visual>
  </link>
  <joint name="right_wheel_joint" type="continuous">
    <parent link="base_link"/><child link="right_wheel"/><origin xyz="0.06 -0.17 0.08"/><axis xyz="0 1 0"/>
  </joint>
  <link name="caster">
    <visual><geometry><sphere radius="0.04"/></geometry><material name="metal"/></visual>
  </link>
  <joint name="caster_joint" type="fixed">
    <parent link="base_link"/><child link="caster"/><origin xyz="-0.15 0 0.04"/>
  </joint>
  <link name="laser">
    <visual><geometry><cylinder radius="0.045" length="0.06"/></geometry><material name="sensor"/></visual>
  </link>
  <joint name="laser_joint" type="fixed">
    <parent link="base_link"/><child link="laser"/><origin xyz="0.12 0 0.25"/>
  </joint>
  <link name="mast">
    <visual><origin xyz="0 0 0.11"/><geometry><cylinder radius="0.015" length="0.22"/></geometry><material name="metal"/></visual>
  </link>
  <joint name="mast_pan_joint" type="revolute">
    <parent link="base_link"/><child link="mast"/><origin xyz="-0.1 0 0.17"/><axis xyz="0 0 1"/>
    <limit lower="-1.5" upper="1.5" effort="5" velocity="2"/>
  </joint>
  <link name="camera_head">
    <visual><geometry><box size="0.05 0.12 0.05"/></geometry><material name="sensor"/></visual>
  </link>
  <joint name="camera_tilt_joint" type="revolute">
    <parent link="mast"/><child link="camera_head"/><origin xyz="0 0 0.24"/><axis xyz="0 1 0"/>
    <limit lower="-0.8" upper="0.8" effort="2" velocity="2"/>
  </joint>
</robot>
"#;

/// Wheel radius and half the track (m).
const WHEEL_R: f64 = 0.08;
const HALF_TRACK: f64 = 0.17;

/// The joint state at `ts` seconds in, at pose `p` (header stamped `t`).
pub(super) fn joint_state(s: &mut Ser, q: u32, t: u64, ts: f64, p: &Pose) {
    use std::f64::consts::TAU;
    // The wheels turn by the distance each has covered: the path's speed times the time,
    // plus or minus the turn (a close enough sum for a demo that drives smoothly).
    let left = ts * (p.v - p.w * HALF_TRACK) / WHEEL_R;
    let right = ts * (p.v + p.w * HALF_TRACK) / WHEEL_R;
    let pan = 1.2 * (TAU * ts / 12.0).sin();
    let tilt = 0.45 * (TAU * ts / 5.0).sin();
    s.header(q, t, "");
    let names = [
        "left_wheel_joint",
        "right_wheel_joint",
        "mast_pan_joint",
        "camera_tilt_joint",
    ];
    s.u32(names.len() as u32);
    for n in names {
        s.str(n);
    }
    s.u32(4);
    for v in [left, right, pan, tilt] {
        s.f64(v);
    }
    // velocity, effort: not given.
    s.u32(0).u32(0);
}
