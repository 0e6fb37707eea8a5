//! `bagscope play`: recorded messages published onto a live ROS 1 graph at their recorded
//! times, without a ROS install.

use std::collections::HashMap;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;

use bagscope::encoding::to_ros1::ToRos1;
use bagscope::live::play::{self, Event, PlayOptions, Route, Sink};
use bagscope::live::ros1::{Node, NodeOptions, Publication, TopicSpec};
use bagscope::{merge, timefmt, Bag, Error};

use super::args::{time_range, Range};

/// Publish a recording's messages onto a live ROS 1 system at their recorded times (scaled by
/// --rate), byte for byte, with their types, md5sums, definitions and latching; no ROS install
/// needed. Ctrl-C stops.
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
    /// Hold the first message until every played topic has a subscriber.
    #[arg(long)]
    pub wait_for_subscribers: bool,
    /// Publish topic FROM as TO (FROM:=TO, repeatable).
    #[arg(long = "remap", value_name = "FROM:=TO")]
    pub remap: Vec<String>,
    /// Convert ROS 2 (CDR) messages to ROS 1 as they are played.
    #[arg(long)]
    pub to_ros1: bool,
    /// Play onto the ROS 1 master at URI (default: ROS_MASTER_URI, else
    /// http://localhost:11311/).
    #[arg(long, num_args = 0..=1, default_missing_value = "", value_name = "URI")]
    pub ros1: Option<String>,
    /// Start paused (space resumes in a terminal).
    #[arg(long)]
    pub paused: bool,
    /// No status line.
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

/// `FROM:=TO` pairs.
fn remaps(r: &[String]) -> bagscope::Result<HashMap<String, String>> {
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
type Spec = (usize, TopicSpec, Option<Arc<ToRos1>>);

/// What each chosen connection is published as, over ROS 1.
fn ros1_specs(
    bag: &Bag,
    conns: &[usize],
    remap: &HashMap<String, String>,
    to_ros1: bool,
) -> bagscope::Result<Vec<Spec>> {
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
            let conv = match ToRos1::new(c) {
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
                Some(Arc::new(conv)),
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
pub fn run(a: &PlayArgs) -> bagscope::Result<ExitCode> {
    if !(a.rate.is_finite() && a.rate > 0.0) {
        return Err(Error::Invalid(format!(
            "--rate must be a positive number, not {}",
            a.rate
        )));
    }
    let bag = Bag::open_many(&merge::parts_of(&a.bags))?;
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
    let specs = ros1_specs(&bag, &conns, &remap, a.to_ros1)?;
    let node = Node::start(NodeOptions::from_env(
        "bagscope_play",
        a.ros1.as_deref().filter(|m| !m.is_empty()),
    ))?;
    let mut pubs: HashMap<String, Arc<Publication>> = HashMap::new();
    let mut routes: Vec<Option<Route>> = vec![None; bag.summary().connections.len()];
    for (ci, spec, convert) in specs {
        let topic = spec.topic.clone();
        let p = match pubs.get(&topic) {
            Some(p) => p.clone(),
            None => {
                let p = node.advertise(spec)?;
                pubs.insert(topic.clone(), p.clone());
                p
            }
        };
        routes[ci] = Some(Route {
            topic,
            sink: p,
            convert,
        });
    }
    let clock: Option<Arc<dyn Sink>> = match a.clock {
        Some(_) => Some(node.advertise(TopicSpec {
            topic: "/clock".into(),
            datatype: "rosgraph_msgs/Clock".into(),
            md5sum: "a9c97c1d230cfc112e270351a944ee47".into(),
            definition: "time clock\n".into(),
            latching: false,
        })?),
        None => None,
    };
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
    eprintln!(
        "bagscope: playing {} topic(s) to the ROS 1 master at {} as {}",
        pubs.len(),
        node.master_uri(),
        node.name()
    );
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
