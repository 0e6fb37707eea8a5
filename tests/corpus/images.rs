//! Camera messages to pixels: fixtures of every encoding family written with bagscope's own
//! writer and read back through a bag, the real images of the corpora (ros_numpy's raw Image
//! and png CompressedImage, the fiducials' jpegs, ros2bag_tools' ROS 2 images), and
//! `bagscope image` writing a PNG.
#![allow(clippy::unwrap_used)]

use crate::common;

use bagscope_ops::media::image::ImageError;
use bagscope_ops::media::image::{decode_message, Colormap, Orientation, Pixels};
use bagscope_reader::Bag;

use common::images::{fixture_bag, fixtures};

fn decode_first(bag: &Bag, topic: &str) -> bagscope_ops::media::image::Image {
    let c = bag.summary().topic(topic).unwrap().connections[0];
    let (plan, _) = bag.plan(c).unwrap();
    let m = bag.nth_message(c, 0).unwrap();
    decode_message(&plan, &m.data).unwrap_or_else(|e| panic!("{topic}: {e}"))
}

#[test]
fn every_encoding_family_decodes_to_its_pixels() {
    let (_dir, p) = fixture_bag("images-fixtures");
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
fn an_occupancy_grid_is_a_map_with_y_up() {
    let (_dir, p) = fixture_bag("images-map");
    let bag = Bag::open(&p).unwrap();
    let img = decode_first(&bag, "/map");
    assert_eq!((img.width, img.height), (3, 2));
    assert_eq!(
        img.pixels,
        Pixels::Occupancy(common::images::MAP_SHOWN.to_vec())
    );
    assert!(
        !img.is_scalar(),
        "drawn in the map's colours, not a colormap"
    );
    // Shown at the top left: the grid's cell (0, 1), whose centre is 2.5 cm right and 7.5 cm up
    // from the origin at (1, 2).
    assert_eq!(
        img.value_text(0, 0).as_deref(),
        Some("cell 0, 1 · (1.025, 2.075) m · unknown")
    );
    assert_eq!(
        img.value_text(1, 1).as_deref(),
        Some("cell 1, 0 · (1.075, 2.025) m · 50% occupied")
    );
    assert_eq!(img.value_text(3, 0), None);
    let (w, h, rgba) = img.render(Colormap::Turbo, (0.0, 1.0), Orientation::default());
    assert_eq!((w, h), (3, 2));
    let px: Vec<&[u8]> = rgba.chunks(4).collect();
    assert_eq!(px[1], [235, 235, 235, 255], "free is light");
    assert_eq!(px[2], [0, 0, 0, 255], "occupied is black");
    assert_eq!(px[4], [118, 118, 118, 255], "half way");
    assert!(px[0][2] > px[0][0], "unknown is blue-grey: {:?}", px[0]);
    // A grid whose data is shorter than width × height is refused, not read past.
    let c = bag.summary().topic("/map").unwrap().connections[0];
    let (plan, _) = bag.plan(c).unwrap();
    let mut m = bag.nth_message(c, 0).unwrap().data.to_vec();
    let n = m.len();
    m[n - 10..n - 6].copy_from_slice(&5u32.to_le_bytes());
    m.truncate(n - 1);
    let e = decode_message(&plan, &m).unwrap_err();
    assert!(
        matches!(&e, ImageError::Size(m) if m.contains("need 6 bytes of data, the message has 5")),
        "{e}"
    );
    // Real ones: ros_numpy's 30 × 30 grid, unknown but for an occupied square in the middle
    // (ROS 1), and rosbags-rs' 10 × 10 grid of unknown cells (ROS 2, SQLite and MCAP).
    for r in ["test_bag_sqlite3", "test_bag_mcap"] {
        let bag = Bag::open(common::corpus2_dir().join("rosbags-rs").join(r)).unwrap();
        let img = decode_first(&bag, "/test/nav_msgs/occupancy_grid");
        assert_eq!((img.width, img.height), (10, 10), "{r}");
        assert_eq!(img.pixels, Pixels::Occupancy(vec![-1; 100]), "{r}");
    }
    let bag = Bag::open(common::corpus_dir().join("ros_numpy/test.bag")).unwrap();
    let img = decode_first(&bag, "/occupancygrid");
    let square = |i: usize| (10..20).contains(&(i % 30)) && (10..20).contains(&(i / 30));
    let want: Vec<i8> = (0..900).map(|i| if square(i) { 100 } else { -1 }).collect();
    assert_eq!(img.pixels, Pixels::Occupancy(want));
}

/// Each value of a top-down image with the mean frame coordinates of its pixels.
fn spots(img: &bagscope_ops::media::image::Image) -> Vec<(f32, f64, f64)> {
    let Pixels::Points(v) = &img.pixels else {
        panic!("not a top-down image: {}", img.encoding)
    };
    let map = img.map.unwrap();
    let mut by: std::collections::BTreeMap<u32, (f32, f64, f64, f64)> = Default::default();
    for (i, &z) in v.iter().enumerate() {
        if z.is_nan() {
            continue;
        }
        let (x, y) = (i as u32 % img.width, i as u32 / img.width);
        let (wx, wy) = map.cell_centre(x, img.height - 1 - y);
        let e = by.entry(z.to_bits()).or_insert((z, 0.0, 0.0, 0.0));
        e.1 += wx;
        e.2 += wy;
        e.3 += 1.0;
    }
    let mut out: Vec<(f32, f64, f64)> = by
        .into_values()
        .map(|(z, x, y, n)| (z, x / n, y / n))
        .collect();
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    out
}

fn near(a: f64, b: f64, what: &str) {
    assert!((a - b).abs() < 0.03, "{what}: {a} against {b}");
}

#[test]
fn laser_scans_and_point_clouds_from_above() {
    use common::images::{laser_scan, point_cloud2, write_topdown_bag};
    let dir = common::temp_dir("images-topdown");
    let p = dir.join("topdown.bag");
    // Returns at 0°, 90°, 180° (inf: none), 270° (below range_min: left out).
    let scan = laser_scan(&[1.0, 2.0, f32::INFINITY, 0.5], 0.8, 10.0);
    let pts = [
        [1.0, 0.0, 0.5],
        [1.0, 0.0, 0.7], // the same pixel, higher: kept
        [0.0, -2.0, -1.0],
        [f64::NAN, 0.0, 0.0], // not finite: left out
    ];
    let clouds = [point_cloud2(&pts, false), point_cloud2(&pts, true)];
    write_topdown_bag(&p, &[scan], &clouds);
    let bag = Bag::open(&p).unwrap();
    let img = decode_first(&bag, "/scan");
    assert_eq!(img.encoding, "laser scan, 2 of 4 returns");
    let s = spots(&img);
    assert_eq!(s.len(), 2, "{s:?}");
    assert_eq!(s[0].0, 1.0);
    near(s[0].1, 1.0, "x of the 1 m return");
    near(s[0].2, 0.0, "y of the 1 m return");
    assert_eq!(s[1].0, 2.0);
    near(s[1].1, 0.0, "x of the 2 m return");
    near(s[1].2, 2.0, "y of the 2 m return");
    // The sensor in the middle: no return there; the value under the cursor says where.
    assert_eq!(
        img.value_text(200, 200).as_deref(),
        Some("(0.01, -0.01) m · no point")
    );
    assert!(img.is_scalar(), "drawn through a colormap");
    assert_eq!(img.auto_range(), Some((1.0, 2.0)));
    // The cloud, float32 little-endian and float64 big-endian alike.
    let c = bag.summary().topic("/cloud").unwrap().connections[0];
    let (plan, _) = bag.plan(c).unwrap();
    for n in 0..2 {
        let m = bag.nth_message(c, n).unwrap();
        let img = decode_message(&plan, &m.data).unwrap();
        assert_eq!(img.encoding, "point cloud, 3 of 4 points", "message {n}");
        let s = spots(&img);
        assert_eq!(s.len(), 2, "{s:?}");
        assert_eq!(s[0].0, -1.0);
        near(s[0].1, 0.0, "x");
        near(s[0].2, -2.0, "y");
        assert_eq!(s[1].0, 0.7, "the highest z of a pixel");
        near(s[1].1, 1.0, "x");
        near(s[1].2, 0.0, "y");
    }
    // Damaged clouds are refused with what is wrong.
    let mut m = bag.nth_message(c, 0).unwrap().data.to_vec();
    let step_at = m.len() - 4 - 64 - 1 - 4 - 4; // point_step, before row_step, data, is_dense
    m[step_at..step_at + 4].copy_from_slice(&6u32.to_le_bytes());
    let e = decode_message(&plan, &m).unwrap_err();
    assert!(
        matches!(&e, ImageError::Size(m) if m.contains("field y at byte 4 does not fit a point of 6 bytes")),
        "{e}"
    );
    m[step_at..step_at + 4].copy_from_slice(&0u32.to_le_bytes());
    let e = decode_message(&plan, &m).unwrap_err();
    assert!(
        matches!(&e, ImageError::Field { field, reason } if field == "point_step" && reason == "point_step is 0"),
        "{e}"
    );
    // Bytes flipped anywhere in a scan or a cloud: an image or an error, never a panic, and
    // never a point outside the image.
    let sc = bag.summary().topic("/scan").unwrap().connections[0];
    let (scan_plan, _) = bag.plan(sc).unwrap();
    let originals = [
        (scan_plan, bag.nth_message(sc, 0).unwrap().data.to_vec()),
        (plan, bag.nth_message(c, 1).unwrap().data.to_vec()),
    ];
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for (plan, orig) in &originals {
        for _ in 0..3000 {
            let mut m = orig.clone();
            for _ in 0..1 + next() % 4 {
                let i = (next() % m.len() as u64) as usize;
                m[i] = next() as u8;
            }
            if let Ok(img) = decode_message(plan, &m) {
                if let Pixels::Points(v) = &img.pixels {
                    assert_eq!(v.len(), (img.width * img.height) as usize);
                }
            }
        }
    }
    // Real ones: embag's lidar and planar scan (ROS 1), rosbags-rs' (ROS 2, CDR).
    let bag = Bag::open(common::corpus_dir().join("embag/test.bag")).unwrap();
    let img = decode_first(&bag, "/luminar_pointcloud");
    assert_eq!(img.encoding, "point cloud, 35707 of 35707 points");
    let img = decode_first(&bag, "/base_scan");
    assert_eq!(img.encoding, "laser scan, 90 of 90 returns");
    let bag = Bag::open(common::corpus2_dir().join("rosbags-rs/test_bag_mcap")).unwrap();
    let img = decode_first(&bag, "/test/sensor_msgs/laser_scan");
    assert_eq!(img.encoding, "laser scan, 5 of 5 returns");
    let img = decode_first(&bag, "/test/sensor_msgs/point_cloud2");
    assert_eq!(img.encoding, "point cloud, 3 of 3 points");
}

#[test]
fn depth_through_a_colormap_and_turned() {
    let (_dir, p) = fixture_bag("images-cmap");
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
    let (_dir, p) = fixture_bag("images-cli");
    let out = p.with_file_name("depth.png");
    let stdout = common::bagscope(&[
        &"image",
        &p,
        &"/cam/compressedDepth",
        &"--colormap",
        &"grey",
        &"-o",
        &out,
    ])
    .ok();
    assert!(stdout.contains("3×2 16UC1 compressedDepth png"), "{stdout}");
    // Read back: 0 black, then 1000..5000 grey rising to white.
    let png = std::fs::read(&out).unwrap();
    let back = bagscope_ops::media::image::decode_compressed("png", &png).unwrap();
    let Pixels::Rgba(px) = back.pixels else {
        panic!()
    };
    let grey: Vec<u8> = px.chunks(4).map(|p| p[0]).collect();
    assert_eq!(grey, vec![0, 0, 64, 128, 191, 255]);
    // A topic that is not an image: a clear error, exit 2.
    let ran = common::bagscope(&[&"image", &p, &"/nope", &"-o", &out]);
    assert_eq!(ran.code, Some(2));
}

#[test]
fn bagscope_frames_writes_every_image_of_a_range() {
    let dir = common::temp_dir("images-frames");
    let p = dir.join("demo.bag");
    bagscope_ops::demo::write_demo(&p, 12).unwrap();
    let out = dir.join("frames");
    let topic = "/camera/front/depth/image_raw";
    // 5 Hz for 12 s; every 3rd of the first 10 s: 50 messages, 17 frames.
    let stdout = common::bagscope(&[
        &"frames", &p, &topic, &"-o", &out, &"--end", &"+10", &"--every", &"3", &"--min", &"500",
        &"--max", &"6000",
    ])
    .ok();
    assert!(stdout.contains("17 of 17 frames"), "{stdout}");
    let mut files: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files.len(), 17);
    assert!(
        files[0].starts_with("camera_front_depth_image_raw_000000_"),
        "{files:?}"
    );
    // Each file is what `bagscope image` writes for that message: frame k is message 3k.
    for k in [0usize, 7, 16] {
        let one = dir.join(format!("one{k}.png"));
        common::bagscope(&[
            &"image",
            &p,
            &topic,
            &"--index",
            &(3 * k).to_string(),
            &"--min",
            &"500",
            &"--max",
            &"6000",
            &"-o",
            &one,
        ])
        .ok();
        assert_eq!(
            std::fs::read(out.join(&files[k])).unwrap(),
            std::fs::read(&one).unwrap(),
            "frame {k}"
        );
    }
    // The laser scan from above, and a topic that is not there.
    let scans = dir.join("scans");
    let stdout = common::bagscope(&[&"frames", &p, &"/scan", &"-o", &scans, &"--end", &"+1"]).ok();
    assert!(
        stdout.contains("10 of 10 frames of /scan written"),
        "{stdout}"
    );
    let ran = common::bagscope(&[&"frames", &p, &"/nope", &"-o", &scans]);
    assert_eq!(ran.code, Some(2));
    // A topic whose messages are not images: every frame reported, exit 1.
    let ran = common::bagscope(&[&"frames", &p, &"/imu/data", &"-o", &scans, &"--end", &"+1"]);
    assert_eq!(ran.code, Some(1));
    assert!(ran.stdout.contains("0 of 100 frames"), "{}", ran.stdout);
    assert!(
        ran.stderr.contains("100 frame(s) not written"),
        "{}",
        ran.stderr
    );
}
