//! The map panel on a GPS track written here with bagscope's writer: 1,000,000
//! `sensor_msgs/NavSatFix` at 50 Hz (20,000 in the short mode) along a wandering path of some
//! kilometres, with covariance. First the track's time on the worker (read, then thinned per
//! zoom: what the panel's worker does) and, with `--bench`, rosbags reading the same fixes in
//! the same run (its reader and deserializer, as a user's script would); then the UI frames
//! with the map over a folder of tiles, panned (a drag every frame) and zoomed (a wheel turn
//! every frame), following the playhead while playing.

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use bagscope_app::map::Settings;
use bagscope_app::Cmd;
use bagscope_ops::spatial::geo::{mercator, read_track, TrackSource};
use bagscope_reader::storage::ros1::writer::ConnectionSpec;
use bagscope_reader::Bag;
use egui::{Event, Modifiers, PointerButton, Pos2, Vec2};

use super::{bench_bag, report, Bench};

/// Fix `i` of the path: a wander of a few kilometres around Zurich.
fn position(i: u64) -> (f64, f64) {
    let s = i as f64 / 50.0;
    (
        47.37 + 0.02 * (s / 900.0).sin() + 0.002 * (s / 37.0).sin(),
        8.54 + 0.03 * (s / 1300.0).cos() + 0.002 * (s / 53.0).cos(),
    )
}

fn fix(seq: u32, t: u64, i: u64) -> Vec<u8> {
    let (lat, lon) = position(i);
    let mut b = Vec::with_capacity(128);
    b.extend(seq.to_le_bytes());
    b.extend(((t / 1_000_000_000) as u32).to_le_bytes());
    b.extend(((t % 1_000_000_000) as u32).to_le_bytes());
    b.extend(3u32.to_le_bytes());
    b.extend(b"gps");
    b.push(0);
    b.extend(1u16.to_le_bytes());
    for v in [lat, lon, 420.0 + (i % 100) as f64 * 0.1] {
        b.extend(v.to_le_bytes());
    }
    for k in 0..9 {
        let v: f64 = match k {
            0 => 2.5,
            4 => 4.0,
            1 | 3 => 0.8,
            _ => 0.0,
        };
        b.extend(v.to_le_bytes());
    }
    b.push(2);
    b
}

/// A tile of one colour with a border, for every tile of the track's box at zooms 11..=16.
fn tiles(dir: &std::path::Path, bounds: [f64; 4]) -> usize {
    let png = {
        let mut img = image::RgbImage::from_pixel(256, 256, image::Rgb([225, 232, 220]));
        for k in 0..256 {
            img.put_pixel(k, 0, image::Rgb([150, 150, 150]));
            img.put_pixel(0, k, image::Rgb([150, 150, 150]));
        }
        let mut b = std::io::Cursor::new(Vec::new());
        img.write_to(&mut b, image::ImageFormat::Png).expect("png");
        b.into_inner()
    };
    let mut n = 0;
    for z in 11..=16u8 {
        let (x0, y0) = mercator::tile_of(mercator::world(bounds[2], bounds[1]), z);
        let (x1, y1) = mercator::tile_of(mercator::world(bounds[0], bounds[3]), z);
        for x in x0.saturating_sub(2)..=x1 + 2 {
            for y in y0.saturating_sub(2)..=y1 + 2 {
                let p = dir.join(format!("{z}/{x}/{y}.png"));
                std::fs::create_dir_all(p.parent().expect("parent")).expect("dir");
                std::fs::write(&p, &png).expect("tile");
                n += 1;
            }
        }
    }
    n
}

/// rosbags reading and deserializing every fix of `topic` (seconds; scripts/bench/
/// track_rosbags.py), if it is installed.
fn rosbags_seconds(path: &std::path::Path, topic: &str) -> Option<f64> {
    let out = std::process::Command::new("python3")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/scripts/bench/track_rosbags.py"
        ))
        .arg(path)
        .arg(topic)
        .output()
        .ok()?;
    if !out.status.success() {
        eprintln!("map: rosbags: {}", String::from_utf8_lossy(&out.stderr));
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    text.split_whitespace().next()?.parse().ok()
}

pub fn map(n: usize) {
    const T0: u64 = 1_700_000_000_000_000_000;
    let count: u64 = if n < 300 { 20_000 } else { 1_000_000 };
    let (dir, path, mut w) = bench_bag("map", bagscope_reader::Compression::Lz4);
    let c = w.add_connection(ConnectionSpec {
        topic: "/gps/fix".into(),
        datatype: "sensor_msgs/NavSatFix".into(),
        md5sum: "2d3a8cd499b9b4a0249fb98fd05cfa48".into(),
        message_definition: bagscope_reader::definition::sources::lookup(
            "sensor_msgs/NavSatFix",
            bagscope_reader::definition::msg::Dialect::Ros1,
            &[],
        )
        .expect("shipped")
        .0,
        callerid: Some("/gps".into()),
        latching: false,
    });
    for i in 0..count {
        let t = T0 + i * 20_000_000;
        w.write(c, t, &fix(i as u32, t, i)).expect("write");
    }
    w.finish().expect("finish");
    // The worker's part, three times (the best one counted, as a warm cache would give).
    let bag = Bag::open(&path).expect("open");
    let mut best = f64::MAX;
    let mut bounds = [0.0; 4];
    for _ in 0..3 {
        let t0 = Instant::now();
        let t = read_track(
            &bag,
            &TrackSource::Topic("/gps/fix".into()),
            (None, None),
            bag.options().threads(),
            &AtomicBool::new(false),
        )
        .expect("track");
        assert_eq!(t.len() as u64, count);
        bounds = t.bounds().expect("bounds");
        let read = t0.elapsed().as_secs_f64();
        let p = bagscope_app::map::thin::Prepared::new(
            t,
            &bagscope_app::map::thin::ColourBy::Speed,
            Ok(Vec::new()),
        );
        let total = t0.elapsed().as_secs_f64();
        println!(
            "map: track of {count} fixes read in {read:.3} s, ready (thinned, coloured) in {total:.3} s ({} kept at zoom 12)",
            p.levels[12].idx.len()
        );
        best = best.min(total);
    }
    let tile_dir = dir.join("tiles");
    let made = tiles(&tile_dir, bounds);
    let mut b = Bench::indexed(&path);
    let doc = b.app.doc.as_mut().expect("open");
    doc.map.open_with(Settings {
        topics: vec!["/gps/fix".into()],
        tiles: format!("file://{}/{{z}}/{{x}}/{{y}}.png", tile_dir.display()),
        ..Settings::default()
    });
    let t0 = Instant::now();
    loop {
        b.frame();
        let d = b.app.doc.as_ref().expect("open");
        let layer = d.map.panels[0].layers.first();
        if let Some(e) = layer.and_then(|l| l.error.as_ref()) {
            panic!("the map's track: {e}");
        }
        let ready = layer.is_some_and(|l| l.track.is_some());
        let loaded: usize = d.map.tiles.values().map(|t| t.loaded).sum();
        if ready && loaded >= 4 {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(120),
            "no track on the map (track {ready}, {loaded} tiles)"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    println!(
        "map: track on the panel and tiles in after {:.2} s ({made} tiles in the folder)",
        t0.elapsed().as_secs_f64()
    );
    let rect = b.app.doc.as_ref().expect("open").map.panels[0]
        .last_frame
        .expect("drawn")
        .rect;
    let mid = rect.center();
    // Panning: a drag across the panel, a step each frame.
    let mut pan = Vec::with_capacity(n);
    let mut at = mid;
    pan.push(b.frame_with(vec![
        Event::PointerMoved(at),
        Event::PointerButton {
            pos: at,
            button: PointerButton::Primary,
            pressed: true,
            modifiers: Modifiers::NONE,
        },
    ]));
    for i in 0..n {
        let dir = if (i / 60) % 2 == 0 { 1.0 } else { -1.0 };
        at += Vec2::new(4.0 * dir, 2.0 * dir);
        pan.push(b.frame_with(vec![Event::PointerMoved(at)]));
        std::thread::sleep(Duration::from_millis(2));
    }
    b.frame_with(vec![Event::PointerButton {
        pos: at,
        button: PointerButton::Primary,
        pressed: false,
        modifiers: Modifiers::NONE,
    }]);
    report(&format!("map {count} fixes, panning"), pan);
    // Zooming in and out around the middle, a wheel turn each frame.
    let zoom: Vec<Duration> = (0..n)
        .map(|i| {
            let dy = if (i / 90) % 2 == 0 { 40.0 } else { -40.0 };
            let d = b.frame_with(vec![
                Event::PointerMoved(mid),
                Event::MouseWheel {
                    unit: egui::MouseWheelUnit::Point,
                    delta: Vec2::new(0.0, dy),
                    phase: egui::TouchPhase::Move,
                    modifiers: Modifiers::NONE,
                    source: egui::MouseWheelSource::Wheel,
                },
            ]);
            std::thread::sleep(Duration::from_millis(2));
            d
        })
        .collect();
    report(&format!("map {count} fixes, zooming"), zoom);
    // Playing at 10x, the map following the playhead.
    b.app.doc.as_mut().expect("open").map.panels[0]
        .settings
        .follow = true;
    b.app.apply(Cmd::SetSpeed(10.0));
    b.app.apply(Cmd::TogglePlay);
    let play: Vec<Duration> = (0..n)
        .map(|_| {
            let d = b.frame_with(vec![Event::PointerMoved(Pos2::new(5.0, 5.0))]);
            std::thread::sleep(Duration::from_millis(2));
            d
        })
        .collect();
    report(&format!("map {count} fixes, following"), play);
    drop(b);
    if n >= 300 {
        if let Some(r) = rosbags_seconds(&path, "/gps/fix") {
            println!(
                "map: rosbags reads the same fixes in {r:.3} s: bagscope's track ready {:.1}x faster",
                r / best
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
