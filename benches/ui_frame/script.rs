//! A message script running while the app opens a recording (issue 65's figure): the UI
//! thread's frames while the loader makes the script's virtual topic (a
//! `visualization_msgs/MarkerArray`, a marker a message, from a 100 Hz `PointStamped` topic of
//! the benchmark bag, or the demo's `/odom` in the short mode), cold (the script's text made new,
//! so nothing is taken from the cache), and the time until the virtual topic is on the screen.

use std::path::Path;
use std::time::{Duration, Instant};

use bagscope_app::{App, Cmd, Scripts};

use super::{report, Bench};

pub fn script(n: usize, bag: &Path) {
    let input = if n < 300 {
        "/odom"
    } else {
        "/sensors/point_00"
    };
    let nonce = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let text = format!(
        "-- topic: /point_marker\n-- type: visualization_msgs/msg/MarkerArray\n-- input: {input}\n\
         -- ui_frame run {nonce}\n\
         function message(topic, msg, time)\n\
           local p = msg.point or msg.pose.pose.position\n\
           return {{ markers = {{ {{ header = msg.header, ns = 'p', id = 1, type = 2,\n\
             pose = {{ position = p, orientation = {{ w = 1 }} }},\n\
             scale = {{ x = 0.2, y = 0.2, z = 0.2 }}, color = {{ r = 1, a = 1 }} }} }} }}\n\
         end\n"
    );
    let script = bagscope_ops::script::message::read_file(&text).expect("the script");
    let mut app = App::new(None, None).with_scripts(Scripts {
        messages: vec![script],
        series: Vec::new(),
    });
    app.apply(Cmd::Open(bag.to_path_buf()));
    let mut b = Bench {
        ctx: egui::Context::default(),
        app,
        t: 0.0,
    };
    let t0 = Instant::now();
    let mut running = Vec::new();
    loop {
        running.push(b.frame());
        let shown = b.app.doc.as_ref().is_some_and(|d| {
            d.rec.indexed.is_some() && d.rec.bag.summary().topic("/point_marker").is_some()
        });
        if shown {
            break;
        }
        assert!(
            t0.elapsed() < Duration::from_secs(600),
            "the virtual topic did not come"
        );
        // A 60 Hz display: the worker runs between frames.
        std::thread::sleep(Duration::from_millis(2));
    }
    println!(
        "message script: {input} into /point_marker, on the screen after {:.2} s",
        t0.elapsed().as_secs_f64()
    );
    report("message script running", running);
    let run = |b: &mut Bench, n: usize| (0..n).map(|_| b.frame()).collect::<Vec<_>>();
    b.app.apply(Cmd::FitAll);
    run(&mut b, 5);
    report("virtual topic, zoomed out", run(&mut b, n));
}
