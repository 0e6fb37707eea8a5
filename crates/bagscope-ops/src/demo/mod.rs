//! The demo bag: a few minutes of a small robot driving a figure of eight (imu, odometry, tf,
//! laser scan, a front camera (colour and depth, and as H.264 video) and an overhead camera (jpeg), battery, velocity commands, log, and the robot's own model and joint states), written by bagscope's own
//! writer so the app has something real to show with no bag at hand.

use std::f64::consts::PI;
use std::path::Path;

use crate::Result;
use bagscope_reader::definition::msg::MsgDef;
use bagscope_reader::encoding::Plan;
use bagscope_reader::storage::ros1::writer::{BagWriter, ConnectionSpec, WriteOptions};
use bagscope_reader::Compression;

mod render;
mod robot;
mod video;

use render::{cast, render_depth, render_front, render_overhead, FRONT_H, FRONT_W, WALL_H};

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
    let [imu, odom, tf, scan, image, depth, overhead, battery, cmd, log, points, plan, markers, tf_static, video, joints, description] =
        connections(&mut w)?;
    // (period ns, phase ns, which)
    let streams: [(u64, u64, u32); 17] = [
        (10_000_000, 1_000_000, imu),
        (20_000_000, 3_000_000, odom),
        (20_000_000, 4_000_000, tf),
        (100_000_000, 7_000_000, scan),
        (200_000_000, 11_000_000, image),
        (1_000_000_000, 13_000_000, battery),
        (100_000_000, 17_000_000, cmd),
        (5_000_000_000, 19_000_000, log),
        (200_000_000, 12_000_000, depth),
        (1_000_000_000, 23_000_000, overhead),
        (200_000_000, 9_000_000, points),
        (1_000_000_000, 29_000_000, plan),
        (1_000_000_000, 31_000_000, markers),
        // Once, first: the map's place of the odometry frame.
        (u64::MAX / 2, 0, tf_static),
        (100_000_000, 15_000_000, video),
        (20_000_000, 5_000_000, joints),
        // Once, first, latched: the robot's URDF.
        (u64::MAX / 2, 0, description),
    ];
    let end = DEMO_START_NS + u64::from(seconds) * 1_000_000_000;
    let mut next: Vec<u64> = streams.iter().map(|s| DEMO_START_NS + s.1).collect();
    let mut seq = [0u32; 17];
    let mut camera = video::Camera::new()?;
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
        if k == 14 {
            camera.frame(&mut s, t, &p)?;
        } else {
            fill(&mut s, k, q, t, &p, &mut noise)?;
        }
        w.write(conn, recv, &s.0)?;
        n += 1;
        seq[k] += 1;
        next[k] = t.saturating_add(period);
    }
    w.finish()?;
    Ok(n)
}

/// The demo's connections, each with its definition and publisher: imu, odom, tf, scan, the
/// front camera, its depth, the overhead camera (jpeg), battery, cmd_vel, rosout, the lidar's
/// point cloud, the planned path, the planner's markers, the static transforms.
fn connections(w: &mut BagWriter) -> Result<[u32; 17]> {
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
            latching: topic == "/tf_static" || topic == "/robot_description",
        }))
    };
    let tf_def = def(
        "geometry_msgs/TransformStamped[] transforms\n",
        &[
            "MSG: geometry_msgs/TransformStamped\nHeader header\nstring child_frame_id # the frame id of the child frame\nTransform transform\n",
            HEADER,
            "MSG: geometry_msgs/Transform\nVector3 translation\nQuaternion rotation\n",
            VECTOR3,
            QUATERNION,
        ],
    );
    let pose_deps = [
        "MSG: geometry_msgs/Pose\nPoint position\nQuaternion orientation\n",
        POINT,
        QUATERNION,
    ];
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
        tf_def.clone(),
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
    let image_def = def(
        "Header header\nuint32 height\nuint32 width\nstring encoding\nuint8 is_bigendian\nuint32 step\nuint8[] data\n",
        &[HEADER],
    );
    let image = add(
        "/camera/front/image_raw",
        "sensor_msgs/Image",
        image_def.clone(),
        "/camera_driver",
    )?;
    let depth = add(
        "/camera/front/depth/image_raw",
        "sensor_msgs/Image",
        image_def,
        "/camera_driver",
    )?;
    let overhead = add(
        "/camera/overhead/image_raw/compressed",
        "sensor_msgs/CompressedImage",
        def("Header header\nstring format\nuint8[] data\n", &[HEADER]),
        "/overhead_camera",
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

    let points = add(
        "/lidar/points",
        "sensor_msgs/PointCloud2",
        def(
            "Header header\nuint32 height\nuint32 width\nPointField[] fields\nbool    is_bigendian\nuint32  point_step\nuint32  row_step\nuint8[] data\nbool is_dense\n",
            &[
                HEADER,
                "MSG: sensor_msgs/PointField\nuint8 INT8    = 1\nuint8 UINT8   = 2\nuint8 INT16   = 3\nuint8 UINT16  = 4\nuint8 INT32   = 5\nuint8 UINT32  = 6\nuint8 FLOAT32 = 7\nuint8 FLOAT64 = 8\nstring name\nuint32 offset\nuint8  datatype\nuint32 count\n",
            ],
        ),
        "/lidar",
    )?;
    let mut path_deps = vec![
        "MSG: geometry_msgs/PoseStamped\nHeader header\nPose pose\n",
        HEADER,
    ];
    path_deps.extend(pose_deps);
    let plan = add(
        "/plan",
        "nav_msgs/Path",
        def(
            "Header header\ngeometry_msgs/PoseStamped[] poses\n",
            &path_deps,
        ),
        "/planner",
    )?;
    let mut marker_deps = vec![
        "MSG: visualization_msgs/Marker\nuint8 ARROW=0\nuint8 CUBE=1\nuint8 SPHERE=2\nuint8 CYLINDER=3\nuint8 LINE_STRIP=4\nuint8 LINE_LIST=5\nuint8 CUBE_LIST=6\nuint8 SPHERE_LIST=7\nuint8 POINTS=8\nuint8 TEXT_VIEW_FACING=9\nuint8 MESH_RESOURCE=10\nuint8 TRIANGLE_LIST=11\nuint8 ADD=0\nuint8 MODIFY=0\nuint8 DELETE=2\nuint8 DELETEALL=3\nHeader header\nstring ns\nint32 id\nint32 type\nint32 action\ngeometry_msgs/Pose pose\ngeometry_msgs/Vector3 scale\nstd_msgs/ColorRGBA color\nduration lifetime\nbool frame_locked\ngeometry_msgs/Point[] points\nstd_msgs/ColorRGBA[] colors\nstring text\nstring mesh_resource\nbool mesh_use_embedded_materials\n",
        HEADER,
    ];
    marker_deps.extend(pose_deps);
    marker_deps.extend([
        VECTOR3,
        "MSG: std_msgs/ColorRGBA\nfloat32 r\nfloat32 g\nfloat32 b\nfloat32 a\n",
    ]);
    let markers = add(
        "/planner/markers",
        "visualization_msgs/MarkerArray",
        def("visualization_msgs/Marker[] markers\n", &marker_deps),
        "/planner",
    )?;
    let tf_static = add(
        "/tf_static",
        "tf2_msgs/TFMessage",
        tf_def,
        "/static_transform_publisher",
    )?;
    let video = add(
        "/camera/front/h264",
        "foxglove_msgs/CompressedVideo",
        "time timestamp\nstring frame_id\nuint8[] data\nstring format\n".into(),
        "/camera_driver",
    )?;
    let joints = add(
        "/joint_states",
        "sensor_msgs/JointState",
        def(
            "Header header\nstring[] name\nfloat64[] position\nfloat64[] velocity\nfloat64[] effort\n",
            &[HEADER],
        ),
        "/joint_state_publisher",
    )?;
    let description = add(
        "/robot_description",
        "std_msgs/String",
        "string data\n".into(),
        "/robot_state_publisher",
    )?;
    Ok([
        imu,
        odom,
        tf,
        scan,
        image,
        depth,
        overhead,
        battery,
        cmd,
        log,
        points,
        plan,
        markers,
        tf_static,
        video,
        joints,
        description,
    ])
}

/// The message of stream `k` (number `q`, stamped `t`) at the robot's pose `p`.
fn fill(s: &mut Ser, k: usize, q: u32, t: u64, p: &Pose, noise: &mut Noise) -> Result<()> {
    let ts = (t - DEMO_START_NS) as f64 * 1e-9;
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
        3 => laser_scan(s, q, t, p, noise),
        4 => {
            let (w_, h_) = (FRONT_W, FRONT_H);
            s.header(q, t, "camera_front")
                .u32(h_)
                .u32(w_)
                .str("rgb8")
                .u8(0)
                .u32(w_ * 3);
            let px = render_front(p, w_, h_);
            s.u32(px.len() as u32);
            s.0.extend_from_slice(&px);
        }
        8 => {
            let (w_, h_) = (FRONT_W / 2, FRONT_H / 2);
            s.header(q, t, "camera_front_depth")
                .u32(h_)
                .u32(w_)
                .str("16UC1")
                .u8(0)
                .u32(w_ * 2);
            let mm = render_depth(p, w_, h_);
            s.u32((mm.len() * 2) as u32);
            for v in mm {
                s.0.extend_from_slice(&v.to_le_bytes());
            }
        }
        9 => {
            let (w_, h_) = (200u32, 120u32);
            let rgb = render_overhead(p, ts, w_, h_);
            let jpeg = crate::media::image::encode_jpeg(w_, h_, &rgb, 85)?;
            s.header(q, t, "camera_overhead").str("jpeg");
            s.u32(jpeg.len() as u32);
            s.0.extend_from_slice(&jpeg);
        }
        5 => {
            s.f32((12.6 - 0.004 * ts + noise.next() * 0.01) as f32);
        }
        6 => {
            s.vec3([p.v, 0.0, 0.0]).vec3([0.0, 0.0, p.w]);
        }
        10 => lidar_cloud(s, q, t, p),
        11 => {
            let ahead = plan_ahead(ts);
            s.header(q, t, "odom").u32(ahead.len() as u32);
            for (i, a) in ahead.iter().enumerate() {
                s.header(i as u32, t, "odom")
                    .vec3([a.x, a.y, 0.0])
                    .quat_yaw(a.yaw);
            }
        }
        12 => planner_markers(s, q, t, ts),
        13 => {
            s.u32(1);
            s.header(0, t, "map")
                .str("odom")
                .vec3(MAP_ODOM)
                .quat_yaw(0.0);
        }
        15 => robot::joint_state(s, q, t, ts, p),
        16 => {
            s.str(robot::URDF);
        }
        _ => log_line(s, q, t, ts, p),
    }
    Ok(())
}

/// A 360-beam scan of a 10 × 6 m room seen from the robot's pose.
fn laser_scan(s: &mut Ser, q: u32, t: u64, p: &Pose, noise: &mut Noise) {
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

/// Where the odometry frame starts in the map.
const MAP_ODOM: [f64; 3] = [0.5, 0.25, 0.0];

/// The planner's path: the next 10 s of the figure of eight, a pose every half second.
fn plan_ahead(ts: f64) -> Vec<Pose> {
    (1..=20).map(|i| pose_at(ts + f64::from(i) * 0.5)).collect()
}

/// A 3D lidar 0.25 m above the base: 180 beams round × 12 rings from -15° to +18°, each
/// meeting the room's walls, floor or nothing; x, y, z and intensity as float32, 16 bytes a
/// point, one row.
fn lidar_cloud(s: &mut Ser, q: u32, t: u64, p: &Pose) {
    let (az, rings) = (180usize, 12usize);
    let mut data = Vec::with_capacity(az * rings * 16);
    let mut n = 0u32;
    let h = 0.25;
    // The lidar sits 12 cm ahead of the base (base_link -> laser).
    let (lx, ly) = (p.x + 0.12 * p.yaw.cos(), p.y + 0.12 * p.yaw.sin());
    for r in 0..rings {
        let el = (-15.0 + 3.0 * r as f64).to_radians();
        for i in 0..az {
            let a = 2.0 * PI * i as f64 / az as f64;
            let (dist, wall, along) = cast(lx, ly, p.yaw + a);
            let horiz = dist;
            // Up or down along the beam: the floor (z = -h in the lidar's frame) or the wall.
            let range = if el < 0.0 && h / (-el).tan() < horiz {
                h / (-el).sin()
            } else {
                let z = horiz * el.tan();
                if z + h > WALL_H {
                    continue;
                }
                horiz / el.cos()
            };
            let (x, y, z) = (
                range * el.cos() * a.cos(),
                range * el.cos() * a.sin(),
                range * el.sin(),
            );
            let intensity = if el < 0.0 && h / (-el).tan() < horiz {
                20.0
            } else {
                60.0 + 30.0 * wall as f64 + 40.0 * (along.rem_euclid(1.0) < 0.08) as u8 as f64
            };
            for v in [x, y, z, intensity] {
                data.extend_from_slice(&(v as f32).to_le_bytes());
            }
            n += 1;
        }
    }
    s.header(q, t, "laser").u32(1).u32(n).u32(4);
    for (i, name) in ["x", "y", "z", "intensity"].iter().enumerate() {
        s.str(name).u32(4 * i as u32).u8(7).u32(1);
    }
    s.u8(0).u32(16).u32(16 * n).u32(data.len() as u32);
    s.0.extend_from_slice(&data);
    s.u8(1);
}

/// One marker of the planner's array.
struct Mk<'a> {
    ns: &'a str,
    id: i32,
    kind: i32,
    at: [f64; 3],
    yaw: f64,
    scale: [f64; 3],
    color: [f32; 4],
    points: &'a [[f64; 3]],
    text: &'a str,
}

fn marker(s: &mut Ser, q: u32, t: u64, m: &Mk) {
    s.header(q, t, "odom").str(m.ns);
    s.0.extend_from_slice(&m.id.to_le_bytes());
    s.0.extend_from_slice(&m.kind.to_le_bytes());
    s.u32(0);
    s.vec3(m.at).quat_yaw(m.yaw).vec3(m.scale);
    for c in m.color {
        s.f32(c);
    }
    // A lifetime of 2 s: a marker the planner stops sending goes away.
    s.u32(2).u32(0).u8(0);
    s.u32(m.points.len() as u32);
    for &p in m.points {
        s.vec3(p);
    }
    s.u32(0).str(m.text).str("").u8(0);
}

/// The planner's markers: the goal as an arrow, its name above it, the planned path as a line
/// strip, and a pillar in a corner of the room.
fn planner_markers(s: &mut Ser, q: u32, t: u64, ts: f64) {
    let ahead = plan_ahead(ts);
    let goal = &ahead[ahead.len() - 1];
    let line: Vec<[f64; 3]> = ahead.iter().map(|a| [a.x, a.y, 0.05]).collect();
    let ms = [
        Mk {
            ns: "goal",
            id: 0,
            kind: 0,
            at: [goal.x, goal.y, 0.1],
            yaw: goal.yaw,
            scale: [0.8, 0.12, 0.12],
            color: [0.2, 1.0, 0.3, 1.0],
            points: &[],
            text: "",
        },
        Mk {
            ns: "goal",
            id: 1,
            kind: 9,
            at: [goal.x, goal.y, 0.6],
            yaw: 0.0,
            scale: [0.0, 0.0, 0.3],
            color: [1.0, 1.0, 1.0, 1.0],
            points: &[],
            text: &format!("goal {:.0} s ahead", 10.0),
        },
        Mk {
            ns: "plan",
            id: 0,
            kind: 4,
            at: [0.0; 3],
            yaw: 0.0,
            scale: [0.05, 0.0, 0.0],
            color: [1.0, 0.6, 0.1, 1.0],
            points: &line,
            text: "",
        },
        Mk {
            ns: "obstacles",
            id: 0,
            kind: 3,
            at: [-4.3, 2.3, 0.5],
            yaw: 0.0,
            scale: [0.4, 0.4, 1.0],
            color: [0.9, 0.2, 0.2, 0.9],
            points: &[],
            text: "",
        },
    ];
    s.u32(ms.len() as u32);
    for m in &ms {
        marker(s, q, t, m);
    }
}

/// A rosout line: every sixth a battery warning, the others the lap and the odometry.
fn log_line(s: &mut Ser, q: u32, t: u64, ts: f64, p: &Pose) {
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

/// Where the app keeps its demo bag: the user's cache directory, else the temp directory.
pub fn demo_path() -> std::path::PathBuf {
    cache_dir().join("demo-v4.bag")
}

/// bagscope's folder in the user's cache directory (`$XDG_CACHE_HOME/bagscope`,
/// `~/.cache/bagscope`), else in the temp directory: the demo bag, the map's tiles.
pub fn cache_dir() -> std::path::PathBuf {
    std::env::var_os("XDG_CACHE_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir)
        .join("bagscope")
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
