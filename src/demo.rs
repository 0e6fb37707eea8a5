//! The demo bag: a few minutes of a small robot driving a figure of eight (imu, odometry, tf,
//! laser scan, camera image, battery, velocity commands, log), written by bagscope's own
//! writer so the app has something real to show with no bag at hand.

use std::f64::consts::PI;
use std::path::Path;

use crate::decode::Plan;
use crate::error::Result;
use crate::msgdef::MsgDef;
use crate::writer::{BagWriter, ConnectionSpec, WriteOptions};
use crate::Compression;

const SEP: &str =
    "================================================================================\n";
const HEADER: &str = "MSG: std_msgs/Header\n# Standard metadata for higher-level stamped data types.\nuint32 seq\ntime stamp\nstring frame_id\n";
const VECTOR3: &str = "MSG: geometry_msgs/Vector3\nfloat64 x\nfloat64 y\nfloat64 z\n";
const QUATERNION: &str =
    "MSG: geometry_msgs/Quaternion\nfloat64 x\nfloat64 y\nfloat64 z\nfloat64 w\n";
const POINT: &str = "MSG: geometry_msgs/Point\nfloat64 x\nfloat64 y\nfloat64 z\n";

fn def(main: &str, deps: &[&str]) -> String {
    let mut s = main.to_string();
    for d in deps {
        s.push_str(SEP);
        s.push_str(d);
    }
    s
}

/// Little-endian serializer for ROS 1 messages.
#[derive(Default)]
struct Ser(Vec<u8>);

impl Ser {
    fn u8(&mut self, v: u8) -> &mut Self {
        self.0.push(v);
        self
    }
    fn u32(&mut self, v: u32) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn f32(&mut self, v: f32) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn f64(&mut self, v: f64) -> &mut Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn str(&mut self, s: &str) -> &mut Self {
        self.u32(s.len() as u32);
        self.0.extend_from_slice(s.as_bytes());
        self
    }
    fn header(&mut self, seq: u32, t_ns: u64, frame: &str) -> &mut Self {
        self.u32(seq)
            .u32((t_ns / 1_000_000_000) as u32)
            .u32((t_ns % 1_000_000_000) as u32)
            .str(frame)
    }
    fn vec3(&mut self, v: [f64; 3]) -> &mut Self {
        self.f64(v[0]).f64(v[1]).f64(v[2])
    }
    fn quat_yaw(&mut self, yaw: f64) -> &mut Self {
        self.f64(0.0)
            .f64(0.0)
            .f64((yaw / 2.0).sin())
            .f64((yaw / 2.0).cos())
    }
    fn diag(&mut self, n: usize, d: &[f64]) -> &mut Self {
        for i in 0..n {
            for j in 0..n {
                self.f64(if i == j { d[i % d.len()] } else { 0.0 });
            }
        }
        self
    }
}

/// A small deterministic noise source (xorshift), so the demo bag is the same every time.
struct Noise(u64);

impl Noise {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
    }
}

/// Start of the demo recording: 2024-05-14 09:30:00 UTC.
pub const DEMO_START_NS: u64 = 1_715_679_000_000_000_000;

struct Pose {
    x: f64,
    y: f64,
    yaw: f64,
    v: f64,
    w: f64,
}

/// Figure of eight, 60 s a lap.
fn pose_at(t: f64) -> Pose {
    let a = 2.0 * PI / 60.0;
    let (x, y) = (4.0 * (a * t).sin(), 2.0 * (2.0 * a * t).sin());
    let (dx, dy) = (4.0 * a * (a * t).cos(), 4.0 * a * (2.0 * a * t).cos());
    let (ddx, ddy) = (
        -4.0 * a * a * (a * t).sin(),
        -8.0 * a * a * (2.0 * a * t).sin(),
    );
    let v = (dx * dx + dy * dy).sqrt();
    let w = (dx * ddy - dy * ddx) / (v * v).max(1e-9);
    Pose {
        x,
        y,
        yaw: dy.atan2(dx),
        v,
        w,
    }
}

/// Writes the demo bag (`seconds` long) to `path`; returns the number of messages.
pub fn write_demo(path: &Path, seconds: u32) -> Result<u64> {
    let mut w = BagWriter::create(
        path,
        WriteOptions {
            compression: Compression::Lz4,
            chunk_size: 768 * 1024,
        },
    )?;
    let mut add = |topic: &str, datatype: &str, text: String, caller: &str| -> Result<u32> {
        let md5 = MsgDef::parse(datatype, &text)
            .map(|d| Plan::new(d).md5)
            .unwrap_or_default();
        Ok(w.add_connection(ConnectionSpec {
            topic: topic.into(),
            datatype: datatype.into(),
            md5sum: md5,
            message_definition: text,
            callerid: Some(caller.into()),
            latching: false,
        }))
    };
    let imu = add(
        "/imu/data",
        "sensor_msgs/Imu",
        def(
            "Header header\ngeometry_msgs/Quaternion orientation\nfloat64[9] orientation_covariance # Row major about x, y, z axes\ngeometry_msgs/Vector3 angular_velocity\nfloat64[9] angular_velocity_covariance\ngeometry_msgs/Vector3 linear_acceleration\nfloat64[9] linear_acceleration_covariance\n",
            &[HEADER, QUATERNION, VECTOR3],
        ),
        "/imu_driver",
    )?;
    let odom = add(
        "/odom",
        "nav_msgs/Odometry",
        def(
            "Header header\nstring child_frame_id\ngeometry_msgs/PoseWithCovariance pose\ngeometry_msgs/TwistWithCovariance twist\n",
            &[
                HEADER,
                "MSG: geometry_msgs/PoseWithCovariance\nPose pose\nfloat64[36] covariance\n",
                "MSG: geometry_msgs/Pose\nPoint position\nQuaternion orientation\n",
                POINT,
                QUATERNION,
                "MSG: geometry_msgs/TwistWithCovariance\nTwist twist\nfloat64[36] covariance\n",
                "MSG: geometry_msgs/Twist\nVector3  linear\nVector3  angular\n",
                VECTOR3,
            ],
        ),
        "/base_controller",
    )?;
    let tf = add(
        "/tf",
        "tf2_msgs/TFMessage",
        def(
            "geometry_msgs/TransformStamped[] transforms\n",
            &[
                "MSG: geometry_msgs/TransformStamped\nHeader header\nstring child_frame_id # the frame id of the child frame\nTransform transform\n",
                HEADER,
                "MSG: geometry_msgs/Transform\nVector3 translation\nQuaternion rotation\n",
                VECTOR3,
                QUATERNION,
            ],
        ),
        "/robot_state_publisher",
    )?;
    let scan = add(
        "/scan",
        "sensor_msgs/LaserScan",
        def(
            "Header header\nfloat32 angle_min\nfloat32 angle_max\nfloat32 angle_increment\nfloat32 time_increment\nfloat32 scan_time\nfloat32 range_min\nfloat32 range_max\nfloat32[] ranges\nfloat32[] intensities\n",
            &[HEADER],
        ),
        "/lidar",
    )?;
    let image = add(
        "/camera/front/image_raw",
        "sensor_msgs/Image",
        def(
            "Header header\nuint32 height\nuint32 width\nstring encoding\nuint8 is_bigendian\nuint32 step\nuint8[] data\n",
            &[HEADER],
        ),
        "/camera_driver",
    )?;
    let battery = add(
        "/battery/voltage",
        "std_msgs/Float32",
        "float32 data\n".into(),
        "/power_monitor",
    )?;
    let cmd = add(
        "/cmd_vel",
        "geometry_msgs/Twist",
        def("Vector3  linear\nVector3  angular\n", &[VECTOR3]),
        "/teleop",
    )?;
    let log = add(
        "/rosout",
        "rosgraph_msgs/Log",
        def(
            "##\n## Severity level constants\n##\nbyte DEBUG=1 #debug level\nbyte INFO=2  #general level\nbyte WARN=4  #warning level\nbyte ERROR=8 #error level\nbyte FATAL=16 #fatal/critical level\n##\n## Fields\n##\nHeader header\nbyte level\nstring name # name of the node\nstring msg # message \nstring file # file the message came from\nstring function # function the message came from\nuint32 line # line the message came from\nstring[] topics # topic names that the node publishes\n",
            &[HEADER],
        ),
        "/rosout",
    )?;

    // (period ns, phase ns, which)
    let streams: [(u64, u64, u32); 8] = [
        (10_000_000, 1_000_000, imu),
        (20_000_000, 3_000_000, odom),
        (20_000_000, 4_000_000, tf),
        (100_000_000, 7_000_000, scan),
        (200_000_000, 11_000_000, image),
        (1_000_000_000, 13_000_000, battery),
        (100_000_000, 17_000_000, cmd),
        (5_000_000_000, 19_000_000, log),
    ];
    let end = DEMO_START_NS + u64::from(seconds) * 1_000_000_000;
    let mut next: Vec<u64> = streams.iter().map(|s| DEMO_START_NS + s.1).collect();
    let mut seq = [0u32; 8];
    let mut noise = Noise(0x9E37_79B9_7F4A_7C15);
    let mut n = 0u64;
    while let Some((k, &t)) = next.iter().enumerate().min_by_key(|(_, t)| **t) {
        if t >= end {
            break;
        }
        let (period, _, conn) = streams[k];
        // A little jitter in the receive time, as a recorder sees it.
        let jitter = ((noise.next() + 1.0) * 150_000.0) as u64;
        let recv = t + jitter + 200_000;
        let ts = (t - DEMO_START_NS) as f64 * 1e-9;
        let p = pose_at(ts);
        let mut s = Ser::default();
        let q = seq[k];
        match k {
            0 => {
                let acc = [
                    p.v * p.w * 0.0 + noise.next() * 0.05,
                    p.v * p.w + noise.next() * 0.05,
                    9.81 + noise.next() * 0.05,
                ];
                s.header(q, t, "imu_link")
                    .quat_yaw(p.yaw)
                    .diag(3, &[1e-4])
                    .vec3([
                        noise.next() * 0.01,
                        noise.next() * 0.01,
                        p.w + noise.next() * 0.01,
                    ])
                    .diag(3, &[1e-4])
                    .vec3(acc)
                    .diag(3, &[1e-3]);
            }
            1 => {
                s.header(q, t, "odom")
                    .str("base_link")
                    .vec3([p.x, p.y, 0.0])
                    .quat_yaw(p.yaw)
                    .diag(6, &[0.01, 0.01, 1e6, 1e6, 1e6, 0.02])
                    .vec3([p.v, 0.0, 0.0])
                    .vec3([0.0, 0.0, p.w])
                    .diag(6, &[0.005, 0.005, 1e6, 1e6, 1e6, 0.01]);
            }
            2 => {
                s.u32(2);
                s.header(q, t, "odom")
                    .str("base_link")
                    .vec3([p.x, p.y, 0.0])
                    .quat_yaw(p.yaw);
                s.header(q, t, "base_link")
                    .str("laser")
                    .vec3([0.12, 0.0, 0.25])
                    .quat_yaw(0.0);
            }
            3 => {
                let nb = 360usize;
                s.header(q, t, "laser")
                    .f32(-PI as f32)
                    .f32(PI as f32)
                    .f32((2.0 * PI / nb as f64) as f32)
                    .f32(0.0)
                    .f32(0.1)
                    .f32(0.1)
                    .f32(12.0);
                s.u32(nb as u32);
                for i in 0..nb {
                    // A 10 × 6 m room seen from the robot's pose.
                    let a = -PI + 2.0 * PI * i as f64 / nb as f64 + p.yaw;
                    let (c, si) = (a.cos(), a.sin());
                    let rx = if c > 0.0 {
                        (5.0 - p.x) / c
                    } else {
                        (-5.0 - p.x) / c
                    };
                    let ry = if si > 0.0 {
                        (3.0 - p.y) / si
                    } else {
                        (-3.0 - p.y) / si
                    };
                    let r = rx.min(ry).min(12.0) + noise.next() * 0.01;
                    s.f32(r as f32);
                }
                s.u32(nb as u32);
                for i in 0..nb {
                    s.f32((100.0 + 40.0 * (i as f64 * 0.1).cos()) as f32);
                }
            }
            4 => {
                let (w_, h_) = (64u32, 48u32);
                s.header(q, t, "camera_front")
                    .u32(h_)
                    .u32(w_)
                    .str("rgb8")
                    .u8(0)
                    .u32(w_ * 3);
                s.u32(w_ * h_ * 3);
                let shift = (p.yaw * 20.0) as i64;
                for y in 0..h_ {
                    for x in 0..w_ {
                        let xx = (i64::from(x) + shift).rem_euclid(64) as u32;
                        let sky = y < h_ / 2;
                        let (r, g, b) = if sky {
                            (120 + y * 2, 170 + y, 230)
                        } else if (xx / 8 + y / 8).is_multiple_of(2) {
                            (90, 140, 60)
                        } else {
                            (70, 115, 50)
                        };
                        s.u8(r as u8).u8(g as u8).u8(b as u8);
                    }
                }
            }
            5 => {
                s.f32((12.6 - 0.004 * ts + noise.next() * 0.01) as f32);
            }
            6 => {
                s.vec3([p.v, 0.0, 0.0]).vec3([0.0, 0.0, p.w]);
            }
            _ => {
                let (level, msg) = if q % 6 == 5 {
                    (4u8, format!("Battery below {:.1} V", 12.6 - 0.004 * ts))
                } else {
                    (
                        2u8,
                        format!("Lap {:.2}, odometry x={:.2} y={:.2}", ts / 60.0, p.x, p.y),
                    )
                };
                s.header(q, t, "")
                    .u8(level)
                    .str("/navigator")
                    .str(&msg)
                    .str("navigator.cpp")
                    .str("Navigator::spin")
                    .u32(120 + q % 7);
                s.u32(2).str("/cmd_vel").str("/rosout");
            }
        }
        w.write(conn, recv, &s.0)?;
        n += 1;
        seq[k] += 1;
        next[k] = t + period;
    }
    w.finish()?;
    Ok(n)
}

/// Where the app keeps its demo bag: the user's cache directory, else the temp directory.
pub fn demo_path() -> std::path::PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("bagscope").join("demo-v1.bag")
}

/// The demo bag's path, writing it first if it is not there yet.
pub fn ensure_demo() -> Result<std::path::PathBuf> {
    let p = demo_path();
    if !p.is_file() {
        if let Some(d) = p.parent() {
            std::fs::create_dir_all(d)?;
        }
        write_demo(&p, 180)?;
    }
    Ok(p)
}
