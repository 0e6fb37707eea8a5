//! The Publish window: a toggle per topic (every one off at first, so nothing reaches a live
//! robot by accident) that publishes onto a ROS 1 graph or a ROS 2 domain the messages the
//! playhead passes while playing, and the message at the playhead when stepping or seeking
//! while paused, as rqt_bag does. A worker owns the ROS node or DDS participant (registering,
//! discovery, reading and publishing are I/O): the UI hands it what the playhead did and shows
//! its status line (where it publishes, each topic's subscribers), never waiting for it.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

use super::job::{Handle, Requests, Service};
use super::{Cmd, Doc};
use bagscope_live::play::{latching, Convert, Sink};
use bagscope_live::ros1::{Node, NodeOptions, TopicSpec};
use bagscope_live::ros2::{Participant, ParticipantOptions, Qos};
use bagscope_reader::bag::{Bag, Filter};
use bagscope_reader::encoding::to_ros1::ToRos1;
use bagscope_reader::encoding::to_ros2::ToRos2;

/// Most messages one playhead move publishes (a jump while playing is not a flood).
const SPAN_LIMIT: usize = 10_000;

/// What the UI asks of the worker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Req {
    /// The topics (indexes into the summary's topics) whose toggle is on.
    Topics(Vec<usize>),
    /// The playhead moved forward while playing: the messages after the first time, up to and
    /// including the second.
    Span(u64, u64),
    /// The playhead was set while paused: each topic's message at or before it.
    At(u64),
}

/// The worker's status line.
#[derive(Debug, Clone, Default)]
pub struct Status {
    /// Where it publishes: the ROS 1 master and the node's name, or the ROS 2 domain.
    pub target: String,
    /// Why it cannot publish (the master does not answer, a topic does not convert).
    pub error: Option<String>,
    /// Per topic: subscribers now and messages published.
    pub topics: BTreeMap<usize, (usize, u64)>,
}

/// The Publish window's state.
#[derive(Default)]
pub struct PublishState {
    /// Shown.
    pub open: bool,
    /// The master as typed (empty: `ROS_MASTER_URI`, else localhost).
    pub master: String,
    /// Publish onto a ROS 2 domain rather than a ROS 1 master.
    pub ros2: bool,
    /// The ROS 2 domain as typed (empty: `ROS_DOMAIN_ID`, else 0).
    pub domain: String,
    /// Topics whose toggle is on.
    pub on: BTreeSet<usize>,
    /// The worker, once a toggle was turned on.
    service: Option<Service<Req, Status>>,
    /// Its last status.
    pub status: Option<Status>,
    /// The playhead the worker last heard of.
    last: Option<u64>,
    /// Serving the recording to Foxglove clients.
    pub serve: super::serve::ServeState,
}

impl PublishState {
    /// Whether anything is published.
    pub fn active(&self) -> bool {
        self.service.is_some() && !self.on.is_empty()
    }
}

/// Turns topic `ti`'s toggle on or off.
pub fn set(d: &mut Doc, ti: usize, on: bool, ctx: &egui::Context) {
    if on {
        d.publish.on.insert(ti);
    } else {
        d.publish.on.remove(&ti);
    }
    if d.publish.service.is_none() && on {
        let bag = d.rec.bag.clone();
        let target = if d.publish.ros2 {
            Target::Ros2(d.publish.domain.trim().to_string())
        } else {
            Target::Ros1(d.publish.master.trim().to_string())
        };
        match Service::spawn("publish", 256, 4, ctx, move |reqs, h| {
            serve(&bag, &target, &reqs, h);
        }) {
            Ok(s) => d.publish.service = Some(s),
            Err(e) => {
                d.publish.status = Some(Status {
                    error: Some(e),
                    ..Default::default()
                });
                return;
            }
        }
    }
    let topics: Vec<usize> = d.publish.on.iter().copied().collect();
    if let Some(s) = &mut d.publish.service {
        s.ask(Req::Topics(topics), |a, b| {
            matches!((a, b), (Req::Topics(_), Req::Topics(_)))
        });
    }
    // The message at the playhead goes out at once for a topic turned on while paused.
    d.publish.last = None;
}

/// Stops publishing: the node unregisters and the toggles go off.
pub fn disconnect(d: &mut Doc) {
    d.publish.service = None;
    d.publish.on.clear();
    d.publish.status = None;
    d.publish.last = None;
}

/// Called every frame after the playhead moved: hands the worker what it did, and takes the
/// worker's status.
pub fn update(d: &mut Doc) {
    let Some(s) = &mut d.publish.service else {
        return;
    };
    while let Some(st) = s.take() {
        d.publish.status = Some(st);
    }
    s.flush();
    let now = d.nav.playhead;
    if d.publish.on.is_empty() {
        d.publish.last = Some(now);
        return;
    }
    match d.publish.last {
        Some(t) if t == now => {}
        Some(t) if d.nav.playing && now > t => {
            // Spans are kept in order: never merged or dropped.
            s.ask(Req::Span(t, now), |_, _| false);
        }
        _ => s.ask(Req::At(now), |a, b| {
            matches!((a, b), (Req::At(_), Req::At(_)))
        }),
    }
    d.publish.last = Some(now);
}

/// Where the worker publishes: a ROS 1 master (as typed) or a ROS 2 domain (as typed).
pub(super) enum Target {
    Ros1(String),
    Ros2(String),
}

/// The worker's node or participant.
pub(super) enum Transport {
    Ros1(Node),
    Ros2(Participant),
}

/// One topic's publication, the conversion its messages need (to the other ROS), and how many
/// were sent.
struct Out {
    sink: Arc<dyn Sink>,
    convert: Option<Convert>,
    sent: u64,
}

/// Joins the ROS 1 graph or the ROS 2 domain; the status line's "where".
pub(super) fn connect(target: &Target) -> Result<(Transport, String), String> {
    match target {
        Target::Ros1(master) => {
            let opts = NodeOptions::from_env(
                "bagscope_app",
                Some(master.as_str()).filter(|m| !m.is_empty()),
            );
            let said = format!("the ROS 1 master at {} as {}", opts.master, opts.name);
            let node = Node::start(opts).map_err(|e| format!("{said}: {e}"))?;
            Ok((Transport::Ros1(node), said))
        }
        Target::Ros2(domain) => {
            let domain = match domain.as_str() {
                "" => None,
                d => Some(
                    d.parse::<u16>()
                        .map_err(|_| format!("the ROS 2 domain {d:?} is not a number"))?,
                ),
            };
            let opts = ParticipantOptions::from_env(domain).map_err(|e| e.to_string())?;
            let said = format!("ROS 2 {}", opts.describe());
            let p = Participant::new(opts).map_err(|e| format!("{said}: {e}"))?;
            Ok((Transport::Ros2(p), said))
        }
    }
}

/// The worker: a ROS 1 node or DDS participant publishing what the UI asks.
fn serve(bag: &Bag, target: &Target, reqs: &Requests<Req>, h: &Handle<Status>) {
    let mut status = Status::default();
    let transport = match connect(target) {
        Ok((t, said)) => {
            status.target = said;
            t
        }
        Err(e) => {
            status.error = Some(e);
            h.send(status);
            return;
        }
    };
    let s = bag.summary();
    // Each connection's topic, looked up once rather than per message.
    let mut topic_of = vec![usize::MAX; s.connections.len()];
    for (ti, t) in s.topics.iter().enumerate() {
        for &c in &t.connections {
            if let Some(x) = topic_of.get_mut(c) {
                *x = ti;
            }
        }
    }
    let mut outs: HashMap<usize, Out> = HashMap::new();
    let mut on: Vec<usize> = Vec::new();
    let mut errors: BTreeMap<usize, String> = BTreeMap::new();
    loop {
        match reqs.recv_timeout(Duration::from_millis(250)) {
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Ok(Req::Topics(t)) => {
                for &ti in &t {
                    if outs.contains_key(&ti) || errors.contains_key(&ti) {
                        continue;
                    }
                    match advertise(&transport, bag, ti) {
                        Ok(o) => {
                            outs.insert(ti, o);
                        }
                        Err(e) => {
                            errors.insert(ti, e);
                        }
                    }
                }
                on = t;
            }
            Ok(Req::Span(a, b)) => {
                let conns: Vec<usize> = on
                    .iter()
                    .filter(|ti| outs.contains_key(ti))
                    .flat_map(|&ti| s.topics[ti].connections.iter().copied())
                    .collect();
                if conns.is_empty() {
                    continue;
                }
                let f = Filter {
                    connections: Some(conns),
                    start_ns: Some(a.saturating_add(1)),
                    end_ns: Some(b.saturating_add(1)),
                };
                if let Ok(it) = bag.messages(&f) {
                    for m in it.take(SPAN_LIMIT).flatten() {
                        let ti = topic_of.get(m.conn).copied().unwrap_or(usize::MAX);
                        if let Some(o) = outs.get_mut(&ti) {
                            send(o, &m.data);
                        }
                    }
                }
            }
            Ok(Req::At(t)) => {
                let Ok(tables) = bag.tables() else { continue };
                for ti in &on {
                    let key = s.topics.get(*ti).and_then(|tp| tables.last_at(tp, t));
                    let Some(o) = outs.get_mut(ti) else { continue };
                    if let Some(m) = key.and_then(|(conn, entry)| bag.message(conn, entry).ok()) {
                        send(o, &m.data);
                    }
                }
            }
        }
        status.topics = on
            .iter()
            .filter_map(|ti| outs.get(ti).map(|o| (*ti, (o.sink.subscribers(), o.sent))))
            .collect();
        status.error = errors
            .iter()
            .find(|(ti, _)| on.contains(ti))
            .map(|(_, e)| e.clone());
        h.offer(status.clone());
    }
}

fn send(o: &mut Out, data: &bagscope_reader::Bytes) {
    match &o.convert {
        None => o.sink.publish(data),
        Some(c) => match c.apply(data) {
            Some(v) => o.sink.publish(&bagscope_reader::Bytes::from_vec(v)),
            None => return,
        },
    }
    o.sent += 1;
}

/// Advertises topic `ti` as its first connection was recorded: over ROS 1 with its type,
/// md5sum, definition and latching (ROS 2 topics converted); over ROS 2 with its recorded QoS
/// (ROS 1 topics converted).
fn advertise(transport: &Transport, bag: &Bag, ti: usize) -> Result<Out, String> {
    let s = bag.summary();
    let t = s.topics.get(ti).ok_or("no such topic")?;
    let c = t
        .connections
        .first()
        .and_then(|&c| s.connections.get(c))
        .ok_or("the topic has no connection")?;
    let node = match transport {
        Transport::Ros1(node) => node,
        Transport::Ros2(p) => {
            let (datatype, convert) = match c.encoding.as_str() {
                "cdr" => (c.datatype.clone(), None),
                "ros1" => {
                    let conv = ToRos2::new(c, &bag.options().msg_path)
                        .map_err(|e| format!("{} does not convert to ROS 2: {e}", c.topic))?;
                    (conv.datatype.clone(), Some(Convert::ToRos2(Arc::new(conv))))
                }
                other => {
                    return Err(format!(
                        "{} is {other}-encoded, which ROS 2 topics do not carry",
                        c.topic
                    ))
                }
            };
            let sink = p
                .advertise(&c.topic, &datatype, &Qos::for_playing(c))
                .map_err(|e| e.to_string())?;
            return Ok(Out {
                sink: Arc::new(sink),
                convert,
                sent: 0,
            });
        }
    };
    let (spec, convert) = match c.encoding.as_str() {
        "ros1" => (
            TopicSpec {
                topic: c.topic.clone(),
                datatype: c.datatype.clone(),
                md5sum: c.md5sum.clone(),
                definition: c.message_definition.clone(),
                latching: latching(c),
            },
            None,
        ),
        "cdr" => {
            let conv = ToRos1::new(c, &bag.options().msg_path)
                .map_err(|e| format!("{} does not convert to ROS 1: {e}", c.topic))?;
            (
                TopicSpec {
                    topic: c.topic.clone(),
                    datatype: conv.datatype.clone(),
                    md5sum: conv.md5.clone(),
                    definition: conv.definition.clone(),
                    latching: latching(c),
                },
                Some(Convert::ToRos1(Arc::new(conv))),
            )
        }
        other => {
            return Err(format!(
                "{} is {other}-encoded, which ROS 1 does not carry",
                c.topic
            ))
        }
    };
    let sink = node.advertise(spec).map_err(|e| e.to_string())?;
    Ok(Out {
        sink,
        convert,
        sent: 0,
    })
}

/// The Publish window.
pub fn show(ctx: &egui::Context, d: &mut Doc, cmds: &mut Vec<Cmd>) {
    let mut open = d.publish.open;
    egui::Window::new("Publish")
        .open(&mut open)
        .default_width(420.0)
        .show(ctx, |ui| {
            ui.label(
                "Publishes onto a live ROS 1 system or ROS 2 domain the messages the playhead \
                 passes while playing, and the message at the playhead when stepping or seeking \
                 while paused.",
            );
            let connected = d.publish.service.is_some();
            ui.add_enabled_ui(!connected, |ui| {
                ui.horizontal(|ui| {
                    ui.radio_value(&mut d.publish.ros2, false, "ROS 1");
                    ui.radio_value(&mut d.publish.ros2, true, "ROS 2");
                });
            });
            ui.horizontal(|ui| {
                if d.publish.ros2 {
                    ui.label("Domain:");
                    ui.add_enabled(
                        !connected,
                        egui::TextEdit::singleline(&mut d.publish.domain)
                            .hint_text("ROS_DOMAIN_ID")
                            .desired_width(120.0),
                    );
                } else {
                    ui.label("Master:");
                    ui.add_enabled(
                        !connected,
                        egui::TextEdit::singleline(&mut d.publish.master)
                            .hint_text("ROS_MASTER_URI")
                            .desired_width(220.0),
                    );
                }
                if connected && ui.button("Disconnect").clicked() {
                    cmds.push(Cmd::PublishDisconnect);
                }
            });
            match &d.publish.status {
                Some(st) => {
                    let subs: usize = st.topics.values().map(|(s, _)| *s).sum();
                    if st.target.is_empty() {
                        ui.label("Not connected.");
                    } else {
                        ui.label(format!(
                            "Publishing to {}: {} topic(s), {} subscriber(s)",
                            st.target,
                            st.topics.len(),
                            subs
                        ));
                    }
                    if let Some(e) = &st.error {
                        ui.colored_label(ui.visuals().error_fg_color, e);
                    }
                }
                None if d.publish.service.is_some() => {
                    ui.label("Connecting…");
                }
                None => {
                    ui.label("Not publishing: every toggle is off.");
                }
            }
            ui.separator();
            egui::ScrollArea::vertical()
                .max_height(360.0)
                .show(ui, |ui| {
                    let s = d.rec.bag.summary();
                    for (ti, t) in s.topics.iter().enumerate() {
                        let mut on = d.publish.on.contains(&ti);
                        ui.horizontal(|ui| {
                            if ui
                                .checkbox(&mut on, &t.name)
                                .on_hover_text(&t.datatype)
                                .changed()
                            {
                                cmds.push(Cmd::SetPublish(ti, on));
                            }
                            if let Some((subs, n)) =
                                d.publish.status.as_ref().and_then(|st| st.topics.get(&ti))
                            {
                                ui.weak(format!("{subs} subscriber(s), {n} sent"));
                            }
                        });
                    }
                });
            ui.separator();
            super::serve::ui(ui, &mut d.publish.serve, cmds);
        });
    if open != d.publish.open {
        cmds.push(Cmd::ShowPublish(open));
    }
}
