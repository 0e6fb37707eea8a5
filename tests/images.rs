//! Camera messages to pixels: fixtures of every encoding family written with bagscope's own
//! writer and read back through a bag, the real images of the corpora (ros_numpy's raw Image
//! and png CompressedImage, the fiducials' jpegs, ros2bag_tools' ROS 2 images), and
//! `bagscope image` writing a PNG.
#![allow(clippy::unwrap_used)]

mod common;

use bagscope::image::{decode_message, encode_jpeg, encode_png16, Colormap, Orientation, Pixels};
use bagscope::{Bag, BagWriter, Compression, ConnectionSpec, WriteOptions};

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
type Fixture = (&'static str, bool, Vec<u8>, u32, u32, Pixels);

fn fixtures() -> Vec<Fixture> {
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

fn write_fixture_bag(path: &std::path::Path) {
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
    w.finish().unwrap();
}

/// Writes the fixture bag under a fresh temporary directory and returns its path.
pub fn fixture_bag(name: &str) -> std::path::PathBuf {
    let dir = common::temp_dir(name);
    let p = dir.join("images.bag");
    write_fixture_bag(&p);
    p
}

fn decode_first(bag: &Bag, topic: &str) -> bagscope::image::Image {
    let c = bag.summary().topic(topic).unwrap().connections[0];
    let (plan, _) = bag.plan(c).unwrap();
    let m = bag.nth_message(c, 0).unwrap();
    decode_message(&plan, &m.data).unwrap_or_else(|e| panic!("{topic}: {e}"))
}

#[test]
fn every_encoding_family_decodes_to_its_pixels() {
    let p = fixture_bag("images-fixtures");
    let bag = Bag::open(&p).unwrap();
    for (name, _, _, w, h, pixels) in fixtures() {
        let img = decode_first(&bag, &format!("/cam/{name}"));
        assert_eq!((img.width, img.height), (w, h), "{name}");
        match (&img.pixels, &pixels) {
            (Pixels::F32(a), Pixels::F32(b)) => {
                for (x, y) in a.iter().zip(b) {
                    assert!(x == y || (x.is_nan() && y.is_nan()), "{name}: {a:?}");
                }
            }
            (a, b) => assert_eq!(a, b, "{name}"),
        }
    }
    // Jpeg, recognised from its bytes whatever the format string says.
    let bag_jpeg = bag.summary().topic("/cam/jpeg").unwrap().connections[0];
    let (plan, _) = bag.plan(bag_jpeg).unwrap();
    for n in 0..2 {
        let m = bag.nth_message(bag_jpeg, n).unwrap();
        let img = decode_message(&plan, &m.data).unwrap();
        assert_eq!(
            (img.width, img.height, img.encoding.as_str()),
            (32, 16, "jpeg")
        );
        let Pixels::Rgba(px) = &img.pixels else {
            panic!("jpeg is colour")
        };
        for p in px.chunks(4) {
            assert!(
                p[0].abs_diff(230) < 12 && p[1].abs_diff(30) < 12 && p[2].abs_diff(40) < 12,
                "{p:?}"
            );
        }
    }
}

#[test]
fn depth_through_a_colormap_and_turned() {
    let p = fixture_bag("images-cmap");
    let bag = Bag::open(&p).unwrap();
    let img = decode_first(&bag, "/cam/16UC1");
    // 0 is no reading: left out of the automatic range, drawn black.
    assert_eq!(img.auto_range(), Some((500.0, 65535.0)));
    let (w, h, px) = img.render(Colormap::Grey, (500.0, 1500.0), Orientation::default());
    assert_eq!((w, h), (2, 2));
    assert_eq!(&px[..4], &[0, 0, 0, 255], "0 at the bottom of the range");
    assert_eq!(&px[4..8], &[0, 0, 0, 255], "500 is the range's start");
    assert_eq!(&px[8..12], &[255, 255, 255, 255]);
    // A quarter turn clockwise: the bottom-left pixel (1500 → white) comes to the top-left.
    let o = Orientation {
        quarter_turns: 1,
        ..Default::default()
    };
    let (_, _, turned) = img.render(Colormap::Grey, (500.0, 1500.0), o);
    assert_eq!(&turned[..4], &[255, 255, 255, 255]);
    assert_eq!(img.value_text(1, 1).as_deref(), Some("65535"));
    let img = decode_first(&bag, "/cam/32FC1");
    assert_eq!(img.auto_range(), Some((-3.0, 1.25)));
}

#[test]
fn real_images_of_the_corpora_decode() {
    let c = common::corpus_dir();
    // ros_numpy: a 360 × 240 rgb8 Image, byte for byte its data.
    let bag = Bag::open(c.join("ros_numpy/test.bag")).unwrap();
    let img = decode_first(&bag, "/image");
    assert_eq!(
        (img.width, img.height, img.encoding.as_str()),
        (360, 240, "rgb8")
    );
    let conn = bag.summary().topic("/image").unwrap().connections[0];
    let m = bag.nth_message(conn, 0).unwrap();
    let data = &m.data[m.data.len() - 360 * 240 * 3..];
    let Pixels::Rgba(px) = &img.pixels else {
        panic!("rgb8 is colour")
    };
    let rgb: Vec<u8> = px.chunks(4).flat_map(|p| [p[0], p[1], p[2]]).collect();
    assert_eq!(rgb, data);
    // Its CompressedImage is a 2 × 2 png.
    let img = decode_first(&bag, "/compressedimage");
    assert_eq!(
        (img.width, img.height, img.encoding.as_str()),
        (2, 2, "png")
    );
    // The fiducials' camera frames are jpegs.
    for (file, topic, w, h) in [
        (
            "fiducials/aruco_images.bag",
            "/raspicam_node/image/compressed",
            1280,
            960,
        ),
        (
            "fiducials/fiducial_board_611.bag",
            "raspicam_node/camera/image/compressed",
            1280,
            720,
        ),
    ] {
        let bag = Bag::open(c.join(file)).unwrap();
        let img = decode_first(&bag, topic);
        assert_eq!(
            (img.width, img.height, img.encoding.as_str()),
            (w, h, "jpeg"),
            "{file}"
        );
        // A real photo: not one flat colour.
        let Pixels::Rgba(px) = &img.pixels else {
            panic!()
        };
        let (lo, hi) = px
            .iter()
            .step_by(4)
            .fold((255u8, 0u8), |(a, b), &v| (a.min(v), b.max(v)));
        assert!(hi - lo > 100, "{file}: red spans {lo}..{hi}");
    }
    // ROS 2: sensor_msgs/msg/Image in CDR from a rosbag2 SQLite recording.
    let bag = Bag::open(common::corpus2_dir().join("ros2bag_tools/images.bag")).unwrap();
    let conn = bag.summary().topic("/image").unwrap().connections[0];
    let (plan, _) = bag.plan(conn).unwrap();
    for n in 0..3 {
        let m = bag.nth_message(conn, n).unwrap();
        let img = decode_message(&plan, &m.data).unwrap();
        assert_eq!((img.width, img.height), (2, 2));
        assert!(matches!(img.pixels, Pixels::Mono8(_)), "{:?}", img.encoding);
    }
}

#[test]
fn bagscope_image_writes_a_png() {
    let p = fixture_bag("images-cli");
    let out = p.with_file_name("depth.png");
    let st = std::process::Command::new(env!("CARGO_BIN_EXE_bagscope"))
        .args(["image"])
        .arg(&p)
        .args(["/cam/compressedDepth", "--colormap", "grey", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
    let stdout = String::from_utf8_lossy(&st.stdout);
    assert!(stdout.contains("3×2 16UC1 compressedDepth png"), "{stdout}");
    // Read back: 0 black, then 1000..5000 grey rising to white.
    let png = std::fs::read(&out).unwrap();
    let back = bagscope::image::decode_compressed("png", &png).unwrap();
    let Pixels::Rgba(px) = back.pixels else {
        panic!()
    };
    let grey: Vec<u8> = px.chunks(4).map(|p| p[0]).collect();
    assert_eq!(grey, vec![0, 0, 64, 128, 191, 255]);
    // A topic that is not an image: a clear error, exit 2.
    let st = std::process::Command::new(env!("CARGO_BIN_EXE_bagscope"))
        .args(["image"])
        .arg(&p)
        .args(["/nope", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(st.status.code(), Some(2));
}
