//! The player's schedule, controls and looping, through a sink that notes when each message
//! arrives (no transport): the recorded spacing scaled by the rate, pause holds, step sends
//! one message, loop starts again, the clock ticks with the recording's time.
#![allow(clippy::unwrap_used)]

use std::sync::atomic::AtomicBool;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bagscope_live::play::{self, Control, PlayOptions, Route, Sink};
use bagscope_reader::{Bag, BagWriter, Bytes, ConnectionSpec, WriteOptions};

#[derive(Default)]
struct Noted(Mutex<Vec<(Instant, Vec<u8>)>>);

impl Sink for Noted {
    fn publish(&self, data: &Bytes) {
        self.0.lock().unwrap().push((Instant::now(), data.to_vec()));
    }
    fn subscribers(&self) -> usize {
        1
    }
    fn drain(&self, _: Duration) {}
}

/// Ten messages 100 ms apart, each its index as one byte.
fn bag(name: &str) -> Bag {
    let dir = std::env::temp_dir().join(format!("bagscope-play-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("ten.bag");
    let mut w = BagWriter::create(&path, WriteOptions::default()).unwrap();
    let c = w.add_connection(ConnectionSpec {
        topic: "/n".into(),
        datatype: "std_msgs/UInt8".into(),
        md5sum: "7c8164229e7d2c17eb95e9231617fdee".into(),
        message_definition: "uint8 data\n".into(),
        ..Default::default()
    });
    for i in 0..10u8 {
        w.write(c, 1_000_000_000_000 + u64::from(i) * 100_000_000, &[i])
            .unwrap();
    }
    w.finish().unwrap();
    Bag::open(&path).unwrap()
}

fn routes(sink: &Arc<Noted>) -> Vec<Option<Route>> {
    vec![Some(Route {
        topic: "/n".into(),
        sink: sink.clone(),
        convert: None,
    })]
}

#[test]
fn messages_keep_their_spacing_scaled_by_the_rate() {
    let b = bag("rate");
    let sink = Arc::new(Noted::default());
    let opts = PlayOptions {
        rate: 2.0,
        ..Default::default()
    };
    let r = play::play(
        &b,
        &routes(&sink),
        None,
        &opts,
        None,
        &AtomicBool::new(false),
        &mut |_| {},
    )
    .unwrap();
    assert_eq!(r.published, 10);
    let got = sink.0.lock().unwrap();
    let bytes: Vec<u8> = got.iter().map(|(_, d)| d[0]).collect();
    assert_eq!(bytes, (0..10).collect::<Vec<u8>>());
    // 900 ms recorded at rate 2: 450 ms.
    let span = got[9].0 - got[0].0;
    assert!(
        span >= Duration::from_millis(445) && span < Duration::from_millis(520),
        "{span:?}"
    );
    for w in got.windows(2) {
        let gap = w[1].0 - w[0].0;
        assert!(gap >= Duration::from_millis(45), "{gap:?}");
    }
    assert!(r.lateness.quantile_ns(0.99) < 20_000_000);
}

#[test]
fn pause_holds_step_sends_one_and_quit_stops() {
    let b = bag("pause");
    let sink = Arc::new(Noted::default());
    let (tx, rx) = mpsc::channel();
    let opts = PlayOptions {
        paused: true,
        ..Default::default()
    };
    let s2 = sink.clone();
    let t = std::thread::spawn(move || {
        let n = |s: &Noted| s.0.lock().unwrap().len();
        std::thread::sleep(Duration::from_millis(300));
        let held = n(&s2);
        tx.send(Control::Step).unwrap();
        tx.send(Control::Step).unwrap();
        std::thread::sleep(Duration::from_millis(300));
        let stepped = n(&s2);
        tx.send(Control::TogglePause).unwrap();
        std::thread::sleep(Duration::from_millis(250));
        let resumed = n(&s2);
        tx.send(Control::Quit).unwrap();
        (held, stepped, resumed)
    });
    let r = play::play(
        &b,
        &routes(&sink),
        None,
        &opts,
        Some(&rx),
        &AtomicBool::new(false),
        &mut |_| {},
    )
    .unwrap();
    let (held, stepped, resumed) = t.join().unwrap();
    assert_eq!(held, 0, "nothing is published while paused");
    assert_eq!(stepped, 2, "each step publishes one message");
    // Resumed at the third message: about 250 ms of 100 ms spacing.
    assert!((4..=6).contains(&resumed), "{resumed}");
    assert!(r.stopped && r.published < 10);
}

#[test]
fn loop_starts_again_and_the_clock_ticks_with_the_recording() {
    let b = bag("loop");
    let sink = Arc::new(Noted::default());
    let clock = Arc::new(Noted::default());
    let opts = PlayOptions {
        rate: 10.0,
        looped: true,
        clock_hz: Some(200.0),
        ..Default::default()
    };
    let stop = Arc::new(AtomicBool::new(false));
    let s2 = stop.clone();
    let t = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(250));
        s2.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    let clock_sink: Arc<dyn Sink> = clock.clone();
    let r = play::play(
        &b,
        &routes(&sink),
        Some(clock_sink),
        &opts,
        None,
        &stop,
        &mut |_| {},
    )
    .unwrap();
    t.join().unwrap();
    assert!(r.loops >= 1, "{r:?}");
    let bytes: Vec<u8> = sink.0.lock().unwrap().iter().map(|(_, d)| d[0]).collect();
    assert_eq!(&bytes[..12], &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0, 1]);
    // The clock's times stay within the recording and never go back within a pass.
    let ticks: Vec<u64> = clock
        .0
        .lock()
        .unwrap()
        .iter()
        .map(|(_, d)| {
            u64::from(u32::from_le_bytes(d[..4].try_into().unwrap())) * 1_000_000_000
                + u64::from(u32::from_le_bytes(d[4..].try_into().unwrap()))
        })
        .collect();
    assert!(ticks.len() > 10, "{}", ticks.len());
    assert!(ticks
        .iter()
        .all(|&t| (1_000_000_000_000..=1_000_900_000_000).contains(&t)));
}
