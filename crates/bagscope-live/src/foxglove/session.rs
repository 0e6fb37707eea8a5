//! One client: the handshake, then three threads: this one reads the client's messages, a
//! writer drains the client's bounded queue onto the socket, a player reads the recording on
//! the client's own clock and queues what the client subscribed to.

use std::collections::{HashMap, VecDeque};
use std::io::{BufReader, BufWriter, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use bagscope_reader::bag::Filter;
use bagscope_reader::storage::Bytes;

use super::protocol::{
    self, Channel, ClientMessage, Level, PlaybackRequest, PlaybackState, Status,
};
use super::relay::{self, Hub};
use super::ws::{self, Incoming, Opcode, WsError};
use super::Shared;

/// How long after a client's last subscription playback starts by itself: clients subscribe
/// channel by channel, in a burst of messages (Foxglove's client library sends one message a
/// channel, 649 for a recording of 649 topics), and a burst is over once the client has been
/// quiet this long. Counted from the first subscription, a busy machine that spread the burst
/// over more than this started playback with channels not yet subscribed, whose first messages
/// were then never sent.
const SETTLE: Duration = Duration::from_millis(100);
/// The longest a burst of subscriptions holds playback back: a client that keeps subscribing
/// still gets its playback started.
const SETTLE_AT_MOST: Duration = Duration::from_secs(2);
/// A `time` message at most once per this much wall time (100 a second: the client's clock
/// moves smoothly, and at a high speed the time messages do not outnumber the messages).
const TIME_EVERY: Duration = Duration::from_millis(10);
/// Frames the server itself must send (answers, pongs) queued at most; a client that sends
/// more requests than it reads answers is closed.
const MAX_CONTROL_FRAMES: usize = 4096;

/// A frame waiting to be written.
enum Frame {
    Text(String),
    /// A binary frame: a small head and the message's bytes.
    Binary(Vec<u8>, Option<Bytes>),
    Pong(Vec<u8>),
    Close(u16, String),
}

impl Frame {
    fn len(&self) -> usize {
        match self {
            Frame::Text(s) => s.len(),
            Frame::Binary(h, b) => h.len() + b.as_ref().map_or(0, |b| b.len()),
            Frame::Pong(p) => p.len(),
            Frame::Close(_, r) => r.len() + 2,
        }
    }
}

/// What waits for the writer: control frames (never dropped, bounded in number) before data
/// (dropped past the byte budget).
#[derive(Default)]
struct Queue {
    control: VecDeque<Frame>,
    data: VecDeque<Frame>,
    data_bytes: usize,
    dropped: u64,
    closed: bool,
}

/// A client's playback and subscriptions, shared by its three threads.
struct Control {
    /// The channels advertised to this client (a live graph's grow as publishers appear).
    channels: Vec<Channel>,
    /// Subscription id → channel index.
    subs: HashMap<u32, usize>,
    /// Channel index → subscription id.
    by_channel: Vec<Option<u32>>,
    status: Status,
    speed: f64,
    /// A seek asked for and not yet done by the player.
    seek: Option<u64>,
    /// Where playback stands when not playing; the anchor's time while playing.
    position: u64,
    /// Recording time `bag` was due at wall time `wall` (while playing).
    anchor: Option<(Instant, u64)>,
    /// The client sent a playback control request (it is then sent `playbackState`).
    asked: bool,
    /// When playback starts by itself (moved on by every subscription before it starts).
    autoplay: Option<Instant>,
    /// When the client first subscribed.
    first_subscription: Option<Instant>,
    closed: bool,
}

impl Control {
    fn playhead(&self, end: u64) -> u64 {
        match (self.status, self.anchor) {
            (Status::Playing, Some((wall, bag))) => {
                let d = wall.elapsed().as_nanos() as f64 * self.speed;
                bag.saturating_add(d.min(1e18) as u64).min(end.max(bag))
            }
            _ => self.position,
        }
    }
}

struct Session<'a> {
    shared: &'a Shared,
    queue: Mutex<Queue>,
    wake_writer: Condvar,
    ctl: Mutex<Control>,
    wake_player: Condvar,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Session<'_> {
    /// Queues a frame the server must send; false once the session is closed or the client
    /// does not read them.
    fn control(&self, f: Frame) -> bool {
        let mut q = lock(&self.queue);
        if q.closed || q.control.len() >= MAX_CONTROL_FRAMES {
            return false;
        }
        q.control.push_back(f);
        self.wake_writer.notify_one();
        true
    }

    /// Queues a message, or drops it when the client's queue is over its budget.
    fn data(&self, f: Frame) {
        let _ = self.in_order(f, false);
    }

    /// Queues a frame behind the messages queued before it: a message (dropped past the
    /// budget), or a playback state (`keep`: never dropped, so that a client sees its messages
    /// and the states of its requests in the order they happened).
    /// False when the client must be closed (it sends requests and reads no answers).
    fn in_order(&self, f: Frame, keep: bool) -> bool {
        let mut q = lock(&self.queue);
        let n = f.len();
        if q.closed {
            return false;
        }
        let budget = self.shared.opts.queue_bytes;
        if keep && q.data_bytes > 2 * budget {
            return false;
        }
        if !keep && q.data_bytes > 0 && q.data_bytes + n > budget {
            q.dropped += 1;
            return true;
        }
        q.data_bytes += n;
        q.data.push_back(f);
        // The writer waits only on an empty queue: wake it only then.
        if q.data.len() == 1 && q.control.is_empty() {
            self.wake_writer.notify_one();
        }
        true
    }

    fn close(&self) {
        lock(&self.queue).closed = true;
        self.wake_writer.notify_all();
        lock(&self.ctl).closed = true;
        self.wake_player.notify_all();
    }

    fn status(&self, level: Level, message: &str) -> bool {
        self.control(Frame::Text(protocol::status(level, message)))
    }
}

/// Serves one client until it leaves, breaks the protocol, or the server stops.
pub(super) fn run(stream: TcpStream, shared: &Shared, full: bool, stopping: &AtomicBool) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let _ = stream.set_write_timeout(Some(Duration::from_secs(30)));
    let Ok(read_half) = stream.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(read_half);
    let mut w = &stream;
    let Some(subprotocol) = handshake(&mut reader, &mut w, full) else {
        return;
    };
    let _ = stream.set_read_timeout(None);
    let (channels, range) = (&shared.channels, shared.range);
    let sdk = subprotocol == protocol::SUBPROTOCOLS[0];
    let session = Session {
        shared,
        queue: Mutex::default(),
        wake_writer: Condvar::new(),
        ctl: Mutex::new(Control {
            channels: channels.clone(),
            subs: HashMap::new(),
            by_channel: vec![None; channels.len()],
            status: if shared.opts.paused {
                Status::Paused
            } else {
                Status::Buffering
            },
            speed: shared.opts.speed,
            seek: None,
            position: range.0,
            anchor: None,
            asked: false,
            autoplay: None,
            first_subscription: None,
            closed: false,
        }),
        wake_player: Condvar::new(),
    };
    // Playback control is offered to the SDK's subprotocol only (older clients do not know
    // the `playbackState` opcode), and for a recording only.
    let live = shared.live.as_deref();
    let caps: &[&str] = if sdk && live.is_none() {
        &["time", "playbackControl"]
    } else {
        &["time"]
    };
    session.control(Frame::Text(protocol::server_info(
        &shared.opts.name,
        caps,
        live.is_none().then_some(range),
    )));
    if live.is_none() {
        session.control(Frame::Text(protocol::advertise(channels)));
    }
    std::thread::scope(|scope| {
        let s = &session;
        scope.spawn(move || {
            write_loop(s, &stream);
            s.close();
            let _ = stream.shutdown(std::net::Shutdown::Both);
        });
        scope.spawn(move || match live {
            Some(hub) => relay_to(s, hub),
            None => play(s),
        });
        read_loop(
            s,
            &mut ws::Reader::new(reader, shared.opts.max_client_message),
            stopping,
        );
        // The writer sends what is queued (a close frame last) and then ends.
        lock(&s.queue).closed = true;
        s.wake_writer.notify_all();
        lock(&s.ctl).closed = true;
        s.wake_player.notify_all();
    });
}

/// The opening handshake; the subprotocol agreed, or None (refused, with an HTTP answer).
fn handshake(
    reader: &mut BufReader<TcpStream>,
    w: &mut impl Write,
    full: bool,
) -> Option<&'static str> {
    let req = match ws::read_request(reader) {
        Ok(r) => r,
        Err(e) => {
            let _ = w.write_all(ws::refusal("400 Bad Request", &e.to_string()).as_bytes());
            return None;
        }
    };
    let refuse = |w: &mut dyn Write, status: &str, why: &str| {
        let _ = w.write_all(ws::refusal(status, why).as_bytes());
        None
    };
    if !req.upgrade || req.key.is_empty() {
        return refuse(
            w,
            "426 Upgrade Required",
            "bagscope serve speaks the Foxglove WebSocket protocol: connect with a WebSocket client",
        );
    }
    if req.version != "13" {
        return refuse(w, "426 Upgrade Required", "WebSocket version 13 only");
    }
    let Some(p) = protocol::SUBPROTOCOLS
        .into_iter()
        .find(|p| req.protocols.iter().any(|o| o == p))
    else {
        return refuse(
            w,
            "400 Bad Request",
            "Missing expected sec-websocket-protocol header: foxglove.sdk.v1 or foxglove.websocket.v1",
        );
    };
    if full {
        return refuse(w, "503 Service Unavailable", "too many clients");
    }
    w.write_all(ws::switching(&req, p).as_bytes()).ok()?;
    Some(p)
}

/// Writes queued frames (control first) until the queue is closed and empty.
fn write_loop(s: &Session<'_>, stream: &TcpStream) {
    let mut out = BufWriter::with_capacity(256 << 10, stream);
    let mut last_report = Instant::now();
    loop {
        let (frame, empty) = {
            let mut q = lock(&s.queue);
            let f = match q.control.pop_front() {
                Some(f) => Some(f),
                None => q.data.pop_front().inspect(|f| q.data_bytes -= f.len()),
            };
            let closed = q.closed;
            let empty = q.control.is_empty() && q.data.is_empty();
            match f {
                Some(f) => (f, empty),
                None => {
                    // Nothing to write: flush outside the lock, then wait for more.
                    drop(q);
                    if out.flush().is_err() || closed {
                        return;
                    }
                    let q = lock(&s.queue);
                    if q.control.is_empty() && q.data.is_empty() && !q.closed {
                        let _ = s.wake_writer.wait_timeout(q, Duration::from_millis(500));
                    }
                    continue;
                }
            }
        };
        let closing = matches!(frame, Frame::Close(..));
        let r = match &frame {
            Frame::Text(t) => ws::write_frame(&mut out, Opcode::Text, &[t.as_bytes()]),
            Frame::Binary(h, b) => ws::write_frame(
                &mut out,
                Opcode::Binary,
                &[h, b.as_ref().map_or(&[][..], |b| &b[..])],
            ),
            Frame::Pong(p) => ws::write_frame(&mut out, Opcode::Pong, &[p]),
            Frame::Close(code, why) => {
                ws::write_frame(&mut out, Opcode::Close, &[&ws::close_payload(*code, why)])
            }
        };
        if r.is_err() || closing {
            let _ = out.flush();
            return;
        }
        if empty && out.flush().is_err() {
            return;
        }
        if last_report.elapsed() >= Duration::from_secs(1) {
            last_report = Instant::now();
            let dropped = std::mem::take(&mut lock(&s.queue).dropped);
            if dropped > 0 {
                s.status(
                    Level::Warning,
                    &format!(
                        "{dropped} messages dropped: this client reads slower than the recording \
                         plays (a lower speed, or fewer subscriptions, keeps up)"
                    ),
                );
            }
        }
    }
}

/// Reads the client's messages and acts on them until it closes or breaks the protocol.
fn read_loop(s: &Session<'_>, r: &mut ws::Reader<BufReader<TcpStream>>, stopping: &AtomicBool) {
    loop {
        if stopping.load(Ordering::Relaxed) {
            s.control(Frame::Close(1001, "the server stops".into()));
            return;
        }
        let ok = match r.read() {
            Ok(Incoming::Text(t)) => match protocol::parse_text(&t) {
                Ok(m) => on_message(s, m),
                Err(e) => s.status(Level::Error, &e),
            },
            Ok(Incoming::Binary(b)) => match protocol::parse_binary(&b) {
                Ok(m) => on_message(s, m),
                Err(e) => s.status(Level::Error, &e),
            },
            Ok(Incoming::Ping(p)) => s.control(Frame::Pong(p)),
            Ok(Incoming::Pong) => true,
            Ok(Incoming::Close(_)) => {
                s.control(Frame::Close(1000, String::new()));
                return;
            }
            Err(WsError::Protocol(code, why)) => {
                s.control(Frame::Close(code, why));
                return;
            }
            Err(WsError::Io(_)) => return,
        };
        if !ok {
            s.control(Frame::Close(1008, "too many requests left unread".into()));
            return;
        }
    }
}

/// Acts on one client message; false when the client must be closed.
fn on_message(s: &Session<'_>, m: ClientMessage) -> bool {
    match m {
        ClientMessage::Subscribe(subs) => {
            let mut problems = Vec::new();
            {
                let mut c = lock(&s.ctl);
                for (id, channel_id) in subs {
                    let Some(ch) = c.channels.iter().position(|c| c.id == channel_id) else {
                        problems.push(format!("subscribe: no channel {channel_id}"));
                        continue;
                    };
                    if c.subs.contains_key(&id) {
                        problems.push(format!("subscribe: subscription id {id} is in use"));
                    } else if c.by_channel[ch].is_some() {
                        problems.push(format!(
                            "subscribe: channel {channel_id} is subscribed already"
                        ));
                    } else {
                        c.subs.insert(id, ch);
                        c.by_channel[ch] = Some(id);
                        let now = Instant::now();
                        let first = *c.first_subscription.get_or_insert(now);
                        c.autoplay = Some((now + SETTLE).min(first + SETTLE_AT_MOST));
                    }
                }
            }
            s.wake_player.notify_all();
            problems.iter().all(|p| s.status(Level::Error, p))
        }
        ClientMessage::Unsubscribe(ids) => {
            let mut problems = Vec::new();
            {
                let mut c = lock(&s.ctl);
                for id in ids {
                    match c.subs.remove(&id) {
                        Some(ch) => c.by_channel[ch] = None,
                        None => problems.push(format!("unsubscribe: no subscription {id}")),
                    }
                }
            }
            problems.iter().all(|p| s.status(Level::Warning, p))
        }
        ClientMessage::Playback(_) if s.shared.live.is_some() => s.status(
            Level::Error,
            "playback control: this server relays a live graph",
        ),
        ClientMessage::Playback(req) => on_playback(s, &req),
        ClientMessage::Unsupported(op) => s.status(
            Level::Error,
            &format!("{op} is not supported: bagscope serve plays recordings"),
        ),
    }
}

/// A playback control request applied, and answered with the state it leads to.
fn on_playback(s: &Session<'_>, req: &PlaybackRequest) -> bool {
    let (start, end) = s.shared.range;
    let mut c = lock(&s.ctl);
    c.asked = true;
    let speed = f64::from(req.speed);
    let mut problem = None;
    if speed.is_finite() && speed > 0.0 {
        if c.status == Status::Playing {
            // The clock goes on from where it stands at the new speed.
            c.position = c.playhead(end);
            c.anchor = Some((Instant::now(), c.position));
        }
        c.speed = speed;
    } else {
        problem = Some(format!(
            "playback speed {} refused: a positive number",
            req.speed
        ));
    }
    if let Some(t) = req.seek {
        let t = t.clamp(start, end.max(start));
        c.seek = Some(t);
        c.position = t;
        c.anchor = None;
    }
    if req.play {
        if c.status == Status::Ended && c.seek.is_none() {
            c.seek = Some(start);
            c.position = start;
        }
        if c.status != Status::Playing {
            c.status = Status::Playing;
            c.anchor = None;
        }
    } else if c.status != Status::Ended || req.seek.is_some() {
        c.position = c.playhead(end);
        c.status = Status::Paused;
        c.anchor = None;
    }
    let state = PlaybackState {
        status: c.status,
        current_time: c.playhead(end),
        speed: c.speed as f32,
        did_seek: req.seek.is_some(),
        request_id: Some(req.request_id.clone()),
    };
    // Queued under the control lock, behind the messages sent before: nothing the player
    // queues after this answer is from before the request.
    let ok = s.in_order(Frame::Binary(state.encode(), None), true);
    drop(c);
    s.wake_player.notify_all();
    ok && problem.is_none_or(|p| s.status(Level::Error, &p))
}

/// Plays the recording on this client's clock until the session closes.
fn play(s: &Session<'_>) {
    let (start, end) = s.shared.range;
    let conns: Vec<usize> = (0..s.shared.channel_of.len())
        .filter(|&c| s.shared.channel_of[c].is_some())
        .collect();
    let mut from = start;
    'seek: loop {
        // Wait for playback to start (or a seek).
        {
            let mut c = lock(&s.ctl);
            loop {
                if c.closed {
                    return;
                }
                if let Some(t) = c.seek.take() {
                    from = t;
                }
                if c.status == Status::Buffering
                    && !c.asked
                    && c.autoplay.is_some_and(|t| Instant::now() >= t)
                {
                    c.status = Status::Playing;
                }
                if c.status == Status::Playing {
                    break;
                }
                let wait = c.autoplay.map_or(Duration::from_millis(200), |t| {
                    t.saturating_duration_since(Instant::now())
                        .max(Duration::from_millis(1))
                });
                c = s
                    .wake_player
                    .wait_timeout(c, wait.min(Duration::from_millis(200)))
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
            }
        }
        let filter = Filter {
            connections: Some(conns.clone()),
            start_ns: Some(from),
            end_ns: None,
        };
        let Some(bag) = &s.shared.bag else {
            return;
        };
        let it = match bag.messages(&filter) {
            Ok(it) => it,
            Err(e) => {
                s.status(Level::Error, &format!("reading the recording: {e}"));
                return;
            }
        };
        let mut last_time_sent: Option<(Instant, u64)> = None;
        for m in it {
            let m = match m {
                Ok(m) => m,
                Err(e) => {
                    s.status(Level::Error, &format!("reading the recording: {e}"));
                    break;
                }
            };
            let mut c = lock(&s.ctl);
            // Wait until the message is due, following pauses, seeks and speed changes.
            loop {
                if c.closed {
                    return;
                }
                if c.seek.is_some() {
                    continue 'seek;
                }
                if c.status != Status::Playing {
                    c = s
                        .wake_player
                        .wait_timeout(c, Duration::from_millis(200))
                        .unwrap_or_else(PoisonError::into_inner)
                        .0;
                    continue;
                }
                let at = c.position.min(m.time_ns);
                let (wall, bag) = *c.anchor.get_or_insert((Instant::now(), at));
                let late = m.time_ns.saturating_sub(bag) as f64 / c.speed;
                let due = wall + Duration::from_nanos(late.min(1e15) as u64);
                let now = Instant::now();
                if due <= now {
                    break;
                }
                c = s
                    .wake_player
                    .wait_timeout(c, (due - now).min(Duration::from_millis(100)))
                    .unwrap_or_else(PoisonError::into_inner)
                    .0;
            }
            if last_time_sent.is_none_or(|(w, t)| m.time_ns > t && w.elapsed() >= TIME_EVERY) {
                last_time_sent = Some((Instant::now(), m.time_ns));
                s.data(Frame::Binary(protocol::time(m.time_ns).to_vec(), None));
            }
            let sub = s
                .shared
                .channel_of
                .get(m.conn)
                .copied()
                .flatten()
                .and_then(|ch| c.by_channel[ch]);
            if let Some(sub) = sub {
                let head = protocol::message_data_header(sub, m.time_ns).to_vec();
                s.data(Frame::Binary(head, Some(m.data)));
            }
        }
        // The end.
        let mut c = lock(&s.ctl);
        if c.seek.is_some() {
            continue 'seek;
        }
        if s.shared.opts.looped && !c.closed {
            from = start;
            c.position = start;
            c.anchor = None;
            continue 'seek;
        }
        c.status = Status::Ended;
        c.position = end;
        c.anchor = None;
        if c.asked {
            let state = PlaybackState {
                status: Status::Ended,
                current_time: end,
                speed: c.speed as f32,
                did_seek: false,
                request_id: None,
            };
            let _ = s.in_order(Frame::Binary(state.encode(), None), true);
        }
    }
}

/// Relays a live graph's messages to this client: channels advertised as the hub finds them,
/// messages of the channels subscribed to as they arrive.
fn relay_to(s: &Session<'_>, hub: &Hub) {
    let feed = hub.register();
    let mut last_time: Option<Instant> = None;
    loop {
        if lock(&s.ctl).closed {
            return;
        }
        let event = match feed.recv_timeout(Duration::from_millis(200)) {
            Ok(e) => e,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => continue,
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return,
        };
        match event {
            relay::Event::Channel(i, c) => {
                let text = protocol::advertise(std::slice::from_ref(&c));
                let mut ctl = lock(&s.ctl);
                if ctl.channels.len() == i {
                    ctl.channels.push(c);
                    ctl.by_channel.push(None);
                }
                drop(ctl);
                if !s.control(Frame::Text(text)) {
                    return;
                }
            }
            relay::Event::Message(i, t, data) => {
                if last_time.is_none_or(|w| w.elapsed() >= TIME_EVERY) {
                    last_time = Some(Instant::now());
                    s.data(Frame::Binary(protocol::time(t).to_vec(), None));
                }
                let sub = lock(&s.ctl).by_channel.get(i).copied().flatten();
                if let Some(sub) = sub {
                    let head = protocol::message_data_header(sub, t).to_vec();
                    s.data(Frame::Binary(head, Some(data)));
                }
            }
        }
    }
}
