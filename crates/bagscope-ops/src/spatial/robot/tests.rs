use super::*;
use std::collections::HashMap;

const ARM: &str = r#"<?xml version="1.0"?>
<robot name="arm">
  <material name="blue"><color rgba="0 0 1 1"/></material>
  <link name="base"><visual><geometry><box size="1 2 3"/></geometry><material name="blue"/></visual></link>
  <link name="upper"><visual><origin xyz="0 0 0.5"/><geometry><cylinder radius="0.1" length="1"/></geometry></visual></link>
  <link name="slider"/>
  <link name="finger_a"/>
  <link name="finger_b"/>
  <joint name="shoulder" type="revolute">
    <parent link="base"/><child link="upper"/>
    <origin xyz="0 0 1" rpy="0 0 1.5707963267948966"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/>
  </joint>
  <joint name="slide" type="prismatic">
    <parent link="upper"/><child link="slider"/><origin xyz="0 0 1"/><axis xyz="0 0 2"/>
  </joint>
  <joint name="a" type="continuous"><parent link="slider"/><child link="finger_a"/></joint>
  <joint name="b" type="continuous"><parent link="slider"/><child link="finger_b"/>
    <mimic joint="a" multiplier="-2" offset="0.5"/></joint>
</robot>"#;

#[test]
fn a_urdf_reads_and_its_joints_move_its_links() {
    let m = Model::parse(ARM).unwrap();
    assert_eq!(m.root(), Some("base"));
    assert_eq!(m.links.len(), 5);
    assert_eq!(
        m.links[0].visuals[0].geometry,
        Geometry::Box([1.0, 2.0, 3.0])
    );
    assert_eq!(m.links[0].visuals[0].color, Some([0.0, 0.0, 1.0, 1.0]));
    let values: HashMap<String, f64> = [
        ("shoulder".into(), 0.0),
        ("slide".into(), 0.25),
        ("a".into(), 0.3),
    ]
    .into();
    let p = m.link_poses(&values);
    // The slide's axis is normalised: 0.25 m up, above the shoulder's 1 m and the upper 1 m.
    let s = p["slider"].t;
    assert!((s[2] - 2.25).abs() < 1e-12 && s[0].abs() < 1e-12, "{s:?}");
    // The mimic: -2 × 0.3 + 0.5.
    assert!((m.value("b", &values).unwrap() - (-0.1)).abs() < 1e-12);
    // Turning the shoulder by 90° about its y (after the origin's yaw): the slider swings.
    let values: HashMap<String, f64> = [("shoulder".into(), std::f64::consts::FRAC_PI_2)].into();
    let s = m.link_poses(&values)["slider"].t;
    assert!((s[2] - 1.0).abs() < 1e-12, "{s:?}");
    assert!((s[0].hypot(s[1]) - 1.0).abs() < 1e-12, "{s:?}");
    // Without values: the fixed ones only.
    assert!(m.transforms(&HashMap::new()).is_empty());
}

#[test]
fn bad_urdfs_say_what_and_where() {
    for (text, says) in [
        ("<robot><link/></robot>", "<link> at line 1 has no name"),
        ("<robot name='x'><link name='a'/><joint name='j' type='hinge'><parent link='a'/><child link='a'/></joint></robot>", "type \"hinge\""),
        ("<robot><link name='a'/><joint name='j' type='fixed'><parent link='a'/><child link='b'/></joint></robot>", "names link b"),
        ("<robot><link name='a'/>\n<link name='b'><visual><geometry><box size='1 2'/></geometry></visual></link></robot>", "<box size> at line 2: 3 numbers expected, 2 given"),
        ("<robot><link name='a'>", "is not closed"),
        ("<html/>", "not <robot>"),
        ("<robot><link name='a'/><link name='b'/><joint name='j' type='fixed'><parent link='a'/><child link='b'/></joint><joint name='k' type='fixed'><parent link='b'/><child link='a'/></joint></robot>", "loop"),
        ("<robot><link name='a'/><link name='b'/><joint name='j' type='continuous'><parent link='a'/><child link='b'/><mimic joint='z'/></joint></robot>", "mimics z"),
    ] {
        let e = Model::parse(text).unwrap_err();
        assert!(e.contains(says), "{text}: {e}");
    }
    let deep = "<a>".repeat(200);
    assert!(Model::parse(&deep).unwrap_err().contains("deep"));
}
