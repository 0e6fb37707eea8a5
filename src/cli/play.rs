//! `bagscope play`: recorded messages published onto a live ROS 1 graph or ROS 2 domain at
//! their recorded times, without a ROS install.

use std::collections::HashMap;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;

use crate::cli::Error;
use bagscope_live::play::{self, Convert, Event, PlayOptions, Route, Sink};
use bagscope_live::ros1::{Node, NodeOptions, TopicSpec};
use bagscope_live::ros2::qos::History;
use bagscope_live::ros2::{Participant, ParticipantOptions, Qos, QosOverrides};
use bagscope_ops::timefmt;
use bagscope_reader::encoding::to_ros1::ToRos1;
use bagscope_reader::encoding::to_ros2::ToRos2;
use bagscope_reader::Bag;

use super::args::{time_range, Range};

/// Publish a recording's messages onto a live ROS 1 system (--ros1, the default) or ROS 2
/// domain (--ros2) at their recorded times (scaled by --rate), byte for byte, with their types,
/// md5sums, definitions and latching (ROS 1) or recorded QoS (ROS 2); no ROS install needed.
/// Ctrl-C stops.
#[derive(Args, Debug)]
pub struct PlayArgs {
    /// Recordings (ROS 1 bags, MCAP files, rosbag2 directories); several play merged in time
    /// order.
    #[arg(required = true)]
    pub bags: Vec<PathBuf>,
    /// Only these topics (repeatable).
    #[arg(long = "topic", short = 't')]
    pub topics: Vec<String>,
    #[command(flatten)]
    pub range: Range,
    /// Speed: 2 plays twice as fast.
    #[arg(long, short = 'r', default_value_t = 1.0)]
    pub rate: f64,
    /// Start again at the end.
    #[arg(long = "loop", short = 'l')]
    pub looped: bool,
    /// Publish the recording's time on /clock, HZ times a second (100 without a value).
    #[arg(long, num_args = 0..=1, default_missing_value = "100", value_name = "HZ")]
    pub clock: Option<f64>,
    /// Seconds to wait after advertising, before the first message.
    #[arg(long, short = 'd', default_value_t = 0.0)]
    pub delay: f64,
    /// Hold the first message until every played topic has a subscriber (ROS 2: and half a
    /// second more, for the subscriber to match this publisher as well).
    #[arg(long)]
    pub wait_for_subscribers: bool,
    /// Publish topic FROM as TO (FROM:=TO, repeatable).
    #[arg(long = "remap", value_name = "FROM:=TO")]
    pub remap: Vec<String>,
    /// Convert ROS 2 (CDR) messages to ROS 1 as they are played.
    #[arg(long, conflicts_with = "ros2")]
    pub to_ros1: bool,
    /// Convert ROS 1 messages to ROS 2 (CDR) as they are played.
    #[arg(long, requires = "ros2")]
    pub to_ros2: bool,
    /// Play onto the ROS 1 master at URI (default: ROS_MASTER_URI, else
    /// http://localhost:11311/).
    #[arg(long, num_args = 0..=1, default_missing_value = "", value_name = "URI")]
    pub ros1: Option<String>,
    /// Play onto a ROS 2 (DDS) domain: ROS_DOMAIN_ID unless --domain; discovery on this
    /// machine only with ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST.
    #[arg(long, conflicts_with = "ros1")]
    pub ros2: bool,
    /// The ROS 2 domain (0 to 232).
    #[arg(long, requires = "ros2")]
    pub domain: Option<u16>,
    /// ROS 2 QoS per topic over what was recorded: a YAML map of topic to reliability,
    /// durability, history and depth (rosbag2's --qos-profile-overrides-path format).
    #[arg(long, value_name = "FILE", requires = "ros2")]
    pub qos_override: Option<PathBuf>,
    /// Start paused (space resumes in a terminal).
    #[arg(long)]
    pub paused: bool,
    /// No status line.
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// A message script (docs/scripts.md): its virtual topic is played as a recorded one (one
    /// recording). Repeatable.
    #[arg(long = "script", value_name = "FILE")]
    pub scripts: Vec<PathBuf>,
}

/// `FROM:=TO` pairs.
fn remaps(r: &[String]) -> crate::cli::Result<HashMap<String, String>> {
    r.iter()
        .map(|s| {
            s.split_once(":=")
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .filter(|(a, b)| !a.is_empty() && !b.is_empty())
                .ok_or_else(|| Error::Invalid(format!("--remap {s:?} is not FROM:=TO")))
        })
        .collect()
}

/// A connection, what it is published as, and its conversion if any.
type Spec = (usize, TopicSpec, Option<Convert>);

/// A ROS 2 topic as published: name, type (`pkg/msg/Type`) and QoS.
struct Ros2Spec {
    topic: String,
    datatype: String,
    qos: Qos,
}

/// What each chosen connection is published as, over ROS 2.
fn ros2_specs(
    bag: &Bag,
    conns: &[usize],
    remap: &HashMap<String, String>,
    to_ros2: bool,
    overrides: &QosOverrides,
) -> crate::cli::Result<Vec<(usize, Ros2Spec, Option<Convert>)>> {
    let s = bag.summary();
    let mut out = Vec::new();
    let mut by_topic: HashMap<String, String> = HashMap::new();
    for &ci in conns {
        let c = &s.connections[ci];
        let topic = remap
            .get(&c.topic)
            .cloned()
            .unwrap_or_else(|| c.topic.clone());
        let qos = Qos::for_playing(c);
        let qos = overrides.apply(&c.topic, overrides.apply(&topic, qos));
        let (datatype, conv) = if c.encoding == "cdr" {
            (c.datatype.clone(), None)
        } else if c.encoding == "ros1" && to_ros2 {
            match ToRos2::new(c, &bag.options().msg_path) {
                Ok(conv) => (conv.datatype.clone(), Some(Convert::ToRos2(Arc::new(conv)))),
                Err(e) => {
                    eprintln!(
                        "bagscope: warning: {} ({}) does not convert to ROS 2: left out ({e})",
                        c.topic, c.datatype
                    );
                    continue;
                }
            }
        } else if c.encoding == "ros1" {
            return Err(Error::Invalid(format!(
                "{} holds ROS 1 messages; --to-ros2 converts them for a ROS 2 system",
                c.topic
            )));
        } else {
            eprintln!(
                "bagscope: warning: {} is {}-encoded, which ROS 2 topics do not carry: left out",
                c.topic, c.encoding
            );
            continue;
        };
        if let Some(t) = by_topic.get(&topic) {
            if *t != datatype {
                return Err(Error::Invalid(format!(
                    "{topic} is recorded with two types ({t} and {datatype}); play one with --topic or --remap"
                )));
            }
        }
        by_topic.insert(topic.clone(), datatype.clone());
        out.push((
            ci,
            Ros2Spec {
                topic,
                datatype,
                qos,
            },
            conv,
        ));
    }
    Ok(out)
}

/// The ROS 2 `/clock` publication: the ROS 1 clock message (two 32-bit fields, the layout of
/// `rosgraph_msgs/msg/Clock` too) behind a CDR header.
struct Ros2Clock(bagscope_live::ros2::Publication);

impl Sink for Ros2Clock {
    fn publish(&self, data: &bagscope_reader::Bytes) {
        let mut v = vec![0, 1, 0, 0];
        v.extend_from_slice(data);
        Sink::publish(&self.0, &bagscope_reader::Bytes::from_vec(v));
    }
    fn subscribers(&self) -> usize {
        self.0.subscribers()
    }
    fn drain(&self, timeout: Duration) {
        self.0.drain(timeout);
    }
}

/// What each chosen connection is published as, over ROS 1.
fn ros1_specs(
    bag: &Bag,
    conns: &[usize],
    remap: &HashMap<String, String>,
    to_ros1: bool,
) -> crate::cli::Result<Vec<Spec>> {
    let s = bag.summary();
    let mut out = Vec::new();
    let mut by_topic: HashMap<String, String> = HashMap::new();
    for &ci in conns {
        let c = &s.connections[ci];
        let topic = remap
            .get(&c.topic)
            .cloned()
            .unwrap_or_else(|| c.topic.clone());
        let (spec, conv) = if c.encoding == "ros1" {
            (
                TopicSpec {
                    topic: topic.clone(),
                    datatype: c.datatype.clone(),
                    md5sum: c.md5sum.clone(),
                    definition: c.message_definition.clone(),
                    latching: play::latching(c),
                },
                None,
            )
        } else if c.encoding == "cdr" && to_ros1 {
            let conv = match ToRos1::new(c, &bag.options().msg_path) {
                Ok(conv) => conv,
                Err(e) => {
                    eprintln!(
                        "bagscope: warning: {} ({}) does not convert to ROS 1: left out ({e})",
                        c.topic, c.datatype
                    );
                    continue;
                }
            };
            (
                TopicSpec {
                    topic: topic.clone(),
                    datatype: conv.datatype.clone(),
                    md5sum: conv.md5.clone(),
                    definition: conv.definition.clone(),
                    latching: play::latching(c),
                },
                Some(Convert::ToRos1(Arc::new(conv))),
            )
        } else if c.encoding == "cdr" {
            return Err(Error::Invalid(format!(
                "{} holds ROS 2 (CDR) messages; --to-ros1 converts them for a ROS 1 system",
                c.topic
            )));
        } else {
            eprintln!(
                "bagscope: warning: {} is {}-encoded, which ROS 1 does not carry: left out",
                c.topic, c.encoding
            );
            continue;
        };
        if let Some(md5) = by_topic.get(&topic) {
            if *md5 != spec.md5sum {
                return Err(Error::Invalid(format!(
                    "{topic} is recorded with two types (md5sums {md5} and {}); play one with --topic or --remap",
                    spec.md5sum
                )));
            }
        }
        by_topic.insert(topic, spec.md5sum.clone());
        out.push((ci, spec, conv));
    }
    Ok(out)
}

/// `bagscope play`.
pub fn run(a: &PlayArgs, opts: &bagscope_reader::OpenOptions) -> crate::cli::Result<ExitCode> {
    if !(a.rate.is_finite() && a.rate > 0.0) {
        return Err(Error::Invalid(format!(
            "--rate must be a positive number, not {}",
            a.rate
        )));
    }
    let bag = super::scripts::open_many(&a.bags, &a.scripts, opts)?;
    for w in bag.warnings() {
        eprintln!("bagscope: warning: {w}");
    }
    let (start_ns, end_ns) = time_range(&bag, a.range.start.as_deref(), a.range.end.as_deref())?;
    let conns: Vec<usize> = if a.topics.is_empty() {
        (0..bag.summary().connections.len()).collect()
    } else {
        bag.connections_of_topics(&a.topics)?
    };
    let remap = remaps(&a.remap)?;
    let mut routes: Vec<Option<Route>> = vec![None; bag.summary().connections.len()];
    let mut sinks: HashMap<String, Arc<dyn Sink>> = HashMap::new();
    // The transport lives as long as the playback.
    let _node: Node;
    let _participant: Participant;
    let clock: Option<Arc<dyn Sink>>;
    let target: String;
    if a.ros2 {
        let overrides = match &a.qos_override {
            Some(p) => QosOverrides::load(p)?,
            None => QosOverrides::default(),
        };
        let specs = ros2_specs(&bag, &conns, &remap, a.to_ros2, &overrides)?;
        let participant = Participant::new(ParticipantOptions::from_env(a.domain)?)?;
        for (ci, spec, convert) in specs {
            let sink = match sinks.get(&spec.topic) {
                Some(p) => p.clone(),
                None => {
                    let p: Arc<dyn Sink> =
                        Arc::new(participant.advertise(&spec.topic, &spec.datatype, &spec.qos)?);
                    sinks.insert(spec.topic.clone(), p.clone());
                    p
                }
            };
            routes[ci] = Some(Route {
                topic: spec.topic,
                sink,
                convert,
            });
        }
        clock = match a.clock {
            Some(_) => Some(Arc::new(Ros2Clock(participant.advertise(
                "/clock",
                "rosgraph_msgs/msg/Clock",
                &Qos {
                    history: History::KeepLast(1),
                    ..Qos::default()
                },
            )?))),
            None => None,
        };
        target = format!("ROS 2 {}", participant.options().describe());
        _participant = participant;
    } else {
        let specs = ros1_specs(&bag, &conns, &remap, a.to_ros1)?;
        let node = Node::start(NodeOptions::from_env(
            "bagscope_play",
            a.ros1.as_deref().filter(|m| !m.is_empty()),
        ))?;
        for (ci, spec, convert) in specs {
            let topic = spec.topic.clone();
            let sink = match sinks.get(&topic) {
                Some(p) => p.clone(),
                None => {
                    let p: Arc<dyn Sink> = node.advertise(spec)?;
                    sinks.insert(topic.clone(), p.clone());
                    p
                }
            };
            routes[ci] = Some(Route {
                topic,
                sink,
                convert,
            });
        }
        clock = match a.clock {
            Some(_) => Some(node.advertise(TopicSpec {
                topic: "/clock".into(),
                datatype: "rosgraph_msgs/Clock".into(),
                md5sum: "a9c97c1d230cfc112e270351a944ee47".into(),
                definition: "time clock\n".into(),
                latching: false,
            })?),
            None => None,
        };
        target = format!(
            "the ROS 1 master at {} as {}",
            node.master_uri(),
            node.name()
        );
        _node = node;
    }
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, stop.clone())?;
    }
    let opts = PlayOptions {
        start_ns,
        end_ns,
        rate: a.rate,
        looped: a.looped,
        clock_hz: a.clock,
        delay: Duration::from_secs_f64(a.delay.max(0.0)),
        wait_for_subscribers: a.wait_for_subscribers,
        paused: a.paused,
    };
    let keys = super::keys::Keys::start();
    let status = !a.quiet && std::io::stderr().is_terminal();
    let t0 = bag.quick_summary().start_ns.unwrap_or(0);
    let span = bag
        .quick_summary()
        .end_ns
        .unwrap_or(t0)
        .saturating_sub(start_ns.unwrap_or(t0).max(t0));
    eprintln!("bagscope: playing {} topic(s) to {target}", sinks.len());
    let mut on_event = |e: &Event| match e {
        Event::Waiting(t) => eprintln!("bagscope: waiting for subscribers of {}", t.join(", ")),
        Event::Looped => {}
        Event::At {
            time_ns,
            rate,
            paused,
        } if status => {
            let mut err = std::io::stderr().lock();
            let _ = write!(
                err,
                "\r [{}]  Bag Time: {}  Duration: {:.3} / {:.3}  rate {rate:.2}   ",
                if *paused { "PAUSED " } else { "RUNNING" },
                timefmt::secs(*time_ns),
                time_ns.saturating_sub(t0) as f64 / 1e9,
                span as f64 / 1e9,
            );
            let _ = err.flush();
        }
        Event::At { .. } => {}
    };
    let report = play::play(
        &bag,
        &routes,
        clock,
        &opts,
        keys.as_ref().map(|k| k.receiver()),
        &stop,
        &mut on_event,
    )?;
    drop(keys);
    if status {
        eprintln!();
    }
    let l = &report.lateness;
    eprintln!(
        "bagscope: published {} message(s){}{}; lateness against the schedule p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        report.published,
        if report.loops > 0 {
            format!(" ({} loops)", report.loops)
        } else {
            String::new()
        },
        if report.unconverted > 0 {
            format!(", {} left out (did not convert)", report.unconverted)
        } else {
            String::new()
        },
        l.quantile_ns(0.5) as f64 / 1e6,
        l.quantile_ns(0.99) as f64 / 1e6,
        l.max_ns() as f64 / 1e6,
    );
    Ok(ExitCode::SUCCESS)
}
