//! Overlays on camera images against OpenCV: a recording made in the test
//! (tests/py/camera_fixture.py, rosbags' writer and Foxglove's SDK) with a camera, its
//! calibration, TF, a cloud, a marker and annotations; `bagscope image --overlay` must paint the
//! cloud's and the marker's points at the pixels `cv2.projectPoints` computes (within 1 px), the
//! annotations at the pixels they name, each image with the annotations of its own header stamp
//! (they arrive later than the image), in ROS 1 (ImageMarker) and protobuf (ImageAnnotations).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common;
use crate::common::camera::points;

struct Fixture {
    _dir: common::TempDir,
    bag: PathBuf,
    fox: PathBuf,
    expected: Value,
    out: PathBuf,
}

fn fixture(name: &str) -> Fixture {
    let dir = common::temp_dir(name);
    let (bag, fox, expected) = common::camera::recording(&dir);
    let out = dir.join("out.png");
    Fixture {
        _dir: dir,
        bag,
        fox,
        expected,
        out,
    }
}

struct Png {
    w: u32,
    h: u32,
    px: Vec<u8>,
}

impl Png {
    fn read(p: &Path) -> Png {
        let img = image::open(p).unwrap().to_rgba8();
        Png {
            w: img.width(),
            h: img.height(),
            px: img.into_raw(),
        }
    }

    fn at(&self, x: i64, y: i64) -> [u8; 4] {
        if x < 0 || y < 0 || x >= i64::from(self.w) || y >= i64::from(self.h) {
            return [0; 4];
        }
        let i = (y as usize * self.w as usize + x as usize) * 4;
        [self.px[i], self.px[i + 1], self.px[i + 2], self.px[i + 3]]
    }

    fn painted(&self, x: i64, y: i64) -> bool {
        let p = self.at(x, y);
        p[..3] != [128, 128, 128]
    }

    /// The centre of the painted pixels within `r` of `(u, v)`, weighted by how far each is
    /// from the grey background.
    fn centre_near(&self, u: f64, v: f64, r: i64) -> Option<(f64, f64)> {
        let (cx, cy) = (u.round() as i64, v.round() as i64);
        let (mut sx, mut sy, mut sw) = (0.0, 0.0, 0.0);
        for y in cy - r..=cy + r {
            for x in cx - r..=cx + r {
                let p = self.at(x, y);
                let d: f64 = p[..3].iter().map(|&c| (f64::from(c) - 128.0).abs()).sum();
                if d > 0.0 {
                    sx += x as f64 * d;
                    sy += y as f64 * d;
                    sw += d;
                }
            }
        }
        (sw > 0.0).then(|| (sx / sw, sy / sw))
    }
}

fn image(args: &[&dyn AsRef<std::ffi::OsStr>]) -> (Png, String) {
    let r = common::bagscope(args);
    let err = r.stderr.clone();
    r.ok();
    let out = args
        .windows(2)
        .find(|w| w[0].as_ref() == "-o")
        .map(|w| PathBuf::from(w[1].as_ref()))
        .unwrap();
    (Png::read(&out), err)
}

#[test]
fn projected_points_land_where_opencv_projects_them() {
    let f = fixture("camera-points");
    let images = f.expected["images"].as_array().unwrap();
    for (k, e) in images.iter().enumerate().step_by(2) {
        let idx = k.to_string();
        // The cloud alone, then the marker alone: each point's painted dot centred on OpenCV's
        // pixel within 1 px (a dot of 1 px: the pixel OpenCV's rounds to).
        for (topic, key) in [("/cloud", "cloud_px"), ("/marker", "marker_px")] {
            let (png, err) = image(&[
                &"image",
                &f.bag,
                &"/camera/image_raw",
                &"--index",
                &idx,
                &"--overlay",
                &topic,
                &"--point-size",
                &"1",
                &"-o",
                &f.out,
            ]);
            let want = points(&e[key]);
            let mut seen = 0;
            for &(u, v) in &want {
                if u < 1.0 || v < 1.0 || u > f64::from(png.w) - 2.0 || v > f64::from(png.h) - 2.0 {
                    continue;
                }
                seen += 1;
                let (x, y) = png.centre_near(u, v, 2).unwrap_or_else(|| {
                    panic!("image {k} {topic}: nothing painted near ({u:.2}, {v:.2}); {err}")
                });
                assert!(
                    (x - u).abs() <= 1.0 && (y - v).abs() <= 1.0,
                    "image {k} {topic}: OpenCV ({u:.2}, {v:.2}), painted at ({x:.2}, {y:.2})"
                );
                assert!(
                    png.painted(u.round() as i64, v.round() as i64),
                    "image {k}: ({u}, {v}) not painted"
                );
            }
            assert!(
                seen >= want.len() / 2,
                "image {k} {topic}: {seen} of {} in view",
                want.len()
            );
            // Nothing else painted: every painted pixel is at one of OpenCV's points (a
            // marker's points are drawn 4 px wide).
            let near = if topic == "/marker" { 2.5 } else { 1.5 };
            for y in 0..png.h as i64 {
                for x in 0..png.w as i64 {
                    if png.painted(x, y) {
                        assert!(
                            want.iter().any(|&(u, v)| (x as f64 - u).abs() <= near
                                && (y as f64 - v).abs() <= near),
                            "image {k} {topic}: ({x}, {y}) painted, no point there"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn annotations_are_matched_by_stamp_and_drawn_where_they_say() {
    let f = fixture("camera-annotations");
    let images = f.expected["images"].as_array().unwrap();
    for (k, e) in images.iter().enumerate() {
        let idx = k.to_string();
        let (png, _) = image(&[
            &"image",
            &f.bag,
            &"/camera/image_raw",
            &"--index",
            &idx,
            &"--overlay",
            &"/annotations",
            &"-o",
            &f.out,
        ]);
        let c = e["circle"].as_array().unwrap();
        let (cx, cy, r) = (
            c[0].as_f64().unwrap(),
            c[1].as_f64().unwrap(),
            c[2].as_f64().unwrap(),
        );
        // The ring of this image's circle is red; its centre, and the rings of the other
        // images' circles (10 px apart), are not.
        for a in [0.0f64, 90.0, 180.0, 270.0] {
            let (x, y) = (cx + r * a.to_radians().cos(), cy + r * a.to_radians().sin());
            let p = png.at(x.round() as i64, y.round() as i64);
            assert!(
                p[0] > 200 && p[1] < 90,
                "image {k}: ring at ({x:.0}, {y:.0}) is {p:?}"
            );
        }
        assert!(!png.painted(cx as i64, cy as i64));
        let other = if k == 0 { cx + 10.0 + r } else { cx - 10.0 - r };
        assert!(
            !png.painted(other as i64, cy as i64),
            "image {k}: another stamp's circle drawn"
        );
        // The polygon's edges are green.
        for (x, y) in [(460, 300), (400, 350), (520, 350), (460, 400)] {
            let p = png.at(x, y);
            assert!(
                p[1] > 200 && p[0] < 90,
                "image {k}: polygon edge ({x}, {y}) is {p:?}"
            );
        }
        assert!(!png.painted(460, 350));
    }
    // Protobuf: Foxglove's ImageAnnotations over Foxglove's RawImage; CDR: Foxglove's ROS 2
    // ImageAnnotations over a sensor_msgs/Image in a rosbag2 MCAP recording. Each logged 300 ms
    // after its image, matched by the stamp.
    let ros2 = f.bag.with_file_name("ros2");
    let fox = f.expected["foxglove"].as_array().unwrap();
    for (k, e, rec, cam) in fox
        .iter()
        .enumerate()
        .flat_map(|(k, e)| [(k, e, &f.fox, "/cam"), (k, e, &ros2, "/camera/image_raw")])
    {
        let idx = k.to_string();
        let (png, _) = image(&[
            &"image",
            rec,
            &cam,
            &"--index",
            &idx,
            &"--overlay",
            &"/detections",
            &"-o",
            &f.out,
        ]);
        let c = e["circle"].as_array().unwrap();
        let (cx, cy, r) = (
            c[0].as_f64().unwrap(),
            c[1].as_f64().unwrap(),
            c[2].as_f64().unwrap(),
        );
        let p = png.at((cx + r).round() as i64, cy.round() as i64);
        assert!(
            p[2] > 200 && p[0] < 90,
            "foxglove image {k}: circle at ({}, {cy}) is {p:?}",
            cx + r
        );
        for (x, y) in points(&e["strip"]) {
            let p = png.at(x as i64, y as i64);
            assert!(
                p[0] > 200 && p[1] > 200 && p[2] < 90,
                "foxglove image {k}: strip at ({x}, {y}) is {p:?}"
            );
        }
        // The text's background box and letters (the CDR recording has no text).
        if cam == "/cam" {
            assert!(png.at(302, 45)[..3] != [128, 128, 128]);
        }
    }
}

#[test]
fn rectify_and_bad_requests_are_said() {
    let f = fixture("camera-bad");
    // Rectified: projected through P; the picture undistorted (grey stays grey inside, black
    // where the undistorted image sees beyond the recorded one).
    let (png, _) = image(&[
        &"image",
        &f.bag,
        &"/camera/image_raw",
        &"--rectify",
        &"-o",
        &f.out,
    ]);
    assert_eq!(png.at(320, 240)[..3], [128, 128, 128]);
    for (args, want) in [
        (vec!["--overlay", "/nope"], "--overlay /nope: no such topic"),
        (
            vec!["--overlay", "/camera/camera_info"],
            "neither annotations nor a 3D layer",
        ),
        (
            vec!["--overlay", "/cloud", "--rotate", "1"],
            "leave out --rotate",
        ),
        (
            vec!["--overlay", "/cloud", "--calibration", "/x"],
            "--calibration /x: no such topic",
        ),
    ] {
        let mut a: Vec<&dyn AsRef<std::ffi::OsStr>> =
            vec![&"image", &f.bag, &"/camera/image_raw", &"-o", &f.out];
        for x in &args {
            a.push(x);
        }
        let r = common::bagscope(&a);
        assert_ne!(r.code, Some(0), "{args:?}");
        assert!(r.stderr.contains(want), "{args:?}: {}", r.stderr);
    }
}

/// The header stamps rosbags decodes for `topic` of `bag`, in receive order.
fn rosbags_stamps(bag: &Path, topic: &str) -> Vec<u64> {
    let code = r#"
import sys, json
from rosbags.highlevel import AnyReader
from pathlib import Path
with AnyReader([Path(sys.argv[1])]) as r:
    cs = [c for c in r.connections if c.topic == sys.argv[2]]
    out = []
    for c, t, raw in r.messages(connections=cs):
        m = r.deserialize(raw, c.msgtype)
        out.append(m.header.stamp.sec * 10**9 + m.header.stamp.nanosec)
    print(json.dumps(out))
"#;
    let o = Command::new("python3")
        .args(["-c", code])
        .arg(bag)
        .arg(topic)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn csv_at_header_stamps_equals_rosbags_stamps() {
    let f = fixture("camera-stamps");
    // The images' stamps lag their receive times by 20 to 80 ms; the clouds' by 15 to 75 ms.
    let out = common::bagscope(&[
        &"csv",
        &f.bag,
        &"/camera/image_raw.header.seq",
        &"/cloud.width",
        &"--time",
        &"header",
    ])
    .ok();
    let mut lines = out.lines();
    assert_eq!(
        lines.next(),
        Some("stamp_ns,/camera/image_raw.header.seq,/cloud.width")
    );
    let rows: Vec<Vec<String>> = lines
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect();
    let img = rosbags_stamps(&f.bag, "/camera/image_raw");
    let cloud = rosbags_stamps(&f.bag, "/cloud");
    // Each image's row at its stamp with its seq; each cloud's at its own stamp.
    for (k, s) in img.iter().enumerate() {
        let row = rows
            .iter()
            .find(|r| r[0] == s.to_string() && r[1] == k.to_string())
            .unwrap_or_else(|| panic!("no row at image {k}'s stamp {s}: {out}"));
        assert_eq!(row.len(), 3);
    }
    for s in &cloud {
        assert!(
            rows.iter().any(|r| r[0] == s.to_string() && r[2] == "63"),
            "cloud stamp {s}"
        );
    }
    // At receive time the rows are elsewhere: the stamps are not the receive times.
    let recv = common::bagscope(&[&"csv", &f.bag, &"/camera/image_raw.header.seq"]).ok();
    assert!(recv.starts_with("time_ns,"));
    assert!(!recv.contains(&img[0].to_string()));
    // A topic without a header, and an expression of two topics, are said.
    let r = common::bagscope(&[
        &"csv",
        &f.bag,
        &"/tf.transforms[0].transform.translation.x",
        &"--time",
        &"header",
    ]);
    assert_ne!(r.code, Some(0));
    assert!(r.stderr.contains("/tf has no header.stamp"), "{}", r.stderr);
    let r = common::bagscope(&[
        &"csv",
        &f.bag,
        &"/cloud.width + /camera/image_raw.width",
        &"--time",
        &"header",
    ]);
    assert!(r.stderr.contains("reads 2 topics"), "{}", r.stderr);
}

#[test]
fn the_corpora_cameras_open_with_their_calibrations() {
    // The corpora's camera recordings with a CameraInfo: rectified and with the TF axes asked
    // for, each opens and draws without an error (none has transforms: that is said).
    let c1 = common::corpus_dir();
    let dir = common::temp_dir("camera-corpora");
    let out = dir.join("c.png");
    for (rec, topic, size) in [
        (
            "fiducials/aruco_images.bag",
            "/raspicam_node/image/compressed",
            (1280, 960),
        ),
        (
            "fiducials/aruco_marker.bag",
            "/raspicam_node/image/compressed",
            (1280, 720),
        ),
        (
            "fiducials/fiducial_board_611.bag",
            "raspicam_node/camera/image/compressed",
            (1280, 720),
        ),
    ] {
        let r = common::bagscope(&[
            &"image",
            &c1.join(rec),
            &topic,
            &"--rectify",
            &"--tf-axes",
            &"-o",
            &out,
        ]);
        let err = r.stderr.clone();
        let said = r.ok();
        assert!(said.contains("rectified"), "{rec}: {said}");
        assert!(
            err.lines().all(|l| l.contains("has no transforms")),
            "{rec}: {err}"
        );
        let png = Png::read(&out);
        assert_eq!((png.w, png.h), size, "{rec}");
    }
    // rosbags-rs' test recordings (MCAP and SQLite): their CameraInfo as a camera model.
    for name in ["rosbags-rs/test_bag_mcap", "rosbags-rs/test_bag_sqlite3"] {
        let bag = bagscope_reader::Bag::open(common::corpus2_dir().join(name)).unwrap();
        let mut over =
            bagscope_ops::spatial::camera::overlay::Overlayer::new(bag, Default::default());
        let cam = over
            .camera("/test/sensor_msgs/camera_info", u64::MAX)
            .unwrap();
        assert_eq!(cam.lens.model.name(), "plumb_bob", "{name}");
        assert_eq!(cam.lens.coefficients(), &[0.1, -0.2, 0.001, 0.002, 0.0]);
        assert_eq!(cam.k, [525.0, 0.0, 320.0, 0.0, 525.0, 240.0, 0.0, 0.0, 1.0]);
        assert_eq!((cam.width, cam.height), (640, 480));
        let px = cam.project([0.0, 0.0, 2.0], false).unwrap();
        assert_eq!(px, [320.0, 240.0]);
    }
}

#[test]
fn transforms_not_yet_read_or_failed_project_nothing_and_say_so() {
    use bagscope_ops::spatial::camera::overlay::{Layers, Overlayer, Transforms};
    let f = fixture("camera-tf-states");
    let bag = bagscope_reader::Bag::open(&f.bag).unwrap();
    let conn = bag
        .summary()
        .topic("/camera/image_raw")
        .unwrap()
        .connections[0];
    let entry = bag.tables().unwrap().per_connection[conn][0];
    let layers = Layers {
        projected: vec!["/cloud".into()],
        point_size: 1.0,
        ..Default::default()
    };
    for (tf, said) in [
        (Transforms::Reading, "reading the transforms"),
        (
            Transforms::Failed("a bad /tf".into()),
            "could not be read: a bad /tf",
        ),
    ] {
        let mut over = Overlayer::new(bag.clone(), tf);
        let o = over.overlay("/camera/image_raw", (conn, entry), (640, 480), &layers);
        assert_eq!(o.projected_points, 0);
        assert!(o.raster.is_none());
        assert!(o.notes.iter().any(|n| n.contains(said)), "{:?}", o.notes);
    }
    // With none (the recording's own are not read here): the cloud as if in the camera's frame.
    let mut over = Overlayer::new(bag.clone(), Transforms::None);
    let o = over.overlay("/camera/image_raw", (conn, entry), (640, 480), &layers);
    assert!(
        o.notes.iter().any(|n| n.contains("no transforms")),
        "{:?}",
        o.notes
    );
    // The image's stamp read from its bytes: its header's, not its receive time.
    let stamp = f.expected["images"][0]["stamp"].as_u64().unwrap();
    assert_eq!(o.stamp, stamp);
    assert_ne!(stamp, entry.time_ns);
}

#[test]
fn the_robot_model_covers_the_pixels_opencv_projects_its_links_to() {
    let f = fixture("camera-robot");
    let dir = f.out.parent().unwrap();
    let urdf = dir.join("cart.urdf");
    let want = common::camera::robot(&urdf);
    // Without --urdf the recording has no robot: said, nothing painted.
    let r = common::bagscope(&[
        &"image",
        &f.bag,
        &"/camera/image_raw",
        &"--robot",
        &"-o",
        &f.out,
    ]);
    assert!(r.stderr.contains("no robot model"), "{}", r.stderr);
    let (png, err) = image(&[
        &"image",
        &f.bag,
        &"/camera/image_raw",
        &"--urdf",
        &urdf,
        &"--index",
        &"3",
        &"--robot",
        &"-o",
        &f.out,
    ]);
    assert!(err.contains("the robot covers"), "{err}");
    let (w, h) = (png.w as i64, png.h as i64);
    let mut surface = vec![false; (w * h) as usize];
    for &(u, v) in &want {
        let (x, y) = (u.round() as i64, v.round() as i64);
        if (0..w).contains(&x) && (0..h).contains(&y) {
            surface[(y * w + x) as usize] = true;
        }
    }
    let on = |x: i64, y: i64| {
        (0..w).contains(&x) && (0..h).contains(&y) && surface[(y * w + x) as usize]
    };
    let (mut inner, mut painted_inner, mut stray) = (0, 0, Vec::new());
    for y in 0..h {
        for x in 0..w {
            // A pixel whose neighbours OpenCV's samples all reach is inside the silhouette.
            let inside = (-1..=1).all(|dy| (-1..=1).all(|dx| on(x + dx, y + dy)));
            if inside {
                inner += 1;
                if png.painted(x, y) {
                    painted_inner += 1;
                }
            }
            let near = (-1..=1).any(|dy| (-1..=1).any(|dx| on(x + dx, y + dy)));
            if png.painted(x, y) && !near {
                stray.push((x, y));
            }
        }
    }
    println!("robot: {painted_inner} of {inner} pixels inside OpenCV's silhouette painted, {} outside it", stray.len());
    assert!(inner > 2000, "{inner}");
    assert_eq!(painted_inner, inner);
    assert!(
        stray.is_empty(),
        "painted beyond the box: {:?}",
        &stray[..stray.len().min(10)]
    );
    // Reddish: the URDF's material, lit, over the grey picture.
    let c = png.at(320, 400);
    let (cu, cv) = (
        want.iter().map(|p| p.0).sum::<f64>() / want.len() as f64,
        want.iter().map(|p| p.1).sum::<f64>() / want.len() as f64,
    );
    let m = png.at(cu.round() as i64, cv.round() as i64);
    assert!(
        m[0] > m[1] + 40 && m[0] > m[2] + 40,
        "{m:?} at the box's middle ({c:?} below)"
    );
}
