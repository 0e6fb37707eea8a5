//! The camera overlay as a user sees it: the real app under Xvfb (its own display) with the
//! camera recording of tests/py/camera_fixture.py and the robot of tests/py/camera_robot.py,
//! a layout opening the image panel with the cloud, the marker and the robot projected, and a
//! screenshot (xwd, read with ffmpeg). The image's pixels are found on the screen (its grey);
//! each cloud point and marker point sits at the pixel `cv2.projectPoints` computes, and the
//! robot's box covers the region OpenCV projects its faces to, within a pixel of the image.

use std::time::{Duration, Instant};

use crate::common;
use crate::common::camera::points;
use crate::screen::Screen;

const W: usize = 1600;
const H: usize = 1000;
/// The recorded image's size.
const IW: f64 = 640.0;
const IH: f64 = 480.0;

struct Shot<'a> {
    img: &'a [u8],
}

impl Shot<'_> {
    fn at(&self, x: i64, y: i64) -> [u8; 3] {
        if x < 0 || y < 0 || x >= W as i64 || y >= H as i64 {
            return [24, 24, 24];
        }
        let i = (y as usize * W + x as usize) * 3;
        [self.img[i], self.img[i + 1], self.img[i + 2]]
    }

    fn grey(&self, x: i64, y: i64) -> bool {
        self.at(x, y) == [128, 128, 128]
    }

    fn reddish(&self, x: i64, y: i64) -> bool {
        let p = self.at(x, y).map(i32::from);
        p[0] > p[1] + 60 && p[0] > p[2] + 60 && (p[1] - p[2]).abs() < 40
    }

    fn magenta(&self, x: i64, y: i64) -> bool {
        let p = self.at(x, y);
        p[0] > 180 && p[1] < 90 && p[2] > 180
    }

    /// Where the image is drawn: the box of its grey (the longest run of rows with many grey
    /// pixels: the timeline's thumbnails of it are grey too), and screen pixels per image
    /// pixel.
    fn image_rect(&self) -> Option<(f64, f64, f64)> {
        let grey_row = |y: i64| (0..W as i64).filter(|&x| self.grey(x, y)).count() > 150;
        let (mut best, mut run) = ((0, 0), None);
        for y in 0..=H as i64 {
            match (y < H as i64 && grey_row(y), run) {
                (true, None) => run = Some(y),
                (false, Some(a)) => {
                    if y - a > best.1 - best.0 {
                        best = (a, y);
                    }
                    run = None;
                }
                _ => {}
            }
        }
        let (y0, y1) = (best.0, best.1 - 1);
        let cols: Vec<i64> = (0..W as i64)
            .filter(|&x| (y0..=y1).filter(|&y| self.grey(x, y)).count() > 100)
            .collect();
        let (x0, x1) = (*cols.first()?, *cols.last()?);
        let (sx, sy) = ((x1 - x0 + 1) as f64 / IW, (y1 - y0 + 1) as f64 / IH);
        ((sx - sy).abs() < 0.02 && sx > 0.3).then_some((x0 as f64, y0 as f64, sx))
    }
}

/// The centre (image pixels) of what is drawn near image pixel `(u, v)`: pixels that `is` says
/// belong, weighted by how far they are from the grey.
fn centre(
    s: &Shot,
    (x0, y0, k): (f64, f64, f64),
    (u, v): (f64, f64),
    is: impl Fn(i64, i64) -> bool,
) -> Option<(f64, f64)> {
    let (cx, cy) = (x0 + (u + 0.5) * k, y0 + (v + 0.5) * k);
    let r = (3.0 * k).ceil() as i64;
    let (mut sx, mut sy, mut sw) = (0.0, 0.0, 0.0);
    for y in cy as i64 - r..=cy as i64 + r {
        for x in cx as i64 - r..=cx as i64 + r {
            if !is(x, y) {
                continue;
            }
            let d: f64 = s
                .at(x, y)
                .iter()
                .map(|&c| (f64::from(c) - 128.0).abs())
                .sum();
            sx += (x as f64 + 0.5) * d;
            sy += (y as f64 + 0.5) * d;
            sw += d;
        }
    }
    (sw > 0.0).then(|| ((sx / sw - x0) / k - 0.5, (sy / sw - y0) / k - 0.5))
}

#[test]
fn projected_points_and_the_robot_sit_where_opencv_puts_them_on_the_screen() {
    let dir = common::temp_dir("camera-screen");
    let (bag, _, expected) = common::camera::recording(&dir);
    let urdf = dir.join("cart.urdf");
    let robot = common::camera::robot(&urdf);
    let layout = dir.join("camera.json");
    std::fs::write(
        &layout,
        serde_json::json!({
            "bagscope_layout": 1,
            "images": ["/camera/image_raw"],
            "image_overlays": [{"projected": ["/cloud", "/marker"], "robot": true}],
        })
        .to_string(),
    )
    .unwrap();
    let mut screen = Screen::new(W, H);
    screen.app(
        &[&bag, &"--urdf", &urdf, &"--layout", &layout],
        &dir.join("home"),
    );
    // The image with its overlay: the robot and the marker drawn, the same two reads running.
    let t0 = Instant::now();
    let mut last: Option<Vec<u8>> = None;
    let mut seen = String::from("no screen");
    let img = loop {
        assert!(
            t0.elapsed() < Duration::from_secs(90),
            "no image with its overlay on the screen: {seen}"
        );
        std::thread::sleep(Duration::from_millis(700));
        let Some(img) = screen.shot(&dir) else {
            continue;
        };
        let s = Shot { img: &img };
        let found = [
            s.image_rect().is_some(),
            (0..H as i64)
                .step_by(2)
                .any(|y| (0..W as i64).any(|x| s.reddish(x, y))),
            (0..H as i64).any(|y| (0..W as i64).any(|x| s.magenta(x, y))),
        ];
        seen = format!("image, robot, marker: {found:?}");
        let ready = found.iter().all(|f| *f);
        if ready && last.as_ref() == Some(&img) {
            break img;
        }
        last = ready.then_some(img);
    };
    let s = Shot { img: &img };
    let rect = s.image_rect().unwrap();
    let (x0, y0, k) = rect;
    println!("the image at ({x0}, {y0}), {k:.3} screen pixels a pixel");
    let near_robot = |(u, v): (f64, f64)| {
        let (cx, cy) = (x0 + (u + 0.5) * k, y0 + (v + 0.5) * k);
        let r = (5.0 * k).ceil() as i64;
        (-r..=r).any(|dy| (-r..=r).any(|dx| s.reddish(cx as i64 + dx, cy as i64 + dy)))
    };
    let inside = |p: &&(f64, f64)| p.0 > 4.0 && p.1 > 4.0 && p.0 < IW - 5.0 && p.1 < IH - 5.0;
    // The cloud (the camera is fixed on the robot, the cloud in its frame: the same pixels in
    // every image).
    let images = expected["images"].as_array().unwrap();
    let want = points(&images[0]["cloud_px"]);
    let mut worst: f64 = 0.0;
    let mut n = 0;
    for &(u, v) in want.iter().filter(inside) {
        if near_robot((u, v)) {
            continue;
        }
        let got = centre(&s, rect, (u, v), |x, y| !s.grey(x, y) && !s.magenta(x, y))
            .unwrap_or_else(|| panic!("no cloud point drawn near OpenCV's ({u:.2}, {v:.2})"));
        worst = worst.max((got.0 - u).abs()).max((got.1 - v).abs());
        n += 1;
    }
    println!("{n} cloud points, the farthest {worst:.2} px from OpenCV's");
    assert!(n >= 40, "{n} cloud points checked");
    assert!(worst <= 1.0, "a cloud point {worst:.2} px from OpenCV's");
    // The marker's points (in odom: they move as the robot drives; the image shown is one
    // of the five).
    let fits: Vec<(usize, f64)> = images
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let mut worst: f64 = 0.0;
            for &(u, v) in points(&e["marker_px"]).iter().filter(inside) {
                let d = match centre(&s, rect, (u, v), |x, y| s.magenta(x, y)) {
                    Some(g) => (g.0 - u).abs().max((g.1 - v).abs()),
                    None => f64::INFINITY,
                };
                worst = worst.max(d);
            }
            (i, worst)
        })
        .collect();
    let best = fits.iter().min_by(|a, b| a.1.total_cmp(&b.1)).unwrap();
    println!(
        "the marker's points: image {}, the farthest {:.2} px from OpenCV's ({fits:?})",
        best.0, best.1
    );
    assert!(best.1 <= 1.0, "{fits:?}");
    // The robot: the box of its pixels in the image is the box of OpenCV's projection of its
    // faces.
    let (mut lo, mut hi) = ((f64::MAX, f64::MAX), (f64::MIN, f64::MIN));
    let (x1, y1) = ((x0 + IW * k) as i64, (y0 + IH * k) as i64);
    for y in y0 as i64..y1 {
        for x in x0 as i64..x1 {
            if s.reddish(x, y) {
                let (u, v) = (
                    (x as f64 + 0.5 - x0) / k - 0.5,
                    (y as f64 + 0.5 - y0) / k - 0.5,
                );
                lo = (lo.0.min(u), lo.1.min(v));
                hi = (hi.0.max(u), hi.1.max(v));
            }
        }
    }
    let fold = |f: fn(f64, f64) -> f64, start: f64, pick: fn(&(f64, f64)) -> f64| {
        robot.iter().map(pick).fold(start, f)
    };
    let cv_lo = (
        fold(f64::min, f64::MAX, |p| p.0),
        fold(f64::min, f64::MAX, |p| p.1),
    );
    let cv_hi = (
        fold(f64::max, f64::MIN, |p| p.0),
        fold(f64::max, f64::MIN, |p| p.1),
    );
    println!("the robot from {lo:?} to {hi:?}; OpenCV from {cv_lo:?} to {cv_hi:?}");
    for (a, b) in [
        (lo.0, cv_lo.0),
        (lo.1, cv_lo.1),
        (hi.0, cv_hi.0),
        (hi.1, cv_hi.1),
    ] {
        assert!(
            (a - b).abs() <= 1.5,
            "the robot from {lo:?} to {hi:?}, OpenCV from {cv_lo:?} to {cv_hi:?}"
        );
    }
}
