//! Playing a recording onto a live system: each message published at its recorded time (scaled
//! by the rate) through the transport's publication for its topic, in time order; pause, step
//! and rate changes; `/clock`; looping. The transport is anything that implements [`Sink`].

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::{Error, Result};
use bagscope_reader::bag::{Bag, Filter};
use bagscope_reader::encoding::to_ros1::ToRos1;
use bagscope_reader::encoding::to_ros2::ToRos2;
use bagscope_reader::storage::{Bytes, Connection};

/// Where one topic's messages go.
pub trait Sink: Send + Sync {
    /// Sends one message (waiting while a subscriber's queue is full).
    fn publish(&self, data: &Bytes);
    /// Subscribers connected now.
    fn subscribers(&self) -> usize;
    /// Waits until what was published has been written out, at most `timeout`.
    fn drain(&self, timeout: Duration);
    /// How long to wait, once every subscriber is matched here, before the first message, so
    /// the subscribers have matched this publisher too (none for a transport where a match is
    /// one connection).
    fn settle(&self) -> Duration {
        Duration::ZERO
    }
}

impl Sink for super::ros1::Publication {
    fn publish(&self, data: &Bytes) {
        super::ros1::Publication::publish(self, data);
    }
    fn subscribers(&self) -> usize {
        super::ros1::Publication::subscribers(self)
    }
    fn drain(&self, timeout: Duration) {
        super::ros1::Publication::drain(self, timeout);
    }
}

/// How a connection's messages are sent.
#[derive(Clone)]
pub struct Route {
    /// The topic as published (after remapping).
    pub topic: String,
    /// Its publication.
    pub sink: Arc<dyn Sink>,
    /// The conversion applied to each message first, if any.
    pub convert: Option<Convert>,
}

/// A conversion of each message on its way to another ROS.
#[derive(Clone)]
pub enum Convert {
    /// ROS 2 (CDR) to ROS 1.
    ToRos1(Arc<ToRos1>),
    /// ROS 1 to ROS 2 (CDR).
    ToRos2(Arc<ToRos2>),
}

impl Convert {
    /// `data` converted; None when it does not convert.
    pub fn apply(&self, data: &[u8]) -> Option<Vec<u8>> {
        match self {
            Convert::ToRos1(c) => c.convert(data).ok(),
            Convert::ToRos2(c) => c.convert(data).ok(),
        }
    }
}

/// What to play and how.
#[derive(Debug, Clone)]
pub struct PlayOptions {
    /// Start of the window (ns, inclusive).
    pub start_ns: Option<u64>,
    /// End of the window (ns, exclusive).
    pub end_ns: Option<u64>,
    /// Speed: 1 is as recorded, 2 twice as fast.
    pub rate: f64,
    /// Start again from the window's start when it ends.
    pub looped: bool,
    /// Publish the recording's time on `/clock` this many times a second.
    pub clock_hz: Option<f64>,
    /// Wait this long after advertising before the first message.
    pub delay: Duration,
    /// Hold the first message until every topic has a subscriber.
    pub wait_for_subscribers: bool,
    /// Start paused (a terminal's space bar, or [`Control::TogglePause`], resumes).
    pub paused: bool,
}

impl Default for PlayOptions {
    fn default() -> Self {
        PlayOptions {
            start_ns: None,
            end_ns: None,
            rate: 1.0,
            looped: false,
            clock_hz: None,
            delay: Duration::ZERO,
            wait_for_subscribers: false,
            paused: false,
        }
    }
}

/// What a controller (a terminal's keys, the app) asks of a playing recording.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    /// Pause or resume.
    TogglePause,
    /// While paused: publish the next message now.
    Step,
    /// Rate × 1.1.
    Faster,
    /// Rate ÷ 1.1.
    Slower,
    /// Stop.
    Quit,
}

/// What happened while playing, for a status line.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// Waiting for subscribers of these topics.
    Waiting(Vec<String>),
    /// The message at this recording time was published; the rate and whether paused.
    At {
        /// Recording time (ns).
        time_ns: u64,
        /// Playback rate.
        rate: f64,
        /// Paused now.
        paused: bool,
    },
    /// The window starts again (`--loop`).
    Looped,
}

/// Lateness of each message against its schedule, in 10 µs buckets up to one second (bounded
/// however long the playback).
#[derive(Debug, Clone)]
pub struct Lateness {
    buckets: Vec<u64>,
    over: u64,
    max_ns: u64,
    count: u64,
}

impl Default for Lateness {
    fn default() -> Self {
        Lateness {
            buckets: vec![0; 100_000],
            over: 0,
            max_ns: 0,
            count: 0,
        }
    }
}

impl Lateness {
    fn add(&mut self, ns: u64) {
        self.count += 1;
        self.max_ns = self.max_ns.max(ns);
        match self.buckets.get_mut((ns / 10_000) as usize) {
            Some(b) => *b += 1,
            None => self.over += 1,
        }
    }

    /// Messages counted.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The largest lateness (ns).
    pub fn max_ns(&self) -> u64 {
        self.max_ns
    }

    /// The `q` quantile (0..=1), to 10 µs (the bucket's upper end).
    pub fn quantile_ns(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let want = ((self.count as f64) * q).ceil().max(1.0) as u64;
        let mut seen = 0;
        for (i, b) in self.buckets.iter().enumerate() {
            seen += b;
            if seen >= want {
                return (i as u64 + 1) * 10_000;
            }
        }
        self.max_ns
    }
}

/// What a playback did.
#[derive(Debug, Clone, Default)]
pub struct PlayReport {
    /// Messages published.
    pub published: u64,
    /// Messages left out because they did not convert.
    pub unconverted: u64,
    /// Times the window started again.
    pub loops: u32,
    /// Lateness against the schedule (messages published while paused or stepping excluded).
    pub lateness: Lateness,
    /// Stopped by a controller or the caller before the end.
    pub stopped: bool,
}

/// The ROS 1 `rosgraph_msgs/Clock` of `t`.
pub fn clock_message(t: u64) -> Bytes {
    let mut b = Vec::with_capacity(8);
    b.extend_from_slice(&((t / 1_000_000_000) as u32).to_le_bytes());
    b.extend_from_slice(&((t % 1_000_000_000) as u32).to_le_bytes());
    Bytes::from_vec(b)
}

/// Where the schedule stands: recording time `bag` was due at wall time `wall`.
struct Anchor {
    wall: Instant,
    bag: u64,
    rate: f64,
}

impl Anchor {
    fn due(&self, t: u64) -> Instant {
        let d = t.saturating_sub(self.bag) as f64 / self.rate;
        self.wall + Duration::from_nanos(d.min(1e18) as u64)
    }

    fn bag_at(&self, now: Instant) -> u64 {
        let d = now.saturating_duration_since(self.wall).as_nanos() as f64 * self.rate;
        self.bag.saturating_add(d as u64)
    }
}

/// Plays `bag`'s messages of the connections that have a route (`routes[conn]`), in time
/// order, until the end (or forever with `looped`), `stop` or [`Control::Quit`].
/// `clock` is where `/clock` goes when `opts.clock_hz` is set.
pub fn play(
    bag: &Bag,
    routes: &[Option<Route>],
    clock: Option<Arc<dyn Sink>>,
    opts: &PlayOptions,
    controls: Option<&Receiver<Control>>,
    stop: &AtomicBool,
    on_event: &mut dyn FnMut(&Event),
) -> Result<PlayReport> {
    if !(opts.rate.is_finite() && opts.rate > 0.0) {
        return Err(Error::Invalid(format!(
            "the rate must be a positive number, not {}",
            opts.rate
        )));
    }
    let connections: Vec<usize> = (0..routes.len()).filter(|&c| routes[c].is_some()).collect();
    if connections.is_empty() {
        return Err(Error::Invalid("no topic to play".into()));
    }
    if opts.wait_for_subscribers {
        let mut said = false;
        loop {
            let waiting: Vec<String> = {
                let mut seen = std::collections::BTreeSet::new();
                routes
                    .iter()
                    .flatten()
                    .filter(|r| r.sink.subscribers() == 0)
                    .filter(|r| seen.insert(r.topic.clone()))
                    .map(|r| r.topic.clone())
                    .collect()
            };
            if waiting.is_empty() {
                break;
            }
            if !said {
                on_event(&Event::Waiting(waiting));
                said = true;
            }
            if stop.load(Ordering::Relaxed) {
                return Ok(PlayReport {
                    stopped: true,
                    ..Default::default()
                });
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        std::thread::sleep(settle(routes));
    }
    if !opts.delay.is_zero() {
        std::thread::sleep(opts.delay);
    }
    let filter = Filter {
        connections: Some(connections),
        start_ns: opts.start_ns,
        end_ns: opts.end_ns,
    };
    let clock_period = opts
        .clock_hz
        .filter(|h| h.is_finite() && *h > 0.0)
        .map(|h| Duration::from_secs_f64(1.0 / h));
    let budget = Budget::new(READ_AHEAD_BYTES);
    let (tx, rx) = mpsc::sync_channel::<Item>(READ_AHEAD_MESSAGES);
    std::thread::scope(|scope| -> Result<PlayReport> {
        let reader = std::thread::Builder::new()
            .name("bagscope-play-read".into())
            .spawn_scoped(scope, {
                let (budget, filter) = (&budget, &filter);
                move || read_ahead(bag, filter, routes, opts.looped, &tx, budget)
            })?;
        let r = schedule(
            &rx,
            &budget,
            routes,
            clock.as_ref(),
            clock_period,
            opts,
            controls,
            stop,
            on_event,
        );
        // The reader ends when the queue's receiver goes, waiting or not.
        budget.close();
        drop(rx);
        let _ = reader.join();
        r
    })
}

/// How far the reading thread runs ahead of the schedule: in messages, and in bytes (a few
/// seconds of 1080p camera frames).
const READ_AHEAD_MESSAGES: usize = 4096;
const READ_AHEAD_BYTES: u64 = 256 << 20;

/// What the reading thread hands the schedule.
enum Item {
    /// A message to publish (None: it did not convert).
    Msg {
        conn: usize,
        time_ns: u64,
        data: Option<Bytes>,
    },
    /// The window has been read through once.
    Pass,
    /// Reading failed.
    Failed(Error),
}

/// Bytes read ahead and not yet published, bounded.
struct Budget {
    used: std::sync::Mutex<(u64, bool)>,
    cv: std::sync::Condvar,
    limit: u64,
}

impl Budget {
    fn new(limit: u64) -> Budget {
        Budget {
            used: std::sync::Mutex::new((0, false)),
            cv: std::sync::Condvar::new(),
            limit,
        }
    }

    /// Takes `n` bytes, waiting while the budget is spent (one message larger than the whole
    /// budget goes alone); false once closed.
    fn take(&self, n: u64) -> bool {
        let mut g = self
            .used
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        while !g.1 && g.0 > 0 && g.0 + n > self.limit {
            g = self
                .cv
                .wait(g)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        g.0 += n;
        !g.1
    }

    fn give(&self, n: u64) {
        let mut g = self
            .used
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        g.0 = g.0.saturating_sub(n);
        self.cv.notify_all();
    }

    fn close(&self) {
        let mut g = self
            .used
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        g.1 = true;
        self.cv.notify_all();
    }
}

/// Reads the window (again and again with `looped`), converting where a route says, ahead of
/// the schedule: reading and decompression never delay a message's publication.
fn read_ahead(
    bag: &Bag,
    filter: &Filter,
    routes: &[Option<Route>],
    looped: bool,
    tx: &mpsc::SyncSender<Item>,
    budget: &Budget,
) {
    loop {
        let mut any = false;
        let it = match bag.messages(filter) {
            Ok(it) => it,
            Err(e) => {
                let _ = tx.send(Item::Failed(e.into()));
                return;
            }
        };
        for m in it {
            let m = match m {
                Ok(m) => m,
                Err(e) => {
                    let _ = tx.send(Item::Failed(e.into()));
                    return;
                }
            };
            let Some(route) = routes.get(m.conn).and_then(Option::as_ref) else {
                continue;
            };
            let data = match &route.convert {
                None => Some(m.data.detach()),
                Some(conv) => conv.apply(&m.data).map(Bytes::from_vec),
            };
            if !budget.take(data.as_ref().map_or(0, |d| d.len() as u64)) {
                return;
            }
            let item = Item::Msg {
                conn: m.conn,
                time_ns: m.time_ns,
                data,
            };
            if tx.send(item).is_err() {
                return;
            }
            any = true;
        }
        if tx.send(Item::Pass).is_err() || !looped || !any {
            return;
        }
    }
}

/// Publishes what the reading thread hands over, each message at its time.
#[allow(clippy::too_many_arguments)]
fn schedule(
    rx: &mpsc::Receiver<Item>,
    budget: &Budget,
    routes: &[Option<Route>],
    clock: Option<&Arc<dyn Sink>>,
    clock_period: Option<Duration>,
    opts: &PlayOptions,
    controls: Option<&Receiver<Control>>,
    stop: &AtomicBool,
    on_event: &mut dyn FnMut(&Event),
) -> Result<PlayReport> {
    let mut report = PlayReport::default();
    let mut paused = opts.paused;
    let mut rate = opts.rate;
    'outer: loop {
        let mut anchor: Option<Anchor> = None;
        let mut next_clock = Instant::now();
        loop {
            let (conn, time_ns, data) = match rx.recv() {
                Ok(Item::Msg {
                    conn,
                    time_ns,
                    data,
                }) => (conn, time_ns, data),
                Ok(Item::Pass) => break,
                Ok(Item::Failed(e)) => return Err(e),
                Err(_) => break 'outer,
            };
            let Some(route) = routes.get(conn).and_then(Option::as_ref) else {
                continue;
            };
            let a = anchor.get_or_insert_with(|| Anchor {
                wall: Instant::now(),
                bag: time_ns,
                rate,
            });
            // Wait for the message's time, answering controls and ticking the clock.
            let mut stepped = false;
            loop {
                if stop.load(Ordering::Relaxed) {
                    report.stopped = true;
                    break 'outer;
                }
                if let Some(rx) = controls {
                    while let Ok(c) = rx.try_recv() {
                        let now = Instant::now();
                        match c {
                            Control::Quit => {
                                report.stopped = true;
                                break 'outer;
                            }
                            Control::TogglePause => {
                                if paused {
                                    // Resume where the playhead stood.
                                    a.wall = now;
                                } else {
                                    a.bag = a.bag_at(now).min(time_ns);
                                    a.wall = now;
                                }
                                paused = !paused;
                            }
                            Control::Step if paused => {
                                // One message a step: later steps wait for later messages.
                                stepped = true;
                                break;
                            }
                            Control::Step => {}
                            Control::Faster | Control::Slower => {
                                if !paused {
                                    a.bag = a.bag_at(now).min(time_ns);
                                    a.wall = now;
                                }
                                rate = if c == Control::Faster {
                                    rate * 1.1
                                } else {
                                    rate / 1.1
                                };
                                a.rate = rate;
                            }
                        }
                        on_event(&Event::At {
                            time_ns: a.bag,
                            rate,
                            paused,
                        });
                    }
                }
                if stepped {
                    // The next message now; the schedule then stands at it.
                    a.bag = time_ns;
                    a.wall = Instant::now();
                    break;
                }
                let now = Instant::now();
                if paused {
                    std::thread::sleep(Duration::from_millis(5));
                    continue;
                }
                let due = a.due(time_ns);
                if let (Some(period), Some(c)) = (clock_period, &clock) {
                    if next_clock <= now {
                        // Never past the message not yet published (a late wake-up would
                        // put the clock ahead of it, or past the recording's end).
                        c.publish(&clock_message(a.bag_at(now).min(time_ns)));
                        next_clock = now + period;
                        continue;
                    }
                    if next_clock < due {
                        sleep_until(next_clock.min(now + Duration::from_millis(20)));
                        continue;
                    }
                }
                if now >= due {
                    if !stepped {
                        report
                            .lateness
                            .add(now.duration_since(due).as_nanos() as u64);
                    }
                    break;
                }
                // Short sleeps while waiting long, so controls are answered promptly.
                sleep_until(due.min(now + Duration::from_millis(20)));
            }
            let Some(data) = data else {
                report.unconverted += 1;
                continue;
            };
            if let (Some(_), Some(c)) = (clock_period, &clock) {
                // The clock never lags the messages it times.
                if stepped || paused {
                    c.publish(&clock_message(time_ns));
                }
            }
            route.sink.publish(&data);
            budget.give(data.len() as u64);
            report.published += 1;
            if report.published % 64 == 0 || paused {
                on_event(&Event::At {
                    time_ns,
                    rate,
                    paused,
                });
            }
        }
        if !opts.looped || report.published == 0 {
            break;
        }
        report.loops += 1;
        on_event(&Event::Looped);
    }
    // Every subscriber gets what was published before the publications go.
    for r in routes.iter().flatten() {
        r.sink.drain(Duration::from_secs(10));
    }
    // A DDS writer also answers what its subscribers ask again for a moment before it goes
    // (seen on a loaded machine: the last few messages otherwise missing).
    std::thread::sleep(settle(routes));
    Ok(report)
}

/// The longest settle of the routes' sinks ([`Sink::settle`]).
fn settle(routes: &[Option<Route>]) -> Duration {
    routes
        .iter()
        .flatten()
        .map(|r| r.sink.settle())
        .max()
        .unwrap_or_default()
}

fn sleep_until(t: Instant) {
    let now = Instant::now();
    if t > now {
        std::thread::sleep(t - now);
    }
}

/// Whether a recorded connection's publishers were latching: ROS 1's `latching=1`, or a
/// rosbag2 `transient_local` durability.
pub fn latching(c: &Connection) -> bool {
    c.latching || {
        let q = c.qos.to_ascii_lowercase();
        q.contains("transient_local") || q.contains("durability: 1")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lateness_quantiles_are_bucketed_and_bounded() {
        let mut l = Lateness::default();
        for us in 0..100u64 {
            l.add(us * 1000);
        }
        l.add(5_000_000_000);
        assert_eq!(l.count(), 101);
        // The 51st smallest, 50 µs, is in the bucket 50..60 µs.
        assert_eq!(l.quantile_ns(0.5), 60_000);
        assert_eq!(l.max_ns(), 5_000_000_000);
        assert_eq!(l.quantile_ns(1.0), 5_000_000_000);
    }

    #[test]
    fn the_schedule_scales_with_the_rate() {
        let wall = Instant::now();
        let a = Anchor {
            wall,
            bag: 1_000,
            rate: 2.0,
        };
        assert_eq!(a.due(1_000 + 2_000_000_000), wall + Duration::from_secs(1));
        assert_eq!(
            a.bag_at(wall + Duration::from_secs(1)),
            1_000 + 2_000_000_000
        );
    }
}
