//! Frame time of the app's own UI code (one `Context::run_ui` with every panel, 1600×1000) on a
//! big bag: while indexing, after (zoomed out, zoomed in to one second, zooming every frame),
//! and while playing; then with three 1M-point plot series; then on a bag of 200 topics (written
//! here with bagscope's writer) to show that rows are virtualised. Prints one line per case with
//! p50 and p99.
//!
//! Last, the time to decode a camera frame of each common size, and frames while playing a
//! 1920×1080 jpeg topic at 30 Hz with an image panel open, and two demo runs on one timeline
//! with a camera panel each (`-- --camera-only` runs just these), and a 1080p H.264 camera
//! with B-frames playing at 1× and 5× (`-- --video-only`, ui_frame/video.rs; needs ffmpeg).
//!
//! Then the 3D panel (`-- --scene-only` runs just these): a 1,000,000-point cloud at 10 Hz
//! playing with a 5 s decay, 10,000 markers, and scrubbing; the UI thread's frames and the
//! scene worker's time per scene. Drawing on the GPU is not in these (no GL context here);
//! tests/scene_gl.rs draws for real.
//!
//! An image panel with an overlay (`-- --overlay-only`, ui_frame/overlay.rs): a 1080p camera
//! at 1× with a 1,000,000-point cloud projected into it and 500 annotations a frame.
//!
//! Last, the workbench (`-- --workbench-only`): 20 state rows under the timeline and the
//! Diagnostics panel on 200 status names (ui_frame/workbench.rs); and the map panel
//! (`-- --map-only`): a 1,000,000-fix track on tiles, panned and zoomed (ui_frame/map.rs).
//!
//! `cargo bench --bench ui_frame [-- BAG]`; BAG defaults to bench-bags/many_small_lz4.bag.
//! `-- --repeat N` (with any of the others): each run a process of its own, N of them, and the
//! worst p99 of each case against its target (ui_frame/repeat.rs).
//! `cargo bench --bench ui_frame -- --derived-only [BAG]`: only the three derived series.
//! `cargo bench --bench ui_frame -- --scale BAG`: the Scale figures on a (sparse) recording
//! from `bagscope gen-sparse`.
//! (make it with `python3 ../shared/tools/gen_bench_bags.py bench-bags`).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use bagscope_app::{App, Cmd};
use bagscope_ops::demo::write_demo;

#[path = "ui_frame/map.rs"]
mod map;
#[path = "ui_frame/overlay.rs"]
mod overlay;
#[path = "ui_frame/repeat.rs"]
mod repeat;
#[path = "ui_frame/scene.rs"]
mod scene;
#[path = "ui_frame/script.rs"]
mod script;
#[path = "ui_frame/two.rs"]
mod two;
#[path = "ui_frame/video.rs"]
mod video;
#[path = "ui_frame/workbench.rs"]
mod workbench;

struct Bench {
    ctx: egui::Context,
    app: App,
    t: f64,
}

impl Bench {
    fn frame(&mut self) -> Duration {
        self.frame_with(Vec::new())
    }

    /// A frame with input `events` (a drag, a wheel turn).
    fn frame_with(&mut self, events: Vec<egui::Event>) -> Duration {
        self.t += 1.0 / 60.0;
        let input = egui::RawInput {
            events,
            screen_rect: Some(egui::Rect::from_min_size(
                egui::Pos2::ZERO,
                egui::vec2(1600.0, 1000.0),
            )),
            time: Some(self.t),
            predicted_dt: 1.0 / 60.0,
            ..Default::default()
        };
        let t0 = Instant::now();
        let mut out = self.ctx.run_ui(input, |ui| self.app.ui(ui));
        let el = t0.elapsed();
        // Tessellation is egui's, not the app's: dropped unmeasured, as a renderer would take it
        // (its texture changes taken as applied: a debug build asserts that they were).
        out.textures_delta.clear();
        drop(out);
        el
    }
}

impl Bench {
    /// `n` frames as a 60 Hz display draws them (workers run between frames).
    fn at_60hz(&mut self, n: usize) -> Vec<Duration> {
        (0..n)
            .map(|_| {
                let el = self.frame();
                std::thread::sleep(Duration::from_millis(16));
                el
            })
            .collect()
    }

    /// Draws frames at 60 Hz until the first image panel shows a frame (at most 60 s).
    fn until_shown(&mut self) {
        let t0 = Instant::now();
        while self
            .app
            .doc
            .as_ref()
            .is_none_or(|d| d.images.panels.first().is_none_or(|p| p.frame.is_none()))
        {
            self.at_60hz(1);
            assert!(t0.elapsed() < Duration::from_secs(60), "no frame shown");
        }
    }

    /// The app with `path` open, its tables built.
    fn indexed(path: &std::path::Path) -> Bench {
        let mut b = Bench {
            ctx: egui::Context::default(),
            app: App::new(None, Some(path.to_path_buf())),
            t: 0.0,
        };
        b.until_indexed();
        b
    }

    /// Draws frames (as a 60 Hz display would, the indexer running between them) until the
    /// message tables are published.
    fn until_indexed(&mut self) {
        let t0 = Instant::now();
        while self
            .app
            .doc
            .as_ref()
            .is_none_or(|d| d.rec.indexed.is_none())
        {
            self.frame();
            assert!(
                t0.elapsed() < Duration::from_secs(120),
                "indexing did not finish"
            );
            std::thread::sleep(Duration::from_millis(2));
        }
    }
}

/// `n` frames zooming in around the middle of the bag, a new view each frame.
fn zooming(b: &mut Bench, n: usize) -> Vec<Duration> {
    let (a, e) = b.app.doc.as_ref().map(|d| d.rec.range()).unwrap_or((0, 1));
    let mid = (e - a) as f64 / 2.0;
    (0..n)
        .map(|i| {
            let w = (e - a) as f64 * (0.999f64).powi(i as i32 * 20);
            b.app.apply(Cmd::SetView(mid - w / 2.0, mid + w / 2.0));
            b.frame()
        })
        .collect()
}

fn report(name: &str, mut v: Vec<Duration>) {
    if v.is_empty() {
        println!("{name:<28} no frames");
        return;
    }
    v.sort();
    let q = |p: f64| v[((v.len() as f64 - 1.0) * p).round() as usize].as_secs_f64() * 1e3;
    println!(
        "{name:<28} frames={:<5} p50={:.3} p99={:.3} max={:.3} (ms)",
        v.len(),
        q(0.5),
        q(0.99),
        q(1.0)
    );
}

/// Peak and current resident memory of this process (kB), from /proc.
fn rss_kb() -> (u64, u64) {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        s.lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmHWM:"), field("VmRSS:"))
}

/// The Scale figures on one (large, sparse) recording: time from the open to the first frame
/// that shows it, every frame while the tables build, the timeline zoomed out, in, zooming
/// and playing, the inspector at five points of two topics, and the peak memory.
fn scale(bag: PathBuf) {
    let t0 = Instant::now();
    let mut b = Bench {
        ctx: egui::Context::default(),
        app: App::new(None, Some(bag.clone())),
        t: 0.0,
    };
    if std::env::var_os("UI_FRAME_NO_THUMBS").is_some() {
        // Only to see what the thumbnail worker costs the other frames.
        b.frame();
        if let Some(d) = b.app.doc.as_mut() {
            d.timeline.show_thumbs = false;
        }
    }
    let mut first = None;
    let mut frames = Vec::new();
    loop {
        let el = b.frame();
        frames.push(el);
        let d = b.app.doc.as_ref();
        if first.is_none() && d.is_some() {
            first = Some(t0.elapsed());
        }
        if d.is_some_and(|d| d.rec.indexed.is_some()) {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(900),
            "indexing did not finish"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    let indexed = t0.elapsed();
    let (peak, now) = rss_kb();
    let msgs = b
        .app
        .doc
        .as_ref()
        .map_or(0, |d| d.rec.bag.summary().message_count);
    println!(
        "bag {} ({msgs} messages): first frame showing it {:.3} s after the open; indexed in {:.2} s while drawing; memory peak {:.2} GB, now {:.2} GB",
        bag.display(),
        first.unwrap_or_default().as_secs_f64(),
        indexed.as_secs_f64(),
        peak as f64 / 1e6,
        now as f64 / 1e6
    );
    if std::env::var_os("UI_FRAME_DEBUG").is_some() {
        let mut ix: Vec<(usize, Duration)> = frames.iter().copied().enumerate().collect();
        ix.sort_by_key(|x| std::cmp::Reverse(x.1));
        eprintln!(
            "slowest frames while indexing (index of {}, time): {:?}",
            frames.len(),
            &ix[..ix.len().min(12)]
        );
    }
    report("every frame until indexed", frames);
    let n = 300;
    let run = |b: &mut Bench, n: usize| (0..n).map(|_| b.frame()).collect::<Vec<_>>();
    b.app.apply(Cmd::FitAll);
    run(&mut b, 5);
    report("zoomed out", run(&mut b, n));
    let (a, e) = b.app.doc.as_ref().map(|d| d.rec.range()).unwrap_or((0, 1));
    let mid = (e - a) as f64 / 2.0;
    b.app.apply(Cmd::SetView(mid, mid + 1e9));
    run(&mut b, 5);
    report("zoomed in to 1 s", run(&mut b, n));
    let z = zooming(&mut b, n);
    if std::env::var_os("UI_FRAME_DEBUG").is_some() {
        let mut ix: Vec<(usize, Duration)> = z.iter().copied().enumerate().collect();
        ix.sort_by_key(|x| std::cmp::Reverse(x.1));
        eprintln!(
            "slowest zooming frames (index, time): {:?}",
            &ix[..ix.len().min(8)]
        );
    }
    report("zooming (new view/frame)", z);
    b.app.apply(Cmd::FitAll);
    // The inspector at five points of a camera topic and of a small one.
    let topics: Vec<usize> = {
        let s = b.app.doc.as_ref().expect("open").rec.bag.summary();
        ["/camera_0/image_raw", "/sensor_00/value"]
            .iter()
            .filter_map(|n| s.topics.iter().position(|t| t.name == *n))
            .collect()
    };
    let mut waits = Vec::new();
    let mut insp_frames = Vec::new();
    for &ti in &topics {
        for k in 1..=5u64 {
            b.app.apply(Cmd::SelectTopic(Some(ti)));
            b.app.apply(Cmd::SetPlayhead(a + (e - a) / 6 * k));
            let t = Instant::now();
            loop {
                insp_frames.push(b.frame());
                let d = b.app.doc.as_ref().expect("open");
                if d.insp.key.is_some()
                    && d.insp
                        .shown
                        .as_ref()
                        .is_some_and(|i| Some(i.key) == d.insp.key && i.decoded.is_ok())
                {
                    break;
                }
                assert!(
                    t.elapsed() < Duration::from_secs(60),
                    "inspector never showed it"
                );
                std::thread::sleep(Duration::from_millis(2));
            }
            waits.push(t.elapsed());
        }
    }
    waits.sort();
    println!(
        "inspector: {} points, decoded message shown after {:.1} ms median, {:.1} ms at most",
        waits.len(),
        waits
            .get(waits.len() / 2)
            .map_or(0.0, |d| d.as_secs_f64() * 1e3),
        waits.last().map_or(0.0, |d| d.as_secs_f64() * 1e3)
    );
    report("frames while inspecting", insp_frames);
    b.app.apply(Cmd::SelectTopic(topics.last().copied()));
    b.app.apply(Cmd::SetPlayhead(a + (e - a) / 3));
    b.app.apply(Cmd::TogglePlay);
    run(&mut b, 5);
    report("playing", run(&mut b, n));
    let (peak, now) = rss_kb();
    println!(
        "memory at the end: peak {:.2} GB, now {:.2} GB",
        peak as f64 / 1e6,
        now as f64 / 1e6
    );
}

/// Frames measured per case: 300 under `cargo bench`; 3 when the benchmark runs as a test
/// (`cargo test --benches`, no `--bench` argument: CI's short mode, which runs every case once
/// so that none can rot unseen, on a demo recording where no BAG is given).
fn frames() -> usize {
    if std::env::args().any(|a| a == "--bench") {
        300
    } else {
        3
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(i) = args.iter().position(|a| a == "--repeat") {
        let n = args
            .get(i + 1)
            .and_then(|v| v.parse().ok())
            .expect("--repeat N");
        let mut rest = args.clone();
        rest.drain(i..i + 2);
        repeat::repeat(n, &rest);
        return;
    }
    if let Some(i) = std::env::args().position(|a| a == "--scale") {
        let bag = std::env::args()
            .nth(i + 1)
            .map(PathBuf::from)
            .expect("--scale BAG");
        scale(bag);
        return;
    }
    if std::env::args().any(|a| a == "--robot-only") {
        scene::robot_only(frames());
        return;
    }
    if std::env::args().any(|a| a == "--scene-only") {
        scene::scene(frames());
        return;
    }
    if std::env::args().any(|a| a == "--script-only") {
        let bag = std::env::args()
            .skip(1)
            .find(|a| !a.starts_with('-'))
            .map_or_else(
                || PathBuf::from("bench-bags/many_small_lz4.bag"),
                PathBuf::from,
            );
        script::script(frames(), &bag);
        return;
    }
    if std::env::args().any(|a| a == "--map-only") {
        map::map(frames());
        return;
    }
    if std::env::args().any(|a| a == "--workbench-only") {
        workbench::workbench(frames());
        return;
    }
    if std::env::args().any(|a| a == "--overlay-only") {
        overlay::overlay(frames());
        return;
    }
    if std::env::args().any(|a| a == "--video-only") {
        video::video(frames());
        return;
    }
    if std::env::args().any(|a| a == "--camera-only") {
        camera(frames());
        two::two(frames());
        video::video(frames());
        return;
    }
    let short = frames() < 300;
    let given = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with('-'))
        .map(PathBuf::from);
    // The short mode's own recording, removed at the end.
    let demo = (short && given.is_none()).then(|| {
        let p = std::env::temp_dir().join(format!("bagscope-ui-short-{}.bag", std::process::id()));
        write_demo(&p, 20).expect("demo");
        p
    });
    let bag = given
        .or_else(|| demo.clone())
        .unwrap_or_else(|| PathBuf::from("bench-bags/many_small_lz4.bag"));
    if !bag.is_file() {
        eprintln!(
            "{} not found: make it with python3 ../shared/tools/gen_bench_bags.py bench-bags",
            bag.display()
        );
        std::process::exit(2);
    }
    let mut b = Bench {
        ctx: egui::Context::default(),
        app: App::new(None, Some(bag.clone())),
        t: 0.0,
    };
    // While indexing: every frame from the open until the tables are published.
    let mut indexing = Vec::new();
    let t0 = Instant::now();
    loop {
        let el = b.frame();
        let d = b.app.doc.as_ref();
        if d.is_some_and(|d| d.rec.indexing()) {
            indexing.push(el);
        }
        if d.is_some_and(|d| d.rec.indexed.is_some()) {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(300),
            "indexing did not finish"
        );
        // A 60 Hz display: the indexer runs between frames.
        std::thread::sleep(Duration::from_millis(2));
    }
    println!(
        "bag {} indexed in {:.2} s while drawing",
        bag.display(),
        t0.elapsed().as_secs_f64()
    );
    if std::env::var_os("UI_FRAME_DEBUG").is_some() {
        let mut ix: Vec<(usize, Duration)> = indexing.iter().copied().enumerate().collect();
        ix.sort_by_key(|x| std::cmp::Reverse(x.1));
        eprintln!(
            "slowest indexing frames (index, time): {:?}",
            &ix[..ix.len().min(5)]
        );
    }
    report("indexing", indexing);
    let n = frames();
    if std::env::args().any(|a| a == "--derived-only") {
        derived(&mut b, n);
        return;
    }
    let run = |b: &mut Bench, n: usize| (0..n).map(|_| b.frame()).collect::<Vec<_>>();
    b.app.apply(Cmd::FitAll);
    run(&mut b, 5);
    report("zoomed out", run(&mut b, n));
    let (a, e) = b.app.doc.as_ref().map(|d| d.rec.range()).unwrap_or((0, 1));
    let mid = (e - a) as f64 / 2.0;
    b.app.apply(Cmd::SetView(mid, mid + 1e9));
    run(&mut b, 5);
    report("zoomed in to 1 s", run(&mut b, n));
    // Zooming: a new view (and fresh densities for every row) every frame.
    report("zooming (new view/frame)", zooming(&mut b, n));
    // Playing at 1×, a topic selected so the inspector follows.
    b.app.apply(Cmd::FitAll);
    b.app.apply(Cmd::SelectTopic(Some(0)));
    b.app.apply(Cmd::SetPlayhead(a + (e - a) / 3));
    b.app.apply(Cmd::TogglePlay);
    run(&mut b, 5);
    report("playing", run(&mut b, n));
    b.app.apply(Cmd::TogglePlay);

    // Three series of 1,000,000 points each in the plot panel.
    let dur = (e - a) as f64 / 1e9;
    if let Some(d) = b.app.doc.as_mut() {
        for k in 0..3 {
            let pts: Vec<egui_plot::PlotPoint> = (0..1_000_000)
                .map(|i: i32| {
                    let x = dur * i as f64 / 1e6;
                    // Wrapping as the release build always computed it (an i32 past 2^31).
                    let jitter = i.wrapping_mul(7919).wrapping_add(k) % 101;
                    let y = (x * (0.5 + k as f64)).sin() + jitter as f64 * 0.002;
                    egui_plot::PlotPoint::new(x, y)
                })
                .collect();
            bagscope_app::plot::add_points(d, &format!("series {k}"), pts);
        }
    }
    b.app.apply(Cmd::FitAll);
    run(&mut b, 5);
    let f = run(&mut b, n);
    let d = b.app.doc.as_ref().expect("open");
    let r = d.plots.rects.first().copied().expect("a plot is drawn");
    assert!(
        r.height() >= 60.0 && r.width() >= 300.0,
        "plot drawn at {r:?}"
    );
    assert!(d.plots.series.iter().all(|s| s.points.len() == 1_000_000));
    report("3×1M points, zoomed out", f);
    report("3×1M points, zooming", zooming(&mut b, n));
    b.app.apply(Cmd::TogglePlay);
    run(&mut b, 5);
    report("3×1M points, playing", run(&mut b, n));
    b.app.apply(Cmd::TogglePlay);
    derived(&mut b, n);

    drop(b);
    script::script(n, &bag);
    if let Some(p) = demo {
        let _ = std::fs::remove_file(p);
    }
    wide(n);
    camera(n);
    overlay::overlay(n);
    video::video(n);
    two::two(n);
    scene::scene(n);
    workbench::workbench(n);
    map::map(n);
}

/// Three derived series, each a formula of five topics with a modifier (about 950,000 points
/// each on the benchmark bag): the frames while their workers read them, then drawn.
fn derived(b: &mut Bench, n: usize) {
    let has = |b: &Bench, t: &str| {
        b.app
            .doc
            .as_ref()
            .is_some_and(|d| d.rec.bag.summary().topic(t).is_some())
    };
    let five = |kind: &str, first: usize, field: &str, sep: &str| {
        (0..5)
            .map(|j| format!("/sensors/{kind}_{:02}.{field}", first + 10 * j))
            .collect::<Vec<_>>()
            .join(sep)
    };
    let exprs: Vec<String> = if has(b, "/sensors/value_09") {
        vec![
            format!(
                "hypot({}).@derivative.@movavg(0.5s)",
                five("value", 9, "data", ", ")
            ),
            format!("max({}).@lowpass(5hz)", five("point", 4, "point.x", ", ")),
            format!("({}).@integral", five("point", 4, "point.y", " + ")),
        ]
    } else {
        vec![
            "/imu/data.angular_velocity.z.@derivative.@movavg(0.5s)".into(),
            "/imu/data.orientation.yaw_deg".into(),
            "hypot(/imu/data.linear_acceleration.x, /imu/data.linear_acceleration.y)".into(),
        ]
    };
    if let Some(d) = b.app.doc.as_mut() {
        d.plots.series.clear();
    }
    for e in &exprs {
        b.app.apply(Cmd::AddSeries(e.clone()));
    }
    let t0 = Instant::now();
    let mut reading = Vec::new();
    loop {
        reading.push(b.frame());
        let d = b.app.doc.as_ref().expect("open");
        assert!(d.plots.error.is_none(), "{:?}", d.plots.error);
        if d.plots.series.len() == 3 && d.plots.series.iter().all(|s| s.done) {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(300),
            "the series did not finish"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    let d = b.app.doc.as_ref().expect("open");
    let points: Vec<usize> = d.plots.series.iter().map(|s| s.points.len()).collect();
    assert!(points.iter().all(|&p| p > 0), "{points:?}");
    println!(
        "3 derived series ({} points) read in {:.2} s while drawing",
        points
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(" + "),
        t0.elapsed().as_secs_f64()
    );
    report("3 derived series, reading", reading);
    b.app.apply(Cmd::FitAll);
    (0..5).for_each(|_| {
        b.frame();
    });
    report(
        "3 derived series, zoomed out",
        (0..n).map(|_| b.frame()).collect(),
    );
    report("3 derived series, zooming", zooming(b, n));
}

/// A test picture of `w` × `h`: gradients, a moving disc and noise, so jpeg sizes are those
/// of a real camera (not of a flat image).
fn picture(w: u32, h: u32, k: u32) -> Vec<u8> {
    let mut v = Vec::with_capacity((w * h * 3) as usize);
    let (cx, cy) = (
        (w as f32) * (0.2 + 0.6 * ((k as f32) * 0.1).sin().abs()),
        h as f32 / 2.0,
    );
    let mut seed = 0x9E37_79B9u32.wrapping_add(k);
    for y in 0..h {
        for x in 0..w {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            let n = (seed & 15) as u8;
            let d = ((x as f32 - cx).powi(2) + (y as f32 - cy).powi(2)).sqrt();
            let inside = d < h as f32 * 0.2;
            let r = if inside { 230 } else { (x * 255 / w) as u8 };
            let g = if inside { 120 } else { (y * 255 / h) as u8 };
            let b = ((x + y + k * 8) % 256) as u8;
            v.extend_from_slice(&[r.saturating_add(n), g.saturating_add(n), b]);
        }
    }
    v
}

/// Decode time per frame size, then the app playing a 1920×1080 jpeg topic at 30 Hz with an
/// image panel open (20 s, 600 frames written here with bagscope's writer).
fn camera(n: usize) {
    use bagscope_reader::storage::ros1::writer::ConnectionSpec;
    for (w, h) in [(640u32, 480u32), (1280, 720), (1920, 1080)] {
        let jpeg =
            bagscope_ops::media::image::encode_jpeg(w, h, &picture(w, h, 1), 85).expect("jpeg");
        let rgb = picture(w, h, 2);
        let runs = 20;
        let t0 = Instant::now();
        for _ in 0..runs {
            let img = bagscope_ops::media::image::decode_compressed("jpeg", &jpeg).expect("decode");
            std::hint::black_box(&img);
        }
        let dj = t0.elapsed().as_secs_f64() * 1e3 / runs as f64;
        let t0 = Instant::now();
        for _ in 0..runs {
            let img =
                bagscope_ops::media::image::decode_raw("rgb8", w, h, u64::from(w) * 3, false, &rgb)
                    .expect("decode");
            let out = img.render(
                bagscope_ops::media::image::Colormap::Grey,
                (0.0, 1.0),
                Default::default(),
            );
            std::hint::black_box(&out);
        }
        let dr = t0.elapsed().as_secs_f64() * 1e3 / runs as f64;
        println!(
            "image decode {w}×{h}: jpeg ({} KB) {dj:.2} ms, raw rgb8 decode+draw {dr:.2} ms",
            jpeg.len() / 1024
        );
    }
    let (dir, path, mut w) = bench_bag("camera", bagscope_reader::Compression::None);
    let def = "Header header\nstring format\nuint8[] data\n================================================================================\nMSG: std_msgs/Header\nuint32 seq\ntime stamp\nstring frame_id\n";
    let c = w.add_connection(ConnectionSpec {
        topic: "/camera/image/compressed".into(),
        datatype: "sensor_msgs/CompressedImage".into(),
        md5sum: "8f7a12909da2c9d3332d540a0977563f".into(),
        message_definition: def.into(),
        ..Default::default()
    });
    // 30 distinct frames, repeated: the panel decodes every message it shows all the same (the
    // short mode makes 3: each is drawn and encoded unoptimised there).
    let distinct = if n < 300 { 3 } else { 30 };
    let frames: Vec<Vec<u8>> = (0..distinct)
        .map(|k| {
            bagscope_ops::media::image::encode_jpeg(1920, 1080, &picture(1920, 1080, k), 85)
                .expect("jpeg")
        })
        .collect();
    let start = 1_700_000_000_000_000_000u64;
    for k in 0..600u64 {
        let t = start + k * 33_333_333;
        let mut m = Vec::new();
        m.extend_from_slice(&(k as u32).to_le_bytes());
        m.extend_from_slice(&((t / 1_000_000_000) as u32).to_le_bytes());
        m.extend_from_slice(&((t % 1_000_000_000) as u32).to_le_bytes());
        m.extend_from_slice(&3u32.to_le_bytes());
        m.extend_from_slice(b"cam");
        m.extend_from_slice(&4u32.to_le_bytes());
        m.extend_from_slice(b"jpeg");
        let f = &frames[k as usize % frames.len()];
        m.extend_from_slice(&(f.len() as u32).to_le_bytes());
        m.extend_from_slice(f);
        w.write(c, t, &m).expect("write");
    }
    w.finish().expect("finish");
    let mut b = Bench::indexed(&path);
    b.app.apply(Cmd::OpenImage(0));
    b.app.apply(Cmd::FitAll);
    // The first frame is shown before playing starts (a slow machine, or the short mode's
    // unoptimised build, takes longer than a few display frames to decode a 1080p jpeg).
    b.until_shown();
    b.app.apply(Cmd::TogglePlay);
    let f = b.at_60hz(n);
    let d = b.app.doc.as_ref().expect("open");
    let p = &d.images.panels[0];
    let shown = p.frame.as_ref().map(|f| (f.image.width, f.image.height));
    assert_eq!(shown, Some((1920, 1080)), "the panel shows the camera");
    let ms = p.frame.as_ref().and_then(|f| f.decode_ms).unwrap_or(0.0);
    report("image panel, 1080p jpeg playing", f);
    println!("  (last frame read and decoded on the worker in {ms:.1} ms)");
    drop(b);
    let _ = std::fs::remove_dir_all(&dir);
}

/// 200 topics in 20 namespaces, 5,000 Float64 messages each: the timeline draws only the rows
/// on screen and the tree stays cheap.
fn wide(n: usize) {
    use bagscope_reader::storage::ros1::writer::ConnectionSpec;
    let (dir, path, mut w) = bench_bag("wide", bagscope_reader::Compression::Lz4);
    let conns: Vec<u32> = (0..200)
        .map(|i| {
            w.add_connection(ConnectionSpec {
                topic: format!("/group_{:02}/signal_{:03}", i / 10, i),
                datatype: "std_msgs/Float64".into(),
                md5sum: "fdb28210bfa9d7c91146260178d9a584".into(),
                message_definition: "float64 data\n".into(),
                ..Default::default()
            })
        })
        .collect();
    let start = 1_700_000_000_000_000_000u64;
    for k in 0..5_000u64 {
        for (i, &c) in conns.iter().enumerate() {
            let t = start + k * 20_000_000 + i as u64 * 50_000;
            w.write(c, t, &((k as f64) * 0.01).sin().to_le_bytes())
                .expect("write");
        }
    }
    w.finish().expect("finish");
    let mut b = Bench::indexed(&path);
    let topics = b
        .app
        .doc
        .as_ref()
        .map_or(0, |d| d.rec.bag.summary().topics.len());
    assert_eq!(topics, 200);
    let run = |b: &mut Bench, n: usize| (0..n).map(|_| b.frame()).collect::<Vec<_>>();
    b.app.apply(Cmd::FitAll);
    run(&mut b, 5);
    report("200 topics, zoomed out", run(&mut b, n));
    report("200 topics, zooming", zooming(&mut b, n));
    b.app.apply(Cmd::FitAll);
    b.app.apply(Cmd::SelectTopic(Some(150)));
    b.app.apply(Cmd::TogglePlay);
    run(&mut b, 5);
    report("200 topics, playing", run(&mut b, n));
    drop(b);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A ROS 1 bag `name` being written in a temporary directory of its own (removed by the
/// caller), with `compression`.
pub(crate) fn bench_bag(
    name: &str,
    compression: bagscope_reader::Compression,
) -> (
    PathBuf,
    PathBuf,
    bagscope_reader::storage::ros1::writer::BagWriter,
) {
    use bagscope_reader::storage::ros1::writer::{BagWriter, WriteOptions};
    let dir = std::env::temp_dir().join(format!("bagscope-ui-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join(format!("{name}.bag"));
    let w = BagWriter::create(
        &path,
        WriteOptions {
            compression,
            ..Default::default()
        },
    )
    .expect("create");
    (dir, path, w)
}
