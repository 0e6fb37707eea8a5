//! `bagscope serve`: recordings served to Foxglove clients over the Foxglove WebSocket protocol.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use clap::Args;

use crate::cli::Error;
use bagscope_live::foxglove::relay::{self, Hub};
use bagscope_live::foxglove::{ServeOptions, Server};
use bagscope_live::record::Select;
use bagscope_live::ros1::{Node, NodeOptions};
use bagscope_live::ros2::{Participant, ParticipantOptions};

/// Serve recordings to Foxglove and Lichtblick (and any Foxglove WebSocket client): channels
/// with their schemas and messages as stored, in time order at --speed, each client on its own
/// clock with play, pause, seek and speed (`foxglove.sdk.v1` playback control; older clients
/// speak `foxglove.websocket.v1`). With --ros1 or --ros2, relays a live ROS 1 graph or ROS 2
/// domain instead (every topic, or those of -t, as publishers appear). Listens on 127.0.0.1
/// unless --host says otherwise. Ctrl-C stops.
#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Recordings (ROS 1 bags, MCAP files, rosbag2 directories, s3:// or https:// ones);
    /// several are served merged on one timeline.
    #[arg(required_unless_present_any = ["ros1", "ros2"], conflicts_with_all = ["ros1", "ros2"])]
    pub bags: Vec<PathBuf>,
    /// Relay the live ROS 1 graph of the master at URI (default: ROS_MASTER_URI, else
    /// http://localhost:11311/) rather than a recording.
    #[arg(long, num_args = 0..=1, default_missing_value = "", value_name = "URI")]
    pub ros1: Option<String>,
    /// Relay a live ROS 2 (DDS) domain (ROS_DOMAIN_ID unless --domain; discovery on this
    /// machine's interfaces, or localhost with ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST).
    #[arg(long, conflicts_with = "ros1")]
    pub ros2: bool,
    /// The ROS 2 domain (0 to 232).
    #[arg(long, requires = "ros2")]
    pub domain: Option<u16>,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// Port (0: any free one; the address is printed).
    #[arg(long, short = 'p', default_value_t = 8765)]
    pub port: u16,
    /// Only these topics (repeatable; live: subscribed to once published).
    #[arg(long = "topic", short = 't')]
    pub topics: Vec<String>,
    /// Speed clients start with: 2 plays twice as fast.
    #[arg(long, short = 'r', default_value_t = 1.0)]
    pub speed: f64,
    /// Start again at the end.
    #[arg(long = "loop", short = 'l')]
    pub looped: bool,
    /// Clients start paused (their play button plays).
    #[arg(long)]
    pub paused: bool,
    /// Clients served at once.
    #[arg(long, default_value_t = 32)]
    pub max_clients: usize,
    /// MB queued for one client before its messages are dropped (a slow client).
    #[arg(long, default_value_t = 64)]
    pub queue_mb: usize,
    /// A message script (docs/scripts.md): its virtual topic is played as a recorded one (one
    /// recording). Repeatable.
    #[arg(long = "script", value_name = "FILE")]
    pub scripts: Vec<PathBuf>,
}

pub fn run(a: &ServeArgs, opts: &bagscope_reader::OpenOptions) -> Result<ExitCode, Error> {
    if a.ros1.is_some() || a.ros2 {
        return relay(a, opts);
    }
    let bag = super::scripts::open_many(&a.bags, &a.scripts, opts)?;
    for w in bag.warnings() {
        eprintln!("bagscope: warning: {w}");
    }
    let connections = if a.topics.is_empty() {
        None
    } else {
        Some(bag.connections_of_topics(&a.topics)?)
    };
    let name = a
        .bags
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(" + ");
    let server = Server::bind(
        Arc::new(bag),
        ServeOptions {
            host: a.host.clone(),
            port: a.port,
            speed: a.speed,
            looped: a.looped,
            paused: a.paused,
            max_clients: a.max_clients.max(1),
            queue_bytes: a.queue_mb.max(1) << 20,
            name,
            connections,
            ..ServeOptions::default()
        },
    )?;
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, stop.clone())?;
    }
    let addr = server.local_addr()?;
    println!(
        "serving {} channels on ws://{addr} (Foxglove: Open connection → Foxglove WebSocket)",
        server.channels().len()
    );
    let _ = std::io::stdout().flush();
    server.run(&stop)?;
    Ok(ExitCode::SUCCESS)
}

/// What `serve --ros1/--ros2` relays from.
enum Live {
    Ros1(Node),
    Ros2(Participant),
}

/// `serve --ros1/--ros2`: the graph's topics relayed as they are published.
fn relay(a: &ServeArgs, opts: &bagscope_reader::OpenOptions) -> Result<ExitCode, Error> {
    let live = match &a.ros1 {
        Some(master) => Live::Ros1(Node::start(NodeOptions::from_env(
            "bagscope_serve",
            Some(master.as_str()).filter(|m| !m.is_empty()),
        ))?),
        None => Live::Ros2(Participant::new(ParticipantOptions::from_env(a.domain)?)?),
    };
    let name = match &live {
        Live::Ros1(node) => format!("ROS 1 graph at {}", node.master_uri()),
        Live::Ros2(p) => format!("ROS 2 {}", p.options().describe()),
    };
    let select = if a.topics.is_empty() {
        Select::All
    } else {
        // The topics named, subscribed to as soon as they are published.
        Select::Matching(a.topics.clone(), Vec::new())
    };
    let hub = Arc::new(Hub::default());
    let server = Server::bind_live(
        Arc::clone(&hub),
        ServeOptions {
            host: a.host.clone(),
            port: a.port,
            max_clients: a.max_clients.max(1),
            queue_bytes: a.queue_mb.max(1) << 20,
            name: name.clone(),
            ..ServeOptions::default()
        },
    )?;
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, stop.clone())?;
    }
    println!(
        "serving the {name} on ws://{} (Foxglove: Open connection → Foxglove WebSocket)",
        server.local_addr()?
    );
    let _ = std::io::stdout().flush();
    std::thread::scope(|scope| {
        let relayed = scope.spawn(|| {
            let r = match &live {
                Live::Ros1(node) => relay::run_ros1(node, &hub, &select, &stop),
                Live::Ros2(p) => {
                    relay::run_ros2(p, &hub, &select, &opts.msg_path, &stop, &mut |note| {
                        eprintln!("bagscope: {note}")
                    })
                }
            };
            // The graph gone (the master stopped, a shutdown asked): the server stops too.
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            r
        });
        let served = server.run(&stop);
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let relayed = relayed.join().unwrap_or(Ok(()));
        served.and(relayed)
    })?;
    Ok(ExitCode::SUCCESS)
}
