//! Two demo runs on one timeline (the app's recordings side by side), the frames it takes.

use std::time::{Duration, Instant};

use bagscope_app::{App, Cmd};
use bagscope_ops::demo::write_demo;
use bagscope_reader::bag::merge::Part;
use bagscope_reader::Bag;

use super::{report, zooming, Bench};

/// Two demo runs (3 minutes each) on one timeline, aligned, with the front camera of each in
/// an image panel: zoomed out, zooming, and playing.
pub fn two(n: usize) {
    let dir = std::env::temp_dir().join(format!("bagscope-ui-two-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let (a, b) = (dir.join("run1.bag"), dir.join("run2.bag"));
    // Three minutes each (20 s in the short mode, where the demo is written unoptimised).
    let secs = if n < 300 { 20 } else { 180 };
    write_demo(&a, secs).expect("demo");
    write_demo(&b, secs).expect("demo");
    let parts = vec![
        Part {
            path: a,
            offset_ns: 0,
        },
        Part {
            path: b,
            offset_ns: 2_500_000_000,
        },
    ];
    let mut bench = Bench {
        ctx: egui::Context::default(),
        app: App::new(None, None),
        t: 0.0,
    };
    bench.app.apply(Cmd::OpenMany(parts));
    let t0 = Instant::now();
    bench.until_indexed();
    println!(
        "two recordings joined and indexed in {:.2} s",
        t0.elapsed().as_secs_f64()
    );
    for t in [
        "/run1/camera/front/image_raw",
        "/run2/camera/front/image_raw",
    ] {
        let ti = bench
            .app
            .doc
            .as_ref()
            .and_then(|d| d.rec.bag.summary().topics.iter().position(|x| x.name == t))
            .expect("the camera topics");
        bench.app.apply(Cmd::OpenImage(ti));
    }
    let run = |b: &mut Bench, n: usize| {
        (0..n)
            .map(|_| {
                let el = b.frame();
                std::thread::sleep(Duration::from_millis(4));
                el
            })
            .collect::<Vec<_>>()
    };
    bench.app.apply(Cmd::FitAll);
    run(&mut bench, 20);
    report("two recordings, zoomed out", run(&mut bench, n));
    report("two recordings, zooming", zooming(&mut bench, n));
    bench.app.apply(Cmd::FitAll);
    bench.app.apply(Cmd::TogglePlay);
    run(&mut bench, 5);
    report("two recordings, playing", run(&mut bench, n));
    let topics = bench
        .app
        .doc
        .as_ref()
        .map_or(0, |d| d.rec.bag.summary().topics.len());
    let one = Bag::open(dir.join("run1.bag")).map_or(0, |b| b.summary().topics.len());
    assert!(one > 0, "the demo run has topics");
    assert_eq!(
        topics,
        2 * one,
        "each run's topics, under its own namespace"
    );
    drop(bench);
    let _ = std::fs::remove_dir_all(&dir);
}
