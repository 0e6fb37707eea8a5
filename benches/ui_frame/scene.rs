//! `cargo bench --bench ui_frame -- --scene-only`: the 3D panel on a 1,000,000-point cloud at
//! 10 Hz with a 5 s decay, 10,000 markers, and scrubbing: the UI thread's frames and the scene
//! worker's time per scene.

use std::time::Duration;

use bagscope_app::Cmd;

use super::{bench_bag, report, Bench};

#[path = "robot.rs"]
mod robot;

/// A recording of a 1,000,000-point cloud at 10 Hz (xyz float32, 7 s) and a 10,000-marker
/// array at 1 Hz, written here; frames of the app with a 3D panel on it while playing with a
/// 5 s decay, then on the markers alone, then scrubbing (a new playhead every frame).
/// The robot case alone (`--robot-only`).
pub fn robot_only(n: usize) {
    robot::robot(n);
}

pub fn scene(n: usize) {
    use bagscope_reader::storage::ros1::writer::ConnectionSpec;
    let (dir, path, mut w) = bench_bag("scene", bagscope_reader::Compression::None);
    const HEADER: &str = "================================================================================\nMSG: std_msgs/Header\nuint32 seq\ntime stamp\nstring frame_id\n";
    let cloud_def = format!("Header header\nuint32 height\nuint32 width\nPointField[] fields\nbool is_bigendian\nuint32 point_step\nuint32 row_step\nuint8[] data\nbool is_dense\n{HEADER}================================================================================\nMSG: sensor_msgs/PointField\nuint8 INT8=1\nuint8 UINT8=2\nuint8 INT16=3\nuint8 UINT16=4\nuint8 INT32=5\nuint8 UINT32=6\nuint8 FLOAT32=7\nuint8 FLOAT64=8\nstring name\nuint32 offset\nuint8 datatype\nuint32 count\n");
    let marker_def = format!("visualization_msgs/Marker[] markers\n================================================================================\nMSG: visualization_msgs/Marker\nHeader header\nstring ns\nint32 id\nint32 type\nint32 action\ngeometry_msgs/Pose pose\ngeometry_msgs/Vector3 scale\nstd_msgs/ColorRGBA color\nduration lifetime\nbool frame_locked\ngeometry_msgs/Point[] points\nstd_msgs/ColorRGBA[] colors\nstring text\nstring mesh_resource\nbool mesh_use_embedded_materials\n{HEADER}================================================================================\nMSG: geometry_msgs/Pose\nPoint position\nQuaternion orientation\n================================================================================\nMSG: geometry_msgs/Point\nfloat64 x\nfloat64 y\nfloat64 z\n================================================================================\nMSG: geometry_msgs/Quaternion\nfloat64 x\nfloat64 y\nfloat64 z\nfloat64 w\n================================================================================\nMSG: geometry_msgs/Vector3\nfloat64 x\nfloat64 y\nfloat64 z\n================================================================================\nMSG: std_msgs/ColorRGBA\nfloat32 r\nfloat32 g\nfloat32 b\nfloat32 a\n");
    let cc = w.add_connection(ConnectionSpec {
        topic: "/points".into(),
        datatype: "sensor_msgs/PointCloud2".into(),
        md5sum: "1158d486dd51d683ce2f1be655c3c181".into(),
        message_definition: cloud_def,
        ..Default::default()
    });
    let mc = w.add_connection(ConnectionSpec {
        topic: "/markers".into(),
        datatype: "visualization_msgs/MarkerArray".into(),
        md5sum: "d155b9ce5188fbaf89745847fd5882d7".into(),
        message_definition: marker_def,
        ..Default::default()
    });
    let header = |m: &mut Vec<u8>, t: u64| {
        m.extend_from_slice(&0u32.to_le_bytes());
        m.extend_from_slice(&((t / 1_000_000_000) as u32).to_le_bytes());
        m.extend_from_slice(&((t % 1_000_000_000) as u32).to_le_bytes());
        m.extend_from_slice(&3u32.to_le_bytes());
        m.extend_from_slice(b"map");
    };
    let start = 1_700_000_000_000_000_000u64;
    const POINTS: u32 = 1_000_000;
    for k in 0..70u64 {
        let t = start + k * 100_000_000;
        let mut m = Vec::with_capacity(POINTS as usize * 12 + 200);
        header(&mut m, t);
        for v in [1u32, POINTS, 3] {
            m.extend_from_slice(&v.to_le_bytes());
        }
        for (i, f) in ["x", "y", "z"].iter().enumerate() {
            m.extend_from_slice(&1u32.to_le_bytes());
            m.extend_from_slice(f.as_bytes());
            m.extend_from_slice(&(4 * i as u32).to_le_bytes());
            m.push(7);
            m.extend_from_slice(&1u32.to_le_bytes());
        }
        m.push(0);
        m.extend_from_slice(&12u32.to_le_bytes());
        m.extend_from_slice(&(12 * POINTS).to_le_bytes());
        m.extend_from_slice(&(12 * POINTS).to_le_bytes());
        // A spinning lidar's rings round the origin, a little further each scan.
        for i in 0..POINTS {
            let a = i as f32 * 0.000_628_3 + k as f32 * 0.01;
            let ring = (i % 32) as f32;
            let r = 5.0 + ring * 0.5 + (k as f32) * 0.02;
            for v in [r * a.cos(), r * a.sin(), ring * 0.1 - 1.0] {
                m.extend_from_slice(&v.to_le_bytes());
            }
        }
        m.push(1);
        w.write(cc, t, &m).expect("write");
        if k % 10 == 0 {
            let mut m = Vec::new();
            m.extend_from_slice(&10_000u32.to_le_bytes());
            for id in 0..10_000i32 {
                header(&mut m, t);
                m.extend_from_slice(&1u32.to_le_bytes());
                m.extend_from_slice(b"m");
                m.extend_from_slice(&id.to_le_bytes());
                // Cubes, spheres, cylinders and arrows on a 100 × 100 grid.
                m.extend_from_slice(&[1i32, 2, 3, 0][id as usize % 4].to_le_bytes());
                m.extend_from_slice(&0i32.to_le_bytes());
                for v in [
                    f64::from(id % 100) * 0.5,
                    f64::from(id / 100) * 0.5,
                    0.0,
                    0.0,
                    0.0,
                    0.0,
                    1.0,
                    0.3,
                    0.3,
                    0.3,
                ] {
                    m.extend_from_slice(&v.to_le_bytes());
                }
                for v in [0.2f32, 0.6, 1.0, 1.0] {
                    m.extend_from_slice(&v.to_le_bytes());
                }
                m.extend_from_slice(&[0u8; 8]);
                m.push(0);
                m.extend_from_slice(&0u32.to_le_bytes());
                m.extend_from_slice(&0u32.to_le_bytes());
                m.extend_from_slice(&0u32.to_le_bytes());
                m.extend_from_slice(&0u32.to_le_bytes());
                m.push(0);
            }
            w.write(mc, t, &m).expect("write");
        }
    }
    w.finish().expect("finish");
    let mut b = Bench::indexed(&path);
    b.app.apply(Cmd::OpenScene(None));
    {
        let d = b.app.doc.as_mut().expect("open");
        let s = &mut d.scene.panels[0].settings;
        s.fixed = "map".into();
        for l in &mut s.layers {
            l.decay_s = if l.topic == "/points" { 5.0 } else { 0.0 };
            l.visible = l.topic == "/points";
        }
    }
    // (time shown, build ms, points, triangles, marker messages read) of the scene shown.
    let builds = |b: &Bench| {
        b.app
            .doc
            .as_ref()
            .and_then(|d| d.scene.panels.first()?.scene.as_ref())
            .map(|s| {
                (
                    s.t,
                    s.build_ms,
                    s.point_count(),
                    s.triangle_count(),
                    s.replayed,
                )
            })
    };
    let playhead = |b: &Bench| b.app.doc.as_ref().map_or(0, |d| d.nav.playhead);
    // Per scene: build ms, points, triangles, and ms from the playhead reaching its time to
    // the scene being there for the UI to draw.
    let run = |b: &mut Bench, n: usize, scrub: bool| {
        let mut worker = Vec::new();
        let mut last = None;
        let mut asked: std::collections::HashMap<u64, std::time::Instant> = Default::default();
        // Every cloud (message) the scenes held: each read once.
        let mut clouds: std::collections::HashSet<u64> = Default::default();
        let (s, e) = b.app.doc.as_ref().map(|d| d.rec.range()).unwrap_or((0, 1));
        let frames = (0..n)
            .map(|i| {
                if scrub {
                    let f = (i as u64 * 7919) % 1000;
                    b.app.apply(Cmd::SetPlayhead(s + (e - s) * f / 1000));
                }
                asked
                    .entry(playhead(b))
                    .or_insert_with(std::time::Instant::now);
                let el = b.frame();
                asked
                    .entry(playhead(b))
                    .or_insert_with(std::time::Instant::now);
                if let Some(x) = builds(b) {
                    if last != Some(x) {
                        let wait = asked
                            .get(&x.0)
                            .map_or(f64::NAN, |t| t.elapsed().as_secs_f64() * 1e3);
                        worker.push((x.1, x.2, x.3, wait, x.4));
                        if let Some(sc) = b
                            .app
                            .doc
                            .as_ref()
                            .and_then(|d| d.scene.panels.first()?.scene.as_ref())
                        {
                            clouds.extend(sc.clouds.iter().map(|c| c.id));
                        }
                        last = Some(x);
                    }
                }
                // A 60 Hz display: the scene worker runs between frames.
                std::thread::sleep(Duration::from_millis(16));
                el
            })
            .collect::<Vec<_>>();
        (frames, worker, clouds.len())
    };
    type Built = (f64, usize, usize, f64, usize);
    let say = |what: &str, (worker, clouds): (&[Built], usize)| {
        let q = |mut ms: Vec<f64>| {
            ms.retain(|v| v.is_finite());
            ms.sort_by(f64::total_cmp);
            let at = |p: f64| {
                ms.get(((ms.len() as f64 * p).ceil() as usize).saturating_sub(1))
                    .copied()
                    .unwrap_or(f64::NAN)
            };
            (at(0.5), at(0.99), ms.last().copied().unwrap_or(f64::NAN))
        };
        let (mid, p99, max) = q(worker.iter().map(|w| w.0).collect());
        let (wmid, wp99, wmax) = q(worker.iter().map(|w| w.3).collect());
        let pts = worker.iter().map(|w| w.1).max().unwrap_or(0);
        let tris = worker.iter().map(|w| w.2).max().unwrap_or(0);
        let read = worker.iter().map(|w| w.4).max().unwrap_or(0);
        println!(
            "  {what}: {} scenes built on the worker, median {mid:.1} ms, p99 {p99:.1} ms, max {max:.1} ms; playhead to scene ready median {wmid:.0} ms, p99 {wp99:.0} ms, max {wmax:.0} ms; up to {pts} points, {tris} triangles, {read} marker messages read a scene; {clouds} cloud messages read",
            worker.len()
        );
    };
    run(&mut b, 10, false);
    b.app.apply(Cmd::TogglePlay);
    let (f, wk, c) = run(&mut b, n, false);
    report("3D, 1M-pt cloud 10 Hz, 5 s decay, playing", f);
    say("cloud", (&wk, c));
    b.app.apply(Cmd::TogglePlay);
    {
        let d = b.app.doc.as_mut().expect("open");
        let s = &mut d.scene.panels[0].settings;
        for l in &mut s.layers {
            l.visible = l.topic == "/markers";
        }
    }
    let (f, wk, c) = run(&mut b, n / 2, true);
    report("3D, 10,000 markers, scrubbing", f);
    say("markers", (&wk, c));
    // A second of the playhead standing still: the idle worker replays the markers ahead
    // (snapshots for later seeks); then the same scrubbing.
    run(&mut b, 60, false);
    let (f, wk, c) = run(&mut b, n / 2, true);
    report("3D, 10,000 markers, scrubbing, warmed up", f);
    say("markers, warmed up", (&wk, c));
    {
        let d = b.app.doc.as_mut().expect("open");
        let s = &mut d.scene.panels[0].settings;
        for l in &mut s.layers {
            l.visible = true;
            l.decay_s = 0.0;
        }
    }
    let (f, wk, c) = run(&mut b, n / 2, true);
    report("3D, cloud + markers, scrubbing", f);
    say("cloud and markers", (&wk, c));
    // The same scrubbing with the 3D panel closed: what the rest of the app costs.
    if let Some(d) = b.app.doc.as_mut() {
        d.scene.panels.clear();
    }
    let (f, _, _) = run(&mut b, n / 2, true);
    report("no 3D panel, scrubbing", f);
    drop(b);
    let _ = std::fs::remove_dir_all(&dir);
    robot::robot(n);
}
