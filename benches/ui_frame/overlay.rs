//! `cargo bench --bench ui_frame -- --overlay-only`: the app playing a 1080p jpeg camera at
//! 30 Hz (1×) with its `CameraInfo` (plumb_bob), a 1,000,000-point cloud at 10 Hz projected
//! into it and 500 ImageMarkers a frame matched by header stamp: the UI thread's frame times,
//! and the image worker's time to work out each overlay (match, read, project, paint).

use std::time::Duration;

use bagscope_app::Cmd;
use bagscope_reader::storage::ros1::writer::ConnectionSpec;

use super::{bench_bag, picture, report, Bench};

const HEADER: &str = "\n================================================================================\nMSG: std_msgs/Header\nuint32 seq\ntime stamp\nstring frame_id\n";

fn header(m: &mut Vec<u8>, seq: u32, t: u64, frame: &str) {
    m.extend_from_slice(&seq.to_le_bytes());
    m.extend_from_slice(&((t / 1_000_000_000) as u32).to_le_bytes());
    m.extend_from_slice(&((t % 1_000_000_000) as u32).to_le_bytes());
    string(m, frame);
}

fn string(m: &mut Vec<u8>, s: &str) {
    m.extend_from_slice(&(s.len() as u32).to_le_bytes());
    m.extend_from_slice(s.as_bytes());
}

fn f64s(m: &mut Vec<u8>, v: &[f64]) {
    for x in v {
        m.extend_from_slice(&x.to_le_bytes());
    }
}

fn camera_info(seq: u32, t: u64) -> Vec<u8> {
    let mut m = Vec::new();
    header(&mut m, seq, t, "cam");
    m.extend_from_slice(&1080u32.to_le_bytes());
    m.extend_from_slice(&1920u32.to_le_bytes());
    string(&mut m, "plumb_bob");
    m.extend_from_slice(&5u32.to_le_bytes());
    f64s(&mut m, &[-0.1, 0.03, 0.001, -0.001, 0.0]);
    f64s(
        &mut m,
        &[1400.0, 0.0, 960.0, 0.0, 1400.0, 540.0, 0.0, 0.0, 1.0],
    );
    f64s(&mut m, &[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]);
    f64s(
        &mut m,
        &[
            1400.0, 0.0, 960.0, 0.0, 0.0, 1400.0, 540.0, 0.0, 0.0, 0.0, 1.0, 0.0,
        ],
    );
    m.extend_from_slice(&[0u8; 4 * 6 + 1]);
    m
}

/// A million points on a wavy wall 4-12 m ahead of the camera (its optical frame).
fn cloud(seq: u32, t: u64, k: u64) -> Vec<u8> {
    let mut m = Vec::new();
    header(&mut m, seq, t, "cam");
    let n = 1_000_000u32;
    m.extend_from_slice(&1u32.to_le_bytes());
    m.extend_from_slice(&n.to_le_bytes());
    m.extend_from_slice(&3u32.to_le_bytes());
    for (i, f) in ["x", "y", "z"].iter().enumerate() {
        string(&mut m, f);
        m.extend_from_slice(&(4 * i as u32).to_le_bytes());
        m.push(7);
        m.extend_from_slice(&1u32.to_le_bytes());
    }
    m.push(0);
    m.extend_from_slice(&12u32.to_le_bytes());
    m.extend_from_slice(&(12 * n).to_le_bytes());
    m.extend_from_slice(&(12 * n).to_le_bytes());
    for i in 0..n {
        let (u, v) = ((i % 1000) as f32 / 1000.0, (i / 1000) as f32 / 1000.0);
        let z = 4.0 + 8.0 * v + ((u * 20.0 + k as f32 * 0.1).sin() * 0.5);
        for c in [(u - 0.5) * z * 1.2, (v - 0.5) * z * 0.6, z] {
            m.extend_from_slice(&c.to_le_bytes());
        }
    }
    m.push(1);
    m
}

/// 500 ImageMarkers (circles, boxes, strips) stamped `t`.
fn markers(seq: u32, t: u64, k: u64) -> Vec<u8> {
    let mut m = Vec::new();
    m.extend_from_slice(&500u32.to_le_bytes());
    for i in 0..500u32 {
        header(&mut m, seq, t, "cam");
        string(&mut m, "det");
        m.extend_from_slice(&(i as i32).to_le_bytes());
        // A circle, a line strip, a polygon in turn.
        let ty = [0i32, 1, 3][(i % 3) as usize];
        m.extend_from_slice(&ty.to_le_bytes());
        m.extend_from_slice(&0i32.to_le_bytes());
        let (x, y) = (
            40.0 + (i % 25) as f64 * 75.0 + k as f64,
            40.0 + (i / 25) as f64 * 50.0,
        );
        f64s(&mut m, &[x, y, 0.0]);
        m.extend_from_slice(&12f32.to_le_bytes());
        for c in [1f32, 0.3, 0.2, 1.0] {
            m.extend_from_slice(&c.to_le_bytes());
        }
        m.push(0);
        m.extend_from_slice(&[0u8; 16]);
        m.extend_from_slice(&[0u8; 8]);
        let pts: &[(f64, f64)] = if ty == 0 {
            &[]
        } else {
            &[(0.0, 0.0), (30.0, 0.0), (30.0, 20.0), (0.0, 20.0)]
        };
        m.extend_from_slice(&(pts.len() as u32).to_le_bytes());
        for (dx, dy) in pts {
            f64s(&mut m, &[x + dx, y + dy, 0.0]);
        }
        m.extend_from_slice(&0u32.to_le_bytes());
    }
    m
}

/// The case.
pub(crate) fn overlay(n: usize) {
    let (dir, path, mut w) = bench_bag("overlay", bagscope_reader::Compression::None);
    let spec = |topic: &str, ty: &str, def: String| ConnectionSpec {
        topic: topic.into(),
        datatype: ty.into(),
        md5sum: "*".into(),
        message_definition: def,
        ..Default::default()
    };
    let cam = w.add_connection(spec(
        "/camera/image/compressed",
        "sensor_msgs/CompressedImage",
        format!("Header header\nstring format\nuint8[] data{HEADER}"),
    ));
    let info = w.add_connection(spec(
        "/camera/camera_info",
        "sensor_msgs/CameraInfo",
        format!("Header header\nuint32 height\nuint32 width\nstring distortion_model\nfloat64[] D\nfloat64[9] K\nfloat64[9] R\nfloat64[12] P\nuint32 binning_x\nuint32 binning_y\nRegionOfInterest roi{HEADER}\n================================================================================\nMSG: sensor_msgs/RegionOfInterest\nuint32 x_offset\nuint32 y_offset\nuint32 height\nuint32 width\nbool do_rectify\n"),
    ));
    let pc = w.add_connection(spec(
        "/cloud",
        "sensor_msgs/PointCloud2",
        format!("Header header\nuint32 height\nuint32 width\nPointField[] fields\nbool is_bigendian\nuint32 point_step\nuint32 row_step\nuint8[] data\nbool is_dense{HEADER}\n================================================================================\nMSG: sensor_msgs/PointField\nstring name\nuint32 offset\nuint8 datatype\nuint32 count\n"),
    ));
    let ann = w.add_connection(spec(
        "/detections",
        "foxglove_msgs/ImageMarkerArray",
        format!("visualization_msgs/ImageMarker[] markers\n================================================================================\nMSG: visualization_msgs/ImageMarker\nHeader header\nstring ns\nint32 id\nint32 type\nint32 action\ngeometry_msgs/Point position\nfloat32 scale\nstd_msgs/ColorRGBA outline_color\nuint8 filled\nstd_msgs/ColorRGBA fill_color\nduration lifetime\ngeometry_msgs/Point[] points\nstd_msgs/ColorRGBA[] outline_colors{HEADER}\n================================================================================\nMSG: geometry_msgs/Point\nfloat64 x\nfloat64 y\nfloat64 z\n================================================================================\nMSG: std_msgs/ColorRGBA\nfloat32 r\nfloat32 g\nfloat32 b\nfloat32 a\n"),
    ));
    let frames: Vec<Vec<u8>> = (0..10)
        .map(|k| {
            bagscope_ops::media::image::encode_jpeg(1920, 1080, &picture(1920, 1080, k), 85)
                .expect("jpeg")
        })
        .collect();
    let start = 1_700_000_000_000_000_000u64;
    let count = if n < 300 { 30 } else { 300 };
    for k in 0..count as u64 {
        let t = start + k * 33_333_333;
        let stamp = t - 20_000_000;
        let mut m = Vec::new();
        header(&mut m, k as u32, stamp, "cam");
        string(&mut m, "jpeg");
        let f = &frames[k as usize % frames.len()];
        m.extend_from_slice(&(f.len() as u32).to_le_bytes());
        m.extend_from_slice(f);
        w.write(cam, t, &m).expect("write");
        w.write(info, t, &camera_info(k as u32, stamp))
            .expect("write");
        if k % 3 == 0 {
            w.write(pc, t - 1_000_000, &cloud(k as u32, stamp, k))
                .expect("write");
        }
        w.write(ann, t + 40_000_000, &markers(k as u32, stamp, k))
            .expect("write");
    }
    w.finish().expect("finish");
    let mut b = Bench::indexed(&path);
    let ti = b
        .app
        .doc
        .as_ref()
        .and_then(|d| {
            d.rec
                .bag
                .summary()
                .topics
                .iter()
                .position(|t| t.name == "/camera/image/compressed")
        })
        .expect("the camera");
    b.app.apply(Cmd::OpenImage(ti));
    {
        let d = b.app.doc.as_mut().expect("open");
        let p = &mut d.images.panels[0];
        p.overlay.annotations = vec!["/detections".into()];
        p.overlay.projected = vec!["/cloud".into()];
    }
    b.app.apply(Cmd::FitAll);
    b.until_shown();
    // The annotation topic's stamps are read on a thread of their own (every chunk of the
    // recording holds some): the images and their clouds are shown meanwhile.
    let t0 = std::time::Instant::now();
    let mut waiting = Vec::new();
    while b.app.doc.as_ref().is_some_and(|d| {
        d.images.panels[0]
            .frame
            .as_ref()
            .is_none_or(|f| f.overlay.as_ref().is_none_or(|o| o.pending))
    }) {
        waiting.extend(b.at_60hz(1));
        assert!(
            t0.elapsed() < Duration::from_secs(600),
            "the stamps were not read"
        );
    }
    let size = std::fs::metadata(&path).map_or(0, |m| m.len());
    println!(
        "  annotation stamps of the {:.2} GB recording read in {:.1} s, on their own thread",
        size as f64 / 1e9,
        t0.elapsed().as_secs_f64()
    );
    report("  the UI meanwhile", waiting);
    b.app.apply(Cmd::TogglePlay);
    let mut frames_ms = Vec::new();
    let mut overlay_ms = Vec::new();
    let mut last = None;
    for _ in 0..n {
        frames_ms.push(b.frame());
        std::thread::sleep(Duration::from_millis(16));
        let d = b.app.doc.as_ref().expect("open");
        if let Some(f) = d.images.panels[0].frame.as_ref() {
            // Each frame's overlay once its annotation stamps are in (they are read on a
            // thread of their own while the first frames go by).
            if let Some(o) = f.overlay.as_ref().filter(|o| !o.pending) {
                if last != Some(f.key.entry) {
                    last = Some(f.key.entry);
                    overlay_ms.push((o.ms, o.points, o.shapes.len()));
                }
            }
        }
    }
    report("1080p + 1M points + 500 annotations, 1×", frames_ms);
    let mut ms: Vec<f64> = overlay_ms.iter().map(|x| x.0).collect();
    ms.sort_by(f64::total_cmp);
    let pick = |q: f64| {
        ms.get(((ms.len() as f64 - 1.0) * q) as usize)
            .copied()
            .unwrap_or(0.0)
    };
    let (pts, shapes) = overlay_ms
        .iter()
        .map(|x| (x.1, x.2))
        .max()
        .unwrap_or((0, 0));
    println!(
        "  overlay on the image worker: {} frames, p50 {:.1} ms, max {:.1} ms ({pts} points in view, {shapes} shapes)",
        ms.len(),
        pick(0.5),
        pick(1.0)
    );
    assert!(
        shapes >= 500 && pts > 100_000,
        "the overlay is drawn: {shapes} shapes, {pts} points"
    );
    drop(b);
    let _ = std::fs::remove_dir_all(&dir);
}
