//! Image fixtures written with bagscope's writer: one topic per encoding family with the pixels
//! expected back (shared by tests/corpus/images.rs and the UI test).
#![allow(dead_code, clippy::unwrap_used)]

use bagscope_ops::media::image::{encode_jpeg, encode_png16, Pixels};
use bagscope_reader::{BagWriter, Compression, ConnectionSpec, WriteOptions};

const HEADER: &str = "MSG: std_msgs/Header\nuint32 seq\ntime stamp\nstring frame_id\n";
const SEP: &str =
    "================================================================================\n";

fn header(seq: u32, out: &mut Vec<u8>) {
    out.extend_from_slice(&seq.to_le_bytes());
    out.extend_from_slice(&(1_000 + seq).to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    let frame = b"cam";
    out.extend_from_slice(&(frame.len() as u32).to_le_bytes());
    out.extend_from_slice(frame);
}

fn string(s: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(&(s.len() as u32).to_le_bytes());
    out.extend_from_slice(s);
}

fn raw(seq: u32, enc: &str, w: u32, h: u32, step: u32, big: bool, data: &[u8]) -> Vec<u8> {
    let mut m = Vec::new();
    header(seq, &mut m);
    m.extend_from_slice(&h.to_le_bytes());
    m.extend_from_slice(&w.to_le_bytes());
    string(enc.as_bytes(), &mut m);
    m.push(u8::from(big));
    m.extend_from_slice(&step.to_le_bytes());
    string(data, &mut m);
    m
}

fn compressed(seq: u32, format: &str, data: &[u8]) -> Vec<u8> {
    let mut m = Vec::new();
    header(seq, &mut m);
    string(format.as_bytes(), &mut m);
    string(data, &mut m);
    m
}

/// A fixture: its topic's last part, whether it is a CompressedImage, the message's bytes, and
/// the width, height and pixels expected back.
pub type Fixture = (&'static str, bool, Vec<u8>, u32, u32, Pixels);

pub fn fixtures() -> Vec<Fixture> {
    let mut v = Vec::new();
    // rgb8 and bgr8 of the same picture give the same pixels.
    let rgb = [10u8, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120];
    let rgba_expected: Vec<u8> = rgb
        .chunks(3)
        .flat_map(|p| [p[0], p[1], p[2], 255])
        .collect();
    v.push((
        "rgb8",
        false,
        raw(0, "rgb8", 2, 2, 6, false, &rgb),
        2,
        2,
        Pixels::Rgba(rgba_expected.clone()),
    ));
    let bgr: Vec<u8> = rgb.chunks(3).flat_map(|p| [p[2], p[1], p[0]]).collect();
    v.push((
        "bgr8",
        false,
        raw(1, "bgr8", 2, 2, 6, false, &bgr),
        2,
        2,
        Pixels::Rgba(rgba_expected.clone()),
    ));
    let bgra: Vec<u8> = rgb.chunks(3).flat_map(|p| [p[2], p[1], p[0], 7]).collect();
    v.push((
        "bgra8",
        false,
        raw(2, "bgra8", 2, 2, 8, false, &bgra),
        2,
        2,
        Pixels::Rgba(
            rgba_expected
                .chunks(4)
                .flat_map(|p| [p[0], p[1], p[2], 7])
                .collect(),
        ),
    ));
    // mono8 with row padding.
    v.push((
        "mono8",
        false,
        raw(3, "mono8", 3, 2, 4, false, &[1, 2, 3, 0, 4, 5, 6, 0]),
        3,
        2,
        Pixels::Mono8(vec![1, 2, 3, 4, 5, 6]),
    ));
    // 16UC1 depth in mm, little and big endian.
    let mm = [0u16, 500, 1500, 65535];
    let le: Vec<u8> = mm.iter().flat_map(|x| x.to_le_bytes()).collect();
    let be: Vec<u8> = mm.iter().flat_map(|x| x.to_be_bytes()).collect();
    v.push((
        "16UC1",
        false,
        raw(4, "16UC1", 2, 2, 4, false, &le),
        2,
        2,
        Pixels::U16(mm.to_vec()),
    ));
    v.push((
        "mono16-be",
        false,
        raw(5, "mono16", 2, 2, 4, true, &be),
        2,
        2,
        Pixels::U16(mm.to_vec()),
    ));
    let m = [1.25f32, f32::INFINITY, -3.0, 0.5];
    let f: Vec<u8> = m.iter().flat_map(|x| x.to_le_bytes()).collect();
    v.push((
        "32FC1",
        false,
        raw(6, "32FC1", 2, 2, 8, false, &f),
        2,
        2,
        Pixels::F32(m.to_vec()),
    ));
    let s = [-5i16, 7];
    let sb: Vec<u8> = s.iter().flat_map(|x| x.to_le_bytes()).collect();
    v.push((
        "16SC1",
        false,
        raw(7, "16SC1", 2, 1, 4, false, &sb),
        2,
        1,
        Pixels::I16(s.to_vec()),
    ));
    // A uniform orange seen through an RGGB mosaic demosaics to orange everywhere.
    let (r, g, b) = (240u8, 120u8, 20u8);
    let mosaic: Vec<u8> = (0..4)
        .flat_map(|y| (0..4).map(move |x| (x, y)))
        .map(|(x, y)| match (x % 2, y % 2) {
            (0, 0) => r,
            (1, 1) => b,
            _ => g,
        })
        .collect();
    v.push((
        "bayer_rggb8",
        false,
        raw(8, "bayer_rggb8", 4, 4, 4, false, &mosaic),
        4,
        4,
        Pixels::Rgba([r, g, b, 255].repeat(16)),
    ));
    // UYVY of mid grey: U = V = 128, Y = 126 (video range 16..235 → 128).
    v.push((
        "yuv422",
        false,
        raw(9, "yuv422", 2, 1, 4, false, &[128, 126, 128, 126]),
        2,
        1,
        Pixels::Rgba([128, 128, 128, 255].repeat(2)),
    ));
    // png 16-bit in a compressedDepth message.
    let depth = [0u16, 1000, 2000, 3000, 4000, 5000];
    let mut cd = vec![0u8; 12];
    cd.extend_from_slice(&encode_png16(3, 2, &depth).unwrap());
    v.push((
        "compressedDepth",
        true,
        compressed(10, "16UC1; compressedDepth png", &cd),
        3,
        2,
        Pixels::U16(depth.to_vec()),
    ));
    v
}

pub fn write_fixture_bag(path: &std::path::Path) {
    let mut w = BagWriter::create(
        path,
        WriteOptions {
            compression: Compression::Lz4,
            chunk_size: 64 * 1024,
        },
    )
    .unwrap();
    let image_def = format!(
        "Header header\nuint32 height\nuint32 width\nstring encoding\nuint8 is_bigendian\nuint32 step\nuint8[] data\n{SEP}{HEADER}"
    );
    let comp_def = format!("Header header\nstring format\nuint8[] data\n{SEP}{HEADER}");
    let mut t = 1_000_000_000u64;
    for (name, is_comp, msg, ..) in fixtures() {
        let (ty, def, md5) = if is_comp {
            (
                "sensor_msgs/CompressedImage",
                comp_def.clone(),
                "8f7a12909da2c9d3332d540a0977563f",
            )
        } else {
            (
                "sensor_msgs/Image",
                image_def.clone(),
                "060021388200f6f0f447d0fcd9c64743",
            )
        };
        let c = w.add_connection(ConnectionSpec {
            topic: format!("/cam/{name}"),
            datatype: ty.into(),
            md5sum: md5.into(),
            message_definition: def,
            callerid: None,
            latching: false,
        });
        w.write(c, t, &msg).unwrap();
        t += 1_000_000;
    }
    // A jpeg, and a second one that says png but is jpeg.
    let red: Vec<u8> = [230u8, 30, 40].repeat(32 * 16);
    let jpeg = encode_jpeg(32, 16, &red, 95).unwrap();
    let c = w.add_connection(ConnectionSpec {
        topic: "/cam/jpeg".into(),
        datatype: "sensor_msgs/CompressedImage".into(),
        md5sum: "8f7a12909da2c9d3332d540a0977563f".into(),
        message_definition: comp_def,
        callerid: None,
        latching: false,
    });
    w.write(c, t, &compressed(20, "jpeg", &jpeg)).unwrap();
    w.write(c, t + 1_000_000, &compressed(21, "png", &jpeg))
        .unwrap();
    // A 3 × 2 occupancy grid.
    let c = w.add_connection(ConnectionSpec {
        topic: "/map".into(),
        datatype: "nav_msgs/OccupancyGrid".into(),
        md5sum: "3381f2d731d4076ec5c71b0759edbe4e".into(),
        message_definition: format!(
            "Header header\nMapMetaData info\nint8[] data\n{SEP}{HEADER}{SEP}\
             MSG: nav_msgs/MapMetaData\ntime map_load_time\nfloat32 resolution\nuint32 width\n\
             uint32 height\ngeometry_msgs/Pose origin\n{SEP}MSG: geometry_msgs/Pose\n\
             Point position\nQuaternion orientation\n{SEP}MSG: geometry_msgs/Point\n\
             float64 x\nfloat64 y\nfloat64 z\n{SEP}MSG: geometry_msgs/Quaternion\n\
             float64 x\nfloat64 y\nfloat64 z\nfloat64 w\n"
        ),
        callerid: None,
        latching: true,
    });
    w.write(c, t + 2_000_000, &occupancy_grid(30, 3, 2, &MAP_CELLS))
        .unwrap();
    w.finish().unwrap();
}

/// The fixture map's cells, row 0 (at the map's origin) first.
pub const MAP_CELLS: [i8; 6] = [0, 50, 100, -1, 0, 100];

/// The fixture map as shown: its last row on top (+y up), each cell's value.
pub const MAP_SHOWN: [i8; 6] = [-1, 0, 100, 0, 50, 100];

fn occupancy_grid(seq: u32, w: u32, h: u32, cells: &[i8]) -> Vec<u8> {
    let mut m = Vec::new();
    header(seq, &mut m);
    m.extend_from_slice(&[0; 8]); // map_load_time
    m.extend_from_slice(&0.05f32.to_le_bytes());
    m.extend_from_slice(&w.to_le_bytes());
    m.extend_from_slice(&h.to_le_bytes());
    for v in [1.0f64, 2.0, 0.0, 0.0, 0.0, 0.0, 1.0] {
        m.extend_from_slice(&v.to_le_bytes());
    }
    let bytes: Vec<u8> = cells.iter().map(|&c| c as u8).collect();
    string(&bytes, &mut m);
    m
}

/// Writes the fixture bag under a fresh temporary directory; returns the directory (removed
/// when dropped) and the bag.
pub fn fixture_bag(name: &str) -> (super::TempDir, std::path::PathBuf) {
    let dir = super::temp_dir(name);
    let p = dir.join("images.bag");
    write_fixture_bag(&p);
    (dir, p)
}

const LASER_SCAN: &str = "Header header\nfloat32 angle_min\nfloat32 angle_max\nfloat32 angle_increment\nfloat32 time_increment\nfloat32 scan_time\nfloat32 range_min\nfloat32 range_max\nfloat32[] ranges\nfloat32[] intensities\n";

const POINT_CLOUD2: &str = "Header header\nuint32 height\nuint32 width\nPointField[] fields\nbool is_bigendian\nuint32 point_step\nuint32 row_step\nuint8[] data\nbool is_dense\n";

const POINT_FIELD: &str = "MSG: sensor_msgs/PointField\nuint8 INT8=1\nuint8 FLOAT32=7\nuint8 FLOAT64=8\nstring name\nuint32 offset\nuint8 datatype\nuint32 count\n";

/// A LaserScan: returns every quarter turn from angle 0.
pub fn laser_scan(ranges: &[f32], range_min: f32, range_max: f32) -> Vec<u8> {
    let mut m = Vec::new();
    header(1, &mut m);
    let q = std::f32::consts::FRAC_PI_2;
    for v in [
        0.0,
        q * (ranges.len() as f32 - 1.0),
        q,
        0.0,
        0.1,
        range_min,
        range_max,
    ] {
        m.extend_from_slice(&f32::to_le_bytes(v));
    }
    m.extend_from_slice(&(ranges.len() as u32).to_le_bytes());
    for r in ranges {
        m.extend_from_slice(&r.to_le_bytes());
    }
    m.extend_from_slice(&0u32.to_le_bytes());
    m
}

/// A PointCloud2 of `points` (x, y, z): float32 little-endian in 16-byte points, or float64
/// big-endian in 32-byte points with z first.
pub fn point_cloud2(points: &[[f64; 3]], big_f64: bool) -> Vec<u8> {
    let mut m = Vec::new();
    header(2, &mut m);
    m.extend_from_slice(&1u32.to_le_bytes());
    m.extend_from_slice(&(points.len() as u32).to_le_bytes());
    let (dt, size, step, order): (u8, u32, u32, [u32; 3]) = if big_f64 {
        (8, 8, 32, [8, 16, 0])
    } else {
        (7, 4, 16, [0, 4, 8])
    };
    m.extend_from_slice(&3u32.to_le_bytes());
    for (name, off) in ["x", "y", "z"].iter().zip(order) {
        string(name.as_bytes(), &mut m);
        m.extend_from_slice(&off.to_le_bytes());
        m.push(dt);
        m.extend_from_slice(&1u32.to_le_bytes());
    }
    m.push(u8::from(big_f64));
    m.extend_from_slice(&step.to_le_bytes());
    m.extend_from_slice(&(step * points.len() as u32).to_le_bytes());
    let mut data = Vec::new();
    for p in points {
        let mut pt = vec![0xAAu8; step as usize];
        for (k, off) in order.iter().enumerate() {
            let o = *off as usize;
            if big_f64 {
                pt[o..o + 8].copy_from_slice(&p[k].to_be_bytes());
            } else {
                pt[o..o + size as usize].copy_from_slice(&(p[k] as f32).to_le_bytes());
            }
        }
        data.extend_from_slice(&pt);
    }
    string(&data, &mut m);
    m.push(1);
    m
}

/// Writes `/scan` and `/cloud` messages (ROS 1) to `path`.
pub fn write_topdown_bag(path: &std::path::Path, scans: &[Vec<u8>], clouds: &[Vec<u8>]) {
    let mut w = BagWriter::create(path, WriteOptions::default()).unwrap();
    let scan = w.add_connection(ConnectionSpec {
        topic: "/scan".into(),
        datatype: "sensor_msgs/LaserScan".into(),
        md5sum: "90c7ef2dc6895d81024acba2ac42f369".into(),
        message_definition: format!("{LASER_SCAN}{SEP}{HEADER}"),
        callerid: None,
        latching: false,
    });
    let cloud = w.add_connection(ConnectionSpec {
        topic: "/cloud".into(),
        datatype: "sensor_msgs/PointCloud2".into(),
        md5sum: "1158d486dd51d683ce2f1be655c3c181".into(),
        message_definition: format!("{POINT_CLOUD2}{SEP}{HEADER}{SEP}{POINT_FIELD}"),
        callerid: None,
        latching: false,
    });
    let mut t = 1_000_000_000u64;
    for m in scans {
        w.write(scan, t, m).unwrap();
        t += 1_000_000;
    }
    for m in clouds {
        w.write(cloud, t, m).unwrap();
        t += 1_000_000;
    }
    w.finish().unwrap();
}
