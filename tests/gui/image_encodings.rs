//! Image panels decoding every encoding family.

use std::path::PathBuf;

use bagscope_app::Cmd;

use crate::common;
use crate::*;

/// Opens an image panel on every image topic of `bag` through the app and returns, per topic,
/// what the panel shows.
fn panel_images(bag: PathBuf) -> Vec<(String, bagscope_ops::media::image::Image)> {
    let mut h = harness(Some(bag));
    wait_for(&mut h, "indexing", indexed);
    let topics = bagscope_app::images::image_topics(h.state().doc.as_ref().unwrap());
    let mut out = Vec::new();
    for ti in topics {
        // One panel at a time, as a user would look at each camera.
        h.state_mut().doc.as_mut().unwrap().images.panels.clear();
        h.state_mut().apply(Cmd::OpenImage(ti));
        wait_for(&mut h, "the panel's frame", |a| {
            a.doc.as_ref().is_some_and(|d| {
                d.images
                    .panels
                    .first()
                    .is_some_and(|p| p.frame.is_some() || p.error.is_some())
            })
        });
        let d = h.state().doc.as_ref().unwrap();
        let p = &d.images.panels[0];
        let name = d.rec.bag.summary().topics[ti].name.clone();
        match &p.frame {
            Some(f) => out.push((name, (*f.image).clone())),
            None => panic!("{name}: {:?}", p.error),
        }
    }
    out
}

#[test]
fn image_panels_decode_every_encoding_family() {
    let (_dir, bag) = common::images::fixture_bag("ui-image-families");
    let shown = panel_images(bag);
    let want = common::images::fixtures();
    for (name, _, _, w, hh, pixels) in want {
        let topic = format!("/cam/{name}");
        let (_, img) = shown
            .iter()
            .find(|(t, _)| *t == topic)
            .unwrap_or_else(|| panic!("no panel for {topic}"));
        assert_eq!((img.width, img.height), (w, hh), "{topic}");
        match (&img.pixels, &pixels) {
            (
                bagscope_ops::media::image::Pixels::F32(a),
                bagscope_ops::media::image::Pixels::F32(b),
            ) => {
                assert!(a
                    .iter()
                    .zip(b)
                    .all(|(x, y)| x == y || (x.is_nan() && y.is_nan())))
            }
            (a, b) => assert_eq!(a, b, "{topic}"),
        }
    }
    // The occupancy grid, as a map with +y up.
    let (_, map) = shown.iter().find(|(t, _)| t == "/map").unwrap();
    assert_eq!(
        map.pixels,
        bagscope_ops::media::image::Pixels::Occupancy(common::images::MAP_SHOWN.to_vec())
    );
    let (_, jpeg) = shown.iter().find(|(t, _)| t == "/cam/jpeg").unwrap();
    assert_eq!(
        (jpeg.width, jpeg.height, jpeg.encoding.as_str()),
        (32, 16, "jpeg")
    );
    // Real ones: a fiducials camera frame (CompressedImage jpeg), ros_numpy's raw rgb8 Image and
    // png, and ROS 2 mono8 Images from a rosbag2 SQLite recording.
    let dims =
        |v: &[(String, bagscope_ops::media::image::Image)]| -> Vec<(String, u32, u32, String)> {
            v.iter()
                .map(|(t, i)| (t.clone(), i.width, i.height, i.encoding.clone()))
                .collect()
        };
    let shown = panel_images(common::corpus_dir().join("fiducials/aruco_images.bag"));
    assert_eq!(
        dims(&shown),
        [(
            "/raspicam_node/image/compressed".to_string(),
            1280,
            960,
            "jpeg".to_string()
        )]
    );
    let shown = panel_images(common::corpus_dir().join("ros_numpy/test.bag"));
    assert_eq!(
        dims(&shown),
        [
            ("/compressedimage".to_string(), 2, 2, "png".to_string()),
            ("/image".to_string(), 360, 240, "rgb8".to_string()),
            (
                "/occupancygrid".to_string(),
                30,
                30,
                "occupancy grid".to_string()
            ),
            (
                "/pointcloud".to_string(),
                400,
                400,
                "point cloud, 100 of 100 points".to_string()
            )
        ]
    );
    let shown = panel_images(common::corpus2_dir().join("ros2bag_tools/images.bag"));
    assert_eq!(
        dims(&shown),
        [("/image".to_string(), 2, 2, "mono8".to_string())]
    );
}
