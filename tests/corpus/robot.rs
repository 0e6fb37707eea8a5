//! Robot models: real URDFs shipped by pybullet's `pybullet_data` (a KUKA iiwa, a Franka Panda
//! with its mimic finger, R2-D2's continuous wheels and prismatic gripper, a UFactory xArm 6,
//! the Minitaur quadruped), read by bagscope; every link's pose for random joint values equal
//! to yourdfpy's forward kinematics within 1e-9 m and 1e-9 rad.

use std::collections::HashMap;
use std::process::Command;

use bagscope_ops::geom::Pose;
use bagscope_ops::spatial::robot::{JointKind, Model};

use crate::common;

pub(crate) fn pybullet_data() -> std::path::PathBuf {
    let out = Command::new("python3")
        .args([
            "-c",
            "import pybullet_data; print(pybullet_data.getDataPath())",
        ])
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "pybullet is missing (pip: pybullet yourdfpy; .ci/run installs them): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().into()
}

/// The rotation matrix of a unit quaternion, row-major.
fn matrix(p: &Pose) -> [f64; 12] {
    let [x, y, z, w] = p.q;
    [
        1.0 - 2.0 * (y * y + z * z),
        2.0 * (x * y - z * w),
        2.0 * (x * z + y * w),
        p.t[0],
        2.0 * (x * y + z * w),
        1.0 - 2.0 * (x * x + z * z),
        2.0 * (y * z - x * w),
        p.t[1],
        2.0 * (x * z - y * w),
        2.0 * (y * z + x * w),
        1.0 - 2.0 * (x * x + y * y),
        p.t[2],
    ]
}

#[test]
fn link_poses_equal_yourdfpys() {
    let data = pybullet_data();
    let dir = common::temp_dir("robot-fk");
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let mut rand = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    for (name, links) in [
        ("kuka_iiwa/model.urdf", 8),
        ("franka_panda/panda.urdf", 13),
        ("r2d2.urdf", 16),
        ("xarm/xarm6_robot.urdf", 8),
        ("quadruped/minitaur.urdf", 27),
    ] {
        let path = data.join(name);
        let model = Model::parse(&std::fs::read_to_string(&path).unwrap())
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(model.links.len(), links, "{name}");
        // Random values of every moving joint that mimics none, within its limits.
        let configs: Vec<HashMap<String, f64>> = (0..20)
            .map(|_| {
                model
                    .joints
                    .iter()
                    .filter(|j| {
                        j.mimic.is_none()
                            && matches!(
                                j.kind,
                                JointKind::Revolute | JointKind::Continuous | JointKind::Prismatic
                            )
                    })
                    .map(|j| {
                        let (lo, hi) = j.limits.filter(|(l, h)| h > l).unwrap_or((-3.0, 3.0));
                        (j.name.clone(), lo + (hi - lo) * rand())
                    })
                    .collect()
            })
            .collect();
        let cfg = dir.join("configs.json");
        std::fs::write(&cfg, serde_json::to_string(&configs).unwrap()).unwrap();
        let out = Command::new("python3")
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/py/urdf_fk.py"))
            .arg(&path)
            .arg(&cfg)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let theirs: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(theirs["root"].as_str(), model.root(), "{name}");
        let mut compared = 0;
        for (k, values) in configs.iter().enumerate() {
            let ours = model.link_poses(values);
            let t = theirs["configs"][k].as_object().unwrap();
            assert_eq!(ours.len(), t.len(), "{name}");
            for (link, m) in t {
                let m: Vec<f64> = m
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_f64().unwrap())
                    .collect();
                let o = matrix(&ours[link]);
                // 3×4 of the 4×4: the rotation (unitless, ~rad) and the translation (m).
                let theirs12: Vec<f64> =
                    (0..3).flat_map(|r| m[4 * r..4 * r + 4].to_vec()).collect();
                for (i, (a, b)) in o.iter().zip(&theirs12).enumerate() {
                    assert!(
                        (a - b).abs() < 1e-9,
                        "{name} config {k} link {link} [{i}]: {a} vs {b}"
                    );
                }
                compared += 1;
            }
        }
        assert_eq!(compared, 20 * links, "{name}");
    }
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u32).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

/// The first message's time in the recordings of these tests.
const T0: u64 = 1_700_000_000_000_000_000;

/// A ROS 1 bag at `path` as robot_state_publisher's inputs hold a robot: `urdf` (if any) on a
/// latched `/robot_description` at [`T0`], and a `sensor_msgs/JointState` of each `(time,
/// joints)` on `/joint_states`.
fn robot_recording(
    path: &std::path::Path,
    urdf: Option<&str>,
    states: &[(u64, Vec<(String, f64)>)],
) {
    use bagscope_reader::definition::msg::Dialect;
    use bagscope_reader::definition::sources::lookup;
    use bagscope_reader::{BagWriter, ConnectionSpec, WriteOptions};
    let mut w = BagWriter::create(path, WriteOptions::default()).unwrap();
    if let Some(urdf) = urdf {
        let desc = w.add_connection(ConnectionSpec {
            topic: "/robot_description".into(),
            datatype: "std_msgs/String".into(),
            md5sum: "992ce8a1687cec8c8bd883ec73ca41d1".into(),
            message_definition: "string data\n".into(),
            callerid: Some("/robot_state_publisher".into()),
            latching: true,
        });
        let mut m = Vec::new();
        put_str(&mut m, urdf);
        w.write(desc, T0, &m).unwrap();
    }
    let (js_def, _) = lookup("sensor_msgs/JointState", Dialect::Ros1, &[]).expect("shipped");
    let js = w.add_connection(ConnectionSpec {
        topic: "/joint_states".into(),
        datatype: "sensor_msgs/JointState".into(),
        md5sum: "3066dcd76a6cfaef579bd0f34173e9fd".into(),
        message_definition: js_def,
        callerid: Some("/driver".into()),
        latching: false,
    });
    for (k, (t, joints)) in states.iter().enumerate() {
        let mut m = Vec::new();
        m.extend_from_slice(&(k as u32).to_le_bytes());
        m.extend_from_slice(&((t / 1_000_000_000) as u32).to_le_bytes());
        m.extend_from_slice(&((t % 1_000_000_000) as u32).to_le_bytes());
        put_str(&mut m, "");
        m.extend_from_slice(&(joints.len() as u32).to_le_bytes());
        for (n, _) in joints {
            put_str(&mut m, n);
        }
        m.extend_from_slice(&(joints.len() as u32).to_le_bytes());
        for (_, v) in joints {
            m.extend_from_slice(&v.to_le_bytes());
        }
        // No velocities, no efforts.
        m.extend_from_slice(&[0u8; 8]);
        w.write(js, *t, &m).unwrap();
    }
    w.finish().unwrap();
}

/// The iiwa's seven joints at `values`.
fn iiwa_joints(values: &[f64]) -> Vec<(String, f64)> {
    (1..=7)
        .map(|i| format!("lbr_iiwa_joint_{i}"))
        .zip(values.iter().copied())
        .collect()
}

/// A recording of the KUKA iiwa as robot_state_publisher's inputs hold it: its URDF on a
/// latched `/robot_description` and `/joint_states` at 10 Hz (with a joint the URDF does not
/// have), no `/tf`: the links' frames are worked out from them, in the transform history
/// `bagscope tf`, the TF window and the 3D panel read.
#[test]
fn a_recordings_robot_joins_its_transform_tree() {
    use bagscope_ops::spatial::tf::TfHistory;
    use std::sync::atomic::AtomicBool;

    let urdf = std::fs::read_to_string(pybullet_data().join("kuka_iiwa/model.urdf")).unwrap();
    let model = Model::parse(&urdf).unwrap();
    let dir = common::temp_dir("robot-tf");
    let path = dir.join("iiwa.bag");
    let names: Vec<String> = (1..=7).map(|i| format!("lbr_iiwa_joint_{i}")).collect();
    let mut sent = Vec::new();
    let mut states = Vec::new();
    for k in 0..50u32 {
        let t = T0 + 1_000_000 + u64::from(k) * 100_000_000;
        let values: Vec<f64> = (0..7).map(|i| ((k * 7 + i) as f64 * 0.37).sin()).collect();
        // And a joint the URDF does not have.
        let mut joints = iiwa_joints(&values);
        joints.push(("gripper_x".into(), 0.0));
        states.push((t, joints));
        sent.push((t, values));
    }
    robot_recording(&path, Some(&urdf), &states);
    let bag = bagscope_reader::Bag::open(&path).unwrap();
    assert!(bagscope_ops::spatial::tf::has_transforms(&bag, None));
    let h = TfHistory::read(&bag, None, None, &AtomicBool::new(false)).unwrap();
    assert_eq!(h.robot.problem, None);
    assert_eq!(h.robot.unknown_joints, ["gripper_x"]);
    assert_eq!(h.robot.frames.len(), 7);
    for (t, values) in &sent {
        let v: HashMap<String, f64> = names.iter().cloned().zip(values.iter().copied()).collect();
        let want = model.link_poses(&v)["lbr_iiwa_link_7"];
        let got = h.lookup("lbr_iiwa_link_0", "lbr_iiwa_link_7", *t).unwrap();
        for i in 0..3 {
            assert!(
                (got.t[i] - want.t[i]).abs() < 1e-12,
                "{t}: {got:?} {want:?}"
            );
        }
        let dot: f64 = (0..4).map(|i| got.q[i] * want.q[i]).sum();
        assert!((dot.abs() - 1.0).abs() < 1e-12, "{t}: {got:?} {want:?}");
    }
    // `bagscope tf`: the pose at the tenth joint state, and what it could not place.
    let out = Command::new(env!("CARGO_BIN_EXE_bagscope"))
        .args([
            "tf",
            "--target",
            "lbr_iiwa_link_0",
            "--source",
            "lbr_iiwa_link_7",
            "--at",
        ])
        // Half a millisecond after it, from the start (epoch seconds as f64 land a hair before).
        .arg(format!("+{}", (sent[10].0 - T0) as f64 / 1e9 + 0.0005))
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let v: HashMap<String, f64> = names
        .iter()
        .cloned()
        .zip(sent[10].1.iter().copied())
        .collect();
    let want = model.link_poses(&v)["lbr_iiwa_link_7"].t;
    assert!(
        text.contains(&format!(
            "xyz [{:.4}, {:.4}, {:.4}]",
            want[0], want[1], want[2]
        )),
        "{text} vs {want:?}"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("7 frame(s) from the robot description") && err.contains("gripper_x"),
        "{err}"
    );
}

/// The KUKA iiwa's recording (its URDF, with its mesh files named by absolute path, and joint
/// states) drawn by the 3D scene: every link's OBJ mesh, each triangle where the link's
/// forward kinematics at that joint state and the visual's origin put it, in the fixed frame
/// of its base; the collision STL meshes when asked; a mesh that is missing named and the rest
/// drawn.
#[test]
fn the_robot_model_is_drawn_at_its_links() {
    use bagscope_ops::spatial::robot::{mesh, Geometry};
    use bagscope_ops::spatial::scene::{Builder, Frames, Request};
    use bagscope_ops::spatial::tf::TfHistory;
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    let data = pybullet_data().join("kuka_iiwa");
    let text = std::fs::read_to_string(data.join("model.urdf")).unwrap();
    let urdf = text.replace(
        "filename=\"meshes/",
        &format!("filename=\"{}/meshes/", data.display()),
    );
    // The same with one mesh missing.
    let broken = urdf.replace("meshes/link_3.obj", "meshes/link_3_gone.obj");
    let model = Model::parse(&urdf).unwrap();
    let names: Vec<String> = (1..=7).map(|i| format!("lbr_iiwa_joint_{i}")).collect();
    let values: Vec<f64> = (0..7).map(|i| (i as f64 * 0.61).sin()).collect();
    let dir = common::temp_dir("robot-scene");
    let record = |file: &str, urdf: &str| {
        let path = dir.join(file);
        robot_recording(&path, Some(urdf), &[(T0 + 1_000_000, iiwa_joints(&values))]);
        let bag = bagscope_reader::Bag::open(&path).unwrap();
        let tables = bag.tables().unwrap();
        let tf = TfHistory::read(&bag, None, None, &AtomicBool::new(false)).unwrap();
        (bag, tables, Arc::new(tf), T0 + 2_000_000)
    };
    let request = |t: u64, collision: bool| Request {
        t,
        fixed: "lbr_iiwa_link_0".into(),
        layers: Vec::new(),
        frames: Frames {
            axes: false,
            names: false,
            links: false,
            robot: true,
            collision,
            ..Frames::default()
        },
        grid: 0,
    };
    let v: HashMap<String, f64> = names.iter().cloned().zip(values.iter().copied()).collect();
    let poses = model.link_poses(&v);
    // Every triangle the scene should draw, in order: each link's shapes' mesh triangles.
    let want = |collision: bool| -> Vec<[f64; 3]> {
        let mut out = Vec::new();
        for link in &model.links {
            let shapes = if collision {
                &link.collisions
            } else {
                &link.visuals
            };
            for s in shapes {
                let Geometry::Mesh { filename, scale } = &s.geometry else {
                    panic!("{}: the iiwa's shapes are meshes", link.name)
                };
                let m = mesh::load(std::path::Path::new(filename)).unwrap();
                let at = poses[link.name.as_str()].then(&s.origin);
                for p in &m.parts {
                    for t in &p.tris {
                        for c in t {
                            out.push(at.apply([
                                f64::from(c[0]) * scale[0],
                                f64::from(c[1]) * scale[1],
                                f64::from(c[2]) * scale[2],
                            ]));
                        }
                    }
                }
            }
        }
        out
    };
    let (bag, tables, tf, t) = record("iiwa.bag", &urdf);
    let mut b = Builder::new(bag, tables, Some(tf));
    let cancel = AtomicBool::new(false);
    for collision in [false, true] {
        let s = b.build(&request(t, collision), &cancel);
        let r = &s.robot_status;
        assert!(r.problems.is_empty(), "{r:?}");
        let want = want(collision);
        // The meshes are kept as read and placed by each link's pose (on the GPU): the corners
        // they put in the fixed frame.
        let (drawn, _) = s.mesh_triangles();
        assert_eq!(drawn.len(), want.len(), "{r:?}");
        assert!(
            r.text.contains("8 links")
                && r.text
                    .contains(&bagscope_ops::timefmt::thousands(want.len() / 3)),
            "{r:?}"
        );
        for (got, w) in drawn.iter().zip(&want) {
            for k in 0..3 {
                assert!(
                    (f64::from(got[k]) - w[k]).abs() < 1e-5,
                    "collision {collision}: {got:?} vs {w:?}"
                );
            }
        }
        // Links can be picked: the hand's pick is at its frame.
        let hand = s
            .picks
            .iter()
            .find(|p| p.what == "robot link lbr_iiwa_link_7 in lbr_iiwa_link_0")
            .unwrap();
        let at = poses["lbr_iiwa_link_7"].t;
        assert!((0..3).all(|k| (f64::from(hand.pos[k]) - at[k]).abs() < 1e-5));
    }
    // A missing mesh: named, the other links drawn.
    let (bag, tables, tf, t) = record("broken.bag", &broken);
    let mut b = Builder::new(bag, tables, Some(tf));
    let s = b.build(&request(t, false), &cancel);
    let r = &s.robot_status;
    assert_eq!(r.problems.len(), 1, "{r:?}");
    assert!(
        r.problems[0].contains("link_3_gone.obj") && r.problems[0].contains("no such file"),
        "{r:?}"
    );
    assert!(s.mesh_triangles().0.len() > want(false).len() / 2, "{r:?}");
}

/// `--urdf FILE`: a recording of joint states alone gets its robot's frames from a URDF file
/// the user gives (`bagscope tf`); a file that does not read says so and what is wrong.
#[test]
fn a_urdf_file_stands_in_for_the_recordings_description() {
    let urdf = pybullet_data().join("kuka_iiwa/model.urdf");
    let dir = common::temp_dir("robot-urdf-flag");
    let path = dir.join("joints.bag");
    let mut values = [0.0; 7];
    values[1] = 0.5;
    robot_recording(&path, None, &[(T0, iiwa_joints(&values))]);
    let tf = |urdf: &std::path::Path| {
        Command::new(env!("CARGO_BIN_EXE_bagscope"))
            .args(["tf", "--urdf"])
            .arg(urdf)
            .args(["--target", "lbr_iiwa_link_0", "--source", "lbr_iiwa_link_2"])
            .arg(&path)
            .output()
            .unwrap()
    };
    let out = tf(&urdf);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("frame(s) from the robot description"), "{err}");
    // Joint 2 at 0.5 rad about y: link 2 lies 0.36 m up (joint 1's origin 0.1575, joint 2's
    // 0.2025), turned by the joint's angle.
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("xyz [0.0000, 0.0000, 0.3600]"), "{text}");
    let bad = dir.join("bad.urdf");
    std::fs::write(&bad, "<robot name=\"x\"><link name=\"a\"></robot>").unwrap();
    let out = tf(&bad);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("the robot model is not used") && err.contains("bad.urdf"),
        "{err}"
    );
}

/// A ROS 2 recording without `/robot_description` (written by rosbags): robot_state_publisher's
/// `robot_description` parameter declared on `/parameter_events` is the robot model, and the
/// joint states move its links in the transform tree.
#[test]
fn a_ros2_recordings_parameter_event_gives_the_robot() {
    use bagscope_ops::spatial::tf::TfHistory;
    use std::sync::atomic::AtomicBool;

    let urdf = pybullet_data().join("kuka_iiwa/model.urdf");
    let model = Model::parse(&std::fs::read_to_string(&urdf).unwrap()).unwrap();
    let dir = common::temp_dir("robot-parameter");
    let out = dir.join("rec");
    let py = Command::new("python3")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/py/rosbags_parameter_urdf.py"
        ))
        .arg(&out)
        .arg(&urdf)
        .output()
        .unwrap();
    assert!(
        py.status.success(),
        "{}",
        String::from_utf8_lossy(&py.stderr)
    );
    let bag = bagscope_reader::Bag::open(&out).unwrap();
    assert!(bagscope_ops::spatial::tf::has_transforms(&bag, None));
    let h = TfHistory::read(&bag, None, None, &AtomicBool::new(false)).unwrap();
    assert_eq!(h.robot.problem, None);
    assert_eq!(h.robot.frames.len(), 7, "{:?}", h.robot);
    for k in 1..=3u64 {
        let v: HashMap<String, f64> = (1..=7)
            .map(|i| (format!("lbr_iiwa_joint_{i}"), 0.1 * k as f64 * f64::from(i)))
            .collect();
        let want = model.link_poses(&v)["lbr_iiwa_link_7"];
        let got = h
            .lookup("lbr_iiwa_link_0", "lbr_iiwa_link_7", T0 + k * 1_000_000_000)
            .unwrap();
        for i in 0..3 {
            assert!(
                (got.t[i] - want.t[i]).abs() < 1e-12,
                "{k}: {got:?} {want:?}"
            );
        }
    }
}
