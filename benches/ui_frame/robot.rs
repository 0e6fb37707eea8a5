//! The 3D panel on a robot of 50 links and 100,000 triangles (a chain of 49 revolute joints,
//! each link a 2,000-triangle STL mesh) moving with 200 Hz joint states, playing at 1×: the UI
//! thread's frames and the scene worker's time per scene (`-- --scene-only` runs it after the
//! clouds and markers).

use std::time::{Duration, Instant};

use bagscope_app::Cmd;

use crate::{bench_bag, report, Bench};

/// A binary STL of a closed tube round z (0.04 m radius, 0.1 m long) of `n` triangles.
fn tube(n: usize) -> Vec<u8> {
    let sides = n / 2;
    let mut b = vec![0u8; 80];
    b.extend_from_slice(&((sides * 2) as u32).to_le_bytes());
    let at = |k: usize, z: f32| {
        let a = std::f32::consts::TAU * k as f32 / sides as f32;
        [0.04 * a.cos(), 0.04 * a.sin(), z]
    };
    for k in 0..sides {
        let (p, q, r, s) = (at(k, 0.0), at(k + 1, 0.0), at(k + 1, 0.1), at(k, 0.1));
        for t in [[p, q, r], [p, r, s]] {
            b.extend_from_slice(&[0u8; 12]);
            for v in t.iter().flatten() {
                b.extend_from_slice(&v.to_le_bytes());
            }
            b.extend_from_slice(&[0, 0]);
        }
    }
    b
}

pub fn robot(n: usize) {
    use bagscope_reader::storage::ros1::writer::ConnectionSpec;
    const LINKS: usize = 50;
    let (dir, path, mut w) = bench_bag("robot", bagscope_reader::Compression::None);
    let mesh = dir.join("link.stl");
    std::fs::write(&mesh, tube(2_000)).expect("mesh");
    let mut urdf = String::from("<robot name=\"chain50\">\n");
    for i in 0..LINKS {
        urdf.push_str(&format!(
            "<link name=\"link_{i}\"><visual><geometry><mesh filename=\"{}\"/></geometry></visual></link>\n",
            mesh.display()
        ));
        if i > 0 {
            urdf.push_str(&format!(
                "<joint name=\"j_{i}\" type=\"revolute\"><parent link=\"link_{}\"/><child link=\"link_{i}\"/><origin xyz=\"0 0 0.1\"/><axis xyz=\"{}\"/><limit lower=\"-3\" upper=\"3\" effort=\"1\" velocity=\"1\"/></joint>\n",
                i - 1,
                if i % 2 == 0 { "0 1 0" } else { "0 0 1" }
            ));
        }
    }
    urdf.push_str("</robot>\n");
    let desc = w.add_connection(ConnectionSpec {
        topic: "/robot_description".into(),
        datatype: "std_msgs/String".into(),
        md5sum: "992ce8a1687cec8c8bd883ec73ca41d1".into(),
        message_definition: "string data\n".into(),
        latching: true,
        ..Default::default()
    });
    let js = w.add_connection(ConnectionSpec {
        topic: "/joint_states".into(),
        datatype: "sensor_msgs/JointState".into(),
        md5sum: "3066dcd76a6cfaef579bd0f34173e9fd".into(),
        message_definition: "Header header\nstring[] name\nfloat64[] position\nfloat64[] velocity\nfloat64[] effort\n================================================================================\nMSG: std_msgs/Header\nuint32 seq\ntime stamp\nstring frame_id\n".into(),
        ..Default::default()
    });
    let put = |m: &mut Vec<u8>, s: &str| {
        m.extend_from_slice(&(s.len() as u32).to_le_bytes());
        m.extend_from_slice(s.as_bytes());
    };
    let start = 1_700_000_000_000_000_000u64;
    let mut m = Vec::new();
    put(&mut m, &urdf);
    w.write(desc, start, &m).expect("write");
    // 200 Hz for 7 s.
    for k in 0..1400u64 {
        let t = start + 1_000_000 + k * 5_000_000;
        let mut m = Vec::new();
        m.extend_from_slice(&(k as u32).to_le_bytes());
        m.extend_from_slice(&((t / 1_000_000_000) as u32).to_le_bytes());
        m.extend_from_slice(&((t % 1_000_000_000) as u32).to_le_bytes());
        put(&mut m, "");
        m.extend_from_slice(&((LINKS - 1) as u32).to_le_bytes());
        for i in 1..LINKS {
            put(&mut m, &format!("j_{i}"));
        }
        m.extend_from_slice(&((LINKS - 1) as u32).to_le_bytes());
        for i in 1..LINKS {
            let v = 0.3 * ((k as f64) * 0.01 + i as f64 * 0.3).sin();
            m.extend_from_slice(&v.to_le_bytes());
        }
        m.extend_from_slice(&[0u8; 8]);
        w.write(js, t, &m).expect("write");
    }
    w.finish().expect("finish");
    let mut b = Bench::indexed(&path);
    b.app.apply(Cmd::OpenScene(None));
    if let Some(d) = b.app.doc.as_mut() {
        let s = &mut d.scene.panels[0].settings;
        s.fixed = "link_0".into();
        s.frames.names = false;
    }
    // The playhead after the first joint states (at the start only the root link has a
    // pose: waiting there for the whole robot waited out the minute below on every run).
    b.app.apply(Cmd::SetPlayhead(start + 100_000_000));
    // Until the transforms (with the robot's 49 moving frames) are read and a scene is built.
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_secs(60) {
        b.frame();
        std::thread::sleep(Duration::from_millis(16));
        let built = b
            .app
            .doc
            .as_ref()
            .and_then(|d| d.scene.panels.first()?.scene.clone());
        if built.is_some_and(|s| s.triangle_count() >= 100_000) {
            break;
        }
    }
    b.app.apply(Cmd::TogglePlay);
    let mut worker = Vec::new();
    let mut last = None;
    let mut tris = 0;
    let mut status = String::new();
    let frames: Vec<Duration> = (0..n)
        .map(|_| {
            let el = b.frame();
            if let Some(s) = b
                .app
                .doc
                .as_ref()
                .and_then(|d| d.scene.panels.first()?.scene.clone())
            {
                if last != Some(s.t) {
                    worker.push(s.build_ms);
                    last = Some(s.t);
                    tris = s.triangle_count();
                    status = s.robot_status.text.clone();
                }
            }
            std::thread::sleep(Duration::from_millis(16));
            el
        })
        .collect();
    report("3D, robot 50 links 200 Hz", frames);
    worker.sort_by(f64::total_cmp);
    let at = |p: f64| {
        worker
            .get(((worker.len() as f64 * p).ceil() as usize).saturating_sub(1))
            .copied()
            .unwrap_or(f64::NAN)
    };
    println!(
        "  robot: {} scenes built on the worker, median {:.1} ms, p99 {:.1} ms; {tris} triangles ({status})",
        worker.len(),
        at(0.5),
        at(0.99)
    );
    drop(b);
    let _ = std::fs::remove_dir_all(&dir);
}
